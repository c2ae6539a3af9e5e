"""Spec coverage of a set of traces: like code coverage, but of the draft.

For each trace, :func:`trace_coverage` steps it under *every* reading at once (forking where a
step consults an open question, as :func:`model.verdict.reading_leaves` does) and records what
the steps exercised:

* ``branch``: the step branches taken (:data:`model.branches.BRANCH_LIST`; the notice branches
  through the warnings they surface, ``run-input.strip`` when a state holding activity computes
  its run input);
* ``clause``: the clause ids of the branches taken, of the warnings and fatals surfaced, and of
  the producer clauses the trace breaks;
* ``knob``: the knob options the steps consulted (``Q1=merge``...: an option is exercised when a
  step consulted its knob and the trace went on under it; for the producer's knobs Q2 and
  Q4-opener, when the producer monitor consulted it) and, separately, ``split``: the knobs whose
  options gave different verdicts on some trace (:func:`model.verdict.knob_splits`; for the
  producer's knobs, different violations);
* ``code``: the warning and fatal codes surfaced (:data:`model.codes.CODE_LIST`);
* ``violation``: the producer violations (:data:`model.producer.ADVERSARIAL_KINDS`, from the
  monitor :func:`model.producer.check_trace` under ``draft``);
* the surface dimensions of :mod:`properties.surface` (``op``, ``patch``, ``malformed``,
  ``role``, ``ms``; ``key``: the member names JavaScript objects treat specially in content,
  metadata and patches; ``ref``: references from text and tool events aimed at an activity),
  read from the events the consumer stepped under ``draft``.

:class:`Coverage` accumulates counts; :func:`report` gives, per dimension, what was hit, how
often, and what never was, against the universe :func:`universe` declares; :func:`render_text`
and :func:`totals_line` print it.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Iterable, Optional, Sequence

from model.branches import BRANCH_LIST, BRANCHES
from model.codes import CODE_LIST
from model.consumer import step as model_step
from model.events import ActivityDelta, Event, Malformed, MessagesSnapshot, StateDelta
from model.producer import ADVERSARIAL_KINDS, PRODUCER_KNOBS, check_trace
from model.readings import DRAFT, KNOB_BY_ID, KNOBS, RecordingReading
from model.text import TEXT_WIDTH, fold_words
from model.verdict import LeavesExceeded, Verdict, fold, knob_splits, reading_leaves
from properties.surface import (FEATURE_UNIVERSE, malformed_feature, messages_snapshot_features,
                                op_features, patch_feature, reference_features, role_feature,
                                special_key_features)

__all__ = ["Coverage", "trace_coverage", "coverage_of", "universe", "report", "render_text",
           "totals_line", "DIMENSIONS", "exploration_traces"]

DIMENSIONS: tuple[str, ...] = ("clause", "branch", "knob", "split", "code", "violation", "op",
                               "patch", "malformed", "role", "ms", "key", "ref")
"""The dimensions of the report, in the order it prints them."""


def universe() -> dict[str, tuple[str, ...]]:
    """Everything a trace could exercise, by dimension (see the module docstring). The clause
    universe is the clauses a step can exercise in the model: those the branches implement and
    those the producer monitor checks."""
    clauses = sorted({c for b in BRANCH_LIST for c in b.clauses} | set(ADVERSARIAL_KINDS.values()))
    return {
        "clause": tuple(clauses),
        "branch": tuple(b.id for b in BRANCH_LIST),
        "knob": tuple(f"{k.id}={o}" for k in KNOBS for o in k.option_names),
        "split": tuple(k.id for k in KNOBS),
        "code": tuple(c.code for c in CODE_LIST),
        "violation": tuple(ADVERSARIAL_KINDS),
        **FEATURE_UNIVERSE,
    }


@dataclass
class Coverage:
    """Counts of what a set of traces exercised.

    Attributes:
        traces: how many traces were added.
        hits: ``{dimension: Counter(item -> how many traces exercised it)}``.
        leaves_capped: traces whose reading fork hit the leaf cap (their knob coverage is partial).
    """

    traces: int = 0
    hits: dict[str, Counter] = field(default_factory=lambda: {d: Counter() for d in DIMENSIONS})
    leaves_capped: int = 0

    def add(self, items: dict[str, set]) -> None:
        """Count one trace's items (``{dimension: set of items}``)."""
        self.traces += 1
        for dim, found in items.items():
            self.hits[dim].update(found)

    def merge(self, other: "Coverage") -> "Coverage":
        """This coverage and ``other``'s together (a new value)."""
        out = Coverage(self.traces + other.traces, leaves_capped=self.leaves_capped +
                       other.leaves_capped)
        for d in DIMENSIONS:
            out.hits[d] = self.hits[d] + other.hits[d]
        return out


def _fork_walk(events: Sequence[Event], items: dict[str, set], max_leaves: int
               ) -> tuple[list[tuple[dict, Verdict]], bool]:
    """Step ``events`` under every reading (:func:`model.verdict.reading_leaves`), recording
    branches, clauses and codes into ``items``; returns the leaves and whether the cap stopped
    the fork. A leaf that failed the run before the last event also exercises the halted
    consumer (``lifecycle.halted``); one whose final state holds activity, run-input stripping."""
    branches, clauses, codes = items["branch"], items["clause"], items["code"]

    def observe(result) -> None:
        if result.branch:
            branches.add(result.branch)
            clauses.update(BRANCHES.get(result.branch, ()))
        for w in result.warnings:
            codes.add(w.code)
            clauses.add(w.clause)
            if w.branch:  # a notice branch (member.strip...) is taken with its clauses
                branches.add(w.branch)
                clauses.update(BRANCHES.get(w.branch, ()))
        if result.fatal is not None:
            codes.add(result.fatal.code)
            clauses.add(result.fatal.clause)

    try:
        leaves, capped = reading_leaves(events, max_leaves=max_leaves, observe=observe), False
    except LeavesExceeded as exc:
        leaves, capped = exc.leaves, True
    for _, verdict in leaves:
        if verdict.fatal is not None and verdict.fatal[0] + 1 < len(events):
            branches.add(model_step(verdict.state, events[verdict.fatal[0] + 1], DRAFT).branch)
        elif any(m.is_activity for m in verdict.state.messages) and not verdict.state.halted:
            branches.add("run-input.strip")
            clauses.update(BRANCHES["run-input.strip"])
    return leaves, capped


def _surface(events: Sequence[Event], items: dict[str, set]) -> None:
    """The surface features of the events the consumer steps under ``draft``."""
    for record in fold(events):
        event, before = record.event, record.before
        if isinstance(event, ActivityDelta):
            items["op"].update(op_features(event.patch))
            held = before.message(event.message_id)
            if held is not None and held.is_activity:
                feature = patch_feature(held.content, event.patch)
                if feature:
                    items["patch"].add(feature)
        elif isinstance(event, StateDelta):
            items["op"].update(op_features(event.delta))
        elif isinstance(event, Malformed):
            feature = malformed_feature(event)
            if feature:
                items["malformed"].add(feature)
        elif isinstance(event, MessagesSnapshot):
            items["ms"].update(messages_snapshot_features(event, before))
        feature = role_feature(event, before)
        if feature:
            items["role"].add(feature)
        items["key"].update(special_key_features(event))
        items["ref"].update(reference_features(event, before))


def _producer(events: Sequence[Event], items: dict[str, set]) -> None:
    """The producer monitor's violations under ``draft`` and under each other option of the
    knobs its duties read (:data:`model.producer.PRODUCER_KNOBS`; a violation only some
    producer reading makes, such as an activity echoed in RUN_STARTED.input under
    Q17=strip-echo, counts), and those knobs' options: an option is exercised when the monitor
    consulted its knob on the trace, and the knob splits when its options give different
    violations."""
    recorder = RecordingReading(DRAFT)
    found = check_trace(events, recorder)
    draft = DRAFT.as_dict()
    consulted = set(recorder.consulted)
    outcomes_seen = [found]
    for knob_id in PRODUCER_KNOBS:
        knob = KNOB_BY_ID[knob_id]
        if knob.attr not in consulted:
            continue
        items["knob"].update(f"{knob_id}={o}" for o in knob.option_names)
        outcomes = {tuple(found)}
        for o in knob.option_names:
            if o != draft[knob_id]:
                other = check_trace(events, DRAFT.with_(**{knob_id: o}))
                outcomes.add(tuple(other))
                outcomes_seen.append(other)
        if len(outcomes) > 1:
            items["split"].add(knob_id)
    for outcome in outcomes_seen:
        for _, violation in outcome:
            items["violation"].add(violation.kind)
            items["clause"].add(violation.clause)


def trace_coverage(events: Sequence[Event], max_leaves: int = 512) -> tuple[dict[str, set], bool]:
    """What one trace exercises: ``({dimension: set of items}, capped)``.

    Args:
        events: the trace.
        max_leaves: cap of the reading fork (past it, the knob and split items are those of the
            leaves found so far, and ``capped`` is True).
    """
    items: dict[str, set] = {d: set() for d in DIMENSIONS}
    leaves, capped = _fork_walk(events, items, max_leaves)
    for assignment, _ in leaves:
        items["knob"].update(f"{k}={v}" for k, v in assignment.items())
    if len(leaves) > 1:
        items["split"].update(knob_splits(leaves))
    _producer(events, items)
    _surface(events, items)
    return items, capped


def coverage_of(traces: Iterable[Sequence[Event]], into: Optional[Coverage] = None,
                max_leaves: int = 512) -> Coverage:
    """The :class:`Coverage` of ``traces`` (added to ``into`` when given, which is returned)."""
    cov = into if into is not None else Coverage()
    seen: dict = {}  # a trace drawn twice is walked once
    for events in traces:
        key = tuple(events)
        try:
            items, capped = seen[key]
        except KeyError:
            items, capped = seen[key] = trace_coverage(events, max_leaves)
        except TypeError:  # an unhashable event: walk it
            items, capped = trace_coverage(events, max_leaves)
        cov.add(items)
        cov.leaves_capped += capped
    return cov


def exploration_traces(explored) -> list[tuple[Event, ...]]:
    """The traces a breadth-first search (:class:`properties.search.report.ExploreReport`) exercised:
    the shortest trace to every leaf of its search tree (a node no other node was first reached
    from; every other node's trace is a prefix of one of these), then the witnesses of its
    splits and property violations, in node order. Built from the report's parent map, one
    event per node (no re-execution per trace)."""
    parents = explored.parents
    count = len(parents)
    inner: set[int] = set()
    chain: list = [None] * count  # (parent, event) per node
    for i in range(1, count):
        chain[i] = parents[i]
        inner.add(chain[i][0])
    out: list[tuple[Event, ...]] = []
    for i in range(1, count):
        if i in inner:
            continue
        events, node = [], i
        while node:
            parent, event = chain[node]
            events.append(event)
            node = parent
        out.append(tuple(reversed(events)))
    out += [tuple(trace) for trace, _ in explored.splits.values()]
    out += [tuple(trace) for trace, _ in explored.violations.values()]
    return out


def report(cov: Coverage) -> dict:
    """The coverage as JSON: ``{"traces": n, "dimensions": {dim: {"hit": k, "total": m,
    "counts": {item: traces}, "never": [item, ...]}}}``, items in universe order (an item hit
    outside the universe is counted and listed under ``"outside"``)."""
    out: dict = {"traces": cov.traces, "leavesCapped": cov.leaves_capped, "dimensions": {}}
    for dim, items in universe().items():
        counts = cov.hits[dim]
        known = set(items)
        out["dimensions"][dim] = {
            "hit": sum(1 for i in items if counts.get(i)),
            "total": len(items),
            "counts": {i: counts[i] for i in items if counts.get(i)},
            "never": [i for i in items if not counts.get(i)],
            "outside": sorted(i for i in counts if i not in known),
        }
    return out


_LABELS = {"clause": "clauses", "branch": "branches", "knob": "knob options", "split": "knobs split",
           "code": "codes", "violation": "producer violations", "op": "ops x pointer x value",
           "patch": "patch length x outcome", "malformed": "malformed member x type",
           "role": "role x event", "ms": "MESSAGES_SNAPSHOT cases",
           "key": "special keys x place", "ref": "references aimed at an activity"}


def totals_line(doc: dict) -> str:
    """One line of totals from :func:`report`'s JSON, e.g. ``coverage of 3000 traces: clauses
    80/95, branches 30/36, ...``."""
    parts = [f"{_LABELS[d]} {v['hit']}/{v['total']}" for d, v in doc["dimensions"].items()]
    return f"coverage of {doc['traces']} traces: " + ", ".join(parts)


def render_text(doc: dict, never_limit: int = 40, width: Optional[int] = TEXT_WIDTH) -> str:
    """The report as text: the totals line, then per dimension its hit/total and what was never
    exercised (at most ``never_limit`` items each; the JSON has them all); each line folded at
    word boundaries within ``width`` columns (:func:`model.text.fold_words`; None: unfolded)."""
    lines = fold_words(totals_line(doc), width, "  ")
    if doc.get("leavesCapped"):
        lines.append(f"  ({doc['leavesCapped']} traces forked past the leaf cap: knob coverage "
                     "partial)")
    for dim, v in doc["dimensions"].items():
        lines.append(f"{_LABELS[dim]}: {v['hit']}/{v['total']}")
        never = v["never"]
        if never:
            shown = ", ".join(never[:never_limit])
            more = f" (+{len(never) - never_limit} more)" if len(never) > never_limit else ""
            lines += fold_words(f"never: {shown}{more}", width, "    ", "  ")
    return "\n".join(lines)
