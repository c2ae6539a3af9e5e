"""Branch identity (model.branches, model.codes): every declared branch is reached and every branch
reached is declared.

What is stepped: the exhaustive exploration (properties.search.explore under draft with the adversarial
moves, depth 3, its default vocabulary), each explored edge stepped under every reading at once
(properties.search.reading_classes.step_leaves); the field cases, each event stepped under every reading from
the draft consumer's state; and a few traces for what the exploration vocabulary cannot send (a
malformed non-activity event, STATE_* events, tool calls, an id held by another role, a snapshot
for a dropped id, an event after a fatal). From every step: the branch it names, and the (code,
kind, branch) of each warning and fatal, compared with the declared tables both ways.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from model.branches import BRANCH_BY_ID, BRANCH_LIST, BRANCHES, STEP_BRANCHES
from model.codes import CODE_LIST, FATAL, WARNING
from model.consumer import initial_state, run_input, step
from model.readings import DRAFT, parse_reading
from model.verdict import fold
from model.wire import parse_events
from properties.search.explore import ExploreOptions, explore
from properties.search.reading_classes import step_leaves

from wirekit import RF, RS, delta, snap  # noqa: E402

TEXT = {"type": "TEXT_MESSAGE_START", "messageId": "msg-1", "role": "assistant"}

# Traces for branches and codes the exploration vocabulary does not reach (wire form).
EXTRA_TRACES = {
    "snapshot.not-activity": [RS, TEXT, snap("msg-1")],
    "delta.not-activity": [RS, TEXT, delta("msg-1")],
    "snapshot.seen-not-held": [RS, snap("act-1"), {"type": "MESSAGES_SNAPSHOT", "messages": [
        {"id": "act-2", "role": "activity", "activityType": "PLAN", "content": {}}]},
        snap("act-1")],
    "malformed.fatal (not an activity event)": [
        RS, {"type": "TEXT_MESSAGE_START", "messageId": 5, "role": "assistant"}],
    "lifecycle.halted": [RS, RS, snap("act-1"), RF],
    "text.target-missing": [RS, {"type": "TEXT_MESSAGE_CONTENT", "messageId": "msg-9",
                                 "delta": "x"},
                            {"type": "TOOL_CALL_ARGS", "toolCallId": "tc-9", "delta": "x"}],
    "tool calls": [RS, {"type": "TOOL_CALL_START", "toolCallId": "tc-1", "toolCallName": "f"},
                   {"type": "TOOL_CALL_ARGS", "toolCallId": "tc-1", "delta": "{}"},
                   {"type": "TOOL_CALL_END", "toolCallId": "tc-1"},
                   {"type": "TOOL_CALL_RESULT", "messageId": "r-1", "toolCallId": "tc-1",
                    "content": "ok"},
                   {"type": "TOOL_CALL_RESULT", "messageId": "r-1", "toolCallId": "tc-1",
                    "content": "again"}],
    "step.*": [RS, {"type": "STEP_STARTED", "stepName": "s"},
               {"type": "STEP_FINISHED", "stepName": "s"}, {"type": "STEP_FINISHED", "stepName": "s"}],
    "step.unbalanced (opened twice)": [RS, {"type": "STEP_STARTED", "stepName": "s"},
                                       {"type": "STEP_STARTED", "stepName": "s"}],
    "text.still-open (X1=drop-open)": [RS, TEXT, {"type": "MESSAGES_SNAPSHOT", "messages": []},
                                       TEXT],
    "snapshot.resync (Q14=adopt)": [RS, snap("act-1"),
                                    delta("act-1", patch=[{"op": "remove", "path": "/x"}]),
                                    snap("act-1", atype="SEARCH", replace=False)],
    "delta.owner-ended (Q15=closed)": [RS, {"type": "SUBAGENT_STARTED", "subagentRunId": "sub-1"},
                                       snap("act-1", subagentRunId="sub-1"),
                                       {"type": "SUBAGENT_FINISHED", "subagentRunId": "sub-1"},
                                       delta("act-1")],
    "delta.earlier-run (Q23=run-scoped)": [RS, snap("act-1"), RF, RS | {"runId": "r2"},
                                           delta("act-1")],
    "state.*": [RS, {"type": "STATE_SNAPSHOT", "snapshot": {"a": 1}},
                {"type": "STATE_DELTA", "delta": [{"op": "replace", "path": "/a", "value": 2}]},
                {"type": "STATE_DELTA", "delta": [{"op": "remove", "path": "/b"}]},
                {"type": "STATE_DELTA", "delta": [{"op": "increment", "path": "/a"}]}],
}


EXTRA_READINGS = {"text.still-open (X1=drop-open)": "X1=drop-open"}
"""Extra traces whose states are reached under another reading than draft."""


class Reached:
    """What the steps named: step branches, (code, kind, branch) of warnings and fatals, and
    whether a run input stripped an activity message."""

    def __init__(self):
        self.steps: set[str] = set()
        self.surfaced: set[tuple[str, str, str]] = set()
        self.stripped = False
        self.results = 0

    def add(self, result) -> None:
        self.results += 1
        self.steps.add(result.branch)
        for w in result.warnings:
            self.surfaced.add((w.code, WARNING, w.branch))
            assert w.clause == BRANCHES[w.branch][0], w
        fatal = result.fatal
        if fatal is not None:
            self.surfaced.add((fatal.code, FATAL, fatal.branch))
            assert result.branch == fatal.branch, result
            if fatal.branch != "malformed.fatal":  # a malformed event's fatal cites its schema
                assert fatal.clause == BRANCHES[fatal.branch][0], fatal
        held = result.state.messages
        if not self.stripped and any(m.is_activity for m in held):
            self.stripped = len(run_input(result.state)) < len(held)

    def walk(self, events, start=None, reading=DRAFT) -> None:
        """Step ``events`` from ``reading``'s consumer state (default draft's), each under every
        reading."""
        state = initial_state(start)
        for event in events:
            for _, result in step_leaves(state, event):
                self.add(result)
            state = step(state, event, reading).state


@pytest.fixture(scope="module")
def reached() -> Reached:
    from counterexamples.field_cases import load_cases
    out = Reached()
    report = explore(ExploreOptions(depth=3, reading=DRAFT, adversarial=True, properties=(),
                                    check_readings=False, keep_edges=True))
    assert report.complete and report.edges > 1000
    seen = set()
    for source, _, event in report.edges_seen:
        state = report.nodes[source][1]
        if (state, event) not in seen:
            seen.add((state, event))
            for _, result in step_leaves(state, event):
                out.add(result)
    for case in load_cases():
        out.walk(parse_events(list(case.events)), case.initial_state)
    for name, wire in EXTRA_TRACES.items():
        out.walk(parse_events(wire), reading=parse_reading(EXTRA_READINGS.get(name, "draft")))
    return out


def test_every_step_branch_is_reached_and_every_reached_branch_is_declared(reached):
    assert reached.steps == STEP_BRANCHES


def test_every_code_comes_from_its_declared_branches_and_nowhere_else(reached):
    declared = {(c.code, kind, b) for c in CODE_LIST for kind in c.kinds for b in c.branches}
    assert reached.surfaced == declared


def test_every_declared_branch_is_taken_somewhere(reached):
    taken = reached.steps | {b for _, _, b in reached.surfaced} | \
        ({"run-input.strip"} if reached.stripped else set())
    assert taken == set(BRANCHES)
    notices = {b.id for b in BRANCH_LIST if b.where == "notice"}
    assert notices and not notices & reached.steps  # notices never name a step
    assert notices <= {b for _, _, b in reached.surfaced}


def test_the_exploration_alone_reaches_most_branches():
    """Guard against the reach fixture resting on its extra traces: the default vocabulary at
    depth 3 (draft, adversarial) reaches all but the few branches the extras are for."""
    out = Reached()
    report = explore(ExploreOptions(depth=3, reading=DRAFT, adversarial=True, properties=(),
                                    check_readings=False, keep_edges=True))
    for source, _, event in report.edges_seen:
        for _, result in step_leaves(report.nodes[source][1], event):
            out.add(result)
    missing = STEP_BRANCHES - out.steps
    # at most these (the adversarial moves may reach some of them: steps, ids of another role)
    assert missing <= {"snapshot.not-activity", "delta.not-activity", "snapshot.seen-not-held",
                       "lifecycle.halted", "state.snapshot", "state.delta", "step.track",
                       "step.unbalanced", "text.still-open",
                       # depth 4 or 5: a skipped delta before the snapshot, a second run, an
                       # invocation announced and finished before the delta
                       "snapshot.resync", "delta.earlier-run", "delta.owner-ended"}
    assert {"lifecycle.halted", "state.snapshot", "state.delta", "text.still-open",
            "delta.earlier-run", "delta.owner-ended"} <= missing


@pytest.mark.parametrize("q7, branch, fatal", [
    ("fatal", "delta.non-object", "ACTIVITY_CONTENT_NOT_OBJECT"), ("apply", "delta.non-object", None),
    ("skip", "delta.patch-failed", None)])
def test_a_root_array_delta_steps_on_delta_non_object(q7, branch, fatal):
    """Under Q7=fatal (the issue's case) and apply the step names delta.non-object; under skip
    the patch counts as failed and the step names delta.patch-failed, with its warning."""
    events = parse_events([RS, snap("act-1"),
                           delta("act-1", patch=[{"op": "replace", "path": "", "value": []}])])
    record = fold(events, DRAFT.with_(Q7=q7))[-1]
    assert record.branch == branch
    assert (record.fatal.code if record.fatal else None) == fatal
    assert [(w.code, w.branch) for w in record.warnings] == \
        ([("ACTIVITY_PATCH_FAILED", "delta.patch-failed")] if q7 == "skip" else [])


def test_every_branch_id_is_written_at_its_code():
    """Each step and notice branch id appears as a literal in model/consumer.py (grep finds the
    code from the id), run-input.strip in run_input's docstring, and every dotted lower-case
    literal there is a declared branch."""
    source = (Path(__file__).resolve().parents[1] / "model" / "consumer.py").read_text()
    literals = set(re.findall(r'"([a-z]+(?:-[a-z]+)*\.[a-z]+(?:-[a-z]+)*)"', source))
    assert literals == {b.id for b in BRANCH_LIST if b.where != "run-input"}
    assert "``run-input.strip``" in source
    assert BRANCH_BY_ID["run-input.strip"].where == "run-input"
