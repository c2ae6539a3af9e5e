"""Tests for the wire boundary (model.wire): AG-UI JSON in, typed events out, and back.

Covers the processing rules of the draft (notes N85..N89: malformed is fatal, unknown types are
dropped, undescribed members of closed objects are stripped with a notice, open objects are kept
whole, the list rule) and the schema shapes (N102..N110), plus trace-file reading.

Regression tests for defects found and fixed in model/wire.py are among them (pointer syntax, line splitting, wrapper offsets, NaN positions).
"""
from __future__ import annotations

import copy
import json

import pytest

from model.events import (
    ActivityDelta, ActivitySnapshot, Event, Malformed, Message, MessagesSnapshot, Passthrough,
    PatchOp, RunError, RunFinished, RunStarted, StateDelta, StateSnapshot, StepFinished, StepStarted, SubagentError,
    SubagentFinished, SubagentStarted, TextMessageContent, TextMessageEnd, TextMessageStart,
    ToolCallArgs, ToolCallEnd, ToolCallResult, ToolCallStart, Unrecognised,
)
from model.json_values import freeze
from model.wire import (
    JSON_POINTER, KNOWN_PASSTHROUGH, ParsedTrace, TraceFormatError, dump_jsonl, event_to_json,
    load_trace, loads_json, parse_event, parse_events, parse_trace_text,
)


# --- helpers ------------------------------------------------------------------------------------

def J(value) -> str:
    """Canonical JSON text: compare wire objects as JSON values (order-free, 1 == 1.0)."""
    return freeze(value)


def snap(**extra) -> dict:
    base = {"type": "ACTIVITY_SNAPSHOT", "messageId": "m1", "activityType": "PLAN",
            "content": {"steps": ["a", "b"], "done": False}}
    base.update(extra)
    return base


_DEFAULT = object()


def delta(patch=_DEFAULT, **extra) -> dict:
    base = {"type": "ACTIVITY_DELTA", "messageId": "m1", "activityType": "PLAN",
            "patch": [{"op": "replace", "path": "/done", "value": True}]
            if patch is _DEFAULT else patch}
    base.update(extra)
    return base


def without(obj: dict, key: str) -> dict:
    return {k: v for k, v in obj.items() if k != key}


def assert_malformed(ev: Event, *, name: str, path: str, clause: str) -> Malformed:
    assert type(ev) is Malformed, ev
    assert ev.name == name
    assert ev.path == path
    assert ev.clause == clause
    assert isinstance(ev.reason, str) and ev.reason
    return ev


# --- well-formed inputs of every interpreted type ----------------------------------------------

USER_MSG = {"id": "u1", "role": "user", "content": "hello", "name": "ann"}
USER_MSG_PARTS = {"id": "u2", "role": "user",
                  "content": [{"type": "text", "text": "hi"}, {"type": "binary", "mimeType": "x/y"}]}
ASSISTANT_MSG = {"id": "a1", "role": "assistant", "content": "ok",
                 "toolCalls": [{"id": "tc1", "type": "function",
                                "function": {"name": "f", "arguments": "{}"}}]}
ASSISTANT_NO_CONTENT = {"id": "a2", "role": "assistant"}
TOOL_MSG = {"id": "t1", "role": "tool", "content": "42", "toolCallId": "tc1", "error": "boom"}
ACTIVITY_MSG = {"id": "act1", "role": "activity", "activityType": "PLAN",
                "content": {"steps": [], "n": None}, "metadata": {"k": 1},
                "subagentRunId": "sub1"}
REASONING_MSG = {"id": "r1", "role": "reasoning", "content": "thinking",
                 "encryptedValue": "xyz"}
SYSTEM_MSG = {"id": "s1", "role": "system", "content": "be nice"}
DEVELOPER_MSG = {"id": "d1", "role": "developer", "content": "dev"}

WELL_FORMED: list[tuple[dict, type]] = [
    (snap(), ActivitySnapshot),
    (snap(replace=False), ActivitySnapshot),
    (snap(replace=True), ActivitySnapshot),
    (snap(subagentRunId="sub1"), ActivitySnapshot),
    (snap(metadata={"vendor.k": [1, 2], "n": None}), ActivitySnapshot),
    (snap(replace=False, subagentRunId="s", metadata={}, timestamp=1700000000000,
          rawEvent={"native": True}), ActivitySnapshot),
    (snap(content={}), ActivitySnapshot),
    (delta(), ActivityDelta),
    (delta([]), ActivityDelta),
    (delta([{"op": "add", "path": "/steps/-", "value": "c"},
            {"op": "remove", "path": "/steps/0"},
            {"op": "move", "from": "/a", "path": "/b"},
            {"op": "copy", "from": "/b", "path": "/c"},
            {"op": "test", "path": "/done", "value": False},
            {"op": "replace", "path": "", "value": {}}],
           subagentRunId="sub1", metadata={"m": 1}, timestamp=-5, rawEvent="raw"), ActivityDelta),
    ({"type": "MESSAGES_SNAPSHOT",
      "messages": [USER_MSG, USER_MSG_PARTS, ASSISTANT_MSG, ASSISTANT_NO_CONTENT, TOOL_MSG,
                   ACTIVITY_MSG, REASONING_MSG, SYSTEM_MSG, DEVELOPER_MSG]}, MessagesSnapshot),
    ({"type": "MESSAGES_SNAPSHOT", "messages": [], "timestamp": 3}, MessagesSnapshot),
    ({"type": "RUN_STARTED", "threadId": "t1", "runId": "r1"}, RunStarted),
    ({"type": "RUN_STARTED", "threadId": "t1", "runId": "r2", "parentRunId": "r1",
      "protocolVersion": "1.0", "input": {"messages": [], "state": {}}}, RunStarted),
    ({"type": "RUN_FINISHED", "threadId": "t1", "runId": "r1"}, RunFinished),
    ({"type": "RUN_FINISHED", "threadId": "t1", "runId": "r1", "outcome": "success",
      "result": {"x": [1, None]}, "usage": {"tokens": 3}}, RunFinished),
    ({"type": "RUN_ERROR", "message": "bad"}, RunError),
    ({"type": "RUN_ERROR", "message": "bad", "code": "E1"}, RunError),
    ({"type": "TEXT_MESSAGE_START", "messageId": "m2", "role": "assistant"}, TextMessageStart),
    ({"type": "TEXT_MESSAGE_START", "messageId": "m2", "role": "user", "name": "n",
      "subagentRunId": "s"}, TextMessageStart),
    ({"type": "TEXT_MESSAGE_CONTENT", "messageId": "m2", "delta": "hel"}, TextMessageContent),
    ({"type": "TEXT_MESSAGE_CONTENT", "messageId": "m2", "delta": "lo", "subagentRunId": "s"},
     TextMessageContent),
    ({"type": "TEXT_MESSAGE_END", "messageId": "m2"}, TextMessageEnd),
    ({"type": "TOOL_CALL_START", "toolCallId": "tc", "toolCallName": "search"}, ToolCallStart),
    ({"type": "TOOL_CALL_START", "toolCallId": "tc", "toolCallName": "search",
      "parentMessageId": "m2", "subagentRunId": "s"}, ToolCallStart),
    ({"type": "TOOL_CALL_ARGS", "toolCallId": "tc", "delta": "{\"q\":"}, ToolCallArgs),
    ({"type": "TOOL_CALL_END", "toolCallId": "tc"}, ToolCallEnd),
    ({"type": "TOOL_CALL_RESULT", "messageId": "m3", "toolCallId": "tc", "content": "r"},
     ToolCallResult),
    ({"type": "TOOL_CALL_RESULT", "messageId": "m3", "toolCallId": "tc",
      "content": [{"type": "text", "text": "r"}], "role": "tool"}, ToolCallResult),
    ({"type": "STATE_SNAPSHOT", "snapshot": {"a": {"b": None}}}, StateSnapshot),
    ({"type": "STATE_SNAPSHOT", "snapshot": [1, 2]}, StateSnapshot),
    ({"type": "STATE_SNAPSHOT", "snapshot": None}, StateSnapshot),
    ({"type": "STATE_DELTA", "delta": [{"op": "add", "path": "/a", "value": 1}]}, StateDelta),
    ({"type": "STATE_DELTA", "delta": [], "subagentRunId": "s"}, StateDelta),
    ({"type": "SUBAGENT_STARTED", "subagentRunId": "s"}, SubagentStarted),
    ({"type": "SUBAGENT_STARTED", "subagentRunId": "s2", "name": "helper",
      "parentSubagentRunId": "s"}, SubagentStarted),
    ({"type": "SUBAGENT_FINISHED", "subagentRunId": "s"}, SubagentFinished),
    ({"type": "SUBAGENT_FINISHED", "subagentRunId": "s", "outcome": {"ok": True}},
     SubagentFinished),
    ({"type": "SUBAGENT_ERROR", "subagentRunId": "s"}, SubagentError),
    ({"type": "SUBAGENT_ERROR", "subagentRunId": "s", "message": "died"}, SubagentError),
    ({"type": "STEP_STARTED", "stepName": "plan"}, StepStarted),
    ({"type": "STEP_FINISHED", "stepName": "plan", "subagentRunId": "sub-1"}, StepFinished),
    ({"type": "CUSTOM", "name": "x", "value": {"a": None}}, Passthrough),
    ({"type": "RAW", "event": [1, 2], "source": "openai"}, Passthrough),
    ({"type": "REASONING_MESSAGE_CONTENT", "messageId": "r", "delta": "hm"}, Passthrough),
    ({"type": "SOMETHING_NEW", "x": 1}, Unrecognised),
]
WELL_FORMED_IDS = [f"{i}-{obj['type']}" for i, (obj, _) in enumerate(WELL_FORMED)]


@pytest.mark.parametrize("obj,cls", WELL_FORMED, ids=WELL_FORMED_IDS)
def test_parse_well_formed_gives_exact_class_and_no_notices(obj, cls):
    original = copy.deepcopy(obj)
    ev = parse_event(obj)
    assert type(ev) is cls
    assert ev.notices == ()
    assert ev.type_name == obj["type"]
    assert obj == original  # parse_event does not mutate its input


@pytest.mark.parametrize("obj,cls", WELL_FORMED, ids=WELL_FORMED_IDS)
def test_round_trip_event_and_wire(obj, cls):
    ev = parse_event(obj)
    wire = ev.to_wire()
    assert J(wire) == J(obj)
    assert parse_event(wire) == ev
    assert hash(parse_event(wire)) == hash(ev)
    assert json.loads(event_to_json(ev)) == wire


# --- field-level mapping ------------------------------------------------------------------------

def test_activity_snapshot_fields_minimal():
    ev = parse_event(snap())
    assert ev == ActivitySnapshot(message_id="m1", activity_type="PLAN",
                                  content=J({"steps": ["a", "b"], "done": False}))
    assert ev.replace is None
    assert ev.replacing is True
    assert ev.subagent_run_id is None
    assert ev.metadata is None and ev.timestamp is None and ev.raw_event is None
    assert "replace" not in ev.to_wire()
    assert "subagentRunId" not in ev.to_wire()
    assert list(ev.to_wire())[0] == "type"


def test_activity_snapshot_replace_false_and_true():
    ev = parse_event(snap(replace=False))
    assert ev.replace is False and ev.replacing is False
    assert ev.to_wire()["replace"] is False
    ev = parse_event(snap(replace=True))
    assert ev.replace is True and ev.replacing is True
    assert ev.to_wire()["replace"] is True


def test_activity_snapshot_optional_members():
    ev = parse_event(snap(subagentRunId="sub1", metadata={"a": None, "b": {"c": 1}},
                          timestamp=12, rawEvent=[1, "x"]))
    assert ev.subagent_run_id == "sub1"
    assert ev.metadata == J({"a": None, "b": {"c": 1}})
    assert ev.timestamp == 12
    assert ev.raw_event == J([1, "x"])
    w = ev.to_wire()
    assert w["subagentRunId"] == "sub1"
    assert w["metadata"] == {"a": None, "b": {"c": 1}}
    assert w["rawEvent"] == [1, "x"]


def test_activity_snapshot_content_nulls_and_unknown_keys_kept():
    content = {"x-vendor": {"deep": [None, {"k": None}]}, "n": None, "1.0": 1.0}
    ev = parse_event(snap(content=content))
    assert type(ev) is ActivitySnapshot
    assert ev.notices == ()
    assert json.loads(ev.content) == {"x-vendor": {"deep": [None, {"k": None}]}, "n": None,
                                      "1.0": 1}


def test_timestamp_integral_float_accepted_as_int():
    ev = parse_event(snap(timestamp=5.0))
    assert type(ev) is ActivitySnapshot
    assert ev.timestamp == 5 and type(ev.timestamp) is int


@pytest.mark.parametrize("ts", [2**53 - 1, -(2**53 - 1), 0])
def test_timestamp_bounds_accepted(ts):
    ev = parse_event(snap(timestamp=ts))
    assert type(ev) is ActivitySnapshot and ev.timestamp == ts


def test_activity_delta_fields():
    patch = [{"op": "add", "path": "/steps/-", "value": "c"}, {"op": "remove", "path": "/x"}]
    ev = parse_event(delta(patch, subagentRunId="s"))
    assert type(ev) is ActivityDelta
    assert ev.message_id == "m1" and ev.activity_type == "PLAN" and ev.subagent_run_id == "s"
    assert ev.patch == (PatchOp("add", J(patch[0])), PatchOp("remove", J(patch[1])))
    assert [op.path for op in ev.patch] == ["/steps/-", "/x"]
    assert all(op.recognised for op in ev.patch)
    assert ev.to_wire()["patch"] == patch


def test_activity_delta_root_pointer_is_well_formed():
    ev = parse_event(delta([{"op": "replace", "path": "", "value": {"a": 1}}]))
    assert type(ev) is ActivityDelta
    assert ev.patch[0].path == ""


def test_activity_delta_empty_patch_is_valid_noop():
    ev = parse_event(delta([]))
    assert type(ev) is ActivityDelta and ev.patch == ()
    assert ev.to_wire()["patch"] == []


@pytest.mark.parametrize("ptr", ["", "/", "/a", "/a/b", "/~0", "/~1", "/a~0b~1c", "//", "/ä/€",
                                 "/a\nb", "/0/-"])
def test_valid_json_pointers_accepted(ptr):
    ev = parse_event(delta([{"op": "remove", "path": ptr}]))
    assert type(ev) is ActivityDelta
    assert ev.patch[0].path == ptr


def test_messages_snapshot_message_fields():
    ev = parse_event({"type": "MESSAGES_SNAPSHOT",
                      "messages": [USER_MSG, ASSISTANT_MSG, TOOL_MSG, ACTIVITY_MSG, REASONING_MSG]})
    assert type(ev) is MessagesSnapshot
    user, asst, tool, act, reas = ev.messages
    assert all(type(m) is Message for m in ev.messages)
    assert [m.role for m in ev.messages] == ["user", "assistant", "tool", "activity", "reasoning"]
    assert [m.id for m in ev.messages] == ["u1", "a1", "t1", "act1", "r1"]
    assert user.content == J("hello")
    assert json.loads(user.other) == {"name": "ann"}
    assert json.loads(asst.other) == {"toolCalls": ASSISTANT_MSG["toolCalls"]}
    assert json.loads(tool.other) == {"toolCallId": "tc1", "error": "boom"}
    assert act.is_activity and not user.is_activity
    assert act.activity_type == "PLAN"
    assert act.content == J({"steps": [], "n": None})
    assert act.metadata == J({"k": 1})
    assert act.owner == "sub1" and act.first_owner == "sub1"
    assert act.other == "{}"
    assert reas.content == J("thinking")
    assert json.loads(reas.other) == {"encryptedValue": "xyz"}
    assert user.first_owner is None and user.owner is None
    for m, src in zip(ev.messages, [USER_MSG, ASSISTANT_MSG, TOOL_MSG, ACTIVITY_MSG,
                                    REASONING_MSG]):
        assert J(m.to_wire()) == J(src)


def test_messages_snapshot_owner_on_non_activity_message_is_not_first_owner():
    ev = parse_event({"type": "MESSAGES_SNAPSHOT",
                      "messages": [{"id": "u", "role": "user", "content": "x",
                                    "subagentRunId": "s"}]})
    (m,) = ev.messages
    assert m.owner == "s" and m.first_owner is None


def test_text_message_start_default_role():
    ev = parse_event({"type": "TEXT_MESSAGE_START", "messageId": "m"})
    assert type(ev) is TextMessageStart
    assert ev.role == "assistant"
    assert parse_event(ev.to_wire()) == ev


@pytest.mark.parametrize("role", ["developer", "system", "assistant", "user"])
def test_text_message_start_accepts_text_roles(role):
    ev = parse_event({"type": "TEXT_MESSAGE_START", "messageId": "m", "role": role})
    assert type(ev) is TextMessageStart and ev.role == role


def test_tool_call_result_fields():
    ev = parse_event({"type": "TOOL_CALL_RESULT", "messageId": "m3", "toolCallId": "tc",
                      "content": "r", "role": "tool"})
    assert ev == ToolCallResult(message_id="m3", tool_call_id="tc", content=J("r"), role="tool")


def test_state_delta_ops():
    ev = parse_event({"type": "STATE_DELTA",
                      "delta": [{"op": "add", "path": "/a", "value": 1}]})
    assert ev.delta == (PatchOp("add", J({"op": "add", "path": "/a", "value": 1})),)


def test_run_started_fields():
    ev = parse_event({"type": "RUN_STARTED", "threadId": "T", "runId": "R", "parentRunId": "P",
                      "input": {"a": 1}})
    assert ev == RunStarted(thread_id="T", run_id="R", parent_run_id="P", input=J({"a": 1}))


def test_subagent_fields():
    assert parse_event({"type": "SUBAGENT_STARTED", "subagentRunId": "s", "name": "n",
                        "parentSubagentRunId": "p"}) == \
        SubagentStarted(subagent_run_id="s", name="n", parent_subagent_run_id="p")
    assert parse_event({"type": "SUBAGENT_FINISHED", "subagentRunId": "s"}) == \
        SubagentFinished(subagent_run_id="s")
    assert parse_event({"type": "SUBAGENT_ERROR", "subagentRunId": "s", "message": "m"}) == \
        SubagentError(subagent_run_id="s", message="m")


def test_run_scoped_open_events_ignore_extra_members_without_notice():
    # RUN_*/TEXT_*/... schemas are not fully modelled: extra members are ignored silently.
    ev = parse_event({"type": "RUN_STARTED", "threadId": "t", "runId": "r", "x": 1})
    assert type(ev) is RunStarted and ev.notices == ()
    ev = parse_event({"type": "TEXT_MESSAGE_END", "messageId": "m", "extra": True})
    assert type(ev) is TextMessageEnd and ev.notices == ()


# --- malformed known values (PRC-MALFORMED-FATAL, N85) -------------------------------------------

MALFORMED_ACTIVITY: list[tuple[str, dict, str, str]] = [
    ("missing messageId", without(snap(), "messageId"), "$.messageId", "ACT-MALFORMED-FATAL"),
    ("messageId number", snap(messageId=7), "$.messageId", "ACT-MALFORMED-FATAL"),
    ("missing activityType", without(snap(), "activityType"), "$.activityType",
     "ACT-MALFORMED-FATAL"),
    ("activityType null", snap(activityType=None), "$.activityType", "ACT-MALFORMED-FATAL"),
    ("missing content", without(snap(), "content"), "$.content", "ACT-MALFORMED-FATAL"),
    ("content null", snap(content=None), "$.content", "ACT-MALFORMED-FATAL"),
    ("content string", snap(content="text"), "$.content", "ACT-MALFORMED-FATAL"),
    ("content array", snap(content=[1, 2]), "$.content", "ACT-MALFORMED-FATAL"),
    ("content number", snap(content=3), "$.content", "ACT-MALFORMED-FATAL"),
    ("replace string", snap(replace="yes"), "$.replace", "ACT-MALFORMED-FATAL"),
    ("replace number", snap(replace=0), "$.replace", "ACT-MALFORMED-FATAL"),
    ("subagentRunId number", snap(subagentRunId=1), "$.subagentRunId", "ACT-MALFORMED-FATAL"),
    ("metadata array", snap(metadata=[]), "$.metadata", "ACT-MALFORMED-FATAL"),
    ("metadata string", snap(metadata="m"), "$.metadata", "ACT-MALFORMED-FATAL"),
    ("timestamp 1.5", snap(timestamp=1.5), "$.timestamp", "ACT-MALFORMED-FATAL"),
    ("timestamp 2**60", snap(timestamp=2**60), "$.timestamp", "ACT-MALFORMED-FATAL"),
    ("timestamp 2**53", snap(timestamp=2**53), "$.timestamp", "ACT-MALFORMED-FATAL"),
    ("timestamp -2**53", snap(timestamp=-(2**53)), "$.timestamp", "ACT-MALFORMED-FATAL"),
    ("timestamp string", snap(timestamp="12"), "$.timestamp", "ACT-MALFORMED-FATAL"),
    ("timestamp bool", snap(timestamp=True), "$.timestamp", "ACT-MALFORMED-FATAL"),
    ("delta missing patch", without(delta(), "patch"), "$.patch", "ACT-MALFORMED-FATAL"),
    ("delta missing messageId", without(delta(), "messageId"), "$.messageId",
     "ACT-MALFORMED-FATAL"),
    ("delta missing activityType", without(delta(), "activityType"), "$.activityType",
     "ACT-MALFORMED-FATAL"),
    ("delta timestamp 1.5", delta(timestamp=1.5), "$.timestamp", "ACT-MALFORMED-FATAL"),
]


@pytest.mark.parametrize("label,obj,path,clause", MALFORMED_ACTIVITY,
                         ids=[m[0] for m in MALFORMED_ACTIVITY])
def test_malformed_activity_values(label, obj, path, clause):
    ev = assert_malformed(parse_event(obj), name=obj["type"], path=path, clause=clause)
    assert ev.shim is None
    assert ev.wire == J(obj)
    assert J(ev.to_wire()) == J(obj)
    # A Malformed survives the round trip unchanged (to_wire gives back what was received).
    assert parse_event(ev.to_wire()) == ev


def test_generic_clause_is_mapped_for_activity_but_not_for_other_events():
    assert parse_event(without(snap(), "messageId")).clause == "ACT-MALFORMED-FATAL"
    assert parse_event(snap(content="x")).clause == "ACT-MALFORMED-FATAL"
    assert parse_event(without(delta(), "messageId")).clause == "ACT-MALFORMED-FATAL"
    # Other events keep the generic processing clause.
    ev = parse_event({"type": "TEXT_MESSAGE_END"})
    assert_malformed(ev, name="TEXT_MESSAGE_END", path="$.messageId", clause="PRC-MALFORMED-FATAL")
    ev = parse_event({"type": "MESSAGES_SNAPSHOT", "messages": "x"})
    assert_malformed(ev, name="MESSAGES_SNAPSHOT", path="$.messages",
                     clause="PRC-MALFORMED-FATAL")
    ev = parse_event({"type": "RUN_STARTED", "threadId": "t", "runId": "r", "timestamp": 1.5})
    assert_malformed(ev, name="RUN_STARTED", path="$.timestamp", clause="PRC-MALFORMED-FATAL")


def test_specific_clauses_are_not_remapped_for_activity():
    # SNP-MALFORMED-OP, SCH-JSON-POINTER and EVM-ABSENT-NOT-NULL keep their own clause ids.
    assert parse_event(delta("x")).clause == "SNP-MALFORMED-OP"
    assert parse_event(delta([{"op": "remove", "path": "a"}])).clause == "SCH-JSON-POINTER"
    assert parse_event(snap(replace=None)).clause == "EVM-ABSENT-NOT-NULL"


# --- nulls for optional members (EVM-ABSENT-NOT-NULL, Q21 shim) ----------------------------------

def test_replace_null_is_malformed_with_shim_without_replace():
    obj = snap(replace=None)
    ev = assert_malformed(parse_event(obj), name="ACTIVITY_SNAPSHOT", path="$.replace",
                          clause="EVM-ABSENT-NOT-NULL")
    assert type(ev.shim) is ActivitySnapshot
    assert ev.shim == parse_event(without(obj, "replace"))
    assert ev.shim.replace is None and ev.shim.replacing is True
    assert "replace" not in ev.shim.to_wire()
    assert ev.wire == J(obj)


@pytest.mark.parametrize("member", ["subagentRunId", "metadata", "rawEvent", "timestamp"])
def test_optional_null_on_activity_snapshot_is_shimmable(member):
    obj = snap(**{member: None})
    ev = assert_malformed(parse_event(obj), name="ACTIVITY_SNAPSHOT", path=f"$.{member}",
                          clause="EVM-ABSENT-NOT-NULL")
    assert ev.shim == parse_event(snap())
    assert type(ev.shim) is ActivitySnapshot


@pytest.mark.parametrize("member", ["subagentRunId", "metadata", "rawEvent"])
def test_optional_null_on_activity_delta_is_shimmable(member):
    obj = delta(**{member: None})
    ev = assert_malformed(parse_event(obj), name="ACTIVITY_DELTA", path=f"$.{member}",
                          clause="EVM-ABSENT-NOT-NULL")
    assert ev.shim == parse_event(delta())
    assert type(ev.shim) is ActivityDelta


def test_raw_event_null_on_other_event():
    obj = {"type": "RUN_ERROR", "message": "x", "rawEvent": None}
    ev = assert_malformed(parse_event(obj), name="RUN_ERROR", path="$.rawEvent",
                          clause="EVM-ABSENT-NOT-NULL")
    assert ev.shim == RunError(message="x")


def test_shim_keeps_strip_notices_of_the_repaired_event():
    ev = parse_event(snap(replace=None, extra=1))
    assert type(ev) is Malformed and ev.path == "$.replace"
    assert type(ev.shim) is ActivitySnapshot
    assert ev.shim.notices == ("$.extra",)


def test_no_shim_when_repaired_event_still_malformed():
    ev = parse_event(snap(replace=None, content="x"))
    assert type(ev) is Malformed
    assert ev.shim is None


def test_non_shimmable_optional_null():
    # ``role`` is not among the whole-field nulls the shim repairs.
    ev = parse_event({"type": "TEXT_MESSAGE_START", "messageId": "m", "role": None})
    assert_malformed(ev, name="TEXT_MESSAGE_START", path="$.role", clause="EVM-ABSENT-NOT-NULL")
    assert ev.shim is None


def test_null_inside_messages_snapshot_message_is_not_shimmed():
    obj = {"type": "MESSAGES_SNAPSHOT",
           "messages": [{"id": "u", "role": "user", "content": "x", "subagentRunId": None}]}
    ev = assert_malformed(parse_event(obj), name="MESSAGES_SNAPSHOT",
                          path="$.messages[0].subagentRunId", clause="EVM-ABSENT-NOT-NULL")
    assert ev.shim is None


def test_malformed_with_shim_round_trips():
    ev = parse_event(snap(replace=None))
    assert parse_event(ev.to_wire()) == ev


# --- patches (SNP-MALFORMED-OP, SCH-JSON-POINTER) ------------------------------------------------

OK_OP = {"op": "add", "path": "/a", "value": 1}

MALFORMED_PATCH: list[tuple[str, object, str, str]] = [
    ("patch object", {"op": "add"}, "$.patch", "SNP-MALFORMED-OP"),
    ("patch string", "[]", "$.patch", "SNP-MALFORMED-OP"),
    ("patch null", None, "$.patch", "SNP-MALFORMED-OP"),
    ("op element not object", [OK_OP, "add"], "$.patch[1]", "SNP-MALFORMED-OP"),
    ("op element null", [None], "$.patch[0]", "SNP-MALFORMED-OP"),
    ("op missing op", [{"path": "/a", "value": 1}], "$.patch[0].op", "SNP-MALFORMED-OP"),
    ("op not a string", [{"op": 1, "path": "/a"}], "$.patch[0].op", "SNP-MALFORMED-OP"),
    ("op null", [{"op": None, "path": "/a"}], "$.patch[0].op", "SNP-MALFORMED-OP"),
    ("op missing path", [{"op": "remove"}], "$.patch[0].path", "SNP-MALFORMED-OP"),
    ("add missing path", [{"op": "add", "value": 1}], "$.patch[0].path", "SNP-MALFORMED-OP"),
    ("path number", [{"op": "remove", "path": 3}], "$.patch[0].path", "SNP-MALFORMED-OP"),
    ("path null", [{"op": "remove", "path": None}], "$.patch[0].path", "SNP-MALFORMED-OP"),
    ("add without value", [{"op": "add", "path": "/a"}], "$.patch[0].value", "SNP-MALFORMED-OP"),
    ("replace without value", [OK_OP, {"op": "replace", "path": "/a"}], "$.patch[1].value",
     "SNP-MALFORMED-OP"),
    ("test without value", [{"op": "test", "path": "/a"}], "$.patch[0].value",
     "SNP-MALFORMED-OP"),
    ("move without from", [{"op": "move", "path": "/a"}], "$.patch[0].from", "SNP-MALFORMED-OP"),
    ("copy without from", [{"op": "copy", "path": "/a"}], "$.patch[0].from", "SNP-MALFORMED-OP"),
    ("from number", [{"op": "move", "from": 1, "path": "/a"}], "$.patch[0].from",
     "SNP-MALFORMED-OP"),
    ("path a/b", [OK_OP, {"op": "add", "path": "a/b", "value": 1}], "$.patch[1].path",
     "SCH-JSON-POINTER"),
    ("path /a~2", [OK_OP, {"op": "remove", "path": "/a~2"}], "$.patch[1].path",
     "SCH-JSON-POINTER"),
    ("path /a~", [{"op": "remove", "path": "/a~"}], "$.patch[0].path", "SCH-JSON-POINTER"),
    ("path a", [{"op": "remove", "path": "a"}], "$.patch[0].path", "SCH-JSON-POINTER"),
    ("path #/a", [{"op": "remove", "path": "#/a"}], "$.patch[0].path", "SCH-JSON-POINTER"),
    ("from not pointer", [{"op": "copy", "from": "x", "path": "/a"}], "$.patch[0].from",
     "SCH-JSON-POINTER"),
]


@pytest.mark.parametrize("label,patch,path,clause", MALFORMED_PATCH,
                         ids=[m[0] for m in MALFORMED_PATCH])
def test_malformed_activity_patch(label, patch, path, clause):
    obj = delta(patch)
    assert_malformed(parse_event(obj), name="ACTIVITY_DELTA", path=path, clause=clause)


@pytest.mark.parametrize("label,patch,path,clause", MALFORMED_PATCH,
                         ids=[m[0] for m in MALFORMED_PATCH])
def test_malformed_state_patch(label, patch, path, clause):
    obj = {"type": "STATE_DELTA", "delta": patch}
    assert_malformed(parse_event(obj), name="STATE_DELTA", path=path.replace("$.patch", "$.delta"),
                     clause=clause)


def test_first_malformed_op_is_reported():
    ev = parse_event(delta([{"op": "remove", "path": "x"}, {"op": "add", "path": "/a"}]))
    assert ev.path == "$.patch[0].path" and ev.clause == "SCH-JSON-POINTER"


def test_newline_only_path_is_not_a_json_pointer():
    ev = parse_event(delta([{"op": "remove", "path": "\n"}]))
    assert_malformed(ev, name="ACTIVITY_DELTA", path="$.patch[0].path", clause="SCH-JSON-POINTER")


def test_json_pointer_regex_rejects_lone_newline():
    assert JSON_POINTER.fullmatch("\n") is None  # sanity: the pattern itself is right
    assert not JSON_POINTER.match("\n")


def test_open_patch_operations_are_kept_whole():
    op = {"op": "remove", "path": "/a", "value": "leftover", "x-vendor": {"k": [1, None]}}
    obj = delta([op])
    ev = parse_event(obj)
    assert type(ev) is ActivityDelta
    assert ev.notices == ()
    assert ev.patch[0].op == "remove" and ev.patch[0].recognised
    assert ev.patch[0].to_wire() == op
    assert ev.to_wire()["patch"] == [op]
    assert J(ev.to_wire()) == J(obj)


def test_from_on_add_is_kept_and_not_checked():
    op = {"op": "add", "path": "/a", "value": 1, "from": "not a pointer"}
    ev = parse_event(delta([op]))
    assert type(ev) is ActivityDelta
    assert ev.patch[0].to_wire() == op


def test_unknown_op_is_kept_unrecognised_not_malformed():
    ops = [{"op": "increment", "path": "/n", "by": 2}, OK_OP]
    ev = parse_event(delta(ops))
    assert type(ev) is ActivityDelta
    assert ev.notices == ()
    assert [op.op for op in ev.patch] == ["increment", "add"]
    assert ev.patch[0].recognised is False
    assert ev.patch[1].recognised is True
    assert ev.patch[0].to_wire() == ops[0]
    assert ev.patch[0].path == "/n"


def test_unknown_op_members_are_not_validated():
    ev = parse_event(delta([{"op": "increment"}, {"op": "frobnicate", "path": "not/ptr"}]))
    assert type(ev) is ActivityDelta
    assert ev.patch[0].path is None
    assert [op.recognised for op in ev.patch] == [False, False]


def test_unknown_op_in_state_delta():
    ev = parse_event({"type": "STATE_DELTA", "delta": [{"op": "increment", "path": "/n"}]})
    assert type(ev) is StateDelta and ev.delta[0].recognised is False


# --- undescribed members on closed objects (PRC-DROP-STRIP, N87) --------------------------------

def test_activity_snapshot_strips_extra_member():
    ev = parse_event(snap(extra=1))
    assert type(ev) is ActivitySnapshot
    assert ev.notices == ("$.extra",)
    assert "extra" not in ev.to_wire()
    assert ev.without_notices() == parse_event(snap())
    assert J(ev.to_wire()) == J(snap())


def test_activity_delta_strips_extra_members_including_replace_and_content():
    # ACTIVITY_DELTA has no replace and no content (N104): both are undescribed there.
    ev = parse_event(delta(replace=None, content={"a": 1}, extra=[1]))
    assert type(ev) is ActivityDelta
    assert sorted(ev.notices) == ["$.content", "$.extra", "$.replace"]
    assert J(ev.to_wire()) == J(delta())


def test_messages_snapshot_strips_extra_and_subagent_run_id():
    # MessagesSnapshotEvent carries no attribution (N107).
    obj = {"type": "MESSAGES_SNAPSHOT", "messages": [], "subagentRunId": "s", "extra": 1}
    ev = parse_event(obj)
    assert type(ev) is MessagesSnapshot
    assert sorted(ev.notices) == ["$.extra", "$.subagentRunId"]
    assert ev.to_wire() == {"type": "MESSAGES_SNAPSHOT", "messages": []}


def test_message_strips_undescribed_members():
    msgs = [{**USER_MSG, "bogus": 1},
            {**ACTIVITY_MSG, "name": "n", "encryptedValue": "e"},  # N105: no name/encryptedValue
            {**TOOL_MSG, "name": "x"}]
    ev = parse_event({"type": "MESSAGES_SNAPSHOT", "messages": msgs})
    assert type(ev) is MessagesSnapshot
    assert ev.notices == ("$.messages[0].bogus", "$.messages[1].name",
                          "$.messages[1].encryptedValue", "$.messages[2].name")
    assert J(ev.messages[0].to_wire()) == J(USER_MSG)
    assert J(ev.messages[1].to_wire()) == J(ACTIVITY_MSG)
    assert J(ev.messages[2].to_wire()) == J(TOOL_MSG)


def test_strip_notices_with_extra_at_both_levels():
    ev = parse_event({"type": "MESSAGES_SNAPSHOT", "top": 0,
                      "messages": [{**USER_MSG, "bogus": 1}]})
    assert set(ev.notices) == {"$.top", "$.messages[0].bogus"}


def test_open_objects_keep_unknown_members():
    content = {"anything": {"goes": None}}
    metadata = {"ag-ui": {"x": 1}, "vendor.y": None}
    ev = parse_event(snap(content=content, metadata=metadata))
    assert ev.notices == ()
    assert json.loads(ev.content) == content
    assert json.loads(ev.metadata) == metadata
    msg = {**ACTIVITY_MSG, "content": content, "metadata": metadata}
    ev = parse_event({"type": "MESSAGES_SNAPSHOT", "messages": [msg]})
    assert ev.notices == ()
    assert json.loads(ev.messages[0].content) == content
    assert json.loads(ev.messages[0].metadata) == metadata


# --- malformed messages inside MESSAGES_SNAPSHOT --------------------------------------------------

MALFORMED_MESSAGES: list[tuple[str, object, str]] = [
    ("activity content null", {**ACTIVITY_MSG, "content": None}, "$.messages[0].content"),
    ("activity content string", {**ACTIVITY_MSG, "content": "s"}, "$.messages[0].content"),
    ("activity missing content", without(ACTIVITY_MSG, "content"), "$.messages[0].content"),
    ("activity missing activityType", without(ACTIVITY_MSG, "activityType"),
     "$.messages[0].activityType"),
    ("missing id", without(USER_MSG, "id"), "$.messages[0].id"),
    ("id number", {**USER_MSG, "id": 1}, "$.messages[0].id"),
    ("missing role", without(USER_MSG, "role"), "$.messages[0].role"),
    ("role number", {**USER_MSG, "role": 5}, "$.messages[0].role"),
    ("user content object", {**USER_MSG, "content": {}}, "$.messages[0].content"),
    ("tool missing toolCallId", without(TOOL_MSG, "toolCallId"), "$.messages[0].toolCallId"),
    ("assistant toolCalls object", {**ASSISTANT_MSG, "toolCalls": {}},
     "$.messages[0].toolCalls"),
    ("metadata array", {**USER_MSG, "metadata": []}, "$.messages[0].metadata"),
    ("message not object", "hello", "$.messages[0]"),
]


@pytest.mark.parametrize("label,msg,path", MALFORMED_MESSAGES,
                         ids=[m[0] for m in MALFORMED_MESSAGES])
def test_malformed_message_in_messages_snapshot(label, msg, path):
    ev = parse_event({"type": "MESSAGES_SNAPSHOT", "messages": [msg]})
    assert_malformed(ev, name="MESSAGES_SNAPSHOT", path=path, clause="PRC-MALFORMED-FATAL")


def test_malformed_message_index_in_path():
    ev = parse_event({"type": "MESSAGES_SNAPSHOT",
                      "messages": [USER_MSG, TOOL_MSG, {**ACTIVITY_MSG, "content": None}]})
    assert_malformed(ev, name="MESSAGES_SNAPSHOT", path="$.messages[2].content",
                     clause="PRC-MALFORMED-FATAL")


def test_optional_null_in_message_is_absent_not_null():
    ev = parse_event({"type": "MESSAGES_SNAPSHOT",
                      "messages": [{**ACTIVITY_MSG, "metadata": None}]})
    assert_malformed(ev, name="MESSAGES_SNAPSHOT", path="$.messages[0].metadata",
                     clause="EVM-ABSENT-NOT-NULL")


# --- unknown roles and types (PRC-STRIP-POSITION, list rule) -------------------------------------

def test_unknown_role_message_is_dropped_with_notice():
    ev = parse_event({"type": "MESSAGES_SNAPSHOT",
                      "messages": [USER_MSG, {"id": "x", "role": "robot", "content": "beep"},
                                   ACTIVITY_MSG]})
    assert type(ev) is MessagesSnapshot
    assert [m.id for m in ev.messages] == ["u1", "act1"]
    assert len(ev.notices) == 1
    assert ev.notices[0].startswith("$.messages[1]")
    assert "robot" in ev.notices[0]
    assert [m["id"] for m in ev.to_wire()["messages"]] == ["u1", "act1"]


def test_unknown_role_message_is_dropped_even_if_otherwise_malformed():
    ev = parse_event({"type": "MESSAGES_SNAPSHOT", "messages": [{"role": "robot"}]})
    assert type(ev) is MessagesSnapshot and ev.messages == ()
    assert ev.notices[0].startswith("$.messages[0]")


@pytest.mark.parametrize("role", ["robot", "activity", "tool", "reasoning"])
def test_text_message_start_with_non_text_role_strips_the_role_not_the_event(role):
    # role sits in an optional position: the unrecognised value is stripped, the event stays
    # (PRC-STRIP-POSITION), with the default role and one notice
    obj = {"type": "TEXT_MESSAGE_START", "messageId": "m", "role": role}
    ev = parse_event(obj)
    assert type(ev) is TextMessageStart
    assert ev.message_id == "m" and ev.role == "assistant"
    assert ev.notices == (f'$.role (role "{role}" unrecognised)',)
    assert ev.to_wire() == {"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "assistant"}
    assert parse_event(ev.to_wire()) == ev.without_notices()


@pytest.mark.parametrize("name", ["FOO", "activity_snapshot", "ACTIVITY", ""])
def test_unknown_event_type_is_unrecognised(name):
    obj = {"type": name, "messageId": 1, "content": None}
    ev = parse_event(obj)
    assert type(ev) is Unrecognised
    assert ev.name == name and ev.type_name == name
    assert ev.notices == ()
    assert ev.to_wire() == obj
    assert parse_event(ev.to_wire()) == ev


@pytest.mark.parametrize("name", sorted(KNOWN_PASSTHROUGH))
def test_known_uninterpreted_types_pass_through(name):
    obj = {"type": name, "whatever": [1, None], "timestamp": 1.5}
    ev = parse_event(obj)
    assert type(ev) is Passthrough
    assert ev.name == name and ev.type_name == name
    # Not checked: members are held verbatim, not interpreted.
    assert ev.timestamp is None and ev.notices == ()
    assert ev.to_wire() == obj
    assert parse_event(ev.to_wire()) == ev


def test_passthrough_set_contains_the_brief_examples():
    for name in ("CUSTOM", "RAW", "REASONING_START",
                 "REASONING_MESSAGE_START", "REASONING_MESSAGE_CONTENT", "REASONING_END"):
        assert name in KNOWN_PASSTHROUGH
    # steps are typed since the consumer tracks them (LIF-STEP-REJECT)
    assert not {"STEP_STARTED", "STEP_FINISHED"} & KNOWN_PASSTHROUGH


@pytest.mark.parametrize("obj, path", [
    ({"type": "STEP_STARTED"}, "$.stepName"),
    ({"type": "STEP_FINISHED", "stepName": 3}, "$.stepName"),
    ({"type": "STEP_STARTED", "stepName": "s", "subagentRunId": 1}, "$.subagentRunId"),
])
def test_a_step_event_with_a_bad_member_is_malformed(obj, path):
    ev = parse_event(obj)
    assert type(ev) is Malformed and ev.path == path and ev.clause == "PRC-MALFORMED-FATAL"


def test_missing_type_is_malformed():
    ev = parse_event({"messageId": "m"})
    assert_malformed(ev, name="?", path="$.type", clause="PRC-MALFORMED-FATAL")
    assert ev.type_name == "?"
    assert ev.to_wire() == {"messageId": "m"}


@pytest.mark.parametrize("bad", [None, 5, ["ACTIVITY_SNAPSHOT"], {"t": 1}])
def test_non_string_type_is_malformed(bad):
    ev = parse_event({"type": bad})
    assert_malformed(ev, name="?", path="$.type", clause="PRC-MALFORMED-FATAL")


@pytest.mark.parametrize("obj", [None, 1, "ACTIVITY_SNAPSHOT", [snap()], True])
def test_parse_event_non_object_raises_type_error(obj):
    with pytest.raises(TypeError):
        parse_event(obj)


def test_parse_events_names_index_of_non_object():
    with pytest.raises(TraceFormatError) as info:
        parse_events([snap(), delta(), 7])
    assert info.value.event_index == 2


def test_parse_events_in_order():
    evs = parse_events([snap(), delta(), {"type": "X"}])
    assert [type(e) for e in evs] == [ActivitySnapshot, ActivityDelta, Unrecognised]


def test_events_are_hashable_and_compare_by_json_value():
    a = parse_event(snap(content={"a": 1, "b": 2.0}))
    b = parse_event(snap(content={"b": 2, "a": 1.0}))
    assert a == b and hash(a) == hash(b)
    c = parse_event(snap(content={"a": True, "b": 2}))
    assert a != c  # 1 and true differ
    m = parse_event(snap(replace=None))
    assert hash(m) == hash(parse_event(snap(replace=None)))


# --- trace text ---------------------------------------------------------------------------------

RS = {"type": "RUN_STARTED", "threadId": "t", "runId": "r"}
RF = {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"}


def test_trace_json_array_single_line():
    text = json.dumps([RS, snap(), RF])
    pt = parse_trace_text(text, "a.json")
    assert type(pt) is ParsedTrace
    assert [type(e) for e in pt.events] == [RunStarted, ActivitySnapshot, RunFinished]
    assert pt.lines == (1, 1, 1)
    assert pt.file == "a.json"
    assert pt.meta == {}


def test_trace_json_array_multiline_lines():
    text = (
        "\n"                                    # 1
        "[\n"                                   # 2
        '  {"type": "RUN_STARTED",\n'           # 3
        '   "threadId": "t",\n'                 # 4
        '   "runId": "r"},\n'                   # 5
        "\n"                                    # 6
        '  {"type": "ACTIVITY_SNAPSHOT", "messageId": "m1", "activityType": "PLAN",\n'  # 7
        '   "content": {\n'                     # 8
        '     "steps": []\n'                    # 9
        "   }\n"                                # 10
        "  }, " + json.dumps(RF) + "\n"         # 11
        "]\n"                                   # 12
    )
    pt = parse_trace_text(text)
    assert [type(e) for e in pt.events] == [RunStarted, ActivitySnapshot, RunFinished]
    assert pt.lines == (3, 7, 11)
    assert pt.line_of(0) == 3 and pt.line_of(1) == 7 and pt.line_of(2) == 11
    assert pt.line_of(3) is None and pt.line_of(-1) is None
    assert pt.file == "<input>"


def test_trace_json_array_pretty_printed():
    events = [RS, snap(), delta(), RF]
    text = json.dumps(events, indent=2)
    pt = parse_trace_text(text)
    assert len(pt.lines) == 4
    starts = [i + 1 for i, line in enumerate(text.split("\n")) if line == "  {"]
    assert list(pt.lines) == starts
    assert [e.to_wire() for e in pt.events] == [parse_event(o).to_wire() for o in events]


def test_trace_json_lines_with_blank_lines():
    text = ("\n" + json.dumps(RS) + "\n\n   \n" + json.dumps(snap()) + "\n" + json.dumps(delta())
            + "\n\n" + json.dumps(RF) + "\n\n")
    pt = parse_trace_text(text)
    assert [type(e) for e in pt.events] == [RunStarted, ActivitySnapshot, ActivityDelta,
                                             RunFinished]
    assert pt.lines == (2, 5, 6, 8)
    assert pt.meta == {}


def test_trace_json_lines_crlf():
    text = json.dumps(RS) + "\r\n" + json.dumps(snap()) + "\r\n"
    pt = parse_trace_text(text)
    assert [type(e) for e in pt.events] == [RunStarted, ActivitySnapshot]
    assert pt.lines == (1, 2)


def test_trace_single_event_object():
    pt = parse_trace_text("\n\n" + json.dumps(snap()))
    assert [type(e) for e in pt.events] == [ActivitySnapshot]
    assert pt.lines == (3,)


def test_trace_object_with_events_and_meta():
    text = (
        "{\n"                                   # 1
        '  "id": "case-1",\n'                   # 2
        '  "expect": {"verdict": "fail"},\n'    # 3
        '  "events": [\n'                       # 4
        "    " + json.dumps(RS) + ",\n"         # 5
        "\n"                                    # 6
        "    " + json.dumps(snap()) + "\n"      # 7
        "  ],\n"                                # 8
        '  "note": null\n'                      # 9
        "}\n"
    )
    pt = parse_trace_text(text, "case.json")
    assert [type(e) for e in pt.events] == [RunStarted, ActivitySnapshot]
    assert pt.lines == (5, 7)
    assert pt.meta == {"id": "case-1", "expect": {"verdict": "fail"}, "note": None}
    assert pt.file == "case.json"


def test_trace_object_with_nested_events_key_in_meta():
    text = ('{"expect": {"events": []},\n'
            ' "events": [\n'
            "  " + json.dumps(RS) + ",\n"
            "  " + json.dumps(RF) + "\n"
            "]}")
    pt = parse_trace_text(text)
    assert len(pt.events) == 2
    assert pt.lines == (3, 4)


def test_trace_events_are_parsed_with_processing_rules():
    pt = parse_trace_text("\n".join(json.dumps(o) for o in
                                    [snap(extra=1), {"type": "NOPE"}, snap(content=None),
                                     {"type": "STEP_STARTED", "stepName": "s"}]))
    assert [type(e) for e in pt.events] == [ActivitySnapshot, Unrecognised, Malformed,
                                             StepStarted]
    assert pt.events[0].notices == ("$.extra",)
    assert pt.events[2].path == "$.content"


@pytest.mark.parametrize("text", ["", "   ", "\n\n", " \t\r\n "])
def test_trace_empty_or_whitespace_is_an_error(text):
    with pytest.raises(TraceFormatError) as info:
        parse_trace_text(text, "e.json")
    assert info.value.file == "e.json"
    assert "empty" in info.value.reason
    assert str(info.value).startswith("e.json")


@pytest.mark.parametrize("text", ["[]", '{"events": []}', "[ \n ]"])
def test_trace_without_events_is_an_error(text):
    with pytest.raises(TraceFormatError) as info:
        parse_trace_text(text)
    assert "no events" in info.value.reason


def test_trace_invalid_json_array_gives_line_and_column():
    text = '[\n  {"type": "RUN_STARTED",\n   "threadId": }\n]'
    with pytest.raises(TraceFormatError) as info:
        parse_trace_text(text, "bad.json")
    err = info.value
    assert err.line == 3
    assert err.column == 16
    assert err.file == "bad.json"
    assert str(err).startswith("bad.json:3:16:")
    assert "not valid JSON" in str(err)


def test_trace_invalid_json_lines_gives_line_column_and_index():
    text = json.dumps(RS) + "\n\n" + '{"type": "RUN_FINISHED", oops}\n' + json.dumps(RF)
    with pytest.raises(TraceFormatError) as info:
        parse_trace_text(text, "t.jsonl")
    err = info.value
    assert err.line == 3
    assert err.column == 26  # the "o" of oops
    assert err.event_index == 1
    assert str(err).startswith("t.jsonl:3:26: event 1:")


def test_trace_invalid_first_line_of_json_lines():
    with pytest.raises(TraceFormatError) as info:
        parse_trace_text('{"type": }\n' + json.dumps(RS))
    assert info.value.line == 1 and info.value.column == 10


def test_trace_trailing_garbage_after_array():
    with pytest.raises(TraceFormatError) as info:
        parse_trace_text(json.dumps([RS]) + "\n]")
    assert info.value.line == 2 and info.value.column == 1


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity"])
def test_trace_nan_literal_in_array_is_an_error(literal):
    text = '[{"type": "RUN_ERROR", "message": "x",\n "timestamp": ' + literal + "}]"
    with pytest.raises(TraceFormatError) as info:
        parse_trace_text(text)
    assert "not valid JSON" in info.value.reason
    assert literal in info.value.reason


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity"])
def test_trace_nan_literal_in_json_lines_is_an_error(literal):
    text = json.dumps(RS) + "\n" + '{"type": "STATE_SNAPSHOT", "snapshot": ' + literal + "}\n"
    with pytest.raises(TraceFormatError) as info:
        parse_trace_text(text)
    assert info.value.line == 2
    assert info.value.event_index == 1
    assert literal in info.value.reason


def test_trace_nan_inside_open_content_is_an_error():
    with pytest.raises(TraceFormatError):
        parse_trace_text(json.dumps([snap()]).replace("false", "NaN"))


def test_trace_nan_literal_in_array_names_its_line():
    text = '[{"type": "RUN_ERROR", "message": "x",\n "timestamp": NaN}]'
    with pytest.raises(TraceFormatError) as info:
        parse_trace_text(text)
    assert info.value.line == 2


def test_trace_array_element_not_object():
    text = "[\n" + json.dumps(RS) + ",\n\n  42,\n" + json.dumps(RF) + "\n]"
    with pytest.raises(TraceFormatError) as info:
        parse_trace_text(text, "x.json")
    err = info.value
    assert err.event_index == 1
    assert err.line == 4
    assert err.file == "x.json"
    assert "event 1" in str(err)


def test_trace_json_lines_element_not_object():
    text = json.dumps(RS) + "\n\n[1, 2]\n"
    with pytest.raises(TraceFormatError) as info:
        parse_trace_text(text)
    assert info.value.event_index == 1
    assert info.value.line == 3


def test_trace_wrapped_events_element_not_object():
    text = '{"id": 1,\n "events": [\n' + json.dumps(RS) + ',\n "x"\n]}'
    with pytest.raises(TraceFormatError) as info:
        parse_trace_text(text)
    assert info.value.event_index == 1
    assert info.value.line == 4


@pytest.mark.parametrize("events", ['{}', '"e"', "3", "null"])
def test_trace_events_member_not_an_array(events):
    with pytest.raises(TraceFormatError) as info:
        parse_trace_text('{"id": 1, "events": ' + events + "}", "c.json")
    assert "events" in info.value.reason
    assert info.value.file == "c.json"


@pytest.mark.parametrize("text", ["42", '"a string"', "true", "null", "-1.5"])
def test_trace_top_level_scalar_is_an_error(text):
    with pytest.raises(TraceFormatError) as info:
        parse_trace_text(text)
    assert info.value.event_index == 0
    assert info.value.line == 1


# A document that is not a trace is refused, not read as one malformed event (regression: a lone
# {"foo": []} was replayed as a trace of one event missing its type).

NOT_A_TRACE = ("$.type: required member is missing", "no event of the file has a type",
               "not a trace")


def test_trace_object_without_type_is_not_a_trace():
    with pytest.raises(TraceFormatError) as info:
        parse_trace_text('\n{"foo": []}\n', "foo.json")
    err = info.value
    assert (err.file, err.line, err.event_index) == ("foo.json", 2, 0)
    assert err.reason.startswith('$.type: required member is missing (members "foo")')
    assert str(err).startswith("foo.json:2: event 0: $.type: required member is missing")
    assert 'or an object with an "events" array' in str(err)


@pytest.mark.parametrize("text, line, members", [
    ("{}", 1, "(no members)"),
    ('{"name": "case", "trace": [' + json.dumps(RS) + "]}", 1, '(members "name", "trace")'),
    ('[\n  {"a": 1},\n  {"b": 2}\n]', 2, '(members "a")'),
    ('{"a": 1}\n{"b": 2}\n', 1, '(members "a")'),
    ('{"id": "c",\n "events": [\n  {"messageId": "m"}\n]}', 3, '(members "messageId")'),
    ('{"a": 1, "b": 2, "c": 3, "d": 4, "e": 5}', 1, '(members "a", "b", "c", "d", ...)'),
])
def test_trace_with_no_typed_event_is_not_a_trace(text, line, members):
    with pytest.raises(TraceFormatError) as info:
        parse_trace_text(text, "x.json")
    err = info.value
    assert (err.file, err.line, err.event_index) == ("x.json", line, 0)
    assert members in err.reason
    assert all(piece in err.reason for piece in NOT_A_TRACE), err.reason


def test_trace_event_without_type_among_events_is_malformed_not_refused():
    pt = parse_trace_text(json.dumps(RS) + '\n{"foo": []}\n')
    assert [type(e) for e in pt.events] == [RunStarted, Malformed]
    assert pt.events[1].path == "$.type" and pt.events[1].name == "?"
    assert pt.lines == (1, 2)


@pytest.mark.parametrize("text, line, index", [
    # a case set (one field case a line), read where one trace is expected
    ('{"id": "c1", "events": [' + json.dumps(RS) + ']}\n'
     '{"id": "c2", "events": [' + json.dumps(RF) + ']}\n', 1, 0),
    # a case nested where an event belongs
    ("[\n" + json.dumps(RS) + ',\n{"id": "c", "events": []}\n]', 3, 1),
    ('{"events": [' + json.dumps(RS) + ',\n {"events": [' + json.dumps(RF) + "]}]}", 2, 1),
])
def test_trace_case_where_an_event_belongs_is_an_error(text, line, index):
    with pytest.raises(TraceFormatError) as info:
        parse_trace_text(text, "cases.jsonl")
    err = info.value
    assert (err.file, err.line, err.event_index) == ("cases.jsonl", line, index)
    assert err.reason.startswith('$.type: required member is missing, and the object holds '
                                 '"events": it is a case or finding, not an event')
    assert "case set" in err.reason


def test_trace_duplicate_member_names_the_event_path_and_position():
    text = json.dumps(RS) + '\n{"type": "RUN_ERROR", "message": "a",\n "message": "b"}'
    with pytest.raises(TraceFormatError) as info:
        parse_trace_text("[" + text.replace("\n{", ",\n{", 1) + "]", "d.json")
    err = info.value
    assert (err.line, err.column) == (3, 2)  # the second "message"
    assert err.reason == 'not valid JSON: duplicate member "message" in $[1]'


def test_loads_json_duplicate_member_path_and_strictness():
    with pytest.raises(json.JSONDecodeError) as info:
        loads_json('{"patches": {"set-n": [],\n  "set-n": []}}')
    assert info.value.msg == 'duplicate member "set-n" in $.patches'
    assert (info.value.lineno, info.value.colno) == (2, 3)
    with pytest.raises(json.JSONDecodeError) as info:
        loads_json('{"a b": [{"k": 1, "k": 2}]}')
    assert info.value.msg == 'duplicate member "k" in $["a b"][0]'
    with pytest.raises(json.JSONDecodeError, match="NaN is not a JSON value"):
        loads_json("[NaN]")
    assert loads_json('{"a": [1, {"b": null}]}') == {"a": [1, {"b": None}]}


def test_trace_error_is_a_value_error():
    assert issubclass(TraceFormatError, ValueError)
    err = TraceFormatError("r", file="f", line=2, column=3, event_index=4)
    assert str(err) == "f:2:3: event 4: r"
    assert (err.reason, err.file, err.line, err.column, err.event_index) == ("r", "f", 2, 3, 4)
    assert str(TraceFormatError("r")) == "<input>: r"


# --- files --------------------------------------------------------------------------------------

def test_load_trace_reads_file(tmp_path):
    p = tmp_path / "trace.jsonl"
    p.write_text(json.dumps(RS) + "\n" + json.dumps(snap()) + "\n", encoding="utf-8")
    pt = load_trace(str(p))
    assert [type(e) for e in pt.events] == [RunStarted, ActivitySnapshot]
    assert pt.file == str(p)
    assert pt.lines == (1, 2)


def test_load_trace_utf8_content(tmp_path):
    p = tmp_path / "u.json"
    p.write_text(json.dumps([snap(content={"t": "héllo €"})], ensure_ascii=False),
                 encoding="utf-8")
    pt = load_trace(str(p))
    assert json.loads(pt.events[0].content) == {"t": "héllo €"}


def test_load_trace_missing_file(tmp_path):
    p = tmp_path / "nope.json"
    with pytest.raises(TraceFormatError) as info:
        load_trace(str(p))
    assert info.value.file == str(p)
    assert "cannot read" in info.value.reason


def test_load_trace_directory(tmp_path):
    with pytest.raises(TraceFormatError) as info:
        load_trace(str(tmp_path))
    assert "cannot read" in info.value.reason


def test_load_trace_non_utf8(tmp_path):
    p = tmp_path / "latin1.json"
    prefix = b'[{"type": "RUN_ERROR", "message": "caf'
    p.write_bytes(prefix + b'\xe9"}]')
    with pytest.raises(TraceFormatError) as info:
        load_trace(str(p))
    assert info.value.file == str(p)
    assert "UTF-8" in info.value.reason
    assert f"byte {len(prefix)}" in info.value.reason


def test_load_trace_format_error_names_file(tmp_path):
    p = tmp_path / "bad.json"
    p.write_text("[1]", encoding="utf-8")
    with pytest.raises(TraceFormatError) as info:
        load_trace(str(p))
    assert info.value.file == str(p) and info.value.event_index == 0


# --- writing ------------------------------------------------------------------------------------

ALL_KINDS = [obj for obj, _ in WELL_FORMED] + [
    snap(content=None), snap(replace=None), delta([{"op": "add", "path": "a", "value": 1}]),
    {"messageId": "no type"}, {"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "robot"},
]


def test_dump_jsonl_round_trip():
    events = parse_events(ALL_KINDS)
    text = dump_jsonl(events)
    assert text.endswith("\n")
    assert text.count("\n") == len(events)
    pt = parse_trace_text(text)
    # writing gives the described members only: a stripped role is not written back
    assert pt.events == tuple(e.without_notices() for e in events)
    assert [e for e in events if e.notices] == [events[ALL_KINDS.index(
        {"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "robot"})]]
    assert pt.lines == tuple(range(1, len(events) + 1))


def test_dump_jsonl_drops_stripped_members():
    events = parse_events([snap(extra=1), delta(bogus=2)])
    back = parse_trace_text(dump_jsonl(events)).events
    assert back == tuple(e.without_notices() for e in events)
    assert all(e.notices == () for e in back)


def test_dump_jsonl_single_event_and_empty():
    assert dump_jsonl([]) == ""
    ev = parse_event(snap())
    line = dump_jsonl([ev])
    assert line == event_to_json(ev) + "\n"
    assert parse_trace_text(line).events == (ev,)


def test_event_to_json_is_compact_type_first_and_non_ascii():
    ev = parse_event(snap(content={"t": "é"}))
    s = event_to_json(ev)
    assert s.startswith('{"type":"ACTIVITY_SNAPSHOT",')
    assert " " not in s.replace('"t":"é"', "")
    assert "é" in s


def test_dump_jsonl_round_trip_with_ascii_line_controls():
    # \r, \x0b, \x0c, \x1c..\x1e are escaped by JSON, so they cannot split a line.
    events = parse_events([
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "a\r\x0b\x0c\x1c\x1d\x1eb"},
        {"type": "TEXT_MESSAGE_END", "messageId": "m"},
    ])
    assert parse_trace_text(dump_jsonl(events)).events == events


@pytest.mark.parametrize("sep", ["\u2028", "\u2029", "\x85"])
def test_dump_jsonl_round_trip_with_unicode_line_separators(sep):
    events = parse_events([
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": f"a{sep}b"},
        snap(content={"text": f"x{sep}y"}),
    ])
    assert parse_trace_text(dump_jsonl(events)).events == events


@pytest.mark.parametrize("token", ["1.5e-400", "-2E-999", "0.0001e-400"])
def test_loads_json_refuses_numbers_that_underflow(token):
    """A non-zero number below the smallest double would be read as 0 (a silent change of
    value); it is refused like one above the largest (issue 18)."""
    with pytest.raises(json.JSONDecodeError, match="out of range"):
        loads_json(f'{{"n": {token}}}')


@pytest.mark.parametrize("token, value", [("0.0", 0.0), ("0e5", 0.0), ("-0.0", 0.0),
                                          ("0.000e-3", 0.0), ("1e-300", 1e-300),
                                          ("4.9e-324", 5e-324)])
def test_loads_json_keeps_zeros_and_small_numbers(token, value):
    assert loads_json(f'[{token}]') == [value]


# --- the plain lane (parse_event builds the plain forms directly) --------------------------------

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import model.wire as wire_module  # noqa: E402

_HYPOTHESIS = dict(derandomize=True, deadline=None,
                   suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

_VALUES = st.one_of(st.text(max_size=3), st.integers(-3, 3),
                    st.integers(2 ** 53 - 2, 2 ** 53 + 1), st.booleans(), st.none(),
                    st.floats(allow_nan=False, allow_infinity=False, width=16),
                    st.just({}), st.just({"k": [1, 2.5]}), st.just([]), st.just(["a"]),
                    st.sampled_from(["assistant", "user", "tool", "developer", "system"]))
_MEMBER_NAMES = ["messageId", "delta", "subagentRunId", "toolCallId", "toolCallName",
                 "parentMessageId", "role", "name", "timestamp", "metadata", "rawEvent", "extra",
                 "threadId", "runId", "parentRunId", "protocolVersion", "message", "code",
                 "parentSubagentRunId", "outcome", "stepName", "content", "input", "replace",
                 "activityType", "result"]
_POINTERS = st.sampled_from(["", "/n", "/a/0", "/a/-", "/~0x/~1y", "/é", "n", "/~2", 5, None])
_PATCH_OPS = st.fixed_dictionaries(
    {"op": st.sampled_from(["add", "remove", "replace", "move", "copy", "test", "increment", 3])},
    optional={"path": _POINTERS, "from": _POINTERS, "value": _VALUES, "by": st.integers(0, 2)})
_PATCHES = st.one_of(st.lists(_PATCH_OPS, max_size=3), st.just({}), st.lists(st.integers(),
                                                                             max_size=1))


def _general(obj):
    return wire_module._parse_general(obj)


@settings(max_examples=2500, **_HYPOTHESIS)
@given(st.sampled_from(sorted(wire_module._PLAIN_LANES)),
       st.dictionaries(st.sampled_from(_MEMBER_NAMES), _VALUES, max_size=7))
def test_the_plain_lane_equals_the_general_path(kind, members):
    obj = {"type": kind, **members}
    assert parse_event(obj) == _general(obj)


@settings(max_examples=1500, **_HYPOTHESIS)
@given(st.sampled_from(["ACTIVITY_DELTA", "STATE_DELTA"]),
       st.fixed_dictionaries({}, optional={
           "messageId": st.one_of(st.text(max_size=2), _VALUES),
           "activityType": st.one_of(st.text(max_size=2), _VALUES),
           "subagentRunId": st.one_of(st.text(max_size=2), _VALUES),
           "timestamp": st.one_of(st.integers(-2 ** 54, 2 ** 54), _VALUES),
           "metadata": st.sampled_from([{}, None, {"k": 1}, []]), "replace": st.booleans()}),
       _PATCHES)
def test_the_plain_lane_equals_the_general_path_on_patches(kind, members, patch):
    obj = {"type": kind, **members, ("patch" if kind == "ACTIVITY_DELTA" else "delta"): patch}
    assert parse_event(obj) == _general(obj)


@settings(max_examples=600, **_HYPOTHESIS)
@given(st.fixed_dictionaries({"type": st.just("ACTIVITY_SNAPSHOT"), "messageId": st.text(max_size=2),
                              "activityType": st.text(max_size=2),
                              "content": st.dictionaries(st.text(max_size=2), _VALUES, max_size=3)},
                             optional={"replace": st.booleans(), "subagentRunId": st.text(max_size=2),
                                       "metadata": st.dictionaries(st.text(max_size=2), _VALUES,
                                                                   max_size=2),
                                       "timestamp": st.integers(-2 ** 54, 2 ** 54)}),
       st.sampled_from([None, "messageId", "content", "replace", "timestamp", "metadata", "x"]),
       _VALUES)
def test_plain_snapshots_take_the_lane_and_equal_the_general_path(obj, mutated, value):
    if mutated is not None:
        obj = {**obj, mutated: value}
    assert parse_event(obj) == _general(obj)


_PLAIN_FORMS = [
    {"type": "RUN_STARTED", "threadId": "t", "runId": "r", "parentRunId": "p",
     "protocolVersion": "1", "input": {"messages": []}},
    {"type": "RUN_FINISHED", "threadId": "t", "runId": "r", "timestamp": 7},
    {"type": "RUN_ERROR", "message": "x", "code": "c"},
    {"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "user", "name": "n"},
    {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "", "timestamp": 3},
    {"type": "TEXT_MESSAGE_END", "messageId": "m", "subagentRunId": "s"},
    {"type": "TOOL_CALL_START", "toolCallId": "c", "toolCallName": "f", "parentMessageId": "m",
     "subagentRunId": "s"},
    {"type": "TOOL_CALL_ARGS", "toolCallId": "c", "delta": '{"a":'},
    {"type": "TOOL_CALL_END", "toolCallId": "c"},
    {"type": "TOOL_CALL_RESULT", "messageId": "r", "toolCallId": "c", "content": "ok",
     "role": "tool"},
    {"type": "SUBAGENT_STARTED", "subagentRunId": "s", "name": "n", "parentSubagentRunId": "p"},
    {"type": "SUBAGENT_FINISHED", "subagentRunId": "s"},
    {"type": "SUBAGENT_ERROR", "subagentRunId": "s", "message": "m"},
    {"type": "STEP_STARTED", "stepName": "plan"},
    {"type": "STEP_FINISHED", "stepName": "plan", "subagentRunId": "s", "metadata": {"k": 1}},
    {"type": "STATE_DELTA", "delta": [{"op": "add", "path": "/a", "value": 1}]},
    {"type": "ACTIVITY_SNAPSHOT", "messageId": "a", "activityType": "P", "content": {"n": 1.0},
     "replace": False, "subagentRunId": "s", "metadata": {"m": [1]}},
    {"type": "ACTIVITY_DELTA", "messageId": "a", "activityType": "P",
     "patch": [{"op": "move", "from": "/a", "path": "/b"}, {"op": "increment", "by": 1}]},
]


def test_the_plain_forms_take_the_lane():
    # every lane type has a plain form the lane builds itself, equal to the general path's; a
    # member the lane does not take (undescribed, null, another type) goes to the general path
    assert sorted(o["type"] for o in _PLAIN_FORMS) == sorted(wire_module._PLAIN_LANES)
    for obj in _PLAIN_FORMS:
        built = wire_module._plain_event(obj)
        assert built is not None, obj
        assert built == _general(obj)
    for obj in ({"type": "RUN_STARTED", "threadId": "t", "runId": "r", "subagentRunId": "s"},
                {"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "tool"},
                {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "x", "rawEvent": {}},
                {"type": "TEXT_MESSAGE_END", "messageId": "m", "subagentRunId": None},
                {"type": "TEXT_MESSAGE_END", "messageId": "m", "timestamp": 1.0},
                {"type": "TEXT_MESSAGE_END", "messageId": "m", "timestamp": True},
                {"type": "TOOL_CALL_RESULT", "messageId": "r", "toolCallId": "c", "content": []},
                {"type": "ACTIVITY_DELTA", "messageId": "a", "activityType": "P",
                 "patch": [{"op": "add", "path": "x", "value": 1}]},
                {"type": "ACTIVITY_SNAPSHOT", "messageId": "a", "activityType": "P",
                 "content": {}, "extra": 1}):
        assert wire_module._plain_event(obj) is None, obj
        assert parse_event(obj) == _general(obj)
