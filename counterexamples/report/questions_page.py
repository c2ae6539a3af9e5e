"""The settlement table of the open questions (:func:`properties.questions.settle`) as text,
Markdown, JSON and one self-contained HTML page, and its witnesses as trace files (issue 19).

The page (:func:`render_html`) is what a reviewer opens without running anything: the table,
one row per question (``<tr id="row-Q11">``), then one section per question (``<section
id="Q11">``, so ``questions.html#Q11`` lands on it) saying in words what settles it
(:func:`settlement_text`), its witness as a sequence diagram and what each option ends with. A
diagram compares exactly the readings of the option table
(:func:`counterexamples.report.export.compare_mermaid`), drawn as an inline SVG, with the witness's
JSON lines beside it: the page loads nothing (no script, no CDN) and works offline. Each witness is also
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
from model.readings import deviation_note
from model.text import TEXT_WIDTH, fold_words, text_table
from model.wire import dump_wire_jsonl

__all__ = ["COLUMNS", "render_text", "render_markdown", "render_html", "table_json",
           "witness_mermaid", "mermaid_svg", "recommendations", "write_questions",
           "witness_files", "PAGE", "TABLE_FILE", "settlement_text", "recommended_html",
           "HTML_COLUMNS"]

PAGE = "questions.html"
"""The page's file name in an output directory."""

TABLE_FILE = "questions.json"
"""The table's file name in a ``questions --out`` directory (its summary)."""

COLUMNS = ("question", "form", "knob", "length", "engine", "bfsLength", "z3Length",
           "proofDepth", "witnessFile", "title")
"""The columns of the text and Markdown tables, in order."""


def table_json(rows: Sequence[dict], depth: int, written: bool = True) -> dict:
    """``{"tool", "command", "depth", "settled", "total", "questions": rows, "files"}``: the
    table as ``questions --json`` prints it and ``questions.json`` holds it (``files``: what a
    ``--out`` directory holds besides it, relative paths; empty when ``written`` is False, the
    table printed with no ``--out``, so that it names no file that is not there; each row's
    ``witnessFile`` is where ``--out`` puts its witness)."""
    from properties.questions import settled_count
    return {"tool": "activity-check", "command": "questions", "depth": depth,
            "settled": settled_count(rows), "total": len(rows), "questions": list(rows),
            "files": [PAGE] + witness_files(rows) if written else []}


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
    ({peer: option}), "peerGroups" ([(option or None for not observable, [peer])])}`` from
    :data:`model.readings.RECOMMENDATIONS` and the options recorded for every peer of the
    matrix (:meth:`model.readings.Knob.peer_groups`); a question without knob gives one entry
    with ``knob`` and ``option`` None."""
    from model.readings import KNOB_BY_ID, RECOMMENDATIONS
    out = []
    for kid in row["knobs"]:
        rec, knob = RECOMMENDATIONS["knobs"][kid], KNOB_BY_ID[kid]
        out.append({"knob": kid, "option": rec["option"], "important": rec["important"],
                    "argument": rec["argument"],
                    "cites": [f"{c['page']} > {c['section']}" for c in rec["cites"]],
                    "peers": dict(knob.peers), "peerGroups": knob.peer_groups()})
    if not row["knobs"]:
        rec = RECOMMENDATIONS["questions"].get(row["question"])
        if rec:
            out.append({"knob": None, "option": None, "important": rec["important"],
                        "argument": rec["argument"], "cites": [], "peers": {},
                        "peerGroups": []})
    return out


def peers_text(rec: dict) -> str:
    """The peers of a recommendation entry grouped by the option each takes: ``"merge:
    @ag-ui/client 1.0.0 reducer, ...; not observable: ..."``, a deviation named as such
    (:func:`model.readings.deviation_note`); empty without peers."""
    return "; ".join((f"{option}{deviation_note(rec['knob'], option)}" if option
                      else "not observable") + f": {', '.join(names)}"
                     for option, names in rec["peerGroups"])


def _recommendation_lines(rows: Sequence[dict], bullet: str,
                          width: Optional[int] = None) -> list[str]:
    """The recommendations block: a heading line, one item per knob (``bullet`` first; folded
    at word boundaries to ``width`` columns when given, a peer's name, package, version and
    mode, never broken: ``@tanstack/ai 0.58.0``), and an empty line."""
    lines = [""] + fold_words("recommended (★: a starred question of the notes; peers: the "
                              "option each peer of the matrix was recorded to take, "
                              "model/data/peer_options.json):", width, "  ")
    for r in rows:
        for rec in recommendations(r):
            star = "★" if rec["important"] else ""
            what = f"{rec['knob']}={rec['option']}" if rec["knob"] else "(no knob)"
            peers = peers_text(rec)
            line = f"{bullet}{r['question']}{star} {what}" + (f" (peers: {peers})" if peers
                                                               else "")
            names = [n for _, group in rec["peerGroups"] for n in group]
            lines += fold_words(line, width, " " * (len(bullet) + 2), keep=names)
    return lines + [""]


def render_text(rows: Sequence[dict], depth: int, out_dir: Optional[str] = None,
                wide: bool = False) -> str:
    """Aligned plain-text columns, then ``N of 25 questions settled (depth D)``, within
    :data:`~model.text.TEXT_WIDTH` columns: long cells (the title, a list of properties, now
    ``a, b``) fold at word boundaries, no id is broken (:func:`model.text.text_table`); ``wide``
    (``--wide``): the full table, one line a row. ``out_dir``: the directory the witnesses were
    written into (the ``witnessFile`` column then gives each file: its name, the folder
    ``out_dir/questions`` named once on a last line; with ``wide`` its whole path); None when none
    was written: the column shows ``-`` and a last line says where ``--out`` would put them
    (:func:`not_written_note`)."""
    from properties.questions import settled_count
    width = None if wide else TEXT_WIDTH
    from properties.questions import QUESTIONS_DIR
    # folded, the witness file column gives each file's name in DIR/questions (named once,
    # below): a path in every cell would push the table past the width (issue 39 item 5)
    relative = out_dir is not None and not wide

    def shown_cell(name: str, c: str) -> str:
        if name == "knob":
            return c.replace(",", ", ")
        return os.path.basename(c) if name == "witnessFile" and relative else c
    # the headers as words (bfsLength: "bfs length"), so that they too fold at a space
    table = [[re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", c).lower() for c in COLUMNS]] + \
        [[shown_cell(name, c)
          for name, c in zip(COLUMNS, _cells(r, None if relative else out_dir,
                                             written=relative))]
         for r in rows]
    lines = text_table(table, width)
    lines += _recommendation_lines(rows, "  ", width)
    lines += fold_words(f"{settled_count(rows)} of {len(rows)} questions settled (depth {depth})",
                  width)
    if out_dir is None and witness_files(rows):
        lines += fold_words(not_written_note(rows), width, "  ")
    elif relative and witness_files(rows):
        lines += fold_words(f"witness files (the witness file column): in "
                            f"{os.path.join(out_dir, QUESTIONS_DIR)}", width, "  ")
    return "\n".join(lines) + "\n"


def render_markdown(rows: Sequence[dict], depth: int, out_dir: Optional[str] = None) -> str:
    """A Markdown table (``|`` in a cell escaped), then the settled count; ``out_dir`` as for
    :func:`render_text`."""
    from properties.questions import settled_count
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + " --- |" * len(COLUMNS)]
    for r in rows:
        lines.append("| " + " | ".join(c.replace("|", "\\|")
                                       for c in _cells(r, out_dir, written=False)) + " |")
    lines += [line.replace("|", "\\|") for line in _recommendation_lines(rows, "- ")]
    lines.append(f"{settled_count(rows)} of {len(rows)} questions settled (depth {depth})")
    if out_dir is None and witness_files(rows):
        lines.append("")
        lines.append(not_written_note(rows))
    return "\n".join(lines) + "\n"


# --- diagrams -----------------------------------------------------------------------------------

def witness_mermaid(row: dict) -> Optional[str]:
    """The row's witness as a Mermaid sequence diagram, or None for a row without one: for a
    split (forms A and B) the witness under each option of the row's knob, labelled as the
    option table labels them (:func:`properties.questions.option_outcomes`' ``label``), with a
    note wherever the options part (:func:`counterexamples.report.export.compare_mermaid`); for
    a producer-side row, one arrow per event and a note with the conformance under each
    option. The diagram names no finding: the page links the run's finding of the knob, where
    the output holds one, by its file."""
    if not row.get("witness"):
        return None
    from counterexamples.report.export import compare_mermaid
    title = f"{row['question']} witness: " + " vs ".join(compared(row))
    if row["form"] in ("A", "B") and row.get("options"):
        from model.readings import parse_reading
        return compare_mermaid(title, row["witness"], [
            (o.get("label") or o["option"], parse_reading(o.get("label") or
                                                          f"{row['knob']}={o['option']}"))
            for o in row["options"]])
    lines = compare_mermaid(title, row["witness"], []).splitlines()
    verdicts = [f"{row['knob']}={o['option']}: {_conformance(o)}"
                for o in row.get("options") or []]
    if verdicts:
        from counterexamples.report.export import _mermaid_text
        lines.append("    Note over Producer: " + "<br/>".join(_mermaid_text(v)
                                                                for v in verdicts))
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
    """Plain lines of at most ``width`` characters: ``<br/>`` breaks, then word boundaries
    (a word longer than ``width`` is cut)."""
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


CHAR_PX = 7.3
"""The advance of one character of the diagrams' 12 px monospace font, in pixels (a little over
what browsers give it, so that a label never reaches past its measure)."""

ACTOR_PX = 72
"""The width of the bold 14px label "Consumer" over the consumer's lifeline (pixels, with a
margin): the diagram is at least that wide right of the label's start, so that a diagram
without notes does not clip it."""

NOTE_CHARS = 60
"""The widest line of a diagram's note, in characters (longer ones are folded)."""


def mermaid_svg(source: str, marker: str = "head") -> str:
    """A Mermaid ``sequenceDiagram`` of the export's shape (participants Producer and
    Consumer, ``Producer->>Consumer:`` arrows, ``Note over ...:`` lines) drawn as an inline SVG:
    a first note over both participants as a caption above, two lifelines, one arrow per event
    with its label above it, each other note as a box right of the consumer's lifeline. The lifelines stand far enough apart for the longest arrow label
    (:data:`CHAR_PX` a character), so that no label crosses the consumer's lifeline, and a
    note's lines are folded at :data:`NOTE_CHARS`. Every text is escaped; other lines are
    ignored. ``marker``: the id of the arrowhead marker, unique per diagram on a page (an HTML
    id is the page's, not the SVG's). The SVG's width is its content's; the page puts it in a
    box that scrolls sideways where the window is narrower."""
    arrows, notes = [], []
    items = []
    caption: list[str] = []
    for line in source.splitlines():
        line = line.strip()
        if line.startswith("Note over Producer,Consumer:") and not items and not caption:
            caption = _wrap(line.split(":", 1)[1].strip(), NOTE_CHARS + 20)
        elif line.startswith("Producer->>Consumer:"):
            label = _unmermaid(line.split(":", 1)[1].strip())
            items.append(("arrow", label))
            arrows.append(label)
        elif line.startswith("Note over"):
            text = _wrap(line.split(":", 1)[1].strip(), NOTE_CHARS)
            items.append(("note", text))
            notes.append(text)
    left = 90
    right = max(left + 340, left + 16 + int(CHAR_PX * max((len(a) for a in arrows),
                                                         default=0)) + 8)
    note_x = right + 14
    note_w = int(CHAR_PX * max((len(t) for n in notes for t in n), default=0)) + 14
    top = 16 * len(caption) + (8 if caption else 0)
    y, parts = 50 + top, [f'<text x="4" y="{16 + 16 * i}" class="notetext">{html.escape(t)}'
                          '</text>' for i, t in enumerate(caption)]
    for kind, value in items:
        if kind == "arrow":
            parts.append(f'<text x="{left + 8}" y="{y}" class="label">{html.escape(value)}</text>')
            parts.append(f'<line x1="{left}" y1="{y + 6}" x2="{right}" y2="{y + 6}" '
                         f'class="arrow" marker-end="url(#{marker})"/>')
            y += 30
        else:
            h = 16 * len(value) + 8
            parts.append(f'<rect x="{note_x}" y="{y - 12}" width="{note_w}" height="{h}" '
                         'class="note"/>')
            for i, t in enumerate(value):
                parts.append(f'<text x="{note_x + 6}" y="{y + 2 + 16 * i}" class="notetext">'
                             f'{html.escape(t)}</text>')
            y += h + 10
    height = y + 10
    width = max(note_x + note_w + 10 if notes else right + 20, right - 30 + ACTOR_PX + 10,
                int(CHAR_PX * max((len(t) for t in caption), default=0)) + 10)
    head = (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}" role="img">'
            f'<defs><marker id="{marker}" markerWidth="8" markerHeight="8" refX="8" refY="4" '
            'orient="auto"><path d="M0,0 L8,4 L0,8 z"/></marker></defs>'
            f'<text x="{left - 30}" y="{20 + top}" class="actor">Producer</text>'
            f'<text x="{right - 30}" y="{20 + top}" class="actor">Consumer</text>'
            f'<line x1="{left}" y1="{28 + top}" x2="{left}" y2="{height}" class="life"/>'
            f'<line x1="{right}" y1="{28 + top}" x2="{right}" y2="{height}" class="life"/>')
    return head + "".join(parts) + "</svg>"


# --- the page -----------------------------------------------------------------------------------

_STYLE = """
body{font-family:system-ui,sans-serif;margin:1.5em;max-width:1200px}
main{min-width:0}
table{border-collapse:collapse}td,th{border:1px solid #bbb;padding:3px 6px;vertical-align:top}
th{background:#eee;text-align:left}.form-A{background:#e6f4ea}.form-B{background:#fff4e0}
.form-C{background:#e8eefc}.form-none{background:#fde8e8}
.wide{overflow-x:auto;max-width:100%}
#table td.title{min-width:14em}
pre{background:#f6f6f6;padding:6px;overflow-x:auto;white-space:pre}
code{overflow-wrap:anywhere}
svg .label,svg .notetext{font:12px monospace}svg .actor{font:bold 14px sans-serif}
svg .arrow{stroke:#333;stroke-width:1.5}svg .life{stroke:#999;stroke-dasharray:4 3}
svg .note{fill:#fffbe6;stroke:#d9c76a}
"""


def _events(n: int) -> str:
    """``"1 event"``, ``"3 events"``."""
    return f"{n} event" + ("" if n == 1 else "s")


def _conformance(outcome: dict) -> str:
    return "conformant" if outcome["conformant"] else "breaks " + ", ".join(outcome["breaks"])


def _option_table(row: dict) -> str:
    options = row.get("options")
    if not options:
        return ""
    if row["form"] == "C":
        body = "".join(
            f"<tr><td><code>{html.escape(row['knob'])}={html.escape(o['option'])}</code></td>"
            f"<td>{html.escape(_conformance(o))}</td></tr>" for o in options)
        return ("<div class='wide'><table class='options'><tr><th>reading</th>"
                f"<th>the witness is</th></tr>{body}</table></div>")
    body = []
    for o in options:
        held = "; ".join(_message_text(m) for m in o["messages"]) or "(none)"
        label = o.get("label") or o["option"]
        body.append(f"<tr><td><code>{html.escape(label)}</code></td>"
                    f"<td>{html.escape(held)}</td>"
                    f"<td>{html.escape(', '.join(o['warnings']) or '-')}</td>"
                    f"<td>{html.escape(o['fatal'] or '-')}</td>"
                    f"<td>{html.escape(o['run'])}</td></tr>")
    return ("<div class='wide'><table class='options'><tr><th>reading (every other knob at "
            "draft)</th><th>messages</th><th>warnings</th><th>fatal</th><th>run</th></tr>"
            + "".join(body) + "</table></div>")


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


def compared(row: dict) -> list[str]:
    """The two readings the row's split compares, named as its option table names them (the
    option, then the split's context away from draft): ``["Q1=merge", "Q1=ignore"]``."""
    readings = row.get("readings") or []
    options = row.get("options") or []
    if row.get("form") not in ("A", "B") or not options:
        return list(readings)
    from model.readings import parse_assignment
    knob = row["knob"]
    wanted = [parse_assignment(r).get(knob) for r in readings]
    labels = {o["option"]: o.get("label") or f"{knob}={o['option']}" for o in options}
    return [labels.get(w, r) for w, r in zip(wanted, readings)]


_ENGINE_WORDS = {"Z3": "Z3 bounded model checking of the ownership and replace fragment",
                 "BFS": "the exhaustive breadth-first search",
                 "both": "Z3 bounded model checking and the exhaustive breadth-first search"}


def recommended_html(rec: dict) -> str:
    """One entry of :func:`recommendations` as the page's paragraph: ``Recommended (★):
    KNOB=OPTION. argument (page > section) Peers: ...``; for a question without knob the
    argument alone (the data's argument says "no knob: ..." itself)."""
    lead = (f"<code>{html.escape(rec['knob'])}={html.escape(rec['option'])}</code>. "
            if rec["knob"] else "")
    peers = html.escape(peers_text(rec))
    return (f"<p class='recommended'>Recommended{' (★)' if rec['important'] else ''}: "
            f"{lead}{html.escape(rec['argument'])}"
            + (f" ({html.escape('; '.join(rec['cites']))})" if rec["cites"] else "")
            + (f" Peers: {peers}." if peers else "") + "</p>")


def settlement_text(row: dict) -> str:
    """What the row settles, in words (plain text): for form A and B, the split and where the
    witness came from; for form C what was proven or searched, to what bound, by which engine,
    and why that settles the question; for an unsettled row, what is missing."""
    q, depth = row["question"], row.get("proofDepth")
    if row["form"] in ("A", "B"):
        what = ("a trace that breaks no producer clause (under draft)" if row["form"] == "A"
                else "a trace whose last event breaks a producer clause (no trace that breaks "
                "none splits the knob to the search's depth)")
        text = (f"Form {row['form']}: {row['knob']} decides {what}: the readings "
                f"{' and '.join(compared(row))}, which differ only in {row['knob']} (every "
                f"knob not named at its draft option), end "
                f"differently on it. Shortest witness: {_events(row['length'])}, found by "
                f"{_ENGINE_WORDS[row['engine']]} (BFS {_cell(row['bfsLength'])}, Z3 "
                f"{_cell(row['z3Length'])}).")
        if row.get("closing"):
            text += (f" The witness file appends {_events(row['closing'])} ending what the "
                     "trace left open (RUN_FINISHED and the like), so that it is a complete "
                     "stream; the readings still part the same way on it.")
        return text
    if row["form"] == "C" and row.get("proven"):
        proven = "; ".join(f"{p['statement'].rstrip('.')} ({p['property']}, by "
                           f"{_ENGINE_WORDS[p['engine']]})" for p in row["proven"])
        return (f"Form C: proven under every reading at once, for every trace of up to "
                f"{_events(depth)}: {proven}. Why this settles {q}: {row.get('settles') or '-'}")
    if row["form"] == "C" and row.get("knob") in PRODUCER_ONLY_KNOBS:
        outcomes = "; ".join(f"{row['knob']}={o['option']}: {_conformance(o)}"
                             for o in row.get("options") or [])
        return (f"Form C, a producer-side question: no consumer step reads knob {row['knob']}, "
                f"so no consumer verdict depends on it; its options decide only whether a "
                f"producer's stream is conformant. The shortest trace whose conformance an "
                f"option changes ({_events(row['length'])}, the exhaustive breadth-first "
                f"search to {_events(depth)}): {outcomes}.")
    if row["form"] == "C":
        return (f"Form C: {row['note']}. Searched by {_ENGINE_WORDS['BFS']} under every "
                f"reading; the knob's options gave the same verdict on every trace, so to "
                f"that bound no consumer's verdict depends on the answer.")
    return f"Not settled: {row['note']}."


def _section(row: dict, written: bool = True, findings: Optional[dict] = None) -> str:
    q = html.escape(row["question"])
    out = [f"<section id='{q}'><h2>{q}: {html.escape(row['title'])}</h2>",
           f"<p>{html.escape(settlement_text(row))}</p>"]
    found = (findings or {}).get(row.get("knob"))
    if found:
        out.append(f"<p>The run's finding of knob {html.escape(row['knob'])} (its own shrunk "
                   f"witness): <a href='{html.escape(found)}'>{html.escape(found)}</a></p>")
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
        out.append("<div class='wide'>" + mermaid_svg(source, f"head-{row['question']}")
                   + "</div>")
        out.append("<details><summary>The witness as JSON lines</summary><pre>"
                   + html.escape("\n".join(json.dumps(e, ensure_ascii=False)
                                           for e in row["witness"])) + "</pre></details>")
    out.append(_option_table(row))
    out.extend(recommended_html(rec) for rec in recommendations(row))
    out.append("<p><a href='#table'>back to the table</a></p></section>")
    return "".join(out)


HTML_COLUMNS = ("question", "title", "form", "modelled by", "witness", "file")
"""The columns of the page's table."""


def _html_cells(row: dict, written: bool) -> list[str]:
    """The page's cells of a row, as text: the knobs or proofs that model it (the knob named
    only where it is not the question's own id), the witness's length and engine, or the
    proof's depth and engine."""
    knobs = [k for k in row["knobs"] if k != row["question"]]
    modelled = ", ".join(([f"knob {row['question']}"] if row["question"] in row["knobs"] else [])
                         + [f"knob {k}" for k in knobs]
                         + [f"proof {p}" for p in row["proofs"]]) or "-"
    if row.get("length") is not None:
        witness = f"{_events(row['length'])} ({row['engine']})"
    elif row.get("proofDepth") is not None:
        witness = f"none to {_events(row['proofDepth'])} ({row['engine']})"
    else:
        witness = "-"
    file = row["witnessFile"] if row.get("witnessFile") and written else "-"
    return [row["question"], row["title"], row["form"] or "-", modelled, witness, file]


def render_html(rows: Sequence[dict], depth: int, written: bool = True,
                findings: Optional[dict] = None) -> str:
    """The self-contained page (see the module docstring): no script, no external resource.
    ``written``: the witness files are written beside the page (its links are relative to its
    directory); False for a page printed alone (``questions --format html`` without ``--out``),
    which then says, instead of linking them, where ``--out`` writes them. ``findings``:
    ``{knob: path of the run's finding file, relative to the page}`` for the findings written
    beside it (each question's section links its knob's); the page shows no other finding id."""
    from properties.questions import settled_count
    head = "".join(f"<th>{c}</th>" for c in HTML_COLUMNS)
    body = []
    for r in rows:
        cells = [html.escape(c) for c in _html_cells(r, written)]
        cells[0] = f"<a href='#{cells[0]}'>{cells[0]}</a>"
        tds = "".join(f"<td class='{c.split()[0]}'>{v}</td>" for c, v in zip(HTML_COLUMNS, cells))
        body.append(f"<tr id='row-{html.escape(r['question'])}' class='question "
                    f"form-{r['form'] or 'none'}'>{tds}</tr>")
    return ("<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
            "<meta name='viewport' content='width=device-width, initial-scale=1'>"
            "<title>activity-check: the open questions of the draft</title>"
            f"<style>{_STYLE}</style></head><body><main>"
            "<h1>The open questions of the draft, settled by the tool</h1>"
            f"<p>{settled_count(rows)} of {len(rows)} questions settled (depth {depth}). "
            "Form A: a knob whose options give different verdicts on a conformant trace; B: "
            "only after a producer violation; C: a bounded proof (Z3 or exhaustive) that no "
            "reading changes a consumer verdict, or for a producer-side question the shortest "
            "trace whose conformance an option changes. Each question's section "
            "(<code>questions.html#Q11</code>) says what was shown, by which engine and to "
            "what bound.</p>"
            f"<div class='wide'><table id='table'><tr>{head}</tr>{''.join(body)}</table></div>"
            + "".join(_section(r, written, findings) for r in rows) + "</main></body></html>\n")


def write_questions(rows: Sequence[dict], out_dir: str, depth: int,
                    table: bool = False, findings: Optional[dict] = None) -> list[str]:
    """Write :data:`PAGE` and every witness (``questions/<Q-id>.jsonl``, JSON lines of wire
    events) into the existing directory ``out_dir``, and with ``table`` also
    :data:`TABLE_FILE`. ``findings``: as for :func:`render_html`. Returns the paths written,
    relative to ``out_dir``.

    Raises:
        OSError: a file cannot be written."""
    written = []
    for r in rows:
        if r.get("witnessFile"):
            os.makedirs(os.path.join(out_dir, os.path.dirname(r["witnessFile"])), exist_ok=True)
            _replace_file(out_dir, r["witnessFile"], dump_wire_jsonl(r["witness"]))
            written.append(r["witnessFile"])
    _replace_file(out_dir, PAGE, render_html(rows, depth, findings=findings))
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
