"""The report of ``activity-check resolve`` (issue 41): a proposal file read and checked, and
the report of :func:`properties.resolve.resolve` written as text, Markdown (short enough for a
pull-request comment), one self-contained HTML page (no script, no network; the witnesses drawn
as inline SVG sequence diagrams by the questions page's Mermaid machinery) and JSON
(``counterexamples/schemas/resolve-report.schema.json``); with ``--out`` also the traces that pin
each decision as JSON lines (``traces/<knob>.jsonl``, replayable), as pytest files (the finding
export of :mod:`counterexamples.report.export` pinned to the proposal's reading,
``pytest/test_pin_<knob>.py``) and as AG-UI conformance fixtures
(:func:`counterexamples.report.fixture.fixture_of`, ``fixtures/<name>.json``), and every
conflict's witness (``conflicts/<n>.jsonl``).

The proposed wording is shown beside the sentences of the page and section it changes, read
from the spec pages by :func:`model.spec_text.sentences`.
"""
from __future__ import annotations

import html
import json
import os
from pathlib import Path
from typing import Optional, Sequence

from model.text import TEXT_WIDTH, fold_words, schema_message, visible
from properties.resolve import Proposal, ProposalError, load_json_text, proposal_from_json

__all__ = ["MAX_PROPOSAL_BYTES", "load_proposal", "spec_dir", "check_pages", "add_sentences",
           "render_text",
           "render_markdown", "render_html", "render_compare", "write_report", "SCHEMAS",
           "CONFLICT_KINDS", "trace_text",
           "REPORT_FILE", "PAGE"]

MAX_PROPOSAL_BYTES = 1 << 20
"""The largest proposal file read (bytes); a larger one is refused."""

SCHEMAS = Path(__file__).resolve().parents[1] / "schemas"
"""Where the proposal's and the report's JSON Schemas live."""

REPORT_FILE = "resolve.json"
"""The report's file name in an output directory (its summary)."""

PAGE = "resolve.html"
"""The page's file name in an output directory."""

_MARK = {"decided": "decided", "closed": "closed", "open": "open"}


def load_proposal(path: str) -> Proposal:
    """The proposal in the JSON file ``path``: read whole up to :data:`MAX_PROPOSAL_BYTES`,
    strict JSON, checked against ``proposal.schema.json`` and by
    :func:`properties.resolve.proposal_from_json`.

    Raises:
        ProposalError: one line naming the file and what is wrong (unreadable, too large, not
            UTF-8, not JSON with line and column, a schema violation with its JSON path, an
            unknown knob or option)."""
    from model.wire import TraceFormatError, read_bytes, undecodable_at
    if os.path.isdir(path):
        raise ProposalError(f"{path}: is a directory, not a proposal file")
    try:  # bounded, and a named pipe with no writer reads as empty: never waited on
        data = read_bytes(path, listed=False, max_bytes=MAX_PROPOSAL_BYTES)
    except TraceFormatError as exc:
        if exc.reason.startswith("larger than"):
            raise ProposalError(f"{path}: larger than {MAX_PROPOSAL_BYTES} bytes; not a "
                                "proposal") from None
        raise ProposalError(f"{path}: {exc.reason}") from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:  # located as a JSON error is: its line
        line, _ = undecodable_at(data, exc)
        raise ProposalError(f"{path}: line {line}: not UTF-8 (byte {exc.start})") from None
    if not text.strip():
        raise ProposalError(f"{path}: empty (a named pipe with no writer reads as empty); a "
                            "proposal is a JSON object (docs/resolve.md)")
    doc = load_json_text(text, path)
    import jsonschema
    schema = json.loads((SCHEMAS / "proposal.schema.json").read_text(encoding="utf-8"))
    errors = sorted(jsonschema.Draft202012Validator(schema).iter_errors(doc),
                    key=lambda e: list(e.absolute_path))
    if errors:
        e = errors[0]
        # the member as the proposal's own checks name it: pins.Q2, wording.Q8.page
        where = ".".join(str(p) for p in e.absolute_path) or "(document)"
        raise ProposalError(f"{path}: {where}: {schema_message(e)}")
    return proposal_from_json(doc, path)


def spec_dir() -> Optional[str]:
    """The draft's pages (``shared/spec/draft``) beside the checkout or one folder further up
    (a worktree), or None."""
    root = Path(__file__).resolve().parents[2]
    for base in (root.parent, root.parent.parent):
        candidate = base / "shared" / "spec" / "draft"
        if candidate.is_dir():
            return str(candidate)
    return None


def _page_file(page: str, pages: Optional[str]) -> tuple[str, Optional[str]]:
    """``(file name, path)`` of a wording's ``page`` (``state`` or ``state.md``) among the
    draft's ``pages``; the path is None without pages. Only the name's last part is used, so a
    page never names a file outside ``pages``."""
    name = os.path.basename(page if page.endswith(".md") else page + ".md")
    return name, (os.path.join(pages, name) if pages else None)


def check_pages(proposals: Sequence[Proposal], pages: Optional[str]) -> None:
    """Read, before any search, every spec page the proposals' wording names that exists in
    ``pages``, as :func:`add_sentences` will.

    Raises:
        ProposalError: a page is a symbolic link (a name that came from a proposal is never
            read through a link, docs/limits.md), or cannot be read, is too large or is not
            UTF-8 (:func:`model.spec_text.sentences`'s TraceFormatError, naming the file, line
            and column)."""
    from model.spec_text import sentences
    from model.wire import TraceFormatError
    for proposal in proposals:
        for key, wording in proposal.wording.items():
            _, path = _page_file(wording["page"], pages)
            if path is None or not os.path.lexists(path):
                continue
            if os.path.islink(path):
                raise ProposalError(f"{visible(path)}: the page of {key}'s wording is a "
                                    "symbolic link; spec pages are read only as regular files")
            try:
                sentences(path)
            except TraceFormatError as exc:
                raise ProposalError(f"{key}'s wording: {exc}") from None


def add_sentences(report: dict, pages: Optional[str]) -> None:
    """Fill each wording entry's ``sentences`` (``[{"line", "section", "keyword", "text"}]``:
    the sentences of the page's section the wording would change, from
    :func:`model.spec_text.sentences`) and ``pageFile``; ``sentences`` stays empty, with a
    ``note``, when the pages or the page are not found (a symbolic link counts as not found:
    :func:`check_pages` refuses it before the search).

    Raises:
        model.wire.TraceFormatError: a page cannot be read, is too large or is not UTF-8."""
    from model.spec_text import sentences
    for entry in report["wording"]:
        entry["sentences"] = []
        name, path = _page_file(entry["page"], pages)
        if path is None or os.path.islink(path) or not os.path.isfile(path):
            entry["note"] = f"page {name} not found" + ("" if pages else
                                                        " (no spec pages: --spec DIR)")
            continue
        entry["pageFile"] = name
        wanted = entry["section"].strip().strip("`").lower()
        for s in sentences(path):
            parts = [p.strip().strip("`").lower() for p in s.section.split(">")]
            if wanted in parts or wanted == s.section.lower():
                entry["sentences"].append({"line": s.line, "section": s.section,
                                           "keyword": s.keyword, "text": s.text})
        if not entry["sentences"]:
            entry["note"] = f"no sentence of {name} under a section named {entry['section']!r}"


# --- text and Markdown -------------------------------------------------------------------------

def _how(q: dict, code=str) -> str:
    """What settles a question's status, in a few words (``code``: how an option is quoted)."""
    if q["status"] == "decided":
        return ", ".join(f"{k}={v}" for k, v in q["pinned"].items())
    if q["status"] == "closed":
        return f"{q['engine']} to depth {q['bound']}"
    w = q.get("witness")
    return (f"{w['length']}-event trace: {code(w['knob'] + '=' + w['option'])} vs "
            f"{code(w['against'])}") if w else q["note"]


CONFLICT_KINDS = {
    "contradicted": "the pins rule out what the clauses allow",
    "vacuous": "the clause's rule no longer fires on any conformant trace",
    "accepted": "the producer monitor under the pinned producer options calls conformant what "
                "the clause forbids",
}
"""A conflict kind (``properties.resolve``'s conflicts) in words, as each format prints it."""


def _question_line(q: dict) -> str:
    star = "★" if q["important"] else " "
    return f"{q['question']:<4}{star} {q['status']:<8} {_how(q)}"


def render_text(report: dict, width: Optional[int] = TEXT_WIDTH) -> str:
    """The report as plain text (one item a question, conflict and peer), each item folded at
    word boundaries within ``width`` columns, its later lines indented (:func:`model.text.
    fold_words`; None, ``--wide``: one line an item)."""
    p = report["proposal"]
    c = report["counts"]
    out = [f"proposal {p['name']}: pins {', '.join(f'{k}={v}' for k, v in p['pins'].items())}",
           f"depth {report['depth']} (Z3 {report['z3Depth'] or 'off'}): {c['decided']} "
           f"decided, {c['closed']} closed, {c['open']} open; {c['conflicts']} conflicts; "
           f"{c['deviations']} against a clause's text; "
           f"{c['nonConformantPeers']} peers non-conformant", "", "questions (★ important):"]
    out += ["  " + _question_line(q) for q in report["questions"]]
    out += ["", "conflicts:"]
    out += [f"  {x['kind']:<12} {x['subject']} [{', '.join(x['clauses'])}] ({x['engine']}, "
            f"witness {x['length']} events under {x['witnessUnder']}): "
            f"{CONFLICT_KINDS[x['kind']]}"
            for x in report["conflicts"]] or ["  none"]
    out += ["", "pins against a clause's text (deviations: adopting one rewords the clause):"]
    out += [f"  {d['knob']}={d['option']} against {d['clause']}: {d['reason']}"
            for d in report["deviations"]] or ["  none"]
    if report.get("limits"):
        out += ["", "limits:"] + [f"  {line}" for line in report["limits"]]
    out += ["", "peers (recorded options):"]
    for r in report["peers"]:
        if r["conformant"] and set(r.get("unrecorded", ())) >= set(p["pins"]):
            out.append(f"  {r['peer']}: not judged: no pinned knob is observable for it "
                       f"({', '.join(r['unrecorded'])})")
        elif r["conformant"]:
            out.append(f"  {r['peer']}: conformant on the pinned questions it was recorded on"
                       + (f" (not observable: {', '.join(r['unrecorded'])})"
                          if r.get("unrecorded") else ""))
        for f in r["findings"]:
            w = f["witness"]
            out.append(f"  {r['peer']}: " + ("NON-CONFORMANT on" if w else "differs off "
                                                 "conformant traces only on") +
                       f" {f['question']} ({f['knob']}={f['recorded']}, pinned {f['pinned']})" +
                       (f", trace of {w['length']} events: {trace_text(w['trace'])}"
                        if w else ""))
        if "live" in r:
            out.append(f"    live: {_live_text(r['live'])}")
    out += ["", "traces pinning the decisions:"]
    for t in report["traces"]:
        w = t["witness"]
        out.append(f"  {t['knob']}={t['option']}: " + (
            f"{w['length']} events against {w['against']} ({w['decides']})" +
            ("" if w["closed"] else ", not a closed stream") +
            (f" -> {t['file']}" if report.get("written") else "") if w else
            "no trace to the depth"))
    if report["wording"]:
        out += ["", "wording:"]
        for w in report["wording"]:
            # the proposal's and the pages' text shown as data (control characters escaped)
            out.append(f"  {w['id']} ({visible(w['page'], None)} > "
                       f"{visible(w['section'], None)}): {visible(w['text'], None)}")
            if w.get("note"):
                out.append(f"    ({visible(w['note'], None)})")
            for s in w.get("sentences", [])[:6]:
                out.append(f"    now (line {s['line']}): {visible(s['text'], None)}")
    lines = []
    for line in out:
        lead = len(line) - len(line.lstrip(" "))
        lines += fold_words(line[lead:], width, " " * (lead + 4), " " * lead)
    return "\n".join(lines) + "\n"


def trace_text(trace: Sequence[dict]) -> str:
    """A witness trace (wire events) in one line, the arrows' labels of its diagrams joined by
    ``; ``: ``RUN_STARTED r1; ACTIVITY_SNAPSHOT act-1 PLAN; MESSAGES_SNAPSHOT [act-2];
    RUN_FINISHED r1``, so that the text report shows the trace that makes a peer
    non-conformant, not only its length (the JSON and ``--out`` give it whole)."""
    from counterexamples.report.export import _event_label
    from model.wire import parse_events
    return "; ".join(_event_label(w, e) for w, e in zip(trace, parse_events(list(trace))))


def _peer_verdict(row: dict, pins) -> str:
    """A peer row's verdict in words: ``non-conformant``; ``not judged (not observable: ...)``
    when no pinned knob is observable for the peer (``model/data/peer_options.json``);
    else ``conformant``, naming the pinned knobs not observable for it."""
    hidden = row.get("unrecorded") or []
    if not row["conformant"]:
        return "non-conformant"
    if set(hidden) >= set(pins):
        return f"not judged (not observable: {', '.join(hidden)})"
    return "conformant" + (f" (not observable: {', '.join(hidden)})" if hidden else "")


def _live_text(live: dict) -> str:
    """``--live``'s outcome for one peer in a few words."""
    if not live.get("ready"):
        return "not checked: " + live.get("reason", "")
    checked = "; ".join(f"{c['knob']} behaves as {c['behaves']}" for c in live["checked"])
    moved = [f"{o['knob']} recorded {o['recorded'] or 'not observable'}, live "
             f"{o['live'] or 'not observable'}"
             for o in live.get("options", []) if o["recorded"] != o["live"]]
    if live.get("matchesRecord"):
        record = "options as recorded"
    else:
        record = "NOT as recorded: " + ("; ".join(moved) if moved else
                                        f"installed version {live.get('version')}")
    return f"{live['adapter']}: " + (checked or "no finding to replay") + f"; {record}"


def _md(text) -> str:
    """``text`` for one Markdown table cell or list item: line breaks as spaces, other control
    characters escaped (:func:`model.text.visible`), ``|`` escaped, and ``<``, ``>`` and ``&``
    as HTML entities, so that a proposal's text is shown, never taken as markup."""
    shown = visible(str(text).replace("\r\n", " ").replace("\n", " "), None)
    return html.escape(shown, quote=False).replace("|", "\\|")


def render_markdown(report: dict) -> str:
    """The report as Markdown for a pull-request comment: a summary, the questions that are
    not decided in one table, conflicts, peers and the wording (the traces are in the files)."""
    p = report["proposal"]
    c = report["counts"]
    out = [f"### activity-check resolve: {_md(p['name'])}", "",
           "Pins: " + ", ".join(f"`{k}={v}`" for k, v in p['pins'].items()), "",
           f"**{c['decided']} decided, {c['closed']} closed, {c['open']} still open; "
           f"{c['conflicts']} conflicts; {c['deviations']} against a clause's text; "
           f"{c['nonConformantPeers']} peers non-conformant** "
           f"(BFS depth {report['depth']}, Z3 depth {report['z3Depth'] or 'off'})", "",
           "| question | ★ | status | how |", "| --- | --- | --- | --- |"]
    for q in report["questions"]:
        how = _md(_how(q, lambda t: f"`{t}`"))
        out.append(f"| {q['question']} | {'★' if q['important'] else ''} | {q['status']} | "
                   f"{how} |")
    out += ["", "**Conflicts**", ""]
    out += [f"- {x['kind']}: {_md(x['subject'])} ({', '.join(x['clauses'])}; {x['engine']}, "
            f"{x['length']} events): {CONFLICT_KINDS[x['kind']]}"
            for x in report["conflicts"]] or ["- none"]
    out += ["", "**Pins against a clause's text** (deviations: adopting one rewords the "
            "clause)", ""]
    out += [f"- `{d['knob']}={d['option']}` against {d['clause']}: {_md(d['reason'])}"
            for d in report["deviations"]] or ["- none"]
    if report.get("limits"):
        out += ["", "**Limits**", ""] + [f"- {_md(line)}" for line in report["limits"]]
    out += ["", "**Peers** (recorded options)", ""]
    def takes(findings) -> str:
        return ", ".join(f"{f['question']} (takes {f['knob']}={f['recorded']})"
                         for f in findings)
    for r in report["peers"]:
        # as the text and the count: a finding with a conformant witness makes the peer
        # non-conformant; one off conformant traces only is named apart and does not
        bad = takes(f for f in r["findings"] if f["witness"])
        off = takes(f for f in r["findings"] if not f["witness"])
        out.append(f"- {_md(r['peer'])}: "
                   + (f"non-conformant on {bad}" if bad else _peer_verdict(r, p["pins"]))
                   + (f"; differs off conformant traces only on {off}" if off else "")
                   + (f" (live: {_md(_live_text(r['live']))})" if "live" in r else ""))
    if report["wording"]:
        out += ["", "**Wording**", ""]
        for w in report["wording"]:
            out.append(f"- {w['id']} ({_md(w['page'])} > {_md(w['section'])}): "
                       f"_{_md(w['text'])}_"
                       + (f" ({_md(w['note'])})" if w.get("note") else ""))
    return "\n".join(out) + "\n"


# --- HTML --------------------------------------------------------------------------------------

def _diagram(trace: list, title: str, key: str) -> str:
    """``trace`` drawn as an inline SVG sequence diagram, its Mermaid source folded below it,
    or nothing for a trace that does not parse. ``title`` is the diagram's caption (what the
    trace witnesses, for the reader); ``key`` only makes the arrowhead's id unique on the page.
    One arrow per event, no per-option notes."""
    from counterexamples.report.export import compare_mermaid
    from counterexamples.report.questions_page import mermaid_svg
    try:
        source = compare_mermaid(f"witness: {title}", trace, [])
    except (ValueError, KeyError):
        return ""
    return (mermaid_svg(source, f"head-{key}") + "<details><summary>Mermaid source</summary>"
            f"<pre>{html.escape(source)}</pre></details>")


def _verdict_cell(v: dict) -> str:
    from counterexamples.report.questions_page import _message_text
    held = "; ".join(_message_text(m) for m in v["messages"]) or "(none)"
    return (f"{held}; warnings {', '.join(v['warnings']) or '-'}; fatal {v['fatal'] or '-'}; "
            f"run {v['run']}")


def _witness_html(w: dict, key: str, title: str, link: Optional[str]) -> str:
    out = [f"<p>{w['length']} events ({w['engine']}, {html.escape(w['vocabulary'])} vocabulary, "
           f"bound {w['bound']}); {w['knob']}={html.escape(w['option'])} against "
           f"{html.escape(w['against'])}; decides the {w['decides']}"
           + ("" if w["closed"] else "; <b>not a closed stream</b>") + "</p>"]
    if link:
        out.append(f"<p>Trace: <a href='{html.escape(link)}'>{html.escape(link)}</a></p>")
    if "verdicts" in w:
        out.append("<table><tr><th>option</th><th>verdict</th></tr>" + "".join(
            f"<tr><td>{html.escape(o)}</td><td>{html.escape(_verdict_cell(v))}</td></tr>"
            for o, v in w["verdicts"].items()) + "</table>")
    else:
        out.append("<table><tr><th>option</th><th>producer clauses broken</th></tr>" + "".join(
            f"<tr><td>{html.escape(o)}</td><td>{html.escape(', '.join(v) or 'none')}</td></tr>"
            for o, v in w["conformance"].items()) + "</table>")
    out.append(_diagram(w["trace"], f"{title}: {w['knob']}={w['option']} against "
                        f"{w['against']}", key))
    return "".join(out)


def _sentence(text: str) -> str:
    """``text`` as a sentence: a capital first letter and one full stop at the end."""
    text = text.strip().rstrip(".")
    return (text[:1].upper() + text[1:] + ".") if text else ""


def render_html(report: dict) -> str:
    """The self-contained page: summary, questions, conflicts (with diagrams), peers, traces
    and wording side by side. No script, no external resource."""
    from counterexamples.report.questions_page import _STYLE
    p = report["proposal"]
    c = report["counts"]
    written = bool(report.get("written"))
    e = html.escape
    out = ["<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
           f"<title>activity-check resolve: {e(p['name'])}</title><style>{_STYLE}"
           ".decided{background:#e8eefc}.closed{background:#e6f4ea}.open{background:#fff4e0}"
           "</style></head><body>",
           f"<h1>What the proposal {e(p['name'])} does</h1>",
           "<p>Pins: " + ", ".join(f"<code>{e(k)}={e(v)}</code>" for k, v in p["pins"].items())
           + f"</p><p><b>{c['decided']} decided, {c['closed']} closed, {c['open']} still open; "
           f"{c['conflicts']} conflicts; {c['deviations']} against a clause's text; "
           f"{c['nonConformantPeers']} peers non-conformant</b> "
           f"(breadth-first to depth {report['depth']}, Z3 to {report['z3Depth'] or 'off'}).</p>",
           "<h2 id='questions'>Questions</h2><table><tr><th>question</th><th>★</th>"
           "<th>status</th><th>engine</th><th>bound</th><th>note</th></tr>"]
    # the questions drawn below (a pinned knob's trace, an open question's witness): only
    # those are linked from the table, and each section id is given once
    pinned = {t["question"] for t in report["traces"]}
    open_drawn = [q for q in report["questions"]  # drawn under "Questions still open"
                  if q["status"] == "open" and q.get("witness") and q["question"] not in pinned]
    drawn = pinned | {q["question"] for q in open_drawn}
    for q in report["questions"]:
        name = e(q["question"])
        cell = f"<a href='#q-{name}'>{name}</a>" if q["question"] in drawn else name
        out.append(f"<tr class='{q['status']}'><td>{cell}</td>"
                   f"<td>{'★' if q['important'] else ''}</td>"
                   f"<td>{q['status']}</td><td>{e(q['engine'] or '-')}</td>"
                   f"<td>{q['bound'] if q['bound'] is not None else '-'}</td>"
                   f"<td>{e(q['note'])}</td></tr>")
    out.append("</table><h2 id='conflicts'>Conflicts</h2>")
    if not report["conflicts"]:
        out.append("<p>None to the bounds.</p>")
    for i, x in enumerate(report["conflicts"]):
        link = f"conflicts/{i + 1}.jsonl" if written else None
        out.append(f"<section><h3>{e(x['kind'])}: {e(x['subject'])}</h3><p>"
                   f"{e(_sentence(CONFLICT_KINDS[x['kind']]))} Clauses "
                   f"{e(', '.join(x['clauses']))}. {e(_sentence(x['note']))} Witness: "
                   f"{x['length']} "
                   f"events under {e(x['witnessUnder'])} ({x['engine']}, bound {x['bound']})"
                   + (f": <a href='{link}'>{link}</a>" if link else "") + ".</p>"
                   + _diagram(x["trace"], f"{x['kind']} {x['subject']}", f"conflict-{i + 1}")
                   + "</section>")
    out.append("<h2 id='deviations'>Pins against a clause's text</h2><p>A pin whose option "
               "is a deviation (modelled because implementations do it, against the text of "
               "the clause named): adopting it rewords that clause.</p>")
    out.append("<ul>" + "".join(f"<li><code>{e(d['knob'])}={e(d['option'])}</code> against "
                                f"{e(d['clause'])}: {e(d['reason'])}</li>"
                                for d in report["deviations"]) + "</ul>"
               if report["deviations"] else "<p>None.</p>")
    if report.get("limits"):
        out.append("<h2 id='limits'>Limits</h2><ul>" + "".join(
            f"<li>{e(line)}</li>" for line in report["limits"]) + "</ul>")
    out.append("<h2 id='peers'>Peers</h2><table><tr><th>peer</th><th>verdict</th>"
               "<th>questions</th></tr>")
    for r in report["peers"]:
        bad = "; ".join(f"{f['question']}: takes {f['knob']}={f['recorded']}, pinned "
                        f"{f['pinned']}" + ("" if f["witness"] else
                                            " (off conformant traces only)")
                        for f in r["findings"])
        verdict = _peer_verdict(r, report["proposal"]["pins"])
        out.append(f"<tr><td>{e(r['peer'])}</td><td>{e(verdict)}</td><td>{e(bad or '-')}</td>"
                   "</tr>")
    out.append("</table>")
    for i, r in enumerate(report["peers"]):
        for f in r["findings"]:
            if f["witness"]:
                key = f"peer-{i + 1}-{f['knob']}"
                out.append(f"<section><h3>{e(r['peer'])} on {e(f['question'])}</h3>"
                           + _witness_html(f["witness"], key, f"{r['peer']} on {f['question']}",
                                           None) + "</section>")
    out.append("<h2 id='traces'>Traces that pin the decisions</h2>")
    anchored = set()
    for t in report["traces"]:
        anchor = "" if t["question"] in anchored else f" id='q-{e(t['question'])}'"
        anchored.add(t["question"])
        out.append(f"<section{anchor}><h3>{e(t['knob'])}="
                   f"{e(t['option'])}</h3>")
        if t["witness"]:
            out.append(_witness_html(t["witness"], f"pin-{t['knob']}",
                                     f"pin {t['knob']}={t['option']}",
                                     t["file"] if written else None))
        else:
            out.append("<p>No trace to the depth decides it.</p>")
        out.append("</section>")
    if open_drawn:  # under their own heading, not the pins' traces
        out.append("<h2 id='open'>Questions still open</h2>")
    for q in open_drawn:
        drawn_open = _witness_html(q["witness"], "open-" + q["question"],
                                   q["question"] + " still open", None)
        out.append(f"<section id='q-{e(q['question'])}'><h3>{e(q['question'])} (open)"
                   f"</h3>{drawn_open}</section>")
    if report["wording"]:
        out.append("<h2 id='wording'>Wording</h2><table><tr><th>question</th><th>the page now"
                   "</th><th>proposed</th></tr>")
        for w in report["wording"]:
            def shown(text) -> str:  # control characters escaped, then HTML's own
                return e(visible(text, None))
            now = "".join(f"<p>line {s['line']}: {shown(s['text'])}</p>"
                          for s in w.get("sentences", [])) or shown(w.get("note", "-"))
            out.append(f"<tr><td>{e(w['id'])}<br>{shown(w['page'])} &gt; "
                       f"{shown(w['section'])}</td><td>{now}</td><td>{shown(w['text'])}</td>"
                       "</tr>")
        out.append("</table>")
    out.append("</body></html>\n")
    return "".join(out)


def render_compare(cmp: dict, fmt: str = "text") -> str:
    """Two proposals side by side (:func:`properties.resolve.compare`), as text or Markdown."""
    a, b = cmp["a"], cmp["b"]
    if fmt == "md":  # the proposals' names shown, never taken as markup
        a, b = _md(a), _md(b)
    bullet = "- " if fmt == "md" else "  "
    out = [(f"### {a} vs {b}" if fmt == "md" else f"{a} vs {b}"), ""]
    from model.readings import KNOBS
    pins = [k.id for k in KNOBS if k.id in cmp["pins"]["a"] or k.id in cmp["pins"]["b"]]
    out.append("pins that differ:")
    out += [f"{bullet}{k}: {cmp['pins']['a'].get(k, '(draft)')} | "
            f"{cmp['pins']['b'].get(k, '(draft)')}" for k in pins
            if cmp["pins"]["a"].get(k) != cmp["pins"]["b"].get(k)] or [f"{bullet}none"]
    out.append("questions whose status differs:")
    out += [f"{bullet}{q['question']}: {q['a']} | {q['b']}" for q in cmp["questions"]] or \
        [f"{bullet}none"]
    out.append("conflicts:")
    out += [f"{bullet}only {a}: {s}" for s in cmp["conflicts"]["onlyA"]]
    out += [f"{bullet}only {b}: {s}" for s in cmp["conflicts"]["onlyB"]]
    out += [f"{bullet}both: {s}" for s in cmp["conflicts"]["both"]]
    out.append("pins against a clause's text (deviations):")
    dev = cmp["deviations"]
    out += [f"{bullet}{name}: {', '.join(dev[side]) or 'none'}"
            for side, name in (("a", a), ("b", b))]
    out.append("peers that differ:")
    out += [f"{bullet}{p['peer']}: non-conformant on {', '.join(p['a']) or 'nothing'} | "
            f"{', '.join(p['b']) or 'nothing'}" for p in cmp["peers"]] or [f"{bullet}none"]
    return "\n".join(out) + "\n"


# --- files -------------------------------------------------------------------------------------

def _fixture_name(knob: str, option: str) -> str:
    import re
    return re.sub(r"[^a-z0-9]+", "-", f"pin-{knob}-{option}".lower()).strip("-")


def write_report(report: dict, out_dir: str) -> list[str]:
    """Write the report into the existing directory ``out_dir``: ``resolve.json``,
    ``resolve.md``, ``resolve.html``, ``proposal.json``, ``traces/<knob>.jsonl``,
    ``pytest/test_pin_<knob>.py``, ``fixtures/<name>.json`` (verdict-deciding pins only) and
    ``conflicts/<n>.jsonl``. Sets ``report["written"]``, ``report["files"]`` and each trace's
    ``file`` (None in a report that was not written, so that no path names a missing file).
    Returns the paths written, relative to ``out_dir``.

    Raises:
        OSError: a file cannot be written."""
    from counterexamples.report.export import to_pytest
    from counterexamples.report.fixture import dumps_fixture, fixture_of, prefix_ids, \
        spec_page_of
    from counterexamples.report.walkthrough import trace_finding
    from model.clauses import UnknownClauseError, get as clause_of
    from model.readings import KNOB_BY_ID, parse_reading
    from model.verdict import evaluate
    from model.wire import dump_wire_jsonl, parse_events
    report["written"] = True
    files: list[str] = []

    def put(rel: str, text: str) -> None:
        path = os.path.join(out_dir, rel)
        os.makedirs(os.path.dirname(path) or out_dir, exist_ok=True)
        with open(path + ".tmp", "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(path + ".tmp", path)
        files.append(rel)

    reading = parse_reading(report["reading"])
    for t in report["traces"]:
        w = t["witness"]
        if not w:
            continue
        t["file"] = f"traces/{t['knob']}.jsonl"
        put(t["file"], dump_wire_jsonl(w["trace"]))
        t["pytest"] = t["fixture"] = None
        if w["decides"] != "verdict":
            continue
        events = parse_events(w["trace"])
        finding = trace_finding(events, t["knob"])
        rel = f"pytest/test_pin_{t['knob'].lower().replace('-', '_')}.py"
        put(rel, to_pytest(finding, reading))
        t["pytest"] = rel
        name = _fixture_name(t["knob"], t["option"])
        stream, _ = prefix_ids(name, w["trace"])
        try:
            page = clause_of(KNOB_BY_ID[t["knob"]].clauses[0]).page
        except UnknownClauseError:
            page = "ACT"
        fixture = fixture_of(name, stream, evaluate(parse_events(stream), reading), reading,
                             spec_page_of(page if page in _pages() else "ACT"),
                             f"{t['knob']}={t['option']}: the verdict the proposal pins, "
                             f"against {w['against']}")
        rel = f"fixtures/{name}.json"
        put(rel, dumps_fixture(fixture))
        t["fixture"] = rel
    for i, x in enumerate(report["conflicts"]):
        put(f"conflicts/{i + 1}.jsonl", dump_wire_jsonl(x["trace"]))
    put("proposal.json", json.dumps(report["proposal"], indent=2, ensure_ascii=False) + "\n")
    put("resolve.md", render_markdown(report))
    files.append(PAGE)
    files.append(REPORT_FILE)
    report["files"] = list(files)
    put(PAGE, render_html(report))
    files.pop()  # put added the page again
    put(REPORT_FILE, json.dumps(report, indent=2, ensure_ascii=False) + "\n")
    files.pop()
    return list(dict.fromkeys(files))


def _pages() -> Sequence[str]:
    from counterexamples.report.fixture import SPEC_PAGES
    return tuple(SPEC_PAGES)


# --- live peers --------------------------------------------------------------------------------

def _catalogue_peer(adapter: str):
    """The matrix peer whose ``--adapter`` shortcut is ``adapter`` (a report row's
    ``adapter``, from ``model/data/peer_options.json``), or None."""
    from counterexamples.peers.matrix import MATRIX_PEERS
    for peer in MATRIX_PEERS:
        if peer.shortcut == adapter:
            return peer
    return None


def live_peers(report: dict) -> None:
    """``--live``: check every peer row against its installed adapter and set ``live``:
    ``{"ready": bool, "reason" (when not), "adapter", "version" (installed), "checked":
    [{"knob", "behaves": "proposal" | "recorded" | "neither" | reply kind}], "options":
    [{"knob", "recorded", "live"}], "matchesRecord": bool}``. ``checked`` replays each finding's
    witness and compares the adapter's final messages with the model's under the proposal
    and under the recorded option; ``options`` runs the recorded separating traces
    (``model/data/peer_options.json``) through the adapter and gives, per pinned knob, the
    option recorded and the one the live peer takes now (None: not observable),
    ``matchesRecord`` whether the version and all of them are as recorded. A peer whose
    adapter is not installed says why (``make peers`` installs them)."""
    from counterexamples.peers.adapter import AdapterProcess, PeerError
    from counterexamples.peers.check import run_batch
    from counterexamples.peers.matrix import _spec, peer_ready, peer_version
    from counterexamples.peers.options import peer_knob_options
    from counterexamples.peers.traces import PeerTrace
    from model.readings import peer_options_document
    canon = lambda v: json.dumps(v, sort_keys=True)  # noqa: E731
    document = peer_options_document()
    items = document["traces"]["items"]
    recorded_by_adapter = {p["adapter"]: p["knobs"] for p in document["peers"]}
    pins = report["proposal"]["pins"]
    for row in report["peers"]:
        peer = _catalogue_peer(row.get("adapter", ""))
        if peer is None:
            row["live"] = {"ready": False, "reason": "no adapter in the matrix for this peer"}
            continue
        reason = peer_ready(peer)
        if reason:
            row["live"] = {"ready": False, "reason": reason}
            continue
        checked = []
        try:
            with AdapterProcess(_spec(peer)) as adapter:
                for f in row["findings"]:
                    w = f["witness"]
                    if not w or w["decides"] != "verdict":
                        continue
                    reply = adapter.request(w["trace"], None, f["knob"])
                    if not reply.ok:
                        checked.append({"knob": f["knob"], "behaves": reply.kind})
                        continue
                    got = canon(reply.response.get("messages"))
                    behaves = ("proposal" if got == canon(w["verdicts"][w["option"]]["messages"])
                               else "recorded" if got == canon(
                                   w["verdicts"][w["against"]]["messages"]) else "neither")
                    checked.append({"knob": f["knob"], "behaves": behaves})
                results = run_batch(adapter, [PeerTrace.of(i["id"], i["trace"], None,
                                                           "separating") for i in items])
        except PeerError as exc:
            row["live"] = {"ready": False, "reason": str(exc)}
            continue
        live = peer_knob_options({r.trace.id: r for r in results}, items)
        recorded = recorded_by_adapter.get(peer.shortcut, {})
        options = [{"knob": k, "recorded": recorded.get(k, {}).get("option"),
                    "live": live[k].get("option")} for k in pins]
        version = peer_version(peer)
        row["live"] = {"ready": True, "adapter": peer.shortcut, "version": version,
                       "checked": checked, "options": options,
                       "matchesRecord": version == row.get("version") and
                       all(o["recorded"] == o["live"] for o in options)}
