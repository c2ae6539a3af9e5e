"""``lint`` over the fixture corpus of ag-ui-validate (a stream validator for AG-UI written by
others; PyPI, MIT, pinned in the dev extra), read from the installed package, never copied.

Every fixture gets a verdict in all four formats; the verdicts are pinned below, and where ours
differs from the fixture's the reason is given (the draft pages decide, or the rule is outside
them). Transport fixtures (``scenario.json``: timed HTTP chunks) are linted as the body their
chunks make; timing and content type have no meaning for a recorded body.
"""
from __future__ import annotations

import json
from importlib import resources
from xml.etree import ElementTree as ET

import jsonschema
import pytest

from counterexamples.lint.linter import lint_stream
from counterexamples.lint.formats import FORMATS, SARIF_SCHEMA_PATH, render, to_sarif
from counterexamples.lint.inputs import parse_stream_text

pytest.importorskip("ag_ui_validate", reason="ag-ui-validate (the dev extra) is not installed")

FIXTURES = resources.files("ag_ui_validate") / "spec" / "fixtures"

OURS: dict[str, list[tuple[str, object]]] = {
    "AGUI001-first-event-not-run-started": [("LIF-STREAM-START", 0), ("LIF-STREAM-START", 1),
                                            ("LIF-STREAM-START", 2), ("LIF-STREAM-START", 3)],
    "AGUI002-duplicate-run-started": [("LIF-ONE-ACTIVE", 1)],
    "AGUI003-run-never-terminated": [("LIF-RUN-CLOSE", None)],
    "AGUI004-event-after-terminal": [("LIF-AFTER-CLOSE", 2)],
    "AGUI005-finished-and-error": [],
    "AGUI006-step-finished-unmatched": [("LIF-STEP-FINISH-OPENED", 1)],
    "AGUI007-step-unterminated": [("LIF-STEP-CLOSE-BEFORE-FINISH", 2)],
    "AGUI008-unstable-run-ids": [],
    "AGUI101-content-without-start": [],
    "AGUI102-end-without-start": [],
    "AGUI103-message-unterminated": [("LIF-CLOSE-BEFORE-FINISH", 3)],
    "AGUI104-duplicate-message-id": [("LIF-RESTATE-SNAPSHOT", 4), ("LIF-CLOSE-BEFORE-FINISH", 5)],
    "AGUI105-empty-content-delta": [],
    "AGUI106-interleaved-same-message-id": [("LIF-RESTATE-SNAPSHOT", 2)],
    "AGUI201-args-without-start": [],
    "AGUI202-end-without-start": [],
    "AGUI203-unterminated-tool-call": [("LIF-CLOSE-BEFORE-FINISH", 3)],
    "AGUI204-args-not-json": [],
    "AGUI205-duplicate-tool-call-id": [("LIF-CLOSE-BEFORE-FINISH", 4)],
    "AGUI206-result-before-end": [],
    "AGUI207-result-unknown-id": [],
    "AGUI208-unknown-parent-message-id": [],
    "AGUI301-delta-before-snapshot": [],
    "AGUI302-delta-failed-to-apply": [],
    "AGUI303-invalid-patch-document": [],
    "AGUI304-midrun-snapshot-discards-deltas": [],
    "AGUI305-shared-state-never-established": [],
    "AGUI401-reasoning-content-without-start": [],
    "AGUI402-reasoning-unterminated": [],
    "AGUI501-missing-data-prefix": [],
    "AGUI502-payload-not-json": [("PRC-MALFORMED-FATAL", 1)],
    "AGUI503-unknown-event-type": [("PRC-NO-PRIVATE-TYPES", 1)],
    "AGUI504-schema-violation": [("PRC-MALFORMED-FATAL", 1)],
    "AGUI505-unexpected-content-type": [],
    "AGUI506-keepalive-gap": [],
    "AGUI507-buffered-response": [],
    "AGUI508-connection-dropped": [("LIF-RUN-CLOSE", None)],
    "AGUI601-duplicate-subagent-started": [("SUB-STARTED-ACTIVE", 2)],
    "AGUI602-finished-without-start": [],
    "AGUI603-error-without-start": [],
    "AGUI604-subagent-unterminated": [("LIF-CLOSE-BEFORE-FINISH", 2)],
    "AGUI605-unknown-parent-subagent-run-id": [("SUB-PARENT-ANNOUNCED", 1)],
    "AGUI606-continuation-owner-mismatch": [("SUB-OWNER-AGREE", 3)],
    "AGUI901-raw-wraps-typed-event": [],
    "AGUI902-no-timestamps": [],
    "AGUI903-custom-name-not-namespaced": [],
}
"""Our violations, ``(clause, event index)`` (None: at the end of the stream), per invalid
fixture; every ``valid/`` fixture has none."""

DIFFERS: dict[str, str] = {
    "AGUI005-finished-and-error": "the draft admits RUN_ERROR after RUN_FINISHED (LIF, After a "
                                  "run closes: a failure surfacing after success)",
    "AGUI101-content-without-start": "out of scope: the text-message page is not among the "
                                     "draft pages the model encodes",
    "AGUI102-end-without-start": "out of scope: the text-message page",
    "AGUI201-args-without-start": "out of scope: the tool-call page",
    "AGUI202-end-without-start": "out of scope: the tool-call page",
    "AGUI204-args-not-json": "out of scope: the tool-call page (and the lifecycle page leaves "
                             "unparsable arguments to the application)",
    "AGUI207-result-unknown-id": "out of scope: the tool-call page",
    "AGUI302-delta-failed-to-apply": "a patch that does not apply is survivable and surfaced by "
                                     "the consumer (SNP); no producer clause forbids sending it",
    "AGUI303-invalid-patch-document": "an unrecognised op is an unknown union member, not a "
                                      "malformed value (PRC, SNP-UNKNOWN-OP, Q20)",
    "AGUI401-reasoning-content-without-start": "out of scope: the reasoning page",
    "AGUI501-missing-data-prefix": "a transport framing fault: lint notes the line an SSE "
                                   "reader ignores (the transports page is not modelled)",
    "AGUI602-finished-without-start": "the subagents page forbids no close of an unannounced "
                                      "invocation (producers MAY attribute without announcing)",
    "AGUI603-error-without-start": "as AGUI602",
}
"""Fixtures the validator calls erroneous and lint conformant, and why (its catalog is not the
draft; where the draft decides, the draft wins). The reverse (lint errors on a fixture whose
rule is only a warning there): AGUI605 and AGUI606, which the subagents page makes MUSTs."""


def _invalid():
    return sorted((d for d in (FIXTURES / "invalid").iterdir() if d.is_dir()),
                  key=lambda d: d.name)


def _valid():
    return sorted((f for f in (FIXTURES / "valid").iterdir() if f.name.endswith(".jsonl")),
                  key=lambda f: f.name)


def _body(fixture) -> str:
    stream = fixture / "stream.jsonl"
    if stream.is_file():
        return stream.read_text(encoding="utf-8")
    scenario = json.loads((fixture / "scenario.json").read_text(encoding="utf-8"))
    return "".join(chunk["text"] for chunk in scenario["chunks"])


def _lint(body: str, name: str):
    found = parse_stream_text(body, name)
    return lint_stream(found.entries, None, found.source, found.input_format, found.notes)


def _all_formats(report) -> None:
    for fmt in FORMATS:
        assert render(report, fmt)
    with open(SARIF_SCHEMA_PATH, encoding="utf-8") as fh:
        jsonschema.Draft4Validator(json.load(fh)).validate(to_sarif(report))
    root = ET.fromstring(render(report, "junit"))
    failures = int(root.get("failures"))
    assert failures == len({v.clause for v in report.violations if v.severity == "error"})


def test_the_corpus_is_where_we_expect_it():
    assert [d.name for d in _invalid()] == sorted(OURS)
    assert len(_valid()) == 7


@pytest.mark.parametrize("fixture", _invalid(), ids=lambda d: d.name)
def test_each_invalid_fixture_gets_its_verdict_in_all_formats(fixture):
    report = _lint(_body(fixture), fixture.name)
    assert [(v.clause, v.event_index) for v in report.violations] == OURS[fixture.name]
    _all_formats(report)
    expected = json.loads((fixture / "expected.json").read_text(encoding="utf-8"))
    theirs_error = any(d["severity"] == "error" for d in expected)
    if theirs_error and report.conformant:
        assert fixture.name in DIFFERS
    else:
        assert fixture.name not in DIFFERS
    if fixture.name == "AGUI501-missing-data-prefix":
        assert [n["line"] for n in report.notes] == [3]


@pytest.mark.parametrize("fixture", _valid(), ids=lambda f: f.name)
def test_each_valid_fixture_is_conformant_in_all_formats(fixture):
    report = _lint(fixture.read_text(encoding="utf-8"), fixture.name)
    assert report.violations == () and report.conformant
    _all_formats(report)
