"""What a proposed resolution of the open questions does (issue 41), computed from the model and
the engines: the library under ``activity-check resolve``.

A *proposal* (:class:`Proposal`) pins some knobs of :data:`model.readings.KNOBS` to one option
each (consumer or producer side, X1 included) and may carry, per question, a proposed wording
with the page and section it would change. Its reading is ``draft`` with the pins, each pin's
value one option of its knob (read in any case, as :func:`model.readings.parse_reading` reads
options; never re-parsed as a reading text). :func:`resolve` reports:

* ``questions``: every question Q1..Q25 of ``spec/notes.md`` part (b) and X1, each
  ``decided`` (the proposal pins every knob of it), ``closed`` (no conformant trace separates
  the options of its knobs any more once the pins hold, to the stated bound, with the engine:
  ``BFS``, one exhaustive sweep under the proposal's reading over the exploration's vocabulary
  to ``depth`` recording every knob's first split, and for :data:`LIFECYCLE_KNOBS` pair
  searches over the lifecycle vocabulary to ``depth + DEEPER``; for a question without knob
  its bounded proof under every reading, Z3 or BFS) or ``open`` (its shortest separating
  conformant trace under the pins);
* ``conflicts``: every clause the pins contradict or make vacuous, each with its shortest
  witness: Z3's consistency shapes (a shape of event with a conformant trace under draft and
  none under the pins: the clauses that allow it are contradicted) and vacuity rules (a rule
  that fires on a conformant trace under draft and on none under the pins), over the fragment
  (:mod:`properties.smt.queries`); over the whole model, the step branches of
  :mod:`model.branches` taken on some conformant trace under draft and on none under the pins
  (breadth-first to ``depth``), every catalogue property that fails for the pinned consumer
  on a conformant trace (:func:`properties.search.explore.explore` under the reading), and
  the producer monitor under the pins against draft's (:func:`_producer_conflicts`): an event
  the pins forbid and draft allows (``contradicted``), or one the pins call conformant and a
  clause forbids under draft (``accepted``);
* ``limits``: what an engine cannot say of the proposal (a pin the Z3 fragment encodes at
  draft only, :func:`z3_limits`) and which of its answers were dropped or qualified for it;
* ``peers``: for every peer whose options were recorded (:func:`recorded_peers`, the knobs'
  ``peers`` data: ``model/data/peer_options.json``, every peer of the conformance matrix with
  its version), the pinned questions on which it takes
  another option, with the shortest conformant trace on which that option's verdict differs
  from the proposal's;
* ``traces``: for each pinned knob, the shortest conformant trace whose verdict the pin decides
  (against each other option, the shortest kept; for a producer-side knob, the shortest trace
  whose conformance the pin decides);
* ``wording``: the proposal's wording entries (the report layer adds the page's sentences).

Every witness is a complete stream: the producer's open entities are closed and the run
finished after the search's trace (:func:`close_stream`), kept only where the closed trace
still shows what the witness shows and the producer monitor calls it conformant under the pins
(otherwise the search's own trace, marked ``closed: false``).

Layering: ``model`` and ``properties`` only. Clauses: IDX-CONFORMANCE and every clause the
knobs name (Q-ids of the notes, part (b)).
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Mapping, Optional, Sequence

from model.events import (Event, RunFinished, RunStarted, StepFinished, SubagentFinished,
                          TextMessageEnd, ToolCallEnd)
from model.producer import (PRODUCER_KNOBS, PRODUCER_ONLY_KNOBS, Belief, adversarial_moves,
                            advance, check_trace, conformance_splits, moves)
from model.readings import (DRAFT, KNOB_BY_ID, KNOBS, RECOMMENDATIONS, Reading, ReadingError,
                            deviations_of, knob_named, knob_of, option_named)
from model.text import quoted
from model.verdict import evaluate

__all__ = ["Proposal", "ProposalError", "proposal_from_json", "proposal_from_pins",
           "recommended_proposal", "recorded_peers", "resolve", "compare", "close_stream",
           "z3_limits",
           "DEFAULT_DEPTH", "MAX_DEPTH", "RESOLVE_QUESTIONS", "STATUSES"]

DEFAULT_DEPTH = 4
"""The default bound of the breadth-first searches (events, RUN_STARTED included); Z3 asks one
event more (the missing-delta rules first fire at 5)."""

MAX_DEPTH = 5
"""The deepest ``depth`` accepted (a pair search at 5 that finds nothing takes some 25 s here)."""

STATUSES = ("decided", "closed", "open")
"""A question's status under a proposal (see the module docstring)."""

class ProposalError(ValueError):
    """A proposal that cannot be used: its message names the member at fault."""


@dataclass(frozen=True)
class Proposal:
    """A proposed resolution.

    Attributes:
        name: a short name (shown in reports and comparisons).
        pins: ``{knob id: option}`` in knob order.
        wording: ``{question or knob id: {"page", "section", "text"}}``.
        reading: draft with the pins.
        source: where it came from (a file name, ``--pin``, ``--recommended``).
    """

    name: str
    pins: Mapping[str, str]
    wording: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    reading: Reading = DRAFT
    source: str = ""

    def to_json(self) -> dict:
        """``{"name", "pins", "wording"}``: the proposal file's form."""
        return {"name": self.name, "pins": dict(self.pins),
                "wording": {k: dict(v) for k, v in self.wording.items()}}


def _reading_of(pins, where: str, per_pin: bool = False) -> tuple[dict, Reading]:
    """The pins (a mapping or ``(knob, option)`` pairs) in knob order (knob ids spelt as the
    knobs spell them, :func:`model.readings.knob_of` reading them in any case) and draft with
    them. Each pin's value must be one option of its knob (in any case, as
    :func:`model.readings.parse_reading` reads options); the reading is built from the pins
    themselves, never from a joined ``KNOB=OPTION,...`` text, so that a value holding a comma
    (``"parent,Q8=keep"``) is an unknown option, not a second pin.

    Raises:
        ProposalError: headed by ``where`` (followed by ``.KEY``, the key as given, for an
            unknown option when ``per_pin``): an unknown knob, a knob given twice, a value that
            is not one of its knob's options (quoted by :func:`model.text.quoted`)."""
    pairs = list(pins.items()) if isinstance(pins, Mapping) else list(pins)
    chosen = {}
    for key, value in pairs:
        try:
            knob = knob_named(key)
        except ReadingError as exc:
            raise ProposalError(f"{where}: {exc}") from None
        if knob.id in chosen:
            raise ProposalError(f"{where}: {knob.id} is given twice")
        try:
            chosen[knob.id] = option_named(knob, value)
        except ReadingError as exc:
            raise ProposalError(f"{where}.{key}: {exc}" if per_pin else f"{where}: {exc}") \
                from None
    ordered = {k.id: chosen[k.id] for k in KNOBS if k.id in chosen}
    return ordered, DRAFT.with_(**ordered)


def _wording_id(key) -> Optional[str]:
    """The question or knob id a proposal's ``wording`` member names, in any case as a pin's
    knob is read (``q2``, ``q4-OPENER``, ``x1``: :func:`model.readings.knob_of`, then the
    question ids of :data:`RESOLVE_QUESTIONS`), spelt as the model spells it; None for
    neither."""
    if not isinstance(key, str):
        return None
    knob = knob_of(key)
    if knob is not None:
        return knob.id
    return _QUESTION_BY_FOLDED_ID.get(key.lower()) if key.isascii() else None


def proposal_from_json(doc, source: str = "proposal") -> Proposal:
    """A proposal from its JSON document (``counterexamples/schemas/proposal.schema.json``):
    ``{"name": str, "pins": {knob id: option}, "wording": {question or knob id: {"page",
    "section", "text"}}}`` (``wording`` optional). Knob and question ids are read in any case
    and kept as the model spells them (``q2`` is ``Q2``).

    Raises:
        ProposalError: naming ``source`` and the member at fault (not an object, a missing
            name or one that is not one line of printable text, an unknown knob, a pin whose
            value is not one option of its knob (``pins.KNOB``), a wording member that is no
            question or knob id or names one twice, a wording entry without its members, a
            wording for a question the proposal does not pin)."""
    if not isinstance(doc, dict):
        raise ProposalError(f"{source}: a proposal is a JSON object, not {type(doc).__name__}")
    extra = sorted(set(doc) - {"name", "pins", "wording", "$schema", "about"})
    if extra:
        raise ProposalError(f"{source}: unknown member {quoted(extra[0])} (members: name, pins, "
                            "wording)")
    name = doc.get("name")
    if not isinstance(name, str) or not name.strip():
        raise ProposalError(f"{source}: 'name' must be a non-empty string")
    if len(name) > 200 or not name.isprintable() or name != name.strip():
        # it heads every report and goes into each generated fixture's one-line description
        raise ProposalError(f"{source}: 'name' must be one line of printable text (no control "
                            "character, no leading or trailing space), at most 200 characters")
    pins = doc.get("pins")
    if not isinstance(pins, dict) or not pins:
        raise ProposalError(f"{source}: 'pins' must be an object of at least one KNOB: OPTION")
    for k, v in pins.items():
        if not isinstance(v, str):
            raise ProposalError(f"{source}: pins.{k} must be a string option, not "
                                f"{type(v).__name__}")
    ordered, reading = _reading_of(pins, f"{source}: pins", per_pin=True)
    wording = doc.get("wording", {})
    if not isinstance(wording, dict):
        raise ProposalError(f"{source}: 'wording' must be an object")
    pinned_questions = {_question_of(k) for k in ordered}
    out_wording = {}
    for key, entry in wording.items():  # errors name the member as the file spells it
        qid = _wording_id(key)
        if qid is None:
            raise ProposalError(f"{source}: wording.{key}: not a question or knob id")
        if qid in out_wording:
            raise ProposalError(f"{source}: wording.{key}: {qid} is given twice")
        if not isinstance(entry, dict):
            raise ProposalError(f"{source}: wording.{key} must be an object")
        for member in ("page", "section", "text"):
            if not isinstance(entry.get(member), str) or not entry[member].strip():
                raise ProposalError(f"{source}: wording.{key}.{member} must be a non-empty "
                                    "string")
        unknown = sorted(set(entry) - {"page", "section", "text"})
        if unknown:
            raise ProposalError(f"{source}: wording.{key}: unknown member {quoted(unknown[0])}")
        if _question_of(qid) not in pinned_questions:
            raise ProposalError(f"{source}: wording.{key}: the proposal pins no knob of "
                                f"{_question_of(qid)}")
        out_wording[qid] = {m: entry[m] for m in ("page", "section", "text")}
    return Proposal(name.strip(), ordered, out_wording, reading, source)


def proposal_from_pins(text: str) -> Proposal:
    """The proposal of ``--pin Q2=parent,Q8=keep``: pins alone, named after them.

    Raises:
        ProposalError: an empty list, an item that is not KNOB=OPTION, an unknown knob or
            option, a knob given twice (:func:`_reading_of`)."""
    items = [p.strip() for p in (text or "").split(",")]
    if not text or not any(items):
        raise ProposalError("--pin: give KNOB=OPTION pairs, e.g. Q2=parent,Q8=keep")
    pins = []
    for item in items:
        key, eq, value = item.partition("=")
        if not eq or not key.strip() or not value.strip():
            raise ProposalError(f"--pin: {quoted(item)} is not KNOB=OPTION")
        pins.append((key.strip(), value.strip()))
    ordered, reading = _reading_of(pins, "--pin")
    return Proposal(",".join(f"{k}={v}" for k, v in ordered.items()), ordered, {}, reading,
                    "--pin")


def recommended_proposal() -> Proposal:
    """The proposal of every recommended option (:data:`model.readings.RECOMMENDATIONS`), named
    ``recommended``, each with its proposed wording on the first page and section its argument
    cites."""
    knobs = RECOMMENDATIONS["knobs"]
    ordered, reading = _reading_of({k: r["option"] for k, r in knobs.items()},
                                   "recommendations")
    wording = {k: {"page": r["cites"][0]["page"], "section": r["cites"][0]["section"],
                   "text": r["wording"]} for k, r in knobs.items()}
    return Proposal("recommended", ordered, wording, reading, "--recommended")


# --- questions ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class _Q:
    id: str
    title: str
    knobs: tuple[str, ...]
    proofs: tuple[str, ...] = ()
    searches: tuple[str, ...] = ()


def _resolve_questions() -> tuple[_Q, ...]:
    from properties.questions import QUESTIONS
    out = [_Q(q.id, q.title, q.knobs, q.proofs, q.searches) for q in QUESTIONS]
    x1 = KNOB_BY_ID["X1"]
    out.append(_Q("X1", x1.question, ("X1",)))
    return tuple(out)


RESOLVE_QUESTIONS = _resolve_questions()
"""Q1..Q25 (:data:`properties.questions.QUESTIONS`) and X1, the field case's question."""

_QUESTION_OF_KNOB = {k: q.id for q in RESOLVE_QUESTIONS for k in q.knobs}
_QUESTION_BY_FOLDED_ID = {q.id.lower(): q.id for q in RESOLVE_QUESTIONS}


def _question_of(knob_or_question: str) -> str:
    return _QUESTION_OF_KNOB.get(knob_or_question, knob_or_question)


def importance(question: str) -> bool:
    """Whether the question is one of the notes' starred ones (the recommendations' data)."""
    for knob, rec in RECOMMENDATIONS["knobs"].items():
        if _question_of(knob) == question and rec.get("important"):
            return True
    return bool(RECOMMENDATIONS.get("questions", {}).get(question, {}).get("important"))


# --- complete streams --------------------------------------------------------------------------

def close_stream(trace: Sequence[Event]) -> tuple[Event, ...]:
    """``trace`` followed by what closes every entity the producer left open (text messages,
    tool calls, steps, subagent invocations, in that order) and, when a run is active, its
    RUN_FINISHED (thread and run ids of the run's RUN_STARTED). A trace whose run already ended
    is returned as it is.

    Clauses: LIF-CLOSE-BEFORE-FINISH, SUB-STARTED-ACTIVE, LIF-AFTER-CLOSE."""
    belief = Belief()
    started: Optional[RunStarted] = None
    for event in trace:
        belief = advance(belief, event)
        if isinstance(event, RunStarted):
            started = event
    if belief.run != "active" or started is None:
        return tuple(trace)
    tail: list[Event] = []
    for mid in belief.texts:
        if mid in belief.open_texts:
            tail.append(TextMessageEnd(message_id=mid, subagent_run_id=belief.text_owner(mid)))
    for tool, owner in belief.open_tools:
        tail.append(ToolCallEnd(tool_call_id=tool, subagent_run_id=owner))
    for owner, name in sorted(belief.open_steps, key=lambda s: (s[0] or "", s[1])):
        tail.append(StepFinished(step_name=name, subagent_run_id=owner))
    for sub in sorted(belief.subagents):
        tail.append(SubagentFinished(subagent_run_id=sub))
    tail.append(RunFinished(thread_id=started.thread_id, run_id=started.run_id))
    return tuple(trace) + tuple(tail)


def _verdict(trace, reading: Reading) -> dict:
    doc = evaluate(trace, reading).to_json(detail=False)
    return {"messages": doc["messages"], "warnings": [w["code"] for w in doc["warnings"]],
            "fatal": doc["fatal"] and doc["fatal"]["code"], "run": doc["run"],
            "runInput": doc["runInput"]}


def _complete(trace, a: Reading, b: Reading, producer: Reading, producer_side: bool = False):
    """``(trace, closed)``: the closed stream when it still separates ``a`` and ``b`` (their
    verdicts differ; for a producer-side pair, its conformance still differs) and the monitor
    finds nothing under ``producer`` but what the pair is about; else the trace as found."""
    closed = close_stream(trace)
    if closed == tuple(trace):
        return tuple(trace), _ends_closed(trace)
    if producer_side:
        if bool(check_trace(closed, a)) != bool(check_trace(closed, b)):
            return closed, True
        return tuple(trace), False
    if check_trace(closed, producer):
        return tuple(trace), False
    if _verdict(closed, a) != _verdict(closed, b):
        return closed, True
    return tuple(trace), False


def _ends_closed(trace) -> bool:
    belief = Belief()
    for event in trace:
        belief = advance(belief, event)
    return belief.run != "active"


# --- searches ----------------------------------------------------------------------------------

LIFECYCLE_KNOBS = ("Q15", "Q23")
"""The knobs whose options first part on a run or an invocation that ends and goes on, which
the exploration's depth does not reach (:data:`properties.questions.DEEPER`): their pair search
goes on over the lifecycle vocabulary to ``depth + DEEPER`` when the exploration's finds
nothing. Other knobs are searched over the exploration's vocabulary only (each deeper search
that finds nothing costs seconds)."""


class _Searches:
    """The pair searches of one report, memoised: ``pair(a, b, knob)`` is the shortest
    conformant trace (under the proposal's producer options) on which readings ``a`` and ``b``
    differ, over the exploration's vocabulary to ``depth``, then for a knob of
    :data:`LIFECYCLE_KNOBS` over the lifecycle vocabulary to ``depth + DEEPER``: ``(trace or
    None, (vocabulary name, bound))``. The first pair of the proposal's reading asked for
    searches every such pair the report may ask for at once (:meth:`_batch`)."""

    def __init__(self, reading: Reading, depth: int):
        self.reading, self.depth = reading, depth
        self._pairs: dict = {}
        self._first: Optional[dict] = None  # (a, b) -> the exploration's trace or None
        self._sweep = None

    def sweep(self):
        """The proposal's reading explored once to ``depth`` over the exploration's vocabulary
        (:func:`properties.search.explore.explore` with ``check_readings``): its ``splits``
        give, for every knob at once, the shortest conformant trace on which two of its options
        part in the proposal's context (the step where a pair search would first see the two
        readings differ), and its ``violations`` the catalogue properties the pinned consumer
        fails."""
        if self._sweep is None:
            from properties.catalogue import PROPERTIES
            from properties.search.explore import ExploreOptions, explore
            self._sweep = explore(ExploreOptions(depth=self.depth, reading=self.reading,
                                                 properties=PROPERTIES, check_readings=True))
            if self._sweep.stopped_by == "interrupted":
                raise KeyboardInterrupt
        return self._sweep

    def split(self, knob: str):
        """``(trace, option a, option b)`` of the sweep's split of ``knob``, or None."""
        hit = self.sweep().splits.get(knob)
        if hit is None:
            return None
        trace, (a, b) = hit
        return tuple(trace), a[knob], b[knob]

    def pair(self, a: Reading, b: Reading, knob: str):
        key = (a, b)
        if key not in self._pairs:
            from properties.questions import DEEPER, LIFECYCLE_VOCABULARY
            from properties.search.explore import EXPLORE_VOCABULARY
            from properties.search.system_pair import shortest_distinguishing
            if a == self.reading and self._first is None:
                self._batch()
            if self._first is not None and key in self._first:
                found = self._first[key]
            else:
                found = shortest_distinguishing(a, b, self.depth, EXPLORE_VOCABULARY,
                                                producer=self.reading)
            where = ("exploration", self.depth)
            if found is None and knob in LIFECYCLE_KNOBS:
                found = shortest_distinguishing(a, b, self.depth + DEEPER,
                                                LIFECYCLE_VOCABULARY, producer=self.reading)
                where = ("lifecycle", self.depth + DEEPER)
            self._pairs[key] = (found, where)
        return self._pairs[key]

    def _batch(self) -> None:
        """The exploration-vocabulary pair search of the proposal's reading against every
        reading that moves one consumer knob to another option, but the option the sweep's
        split of that knob parts from the proposal's (:func:`_knob_witness` takes the split
        there), in one search (:func:`~properties.search.system_pair.shortest_distinguishing_each`,
        the same traces as one search per pair), kept for :meth:`pair`."""
        from properties.search.explore import EXPLORE_VOCABULARY
        from properties.search.system_pair import shortest_distinguishing_each
        p = self.reading
        others = []
        for k in KNOBS:
            if k.id in PRODUCER_ONLY_KNOBS:
                continue
            mine, hit = getattr(p, k.attr), self.split(k.id)
            # the option the sweep's split parts from the proposal's is never asked for
            split_off = None if hit is None or mine not in hit[1:] else \
                (hit[2] if hit[1] == mine else hit[1])
            others += [p.with_(**{k.id: o}) for o in k.option_names
                       if o != mine and o != split_off]
        found = shortest_distinguishing_each(p, others, self.depth, EXPLORE_VOCABULARY,
                                             producer=p) if others else []
        self._first = {(p, b): trace for b, trace in zip(others, found)}

    def conformance(self, knob: str, option: str):
        """The shortest trace whose conformance ``knob=option`` changes against the proposal
        (a producer-side knob), or None to ``depth``."""
        from properties.search.explore import EXPLORE_VOCABULARY
        got = conformance_splits([knob], self.depth, EXPLORE_VOCABULARY, base=self.reading,
                                 options=(option,))
        return got.get(knob, (None,))[0]


def _wire(trace) -> list:
    return [e.to_wire() for e in trace]


def _knob_witness(searches: _Searches, knob: str, against: Sequence[str]) -> Optional[dict]:
    """The shortest witness separating the proposal's option of ``knob`` from each option of
    ``against`` (the shortest kept, options in order on ties), as a JSON-ready dict."""
    p = searches.reading
    mine = getattr(p, KNOB_BY_ID[knob].attr)
    hit = None if knob in PRODUCER_ONLY_KNOBS else searches.split(knob)
    if hit is not None and mine in hit[1:] and \
            (hit[2] if hit[1] == mine else hit[1]) in against:
        # the sweep's split is a shortest one for this pair (no pair is separated sooner)
        other_option = hit[2] if hit[1] == mine else hit[1]
        return _split_doc(knob, hit[0], mine, other_option, p,
                          ("exploration", searches.depth))
    best = None
    for option in against:
        if option == mine:
            continue
        other = p.with_(**{knob: option})
        producer_side = knob in PRODUCER_ONLY_KNOBS
        trace, where = (None, None) if producer_side else searches.pair(p, other, knob)
        if trace is None and knob in PRODUCER_KNOBS:
            # the option changes which traces are conformant (Q2, Q4-opener: both sides)
            trace, where, producer_side = searches.conformance(knob, option), \
                ("exploration", searches.depth), True
        if trace is None:
            continue
        full, closed = _complete(trace, p, other, p, producer_side)
        if best is None or len(full) < len(best[0]):
            best = (full, closed, option, where, other, producer_side)
    if best is None:
        return None
    full, closed, option, where, other, producer_side = best
    doc = {"knob": knob, "option": mine, "against": option, "length": len(full),
           "closed": closed, "engine": "BFS", "vocabulary": where[0], "bound": where[1],
           "decides": "conformance" if producer_side else "verdict", "trace": _wire(full)}
    if producer_side:
        doc["conformance"] = {
            mine: sorted({v.clause for _, v in check_trace(full, p)}),
            option: sorted({v.clause for _, v in check_trace(full, other)})}
    else:
        doc["verdicts"] = {mine: _verdict(full, p), option: _verdict(full, other)}
    return doc


def _split_doc(knob: str, trace, a: str, b: str, p: Reading, where) -> dict:
    """The witness dict of a verdict split of ``knob`` between options ``a`` and ``b`` (in the
    proposal's context ``p``) on ``trace``, closed when it can be."""
    ra, rb = p.with_(**{knob: a}), p.with_(**{knob: b})
    full, closed = _complete(trace, ra, rb, p)
    return {"knob": knob, "option": a, "against": b, "length": len(full), "closed": closed,
            "engine": "BFS", "vocabulary": where[0], "bound": where[1], "decides": "verdict",
            "trace": _wire(full), "verdicts": {a: _verdict(full, ra), b: _verdict(full, rb)}}


def _open_witness(searches: _Searches, knob: str) -> Optional[dict]:
    """The shortest conformant trace on which two options of the unpinned ``knob`` still part
    under the pins: the sweep's split (any two options, in the proposal's context); without
    one, for a lifecycle or producer knob, the pair and conformance searches of
    :func:`_knob_witness`; else None (closed to the depth)."""
    hit = None if knob in PRODUCER_ONLY_KNOBS else searches.split(knob)
    if hit is not None:
        return _split_doc(knob, hit[0], hit[1], hit[2], searches.reading,
                          ("exploration", searches.depth))
    if knob in LIFECYCLE_KNOBS or knob in PRODUCER_KNOBS:
        return _knob_witness(searches, knob, KNOB_BY_ID[knob].option_names)
    return None


def _question_row(q: _Q, proposal: Proposal, searches: _Searches, depth: int,
                  z3: bool) -> dict:
    from properties.questions import DEEPER
    p = proposal.reading
    pinned = {k: proposal.pins[k] for k in q.knobs if k in proposal.pins}
    row = {"question": q.id, "title": q.title, "important": importance(q.id),
           "knobs": list(q.knobs), "pinned": pinned, "status": None, "engine": None,
           "bound": None, "witness": None, "note": ""}
    free = [k for k in q.knobs if k not in proposal.pins]
    if q.knobs and not free:
        row.update(status="decided", note="the proposal pins " + ", ".join(
            f"{k}={v}" for k, v in pinned.items()))
        return row
    if not q.knobs:
        proved = _proofs(q, depth, z3)
        if proved and all(engine for _, engine in proved):
            engines = sorted({e for _, e in proved})
            row.update(status="closed", engine="+".join(engines), bound=depth,
                       note="no knob: no reading changes a verdict to depth "
                            f"{depth} ({', '.join(pid for pid, _ in proved)})")
        elif not z3 and q.proofs and all(engine for _, engine in proved):
            row.update(status="open", note="not checked: Z3 is off (--no-z3), which its "
                       "bounded proofs need (" + ", ".join(q.proofs) + ")")
        else:
            row.update(status="open", note="no knob and no proof to depth "
                                           f"{depth}: not modelled as a choice")
        return row
    best = None
    for knob in free:
        w = _open_witness(searches, knob)
        if w is not None and (best is None or w["length"] < best["length"]):
            best = w
    if best is None:
        deeper = [k for k in free if k in LIFECYCLE_KNOBS]
        row.update(status="closed", engine="BFS", bound=depth, note=(
            f"no conformant trace separates the options of {', '.join(free)} under the pins, "
            f"to depth {depth} over the exploration's vocabulary" +
            (f" and {depth + DEEPER} over the lifecycle vocabulary" if deeper else "")))
        return row
    row.update(status="open", engine="BFS", bound=best["bound"], witness=best,
               note=f"{best['knob']}={best['option']} vs {best['knob']}={best['against']} "
                    f"still differ ({best['length']} events)")
    return row


def _z3_off(questions: list) -> list:
    """The report's ``limits`` when Z3 is off: the questions left unchecked for it, and the
    conflicts not sought."""
    unchecked = [q["question"] for q in questions if q["note"].startswith("not checked")]
    return ["Z3 off (--no-z3): the conflicts only Z3 finds are not sought"
            + (f"; {', '.join(unchecked)} not checked (their bounded proofs are Z3 queries)"
               if unchecked else "")]


def _proofs(q: _Q, depth: int, z3: bool) -> list:
    out = []
    if q.proofs and z3:
        from properties.smt.queries import bounded_proof
        for pid in q.proofs:
            out.append((pid, "Z3" if bounded_proof(pid, depth, reading=None).status == "unsat"
                        else None))
    for pid in q.searches:
        from properties.catalogue import QUESTION_PROPERTIES
        from properties.questions import OPEN_CONTENT_VOCABULARY
        from properties.search.explore import ExploreOptions, explore
        found = explore(ExploreOptions(depth=depth, reading=None,
                                       vocabulary=OPEN_CONTENT_VOCABULARY,
                                       properties=(QUESTION_PROPERTIES[pid],)))
        out.append((pid, "BFS" if found.complete and not found.violations else None))
    return out


# --- conflicts ---------------------------------------------------------------------------------

def _fragment_reading(reading: Reading) -> Reading:
    """The reading with every knob outside the Z3 fragment at draft (the fragment's queries
    take the fragment's knobs only)."""
    from properties.smt.encoding import OUTSIDE_KNOBS
    return reading.with_(**{k: KNOB_BY_ID[k].draft for k in OUTSIDE_KNOBS})


@lru_cache(maxsize=8)
def _z3_answers(reading: Reading, depth: int) -> tuple[dict, dict]:
    from properties.smt.queries import consistency, vacuity
    return ({a.subject: a for a in consistency(depth, reading)},
            {a.subject: a for a in vacuity(depth, reading)})


def z3_limits(proposal: Proposal) -> tuple[list[str], bool]:
    """What the Z3 fragment cannot say of ``proposal``: ``(limits, drop_vacuity)``. A pin off
    draft on a knob the fragment encodes at draft (:data:`properties.smt.encoding.
    DRAFT_ENCODED_KNOBS`): on the producer's side (Q12, Q17, whose draft option is the most
    permissive) Z3's conflicts stay sound but may miss some (the breadth-first producer search,
    :func:`_producer_conflicts`, reads the pin); on the consumer's side (Q14, Q18) Z3's vacuity
    answers under the pins would be another reading's, so they are dropped (``drop_vacuity``)."""
    from properties.smt.encoding import DRAFT_ENCODED_KNOBS
    limits, drop = [], False
    for knob in DRAFT_ENCODED_KNOBS:
        option = proposal.pins.get(knob)
        if option is None or option == KNOB_BY_ID[knob].draft:
            continue
        if knob in PRODUCER_ONLY_KNOBS:
            limits.append(f"Z3: the fragment's producer takes {knob}={KNOB_BY_ID[knob].draft}, "
                          f"not the pinned {knob}={option}: its conflicts hold, but one the pin "
                          f"alone makes is found by the breadth-first producer search only")
        else:
            drop = True
            limits.append(f"Z3: the fragment encodes {knob}={KNOB_BY_ID[knob].draft} only, not "
                          f"the pinned {knob}={option}: its vacuity answers are dropped "
                          f"(breadth-first branches and properties only)")
    return limits, drop


def _z3_conflicts(proposal: Proposal, depth: int) -> list[dict]:
    p = _fragment_reading(proposal.reading)
    if p == DRAFT:
        return []
    _, drop_vacuity = z3_limits(proposal)
    base_shapes, base_rules = _z3_answers(DRAFT, depth)
    shapes, rules = _z3_answers(p, depth)
    out = []
    for sid, answer in base_shapes.items():
        if answer.status == "sat" and shapes[sid].status == "unsat":
            out.append(_z3_conflict("contradicted", answer, depth, (
                f"a conformant trace ending in this shape exists under draft and none under "
                f"the pins: {answer.detail['statement']}")))
    for rid, answer in ({} if drop_vacuity else base_rules).items():
        if answer.status == "sat" and rules[rid].status == "unsat":
            out.append(_z3_conflict("vacuous", answer, depth, (
                f"the rule fires on a conformant trace under draft and on none under the pins: "
                f"{answer.detail['statement']}")))
    return out


def _z3_conflict(kind: str, answer, depth: int, note: str) -> dict:
    trace = tuple(answer.witness.trace)
    closed = close_stream(trace)
    ok = not check_trace(closed, DRAFT)
    full = closed if ok else trace
    return {"kind": kind, "subject": answer.subject, "clauses": list(answer.clauses),
            "engine": "Z3", "bound": depth, "length": len(full), "closed": ok or
            _ends_closed(trace), "note": note, "witnessUnder": "draft",
            "trace": _wire(full)}


def _branch_reach(reading: Reading, depth: int) -> dict:
    """``{branch id: shortest trace}``: the step branches (and notice branches) taken on some
    conformant trace (producer options of ``reading``) to ``depth`` events, breadth-first over
    the exploration's vocabulary, first found kept."""
    from model.consumer import initial_state, step as model_step
    from properties.search.explore import EXPLORE_VOCABULARY
    found: dict = {}
    level = [((), Belief(), initial_state())]
    seen = {(Belief(), initial_state())}
    for _ in range(depth):
        nxt = []
        for trace, belief, state in level:
            if state.halted:
                continue
            for event in moves(belief, EXPLORE_VOCABULARY, reading):
                result = model_step(state, event, reading)
                t = trace + (event,)
                for branch in [result.branch] + [w.branch for w in result.warnings]:
                    if branch and branch not in found:
                        found[branch] = t
                key = (advance(belief, event), result.state)
                if key not in seen:
                    seen.add(key)
                    nxt.append((t, key[0], key[1]))
        level = nxt
    return found


def _bfs_conflicts(proposal: Proposal, depth: int, searches: _Searches) -> list[dict]:
    from model.branches import BRANCH_BY_ID
    from properties.catalogue import PROPERTIES
    p = proposal.reading
    out = []
    base, mine = _branch_reach(DRAFT, depth), _branch_reach(p, depth)
    for branch, trace in base.items():
        if branch in mine:
            continue
        b = BRANCH_BY_ID[branch]
        closed = close_stream(trace)
        ok = not check_trace(closed, DRAFT)
        full = closed if ok else trace
        out.append({"kind": "vacuous", "subject": f"branch {branch}",
                    "clauses": list(b.clauses), "engine": "BFS", "bound": depth,
                    "length": len(full), "closed": ok or _ends_closed(trace),
                    "note": f"the step branch is taken on a conformant trace under draft and "
                            f"on none under the pins: {b.summary}",
                    "witnessUnder": "draft", "trace": _wire(full)})
    report = searches.sweep()
    report_props = {prop.id: prop for prop in PROPERTIES}
    for pid, (trace, text) in report.violations.items():
        prop = report_props.get(pid)
        out.append({"kind": "contradicted", "subject": f"property {pid}",
                    "clauses": list(getattr(prop, "clauses", ())), "engine": "BFS",
                    "bound": depth, "length": len(trace), "closed": _ends_closed(trace),
                    "note": f"fails for the pinned consumer on a conformant trace: {text}",
                    "witnessUnder": "proposal", "trace": _wire(trace)})
    return out


def _producer_conflicts(proposal: Proposal, depth: int) -> list[dict]:
    """The conflicts the pinned producer options make, breadth-first over the producer's
    beliefs (conformance reads the belief and the event alone): from every belief reached by a
    trace conformant under both draft and the pins, each next event (:func:`moves`'s and
    :func:`adversarial_moves`'s candidates) that the producer monitor judges otherwise under the
    pins than under draft (:func:`model.producer.violations`):

    * ``accepted``: conformant under the pins, but the draft's monitor finds a violation (its
      clause forbids the event; the witness is conformant under the proposal);
    * ``contradicted``: conformant under draft, but the pins' monitor finds a violation (the
      clauses the pinned knob sits between allow it, the violated one aside; the witness is
      conformant under draft).

    Subject ``producer <violation kind> (the pins forbid)`` or ``(draft forbids)``. One
    conflict per (kind, violation kind), the first found (the shortest: events in the
    candidates' fixed order), over the exploration's vocabulary to ``depth`` and, for a kind
    not found there, the lifecycle vocabulary to ``depth + DEEPER`` (a later run, Q12=run).
    Nothing when the pins leave every producer knob (:data:`PRODUCER_KNOBS`) at draft.

    Clauses: IDX-CONFORMANCE, the clauses of the pinned producer knobs."""
    from model.producer import monitor_disagreements, violations
    from properties.questions import DEEPER, LIFECYCLE_VOCABULARY
    from properties.search.explore import EXPLORE_VOCABULARY
    p = proposal.reading
    off_draft = [k for k in PRODUCER_KNOBS
                 if getattr(p, KNOB_BY_ID[k].attr) != KNOB_BY_ID[k].draft]
    if not off_draft:
        return []
    found: dict = {}
    for vocabulary, bound in ((EXPLORE_VOCABULARY, depth),
                              (LIFECYCLE_VOCABULARY, depth + DEEPER)):
        def candidates(belief, vocabulary=vocabulary):
            # every candidate either monitor judges (the non-conformant extras too)
            return (moves(belief, vocabulary, DRAFT) + moves(belief, vocabulary, p) +
                    [e for e, _ in adversarial_moves(belief, vocabulary, DRAFT)] +
                    [e for e, _ in adversarial_moves(belief, vocabulary, p)])
        for trace, vd, vp in monitor_disagreements(DRAFT, p, bound, candidates):
            kind = "accepted" if vd else "contradicted"
            for v in vd or vp:
                found.setdefault((kind, v.kind), (trace, v, bound))
    out = []
    for (kind, vkind), (trace, v, bound) in found.items():
        under = p if kind == "accepted" else DRAFT
        closed = close_stream(trace)
        ok = closed != tuple(trace) and not check_trace(closed, under)
        full = closed if ok else trace
        # the pinned producer knobs that alone part the two monitors here (all of them when
        # only their combination does)
        knobs = [k for k in off_draft if bool(violations(_belief_before(trace), trace[-1],
                 DRAFT.with_(**{k: getattr(p, KNOB_BY_ID[k].attr)}))) != (kind == "accepted")] \
            or off_draft
        pinned = ", ".join(f"{k}={getattr(p, KNOB_BY_ID[k].attr)}" for k in knobs)
        if kind == "accepted":
            clauses = [v.clause]
            note = (f"the producer monitor under the pins ({pinned}) calls conformant an event "
                    f"{v.clause} forbids under draft ({vkind}: {v.detail})")
        else:
            clauses = list(dict.fromkeys(c for k in knobs for c in KNOB_BY_ID[k].clauses
                                         if c != v.clause))
            note = (f"an event conformant under draft, which the producer monitor under the "
                    f"pins ({pinned}) forbids by {v.clause} ({vkind}: {v.detail}); the clauses "
                    f"named are the others {', '.join(knobs)} sits between")
        subject = f"producer {vkind} ({'draft' if kind == 'accepted' else 'the pins'} forbid" \
                  f"{'s' if kind == 'accepted' else ''})"
        out.append({"kind": kind, "subject": subject, "clauses": clauses,
                    "engine": "BFS", "bound": bound, "length": len(full),
                    "closed": ok or _ends_closed(full), "note": note,
                    "witnessUnder": "proposal" if kind == "accepted" else "draft",
                    "trace": _wire(full)})
    return out


def _belief_before(trace) -> Belief:
    belief = Belief()
    for event in trace[:-1]:
        belief = advance(belief, event)
    return belief


# --- peers -------------------------------------------------------------------------------------

def recorded_peers() -> dict[str, dict[str, str]]:
    """``{peer: {knob id: option}}``: the option each peer of the conformance matrix was
    recorded to take where observable (:func:`model.readings.recorded_peer_options`, the one
    home of that data: ``model/data/peer_options.json``, each peer named with its package
    version and mode, e.g. ``"@ag-ui/client 1.0.0 pipeline"``), peers in the matrix's order,
    knobs in knob order; a peer with no observable option maps to ``{}``."""
    from model.readings import recorded_peer_options
    return recorded_peer_options()


def _peer_rows(proposal: Proposal, searches: _Searches) -> list[dict]:
    """One row per recorded peer (every peer of the matrix): the pinned knobs on which its
    recorded option differs from the pin, each with the shortest witness; ``unrecorded``: the
    pinned knobs not observable for it (the reason in ``notObservable``)."""
    from model.readings import peer_options_document
    rows = []
    for peer in peer_options_document()["peers"]:
        knobs = peer["knobs"]
        options = {k: e["option"] for k, e in knobs.items() if "option" in e}
        findings = []
        for knob, pin in proposal.pins.items():
            if knob not in options:
                continue
            if options[knob] == pin:
                continue
            w = _knob_witness(searches, knob, (options[knob],))
            if w is not None and w["decides"] == "conformance" and w["conformance"][pin]:
                # the options differ in which traces are conformant, and this trace is one the
                # proposal itself forbids: off conformant traces, as a consumer sees it
                w = None
            findings.append({"question": _question_of(knob), "knob": knob, "pinned": pin,
                             "recorded": options[knob], "witness": w})
        unrecorded = [k for k in proposal.pins if k not in options]
        # an option that parts from the pin only off conformant traces (no witness to the
        # depth: error handling) is listed, but does not make the peer non-conformant
        rows.append({"peer": peer["name"], "adapter": peer["adapter"],
                     "version": peer["version"],
                     "conformant": not any(f["witness"] for f in findings),
                     "findings": findings, "unrecorded": unrecorded,
                     "notObservable": {k: knobs[k]["notObservable"] for k in unrecorded},
                     "source": "recorded"})
    return rows


# --- the report --------------------------------------------------------------------------------

def resolve(proposal: Proposal, depth: int = DEFAULT_DEPTH, z3: bool = True,
            z3_depth: Optional[int] = None) -> dict:
    """What ``proposal`` does (see the module docstring), as a JSON-ready dict:
    ``{"proposal", "reading", "depth", "z3Depth", "limits", "questions", "conflicts",
    "deviations", "peers", "traces", "wording", "counts"}``
    (``counterexamples/schemas/resolve-report.schema.json``).

    Args:
        proposal: the proposal.
        depth: the breadth-first bound (2 to :data:`MAX_DEPTH` events); Z3 asks to ``depth +
            1``.
        z3: also ask Z3 (consistency, vacuity, the bounded proofs of the questions without
            knob); False: breadth-first only.
        z3_depth: Z3's bound for consistency and vacuity (default ``depth + 1``).

    Raises:
        ValueError: a depth outside 2..MAX_DEPTH.

    Deterministic: equal inputs give equal reports (no timing inside)."""
    if not 2 <= depth <= MAX_DEPTH:
        raise ValueError(f"depth must be from 2 to {MAX_DEPTH}, not {depth}")
    z3_depth = (depth + 1 if z3_depth is None else z3_depth) if z3 else None
    searches = _Searches(proposal.reading, depth)
    questions = [_question_row(q, proposal, searches, depth, z3) for q in RESOLVE_QUESTIONS]
    conflicts = (_z3_conflicts(proposal, z3_depth) if z3 else []) + \
        _bfs_conflicts(proposal, depth, searches) + _producer_conflicts(proposal, depth)
    traces = []
    for knob in proposal.pins:
        w = _knob_witness(searches, knob, KNOB_BY_ID[knob].option_names)
        traces.append({"question": _question_of(knob), "knob": knob,
                       "option": proposal.pins[knob], "witness": w,
                       "file": None})  # the trace's file, set where --out writes it
    peers = _peer_rows(proposal, searches)
    deviations = pinned_deviations(proposal)
    counts = {s: sum(1 for q in questions if q["status"] == s) for s in STATUSES}
    counts.update(conflicts=len(conflicts), deviations=len(deviations),
                  nonConformantPeers=sum(1 for r in peers if not r["conformant"]))
    limits = z3_limits(proposal)[0] if z3 else _z3_off(questions)
    return {"tool": "activity-check", "command": "resolve", "proposal": proposal.to_json(),
            "reading": proposal.reading.name or "draft", "depth": depth,
            "z3Depth": z3_depth, "limits": limits, "questions": questions,
            "conflicts": conflicts, "deviations": deviations, "peers": peers,
            "traces": traces,
            "wording": [{"question": _question_of(k), "id": k, **v}
                        for k, v in proposal.wording.items()],
            "counts": counts}


def pinned_deviations(proposal: Proposal) -> list[dict]:
    """The pins that take a *deviation* (:attr:`model.readings.Knob.deviations`): an option
    modelled because implementations do it, against the text of a clause. Adopting such a pin
    means rewording that clause, which no search reports as a conflict (the pinned reading is
    consistent; it is the draft's text it departs from).

    Returns:
        ``[{"knob", "option", "clause", "reason"}]`` in knob order (``reason``: which page and
        section rule the option out, in our words); empty when every pin is faithful.
    """
    out = []
    for knob, option in proposal.pins.items():
        k = KNOB_BY_ID[knob]
        clause = k.deviation(option)
        if clause:
            out.append({"knob": knob, "option": option, "clause": clause,
                        "reason": k.deviation_reason(option)})
    return out


def compare(a: dict, b: dict) -> dict:
    """Two reports side by side: ``{"a", "b" (proposal names), "pins": {"a", "b"},
    "questions": [{"question", "a", "b"} whose status differs], "conflicts": {"onlyA",
    "onlyB", "both"} (subjects), "deviations": {"a", "b"} (the pins that go against a
    clause's text, :func:`model.readings.deviations_of`), "peers": [{"peer", "a", "b"} (the
    questions a conformant trace shows it non-conformant on) that differ]}``."""
    qa = {q["question"]: q["status"] for q in a["questions"]}
    qb = {q["question"]: q["status"] for q in b["questions"]}
    ca = {c["subject"] for c in a["conflicts"]}
    cb = {c["subject"] for c in b["conflicts"]}

    order = {q.id: i for i, q in enumerate(RESOLVE_QUESTIONS)}

    def bad(report):  # the questions with a conformant witness
        return {r["peer"]: sorted((f["question"] for f in r["findings"] if f["witness"]),
                                  key=order.__getitem__) for r in report["peers"]}

    pa, pb = bad(a), bad(b)
    return {"a": a["proposal"]["name"], "b": b["proposal"]["name"],
            "pins": {"a": a["proposal"]["pins"], "b": b["proposal"]["pins"]},
            "questions": [{"question": q, "a": qa[q], "b": qb.get(q)} for q in qa
                          if qa[q] != qb.get(q)],
            "conflicts": {"onlyA": sorted(ca - cb), "onlyB": sorted(cb - ca),
                          "both": sorted(ca & cb)},
            "deviations": {side: deviations_of(r["proposal"]["pins"])
                           for side, r in (("a", a), ("b", b))},
            "peers": [{"peer": p, "a": pa.get(p, []), "b": pb.get(p, [])}
                      for p in dict.fromkeys(list(pa) + list(pb))
                      if pa.get(p, []) != pb.get(p, [])]}


def load_json_text(text: str, source: str) -> dict:
    """A proposal document from JSON text (strict: duplicate members refused).

    Raises:
        ProposalError: not JSON (with line and column)."""
    from model.wire import loads_json
    try:
        return loads_json(text)
    except json.JSONDecodeError as exc:
        raise ProposalError(f"{source}:{exc.lineno}:{exc.colno}: not valid JSON: "
                            f"{exc.msg}") from None
    except ValueError as exc:
        raise ProposalError(f"{source}: {exc}") from None
