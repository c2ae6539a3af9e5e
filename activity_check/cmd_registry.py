"""``activity-check clauses`` and ``activity-check readings``: the model's registries, the
clauses with what covers each (:func:`model.clauses.coverage`) and the knobs with their options
and the named readings (:mod:`model.readings`)."""
from __future__ import annotations

from rich.table import Table

from activity_check.cli import console, dump
from model.text import text_table, visible

__all__ = ["PARSERS", "cmd_clauses", "cmd_readings"]


def _add_clauses(sub) -> None:
    cl = sub.add_parser("clauses", help="the clause registry and its coverage")
    cl.add_argument("--json", action="store_true")
    cl.add_argument("--wide", action="store_true",
                    help="the table at full width (default: within 120 columns, folded at "
                         "word boundaries)")
    cl.set_defaults(func=cmd_clauses)


def _add_readings(sub) -> None:
    rd = sub.add_parser("readings", help="the knobs and named readings")
    rd.add_argument("--json", action="store_true")
    rd.add_argument("--wide", action="store_true",
                    help="the table at full width (default: within 120 columns, folded at "
                         "word boundaries)")
    rd.set_defaults(func=cmd_readings)


PARSERS = {"clauses": _add_clauses, "readings": _add_readings}
"""The parsers this module adds (see :data:`activity_check.cli.COMMANDS`)."""


def cmd_clauses(args) -> int:
    """``clauses``: the clause registry with what covers each clause (step branches, knobs,
    adversarial moves, properties); 0."""
    from model.clauses import coverage
    from properties.catalogue import coverage_table
    rows = coverage({"property": coverage_table()})
    if args.json:
        print(dump([{"id": c.clause.id, "nIds": list(c.clause.n_ids), "keyword": c.clause.keyword,
                     "actor": c.clause.actor, "page": c.clause.page, "section": c.clause.section,
                     "summary": c.clause.summary, "questions": list(c.clause.questions),
                     "coveredBy": {k: list(v) for k, v in c.covered_by.items()}}
                    for c in rows]))
        return 0
    wide = getattr(args, "wide", False)
    con = console(wide=wide)
    cells = []
    for c in rows:
        cov = "; ".join(f"{k}: {', '.join(v)}" for k, v in c.covered_by.items()) or "-"
        cells.append((c.clause.id, ",".join(c.clause.n_ids), c.clause.keyword, c.clause.actor,
                      f"{c.clause.page} {c.clause.section}", cov, c.clause.summary))
    names = ("id", "N", "keyword", "actor", "where", "covered by", "summary")
    if wide:
        table = Table(title=f"clause registry ({len(rows)} clauses)")
        for col in names:
            table.add_column(col, overflow="fold")
        for r in cells:
            table.add_row(*r)
        con.print(table)
    else:  # within TEXT_WIDTH, folded between words only (an id never breaks)
        print(f"clause registry ({len(rows)} clauses)")
        # the actor beside the keyword, and what covers the clause after its summary
        print("\n".join(text_table(
            [("id", "N", "keyword, actor", "where", "summary; covered by")] +
            [tuple(visible(v, None) for v in (i, n, f"{kw}, {actor}", where,
                                               f"{summary} Covered by {cov}."))
             for i, n, kw, actor, where, cov, summary in cells])))
    covered = sum(1 for c in rows if c.covered)
    scoped = sum(1 for c in rows if "out-of-scope" in c.covered_by)
    con.print(f"{covered} of {len(rows)} clauses covered by a step branch, knob or adversarial "
              f"move or property; {scoped} declared outside the model's scope")
    return 0


def _fit_columns(rows: list, room: int) -> list:
    """Content widths for a table's columns within ``room`` terminal columns (the console's
    width less borders and padding): each column as wide as its longest line, narrowed by
    :func:`model.text.narrowed` no further than its longest word, so rich folds cells between
    words and a clause id or a peer's package name (``@assistant-ui/react-ag-ui``) stays whole;
    rich's own share-out could leave a column narrower than such a word and cut it."""
    from model.text import columns, narrowed
    n = len(rows[0])
    widths = [max(columns(line) for r in rows for line in (r[i].splitlines() or [""]))
              for i in range(n)]
    floor = [max([columns(w) for r in rows for w in r[i].split()] + [1]) for i in range(n)]
    return narrowed(widths, floor, room)


def cmd_readings(args) -> int:
    """``readings``: the knobs (open questions), their options (each faithful or a deviation,
    :attr:`model.readings.Knob.deviations`), clauses and observed peer behaviour, and the named
    readings; 0."""
    from model.readings import KNOBS, PRESETS, deviation_note, reading_count
    if args.json:
        print(dump({"knobs": [{"id": k.id, "question": k.question, "draft": k.draft,
                               "options": [{"name": n, "meaning": d, "mark": k.mark(n),
                                            **({"against": k.deviation(n),
                                                "why": k.deviation_reason(n)}
                                               if k.deviation(n) else {})}
                                           for n, d in k.options],
                               "clauses": list(k.clauses),
                               "peers": {peer: option for peer, option in k.peers}}
                              for k in KNOBS],
                    "presets": {n: r.as_dict() for n, r in PRESETS.items()},
                    "readingCount": reading_count()}))
        return 0
    rows = []
    for k in KNOBS:
        options = "\n".join(f"{name}{' (draft)' if i == 0 else ''}"
                            + (f" (deviation, against {k.deviation(name)}: "
                               f"{k.deviation_reason(name)})" if k.deviation(name) else "")
                            + f": {meaning}" for i, (name, meaning) in enumerate(k.options))
        rows.append((k.id, k.question, options, ", ".join(k.clauses),
                     "\n".join(f"{option}{deviation_note(k.id, option)}: {', '.join(names)}"
                               if option else f"not observable: {', '.join(names)}"
                               for option, names in k.peer_groups()) or "-"))
    con = console(wide=getattr(args, "wide", False))
    heads = ("knob", "question", "options (draft first)", "clauses", "peers (recorded options)")
    # room: the width less a border before each column and after the last, and one space
    # either side of a cell but at the table's outer edges (pad_edge=False)
    widths = _fit_columns([heads] + rows, con.width - 3 * len(heads) + 1)
    table = Table(title=f"knobs ({reading_count():,} readings in all)", pad_edge=False)
    for col, width in zip(heads, widths):
        table.add_column(col, overflow="fold", width=width)
    for r in rows:
        table.add_row(*r)
    con.print(table)
    for name, r in PRESETS.items():
        diff = r.differences()
        con.print(f"preset {name}: " + (", ".join(f"{a}={b}" for a, b in diff.items()) or "(draft)"))
    return 0
