"""Exhaustive exploration: distinct states, edges, depth reached and states per second for the
default exploration vocabulary, with and without the per-edge checks.

Five configurations, each a breadth-first search from the empty consumer to the same depth:

* ``all-readings``: every reading in one sweep (one consumer state per class of readings not yet
  diverged) with every property of the catalogue on every transition: the default bound of
  ``activity-check explore``;
* ``all-readings-bare``: the same sweep without properties (the forks and splits only);
* ``draft``: one reading (draft), every property and the split check on every edge;
* ``draft-readings``: one reading, the split check only;
* ``draft-bare``: one reading, neither (the search itself: moves, step, dedup).

Targets (issue 4): at least 20,000 distinct states per second on one core, and the default bound
exhausted within 60 s.

Usage: python benchmarks/explore.py [--depth N] [--json]
"""
from __future__ import annotations

import argparse
import json
import sys

from properties.explore import explore

CONFIGURATIONS = (
    ("all-readings", {"reading": None}),
    ("all-readings-bare", {"reading": None, "properties": ()}),
    ("draft", {}),
    ("draft-readings", {"properties": ()}),
    ("draft-bare", {"properties": (), "check_readings": False}),
)


def measure(depth: int = 4) -> dict:
    """Run every configuration to ``depth``; returns their figures (seconds are wall time)."""
    rows = {}
    for name, kwargs in CONFIGURATIONS:
        r = explore(depth=depth, **kwargs)
        rows[name] = {"states": r.states, "edges": r.edges, "depth": r.depth,
                      "complete": r.complete, "readingClasses": r.classes,
                      "seconds": round(r.seconds, 2),
                      "statesPerSecond": round(r.states_per_second),
                      "edgesPerSecond": round(r.edges / r.seconds) if r.seconds else None,
                      "splits": len(r.splits), "violations": len(r.violations)}
    return {"benchmark": "explore", "depth": depth, "configurations": rows,
            "targets": {"statesPerSecond": 20000, "defaultBoundSeconds": 60}}


def main(argv=None) -> int:
    """Command-line entry: parse the options, measure, print the figures (``--json``: as JSON);
    returns the exit code."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--depth", type=int, default=4,
                        help="depth of every configuration (default 4, the default bound)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    figures = measure(args.depth)
    if args.json:
        print(json.dumps(figures, indent=2))
        return 0
    for name, row in figures["configurations"].items():
        print(f"{name:17} depth {row['depth']} ({'exhausted' if row['complete'] else 'partial'}): "
              f"{row['states']:,} states, {row['edges']:,} edges in {row['seconds']} s -> "
              f"{row['statesPerSecond']:,} states/s, {row['edgesPerSecond']:,} edges/s; "
              f"{row['splits']} knobs split, {row['violations']} properties violated")
    target = figures["targets"]["statesPerSecond"]
    best = max(row["statesPerSecond"] for row in figures["configurations"].values())
    default = figures["configurations"]["all-readings"]
    print(f"target {target:,} states/s: {'met' if best >= target else 'MISSED'} (best "
          f"configuration {best:,}/s); default bound within "
          f"{figures['targets']['defaultBoundSeconds']} s: "
          f"{'met' if default['complete'] and default['seconds'] <= 60 else 'MISSED'} "
          f"({default['seconds']} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
