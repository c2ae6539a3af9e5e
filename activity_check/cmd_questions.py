"""``activity-check questions [--depth N] [--json] [--format text|md|html] [--out DIR]``: the
settlement table of the open questions Q1..Q25 (:func:`properties.questions.settle`): each
question's form (A, B, C or none), its knobs, the shortest witness's length and engine, the
witness file, and for C the proof's depth. ``--out DIR`` writes the table (``questions.json``),
the page (``questions.html``) and the witnesses (``questions/<Q-id>.jsonl``) into DIR, whole or
not at all (:mod:`counterexamples.outdir`); the rendering is
:mod:`counterexamples.report.questions_page`.

Registered in :data:`activity_check.cli.COMMANDS` as ``("questions",
"activity_check.cmd_questions")`` (issue 19)."""
from __future__ import annotations

from activity_check.cli import UsageError, console, dump, prepare_out, shown, write_out

__all__ = ["PARSERS", "cmd_questions"]


MAX_DEPTH = 5
"""The deepest ``--depth``: the all-readings sweep under the table grows about twentyfold per
event (depth 6 is tens of millions of states, hours and over 10 GB here)."""


def _add_questions(sub) -> None:
    q = sub.add_parser("questions", help="how each open question of the draft is settled")
    q.add_argument("--depth", type=int, default=4,
                   help=f"bound of the searches and proofs (events, 2 to {MAX_DEPTH}; default "
                        "4: seconds; 5: a few minutes and about 2 GB)")
    q.add_argument("--json", action="store_true",
                   help="print the table as JSON (depth, settled, total, questions, files)")
    q.add_argument("--format", choices=("text", "md", "html"), default="text",
                   help="text (default), a Markdown table, or the self-contained HTML page")
    q.add_argument("--wide", action="store_true",
                   help="text: the full table, one line a row (default: within 120 columns, "
                        "long cells folded at word boundaries)")
    q.add_argument("--out", metavar="DIR",
                   help="also write questions.json, questions.html and the witnesses there")
    q.set_defaults(func=cmd_questions)


PARSERS = {"questions": _add_questions}
"""The parsers this module adds (see :data:`activity_check.cli.COMMANDS`)."""


def _question_files(previous: dict):
    """The files an earlier ``questions --out`` lists; None when it is not one."""
    if previous.get("command") != "questions":
        return None
    files = previous.get("files", [])
    if not isinstance(files, list) or not all(isinstance(f, str) for f in files):
        raise ValueError("its files member is not a list of paths")
    return files


def cmd_questions(args) -> int:
    """``questions``: print the settlement table; 0, or 2 (one line) for a depth below 2 or an
    ``--out`` that is not ours to write."""
    import sys
    from counterexamples.report.questions_page import (TABLE_FILE, render_html, render_markdown,
                                                  render_text, table_json, write_questions)
    from properties.questions import settle
    if not 2 <= args.depth <= MAX_DEPTH:
        raise UsageError(f"--depth must be from 2 to {MAX_DEPTH}, not {args.depth}")
    plan = prepare_out(args.out, TABLE_FILE, "'activity-check questions'",
                       _question_files) if args.out else None
    rows = settle(depth=args.depth)
    if plan is not None:
        with write_out(plan) as staging:
            write_questions(rows, staging, args.depth, table=True)
        console(stderr=True).print(f"written to {shown(args.out)}: {TABLE_FILE}, "
                                   "questions.html and questions/")
    if args.json:
        print(dump(table_json(rows, args.depth, written=plan is not None)))
    elif args.format == "md":
        sys.stdout.write(render_markdown(rows, args.depth, args.out))
    elif args.format == "html":
        sys.stdout.write(render_html(rows, args.depth, written=plan is not None))
    else:
        sys.stdout.write(render_text(rows, args.depth, args.out, wide=args.wide))
    return 0

