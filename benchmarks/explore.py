"""Exhaustive exploration: distinct states, edges, depth reached and states per second for the
default exploration vocabulary, with and without the per-edge checks.

Five configurations at the default bound (depth 4), each a breadth-first search from the empty
consumer:

* ``all-readings``: every reading in one sweep (one consumer state per class of readings not yet
  diverged) with every property of the catalogue on every transition: the default bound of
  ``activity-check explore``;
* ``all-readings-bare``: the same sweep without properties (the forks and splits only);
* ``draft``: one reading (draft), every property and the split check on every edge;
* ``draft-readings``: one reading, the split check only;
* ``draft-bare``: one reading, neither (the search itself: moves, step, dedup).

and the two all-readings configurations again one level deeper (``--throughput-depth``, default
5: 492,495 states), where the sustained rate shows: at depth 4 the run lasts a few seconds
and nearly every step tree and property check in it is computed for the first time. The rate
keeps rising with depth (outcomes are shared across more beliefs and classes per consumer
transition); depth 6 has 9.9 million states and takes minutes and several GB.

Targets (issue 4): at least 20,000 distinct states per second on one core, judged on the
configurations with every reading and every property (the best of those run), and the default
bound exhausted within 60 s. Rates are wall-clock; run it on a quiet machine.

Usage: python benchmarks/explore.py [--depth N] [--throughput-depth N] [--json]
"""
from __future__ import annotations

import argparse
import json
import sys

from model.readings import DRAFT
from properties.explore import explore

CONFIGURATIONS = (
    ("all-readings", {"reading": None}),
    ("all-readings-bare", {"reading": None, "properties": ()}),
    ("draft", {}),
    ("draft-readings", {"properties": ()}),
    ("draft-bare", {"properties": (), "check_readings": False}),
)


def measure(depth: int = 4, throughput_depth: int = 5) -> dict:
    """Run every configuration to ``depth`` and the all-readings ones to ``throughput_depth``
    (0: skip those); returns their figures (seconds are wall time)."""
    runs = [(name, depth, kwargs) for name, kwargs in CONFIGURATIONS]
    if throughput_depth:
        runs += [(f"{name}@{throughput_depth}", throughput_depth, kwargs)
                 for name, kwargs in CONFIGURATIONS if kwargs.get("reading", DRAFT) is None]
    rows = {}
    for name, bound, kwargs in runs:
        r = explore(depth=bound, **kwargs)
        rows[name] = {"states": r.states, "edges": r.edges, "depth": r.depth,
                      "complete": r.complete, "readingClasses": r.classes,
                      "seconds": round(r.seconds, 2),
                      "statesPerSecond": round(r.states_per_second),
                      "edgesPerSecond": round(r.edges / r.seconds) if r.seconds else None,
                      "splits": len(r.splits), "violations": len(r.violations)}
    return {"benchmark": "explore", "depth": depth, "throughputDepth": throughput_depth,
            "configurations": rows,
            "targets": {"statesPerSecond": 20000, "defaultBoundSeconds": 60}}


def main(argv=None) -> int:
    """Command-line entry: parse the options, measure, print the figures (``--json``: as JSON);
    returns the exit code."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--depth", type=int, default=4,
                        help="depth of every configuration (default 4, the default bound)")
    parser.add_argument("--throughput-depth", type=int, default=5,
                        help="depth of the all-readings runs that measure the sustained rate "
                             "(default 5; 0 skips them)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    figures = measure(args.depth, args.throughput_depth)
    if args.json:
        print(json.dumps(figures, indent=2))
        return 0
    rows = figures["configurations"]
    for name, row in rows.items():
        print(f"{name:19} depth {row['depth']} ({'exhausted' if row['complete'] else 'partial'}): "
              f"{row['states']:,} states, {row['edges']:,} edges in {row['seconds']} s -> "
              f"{row['statesPerSecond']:,} states/s, {row['edgesPerSecond']:,} edges/s; "
              f"{row['splits']} knobs split, {row['violations']} properties violated")
    target = figures["targets"]["statesPerSecond"]
    default = rows["all-readings"]
    judged = [(name, row) for name, row in rows.items() if name.startswith("all-readings")
              and not name.startswith("all-readings-bare")]
    best = max(row["statesPerSecond"] for _, row in judged)
    print(f"target {target:,} states/s, every reading and every property: "
          f"{'met' if best >= target else 'MISSED'} ("
          + ", ".join(f"{name} {row['statesPerSecond']:,}/s" for name, row in judged) + ")")
    if best < target:
        print("  (the rate rises with depth, as check outcomes are shared across more beliefs "
              "and classes; --throughput-depth 6 measures the next level: minutes, and "
              "several GB)")
    print(f"default bound within {figures['targets']['defaultBoundSeconds']} s: "
          f"{'met' if default['complete'] and default['seconds'] <= 60 else 'MISSED'} "
          f"({default['seconds']} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
