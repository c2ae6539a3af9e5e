"""Tests for model.verdict: fold (and step_record), evaluate, trace_states, reading_leaves,
partition and knob_splits.

The all-readings exploration (reading_leaves / partition) is checked by hand on small traces and
against brute force on Hypothesis-generated traces: for a deterministic sample of complete
readings, evaluating the trace under the reading gives exactly the verdict of the one leaf whose
partial assignment the reading is consistent with.
"""
from __future__ import annotations

import itertools

import pytest
from hypothesis import HealthCheck, given, settings

from model.readings import (DRAFT, KNOBS, PRESETS, PartialReading, Reading, all_readings,
                            reading_count)
from model.consumer import initial_state, run_input, step
from model.producer import Belief, advance, violations
from model.verdict import (StepRecord, evaluate, fold, knob_splits, partition, reading_leaves,
                           step_record, trace_states, verdict_key)
from model.wire import parse_events
from properties.strategies import adversarial_traces, conformant_traces

from wirekit import RF, RS, delta, snap, trace  # noqa: E402


# --- the trace fold -----------------------------------------------------------------------------

def test_fold_records_each_event_with_its_branch_and_outcome():
    events = trace(snap(), delta(patch=[{"op": "replace", "path": "/n", "value": 1}]),
                   delta("missing"), RF)
    records = fold(events)
    assert [r.index for r in records] == [0, 1, 2, 3, 4]
    assert [r.event for r in records] == list(events)
    assert [r.branch for r in records] == ["lifecycle.run-boundary", "snapshot.create",
                                           "delta.apply", "delta.missing",
                                           "lifecycle.run-boundary"]
    assert records[0].before == initial_state()
    assert all(a.after is b.before for a, b in zip(records, records[1:]))
    assert [[w.code for w in r.warnings] for r in records] == \
        [[], [], [], ["ACTIVITY_DELTA_TARGET_MISSING"], []]
    assert all(r.fatal is None and r.violations == () for r in records)
    assert records[2].run_input == run_input(records[2].after) == []
    assert records[1].after.messages[0].content == '{"n":0}'
    assert records[2].after.messages[0].content == '{"n":1}'


def test_fold_stops_at_the_first_fatal_and_trace_states_repeats_the_halted_state():
    events = trace(snap(), delta(patch=[{"op": "replace", "path": "", "value": []}]), snap("b"))
    records = fold(events, DRAFT.with_(Q7="fatal"))
    assert len(records) == 3 and records[-1].branch == "delta.non-object"
    assert records[-1].fatal.code == "ACTIVITY_CONTENT_NOT_OBJECT"
    assert records[-1].fatal.branch == "delta.non-object" and records[-1].after.halted
    states = trace_states(events, DRAFT.with_(Q7="fatal"))
    assert len(states) == 4 and states[3] is states[2] and states[2] == records[-1].after
    # the model's own step names what the halted consumer does with the event not folded
    assert step(records[-1].after, events[3], DRAFT).branch == "lifecycle.halted"


def test_evaluate_is_the_fold_summed():
    events = parse_events([RS, snap(), delta(patch=[{"op": "remove", "path": "/x"}]),
                           {"type": "TEXT_MESSAGE_CONTENT", "messageId": "nope", "delta": "x"},
                           {"type": "RUN_STARTED", "threadId": "t1", "runId": "r2"}])
    records = fold(events)
    verdict = evaluate(events)
    assert verdict.warnings == tuple((r.index, w) for r in records for w in r.warnings)
    assert [w.code for _, w in verdict.warnings] == ["ACTIVITY_PATCH_FAILED", "TEXT_TARGET_MISSING"]
    assert verdict.fatal == (4, records[-1].fatal) and verdict.fatal[1].code == "RUN_ALREADY_ACTIVE"
    assert verdict.events_applied == len(records) == 5 and verdict.state == records[-1].after
    assert evaluate([]).events_applied == 0 and fold([]) == []


def test_fold_with_the_monitor_records_the_producer_violations():
    events = trace(delta("never-created"), snap())
    records = fold(events, monitor=True)
    belief, expected = Belief(), []
    for event in events:
        expected.append(violations(belief, event, DRAFT))
        belief = advance(belief, event)
    assert [r.violations for r in records] == expected
    assert {v.clause for v in records[1].violations} >= {"ACT-DELTA-BASELINE"}
    assert records[2].violations == ()
    assert all(r.violations == () for r in fold(events))


def test_fold_steps_a_mutant_with_its_own_step():
    from properties.zoo import MUTANT_BY_NAME
    mutant = MUTANT_BY_NAME["delta-missing-fatal"]
    events = trace(delta("missing"), snap())
    assert [r.branch for r in fold(events)] == ["lifecycle.run-boundary", "delta.missing",
                                                "snapshot.create"]
    records = fold(events, step=mutant.step)
    assert len(records) == 2 and records[1].fatal is not None and records[1].after.halted
    assert records[1].branch == "delta.missing"


def test_step_record_is_one_event_of_the_fold():
    events = trace(snap(), delta("missing"))
    folded = fold(events, monitor=True)
    belief = advance(Belief(), events[0])
    belief = advance(belief, events[1])
    record = step_record(2, folded[2].before, events[2], DRAFT, None, belief)
    assert record == folded[2] and isinstance(record, StepRecord)
    assert step_record(2, folded[2].before, events[2]).violations == ()








# --- deterministic reading sample ---------------------------------------------------------------

_RADICES = [len(k.options) for k in KNOBS]


def reading_at(index: int) -> Reading:
    """The reading at ``index`` of all_readings() (itertools.product order, last knob fastest;
    draft is index 0, so all_readings() and the product agree index for index)."""
    choice = []
    for radix in reversed(_RADICES):
        index, digit = divmod(index, radix)
        choice.append(digit)
    choice.reverse()
    return Reading(**{k.attr: k.option_names[d] for k, d in zip(KNOBS, choice)})


def test_reading_at_matches_all_readings():
    prefix = list(itertools.islice(all_readings(), 2 * 997 + 1))
    assert prefix[0] == DRAFT
    assert [reading_at(i) for i in (0, 1, 997, 2 * 997)] == [prefix[0], prefix[1], prefix[997],
                                                          prefix[2 * 997]]
    assert all(reading_at(i) == r for i, r in enumerate(prefix[:500]))
    assert reading_at(reading_count() - 1) == Reading(
        **{k.attr: k.option_names[-1] for k in KNOBS})


_STRIDE = reading_count() // 30 + 997   # ~30 readings spread over the whole space
SAMPLE: list[Reading] = list(dict.fromkeys(
    [DRAFT, *PRESETS.values()]
    + [reading_at(i) for i in range(0, reading_count(), _STRIDE)]
    + [DRAFT.with_(**{k.id: o}) for k in KNOBS for o in k.option_names[1:]]))


def test_sample_is_spread():
    assert len(SAMPLE) >= 50
    for k in KNOBS:   # every option of every knob occurs in the sample
        assert {getattr(r, k.attr) for r in SAMPLE} == set(k.option_names)


def consistent(reading: Reading, assignment: dict) -> bool:
    values = reading.as_dict()
    return all(values[k] == v for k, v in assignment.items())


def check_against_brute_force(events):
    leaves = reading_leaves(events)
    assert leaves and consistent(DRAFT, leaves[0][0])  # the first leaf contains draft
    for reading in SAMPLE:
        matching = [v for a, v in leaves if consistent(reading, a)]
        assert len(matching) == 1, reading.name
        assert evaluate(events, reading).to_json() == matching[0].to_json(), reading.name
    return leaves


def check_splits(events, leaves):
    splits = knob_splits(leaves)
    order = [k.id for k in KNOBS]
    assert list(splits) == sorted(splits, key=order.index)
    for knob, (a, b) in splits.items():
        common = set(a) & set(b)
        assert knob in common and a[knob] != b[knob]
        assert [k for k in common if a[k] != b[k]] == [knob]
        ka = verdict_key(evaluate(events, PartialReading(a).complete()))
        kb = verdict_key(evaluate(events, PartialReading(b).complete()))
        assert ka != kb
        # two complete readings that differ only in the knob, and disagree
        ra = DRAFT.with_(**b).with_(**a)
        rb = ra.with_(**{knob: b[knob]})
        assert ra.differences(rb) == {knob: a[knob]}
        assert verdict_key(evaluate(events, ra)) == ka
        assert verdict_key(evaluate(events, rb)) == kb
    return splits


# --- hand-computed partitions -------------------------------------------------------------------

def test_trace_touching_no_knob_has_one_class():
    events = trace(snap(content={"items": []}),
                   delta(patch=[{"op": "add", "path": "/items/-", "value": 1}]), RF)
    leaves = reading_leaves(events)
    assert len(leaves) == 1 and leaves[0][0] == {}
    classes = partition(events)
    assert len(classes) == 1
    (only,) = classes
    assert only.assignments == [{}]
    assert only.contains_draft and only.representative == DRAFT
    assert only.verdict.to_json() == evaluate(events).to_json()
    assert only.verdict.to_json()["messages"] == [
        {"id": "act-1", "role": "activity", "activityType": "PLAN", "content": {"items": [1]}}]
    assert knob_splits(leaves) == {}


Q7_EVENTS = trace(snap(atype="PROGRESS", content={"status": "running"}),
                  delta(atype="PROGRESS", patch=[{"op": "replace", "path": "", "value": []}]), RF)
_RUNNING = {"id": "act-1", "role": "activity", "activityType": "PROGRESS",
            "content": {"status": "running"}}


def test_fc_like_q7_trace_leaves():
    leaves = reading_leaves(Q7_EVENTS)
    assert [a for a, _ in leaves] == [{"Q7": "apply"}, {"Q7": "skip", "Q13": "tolerate"},
                                      {"Q7": "skip", "Q13": "fatal"}, {"Q7": "fatal"}]
    got = [v.to_json(detail=False) for _, v in leaves]
    assert got[0] == {"messages": [dict(_RUNNING, content=[])], "warnings": [], "fatal": None,
                      "runInput": [], "state": {}, "run": "finished"}
    assert got[1] == {"messages": [_RUNNING], "fatal": None, "runInput": [], "state": {},
                      "run": "finished",
                      "warnings": [{"code": "ACTIVITY_PATCH_FAILED", "messageId": "act-1",
                                    "atEvent": 2, "clause": "SNP-SURFACE-FAILURE"}]}
    assert got[2] == {"messages": [_RUNNING], "warnings": [], "runInput": [], "state": {},
                      "run": "rejected",
                      "fatal": {"code": "ACTIVITY_PATCH_FAILED", "atEvent": 2,
                                "clause": "SNP-SURFACE-FAILURE", "messageId": "act-1"}}
    assert got[3] == {"messages": [_RUNNING], "warnings": [], "runInput": [], "state": {},
                      "run": "rejected",
                      "fatal": {"code": "ACTIVITY_CONTENT_NOT_OBJECT", "atEvent": 2,
                                "clause": "ACT-DELTA-OBJECT-DETECT", "messageId": "act-1"}}
    assert [v.events_applied for _, v in leaves] == [4, 4, 3, 3]


def test_fc_like_q7_trace_partition():
    classes = partition(Q7_EVENTS)
    assert [c.assignments for c in classes] == [[{"Q7": "apply"}],
                                                [{"Q7": "skip", "Q13": "tolerate"}],
                                                [{"Q7": "skip", "Q13": "fatal"}],
                                                [{"Q7": "fatal"}]]
    assert [c.contains_draft for c in classes] == [True, False, False, False]
    assert [c.representative for c in classes] == [
        DRAFT, DRAFT.with_(Q7="skip"), DRAFT.with_(Q7="skip", Q13="fatal"), DRAFT.with_(Q7="fatal")]
    for c in classes:
        assert verdict_key(evaluate(Q7_EVENTS, c.representative)) == verdict_key(c.verdict)
        for a in c.assignments:
            assert verdict_key(evaluate(Q7_EVENTS, PartialReading(a).complete())) == \
                verdict_key(c.verdict)


def test_fc_like_q7_trace_knob_splits():
    leaves = reading_leaves(Q7_EVENTS)
    assert knob_splits(leaves) == {
        "Q7": ({"Q7": "apply"}, {"Q7": "skip", "Q13": "tolerate"}),
        "Q13": ({"Q7": "skip", "Q13": "tolerate"}, {"Q7": "skip", "Q13": "fatal"})}
    check_splits(Q7_EVENTS, leaves)
    check_against_brute_force(Q7_EVENTS)


def test_classes_group_equal_verdicts():
    # Q2 is consulted (untagged replace:false on a subagent activity) but under Q2=continues Q3 is
    # never asked, and under Q2=parent Q3=keep gives the same verdict as Q2=continues.
    events = trace(snap(subagentRunId="sub-1"), snap(content={"n": 1}, replace=False))
    leaves = reading_leaves(events)
    assert [a for a, _ in leaves] == [
        {"Q2": "continues"}, {"Q2": "parent", "Q3": "keep"}, {"Q2": "parent", "Q3": "warn"},
        {"Q2": "parent", "Q3": "skip"}, {"Q2": "parent", "Q3": "fatal"}]
    classes = partition(events)
    assert [c.assignments for c in classes] == [
        [{"Q2": "continues"}, {"Q2": "parent", "Q3": "keep"}],
        [{"Q2": "parent", "Q3": "warn"}, {"Q2": "parent", "Q3": "skip"}],
        [{"Q2": "parent", "Q3": "fatal"}]]
    for c in classes:
        assert verdict_key(evaluate(events, c.representative)) == verdict_key(c.verdict)
    splits = check_splits(events, leaves)
    assert set(splits) == {"Q2", "Q3"}
    check_against_brute_force(events)


def test_leaves_of_a_multi_knob_trace():
    events = trace(snap(metadata={"a": 1}),
                   snap(content={"n": 5}, replace=False, metadata={"b": 2}),
                   delta(atype="SEARCH", patch=[{"op": "remove", "path": "/x"}], metadata={"c": 3}),
                   {"type": "MESSAGES_SNAPSHOT", "messages": [
                       {"id": "act-2", "role": "activity", "activityType": "PLAN",
                        "content": {}}]},
                   snap(content={"n": 9}))
    leaves = check_against_brute_force(events)
    used = set().union(*(a for a, _ in leaves))
    assert {"Q1", "Q5", "Q6", "Q8", "Q13"} <= used
    check_splits(events, leaves)
    for c in partition(events):
        assert verdict_key(evaluate(events, c.representative)) == verdict_key(c.verdict)


def test_max_leaves_guard():
    with pytest.raises(RuntimeError):
        reading_leaves(Q7_EVENTS, max_leaves=2)
    assert len(reading_leaves(Q7_EVENTS, max_leaves=4)) == 4


# --- brute force on generated traces ------------------------------------------------------------

@settings(max_examples=60, derandomize=True, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(conformant_traces())
def test_leaves_agree_with_brute_force_on_conformant_traces(events):
    leaves = check_against_brute_force(events)
    check_splits(events, leaves)
    classes = partition(events)
    assert classes[0].contains_draft and classes[0].representative == DRAFT
    assert sum(len(c.assignments) for c in classes) == len(leaves)
    assert len({verdict_key(c.verdict) for c in classes}) == len(classes)
    for c in classes:
        assert verdict_key(evaluate(events, c.representative)) == verdict_key(c.verdict)


@settings(max_examples=40, derandomize=True, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(adversarial_traces(adversarial_rate=0.4))
def test_leaves_agree_with_brute_force_on_adversarial_traces(drawn):
    events, _labels = drawn
    leaves = check_against_brute_force(events)
    check_splits(events, leaves)
