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

Each search is a transition system (:class:`SweepSystem`, :class:`SingleSystem`,
:class:`PairSystem`, after the contract :class:`properties.search.bfs.TransitionSystem`) run by the one
breadth-first driver :func:`properties.search.bfs.search`, which keeps a 64-bit fingerprint and an
8-byte parent entry per node, full nodes only in the frontier, and merges levels expanded in
any order (in chunks, or on the workers of :mod:`properties.search.dask_engine`) into the numbering and
findings of the sequential search. A system's nodes are tuples of ints numbering interned
beliefs, states, events and classes. The all-readings sweep's memo tables are one
:class:`SweepCache`: each (state, event)'s decision tree over the knobs, each (tree shape,
class)'s fork, moves, beliefs, run input, and property outcomes, keyed by the transition, what
the properties read of the producer's beliefs (:attr:`~properties.catalogue.Property.belief_view`)
and the knobs a check consulted; only the properties whose ``events`` include the event's class
are run, and those of a narrower :attr:`~properties.catalogue.Property.scope` share their
outcomes across every transition that agrees on what they read (the step, the target view, or
the state after). An activity event's decision tree is computed once per (focus, event), where
the focus is the little the model's step reads of the state (:func:`model.consumer.focus`), and
settled on each state with that focus. The re-steps of P36 and P37 read decision trees too,
computed once per re-stepped (state, event) and shared by every leaf and class that checks it;
P37 compares decisions where it can (:func:`properties.catalogue.decided_alike`): on an
activity event, the renamed event's decision on the renamed focus against the renamed decision
of the step itself, settling the renamed state only where they differ.
The cyclic garbage collector is paused while a search runs.
:func:`state_graph` builds a networkx graph on demand, for export (GraphML, DOT) and graph
queries; the report's nodes, parents and edges are rebuilt for it by re-executing event chains.
"""
from __future__ import annotations

import gc
from collections.abc import Sequence as SequenceABC
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Callable, Optional, Sequence

import networkx as nx
import numpy as np

from model.consumer import (ConsumerState, Focus, decide, focus_fields, initial_state, settle,
                            step as reference_step)
from model.events import Event
from model.producer import (PRODUCER_KNOBS, PRODUCER_ONLY_KNOBS, Belief, Vocabulary,
                            adversarial_moves, advance, moves)
from model.readings import (DRAFT, KNOB_BY_ID, KNOBS, PartialReading, Reading,
                            RecordingReading, describe_assignment)
from model.verdict import Verdict, context_of, knob_splits
from properties.search.bfs import Expansion, LocalEngine, Search, TransitionSystem, search
from properties.search.store import (KEY_LEAF_BITS, Interned, component_fingerprint, mix,
                                  unpack_key)
from properties.search.blocks import (CHECK_STATE_MASK, CHECK_STEP_MASK, CHECK_VIEW_SHIFT,
                                     BlockTables, ComponentColumns, check_key,
                                     check_key_state)
from properties.catalogue import (PROPERTIES, Property, Transition, applicable, by_identity,
                                  check_transition, first_violation, target_view)
from model.consumers import REFERENCE, Consumer

__all__ = ["EXPLORE_VOCABULARY", "ExploreReport", "PRODUCER_KNOBS", "explore", "step_leaves",
           "step_splits", "MoveTable", "SweepCache", "SweepSystem", "SingleSystem", "PairSystem",
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
    max_runs=2,
)
"""The default finite world of the exhaustive search: two activity ids, the parent and one
subagent, two types, one content, four patches (applies, fails, an unrecognised op before one
that applies, root to a non-object), one metadata key, replace absent or false, two runs (a
second run is what questions of run boundaries need, Q12=run and Q23: it costs 0.3% more
states at depth 5, since a run closes only at RUN_FINISHED). The
unrecognised op comes with an op that applies so that the readings of Q20 differ in the content
a consumer holds, not only in a warning: a peer that reports no warnings still shows which
reading it follows."""


CACHE_ENTRIES = 6_000_000
"""The budget of the all-readings sweep's memo tables keyed by consumer transitions, with the
class outcomes and the forks (:meth:`SweepCache.size`), in entries (some 0.3 KB each): past it,
the entries of the consumer states and classes that no node still to expand needs soon are
dropped (:meth:`SweepSystem.make_room`), and the tables are emptied
(:meth:`SweepCache.trim`) when they still hold more than :attr:`SweepSystem.EVICT_KEEPS` of it;
so memory follows the states, not the transitions, on deep searches."""


@dataclass
class ExploreReport:
    """What an exploration found and how far it got.

    Attributes:
        states: distinct nodes discovered; edges: moves examined (a node's event; a move that
            forks the readings into several classes is one move here and an edge per class in
            :func:`state_graph`: at depth 3 under every reading, 1,770 moves and 2,040 graph
            edges).
        depth: the deepest level fully expanded; complete: every node up to ``depth`` expanded
            and the bound was the depth (not states or time).
        stopped_by: ``"depth"``, ``"max-states"``, ``"timeout"`` or ``"interrupted"`` (Ctrl-C:
            the report holds what was explored until then).
        partial: the search stopped inside level ``depth + 1`` and the report holds some of
            its moves (False: it stopped between two levels, or is complete).
        splits: ``{knob id: (trace, (assignment a, assignment b))}``, shortest first found.
        violations: ``{property id: (trace, witness text)}``, shortest first found.
        seconds: wall time (never written to a deterministic output).
        nodes, parents: the visited nodes and parent map, for :func:`state_graph`.
        edges_seen: every examined edge as ``(from node, to node, event)`` (to node is the
            existing node for an edge into a visited state), for :func:`state_graph`.
        nodes, parents and edges_seen are sequences rebuilt on demand by re-executing event
        chains (the search keeps 16 bytes per node: see :mod:`properties.search.bfs`).
        classes: distinct classes of readings among the nodes (1 with one reading).
        workers: processes that expanded the levels; storage: bytes per part of the search's
            storage, the fingerprint's hash and width and the probability of a collision.
    """

    states: int = 0
    edges: int = 0
    depth: int = 0
    complete: bool = False
    stopped_by: str = "depth"
    partial: bool = False
    splits: dict = field(default_factory=dict)
    violations: dict = field(default_factory=dict)
    seconds: float = 0.0
    nodes: list = field(default_factory=list)
    parents: list = field(default_factory=list)
    edges_seen: list = field(default_factory=list)
    classes: int = 1
    workers: int = 1
    storage: dict = field(default_factory=dict)

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
            ``{"depth", "requestedDepth", "complete", "stoppedBy", "partial" (the search stopped
            inside level ``depth + 1`` and ``states`` and ``edges`` count some of its moves),
            "states", "edges", "reading"
            ("all", else the reading's name), "readingClasses" (None for one reading),
            "adversarial", "splits": {knob id: {"length", "pair": [two readings as text],
            "trace": [wire events]}}, "violations": {property id: {"length", "witness",
            "trace"}}}``, splits and violations in the order found.
        """
        return {
            "depth": self.depth, "requestedDepth": requested_depth, "complete": self.complete,
            "stoppedBy": self.stopped_by, "partial": self.partial,
            "states": self.states, "edges": self.edges,
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
    """The shortest trace (events from the initial node) that reaches ``node``, rebuilt by
    re-executing the event chain its parent entries spell out."""
    return report.parents.trace(node)


def explore(depth: int = 5, vocabulary: Vocabulary = EXPLORE_VOCABULARY,
            reading: Optional[Reading] = DRAFT, consumer: Consumer = REFERENCE,
            properties: Sequence[Property] = PROPERTIES, adversarial: bool = False,
            check_readings: bool = True, max_states: Optional[int] = None,
            timeout: Optional[float] = None,
            progress: Optional[Callable[[int, int, int, float], None]] = None,
            stop_when_found: bool = False, keep_edges: bool = False, workers: int = 1,
            cluster: Optional[str] = None, spill_dir: Optional[str] = None,
            frontier_limit: int = 2 << 30, parallel_from: int = 1_000,
            cache_entries: int = CACHE_ENTRIES, checkpoint: Optional[str] = None,
            checkpoint_every: float = 600.0) -> ExploreReport:
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

    Both run on the one breadth-first driver (:func:`properties.search.bfs.search`), as a
    :class:`SweepSystem` or a :class:`SingleSystem`.

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
        workers: processes expanding each level (1: this one; more: a Dask cluster of that
            many local worker processes, started for the search and stopped after it).
        cluster: the address of a running Dask scheduler to expand the levels on (its
            workers; ``workers`` is then ignored).
        spill_dir: where a frontier larger than ``frontier_limit`` bytes is spilled (in a
            temporary directory made there; default the system's temporary directory).
        parallel_from: with workers or a cluster, levels whose frontier has fewer nodes than
            this (ten times this for the last level) are expanded here (starting the workers
            costs more than they would save).
        cache_entries: the all-readings sweep's budget of memo-table entries
            (:data:`CACHE_ENTRIES`; past it, entries are dropped or the tables emptied: the
            output is the same, only time changes).
        checkpoint: a directory where the search is saved as it goes and from which it is
            resumed when it holds this search's checkpoint
            (:mod:`properties.search.checkpoint`; no ``keep_edges``; with workers or a cluster,
            saved between the levels they expand); the report is the same as that of a search
            never stopped, whatever the workers of each part. None: no checkpoint.
        checkpoint_every: seconds between the checkpoint's periodic saves.

    Returns:
        An :class:`ExploreReport`. Deterministic: the same for every number of workers.

    Raises:
        ValueError: ``reading=None`` with a consumer other than the reference model,
            ``workers`` below 1, or a checkpoint with ``keep_edges``.
        CheckpointError: the checkpoint directory cannot be used (see
            :class:`~properties.search.checkpoint.Checkpoint`), or holds more states than
            ``max_states`` or a deeper search than ``depth``.

    Clauses: every clause of the property catalogue (P00..P40) and of the knobs (Q-ids).
    """
    all_readings = reading is None
    if all_readings and consumer is not REFERENCE:
        raise ValueError("exploring every reading at once needs the reference consumer")
    if workers < 1:
        raise ValueError(f"workers must be at least 1, not {workers}")
    properties = tuple(properties)
    if all_readings:
        system = SweepSystem(vocabulary, properties, adversarial, cache_entries)
    else:
        system = SingleSystem(vocabulary, reading, consumer, properties, adversarial,
                              check_readings)
    saved = None
    if checkpoint is not None:
        if keep_edges:
            raise ValueError("a checkpoint needs a search without the graph (its edges are "
                             "not saved)")
        from properties.search.checkpoint import Checkpoint
        saved = Checkpoint(checkpoint, _identity(vocabulary, reading, consumer, properties,
                                                 adversarial, check_readings,
                                                 stop_when_found), checkpoint_every)
    engine = None
    if workers > 1 or cluster:
        from properties.search.dask_engine import DaskEngine
        engine = DaskEngine(system, workers=workers, address=cluster, local_below=parallel_from,
                            frontier_limit=frontier_limit, spill_dir=spill_dir)
    else:
        engine = LocalEngine(system, frontier_limit=frontier_limit, spill_dir=spill_dir)
    found = report = None
    try:
        with _cyclic_gc_paused():  # the report too is parked with the oldest generation
            found = search(system, depth, engine, max_states, timeout, progress,
                           stop_when_found, keep_edges, saved)
            report = _report(found, system, depth, all_readings)
    except KeyboardInterrupt:  # a Ctrl-C while the collector was paused or restored
        if report is None:
            report = _report(found or Search(stopped_by="interrupted"), system, depth,
                             all_readings)
        report.stopped_by, report.complete = "interrupted", False
    return report


def _identity(vocabulary: Vocabulary, reading: Optional[Reading], consumer: Consumer,
              properties: tuple, adversarial: bool, check_readings: bool,
              stop_when_found: bool) -> dict:
    """What a checkpoint of :func:`explore` is a checkpoint of (JSON): the vocabulary's
    fingerprint (:func:`~properties.search.store.component_fingerprint`, hex), the reading (its
    :attr:`~model.readings.Reading.name`, a preset's or ``KNOB=OPTION,...``; or ``"all"``),
    the consumer's name, the properties' ids and the flags."""
    return {"vocabulary": f"{component_fingerprint(vocabulary):016x}",
            "reading": "all" if reading is None else reading.name,
            "consumer": consumer.name, "properties": [p.id for p in properties],
            "adversarial": adversarial, "checkReadings": check_readings,
            "stopWhenFound": stop_when_found}


def _report(found: Search, system: TransitionSystem, depth: int,
            all_readings: bool) -> ExploreReport:
    """The :class:`ExploreReport` of a search: witnesses rebuilt on ``system``, nodes and
    parents as views that rebuild nodes on a fresh copy of it."""
    report = ExploreReport(states=found.states, edges=found.edges, depth=found.depth,
                           stopped_by=found.stopped_by, partial=found.partial,
                           seconds=found.seconds,
                           workers=found.workers, storage=found.storage)
    report.complete = report.stopped_by == "depth" and (report.depth == depth or found.drained)
    witness = _Witnesses(found, system)
    for key, (_, _, payload) in found.findings.items():
        if key[0] == "split":
            node, move, pair = payload
            report.splits[key[1]] = (witness(node, move), pair)
        elif key[0] == "violation":
            node, move, text = payload
            report.violations[key[1]] = (witness(node, move), text)
    report.classes = found.tags if all_readings else 1
    replay = _Nodes(found, system.fresh())
    report.nodes, report.parents = replay, _Parents(replay)
    report.edges_seen = _Edges(replay, found.edge_list) if found.edge_list is not None else []
    return report


class _Witnesses:
    """Rebuilds the trace of a finding, ``witness(node, move)``: the events to ``node`` and
    that of its ``move``, re-executed on the search's own system (its memo tables are warm)."""

    def __init__(self, found: Search, system: TransitionSystem):
        self.found, self.system = found, system

    def __call__(self, node: int, move: int) -> tuple[Event, ...]:
        labels = self.found.path(node)
        events, current = _replay(self.system, labels)
        return tuple(events) + (self.system.event(current, move, len(labels)),)


def _replay(system: TransitionSystem, labels: list) -> tuple[list, tuple]:
    """``(events, node)``: re-execute ``labels`` (``[(move, leaf)]``) from the root."""
    node, events = system.root(), []
    for level, (move, leaf) in enumerate(labels):
        event, node = system.child(node, move, leaf, level)
        events.append(event)
    return events, node


class _Nodes(SequenceABC):
    """``report.nodes``: node ``i`` as its system's value (e.g. ``(belief, state, producers,
    class)``), rebuilt by re-executing the event chain. The first item asked for rebuilds
    every node, in id order (one step per node, each from its parent); ``len`` does not."""

    def __init__(self, found: Search, system: TransitionSystem):
        self.found, self.system = found, system
        self._local: Optional[list] = None
        self._events: Optional[list] = None
        self._levels: Optional[list] = None

    def __len__(self) -> int:
        return self.found.states

    def _build(self) -> None:
        if self._local is not None:
            return
        system, parents = self.system, self.found.parents
        local, events, levels = [system.root()], [None], [0]
        for i in range(1, len(parents)):
            parent, move, leaf = unpack_key(parents[i])
            event, node = system.child(local[parent], move, leaf, levels[parent])
            local.append(node)
            events.append(event)
            levels.append(levels[parent] + 1)
        self._local, self._events, self._levels = local, events, levels

    def local(self, i: int) -> tuple:
        self._build()
        return self._local[i]

    def event(self, i: int) -> Optional[Event]:
        """The event that reaches node ``i`` (None for the root)."""
        self._build()
        return self._events[i]

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError(i)
        return self.system.value(self.local(i))

    def trace(self, node: int) -> tuple[Event, ...]:
        return tuple(_replay(self.system, self.found.path(node))[0])


class _Parents(SequenceABC):
    """``report.parents``: ``(parent id, event)`` per node (``(0, None)`` for the root)."""

    def __init__(self, nodes: _Nodes):
        self.nodes = nodes

    def __len__(self) -> int:
        return len(self.nodes)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError(i)
        if i == 0:
            return (0, None)
        return (unpack_key(self.nodes.found.parents[i])[0], self.nodes.event(i))

    def trace(self, node: int) -> tuple[Event, ...]:
        return self.nodes.trace(node)


class _Edges(SequenceABC):
    """``report.edges_seen``: every examined edge as ``(from, to, event)``, in search order."""

    def __init__(self, nodes: _Nodes, edge_list: tuple):
        self.nodes = nodes
        self.sources, self.targets, self.keys = (a.tolist() for a in edge_list)

    def __len__(self) -> int:
        return len(self.sources)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        source = self.sources[i]
        move = unpack_key(self.keys[i])[1]
        return (source, self.targets[i], self.nodes.system.event(
            self.nodes.local(source), move, self.nodes._levels[source]))


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


def _first_places(blocks, states: int, classes: int) -> tuple:
    """One pass over the pending nodes (``blocks``: int64 arrays of sweep nodes, in the order
    they will be expanded): ``(first, class_first)``, per consumer state number below
    ``states`` and per class number below ``classes`` the place of the first pending node
    that holds it (int64; -1 where none does). Only the nodes whose state or class has not
    been met in an earlier block are sorted, so the pass costs a few array operations per node
    (some 44 million at depth 7's last level, where a sort of them all took 12 s, at every
    eviction)."""
    first = np.full(states, -1, np.int64)
    class_first = np.full(classes, -1, np.int64)
    at = 0
    for nodes in blocks:
        for column, places in ((np.asarray(nodes[:, 1], dtype=np.int64), first),
                               (np.asarray(nodes[:, 3], dtype=np.int64), class_first)):
            new = np.flatnonzero(places[column] < 0)
            if len(new):
                found, place = np.unique(column[new], return_index=True)
                places[found] = at + new[place]
        at += len(nodes)
    return first, class_first


def _fps_of(tables: tuple, nodes: np.ndarray) -> np.ndarray:
    """Node fingerprints: each column of ``nodes`` numbers a value of the matching
    :class:`Interned` table (None: the column is a plain int, fingerprinted as itself)."""
    columns = []
    for j, table in enumerate(tables):
        col = nodes[:, j]
        columns.append(table.fingerprints()[col] if table is not None
                       else col.astype(np.uint64) * np.uint64(0x9FB21C651E98DF25))
    return mix(columns)


def _record(out: Expansion, recorded: set, key: str, seq: tuple, payload: tuple) -> None:
    """A finding kept once per key (the first in search order): ``key`` a violated property
    id (or ``P00-no-exception``), ``seq`` its place (see :class:`~properties.search.bfs.Expansion`),
    ``payload`` ``(node, move, witness text)``. ``recorded`` holds the keys already merged or
    recorded in this expansion (a later one could not win)."""
    if key not in recorded:
        recorded.add(key)
        out.findings.append((("violation", key), (), seq, payload))


class _Dispatch:
    """Per event number: the properties for its type, those reading beliefs, and those of each
    scope (after, target, step, transition)."""

    __slots__ = ("fires", "readers", "scoped")

    def __init__(self, properties: tuple, event: Event):
        self.fires = applicable(properties, type(event))
        self.readers = tuple(q for q in self.fires if q.reads_belief)
        self.scoped = tuple(tuple(q for q in self.fires if q.scope == scope)
                            for scope in ("after", "target", "step", "transition"))


class MoveTable:
    """The producer's side of every search: interned ``beliefs``, ``events`` and
    ``producer_sets``, and ``moves``: (belief, producer set) -> ``[(event, producer set after,
    conformant, belief after)]``, all numbers, in the fixed order of :func:`_node_moves`
    (``advanced``: (belief, event) -> belief after; ``draft_conformant``: per producer set,
    whether the trace is conformant under the draft's producer obligations).

    Two modes. Over every producer reading (``reading`` None: the all-readings sweep,
    :class:`SweepCache`, and the pair search, :class:`PairSystem`): a producer set is a
    frozenset of :data:`PRODUCER_READINGS` and ``draft_conformant`` says whether the draft's
    is in it. Under one ``reading`` (the single-reading search, :class:`SingleSystem`): a
    producer set is the conformance flag so far, False numbered 0 and True 1, the moves are
    those of that reading (the non-conformant ones after, with ``adversarial``), and
    ``draft_conformant`` is the flag itself.

    Args:
        vocabulary: the producer's finite world; adversarial: also the non-conformant moves;
        producers: the producer readings (or, under one reading, the flag) of the initial
        node; reading: None, or the one reading whose producer obligations the moves keep.
    """

    def __init__(self, vocabulary: Vocabulary, adversarial: bool, producers,
                 reading: Optional[Reading] = None):
        self.vocabulary, self.adversarial, self.reading = vocabulary, adversarial, reading
        self.beliefs = Interned([Belief()])
        self.events = Interned()
        self.producer_sets = Interned() if reading is None else Interned([False, True])
        self.draft_conformant: list = []
        self.moves: dict = {}
        self.advanced: dict = {}
        self.producer_set(producers)

    def producer_set(self, producers) -> int:
        """The number of a set of producer readings, or of a conformance flag under one
        reading (``draft_conformant`` says, per number, whether the draft's producer reading
        is in the set, or gives the flag)."""
        p = self.producer_sets.number(producers)
        values, flags = self.producer_sets.values, self.draft_conformant
        while len(flags) < len(values):
            value = values[len(flags)]
            flags.append(value if self.reading is not None else _DRAFT_PRODUCER in value)
        return p

    def moves_of(self, b: int, p: int) -> list:
        """The moves from (belief ``b``, producer set ``p``): ``[(event, producers after,
        conformant, belief after)]`` as numbers, in the fixed order of :func:`_node_moves`
        (``conformant``: whether some producer reading, or the one reading, allows the trace
        so far with this move)."""
        found = self.moves.get((b, p))
        if found is None:
            beliefs, events, reading = self.beliefs, self.events, self.reading
            belief = beliefs.values[b]
            found = self.moves[(b, p)] = []
            for event, after in _node_moves(belief, self.vocabulary,
                                            DRAFT if reading is None else reading,
                                            self.producer_sets.values[p], self.adversarial,
                                            reading is None):
                e = events.number(event)
                pa = self.producer_set(after)
                ba = self.advanced.get((b, e))
                if ba is None:
                    ba = self.advanced[(b, e)] = beliefs.number(advance(belief, event))
                found.append((e, pa, bool(after), ba))
        return found


class SweepCache(MoveTable):
    """The all-readings sweep's memo tables, shared by every node the sweep expands in one
    process, and the computations that fill them (all pure: an entry depends on its key
    alone, so every process computes the same ones, and a table may be dropped at any time).

    Interned values (:class:`Interned`): ``beliefs``, ``events``, ``producer_sets`` and the
    ``moves`` table of the :class:`MoveTable` it is, ``states``, ``classes``, ``shapes``
    (decision-tree shapes: leaf assignments and result groups), ``view_ids`` (belief views).
    Tables:

    * ``trees``: (state, event) -> ``([(assignment items, result, result state, halted, outcome,
      knobs)], shape)`` or the exception the step raised; ``local_trees``: the fields of a
      focus (:func:`model.consumer.focus_fields`) and an event -> an activity event's decisions
      (``[(items, knobs, attributes, Decision)]``) or exception.
    * ``forks``: (shape, class) -> ``([(leaf class, leaf index)], candidate knobs)``.
    * ``dispatch``: event -> :class:`_Dispatch`; ``views``: (belief, belief after, event) ->
      view id; ``move_rows``: (belief, producers) -> each move with what the hot loop reads
      of it (:meth:`move_rows_of`).
    * ``checked``: (view, state, event, outcome, conformant), packed by :func:`check_key`,
      -> ``((consulted, result, attributes), ...)``, a tuple that only grows, each time
      replaced by a longer one (:func:`_with_entry`); ``class_checked``: (that key, class) ->
      the violations under the class's readings; ``after_checked``, ``step_checked`` (keyed
      by the check key's (state, event, outcome) bits), ``target_checked``: the narrower
      scopes'.
    * ``inputs``: result state -> run input; ``resteps``: (state, event) -> the decision tree
      P36 and P37 re-step; ``numbered_by_id``: the restep's events by identity;
      ``step_decisions``: (state, event) -> the step's own decision tree on the state's focus
      (the ``local_trees`` entry) and the renamed one P37 last compared it with, for P37's
      decided shortcut (:meth:`step_decisions_of`, :class:`_Restep`); ``renamed_trees``: by
      the identity of such a tree, whether the renamed event's tree on the renamed focus decides
      alike, leaf by leaf (:meth:`renamed_alike_of`).
    * ``split_cost``, ``split_settled``: the split witnesses' costs so far and the forks that
      cannot improve them (:func:`_may_improve`).

    Past the sweep's budget of entries (:meth:`size`), the entries keyed by a consumer state
    and the forks of a class that no pending node needs soon are dropped (:meth:`evict`, as
    :meth:`SweepSystem.make_room` chooses), and the tables are emptied (:meth:`trim`) only when
    what is left is still too much: each entry is computed again, equal, if needed.
    """

    def __init__(self, vocabulary: Vocabulary, properties: tuple, adversarial: bool):
        super().__init__(vocabulary, adversarial, frozenset(PRODUCER_READINGS))
        self.properties = properties
        self.states = Interned([initial_state()])
        self.classes = Interned([()])
        self.shapes = Interned()
        self.view_ids = Interned()
        self.class_attrs = [frozenset()]
        self.attr_sets: dict = {}
        self.move_rows: dict = {}
        self.trees: dict = {}
        self.local_trees: dict = {}
        self.forks: dict = {}
        self.dispatch: dict = {}
        self.checked: dict = {}
        self.class_checked: dict = {}
        self.after_checked: dict = {}
        self.step_checked: dict = {}
        self.target_checked: dict = {}
        self.order = {p.id: i for i, p in enumerate(properties)}
        self.views: dict = {}
        self.inputs: dict = {}
        self.split_cost: dict = {}
        self.split_settled: dict = {}
        self.numbered_by_id: dict = {}
        self.resteps: dict = {}
        self.step_decisions: dict = {}
        self.renamed_trees: dict = {}
        self.consulted_sets: dict = {(): ((), _NOTHING, _NO_KNOBS, (_NO_KNOBS,))}  # none
        self.trims = 0
        self.evictions = 0
        self.generation = 0  # changed whenever entries are dropped (the blocks' mirrors go)

    def size(self) -> int:
        """Entries of the tables that grow with the search: those keyed by consumer
        transitions, the class outcomes and the forks (the forks of the classes of depth 7's
        last level come to millions, some 0.5 KB each)."""
        return len(self.trees) + len(self.checked) + len(self.step_checked) + \
            len(self.resteps) + len(self.target_checked) + len(self.local_trees) + \
            len(self.step_decisions) + len(self.renamed_trees) + len(self.class_checked) + \
            len(self.forks)

    def trim(self, limit: int) -> bool:
        """Empty the tables :meth:`size` counts, and those keyed by the state after a step,
        when :meth:`size` is more than ``limit`` entries (every entry is recomputed, equal, when
        next needed; the interned values, the moves and split costs stay). Returns whether it
        did."""
        if self.size() <= limit:
            return False
        for table in (self.trees, self.local_trees, self.checked, self.class_checked,
                      self.after_checked, self.step_checked, self.target_checked, self.inputs,
                      self.resteps, self.numbered_by_id, self.step_decisions,
                      self.renamed_trees, self.forks):
            table.clear()
        self.trims += 1
        self.generation += 1
        return True

    def evict(self, live: bytearray, live_classes: Optional[bytearray] = None) -> int:
        """Drop the entries of the tables keyed by the consumer state a step starts from
        (``trees``, ``step_decisions``, ``checked``, ``step_checked``, ``class_checked``) for
        every state number ``s`` with ``live[s] == 0`` (numbers past ``live``'s end count as
        live), and with ``live_classes`` likewise the ``forks`` of the classes whose byte is 0:
        the states and classes no pending node holds, or none needed soon
        (:meth:`SweepSystem.make_room`). The tables keyed otherwise (by focus, state after,
        target view) are kept. Returns how many entries of the tables :meth:`size` counts were
        dropped. The dropped keys are deleted in place (a table keeps its room for the entries
        that come next; rebuilding each table took twice as long)."""
        n = len(live)
        mask = CHECK_STATE_MASK
        before = self.size()
        dropped = (
            (self.trees, [k for k in self.trees if k[0] < n and not live[k[0]]]),
            (self.step_decisions, [k for k in self.step_decisions
                                   if k[0] < n and not live[k[0]]]),
            (self.checked, [k for k in self.checked if (k & mask) < n and not live[k & mask]]),
            (self.step_checked, [k for k in self.step_checked
                                 if (k & mask) < n and not live[k & mask]]),
            (self.class_checked, [k for k in self.class_checked
                                  if (k[0] & mask) < n and not live[k[0] & mask]]))
        if live_classes is not None:
            m = len(live_classes)
            dropped += ((self.forks, [k for k in self.forks
                                      if k[1] < m and not live_classes[k[1]]]),)
        for table, keys in dropped:
            for k in keys:
                del table[k]
        self.evictions += 1
        self.generation += 1
        return before - self.size()

    def entries_by_state(self, n: int) -> np.ndarray:
        """The entries of the tables :meth:`evict` keys by the consumer state a step starts
        from (``trees``, ``step_decisions``, ``checked``, ``step_checked``,
        ``class_checked``), per state number below ``n``: an int64 array of ``n`` counts
        (numbers past ``n`` are not counted)."""
        mask = CHECK_STATE_MASK
        columns = [np.fromiter((k[0] for k in self.trees), np.int64, len(self.trees)),
                   np.fromiter((k[0] for k in self.step_decisions), np.int64,
                               len(self.step_decisions)),
                   np.fromiter((k & mask for k in self.checked), np.int64, len(self.checked)),
                   np.fromiter((k & mask for k in self.step_checked), np.int64,
                               len(self.step_checked)),
                   np.fromiter((k[0] & mask for k in self.class_checked), np.int64,
                               len(self.class_checked))]
        keys = np.concatenate(columns)
        return np.bincount(keys[keys < n], minlength=n)[:n]

    def forks_by_class(self, m: int) -> np.ndarray:
        """The ``forks`` per class number below ``m``: an int64 array of ``m`` counts."""
        keys = np.fromiter((k[1] for k in self.forks), np.int64, len(self.forks))
        return np.bincount(keys[keys < m], minlength=m)[:m]

    def moves_of(self, b: int, p: int) -> list:
        """:meth:`MoveTable.moves_of`, with each new event's :class:`_Dispatch` made."""
        found = self.moves.get((b, p))
        if found is None:
            found = super().moves_of(b, p)
            for e, _, _, _ in found:
                if e not in self.dispatch:
                    self.dispatch[e] = _Dispatch(self.properties, self.events.values[e])
        return found

    def move_rows_of(self, b: int, p: int) -> list:
        """``move_rows[(b, p)]``: the moves of :meth:`moves_of` as ``(event, producers after,
        conformant, belief after, properties that fire, belief view)`` (the properties of the
        event's type, none without properties; the view of :meth:`view_of`, None when none of
        them reads beliefs), computed when missing: what the hot loop reads per move."""
        rows = self.move_rows[(b, p)] = []
        for e, pa, ok, ba in self.moves_of(b, p):
            d = self.dispatch[e]
            props, readers = (d.fires, d.readers) if self.properties else ((), ())
            rows.append((e, pa, ok, ba, props,
                         self.view_of(b, ba, e, readers) if readers else None))
        return rows

    def decisions_of(self, state: ConsumerState, e: int):
        """The decision tree of an activity event on its focus in ``state`` (computed once per
        (focus, event), :func:`model.consumer.focus`), as ``[(assignment items, knobs, their
        attributes, Decision)]`` with knobs as (reading attribute, option) pairs; None when the
        step reads more of the state than a focus. Raises what deciding raised."""
        event = self.events.values[e]
        fields = focus_fields(state, event)
        if fields is None:
            return None
        key = fields + (e,)  # the focus's fields: no Focus built, nor hashed, to look it up
        found = self.local_trees.get(key)
        if found is None:
            try:
                found = []
                for a, d in step_leaves(Focus(*fields), event, decide):
                    knobs = tuple((_ATTR_OF_KNOB[k], v) for k, v in a.items())
                    found.append((tuple(a.items()), knobs, tuple(x for x, _ in knobs), d))
            except Exception as exc:  # noqa: BLE001 - raised again for every state with it
                found = exc.with_traceback(None)
            self.local_trees[key] = found
        if isinstance(found, Exception):
            # afresh each time: a traceback kept would grow by every raise and hold frames
            raise found.with_traceback(None)
        return found

    def leaves_of(self, state: ConsumerState, e: int, s: Optional[int] = None) -> list:
        """The step's decision tree on (state, event), as ``[(assignment items, knobs,
        StepResult)]``: an activity event's decisions (:meth:`decisions_of`) settled on the
        state, any other event stepped whole (:func:`step_leaves`). With ``s``, the state's
        number, and properties to check, the decisions are also kept as ``step_decisions[(s,
        e)]`` (:meth:`step_decisions_of`), which P37's checks of the tree read."""
        decisions = self.decisions_of(state, e)
        if s is not None and decisions is not None and self.properties:
            self.step_decisions.setdefault((s, e), [decisions, None, None, None])
        event = self.events.values[e]
        if decisions is None:
            return [(tuple(a.items()), tuple((_ATTR_OF_KNOB[k], v) for k, v in a.items()), r)
                    for a, r in step_leaves(state, event)]
        return [(items, knobs, settle(state, event, d)) for items, knobs, _, d in decisions]

    def tree_of(self, s: int, e: int):
        """``trees[(s, e)]``, computed when missing (see the class)."""
        tree = self.trees.get((s, e))
        if tree is None:
            states = self.states
            state = states.values[s]
            number = states.number
            try:
                # a step that leaves the state itself (a kept or dropped event) needs no lookup
                leaves = [(items, r, s if r.state is state else number(r.state), r.state.halted,
                           knobs) for items, knobs, r in self.leaves_of(state, e, s)]
                # each result holds the interned state after, not an equal copy of it
                leaves = [leaf if leaf[1].state is states.values[leaf[2]] else
                          (leaf[0], leaf[1].but(state=states.values[leaf[2]])) + leaf[2:]
                          for leaf in leaves]
            except Exception as exc:  # noqa: BLE001 - the escape is the finding
                # kept without its traceback, whose frames would hold the exception in a cycle
                tree = self.trees[(s, e)] = exc.with_traceback(None)
                return tree
            outcomes = [(rs, r.warnings, r.fatal) for _, r, rs, _, _ in leaves]
            groups = tuple(outcomes.index(o) for o in outcomes)
            shape = self.shapes.number((tuple(leaf[0] for leaf in leaves), groups))
            tree = self.trees[(s, e)] = ([(items, r, rs, halted, g, knobs)
                                          for (items, r, rs, halted, knobs), g
                                          in zip(leaves, groups)], shape)
        return tree

    def fork_of(self, shape: int, c: int) -> tuple:
        """``forks[(shape, c)]``, computed when missing (see the class)."""
        found = self.forks.get((shape, c))
        if found is None:
            classes = self.classes
            assignments, groups = self.shapes.values[shape]
            cls = classes.values[c]
            selected = [(classes.number(leaf_class), leaf)
                        for leaf_class, leaf in _select(assignments, groups, cls)]
            fixed = dict(cls)
            candidates = tuple(dict.fromkeys(k for lc, _ in selected
                                             for k, _ in classes.values[lc] if k not in fixed))
            if len(selected) >= 1 << KEY_LEAF_BITS:
                raise OverflowError(f"a fork into {len(selected)} classes: more than a parent "
                                    "entry holds (pack_key)")
            found = self.forks[(shape, c)] = (selected, candidates)
            self.describe_classes()
        return found

    def describe_classes(self) -> None:
        """Give each class interned since the last call the frozenset of the reading
        attributes it fixes (``class_attrs``; equal sets are one object: 4,037 sets for 67,244
        classes at depth 5, where a set per class took 46 MB). A class's representative
        reading is made when a check needs it (:meth:`representative`), not kept per class:
        at depth 7 most classes are those of the last level's successors, never checked
        under."""
        classes, attrs, shared = self.classes.values, self.class_attrs, self.attr_sets
        while len(attrs) < len(classes):
            fixed = frozenset(_ATTR_OF_KNOB[k] for k, _ in classes[len(attrs)])
            attrs.append(shared.setdefault(fixed, fixed))

    def representative(self, c: int) -> Reading:
        """The reading standing for class number ``c``: its options, ``draft`` for the knobs
        it leaves free (:func:`_representative`, memoised for the classes met last)."""
        return _representative(self.classes.values[c])

    def view_of(self, b: int, ba: int, e: int, props: tuple) -> int:
        """What ``props`` read of the beliefs around the event (their ``belief_view``s), as an
        interned int: outcomes are shared across beliefs whose views agree."""
        found = self.views.get((b, ba, e))
        if found is None:
            beliefs = self.beliefs.values
            event, before, after = self.events.values[e], beliefs[b], beliefs[ba]
            read = tuple(dict.fromkeys(p.belief_view for p in props))
            found = self.views[(b, ba, e)] = self.view_ids.number(
                tuple((view(before, event), view(after, event)) for view in read))
        return found

    def restep_tree(self, st: ConsumerState, ev: Event):
        """The decision tree the re-steps of P36 and P37 read for (``st``, ``ev``): ``(decided,
        [(items, knobs, attributes, leaf)], settled)``, each leaf a Decision (decided) or a
        StepResult, ``settled[i]`` leaf i's ``(state, warnings, fatal)`` once a re-step
        reached it (None before); raises what the step raised. Computed once per (state,
        event)."""
        # The renamed events P37 passes come from its memo table, the same objects each time:
        # find their numbers by identity before hashing and comparing them whole.
        key = (st, by_identity(self.numbered_by_id, ev, self.events.number))
        tree = self.resteps.get(key)
        if tree is None:
            try:
                decisions = self.decisions_of(st, key[1])
                # an activity event's leaves are settled when a reading reaches them
                leaves = decisions if decisions is not None else \
                    [(items, knobs, tuple(a for a, _ in knobs), r)
                     for items, knobs, r in self.leaves_of(st, key[1])]
                tree = (decisions is not None, leaves, [None] * len(leaves))
            except Exception as exc:  # noqa: BLE001 - raised to the check, as the step would
                tree = exc.with_traceback(None)
            self.resteps[key] = tree
        if isinstance(tree, Exception):
            raise tree.with_traceback(None)
        return tree

    def restep_for(self, recorder: RecordingReading, s: int, e: int) -> "_Restep":
        """The reference step under ``recorder``'s reading for the transition from state number
        ``s`` on event number ``e``, read off decision trees (a :class:`_Restep`)."""
        return _Restep(self, recorder, s, e)

    def step_decisions_of(self, s: int, e: int) -> list:
        """``step_decisions[(s, e)]``, computed when missing: ``[the decision tree of event
        ``e`` on state ``s``'s focus (:meth:`decisions_of`, the same list) or None when the step
        does not decide it on a focus, then the renamed state, renamed event and decision tree
        of P37's last re-step of this transition (None before)]`` (:class:`_Restep`)."""
        key = (s, e)
        found = self.step_decisions.get(key)
        if found is None:
            found = self.step_decisions[key] = [self.decisions_of(self.states.values[s], e),
                                                None, None, None]
        return found

    def renamed_alike_of(self, mine: list, st: ConsumerState, ev: Event, alike: Callable):
        """For the decision tree ``mine`` of an event on a focus (a :meth:`decisions_of` list),
        whether the tree of the renamed event ``ev`` on the renamed state ``st`` (P37's renaming
        of a state with that focus) has the same leaves, knob by knob, and then, leaf by leaf,
        whether its decision is ``mine``'s renamed (``alike(mine's, theirs)``): a tuple of
        bools, or None when the renamed event is not decided on a focus, the trees' leaves
        differ or deciding the renamed event raised (the caller then reads the decisions one at
        a time, as without this memo). Sound because renaming ids renames a focus whole: states
        with one focus have one renamed focus (a test checks it on every focus of a sweep).
        Kept in
        ``renamed_trees`` by the identity of ``mine`` (each (focus, event) has one such list
        while ``local_trees`` holds it): what renaming does to a decision depends on the focus
        and the event alone."""
        hit = self.renamed_trees.get(id(mine))
        if hit is not None and hit[0] is mine:
            return hit[1]
        try:
            theirs = self.decisions_of(st, by_identity(self.numbered_by_id, ev,
                                                       self.events.number))
        except Exception:  # noqa: BLE001 - raised again where the decisions are read singly
            theirs = None
        flags = None
        if theirs is not None and len(theirs) == len(mine) and \
                all(a[0] == b[0] for a, b in zip(mine, theirs)):
            flags = tuple(alike(a[3], b[3]) for a, b in zip(mine, theirs))
        self.renamed_trees[id(mine)] = (mine, flags)
        return flags

    def leaf_outcome(self, key: int, lc: int, t_args: tuple, report: tuple,
                     entries: Optional[list]):
        """The per-leaf check sequence (the per-leaf loop's, :meth:`SweepSystem._expand_node`,
        and the blocks' slow leaves', :meth:`~properties.search.blocks.BlockTables._slow`): what
        :meth:`class_outcome` returns for the leaf transition ``key`` under the readings of
        class ``lc`` (``t_args``, ``report`` as there), taken from ``checked`` where an entry
        holds class-wide (the first entry when it consulted no knob; else the one ``_known``
        finds for the class's representative, when the knobs it consulted are ones the class
        fixes), else :meth:`class_outcome` (checked under the representative first when no
        entry holds for it). ``entries``: ``checked.get(key)``, which the caller has looked up."""
        if entries is None:  # a first check, under the class's representative
            entry = self.check(key, self.representative(lc), t_args, report)
            if entry is _BROKEN:
                return _BROKEN
        elif not entries[0][0] and _known is _KNOWN:
            hit = entries[0][1]
            return (hit,) if hit is not None else ()
        else:
            entry = _known(entries, self.representative(lc))
        if entry is not None and entry[2] <= self.class_attrs[lc]:  # it holds class-wide
            return (entry[1],) if entry[1] is not None else ()
        return self.class_outcome(key, lc, entry, t_args, report)

    def class_outcome(self, key: int, lc: int, entry: Optional[tuple], t_args: tuple,
                      report: tuple):
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
        reading, else from :meth:`check`; ``entry`` is the one that holds for the
        representative, or None when none does yet. ``t_args`` are :meth:`check`'s transition
        arguments, ``report`` its ``(out, recorded, seq, node, move)``."""
        rep = self.representative(lc)
        fixed = self.class_attrs[lc]
        if entry is None:
            entry = self.check(key, rep, t_args, report)
            if entry is _BROKEN:
                return _BROKEN
        if entry[2] <= fixed:  # it holds class-wide
            return (entry[1],) if entry[1] is not None else ()
        found = self.class_checked.get((key, lc))
        if found is not None:
            return found
        pending = [({}, rep)]  # (options beyond the class's, their reading)
        violated: dict = {}  # property id -> (property, witness), the first found
        while pending:
            extra, reading = pending.pop()
            entry = _known(self.checked.get(key), reading)
            if entry is None:
                entry = self.check(key, reading, t_args, report)
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
        order = self.order
        outcome = self.class_checked[(key, lc)] = tuple(
            sorted(violated.values(), key=lambda found: order[found[0].id]))
        return outcome

    def check(self, key: int, reading: Reading, t_args: tuple, report: tuple):
        """Compute (no cached outcome applies to the transition ``key`` under ``reading``) the
        first property the leaf transition violates under ``reading``: the entry ``(consulted
        (attribute, option) pairs, (property, witness) or None, frozenset of the consulted
        attributes)`` added to ``checked[key]``, valid under every reading that agrees on those
        pairs; :data:`_BROKEN` when the run input raised (recorded as P00 through ``report``,
        ``(out, recorded, seq, node, move)``). ``t_args`` is ``(level, state, e, result, rs, b,
        ba, ok)``. The properties of scope ``"after"``, ``"target"`` and ``"step"`` come from
        their shared tables (:func:`_shared`), the others are checked afresh (:func:`_fresh`)."""
        level, state, e, result, rs, b, ba, ok = t_args
        event = self.events.values[e]
        run_input = self.inputs.get(rs)
        if run_input is None:
            try:
                run_input = self.inputs[rs] = tuple(REFERENCE.run_input(result.state))
            except Exception as exc:  # noqa: BLE001
                out, recorded, seq, node, move = report
                _record(out, recorded, "P00-no-exception", seq,
                        (node, move, f"{type(exc).__name__}: {exc}"))
                return _BROKEN
        recorder = RecordingReading(reading)
        beliefs = self.beliefs.values
        t = Transition(level, state, event, result.state, result.warnings, result.fatal,
                       recorder, run_input, beliefs[b], beliefs[ba], ok,
                       self.restep_for(recorder, check_key_state(key), e))
        after_props, target_props, step_props, other_props = self.dispatch[e].scoped
        interned = self.consulted_sets
        parts = []
        if after_props:
            parts.append(_shared(self.after_checked, (rs, ok), t, recorder, after_props,
                                 interned))
        if target_props:
            # the event by its number: the view's other members as they are
            parts.append(_shared(self.target_checked,
                                 (key >> CHECK_VIEW_SHIFT, e) + target_view(t)[1:], t,
                                 recorder, target_props, interned))
        if step_props:
            # (state, event, step outcome): the step's outcome numbers its state after,
            # warnings and fatal
            parts.append(_shared(self.step_checked, key & CHECK_STEP_MASK, t, recorder,
                                 step_props, interned))
        if other_props:
            parts.append(_fresh(t, recorder, other_props, interned))
        for part in parts:
            if part is not _NO_KNOBS:
                break
        else:  # the commonest: no part consulted a knob or found anything
            self.checked[key] = _with_entry(interned, self.checked.get(key), _NO_KNOBS)
            return _NO_KNOBS
        # The first violation in catalogue order, valid under every reading that agrees on the
        # knobs any part consulted.
        order = self.order
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
            consulted, attrs, _, _ = _consulted_set(self.consulted_sets,
                                                 tuple(dict.fromkeys(consulted)))
        entry = (consulted, outcome, attrs) if outcome is not None else \
            _consulted_set(self.consulted_sets, consulted)[2]
        self.checked[key] = _with_entry(self.consulted_sets, self.checked.get(key), entry)
        return entry

    def splits_at(self, out: Expansion, leaves: list, node: int, move: int, rank: tuple) -> None:
        """Record the knobs that split at a fork, as findings ``("split", knob)`` whose cost
        is ``rank + (context length,)`` (per knob: the shortest trace; among equally short
        ones, one conformant under the draft's producer obligations first, then the pair whose
        context departs least from ``draft``; first found on ties). ``rank`` is (level, not
        conformant under draft); ``leaves`` are ``[(class, StepResult)]``. Only knobs that
        improve :attr:`split_cost` are recorded (it is updated)."""
        cost = self.split_cost
        verdict_leaves = [(dict(c), Verdict(r.state, tuple((0, w) for w in r.warnings),
                                            (0, r.fatal) if r.fatal else None, 1))
                          for c, r in leaves]
        for knob, pair in knob_splits(verdict_leaves, key=_step_key).items():
            c = rank + (len(context_of(pair, knob)),)
            if knob not in cost or c < cost[knob]:
                cost[knob] = c
                out.findings.append((("split", knob), c, (node, move, 0), (node, move, pair)))


class _Restep:
    """The re-step of one checked transition of the all-readings sweep (a
    :attr:`~properties.catalogue.Transition.restep`), read off the sweep's decision trees:
    ``restep(st, ev) -> (state, warnings, fatal)`` is the reference step under ``recorder``'s
    reading, the leaf of :meth:`SweepCache.restep_tree` the reading reaches, with that leaf's
    knobs recorded as consulted, as the step would consult them.

    It also reads decisions, for P37 (:func:`properties.catalogue.decided_alike`):
    :meth:`decision` is the :class:`~model.consumer.Decision` the reading reaches on an activity
    event's decision tree on its focus (computed once per (focus, event) and shared by every
    state with that focus, :meth:`SweepCache.decisions_of`; the tree last read for this
    transition is kept with the renamed state and event it was read for, and taken again only
    for those same objects), and :meth:`step_decision` the decision of the transition's own
    step, from state number ``s`` on event number ``e`` (both from
    :meth:`SweepCache.step_decisions_of`)."""

    __slots__ = ("cache", "recorder", "s", "e", "pair")

    def __init__(self, cache: SweepCache, recorder: RecordingReading, s: int, e: int):
        self.cache, self.recorder, self.s, self.e = cache, recorder, s, e
        self.pair = None

    def _reached(self, leaves: list) -> int:
        """The index of the leaf of a decision tree (``[(items, knobs, attributes, leaf)]``)
        the reading takes."""
        if not leaves[0][1]:  # a tree of one leaf, which consulted no knob
            return 0
        base = self.recorder.base
        for i, (_, knobs, _, _) in enumerate(leaves):
            for attr, option in knobs:
                if getattr(base, attr) != option:
                    break
            else:
                return i
        raise AssertionError("no leaf of the step's decision tree takes the reading")

    def __call__(self, st: ConsumerState, ev: Event) -> tuple:
        decided, leaves, settled = self.cache.restep_tree(st, ev)
        i = self._reached(leaves)
        self.recorder.consulted.extend(leaves[i][2])
        found = settled[i]
        if found is None:
            result = settle(st, ev, leaves[i][3]) if decided else leaves[i][3]
            found = settled[i] = (result.state, result.warnings, result.fatal)
        return found

    def decision(self, st: ConsumerState, ev: Event):
        """The Decision the reading reaches on (``st``, ``ev``), its knobs recorded as
        :meth:`__call__` would record them; None for an event the step does not decide on a
        focus. Raises what deciding raised."""
        pair = self._pair()
        if pair[1] is st and pair[2] is ev:
            leaves = pair[3]
        else:
            c = self.cache
            # the focus's decision tree itself (shared by every state with that focus), not
            # the re-step's tree of this state: the same leaves, without a table entry per state
            leaves = c.decisions_of(st, by_identity(c.numbered_by_id, ev, c.events.number))
            pair[1:] = st, ev, leaves
        if leaves is None:
            return None
        _, _, attrs, d = leaves[self._reached(leaves)]
        self.recorder.consulted.extend(attrs)
        return d

    def renamed_alike(self, st: ConsumerState, ev: Event, alike: Callable) -> bool:
        """True when the reading's decision on the renamed ``st`` and ``ev`` is certainly the
        renamed decision of the transition's own step, as :meth:`decision` and
        :meth:`step_decision` compared by ``alike(mine, theirs)`` would find (the reached
        leaf's knobs then recorded as :meth:`decision` records them); False where that is not
        known here (the caller reads the decisions). Read off
        :meth:`SweepCache.renamed_alike_of`: computed once per decision tree on a focus, for
        every state with that focus."""
        mine = self._pair()[0]
        if mine is None:
            return False
        flags = self.cache.renamed_alike_of(mine, st, ev, alike)
        if flags is None:
            return False
        i = self._reached(mine)
        if not flags[i]:
            return False
        self.recorder.consulted.extend(mine[i][2])
        return True

    def step_decision(self):
        """The Decision of the transition's own step under the reading (nothing recorded: the
        step's knobs are the fork's, not the checks'), or None (not decided on a focus)."""
        leaves = self._pair()[0]
        return None if leaves is None else leaves[self._reached(leaves)][3]

    def _pair(self) -> list:
        """``SweepCache.step_decisions[(s, e)]`` (:meth:`SweepCache.step_decisions_of`), kept
        for the checks of this transition."""
        pair = self.pair
        if pair is None:
            pair = self.pair = self.cache.step_decisions.get((self.s, self.e)) or \
                self.cache.step_decisions_of(self.s, self.e)
        return pair


class SweepSystem(TransitionSystem):
    """Every reading in one sweep (see :func:`explore`), as a transition system: a node is
    ``(belief, state, producer readings, class)``, each a number of the :class:`SweepCache`'s
    interned tables; a move is an event of :func:`_node_moves`, a leaf one class of the step's
    fork (:func:`_select`)."""

    width = 4
    blocks = True
    """Expand a chunk of nodes in blocks (:class:`~properties.search.blocks.BlockTables`); False:
    node by node, leaf by leaf (:meth:`_expand_node`, the reference the blocks must equal; also
    taken while ``_known`` is replaced, as a test does to compare shared and fresh checks)."""

    def __init__(self, vocabulary: Vocabulary, properties: tuple, adversarial: bool,
                 cache_entries: int = CACHE_ENTRIES):
        self.config = (vocabulary, properties, adversarial, cache_entries)
        self.cache = SweepCache(vocabulary, properties, adversarial)
        self.cache_entries = cache_entries
        self._tables: Optional[BlockTables] = None
        self._columns: Optional[ComponentColumns] = None  # outlive the tables' generations

    def spec(self, workers: int) -> tuple:
        """Each of ``workers`` processes gets a share of the memo-table budget (they hold
        disjoint consumer states, so the tables stay about as large in all)."""
        return type(self), self.config[:-1] + (max(self.cache_entries // workers, 1),)

    def cache_size(self) -> int:
        """Entries of the memo tables keyed by consumer transitions (:meth:`SweepCache.size`)."""
        return self.cache.size()

    def storage(self) -> dict:
        """``{"memoEntries": entries of the memo tables keyed by consumer transitions now,
        "memoTrims": how many times they were emptied (:meth:`SweepCache.trim`),
        "memoEvictions": how many times the entries of states no pending node holds were
        dropped (:meth:`make_room`)}``."""
        return {"memoEntries": self.cache.size(), "memoTrims": self.cache.trims,
                "memoEvictions": self.cache.evictions}

    EVICT_KEEPS = 0.85
    """After an eviction (:meth:`make_room`) the tables may hold up to this share of
    ``cache_entries`` (the pending states' entries and those of the tables not keyed by a state
    before a step); past it they are emptied."""

    def make_room(self, pending) -> None:
        """When the memo tables hold more than ``cache_entries`` entries (:meth:`SweepCache.size`),
        make one eviction (:meth:`SweepCache.evict`): the entries of the consumer states and
        the forks of the classes that no pending node holds go (at the last level, a state
        whose last node has been expanded is never stepped from again). If the entries of
        every pending state and class, beside the tables keyed otherwise, would still be more
        than :attr:`EVICT_KEEPS` of the budget, only those whose first place among the pending
        nodes (:func:`_first_places`) comes before one horizon are kept, as many as half the
        budget holds (the furthest next use goes first, as in Belady's replacement, over
        states and classes alike). The tables are emptied (:meth:`SweepCache.trim`) only if
        what is left is still more than :attr:`EVICT_KEEPS` of the budget. ``pending``: a
        callable giving the pending nodes' int64 blocks in the order they will be expanded.
        See :meth:`~properties.search.bfs.TransitionSystem.make_room`."""
        c = self.cache
        if c.size() <= self.cache_entries:
            return
        n, m = len(c.states.values), len(c.classes.values)
        first, class_first = _first_places(pending(), n, m)
        counts, fork_counts = c.entries_by_state(n), c.forks_by_class(m)
        # the places, in the pending order, from which the entries of a state or class are
        # needed next, and how many entries each keeps; what no pending node needs goes first
        pending_states = np.flatnonzero(first >= 0)
        pending_classes = np.flatnonzero(class_first >= 0)
        places = np.concatenate((first[pending_states], class_first[pending_classes]))
        weights = np.concatenate((counts[pending_states], fork_counts[pending_classes]))
        kept = int(weights.sum())
        others = c.size() - int(counts.sum()) - int(fork_counts.sum())  # not keyed so
        horizon = None  # keep every pending state's and class's entries
        if others + kept > self.cache_entries * self.EVICT_KEEPS:
            # keep those needed soonest, as many as half the budget holds beside the tables not
            # keyed by a state or class: the furthest next use goes first (Belady)
            order = np.argsort(places, kind="stable")
            within = np.cumsum(weights[order]) <= self.cache_entries // 2 - others
            horizon = int(places[order][within].max()) + 1 if within.any() else 0
        live = first >= 0 if horizon is None else (first >= 0) & (first < horizon)
        live_classes = class_first >= 0 if horizon is None else \
            (class_first >= 0) & (class_first < horizon)
        c.evict(bytearray(live.tobytes()), bytearray(live_classes.tobytes()))
        c.trim(int(self.cache_entries * self.EVICT_KEEPS))

    def forget_findings(self) -> None:
        """Empty the split witnesses' costs and settled forks (:attr:`SweepCache.split_cost`,
        ``split_settled``): :meth:`expand` takes them up again from ``known``. See
        :meth:`~properties.search.bfs.TransitionSystem.forget_findings`."""
        self.cache.split_cost.clear()
        self.cache.split_settled.clear()

    def fresh(self) -> "SweepSystem":
        """The same system with empty memo tables."""
        return SweepSystem(*self.config)

    def root(self) -> tuple:
        return (0, 0, 0, 0)

    def fingerprints(self, nodes: np.ndarray) -> np.ndarray:
        c = self.cache
        return _fps_of((c.beliefs, c.states, c.producer_sets, c.classes), nodes)

    def routing(self, nodes: np.ndarray) -> np.ndarray:
        # by consumer state: the step trees and most check outcomes are keyed by it
        return self.cache.states.fingerprints()[nodes[:, 1]]

    def tags(self, nodes: np.ndarray) -> np.ndarray:
        return self.cache.classes.fingerprints()[nodes[:, 3]]

    def child(self, node: tuple, move: int, leaf: int, level: int = 0) -> tuple:
        b, s, p, cl = node
        c = self.cache
        e, pa, _, ba = c.moves_of(b, p)[move]
        tree, shape = c.tree_of(s, e)
        leaves = ((cl, 0),) if len(tree) == 1 else c.fork_of(shape, cl)[0]
        lc, li = leaves[leaf]
        return c.events.values[e], (ba, tree[li][2], pa, lc)

    def event(self, node: tuple, move: int, level: int = 0) -> Event:
        c = self.cache
        return c.events.values[c.moves_of(node[0], node[2])[move][0]]

    def value(self, node: tuple) -> tuple:
        b, s, p, cl = node
        c = self.cache
        return (c.beliefs.values[b], c.states.values[s], c.producer_sets.values[p],
                c.classes.values[cl])

    def export(self, nodes: np.ndarray) -> list:
        c = self.cache
        return [(c.beliefs.values[b], c.states.values[s],
                 tuple(sorted(c.producer_sets.values[p])), c.classes.values[cl])
                for b, s, p, cl in nodes.tolist()]

    def import_(self, values: list) -> np.ndarray:
        c = self.cache
        rows = [(c.beliefs.number(b), c.states.number(s),
                 c.producer_set(frozenset(p)), c.classes.number(tuple(map(_pair, cl))))
                for b, s, p, cl in values]
        c.describe_classes()
        return np.array(rows, dtype=np.int64).reshape(len(rows), 4)

    def expand(self, ids: np.ndarray, nodes: np.ndarray, level: int, out: Expansion,
               known: dict) -> None:
        c = self.cache
        c.trim(self.cache_entries)
        for key, cost in known.items():
            if key[0] == "split" and (key[1] not in c.split_cost or cost < c.split_cost[key[1]]):
                c.split_cost[key[1]] = cost
        recorded = {k[1] for k in known if k[0] == "violation"}
        if self.blocks and _known is _KNOWN and len(ids):
            tables = self._tables
            if tables is None or tables.generation != c.generation:
                if self._columns is None:
                    self._columns = ComponentColumns(_OPTIONS_OF_ATTR, _representative(()),
                                                     _ATTR_OF_KNOB)
                tables = self._tables = BlockTables(c, _BROKEN, self._columns)
            if tables.fits():
                tables.expand(ids, np.asarray(nodes, dtype=np.int64), level, out, recorded,
                              _record, _may_improve)
                return
        for node, (b, s, p, cl) in zip(ids.tolist(), nodes.tolist()):
            self._expand_node(node, b, s, p, cl, level, out, recorded)

    def _expand_node(self, node: int, b: int, s: int, p: int, cl: int, level: int,
                     out: Expansion, recorded: set) -> None:
        """One node's moves, leaves, checks and successors (the sweep's hot loop)."""
        c = self.cache
        trees, forks, checked = c.trees, c.forks, c.checked
        add_node, add_key, add_halted = out.nodes.extend, out.keys.append, out.halted.append
        state = c.states.values[s]
        node_moves = c.move_rows.get((b, p)) or c.move_rows_of(b, p)
        out.moves.append(len(node_moves))
        for m, (e, pa, ok, ba, props, view) in enumerate(node_moves):
            tree = trees.get((s, e))
            if tree is None:
                tree = c.tree_of(s, e)
            if isinstance(tree, Exception):
                _record(out, recorded, "P00-no-exception", (node, m, 0),
                        (node, m, f"{type(tree).__name__}: {tree}"))
                continue
            tree, shape = tree
            if len(tree) == 1:
                leaves = ((cl, 0),)
            else:
                leaves, candidates = forks.get((shape, cl)) or c.fork_of(shape, cl)
                if len(leaves) > 1 and ok and not state.halted:
                    rank = (level, not c.draft_conformant[pa])
                    settled = c.split_settled.get(candidates)
                    if settled is not None and settled <= rank:
                        pass  # no split witness of these knobs can improve any more
                    elif _may_improve(c.split_cost, candidates, rank):
                        c.splits_at(out, [(c.classes.values[lc], tree[leaf][1])
                                          for lc, leaf in leaves], node, m, rank)
                    else:
                        c.split_settled[candidates] = rank
            base = (node << 28) | (m << 12)
            for j, (lc, leaf) in enumerate(leaves):
                _, result, rs, halted, outcome, _ = tree[leaf]
                if props:
                    key = check_key(view, s, e, outcome, ok)
                    entries = checked.get(key)
                    if entries is not None and not entries[0][0] and _known is _KNOWN:
                        # the commonest case: the checks consulted no knob (the first entry,
                        # the one _known would take, holds under every reading)
                        hit = entries[0][1]
                        if hit is not None:
                            _record(out, recorded, hit[0].id, (node, m, 2 * j + 1),
                                    (node, m, hit[1]))
                        add_key(base | j)
                        add_node((ba, rs, pa, lc))
                        add_halted(halted)
                        continue
                    found = c.leaf_outcome(key, lc, (level, state, e, result, rs, b, ba, ok),
                                           (out, recorded, (node, m, 2 * j + 1), node, m),
                                           entries)
                    if found is _BROKEN:
                        continue
                    for prop, witness in found:
                        _record(out, recorded, prop.id, (node, m, 2 * j + 1),
                                (node, m, witness))
                add_key(base | j)
                add_node((ba, rs, pa, lc))
                add_halted(halted)


class SingleSystem(TransitionSystem):
    """One reading (see :func:`explore`) as a transition system: a node is ``(belief, state,
    conformant so far)``, numbers of interned tables (the producer's side, beliefs, events and
    the conformance flag, is a :class:`MoveTable` under the reading, as the all-readings
    sweep's is over every producer reading); every property is checked on every edge."""

    width = 3

    def __init__(self, vocabulary: Vocabulary, reading: Reading, consumer, properties: tuple,
                 adversarial: bool, check_readings: bool):
        self.config = (vocabulary, reading, consumer, properties, adversarial, check_readings)
        self.reading, self.consumer, self.properties = reading, consumer, properties
        self.check_splits = check_readings and consumer.step is reference_step
        self.table = MoveTable(vocabulary, adversarial, True, reading)
        self.states = Interned([initial_state()])
        self.found_knobs: set = set()

    def forget_findings(self) -> None:
        """Empty the knobs found to split (:meth:`expand` takes them up again from ``known``).
        See :meth:`~properties.search.bfs.TransitionSystem.forget_findings`."""
        self.found_knobs.clear()

    def fresh(self) -> "SingleSystem":
        return SingleSystem(*self.config)

    def root(self) -> tuple:
        return (0, 0, 1)

    def fingerprints(self, nodes: np.ndarray) -> np.ndarray:
        t = self.table
        return _fps_of((t.beliefs, self.states, t.producer_sets), nodes)

    def routing(self, nodes: np.ndarray) -> np.ndarray:
        return self.states.fingerprints()[nodes[:, 1]]

    def child(self, node: tuple, move: int, leaf: int, level: int = 0) -> tuple:
        b, s, ok = node
        t = self.table
        e, ok_after, _, ba = t.moves_of(b, ok)[move]
        event = t.events.values[e]
        result = self.consumer.step(self.states.values[s], event, self.reading)
        return event, (ba, self.states.number(result.state), ok_after)

    def event(self, node: tuple, move: int, level: int = 0) -> Event:
        t = self.table
        return t.events.values[t.moves_of(node[0], node[2])[move][0]]

    def value(self, node: tuple) -> tuple:
        b, s, ok = node
        return (self.table.beliefs.values[b], self.states.values[s], bool(ok), _FULL)

    def export(self, nodes: np.ndarray) -> list:
        beliefs = self.table.beliefs.values
        return [(beliefs[b], self.states.values[s], ok)
                for b, s, ok in nodes.tolist()]

    def import_(self, values: list) -> np.ndarray:
        rows = [(self.table.beliefs.number(b), self.states.number(s), ok)
                for b, s, ok in values]
        return np.array(rows, dtype=np.int64).reshape(len(rows), 3)

    def expand(self, ids: np.ndarray, nodes: np.ndarray, level: int, out: Expansion,
               known: dict) -> None:
        recorded = {k[1] for k in known if k[0] == "violation"}
        self.found_knobs.update(k[1] for k in known if k[0] == "split")
        for node, (b, s, ok) in zip(ids.tolist(), nodes.tolist()):
            self._expand_node(node, b, s, ok, level, out, recorded)

    def _expand_node(self, node: int, b: int, s: int, ok_before: int, level: int,
                     out: Expansion, recorded: set) -> None:
        """One node's moves: step, split check, properties, successor."""
        reading, step_fn = self.reading, self.consumer.step
        run_input_fn = self.consumer.run_input
        check_splits, properties = self.check_splits, self.properties
        beliefs, events = self.table.beliefs.values, self.table.events.values
        belief, state = beliefs[b], self.states.values[s]

        def restep(st, ev):
            res = step_fn(st, ev, reading)
            return res.state, res.warnings, res.fatal
        node_moves = self.table.moves_of(b, ok_before)
        out.moves.append(len(node_moves))
        for m, (e, ok, _, ba) in enumerate(node_moves):
            event = events[e]
            recorder = RecordingReading(reading) if check_splits else reading
            try:
                result = step_fn(state, event, recorder)
            except Exception as exc:  # noqa: BLE001 - the escape is the finding
                _record(out, recorded, "P00-no-exception", (node, m, 0),
                        (node, m, f"{type(exc).__name__}: {exc}"))
                continue
            if check_splits and ok and not state.halted and recorder.consulted:
                consulted = {_KNOB_OF_ATTR[a] for a in recorder.consulted}
                if not consulted <= self.found_knobs:
                    for knob, pair in step_splits(state, event, reading).items():
                        if knob not in self.found_knobs:
                            self.found_knobs.add(knob)
                            out.findings.append((("split", knob), (), (node, m, 0),
                                                 (node, m, pair)))
            if properties:
                try:
                    run_input = tuple(run_input_fn(result.state))
                except Exception as exc:  # noqa: BLE001
                    _record(out, recorded, "P00-no-exception", (node, m, 1),
                            (node, m, f"{type(exc).__name__}: {exc}"))
                    continue
                found = check_transition(Transition(
                    level, state, event, result.state, result.warnings, result.fatal,
                    reading, run_input, belief, beliefs[ba], bool(ok), restep), properties)
                if found is not None:
                    _record(out, recorded, found[0].id, (node, m, 1), (node, m, found[1]))
            out.keys.append((node << 28) | (m << 12))
            out.nodes.extend((ba, self.states.number(result.state), ok))
            out.halted.append(result.state.halted)


class PairSystem(TransitionSystem):
    """:func:`shortest_distinguishing` as a transition system: a node is ``(belief, state under
    reading a, state under reading b, producer readings)``, all numbers (the producer's side
    is a :class:`MoveTable`, as the all-readings sweep's); the finding ``("distinguishing",)``
    is the first step whose results differ in what a verdict shows."""

    width = 4

    def __init__(self, reading_a: Reading, reading_b: Reading, vocabulary: Vocabulary,
                 producers0: frozenset):
        self.config = (reading_a, reading_b, vocabulary, producers0)
        self.reading_a, self.reading_b = reading_a, reading_b
        self.table = MoveTable(vocabulary, False, producers0)
        self.states = Interned([initial_state()])

    def fresh(self) -> "PairSystem":
        return PairSystem(*self.config)

    def root(self) -> tuple:
        return (0, 0, 0, 0)

    def fingerprints(self, nodes: np.ndarray) -> np.ndarray:
        t = self.table
        return _fps_of((t.beliefs, self.states, self.states, t.producer_sets), nodes)

    def child(self, node: tuple, move: int, leaf: int, level: int = 0) -> tuple:
        b, sa, sb, p = node
        e, pa, _, ba = self.table.moves_of(b, p)[move]
        event = self.table.events.values[e]
        ra = reference_step(self.states.values[sa], event, self.reading_a)
        rb = reference_step(self.states.values[sb], event, self.reading_b)
        return event, (ba, self.states.number(ra.state), self.states.number(rb.state), pa)

    def event(self, node: tuple, move: int, level: int = 0) -> Event:
        t = self.table
        return t.events.values[t.moves_of(node[0], node[3])[move][0]]

    def value(self, node: tuple) -> tuple:
        b, sa, sb, p = node
        t = self.table
        return (t.beliefs.values[b], self.states.values[sa], self.states.values[sb],
                t.producer_sets.values[p])

    def done(self, findings: dict) -> bool:
        return bool(findings)

    def expand(self, ids: np.ndarray, nodes: np.ndarray, level: int, out: Expansion,
               known: dict) -> None:
        states, events = self.states, self.table.events.values
        for node, (b, sa, sb, p) in zip(ids.tolist(), nodes.tolist()):
            state_a, state_b = states.values[sa], states.values[sb]
            node_moves = self.table.moves_of(b, p)
            out.moves.append(len(node_moves))
            for m, (e, pa, _, ba) in enumerate(node_moves):
                event = events[e]
                ra = reference_step(state_a, event, self.reading_a)
                rb = reference_step(state_b, event, self.reading_b)
                if (ra.state, ra.warnings, ra.fatal and (ra.fatal.code, ra.fatal.clause)) != \
                        (rb.state, rb.warnings, rb.fatal and (rb.fatal.code, rb.fatal.clause)):
                    va = Verdict(ra.state, tuple((0, w) for w in ra.warnings),
                                 (0, ra.fatal) if ra.fatal else None, 1)
                    vb = Verdict(rb.state, tuple((0, w) for w in rb.warnings),
                                 (0, rb.fatal) if rb.fatal else None, 1)
                    if _step_key(va) != _step_key(vb):
                        out.findings.append((("distinguishing",), (), (node, m, 0), (node, m)))
                out.keys.append((node << 28) | (m << 12))
                out.nodes.extend((ba, states.number(ra.state), states.number(rb.state), pa))
                out.halted.append(ra.state.halted or rb.state.halted)


_NOTHING: frozenset = frozenset()
"""The consulted attributes of a sweep check entry that consulted none."""

_NO_KNOBS = ((), None, _NOTHING)
"""A sweep check entry that consulted no knob and found nothing (the commonest)."""


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
    """The reading standing for a class: its options, ``draft`` for the knobs it leaves free
    (memoised for the last :data:`_REPRESENTATIVES_MAX` classes asked for)."""
    r = _REPRESENTATIVES.get(cls)
    if r is None:
        if len(_REPRESENTATIVES) >= _REPRESENTATIVES_MAX:
            _REPRESENTATIVES.clear()
        r = _REPRESENTATIVES[cls] = PartialReading(dict(cls)).complete()
    return r


_REPRESENTATIVES_MAX = 1 << 16


_PAIRS: dict = {}
"""Each ``(knob id, option)`` pair of a class, one object per value (a few dozen in all), so
that a class tuple holds pointers to shared pairs, not pairs of its own (:func:`_class_of`)."""


def _pair(pair: tuple) -> tuple:
    """The one shared object equal to ``pair`` (:data:`_PAIRS`)."""
    return _PAIRS.setdefault(pair, pair)


def _class_of(cls: tuple, ext: tuple) -> tuple:
    """A class (sorted ``(knob id, option)`` pairs, each the shared object of :func:`_pair`)
    extended by ``ext``."""
    if not ext:
        return cls
    return tuple(sorted(cls + tuple(map(_pair, ext)), key=lambda kv: _KNOB_ORDER[kv[0]]))


_FORKED_PRODUCER_KNOBS = tuple(k for k in PRODUCER_KNOBS if k not in PRODUCER_ONLY_KNOBS)
"""The producer knobs conformance is forked on. A producer-only knob's draft option is its most
permissive (its others only add violations) and the consumer never reads it, so the traces
conformant under some producer reading are those under its draft option: it stays at draft
here, and :func:`model.producer.conformance_splits` settles it."""


def _producer_combinations() -> tuple[tuple, ...]:
    """Every assignment of the forked producer knobs, as sorted ``(knob id, option)`` pairs."""
    combos = [()]
    for knob_id in _FORKED_PRODUCER_KNOBS:
        combos = [c + ((knob_id, o),) for c in combos for o in KNOB_BY_ID[knob_id].option_names]
    return tuple(combos)


PRODUCER_READINGS: tuple[tuple, ...] = _producer_combinations()
"""The producer's possible readings as far as its obligations go (one per combination of
:data:`PRODUCER_KNOBS` options)."""

_DRAFT_PRODUCER = tuple((k, DRAFT.as_dict()[k]) for k in _FORKED_PRODUCER_KNOBS)


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


def _consulted_set(interned: dict, consulted: tuple) -> tuple:
    """``(consulted, attributes, entry, (entry,))`` for a tuple of consulted (attribute,
    option) pairs, where ``entry`` is ``(consulted, None, attributes)``, the check-table entry
    of those knobs without a violation, each the same object for equal pairs (``interned``: a
    sweep's :attr:`SweepCache.consulted_sets`): the check tables hold hundreds of thousands of
    entries and a few dozen distinct knob sets, and the keys whose one entry is ``entry`` share
    the one-entry tuple (:func:`_with_entry`)."""
    found = interned.get(consulted)
    if found is None:
        attrs = frozenset(a for a, _ in consulted)
        entry = (consulted, None, attrs)
        found = interned[consulted] = (consulted, attrs, entry, (entry,))
    return found


def _fresh(t: Transition, recorder: RecordingReading, properties: Sequence[Property],
           interned: dict) -> tuple:
    """``(consulted, outcome, attributes)``: :func:`~properties.catalogue.first_violation` of
    ``properties`` (the ones that apply to the event) on ``t``, whose reading is ``recorder``,
    the knobs they consulted, as (attribute, option) pairs, and the frozenset of those
    attributes: the outcome holds under every reading that agrees on those (equal pairs and
    sets as one object, see :func:`_consulted_set`). Reference consumer only: its step, too,
    reads the reading only through knobs."""
    consulted = recorder.consulted
    start = len(consulted)
    outcome = first_violation(t, properties)
    if len(consulted) == start:
        return _NO_KNOBS if outcome is None else ((), outcome, _NOTHING)
    reading = recorder.base
    pairs, attrs, empty, _ = _consulted_set(interned, tuple([(a, getattr(reading, a)) for a in
                                                         dict.fromkeys(consulted[start:])]))
    return empty if outcome is None else (pairs, outcome, attrs)


def _shared(cache: dict, key: tuple, t: Transition, recorder: RecordingReading,
            properties: Sequence[Property], interned: dict) -> tuple:
    """``(consulted, outcome, attributes)`` for ``properties`` on ``t`` (see :func:`_fresh`):
    the entry of ``cache[key]`` that holds for ``t``'s reading (see :func:`_known`), or else
    computed by :func:`_fresh` and added there. ``key`` must stand for everything the
    properties read of ``t`` besides its reading."""
    entries = cache.get(key)
    if entries is not None and not entries[0][0] and _known is _KNOWN:
        return entries[0]  # the commonest: the first entry, which _known takes, consulted none
    entry = _known(entries, recorder.base)
    if entry is None:
        entry = _fresh(t, recorder, properties, interned)
        cache[key] = _with_entry(interned, entries, entry)
    return entry


def _with_entry(interned: dict, entries: Optional[tuple], entry: tuple) -> tuple:
    """A check table's entries for one key, ``entries`` (None: none yet) and then ``entry``, as
    a tuple. The tables hold hundreds of thousands of keys, most with a single entry without a
    violation, one of a few dozen objects: those keys share the one-entry tuple
    :func:`_consulted_set` keeps beside it in ``interned`` (a sweep's
    :attr:`SweepCache.consulted_sets`), where a list per key took 88 bytes."""
    if entries is not None:
        return entries + (entry,)
    return interned[entry[0]][3] if entry[1] is None else (entry,)


def _may_improve(cost: dict, candidates: tuple, rank: tuple) -> bool:
    """Whether a fork whose leaves fix ``candidates`` (knobs the parent class left open) at
    ``rank`` could give some knob a better split witness than ``cost`` holds (see
    :func:`_record_splits`)."""
    return not all(k in cost and (cost[k][:2] < rank or (cost[k][2] == 0 and cost[k][:2] <= rank))
                   for k in candidates)


_KNOWN = _known
""":func:`_known` as defined (the sweep's blocks stand for it; see :attr:`SweepSystem.blocks`)."""


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
        frozenset({tuple((k, producer.as_dict()[k]) for k in _FORKED_PRODUCER_KNOBS)})
    system = PairSystem(reading_a, reading_b, vocabulary, producers0)
    found = search(system, depth, LocalEngine(system), max_states=max_states)
    found.raise_if_interrupted()
    hit = found.findings.get(("distinguishing",))
    if hit is None:
        return None
    node, move = hit[2]
    return _Witnesses(found, system)(node, move)


def state_graph(report: ExploreReport, max_nodes: Optional[int] = None) -> nx.DiGraph:
    """The explored state graph as a networkx ``DiGraph`` (built on demand, never in the search).

    Nodes are node ids with attributes ``label`` (run status and held messages), ``messages``,
    ``run``, ``halted`` and ``conformant``; every examined edge is present (edges into states
    already visited included; parallel edges between the same two states keep the first event),
    with attributes ``event`` (short text) and ``wire`` (the event as compact JSON) and
    ``tree`` (True on the shortest-path tree the search's parent map holds). Under every reading
    an edge goes to each class of readings a move forks into, so the graph may have more
    edges than :attr:`ExploreReport.edges` counts moves. Without
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
