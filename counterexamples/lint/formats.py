"""The formats of a lint report: pretty (rich), JSON, JUnit XML and SARIF 2.1.0.

* :func:`to_json`: the report's JSON (schema ``activity-check/lint/1``, documented in docs/lint.md:
  :meth:`counterexamples.lint.linter.LintReport.to_json`).
* :func:`to_junit`: JUnit XML as CI systems read it: one ``testsuite`` per stream, one
  ``testcase`` per clause checked (:func:`counterexamples.lint.linter.clauses_checked`), a ``failure``
  for each clause violated at or above ``--fail-on`` (each violation a line of its text), and a
  ``system-out`` for violations below it.
* :func:`to_sarif`: a SARIF 2.1.0 log (OASIS): one run, one rule per clause checked (id, our
  paraphrase, keyword, page and section), one result per violation with the stream's file and
  line as its location and the event index, pointer and readings as properties. The tests
  validate it against the vendored schema (:data:`SARIF_SCHEMA_PATH`).
* :func:`render_pretty`: the report on a rich console; every string that comes from the stream
  is escaped, so that markup in an id or a detail is shown, not interpreted.
"""
from __future__ import annotations

import json
import os
import re
from typing import Optional, Sequence, Union
from xml.etree import ElementTree as ET

from model.producer import PRODUCER_KNOBS
from model.readings import describe_assignment

from counterexamples.lint.linter import (LintReport, LintViolation, SEVERITIES, _merged, clause_of,
                                  clauses_checked, severity_of, tool_version)

__all__ = ["FORMATS", "to_json", "to_junit", "to_sarif", "render_pretty", "render",
           "SARIF_SCHEMA_PATH", "SARIF_SCHEMA_URI", "REPORT_SCHEMA_PATH", "SET_SCHEMA_PATH",
           "SET_SCHEMA", "xml_text", "print_hanging"]

Reports = Union[LintReport, Sequence[LintReport]]
"""One report, or the reports of several inputs linted in one call (one report each)."""


def _many(reports: Reports) -> list[LintReport]:
    return [reports] if isinstance(reports, LintReport) else list(reports)

FORMATS = ("pretty", "json", "junit", "sarif")
"""The report formats, ``--format``'s choices (pretty first: the default)."""

SARIF_SCHEMA_PATH = os.path.join(os.path.dirname(os.path.dirname(__file__)), "schemas",
                                 "sarif-2.1.0.json")
"""The vendored SARIF 2.1.0 JSON schema (see ``schemas/README.md`` for its source)."""

REPORT_SCHEMA_PATH = os.path.join(os.path.dirname(os.path.dirname(__file__)), "schemas",
                                  "lint-report.schema.json")
"""The JSON schema (2020-12) of the JSON report (:func:`to_json`), described in docs/lint.md."""

SET_SCHEMA_PATH = os.path.join(os.path.dirname(os.path.dirname(__file__)), "schemas",
                               "lint-set.schema.json")
"""The JSON schema of the JSON report of several inputs (:data:`SET_SCHEMA`)."""

SET_SCHEMA = "activity-check/lint-set/1"
"""The ``schema`` of the JSON report when several inputs are linted in one call: ``reports``,
one :data:`counterexamples.lint.linter.REPORT_SCHEMA` report per input."""

_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
"""A character XML 1.0 forbids (its ``Char`` production): C0 controls but tab, newline and
carriage return, lone surrogates, U+FFFE and U+FFFF."""


def xml_text(text: str) -> str:
    """``text`` with every character XML 1.0 forbids written as a visible ``\\xNN`` or
    ``\\uNNNN`` escape, so that a JUnit report stays XML whatever an id or a detail holds
    (XML 1.0, section 2.2)."""
    return _NOT_XML.sub(lambda m: (f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100
                                   else f"\\u{ord(m.group()):04x}"), text)


def _xml_safe(element) -> None:
    """Apply :func:`xml_text` to every attribute value and text of ``element``'s tree."""
    for node in element.iter():
        for name, value in node.attrib.items():
            node.set(name, xml_text(value))
        if node.text:
            node.text = xml_text(node.text)


SARIF_SCHEMA_URI = ("https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/"
                    "sarif-schema-2.1.0.json")
"""The ``$schema`` a SARIF log names: the schema's own id."""

_LEVEL = {"error": "error", "warning": "warning"}


def _where(v: LintViolation) -> str:
    """Where a violation stands: its event (and line), or the end of the stream, with the
    index of the event that opened what was left open (docs/lint.md) when there is one."""
    if v.event_index is None:
        return "end of stream" + ("" if v.related_index is None
                                  else f" (opened at event {v.related_index})")
    at = f"event {v.event_index}"
    return f"{at} (line {v.line})" if v.line is not None else at


def _text(v: LintViolation) -> str:
    """One violation as one line of plain text: where, severity and clause, then what is wrong
    (the detail seen), then the clause's text."""
    parts = [f"{_where(v)}: {v.severity} {v.clause} ({v.keyword})"]
    if v.event_type:
        parts.append(v.event_type)
    if v.pointer:
        parts.append(v.pointer)
    text = " ".join(parts) + (f": {v.detail}; clause: {v.message}" if v.detail else
                              f": {v.message}")
    if v.readings is not None:
        text += f" (only under {'; '.join(v.readings)})"
    return text


def to_json(reports: Reports, fail_on: str = "error", version: Optional[str] = None) -> str:
    """The report as JSON text (indented by 2, non-ASCII kept, newline-terminated): one
    report's document (:data:`counterexamples.lint.linter.REPORT_SCHEMA`), or for a sequence of
    several a :data:`SET_SCHEMA` document holding each in ``reports``."""
    many = _many(reports)
    if len(many) == 1:
        doc = many[0].to_json(fail_on, version)
    else:
        docs = [r.to_json(fail_on, version) for r in many]
        doc = {"tool": "activity-check", "version": version or tool_version(),
               "schema": SET_SCHEMA, "failOn": fail_on,
               "failed": any(d["failed"] for d in docs),
               "conformant": all(d["conformant"] for d in docs), "reports": docs}
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def to_junit(reports: Reports, fail_on: str = "error") -> str:
    """The report(s) as JUnit XML text (see the module docstring): one ``testsuite`` per
    input; every character XML 1.0 forbids escaped (:func:`xml_text`)."""
    suites = [_junit_suite(r, fail_on) for r in _many(reports)]
    tests = sum(int(s.get("tests")) for s in suites)
    failures = sum(int(s.get("failures")) for s in suites)
    root = ET.Element("testsuites", name="activity-check lint", tests=str(tests),
                      failures=str(failures), errors="0")
    root.extend(suites)
    _xml_safe(root)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _junit_suite(report: LintReport, fail_on: str):
    """One input's ``testsuite`` element."""
    by_clause: dict[str, list[LintViolation]] = {}
    for v in report.violations:
        by_clause.setdefault(v.clause, []).append(v)
    checked = list(clauses_checked())
    checked += [c for c in by_clause if c not in checked]
    suite = ET.Element("testsuite", name=f"activity-check lint: {report.source}",
                       tests=str(len(checked)), errors="0", skipped="0")
    failures = 0
    for cid in checked:
        clause = clause_of(cid)
        case = ET.SubElement(suite, "testcase", classname=f"activity-check.lint.{clause.page}",
                             name=f"{cid} ({clause.keyword})")
        found = by_clause.get(cid, [])
        failing = [v for v in found if _at_or_above(v.severity, fail_on)]
        if failing:
            failures += 1
            worst = min(failing, key=lambda v: SEVERITIES.index(v.severity)).severity
            failure = ET.SubElement(case, "failure", type=worst,
                                    message=f"{len(failing)} violation(s) of {cid}: "
                                            f"{clause.summary}")
            failure.text = "\n".join(_text(v) for v in failing)
        rest = [v for v in found if v not in failing]
        if rest:
            ET.SubElement(case, "system-out").text = "\n".join(_text(v) for v in rest)
    suite.set("failures", str(failures))
    return suite


def _at_or_above(severity: str, fail_on: str) -> bool:
    if fail_on == "never":
        return False
    return SEVERITIES.index(severity) <= SEVERITIES.index(fail_on)


def _artifact_uri(source: str) -> Optional[str]:
    """The artifact URI of the stream: the URL, or the file path in URI form (relative paths
    stay relative, as SARIF allows); None for stdin."""
    if source == "<stdin>" or source == "<input>":
        return None
    if "://" in source:
        return source
    from urllib.parse import quote
    return quote(source.replace(os.sep, "/"))


def to_sarif(reports: Reports, fail_on: str = "error", version: Optional[str] = None) -> dict:
    """The report(s) as a SARIF 2.1.0 log (a JSON object; see the module docstring), one run
    per input; ``version``: the tool's (default
    :func:`counterexamples.lint.linter.tool_version`)."""
    return {"$schema": SARIF_SCHEMA_URI, "version": "2.1.0",
            "runs": [_sarif_run(r, fail_on, version) for r in _many(reports)]}


def _sarif_run(report: LintReport, fail_on: str, version: Optional[str]) -> dict:
    """One input's SARIF ``run``."""
    release = version or tool_version()
    checked = list(clauses_checked())
    checked += [v.clause for v in report.violations if v.clause not in checked]
    checked = list(dict.fromkeys(checked))
    index = {cid: i for i, cid in enumerate(checked)}
    rules = []
    for cid in checked:
        c = clause_of(cid)
        rules.append({
            "id": cid, "name": cid.replace("-", " ").title().replace(" ", ""),
            "shortDescription": {"text": c.summary},
            "defaultConfiguration": {"level": _LEVEL[severity_of(c)]},
            "properties": {"keyword": c.keyword, "actor": c.actor, "page": c.page,
                           "section": c.section, "notes": list(c.n_ids),
                           "tags": ["ag-ui", "activity-check", c.page]},
        })
    uri = _artifact_uri(report.source)
    results = []
    for v in report.violations:
        result: dict = {
            "ruleId": v.clause, "ruleIndex": index[v.clause], "level": _LEVEL[v.severity],
            "message": {"text": _text(v)},
            "properties": {"kind": v.kind, "eventIndex": v.event_index, "pointer": v.pointer,
                           "eventType": v.event_type,
                           "readings": None if v.readings is None else list(v.readings),
                           "relatedEventIndex": v.related_index},
        }
        if uri is not None:
            location: dict = {"physicalLocation": {"artifactLocation": {"uri": uri}}}
            if v.line is not None:
                location["physicalLocation"]["region"] = {"startLine": v.line}
            name = _where(v) + (f" {v.pointer}" if v.pointer else "")
            location["logicalLocations"] = [{"name": name, "kind": "element"}]
            result["locations"] = [location]
        results.append(result)
    run: dict = {
        "tool": {"driver": {"name": "activity-check lint", "version": release,
                            "semanticVersion": release, "rules": rules}},
        "results": results,
        "invocations": [{"executionSuccessful": True,
                         "properties": {"failOn": fail_on, "failed": report.fails(fail_on),
                                        "events": report.events,
                                        "format": report.input_format,
                                        "readings": report.reading_names()}}],
        "columnKind": "unicodeCodePoints",
    }
    if uri is not None:
        run["artifacts"] = [{"location": {"uri": uri}}]
    return run


def render_pretty(reports: Reports, con, fail_on: str = "error") -> None:
    """Print the report(s) on the rich console ``con`` (every stream-supplied string escaped),
    for several inputs each in turn, then a line of totals."""
    many = _many(reports)
    for report in many:
        _pretty_one(report, con, fail_on)
    if len(many) > 1:
        bad = sum(1 for r in many if not r.conformant)
        con.print(f"{len(many)} inputs: {len(many) - bad} conformant, {bad} not conformant; "
                  f"{sum(r.count('error') for r in many)} error(s), "
                  f"{sum(r.count('warning') for r in many)} warning(s)")


def _pretty_one(report: LintReport, con, fail_on: str) -> None:
    """One input's report on ``con``: each violation's first line says where and what is wrong
    (the detail), its second the clause's text. Every string is shown as data: markup escaped,
    control characters written as escapes, long values cut (:func:`model.text.visible`; the
    other formats keep them whole)."""
    from rich.markup import escape as markup_escape
    from model.text import visible

    def escape(text: str) -> str:
        return markup_escape(visible(text))
    judged = f"under {report.reading}" if report.reading else \
        f"under every producer reading ({len(report.readings)}: each combination of the " \
        f"options of {', '.join(PRODUCER_KNOBS)})"
    def say(markup: str, indent: int) -> None:
        print_hanging(con, markup, indent)
    say(f"[bold]{escape(report.source)}[/bold]: {report.events} events "
        f"({report.input_format}), {judged}", 4)
    for note in report.notes:
        at = "" if note["line"] is None else f"line {note['line']}: "
        say(f"  [dim]note: {at}{escape(note['text'])}[/dim]", 8)
    for v in report.violations:
        colour = "red" if v.severity == "error" else "yellow"
        head = f"  {escape(_where(v))}: [{colour}]{v.severity}[/{colour}] [bold]{v.clause}" \
               f"[/bold] ({escape(v.keyword)})"
        if v.event_type:
            head += f" {escape(v.event_type)}"
        if v.pointer:
            head += f" [cyan]{escape(v.pointer)}[/cyan]"
        say(f"{head}: {escape(v.detail or v.message)}", 6)
        if v.detail:
            say(f"      [dim]clause: {escape(v.message)}[/dim]", 14)
        if v.readings is not None:
            say(f"      [dim]only under {escape('; '.join(v.readings))}[/dim]", 17)
    errors, warnings = report.count("error"), report.count("warning")
    verdict = "conformant" if report.conformant else "not conformant"
    if report.conformant and warnings:
        verdict += " (with warnings)"
    under = report.conformant_under()
    if not report.conformant and under and report.reading is None:
        verdict += f"; conformant under {'; '.join(_merged_names(report, under))}"
    say(f"{errors} error(s), {warnings} warning(s): {escape(verdict)}"
        + ("" if fail_on == "error" else f" (--fail-on {fail_on})"), 2)


def print_hanging(con, markup: str, indent: int) -> None:
    """Print rich ``markup`` on ``con`` as one paragraph: whole when the console does not wrap
    (``soft_wrap``: a file, ``--wide``), else folded at spaces within the console's width with
    every line after the first indented by ``indent`` spaces, so that a folded violation still
    reads as one block under its event (issue 39 item 5). Widths are terminal columns
    (:func:`model.text.fold_spans`: a wide character counts two), and a word (a clause,
    property or finding id, a message id) is never broken: one wider than the room left
    stands alone on its line, as wide as it is."""
    from rich.text import Text
    from model.text import fold_spans
    text = Text.from_markup(markup)
    if con.soft_wrap:
        con.print(text)
        return
    spans = fold_spans(text.plain, con.width, 0, indent) or [(0, 0)]
    for k, (start, end) in enumerate(spans):
        line = text[start:end]
        # printed as folded here: the console neither wraps nor crops a line again
        con.print(Text(" " * indent) + line if k else line, soft_wrap=True)


def _merged_names(report: LintReport, names: list[str]) -> list[str]:
    """``names`` (complete producer readings of ``report``) merged to the fewest knobs, as the
    violations' readings are (``Q2=continues`` for the twelve readings that take it)."""
    wanted = set(names)
    chosen = [a for a in report.readings if describe_assignment(a) in wanted]
    return [describe_assignment(a) for a in _merged(chosen)]


def render(report: Reports, fmt: str, fail_on: str = "error",
           version: Optional[str] = None) -> str:
    """The report(s) as text in ``fmt`` (one of :data:`FORMATS`; ``pretty`` as plain text, as
    written to a file). Raises ValueError for another format."""
    if fmt == "json":
        return to_json(report, fail_on, version)
    if fmt == "junit":
        return to_junit(report, fail_on)
    if fmt == "sarif":
        return json.dumps(to_sarif(report, fail_on, version), indent=2,
                          ensure_ascii=False) + "\n"
    if fmt == "pretty":
        import io
        from rich.console import Console
        buffer = io.StringIO()
        render_pretty(report, Console(file=buffer, width=160, no_color=True, highlight=False,
                                      soft_wrap=True), fail_on)
        return buffer.getvalue()
    raise ValueError(f"unknown format {fmt!r}; formats: {', '.join(FORMATS)}")
