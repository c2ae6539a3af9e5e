"""What the command line prints and writes, as a new user meets it: the
settlement table without ``--out`` lists no file it did not write; the text of ``explore`` and
``run`` holds no wall-clock figure unless ``--timings`` asks for it; ``lint``, ``replay`` and
``export`` say a malformed file's fault in one wording; ``spec`` refuses a JSON file in one
line; a finding's ``.jsonl`` quotes its trace as recorded."""
from __future__ import annotations

import dataclasses
import json
import os

import pytest

from activity_check.cli import main


def _run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


# --- item 1: questions without --out --------------------------------------------------------

@pytest.fixture(scope="module")
def rows_depth_2():
    from properties.questions import settle
    return settle(depth=2)


def test_questions_without_out_lists_no_file_it_did_not_write(rows_depth_2, tmp_path,
                                                               monkeypatch, capsys):
    """Plain ``questions`` writes nothing, so its witness column names no file; its last line
    says where ``--out`` would put them. With ``--out`` every path the column gives exists."""
    import properties.questions as Q
    from counterexamples.report.questions_page import not_written_note, witness_files
    monkeypatch.setattr(Q, "settle", lambda depth: rows_depth_2)
    monkeypatch.chdir(tmp_path)
    assert len(witness_files(rows_depth_2)) >= 3  # the table has witnesses to talk about
    for form in ("text", "md"):
        code, out, _ = _run(capsys, "questions", "--depth", "2", "--format", form)
        assert code == 0 and "questions/Q" not in out, out
        if form == "text":  # the note folds within 120 columns (issue 39): read it whole
            out = out[:out.rindex("\nwitness traces not written")] + "\n" + " ".join(
                out[out.rindex("\nwitness traces not written"):].split())
        assert out.splitlines()[-1] == not_written_note(rows_depth_2)
        assert out.splitlines()[-1].startswith(
            f"witness traces not written ({len(witness_files(rows_depth_2))}): "
            "questions --out DIR writes them as DIR/questions/<Q-id>.jsonl")
    code, page, _ = _run(capsys, "questions", "--depth", "2", "--format", "html")
    assert code == 0 and "href='questions/" not in page
    assert page.count("Witness trace: not written") == len(witness_files(rows_depth_2))
    assert os.listdir(tmp_path) == []  # nothing was written
    code, out, _ = _run(capsys, "questions", "--depth", "2", "--out", "q")
    # folded, the column gives each file's name and the last line their folder (a path in
    # every cell would push the table past 120 columns); --wide: each whole path
    listed = [word for line in out.splitlines() for word in line.split()
              if word.endswith(".jsonl")]
    folder = out.splitlines()[-1].split()[-1]
    assert folder == os.path.join("q", "questions")
    assert sorted(os.path.join(folder, f) for f in listed) == \
        sorted(os.path.join("q", f) for f in witness_files(rows_depth_2))
    assert all((tmp_path / folder / f).is_file() for f in listed)
    assert "not written" not in out
    code, out, _ = _run(capsys, "questions", "--depth", "2", "--out", "q", "--wide")
    listed = [word for line in out.splitlines() for word in line.split()
              if word.endswith(".jsonl")]
    assert sorted(listed) == sorted(os.path.join("q", f) for f in witness_files(rows_depth_2))


# --- item 2: no wall-clock figure unless asked -----------------------------------------------

def test_explore_text_is_the_same_bytes_whatever_the_wall_time(monkeypatch, capsys):
    """Two searches that differ only in how long they took print the same text; ``--timings``
    adds the time (text) and the member ``seconds`` (JSON), which plain JSON does not have."""
    import properties.search.explore as E
    real = E.explore(E.ExploreOptions(depth=2, reading=None, workers=1))
    runs = iter([dataclasses.replace(real, seconds=s) for s in (0.25, 7.5, 0.5, 1.25, 2.0)])
    monkeypatch.setattr(E, "explore", lambda options: next(runs))
    _, fast, _ = _run(capsys, "explore", "--depth", "2", "--workers", "1")
    _, slow, _ = _run(capsys, "explore", "--depth", "2", "--workers", "1")
    assert fast == slow and "states/s" not in fast and " s (" not in fast
    assert fast.startswith(f"explored {real.states:,} distinct states and {real.edges:,} moves "
                           "to depth 2 under every reading at once")
    _, timed, _ = _run(capsys, "explore", "--depth", "2", "--workers", "1", "--timings")
    assert f"to depth 2 in 0.5 s ({real.states / 0.5:,.0f} states/s) under" in timed
    _, plain, _ = _run(capsys, "explore", "--depth", "2", "--workers", "1", "--json")
    _, timed, _ = _run(capsys, "explore", "--depth", "2", "--workers", "1", "--json",
                       "--timings")
    assert "seconds" not in json.loads(plain)
    assert json.loads(timed) == {**json.loads(plain), "seconds": 2.0}


def test_explore_text_is_the_same_bytes_whatever_the_number_of_workers(monkeypatch, capsys):
    """How many processes expanded the levels is a fact of the run, like its time: the text
    names it only with ``--timings``, so the output is the same for any ``--workers``."""
    import properties.search.explore as E
    real = E.explore(E.ExploreOptions(depth=2, reading=None, workers=1))
    runs = iter([dataclasses.replace(real, workers=w) for w in (1, 2, 2)])
    monkeypatch.setattr(E, "explore", lambda options: next(runs))
    _, one, _ = _run(capsys, "explore", "--depth", "2", "--workers", "1")
    _, two, _ = _run(capsys, "explore", "--depth", "2", "--workers", "2")
    assert one == two and "worker" not in one
    assert "\nvisited set: BLAKE2b-64" in one  # the line after the first (which may wrap)
    _, timed, _ = _run(capsys, "explore", "--depth", "2", "--workers", "2", "--timings")
    assert "\non 2 workers; visited set: " in timed


@pytest.fixture(scope="module")
def small_run():
    from counterexamples.pipeline import RunConfig, run_pipeline
    config = RunConfig(seed=0, examples=2, budget=float("inf"), max_events=3, bfs_depth=2)
    return run_pipeline(config, "test", coverage=True)


def test_run_text_is_the_same_bytes_whatever_the_wall_time(small_run, tmp_path, monkeypatch,
                                                           capsys):
    import counterexamples.pipeline as P
    results = iter([dataclasses.replace(small_run, seconds=s) for s in (0.5, 9.0, 3.25, 4.0)])
    monkeypatch.setattr(P, "run_pipeline", lambda *a, **kw: next(results))
    argv = ["run", "--examples", "2", "--bfs-depth", "2", "--max-events", "3", "--budget",
            "inf", "--out", str(tmp_path / "out")]
    _, first, _ = _run(capsys, *argv)
    _, second, _ = _run(capsys, *argv)
    assert first == second
    assert first.splitlines()[0] == ("activity-check test: seed 0, 2 conformant traces "
                                     f"({small_run.summary.to_json()['eventsChecked']} events) "
                                     "under all 573,308,928 readings")
    _, timed, _ = _run(capsys, *argv, "--timings")
    assert timed.splitlines()[0].endswith("readings, 3.2 s")
    _, doc, _ = _run(capsys, *argv, "--json", "--timings")
    assert json.loads(doc)["seconds"] == 4.0


# --- item 3: one wording for a malformed file ------------------------------------------------

MALFORMED = [
    # (file name, text, the fault as every reader says it, after "activity-check: error: ")
    ("a.json", '[{"type": "RUN_STARTED"},\n {"a" 1}]', "{f}:2:7: not valid JSON: Expecting ':' "
                                                      "delimiter"),
    ("b.json", '{"events": 5}', '{f}: member "events" must be an array of events'),
    ("c.json", "[]", "{f}: the trace holds no events"),
    ("d.jsonl", "\xff", None),  # not UTF-8: written as bytes below
]


@pytest.mark.parametrize("name, text, expected", MALFORMED)
def test_replay_lint_and_export_say_a_malformed_file_alike(tmp_path, capsys, name, text,
                                                           expected):
    path = tmp_path / name
    if expected is None:
        path.write_bytes(b"\xff\xfe")
        expected = "{f}:1:1: not UTF-8 text (invalid start byte at byte 0)"
    else:
        path.write_text(text, encoding="utf-8")
    readers = [["replay", str(path)], ["lint", str(path)]]
    if name in ("a.json", "d.jsonl"):  # export reads findings: the file-level faults alike
        readers.append(["export", str(path), "--format", "jsonl"])
    for argv in readers:
        code, _, err = _run(capsys, *argv)
        assert (code, err) == (2, "activity-check: error: " + expected.format(f=path) + "\n"), \
            argv


def test_export_names_the_event_that_is_not_an_object(tmp_path, capsys):
    path = tmp_path / "f.json"
    path.write_text(json.dumps({"id": "AMB-Q1-00000000", "kind": "ambiguity", "knob": "Q1",
                                "events": [{"type": "RUN_STARTED"}, 5]}), encoding="utf-8")
    _, _, exported = _run(capsys, "export", str(path), "--format", "jsonl")
    _, _, replayed = _run(capsys, "replay", str(path))
    fault = "event 1: an event must be a JSON object, got a number"
    assert exported == f"activity-check: error: {path}: not a finding: {fault}\n"
    assert replayed == f"activity-check: error: {path}:1: {fault}\n"


@pytest.mark.parametrize("text, fault", [
    ('{"foo": []}\n', '$.type: required member is missing (members "foo")'),
    ("[5]", "an event must be a JSON object, got a number"),
    ('[{"events": [{"type": "RUN_STARTED"}]}]',
     '$.type: required member is missing, and the object holds "events": it is a case or '
     "finding, not an event"),
])
def test_lint_refuses_a_document_that_is_no_stream_in_replays_words(tmp_path, capsys, text,
                                                                    fault):
    """``lint`` refuses a document none of whose elements has a type with ``replay``'s
    wording (file, line, event index, the first element's fault and its JSON path), only the
    forms it reads being longer."""
    from counterexamples.lint.inputs import STREAM_FORMS
    path = tmp_path / "x.json"
    path.write_text(text, encoding="utf-8")
    code, _, err = _run(capsys, "lint", str(path))
    assert code == 2 and err == (f"activity-check: error: {path}:1: event 0: {fault}, and no "
                                 "event of the file has a type, so it is not a trace: expected "
                                 f"{STREAM_FORMS}\n")
    code, _, replayed = _run(capsys, "replay", str(path))
    assert code == 2 and replayed.startswith(f"activity-check: error: {path}:1: event 0: {fault}")


def test_lint_puts_a_json_line_column_where_replay_does(tmp_path, capsys):
    """A JSON line that does not decode: the column goes after the line (``FILE:1:6:``), as
    ``replay`` puts it, not inside the reason."""
    path = tmp_path / "x.jsonl"
    path.write_text('{"a" 1}\n', encoding="utf-8")
    _, _, linted = _run(capsys, "lint", str(path))
    _, _, replayed = _run(capsys, "replay", str(path))
    assert replayed == (f"activity-check: error: {path}:1:6: not valid JSON: Expecting ':' "
                        "delimiter\n")
    assert linted.startswith(f"activity-check: error: {path}:1:6: event 0: not valid JSON: "
                             "Expecting ':' delimiter, and no event of the file has a type")


# --- item 6: spec given a JSON file ----------------------------------------------------------

@pytest.mark.parametrize("name, text", [
    ("summary.json", '{"tool": "activity-check", "note": "a SHOULD in a string"}'),
    ("trace.jsonl", '{"type": "RUN_STARTED"}\n'),
    ("page.md", '[{"type": "RUN_STARTED", "note": "MUST"}]'),
])
def test_spec_refuses_a_json_file_in_one_line(tmp_path, capsys, name, text):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    for argv in (["spec", "clauses", str(path)], ["spec", "coverage", str(path)],
                 ["spec", "diff", str(path), str(path)]):
        code, out, err = _run(capsys, *argv)
        assert (code, out) == (2, "")
        assert err == (f"activity-check: error: {path}: a JSON file, not a spec page: spec "
                       f"{argv[1]} reads Markdown pages (.md), such as the draft's\n")


def test_spec_still_reads_a_markdown_page(tmp_path, capsys):
    page = tmp_path / "p.md"
    page.write_text("# Events\n\nA consumer MUST keep the order.\n", encoding="utf-8")
    code, out, _ = _run(capsys, "spec", "clauses", str(page), "--json")
    assert code == 0 and [s["keyword"] for s in json.loads(out)] == ["MUST"]


# --- item 8: a finding's JSON lines quote the trace as recorded ------------------------------

def test_export_jsonl_quotes_the_recorded_trace(tmp_path, capsys):
    """A finding whose trace holds a number written ``1.0`` and a member the model strips
    (PRC-DROP-STRIP: the divergence a peer finding may be about) exports both as recorded; a
    finding the model wrote exports the same bytes as before (its events are already the
    typed events' wire form)."""
    from counterexamples.findings import AmbiguityFinding, finding_from_json
    from model.wire import dump_jsonl, parse_events
    events = [{"type": "RUN_STARTED", "threadId": "t1", "runId": "r1"},
              {"type": "ACTIVITY_SNAPSHOT", "messageId": "a", "activityType": "T",
               "content": {"n": 1}},
              {"type": "ACTIVITY_SNAPSHOT", "messageId": "a", "activityType": "T",
               "content": {"n": 2}, "replace": False, "metadata": {"k": 1}}]
    from counterexamples.findings import ambiguity_finding
    from properties.search.ambiguity import Witness
    from model.verdict import splits_of
    typed = parse_events(events)
    finding = ambiguity_finding(Witness("Q1", tuple(typed), splits_of(typed)["Q1"]),
                                shrink=False)
    assert isinstance(finding, AmbiguityFinding)
    assert finding.jsonl() == dump_jsonl(finding.events)  # the model's own: unchanged
    doc = finding.to_json()
    doc["events"][2]["metadata"] = {"k": 1.0}
    doc["events"][1]["x-trace"] = "kept"
    path = tmp_path / f"{doc['id']}.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    code, out, _ = _run(capsys, "export", str(path), "--format", "jsonl")
    assert code == 0
    lines = out.splitlines()
    assert lines[1] == ('{"type":"ACTIVITY_SNAPSHOT","messageId":"a","activityType":"T",'
                        '"content":{"n":1},"x-trace":"kept"}')
    assert lines[2].endswith('"metadata":{"k":1.0}}')
    assert finding_from_json(doc).jsonl() == out


# --- item 9: what a new user meets on the way --------------------------------------------------

def test_replay_all_readings_shows_what_tells_the_classes_apart(tmp_path, capsys):
    """``replay --all-readings`` summarises each verdict class in a line: two classes that
    differ only in an activity's metadata (Q1, Q19) or in the order of the messages (Q11) no
    longer print the same line."""
    events = [{"type": "RUN_STARTED", "threadId": "t1", "runId": "r1"},
              {"type": "ACTIVITY_SNAPSHOT", "messageId": "act-1", "activityType": "T",
               "content": {}},
              {"type": "ACTIVITY_SNAPSHOT", "messageId": "act-1", "activityType": "T",
               "content": {}, "replace": False, "metadata": {"k": 1}}]
    path = tmp_path / "q1.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")
    code, out, _ = _run(capsys, "replay", str(path), "--all-readings")
    summaries = [line.strip() for line in out.splitlines() if line.startswith("    -> ")]
    assert code == 0 and summaries == ['-> act-1={}/T metadata {"k": 1}; warnings none',
                                       "-> act-1={}/T; warnings none"]
    moved = [events[0], events[1],
             {"type": "ACTIVITY_SNAPSHOT", "messageId": "act-2", "activityType": "T",
              "content": {}},
             {"type": "ACTIVITY_SNAPSHOT", "messageId": "act-1", "activityType": "T",
              "content": {"n": 1}}]
    path.write_text("".join(json.dumps(e) + "\n" for e in moved), encoding="utf-8")
    code, out, _ = _run(capsys, "replay", str(path), "--all-readings")
    summaries = [line.strip() for line in out.splitlines() if line.startswith("    -> ")]
    assert len(summaries) == len(set(summaries)) >= 2
    assert any(s.endswith("; messages act-2, act-1") for s in summaries), summaries


def test_peer_without_an_action_names_the_actions(capsys):
    code, _, err = _run(capsys, "peer")
    assert (code, err) == (2, "activity-check: error: the following arguments are required: "
                              "{check,search,matrix,options}\n")


# --- item 4: patch failures in JSON terms (the FC-31 warning) ----------------------------------

def _patch_reason(doc, ops) -> str:
    from model.json_values import freeze
    from model.patch import apply_patch
    from model.wire import parse_event
    event = parse_event({"type": "ACTIVITY_DELTA", "messageId": "m", "activityType": "t",
                         "patch": ops})
    return apply_patch(freeze(doc), event.patch).reason


def test_patch_failures_say_json_types_not_python_ones():
    assert _patch_reason({"a": 1}, [{"op": "test", "path": "/a", "value": 2}]) == (
        "op 0 (test) at '/a': the value there, 1 (number), is not equal to the tested value "
        "2 (number)")
    assert _patch_reason({"a": None}, [{"op": "add", "path": "/a/b/c", "value": 1}]) == (
        "op 0 (add) at '/a/b/c': the location holds null, which has no members or elements")
    assert _patch_reason({"a": True}, [{"op": "replace", "path": "/x/y", "value": 1}]) == (
        "op 0 (replace) at '/x/y': member 'x' not found")
    reasons = [_patch_reason(doc, ops)
               for doc in ({"a": None}, {"a": "s"}, {"a": True}, {"a": {"b": 1}}, {"a": [1]})
               for ops in ([{"op": "add", "path": "/a/b/c", "value": 1}],
                           [{"op": "replace", "path": "/x/y", "value": 1}],
                           [{"op": "copy", "from": "/a/q", "path": "/b"}],
                           [{"op": "add", "path": "/a/5", "value": 1}],
                           [{"op": "test", "path": "/a", "value": None}])]
    # two apply: the test of null against null, and the member "5" added to {"b": 1}
    failed = [r for r in reasons if r]
    assert len(failed) == len(reasons) - 2
    assert [r for r in failed if any(word in r for word in (
        "<class", "NoneType", "dict", "True", "None", "{'", "__getitem__", " list"))] == []


def test_the_fc31_warning_names_json_values(tmp_path, capsys):
    """FC-31's STATE_DELTA whose ``test`` fails: the warning's detail in JSON terms."""
    events = [{"type": "RUN_STARTED", "threadId": "t1", "runId": "r1"},
              {"type": "STATE_SNAPSHOT", "snapshot": {"a": 1}},
              {"type": "STATE_DELTA", "delta": [{"op": "test", "path": "/a", "value": 2},
                                                {"op": "replace", "path": "/a", "value": 3}]}]
    path = tmp_path / "fc31.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")
    code, out, _ = _run(capsys, "replay", str(path), "--json")
    (warning,) = json.loads(out)["warnings"]
    assert code == 0 and (warning["code"], warning["atEvent"]) == ("STATE_PATCH_FAILED", 2)
    assert warning["detail"].endswith("op 0 (test) at '/a': the value there, 1 (number), is "
                                      "not equal to the tested value 2 (number)")
