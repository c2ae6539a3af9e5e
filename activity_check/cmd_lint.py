"""``activity-check lint``: is an agent's (producer's) stream conformant?

Reads recorded streams (files, folders of them, or ``-`` for stdin: a JSON array, JSON lines or
a text/event-stream body) or POSTs a run input to a live AG-UI endpoint (``--url``) and reads
its SSE answer as it arrives, then reports every producer violation
(:func:`counterexamples.lint.linter.lint_stream`) as ``pretty`` text, JSON, JUnit XML or SARIF
2.1.0 (:mod:`counterexamples.lint.formats`), one report with a verdict per input, on stdout or
into ``--out FILE``. Pretty text on stdout folds within 120 columns (``--wide``: each line
whole). Every read is bounded (``--max-bytes``, ``--max-lines``; with ``--url``
also ``--timeout``, ``--max-seconds`` and ``--max-events``): see docs/limits.md.

Exit codes: 0 when no violation reaches ``--fail-on`` (default ``error``; ``never``: always 0
once the streams were read), 1 when one does in any input, 2 for unusable input or arguments
(one line on stderr naming the file or URL, the line and what is wrong).
"""
from __future__ import annotations

from activity_check.cli import add_input_limits, finite_float, positive_int
from model.text import visible

__all__ = ["PARSERS", "cmd_lint", "STREAM_SUFFIXES"]

STREAM_SUFFIXES = (".json", ".jsonl", ".ndjson", ".sse")
"""The files of a folder given to ``lint`` that are read as streams (others are left out)."""


FORMATS = ("pretty", "json", "junit", "sarif")
"""``--format``'s choices: :data:`counterexamples.lint.formats.FORMATS` (a test keeps the two
equal; written out here so that building the parser imports no model)."""

FAIL_ON = ("error", "warning", "never")
"""``--fail-on``'s choices: :data:`counterexamples.lint.linter.FAIL_ON` (kept equal by a test)."""


def _add_lint(sub) -> None:
    """Add the ``lint`` parser to the ``activity-check`` subparsers."""
    p = sub.add_parser("lint", help="producer-side conformance of an AG-UI stream: every "
                       "violation, with clause, keyword, event and JSON pointer")
    p.add_argument("files", nargs="*", metavar="FILE|DIR|-",
                   help="the streams: files (a JSON array, JSON lines or a text/event-stream "
                        "body), folders (their .json, .jsonl, .ndjson and .sse files, in name "
                        "order, subfolders too) or '-' (the default without --url) for stdin; "
                        "one report, a verdict per file")
    p.add_argument("--url", help="POST a run input to this AG-UI endpoint and lint its SSE "
                                 "answer (instead of FILE)")
    p.add_argument("--run-input", metavar="FILE",
                   help="with --url: the RunAgentInput JSON to POST (default: an empty thread)")
    p.add_argument("--timeout", type=finite_float, default=30.0,
                   help="with --url: seconds to connect and between reads (default 30)")
    p.add_argument("--max-seconds", type=finite_float, default=None, metavar="S",
                   help="with --url: stop reading after S seconds and judge what was read "
                        "(default 600)")
    p.add_argument("--max-events", type=positive_int, default=None, metavar="N",
                   help="with --url: stop after N events and judge what was read "
                        "(default 1,000,000)")
    p.add_argument("--format", choices=FORMATS, default="pretty",
                   help="report format (default pretty)")
    p.add_argument("--wide", action="store_true",
                   help="pretty on stdout: every line whole, one line each (default: within "
                        "120 columns, folded at word boundaries with a hanging indent, ids "
                        "whole); the other formats and --out are whole either way")
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
    p.add_argument("--exposure", action="store_true",
                   help="also list the open questions on which consumers' results differ for "
                        "this very stream, each with what to send instead (pretty or json; one "
                        "file or stdin)")
    add_input_limits(p)
    p.set_defaults(func=cmd_lint)


PARSERS = {"lint": _add_lint}
"""``{command: add(subparsers)}`` (see :data:`activity_check.cli.COMMANDS`)."""


def _paths(args) -> list[tuple[str, bool]]:
    """``(path, listed)`` of every stream the arguments name: a folder's files (sorted, its
    subfolders walked without following links) are ``listed``, so read only as regular files
    and never through a link (:func:`model.wire.read_bytes`). A symbolic link to a folder is
    listed too, so that it is refused as a linked file is, not passed over in silence."""
    import os
    out: list[tuple[str, bool]] = []
    for path in args.files:
        if path != "-" and os.path.isdir(path):
            found = []
            for top, dirs, names in os.walk(path):
                dirs.sort()
                linked = [d for d in dirs if os.path.islink(os.path.join(top, d))]
                found.extend(os.path.join(top, n) for n in sorted(
                    [n for n in names if n.endswith(STREAM_SUFFIXES)] + linked))
            out.extend((f, True) for f in found)
        else:
            out.append((path, False))
    return out


def _check(args) -> None:
    """Refuse options that do not go together (UsageError, exit 2)."""
    from activity_check.cli import UsageError
    if args.url and args.files:
        raise UsageError("give a FILE or --url, not both")
    for name in ("run_input", "max_seconds", "max_events"):
        if getattr(args, name) is not None and not args.url:
            raise UsageError(f"--{name.replace('_', '-')} goes with --url")
    if args.files.count("-") > 1:
        raise UsageError("'-' (stdin) may be given once")
    if not args.url and not args.files:
        import sys
        if sys.stdin is None or sys.stdin.isatty():
            raise UsageError("give the stream: a FILE, a folder, '-' to read stdin, or "
                             "--url URL")
    if args.timeout <= 0:
        raise UsageError("--timeout must be positive")
    if args.max_seconds is not None and args.max_seconds <= 0:
        raise UsageError("--max-seconds must be positive")


def _run_input(args):
    """The ``--run-input`` document (None: the default run input)."""
    from activity_check.cli import UsageError
    from model.wire import loads_json, read_text
    if not args.run_input:
        return None
    try:
        run_input = loads_json(read_text(args.run_input))
    except ValueError as exc:  # JSONDecodeError, TraceFormatError
        where = f":{exc.lineno}:{exc.colno}" if hasattr(exc, "lineno") else ""
        # a TraceFormatError's reason without the file name, which this line gives once
        reason = getattr(exc, "msg", None) or getattr(exc, "reason", None) or str(exc)
        raise UsageError(f"--run-input {args.run_input}{where}: {reason}") from None
    if not isinstance(run_input, dict):
        raise UsageError(f"--run-input {args.run_input}: expected a JSON object "
                         "(a RunAgentInput)")
    return run_input


def _reports(args, reading) -> list:
    """Lint every input the arguments name, one :class:`~counterexamples.lint.linter.LintReport`
    each; a live endpoint is linted as it is read, one event held at a time. Raises UsageError
    (exit 2) for the first input that cannot be read."""
    from activity_check.cli import UsageError
    from counterexamples.lint.inputs import (DEFAULT_MAX_EVENTS, DEFAULT_MAX_SECONDS,
                                             LiveStream, read_stream)
    from counterexamples.lint.linter import lint_stream
    from model.wire import TraceFormatError
    try:
        if args.url:
            live = LiveStream(args.url, _run_input(args), timeout=args.timeout,
                              max_events=args.max_events or DEFAULT_MAX_EVENTS,
                              max_seconds=args.max_seconds or DEFAULT_MAX_SECONDS)
            report = lint_stream(live, reading, args.url, "sse", cut=lambda: live.cut)
            live.check_trace()
            return [report]
        paths = _paths(args) if args.files else [("-", False)]
        if not paths:
            raise UsageError(f"no stream to lint: no {', '.join(STREAM_SUFFIXES)} file in "
                             f"{', '.join(args.files)}")
        reports = []
        for path, listed in paths:
            found = read_stream(path, listed=listed)
            reports.append(lint_stream(found.entries, reading, found.source,
                                       found.input_format, found.notes))
        return reports
    except TraceFormatError as exc:
        raise UsageError(str(exc)) from None


def cmd_lint(args) -> int:
    """Lint the streams and print or write one report; returns 0, or 1 when a violation in any
    input reaches ``--fail-on``. Raises UsageError (exit 2) for unusable input or arguments."""
    from activity_check import __version__
    from activity_check.cli import console, reading_option, write_new_output
    from counterexamples.lint.formats import render, render_pretty
    _check(args)
    reading = reading_option(args.reading) if args.reading else None
    if args.exposure:
        return _with_exposure(args, reading)
    reports = _reports(args, reading)
    failed = any(r.fails(args.fail_on) for r in reports)
    if args.out:
        write_new_output(args.out, render(reports, args.format, args.fail_on, __version__))
        for report in reports:  # one line each; the last says where the report went
            verdict = "conformant" if report.conformant else "not conformant"
            print(f"{visible(report.source, None)}: {report.count('error')} error(s), "
                  f"{report.count('warning')} warning(s): {verdict}"
                  + (f"; report written to {visible(args.out, None)}"
                     if report is reports[-1] else ""))
    elif args.format == "pretty":  # within 120 columns, or each line whole with --wide
        render_pretty(reports, console(wide=bool(args.wide)), args.fail_on)
    else:
        import sys
        sys.stdout.write(render(reports, args.format, args.fail_on, __version__))
    return 1 if failed else 0


def _with_exposure(args, reading) -> int:
    """``lint --exposure``: the lint report, then the open questions the stream depends on
    (:func:`counterexamples.lint.exposure.exposure_of_entries`); JSON: one document of schema
    ``activity-check/exposure/1`` holding both. Same exit status as lint. One file or stdin:
    the stream is held whole, since it is judged under every reading. Raises UsageError (exit
    2) for any other input or format."""
    import io
    import json
    import sys
    from rich.console import Console
    from activity_check import __version__
    from activity_check.cli import UsageError, console, write_new_output
    from counterexamples.lint.exposure import (EXPOSURE_SCHEMA, exposure_of_entries,
                                               render_exposure_pretty)
    from counterexamples.lint.formats import render_pretty
    from counterexamples.lint.inputs import read_stream
    from counterexamples.lint.linter import lint_stream
    from model.wire import TraceFormatError
    if args.format not in ("pretty", "json"):
        raise UsageError(f"--exposure goes with --format pretty or json, not {args.format}")
    paths = _paths(args) if args.files else [("-", False)]
    if args.url:
        raise UsageError("--exposure judges a stream read whole, not a live endpoint: save "
                         "the endpoint's answer to a file and give that file")
    if len(paths) != 1:
        raise UsageError("--exposure judges one stream: give one FILE or '-'")
    path, listed = paths[0]
    try:
        stream = read_stream(path, listed=listed)
        entries = list(stream.entries)  # read once, judged under every reading
    except TraceFormatError as exc:
        raise UsageError(str(exc)) from None
    report = lint_stream(entries, reading, stream.source, stream.input_format, stream.notes)
    found = exposure_of_entries(entries)
    if args.format == "json":
        doc = {"tool": "activity-check", "version": __version__, "schema": EXPOSURE_SCHEMA,
               "source": report.source, "conformant": report.conformant,
               "lint": report.to_json(args.fail_on, __version__), "exposure": found.to_json()}
        text = json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
    else:
        buffer = io.StringIO()
        # on stdout within 120 columns as lint's report is (--wide: each line whole)
        con = console(wide=bool(args.wide)) if not args.out else \
            Console(file=buffer, width=160, no_color=True, highlight=False, soft_wrap=True)
        render_pretty(report, con, args.fail_on)
        render_exposure_pretty(found, con, report.conformant)
        text = buffer.getvalue()
    if args.out:
        write_new_output(args.out, text)
        print(f"{report.source}: {report.count('error')} error(s), "
              f"{len(found.exposures)} open question(s) exposed; report written to {args.out}")
    elif args.format == "json":
        sys.stdout.write(text)
    return 1 if report.fails(args.fail_on) else 0
