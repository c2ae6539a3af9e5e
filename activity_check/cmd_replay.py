"""``activity-check replay FILE``: the verdict of one trace file under a reading, and with
``--all-readings`` every class of readings grouped by the verdict it gives (see
:func:`model.verdict.evaluate` and :func:`model.verdict.partition`)."""
from __future__ import annotations

import json
import sys

from rich.table import Table

from activity_check.cli import (EXIT_USAGE, UsageError, add_input_limits, cell, console, dump,
                                reading_option, shown)
from model.text import visible

__all__ = ["PARSERS", "cmd_replay"]


def _add_replay(sub) -> None:
    rp = sub.add_parser("replay", help="the verdict of a trace file")
    rp.add_argument("file", help="JSON array of events, JSON lines, an object with "
                                 "'events', or a text/event-stream body (as lint reads it); - "
                                 "reads standard input")
    rp.add_argument("--reading", default="draft",
                    help="preset (draft, lenient, strict) or KNOB=OPTION,... (default draft)")
    rp.add_argument("--all-readings", action="store_true",
                    help="also group every reading by the verdict it gives")
    rp.add_argument("--json", action="store_true", help="print the verdict as JSON")
    add_input_limits(rp)
    rp.set_defaults(func=cmd_replay)


PARSERS = {"replay": _add_replay}
"""The parsers this module adds (see :data:`activity_check.cli.COMMANDS`)."""


def cmd_replay(args) -> int:
    """``replay FILE``: the verdict of one trace (from the file's ``initialState``, when it is an
    object form carrying one) under a reading, and with ``--all-readings`` every verdict class.
    ``FILE`` ``-`` reads the trace from standard input (named ``<stdin>`` in the output and
    errors, :func:`model.wire.load_trace`).
    Returns 0, or 2 for an unusable file or reading, or a trace that breaks at the wire
    boundary (the first malformed event, with file:line)."""
    from model.consumer import initial_state
    from model.events import Malformed
    from model.readings import describe_assignment
    from model.verdict import evaluate, partition
    from counterexamples.lint.inputs import read_trace
    from model.wire import TraceFormatError

    reading = reading_option(args.reading)
    try:
        trace = read_trace(args.file)
    except TraceFormatError as exc:
        raise UsageError(str(exc)) from None
    # A field case (an object with "events") may give the agent state the run input carried.
    start = initial_state(trace.meta["initialState"]) \
        if isinstance(trace.meta, dict) and trace.meta.get("initialState") is not None else None
    verdict = evaluate(trace.events, reading, start)
    out = verdict.to_json()
    out["reading"] = reading.name or "draft"
    if args.all_readings:
        out["readingClasses"] = [
            {"readings": [describe_assignment(a) for a in c.assignments],
             "includesDraft": c.contains_draft, "verdict": c.verdict.to_json()}
            for c in partition(trace.events, start)]
    if args.json:
        print(dump(out))
    else:
        _print_verdict(out, trace.file)
    if verdict.fatal is not None:
        at, fatal = verdict.fatal
        event = trace.events[at]
        if isinstance(event, Malformed):
            line = trace.line_of(at)
            where = f"{trace.file}:{line}" if line else trace.file
            print(f"activity-check: error: {visible(where, None)}: event {at} "
                  f"({visible(event.name)}): {visible(event.path)}: {visible(event.reason)} "
                  f"[{event.clause}]", file=sys.stderr)
            return EXIT_USAGE
    return 0


def _print_verdict(out: dict, file: str) -> None:
    """The verdict as text: every value from the trace shown as data (:func:`shown`,
    :func:`cell`: control characters escaped, markup not interpreted, long values cut; the
    JSON, ``--json``, keeps them whole)."""
    con = console(wide=False)  # fits 120 columns (or the terminal), as other text output
    con.print(f"[bold]{shown(file)}[/bold] under reading [bold]{shown(out['reading'])}[/bold]")
    table = Table(title="messages", show_lines=False)
    for col in ("id", "role", "activityType", "content", "owner", "metadata"):
        table.add_column(col)
    for m in out["messages"]:
        content = m.get("content")
        table.add_row(cell(m["id"]), cell(m["role"]), cell(m.get("activityType", "")),
                      cell(_json_head(content), None) if content is not None else "",
                      cell(m.get("subagentRunId", "")),
                      cell(_json_head(m["metadata"], ascii=True), None) if "metadata" in m else "")
    con.print(table)
    for w in out["warnings"]:
        about = f" {w['messageId']}" if w["messageId"] else ""
        con.print(f"warning at event {w['atEvent']}: {shown(w['code'])}{shown(about)} "
                  f"\\[{shown(w['clause'])}] {shown(w.get('detail', ''))}")
    if out["fatal"]:
        f = out["fatal"]
        con.print(f"[bold red]fatal[/bold red] at event {f['atEvent']}: {shown(f['code'])} "
                  f"\\[{shown(f['clause'])}] {shown(f.get('detail', ''))}")
    else:
        con.print("fatal: none")
    ids = ", ".join(visible(m["id"]) for m in out["runInput"])
    con.print(f"run: {shown(out['run'])}; next run input: {len(out['runInput'])} message(s)"
              + (f" ({shown(ids, None)})" if ids else ""))
    classes = out.get("readingClasses", [])
    facets = [_class_facets(c["verdict"]) for c in classes]
    # what tells the classes apart beyond activities and warnings: shown only where it differs
    differing = [k for k in ("order", "run", "runInput", "state")
                 if len({f[k] for f in facets}) > 1]
    for c, f in zip(classes, facets):
        more = "".join(f"; {_FACET_LABEL[k]} {f[k]}" for k in differing)
        con.print(f"verdict class ({'includes draft' if c['includesDraft'] else 'other'}): "
                  f"{'; '.join(c['readings'][:6])}{' ...' if len(c['readings']) > 6 else ''}"
                  f"\n    -> {shown(f['activities'], None)}; {shown(f['outcome'])}"
                  f"{shown(more, None)}")


_FACET_LABEL = {"order": "messages", "run": "run", "runInput": "run input", "state": "state"}


def _class_facets(v: dict) -> dict:
    """One verdict class's verdict in a few words: its activities (id, content, type, and the
    owner and metadata when it has them: Q1, Q2 or Q19 may differ in those alone), its warnings
    or fatal, and the message order, run, run input and agent state (printed only where classes
    differ in them)."""
    acts = []
    for m in v["messages"]:
        if m["role"] != "activity":
            continue
        text = (f"{visible(m['id'])}={_json_head(m.get('content'), ascii=True)}/"
                f"{visible(m.get('activityType'))}")
        if m.get("subagentRunId") is not None:
            text += f" owner {visible(m['subagentRunId'])}"
        if "metadata" in m:
            text += f" metadata {_json_head(m['metadata'], ascii=True)}"
        acts.append(text)
    outcome = (f"fatal {v['fatal']['code']}@{v['fatal']['atEvent']}" if v["fatal"] else
               "warnings " + (", ".join(f"{w['code']}@{w['atEvent']}" for w in v["warnings"])
                              or "none"))
    return {"activities": "; ".join(acts) or "no activity", "outcome": outcome,
            "order": ", ".join(visible(m["id"]) for m in v["messages"]) or "none",
            "run": visible(v.get("run")),
            "runInput": ", ".join(visible(m["id"]) for m in v.get("runInput", [])) or "none",
            "state": _json_head(v.get("state"), ascii=True)}


def _json_head(value, ascii: bool = False) -> str:
    """``value`` as compact-enough JSON for a table, at most :data:`model.text.DEFAULT_LIMIT`
    characters of it and a note of the rest (:func:`model.text.visible`): a 100 MB content
    object is encoded once, not laid out (the text table of such a trace took minutes)."""
    return visible(json.dumps(value, ensure_ascii=ascii))
