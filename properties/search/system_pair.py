"""The shortest trace that separates two readings (:func:`shortest_distinguishing`), or each of
several readings from one (:func:`shortest_distinguishing_each`: one search for them all), as a
transition system of the one driver (:class:`PairSystem`): a node holds the consumer state
under each reading, and a pair's search ends at the first step whose results differ in what a
verdict shows. Clauses: IDX-CONFORMANCE (the readings difference of property P32).
"""
from __future__ import annotations

from typing import Optional, Sequence

import numpy as np

from model.consumer import initial_state, step as reference_step
from model.events import Event
from model.producer import Vocabulary
from model.readings import Reading, RecordingReading
from model.verdict import Verdict
from properties.search.bfs import Expansion, LocalEngine, TransitionSystem, search
from properties.search.store import Interned
from properties.search.explore import EXPLORE_VOCABULARY
from properties.search.move_table import MoveTable, _fps_of
from properties.search.reading_classes import PRODUCER_READINGS, _ATTR_OF_KNOB, _step_key
from properties.search.report import _cyclic_gc_paused, _Witnesses

__all__ = ["MAX_PAIRS", "PairSystem", "shortest_distinguishing", "shortest_distinguishing_each",
           "shortest_distinguishing_pairs"]


MAX_PAIRS = 63
"""The most readings b one :class:`PairSystem` searches beside reading a (a node's ``live``
bits are bits 0 to 62 of one int64)."""


class PairSystem(TransitionSystem):
    """:func:`shortest_distinguishing_each` as a transition system: reading ``a`` beside one
    or more readings ``b`` on the same traces. A node is ``(belief, state under a, state under
    each b, producer readings, live)``, all numbers (the producer's side is a
    :class:`~properties.search.move_table.MoveTable`, as the all-readings sweep's), where bit
    ``j`` of ``live`` says that the pair (a, b number j) is still searched. It is cleared in
    a node reached on a step where either consumer halts (the pair's own search would not
    expand that node); when a node is expanded, the bits of the pairs found at an earlier level
    are read as cleared too. Below a node where a pair's bit is (read as) cleared, its state is
    0, so that nodes that differ only in pairs no longer searched are one node; a node with
    no bit set is halted. The finding ``("distinguishing", j)``, of cost ``(level,)``, is the
    first step on which a and b number j give results that differ in what a verdict shows;
    the search stops once every pair has one.

    Without a bound on states, each pair's finding is the one the search of that pair alone
    (``b`` of one reading) finds: the nodes whose pair j is live, taken in search order at
    their first appearance, are that search's nodes in its order, with the same paths (with
    one reading b the nodes are that search's, so a bound on states cuts both alike). One step
    of ``a`` serves every pair whose state equals a's and whose readings differ from ``a``
    only in knobs that step did not consult: the reference step reads its reading only
    through knobs, so b's step is a's.

    :meth:`child` reads the findings of the search this system ran (the driver's ``known``,
    kept by :meth:`expand`): a node is rebuilt only on the system that searched it, with its
    ``level``, as the driver's witnesses and reports do.

    Args (of the constructor):
        reading_a: a complete consumer reading; readings_b: 1 to :data:`MAX_PAIRS` of them.
        vocabulary: the producer's finite world.
        producers0: the producer readings a trace starts conformant under (a frozenset of
            readings), or True with ``producer``: that one reading's every producer knob.
        producer: the one producer reading (with ``producers0`` True), else None.

    Raises:
        ValueError: no reading b, or more than :data:`MAX_PAIRS`.
    """

    def __init__(self, reading_a: Reading, readings_b: Sequence[Reading],
                 vocabulary: Vocabulary, producers0, producer: Optional[Reading] = None):
        self.reading_a, self.readings_b = reading_a, tuple(readings_b)
        k = len(self.readings_b)
        if not 1 <= k <= MAX_PAIRS:
            raise ValueError(f"a pair search takes 1 to {MAX_PAIRS} readings b, not {k}")
        self.width = 4 + k
        # per reading b, the reading attributes on which it differs from a
        self.differs = tuple(frozenset(attr for attr in _ATTR_OF_KNOB.values()
                                       if getattr(reading_a, attr) != getattr(b, attr))
                             for b in self.readings_b)
        # one producer reading: its every knob (the producer-only ones, Q12 and Q17, included)
        # binds the moves, the table's one-reading mode (producers0 is then the flag True)
        self.table = MoveTable(vocabulary, False, producers0, producer)
        self.p0 = self.table.producer_set(producers0)
        self.states = Interned([initial_state()])
        self.known: dict = {}  # the driver's findings (their cost: the level found at)

    def root(self) -> tuple:
        k = len(self.readings_b)
        return (0, 0) + (0,) * k + (self.p0, (1 << k) - 1)

    def fingerprints(self, nodes: np.ndarray) -> np.ndarray:
        t = self.table
        return _fps_of((t.beliefs,) + (self.states,) * (1 + len(self.readings_b)) +
                       (t.producer_sets, None), nodes)

    def _retired(self, level: int) -> int:
        """The ``live`` bits to read as cleared in a node at ``level``: the pairs found at an
        earlier level."""
        mask = 0
        for key, cost in self.known.items():
            if cost[0] < level:
                mask |= 1 << key[1]
        return mask

    def _steps(self, sa: int, sb: list, live: int, event: Event) -> tuple:
        """One step of every live pair: ``sa`` is the state number under a, ``sb`` a list of
        state numbers, one per reading b, ``live`` the int bitmask of the pairs still
        searched. Returns ``(a's StepResult, [b's StepResult, the very object of a's where the
        step is a's, or None where the pair is not live])``. Raises what the step raises."""
        recorder = RecordingReading(self.reading_a)
        ra = reference_step(self.states.values[sa], event, recorder)
        consulted = recorder.consulted
        results = []
        for j, s in enumerate(sb):
            if not live >> j & 1:
                results.append(None)
            elif s == sa and self.differs[j].isdisjoint(consulted):
                results.append(ra)  # the same step: no knob it read differs
            else:
                results.append(reference_step(self.states.values[s], event,
                                              self.readings_b[j]))
        return ra, results

    def _child(self, ba: int, pa: int, ra, results: list) -> tuple:
        """The node reached: belief number ``ba``, producer set number ``pa``, and the states
        and ``live`` bits of :meth:`_steps`'s results (a pair not live: state 0, bit clear;
        a consumer halted: its bit clear)."""
        number = self.states.number
        sa = number(ra.state)
        live, after = 0, []
        for j, rb in enumerate(results):
            if rb is None:
                after.append(0)
            else:
                after.append(sa if rb is ra else number(rb.state))
                if not (ra.state.halted or rb.state.halted):
                    live |= 1 << j
        return (ba, sa, *after, pa, live)

    def child(self, node: tuple, move: int, leaf: int, level: int = 0) -> tuple:
        b, sa, p, live = node[0], node[1], node[-2], node[-1]
        e, pa, _, ba = self.table.moves_of(b, p)[move]
        event = self.table.events.values[e]
        ra, results = self._steps(sa, list(node[2:-2]), live & ~self._retired(level), event)
        return event, self._child(ba, pa, ra, results)

    def event(self, node: tuple, move: int, level: int = 0) -> Event:
        t = self.table
        return t.events.values[t.moves_of(node[0], node[-2])[move][0]]

    def value(self, node: tuple) -> tuple:
        t, values = self.table, self.states.values
        return (t.beliefs.values[node[0]], values[node[1]],
                tuple(values[s] for s in node[2:-2]), t.producer_sets.values[node[-2]],
                node[-1])

    def done(self, findings: dict) -> bool:
        return len(findings) == len(self.readings_b)

    def expand(self, ids: np.ndarray, nodes: np.ndarray, level: int, out: Expansion,
               known: dict) -> None:
        self.known = known  # the driver's, kept up to date by it (read again by child)
        events, k = self.table.events.values, len(self.readings_b)
        found = {key[1] for key in known}  # a later step's finding cannot win
        kept = ~self._retired(level)
        for node, row in zip(ids.tolist(), nodes.tolist()):
            b, sa, p, live = row[0], row[1], row[-2], row[-1] & kept
            sb = row[2:2 + k]
            node_moves = self.table.moves_of(b, p)
            out.moves.append(len(node_moves))
            for m, (e, pa, _, ba) in enumerate(node_moves):
                ra, results = self._steps(sa, sb, live, events[e])
                quick_a = None
                for j, rb in enumerate(results):
                    if rb is None or rb is ra or j in found:
                        continue
                    if quick_a is None:
                        quick_a = _quick(ra)
                    if quick_a != _quick(rb) and _shown(ra) != _shown(rb):
                        out.findings.append((("distinguishing", j), (level,), (node, m, 0),
                                             (node, m)))
                        found.add(j)
                child = self._child(ba, pa, ra, results)
                out.keys.append((node << 28) | (m << 12))
                out.nodes.extend(child)
                out.halted.append(child[-1] == 0)


def _quick(result) -> tuple:
    """A step's result compared whole (state, warnings, fatal's code and clause): equal
    results show alike, so :func:`_shown` is compared only where these differ."""
    return (result.state, result.warnings,
            result.fatal and (result.fatal.code, result.fatal.clause))


def _shown(result) -> tuple:
    """What a verdict shows of one step's result (:func:`_step_key`): messages, agent state,
    run status, warnings and fatal."""
    return _step_key(Verdict(result.state, tuple((0, w) for w in result.warnings),
                             (0, result.fatal) if result.fatal else None, 1))


def shortest_distinguishing(reading_a: Reading, reading_b: Reading, depth: int = 6,
                            vocabulary: Vocabulary = EXPLORE_VOCABULARY,
                            max_states: Optional[int] = None,
                            producer: Optional[Reading] = None) -> Optional[tuple[Event, ...]]:
    """The shortest conformant trace on which two readings give different verdicts, by BFS.

    A node is (belief, state under ``reading_a``, state under ``reading_b``, the producer
    readings the trace so far conforms to, whether the pair is still searched: a
    :class:`PairSystem` of one reading b). The search stops at the first step whose results
    differ in what a verdict shows (messages, agent state, run status, warnings, fatal): that
    trace is a shortest distinguishing one.

    Args:
        reading_a, reading_b: complete consumer readings.
        depth: the longest trace tried (events).
        vocabulary: the producer's finite world.
        max_states: stop (returning None) past this many distinct nodes.
        producer: the reading whose producer obligations a trace must keep, every producer
            knob of it (:data:`model.producer.PRODUCER_KNOBS`, Q12 and Q17 included); None
            (default): any producer reading (:data:`PRODUCER_READINGS`, as the all-readings
            sweep of :func:`~properties.search.explore.explore` does), since the producer and
            the two consumers may each read the draft their own way.

    Returns:
        The trace, or None when the readings agree on every conformant trace up to ``depth``
        over the vocabulary.

    Clauses: IDX-CONFORMANCE (the readings difference of property P32).
    """
    return shortest_distinguishing_each(reading_a, (reading_b,), depth, vocabulary, max_states,
                                        producer)[0]


@_cyclic_gc_paused()
def shortest_distinguishing_each(reading_a: Reading, readings_b: Sequence[Reading],
                                 depth: int = 6, vocabulary: Vocabulary = EXPLORE_VOCABULARY,
                                 max_states: Optional[int] = None,
                                 producer: Optional[Reading] = None
                                 ) -> list[Optional[tuple[Event, ...]]]:
    """:func:`shortest_distinguishing` of ``reading_a`` and each of ``readings_b``, in one
    search (:class:`PairSystem`): entry ``j`` is the trace that
    ``shortest_distinguishing(reading_a, readings_b[j], ...)`` gives without ``max_states``
    (a test compares them on every knob's options), in a fraction of the time where the
    readings b each differ from a in a knob or two: a step of a serves every pair on which it
    consulted none of those knobs.

    Args:
        reading_a: a complete consumer reading; readings_b: one or more (past
            :data:`MAX_PAIRS`, searched :data:`MAX_PAIRS` at a time).
        depth, vocabulary, producer: as :func:`shortest_distinguishing`.
        max_states: stop (every pair still unfound: None) past this many distinct nodes of
            the joint search: with several readings b, a pair may then be None where its own
            search under the same bound finds a trace; with one, the nodes are those of
            :func:`shortest_distinguishing`.

    Returns:
        A list, one trace or None per reading b, in order.

    Raises:
        ValueError: no reading b.

    Clauses: IDX-CONFORMANCE (the readings difference of property P32).
    """
    readings_b = tuple(readings_b)
    if len(readings_b) > MAX_PAIRS:
        return [trace for i in range(0, len(readings_b), MAX_PAIRS)
                for trace in shortest_distinguishing_each(
                    reading_a, readings_b[i:i + MAX_PAIRS], depth, vocabulary, max_states,
                    producer)]
    producers0 = frozenset(PRODUCER_READINGS) if producer is None else True
    system = PairSystem(reading_a, readings_b, vocabulary, producers0, producer)
    found = search(system, depth, LocalEngine(system), max_states=max_states)
    found.raise_if_interrupted()
    witness = _Witnesses(found, system)
    traces = []
    for j in range(len(system.readings_b)):
        hit = found.findings.get(("distinguishing", j))
        traces.append(None if hit is None else witness(*hit[2]))
    return traces


def shortest_distinguishing_pairs(pairs: Sequence[tuple[Reading, Reading]], depth: int = 6,
                                  vocabulary: Vocabulary = EXPLORE_VOCABULARY,
                                  producer: Optional[Reading] = None
                                  ) -> list[Optional[tuple[Event, ...]]]:
    """:func:`shortest_distinguishing` of each ``(reading a, reading b)`` of ``pairs``: one
    joint search (:func:`shortest_distinguishing_each`) per distinct reading a, in the order
    of their first pair.

    Args:
        pairs: ``(reading a, reading b)`` tuples of complete consumer readings.
        depth, vocabulary, producer: as :func:`shortest_distinguishing`.

    Returns:
        A list, one trace or None per pair, in order."""
    groups: dict = {}
    for i, (a, b) in enumerate(pairs):
        groups.setdefault(a, []).append((i, b))
    traces: list = [None] * len(pairs)
    for a, members in groups.items():
        found = shortest_distinguishing_each(a, [b for _, b in members], depth, vocabulary,
                                             producer=producer)
        for (i, _), trace in zip(members, found):
            traces[i] = trace
    return traces
