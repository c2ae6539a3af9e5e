"""``activity-check peer matrix``: every peer against the same traces, in one table.

``peer matrix [--adapter CMD]... [--out DIR] [--format md|html|json] [--seed N]``: each peer
(default: every built-in peer that can run here, :data:`counterexamples.peers.matrix.MATRIX_PEERS`;
the others are listed as not run, with the reason) is searched over the committed corpus, the
probes and seeded generated traces without a time budget; the matrix says per knob which option
each peer behaves as, per peer its divergences with their clauses and findings, and the peers'
versions. All the work is in :mod:`counterexamples.peers.matrix`; this module only wires it to the
command line (hooked into ``peer`` by :mod:`activity_check.cmd_peer`).
"""
from __future__ import annotations

import math
import os

from activity_check.cli import (UsageError, add_generation_options, console, finite_float,
                                prepare_out, shown, write_out)

__all__ = ["add_matrix", "cmd_matrix", "MATRIX_SUMMARY"]

MATRIX_SUMMARY = "matrix.json"


def add_matrix(actions) -> None:
    """Add the ``matrix`` subaction to ``peer``'s subparsers (``actions``)."""
    matrix = actions.add_parser(
        "matrix", help="every peer against the corpus and a seeded search, in one table")
    matrix.add_argument("--adapter", action="append", metavar="CMD", default=None,
                        help="a peer (repeatable; default: every built-in peer that can run "
                             "here): a shortcut (ag-ui-client:reducer, ag-ui-client:pipeline, "
                             "ag-ui-client@0.0.59:reducer, ag-ui-client@0.0.59:pipeline, "
                             "assistant-ui, tanstack-ai, copilotkitnext-core, copilotkit, "
                             "ag-ui-protocol, model[:READING]) or "
                             "an adapter command line")
    matrix.add_argument("--out", metavar="DIR",
                        help="write matrix.json, matrix.md, matrix.html and findings/ here (a "
                             "new or empty directory, or an earlier matrix output)")
    matrix.add_argument("--format", choices=("md", "html", "json"), default=None,
                        help="print the matrix in this form (default: md without --out, "
                             "nothing but where it was written with --out)")
    add_generation_options(matrix, examples=100, bfs_depth=3, per="per peer")
    matrix.add_argument("--timeout", type=finite_float, default=10.0,
                        help="seconds one answer may take (default 10)")
    matrix.add_argument("--official", metavar="DIR",
                        help="the official AG-UI conformance corpus every peer is run through "
                             "with the third-party relaxations (default: the one found beside "
                             "the checkout, shared/data/ag-ui-conformance/draft)")
    matrix.add_argument("--no-conformance", action="store_true",
                        help="leave out the conformance corpora (official and generated)")
    matrix.set_defaults(func=cmd_matrix)


def _matrix_files(previous: dict):
    """The files an earlier matrix output wrote: those it lists, and its Markdown and page,
    which every matrix output writes (one written before they were listed does not list
    them); None when it is not a matrix output."""
    if previous.get("command") != "peer matrix":
        return None
    files = previous.get("files", [])
    return (files if isinstance(files, list) else []) + ["matrix.md", "matrix.html"]


def _corpora(args, err) -> dict:
    """The conformance corpora every peer is also run through, both with the third-party
    relaxations (every peer is a third-party client of both; the generated corpus's SHOULD-level
    warnings are set aside as the official one's are): the official one (``--official``, else
    the one found beside the checkout) and the generated activity corpus; none with
    ``--no-conformance``. UsageError for an unusable ``--official``."""
    if args.no_conformance:
        return {}
    from counterexamples.conformance.fixtures import FixtureError, load_fixtures, official_corpus
    from counterexamples.conformance.generate import generated_fixtures
    corpora = {}
    path = args.official or official_corpus()
    if path is None:
        err.print("not run: the official conformance corpus (none found; give --official DIR)")
    else:
        try:
            corpora["official"] = (load_fixtures([path]), True)
        except FixtureError as exc:
            raise UsageError(f"--official: {exc}") from None
    corpora["generated"] = (generated_fixtures(), True)
    return corpora


def cmd_matrix(args) -> int:
    """Run ``peer matrix``: 0 when it ran (divergences are data); UsageError (exit 2) for an
    unusable adapter or option, or an ``--out`` that cannot be written."""
    from counterexamples.peers.matrix import (build_matrix, default_adapters, render_html,
                                        render_markdown, write_matrix)
    from counterexamples.peers.adapter import PeerError
    if args.examples < 0 or args.bfs_depth < 0:
        raise UsageError("--examples and --bfs-depth must be 0 or more")
    if math.isnan(args.timeout) or args.timeout <= 0:
        raise UsageError("--timeout must be a positive number of seconds")
    adapters, skipped = (args.adapter, []) if args.adapter else default_adapters()
    if not adapters:
        raise UsageError("no peer can run here: " + "; ".join(f"{a}: {r}" for a, r in skipped))
    plan = prepare_out(args.out, MATRIX_SUMMARY, "'activity-check peer matrix'",
                       _matrix_files) if args.out else None
    err = console(stderr=True)
    for adapter, reason in skipped:
        err.print(f"not run: {shown(adapter)}: {shown(reason)}")
    corpora = _corpora(args, err)
    try:
        matrix = build_matrix(adapters, seed=args.seed, stateful=args.examples,
                              bfs_depth=args.bfs_depth, timeout=args.timeout, skipped=skipped,
                              progress=lambda label: err.print(f"searching {shown(label)} ..."),
                              corpora=corpora)
    except (PeerError, ValueError) as exc:
        raise UsageError(str(exc)) from None
    doc = matrix.to_json()
    if plan is not None:
        with write_out(plan) as staging:
            write_matrix(staging, matrix, doc)
        err.print(f"written to {shown(os.path.join(args.out, MATRIX_SUMMARY))}, matrix.md, "
                  "matrix.html and findings/")
    form = args.format or (None if plan is not None else "md")
    if form == "json":
        from activity_check.cli import dump
        print(dump(doc))
    elif form == "md":
        print(render_markdown(doc))
    elif form == "html":
        print(render_html(doc), end="")
    return 0
