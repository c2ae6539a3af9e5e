"""``activity-check export FINDING --format F``: a finding file as JSON lines, the finding JSON
itself, an ITF trace, a Mermaid sequence diagram or a pytest regression file (all the work is in
:mod:`counterexamples.report.export`)."""
from __future__ import annotations

import sys

from activity_check.cli import UsageError, add_input_limits, reading_option, write_new_output

__all__ = ["PARSERS", "cmd_export"]


def _add_export(sub) -> None:
    xp = sub.add_parser("export", help="a finding as JSON lines, JSON, ITF, Mermaid or pytest")
    xp.add_argument("finding", help="a finding JSON file (DIR/findings/<id>.json)")
    xp.add_argument("--format", required=True,
                    choices=("jsonl", "json", "itf", "mermaid", "pytest", "ag-ui-fixture"),
                    help="jsonl (the trace), json (the finding itself), itf (Apalache/Quint "
                         "trace), mermaid (sequence diagram), pytest (regression test file) or "
                         "ag-ui-fixture (an AG-UI conformance fixture: the witness and its "
                         "verdict, kill verified on the zoo; a trace file too)")
    xp.add_argument("--out", help="write to this file (refused if it exists; default stdout)")
    xp.add_argument("--reading", help="itf: the reading whose states are exported (default: "
                    "the draft's verdict class; a property finding's own reading); pytest: "
                    "the one reading whose verdict the test pins (a proposal's, e.g. "
                    "Q2=parent,Q8=keep; default every verdict class); ag-ui-fixture: the "
                    "reading whose verdict the fixture states")
    add_input_limits(xp)
    xp.set_defaults(func=cmd_export)


PARSERS = {"export": _add_export}


def _trace_fixture(args, reading) -> int:
    """``export TRACE --format ag-ui-fixture``: a trace file (not a finding) as a fixture named
    after the file (:func:`counterexamples.conformance.generate.trace_fixture`)."""
    import os
    from counterexamples.conformance.generate import trace_fixture
    from counterexamples.report.fixture import dumps_fixture
    from counterexamples.peers.traces import load_traces
    from model.readings import DRAFT
    if os.path.isdir(args.finding):
        raise UsageError(f"{args.finding}: a folder; export takes one finding or trace file")
    try:
        traces = load_traces([args.finding])
    except ValueError as exc:  # TraceFormatError names the file, line and event
        raise UsageError(str(exc)) from None
    if len(traces) != 1:
        raise UsageError(f"{args.finding}: holds {len(traces)} traces; export takes one")
    wire = list(traces[0].wire)
    base = os.path.splitext(os.path.basename(args.finding))[0].lower()
    name = "-".join("".join(c if c.isalnum() else " " for c in base).split()) or "trace"
    reading = reading or DRAFT
    text = dumps_fixture(trace_fixture(name, wire, reading, "/spec/draft",
                                       f"the trace {os.path.basename(args.finding)}",
                                       reading_label=reading.name or "draft",
                                       state=traces[0].state))
    if args.out is None:
        sys.stdout.write(text)
        return 0
    write_new_output(args.out, text)
    return 0
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
        if args.format not in ("itf", "pytest", "ag-ui-fixture"):
            raise UsageError(f"--reading applies to --format itf, pytest and ag-ui-fixture "
                             f"only, not {args.format}")
        reading = reading_option(args.reading, parse_reading_spec)
    try:
        finding = open_finding(args.finding)
    except OSError as exc:
        raise UsageError(f"{args.finding}: cannot read the file: {exc.strerror}") from None
    except ValueError as exc:
        if args.format != "ag-ui-fixture":
            raise UsageError(str(exc)) from None
        return _trace_fixture(args, reading)
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
