"""``activity-check run`` (the main job, :func:`counterexamples.pipeline.run_pipeline`) and
``activity-check corpus check|update`` (the committed corpus the run's findings are compared
with, :mod:`counterexamples.corpus`)."""
from __future__ import annotations

import json
import os
from dataclasses import replace

from rich.table import Table

from activity_check import __version__
from activity_check.cli import (UsageError, add_timings_option, console, dump, float_or_inf,
                                id_column, prepare_out, progress_bar, read_vocabulary, shown,
                                write_out)

__all__ = ["PARSERS", "cmd_run", "cmd_corpus"]

MAX_BFS_DEPTH = 5
"""The deepest ``run --bfs-depth`` (a deeper one is refused in one line, exit 2). The
all-readings sweep grows about fifteenfold per event: without properties depth 4 takes seconds
and depth 5 about 20 s (2 million states), and the settlement table built on it a few minutes
and about 2 GB at depth 5 (``questions --depth``'s bound too); depth 6 is 54,313,288 states
of the default vocabulary (some 4.3 GB and a quarter of an hour with every property, docs/exhaustive.md
and benchmarks/README.md), which is ``activity-check explore``'s work, not a run's."""


def _add_run(sub) -> None:
    run = sub.add_parser("run", help="search for ambiguities, replay field cases, write findings")
    run.add_argument("--seed", type=int, default=0, help="Hypothesis seed (default 0)")
    run.add_argument("--out", default="out", help="output directory (default ./out)")
    run.add_argument("--budget", type=float_or_inf, default=60.0,
                     help="stop generating after this many seconds (default 60); the "
                          "breadth-first cross-check is bounded by --bfs-depth, not by the "
                          "budget")
    run.add_argument("--examples", type=int, default=3000,
                     help="conformant traces to generate (default 3000)")
    run.add_argument("--max-events", type=int, default=10, help="longest trace (default 10)")
    run.add_argument("--vocabulary", help="JSON file with the producer vocabulary")
    run.add_argument("--bfs-depth", type=int, default=4,
                     help="depth of the breadth-first cross-check (default 4: seconds; 0 skips "
                          f"it; at most {MAX_BFS_DEPTH}, a few minutes and about 2 GB; "
                          "deeper searches: activity-check explore)")
    run.add_argument("--json", action="store_true", help="print the summary as JSON")
    run.add_argument("--wide", action="store_true",
                     help="print the text tables at full width (default: within 120 columns, "
                          "long cells folded at word boundaries)")
    add_timings_option(run)
    run.add_argument("--coverage", action="store_true",
                     help="print the spec coverage of the search's traces in full: clauses, "
                          "step branches, knob options, codes, producer violations and surface "
                          "features exercised and never (with --json: as the member "
                          "'coverage'); without it the text output ends with the totals line")
    run.set_defaults(func=cmd_run)


def _add_corpus(sub) -> None:
    co = sub.add_parser("corpus", help="replay the committed corpus, or rewrite it from a run")
    co.add_argument("action", choices=["check", "update"])
    co.add_argument("source", nargs="?", default="",
                    help="with update: the --out directory of a run")
    co.add_argument("--allow-empty", action="store_true",
                    help="with update: write an empty corpus when the run found no ambiguity "
                         "(refused otherwise)")
    co.add_argument("--json", action="store_true",
                    help="print the result as JSON (check: entries and changes; update: "
                         "entries and the ids added, dropped and changed)")
    co.set_defaults(func=cmd_corpus)


PARSERS = {"run": _add_run, "corpus": _add_corpus}
"""The parsers this module adds (see :data:`activity_check.cli.COMMANDS`)."""


# --- run ----------------------------------------------------------------------------------------

def _run_files(previous: dict) -> list:
    """The files an earlier ``run`` summary lists as its own: its findings' and its settlement
    table's (``questions.files``); ValueError when it is not in run's form."""
    listed = previous.get("findings", [])
    if not isinstance(listed, list) or not all(
            isinstance(f, dict) and isinstance(f.get("files", []), list) for f in listed):
        raise ValueError("not a run summary")
    questions = (previous.get("questions") or {}).get("files", [])
    resolved = (previous.get("resolve") or {}).get("files", [])
    if not isinstance(questions, list) or not isinstance(resolved, list):
        raise ValueError("not a run summary")
    return [path for f in listed for path in f.get("files", [])] + questions + resolved


def cmd_run(args) -> int:
    """``run``, the main job (:func:`counterexamples.pipeline.run_pipeline`): search, shrink and
    export each finding, check the reference consumer under the conformant and adversarial
    machines, replay the field cases, compare with the corpus; then write ``DIR/findings`` and
    ``DIR/summary.json`` and print the summary (``--json``: as written). Returns 0; raises
    UsageError (exit 2) for unusable options, vocabulary or output directory."""
    from counterexamples.pipeline import (SUMMARY, ConfigError, RunConfig, run_pipeline,
                                          write_run)

    try:
        config = RunConfig(seed=args.seed, examples=args.examples, budget=args.budget,
                           max_events=args.max_events, bfs_depth=args.bfs_depth)
    except ConfigError as exc:
        raise UsageError(f"--{exc.field.replace('_', '-')} {exc.requirement}") from None
    if config.bfs_depth > MAX_BFS_DEPTH:
        raise UsageError(f"--bfs-depth must be at most {MAX_BFS_DEPTH}, not {args.bfs_depth} "
                         "(deeper: activity-check explore --depth N, which --timeout and "
                         "--max-states bound)")
    if args.vocabulary:
        config = replace(config, vocabulary=read_vocabulary(args.vocabulary))
    plan = prepare_out(args.out, SUMMARY, "activity-check", _run_files,
                       inputs=[args.vocabulary] if args.vocabulary else ())
    with progress_bar() as progress:
        tasks = {}

        def show(stage: str, done: int, total: int) -> None:
            if stage not in tasks:
                tasks[stage] = progress.add_task(stage, total=total)
            progress.update(tasks[stage], completed=done)

        result = run_pipeline(config, __version__, show,
                              coverage=args.coverage or not args.json)
    with write_out(plan) as staging:  # swapped in for args.out when complete
        write_run(result, staging)
    summary = result.summary.to_json()
    if args.json:
        printed = {**summary, "coverage": result.coverage} if args.coverage else summary
        print(dump({**printed, "seconds": round(result.seconds, 3)} if args.timings
                   else printed))
    else:
        _print_run(summary, result, args.out, args.timings, args.wide)
        _print_coverage(result.coverage, args.coverage, args.wide)
    return 0


def _print_coverage(doc: dict, full: bool, wide: bool = False) -> None:
    """The coverage report (:func:`properties.coverage.render_text`) in full, or its totals
    line alone, folded within :data:`model.text.TEXT_WIDTH` columns (``wide``: unfolded)."""
    from model.text import TEXT_WIDTH, fold_line
    from properties.coverage import render_text, totals_line
    width = None if wide else TEXT_WIDTH
    print(render_text(doc, width=width) if full else fold_line(totals_line(doc), width))


def _print_run(summary: dict, result, out_dir: str, timings: bool = False,
               wide: bool = False) -> None:
    """The run's text report: tables within :data:`model.text.TEXT_WIDTH` columns
    (``wide``: at full width); each finding with its basis (:func:`model.readings.basis_of`:
    the draft, a deviation, or a question outside the draft)."""
    from counterexamples.field_cases import ARGUED
    from counterexamples.pipeline import FINDINGS_DIR, SUMMARY
    from model.readings import KNOB_BY_ID, basis_of
    findings = result.ambiguities
    con = console(wide=wide)
    con.print(f"activity-check {summary['version']}: seed {summary['seed']}, "
              f"{summary['examples']} conformant traces ({summary['eventsChecked']} events) "
              f"under all {summary['readings']:,} readings"
              + (" [bold yellow](stopped by --budget)[/bold yellow]"
                 if summary["stoppedBy"] == "budget" else "")
              + (f", {result.seconds:.1f} s" if timings else ""))
    table = Table(title=f"ambiguity findings ({len(findings)})")
    id_column(table, "finding", [f.id for f in findings])
    id_column(table, "knob", [f.knob for f in findings])
    for col in ("events", "readings split", "basis", "question"):
        table.add_column(col, overflow="fold")
    for f in findings:
        split = " vs ".join(f"{f.knob}={a[f.knob]}" for a in f.pair)
        if f.context:
            split += " (with " + ", ".join(f"{k}={v}" for k, v in f.context.items()) + ")"
        table.add_row(f.id, f.knob, str(len(f.events)), split, basis_of(f.pair),
                      KNOB_BY_ID[f.knob].gloss)  # its gloss: --json, README
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
    id_column(cases, "case", [r["id"] for r in summary["fieldCases"]])
    for col in ("basis", "result", "detail"):
        cases.add_column(col, overflow="fold")
    for r in summary["fieldCases"]:
        argued = ARGUED.get(r["id"], (None, ""))[1] if r["status"] == "argued" else ""
        detail = "; ".join(r["problems"]) or argued or "; ".join(
            f"{name}: {', '.join(givers) or 'none'}" for name, givers in r["readings"].items())
        cases.add_row(r["id"], r["basis"], r["status"], detail)
    con.print(cases)
    con.print(f"wrote {len(findings)} findings to {shown(os.path.join(out_dir, FINDINGS_DIR))} "
              f"and {shown(os.path.join(out_dir, SUMMARY))}")
    table = summary.get("questions")
    if table:  # the settlement table of the open questions (issue 19)
        con.print(f"open questions: {table['settled']} of {table['total']} settled at depth "
                  f"{table['depth']}: {shown(os.path.join(out_dir, table['files'][0]))}")
    resolved = summary.get("resolve")
    if resolved:  # what the recommended proposal does (issue 41)
        c = resolved["counts"]
        con.print(f"recommended proposal: {c['decided']} decided, {c['closed']} closed, "
                  f"{c['open']} open, {c['conflicts']} conflicts, {c['nonConformantPeers']} "
                  f"peers non-conformant at depth {resolved['depth']}: "
                  f"{shown(os.path.join(out_dir, resolved['files'][0]))}")


# --- corpus -------------------------------------------------------------------------------------

EMPTY_CORPUS = ("the corpus holds no entry, so nothing was checked (activity-check corpus "
                "update DIR writes it from a run)")
"""The change ``corpus check`` reports for an empty corpus (it then exits 1)."""


def cmd_corpus(args) -> int:
    """``corpus check`` (replay the committed corpus: 0 when nothing changed, 1 when a verdict
    did or the corpus is empty) and ``corpus update DIR`` (rewrite it from a run's output: 0,
    or 2 when DIR is not a usable run; the corpus is then unchanged)."""
    from counterexamples.corpus import check_corpus, load_corpus
    if args.action == "update":
        return _corpus_update(args)
    if args.allow_empty:
        raise UsageError("--allow-empty applies to corpus update only")
    if args.source:
        raise UsageError(f"corpus check takes no directory (got {args.source!r}); it "
                         "replays the committed corpus")
    try:
        changes = [str(c) for c in check_corpus()]
        count = len(load_corpus())
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if count == 0:  # checks nothing: a corpus emptied by mistake must not pass
        changes.append(EMPTY_CORPUS)
    if args.json:
        print(dump({"entries": count, "changes": changes}))
    else:
        for change in changes:
            print(change)
        print(f"{count} corpus entries replayed; {len(changes)} change(s)")
    return 1 if changes else 0


def _corpus_update(args) -> int:
    """``corpus update DIR``: the ambiguity findings a run's summary lists become the corpus.
    Each must be ``findings/<id>.json`` of DIR with an id of the finding scheme
    (:func:`counterexamples.findings.is_finding_id`) that the file itself carries, not a
    symbolic link; a run with none empties the corpus only with ``--allow-empty``. Returns 0;
    raises UsageError (exit 2) otherwise, the corpus then unchanged. Prints each entry id
    added, dropped or changed (:meth:`counterexamples.corpus.CorpusUpdate.lines`), then the
    counts; ``--json``: :meth:`~counterexamples.corpus.CorpusUpdate.to_json`."""
    from counterexamples.corpus import update_corpus
    from counterexamples.findings import is_finding_id, load_finding
    from counterexamples.pipeline import FINDINGS_DIR, SUMMARY
    from model.wire import TraceFormatError, loads_json, read_text
    if not args.source:
        raise UsageError("corpus update: give the --out directory of a run "
                         "(activity-check corpus update DIR)")
    summary_path = os.path.join(args.source, SUMMARY)
    try:
        summary = loads_json(read_text(summary_path, listed=True))
    except TraceFormatError as exc:  # missing, a link, a pipe, too large, not UTF-8
        raise UsageError(f"corpus update: {exc}") from None
    except ValueError:
        summary = None
    try:
        listed = [(f["id"], f["files"][0]) for f in summary["findings"]
                  if f.get("kind") == "ambiguity"]
    except (OSError, ValueError, KeyError, TypeError, AttributeError, IndexError):
        raise UsageError(f"corpus update: {summary_path} is not the summary of an "
                         "'activity-check run' (give the --out directory of a run)") from None
    unchanged = "; the corpus is unchanged"
    findings = []
    for fid, listed_path in listed:
        expected = os.path.join(FINDINGS_DIR, f"{fid}.json") \
            if is_finding_id(fid, "ambiguity") else None
        if expected is None or listed_path != expected:
            raise UsageError(f"corpus update: {summary_path} lists {json.dumps(fid)[:120]} at "
                             f"{json.dumps(listed_path)[:120]}, not an ambiguity finding of an "
                             f"'activity-check run' (findings/AMB-<knob>-<8 hex>.json){unchanged}")
        path = os.path.join(args.source, expected)
        if os.path.islink(path):
            raise UsageError(f"corpus update: {path} is a symbolic link; not followed{unchanged}")
        try:
            finding = load_finding(path, listed=True)
        except (OSError, ValueError) as exc:
            raise UsageError(f"corpus update: {path}: {getattr(exc, 'strerror', None) or exc}"
                             f"{unchanged}") from None
        if finding.id != fid:
            raise UsageError(f"corpus update: {path} holds finding {finding.id}, not {fid}"
                             f"{unchanged}")
        findings.append(finding)
    if not findings and not args.allow_empty:
        raise UsageError(f"corpus update: {summary_path} lists no ambiguity finding, so the "
                         f"corpus would be emptied; pass --allow-empty to do that{unchanged}")
    try:
        update = update_corpus(findings, allow_empty=args.allow_empty)
    except ValueError as exc:
        raise UsageError(f"corpus update: {exc}") from None
    except OSError as exc:
        raise UsageError(f"corpus update: cannot write the corpus: {exc.strerror or exc}"
                         f"{unchanged}") from None
    if args.json:
        print(dump(update.to_json()))
        return 0
    for line in update.lines():
        print(line)
    print(f"corpus now holds {len(update.written)} entries: {len(update.added)} added, "
          f"{len(update.dropped)} dropped, {len(update.changed)} changed, {update.kept} kept")
    return 0
