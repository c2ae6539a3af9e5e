"""A peer's test corpus side by side (issue 19, item 5): ag-ui-validate's fixtures against the
model.

``ag-ui-validate`` (PyPI, MIT; pinned in the dev extra) is a stream validator for AG-UI written by
others. Its package ships a fixture corpus (``spec/fixtures/``): ``invalid/<RULE>-<name>/``
directories, each a stream (``stream.jsonl``, or ``scenario.json``: timed HTTP chunks whose text
is an SSE body) with the diagnostics its validator expects (``expected.json``), and ``valid/``
streams. The corpus is read from the installed package, never copied.

:func:`compare_corpus` runs every fixture through the two sides of the model:

* the producer monitor, over the whole stream (:func:`counterexamples.lint.linter.lint_stream`): the
  verdict the fixtures are about, since each judges a producer's stream;
* the consumer under the literal reading, as ``activity-check replay`` does
  (:func:`model.verdict.evaluate` under ``draft``; a JSON-lines fixture is read by replay's own
  reader, :func:`model.wire.parse_trace_text`, which refuses a file with a line that is not JSON;
  an SSE body is framed as lint frames it): what a draft consumer makes of the stream.

Each fixture then falls in exactly one of :data:`CATEGORIES`:

* ``out-of-scope``: its rule belongs to a page the model does not encode (text messages, tool
  calls, reasoning, passthrough events, the HTTP transports), with the reason
  (:data:`OUT_OF_SCOPE`);
* ``agrees``: the producer monitor's severity is the fixture's (``error``, ``warning``, or none:
  an ``info`` diagnostic is advice, not a violation);
* ``differs-argued``: it is not, and :data:`ARGUED` gives the page and section that decide, and
  why the draft's answer stands (the validator's catalog is not the draft: where the draft says
  warn and go on and the fixture says error, the draft wins).

A fixture that differs without an argument is ``differs-unargued`` (the tests refuse it), and an
argument kept for a fixture that agrees is stale (refused too). :func:`markdown_table` renders
the rows as the table in docs/lint.md, which ``tests/test_validate_fixtures.py`` compares with what this
module computes. ``python -m counterexamples.peers.validators`` prints the table.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Optional

from model.readings import DRAFT
from model.verdict import evaluate
from model.wire import TraceFormatError, loads_json, parse_event, parse_trace_text, read_text

__all__ = ["FixtureRow", "CATEGORIES", "OUT_OF_SCOPE", "ARGUED", "NOTES", "PACKAGE",
           "fixtures_root", "compare_fixture", "compare_corpus", "markdown_table", "counts",
           "README_START", "README_END"]

PACKAGE = "ag_ui_validate"
"""The peer's import name (the distribution ``ag-ui-validate``)."""

CATEGORIES = ("agrees", "differs-argued", "out-of-scope")
"""Where each fixture falls, in the table's order of counting."""

README_START = "<!-- validate-fixtures:start (generated: python -m counterexamples.peers.validators) -->"
README_END = "<!-- validate-fixtures:end -->"
"""The markers around the generated table in docs/lint.md."""

_TEXT = "Text Messages page (not among the draft pages the model encodes)"
_TOOLS = "Tool Calls page (not among the draft pages the model encodes)"
_HTTP = "HTTP + SSE transport page (not encoded; a recorded body has no timing or content type)"

OUT_OF_SCOPE: dict[str, str] = {
    "AGUI101": f"{_TEXT}: content before its TEXT_MESSAGE_START (replay drops the chunk with a "
               "warning, the consumer's choice, no clause)",
    "AGUI102": f"{_TEXT}: an end before its start",
    "AGUI105": f"{_TEXT}: an empty content delta",
    "AGUI201": f"{_TOOLS}: arguments before their TOOL_CALL_START",
    "AGUI202": f"{_TOOLS}: an end before its start",
    "AGUI204": f"{_TOOLS}: arguments that do not parse as JSON",
    "AGUI206": f"{_TOOLS}: a result before the call's end",
    "AGUI207": f"{_TOOLS}: a result for an unknown call",
    "AGUI208": f"{_TOOLS}: an unknown parentMessageId",
    "AGUI401": "Reasoning page (not encoded; REASONING_* pass through unread)",
    "AGUI402": "Reasoning page (not encoded)",
    "AGUI501": f"{_HTTP}: an event without its 'data:' prefix (lint notes the line an SSE reader "
               "ignores)",
    "AGUI505": f"{_HTTP}: the response's content type",
    "AGUI506": f"{_HTTP}: keep-alive timing",
    "AGUI507": f"{_HTTP}: a buffered response",
    "AGUI901": "Raw and custom events page (not encoded; RAW passes through unread)",
    "AGUI903": "Raw and custom events page (not encoded): CUSTOM event naming",
}
"""Rules of the validator's catalog that belong to pages the model does not encode, and why."""

ARGUED: dict[str, str] = {
    "AGUI005": "lifecycle, After a run closes: a producer MAY send RUN_ERROR after RUN_FINISHED (a "
               "failure surfacing after success) and the consumer treats the run as failed, as "
               "replay does (run errored)",
    "AGUI008": "lifecycle, RUN_STARTED and RUN_FINISHED: no rule ties RUN_FINISHED's runId to "
               "RUN_STARTED's; the pages make no violation of it",
    "AGUI302": "snapshots, When a patch does not apply (state, STATE_DELTA: the pattern applies "
               "unchanged): a well-formed patch that fails is surfaced with a warning and the "
               "consumer MAY go on with its prior value (replay: STATE_PATCH_FAILED); no producer "
               "clause forbids sending it. Warn and go on: the draft wins",
    "AGUI303": "snapshots, When a patch does not apply, and processing, the list rule: an op RFC "
               "6902 does not define is unrecognised, not malformed; it is dropped with a warning "
               "and the run survives (replay: UNKNOWN_PATCH_OP_DROPPED). The draft wins",
    "AGUI305": "state, STATE_DELTA (the baseline at the start of a run is the input's state) and "
               "events index (only the run lifecycle is mandatory for a producer): no page asks "
               "for a STATE_SNAPSHOT",
    "AGUI602": "subagents, Lifecycle: a producer MAY attribute events without announcing and a "
               "consumer MUST accept that; no rule forbids closing an invocation that was not "
               "announced",
    "AGUI603": "subagents, Lifecycle: as AGUI602, for SUBAGENT_ERROR",
    "AGUI605": "subagents, Nesting and parallelism: a producer MUST NOT name a parent invocation "
               "not announced in this run (SUB-PARENT-ANNOUNCED): an error, not a warning",
    "AGUI606": "subagents, Ownership: a continuation MUST NOT carry a tag that disagrees with its "
               "opener (SUB-OWNER-AGREE), and a consumer MUST reject it (replay fails the run): an "
               "error, not a warning",
}
"""Fixtures whose verdict differs from ours, with the page and section that decide and why the
draft's answer stands."""

NOTES: dict[str, str] = {
    "AGUI003": "lifecycle, The run: the stream ends with the run active (LIF-RUN-CLOSE); replay "
               "cannot tell an ended stream from a paused one",
    "AGUI104": "lifecycle, Several runs on one stream: a used id streamed again appends instead of "
               "restating (LIF-RESTATE-SNAPSHOT)",
    "AGUI106": "as AGUI104",
    "AGUI205": "the duplicate id itself is the Tool Calls page's; the lifecycle page's rule catches "
               "the second call, still open at RUN_FINISHED",
    "AGUI508": "the transport fault is out of scope; the body it leaves ends with the run active "
               "(LIF-RUN-CLOSE)",
    "AGUI301": "state, STATE_DELTA: before any snapshot the baseline is the input's state",
    "AGUI304": "state, STATE_SNAPSHOT: a snapshot replaces the state wholesale",
    "AGUI503": "processing, What a producer must not do (PRC-NO-PRIVATE-TYPES); the consumer "
               "drops the event and goes on",
    "AGUI902": "event model, Events: timestamp is OPTIONAL",
}
"""Remarks on fixtures that agree (shown in the table's last column)."""


@dataclass(frozen=True)
class FixtureRow:
    """One fixture side by side.

    Attributes:
        fixture: ``invalid/<directory>`` or ``valid/<file>``.
        rule: the validator's rule id (``AGUI005``), or ``valid``.
        theirs: the worst severity ``expected.json`` lists (``error``, ``warning``, ``info``), or
            ``none``.
        lint: the producer monitor's verdict: ``error``, ``warning`` or ``none``.
        lint_clauses: the clauses it reports, in first-seen order.
        replay: what the draft consumer made of it (``fatal CODE at i``, the warnings' codes, the
            run's end state, or why replay refuses the file).
        category: one of :data:`CATEGORIES`, or ``differs-unargued``.
        why: the reason (out of scope), the argument (differs), or a note (agrees; may be empty).
    """

    fixture: str
    rule: str
    theirs: str
    lint: str
    lint_clauses: tuple[str, ...]
    replay: str
    category: str
    why: str


def fixtures_root():
    """The installed package's ``spec/fixtures`` directory (an importlib resources traversable).

    Raises:
        ModuleNotFoundError: ag-ui-validate is not installed.
    """
    from importlib import resources
    return resources.files(PACKAGE) / "spec" / "fixtures"


def _read(path) -> str:
    """A fixture file's text: a name from a listing, so a regular file only, never through a
    link, bounded (:func:`model.wire.read_text`; TraceFormatError naming the file)."""
    return read_text(os.fspath(path), listed=True)


def _body(fixture) -> tuple[str, str]:
    """``(text, form)`` of an invalid fixture's stream: ``jsonl`` (``stream.jsonl``) or ``sse``
    (the chunks of ``scenario.json`` joined: the body a client reads)."""
    stream = fixture / "stream.jsonl"
    if stream.is_file():
        return _read(stream), "jsonl"
    scenario = loads_json(_read(fixture / "scenario.json"))
    return "".join(chunk["text"] for chunk in scenario["chunks"]), "sse"


def _severity(expected: list[dict]) -> str:
    order = ("error", "warning", "info")
    found = {d.get("severity") for d in expected}
    return next((s for s in order if s in found), "none")


def _lint(text: str, name: str):
    from counterexamples.lint.linter import lint_stream
    from counterexamples.lint.inputs import parse_stream_text
    found = parse_stream_text(text, name)
    return lint_stream(found.entries, None, found.source, found.input_format, found.notes)


def _replay(text: str, form: str, name: str) -> str:
    """The draft consumer's verdict, in one phrase."""
    if form == "jsonl":
        try:
            events = parse_trace_text(text, name).events
        except TraceFormatError as exc:
            where = f"line {exc.line}: " if exc.line is not None else ""
            return f"refused (exit 2): {where}{exc.reason}"
    else:
        from counterexamples.lint.inputs import parse_stream_text
        entries = parse_stream_text(text, name).entries
        bad = next((i for i, e in enumerate(entries) if e.problem is not None
                    or not isinstance(e.value, dict)), None)
        if bad is not None:
            return f"refused (exit 2): event {bad} is not a JSON object"
        events = tuple(parse_event(e.value) for e in entries)
    verdict = evaluate(events, DRAFT)
    if verdict.fatal is not None:
        at, fatal = verdict.fatal
        return f"fatal {fatal.code} at {at}"
    codes = list(dict.fromkeys(w.code for _, w in verdict.warnings))
    run = "rejected" if verdict.state.halted else verdict.state.run
    return (f"warns {', '.join(codes)}; " if codes else "") + f"run {run}"


def _verdict(report) -> str:
    if report.count("error"):
        return "error"
    return "warning" if report.count("warning") else "none"


def _category(rule: str, theirs: str, ours: str) -> tuple[str, str]:
    if rule in OUT_OF_SCOPE:
        return "out-of-scope", OUT_OF_SCOPE[rule]
    if (theirs if theirs != "info" else "none") == ours:
        return "agrees", NOTES.get(rule, "")
    if rule in ARGUED:
        return "differs-argued", ARGUED[rule]
    return "differs-unargued", ""


def compare_fixture(name: str, text: str, form: str, expected: list[dict],
                    rule: Optional[str] = None) -> FixtureRow:
    """One fixture's row: ``name`` (``invalid/<dir>`` or ``valid/<file>``), its stream text and
    form (``jsonl`` or ``sse``), its expected diagnostics, and its rule id (None: the first
    diagnostic's, or ``valid``)."""
    report = _lint(text, name)
    if rule is None:
        rule = expected[0]["rule"] if expected else "valid"
    theirs, ours = _severity(expected), _verdict(report)
    category, why = _category(rule, theirs, ours)
    return FixtureRow(name, rule, theirs, ours, tuple(report.violated_clauses()),
                      _replay(text, form, name), category, why)


def compare_corpus(root: Any = None) -> tuple[FixtureRow, ...]:
    """Every fixture of the corpus at ``root`` (default :func:`fixtures_root`): the invalid ones
    by directory name, then the valid ones by file name.

    Raises:
        ModuleNotFoundError: ag-ui-validate is not installed (and no ``root`` given).
    """
    root = fixtures_root() if root is None else root
    rows = []
    for fixture in sorted((d for d in (root / "invalid").iterdir() if d.is_dir()),
                          key=lambda d: d.name):
        text, form = _body(fixture)
        expected = loads_json(_read(fixture / "expected.json"))
        rows.append(compare_fixture(f"invalid/{fixture.name}", text, form, expected,
                                    fixture.name.split("-", 1)[0]))
    for stream in sorted((f for f in (root / "valid").iterdir() if f.name.endswith(".jsonl")),
                         key=lambda f: f.name):
        sidecar = root / "valid" / stream.name.replace(".jsonl", ".expected.json")
        expected = loads_json(_read(sidecar)) if sidecar.is_file() else []
        rows.append(compare_fixture(f"valid/{stream.name}", _read(stream),
                                    "jsonl", expected, "valid"))
    return tuple(rows)


def counts(rows) -> dict[str, int]:
    """How many rows fall in each category (:data:`CATEGORIES`, then any other seen)."""
    out = {c: 0 for c in CATEGORIES}
    for row in rows:
        out[row.category] = out.get(row.category, 0) + 1
    return out


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def markdown_table(rows) -> str:
    """The rows as a Markdown table (docs/lint.md's), preceded by one line of counts."""
    n = counts(rows)
    lines = [f"{len(rows)} fixtures: {n['agrees']} agree, {n['differs-argued']} differ "
             f"(argued), {n['out-of-scope']} out of scope.", "",
             "| fixture | ag-ui-validate | lint (producer monitor) | replay (consumer, draft) "
             "| verdict | page, section: why |",
             "| --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        ours = r.lint if not r.lint_clauses else f"{r.lint}: {', '.join(r.lint_clauses)}"
        lines.append(f"| {_cell(r.fixture)} | {r.theirs} | {_cell(ours)} | {_cell(r.replay)} "
                     f"| {r.category} | {_cell(r.why)} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":  # pragma: no cover - prints docs/lint.md's table
    print(markdown_table(compare_corpus()), end="")
