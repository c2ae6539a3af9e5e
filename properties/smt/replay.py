"""Cross-validation: decode Z3 models into real traces and replay them on the executable model.

* :func:`decode` reads the abstract events of a model; :func:`~properties.smt.world.realise_trace`
  turns them into real events.
* :func:`lockstep` replays the trace on :func:`model.consumer.step` (every consumer copy, under its
  reading) and :func:`model.producer.violations` / :func:`model.producer.advance`, and compares,
  after every event, the abstract view of the concrete state with the state Z3 computed, the
  branch of the step (a :data:`model.consumer.BRANCHES` id on both sides), the warning and fatal
  outcome (branch and code), and the producer clauses broken. Any difference raises
  :class:`CrossCheckError`: the encoding and the executable model disagree, and one is wrong.
* :func:`enumerate_shortest` is the executable counterpart of a query: a breadth-first search of
  the *same* abstract event alphabet, realised and stepped on the executable model, returning a
  shortest trace on which a Python predicate holds (:class:`ReplaySystem` on the one driver,
  :func:`properties.search.bfs.search`). Tests use it to confirm Z3's shortest lengths and its unsat
  answers at small depth.

The Python predicates see one :class:`StepView` per event: the event, each consumer copy's
transition (a :class:`properties.catalogue.Transition`, so catalogue checks apply unchanged), the
producer's belief around it, the clauses it breaks, and whether the trace is conformant.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Callable, Optional, Sequence

import numpy as np
import z3

from model.consumer import initial_state, run_input, step
from model.events import Event
from model.producer import PRODUCER_ONLY_KNOBS, Belief, advance, violations
from model.readings import DRAFT, KNOB_BY_ID, Reading
from properties.search.bfs import Expansion, LocalEngine, TransitionSystem, search
from properties.search.store import Interned, mix, pack_key
from properties.catalogue import Transition
from properties.smt.encoding import (CONSUMER_FIELDS, FATALS, PRODUCER_RULES, STEP_BRANCH_IDS,
                                     WARNINGS, Unrolling)
from properties.smt.world import (DELTA, I_ACT, I_NONE, I_TEXT, MS, SNAP, TEXT, AbstractEvent,
                                  MsEntry, World, abstract_state, realise, realise_trace)

__all__ = ["CrossCheckError", "StepView", "decode", "model_reading", "lockstep", "views_of",
           "alphabet", "Goal", "ReplaySystem", "enumerate_shortest"]


class CrossCheckError(AssertionError):
    """Z3's model and the executable model disagree on a trace (a bug in one of them).

    Attributes:
        trace: the realised trace; position: the event index; detail: what differs.
    """

    def __init__(self, detail: str, trace: Sequence[Event] = (), position: int = -1):
        super().__init__(f"at event {position}: {detail}")
        self.detail, self.trace, self.position = detail, tuple(trace), position


@dataclass(frozen=True)
class StepView:
    """One event of a trace as the Python predicates see it.

    Attributes:
        index: the event's position in the trace (RUN_STARTED is 0).
        event: the real event; abstract: the abstract event it realises.
        copies: ``{copy name: Transition}`` (the consumer step under that copy's reading).
        belief_before, belief_after: the producer's belief around the event.
        broken: producer clauses the event breaks (under any producer reading).
        conformant_before: no earlier event broke a producer clause; conformant: nor this one.
        branches: ``{copy name: branch id}`` of each copy's step (:attr:`model.consumer.
            StepResult.branch`); empty where the view was built without them.
    """

    index: int
    event: Event
    abstract: AbstractEvent
    copies: dict
    belief_before: Belief
    belief_after: Belief
    broken: frozenset
    conformant_before: bool
    conformant: bool
    branches: dict = field(default_factory=dict)

    @property
    def a(self) -> Transition:
        """The transition of copy ``"a"`` (the one most queries ask about)."""
        return self.copies["a"]


def _int(model: z3.ModelRef, term) -> int:
    return model.eval(term, model_completion=True).as_long()


def _bool(model: z3.ModelRef, term) -> bool:
    return z3.is_true(model.eval(term, model_completion=True))


def decode(u: Unrolling, model: z3.ModelRef, n: Optional[int] = None) -> tuple[AbstractEvent, ...]:
    """The abstract events at positions ``1..n`` (default: all unrolled) of a model."""
    n = u.n if n is None else n
    out = []
    for t in range(1, n + 1):
        e = u.events[t]
        kind = _int(model, e.kind)
        ms = ()
        if kind == MS:
            ms = tuple(MsEntry(_int(model, e.inc[j]), _int(model, e.mtyp[j]),
                               _int(model, e.mown[j]), _int(model, e.mcont[j]),
                               _int(model, e.rank[j])) for j in range(len(u.world.ids)))
        out.append(AbstractEvent(kind, _int(model, e.mid), _int(model, e.typ),
                                 _int(model, e.cont), _int(model, e.rep), _int(model, e.tag),
                                 _int(model, e.pk), ms))
    return tuple(out)


def model_reading(u: Unrolling, model: z3.ModelRef, copy: str) -> Reading:
    """The complete reading a copy ran under in a model: its fixed reading, or the model's
    options for the fragment's knobs with ``draft`` elsewhere."""
    knobs = u.knobs[copy]
    if knobs.reading is not None:
        return knobs.reading
    return DRAFT.with_(**knobs.value(model))


def fragment_producer(reading: Reading) -> Reading:
    """``reading`` as the fragment's producer reads it: the producer-side knobs
    (:data:`model.producer.PRODUCER_ONLY_KNOBS`, which no consumer step consults) at their draft
    option, the most permissive, which is the one the encoding's producer encodes (see
    :data:`properties.smt.encoding.OUTSIDE_KNOBS`)."""
    fixed = {k: KNOB_BY_ID[k].draft for k in PRODUCER_ONLY_KNOBS
             if reading.as_dict()[k] != KNOB_BY_ID[k].draft}
    return reading.with_(**fixed) if fixed else reading


def _producer_readings(u: Unrolling, model: z3.ModelRef) -> list[Reading]:
    return [k.reading if k.reading is not None else DRAFT.with_(**k.value(model))
            for k in u.pknobs]


def views_of(world: World, events: tuple[AbstractEvent, ...], readings: dict,
             producer: Sequence[Reading]) -> list[StepView]:
    """Replay realised ``events`` on the executable model: one :class:`StepView` per fragment
    event (the RUN_STARTED at index 0 is stepped but not viewed)."""
    trace = realise_trace(world, events)
    states = {name: step(initial_state(), trace[0], r).state for name, r in readings.items()}
    belief = advance(Belief(), trace[0])
    conformant = True
    views = []
    for t in range(1, len(trace)):
        ev = trace[t]
        broken = frozenset(v.clause for r in producer
                           for v in violations(belief, ev, fragment_producer(r)))
        after_belief = advance(belief, ev)
        ok = conformant and not broken
        copies, branches = {}, {}
        for name, r in readings.items():
            res = step(states[name], ev, r)
            copies[name] = Transition(t, states[name], ev, res.state, res.warnings, res.fatal, r,
                                      tuple(run_input(res.state)), belief, after_belief, ok,
                                      _restep(r))
            branches[name] = res.branch
            states[name] = res.state
        views.append(StepView(t, ev, events[t - 1], copies, belief, after_belief, broken,
                              conformant, ok, branches))
        belief, conformant = after_belief, ok
    return views


def _restep(reading: Reading):
    def restep(s, e):
        r = step(s, e, reading)
        return r.state, r.warnings, r.fatal
    return restep


_WARN_CODE = {v: k for k, v in WARNINGS.items()}
_FATAL_CODE = {v: k for k, v in FATALS.items()}


def lockstep(u: Unrolling, model: z3.ModelRef, n: Optional[int] = None) -> list[StepView]:
    """Replay a model's trace (positions ``1..n``) on the executable model and compare it with
    what Z3 computed, event by event.

    Returns:
        The :class:`StepView` list of the replay.

    Raises:
        CrossCheckError: on the first difference in a consumer copy's abstract state (held,
            role, type, owner, first owner, content version, seen, open, message order,
            halted), its branch, its warning or fatal outcome, or the producer clauses broken.
    """
    n = u.n if n is None else n
    world = u.world
    events = decode(u, model, n)
    readings = {name: model_reading(u, model, name) for name in u.knobs}
    views = views_of(world, events, readings, _producer_readings(u, model))
    trace = realise_trace(world, events)
    for t, view in enumerate(views, start=1):
        for name, tr in view.copies.items():
            st = u.steps[name][t]
            concrete = abstract_state(world, tr.after)
            for j in range(len(world.ids)):
                z = tuple(_bool(model, st.after[f][j]) if f in ("ex", "act", "seen", "open")
                          else _int(model, st.after[f][j]) for f in CONSUMER_FIELDS)
                z = z[:2] + z[3:]  # drop the position key: compared as an order below
                if z != concrete.slots[j]:
                    raise CrossCheckError(
                        f"copy {name}: slot {world.ids[j]}: Z3 (held, activity, type, owner, "
                        f"first owner, content, seen, open) = {z}, executable model = "
                        f"{concrete.slots[j]}", trace, t)
            held = [j for j in range(len(world.ids)) if _bool(model, st.after["ex"][j])]
            order = tuple(sorted(held, key=lambda j: _int(model, st.after["pos"][j])))
            if order != concrete.order:
                raise CrossCheckError(f"copy {name}: message order Z3 {order}, executable model "
                                      f"{concrete.order}", trace, t)
            if _bool(model, st.after["halted"]) != concrete.halted:
                raise CrossCheckError(f"copy {name}: halted differs", trace, t)
            zbranch = STEP_BRANCH_IDS[_int(model, st.branch)]
            if zbranch != view.branches[name]:
                raise CrossCheckError(f"copy {name}: branch Z3 {zbranch}, executable model "
                                      f"{view.branches[name]}", trace, t)
            warns = [_WARN_CODE.get((w.branch, w.code), -1) for w in tr.warnings]
            zw = _int(model, st.warn)
            if warns != ([zw] if zw else []):
                got = [(w.branch, w.code) for w in tr.warnings]
                raise CrossCheckError(f"copy {name}: warnings Z3 {WARNINGS.get(zw)}, executable "
                                      f"model {got}", trace, t)
            fatal = _FATAL_CODE.get((tr.fatal.branch, tr.fatal.code), -1) if tr.fatal else 0
            if fatal != _int(model, st.fatal):
                raise CrossCheckError(f"copy {name}: fatal Z3 {FATALS.get(_int(model, st.fatal))}, "
                                      f"executable model {tr.fatal}", trace, t)
        zb = frozenset(c for c in PRODUCER_RULES if _bool(model, u.viol[t][c]))
        if zb != view.broken:
            raise CrossCheckError(f"producer: Z3 says the event breaks {sorted(zb)}, the monitor "
                                  f"says {sorted(view.broken)}", trace, t)
    return views


# --- executable enumeration over the same alphabet ----------------------------------------------

def alphabet(world: World) -> list[AbstractEvent]:
    """Every abstract event of the world, in the encoding's canonical order (fields
    lexicographic, as the canonical models minimise them)."""
    n, owners, types = len(world.ids), range(world.owners), range(len(world.types))
    out: list[AbstractEvent] = []
    for j in range(n):
        for typ in types:
            for cont in range(world.contents):
                for rep in range(3):
                    for tag in owners:
                        out.append(AbstractEvent(SNAP, j, typ, cont, rep, tag))
    for j in range(n):
        for typ in types:
            for tag in owners:
                for pk in range(3):
                    out.append(AbstractEvent(DELTA, j, typ, 0, 0, tag, pk))
    if world.text:
        out.extend(AbstractEvent(TEXT, j) for j in range(n))
    if world.messages_snapshot:
        choices = [MsEntry(I_NONE), MsEntry(I_TEXT)] + [
            MsEntry(I_ACT, typ, own, cont) for typ in types for own in owners
            for cont in range(world.contents)]
        for combo in itertools.product(choices, repeat=n):
            listed = [j for j, e in enumerate(combo) if e.inc != I_NONE]
            for perm in itertools.permutations(range(len(listed))):
                ranks = dict(zip(listed, perm))
                out.append(AbstractEvent(MS, ms=tuple(
                    MsEntry(e.inc, e.typ, e.own, e.cont, ranks.get(j, 0))
                    for j, e in enumerate(combo))))
    return out


@dataclass(frozen=True)
class Goal:
    """One question for :func:`enumerate_shortest`: ``holds(view, aux)`` on the last event, with
    ``track(aux, view) -> aux`` when it needs history, judged on traces of ``mode``:
    ``"conformant"`` (every event, the last included, breaks nothing), ``"prefix"`` (every event
    before the last breaks nothing) or ``"any"``."""

    holds: Callable[[StepView, object], bool]
    track: Optional[Callable[[object, StepView], object]] = None
    mode: str = "conformant"


class ReplaySystem(TransitionSystem):
    """:func:`enumerate_shortest` as a transition system of the one breadth-first driver
    (:func:`properties.search.bfs.search`).

    A node is ``(consumer states, producer belief, producer readings still conformant,
    tracked values)``, each a number of an interned table; a move is a letter of
    :func:`alphabet` (its index), realised at the node's position (the realised event depends
    on it: the ``level`` the driver passes); a goal that holds on a step is a finding
    ``("goal", name)``, the first in the sequential order kept. Nodes are fingerprinted from
    their interned numbers (exact in one process: this system is never distributed, its goals
    being arbitrary callables over arbitrary tracked values).

    Args:
        world: the world; readings: ``{copy name: Reading}``; producers: the producer
            readings; together: a trace conforms while no producer reading is broken by any
            event (else: while some one reading allows every event); goals: ``{name: Goal}``.
    """

    width = 4

    def __init__(self, world: World, readings: dict, producers: list, together: bool,
                 goals: dict):
        self.world, self.readings, self.producers = world, readings, producers
        self.together = together
        self.letters = alphabet(world)
        self.names = tuple(readings)
        self.goal_items = list(goals.items())
        self.tracked = [(i, g.track) for i, (_, g) in enumerate(self.goal_items)
                        if g.track is not None]
        self.need_any = any(g.mode == "any" for g in goals.values())
        self.need_prefix = any(g.mode == "prefix" for g in goals.values())
        self.restep = {name: _restep(r) for name, r in readings.items()}
        start = realise_trace(world, ())[0]
        self.states = Interned([tuple(step(initial_state(), start, r).state
                                       for r in readings.values())])
        self.beliefs = Interned([advance(Belief(), start)])
        self.alive = Interned([frozenset(range(len(producers)))])
        self.auxes = Interned([tuple(None for _ in self.tracked)])
        self.realised: dict = {}

    def root(self) -> tuple:
        return (0, 0, 0, 0)

    def fingerprints(self, nodes: np.ndarray) -> np.ndarray:
        return mix([nodes[:, j].astype(np.uint64) for j in range(4)])

    def _event(self, m: int, t: int) -> Event:
        ev = self.realised.get((m, t))
        if ev is None:
            ev = self.realised[(m, t)] = realise(self.world, self.letters[m], t)
        return ev

    def _step(self, node: tuple, m: int, t: int, open_goals: Optional[set],
              found: list) -> Optional[tuple]:
        """The successor of ``node`` by letter ``m`` at position ``t`` (None when not taken),
        appending the name of each goal of ``open_goals`` that holds to ``found``."""
        si, bi, ai, xi = node
        states, belief = self.states.values[si], self.beliefs.values[bi]
        alive, auxes = self.alive.values[ai], self.auxes.values[xi]
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
        copies, branches, new_states = {}, {}, []
        for name, st in zip(self.names, states):
            r = self.readings[name]
            res = step(st, ev, r)
            # run input is left empty here: no goal of the fragment reads it
            copies[name] = Transition(t, st, ev, res.state, res.warnings, res.fatal, r, (),
                                      belief, after_belief, ok_after, self.restep[name])
            branches[name] = res.branch
            new_states.append(res.state)
        view = StepView(t, ev, self.letters[m], copies, belief, after_belief, broken, ok,
                        ok_after, branches)
        if open_goals:
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
                    out.keys.append(pack_key(node, m, 0))
                    out.nodes.extend(child)
                    out.halted.append(False)

    def child(self, node: tuple, move: int, leaf: int, level: int) -> tuple:
        return self.letters[move], self._step(node, move, level + 1, None, [])

    def event(self, node: tuple, move: int, level: int) -> AbstractEvent:
        return self.letters[move]

    def value(self, node: tuple) -> tuple:
        si, bi, ai, xi = node
        return (self.states.values[si], self.beliefs.values[bi], self.alive.values[ai],
                self.auxes.values[xi])

    def done(self, findings: dict) -> bool:
        return all(("goal", name) in findings for name, _ in self.goal_items)


def enumerate_shortest(world: World, depth: int, readings: dict,
                       producer: Optional[Sequence[Reading]], goals: dict,
                       max_nodes: int = 2_000_000) -> dict:
    """Breadth-first search over the abstract alphabet, stepped on the executable model: for each
    goal, a shortest trace on which it holds at the last event (the first such in the search's
    order: letters in :func:`alphabet`'s order). The search is :class:`ReplaySystem` on the one
    driver, :func:`properties.search.bfs.search`.

    Args:
        world: the world (keep it small: the alphabet grows fast).
        depth: the longest trace (events, RUN_STARTED included).
        readings: ``{copy name: Reading}``.
        producer: readings whose obligations judge conformance: an event conforms when it breaks
            no obligation under any of them; or None: the trace conforms when some one producer
            reading of Q2 and Q4-opener allows every event of it (what
            :func:`~properties.smt.queries.distinguishing` asks by default).
        goals: ``{name: Goal}``; all are answered by one search.
        max_nodes: refuse to go on past this many distinct nodes (raises RuntimeError).

    Returns:
        ``{name: shortest trace (abstract events after RUN_STARTED) or None}``.

    Raises:
        RuntimeError: the search reached more than ``max_nodes`` distinct nodes.

    Nodes are (consumer states, belief, producer readings still conformant, tracked values);
    non-conformant nodes are expanded only when some goal asks about any trace.
    """
    if producer is None:
        producers = [DRAFT.with_(Q2=a, **{"Q4-opener": b}) for a in ("continues", "parent")
                     for b in ("current", "first")]
        together = False
    else:
        producers, together = [fragment_producer(r) for r in producer], True
    system = ReplaySystem(world, readings, producers, together, goals)
    found = search(system, max(depth - 1, 0), LocalEngine(system), max_states=max_nodes + 1)
    found.raise_if_interrupted()
    if found.stopped_by == "max-states":
        raise RuntimeError(f"enumeration exceeded {max_nodes} nodes")
    out: dict = {name: None for name in goals}
    for key, (_, _, (node, move)) in found.findings.items():
        out[key[1]] = tuple(system.letters[m] for m, _ in found.path(node)) + \
            (system.letters[move],)
    return out
