"""The ``peer check`` job: run traces through an adapter, classify each, build the knob table and
shrink the divergences into findings (:class:`PeerReport`, :func:`check_peer`)."""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Optional, Sequence

from model.wire import dump_jsonl
from counterexamples.findings import PeerDivergenceFinding
from counterexamples.peers.adapter import AdapterProcess
from counterexamples.peers.classify import (COMBINED, PARTS, JointReadings,
                                            KnobBehaviour, Observed, TraceResult, classify,
                                            evidence_of, joint_readings, knob_table, observed_of)
from counterexamples.peers.divergence import (divergence_finding, locate_divergence,
                                              shrink_divergence, divergence_signature, unshrunk_finding)
from counterexamples.peers.traces import PeerTrace


# --- the two jobs -------------------------------------------------------------------------------

_REPORTED = ("id", "source", "clauses", "relatedClauses", "divergesAt", "event", "branch",
             "nearest", "aspects", "divergenceKind", "stoppedAt", "outsideDraft", "divergesIn",
             "conformant", "length", "closing", "shrunk", "minimal")
"""The members of a divergence finding the report lists (in this order)."""


@dataclass
class PeerReport:
    """What a check or search found.

    Attributes:
        adapter: the adapter as given; peer: what it calls itself (first answer's ``peer``).
        results: one :class:`TraceResult` per trace, in order.
        knobs: :func:`knob_table` over the results.
        findings: divergence findings (:func:`divergence_finding`), by id.
        compared: the parts of a verdict compared (any answer that reports a part makes it
            compared; each answer is compared on the parts it reports).
        stopped_by: for a search: ``"traces"`` (all generated traces were run and every
            divergence shrunk) or ``"budget"`` (the budget cut generation, feeding or shrinking).
        generated: for a search: ``{"stateful": n, "bfs": n}`` traces generated.
        seconds: wall time (reports on screen only; never in files).
        starts: how many times the adapter process was started.
        skipped: for a check: the trace files that could not be read, each as one line naming
            the file, line and field (:func:`load_traces` with ``skipped``); they were left out.
        scanned: how many results :meth:`note_first_divergence` has looked at.
        joint: :func:`joint_readings` over the results (the readings consistent with every
            answer; the knob table is read from it).
        unexamined: for a search under a budget, the divergent traces left unlocated because
            :data:`LOCATE_PER_KIND` shorter ones of their kind were (they point to no finding).
        first_divergence: ``{"traces": n, "seconds": s}``: how many traces had been checked, and
            how long after the start, when the first divergent answer came in (None: none
            did); the seconds are on screen only.
    """

    adapter: str
    peer: str = ""
    results: list[TraceResult] = field(default_factory=list)
    knobs: list[KnobBehaviour] = field(default_factory=list)
    findings: dict[str, PeerDivergenceFinding] = field(default_factory=dict)
    compared: list[str] = field(default_factory=list)
    stopped_by: str = "traces"
    generated: dict = field(default_factory=dict)
    seconds: float = 0.0
    starts: int = 0
    joint: JointReadings = field(default_factory=JointReadings)
    first_divergence: Optional[dict] = None
    scanned: int = 0
    skipped: list[str] = field(default_factory=list)
    unexamined: int = 0

    def note_first_divergence(self, started: float) -> None:
        """Record :attr:`first_divergence` when the results hold the first divergent one."""
        if self.first_divergence is not None:
            return
        for n in range(self.scanned + 1, len(self.results) + 1):
            if self.results[n - 1].classification.kind == "divergence":
                self.first_divergence = {"traces": n,
                                         "seconds": round(time.monotonic() - started, 2)}
                return
        self.scanned = len(self.results)

    def counts(self) -> dict:
        """``{"traces", "draft", "reading", "deviation", "divergence", "error"}``: traces per
        class; ``deviation``: of the ``reading`` ones, those the peer matches only through a
        deviation (:func:`model.readings.basis_of`), so not conformant (issue 39)."""
        from model.readings import basis_of
        out = {"traces": len(self.results), "draft": 0, "reading": 0, "deviation": 0,
               "divergence": 0, "error": 0}
        for r in self.results:
            out[r.classification.kind] += 1
            if r.classification.kind == "reading" and \
                    basis_of(r.classification.matches).startswith("deviation"):
                out["deviation"] += 1
        return out

    def to_json(self) -> dict:
        """The report as JSON (no timings: the same seed gives the same text)."""
        return {
            "tool": "activity-check", "adapter": self.adapter, "peer": self.peer,
            "compared": self.compared, "counts": self.counts(),
            **({"generated": self.generated, "checked": len(self.results),
                "stoppedBy": self.stopped_by} if self.generated else {}),
            "traces": [r.to_json() for r in self.results],
            "knobs": [{"knob": k.knob, "status": k.status, "behavesAs": k.behaves_as,
                       "options": k.options, "evidence": k.evidence} for k in self.knobs],
            "readings": self.joint.to_json(),
            **({"skipped": list(self.skipped)} if self.skipped else {}),
            **({"unexamined": self.unexamined} if self.unexamined else {}),
            "firstDivergence": None if self.first_divergence is None else
            {"traces": self.first_divergence["traces"]},
            "divergences": [{key: f[key] for key in _REPORTED if key in f}
                            for f in self.findings.values()],
        }


def run_batch(adapter: AdapterProcess, traces: Sequence[PeerTrace]) -> list[TraceResult]:
    """Put ``traces`` to the adapter as one pipelined batch and classify each answer."""
    replies = adapter.request_many([(t.wire, t.state, t.id) for t in traces])
    return [TraceResult(t, r, classify(t.events, r, t.state))
            for t, r in zip(traces, replies, strict=True)]


def finish_report(report: PeerReport, adapter: AdapterProcess, shrink: bool,
                  deadline: Optional[float], max_findings: int) -> None:
    """Knob table, then shrink divergences into findings (shortest first; each divergent trace
    once for every part of the verdict no reading gives as the peer does,
    :attr:`Classification.divergent`, so one part does not hide another; one finding per
    root cause (:func:`divergence_signature`: branch, what the peer did there, and the kind,
    before and after shrinking), at most ``max_findings`` shrunk, until ``deadline``, each new
    cause shrunk within its share of the time left, :data:`SHRINK_SHARE` of the time left over
    the kinds of divergence still ahead). Every divergence left without a finding
    (``shrink`` off, the deadline passed, ``max_findings`` reached) is exported as it was run
    (:func:`unshrunk_finding`); past the deadline without re-running the peer."""
    report.joint = joint_readings(evidence_of(report.results))
    report.knobs = knob_table(report.results, report.joint)
    seen = [observed_of(r.reply.response) for r in report.results if r.reply.ok]
    if seen:
        report.compared = Observed(*(any(getattr(o, f) for o in seen) for f in
                                     Observed.FIELDS)).names()
    divergent = sorted((r for r in report.results if r.classification.kind == "divergence"),
                       key=lambda r: (len(r.trace.wire), dump_jsonl(r.trace.events), r.trace.id))
    state = _Shrinking(report, adapter, shrink, deadline, max_findings)
    work = [(r, None if part == COMBINED else part) for r in divergent
            for part in r.classification.divergent or [COMBINED]]
    located: dict = {}
    for i, (r, part) in enumerate(work):
        kind = (tuple(sorted(r.classification.aspects)), part)
        if deadline is not None and shrink and located.get(kind, 0) >= LOCATE_PER_KIND:
            report.unexamined += 1  # like LOCATE_PER_KIND shorter ones already located
            continue
        located[kind] = located.get(kind, 0) + 1
        # the time left is shared among the kinds of divergence still ahead (each gets a slice
        # to shrink in; one already found is only located, which is quick)
        state.ahead = len({(tuple(sorted(w.classification.aspects)), p) for w, p in work[i:]})
        state.one(r, part)
    report.peer = adapter.peer_name or ""
    report.starts = adapter.starts


LOCATE_PER_KIND = 6
"""Under a deadline (``peer search`` with a budget), how many divergent traces of one kind
(the same differing aspects of the verdict, in the same part) are located and shrunk, shortest
first; the longer ones of that kind are counted as :attr:`PeerReport.unexamined`, not located
(each costs a few batches of prefixes, and a budget cannot pay that for thousands)."""

SHRINK_SHARE = 0.8
"""The share of its slice of the time left (the time left over the kinds of divergence still
ahead) that shrinking one divergence may use: the rest builds its finding (a few requests)."""


class _Shrinking:
    """The bookkeeping of :func:`finish_report`: signatures seen, unshrunk exports, the count."""

    def __init__(self, report: PeerReport, adapter: AdapterProcess, shrink: bool,
                 deadline: Optional[float], max_findings: int):
        self.report, self.adapter, self.shrink = report, adapter, shrink
        self.deadline, self.max_findings = deadline, max_findings
        self.signatures: dict[tuple, str] = {}
        self.unshrunk: dict[tuple, str] = {}
        self.shrunk_count = 0
        self.ahead = 1  # kinds of divergence still to come (finish_report sets it)

    def add(self, r: TraceResult, finding: PeerDivergenceFinding) -> str:
        """Keep ``finding`` (merged with a finding of the same id, the same trace shrunk for
        another part: its ``divergesIn`` names both) and point ``r`` to it; its id."""
        findings = self.report.findings
        old = findings.get(finding.id)
        if old is None:
            findings[finding.id] = finding
        elif not set(finding["divergesIn"]) <= set(old["divergesIn"]):
            findings[finding.id] = PeerDivergenceFinding({**old.to_json(), "divergesIn": [
                p for p in (COMBINED, *PARTS) if p in old["divergesIn"] + finding["divergesIn"]]})
        self.point(r, finding.id)
        return finding.id

    @staticmethod
    def point(r: TraceResult, fid: str) -> None:
        if r.finding is None:
            r.finding = fid
        if fid not in r.findings:
            r.findings.append(fid)

    def export_unshrunk(self, r: TraceResult, locate: bool, part: Optional[str]) -> None:
        # without shrinking (--no-shrink) every divergent trace is exported; a budget or
        # max_findings cut exports one (the shortest) per signature, the others point to it
        finding = unshrunk_finding(self.adapter, r, locate, part)
        key = divergence_signature(finding.branch, finding.aspects,
                                     ignored=finding.event_ignored)
        if self.shrink and (key in self.signatures or key in self.unshrunk):
            # a cause already found (shrunk, or exported unshrunk): the same finding
            self.point(r, self.signatures.get(key) or self.unshrunk[key])
            return
        self.unshrunk[key] = self.add(r, finding)

    def late(self) -> bool:
        return self.adapter.budget_hit and self.deadline is not None and \
            time.monotonic() > self.deadline

    def one(self, r: TraceResult, part: Optional[str]) -> None:
        """Locate, shrink and export the divergence of ``r`` in ``part`` (None: combined)."""
        adapter, report = self.adapter, self.report
        out_of_time = self.deadline is not None and time.monotonic() > self.deadline
        if out_of_time:
            report.stopped_by = "budget"
        if not self.shrink or out_of_time or self.shrunk_count >= self.max_findings:
            self.export_unshrunk(r, not out_of_time, part)
            return
        where = locate_divergence(adapter, r.trace, part)
        if where is None:
            if adapter.budget_hit:  # the deadline came while locating it
                report.stopped_by = "budget"
                self.export_unshrunk(r, False, part)
            return
        signature = where.signature
        if signature in self.signatures:
            self.point(r, self.signatures[signature])
            return
        until = None
        if self.deadline is not None:  # its slice of the time left, with room to build it
            until = time.monotonic() + SHRINK_SHARE * max(
                0.0, self.deadline - time.monotonic()) / max(1, self.ahead)
        cut: list = []
        wire = shrink_divergence(adapter, r.trace, part=part, until=until, cut=cut)
        if self.late():  # the deadline came while shrinking: the candidates after it were not run
            report.stopped_by = "budget"
            self.export_unshrunk(r, False, part)
            return
        finding = divergence_finding(adapter, r.trace, wire, r.trace.id, part, not cut)
        self.shrunk_count += 1
        shrunk = divergence_signature(finding.branch, finding.aspects,
                                     ignored=finding.event_ignored)
        if shrunk in self.signatures:  # shrank onto a divergence already found
            self.signatures[signature] = self.signatures[shrunk]
            self.point(r, self.signatures[shrunk])
            return
        self.signatures[signature] = self.signatures[shrunk] = self.add(r, finding)


def check_peer(adapter: AdapterProcess, traces: Sequence[PeerTrace], shrink: bool = True,
               batch: int = 64, max_findings: int = 50) -> PeerReport:
    """Run ``traces`` through the adapter (in batches of ``batch``), classify each, build the knob
    table, and shrink the divergences into findings (see :class:`PeerReport`)."""
    started = time.monotonic()
    report = PeerReport(adapter.spec.label)
    for i in range(0, len(traces), batch):
        report.results.extend(run_batch(adapter, traces[i:i + batch]))
        report.note_first_divergence(started)
    finish_report(report, adapter, shrink, None, max_findings)
    report.seconds = time.monotonic() - started
    return report
