"""Tests for the producer model (model.producer): conformant moves, adversarial moves, the
producer-side monitor (violations / check_trace) and the belief update (advance)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from model.events import (RunError, ActivityDelta, ActivitySnapshot, MessagesSnapshot, RunFinished,
                          RunStarted, StepFinished, StepStarted, TextMessageStart, ToolCallEnd,
                          ToolCallStart)
from model.json_values import freeze, thaw
from model.producer import (ADVERSARIAL_KINDS, DEFAULT_VOCABULARY, MALFORMED_KIND_CLAUSES,
                            ActivityBelief, Belief,
                            ProducerViolation, Vocabulary, adversarial_moves, advance, check_trace,
                            moves, violations)
from model.readings import DRAFT, PRESETS
from model.wire import parse_event, parse_events

from wirekit import RF, RS, delta, snap  # noqa: E402
CORPUS = Path(__file__).resolve().parents[1] / "counterexamples" / "corpus" / "field-cases.jsonl"






def belief_after(*wire) -> Belief:
    b = Belief()
    for e in parse_events(list(wire)):
        b = advance(b, e)
    return b


def clauses(belief: Belief, wire: dict, reading=DRAFT) -> list[str]:
    return [v.clause for v in violations(belief, parse_event(wire), reading)]


def kinds(belief: Belief, wire: dict, reading=DRAFT) -> list[str]:
    return [v.kind for v in violations(belief, parse_event(wire), reading)]


def field_case(case_id: str) -> dict:
    for line in CORPUS.read_text(encoding="utf-8").splitlines():
        if line.strip():
            case = json.loads(line)
            if case["id"] == case_id:
                return case
    raise KeyError(case_id)


# --- moves --------------------------------------------------------------------------------------

def test_moves_from_empty_belief_are_only_run_started():
    assert moves(Belief()) == [RunStarted(thread_id="t1", run_id="r1")]


def test_moves_after_run_started_have_snapshots_but_no_deltas():
    b = advance(Belief(), RunStarted())
    ms = moves(b)
    snaps = [e for e in ms if isinstance(e, ActivitySnapshot)]
    assert snaps and {e.message_id for e in snaps} == set(DEFAULT_VOCABULARY.activity_ids)
    assert not any(isinstance(e, ActivityDelta) for e in ms)
    assert RunFinished(thread_id="t1", run_id="r1") in ms
    assert TextMessageStart(message_id="msg-1") in ms
    assert not any(isinstance(e, RunStarted) for e in ms)


def test_moves_after_snapshot_have_deltas_only_for_created_id():
    b = belief_after(RS, snap("act-1"))
    deltas = [e for e in moves(b) if isinstance(e, ActivityDelta)]
    assert deltas and {e.message_id for e in deltas} == {"act-1"}
    # the root replacement (non-object result) is never a conformant move
    assert not any(e.patch and thaw(e.patch[0].raw).get("path") == "" for e in deltas)
    # deltas tagged with another owner than the (parent) opener are not conformant
    assert {e.subagent_run_id for e in deltas} == {None}


def test_moves_after_run_finished():
    b = belief_after(RS, RF)
    ms = moves(b)
    # the next run, or a late failure of the finished one (N97: LIF-AFTER-CLOSE)
    assert ms == [RunStarted(thread_id="t1", run_id="r2"), RunError(message="late failure")]
    b = belief_after(RS, RF, {**RS, "runId": "r2"}, {**RF, "runId": "r2"})
    assert moves(b) == [RunError(message="late failure")]  # max_runs reached
    # after the late failure nothing more is conformant but the next run
    b = belief_after(RS, RF, {"type": "RUN_ERROR", "message": "late failure"})
    assert moves(b) == [RunStarted(thread_id="t1", run_id="r2")]


def _beliefs() -> list[Belief]:
    return [
        Belief(),
        belief_after(RS),
        belief_after(RS, snap("act-1", subagentRunId="sub-1")),
        belief_after(RS, snap("act-1"), snap("act-2", atype="SEARCH", subagentRunId="sub-2"),
                     {"type": "TEXT_MESSAGE_START", "messageId": "msg-1"}),
        belief_after(RS, {"type": "TEXT_MESSAGE_START", "messageId": "msg-1"},
                     {"type": "TEXT_MESSAGE_END", "messageId": "msg-1"},
                     {"type": "SUBAGENT_STARTED", "subagentRunId": "sub-1"}),
        belief_after(RS, snap("act-1"), RF),
        belief_after(RS, snap("act-1"), {"type": "RUN_ERROR", "message": "x"}),
        belief_after(RS, {"type": "SUBAGENT_STARTED", "subagentRunId": "sub-1"},
                     {"type": "SUBAGENT_FINISHED", "subagentRunId": "sub-1"}),
    ]


@pytest.mark.parametrize("index", range(8))
@pytest.mark.parametrize("reading", ["draft", "strict"])
def test_moves_are_conformant_and_adversarial_moves_are_labelled(index, reading):
    belief, r = _beliefs()[index], PRESETS[reading]
    good = moves(belief, reading=r)
    assert good
    for e in good:
        assert violations(belief, e, r) == ()
    bad = adversarial_moves(belief, reading=r)
    assert bad
    for e, v in bad:
        found = violations(belief, e, r)
        assert found and v in found
        assert v.kind in ADVERSARIAL_KINDS and (
            v.clause == ADVERSARIAL_KINDS[v.kind] or v.clause in MALFORMED_KIND_CLAUSES[v.kind])
    assert not set(good) & {e for e, _ in bad}


def test_adversarial_kinds_reached():
    seen = set()
    for b in _beliefs():
        seen |= {v.kind for _, v in adversarial_moves(b)}
    assert {"before-start", "after-close", "run-started-twice", "delta-without-baseline",
            "non-object-result", "replace-false-owner-disagrees", "delta-owner-disagrees",
            "id-reused-across-roles", "null-optional-member", "null-subagent-run-id",
            "null-metadata", "content-not-object", "malformed-patch", "unknown-event-type",
            "subagent-started-twice", "delta-on-unknown-id", "history-restreamed",
            "finished-subagent-reused", "tag-after-finished", "announced-after-use",
            "text-owner-disagrees"} <= seen


# --- specific violations ------------------------------------------------------------------------

def test_delta_before_snapshot_violates_baseline():
    b = belief_after(RS)
    assert clauses(b, delta(patch=[{"op": "add", "path": "/x", "value": 1}])) == [
        "ACT-DELTA-BASELINE", "SNP-BASELINE"]
    assert kinds(b, delta()) == ["delta-without-baseline", "delta-on-unknown-id"]


def test_delta_on_activity_known_only_from_messages_snapshot_violates_baseline():
    b = belief_after(RS, {"type": "MESSAGES_SNAPSHOT", "messages": [
        {"id": "act-1", "role": "activity", "activityType": "PLAN", "content": {"n": 0}}]})
    assert clauses(b, delta()) == ["ACT-DELTA-BASELINE"]


@pytest.mark.parametrize("flag", [{}, {"replace": False}], ids=["replacing", "replace-false"])
def test_snapshot_after_messages_snapshot_is_a_baseline(flag):
    wire = [RS, {"type": "MESSAGES_SNAPSHOT", "messages": [
        {"id": "act-1", "role": "activity", "activityType": "PLAN", "content": {"n": 0}}]},
            snap(content={"n": 1}, **flag), delta(patch=[{"op": "replace", "path": "/n",
                                                          "value": 2}])]
    assert check_trace(parse_events(wire)) == []


def test_replace_false_with_another_owner_violates_attr_agree():
    b = belief_after(RS, snap(subagentRunId="sub-1"))
    assert clauses(b, snap(replace=False, subagentRunId="sub-2")) == ["ACT-ATTR-AGREE"]
    assert clauses(b, snap(replace=False, subagentRunId="sub-1")) == []
    assert clauses(b, snap(subagentRunId="sub-2")) == []  # replacing: re-mints, no duty
    b = belief_after(RS, snap())
    assert clauses(b, snap(replace=False, subagentRunId="sub-1")) == ["ACT-ATTR-AGREE"]
    assert clauses(b, snap(replace=False)) == []


def test_untagged_replace_false_on_subagent_activity_depends_on_q2():
    b = belief_after(RS, snap(subagentRunId="sub-1"))
    untagged = snap(content={"n": 1}, replace=False)  # in the default vocabulary
    assert clauses(b, untagged, DRAFT) == []
    assert clauses(b, untagged, DRAFT.with_(Q2="parent")) == ["ACT-ATTR-AGREE"]
    assert kinds(b, untagged, DRAFT.with_(Q2="parent")) == ["replace-false-owner-disagrees"]
    assert parse_event(untagged) in moves(b, reading=DRAFT)
    assert parse_event(untagged) not in moves(b, reading=DRAFT.with_(Q2="parent"))


def test_delta_tagged_with_non_owner_violates_sub_owner_agree():
    b = belief_after(RS, snap(subagentRunId="sub-1"))
    assert clauses(b, delta(subagentRunId="sub-2")) == ["SUB-OWNER-AGREE"]
    assert kinds(b, delta(subagentRunId="sub-2")) == ["delta-owner-disagrees"]
    assert clauses(b, delta(subagentRunId="sub-1")) == []
    assert clauses(b, delta()) == []  # an untagged continuation continues the opener
    b = belief_after(RS, snap())
    assert clauses(b, delta(subagentRunId="sub-1")) == ["SUB-OWNER-AGREE"]


def test_delta_owner_after_remint_depends_on_q4_opener():
    b = belief_after(RS, snap(subagentRunId="sub-1"), snap(content={"n": 1}, subagentRunId="sub-2"))
    first = DRAFT.with_(**{"Q4-opener": "first"})
    assert clauses(b, delta(subagentRunId="sub-2")) == []
    assert clauses(b, delta(subagentRunId="sub-1")) == ["SUB-OWNER-AGREE"]
    assert clauses(b, delta(subagentRunId="sub-2"), first) == ["SUB-OWNER-AGREE"]
    assert clauses(b, delta(subagentRunId="sub-1"), first) == []


def test_root_replace_to_array_violates_delta_object():
    b = belief_after(RS, snap())
    wire = delta(patch=[{"op": "replace", "path": "", "value": []}])
    assert clauses(b, wire) == ["ACT-DELTA-OBJECT"]
    assert kinds(b, wire) == ["non-object-result"]
    # a root replacement by another object is fine
    assert clauses(b, delta(patch=[{"op": "replace", "path": "", "value": {"m": 1}}])) == []
    # a patch that does not apply breaks no producer clause here
    assert clauses(b, delta(patch=[{"op": "remove", "path": "/missing"}])) == []


def test_event_after_run_finished_violates_after_close():
    b = belief_after(RS, snap(), RF)
    assert clauses(b, snap("act-2")) == ["LIF-AFTER-CLOSE"]
    assert kinds(b, delta()) == ["after-close"]
    assert clauses(b, RS) == []
    assert clauses(b, {"type": "RUN_ERROR", "message": "late"}) == []  # late failure admitted
    b = belief_after(RS, {"type": "RUN_ERROR", "message": "x"})
    assert clauses(b, {"type": "RUN_ERROR", "message": "again"}) == ["LIF-AFTER-CLOSE"]


def test_lifecycle_start_violations():
    assert clauses(Belief(), snap()) == ["LIF-STREAM-START"]
    assert clauses(Belief(), {"type": "RUN_ERROR", "message": "unreachable"}) == []
    assert clauses(belief_after(RS), RS) == ["LIF-ONE-ACTIVE"]


def test_activity_snapshot_on_text_id_violates_id_unique():
    b = belief_after(RS, {"type": "TEXT_MESSAGE_START", "messageId": "msg-1"})
    assert clauses(b, snap("msg-1")) == ["EVM-ID-UNIQUE"]
    assert kinds(b, snap("msg-1")) == ["id-reused-across-roles"]
    b = belief_after(RS, snap("act-1"))
    assert clauses(b, {"type": "TEXT_MESSAGE_START", "messageId": "act-1"}) == ["EVM-ID-UNIQUE"]


def _ms(*messages) -> dict:
    return {"type": "MESSAGES_SNAPSHOT", "messages": list(messages)}


ASSISTANT_X = {"id": "x", "role": "assistant", "content": "hi"}


def _act(mid="act-1", **extra) -> dict:
    return {"id": mid, "role": "activity", "activityType": "PLAN", "content": {"n": 0}, **extra}


def test_ids_a_messages_snapshot_states_keep_their_role():
    """EVM-ID-UNIQUE (N80) across roles the producer gave by MESSAGES_SNAPSHOT: the Q9 trace
    RUN_STARTED, MESSAGES_SNAPSHOT [assistant x], ACTIVITY_SNAPSHOT x is not conformant."""
    b = belief_after(RS, _ms(ASSISTANT_X))
    assert b.others == {"x"} and b.activities == ()
    assert kinds(b, snap("x")) == ["id-reused-across-roles"]
    assert kinds(b, snap("x", replace=False)) == ["id-reused-across-roles"]
    assert kinds(b, delta("x")) == ["id-reused-across-roles", "delta-without-baseline",
                                    "delta-on-unknown-id"]
    assert kinds(b, {"type": "TEXT_MESSAGE_START", "messageId": "x"}) == ["history-restreamed"]
    assert kinds(b, _ms(ASSISTANT_X)) == []              # restating it is fine
    assert kinds(b, _ms(_act("x"))) == ["id-reused-across-roles"]
    assert kinds(b, snap("act-1")) == []
    # the run input's history (a user message) stays in the thread across runs
    b = belief_after(RS, _ms({"id": "user-1", "role": "user", "content": "hello"}), RF,
                     {**RS, "runId": "r2"})
    assert clauses(b, snap("user-1")) == ["EVM-ID-UNIQUE"]
    # a text the producer opened is in texts, not in others
    b = belief_after(RS, {"type": "TEXT_MESSAGE_START", "messageId": "msg-1"},
                     {"type": "TEXT_MESSAGE_END", "messageId": "msg-1"},
                     _ms({"id": "msg-1", "role": "assistant", "content": "hi"}))
    assert b.others == frozenset() and b.texts == ("msg-1",)
    # an activity's id stated with another role
    b = belief_after(RS, snap("act-1"))
    assert kinds(b, _ms({"id": "act-1", "role": "assistant", "content": "hi"})) == [
        "id-reused-across-roles"]
    assert kinds(b, _ms(_act(), _act())) == ["id-reused-across-roles"]  # one id twice
    assert check_trace(parse_events([RS, _ms(ASSISTANT_X), snap("x")])) == [
        (2, ProducerViolation("id-reused-across-roles", "EVM-ID-UNIQUE", "x"))]


def test_self_revoking_messages_snapshot_drops_unlisted_activities():
    """STA-MS-SELF-REVOKE: a MESSAGES_SNAPSHOT carrying an activity states the complete set, so
    the belief forgets the ones it leaves out; STA-MS-DROP-EXCEPT: one with none keeps them."""
    b = belief_after(RS, snap("act-1", subagentRunId="sub-1"), snap("act-2"))
    kept = advance(b, parse_event(_ms(ASSISTANT_X)))
    assert [m for m, _ in kept.activities] == ["act-1", "act-2"] and kept.dropped == frozenset()
    after = advance(b, parse_event(_ms(_act("act-2"))))
    assert [m for m, _ in after.activities] == ["act-2"] and after.dropped == {"act-1"}
    assert after.activity("act-2") == b.activity("act-2")   # listed: opener and baseline kept
    # a delta on the dropped id has no baseline; a replace:false snapshot creates it again
    assert kinds(after, delta(subagentRunId="sub-1")) == ["delta-without-baseline",
                                                         "delta-on-unknown-id"]
    assert kinds(after, snap(replace=False, subagentRunId="sub-2")) == []
    again = advance(after, parse_event(snap(replace=False, subagentRunId="sub-2")))
    assert again.activity("act-1") == ActivityBelief(freeze({"n": 0}), "PLAN", "sub-2", "sub-2")
    assert again.dropped == frozenset()
    # the dropped id keeps the activity role
    assert kinds(after, {"type": "TEXT_MESSAGE_START", "messageId": "act-1"}) == [
        "id-reused-across-roles"]
    assert kinds(after, _ms(_act("act-2"), {"id": "act-1", "role": "user", "content": "u"})) == [
        "id-reused-across-roles"]
    # restated by a later snapshot: known from it only, opener its owner
    restated = advance(after, parse_event(_ms(_act("act-1"), _act("act-2"))))
    assert restated.activity("act-1") == ActivityBelief(freeze({"n": 0}), "PLAN", None, None,
                                                        False)
    assert restated.dropped == frozenset()


def test_delta_by_original_opener_after_drop_and_restatement_is_not_conformant():
    """The Z3 trace under Q4-opener=first: a subagent's activity is dropped by a self-revoking
    MESSAGES_SNAPSHOT and restated by the next; the subagent's delta then has no baseline
    (ACT-DELTA-BASELINE), so the trace the consumer fails is not a conformant one."""
    wire = [RS, snap("act-1", subagentRunId="sub-1"), _ms(_act("act-2")), _ms(_act("act-1")),
            delta(subagentRunId="sub-1", patch=[{"op": "replace", "path": "/n", "value": 1}])]
    for reading in (DRAFT, DRAFT.with_(**{"Q4-opener": "first"})):
        assert [(i, v.clause) for i, v in check_trace(parse_events(wire), reading)] == [
            (4, "ACT-DELTA-BASELINE")]


def test_null_subagent_run_id_violates_absent_parent():
    event = parse_event(snap(subagentRunId="sub-1") | {"subagentRunId": None})
    assert violations(belief_after(RS), event) == (
        ProducerViolation("null-subagent-run-id", "SUB-ABSENT-PARENT", "$.subagentRunId"),)


def test_other_malformed_events_labelled():
    b = belief_after(RS, snap())
    assert clauses(b, snap() | {"metadata": None}) == ["MET-NOT-NULL"]
    assert clauses(b, snap() | {"replace": None}) == ["EVM-ABSENT-NOT-NULL"]
    assert clauses(b, snap() | {"content": None}) == ["SCH-ACTIVITY-SNAPSHOT"]
    # labelled by the actual fault: a pointer that is not one, a patch that is not an array
    assert clauses(b, delta(patch=[{"op": "add", "path": "x", "value": 1}])) == ["SCH-JSON-POINTER"]
    assert kinds(b, delta(patch=[{"op": "add", "path": "x", "value": 1}])) == ["malformed-patch"]
    assert clauses(b, delta(patch={"op": "add"})) == ["SNP-MALFORMED-OP"]
    assert clauses(b, {"type": "ACTIVITY_PROGRESS"}) == ["PRC-NO-PRIVATE-TYPES"]


@pytest.mark.parametrize("wire, kind, clause", [
    ({"type": "ACTIVITY_SNAPSHOT", "messageId": "act-1", "activityType": "PLAN",
      "content": {"n": 0}, "replace": "yes"}, "malformed-member", "SCH-REPLACE"),
    ({"type": "ACTIVITY_SNAPSHOT", "messageId": 7, "activityType": "PLAN", "content": {}},
     "malformed-member", "SCH-ACTIVITY-SNAPSHOT"),
    ({"type": "ACTIVITY_SNAPSHOT", "messageId": "act-1", "activityType": "PLAN", "content": []},
     "content-not-object", "SCH-ACTIVITY-SNAPSHOT"),
    ({"type": "ACTIVITY_DELTA", "messageId": "act-1", "activityType": 5, "patch": []},
     "malformed-member", "SCH-ACTIVITY-DELTA"),
    ({"type": "MESSAGES_SNAPSHOT", "messages": [{"id": "a", "role": "activity",
                                                 "activityType": "P", "content": 1}]},
     "malformed-member", "SCH-ACTIVITY-MESSAGE"),
    ({"type": "MESSAGES_SNAPSHOT", "messages": [{"id": 1, "role": "user", "content": "x"}]},
     "malformed-member", "SCH-MESSAGE-UNION"),
    ({"type": "MESSAGES_SNAPSHOT", "messages": {}}, "malformed-member", "SCH-MESSAGES-SNAPSHOT"),
    ({"type": "TOOL_CALL_START", "toolCallId": "c"}, "malformed-member", "PRC-MALFORMED-FATAL"),
    ({"type": "STEP_STARTED", "stepName": 1}, "malformed-member", "PRC-MALFORMED-FATAL"),
])
def test_a_malformed_event_is_labelled_by_its_actual_fault(wire, kind, clause):
    found = violations(belief_after(RS, snap()), parse_event(wire))
    assert [(v.kind, v.clause) for v in found] == [(kind, clause)]
    assert clause in MALFORMED_KIND_CLAUSES[kind]


STEP = {"type": "STEP_STARTED", "stepName": "plan"}
STEP_END = {"type": "STEP_FINISHED", "stepName": "plan"}
TOOL = {"type": "TOOL_CALL_START", "toolCallId": "tc-1", "toolCallName": "f"}
TOOL_END = {"type": "TOOL_CALL_END", "toolCallId": "tc-1"}


def test_steps_are_balanced_per_owner_and_closed_before_run_finished():
    assert kinds(belief_after(RS), STEP_END) == ["step-not-open"]
    b = belief_after(RS, STEP)
    assert kinds(b, STEP) == ["step-opened-twice"]
    assert clauses(b, RF) == ["LIF-STEP-CLOSE-BEFORE-FINISH"]
    assert kinds(b, STEP_END) == []
    # per owner (SUB-STEP-PER-OWNER): a subagent's step of the same name is another step
    assert kinds(b, STEP | {"subagentRunId": "sub-1"}) == []
    assert kinds(b, STEP_END | {"subagentRunId": "sub-1"}) == ["step-owner-disagrees"]
    assert kinds(b, STEP_END | {"stepName": "other"}) == ["step-not-open"]
    assert kinds(belief_after(RS, STEP, STEP_END), RF) == []
    # run-scoped: a new run starts with no step open, and RUN_ERROR ends them
    assert kinds(belief_after(RS, STEP, {"type": "RUN_ERROR", "message": "x"}, RS), STEP) == []


def test_tool_calls_are_tracked_as_the_consumer_tracks_them():
    b = belief_after(RS, TOOL)
    assert kinds(b, RF) == ["finish-with-open"]
    assert kinds(b, TOOL) == ["tool-call-started-twice"]
    assert clauses(b, {"type": "TOOL_CALL_ARGS", "toolCallId": "tc-1", "delta": "{}",
                       "subagentRunId": "sub-1"}) == ["SUB-OWNER-AGREE"]
    assert kinds(b, {"type": "TOOL_CALL_ARGS", "toolCallId": "tc-1", "delta": "{}"}) == []
    b = belief_after(RS, TOOL, TOOL_END)
    assert kinds(b, RF) == [] and kinds(b, TOOL) == []


def test_a_parent_invocation_must_have_been_announced_in_the_run():
    child = {"type": "SUBAGENT_STARTED", "subagentRunId": "sub-2", "parentSubagentRunId": "sub-1"}
    assert clauses(belief_after(RS), child) == ["SUB-PARENT-ANNOUNCED"]
    started = {"type": "SUBAGENT_STARTED", "subagentRunId": "sub-1"}
    assert kinds(belief_after(RS, started), child) == []
    finished = {"type": "SUBAGENT_ERROR", "subagentRunId": "sub-1"}
    assert kinds(belief_after(RS, started, finished), child) == []  # announced in this run
    # SUBAGENT_ERROR closes the invocation: RUN_FINISHED after it is conformant
    assert kinds(belief_after(RS, started, finished), RF) == []
    assert kinds(belief_after(RS, started, finished, RF, RS), child) == ["parent-not-announced"]


def test_subagent_lifecycle_violations():
    b = belief_after(RS, {"type": "SUBAGENT_STARTED", "subagentRunId": "sub-1"})
    assert clauses(b, {"type": "SUBAGENT_STARTED", "subagentRunId": "sub-1"}) == [
        "SUB-STARTED-ACTIVE"]
    b = advance(b, parse_event({"type": "SUBAGENT_FINISHED", "subagentRunId": "sub-1"}))
    assert clauses(b, {"type": "SUBAGENT_STARTED", "subagentRunId": "sub-1"}) == [
        "SUB-NO-REUSE"]
    assert clauses(b, snap(subagentRunId="sub-1")) == ["SUB-NO-REUSE-FINISHED"]
    # a tag used before the invocation is announced (SUB-STARTED-FIRST)
    b = belief_after(RS, snap(subagentRunId="sub-2"))
    assert clauses(b, {"type": "SUBAGENT_STARTED", "subagentRunId": "sub-2"}) == [
        "SUB-STARTED-FIRST"]


def test_text_continuation_with_another_owner_violates_sub_owner_agree():
    wire = [RS, {"type": "TEXT_MESSAGE_START", "messageId": "msg-1", "subagentRunId": "sub-1"},
            {"type": "TEXT_MESSAGE_CONTENT", "messageId": "msg-1", "delta": "x",
             "subagentRunId": "sub-2"}]
    found = check_trace(parse_events(wire))
    assert [(i, v.kind, v.clause) for i, v in found] == [
        (2, "text-owner-disagrees", "SUB-OWNER-AGREE")]


# --- check_trace on field cases -----------------------------------------------------------------

def test_check_trace_flags_fc08_non_object_result():
    case = field_case("FC-08")
    found = check_trace(parse_events(case["events"]))
    assert [(i, v.kind, v.clause) for i, v in found] == [(2, "non-object-result",
                                                          "ACT-DELTA-OBJECT")]
    assert case["expected"]["producerViolation"] == "ACT-DELTA-OBJECT"


def test_check_trace_flags_fc23_missing_baseline():
    case = field_case("FC-23")
    found = check_trace(parse_events(case["events"]))
    assert [(i, v.kind, v.clause) for i, v in found] == [
        (1, "delta-without-baseline", "ACT-DELTA-BASELINE"),
        (1, "delta-on-unknown-id", "SNP-BASELINE")]
    assert found[0][1].detail == "act_1"
    assert case["expected"]["producerViolation"] == "ACT-DELTA-BASELINE"


def test_check_trace_clean_on_conformant_trace():
    wire = [RS, snap(subagentRunId="sub-1"),
            delta(patch=[{"op": "replace", "path": "/n", "value": 1}], subagentRunId="sub-1"),
            snap(content={"n": 2}, replace=False, subagentRunId="sub-1"), RF]
    assert check_trace(parse_events(wire)) == []


def test_check_trace_reports_every_violation_with_its_index():
    wire = [snap(), RS, delta("act-9"), snap(), delta(patch=[{"op": "replace", "path": "",
                                                              "value": 1}]), RF, snap()]
    found = check_trace(parse_events(wire))
    assert [(i, v.clause) for i, v in found] == [(0, "LIF-STREAM-START"),
                                                 (2, "ACT-DELTA-BASELINE"),
                                                 (2, "SNP-BASELINE"),
                                                 (4, "ACT-DELTA-OBJECT"),
                                                 (6, "LIF-AFTER-CLOSE")]


# --- advance ------------------------------------------------------------------------------------

def test_advance_tracks_content_through_applying_delta_and_keeps_it_on_failing_one():
    b = belief_after(RS, snap(content={"n": 0, "items": []}, subagentRunId="sub-1"))
    assert b.activity("act-1") == ActivityBelief(freeze({"n": 0, "items": []}), "PLAN", "sub-1",
                                                 "sub-1", True)
    b = advance(b, parse_event(delta(atype="SEARCH", patch=[
        {"op": "replace", "path": "/n", "value": 2},
        {"op": "add", "path": "/items/-", "value": "x"}])))
    assert thaw(b.activity("act-1").content) == {"n": 2, "items": ["x"]}
    assert b.activity("act-1").activity_type == "SEARCH"
    before = b.activity("act-1").content
    b = advance(b, parse_event(delta(atype="SEARCH", patch=[
        {"op": "replace", "path": "/n", "value": 3}, {"op": "remove", "path": "/missing"}])))
    assert b.activity("act-1").content == before  # atomic: nothing of the failed patch
    b = advance(b, parse_event(delta(atype="SEARCH", patch=[
        {"op": "increment", "path": "/n"}, {"op": "replace", "path": "/n", "value": 4}])))
    assert thaw(b.activity("act-1").content) == {"n": 4, "items": ["x"]}  # unknown op dropped


def test_advance_snapshots_and_owner():
    b = belief_after(RS, snap(subagentRunId="sub-1"))
    b2 = advance(b, parse_event(snap(content={"n": 5}, replace=False, subagentRunId="sub-1")))
    assert b2 == b  # a declined snapshot changes nothing the producer believes
    b3 = advance(b, parse_event(snap(atype="SEARCH", content={"n": 5})))
    assert b3.activity("act-1") == ActivityBelief(freeze({"n": 5}), "SEARCH", None, "sub-1", True)
    assert [m for m, _ in b3.activities] == ["act-1"]


def test_advance_run_and_text_tracking():
    b = belief_after(RS, {"type": "TEXT_MESSAGE_START", "messageId": "msg-1"})
    assert b.run == "active" and b.runs == 1 and b.texts == ("msg-1",)
    assert b.open_texts == {"msg-1"}
    b = advance(b, parse_event(RF))
    assert b.run == "finished" and b.open_texts == frozenset()
    b = advance(b, parse_event({**RS, "runId": "r2"}))
    assert b.run == "active" and b.runs == 2


def test_custom_vocabulary_moves():
    vocab = Vocabulary(activity_ids=("x",), text_ids=(), owners=(None,), activity_types=("T",),
                       contents=({"a": 1},), patches=(("noop", ()),), metadata=(None,),
                       replace_flags=(None,), max_runs=1)
    b = advance(Belief(), RunStarted())
    snapshot = ActivitySnapshot(message_id="x", activity_type="T", content=freeze({"a": 1}))
    got = moves(b, vocab)
    assert got[:3] == [RunFinished(thread_id="t1", run_id="r1"), RunError(message="failed"),
                       snapshot]
    assert got[3].raw_event is not None and got[3].content == snapshot.content  # rawEvent rides along
    # one step and one tool call of the parent, opened (LIF-STEP-*, LIF-CLOSE-BEFORE-FINISH)
    assert got[4:6] == [StepStarted(step_name="plan"),
                        ToolCallStart(tool_call_id="call-1", tool_call_name="search")]
    # restated history (a user and a system message); an empty set; an activity the consumer
    # meets first in the snapshot
    assert [len(e.messages) for e in got[6:]] == [2, 0, 1]
    assert [m.role for m in got[6].messages] == ["user", "system"]
    assert got[8].messages[0].is_activity and got[8].messages[0].id == "x"
    opened = advance(advance(b, got[4]), got[5])
    later = moves(opened, vocab)
    assert StepFinished(step_name="plan") in later and ToolCallEnd(tool_call_id="call-1") in later
    assert StepStarted(step_name="plan") not in later and RunFinished(thread_id="t1", run_id="r1") \
        not in later  # the run may not finish with the step and tool call open
    b = advance(b, snapshot)
    ms = moves(b, vocab)
    assert ActivityDelta(message_id="x", activity_type="T", patch=()) in ms
    assert MessagesSnapshot(messages=(ms[-1].messages[0],)) in ms


# --- producer-only knobs (Q12, Q17), the conformance search, and a restarted tool call ---------

RS2 = {"type": "RUN_STARTED", "threadId": "t1", "runId": "r2"}
SUB_SNAP = snap(subagentRunId="sub-1")
UNTAGGED_DELTA = delta(patch=[{"op": "replace", "path": "/n", "value": 2}])
ECHO = {"type": "RUN_STARTED", "threadId": "t1", "runId": "r1", "input": {
    "threadId": "t1", "runId": "r1", "messages": [
        {"id": "act-9", "role": "activity", "activityType": "PLAN", "content": {}}]}}


def test_q12_each_option_decides_who_created_the_activity():
    from model.readings import DRAFT as D
    on_sub = belief_after(RS, SUB_SNAP)
    # the parent's untagged delta on a subagent's activity: only Q12=owner forbids it
    assert kinds(on_sub, UNTAGGED_DELTA, D) == []
    assert kinds(on_sub, UNTAGGED_DELTA, D.with_(Q12="owner")) == ["delta-by-other-agent"]
    assert clauses(on_sub, UNTAGGED_DELTA, D.with_(Q12="owner")) == ["ACT-DELTA-BASELINE"]
    assert kinds(on_sub, UNTAGGED_DELTA, D.with_(Q12="run")) == []
    # a delta in a second run against the first run's activity: only Q12=run forbids it
    later = belief_after(RS, snap(), RF, RS2)
    assert later.earlier == frozenset({"act-1"})
    assert kinds(later, UNTAGGED_DELTA, D) == [] == kinds(later, UNTAGGED_DELTA,
                                                           D.with_(Q12="owner"))
    assert kinds(later, UNTAGGED_DELTA, D.with_(Q12="run")) == ["delta-from-earlier-run"]
    # a snapshot in the second run restates it: the delta is conformant again
    restated = belief_after(RS, snap(), RF, RS2, snap(replace=False))
    assert restated.earlier == frozenset()
    assert kinds(restated, UNTAGGED_DELTA, D.with_(Q12="run")) == []


def test_q17_each_option_decides_whether_the_echo_is_stripped():
    from model.readings import DRAFT as D
    assert kinds(Belief(), ECHO, D) == []
    assert clauses(Belief(), ECHO, D.with_(Q17="strip-echo")) == ["RIN-ECHO-STRIPPED"]
    plain = dict(ECHO, input={"threadId": "t1", "runId": "r1", "messages": [
        {"id": "user-1", "role": "user", "content": "hi"}]})
    assert kinds(Belief(), plain, D.with_(Q17="strip-echo")) == []
    # the echoed activity gives no baseline under either option (ACT-DELTA-BASELINE)
    assert kinds(belief_after(ECHO), delta("act-9"), D) == ["delta-without-baseline",
                                                            "delta-on-unknown-id"]
    # the adversarial moves hold the echo under strip-echo only
    strip = D.with_(Q17="strip-echo")
    assert [v.kind for e, v in adversarial_moves(Belief(), reading=strip)
            if isinstance(e, RunStarted)] == ["activity-in-echo"]
    assert [e for e, _ in adversarial_moves(Belief()) if isinstance(e, RunStarted)] == []


def test_conformance_splits_gives_each_producer_knob_its_shortest_trace():
    from dataclasses import replace as with_
    from model.producer import PRODUCER_ONLY_KNOBS, conformance_splits
    vocab = with_(DEFAULT_VOCABULARY, owners=(None, "sub-1"), metadata=(None,),
                  replace_flags=(None, False), contents=({"n": 0},),
                  patches=(("set-n", ({"op": "replace", "path": "/n", "value": 2},)),))
    found = conformance_splits(PRODUCER_ONLY_KNOBS, 5, vocab)
    assert {k: ([e.type_name for e in t], a, b) for k, (t, a, b) in found.items()} == {
        "Q12": (["RUN_STARTED", "ACTIVITY_SNAPSHOT", "ACTIVITY_DELTA"], "stream", "owner"),
        "Q17": (["RUN_STARTED"], "as-received", "strip-echo")}
    trace = found["Q12"][0]
    assert trace[1].subagent_run_id == "sub-1" and trace[2].subagent_run_id is None
    assert check_trace(trace) == [] and check_trace(trace, DRAFT.with_(Q12="owner")) != []
    # Q12=run alone needs the second run: five events
    run_only = conformance_splits(("Q12",), 5, with_(vocab, owners=(None,)))
    assert [e.type_name for e in run_only["Q12"][0]] == [
        "RUN_STARTED", "ACTIVITY_SNAPSHOT", "RUN_FINISHED", "RUN_STARTED", "ACTIVITY_DELTA"]
    assert run_only["Q12"][1:] == ("stream", "run")
    assert conformance_splits(("Q12",), 2, vocab) == {}
    with pytest.raises(ValueError, match="not producer knobs"):
        conformance_splits(("Q1",), 3)


def test_a_restarted_tool_call_is_listed_once():
    start = {"type": "TOOL_CALL_START", "toolCallId": "tc-1", "toolCallName": "f"}
    b = belief_after(RS, start, start | {"subagentRunId": "sub-1"})
    assert b.open_tools == (("tc-1", "sub-1"),)
    v = violations(b, parse_event(RF))
    assert [(x.kind, x.detail) for x in v] == [("finish-with-open", "tc-1")]


def test_producer_only_knobs_draft_option_is_the_most_permissive():
    """What the sweep relies on to keep them at draft: an event conformant under another
    option of Q12 or Q17 is conformant under the draft option (tried from varied beliefs, over
    every candidate and adversarial extra, with two runs)."""
    from model.producer import PRODUCER_ONLY_KNOBS, _candidates, _extra_candidates
    from model.readings import KNOB_BY_ID
    beliefs = _beliefs() + [belief_after(RS, SUB_SNAP), belief_after(RS, snap(), RF, RS2),
                            belief_after(RS, SUB_SNAP, RF, RS2, snap("act-2"))]
    tried = 0
    for belief in beliefs:
        for event in list(_candidates(belief, DEFAULT_VOCABULARY)) + \
                _extra_candidates(belief, DEFAULT_VOCABULARY):
            draft_ok = not violations(belief, event)
            for knob in PRODUCER_ONLY_KNOBS:
                for option in KNOB_BY_ID[knob].option_names[1:]:
                    if not violations(belief, event, DRAFT.with_(**{knob: option})):
                        assert draft_ok, (knob, option, event)
                    tried += 1
    assert tried > 10_000
