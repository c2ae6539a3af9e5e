"""The report of an exploration (:class:`ExploreReport`) and how it is rebuilt from a search.

The breadth-first driver (:mod:`properties.search.bfs`) keeps 16 bytes per node: a fingerprint
and a parent entry. Everything a report shows beyond counts is rebuilt here by re-executing
event chains on the transition system: the witness of each finding (:class:`_Witnesses`, on the
search's own system, whose memo tables are warm), and, on demand, every node, parent and kept
edge (:class:`_Nodes`, :class:`_Parents`, :class:`_Edges`, on a fresh copy of the system).
:func:`_cyclic_gc_paused` is the guard every search of :mod:`properties.search.explore` and
:mod:`properties.search.system_pair` runs under.
"""
from __future__ import annotations

import gc
from collections.abc import Sequence as SequenceABC
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Optional

from model.events import Event
from model.readings import Reading, describe_assignment
from properties.search.bfs import EngineAdapter, Search, TransitionSystem
from properties.search.store import unpack_key

__all__ = ["ExploreReport", "trace_to"]


@dataclass
class ExploreReport:
    """What an exploration found and how far it got.

    Attributes:
        states: distinct nodes discovered; edges: moves examined (a node's event; a move that
            forks the readings into several classes is one move here and an edge per class in
            :func:`~properties.search.graph.state_graph`: at depth 3 under every reading,
            1,770 moves and 2,040 graph edges).
        depth: the deepest level fully expanded; complete: every node up to ``depth`` expanded
            and the bound was the depth (not states or time).
        stopped_by: ``"depth"``, ``"max-states"``, ``"timeout"`` or ``"interrupted"`` (Ctrl-C:
            the report holds what was explored until then).
        partial: the search stopped inside level ``depth + 1`` and the report holds some of
            its moves (False: it stopped between two levels, or is complete).
        splits: ``{knob id: (trace, (assignment a, assignment b))}``, shortest first found.
        violations: ``{property id: (trace, witness text)}``, shortest first found.
        seconds: wall time (never written to a deterministic output).
        nodes, parents: the visited nodes and parent map, for the state graph
            (:func:`~properties.search.graph.state_graph`).
        edges_seen: every examined edge as ``(from node, to node, event)`` (to node is the
            existing node for an edge into a visited state), for the state graph.
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


def trace_to(report: ExploreReport, node: int) -> tuple[Event, ...]:
    """The shortest trace (events from the initial node) that reaches ``node``, rebuilt by
    re-executing the event chain its parent entries spell out."""
    return report.parents.trace(node)


def _report(found: Search, adapter: EngineAdapter, depth: int,
            all_readings: bool) -> ExploreReport:
    """The :class:`ExploreReport` of a search of ``adapter.system``: witnesses rebuilt on that
    system, nodes and parents as views that rebuild nodes on a fresh copy of it
    (:meth:`~properties.search.bfs.EngineAdapter.fresh_system`)."""
    report = ExploreReport(states=found.states, edges=found.edges, depth=found.depth,
                           stopped_by=found.stopped_by, partial=found.partial,
                           seconds=found.seconds,
                           workers=found.workers, storage=found.storage)
    report.complete = report.stopped_by == "depth" and (report.depth == depth or found.drained)
    witness = _Witnesses(found, adapter.system)
    for key, (_, _, payload) in found.findings.items():
        if key[0] == "split":
            node, move, pair = payload
            report.splits[key[1]] = (witness(node, move), pair)
        elif key[0] == "violation":
            node, move, text = payload
            report.violations[key[1]] = (witness(node, move), text)
    report.classes = found.tags if all_readings else 1
    replay = _Nodes(found, adapter.fresh_system())
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
        return self.system.value(self.local(_index(i, len(self))))

    def trace(self, node: int) -> tuple[Event, ...]:
        return tuple(_replay(self.system, self.found.path(node))[0])


def _index(i: int, n: int) -> int:
    """Item ``i`` of a sequence of ``n`` as a non-negative index (``-1`` the last); raises
    IndexError outside ``-n .. n - 1``."""
    if i < 0:
        i += n
    if not 0 <= i < n:
        raise IndexError(i)
    return i


class _Parents(SequenceABC):
    """``report.parents``: ``(parent id, event)`` per node (``(0, None)`` for the root)."""

    def __init__(self, nodes: _Nodes):
        self.nodes = nodes

    def __len__(self) -> int:
        return len(self.nodes)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        i = _index(i, len(self))
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
