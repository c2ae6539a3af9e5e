"""The all-readings sweep's re-steps read off decision trees (P37's decided shortcut), and the
single-reading search on the shared producer table (issue 21)."""
from __future__ import annotations

import properties.catalogue as catalogue
from model.consumer import HALT, settle
from model.producer import advance, moves
from model.readings import DRAFT
from properties.catalogue import PROPERTY_BY_ID
from properties.search.explore import EXPLORE_VOCABULARY, ExploreOptions, explore
from properties.search.move_table import MoveTable
from properties.search.system_single import SingleSystem
from model.consumers import REFERENCE
from test_explore import plant_act_1_decider
from test_sweep_checks import _settles


def _renamed_decision(d):
    """A decision with its message renamed as P37 renames ids."""
    return d if d.message is None else d.but(message=catalogue._renamed_message(d.message))


def test_settle_treats_message_ids_as_names_on_every_settle_of_a_sweep(monkeypatch):
    """What P37's decided shortcut stands on (:func:`properties.catalogue.decided_alike`):
    settling the renamed decision on the renamed state, on the renamed event, gives the renamed
    result (state; a fatal or none; the branch), for every (state, event, decision) the sweep
    settles to depth 3, its re-steps included."""
    # the shortcut off: every P37 check settles the renamed decision too
    monkeypatch.setattr(catalogue, "decided_alike", lambda t, before, event: False)
    seen = _settles(monkeypatch, depth=3)
    assert len(seen) > 1000
    renamed = sum(1 for _, event, _ in seen if event.message_id.startswith("op4que:"))
    assert renamed > 300  # the re-steps' settles are among them
    changes = set()
    for state, event, d in seen:
        mine = settle(state, event, d)
        theirs = settle(catalogue._renamed_state(state),
                        catalogue._renamed_event(event), _renamed_decision(d))
        assert theirs.state == catalogue._renamed_state(mine.state), (state, event, d)
        assert (theirs.fatal is None) == (mine.fatal is None) and \
            theirs.branch == mine.branch
        changes.add(d.change)
    assert HALT in changes and len(changes) >= 4


def test_the_decided_shortcut_agrees_with_the_full_re_step_on_every_p37_check(monkeypatch):
    """Wherever P37 takes the decided shortcut in a depth-3 sweep, re-stepping the renamed
    input and comparing the states (what it does without the shortcut) gives the same verdict;
    and the sweep's outcome is the same with the shortcut off."""
    taken = []
    real = catalogue.decided_alike

    def spy(t, before, event):
        alike = real(t, before, event)
        if alike:
            state, _, fatal = t.restep(before, event)
            taken.append(state == catalogue._renamed_state(t.after) and
                         (fatal is None) == (t.fatal is None))
        return alike
    monkeypatch.setattr(catalogue, "decided_alike", spy)
    with_shortcut = explore(ExploreOptions(depth=3, reading=None))
    monkeypatch.setattr(catalogue, "decided_alike", lambda t, before, event: False)
    without = explore(ExploreOptions(depth=3, reading=None))
    monkeypatch.undo()
    assert len(taken) > 1000 and all(taken)
    assert with_shortcut.to_json(3) == without.to_json(3)


def test_the_decided_shortcut_leaves_a_renamed_decision_that_differs_to_the_re_step(
        monkeypatch):
    """A decider that treats one id's spelling specially gives a renamed decision that is not
    the renamed decision of the step: P37 re-steps and reports it (the shortcut only ever says
    that a check holds)."""
    plant_act_1_decider(monkeypatch)
    verdicts = []
    real = catalogue.decided_alike
    monkeypatch.setattr(catalogue, "decided_alike",
                        lambda t, before, event: verdicts.append(real(t, before, event)) or
                        verdicts[-1])
    report = explore(ExploreOptions(depth=2, reading=None,
                                    properties=(PROPERTY_BY_ID["P37-ids-opaque"],)))
    assert list(report.violations) == ["P37-ids-opaque"]
    trace, witness = report.violations["P37-ids-opaque"]
    assert witness == "renaming the message ids changed what the step did"
    assert True in verdicts and False in verdicts


def test_the_single_reading_search_takes_its_moves_from_a_move_table_under_its_reading():
    """SingleSystem's producer side is a MoveTable under the reading: the conformance flag is
    producer set 0 (False) or 1 (True), a node's moves are the reading's conformant moves
    (keeping the flag) and, with ``adversarial``, the others after them (flag False), each
    with the belief after it."""
    system = SingleSystem(EXPLORE_VOCABULARY, DRAFT, REFERENCE, (), True, False)
    table = system.table
    assert isinstance(table, MoveTable) and table.producer_sets.values == [False, True]
    assert table.draft_conformant == [False, True]
    rows = table.moves_of(0, 1)
    events = [table.events.values[e] for e, _, _, _ in rows]
    conformant = list(moves(table.beliefs.values[0], EXPLORE_VOCABULARY, DRAFT))
    assert events[:len(conformant)] == conformant and len(events) > len(conformant)
    assert [p for _, p, _, _ in rows] == [1] * len(conformant) + \
        [0] * (len(events) - len(conformant))
    assert all(ok == bool(p) for _, p, ok, _ in rows)
    assert [p for _, p, _, _ in table.moves_of(0, 0)] == [0] * len(events)
    e, _, _, ba = rows[0]
    assert table.beliefs.values[ba] == advance(table.beliefs.values[0], events[0])
    event, child = system.child((0, 0, 1), 0, 0)
    assert event == events[0] and child[0] == ba and child[2] == 1


def test_the_renamed_tree_memo_changes_no_report(monkeypatch):
    """The sweep with P37's renamed-tree memo off (every check reads the decisions one at a
    time) prints the same report, every reading and adversarial, and the memo answers most
    checks."""
    import properties.search.sweep_cache as sweep_cache
    calls = []
    real = sweep_cache._Restep.renamed_alike

    def counted(self, st, ev, alike):
        calls.append(real(self, st, ev, alike))
        return calls[-1]
    monkeypatch.setattr(sweep_cache._Restep, "renamed_alike", counted)
    with_memo = [explore(ExploreOptions(depth=3, reading=None)).to_json(3),
                 explore(ExploreOptions(depth=3, reading=None, adversarial=True)).to_json(
                     3, adversarial=True)]
    assert len(calls) > 1000 and sum(calls) > 0.9 * len(calls)
    monkeypatch.setattr(sweep_cache._Restep, "renamed_alike", lambda *args: False)
    without = [explore(ExploreOptions(depth=3, reading=None)).to_json(3),
               explore(ExploreOptions(depth=3, reading=None, adversarial=True)).to_json(
                   3, adversarial=True)]
    assert with_memo == without


def test_states_with_one_focus_have_one_renamed_focus():
    """What the renamed-tree memo stands on (``SweepCache.renamed_alike_of``, keyed by a
    focus's tree): P37's renaming of two states with the same focus for an event gives them the
    same focus for the renamed event, for every (state, event) a depth-4 sweep decides on a
    focus."""
    from model.consumer import focus_fields
    from properties.catalogue import PROPERTIES
    from properties.search.bfs import search
    from properties.search.system_sweep import SweepSystem
    system = SweepSystem(EXPLORE_VOCABULARY, tuple(PROPERTIES), False)
    search(system, 4)
    c = system.cache
    renamed: dict = {}
    groups = 0
    for s, e in c.step_decisions:
        state, event = c.states.values[s], c.events.values[e]
        fields = focus_fields(state, event)
        if fields is None:
            continue
        theirs = focus_fields(catalogue._renamed_state(state), catalogue._renamed_event(event))
        key = (fields, e)
        if key in renamed:
            assert renamed[key] == theirs, (state, event)
            groups += 1
        else:
            renamed[key] = theirs
    assert len(renamed) > 100 and groups > 1000
