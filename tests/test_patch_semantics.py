"""Consumer-visible semantics of the patch layer (model.patch): JSON equality in ``test``,
atomicity, failure reporting, and RFC 6902 details the library leaves to the model."""
from __future__ import annotations

import pytest

from model.events import ActivityDelta, PatchOp
from model.json_values import freeze, thaw
from model.patch import PatchOutcome, apply_patch, apply_patch_value
from model.wire import parse_event


def ops(*raw: dict) -> tuple[PatchOp, ...]:
    """Operations as the consumer gets them: validated by the wire layer."""
    event = parse_event({"type": "ACTIVITY_DELTA", "messageId": "m", "activityType": "t",
                         "patch": list(raw)})
    assert isinstance(event, ActivityDelta), event
    return event.patch


def test_op(path, value) -> dict:
    """A JSON Patch ``test`` operation."""
    return {"op": "test", "path": path, "value": value}


test_op.__test__ = False  # a helper, not a pytest test


A1 = freeze({"a": 1})


def test_test_op_true_against_one_fails():
    outcome = apply_patch(A1, ops(test_op("/a", True)))
    assert outcome == PatchOutcome(False, None, 0, outcome.reason)
    assert "test" in outcome.reason
    assert "/a" in outcome.reason


def test_test_op_one_point_zero_against_one_succeeds():
    outcome = apply_patch(A1, ops(test_op("/a", 1.0)))
    assert outcome.ok
    assert outcome.result == A1
    assert outcome.failed_index is None and outcome.reason == ""


@pytest.mark.parametrize("doc, value", [
    ({"a": 0}, False), ({"a": False}, 0), ({"a": None}, False), ({"a": "1"}, 1),
    ({"a": [1]}, [True]), ({"a": {"x": 0}}, {"x": False}), ({"a": [1, 2]}, [2, 1]),
])
def test_test_op_distinguishes_json_values(doc, value):
    assert not apply_patch(freeze(doc), ops(test_op("/a", value))).ok


@pytest.mark.parametrize("doc, value", [
    ({"a": {"x": 1, "y": [2.0]}}, {"y": [2], "x": 1.0}), ({"a": -0.0}, 0), ({"a": None}, None),
])
def test_test_op_uses_json_equality(doc, value):
    assert apply_patch(freeze(doc), ops(test_op("/a", value))).ok


def test_second_op_failing_leaves_nothing():
    patch = ops({"op": "add", "path": "/b", "value": 2},
                {"op": "remove", "path": "/missing"},
                {"op": "add", "path": "/c", "value": 3})
    assert apply_patch(A1, patch[:1]).result == freeze({"a": 1, "b": 2})  # op 0 alone applies
    outcome = apply_patch(A1, patch)
    assert not outcome.ok
    assert outcome.result is None
    assert outcome.failed_index == 1
    assert outcome.reason.startswith("op 1 (remove)")


def test_failing_test_op_second_leaves_nothing():
    outcome = apply_patch(A1, ops({"op": "replace", "path": "/a", "value": 5}, test_op("/a", 1)))
    assert (outcome.ok, outcome.result, outcome.failed_index) == (False, None, 1)
    assert "test" in outcome.reason


def test_empty_patch_is_a_no_op():
    doc = freeze({"b": [1, {"c": None}], "a": 1.5})
    outcome = apply_patch(doc, ())
    assert outcome.ok
    assert outcome.result == doc
    assert outcome.failed_index is None


def test_empty_patch_from_the_wire_is_a_no_op():
    assert apply_patch(A1, ops()) == PatchOutcome(True, A1)


def test_root_replace_with_empty_array():
    outcome = apply_patch(A1, ops({"op": "replace", "path": "", "value": []}))
    assert outcome.ok
    assert outcome.result == "[]"


def test_result_is_canonical():
    outcome = apply_patch(A1, ops({"op": "add", "path": "/b", "value": {"y": 2.0, "x": -0.0}}))
    assert outcome.result == '{"a":1,"b":{"x":0,"y":2}}'


def test_undescribed_members_of_ops_are_ignored():
    """Patch operations are open objects (SNP-OPEN-OPS); RFC 6902 section 4 ignores extra members."""
    outcome = apply_patch(A1, ops({"op": "add", "path": "/b", "value": 1, "from": "/zzz",
                                   "x-note": {"any": True}}))
    assert outcome.result == freeze({"a": 1, "b": 1})


# --- RFC 6901 array indices -------------------------------------------------------------------

@pytest.mark.parametrize("token", ["01", "00", "-1", "+1", "1e0", "1.0", " 1", "\u0661"])
@pytest.mark.parametrize("op", [
    lambda p: {"op": "add", "path": p, "value": 0},
    lambda p: {"op": "remove", "path": p},
    lambda p: {"op": "replace", "path": p, "value": 0},
    lambda p: test_op(p, 2),
    lambda p: {"op": "copy", "from": p, "path": "/z"},
    lambda p: {"op": "move", "from": p, "path": "/z"},
], ids=["add", "remove", "replace", "test", "copy-from", "move-from"])
def test_non_canonical_array_indices_do_not_resolve(op, token):
    outcome = apply_patch(freeze({"a": [1, 2]}), ops(op(f"/a/{token}")))
    assert not outcome.ok and outcome.result is None


def test_numeric_looking_object_keys_are_plain_keys():
    doc = freeze({"01": "x", "-": "y", "1e0": "z"})
    outcome = apply_patch(doc, ops({"op": "remove", "path": "/01"}, test_op("/-", "y"),
                                   {"op": "replace", "path": "/1e0", "value": 0}))
    assert outcome.result == freeze({"-": "y", "1e0": 0})


@pytest.mark.parametrize("raw", [
    {"op": "add", "path": "/a/-/x", "value": 0},
    {"op": "remove", "path": "/a/-"},
    {"op": "replace", "path": "/a/-", "value": 0},
    {"op": "test", "path": "/a/-", "value": 2},
    {"op": "copy", "from": "/a/-", "path": "/z"},
    {"op": "move", "from": "/a/-", "path": "/z"},
])
def test_dash_names_no_existing_element(raw):
    assert not apply_patch(freeze({"a": [[1], 2]}), ops(raw)).ok


def test_dash_appends_when_adding():
    outcome = apply_patch(freeze({"a": [1]}), ops({"op": "add", "path": "/a/-", "value": 2},
                                                  {"op": "copy", "from": "/a/0", "path": "/a/-"}))
    assert outcome.result == freeze({"a": [1, 2, 1]})


# --- move (RFC 6902 section 4.4) --------------------------------------------------------------

def test_move_into_own_child_fails():
    outcome = apply_patch(freeze({"a": {"b": 1}}), ops({"op": "move", "from": "/a", "path": "/a/c"}))
    assert not outcome.ok and outcome.failed_index == 0 and "child" in outcome.reason


def test_move_to_a_sibling_with_a_shared_prefix_is_not_into_a_child():
    outcome = apply_patch(freeze({"a": {"b": 1}}), ops({"op": "move", "from": "/a", "path": "/ab"}))
    assert outcome.result == freeze({"ab": {"b": 1}})


def test_move_onto_itself_needs_an_existing_source():
    assert apply_patch(A1, ops({"op": "move", "from": "/a", "path": "/a"})).result == A1
    outcome = apply_patch(A1, ops({"op": "move", "from": "/x", "path": "/x"}))
    assert not outcome.ok and "from" in outcome.reason


def test_move_path_is_resolved_after_the_removal():
    """Removing arr[0] shifts arr[2] (an object with key "01") to arr[1], so "/arr/1/01" then
    names an object member: the move applies (RFC 6902 4.4: remove, then add)."""
    doc = freeze({"arr": [0, [5], {"01": 1}]})
    outcome = apply_patch(doc, ops({"op": "move", "from": "/arr/0", "path": "/arr/1/01"}))
    assert outcome.ok, outcome.reason
    assert outcome.result == freeze({"arr": [[5], {"01": 0}]})


def test_move_path_after_removal_can_meet_an_array():
    """The converse: after the removal arr[1] is an array, where "01" is no index."""
    doc = freeze({"arr": [0, {"01": 1}, [5, 6]]})
    outcome = apply_patch(doc, ops({"op": "move", "from": "/arr/0", "path": "/arr/1/01"}))
    assert not outcome.ok and "01" in outcome.reason


def test_move_within_an_array_uses_post_removal_indices():
    doc = freeze([1, 2, 3])
    assert apply_patch(doc, ops({"op": "move", "from": "/0", "path": "/2"})).result == "[2,3,1]"
    assert apply_patch(doc, ops({"op": "move", "from": "/0", "path": "/-"})).result == "[2,3,1]"
    assert not apply_patch(doc, ops({"op": "move", "from": "/0", "path": "/3"})).ok


def test_missing_from_location_is_named():
    outcome = apply_patch(A1, ops({"op": "copy", "from": "/nope", "path": "/b"}))
    assert not outcome.ok and "'from'" in outcome.reason and "/nope" in outcome.reason


# --- the in-place helper ----------------------------------------------------------------------

def test_apply_patch_value_applies_in_place():
    doc = {"a": [1]}
    result = apply_patch_value(doc, ops({"op": "add", "path": "/a/-", "value": 2},
                                        {"op": "move", "from": "/a", "path": "/b"}))
    assert result == {"b": [1, 2]}


def test_apply_patch_does_not_share_state_between_calls():
    doc = freeze({"a": [1]})
    patch = ops({"op": "add", "path": "/a/-", "value": 2})
    assert apply_patch(doc, patch).result == apply_patch(doc, patch).result == freeze({"a": [1, 2]})
    assert thaw(doc) == {"a": [1]}



def test_a_patch_that_would_nest_too_deep_does_not_apply():
    from model.json_values import freeze
    from model.patch import MAX_RESULT_DEPTH, apply_patch
    from model.wire import parse_event

    def replace_x(levels):
        value = 0
        for _ in range(levels):
            value = {"x": value}
        return parse_event({"type": "ACTIVITY_DELTA", "messageId": "a", "activityType": "P",
                            "patch": [{"op": "replace", "path": "/x", "value": value}]}).patch

    fits = apply_patch(freeze({"x": 0}), replace_x(MAX_RESULT_DEPTH - 1))  # 128 levels
    assert fits.ok
    too_deep = apply_patch(freeze({"x": 0}), replace_x(MAX_RESULT_DEPTH))  # 129 levels
    assert (too_deep.ok, too_deep.failed_index) == (False, 0)
    assert "deeper than 128" in too_deep.reason


# --- the memoised operations and the canonical write-back (speed, same outcomes) ---------------

def test_a_target_or_operation_that_is_not_canonical_is_normalised_as_freeze_does():
    # apply_patch takes canonical texts; given others it still writes the canonical result
    from model.patch import apply_patch as apply
    add = ops({"op": "add", "path": "/b", "value": 2})
    assert apply('{"a":1.0,"z":-0.0}', add).result == freeze({"a": 1, "b": 2, "z": 0})
    raw = PatchOp(op="add", raw='{"op":"add","path":"/b","value":2.0}')   # not canonical
    assert apply(A1, (raw,)).result == '{"a":1,"b":2}'
    assert apply('{"a":1.5}', add).result == '{"a":1.5,"b":2}'             # 1.5 is canonical


def test_refreeze_equals_freeze_on_thawed_canonical_values():
    from model.json_values import refreeze
    for value in [{"b": [1, 2.5, {"c": None}], "a": "é"}, [True, False, 0, -7, 1e-300], "x", 3]:
        assert refreeze(thaw(freeze(value))) == freeze(value)


def test_memoised_operations_are_not_shared_with_documents():
    from model.patch import _library_op, clear_memos
    clear_memos()
    patch = ops({"op": "add", "path": "/v", "value": {"k": [1]}},
                {"op": "add", "path": "/v/k/-", "value": 2})
    first = apply_patch(freeze({}), patch)
    again = apply_patch(freeze({"other": 0}), patch)     # the same operations, memoised
    assert first.result == '{"v":{"k":[1,2]}}'
    assert again.result == '{"other":0,"v":{"k":[1,2]}}'
    assert _library_op.cache_info().currsize == 2
    clear_memos()
    assert _library_op.cache_info().currsize == 0
