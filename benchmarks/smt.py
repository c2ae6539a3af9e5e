"""Z3 bounded model checking: time per query at depths 4, 8 and 12, and where it stops scaling.

Each of the five queries of ``activity-check smt`` is run over all its subjects under ``draft``
in the default world (three ids, the parent and one subagent, two types, two content literals):
reach (10 situations), vacuity (34 rules, conformant and any trace), consistency (17 event
shapes), distinguish (18 knob pairs, producer "any") and prove (19 properties, any trace). Every
subject has a timeout (answer ``unknown`` past it), so the benchmark terminates. For each query
and depth it reports the total time, the slowest subject and the median, and the answers
(sat / unsat / unknown); every witness is replayed on the executable model as part of the time.

Scaling: after the fixed depths, the slowest subjects of each query at the deepest fixed depth
are probed at further depths (default 16, 20, 24) until one times out; the report gives, per
query, the deepest depth whose slowest subject stayed within the target (10 s, issue 5) and the
depth at which a subject first timed out.

Usage: python benchmarks/smt.py [--depths 4,8,12] [--probe 16,20,24] [--timeout 60]
                                [--target 10] [--json]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

from model.readings import DRAFT
from properties.smt import queries as q
from properties.smt.world import DEFAULT_WORLD

QUERY_NAMES = ("reach", "vacuity", "consistency", "distinguish", "prove")


def _pairs() -> dict:
    return {f"{q.reading_label(a)} vs {q.reading_label(b)}": (a, b) for a, b in q.knob_pairs()}


def run_query(query: str, depth: int, timeout: float, subjects=None) -> list:
    """All (or the given) subjects of one query at one depth; returns the answers."""
    if query == "reach":
        return [q.reachability(s, depth, DRAFT, timeout=timeout)
                for s in subjects or q.SUBJECTS["reach"]]
    if query == "vacuity":
        return q.vacuity(depth, DRAFT, rules=subjects, timeout=timeout)
    if query == "consistency":
        return q.consistency(depth, DRAFT, shapes=subjects, timeout=timeout)
    if query == "distinguish":
        pairs = _pairs()
        return [q.distinguishing(*pairs[s], depth, timeout=timeout)
                for s in subjects or list(pairs)]
    return [q.bounded_proof(p, depth, DRAFT, timeout=timeout)
            for p in subjects or q.SUBJECTS["prove"]]


def _row(answers: list, seconds: float) -> dict:
    times = [a.seconds for a in answers]
    slowest = max(answers, key=lambda a: a.seconds)
    counts = {s: sum(a.status == s for a in answers) for s in ("sat", "unsat", "unknown")}
    return {"subjects": len(answers), "seconds": round(seconds, 2),
            "maxSeconds": round(slowest.seconds, 2), "slowest": slowest.subject,
            "medianSeconds": round(statistics.median(times), 3), "answers": counts}


def measure(depths=(4, 8, 12), probe=(16, 20, 24), timeout: float = 60.0,
            target: float = 10.0, progress=None) -> dict:
    """Run every query at every depth, then probe deeper; returns the figures (see module
    docstring). ``progress(text)`` is called after each step when given."""
    rows: dict = {name: {} for name in QUERY_NAMES}
    last: dict = {}
    for name in QUERY_NAMES:
        for depth in depths:
            started = time.monotonic()
            answers = run_query(name, depth, timeout)
            rows[name][depth] = _row(answers, time.monotonic() - started)
            last[name] = answers
            if progress:
                progress(f"{name} depth {depth}: {rows[name][depth]}")
    probes: dict = {}
    for name in QUERY_NAMES:
        slowest = [a.subject for a in sorted(last[name], key=lambda a: -a.seconds)[:2]]
        probes[name] = {"subjects": slowest, "depths": {}}
        for depth in probe:
            answers = run_query(name, depth, timeout, slowest)
            probes[name]["depths"][depth] = {
                a.subject: {"status": a.status, "seconds": round(a.seconds, 2)} for a in answers}
            if progress:
                progress(f"probe {name} depth {depth}: {probes[name]['depths'][depth]}")
            if any(a.status == "unknown" for a in answers):
                break
    scaling = {}
    for name in QUERY_NAMES:
        seen = {d: r["maxSeconds"] for d, r in rows[name].items()}
        seen.update({d: max(x["seconds"] for x in r.values())
                     for d, r in probes[name]["depths"].items()})
        timed_out = [d for d, r in probes[name]["depths"].items()
                     if any(x["status"] == "unknown" for x in r.values())] + \
            [d for d, r in rows[name].items() if r["answers"]["unknown"]]
        within = [d for d, s in sorted(seen.items()) if s <= target]
        scaling[name] = {"withinTarget": max(within) if within else None,
                         "timedOutAt": min(timed_out) if timed_out else None,
                         "deepestTried": max(seen)}
    return {"benchmark": "smt", "world": DEFAULT_WORLD.to_json(), "reading": "draft",
            "timeoutPerSubject": timeout, "targetSeconds": target, "cpus": os.cpu_count(),
            "queries": rows, "probes": probes, "scaling": scaling}


def main(argv=None) -> int:
    """Command-line entry: parse the options, measure, print the figures (``--json``: as JSON);
    returns the exit code."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--depths", default="4,8,12")
    parser.add_argument("--probe", default="16,20,24")
    parser.add_argument("--timeout", type=float, default=60.0)
    parser.add_argument("--target", type=float, default=10.0)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    try:
        depths = tuple(int(x) for x in args.depths.split(",") if x)
        probe = tuple(int(x) for x in args.probe.split(",") if x)
    except ValueError:
        parser.error("--depths and --probe are comma-separated whole numbers")
    if not depths or min(depths + probe) < 1 or args.timeout <= 0:
        parser.error("depths must be at least 1 and the timeout positive")
    progress = None if args.json else (lambda text: print("  ..." + text[:150], file=sys.stderr))
    figures = measure(depths, probe, args.timeout, args.target, progress)
    if args.json:
        print(json.dumps(figures, indent=2))
        return 0
    print(f"smt benchmark, reading draft, timeout {args.timeout:g} s per subject, "
          f"target {args.target:g} s, {figures['cpus']} cpu(s)")
    for name in QUERY_NAMES:
        for depth, r in figures["queries"][name].items():
            a = r["answers"]
            print(f"{name:12} depth {depth:2}: {r['subjects']:2} subjects in "
                  f"{r['seconds']:7.2f} s; "
                  f"slowest {r['maxSeconds']:6.2f} s ({r['slowest']}), median "
                  f"{r['medianSeconds']:.3f} s; sat {a['sat']}, unsat {a['unsat']}, "
                  f"unknown {a['unknown']}")
    for name in QUERY_NAMES:
        p = figures["probes"][name]
        cells = "; ".join(f"depth {d}: " + ", ".join(f"{x['seconds']} s {x['status']}"
                                                     for x in r.values())
                          for d, r in p["depths"].items())
        s = figures["scaling"][name]
        stop = f"first timeout at depth {s['timedOutAt']}" if s["timedOutAt"] else \
            f"no timeout up to depth {s['deepestTried']}"
        print(f"{name:12} probe ({', '.join(p['subjects'])}): {cells}")
        print(f"{'':12} slowest subject within {args.target:g} s up to depth "
              f"{s['withinTarget']}; {stop}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
