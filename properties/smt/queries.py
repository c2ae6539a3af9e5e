"""The five queries over the bounded encoding, each cross-validated on the executable model.

Every query searches by iterative deepening: trace length 2, 3, ... up to ``depth`` (events,
the opening RUN_STARTED included), one incremental solver call per length, so the first length
at which Z3 answers *sat* is a shortest one. A sat answer is then made canonical (each event
field lexicographically minimised, field by field, by further solver calls), decoded into a real
AG-UI trace, replayed in lock step on the executable model (:func:`~properties.smt.replay.
lockstep`) and the query's own predicate is evaluated on the replay; any difference raises
:class:`~properties.smt.replay.CrossCheckError`. An *unsat* answer means: no trace of the
fragment up to ``depth`` (over the :class:`~properties.smt.world.World`); the tests confirm unsat
answers at small depth by exhaustive enumeration on the executable model.

Queries (issue 5 section 2):

1. :func:`reachability`: a trace reaching a situation of :data:`~properties.smt.checks.SITUATIONS`.
2. :func:`vacuity`: for each rule of :data:`~properties.smt.checks.RULES`, a trace on which it
   decides something (producer rules: an event it forbids after a conformant prefix; consumer
   rules: an event its premise covers, on a conformant trace and on any trace).
3. :func:`consistency`: for each shape of :data:`~properties.smt.checks.SHAPES`, a conformant trace
   ending in an event of that shape.
4. :func:`distinguishing`: the shortest conformant trace (conformant under both readings) on which
   two readings' consumer steps differ.
5. :func:`bounded_proof`: no trace up to ``depth`` violates a property of
   :data:`~properties.smt.checks.PROOF_PROPERTIES`, with the time it took.

Results are :class:`Answer` values; ``Answer.to_json(timing=False)`` is byte-stable for equal
inputs (timings are the only varying members).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, Optional, Sequence

import z3

from model.readings import DRAFT, KNOB_BY_ID, KNOBS, Reading
from properties.smt.checks import (PROOF_BY_ID, PROOF_PROPERTIES, RULE_BY_ID, RULES, SHAPE_BY_ID,
                                   SHAPES, SITUATION_BY_ID, SITUATIONS, At, Check)
from properties.smt.encoding import FRAGMENT_KNOBS, OUTSIDE_KNOBS, Unrolling
from properties.smt.replay import CrossCheckError, StepView, decode, lockstep
from properties.smt.world import DEFAULT_WORLD, MS, AbstractEvent, World, realise_trace, wire_trace

__all__ = ["Answer", "Witness", "reachability", "vacuity", "consistency", "distinguishing",
           "bounded_proof", "knob_pairs", "require_fragment", "DIFFERENCE_KINDS",
           "reading_label", "pair_label", "DEFAULT_TIMEOUT"]

DEFAULT_TIMEOUT = 60.0
"""Seconds one query (one subject) may take before it answers ``unknown``."""

DIFFERENCE_KINDS = ("presence", "type", "owner", "content", "position", "warnings", "fatal")
"""What two readings' steps can differ in: which ids are held and in which role, an activity's
type, a message's owner, its content version, the relative order of held messages, the warning
surfaced, the fatal outcome."""


@dataclass(frozen=True)
class Witness:
    """A trace Z3 found, replayed on the executable model.

    Attributes:
        world: the world it ranges over.
        events: the abstract events after RUN_STARTED.
    """

    world: World
    events: tuple[AbstractEvent, ...]

    @property
    def length(self) -> int:
        """Events in the trace, RUN_STARTED included."""
        return len(self.events) + 1

    @property
    def trace(self):
        """The real events (:mod:`model.events`), RUN_STARTED first."""
        return realise_trace(self.world, self.events)

    def to_json(self) -> dict:
        """``{"length", "events": [one line per event], "wire": [wire JSON objects]}``."""
        return {"length": self.length,
                "events": ["RUN_STARTED"] + [e.describe(self.world) for e in self.events],
                "wire": wire_trace(self.world, self.events)}


@dataclass
class Answer:
    """One query's answer about one subject.

    Attributes:
        query: ``reach``, ``vacuity``, ``consistency``, ``distinguish`` or ``prove``.
        subject: the situation, rule, shape, reading pair or property asked about.
        status: ``"sat"`` (a witness exists), ``"unsat"`` (none up to ``depth``) or
            ``"unknown"`` (the timeout struck at length ``searched + 1``).
        depth: the bound asked for (events, RUN_STARTED included).
        searched: the longest trace length fully decided.
        witness: the canonical shortest witness (sat only), replayed and checked.
        reading: the reading(s), as text.
        clauses: clause ids the subject is about.
        detail: query-specific members (JSON-ready).
        seconds: wall time (the only member that varies between equal runs).
    """

    query: str
    subject: str
    status: str
    depth: int
    searched: int
    witness: Optional[Witness] = None
    reading: str = "draft"
    clauses: tuple[str, ...] = ()
    detail: dict = field(default_factory=dict)
    seconds: float = 0.0

    @property
    def length(self) -> Optional[int]:
        """The witness's length in events (RUN_STARTED included), None without one."""
        return self.witness.length if self.witness else None

    def to_json(self, timing: bool = True) -> dict:
        """The answer as JSON (camelCase keys, ``detail`` members merged in); ``seconds`` only
        with ``timing`` (everything else is equal for equal inputs)."""
        out = {"query": self.query, "subject": self.subject, "status": self.status,
               "depth": self.depth, "searched": self.searched, "reading": self.reading,
               "clauses": list(self.clauses), "length": self.length,
               "witness": self.witness.to_json() if self.witness else None}
        out.update(self.detail)
        if timing:
            out["seconds"] = round(self.seconds, 3)
        return out


def reading_label(reading: Optional[Reading]) -> str:
    """``draft``, a preset name, ``Q11=move,...`` or ``any`` (symbolic)."""
    return "any" if reading is None else (reading.name or "draft")


def pair_label(a: Reading, b: Reading) -> str:
    """Two readings compared, each named in full: ``"Q2=continues vs Q2=parent"``, every knob
    on which either departs from draft given on both sides, in knob order (a draft option is
    named, never dropped: ``"Q2=parent,Q8=keep vs Q2=continues,Q8=keep"``, not ``"... vs
    Q8=keep"``)."""
    da, db = a.as_dict(), b.as_dict()
    named = [k.id for k in KNOBS if da[k.id] != k.draft or db[k.id] != k.draft]
    if not named:
        return "draft vs draft"
    return (",".join(f"{k}={da[k]}" for k in named) + " vs " +
            ",".join(f"{k}={db[k]}" for k in named))


def require_fragment(reading: Optional[Reading]) -> None:
    """Refuse a reading that departs from draft in a knob outside the fragment.

    The encoding never consults those knobs (:data:`~properties.smt.encoding.OUTSIDE_KNOBS`), so
    an answer under such a reading would silently be the answer under draft's option for them:
    wrong whenever the knob matters (it does, on traces outside the fragment). Every query calls
    this for each reading it is given; None (the knobs left to the solver) passes.

    Raises:
        ValueError: naming the first such knob, the encoding's reason, and what to use instead.
    """
    if reading is None:
        return
    for kid, option in reading.differences().items():
        if kid in OUTSIDE_KNOBS:
            raise ValueError(
                f"{kid} is outside the Z3 fragment ({kid}={option}; {OUTSIDE_KNOBS[kid]}); "
                f"use `activity-check explore` for it, or leave it at "
                f"{kid}={KNOB_BY_ID[kid].draft}")


# --- the search driver --------------------------------------------------------------------------

def _check(u: Unrolling, assumptions: list, deadline: float):
    left = deadline - time.monotonic()
    if left <= 0:
        return z3.unknown
    u.solver.set("timeout", max(1, int(left * 1000)))
    return u.solver.check(*assumptions)


def _canonical(u: Unrolling, assumptions: list, n: int, deadline: float) -> z3.ModelRef:
    """A model of ``assumptions`` whose events ``1..n`` are lexicographically least (field by
    field in :meth:`EventVars.fields` order), so that the witness does not depend on Z3's
    search. Past the deadline the current model is kept (still a valid witness)."""
    fixed = list(assumptions)
    model = u.solver.model()

    def least(var) -> int:
        """Fix ``var`` to the least value some model allows, given what is fixed so far."""
        nonlocal model
        current = model.eval(var, model_completion=True).as_long()
        for value in range(current):
            probe = u.indicator(var == value)
            if _check(u, fixed + [probe], deadline) == z3.sat:
                model = u.solver.model()
                fixed.append(probe)
                return value
        fixed.append(u.indicator(var == current))
        return current

    for _, var in u.symbolic():  # the readings first: as near draft (option 0) as possible
        least(var)
    for t in range(1, n + 1):
        e = u.events[t]
        kind = None
        for name, var in e.fields():
            if kind is not None and kind != MS and name[:3] in ("inc", "mty", "mow", "mco", "ran"):
                continue  # forced to zero outside MESSAGES_SNAPSHOT
            value = least(var)
            if name == "kind":
                kind = value
    if _check(u, fixed, deadline) == z3.sat:
        model = u.solver.model()
    return model


def _track(check: Check, views: list[StepView], upto: int):
    aux = None
    if check.track is not None:
        for v in views[:upto]:
            aux = check.track(aux, v)
    return aux


def _search(u: Unrolling, depth: int, goal: Callable[[int], z3.BoolRef],
            base: Callable[[int], z3.BoolRef], deadline: float):
    """Shortest ``n`` (events after RUN_STARTED) with ``base(n) and goal(n)`` satisfiable.

    Returns ``(status, searched, n, model)``: status ``sat``/``unsat``/``unknown``; searched the
    longest trace length decided without a witness."""
    for n in range(1, depth):
        while u.n < n:
            u.extend()
        here = z3.And(base(n), goal(n))
        a = u.indicator(here)
        r = _check(u, [a], deadline)
        if r == z3.sat:
            return "sat", n, n, _canonical(u, [a], n, deadline)
        if r != z3.unsat:
            return "unknown", n, None, None
        u.solver.add(z3.Not(here))  # proved: a valid lemma for the longer lengths
    return "unsat", depth, None, None


def _validate_depth(depth: int) -> None:
    if not isinstance(depth, int) or depth < 1:
        raise ValueError(f"depth must be a whole number of at least 1, got {depth!r}")


def _conformant(u: Unrolling) -> Callable[[int], z3.BoolRef]:
    return lambda n: u.conformant[n]


def _prefix_conformant(u: Unrolling) -> Callable[[int], z3.BoolRef]:
    return lambda n: u.conformant[n - 1]


def _anything(u: Unrolling) -> Callable[[int], z3.BoolRef]:
    return lambda n: z3.BoolVal(True)


def _confirm(u: Unrolling, model, n: int, check: Check, mode: str, what: str) -> list[StepView]:
    """Replay a witness in lock step and confirm, on the executable model, that ``check`` holds
    at its last event and the trace has the conformance ``mode`` asks for."""
    views = lockstep(u, model, n)
    trace = realise_trace(u.world, decode(u, model, n))
    last = views[n - 1]
    if not check.holds(last, _track(check, views, n - 1)):
        raise CrossCheckError(f"Z3 says {what} {check.id} holds at the last event; the "
                              "executable model says it does not", trace, n)
    if mode == "conformant" and not last.conformant:
        raise CrossCheckError(f"Z3's witness for {check.id} breaks {sorted(last.broken)}", trace, n)
    if mode == "prefix" and not last.conformant_before:
        raise CrossCheckError(f"Z3's witness prefix for {check.id} is not conformant", trace, n)
    return views


def _run_check(u: Unrolling, check: Check, depth: int, mode: str, timeout: float, what: str):
    started = time.monotonic()
    deadline = started + timeout
    base = {"conformant": _conformant, "prefix": _prefix_conformant, "any": _anything}[mode](u)
    status, searched, n, model = _search(u, depth, lambda k: check.z3_at(At(u, k)), base, deadline)
    witness = None
    if status == "sat":
        _confirm(u, model, n, check, mode, what)
        witness = Witness(u.world, decode(u, model, n))
    return status, searched, witness, model, time.monotonic() - started


def _symbolic_knobs(u: Unrolling, model) -> dict:
    return {"knobs": u.knobs["a"].value(model)} if u.knobs["a"].reading is None else {}


# --- 1. reachability ----------------------------------------------------------------------------

def reachability(situation: str, depth: int = 8, reading: Optional[Reading] = DRAFT,
                 world: World = DEFAULT_WORLD, conformant: bool = True,
                 timeout: float = DEFAULT_TIMEOUT) -> Answer:
    """Is there a trace of length <= ``depth`` reaching ``situation``?

    Args:
        situation: an id of :data:`~properties.smt.checks.SITUATIONS`.
        depth: longest trace (events, RUN_STARTED included), >= 1.
        reading: the consumer's reading (the producer's obligations read its Q2 and
            Q4-opener); None: any reading (the knobs are left to Z3; the answer names the one
            it found).
        world: the finite world.
        conformant: only traces on which the producer breaks no obligation.
        timeout: seconds before answering ``unknown``.

    Returns:
        An :class:`Answer` (subject = the situation id).

    Raises:
        KeyError: unknown situation; ValueError: depth < 1, or the reading departs from draft
        in a knob outside the fragment (:func:`require_fragment`);
        CrossCheckError: the executable model disagrees with Z3's witness.
    """
    check = SITUATION_BY_ID[situation]
    _validate_depth(depth)
    require_fragment(reading)
    u = Unrolling(world, {"a": reading}, "a")
    status, searched, witness, model, secs = _run_check(
        u, check, depth, "conformant" if conformant else "any", timeout, "situation")
    detail = {"statement": check.statement, "traces": "conformant" if conformant else "any"}
    if witness is not None:
        detail.update(_symbolic_knobs(u, model))
    return Answer("reach", situation, status, depth, searched, witness, reading_label(reading),
                  check.clauses, detail, secs)


# --- 2. vacuity ---------------------------------------------------------------------------------

def vacuity(depth: int = 8, reading: Reading = DRAFT, world: World = DEFAULT_WORLD,
            rules: Optional[Sequence[str]] = None, timeout: float = DEFAULT_TIMEOUT
            ) -> list[Answer]:
    """For each rule, is there a trace of length <= ``depth`` on which it decides something?

    Producer rules (MUST / MUST NOT of :data:`~properties.smt.encoding.PRODUCER_RULES`): an event
    the rule forbids, after a conformant prefix. Consumer rules: an event the rule's premise
    covers, asked on conformant traces (``status``) and on any trace of the fragment
    (``detail["anyTrace"]``): a rule that fires only after a producer violation is error
    handling; one that fires on no trace at all is vacuous in the fragment.

    Returns:
        One :class:`Answer` per rule (``status`` unsat = never fires on conformant traces).

    Raises:
        KeyError: an unknown rule id; ValueError: depth < 1 or a reading outside the fragment
            (:func:`require_fragment`); CrossCheckError.
    """
    _validate_depth(depth)
    require_fragment(reading)
    chosen = [RULE_BY_ID[r] for r in rules] if rules else list(RULES)
    u = Unrolling(world, {"a": reading}, "a")
    out = []
    for check in chosen:
        mode = "prefix" if check.actor == "producer" else "conformant"
        status, searched, witness, _, secs = _run_check(u, check, depth, mode, timeout, "rule")
        detail = {"statement": check.statement, "keyword": check.keyword, "actor": check.actor,
                  "traces": "conformant prefix" if mode == "prefix" else "conformant"}
        if check.note:
            detail["note"] = check.note
        if check.actor == "consumer":
            s2, _, w2, _, secs2 = _run_check(u, check, depth, "any", timeout, "rule")
            secs += secs2
            detail["anyTrace"] = {"status": s2, "length": w2.length if w2 else None,
                                  "witness": w2.to_json() if w2 else None}
        out.append(Answer("vacuity", check.id, status, depth, searched, witness,
                          reading_label(reading), check.clauses, detail, secs))
    return out


# --- 3. consistency -----------------------------------------------------------------------------

def consistency(depth: int = 8, reading: Reading = DRAFT, world: World = DEFAULT_WORLD,
                shapes: Optional[Sequence[str]] = None, timeout: float = DEFAULT_TIMEOUT
                ) -> list[Answer]:
    """For each event shape, do the producer obligations together admit a conformant trace of
    length <= ``depth`` that ends in an event of that shape?

    Returns:
        One :class:`Answer` per shape (unsat: the obligations exclude the shape up to depth).

    Raises:
        KeyError: an unknown shape id; ValueError: depth < 1 or a reading outside the fragment
            (:func:`require_fragment`); CrossCheckError.
    """
    _validate_depth(depth)
    require_fragment(reading)
    chosen = [SHAPE_BY_ID[s] for s in shapes] if shapes else list(SHAPES)
    u = Unrolling(world, {"a": reading}, "a")
    out = []
    for check in chosen:
        status, searched, witness, _, secs = _run_check(u, check, depth, "conformant", timeout,
                                                        "shape")
        detail = {"statement": check.statement}
        if check.note:
            detail["note"] = check.note
        out.append(Answer("consistency", check.id, status, depth, searched, witness,
                          reading_label(reading), check.clauses, detail, secs))
    return out


# --- 4. distinguishing --------------------------------------------------------------------------

def _differences(u: Unrolling, n: int) -> dict[str, z3.BoolRef]:
    a, b = u.steps["a"][n], u.steps["b"][n]
    A, B = a.after, b.after
    slots = range(len(u.world.ids))
    both = [z3.And(A["ex"][j], B["ex"][j]) for j in slots]
    return {
        "presence": z3.Or([z3.Or(A["ex"][j] != B["ex"][j], z3.And(both[j], A["act"][j] !=
                                                                   B["act"][j])) for j in slots]),
        "type": z3.Or([z3.And(both[j], A["act"][j], B["act"][j], A["typ"][j] != B["typ"][j])
                       for j in slots]),
        "owner": z3.Or([z3.And(both[j], A["own"][j] != B["own"][j]) for j in slots]),
        "content": z3.Or([z3.And(both[j], A["cont"][j] != B["cont"][j]) for j in slots]),
        "position": z3.Or([z3.And(both[j], both[x], (A["pos"][j] < A["pos"][x]) !=
                                  (B["pos"][j] < B["pos"][x]))
                           for j in slots for x in slots if j < x] or [z3.BoolVal(False)]),
        "warnings": a.warn != b.warn,
        "fatal": a.fatal != b.fatal,
    }


def _concrete_differences(view: StepView) -> set[str]:
    """The same difference kinds, computed from the two concrete transitions of a replay."""
    ta, tb = view.copies["a"], view.copies["b"]
    A = {m.id: m for m in ta.after.messages}
    B = {m.id: m for m in tb.after.messages}
    out = set()
    if {(i, m.role) for i, m in A.items()} != {(i, m.role) for i, m in B.items()}:
        out.add("presence")
    common = [i for i in A if i in B]
    if any(A[i].is_activity and B[i].is_activity and A[i].activity_type != B[i].activity_type
           for i in common):
        out.add("type")
    if any(A[i].owner != B[i].owner for i in common):
        out.add("owner")
    if any(A[i].content != B[i].content for i in common):
        out.add("content")
    order_a = [m.id for m in ta.after.messages if m.id in B]
    order_b = [m.id for m in tb.after.messages if m.id in A]
    if order_a != order_b:
        out.add("position")
    if [(w.code, w.message_id, w.clause) for w in ta.warnings] != \
            [(w.code, w.message_id, w.clause) for w in tb.warnings]:
        out.add("warnings")
    if (ta.fatal and (ta.fatal.code, ta.fatal.clause)) != (tb.fatal and (tb.fatal.code,
                                                                         tb.fatal.clause)):
        out.add("fatal")
    return out


def distinguishing(reading_a: Reading, reading_b: Reading, depth: int = 8,
                   world: World = DEFAULT_WORLD, producer="any", conformant: bool = True,
                   timeout: float = DEFAULT_TIMEOUT) -> Answer:
    """The shortest trace of length <= ``depth`` on which two readings' consumer steps differ.

    The answer's subject names both readings in full (:func:`pair_label`). Both consumers
    step the same trace from the same start. The trace is conformant for a
    producer reading: ``producer="any"`` (default, as
    :func:`properties.search.system_pair.shortest_distinguishing` does): some reading of the producer's
    knobs (Q2, Q4-opener) under which every event conforms, since producer and consumers may
    each read the draft their own way; ``"both"``: conformant under both consumer readings; a
    :class:`Reading`: under that one. ``conformant=False`` drops conformance altogether. Since
    the search is by increasing length, the two agree on every step before the last, so
    reading b is encoded as a shadow step from reading a's state (see :class:`Unrolling`); the
    replay confirms the agreement before the last step.

    Returns:
        An :class:`Answer` whose ``detail["differences"]`` lists the kinds of
        :data:`DIFFERENCE_KINDS` that differ at the last step (the same set computed from the
        executable model), and ``detail["outcomes"]`` the two readings' last steps.

    Raises:
        ValueError: depth < 1, the two readings are the same, or a reading departs from draft
            in a knob outside the fragment (:func:`require_fragment`); CrossCheckError: the
            executable model disagrees (also when the replayed readings agree on the trace, or
            differ earlier or in other ways).
    """
    _validate_depth(depth)
    require_fragment(reading_a)
    require_fragment(reading_b)
    if reading_a == reading_b:
        raise ValueError(f"the two readings are the same ({reading_label(reading_a)})")
    if isinstance(producer, Reading):
        require_fragment(producer)
    started = time.monotonic()
    deadline = started + timeout
    if producer == "both":
        preadings, plabel = [reading_a, reading_b], "both"
    elif producer == "any" or producer is None:
        preadings, plabel = None, "any"
    elif isinstance(producer, Reading):
        preadings, plabel = producer, reading_label(producer)
    else:
        raise ValueError(f"producer must be 'any', 'both' or a Reading, got {producer!r}")
    u = Unrolling(world, {"a": reading_a}, preadings, shadows={"b": reading_b})
    base = _conformant(u) if conformant else _anything(u)
    status, searched, n, model = _search(u, depth, lambda k: z3.Or(list(
        _differences(u, k).values())), base, deadline)
    witness, detail = None, {"traces": "conformant" if conformant else "any",
                             "producer": plabel if conformant else None}
    label = pair_label(reading_a, reading_b)
    if status == "sat":
        kinds = _differences(u, n)
        found = {k for k, f in kinds.items() if z3.is_true(model.eval(f, True))}
        views = lockstep(u, model, n)
        trace = realise_trace(world, decode(u, model, n))
        concrete = _concrete_differences(views[-1])
        if concrete != found:
            raise CrossCheckError(f"difference kinds: Z3 {sorted(found)}, executable model "
                                  f"{sorted(concrete)}", trace, n)
        earlier = [v.index for v in views[:-1] if _concrete_differences(v)]
        if earlier:
            raise CrossCheckError(f"the readings already differ at event {earlier[0]}", trace, n)
        if conformant and not views[-1].conformant:
            raise CrossCheckError(f"witness breaks {sorted(views[-1].broken)}", trace, n)
        witness = Witness(world, decode(u, model, n))
        detail["differences"] = [k for k in DIFFERENCE_KINDS if k in found]
        if conformant and preadings is None:
            detail["producerReading"] = u.pknobs[0].value(model)
        detail["outcomes"] = {"a": _outcome(views[-1].copies["a"]),
                              "b": _outcome(views[-1].copies["b"])}
    return Answer("distinguish", label, status, depth, searched, witness, label,
                  _pair_clauses(reading_a, reading_b), detail, time.monotonic() - started)


def _outcome(tr) -> dict:
    return {"messages": [m.to_wire() for m in tr.after.messages],
            "warnings": [w.code for w in tr.warnings],
            "fatal": tr.fatal.code if tr.fatal else None}


def _pair_clauses(a: Reading, b: Reading) -> tuple[str, ...]:
    out: list[str] = []
    for kid in a.differences(b):
        for c in KNOB_BY_ID[kid].clauses:
            if c not in out:
                out.append(c)
    return tuple(out)


def knob_pairs(reading: Reading = DRAFT) -> list[tuple[Reading, Reading]]:
    """For each knob in the fragment and each of its other options, the pair (``reading``,
    ``reading`` with that knob changed), in knob order."""
    out = []
    for kid in FRAGMENT_KNOBS:
        knob = KNOB_BY_ID[kid]
        mine = getattr(reading, knob.attr)
        for option in knob.option_names:
            if option != mine:
                out.append((reading, reading.with_(**{kid: option})))
    return out


# --- 5. bounded proof ---------------------------------------------------------------------------

def bounded_proof(property_id: str, depth: int = 8, reading: Optional[Reading] = DRAFT,
                  world: World = DEFAULT_WORLD, conformant: bool = False,
                  timeout: float = DEFAULT_TIMEOUT) -> Answer:
    """Does no trace of length <= ``depth`` violate the property? (``status`` unsat = proved to
    that depth; sat = a counterexample, the catalogue's own check confirming it on the replay.)

    Args:
        property_id: an id of :data:`~properties.smt.checks.PROOF_PROPERTIES`.
        reading: the consumer's reading; None proves it for every reading at once (the knobs
            are left to Z3).
        conformant: only conformant traces (default: any trace of the fragment).

    Raises:
        KeyError: unknown property; ValueError: depth < 1 or a reading outside the fragment
            (:func:`require_fragment`); CrossCheckError.
    """
    check = PROOF_BY_ID[property_id]
    _validate_depth(depth)
    require_fragment(reading)
    u = Unrolling(world, {"a": reading}, "a")
    status, searched, witness, model, secs = _run_check(
        u, check, depth, "conformant" if conformant else "any", timeout, "a violation of")
    detail = {"statement": check.statement, "traces": "conformant" if conformant else "any",
              "proved": status == "unsat"}
    if witness is not None:
        detail.update(_symbolic_knobs(u, model))
    return Answer("prove", property_id, status, depth, searched, witness, reading_label(reading),
                  check.clauses, detail, secs)


SUBJECTS = {
    "reach": tuple(c.id for c in SITUATIONS),
    "vacuity": tuple(c.id for c in RULES),
    "consistency": tuple(c.id for c in SHAPES),
    "prove": tuple(c.id for c in PROOF_PROPERTIES),
}
"""The subjects each query can be asked about (distinguishing takes reading pairs)."""
