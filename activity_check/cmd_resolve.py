"""``activity-check resolve [PROPOSAL [PROPOSAL_B]] [--pin K=O,...] [--recommended] [--depth N]
[--out DIR] [--format text|md|html|json] [--live] [--no-z3]``: what a proposed resolution of
the open questions does (issue 41): every question decided, closed or still open, the conflicts
the pins make, the recorded peers it makes non-conformant, the traces that pin each decision,
the wording beside the pages. Two proposals: side by side. The computation is
:func:`properties.resolve.resolve`; the writing :mod:`counterexamples.report.resolve`.

Registered in :data:`activity_check.cli.COMMANDS` as ``("resolve", "activity_check.cmd_resolve")``.
"""
from __future__ import annotations

from activity_check.cli import UsageError, console, dump, prepare_out, shown, write_out
from model.text import TEXT_WIDTH

__all__ = ["PARSERS", "cmd_resolve"]


def _add_resolve(sub) -> None:
    r = sub.add_parser("resolve", help="what a proposed resolution of open questions does")
    r.add_argument("proposals", nargs="*", metavar="PROPOSAL",
                   help="a proposal JSON file (counterexamples/schemas/proposal.schema.json); "
                        "two files: side by side")
    r.add_argument("--pin", metavar="K=O,...",
                   help="a proposal of pins alone, e.g. Q2=parent,Q8=keep")
    r.add_argument("--recommended", action="store_true",
                   help="the project's recommended proposal (every knob's recommended option)")
    # the bounds are the library's (properties.resolve.DEFAULT_DEPTH, MAX_DEPTH), read when the
    # command runs: building the parser imports no search
    r.add_argument("--depth", type=int, default=None,
                   help="breadth-first bound in events (default and most: "
                        "properties.resolve.DEFAULT_DEPTH and MAX_DEPTH, 4 and 5 today); Z3 asks "
                        "one more")
    r.add_argument("--format", choices=("text", "md", "html", "json"), default="text",
                   help="what is printed: text (default), Markdown for a PR comment, the HTML "
                        "page, or the JSON report")
    r.add_argument("--wide", action="store_true",
                   help="text: one line an item (default: within 120 columns, folded at word "
                        "boundaries)")
    r.add_argument("--out", metavar="DIR",
                   help="also write resolve.json, resolve.md, resolve.html, traces/, pytest/, "
                        "fixtures/ and conflicts/ there")
    r.add_argument("--spec", metavar="DIR",
                   help="the draft's pages, for the wording (default shared/spec/draft beside "
                        "the checkout)")
    r.add_argument("--live", action="store_true",
                   help="also replay each peer finding on the installed Node adapters")
    r.add_argument("--no-z3", action="store_true", help="breadth-first engines only")
    r.set_defaults(func=cmd_resolve)


PARSERS = {"resolve": _add_resolve}
"""The parsers this module adds (see :data:`activity_check.cli.COMMANDS`)."""


def _resolve_files(previous: dict):
    """The files an earlier ``resolve --out`` lists; None when it is not one."""
    if previous.get("command") != "resolve":
        return None
    files = previous.get("files", [])
    if not isinstance(files, list) or not all(isinstance(f, str) for f in files):
        raise ValueError("its files member is not a list of paths")
    return files


def _proposals(args) -> list:
    from counterexamples.report.resolve import load_proposal
    from properties.resolve import ProposalError, proposal_from_pins, recommended_proposal
    given = len(args.proposals) + bool(args.pin) + bool(args.recommended)
    if given == 0:
        raise UsageError("resolve: give a PROPOSAL file, --pin K=O,... or --recommended")
    if len(args.proposals) > 2 or given > 2:
        raise UsageError("resolve: at most two proposals (files, --pin, --recommended)")
    out = []
    try:
        out += [load_proposal(path) for path in args.proposals]
        if args.pin:
            out.append(proposal_from_pins(args.pin))
        if args.recommended:
            out.append(recommended_proposal())
    except ProposalError as exc:
        raise UsageError(str(exc)) from None
    return out


def _print_compare(reports: list, fmt: str) -> int:
    """Print two reports side by side (JSON: both reports and the comparison); 0."""
    import sys
    from counterexamples.report.resolve import render_compare
    from properties.resolve import compare
    cmp = compare(*reports)
    if fmt == "json":
        print(dump({"tool": "activity-check", "command": "resolve", "compare": cmp,
                    "reports": reports}))
    else:
        sys.stdout.write(render_compare(cmp, "md" if fmt == "md" else "text"))
    return 0


def _checked(args, proposals: list, pages):
    """Before any search: the wording's spec ``pages`` read (an unreadable or linked one
    refused at once) and ``--out`` checked, a proposal file it would replace refused. Returns
    the output plan, or None without ``--out``. Raises UsageError (one line)."""
    from counterexamples.report.resolve import REPORT_FILE, check_pages
    from properties.resolve import ProposalError
    try:
        check_pages(proposals, pages)
    except ProposalError as exc:
        raise UsageError(str(exc)) from None
    if args.out is None:
        return None
    return prepare_out(args.out, REPORT_FILE, "'activity-check resolve'", _resolve_files,
                       inputs=args.proposals)


def cmd_resolve(args) -> int:
    """``resolve``: print the report (or two side by side); 0, or 2 (one line) for an unusable
    proposal, depth or ``--out``."""
    import os
    import sys
    from counterexamples.report.resolve import (REPORT_FILE, add_sentences, render_html,
                                                render_markdown, render_text, spec_dir,
                                                write_report)
    from properties.resolve import DEFAULT_DEPTH, MAX_DEPTH, resolve
    if args.depth is None:
        args.depth = DEFAULT_DEPTH
    if not 2 <= args.depth <= MAX_DEPTH:
        raise UsageError(f"--depth must be from 2 to {MAX_DEPTH}, not {args.depth}")
    if args.spec is not None and not os.path.isdir(args.spec):
        raise UsageError(f"--spec {args.spec}: not a directory")
    proposals = _proposals(args)
    if len(proposals) == 2 and args.out:
        raise UsageError("--out writes one proposal's report; compare two without it")
    if len(proposals) == 2 and args.format == "html":
        raise UsageError("--format html shows one proposal; compare two as text, md or json")
    pages = args.spec or spec_dir()
    plan = _checked(args, proposals, pages)
    reports = []
    for proposal in proposals:
        report = resolve(proposal, depth=args.depth, z3=not args.no_z3)
        add_sentences(report, pages)
        if args.live:
            from counterexamples.report.resolve import live_peers
            live_peers(report)
        reports.append(report)
    if len(reports) == 2:
        return _print_compare(reports, args.format)
    report = reports[0]
    if plan is not None:
        with write_out(plan) as staging:
            write_report(report, staging)
        console(stderr=True).print(f"written to {shown(args.out)}: {REPORT_FILE}, resolve.md, "
                                   "resolve.html, traces/, pytest/, fixtures/, conflicts/")
    if args.format == "json":
        print(dump(report))
    elif args.format == "md":
        sys.stdout.write(render_markdown(report))
    elif args.format == "html":
        sys.stdout.write(render_html(report))
    else:
        sys.stdout.write(render_text(report, None if args.wide else TEXT_WIDTH))
    return 0
