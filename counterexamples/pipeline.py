"""The run pipeline, what ``activity-check run`` does: search, cross-check, shrink, replay, compare.

:func:`run_pipeline` takes a :class:`RunConfig` and returns a :class:`RunResult`; it writes
nothing (:func:`write_run` writes a result's findings and ``summary.json``). In order:

1. the seeded ambiguity search over conformant traces, within the time budget
   (:func:`properties.search.ambiguity.search_ambiguities`);
2. the all-readings state machine (:func:`properties.search.machines.search_with_machine`), whose
   witnesses are offered to the search's;
3. the reference consumer under the conformant and the adversarial producer machines
   (:func:`properties.search.machines.run_machine`), each checking every property under the draft;
4. the all-readings breadth-first search (:func:`properties.search.explore.explore`) to ``bfs_depth``
   whatever the budget (which bounds step 1 only; ``run`` bounds ``bfs_depth``): its conformant
   witnesses win over the seeded ones (:func:`properties.search.ambiguity.merge_witnesses`
   with ``exhaustive=True``), so that the ids of the knobs it reaches depend neither on the seed
   nor on the budget; on its sweep, the settlement table of the open questions
   (:func:`properties.questions.settle`, ``summary.json``'s ``questions``, and
   ``questions.html`` with the witnesses, issue 19);
5. every witness shrunk into a finding (:func:`counterexamples.findings.ambiguity_finding`);
6. the field cases replayed (:func:`counterexamples.field_cases.check_all`);
7. the findings' ids compared with the committed corpus (:func:`counterexamples.corpus.diff_ids`).

With ``budget=math.inf`` the same configuration gives the same summary and findings, byte for
byte, on every run; a finite budget makes them depend on the machine's speed.
"""
from __future__ import annotations

import contextlib
import json
import math
import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Optional

from model.producer import DEFAULT_VOCABULARY, Vocabulary

if TYPE_CHECKING:
    from counterexamples.findings import AmbiguityFinding, Finding, PropertyFinding
    from properties.search.machines import MachineResult

__all__ = ["RunConfig", "ConfigError", "RunSummary", "RunResult", "PropertyCheck",
           "run_pipeline", "write_run", "finding_files", "SUMMARY", "FINDINGS_DIR", "STAGES",
           "MACHINES"]

SUMMARY = "summary.json"
"""The summary's file name in the output directory."""

FINDINGS_DIR = "findings"
"""The findings' directory in the output directory (``<id>.json`` and ``<id>.jsonl`` each)."""

TOOL = "activity-check"
"""The ``tool`` the summary names (an earlier output is recognised by it)."""

STAGES = ("generating conformant traces", "stateful machines",
          "breadth-first search to depth {depth}", "shrinking findings", "replaying field cases")
"""The stages :func:`run_pipeline` reports progress on, in order (``{depth}``: the BFS depth)."""

MACHINES = (("conformant", False), ("adversarial", True))
"""The producer machines the reference consumer is checked under: ``(name, adversarial)``."""

CONSUMER, READING = "reference", "draft"
"""The consumer the machines check (:data:`model.consumers.REFERENCE`) and the reading they check
it under (:data:`model.readings.DRAFT`), as the summary and the property findings name them."""

Progress = Callable[[str, int, int], None]
"""``progress(stage, done, total)``: first called with ``done=0`` when a stage starts."""


class ConfigError(ValueError):
    """An unusable :class:`RunConfig` value: ``field`` names the attribute, ``requirement`` what
    it must be (``str()``: both)."""

    def __init__(self, name: str, requirement: str):
        super().__init__(f"{name} {requirement}")
        self.field = name
        self.requirement = requirement


@dataclass(frozen=True)
class RunConfig:
    """What a run searches with.

    Attributes:
        seed: the Hypothesis seed of the search and the machines.
        examples: conformant traces to generate (at least 1); the machines run a tenth of it
            (at least 1) each.
        budget: seconds after which generating stops (positive; ``math.inf``: no limit, the
            only setting whose output does not depend on machine speed). It bounds the
            generation only: the breadth-first cross-check always runs to ``bfs_depth``, so
            that the ids of the knobs it reaches depend neither on the seed nor on the budget
            (a BFS given what remained of the budget would reach less, or nothing, on a slower
            machine, and the findings would change with it).
        max_events: the longest trace generated (at least 1).
        vocabulary: the producer's finite world (:class:`model.producer.Vocabulary`).
        bfs_depth: depth of the breadth-first cross-check (0 skips it), which bounds it, not
            the budget; ``run`` takes at most :data:`activity_check.cmd_run.MAX_BFS_DEPTH`
            (5).

    Raises:
        ConfigError: for a value out of range (checked in this order: examples, budget,
            max_events, bfs_depth).
    """

    seed: int = 0
    examples: int = 3000
    budget: float = 60.0
    max_events: int = 10
    vocabulary: Vocabulary = DEFAULT_VOCABULARY
    bfs_depth: int = 4

    def __post_init__(self):
        if self.examples < 1:
            raise ConfigError("examples", "must be at least 1")
        if math.isnan(self.budget) or self.budget <= 0:
            raise ConfigError("budget", "must be a positive number of seconds (inf: no limit)")
        if self.max_events < 1:
            raise ConfigError("max_events", "must be at least 1")
        if self.bfs_depth < 0:
            raise ConfigError("bfs_depth", "must be 0 or more")

    @property
    def machine_examples(self) -> int:
        """Runs of each state machine: a tenth of ``examples``, at least 1."""
        return max(1, self.examples // 10)


@dataclass(frozen=True)
class PropertyCheck:
    """The reference consumer under one producer machine (conformant or adversarial), under
    the draft.

    Attributes:
        name: the machine's name (:data:`MACHINES`).
        result: the :class:`properties.search.machines.MachineResult`.
        finding: the :class:`counterexamples.findings.PropertyFinding` of the property that
            failed, None when none did.
    """

    name: str
    result: MachineResult
    finding: Optional[PropertyFinding] = None

    def to_json(self) -> dict:
        """``{"consumer", "reading", "examples", "steps", "failed": None | {"property",
        "clauses", "files"}}``, as in ``summary.json``'s ``propertyChecks``."""
        failed = None
        if self.finding is not None:
            failed = {"property": self.result.property, "clauses": list(self.result.clauses),
                      "files": finding_files(self.finding.id)}
        return {"consumer": CONSUMER, "reading": READING, "examples": self.result.examples,
                "steps": self.result.steps, "failed": failed}

    def summary_entry(self) -> dict:
        """The failed property's entry in the summary's ``findings`` (``length``: the machine's
        whole failing trace)."""
        return {"id": self.finding.id, "kind": "property", "property": self.result.property,
                "length": len(self.result.witness), "files": finding_files(self.finding.id)}


def finding_files(finding_id: str) -> list[str]:
    """A finding's two files, relative to the output directory: ``[findings/<id>.json,
    findings/<id>.jsonl]``."""
    return [os.path.join(FINDINGS_DIR, finding_id + ext) for ext in (".json", ".jsonl")]


@dataclass
class RunSummary:
    """What ``summary.json`` holds (:meth:`to_json`).

    Attributes:
        version: the tool's version.
        config: the run's :class:`RunConfig`.
        examples, events_checked, stopped_by: what the seeded search did
            (:class:`properties.search.ambiguity.SearchReport`).
        readings: how many readings every trace was run under.
        findings: one JSON entry per finding exported, property findings first, then the
            ambiguities in knob order.
        property_checks: ``{machine name: PropertyCheck}``.
        corpus: the ids against the committed corpus (:func:`counterexamples.corpus.diff_ids`).
        field_cases: the :class:`counterexamples.field_cases.CaseResult` of each field case.
        questions: the settlement table of the open questions at the BFS's depth, reusing its
            sweep (``{"depth", "settled", "total", "rows", "files"}``,
            :func:`properties.questions.settle`; ``files``: the page and the witnesses
            :func:`write_run` writes, relative paths); None with ``bfs_depth`` below 2.
        resolve: what the recommended proposal does (issue 41, :func:`properties.resolve.
            resolve` at the BFS's depth, at most its default): ``{"proposal", "depth",
            "counts", "files"}`` (``files``: its page, ``resolve.html``, beside
            ``questions.html``); None with ``bfs_depth`` below 2.
    """

    version: str
    config: RunConfig
    examples: int
    events_checked: int
    stopped_by: str
    readings: int
    findings: list[dict] = field(default_factory=list)
    property_checks: dict[str, PropertyCheck] = field(default_factory=dict)
    corpus: dict = field(default_factory=dict)
    field_cases: list = field(default_factory=list)
    questions: Optional[dict] = None
    resolve: Optional[dict] = None

    def to_json(self) -> dict:
        """The summary as ``summary.json`` holds it (wire names; no timings)."""
        return {
            "tool": TOOL, "version": self.version, "seed": self.config.seed,
            "examples": self.examples, "requestedExamples": self.config.examples,
            "stoppedBy": self.stopped_by, "eventsChecked": self.events_checked,
            "readings": self.readings, "vocabulary": self.config.vocabulary.to_json(),
            "findings": self.findings,
            "propertyChecks": {name: c.to_json() for name, c in self.property_checks.items()},
            "corpus": self.corpus,
            "fieldCases": [r.to_json() for r in self.field_cases],
            "questions": self.questions,
            **({"resolve": self.resolve} if self.resolve is not None else {}),
        }


@dataclass
class RunResult:
    """What :func:`run_pipeline` returns.

    Attributes:
        summary: the :class:`RunSummary`.
        ambiguities: the :class:`counterexamples.findings.AmbiguityFinding` of each knob found
            to decide a trace, in knob order.
        seconds: the seeded search's wall time (printed, never written).
        coverage: with ``run_pipeline(..., coverage=True)``, the spec coverage
            (:func:`properties.coverage.report`) of the traces the seeded search checked and of
            every witness offered (the BFS's included); None otherwise. Printed, never written.
    """

    summary: RunSummary
    ambiguities: list[AmbiguityFinding] = field(default_factory=list)
    seconds: float = 0.0
    coverage: Optional[dict] = None
    resolve_report: Optional[dict] = None

    @property
    def findings(self) -> list[Finding]:
        """Every finding to export, in the summary's order: the property findings of the
        failed property checks, then the ambiguities."""
        return [c.finding for c in self.summary.property_checks.values()
                if c.finding is not None] + list(self.ambiguities)


def run_pipeline(config: RunConfig, version: str,
                 progress: Optional[Progress] = None, coverage: bool = False) -> RunResult:
    """Run the pipeline of the module docstring on ``config``; write nothing.

    Args:
        config: the :class:`RunConfig`.
        version: the tool's version, recorded in the summary.
        progress: called as ``progress(stage, done, total)`` (:data:`STAGES`), first with
            ``done=0`` as each stage starts.
        coverage: also measure the spec coverage of the search's traces
            (:attr:`RunResult.coverage`; about a millisecond a trace).

    Returns:
        A :class:`RunResult`.

    Raises:
        AssertionError: when a shrunk witness is no longer one (see
            :func:`counterexamples.findings.ambiguity_finding`).
    """
    from counterexamples.corpus import diff_ids
    from counterexamples.field_cases import check_all
    from counterexamples.findings import ambiguity_finding
    from model.readings import reading_count

    tell = progress or (lambda stage, done, total: None)
    from properties.strategies import fixed_constants, recording
    drawn: list = []
    # the seeded searches draw the same traces whatever the process imported; the traces the
    # seeded search drew are kept for the coverage report (only when it is asked for)
    with fixed_constants(), (recording(drawn) if coverage else contextlib.nullcontext()):
        report, checks = _search(config, tell)
    del drawn[report.examples:]  # a trace drawn as the budget ran out was not checked
    bfs = _bfs(config, report, tell)  # to bfs_depth whatever the budget: see RunConfig
    questions = None
    if config.bfs_depth >= 2:  # the open questions' table, on the BFS's own sweep (issue 19)
        from counterexamples.report.questions_page import PAGE, witness_files
        from properties.questions import settle, settled_count
        rows = settle(depth=config.bfs_depth, report=bfs)
        questions = {"depth": config.bfs_depth, "settled": settled_count(rows),
                     "total": len(rows), "rows": rows, "files": [PAGE] + witness_files(rows)}
        _merge_deeper(report, rows, bfs)
    stage = STAGES[3]
    tell(stage, 0, len(report.witnesses))
    findings = []
    for witness in report.witnesses.values():
        findings.append(ambiguity_finding(witness))
        tell(stage, len(findings), len(report.witnesses))
    tell(STAGES[4], 0, 1)
    cases = check_all()
    tell(STAGES[4], 1, 1)
    summary = RunSummary(version, config, report.examples, report.events, report.stopped_by,
                         reading_count(), corpus=diff_ids(f.id for f in findings),
                         field_cases=cases, questions=questions)
    for check in checks:
        summary.property_checks[check.name] = check
        if check.finding is not None:
            summary.findings.append(check.summary_entry())
    summary.findings.extend(_ambiguity_entry(f, bfs) for f in findings)
    measured = None
    if coverage:
        from properties.coverage import coverage_of, report as coverage_report
        measured = coverage_report(coverage_of(drawn + [w.events for w in
                                                        report.witnesses.values()]))
    resolved = None
    if config.bfs_depth >= 2:  # last: what the recommended proposal does (issue 41)
        from counterexamples.report.resolve import PAGE as RESOLVE_PAGE, add_sentences, \
            spec_dir
        from properties.resolve import DEFAULT_DEPTH, recommended_proposal, resolve
        resolved = resolve(recommended_proposal(), depth=min(config.bfs_depth, DEFAULT_DEPTH))
        add_sentences(resolved, spec_dir())
        summary.resolve = {"proposal": resolved["proposal"]["name"],
                           "depth": resolved["depth"], "counts": resolved["counts"],
                           "files": [RESOLVE_PAGE]}
    return RunResult(summary, findings, report.seconds, measured, resolved)


def _search(config: RunConfig, tell: Progress):
    """Steps 1 to 3 (module docstring): the seeded search with the all-readings machine's
    witnesses merged, and the property checks; ``(SearchReport, [PropertyCheck])``."""
    from counterexamples.findings import property_finding
    from model.readings import DRAFT
    from properties.search.ambiguity import merge_witnesses, search_ambiguities
    from properties.search.machines import consumer_machine, run_machine, search_with_machine
    from model.consumers import REFERENCE

    tell(STAGES[0], 0, config.examples)
    report = search_ambiguities(
        seed=config.seed, examples=config.examples,
        budget=None if math.isinf(config.budget) else config.budget,
        vocabulary=config.vocabulary, max_events=config.max_events,
        progress=lambda done, total: tell(STAGES[0], done, total))
    machines = STAGES[1]
    tell(machines, 0, 1 + len(MACHINES))
    merge_witnesses(report, search_with_machine(config.seed, config.machine_examples,
                                                config.max_events, config.vocabulary))
    tell(machines, 1, 1 + len(MACHINES))
    checks = []
    for name, adversarial in MACHINES:
        machine = consumer_machine(REFERENCE, DRAFT, adversarial, config.vocabulary)
        result = run_machine(machine, seed=config.seed, max_examples=config.machine_examples,
                             max_steps=config.max_events)
        finding = property_finding(result.violation, result.witness, CONSUMER, READING) \
            if result.caught else None
        checks.append(PropertyCheck(name, result, finding))
        tell(machines, 1 + len(checks), 1 + len(MACHINES))
    return report, checks


def _merge_deeper(report, rows: list, bfs) -> None:
    """Offer the settlement table's exhaustive witnesses of the knobs the BFS did not split at
    its depth (form A found by the table's deeper pair search: Q15 and Q23 need 5 events) to
    ``report`` as exhaustive ones, so that their findings, too, do not depend on seed or
    budget."""
    from model.producer import check_trace
    from model.wire import parse_events
    from properties.search.ambiguity import merge_witnesses
    deeper = {r["knob"]: parse_events(r["witness"]) for r in rows
              if r["form"] == "A" and r.get("knob") and r.get("witness")
              and (bfs is None or r["knob"] not in bfs.splits)}
    merge_witnesses(report, {k: t for k, t in deeper.items() if not check_trace(t)},
                    exhaustive=True)


def _bfs(config: RunConfig, report, tell: Progress):
    """Step 4: the all-readings BFS to ``bfs_depth`` (no timeout: the budget does not bound
    it), whose conformant witnesses replace the seeded ones in ``report``; the
    :class:`properties.search.report.ExploreReport`, or None for ``bfs_depth=0``. Raises
    KeyboardInterrupt when the search was interrupted (a Ctrl-C or a SIGTERM, which
    :func:`properties.search.explore.explore` ends the search with)."""
    from model.producer import check_trace
    from properties.search.ambiguity import merge_witnesses
    from properties.search.explore import ExploreOptions, explore

    stage = STAGES[2].format(depth=config.bfs_depth)
    tell(stage, 0, 1)
    bfs = None
    if config.bfs_depth > 0:
        bfs = explore(ExploreOptions(depth=config.bfs_depth, reading=None, properties=()))
        if bfs.stopped_by == "interrupted":  # the user asked the run to stop: not a result
            raise KeyboardInterrupt
        # findings are conformant under the draft's producer obligations; the BFS's witnesses
        # win over the seeded searches': ids independent of seed and budget
        merge_witnesses(report, {k: trace for k, (trace, _) in bfs.splits.items()
                                 if not check_trace(trace)}, exhaustive=True)
    tell(stage, 1, 1)
    return bfs


def _ambiguity_entry(finding, bfs) -> dict:
    """An ambiguity finding's entry in the summary (``bfsShortest``: the BFS's shortest split
    of its knob, None when the BFS did not run or did not reach it; ``length``: the events of
    the finding's trace, of which the last ``closing`` end what the shrunk witness left open,
    so ``length - closing`` compares with ``bfsShortest``)."""
    bfs_len = len(bfs.splits[finding.knob][0]) \
        if bfs is not None and finding.knob in bfs.splits else None
    return {"id": finding.id, "kind": "ambiguity", "knob": finding.knob, "bfsShortest": bfs_len,
            "length": len(finding.events), "closing": finding.get("closing", 0),
            "clauses": list(finding.clauses),
            "context": finding["context"], "verdictClasses": len(finding.classes),
            "files": finding_files(finding.id)}


def write_run(result: RunResult, out_dir: str) -> None:
    """Write a run's findings into ``out_dir/findings`` (each as ``<id>.json`` and
    ``<id>.jsonl``: the files the summary lists), the open questions' page and witnesses
    (``questions.html``, ``questions/<Q-id>.jsonl``) when the summary holds the table, and
    ``out_dir/summary.json`` (indented by 2,
    non-ASCII kept, as the command line prints it).

    Args:
        result: a :class:`RunResult`.
        out_dir: an existing directory, ours to write: the command line passes the staging
            directory it swaps in for ``--out`` when this returns
            (:func:`activity_check.cli.write_out`), so a failure here leaves an earlier output
            as it was.

    Raises:
        OSError: when a file cannot be written; ValueError: a finding id not of
            :data:`counterexamples.findings.FINDING_ID` (never for the pipeline's own).
    """
    from counterexamples.findings import write_finding

    directory = os.path.join(out_dir, FINDINGS_DIR)
    for finding in result.findings:
        paths = write_finding(finding, directory)
        assert [os.path.relpath(p, out_dir) for p in paths] == finding_files(finding.id), paths
    with open(os.path.join(out_dir, SUMMARY), "w", encoding="utf-8") as fh:
        fh.write(json.dumps(result.summary.to_json(), indent=2, ensure_ascii=False) + "\n")
    table = result.summary.questions
    if table is not None:  # questions.html and questions/<Q-id>.jsonl (issue 19)
        from counterexamples.report.questions_page import write_questions
        knob_files = {f.knob: finding_files(f.id)[0] for f in result.ambiguities}
        write_questions(table["rows"], out_dir, table["depth"], findings=knob_files)
    if result.resolve_report is not None:  # resolve.html beside questions.html (issue 41)
        from counterexamples.report.resolve import PAGE as RESOLVE_PAGE, render_html
        with open(os.path.join(out_dir, RESOLVE_PAGE), "w", encoding="utf-8") as fh:
            fh.write(render_html(result.resolve_report))
