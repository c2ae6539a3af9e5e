"""Fast construction for the model's frozen, slotted dataclasses.

A frozen dataclass's generated ``__init__`` stores each field through ``object.__setattr__``, a
global lookup and a call per field; the exhaustive search builds millions of messages, states and
step results, and that became a visible share of a step. :func:`fast_init` gives a class an
``__init__`` with the same signature that stores through the slots' own descriptors instead,
about twice as fast, and a ``but(**changes)`` copy method (``dataclasses.replace`` without its
per-call introspection). Everything else (frozenness, equality, hashing, ``dataclasses.replace``)
is the dataclass's own.
"""
from __future__ import annotations

from dataclasses import MISSING, fields

__all__ = ["fast_init"]


def fast_init(cls: type) -> type:
    """Class decorator, applied above ``@dataclass(frozen=True, slots=True, init=False)``: give
    ``cls`` a positional-or-keyword ``__init__`` over its ``init`` fields, in declaration order,
    with their defaults (fields declared ``init=False`` are set to their defaults), a method
    ``but(*, field=...)`` returning a copy with the named ``init`` fields changed (an unknown
    name raises TypeError, as any unexpected keyword does), and a ``__reduce__`` that pickles
    and copies by the ``init`` fields alone (so a cached hash is never carried to another
    process, whose string hashes differ). A class with a field ``_hash`` (``init=False``,
    ``compare=False``, default 0) also gets a ``__hash__`` that computes the hash of its
    compared fields once and keeps it there, and an ``__eq__`` over the compared fields that
    first tries identity and the cached hashes (replacing the dataclass's own).

    Returns ``cls``. Raises TypeError when a field has a ``default_factory`` (every default must
    be one immutable value) or the class has no slots."""
    if "__slots__" not in cls.__dict__:
        raise TypeError(f"{cls.__name__}: fast_init needs a slotted dataclass")
    namespace: dict = {"_cls": cls, "_same": _SAME}
    params, body, names = [], [], []
    for f in fields(cls):
        if f.default_factory is not MISSING:
            raise TypeError(f"{cls.__name__}.{f.name}: fast_init takes plain defaults only")
        namespace[f"_set_{f.name}"] = cls.__dict__[f.name].__set__
        if f.default is not MISSING:
            namespace[f"_default_{f.name}"] = f.default
        if f.init:
            names.append(f.name)
            params.append(f.name if f.default is MISSING else f"{f.name}=_default_{f.name}")
            body.append(f"    _set_{f.name}(self, {f.name})")
        else:
            body.append(f"    _set_{f.name}(self, _default_{f.name})")
    source = (f"def __init__(self, {', '.join(params)}):\n" + "\n".join(body) + "\n\n"
              f"def but(self, *, {', '.join(f'{n}=_same' for n in names)}):\n"
              f"    return _cls(" +
              ", ".join(f"self.{n} if {n} is _same else {n}" for n in names) + ")\n\n"
              f"def __reduce__(self):\n"
              f"    return _cls, ({''.join(f'self.{n}, ' for n in names)})\n")
    methods = [("__init__", f"Build a {cls.__name__} (fields in declaration order)."),
               ("but", f"A copy of this {cls.__name__} with the named fields changed."),
               ("__reduce__", "Pickle and copy by the init fields alone (a cached hash is "
                              "computed again, under the new process's hash seed).")]
    if "_hash" in cls.__dataclass_fields__:
        compared = [f.name for f in fields(cls) if f.compare]
        source += (f"\ndef __hash__(self):\n"
                   f"    h = self._hash\n"
                   f"    if not h:\n"
                   f"        h = hash(({''.join(f'self.{n}, ' for n in compared)})) or 1\n"
                   f"        _set__hash(self, h)\n"
                   f"    return h\n"
                   f"\ndef __eq__(self, other):\n"
                   f"    if self is other:\n"
                   f"        return True\n"
                   f"    if other.__class__ is not _cls:\n"
                   f"        return NotImplemented\n"
                   f"    mine, theirs = self._hash, other._hash\n"
                   f"    if mine and theirs and mine != theirs:\n"
                   f"        return False\n"
                   f"    return ({''.join(f'self.{n}, ' for n in compared)}) == "
                   f"({''.join(f'other.{n}, ' for n in compared)})\n")
        methods.append(("__hash__", "The hash of the compared fields, computed once (the "
                                    "searches hash the same values many times)."))
        methods.append(("__eq__", "Equal when the compared fields are; unequal cached hashes "
                                  "settle it at once (a hash not yet computed is not computed "
                                  "here: a dict lookup has compared hashes already)."))
    exec(source, namespace)  # noqa: S102 - generated from the class's own field list
    for name, doc in methods:
        method = namespace[name]
        method.__qualname__ = f"{cls.__qualname__}.{name}"
        method.__doc__ = doc
        setattr(cls, name, method)
    return cls


_SAME = object()
"""The default of ``but``'s parameters: keep the field (None is a value a field can take)."""
