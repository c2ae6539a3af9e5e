"""Exhaustive bounded exploration: breadth-first search over (producer belief, consumer state).

Every trace the producer can send over a finite vocabulary, up to a depth, is explored once per
distinct state, with a parent map to rebuild the shortest trace to any node. Two modes:

* **every reading in one sweep** (``reading=None``, the default of ``activity-check explore``):
  a node also carries a *class* of readings, a partial assignment of knobs standing for every
  reading consistent with it, all of which have given the same result on every step so far. A
  step that consults a knob the class leaves open is forked over its options
  (:class:`~model.readings.PartialReading`); options that give equal results stay one class,
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
(parent id, event)) and memoises what recurs across classes (each (state, event)'s decision
tree over the knobs, property outcomes keyed by the knobs they consulted, moves, beliefs, run
input); :func:`state_graph` builds a networkx graph from them on demand, for export (GraphML,
DOT) and graph queries.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, Optional, Sequence

import networkx as nx

from model.consumer import ConsumerState, initial_state, step as reference_step
from model.events import Event
from model.producer import (Belief, Vocabulary, adversarial_moves, advance, moves, violations)
from model.readings import (DRAFT, KNOB_BY_ID, KNOBS, KnobUnset, PartialReading, Reading,
                            RecordingReading, describe_assignment)
from model.verdict import Verdict, context_of, knob_splits
from properties.catalogue import PROPERTIES, Property, Transition, check_transition
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

    Runs ``step_fn`` under :class:`~model.readings.PartialReading` assignments, forking on each
    knob a run consults, and returns ``[(assignment, StepResult)]``: each assignment (``{knob id:
    option}``, the knobs consulted on that path) stands for every reading consistent with it,
    and those readings all give that result. Deterministic order (options in knob order)."""
    leaves = []
    work: list[dict] = [{}]
    while work:
        assignment = work.pop()
        try:
            result = step_fn(state, event, PartialReading(assignment))
        except KnobUnset as unset:
            knob = KNOB_BY_ID[unset.knob_id]
            work.extend({**assignment, knob.id: option} for option in reversed(knob.option_names))
            continue
        leaves.append((assignment, result))
    return leaves


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
      class. Properties are checked on every class's transition, under the class's
      representative reading (the class's options, ``draft`` for the knobs it leaves free).
      Reference consumer only.
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
    started = time.monotonic()
    report = ExploreReport()
    root_class = () if all_readings else _FULL
    start = (Belief(), initial_state(), frozenset(PRODUCER_READINGS) if all_readings else True,
             root_class)
    visited: dict = {start: 0}
    nodes: list = [start]
    parents: list = [(0, None)]
    frontier = [0]
    step_fn = consumer.step
    run_input_fn = consumer.run_input
    level = 0
    found_knobs: set = set()
    split_cost: dict = {}
    check_splits = check_readings and not all_readings and step_fn is reference_step
    stopped = None
    trees: dict = {}  # all readings: (state, event) -> the step's decision tree over the knobs
    checked: dict = {}  # all readings: a transition (without its reading) -> property outcomes
    move_memo: dict = {}  # (belief, conformance) -> moves; beliefs recur across classes
    advanced: dict = {}  # (belief, event) -> belief after
    inputs: dict = {}  # consumer state -> run input

    def restep_for(r):
        def restep(s, e):
            res = step_fn(s, e, r)
            return res.state, res.warnings, res.fatal
        return restep

    try:
        while frontier and level < depth:
            next_frontier = []
            for node in frontier:
                belief, state, producers, cls = nodes[node]
                base = reading if not all_readings else _representative(cls)
                move_key = (belief, producers)
                node_moves = move_memo.get(move_key)
                if node_moves is None:
                    node_moves = move_memo[move_key] = _node_moves(
                        belief, vocabulary, base, producers, adversarial, all_readings)
                for event, producers_after in node_moves:
                    ok = bool(producers_after)
                    report.edges += 1
                    if all_readings:
                        try:
                            leaves = _fork(state, event, cls, trees)
                        except Exception as exc:  # noqa: BLE001 - the escape is the finding
                            _record(report.violations, "P00-no-exception", node, event,
                                    f"{type(exc).__name__}: {exc}", parents)
                            continue
                        if len(leaves) > 1 and ok and not state.halted:
                            _record_splits(report, split_cost, leaves, node, event, parents,
                                           (level, _DRAFT_PRODUCER not in producers_after),
                                           dict(cls))
                    else:
                        recorder = RecordingReading(reading) if check_splits else reading
                        try:
                            result = step_fn(state, event, recorder)
                        except Exception as exc:  # noqa: BLE001 - the escape is the finding
                            _record(report.violations, "P00-no-exception", node, event,
                                    f"{type(exc).__name__}: {exc}", parents)
                            continue
                        leaves = ((cls, result),)
                        if check_splits and ok and not state.halted and recorder.consulted:
                            consulted = {_KNOB_OF_ATTR[a] for a in recorder.consulted}
                            if not consulted <= found_knobs:
                                for knob, pair in step_splits(state, event, reading).items():
                                    if knob not in report.splits:
                                        found_knobs.add(knob)
                                        report.splits[knob] = (_path(parents, node) + (event,),
                                                               pair)
                    belief_after = advanced.get((belief, event))
                    if belief_after is None:
                        belief_after = advanced[(belief, event)] = advance(belief, event)
                    for leaf_class, result in leaves:
                        r = base if not all_readings else _representative(leaf_class)
                        if properties:
                            try:
                                run_input = inputs.get(result.state)
                                if run_input is None:
                                    run_input = inputs[result.state] = tuple(
                                        run_input_fn(result.state))
                            except Exception as exc:  # noqa: BLE001
                                _record(report.violations, "P00-no-exception", node, event,
                                        f"{type(exc).__name__}: {exc}", parents)
                                continue
                            if all_readings:
                                found = _check_cached(checked, (belief, state, event, result.state,
                                                                result.warnings, result.fatal, ok),
                                                      lambda rr: Transition(
                                                          level, state, event, result.state,
                                                          result.warnings, result.fatal, rr,
                                                          run_input, belief, belief_after, ok,
                                                          restep_for(rr)), r, properties)
                            else:
                                found = check_transition(Transition(
                                    level, state, event, result.state, result.warnings,
                                    result.fatal, r, run_input, belief, belief_after, ok,
                                    restep_for(r)), properties)
                            if found is not None:
                                _record(report.violations, found[0].id, node, event, found[1],
                                        parents)
                        key = (belief_after, result.state, producers_after, leaf_class)
                        known = visited.get(key)
                        if keep_edges:
                            report.edges_seen.append((node, len(nodes) if known is None
                                                      else known, event))
                        if known is not None:
                            continue
                        visited[key] = len(nodes)
                        nodes.append(key)
                        parents.append((node, event))
                        if not result.state.halted:
                            next_frontier.append(len(nodes) - 1)
                        if max_states is not None and len(nodes) >= max_states:
                            stopped = "max-states"
                        elif timeout is not None and time.monotonic() - started > timeout:
                            stopped = "timeout"
                        elif progress is not None and len(nodes) % 2000 == 0:
                            progress(level, len(nodes), report.edges,
                                     time.monotonic() - started)
                        if stopped:
                            break
                    if stopped:
                        break
                if stopped:
                    break
            if stopped:
                report.stopped_by = stopped
                break
            level += 1
            frontier = next_frontier
            report.depth = level
            if progress is not None:
                progress(level, len(nodes), report.edges, time.monotonic() - started)
            if stop_when_found and report.violations:
                break
    except KeyboardInterrupt:  # stopped by the user: report how far it got
        report.stopped_by = "interrupted"
    report.states = len(nodes)
    report.complete = report.stopped_by == "depth" and (level == depth or not frontier)
    report.seconds = time.monotonic() - started
    report.nodes, report.parents = nodes, parents
    report.classes = len({n[3] for n in nodes})
    return report


_KNOB_OF_ATTR = {k.attr: k.id for k in KNOBS}
_KNOB_ORDER = {k.id: i for i, k in enumerate(KNOBS)}
_FULL = ("*",)
"""The class of a single-reading exploration: the reading itself (never forked)."""

PRODUCER_KNOBS: tuple[str, ...] = ("Q2", "Q4-opener")
"""The knobs the producer's obligations read (:func:`model.producer.violations`): what a
conformant producer may send depends on them, so the all-readings sweep forks moves on them."""

_REPRESENTATIVES: dict = {}


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


def _fork(state: ConsumerState, event: Event, cls: tuple, trees: dict
          ) -> list[tuple[tuple, object]]:
    """Step ``state`` under every reading of class ``cls`` at once.

    Returns ``[(class, StepResult)]``: one entry when every reading of the class gives the same
    result (the class unchanged), else one per leaf of the fork over the knobs the step
    consults, each leaf's class extending ``cls``. ``trees`` memoises, per (state, event), the
    step's whole decision tree over the knobs (a step's result depends on nothing else), so
    that classes meeting in one state share the work."""
    tree = trees.get((state, event))
    if tree is None:
        tree = trees[(state, event)] = [(tuple(a.items()), r, _result_key(r))
                                        for a, r in step_leaves(state, event)]
    if len(tree) == 1:
        return [(cls, tree[0][1])]
    fixed = dict(cls)
    leaves = [(a, r, k) for a, r, k in tree if all(fixed.get(x, v) == v for x, v in a)]
    if len({k for _, _, k in leaves}) == 1:
        return [(cls, leaves[0][1])]
    return [(_class_of(cls, tuple((x, v) for x, v in a if x not in fixed)), r)
            for a, r, _ in leaves]


def _check_cached(cache: dict, key: tuple, transition: Callable, reading: Reading,
                  properties: Sequence[Property]):
    """:func:`~properties.catalogue.check_transition`, memoised across readings.

    A check reads the reading only through its knobs, so its outcome under ``reading`` is the
    outcome under any reading that agrees on the knobs it consulted (recorded with a
    :class:`~model.readings.RecordingReading`). ``cache`` maps a transition without its reading
    (``key``) to ``[(consulted (attribute, option) pairs, outcome)]``. Reference consumer
    only: its step, too, reads the reading only through knobs."""
    entries = cache.get(key)
    if entries is None:
        entries = cache[key] = []
    for consulted, outcome in entries:
        if all(getattr(reading, attr) == value for attr, value in consulted):
            return outcome
    recorder = RecordingReading(reading)
    outcome = check_transition(transition(recorder), properties)
    entries.append((tuple(dict.fromkeys((a, getattr(reading, a)) for a in recorder.consulted)),
                    outcome))
    return outcome


def _result_key(r):
    return (r.state, r.warnings, r.fatal)


def _record_splits(report: ExploreReport, cost: dict, leaves: list, node: int, event: Event,
                   parents: list, rank: tuple, parent: dict) -> None:
    """Record the knobs that split at a fork: per knob, the shortest trace; among equally short
    ones, one conformant under the draft's producer obligations before one conformant only
    under another producer reading, then the pair whose context departs least from ``draft``
    (first found on ties). ``rank`` is (level, not conformant under draft); ``parent`` the
    class stepped from, as a dict (its knobs cannot split here)."""
    if all(k in cost and (cost[k][:2] < rank or (cost[k][2] == 0 and cost[k][:2] <= rank))
           for c, _ in leaves for k, _ in c if k not in parent):
        return  # every knob that could split here already has a witness at least as good
    verdict_leaves = [(dict(c), Verdict(r.state, tuple((0, w) for w in r.warnings),
                                        (0, r.fatal) if r.fatal else None, 1))
                      for c, r in leaves]
    for knob, pair in knob_splits(verdict_leaves, key=_step_key).items():
        c = rank + (len(context_of(pair, knob)),)
        if knob not in cost or c < cost[knob]:
            cost[knob] = c
            report.splits[knob] = (_path(parents, node) + (event,), pair)


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
