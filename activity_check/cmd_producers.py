"""``activity-check producers``: real AG-UI producers driven offline, each stream linted.

``producers [--out DIR] [--format md|json]``: runs the producer scripts of ``peers/producers/``
that can run here (the others are listed as not run, with the reason), lints every stream they
write under every producer reading, lists the open questions each leaves to consumers, and gives
the producer matrix (:mod:`counterexamples.peers.producers`). With ``--out DIR``: ``producers.json``,
``producers.md`` and ``producers/<producer>--<scenario>.jsonl`` (``DIR`` new, empty or an earlier
producers output, replaced only when the new one is complete). ``make peers-report`` writes it
to ``$(OUT)/producers`` beside the consumer matrix.

Exit codes: 0 when it ran (violations are data), 2 when no producer can run or ``--out`` cannot
be written (one line on stderr).
"""
from __future__ import annotations

__all__ = ["PARSERS", "cmd_producers"]

SUMMARY = "producers.json"


def _add(sub) -> None:
    from activity_check.cli import finite_float
    p = sub.add_parser("producers", help="real AG-UI producers driven offline through scripted "
                       "scenarios, every stream linted (the producer matrix)")
    p.add_argument("--out", metavar="DIR",
                   help="write producers.json, producers.md and producers/ here (a new or empty "
                        "directory, or an earlier producers output)")
    p.add_argument("--format", choices=("md", "json"), default=None,
                   help="print the matrix in this form (default: md without --out)")
    p.add_argument("--timeout", type=finite_float, default=300.0,
                   help="seconds one producer script may run (default 300)")
    p.set_defaults(func=cmd_producers)


PARSERS = {"producers": _add}
"""``{command: add(subparsers)}`` (see :data:`activity_check.cli.COMMANDS`)."""


def _files(previous: dict):
    """The files an earlier producers output lists; None when it is not one."""
    if previous.get("schema") != "activity-check/producers/1":
        return None
    files = previous.get("files", [])
    return files if isinstance(files, list) else []


def cmd_producers(args) -> int:
    """Run the producer matrix; 0 when it ran, UsageError (exit 2) when nothing can run or the
    output cannot be written."""
    import json
    import math
    import os
    from activity_check.cli import UsageError, console, prepare_out, shown, write_out
    from counterexamples.peers.producers import (build_producer_matrix,
                                                 render_producers_markdown,
                                                 run_producer_scripts, write_producer_matrix)
    if math.isnan(args.timeout) or args.timeout <= 0:
        raise UsageError("--timeout must be a positive number of seconds")
    plan = prepare_out(args.out, SUMMARY, "'activity-check producers'", _files) \
        if args.out else None
    err = console(stderr=True)
    streams, skipped = run_producer_scripts(
        timeout=args.timeout, progress=lambda name: err.print(f"running {shown(name)} ..."))
    for script, reason in skipped:
        err.print(f"not run: {shown(script)}: {shown(reason)}")
    if not streams:
        raise UsageError("no producer could run here: "
                         + "; ".join(f"{s}: {r}" for s, r in skipped))
    doc = build_producer_matrix(streams, skipped)
    if plan is not None:
        with write_out(plan) as staging:
            files = write_producer_matrix(staging, doc, streams)
            doc = {**doc, "files": sorted(files)}
            with open(os.path.join(staging, SUMMARY), "w", encoding="utf-8") as fh:
                fh.write(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
        err.print(f"written to {shown(os.path.join(args.out, SUMMARY))}, producers.md and "
                  "producers/")
    form = args.format or (None if plan is not None else "md")
    if form == "json":
        print(json.dumps(doc, indent=2, ensure_ascii=False))
    elif form == "md":
        print(render_producers_markdown(doc), end="")
    return 0
