"""``activity-check conformance run|generate``: the field's conformance corpus (AG-UI's
``spec/draft/conformance``), run against the model or any adapter, and the activity corpus it
lacks, generated (docs/conformance.md).

* ``conformance run PATH... [--adapter CMD | --model[=READING]] [--lane NAME | --third-party]
  [--json | --junit FILE | --format md]``: each fixture (files, or folders whose MANIFEST is
  checked both ways) replayed through the consumer and every ``expect`` key judged; exit 0 when
  every fixture passed, 1 when one failed or got no answer, 2 for bad input.
* ``conformance generate --out DIR [--reading R | --proposal FILE]``: the generated corpus.

All the work is in :mod:`counterexamples.conformance`; this module only wires it.
"""
from __future__ import annotations

import sys

from activity_check.cli import UsageError, console, dump, finite_float, reading_option, shown, \
    write_new_output
from model.text import TEXT_WIDTH, fold_line, named

__all__ = ["PARSERS", "cmd_conformance"]


def _add_conformance(sub) -> None:
    from counterexamples.peers.adapter import DEFAULT_TIMEOUT
    conf = sub.add_parser("conformance", help="run the AG-UI conformance corpus against the "
                                              "model or a peer; generate the activity corpus")
    actions = conf.add_subparsers(dest="conformance_action", metavar="{run,generate}",
                                  required=True, parser_class=type(conf))
    run = actions.add_parser("run", help="run fixtures against the model or an adapter")
    run.add_argument("paths", nargs="+", metavar="PATH",
                     help="fixture files or corpus folders (NAME.json, MANIFEST.txt checked "
                          "both ways; a folder with streams/ is read there)")
    who = run.add_mutually_exclusive_group()
    who.add_argument("--adapter", metavar="CMD",
                     help="the consumer: an adapter command line, or a shortcut as 'peer "
                          "matrix --adapter' takes them (model[:READING], ag-ui-client:pipeline, "
                          "assistant-ui ...)")
    who.add_argument("--model", nargs="?", const="draft", metavar="READING",
                     help="the reference model in this process under READING (default draft; "
                          "the default consumer)")
    lane = run.add_mutually_exclusive_group()
    lane.add_argument("--lane", metavar="NAME",
                      help="apply this lane's expectOverrides (typescript, dotnet ...)")
    lane.add_argument("--third-party", action="store_true",
                      help="the README's relaxations for a third-party client: warnings and "
                           "noWarnings, the era-* translation results and the admitted-gap "
                           "fixtures set aside; no lane's override used")
    out = run.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help="print the results as JSON")
    out.add_argument("--junit", metavar="FILE", help="write JUnit XML to FILE (a new file)")
    out.add_argument("--format", choices=("text", "json", "md"), default=None,
                     help="text (default), json, or md: the scope table of "
                          "docs/conformance.md (passed, argued, out of scope; model only)")
    run.add_argument("--wide", action="store_true",
                     help="each failed key on one line, unfolded (default: folded at word "
                          "boundaries within 120 columns, a longer word of data cut)")
    run.add_argument("--timeout", type=finite_float, default=DEFAULT_TIMEOUT,
                     help=f"seconds one answer may take (default {DEFAULT_TIMEOUT:g})")
    run.set_defaults(func=cmd_conformance)

    gen = actions.add_parser("generate", help="write the proposed activity corpus")
    gen.add_argument("--out", required=True, metavar="DIR",
                     help="a new or empty folder: streams/NAME.json, streams/MANIFEST.txt, "
                          "coverage.md")
    pick = gen.add_mutually_exclusive_group()
    pick.add_argument("--reading", help="generate verdicts under this reading (default draft)")
    pick.add_argument("--proposal", metavar="FILE",
                      help='a proposal file, as resolve reads it: {"name": ..., "pins": '
                           '{"Q2": "parent", ...}} (docs/resolve.md)')
    gen.add_argument("--official", metavar="DIR",
                     help="the official corpus, for the coverage table's last column")
    gen.set_defaults(func=cmd_conformance)


PARSERS = {"conformance": _add_conformance}
"""The parsers this module adds (see :data:`activity_check.cli.COMMANDS`)."""


def cmd_conformance(args) -> int:
    """Run ``conformance run`` or ``conformance generate`` (module docstring); raises
    UsageError (exit 2) for unusable input."""
    if args.conformance_action == "generate":
        return _generate(args)
    return _run(args)


def _run(args) -> int:
    from counterexamples.conformance.fixtures import FixtureError, load_fixtures
    from counterexamples.conformance.runner import (adapter_answers, model_answers,
                                                    result_lines, run_fixtures, summary,
                                                    to_junit)
    from counterexamples.peers.adapter import PeerError
    from counterexamples.peers.matrix import resolve_matrix_adapter
    from model.readings import ReadingError, parse_reading
    fmt = "json" if args.json else (args.format or "text")
    if not args.timeout > 0:
        raise UsageError("--timeout must be a positive number of seconds")
    try:
        fixtures = load_fixtures(args.paths)
    except FixtureError as exc:
        raise UsageError(str(exc)) from None
    if args.lane:
        lanes = sorted({lane for f in fixtures for lane in f.doc.get("expectOverrides", {})})
        if args.lane not in lanes:  # a misspelt lane would silently judge plain expect
            print(f"activity-check: note: --lane {args.lane}: no fixture here has overrides "
                  f"for this lane (lanes named: {', '.join(lanes) or 'none'}); each fixture's "
                  "expect is used as written", file=sys.stderr)
    label = args.adapter or f"model:{args.model or 'draft'}"
    in_process = args.adapter is None or args.adapter == "model" or \
        args.adapter.startswith("model:")
    if fmt == "md" and not in_process:
        raise UsageError("--format md is the model's scope table; it takes --model, not "
                         "--adapter")
    if in_process:
        option = "--model" if args.adapter is None else f"--adapter {named(args.adapter)}"
        text = args.model if args.adapter is None else (args.adapter.partition(":")[2] or "draft")
        try:
            reading = parse_reading(text or "draft")
        except ReadingError as exc:
            raise UsageError(f"{option}: {exc}") from None
        answers = model_answers(fixtures, reading)
    else:
        try:
            answers = adapter_answers(fixtures, resolve_matrix_adapter(args.adapter),
                                      args.timeout)
        except PeerError as exc:
            raise UsageError(str(exc)) from None
    # the scope table judges the model as the third-party client it is
    third_party = args.third_party or fmt == "md"
    if fmt == "md" and args.lane:
        raise UsageError("--format md judges with the third-party relaxations; not with --lane")
    results = run_fixtures(fixtures, answers, args.lane, third_party)
    counts = summary(results)
    failing = counts["failed"] + counts["error"]
    if fmt == "md":
        from counterexamples.conformance.scope import official_table, unargued
        sys.stdout.write(official_table(fixtures, results, answers))
        return 1 if unargued(fixtures, results, answers) else 0
    if args.junit:
        write_new_output(args.junit, to_junit(results, f"conformance {label}"), "--junit")
    if fmt == "json":
        print(dump({"consumer": label, "lane": args.lane, "thirdParty": args.third_party,
                    "summary": counts, "results": [r.to_json() for r in results]}))
    else:
        out = console(wide=True)  # folded here, at word boundaries, ids whole
        width = None if args.wide else TEXT_WIDTH
        for r in results:
            for line in result_lines(r, width):
                out.print(shown(line, None))
        # a count never folded apart from its label ('0 out of' / 'scope')
        items = [f"{counts['fixtures']} fixtures:", f"{counts['passed']} passed",
                 f"{counts['failed']} failed", f"{counts['error']} error",
                 f"{counts['relaxed']} set aside", f"{counts['keysNotObservable']} keys not "
                 "observable by"]
        out.print(fold_line(f"{items[0]} {', '.join(items[1:5])}; {items[5]} {shown(label)}",
                            width, keep=items))
    if in_process and failing:
        # the model is judged against its scope table: a fixture outside the model, or one
        # whose difference docs/conformance.md argues, is not a failure of the model
        # (and judged as the third-party client it is, as the scope table judges it: the
        # reference clients' warning texts are not asked of it, whatever --lane says)
        from counterexamples.conformance.scope import scope_counts
        judged = results if third_party and not args.lane else \
            run_fixtures(fixtures, answers, None, True)
        by_verdict = scope_counts(fixtures, judged, answers)
        if fmt != "json":
            items = [f"{n} {verdict}" for verdict, n in by_verdict.items()]
            console(wide=True).print(fold_line(
                "the model against its scope (docs/conformance.md; judged as a third-party "
                "client): " + ", ".join(items), None if args.wide else TEXT_WIDTH, keep=items))
        return 1 if by_verdict["unargued"] else 0
    return 1 if failing else 0


def _generate(args) -> int:
    from counterexamples.conformance.fixtures import FixtureError, load_fixtures
    from counterexamples.conformance.generate import (coverage_table, generate,
                                                      write_corpus)
    reading, label = None, "draft"
    if args.reading is not None:
        reading = reading_option(args.reading)
        label = reading.name or "draft"
    if args.proposal is not None:
        from counterexamples.report.resolve import load_proposal
        from properties.resolve import ProposalError
        try:  # the one proposal reader: bounded, strict JSON, its schema (docs/resolve.md)
            proposal = load_proposal(args.proposal)
        except ProposalError as exc:
            raise UsageError(f"--proposal {exc}") from None
        reading, label = proposal.reading, proposal.name
    official = []
    if args.official is not None:
        try:
            official = [f for f in load_fixtures([args.official])
                        if f.doc.get("area") == "activity"]
        except FixtureError as exc:
            raise UsageError(f"--official: {exc}") from None
    generated = generate(reading, label)
    table = coverage_table(generated, official)
    try:
        written = write_corpus(args.out, generated, table)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    except OSError as exc:
        raise UsageError(f"--out {args.out}: cannot write: {exc.strerror or exc}") from None
    out = console(wide=False)  # printed lines fold at word boundaries within 120 columns
    shipped = [g for g in generated if g.fixture]
    out.print(f"{len(shipped)} fixtures written to {shown(args.out)} ({len(written)} files); "
              f"{len(generated) - len(shipped)} clauses reported, not shipped:")
    for g in generated:
        if g.fixture is None:
            out.print(fold_line(f"  {g.clause}: {shown(g.note)}", TEXT_WIDTH, "    "))
    return 0
