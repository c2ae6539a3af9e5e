"""``activity-check export FINDING --format F``: a finding file as JSON lines, the finding JSON
itself, an ITF trace, a Mermaid sequence diagram or a pytest regression file (all the work is in
:mod:`counterexamples.report.export`)."""
from __future__ import annotations

import sys

from activity_check.cli import UsageError, reading_option, write_new_output

__all__ = ["PARSERS", "cmd_export"]


def _add_export(sub) -> None:
    xp = sub.add_parser("export", help="a finding as JSON lines, JSON, ITF, Mermaid or pytest")
    xp.add_argument("finding", help="a finding JSON file (DIR/findings/<id>.json)")
    xp.add_argument("--format", required=True,
                    choices=("jsonl", "json", "itf", "mermaid", "pytest"),
                    help="jsonl (the trace), json (the finding itself), itf (Apalache/Quint "
                         "trace), mermaid (sequence diagram) or pytest (regression test file)")
    xp.add_argument("--out", help="write to this file (refused if it exists; default stdout)")
    xp.add_argument("--reading", help="itf: the reading whose states are exported (default: "
                    "the draft's verdict class; a property finding's own reading); pytest: "
                    "the one reading whose verdict the test pins (a proposal's, e.g. "
                    "Q2=parent,Q8=keep; default every verdict class)")
    xp.set_defaults(func=cmd_export)


PARSERS = {"export": _add_export}
"""The parsers this module adds (see :data:`activity_check.cli.COMMANDS`)."""


def cmd_export(args) -> int:
    """``export FINDING --format F [--out FILE] [--reading SPEC]``: a finding JSON file as JSON
    lines, the finding JSON itself, an ITF trace, a Mermaid sequence diagram or a pytest
    regression file (see :mod:`counterexamples.report.export`); stdout unless ``--out``, which never
    overwrites. Returns 0; raises UsageError (exit 2) for an unusable option, an unreadable or
    unusable finding, or an ``--out`` that exists or cannot be written."""
    from counterexamples.report.export import export, open_finding, parse_reading_spec

    reading = None
    if args.reading is not None:  # the option's own faults first, named as the option's
        if args.format not in ("itf", "pytest"):
            raise UsageError(f"--reading applies to --format itf and pytest only, not "
                             f"{args.format}")
        reading = reading_option(args.reading, parse_reading_spec)
    try:
        finding = open_finding(args.finding)
    except OSError as exc:
        raise UsageError(f"{args.finding}: cannot read the file: {exc.strerror}") from None
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    try:
        text = export(finding, args.format, reading)
    except ValueError as exc:
        raise UsageError(f"{args.finding}: {exc}") from None
    except (KeyError, TypeError, AttributeError, IndexError) as exc:
        # a finding file from elsewhere may lack what the loader does not check
        raise UsageError(f"{args.finding}: not a finding as activity-check writes it "
                         f"({type(exc).__name__}: {exc})") from None
    if args.out is None:
        sys.stdout.write(text)
        sys.stdout.flush()
        return 0
    write_new_output(args.out, text)
    return 0
