"""Exhaustive exploration: distinct states, edges, depth reached and states per second for the
default exploration vocabulary, with and without the per-edge checks.

Three configurations, each a breadth-first search from the empty consumer:

* ``full``: every property of the catalogue and the all-readings split check on every edge (what
  ``activity-check explore`` does);
* ``readings``: the split check only;
* ``bare``: neither (the search itself: moves, step, dedup).

Targets (issue 4): at least 20,000 distinct states per second on one core, and the default bound
(depth 5) exhausted within 60 s.

Usage: python benchmarks/explore.py [--depth N] [--json]
"""
from __future__ import annotations

import argparse
import json
import sys

from properties.explore import explore


def measure(depth: int = 5) -> dict:
    """Run the three configurations to ``depth``; returns their figures."""
    rows = {}
    for name, kwargs in (("full", {}), ("readings", {"properties": ()}),
                         ("bare", {"properties": (), "check_readings": False})):
        r = explore(depth=depth, **kwargs)
        rows[name] = {"states": r.states, "edges": r.edges, "depth": r.depth,
                      "complete": r.complete, "seconds": round(r.seconds, 2),
                      "statesPerSecond": round(r.states_per_second),
                      "edgesPerSecond": round(r.edges / r.seconds) if r.seconds else None,
                      "splits": len(r.splits), "violations": len(r.violations)}
    return {"benchmark": "explore", "depth": depth, "configurations": rows,
            "targets": {"statesPerSecond": 20000, "defaultBoundSeconds": 60}}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--depth", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    figures = measure(args.depth)
    if args.json:
        print(json.dumps(figures, indent=2))
        return 0
    for name, row in figures["configurations"].items():
        print(f"{name:9} depth {row['depth']} ({'exhausted' if row['complete'] else 'partial'}): "
              f"{row['states']:,} states, {row['edges']:,} edges in {row['seconds']} s -> "
              f"{row['statesPerSecond']:,} states/s, {row['edgesPerSecond']:,} edges/s; "
              f"{row['splits']} knobs split, {row['violations']} properties violated")
    print(f"targets: {figures['targets']['statesPerSecond']:,} states/s; default bound within "
          f"{figures['targets']['defaultBoundSeconds']} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
