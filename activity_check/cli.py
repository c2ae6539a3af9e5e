"""``activity-check``: the command line. It only wires the packages together.

Commands:

* ``run``: the main job: search conformant traces for ambiguities of the draft, shrink and export
  each finding, replay the bundled field cases, write ``DIR/findings`` and ``DIR/summary.json``.
* ``replay FILE``: the verdict of one trace file under a reading (or every reading).
* ``clauses``: the clause registry with what covers each clause.
* ``readings``: the knobs (open questions), their options and the named readings.
* ``explore``: exhaustive breadth-first search to a depth.
* ``export FINDING --format F``: a finding as JSON lines, JSON, ITF, Mermaid or pytest.
* ``corpus check|update``: replay the committed corpus, or rewrite it from a run.
* ``spec clauses|coverage|diff``: the normative sentences of spec pages, matched to the registry.

Exit codes: 0 when the command ran (a fatal verdict is data), 2 for unusable input or arguments
(one line on stderr, no traceback), 1 for an internal error.
"""
from __future__ import annotations

import argparse
import importlib
import json
import math
import os
import shutil
import sys
import tempfile
from contextlib import contextmanager
from typing import Callable, Optional, Sequence

from rich.console import Console
from rich.table import Table

from activity_check import Terminated, __version__

EXIT_USAGE = 2

DEFAULT_EXPLORE_DEPTH = 5
"""``explore``'s default bound (issue 4: exhausted within 60 s): 492,495 states of the exploration
vocabulary under every reading with every property, the same default as
:func:`properties.explore.explore`."""

COMMAND_MODULES: tuple[str, ...] = ("activity_check.cmd_peer", "activity_check.cmd_smt")
"""Modules that add subcommands: each has ``register(subparsers)``, which adds its parsers with
``set_defaults(func=...)``; a command raises :class:`UsageError` for unusable input."""


class UsageError(Exception):
    """A problem with the user's input or arguments: printed as one line, exit 2."""


class _Console(Console):
    """rich's console, except that a reader closing the pipe (``| head``) ends the command the
    way plain output does (:func:`main` turns it into a quiet exit 0) rather than with rich's
    exit status 1, which this tool keeps for internal errors."""

    def on_broken_pipe(self) -> None:
        self.quiet = True
        raise BrokenPipeError


def _console(stderr: bool = False) -> Console:
    """A rich console; when the output is not a terminal, wide enough that ids do not wrap."""
    stream = sys.stderr if stderr else sys.stdout
    width = None if stream.isatty() else 160
    return _Console(stderr=stderr, highlight=False, soft_wrap=True, width=width)


def _dump(obj) -> str:
    return json.dumps(obj, indent=2, ensure_ascii=False, sort_keys=False)


# --- replay -------------------------------------------------------------------------------------

def cmd_replay(args) -> int:
    """``replay FILE``: the verdict of one trace (from the file's ``initialState``, when it is an
    object form carrying one) under a reading, and with ``--all-readings`` every verdict class.
    Returns 0, or 2 for an unusable file or reading, or a trace that breaks at the wire
    boundary (the first malformed event, with file:line)."""
    from model.consumer import initial_state
    from model.events import Malformed
    from model.readings import ReadingError, describe_assignment, parse_reading
    from model.verdict import evaluate, partition
    from model.wire import TraceFormatError, load_trace

    try:
        reading = parse_reading(args.reading)
    except ReadingError as exc:
        raise UsageError(f"--reading: {exc}") from None
    try:
        trace = load_trace(args.file)
    except TraceFormatError as exc:
        raise UsageError(str(exc)) from None
    # A field case (an object with "events") may give the agent state the run input carried.
    start = initial_state(trace.meta["initialState"]) \
        if isinstance(trace.meta, dict) and trace.meta.get("initialState") is not None else None
    verdict = evaluate(trace.events, reading, start)
    out = verdict.to_json()
    out["reading"] = reading.name or "draft"
    if args.all_readings:
        out["readingClasses"] = [
            {"readings": [describe_assignment(a) for a in c.assignments],
             "includesDraft": c.contains_draft, "verdict": c.verdict.to_json()}
            for c in partition(trace.events, start)]
    if args.json:
        print(_dump(out))
    else:
        _print_verdict(out, trace.file)
    if verdict.fatal is not None:
        at, fatal = verdict.fatal
        event = trace.events[at]
        if isinstance(event, Malformed):
            line = trace.line_of(at)
            where = f"{trace.file}:{line}" if line else trace.file
            print(f"activity-check: error: {where}: event {at} ({event.name}): {event.path}: "
                  f"{event.reason} [{event.clause}]", file=sys.stderr)
            return EXIT_USAGE
    return 0


def _print_verdict(out: dict, file: str) -> None:
    con = _console()
    con.print(f"[bold]{file}[/bold] under reading [bold]{out['reading']}[/bold]")
    table = Table(title="messages", show_lines=False)
    for col in ("id", "role", "activityType", "content", "owner", "metadata"):
        table.add_column(col)
    for m in out["messages"]:
        content = m.get("content")
        table.add_row(m["id"], m["role"], m.get("activityType", ""),
                      json.dumps(content, ensure_ascii=False) if content is not None else "",
                      m.get("subagentRunId", ""),
                      json.dumps(m["metadata"]) if "metadata" in m else "")
    con.print(table)
    for w in out["warnings"]:
        about = f" {w['messageId']}" if w["messageId"] else ""
        con.print(f"warning at event {w['atEvent']}: {w['code']}{about} "
                  f"[{w['clause']}] {w.get('detail', '')}")
    if out["fatal"]:
        f = out["fatal"]
        con.print(f"[bold red]fatal[/bold red] at event {f['atEvent']}: {f['code']} "
                  f"[{f['clause']}] {f.get('detail', '')}")
    else:
        con.print("fatal: none")
    ids = ", ".join(m["id"] for m in out["runInput"])
    con.print(f"run: {out['run']}; next run input: {len(out['runInput'])} message(s)"
              + (f" ({ids})" if ids else ""))
    for c in out.get("readingClasses", []):
        v = c["verdict"]
        acts = "; ".join(f"{m['id']}={json.dumps(m.get('content'))}/{m.get('activityType')}"
                         for m in v["messages"] if m["role"] == "activity") or "no activity"
        outcome = (f"fatal {v['fatal']['code']}@{v['fatal']['atEvent']}" if v["fatal"] else
                   "warnings " + (", ".join(f"{w['code']}@{w['atEvent']}" for w in v["warnings"])
                                  or "none"))
        con.print(f"verdict class ({'includes draft' if c['includesDraft'] else 'other'}): "
                  f"{'; '.join(c['readings'][:6])}{' ...' if len(c['readings']) > 6 else ''}"
                  f"\n    -> {acts}; {outcome}")


# --- clauses, readings --------------------------------------------------------------------------

def cmd_clauses(args) -> int:
    """``clauses``: the clause registry with what covers each clause (step branches, knobs,
    adversarial moves, properties); 0."""
    from model.clauses import coverage
    from properties.catalogue import coverage_table
    rows = coverage({"property": coverage_table()})
    if args.json:
        print(_dump([{"id": c.clause.id, "nIds": list(c.clause.n_ids), "keyword": c.clause.keyword,
                      "actor": c.clause.actor, "page": c.clause.page, "section": c.clause.section,
                      "summary": c.clause.summary, "questions": list(c.clause.questions),
                      "coveredBy": {k: list(v) for k, v in c.covered_by.items()}}
                     for c in rows]))
        return 0
    table = Table(title=f"clause registry ({len(rows)} clauses)")
    for col in ("id", "N", "keyword", "actor", "where", "covered by", "summary"):
        table.add_column(col, overflow="fold")
    for c in rows:
        cov = "; ".join(f"{k}: {', '.join(v)}" for k, v in c.covered_by.items()) or "-"
        table.add_row(c.clause.id, ",".join(c.clause.n_ids), c.clause.keyword, c.clause.actor,
                      f"{c.clause.page} {c.clause.section}", cov, c.clause.summary)
    con = _console()
    con.print(table)
    covered = sum(1 for c in rows if c.covered)
    scoped = sum(1 for c in rows if "out-of-scope" in c.covered_by)
    con.print(f"{covered} of {len(rows)} clauses covered by a step branch, knob or adversarial "
              f"move or property; {scoped} declared outside the model's scope")
    return 0


def cmd_readings(args) -> int:
    """``readings``: the knobs (open questions), their options, clauses and observed peer
    behaviour, and the named readings; 0."""
    from model.readings import KNOBS, PRESETS, reading_count
    if args.json:
        print(_dump({"knobs": [{"id": k.id, "question": k.question, "draft": k.draft,
                                "options": [{"name": n, "meaning": d} for n, d in k.options],
                                "clauses": list(k.clauses),
                                "peers": {peer: option for peer, option in k.peers}}
                               for k in KNOBS],
                     "presets": {n: r.as_dict() for n, r in PRESETS.items()},
                     "readingCount": reading_count()}))
        return 0
    table = Table(title=f"knobs ({reading_count():,} readings in all)")
    for col in ("knob", "question", "options (draft first)", "clauses", "peers observed"):
        table.add_column(col, overflow="fold")
    for k in KNOBS:
        options = "\n".join(f"{name}{' (draft)' if i == 0 else ''}: {meaning}"
                             for i, (name, meaning) in enumerate(k.options))
        table.add_row(k.id, k.question, options, ", ".join(k.clauses),
                      "\n".join(f"{peer}: {option}" for peer, option in k.peers) or "-")
    con = _console()
    con.print(table)
    for name, r in PRESETS.items():
        diff = r.differences()
        con.print(f"preset {name}: " + (", ".join(f"{a}={b}" for a, b in diff.items()) or "(draft)"))
    return 0


# --- run ----------------------------------------------------------------------------------------

SUMMARY = "summary.json"


def prepare_out(out_dir: str, summary_name: str, owner: str,
                files_of: Callable[[dict], Optional[list]]) -> None:
    """Make sure ``out_dir`` is ours to write: new, empty, or an earlier output of ours, whose
    finding files (and only those, inside ``DIR/findings``) are removed; anything else is
    refused, so nothing the user keeps there is lost.

    Args:
        out_dir: the directory the user named with ``--out``.
        summary_name: the summary file an earlier output left there (``summary.json``).
        owner: what wrote it, for the refusal (``"activity-check"``, ``"'activity-check
            peer'"``).
        files_of: the earlier summary -> the finding files it lists (paths relative to
            ``out_dir``), None when the summary is not one of this command's; raises
            ValueError when it is, but not in the form the command writes.

    Raises:
        UsageError: naming the directory and why it is refused.
    """
    if os.path.exists(out_dir) and not os.path.isdir(out_dir):
        raise UsageError(f"--out {out_dir}: exists and is not a directory")
    if not os.path.isdir(out_dir) or not os.listdir(out_dir):
        try:
            os.makedirs(out_dir, exist_ok=True)
        except OSError as exc:
            raise UsageError(f"--out {out_dir}: cannot create the directory: "
                             f"{exc.strerror}") from None
        return
    refusal = UsageError(f"--out {out_dir}: directory is not empty and holds no earlier "
                         f"{owner} output; choose another directory")
    try:
        with open(os.path.join(out_dir, summary_name), encoding="utf-8") as fh:
            previous = json.load(fh)
    except (OSError, ValueError):
        raise refusal from None
    if not isinstance(previous, dict) or previous.get("tool") != "activity-check":
        raise refusal
    shapeless = UsageError(f"--out {out_dir}: {summary_name} there is not in the form "
                           "activity-check writes; choose another directory or remove it")
    try:
        files = files_of(previous)
    except ValueError:
        raise shapeless from None
    if files is None:
        raise refusal
    if not all(isinstance(path, str) for path in files):
        raise shapeless
    findings_dir = os.path.realpath(os.path.join(out_dir, "findings"))
    for path in files:
        full = os.path.realpath(os.path.join(out_dir, path))
        if os.path.dirname(full) == findings_dir and full.endswith((".json", ".jsonl")) \
                and os.path.isfile(full):
            os.remove(full)


def _run_files(previous: dict) -> list:
    """The finding files an earlier ``run`` summary lists (ValueError: not in run's form)."""
    listed = previous.get("findings", [])
    if not isinstance(listed, list) or not all(
            isinstance(f, dict) and isinstance(f.get("files", []), list) for f in listed):
        raise ValueError("not a run summary")
    return [path for f in listed for path in f.get("files", [])]


def _prepare_out(out_dir: str) -> None:
    """``run``'s output directory (see :func:`prepare_out`)."""
    prepare_out(out_dir, SUMMARY, "activity-check", _run_files)


def cmd_run(args) -> int:
    """``run``, the main job: search (Hypothesis, the all-readings machine, the all-readings
    BFS), shrink and export each finding, check the reference consumer under the conformant and
    adversarial machines, replay the field cases, compare with the corpus, and write
    ``DIR/summary.json`` and ``DIR/findings``; 0, or 2 for unusable options, vocabulary or
    output directory."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from counterexamples.field_cases import check_all
    from counterexamples.findings import ambiguity_finding, write_finding, write_property_finding
    from model.producer import DEFAULT_VOCABULARY, check_trace
    from model.readings import DRAFT, reading_count
    from properties.ambiguity import merge_witnesses, search_ambiguities
    from properties.machines import consumer_machine, run_machine, search_with_machine
    from properties.zoo import REFERENCE
    from properties.explore import explore
    from counterexamples.corpus import diff_ids

    if args.examples < 1:
        raise UsageError("--examples must be at least 1")
    if args.budget is not None and (math.isnan(args.budget) or args.budget <= 0):
        raise UsageError("--budget must be a positive number of seconds (inf: no limit)")
    if args.budget is not None and math.isinf(args.budget):
        args.budget = None
    if args.max_events < 1:
        raise UsageError("--max-events must be at least 1")
    if args.bfs_depth < 0:
        raise UsageError("--bfs-depth must be 0 or more")
    vocabulary = DEFAULT_VOCABULARY
    if args.vocabulary:
        vocabulary = _read_vocabulary(args.vocabulary)
    _prepare_out(args.out)
    err = _console(stderr=True)
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), console=err, transient=True) as progress:
        task = progress.add_task("generating conformant traces", total=args.examples)
        report = search_ambiguities(
            seed=args.seed, examples=args.examples, budget=args.budget, vocabulary=vocabulary,
            max_events=args.max_events,
            progress=lambda done, total: progress.update(task, completed=done))
        machine_examples = max(1, args.examples // 10)
        machine_task = progress.add_task("stateful machines", total=3)
        merge_witnesses(report, search_with_machine(args.seed, machine_examples,
                                                    args.max_events, vocabulary))
        progress.advance(machine_task)
        checks = {}
        for name, adversarial in (("conformant", False), ("adversarial", True)):
            machine = consumer_machine(REFERENCE, DRAFT, adversarial, vocabulary)
            result = run_machine(machine, seed=args.seed, max_examples=machine_examples,
                                 max_steps=args.max_events)
            checks[name] = result
            progress.advance(machine_task)
        bfs_task = progress.add_task(f"breadth-first search to depth {args.bfs_depth}", total=1)
        bfs = explore(depth=args.bfs_depth, reading=None, properties=()) \
            if args.bfs_depth > 0 else None
        if bfs is not None:  # findings are conformant under the draft's producer obligations
            # the BFS's witnesses win over the seeded searches': ids independent of seed/budget
            merge_witnesses(report, {k: trace for k, (trace, _) in bfs.splits.items()
                                     if not check_trace(trace)}, exhaustive=True)
        progress.advance(bfs_task)
        shrink_task = progress.add_task("shrinking findings", total=len(report.witnesses))
        findings = []
        for witness in report.witnesses.values():
            findings.append(ambiguity_finding(witness))
            progress.advance(shrink_task)
        case_task = progress.add_task("replaying field cases", total=1)
        cases = check_all()
        progress.advance(case_task)

    findings_dir = os.path.join(args.out, "findings")
    summary_findings = []
    machines = {}
    for name, result in checks.items():
        entry = {"consumer": "reference", "reading": "draft", "examples": result.examples,
                 "steps": result.steps, "failed": None}
        if result.caught:
            json_path, jsonl_path = write_property_finding(
                result.violation, result.witness, "reference", "draft", findings_dir)
            entry["failed"] = {"property": result.property, "clauses": list(result.clauses),
                               "files": [os.path.relpath(json_path, args.out),
                                         os.path.relpath(jsonl_path, args.out)]}
            summary_findings.append({"id": os.path.basename(json_path)[:-5], "kind": "property",
                                     "property": result.property, "length": len(result.witness),
                                     "files": entry["failed"]["files"]})
        machines[name] = entry
    for f in findings:
        json_path, jsonl_path = write_finding(f, findings_dir)
        bfs_len = len(bfs.splits[f.knob][0]) if bfs is not None and f.knob in bfs.splits else None
        summary_findings.append({
            "id": f.id, "kind": "ambiguity", "knob": f.knob, "bfsShortest": bfs_len, "length": len(f.events), "clauses": list(f.clauses),
            "context": f.to_json()["context"],
            "verdictClasses": len(f.classes),
            "files": [os.path.relpath(json_path, args.out), os.path.relpath(jsonl_path, args.out)]})
    summary = {
        "tool": "activity-check", "version": __version__, "seed": args.seed,
        "examples": report.examples, "requestedExamples": args.examples,
        "stoppedBy": report.stopped_by, "eventsChecked": report.events,
        "readings": reading_count(), "vocabulary": vocabulary.to_json(),
        "findings": summary_findings,
        "propertyChecks": machines,
        "corpus": diff_ids(f.id for f in findings),
        "fieldCases": [r.to_json() for r in cases],
    }
    with open(os.path.join(args.out, SUMMARY), "w", encoding="utf-8") as fh:
        fh.write(_dump(summary) + "\n")
    if args.json:
        print(_dump(summary))
    else:
        _print_run(summary, findings, report, args.out)
    return 0


def _print_run(summary: dict, findings, report, out_dir: str) -> None:
    from model.readings import KNOB_BY_ID
    con = _console()
    con.print(f"activity-check {summary['version']}: seed {summary['seed']}, "
              f"{summary['examples']} conformant traces ({summary['eventsChecked']} events) "
              f"under all {summary['readings']:,} readings"
              + (" [bold yellow](stopped by --budget)[/bold yellow]"
                 if summary["stoppedBy"] == "budget" else "")
              + f", {report.seconds:.1f} s")
    table = Table(title=f"ambiguity findings ({len(findings)})")
    for col in ("finding", "knob", "events", "readings split", "question"):
        table.add_column(col, overflow="fold")
    for f in findings:
        split = " vs ".join(f"{f.knob}={a[f.knob]}" for a in f.pair)
        if f.context:
            split += " (with " + ", ".join(f"{k}={v}" for k, v in f.context.items()) + ")"
        table.add_row(f.id, f.knob, str(len(f.events)), split, KNOB_BY_ID[f.knob].question)
    con.print(table)
    for name, entry in summary["propertyChecks"].items():
        verdict = "no property failed" if entry["failed"] is None else \
            f"[bold red]{entry['failed']['property']} failed[/bold red] ({entry['failed']['files'][0]})"
        con.print(f"reference consumer, {name} producer machine: {entry['examples']} runs, "
                  f"{entry['steps']} steps, {verdict}")
    corpus = summary["corpus"]
    con.print(f"against the committed corpus: {corpus['kept']} findings kept, "
              f"{len(corpus['new'])} new ({', '.join(corpus['new']) or 'none'}), "
              f"{len(corpus['vanished'])} vanished ({', '.join(corpus['vanished']) or 'none'})"
              + (f"; the same question with another witness: {', '.join(corpus['rewitnessed'])}"
                 if corpus.get("rewitnessed") else ""))
    cases = Table(title=f"field cases ({len(summary['fieldCases'])})")
    for col in ("case", "basis", "result", "detail"):
        cases.add_column(col, overflow="fold")
    from counterexamples.field_cases import ARGUED
    for r in summary["fieldCases"]:
        argued = ARGUED.get(r["id"], (None, ""))[1] if r["status"] == "argued" else ""
        detail = "; ".join(r["problems"]) or argued or "; ".join(
            f"{name}: {', '.join(givers) or 'none'}" for name, givers in r["readings"].items())
        cases.add_row(r["id"], r["basis"], r["status"], detail)
    con.print(cases)
    con.print(f"wrote {len(findings)} findings to {os.path.join(out_dir, 'findings')} and "
              f"{os.path.join(out_dir, SUMMARY)}")


# --- corpus -------------------------------------------------------------------------------------

def cmd_corpus(args) -> int:
    """``corpus check`` (replay the committed corpus: 0 when nothing changed, 1 when a verdict
    did) and ``corpus update DIR`` (rewrite it from a run's output: 0, or 2 when DIR is not a
    usable run; the corpus is then unchanged)."""
    from counterexamples.corpus import check_corpus, load_corpus, write_corpus
    if args.action == "check":
        if args.source:
            raise UsageError(f"corpus check takes no directory (got {args.source!r}); it "
                             "replays the committed corpus")
        try:
            changes = check_corpus()
            count = len(load_corpus())
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        if args.json:
            print(_dump({"entries": count, "changes": [str(c) for c in changes]}))
        else:
            for change in changes:
                print(change)
            print(f"{count} corpus entries replayed; {len(changes)} change(s)")
        return 1 if changes else 0
    if not args.source:
        raise UsageError("corpus update: give the --out directory of a run "
                         "(activity-check corpus update DIR)")
    from counterexamples.export import load_finding
    summary_path = os.path.join(args.source, SUMMARY)
    try:
        with open(summary_path, encoding="utf-8") as fh:
            summary = json.load(fh)
        listed = [f for f in summary["findings"] if f.get("kind") == "ambiguity"]
        paths = [os.path.join(args.source, f["files"][0]) for f in listed]
    except (OSError, ValueError, KeyError, TypeError, AttributeError, IndexError):
        raise UsageError(f"corpus update: {summary_path} is not the summary of an "
                         "'activity-check run' (give the --out directory of a run)") from None
    findings = []
    for path in paths:
        try:
            findings.append(load_finding(path))
        except (OSError, ValueError) as exc:
            raise UsageError(f"corpus update: {path}: {getattr(exc, 'strerror', None) or exc}"
                             " (the corpus is unchanged)") from None
    try:
        written = write_corpus(findings)
    except ValueError as exc:
        raise UsageError(f"corpus update: {exc}") from None
    print(f"corpus now holds {len(written)} entries")
    return 0


# --- explore ------------------------------------------------------------------------------------

DEFAULT_MAX_STATES = 1_000_000
"""``explore``'s default state bound (about 2 GB): a deep search grows by megabytes a second, so
an unbounded one is asked for explicitly (``--max-states 0``); twice the default depth's states,
so that the default bound is the depth bound."""

def cmd_explore(args) -> int:
    """``explore``: the breadth-first search to a depth (:func:`properties.explore.explore`),
    every reading in one sweep unless ``--reading`` names one. Prints (or ``--json``) what bound
    stopped it, the shortest split per knob and the properties violated; 0, or 2 for unusable
    options or vocabulary."""
    from rich.progress import Progress, TextColumn, TimeElapsedColumn

    from model.readings import ReadingError, parse_reading
    from model.readings import describe_assignment
    from properties.explore import EXPLORE_VOCABULARY, explore

    if args.depth < 1:
        raise UsageError("--depth must be at least 1")
    if args.workers is None:
        args.workers = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") \
            else (os.cpu_count() or 1)
    if args.workers < 1:
        raise UsageError("--workers must be at least 1")
    if args.max_states is not None and args.max_states < 0:
        raise UsageError("--max-states must be 0 (no limit) or more")
    if args.max_states == 0:
        args.max_states = None
    if args.timeout is not None and (math.isnan(args.timeout) or args.timeout <= 0):
        raise UsageError("--timeout must be a positive number of seconds")
    reading = None
    if args.reading != "all":
        try:
            reading = parse_reading(args.reading)
        except ReadingError as exc:
            raise UsageError(f"--reading: {exc}") from None
    vocabulary = EXPLORE_VOCABULARY
    if args.vocabulary:
        vocabulary = _read_vocabulary(args.vocabulary, EXPLORE_VOCABULARY)
    if args.graph and os.path.exists(args.graph):
        raise UsageError(f"--graph {args.graph}: exists; choose a new file name")
    if args.graph and not args.graph.endswith((".graphml", ".dot", ".gv")):
        raise UsageError("--graph: the file name must end in .graphml, .dot or .gv")
    if args.graph:
        parent = os.path.dirname(os.path.abspath(args.graph))
        if not os.path.isdir(parent) or not os.access(parent, os.W_OK):
            raise UsageError(f"--graph {args.graph}: {parent} is not a writable directory")
    err = _console(stderr=True)
    with Progress(TextColumn("{task.description}"), TimeElapsedColumn(), console=err,
                  transient=True) as progress:
        task = progress.add_task("exploring: depth 0, 1 state", total=None)

        def report_level(depth, states, edges, seconds):
            rate = states / seconds if seconds else 0
            progress.update(task, description=f"exploring depth {depth + 1}: {states:,} states,"
                                              f" {edges:,} edges, {rate:,.0f} states/s")

        report = explore(depth=args.depth, vocabulary=vocabulary, reading=reading,
                         adversarial=args.adversarial, max_states=args.max_states,
                         timeout=args.timeout, progress=report_level,
                         keep_edges=bool(args.graph), workers=args.workers,
                         cluster=args.cluster)
    out = {
        "depth": report.depth, "requestedDepth": args.depth, "complete": report.complete,
        "stoppedBy": report.stopped_by, "states": report.states, "edges": report.edges,
        "reading": "all" if reading is None else (reading.name or "draft"),
        "readingClasses": report.classes if reading is None else None,
        "adversarial": args.adversarial,
        "splits": {k: {"length": len(trace), "pair": [describe_assignment(a) for a in pair],
                       "trace": [e.to_wire() for e in trace]}
                   for k, (trace, pair) in report.splits.items()},
        "violations": {k: {"length": len(trace), "witness": text,
                           "trace": [e.to_wire() for e in trace]}
                       for k, (trace, text) in report.violations.items()},
    }
    # Ctrl-C: the report of what was explored, then the interrupt's status, as other commands
    status = 130 if report.stopped_by == "interrupted" else 0
    if args.json:
        print(_dump(out))
        sys.stdout.flush()
        return (_write_graph(args.graph, report, err) or status) if args.graph else status
    con = _console()
    bound = {"depth": f"the depth bound ({args.depth})",
             "max-states": f"--max-states {args.max_states}",
             "timeout": f"--timeout {args.timeout}",
             "interrupted": "an interrupt (Ctrl-C)"}[report.stopped_by]
    con.print(f"explored {report.states:,} distinct states and {report.edges:,} edges to depth "
              f"{report.depth} in {report.seconds:.1f} s ({report.states_per_second:,.0f} "
              f"states/s)"
              + (f" under every reading at once ({report.classes:,} "
                 f"class{'es' if report.classes != 1 else ''} of readings)"
                 if reading is None else f" under reading {out['reading']}")
              + f"; stopped by {bound}"
              + ("" if report.complete else f"; depth {report.depth + 1} is partly explored"))
    con.print(f"on {report.workers} worker{'s' if report.workers != 1 else ''}; visited set: "
              f"{report.storage['fingerprint']}, probability of a fingerprint collision "
              f"{report.storage['collisionProbability']:.1e} for {report.states:,} states")
    table = Table(title=f"open questions that split a step ({len(report.splits)}), shortest first found")
    for col in ("knob", "events", "readings", "trace"):
        table.add_column(col, overflow="fold")
    for knob, info in out["splits"].items():
        table.add_row(knob, str(info["length"]), " vs ".join(info["pair"]),
                      " | ".join(_short(e) for e in info["trace"]))
    con.print(table)
    if out["violations"]:
        for pid, info in out["violations"].items():
            con.print(f"[bold red]{pid}[/bold red] violated after {info['length']} events: "
                      f"{info['witness']}")
    else:
        con.print(f"no property violated on any explored transition ({report.edges:,} checked)")
    if args.graph:
        written = _write_graph(args.graph, report, err)
        if written:
            return written
        con.print(f"wrote the state graph to {args.graph}")
    return status


def _write_graph(path: str, report, err) -> int:
    """Write the explored state graph to ``path`` (``.graphml``, else DOT), after the report is
    printed, with a progress line on ``err`` (the graph holds every examined edge: at the default
    bound a minute or more, and gigabytes). The file is created exclusively (never over another)
    and removed if the write fails or is interrupted, so no partial graph is left; after a
    search that was interrupted it is not written at all (the user asked the command to stop).

    Returns 0, or 130 when interrupted (one line on stderr). Raises UsageError when the file
    cannot be written."""
    from rich.progress import Progress, TextColumn, TimeElapsedColumn

    from properties.explore import state_graph

    not_written = f"activity-check: interrupted; the state graph was not written to {path}"
    if report.stopped_by == "interrupted":
        print(not_written, file=sys.stderr)
        return 130
    try:
        with Progress(TextColumn("{task.description}"), TimeElapsedColumn(), console=err,
                      transient=True) as progress:
            progress.add_task(f"writing the state graph ({report.states:,} states, "
                              f"{report.edges:,} edges) to {path}", total=None)
            graph = state_graph(report)
            with open(path, "xb") as fh:
                try:
                    if path.endswith(".graphml"):
                        import networkx as nx
                        nx.write_graphml(graph, fh)
                    else:
                        _write_dot(graph, fh)
                except BaseException:
                    fh.close()
                    os.remove(path)  # ours, created above: no partial graph is left
                    raise
    except KeyboardInterrupt:
        print(not_written, file=sys.stderr)
        return 130
    except FileExistsError:
        raise UsageError(f"--graph {path}: exists; choose a new file name") from None
    except OSError as exc:
        raise UsageError(f"--graph {path}: {exc.strerror}") from None
    return 0


def _short(event: dict) -> str:
    bits = [event.get("type", "?")]
    for key in ("messageId", "activityType"):
        if key in event:
            bits.append(str(event[key]))
    if "replace" in event:
        bits.append(f"replace:{str(event['replace']).lower()}")
    if "subagentRunId" in event:
        bits.append(event["subagentRunId"])
    if "patch" in event:
        bits.append("[" + ",".join(f"{op.get('op', '?')} {op.get('path', '')}".strip()
                                   for op in event["patch"]) + "]")
    if "metadata" in event:
        bits.append("metadata " + json.dumps(event["metadata"], separators=(",", ":")))
    if event.get("type") == "MESSAGES_SNAPSHOT":
        bits.append("[" + ",".join(m.get("id", "?") for m in event.get("messages", [])) + "]")
    return " ".join(bits)


def _write_dot(graph, fh) -> None:
    """Write a networkx graph as Graphviz DOT (no pydot needed) to ``fh``, a binary file."""
    def q(text) -> str:
        return '"' + str(text).replace("\\", "\\\\").replace('"', '\\"') + '"'
    lines = ["digraph states {"]
    for node, data in graph.nodes(data=True):
        lines.append(f"  {node} [label={q(data.get('label', node))}];")
    for a, b, data in graph.edges(data=True):
        lines.append(f"  {a} -> {b} [label={q(data.get('event', ''))}];")
    lines.append("}")
    fh.write(("\n".join(lines) + "\n").encode("utf-8"))


def _read_vocabulary(path: str, base=None):
    """The producer vocabulary in the JSON file ``path`` (see :func:`model.producer.load_vocabulary`);
    members the file leaves out take ``base``'s (default: the search's default vocabulary).

    Raises:
        UsageError: one line naming ``--vocabulary``, the file and what is wrong: unreadable, not
            UTF-8, not strict JSON (with line and column; a member named twice, with the JSON
            path of its object), or a value the producer cannot use (with the member and index).
    """
    from model.producer import load_vocabulary
    from model.wire import TraceFormatError, loads_json, read_text

    try:
        text = read_text(path)
    except TraceFormatError as exc:
        raise UsageError(f"--vocabulary {exc}") from None
    try:
        doc = loads_json(text)
    except json.JSONDecodeError as exc:
        raise UsageError(f"--vocabulary {path}:{exc.lineno}:{exc.colno}: "
                         f"not valid JSON: {exc.msg}") from None
    try:
        return load_vocabulary(doc, base)
    except ValueError as exc:
        raise UsageError(f"--vocabulary {path}: {exc}") from None


# --- export -------------------------------------------------------------------------------------

def cmd_export(args) -> int:
    """``export FINDING --format F [--out FILE] [--reading SPEC]``: a finding JSON file as JSON
    lines, the finding JSON itself, an ITF trace, a Mermaid sequence diagram or a pytest
    regression file (see :mod:`counterexamples.export`); stdout unless ``--out``, which never
    overwrites."""
    from counterexamples.export import export, load_finding, parse_reading_spec
    from model.readings import ReadingError

    reading = None
    if args.reading is not None:  # the option's own faults first, named as the option's
        if args.format != "itf":
            raise UsageError(f"--reading applies to --format itf only, not {args.format}")
        try:
            reading = parse_reading_spec(args.reading)
        except ReadingError as exc:
            raise UsageError(f"--reading: {exc}") from None
    try:
        finding = load_finding(args.finding)
    except OSError as exc:
        raise UsageError(f"{args.finding}: cannot read the file: {exc.strerror}") from None
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    try:
        text = export(finding, args.format, reading)
    except ValueError as exc:
        raise UsageError(f"{args.finding}: {exc}") from None
    if args.out is None:
        sys.stdout.write(text)
        sys.stdout.flush()
        return 0
    try:
        with open(args.out, "x", encoding="utf-8") as fh:
            fh.write(text)
    except FileExistsError:
        raise UsageError(f"--out {args.out}: already exists; not overwritten") from None
    except OSError as exc:
        raise UsageError(f"--out {args.out}: cannot write the file: {exc.strerror}") from None
    return 0


# --- spec (wording checks) ---------------------------------------------------------------------

def cmd_spec(args) -> int:
    """``spec clauses|coverage|diff FILE...``: the normative sentences of spec pages, their match
    to the clause registry, and the clause-level difference between two versions of a page (see
    :mod:`model.spec_text`). A missing or unreadable file is a usage error (exit 2)."""
    from model import spec_text

    counts = {"clauses": (1, None), "coverage": (1, None), "diff": (2, 2)}
    least, most = counts[args.action]
    if len(args.files) < least or (most is not None and len(args.files) > most):
        raise UsageError(f"spec {args.action}: give exactly two files (OLD.md NEW.md)"
                         if args.action == "diff" else f"spec {args.action}: give a page file")
    for path in args.files:
        if not os.path.exists(path):
            raise UsageError(f"{path}: no such file")
        if not os.path.isfile(path):
            raise UsageError(f"{path}: not a file")
        try:
            with open(path, encoding="utf-8") as fh:
                fh.read()
        except UnicodeDecodeError:
            raise UsageError(f"{path}: not UTF-8 text") from None
        except OSError as exc:
            raise UsageError(f"{path}: cannot read the file: {exc.strerror}") from None
    if args.action == "clauses":
        return _spec_clauses(args, spec_text)
    if args.action == "coverage":
        return _spec_coverage(args, spec_text)
    return _spec_diff(args, spec_text)


def _spec_clauses(args, spec_text) -> int:
    rows = []
    for path in args.files:
        rows.extend(spec_text.sentences(path) if args.all else spec_text.extract(path))
    if args.json:
        print(_dump([s.to_json() for s in rows]))
        return 0
    what = "sentences" if args.all else "normative sentences"
    table = Table(title=f"{what} of {', '.join(args.files)} ({len(rows)})")
    for col in ("page", "line", "section", "keyword", "sentence"):
        table.add_column(col, overflow="fold")
    for s in rows:
        table.add_row(s.page, str(s.line), s.section, s.keyword or "-", s.text)
    _console().print(table)
    return 0


def _spec_coverage(args, spec_text) -> int:
    report = spec_text.coverage(args.files)
    if args.json:
        print(_dump(report.to_json()))
        return 0
    con = _console()
    table = Table(title=f"normative sentences and the clauses they match ({', '.join(report.pages)})")
    for col in ("page", "line", "section", "keyword", "clauses", "sentence"):
        table.add_column(col, overflow="fold")
    for s in report.normative:
        table.add_row(s.page, str(s.line), s.section, s.keyword,
                      ", ".join(report.clauses_of(s)) or "[bold red]none[/bold red]", s.text)
    con.print(table)
    if not report.normative:
        con.print(f"{len(report.sentences)} sentences and no normative one: is "
                  f"{', '.join(args.files)} a spec page?")
    else:
        con.print(f"{len(report.sentences)} sentences, {len(report.normative)} normative; "
                  f"{len(report.normative) - len(report.unmatched)} of those match a clause "
                  f"({report.matched_share:.0%})")
    con.print("sentences with no entry: " + (", ".join(f"{s.page}:{s.line} {s.keyword}"
                                                       for s in report.unmatched) or "none"))
    con.print("entries whose sentence is gone: " + (", ".join(report.gone) or "none"))
    if report.unstated:
        con.print("entries recording what the page leaves unstated (no sentence by design): "
                  + ", ".join(report.unstated))
    con.print("keyword changes: " + (", ".join(
        f"{k.clause_id} ({k.clause_keyword} in the registry; line {k.sentence.line} has "
        f"{', '.join(k.sentence.keywords) or 'no key word'})" for k in report.keyword_changes)
        or "none"))
    return 0


def _spec_diff(args, spec_text) -> int:
    from properties.catalogue import coverage_table
    old, new = args.files
    if os.path.basename(old) != os.path.basename(new):
        print(f"activity-check: warning: {old} and {new} have different file names; the diff "
              "assumes they are two versions of one page", file=sys.stderr)
    report = spec_text.diff(old, new, coverage_table())
    if args.json:
        print(_dump(report.to_json()))
        return 0
    con = _console()
    con.print(f"[bold]{old}[/bold] -> [bold]{new}[/bold] (page {report.page}): "
              f"{report.unchanged} sentences unchanged, {len(report.changes)} changed "
              f"({len(report.normative_changes)} normative, {len(report.keyword_changes)} "
              "keyword changes)")
    if not report.changes:
        con.print("no normative difference")
        return 0
    table = Table(title="differences")
    for col in ("change", "line", "section", "keyword", "clauses", "depends on them",
                "sentence"):
        table.add_column(col, overflow="fold")
    for c in report.changes:
        if c.keyword_change:
            kw = f"{', '.join(c.keyword_change[0]) or '-'} -> {', '.join(c.keyword_change[1]) or '-'}"
        else:
            kw = ", ".join((c.new or c.old).keywords) or "-"
        line = (f"{c.old.line}->{c.new.line}" if c.old and c.new
                else str((c.new or c.old).line))
        text = (c.new or c.old).text if c.kind != "changed" else \
            f"was: {c.old.text}\nnow: {c.new.text}"
        deps = "; ".join(f"{k}: {', '.join(v)}" for k, v in c.dependents.items()) or "-"
        table.add_row(c.kind + ("" if c.normative else " (plain)"), line, c.section, kw,
                      ", ".join(c.clauses) or "-", deps, text)
    con.print(table)
    if not report.normative_changes:
        con.print("no normative difference (plain wording only)")
    return 0


# --- entry point --------------------------------------------------------------------------------

class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line, exit 2
        raise UsageError(message)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every subcommand, those of :data:`COMMAND_MODULES` included."""
    p = _Parser(prog="activity-check", description="Model checker for the AG-UI Activity draft.")
    p.add_argument("--version", action="version", version=f"activity-check {__version__}")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)

    run = sub.add_parser("run", help="search for ambiguities, replay field cases, write findings")
    run.add_argument("--seed", type=int, default=0, help="Hypothesis seed (default 0)")
    run.add_argument("--out", default="out", help="output directory (default ./out)")
    run.add_argument("--budget", type=float, default=60.0,
                     help="stop generating after this many seconds (default 60)")
    run.add_argument("--examples", type=int, default=3000,
                     help="conformant traces to generate (default 3000)")
    run.add_argument("--max-events", type=int, default=10, help="longest trace (default 10)")
    run.add_argument("--vocabulary", help="JSON file with the producer vocabulary")
    run.add_argument("--bfs-depth", type=int, default=4,
                     help="depth of the breadth-first cross-check (default 4; 0 skips it)")
    run.add_argument("--json", action="store_true", help="print the summary as JSON")
    run.set_defaults(func=cmd_run)

    rp = sub.add_parser("replay", help="the verdict of a trace file")
    rp.add_argument("file", help="JSON array of events, JSON lines, or an object with 'events'")
    rp.add_argument("--reading", default="draft",
                    help="preset (draft, lenient, strict) or KNOB=OPTION,... (default draft)")
    rp.add_argument("--all-readings", action="store_true",
                    help="also group every reading by the verdict it gives")
    rp.add_argument("--json", action="store_true", help="print the verdict as JSON")
    rp.set_defaults(func=cmd_replay)

    cl = sub.add_parser("clauses", help="the clause registry and its coverage")
    cl.add_argument("--json", action="store_true")
    cl.set_defaults(func=cmd_clauses)

    ex = sub.add_parser("explore", help="exhaustive breadth-first exploration to a depth")
    ex.add_argument("--depth", type=int, default=DEFAULT_EXPLORE_DEPTH,
                    help=f"longest trace explored (default {DEFAULT_EXPLORE_DEPTH}: every "
                         "reading and every property over 492,495 states, about 25 s and 1 GB "
                         "here; 4 takes about 2 s)")
    ex.add_argument("--vocabulary", help="JSON file with the producer vocabulary "
                    "(default: the small exploration vocabulary)")
    ex.add_argument("--max-states", type=int, default=DEFAULT_MAX_STATES,
                    help=f"stop after this many distinct states (default {DEFAULT_MAX_STATES:,}, "
                         "about 2 GB; 0: no limit)")
    ex.add_argument("--timeout", type=float, help="stop after this many seconds")
    ex.add_argument("--reading", default="all",
                    help="all (default): every reading in one sweep, one consumer state per "
                         "class of readings not yet diverged; or one reading (draft, a preset, "
                         "or KNOB=OPTION,...)")
    ex.add_argument("--adversarial", action="store_true",
                    help="also take the producer's non-conformant moves")
    ex.add_argument("--graph", help="write the state graph (.graphml or .dot) after the report; it "
                    "keeps every edge: at the default depth about 5 GB of memory, a minute or "
                    "two and a 450 MB file (depth 4: seconds)")
    ex.add_argument("--workers", type=int, default=None,
                    help="worker processes expanding each level (default: the cores available; "
                         "1: this process only; the output is the same for any number)")
    ex.add_argument("--cluster", metavar="ADDRESS",
                    help="expand the levels on the running Dask cluster whose scheduler is at "
                         "ADDRESS (e.g. tcp://10.0.0.5:8786) instead of local workers")
    ex.add_argument("--json", action="store_true", help="print the result as JSON")
    ex.set_defaults(func=cmd_explore)

    co = sub.add_parser("corpus", help="replay the committed corpus, or rewrite it from a run")
    co.add_argument("action", choices=["check", "update"])
    co.add_argument("source", nargs="?", default="",
                    help="with update: the --out directory of a run")
    co.add_argument("--json", action="store_true")
    co.set_defaults(func=cmd_corpus)

    sp = sub.add_parser("spec", help="the spec's normative sentences, their clauses, and "
                        "the clause-level difference between two versions of a page")
    sp.add_argument("action", choices=["clauses", "coverage", "diff"],
                    help="clauses PAGE.md: the normative sentences; coverage PAGE.md...: match "
                         "them to the clause registry; diff OLD.md NEW.md: what changed")
    sp.add_argument("files", nargs="+", metavar="FILE", help="spec page(s) (.md)")
    sp.add_argument("--all", action="store_true",
                    help="with clauses: every sentence, not only the normative ones")
    sp.add_argument("--json", action="store_true")
    sp.set_defaults(func=cmd_spec)

    rd = sub.add_parser("readings", help="the knobs and named readings")
    rd.add_argument("--json", action="store_true")
    rd.set_defaults(func=cmd_readings)

    xp = sub.add_parser("export", help="a finding as JSON lines, JSON, ITF, Mermaid or pytest")
    xp.add_argument("finding", help="a finding JSON file (DIR/findings/<id>.json)")
    xp.add_argument("--format", required=True,
                    choices=("jsonl", "json", "itf", "mermaid", "pytest"),
                    help="jsonl (the trace), json (the finding itself), itf (Apalache/Quint "
                         "trace), mermaid (sequence diagram) or pytest (regression test file)")
    xp.add_argument("--out", help="write to this file (refused if it exists; default stdout)")
    xp.add_argument("--reading", help="itf only: the reading whose states are exported "
                    "(default: the draft's verdict class; a property finding's own reading)")
    xp.set_defaults(func=cmd_export)
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    return p


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Entry point of the ``activity-check`` console script (see
    :func:`activity_check.console_main`). Returns the exit code: 0, 1 (a write failed), 2 (a
    usage error: one line on stderr), 130 (interrupted), or the command's own."""
    for stream in (sys.stdout, sys.stderr):
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")
    try:
        args = build_parser().parse_args(argv)
        with _hypothesis_storage_aside():
            return args.func(args)
    except SystemExit as exc:  # --help and --version
        return exc.code if isinstance(exc.code, int) else 0
    except UsageError as exc:
        print(f"activity-check: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt as exc:
        if not isinstance(exc, Terminated):  # a SIGTERM is reported by console_main
            print("activity-check: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader stopped reading (``| head``): not an error of ours
        try:  # nothing more can reach it; keep the interpreter's last flush from failing too
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except (OSError, ValueError):
            pass
        return 0
    except OSError as exc:  # e.g. the output device is full: one line, no traceback
        where = f" {exc.filename}" if exc.filename else ""
        try:
            print(f"activity-check: error: cannot write{where}: {exc.strerror or exc}",
                  file=sys.stderr)
        except OSError:
            pass
        return 1


@contextmanager
def _hypothesis_storage_aside():
    """While a command runs, point Hypothesis's storage at a temporary directory, removed
    afterwards, unless ``HYPOTHESIS_STORAGE_DIRECTORY`` names one: Hypothesis caches what it
    reads of the local source under ``./.hypothesis`` even with ``database=None``, and a
    command writes only where the user says (the searches' inputs do not depend on the cache:
    a missing entry is computed again from the source)."""
    if os.environ.get(_HYPOTHESIS_STORAGE):
        yield
        return
    # Through the environment, read when Hypothesis first needs its storage: a command that
    # never imports Hypothesis does not pay for importing it.
    aside = tempfile.mkdtemp(prefix="activity-check-hypothesis-")
    os.environ[_HYPOTHESIS_STORAGE] = aside
    try:
        yield
    finally:
        del os.environ[_HYPOTHESIS_STORAGE]
        configuration = sys.modules.get("hypothesis.configuration")
        if configuration is not None:
            # decided again (environment, then ./.hypothesis) if this process (a test calling
            # main) uses Hypothesis after the command, not from the removed directory
            configuration.set_hypothesis_home_dir(None)
        shutil.rmtree(aside, ignore_errors=True)


_HYPOTHESIS_STORAGE = "HYPOTHESIS_STORAGE_DIRECTORY"


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
