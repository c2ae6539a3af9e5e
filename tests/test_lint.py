"""``lint`` (issue 22): the engine over the producer monitor (counterexamples/lint/linter.py).

Every violation of a stream with clause, keyword, severity, index and pointer; end-of-stream
violations; malformed, undecodable and unrecognised events reported and the rest still checked;
the producer readings; the Hypothesis counterpart of the strategies (lint accepts what
``conformant_traces()`` generates and flags every labelled move of ``adversarial_traces()`` with
its label's clause); the chunk memo proven equal to the model (the parser's plain lane is
checked in ``tests/test_wire.py``).
"""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from counterexamples.lint.linter import (
    FAIL_ON, LINT_KINDS, PENDING_CLAUSES, LintReport, StreamEntry, _PAYLOAD_ONLY, clause_of,
    clauses_checked, json_path_to_pointer, lint_stream, lint_wire, producer_readings,
    severity_of,
)
from counterexamples.lint.pytest_helper import assert_conformant
from model.clauses import UnknownClauseError, registry
from model.events import Malformed, TextMessageContent, ToolCallArgs
from model.producer import (ADVERSARIAL_KINDS, PRODUCER_KNOBS, UNKNOWN_ROLE_TEXT_START_WIRE,
                            Belief, _MALFORMED_WIRE,
                            advance, check_trace, violations)
from model.readings import DRAFT, parse_reading
from model.wire import parse_event
from properties.strategies import adversarial_traces, as_wire, conformant_traces
from wirekit import RF, RS, delta, snap

HYPOTHESIS = dict(derandomize=True, deadline=None,
                  suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def found(report: LintReport) -> list[tuple]:
    """(index, clause, kind) of every violation."""
    return [(v.event_index, v.clause, v.kind) for v in report.violations]


def text(mid="m1", **tag):
    return [{"type": "TEXT_MESSAGE_START", "messageId": mid, "role": "assistant", **tag},
            {"type": "TEXT_MESSAGE_CONTENT", "messageId": mid, "delta": "hi", **tag},
            {"type": "TEXT_MESSAGE_END", "messageId": mid, **tag}]


# --- the registry side --------------------------------------------------------------------------

def test_every_reported_clause_has_a_keyword_and_severity():
    checked = clauses_checked()
    assert set(ADVERSARIAL_KINDS.values()) <= set(checked)
    assert set(LINT_KINDS.values()) <= set(checked)
    for cid in checked:
        clause = clause_of(cid)
        assert severity_of(clause) in ("error", "warning")
    assert severity_of(clause_of("LIF-STREAM-START")) == "error"          # MUST
    assert severity_of(clause_of("SUB-NO-REUSE")) == "error"              # MUST NOT
    assert severity_of(clause_of("SNP-SHOULD-SNAPSHOT")) == "warning"     # SHOULD
    assert severity_of(clause_of("SCH-ACTIVITY-SNAPSHOT")) == "error"     # schema: fatal
    assert severity_of(clause_of("SCH-ACTIVITY-SNAPSHOT"), "undescribed-member") == "warning"
    with pytest.raises(UnknownClauseError):
        clause_of("NOPE-NOT-A-CLAUSE")


def test_pending_clauses_are_not_in_the_registry_yet():
    # when the registry gains one of these (issue 19), delete it from PENDING_CLAUSES
    for clause in PENDING_CLAUSES:
        assert clause.id not in registry(), f"{clause.id} is in the registry now"
        assert clause.actor == "producer" and clause.keyword in ("MUST", "MUST NOT")


def test_producer_readings_cover_the_producer_knobs():
    assert PRODUCER_KNOBS == ("Q2", "Q4-opener", "Q12", "Q17")
    judged = producer_readings()
    assert judged[0] == {"Q2": "continues", "Q4-opener": "current", "Q12": "stream",
                         "Q17": "as-received"}
    assert len(judged) == 2 * 2 * 3 * 2 and len({tuple(a.items()) for a in judged}) == 24
    assert producer_readings(parse_reading("strict")) == ({"Q2": "parent",
                                                           "Q4-opener": "current",
                                                           "Q12": "stream",
                                                           "Q17": "as-received"},)


@pytest.mark.parametrize("path, pointer", [
    ("$", ""), ("$.content", "/content"), ("$.patch[0].path", "/patch/0/path"),
    ('$["a b"].c', "/a b/c"), ('$["x/y~z"]', "/x~1y~0z"),
    ('$.messages[2] (role "robot" unrecognised)', "/messages/2"),
])
def test_json_paths_become_pointers(path, pointer):
    assert json_path_to_pointer(path) == pointer


# --- streams ------------------------------------------------------------------------------------

def test_a_conformant_stream_has_no_violation():
    wire = [RS, snap(), delta(patch=[{"op": "replace", "path": "/n", "value": 1}]), *text(), RF]
    report = lint_wire(wire)
    assert report.violations == () and report.conformant and not report.fails("warning")
    assert report.events == 5 + 2
    assert len(report.conformant_under()) == 24


def test_every_violation_is_reported_not_only_the_first():
    wire = [{"type": "TEXT_MESSAGE_START", "messageId": "m0"},       # 0 before RUN_STARTED
            RS,                                                     # 1
            snap(subagentRunId="s1"),                               # 2
            delta(subagentRunId="s2"),                              # 3 owner disagrees
            RS,                                                     # 4 second RUN_STARTED
            {"type": "SUBAGENT_STARTED", "subagentRunId": "s3"},    # 5
            {"type": "SUBAGENT_STARTED", "subagentRunId": "s3"},    # 6 started twice
            delta("act-9"),                                         # 7 no baseline
            ]
    report = lint_wire(wire)
    assert found(report) == [
        (0, "LIF-STREAM-START", "before-start"),
        (3, "SUB-OWNER-AGREE", "delta-owner-disagrees"),
        (3, "ACT-DELTA-BASELINE", "delta-by-other-agent"),              # under Q12=owner only
        (4, "LIF-ONE-ACTIVE", "run-started-twice"),
        (6, "SUB-STARTED-ACTIVE", "subagent-started-twice"),
        (7, "ACT-DELTA-BASELINE", "delta-without-baseline"),
        (7, "SNP-BASELINE", "delta-on-unknown-id"),
        (None, "LIF-CLOSE-BEFORE-FINISH", "open-at-end"),
        (None, "LIF-RUN-CLOSE", "run-open-at-end"),
    ]
    v = report.violations[1]
    assert (v.keyword, v.severity, v.pointer, v.event_type, v.detail) == (
        "MUST", "error", "/subagentRunId", "ACTIVITY_DELTA", "s2 vs opener s1")
    assert v.message == registry()["SUB-OWNER-AGREE"].summary
    assert report.violations[2].readings == ("Q12=owner",)
    end = report.violations[-2]
    assert end.detail == "subagent invocation s3 was never finished" and end.related_index == 5
    assert report.violations[-1].related_index == 4  # the latest RUN_STARTED


def test_malformed_and_undecodable_events_are_reported_and_the_rest_checked():
    entries = [StreamEntry(RS, 1),
               StreamEntry(None, 2, "not valid JSON: Expecting value (column 9)"),
               StreamEntry(7, 3),
               StreamEntry({**snap(), "content": None}, 4),
               StreamEntry(delta(patch=[{"op": "replace", "path": "n", "value": 1}]), 5),
               StreamEntry({"type": "ACTIVITY_PROGRESS", "messageId": "a"}, 6),
               StreamEntry(snap(**{"x-hint": 1, "y": 2}), 7),
               StreamEntry({"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "robot"}, 8),
               StreamEntry({"type": "TOOL_CALL_START", "toolCallId": "c"}, 9),
               StreamEntry(delta("act-1", subagentRunId=None), 10),
               StreamEntry(RF, 11)]
    report = lint_stream(entries)
    rows = [(v.event_index, v.line, v.clause, v.kind, v.pointer, v.severity)
            for v in report.violations]
    assert rows == [
        (1, 2, "PRC-MALFORMED-FATAL", "undecodable", "", "error"),
        (2, 3, "PRC-MALFORMED-FATAL", "undecodable", "", "error"),
        (3, 4, "SCH-ACTIVITY-SNAPSHOT", "content-not-object", "/content", "error"),
        (4, 5, "SCH-JSON-POINTER", "malformed-patch", "/patch/0/path", "error"),
        (5, 6, "PRC-NO-PRIVATE-TYPES", "unknown-event-type", "/type", "error"),
        (6, 7, "SCH-ACTIVITY-SNAPSHOT", "undescribed-member", "/x-hint", "warning"),
        (6, 7, "SCH-ACTIVITY-SNAPSHOT", "undescribed-member", "/y", "warning"),
        (7, 8, "SCH-MESSAGE-UNION", "undescribed-role", "/role", "warning"),
        (8, 9, "PRC-MALFORMED-FATAL", "malformed-member", "/toolCallName", "error"),
        (9, 10, "SUB-ABSENT-PARENT", "null-subagent-run-id", "/subagentRunId", "error"),
        # the unrecognised role sits in an optional position: only it is stripped, so message m
        # opened (as an assistant message) and RUN_FINISHED leaves it open
        (10, 11, "LIF-CLOSE-BEFORE-FINISH", "finish-with-open", "", "error"),
    ]
    assert report.violations[7].detail == '$.role (role "robot" unrecognised)'
    assert report.violations[-1].related_index == 7
    assert report.violations[0].detail.startswith("not valid JSON")
    assert report.violations[1].detail == "an event must be a JSON object, got a number"


@pytest.mark.parametrize("index, clause, pointer", [
    (0, "SCH-ACTIVITY-SNAPSHOT", "/content"),       # content: null
    (1, "EVM-ABSENT-NOT-NULL", "/replace"),
    (2, "SUB-ABSENT-PARENT", "/subagentRunId"),
    (3, "SCH-JSON-POINTER", "/patch/0/path"),       # "n" is no JSON Pointer
    (4, "SNP-MALFORMED-OP", "/patch"),              # an object, not an array (N39)
    (5, "MET-NOT-NULL", "/metadata"),
    (6, "PRC-NO-PRIVATE-TYPES", "/type"),
    (7, "SCH-ACTIVITY-SNAPSHOT", "/x-vendor-hint"),
])
def test_each_malformed_move_of_the_producer_model_is_cited_by_its_fault(index, clause,
                                                                         pointer):
    report = lint_wire([RS, snap(), _MALFORMED_WIRE[index], RF])
    assert [(v.event_index, v.clause, v.pointer) for v in report.violations] == \
        [(2, clause, pointer)]


def test_messages_snapshot_faults_point_at_the_message():
    ms = {"type": "MESSAGES_SNAPSHOT", "messages": [
        {"id": "u1", "role": "user", "content": "q"},
        {"id": "act-1", "role": "user", "content": "now a user message"},
        {"id": "a2", "role": "activity", "activityType": "P", "content": {}, "extra": 1}]}
    report = lint_wire([RS, snap(), ms, RF])
    assert [(v.clause, v.pointer, v.kind) for v in report.violations] == [
        ("SCH-ACTIVITY-MESSAGE", "/messages/2/extra", "undescribed-member"),
        ("EVM-ID-UNIQUE", "/messages/1/id", "id-reused-across-roles")]
    bad = {"type": "MESSAGES_SNAPSHOT", "messages": [{"id": "u", "role": "user", "content": 3}]}
    assert [(v.clause, v.pointer) for v in lint_wire([RS, bad, RF]).violations] == \
        [("SCH-MESSAGE-UNION", "/messages/0/content")]


def test_end_of_stream_reports_everything_left_open():
    wire = [RS,
            {"type": "STEP_STARTED", "stepName": "plan"},
            {"type": "TEXT_MESSAGE_START", "messageId": "m1"},
            {"type": "TOOL_CALL_START", "toolCallId": "c1", "toolCallName": "f"},
            {"type": "SUBAGENT_STARTED", "subagentRunId": "s1"}]
    report = lint_wire(wire)
    assert [(v.event_index, v.clause, v.related_index, v.detail) for v in report.violations] == [
        (None, "LIF-CLOSE-BEFORE-FINISH", 2, "text message m1 was never ended"),
        (None, "LIF-CLOSE-BEFORE-FINISH", 3, "tool call c1 was never ended"),
        (None, "LIF-STEP-CLOSE-BEFORE-FINISH", 1, "step 'plan' was never finished"),
        (None, "LIF-CLOSE-BEFORE-FINISH", 4, "subagent invocation s1 was never finished"),
        (None, "LIF-RUN-CLOSE", 0, "the stream ended after 5 events with the run still active "
                                   "(no RUN_FINISHED or RUN_ERROR)")]
    # a run that errored, or that finished, leaves nothing open to report
    assert lint_wire(wire + [{"type": "RUN_ERROR", "message": "x"}]).violations == ()


def test_run_finished_with_things_open_names_each():
    wire = [RS, {"type": "STEP_STARTED", "stepName": "plan", "subagentRunId": "s1"},
            {"type": "TOOL_CALL_START", "toolCallId": "c1", "toolCallName": "f"},
            {"type": "TEXT_MESSAGE_START", "messageId": "m1"}, RF]
    report = lint_wire(wire)
    assert [(v.event_index, v.clause, v.kind, v.detail) for v in report.violations] == [
        (4, "LIF-CLOSE-BEFORE-FINISH", "finish-with-open", "text message m1 is still open"),
        (4, "LIF-CLOSE-BEFORE-FINISH", "finish-with-open", "tool call c1 is still open"),
        (4, "LIF-STEP-CLOSE-BEFORE-FINISH", "step-open-at-finish",
         "step 'plan' of s1 is still open")]


def test_steps_are_balanced_per_owner():
    step = lambda kind, name="plan", **tag: {"type": f"STEP_{kind}", "stepName": name, **tag}
    wire = [RS, step("STARTED"), step("STARTED"),                 # 2: opened twice
            step("STARTED", subagentRunId="s1"),                  # a subagent's own: fine
            step("FINISHED", subagentRunId="s1"),
            step("FINISHED", "other"),                            # 5: never opened
            step("FINISHED", subagentRunId="s2"),                 # 6: the parent's, tagged s2
            step("FINISHED"), RF]
    report = lint_wire(wire)
    assert found(report) == [
        (2, "LIF-STEP-OPEN-ONCE", "step-opened-twice"),
        (5, "LIF-STEP-FINISH-OPENED", "step-not-open"),
        (6, "SUB-OWNER-AGREE", "step-owner-disagrees")]
    # the monitor judges; lint points at the member and the step's opener
    assert [(v.pointer, v.detail, v.related_index) for v in report.violations] == [
        ("/stepName", "plan", 1), ("/stepName", "other", None),
        ("/subagentRunId", "s2 vs opener parent", 1)]


def test_a_tool_call_started_twice_is_reported_once_and_left_open_once():
    start = {"type": "TOOL_CALL_START", "toolCallId": "c", "toolCallName": "f"}
    report = lint_wire([RS, start, start, RF])
    assert [(v.event_index, v.clause, v.kind, v.pointer, v.related_index)
            for v in report.violations] == [
        (2, "TOOL-CALL-OPEN-ONCE", "tool-call-started-twice", "/toolCallId", 1),
        (3, "LIF-CLOSE-BEFORE-FINISH", "finish-with-open", "", 1)]
    assert [(v.event_index, v.detail) for v in lint_wire([RS, start, start]).violations][1:] \
        == [(None, "tool call c was never ended"),
            (None, "the stream ended after 3 events with the run still active (no RUN_FINISHED "
                   "or RUN_ERROR)")]


def test_tool_calls_continue_under_their_opener():
    wire = [RS, {"type": "TOOL_CALL_START", "toolCallId": "c", "toolCallName": "f",
                 "subagentRunId": "s1"},
            {"type": "TOOL_CALL_ARGS", "toolCallId": "c", "delta": "{}"},          # untagged: ok
            {"type": "TOOL_CALL_ARGS", "toolCallId": "c", "delta": "{}", "subagentRunId": "s2"},
            {"type": "TOOL_CALL_END", "toolCallId": "c", "subagentRunId": "s1"}, RF]
    report = lint_wire(wire)
    assert found(report) == [(3, "SUB-OWNER-AGREE", "tool-owner-disagrees")]
    assert report.violations[0].related_index == 1


def test_a_parent_invocation_must_have_been_announced():
    start = lambda sub, parent=None: {"type": "SUBAGENT_STARTED", "subagentRunId": sub,
                                      **({"parentSubagentRunId": parent} if parent else {})}
    finish = lambda sub: {"type": "SUBAGENT_FINISHED", "subagentRunId": sub}
    wire = [RS, start("s1"), start("s2", "s1"), finish("s2"), finish("s1"),
            start("s3", "s1"),             # s1 finished in this run: announced, fine
            start("s4", "ghost"), finish("s3"), finish("s4"), RF]
    assert found(lint_wire(wire)) == [(6, "SUB-PARENT-ANNOUNCED", "parent-not-announced")]


def test_subagent_error_closes_the_invocation():
    wire = [RS, {"type": "SUBAGENT_STARTED", "subagentRunId": "s1"},
            {"type": "SUBAGENT_ERROR", "subagentRunId": "s1", "message": "x"}, RF]
    assert lint_wire(wire).violations == ()


def test_a_delta_in_a_later_run_without_a_fresh_snapshot_is_a_warning():
    d = delta(patch=[{"op": "replace", "path": "/n", "value": 1}])
    rs2 = {"type": "RUN_STARTED", "threadId": "t1", "runId": "r2"}
    report = lint_wire([RS, snap(), d, RF, rs2, d, d, RF], DRAFT)
    assert [(v.event_index, v.clause, v.severity, v.related_index) for v in report.violations] \
        == [(5, "SNP-SHOULD-SNAPSHOT", "warning", 1)]  # once per activity and run
    assert report.conformant and not report.fails("error") and report.fails("warning")
    # under every reading, Q12=run makes each such delta break ACT-DELTA-BASELINE, and the
    # other Q12 options still give the SHOULD at the first one
    every = lint_wire([RS, snap(), d, RF, rs2, d, d, RF])
    assert [(v.event_index, v.clause, v.severity, v.readings) for v in every.violations] == [
        (5, "ACT-DELTA-BASELINE", "error", ("Q12=run",)),
        (5, "SNP-SHOULD-SNAPSHOT", "warning", ("Q12=stream", "Q12=owner")),
        (6, "ACT-DELTA-BASELINE", "error", ("Q12=run",))]
    assert lint_wire([RS, snap(), RF, rs2, snap(), d, RF]).violations == ()


def test_a_should_warning_shows_beside_an_error_other_readings_make_at_the_same_event():
    """In the all-readings mode an event some readings reject still carries the SHOULD the other
    readings give there: in a later run, the parent's untagged delta on a subagent's activity
    with no fresh snapshot breaks ACT-DELTA-BASELINE under Q12=owner (not the owner) and under
    Q12=run (no snapshot in this run), and under Q12=stream, the draft's, it is the SHOULD of
    SNP-SHOULD-SNAPSHOT; each is reported with the readings it holds under (the SHOULD was
    dropped at that event before), and the gate follows the reading."""
    rs2 = {"type": "RUN_STARTED", "threadId": "t1", "runId": "r2"}
    wire = [RS, {"type": "SUBAGENT_STARTED", "subagentRunId": "s1"}, snap(subagentRunId="s1"),
            {"type": "SUBAGENT_FINISHED", "subagentRunId": "s1"}, RF, rs2,
            delta(patch=[{"op": "replace", "path": "/n", "value": 1}]), RF]
    every = lint_wire(wire)
    assert [(v.event_index, v.clause, v.severity, v.readings) for v in every.violations] == [
        (6, "ACT-DELTA-BASELINE", "error", ("Q12=owner",)),
        (6, "ACT-DELTA-BASELINE", "error", ("Q12=run",)),
        (6, "SNP-SHOULD-SNAPSHOT", "warning", ("Q12=stream",))]
    assert not every.conformant and every.count("warning") == 1
    assert {r.split(",")[2] for r in every.conformant_under()} == {"Q12=stream"}
    # each reading alone gives what the all-readings report says it holds under
    for option, expected in (("stream", [("SNP-SHOULD-SNAPSHOT", "warning")]),
                             ("owner", [("ACT-DELTA-BASELINE", "error")]),
                             ("run", [("ACT-DELTA-BASELINE", "error")])):
        alone = lint_wire(wire, DRAFT.with_(Q12=option)).violations
        assert [(v.clause, v.severity) for v in alone] == expected, option


def test_a_violation_only_some_readings_make_carries_them():
    wire = [RS, snap(subagentRunId="s1"), snap(replace=False), RF]   # untagged replace:false
    report = lint_wire(wire)
    (v,) = report.violations
    assert (v.clause, v.readings) == ("ACT-ATTR-AGREE", ("Q2=parent",))
    assert not report.conformant
    under = report.conformant_under()
    assert under == [r for r in report.reading_names() if r.startswith("Q2=continues,")]
    assert len(under) == 12 and under[0] == "Q2=continues,Q4-opener=current,Q12=stream,Q17=as-received"
    assert lint_wire(wire, DRAFT).violations == ()
    (only,) = lint_wire(wire, parse_reading("Q2=parent")).violations
    assert only.readings is None and only.clause == "ACT-ATTR-AGREE"


def test_q4_opener_decides_a_delta_after_a_remint():
    wire = [RS, snap(subagentRunId="s1"), snap(subagentRunId="s2"),     # re-minted to s2
            delta(subagentRunId="s1"), RF]                              # tagged by the first
    v, other = lint_wire(wire).violations
    assert (v.clause, v.readings) == ("SUB-OWNER-AGREE", ("Q4-opener=current",))
    # the leaves of the judgement merged: every Q12 option under Q4-opener=current, and the
    # Q12=owner reading whatever the opener
    assert (other.clause, other.kind, other.readings) == ("ACT-DELTA-BASELINE",
                                                          "delta-by-other-agent", ("Q12=owner",))


def test_fail_on_thresholds():
    report = lint_wire([RS, snap(**{"x": 1}), RF])            # a warning only
    assert FAIL_ON == ("error", "warning", "never")
    assert [report.fails(f) for f in FAIL_ON] == [False, True, False]
    with pytest.raises(ValueError):
        report.fails("info")


def test_typed_events_are_linted_through_their_wire_form():
    events = parse_event(RS), parse_event(snap()), parse_event(RF)
    assert lint_wire(events).violations == ()


# --- the pytest helper --------------------------------------------------------------------------

def test_assert_conformant_passes_and_fails_with_the_violations():
    report = assert_conformant([RS, snap(), RF])
    assert report.conformant
    body = "".join(f"data: {line}\n\n" for line in (
        '{"type":"RUN_STARTED","threadId":"t","runId":"r"}',
        '{"type":"ACTIVITY_DELTA","messageId":"a","activityType":"P","patch":[]}',
        '{"type":"RUN_FINISHED","threadId":"t","runId":"r"}'))
    with pytest.raises(AssertionError) as failure:
        assert_conformant(body)
    message = str(failure.value)
    assert "ACT-DELTA-BASELINE (MUST NOT)" in message and "event 1 (line 3)" in message
    assert "/messageId" in message
    # the readings: conformant under draft, not under Q2=parent
    untagged = [RS, snap(subagentRunId="s1"), snap(replace=False), RF]
    assert_conformant(untagged, reading="draft")
    with pytest.raises(AssertionError, match="only under Q2=parent"):
        assert_conformant(untagged)
    assert_conformant([RS, snap(**{"x": 1}), RF])
    with pytest.raises(AssertionError, match="undescribed|not described"):
        assert_conformant([RS, snap(**{"x": 1}), RF], fail_on="warning")


# --- the strategies' counterpart ----------------------------------------------------------------

def _open_at_end(events) -> int:
    """How many end-of-stream violations the trace's final belief calls for (independently of
    lint: from the monitor's own belief)."""
    belief = Belief()
    for e in events:
        belief = advance(belief, e)
    if belief.run != "active":
        return 0
    return len(belief.open_texts) + len(dict(belief.open_tools)) + len(belief.open_steps) + \
        len(belief.subagents) + 1


@settings(max_examples=150, **HYPOTHESIS)
@given(conformant_traces(max_events=14))
def test_lint_accepts_what_conformant_traces_generates(trace):
    report = lint_wire(as_wire(trace), DRAFT)
    per_event = [v for v in report.violations if v.event_index is not None]
    # the only per-event finding a conformant trace may carry is the SHOULD about a delta in a
    # later run without a fresh snapshot (a warning: conformance is judged on MUSTs)
    assert all(v.clause == "SNP-SHOULD-SNAPSHOT" and v.severity == "warning"
               for v in per_event), per_event
    at_end = [v for v in report.violations if v.event_index is None]
    assert len(at_end) == _open_at_end(trace)
    closed = list(trace) + ([parse_event(RF)] if _open_at_end(trace) else [])
    # closing what is open with RUN_FINISHED makes it conformant unless a text is in flight
    if _open_at_end(trace) == 1:
        assert lint_wire(as_wire(closed), DRAFT).conformant


def wire_of(trace) -> list[dict]:
    """The trace's wire form; an event whose undescribed members the parser stripped (only the
    producer model's ``x-vendor-hint`` move) is given back its wire as sent (``to_wire`` writes
    the described members only)."""
    sent = {parse_event(w): w for w in _MALFORMED_WIRE + (UNKNOWN_ROLE_TEXT_START_WIRE,)}
    return [sent.get(e, e.to_wire()) if e.notices else e.to_wire() for e in trace]


RELABELLED = frozenset({"undescribed-member"})
"""Monitor kinds lint cites by the member's own closed object (one violation per member); every
other kind, malformed members included, carries the monitor's clause."""


@settings(max_examples=250, **HYPOTHESIS)
@given(adversarial_traces(max_events=12, adversarial_rate=0.4))
def test_lint_flags_every_labelled_adversarial_move_with_its_clause(drawn):
    trace, labels = drawn
    report = lint_wire(wire_of(trace), DRAFT)
    per_event = {(v.event_index, v.kind): v for v in report.violations
                 if v.event_index is not None}
    for index, label in labels:
        if label.kind == "undescribed-member" and label.clause == "PRC-STRIP-POSITION":
            # an unrecognised role: lint reports it as its own kind (undescribed-role)
            assert (index, "undescribed-role") in per_event, (index, label, report.violations)
            continue
        assert (index, label.kind) in per_event, (index, label, report.violations)
        v = per_event[(index, label.kind)]
        if label.kind in RELABELLED:
            assert v.clause in registry() and v.clause.startswith("SCH-")
        else:
            assert v.clause == label.clause
    # and nothing the monitor does not flag itself, each with the monitor's clause (lint's one
    # check of its own is the SHOULD about a delta without a fresh snapshot)
    # (an event the model holds typed but whose wire form the parser refuses is judged by lint
    # on its wire: e.g. a MESSAGES_SNAPSHOT restating an activity a non-object-result delta left
    # holding an array, SCH-ACTIVITY-MESSAGE; the monitor never sees that wire)
    wire = wire_of(trace)
    unwired = {i for i, e in enumerate(trace)
               if not isinstance(e, Malformed) and isinstance(parse_event(wire[i]), Malformed)}
    monitor = {(i, v.kind): v.clause for i, v in check_trace(trace, DRAFT) if i not in unwired
               and v.clause != "PRC-STRIP-POSITION"}  # lint's undescribed-role, above
    assert {(i, k) for i, k in per_event if i not in unwired} - \
        {(i, k) for i, k in per_event
         if k in ("delta-without-fresh-snapshot", "undescribed-role")} == set(monitor)
    for key, clause in monitor.items():
        if key[1] not in RELABELLED:
            assert per_event[key].clause == clause, (key, per_event[key])
    # under every producer reading at once, each labelled move is still there (its readings
    # include draft's options, or all)
    every = lint_wire(wire_of(trace))
    for index, label in labels:
        kind = "undescribed-role" if label.clause == "PRC-STRIP-POSITION" else label.kind
        match = [v for v in every.violations if (v.event_index, v.kind) == (index, kind)]
        assert match and match[0].applies_under({"Q2": "continues", "Q4-opener": "current"})


# --- the chunk memo agrees with the model -------------------------------------------------------

@settings(max_examples=120, **HYPOTHESIS)
@given(adversarial_traces(max_events=8, adversarial_rate=0.3),
       st.sampled_from(["m1", "msg-1", "act-1", "c1"]),
       st.sampled_from([None, "sub-1", "sub-2"]), st.text(max_size=4), st.integers(0, 99))
def test_chunk_verdicts_do_not_depend_on_payload_or_timestamp(drawn, mid, tag, payload, stamp):
    trace, _ = drawn
    belief = Belief()
    for e in trace:
        belief = advance(belief, e)
    for cls, id_field in ((TextMessageContent, "message_id"), (ToolCallArgs, "tool_call_id")):
        assert cls in _PAYLOAD_ONLY
        plain = cls(**{id_field: mid}, delta="", subagent_run_id=tag)
        other = cls(**{id_field: mid}, delta=payload, subagent_run_id=tag, timestamp=stamp)
        for reading in (DRAFT, parse_reading("Q2=parent,Q4-opener=first")):
            assert violations(belief, plain, reading) == violations(belief, other, reading)
        assert advance(belief, plain) == advance(belief, other)


def test_the_belief_mirror_agrees_with_the_monitor_on_a_long_trace():
    # lint's indexed copy of the belief gives the monitor's own verdicts (check_trace keeps the
    # whole belief), on a trace that reuses ids across runs and snapshots
    rs = lambda n: {"type": "RUN_STARTED", "threadId": "t1", "runId": f"r{n}"}
    rf = lambda n: {"type": "RUN_FINISHED", "threadId": "t1", "runId": f"r{n}"}
    wire = []
    for run in range(1, 6):
        wire += [rs(run), snap(f"a{run}", subagentRunId="s1"), snap("a1", replace=False),
                 delta(f"a{run - 1}"), *text(f"m{run}"), *text("m1"),
                 {"type": "MESSAGES_SNAPSHOT", "messages": [
                     {"id": f"a{run}", "role": "activity", "activityType": "P", "content": {}},
                     {"id": "u1", "role": "user", "content": "q"}]},
                 snap("u1"), delta("a1"), rf(run)]
    events = [parse_event(w) for w in wire]
    for reading in (DRAFT, parse_reading("Q2=parent")):
        expected = {(i, v.kind) for i, v in check_trace(events, reading)}
        got = {(v.event_index, v.kind) for v in lint_wire(wire, reading).violations
               if v.event_index is not None and v.kind in ADVERSARIAL_KINDS}
        assert got == expected and expected


def test_the_pytest_plugin_offers_lint_as_a_fixture(tmp_path):
    """A producer team's own suite gets ``activity_lint`` from the installed plugin: a
    conformant stream passes, and one with a delta before any snapshot fails, listing the
    clause (run in a child pytest, as the team's CI would)."""
    import subprocess
    import sys
    (tmp_path / "test_agent.py").write_text(
        "GOOD = [{'type': 'RUN_STARTED', 'threadId': 't', 'runId': 'r'},\n"
        "        {'type': 'ACTIVITY_SNAPSHOT', 'messageId': 'a', 'activityType': 'T',\n"
        "         'content': {}},\n"
        "        {'type': 'RUN_FINISHED', 'threadId': 't', 'runId': 'r'}]\n"
        "BAD = [GOOD[0], {'type': 'ACTIVITY_DELTA', 'messageId': 'a', 'activityType': 'T',\n"
        "                 'patch': []}, GOOD[2]]\n"
        "def test_good(activity_lint):\n    activity_lint(GOOD)\n"
        "def test_bad(activity_lint):\n    activity_lint(BAD)\n", encoding="utf-8")
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                        str(tmp_path / "test_agent.py")], capture_output=True, text=True,
                       cwd=tmp_path, timeout=120)
    assert "1 failed, 1 passed" in r.stdout, r.stdout + r.stderr
    assert "ACT-DELTA-BASELINE" in r.stdout


def test_a_delta_on_an_earlier_runs_activity_is_reported_under_q12_run():
    """Lint carries the producer monitor's ``earlier`` activities across runs (Q12=run,
    ACT-DELTA-BASELINE): a delta in run 2 on an activity only run 1's snapshot created breaks
    the rule under Q12=run alone, as :func:`model.producer.check_trace` says, and restating it
    with a snapshot in run 2 mends it."""
    from model.producer import check_trace
    from model.readings import DRAFT
    from model.wire import parse_events
    run = lambda kind, rid: {"type": kind, "threadId": "t", "runId": rid}  # noqa: E731
    snap = {"type": "ACTIVITY_SNAPSHOT", "messageId": "act-1", "activityType": "PLAN",
            "content": {"n": 0}}
    delta = {"type": "ACTIVITY_DELTA", "messageId": "act-1", "activityType": "PLAN",
             "patch": [{"op": "replace", "path": "/n", "value": 2}]}
    wire = [run("RUN_STARTED", "r1"), snap, run("RUN_FINISHED", "r1"), run("RUN_STARTED", "r2"),
            delta, run("RUN_FINISHED", "r2")]
    reading = DRAFT.with_(Q12="run")
    assert [(i, v.kind) for i, v in check_trace(parse_events(wire), reading)] == [
        (4, "delta-from-earlier-run")]
    assert [(v.event_index, v.clause, v.kind) for v in lint_wire(wire, reading).violations] == [
        (4, "ACT-DELTA-BASELINE", "delta-from-earlier-run")]
    assert [(v.event_index, v.kind, v.readings) for v in lint_wire(wire).violations] == [
        (4, "delta-from-earlier-run", ("Q12=run",)),
        (4, "delta-without-fresh-snapshot", ("Q12=stream", "Q12=owner"))]
    assert [(v.event_index, v.kind, v.severity) for v in lint_wire(wire, DRAFT).violations] == [
        (4, "delta-without-fresh-snapshot", "warning")]  # the draft's SHOULD only
    restated = wire[:4] + [snap] + wire[4:]
    assert not lint_wire(restated).violations
