"""Classes of readings: the step forked over the knobs it consults, and the helpers that name,
extend and represent a class.

A *class* is a partial assignment of knobs, sorted (knob id, option) pairs, standing for
every reading consistent with it (:class:`~model.readings.PartialReading`). One step under every
reading at once is its decision tree over the knobs (:func:`step_leaves`); the leaves a class
reaches (:func:`_select`) either agree (the class stays one) or differ (sibling classes, and
the knobs that differ are splits, :func:`step_splits` for one reading's context). Producer
conformance is forked the same way over the producer's own knobs (:data:`PRODUCER_READINGS`).
Clauses: the knobs' Q-ids (:data:`model.readings.KNOBS`).
"""
from __future__ import annotations

from dataclasses import replace
from typing import Callable

from model.consumer import ConsumerState, step as reference_step
from model.events import Event
from model.producer import PRODUCER_KNOBS, PRODUCER_ONLY_KNOBS
from model.readings import DRAFT, KNOB_BY_ID, KNOBS, PartialReading, Reading, RecordingReading
from model.verdict import Verdict, knob_splits

__all__ = ["PRODUCER_READINGS", "step_leaves", "step_splits"]


def step_splits(state: ConsumerState, event: Event, base: Reading = DRAFT,
                step_fn: Callable = reference_step) -> dict:
    """The knobs on which one step of ``state`` under ``event`` splits, in ``base``'s context.

    Forks the step on every knob it consults and returns ``{knob id: (assignment a, assignment
    b)}`` for pairs differing only in that knob whose results (messages, state, warnings, fatal)
    differ (see :func:`model.verdict.knob_splits`), keeping only pairs that agree with ``base``
    on every other knob they fix."""
    leaves = [(assignment, Verdict(result.state, tuple((0, w) for w in result.warnings),
                                   (0, result.fatal) if result.fatal else None, 1))
              for assignment, result in step_leaves(state, event, step_fn)]
    if len(leaves) < 2:
        return {}
    splits = knob_splits(leaves, key=_step_key)
    # Keep only pairs whose other knobs agree with the base reading: the state stepped from is
    # the base reading's, so only there is the pair's history the explored one.
    values = base.as_dict()
    return {k: (a, b) for k, (a, b) in splits.items()
            if all(values[x] == v for x, v in {**a, **b}.items() if x != k)}


def step_leaves(state: ConsumerState, event: Event, step_fn: Callable = reference_step
                ) -> list[tuple[dict, object]]:
    """One step under every reading at once: the step's decision tree over the knobs.

    Returns ``[(assignment, StepResult)]``: each assignment (``{knob id: option}``, the knobs
    consulted on that path, in the order consulted) stands for every reading consistent with
    it, and those readings all give that result. Deterministic order: depth first, options in
    knob order (the order of forking at each knob a run consults,
    :class:`~model.readings.PartialReading`).

    Each run of ``step_fn`` takes the first option of every knob its path has not fixed and
    records the knobs it consults (:class:`~model.readings.RecordingReading`), so that every run
    ends in a leaf; then each other option of each knob it consulted beyond the fixed ones is
    tried, the last consulted first. The step must read the reading only through its knobs."""
    leaves: list = []
    _expand(state, event, step_fn, (), leaves)
    return leaves


def _expand(state: ConsumerState, event: Event, step_fn: Callable, fixed: tuple,
            leaves: list) -> None:
    """:func:`step_leaves` below the path ``fixed``: a module function rather than a closure
    that calls itself, which would be a reference cycle holding every leaf until the cyclic
    collector (paused during a search) found it."""
    recorder = RecordingReading(_first_options(fixed))
    result = step_fn(state, event, recorder)
    reading = recorder.base
    path = tuple((_KNOB_OF_ATTR[a], getattr(reading, a))
                 for a in dict.fromkeys(recorder.consulted) if a in _KNOB_OF_ATTR)
    leaves.append((dict(path), result))
    for j in range(len(path) - 1, len(fixed) - 1, -1):
        knob_id = path[j][0]
        for option in KNOB_BY_ID[knob_id].option_names[1:]:
            _expand(state, event, step_fn, path[:j] + ((knob_id, option),), leaves)


def _first_options(fixed: tuple) -> Reading:
    """The complete reading that takes ``fixed`` (``((knob id, option), ...)``) and each other
    knob's first option (memoised)."""
    found = _FIRST_OPTIONS.get(fixed)
    if found is None:
        options = {k.attr: k.option_names[0] for k in KNOBS}
        options.update((KNOB_BY_ID[k].attr, v) for k, v in fixed)
        found = _FIRST_OPTIONS[fixed] = replace(DRAFT, **options)
    return found


_FIRST_OPTIONS: dict = {}


def _step_key(v: Verdict):
    """What one step leaves that a verdict shows: the messages (wire-visible members), agent
    state, run status, warnings and fatal (codes, message ids, clauses). Hashable and cheap: the
    exploration compares these on every edge."""
    st = v.state
    return (tuple((m.id, m.role, m.content, m.activity_type, m.metadata, m.owner, m.other)
                  for m in st.messages), st.state, st.run, st.halted,
            tuple((w.code, w.message_id, w.clause) for _, w in v.warnings),
            (v.fatal[1].code, v.fatal[1].clause) if v.fatal else None)


def _select(assignments: tuple, groups: tuple, cls: tuple) -> list[tuple[tuple, int]]:
    """The leaves of a step's decision tree that class ``cls`` reaches, as ``[(class, leaf
    index)]``. ``assignments`` are the leaves' assignments (tuples of ``(knob id, option)``) and
    ``groups`` number the leaves by result (leaves with equal results share a number). One
    entry, with ``cls`` unchanged, when every reading of the class gives the same result; else
    one per reachable leaf, its class extending ``cls`` by the leaf's assignment."""
    fixed = dict(cls)
    reached = [i for i, a in enumerate(assignments) if all(fixed.get(x, v) == v for x, v in a)]
    if len({groups[i] for i in reached}) == 1:
        return [(cls, reached[0])]
    return [(_class_of(cls, tuple((x, v) for x, v in assignments[i] if x not in fixed)), i)
            for i in reached]


_KNOB_OF_ATTR = {k.attr: k.id for k in KNOBS}


_ATTR_OF_KNOB = {k.id: k.attr for k in KNOBS}


_OPTIONS_OF_ATTR = {k.attr: k.option_names for k in KNOBS}


_KNOB_ORDER = {k.id: i for i, k in enumerate(KNOBS)}


_FULL = ("*",)
"""The class of a single-reading exploration: the reading itself (never forked)."""


_REPRESENTATIVES: dict = {}


def _forked(reading: Reading, options: dict) -> Reading:
    """``reading`` with the knobs ``options`` names (reading attribute -> option) set so
    (memoised: the sweep forks the same checks over the same options many times)."""
    key = (reading, tuple(options.items()))
    found = _FORKED.get(key)
    if found is None:
        if len(_FORKED) >= 4096:
            _FORKED.clear()
        found = _FORKED[key] = replace(reading, **options)
    return found


_FORKED: dict = {}


def _representative(cls: tuple) -> Reading:
    """The reading standing for a class: its options, ``draft`` for the knobs it leaves free
    (memoised for the last :data:`_REPRESENTATIVES_MAX` classes asked for)."""
    r = _REPRESENTATIVES.get(cls)
    if r is None:
        if len(_REPRESENTATIVES) >= _REPRESENTATIVES_MAX:
            _REPRESENTATIVES.clear()
        r = _REPRESENTATIVES[cls] = PartialReading(dict(cls)).complete()
    return r


_REPRESENTATIVES_MAX = 1 << 16


_PAIRS: dict = {}
"""Each ``(knob id, option)`` pair of a class, one object per value (a few dozen in all), so
that a class tuple holds pointers to shared pairs, not pairs of its own (:func:`_class_of`)."""


def _pair(pair: tuple) -> tuple:
    """The one shared object equal to ``pair`` (:data:`_PAIRS`)."""
    return _PAIRS.setdefault(pair, pair)


def _class_of(cls: tuple, ext: tuple) -> tuple:
    """A class (sorted ``(knob id, option)`` pairs, each the shared object of :func:`_pair`)
    extended by ``ext``."""
    if not ext:
        return cls
    return tuple(sorted(cls + tuple(map(_pair, ext)), key=lambda kv: _KNOB_ORDER[kv[0]]))


_FORKED_PRODUCER_KNOBS = tuple(k for k in PRODUCER_KNOBS if k not in PRODUCER_ONLY_KNOBS)
"""The producer knobs conformance is forked on. A producer-only knob's draft option is its most
permissive (its others only add violations) and the consumer never reads it, so the traces
conformant under some producer reading are those under its draft option: it stays at draft
here, and :func:`model.producer.conformance_splits` settles it."""


def _producer_combinations() -> tuple[tuple, ...]:
    """Every assignment of the forked producer knobs, as sorted ``(knob id, option)`` pairs."""
    combos = [()]
    for knob_id in _FORKED_PRODUCER_KNOBS:
        combos = [c + ((knob_id, o),) for c in combos for o in KNOB_BY_ID[knob_id].option_names]
    return tuple(combos)


PRODUCER_READINGS: tuple[tuple, ...] = _producer_combinations()
"""The producer's possible readings as far as its obligations go (one per combination of
:data:`PRODUCER_KNOBS` options)."""


_DRAFT_PRODUCER = tuple((k, DRAFT.as_dict()[k]) for k in _FORKED_PRODUCER_KNOBS)
