"""Divergences: where a peer first leaves every reading (:func:`first_divergence`), the clauses
involved, shrinking by re-running the peer (:func:`shrink_divergence`), and the finding built from it
(:func:`divergence_finding`)."""
from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any, Callable, Optional, Sequence

from model.branches import BRANCHES
from model.consumer import initial_state
from model.events import Event
from model.producer import check_trace
from model.verdict import fold, reading_leaves, step_record, verdict_key
from model.wire import TraceFormatError, parse_events
from counterexamples.findings import PeerDivergenceFinding, VerdictClassEntry
from counterexamples.peers.adapter import AdapterProcess, Reply
from counterexamples.peers.classify import (COMBINED, Classification, TraceResult, classify,
                                            observed_of)
from counterexamples.peers.traces import PeerTrace



# --- divergences: where, which clauses, shrinking -----------------------------------------------

PREFIX_SAMPLES = 16
"""How many prefixes of a trace one round of :func:`first_divergence` puts to the peer (one
batch): a trace this long or shorter has every prefix run at once."""


def first_divergence(adapter: AdapterProcess, trace: PeerTrace, part: Optional[str] = None
                     ) -> Optional[tuple[int, Classification]]:
    """Where the peer first agrees with no reading, found by a bisection of the prefixes with
    :data:`PREFIX_SAMPLES` of them a round (one batch each): the first sample that diverges and
    the sample before it bound the first divergent prefix, until they are adjacent. A trace of
    at most :data:`PREFIX_SAMPLES` events has every prefix run in one round; a 2,000-event
    trace takes three rounds (about 40 prefixes) rather than 2,000. The nearest reading at the
    divergent prefix is sought first among those the peer agreed with one event before (the
    last round runs every prefix of its span, so that one is known).

    The bisection finds the first divergent prefix when a peer that agrees with no reading on a
    prefix agrees with none on any longer one either; a peer that a later event brings back to
    some reading may have an earlier divergence than the one found, which is still a prefix on
    which the peer goes from agreeing with some reading to agreeing with none.

    ``part`` (one of :data:`PARTS`): where the peer first agrees with no reading on that part
    of the verdict alone.

    Returns:
        ``(index of the last event of the first divergent prefix, that prefix's
        Classification)``, or None when the whole trace does not diverge (or the peer fails on
        every prefix put to it).
    """
    lo, lo_matches = 0, []  # a prefix length known not to diverge (0: none), its matches
    hi, hi_found = len(trace.wire), None  # the shortest prefix known to diverge (None: not yet)
    while True:
        span = hi - lo
        dense = span <= PREFIX_SAMPLES
        lengths = list(range(lo + 1, hi + 1)) if dense else sorted(
            {lo + span * k // PREFIX_SAMPLES for k in range(1, PREFIX_SAMPLES + 1)})
        if hi_found is not None and not dense:
            lengths = lengths[:-1]  # hi: known to diverge
        replies = adapter.request_many([(trace.wire[:n], trace.state, f"{trace.id}[:{n}]")
                                        for n in lengths])
        found, before, context = None, lo, lo_matches
        for n, reply in zip(lengths, replies):
            c = classify(trace.events[:n], reply, trace.state, context, part)
            if c.kind == "divergence":
                found = (n, c)
                break
            before, context = n, c.matches
        found = found or hi_found
        if found is None:
            return None
        n, c = found
        if n == before + 1 or dense:
            return n - 1, c
        lo, lo_matches, hi, hi_found = before, context, n, found


@dataclass(frozen=True)
class Divergence:
    """Where and how a peer parts from every reading on a trace.

    Attributes:
        index: the event after which it first agrees with no reading.
        nearest: the nearest reading there (as text); aspects: where it differs from it.
        branch: the nearest reading's step branch at that event; clauses: the clauses the
            divergence breaks; related: clauses the draft's warnings cite before it (see
            :func:`divergence_clauses`).
        ignored: the peer ignored that event: its answer is the same with and without it, no
            failure reported (:func:`event_ignored`).
    """

    index: int
    nearest: str
    aspects: tuple[str, ...]
    branch: str
    clauses: tuple[str, ...]
    related: tuple[str, ...]
    ignored: bool = False

    @property
    def signature(self) -> tuple:
        """See :func:`divergence_signature`."""
        return divergence_signature(self.branch, self.aspects, ignored=self.ignored)


def locate_divergence(adapter: AdapterProcess, trace: PeerTrace, part: Optional[str] = None
                      ) -> Optional[Divergence]:
    """The :class:`Divergence` of ``trace`` (:func:`first_divergence`, then
    :func:`divergence_clauses`), on one ``part`` of the verdict (None: all of it), or None when
    the peer diverges on no prefix."""
    found = first_divergence(adapter, trace, part)
    if found is None:
        return None
    index, c = found
    branch, clauses, related = divergence_clauses(trace.events, index, c.aspects, trace.state,
                                                  c.nearest_assignment)
    # a divergence in the warnings alone is not an ignored event: the model skips it too
    ignored = bool(set(c.aspects) - {"warnings"}) and event_ignored(adapter, trace, index)
    return Divergence(index, c.nearest, tuple(c.aspects), branch, tuple(clauses), tuple(related),
                      ignored)


def event_ignored(adapter: AdapterProcess, trace: PeerTrace, index: int) -> bool:
    """True when event ``index`` of ``trace`` had no effect on the peer: its answers to the
    prefixes of ``index`` and ``index + 1`` events are the same (messages, fatal, run input,
    state, warnings: :func:`_answer_key`) and neither reports a failure. At the first divergent
    event, where the nearest reading's verdict changes beyond its warnings
    (:func:`locate_divergence` asks only then), that is one root cause (the peer ignores that
    kind of event) whatever the aspects the missed effect shows in. False for event 0 (no
    prefix to compare with) and when the peer fails on either prefix."""
    if index < 1 or index >= len(trace.wire):
        return False
    before, at = adapter.request_many(
        [(trace.wire[:n], trace.state, f"{trace.id}[:{n}]") for n in (index, index + 1)])
    if not (before.ok and at.ok):
        return False
    if any((r.response or {}).get("fatal") not in (None, False) for r in (before, at)):
        return False
    return _answer_key(before.response) == _answer_key(at.response)


_ASPECT_PREFIXES = {
    "messages.metadata": ("MET-", "ACT-SNAP-KEEP-METADATA"),
    "messages.subagentRunId": ("ACT-ATTR-", "SUB-"),
    "state": ("SNP-", "STA-"),
    "runInput": ("ACT-STRIP-RUNINPUT", "RIN-", "SCH-RUN-INPUT"),
}


def divergence_clauses(events: Sequence[Event], index: int, aspects: Sequence[str],
                       state: Any = None, assignment: Optional[dict] = None
                       ) -> tuple[str, list[str], list[str]]:
    """The consumer's step branch at event ``index`` and the clauses a divergence there breaks.

    The consumer is the model under the nearest reading (``assignment``, a partial assignment
    completed with draft; default draft itself), so that a peer already following another
    reading before the divergence is judged where that reading's consumer stands. The branch is
    the one that consumer's step returns on (the record of the trace fold,
    :func:`model.verdict.fold`, at ``index``; ``lifecycle.halted`` when that reading failed
    the run at an earlier event).

    The clauses are those the branch implements (:data:`model.branches.BRANCHES`), narrowed to the
    differing aspects where that leaves any (metadata: MET-*; attribution: ACT-ATTR-*, SUB-*;
    agent state: SNP-*, STA-*), plus the clauses the model's own warnings and fatal at that event
    cite; the stripping rules when only the run input differs; and, when the peer fails the run
    where the model does not, the duty to accept every described event (EVX-ACCEPT-FAMILIES).
    The *related* clauses are those the model's warnings cite at earlier events: a peer that
    fails later often parted from the model at an event the model tolerated (a skipped text
    event, say).

    Returns:
        ``(branch name, clause ids, related clause ids)``.
    """
    from model.readings import PartialReading
    reading = PartialReading(assignment or {}).complete()
    records = fold(events[:index + 1], reading, initial_state(state))
    if index < len(records):
        record = records[index]
    else:  # the reading failed the run earlier: its halted consumer's step, as the model names it
        record = step_record(index, records[-1].after, events[index], reading)
    branch, warnings, fatal = record.branch, record.warnings, record.fatal
    clauses = list(BRANCHES.get(branch, ()))
    prefixes = tuple(p for a in aspects for p in _ASPECT_PREFIXES.get(a, ()))
    if prefixes and all(a in _ASPECT_PREFIXES for a in aspects) and \
            not ("runInput" in aspects and len(aspects) == 1):
        narrowed = [c for c in clauses if c.startswith(prefixes)]
        extra = [p for p in prefixes if not p.endswith("-") and p not in narrowed]
        clauses = narrowed + extra if narrowed or extra else clauses
    if "runInput" in aspects and not any(a.startswith("messages") for a in aspects):
        # the run input differs while the messages agree: the stripping rule itself
        clauses += [c for c in ("ACT-STRIP-RUNINPUT", "RIN-STRIP-ACTIVITY") if c not in clauses]
    if "fatal" in aspects and fatal is None and "EVX-ACCEPT-FAMILIES" not in clauses:
        clauses.append("EVX-ACCEPT-FAMILIES")
    cited = [w.clause for w in warnings] + ([fatal.clause] if fatal else [])
    for c in cited:
        if c not in clauses:
            clauses.append(c)
    related: list[str] = []
    for w in (w for r in records[:index] for w in r.warnings):
        if w.clause not in clauses and w.clause not in related:
            related.append(w.clause)
    return branch, clauses, related


def divergence_signature(branch: str, aspects: Sequence[str], kind: str = "",
                         ignored: bool = False) -> tuple:
    """The root cause of a divergence, what makes two of them the same finding: the model's branch
    of the step where the peer first parts from every reading (which kind of event met what),
    what the peer did there (the aspects it differs in, message members included:
    ``messages.missing`` and ``messages.content`` are two causes; but a peer that ignored the
    event, ``ignored``, did one thing whatever the aspects its missing effect shows in), and the
    finding's ``kind`` of divergence (:data:`DIVERGENCE_KINDS`; empty while not yet known)."""
    return branch, ("event ignored",) if ignored else tuple(sorted(aspects)), kind


DIVERGENCE_KINDS = ("stopped-reading", "ignored-event", "verdict")
"""What a divergence finding says the peer did (its ``divergenceKind``): ``stopped-reading``,
it stopped reading the stream: from the event named on, no event had any effect on its answer
(no failure reported either), while the nearest reading's verdict still changes;
``ignored-event``, the event where it first parts from every reading had no effect on its
answer (:func:`event_ignored`), though later ones did; ``verdict``, any other verdict no
reading gives."""


def stopped_reading(adapter: AdapterProcess, trace: PeerTrace, reply: Reply,
                    nearest: dict) -> Optional[int]:
    """Where the peer stopped reading ``trace`` (:data:`DIVERGENCE_KINDS`), or None: the first
    event index ``k`` such that the peer answers every prefix longer than ``k`` events exactly as
    it answers the first ``k`` (one batch: every prefix), it reports no failure, at least one
    event follows event ``k``, and the model under the ``nearest`` reading (a partial
    assignment, completed with draft) ends otherwise on the whole trace than on its first
    ``k + 1`` events in a part the peer's answers show (something after the first unread event
    should have had an effect the peer could report). A
    peer that ignores only the last event is not one that stopped reading. For short (shrunk)
    traces: one request per prefix."""
    from model.readings import PartialReading
    from model.verdict import evaluate
    if not reply.ok or (reply.response or {}).get("fatal") not in (None, False):
        return None
    n = len(trace.wire)
    replies = adapter.request_many([(trace.wire[:k], trace.state, f"{trace.id}[:{k}]")
                                    for k in range(1, n)])
    answers = [None] + [r.response if r.ok else object() for r in replies] + [reply.response]
    last = _answer_key(reply.response)
    k = n  # the shortest prefix answered as the whole trace is: events k.. had no effect
    while k > 1 and answers[k - 1] is not None and _answer_key(answers[k - 1]) == last:
        k -= 1
    if k > n - 2:  # at most the last event ignored: no stream left unread
        return None
    from counterexamples.peers.classify import view_of
    reading = PartialReading(nearest or {}).complete()
    start = initial_state(trace.state)
    observed = observed_of(reply.response)  # only what the peer's answers show is compared

    def seen(events) -> dict:
        return view_of(evaluate(events, reading, start).to_json(detail=False), observed)

    if seen(trace.events[:k + 1]) == seen(trace.events):
        return None  # nothing after the first unread event would have had a visible effect
    return k


def _answer_key(response) -> str:
    """A peer's answer as compared for :func:`stopped_reading` (messages, fatal, run input,
    state, warnings)."""
    if not isinstance(response, dict):
        return repr(response)
    return json.dumps({k: response.get(k) for k in ("messages", "fatal", "runInput", "state",
                                                      "warnings")}, sort_keys=True)


def shrink_divergence(adapter: AdapterProcess, trace: PeerTrace,
                      holds: Optional[Callable[[tuple[dict, ...]], bool]] = None,
                      part: Optional[str] = None, until: Optional[float] = None,
                      cut: Optional[list] = None) -> tuple[dict, ...]:
    """Shrink a divergent trace by re-running the peer on smaller candidates: the canonical
    minimisation to a fixpoint (:func:`counterexamples.shrink.minimise`: delta debugging to a
    1-minimal trace, optional members dropped, names unified, patch operations and content
    members dropped, payloads made plain, repeated until a whole round changes nothing), then
    canonical names (:func:`~counterexamples.shrink.canonical_names`). A candidate is kept only
    while the peer still diverges *the same way*: same :attr:`Divergence.signature` (the
    model's branch and differing parts where it first parts from every reading, located by
    :func:`first_divergence`), so that shrinking does not slide onto another divergence.
    Candidates are memoised.

    Args:
        holds: another predicate over wire events to preserve instead (optional).
        part: shrink the divergence in this part of the verdict alone (one of :data:`PARTS`;
            None: the whole verdict), so that each part gets its own witness.
        until: a :func:`time.monotonic` time after which no candidate is put to the peer (each
            is then taken as not showing the divergence), so that shrinking ends soon after it
            with the smallest trace found so far, still a witness; ``cut``, a list, gets
            ``True`` appended when that happened (the result may then not be 1-minimal).

    Returns:
        The shrunk wire events (the input itself when it does not diverge).
    """
    from counterexamples.shrink import canonical_names, minimise
    cache: dict[str, bool] = {}
    original = locate_divergence(adapter, trace, part) if holds is None else None
    if holds is None and original is None:
        return trace.wire

    def same_divergence(wire: tuple[dict, ...]) -> bool:
        if not wire:
            return False
        key = json.dumps(list(wire), sort_keys=True)
        if key not in cache and until is not None and time.monotonic() > until:
            if cut is not None and not cut:
                cut.append(True)
            return False  # out of its time: not put to the peer
        if key not in cache:
            try:
                events = parse_events(wire)
            except TraceFormatError:
                cache[key] = False
                return False
            candidate = PeerTrace(f"{trace.id}~shrink", tuple(wire), events, trace.state)
            found = locate_divergence(adapter, candidate, part)
            cache[key] = found is not None and found.signature == original.signature
        return cache[key]

    test = holds or same_divergence
    if not test(trace.wire):
        return trace.wire

    def typed(evs: tuple[Event, ...]) -> bool:
        return test(tuple(e.to_wire() for e in evs))

    start = parse_events(trace.wire)
    if not typed(start):  # the events as the model writes them back no longer show it
        return trace.wire
    events = minimise(start, typed)
    wire = tuple(e.to_wire() for e in events)
    renamed = tuple(e.to_wire() for e in canonical_names(events))
    if renamed != wire and test(renamed):
        wire = renamed
    return wire


def describe_verdict(verdict: dict) -> str:
    """A verdict in a few words: the model's (:meth:`model.verdict.Verdict.to_json`) or a peer's
    answer (messages with type, content, metadata and owner; whether and where the run fails; the
    ids of the next run input)."""
    parts = []
    for m in verdict.get("messages", []):
        bits = [f"{m.get('id')} ({m.get('role')})"]
        if m.get("role") == "activity":
            bits.append(f"type {m.get('activityType')} content "
                        f"{json.dumps(m.get('content'), sort_keys=True)}")
        if "metadata" in m:
            bits.append(f"metadata {json.dumps(m['metadata'], sort_keys=True)}")
        if "subagentRunId" in m:
            bits.append(f"owner {m['subagentRunId']}")
        parts.append(" ".join(bits))
    text = "messages: " + ("; ".join(parts) if parts else "none")
    fatal = verdict.get("fatal")
    if fatal is not None and fatal is not False:
        where = f" at event {fatal['atEvent']}" if isinstance(fatal, dict) and \
            "atEvent" in fatal else ""
        code = f" {fatal['code']}" if isinstance(fatal, dict) and fatal.get("code") else ""
        text += f"; the run fails{where}{code}"
    else:
        text += "; no failure"
    if verdict.get("runInput") is not None:
        text += f"; next run input {[m.get('id') for m in verdict['runInput']]}"
    return text


def divergence_finding(adapter: AdapterProcess, trace: PeerTrace, wire: Sequence[dict],
                       source: str, part: Optional[str] = None,
                       minimal: bool = True) -> PeerDivergenceFinding:
    """The finding for a (shrunk) divergent trace
    (:class:`counterexamples.findings.PeerDivergenceFinding`).

    Its document's members: ``id`` (``PEER-<adapter>-<hash>``, a hash of the adapter name, the
    trace and the initial agent state: :meth:`~counterexamples.findings.Finding.id_for`),
    ``kind`` (``"peer-divergence"``; and ``shrunk``: true here, :func:`unshrunk_finding` gives
    false), ``adapter``, ``peer`` (what the adapter calls itself), ``source`` (the trace it was
    shrunk from), ``clauses``, ``branch`` (the step branch of the model consumer under the
    nearest reading, :func:`divergence_clauses`) and ``divergesAt`` / ``event`` (the first event
    after which the peer agrees with no reading), ``aspects`` (where it differs from the nearest
    reading), ``divergesIn`` (the parts of the verdict it is the witness for: ``part``, or
    :data:`COMBINED` for the whole verdict; a trace that is the shrunk witness of two parts
    names both), ``compared`` (the parts of a verdict compared), ``conformant`` (no producer clause
    broken) and ``producerViolations``, ``explanation``, ``length``, ``events``, ``initialState``
    (when given), ``peerVerdict`` (the peer's answer: messages, warnings, fatal, runInput, state,
    log) and ``verdicts`` (every verdict class of the model: readings, includesDraft, verdict);
    the trace is the shrunk one with the events that end what it left open, where the peer
    still diverges the same way on it (:func:`_closed_divergence`; ``closing`` counts them,
    ``length - closing`` is the shrunk length);
    ``divergenceKind`` (:data:`DIVERGENCE_KINDS`; with ``stoppedAt``, the first event that had
    no effect, for ``stopped-reading``: :func:`stopped_reading`), ``outsideDraft`` (the clauses
    among ``clauses`` that are the model's own rules, :func:`model.clauses.outside_draft`: a
    divergence resting on them is not one from the draft) and ``minimal`` (False when shrinking
    ran out of its time before a fixpoint, :func:`shrink_divergence`'s ``until``). The id's
    hash also covers the root cause (:func:`divergence_signature`), so two causes never share
    an id. The peer's answer is asked again on the final trace (once more when it gives no
    usable answer: an erratic peer); with none, ``peerVerdict`` is empty and the explanation
    says so, the model's verdicts listed all the same.
    """
    shrunk_length = len(wire)
    wire = _closed_divergence(adapter, trace, tuple(wire), part)
    closing = len(wire) - shrunk_length
    events = parse_events(wire)
    small = PeerTrace(trace.id, tuple(wire), events, trace.state, trace.source)
    reply = adapter.request(small.wire, small.state, f"{trace.id}~final")
    if not reply.ok:  # an erratic peer (out of step, a crash): once more, after its restart
        reply = adapter.request(small.wire, small.state, f"{trace.id}~final-again")
    classification = classify(events, reply, small.state, part=part)
    where = locate_divergence(adapter, small, part)
    stopped = stopped_reading(adapter, small, reply, classification.nearest_assignment) \
        if classification.kind == "divergence" else None
    return _finding(adapter, small, reply, classification, where, source, True, part,
                    stopped, minimal, closing)


def _closed_divergence(adapter: AdapterProcess, trace: PeerTrace, wire: tuple[dict, ...],
                       part: Optional[str]) -> tuple[dict, ...]:
    """``wire`` with the events that end what it left open appended
    (:func:`model.producer.closing_events`: a complete stream, as the run's witnesses are) when
    the peer still parts from every reading there the same way (same root cause,
    :func:`divergence_signature`) and the closing events break no producer clause the trace does
    not already break; otherwise ``wire`` itself."""
    from model.producer import closing_events
    try:
        events = parse_events(wire)
    except TraceFormatError:
        return wire
    ending = closing_events(events)
    if not ending:
        return wire
    longer = wire + tuple(e.to_wire() for e in ending)
    longer_events = parse_events(longer)
    if not {v.clause for _, v in check_trace(longer_events)} <= \
            {v.clause for _, v in check_trace(events)}:
        return wire
    before = locate_divergence(adapter, PeerTrace(trace.id, wire, events, trace.state), part)
    after = locate_divergence(adapter, PeerTrace(f"{trace.id}~closed", longer, longer_events,
                                                 trace.state), part)
    if before is None or after is None or after.signature != before.signature:
        return wire
    return longer


def unshrunk_finding(adapter: AdapterProcess, result: "TraceResult",
                     locate: bool = True, part: Optional[str] = None) -> PeerDivergenceFinding:
    """The finding for a divergent trace as it was run (not shrunk; ``"shrunk": false``), from
    the answer already received, on one ``part`` of the verdict (None: all of it). ``locate``:
    re-run the peer on the prefixes to find where it first diverges (else the divergence is
    placed at the last event)."""
    where = locate_divergence(adapter, result.trace, part) if locate else None
    classification = result.classification if part is None else \
        classify(result.trace.events, result.reply, result.trace.state, part=part)
    return _finding(adapter, result.trace, result.reply, classification, where,
                    result.trace.id, False, part)


def _finding(adapter: AdapterProcess, small: PeerTrace, reply: Reply,
             classification: Classification, where: Optional[Divergence], source: str,
             shrunk: bool, part: Optional[str] = None, stopped: Optional[int] = None,
             minimal: bool = False, closing: int = 0) -> PeerDivergenceFinding:
    from model.clauses import outside_draft
    events = small.events
    if where is None:  # the peer no longer diverges (a flaky peer): describe the whole trace
        index = len(events) - 1
        aspects, nearest = classification.aspects, classification.nearest
        branch, clauses, related = divergence_clauses(events, index, aspects, small.state,
                                                      classification.nearest_assignment)
        ignored = False
    else:
        index, aspects, nearest = where.index, list(where.aspects), where.nearest
        branch, clauses, related = where.branch, list(where.clauses), list(where.related)
        ignored = where.ignored
    kind = "stopped-reading" if stopped is not None else \
        "ignored-event" if ignored else "verdict"
    cause = divergence_signature(branch, aspects, kind, ignored)
    fid = PeerDivergenceFinding.id_for(adapter.spec.name, events,
                                       extra=json.dumps(small.state, sort_keys=True) + "\n"
                                       + json.dumps(cause))
    response = reply.response or {}
    # the model's leaves; computed here when the peer gave no usable answer this time (an
    # error reply is classified without them)
    leaves = classification.leaves or reading_leaves(events, initial_state(small.state))
    groups: dict[str, tuple[list[dict], Any]] = {}  # the leaves by verdict, first seen first
    for assignment, verdict in leaves:
        groups.setdefault(verdict_key(verdict), ([], verdict))[0].append(assignment)
    entries = [VerdictClassEntry.of(assignments, verdict) for assignments, verdict in
               groups.values()]
    verdicts = [c.to_json() for c in sorted(entries, key=lambda c: not c.includes_draft)]
    violations = check_trace(events)
    at_text = _event_text(small.wire[index])
    draft_json = verdicts[0]["verdict"]
    explanation = "\n".join([
        f"On this {len(events)}-event trace the peer ({response.get('peer', adapter.spec.label)}) "
        + ("ends in a verdict that no reading of the model gives." if part is None else
           f"ends in a verdict whose {part} no reading of the model gives (whatever the other "
           "parts)."),
        f"It first parts from every reading at event {index} ({at_text}), in the step the "
        f"model consumer under the nearest reading ({nearest}) takes as '{branch}'; there it "
        f"differs from that reading in: {', '.join(aspects) or '-'}.",
        *([f"It stopped reading the stream at event {stopped} "
           f"({_event_text(small.wire[stopped])}): from there on no event changed its answer, "
           "and it reported no failure."] if stopped is not None else []),
        *([f"It ignored event {index}: its answer is the same with and without it, and it "
           "reported no failure."] if ignored and stopped is None else []),
        f"- model (draft): {describe_verdict(draft_json)}",
        f"- peer: {describe_verdict(response)}" if reply.ok else
        f"- peer: no usable answer when the trace was run again ({reply.kind}: {reply.error})",
        ("The trace is conformant: the producer breaks no clause." if not violations else
         "The producer breaks " + ", ".join(sorted({v.clause for _, v in violations})) +
         ", so this is the consumer's reaction to a producer violation."),
    ])
    finding = {
        "id": fid, "kind": PeerDivergenceFinding.KIND, "adapter": adapter.spec.label,
        "peer": response.get("peer", adapter.spec.label), "source": source,
        "clauses": clauses, "relatedClauses": related, "branch": branch, "divergesAt": index,
        "event": at_text, "nearest": nearest, "aspects": aspects,
        "divergenceKind": kind, **({"stoppedAt": stopped} if stopped is not None else {}),
        "eventIgnored": ignored,
        "outsideDraft": outside_draft(clauses), "minimal": shrunk and minimal,
        "divergesIn": [part or COMBINED],
        "compared": observed_of(response).names() if response else [],
        "conformant": not violations,
        "producerViolations": [{"atEvent": i, "clause": v.clause, "kind": v.kind}
                               for i, v in violations],
        "explanation": explanation, "length": len(events), "closing": closing,
        "shrunk": shrunk,
        "events": list(small.wire),
    }
    if small.state is not None:
        finding["initialState"] = small.state
    finding["peerVerdict"] = {k: response.get(k) for k in
                              ("messages", "warnings", "fatal", "runInput", "state", "log")
                              if k in response}
    finding["verdicts"] = verdicts
    return PeerDivergenceFinding(finding)


def _event_text(wire_event: dict) -> str:
    """An event in a few words: its type and message id."""
    return " ".join(str(wire_event.get(k)) for k in ("type", "messageId") if k in wire_event)
