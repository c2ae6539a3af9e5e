"""The lint report's formats (issue 22): SARIF 2.1.0 validated against the vendored OASIS schema,
JUnit XML parsed as CI reads it, the JSON report against its documented schema, and the pretty
text with every stream-supplied string escaped."""
from __future__ import annotations

import json
from xml.etree import ElementTree as ET

import jsonschema
import pytest

from counterexamples.lint.linter import StreamEntry, clauses_checked, lint_stream, lint_wire
from counterexamples.lint.formats import (FORMATS, REPORT_SCHEMA_PATH, SARIF_SCHEMA_PATH,
                                          SARIF_SCHEMA_URI, render, to_junit, to_sarif)
from wirekit import RF, RS, delta, snap


def sarif_validator():
    with open(SARIF_SCHEMA_PATH, encoding="utf-8") as fh:
        schema = json.load(fh)
    return jsonschema.Draft4Validator(schema)


def report_validator():
    with open(REPORT_SCHEMA_PATH, encoding="utf-8") as fh:
        return jsonschema.Draft202012Validator(json.load(fh))


def mixed_report(source="stream.jsonl"):
    """Errors, a warning, readings, an undecodable line and end-of-stream violations."""
    wire = [RS, snap(subagentRunId="s1"), snap(replace=False), delta("ghost"), snap(x=1),
            {"type": "STEP_STARTED", "stepName": "[bold]plan[/bold]"}]
    entries = [StreamEntry(w, i + 1) for i, w in enumerate(wire)]
    entries.insert(3, StreamEntry(None, 4, "not valid JSON: Expecting value (column 2)"))
    return lint_stream(entries, None, source, "jsonl")


def test_the_vendored_sarif_schema_is_the_oasis_one():
    with open(SARIF_SCHEMA_PATH, encoding="utf-8") as fh:
        schema = json.load(fh)
    assert schema["id"] == SARIF_SCHEMA_URI
    assert schema["$schema"] == "http://json-schema.org/draft-04/schema#"
    jsonschema.Draft4Validator.check_schema(schema)


@pytest.mark.parametrize("source", ["stream.jsonl", "dir with space/s.sse", "<stdin>",
                                    "http://127.0.0.1:8000/agent"])
def test_sarif_validates_against_the_schema(source):
    log = to_sarif(mixed_report(source))
    errors = sorted(sarif_validator().iter_errors(log), key=lambda e: list(e.path))
    assert not errors, [f"{list(e.path)}: {e.message}" for e in errors]
    run = log["runs"][0]
    assert log["version"] == "2.1.0" and log["$schema"] == SARIF_SCHEMA_URI
    rules = [r["id"] for r in run["tool"]["driver"]["rules"]]
    assert rules == list(clauses_checked())
    results = run["results"]
    assert [(r["ruleId"], r["level"]) for r in results] == [
        ("ACT-ATTR-AGREE", "error"), ("PRC-MALFORMED-FATAL", "error"),
        ("ACT-DELTA-BASELINE", "error"), ("SNP-BASELINE", "error"),
        ("SCH-ACTIVITY-SNAPSHOT", "warning"), ("LIF-STEP-CLOSE-BEFORE-FINISH", "error"),
        ("LIF-RUN-CLOSE", "error")]
    assert all(rules[r["ruleIndex"]] == r["ruleId"] for r in results)
    first = results[0]
    assert first["properties"]["readings"] == ["Q2=parent"]
    assert first["properties"]["pointer"] == "/subagentRunId"
    if source == "<stdin>":
        assert "locations" not in first
    else:
        location = first["locations"][0]["physicalLocation"]
        assert location["region"] == {"startLine": 3}
        assert location["artifactLocation"]["uri"] == source.replace(" ", "%20")
        end = results[-1]["locations"][0]["physicalLocation"]
        assert "region" not in end       # the end of the stream has no line


def test_sarif_of_a_clean_stream_validates_too():
    log = to_sarif(lint_wire([RS, RF]))
    assert not list(sarif_validator().iter_errors(log))
    assert log["runs"][0]["results"] == []


def test_junit_has_one_testcase_per_clause_and_failures_for_the_violated():
    report = mixed_report()
    root = ET.fromstring(to_junit(report))
    assert root.tag == "testsuites"
    (suite,) = root
    cases = suite.findall("testcase")
    assert [c.get("name").split(" ")[0] for c in cases] == list(clauses_checked())
    failed = {c.get("name").split(" ")[0]: c.find("failure") for c in cases
              if c.find("failure") is not None}
    assert set(failed) == {"ACT-ATTR-AGREE", "PRC-MALFORMED-FATAL", "ACT-DELTA-BASELINE",
                           "SNP-BASELINE", "LIF-STEP-CLOSE-BEFORE-FINISH", "LIF-RUN-CLOSE"}
    assert suite.get("tests") == str(len(cases)) and suite.get("failures") == "6"
    assert root.get("failures") == "6"
    assert failed["ACT-ATTR-AGREE"].get("type") == "error"
    assert "event 2 (line 3)" in failed["ACT-ATTR-AGREE"].text
    assert "only under Q2=parent" in failed["ACT-ATTR-AGREE"].text
    # the warning is below --fail-on error: shown, not failed
    (warned,) = [c for c in cases if c.get("name").startswith("SCH-ACTIVITY-SNAPSHOT")]
    assert warned.find("failure") is None and "/x" in warned.find("system-out").text
    # --fail-on warning fails it too; never fails nothing
    strict = ET.fromstring(to_junit(report, "warning"))
    assert strict.get("failures") == "7"
    assert ET.fromstring(to_junit(report, "never")).get("failures") == "0"


def test_json_report_follows_its_schema():
    for report in (mixed_report(), lint_wire([RS, RF])):
        doc = json.loads(render(report, "json"))
        errors = list(report_validator().iter_errors(doc))
        assert not errors, [e.message for e in errors]
    doc = json.loads(render(mixed_report(), "json"))
    assert list(doc) == ["tool", "version", "schema", "source", "format", "events", "reading",
                         "readings", "failOn", "failed", "conformant", "conformantUnder",
                         "counts", "clausesChecked", "violations", "notes"]
    assert doc["counts"] == {"error": 6, "warning": 1} and doc["events"] == 7
    assert doc["violations"][0] == {
        "clause": "ACT-ATTR-AGREE", "keyword": "MUST", "severity": "error",
        "kind": "replace-false-owner-disagrees", "eventIndex": 2, "line": 3,
        "eventType": "ACTIVITY_SNAPSHOT", "pointer": "/subagentRunId",
        "message": doc["violations"][0]["message"], "detail": "parent vs owner s1",
        "readings": ["Q2=parent"], "relatedEventIndex": None}


def test_pretty_escapes_what_the_stream_says():
    text = render(mixed_report("[red]file[/red].jsonl"), "pretty")
    assert "[red]file[/red].jsonl" in text                       # shown, not interpreted
    assert "step '[bold]plan[/bold]' was never finished" in text
    assert "6 error(s), 1 warning(s): not conformant" in text
    assert "only under Q2=parent" in text
    with pytest.raises(ValueError, match="unknown format"):
        render(mixed_report(), "xml")
    assert FORMATS == ("pretty", "json", "junit", "sarif")


def test_pretty_names_the_readings_merged():
    from wirekit import RF, RS, snap
    report = lint_wire([RS, snap(subagentRunId="s1"), snap(replace=False), RF])
    text = render(report, "pretty")
    assert "under every producer reading (24: each combination of the options of Q2, " \
           "Q4-opener, Q12, Q17)" in text
    # the twelve readings with Q2=continues, said as one
    assert text.rstrip().endswith("1 error(s), 0 warning(s): not conformant; conformant under "
                                  "Q2=continues")
    assert len(report.conformant_under()) == 12
