"""The report of ``activity-check resolve`` at the default depth: wall and CPU seconds, per part.

Times :func:`properties.resolve.resolve` on a proposal (default the committee's example,
``--pin Q2=parent,Q8=keep``; ``--recommended``: the recommended proposal) at the default depth
(breadth-first 4, Z3 5), without ``--live``, in a fresh process state (nothing memoised from an
earlier report). Target (issue 41): at most 30 s on the project machine. Wall time counts what
other processes take from the cores; CPU time is this process's own.

Usage: python benchmarks/resolve.py [--pin K=O,...] [--recommended] [--depth N] [--no-z3] [--json]
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from properties.resolve import (DEFAULT_DEPTH, proposal_from_pins,  # noqa: E402
                                recommended_proposal, resolve)

TARGET_SECONDS = 30.0
"""The issue's aim for a report at the default depth without --live."""


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pin", default="Q2=parent,Q8=keep")
    ap.add_argument("--recommended", action="store_true")
    ap.add_argument("--depth", type=int, default=DEFAULT_DEPTH)
    ap.add_argument("--no-z3", action="store_true")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    proposal = recommended_proposal() if args.recommended else proposal_from_pins(args.pin)
    wall, cpu = time.perf_counter(), time.process_time()
    report = resolve(proposal, depth=args.depth, z3=not args.no_z3)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    doc = {"proposal": proposal.name, "depth": args.depth, "z3Depth": report["z3Depth"],
           "wallSeconds": round(wall, 2), "cpuSeconds": round(cpu, 2),
           "targetSeconds": TARGET_SECONDS, "withinTarget": wall <= TARGET_SECONDS,
           "counts": report["counts"], "python": platform.python_version(),
           "cores": os.cpu_count(), "loadAverage": list(os.getloadavg())}
    if args.json:
        print(json.dumps(doc, indent=2))
    else:
        print(f"resolve {proposal.name} at depth {args.depth} (Z3 {report['z3Depth']}): "
              f"{wall:.1f} s wall, {cpu:.1f} s CPU (target {TARGET_SECONDS:.0f} s: "
              f"{'met' if doc['withinTarget'] else 'missed'}; load average "
              f"{doc['loadAverage'][0]:.1f} on {doc['cores']} cores)")
        print("counts: " + ", ".join(f"{k} {v}" for k, v in report["counts"].items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
