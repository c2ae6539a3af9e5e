"""Spec coverage of the traces each engine generates (issue 20): which clauses, branches, knob
options, codes, producer violations and surface features they exercise, and which never.

Engines measured:

* ``peer``: the traces ``peer search`` feeds a peer by default
  (:func:`counterexamples.peers.generate.generated_traces`: corpus, probes, stateful Hypothesis traces,
  breadth-first traces), with the count and the time to generate them;
* ``run``: the seeded conformant traces of the ambiguity search
  (:func:`properties.strategies.conformant_traces`, as ``run`` draws them).

Usage: python benchmarks/coverage.py [--engine peer|run] [--seed S] [--examples N]
       [--bfs-depth D] [--json]
"""
from __future__ import annotations

import argparse
import json
import sys
import time

from properties.coverage import coverage_of, render_text, report


def peer_traces(seed: int = 0, examples: int = 400, bfs_depth: int = 4) -> tuple[list, dict]:
    """The default ``peer search`` traces (parsed events) and their counts and generation
    time."""
    from counterexamples.peers.generate import generated_traces
    start = time.perf_counter()
    traces, counts = generated_traces(seed, examples, bfs_depth)
    counts = {**counts, "total": len(traces), "seconds": round(time.perf_counter() - start, 2)}
    return [t.events for t in traces if t.state is None], counts


def run_traces(seed: int = 0, examples: int = 3000, max_events: int = 10) -> tuple[list, dict]:
    """Seeded conformant traces as the ambiguity search draws them."""
    from hypothesis import HealthCheck, Phase, given, seed as hseed, settings
    from properties.strategies import conformant_traces, fixed_constants
    drawn: list = []

    @hseed(seed)
    @settings(max_examples=examples, database=None, deadline=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(conformant_traces(max_events=max_events))
    def draw(trace):
        drawn.append(trace)

    start = time.perf_counter()
    with fixed_constants():
        draw()
    return drawn, {"total": len(drawn), "seconds": round(time.perf_counter() - start, 2)}


def main(argv=None) -> int:
    """Command-line entry: generate, measure, print (``--json``: as JSON); returns 0."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engine", choices=("peer", "run"), default="peer")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--examples", type=int, default=None,
                        help="stateful traces (default: the engine's own, 400 or 3000)")
    parser.add_argument("--bfs-depth", type=int, default=4)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if args.engine == "peer":
        traces, counts = peer_traces(args.seed, args.examples or 400, args.bfs_depth)
    else:
        traces, counts = run_traces(args.seed, args.examples or 3000)
    start = time.perf_counter()
    doc = report(coverage_of(traces))
    doc["generation"] = counts
    doc["coverageSeconds"] = round(time.perf_counter() - start, 2)
    if args.json:
        json.dump(doc, sys.stdout, indent=2)
        print()
    else:
        print(f"{args.engine}: {counts}")
        print(render_text(doc))
    return 0


if __name__ == "__main__":
    sys.exit(main())
