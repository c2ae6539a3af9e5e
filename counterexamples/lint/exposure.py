"""What a producer's stream still leaves to the open questions: ``lint --exposure``.

A stream can be conformant and still be read two ways: a faithful consumer under one reading of
an open question ends with other messages, warnings, failure or run input than one under
another. :func:`exposure` folds the stream under every reading at once
(:func:`model.verdict.reading_leaves`), keeps the knobs that decide something on this very stream
(:func:`model.verdict.knob_splits`: two readings that differ in that knob alone give different
verdicts), and for each says where the readings part (the first event after which two consumers
hold different things), what differs (``messages``, ``warnings``, ``fatal``, ``runInput``,
``state``), how the options group, which known consumers take which option, and what to send
instead so that every reading gives one result (:data:`ADVICE`, our own words, citing clause
and question ids of ``spec/notes.md``).

Only the consumer's side is judged here; the producer-side knobs (Q12, Q17) are lint's own
business (:mod:`counterexamples.lint.linter`). A stream whose fork outgrows ``max_leaves`` is judged
on the leaves found until then, and the result says it is partial.

Layering: uses ``model`` only; the CLI (:mod:`activity_check.cmd_lint`) wires it.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Optional, Sequence

from model.events import Event
from model.readings import KNOB_BY_ID, KNOBS, PartialReading
from model.consumer import initial_state, step as model_step
from model.verdict import (LeavesExceeded, Verdict, evaluate, knob_splits, reading_leaves,
                           verdict_key)
from model.wire import parse_event

__all__ = ["ADVICE", "Exposure", "ExposureReport", "exposure", "exposure_of_entries",
           "render_exposure_pretty", "EXPOSURE_SCHEMA", "VERDICT_PARTS"]

EXPOSURE_SCHEMA = "activity-check/exposure/1"
"""The ``schema`` of ``lint --exposure --format json`` (``schemas/exposure.schema.json``)."""

VERDICT_PARTS = ("messages", "warnings", "fatal", "runInput", "state")
"""The parts of a verdict (:meth:`model.verdict.Verdict.to_json`) compared, in this order."""

ADVICE: dict[str, str] = {
    "Q1": "leave metadata off a replace:false snapshot of an activity that exists; send it on an "
          "ACTIVITY_DELTA (its metadata merges under every reading, MET-MERGE)",
    "Q2": "tag the replace:false snapshot with the owner's subagentRunId instead of leaving it "
          "untagged (ACT-ATTR-AGREE)",
    "Q3": "send replace:false with the owner's own attribution, or take the activity over with "
          "a replacing snapshot (replace omitted or true) carrying the new owner",
    "Q4": "tag every ACTIVITY_DELTA as the snapshot that opened the activity; to hand it to "
          "another agent, send a replacing ACTIVITY_SNAPSHOT from that agent first "
          "(SUB-OWNER-AGREE)",
    "Q4-opener": "after a replacing snapshot re-attributes an activity, tag its deltas as both the "
                 "first and the latest snapshot agree, or restate it under a fresh id",
    "Q5": "send an ACTIVITY_DELTA whose patch applies to the content you sent (or a replacing "
          "snapshot) when you change activityType; never pair a retype with a failing patch",
    "Q6": "send metadata on a delta whose patch applies (or on its own delta with an empty "
          "patch), never on one whose patch fails",
    "Q6-ms": "restate the activity's whole accumulated metadata in the MESSAGES_SNAPSHOT copy, so "
             "that keeping and replacing agree",
    "Q7": "keep the document root an object: patch members of content, never the root with a "
          "non-object (ACT-DELTA-OBJECT)",
    "Q8": "restate in MESSAGES_SNAPSHOT every activity the consumer should keep, or send each "
          "again with ACTIVITY_SNAPSHOT after it",
    "Q9": "give the activity an id no other message has used (EVM-ID-UNIQUE)",
    "Q10": "give a new activity a fresh id rather than one a MESSAGES_SNAPSHOT removed",
    "Q11": "change an activity that exists with an ACTIVITY_DELTA (it stays where it is under "
           "every reading), or send replace:false when nothing should change; if it should "
           "appear at the end, give it a new id",
    "Q13": "send patches that apply to the content you last sent (no failing test op, no path "
           "that is not there); when unsure, send a replacing ACTIVITY_SNAPSHOT",
    "Q14": "repair an activity whose delta did not apply with a replacing snapshot (replace "
           "omitted or true), not replace:false",
    "Q15": "send an invocation's last deltas before its SUBAGENT_FINISHED or SUBAGENT_ERROR, or "
           "take the activity over with a replacing snapshot from the parent",
    "Q18": "keep activityType on a replace:false snapshot equal to the activity's type, or "
           "replace the activity (replace omitted or true) to change it",
    "Q19": "send metadata on an ACTIVITY_DELTA rather than on the ACTIVITY_SNAPSHOT",
    "Q20": "use only the six RFC 6902 operations (add, remove, replace, move, copy, test)",
    "Q21": "leave an optional member out instead of sending it as null (EVM-ABSENT-NOT-NULL)",
    "Q23": "start each run that goes on with an activity by sending its ACTIVITY_SNAPSHOT again "
           "(SNP-SHOULD-SNAPSHOT), then the deltas",
    "X1": "end a text message (TEXT_MESSAGE_END) before sending MESSAGES_SNAPSHOT, or restate it "
          "in the snapshot",
}
"""Per consumer knob: what a producer sends instead so that every reading gives one result
(our words; the ids are those of ``spec/notes.md``)."""


@dataclass(frozen=True)
class Exposure:
    """One open question the stream depends on.

    Attributes:
        knob: the knob id (``"Q11"``); question: the question in our words.
        event_index: 0-based index (in the events judged) of the first event after which two
            consumers that differ in this knob alone hold different things; None when only the
            end of the stream tells them apart.
        event_type: that event's wire type; message_id: its ``messageId``, when it has one.
        differs_in: the parts of the verdict that differ (:data:`VERDICT_PARTS`).
        groups: the knob's options grouped by the verdict they give (each group one result),
            in knob order; the draft's option is in the first group.
        peers: ``(consumer, option)`` known from the readings table (``model/readings.py``).
        advice: what to send instead (:data:`ADVICE`).
        context: the other knobs (departing from draft) under which the split shows, as
            ``KNOB=OPTION``; empty when it shows with every other knob at its draft option.
    """

    knob: str
    question: str
    event_index: Optional[int]
    event_type: Optional[str]
    message_id: Optional[str]
    differs_in: tuple[str, ...]
    groups: tuple[tuple[str, ...], ...]
    peers: tuple[tuple[str, str], ...]
    advice: str
    context: tuple[str, ...] = ()

    def to_json(self) -> dict:
        """The exposure in the JSON report's form (camelCase)."""
        return {"question": self.knob, "text": self.question, "eventIndex": self.event_index,
                "eventType": self.event_type, "messageId": self.message_id,
                "differsIn": list(self.differs_in), "groups": [list(g) for g in self.groups],
                "peers": [{"consumer": c, "option": o} for c, o in self.peers],
                "sendInstead": self.advice, "context": list(self.context)}


@dataclass(frozen=True)
class ExposureReport:
    """:func:`exposure`'s result: ``exposures`` in knob order; ``events`` the events judged;
    ``skipped`` the stream elements that were not events (undecodable, not objects), left out;
    ``partial`` True when the fork outgrew its bound (the exposures found until then)."""

    exposures: tuple[Exposure, ...]
    events: int
    skipped: int = 0
    partial: bool = False

    def to_json(self) -> dict:
        return {"events": self.events, "skipped": self.skipped, "partial": self.partial,
                "questions": [e.to_json() for e in self.exposures]}


def _parts(a: Verdict, b: Verdict) -> tuple[str, ...]:
    ja, jb = a.to_json(detail=False), b.to_json(detail=False)
    return tuple(p for p in VERDICT_PARTS if ja[p] != jb[p])


def _first_parting(events: Sequence[Event], ra, rb) -> Optional[int]:
    """The first index after which consumers under ``ra`` and ``rb`` show different things
    (messages, agent state, run status) or one warns or fails where the other does not; None when
    they never part. Both are stepped in lockstep, stopping there."""
    def seen(state):  # what a consumer shows: its messages, agent state and run status
        return ([m.to_wire() for m in state.messages], state.state, state.run, state.halted)
    sa = sb = initial_state()
    for i, event in enumerate(events):
        xa, xb = model_step(sa, event, ra), model_step(sb, event, rb)
        if ([(w.code, w.message_id) for w in xa.warnings] !=
                [(w.code, w.message_id) for w in xb.warnings]
                or (xa.fatal is None) != (xb.fatal is None) or seen(xa.state) != seen(xb.state)):
            return i
        if xa.fatal is not None:
            return None
        sa, sb = xa.state, xb.state
    return None


def _leaf_of(leaves, reading) -> Verdict:
    """The verdict of the leaf whose assignment ``reading`` (complete) is consistent with: the
    leaves of :func:`model.verdict.reading_leaves` partition the readings, so there is one."""
    values = reading.as_dict()
    for assignment, verdict in leaves:
        if all(values[k] == v for k, v in assignment.items()):
            return verdict
    raise LookupError("no leaf holds this reading")  # only with a partial (bounded) fork


def exposure(events: Sequence[Event], max_leaves: int = 4096, skipped: int = 0) -> ExposureReport:
    """The open questions on which consumers' results differ for ``events``.

    Args:
        events: typed events (:func:`model.wire.parse_event`), the stream in arrival order.
        max_leaves: bound on the fork of readings (:func:`model.verdict.reading_leaves`); past it
            the leaves found so far are used and the report is ``partial``.
        skipped: how many stream elements were not events (carried into the report).

    Returns:
        An :class:`ExposureReport`, its exposures in the order of :data:`model.readings.KNOBS`.
        Never raises for protocol input.

    Clauses: each exposure's knob names its clauses (``model.readings.KNOBS``); the advice cites
    the clause ids a producer keeps by following it.
    """
    partial = False
    try:
        leaves = reading_leaves(events, max_leaves=max_leaves)
    except LeavesExceeded as exc:
        leaves, partial = exc.leaves, True
    found = []
    for knob_id, (a, b) in knob_splits(leaves).items():
        knob = KNOB_BY_ID[knob_id]
        merged = {k: v for k, v in {**a, **b}.items() if k != knob_id}
        verdicts = {}
        for option in knob.option_names:
            reading = PartialReading({**merged, knob_id: option}).complete()
            try:
                verdict = _leaf_of(leaves, reading)
            except LookupError:
                verdict = evaluate(events, reading)
            verdicts[option] = (reading, verdict)
        keyed: dict[str, list[str]] = {}
        for option, (_, v) in verdicts.items():
            keyed.setdefault(verdict_key(v), []).append(option)
        groups = tuple(tuple(g) for g in keyed.values())
        (ra, va), (rb, vb) = verdicts[a[knob_id]], verdicts[b[knob_id]]
        at = _first_parting(events, ra, rb)
        event = events[at] if at is not None and at < len(events) else None
        wire = event.to_wire() if event is not None else {}
        message_id = wire.get("messageId") if isinstance(wire.get("messageId"), str) else None
        event_type = wire.get("type") if isinstance(wire.get("type"), str) else None
        draft = {k.id: k.draft for k in KNOBS}
        context = tuple(f"{k}={v}" for k, v in merged.items() if draft.get(k) != v)
        found.append(Exposure(knob_id, knob.question, at, event_type, message_id,
                              _parts(va, vb), groups, tuple(knob.peers),
                              ADVICE.get(knob_id, "no advice recorded for this question"),
                              context))
    return ExposureReport(tuple(found), len(events), skipped, partial)


def exposure_of_entries(entries: Iterable, max_leaves: int = 4096) -> ExposureReport:
    """:func:`exposure` of a stream as lint reads it (:class:`counterexamples.lint.linter.StreamEntry`
    values, or anything with ``value`` and ``problem``): the elements that are JSON objects are
    typed; the others (undecodable, not objects) are left out and counted in ``skipped``, as lint
    reports them itself."""
    events, skipped = [], 0
    for entry in entries:
        if getattr(entry, "problem", None) is not None or type(entry.value) is not dict:
            skipped += 1
            continue
        events.append(parse_event(entry.value))
    return exposure(events, max_leaves, skipped)


def render_exposure_pretty(report: ExposureReport, con, conformant: bool = True) -> None:
    """Print the exposure section on the rich console ``con``, as lint's report is printed
    (:func:`counterexamples.lint.formats.print_hanging`): each line folded within the
    console's width with a hanging indent under its label, ids whole (whole when the console
    does not wrap: ``--wide``, a file); stream-supplied strings shown as data (markup escaped,
    control characters written as escapes, :func:`model.text.visible`)."""
    from rich.markup import escape as markup_escape
    from counterexamples.lint.formats import print_hanging
    from model.text import visible

    def escape(text: str) -> str:
        return markup_escape(visible(text))
    n = len(report.exposures)
    head = (f"[bold]exposure[/bold]: {n} open question(s) on which consumers' results differ "
            f"for this stream" if n else
            "[bold]exposure[/bold]: no open question changes a consumer's result on this stream")
    if report.partial:
        head += " (partial: the readings forked past the bound; later questions may be missing)"
    print_hanging(con, head, 4)
    if not conformant and n:
        print_hanging(con, "  [dim]the stream is not conformant: mend its violations first; "
                      "these questions are what stays open on it as it is[/dim]", 4)
    for e in report.exposures:
        where = "at the end of the stream" if e.event_index is None else \
            f"from event {e.event_index}" + (f" {escape(e.event_type)}" if e.event_type else "") \
            + (f" {escape(e.message_id)}" if e.message_id else "")
        print_hanging(con, f"  [bold]{e.knob}[/bold] {where}: {', '.join(e.differs_in)} differ",
                      6)
        print_hanging(con, f"      {escape(e.question)}", 6)
        print_hanging(con, "      results: " + " | ".join(", ".join(g) for g in e.groups)
                      + (f" [dim](with {escape(', '.join(e.context))})[/dim]" if e.context
                         else ""), 15)
        if e.peers:
            print_hanging(con, "      [dim]known: " + "; ".join(f"{escape(c)}: {o}"
                                                             for c, o in e.peers) + "[/dim]", 13)
        print_hanging(con, f"      send instead: {escape(e.advice)}", 20)
