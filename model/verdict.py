"""Verdicts: what a trace leaves, under one reading or under all of them at once.

:func:`evaluate` folds :func:`model.consumer.step` over a trace and returns a :class:`Verdict`:
final messages (wire form), warnings with their event index, the fatal outcome if any, the next run
input and the agent state. It stops at the first fatal (the stream is dead).

:func:`partition` runs one trace under *every* reading without enumerating them: it starts from
the empty assignment and, whenever a step consults a knob the assignment leaves open, forks one
branch per option. Each leaf is a partial assignment (standing for all readings consistent with
it) and its verdict; leaves with equal verdicts are grouped into verdict classes. Two readings
disagree on the trace exactly when they fall into different classes.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Optional, Sequence

from model.consumer import ConsumerState, Fatal, Warning, initial_state, run_input, step
from model.events import Event
from model.readings import DRAFT, KNOB_BY_ID, KNOBS, KnobUnset, PartialReading, Reading

__all__ = ["Verdict", "VerdictClass", "evaluate", "partition", "reading_leaves", "knob_splits",
           "context_of", "split_readings",
           "trace_states", "verdict_key"]


@dataclass(frozen=True)
class Verdict:
    """What a trace leaves.

    Attributes:
        state: the final consumer state.
        warnings: ``(event index, Warning)`` in order.
        fatal: ``(event index, Fatal)`` or None.
        events_applied: how many events were stepped (all of them, or up to the fatal one).
    """

    state: ConsumerState
    warnings: tuple[tuple[int, Warning], ...] = ()
    fatal: Optional[tuple[int, Fatal]] = None
    events_applied: int = 0

    def to_json(self, detail: bool = True) -> dict:
        """The verdict as JSON (wire names):

        ``{"messages": [...], "warnings": [{"code", "messageId", "atEvent", "clause", "detail"}],
        "fatal": null | {"code", "atEvent", "clause", "detail", "messageId"}, "runInput": [...],
        "state": <agent state>, "run": "idle"|"active"|"finished"|"errored"|"rejected"}``;
        ``rejected`` means the consumer failed the run on a fatal (kept apart from a run the
        producer reported failed with RUN_ERROR, ``errored``; LIF-FAILED-KEEPS).
        With ``detail=False`` the free-text ``detail`` members are left out (used to compare
        verdicts between readings and peers).
        """
        warnings = []
        for at, w in self.warnings:
            item = {"code": w.code, "messageId": w.message_id, "atEvent": at, "clause": w.clause}
            if detail:
                item["detail"] = w.detail
            warnings.append(item)
        fatal = None
        if self.fatal is not None:
            at, f = self.fatal
            fatal = {"code": f.code, "atEvent": at, "clause": f.clause, "messageId": f.message_id}
            if detail:
                fatal["detail"] = f.detail
        return {
            "messages": [m.to_wire() for m in self.state.messages],
            "warnings": warnings,
            "fatal": fatal,
            "runInput": run_input(self.state),
            "state": json.loads(self.state.state),
            "run": "rejected" if self.state.halted else self.state.run,
        }


_DRAFT_VALUES = DRAFT.as_dict()

def verdict_key(verdict: Verdict) -> str:
    """Canonical text of a verdict without free-text details: equal keys, equal verdicts."""
    return json.dumps(verdict.to_json(detail=False), sort_keys=True, separators=(",", ":"))


def evaluate(events: Sequence[Event], reading: Reading = DRAFT,
             start: Optional[ConsumerState] = None) -> Verdict:
    """Run ``events`` from ``start`` (default: a fresh consumer) under ``reading``.

    Returns:
        The :class:`Verdict`; never raises for protocol input.
    """
    state = start if start is not None else initial_state()
    warnings: list[tuple[int, Warning]] = []
    for index, event in enumerate(events):
        result = step(state, event, reading)
        state = result.state
        warnings.extend((index, w) for w in result.warnings)
        if result.fatal is not None:
            return Verdict(state, tuple(warnings), (index, result.fatal), index + 1)
    return Verdict(state, tuple(warnings), None, len(events))


def trace_states(events: Sequence[Event], reading: Reading = DRAFT,
                 start: Optional[ConsumerState] = None) -> list[ConsumerState]:
    """The consumer state after each event (``len(events)`` states; after a fatal the halted
    state repeats). Used for checkpoints and step-by-step explanations."""
    state = start if start is not None else initial_state()
    out = []
    for event in events:
        state = step(state, event, reading).state
        out.append(state)
    return out


@dataclass
class VerdictClass:
    """A set of readings that give one verdict on a trace.

    Attributes:
        verdict: the shared verdict (computed under ``representative``).
        assignments: the partial assignments (``{knob id: option}``) whose readings give it.
        representative: a complete reading in the class (its assignments completed with ``draft``
            for the open knobs; ``draft`` itself when the class contains it).
    """

    verdict: Verdict
    assignments: list[dict] = field(default_factory=list)
    representative: Reading = DRAFT

    @property
    def contains_draft(self) -> bool:
        return any(all(_DRAFT_VALUES[k] == v for k, v in a.items()) for a in self.assignments)


def reading_leaves(events: Sequence[Event], start: Optional[ConsumerState] = None,
                   max_leaves: int = 4096) -> list[tuple[dict, Verdict]]:
    """Run ``events`` under every reading at once, forking on the knobs the steps consult.

    Returns:
        ``(assignment, verdict)`` leaves: each assignment (``{knob id: option}``) stands for every
        reading consistent with it, and those readings all give ``verdict``. Siblings of a fork
        share every earlier choice. The first leaf is the one that contains ``draft``.

    Raises:
        RuntimeError: past ``max_leaves`` leaves (a guard against runaway forking).
    """
    state0 = start if start is not None else initial_state()
    work = [({}, state0, 0, (), None)]
    leaves: list[tuple[dict, Verdict]] = []
    n = len(events)
    while work:
        assignment, state, index, warnings, fatal = work.pop()
        partial = PartialReading(assignment)
        forked = False
        while index < n and fatal is None:
            try:
                result = step(state, events[index], partial)
            except KnobUnset as unset:
                knob = KNOB_BY_ID[unset.knob_id]
                for option in reversed(knob.option_names):
                    work.append(({**assignment, knob.id: option}, state, index, warnings, fatal))
                forked = True
                break
            state = result.state
            if result.warnings:
                warnings = warnings + tuple((index, w) for w in result.warnings)
            if result.fatal is not None:
                fatal = (index, result.fatal)
            index += 1
        if forked:
            if len(work) + len(leaves) > max_leaves:
                raise RuntimeError(f"reading exploration exceeded {max_leaves} leaves")
            continue
        leaves.append((assignment, Verdict(state, warnings, fatal,
                                           (fatal[0] + 1) if fatal else n)))
    return leaves


def partition(events: Sequence[Event], start: Optional[ConsumerState] = None,
              max_leaves: int = 4096) -> list[VerdictClass]:
    """Group every reading by the verdict it gives on ``events`` (see :func:`reading_leaves`).

    Returns:
        Verdict classes, the one containing ``draft`` first, then in order of discovery.
        Readings in different classes disagree on this trace.
    """
    classes: dict[str, VerdictClass] = {}
    for assignment, verdict in reading_leaves(events, start, max_leaves):
        key = verdict_key(verdict)
        cls = classes.get(key)
        if cls is None:
            cls = classes[key] = VerdictClass(verdict, [], PartialReading(assignment).complete())
        cls.assignments.append(assignment)
    ordered = sorted(classes.values(), key=lambda c: not c.contains_draft)
    for c in ordered:
        if c.contains_draft:
            c.representative = DRAFT
    return ordered


def context_of(pair: tuple[dict, dict], knob: str) -> dict:
    """The knobs a split pair fixes besides ``knob`` that depart from ``draft``: the context in
    which ``knob`` decides (empty when it decides with every other knob at its draft option)."""
    a, b = pair
    draft = _DRAFT_VALUES
    merged = {**a, **b}  # the pair agrees on the knobs both fix, so the union is consistent
    return {k: v for k, v in merged.items() if k != knob and draft[k] != v}


def split_readings(pair: tuple[dict, dict], knob: str) -> tuple[Reading, Reading]:
    """Two complete readings that differ only in ``knob`` and fall in the pair's two leaves:
    the pair's union of fixed knobs, each side's own option for ``knob``, draft elsewhere."""
    a, b = pair
    merged = {k: v for k, v in {**a, **b}.items() if k != knob}
    return (PartialReading({**merged, knob: a[knob]}).complete(),
            PartialReading({**merged, knob: b[knob]}).complete())


def knob_splits(leaves: Sequence[tuple[dict, Verdict]], key=None
                ) -> dict[str, tuple[dict, dict]]:
    """For each knob that decides something on this trace, one witness pair of leaves.

    A knob K *splits* a trace when two readings that differ only in K give different verdicts.
    Two leaves whose assignments differ in K and agree on every other knob both fix are such a
    pair (completing both with the same values for the rest gives two readings that differ only
    in K). Of all such pairs the one whose context (:func:`context_of`) departs least from
    ``draft`` is kept, first found on ties.

    Args:
        leaves: ``(assignment, verdict)`` pairs (see :func:`reading_leaves`).
        key: what makes two verdicts equal (default :func:`verdict_key`, the wire verdict).

    Returns:
        ``{knob id: (assignment a, assignment b)}`` with ``a[K] != b[K]``, in knob order.
    """
    key = key or verdict_key
    keyed = [(a, key(v)) for a, v in leaves]
    best: dict[str, tuple[int, tuple[dict, dict]]] = {}
    for i, (a, ka) in enumerate(keyed):
        for b, kb in keyed[i + 1:]:
            if ka == kb:
                continue
            differing = [k for k in a if k in b and a[k] != b[k]]
            if len(differing) != 1:
                continue
            knob = differing[0]
            cost = len(context_of((a, b), knob))
            if knob not in best or cost < best[knob][0]:
                best[knob] = (cost, (a, b))
    order = {k.id: i for i, k in enumerate(KNOBS)}
    return {k: pair for k, (_, pair) in sorted(best.items(), key=lambda kv: order[kv[0]])}
