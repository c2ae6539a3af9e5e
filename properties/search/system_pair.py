"""The shortest trace that separates two readings (:func:`shortest_distinguishing`), as a
transition system of the one driver (:class:`PairSystem`): a node holds the consumer state
under each reading, and the search stops at the first step whose results differ in what a
verdict shows. Clauses: IDX-CONFORMANCE (the readings difference of property P32).
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from model.consumer import initial_state, step as reference_step
from model.events import Event
from model.producer import Vocabulary
from model.readings import Reading
from model.verdict import Verdict
from properties.search.bfs import Expansion, LocalEngine, TransitionSystem, search
from properties.search.store import Interned
from properties.search.explore import EXPLORE_VOCABULARY
from properties.search.move_table import MoveTable, _fps_of
from properties.search.reading_classes import PRODUCER_READINGS, _step_key
from properties.search.report import _cyclic_gc_paused, _Witnesses

__all__ = ["PairSystem", "shortest_distinguishing"]


class PairSystem(TransitionSystem):
    """:func:`shortest_distinguishing` as a transition system: a node is ``(belief, state under
    reading a, state under reading b, producer readings)``, all numbers (the producer's side
    is a :class:`~properties.search.move_table.MoveTable`, as the all-readings sweep's); the finding
    ``("distinguishing",)`` is the first step whose results differ in what a verdict shows."""

    width = 4

    def __init__(self, reading_a: Reading, reading_b: Reading, vocabulary: Vocabulary,
                 producers0, producer: Optional[Reading] = None):
        self.reading_a, self.reading_b = reading_a, reading_b
        # one producer reading: its every knob (the producer-only ones, Q12 and Q17, included)
        # binds the moves, the table's one-reading mode (producers0 is then the flag True)
        self.table = MoveTable(vocabulary, False, producers0, producer)
        self.p0 = self.table.producer_set(producers0)
        self.states = Interned([initial_state()])

    def root(self) -> tuple:
        return (0, 0, 0, self.p0)

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
    producers0 = frozenset(PRODUCER_READINGS) if producer is None else True
    system = PairSystem(reading_a, reading_b, vocabulary, producers0, producer)
    found = search(system, depth, LocalEngine(system), max_states=max_states)
    found.raise_if_interrupted()
    hit = found.findings.get(("distinguishing",))
    if hit is None:
        return None
    node, move = hit[2]
    return _Witnesses(found, system)(node, move)
