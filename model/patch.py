"""Atomic JSON Patch application (RFC 6902) over frozen JSON values.

The operations themselves are applied by the ``jsonpatch`` library (>= 1.48, whose ``test``
compares by JSON equality: ``1`` and ``true`` differ, ``1`` and ``1.0`` agree). This module adds
what the draft asks of a consumer around it:

* atomicity: the target is thawed into a fresh copy and only a fully applied result is frozen
  back, so a failing operation leaves nothing partial (SNP-ATOMIC, SNP-NO-PARTIAL);
* a failure is a value, with a diagnosis naming the operation index, op, path and reason, fit for
  the warning the consumer must surface (SNP-SURFACE-FAILURE, SNP-TEST-FAIL);
* RFC 6901 array-index syntax is enforced where the library is lenient (a leading zero, ``-`` on
  a read): such a pointer is well-formed but does not resolve, so the patch does not apply;
* ``move`` is carried out as RFC 6902 section 4.4 defines it, a ``remove`` of ``from`` followed by
  an ``add`` at ``path``, so that ``path`` is checked against the document *after* the removal
  (removing an array element shifts its siblings, which can change whether a token of ``path``
  meets an array or an object); checking it against the document before the removal both
  rejected valid moves and let invalid ones through to the library;
* a ``from`` location that does not exist is reported as such, rather than as the library's bare
  ``KeyError``.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Optional, Sequence

import jsonpatch
import jsonpointer

from model.events import PatchOp
from model.json_values import JsonText, freeze, json_type, refreeze, thaw

__all__ = ["PatchOutcome", "apply_patch", "apply_patch_value", "clear_memos", "pointer_tokens"]

_INDEX = re.compile(r"^(0|[1-9][0-9]*)$")


@dataclass(frozen=True, slots=True)
class PatchOutcome:
    """Result of applying a patch.

    Attributes:
        ok: True when every operation applied.
        result: canonical text of the patched document when ``ok``, else None.
        failed_index: index of the operation that failed (None when ``ok``).
        reason: what failed and why, in words (empty when ``ok``).
    """

    ok: bool
    result: Optional[JsonText]
    failed_index: Optional[int] = None
    reason: str = ""


class _Unresolvable(Exception):
    pass


def _shown(value) -> str:
    """A thawed value as compact JSON with its type, cut at 80 characters: ``1 (number)``."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return f"{text if len(text) <= 80 else text[:79] + '…'} ({json_type(value)})"


def _test_failure(document, op: PatchOp) -> str:
    """Why a ``test`` failed, in JSON terms (SNP-TEST-FAIL): the value at its path and the
    tested value, each as JSON with its type, never the library's Python types."""
    value = _op_members(op.raw)[0].get("value")
    try:
        held = jsonpointer.resolve_pointer(document, op.path)
    except (jsonpointer.JsonPointerException, KeyError, IndexError, TypeError):
        return f"nothing is there to compare with the tested value {_shown(value)}"
    return f"the value there, {_shown(held)}, is not equal to the tested value {_shown(value)}"


_PY_TYPES = {"dict": "an object", "list": "an array", "str": "a string", "int": "a number",
             "float": "a number", "bool": "a boolean", "NoneType": "null"}
_LIBRARY_WORDS = (
    (re.compile(r"Document '<class '(\w+)'>' does not support indexing, must be "
                r"mapping/sequence or support __getitem__"),
     lambda m: f"the location holds {_PY_TYPES.get(m.group(1), m.group(1))}, which has no "
               "members or elements"),
    (re.compile(r"Cannot apply token '(.*)' to non-container type <class '(\w+)'>"),
     lambda m: f"token '{m.group(1)}' meets {_PY_TYPES.get(m.group(2), m.group(2))}, which "
               "has no members or elements"),
    (re.compile(r"member '(.*)' not found in .*", re.S),
     lambda m: f"member '{m.group(1)}' not found"),
    (re.compile(r"can't insert outside of list"),
     lambda m: "the index is past the end of the array"),
)
"""The ``jsonpatch``/``jsonpointer`` messages that show Python types or a Python repr of the
document, and their wording in JSON terms."""


def _wire_words(message: str) -> str:
    """A library message with Python types and reprs put in JSON terms (:data:`_LIBRARY_WORDS`);
    other messages unchanged."""
    for pattern, words in _LIBRARY_WORDS:
        message = pattern.sub(words, message)
    return message


def _check_indices(doc, pointer: str, writing: bool) -> None:
    """Walk ``pointer`` over ``doc`` and reject array tokens RFC 6901/6902 do not allow."""
    if pointer == "":
        return
    tokens = pointer_tokens(pointer)
    node = doc
    for depth, token in enumerate(tokens):
        last = depth == len(tokens) - 1
        if isinstance(node, list):
            if token == "-":
                if not (last and writing):
                    raise _Unresolvable(f"'-' does not name an existing element in {pointer!r}")
                return
            if not _INDEX.match(token):
                raise _Unresolvable(f"{token!r} is not an array index in {pointer!r}")
            i = int(token)
            if last:
                return
            if i >= len(node):
                return  # the library reports the missing element
            node = node[i]
        elif isinstance(node, dict):
            if token not in node:
                return
            node = node[token]
        else:
            return


def pointer_tokens(pointer: str) -> list[str]:
    """The reference tokens of a JSON Pointer, unescaped (RFC 6901 section 4: ``~1`` to ``/``
    before ``~0`` to ``~``, as :func:`jsonpointer.unescape` does); the whole-document pointer
    ``""`` has none. No error: the pointer's syntax is checked where it is parsed."""
    return [jsonpointer.unescape(t) for t in pointer.split("/")[1:]]


def _resolve_from(document, pointer: str):
    """The value at a ``from`` location, which RFC 6902 (4.4, 4.5) requires to exist."""
    try:
        return jsonpointer.JsonPointer(pointer).resolve(document)
    except (jsonpointer.JsonPointerException, KeyError, IndexError, TypeError) as exc:
        raise _Unresolvable(f"the 'from' location {pointer!r} does not exist "
                            f"({_wire_words(str(exc))})") from None


def _move(document, source: str, target: str):
    """RFC 6902 section 4.4: remove the value at ``source``, then add it at ``target``."""
    src, dst = pointer_tokens(source), pointer_tokens(target)
    if len(dst) > len(src) and dst[:len(src)] == src:
        raise _Unresolvable(f"cannot move {source!r} into its own child {target!r}")
    _check_indices(document, source, False)
    value = _resolve_from(document, source)
    if src == dst:
        return document  # the value exists; moving it onto itself changes nothing
    document = jsonpatch.JsonPatch([{"op": "remove", "path": source}]).apply(document,
                                                                           in_place=True)
    # ``path`` is evaluated against the document with the value removed (RFC 6902 4.4).
    _check_indices(document, target, True)
    return jsonpatch.JsonPatch([{"op": "add", "path": target, "value": value}]).apply(
        document, in_place=True)


class _NotCanonical(ValueError):
    """Internal: a text holds a number :func:`model.json_values.freeze` would rewrite."""


def _canonical_float(token: str) -> float:
    value = float(token)
    if value.is_integer() or value != value or value in (_INF, -_INF):
        raise _NotCanonical(token)  # integral (-0.0, 1.0, 1e300), NaN or infinite
    return value


def _not_canonical(token: str):
    raise _NotCanonical(token)


_INF = float("inf")
_CANONICAL_DECODER = json.JSONDecoder(parse_float=_canonical_float,
                                      parse_constant=_not_canonical)
"""Decodes a canonical text and refuses (``_NotCanonical``) any number a canonical text cannot
hold; stateless, so any thread may use it."""


def _thaw_canonical(text: JsonText) -> tuple[object, bool]:
    """``(thaw(text), canonical)``: ``canonical`` is False when the text holds a number that
    :func:`model.json_values.freeze` would normalise (the only way a text that JSON decodes can
    differ from its canonical form once re-encoded with sorted keys)."""
    try:
        return _CANONICAL_DECODER.decode(text), True
    except _NotCanonical:
        return thaw(text), False


@lru_cache(maxsize=8192)
def _op_members(raw: JsonText) -> tuple[dict, bool]:
    """The decoded operation object of a :class:`~model.events.PatchOp` (shared: read, never
    changed) and whether its text is canonical (see :func:`_thaw_canonical`)."""
    return _thaw_canonical(raw)


@lru_cache(maxsize=8192)
def _library_op(raw: JsonText):
    """The ``jsonpatch`` operation object for one operation, built once: what
    ``jsonpatch.JsonPatch([op]).apply(document, in_place=True)`` builds and applies on each call
    (the same validation first, so a malformed operation raises what it raised there; nothing is
    cached then). Applying it neither changes it nor lets the document share its values (``add``,
    ``replace`` and ``copy`` insert deep copies)."""
    obj = thaw(raw)
    jsonpatch.JsonPatch([obj])
    return jsonpatch.JsonPatch.operations[obj["op"]](obj)


def apply_patch_value(document, ops: Sequence[PatchOp]):
    """Apply recognised operations to a mutable Python value in place and return the result.

    On an exception ``document`` may be left partly changed; :func:`apply_patch` works on a
    fresh copy and discards it, which is what makes it atomic.

    Raises:
        _Unresolvable, jsonpatch.JsonPatchException, jsonpointer.JsonPointerException, and
        TypeError/KeyError/IndexError from the library on a patch that does not apply; use
        :func:`apply_patch` for a value-level outcome.
    """
    for op in ops:
        obj = _op_members(op.raw)[0]
        if obj["op"] == "move":
            document = _move(document, obj["from"], obj["path"])
            continue
        if obj["op"] == "copy":
            _check_indices(document, obj["from"], False)
            _resolve_from(document, obj["from"])
        _check_indices(document, obj["path"], obj["op"] in ("add", "copy"))
        document = _library_op(op.raw).apply(document)
    return document


@lru_cache(maxsize=65536)
def _apply_cached(target: JsonText, ops: tuple[PatchOp, ...]) -> PatchOutcome:
    return _apply(target, ops)


def clear_memos() -> None:
    """Forget every memoised outcome and operation (a fresh process's state; the benchmarks
    call it before each timed run)."""
    _apply_cached.cache_clear()
    _op_members.cache_clear()
    _library_op.cache_clear()


def apply_patch(target: JsonText, ops: Sequence[PatchOp]) -> PatchOutcome:
    """Apply ``ops`` (all recognised RFC 6902 operations) to the document ``target``, atomically.

    Args:
        target: canonical text of the document (activity ``content`` or the agent state).
        ops: validated operations (see :mod:`model.wire`); unrecognised ones must have been
            removed by the caller according to the reading (SNP-UNKNOWN-OP, Q20).

    Returns:
        A :class:`PatchOutcome`; never raises for a patch that does not apply (SNP-KEEP-PRIOR).
        Outcomes are immutable and memoised on ``(target, ops)``: the search engines apply the
        same small patches to the same small documents many times.
    """
    return _apply_cached(target, tuple(ops))


def _apply(target: JsonText, ops: Sequence[PatchOp]) -> PatchOutcome:
    document, canonical = _thaw_canonical(target)
    for index, op in enumerate(ops):
        try:
            document = apply_patch_value(document, [op])
        except _Unresolvable as exc:
            return PatchOutcome(False, None, index, f"op {index} ({op.op}): {exc}")
        except jsonpatch.JsonPatchTestFailed:
            return PatchOutcome(False, None, index, f"op {index} (test) at "
                                f"{op.path!r}: {_test_failure(document, op)}")
        except (jsonpatch.JsonPatchException, jsonpointer.JsonPointerException,
                KeyError, IndexError, TypeError, ValueError) as exc:
            detail = _wire_words(str(exc)) or type(exc).__name__
            return PatchOutcome(False, None, index, f"op {index} ({op.op}) at {op.path!r}: "
                                f"{detail}")
        canonical = canonical and _op_members(op.raw)[1]
    # A document built from canonical texts alone is written back without the normalising walk;
    # its nesting is at most its count of opening brackets, so the exact depth is computed only
    # when that count could exceed the limit.
    text = refreeze(document) if canonical else freeze(document)
    if text.count("{") + text.count("[") > MAX_RESULT_DEPTH and \
            _depth(document) > MAX_RESULT_DEPTH:
        return PatchOutcome(False, None, len(ops) - 1,
                            f"the result would nest deeper than {MAX_RESULT_DEPTH} levels, the "
                            "most the wire boundary accepts")
    return PatchOutcome(True, text)


MAX_RESULT_DEPTH = 128
"""The deepest document a patch may leave (the nesting limit of :mod:`model.wire`): a patch whose
result would nest deeper does not apply (SNP-KEEP-PRIOR), so that no sequence of patches can
build a value the model could not hold or write back."""


def _depth(value) -> int:
    """How deep a JSON value nests (a scalar is 0), without recursion."""
    deepest = 0
    stack = [(value, 0)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict):
            stack.extend((v, level + 1) for v in item.values())
        elif isinstance(item, list):
            stack.extend((v, level + 1) for v in item)
        else:
            deepest = max(deepest, level)
            continue
        deepest = max(deepest, level + 1)
    return deepest
