"""``activity-check spec clauses|coverage|diff FILE...``: the normative sentences of spec pages,
their match to the clause registry, and the clause-level difference between two versions of a
page (all the work is in :mod:`model.spec_text`)."""
from __future__ import annotations

import os
import sys

from rich.table import Table

from activity_check.cli import UsageError, cell, cell_lines, console, dump, shown
from model.text import TEXT_WIDTH, fold_line, visible

__all__ = ["PARSERS", "cmd_spec"]


def _add_spec(sub) -> None:
    sp = sub.add_parser("spec", help="the spec's normative sentences, their clauses, and "
                        "the clause-level difference between two versions of a page")
    sp.add_argument("action", choices=["clauses", "coverage", "diff"],
                    help="clauses PAGE.md: the normative sentences; coverage PAGE.md...: match "
                         "them to the clause registry; diff OLD.md NEW.md: what changed")
    sp.add_argument("files", nargs="+", metavar="FILE",
                    help="spec page(s): Markdown (.md); a JSON file is refused")
    sp.add_argument("--all", action="store_true",
                    help="with clauses: every sentence, not only the normative ones")
    sp.add_argument("--json", action="store_true")
    sp.add_argument("--wide", action="store_true",
                    help="tables and lines at full width (default: within 120 columns, folded "
                         "at word boundaries)")
    sp.set_defaults(func=cmd_spec)


PARSERS = {"spec": _add_spec}
"""The parsers this module adds (see :data:`activity_check.cli.COMMANDS`)."""


def cmd_spec(args) -> int:
    """``spec clauses|coverage|diff FILE...``: the normative sentences of spec pages, their match
    to the clause registry, and the clause-level difference between two versions of a page (see
    :mod:`model.spec_text`). Returns 0; a missing or unreadable file, or the wrong number of
    files, is a UsageError (exit 2)."""
    from model import spec_text
    from model.wire import TraceFormatError, read_text

    counts = {"clauses": (1, None), "coverage": (1, None), "diff": (2, 2)}
    least, most = counts[args.action]
    if len(args.files) < least or (most is not None and len(args.files) > most):
        raise UsageError(f"spec {args.action}: give exactly two files (OLD.md NEW.md)"
                         if args.action == "diff" else f"spec {args.action}: give a page file")
    for path in args.files:
        if not os.path.exists(path):
            raise UsageError(f"{path}: no such file")
        if not os.path.isfile(path):
            raise UsageError(f"{path}: not a file")
        try:
            text = read_text(path)  # bounded (docs/limits.md)
        except TraceFormatError as exc:
            raise UsageError(str(exc)) from None
        if _is_json(path, text):
            raise UsageError(f"{path}: a JSON file, not a spec page: spec {args.action} reads "
                             "Markdown pages (.md), such as the draft's")
    if args.action == "clauses":
        return _spec_clauses(args, spec_text)
    if args.action == "coverage":
        return _spec_coverage(args, spec_text)
    return _spec_diff(args, spec_text)


_JSON_NAMES = (".json", ".jsonl", ".ndjson")


def _is_json(path: str, text: str) -> bool:
    """Whether the file is JSON rather than a Markdown page: its name ends in ``.json``,
    ``.jsonl`` or ``.ndjson``, or its whole text is one JSON array or object (a trace, a
    finding, a summary), which a page never is."""
    import json
    if path.lower().endswith(_JSON_NAMES):
        return True
    body = text.strip()
    if not body or body[0] not in "[{":
        return False
    try:
        json.loads(body)
    except (ValueError, RecursionError):  # not JSON, or nested past the interpreter's depth
        return False
    return True


def _spec_clauses(args, spec_text) -> int:
    rows = []
    for path in args.files:
        rows.extend(spec_text.sentences(path) if args.all else spec_text.extract(path))
    if args.json:
        print(dump([s.to_json() for s in rows]))
        return 0
    what = "sentences" if args.all else "normative sentences"
    table = Table(title=f"{what} of {shown(', '.join(args.files), None)} ({len(rows)})")
    for col in ("page", "line", "section", "keyword", "sentence"):
        table.add_column(col, overflow="fold")
    for s in rows:
        table.add_row(cell(s.page), str(s.line), cell(s.section), s.keyword or "-",
                      cell(s.text, None))
    console(wide=getattr(args, "wide", False)).print(table)
    return 0


def _spec_coverage(args, spec_text) -> int:
    report = spec_text.coverage(args.files)
    if args.json:
        print(dump(report.to_json()))
        return 0
    con = console(wide=getattr(args, "wide", False))
    table = Table(title="normative sentences and the clauses they match "
                        f"({shown(', '.join(report.pages), None)})")
    from activity_check.cli import id_list_column
    for col in ("page", "line", "section", "keyword"):
        table.add_column(col, overflow="fold")
    id_list_column(table, "clauses", [", ".join(report.clauses_of(s)) or "none"
                                      for s in report.normative])  # ids whole (issue 39)
    table.add_column("sentence", overflow="fold")
    for s in report.normative:
        table.add_row(cell(s.page), str(s.line), cell(s.section), s.keyword,
                      cell(", ".join(report.clauses_of(s)) or "none",
                           style="" if report.clauses_of(s) else "bold red"), cell(s.text, None))
    con.print(table)
    if not report.normative:
        con.print(f"{len(report.sentences)} sentences and no normative one: is "
                  f"{shown(', '.join(args.files), None)} a spec page?")
    else:
        con.print(f"{len(report.sentences)} sentences, {len(report.normative)} normative; "
                  f"{len(report.normative) - len(report.unmatched)} of those match a clause "
                  f"({report.matched_share:.0%})")
    con.print("sentences with no entry: " + (", ".join(f"{shown(s.page)}:{s.line} {s.keyword}"
                                                       for s in report.unmatched) or "none"))
    con.print("entries whose sentence is gone: " + (", ".join(report.gone) or "none"))
    if report.unstated:
        con.print("entries recording what the page leaves unstated (no sentence by design): "
                  + ", ".join(report.unstated))
    con.print("keyword changes: " + (", ".join(
        f"{k.clause_id} ({k.clause_keyword} in the registry; line {k.sentence.line} has "
        f"{', '.join(k.sentence.keywords) or 'no key word'})" for k in report.keyword_changes)
        or "none"))
    return 0


def _spec_diff(args, spec_text) -> int:
    from properties.catalogue import coverage_table
    old, new = args.files
    if os.path.basename(old) != os.path.basename(new):
        print(f"activity-check: warning: {visible(old, None)} and {visible(new, None)} have "
              "different file names; the diff "
              "assumes they are two versions of one page", file=sys.stderr)
    report = spec_text.diff(old, new, coverage_table())
    if args.json:
        print(dump(report.to_json()))
        return 0
    con = console(wide=getattr(args, "wide", False))
    # the kinds counted as --json's "counts" counts them, so both say the same figures; the
    # line folded between words within the width, as the blocks below are
    kinds = ", ".join(f"{len(report.of_kind(k))} {k}"
                      for k in ("added", "removed", "changed", "moved") if report.of_kind(k))
    head = (f"{visible(old, None)} -> {visible(new, None)} (page {visible(report.page, None)}"
            f"): {report.unchanged} sentences unchanged, {len(report.changes)} differ"
            + (f" ({kinds}; {len(report.normative_changes)} normative, "
               f"{len(report.keyword_changes)} keyword changes)" if report.changes else ""))
    con.print(head if getattr(args, "wide", False) else fold_line(head, TEXT_WIDTH, "    "),
              markup=False, highlight=False)
    if not report.changes:
        con.print("no normative difference")
        return 0
    table = Table(title="differences")
    rows = []
    for c in report.changes:
        if c.keyword_change:
            kw = f"{', '.join(c.keyword_change[0]) or '-'} -> {', '.join(c.keyword_change[1]) or '-'}"
        else:
            kw = ", ".join((c.new or c.old).keywords) or "-"
        line = (f"{c.old.line}->{c.new.line}" if c.old and c.new
                else str((c.new or c.old).line))
        text = (c.new or c.old).text if c.kind != "changed" else \
            f"was: {c.old.text}\nnow: {c.new.text}"
        deps = "; ".join(f"{k}: {', '.join(v)}" for k, v in c.dependents.items()) or "-"
        rows.append((c.kind + ("" if c.normative else " (plain)"), line, c.section, kw,
                     ", ".join(c.clauses) or "-", deps, text))  # raw: escaped when shown
    if getattr(args, "wide", False):
        for col in ("change", "line", "section", "keyword", "clauses", "depends on them",
                    "sentence"):
            table.add_column(col, overflow="fold")
        for kind, line, section, kw, clauses, deps, text in rows:
            table.add_row(kind, line, cell(section), kw, clauses, deps, _lines(text))
        con.print(table)
    else:  # within TEXT_WIDTH: one block per change, folded between words (no id broken)
        for kind, line, section, kw, clauses, deps, text in rows:
            con.print(fold_line(f"{kind}, line {line}, {visible(section, None)}: {kw}",
                                TEXT_WIDTH, "    "),
                      markup=False, highlight=False)
            for label, value in (("clauses", clauses), ("depends on them", deps)):
                con.print(fold_line(f"  {label}: {value}", TEXT_WIDTH, "    "), markup=False,
                          highlight=False)
            for sentence in text.split("\n"):
                con.print(fold_line(f"  {visible(sentence, None)}", TEXT_WIDTH, "    "), markup=False,
                          highlight=False)
    if not report.normative_changes:
        con.print("no normative difference (plain wording only)")
    for k in report.knobs():  # what the changed clauses decide (issue 41)
        con.print(f"[bold]{shown(k['knob'])}[/bold] reads {shown(', '.join(k['clauses']))}: "
                  f"{shown(k['question'], None)}")
        for o in k["options"]:
            mark = " (recommended)" if o["option"] == k["recommended"] else ""
            con.print(f"  {shown(k['knob'])}={shown(o['option'])}{mark}: "
                      f"{shown(o['does'], None)}")
        con.print(f"  what the new wording's option does: activity-check resolve --pin "
                  f"{shown(k['knob'])}=OPTION")
    return 0


def _lines(text: str):
    """A sentence, or ``was: ...`` and ``now: ...`` on two lines, as one table cell (each line
    shown whole, its control characters escaped, never read as markup)."""
    return cell_lines(text.split("\n"), None)
