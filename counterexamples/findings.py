"""Findings: an ambiguity (or, later, a violated property or a peer divergence) with its shrunk
witness, the verdict under each class of readings, the clauses at stake, and a plain-words
explanation; exported as finding JSON and as AG-UI JSON lines.

A finding's id is stable: a hash of its kind, knob and the canonical wire text of its witness, so
the same finding found twice (from any seed) gets the same id.
"""
from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from typing import Sequence

from model.events import Event
from model.readings import DRAFT, KNOB_BY_ID, describe_assignment
from model.verdict import Verdict, context_of, evaluate, partition, split_readings
from model.wire import dump_jsonl
from properties.ambiguity import Witness, option_classes, splits_knob, splits_of
from counterexamples.shrink import canonical_names, minimise

__all__ = ["Finding", "ambiguity_finding", "write_finding", "explain_difference",
           "write_property_finding"]


@dataclass
class Finding:
    """One finding.

    Attributes:
        id: stable id, e.g. ``"AMB-Q5-3f2a9c1e"``.
        kind: ``"ambiguity"``.
        knob: the knob (open question) that decides it.
        events: the shrunk, canonically renamed witness trace.
        classes: ``[(assignments, verdict)]``: every verdict a reading gives on the witness,
            draft's class first.
        pair: the two assignments that differ only in ``knob``.
        clauses: clause ids involved (the knob's and those cited by the differing verdicts).
        explanation: plain words.
    """

    id: str
    kind: str
    knob: str
    events: tuple[Event, ...]
    classes: list[tuple[list[dict], Verdict]]
    pair: tuple[dict, dict]
    clauses: tuple[str, ...]
    explanation: str

    @property
    def context(self) -> dict:
        """Other knobs, away from draft, that the split needs (see :func:`model.verdict.context_of`)."""
        return context_of(self.pair, self.knob)

    def to_json(self) -> dict:
        """The finding JSON (wire names; no timings, so same seed gives same bytes)."""
        knob = KNOB_BY_ID[self.knob]
        return {
            "id": self.id,
            "kind": self.kind,
            "knob": self.knob,
            "question": knob.question,
            "clauses": list(self.clauses),
            "explanation": self.explanation,
            "length": len(self.events),
            "events": [e.to_wire() for e in self.events],
            "pair": [describe_assignment(a) for a in self.pair],
            "context": describe_assignment(self.context) if self.context else "draft",
            "verdicts": [
                {"readings": [describe_assignment(a) for a in assignments],
                 "includesDraft": _includes_draft(assignments),
                 "verdict": verdict.to_json()}
                for assignments, verdict in self.classes],
            "steps": explain_steps(self.events, self.classes),
        }


def _class_reading(assignments: Sequence[dict]):
    from model.readings import PartialReading
    return DRAFT if _includes_draft(assignments) else PartialReading(assignments[0]).complete()


def _step_effect(before, after, warnings, fatal) -> str:
    """Plain words for what one step did to the consumer."""
    if fatal is not None:
        return f"the run fails: {fatal.code} ({fatal.clause})"
    parts = []
    held_before = {m.id: m for m in before.messages}
    held_after = {m.id: m for m in after.messages}
    order_after = [m.id for m in after.messages]
    for m in after.messages:
        old = held_before.get(m.id)
        if old is None:
            parts.append(f"{m.id} ({m.role}) appears at position {order_after.index(m.id) + 1}")
        elif old != m:
            changed = [name for name, a, b in (
                ("content", old.content, m.content), ("type", old.activity_type, m.activity_type),
                ("metadata", old.metadata, m.metadata), ("owner", old.owner, m.owner),
                ("role", old.role, m.role)) if a != b]
            parts.append(f"{m.id}: " + ", ".join(
                f"{name} now {getattr(m, {'type': 'activity_type'}.get(name, name))}"
                for name in changed))
    parts.extend(f"{mid} dropped" for mid in held_before if mid not in held_after)
    if [i for i in order_after if i in held_before] != [m.id for m in before.messages
                                                         if m.id in held_after]:
        parts.append("order now " + ", ".join(order_after))
    if before.run != after.run:
        parts.append(f"run {after.run}")
    parts.extend(f"warning {w.code} ({w.clause})" for w in warnings)
    return "; ".join(parts) or "no change"


def explain_steps(events: Sequence[Event], classes) -> list[dict]:
    """What happened at each step, in plain words, under each verdict class (its readings as
    text): ``[{"index", "event", "effect": {readings: text}}]``; classes that agree at a step are
    listed together."""
    from model.consumer import initial_state
    from model.verdict import trace_states
    per_class = []
    for assignments, verdict in classes:
        label = "; ".join(describe_assignment(a) for a in assignments)
        states = trace_states(events, _class_reading(assignments))
        per_class.append((label, states, verdict))
    out = []
    for i, event in enumerate(events):
        effects: dict[str, list[str]] = {}
        for label, states, verdict in per_class:
            before = states[i - 1] if i else initial_state()
            warnings = [w for at, w in verdict.warnings if at == i]
            fatal = verdict.fatal[1] if verdict.fatal and verdict.fatal[0] == i else None
            text = "stream already rejected" if before.halted else \
                _step_effect(before, states[i], warnings, fatal)
            effects.setdefault(text, []).append(label)
        wire = event.to_wire()
        out.append({"index": i, "event": " ".join(str(wire.get(k)) for k in
                                                 ("type", "messageId") if k in wire),
                    "effect": {" | ".join(labels): text for text, labels in effects.items()}})
    return out


def _includes_draft(assignments: Sequence[dict]) -> bool:
    draft = DRAFT.as_dict()
    return any(all(draft[k] == v for k, v in a.items()) for a in assignments)


def _stable_id(kind: str, knob: str, events: Sequence[Event]) -> str:
    digest = hashlib.sha256(f"{kind}\n{knob}\n{dump_jsonl(events)}".encode()).hexdigest()[:8]
    return f"AMB-{knob}-{digest}"


def explain_difference(events: Sequence[Event], a: dict, b: dict) -> str:
    """Plain words: what each of two readings makes of the trace, where they part, and in which
    context (the other knobs the pair fixes away from draft)."""
    knob = next(k for k in a if k in b and a[k] != b[k])
    ra, rb = split_readings((a, b), knob)
    va, vb = evaluate(events, ra), evaluate(events, rb)
    context = context_of((a, b), knob)
    where = ("with every other knob at its draft option" if not context else
             "with " + describe_assignment(context) + " and every other knob at draft "
             f"(with {knob}'s context at draft the two agree on this trace)")
    lines = [f"The draft leaves open: {KNOB_BY_ID[knob].question}",
             f"On this {len(events)}-event trace, {knob}={a[knob]} and {knob}={b[knob]} end "
             f"differently, {where}:"]
    for label, v in ((f"{knob}={a[knob]}", va), (f"{knob}={b[knob]}", vb)):
        lines.append(f"- under {label}: {_summarise(v)}")
    return "\n".join(lines)


def _summarise(v: Verdict) -> str:
    parts = []
    acts = [m for m in v.state.messages if m.is_activity]
    if acts:
        parts.append("activities " + "; ".join(
            f"{m.id} type {m.activity_type} content {m.content}"
            + (f" metadata {m.metadata}" if m.metadata else "")
            + (f" owner {m.owner}" if m.owner else "") for m in acts))
    else:
        parts.append("no activity message")
    order = [m.id for m in v.state.messages]
    if len(order) > 1:
        parts.append("order " + ", ".join(order))
    if v.warnings:
        parts.append("warnings " + ", ".join(f"{w.code}@{i}" for i, w in v.warnings))
    if v.fatal:
        parts.append(f"FATAL {v.fatal[1].code}@{v.fatal[0]} ({v.fatal[1].clause})")
    return "; ".join(parts)


def ambiguity_finding(witness: Witness, shrink: bool = True) -> Finding:
    """Shrink a witness, rename canonically, re-verify it, and build the finding.

    Shrinking is :func:`counterexamples.shrink.minimise`: delta debugging to a 1-minimal trace
    and the member simplifications (optional members, payloads, patch operations, content and
    metadata members, owners, activity types) repeated to a fixpoint, each change kept only
    while the knob still splits the trace, the trace stays conformant, the split's context
    departs from draft in no more knobs than the witness's, and the knob's options, in the
    witness's context, give as many different verdicts as on the witness, both whole and as a
    peer that reports no warnings sees them (:func:`properties.ambiguity.option_classes`). Names are then made canonical
    (:func:`counterexamples.shrink.canonical_names`). Shrinking never lengthens a trace, so a
    witness of the breadth-first search keeps its shortest length.

    The clauses are the knob's own plus every clause cited by a warning or fatal that differs
    between the verdict classes.

    Raises:
        ValueError: when the witness's knob does not split its trace (an engine bug).
        AssertionError: when the shrunk trace is no longer a conformant witness (a shrinking
            bug; checked on every finding, so a bad trace is never exported).
    """
    events = witness.events
    if shrink:
        context = len(context_of(witness.pair, witness.knob))
        # shrinking never merges options the witness tells apart (by the whole verdict, or by
        # what a peer that reports no warnings sees), so it never weakens the witness
        base = split_readings(witness.pair, witness.knob)[0]
        full, visible = option_classes(events, witness.knob, base)

        def holds(trace) -> bool:
            if not splits_knob(trace, witness.knob, max_context=context):
                return False
            f, v = option_classes(trace, witness.knob, base)
            return f >= full and v >= visible

        events = minimise(events, holds)
        renamed = canonical_names(events)
        if holds(renamed):
            events = renamed
        if not holds(events):
            raise AssertionError(f"shrinking lost the {witness.knob} split")
    pair = splits_of(events).get(witness.knob)
    if pair is None:
        raise ValueError(f"{witness.knob} does not split the witness trace")
    classes = [(c.assignments, c.verdict) for c in partition(events)]
    clauses = list(KNOB_BY_ID[witness.knob].clauses)
    cited = set()
    for _, v in classes:
        cited.update(w.clause for _, w in v.warnings)
        if v.fatal:
            cited.add(v.fatal[1].clause)
    for c in sorted(cited):
        if c not in clauses:
            clauses.append(c)
    explanation = explain_difference(events, *pair)
    return Finding(_stable_id("ambiguity", witness.knob, events), "ambiguity", witness.knob,
                   tuple(events), classes, pair, tuple(clauses), explanation)


def write_property_finding(violation, events: Sequence[Event], consumer: str, reading: str,
                           directory: str) -> tuple[str, str]:
    """Export a property violation found by a state machine: ``PROP-<property>-<hash>.json``
    (property, clauses, consumer, reading, event index, witness text, trace) and ``.jsonl``.
    Returns the two paths."""
    events = tuple(events[:violation.index + 1])
    digest = hashlib.sha256(f"property\n{violation.property.id}\n{dump_jsonl(events)}".encode()
                            ).hexdigest()[:8]
    fid = f"PROP-{violation.property.id.split('-')[0]}-{digest}"
    os.makedirs(directory, exist_ok=True)
    base = os.path.join(directory, fid)
    doc = {"id": fid, "kind": "property", "property": violation.property.id,
           "statement": violation.property.statement, "clauses": list(violation.property.clauses),
           "consumer": consumer, "reading": reading, "atEvent": violation.index,
           "explanation": violation.witness, "length": len(events),
           "events": [e.to_wire() for e in events]}
    with open(base + ".json", "w", encoding="utf-8") as fh:
        json.dump(doc, fh, indent=2, ensure_ascii=False)
        fh.write("\n")
    with open(base + ".jsonl", "w", encoding="utf-8") as fh:
        fh.write(dump_jsonl(events))
    return base + ".json", base + ".jsonl"


def write_finding(finding: Finding, directory: str) -> tuple[str, str]:
    """Write ``<id>.json`` (finding) and ``<id>.jsonl`` (witness as wire JSON lines) into
    ``directory`` (created if missing). Returns the two paths."""
    os.makedirs(directory, exist_ok=True)
    base = os.path.join(directory, finding.id)
    with open(base + ".json", "w", encoding="utf-8") as fh:
        json.dump(finding.to_json(), fh, indent=2, ensure_ascii=False)
        fh.write("\n")
    with open(base + ".jsonl", "w", encoding="utf-8") as fh:
        fh.write(dump_jsonl(finding.events))
    return base + ".json", base + ".jsonl"
