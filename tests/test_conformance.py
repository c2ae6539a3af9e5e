"""The AG-UI conformance corpus: the fixture writer, the format's schema, the runner's expect keys,
the official corpus under the model, and the generated activity corpus (issue 40)."""
from __future__ import annotations

import pytest

from counterexamples.report.fixture import (dumps_fixture, expect_of_verdict, fixture_of,
                                            prefix_ids, spec_page_of)
from model.readings import parse_reading
from model.verdict import evaluate
from model.wire import parse_events

STARTED = {"type": "RUN_STARTED", "threadId": "t", "runId": "r"}


def test_fixture_of_derives_expect_from_a_verdict():
    events = [STARTED,
              {"type": "ACTIVITY_SNAPSHOT", "messageId": "a", "activityType": "plan",
               "content": {"n": 1}},
              {"type": "ACTIVITY_DELTA", "messageId": "a", "activityType": "plan",
               "patch": [{"op": "replace", "path": "/n", "value": 2}]}]
    events, _ = prefix_ids("snap-delta", events)
    assert events[1]["messageId"] == "snap-delta-a" and events[0]["threadId"] == "snap-delta-t"
    assert events[2]["patch"][0]["path"] == "/n"  # payloads are data, not renamed
    fx = fixture_of("snap-delta", events, evaluate(parse_events(events)), None,
                    spec_page_of("ACT"), "a delta patches the content in place")
    assert list(fx) == ["name", "area", "description", "specPage", "kill", "stream", "expect"]
    assert fx["specPage"] == "/spec/draft/events/activity"
    assert fx["expect"] == {"outcome": "completed", "messageCount": 1, "messages": [
        {"id": "snap-delta-a", "role": "activity", "activityType": "plan", "content": {"n": 2}}]}
    assert dumps_fixture(fx).endswith("}\n")


def test_fixture_of_failure_names_the_event_and_the_reading():
    events = [{"type": "ACTIVITY_SNAPSHOT", "messageId": "a", "activityType": "plan",
               "content": {}}]  # before RUN_STARTED: the run fails
    verdict = evaluate(parse_events(events)).to_json()
    expect = expect_of_verdict(events, verdict)
    assert expect["outcome"] == "failed" and expect["errorContains"] == "ACTIVITY_SNAPSHOT"
    fx = fixture_of("early", events, verdict, parse_reading("lenient"), "/spec/draft",
                    "an event before the run starts fails it")
    assert fx["description"].endswith("(verdict under the reading lenient)")
    with pytest.raises(ValueError):
        fixture_of("Bad Name", events, verdict, None, "/spec/draft", "x")
    with pytest.raises(ValueError):
        fixture_of("ok", events, {"nothing": 1}, None, "/spec/draft", "x")


# --- the format: schema and gate ------------------------------------------------------------------

import json
import os
import re
import subprocess
import sys

from activity_check.cli import main
from counterexamples.conformance.fixtures import (FixtureError, fixture_from_json, gate_problems,
                                                  load_fixtures, official_corpus,
                                                  schema_problems)
from counterexamples.conformance.runner import (FAIL, PASS, RELAXED, UNOBSERVABLE, judge,
                                                model_answers, run_fixtures, subset_match,
                                                to_junit)
from counterexamples.conformance.fixtures import Fixture

OFFICIAL = official_corpus()
needs_official = pytest.mark.skipif(OFFICIAL is None, reason="the official AG-UI conformance "
                                    "corpus (shared/data/ag-ui-conformance/draft) is not here")


def _doc(**expect) -> dict:
    return {"name": "x-one", "area": "activity", "description": "d", "specPage": "/spec/draft",
            "kill": "k", "stream": [STARTED], "expect": {"outcome": "completed", **expect}}


def test_schema_refuses_unknown_keys_everywhere_and_accepts_the_format():
    assert schema_problems(_doc(messageCount=0)) == []
    assert schema_problems({**_doc(messageCount=0), "extra": 1}) == [
        "(top level): unknown key(s) refused ('extra' was unexpected)"]
    assert schema_problems(_doc(messageCount=0, eventz=[]))[0].startswith("expect: unknown key")
    bad_override = {**_doc(messageCount=0), "expectOverrides": {"dotnet": {"messageCount": 1}}}
    assert schema_problems(bad_override) == [
        "expectOverrides.dotnet: 'intentional' is a required property"]
    assert schema_problems(_doc(outcome="crashed"))[0].startswith("expect.outcome:")


def test_the_gate_wants_a_second_key_and_a_reason_for_each_failure():
    assert gate_problems(_doc()) == ["expect: asserts nothing beside outcome"]
    assert gate_problems(_doc(warnings=[])) == ["expect: asserts nothing beside outcome"]
    assert gate_problems(_doc(outcome="failed", messageCount=0)) == [
        "expect: outcome failed without errorContains or runError"]
    lane = {**_doc(messageCount=1), "expectOverrides": {
        "dotnet": {"intentional": "why", "outcome": "failed"}}}
    assert gate_problems(lane) == [
        "expectOverrides.dotnet: outcome failed without errorContains or runError"]
    assert gate_problems(_doc(messageCount=0), "other.json") == [
        "name: 'x-one' is not the file name 'other.json'"]
    with pytest.raises(FixtureError, match=r"^<memory>: expect: asserts nothing"):
        fixture_from_json(_doc())


def test_a_folder_manifest_is_checked_both_ways(tmp_path):
    good = _doc(messageCount=0)
    (tmp_path / "x-one.json").write_text(json.dumps(good))
    (tmp_path / "MANIFEST.txt").write_text("# listing\nx-one.json\n")
    assert [f.name for f in load_fixtures([str(tmp_path)])] == ["x-one"]
    (tmp_path / "x-two.json").write_text(json.dumps({**good, "name": "x-two"}))
    with pytest.raises(FixtureError, match="does not list x-two.json"):
        load_fixtures([str(tmp_path)])
    (tmp_path / "MANIFEST.txt").write_text("x-one.json\nx-two.json\nx-three.json\n")
    with pytest.raises(FixtureError, match="lists x-three.json, which is not there"):
        load_fixtures([str(tmp_path)])
    (tmp_path / "x-one.json").write_text('{"name": "x-one", "name": "x-one"}')
    with pytest.raises(FixtureError, match="x-one.json"):
        load_fixtures([str(tmp_path / "x-one.json")])



def test_a_folder_pipe_or_link_is_refused_not_waited_on(tmp_path):
    """A named pipe among a folder's fixtures is refused at once (it used to block the run
    for ever on open), and a symbolic link is refused, not followed, as every listed input."""
    (tmp_path / "x-one.json").write_text(json.dumps(_doc(messageCount=0)))
    os.mkfifo(tmp_path / "x-pipe.json")
    with pytest.raises(FixtureError, match="x-pipe.json: refused: a named pipe"):
        load_fixtures([str(tmp_path)])
    os.unlink(tmp_path / "x-pipe.json")
    os.symlink(tmp_path / "x-one.json", tmp_path / "x-link.json")
    with pytest.raises(FixtureError, match="x-link.json: refused: a symbolic link"):
        load_fixtures([str(tmp_path)])
    os.unlink(tmp_path / "x-link.json")
    os.mkfifo(tmp_path / "named.json")  # named on the command line: read, no writer is empty
    with pytest.raises(FixtureError, match="named.json: line 1: not valid JSON"):
        load_fixtures([str(tmp_path / "named.json")])

# --- judging each key -----------------------------------------------------------------------------

def _fx(expect: dict, name: str = "x-one", overrides=None, description: str = "d") -> Fixture:
    doc = {**_doc(), "name": name, "description": description, "expect": expect}
    if overrides:
        doc["expectOverrides"] = overrides
    return Fixture(name, "<t>", doc)


ANSWER = {"messages": [{"id": "m1", "role": "assistant", "content": "hi"}], "fatal": None,
          "warnings": [{"code": "UNKNOWN_EVENT_DROPPED", "detail": "FUTURE_EVENT dropped"}],
          "events": [STARTED, {"type": "RUN_ERROR", "message": "boom: gone", "code": "E1"},
                     {"type": "RUN_FINISHED", "outcome": {"type": "success"}}],
          "state": None, "observes": ["state"],
          "request": {"threadId": "t", "messages": []}}


def _keys(result):
    return {k.key: k.status for k in result.keys}


def test_every_key_passes_on_a_matching_answer():
    expect = {"outcome": "completed", "messageCount": 1,
              "messages": [{"id": "m1", "content": "hi"}], "runError": "boom",
              "eventTypes": ["RUN_STARTED", "RUN_ERROR", "RUN_FINISHED"],
              "eventTypesAbsent": ["FUTURE_EVENT"], "eventPaths": {"1.code": "E1",
                                                                   "2.outcome.type": "success"},
              "eventAbsentPaths": ["2.outcome.interrupts"], "warnings": ["FUTURE_EVENT"],
              "state": None, "request": {"threadId": "t", "messages": []},
              "requestAbsentPaths": ["protocolVersion"]}
    result = judge(_fx(expect), ANSWER)
    assert result.status == "passed"
    assert set(_keys(result).values()) == {PASS} and len(result.keys) == len(expect)


def test_every_key_fails_with_expected_and_actual():
    expect = {"outcome": "failed", "errorContains": "x", "messageCount": 2,
              "messages": [{"id": "m1", "content": "hello"}], "runError": "other",
              "eventTypes": ["RUN_STARTED"], "eventTypesAbsent": ["RUN_ERROR"],
              "eventPaths": {"1.code": "E2"}, "eventAbsentPaths": ["1.code"],
              "warnings": ["nothing like it"], "noWarnings": True, "state": {"a": 1},
              "request": {"messages": [{}]}, "requestAbsentPaths": ["threadId"]}
    result = judge(_fx(expect), ANSWER)
    assert result.status == "failed" and set(_keys(result).values()) == {FAIL}
    by_key = {k.key: k for k in result.keys}
    assert by_key["messages"].note == "messages.0.content: differs"
    assert by_key["eventPaths"].actual == {"1.code": "E1"}
    assert by_key["request"].note == "request.messages: 0 items, expected 1"
    assert by_key["errorContains"].note == "the consumer did not fail the run"


def test_subset_match_rules():
    assert subset_match({"a": [1, {"b": 2}]}, {"a": [1.0, {"b": 2, "c": 3}], "z": 0}) is None
    assert subset_match([1], [1, 2]) == "(value): 2 items, expected 1"
    assert subset_match({"a": True}, {"a": 1}) == "a: differs"  # a boolean is no number
    assert subset_match({}, {"anything": 1}) is None  # the README's trap: asserts nothing


def test_a_key_the_adapter_cannot_show_is_skipped_not_passed():
    bare = {"messages": [], "fatal": None, "warnings": None}
    result = judge(_fx({"outcome": "completed", "eventTypes": ["RUN_STARTED"],
                        "noWarnings": True, "state": {}, "request": {}}), bare)
    assert result.status == "passed"
    assert _keys(result) == {"outcome": PASS, "eventTypes": UNOBSERVABLE,
                             "noWarnings": UNOBSERVABLE, "state": UNOBSERVABLE,
                             "request": UNOBSERVABLE}
    assert "not observable by this adapter" in result.keys[1].note
    # a null state without 'observes' is not observed; with it, it is the value null
    assert judge(_fx({"outcome": "completed", "state": None}),
                 {**bare, "state": None}).keys[1].status == UNOBSERVABLE


def test_lanes_and_the_third_party_relaxations():
    fx = _fx({"outcome": "completed", "messageCount": 2, "warnings": ["FUTURE"]},
             overrides={"dotnet": {"intentional": "why", "messageCount": 1}})
    assert judge(fx, ANSWER).status == "failed"
    assert judge(fx, ANSWER, lane="dotnet").status == "passed"
    third = judge(fx, ANSWER, third_party=True)  # no override: the base expect, warnings aside
    assert _keys(third) == {"outcome": PASS, "warnings": RELAXED, "messageCount": FAIL}
    era = _fx({"outcome": "completed", "request": {"messages": [{}]}}, name="era-0-0-1-x")
    assert _keys(judge(era, ANSWER, third_party=True)) == {"outcome": PASS, "request": RELAXED}
    gap = _fx({"outcome": "failed", "errorContains": "role"},
              description="ADMITTED GAP: pins what the spec says not to do")
    assert judge(gap, ANSWER, third_party=True).status == RELAXED
    assert judge(gap, ANSWER).status == "failed"
    assert judge(fx, {"error": "crash: the adapter stopped"}).status == "error"


def test_third_party_keeps_must_level_warnings_and_sets_aside_the_rest():
    from counterexamples.conformance.runner import must_level_warnings
    from model.clauses import get
    from model.codes import CODES, REQUIRED_WARNINGS
    silent = {"outcome": "completed", "messages": [], "fatal": None, "warnings": []}
    for strings, kept in ((["ACTIVITY_PATCH_FAILED"], True),
                          (["ACTIVITY_DELTA_TARGET_MISSING"], False),
                          (["ACTIVITY_PATCH_FAILED", "UNKNOWN_MEMBER_STRIPPED"], False),
                          (["Failed to apply state patch"], False)):  # free text: SHOULD
        assert must_level_warnings(strings) is kept
        result = judge(_fx({"outcome": "completed", "warnings": strings}), silent,
                       third_party=True)
        assert _keys(result)["warnings"] == (FAIL if kept else RELAXED), strings
    # each required code is a warning code; its level is its clause's, but where the clause's
    # MUST is on something else and the warning only advised ('ideally')
    for code, (cid, level) in REQUIRED_WARNINGS.items():
        clause = get(cid)
        assert "warning" in CODES[code].kinds and "warn" in clause.summary.lower()
        assert level == ("MUST" if clause.keyword == "MUST" and "ideally" not in clause.summary
                         else "SHOULD"), code


def test_generated_fixtures_assert_required_warnings_and_a_silent_mutant_fails_them(generated):
    from properties.zoo import MUTANT_BY_NAME
    silent = {"ACTIVITY_PATCH_FAILED": "patch-failure-silent",
              "ACTIVITY_DELTA_TARGET_MISSING": "delta-missing-silent",
              "ACTIVITY_DELTA_TARGET_NOT_ACTIVITY": "delta-missing-silent",
              "UNKNOWN_MEMBER_STRIPPED": "strip-silently"}
    by_clause = {g.clause: g for g in generated}
    assert by_clause["ACT-DELTA-MISSING-WARN"].fixture["expect"]["warnings"] == [
        "ACTIVITY_DELTA_TARGET_MISSING"]
    assert by_clause["ACT-DELTA-MISSING-WARN"].mutant == "delta-missing-silent"
    assert by_clause["ACT-DELTA-PATCHFAIL"].fixture["expect"]["warnings"] == [
        "ACTIVITY_PATCH_FAILED"]
    warned = [g for g in generated if g.fixture and "warnings" in g.fixture["expect"]]
    assert len(warned) >= 4
    for g in warned:
        fx = fixture_from_json(g.fixture)
        for code in g.fixture["expect"]["warnings"]:
            mutant = MUTANT_BY_NAME[silent[code]]
            result = judge(fx, model_answers([fx], None, mutant)[0])
            assert _keys(result)["warnings"] == FAIL, (g.clause, code)
    # a fixture whose trace surfaces no required warning asserts none
    assert "warnings" not in by_clause["ACT-DELTA-RETYPE"].fixture["expect"]


def test_junit_reports_each_fixture():
    import xml.etree.ElementTree as ET
    results = [judge(_fx({"outcome": "completed", "messageCount": 1}), ANSWER),
               judge(_fx({"outcome": "completed", "messageCount": 3}, name="x-two"), ANSWER)]
    root = ET.fromstring(to_junit(results, "t"))
    assert root.get("tests") == "2" and root.get("failures") == "1"
    failure = root.find("testsuite/testcase[@name='x-two']/failure")
    assert failure.get("message") == "messageCount"
    assert "expected 3, actual 1" in failure.text


def test_junit_stays_xml_whatever_the_adapter_answered():
    """An adapter's message id holding U+FFFF, a control character or a lone surrogate reaches
    the failure text; it is written as an escape (the report was not well-formed XML)."""
    import xml.etree.ElementTree as ET
    odd = "a\uffff\x01\ud800]]>"
    answer = {**ANSWER, "messages": [{"id": odd, "role": "assistant", "content": "hi"}],
              "warnings": [{"code": "X", "detail": "\x0b" + odd}]}
    expect = {"outcome": "completed", "messages": [{"id": "m1"}]}
    for lane in (None, "typescript"):
        root = ET.fromstring(to_junit([judge(_fx(expect), answer, lane)], "t\x02"))
        failure = root.find("testsuite/testcase/failure")
        assert '"a\\uffff\\u0001\\ud800]]>"' in failure.text


# --- the official corpus under the model, and the docs' tables ------------------------------------

DOCS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "docs",
                    "conformance.md")


@pytest.fixture(scope="module")
def tables():
    from counterexamples.conformance.scope import docs_tables
    return docs_tables(OFFICIAL)


@needs_official
def test_docs_tables_are_what_the_code_computes(tables):
    from counterexamples.conformance.scope import fill_docs
    with open(DOCS, encoding="utf-8") as f:
        text = f.read()
    assert fill_docs(text, tables) == text, "regenerate the tables of docs/conformance.md"


@needs_official
def test_the_model_passes_or_argues_every_in_scope_official_fixture(tables):
    from counterexamples.conformance.scope import ARGUED
    table = tables["official-table"]
    assert "0 unargued" in table
    counts = re.search(r"68 fixtures: (\d+) passed, (\d+) argued, (\d+) out of scope", table)
    assert counts and int(counts.group(1)) >= 32, table[-400:]
    # each hand-written argument names a fixture of the corpus that the model does not pass
    rows = {m.group(1): m.group(2) for m in re.finditer(r"^\| `([a-z0-9-]+)` \| [^|]+ \| "
                                                         r"([a-z ]+) \|", table, re.M)}
    assert {name: rows.get(name) for name in ARGUED} == {name: "argued" for name in ARGUED}
    # the three activity fixtures pass
    assert [rows[n] for n in sorted(rows) if n.startswith("activity-")] == ["passed"] * 3


@needs_official
def test_the_official_corpus_reads_and_its_activity_fixture_is_judged_key_by_key():
    fixtures = load_fixtures([OFFICIAL])
    assert len(fixtures) == 68
    fx = next(f for f in fixtures if f.name == "activity-snapshot-then-delta")
    result = run_fixtures([fx], model_answers([fx]))[0]
    assert _keys(result) == {"outcome": PASS, "noWarnings": PASS, "messageCount": PASS,
                             "messages": PASS}
    # the .NET lane has no activity reducer: its override fails the model
    assert run_fixtures([fx], model_answers([fx]), lane="dotnet")[0].status == "failed"


# --- the generated corpus -------------------------------------------------------------------------

@pytest.fixture(scope="module")
def generated():
    from counterexamples.conformance.generate import generate
    return generate()


def test_every_shipped_fixture_passes_the_gate_the_model_and_fails_its_mutant(generated):
    from properties.zoo import MUTANT_BY_NAME
    shipped = [g for g in generated if g.fixture]
    assert len(shipped) >= 30
    names = [g.fixture["name"] for g in shipped]
    assert len(set(names)) == len(names)
    for g in shipped:
        fx = fixture_from_json(g.fixture)
        assert fx.doc["kill"].startswith(f"zoo mutant {g.mutant} ")
        assert judge(fx, model_answers([fx])[0]).status == "passed", g.clause
        mutant = MUTANT_BY_NAME[g.mutant]
        assert judge(fx, model_answers([fx], None, mutant)[0]).status == "failed", g.clause
        ids = [e[k] for e in fx.stream for k in ("messageId", "threadId", "runId") if k in e]
        assert all(i.startswith(fx.name + "-") for i in ids), fx.name


def test_the_generated_corpus_covers_the_activity_clauses_and_reports_the_rest(generated):
    from counterexamples.conformance.generate import target_clauses
    assert [g.clause for g in generated] == [c.id for c in target_clauses()]
    by_clause = {g.clause: g for g in generated}
    for cid in ("ACT-DELTA-RETYPE", "ACT-DELTA-MISSING-NOFAIL", "ACT-DELTA-PATCHFAIL",
                "ACT-DELTA-OBJECT-DETECT", "ACT-SNAP-KEEP-METADATA", "ACT-ATTR-REMINT",
                "ACT-ATTR-KEEP", "RIN-STRIP-ACTIVITY", "STA-MS-SELF-REVOKE"):
        assert by_clause[cid].fixture is not None, cid
    strip = by_clause["RIN-STRIP-ACTIVITY"].fixture
    assert any(m["role"] == "activity" for m in strip["input"]["messages"])
    assert all(m["role"] != "activity" for m in strip["expect"]["request"]["messages"])
    for g in generated:
        if g.fixture is None:
            assert g.note, g.clause


def test_prc_keep_open_is_pinned_by_its_own_mutant(generated):
    """The stripping of an undescribed member is a warning's branch (member.strip), not a
    step's: the generator counts it, so PRC-KEEP-OPEN has a fixture, killed by its mutant."""
    g = {x.clause: x for x in generated}["PRC-KEEP-OPEN"]
    assert g.fixture is not None and g.mutant == "strip-recurses-into-open"
    snap = next(e for e in g.fixture["stream"] if e["type"] == "ACTIVITY_SNAPSHOT")
    held = g.fixture["expect"]["messages"][0]
    assert set(snap) - set(held) - {"type", "messageId"} == {"extra"}  # stripped, not held
    assert held["content"] == snap["content"] != {}  # the open object kept whole


def test_clauses_unobservable_under_draft_are_computed_and_ship_off_it(generated):
    from counterexamples.conformance.generate import generate
    from model.readings import DRAFT
    from properties.zoo import MUTANT_BY_NAME
    by_clause = {g.clause: g for g in generated}
    off = {"SUB-ENDED-ACTIVITY": ("Q15", "closed", "ended-owner-delta-applied"),
           "ACT-RUN-BASELINE": ("Q23", "run-scoped", "earlier-run-delta-applied")}
    for cid, (knob, option, _) in off.items():
        assert by_clause[cid].fixture is None
        assert f"under the draft reading; under {knob}={option} " in by_clause[cid].note
    reading = DRAFT.with_(Q15="closed", Q23="run-scoped")
    shipped = {g.clause: g for g in generate(reading, reading.name)}
    for cid, (knob, option, mutant) in off.items():
        g = shipped[cid]
        assert g.fixture is not None and g.mutant == mutant, (cid, g.note)
        assert "not observable by a consumer under the draft reading" in \
            g.fixture["description"]
        fx = fixture_from_json(g.fixture)
        assert judge(fx, model_answers([fx], reading)[0]).status == "passed"
        assert judge(fx, model_answers([fx], reading, MUTANT_BY_NAME[mutant])[0]).status \
            == "failed"
        # under draft the delta applies: the fixture is not the draft's
        assert judge(fx, model_answers([fx])[0]).status == "failed"
    # a clause observable under draft says nothing of the kind
    assert "draft reading" not in shipped["ACT-DELTA-RETYPE"].fixture["description"]


def test_generate_writes_the_same_bytes_and_refuses_a_used_folder(tmp_path, capsys):
    runs = []
    for name in ("a", "b"):
        assert main(["conformance", "generate", "--out", str(tmp_path / name)]) == 0
        # issue 39 item 5: the not-shipped notes fold within 120 columns, ids whole
        out = capsys.readouterr().out
        assert "not shipped" in out and max(len(x) for x in out.splitlines()) <= 120
        assert "SUB-ENDED-ACTIVITY:" in out and "`AMB-Q15-c64683a8`" in out
        files = sorted(p.relative_to(tmp_path / name) for p in (tmp_path / name).rglob("*")
                       if p.is_file())
        runs.append({str(f): (tmp_path / name / f).read_bytes() for f in files})
    assert runs[0] == runs[1] and "streams/MANIFEST.txt" in runs[0]
    assert main(["conformance", "run", str(tmp_path / "a")]) == 0
    assert main(["conformance", "generate", "--out", str(tmp_path / "a")]) == 2


def test_generate_reads_a_proposal_as_resolve_does(tmp_path):
    """``conformance generate --proposal`` reads the proposal with resolve's reader
    (:func:`counterexamples.report.resolve.load_proposal`): a resolve proposal, wording
    included, is accepted, and each fault is one line naming the flag and the file."""
    from counterexamples.report.resolve import load_proposal
    from properties.resolve import ProposalError
    good = tmp_path / "p.json"
    good.write_text(json.dumps({"name": "p", "pins": {"Q8": "keep"}, "wording": {
        "Q8": {"page": "state", "section": "MESSAGES_SNAPSHOT", "text": "Kept."}}}))
    proposal = load_proposal(str(good))
    assert proposal.name == "p" and proposal.reading.as_dict()["Q8"] == "keep"
    for bad, message in (({"pins": {"Q8": "keep"}}, "'name'"), ({"name": "p", "pins": {}},
                                                                  "pins"),
                         ({"name": "p", "pins": {"Q99": "x"}}, "unknown knob"),
                         # it ends in a one-line description: a newline was a traceback
                         ({"name": "a\nb", "pins": {"Q8": "keep"}}, "one line"),
                         ({"name": "a\x1b[31m", "pins": {"Q8": "keep"}}, "one line")):
        path = tmp_path / "bad.json"
        path.write_text(json.dumps(bad))
        with pytest.raises(ProposalError, match=message):
            load_proposal(str(path))
    out = tmp_path / "corpus"
    proc = subprocess.run([os.path.join(os.path.dirname(sys.executable), "activity-check"),
                           "conformance", "generate", "--out", str(out), "--proposal",
                           str(path)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    assert f"--proposal {path}: 'name' must be one line" in proc.stderr and not out.exists()


def test_an_existing_junit_file_is_named_by_its_flag(tmp_path, capsys):
    good = _write(tmp_path / "x-one.json", _doc(messageCount=0))
    (tmp_path / "r.xml").write_text("kept")
    assert main(["conformance", "run", good, "--junit", str(tmp_path / "r.xml")]) == 2
    err = capsys.readouterr().err
    assert f"--junit {tmp_path / 'r.xml'}: already exists" in err and "--out" not in err
    assert (tmp_path / "r.xml").read_text() == "kept"

def test_format_md_shows_a_fixtures_area_as_inert_text():
    """--format md's area cell comes from the fixture: HTML, a link, a `|` or a newline in it
    is shown, never run, and never breaks the row (it was written raw)."""
    from counterexamples.conformance.scope import official_table
    area = "<script>alert(1)</script>|[a](javascript:x)\n| y"
    fx = Fixture("x-one", "<t>", {**_doc(messageCount=0), "area": area})
    answers = model_answers([fx])
    table = official_table([fx], run_fixtures([fx], answers, third_party=True), answers)
    row = table.splitlines()[2]
    assert row.startswith("| `x-one` | &lt;script&gt;") and "<script>" not in table
    assert row.count(" | ") == 3 and "\\[a\\]" in row and "<br>" in row

def test_a_lane_no_fixture_names_is_noted(tmp_path, capsys):
    """--lane with a name no fixture's expectOverrides has (a misspelt lane) says so on stderr;
    the run used to judge plain expect silently. The exit status is unchanged."""
    doc = {**_doc(messageCount=0), "expectOverrides": {"typescript": {
        "messageCount": 0, "intentional": "i"}}}
    good = _write(tmp_path / "x-one.json", doc)
    assert main(["conformance", "run", good, "--lane", "typscript"]) == 0
    err = capsys.readouterr().err
    assert "--lane typscript: no fixture here has overrides" in err and "typescript" in err
    assert main(["conformance", "run", good, "--lane", "typescript"]) == 0
    assert "note" not in capsys.readouterr().err

def test_a_proposal_named_pipe_is_never_waited_on(tmp_path):
    """--proposal through a named pipe with no writer reads as empty (one line, exit 2); it
    used to block in open() for ever."""
    os.mkfifo(tmp_path / "p.json")
    script = os.path.join(os.path.dirname(sys.executable), "activity-check")
    proc = subprocess.run([script, "conformance", "generate", "--out", str(tmp_path / "o"),
                           "--proposal", str(tmp_path / "p.json")],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    assert "--proposal" in proc.stderr and "empty (a named pipe with no writer" in proc.stderr
    assert not (tmp_path / "o").exists()


# --- the command line -----------------------------------------------------------------------------

def _cli(*args: str) -> subprocess.CompletedProcess:
    script = os.path.join(os.path.dirname(sys.executable), "activity-check")
    return subprocess.run([script, *args], capture_output=True, text=True, timeout=120)


def _write(path, doc) -> str:
    path.write_text(json.dumps(doc), encoding="utf-8")
    return str(path)


def test_run_exit_codes_and_one_line_errors(tmp_path):
    good = _write(tmp_path / "x-one.json", _doc(messageCount=0))
    assert main(["conformance", "run", good]) == 0
    bad_expect = _write(tmp_path / "x-two.json", {**_doc(messageCount=5), "name": "x-two"})
    assert main(["conformance", "run", bad_expect]) == 1
    unknown = _write(tmp_path / "x-three.json", {**_doc(messageCount=0), "name": "x-three",
                                                 "note": "extra"})
    out = _cli("conformance", "run", unknown)
    assert out.returncode == 2 and out.stderr.count("\n") == 1
    assert "x-three.json: (top level): unknown key(s) refused" in out.stderr
    out = _cli("conformance", "run", str(tmp_path / "missing.json"))
    assert out.returncode == 2 and "missing.json: no such file or folder" in out.stderr
    out = _cli("conformance", "run", good, "--lane", "dotnet", "--third-party")
    assert out.returncode == 2


def test_run_json_and_junit(tmp_path):
    good = _write(tmp_path / "x-one.json", _doc(messageCount=1))
    out = _cli("conformance", "run", good, "--json")
    assert out.returncode == 1
    doc = json.loads(out.stdout)
    assert doc["summary"]["failed"] == 1
    assert doc["results"][0]["keys"][1] == {"key": "messageCount", "status": "fail",
                                            "expected": 1, "actual": 0, "note": ""}
    junit = tmp_path / "r.xml"
    assert main(["conformance", "run", good, "--junit", str(junit)]) == 1
    assert 'failures="1"' in junit.read_text()
    assert main(["conformance", "run", good, "--junit", str(junit)]) == 2  # never overwritten


ADAPTER_WITHOUT_EVENTS = """import json, sys
for line in sys.stdin:
    request = json.loads(line)
    print(json.dumps({"id": request["id"], "messages": [], "fatal": None, "warnings": None}),
          flush=True)
"""


def test_an_adapter_process_and_keys_it_cannot_show(tmp_path):
    fx = _write(tmp_path / "x-one.json", _doc(messageCount=0, eventTypes=["RUN_STARTED"]))
    out = _cli("conformance", "run", fx, "--adapter", "model:draft")
    assert out.returncode == 0 and out.stdout.startswith("PASS x-one"), out.stdout
    adapter = tmp_path / "bare.py"
    adapter.write_text(ADAPTER_WITHOUT_EVENTS)
    out = _cli("conformance", "run", fx, "--adapter", f"{sys.executable} {adapter}")
    assert out.returncode == 0
    assert "eventTypes: skipped, not observable by this adapter (no 'events' in the answer)" \
        in out.stdout
    assert "1 keys not observable" in out.stdout


ADAPTER_BABBLING = """import sys
for line in sys.stdin:
    print("\u65e5" * 40 + "x" * 200, flush=True)
"""


def test_an_adapters_long_words_fold_within_120_columns(tmp_path):
    """An ERROR line quotes the adapter's answer (up to 120 characters, wide ones counting two):
    one word with no space was printed whole, 206 columns wide; it is cut to fit, each piece
    under the fixture's error, the text itself kept (``--wide``: one line, whole)."""
    fx = _write(tmp_path / "x-one.json", _doc(messageCount=0, eventTypes=["RUN_STARTED"]))
    adapter = tmp_path / "babble.py"
    adapter.write_text(ADAPTER_BABBLING)
    out = _cli("conformance", "run", fx, "--adapter", f"{sys.executable} {adapter}")
    assert out.returncode == 1, out.stdout
    from model.text import columns
    lines = out.stdout.splitlines()
    assert max(columns(line) for line in lines) <= 120
    assert lines[0] == "ERROR x-one: garbage: answer is not JSON (Expecting value):"
    quoted = "'" + "\u65e5" * 40 + "x" * 80 + "'"
    # 116 columns a piece after the indent: the quote, 40 wide characters (80), 35 x
    assert lines[1:3] == ["    " + quoted[:76], "    " + quoted[76:]]
    assert lines[3].startswith("1 fixtures: 0 passed, 0 failed, 1 error")
    wide = _cli("conformance", "run", fx, "--adapter", f"{sys.executable} {adapter}", "--wide")
    assert wide.stdout.splitlines()[0] == ("ERROR x-one: garbage: answer is not JSON (Expecting "
                                           "value): " + quoted)


def test_a_long_string_in_a_failed_keys_value_folds_within_120_columns(tmp_path):
    """A failed key's value is JSON cut at 200 characters; a string in it with no space (a
    blob, a URL) was printed as one word, 165 columns wide: it is cut to fit as well."""
    doc = _doc(messageCount=1, messages=[{"id": "m", "role": "user", "content": "y" * 150}])
    fx = _write(tmp_path / "x-one.json", doc)
    out = _cli("conformance", "run", fx)
    assert out.returncode == 1, out.stdout
    from model.text import columns
    lines = out.stdout.splitlines()
    assert max(columns(line) for line in lines) <= 120
    assert lines[:6] == [
        "FAIL x-one",
        "  messageCount: expected 1, actual 0",
        '  messages: expected [{"id": "m", "role": "user", "content":',
        '      "' + "y" * 113,
        "      " + "y" * 37 + '"}],',
        "      actual [] (messages: 0 items, expected 1)"]


def test_a_fixture_that_is_not_utf8_is_refused_naming_its_line():
    """One line naming the file and the line of the first byte that is not UTF-8 (it named the
    byte offset alone), as a JSON error names its line."""
    import tempfile
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "x-one.json")
        with open(path, "wb") as fh:
            fh.write(b'{\n  "name": "x-one",\n  "area": "\xe9"\n}\n')
        out = _cli("conformance", "run", path)
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr == (f"activity-check: error: {path}: line 3: not UTF-8 (byte 32)\n")


def test_an_answer_outside_the_answer_schema_is_that_fixtures_error(tmp_path):
    fx = _write(tmp_path / "x-one.json", _doc(messageCount=0, eventTypes=["RUN_STARTED"]))
    adapter = tmp_path / "odd.py"
    adapter.write_text(ADAPTER_WITHOUT_EVENTS.replace('"warnings": None',
                                                      '"warnings": None, "events": {}'))
    out = _cli("conformance", "run", fx, "--adapter", f"{sys.executable} {adapter}")
    assert out.returncode == 1, out.stdout
    first = out.stdout.splitlines()[0]  # one line: the fixture, the kind, the member at fault
    assert first.startswith("ERROR x-one: bad-response: answer member 'events' must be null "
                            "(not observed) or an array of event objects"), first
    assert "0 passed, 0 failed, 1 error" in out.stdout


def test_export_ag_ui_fixture_of_a_finding_and_of_a_trace(tmp_path):
    from counterexamples.findings import property_finding
    from counterexamples.report.export import export
    from properties.search.machines import check_trace_properties
    from properties.zoo import MUTANT_BY_NAME
    wire = [STARTED, {"type": "ACTIVITY_SNAPSHOT", "messageId": "a", "activityType": "A",
                      "content": {"n": 0}},
            {"type": "ACTIVITY_DELTA", "messageId": "a", "activityType": "A", "patch": []}]
    events = parse_events(wire)
    violation = check_trace_properties(events, MUTANT_BY_NAME["crashes-on-empty-patch"])
    finding = property_finding(violation, events, "crashes-on-empty-patch", "draft")
    fx = fixture_from_json(json.loads(export(finding, "ag-ui-fixture")))
    assert fx.name == finding.id.lower()
    assert judge(fx, model_answers([fx])[0]).status == "passed"
    assert fx.doc["kill"].startswith("zoo mutant ")
    trace = tmp_path / "My Trace.jsonl"
    trace.write_text("\n".join(json.dumps(e) for e in wire) + "\n")
    out = _cli("export", str(trace), "--format", "ag-ui-fixture")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert doc["name"] == "my-trace" and doc["stream"][1]["messageId"] == "my-trace-a"


# --- the matrix's column groups, and a real peer ------------------------------------------------

def test_the_matrix_shows_each_corpus_as_a_column_group(generated):
    import counterexamples.peers.matrix as M
    shipped = [fixture_from_json(g.fixture) for g in generated if g.fixture][:4]
    official = [fixture_from_json(_doc(messageCount=1))]
    m = M.build_matrix(["model"], seed=0, stateful=0, bfs_depth=0, max_findings=0,
                       corpora={"official": (official, True), "generated": (shipped, False)})
    doc = m.to_json()
    assert doc["conformance"]["corpora"] == {"official": {"fixtures": 1, "thirdParty": True},
                                             "generated": {"fixtures": 4, "thirdParty": False}}
    cells = doc["conformance"]["cells"]["model-draft"]
    assert cells["generated"]["summary"]["passed"] == 4
    assert cells["official"]["failed"] == ["x-one"]
    md = M.render_markdown(doc)
    assert "| peer | official: passed | failed | error | set aside | generated: passed |" in md
    assert "| model-draft | 0 | 1 | 0 | 0 | 4 | 0 | 0 | 0 | - |" in md
    assert "model-draft fails 1 of official: `x-one`" in md
    html = M.render_html(doc)
    assert '<table id="conformance">' in html and 'colspan="4">generated (4 fixtures)' in html
    # without corpora the matrix is what it was
    assert "conformance" not in M.build_matrix(["model"], seed=0, stateful=0, bfs_depth=0,
                                               max_findings=0).to_json()


@needs_official
def test_the_matrix_runs_both_corpora_with_the_third_party_relaxations(capsys):
    import argparse
    from activity_check.cli import console
    from activity_check.cmd_matrix import _corpora
    corpora = _corpora(argparse.Namespace(no_conformance=False, official=OFFICIAL),
                       console(stderr=True))
    assert {name: (len(fx), third) for name, (fx, third) in corpora.items()} == {
        "official": (68, True), "generated": (35, True)}


@needs_official
def test_the_typescript_client_through_both_corpora(generated):
    """The @ag-ui/client pipeline (Node) answers every key; skipped without its packages."""
    from counterexamples.peers.matrix import MATRIX_PEERS, peer_ready, resolve_matrix_adapter
    from counterexamples.conformance.runner import adapter_answers
    peer = next(p for p in MATRIX_PEERS if p.shortcut == "ag-ui-client:pipeline")
    if peer_ready(peer):
        pytest.skip(f"ag-ui-client:pipeline: {peer_ready(peer)}")
    spec = resolve_matrix_adapter("ag-ui-client:pipeline")
    official = load_fixtures([OFFICIAL])
    results = run_fixtures(official, adapter_answers(official, spec), third_party=True)
    assert not [k for r in results for k in r.keys if k.status == UNOBSERVABLE]
    failed = [r.name for r in results if r.status != "passed"]
    # its own lane's fixtures, but for the admitted gap (set aside) and an error text the
    # adapter reports unescaped where the fixture quotes the client's JSON-escaped message
    assert failed == ["reasoning-message-wrong-role-fatal", "unknown-enum-value-role-fatal"]
    # on its own lane, the era shims run from the fixtures' client pin
    results = run_fixtures(official, adapter_answers(official, spec), lane="typescript")
    assert [r.name for r in results if r.status != "passed"] == [
        "reasoning-message-wrong-role-fatal"]
    shipped = [fixture_from_json(g.fixture) for g in generated if g.fixture]
    answers = adapter_answers(shipped, spec)
    # the client skips a delta for a missing target without a word: the SHOULD-level warning
    # (ACT-DELTA-MISSING-WARN) fails as is and is set aside by --third-party; its MUST-level
    # one (ACTIVITY_PATCH_FAILED, SNP-SURFACE-FAILURE) it gives
    failing = {r.name: [k.key for k in r.keys if k.status == FAIL]
               for r in run_fixtures(shipped, answers) if r.status != "passed"}
    assert failing == {"act-delta-missing-warn": ["warnings"],
                       "act-delta-missing-nofail": ["warnings"]}
    third = run_fixtures(shipped, answers, third_party=True)
    assert [r.name for r in third if r.status != "passed"] == []
    patchfail = next(r for r in third if r.name == "act-delta-patchfail")
    assert _keys(patchfail)["warnings"] == PASS


def test_a_failing_fixture_with_a_long_name_shows_fail_beside_its_name(tmp_path, capsys):
    """conformance run's text: the status and the fixture's name share the first line however
    long the name (a name is one word, longer than 120 columns here), so that ``FAIL``
    is never folded away from it; the name used to go to a line of its own, leaving
    ``FAIL`` alone (a ``grep FAIL`` found no name). --wide prints the same first line."""
    name = "a-failing-fixture-" + "-".join(["with-a-very-long-name"] * 8)
    assert len(name) > 120
    fixture = {"name": name, "area": "activity", "description": "a failing fixture",
               "specPage": "/spec/draft/events/activity", "kill": "none",
               "stream": [STARTED, {"type": "ACTIVITY_SNAPSHOT", "messageId": "a",
                                    "activityType": "plan", "content": {"n": 1}},
                          {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"}],
               "expect": {"outcome": "completed", "messageCount": 2}}
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(fixture))
    for wide in ([], ["--wide"]):
        main(["conformance", "run", str(path), *wide])
        lines = capsys.readouterr().out.splitlines()
        assert lines[0] == f"FAIL {name}"
        assert lines[1] == "  messageCount: expected 2, actual 1"


def test_an_over_long_adapter_or_value_is_cut_inside_its_quotes(tmp_path, capsys):
    """``conformance run --adapter`` with 3,000 characters (and ``peer check`` /
    ``peer options --adapter``, a fixture's over-long value): the value is cut inside its
    quotes (model.text.named, quoted) and the explanation after it stays; the whole line was
    cut at 2,000 characters, losing it ('command not found', the options, 'is too long')."""
    good = _write(tmp_path / "x-one.json", _doc(messageCount=0))

    def cut(head: str) -> str:  # the first 200 characters of head + a's, quoted and cut
        return repr(head + "a" * (200 - len(head)))[:-1] + "…'"
    cases = [
        (["conformance", "run", good, "--adapter", "a" * 3000],
         f"--adapter: {cut('')}: command not found"),
        (["conformance", "run", good, "--adapter", "/nowhere/" + "a" * 3000],
         f"--adapter: {cut('/nowhere/')}: no such file"),
        (["conformance", "run", good, "--adapter", "ag-ui-client:" + "a" * 3000],
         f"--adapter {cut('ag-ui-client:')}: the mode is reducer or pipeline "
         "(ag-ui-client:reducer, ag-ui-client:pipeline)"),
        (["conformance", "run", good, "--adapter", "model:" + "Q" * 3000],
         f"--adapter 'model:{'Q' * 194}…': unknown reading '{'Q' * 80}…'; presets: draft, "
         "lenient, strict; or KNOB=OPTION pairs such as Q1=ignore,Q7=fatal"),
        (["peer", "check", "--adapter", "a" * 3000], f"--adapter: {cut('')}: command not found"),
    ]
    for argv, message in cases:
        assert main(argv) == 2, argv[:4]
        assert capsys.readouterr().err == f"activity-check: error: {message}\n", argv[:4]
    assert main(["peer", "options", "--adapter", "a" * 3000]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"activity-check: error: --adapter {cut('')}: not a built-in peer of "
                          "the matrix; one of ag-ui-client:reducer, ") and err.count("\n") == 1
    # a short one is named as it is, as before
    assert main(["conformance", "run", good, "--adapter", "no-such-adapter-here"]) == 2
    assert capsys.readouterr().err == ("activity-check: error: --adapter: no-such-adapter-here: "
                                       "command not found\n")
    # a fixture's over-long value: cut inside its quotes, what is wrong with it whole
    path = _write(tmp_path / "x-two.json", {**_doc(messageCount=0), "name": "x-" + "n" * 3000})
    assert main(["conformance", "run", path]) == 2
    assert capsys.readouterr().err == (f"activity-check: error: {path}: name: 'x-{'n' * 78}…' "
                                       "is not the file name 'x-two.json'\n")
    path = _write(tmp_path / "x-three.json", {**_doc(messageCount=0), "name": "x-three",
                                               "k" * 3000: 1})
    assert main(["conformance", "run", path]) == 2
    assert capsys.readouterr().err == (f"activity-check: error: {path}: (top level): unknown "
                                       f"key(s) refused ('{'k' * 80}…' was unexpected)\n")


def test_summary_lines_never_fold_a_count_from_its_label(tmp_path, capsys):
    """conformance run's closing lines fold between items, never inside one: the scope line
    printed ``… 0 out of scope, 1`` / ``unargued`` (and could print ``0 out of`` / ``scope``);
    --wide keeps each line whole."""
    path = _write(tmp_path / "x-two.json", {**_doc(messageCount=5), "name": "x-two"})
    assert main(["conformance", "run", path]) == 1
    assert capsys.readouterr().out.splitlines()[-3:] == [
        "1 fixtures: 0 passed, 1 failed, 0 error, 0 set aside; 0 keys not observable by "
        "model:draft",
        "the model against its scope (docs/conformance.md; judged as a third-party client): "
        "0 passed, 0 argued, 0 out of scope,",
        "  1 unargued"]
    reading = "Q1=merge,Q2=parent,Q3=keep,Q4=accept"
    assert main(["conformance", "run", path, "--model", reading]) == 1
    assert capsys.readouterr().out.splitlines()[-4:-2] == [
        "1 fixtures: 0 passed, 1 failed, 0 error, 0 set aside; 0 keys not observable by",
        f"  model:{reading}"]
    assert main(["conformance", "run", path, "--wide"]) == 1
    assert capsys.readouterr().out.splitlines()[-1].endswith("0 out of scope, 1 unargued")
