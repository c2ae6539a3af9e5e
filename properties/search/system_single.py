"""One reading as a transition system (:class:`SingleSystem`), and its engine side
(:class:`SingleAdapter`).

A node is ``(belief, state, conformant so far)``, numbers of interned tables (the producer's
side is a :class:`~properties.search.move_table.MoveTable` under the reading); a move is an
event; every property is checked on every edge, and, with the reference step, a knob is
recorded as a split where it decides in the reading's context
(:func:`~properties.search.reading_classes.step_splits`). Any consumer (a mutant of the zoo
too) can be explored this way.
"""
from __future__ import annotations

import numpy as np

from model.consumer import initial_state, step as reference_step
from model.events import Event
from model.producer import Vocabulary
from model.readings import Reading, RecordingReading
from properties.search.bfs import EngineAdapter, Expansion, TransitionSystem
from properties.search.store import Interned
from properties.catalogue import Transition, check_transition
from properties.search.move_table import MoveTable, _fps_of, _record
from properties.search.reading_classes import _FULL, _KNOB_OF_ATTR, step_splits

__all__ = ["SingleAdapter", "SingleSystem"]


class SingleSystem(TransitionSystem):
    """One reading (see :func:`~properties.search.explore.explore`) as a transition system: a
    node is ``(belief, state, conformant so far)``, numbers of interned tables (the producer's
    side, beliefs, events and the conformance flag, is a
    :class:`~properties.search.move_table.MoveTable` under the reading, as the all-readings
    sweep's is over every producer reading); every property is checked on every edge.

    Args:
        vocabulary, reading, consumer: the producer's world, the reading and the consumer
        stepped; properties: checked on every edge; adversarial: also the non-conformant
        moves; check_readings: record the knobs that split a step (reference step only).
    """

    width = 3

    def __init__(self, vocabulary: Vocabulary, reading: Reading, consumer, properties: tuple,
                 adversarial: bool, check_readings: bool):
        self.reading, self.consumer, self.properties = reading, consumer, properties
        self.check_splits = check_readings and consumer.step is reference_step
        self.table = MoveTable(vocabulary, adversarial, True, reading)
        self.states = Interned([initial_state()])
        self.found_knobs: set = set()

    def root(self) -> tuple:
        return (0, 0, 1)

    def fingerprints(self, nodes: np.ndarray) -> np.ndarray:
        t = self.table
        return _fps_of((t.beliefs, self.states, t.producer_sets), nodes)

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


class SingleAdapter(EngineAdapter):
    """The engine side of a :class:`SingleSystem` (:class:`~properties.search.bfs.EngineAdapter`):
    the system built from its arguments (the same as :class:`SingleSystem`'s), routed by
    consumer state, its nodes exported as values for Dask workers."""

    def __init__(self, vocabulary: Vocabulary, reading: Reading, consumer, properties: tuple,
                 adversarial: bool, check_readings: bool):
        super().__init__(SingleSystem(vocabulary, reading, consumer, properties, adversarial,
                                      check_readings))
        self.config = (vocabulary, reading, consumer, properties, adversarial, check_readings)

    def spec(self, workers: int) -> tuple:
        return type(self), self.config

    def forget_findings(self) -> None:
        """Empty the knobs found to split (:meth:`SingleSystem.expand` takes them up again from
        ``known``). See :meth:`~properties.search.bfs.EngineAdapter.forget_findings`."""
        self.system.found_knobs.clear()

    def routing(self, nodes: np.ndarray) -> np.ndarray:
        """By consumer state, as the sweep's."""
        return self.system.states.fingerprints()[nodes[:, 1]]

    def export(self, nodes: np.ndarray) -> list:
        system = self.system
        beliefs = system.table.beliefs.values
        return [(beliefs[b], system.states.values[s], ok) for b, s, ok in nodes.tolist()]

    def import_(self, values: list) -> np.ndarray:
        system = self.system
        rows = [(system.table.beliefs.number(b), system.states.number(s), ok)
                for b, s, ok in values]
        return np.array(rows, dtype=np.int64).reshape(len(rows), 3)
