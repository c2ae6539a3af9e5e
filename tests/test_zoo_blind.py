"""The blind red team's mutants and the holes they showed: each new zoo mutant broken by its
property on a hand-written trace at the expected event (the reference clean on the same trace
under every property), the new properties P41..P43 each broken by one of them, the surface
generating what shows each mistake, and the exhaustive search catching the patch mistakes and the
subagent one over a small world of the surface's edge patches.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, replace
from typing import Optional

import pytest

from model.events import ActivityDelta, MessagesSnapshot, StateDelta, StateSnapshot
from model.producer import Belief, advance
from model.readings import DRAFT
from model.verdict import evaluate
from model.consumer import initial_state, step
from properties.catalogue import PROPERTIES, PROPERTY_BY_ID
from properties.search.explore import EXPLORE_VOCABULARY, ExploreOptions, explore
from properties.search.machines import check_trace_properties
from properties.surface import SURFACE_CONTENT, SURFACE_PATCHES, surface_moves
from properties.zoo import MUTANT_BY_NAME
from model.consumers import REFERENCE
from wirekit import delta, snap, trace


@dataclass(frozen=True)
class Row:
    """``mutant`` breaks ``prop`` at event ``index`` of RUN_STARTED + ``wire``."""

    prop: str
    mutant: str
    wire: tuple
    index: int
    reading: Optional[dict] = None  # as test_properties.Row: none of these is a reading


def _row(prop, mutant, *wire, index):
    return pytest.param(Row(prop, mutant, tuple(wire), index), id=f"{prop}:{mutant}")


LIST = {"list": [1, 2, 3], "n": 1}
USER = {"id": "u1", "role": "user", "content": "hi"}
REASONING = {"id": "r1", "role": "reasoning", "content": "weighing it"}
SUB_START = {"type": "SUBAGENT_STARTED", "subagentRunId": "sub-1"}
TEXT_START = {"type": "TEXT_MESSAGE_START", "messageId": "m1", "role": "assistant"}

BLIND_ROWS = [
    _row("P15-patch-atomic", "negative-index-read", snap(content=LIST),
         delta(patch=[{"op": "replace", "path": "/list/-1", "value": 0}]), index=2),
    _row("P14-delta-applies", "remove-pops-last", snap(content=LIST),
         delta(patch=[{"op": "remove", "path": "/list/0"}]), index=2),
    _row("P14-delta-applies", "move-prefix-by-string", snap(content=LIST),
         delta(patch=[{"op": "move", "from": "/n", "path": "/nx"}]), index=2),
    _row("P14-delta-applies", "move-adds-first", snap(content=LIST),
         delta(patch=[{"op": "move", "from": "/list/0", "path": "/list/1"}]), index=2),
    _row("P05-snapshot-creates", "reserved-metadata-key-dropped",
         snap(metadata={"ag-ui": {"trace": "t-1"}}), index=1),
    _row("P42-ms-reasoning-survives", "ms-drops-reasoning",
         {"type": "MESSAGES_SNAPSHOT", "messages": [USER, REASONING]},
         {"type": "MESSAGES_SNAPSHOT", "messages": [USER]}, index=2),
    _row("P29-ms-activity-survives", "ms-revokes-across-roles", snap(),
         {"type": "MESSAGES_SNAPSHOT", "messages": [USER, REASONING]}, index=2),
    _row("P43-subagent-end-keeps-others", "subagent-end-closes-open", SUB_START, TEXT_START,
         {"type": "SUBAGENT_FINISHED", "subagentRunId": "sub-1"}, index=3),
    _row("P41-state-follows", "state-snapshot-merges",
         {"type": "STATE_SNAPSHOT", "snapshot": {"a": 1}},
         {"type": "STATE_SNAPSHOT", "snapshot": {"b": 2}}, index=2),
    _row("P41-state-follows", "subagent-state-withheld",
         {"type": "STATE_DELTA", "subagentRunId": "sub-1",
          "delta": [{"op": "add", "path": "/n", "value": 3}]}, index=1),
    _row("P39-fatal-justified", "late-run-error-rejected",
         {"type": "RUN_FINISHED", "threadId": "t1", "runId": "r1"},
         {"type": "RUN_ERROR", "message": "late"}, index=2),
]
"""One row per blind mutant added to the zoo (``properties.zoo.MUTANTS``)."""

PROPERTY_ROWS = {"P41-state-follows": "state-snapshot-merges",
                 "P42-ms-reasoning-survives": "ms-drops-reasoning",
                 "P43-subagent-end-keeps-others": "subagent-end-closes-open"}
"""The row that breaks each property the blind red team added."""


@pytest.mark.parametrize("r", BLIND_ROWS)
def test_blind_mutant_breaks_its_property_at_the_expected_event(r: Row):
    events = trace(*r.wire)
    found = check_trace_properties(events, MUTANT_BY_NAME[r.mutant], DRAFT,
                                   properties=(PROPERTY_BY_ID[r.prop],))
    assert found is not None, f"{r.mutant} not caught by {r.prop}"
    assert (found.property.id, found.index) == (r.prop, r.index), str(found)
    # the first property of the whole catalogue to fail is there too, and at that event
    first = check_trace_properties(events, MUTANT_BY_NAME[r.mutant], DRAFT, PROPERTIES)
    assert first is not None and first.index == r.index


@pytest.mark.parametrize("r", BLIND_ROWS)
def test_reference_is_clean_on_the_blind_rows(r: Row):
    events = trace(*r.wire)
    assert check_trace_properties(events, REFERENCE, DRAFT, PROPERTIES) is None
    mutant = MUTANT_BY_NAME[r.mutant]
    state = initial_state()
    for event in events:  # the mutant really differs from the reference on its row
        state = mutant.step(state, event, DRAFT).state
    assert state != evaluate(events, DRAFT).state


def test_every_new_property_has_a_row_and_is_in_the_catalogue_in_order():
    rows = {(p.values[0].prop, p.values[0].mutant) for p in BLIND_ROWS}
    for pid, mutant in PROPERTY_ROWS.items():
        assert (pid, mutant) in rows
    assert [p.id for p in PROPERTIES if p.id in PROPERTY_ROWS] == list(PROPERTY_ROWS)


def test_subagent_end_may_close_its_own_stream_but_not_anothers():
    own = trace({"type": "SUBAGENT_STARTED", "subagentRunId": "sub-1"},
                {"type": "TEXT_MESSAGE_START", "messageId": "m1", "role": "assistant",
                 "subagentRunId": "sub-1"},
                {"type": "SUBAGENT_FINISHED", "subagentRunId": "sub-1"})
    mutant = MUTANT_BY_NAME["subagent-end-closes-open"]
    assert check_trace_properties(own, mutant, DRAFT,
                                  (PROPERTY_BY_ID["P43-subagent-end-keeps-others"],)) is None
    other = trace(SUB_START, TEXT_START, {"type": "SUBAGENT_FINISHED", "subagentRunId": "sub-1"})
    found = check_trace_properties(other, mutant, DRAFT,
                                   (PROPERTY_BY_ID["P43-subagent-end-keeps-others"],))
    assert found is not None and "['m1']" in str(found)


def test_state_property_judges_a_failed_delta_as_keeping_the_state():
    events = trace({"type": "STATE_SNAPSHOT", "snapshot": {"a": 1}},
                   {"type": "STATE_DELTA", "delta": [{"op": "remove", "path": "/missing"}]})
    assert check_trace_properties(events, REFERENCE, DRAFT, PROPERTIES) is None
    assert evaluate(events, DRAFT).state.state == '{"a":1}'

    def emptied(state, event, reading):  # a failed delta empties the state instead
        result = step(state, event, reading)
        if isinstance(event, StateDelta):
            return replace(result, state=result.state.but(state="{}"))
        return result
    found = check_trace_properties(events, replace(REFERENCE, step=emptied), DRAFT,
                                   (PROPERTY_BY_ID["P41-state-follows"],))
    assert found is not None and found.index == 2


def test_surface_generates_what_shows_the_blind_mistakes():
    belief = advance(advance(Belief(), trace()[0]), trace(snap(content=SURFACE_CONTENT))[1])
    groups = dict(surface_moves(belief))
    paths = {(op.op, op.path) for events in groups.values() for e in events
             if isinstance(e, ActivityDelta) for op in e.patch}
    for wanted in (("add", "/~01"), ("replace", "/list/-1"), ("remove", "/list/0"),
                   ("move", "/nx"), ("move", "/list/1"), ("add", "/n")):
        assert wanted in paths, wanted
    assert any('"ag-ui"' in e.metadata for e in groups["surface:metadata"])
    snapshots = [e for k in ("surface:messages", "surface:messages-reasoning")
                 for e in groups[k] if isinstance(e, MessagesSnapshot)]
    assert any(m.role == "reasoning" for e in snapshots for m in e.messages)
    assert any(not any(m.role == "reasoning" for m in e.messages) for e in snapshots)
    states = groups["surface:state-snapshot"]
    assert {e.subagent_run_id for e in states if isinstance(e, StateSnapshot)} == {None, "sub-1"}
    assert len({e.snapshot for e in states if isinstance(e, StateSnapshot)}) == 2


_SURFACE = dict(SURFACE_PATCHES)
_EDGE_VOCABULARY = replace(
    EXPLORE_VOCABULARY, activity_ids=("act-1",), contents=({"n": 1, "list": [1, 2, 3]},),
    patches=tuple((n, _SURFACE[n]) for n in ("edge-negative-index", "edge-remove-first",
                                               "edge-move-sibling-prefix", "edge-move-array-index")),
    metadata=(None,), replace_flags=(None,), max_runs=1)
"""A small world over the surface's edge patches, for the exhaustive search."""


@functools.lru_cache(maxsize=None)
def _reference_violations(depth: int) -> dict:
    """The reference's violations over :data:`_EDGE_VOCABULARY` to ``depth`` (none expected)."""
    return explore(ExploreOptions(depth=depth, vocabulary=_EDGE_VOCABULARY, consumer=REFERENCE,
                                  check_readings=False)).violations


@pytest.mark.parametrize("name,depth,prop", [
    ("negative-index-read", 3, "P15-patch-atomic"), ("remove-pops-last", 3, "P14-delta-applies"),
    ("move-prefix-by-string", 3, "P14-delta-applies"), ("move-adds-first", 3, "P14-delta-applies"),
    ("subagent-end-closes-open", 4, "P43-subagent-end-keeps-others")])
def test_the_exhaustive_search_catches_a_blind_mutant(name, depth, prop):
    assert _reference_violations(depth) == {}
    found = explore(ExploreOptions(depth=depth, vocabulary=_EDGE_VOCABULARY,
                                   consumer=MUTANT_BY_NAME[name],
                                   check_readings=False, stop_when_found=True))
    assert sorted(found.violations) == [prop]
    witness, _ = found.violations[prop]
    assert len(witness) == depth
