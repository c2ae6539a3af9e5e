"""The settlement table of the open questions (:func:`properties.questions.settle`) as text,
Markdown, JSON and one self-contained HTML page, and its witnesses as trace files (issue 19).

The page (:func:`render_html`) is what a reviewer opens without running anything: the table,
one row per question (``<tr id="Q11">``, so ``questions.html#Q11`` links to it), then one section
per question with its form, its witness as a sequence diagram and what each option ends with. A
diagram is the project's Mermaid export (:func:`counterexamples.report.export.to_mermaid` of the
witness as an ambiguity finding, unshrunk) drawn as an inline SVG, with the Mermaid source
beside it: the page loads nothing (no script, no CDN) and works offline. Each witness is also
written as a trace file, JSON lines of wire events, the format ``replay`` reads
(``questions/<Q-id>.jsonl``, linked from the page).

:func:`write_questions` writes the page, the witnesses and ``questions.json`` (the table, as
``questions --json`` prints it) into a directory; ``run`` writes the page and the witnesses into
its output, ``questions --out DIR`` all three.
"""
from __future__ import annotations

import html
import json
import os
import re
from typing import Optional, Sequence

from model.producer import PRODUCER_ONLY_KNOBS
from model.wire import dump_wire_jsonl

__all__ = ["COLUMNS", "render_text", "render_markdown", "render_html", "table_json",
           "witness_mermaid", "mermaid_svg", "recommendations", "write_questions",
           "witness_files", "PAGE", "TABLE_FILE"]

PAGE = "questions.html"
"""The page's file name in an output directory."""

TABLE_FILE = "questions.json"
"""The table's file name in a ``questions --out`` directory (its summary)."""

COLUMNS = ("question", "form", "knob", "length", "engine", "bfsLength", "z3Length",
           "proofDepth", "witnessFile", "title")
"""The columns of the text and Markdown tables, in order."""


def table_json(rows: Sequence[dict], depth: int) -> dict:
    """``{"tool", "command", "depth", "settled", "total", "questions": rows, "files"}``: the
    table as ``questions --json`` prints it and ``questions.json`` holds it (``files``: what a
    ``--out`` directory holds besides it, relative paths)."""
    from properties.questions import settled_count
    return {"tool": "activity-check", "command": "questions", "depth": depth,
            "settled": settled_count(rows), "total": len(rows), "questions": list(rows),
            "files": [PAGE] + witness_files(rows)}


def witness_files(rows: Sequence[dict]) -> list[str]:
    """The witness files of the rows that have one, relative to the output directory."""
    return [r["witnessFile"] for r in rows if r.get("witnessFile")]


def _cell(value) -> str:
    if value is None:
        return "-"
    if isinstance(value, list):
        return ",".join(str(v) for v in value) or "-"
    return str(value)


def _cells(row: dict, out_dir: Optional[str] = None, written: bool = True) -> list[str]:
    """The row's cells as text; the witness file as its path under ``out_dir`` when given,
    as written (relative) when ``written``, else ``-`` (nothing was written)."""
    out = []
    for c in COLUMNS:
        value = row[c]
        if c == "knob" and value is None:
            value = row["knobs"] or (row["proofs"] or None)
        if c == "witnessFile" and value is not None:
            value = os.path.join(out_dir, value) if out_dir else (value if written else None)
        out.append(_cell(value))
    return out


def not_written_note(rows: Sequence[dict]) -> str:
    """The line that says where the witnesses would go when none was written (``questions``
    without ``--out``): ``witness traces not written (N): questions --out DIR writes them as
    DIR/questions/<Q-id>.jsonl, with questions.json and questions.html``."""
    from properties.questions import QUESTIONS_DIR
    return (f"witness traces not written ({len(witness_files(rows))}): questions --out DIR "
            f"writes them as DIR/{QUESTIONS_DIR}/<Q-id>.jsonl, with {TABLE_FILE} and {PAGE}")


def recommendations(row: dict) -> list[dict]:
    """What this project recommends for the row's question (issue 41): one entry per knob,
    ``{"knob", "option", "important", "argument", "cites" (["page > section"]), "peers"
    ({peer: option})}`` from :data:`model.readings.RECOMMENDATIONS` and the knobs' recorded
    peers; a question without knob gives one entry with ``knob`` and ``option`` None."""
    from model.readings import KNOB_BY_ID, RECOMMENDATIONS
    out = []
    for kid in row["knobs"]:
        rec, knob = RECOMMENDATIONS["knobs"][kid], KNOB_BY_ID[kid]
        out.append({"knob": kid, "option": rec["option"], "important": rec["important"],
                    "argument": rec["argument"],
                    "cites": [f"{c['page']} > {c['section']}" for c in rec["cites"]],
                    "peers": dict(knob.peers)})
    if not row["knobs"]:
        rec = RECOMMENDATIONS["questions"].get(row["question"])
        if rec:
            out.append({"knob": None, "option": None, "important": rec["important"],
                        "argument": rec["argument"], "cites": [], "peers": {}})
    return out


def _recommendation_lines(rows: Sequence[dict], bullet: str) -> list[str]:
    lines = ["", "recommended (★: a starred question of the notes; peers: the options each "
             "recorded peer takes):"]
    for r in rows:
        for rec in recommendations(r):
            star = "★" if rec["important"] else ""
            what = f"{rec['knob']}={rec['option']}" if rec["knob"] else "(no knob)"
            peers = "; ".join(f"{p}: {o}" for p, o in rec["peers"].items())
            lines.append(f"{bullet}{r['question']}{star} {what}" +
                         (f" (peers: {peers})" if peers else ""))
    return lines


def render_text(rows: Sequence[dict], depth: int, out_dir: Optional[str] = None) -> str:
    """Aligned plain-text columns, then ``N of 25 questions settled (depth D)``. ``out_dir``:
    the directory the witnesses were written into (the ``witnessFile`` column then gives each
    file's path in it); None when none was written: the column shows ``-`` and a last line says
    where ``--out`` would put them (:func:`not_written_note`)."""
    from properties.questions import settled_count
    table = [list(COLUMNS)] + [_cells(r, out_dir, written=False) for r in rows]
    widths = [max(len(line[i]) for line in table) for i in range(len(COLUMNS) - 1)]
    lines = ["  ".join([c.ljust(w) for c, w in zip(line[:-1], widths)] + [line[-1]])
             for line in table]
    lines.append(f"{settled_count(rows)} of {len(rows)} questions settled (depth {depth})")
    if out_dir is None and witness_files(rows):
        lines.append(not_written_note(rows))
    lines += _recommendation_lines(rows, "  ")
    return "\n".join(lines) + "\n"


def render_markdown(rows: Sequence[dict], depth: int, out_dir: Optional[str] = None) -> str:
    """A Markdown table (``|`` in a cell escaped), then the settled count; ``out_dir`` as for
    :func:`render_text`."""
    from properties.questions import settled_count
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + " --- |" * len(COLUMNS)]
    for r in rows:
        lines.append("| " + " | ".join(c.replace("|", "\\|")
                                       for c in _cells(r, out_dir, written=False)) + " |")
    lines.append("")
    lines.append(f"{settled_count(rows)} of {len(rows)} questions settled (depth {depth})")
    if out_dir is None and witness_files(rows):
        lines.append("")
        lines.append(not_written_note(rows))
    lines += [line.replace("|", "\\|") for line in _recommendation_lines(rows, "- ")]
    return "\n".join(lines) + "\n"


# --- diagrams -----------------------------------------------------------------------------------

def witness_mermaid(row: dict) -> Optional[str]:
    """The row's witness as a Mermaid sequence diagram, or None for a row without one: for a
    split (forms A and B) the project's export of the witness as an unshrunk ambiguity finding
    (notes where the readings part); for a producer-side row, one arrow per event and a note
    with the conformance under each option."""
    if not row.get("witness"):
        return None
    from model.wire import parse_events
    events = parse_events(row["witness"])
    if row["form"] in ("A", "B"):
        from counterexamples.report.export import to_mermaid
        from counterexamples.findings import ambiguity_finding
        from properties.search.ambiguity import Witness
        from model.verdict import splits_of
        pair = splits_of(events).get(row["knob"])
        if pair is not None:
            return to_mermaid(ambiguity_finding(Witness(row["knob"], tuple(events), pair),
                                                shrink=False))
    from counterexamples.report.export import _event_label, _mermaid_text
    title = _mermaid_text(f"{row['question']}: {row['title']}")
    lines = ["sequenceDiagram", "    participant Producer", "    participant Consumer",
             f"    Note over Producer,Consumer: {title}"]
    for wire, event in zip(row["witness"], events):
        lines.append(f"    Producer->>Consumer: {_mermaid_text(_event_label(wire, event))}")
    verdicts = [f"{o['option']}: {_conformance(o)}" for o in row.get("options") or []]
    if verdicts:
        lines.append("    Note over Producer: " + "<br/>".join(_mermaid_text(v) for v in verdicts))
    return "\n".join(lines) + "\n"


_ENTITY = re.compile(r"#(\d+|[a-z]+);")
_NAMED = {"quot": '"', "lt": "<", "gt": ">", "amp": "&"}


def _unmermaid(text: str) -> str:
    """Mermaid text back to plain text (entity codes decoded)."""
    def one(m):
        code = m.group(1)
        return chr(int(code)) if code.isdigit() else _NAMED.get(code, m.group(0))
    return _ENTITY.sub(one, text)


def _wrap(text: str, width: int = 78) -> list[str]:
    out = []
    for part in text.split("<br/>"):
        part = _unmermaid(part)
        while len(part) > width:
            cut = part.rfind(" ", 0, width)
            cut = width if cut <= 0 else cut
            out.append(part[:cut])
            part = part[cut:].lstrip()
        out.append(part)
    return out


def mermaid_svg(source: str, marker: str = "head") -> str:
    """A Mermaid ``sequenceDiagram`` of the export's shape (participants Producer and
    Consumer, ``Producer->>Consumer:`` arrows, ``Note over ...:`` lines) drawn as an inline SVG:
    two lifelines, one arrow per event with its label, each note as a box on the consumer's
    side. Every text is escaped; other lines are ignored. ``marker``: the id of the arrowhead
    marker, unique per diagram on a page (an HTML id is the page's, not the SVG's)."""
    left, right, note_x, y = 90, 430, 450, 50
    parts = []
    for line in source.splitlines():
        line = line.strip()
        if line.startswith("Producer->>Consumer:"):
            label = _unmermaid(line.split(":", 1)[1].strip())
            parts.append(f'<text x="{left + 8}" y="{y}" class="label">{html.escape(label)}</text>')
            parts.append(f'<line x1="{left}" y1="{y + 6}" x2="{right}" y2="{y + 6}" '
                         f'class="arrow" marker-end="url(#{marker})"/>')
            y += 30
        elif line.startswith("Note over"):
            text = _wrap(line.split(":", 1)[1].strip())
            h = 16 * len(text) + 8
            parts.append(f'<rect x="{note_x}" y="{y - 12}" width="560" height="{h}" '
                         'class="note"/>')
            for i, t in enumerate(text):
                parts.append(f'<text x="{note_x + 6}" y="{y + 2 + 16 * i}" class="notetext">'
                             f'{html.escape(t)}</text>')
            y += h + 10
    height = y + 10
    head = (f'<svg xmlns="http://www.w3.org/2000/svg" width="1020" height="{height}" '
            f'viewBox="0 0 1020 {height}" role="img">'
            f'<defs><marker id="{marker}" markerWidth="8" markerHeight="8" refX="8" refY="4" '
            'orient="auto"><path d="M0,0 L8,4 L0,8 z"/></marker></defs>'
            f'<text x="{left - 30}" y="20" class="actor">Producer</text>'
            f'<text x="{right - 30}" y="20" class="actor">Consumer</text>'
            f'<line x1="{left}" y1="28" x2="{left}" y2="{height}" class="life"/>'
            f'<line x1="{right}" y1="28" x2="{right}" y2="{height}" class="life"/>')
    return head + "".join(parts) + "</svg>"


# --- the page -----------------------------------------------------------------------------------

_STYLE = """
body{font-family:system-ui,sans-serif;margin:2em}
table{border-collapse:collapse}td,th{border:1px solid #bbb;padding:3px 6px;vertical-align:top}
th{background:#eee}.form-A{background:#e6f4ea}.form-B{background:#fff4e0}
.form-C{background:#e8eefc}.form-none{background:#fde8e8}
pre{background:#f6f6f6;padding:6px;overflow-x:auto}
svg .label,svg .notetext{font:12px monospace}svg .actor{font:bold 14px sans-serif}
svg .arrow{stroke:#333;stroke-width:1.5}svg .life{stroke:#999;stroke-dasharray:4 3}
svg .note{fill:#fffbe6;stroke:#d9c76a}
"""


def _conformance(outcome: dict) -> str:
    return "conformant" if outcome["conformant"] else "breaks " + ", ".join(outcome["breaks"])


def _option_table(row: dict) -> str:
    options = row.get("options")
    if not options:
        return ""
    if row["form"] == "C":
        body = "".join(
            f"<tr><td>{html.escape(o['option'])}</td><td>{html.escape(o['reading'])}</td>"
            f"<td>{html.escape(_conformance(o))}</td></tr>" for o in options)
        return ("<table class='options'><tr><th>option</th><th>reading</th>"
                f"<th>the trace is</th></tr>{body}</table>")
    body = []
    for o in options:
        held = "; ".join(_message_text(m) for m in o["messages"]) or "(none)"
        body.append(f"<tr><td>{html.escape(o['option'])}</td><td>{html.escape(o['reading'])}</td>"
                    f"<td>{html.escape(held)}</td>"
                    f"<td>{html.escape(', '.join(o['warnings']) or '-')}</td>"
                    f"<td>{html.escape(o['fatal'] or '-')}</td>"
                    f"<td>{html.escape(o['run'])}</td></tr>")
    return ("<table class='options'><tr><th>option</th><th>reading</th><th>messages</th>"
            "<th>warnings</th><th>fatal</th><th>run</th></tr>" + "".join(body) + "</table>")


def _message_text(m: dict) -> str:
    """One held message in a few words: id, role, type, content, owner, metadata."""
    bits = [str(m.get("id")), f"({m.get('role')})"]
    for key in ("activityType", "content", "subagentRunId", "metadata"):
        if key in m:
            value = m[key]
            bits.append(value if isinstance(value, str) and key == "activityType" else
                        f"{key} {json.dumps(value, ensure_ascii=False)}" if key != "content"
                        else json.dumps(value, ensure_ascii=False))
    return " ".join(bits)


def _section(row: dict, written: bool = True) -> str:
    q = html.escape(row["question"])
    form = row["form"] or "not settled"
    out = [f"<section id='{q}-detail'><h2>{q}: {html.escape(row['title'])}</h2>",
           f"<p>Form <b>{html.escape(form)}</b>. {html.escape(row['note'])}."]
    if row.get("length") is not None:
        out.append(f" Shortest witness: {row['length']} events (engine {row['engine']}; "
                   f"BFS {_cell(row['bfsLength'])}, Z3 {_cell(row['z3Length'])}).")
    if row.get("proofDepth") is not None:
        out.append(f" Proof depth: {row['proofDepth']} events.")
    out.append("</p>")
    if row.get("readings"):
        out.append("<p>Readings compared: " + " vs ".join(
            f"<code>{html.escape(r)}</code>" for r in row["readings"]) + "</p>")
    source = witness_mermaid(row)
    if source is not None:
        f = html.escape(row["witnessFile"])
        # a producer-side question changes conformance, which lint shows; replay, the verdict
        how = f"activity-check lint {f}" if row.get("knob") in PRODUCER_ONLY_KNOBS \
            else f"activity-check replay {f} --all-readings"
        if written:
            out.append(f"<p>Witness trace: <a href='{f}'>{f}</a> "
                       f"(<code>{html.escape(how)}</code>)</p>")
        else:  # a page printed without --out: nothing to link to
            out.append(f"<p>Witness trace: not written (<code>activity-check questions --out "
                       f"DIR</code> writes it as <code>DIR/{f}</code>)</p>")
        out.append(mermaid_svg(source, f"head-{row['question']}"))
        out.append("<details><summary>Mermaid source</summary><pre>"
                   f"{html.escape(source)}</pre></details>")
    out.append(_option_table(row))
    for rec in recommendations(row):
        what = (f"<code>{html.escape(rec['knob'])}={html.escape(rec['option'])}</code>"
                if rec["knob"] else "no knob")
        peers = "; ".join(f"{html.escape(p)}: {html.escape(o)}" for p, o in rec["peers"].items())
        out.append(f"<p class='recommended'>Recommended{' (★)' if rec['important'] else ''}: "
                   f"{what}. {html.escape(rec['argument'])}"
                   + (f" ({html.escape('; '.join(rec['cites']))})" if rec["cites"] else "")
                   + (f" Peers: {peers}." if peers else "") + "</p>")
    out.append("<p><a href='#table'>back to the table</a></p></section>")
    return "".join(out)


def render_html(rows: Sequence[dict], depth: int, written: bool = True) -> str:
    """The self-contained page (see the module docstring): no script, no external resource.
    ``written``: the witness files are written beside the page (its links are relative to its
    directory); False for a page printed alone (``questions --format html`` without ``--out``),
    which then says, instead of linking them, where ``--out`` writes them."""
    from properties.questions import settled_count
    head = "".join(f"<th>{c}</th>" for c in COLUMNS)
    body = []
    for r in rows:
        cells = _cells(r, written=written)
        cells[0] = f"<a href='#{html.escape(r['question'])}-detail'>{html.escape(cells[0])}</a>"
        tds = "".join(f"<td>{c}</td>" if i == 0 else f"<td>{html.escape(c)}</td>"
                      for i, c in enumerate(cells))
        body.append(f"<tr id='{html.escape(r['question'])}' class='question "
                    f"form-{r['form'] or 'none'}'>{tds}</tr>")
    return ("<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
            "<title>activity-check: the open questions of the draft</title>"
            f"<style>{_STYLE}</style></head><body>"
            "<h1>The open questions of the draft, settled by the tool</h1>"
            f"<p>{settled_count(rows)} of {len(rows)} questions settled (depth {depth}). "
            "Form A: a knob whose options give different verdicts on a conformant trace; B: "
            "only after a producer violation; C: a bounded proof (Z3 or exhaustive) that no "
            "reading changes a consumer verdict, or for a producer-side question the shortest "
            "trace whose conformance an option changes.</p>"
            f"<table id='table'><tr>{head}</tr>{''.join(body)}</table>"
            + "".join(_section(r, written) for r in rows) + "</body></html>\n")


def write_questions(rows: Sequence[dict], out_dir: str, depth: int,
                    table: bool = False) -> list[str]:
    """Write :data:`PAGE` and every witness (``questions/<Q-id>.jsonl``, JSON lines of wire
    events) into the existing directory ``out_dir``, and with ``table`` also
    :data:`TABLE_FILE`. Returns the paths written, relative to ``out_dir``.

    Raises:
        OSError: a file cannot be written."""
    written = []
    for r in rows:
        if r.get("witnessFile"):
            os.makedirs(os.path.join(out_dir, os.path.dirname(r["witnessFile"])), exist_ok=True)
            _replace_file(out_dir, r["witnessFile"], dump_wire_jsonl(r["witness"]))
            written.append(r["witnessFile"])
    _replace_file(out_dir, PAGE, render_html(rows, depth))
    written.append(PAGE)
    if table:
        _replace_file(out_dir, TABLE_FILE, json.dumps(table_json(rows, depth), indent=2,
                                                      ensure_ascii=False) + "\n")
        written.append(TABLE_FILE)
    return written


def _replace_file(out_dir: str, rel: str, text: str) -> None:
    """Write ``out_dir/rel`` as a new file (a temporary one renamed over the name): a file an
    earlier output left there, carried into a staging directory as a hard link, is replaced,
    never written through."""
    path = os.path.join(out_dir, rel)
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(text)
    os.replace(tmp, path)
