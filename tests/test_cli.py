"""Tests for the command line (activity_check.cli): exit codes, one-line errors, JSON outputs.

The contract under test (cli.py module docstring): exit 0 when the command ran (a fatal verdict
is data), 2 for unusable input or arguments with exactly one line on stderr starting with
``activity-check: error:`` and never a traceback, 1 for an internal error. ``replay`` of a trace
holding a malformed event prints the verdict on stdout and also exits 2 with the malformed event
named on stderr (file:line, event index, JSON path, clause).

Most tests call :func:`activity_check.cli.main` in-process (capsys); a few run the installed
console script as a real subprocess. Defects found this way were fixed; their tests stay as regressions.
"""
from __future__ import annotations

import filecmp
import json
import math
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from activity_check.cli import main

SCRIPT = Path(sys.executable).parent / "activity-check"
ERROR_PREFIX = "activity-check: error:"

RUN_STARTED = {"type": "RUN_STARTED", "threadId": "t1", "runId": "r1"}
RUN_FINISHED = {"type": "RUN_FINISHED", "threadId": "t1", "runId": "r1"}


def snapshot(mid="a1", content=None, **extra):
    ev = {"type": "ACTIVITY_SNAPSHOT", "messageId": mid, "activityType": "PLAN",
          "content": {"steps": []} if content is None else content}
    ev.update(extra)
    return ev


def delta(patch, mid="a1"):
    return {"type": "ACTIVITY_DELTA", "messageId": mid, "activityType": "PLAN", "patch": patch}


CONFORMANT = [RUN_STARTED, snapshot(),
              delta([{"op": "add", "path": "/steps/-", "value": "search"}]), RUN_FINISHED]


# --- helpers ------------------------------------------------------------------------------------

def write_jsonl(path: Path, events) -> Path:
    path.write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")
    return path


def cli(capsys, *argv):
    """Run main in-process; return (exit code, stdout, stderr)."""
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def proc(*argv, cwd=None, env=None):
    """Run the console script as a subprocess; return the CompletedProcess (text mode)."""
    assert SCRIPT.exists(), f"console script not installed at {SCRIPT}"
    return subprocess.run([str(SCRIPT), *map(str, argv)], capture_output=True, text=True,
                          cwd=cwd, env=env, timeout=120)


def assert_one_error_line(err: str, *needles: str) -> str:
    """stderr is exactly one newline-terminated line, an activity-check error naming ``needles``."""
    assert "Traceback" not in err, err
    assert err.endswith("\n") and err.count("\n") == 1, f"expected one line on stderr, got {err!r}"
    line = err.rstrip("\n")
    assert line.startswith(ERROR_PREFIX), line
    for needle in needles:
        assert needle in line, f"{needle!r} not in {line!r}"
    return line


def tree(root: Path) -> dict[str, bytes]:
    """Every regular file under ``root`` by relative path, with its bytes."""
    return {p.relative_to(root).as_posix(): p.read_bytes()
            for p in sorted(root.rglob("*")) if p.is_file()}


def listed_files(out_dir: Path) -> set[str]:
    summary = json.loads((out_dir / "summary.json").read_text(encoding="utf-8"))
    return {f for finding in summary["findings"] for f in finding["files"]} | \
        set((summary.get("questions") or {}).get("files", [])) | \
        set((summary.get("resolve") or {}).get("files", []))


# --- replay: unusable input (exit 2, one line) ---------------------------------------------------

def test_replay_empty_file(tmp_path, capsys):
    f = tmp_path / "empty.jsonl"
    f.write_text("", encoding="utf-8")
    code, out, err = cli(capsys, "replay", f)
    assert code == 2
    assert out == ""
    assert_one_error_line(err, "empty.jsonl", "empty")


def test_replay_whitespace_only_file(tmp_path, capsys):
    f = tmp_path / "blank.json"
    f.write_text("  \n\t\n\r\n   \n", encoding="utf-8")
    code, out, err = cli(capsys, "replay", f)
    assert code == 2
    assert out == ""
    assert_one_error_line(err, "blank.json", "empty")


def test_replay_invalid_json_names_line_and_column(tmp_path, capsys):
    f = tmp_path / "broken.json"
    f.write_text('[\n  {"type": "RUN_STARTED",\n   "threadId": }\n]\n', encoding="utf-8")
    code, out, err = cli(capsys, "replay", f)
    assert code == 2
    line = assert_one_error_line(err, "broken.json", "not valid JSON")
    assert "broken.json:3:16:" in line, line


def test_replay_dash_reads_standard_input(tmp_path, capsys, monkeypatch):
    """``replay -`` reads the trace from standard input (it said "cannot read the file: No such
    file or directory"): the same verdict as from the file, named ``<stdin>``; a fault in it
    is named at ``<stdin>``'s line and event index."""
    import io
    f = write_jsonl(tmp_path / "t.jsonl", CONFORMANT)

    def feed(text: str) -> None:
        monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(text.encode()),
                                                          encoding="utf-8"))

    code, from_file, _ = cli(capsys, "replay", f, "--all-readings", "--json")
    assert code == 0
    feed(f.read_text(encoding="utf-8"))
    code, from_stdin, err = cli(capsys, "replay", "-", "--all-readings", "--json")
    assert (code, err) == (0, "") and json.loads(from_stdin) == json.loads(from_file)
    feed(f.read_text(encoding="utf-8"))
    code, text, _ = cli(capsys, "replay", "-")
    assert code == 0 and text.startswith("<stdin> under reading draft")
    feed(json.dumps(RUN_STARTED) + '\n{"type": "RUN_FINISHED", "type": "X"}\n')
    code, out, err = cli(capsys, "replay", "-")
    assert (code, out) == (2, "")
    assert assert_one_error_line(err) == (f'{ERROR_PREFIX} <stdin>:2:26: event 1: not valid '
                                          'JSON: duplicate member "type" in $')


def test_replay_invalid_json_lines_names_line(tmp_path, capsys):
    f = tmp_path / "broken.jsonl"
    f.write_text(json.dumps(RUN_STARTED) + "\n" + json.dumps(snapshot()) + "\n{oops}\n",
                 encoding="utf-8")
    code, _, err = cli(capsys, "replay", f)
    assert code == 2
    assert_one_error_line(err, "broken.jsonl:3:", "event 2", "not valid JSON")


def test_replay_array_element_not_an_object_names_event_index(tmp_path, capsys):
    f = tmp_path / "numbers.json"
    f.write_text("[\n" + json.dumps(RUN_STARTED) + ",\n  42\n]\n", encoding="utf-8")
    code, out, err = cli(capsys, "replay", f)
    assert code == 2
    assert out == ""
    assert_one_error_line(err, "numbers.json:3", "event 1", "a number")


@pytest.mark.parametrize("text, needle", [
    ("[]", "no events"),
    ('{"events": []}', "no events"),
    ('{"events": 5}', '"events" must be an array'),
])
def test_replay_no_usable_event_list(tmp_path, capsys, text, needle):
    f = tmp_path / "nothing.json"
    f.write_text(text, encoding="utf-8")
    code, _, err = cli(capsys, "replay", f)
    assert code == 2
    assert_one_error_line(err, "nothing.json", needle)


def test_replay_missing_message_id_names_event_path_line_and_keeps_verdict(tmp_path, capsys):
    bad = snapshot()
    del bad["messageId"]
    f = write_jsonl(tmp_path / "no-id.jsonl", [RUN_STARTED, bad, RUN_FINISHED])
    code, out, err = cli(capsys, "replay", f, "--json")
    assert code == 2
    assert_one_error_line(err, "no-id.jsonl:2", "event 1", "ACTIVITY_SNAPSHOT", "$.messageId",
                          "required member is missing", "ACT-MALFORMED-FATAL")
    verdict = json.loads(out)  # the verdict is still printed
    assert verdict["fatal"]["code"] == "MALFORMED_ACTIVITY_EVENT"
    assert verdict["fatal"]["atEvent"] == 1
    assert "$.messageId" in verdict["fatal"]["detail"]
    assert verdict["reading"] == "draft"


def test_replay_missing_message_id_table_output_subprocess(tmp_path):
    bad = snapshot()
    del bad["messageId"]
    f = write_jsonl(tmp_path / "no-id.jsonl", [RUN_STARTED, bad])
    r = proc("replay", f.name, cwd=tmp_path)
    assert r.returncode == 2
    line = assert_one_error_line(r.stderr, "event 1", "$.messageId", "ACT-MALFORMED-FATAL")
    assert line.startswith(f"{ERROR_PREFIX} no-id.jsonl:2: event 1 (ACTIVITY_SNAPSHOT):"), line
    assert "MALFORMED_ACTIVITY_EVENT" in r.stdout  # the table verdict is on stdout


def test_replay_null_content(tmp_path, capsys):
    f = write_jsonl(tmp_path / "null-content.jsonl", [RUN_STARTED, {**snapshot(), "content": None}])
    code, out, err = cli(capsys, "replay", f, "--json")
    assert code == 2
    assert_one_error_line(err, "null-content.jsonl:2", "event 1", "$.content",
                          "ACT-MALFORMED-FATAL")
    assert json.loads(out)["fatal"]["clause"] == "ACT-MALFORMED-FATAL"


def test_replay_patch_path_not_a_pointer(tmp_path, capsys):
    f = write_jsonl(tmp_path / "ptr.jsonl", [
        RUN_STARTED, snapshot(), delta([{"op": "add", "path": "a/b", "value": 1}])])
    code, out, err = cli(capsys, "replay", f)
    assert code == 2
    assert_one_error_line(err, "ptr.jsonl:3", "event 2", "ACTIVITY_DELTA", "$.patch[0].path",
                          '"a/b"', "JSON Pointer")
    assert "fatal" in out


def test_replay_optional_null_is_fatal_under_draft(tmp_path, capsys):
    f = write_jsonl(tmp_path / "replace-null.jsonl", [RUN_STARTED, snapshot(replace=None)])
    code, _, err = cli(capsys, "replay", f)
    assert code == 2
    assert_one_error_line(err, "replace-null.jsonl:2", "event 1", "$.replace",
                          "EVM-ABSENT-NOT-NULL")


@pytest.mark.parametrize("reading, needles", [
    ("nonsense", ["--reading", "'nonsense'", "draft", "lenient", "strict", "KNOB=OPTION"]),
    ("Q99=x", ["--reading", "'Q99'", "Q1", "Q4-opener", "Q21", "X1"]),
    ("Q1=maybe", ["--reading", "'maybe'", "Q1", "merge", "ignore"]),
    ("", ["--reading", "empty", "draft", "lenient", "strict"]),
])
def test_replay_unknown_reading_lists_valid_options(tmp_path, capsys, reading, needles):
    f = write_jsonl(tmp_path / "ok.jsonl", CONFORMANT)
    code, out, err = cli(capsys, "replay", f, "--reading", reading)
    assert code == 2
    assert out == ""
    assert_one_error_line(err, *needles)


def test_replay_nonexistent_file(tmp_path, capsys):
    code, out, err = cli(capsys, "replay", tmp_path / "no-such-trace.jsonl")
    assert code == 2
    assert out == ""
    assert_one_error_line(err, "no-such-trace.jsonl", "No such file")


def test_replay_directory(tmp_path, capsys):
    d = tmp_path / "a-directory"
    d.mkdir()
    code, out, err = cli(capsys, "replay", d)
    assert code == 2
    assert out == ""
    assert_one_error_line(err, "a-directory", "directory")


def test_replay_directory_subprocess(tmp_path):
    (tmp_path / "traces").mkdir()
    r = proc("replay", "traces", cwd=tmp_path)
    assert r.returncode == 2
    assert r.stdout == ""
    assert_one_error_line(r.stderr, "traces", "directory")


def test_replay_not_utf8(tmp_path, capsys):
    f = tmp_path / "latin1.jsonl"
    f.write_bytes(b'{"type": "RUN_STARTED", "threadId": "t\xe9", "runId": "r1"}\n')
    code, _, err = cli(capsys, "replay", f)
    assert code == 2
    assert_one_error_line(err, "latin1.jsonl", "UTF-8")


# --- replay: known defects -----------------------------------------------------------------------

def test_replay_deeply_nested_json_subprocess(tmp_path):
    f = tmp_path / "deep.json"
    f.write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    r = proc("replay", f.name, cwd=tmp_path)
    assert r.returncode == 2
    assert_one_error_line(r.stderr, "deep.json")


def test_replay_overflowing_number_subprocess(tmp_path):
    f = tmp_path / "inf.jsonl"
    f.write_text(json.dumps(RUN_STARTED) + "\n"
                 + '{"type":"ACTIVITY_SNAPSHOT","messageId":"a1","activityType":"P",'
                   '"content":{"x":1e400}}\n', encoding="utf-8")
    r = proc("replay", f.name, cwd=tmp_path)
    assert r.returncode == 2
    assert_one_error_line(r.stderr, "inf.jsonl:2")


@pytest.mark.parametrize("as_json", [False, True], ids=["table", "json"])
def test_replay_lone_surrogate_subprocess(tmp_path, as_json):
    f = tmp_path / "surrogate.jsonl"
    f.write_text(json.dumps(RUN_STARTED) + "\n"
                 + '{"type":"ACTIVITY_SNAPSHOT","messageId":"a1","activityType":"P",'
                   '"content":{"x":"\\ud800"}}\n', encoding="utf-8")
    r = proc("replay", f.name, *(["--json"] if as_json else []), cwd=tmp_path)
    assert "Traceback" not in r.stderr, r.stderr
    assert r.returncode in (0, 2)
    if r.returncode == 2:
        assert_one_error_line(r.stderr, "surrogate.jsonl:2")


def test_replay_huge_integer_message_names_its_line(tmp_path, capsys):
    f = tmp_path / "bigint.json"
    f.write_text("[\n" + json.dumps(RUN_STARTED) + ",\n"
                 + '{"type":"STATE_SNAPSHOT","snapshot":' + "9" * 5000 + "}\n]\n",
                 encoding="utf-8")
    code, _, err = cli(capsys, "replay", f)
    assert code == 2
    line = assert_one_error_line(err, "bigint.json:3")
    assert "set_int_max_str_digits" not in line


# --- replay: usable input (exit 0) ---------------------------------------------------------------

def test_replay_conformant_trace_prints_table(tmp_path, capsys):
    f = write_jsonl(tmp_path / "ok.jsonl", CONFORMANT)
    code, out, err = cli(capsys, "replay", f)
    assert code == 0
    assert err == ""
    assert "ok.jsonl" in out and "under reading" in out and "draft" in out
    assert "messages" in out
    assert "activity" in out and "PLAN" in out and '"search"' in out
    assert "fatal: none" in out


def test_replay_text_fits_120_columns(tmp_path, capsys):
    """replay's text fits 120 columns, as every other command's (docs/outputs.md): a patch
    failure's warning (its detail names the path) and a table of long values were printed 143
    and 160 columns wide off a terminal; now they fold, nothing of the warning lost."""
    path = "/" + "missing-" * 8 + "end"
    f = write_jsonl(tmp_path / "wide.jsonl", [
        {"type": "RUN_STARTED", "threadId": "t1", "runId": "r1"},
        {"type": "ACTIVITY_SNAPSHOT", "messageId": "act-" + "x" * 60,
         "activityType": "TYPE-" + "Y" * 50, "content": {f"k{i}": "v" * 20 for i in range(4)},
         "metadata": {"m": "q" * 80}},
        {"type": "ACTIVITY_DELTA", "messageId": "act-" + "x" * 60, "activityType": "PLAN",
         "patch": [{"op": "remove", "path": path}]},
        {"type": "RUN_FINISHED", "threadId": "t1", "runId": "r1"}])
    code, out, err = cli(capsys, "replay", f, "--all-readings")
    assert code == 0 and err == ""
    assert max(len(line) for line in out.splitlines()) <= 120
    assert "warning at event 2: ACTIVITY_PATCH_FAILED act-" in out
    assert f"at '{path}'" in " ".join(out.split())


def test_replay_conformant_trace_subprocess(tmp_path):
    f = write_jsonl(tmp_path / "ok.jsonl", CONFORMANT)
    r = proc("replay", f.name, cwd=tmp_path)
    assert r.returncode == 0
    assert r.stderr == ""
    assert "fatal: none" in r.stdout


def test_replay_json_keys(tmp_path, capsys):
    f = write_jsonl(tmp_path / "ok.jsonl", CONFORMANT)
    code, out, err = cli(capsys, "replay", f, "--json")
    assert code == 0
    assert err == ""
    verdict = json.loads(out)
    assert isinstance(verdict, dict)
    assert set(verdict) == {"messages", "warnings", "fatal", "runInput", "state", "run",
                            "reading"}
    assert verdict["fatal"] is None
    assert verdict["warnings"] == []
    assert verdict["reading"] == "draft"
    assert verdict["messages"] == [{"id": "a1", "role": "activity", "activityType": "PLAN",
                                    "content": {"steps": ["search"]}}]


def test_replay_non_malformed_fatal_is_data(tmp_path, capsys):
    f = write_jsonl(tmp_path / "after-close.jsonl", [RUN_STARTED, RUN_FINISHED, snapshot()])
    code, out, err = cli(capsys, "replay", f, "--json")
    assert code == 0
    assert err == ""
    fatal = json.loads(out)["fatal"]
    assert fatal["code"] == "EVENT_AFTER_RUN_CLOSED"
    assert fatal["atEvent"] == 2


def test_replay_null_member_shimmed_under_q21(tmp_path, capsys):
    f = write_jsonl(tmp_path / "replace-null.jsonl", [RUN_STARTED, snapshot(replace=None)])
    code, out, err = cli(capsys, "replay", f, "--reading", "Q21=shim", "--json")
    assert code == 0
    assert err == ""
    verdict = json.loads(out)
    assert verdict["fatal"] is None
    assert verdict["reading"] == "Q21=shim"
    assert [w["code"] for w in verdict["warnings"]] == ["NULL_MEMBER_SHIMMED"]
    assert verdict["warnings"][0]["atEvent"] == 1
    assert "$.replace" in verdict["warnings"][0]["detail"]


Q7_TRACE = [RUN_STARTED, snapshot(content={}),
            delta([{"op": "replace", "path": "", "value": []}])]


def test_replay_all_readings_splits_q7(tmp_path, capsys):
    f = write_jsonl(tmp_path / "q7.jsonl", Q7_TRACE)
    code, out, err = cli(capsys, "replay", f, "--all-readings", "--json")
    assert code == 0
    assert err == ""
    verdict = json.loads(out)
    classes = verdict["readingClasses"]
    assert len(classes) >= 3
    assert sum(1 for c in classes if c["includesDraft"]) == 1
    draft_class = next(c for c in classes if c["includesDraft"])
    # the draft class's verdict is the draft verdict printed at the top level
    assert draft_class["verdict"] == {k: v for k, v in verdict.items()
                                      if k not in ("reading", "readingClasses")}
    assert all(any(r.startswith("Q7=") for r in c["readings"]) for c in classes)
    assert len({json.dumps(c["verdict"], sort_keys=True) for c in classes}) == len(classes)


def test_replay_all_readings_table(tmp_path, capsys):
    f = write_jsonl(tmp_path / "q7.jsonl", Q7_TRACE)
    code, out, _ = cli(capsys, "replay", f, "--all-readings")
    assert code == 0
    assert out.count("verdict class (includes draft)") == 1
    assert out.count("verdict class (other)") >= 2


def test_replay_preset_reading(tmp_path, capsys):
    f = write_jsonl(tmp_path / "q7.jsonl", Q7_TRACE)
    code, out, _ = cli(capsys, "replay", f, "--reading", "strict", "--json")
    assert code == 0
    verdict = json.loads(out)
    assert verdict["reading"] == "strict"
    assert verdict["fatal"]["code"] == "ACTIVITY_CONTENT_NOT_OBJECT"


def test_replay_field_case_object_format(tmp_path, capsys):
    case = {"id": "FC-X", "title": "a case", "events": CONFORMANT,
            "expected": {"fatal": None, "warnings": []}}
    f = tmp_path / "case.json"
    f.write_text(json.dumps(case, indent=2), encoding="utf-8")
    code, out, err = cli(capsys, "replay", f, "--json")
    assert code == 0
    assert err == ""
    verdict = json.loads(out)
    assert verdict["fatal"] is None
    assert verdict["messages"][0]["content"] == {"steps": ["search"]}
    one_line = tmp_path / "case-one-line.json"
    one_line.write_text(json.dumps(case) + "\n", encoding="utf-8")
    code, out2, _ = cli(capsys, "replay", one_line, "--json")
    assert code == 0
    assert json.loads(out2) == verdict


def test_replay_field_case_object_malformed_names_its_line(tmp_path, capsys):
    bad = snapshot()
    del bad["messageId"]
    f = tmp_path / "case.json"
    f.write_text(json.dumps({"id": "FC-X", "events": [RUN_STARTED, bad]}, indent=2),
                 encoding="utf-8")
    lines = f.read_text(encoding="utf-8").splitlines()
    # the second element of "events" opens on the line after the first element's closing brace
    expected = next(i for i, l in enumerate(lines, 1) if l.strip() == "},") + 1
    code, _, err = cli(capsys, "replay", f)
    assert code == 2
    assert_one_error_line(err, f"case.json:{expected}:", "event 1", "$.messageId")


def test_replay_bundled_field_cases_in_object_format(tmp_path, capsys):
    corpus = Path(__file__).resolve().parents[1] / "counterexamples" / "corpus" / "field-cases.jsonl"
    first = corpus.read_text(encoding="utf-8").splitlines()[0]
    f = tmp_path / "fc.json"
    f.write_text(first + "\n", encoding="utf-8")
    code, out, _ = cli(capsys, "replay", f, "--json")
    assert code == 0
    assert set(json.loads(out)) >= {"messages", "warnings", "fatal"}


# --- readings, clauses ---------------------------------------------------------------------------

def test_readings_json(capsys):
    from model.readings import KNOBS
    code, out, err = cli(capsys, "readings", "--json")
    assert code == 0
    assert err == ""
    doc = json.loads(out)
    knobs = doc["knobs"]
    assert [k["id"] for k in knobs] == [k.id for k in KNOBS]
    for k in knobs:
        names = [o["name"] for o in k["options"]]
        assert len(names) >= 2 and len(set(names)) == len(names), k["id"]
        assert k["draft"] == names[0], k["id"]
        assert all(o["meaning"] for o in k["options"]), k["id"]
        assert all(option in names for option in k["peers"].values()), k["id"]
    # each option marked (issue 39): the five the pages' text rules out are deviations, with
    # the clause and why; the draft's own option is faithful
    marked = {(k["id"], o["name"]): (o["mark"], o.get("against")) for k in knobs
              for o in k["options"]}
    assert {key: m for key, m in marked.items() if m[0] == "deviation"} == {
        ("Q8", "keep"): ("deviation", "STA-MS-SELF-REVOKE"),
        ("Q8", "by-type"): ("deviation", "STA-MS-SELF-REVOKE"),
        ("Q18", "schema"): ("deviation", "ACT-SNAP-REPLACE-FALSE"),
        ("Q20", "skip-patch"): ("deviation", "SNP-UNKNOWN-OP"),
        ("Q20", "fatal"): ("deviation", "SNP-UNKNOWN-OP")}
    assert all(m == ("faithful", None) for key, m in marked.items()
               if key not in {("Q8", "keep"), ("Q8", "by-type"), ("Q18", "schema"),
                              ("Q20", "skip-patch"), ("Q20", "fatal")})
    assert list(doc["presets"]) == ["draft", "lenient", "strict"]
    options = {k["id"]: [o["name"] for o in k["options"]] for k in knobs}
    for name, preset in doc["presets"].items():
        assert set(preset) == set(options), name
        assert all(v in options[kid] for kid, v in preset.items()), name
    assert doc["presets"]["draft"] == {k["id"]: k["draft"] for k in knobs}
    assert doc["presets"]["lenient"] != doc["presets"]["draft"]
    assert doc["presets"]["strict"] != doc["presets"]["draft"]
    assert doc["readingCount"] == math.prod(len(k["options"]) for k in knobs)


def test_readings_table(capsys):
    code, out, _ = cli(capsys, "readings")
    assert code == 0
    assert "preset draft: (draft)" in out
    assert "preset lenient:" in out and "preset strict:" in out
    assert max(len(line) for line in out.splitlines()) <= 120  # folded (issue 39)
    code, out, _ = cli(capsys, "readings", "--wide")  # the full table: a cell on one line
    assert "merge: @ag-ui/client 1.0.0" in out  # Q1, the peers grouped by recorded option
    assert "skip-patch (deviation, against SNP-UNKNOWN-OP: not conformant): @ag-ui/client 1.0.0 reducer" \
        in out  # Q20: the reducer takes a deviation


def _clauses(capsys):
    code, out, err = cli(capsys, "clauses", "--json")
    assert code == 0
    assert err == ""
    return json.loads(out)


def test_clauses_json_registry(capsys):
    rows = _clauses(capsys)
    assert len(rows) >= 112
    ids = [r["id"] for r in rows]
    dupes = sorted({i for i in ids if ids.count(i) > 1})
    assert not dupes, f"duplicate clause ids: {dupes}"
    n_ids = [n for r in rows for n in r["nIds"]]
    counts = {f"N{i}": n_ids.count(f"N{i}") for i in range(1, 113)}
    missing = [n for n, c in counts.items() if c == 0]
    repeated = [n for n, c in counts.items() if c > 1]
    assert not missing and not repeated, f"missing {missing}; more than once {repeated}"
    for r in rows:
        assert set(r) == {"id", "nIds", "keyword", "actor", "page", "section", "summary",
                          "questions", "coveredBy"}, r["id"]
        assert isinstance(r["coveredBy"], dict), r["id"]


def test_clauses_consumer_musts_are_covered(capsys):
    rows = _clauses(capsys)
    # A duty is covered by a branch, knob or move, or declared out of the model's scope with a
    # reason; nothing is left silent.
    uncovered = [f"{r['id']} ({','.join(r['nIds'])}, {r['keyword']})" for r in rows
                 if r["actor"] == "consumer" and r["keyword"] in ("MUST", "MUST NOT")
                 and not any(r["coveredBy"].values())]
    assert not uncovered, "consumer MUST/MUST NOT clauses with nothing covering them: " + \
        "; ".join(uncovered)
    out_of_scope = {r["id"] for r in rows if "out-of-scope" in r["coveredBy"]}
    assert out_of_scope == {"PRC-STAGE-ORDER", "PRC-OUTGOING", "PRC-SAME-VERDICT",
                            "PRC-PRODUCER-INPUT", "VER-DOWNGRADE", "VER-NO-HIDDEN",
                            "ACT-DELTA-REPEAT-TYPE", "RIN-COMPLETE-HISTORY",
                            # a producer duty judged at the end of the stream, not on an event
                            # (issue 19; lint's end-of-stream check reports it)
                            "LIF-RUN-CLOSE"}


def test_clauses_table(capsys):
    code, out, _ = cli(capsys, "clauses")
    assert code == 0
    assert re.search(r"\d+ of \d+ clauses covered", out)


# --- run -----------------------------------------------------------------------------------------

RUN_SMALL = ("run", "--examples", "30", "--seed", "3", "--budget", "inf")
"""A small run; no time budget, so that its output depends on the seed alone (docs/commands.md)."""


@pytest.fixture(scope="module")
def small_run(tmp_path_factory) -> tuple[Path, str]:
    """``(output directory, stdout)`` of one :data:`RUN_SMALL` run, made once for this module
    and only read by the tests that take it (a copy is made before writing into it)."""
    import contextlib
    import io
    out_dir = tmp_path_factory.mktemp("small-run") / "o"
    text = io.StringIO()
    with contextlib.redirect_stdout(text):
        assert main([*RUN_SMALL, "--out", str(out_dir)]) == 0
    return out_dir, text.getvalue()


def test_run_writes_summary_and_findings(small_run):
    out_dir, out = small_run
    assert "wrote" in out
    summary = json.loads((out_dir / "summary.json").read_text(encoding="utf-8"))
    assert summary["tool"] == "activity-check"
    assert summary["seed"] == 3
    assert summary["requestedExamples"] == 30
    assert summary["fieldCases"], "field cases were not replayed"
    for finding in summary["findings"]:
        assert len(finding["files"]) == 2, finding["id"]
        assert {Path(p).suffix for p in finding["files"]} == {".json", ".jsonl"}
        for rel in finding["files"]:
            assert (out_dir / rel).is_file(), rel


def test_run_findings_replay(small_run, capsys):
    out_dir, _ = small_run
    summary = json.loads((out_dir / "summary.json").read_text(encoding="utf-8"))
    assert summary["findings"], "expected at least one finding with 30 examples, seed 3"
    for finding in summary["findings"]:
        jsonl = next(p for p in finding["files"] if p.endswith(".jsonl"))
        code, out, err = cli(capsys, "replay", out_dir / jsonl, "--all-readings", "--json")
        assert code == 0, (jsonl, err)
        verdict = json.loads(out)
        # an ambiguity witness splits the readings: at least two verdict classes
        assert len(verdict["readingClasses"]) >= 2, jsonl
        assert sum(1 for _ in (out_dir / jsonl).open()) == finding["length"], jsonl


def test_run_is_deterministic_and_its_json_is_the_summary(small_run, tmp_path, capsys):
    """The same seed gives the same files in another run in the same process and in another
    process under another hash seed; that process's ``--json`` output is its summary file."""
    a, b, c = small_run[0], tmp_path / "b", tmp_path / "c"
    assert cli(capsys, *RUN_SMALL, "--out", b)[0] == 0
    env = dict(os.environ, PYTHONHASHSEED="12345")
    r = proc(*RUN_SMALL, "--out", c, "--json", env=env)
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr
    assert json.loads(r.stdout) == json.loads((c / "summary.json").read_text(encoding="utf-8"))
    ta, tb, tc = tree(a), tree(b), tree(c)
    assert sorted(ta) == sorted(tb) == sorted(tc)
    assert len(ta) == 1 + len(listed_files(a))
    differing = [p for p in ta if not (ta[p] == tb[p] == tc[p])]
    assert not differing, f"files differ between runs with the same seed: {differing}"
    cmp = filecmp.dircmp(a, b)
    assert not cmp.diff_files and not cmp.left_only and not cmp.right_only


def test_run_again_into_same_directory_replaces_output(small_run, tmp_path, capsys):
    import shutil
    out_dir = tmp_path / "o"
    shutil.copytree(small_run[0], out_dir)
    first = listed_files(out_dir)
    (out_dir / "notes.txt").write_text("mine", encoding="utf-8")
    code, _, err = cli(capsys, "run", "--examples", "10", "--seed", "5", "--bfs-depth", "0",
                       "--out", out_dir)
    assert code == 0, err
    second = listed_files(out_dir)
    assert first != second, "pick seeds whose findings differ"
    on_disk = set(tree(out_dir))
    assert on_disk == second | {"summary.json", "notes.txt"}, \
        f"stale: {sorted(on_disk - second - {'summary.json', 'notes.txt'})}"
    assert (out_dir / "notes.txt").read_text(encoding="utf-8") == "mine"
    assert json.loads((out_dir / "summary.json").read_text(encoding="utf-8"))["seed"] == 5


def test_run_refuses_foreign_nonempty_directory(tmp_path, capsys):
    out_dir = tmp_path / "mine"
    (out_dir / "sub").mkdir(parents=True)
    (out_dir / "data.txt").write_text("precious", encoding="utf-8")
    (out_dir / "sub" / "x.jsonl").write_text("{}\n", encoding="utf-8")
    before = tree(out_dir)
    code, out, err = cli(capsys, *RUN_SMALL, "--out", out_dir)
    assert code == 2
    assert out == ""
    assert_one_error_line(err, "--out", "mine", "not empty")
    assert tree(out_dir) == before
    assert sorted(p.name for p in out_dir.iterdir()) == ["data.txt", "sub"]


def test_run_refuses_directory_with_foreign_summary(tmp_path, capsys):
    out_dir = tmp_path / "other"
    out_dir.mkdir()
    (out_dir / "summary.json").write_text('{"tool": "something-else"}', encoding="utf-8")
    before = tree(out_dir)
    code, _, err = cli(capsys, *RUN_SMALL, "--out", out_dir)
    assert code == 2
    assert_one_error_line(err, "--out", "other")
    assert tree(out_dir) == before


def test_run_out_is_a_regular_file(tmp_path, capsys):
    f = tmp_path / "out.txt"
    f.write_text("keep", encoding="utf-8")
    code, out, err = cli(capsys, *RUN_SMALL, "--out", f)
    assert code == 2
    assert out == ""
    assert_one_error_line(err, "--out", "out.txt", "not a directory")
    assert f.read_text(encoding="utf-8") == "keep"


@pytest.mark.parametrize("argv, needle", [
    (["--examples", "0"], "--examples"),
    (["--examples", "-3"], "--examples"),
    (["--budget", "-1"], "--budget"),
    (["--budget", "0"], "--budget"),
    (["--examples", "many"], "--examples"),
    (["--seed", "1.5"], "--seed"),
])
def test_run_bad_numbers(tmp_path, capsys, argv, needle):
    out_dir = tmp_path / "o"
    code, out, err = cli(capsys, "run", "--out", out_dir, *argv)
    assert code == 2
    assert out == ""
    assert_one_error_line(err, needle)
    assert not out_dir.exists()


@pytest.mark.parametrize("text, needle", [
    (None, "No such file"),
    ("{not json", "not valid JSON"),
    ('{"patches": {"x": 5}}', "vocabulary"),
])
def test_run_bad_vocabulary(tmp_path, capsys, text, needle):
    voc = tmp_path / "voc.json"
    if text is not None:
        voc.write_text(text, encoding="utf-8")
    code, _, err = cli(capsys, "run", "--examples", "3", "--out", tmp_path / "o",
                       "--vocabulary", voc)
    assert code == 2
    assert_one_error_line(err, "--vocabulary", "voc.json", needle)


# --- input validation: a document that is not a trace; a vocabulary that is not a choice ---------

FIELD_CASES = Path(__file__).resolve().parents[1] / "counterexamples" / "corpus" / "field-cases.jsonl"


def test_replay_object_that_is_not_an_event_is_refused(tmp_path, capsys):
    """Regression: {"foo": []} was replayed as a trace of one event missing its type."""
    f = tmp_path / "foo.json"
    f.write_text('{"foo": []}\n', encoding="utf-8")
    code, out, err = cli(capsys, "replay", f)
    assert code == 2
    assert out == ""
    assert_one_error_line(err, f"{f}:1: event 0: $.type: required member is missing",
                          '(members "foo")', "not a trace")


def test_replay_case_set_is_refused_naming_the_first_case(tmp_path, capsys):
    lines = FIELD_CASES.read_text(encoding="utf-8").splitlines()[:3]
    f = tmp_path / "cases.jsonl"
    f.write_text("\n".join(lines) + "\n", encoding="utf-8")
    code, out, err = cli(capsys, "replay", f, "--all-readings", "--json")
    assert code == 2
    assert out == ""
    assert_one_error_line(err, f"{f}:1: event 0: $.type: required member is missing",
                          'holds "events"', "case set")


def test_replay_one_field_case_object_still_reads(tmp_path, capsys):
    case = json.loads(FIELD_CASES.read_text(encoding="utf-8").splitlines()[0])
    f = tmp_path / "case.json"
    f.write_text(json.dumps(case, indent=1), encoding="utf-8")
    code, out, err = cli(capsys, "replay", f, "--json")
    assert (code, err) == (0, "")
    assert json.loads(out)["run"] == "finished"


def test_replay_wrapper_of_typeless_objects_names_event_and_line(tmp_path, capsys):
    f = tmp_path / "w.json"
    f.write_text('{"id": "x",\n "events": [\n  {"kind": "RUN_STARTED"}\n]}', encoding="utf-8")
    code, out, err = cli(capsys, "replay", f)
    assert code == 2
    assert_one_error_line(err, f"{f}:3: event 0: $.type: required member is missing",
                          '(members "kind")')


BAD_VOCABULARIES = [
    ('{"activityIds": ["a", "a"]}', 'activityIds[1]: "a" repeats activityIds[0]'),
    ('{"activityIds": ["a", ""]}', "activityIds[1]: expected a non-empty string, got the empty "
                                   "string"),
    ('{"textIds": ["m", "m"]}', 'textIds[1]: "m" repeats textIds[0]'),
    ('{"textIds": [""]}', "textIds[0]: expected a non-empty string, got the empty string"),
    ('{"activityIds": ["a", "b"], "textIds": ["m", "b"]}',
     'textIds[1]: "b" is also activityIds[1]; a message id is unique across roles (EVM-ID-UNIQUE)'),
    ('{"textIds": ["user-1"]}', 'textIds[0]: "user-1" is the id of a history message the '
                                'producer restates; a message id is unique across roles '
                                '(EVM-ID-UNIQUE)'),
    ('{"owners": [null, "s", null]}', "owners[2]: null repeats owners[0]"),
    ('{"owners": ["s", "s"]}', 'owners[1]: "s" repeats owners[0]'),
    ('{"owners": [null, ""]}', "owners[1]: expected a non-empty string or null, got the empty "
                               "string"),
    ('{"activityTypes": ["PLAN", "PLAN"]}', 'activityTypes[1]: "PLAN" repeats activityTypes[0]'),
    ('{"activityTypes": [""]}', "activityTypes[0]: expected a non-empty string, got the empty "
                                "string"),
    ('{"contents": [{"n": 1}, {"n": 1.0}]}', 'contents[1]: {"n": 1.0} repeats contents[0]'),
    ('{"metadata": [null, null]}', "metadata[1]: null repeats metadata[0]"),
    ('{"replaceFlags": [true, false, true]}', "replaceFlags[2]: true repeats replaceFlags[0]"),
    ('{"patches": {"a": [], "b": []}}', "patches.b: the same operations as patches.a"),
    ('{"patches": {"": []}}', 'patches[""]: expected a patch name, got the empty string'),
    ('{"patches": {"x": {"op": "add", "path": "/a", "value": 1}}}',
     "patches.x: expected a JSON Patch array, got an object"),
    ('{"patches": {"x": [{"op": "add", "path": "a", "value": 1}]}}',
     'patches.x[0].path: "a" is not a JSON Pointer (RFC 6901)'),
]


def test_explore_vocabulary_file_fills_the_rest_from_the_exploration_vocabulary(tmp_path,
                                                                                 capsys):
    """A partial vocabulary narrows explore's own small world (it used to widen it with the
    run's larger defaults)."""
    import json as _json
    from properties.search.explore import EXPLORE_VOCABULARY
    voc = tmp_path / "voc.json"
    voc.write_text('{"activityIds": ["act-1"]}', encoding="utf-8")
    code, out, _ = cli(capsys, "explore", "--depth", "3", "--json", "--vocabulary", voc)
    assert code == 0
    narrowed = _json.loads(out)
    code, out, _ = cli(capsys, "explore", "--depth", "3", "--json")
    full = _json.loads(out)
    assert narrowed["states"] < full["states"]
    whole = tmp_path / "whole.json"
    whole.write_text(_json.dumps({**EXPLORE_VOCABULARY.to_json(), "activityIds": ["act-1"]}),
                     encoding="utf-8")
    code, out, _ = cli(capsys, "explore", "--depth", "3", "--json", "--vocabulary", whole)
    assert _json.loads(out) == narrowed


@pytest.mark.parametrize("text, message", BAD_VOCABULARIES)
def test_explore_refuses_repeated_or_empty_vocabulary_entries(tmp_path, capsys, text, message):
    voc = tmp_path / "voc.json"
    voc.write_text(text, encoding="utf-8")
    code, out, err = cli(capsys, "explore", "--depth", "1", "--vocabulary", voc)
    assert code == 2
    assert out == ""
    assert assert_one_error_line(err) == f"{ERROR_PREFIX} --vocabulary {voc}: {message}"


@pytest.mark.parametrize("text, message", [
    ('{"patches": {"set-n": [],\n  "set-n": [{"op": "remove", "path": "/n"}]}}',
     ':2:3: not valid JSON: duplicate member "set-n" in $.patches'),
    ('{"activityIds": ["a"],\n "activityIds": ["b"]}',
     ':2:2: not valid JSON: duplicate member "activityIds" in $'),
    ('{"contents": [{"n": NaN}]}', ":1:21: not valid JSON: NaN is not a JSON value"),
])
def test_run_refuses_duplicate_members_in_the_vocabulary_file(tmp_path, capsys, text, message):
    voc = tmp_path / "voc.json"
    voc.write_text(text, encoding="utf-8")
    out_dir = tmp_path / "o"
    code, out, err = cli(capsys, "run", "--examples", "3", "--out", out_dir, "--vocabulary", voc)
    assert code == 2
    assert out == ""
    line = assert_one_error_line(err)
    assert line == f"{ERROR_PREFIX} --vocabulary {voc}{message}"
    assert not out_dir.exists()


def test_vocabulary_error_subprocess_has_no_traceback(tmp_path):
    (tmp_path / "voc.json").write_text('{"activityIds": ["a", "b", "a"]}', encoding="utf-8")
    r = proc("explore", "--vocabulary", "voc.json", cwd=tmp_path)
    assert r.returncode == 2
    assert r.stdout == ""
    assert r.stderr == (f"{ERROR_PREFIX} --vocabulary voc.json: activityIds[2]: \"a\" repeats "
                        "activityIds[0]\n")


def test_default_vocabularies_round_trip_through_a_file(tmp_path, capsys):
    from activity_check.cli import read_vocabulary
    from model.producer import DEFAULT_VOCABULARY
    from properties.search.explore import EXPLORE_VOCABULARY

    for name, vocab in (("run", DEFAULT_VOCABULARY), ("explore", EXPLORE_VOCABULARY)):
        voc = tmp_path / f"{name}.json"
        voc.write_text(json.dumps(vocab.to_json(), indent=2), encoding="utf-8")
        assert read_vocabulary(str(voc)) == vocab
    # the explore vocabulary given as a file explores exactly as the built-in default
    code, given, err = cli(capsys, "explore", "--depth", "2", "--json", "--vocabulary",
                           tmp_path / "explore.json")
    assert code == 0 and err.strip() == ""  # only the progress display's blank line
    code, default, _ = cli(capsys, "explore", "--depth", "2", "--json")
    assert code == 0 and json.loads(given) == json.loads(default)


def test_run_unknown_flag_subprocess(tmp_path):
    r = proc("run", "--examples", "3", "--out", "o", "--frobnicate", cwd=tmp_path)
    assert r.returncode == 2
    assert r.stdout == ""
    assert_one_error_line(r.stderr, "--frobnicate")
    assert not (tmp_path / "o").exists()


def test_unknown_flag_in_process(capsys):
    code, out, err = cli(capsys, "replay", "x.jsonl", "--bogus")
    assert code == 2
    assert out == ""
    assert_one_error_line(err, "--bogus")


def test_unknown_command(capsys):
    code, _, err = cli(capsys, "frobnicate")
    assert code == 2
    assert_one_error_line(err, "frobnicate")


def test_no_command_in_process(capsys):
    code, out, err = cli(capsys)
    assert code == 2
    assert out == ""
    assert_one_error_line(err, "command")


def test_no_command_subprocess():
    r = proc()
    assert r.returncode == 2
    assert r.stdout == ""
    assert_one_error_line(r.stderr, "command")


# --- run: known defects ---------------------------------------------------------------------------

def test_run_out_below_a_regular_file_subprocess(tmp_path):
    (tmp_path / "file.txt").write_text("x", encoding="utf-8")
    r = proc("run", "--examples", "3", "--out", "file.txt/sub", cwd=tmp_path)
    assert r.returncode == 2
    assert_one_error_line(r.stderr, "--out", "file.txt/sub")


@pytest.mark.parametrize("summary", ["[]", '{"tool": "activity-check", "findings": 5}',
                                     '{"tool": "activity-check", "findings": [{"files": 7}]}'],
                         ids=["list", "findings-int", "files-int"])
def test_run_out_with_odd_summary_subprocess(tmp_path, summary):
    out_dir = tmp_path / "o"
    out_dir.mkdir()
    (out_dir / "summary.json").write_text(summary, encoding="utf-8")
    r = proc("run", "--examples", "3", "--out", "o", cwd=tmp_path)
    assert "Traceback" not in r.stderr, r.stderr
    assert r.returncode == 2
    assert_one_error_line(r.stderr, "--out")


@pytest.mark.parametrize("how", ["relative", "absolute"])
def test_run_never_deletes_outside_out_dir(tmp_path, capsys, how):
    victim = tmp_path / "victim.txt"
    victim.write_text("precious", encoding="utf-8")
    out_dir = tmp_path / "o"
    out_dir.mkdir()
    listed = "../victim.txt" if how == "relative" else str(victim)
    (out_dir / "summary.json").write_text(json.dumps(
        {"tool": "activity-check", "findings": [{"id": "X", "files": [listed]}]}),
        encoding="utf-8")
    cli(capsys, "run", "--examples", "3", "--bfs-depth", "0", "--out", out_dir)
    assert victim.exists() and victim.read_text(encoding="utf-8") == "precious"


@pytest.mark.parametrize("n", ["0", "-1"])
def test_run_bad_max_events_subprocess(tmp_path, n):
    r = proc("run", "--examples", "3", "--max-events", n, "--out", "o", cwd=tmp_path)
    assert r.returncode == 2
    assert_one_error_line(r.stderr, "--max-events")


def test_run_budget_nan(tmp_path, capsys):
    code, _, err = cli(capsys, "run", "--examples", "3", "--budget", "nan",
                       "--out", tmp_path / "o")
    assert code == 2
    assert_one_error_line(err, "--budget")


def test_replay_starts_from_a_field_case_initial_state(tmp_path, capsys):
    case = tmp_path / "case.json"
    case.write_text(json.dumps({"events": [
        {"type": "RUN_STARTED", "threadId": "t", "runId": "r"},
        {"type": "STATE_DELTA", "delta": [{"op": "replace", "path": "/a", "value": 2}]}],
        "initialState": {"a": 1}}), encoding="utf-8")
    code, out, _ = cli(capsys, "replay", str(case), "--json", "--all-readings")
    doc = json.loads(out)
    assert code == 0 and doc["state"] == {"a": 2} and doc["warnings"] == []
    assert doc["readingClasses"][0]["verdict"]["state"] == {"a": 2}


def test_a_full_output_device_is_one_line_not_a_traceback(tmp_path):
    import os
    import subprocess
    import sys
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full on this machine")
    trace_file = tmp_path / "t.jsonl"
    trace_file.write_text('{"type": "RUN_STARTED", "threadId": "t", "runId": "r"}\n',
                          encoding="utf-8")
    with open("/dev/full", "w") as full:
        proc = subprocess.run([sys.executable, "-m", "activity_check.cli", "replay",
                               str(trace_file)], stdout=full, stderr=subprocess.PIPE, text=True,
                              timeout=60)
    assert proc.returncode == 2  # an output that cannot be written (docs/outputs.md, exit codes)
    assert "Traceback" not in proc.stderr and "No space left" in proc.stderr
    assert proc.stderr.count("\n") == 1


# --- writes only where told; interrupts at any time (from the third review) ----------------------

def _env_without_hypothesis_storage(tmp: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "HYPOTHESIS_STORAGE_DIRECTORY"}
    env["TMPDIR"] = str(tmp)
    return env


def test_run_writes_no_hypothesis_folder_in_the_working_directory_subprocess(tmp_path):
    """Hypothesis caches what it reads of local source under ``./.hypothesis`` even without an
    example database; ``run`` points it at a temporary directory, removed afterwards."""
    cwd, tmp = tmp_path / "cwd", tmp_path / "tmp"
    cwd.mkdir()
    tmp.mkdir()
    r = proc("run", "--examples", "20", "--bfs-depth", "0", "--budget", "5",
             "--out", tmp_path / "out", cwd=cwd, env=_env_without_hypothesis_storage(tmp))
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "out" / "summary.json").is_file()
    assert sorted(os.listdir(cwd)) == []
    assert sorted(os.listdir(tmp)) == []  # the temporary storage is gone too


def test_run_keeps_a_chosen_hypothesis_storage_subprocess(tmp_path):
    """A storage directory the user names (``HYPOTHESIS_STORAGE_DIRECTORY``) is used as it is."""
    cwd, tmp, chosen = tmp_path / "cwd", tmp_path / "tmp", tmp_path / "hypothesis-home"
    for d in (cwd, tmp):
        d.mkdir()
    chosen.mkdir()
    (chosen / "mine").write_text("kept", encoding="utf-8")
    env = _env_without_hypothesis_storage(tmp)
    env["HYPOTHESIS_STORAGE_DIRECTORY"] = str(chosen)
    r = proc("run", "--examples", "20", "--bfs-depth", "0", "--budget", "5",
             "--out", tmp_path / "out", cwd=cwd, env=env)
    assert r.returncode == 0, r.stderr
    # used as it is: neither replaced by a temporary one (none is made) nor emptied
    assert (chosen / "mine").read_text(encoding="utf-8") == "kept"
    assert sorted(os.listdir(tmp)) == [] and sorted(os.listdir(cwd)) == []


def test_main_restores_hypothesis_storage_in_process(tmp_path, capsys, monkeypatch):
    """In process (a test calling main), the command's temporary storage is not left behind in
    the environment or in Hypothesis's settled home directory."""
    import tempfile

    from hypothesis.configuration import set_hypothesis_home_dir, storage_directory

    monkeypatch.delenv("HYPOTHESIS_STORAGE_DIRECTORY", raising=False)
    # undecided, as in a fresh process: the command's directory is then the one Hypothesis takes
    set_hypothesis_home_dir(None)
    code, _, err = cli(capsys, "run", "--examples", "10", "--bfs-depth", "0", "--budget", "5",
                       "--out", tmp_path / "out")
    assert code == 0, err
    assert "HYPOTHESIS_STORAGE_DIRECTORY" not in os.environ
    home = str(storage_directory("x", intent_to_write=False).path)
    assert not home.startswith(os.path.join(tempfile.gettempdir(), "activity-check-hypothesis-"))


def test_main_interrupted_while_building_the_parser(capsys, monkeypatch):
    """A Ctrl-C before the command starts (the parser imports the command modules) is reported
    in one line, exit 130."""
    import activity_check.cli as cli_module

    def interrupted():
        raise KeyboardInterrupt

    monkeypatch.setattr(cli_module, "build_parser", interrupted)
    code, out, err = cli(capsys, "readings")
    assert (code, out, err) == (130, "", "activity-check: interrupted\n")


def test_console_script_interrupted_while_loading(capsys, monkeypatch):
    """A Ctrl-C while the command line's modules load exits 130 with one line, no traceback."""
    import importlib.abc

    import activity_check.console

    class Interrupting(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name == "activity_check.cli":
                raise KeyboardInterrupt
            return None

    monkeypatch.delitem(sys.modules, "activity_check.cli")
    monkeypatch.setattr(sys, "meta_path", [Interrupting(), *sys.meta_path])
    with pytest.raises(SystemExit) as stop:
        activity_check.console.console_main()
    assert stop.value.code == 130
    assert capsys.readouterr() == ("", "activity-check: interrupted\n")


def test_sigterm_unwinds_like_an_interrupt_subprocess(tmp_path):
    """A SIGTERM (``kill``, ``timeout``) unwinds the command as a Ctrl-C does, so that its
    clean-up runs (from the second review: the temporary Hypothesis storage was left behind),
    and exits 143 with one line."""
    import signal
    import time

    cwd, tmp = tmp_path / "cwd", tmp_path / "tmp"
    cwd.mkdir()
    tmp.mkdir()
    child = subprocess.Popen([str(SCRIPT), "run", "--examples", "100000", "--budget", "inf",
                              "--bfs-depth", "0", "--out", str(tmp_path / "out")], cwd=cwd,
                             env=_env_without_hypothesis_storage(tmp), stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while not os.listdir(tmp) and time.monotonic() < deadline:  # the command is running
            time.sleep(0.05)
        assert os.listdir(tmp), "the command never made its temporary storage"
        time.sleep(0.5)  # well inside the search
        for _ in range(12):
            # again while it runs: a signal that lands inside a callback whose exceptions
            # Python ignores (Hypothesis's garbage-collection hook) is lost, as a Ctrl-C is
            child.send_signal(signal.SIGTERM)
            try:
                _, err = child.communicate(timeout=5)
                break
            except subprocess.TimeoutExpired:
                continue
        else:
            raise AssertionError("the command kept running after twelve SIGTERMs")
    finally:
        child.kill()
    assert child.returncode == 143, err
    assert err.splitlines()[-1] == "activity-check: terminated" and "Traceback" not in err, err
    assert "interrupted" not in err
    assert os.listdir(tmp) == [] and os.listdir(cwd) == []


LOST_SIGNAL_SCRIPT = """
import gc, os, signal, sys, time
import activity_check.cli as cli
import activity_check.console

def in_a_collection(phase, info):
    if phase == "start" and not hasattr(in_a_collection, "done"):
        in_a_collection.done = True
        os.kill(os.getpid(), signal.SIGTERM)
        for _ in range(1000):
            pass  # the handler runs here, inside the collector's callback

def command(argv=None):
    gc.callbacks.append(in_a_collection)
    gc.collect()
    print("still running", flush=True)
    for _ in range(int(sys.argv[1])):
        time.sleep(0.05)
    if sys.argv[2] == "ctrl-c":
        raise KeyboardInterrupt
    return 0

cli.main = command
activity_check.console.console_main()
"""


@pytest.mark.parametrize("ticks, then, code, last", [
    (10, "finish", 0, None), (1200, "sigterm", 143, "activity-check: terminated"),
    (10, "ctrl-c", 130, "activity-check: interrupted")])
def test_a_signal_lost_in_a_callback_is_said_in_one_line_subprocess(ticks, then, code, last):
    """A SIGTERM raised inside a garbage-collection callback (where Python ignores exceptions;
    Hypothesis installs one) is lost: one line says so, no traceback, and the command goes on
    (exit 0 when it then finishes); the next SIGTERM stops it (exit 143), and a later Ctrl-C is
    an interrupt as ever (exit 130; from the third review, where it became "terminated")."""
    import signal

    second_signal = then == "sigterm"
    child = subprocess.Popen([sys.executable, "-c", LOST_SIGNAL_SCRIPT, str(ticks), then],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline() == "still running\n"
        if second_signal:
            child.send_signal(signal.SIGTERM)
        out, err = child.communicate(timeout=60)
    finally:
        child.kill()
    assert child.returncode == code, err
    assert "Traceback" not in err
    lines = err.splitlines()
    assert lines[0] == ("activity-check: a SIGTERM arrived inside a callback that Python does not "
                        "let stop the program, and was lost; send it again")
    assert lines[1:] == ([last] if last else [])


# --- one module per command group; the run pipeline below the command line (issue 17) -----------

SAMPLE_ARGV = {
    "run": ["run"], "replay": ["replay", "t.jsonl"], "clauses": ["clauses"],
    "explore": ["explore"], "corpus": ["corpus", "check"], "spec": ["spec", "clauses", "p.md"],
    "readings": ["readings"], "export": ["export", "f.json", "--format", "json"],
    "peer": ["peer", "check", "--adapter", "model"], "smt": ["smt", "list"],
    "lint": ["lint", "t.jsonl"], "producers": ["producers"],
    "questions": ["questions", "--depth", "2"],
    "conformance": ["conformance", "run", "x.json"],
    "resolve": ["resolve", "--pin", "Q8=keep"]}


def test_every_command_is_wired_once_from_its_module_in_help_order():
    """Each command's parser and function come from the module :data:`COMMANDS` names for it,
    every parser a command module declares is wired, and ``--help`` lists the commands in the
    order they always had."""
    import argparse
    import importlib

    from activity_check.cli import COMMANDS, build_parser

    declared = sorted((command, module) for module in {m for _, m in COMMANDS}
                      for command in importlib.import_module(module).PARSERS)
    assert declared == sorted(COMMANDS)
    assert len({command for command, _ in COMMANDS}) == len(COMMANDS)
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    assert list(sub.choices) == [c for c, _ in COMMANDS] == [
        "run", "replay", "clauses", "explore", "corpus", "spec", "readings", "export", "peer",
        "smt", "lint", "producers", "questions", "conformance", "resolve"]
    assert sorted(SAMPLE_ARGV) == sorted(sub.choices)
    for command, module in COMMANDS:
        func = parser.parse_args(SAMPLE_ARGV[command]).func
        assert func.__module__ == module and func.__name__ == f"cmd_{command}", command


def test_start_up_imports_neither_the_search_nor_hypothesis_subprocess():
    """Building the parser (what every command, ``--help`` included, pays before it runs)
    imports none of the engines: the command modules import what they drive when they run."""
    code = ("import sys; from activity_check.cli import build_parser; build_parser(); "
            "print(' '.join(sorted(sys.modules)))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    loaded = set(r.stdout.split())
    assert {"activity_check.cmd_run", "activity_check.cmd_explore", "activity_check.cmd_smt"} \
        <= loaded
    heavy = {m for m in loaded if m.split(".")[0] in ("properties", "hypothesis", "z3",
                                                       "networkx", "jsonschema")}
    assert heavy | ({"counterexamples.pipeline"} & loaded) == set()


def test_module_main_reports_a_command_s_usage_error_in_one_line_subprocess(tmp_path):
    """``python -m activity_check.cli``: a usage error raised by a command module is the
    command line's own (one line, exit 2), not a traceback from a second copy of the module."""
    r = subprocess.run([sys.executable, "-m", "activity_check.cli", "smt", "bogus"],
                       capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert (r.returncode, r.stdout) == (2, "")
    assert_one_error_line(r.stderr, "unknown query 'bogus'")


def test_smt_without_a_query_names_the_queries_in_one_line(capsys):
    """``smt --depth 2`` (issue 39 item 4: exit 2 in a harness) is a refusal, not a bug: the
    query is missing. The line names the queries, not argparse's bare 'query is required'."""
    from activity_check.cli import main
    assert main(["smt", "--depth", "2"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    line = assert_one_error_line(captured.err, "smt needs a query first:")
    assert "reach | vacuity | consistency | distinguish | prove | list" in line
    assert main(["smt", "reach", "--depth", "2", "--timeout", "10"]) == 0
    assert "every witness replayed on the executable model" in capsys.readouterr().out


def test_explore_json_is_the_report_s_to_json(capsys):
    """``explore --json`` prints :meth:`ExploreReport.to_json` as the command line dumps JSON,
    for every reading at once and for one reading."""
    from model.readings import parse_reading
    from properties.search.explore import ExploreOptions, explore

    code, out, _ = cli(capsys, "explore", "--depth", "3", "--json")
    every = explore(ExploreOptions(depth=3, reading=None))
    assert code == 0
    assert out == json.dumps(every.to_json(3), indent=2, ensure_ascii=False) + "\n"
    doc = json.loads(out)
    assert (doc["reading"], doc["readingClasses"], doc["adversarial"]) == ("all", every.classes,
                                                                          False)
    assert (doc["depth"], doc["requestedDepth"], doc["states"]) == (3, 3, every.states)
    knob, (trace, pair) = next(iter(every.splits.items()))
    assert doc["splits"][knob]["length"] == len(trace) and len(doc["splits"][knob]["pair"]) == 2
    assert doc["splits"][knob]["trace"] == [e.to_wire() for e in trace]
    lenient = parse_reading("lenient")
    code, out, _ = cli(capsys, "explore", "--depth", "2", "--reading", "lenient",
                       "--adversarial", "--json")
    one = explore(ExploreOptions(depth=2, reading=lenient, adversarial=True))
    assert code == 0 and json.loads(out) == one.to_json(2, lenient, adversarial=True)
    assert (json.loads(out)["reading"], json.loads(out)["readingClasses"]) == ("lenient", None)
    assert json.loads(out)["adversarial"] is True


def test_explore_memo_entries_sets_each_process_s_budget_and_not_the_output(capsys,
                                                                             monkeypatch):
    """``explore --memo-entries N`` hands N to the sweep as each process's memo budget (a budget
    the tables outgrow at depth 4: entries are evicted, the report is byte for byte the
    default's); out of range, or with one reading, it is refused in one line (exit 2)."""
    import properties.search.system_sweep as sweep_module

    code, default, _ = cli(capsys, "explore", "--depth", "4", "--json", "--workers", "1")
    assert code == 0
    budgets, evictions = [], []
    make_room = sweep_module.SweepAdapter.make_room

    def counted(self, pending):
        budgets.append(self.cache_entries)
        make_room(self, pending)
        evictions.append(self.system.cache.evictions)
    monkeypatch.setattr(sweep_module.SweepAdapter, "make_room", counted)
    code, small, _ = cli(capsys, "explore", "--depth", "4", "--json", "--workers", "1",
                         "--memo-entries", "1000")
    assert code == 0 and small == default
    assert set(budgets) == {1_000} and evictions[-1] > 0
    for argv, said in ((["--memo-entries", "999"], "--memo-entries must be at least 1,000"),
                       (["--memo-entries", "5000", "--reading", "draft"],
                        "--memo-entries: only the search of every reading (--reading all) "
                        "keeps memo tables")):
        code, _, err = cli(capsys, "explore", "--depth", "2", *argv)
        assert code == 2 and err.strip() == f"activity-check: error: {said}"


@pytest.mark.parametrize("changes, name, requirement", [
    ({"examples": 0}, "examples", "must be at least 1"),
    ({"budget": 0.0}, "budget", "must be a positive number of seconds (inf: no limit)"),
    ({"budget": math.nan}, "budget", "must be a positive number of seconds (inf: no limit)"),
    ({"max_events": 0}, "max_events", "must be at least 1"),
    ({"bfs_depth": -1}, "bfs_depth", "must be 0 or more"),
    ({"examples": 0, "bfs_depth": -1}, "examples", "must be at least 1"),
])
def test_run_config_refuses_values_out_of_range(changes, name, requirement):
    from counterexamples.pipeline import ConfigError, RunConfig

    with pytest.raises(ConfigError) as caught:
        RunConfig(**changes)
    assert (caught.value.field, caught.value.requirement) == (name, requirement)
    assert str(caught.value) == f"{name} {requirement}"


def test_run_config_defaults_are_the_command_line_s():
    from counterexamples.pipeline import RunConfig
    from model.producer import DEFAULT_VOCABULARY

    args = build_parser_args("run")
    config = RunConfig()
    assert (config.seed, config.examples, config.budget, config.max_events, config.bfs_depth) \
        == (args.seed, args.examples, args.budget, args.max_events, args.bfs_depth)
    assert config.vocabulary == DEFAULT_VOCABULARY
    assert RunConfig(examples=9).machine_examples == 1 and config.machine_examples == 300


def build_parser_args(*argv):
    from activity_check.cli import build_parser
    return build_parser().parse_args(list(argv))


def _in_a_storage_aside(tmp_path, monkeypatch):
    """Run the pipeline in process with Hypothesis's storage in ``tmp_path/hypothesis`` (as
    :func:`activity_check.cli.main` does), from an empty working directory; returns it."""
    from hypothesis.configuration import set_hypothesis_home_dir

    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    monkeypatch.setenv("HYPOTHESIS_STORAGE_DIRECTORY", str(tmp_path / "hypothesis"))
    set_hypothesis_home_dir(None)
    return cwd


def test_the_pipeline_returns_what_the_run_command_writes(tmp_path, capsys, monkeypatch):
    """:func:`run_pipeline` writes nothing; its summary is the one ``run`` prints and writes,
    :func:`write_run` writes exactly the files it lists, and progress is told stage by stage."""
    from hypothesis.configuration import set_hypothesis_home_dir

    import activity_check
    from counterexamples.pipeline import STAGES, RunConfig, run_pipeline, write_run

    cwd = _in_a_storage_aside(tmp_path, monkeypatch)
    told = []
    try:
        result = run_pipeline(RunConfig(seed=3, examples=30, budget=math.inf, bfs_depth=2),
                              "9.9", lambda stage, done, total: told.append((stage, done, total)))
    finally:
        set_hypothesis_home_dir(None)
    assert os.listdir(cwd) == []
    summary = result.summary.to_json()
    assert summary["version"] == "9.9" and summary["requestedExamples"] == 30
    assert [f["id"] for f in summary["findings"]] == [f.id for f in result.findings] \
        == [f.id for f in result.ambiguities] != []
    stages = list(dict.fromkeys(stage for stage, _, _ in told))
    assert stages == [s.format(depth=2) for s in STAGES]
    for stage in stages:
        seen = [(done, total) for s, done, total in told if s == stage]
        assert seen[0][0] == 0 and seen[-1][0] == seen[-1][1], (stage, seen)
    out_dir = tmp_path / "o"
    code, out, _ = cli(capsys, "run", "--seed", "3", "--examples", "30", "--budget", "inf",
                       "--bfs-depth", "2", "--out", out_dir, "--json")
    assert code == 0
    assert json.loads(out) == summary | {"version": activity_check.__version__}
    written = tmp_path / "w"
    written.mkdir()
    write_run(result, str(written))
    assert set(tree(written)) == listed_files(written) | {"summary.json"}
    assert {p: b for p, b in tree(written).items() if p != "summary.json"} == \
        {p: b for p, b in tree(out_dir).items() if p != "summary.json"}


def test_the_pipeline_exports_a_failed_property_check(tmp_path, monkeypatch):
    """When a property check fails, its finding is in the result and the summary (first, with
    its files under ``propertyChecks``) and :func:`write_run` writes it under the id the summary
    gives (a mutant stands in for the reference consumer)."""
    import model.consumers as consumers_module
    from properties.zoo import MUTANT_BY_NAME
    from hypothesis.configuration import set_hypothesis_home_dir

    from counterexamples.findings import PropertyFinding, load_finding
    from counterexamples.pipeline import RunConfig, run_pipeline, write_run

    _in_a_storage_aside(tmp_path, monkeypatch)
    monkeypatch.setattr(consumers_module, "REFERENCE", MUTANT_BY_NAME["crashes-on-empty-patch"])
    try:
        # 500 examples and 10 events, the defaults: each widening of the generation (steps, tool
        # calls, surface kinds, edge patches) makes an empty patch rarer in a short trace, and a
        # machine stops at its first catch
        result = run_pipeline(RunConfig(examples=500, budget=math.inf, max_events=10,
                                        bfs_depth=0), "0.1.0")
    finally:
        set_hypothesis_home_dir(None)
    checks = result.summary.property_checks
    assert list(checks) == ["conformant", "adversarial"]
    failed = [c for c in checks.values() if c.finding is not None]
    # with seed 0 both machines reach an empty patch within 500 examples (the machines
    # also draw Hypothesis-valued events, whose patches are empty one time in eight; the draws
    # are the seed's alone); the conformant machine's failure is the first failed check
    assert [c.name for c in failed] == ["conformant", "adversarial"]
    finding = failed[0].finding
    assert isinstance(finding, PropertyFinding) and finding.id.startswith("PROP-P00-")
    summary = result.summary.to_json()
    files = [f"findings/{finding.id}.json", f"findings/{finding.id}.jsonl"]
    assert summary["findings"][0] == {"id": finding.id, "kind": "property",
                                      "property": "P00-no-exception",
                                      "length": len(failed[0].result.witness), "files": files}
    entry = summary["propertyChecks"][failed[0].name]
    assert entry["failed"] == {"property": "P00-no-exception",
                               "clauses": list(failed[0].result.clauses), "files": files}
    assert (entry["consumer"], entry["reading"]) == ("reference", "draft")
    assert result.findings[:len(failed)] == [c.finding for c in failed]
    out_dir = tmp_path / "o"
    out_dir.mkdir()
    write_run(result, str(out_dir))
    assert set(tree(out_dir)) == listed_files(out_dir) | {"summary.json"}
    loaded = load_finding(str(out_dir / files[0]))
    assert (loaded.id, loaded.consumer, loaded.reading) == (finding.id, "reference", "draft")


def test_the_command_line_only_wires():
    """No function of the command line or the run pipeline is over 150 lines, and a command
    function (``cmd_*``) is short wiring: at most 50 lines."""
    import ast

    root = Path(__file__).resolve().parent.parent
    files = sorted((root / "activity_check").glob("*.py")) + [root / "counterexamples" /
                                                             "pipeline.py"]
    lengths = {}
    for path in files:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lengths[f"{path.name}:{node.name}"] = node.end_lineno - node.lineno + 1
    assert "cmd_run.py:cmd_run" in lengths and "pipeline.py:run_pipeline" in lengths
    assert {name: n for name, n in lengths.items() if n > 150} == {}
    assert {name: n for name, n in lengths.items()
            if name.split(":")[1].startswith("cmd_") and n > 50} == {}


# --- smt: a bound on --depth, a timeout that can be honoured (issue 18) --------------------------

@pytest.mark.parametrize("argv, needle", [
    (["smt", "reach", "--depth", "100000"], "--depth must be from 1 to 64"),
    (["smt", "reach", "--depth", "65"], "--depth must be from 1 to 64"),
    (["smt", "reach", "--timeout", "inf"], "--timeout"),
    (["smt", "reach", "--timeout", "nan"], "--timeout"),
    (["smt", "prove", "--timeout", "0"], "--timeout"),
])
def test_smt_refuses_a_depth_past_the_bound_and_an_unusable_timeout(capsys, argv, needle):
    start = time.monotonic()
    code, out, err = cli(capsys, *argv)
    assert (code, out) == (2, "")
    assert_one_error_line(err, needle)
    assert time.monotonic() - start < 10  # refused before any solving


def test_smt_at_the_deepest_depth_honours_the_timeout(capsys):
    """At ``--depth 64`` a subject with no witness runs into its timeout and answers unknown;
    the query ends after about subjects x timeout."""
    start = time.monotonic()
    code, out, err = cli(capsys, "smt", "reach", "--subject", "any-fatal", "--depth", "64",
                         "--timeout", "2", "--json")
    seconds = time.monotonic() - start
    assert code == 0, err
    (answer,) = json.loads(out)["answers"]
    assert answer["status"] in ("unknown", "unsat")
    assert seconds < 30, seconds
    assert err == ""  # the progress line is only drawn on a terminal


def test_readings_table_keeps_every_id_whole(capsys):
    """Within 120 columns the knob table folds its cells between words only: every clause id
    and every peer's package name is whole on one line (rich's share-out left the peers
    column one character short and printed '@assistant-ui/react-ag-u' / 'i 0.0.57')."""
    from model.readings import KNOBS
    code, out, _ = cli(capsys, "readings")
    assert code == 0 and max(len(line) for line in out.splitlines()) <= 120
    words = {w.strip("│ ,") for line in out.splitlines() for w in line.split()}
    peers = {name.split()[0] for k in KNOBS for _, names in k.peer_groups() for name in names}
    clauses = {c for k in KNOBS for c in k.clauses}
    assert "@assistant-ui/react-ag-ui" in peers
    assert sorted(peers - words) == [] and sorted(clauses - words) == []
