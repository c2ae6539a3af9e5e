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

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Optional, Sequence

import jsonpatch
import jsonpointer

from model.events import PatchOp
from model.json_values import JsonText, freeze, thaw

__all__ = ["PatchOutcome", "apply_patch", "apply_patch_value"]

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


def _check_indices(doc, pointer: str, writing: bool) -> None:
    """Walk ``pointer`` over ``doc`` and reject array tokens RFC 6901/6902 do not allow."""
    if pointer == "":
        return
    tokens = _tokens(pointer)
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


def _tokens(pointer: str) -> list[str]:
    """The unescaped reference tokens of a JSON Pointer (RFC 6901 section 4)."""
    return [t.replace("~1", "/").replace("~0", "~") for t in pointer.split("/")[1:]]


def _resolve_from(document, pointer: str):
    """The value at a ``from`` location, which RFC 6902 (4.4, 4.5) requires to exist."""
    try:
        return jsonpointer.JsonPointer(pointer).resolve(document)
    except (jsonpointer.JsonPointerException, KeyError, IndexError, TypeError) as exc:
        raise _Unresolvable(f"the 'from' location {pointer!r} does not exist ({exc})") from None


def _move(document, source: str, target: str):
    """RFC 6902 section 4.4: remove the value at ``source``, then add it at ``target``."""
    src, dst = _tokens(source), _tokens(target)
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
        obj = thaw(op.raw)
        if obj["op"] == "move":
            document = _move(document, obj["from"], obj["path"])
            continue
        if obj["op"] == "copy":
            _check_indices(document, obj["from"], False)
            _resolve_from(document, obj["from"])
        _check_indices(document, obj["path"], obj["op"] in ("add", "copy"))
        document = jsonpatch.JsonPatch([obj]).apply(document, in_place=True)
    return document


@lru_cache(maxsize=65536)
def _apply_cached(target: JsonText, ops: tuple[PatchOp, ...]) -> PatchOutcome:
    return _apply(target, ops)


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
    document = thaw(target)
    for index, op in enumerate(ops):
        try:
            document = apply_patch_value(document, [op])
        except _Unresolvable as exc:
            return PatchOutcome(False, None, index, f"op {index} ({op.op}): {exc}")
        except jsonpatch.JsonPatchTestFailed as exc:
            return PatchOutcome(False, None, index, f"op {index} (test) at "
                                f"{op.path!r}: {exc}")
        except (jsonpatch.JsonPatchException, jsonpointer.JsonPointerException,
                KeyError, IndexError, TypeError, ValueError) as exc:
            detail = str(exc) or type(exc).__name__
            return PatchOutcome(False, None, index, f"op {index} ({op.op}) at {op.path!r}: "
                                f"{detail}")
    if _depth(document) > MAX_RESULT_DEPTH:
        return PatchOutcome(False, None, len(ops) - 1,
                            f"the result would nest deeper than {MAX_RESULT_DEPTH} levels, the "
                            "most the wire boundary accepts")
    return PatchOutcome(True, freeze(document))


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
