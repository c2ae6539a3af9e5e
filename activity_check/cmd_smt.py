"""``activity-check smt QUERY``: bounded Z3 model checking of the ownership-and-replace fragment.

Queries (see :mod:`properties.smt`): ``reach`` (situations), ``vacuity`` (rules), ``consistency``
(event shapes), ``distinguish`` (reading pairs), ``prove`` (properties), and ``list`` (what each
query can be asked about). Every witness is a real AG-UI trace, replayed on the executable model
before it is printed. Exit 0 when the query ran (unsat is an answer), 2 for unusable arguments.
"""
from __future__ import annotations

import json
import math
import time
from contextlib import contextmanager

from activity_check.cli import UsageError, console, finite_float

__all__ = ["PARSERS", "cmd_smt", "QUERIES"]

QUERIES = ("reach", "vacuity", "consistency", "distinguish", "prove", "list")

MAX_DEPTH = 64
"""The deepest ``--depth`` accepted. The search goes one length at a time and stops at the first
witness or at ``--timeout``, so a deeper bound only ever adds time: questions with a witness
answer within 8 events, and proving that none exists reaches the default timeout from depth 16
to 24 (docs/smt.md, "Scaling"); past 64 every such subject would only run into its
timeout, one after the other."""


def _add_smt(sub) -> None:
    """Add the ``smt`` parser to the ``activity-check`` subparsers."""
    sm = sub.add_parser("smt", help="bounded Z3 model checking of the ownership and replace "
                        "fragment (reach, vacuity, consistency, distinguish, prove)")
    sm.add_argument("query", nargs="?",
                    help="reach | vacuity | consistency | distinguish | prove | list")
    sm.add_argument("--depth", type=int, default=8,
                    help="longest trace, in events, RUN_STARTED included (default 8, at most "
                         f"{MAX_DEPTH})")
    sm.add_argument("--reading", default="draft",
                    help="preset or KNOB=OPTION,... (default draft); 'any' for reach and prove "
                         "leaves the fragment's knobs to the solver")
    sm.add_argument("--versus", help="distinguish: the second reading (default: every other "
                                     "option of each knob in the fragment, one at a time)")
    sm.add_argument("--producer", default=None,
                    help="distinguish: the producer reading conformance is judged under: by "
                         "default --reading's own; any (widened: some reading of "
                         "Q2/Q4-opener), both (both consumer readings), or a reading")
    sm.add_argument("--subject", action="append", default=[],
                    help="only these situations, rules, shapes or properties (repeatable or "
                         "comma-separated; see 'smt list')")
    sm.add_argument("--traces", choices=("conformant", "any"),
                    help="reach, distinguish, prove: only conformant traces, or any trace of the "
                         "fragment (default: conformant; any for prove)")
    sm.add_argument("--timeout", type=finite_float, default=60.0,
                    help="seconds per subject before answering unknown (default 60); a query "
                         "asks each of its subjects in turn, so it takes at most that times "
                         "the number of subjects (twice for vacuity's consumer rules)")
    sm.add_argument("--json", action="store_true", help="print the answers as JSON")
    sm.set_defaults(func=cmd_smt)


PARSERS = {"smt": _add_smt}
"""The parsers this module adds (see :data:`activity_check.cli.COMMANDS`)."""


def _reading(text: str, allow_any: bool, option: str = "--reading"):
    """Parse the reading ``option`` gives; refuse one the encoding cannot answer for (a knob
    outside the fragment departs from draft), naming ``option``."""
    from model.readings import parse_reading
    from properties.smt.queries import require_fragment
    if allow_any and text.strip() == "any":
        return None
    try:
        reading = parse_reading(text)
        require_fragment(reading)
    except ValueError as exc:  # ReadingError is a ValueError
        raise UsageError(f"{option}: {exc}") from None
    return reading


def _subjects(args, known: tuple[str, ...]) -> list[str]:
    chosen = [s.strip() for item in args.subject for s in item.split(",")]
    if "" in chosen:
        raise UsageError(f"--subject: empty subject for {args.query}; subjects: "
                         f"{', '.join(known)}")
    unknown = [s for s in chosen if s not in known]
    if unknown:
        raise UsageError(f"unknown subject {unknown[0]!r} for {args.query}; "
                         f"known: {', '.join(known)}")
    return chosen or list(known)


def cmd_smt(args) -> int:
    """Run one query; print a table or (``--json``) ``{"query", "depth", "world", "answers":
    [...], "seconds"}``. Raises UsageError for unusable arguments."""
    from properties.smt.world import DEFAULT_WORLD

    if args.query is None:  # 'smt --depth 2': argparse said only that a 'query' is required
        raise UsageError(f"smt needs a query first: {' | '.join(QUERIES)} ('smt list' "
                         "names their subjects)")
    if args.query not in QUERIES:
        raise UsageError(f"unknown query {args.query!r}; queries: {', '.join(QUERIES)}")
    if args.query == "list":
        return _list(args)
    if not 1 <= args.depth <= MAX_DEPTH:
        raise UsageError(f"--depth must be from 1 to {MAX_DEPTH}, got {args.depth}")
    if math.isnan(args.timeout) or args.timeout <= 0 or math.isinf(args.timeout):
        raise UsageError("--timeout must be a positive number of seconds")
    if args.traces and args.query in ("vacuity", "consistency"):
        raise UsageError(f"--traces does not apply to {args.query}")
    if args.versus and args.query != "distinguish":
        raise UsageError("--versus applies to distinguish only")
    if args.query == "distinguish" and args.subject:
        raise UsageError("distinguish takes --versus, not --subject")
    started = time.monotonic()
    reading = _reading(args.reading, allow_any=args.query in ("reach", "prove"))
    answers = _answers(args, reading, DEFAULT_WORLD)
    seconds = time.monotonic() - started
    if args.json:
        print(json.dumps({"query": args.query, "depth": args.depth,
                          "world": DEFAULT_WORLD.to_json(),
                          "answers": [a.to_json() for a in answers],
                          "seconds": round(seconds, 3)}, indent=2, ensure_ascii=False))
        return 0
    _print(args.query, args.depth, answers, seconds)
    return 0


def _answers(args, reading, world) -> list:
    """Ask the query of ``args`` (its options already checked) under ``reading`` in ``world``:
    one answer per subject (per reading pair for ``distinguish``), with a progress line on
    stderr (:func:`_progress`). Raises UsageError for a ``--producer`` or ``--versus`` reading
    the fragment cannot answer for."""
    from properties.smt import queries as q

    depth, timeout = args.depth, args.timeout
    if args.query == "distinguish":
        conformant = (args.traces or "conformant") == "conformant"
        # by default the producer reads the draft as --reading does: a witness must keep the
        # reading's own producer rules (Q2, Q4-opener); --producer any widens it
        producer = (args.producer or "").strip() or reading
        if isinstance(producer, str) and producer not in ("any", "both"):
            producer = _reading(producer, allow_any=False, option="--producer")
        pairs = _pairs(args, reading, q)
        with _progress(args.query, len(pairs), timeout) as tell:
            return [tell(q.pair_label(a, b), lambda: q.distinguishing(
                a, b, depth, world, producer, conformant, timeout)) for a, b in pairs]
    subjects = _subjects(args, q.SUBJECTS[args.query])
    if args.query in ("vacuity", "consistency"):
        # one call: the subjects share one unrolling (asked apart, their answers would differ)
        ask = q.vacuity if args.query == "vacuity" else q.consistency
        rounds = 2 if args.query == "vacuity" else 1
        with _progress(args.query, len(subjects), rounds * timeout) as tell:
            return tell(f"{len(subjects)} subjects",
                        lambda: ask(depth, reading, world, subjects, timeout), len(subjects))
    if args.query == "reach":
        conformant = (args.traces or "conformant") == "conformant"
        ask = lambda s: q.reachability(s, depth, reading, world, conformant, timeout)  # noqa: E731
    else:
        conformant = (args.traces or "any") == "conformant"
        ask = lambda s: q.bounded_proof(s, depth, reading, world, conformant, timeout)  # noqa: E731
    with _progress(args.query, len(subjects), timeout) as tell:
        return [tell(s, lambda s=s: ask(s)) for s in subjects]


def _pairs(args, reading, q) -> list:
    """The reading pairs ``distinguish`` asks about: ``(--reading, --versus)``, or every other
    option of each knob against ``--reading``. Raises UsageError."""
    if not args.versus:
        return q.knob_pairs(reading)
    versus = _reading(args.versus, allow_any=False, option="--versus")
    if versus == reading:
        raise UsageError(f"--versus: the two readings are the same "
                         f"({q.reading_label(reading)})")
    return [(reading, versus)]


@contextmanager
def _progress(query: str, total: int, per_subject: float):
    """A transient progress line on stderr while a query runs: ``tell(subject, ask, count=1)``
    shows ``subject`` as the one being asked, calls ``ask()``, counts ``count`` subjects done
    and returns what ``ask`` returned. The line says how long the rest can take at most
    (``per_subject`` seconds each: ``--timeout``), so that a deep query is seen to go on."""
    from activity_check.cli import progress_bar, shown

    with progress_bar() as bar:
        task = bar.add_task(f"smt {query}", total=total)
        done = [0]

        def tell(subject: str, ask, count: int = 1):
            left = (total - done[0]) * per_subject
            bar.update(task, description=f"smt {query}: {shown(subject)} (at most "
                                         f"{left:,.0f} s more)")
            answer = ask()
            done[0] += count
            bar.update(task, completed=done[0])
            return answer

        yield tell


_STATUS = {
    "reach": {"sat": "reachable", "unsat": "unreachable", "unknown": "unknown"},
    "vacuity": {"sat": "fires", "unsat": "never fires", "unknown": "unknown"},
    "consistency": {"sat": "admitted", "unsat": "excluded", "unknown": "unknown"},
    "distinguish": {"sat": "differ", "unsat": "agree", "unknown": "unknown"},
    "prove": {"sat": "VIOLATED", "unsat": "proved", "unknown": "unknown"},
}


def _print(query: str, depth: int, answers, seconds: float) -> None:
    from rich.markup import escape
    from rich.table import Table

    con = console(wide=False)  # fits 120 columns (or the terminal), as other text output
    table = Table(title=f"smt {query}, traces up to {depth} events", show_lines=False)
    for col in ("subject", "answer", "length", "seconds", "detail"):
        table.add_column(col)
    for a in answers:
        detail = ""
        if query == "vacuity":
            any_trace = a.detail.get("anyTrace")
            detail = f"{a.detail['actor']} {a.detail['keyword']}"
            if any_trace and (a.status != "sat" or any_trace["length"] != a.length):
                detail += f"; any trace: {_STATUS['vacuity'][any_trace['status']]}" + (
                    f" ({any_trace['length']})" if any_trace["length"] else "")
            if a.detail.get("note"):
                detail += f"; {a.detail['note']}"
        elif query == "distinguish" and a.status == "sat":
            detail = ", ".join(a.detail["differences"])
        elif a.detail.get("note"):
            detail = a.detail["note"]
        if a.detail.get("knobs"):
            detail = (detail + "; " if detail else "") + "reading " + ",".join(
                f"{k}={v}" for k, v in a.detail["knobs"].items())
        table.add_row(escape(a.subject), _STATUS[query][a.status], str(a.length or ""),
                      f"{a.seconds:.2f}", escape(detail))
    con.print(table)
    for a in answers:
        if a.witness is None:
            continue
        con.print(f"[bold]{a.subject}[/bold] ({_STATUS[query][a.status]}, "
                  f"{a.witness.length} events):")
        for i, line in enumerate(a.witness.to_json()["events"]):
            con.print(f"  {i}. {escape(line)}")
    con.print(f"{len(answers)} answer(s) in {seconds:.2f} s; every witness replayed on the "
              "executable model")


def _list(args) -> int:
    from properties.smt import queries as q
    from properties.smt.encoding import FRAGMENT_KNOBS, OUTSIDE_KNOBS
    out = {"reach": list(q.SUBJECTS["reach"]), "vacuity": list(q.SUBJECTS["vacuity"]),
           "consistency": list(q.SUBJECTS["consistency"]), "prove": list(q.SUBJECTS["prove"]),
           "knobs": list(FRAGMENT_KNOBS), "outsideKnobs": OUTSIDE_KNOBS}
    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    from model.text import TEXT_WIDTH, fold_line
    for key, items in out.items():  # folded at spaces within 120 columns, ids whole
        if isinstance(items, dict):
            print(f"{key}:")
            for k, why in items.items():
                print(fold_line(f"  {k}: {why}", TEXT_WIDTH, "      "))
        else:
            print(fold_line(f"{key}: {', '.join(items)}", TEXT_WIDTH, "    "))
    return 0
