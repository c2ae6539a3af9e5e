"""Verdicts: what a trace leaves, under one reading or under all of them at once.

:func:`fold` steps a consumer over a trace and returns one :class:`StepRecord` per event stepped
(the event, the state before and after, the branch, warnings, fatal, producer violations and run
input); it stops at the first fatal (the stream is dead). The per-event views of a trace share its
loop: :func:`evaluate` returns a :class:`Verdict` (final messages in wire form, warnings with their
event index, the fatal outcome if any, the next run input and the agent state) and
:func:`trace_states` the state after each event.

:func:`partition` runs one trace under *every* reading without enumerating them: it starts from
the empty assignment and, whenever a step consults a knob the assignment leaves open, forks one
branch per option. Each leaf is a partial assignment (standing for all readings consistent with
it) and its verdict; leaves with equal verdicts are grouped into verdict classes. Two readings
disagree on the trace exactly when they fall into different classes.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Callable, Iterator, Optional, Sequence

from model.consumer import (ConsumerState, Fatal, StepResult, Warning, initial_state, run_input,
                            step as model_step)
from model.events import Event
from model.frozen import fast_init
from model.producer import Belief, ProducerViolation, advance, check_trace, violations
from model.readings import DRAFT, KNOB_BY_ID, KNOBS, KnobUnset, PartialReading, Reading

__all__ = ["LeavesExceeded", "Verdict", "VerdictClass", "StepRecord", "StepFn", "fold", "step_record", "evaluate",
           "partition", "reading_leaves", "knob_splits", "context_of", "split_readings",
           "trace_states", "verdict_key", "splits_of", "splits_knob", "visible_key",
           "option_classes"]

StepFn = Callable[[ConsumerState, Event, Reading], StepResult]
"""A consumer's step: ``(state, event, reading) -> StepResult`` (:func:`model.consumer.step`, or
a zoo mutant's)."""


@fast_init
@dataclass(frozen=True, slots=True, init=False)
class StepRecord:
    """What one event did, as :func:`fold` records it.

    Attributes:
        index: the event's index in the trace.
        event: the event stepped.
        before, after: the consumer state around the step.
        branch: the branch the step returned on (a key of :data:`model.consumer.BRANCHES`;
            ``""`` from a step function that names none).
        warnings: surfaced at this event, in order.
        fatal: the failure at this event, or None.
        violations: the producer clauses the event breaks
            (:func:`model.producer.violations` in the producer's belief before it) when the fold
            ran with ``monitor=True``; otherwise ``()``.
        run_input: (property, computed on access) the model's next run input after the step,
            :func:`model.consumer.run_input` of ``after``.
    """

    index: int
    event: Event
    before: ConsumerState
    after: ConsumerState
    branch: str
    warnings: tuple[Warning, ...]
    fatal: Optional[Fatal]
    violations: tuple[ProducerViolation, ...] = ()

    @property
    def run_input(self) -> list[dict]:
        """:func:`model.consumer.run_input` of ``after`` (wire messages; a new list each time)."""
        return run_input(self.after)

    @classmethod
    def of(cls, index: int, event: Event, before: ConsumerState, result: StepResult,
           violations: tuple[ProducerViolation, ...] = ()) -> "StepRecord":
        """The record of ``event`` (at ``index``) stepped from ``before`` to ``result``."""
        return cls(index, event, before, result.state, result.branch, result.warnings,
                   result.fatal, violations)


def _walk(events: Sequence[Event], reading: Reading, start: Optional[ConsumerState],
          step: Optional[StepFn]) -> Iterator[tuple[int, Event, ConsumerState, StepResult]]:
    """The one loop over a trace: ``(index, event, state before, step result)`` for each event
    stepped, stopping after the first result with a fatal (see :func:`fold`). A generator, so
    that :func:`evaluate` keeps nothing but the verdict (20,000 events/s and more)."""
    stepper = model_step if step is None else step
    state = start if start is not None else initial_state()
    for index, event in enumerate(events):
        result = stepper(state, event, reading)
        yield index, event, state, result
        if result.fatal is not None:
            return
        state = result.state


def step_record(index: int, before: ConsumerState, event: Event, reading: Reading = DRAFT,
                step: Optional[StepFn] = None, belief: Optional[Belief] = None) -> StepRecord:
    """Step one event and record it: the one-event counterpart of :func:`fold`, for callers
    that step a trace one event at a time (the machines' :class:`~properties.search.machines.
    TraceRunner`); both build the record with :meth:`StepRecord.of`.

    Args:
        index: the event's index in its trace.
        before: the state it is stepped from.
        step: the consumer's step (default :func:`model.consumer.step`).
        belief: the producer's belief before the event, to record the clauses it breaks; None
            records none.

    Returns:
        The :class:`StepRecord`. Raises whatever ``step`` raises (the model's never does for
        protocol input).
    """
    result = (model_step if step is None else step)(before, event, reading)
    return StepRecord.of(index, event, before, result,
                         () if belief is None else violations(belief, event, reading))


def fold(events: Sequence[Event], reading: Reading = DRAFT, start: Optional[ConsumerState] = None,
         step: Optional[StepFn] = None, monitor: bool = False) -> list[StepRecord]:
    """Step ``events`` from ``start`` (default: a fresh consumer) under ``reading``.

    Args:
        step: the consumer's step (default :func:`model.consumer.step`; a zoo mutant passes its
            own, of the same signature).
        monitor: also run the producer monitor (:func:`model.producer.violations` and
            :func:`~model.producer.advance`, from an empty belief) and record each event's
            violations.

    Returns:
        One :class:`StepRecord` per event stepped, in order. The fold stops after the first
        record with a fatal: the run is failed and a halted consumer ignores the rest (the
        model's step names that ``lifecycle.halted``), so the events after it are not stepped
        and get no record (``len(records) < len(events)``; a caller wanting one entry per event
        repeats ``records[-1].after``, as :func:`trace_states` does). Raises whatever ``step``
        raises (the model's never does for protocol input).
    """
    if not monitor:
        return [StepRecord.of(*walked) for walked in _walk(events, reading, start, step)]
    belief, records = Belief(), []
    for index, event, before, result in _walk(events, reading, start, step):
        records.append(StepRecord.of(index, event, before, result,
                                     violations(belief, event, reading)))
        belief = advance(belief, event)
    return records


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
        The :class:`Verdict` of the fold's steps (they stop at the first fatal); never raises for
        protocol input.
    """
    state = start if start is not None else initial_state()
    warnings: list[tuple[int, Warning]] = []
    for index, _, _, result in _walk(events, reading, start, None):
        state = result.state
        if result.warnings:
            warnings.extend((index, w) for w in result.warnings)
        if result.fatal is not None:
            return Verdict(state, tuple(warnings), (index, result.fatal), index + 1)
    return Verdict(state, tuple(warnings), None, len(events))


def trace_states(events: Sequence[Event], reading: Reading = DRAFT,
                 start: Optional[ConsumerState] = None) -> list[ConsumerState]:
    """The consumer state after each event, from the :func:`fold` (``len(events)`` states; after
    a fatal the halted state repeats). Used for checkpoints and step-by-step explanations."""
    states = [result.state for _, _, _, result in _walk(events, reading, start, None)]
    if len(states) < len(events):
        states += [states[-1]] * (len(events) - len(states))
    return states


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


class LeavesExceeded(RuntimeError):
    """:func:`reading_leaves` forked past its ``max_leaves``; ``leaves`` holds the leaves found
    until then (in the order they were found)."""

    def __init__(self, message: str, leaves: list):
        super().__init__(message)
        self.leaves = leaves


def reading_leaves(events: Sequence[Event], start: Optional[ConsumerState] = None,
                   max_leaves: int = 4096, observe=None) -> list[tuple[dict, Verdict]]:
    """Run ``events`` under every reading at once, forking on the knobs the steps consult.

    Args:
        observe: called with each :class:`~model.consumer.StepResult` the fork computes (every
            step of every branch of the fork, once; e.g. to collect the branches, codes and
            clauses a trace exercised), or None.

    Returns:
        ``(assignment, verdict)`` leaves: each assignment (``{knob id: option}``) stands for every
        reading consistent with it, and those readings all give ``verdict``. Siblings of a fork
        share every earlier choice. The first leaf is the one that contains ``draft``.

    Raises:
        LeavesExceeded: (a RuntimeError) past ``max_leaves`` leaves (a guard against runaway
            forking), with the leaves found so far.
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
                result = model_step(state, events[index], partial)
            except KnobUnset as unset:
                knob = KNOB_BY_ID[unset.knob_id]
                for option in reversed(knob.option_names):
                    work.append(({**assignment, knob.id: option}, state, index, warnings, fatal))
                forked = True
                break
            if observe is not None:
                observe(result)
            state = result.state
            if result.warnings:
                warnings = warnings + tuple((index, w) for w in result.warnings)
            if result.fatal is not None:
                fatal = (index, result.fatal)
            index += 1
        if forked:
            if len(work) + len(leaves) > max_leaves:
                raise LeavesExceeded(f"reading exploration exceeded {max_leaves} leaves", leaves)
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


# --- splits: a knob that decides a trace's verdict ------------------------------------------

def splits_of(events: Sequence[Event]) -> dict[str, tuple[dict, dict]]:
    """The knobs that split ``events`` (see :func:`model.verdict.knob_splits`)."""
    return knob_splits(reading_leaves(events))


def visible_key(verdict: Verdict) -> str:
    """What a consumer that reports no warnings shows of a verdict, as canonical text: the
    messages, whether and at which event the run fails, the run input, the agent state and the
    run status (:meth:`model.verdict.Verdict.to_json` without ``warnings`` and without the
    fatal's code and clause). Two verdicts with equal keys look the same to such a peer."""
    doc = verdict.to_json(detail=False)
    del doc["warnings"]
    if doc["fatal"] is not None:
        doc["fatal"] = {"atEvent": doc["fatal"]["atEvent"]}
    return json.dumps(doc, sort_keys=True, separators=(",", ":"))


def splits_knob(events: Sequence[Event], knob: str, conformant: bool = True,
                max_context: Optional[int] = None) -> bool:
    """True when ``knob`` splits ``events`` (and, with ``conformant``, the trace breaks no
    producer clause; with ``max_context``, in a context departing from draft in at most that
    many knobs): the predicate shrinking preserves."""
    if not events:
        return False
    if conformant and check_trace(events):
        return False
    pair = splits_of(events).get(knob)
    if pair is None:
        return False
    return max_context is None or len(context_of(pair, knob)) <= max_context


def option_classes(events: Sequence[Event], knob: str, base: Reading) -> tuple[int, int]:
    """How finely ``events`` tells the options of ``knob`` apart, every other knob as in
    ``base``: ``(f, v)``, the number of different verdicts the options give (``f``, by
    :func:`model.verdict.verdict_key`) and of different verdicts a peer reporting no warnings
    sees (``v``, by :func:`visible_key`). Both are between 1 and the number of options."""
    verdicts = [evaluate(events, base.with_(**{knob: option}))
                for option, _ in KNOB_BY_ID[knob].options]
    return (len({verdict_key(v) for v in verdicts}), len({visible_key(v) for v in verdicts}))
