"""Frozen JSON values: canonical text, JSON equality (RFC 6902 section 4.6) and round trips."""
from __future__ import annotations

import json
import math
import sys

import pytest

from model.json_values import (
    EMPTY_OBJECT, NonJsonValueError, freeze, is_json_object_text, json_equal, thaw,
)

SAMPLES = [
    None, True, False, 0, -7, 3.5, "", "héllo \u2603 \"quoted\"", [], {},
    {"a": [1, {"b": None, "c": [True, False]}], "z": "x", "": 0},
    [[], [[]], {"k": {"k": {"k": [1.25, -2.5e-8]}}}],
]


@pytest.mark.parametrize("value", SAMPLES, ids=repr)
def test_round_trip(value):
    text = freeze(value)
    assert isinstance(text, str)
    back = thaw(text)
    assert back == value
    assert type(back) is type(value)
    assert freeze(back) == text  # canonical texts are fixed points


def test_thaw_gives_a_fresh_mutable_copy():
    text = freeze({"a": [1, 2]})
    first = thaw(text)
    first["a"].append(3)
    first["b"] = 1
    assert thaw(text) == {"a": [1, 2]}
    assert text == '{"a":[1,2]}'


def test_canonical_text_is_compact_sorted_and_unescaped():
    assert freeze({"b": 1, "a": [1, 2], "é": "☃"}) == '{"a":[1,2],"b":1,"é":"☃"}'


def test_key_order_does_not_matter():
    one = {"x": 1, "y": {"p": [1, 2], "q": None}}
    two = {"y": {"q": None, "p": [1, 2]}, "x": 1}
    assert list(one) != list(two)
    assert freeze(one) == freeze(two)
    assert json_equal(one, two)


def test_array_order_matters():
    assert freeze([1, 2]) != freeze([2, 1])
    assert not json_equal([1, 2], [2, 1])


def test_one_and_one_point_zero_are_equal():
    assert freeze(1.0) == freeze(1) == "1"
    assert json_equal(1, 1.0)
    assert json_equal({"n": [2.0, -3.0]}, {"n": [2, -3]})
    assert type(thaw(freeze(1.0))) is int


def test_one_and_true_differ():
    assert 1 == True  # noqa: E712 - the Python equality the model must not inherit
    assert freeze(1) != freeze(True)
    assert not json_equal(1, True)
    assert not json_equal(1.0, True)
    assert not json_equal([1], [True])
    assert not json_equal({"a": 1}, {"a": True})


def test_false_and_zero_differ():
    assert freeze(False) == "false" and freeze(0) == "0"
    assert not json_equal(False, 0)
    assert not json_equal(False, 0.0)
    assert not json_equal({"a": [False]}, {"a": [0]})
    assert not json_equal(None, False)
    assert not json_equal(None, 0)
    assert not json_equal("1", 1)


def test_nested_equality():
    a = {"outer": [{"n": 1.0, "b": True, "s": "x"}, [0, {"deep": [2.0, None]}]]}
    b = {"outer": [{"s": "x", "b": True, "n": 1}, [0.0, {"deep": [2, None]}]]}
    assert json_equal(a, b)
    c = {"outer": [{"s": "x", "b": 1, "n": 1}, [0, {"deep": [2, None]}]]}
    assert not json_equal(a, c)  # True against 1, one level down
    d = {"outer": [{"s": "x", "b": True, "n": 1}, [0, {"deep": [2, None, None]}]]}
    assert not json_equal(a, d)


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), float("-inf"),
                                 [1, float("nan")], {"a": {"b": float("nan")}}])
def test_nan_and_infinities_rejected(bad):
    with pytest.raises(NonJsonValueError):
        freeze(bad)


@pytest.mark.parametrize("bad", [{1: "a"}, {"a": {None: 1}}, {1, 2}, b"x", object(),
                                 [1, complex(1, 2)]])
def test_non_json_values_rejected(bad):
    with pytest.raises(NonJsonValueError):
        freeze(bad)


def test_non_json_value_error_is_a_value_error():
    assert issubclass(NonJsonValueError, ValueError)


def test_negative_zero_canonicalises_to_zero():
    assert freeze(-0.0) == "0"
    assert freeze(-0.0) == freeze(0) == freeze(0.0)
    assert freeze({"z": [-0.0]}) == '{"z":[0]}'
    assert math.copysign(1, thaw(freeze(-0.0))) == 1


@pytest.mark.parametrize("big", [1e300, -1e300, sys.float_info.max, 1.5e17, 2.0 ** 60,
                                 1e-300, 5e-324])
def test_large_and_tiny_floats_survive(big):
    text = freeze(big)
    assert thaw(text) == big
    assert freeze(thaw(text)) == text
    assert json.loads(text) == big


def test_large_integers_survive_exactly():
    n = 2 ** 53 + 1  # not representable as a float
    assert thaw(freeze(n)) == n
    assert freeze(n) == "9007199254740993"
    big = 10 ** 30
    assert thaw(freeze(big)) == big


def test_integral_floats_below_two_to_the_53_become_ints():
    assert freeze(2.0 ** 53 - 1) == str(2 ** 53 - 1)
    assert freeze(-(2.0 ** 53 - 1)) == str(-(2 ** 53 - 1))


def test_tuples_freeze_like_lists():
    assert freeze((1, (2.0, "x"))) == freeze([1, [2, "x"]]) == '[1,[2,"x"]]'


def test_is_json_object_text():
    assert is_json_object_text(freeze({"a": 1}))
    assert is_json_object_text(EMPTY_OBJECT) and thaw(EMPTY_OBJECT) == {}
    assert not is_json_object_text(freeze([{"a": 1}]))
    assert not is_json_object_text(freeze("{not an object}"))
    assert not is_json_object_text(freeze(None))


def test_frozen_texts_are_hashable_and_compare_by_value():
    states = {freeze({"a": 1, "b": 2.0}), freeze({"b": 2, "a": 1.0})}
    assert len(states) == 1
