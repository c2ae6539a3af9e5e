"""Exhaustive exploration benchmark: distinct states and edges per second, exploration vocabulary.

Distinct states, edges, depth reached and states per second for the default exploration
vocabulary, with and without the per-edge checks.

Five configurations at the default bound of ``activity-check explore`` (depth 5, 2,040,459 states
under every reading), each a breadth-first search from the empty consumer:

* ``all-readings``: every reading in one sweep (one consumer state per class of readings not yet
  diverged) with every property of the catalogue on every transition: the default bound of
  ``activity-check explore``;
* ``all-readings-bare``: the same sweep without properties (the forks and splits only);
* ``draft``: one reading (draft), every property and the split check on every edge;
* ``draft-readings``: one reading, the split check only;
* ``draft-bare``: one reading, neither (the search itself: moves, step, dedup).

and, with ``--extra-depth N``, the two all-readings configurations again at depth N. The rate
rises with depth, as outcomes are shared across more beliefs and classes per consumer
transition: at depth 4 (64,148 states, a few seconds) nearly every step tree and property check
is computed for the first time, and the rate is a third to a half of that of depth 5; depth 6
expands the 1,695,327 frontier nodes of level 5 (54,313,288 states and 111,953,553 edges in
all), ten to fifteen minutes here, and depth 7 some six to nine hours on one core
(``--timeout`` stops a run where it is and reports what it explored, ``--checkpoint DIR``
saves it so that the next run goes on from there; see the README's section on the
exhaustive search for the figures).

Targets (issue 4): at least 20,000 distinct states per second on one core, and the default bound
exhausted within 60 s, both judged on ``all-readings`` (every reading and every property) at
``--depth`` (the default bound unless another is given).

Rates are wall-clock. Each configuration runs ``--repeat`` times (default 3), every run in a
fresh process (so that no run finds the memo tables of another warm), and its figures come from
the fastest run, with the median beside it: the searches are deterministic, and on a shared
machine the host's load only ever adds time, so the fastest run is the closest to the code's
own cost, and the median shows how much the load moved the others.

Memory: ``bytesPerState`` is the peak resident memory of the run's processes (the search's
own and, with workers, theirs added up) over its distinct states; ``storage`` says what the
driver's parts take (visited fingerprints and parent entries, 8 bytes a state each).

Workers: with ``--workers N`` (N > 1) the ``all-readings`` configuration runs again on N local
Dask worker processes (``all-readings-workersN``), with its ``speedup`` over the one-worker run
(median seconds over median seconds) and each worker task's CPU seconds, which show how
evenly the work was split and, beside the wall time, whether the machine gave every worker a
core (on a shared machine it may not: compare ``cpuSeconds`` with ``seconds``).

Each row also gives ``cpuSeconds`` (this process's and every worker task's CPU time; with
``--checkpoint``, every process's the search took), ``processCpuSeconds`` (this process's alone,
or the search's processes'), ``clusterCpuSeconds`` (every process of the local
cluster, workers and nannies, over the whole run, beside the tasks too) and ``loadAverage``
(the host's 1-minute load when the run ended): on a machine shared with other work, CPU
seconds over wall seconds says how much of a core the run was given.

Usage: python benchmarks/explore.py [--depth N] [--extra-depth N] [--repeat N] [--workers N]
[--only NAME,...] [--timeout SECONDS] [--progress] [--checkpoint DIR] [--json]
"""
from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import statistics
import sys
from concurrent.futures import ProcessPoolExecutor
from typing import Optional

from activity_check.cmd_explore import DEFAULT_EXPLORE_DEPTH
from model.readings import DRAFT
from properties.search.checkpoint import CheckpointError
from properties.search.explore import explore

CONFIGURATIONS = (
    ("all-readings", {"reading": None}),
    ("all-readings-bare", {"reading": None, "properties": ()}),
    ("draft", {}),
    ("draft-readings", {"properties": ()}),
    ("draft-bare", {"properties": (), "check_readings": False}),
)


def measure(depth: int = DEFAULT_EXPLORE_DEPTH, extra_depth: int = 0, repeat: int = 3,
            workers: int = 1, only: Optional[set] = None,
            timeout: Optional[float] = None, progress: bool = False,
            checkpoint: Optional[str] = None) -> dict:
    """Run every configuration to ``depth`` and the all-readings ones to ``extra_depth``
    (0: skip those), each ``repeat`` times; returns their figures, from the fastest run of each
    (seconds are wall time; ``secondsMedian`` and ``secondsEach``, in the order run, give the
    others; rates come from the unrounded seconds).

    ``only``: the names of the configurations to run (None: all; the extra-depth ones are
    named ``NAME@N``). ``timeout``: seconds after which each run stops, at the next chunk of
    nodes it would expand (its row then says ``"complete": false`` and gives the figures of
    what it explored: a partial deep run still measures the rate and the memory of its levels;
    None: no limit). ``progress``: each run prints a line to standard error at each level's
    end and every minute within a level (states, edges, seconds, resident memory), for a deep
    run that takes hours. ``checkpoint``: a directory under which each configuration's search
    is saved as it goes (in a directory of its name) and resumed by the next invocation
    (:mod:`properties.search.checkpoint`), for a run longer than a session: its row's seconds and
    CPU seconds are those of every process the search took, and its peak memory the largest of
    theirs (``checkpointRuns`` says how many).

    Raises ValueError when ``repeat`` or ``workers`` is below 1, ``timeout`` is not positive,
    ``only`` names a configuration not run, or ``checkpoint`` is given with ``repeat`` or
    ``workers`` above 1 (a repeat, or the run on N workers beside the one-worker run it is
    compared with, would only report again the search the first run finished), and
    RuntimeError when two complete runs of one configuration explore different numbers of
    states or edges (the search is deterministic)."""
    if repeat < 1:
        raise ValueError(f"--repeat must be at least 1, not {repeat}")
    if workers < 1:
        raise ValueError(f"--workers must be at least 1, not {workers}")
    if timeout is not None and not timeout > 0:
        raise ValueError(f"--timeout must be a positive number of seconds, not {timeout}")
    if checkpoint is not None and (repeat > 1 or workers > 1):
        raise ValueError("--checkpoint: give --repeat 1 and no --workers (each configuration "
                         "is one search, saved by its own process)")
    runs = [(name, depth, kwargs) for name, kwargs in CONFIGURATIONS]
    if workers > 1:
        runs.append((f"all-readings-workers{workers}", depth,
                     {"reading": None, "workers": workers}))
    if extra_depth:
        runs += [(f"{name}@{extra_depth}", extra_depth, kwargs)
                 for name, kwargs in CONFIGURATIONS if kwargs.get("reading", DRAFT) is None]
    if only is not None:
        unknown = sorted(set(only) - {run[0] for run in runs})
        if unknown:
            raise ValueError(
                f"--only: no configuration {', '.join(unknown)} among "
                f"{', '.join(run[0] for run in runs)}"
                + (" (NAME@N needs --extra-depth N)" if any("@" in n for n in unknown) else "")
                + (f" (all-readings-workersN needs --workers N)"
                   if any("workers" in n for n in unknown) else ""))
        runs = [run for run in runs if run[0] in only]
    rows = {}
    spawn = multiprocessing.get_context("spawn")
    for name, bound, kwargs in runs:
        figures = []
        for _ in range(repeat):  # one at a time, each in a process of its own
            saved = {} if checkpoint is None else \
                {"checkpoint": os.path.join(checkpoint, name)}
            with ProcessPoolExecutor(max_workers=1, mp_context=spawn) as pool:
                figures.append(pool.submit(_run, bound, {**kwargs, "timeout": timeout, **saved},
                                           name if progress else None).result())
        if len({(f["states"], f["edges"]) for f in figures if f["complete"]}) > 1:
            raise RuntimeError(f"{name}: runs explored different states or edges")
        each = [f["seconds"] for f in figures]  # in the order run
        row = dict(min(figures, key=lambda f: f["seconds"]))
        median = statistics.median(each)
        row.update(seconds=round(min(each), 2), secondsMedian=round(median, 2),
                   secondsEach=[round(x, 2) for x in each],
                   statesPerSecondMedian=round(row["states"] / median) if median else None,
                   bytesPerStateMedian=round(statistics.median(
                       f["bytesPerState"] for f in figures)))
        rows[name] = row
    if workers > 1 and {"all-readings", f"all-readings-workers{workers}"} <= set(rows):
        alone, spread = rows["all-readings"], rows[f"all-readings-workers{workers}"]
        # only two runs that covered the same search compare (a partial run covers less)
        spread["speedup"] = round(alone["secondsMedian"] / spread["secondsMedian"], 2) \
            if spread["secondsMedian"] and alone["complete"] and spread["complete"] else None
    return {"benchmark": "explore", "depth": depth, "defaultBound": DEFAULT_EXPLORE_DEPTH,
            "extraDepth": extra_depth,
            "repeat": repeat, "workers": workers, "configurations": rows,
            "timeout": timeout, "targets": TARGETS, "aims": judge(rows, workers),
            "issue4Aims": judge_issue4(rows, depth)}


TARGETS = {"statesPerSecond": 20000, "defaultBoundSeconds": 60,
           "issue21": {"statesPerSecond": 100000, "bytesPerState": 100,
                       "speedupOnTwoWorkers": 1.7, "depth7Bytes": 20 * 10 ** 9}}
"""Issue 4's targets and issue 21's aims, all judged on every reading with every property."""


def judge(rows: dict, workers: int) -> list:
    """Issue 21's aims judged on the configurations run (``rows`` as :func:`measure` makes
    them): ``[{"aim", "configuration", "depth", "value", "target", "met"}]``, ``met`` None
    (with ``"why"``) where a row cannot judge the aim. The one-core aims (states per second,
    bytes per state) are judged on each one-process every-reading run with properties
    (``all-readings`` and ``all-readings@N``) at the default bound or deeper, the speedup on
    ``all-readings-workers2``, and depth 7 within 20 GB (peak resident bytes, workers' added)
    on ``all-readings@7``; a partial run (stopped by ``--timeout``) judges none of them: its rate and memory are those
    of the levels it reached."""
    aims = TARGETS["issue21"]
    out = []

    def verdict(aim, name, row, value, target, met, why=None):
        """One aim's entry; not judged (``met`` None, with ``why``) on a partial run, or
        where ``why`` says the row cannot judge it."""
        if why is None and not row["complete"]:
            why = "partial run (stopped by --timeout)"
        entry = {"aim": aim, "configuration": name, "depth": row["depth"], "value": value,
                 "target": target, "met": None if why else met}
        if why:
            entry["why"] = why
        out.append(entry)

    for name, row in rows.items():
        if name == "all-readings" or name.startswith("all-readings@"):
            shallow = None  # (a partial run is said to be one by verdict)
            if row["complete"] and row["depth"] < DEFAULT_EXPLORE_DEPTH:
                shallow = (f"below the default bound (depth {DEFAULT_EXPLORE_DEPTH}), at which "
                           "the aims are set: the fixed costs of start-up and first-time "
                           "computations dominate")
            verdict("statesPerSecond", name, row, row["statesPerSecond"],
                    aims["statesPerSecond"], row["statesPerSecond"] >= aims["statesPerSecond"],
                    shallow)
            verdict("bytesPerState", name, row, row["bytesPerState"], aims["bytesPerState"],
                    row["bytesPerState"] <= aims["bytesPerState"], shallow)
        if name == "all-readings@7":
            verdict("depth7Bytes", name, row, row["peakBytes"], aims["depth7Bytes"],
                    row["peakBytes"] <= aims["depth7Bytes"])
        if name == "all-readings-workers2" and workers == 2:
            speedup = row.get("speedup")
            why = None
            if row["complete"] and row["workers"] < 2:
                why = ("every level was expanded in one process (each below the threshold at "
                       "which the workers start)")
            elif row["complete"] and speedup is None:
                why = "needs the one-process all-readings run beside it, both complete"
            verdict("speedupOnTwoWorkers", name, row, speedup, aims["speedupOnTwoWorkers"],
                    speedup is not None and speedup >= aims["speedupOnTwoWorkers"], why)
    return out


def judge_issue4(rows: dict, depth: int) -> list:
    """Issue 4's targets judged on the ``all-readings`` run at ``depth`` (``rows`` as
    :func:`measure` makes them): ``[{"aim", "configuration", "depth", "value", "target",
    "met"}]`` for ``statesPerSecond`` and ``defaultBoundSeconds`` (``met`` None, with ``"why"``,
    on a partial run); empty when that configuration was not run."""
    row = rows.get("all-readings")
    if row is None:
        return []
    why = None if row["complete"] else "partial run (stopped by --timeout)"
    return [{"aim": aim, "configuration": "all-readings", "depth": depth, "value": value,
             "target": TARGETS[aim], "met": None if why else met, **({"why": why} if why else {})}
            for aim, value, met in (
                ("statesPerSecond", row["statesPerSecond"],
                 row["statesPerSecond"] >= TARGETS["statesPerSecond"]),
                ("defaultBoundSeconds", row["seconds"],
                 row["seconds"] <= TARGETS["defaultBoundSeconds"]))]


def _run(bound: int, kwargs: dict, progress: Optional[str] = None) -> dict:
    """One search to ``bound`` with ``kwargs`` (run in a fresh process), as figures; seconds
    unrounded. ``progress``: the configuration's name, to print progress lines under
    (:func:`_progress`; None: silent)."""
    import resource
    import time
    baseline = _resident()
    cpu = time.process_time()
    if progress is not None:
        start = _saved_level(kwargs.get("checkpoint"))
        kwargs = {**kwargs, "progress": _progress(progress, start)}
    r = explore(depth=bound, **kwargs)
    cpu = time.process_time() - cpu
    children = resource.getrusage(resource.RUSAGE_CHILDREN)  # the local cluster, once closed
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux: KiB
    peak += r.storage.get("workerPeakBytes", 0)
    saved = r.storage.get("checkpoint")
    if saved is not None:  # the largest peak of the processes the search took, and their CPU
        peak = max(peak, saved["peakBytes"])
        cpu = max(cpu, saved["cpuSeconds"])
    storage = {k: v for k, v in r.storage.items() if k != "workerTasks"}
    out = {"states": r.states, "edges": r.edges, "depth": r.depth, "complete": r.complete,
           "readingClasses": r.classes, "seconds": r.seconds,
           "statesPerSecond": round(r.states_per_second),
           "edgesPerSecond": round(r.edges / r.seconds) if r.seconds else None,
           "splits": len(r.splits), "violations": len(r.violations), "workers": r.workers,
           "peakBytes": peak, "bytesPerState": round(peak / r.states) if r.states else None,
           "baselineBytes": baseline,  # resident before the search (interpreter, modules)
           "storage": storage,
           # CPU seconds of this process and of every worker task, and the host's load (runnable
           # processes, 1-minute average) when the run ended: on a shared machine the wall time
           # is only as good as the cores the run was given
           "cpuSeconds": round(cpu + sum(sum(t["cpuSeconds"]) for t in
                                         r.storage.get("workerTasks", ())), 2),
           # this process alone, and every process of a local cluster it started (workers and
           # their nannies, over the whole run: what the tasks and everything beside them cost)
           "processCpuSeconds": round(cpu, 2),
           "clusterCpuSeconds": round(children.ru_utime + children.ru_stime, 2),
           "loadAverage": round(os.getloadavg()[0], 2)}
    if "workerTasks" in r.storage:
        out["workerTasks"] = r.storage["workerTasks"]
    if saved is not None:
        out["checkpointRuns"] = saved["runs"]
    return out


def _saved_level(directory: Optional[str]) -> int:
    """The level a checkpoint in ``directory`` was saved in (its ``checkpoint.json``'s
    ``level``: the level whose frontier was being expanded), or 0 where there is none yet or it
    cannot be read (the search itself then says why, or starts afresh)."""
    if directory is None:
        return 0
    from properties.search.checkpoint import META
    try:
        with open(os.path.join(directory, META), encoding="utf-8") as fh:
            level = json.load(fh).get("level", 0)
    except (OSError, ValueError, AttributeError):
        return 0
    return level if isinstance(level, int) and level >= 0 else 0


def _progress(name: str, start: int = 0):
    """A progress callback for :func:`properties.search.explore.explore` that prints a line to
    standard error when a depth is done (the callback's level moves on: it is the number of
    levels expanded after a level, the level being expanded within one) and at most once a
    minute within a level: the configuration, depth, states, edges, seconds and resident GB.
    ``start``: the level the search starts in (a resumed checkpoint's, :func:`_saved_level`), so
    that its first line does not call that level's depth done."""
    last = {"level": start, "seconds": 0.0}

    def report(level: int, states: int, edges: int, seconds: float) -> None:
        done = level != last["level"]
        if not done and seconds - last["seconds"] < 60:
            return
        last.update(level=level, seconds=seconds)
        what = f"depth {level} done" if done else f"exploring depth {level + 1}"
        print(f"{name}: {what}, {states:,} states, {edges:,} edges, {seconds:,.0f} s, "
              f"{_resident() / 1e9:.2f} GB resident", file=sys.stderr, flush=True)
    return report


def _resident() -> int:
    """This process's resident memory now, in bytes (0 where /proc is missing)."""
    try:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


class _Parser(argparse.ArgumentParser):
    """argparse, with a wrong argument reported in one line (exit 2), without the usage."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message}\n")


def main(argv=None) -> int:
    """Command-line entry: parse the options, measure, print the figures (``--json``: as JSON);
    returns the exit code."""
    parser = _Parser(description=__doc__.splitlines()[0])
    parser.add_argument("--depth", type=int, default=DEFAULT_EXPLORE_DEPTH,
                        help=f"depth of every configuration (default {DEFAULT_EXPLORE_DEPTH}, "
                             "the default bound of activity-check explore)")
    parser.add_argument("--extra-depth", type=int, default=0,
                        help="also run the all-readings configurations to this depth (default 0: "
                             "not; 4 takes seconds, 6 several minutes, 7 hours)")
    parser.add_argument("--repeat", type=int, default=None,
                        help="runs of each configuration; figures from the fastest (default 3; "
                             "1 with --checkpoint)")
    parser.add_argument("--workers", type=int, default=1,
                        help="also run every reading with every property on this many local "
                             "worker processes, with the speedup over one (default 1: not)")
    parser.add_argument("--only", default=None,
                        help="comma-separated names of the configurations to run (default: all; "
                             "e.g. all-readings@6 with --extra-depth 6)")
    parser.add_argument("--timeout", type=float, default=None,
                        help="stop each run once this many seconds have passed (at the "
                             "next chunk of 4,096 nodes: a few seconds later at depth 5; a "
                             "level handed to the workers of all-readings-workersN is finished "
                             "first) and report what it explored (default: none; e.g. a "
                             "partial --extra-depth 7 run)")
    parser.add_argument("--progress", action="store_true",
                        help="print each run's progress to standard error (a line per level, "
                             "and a minute apart within one: states, edges, seconds, resident "
                             "memory)")
    parser.add_argument("--checkpoint", metavar="DIR", default=None,
                        help="save each configuration's search under DIR (a directory of its "
                             "name) as it goes, and resume it from there when run again: a "
                             "deep run over several sessions (one run each, no --workers: the "
                             "second search of a configuration would report the first's again; "
                             "wall and CPU seconds add up over the runs, the peak is the "
                             "largest)")
    parser.add_argument("--json", action="store_true",
                        help="print the figures as one JSON document (configurations, targets, "
                             "aims, issue4Aims) instead of lines of text")
    args = parser.parse_args(argv)
    if args.repeat is None:
        args.repeat = 1 if args.checkpoint is not None else 3
    if args.repeat < 1:
        parser.error(f"--repeat must be at least 1, not {args.repeat}")
    if args.depth < 1 or args.extra_depth < 0:
        parser.error("--depth must be at least 1 and --extra-depth at least 0")
    if args.workers < 1:
        parser.error(f"--workers must be at least 1, not {args.workers}")
    from properties.search.dask_engine import too_many_workers
    if too_many_workers(args.workers):
        parser.error(too_many_workers(args.workers))
    if args.only is not None and not all(args.only.split(",")):
        parser.error(f"--only {args.only!r}: an empty configuration name")
    only = set(args.only.split(",")) if args.only is not None else None
    try:
        figures = measure(args.depth, args.extra_depth, args.repeat, args.workers, only,
                          args.timeout, args.progress, args.checkpoint)
    except ValueError as exc:
        parser.error(str(exc))
    except CheckpointError as exc:
        parser.error(f"--checkpoint: {exc}")
    if args.json:
        print(json.dumps(figures, indent=2))
        return 0
    rows = figures["configurations"]
    for name, row in rows.items():
        print(f"{name:19} depth {row['depth']} ({'exhausted' if row['complete'] else 'partial'}): "
              f"{row['states']:,} states, {row['edges']:,} edges in {row['seconds']} s "
              f"(median of {figures['repeat']}: {row['secondsMedian']} s) -> "
              f"{row['statesPerSecond']:,} states/s (median {row['statesPerSecondMedian']:,}), "
              f"{row['edgesPerSecond']:,} edges/s, {row['bytesPerState']:,} bytes/state (median "
              f"{row['bytesPerStateMedian']:,}), "
              f"{row['cpuSeconds']} CPU s at load {row['loadAverage']} "
              f"on {row['workers']} worker{'s' if row['workers'] != 1 else ''}"
              + (f" over {row['checkpointRuns']} run{'s' if row['checkpointRuns'] != 1 else ''}"
                 " of its checkpoint" if "checkpointRuns" in row else "")
              + ("" if "speedup" not in row else
                 ", no speedup: a run stopped by --timeout covers less than the other"
                 if row["speedup"] is None else
                 f", speedup {row['speedup']}x" if row["workers"] > 1 else
                 ", no speedup: every level in one process")
              + f"; {row['splits']} knobs split, {row['violations']} properties violated")
    names = {"statesPerSecond": "states/s on one core", "bytesPerState": "bytes/state",
             "speedupOnTwoWorkers": "x on two workers", "depth7Bytes": "bytes at depth 7"}
    for aim in figures["aims"]:
        shown = f"{aim['target']:,}{' ' if aim['aim'] != 'speedupOnTwoWorkers' else ''}" \
            f"{names[aim['aim']]}"
        state = {True: "met", False: "MISSED", None: "not judged"}[aim["met"]]
        value = "-" if aim["value"] is None else f"{aim['value']:,}"
        print(f"issue 21 aim {shown}, {aim['configuration']} at depth {aim['depth']}: "
              f"{state} ({value})" + (f": {aim['why']}" if "why" in aim else ""))
    where = f"depth {figures['depth']}" + (
        " (the default bound)" if figures["depth"] == DEFAULT_EXPLORE_DEPTH
        else f"; the default bound is depth {DEFAULT_EXPLORE_DEPTH}")
    for aim in figures["issue4Aims"]:
        what = f"target {aim['target']:,} states/s, every reading and every property" \
            if aim["aim"] == "statesPerSecond" else f"exhausted within {aim['target']} s"
        state = {True: "met", False: "MISSED", None: "not judged"}[aim["met"]]
        unit = "/s" if aim["aim"] == "statesPerSecond" else " s"
        print(f"issue 4 {what}, {where}: {state} ({aim['value']:,}{unit})"
              + (f": {aim['why']}" if "why" in aim else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
