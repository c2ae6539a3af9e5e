"""Exhaustive bounded exploration: breadth-first search over (producer belief, consumer state).

Every trace the producer can send over a finite vocabulary, up to a depth, is explored once per
distinct state: a node is a (belief, consumer state) pair, deduplicated in a visited map, with a
parent map to rebuild the shortest trace to any node. On every edge the search checks

* every property of the catalogue (:class:`properties.catalogue.Transition`), and
* every open question: the step is also run under a :class:`~model.readings.PartialReading` that
  forks on each knob the step consults; a knob whose options leave different (state, warnings,
  fatal) behind *splits* there. Since a consumer's future depends only on its state, options that
  leave equal results are equal for ever, so one consumer state per node (the one of the reading
  under exploration, ``draft`` by default) is exact for every knob that decides in that reading's
  context; other contexts are explored by choosing another base reading.

Because the search is breadth-first, the first witness recorded for a finding is a shortest one.

The hot loop keeps plain hashable tuples (``visited``: key -> node id; ``parents``: node id ->
(parent id, event)); :func:`state_graph` builds a networkx graph from them on demand, for export
(GraphML, DOT) and graph queries.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, Optional, Sequence

import networkx as nx

from model.consumer import ConsumerState, initial_state, step as reference_step
from model.events import Event
from model.producer import (Belief, Vocabulary, adversarial_moves, advance, moves, violations)
from model.readings import (DRAFT, KNOB_BY_ID, KnobUnset, PartialReading, Reading,
                            RecordingReading)
from model.verdict import Verdict, knob_splits
from properties.catalogue import PROPERTIES, Property, Transition, check_transition
from properties.zoo import REFERENCE, Consumer

__all__ = ["EXPLORE_VOCABULARY", "ExploreReport", "explore", "step_splits", "state_graph",
           "trace_to"]

EXPLORE_VOCABULARY = Vocabulary(
    activity_ids=("act-1", "act-2"),
    text_ids=("msg-1",),
    owners=(None, "sub-1"),
    activity_types=("PLAN", "SEARCH"),
    contents=({"n": 0},),
    patches=(
        ("set-n", ({"op": "replace", "path": "/n", "value": 2},)),
        ("remove-missing", ({"op": "remove", "path": "/missing"},)),
        ("unknown-op", ({"op": "increment", "path": "/n"},)),
        ("root-array", ({"op": "replace", "path": "", "value": []},)),
    ),
    metadata=(None, {"k": 1}),
    replace_flags=(None, False),
    max_runs=1,
)
"""The default finite world of the exhaustive search: two activity ids, the parent and one
subagent, two types, one content, four patches (applies, fails, unrecognised op, root to a
non-object), one metadata key, replace absent or false, one run."""


@dataclass
class ExploreReport:
    """What an exploration found and how far it got.

    Attributes:
        states: distinct nodes discovered; edges: transitions examined.
        depth: the deepest level fully expanded; complete: every node up to ``depth`` expanded
            and the bound was the depth (not states or time).
        stopped_by: ``"depth"``, ``"max-states"`` or ``"timeout"``.
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

    @property
    def states_per_second(self) -> float:
        return self.states / self.seconds if self.seconds else 0.0


def step_splits(state: ConsumerState, event: Event, base: Reading = DRAFT,
                step_fn: Callable = reference_step) -> dict:
    """The knobs on which one step of ``state`` under ``event`` splits, in ``base``'s context.

    Forks the step on every knob it consults and returns ``{knob id: (assignment a, assignment
    b)}`` for pairs differing only in that knob whose results (messages, state, warnings, fatal)
    differ (see :func:`model.verdict.knob_splits`), keeping only pairs that agree with ``base``
    on every other knob they fix."""
    leaves = []
    work = [{}]
    while work:
        assignment = work.pop()
        try:
            result = step_fn(state, event, PartialReading(assignment))
        except KnobUnset as unset:
            knob = KNOB_BY_ID[unset.knob_id]
            work.extend({**assignment, knob.id: option} for option in reversed(knob.option_names))
            continue
        leaves.append((assignment, Verdict(result.state, tuple((0, w) for w in result.warnings),
                                           (0, result.fatal) if result.fatal else None, 1)))
    if len(leaves) < 2:
        return {}
    splits = knob_splits(leaves, key=_step_key)
    # Keep only pairs whose other knobs agree with the base reading: the state stepped from is
    # the base reading's, so only there is the pair's history the explored one.
    values = base.as_dict()
    return {k: (a, b) for k, (a, b) in splits.items()
            if all(values[x] == v for x, v in {**a, **b}.items() if x != k)}


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


def explore(depth: int = 5, vocabulary: Vocabulary = EXPLORE_VOCABULARY, reading: Reading = DRAFT,
            consumer: Consumer = REFERENCE, properties: Sequence[Property] = PROPERTIES,
            adversarial: bool = False, check_readings: bool = True,
            max_states: Optional[int] = None, timeout: Optional[float] = None,
            progress: Optional[Callable[[int, int, int, float], None]] = None,
            stop_when_found: bool = False, keep_edges: bool = False) -> ExploreReport:
    """Breadth-first search to ``depth`` events.

    Args:
        depth: the longest trace explored (events).
        vocabulary: the producer's finite world (see :data:`EXPLORE_VOCABULARY`).
        reading: the reading the consumer runs under (the context for readings checks).
        consumer: the consumer under test (default the reference model).
        properties: checked on every edge.
        adversarial: also take the producer's non-conformant moves (then properties that judge
            only conformant traces see the cumulative conformance flag).
        check_readings: also look for knobs that split each step (reference step only).
        max_states, timeout: further bounds; the report says which one stopped it.
        progress: called as ``progress(depth, states, edges, seconds)`` after each level.
        stop_when_found: stop at the end of the first level with a property violation.
        keep_edges: record every examined edge for :func:`state_graph` (off by default: the
            search itself needs only the parent map).

    Returns:
        An :class:`ExploreReport`. Deterministic: moves are enumerated in a fixed order.
    """
    started = time.monotonic()
    report = ExploreReport()
    start = (Belief(), initial_state(), True)
    visited: dict = {start: 0}
    nodes: list = [start]
    parents: list = [(0, None)]
    frontier = [0]
    step_fn = consumer.step
    level = 0

    def restep(s, e):
        r = step_fn(s, e, reading)
        return r.state, r.warnings, r.fatal

    while frontier and level < depth:
        next_frontier = []
        for node in frontier:
            belief, state, conformant = nodes[node]
            options = moves(belief, vocabulary, reading)
            if adversarial:
                seen = set(options)
                options = list(options) + [e for e, _ in adversarial_moves(belief, vocabulary,
                                                                            reading)
                                           if e not in seen and not seen.add(e)]
            for event in options:
                report.edges += 1
                recorder = RecordingReading(reading) if check_readings else reading
                try:
                    result = step_fn(state, event, recorder)
                    run_input = tuple(consumer.run_input(result.state))
                except Exception as exc:  # noqa: BLE001 - the finding is the escape itself
                    _record(report.violations, "P00-no-exception", node, event,
                            f"{type(exc).__name__}: {exc}", parents)
                    continue
                ok = conformant and not violations(belief, event, reading)
                belief_after = advance(belief, event)
                t = Transition(level, state, event, result.state, result.warnings, result.fatal,
                               reading, run_input, belief, belief_after, ok, restep)
                found = check_transition(t, properties)
                if found is not None:
                    _record(report.violations, found[0].id, node, event, found[1], parents)
                if check_readings and ok and not state.halted and recorder.consulted:
                    for knob, pair in step_splits(state, event, reading).items():
                        if knob not in report.splits:
                            report.splits[knob] = (_path(parents, node) + (event,), pair)
                key = (belief_after, result.state, ok)
                known = visited.get(key)
                if keep_edges:
                    report.edges_seen.append((node, len(nodes) if known is None else known,
                                              event))
                if known is not None:
                    continue
                visited[key] = len(nodes)
                nodes.append(key)
                parents.append((node, event))
                if not result.state.halted:
                    next_frontier.append(len(nodes) - 1)
                if max_states is not None and len(nodes) >= max_states:
                    report.stopped_by = "max-states"
                    break
                if timeout is not None and time.monotonic() - started > timeout:
                    report.stopped_by = "timeout"
                    break
                if progress is not None and len(nodes) % 2000 == 0:
                    progress(level, len(nodes), report.edges, time.monotonic() - started)
            if report.stopped_by != "depth":
                break
        if report.stopped_by != "depth":
            break
        level += 1
        frontier = next_frontier
        report.depth = level
        if progress is not None:
            progress(level, len(nodes), report.edges, time.monotonic() - started)
        if stop_when_found and report.violations:
            break
    report.states = len(nodes)
    report.complete = report.stopped_by == "depth" and (level == depth or not frontier)
    report.seconds = time.monotonic() - started
    report.nodes, report.parents = nodes, parents
    return report


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
    ``tree`` (True on the shortest-path tree the search's parent map holds). ``max_nodes`` keeps
    the first nodes in BFS order and the edges among them."""
    import json
    graph = nx.DiGraph()
    limit = len(report.nodes) if max_nodes is None else min(max_nodes, len(report.nodes))
    for node in range(limit):
        belief, state, conformant = report.nodes[node]
        held = " ".join(f"{m.id}:{m.role}" for m in state.messages)
        status = "rejected" if state.halted else state.run
        graph.add_node(node, messages=held, run=state.run, halted=state.halted,
                       conformant=conformant, label=f"#{node} {status}: {held or 'no messages'}")
    for source, target, event in report.edges_seen:
        if source >= limit or target >= limit or graph.has_edge(source, target):
            continue
        graph.add_edge(source, target, tree=report.parents[target][0] == source and target != 0,
                       event=f"{event.type_name} {getattr(event, 'message_id', '') or ''}".strip(),
                       wire=json.dumps(event.to_wire(), separators=(",", ":")))
    return graph
