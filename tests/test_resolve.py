"""``activity-check resolve`` (issue 41): proposals, the report of a proposal, the files it
writes, the recommendations as data.

One report is computed for the module (pins Q2=parent and Q8=keep, breadth-first to depth 3,
Z3 to 5: the missing-delta rules first fire at 5) and shared by the tests that read it."""
from __future__ import annotations

import json
import os
import re
from pathlib import Path

import jsonschema
import pytest

from activity_check.cli import main
from model.readings import DRAFT, KNOB_BY_ID, KNOBS, RECOMMENDATIONS, parse_reading
from model.verdict import evaluate
from model.wire import parse_events
from properties.resolve import (RESOLVE_QUESTIONS, ProposalError, close_stream, compare,
                                proposal_from_json, proposal_from_pins, recommended_proposal,
                                recorded_peers, resolve)

ROOT = Path(__file__).resolve().parents[1]
SCHEMAS = ROOT / "counterexamples" / "schemas"


def _schema(name: str) -> dict:
    return json.loads((SCHEMAS / name).read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def report():
    return resolve(proposal_from_pins("Q2=parent,Q8=keep"), depth=3, z3_depth=5)


# --- proposals ---------------------------------------------------------------------------------

def test_pins_parse_through_the_reading_parser():
    p = proposal_from_pins("q8=KEEP, Q2=parent")
    assert dict(p.pins) == {"Q2": "parent", "Q8": "keep"}  # knob order, knob spelling
    assert p.reading == parse_reading("Q2=parent,Q8=keep")
    assert p.name == "Q2=parent,Q8=keep"


def test_hyphenated_knob_ids_pin_in_any_case():
    """``--pin q4-OPENER=first`` and a proposal's ``"q6-MS"`` pin their knobs, as ``q8``
    does (they were unknown knobs); the pins keep the knobs' spelling."""
    p = proposal_from_pins("q4-OPENER=first,q8=keep")
    assert dict(p.pins) == {"Q4-opener": "first", "Q8": "keep"}
    assert p.reading.q4_opener == "first" and p.name == "Q4-opener=first,Q8=keep"
    doc = proposal_from_json({"name": "n", "pins": {"q6-MS": "merge", "x1": "preserve"}}, "p")
    assert dict(doc.pins) == {"Q6-ms": "merge", "X1": "preserve"}
    with pytest.raises(ProposalError, match="Q4-opener is given twice"):
        proposal_from_pins("Q4-opener=first,q4-OPENER=current")


@pytest.mark.parametrize("text, message", [
    ("", "give KNOB=OPTION pairs"),
    ("Q2", "'Q2' is not KNOB=OPTION"),
    ("Q99=x", "unknown knob 'Q99'"),
    ("Q2=maybe", "unknown option 'maybe' for Q2"),
    ("Q2=MayBe", "unknown option 'MayBe' for Q2"),  # as the user typed it
    ("Q2=parent,q2=continues", "Q2 is given twice"),
])
def test_bad_pins_are_named(text, message):
    with pytest.raises(ProposalError, match=re.escape(message)):
        proposal_from_pins(text)


def test_proposal_document_and_its_faults():
    doc = {"name": "c", "pins": {"Q2": "parent", "Q8": "keep"},
           "wording": {"Q8": {"page": "state", "section": "MESSAGES_SNAPSHOT",
                              "text": "Activity messages survive."}}}
    p = proposal_from_json(doc, "p.json")
    assert p.wording["Q8"]["page"] == "state" and p.to_json()["pins"] == {"Q2": "parent",
                                                                          "Q8": "keep"}
    jsonschema.validate(doc, _schema("proposal.schema.json"))
    bad = dict(doc, wording={"Q9": doc["wording"]["Q8"]})
    with pytest.raises(ProposalError, match=r"p.json: wording.Q9: the proposal pins no knob"):
        proposal_from_json(bad, "p.json")
    with pytest.raises(ProposalError, match=r"p.json: pins.Q8: unknown option 'x' for Q8"):
        proposal_from_json(dict(doc, pins={"Q8": "x"}), "p.json")
    with pytest.raises(ProposalError, match="unknown member 'pin'"):
        proposal_from_json({"name": "c", "pin": {}}, "p.json")


def test_a_pin_is_one_option_of_its_knob_never_more_pins(tmp_path, capsys):
    """A pin's value is one option of its knob: ``"Q2": "parent,Q8=keep"`` is refused naming
    the file and ``pins.Q2`` (it was read as Q2=parent and Q8=keep, the report saying only
    "pins Q2=parent", because the pins were joined with commas and parsed as a reading)."""
    with pytest.raises(ProposalError) as caught:
        proposal_from_json({"name": "x", "pins": {"Q2": "parent,Q8=keep"}}, "p.json")
    assert str(caught.value) == ("p.json: pins.Q2: unknown option 'parent,Q8=keep' for Q2; "
                                 "options: continues, parent")
    for value in ("parent=continues", "strict", " parent", "parent\n"):
        with pytest.raises(ProposalError, match=re.escape(f"p.json: pins.q2: unknown option "
                                                          f"{value!r} for Q2")):
            proposal_from_json({"name": "x", "pins": {"q2": value}}, "p.json")
    # an option in any case is still that option, and the reading is the pins' alone
    p = proposal_from_json({"name": "x", "pins": {"q2": "PARENT", "Q8": "keep"}}, "p.json")
    assert dict(p.pins) == {"Q2": "parent", "Q8": "keep"}
    assert p.reading == DRAFT.with_(Q2="parent", Q8="keep")
    p = proposal_from_json({"name": "x", "pins": {"Q2": "parent"}}, "p.json")
    assert p.reading == DRAFT.with_(Q2="parent") and p.reading.q8 == DRAFT.q8
    # --pin: an item's value after its first '=' is the option, whole
    with pytest.raises(ProposalError, match=re.escape("--pin: unknown option 'parent=Q8' for "
                                                      "Q2; options: continues, parent")):
        proposal_from_pins("Q2=parent=Q8")
    # the command: one line, exit 2, the file and the field
    path = tmp_path / "comma.json"
    path.write_text(json.dumps({"name": "x", "pins": {"Q2": "parent,Q8=keep"}}))
    assert main(["resolve", str(path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == (
        f"activity-check: error: {path}: pins.Q2: unknown option 'parent,Q8=keep' for Q2; "
        "options: continues, parent\n")


def test_wording_ids_in_any_case(tmp_path):
    """A proposal's ``wording`` members are read in any case, as its pins are (``"q2"`` was
    "not a question or knob id"), and kept under the model's spelling of the id, which the
    report shows; the same id twice in two cases is refused, naming the member."""
    entry = {"page": "state", "section": "MESSAGES_SNAPSHOT", "text": "Kept."}
    p = proposal_from_json({"name": "w", "pins": {"q2": "parent", "x1": "preserve",
                                                  "Q4-opener": "first"},
                            "wording": {"q2": entry, "x1": entry, "q4-OPENER": entry,
                                        "q4": entry}}, "p.json")
    assert list(p.wording) == ["Q2", "X1", "Q4-opener", "Q4"]
    assert p.wording["Q2"] == entry
    from counterexamples.report.resolve import load_proposal
    path = tmp_path / "w.json"
    path.write_text(json.dumps({"name": "w", "pins": {"Q8": "keep"}, "wording": {"q8": entry}}))
    assert load_proposal(str(path)).to_json()["wording"] == {"Q8": entry}
    with pytest.raises(ProposalError) as caught:
        proposal_from_json({"name": "w", "pins": {"Q2": "parent"},
                            "wording": {"Q2": entry, "q2": entry}}, "p.json")
    assert str(caught.value) == "p.json: wording.q2: Q2 is given twice"
    with pytest.raises(ProposalError) as caught:
        proposal_from_json({"name": "w", "pins": {"Q2": "parent"}, "wording": {"q9": entry}},
                           "p.json")
    assert str(caught.value) == "p.json: wording.q9: the proposal pins no knob of Q9"
    with pytest.raises(ProposalError, match=r"^p.json: wording.q99: not a question or knob id$"):
        proposal_from_json({"name": "w", "pins": {"Q2": "parent"}, "wording": {"q99": entry}},
                           "p.json")


def test_proposal_file_faults_are_one_line(tmp_path):
    from counterexamples.report.resolve import MAX_PROPOSAL_BYTES, load_proposal
    bad = tmp_path / "bad.json"
    bad.write_text('{"name": "x", "pins": {"Q2": "parent",}}')
    with pytest.raises(ProposalError, match=r"bad.json:1:\d+: not valid JSON"):
        load_proposal(str(bad))
    bad.write_text('{"name": "x", "pins": {"Q2": 3}}')
    with pytest.raises(ProposalError, match=r"bad.json: pins.Q2: 3 is not of type 'string'"):
        load_proposal(str(bad))
    bad.write_bytes(b" " * (MAX_PROPOSAL_BYTES + 1))
    with pytest.raises(ProposalError, match="larger than"):
        load_proposal(str(bad))
    with pytest.raises(ProposalError, match="is a directory"):
        load_proposal(str(tmp_path))
    bad.write_text(" \n")
    with pytest.raises(ProposalError, match=r"bad.json: empty .* a proposal is a JSON object"):
        load_proposal(str(bad))
    bad.write_bytes(b'{"name": "x",\n "pins": {"Q2": "parent"},\n "about": "caf\xe9"}')
    with pytest.raises(ProposalError, match=r"bad.json: line 3: not UTF-8 \(byte 55\)$"):
        load_proposal(str(bad))


def test_an_over_long_value_is_cut_inside_its_quotes_not_the_message(tmp_path, capsys):
    """A value of thousands of characters in a --pin or a proposal file is quoted cut at 80
    characters, ``'aaaa…'``, and the message after it is whole: the knob's options, the
    knobs, what the schema says of it. The whole line was cut at 2,000 characters instead
    (or a schema message at 200), losing all of that."""
    long = "a" * 3000
    with pytest.raises(ProposalError) as caught:
        proposal_from_pins(f"Q2={long}")
    assert str(caught.value) == (f"--pin: unknown option '{'a' * 80}…' for Q2; options: "
                                 "continues, parent")
    with pytest.raises(ProposalError) as caught:
        proposal_from_pins(f"Q{long}=parent")
    assert str(caught.value).startswith(f"--pin: unknown knob 'Q{'a' * 79}…'; knobs: Q1, ")
    assert str(caught.value).endswith(", Q23, X1")
    with pytest.raises(ProposalError, match=re.escape(f"--pin: '{'a' * 80}…' is not "
                                                      "KNOB=OPTION")):
        proposal_from_pins(long)
    assert main(["resolve", "--pin", f"q8={long}"]) == 2
    err = capsys.readouterr().err
    assert err == (f"activity-check: error: --pin: unknown option '{'a' * 80}…' for Q8; "
                   "options: self-revoking, keep, by-type\n")
    from counterexamples.report.resolve import load_proposal
    bad = tmp_path / "long.json"
    bad.write_text(json.dumps({"name": "n" * 3000, "pins": {"Q2": "parent"}}))
    with pytest.raises(ProposalError) as caught:
        load_proposal(str(bad))
    assert str(caught.value) == f"{bad}: name: '{'n' * 80}…' is too long"
    bad.write_text(json.dumps({"name": "n", "pins": {"Q2": "parent"}, "k" * 300: 1}))
    with pytest.raises(ProposalError) as caught:
        load_proposal(str(bad))
    assert str(caught.value) == (f"{bad}: (document): Additional properties are not allowed "
                                 f"('{'k' * 80}…' was unexpected)")


# --- recommendations ---------------------------------------------------------------------------

def test_recommendations_are_data_beside_every_knob():
    jsonschema.validate(RECOMMENDATIONS, _schema("recommendations.schema.json"))
    assert set(RECOMMENDATIONS["knobs"]) == set(KNOB_BY_ID)
    for knob in KNOBS:
        assert knob.recommended["option"] in knob.option_names
        assert knob.recommended["cites"]
    # the notebooks argue against the draft option for these
    assert {k.id for k in KNOBS if k.recommended["option"] != k.draft} >= {"Q8", "Q10", "X1"}


def test_shipped_recommended_proposal_is_the_recommendations():
    shipped = json.loads((ROOT / "proposals" / "recommended.json").read_text())
    jsonschema.validate(shipped, _schema("proposal.schema.json"))
    rec = recommended_proposal()
    assert shipped["pins"] == dict(rec.pins) and shipped["wording"] == rec.to_json()["wording"]
    assert rec.reading.as_dict() == {k: r["option"] for k, r in RECOMMENDATIONS["knobs"].items()}


NOTES = ROOT.parent / "shared" / "spec" / "notes.md"
if not NOTES.is_file():
    NOTES = ROOT.parent.parent / "shared" / "spec" / "notes.md"


@pytest.mark.skipif(not NOTES.is_file(), reason="the shared spec notes are absent")
def test_importance_is_the_notes_stars():
    from properties.resolve import importance
    starred = set(re.findall(r"^- \*\*(Q\d+) ★", NOTES.read_text(encoding="utf-8"), re.M))
    assert len(starred) == 15
    for q in RESOLVE_QUESTIONS:
        assert importance(q.id) == (q.id in starred), q.id


# --- the report --------------------------------------------------------------------------------

def test_every_question_has_a_status(report):
    jsonschema.validate(report, _schema("resolve-report.schema.json"))
    ids = [q["question"] for q in report["questions"]]
    assert ids == [f"Q{i}" for i in range(1, 26)] + ["X1"]
    status = {q["question"]: q for q in report["questions"]}
    assert status["Q2"]["status"] == status["Q8"]["status"] == "decided"
    # Q8=keep: no activity is ever dropped, so 'seen' vs 'held' no longer parts (Q10)
    assert status["Q10"]["status"] == "closed" and status["Q10"]["engine"] == "BFS"
    assert status["Q1"]["status"] == "open"
    w = status["Q1"]["witness"]
    p = parse_reading(report["reading"])
    events = parse_events(w["trace"])
    a, b = evaluate(events, p), evaluate(events, p.with_(Q1=w["against"]))
    assert a.to_json(detail=False) != b.to_json(detail=False)
    assert report["counts"]["decided"] == 2


def test_conflicts_named_with_witnesses(report):
    by = {c["subject"]: c for c in report["conflicts"]}
    shape = by["snapshot-replace-false-untagged-on-subagent-activity"]
    assert shape["kind"] == "contradicted" and "SUB-UNTAGGED-CONTINUES" in shape["clauses"]
    events = parse_events(shape["trace"])
    from model.producer import check_trace
    assert check_trace(events, DRAFT) == []  # allowed by draft ...
    assert check_trace(events, parse_reading("Q2=parent"))  # ... forbidden by the pin
    for rule in ("ACT-DELTA-MISSING", "ACT-DELTA-MISSING-WARN", "ACT-DELTA-MISSING-NOFAIL"):
        assert by[rule]["kind"] == "vacuous" and by[rule]["engine"] == "Z3"
        assert by[rule]["closed"]


def test_recorded_peer_non_conformant_on_q8(report):
    assert "@ag-ui/client 1.0.0 reducer" in recorded_peers()
    rows = {r["peer"]: r for r in report["peers"]}
    row = rows["@ag-ui/client 1.0.0 reducer"]
    assert not row["conformant"]
    (finding,) = row["findings"]
    assert (finding["question"], finding["recorded"], finding["pinned"]) == \
        ("Q8", "self-revoking", "keep")
    events = parse_events(finding["witness"]["trace"])
    keep = evaluate(events, parse_reading("Q2=parent,Q8=keep")).to_json(detail=False)
    revoke = evaluate(events, parse_reading("Q2=parent")).to_json(detail=False)
    assert [m["id"] for m in keep["messages"]] != [m["id"] for m in revoke["messages"]]


def test_witnesses_are_closed_streams(report):
    from counterexamples.lint.linter import lint_wire
    p = parse_reading(report["reading"])
    witnesses = [t["witness"] for t in report["traces"]] + \
        [q["witness"] for q in report["questions"] if q["witness"]]
    assert len(witnesses) > 10
    for w in witnesses:
        assert w and w["closed"], w
        assert w["trace"][-1]["type"] == "RUN_FINISHED"
        lint = lint_wire(w["trace"], p if w["decides"] == "verdict" else DRAFT)
        assert lint.conformant, (w["knob"], [v.clause for v in lint.violations])
    for c in report["conflicts"]:  # each conformant where it shows the clause at work
        under = DRAFT if c["witnessUnder"] == "draft" else p
        assert c["closed"] and lint_wire(c["trace"], under).conformant, c["subject"]


def test_close_stream_ends_what_is_open():
    events = parse_events([
        {"type": "RUN_STARTED", "threadId": "t", "runId": "r"},
        {"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "assistant"}])
    closed = close_stream(events)
    assert [e.to_wire()["type"] for e in closed[2:]] == ["TEXT_MESSAGE_END", "RUN_FINISHED"]
    assert closed[-1].to_wire()["runId"] == "r"
    assert close_stream(closed) == closed


def test_compare_names_what_differs(report):
    other = dict(report, proposal={"name": "other", "pins": {"Q8": "keep"}, "wording": {}},
                 questions=[dict(q, status="open") if q["question"] == "Q2" else q
                            for q in report["questions"]], conflicts=[], peers=[])
    cmp = compare(report, other)
    assert cmp["questions"] == [{"question": "Q2", "a": "decided", "b": "open"}]
    assert "ACT-DELTA-MISSING" in cmp["conflicts"]["onlyA"]
    assert {p["peer"] for p in cmp["peers"]} >= {"@ag-ui/client 1.0.0 reducer"}


def test_reports_render(report):
    from counterexamples.report.resolve import render_html, render_markdown, render_text
    md = render_markdown(report)
    assert "snapshot-replace-false-untagged-on-subagent-activity" in md
    assert len(md) < 6000  # a pull-request comment
    page = render_html(report)
    assert "<script" not in page and "http" not in page.replace("http://www.w3.org", "")
    assert "<svg" in page
    text = render_text(report)
    assert "NON-CONFORMANT on Q8" in text
    # the trace that makes it so, not only its length: Q8's witness, a held activity that a
    # MESSAGES_SNAPSHOT carrying another activity leaves out
    seg = text.split("@ag-ui/client 1.0.0 reducer: NON-CONFORMANT on Q8")[1]
    line = " ".join(re.split(r"\n  (?! )", seg)[0].split())  # the item's folded lines
    assert "trace of 4 events: RUN_STARTED r1; ACTIVITY_SNAPSHOT" in line
    assert "MESSAGES_SNAPSHOT [" in line and line.endswith("RUN_FINISHED r1")


# --- the command -------------------------------------------------------------------------------

def test_cli_writes_traces_pytest_and_fixtures(tmp_path, capsys):
    out = tmp_path / "out"
    proposal = tmp_path / "p.json"
    proposal.write_text(json.dumps({
        "name": "committee", "pins": {"Q8": "keep"},
        "wording": {"Q8": {"page": "state", "section": "MESSAGES_SNAPSHOT",
                           "text": "Activity messages the snapshot omits stay."}}}))
    assert main(["resolve", str(proposal), "--depth", "3", "--no-z3", "--out", str(out),
                 "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    (pin,) = doc["traces"]
    assert pin["knob"] == "Q8" and pin["pytest"] and pin["fixture"]
    trace = (out / pin["file"]).read_text().splitlines()
    assert json.loads(trace[-1])["type"] == "RUN_FINISHED"
    fixture = json.loads((out / pin["fixture"]).read_text())
    assert fixture["name"] == "pin-q8-keep" and fixture["expect"]["outcome"] == "completed"
    assert "def test_verdict_class" in (out / pin["pytest"]).read_text()
    assert (out / "resolve.html").is_file() and (out / "resolve.md").is_file()
    if doc["wording"][0].get("sentences"):
        assert all(s["section"].endswith("MESSAGES_SNAPSHOT")
                   for s in doc["wording"][0]["sentences"])
    # the replayed trace gives the verdict the report states
    assert main(["replay", str(out / pin["file"]), "--reading", "Q8=keep", "--json"]) == 0
    replayed = json.loads(capsys.readouterr().out)
    assert [m["id"] for m in replayed["messages"]] == \
        [m["id"] for m in pin["witness"]["verdicts"]["keep"]["messages"]]


@pytest.mark.parametrize("argv, message", [
    (["resolve"], "give a PROPOSAL file"),
    (["resolve", "--pin", "Q2=nope"], "unknown option 'nope' for Q2"),
    (["resolve", "--pin", "Q2=parent", "--depth", "9"], "--depth must be from 2"),
    (["resolve", "missing.json"], "missing.json: cannot read the file"),
])
def test_cli_faults_exit_2(argv, message, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_export_pytest_takes_a_reading(tmp_path, capsys):
    from counterexamples.report.export import export
    from counterexamples.report.walkthrough import trace_finding
    events = parse_events([
        {"type": "RUN_STARTED", "threadId": "t1", "runId": "r1"},
        {"type": "ACTIVITY_SNAPSHOT", "messageId": "a", "activityType": "PLAN",
         "content": {"n": 0}},
        {"type": "MESSAGES_SNAPSHOT", "messages": [
            {"id": "b", "role": "activity", "activityType": "PLAN", "content": {"n": 0}}]}])
    finding = trace_finding(events, "Q8")
    text = export(finding, "pytest", "Q8=keep")
    assert "'Q8=keep'" in text or '"Q8=keep"' in text
    assert "Pinned to the reading Q8=keep" in text


def test_spec_diff_names_the_knobs_a_change_decides(tmp_path, capsys):
    from counterexamples.report.resolve import spec_dir
    pages = spec_dir()
    if pages is None:
        pytest.skip("the shared spec pages are absent")
    text = Path(pages, "state.md").read_text(encoding="utf-8")
    old_sentence = "consumer's activity messages not in it are dropped like anything else"
    assert old_sentence in text
    (tmp_path / "old").mkdir()
    (tmp_path / "new").mkdir()
    (tmp_path / "old" / "state.md").write_text(text, encoding="utf-8")
    (tmp_path / "new" / "state.md").write_text(
        text.replace(old_sentence, "consumer keeps its activity messages not in it"),
        encoding="utf-8")
    assert main(["spec", "diff", str(tmp_path / "old" / "state.md"),
                 str(tmp_path / "new" / "state.md"), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    q8 = next(k for k in doc["knobs"] if k["knob"] == "Q8")
    assert [o["option"] for o in q8["options"]] == list(KNOB_BY_ID["Q8"].option_names)
    assert q8["recommended"] == "keep" and "STA-MS-SELF-REVOKE" in q8["clauses"]


def test_spec_diff_text_keeps_every_clause_and_dependent_id_whole(tmp_path, capsys):
    """Issue 39 item 5 for ``spec diff``: the table fits 120 columns and folds its id columns
    (clauses, the properties, knobs and branches that depend on them, the section) at spaces
    only: each id the JSON names is on one line of the text (it was cut, e.g.
    ``P42-ms-reasoning-sur`` / ``vives``, by rich's fold)."""
    from counterexamples.report.resolve import spec_dir
    pages = spec_dir()
    if pages is None:
        pytest.skip("the shared spec pages are absent")
    text = Path(pages, "state.md").read_text(encoding="utf-8")
    old_sentence = "The exception is per-role and self-revoking"
    assert old_sentence in text
    for side, body in (("old", text), ("new", text.replace(
            old_sentence, "The exception holds for every activity message, whatever it carries"))):
        (tmp_path / side).mkdir()
        (tmp_path / side / "state.md").write_text(body, encoding="utf-8")
    argv = ["spec", "diff", str(tmp_path / "old" / "state.md"), str(tmp_path / "new" / "state.md")]
    assert main(argv + ["--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    ids = {i for c in doc["changes"] for i in c["clauses"]}
    ids |= {i for c in doc["changes"] for v in c["dependents"].values() for i in v}
    assert {"STA-MS-SELF-REVOKE", "P42-ms-reasoning-survives",
            "messages-snapshot.reconcile"} <= ids
    assert main(argv) == 0
    lines = capsys.readouterr().out.splitlines()
    assert max(len(line) for line in lines) <= 120
    for i in ids | {"MESSAGES_SNAPSHOT"}:
        assert any(i in line for line in lines), i


def test_cli_out_again_replaces_the_earlier_report(tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["resolve", "--pin", "Q8=keep", "--depth", "3", "--no-z3", "--out",
                 str(out)]) == 0
    assert (out / "traces" / "Q8.jsonl").is_file()
    (out / "mine.txt").write_text("kept")
    assert main(["resolve", "--pin", "Q1=ignore", "--depth", "3", "--no-z3", "--out",
                 str(out)]) == 0
    assert not (out / "traces" / "Q8.jsonl").exists()  # the earlier proposal's, not stale
    assert (out / "traces" / "Q1.jsonl").is_file() and (out / "mine.txt").read_text() == "kept"
    assert json.loads((out / "resolve.json").read_text())["proposal"]["pins"] == {"Q1": "ignore"}
    capsys.readouterr()
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "x.txt").write_text("not ours")
    assert main(["resolve", "--pin", "Q8=keep", "--depth", "2", "--no-z3", "--out",
                 str(tmp_path / "other")]) == 2
    assert "--out" in capsys.readouterr().err


def test_diagram_without_notes_holds_the_consumer_label():
    """A diagram with arrows only (the resolve page's conflicts and pin traces) is wide enough
    for the bold "Consumer" over its lifeline (about 70 px in Chromium): it was clipped to
    "Consum"."""
    from counterexamples.report.questions_page import mermaid_svg
    svg = mermaid_svg("sequenceDiagram\nProducer->>Consumer: RUN_STARTED r1\n")
    width = int(re.search(r'<svg[^>]* width="(\d+)"', svg).group(1))
    label_x = int(re.search(r'<text x="(\d+)"[^>]*class="actor">Consumer<', svg).group(1))
    assert width - label_x >= 75, (width, label_x)


def test_conflict_notes_end_in_one_full_stop_on_the_page(report):
    """A conflict's note ends with a full stop; the page wrote another after it ("agrees).."
    before "Witness")."""
    from counterexamples.report.resolve import render_html
    page = render_html(report)
    assert "Witness:" in page and ".. Witness" not in page


def test_wording_note_shown_in_text_and_markdown(report):
    """A wording whose page or section is not found carries a note in the JSON report; text
    and Markdown showed the wording as if its page had been read."""
    from counterexamples.report.resolve import add_sentences, render_markdown, render_text
    doc = dict(report, wording=[{"question": "Q8", "id": "Q8", "page": "nosuchpage",
                                 "section": "S", "text": "Stay."}])
    add_sentences(doc, str(ROOT))
    assert doc["wording"][0]["note"] == "page nosuchpage.md not found"
    assert "(page nosuchpage.md not found)" in render_text(doc)
    assert "(page nosuchpage.md not found)" in render_markdown(doc)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")
def test_proposal_named_pipe_without_writer_is_not_waited_on(tmp_path, capsys):
    """A named pipe given as the proposal reads as empty (one line, exit 2); resolve blocked in
    open() for ever, as conformance generate --proposal did before 771a66c."""
    fifo = tmp_path / "p.json"
    os.mkfifo(fifo)
    assert main(["resolve", str(fifo), "--depth", "2", "--no-z3"]) == 2
    err = capsys.readouterr().err
    assert "p.json" in err and "p.json: empty (a named pipe with no writer reads as empty)" in err and err.count("\n") == 1


def test_text_says_when_a_pin_trace_is_not_a_closed_stream(report):
    """A pin trace that could not be closed (``closed: false``) is flagged in text as on the
    page ("not a closed stream"); text listed it like a complete stream."""
    from counterexamples.report.resolve import render_text
    doc = json.loads(json.dumps(report))
    pin = next(t for t in doc["traces"] if t["witness"])
    pin["witness"]["closed"] = False
    line = next(x for x in render_text(doc).splitlines()
                if x.strip().startswith(f"{pin['knob']}={pin['option']}:"))
    assert "not a closed stream" in line


# --- every pin binds every engine (issue 41, search side) ---------------------------------------

def _replays(report: dict) -> int:
    """Replay every witness of ``report`` under the proposal's pins and check it shows what the
    report says; returns how many were checked. A verdict witness is conformant under the pins
    and its two options give the stated, differing verdicts; a conformance witness breaks the
    stated clauses under each option; a conflict's witness is conformant under the reading it
    names, and an ``accepted`` one breaks its clause under draft, a producer ``contradicted``
    one breaks a clause under the pins, a property one fails that property under the pins."""
    from model.consumer import initial_state, run_input, step
    from model.producer import Belief, advance, check_trace
    from properties.catalogue import PROPERTIES, Transition, first_violation
    from properties.resolve import _verdict
    p = parse_reading(report["reading"])
    witnesses = [q["witness"] for q in report["questions"] if q["witness"]] + \
        [t["witness"] for t in report["traces"] if t["witness"]] + \
        [f["witness"] for r in report["peers"] for f in r["findings"] if f["witness"]]
    for w in witnesses:
        events = parse_events(w["trace"])
        ra, rb = p.with_(**{w["knob"]: w["option"]}), p.with_(**{w["knob"]: w["against"]})
        if w["decides"] == "verdict":
            assert check_trace(events, p) == [], (w["knob"], w["trace"])
            got = {w["option"]: _verdict(events, ra), w["against"]: _verdict(events, rb)}
            assert got == w["verdicts"] and got[w["option"]] != got[w["against"]], w["knob"]
        else:
            got = {o: sorted({v.clause for _, v in check_trace(events, r)})
                   for o, r in ((w["option"], ra), (w["against"], rb))}
            assert got == w["conformance"] and got[w["option"]] != got[w["against"]], w["knob"]
    by_id = {prop.id: prop for prop in PROPERTIES}
    for c in report["conflicts"]:
        events = parse_events(c["trace"])
        under = DRAFT if c["witnessUnder"] == "draft" else p
        assert check_trace(events, under) == [], (c["subject"], c["trace"])
        if c["kind"] == "accepted":
            assert {v.clause for _, v in check_trace(events, DRAFT)} & set(c["clauses"])
        elif c["subject"].startswith("producer "):
            assert c["kind"] == "contradicted" and check_trace(events, p), c["subject"]
        elif c["subject"].startswith("property "):
            prop = by_id[c["subject"].split()[1]]
            state, belief, failed = initial_state(), Belief(), False
            for i, event in enumerate(events):
                result = step(state, event, p)
                after = advance(belief, event)
                t = Transition(i, state, event, result.state, result.warnings, result.fatal, p,
                               tuple(run_input(result.state)), belief, after, True)
                failed = failed or first_violation(t, (prop,)) is not None
                state, belief = result.state, after
            assert failed, c["subject"]
    return len(witnesses) + len(report["conflicts"])


@pytest.mark.parametrize("pin", [f"{k.id}={o}" for k in KNOBS for o in k.option_names])
def test_every_witness_replays_under_the_pins(pin):
    """Each option of each knob, consumer or producer side, and X1: every witness resolve
    prints (breadth-first to depth 3, no Z3: at depth 2 only two or so witnesses exist; 3 gives
    15 or more a pin in about 0.4 s each) replays under the pins to its stated verdict."""
    report = resolve(proposal_from_pins(pin), depth=3, z3=False)
    assert _replays(report) >= 15


def test_pinned_producer_options_bind_the_searches_and_the_conflicts():
    """Q12=owner: the pair searches keep the pinned owner rule (no witness breaks
    ACT-DELTA-BASELINE under the pins, with Q4-opener=first too), and the untagged delta on a
    subagent's activity, which draft allows, is a conflict with SUB-UNTAGGED-CONTINUES."""
    report = resolve(proposal_from_pins("Q12=owner,Q4-opener=first"), depth=4, z3=False)
    assert _replays(report) > 10
    by = {(c["kind"], c["subject"]): c for c in report["conflicts"]}
    owner = by[("contradicted", "producer delta-by-other-agent (the pins forbid)")]
    assert "SUB-UNTAGGED-CONTINUES" in owner["clauses"] and owner["witnessUnder"] == "draft"
    assert [e["type"] for e in owner["trace"]] == [
        "RUN_STARTED", "ACTIVITY_SNAPSHOT", "ACTIVITY_DELTA", "RUN_FINISHED"]
    assert owner["trace"][1]["subagentRunId"] == "sub-1"
    assert "subagentRunId" not in owner["trace"][2]
    # the delta Q4-opener=first alone accepts (next test) is another agent's under Q12=owner
    assert not [c for c in report["conflicts"] if c["kind"] == "accepted"]
    # Z3 not asked: said, with what it leaves unchecked
    assert report["limits"] == ["Z3 off (--no-z3): the conflicts only Z3 finds are not sought; "
                                "Q16, Q22, Q24 not checked (their bounded proofs are Z3 queries)"]


def test_accepted_conflict_of_a_pinned_producer_option():
    """Q4-opener=first calls conformant a delta tagged by the first opener after a replacing
    snapshot re-minted the owner: SUB-OWNER-AGREE forbids it under draft (an ``accepted``
    conflict, its witness conformant under the proposal); the converse delta is
    ``contradicted``."""
    report = resolve(proposal_from_pins("Q4-opener=first"), depth=4, z3=False)
    assert _replays(report) > 10
    jsonschema.validate(report, _schema("resolve-report.schema.json"))
    by = {(c["kind"], c["subject"]): c for c in report["conflicts"]}
    accepted = by[("accepted", "producer delta-owner-disagrees (draft forbids)")]
    assert accepted["clauses"] == ["SUB-OWNER-AGREE"] and accepted["witnessUnder"] == "proposal"
    assert [(e["type"], e.get("subagentRunId")) for e in accepted["trace"]] == [
        ("RUN_STARTED", None), ("ACTIVITY_SNAPSHOT", "sub-1"), ("ACTIVITY_SNAPSHOT", None),
        ("ACTIVITY_DELTA", "sub-1"), ("RUN_FINISHED", None)]
    converse = by[("contradicted", "producer delta-owner-disagrees (the pins forbid)")]
    assert converse["witnessUnder"] == "draft"
    from counterexamples.report.resolve import render_html, render_markdown, render_text
    assert "accepted     producer delta-owner-disagrees (draft forbids) [SUB-OWNER-AGREE]" in \
        render_text(report)
    assert "calls conformant what the clause forbids" in render_markdown(report)
    assert "<h3>accepted: producer delta-owner-disagrees (draft forbids)</h3>" in \
        render_html(report)
    from properties.resolve import compare
    assert len(compare(report, dict(report, conflicts=[]))["conflicts"]["onlyA"]) == \
        len(report["conflicts"])  # each subject its own


def test_z3_limits_name_the_pins_it_cannot_encode():
    from properties.resolve import z3_limits
    limits, drop = z3_limits(proposal_from_pins("Q12=owner,Q17=strip-echo,Q2=parent"))
    assert not drop and len(limits) == 2
    assert "takes Q12=stream, not the pinned Q12=owner" in limits[0]
    assert "takes Q17=as-received, not the pinned Q17=strip-echo" in limits[1]
    limits, drop = z3_limits(proposal_from_pins("Q14=adopt"))
    assert drop and "Q14=adopt" in limits[0] and "vacuity answers are dropped" in limits[0]
    from counterexamples.report.resolve import render_html, render_markdown, render_text
    shown = dict(resolve(proposal_from_pins("Q12=owner"), depth=2, z3=False),
                 limits=["Z3: one limit"])
    jsonschema.validate(shown, _schema("resolve-report.schema.json"))
    assert "\nlimits:\n  Z3: one limit\n" in render_text(shown)
    assert "**Limits**\n\n- Z3: one limit" in render_markdown(shown)
    assert "<h2 id='limits'>Limits</h2><ul><li>Z3: one limit</li></ul>" in render_html(shown)
    assert z3_limits(proposal_from_pins("Q2=parent,Q8=keep")) == ([], False)


def test_z3_vacuity_dropped_for_a_pin_it_encodes_at_draft(report):
    """With Q14=adopt beside the committee's pins, Z3's vacuity answers (the missing-delta
    rules under Q8=keep) are another reading's: dropped; its consistency shape stays."""
    from properties.resolve import _z3_conflicts
    got = _z3_conflicts(proposal_from_pins("Q2=parent,Q8=keep,Q14=adopt"), 5)
    assert [(c["kind"], c["subject"]) for c in got] == \
        [("contradicted", "snapshot-replace-false-untagged-on-subagent-activity")]
    assert {c["subject"] for c in report["conflicts"] if c["engine"] == "Z3"} >= \
        {"ACT-DELTA-MISSING", "snapshot-replace-false-untagged-on-subagent-activity"}


def test_page_links_only_to_sections_it_draws_each_id_once(report):
    """The question table links a question to its section only where the page draws one
    (a pinned knob's trace or an open question's witness): a closed question (Q7, Q16, ...)
    has none, so its row is not a link; two pinned knobs of one question (Q4, Q4-opener)
    give the id once."""
    import copy
    from counterexamples.report.resolve import render_html
    page = render_html(report)
    ids = re.findall(r"\bid='([^']+)'", page)
    targets = re.findall(r"href='#([^']+)'", page)
    assert sorted(set(targets) - set(ids)) == []
    assert "<td>Q16</td>" in page and "href='#q-Q16'" not in page
    assert "<td><a href='#q-Q1'>Q1</a></td>" in page and "<section id='q-Q1'>" in page
    twice = copy.deepcopy(report)
    extra = copy.deepcopy(twice["traces"][0])
    extra["knob"] = extra["knob"] + "-again"
    twice["traces"].append(extra)
    ids = re.findall(r"\bid='([^']+)'", render_html(twice))
    assert len(ids) == len(set(ids))


def test_diagram_captions_say_what_each_trace_witnesses(report):
    """Each sequence diagram's caption names what its trace shows (the conflict's kind and
    subject, the peer and question, the pin), not the page's internal key ('conflict-1',
    'peer-1-Q8', 'pin-Q8') before an empty 'witness:'."""
    from counterexamples.report.resolve import render_html
    page = render_html(report)
    captions = re.findall(r'<text x="4" y="16" class="notetext">([^<]*)</text>', page)
    assert captions and all(c.startswith("witness: ") and len(c) > 10 for c in captions)
    assert not any(re.search(r"(conflict|peer|pin|open)-\S* witness", c) for c in captions)
    assert ("witness: contradicted snapshot-replace-false-untagged-on-subagent-activity"
            in captions)
    assert "witness: pin Q8=keep: Q8=keep against self-revoking" in captions
    assert ("witness: @ag-ui/client 1.0.0 reducer on Q8: Q8=keep against self-revoking"
            in captions)


@pytest.fixture(scope="module")
def q7_report():
    return resolve(proposal_from_pins("Q7=skip"), depth=3, z3=False)


def test_markdown_peer_off_conformant_traces_only_is_not_non_conformant(q7_report):
    """Q7=skip parts from a peer's recorded Q7=apply only after a producer violation: the
    text, the JSON and the count call the peer conformant, so the Markdown does too, naming
    the difference apart (it said 'non-conformant on Q7' under '0 peers non-conformant')."""
    from counterexamples.report.resolve import render_html, render_markdown
    assert q7_report["counts"]["nonConformantPeers"] == 0
    row = next(r for r in q7_report["peers"] if r["peer"] == "ag-ui-protocol 1.0.0")
    assert row["conformant"] and [f["witness"] for f in row["findings"]] == [None]
    md = render_markdown(q7_report)
    assert "0 peers non-conformant" in md and "non-conformant on" not in md
    assert ("- ag-ui-protocol 1.0.0: conformant; differs off conformant traces only on Q7 "
            "(takes Q7=apply)\n") in md
    assert ("<td>Q7: takes Q7=apply, pinned skip (off conformant traces only)</td>"
            in render_html(q7_report))


def test_spec_diff_text_head_counts_as_the_json(tmp_path, capsys):
    """The text's first line gives the figures of ``--json``'s ``counts`` (a removed and an
    added sentence were '2 changed' where the JSON said ``"changed": 0``), folded within 120
    columns between words like the rest of the text."""
    from counterexamples.report.resolve import spec_dir
    pages = spec_dir()
    if pages is None:
        pytest.skip("the shared spec pages are absent")
    text = Path(pages, "state.md").read_text(encoding="utf-8")
    old = ("- The exception is per-role and self-revoking: a snapshot that itself carries\n"
           "  any activity message is declaring the complete activity set, and the\n"
           "  consumer's activity messages not in it are dropped like anything else.")
    assert old in text
    long_dir = tmp_path / ("n" * 40)
    long_dir.mkdir()
    (long_dir / "state.md").write_text(text.replace(
        old, "- Activity messages the snapshot does not list are kept, whether or not the\n"
             "  snapshot carries other activity messages."), encoding="utf-8")
    argv = ["spec", "diff", str(Path(pages, "state.md")), str(long_dir / "state.md")]
    assert main(argv + ["--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["counts"] == {"added": 1, "removed": 1, "changed": 0, "moved": 0}
    assert main(argv) == 0
    out = capsys.readouterr().out
    head = " ".join(out.split("\nremoved, ")[0].split())
    assert head.endswith(f"{doc['unchanged']} sentences unchanged, 2 differ (1 added, "
                         "1 removed; 2 normative, 0 keyword changes)")
    assert max(len(line) for line in out.splitlines()) <= 120


def test_open_questions_have_their_own_heading(report):
    """The witnesses of the questions still open stand under their own heading, once, after
    the pinned knobs' traces (they were drawn under 'Traces that pin the decisions')."""
    from counterexamples.report.resolve import render_html
    page = render_html(report)
    assert page.count("<h2 id='open'>Questions still open</h2>") == 1
    traces, rest = page.split("<h2 id='traces'>Traces that pin the decisions</h2>")
    pins, still_open = rest.split("<h2 id='open'>Questions still open</h2>")
    assert "<h3>Q8=keep</h3>" in pins and "(open)</h3>" not in pins
    assert "<section id='q-Q1'><h3>Q1 (open)</h3>" in still_open


def test_the_pair_searches_of_a_report_are_one_search_with_each_pair_s_trace(monkeypatch):
    """A report's pair searches over the exploration's vocabulary run as one joint search of
    every option the sweep's split does not give (``_Searches._batch``), and ``pair`` answers
    each with the trace of that pair's own search; a pair outside the batch is searched on its
    own, with the same answer."""
    import properties.search.system_pair as system_pair
    from model.producer import PRODUCER_ONLY_KNOBS
    from properties.resolve import _Searches
    from properties.search.explore import EXPLORE_VOCABULARY
    p = parse_reading("Q3=fatal,Q10=seen")
    joint = []
    real = system_pair.shortest_distinguishing_each
    monkeypatch.setattr(system_pair, "shortest_distinguishing_each",
                        lambda a, bs, *args, **kw: joint.append(len(bs)) or real(a, bs, *args,
                                                                                 **kw))
    searches = _Searches(p, 3)
    asked = 0
    for knob in KNOBS:
        if knob.id in PRODUCER_ONLY_KNOBS:
            continue
        for option in knob.option_names:
            if option == getattr(p, knob.attr):
                continue
            other = p.with_(**{knob.id: option})
            trace, where = searches.pair(p, other, knob.id)
            alone = system_pair.shortest_distinguishing(p, other, 3, EXPLORE_VOCABULARY,
                                                        producer=p)
            if knob.id not in ("Q15", "Q23") or alone is not None:
                assert (trace, where) == (alone, ("exploration", 3)), (knob.id, option)
            asked += 1
    # one joint search, of every pair but those whose option the sweep's split gives
    together = [n for n in joint if n > 1]
    assert len(together) == 1 and 15 <= together[0] < asked, (joint, asked)


# --- a spec author's review (2026-12-07): clauses the pins go against, Z3 off, the peers, ---------
# --- the wording as data, and what --out may replace --------------------------------------------

def test_pins_against_a_clause_text_are_named(report):
    """A pin whose option is a deviation (modelled because implementations do it, against a
    clause's text) is listed with that clause in every format: no search reports it as a
    conflict, since the pinned reading is consistent; it is the draft's text it departs from."""
    from counterexamples.report.resolve import (render_compare, render_html, render_markdown,
                                                render_text)
    from properties.resolve import pinned_deviations
    jsonschema.validate(report, _schema("resolve-report.schema.json"))
    assert [(d["knob"], d["option"], d["clause"]) for d in report["deviations"]] == \
        [("Q8", "keep", "STA-MS-SELF-REVOKE")]
    assert report["counts"]["deviations"] == 1 and report["deviations"][0]["reason"]
    several = pinned_deviations(proposal_from_pins("Q2=parent,Q18=schema,Q20=fatal"))
    assert [(d["knob"], d["clause"]) for d in several] == [
        ("Q18", "ACT-SNAP-REPLACE-FALSE"), ("Q20", "SNP-UNKNOWN-OP")]
    assert pinned_deviations(proposal_from_pins("Q2=parent,Q20=drop-op")) == []
    text = render_text(report, None)
    assert "1 against a clause's text" in text
    assert "  Q8=keep against STA-MS-SELF-REVOKE: " in text
    assert "- `Q8=keep` against STA-MS-SELF-REVOKE: " in render_markdown(report)
    assert "<code>Q8=keep</code> against STA-MS-SELF-REVOKE" in render_html(report)
    other = dict(report, proposal=dict(report["proposal"], name="faithful",
                                       pins={"Q2": "parent"}))
    assert "  faithful: none" in render_compare(compare(report, other))
    assert "Q8=keep (against STA-MS-SELF-REVOKE)" in render_compare(compare(report, other))


def test_without_z3_the_questions_its_proofs_settle_are_said_unchecked():
    """--no-z3: the questions without a knob whose bounded proof is a Z3 query are "not
    checked", not "no proof", and the limits say Z3 was off."""
    report = resolve(proposal_from_pins("Q8=keep"), depth=2, z3=False)
    notes = {q["question"]: q["note"] for q in report["questions"]}
    for qid in ("Q16", "Q22", "Q24"):
        assert notes[qid].startswith("not checked: Z3 is off (--no-z3)"), notes[qid]
    assert report["limits"][0].startswith("Z3 off (--no-z3)")
    assert "Q16, Q22, Q24 not checked" in report["limits"][0]
    asked = resolve(proposal_from_pins("Q8=keep"), depth=2)
    assert all(not q["note"].startswith("not checked") for q in asked["questions"])


def test_a_peer_is_not_non_conformant_on_a_trace_the_proposal_forbids():
    """With Q12=owner and Q14=adopt beside Q4-opener=first, no conformant trace to depth 4
    parts the opener options in a verdict; the witness found instead is one the pins forbid
    (SUB-OWNER-AGREE), so the peers that take Q4-opener=current differ off conformant traces
    only. Every peer witness left is a verdict split or a trace the pins allow."""
    report = resolve(proposal_from_pins("Q12=owner,Q14=adopt,Q4-opener=first"), depth=4,
                     z3=False)
    findings = [f for r in report["peers"] for f in r["findings"] if f["knob"] == "Q4-opener"]
    assert findings and all(f["witness"] is None for f in findings)
    pin = next(t for t in report["traces"] if t["knob"] == "Q4-opener")
    assert pin["witness"]["decides"] == "conformance"
    assert pin["witness"]["conformance"]["first"] == ["SUB-OWNER-AGREE"]
    for r in report["peers"]:
        for f in r["findings"]:
            w = f["witness"]
            assert w is None or w["decides"] == "verdict" or not w["conformance"][f["pinned"]]
        assert r["conformant"] == (not any(f["witness"] for f in r["findings"]))


_CONTROL = {"page": "st\u001b[2Jate", "section": "MS\u0007\r\u202eX",
            "text": "a\u001b]0;title\u0007 b\nc <img src=x onerror=alert(1)>"}


def test_a_proposal_s_wording_is_shown_as_data(tmp_path, capsys):
    """Control characters in a wording's page, section and text are escaped in text, Markdown
    and HTML (never sent to the terminal or the page raw), and markup in Markdown is shown, not
    taken as HTML."""
    proposal = tmp_path / "p.json"
    proposal.write_text(json.dumps({"name": "x", "pins": {"Q8": "keep"},
                                    "wording": {"Q8": _CONTROL}}))
    for fmt in ("text", "md", "html"):
        assert main(["resolve", str(proposal), "--depth", "2", "--no-z3", "--wide",
                     "--format", fmt]) == 0
        out = capsys.readouterr().out
        assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f\u202e]", out), fmt
        assert "st\\x1b[2Jate" in out and "MS\\x07\\r\\u202eX" in out, fmt
        assert "\\x1b]0;title\\x07" in out, fmt
        if fmt != "text":
            assert "<img" not in out and "&lt;img src=x onerror=alert(1)&gt;" in out, fmt
    # a name with markup heads the Markdown as text (it was in a code span, where entities
    # show as typed), and so it does in a comparison of two proposals
    proposal.write_text(json.dumps({"name": "x|<b>y</b>", "pins": {"Q8": "keep"}}))
    assert main(["resolve", str(proposal), "--depth", "2", "--no-z3", "--format", "md"]) == 0
    assert capsys.readouterr().out.startswith(
        "### activity-check resolve: x\\|&lt;b&gt;y&lt;/b&gt;\n")
    assert main(["resolve", str(proposal), "--pin", "Q8=keep", "--depth", "2", "--no-z3",
                 "--format", "md"]) == 0
    compared = capsys.readouterr().out
    assert "<b>" not in compared and compared.startswith("### x\\|&lt;b&gt;y&lt;/b&gt; vs ")


def _never_searched(monkeypatch):
    import properties.resolve as resolve_module

    def refuse(*args, **kwargs):
        raise AssertionError("the search ran before the input was checked")
    monkeypatch.setattr(resolve_module, "resolve", refuse)


def test_an_unreadable_or_linked_spec_page_is_refused_before_the_search(tmp_path, capsys,
                                                                        monkeypatch):
    """--spec DIR whose page of the wording is not UTF-8: one line naming the file, line and
    column, exit 2, before any search (it raised a traceback after the whole analysis); a page
    that is a symbolic link is refused (a name from a proposal is never read through a
    link)."""
    _never_searched(monkeypatch)
    pages = tmp_path / "spec"
    pages.mkdir()
    (pages / "state.md").write_bytes(b"## `MESSAGES_SNAPSHOT`\nbad \xff byte here.\n")
    proposal = tmp_path / "p.json"
    wording = {"page": "state", "section": "MESSAGES_SNAPSHOT", "text": "Keep it."}
    proposal.write_text(json.dumps({"name": "x", "pins": {"Q8": "keep"},
                                    "wording": {"Q8": wording}}))
    assert main(["resolve", str(proposal), "--spec", str(pages)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert f"Q8's wording: {pages / 'state.md'}:2:5: not UTF-8" in err
    (pages / "state.md").unlink()
    (pages / "real.md").write_text("## `MESSAGES_SNAPSHOT`\nA sentence.\n")
    (pages / "state.md").symlink_to(pages / "real.md")
    assert main(["resolve", str(proposal), "--spec", str(pages)]) == 2
    err = capsys.readouterr().err
    assert "state.md: the page of Q8's wording is a symbolic link" in err and \
        err.count("\n") == 1


def test_out_never_replaces_what_the_user_gave(tmp_path, capsys):
    """A proposal read from the --out directory under a name the report writes is refused
    before the search (it was rewritten in normalised form); a file of the user's there whose
    name the new report writes stops the write, the earlier output and the file unchanged (it
    was replaced: "the new output wins"); an empty --out (an unset variable) is refused."""
    out = tmp_path / "o"
    assert main(["resolve", "--pin", "Q8=keep", "--depth", "2", "--no-z3", "--out",
                 str(out)]) == 0
    mine = '{\n "about": "by hand",\n "name": "mine",\n "pins": {"Q8": "keep"}\n}\n'
    (out / "proposal.json").write_text(mine)
    capsys.readouterr()
    assert main(["resolve", str(out / "proposal.json"), "--depth", "2", "--no-z3", "--out",
                 str(out)]) == 2
    err = capsys.readouterr().err
    assert "is read as input and the output replaces it there" in err and err.count("\n") == 1
    assert (out / "proposal.json").read_text() == mine
    (out / "traces").mkdir()
    (out / "traces" / "Q19.jsonl").write_text("MY NOTES\n")
    before = sorted(p.name for p in out.rglob("*"))
    assert main(["resolve", "--pin", "Q8=keep,Q19=catch-all", "--depth", "2", "--no-z3",
                 "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "traces/Q19.jsonl there is not a file the earlier output wrote" in err
    assert "the earlier output there is unchanged" in err and err.count("\n") == 1
    assert (out / "traces" / "Q19.jsonl").read_text() == "MY NOTES\n"
    assert sorted(p.name for p in out.rglob("*")) == before
    assert not [p for p in tmp_path.iterdir() if ".activity-check-" in p.name]
    assert main(["resolve", "--pin", "Q8=keep", "--depth", "2", "--out", ""]) == 2
    assert "--out: an empty value" in capsys.readouterr().err


def test_json_without_out_names_no_file(capsys):
    """``--format json`` with no --out: no trace names a file (none was written); with --out
    each names the file written."""
    assert main(["resolve", "--pin", "Q8=keep,Q19=catch-all", "--depth", "2", "--no-z3",
                 "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [t["file"] for t in doc["traces"]] == [None, None]
    assert "files" not in doc and not doc.get("written")
