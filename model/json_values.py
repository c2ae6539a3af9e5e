"""Frozen JSON values: the canonical, hashable form the model keeps in its states.

A JSON value is frozen into its *canonical text*: compact JSON with sorted object keys, in which
every number that is mathematically an integer is written as an integer.
Two values are JSON-equal exactly when their canonical texts are equal, which gives the model the
equality RFC 6902 section 4.6 asks of ``test``:

* ``1`` and ``1.0`` are equal (both canonicalise to ``1``);
* ``1`` and ``true`` differ (``1`` versus ``true``), although Python's ``1 == True`` holds;
* object member order does not matter; array order does.

Canonical texts are plain ``str`` values, so states built from them are hashable and cheap to
compare, which the exhaustive search relies on. ``thaw`` turns a canonical text back into Python
JSON values (``dict``, ``list``, ``str``, ``int``, ``float``, ``bool``, ``None``).
"""
from __future__ import annotations

import json
import math
from typing import Any

__all__ = [
    "JsonText",
    "freeze",
    "thaw",
    "refreeze",
    "json_equal",
    "is_json_object_text",
    "EMPTY_OBJECT",
    "NonJsonValueError",
    "json_type",
    "a_json_type",
]

JsonText = str
"""Type alias: the canonical JSON text of a value (see module docstring)."""

EMPTY_OBJECT: JsonText = "{}"



def json_type(value: Any) -> str:
    """The JSON type of a decoded value in RFC 8259's words: ``"null"``, ``"boolean"``,
    ``"number"``, ``"string"``, ``"array"`` or ``"object"`` (booleans are not numbers here,
    unlike Python's)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def a_json_type(value: Any) -> str:
    """:func:`json_type` as a message says it: ``"null"``, ``"a number"``, ``"an array"``..."""
    kind = json_type(value)
    return kind if kind == "null" else ("an " if kind[0] in "ao" else "a ") + kind


class NonJsonValueError(ValueError):
    """Raised by :func:`freeze` for a value that is not JSON (NaN, infinity, a set, bytes...)."""


def _normalise(value: Any) -> Any:
    """Return ``value`` with integral floats made ints and -0.0 made 0; raise on non-JSON values."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            raise NonJsonValueError(f"{value!r} is not a JSON number")
        if value.is_integer():
            return int(value)
        return value
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise NonJsonValueError(f"object key {key!r} is not a string")
            out[key] = _normalise(item)
        return out
    if isinstance(value, (list, tuple)):
        return [_normalise(item) for item in value]
    raise NonJsonValueError(f"{type(value).__name__} is not a JSON value")


def _needs_normalising(value: Any) -> bool:
    """Cheap pre-check: could :func:`_normalise` change ``value``? True when it holds a float, a
    tuple, a non-string key, or anything but plain ``dict``, ``list``, ``str``, ``int``, ``bool``
    and ``None`` (a subclass of those too: :func:`_normalise` then decides). Iterative, one
    ``type`` test per node (freezing is on the hot path of every parse and patch). Past
    :data:`_WALK_LIMIT` containers (a value that refers to itself never ends) it answers True,
    so that :func:`_normalise` decides, as it did before."""
    stack = [value]
    pop, extend = stack.pop, stack.extend
    budget = _WALK_LIMIT
    while stack:
        item = pop()
        kind = type(item)
        if kind is str or kind is int or kind is bool or item is None:
            continue
        budget -= 1
        if budget < 0:
            return True
        if kind is dict:
            for key in item:
                if type(key) is not str:
                    return True
            extend(item.values())
        elif kind is list:
            extend(item)
        else:
            return True
    return False


_WALK_LIMIT = 1_000_000
"""Containers :func:`_needs_normalising` walks before it leaves the value to :func:`_normalise`."""


_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                              allow_nan=False).encode
"""The canonical writer, built once (:func:`json.dumps` builds an encoder per call for these
options)."""


def freeze(value: Any) -> JsonText:
    """Freeze a Python JSON value into its canonical text.

    Args:
        value: ``dict`` (str keys) / ``list`` / ``tuple`` / ``str`` / ``int`` / ``float`` /
            ``bool`` / ``None``, nested freely.

    Returns:
        The canonical JSON text (sorted keys, no spaces, integral numbers as integers).

    Raises:
        NonJsonValueError: for NaN, infinities, non-string keys or non-JSON Python types.
    """
    if _needs_normalising(value):
        value = _normalise(value)
    return _CANONICAL(value)


def refreeze(value: Any) -> JsonText:
    """The canonical text of a value built only from parts of thawed canonical texts (what a
    JSON Patch applied to :func:`thaw`'s result leaves: RFC 6902 operations move, copy and
    remove values, never compute one): such a value holds no integral float, no ``-0.0``, no
    tuple and no non-string key, so the normalising walk of :func:`freeze` would change nothing
    and is skipped. Same result as :func:`freeze` on such values."""
    return _CANONICAL(value)


def thaw(text: JsonText) -> Any:
    """Return a fresh, mutable Python value for a canonical text (the inverse of :func:`freeze`)."""
    return json.loads(text)


def json_equal(a: Any, b: Any) -> bool:
    """JSON equality of two Python JSON values (RFC 6902 section 4.6): ``1 == 1.0``, ``1 != true``."""
    return freeze(a) == freeze(b)


def is_json_object_text(text: JsonText) -> bool:
    """True when a canonical text holds a JSON object."""
    return text.startswith("{")
