"""The zoo benchmark: how the stateful search and BFS catch each wrong consumer of the zoo.

Does the stateful search catch each wrong consumer, with which property, after how many examples
and seconds, and with how long a (shrunk) witness?

Each mutant of :data:`properties.zoo.MUTANTS` is driven by the adversarial machine (conformant
moves mixed with labelled non-conformant ones) under the reading it claims (``draft`` for all
but one), with a seed and an example budget.
Also measured: the reference consumer under the conformant and adversarial machines (it must not
fail) and their throughput in steps per second.

Targets (issue 3): at least 90% of the zoo caught within 500 examples each, median time to catch
under 5 s; at least 1,000 machine steps per second on one core.

``--random-share N``: one conformant event in N (while a run is active) drawn from the random
surface (:func:`properties.strategies.random_surface_event`), 0 for none; default the machines'
own (:data:`properties.search.machines.RANDOM_SHARE`). The JSON reports it as ``randomShare``.

Usage: python benchmarks/mutants.py [--examples N] [--seed S] [--only NAME...] [--no-bfs]
       [--bfs-depth D] [--random-share N] [--no-shrink] [--json]
"""
from __future__ import annotations

import argparse
import json
from dataclasses import replace
import statistics
import sys
import time

from properties.search.explore import EXPLORE_VOCABULARY, ExploreOptions, explore
from properties.search.machines import RANDOM_SHARE, consumer_machine, run_machine
from properties.surface import SURFACE_PATCHES
from properties.zoo import MUTANT_BY_NAME, MUTANTS
from model.consumers import REFERENCE


_SURFACE = dict(SURFACE_PATCHES)
ZOO_VOCABULARY = replace(
    EXPLORE_VOCABULARY,
    contents=({"n": 1, "f": 1.5, "z": None, "list": [1, 2, 3], "nest": {"x": {"y": 1}},
               "a/b": 1, "m~n": 2},),
    patches=EXPLORE_VOCABULARY.patches + (
        ("partly-applies", ({"op": "replace", "path": "/n", "value": 5},
                            {"op": "remove", "path": "/missing"})),
        ("test-true", ({"op": "test", "path": "/n", "value": True},
                       {"op": "replace", "path": "/n", "value": 3})),
    ) + tuple((name, _SURFACE[name]) for name in (
        "move-member", "copy-member", "escaped-slash", "escaped-tilde", "dash-replace",
        "leading-zero", "root-add", "test-float-int",
        # issue 20 item 5: the surface patches the newer mutants need to show
        "dash-append", "array-insert", "array-past-end", "array-remove",
        "nested-missing-parent", "move-into-child", "escaped-move", "test-array-order",
        "null-value",
        # the widened generation: a write under a copy, the index equal to the length, an open operation member,
        # a float at the edge of double precision
        "copy-then-write", "array-replace-at-length", "open-member", "float-precision",
        # the blind red team's pointer and move edges, self-contained where they need an array
        "edge-own-negative-index", "edge-own-remove-first", "edge-own-move-index",
        "edge-move-sibling-prefix", "edge-tilde-one")),
    metadata=(None, {"k": {"a": 1}}, {"k": {"b": None}}),
)
"""The exploration vocabulary plus what some mistakes need to show: a content with a float, a
null, an array, a nested object and keys a pointer escapes; a patch that applies in part, a
``test`` of ``true`` against ``1``, and the surface patches (:data:`properties.surface.
SURFACE_PATCHES`) that tell move from copy, escapes, ``-``, leading zeros, a root add and a test
of a float against an integer apart, and those of the newer surface mutants (``-`` on add, array
insert, remove and an index past the end, a missing parent, a move into its own child, an escaped
``from``, a test of array order, a null value) and those the widened generation added (a write
under a copy in the same patch, a replace at the index equal to the array's length, operations
with members RFC 6902 does not define, a float at the edge of double precision); nested and null
metadata values. Only patches of
:data:`~properties.surface.SURFACE_PATCHES` are taken, so that what BFS catches here is what the
generated surface can show."""


def bfs_catch(mutant, depth: int = 4, timeout: float = 60.0) -> dict:
    """Breadth-first search (conformant and adversarial moves, every property on every edge) for
    the shortest trace on which ``mutant`` breaks a property; stops at the first level that has
    one."""
    r = explore(ExploreOptions(depth=depth, vocabulary=ZOO_VOCABULARY, reading=mutant.reading,
                               consumer=mutant, adversarial=True, check_readings=False,
                               timeout=timeout, stop_when_found=True))
    if not r.violations:
        return {"caught": False, "property": None, "witnessLength": None,
                "seconds": round(r.seconds, 3), "states": r.states, "stoppedBy": r.stopped_by}
    pid, (trace, _) = min(r.violations.items(), key=lambda kv: (len(kv[1][0]), kv[0]))
    return {"caught": True, "property": pid, "witnessLength": len(trace),
            "seconds": round(r.seconds, 3), "states": r.states, "stoppedBy": r.stopped_by}


def measure(examples: int = 500, seed: int = 0, only=None, bfs: bool = True,
            bfs_depth: int = 4, random_share: int = RANDOM_SHARE, shrink: bool = True) -> dict:
    """Run the zoo under the adversarial state machine (one conformant event in ``random_share``
    from the random surface, 0: none) and, with ``bfs``, the exhaustive search; returns figures per
    mutant and in total. Without ``shrink`` the witnesses are the first failing traces (the
    examples until caught do not change: the first failure comes before shrinking)."""
    rows = []
    for mutant in MUTANTS:
        if only and mutant.name not in only:
            continue
        r = run_machine(consumer_machine(mutant, mutant.reading, adversarial=True,
                                         random_share=random_share), seed=seed,
                        max_examples=examples, shrink=shrink)
        rows.append({
            "mutant": mutant.name, "clause": mutant.clause, "case": mutant.case or None,
            "reading": mutant.reading.name or "draft",
            "caught": r.caught and (r.examples_until_caught or 0) <= examples,
            "property": r.property, "examplesUntilCaught": r.examples_until_caught,
            "secondsUntilCaught": round(r.seconds_until_caught, 3)
            if r.seconds_until_caught is not None else None,
            "witnessLength": len(r.witness) if r.caught else None,
            "bfs": bfs_catch(mutant, bfs_depth) if bfs else None,
        })
    throughput = {}
    for adversarial in (False, True):
        start = time.perf_counter()
        r = run_machine(consumer_machine(REFERENCE, adversarial=adversarial,
                                         random_share=random_share), seed=seed,
                        max_examples=examples, shrink=False)
        seconds = time.perf_counter() - start
        throughput["adversarial" if adversarial else "conformant"] = {
            "referenceFailed": r.caught, "property": r.property, "examples": r.examples,
            "steps": r.steps, "randomSteps": r.random_steps,
            "stepsPerSecond": round(r.steps / seconds)}
    caught = [row for row in rows if row["caught"]]
    bfs_caught = [row for row in rows if row["bfs"] and row["bfs"]["caught"]]
    times = [row["secondsUntilCaught"] for row in caught]
    return {
        "benchmark": "mutants", "seed": seed, "examplesPerMutant": examples,
        "randomShare": random_share, "shrunk": shrink,
        "mutants": len(rows), "caught": len(caught),
        "caughtShare": round(len(caught) / len(rows), 3) if rows else None,
        "medianSecondsUntilCaught": round(statistics.median(times), 3) if times else None,
        "medianExamplesUntilCaught": statistics.median(
            [row["examplesUntilCaught"] for row in caught]) if caught else None,
        "targets": {"caughtShare": 0.9, "medianSeconds": 5.0, "stepsPerSecond": 1000},
        "bfsCaught": len(bfs_caught) if bfs else None, "bfsDepth": bfs_depth if bfs else None,
        "machines": throughput, "rows": rows,
    }


def main(argv=None) -> int:
    """Command-line entry: parse the options, measure, print the figures (``--json``: as JSON);
    returns the exit code."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=500,
                        help="Hypothesis examples per mutant (default 500)")
    parser.add_argument("--seed", type=int, default=0,
                        help="seed of the stateful search (default 0)")
    parser.add_argument("--only", nargs="*", help="mutant names to run (default: all)")
    parser.add_argument("--no-bfs", action="store_true", help="skip the exhaustive search")
    parser.add_argument("--bfs-depth", type=int, default=4,
                        help="depth bound of the exhaustive search (default 4)")
    parser.add_argument("--random-share", type=int, default=RANDOM_SHARE, metavar="N",
                        help="one event in N from the random surface, 0 for none "
                             f"(default {RANDOM_SHARE}, the machines' own)")
    parser.add_argument("--no-shrink", action="store_true",
                        help="report the first failing trace, unshrunk (faster; the examples "
                             "until caught are the same)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    if args.random_share < 0:
        parser.error(f"--random-share: must be 0 (off) or positive, not {args.random_share}")
    if args.examples < 1:
        parser.error(f"--examples: must be at least 1, not {args.examples}")
    if args.bfs_depth < 1 and not args.no_bfs:
        parser.error(f"--bfs-depth: must be at least 1 (or --no-bfs), not {args.bfs_depth}")
    unknown = [name for name in args.only or () if name not in MUTANT_BY_NAME]
    if unknown:
        parser.error(f"--only: no mutant named {', '.join(unknown)} (see properties.zoo.MUTANTS)")
    from properties.strategies import fixed_constants
    with fixed_constants():  # the same seed draws the same traces whatever was imported
        figures = measure(args.examples, args.seed, args.only, not args.no_bfs, args.bfs_depth,
                          args.random_share, not args.no_shrink)
    if args.json:
        print(json.dumps(figures, indent=2))
        return 0
    print(f"{'':30} {'Hypothesis stateful':60} | {'BFS (shortest)'}")
    print(f"{'mutant':30} {'caught':6} {'by property':30} {'examples':>8} {'seconds':>7} "
          f"{'len':>4} | {'caught':6} {'by property':30} {'len':>4} {'seconds':>7}")
    for row in figures["rows"]:
        b = row["bfs"] or {}
        print(f"{row['mutant']:30} {'yes' if row['caught'] else 'NO':6} "
              f"{row['property'] or '-':30} {row['examplesUntilCaught'] or '-':>8} "
              f"{row['secondsUntilCaught'] if row['secondsUntilCaught'] is not None else '-':>7} "
              f"{row['witnessLength'] or '-':>4} | "
              + (f"{'yes' if b.get('caught') else 'NO':6} {b.get('property') or '-':30} "
                 f"{b.get('witnessLength') or '-':>4} {b.get('seconds', '-'):>7}" if b else "-"))
    print(f"caught {figures['caught']}/{figures['mutants']} ({figures['caughtShare']:.0%}) within "
          f"{figures['examplesPerMutant']} examples each; median {figures['medianSecondsUntilCaught']} s "
          f"and {figures['medianExamplesUntilCaught']} examples until caught "
          f"(random share {figures['randomShare'] or 'off'})")
    if figures["bfsCaught"] is not None:
        print(f"BFS (depth {figures['bfsDepth']}, zoo vocabulary): caught "
              f"{figures['bfsCaught']}/{figures['mutants']}")
    for name, m in figures["machines"].items():
        print(f"reference, {name} machine: {m['steps']} steps in {m['examples']} examples, "
              f"{m['stepsPerSecond']:,} steps/s, failed: {m['referenceFailed']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
