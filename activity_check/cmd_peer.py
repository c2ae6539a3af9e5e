"""``activity-check peer check|search``: a real implementation, driven through an adapter, against
the model.

* ``peer check --adapter CMD [TRACES...]``: run a corpus (default: the committed corpus, findings
  and field cases) through the adapter, classify each trace (agrees with ``draft``, with another
  reading, with none), tabulate which option of each knob the peer behaves as, shrink every
  divergence by re-running the peer and export it (finding JSON and AG-UI JSON lines).
* ``peer search --adapter CMD [--budget S] [--seed N]``: the same over generated traces (the
  corpus and probes first, then Hypothesis stateful traces and every state of a breadth-first
  search), fed in batches, all within the budget.

``--fail-on divergence|deviation|error|any`` makes either exit 1 when the condition holds (for
CI; ``deviation``: a trace the peer matches only through a deviation, not conformant).
``peer matrix`` and ``peer options`` are wired by :mod:`activity_check.cmd_matrix` and
:mod:`activity_check.cmd_peer_options`.

``--adapter`` is any command line speaking the adapter protocol (docs/peers.md, "Adapter protocol"), or a
shortcut: ``model[:READING]`` or any built-in peer of the matrix
(:func:`counterexamples.peers.matrix.resolve_matrix_adapter`: ``ag-ui-client:reducer``,
``ag-ui-protocol``, ...). All the work
is in :mod:`counterexamples.peers`; this module only wires it to the command line.
"""
from __future__ import annotations

import math
import os
import re
import sys

from rich.markup import escape
from rich.table import Table

from activity_check.cli import (UsageError, add_generation_options, add_input_limits, cell,
                                console, dump, finite_float, float_or_inf, id_column,
                                id_list_column, positive_int, prepare_out, progress_bar, read_vocabulary, shown,
                                write_out)
from model.text import TEXT_WIDTH, fold_words, visible

__all__ = ["PARSERS", "cmd_peer"]

PEER_SUMMARY = "peer-summary.json"


def _add_peer(sub) -> None:
    """Add the ``peer`` command (subactions ``check`` and ``search``) to the CLI's subparsers."""
    from counterexamples.peers.adapter import BUILTIN_ADAPTERS, DEFAULT_TIMEOUT, MAX_ANSWER_CHARS
    shortcuts = "; ".join(f"{k}: {v}" for k, v in BUILTIN_ADAPTERS.items())
    peer = sub.add_parser("peer", help="check a real implementation, driven through an adapter, "
                                       "against the model")
    # metavar: a missing action is named as the user types it, not by its internal dest
    actions = peer.add_subparsers(dest="peer_action", metavar="{check,search,matrix,options}",
                                  required=True, parser_class=type(peer))

    def common(p) -> None:
        p.add_argument("--adapter", required=True, metavar="CMD",
                       help="the adapter's command line (JSON lines on stdin/stdout), or a "
                            f"shortcut ({shortcuts}; and every built-in peer of the "
                            "matrix: ag-ui-client@0.0.59:reducer|pipeline, assistant-ui, "
                            "tanstack-ai, copilotkitnext-core, copilotkit, ag-ui-protocol)")
        p.add_argument("--timeout", type=finite_float, default=DEFAULT_TIMEOUT,
                       help=f"seconds one answer may take before the adapter is declared hung "
                            f"(default {DEFAULT_TIMEOUT:g})")
        p.add_argument("--out", metavar="DIR",
                       help="write peer-summary.json and findings/<id>.json|.jsonl here (a new "
                            "or empty directory, or an earlier peer output)")
        p.add_argument("--json", action="store_true", help="print the report as JSON")
        add_input_limits(p)
        p.add_argument("--max-answer", type=positive_int, default=MAX_ANSWER_CHARS, metavar="N",
                       help="the longest answer line read from the adapter, in characters "
                            f"(default {MAX_ANSWER_CHARS}); a longer one is that trace's error")
        p.add_argument("--wide", action="store_true",
                       help="print the text tables at full width (default: within 120 "
                            "columns, long cells folded at word boundaries)")
        p.add_argument("--coverage", action="store_true",
                       help="also report the spec coverage of the traces put to the peer: "
                            "clauses, step branches, knob options, codes, producer violations "
                            "and surface features exercised and never (with --json: the member "
                            "'coverage'; never written to --out)")
        p.add_argument("--fail-on", choices=("divergence", "deviation", "error", "any"),
                       default=None,
                       help="exit 1 when a trace diverges (divergence), a trace agrees only "
                            "with readings that take a deviation, which is not conformant "
                            "(deviation), a trace got no usable answer (error), or any of "
                            "these (any); default: exit 0 whenever the command ran "
                            "(divergences and errors are data, in the report)")
        p.set_defaults(func=cmd_peer)

    check = actions.add_parser("check", help="run a corpus through the adapter and classify "
                                             "each trace")
    check.add_argument("traces", nargs="*", metavar="TRACE",
                       help="trace files or directories (default: the committed corpus)")
    check.add_argument("--no-shrink", action="store_true",
                       help="report divergences without shrinking them")
    common(check)

    search = actions.add_parser("search", help="feed generated traces to the adapter to find "
                                               "divergences the corpus does not hold")
    search.add_argument("--budget", type=float_or_inf, default=60.0,
                        help="seconds for the whole command (default 60; inf: no limit). The "
                             "corpus and probes are checked first; generating, feeding and "
                             "shrinking share the rest, and a divergence not shrunk in time is "
                             "exported unshrunk. A time budget makes the result depend on "
                             "speed (it may cut at another point); with --budget inf the same "
                             "seed gives byte-identical output")
    add_generation_options(search, examples=400, bfs_depth=4, per="to generate")
    search.add_argument("--vocabulary", metavar="FILE",
                        help="JSON file whose members replace those of the stateful traces' "
                             "producer vocabulary and of the breadth-first search's, as for "
                             "run and explore")
    common(search)
    from activity_check.cmd_matrix import add_matrix  # peer matrix (issue 23)
    add_matrix(actions)
    from activity_check.cmd_peer_options import add_options  # peer options (issue 41)
    add_options(actions)


PARSERS = {"peer": _add_peer}
"""The parsers this module adds (see :data:`activity_check.cli.COMMANDS`)."""


def _peer_files(previous: dict):
    """The finding files an earlier ``peer`` summary lists; None when it is not a peer one."""
    if previous.get("command") not in ("peer check", "peer search"):
        return None
    files = previous.get("files", [])
    return files if isinstance(files, list) else []


def _prepare_out(args):
    """``--out`` must be new, empty, or an earlier ``peer`` output (replaced when the new one
    is complete, what the user added to it carried over); anything else is refused, and so is
    an input (a trace file or folder, ``--vocabulary``) that the output would replace there.
    Returns the :class:`counterexamples.outdir.OutputPlan`
    (:func:`activity_check.cli.prepare_out`), or None without ``--out``."""
    if not args.out:
        return None
    inputs = list(getattr(args, "traces", None) or []) + \
        [v for v in (getattr(args, "vocabulary", None),) if v]
    return prepare_out(args.out, PEER_SUMMARY, "'activity-check peer'", _peer_files,
                       inputs=inputs)


def cmd_peer(args) -> int:
    """Run ``peer check`` or ``peer search`` (see the module docstring); 0 when the command ran
    (divergences are data), 1 when ``--fail-on`` names a condition that holds, 2 (UsageError)
    for an unusable adapter, trace or option. A ``peer check`` trace file that cannot be read,
    among others that can, is skipped (one line on stderr naming the file, line and field) and
    the rest checked and reported; the status is then 2 whatever ``--fail-on`` says."""
    import time
    began = time.monotonic()
    from counterexamples.peers.adapter import AdapterProcess, PeerError
    from counterexamples.peers.check import check_peer
    from counterexamples.peers.matrix import resolve_matrix_adapter
    from counterexamples.peers.search import search_peer
    _check_options(args)
    vocabularies = _vocabularies(args)
    try:
        spec = resolve_matrix_adapter(args.adapter)  # every matrix peer, as peer matrix
    except PeerError as exc:
        raise UsageError(str(exc)) from None
    traces, skipped = _check_traces(args) if args.peer_action == "check" else (None, [])
    plan = _prepare_out(args)
    try:
        with AdapterProcess(spec, timeout=args.timeout, max_answer=args.max_answer) as adapter:
            if traces is not None:
                report = check_peer(adapter, traces, shrink=not args.no_shrink)
                report.skipped = skipped
            else:
                report = _search(args, adapter, search_peer, began, vocabularies)
    except PeerError as exc:
        raise UsageError(str(exc)) from None
    summary = report.to_json()
    summary["command"] = f"peer {args.peer_action}"
    if args.peer_action == "search":
        summary["seed"] = args.seed
    if plan is not None:
        with write_out(plan) as staging:  # swapped in for args.out when complete
            _write_out(staging, report, summary)
    coverage = _coverage(report) if args.coverage else None
    if args.json:
        print(dump({**summary, "coverage": coverage} if coverage is not None else summary))
    else:
        _print_report(console(wide=args.wide), report, summary, args)
        if coverage is not None:
            from properties.coverage import render_text
            print(render_text(coverage))
    if skipped:  # unusable input in part: the report covers the rest
        return 2
    return 1 if args.fail_on and _fails(summary["counts"], args.fail_on) else 0


def _fails(counts: dict, condition: str) -> bool:
    """Whether ``--fail-on condition`` holds for the summary's ``counts``: ``divergence``,
    ``deviation`` (a trace matched only through a deviation, not conformant), ``error``, or
    ``any`` of them."""
    failed = {"divergence": counts["divergence"] > 0, "error": counts["error"] > 0,
              "deviation": counts.get("deviation", 0) > 0}
    return any(failed.values()) if condition == "any" else failed[condition]


def _check_traces(args) -> tuple[list, list]:
    """``peer check``'s traces and the reasons of the files skipped: the files named, or the
    committed corpus; UsageError when none can be read (one line). Each skipped file is named
    on stderr; the rest are checked and the exit status is then 2."""
    from counterexamples.peers.traces import corpus_traces, load_traces
    skipped: list = []
    try:
        traces = load_traces(args.traces, skipped) if args.traces else corpus_traces()
    except ValueError as exc:  # TraceFormatError included
        raise UsageError(str(exc)) from None
    if not traces:
        raise UsageError(skipped[0] if len(skipped) == 1 else
                         "no traces to check" + (f" ({len(skipped)} files could not be read, "
                                                 f"the first: {skipped[0]})" if skipped
                                                 else ""))
    for reason in skipped:
        print(f"activity-check: skipped {visible(reason, 400)}", file=sys.stderr)
    return traces, skipped


def _check_options(args) -> None:
    """Raise UsageError for an unusable ``--timeout`` or (``search``) ``--budget``,
    ``--examples`` or ``--bfs-depth``."""
    if math.isnan(args.timeout) or args.timeout <= 0:
        raise UsageError("--timeout must be a positive number of seconds")
    if args.peer_action == "search":
        if math.isnan(args.budget) or args.budget <= 0:
            raise UsageError("--budget must be a positive number of seconds (inf: no limit)")
        if args.examples < 0:
            raise UsageError("--examples must be 0 or more")
        if args.bfs_depth < 0:
            raise UsageError("--bfs-depth must be 0 or more")


def _write_out(out_dir: str, report, summary: dict) -> None:
    """Write the report's divergence findings into ``out_dir/findings`` and the summary, with
    each divergence's files and the list of every file written (``files``), as
    ``out_dir/peer-summary.json``; ``summary`` is completed in place. ``out_dir``: the staging
    directory of :func:`activity_check.cli.write_out` (the paths recorded are relative)."""
    from counterexamples.findings import write_finding
    directory = os.path.join(out_dir, "findings")
    os.makedirs(directory, exist_ok=True)  # even when there is no finding
    pairs = [write_finding(f, directory) for f in report.findings.values()]
    files = [os.path.relpath(p, out_dir) for pair in pairs for p in pair]
    by_id = {os.path.basename(a)[:-5]: [os.path.relpath(a, out_dir),
                                         os.path.relpath(b, out_dir)] for a, b in pairs}
    for d in summary["divergences"]:
        d["files"] = by_id.get(d["id"], [])
    summary["traceFiles"] = _write_traces(out_dir, report)
    files += sorted(summary["traceFiles"].values())
    summary["files"] = files
    with open(os.path.join(out_dir, PEER_SUMMARY), "w", encoding="utf-8",
              errors="backslashreplace") as fh:  # a lone surrogate as its JSON escape
        fh.write(dump(summary) + "\n")


_SAFE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,150}")

_BUILT_IN_SOURCES = frozenset({"corpus", "field-cases", "probe", "stateful", "bfs"})
"""The :attr:`~counterexamples.peers.traces.PeerTrace.source` of the traces the tool itself
puts to a peer (:func:`counterexamples.peers.traces.corpus_traces`, the probes and the
generated ones of :mod:`counterexamples.peers.generate`); any other source is the path of a
file the user gave."""


def _write_traces(out_dir: str, report) -> dict:
    """Write into ``out_dir/traces`` every trace put to the peer, so that each id the summary
    names (``traces[].id``, ``readings.conflicts``, ``knobs[].evidence``, each divergence's
    ``source``) resolves to a file ``peer check`` and ``replay`` read: ``traces/<id>.jsonl``
    (wire events, one a line), or ``traces/<id>.json`` (``{"id", "initialState", "events"}``)
    for a trace that starts from an agent state. A generated trace (``stateful-18``, a probe)
    existed nowhere else. Returns ``{id: path relative to out_dir}``, in the order the traces
    were put; a trace read from a file the user gave is not written (they have it), nor one
    whose id is not a plain file name."""
    from model.wire import dump_wire_jsonl
    by_id = {r.trace.id: r.trace for r in report.results}  # one file an id
    out: dict = {}
    for tid, trace in by_id.items():
        if not _SAFE_NAME.fullmatch(tid) or trace.source not in _BUILT_IN_SOURCES:
            continue  # a trace file the user gave is theirs already
        os.makedirs(os.path.join(out_dir, "traces"), exist_ok=True)
        if trace.state is None:
            rel, text = f"traces/{tid}.jsonl", dump_wire_jsonl(list(trace.wire))
        else:
            rel, text = f"traces/{tid}.json", dump({"id": tid, "initialState": trace.state,
                                                    "events": list(trace.wire)}) + "\n"
        with open(os.path.join(out_dir, rel), "w", encoding="utf-8",
                  errors="backslashreplace") as fh:
            fh.write(text)
        out[tid] = rel
    return out


def _vocabularies(args):
    """``peer search --vocabulary FILE``: ``(stateful vocabulary, breadth-first vocabulary)``,
    each the file's members over that generator's defaults; ``(None, None)`` without the
    option. Raises UsageError (one line naming the file and the member) for a bad file."""
    if getattr(args, "vocabulary", None) is None:
        return None, None
    from model.producer import DEFAULT_VOCABULARY
    from properties.search.explore import EXPLORE_VOCABULARY
    return (read_vocabulary(args.vocabulary, DEFAULT_VOCABULARY),
            read_vocabulary(args.vocabulary, EXPLORE_VOCABULARY))


def _coverage(report) -> dict:
    """The spec coverage (:func:`properties.coverage.report`) of the traces the peer was asked
    about that start from an empty agent state."""
    from properties.coverage import coverage_of, report as coverage_report
    return coverage_report(coverage_of(r.trace.events for r in report.results
                                       if r.trace.state is None))


def _search(args, adapter, search_peer, began: float, vocabularies=(None, None)):
    budget = None if math.isinf(args.budget) else args.budget
    with progress_bar() as progress:
        task = progress.add_task("feeding traces to the peer", total=None)
        return search_peer(adapter, seed=args.seed, budget=budget, stateful=args.examples,
                           bfs_depth=args.bfs_depth, vocabulary=vocabularies[0],
                           bfs_vocabulary=vocabularies[1],
                           deadline=None if budget is None else began + budget,
                           progress=lambda done, total: progress.update(task, completed=done,
                                                                        total=total))


def _spaced(reading: str) -> str:
    """A reading as the text tables show it: ``Q1=merge,Q19=catch-all`` as ``Q1=merge,
    Q19=catch-all``, so that a cell folds between two knobs, never inside one."""
    return reading.replace(",", ", ")


def _print_divergences(con, divergences: list, width) -> None:
    """The divergence findings, one paragraph each (a table of six id columns cannot fit
    :data:`~model.text.TEXT_WIDTH` columns without cutting ids): the finding id and its kind, the
    event where the peer first parts from every reading and the model's branch there, the
    clauses at stake, and what differs from the nearest reading; folded at spaces to ``width``
    (None, ``--wide``: one line each), so no id is ever broken (issue 39 item 5)."""
    con.print("divergences (the peer agrees with no reading), one per root cause:")
    for d in divergences:
        kind = d.get("divergenceKind", "verdict")
        if kind == "stopped-reading":
            kind = f"stopped reading at event {d['stoppedAt']}: later events had no effect"
        elif kind == "ignored-event":
            kind = f"ignored event {d['divergesAt']}: its answer the same without it"
        if not d["shrunk"]:
            kind += " (not shrunk)"
        elif d.get("minimal") is False:
            kind += " (shrunk within its time, not 1-minimal)"
        outside = d.get("outsideDraft") or []
        clauses = (", ".join(d["clauses"]) or "none (no clause is tied to this branch)") + (
            f" (related: {', '.join(d['relatedClauses'])})" if d["relatedClauses"] else "") + (
            f"; rests on the model's own rules outside the draft: {', '.join(outside)}"
            if outside else "")
        text = (f"  {d['id']} {kind}; at event {d['divergesAt']} {d['event']}, model branch "
                f"{d['branch']}; clauses {clauses}; differs from the nearest reading "
                f"{d['nearest']}: {', '.join(d['aspects'])}")
        for line in fold_words(visible(text, None), width, "      "):
            con.print(escape(line))


def _print_report(con, report, summary: dict, args) -> None:
    from model.readings import KNOB_BY_ID, deviation_note
    counts = summary["counts"]
    con.print(f"[bold]peer {args.peer_action}[/bold] adapter [bold]{shown(report.adapter)}[/bold]"
              + (f" ({shown(report.peer)})" if report.peer else ""))
    budget_cut = report.generated and report.stopped_by == "budget"
    con.print("compared: " + (shown(", ".join(report.compared), None) or (
        "nothing (the budget ran out before any answer)" if budget_cut and not report.results
        else "nothing (no usable answer)")))
    if report.generated:
        con.print("traces generated: " + ", ".join(f"{n} {k}" for k, n in
                                                   report.generated.items())
                  + f"; checked: {len(report.results)}"
                  + ("; stopped by the budget (--budget inf for a complete, reproducible run)"
                     if budget_cut else ""))
    rows = summary["traces"]
    listed = rows if args.peer_action == "check" else [r for r in rows if r["class"] != "draft"]
    table = Table(title="traces" if args.peer_action == "check" else
                  "traces that do not agree with draft")
    limit = 200 if args.peer_action == "check" else 40
    # The class goes first in the readings cell, a reading's knobs spaced (``Q1=merge,
    # Q19=catch-all``) and the aspects in a column as wide as the longest: every cell folds at
    # spaces within 120 columns and no id is cut (issue 39 item 5).
    rows_shown = []
    for r in listed[:limit]:
        if r["class"] == "error":
            detail, differs = f"error: {r['error']}", ""
        elif r["class"] == "divergence":
            detail, differs = (f"divergence, nearest: {_spaced(r['nearest'])}",
                               ", ".join(r["differsFromNearest"]))
        else:
            readings = [_spaced(x) for x in r["readings"]]
            detail = "; ".join(readings[:3]) + (f" (+{len(readings) - 3})" if len(readings) > 3
                                                 else "")
            differs = ", ".join(r["differsFromDraft"]) or "-"
            if r.get("deviation"):  # matches only through a deviation: not conformant
                detail = f"deviation: only through {_spaced(r['deviation'])}: {detail}"
            elif r.get("outsideDraft"):  # the model's own rules, outside the draft
                detail = f"{r['class']}: outside the draft, {r['outsideDraft']}: {detail}"
            else:
                detail = f"{r['class']}: {detail}"
        rows_shown.append((r, detail, differs))
    id_column(table, "trace", [r["id"] for r, _, _ in rows_shown])
    table.add_column("class: readings / nearest reading / error", overflow="fold")
    id_list_column(table, "differs in", [d for _, _, d in rows_shown])
    id_column(table, "finding", [r.get("finding", "") for r, _, _ in rows_shown])
    for r, detail, differs in rows_shown:
        table.add_row(cell(r["id"]), cell(detail), cell(differs), cell(r.get("finding", "")))
    if listed:
        con.print(table)
    if len(listed) > limit:
        con.print(f"... and {len(listed) - limit} more (see --json)")
    knobs = Table(title="which option the peer behaves as (from traces that separate the "
                        "options)")
    id_column(knobs, "knob", [k["knob"] for k in summary["knobs"]])
    for col in ("question", "peer behaves as", "separating traces"):
        knobs.add_column(col, overflow="fold")
    for k in summary["knobs"]:
        if k["status"] == "determined":
            verdict = k["behavesAs"] + deviation_note(k["knob"], k["behavesAs"])
        elif k["status"] == "undetermined":
            verdict = "one of " + ", ".join(k["options"])
        elif k["status"] == "inconsistent":
            verdict = "inconsistent: no single option fits every separating trace"
        else:
            verdict = "no evidence"
        ev = list(k["evidence"])
        knobs.add_row(k["knob"], KNOB_BY_ID[k["knob"]].gloss, verdict,
                      cell(f"{len(ev)}: " + ", ".join(visible(e) for e in ev[:3])
                           + (" ..." if len(ev) > 3 else ""), None) if ev else "-")
    con.print(knobs)
    if summary["divergences"]:
        _print_divergences(con, summary["divergences"], None if args.wide else TEXT_WIDTH)
    deviating = counts.get("deviation", 0)
    con.print(f"{counts['traces']} traces: {counts['draft']} agree with draft, {counts['reading']} "
              f"with another reading"
              + (f" ({deviating} of them only through a deviation: not conformant)"
                 if deviating else "")
              + f", {counts['divergence']} with none, {counts['error']} "
              f"errors; {len(summary['divergences'])} divergence finding(s)"
              + (f" ({report.unexamined} more divergent traces not located: shorter ones of "
                 "their kind were)" if report.unexamined else "") + "; "
              f"{report.seconds:.1f} s, adapter started {report.starts} time(s)")
    first = report.first_divergence
    con.print("first divergence: " + (f"after {first['traces']} traces, {first['seconds']:.1f} s"
                                      if first else "none"))
    joint = report.joint
    con.print(f"readings consistent with every answer: {len(joint.assignments)} partial "
              f"assignment(s) from {joint.taken} constraining trace(s)"
              + (f"; set aside as no reading consistent with the others gives them: "
                 f"{shown(', '.join(joint.conflicts[:5]), None)}"
                 + (f" (+{len(joint.conflicts) - 5})" if len(joint.conflicts) > 5 else "")
                 if joint.conflicts else ""))
    if report.skipped:
        con.print(f"[bold yellow]{len(report.skipped)} trace file(s) skipped[/bold yellow] "
                  "(unreadable; listed on stderr and under 'skipped'; exit status 2)")
    if args.out:
        parts = [f"{shown(args.out)}/{PEER_SUMMARY}"]
        if any(f.startswith("findings/") for f in summary.get("files", [])):
            parts.append(f"{shown(args.out)}/findings/")
        if summary.get("traceFiles"):
            parts.append(f"{shown(args.out)}/traces/")
        con.print("written to " + (", ".join(parts[:-1]) + " and " + parts[-1]
                                   if len(parts) > 1 else parts[0]))
    elif summary["divergences"]:  # the ids above name files only --out writes
        con.print("the findings above are not written: --out DIR writes each as "
                  "DIR/findings/<id>.json and .jsonl")
