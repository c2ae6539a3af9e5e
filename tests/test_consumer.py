"""Tests for the consumer step (model.consumer): one or more tests per branch of BRANCHES, and one
test per option of every knob (model.readings.KNOBS) showing the option's distinct effect.

Traces are written in wire form and parsed with model.wire.parse_events; verdicts are compared in
wire form through Verdict.to_json(): exact messages, warning codes, clause ids and atEvent indexes.
"""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings

from model.consumer import BRANCHES, ConsumerState, initial_state, run_input, step
from model.readings import DRAFT, KNOBS, PRESETS, Reading
from model.verdict import evaluate, trace_states
from model.wire import parse_event, parse_events
from properties.strategies import wire_events

from wirekit import RF, RS, delta, snap  # noqa: E402


# --- helpers ------------------------------------------------------------------------------------





def op(name, path, value=..., **extra) -> dict:
    obj = {"op": name, "path": path}
    if value is not ...:
        obj["value"] = value
    obj.update(extra)
    return obj


def text(mid="a1", body="hi", role="assistant") -> list[dict]:
    return [{"type": "TEXT_MESSAGE_START", "messageId": mid, "role": role},
            {"type": "TEXT_MESSAGE_CONTENT", "messageId": mid, "delta": body},
            {"type": "TEXT_MESSAGE_END", "messageId": mid}]


def ms(*messages) -> dict:
    return {"type": "MESSAGES_SNAPSHOT", "messages": list(messages)}


def act(mid="act-1", atype="PLAN", content=None, **extra) -> dict:
    """An activity message in wire form (as it appears in verdict messages)."""
    obj = {"id": mid, "role": "activity", "activityType": atype,
           "content": {"n": 0} if content is None else content}
    obj.update(extra)
    return obj


def msg(mid, content, role="assistant", **extra) -> dict:
    obj = {"id": mid, "role": role, "content": content}
    obj.update(extra)
    return obj


def run(*wire, reading: Reading = DRAFT, start: bool = True) -> dict:
    """Evaluate a wire trace (RUN_STARTED prepended unless ``start=False``) in wire form."""
    events = parse_events(([RS] if start else []) + list(wire))
    return evaluate(events, reading).to_json()


def under(knob_id: str, option: str, *wire, base: Reading = DRAFT) -> dict:
    return run(*wire, reading=base.with_(**{knob_id: option}))


def codes(verdict: dict) -> list[tuple[str, int]]:
    return [(w["code"], w["atEvent"]) for w in verdict["warnings"]]


def warning(verdict: dict, index: int = 0) -> dict:
    w = dict(verdict["warnings"][index])
    w.pop("detail")
    return w


def fatal(verdict: dict) -> dict:
    f = dict(verdict["fatal"])
    f.pop("detail")
    return f


# --- snapshot.create ----------------------------------------------------------------------------

def test_create_at_arrival_position():
    v = run(*text("a1", "hi"), snap(content={"q": "x"}), *text("a2", "bye"), RF)
    assert v["messages"] == [msg("a1", "hi"), act(content={"q": "x"}), msg("a2", "bye")]
    assert v["warnings"] == [] and v["fatal"] is None and v["run"] == "finished"


def test_create_keeps_owner_metadata_and_unknown_type():
    v = run(snap(atype="vendor:thing", subagentRunId="sub-1", metadata={"k": 1}))
    assert v["messages"] == [act(atype="vendor:thing", metadata={"k": 1}, subagentRunId="sub-1")]
    assert v["warnings"] == []


def test_create_two_activities_in_arrival_order():
    v = run(snap("act-2", content={"b": 1}), snap("act-1", content={"a": 1}))
    assert [m["id"] for m in v["messages"]] == ["act-2", "act-1"]


# --- snapshot.replace ---------------------------------------------------------------------------

@pytest.mark.parametrize("flag", [{}, {"replace": True}], ids=["absent", "true"])
def test_replace_content_type_and_remint_owner(flag):
    v = run(snap(content={"n": 1, "old": True}, subagentRunId="sub-1"),
            snap(atype="SEARCH", content={"n": 2}, subagentRunId="sub-2", **flag))
    assert v["messages"] == [act(atype="SEARCH", content={"n": 2}, subagentRunId="sub-2")]
    assert v["warnings"] == []


@pytest.mark.parametrize("flag", [{}, {"replace": True}], ids=["absent", "true"])
def test_replace_remints_owner_to_absent(flag):
    v = run(snap(subagentRunId="sub-1"), snap(content={"n": 5}, **flag))
    assert v["messages"] == [act(content={"n": 5})]
    assert "subagentRunId" not in v["messages"][0]


def test_replace_is_not_a_content_merge():
    v = run(snap(content={"a": 1, "b": 2}), snap(content={"c": 3}))
    assert v["messages"][0]["content"] == {"c": 3}


def test_replace_merges_metadata_key_by_key_non_recursively():
    v = run(snap(metadata={"a": 1, "n": {"x": 1, "y": 2}, "keep": "k"}),
            snap(content={"n": 1}, metadata={"n": {"x": 9}, "a": None, "z": None}))
    assert v["messages"] == [act(content={"n": 1},
                                 metadata={"a": None, "n": {"x": 9}, "keep": "k", "z": None})]


def test_replace_without_metadata_keeps_accumulated_metadata():
    v = run(snap(metadata={"a": 1}), snap(content={"n": 1}))
    assert v["messages"] == [act(content={"n": 1}, metadata={"a": 1})]


def test_replace_adopts_next_snapshot_after_failed_patch():
    v = run(snap(), delta(patch=[op("remove", "/missing")]), snap(content={"n": 7}))
    assert v["messages"] == [act(content={"n": 7})]
    assert codes(v) == [("ACTIVITY_PATCH_FAILED", 2)]


# --- snapshot.replace-false ---------------------------------------------------------------------

def test_replace_false_keeps_content_type_and_owner():
    v = run(snap(content={"n": 1}, subagentRunId="sub-1"),
            snap(atype="SEARCH", content={"n": 2}, replace=False, subagentRunId="sub-1"))
    assert v["messages"] == [act(content={"n": 1}, subagentRunId="sub-1")]
    assert v["warnings"] == [] and v["fatal"] is None


def test_replace_false_creating_uses_its_own_values():
    v = run(snap(atype="SEARCH", content={"q": 1}, replace=False, subagentRunId="sub-1",
                 metadata={"m": 1}))
    assert v["messages"] == [act(atype="SEARCH", content={"q": 1}, metadata={"m": 1},
                                 subagentRunId="sub-1")]


def test_replace_false_untagged_on_parent_activity_agrees():
    v = run(snap(), snap(content={"n": 9}, replace=False), reading=PRESETS["strict"])
    assert v["messages"] == [act()] and v["fatal"] is None and v["warnings"] == []


# --- snapshot.owner-disagrees (draft: keep) -----------------------------------------------------

def test_replace_false_with_disagreeing_owner_keeps_owner_under_draft():
    v = run(snap(subagentRunId="sub-1"), snap(content={"n": 2}, replace=False,
                                              subagentRunId="sub-2"))
    assert v["messages"] == [act(subagentRunId="sub-1")]
    assert v["warnings"] == [] and v["fatal"] is None


# --- snapshot.not-activity / seen-not-held (draft) ----------------------------------------------

def test_snapshot_on_text_id_skipped_under_draft():
    v = run(*text("a1", "hi"), snap("a1"))
    assert v["messages"] == [msg("a1", "hi")]
    assert warning(v) == {"code": "ACTIVITY_TARGET_NOT_ACTIVITY", "messageId": "a1",
                          "atEvent": 4, "clause": "ACT-SNAP-CREATE"}


def test_snapshot_on_id_dropped_by_messages_snapshot_is_seen_under_draft():
    v = run(snap(), ms(act("act-2")), snap(content={"n": 3}))
    assert v["messages"] == [act("act-2")]
    assert warning(v) == {"code": "ACTIVITY_ID_SEEN_BEFORE", "messageId": "act-1",
                          "atEvent": 3, "clause": "ACT-SNAP-CREATE"}


# --- delta.apply --------------------------------------------------------------------------------

def test_delta_applies_retypes_and_merges_metadata():
    v = run(snap(content={"n": 0, "items": []}, metadata={"a": 1, "o": {"x": 1}}),
            delta(atype="SEARCH", patch=[op("replace", "/n", 2), op("add", "/items/-", "x")],
                  metadata={"o": {"y": 2}, "b": None}))
    assert v["messages"] == [act(atype="SEARCH", content={"n": 2, "items": ["x"]},
                                 metadata={"a": 1, "o": {"y": 2}, "b": None})]
    assert v["warnings"] == []


def test_deltas_apply_against_current_value():
    v = run(snap(content={"items": []}), delta(patch=[op("add", "/items/-", 1)]),
            delta(patch=[op("add", "/items/-", 2)]), delta(patch=[op("add", "/items/0", 0)]))
    assert v["messages"][0]["content"] == {"items": [0, 1, 2]}


def test_untagged_delta_on_subagent_activity_is_accepted():
    v = run(snap(subagentRunId="sub-1"), delta(patch=[op("replace", "/n", 1)]),
            reading=PRESETS["strict"])
    assert v["messages"] == [act(content={"n": 1}, subagentRunId="sub-1")]
    assert v["fatal"] is None


def test_tagged_delta_agreeing_with_owner_applies():
    v = run(snap(subagentRunId="sub-1"),
            delta(patch=[op("replace", "/n", 1)], subagentRunId="sub-1"))
    assert v["messages"] == [act(content={"n": 1}, subagentRunId="sub-1")]
    assert v["warnings"] == [] and v["fatal"] is None


def test_empty_patch_still_retypes():
    v = run(snap(), delta(atype="SEARCH"))
    assert v["messages"] == [act(atype="SEARCH")]


# --- delta.missing / delta.not-activity ---------------------------------------------------------

def test_delta_on_missing_id_warns_and_run_survives():
    v = run(delta("ghost", patch=[op("replace", "/n", 1)]), snap(), RF)
    assert warning(v) == {"code": "ACTIVITY_DELTA_TARGET_MISSING", "messageId": "ghost",
                          "atEvent": 1, "clause": "ACT-DELTA-MISSING"}
    assert len(v["warnings"]) == 1
    assert v["fatal"] is None and v["run"] == "finished"
    assert v["messages"] == [act()]


@pytest.mark.parametrize("name", list(PRESETS))
def test_delta_on_missing_id_never_fatal(name):
    v = run(delta("ghost"), reading=PRESETS[name])
    assert v["fatal"] is None and codes(v) == [("ACTIVITY_DELTA_TARGET_MISSING", 1)]


def test_delta_on_text_message_id_warns_not_activity():
    v = run(*text("a1", "hi"), delta("a1", patch=[op("add", "/x", 1)]), RF)
    assert warning(v) == {"code": "ACTIVITY_DELTA_TARGET_NOT_ACTIVITY", "messageId": "a1",
                          "atEvent": 4, "clause": "ACT-DELTA-MISSING"}
    assert v["messages"] == [msg("a1", "hi")]
    assert v["fatal"] is None and v["run"] == "finished"


# --- delta.patch-failed -------------------------------------------------------------------------

def test_failing_patch_is_atomic_and_warns():
    # The first operation would apply; the second does not, so nothing of the patch remains.
    v = run(snap(content={"n": 0}), delta(patch=[op("replace", "/n", 5), op("remove", "/missing")]),
            RF)
    assert v["messages"] == [act(content={"n": 0})]
    assert warning(v) == {"code": "ACTIVITY_PATCH_FAILED", "messageId": "act-1", "atEvent": 2,
                          "clause": "SNP-SURFACE-FAILURE"}
    assert "op 1" in v["warnings"][0]["detail"]
    assert v["fatal"] is None and v["run"] == "finished"


def test_test_op_one_versus_true_fails():
    v = run(snap(content={"flag": True}),
            delta(patch=[op("test", "/flag", 1), op("replace", "/flag", False)]))
    assert v["messages"] == [act(content={"flag": True})]
    assert codes(v) == [("ACTIVITY_PATCH_FAILED", 2)]
    v = run(snap(content={"n": 1}), delta(patch=[op("test", "/n", True), op("replace", "/n", 3)]))
    assert v["messages"] == [act(content={"n": 1})]
    assert codes(v) == [("ACTIVITY_PATCH_FAILED", 2)]


def test_test_op_one_versus_one_point_zero_passes():
    v = run(snap(content={"n": 1}), delta(patch=[op("test", "/n", 1.0), op("replace", "/n", 3)]))
    assert v["messages"] == [act(content={"n": 3})] and v["warnings"] == []


def test_failed_patch_under_draft_neither_retypes_nor_merges_metadata():
    v = run(snap(metadata={"a": 1}),
            delta(atype="SEARCH", patch=[op("remove", "/missing")], metadata={"b": 2}))
    assert v["messages"] == [act(metadata={"a": 1})]
    assert codes(v) == [("ACTIVITY_PATCH_FAILED", 2)]


# --- delta.unknown-op ---------------------------------------------------------------------------

def test_unknown_op_dropped_and_rest_applied():
    v = run(snap(content={"n": 0}),
            delta(patch=[{"op": "increment", "path": "/n"}, op("replace", "/n", 4)]))
    assert v["messages"] == [act(content={"n": 4})]
    assert warning(v) == {"code": "UNKNOWN_PATCH_OP_DROPPED", "messageId": "act-1",
                          "atEvent": 2, "clause": "SNP-UNKNOWN-OP"}
    assert "increment" in v["warnings"][0]["detail"]
    assert len(v["warnings"]) == 1


def test_two_unknown_ops_give_two_warnings():
    v = run(snap(content={"n": 0}), delta(patch=[{"op": "inc"}, {"op": "dec", "path": "/n"},
                                                 op("add", "/m", 1)]))
    assert v["messages"] == [act(content={"n": 0, "m": 1})]
    assert codes(v) == [("UNKNOWN_PATCH_OP_DROPPED", 2), ("UNKNOWN_PATCH_OP_DROPPED", 2)]


def test_op_with_undescribed_member_is_kept_whole():
    v = run(snap(content={"n": 0}), delta(patch=[op("replace", "/n", 1, note="x")]))
    assert v["messages"] == [act(content={"n": 1})] and v["warnings"] == []


# --- delta.non-object (draft: apply) ------------------------------------------------------------

def test_root_replace_to_array_applies_under_draft():
    v = run(snap(content={"status": "running"}), delta(patch=[op("replace", "", [])]), RF)
    assert v["messages"] == [act(content=[])]
    assert v["warnings"] == [] and v["fatal"] is None


# --- delta.owner-mismatch (draft: fatal) --------------------------------------------------------

def test_delta_tag_disagreeing_with_opener_is_fatal_under_draft():
    v = run(snap(subagentRunId="sub-1"), delta(patch=[op("replace", "/n", 1)],
                                               subagentRunId="sub-2"), snap("act-2"))
    assert fatal(v) == {"code": "ACTIVITY_OWNER_MISMATCH", "atEvent": 2,
                        "clause": "SUB-REJECT-MISMATCH", "messageId": "act-1"}
    assert v["messages"] == [act(subagentRunId="sub-1")]


def test_tagged_delta_on_parent_activity_is_fatal_under_draft():
    v = run(snap(), delta(subagentRunId="sub-1"))
    assert fatal(v)["code"] == "ACTIVITY_OWNER_MISMATCH" and fatal(v)["atEvent"] == 2


# --- messages-snapshot.reconcile ----------------------------------------------------------------

def test_messages_snapshot_replaces_in_place_and_appends_new():
    v = run(ms(msg("u1", "hi", "user"), msg("a1", "x")), snap(),
            ms(msg("a1", "y"), msg("u2", "new", "user"), msg("u1", "hi!", "user")))
    assert v["messages"] == [msg("u1", "hi!", "user"), msg("a1", "y"), act(),
                             msg("u2", "new", "user")]
    assert v["warnings"] == []


def test_messages_snapshot_appends_new_in_snapshot_order():
    v = run(snap(), ms(msg("x2", "b"), msg("x1", "a")))
    assert v["messages"] == [act(), msg("x2", "b"), msg("x1", "a")]


def test_messages_snapshot_drops_absent_non_activity():
    v = run(*text("a1", "hi"), *text("a2", "yo"), ms(msg("a2", "yo")))
    assert v["messages"] == [msg("a2", "yo")]


def test_messages_snapshot_keeps_activity_when_it_carries_none():
    v = run(*text("a1", "hi"), snap(), ms(msg("u1", "q", "user")))
    assert v["messages"] == [act(), msg("u1", "q", "user")]


def test_messages_snapshot_carrying_activity_revokes_the_exception():
    v = run(snap("act-1"), snap("act-2", content={"n": 2}), *text("a1", "hi"),
            ms(act("act-2", content={"n": 20}), msg("a1", "hi")))
    assert v["messages"] == [act("act-2", content={"n": 20}), msg("a1", "hi")]


def test_messages_snapshot_keeps_reasoning_when_it_carries_none():
    v = run(ms(msg("r1", "thinking", "reasoning"), msg("u1", "q", "user")),
            ms(msg("u1", "q", "user")))
    assert v["messages"] == [msg("r1", "thinking", "reasoning"), msg("u1", "q", "user")]


def test_messages_snapshot_establishes_ownership_from_the_message():
    v = run(snap(subagentRunId="sub-1"), ms(act("act-1", content={"n": 1})))
    assert v["messages"] == [act(content={"n": 1})]
    v = run(snap(subagentRunId="sub-1"), ms(act("act-1", content={"n": 1}, subagentRunId="sub-2")),
            delta(patch=[op("replace", "/n", 2)], subagentRunId="sub-2"))
    assert v["messages"] == [act(content={"n": 2}, subagentRunId="sub-2")]
    assert v["fatal"] is None and v["warnings"] == []


def test_messages_snapshot_creates_activity_a_delta_can_target():
    v = run(ms(act("act-1", content={"n": 1})), delta(patch=[op("replace", "/n", 2)]))
    assert v["messages"] == [act(content={"n": 2})]


# --- run-input.strip ----------------------------------------------------------------------------

def test_run_input_strips_activity_messages():
    v = run(ms(msg("u1", "plan", "user")), snap(), *text("a1", "done"), RF)
    assert v["messages"] == [msg("u1", "plan", "user"), act(), msg("a1", "done")]
    assert v["runInput"] == [msg("u1", "plan", "user"), msg("a1", "done")]


def test_run_input_function_matches_verdict():
    events = parse_events([RS, snap(), *text("a1", "ok")])
    state = trace_states(events)[-1]
    assert run_input(state) == [msg("a1", "ok")]
    assert run_input(initial_state()) == []


# --- lifecycle ----------------------------------------------------------------------------------

def test_event_before_run_started_is_fatal():
    v = run(snap(), RS, start=False)
    assert fatal(v) == {"code": "STREAM_NOT_STARTED", "atEvent": 0, "clause": "LIF-STREAM-START",
                        "messageId": "act-1"}
    assert v["messages"] == [] and v["run"] == "rejected"


def test_event_after_run_finished_is_fatal():
    v = run(snap(), RF, snap("act-2"))
    assert fatal(v) == {"code": "EVENT_AFTER_RUN_CLOSED", "atEvent": 3,
                        "clause": "LIF-AFTER-CLOSE", "messageId": "act-2"}
    assert v["messages"] == [act()] and v["run"] == "rejected"


def test_run_started_twice_is_fatal():
    v = run(snap(), RS)
    assert fatal(v) == {"code": "RUN_ALREADY_ACTIVE", "atEvent": 2, "clause": "LIF-ONE-ACTIVE",
                        "messageId": None}


def test_run_error_keeps_activity_and_a_new_run_works():
    v = run(snap(), {"type": "RUN_ERROR", "message": "boom"},
            {"type": "RUN_STARTED", "threadId": "t1", "runId": "r2"},
            delta(patch=[op("replace", "/n", 1)]), RF)
    assert v["messages"] == [act(content={"n": 1})]
    assert v["fatal"] is None and v["warnings"] == [] and v["run"] == "finished"


def test_run_error_keeps_activity_and_rejects_later_events():
    v = run(snap(), {"type": "RUN_ERROR", "message": "boom"}, snap("act-2"))
    assert v["messages"] == [act()]
    assert fatal(v)["code"] == "EVENT_AFTER_RUN_CLOSED" and fatal(v)["atEvent"] == 3


def test_run_error_first_is_admitted_and_twice_is_fatal():
    v = run({"type": "RUN_ERROR", "message": "no run"}, start=False)
    assert v["fatal"] is None and v["run"] == "errored"
    v = run({"type": "RUN_ERROR", "message": "a"}, {"type": "RUN_ERROR", "message": "b"})
    assert fatal(v) == {"code": "EVENT_AFTER_RUN_CLOSED", "atEvent": 2,
                        "clause": "LIF-AFTER-CLOSE", "messageId": None}


def test_late_run_error_after_run_finished_fails_the_run():
    v = run(snap(), RF, {"type": "RUN_ERROR", "message": "flush failed"})
    assert v["fatal"] is None and v["run"] == "errored" and v["messages"] == [act()]


def test_messages_accumulate_across_runs():
    v = run(snap(), RF, {"type": "RUN_STARTED", "threadId": "t1", "runId": "r2"}, *text("a1"), RF)
    assert v["messages"] == [act(), msg("a1", "hi")] and v["run"] == "finished"


def test_run_boundary_closes_open_messages():
    # a1 is still open when the run fails; the next run starts with nothing open, so a
    # MESSAGES_SNAPSHOT omitting it drops it even under X1=preserve.
    v = under("X1", "preserve", text("a1")[0],
              {"type": "RUN_ERROR", "message": "x"},
              {"type": "RUN_STARTED", "threadId": "t1", "runId": "r2"},
              ms(msg("u1", "q", "user")))
    assert v["messages"] == [msg("u1", "q", "user")] and v["fatal"] is None
    v = under("X1", "preserve", text("a1")[0],
              ms(msg("u1", "q", "user")))
    assert v["messages"] == [msg("a1", ""), msg("u1", "q", "user")]


# --- state --------------------------------------------------------------------------------------

def test_state_snapshot_replaces_and_delta_amends():
    v = run({"type": "STATE_SNAPSHOT", "snapshot": {"a": {"b": 1}, "c": 2}},
            {"type": "STATE_SNAPSHOT", "snapshot": {"a": {"x": 1}}},
            {"type": "STATE_DELTA", "delta": [op("add", "/a/y", 2)]}, RF,
            {"type": "RUN_STARTED", "threadId": "t1", "runId": "r2"},
            {"type": "STATE_DELTA", "delta": [op("remove", "/a/x")]})
    assert v["state"] == {"a": {"y": 2}} and v["warnings"] == []


def test_state_delta_failure_is_atomic_and_warns():
    v = run({"type": "STATE_SNAPSHOT", "snapshot": {"a": 1}},
            {"type": "STATE_DELTA", "delta": [op("test", "/a", 2), op("replace", "/a", 3)]},
            {"type": "STATE_DELTA", "delta": [op("replace", "/a", 5), op("remove", "/zz")]},
            {"type": "STATE_DELTA", "delta": [op("replace", "/a", 7)]}, RF)
    assert v["state"] == {"a": 7}
    assert [(w["code"], w["atEvent"], w["clause"], w["messageId"]) for w in v["warnings"]] == [
        ("STATE_PATCH_FAILED", 2, "SNP-ATOMIC", None),
        ("STATE_PATCH_FAILED", 3, "SNP-ATOMIC", None)]
    assert v["fatal"] is None and v["run"] == "finished"


def test_state_starts_from_empty_object():
    v = run({"type": "STATE_DELTA", "delta": [op("add", "/k", [1])]})
    assert v["state"] == {"k": [1]}


# --- text messages and tool calls ---------------------------------------------------------------

def test_text_events_on_activity_id_are_skipped():
    v = run(snap(), {"type": "TEXT_MESSAGE_START", "messageId": "act-1", "role": "assistant"},
            {"type": "TEXT_MESSAGE_CONTENT", "messageId": "act-1", "delta": "x"},
            {"type": "TEXT_MESSAGE_END", "messageId": "act-1"})
    assert v["messages"] == [act()]
    assert [(w["code"], w["atEvent"], w["clause"]) for w in v["warnings"]] == [
        ("TEXT_TARGET_IS_ACTIVITY", 2, "TXT-TARGET-ACTIVITY"),
        ("TEXT_TARGET_IS_ACTIVITY", 3, "TXT-TARGET-ACTIVITY"),
        ("TEXT_TARGET_IS_ACTIVITY", 4, "TXT-TARGET-ACTIVITY")]
    assert v["fatal"] is None


def test_text_content_on_unknown_id_is_skipped():
    v = run({"type": "TEXT_MESSAGE_CONTENT", "messageId": "zz", "delta": "x"})
    assert warning(v) == {"code": "TEXT_TARGET_MISSING", "messageId": "zz", "atEvent": 1,
                          "clause": "TXT-TARGET-MISSING"}
    assert v["messages"] == []


def test_text_continuation_owner_mismatch_is_fatal_and_untagged_continues():
    start = {"type": "TEXT_MESSAGE_START", "messageId": "a1", "role": "assistant",
             "subagentRunId": "sub-1"}
    v = run(start, {"type": "TEXT_MESSAGE_CONTENT", "messageId": "a1", "delta": "x"},
            {"type": "TEXT_MESSAGE_END", "messageId": "a1", "subagentRunId": "sub-1"})
    assert v["messages"] == [msg("a1", "x", subagentRunId="sub-1")] and v["fatal"] is None
    v = run(start, {"type": "TEXT_MESSAGE_CONTENT", "messageId": "a1", "delta": "x",
                    "subagentRunId": "sub-2"}, snap())
    assert fatal(v) == {"code": "TEXT_OWNER_MISMATCH", "atEvent": 2,
                        "clause": "SUB-REJECT-MISMATCH", "messageId": "a1"}
    assert v["messages"] == [msg("a1", "", subagentRunId="sub-1")]


def test_text_metadata_merges_across_start_content_end():
    v = run({"type": "TEXT_MESSAGE_START", "messageId": "a1", "role": "assistant",
             "metadata": {"a": 1, "o": {"x": 1}}},
            {"type": "TEXT_MESSAGE_CONTENT", "messageId": "a1", "delta": "h", "metadata": {"b": 2}},
            {"type": "TEXT_MESSAGE_END", "messageId": "a1", "metadata": {"o": {"y": 2}}})
    assert v["messages"] == [msg("a1", "h", metadata={"a": 1, "b": 2, "o": {"y": 2}})]


def test_tool_calls_and_results():
    v = run({"type": "TOOL_CALL_START", "toolCallId": "tc1", "toolCallName": "f",
             "parentMessageId": "a1", "metadata": {"m": 1}},
            {"type": "TOOL_CALL_ARGS", "toolCallId": "tc1", "delta": "{}"},
            {"type": "TOOL_CALL_END", "toolCallId": "tc1", "metadata": {"n": 2}},
            {"type": "TOOL_CALL_RESULT", "messageId": "t1", "toolCallId": "tc1", "content": "ok"},
            snap(), {"type": "TOOL_CALL_START", "toolCallId": "tc2", "toolCallName": "g",
                     "parentMessageId": "act-1"},
            {"type": "TOOL_CALL_ARGS", "toolCallId": "tc9", "delta": "x"})
    assert v["messages"] == [
        {"id": "a1", "role": "assistant", "toolCalls": [
            {"id": "tc1", "type": "function", "function": {"name": "f", "arguments": "{}"},
             "metadata": {"m": 1, "n": 2}}]},
        {"id": "t1", "role": "tool", "content": "ok", "toolCallId": "tc1"}, act()]
    assert [(w["code"], w["atEvent"]) for w in v["warnings"]] == [
        ("TEXT_TARGET_IS_ACTIVITY", 6), ("TOOL_CALL_TARGET_MISSING", 7)]
    assert v["runInput"] == v["messages"][:2]


# --- subagents ----------------------------------------------------------------------------------

def test_subagent_tracking():
    events = parse_events([RS, {"type": "SUBAGENT_STARTED", "subagentRunId": "sub-1"},
                           {"type": "SUBAGENT_STARTED", "subagentRunId": "sub-2"},
                           {"type": "SUBAGENT_FINISHED", "subagentRunId": "sub-1"},
                           {"type": "SUBAGENT_ERROR", "subagentRunId": "sub-2"},
                           {"type": "SUBAGENT_STARTED", "subagentRunId": "sub-3"},
                           {"type": "RUN_ERROR", "message": "x"}])
    states = trace_states(events)
    assert [sorted(s.subagents) for s in states] == [
        [], ["sub-1"], ["sub-1", "sub-2"], ["sub-2"], [], ["sub-3"], []]
    assert states[5].to_json()["subagents"] == ["sub-3"]


def test_unannounced_subagent_attribution_is_accepted():
    v = run(snap(subagentRunId="sub-7"), delta(patch=[op("replace", "/n", 1)],
                                               subagentRunId="sub-7"))
    assert v["messages"] == [act(content={"n": 1}, subagentRunId="sub-7")]
    assert v["warnings"] == [] and v["fatal"] is None


# --- unrecognised.drop / member.strip / passthrough ---------------------------------------------

def test_unrecognised_event_dropped_with_warning():
    v = run({"type": "ACTIVITY_PROGRESS", "messageId": "act-1"}, snap())
    assert warning(v) == {"code": "UNKNOWN_EVENT_DROPPED", "messageId": None, "atEvent": 1,
                          "clause": "PRC-DROP-STRIP"}
    assert v["messages"] == [act()] and v["fatal"] is None


def test_stripped_member_warns_with_path_and_event_applies():
    v = run(snap(extra=1), delta(patch=[op("replace", "/n", 1)], vendorNote="x"))
    assert [warning(v, 0), warning(v, 1)] == [
        {"code": "UNKNOWN_MEMBER_STRIPPED", "messageId": "act-1", "atEvent": 1,
         "clause": "PRC-DROP-STRIP"},
        {"code": "UNKNOWN_MEMBER_STRIPPED", "messageId": "act-1", "atEvent": 2,
         "clause": "PRC-DROP-STRIP"}]
    assert [w["detail"] for w in v["warnings"]] == ["$.extra", "$.vendorNote"]
    assert v["messages"] == [act(content={"n": 1})]


def test_stripped_member_inside_snapshot_message():
    v = run(ms(dict(msg("u1", "q", "user"), junk=True)))
    assert v["messages"] == [msg("u1", "q", "user")]
    assert v["warnings"][0]["code"] == "UNKNOWN_MEMBER_STRIPPED"
    assert v["warnings"][0]["detail"] == "$.messages[0].junk"


def test_unknown_members_of_content_and_metadata_are_kept():
    v = run(snap(content={"x-vendor": {"a": 1}}, metadata={"vendor:k": [1]}))
    assert v["messages"] == [act(content={"x-vendor": {"a": 1}}, metadata={"vendor:k": [1]})]
    assert v["warnings"] == []


_STEP = {"type": "STEP_STARTED", "stepName": "plan"}
_STEP_END = {"type": "STEP_FINISHED", "stepName": "plan"}


@pytest.mark.parametrize("trace, code, at", [
    ([_STEP, _STEP], "STEP_ALREADY_OPEN", 2),
    ([_STEP_END], "STEP_NOT_OPEN", 1),
    ([_STEP, _STEP_END, _STEP_END], "STEP_NOT_OPEN", 3),
    ([_STEP, _STEP_END | {"subagentRunId": "sub-1"}], "STEP_NOT_OPEN", 2),  # per owner
    ([_STEP, RF], "RUN_FINISHED_WITH_OPEN", 2),
])
def test_an_unbalanced_step_is_fatal(trace, code, at):
    """LIF-STEP-REJECT: an unbalanced step, or one open at RUN_FINISHED, fails the run."""
    v = run(*trace)
    assert (v["fatal"]["code"], v["fatal"]["atEvent"]) == (code, at)
    assert v["fatal"]["clause"] in ("LIF-STEP-REJECT", "LIF-CLOSE-BEFORE-FINISH")


def test_steps_are_per_owner_may_overlap_and_are_run_scoped():
    sub = {"subagentRunId": "sub-1"}
    v = run(_STEP, _STEP | sub, {"type": "STEP_STARTED", "stepName": "other"}, _STEP_END,
            _STEP_END | sub, {"type": "STEP_FINISHED", "stepName": "other"}, RF)
    assert v["fatal"] is None and v["warnings"] == []
    # RUN_ERROR ends whatever was open; the next run starts with no step open
    v = run(_STEP, {"type": "RUN_ERROR", "message": "x"}, RS, _STEP, _STEP_END, RF)
    assert v["fatal"] is None


def test_drop_open_keeps_the_dropped_stream_open_across_a_second_snapshot():
    """X1=drop-open: the in-flight message goes, its stream stays open until its END, whatever
    later MESSAGES_SNAPSHOTs list (MS-IN-FLIGHT-OPEN)."""
    end = {"type": "TEXT_MESSAGE_END", "messageId": "a1"}
    trace = [_X1_TRACE[0], ms(msg("u1", "q", "user")), ms(msg("u1", "q", "user"))]
    assert under("X1", "drop-open", *trace, RF)["fatal"]["code"] == "RUN_FINISHED_WITH_OPEN"
    v = under("X1", "drop-open", *trace, end, RF)
    assert v["fatal"] is None
    assert [w["code"] for w in v["warnings"]] == ["TEXT_TARGET_MISSING"]
    assert under("X1", "drop-open", *trace, _X1_TRACE[0])["fatal"]["code"] == \
        "TEXT_MESSAGE_STILL_OPEN"
    assert under("X1", "drop", *trace, _X1_TRACE[0], end, RF)["fatal"] is None


def test_a_text_start_with_an_unrecognised_role_is_kept_with_the_role_stripped():
    """PRC-STRIP-POSITION: role is optional, so the unrecognised value goes, not the event."""
    v = run({"type": "TEXT_MESSAGE_START", "messageId": "m1", "role": "robot"},
            {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": "hi"},
            {"type": "TEXT_MESSAGE_END", "messageId": "m1"}, RF)
    assert v["fatal"] is None
    assert v["messages"] == [{"id": "m1", "role": "assistant", "content": "hi"}]
    assert [(w["code"], w["atEvent"]) for w in v["warnings"]] == [("UNKNOWN_MEMBER_STRIPPED", 1)]


def test_passthrough_accepted_silently():
    v = run({"type": "STEP_STARTED", "stepName": "s"}, snap(),
            {"type": "STEP_FINISHED", "stepName": "s"}, RF)
    assert v["messages"] == [act()] and v["warnings"] == [] and v["fatal"] is None


# --- malformed.fatal ----------------------------------------------------------------------------

def test_malformed_content_null_is_fatal_and_nothing_after_applies():
    v = run(snap(), snap("act-2") | {"content": None}, snap("act-3"),
            delta(patch=[op("replace", "/n", 1)]), RF)
    assert fatal(v) == {"code": "MALFORMED_ACTIVITY_EVENT", "atEvent": 2,
                        "clause": "ACT-MALFORMED-FATAL", "messageId": "act-2"}
    assert v["fatal"]["detail"] == "$.content: expected an object, got null"
    assert v["messages"] == [act()]
    assert v["run"] == "rejected" and v["warnings"] == []
    events = parse_events([RS, snap(), snap("act-2") | {"content": None}, snap("act-3"), RF])
    assert evaluate(events).events_applied == 3


def test_malformed_patch_is_fatal():
    v = run(snap(), delta(patch=[op("replace", "n", 1)]))
    assert fatal(v) == {"code": "MALFORMED_ACTIVITY_EVENT", "atEvent": 2,
                        "clause": "SCH-JSON-POINTER", "messageId": "act-1"}
    v = run(snap(), delta(patch=[{"op": "replace", "path": "/n"}]))
    assert fatal(v) == {"code": "MALFORMED_ACTIVITY_EVENT", "atEvent": 2,
                        "clause": "SNP-MALFORMED-OP", "messageId": "act-1"}


def test_malformed_metadata_null_is_fatal_under_draft():
    v = run(snap(metadata=None))
    assert fatal(v) == {"code": "MALFORMED_ACTIVITY_EVENT", "atEvent": 1,
                        "clause": "EVM-ABSENT-NOT-NULL", "messageId": "act-1"}


# --- halted state -------------------------------------------------------------------------------

def test_halted_state_ignores_later_events():
    events = parse_events([RS, snap() | {"content": None}])
    halted = trace_states(events)[-1]
    assert halted.halted
    for wire in (snap(), RS, RF, delta("act-1"), {"type": "NOPE"}, snap() | {"content": 3}):
        result = step(halted, parse_event(wire), DRAFT)
        assert result.state is halted and result.warnings == () and result.fatal is None


# --- never raises; hashable states --------------------------------------------------------------

def _states() -> list[ConsumerState]:
    out = []
    for wire in ([RS], [RS, snap()], [RS, snap(subagentRunId="sub-1"), *text("act-2")],
                 [RS, snap("act-1", content={"a": [1, 2], "b": {"c": 1}}, metadata={"k": 1}),
                  snap("act-2", subagentRunId="sub-2"), snap("act-2", subagentRunId="sub-1")],
                 [RS, {"type": "TEXT_MESSAGE_START", "messageId": "act-2", "role": "assistant"}]):
        out.append(trace_states(parse_events(wire))[-1])
    return out


_STATES = _states()
_READINGS = list(PRESETS.values()) + [
    DRAFT.with_(Q1="ignore", Q2="parent", Q3="warn", Q4="skip", **{"Q4-opener": "first"},
                Q5="retype", Q6="merge", Q7="skip", Q8="by-type", Q9="replace", Q20="skip-patch"),
]


@settings(max_examples=200, derandomize=True, deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(wire_events())
def test_step_never_raises_on_generated_events(wire):
    event = parse_event(wire)
    for state in _STATES:
        for reading in _READINGS:
            result = step(state, event, reading)
            assert isinstance(result.state, ConsumerState)
            hash(result.state)
            assert result.fatal is None or result.state.halted
            for m in result.state.messages:
                m.to_wire()


def test_states_hashable_and_equal_for_equal_histories():
    wire = [RS, snap(metadata={"a": 1}), *text("a1"), delta(patch=[op("add", "/m", [1])]),
            ms(msg("a1", "hi"), msg("u1", "q", "user"))]
    s1 = trace_states(parse_events(wire))
    s2 = trace_states(parse_events(wire))
    assert s1 == s2
    assert [hash(s) for s in s1] == [hash(s) for s in s2]
    assert len({s for s in s1}) == len(s1)  # every step changed the state
    assert {s1[-1]: "x"}[s2[-1]] == "x"
    # equal JSON, different key order: equal states
    a = trace_states(parse_events([RS, snap(content={"a": 1, "b": 2.0})]))[-1]
    b = trace_states(parse_events([RS, snap(content={"b": 2, "a": 1})]))[-1]
    assert a == b and hash(a) == hash(b)


# --- the branch each step names ---------------------------------------------------------------

_ROOT_ARRAY = delta(patch=[op("replace", "", [])])
_TEXT = {"type": "TEXT_MESSAGE_START", "messageId": "m1", "role": "assistant"}
_SUB = {"type": "SUBAGENT_STARTED", "subagentRunId": "sub-1"}

# branch -> (trace after RUN_STARTED, knob overrides): the last event's step names the branch
_BRANCH_CASES = {
    "malformed.fatal": ([dict(snap(), content=None)], {}),
    "unrecognised.drop": ([{"type": "MY_PRIVATE_EVENT"}], {}),
    "passthrough.accept": ([_TEXT], {}),
    "lifecycle.not-started": ([RF], {"start": False}),
    "lifecycle.after-close": ([RF, snap()], {}),
    "lifecycle.one-active": ([RS], {}),
    "lifecycle.open-at-finish": ([_TEXT, RF], {}),
    "lifecycle.run-error": ([{"type": "RUN_ERROR", "message": "x"}], {}),
    "lifecycle.run-boundary": ([RF], {}),
    "lifecycle.halted": ([RS, snap()], {}),
    "snapshot.create": ([snap()], {}),
    "snapshot.seen-not-held": ([snap(), ms(act("act-2")), snap()], {}),
    "snapshot.replace": ([snap(), snap(content={"n": 1})], {}),
    "snapshot.replace-false": ([snap(), snap(replace=False)], {}),
    "snapshot.owner-disagrees": ([snap(), snap(replace=False, subagentRunId="sub-1")], {}),
    "snapshot.not-activity": ([_TEXT, snap("m1")], {}),
    "delta.missing": ([delta()], {}),
    "delta.not-activity": ([_TEXT, delta("m1")], {}),
    "delta.apply": ([snap(), delta(patch=[op("replace", "/n", 1)])], {}),
    "delta.owner-mismatch": ([snap(), delta(subagentRunId="sub-1")], {}),
    "delta.unknown-op": ([snap(), delta(patch=[op("increment", "/n")])], {"Q20": "fatal"}),
    "delta.patch-failed": ([snap(), delta(patch=[op("remove", "/missing")])], {}),
    "delta.non-object": ([snap(), _ROOT_ARRAY], {"Q7": "fatal"}),
    "messages-snapshot.reconcile": ([snap(), ms(act("act-2"))], {}),
    "messages-snapshot.in-flight": ([_TEXT, ms(act("act-2"))], {}),
    "state.snapshot": ([{"type": "STATE_SNAPSHOT", "snapshot": {}}], {}),
    "state.delta": ([{"type": "STATE_DELTA", "delta": [op("remove", "/x")]}], {}),
    "text.target-activity": ([snap(), {"type": "TEXT_MESSAGE_CONTENT", "messageId": "act-1",
                                        "delta": "x"}], {}),
    "text.target-missing": ([{"type": "TEXT_MESSAGE_END", "messageId": "m9"}], {}),
    "text.owner-mismatch": ([_TEXT, {"type": "TEXT_MESSAGE_END", "messageId": "m1",
                                     "subagentRunId": "sub-1"}], {}),
    "subagent.track": ([_SUB], {}),
    "step.track": ([{"type": "STEP_STARTED", "stepName": "s"}], {}),
    "step.unbalanced": ([{"type": "STEP_FINISHED", "stepName": "s"}], {}),
    "text.still-open": ([_TEXT, ms(act("act-2")), _TEXT], {"X1": "drop-open"}),
    "snapshot.resync": ([snap(), delta(patch=[op("remove", "/missing")]),
                         snap(atype="SEARCH", replace=False)], {"Q14": "adopt"}),
    "delta.owner-ended": ([_SUB, snap(subagentRunId="sub-1"),
                           {"type": "SUBAGENT_FINISHED", "subagentRunId": "sub-1"}, delta()],
                          {"Q15": "closed"}),
    "delta.earlier-run": ([snap(), RF, RS, delta()], {"Q23": "run-scoped"}),
}


def test_every_step_branch_has_a_representative_case():
    from model.branches import STEP_BRANCHES
    assert set(_BRANCH_CASES) == STEP_BRANCHES


@pytest.mark.parametrize("branch", list(_BRANCH_CASES))
def test_the_step_names_its_branch(branch):
    """The representative step of each branch names it, and so do its warnings and fatal
    (a fatal's branch is the step's)."""
    wire, knobs = _BRANCH_CASES[branch]
    knobs = dict(knobs)
    start = knobs.pop("start", True)
    events = parse_events(([RS] if start else []) + wire)
    state = initial_state()
    for event in events[:-1]:
        state = step(state, event, DRAFT.with_(**knobs)).state
    result = step(state, events[-1], DRAFT.with_(**knobs))
    assert result.branch == branch
    if result.fatal is not None:
        assert result.fatal.branch == branch
    own = [w for w in result.warnings if w.branch != "member.strip"]
    assert all(w.branch in (branch, "delta.unknown-op") for w in own)


def test_notices_name_their_own_branch_ahead_of_the_steps():
    stripped = step(step(initial_state(), parse_event(RS), DRAFT).state,
                    parse_event(snap(extra=1)), DRAFT)
    assert stripped.branch == "snapshot.create"
    assert [(w.code, w.branch) for w in stripped.warnings] == \
        [("UNKNOWN_MEMBER_STRIPPED", "member.strip")]
    running = step(initial_state(), parse_event(RS), DRAFT).state
    shimmed = step(running, parse_event(snap(subagentRunId=None)), DRAFT.with_(Q21="shim"))
    assert shimmed.branch == "snapshot.create" and shimmed.fatal is None
    assert [(w.code, w.branch) for w in shimmed.warnings] == \
        [("NULL_MEMBER_SHIMMED", "malformed.null-shim")]
    rejected = step(running, parse_event(snap(subagentRunId=None)), DRAFT)
    assert rejected.branch == "malformed.fatal" == rejected.fatal.branch


def test_delta_with_dropped_unknown_ops_names_the_patch_branch():
    """Q20=drop-op: the dropped ops' warnings come from delta.unknown-op, the step names where
    the rest of the patch went."""
    state = step(step(initial_state(), parse_event(RS), DRAFT).state, parse_event(snap()),
                 DRAFT).state
    applied = step(state, parse_event(delta(patch=[op("increment", "/n"),
                                                   op("replace", "/n", 1)])), DRAFT)
    assert applied.branch == "delta.apply"
    assert [w.branch for w in applied.warnings] == ["delta.unknown-op"]
    failed = step(state, parse_event(delta(patch=[op("increment", "/n"),
                                                  op("remove", "/missing")])), DRAFT)
    assert failed.branch == "delta.patch-failed"
    assert [w.branch for w in failed.warnings] == ["delta.unknown-op", "delta.patch-failed"]


def test_branch_table_cites_registered_clauses():
    from model.clauses import registry
    reg = registry()
    assert all(cid in reg for ids in BRANCHES.values() for cid in ids)


# --- knobs: one test per option -----------------------------------------------------------------

def test_every_knob_has_a_test_per_option():
    """Guard: the parametrised knob tests below name every option of every knob the consumer
    consults (the producer-only knobs have theirs in tests/test_producer.py)."""
    from model.producer import PRODUCER_ONLY_KNOBS
    covered = {(k, o) for k, o, *_ in _KNOB_CASES}
    assert covered == {(k.id, o) for k in KNOBS for o in k.option_names
                       if k.id not in PRODUCER_ONLY_KNOBS}


# Each entry: knob id, option, trace, expected (messages, warnings as (code, atEvent, clause),
# fatal as (code, atEvent, clause) or None), base reading the option is applied to.
M1 = {"a": 1}
_Q2_TRACE = [snap(subagentRunId="sub-1"), snap(content={"n": 9}, replace=False)]
_Q3_TRACE = [snap(subagentRunId="sub-1", metadata={"a": 1}),
             snap(content={"n": 9}, replace=False, subagentRunId="sub-2", metadata={"b": 2})]
_Q4_TRACE = [snap(subagentRunId="sub-1"),
             delta(patch=[op("replace", "/n", 1)], subagentRunId="sub-2")]
_Q4O_TRACE = [snap(subagentRunId="sub-1"), snap(content={"n": 1}, subagentRunId="sub-2"),
              delta(patch=[op("replace", "/n", 2)], subagentRunId="sub-2")]
_FAIL_DELTA = delta(atype="SEARCH", patch=[op("remove", "/missing")], metadata={"b": 2})
_Q6MS_TRACE = [snap(metadata={"a": 1}), delta(patch=[], metadata={"b": 2}),
               ms(act(content={"n": 5}, metadata={"c": 3}))]
_Q7_TRACE = [snap(content={"status": "running"}), delta(patch=[op("replace", "", [])])]
_Q8_TRACE = [snap("act-1"), snap("act-2", atype="SEARCH"), ms(act("act-3"))]
_Q9_TRACE = [*text("a1", "hi"), snap("a1", content={"n": 1})]
_Q10_TRACE = [snap(), ms(act("act-2")), snap(content={"n": 3})]
_Q11_TRACE = [snap(), *text("a1", "hi"), snap(content={"n": 1})]
_Q13_TRACE = [snap(), delta(patch=[op("replace", "/n", 5), op("remove", "/missing")]), RF]
_Q20_TRACE = [snap(), delta(patch=[{"op": "increment", "path": "/n"}, op("replace", "/n", 4)])]
_Q21_TRACE = [snap(content={"n": 1}, subagentRunId="sub-1"),
              snap(content={"n": 2}) | {"replace": None}]
_X1_TRACE = [{"type": "TEXT_MESSAGE_START", "messageId": "a1", "role": "assistant"},
             {"type": "TEXT_MESSAGE_CONTENT", "messageId": "a1", "delta": "par"},
             ms(msg("u1", "q", "user")),
             {"type": "TEXT_MESSAGE_CONTENT", "messageId": "a1", "delta": "t"}]
_WARN3 = DRAFT.with_(Q3="warn")
# Q14: a replace:false snapshot after a delta whose patch did not apply
_Q14_TRACE = [snap(), delta(patch=[op("remove", "/missing")]),
              snap(atype="SEARCH", content={"n": 7}, replace=False)]
# Q15: a delta after the owning invocation finished
_Q15_TRACE = [{"type": "SUBAGENT_STARTED", "subagentRunId": "sub-1"}, snap(subagentRunId="sub-1"),
              {"type": "SUBAGENT_FINISHED", "subagentRunId": "sub-1"},
              delta(patch=[op("replace", "/n", 2)])]
# Q23: a delta in a second run against the first run's activity
_Q23_TRACE = [snap(), RF, RS | {"runId": "r2"}, delta(patch=[op("replace", "/n", 2)])]

_KNOB_CASES = [
    # Q1: metadata of a declined replace:false snapshot
    ("Q1", "merge", [snap(metadata=M1), snap(content={"n": 2}, replace=False, metadata={"b": 2})],
     [act(metadata={"a": 1, "b": 2})], [], None, DRAFT),
    ("Q1", "ignore", [snap(metadata=M1), snap(content={"n": 2}, replace=False, metadata={"b": 2})],
     [act(metadata={"a": 1})], [], None, DRAFT),
    # Q2: untagged replace:false on a subagent-owned activity (seen through Q3=warn)
    ("Q2", "continues", _Q2_TRACE, [act(subagentRunId="sub-1")], [], None, _WARN3),
    ("Q2", "parent", _Q2_TRACE, [act(subagentRunId="sub-1")],
     [("ACTIVITY_OWNER_MISMATCH", 2, "ACT-ATTR-TOLERATE")], None, _WARN3),
    # Q3: tagged replace:false disagreeing with the owner
    ("Q3", "keep", _Q3_TRACE, [act(metadata={"a": 1, "b": 2}, subagentRunId="sub-1")], [], None,
     DRAFT),
    ("Q3", "warn", _Q3_TRACE, [act(metadata={"a": 1, "b": 2}, subagentRunId="sub-1")],
     [("ACTIVITY_OWNER_MISMATCH", 2, "ACT-ATTR-TOLERATE")], None, DRAFT),
    ("Q3", "skip", _Q3_TRACE, [act(metadata={"a": 1}, subagentRunId="sub-1")],
     [("ACTIVITY_OWNER_MISMATCH", 2, "ACT-ATTR-TOLERATE")], None, DRAFT),
    ("Q3", "fatal", _Q3_TRACE, [act(metadata={"a": 1}, subagentRunId="sub-1")], [],
     ("ACTIVITY_OWNER_MISMATCH", 2, "ACT-ATTR-TOLERATE"), DRAFT),
    # Q4: delta tagged with a non-opener
    ("Q4", "fatal", _Q4_TRACE, [act(subagentRunId="sub-1")], [],
     ("ACTIVITY_OWNER_MISMATCH", 2, "SUB-REJECT-MISMATCH"), DRAFT),
    ("Q4", "skip", _Q4_TRACE, [act(subagentRunId="sub-1")],
     [("ACTIVITY_OWNER_MISMATCH", 2, "SUB-REJECT-MISMATCH")], None, DRAFT),
    ("Q4", "accept", _Q4_TRACE, [act(content={"n": 1}, subagentRunId="sub-1")], [], None, DRAFT),
    # Q4-opener: after a re-minting snapshot, a delta tagged with the new owner
    ("Q4-opener", "current", _Q4O_TRACE, [act(content={"n": 2}, subagentRunId="sub-2")], [], None,
     DRAFT),
    ("Q4-opener", "first", _Q4O_TRACE, [act(content={"n": 1}, subagentRunId="sub-2")], [],
     ("ACTIVITY_OWNER_MISMATCH", 3, "SUB-REJECT-MISMATCH"), DRAFT),
    # Q5: failed patch retype
    ("Q5", "skip", [snap(metadata=M1), _FAIL_DELTA], [act(metadata=M1)],
     [("ACTIVITY_PATCH_FAILED", 2, "SNP-SURFACE-FAILURE")], None, DRAFT),
    ("Q5", "retype", [snap(metadata=M1), _FAIL_DELTA], [act(atype="SEARCH", metadata=M1)],
     [("ACTIVITY_PATCH_FAILED", 2, "SNP-SURFACE-FAILURE")], None, DRAFT),
    # Q6: failed patch metadata
    ("Q6", "skip", [snap(metadata=M1), _FAIL_DELTA], [act(metadata=M1)],
     [("ACTIVITY_PATCH_FAILED", 2, "SNP-SURFACE-FAILURE")], None, DRAFT),
    ("Q6", "merge", [snap(metadata=M1), _FAIL_DELTA], [act(metadata={"a": 1, "b": 2})],
     [("ACTIVITY_PATCH_FAILED", 2, "SNP-SURFACE-FAILURE")], None, DRAFT),
    # Q6-ms: MESSAGES_SNAPSHOT restating an activity with accumulated metadata
    ("Q6-ms", "replace", _Q6MS_TRACE, [act(content={"n": 5}, metadata={"c": 3})], [], None, DRAFT),
    ("Q6-ms", "merge", _Q6MS_TRACE, [act(content={"n": 5}, metadata={"a": 1, "b": 2, "c": 3})],
     [], None, DRAFT),
    # Q7: root replace to []
    ("Q7", "apply", _Q7_TRACE, [act(content=[])], [], None, DRAFT),
    ("Q7", "skip", _Q7_TRACE, [act(content={"status": "running"})],
     [("ACTIVITY_PATCH_FAILED", 2, "SNP-SURFACE-FAILURE")], None, DRAFT),
    ("Q7", "fatal", _Q7_TRACE, [act(content={"status": "running"})], [],
     ("ACTIVITY_CONTENT_NOT_OBJECT", 2, "ACT-DELTA-OBJECT-DETECT"), DRAFT),
    # Q8: MESSAGES_SNAPSHOT carrying one activity
    ("Q8", "self-revoking", _Q8_TRACE, [act("act-3")], [], None, DRAFT),
    ("Q8", "keep", _Q8_TRACE, [act("act-1"), act("act-2", atype="SEARCH"), act("act-3")], [],
     None, DRAFT),
    ("Q8", "by-type", _Q8_TRACE, [act("act-2", atype="SEARCH"), act("act-3")], [], None, DRAFT),
    # Q9: ACTIVITY_SNAPSHOT on a text message id
    ("Q9", "skip", _Q9_TRACE, [msg("a1", "hi")],
     [("ACTIVITY_TARGET_NOT_ACTIVITY", 4, "ACT-SNAP-CREATE")], None, DRAFT),
    ("Q9", "replace", _Q9_TRACE, [act("a1", content={"n": 1})], [], None, DRAFT),
    ("Q9", "fatal", _Q9_TRACE, [msg("a1", "hi")], [],
     ("ACTIVITY_TARGET_NOT_ACTIVITY", 4, "ACT-SNAP-CREATE"), DRAFT),
    # Q10: an activity dropped by MESSAGES_SNAPSHOT, then snapshotted again
    ("Q10", "seen", _Q10_TRACE, [act("act-2")],
     [("ACTIVITY_ID_SEEN_BEFORE", 3, "ACT-SNAP-CREATE")], None, DRAFT),
    ("Q10", "held", _Q10_TRACE, [act("act-2"), act(content={"n": 3})], [], None, DRAFT),
    # Q11: replacing snapshot after another message arrived
    ("Q11", "in-place", _Q11_TRACE, [act(content={"n": 1}), msg("a1", "hi")], [], None, DRAFT),
    ("Q11", "move", _Q11_TRACE, [msg("a1", "hi"), act(content={"n": 1})], [], None, DRAFT),
    # Q13: failed patch tolerated or fatal
    ("Q13", "tolerate", _Q13_TRACE, [act()],
     [("ACTIVITY_PATCH_FAILED", 2, "SNP-SURFACE-FAILURE")], None, DRAFT),
    ("Q13", "fatal", _Q13_TRACE, [act()], [],
     ("ACTIVITY_PATCH_FAILED", 2, "SNP-SURFACE-FAILURE"), DRAFT),
    # Q14: resynchronisation by a replace:false snapshot
    ("Q14", "decline", _Q14_TRACE, [act()],
     [("ACTIVITY_PATCH_FAILED", 2, "SNP-SURFACE-FAILURE")], None, DRAFT),
    ("Q14", "adopt", _Q14_TRACE, [act(atype="SEARCH", content={"n": 7})],
     [("ACTIVITY_PATCH_FAILED", 2, "SNP-SURFACE-FAILURE")], None, DRAFT),
    # Q15: the activity of an ended invocation
    ("Q15", "live", _Q15_TRACE, [act(content={"n": 2}, subagentRunId="sub-1")], [], None, DRAFT),
    ("Q15", "closed", _Q15_TRACE, [act(subagentRunId="sub-1")],
     [("ACTIVITY_OWNER_ENDED", 4, "SUB-ENDED-ACTIVITY")], None, DRAFT),
    # Q23: an earlier run's activity
    ("Q23", "continue", _Q23_TRACE, [act(content={"n": 2})], [], None, DRAFT),
    ("Q23", "run-scoped", _Q23_TRACE, [act()],
     [("ACTIVITY_DELTA_NO_RUN_BASELINE", 4, "ACT-RUN-BASELINE")], None, DRAFT),
    # Q20: unknown op
    ("Q20", "drop-op", _Q20_TRACE, [act(content={"n": 4})],
     [("UNKNOWN_PATCH_OP_DROPPED", 2, "SNP-UNKNOWN-OP")], None, DRAFT),
    ("Q20", "skip-patch", _Q20_TRACE, [act()],
     [("ACTIVITY_PATCH_FAILED", 2, "SNP-SURFACE-FAILURE")], None, DRAFT),
    ("Q20", "fatal", _Q20_TRACE, [act()], [], ("UNKNOWN_PATCH_OP", 2, "SNP-UNKNOWN-OP"), DRAFT),
    # Q18: a declined replace:false carrying another type (the prose: type stands)
    ("Q18", "prose", [snap(), snap(atype="SEARCH", content={"n": 9}, replace=False)], [act()],
     [], None, DRAFT),
    ("Q18", "schema", [snap(), snap(atype="SEARCH", content={"n": 9}, replace=False)],
     [act(atype="SEARCH")], [], None, DRAFT),
    # Q19: which row of the metadata table an ACTIVITY_SNAPSHOT's metadata takes
    ("Q19", "activity-row", [snap(metadata=M1), snap(content={"n": 1}, metadata={"b": 2})],
     [act(content={"n": 1}, metadata={"a": 1, "b": 2})], [], None, DRAFT),
    ("Q19", "catch-all", [snap(metadata=M1), snap(content={"n": 1}, metadata={"b": 2})],
     [act(content={"n": 1})], [], None, DRAFT),
    # Q21: replace:null
    ("Q21", "fatal", _Q21_TRACE, [act(content={"n": 1}, subagentRunId="sub-1")], [],
     ("MALFORMED_ACTIVITY_EVENT", 2, "EVM-ABSENT-NOT-NULL"), DRAFT),
    ("Q21", "shim", _Q21_TRACE, [act(content={"n": 2})],
     [("NULL_MEMBER_SHIMMED", 2, "EVM-ABSENT-NOT-NULL")], None, DRAFT),
    # X1: MESSAGES_SNAPSHOT during an open text message
    # (RUN_FINISHED at the end tells drop-open from drop: its stream is still open)
    ("X1", "drop", _X1_TRACE + [RF], [msg("u1", "q", "user")],
     [("TEXT_TARGET_MISSING", 4, "TXT-TARGET-MISSING")], None, DRAFT),
    ("X1", "preserve", _X1_TRACE + [RF], [msg("a1", "part"), msg("u1", "q", "user")], [],
     ("RUN_FINISHED_WITH_OPEN", 5, "LIF-CLOSE-BEFORE-FINISH"), DRAFT),
    ("X1", "drop-open", _X1_TRACE + [RF], [msg("u1", "q", "user")],
     [("TEXT_TARGET_MISSING", 4, "TXT-TARGET-MISSING")],
     ("RUN_FINISHED_WITH_OPEN", 5, "LIF-CLOSE-BEFORE-FINISH"), DRAFT),
]


@pytest.mark.parametrize("knob_id,option,trace,messages,warnings,fatal_,base", _KNOB_CASES,
                         ids=[f"{c[0]}={c[1]}" for c in _KNOB_CASES])
def test_knob_option(knob_id, option, trace, messages, warnings, fatal_, base):
    reading = base.with_(**{knob_id: option})
    v = evaluate(parse_events([RS] + trace), reading).to_json()
    assert v["messages"] == messages
    assert [(w["code"], w["atEvent"], w["clause"]) for w in v["warnings"]] == warnings
    if fatal_ is None:
        assert v["fatal"] is None
    else:
        assert (v["fatal"]["code"], v["fatal"]["atEvent"], v["fatal"]["clause"]) == fatal_
    # the option's effect is distinct: every other option of the knob gives another verdict
    knob = next(k for k in KNOBS if k.id == knob_id)
    for other in knob.option_names:
        if other != option:
            w = evaluate(parse_events([RS] + trace), base.with_(**{knob_id: other})).to_json(
                detail=False)
            assert w != evaluate(parse_events([RS] + trace), reading).to_json(detail=False), other


def test_q3_fatal_halts_before_metadata_merge_and_later_events():
    v = under("Q3", "fatal", *_Q3_TRACE, snap("act-2"))
    assert v["messages"] == [act(metadata={"a": 1}, subagentRunId="sub-1")]
    assert v["fatal"]["messageId"] == "act-1"


def test_q4_opener_first_accepts_tag_of_the_first_opener():
    trace = [snap(subagentRunId="sub-1"), snap(content={"n": 1}, subagentRunId="sub-2"),
             delta(patch=[op("replace", "/n", 2)], subagentRunId="sub-1")]
    assert under("Q4-opener", "first", *trace)["messages"] == [
        act(content={"n": 2}, subagentRunId="sub-2")]
    v = under("Q4-opener", "current", *trace)
    assert v["fatal"]["code"] == "ACTIVITY_OWNER_MISMATCH" and v["fatal"]["atEvent"] == 3


def test_q6_ms_without_metadata_in_snapshot():
    trace = [snap(metadata={"a": 1}), ms(act(content={"n": 5}))]
    assert under("Q6-ms", "replace", *trace)["messages"] == [act(content={"n": 5})]
    assert under("Q6-ms", "merge", *trace)["messages"] == [act(content={"n": 5}, metadata={"a": 1})]


def test_q7_apply_leaves_non_object_then_later_delta_fails():
    v = under("Q7", "apply", *_Q7_TRACE, delta(patch=[op("add", "/x", 1)]))
    assert v["messages"] == [act(content=[])]
    assert codes(v) == [("ACTIVITY_PATCH_FAILED", 3)]


def test_q7_skip_with_q13_fatal_is_fatal():
    v = run(*_Q7_TRACE, reading=DRAFT.with_(Q7="skip", Q13="fatal"))
    assert fatal(v) == {"code": "ACTIVITY_PATCH_FAILED", "atEvent": 2,
                        "clause": "SNP-SURFACE-FAILURE", "messageId": "act-1"}


def test_q20_applies_to_state_delta_too():
    trace = [{"type": "STATE_DELTA", "delta": [{"op": "increment", "path": "/n"},
                                               op("add", "/n", 1)]}]
    assert under("Q20", "drop-op", *trace)["state"] == {"n": 1}
    v = under("Q20", "skip-patch", *trace)
    assert v["state"] == {} and codes(v) == [("STATE_PATCH_FAILED", 1)]
    assert fatal(under("Q20", "fatal", *trace))["code"] == "UNKNOWN_PATCH_OP"


def test_q21_shim_of_null_subagent_run_id_is_the_parent():
    trace = [snap(subagentRunId="sub-1"), snap(content={"n": 2}) | {"subagentRunId": None}]
    v = under("Q21", "shim", *trace)
    assert v["messages"] == [act(content={"n": 2})]
    assert codes(v) == [("NULL_MEMBER_SHIMMED", 2)]
    assert fatal(under("Q21", "fatal", *trace))["clause"] == "EVM-ABSENT-NOT-NULL"


def test_q21_does_not_shim_a_required_member():
    v = under("Q21", "shim", snap() | {"content": None})
    assert fatal(v)["clause"] == "ACT-MALFORMED-FATAL"


def test_x1_preserve_keeps_text_open_for_its_end():
    v = under("X1", "preserve", *_X1_TRACE, {"type": "TEXT_MESSAGE_END", "messageId": "a1"}, RF)
    assert v["fatal"] is None and v["warnings"] == [] and v["run"] == "finished"


def test_q21_shim_repairs_every_null_optional_member():
    v = under("Q21", "shim", snap(subagentRunId="sub-1"),
              snap(content={"n": 2}) | {"replace": None, "subagentRunId": None})
    assert v["fatal"] is None
    assert v["messages"] == [act(content={"n": 2})]
    assert codes(v) == [("NULL_MEMBER_SHIMMED", 2), ("NULL_MEMBER_SHIMMED", 2)]


def test_value_classes_copy_pickle_and_change_by_their_fields_alone():
    """model.frozen: ``but`` changes only the named fields (an unknown name is a TypeError);
    pickling and copying go by the fields, so a cached hash is never carried along (another
    process hashes strings differently)."""
    import copy
    import pickle
    from dataclasses import replace
    from model.events import Message
    message = Message("a-1", "activity", '{"n":0}', "PLAN", None, "sub-1", "sub-1")
    state = ConsumerState((message,), frozenset({"a-1"}), "active")
    hash(message), hash(state)
    assert message._hash != 0 and state._hash != 0
    changed = message.but(content='{"n":1}', owner=None)
    assert (changed.content, changed.owner, changed.first_owner, changed.activity_type) == \
        ('{"n":1}', None, "sub-1", "PLAN")
    assert state.but(run="finished").messages is state.messages
    assert replace(state, halted=True) == state.but(halted=True)
    with pytest.raises(TypeError):
        message.but(colour="red")
    for value in (message, state):
        loaded = pickle.loads(pickle.dumps(value))
        assert loaded == value and loaded._hash == 0 and hash(loaded) == hash(value)
        assert copy.deepcopy(value) == value and copy.copy(value) == value
    assert "_hash" not in repr(state)
