"""The Z3 cross-check's enumeration as a transition system on the one breadth-first driver.

:func:`enumerate_shortest` answers exactly what
:func:`properties.smt.replay.enumerate_shortest` answers (same arguments, same result, the
same ``RuntimeError`` past ``max_nodes``), with its loop replaced by :class:`ReplaySystem` run
by :func:`properties.bfs.search`. It lives beside ``replay.py`` for now; the change there is
to make ``replay.enumerate_shortest`` this function (see the module ``properties.smt.replay``'s
enumeration section and the issue-21 note).

A node is ``(consumer states, producer belief, producer readings still conformant, tracked
values)``, each a number of an interned table; a move is a letter of the abstract alphabet
(its index), realised at the node's position (the realised event depends on it, hence the
``level`` the driver passes to :meth:`ReplaySystem.child`); a goal that holds on a step is a
finding ``("goal", name)``, first in the sequential order kept. The nodes are fingerprinted
from their interned numbers (exact in one process: this system is never distributed, its
goals are arbitrary callables over arbitrary tracked values).
"""
from __future__ import annotations

from typing import Optional, Sequence

import numpy as np

from model.consumer import initial_state, step
from model.producer import Belief, advance, violations
from model.readings import DRAFT, Reading
from properties.bfs import Expansion, LocalEngine, TransitionSystem, search
from properties.bfs_store import mix
from properties.catalogue import Transition
from properties.smt.replay import StepView, _restep, alphabet
from properties.smt.world import World, realise, realise_trace

__all__ = ["ReplaySystem", "enumerate_shortest"]


class _Numbered:
    """Values numbered in order of first appearance (``number``, ``values``)."""

    def __init__(self, first=()):
        self.values, self.ids = [], {}
        for v in first:
            self.number(v)

    def number(self, value) -> int:
        i = self.ids.get(value)
        if i is None:
            i = self.ids[value] = len(self.values)
            self.values.append(value)
        return i


class ReplaySystem(TransitionSystem):
    """See the module. ``readings``: ``{copy name: Reading}``; ``producers``: the producer
    readings; ``together``: a trace conforms while no producer reading is broken by any event
    (else: while some one reading allows every event); ``goals``: ``{name: Goal}``."""

    width = 4

    def __init__(self, world: World, readings: dict, producers: list, together: bool,
                 goals: dict):
        self.world, self.readings, self.producers, self.together = world, readings, producers, \
            together
        self.letters = alphabet(world)
        self.names = tuple(readings)
        self.goal_items = list(goals.items())
        self.tracked = [(i, g.track) for i, (_, g) in enumerate(self.goal_items)
                        if g.track is not None]
        self.need_any = any(g.mode == "any" for g in goals.values())
        self.need_prefix = any(g.mode == "prefix" for g in goals.values())
        self.restep = {name: _restep(r) for name, r in readings.items()}
        start = realise_trace(world, ())[0]
        self.states = _Numbered([tuple(step(initial_state(), start, r).state
                                       for r in readings.values())])
        self.beliefs = _Numbered([advance(Belief(), start)])
        self.alive = _Numbered([frozenset(range(len(producers)))])
        self.auxes = _Numbered([tuple(None for _ in self.tracked)])
        self.realised: dict = {}

    def root(self) -> tuple:
        return (0, 0, 0, 0)

    def fingerprints(self, nodes: np.ndarray) -> np.ndarray:
        return mix([nodes[:, j].astype(np.uint64) for j in range(4)])

    def _event(self, m: int, t: int):
        ev = self.realised.get((m, t))
        if ev is None:
            ev = self.realised[(m, t)] = realise(self.world, self.letters[m], t)
        return ev

    def _step(self, node: tuple, m: int, t: int, open_goals: Optional[set], found: list):
        """The successor of ``node`` by letter ``m`` at position ``t`` (None when not taken),
        appending ``(goal name)`` to ``found`` for each open goal that holds."""
        si, bi, ai, xi = node
        states, belief, alive = self.states.values[si], self.beliefs.values[bi], \
            self.alive.values[ai]
        auxes = self.auxes.values[xi]
        ok = bool(alive)
        ev = self._event(m, t)
        per = {i: frozenset(v.clause for v in violations(belief, ev, self.producers[i]))
               for i in alive}
        broken = frozenset().union(*per.values()) if per else frozenset()
        if self.together:
            alive_after = alive if alive and not broken else frozenset()
        else:
            alive_after = frozenset(i for i in alive if not per[i])
        ok_after = bool(alive_after)
        if not ok_after and not self.need_any and not (self.need_prefix and ok):
            return None
        after_belief = advance(belief, ev)
        copies, new_states = {}, []
        for name, st in zip(self.names, states):
            r = self.readings[name]
            res = step(st, ev, r)
            # run input is left empty here: no goal of the fragment reads it
            copies[name] = Transition(t, st, ev, res.state, res.warnings, res.fatal, r, (),
                                      belief, after_belief, ok_after, self.restep[name])
            new_states.append(res.state)
        view = StepView(t, ev, self.letters[m], copies, belief, after_belief, broken, ok,
                        ok_after)
        if open_goals is not None:
            aux_of = {i: auxes[k] for k, (i, _) in enumerate(self.tracked)}
            for i, (name, g) in enumerate(self.goal_items):
                if name not in open_goals:
                    continue
                if (g.mode == "conformant" and not ok_after) or (g.mode == "prefix" and not ok):
                    continue
                if g.holds(view, aux_of.get(i)):
                    found.append(name)
        if not ok_after and not self.need_any:
            return None
        return (self.states.number(tuple(new_states)), self.beliefs.number(after_belief),
                self.alive.number(alive_after),
                self.auxes.number(tuple(track(auxes[k], view)
                                        for k, (_, track) in enumerate(self.tracked))))

    def expand(self, ids: np.ndarray, nodes: np.ndarray, level: int, out: Expansion,
               known: dict) -> None:
        t = level + 1  # the position of the letter (RUN_STARTED is 0)
        open_goals = {name for name, _ in self.goal_items if ("goal", name) not in known}
        for node, row in zip(ids.tolist(), nodes.tolist()):
            out.moves.append(len(self.letters))
            for m in range(len(self.letters)):
                found: list = []
                child = self._step(tuple(row), m, t, open_goals, found)
                for name in found:
                    open_goals.discard(name)
                    out.findings.append((("goal", name), (), (node, m, 0), (node, m)))
                if child is not None:
                    out.keys.append((node << 28) | (m << 12))
                    out.nodes.append(child)
                    out.halted.append(False)

    def child(self, node: tuple, move: int, leaf: int, level: int) -> tuple:
        return self.letters[move], self._step(node, move, level + 1, None, [])

    def event(self, node: tuple, move: int, level: int):
        return self.letters[move]

    def done(self, findings: dict) -> bool:
        return all(("goal", name) in findings for name, _ in self.goal_items)


def enumerate_shortest(world: World, depth: int, readings: dict,
                       producer: Optional[Sequence[Reading]], goals: dict,
                       max_nodes: int = 2_000_000) -> dict:
    """:func:`properties.smt.replay.enumerate_shortest` on the driver: for each goal, a
    shortest trace (abstract events after RUN_STARTED) on which it holds at the last event, or
    None. Raises RuntimeError past ``max_nodes`` distinct nodes."""
    if producer is None:
        producers = [DRAFT.with_(Q2=a, **{"Q4-opener": b}) for a in ("continues", "parent")
                     for b in ("current", "first")]
        together = False
    else:
        producers, together = list(producer), True
    system = ReplaySystem(world, readings, producers, together, goals)
    found = search(system, max(depth - 1, 0), LocalEngine(system), max_states=max_nodes + 1)
    if found.stopped_by == "max-states":
        raise RuntimeError(f"enumeration exceeded {max_nodes} nodes")
    out: dict = {name: None for name in goals}
    for key, (_, _, (node, move)) in found.findings.items():
        labels = found.path(node)
        out[key[1]] = tuple(system.letters[m] for m, _ in labels) + (system.letters[move],)
    return out
