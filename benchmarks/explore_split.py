"""What splitting the every-reading sweep over two workers costs in CPU, measured in one process.

A one-process search to ``--depth`` (default 5) keeps each level's frontier once it has
``--from-nodes`` nodes or more (default 1,000, the workers' threshold); then each frontier
partition (by the engine's routing key, consumer state modulo ``--parts``) is expanded again with
:func:`properties.search.dask_engine._expand_part`, partition by partition, each in a fresh
system warmed by its own earlier levels, as on a worker of its own. Printed (``--json``: one
object): per level the one process's CPU seconds and each partition's (nodes, CPU seconds), and
the sizes of the memo tables in the one process and in each partition, so that what both
partitions compute again shows as the excess of the partitions' sum. CPU seconds of this process
(user and system, from ``getrusage``, with the system share and the minor page faults), the cyclic collector paused as ``explore`` pauses it. Issue 43.1's
profile in README.md ("what the split really costs") was measured with it.

``--fresh``: the one-process search and then each partition run in a process of their own
(spawned, ``--jobs`` at a time, default 1), as on a cluster of ``--parts`` workers (in the
environment a Dask nanny gives its workers, ``workerEnvironment``, and with the allocator set as
the workers' start sets it, :func:`properties.search.dask_engine.steady_allocator`), so that each
also reports its resident memory: after its imports (the project, numpy and ``distributed``, as a
worker has them), its peak while expanding (the kernel's high-water mark, reset once the imports
are done), and at its end before and after ``malloc_trim``. The summary then gives the
predicted critical path on ``--parts`` free cores (the one process's levels below
``--from-nodes``, which the driver keeps, plus each kept level's largest partition; the cluster's
start and exchange are not in it), the speedup that bounds, the partitions' CPU over one
process's, and their peak memory added up over the one process's. Issue 43.1's profile at 16
partitions (README.md, "sixteen partitions on two cores") was measured with it.

``--spread K`` (with ``--fresh``): each process is a worker that expands, at a level of
``--spread-from`` nodes a worker or more (default the engine's
:data:`~properties.search.dask_engine.SPREAD_FROM`), K expansion partitions of its own one after
another, as the engine's tasks (:data:`~properties.search.dask_engine.PARTITIONS_PER_WORKER`),
the one with most nodes first (the engine's task priorities), each timed. The summary then
gives two critical paths: each worker running only its own partitions
(``criticalPathCpuSeconds``: what the engine costs without work stealing, the same split as
``--parts`` partitions alone), and a worker that has run its own taking the last queued
partition of the worker with the most left (``criticalPathStealingCpuSeconds``: work stealing
with each partition at its measured cost, no transfer and no cold tables counted).
"""
from __future__ import annotations

import argparse
import contextlib
import gc
import json
import multiprocessing
import os
import resource

import numpy as np

TABLES = ("trees", "local_trees", "checked", "class_checked", "after_checked", "step_checked",
          "target_checked", "inputs", "forks")


def measure(depth: int = 5, parts: int = 2, from_nodes: int = 1000) -> dict:
    """The figures described in the module docstring, as a dict (``levels``: per level kept,
    ``{"level", "nodes", "cpuSeconds", "systemSeconds", "minorFaults", "parts": [{"nodes",
    "cpuSeconds", "systemSeconds", "minorFaults"}]}``; ``tables``:
    ``{"oneProcess": {...}, "parts": [{...}]}``, each table's entries, with ``classes`` and
    ``states`` interned)."""
    import properties.search.dask_engine as dask_engine
    was = gc.isenabled()
    gc.disable()
    try:
        adapter, kept, cpu, _ = _search_keeping(depth, from_nodes)
        spec = adapter.spec(parts)
        levels = [{"level": level, "nodes": len(kept[level][0]), **cpu[level], "parts": []}
                  for level in sorted(kept)]
        routes = {level: adapter.routing(kept[level][1]) for level in kept}
        part_tables = []
        for j in range(parts):
            token = f"explore-split-{j}"
            for row in levels:
                _, _, known, last = kept[row["level"]]
                piece = _piece(adapter, kept[row["level"]], routes[row["level"]], parts, j)
                started = _usage()
                dask_engine._expand_part(token, spec, [piece], row["level"], known, parts, last,
                                         False)
                row["parts"].append({"nodes": len(piece[0]), **_since(started)})
            part_tables.append(_tables(dask_engine._SYSTEMS[token].system.cache))
            dask_engine._forget(token)
        return {"benchmark": "explore-split", "depth": depth, "parts": parts, "levels": levels,
                "tables": {"oneProcess": _tables(adapter.system.cache), "parts": part_tables}}
    finally:
        if was:
            gc.enable()


def _search_keeping(depth: int, from_nodes: int) -> tuple:
    """The one-process every-reading search to ``depth``, keeping each level's frontier from
    ``from_nodes`` nodes on: ``(adapter, kept, cpu, total)``, ``kept[level] = (ids, nodes,
    known, last)`` (the frontier's ids and node rows, the finding costs known before the level,
    whether it is the last), ``cpu[level]`` and ``total`` as :func:`_since` gives them."""
    import properties.search.bfs as bfs
    import properties.search.explore as explore_module
    from properties.catalogue import PROPERTIES
    from properties.search.system_sweep import SweepAdapter
    kept, cpu = {}, {}

    class Keeping(bfs.LocalEngine):
        def level(self, merge, level, last):
            if self.frontier_size() >= from_nodes:
                blocks = [(np.array(i), np.array(n)) for i, n in self.frontier]
                kept[level] = (np.concatenate([b[0] for b in blocks]),
                               np.concatenate([b[1] for b in blocks]), dict(merge.known), last)
            started = _usage()
            super().level(merge, level, last)
            cpu[level] = _since(started)

    adapter = SweepAdapter(explore_module.EXPLORE_VOCABULARY, tuple(PROPERTIES), False)
    started = _usage()
    bfs.search(adapter.system, depth, engine=Keeping(adapter))
    return adapter, kept, cpu, _since(started)


def _piece(adapter, kept_level: tuple, routes: np.ndarray, parts: int, j: int) -> tuple:
    """Partition ``j``'s share of a kept frontier, as the driver ships it: ``(ids, exported
    values)`` of the nodes whose routing key (``routes``, the adapter's of the level's nodes,
    uint64) modulo ``parts`` is ``j``."""
    ids, nodes = kept_level[0], kept_level[1]
    mine = (routes % np.uint64(parts)).astype(np.int64) == j
    return ids[mine], adapter.export(nodes[mine])


def _largest_first(partitions: list) -> list:
    """``(partition, (ids, values))`` pairs in the order a worker runs them: most nodes first,
    then by partition (the engine's task priorities, ``DaskEngine._level``)."""
    return sorted(partitions, key=lambda p: (-len(p[1][0]), p[0]))


def _memory() -> dict:
    """This process's resident and peak resident memory in bytes (``/proc/self/status``)."""
    out = {}
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(("VmRSS:", "VmHWM:")):
                out[line[:5]] = int(line.split()[1]) * 1024
    return {"rss": out.get("VmRSS", 0), "peak": out.get("VmHWM", 0)}


def _reset_peak() -> bool:
    """Reset the kernel's high-water mark of this process (``clear_refs`` 5); False where refused."""
    try:
        with open("/proc/self/clear_refs", "w") as refs:
            refs.write("5")
        return True
    except OSError:
        return False


def _trimmed() -> int:
    """Resident bytes after glibc's ``malloc_trim(0)`` gave free heap pages back (0 where no glibc)."""
    try:
        import ctypes
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        return 0
    return _memory()["rss"]


def _one_process(depth: int, parts: int, from_nodes: int, spread: int = 1,
                 spread_from: int = 1) -> dict:
    """In a fresh process: the one-process search, its CPU per level and in all, its peak
    memory and tables, and each partition's share of every kept frontier (exported values, as the
    driver ships them) with the ``known`` costs and ``last`` flag of that level: per worker ``j``,
    per level, ``(level, [(partition, piece), ...], known, last)``, its ``spread`` expansion
    partitions ``e`` (``e % parts == j``) at a level of ``spread_from`` nodes a worker or more,
    else the one."""
    # the search's imports, before their memory is read
    import properties.catalogue  # noqa: F401
    import properties.search.explore  # noqa: F401
    import properties.search.system_sweep  # noqa: F401
    imported = _memory()["rss"]
    gc.disable()
    adapter, kept, cpu, total = _search_keeping(depth, from_nodes)
    levels = [{"level": level, "nodes": len(kept[level][0]), **cpu[level], "parts": []}
              for level in sorted(kept)]
    cuts = {level: spread if len(kept[level][0]) >= spread_from * parts else 1
            for level in kept}
    routes = {level: adapter.routing(kept[level][1]) for level in kept}
    pieces = [[(level, _largest_first([(e, _piece(adapter, kept[level], routes[level],
                                                  cuts[level] * parts, e))
                                       for e in range(j, cuts[level] * parts, parts)]),
                kept[level][2], kept[level][3])
               for level in sorted(kept)] for j in range(parts)]
    return {"cpuSeconds": total["cpuSeconds"], "levels": levels,
            "tables": _tables(adapter.system.cache),
            "memory": {"imports": imported, "peak": _memory()["peak"]},
            "spec": adapter.spec(parts), "pieces": pieces}


def _one_part(j: int, spec: tuple, parts: int, pieces: list) -> dict:
    """In a fresh process: partition ``j``'s pieces expanded level by level as a worker of its
    own does (:func:`properties.search.dask_engine._expand_part`), with its CPU per level, its
    memory (after imports, peak, at the end, after ``malloc_trim``) and its tables."""
    import distributed  # noqa: F401  (a worker's imports, for its memory after them)
    import properties.search.dask_engine as dask_engine
    dask_engine.steady_allocator()  # as the workers' start (dask_engine.dask_setup) sets it
    token = f"explore-split-{j}"
    imported = _memory()["rss"]
    reset = _reset_peak()
    gc.disable()
    levels = []
    for level, partitions, known, last in pieces:
        started, each = _usage(), []
        for e, (ids, values) in partitions:
            began = _usage()
            dask_engine._expand_part(token, spec, [(ids, values)], level, known, parts, last,
                                     False)
            each.append({"partition": e, "nodes": len(ids), **_since(began)})
        levels.append({"nodes": sum(p["nodes"] for p in each), **_since(started),
                       "partitions": each})
    end = _memory()
    tables = _tables(dask_engine._SYSTEMS[token].system.cache)
    return {"levels": levels, "tables": tables,
            "memory": {"imports": imported, "peak": end["peak"] if reset else None,
                       "end": end["rss"], "trimmed": _trimmed()}}


def measure_fresh(depth: int = 5, parts: int = 16, from_nodes: int = 1000, jobs: int = 1,
                  spread: int = 1, spread_from: int = 1) -> dict:
    """:func:`measure` with the one process and each partition in a fresh process (``--fresh``
    in the module docstring), plus ``memory`` and ``summary``; ``spread``, ``spread_from``: the
    expansion partitions a worker (``--spread``). Memory in bytes, CPU in seconds."""
    context = multiprocessing.get_context("spawn")
    with context.Pool(1, maxtasksperchild=1) as pool:
        one = pool.apply(_one_process, (depth, parts, from_nodes, spread, spread_from))
    pieces, spec = one.pop("pieces"), one.pop("spec")
    with _worker_environment() as environment, \
            context.Pool(jobs, maxtasksperchild=1) as pool:
        results = pool.starmap(_one_part, [(j, spec, parts, pieces[j]) for j in range(parts)],
                               chunksize=1)
    del pieces
    levels = one["levels"]
    for result in results:
        for row, part in zip(levels, result["levels"]):
            row["parts"].append(part)
    kept_cpu = sum(row["cpuSeconds"] for row in levels)
    serial = one["cpuSeconds"] - kept_cpu
    path = serial + sum(max(p["cpuSeconds"] for p in row["parts"]) for row in levels)
    split = sum(p["cpuSeconds"] for row in levels for p in row["parts"])
    peaks = [r["memory"]["peak"] for r in results]
    summary = {"oneProcessCpuSeconds": one["cpuSeconds"], "driverCpuSeconds": round(serial, 2),
               "partitionsCpuSeconds": round(split, 2),
               "cpuOverOneProcess": round((serial + split) / one["cpuSeconds"], 3),
               "criticalPathCpuSeconds": round(path, 2),
               "speedupBound": round(one["cpuSeconds"] / path, 2),
               "oneProcessPeakBytes": one["memory"]["peak"]}
    if spread > 1:
        stolen = serial + sum(_stealing_makespan([[q["cpuSeconds"] for q in p["partitions"]]
                                                  for p in row["parts"]]) for row in levels)
        summary.update(spread=spread, spreadFrom=spread_from,
                       criticalPathStealingCpuSeconds=round(stolen, 2),
                       speedupBoundStealing=round(one["cpuSeconds"] / stolen, 2))
    if all(p is not None for p in peaks):
        summary.update(partitionsPeakBytes=sum(peaks), largestPartitionPeakBytes=max(peaks),
                       partitionsOverOneProcess=round(sum(peaks) / one["memory"]["peak"], 2),
                       importsBytes=[min(r["memory"]["imports"] for r in results),
                                     max(r["memory"]["imports"] for r in results)])
    return {"benchmark": "explore-split", "depth": depth, "parts": parts, "fresh": True,
            "workerEnvironment": environment, "levels": levels,
            "tables": {"oneProcess": one["tables"], "parts": [r["tables"] for r in results]},
            "memory": {"oneProcess": one["memory"], "parts": [r["memory"] for r in results]},
            "summary": summary}


def _stealing_makespan(queues: list) -> float:
    """When the last of ``queues`` (per worker, its partitions' CPU seconds in the order it runs
    them) is done if a worker whose queue is empty takes the last partition not started from
    the queue with the most CPU seconds left (ties: the lowest worker), each at its cost."""
    left = [list(q) for q in queues]
    clock = [0.0] * len(left)
    idle: set = set()
    while len(idle) < len(left):
        w = min((c, i) for i, c in enumerate(clock) if i not in idle)[1]
        if left[w]:
            clock[w] += left[w].pop(0)
            continue
        victim = max(range(len(left)), key=lambda i: (sum(left[i]), -i))
        if not left[victim]:
            idle.add(w)
            continue
        clock[w] += left[victim].pop()
    return max(clock) if clock else 0.0


@contextlib.contextmanager
def _worker_environment():
    """The environment a Dask nanny starts its workers in (Dask's
    ``distributed.nanny.pre-spawn-environ``: the allocator's trim threshold, one thread for
    the numeric libraries), set in this process while the partitions' processes are spawned,
    so that they inherit it as a worker does; yields it as ``{name: value}``."""
    import dask
    import distributed  # noqa: F401  (its defaults are Dask's configuration)
    environment = {str(k): str(v) for k, v in
                   (dask.config.get("distributed.nanny.pre-spawn-environ") or {}).items()}
    saved = {k: os.environ.get(k) for k in environment}
    os.environ.update(environment)
    try:
        yield environment
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _usage() -> tuple:
    u = resource.getrusage(resource.RUSAGE_SELF)
    return u.ru_utime + u.ru_stime, u.ru_stime, u.ru_minflt


def _since(started: tuple) -> dict:
    """CPU seconds (user and system), system seconds and minor page faults since ``started``."""
    now = _usage()
    return {"cpuSeconds": round(now[0] - started[0], 2),
            "systemSeconds": round(now[1] - started[1], 2), "minorFaults": now[2] - started[2]}


def _tables(cache) -> dict:
    """Each memo table's entries (:data:`TABLES`), the interned ``classes`` and ``states``, and
    how many times the tables were evicted from and emptied (``memoEvictions``,
    ``memoTrims``: what a budget too small for the partition's working set costs)."""
    out = {name: len(getattr(cache, name)) for name in TABLES}
    out.update(classes=len(cache.classes.values), states=len(cache.states.values),
               memoEvictions=cache.evictions, memoTrims=cache.trims)
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--depth", type=int, default=5)
    parser.add_argument("--parts", type=int, default=2)
    parser.add_argument("--from-nodes", type=int, default=1000)
    parser.add_argument("--fresh", action="store_true",
                        help="the one process and each partition in a process of their own, "
                             "with their memory")
    parser.add_argument("--jobs", type=int, default=1,
                        help="with --fresh: partitions run at once (default 1)")
    parser.add_argument("--spread", type=int, default=1,
                        help="with --fresh: expansion partitions a worker at a large level "
                             "(default 1)")
    parser.add_argument("--spread-from", type=int, default=None,
                        help="with --spread: frontier nodes a worker from which a level is "
                             "spread (default: the engine's)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if args.depth < 1 or args.parts < 1 or args.from_nodes < 1 or args.jobs < 1 or \
            args.spread < 1 or (args.spread_from is not None and args.spread_from < 1):
        parser.error("--depth, --parts, --from-nodes, --jobs, --spread and --spread-from must "
                     "be at least 1")
    if args.spread > 1 and not args.fresh:
        parser.error("--spread needs --fresh")
    if args.spread_from is not None and args.spread == 1:
        parser.error("--spread-from needs --spread above 1")
    if args.spread_from is None:
        from properties.search.dask_engine import SPREAD_FROM
        args.spread_from = SPREAD_FROM
    figures = (measure_fresh(args.depth, args.parts, args.from_nodes, args.jobs, args.spread,
                             args.spread_from) if args.fresh
               else measure(args.depth, args.parts, args.from_nodes))
    if args.json:
        print(json.dumps(figures, indent=2))
        return 0
    for row in figures["levels"]:
        split = sum(p["cpuSeconds"] for p in row["parts"])
        print(f"level {row['level']} ({row['nodes']:,} nodes): one process "
              f"{row['cpuSeconds']:.2f} CPU s ({row['systemSeconds']:.2f} system, "
              f"{row['minorFaults']:,} page faults); partitions "
              + ", ".join(f"{p['cpuSeconds']:.2f} ({p['nodes']:,} nodes, {p['systemSeconds']:.2f}"
                          f" system, {p['minorFaults']:,} faults)" for p in row["parts"])
              + f"; together {split:.2f}")
    one, split = figures["tables"]["oneProcess"], figures["tables"]["parts"]
    for name in one:
        together = sum(t[name] for t in split)
        print(f"{name}: one process {one[name]:,}, partitions "
              + " + ".join(f"{t[name]:,}" for t in split)
              + (f" = {together:,} ({together / one[name]:.2f}x)" if one[name] else ""))
    if "memory" in figures:
        mb = 1 << 20
        for j, m in enumerate(figures["memory"]["parts"]):
            peak = "n/a" if m["peak"] is None else f"{m['peak'] / mb:.0f}"
            print(f"partition {j} memory MB: imports {m['imports'] / mb:.0f}, peak {peak}, "
                  f"end {m['end'] / mb:.0f}, after malloc_trim {m['trimmed'] / mb:.0f}")
        o = figures["memory"]["oneProcess"]
        print(f"one process memory MB: imports {o['imports'] / mb:.0f}, peak {o['peak'] / mb:.0f}")
        print("summary: " + json.dumps(figures["summary"]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
