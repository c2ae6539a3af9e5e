"""The producer's side every transition system of :mod:`properties.search.explore` shares: the
moves from a (belief, producer readings) pair, as numbers of interned tables (:class:`MoveTable`,
in the fixed order of :func:`_node_moves`), and the two helpers each system uses on the driver's
nodes: their fingerprints over interned columns (:func:`_fps_of`) and the record of a violated
property as a finding (:func:`_record`).
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from model.producer import Belief, Vocabulary, adversarial_moves, advance, moves
from model.readings import DRAFT, Reading
from properties.search.bfs import Expansion
from properties.search.store import Interned, mix
from properties.search.reading_classes import PRODUCER_READINGS, _DRAFT_PRODUCER, _representative

__all__ = ["MoveTable"]


def _fps_of(tables: tuple, nodes: np.ndarray) -> np.ndarray:
    """Node fingerprints: each column of ``nodes`` numbers a value of the matching
    :class:`~properties.search.store.Interned` table (None: the column is a plain int, fingerprinted
    as itself). Past six columns (:func:`~properties.search.store.mix`'s most), the first six
    are mixed, then that fingerprint with the next five, and so on."""
    columns = []
    for j, table in enumerate(tables):
        col = nodes[:, j]
        columns.append(table.fingerprints()[col] if table is not None
                       else col.astype(np.uint64) * np.uint64(0x9FB21C651E98DF25))
    h = mix(columns[:6])
    for i in range(6, len(columns), 5):
        h = mix([h] + columns[i:i + 5])
    return h


def _record(out: Expansion, recorded: set, key: str, seq: tuple, payload: tuple) -> None:
    """A finding kept once per key (the first in search order): ``key`` a violated property
    id (or ``P00-no-exception``), ``seq`` its place (see :class:`~properties.search.bfs.Expansion`),
    ``payload`` ``(node, move, witness text)``. ``recorded`` holds the keys already merged or
    recorded in this expansion (a later one could not win)."""
    if key not in recorded:
        recorded.add(key)
        out.findings.append((("violation", key), (), seq, payload))


class MoveTable:
    """The producer's side of every search: interned ``beliefs``, ``events`` and
    ``producer_sets``, and ``moves``: (belief, producer set) -> ``[(event, producer set after,
    conformant, belief after)]``, all numbers, in the fixed order of :func:`_node_moves`
    (``advanced``: (belief, event) -> belief after; ``draft_conformant``: per producer set,
    whether the trace is conformant under the draft's producer obligations).

    Two modes. Over every producer reading (``reading`` None: the all-readings sweep,
    :class:`~properties.search.sweep_cache.SweepCache`, and the pair search,
    :class:`~properties.search.system_pair.PairSystem`): a producer set is a frozenset of
    :data:`PRODUCER_READINGS` and ``draft_conformant`` says whether the draft's is in it. Under one
    ``reading`` (the single-reading search, :class:`~properties.search.system_single.SingleSystem`):
    a producer set is the conformance flag so far, False numbered 0 and True 1, the moves are those
    of that reading (the non-conformant ones after, with ``adversarial``), and ``draft_conformant``
    is the flag itself.

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
