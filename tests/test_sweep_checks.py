"""The all-readings sweep's first-time checks (issue 21): what their shortcuts stand on. A
baseline decision is settled only on a marked activity (so :func:`model.consumer.settle` need
not test for it), and P37's decisions kept per transition are those read afresh."""
from __future__ import annotations

import properties.search.sweep_cache as sweep_cache
from model.consumer import initial_state, step
from model.events import ActivitySnapshot, Message, RunStarted
from model.readings import DRAFT, RecordingReading
from properties.catalogue import (PROPERTIES, _renamed_event, _renamed_state,
                                  renamed_decision_alike)
from properties.search.bfs import search
from properties.search.explore import EXPLORE_VOCABULARY, ExploreOptions, explore
from properties.search.system_sweep import SweepSystem


def _settles(monkeypatch, **kwargs) -> list:
    """Every (state, event, decision) the sweep settles."""
    seen = []
    real = sweep_cache.settle

    def spy(state, event, d):
        seen.append((state, event, d))
        return real(state, event, d)
    monkeypatch.setattr(sweep_cache, "settle", spy)
    explore(ExploreOptions(reading=None, **kwargs))
    monkeypatch.undo()
    return seen


def test_a_baseline_is_settled_only_on_a_stale_or_earlier_run_activity(monkeypatch):
    """``settle`` clears an activity's marks on a baseline decision without asking whether it
    has any: ``_decide_snapshot`` decides a baseline only on a focus that is stale or of an
    earlier run, so the state settled holds the id in ``stale`` or ``earlier``; on every
    settle of a depth-4 sweep and of an adversarial depth-3 one."""
    seen = _settles(monkeypatch, depth=4) + _settles(monkeypatch, depth=3, adversarial=True)
    baselines = [(state, event) for state, event, d in seen if d.baseline]
    assert len(seen) > 10000 and len(baselines) > 100
    for state, event in baselines:
        assert event.message_id in state.stale or event.message_id in state.earlier
    assert any(e.message_id in s.stale for s, e in baselines)


def test_a_snapshot_on_an_earlier_run_activity_clears_its_mark():
    """The other mark a baseline clears (an earlier run's activity, Q23), which the sweep meets
    only past depth 4: a snapshot of this run restating it is a baseline that clears it, and
    another activity's snapshot leaves it marked."""
    held = Message("act-1", "activity", '{"n":0}', "PLAN", first_owner=None)
    state = step(initial_state(messages=(held,)), RunStarted(), DRAFT).state
    assert state.earlier == {"act-1"}
    other = step(state, ActivitySnapshot(message_id="act-2", activity_type="PLAN",
                                         content='{"n":0}'), DRAFT)
    assert other.state.earlier == {"act-1"}
    restated = step(state, ActivitySnapshot(message_id="act-1", activity_type="PLAN",
                                            content='{"n":1}', replace=False), DRAFT)
    assert restated.state.earlier == frozenset() and restated.state.stale == frozenset()


def test_p37_decisions_kept_per_transition_are_those_read_afresh():
    """``_Restep.decision`` keeps the renamed decision tree of a transition with the renamed
    state and event it was read for; the same objects give the same tree, and another state
    (an equal copy, or another state) is read afresh, never taken from the kept one."""
    system = SweepSystem(EXPLORE_VOCABULARY, tuple(PROPERTIES), False)
    search(system, 3)
    c = system.cache
    checked = 0
    for (s, e), pair in list(c.step_decisions.items())[:400]:
        if pair[0] is None:
            continue
        st, ev = _renamed_state(c.states.values[s]), _renamed_event(c.events.values[e])
        first = sweep_cache._Restep(c, RecordingReading(DRAFT), s, e).decision(st, ev)
        kept = c.step_decisions[(s, e)]
        assert kept[1] is st and kept[2] is ev
        again = sweep_cache._Restep(c, RecordingReading(DRAFT), s, e)
        assert again.decision(st, ev) is first  # the kept tree
        assert kept[3] is c.decisions_of(st, c.events.number(ev))
        # an equal copy of the state is another object: read afresh, the same decision
        copy = st.but(messages=tuple(st.messages))
        assert copy is not st and copy == st
        assert again.decision(copy, ev) == first and c.step_decisions[(s, e)][1] is copy
        checked += 1
    assert checked > 100


def test_p37_renamed_tree_memo_answers_as_the_decisions_read_one_at_a_time():
    """``_Restep.renamed_alike`` (the memo of whole renamed decision trees, shared by every
    state with one focus) says "alike" exactly where reading the renamed decision and the
    step's own one at a time (``decision``, ``step_decision``,
    ``catalogue.renamed_decision_alike``) finds them alike, under every reading of a class the
    sweep met, and records the same knobs as consulted."""
    system = SweepSystem(EXPLORE_VOCABULARY, tuple(PROPERTIES), False)
    search(system, 3)
    c = system.cache
    readings = [c.representative(i) for i in range(0, len(c.classes.values), 7)][:12]
    assert len(readings) >= 5
    compared = alike = 0
    for (s, e), pair in list(c.step_decisions.items())[:300]:
        if pair[0] is None:
            continue
        st, ev = _renamed_state(c.states.values[s]), _renamed_event(c.events.values[e])
        for reading in readings:
            fast = sweep_cache._Restep(c, RecordingReading(reading), s, e)
            slow = sweep_cache._Restep(c, RecordingReading(reading), s, e)
            got = fast.renamed_alike(st, ev, renamed_decision_alike)
            theirs, mine = slow.decision(st, ev), slow.step_decision()
            want = theirs is not None and renamed_decision_alike(mine, theirs)
            if got:  # "alike" only where it is, with the same knobs recorded
                assert want and fast.recorder.consulted == slow.recorder.consulted
            else:
                assert fast.recorder.consulted == []
            compared += 1
            alike += got
    assert compared > 1000 and alike > 0.9 * compared
    # kept by the identity of a focus's tree, which local_trees holds
    held = {id(tree) for tree in c.local_trees.values()}
    assert c.renamed_trees and all(id(v[0]) in held for v in c.renamed_trees.values())
