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
"""
from __future__ import annotations

import argparse
import gc
import json

import numpy as np

TABLES = ("trees", "local_trees", "checked", "class_checked", "after_checked", "step_checked",
          "target_checked", "inputs", "forks")


def measure(depth: int = 5, parts: int = 2, from_nodes: int = 1000) -> dict:
    """The figures described in the module docstring, as a dict (``levels``: per level kept,
    ``{"level", "nodes", "cpuSeconds", "systemSeconds", "minorFaults", "parts": [{"nodes",
    "cpuSeconds", "systemSeconds", "minorFaults"}]}``; ``tables``:
    ``{"oneProcess": {...}, "parts": [{...}]}``, each table's entries, with ``classes`` and
    ``states`` interned)."""
    import properties.search.bfs as bfs
    import properties.search.dask_engine as dask_engine
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
    was = gc.isenabled()
    gc.disable()
    try:
        bfs.search(adapter.system, depth, engine=Keeping(adapter))
        spec = adapter.spec(parts)
        levels = [{"level": level, "nodes": len(kept[level][0]), **cpu[level], "parts": []}
                  for level in sorted(kept)]
        part_tables = []
        for j in range(parts):
            token = f"explore-split-{j}"
            for row in levels:
                ids, nodes, known, last = kept[row["level"]]
                mine = (adapter.routing(nodes) % np.uint64(parts)).astype(np.int64) == j
                piece = [(ids[mine], adapter.export(nodes[mine]))]
                started = _usage()
                dask_engine._expand_part(token, spec, piece, row["level"], known, parts, last,
                                         False)
                row["parts"].append({"nodes": int(mine.sum()), **_since(started)})
            part_tables.append(_tables(dask_engine._SYSTEMS[token].system.cache))
            dask_engine._forget(token)
        return {"benchmark": "explore-split", "depth": depth, "parts": parts, "levels": levels,
                "tables": {"oneProcess": _tables(adapter.system.cache), "parts": part_tables}}
    finally:
        if was:
            gc.enable()


def _usage() -> tuple:
    import resource
    u = resource.getrusage(resource.RUSAGE_SELF)
    return u.ru_utime + u.ru_stime, u.ru_stime, u.ru_minflt


def _since(started: tuple) -> dict:
    """CPU seconds (user and system), system seconds and minor page faults since ``started``."""
    now = _usage()
    return {"cpuSeconds": round(now[0] - started[0], 2),
            "systemSeconds": round(now[1] - started[1], 2), "minorFaults": now[2] - started[2]}


def _tables(cache) -> dict:
    out = {name: len(getattr(cache, name)) for name in TABLES}
    out.update(classes=len(cache.classes.values), states=len(cache.states.values))
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--depth", type=int, default=5)
    parser.add_argument("--parts", type=int, default=2)
    parser.add_argument("--from-nodes", type=int, default=1000)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if args.depth < 1 or args.parts < 1 or args.from_nodes < 1:
        parser.error("--depth, --parts and --from-nodes must be at least 1")
    figures = measure(args.depth, args.parts, args.from_nodes)
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
        print(f"{name}: one process {one[name]:,}, partitions "
              + " + ".join(f"{t[name]:,}" for t in split))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
