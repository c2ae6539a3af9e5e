"""``activity-check explore``: the exhaustive breadth-first search to a depth
(:func:`properties.search.explore.explore`), its report (:meth:`properties.search.report.ExploreReport.to_json`)
and, with ``--graph``, the explored state graph as GraphML or DOT."""
from __future__ import annotations

import json
import math
import os
import sys

from rich.table import Table

from activity_check.cli import (EXIT_INTERRUPTED, UsageError, add_timings_option, cell, console,
                                dump, finite_float, progress_bar, read_vocabulary, reading_option, shown,
                                terminated)
from model.text import visible

__all__ = ["PARSERS", "cmd_explore", "DEFAULT_EXPLORE_DEPTH", "DEFAULT_MAX_STATES"]

DEFAULT_EXPLORE_DEPTH = 5
"""``explore``'s default bound (issue 4: exhausted within 60 s; about 50 s here on a
quiet core, after issues 19 and 20 widened the model): about 2 million states of the exploration vocabulary under every
reading with every property (2,040,459 with the steps and tool calls of issue 20), the same default as
:func:`properties.search.explore.explore` (a constant of its own, so that start-up does not import the
search)."""

DEFAULT_MAX_STATES = 4_000_000
"""``explore``'s default state bound (about 3 GB): a deep search grows by megabytes a second, so
an unbounded one is asked for explicitly (``--max-states 0``); about twice the states of the
default depth under every reading, so that the default bound is the depth bound, also for a
somewhat larger ``--vocabulary``."""


MIN_MEMO_ENTRIES = 1_000
"""The smallest ``--memo-entries``: below it every chunk would empty the tables (the output is
the same at any budget; a smaller one is a typo, not a setting)."""


def _add_explore(sub) -> None:
    ex = sub.add_parser("explore", help="exhaustive breadth-first exploration to a depth")
    ex.add_argument("--depth", type=int, default=DEFAULT_EXPLORE_DEPTH,
                    help=f"longest trace explored (default {DEFAULT_EXPLORE_DEPTH}: every "
                         "reading and every property over about 2 million states, about a "
                         "minute and 1.2 GB here; 4 takes seconds)")
    ex.add_argument("--vocabulary", help="JSON file with the producer vocabulary "
                    "(default: the small exploration vocabulary)")
    ex.add_argument("--max-states", type=int, default=DEFAULT_MAX_STATES,
                    help=f"stop after this many distinct states (default {DEFAULT_MAX_STATES:,}, "
                         "about 3 GB; 0: no limit; a round of 1,048,576 frontier nodes the "
                         "workers expand is cut when it is merged, after they finish it)")
    ex.add_argument("--timeout", type=finite_float,
                    help="stop after this many seconds (checked before each chunk of 4,096 nodes "
                         "this process expands, and before each round of 1,048,576 frontier "
                         "nodes the workers expand; a round under way is finished first)")
    ex.add_argument("--reading", default="all",
                    help="all (default): every reading in one sweep, one consumer state per "
                         "class of readings not yet diverged; or one reading (draft, a preset, "
                         "or KNOB=OPTION,...)")
    ex.add_argument("--adversarial", action="store_true",
                    help="also take the producer's non-conformant moves")
    ex.add_argument("--graph", help="write the state graph (.graphml, .dot or .gv) after the "
                    "report; it keeps every edge: at the default depth about 5 GB of memory, a "
                    "minute or two and a 450 MB file (depth 4: seconds)")
    ex.add_argument("--workers", type=int, default=None,
                    help="worker processes expanding each level (default: the cores available; "
                         "1: this process only; at most four a core; the output is the same for "
                         "any number); levels "
                         "of fewer than 1,000 states (10,000 for the last) stay in this process")
    ex.add_argument("--memo-entries", type=int, default=None, metavar="N",
                    help="with every reading: the memo tables' budget of each process (this "
                         "one and each worker), in entries of about 0.3 KB (default "
                         "6,000,000, about 2 GB); past it entries are dropped and computed "
                         "again when needed: less memory, more time, the same output")
    ex.add_argument("--cluster", metavar="ADDRESS",
                    help="expand the levels on the running Dask cluster whose scheduler is at "
                         "ADDRESS (e.g. tcp://10.0.0.5:8786) instead of local workers")
    ex.add_argument("--checkpoint", metavar="DIR",
                    help="save the search in DIR as it goes (every --checkpoint-every seconds, "
                         "when --timeout or --max-states stops it, and at its end) and, when "
                         "DIR holds this search's checkpoint, resume it there: the same command "
                         "run again takes a deep search up where it stopped (a Ctrl-C keeps the "
                         "last save), and gives the report of a search never stopped, whatever "
                         "the workers of each run (with workers or a cluster, saved between "
                         "rounds of 1,048,576 states of a level); no --graph; about 24 bytes of "
                         "disk a state")
    ex.add_argument("--checkpoint-every", type=finite_float, default=None, metavar="SECONDS",
                    help="with --checkpoint: seconds between its saves (default 600; 0: at "
                         "every chunk of 4,096 states)")
    ex.add_argument("--json", action="store_true", help="print the result as JSON")
    ex.add_argument("--wide", action="store_true",
                    help="the table and lines at full width (default: within 120 columns, "
                         "folded at word boundaries)")
    add_timings_option(ex)
    ex.add_argument("--coverage", action="store_true",
                    help="after the report, the spec coverage of the traces explored (to every "
                         "leaf of the search tree, and the witnesses): clauses, step branches, "
                         "knob options, codes, producer violations and surface features "
                         "exercised and never (with --json: the member 'coverage'); about 0.2 ms "
                         "a leaf: some ten seconds at depth 4, several minutes at 5")
    ex.set_defaults(func=cmd_explore)


PARSERS = {"explore": _add_explore}
"""The parsers this module adds (see :data:`activity_check.cli.COMMANDS`)."""


def cmd_explore(args) -> int:
    """``explore``: the breadth-first search to a depth (:func:`properties.search.explore.explore`),
    every reading in one sweep unless ``--reading`` names one. Prints (or ``--json``) what bound
    stopped it, the shortest split per knob and the properties violated, then writes the graph
    (``--graph``). Returns 0, 130 when interrupted (the report of what was explored is printed
    first), 1 when the Dask cluster fails the search (:class:`properties.search.dask_engine.ClusterError`:
    one line on stderr); raises UsageError (exit 2) for unusable options or vocabulary."""
    from properties.search.checkpoint import CheckpointError
    from properties.search.dask_engine import ClusterError

    reading, vocabulary = _options(args)
    try:
        report = _explore(args, reading, vocabulary)
    except ClusterError as exc:
        print(f"activity-check: error: {visible(exc, None)}; nothing explored is reported"
              f"{_what_stands(args.checkpoint)}", file=sys.stderr)
        return 1
    except CheckpointError as exc:
        raise UsageError(f"--checkpoint: {visible(exc, None)}") from None
    out = report.to_json(args.depth, reading, args.adversarial)
    coverage = _coverage(report) if getattr(args, "coverage", False) and \
        report.stopped_by != "interrupted" else None
    if coverage is not None and args.json:
        out["coverage"] = coverage
    if args.timings and args.json:
        out["seconds"] = round(report.seconds, 3)
    # Ctrl-C: the report of what was explored, then the interrupt's status, as other commands
    status = EXIT_INTERRUPTED if report.stopped_by == "interrupted" else 0
    if args.json:
        print(dump(out))
        sys.stdout.flush()
        return (_write_graph(args.graph, report)[0] or status) if args.graph else status
    con = console(wide=getattr(args, "wide", False))
    _print_report(con, args, report, out)
    if coverage is not None:
        from properties.coverage import render_text
        print(render_text(coverage))
    if args.graph:
        written, edges = _write_graph(args.graph, report)
        if written:
            return written
        con.print(f"wrote the state graph ({_count(report.states, 'state')}, "
                  f"{_count(edges, 'edge')}"
                  + (": one per class of readings a move reaches"
                     if out["readingClasses"] is not None else "")
                  + f") to {shown(args.graph)}")
    return status


def _what_stands(checkpoint) -> str:
    """After a failed search, what its ``--checkpoint`` directory holds to take up, as the end
    of the error line ("" without a checkpoint; :func:`properties.search.checkpoint.what_stands`)."""
    from properties.search.checkpoint import META, what_stands
    if checkpoint is None:
        return ""
    return "; " + what_stands(os.path.isfile(os.path.join(checkpoint, META)))


def _options(args):
    """Check ``explore``'s options (``--max-states 0`` becomes None: no limit); returns ``(the
    reading or None for all, the vocabulary)``. Raises UsageError."""
    from properties.search.explore import EXPLORE_VOCABULARY

    if args.depth < 1:
        raise UsageError("--depth must be at least 1")
    if args.cluster is not None and args.workers is not None:
        raise UsageError("--workers and --cluster: the cluster's own workers expand the levels; "
                         "give one of the two")
    if args.workers is not None and args.workers < 1:
        raise UsageError("--workers must be at least 1")
    if args.checkpoint is not None:  # an empty one is refused with every empty path
        if args.graph:
            raise UsageError("--checkpoint: the graph's edges are not saved; give it without "
                             "--graph")
    elif args.checkpoint_every is not None:
        raise UsageError("--checkpoint-every: give it with --checkpoint (where to save)")
    if args.checkpoint_every is None:
        args.checkpoint_every = 600.0
    if not args.checkpoint_every >= 0 or math.isinf(args.checkpoint_every):
        raise UsageError("--checkpoint-every must be a finite number of seconds, 0 or more")
    from properties.search.dask_engine import default_workers, too_many_workers
    if args.workers is None:
        args.workers = default_workers()
    if args.workers < 1:
        raise UsageError("--workers must be at least 1")
    if too_many_workers(args.workers):
        raise UsageError(too_many_workers(args.workers))
    if args.max_states is not None and args.max_states < 0:
        raise UsageError("--max-states must be 0 (no limit) or more")
    if args.max_states == 0:
        args.max_states = None
    if args.timeout is not None and (math.isnan(args.timeout) or args.timeout <= 0):
        raise UsageError("--timeout must be a positive number of seconds")
    if args.memo_entries is not None:
        if args.memo_entries < MIN_MEMO_ENTRIES:
            raise UsageError(f"--memo-entries must be at least {MIN_MEMO_ENTRIES:,}")
        if args.reading != "all":
            raise UsageError("--memo-entries: only the search of every reading (--reading all) "
                             "keeps memo tables")
    reading = None
    if args.reading != "all":
        reading = reading_option(args.reading)
    vocabulary = EXPLORE_VOCABULARY
    if args.vocabulary:
        vocabulary = read_vocabulary(args.vocabulary, EXPLORE_VOCABULARY)
    if args.graph and os.path.lexists(args.graph):  # a dangling symbolic link too
        what = "is a symbolic link" if os.path.islink(args.graph) else "exists"
        raise UsageError(f"--graph {args.graph}: {what}; choose a new file name")
    if args.graph and not args.graph.endswith((".graphml", ".dot", ".gv")):
        raise UsageError("--graph: the file name must end in .graphml, .dot or .gv")
    if args.graph:
        parent = os.path.dirname(os.path.abspath(args.graph))
        if not os.path.isdir(parent) or not os.access(parent, os.W_OK):
            raise UsageError(f"--graph {args.graph}: {parent} is not a writable directory")
        try:  # a file system that refuses new files (/proc, read-only): before the search
            import tempfile
            tempfile.TemporaryFile(dir=parent).close()
        except OSError as exc:
            raise UsageError(f"--graph {args.graph}: cannot make a file in {parent} "
                             f"({exc.strerror})") from None
    if args.cluster is not None:  # last: the cluster may take seconds to answer
        from properties.search.dask_engine import cluster_workers
        try:
            cluster_workers(args.cluster)
        except (OSError, ImportError) as exc:
            raise UsageError(f"--cluster: {exc}") from None
    return reading, vocabulary


def _explore(args, reading, vocabulary):
    """The search, with a progress line per level on stderr; its :class:`ExploreReport`."""
    from properties.search.explore import ExploreOptions, explore

    with progress_bar(bar=False) as progress:
        task = progress.add_task("exploring: depth 0, 1 state", total=None)

        def report_level(depth, states, edges, seconds):
            rate = states / seconds if seconds else 0
            progress.update(task, description=f"exploring depth {depth + 1}: {states:,} states,"
                                              f" {edges:,} edges, {rate:,.0f} states/s")

        return explore(ExploreOptions(depth=args.depth, vocabulary=vocabulary, reading=reading,
                                      adversarial=args.adversarial, max_states=args.max_states,
                                      timeout=args.timeout, progress=report_level,
                                      keep_edges=bool(args.graph), workers=args.workers,
                                      cluster=args.cluster, checkpoint=args.checkpoint,
                                      checkpoint_every=args.checkpoint_every,
                                      **({} if args.memo_entries is None
                                         else {"cache_entries": args.memo_entries})))


def _coverage(report) -> dict:
    """The spec coverage of the explored traces (:func:`properties.coverage.exploration_traces`,
    :func:`properties.coverage.report`), with a progress line on stderr."""
    from properties.coverage import coverage_of, exploration_traces, report as coverage_report

    with progress_bar(bar=False) as progress:
        progress.add_task("measuring the spec coverage of the explored traces", total=None)
        return coverage_report(coverage_of(exploration_traces(report)))


def _print_report(con, args, report, out: dict) -> None:
    bound = {"depth": f"the depth bound ({args.depth})",
             "max-states": f"--max-states {args.max_states}",
             "timeout": f"--timeout {args.timeout}",
             "interrupted": "a SIGTERM" if terminated() else "an interrupt (Ctrl-C)"}[
                 report.stopped_by]
    timing = f" in {report.seconds:.1f} s ({report.states_per_second:,.0f} states/s)" \
        if args.timings else ""
    con.print(f"explored {_count(report.states, 'distinct state')} and "
              f"{_count(report.edges, 'move')} to depth {report.depth}{timing}"
              + (f" under every reading at once ({_count(report.classes, 'class', 'classes')} "
                 "of readings)"
                 if out["readingClasses"] is not None else f" under reading {out['reading']}")
              + f"; stopped by {bound}"
              + ("" if report.complete else f"; depth {report.depth + 1} is "
                 f"{'partly' if report.partial else 'not'} explored"))
    saved = report.storage.get("checkpoint")
    if saved is not None:
        runs = saved["runs"]
        con.print(f"checkpoint {shown(saved['directory'])}: "
                  + (f"the search had ended (run {runs}); its report again" if saved["ended"]
                     else "") + ("" if saved["ended"] else
                                 f"resumed, run {runs} of the search; " if runs > 1 else "")
                  + ("" if saved["ended"] else "saved" if report.complete else
                     "a larger --max-states resumes the search from its last save"
                     if report.stopped_by == "max-states" else
                     "the same command resumes the search from its last save"))
    workers = f"on {report.workers} worker{'s' if report.workers != 1 else ''}; " \
        if args.timings else ""  # a fact of the run, like its time: the rest is the same for any N
    con.print(f"{workers}visited set: "
              f"{report.storage['fingerprint']}, probability of a fingerprint collision "
              f"{report.storage['collisionProbability']:.1e} for "
              f"{_count(report.states, 'state')}")
    table = Table(title=f"open questions that split a step ({len(report.splits)}), shortest first found")
    for col in ("knob", "events", "readings", "trace"):
        table.add_column(col, overflow="fold")
    for knob, info in out["splits"].items():
        table.add_row(knob, str(info["length"]), " vs ".join(info["pair"]),
                      cell(" | ".join(visible(_short(e)) for e in info["trace"]), None))
    con.print(table)
    if out["violations"]:
        for pid, info in out["violations"].items():
            con.print(f"[bold red]{pid}[/bold red] violated after {info['length']} events: "
                      f"{shown(info['witness'], None)}")
    else:
        con.print("no property violated on any explored transition "
                  f"({_count(report.edges, 'move')} checked"
                  + (", each under every class of readings it reaches)"
                     if out["readingClasses"] is not None else ")"))


def _count(n: int, noun: str, plural: str = "") -> str:
    """``n`` with thousands separators and ``noun``, plural unless ``n`` is 1 (``plural``, or
    ``noun`` + "s")."""
    return f"{n:,} {noun if n == 1 else plural or noun + 's'}"


def _write_graph(path: str, report) -> tuple[int, int]:
    """Write the explored state graph to ``path`` (``.graphml``, else DOT), after the report is
    printed, with a progress line on stderr (the graph holds every examined edge: at the default
    bound a minute or more, and gigabytes). The file is written beside its name and linked to it
    when complete (:func:`counterexamples.outdir.new_file`: never over another file, never
    through a symbolic link), so a failed or interrupted write leaves no partial graph; after a
    search that was interrupted it is not written at all (the user asked the command to stop).

    Returns ``(status, edges written)``: status 0, or 130 when interrupted (one line on
    stderr; no edges). Raises UsageError when the file cannot be written."""
    from counterexamples.outdir import new_file
    from properties.search.graph import state_graph

    not_written = ("activity-check: interrupted; the state graph was not written to "
                   f"{visible(path, None)}")
    if report.stopped_by == "interrupted":
        print(not_written, file=sys.stderr)
        return EXIT_INTERRUPTED, 0
    try:
        with progress_bar(bar=False) as progress:
            progress.add_task(f"writing the state graph ({report.states:,} states) to "
                              f"{shown(path)}", total=None)
            graph = state_graph(report)
            with new_file(path) as fh:  # whole or not at all, never over anything there
                if path.endswith(".graphml"):
                    import networkx as nx
                    nx.write_graphml(graph, fh)
                else:
                    _write_dot(graph, fh)
    except KeyboardInterrupt:
        print(not_written, file=sys.stderr)
        return EXIT_INTERRUPTED, 0
    except FileExistsError:
        raise UsageError(f"--graph {path}: exists; choose a new file name") from None
    except OSError as exc:
        raise UsageError(f"--graph {path}: {exc.strerror}") from None
    return 0, graph.number_of_edges()


def _short(event: dict) -> str:
    """One wire event in a few words, for the report's table."""
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
