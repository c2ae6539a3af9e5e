"""``activity-check lint``: is an agent's (producer's) stream conformant?

Reads a recorded stream (a file or ``-`` for stdin: a JSON array, JSON lines or a
text/event-stream body) or POSTs a run input to a live AG-UI endpoint (``--url``) and reads its
SSE answer, then reports every producer violation (:func:`counterexamples.lint.linter.lint_stream`) as
``pretty`` text, JSON, JUnit XML or SARIF 2.1.0 (:mod:`counterexamples.lint.formats`), on stdout
or into ``--out FILE``.

Exit codes: 0 when no violation reaches ``--fail-on`` (default ``error``; ``never``: always 0
once the stream was read), 1 when one does, 2 for unusable input or arguments (one line on stderr
naming the file or URL, the line and what is wrong).
"""
from __future__ import annotations

__all__ = ["PARSERS", "cmd_lint"]


FORMATS = ("pretty", "json", "junit", "sarif")
"""``--format``'s choices: :data:`counterexamples.lint.formats.FORMATS` (a test keeps the two
equal; written out here so that building the parser imports no model)."""

FAIL_ON = ("error", "warning", "never")
"""``--fail-on``'s choices: :data:`counterexamples.lint.linter.FAIL_ON` (kept equal by a test)."""


def _add_lint(sub) -> None:
    """Add the ``lint`` parser to the ``activity-check`` subparsers."""
    p = sub.add_parser("lint", help="producer-side conformance of an AG-UI stream: every "
                       "violation, with clause, keyword, event and JSON pointer")
    p.add_argument("file", nargs="?", metavar="FILE|-",
                   help="the stream: a JSON array, JSON lines or a text/event-stream body; '-' "
                        "(the default without --url) reads stdin")
    p.add_argument("--url", help="POST a run input to this AG-UI endpoint and lint its SSE "
                                 "answer (instead of FILE)")
    p.add_argument("--run-input", metavar="FILE",
                   help="with --url: the RunAgentInput JSON to POST (default: an empty thread)")
    p.add_argument("--timeout", type=float, default=30.0,
                   help="with --url: seconds to connect and between reads (default 30)")
    p.add_argument("--format", choices=FORMATS, default="pretty",
                   help="report format (default pretty)")
    p.add_argument("--out", metavar="FILE", help="write the report to FILE instead of stdout "
                   "(a new file: never over an existing one, never through a link)")
    p.add_argument("--reading",
                   help="judge under this reading's producer options only (preset or "
                        "KNOB=OPTION,...; only its producer-side knobs matter: see docs/lint.md, "
                        "Readings); default: "
                        "every producer reading, each violation saying which make it")
    p.add_argument("--fail-on", choices=FAIL_ON, default="error",
                   help="exit 1 when a violation of this severity or a worse one is found "
                        "(default error)")
    p.set_defaults(func=cmd_lint)


PARSERS = {"lint": _add_lint}
"""``{command: add(subparsers)}`` (see :data:`activity_check.cli.COMMANDS`)."""


def _read(args):
    """The stream the arguments name (a :class:`counterexamples.lint.inputs.LintInput`)."""
    from activity_check.cli import UsageError
    from counterexamples.lint.inputs import fetch_stream, read_stream
    from model.wire import TraceFormatError, loads_json, read_text
    if args.url and args.file:
        raise UsageError("give a FILE or --url, not both")
    if args.run_input and not args.url:
        raise UsageError("--run-input goes with --url")
    if not args.url and not args.file:
        import sys
        if sys.stdin is None or sys.stdin.isatty():
            raise UsageError("give the stream: a FILE, '-' to read stdin, or --url URL")
    try:
        if not args.url:
            return read_stream(args.file or "-")
        run_input = None
        if args.run_input:
            try:
                run_input = loads_json(read_text(args.run_input))
            except ValueError as exc:  # JSONDecodeError, TraceFormatError
                where = f":{exc.lineno}:{exc.colno}" if hasattr(exc, "lineno") else ""
                reason = getattr(exc, "msg", None) or str(exc)
                raise UsageError(f"--run-input {args.run_input}{where}: {reason}") from None
            if not isinstance(run_input, dict):
                raise UsageError(f"--run-input {args.run_input}: expected a JSON object "
                                 "(a RunAgentInput)")
        if args.timeout <= 0:
            raise UsageError("--timeout must be positive")
        return fetch_stream(args.url, run_input, timeout=args.timeout)
    except TraceFormatError as exc:
        raise UsageError(str(exc)) from None


def cmd_lint(args) -> int:
    """Lint the stream and print or write the report; returns 0, or 1 when a violation reaches
    ``--fail-on``. Raises UsageError (exit 2) for unusable input or arguments."""
    from activity_check import __version__
    from activity_check.cli import console, reading_option, write_new_output
    from counterexamples.lint.linter import lint_stream
    from counterexamples.lint.formats import render, render_pretty
    reading = None
    if args.reading:
        reading = reading_option(args.reading)
    found = _read(args)
    report = lint_stream(found.entries, reading, found.source, found.input_format, found.notes)
    if args.out:
        write_new_output(args.out, render(report, args.format, args.fail_on, __version__))
        verdict = "conformant" if report.conformant else "not conformant"
        print(f"{report.source}: {report.count('error')} error(s), {report.count('warning')} "
              f"warning(s): {verdict}; report written to {args.out}")
    elif args.format == "pretty":
        render_pretty(report, console(), args.fail_on)
    else:
        import sys
        sys.stdout.write(render(report, args.format, args.fail_on, __version__))
    return 1 if report.fails(args.fail_on) else 0
