"""What is compared and how a peer's answer is classified: the comparable parts of an answer
(:class:`Observed`), the classification against every verdict class of the model (:func:`classify`),
the option each knob behaves as (:func:`knob_table`) and the joint inference of the peer's reading
(:func:`joint_readings`)."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Optional, Sequence

from model.codes import CODES
from model.consumer import initial_state
from model.events import Event
from model.json_values import freeze
from model.readings import DRAFT, KNOB_BY_ID, KNOBS, describe_assignment
from model.verdict import reading_leaves
from counterexamples.peers.adapter import Reply
from counterexamples.peers.traces import PeerTrace



# --- what is compared ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Observed:
    """Which parts of a verdict an answer makes comparable.

    ``messages`` and ``fatal`` always; ``fatal_at`` when the peer places its failure at an event
    (``fatal.atEvent``); ``warnings`` when the answer lists them (in activity-check's codes; null
    means not observable); ``run_input`` and ``state`` when the answer gives them (not null);
    ``fatal_code`` and ``fatal_clause`` when its failure names its cause (a ``code`` that is one
    of activity-check's codes, :data:`model.codes.CODES`; a string ``clause`` id): then the
    cause is compared too, so a peer that fails at the right event for another reason
    diverges."""

    fatal_at: bool
    warnings: bool
    run_input: bool
    state: bool
    fatal_code: bool = False
    fatal_clause: bool = False

    FIELDS = ("fatal_at", "warnings", "run_input", "state", "fatal_code", "fatal_clause")

    def names(self) -> list[str]:
        """The compared parts, as the report lists them."""
        cause = [n for n, on in (("atEvent", self.fatal_at), ("code", self.fatal_code),
                                 ("clause", self.fatal_clause)) if on]
        out = ["messages", "fatal" + (f" (with {', '.join(cause)})" if cause else " (yes/no)")]
        out += [n for n, on in (("warnings (code, messageId, atEvent)", self.warnings),
                                ("runInput", self.run_input), ("state", self.state)) if on]
        return out


def observed_of(response: dict) -> Observed:
    """The :class:`Observed` parts of one answer."""
    fatal = response.get("fatal")
    named = isinstance(fatal, dict)
    return Observed(fatal_at=named and isinstance(fatal.get("atEvent"), int),
                    warnings=isinstance(response.get("warnings"), list),
                    run_input=isinstance(response.get("runInput"), list),
                    state=response.get("state") is not None,
                    fatal_code=named and fatal.get("code") in CODES,
                    fatal_clause=named and isinstance(fatal.get("clause"), str))




def _fatal_view(fatal: Any, observed: "Observed") -> Any:
    """A verdict's ``fatal`` as compared: None when the run did not fail; else the members the
    answer gives of ``atEvent``, ``code`` and ``clause`` (``observed``), else True. Any object
    is a failure (the protocol's "otherwise an object": ``{}`` says the run failed, not where),
    as is ``true``."""
    if fatal is None or fatal is False:
        return None
    named = fatal if isinstance(fatal, dict) else {}
    view = {key: named.get(key) for key, on in (("atEvent", observed.fatal_at),
                                                ("code", observed.fatal_code),
                                                ("clause", observed.fatal_clause)) if on}
    return view or True


def view_of(verdict: dict, observed: Observed) -> dict:
    """The comparable view of a verdict (the model's :meth:`~model.verdict.Verdict.to_json`, or a
    peer's answer): messages, fatal, and the optional parts ``observed`` names. Values are kept
    as canonical JSON text (:func:`model.json_values.freeze`: member order and ``1`` vs ``1.0``
    do not matter)."""
    view = {"messages": freeze(verdict.get("messages", [])),
            "fatal": freeze(_fatal_view(verdict.get("fatal"), observed))}
    if observed.warnings:
        view["warnings"] = freeze([{"code": w.get("code"), "messageId": w.get("messageId"),
                                    "atEvent": w.get("atEvent")}
                                   for w in verdict.get("warnings") or []])
    if observed.run_input:
        view["runInput"] = freeze(verdict.get("runInput") or [])
    if observed.state:
        view["state"] = freeze(verdict.get("state"))
    return view


# --- classification -----------------------------------------------------------------------------

@dataclass
class Classification:
    """How a peer's answer on one trace relates to the model.

    Attributes:
        kind: ``"draft"`` (the draft reading gives the peer's verdict), ``"reading"`` (another
            reading does; not draft), ``"divergence"`` (no reading does) or ``"error"`` (no usable
            answer; see ``error``).
        readings: for ``"draft"``/``"reading"``: every leaf assignment whose verdict the peer
            gives, as text (``"Q1=ignore"``; ``"(any reading)"``).
        matches: the matching leaf assignments (``{knob id: option}``).
        aspects: the parts where the peer differs from draft (see :func:`_aspects`); for a
            divergence, from the nearest reading (``nearest``).
        nearest: for ``"divergence"``: the leaf assignment whose verdict the peer's differs from
            in the fewest parts, as text (draft's when tied); ``nearest_assignment``: the same as
            ``{knob id: option}``.
        error: for ``"error"``: what went wrong.
        leaves: every ``(assignment, verdict)`` of the model on the trace.
        divergent: for ``"divergence"``: the parts of the verdict (``messages``, ``fatal``,
            ``warnings``, ``runInput``, ``state``, in that order) that no reading gives as the
            peer does, each a divergence of its own; ``["combined"]`` (:data:`COMBINED`) when
            every part alone is some reading's and only their combination is none's.
    """

    kind: str
    readings: list[str] = field(default_factory=list)
    matches: list[dict] = field(default_factory=list)
    aspects: list[str] = field(default_factory=list)
    nearest: str = ""
    nearest_assignment: dict = field(default_factory=dict)
    error: str = ""
    leaves: list = field(default_factory=list)
    divergent: list[str] = field(default_factory=list)


COMBINED = "combined"
"""The part named for a divergence that no single part of the verdict shows (each part is some
reading's; their combination is none's)."""

PARTS = ("messages", "fatal", "warnings", "runInput", "state")
"""The parts of a verdict a divergence is split by, in report order."""


def _part(view: dict, part: Optional[str]) -> dict:
    """``view`` restricted to one part (None: the whole view)."""
    if part is None:
        return view
    return {part: view[part]} if part in view else {}


def classify(events: Sequence[Event], reply: Reply, state: Any = None,
             context: Optional[Sequence[dict]] = None,
             part: Optional[str] = None) -> Classification:
    """Classify one answer against every reading of the model on ``events`` (from a consumer
    holding agent state ``state``).

    Args:
        context: for a divergence, look for the nearest reading among the leaves consistent with
            one of these assignments first (the readings the peer agreed with on a shorter
            prefix), then among all.
        part: compare only this part of the verdict (one of :data:`PARTS`; None: all of it), as
            the search does for a divergence in that part alone.

    Returns:
        A :class:`Classification`; kind ``"error"`` when ``reply`` is not ``"ok"``.
    """
    if not reply.ok:
        return Classification("error", error=f"{reply.kind}: {reply.error}")
    start = initial_state(state)
    try:
        leaves = reading_leaves(events, start)
    except RuntimeError as exc:  # the guard against runaway forking
        return Classification("error", error=f"model: {exc}")
    observed = observed_of(reply.response)
    whole = view_of(reply.response, observed)
    full = [view_of(v.to_json(detail=False), observed) for _, v in leaves]
    peer = _part(whole, part)
    views = [_part(v, part) for v in full]
    matches = [a for (a, _), view in zip(leaves, views) if view == peer]
    aspects = _aspects(views[0], peer)
    if not matches:
        # The nearest reading: the leaf the peer differs from in the fewest parts of the whole
        # verdict (draft first), preferring leaves consistent with the context.
        pool = [i for i, (a, _) in enumerate(leaves)
                if context and any(_consistent(a, c) for c in context)] or range(len(leaves))
        best = min(pool, key=lambda i: (len(_aspects(views[i], peer)),
                                        len(_aspects(full[i], whole)), i))
        divergent = [p for p in PARTS if p in peer and all(v.get(p) != peer[p] for v in views)]
        return Classification("divergence", aspects=_aspects(views[best], peer),
                              nearest=describe_assignment(leaves[best][0]),
                              nearest_assignment=dict(leaves[best][0]), leaves=leaves,
                              divergent=divergent or [COMBINED])
    draft = DRAFT.as_dict()
    kind = "draft" if any(all(draft[k] == v for k, v in a.items()) for a in matches) else "reading"
    return Classification(kind, [describe_assignment(a) for a in matches], matches, aspects,
                          leaves=leaves)


def _consistent(a: dict, b: dict) -> bool:
    """True when two partial assignments agree on every knob both fix."""
    return all(b[k] == v for k, v in a.items() if k in b)


def _aspects(model: dict, peer: dict) -> list[str]:
    """Where two views differ: ``fatal``, ``warnings``, ``runInput``, ``state``, and for messages
    ``messages.missing`` / ``messages.extra`` / ``messages.order`` or
    ``messages.<member>`` (``content``, ``activityType``, ``metadata``, ``subagentRunId``,
    ``role``...)."""
    out = [k for k in ("fatal", "warnings", "runInput", "state")
           if k in model and model.get(k) != peer.get(k)]
    if "messages" in model and model["messages"] != peer.get("messages"):
        mine = json.loads(model["messages"])
        theirs = json.loads(peer["messages"])
        a = {m.get("id"): m for m in mine}
        b = {m.get("id"): m for m in theirs}
        parts = []
        if a.keys() - b.keys():
            parts.append("messages.missing")
        if b.keys() - a.keys():
            parts.append("messages.extra")
        common = [i for i in a if i in b]
        if [i for i in (m.get("id") for m in theirs) if i in a] != common:
            parts.append("messages.order")
        members = set()
        for i in common:
            for key in set(a[i]) | set(b[i]):
                if freeze(a[i].get(key)) != freeze(b[i].get(key)):
                    members.add(key)
        parts.extend(f"messages.{k}" for k in sorted(members))
        out = (parts or ["messages"]) + out
    return out


@dataclass
class TraceResult:
    """One trace's outcome: the trace, the reply and its classification, and the id of the
    divergence finding it led to (if any; ``findings``: every one, when its parts diverge
    separately)."""

    trace: PeerTrace
    reply: Reply
    classification: Classification
    finding: Optional[str] = None
    findings: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        c = self.classification
        out: dict = {"id": self.trace.id, "class": c.kind}
        if c.kind in ("draft", "reading"):
            out["readings"] = c.readings
        if c.kind == "reading":  # a peer matching only through a deviation is not conformant
            from model.readings import basis_of
            basis = basis_of(c.matches)
            if basis.startswith("deviation"):
                out["deviation"] = basis[len("deviation: "):]
            elif basis.startswith("outside the draft"):  # rests on the model's own question
                out["outsideDraft"] = basis[len("outside the draft: "):]
        if c.kind == "error":
            out["error"] = c.error
        elif c.kind == "divergence":
            out["nearest"] = c.nearest
            out["differsFromNearest"] = c.aspects
        else:
            out["differsFromDraft"] = c.aspects
        if self.finding:
            out["finding"] = self.finding
        if len(self.findings) > 1:  # one per part of the verdict that diverges
            out["findings"] = list(self.findings)
        return out



# --- per-knob behaviour -------------------------------------------------------------------------

@dataclass
class KnobBehaviour:
    """What the traces say about one knob.

    Attributes:
        knob: the knob id.
        status: ``"determined"`` (one option fits every separating trace), ``"undetermined"``
            (several options fit every separating trace), ``"inconsistent"`` (no single option fits
            them all: the peer is not any one option of this knob) or ``"no-evidence"`` (no
            trace separates the options on which the peer agrees with some reading).
        options: the options that fit every separating trace.
        evidence: ``{trace id: [options that fit that trace]}`` for the separating traces.
    """

    knob: str
    status: str
    options: list[str]
    evidence: dict[str, list[str]]

    @property
    def behaves_as(self) -> Optional[str]:
        """The option, when determined."""
        return self.options[0] if self.status == "determined" else None


def knob_table(results: Sequence["TraceResult"],
               joint: Optional["JointReadings"] = None) -> list[KnobBehaviour]:
    """For each knob, the options the peer behaves as, inferred jointly
    (:func:`joint_readings`): an option is the peer's when some reading consistent with every
    trace the peer answered has it, so that a knob no single trace separates is still
    determined when the other traces rule out the readings that would explain it otherwise.

    ``evidence`` lists the traces that separate the knob alone: the readings the peer agrees
    with on the trace do not cover every option of it (an option fits the trace when some
    matching leaf fixes the knob to it; a leaf that leaves the knob open fits every option);
    when none does, the traces after which the joint inference narrowed the knob's options
    (with the options then left). A knob no single option fits on every separating trace is
    ``inconsistent``; one with all its options left and no such trace ``no-evidence``.
    Divergent traces and errors say nothing. ``joint``: :func:`joint_readings` of the results,
    when already computed."""
    joint = joint if joint is not None else joint_readings(evidence_of(results))
    table = []
    for knob in KNOBS:
        every = list(knob.option_names)
        evidence: dict[str, list[str]] = {}
        for r in results:
            c = r.classification
            if c.kind not in ("draft", "reading"):
                continue
            fit: set[str] = set()
            for a in c.matches:
                fit.update([a[knob.id]] if knob.id in a else every)
            if fit and len(fit) < len(every):
                evidence[r.trace.id] = [o for o in every if o in fit]
        alone = [o for o in every if all(o in fit for fit in evidence.values())]
        options = joint.options(knob.id)
        if evidence and not alone:
            table.append(KnobBehaviour(knob.id, "inconsistent", [], evidence))
            continue
        if not evidence:
            evidence = dict(joint.narrowed.get(knob.id, {}))
        if len(options) == len(every) and not evidence:
            table.append(KnobBehaviour(knob.id, "no-evidence", every, {}))
            continue
        status = "determined" if len(options) == 1 else "undetermined"
        table.append(KnobBehaviour(knob.id, status, options, evidence))
    return table


# --- joint inference of the peer's reading ------------------------------------------------------

@dataclass
class JointReadings:
    """The readings consistent with every trace a peer answered (:func:`joint_readings`).

    Attributes:
        assignments: partial assignments ``{knob id: option}``, most general first, none
            implied by another: a reading is consistent with the traces taken exactly when it
            agrees with one of them on every knob that one fixes (``[{}]``: every reading).
        taken: how many traces constrained the inference (the others agreed with every reading
            or were set aside).
        conflicts: ids of the traces set aside, in order: no reading consistent with the
            traces taken before gives the peer's verdict on them (the peer is not one reading
            of the model there; the knob table shows the knob as ``inconsistent`` when a single
            knob is at fault), or the assignments would have outgrown ``cap``.
        narrowed: ``{knob id: {trace id: options left}}``: the traces after which a knob's
            options narrowed, and what was left.
    """

    assignments: list[dict] = field(default_factory=lambda: [{}])
    taken: int = 0
    conflicts: list[str] = field(default_factory=list)
    narrowed: dict[str, dict[str, list[str]]] = field(default_factory=dict)

    def options(self, knob_id: str) -> list[str]:
        """The options of ``knob_id`` some consistent reading has, in the knob's order."""
        every = KNOB_BY_ID[knob_id].option_names
        found = set()
        for a in self.assignments:
            if knob_id not in a:
                return list(every)
            found.add(a[knob_id])
        return [o for o in every if o in found]

    def consistent(self, assignment: dict) -> bool:
        """True when the (partial) ``assignment`` agrees with some consistent reading."""
        return any(_consistent(a, assignment) for a in self.assignments)

    def to_json(self) -> dict:
        """``{"assignments": [{knob: option}], "taken", "conflicts", "narrowed"}``."""
        return {"assignments": [dict(a) for a in self.assignments], "taken": self.taken,
                "conflicts": list(self.conflicts), "narrowed": self.narrowed}


JOINT_CAP = 4096
"""The most partial assignments :func:`joint_readings` keeps; a trace that would make more is
set aside (listed in ``conflicts``)."""

_KNOB_ORDER = {k.id: i for i, k in enumerate(KNOBS)}


def evidence_of(results: Sequence["TraceResult"]) -> list[tuple[str, list[dict]]]:
    """``[(trace id, matching leaf assignments)]`` of the traces on which the peer agrees with
    some reading (classes ``draft`` and ``reading``), in order: the input of
    :func:`joint_readings`."""
    return [(r.trace.id, r.classification.matches) for r in results
            if r.classification.kind in ("draft", "reading")]


def _key(assignment: frozenset) -> tuple:
    return len(assignment), sorted((_KNOB_ORDER[k], o) for k, o in assignment)


def _simplify(assignments: set) -> list[frozenset]:
    """The same set of readings with as few, as general assignments as this finds: assignments
    that differ only in one knob and together cover all its options become one without that
    knob (repeated), and an assignment implied by a more general one is dropped. Sorted (most
    general first, then in knob order), so that the result does not depend on hashing."""
    current = set(assignments)
    while True:
        merged = set()
        for a in current:
            for knob, option in a:
                rest = a - {(knob, option)}
                every = KNOB_BY_ID[knob].option_names
                if all(rest | {(knob, o)} in current for o in every):
                    merged.add(rest)
        if not merged - current:
            break
        current |= merged
    kept: list[frozenset] = []
    for a in sorted(current, key=_key):
        if not any(k <= a for k in kept):
            kept.append(a)
    return kept


def joint_readings(evidence: Sequence[tuple[str, Sequence[dict]]],
                   cap: int = JOINT_CAP) -> JointReadings:
    """The readings consistent with every trace of ``evidence`` jointly.

    Args:
        evidence: ``[(trace id, assignments)]`` (:func:`evidence_of`): for each trace the
            partial assignments ``{knob id: option}`` whose verdict the peer gave there (any
            reading extending one of them gives it). Taken in order.
        cap: the most assignments kept (:data:`JOINT_CAP`).

    Returns:
        A :class:`JointReadings`: the intersection, over the traces, of the readings each
        allows, as partial assignments. A trace that would leave no reading (or more than
        ``cap`` assignments) is set aside and listed in ``conflicts``; the result is then the
        readings consistent with every other trace. Deterministic: the same evidence in the
        same order gives the same result, whatever the hash seed.
    """
    out = JointReadings()
    current: list[frozenset] = [frozenset()]
    options = {k.id: list(k.option_names) for k in KNOBS}
    for trace_id, matches in evidence:
        allowed = _simplify({frozenset(m.items()) for m in matches})
        if not allowed or not allowed[0]:
            continue  # every reading (or a trace that says nothing)
        if all(any(m <= a for m in allowed) for a in current):
            out.taken += 1  # already implied by the traces before
            continue
        new = set()
        for a in current:
            fixed = dict(a)
            for m in allowed:
                if all(fixed.get(k, o) == o for k, o in m):
                    new.add(a | m)
        merged = _simplify(new) if new else []
        if not merged or len(merged) > cap:
            out.conflicts.append(trace_id)
            continue
        current = merged
        out.taken += 1
        out.assignments = [dict(sorted(a, key=lambda kv: _KNOB_ORDER[kv[0]])) for a in current]
        for knob_id, before in options.items():
            now = out.options(knob_id)
            if now != before:
                out.narrowed.setdefault(knob_id, {})[trace_id] = now
                options[knob_id] = now
    return out
