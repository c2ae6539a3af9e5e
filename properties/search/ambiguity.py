"""The ambiguity search: conformant traces on which faithful readings of the draft disagree.

Hypothesis generates conformant traces from the producer model (seeded, no example database, so
the same seed gives the same traces). Each trace is run under every reading at once
(:func:`model.verdict.reading_leaves`); every knob that splits the trace (two readings differing
only in that knob give different verdicts) is an *ambiguity* of the draft, and the trace is its
witness. The engine keeps, per knob, the best witness seen: one from the exhaustive breadth-first
search first (:func:`merge_witnesses` with ``exhaustive=True``: it does not depend on the seed or
the budget, and is a shortest one), then one whose split needs the fewest knobs away from draft,
then the shortest, then the first by canonical wire text; never by the order a seeded search
happened to find them in.

Shrinking and export are the ``counterexamples`` package's business; this module only finds.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, Optional

from hypothesis import HealthCheck, Phase, given, seed as hseed, settings

from model.events import Event
from model.producer import DEFAULT_VOCABULARY, Vocabulary
from model.verdict import context_of, splits_of
from model.wire import dump_jsonl
from properties.strategies import conformant_traces, fixed_constants

__all__ = ["Witness", "SearchReport", "search_ambiguities", "merge_witnesses"]


@dataclass(frozen=True)
class Witness:
    """A trace on which ``knob`` decides the verdict.

    Attributes:
        knob: the knob id.
        events: the trace.
        pair: two assignments ``({knob id: option}, {...})`` that differ only in ``knob`` and give
            different verdicts on ``events``.
        exhaustive: True when the exhaustive breadth-first search found it (the same whatever
            the seed or budget); such a witness is kept over any other for its knob.
    """

    knob: str
    events: tuple[Event, ...]
    pair: tuple[dict, dict]
    exhaustive: bool = False


@dataclass
class SearchReport:
    """What a search did.

    Attributes:
        witnesses: ``{knob id: Witness}``, the best per knob (see :func:`_rank`), in knob
            order.
        examples: traces generated and checked.
        events: events stepped (under all readings) in total.
        stopped_by: ``"examples"`` (ran the requested number), ``"budget"`` (time ran out) or
            ``"exhausted"`` (fewer distinct traces exist than requested).
        seconds: wall-clock time (not written to any output file: it varies between runs).
    """

    witnesses: dict[str, Witness] = field(default_factory=dict)
    examples: int = 0
    events: int = 0
    stopped_by: str = "examples"
    seconds: float = 0.0


class _BudgetExhausted(Exception):
    pass


def _rank(w: Witness) -> tuple:
    """Better witnesses first: one the exhaustive search found (seed-independent), then a split
    in draft context, then shorter, then by canonical wire text (a total order: the kept witness
    does not depend on the order candidates are offered in)."""
    return (not w.exhaustive, len(context_of(w.pair, w.knob)), len(w.events),
            dump_jsonl(w.events))


def _better(new: Witness, old: Optional[Witness]) -> bool:
    return old is None or _rank(new) < _rank(old)


def merge_witnesses(report: SearchReport, traces: dict, exhaustive: bool = False) -> list[str]:
    """Offer further witness traces to ``report``; each replaces the report's witness for its
    knob when it ranks better (:func:`_rank`).

    Args:
        report: the search report whose ``witnesses`` are updated in place (and re-sorted in
            knob order).
        traces: ``{knob id: trace}``, e.g. from the all-readings state machine; a trace the knob
            does not split is ignored.
        exhaustive: True for the traces of the exhaustive breadth-first search
            (:func:`properties.search.explore.explore`): they are kept over any seeded search's, so the
            findings of a run do not depend on its seed or budget for the knobs the BFS reaches.

    Returns:
        The knobs whose witness changed, in knob order.
    """
    changed = []
    for knob, trace in traces.items():
        pair = splits_of(trace).get(knob)
        if pair is None:
            continue
        candidate = Witness(knob, tuple(trace), pair, exhaustive)
        if _better(candidate, report.witnesses.get(knob)):
            report.witnesses[knob] = candidate
            changed.append(knob)
    report.witnesses = dict(sorted(report.witnesses.items(), key=lambda kv: _knob_order(kv[0])))
    return sorted(changed, key=_knob_order)


@fixed_constants()  # the same seed draws the same traces whatever was imported
def search_ambiguities(seed: int = 0, examples: int = 400, budget: Optional[float] = None,
                       vocabulary: Vocabulary = DEFAULT_VOCABULARY, max_events: int = 10,
                       progress: Optional[Callable[[int, int], None]] = None) -> SearchReport:
    """Generate conformant traces and collect, per knob, the shortest trace it splits.

    Args:
        seed: Hypothesis seed; the same seed, vocabulary and limits give the same witnesses.
        examples: how many traces to generate.
        budget: seconds after which generation stops early (reported as ``stopped_by="budget"``,
            and then the output depends on machine speed).
        vocabulary: the producer's finite world.
        max_events: longest trace generated.
        progress: called as ``progress(done, total)`` after each trace.

    Returns:
        A :class:`SearchReport`.
    """
    report = SearchReport()
    started = time.monotonic()

    @hseed(seed)
    @settings(max_examples=examples, database=None, deadline=None, derandomize=False,
              phases=[Phase.generate], suppress_health_check=list(HealthCheck))
    @given(conformant_traces(vocabulary=vocabulary, max_events=max_events))
    def examine(trace):
        if budget is not None and time.monotonic() - started > budget:
            raise _BudgetExhausted()
        report.examples += 1
        report.events += len(trace)
        for knob, pair in splits_of(trace).items():
            candidate = Witness(knob, trace, pair)
            if _better(candidate, report.witnesses.get(knob)):
                report.witnesses[knob] = candidate
        if progress is not None:
            progress(report.examples, examples)

    try:
        examine()
    except _BudgetExhausted:
        report.stopped_by = "budget"
    else:
        if report.examples < examples:
            report.stopped_by = "exhausted"  # Hypothesis ran out of distinct traces
    report.seconds = time.monotonic() - started
    report.witnesses = dict(sorted(report.witnesses.items(), key=lambda kv: _knob_order(kv[0])))
    return report


def _knob_order(knob_id: str) -> int:
    from model.readings import KNOBS
    return [k.id for k in KNOBS].index(knob_id)
