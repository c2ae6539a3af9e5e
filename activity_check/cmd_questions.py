"""``activity-check questions [--depth N] [--json] [--format text|md]``: the settlement table of
the open questions Q1..Q25 (:func:`properties.questions.settle`): each question's form (A, B, C
or none), its knobs, the shortest witness's length and engine, and for C the proof's depth.

Registered in :data:`activity_check.cli.COMMANDS` as ``("questions",
"activity_check.cmd_questions")`` (issue 19)."""
from __future__ import annotations

from activity_check.cli import dump

__all__ = ["PARSERS", "cmd_questions"]


def _add_questions(sub) -> None:
    q = sub.add_parser("questions", help="how each open question of the draft is settled")
    q.add_argument("--depth", type=int, default=4,
                   help="bound of the searches and proofs (events; default 4)")
    q.add_argument("--json", action="store_true")
    q.add_argument("--format", choices=("text", "md"), default="text")
    q.set_defaults(func=cmd_questions)


PARSERS = {"questions": _add_questions}
"""The parsers this module adds (see :data:`activity_check.cli.COMMANDS`)."""

_COLUMNS = ("question", "form", "knobs", "length", "engine", "z3Length", "proofDepth", "title")


def cmd_questions(args) -> int:
    """``questions``: print the settlement table; 0, or 2 for a depth below 2 (one line)."""
    import sys
    from properties.questions import settle, settled_count
    try:
        rows = settle(depth=args.depth)
    except ValueError as exc:
        print(f"activity-check questions: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(dump({"depth": args.depth, "settled": settled_count(rows), "questions": rows}))
        return 0
    cells = [[_cell(r[c]) for c in _COLUMNS] for r in rows]
    if args.format == "md":
        print("| " + " | ".join(_COLUMNS) + " |")
        print("|" + " --- |" * len(_COLUMNS))
        for row in cells:
            print("| " + " | ".join(row) + " |")
    else:
        for row in cells:
            print("  ".join(row))
    print(f"{settled_count(rows)} of {len(rows)} questions settled (depth {args.depth})")
    return 0


def _cell(value) -> str:
    if value is None:
        return "-"
    if isinstance(value, list):
        return ",".join(value) or "-"
    return str(value)
