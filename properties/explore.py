"""Exhaustive bounded exploration: breadth-first search over (producer belief, consumer state).

Every trace the producer can send over a finite vocabulary, up to a depth, is explored once per
distinct state, with a parent map to rebuild the shortest trace to any node. Two modes:

* **every reading in one sweep** (``reading=None``, the default of ``activity-check explore``):
  a node also carries a *class* of readings, a partial assignment of knobs standing for every
  reading consistent with it, all of which have given the same result on every step so far. A
  step that consults a knob the class leaves open is forked over its options
  (:func:`step_leaves`); options that give equal results stay one class,
  options that differ become sibling classes, and the knob is recorded as a *split* there, in
  whatever context the class fixes. Producer conformance is forked the same way on the knobs
  the producer's obligations read (:data:`PRODUCER_KNOBS`): a trace is conformant when some
  producer reading allows it, since producer and consumer may read the draft differently.
* **one reading** (``reading=R``): one consumer state per node, R's; a knob is recorded where
  it decides in R's context (:func:`step_splits`).

On every transition every property of the catalogue is checked
(:class:`properties.catalogue.Transition`). Because the search is breadth-first, the first
witness recorded for a finding is a shortest one. :func:`shortest_distinguishing` is the same
search for one pair of readings.

The hot loop keeps plain hashable tuples (``visited``: key -> node id; ``parents``: node id ->
(parent id, event)); the all-readings sweep numbers beliefs, states, events and classes once
and keys everything by those ints. It memoises what recurs across classes and beliefs: each
(state, event)'s decision tree over the knobs, each (tree shape, class)'s fork, moves, beliefs,
run input, and property outcomes, keyed by the transition, what the properties read of the
producer's beliefs (:attr:`~properties.catalogue.Property.belief_view`) and the knobs a check
consulted; only the properties whose ``events`` include the event's class are run, and those of
a narrower :attr:`~properties.catalogue.Property.scope` share their outcomes across every
transition that agrees on what they read (the step, the target view, or the state after). An
activity event's decision tree is computed once per (focus, event), where the focus is the
little the model's step reads of the state (:func:`model.consumer.focus`), and settled on each
state with that focus. The re-steps of P36 and P37 read decision trees too, computed once per
re-stepped (state, event) and shared by every leaf and class that checks it. The cyclic garbage
collector is paused while a search runs.
:func:`state_graph` builds a networkx graph on demand, for export (GraphML, DOT) and graph
queries.
"""
from __future__ import annotations

import gc
import time
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Callable, Optional, Sequence

import networkx as nx

from model.consumer import (ConsumerState, decide, focus, initial_state, settle,
                            step as reference_step)
from model.events import Event
from model.producer import PRODUCER_KNOBS, Belief, Vocabulary, adversarial_moves, advance, moves
from model.readings import (DRAFT, KNOB_BY_ID, KNOBS, PartialReading, Reading,
                            RecordingReading, describe_assignment)
from model.verdict import Verdict, context_of, knob_splits
from properties.catalogue import (PROPERTIES, Property, Transition, applicable, by_identity,
                                  check_transition, first_violation, target_view)
from properties.zoo import REFERENCE, Consumer

__all__ = ["EXPLORE_VOCABULARY", "ExploreReport", "PRODUCER_KNOBS", "explore", "step_leaves",
           "step_splits",
           "shortest_distinguishing", "shortest_trace_to", "state_graph", "trace_to"]

EXPLORE_VOCABULARY = Vocabulary(
    activity_ids=("act-1", "act-2"),
    text_ids=("msg-1",),
    owners=(None, "sub-1"),
    activity_types=("PLAN", "SEARCH"),
    contents=({"n": 0},),
    patches=(
        ("set-n", ({"op": "replace", "path": "/n", "value": 2},)),
        ("remove-missing", ({"op": "remove", "path": "/missing"},)),
        ("unknown-op", ({"op": "increment", "path": "/n"},
                        {"op": "replace", "path": "/n", "value": 2})),
        ("root-array", ({"op": "replace", "path": "", "value": []},)),
    ),
    metadata=(None, {"k": 1}),
    replace_flags=(None, False),
    max_runs=1,
)
"""The default finite world of the exhaustive search: two activity ids, the parent and one
subagent, two types, one content, four patches (applies, fails, an unrecognised op before one
that applies, root to a non-object), one metadata key, replace absent or false, one run. The
unrecognised op comes with an op that applies so that the readings of Q20 differ in the content
a consumer holds, not only in a warning: a peer that reports no warnings still shows which
reading it follows."""


@dataclass
class ExploreReport:
    """What an exploration found and how far it got.

    Attributes:
        states: distinct nodes discovered; edges: transitions examined.
        depth: the deepest level fully expanded; complete: every node up to ``depth`` expanded
            and the bound was the depth (not states or time).
        stopped_by: ``"depth"``, ``"max-states"``, ``"timeout"`` or ``"interrupted"`` (Ctrl-C:
            the report holds what was explored until then).
        splits: ``{knob id: (trace, (assignment a, assignment b))}``, shortest first found.
        violations: ``{property id: (trace, witness text)}``, shortest first found.
        seconds: wall time (never written to a deterministic output).
        nodes, parents: the visited nodes and parent map, for :func:`state_graph`.
        edges_seen: every examined edge as ``(from node, to node, event)`` (to node is the
            existing node for an edge into a visited state), for :func:`state_graph`.
    """

    states: int = 0
    edges: int = 0
    depth: int = 0
    complete: bool = False
    stopped_by: str = "depth"
    splits: dict = field(default_factory=dict)
    violations: dict = field(default_factory=dict)
    seconds: float = 0.0
    nodes: list = field(default_factory=list)
    parents: list = field(default_factory=list)
    edges_seen: list = field(default_factory=list)
    classes: int = 1

    @property
    def states_per_second(self) -> float:
        return self.states / self.seconds if self.seconds else 0.0

    def to_json(self, requested_depth: int, reading: Optional[Reading] = None,
                adversarial: bool = False) -> dict:
        """The report as ``activity-check explore --json`` prints it (wire names; no timings).

        Args:
            requested_depth: the depth bound the search was given (``depth`` is how far it got).
            reading: the one reading explored, or None for every reading in one sweep.
            adversarial: whether the producer's non-conformant moves were taken.

        Returns:
            ``{"depth", "requestedDepth", "complete", "stoppedBy", "states", "edges", "reading"
            ("all", else the reading's name), "readingClasses" (None for one reading),
            "adversarial", "splits": {knob id: {"length", "pair": [two readings as text],
            "trace": [wire events]}}, "violations": {property id: {"length", "witness",
            "trace"}}}``, splits and violations in the order found.
        """
        return {
            "depth": self.depth, "requestedDepth": requested_depth, "complete": self.complete,
            "stoppedBy": self.stopped_by, "states": self.states, "edges": self.edges,
            "reading": "all" if reading is None else (reading.name or "draft"),
            "readingClasses": self.classes if reading is None else None,
            "adversarial": adversarial,
            "splits": {k: {"length": len(trace), "pair": [describe_assignment(a) for a in pair],
                           "trace": [e.to_wire() for e in trace]}
                       for k, (trace, pair) in self.splits.items()},
            "violations": {k: {"length": len(trace), "witness": text,
                               "trace": [e.to_wire() for e in trace]}
                           for k, (trace, text) in self.violations.items()},
        }


def step_splits(state: ConsumerState, event: Event, base: Reading = DRAFT,
                step_fn: Callable = reference_step) -> dict:
    """The knobs on which one step of ``state`` under ``event`` splits, in ``base``'s context.

    Forks the step on every knob it consults and returns ``{knob id: (assignment a, assignment
    b)}`` for pairs differing only in that knob whose results (messages, state, warnings, fatal)
    differ (see :func:`model.verdict.knob_splits`), keeping only pairs that agree with ``base``
    on every other knob they fix."""
    leaves = [(assignment, Verdict(result.state, tuple((0, w) for w in result.warnings),
                                   (0, result.fatal) if result.fatal else None, 1))
              for assignment, result in step_leaves(state, event, step_fn)]
    if len(leaves) < 2:
        return {}
    splits = knob_splits(leaves, key=_step_key)
    # Keep only pairs whose other knobs agree with the base reading: the state stepped from is
    # the base reading's, so only there is the pair's history the explored one.
    values = base.as_dict()
    return {k: (a, b) for k, (a, b) in splits.items()
            if all(values[x] == v for x, v in {**a, **b}.items() if x != k)}


def step_leaves(state: ConsumerState, event: Event, step_fn: Callable = reference_step
                ) -> list[tuple[dict, object]]:
    """One step under every reading at once: the step's decision tree over the knobs.

    Returns ``[(assignment, StepResult)]``: each assignment (``{knob id: option}``, the knobs
    consulted on that path, in the order consulted) stands for every reading consistent with
    it, and those readings all give that result. Deterministic order: depth first, options in
    knob order (the order of forking at each knob a run consults,
    :class:`~model.readings.PartialReading`).

    Each run of ``step_fn`` takes the first option of every knob its path has not fixed and
    records the knobs it consults (:class:`~model.readings.RecordingReading`), so that every run
    ends in a leaf; then each other option of each knob it consulted beyond the fixed ones is
    tried, the last consulted first. The step must read the reading only through its knobs."""
    leaves: list = []
    _expand(state, event, step_fn, (), leaves)
    return leaves


def _expand(state: ConsumerState, event: Event, step_fn: Callable, fixed: tuple,
            leaves: list) -> None:
    """:func:`step_leaves` below the path ``fixed``: a module function rather than a closure
    that calls itself, which would be a reference cycle holding every leaf until the cyclic
    collector (paused during a search) found it."""
    recorder = RecordingReading(_first_options(fixed))
    result = step_fn(state, event, recorder)
    reading = recorder.base
    path = tuple((_KNOB_OF_ATTR[a], getattr(reading, a))
                 for a in dict.fromkeys(recorder.consulted) if a in _KNOB_OF_ATTR)
    leaves.append((dict(path), result))
    for j in range(len(path) - 1, len(fixed) - 1, -1):
        knob_id = path[j][0]
        for option in KNOB_BY_ID[knob_id].option_names[1:]:
            _expand(state, event, step_fn, path[:j] + ((knob_id, option),), leaves)


def _first_options(fixed: tuple) -> Reading:
    """The complete reading that takes ``fixed`` (``((knob id, option), ...)``) and each other
    knob's first option (memoised)."""
    found = _FIRST_OPTIONS.get(fixed)
    if found is None:
        options = {k.attr: k.option_names[0] for k in KNOBS}
        options.update((KNOB_BY_ID[k].attr, v) for k, v in fixed)
        found = _FIRST_OPTIONS[fixed] = replace(DRAFT, **options)
    return found


_FIRST_OPTIONS: dict = {}


def _step_key(v: Verdict):
    """What one step leaves that a verdict shows: the messages (wire-visible members), agent
    state, run status, warnings and fatal (codes, message ids, clauses). Hashable and cheap: the
    exploration compares these on every edge."""
    st = v.state
    return (tuple((m.id, m.role, m.content, m.activity_type, m.metadata, m.owner, m.other)
                  for m in st.messages), st.state, st.run, st.halted,
            tuple((w.code, w.message_id, w.clause) for _, w in v.warnings),
            (v.fatal[1].code, v.fatal[1].clause) if v.fatal else None)


def trace_to(report: ExploreReport, node: int) -> tuple[Event, ...]:
    """The shortest trace (events from the initial node) that reaches ``node``."""
    return _path(report.parents, node)


def explore(depth: int = 5, vocabulary: Vocabulary = EXPLORE_VOCABULARY,
            reading: Optional[Reading] = DRAFT, consumer: Consumer = REFERENCE,
            properties: Sequence[Property] = PROPERTIES, adversarial: bool = False,
            check_readings: bool = True, max_states: Optional[int] = None,
            timeout: Optional[float] = None,
            progress: Optional[Callable[[int, int, int, float], None]] = None,
            stop_when_found: bool = False, keep_edges: bool = False) -> ExploreReport:
    """Breadth-first search to ``depth`` events.

    Two modes:

    * ``reading=None``: *every reading in one sweep*. A node is (belief, consumer state,
      conformant, class), where the class is a partial assignment of knobs standing for every
      reading consistent with it; all of those readings have given the same result on every
      step so far. A step that consults a knob the class leaves open is forked
      (:class:`~model.readings.PartialReading`); options that give equal results stay in one
      class, options that differ become sibling classes, and every knob whose options differ
      there is recorded as a split, in whatever context the class fixes. Producer conformance
      is forked the same way on the knobs the producer's own obligations read (Q2 and
      Q4-opener), so a move conformant under only some readings is taken in those readings'
      class. Properties are checked on every class's transition under every reading of the
      class: under its representative (the class's options, ``draft`` for the knobs it leaves
      free), and again under each other option of a knob the checks consulted that the class
      leaves open (the step's result is the same under all of them, a property's verdict need
      not be). Reference consumer only.
    * ``reading=R`` (default ``draft``): one consumer state per node, the one of reading R; a
      knob is recorded as a split where it decides in R's context (:func:`step_splits`).

    Args:
        depth: the longest trace explored (events).
        vocabulary: the producer's finite world (see :data:`EXPLORE_VOCABULARY`).
        reading: the consumer's reading, or None for every reading at once.
        consumer: the consumer under test (default the reference model; any other consumer
            needs a reading).
        properties: checked on every edge (:class:`properties.catalogue.Transition`).
        adversarial: also take the producer's non-conformant moves (then properties that judge
            only conformant traces see the cumulative conformance flag; splits are recorded on
            conformant traces only).
        check_readings: with a reading, also look for knobs that split each step (reference
            step only); with ``reading=None`` splits are always recorded.
        max_states, timeout (seconds): further bounds; the report says which one stopped it.
        progress: called as ``progress(depth, states, edges, seconds)`` during and after each
            level.
        stop_when_found: stop at the end of the first level with a property violation.
        keep_edges: record every examined edge for :func:`state_graph` (off by default: the
            search itself needs only the parent map).

    Returns:
        An :class:`ExploreReport`. Deterministic: moves and forks are taken in a fixed order.

    Raises:
        ValueError: ``reading=None`` with a consumer other than the reference model.

    Clauses: every clause of the property catalogue (P00..P40) and of the knobs (Q-ids).
    """
    all_readings = reading is None
    if all_readings and consumer is not REFERENCE:
        raise ValueError("exploring every reading at once needs the reference consumer")
    report = ExploreReport()
    bfs = _Search(report, time.monotonic(), max_states, timeout, progress, keep_edges)
    search = _sweep if all_readings else _single
    try:
        with _cyclic_gc_paused():
            search(report, bfs, depth, vocabulary, reading, consumer, tuple(properties),
                   adversarial, check_readings, stop_when_found)
    except _Stop as stop:
        report.stopped_by = stop.reason
    except KeyboardInterrupt:  # stopped by the user: report how far it got
        report.stopped_by = "interrupted"
    report.states = len(report.nodes)
    report.complete = report.stopped_by == "depth" and (report.depth == depth or bfs.drained)
    report.seconds = time.monotonic() - bfs.started
    report.classes = len({n[3] for n in report.nodes})
    return report


@contextmanager
def _cyclic_gc_paused():
    """Pause Python's cyclic garbage collector for the duration of a search.

    The search keeps hundreds of thousands of long-lived tuples and frozen values (nodes, memo
    tables), and each full collection walks all of them: a third of a bare depth-5 sweep went
    to it. What the search allocates is acyclic (a test checks that it leaves nothing for the
    collector), so reference counting frees it; the collector is restored afterwards, as it was.

    What the search returns (the report's nodes and parents: a million objects at depth 5)
    would all be in the youngest generation then, and the first allocation after the restore
    would walk every one of them (half a second at depth 5). So every object the collector
    tracks is moved to the oldest generation before it is enabled again (``gc.freeze`` then
    ``gc.unfreeze``), where the objects wait for the next full collection, as long-lived ones
    do. So that no garbage of the caller's waits there with them, the young generations are
    collected when the search starts (they are small while the collector runs: well under a
    millisecond). A caller that has frozen objects of its own keeps them frozen: the collector
    is then simply enabled.
    """
    was_enabled = gc.isenabled()
    if was_enabled:
        gc.collect(1)
    try:
        gc.disable()  # in the try: a Ctrl-C just after it must not leave the collector off
        yield
    finally:
        if was_enabled:
            try:
                if not gc.get_freeze_count():
                    try:
                        gc.freeze()
                    finally:  # never left frozen, even by a Ctrl-C between the two
                        gc.unfreeze()
            finally:
                gc.enable()


class _Stop(Exception):
    """A bound other than the depth stopped the search; ``reason`` names it."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


class _Search:
    """The breadth-first bookkeeping both modes share: the visited map (node key -> node id),
    the node list, the parent map (node id -> (parent id, event)), the next level's frontier,
    and the bounds besides depth (checked at every new node) with the progress callback."""

    def __init__(self, report: ExploreReport, started: float, max_states: Optional[int],
                 timeout: Optional[float], progress, keep_edges: bool):
        self.report, self.started = report, started
        self.max_states, self.timeout, self.progress = max_states, timeout, progress
        self.keep_edges = keep_edges
        self.visited: dict = {}
        self.nodes: list = []
        self.parents: list = []
        self.next_frontier: list = []
        self.drained = False
        report.parents = self.parents

    def start(self, key) -> list:
        """Add the initial node; returns the first frontier."""
        self.visited[key] = 0
        self.nodes.append(key)
        self.parents.append((0, None))
        return [0]

    def reach(self, key, node: int, event: Event, halted: bool, level: int) -> None:
        """An edge from ``node`` to the node ``key``: a node not seen before is added (and, unless
        ``halted``, joins the next frontier). Raises :class:`_Stop` past a bound."""
        known = self.visited.get(key)
        if self.keep_edges:
            self.report.edges_seen.append((node, len(self.nodes) if known is None else known,
                                           event))
        if known is not None:
            return
        added = self.visited[key] = len(self.nodes)
        self.nodes.append(key)
        self.parents.append((node, event))
        if not halted:
            self.next_frontier.append(added)
        count = added + 1
        if self.max_states is not None and count >= self.max_states:
            raise _Stop("max-states")
        if self.timeout is not None and time.monotonic() - self.started > self.timeout:
            raise _Stop("timeout")
        if self.progress is not None and count % 2000 == 0:
            self.progress(level, count, self.report.edges, time.monotonic() - self.started)

    def next_level(self, level: int) -> list:
        """Close a level (``level`` is the depth now fully expanded); returns the next
        frontier."""
        frontier, self.next_frontier = self.next_frontier, []
        self.report.depth = level
        self.drained = not frontier
        if self.progress is not None:
            self.progress(level, len(self.nodes), self.report.edges,
                          time.monotonic() - self.started)
        return frontier


class _Interned:
    """Values numbered in order of first appearance: ``number(v)`` gives v's int, ``values[i]``
    the value. The sweep keys its maps by these ints, so that a hot-loop lookup hashes a tuple
    of small ints rather than beliefs, states and events."""

    def __init__(self, first=()):
        self.values: list = []
        self.ids: dict = {}
        for value in first:
            self.number(value)

    def number(self, value) -> int:
        i = self.ids.get(value)
        if i is None:
            i = self.ids[value] = len(self.values)
            self.values.append(value)
        return i


def _sweep(report: ExploreReport, bfs: _Search, depth: int, vocabulary: Vocabulary, reading,
           consumer, properties: tuple, adversarial: bool, check_readings: bool,
           stop_when_found: bool) -> None:
    """Every reading in one sweep (see :func:`explore`). A node is ``(belief, state, producer
    readings, class)`` as interned ints; per (state, event) the step's decision tree is computed
    once, per (tree shape, class) the fork, and property outcomes are shared across beliefs
    whose views agree (:attr:`~properties.catalogue.Property.belief_view`) and across classes
    (by the knobs a check consulted)."""
    beliefs = _Interned([Belief()])
    states = _Interned([initial_state()])
    events = _Interned()
    producer_sets = _Interned([frozenset(PRODUCER_READINGS)])
    classes = _Interned([()])
    shapes = _Interned()  # decision-tree shapes: (leaf assignments, leaf result groups)
    representatives = [_representative(())]
    class_attrs = [frozenset()]  # per class: the reading attributes of the knobs it fixes
    nodes, parents = bfs.nodes, bfs.parents
    draft_conformant: list = []  # per producer set: the draft's producer reading is in it
    move_memo: dict = {}  # (belief, producers) -> [(event, producers after, ok, belief after)]
    advanced: dict = {}  # (belief, event) -> belief after
    # (state, event) -> ([(assignment, result, result state, halted, outcome, knobs)], shape),
    # where leaves with equal outcomes (result state, warnings, fatal) share the outcome number
    # and knobs are the assignment's (reading attribute, option) pairs.
    trees: dict = {}
    # (focus, event) -> the decision tree of an activity event ([(assignment items, knobs,
    # their attributes, Decision)]), or the exception deciding it raised: shared by every
    # state with that focus.
    local_trees: dict = {}
    forks: dict = {}  # (shape, class) -> ([(leaf class, leaf index)], candidate knobs)
    # event -> (properties for its type, those of them reading beliefs, those of each scope:
    # "after", "target", "step", "transition")
    dispatch: dict = {}
    # Property outcomes, per (what they read of the beliefs, state, event, step outcome,
    # conformant), with the knobs each computation consulted: shared by every belief whose
    # views agree (all beliefs, for an event no belief-reading property applies to), every
    # leaf with the same step outcome and every agreeing class.
    checked: dict = {}  # (belief views, state, event, outcome, ok) -> [(consulted, result)]
    # (transition key, class) -> the violations under the class's readings (the first under
    # each), for the transitions where the checks consulted a knob the class leaves open
    class_checked: dict = {}
    # The same for the properties of narrower scope (Property.scope), shared across every
    # transition that agrees on what they read: the state after (with the conformance flag),
    # the target view (with the belief views), or the step alone.
    after_checked: dict = {}  # (result state, ok) -> [(consulted, result)]
    step_checked: dict = {}  # (state, event, step outcome) -> [(consulted, result)]
    target_checked: dict = {}  # (belief views, event, rest of the target view) -> [...]
    order = {p.id: i for i, p in enumerate(properties)}
    views: dict = {}  # (belief, belief after, event) -> interned belief views
    view_ids = _Interned()
    inputs: dict = {}  # result state -> run input
    split_cost: dict = {}
    # fork candidates -> the least rank at which no split witness of theirs could improve
    # (:func:`_may_improve`): it cannot at any rank after it either, as the search's ranks only
    # grow and the recorded costs only fall
    split_settled: dict = {}
    visited, keep_edges = bfs.visited, bfs.keep_edges
    # the restep's events by identity (:func:`~properties.catalogue.by_identity`): their numbers
    numbered_by_id: dict = {}
    # (state, event) -> the decision tree the restep reads, (decided, [(assignment items,
    # knobs, their attributes, leaf)]) with knobs as (reading attribute, option) pairs and
    # each leaf a Decision (decided) or a StepResult, or the exception the step raised: for the
    # states and events the properties re-step (P36, P37), which the search never steps.
    resteps: dict = {}
    violations = report.violations
    frontier = bfs.start((0, 0, 0, 0))
    level = 0

    def moves_of(b: int, p: int) -> list:
        found = move_memo.get((b, p))
        if found is None:
            belief = beliefs.values[b]
            found = move_memo[(b, p)] = []
            for event, after in _node_moves(belief, vocabulary, DRAFT, producer_sets.values[p],
                                            adversarial, True):
                e = events.number(event)
                if e not in dispatch:
                    fires = applicable(properties, type(event))
                    dispatch[e] = (fires, tuple(q for q in fires if q.reads_belief),
                                   tuple(tuple(q for q in fires if q.scope == scope)
                                         for scope in ("after", "target", "step",
                                                       "transition")))
                pa = producer_sets.number(after)
                if pa == len(draft_conformant):
                    draft_conformant.append(_DRAFT_PRODUCER in after)
                ba = advanced.get((b, e))
                if ba is None:
                    ba = advanced[(b, e)] = beliefs.number(advance(belief, event))
                found.append((e, pa, bool(after), ba))
        return found

    def decisions_of(state: ConsumerState, e: int):
        """The decision tree of an activity event on its focus in ``state`` (computed once per
        (focus, event), :func:`model.consumer.focus`), as ``[(assignment items, knobs, their
        attributes, Decision)]`` with knobs as (reading attribute, option) pairs; None when the
        step reads more of the state than a focus. Raises what deciding raised."""
        event = events.values[e]
        f = focus(state, event)
        if f is None:
            return None
        found = local_trees.get((f, e))
        if found is None:
            try:
                found = []
                for a, d in step_leaves(f, event, decide):
                    knobs = tuple((_ATTR_OF_KNOB[k], v) for k, v in a.items())
                    found.append((tuple(a.items()), knobs, tuple(x for x, _ in knobs), d))
            except Exception as exc:  # noqa: BLE001 - raised again for every state with it
                found = exc.with_traceback(None)
            local_trees[(f, e)] = found
        if isinstance(found, Exception):
            # afresh each time: a traceback kept would grow by every raise and hold frames
            raise found.with_traceback(None)
        return found

    def leaves_of(state: ConsumerState, e: int) -> list:
        """The step's decision tree on (state, event), as ``[(assignment items, knobs,
        StepResult)]``: an activity event's decisions (:func:`decisions_of`) settled on the
        state, any other event stepped whole (:func:`step_leaves`)."""
        decisions = decisions_of(state, e)
        if decisions is None:
            return [(tuple(a.items()), tuple((_ATTR_OF_KNOB[k], v) for k, v in a.items()), r)
                    for a, r in step_leaves(state, events.values[e])]
        event = events.values[e]
        return [(items, knobs, settle(state, event, d)) for items, knobs, _, d in decisions]

    def tree_of(s: int, e: int):
        tree = trees.get((s, e))
        if tree is None:
            try:
                leaves = [(items, r, states.number(r.state), r.state.halted, knobs)
                          for items, knobs, r in leaves_of(states.values[s], e)]
            except Exception as exc:  # noqa: BLE001 - the escape is the finding
                # kept without its traceback, whose frames would hold the exception in a cycle
                tree = trees[(s, e)] = exc.with_traceback(None)
                return tree
            outcomes = [(rs, r.warnings, r.fatal) for _, r, rs, _, _ in leaves]
            groups = tuple(outcomes.index(o) for o in outcomes)
            shape = shapes.number((tuple(leaf[0] for leaf in leaves), groups))
            tree = trees[(s, e)] = ([(items, r, rs, halted, g, knobs)
                                     for (items, r, rs, halted, knobs), g in zip(leaves, groups)],
                                    shape)
        return tree

    def fork_of(shape: int, c: int) -> tuple:
        found = forks.get((shape, c))
        if found is None:
            assignments, groups = shapes.values[shape]
            cls = classes.values[c]
            selected = [(classes.number(leaf_class), leaf)
                        for leaf_class, leaf in _select(assignments, groups, cls)]
            fixed = dict(cls)
            candidates = tuple(dict.fromkeys(k for lc, _ in selected
                                             for k, _ in classes.values[lc] if k not in fixed))
            found = forks[(shape, c)] = (selected, candidates)
            while len(representatives) < len(classes.values):
                added = classes.values[len(representatives)]
                representatives.append(_representative(added))
                class_attrs.append(frozenset(_ATTR_OF_KNOB[k] for k, _ in added))
        return found

    def view_of(b: int, ba: int, e: int, props: tuple) -> int:
        """What ``props`` read of the beliefs around the event (their ``belief_view``s), as an
        interned int: outcomes are shared across beliefs whose views agree."""
        found = views.get((b, ba, e))
        if found is None:
            event, before, after = events.values[e], beliefs.values[b], beliefs.values[ba]
            read = tuple(dict.fromkeys(p.belief_view for p in props))
            found = views[(b, ba, e)] = view_ids.number(
                tuple((view(before, event), view(after, event)) for view in read))
        return found

    def restep_for(recorder: RecordingReading):
        """The reference step under ``recorder``'s reading, read off the step's decision tree
        (computed once per (state, event), then shared by every leaf and class that re-steps
        it): the leaf the reading reaches, with that leaf's knobs recorded as consulted, as the
        step would consult them."""
        base = recorder.base

        def restep(st, ev):
            # The renamed events P37 passes come from its memo table, the same objects each
            # time: find their numbers by identity before hashing and comparing them whole
            # (states cache their hash).
            key = (st, by_identity(numbered_by_id, ev, events.number))
            tree = resteps.get(key)
            if tree is None:
                try:
                    decisions = decisions_of(st, key[1])
                    # an activity event's leaves are settled when a reading reaches them
                    tree = (True, decisions) if decisions is not None else \
                        (False, [(items, knobs, tuple(a for a, _ in knobs), r)
                                 for items, knobs, r in leaves_of(st, key[1])])
                except Exception as exc:  # noqa: BLE001 - raised to the check, as the step would
                    tree = exc.with_traceback(None)
                resteps[key] = tree
            if isinstance(tree, Exception):
                raise tree.with_traceback(None)
            decided, leaves = tree
            for _, knobs, attrs, leaf in leaves:
                for attr, option in knobs:
                    if getattr(base, attr) != option:
                        break
                else:
                    recorder.consulted.extend(attrs)
                    result = settle(st, ev, leaf) if decided else leaf
                    return result.state, result.warnings, result.fatal
            raise AssertionError("no leaf of the step's decision tree takes the reading")
        return restep

    def class_outcome(key: tuple, lc: int, entry: Optional[tuple], node: int, state, e: int,
                      result, rs: int, b: int, ba: int, ok: bool):
        """The properties the leaf transition ``key`` violates under the readings of class
        ``lc``: for each reading, the first it violates (catalogue order), as a tuple of
        ``(property, witness)`` in catalogue order, one per property (the witness of one found
        under a forked reading says under which options); ``()`` when all hold under every one
        of them; :data:`_BROKEN` when the run input raised.

        The checks run under the class's representative first. Where they consulted a knob
        the class leaves open, the class's other readings may disagree, so they run again for
        each other option of it (the readings that agree on the knobs before it in the
        consulted list and take that option), and so on: the class's readings are partitioned
        by the knobs the checks consult, as a step's by the knobs it consults
        (:func:`step_leaves`). Each outcome comes from ``checked`` when an entry holds for the
        reading, else from :func:`check`; ``entry`` is the one that holds for the
        representative, or None when none does yet."""
        rep = representatives[lc]
        fixed = class_attrs[lc]
        if entry is None:
            entry = check(key, rep, node, state, e, result, rs, b, ba, ok)
            if entry is _BROKEN:
                return _BROKEN
        if entry[2] <= fixed:  # it holds class-wide
            return (entry[1],) if entry[1] is not None else ()
        found = class_checked.get((key, lc))
        if found is not None:
            return found
        pending = [({}, rep)]  # (options beyond the class's, their reading)
        violated: dict = {}  # property id -> (property, witness), the first found
        while pending:
            extra, reading = pending.pop()
            entry = _known(checked.get(key), reading)
            if entry is None:
                entry = check(key, reading, node, state, e, result, rs, b, ba, ok)
                if entry is _BROKEN:
                    return _BROKEN
            knobs, found, _ = entry
            if found is not None and found[0].id not in violated:
                violated[found[0].id] = found if not extra else (found[0], (
                    f"{found[1]} (under "
                    f"{describe_assignment({_KNOB_OF_ATTR[a]: o for a, o in extra.items()})})"))
            agreed = dict(extra)
            for attr, option in knobs:
                if attr in fixed or attr in extra:
                    continue
                for other in _OPTIONS_OF_ATTR[attr]:
                    if other != option:
                        fork = {**agreed, attr: other}
                        pending.append((fork, _forked(rep, fork)))
                agreed[attr] = option
        outcome = class_checked[(key, lc)] = tuple(
            sorted(violated.values(), key=lambda found: order[found[0].id]))
        return outcome

    def check(key: tuple, reading: Reading, node: int, state, e: int, result, rs: int, b: int,
              ba: int, ok: bool):
        """Compute (no cached outcome applies to the transition ``key`` under ``reading``) the
        first property the leaf transition violates under ``reading``: the entry ``(consulted
        (attribute, option) pairs, (property, witness) or None, frozenset of the consulted
        attributes)`` added to ``checked[key]``, valid under every reading that agrees on those
        pairs; :data:`_BROKEN` when the run input raised. The properties of scope ``"after"``,
        ``"target"`` and ``"step"`` come from their shared tables (:func:`_shared`), the others
        are checked afresh (:func:`_fresh`)."""
        event = events.values[e]
        run_input = inputs.get(rs)
        if run_input is None:
            try:
                run_input = inputs[rs] = tuple(REFERENCE.run_input(result.state))
            except Exception as exc:  # noqa: BLE001
                _record(report.violations, "P00-no-exception", node, event,
                        f"{type(exc).__name__}: {exc}", parents)
                return _BROKEN
        recorder = RecordingReading(reading)
        t = Transition(level, state, event, result.state, result.warnings, result.fatal,
                       recorder, run_input, beliefs.values[b], beliefs.values[ba], ok,
                       restep_for(recorder))
        after_props, target_props, step_props, other_props = dispatch[e][2]
        parts = []
        if after_props:
            parts.append(_shared(after_checked, (rs, ok), t, recorder, after_props))
        if target_props:
            # the event by its number: the view's other members as they are
            parts.append(_shared(target_checked, (key[0], e) + target_view(t)[1:], t, recorder,
                                 target_props))
        if step_props:
            # (state, event, step outcome): the step's outcome numbers its state after,
            # warnings and fatal
            parts.append(_shared(step_checked, key[1:4], t, recorder, step_props))
        if other_props:
            parts.append(_fresh(t, recorder, other_props))
        # The first violation in catalogue order, valid under every reading that agrees on the
        # knobs any part consulted.
        outcome, consulted, attrs, merged = None, (), _NOTHING, False
        for knobs, found, part_attrs in parts:
            if knobs:
                if consulted:  # several parts consulted knobs: merged below
                    consulted += knobs
                    attrs = attrs | part_attrs
                    merged = True
                else:
                    consulted, attrs = knobs, part_attrs
            if found is not None and (outcome is None or
                                      order[found[0].id] < order[outcome[0].id]):
                outcome = found
        if merged:
            consulted = tuple(dict.fromkeys(consulted))
        entry = (consulted, outcome, attrs)
        checked.setdefault(key, []).append(entry)
        return entry

    try:
        while frontier and level < depth:
            for node in frontier:
                b, s, p, c = nodes[node]
                state = states.values[s]
                for e, pa, ok, ba in moves_of(b, p):
                    report.edges += 1
                    tree = trees.get((s, e))
                    if tree is None:
                        tree = tree_of(s, e)
                    if isinstance(tree, Exception):
                        _record(violations, "P00-no-exception", node, events.values[e],
                                f"{type(tree).__name__}: {tree}", parents)
                        continue
                    tree, shape = tree
                    if len(tree) == 1:
                        leaves = ((c, 0),)
                    else:
                        leaves, candidates = forks.get((shape, c)) or fork_of(shape, c)
                        if len(leaves) > 1 and ok and not state.halted:
                            rank = (level, not draft_conformant[pa])
                            settled = split_settled.get(candidates)
                            if settled is not None and settled <= rank:
                                pass  # no split witness of these knobs can improve any more
                            elif _may_improve(split_cost, candidates, rank):
                                _record_splits(report, split_cost,
                                               [(classes.values[lc], tree[leaf][1])
                                                for lc, leaf in leaves],
                                               node, events.values[e], parents, rank)
                            else:
                                split_settled[candidates] = rank
                    props, readers, _ = dispatch[e] if properties else ((), (), ())
                    view = None
                    if readers:
                        view = views.get((b, ba, e))
                        if view is None:
                            view = view_of(b, ba, e, readers)
                    for lc, leaf in leaves:
                        _, result, rs, halted, outcome, _ = tree[leaf]
                        if props:
                            key = (view, s, e, outcome, ok)
                            entry = _known(checked.get(key), representatives[lc])
                            if entry is not None and entry[2] <= class_attrs[lc]:
                                # the common case: an outcome that holds class-wide
                                found = (entry[1],) if entry[1] is not None else ()
                            else:
                                found = class_outcome(key, lc, entry, node, state, e, result, rs,
                                                      b, ba, ok)
                                if found is _BROKEN:
                                    continue
                            for prop, witness in found:
                                _record(violations, prop.id, node, events.values[e], witness,
                                        parents)
                        reached = (ba, rs, pa, lc)
                        if keep_edges or reached not in visited:  # else reach() would do nothing
                            bfs.reach(reached, node, events.values[e], halted, level)
            level += 1
            frontier = bfs.next_level(level)
            if stop_when_found and report.violations:
                break
    finally:  # also when a bound or Ctrl-C stops it: the report holds what was explored
        report.nodes = [(beliefs.values[b], states.values[s], producer_sets.values[p],
                         classes.values[c]) for b, s, p, c in nodes]


_NOTHING: frozenset = frozenset()
"""The consulted attributes of a sweep check entry that consulted none."""

_BROKEN = ("run input raised",)
"""A sweep check outcome: computing the run input raised (recorded as P00; the leaf is not
explored)."""


def _select(assignments: tuple, groups: tuple, cls: tuple) -> list[tuple[tuple, int]]:
    """The leaves of a step's decision tree that class ``cls`` reaches, as ``[(class, leaf
    index)]``. ``assignments`` are the leaves' assignments (tuples of ``(knob id, option)``) and
    ``groups`` number the leaves by result (leaves with equal results share a number). One
    entry, with ``cls`` unchanged, when every reading of the class gives the same result; else
    one per reachable leaf, its class extending ``cls`` by the leaf's assignment."""
    fixed = dict(cls)
    reached = [i for i, a in enumerate(assignments) if all(fixed.get(x, v) == v for x, v in a)]
    if len({groups[i] for i in reached}) == 1:
        return [(cls, reached[0])]
    return [(_class_of(cls, tuple((x, v) for x, v in assignments[i] if x not in fixed)), i)
            for i in reached]


def _single(report: ExploreReport, bfs: _Search, depth: int, vocabulary: Vocabulary,
            reading: Reading, consumer, properties: tuple, adversarial: bool,
            check_readings: bool, stop_when_found: bool) -> None:
    """One reading (see :func:`explore`): a node is ``(belief, state, conformant so far,
    _FULL)``; every property is checked on every edge."""
    nodes, parents = bfs.nodes, bfs.parents
    report.nodes = nodes
    step_fn = consumer.step
    run_input_fn = consumer.run_input
    check_splits = check_readings and step_fn is reference_step
    found_knobs: set = set()
    move_memo: dict = {}
    advanced: dict = {}
    frontier = bfs.start((Belief(), initial_state(), True, _FULL))
    level = 0

    def restep(s, e):
        res = step_fn(s, e, reading)
        return res.state, res.warnings, res.fatal

    while frontier and level < depth:
        for node in frontier:
            belief, state, conformant, _ = nodes[node]
            node_moves = move_memo.get((belief, conformant))
            if node_moves is None:
                node_moves = move_memo[(belief, conformant)] = _node_moves(
                    belief, vocabulary, reading, conformant, adversarial, False)
            for event, ok in node_moves:
                report.edges += 1
                recorder = RecordingReading(reading) if check_splits else reading
                try:
                    result = step_fn(state, event, recorder)
                except Exception as exc:  # noqa: BLE001 - the escape is the finding
                    _record(report.violations, "P00-no-exception", node, event,
                            f"{type(exc).__name__}: {exc}", parents)
                    continue
                if check_splits and ok and not state.halted and recorder.consulted:
                    consulted = {_KNOB_OF_ATTR[a] for a in recorder.consulted}
                    if not consulted <= found_knobs:
                        for knob, pair in step_splits(state, event, reading).items():
                            if knob not in report.splits:
                                found_knobs.add(knob)
                                report.splits[knob] = (_path(parents, node) + (event,), pair)
                belief_after = advanced.get((belief, event))
                if belief_after is None:
                    belief_after = advanced[(belief, event)] = advance(belief, event)
                if properties:
                    try:
                        run_input = tuple(run_input_fn(result.state))
                    except Exception as exc:  # noqa: BLE001
                        _record(report.violations, "P00-no-exception", node, event,
                                f"{type(exc).__name__}: {exc}", parents)
                        continue
                    found = check_transition(Transition(
                        level, state, event, result.state, result.warnings, result.fatal,
                        reading, run_input, belief, belief_after, ok, restep), properties)
                    if found is not None:
                        _record(report.violations, found[0].id, node, event, found[1], parents)
                bfs.reach((belief_after, result.state, ok, _FULL), node, event,
                          result.state.halted, level)
        level += 1
        frontier = bfs.next_level(level)
        if stop_when_found and report.violations:
            break


_KNOB_OF_ATTR = {k.attr: k.id for k in KNOBS}
_ATTR_OF_KNOB = {k.id: k.attr for k in KNOBS}
_OPTIONS_OF_ATTR = {k.attr: k.option_names for k in KNOBS}


_KNOB_ORDER = {k.id: i for i, k in enumerate(KNOBS)}
_FULL = ("*",)
"""The class of a single-reading exploration: the reading itself (never forked)."""


_REPRESENTATIVES: dict = {}


def _forked(reading: Reading, options: dict) -> Reading:
    """``reading`` with the knobs ``options`` names (reading attribute -> option) set so
    (memoised: the sweep forks the same checks over the same options many times)."""
    key = (reading, tuple(options.items()))
    found = _FORKED.get(key)
    if found is None:
        if len(_FORKED) >= 4096:
            _FORKED.clear()
        found = _FORKED[key] = replace(reading, **options)
    return found


_FORKED: dict = {}


def _representative(cls: tuple) -> Reading:
    """The reading standing for a class: its options, ``draft`` for the knobs it leaves free."""
    r = _REPRESENTATIVES.get(cls)
    if r is None:
        r = _REPRESENTATIVES[cls] = PartialReading(dict(cls)).complete()
    return r


def _class_of(cls: tuple, ext: tuple) -> tuple:
    """A class (sorted ``(knob id, option)`` pairs) extended by ``ext``."""
    if not ext:
        return cls
    return tuple(sorted(cls + ext, key=lambda kv: _KNOB_ORDER[kv[0]]))


def _producer_combinations() -> tuple[tuple, ...]:
    """Every assignment of the producer knobs, as sorted ``(knob id, option)`` pairs."""
    combos = [()]
    for knob_id in PRODUCER_KNOBS:
        combos = [c + ((knob_id, o),) for c in combos for o in KNOB_BY_ID[knob_id].option_names]
    return tuple(combos)


PRODUCER_READINGS: tuple[tuple, ...] = _producer_combinations()
"""The producer's possible readings as far as its obligations go (one per combination of
:data:`PRODUCER_KNOBS` options)."""

_DRAFT_PRODUCER = tuple((k, DRAFT.as_dict()[k]) for k in PRODUCER_KNOBS)


def _node_moves(belief: Belief, vocabulary: Vocabulary, base: Reading, producers,
                adversarial: bool, all_readings: bool):
    """``(event, producers after)`` for each move from a node, in a fixed order.

    With one reading, ``producers`` is a bool (conformant so far) and the moves are the
    conformant ones under the reading, then, if ``adversarial``, the non-conformant ones
    (``False`` after). With every reading, ``producers`` is the frozenset of producer readings
    (:data:`PRODUCER_READINGS`) under which the trace so far is conformant; a move is taken
    when it is conformant under at least one of them, and the set after is the ones it is
    conformant under. With ``adversarial`` the non-conformant moves follow (empty set after).
    """
    if not all_readings:
        out = [(e, producers) for e in moves(belief, vocabulary, base)]
        if adversarial:
            seen = {e for e, _ in out}
            out.extend((e, False) for e, _ in adversarial_moves(belief, vocabulary, base)
                       if e not in seen and not seen.add(e))
        return out
    order: dict = {}
    for combo in PRODUCER_READINGS:  # in this fixed order: never a set's hash order
        if producers and combo not in producers:
            continue
        for e in moves(belief, vocabulary, _representative(combo)):
            order.setdefault(e, []).append(combo)
    out = [(e, frozenset(c) if producers else producers) for e, c in order.items()]
    if adversarial:
        seen = set(order)
        out.extend((e, frozenset()) for e, _ in adversarial_moves(belief, vocabulary, DRAFT)
                   if e not in seen and not seen.add(e))
    return out


def _known(entries: Optional[list], reading: Reading) -> Optional[tuple]:
    """The cached ``(consulted, outcome, ...)`` entry that applies under ``reading``, or None.

    A check reads the reading only through its knobs, so its outcome under ``reading`` is the
    outcome under any reading that agrees on the knobs it consulted. ``entries`` are
    ``[(consulted (attribute, option) pairs, outcome, ...)]`` for one transition, or one view
    of transitions, without its reading (see :func:`_fresh`)."""
    if entries:
        for entry in entries:
            for attr, value in entry[0]:
                if getattr(reading, attr) != value:
                    break
            else:
                return entry
    return None


def _fresh(t: Transition, recorder: RecordingReading, properties: Sequence[Property]) -> tuple:
    """``(consulted, outcome, attributes)``: :func:`~properties.catalogue.first_violation` of
    ``properties`` (the ones that apply to the event) on ``t``, whose reading is ``recorder``,
    the knobs they consulted, as (attribute, option) pairs, and the frozenset of those
    attributes: the outcome holds under every reading that agrees on those. Reference consumer
    only: its step, too, reads the reading only through knobs."""
    consulted = recorder.consulted
    start = len(consulted)
    outcome = first_violation(t, properties)
    if len(consulted) == start:
        return (), outcome, _NOTHING
    reading = recorder.base
    attrs = dict.fromkeys(consulted[start:])
    return tuple([(a, getattr(reading, a)) for a in attrs]), outcome, frozenset(attrs)


def _shared(cache: dict, key: tuple, t: Transition, recorder: RecordingReading,
            properties: Sequence[Property]) -> tuple:
    """``(consulted, outcome, attributes)`` for ``properties`` on ``t`` (see :func:`_fresh`):
    the entry of ``cache[key]`` that holds for ``t``'s reading (see :func:`_known`), or else
    computed by :func:`_fresh` and added there. ``key`` must stand for everything the
    properties read of ``t`` besides its reading."""
    entries = cache.get(key)
    entry = _known(entries, recorder.base)
    if entry is None:
        entry = _fresh(t, recorder, properties)
        if entries is None:
            cache[key] = [entry]
        else:
            entries.append(entry)
    return entry


def _may_improve(cost: dict, candidates: tuple, rank: tuple) -> bool:
    """Whether a fork whose leaves fix ``candidates`` (knobs the parent class left open) at
    ``rank`` could give some knob a better split witness than ``cost`` holds (see
    :func:`_record_splits`)."""
    return not all(k in cost and (cost[k][:2] < rank or (cost[k][2] == 0 and cost[k][:2] <= rank))
                   for k in candidates)


def _record_splits(report: ExploreReport, cost: dict, leaves: list, node: int, event: Event,
                   parents: list, rank: tuple) -> None:
    """Record the knobs that split at a fork: per knob, the shortest trace; among equally short
    ones, one conformant under the draft's producer obligations before one conformant only
    under another producer reading, then the pair whose context departs least from ``draft``
    (first found on ties). ``rank`` is (level, not conformant under draft). Callers skip forks
    where :func:`_may_improve` says no knob can improve."""
    verdict_leaves = [(dict(c), Verdict(r.state, tuple((0, w) for w in r.warnings),
                                        (0, r.fatal) if r.fatal else None, 1))
                      for c, r in leaves]
    for knob, pair in knob_splits(verdict_leaves, key=_step_key).items():
        c = rank + (len(context_of(pair, knob)),)
        if knob not in cost or c < cost[knob]:
            cost[knob] = c
            report.splits[knob] = (_path(parents, node) + (event,), pair)


@_cyclic_gc_paused()
def shortest_distinguishing(reading_a: Reading, reading_b: Reading, depth: int = 6,
                            vocabulary: Vocabulary = EXPLORE_VOCABULARY,
                            max_states: Optional[int] = None,
                            producer: Optional[Reading] = None) -> Optional[tuple[Event, ...]]:
    """The shortest conformant trace on which two readings give different verdicts, by BFS.

    A node is (belief, state under ``reading_a``, state under ``reading_b``, the producer
    readings the trace so far conforms to). The search stops at the first step whose results
    differ in what a verdict shows (messages, agent state, run status, warnings, fatal): that
    trace is a shortest distinguishing one.

    Args:
        reading_a, reading_b: complete consumer readings.
        depth: the longest trace tried (events).
        vocabulary: the producer's finite world.
        max_states: stop (returning None) past this many distinct nodes.
        producer: the reading whose producer obligations a trace must keep; None (default):
            any producer reading (:data:`PRODUCER_READINGS`, as the all-readings sweep of
            :func:`explore` does), since the producer and the two consumers may each read the
            draft their own way.

    Returns:
        The trace, or None when the readings agree on every conformant trace up to ``depth``
        over the vocabulary.

    Clauses: IDX-CONFORMANCE (the readings difference of property P32).
    """
    producers0 = frozenset(PRODUCER_READINGS) if producer is None else \
        frozenset({tuple((k, producer.as_dict()[k]) for k in PRODUCER_KNOBS)})
    start = (Belief(), initial_state(), initial_state(), producers0)
    visited = {start: 0}
    parents: list = [(0, None)]
    frontier = [start]
    level = 0
    while frontier and level < depth:
        next_frontier = []
        for node_key in frontier:
            node = visited[node_key]
            belief, sa, sb, producers = node_key
            for event, producers_after in _node_moves(belief, vocabulary, DRAFT, producers,
                                                      False, True):
                ra = reference_step(sa, event, reading_a)
                rb = reference_step(sb, event, reading_b)
                if (ra.state, ra.warnings, ra.fatal and (ra.fatal.code, ra.fatal.clause)) != \
                        (rb.state, rb.warnings, rb.fatal and (rb.fatal.code, rb.fatal.clause)):
                    va = Verdict(ra.state, tuple((0, w) for w in ra.warnings),
                                 (0, ra.fatal) if ra.fatal else None, 1)
                    vb = Verdict(rb.state, tuple((0, w) for w in rb.warnings),
                                 (0, rb.fatal) if rb.fatal else None, 1)
                    if _step_key(va) != _step_key(vb):
                        return _path(parents, node) + (event,)
                key = (advance(belief, event), ra.state, rb.state, producers_after)
                if key in visited:
                    continue
                visited[key] = len(parents)
                parents.append((node, event))
                if not (ra.state.halted or rb.state.halted):
                    next_frontier.append(key)
                if max_states is not None and len(visited) >= max_states:
                    return None
        frontier = next_frontier
        level += 1
    return None


def _path(parents: list, node: int) -> tuple[Event, ...]:
    events = []
    while node:
        parent, event = parents[node]
        events.append(event)
        node = parent
    return tuple(reversed(events))


def _record(table: dict, key: str, node: int, event: Event, text: str, parents: list) -> None:
    if key not in table:
        table[key] = (_path(parents, node) + (event,), text)


def state_graph(report: ExploreReport, max_nodes: Optional[int] = None) -> nx.DiGraph:
    """The explored state graph as a networkx ``DiGraph`` (built on demand, never in the search).

    Nodes are node ids with attributes ``label`` (run status and held messages), ``messages``,
    ``run``, ``halted`` and ``conformant``; every examined edge is present (edges into states
    already visited included; parallel edges between the same two states keep the first event),
    with attributes ``event`` (short text) and ``wire`` (the event as compact JSON) and
    ``tree`` (True on the shortest-path tree the search's parent map holds). Without
    ``keep_edges`` the search kept only its parent map, and the graph is that tree. Nodes also
    carry ``readings``: the class of readings the node stands for (all-readings sweep).
    ``max_nodes`` keeps the first nodes in BFS order and the edges among them."""
    import json
    graph = nx.DiGraph()
    limit = len(report.nodes) if max_nodes is None else min(max_nodes, len(report.nodes))
    for node in range(limit):
        belief, state, producers, cls = report.nodes[node]
        conformant = bool(producers)
        held = " ".join(f"{m.id}:{m.role}" for m in state.messages)
        status = "rejected" if state.halted else state.run
        graph.add_node(node, messages=held, run=state.run, halted=state.halted,
                       conformant=conformant, label=f"#{node} {status}: {held or 'no messages'}",
                       readings="one reading" if cls == _FULL else describe_assignment(dict(cls)))
    for source, target, event in _graph_edges(report):
        if source >= limit or target >= limit or graph.has_edge(source, target):
            continue
        graph.add_edge(source, target, tree=report.parents[target][0] == source and target != 0,
                       event=f"{event.type_name} {getattr(event, 'message_id', '') or ''}".strip(),
                       wire=json.dumps(event.to_wire(), separators=(",", ":")))
    return graph


def _graph_edges(report: ExploreReport):
    """Every examined edge if the search kept them, else the parent map's tree edges."""
    if report.edges_seen:
        return report.edges_seen
    return [(parent, node, event) for node, (parent, event) in enumerate(report.parents) if node]


def shortest_trace_to(report: ExploreReport, predicate: Callable[[ConsumerState], bool]
                      ) -> Optional[tuple[Event, ...]]:
    """A graph query: the shortest explored trace to a state of a class.

    Args:
        report: an exploration (any mode; with ``keep_edges`` the query runs on every examined
            edge, else on the search tree, which holds a shortest path to every node).
        predicate: the state class, as a test on the consumer state (e.g. "some activity is
            owned by sub-1 and typed SEARCH").

    Returns:
        The events from the initial state to the nearest matching state (networkx shortest path
        on :func:`state_graph`), or None when no explored state matches (the class is not
        reachable within the bound).
    """
    graph = state_graph(report)
    lengths = nx.single_source_shortest_path_length(graph, 0)
    found = [(lengths[n], n) for n in graph if n in lengths and predicate(report.nodes[n][1])]
    if not found:
        return None
    target = min(found)[1]
    path = nx.shortest_path(graph, 0, target)
    events = {(a, b): e for a, b, e in reversed(list(_graph_edges(report)))}
    return tuple(events[(a, b)] for a, b in zip(path, path[1:]))
