"""Exports of findings (counterexamples/report/export.py and ``activity-check export``).

One ``activity-check run --examples 200`` per module provides the ambiguity findings; two
property findings are written next to them from zoo mutants (the run's reference consumer breaks
no property, so the run itself writes none). Every finding is exported in every format and
checked: ITF against a JSON Schema of ADR-015, Mermaid arrow by arrow, the pytest file by running
it, the JSON lines by reading them back.
"""
from __future__ import annotations

import glob
import json
import os
import re
import subprocess
import sys

import jsonschema
import pytest

from activity_check.cli import main
from counterexamples.report.export import (FORMATS, ITF_SCHEMA, ITF_VARS, export, load_finding,
                                    reading_of_class, to_itf, to_json, to_jsonl, to_mermaid,
                                    to_pytest)
from counterexamples.findings import (AmbiguityFinding, PeerDivergenceFinding, PropertyFinding,
                                      property_finding, write_finding)
from model.json_values import freeze
from model.wire import load_trace, parse_events, parse_trace_text
from properties.search.machines import check_trace_properties
from properties.zoo import MUTANT_BY_NAME

PROPERTY_CASES = {
    # mutant: trace on which it breaks a property
    "replace-false-overwrites": [
        {"type": "RUN_STARTED", "threadId": "t1", "runId": "r1"},
        {"type": "ACTIVITY_SNAPSHOT", "messageId": "act-1", "activityType": "A",
         "content": {"n": 0, "s": "a;b#c\"{}"}, "subagentRunId": "sub-1"},
        {"type": "ACTIVITY_SNAPSHOT", "messageId": "act-1", "activityType": "A",
         "content": {"n": 1.5}, "replace": False}],
    "crashes-on-empty-patch": [
        {"type": "RUN_STARTED", "threadId": "t1", "runId": "r1"},
        {"type": "ACTIVITY_SNAPSHOT", "messageId": "act-1", "activityType": "A",
         "content": {"n": 0}},
        {"type": "ACTIVITY_DELTA", "messageId": "act-1", "activityType": "A", "patch": []}],
}


@pytest.fixture(scope="module")
def findings(tmp_path_factory) -> list[tuple[str, dict]]:
    out = tmp_path_factory.mktemp("export-run")
    # the breadth-first cross-check (and resolve) at depth 3: findings on the same 19 questions
    # as at depth 4, in well under half the time (only the findings' formats are tested here)
    assert main(["run", "--examples", "200", "--bfs-depth", "3", "--out", str(out),
                 "--json"]) == 0
    directory = os.path.join(out, "findings")
    for name, wire in PROPERTY_CASES.items():
        events = parse_events(wire)
        violation = check_trace_properties(events, MUTANT_BY_NAME[name])
        assert violation is not None, name
        write_finding(property_finding(violation, events, name, "draft"), directory)
    # a peer that forgets everything: on a trace that leaves an activity, no reading agrees
    peer = out / "forgetful_peer.py"
    peer.write_text(FORGETFUL_PEER, encoding="utf-8")
    trace_file = out / "one.jsonl"
    trace_file.write_text("\n".join(json.dumps(e) for e in PROPERTY_CASES["crashes-on-empty-patch"])
                          + "\n", encoding="utf-8")
    peer_out = out / "peer"
    assert main(["peer", "check", "--adapter", f"{sys.executable} {peer}", "--out",
                 str(peer_out), str(trace_file)]) == 0
    paths = sorted(glob.glob(os.path.join(directory, "*.json")) +
                   glob.glob(os.path.join(peer_out, "findings", "*.json")))
    loaded = [(p, load_finding(p)) for p in paths]
    kinds = {f["kind"] for _, f in loaded}
    assert kinds == {"ambiguity", "property", "peer-divergence"}, kinds
    return loaded


FORGETFUL_PEER = """import json, sys
for line in sys.stdin:
    request = json.loads(line)
    print(json.dumps({"id": request["id"], "messages": [], "fatal": None, "warnings": None,
                      "runInput": None}), flush=True)
"""


def _canon(value) -> str:
    return freeze(value)


# --- every format -------------------------------------------------------------------------------

def test_every_format_exports_every_finding(findings):
    for path, finding in findings:
        for fmt in FORMATS:
            text = export(finding, fmt)
            assert text and text.endswith("\n"), (finding["id"], fmt)


def test_findings_load_as_their_kind_and_are_written_back_byte_for_byte(findings, tmp_path):
    """Each file (written by ``run``, ``peer check`` or the property finding writer) loads as
    its kind's type, and the one writer gives back the very bytes of its ``.json`` and
    ``.jsonl``; exporting the finding or its JSON document gives the same text."""
    types = {"ambiguity": AmbiguityFinding, "property": PropertyFinding,
             "peer-divergence": PeerDivergenceFinding}
    for path, finding in findings:
        assert type(finding) is types[finding["kind"]], path
        assert finding.id == os.path.basename(path)[:-len(".json")]
        json_path, jsonl_path = write_finding(finding, str(tmp_path))
        with open(json_path, "rb") as a, open(path, "rb") as b:
            assert a.read() == b.read(), path
        with open(jsonl_path, "rb") as a, open(path[:-len(".json")] + ".jsonl", "rb") as b:
            assert a.read() == b.read(), path
        for fmt in ("itf", "mermaid"):
            assert export(finding.to_json(), fmt) == export(finding, fmt), (path, fmt)


def test_jsonl_and_json_round_trip(findings, tmp_path):
    for path, finding in findings:
        text = to_jsonl(finding)
        lines = text.splitlines()
        assert len(lines) == len(finding["events"]), finding["id"]
        assert [_canon(json.loads(line)) for line in lines] == \
            [_canon(e) for e in finding["events"]], finding["id"]
        assert parse_trace_text(text).events == parse_events(finding["events"])
        file = tmp_path / (finding["id"] + ".jsonl")
        file.write_text(text, encoding="utf-8")
        assert load_trace(str(file)).events == parse_events(finding["events"])
        assert json.loads(to_json(finding)) == finding


# --- ITF ----------------------------------------------------------------------------------------

VALIDATOR = jsonschema.Draft202012Validator(ITF_SCHEMA)


def test_itf_schema_is_a_valid_schema_and_not_vacuous():
    jsonschema.Draft202012Validator.check_schema(ITF_SCHEMA)
    good = {"vars": ["x"], "states": [{"#meta": {"index": 0}, "x": {"#bigint": "-3"}}]}
    assert VALIDATOR.is_valid(good)
    for bad in ({"vars": ["x"], "states": [{"x": None}]},                      # no null
                {"vars": ["x"], "states": [{"x": {"#bigint": "1.5"}}]},        # bigint digits
                {"vars": ["x"], "states": [{"x": {"#field": 1}}]},             # '#' field name
                {"vars": ["x"], "states": [{"x": {"#map": [[1]]}}]},           # map pairs
                {"vars": ["x"], "states": [{"x": 1.5}]},                       # no floats
                {"vars": ["x"], "states": [{"x": 2**60}]},                     # unsafe integer
                {"vars": ["x"], "states": [{"#other": 1, "x": "a"}]},          # state keys
                {"vars": ["x"], "states": [], "extra": 1},                     # trace members
                {"states": []}):                                               # vars required
        assert not VALIDATOR.is_valid(bad), bad


def _check_itf(finding: dict, doc: dict) -> None:
    errors = sorted(VALIDATOR.iter_errors(doc), key=str)
    assert not errors, (finding["id"], errors[0].message, list(errors[0].absolute_path))
    assert doc["vars"] == list(ITF_VARS)
    assert len(doc["states"]) == len(finding["events"]) + 1, finding["id"]
    for i, state in enumerate(doc["states"]):
        assert state["#meta"]["index"] == i
        assert set(state) - {"#meta"} == set(doc["vars"]), (finding["id"], i)
    assert doc["states"][0]["event"] == {"type": "INIT"}
    assert doc["states"][0]["messages"] == [] and doc["states"][0]["run"] == "idle"
    wires = [json.loads(s["event"]["wireJson"]) for s in doc["states"][1:]]
    assert [_canon(w) for w in wires] == [_canon(e) for e in finding["events"]]
    meta = doc["#meta"]
    assert meta["format"] == "ITF" and meta["finding"] == finding["id"]
    assert "015adr-trace" in meta["format-description"]


def _final_matches(doc: dict, verdict: dict) -> None:
    """The last ITF state says what the verdict says."""
    last = doc["states"][-1]
    messages = [{"id": m["id"], "role": m["role"],
                 "content": m["content"]["value"] if m["content"]["tag"] == "Some" else None}
                for m in last["messages"]]
    expected = [{"id": m["id"], "role": m["role"],
                 "content": freeze(m["content"]) if "content" in m else None}
                for m in verdict["messages"]]
    assert messages == expected
    assert [(w["code"], int(w["atEvent"]["#bigint"])) for w in last["warnings"]] == \
        [(w["code"], w["atEvent"]) for w in verdict["warnings"]]
    if verdict["fatal"] is None:
        assert last["fatal"]["tag"] == "None"
    else:
        assert last["fatal"]["tag"] == "Some"
        assert last["fatal"]["value"]["code"] == verdict["fatal"]["code"]
        assert int(last["fatal"]["value"]["atEvent"]["#bigint"]) == verdict["fatal"]["atEvent"]
    assert last["run"] == verdict["run"]
    assert [json.loads(t) for t in last["runInput"]] == verdict["runInput"]


def test_itf_validates_and_follows_the_trace(findings):
    for path, finding in findings:
        doc = to_itf(finding)
        _check_itf(finding, doc)
        assert json.loads(export(finding, "itf")) == doc
        if finding["kind"] == "ambiguity":
            draft = next(i for i, c in enumerate(finding["verdicts"]) if c["includesDraft"])
            assert doc["#meta"]["verdictClass"]["index"] == draft
            _final_matches(doc, finding["verdicts"][draft]["verdict"])
        elif finding["kind"] == "peer-divergence":  # the nearest reading's class
            k = doc["#meta"]["verdictClass"]["index"]
            assert finding["nearest"] in finding["verdicts"][k]["readings"]
            _final_matches(doc, finding["verdicts"][k]["verdict"])
        else:
            assert doc["#meta"]["consumer"] == finding["consumer"]
            assert doc["#meta"]["property"] == finding["property"]


def test_itf_exports_every_verdict_class(findings):
    for path, finding in findings:
        if finding["kind"] != "ambiguity":
            continue
        for k, c in enumerate(finding["verdicts"]):
            for spec in (c["readings"][0], reading_of_class(c)):
                doc = to_itf(finding, spec)
                _check_itf(finding, doc)
                assert doc["#meta"]["verdictClass"]["index"] == k, (finding["id"], k)
                _final_matches(doc, c["verdict"])


def test_itf_records_a_crashing_consumer(findings):
    finding = next(f for _, f in findings if f["kind"] == "property"
                   and f["consumer"] == "crashes-on-empty-patch")
    doc = to_itf(finding)
    # the state after the event at atEvent (states[0] is before the first event); the events
    # after it close the stream (issue 39)
    at = finding["atEvent"] + 1
    assert finding["closing"] >= 1 and len(doc["states"]) == len(finding["events"]) + 1
    assert "IndexError" in doc["states"][at]["#meta"]["exception"]
    assert doc["states"][at]["messages"] == doc["states"][at - 1]["messages"]


# --- Mermaid ------------------------------------------------------------------------------------

ARROW = re.compile(r"^\s*Producer->>Consumer: ", re.M)


def test_mermaid_one_arrow_per_event_and_escaped(findings):
    for path, finding in findings:
        text = to_mermaid(finding)
        assert text.startswith("sequenceDiagram\n"), finding["id"]
        assert len(ARROW.findall(text)) == len(finding["events"]), finding["id"]
        assert text.count("->>") == len(finding["events"])
        notes = [line for line in text.splitlines() if "Note over Consumer:" in line]
        if finding["kind"] == "ambiguity":
            assert notes, finding["id"]  # the classes part somewhere
        elif finding["kind"] == "peer-divergence":
            assert len(notes) >= 2 and notes[-1].split(": ", 1)[1].startswith("peer ")
        else:
            assert len(notes) == len(finding["events"])
            assert finding["property"] in notes[finding["atEvent"]]
        for line in text.splitlines()[1:]:
            label = line.split(":", 1)[1] if ":" in line else line
            bare = re.sub(r"#\w+;", "", label.replace("<br/>", ""))
            assert not set(bare) & set(';#"{}<>'), (finding["id"], line)


def test_mermaid_labels_and_notes():
    finding = {"id": "AMB-Q1-00000000", "kind": "ambiguity", "knob": "Q1", "question": "q?",
               "pair": ["Q1=merge", "Q1=ignore"], "events": [
                   {"type": "RUN_STARTED", "threadId": "t1", "runId": "r1"},
                   {"type": "ACTIVITY_SNAPSHOT", "messageId": "act-1", "activityType": "A",
                    "content": {"n": 0}, "subagentRunId": "sub-1"},
                   {"type": "ACTIVITY_SNAPSHOT", "messageId": "act-1", "activityType": "A",
                    "content": {"n": 1}, "replace": False, "metadata": {"k": 1}}],
               "verdicts": [{"readings": ["Q1=merge"], "includesDraft": True, "verdict": {}},
                            {"readings": ["Q1=ignore"], "includesDraft": False, "verdict": {}}]}
    text = to_mermaid(finding)
    assert "Producer->>Consumer: ACTIVITY_SNAPSHOT act-1 A (sub-1)" in text
    assert "ACTIVITY_SNAPSHOT act-1 A (replace:false, metadata #123;#quot;k#quot;:1#125;)" in text
    note = [line for line in text.splitlines() if "Note over Consumer:" in line]
    assert note == ["    Note over Consumer: draft: act-1 metadata #123;#quot;k#quot;:1#125;"
                    "<br/>Q1=ignore: unchanged"]


# --- pytest -------------------------------------------------------------------------------------

def test_generated_pytest_files_pass(findings, tmp_path):
    expected = 0
    for path, finding in findings:
        name = "test_" + re.sub(r"[^0-9a-zA-Z]+", "_", finding["id"]).lower() + ".py"
        (tmp_path / name).write_text(to_pytest(finding), encoding="utf-8")
        if finding["kind"] in ("ambiguity", "peer-divergence"):
            expected += len(finding["verdicts"])
        else:
            expected += 2  # reference keeps the properties; the mutant still breaks its one
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           str(tmp_path)], cwd=tmp_path, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert re.search(rf"\b{expected} passed\b", proc.stdout), proc.stdout[-500:]


def test_generated_pytest_catches_a_changed_verdict(findings, tmp_path):
    """The regression test is not vacuous: a class whose recorded verdict is altered fails."""
    path, finding = next((p, f) for p, f in findings if f["kind"] == "ambiguity")
    altered = finding.to_json()
    altered["verdicts"][0]["verdict"]["runInput"] = [{"id": "nope", "role": "user",
                                                      "content": "x"}]
    (tmp_path / "test_altered.py").write_text(to_pytest(altered), encoding="utf-8")
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           str(tmp_path)], cwd=tmp_path, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 1 and "1 failed" in proc.stdout, proc.stdout[-1500:]


# --- load_finding -------------------------------------------------------------------------------

def test_load_finding_says_a_json_fault_as_replay_does(tmp_path):
    """A finding file that is not JSON is refused in the wording ``replay`` and ``lint`` use
    for the same file (``FILE:LINE:COLUMN: not valid JSON: ...``)."""
    from model.wire import TraceFormatError, load_trace
    file = tmp_path / "bad.json"
    file.write_text('[{"type": "RUN_STARTED"},\n {"a" 1}]', encoding="utf-8")
    with pytest.raises(TraceFormatError) as replayed:
        load_trace(str(file))
    with pytest.raises(ValueError) as exported:
        load_finding(str(file))
    assert str(exported.value) == str(replayed.value) == (
        f"{file}:2:7: not valid JSON: Expecting ':' delimiter")


@pytest.mark.parametrize("text, message", [
    ("[1, 2]", "expected a JSON object"),
    ('{"id": "x"}', "missing 'kind', 'events'"),
    ('{"id": "x", "kind": "other", "events": [{}]}', "unknown kind \"other\""),
    ('{"id": "x", "kind": "ambiguity", "events": []}', "'events' must be a non-empty array"),
    ('{"id": "x", "kind": "ambiguity", "events": [{"type": "RUN_STARTED"}]}', "'verdicts'"),
    ('{"id": "x", "kind": "property", "events": [{"type": "RUN_STARTED"}]}', "'property'"),
])
def test_load_finding_refuses_what_is_not_a_finding(tmp_path, text, message):
    assert message in _refusal(tmp_path, text)


def _refusal(tmp_path, text: str) -> str:
    """What load_finding says, refusing a file holding ``text``: it names the file first."""
    file = tmp_path / "bad.json"
    file.write_text(text, encoding="utf-8")
    with pytest.raises(ValueError) as info:
        load_finding(str(file))
    assert str(info.value).startswith(f"{file}: not a finding: ")
    return str(info.value)[len(f"{file}: not a finding: "):]


@pytest.mark.parametrize("knob, message", [
    ("Q99", "'knob' is \"Q99\", not a knob of the model (known: Q1, Q2,"),
    (["Q1"], "'knob' is [\"Q1\"], not a knob of the model"),
    ({"a": 1}, "'knob' is {\"a\": 1}, not a knob of the model"),
    (None, "'knob' is null, not a knob of the model"),
])
def test_load_finding_refuses_a_knob_that_is_not_one(findings, tmp_path, knob, message):
    _, finding = next((p, f) for p, f in findings if f["kind"] == "ambiguity")
    assert message in _refusal(tmp_path, json.dumps(dict(finding, knob=knob)))


@pytest.mark.parametrize("pair, message", [
    (None, "an ambiguity finding needs 'pair', the two readings (strings)"),
    (["Q1=merge"], "an ambiguity finding needs 'pair', the two readings (strings)"),
    (["Q1=merge", "Q1=bogus"], "'pair' holds a reading that does not parse (unknown option "
                               "'bogus' for Q1"),
])
def test_load_finding_refuses_a_pair_that_is_not_one(findings, tmp_path, pair, message):
    _, finding = next((p, f) for p, f in findings if f["kind"] == "ambiguity")
    assert message in _refusal(tmp_path, json.dumps(dict(finding, pair=pair)))


def test_load_finding_refuses_a_knob_its_pair_does_not_split(findings, tmp_path):
    """An ambiguity finding's knob is the one its two readings differ in: another knob (which
    would export the finding under that knob's question) is refused, naming the pair."""
    _, finding = next((p, f) for p, f in findings if f["kind"] == "ambiguity")
    other = next(k for k in ("Q7", "Q1") if k != finding["knob"])
    assert _refusal(tmp_path, json.dumps(dict(finding, knob=other))) == (
        f"'knob' is \"{other}\", but the readings of 'pair' ({finding['pair'][0]}; "
        f"{finding['pair'][1]}) agree on it")
    file = tmp_path / "own.json"
    file.write_text(json.dumps(finding.to_json()), encoding="utf-8")  # its own knob loads
    assert load_finding(str(file))["knob"] == finding["knob"]


# --- command line -------------------------------------------------------------------------------

def _one_line_error(err: str) -> str:
    """``err`` is one activity-check error line without a traceback; returns it."""
    assert err.startswith("activity-check: error: ") and err.count("\n") == 1, err
    assert "Traceback" not in err
    return err.rstrip("\n")


def test_cli_export_prints_and_writes(findings, tmp_path, capsys):
    path, finding = findings[0]
    assert main(["export", path, "--format", "jsonl"]) == 0
    assert capsys.readouterr().out == to_jsonl(finding)
    assert main(["export", path, "--format", "itf"]) == 0
    assert json.loads(capsys.readouterr().out) == to_itf(finding)
    out = tmp_path / "diagram.mmd"
    assert main(["export", path, "--format", "mermaid", "--out", str(out)]) == 0
    assert out.read_text(encoding="utf-8") == to_mermaid(finding)
    assert capsys.readouterr().out == ""
    # --out never overwrites
    assert main(["export", path, "--format", "pytest", "--out", str(out)]) == 2
    _one_line_error(capsys.readouterr().err)
    assert out.read_text(encoding="utf-8") == to_mermaid(finding)


def test_cli_export_reading_selects_a_class(findings, capsys):
    path, finding = next((p, f) for p, f in findings if f["kind"] == "ambiguity")
    other = finding["verdicts"][-1]
    assert main(["export", path, "--format", "itf", "--reading", other["readings"][0]]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["#meta"]["verdictClass"]["index"] == len(finding["verdicts"]) - 1


@pytest.mark.parametrize("argv_tail, names", [
    (["--format", "svg"], "invalid choice: 'svg'"),
    (["--format", "itf", "--reading", "Q1=nonsense"], "--reading: unknown option 'nonsense'"),
    (["--format", "jsonl", "--reading", "draft"],
     "--reading applies to --format itf, pytest and ag-ui-fixture only, not jsonl"),
    ([], "--format"),
])
def test_cli_export_usage_errors(findings, capsys, argv_tail, names):
    """The error names what is wrong: a fault of ``--reading`` is the option's, not the finding
    file's (from the third review)."""
    path, _ = findings[0]
    assert main(["export", path] + argv_tail) == 2
    line = _one_line_error(capsys.readouterr().err)
    assert names in line, line
    assert path not in line or not argv_tail, line


def test_cli_export_reading_fault_named_before_the_file(tmp_path, capsys):
    """A bad ``--reading`` is reported as the option's even when the finding file is missing."""
    missing = str(tmp_path / "missing.json")
    assert main(["export", missing, "--format", "itf", "--reading", "bogus"]) == 2
    line = _one_line_error(capsys.readouterr().err)
    assert "--reading: unknown reading 'bogus'" in line and missing not in line, line


def test_cli_export_bad_files(findings, tmp_path, capsys):
    path, _ = findings[0]
    summary = os.path.join(os.path.dirname(os.path.dirname(path)), "summary.json")
    jsonl = path[:-5] + ".jsonl"
    for bad in (summary, jsonl, str(tmp_path / "missing.json"), str(tmp_path)):
        assert main(["export", bad, "--format", "itf"]) == 2, bad
        _one_line_error(capsys.readouterr().err)


def test_cli_export_of_a_json_lines_trace_says_what_it_expects(findings, tmp_path, capsys):
    """``export`` of a ``.jsonl`` trace (the finding's own, beside its ``.json``) says that a
    finding file was expected and which one is beside it; it said ``Extra data``. A JSON-lines
    trace elsewhere gets the same line without the hint."""
    path, finding = findings[0]
    jsonl = path[:-5] + ".jsonl"
    assert main(["export", jsonl, "--format", "json"]) == 2
    assert _one_line_error(capsys.readouterr().err) == (
        f"activity-check: error: {jsonl}: expected a finding file, one JSON object (a run's "
        "findings/<id>.json); this is JSON lines, a trace (replay and lint read those); the "
        f"finding beside it is {path}")
    alone = tmp_path / "trace.jsonl"
    alone.write_text(to_jsonl(finding), encoding="utf-8")
    assert main(["export", str(alone), "--format", "mermaid"]) == 2
    line = _one_line_error(capsys.readouterr().err)
    assert line.endswith("this is JSON lines, a trace (replay and lint read those)"), line
    assert "Extra data" not in line


def test_peer_divergence_exports_show_the_peer(findings):
    peer_findings = [f for _, f in findings if f["kind"] == "peer-divergence"]
    assert len(peer_findings) == 1
    finding = peer_findings[0]
    assert finding["peerVerdict"]["messages"] == []
    mermaid = to_mermaid(finding)
    assert mermaid.splitlines()[-1].startswith("    Note over Consumer: peer ")
    assert "holds no messages" in mermaid
    itf = to_itf(finding)
    jsonschema.validate(itf, ITF_SCHEMA)
    assert itf["#meta"]["peer"] == finding["peer"] and itf["#meta"]["verdictClass"] is not None
    # the model's states: after the snapshot the consumer holds act-1, which the peer does not
    assert [m["id"] for m in itf["states"][2]["messages"]] == ["act-1"]
    assert "PEER_VERDICT = " in to_pytest(finding)


def test_generated_pytest_replays_a_peer_divergence_on_the_peer(findings, tmp_path):
    """The peer test of a generated file: skipped without --activity-peer, fails on the peer that
    diverged (the forgetful one), passes on a consumer that agrees with a reading (the model)."""
    _, finding = next((p, f) for p, f in findings if f["kind"] == "peer-divergence")
    (tmp_path / "test_peer_finding.py").write_text(to_pytest(finding), encoding="utf-8")
    peer = tmp_path / "forgetful_peer.py"
    peer.write_text(FORGETFUL_PEER, encoding="utf-8")
    classes = len(finding["verdicts"])

    def run(*options):
        return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                               "test_peer_finding.py", *options], cwd=tmp_path,
                              capture_output=True, text=True, timeout=120)

    alone = run()
    assert alone.returncode == 0 and f"{classes} passed, 1 skipped" in alone.stdout, \
        alone.stdout[-1500:]
    forgetful = run("--activity-peer", f"{sys.executable} {peer}")
    assert forgetful.returncode == 1 and f"1 failed, {classes} passed" in forgetful.stdout, \
        forgetful.stdout[-1500:]
    assert "the peer agrees with no reading of the draft" in forgetful.stdout
    model = run("--activity-peer", "model")
    assert model.returncode == 0 and f"{classes + 1} passed" in model.stdout, model.stdout[-1500:]
