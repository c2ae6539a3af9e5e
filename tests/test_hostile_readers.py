"""Hostile input, second round (issue 38; issue 42 item 4): every file opened by a name from data
or a folder is a regular file read without following a link, every read of untrusted input is
bounded, every output is valid in its format, and every command that reads hostile bytes, JSON
or SSE ends with a verdict or one line and exit 2, never a traceback (the property-based tests
at the end: Hypothesis draws the inputs, derandomized).
"""
from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import time
import tracemalloc
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from xml.etree import ElementTree as ET

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from activity_check.cli import main
from counterexamples.lint.formats import REPORT_SCHEMA_PATH, SARIF_SCHEMA_PATH, SET_SCHEMA_PATH, xml_text
from counterexamples.report.walkthrough import table
from model.wire import INPUT_LIMITS, MAX_INPUT_BYTES, TraceFormatError, read_bytes
from wirekit import serve_http

ERROR = "activity-check: error: "
RUN_STARTED = {"type": "RUN_STARTED", "threadId": "t", "runId": "r"}
SNAPSHOT = {"type": "ACTIVITY_SNAPSHOT", "messageId": "a", "activityType": "PLAN",
            "content": {"n": 1}}


def cli(capsys, *argv, stdin: bytes | None = None, monkeypatch=None):
    if stdin is not None:
        monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8"))
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def one_error_line(err: str) -> str:
    """The single line of a usage error (exit 2), without its prefix."""
    assert err.startswith(ERROR) and err.endswith("\n") and err.count("\n") == 1, err[:500]
    assert "Traceback" not in err
    return err[len(ERROR):-1]


def jsonl(*events) -> str:
    return "".join(json.dumps(e) + "\n" for e in events)


# --- files named by data or found in a folder ---------------------------------------------------

def test_a_named_pipe_or_link_in_a_folder_is_refused_without_waiting(tmp_path, capsys):
    folder = tmp_path / "traces"
    folder.mkdir()
    (folder / "a.jsonl").write_text(jsonl(RUN_STARTED, SNAPSHOT))
    os.mkfifo(folder / "b.jsonl")  # no writer: an open without O_NONBLOCK would wait for ever
    began = time.monotonic()
    code, _, err = cli(capsys, "lint", folder)
    assert code == 2 and one_error_line(err) == \
        f"{folder / 'b.jsonl'}: refused: a named pipe, not a regular file"
    (folder / "b.jsonl").unlink()
    outside = tmp_path / "secret.jsonl"
    outside.write_text(jsonl(RUN_STARTED))
    (folder / "b.jsonl").symlink_to(outside)
    code, _, err = cli(capsys, "lint", folder)
    assert code == 2 and one_error_line(err).startswith(
        f"{folder / 'b.jsonl'}: refused: a symbolic link")
    assert time.monotonic() - began < 10
    # the same folder given to peer check: the pipe is one skipped file, named, not a hang
    (folder / "b.jsonl").unlink()
    os.mkfifo(folder / "b.jsonl")
    skipped: list = []
    from counterexamples.peers.traces import load_traces
    traces = load_traces([str(folder)], skipped)
    assert [t.id for t in traces] == ["a.jsonl"]
    assert skipped == [f"{folder / 'b.jsonl'}: refused: a named pipe, not a regular file"]


def test_a_file_the_user_names_may_be_a_link_or_a_pipe_and_is_still_bounded(tmp_path):
    target = tmp_path / "t.jsonl"
    target.write_text(jsonl(RUN_STARTED))
    link = tmp_path / "link.jsonl"
    link.symlink_to(target)
    assert read_bytes(str(link), listed=False) == target.read_bytes()
    with pytest.raises(TraceFormatError, match="refused: a symbolic link"):
        read_bytes(str(link))
    fifo = tmp_path / "p.jsonl"
    os.mkfifo(fifo)
    assert read_bytes(str(fifo), listed=False) == b""  # no writer: empty at once
    with pytest.raises(TraceFormatError, match="larger than 1000 bytes"):
        read_bytes("/dev/zero", listed=False, max_bytes=1000)
    with pytest.raises(TraceFormatError, match="a character device, not a regular file"):
        read_bytes("/dev/zero")


def test_corpus_update_refuses_a_pipe_listed_in_the_summary(tmp_path, capsys):
    run = tmp_path / "run"
    (run / "findings").mkdir(parents=True)
    fid = "AMB-Q1-51c3020f"
    (run / "summary.json").write_text(json.dumps(
        {"tool": "activity-check", "findings": [
            {"id": fid, "kind": "ambiguity", "files": [f"findings/{fid}.json"]}]}))
    os.mkfifo(run / "findings" / f"{fid}.json")
    code, _, err = cli(capsys, "corpus", "update", run)
    assert code == 2
    assert "refused: a named pipe, not a regular file; the corpus is unchanged" in \
        one_error_line(err)
    (run / "summary.json").unlink()
    os.mkfifo(run / "summary.json")
    code, _, err = cli(capsys, "corpus", "update", run)
    assert code == 2 and one_error_line(err) == \
        f"corpus update: {run / 'summary.json'}: refused: a named pipe, not a regular file"


# --- bounds -------------------------------------------------------------------------------------

def test_bytes_and_lines_are_bounded_with_a_flag_to_raise_them(tmp_path, capsys, monkeypatch):
    trace = tmp_path / "t.jsonl"
    trace.write_text(jsonl(RUN_STARTED, SNAPSHOT, SNAPSHOT))
    code, _, err = cli(capsys, "replay", trace, "--max-bytes", 100)
    assert code == 2 and one_error_line(err) == (
        f"{trace}: larger than 100 bytes, the most read from one input (--max-bytes raises it)")
    code, _, err = cli(capsys, "lint", trace, "--max-lines", 2)
    assert code == 2 and one_error_line(err) == (
        f"{trace}: more than 2 lines, the most read from one input (--max-lines raises it)")
    code, _, err = cli(capsys, "lint", "-", "--max-bytes", 10, stdin=b"x" * 100,
                       monkeypatch=monkeypatch)
    assert code == 2 and one_error_line(err).startswith("<stdin>: larger than 10 bytes")
    code, out, _ = cli(capsys, "replay", trace, "--max-bytes", 10_000, "--json")
    assert code == 0 and json.loads(out)["messages"][0]["id"] == "a"
    assert INPUT_LIMITS.max_bytes == MAX_INPUT_BYTES  # put back after the command


@pytest.mark.parametrize("argv, option", [
    (["lint", "--url", "http://127.0.0.1:9/", "--timeout", "nan"], "--timeout"),
    (["lint", "--url", "http://127.0.0.1:9/", "--max-seconds", "inf"], "--max-seconds"),
    (["smt", "reach", "--timeout", "NaN"], "--timeout"),
    (["explore", "--timeout", "-inf"], "--timeout"),
    (["peer", "check", "--adapter", "model", "--timeout", "nan", "x"], "--timeout"),
    (["run", "--budget", "nan"], "--budget"),
    (["lint", "--url", "http://127.0.0.1:9/", "--max-events", "0"], "--max-events"),
    # a finite number too large for a thread's wait overflowed time_t: a traceback
    (["peer", "check", "--adapter", "model", "--timeout", "1e308", "x"], "--timeout"),
    (["lint", "--url", "http://127.0.0.1:9/", "--timeout", "1e308"], "--timeout"),
    # conformance run and producers took any float, infinities too
    (["conformance", "run", "x", "--timeout", "inf"], "--timeout"),
    (["conformance", "run", "x", "--timeout", "1e308"], "--timeout"),
    (["producers", "--timeout", "nan"], "--timeout"),
])
def test_numeric_options_refuse_nan_and_infinities(capsys, argv, option):
    code, _, err = cli(capsys, *argv)
    line = one_error_line(err)
    assert code == 2 and line.startswith(f"argument {option}: "), line


ADAPTER = r'''
import json, sys
for n, line in enumerate(sys.stdin):
    rid = json.loads(line)["id"]
    if n == 0:  # one answer line far longer than the bound, then well-formed answers
        sys.stdout.write('{"id":"%s","pad":"%s"}\n' % (rid, "x" * 200000))
    else:
        sys.stdout.write(json.dumps({"id": rid, "messages": [], "fatal": None,
                                     "warnings": [], "runInput": []}) + "\n")
    sys.stdout.flush()
'''


def test_an_adapter_answer_line_is_bounded_and_the_run_goes_on(tmp_path, capsys):
    adapter = tmp_path / "adapter.py"
    adapter.write_text(ADAPTER)
    folder = tmp_path / "traces"
    folder.mkdir()
    for name in ("a", "b", "c"):
        (folder / f"{name}.jsonl").write_text(jsonl(RUN_STARTED))
    argv = ["peer", "check", "--adapter", f"{sys.executable} {adapter}", "--max-answer", 1000,
            "--no-shrink", "--json", folder]
    code, out, err = cli(capsys, *argv)
    report = json.loads(out)
    errors = [t for t in report["traces"] if t.get("error")]
    assert code == 0 and err == ""
    assert [t["id"] for t in errors] == ["a.jsonl"] and errors[0]["error"].startswith(
        "bad-response: answer line longer than 1000 characters, the most read "
        "(--max-answer raises it)")
    assert len(report["traces"]) == 3  # the others answered: the run went on
    code, _, _ = cli(capsys, *argv[:-1], "--fail-on", "error", folder)
    assert code == 1  # the exit code says so when asked


# --- lint --url: a deadline and an event limit --------------------------------------------------

class _SSE(BaseHTTPRequestHandler):
    """An AG-UI endpoint answering every POST with a text/event-stream whose body
    :meth:`answer` writes (a closed connection ends it quietly)."""

    protocol_version = "HTTP/1.0"

    def do_POST(self):  # noqa: N802 - http.server's name
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        try:
            self.answer()
        except OSError:
            return

    def log_message(self, *args):
        pass


class _Endless(_SSE):
    """``/comments``: an SSE comment every 0.1 s, never an event; ``/events``: events as fast
    as the socket takes them, never ending."""

    def answer(self):
        if self.path == "/comments":
            while True:
                self.wfile.write(b": still here\n\n")
                self.wfile.flush()
                time.sleep(0.1)
        self.wfile.write(f"data: {json.dumps(RUN_STARTED)}\n\n".encode())
        n = 0
        while True:
            event = {**SNAPSHOT, "content": {"n": n}}
            self.wfile.write(f"data: {json.dumps(event)}\n\n".encode())
            n += 1


@pytest.fixture
def endless():
    with serve_http(_Endless) as url:
        yield url


def test_lint_url_ends_at_its_deadline_and_its_event_limit(endless, capsys):
    began = time.monotonic()
    code, _, err = cli(capsys, "lint", "--url", f"{endless}/comments", "--max-seconds", 1,
                       "--timeout", 5)
    assert time.monotonic() - began < 8
    assert code == 2 and one_error_line(err) == \
        f"{endless}/comments: the trace holds no events"
    code, out, err = cli(capsys, "lint", "--url", f"{endless}/events", "--max-events", 25,
                         "--format", "json")
    report = json.loads(out)
    assert code == 0 and report["events"] == 25 and report["conformant"]
    assert report["notes"] == [{"line": None, "text": "stopped after 25 events: --max-events "
                                "25 reached; what the stream left open at that point is not "
                                "judged"}]
    began = time.monotonic()
    code, out, _ = cli(capsys, "lint", "--url", f"{endless}/events", "--max-seconds", 1,
                       "--format", "json")
    assert time.monotonic() - began < 8
    assert code == 0 and json.loads(out)["events"] > 25


def test_violations_beyond_those_kept_are_counted():
    from counterexamples.lint.linter import StreamEntry, lint_stream
    bad = {**SNAPSHOT, "type": "ACTIVITY_DELTA", "patch": [{"op": "add", "path": "/n"}]}
    entries = [StreamEntry(RUN_STARTED), StreamEntry(SNAPSHOT)] + [StreamEntry(bad)] * 30
    report = lint_stream(iter(entries), keep=10)
    assert len(report.violations) == 10 and report.count("error") == 31  # 30 + the open run
    assert report.not_kept == (21, 0) and not report.conformant and report.fails("error")
    assert report.to_json()["counts"] == {"error": 31, "warning": 0}
    assert report.notes[-1]["text"] == "21 violation(s) beyond the first 10 counted, not listed"


# --- several inputs in one call; outputs valid whatever the ids ---------------------------------

HOSTILE = "X\x01\x02\x0b\x0c\x1b[2J\ufffe<&>\"']]>\ud800"
"""Characters XML 1.0 forbids, markup, a CDATA end and a lone surrogate."""


def hostile_stream() -> str:
    bad = {"type": "ACTIVITY_DELTA", "messageId": "a", "activityType": "PLAN",
           "patch": [{"op": "add", "path": "/n"}]}
    return json.dumps([RUN_STARTED, SNAPSHOT, bad, {"type": HOSTILE}])


def test_junit_and_sarif_hold_every_input_and_stay_valid_with_hostile_ids(tmp_path, capsys):
    folder = tmp_path / "streams"
    (folder / "sub").mkdir(parents=True)
    (folder / "a.json").write_text(hostile_stream())
    (folder / "sub" / "b.jsonl").write_text(jsonl(RUN_STARTED, SNAPSHOT,
                                                  {"type": "RUN_FINISHED", "threadId": "t",
                                                   "runId": "r"}))
    (folder / "notes.txt").write_text("not a stream")
    code, out, _ = cli(capsys, "lint", folder, "--format", "junit")
    assert code == 1
    root = ET.fromstring(out.encode("utf-8"))  # well-formed XML 1.0 whatever the ids held
    suites = root.findall("testsuite")
    # the structure CI systems read (JUnit's schema): counts that add up, named cases
    assert root.tag == "testsuites" and int(root.get("tests")) == sum(
        int(s.get("tests")) for s in suites) == sum(len(s.findall("testcase")) for s in suites)
    assert int(root.get("failures")) == sum(int(s.get("failures")) for s in suites) == \
        len(list(root.iter("failure")))
    assert all(c.get("classname") and c.get("name") for c in root.iter("testcase"))
    assert [s.get("name") for s in suites] == [f"activity-check lint: {folder / 'a.json'}",
                                               f"activity-check lint: {folder / 'sub/b.jsonl'}"]
    assert [s.get("failures") for s in suites] == ["3", "0"]
    shown = "\n".join(f.text for f in root.iter("failure"))
    assert "event 3 (line 1): error PRC-NO-PRIVATE-TYPES (MUST NOT) X\\x01\\x02\\x0b\\x0c\\x1b[2J" \
           "\\ufffe<&>\"']]>\\ud800" in shown
    code, out, _ = cli(capsys, "lint", folder / "a.json", folder / "sub", "--format", "sarif")
    sarif = json.loads(out)
    jsonschema.Draft4Validator(json.loads(Path(SARIF_SCHEMA_PATH).read_text())).validate(sarif)
    assert code == 1 and len(sarif["runs"]) == 2
    assert [len(r["results"]) for r in sarif["runs"]] == [3, 0]
    code, out, _ = cli(capsys, "lint", folder, "--format", "json")
    doc = json.loads(out)
    jsonschema.Draft202012Validator(json.loads(Path(SET_SCHEMA_PATH).read_text())).validate(doc)
    report_schema = jsonschema.Draft202012Validator(json.loads(Path(REPORT_SCHEMA_PATH).read_text()))
    for report in doc["reports"]:
        report_schema.validate(report)
    assert (doc["failed"], doc["conformant"]) == (True, False)
    assert [(r["source"], r["conformant"]) for r in doc["reports"]] == [
        (str(folder / "a.json"), False), (str(folder / "sub/b.jsonl"), True)]
    code, out, _ = cli(capsys, "lint", folder)
    assert out.splitlines()[-1] == ("2 inputs: 1 conformant, 1 not conformant; 3 error(s), "
                                    "0 warning(s)")


def test_xml_text_replaces_every_character_xml_forbids():
    assert xml_text("a\x00b\x1fc\td\ne\rf\ud800g\ufffeh\uffffi\U0001f600") == \
        "a\\x00b\\x1fc\td\ne\rf\\ud800g\\ufffeh\\uffffi\U0001f600"


def test_each_violation_says_what_is_wrong_first_and_the_clause_second(tmp_path, capsys):
    trace = tmp_path / "t.jsonl"
    trace.write_text(jsonl(RUN_STARTED, SNAPSHOT, {**SNAPSHOT, "type": "ACTIVITY_DELTA",
                                                   "patch": [{"op": "add", "path": "/n"}]},
                           {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"}))
    code, out, _ = cli(capsys, "lint", trace)
    lines = out.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("  event 2"))
    clause = next(i for i, line in enumerate(lines) if line.startswith("      clause:"))
    assert code == 1 and at < clause
    # the event's line, folded within 120 columns, is one block before the clause's
    assert " ".join(" ".join(lines[at:clause]).split()) == (
        "event 2 (line 3): error SNP-MALFORMED-OP (non-keyword) ACTIVITY_DELTA "
        "/patch/0/value: $.patch[0].value: required member is missing")
    assert lines[clause].startswith("      clause: A structurally bad patch")
    assert all(len(line) <= 120 for line in lines)
    # one fault, one clause: replay's fatal cites the same
    code, _, err = cli(capsys, "replay", trace)
    assert code == 2 and one_error_line(err).endswith("[SNP-MALFORMED-OP]")


def test_replay_reads_a_text_event_stream_as_lint_does(tmp_path, capsys):
    body = tmp_path / "s.sse"
    body.write_text(": comment\n" + "".join(f"event: x\ndata: {json.dumps(e)}\n\n"
                                            for e in (RUN_STARTED, SNAPSHOT)))
    code, out, _ = cli(capsys, "replay", body, "--json")
    verdict = json.loads(out)
    assert code == 0 and [m["id"] for m in verdict["messages"]] == ["a"]
    body.write_text(f"data: {json.dumps(RUN_STARTED)}\n\ndata: {{oops\n\n")
    code, _, err = cli(capsys, "replay", body)
    assert code == 2 and one_error_line(err).startswith(
        f"{body}:3: event 1: not valid JSON: Expecting property name")


def test_notebook_markdown_cells_are_inert():
    text = table(["content"], [["<script>alert(1)</script>"],
                               ["<img src=x onerror=alert(1)>"],
                               ["[x](javascript:alert(1)) ![i](http://e/x.png) a|b\nc\x1b"]])
    rows = text.splitlines()[2:]
    assert rows == ["| &lt;script&gt;alert(1)&lt;/script&gt; |",
                    "| &lt;img src=x onerror=alert(1)&gt; |",
                    "| \\[x\\](javascript:alert(1)) !\\[i\\](http://e/x.png) a\\|b<br>c\\\\x1b |"]


# --- property-based: any bytes, JSON or SSE give a verdict or one line --------------------------

EVENT_TYPES = ["RUN_STARTED", "RUN_FINISHED", "ACTIVITY_SNAPSHOT", "ACTIVITY_DELTA",
               "TEXT_MESSAGE_START", "MESSAGES_SNAPSHOT", "STATE_DELTA", "X"]
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-2**70, 2**70) |
    st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
        st.sampled_from(["type", "messageId", "activityType", "content", "patch", "op", "path",
                         "value", "replace", "events", "x"]) | st.text(max_size=4),
        inner, max_size=5),
    max_leaves=20)
events = st.fixed_dictionaries({"type": st.sampled_from(EVENT_TYPES)},
                               optional={"messageId": st.sampled_from(["a", "b", "\x01"]),
                                         "activityType": st.text(max_size=3),
                                         "content": json_values, "patch": json_values,
                                         "replace": json_values}) | json_values


@st.composite
def documents(draw) -> bytes:
    """Hostile input in every form a reader meets: raw bytes, a JSON document (array, JSON
    lines, a case object), an SSE body (fields, comments, CR-only lines, a BOM), deep nesting,
    constants JSON lacks."""
    form = draw(st.sampled_from(["bytes", "array", "lines", "case", "sse", "deep", "tokens"]))
    if form == "bytes":
        return draw(st.binary(max_size=300))
    if form == "deep":
        n = draw(st.integers(100, 3000))
        return ("[" * n + "]" * draw(st.integers(0, n))).encode()
    if form == "tokens":
        return draw(st.lists(st.sampled_from(
            ['{"type":"RUN_STARTED"}', "NaN", "1e999", '{"a":1,"a":2}', "\ufeff", "\r", "\n",
             "data:", "data: {", ":", "event: x", "[", "]", "\x00", '"\ud800"', "-0", "1" * 50]),
            max_size=30).map("".join)).encode("utf-8", "surrogatepass")
    items = draw(st.lists(events, max_size=6))
    if form == "array":
        return json.dumps(items).encode()
    if form == "case":
        return json.dumps({"id": "c", "events": items, "initialState": draw(json_values)}).encode()
    if form == "lines":
        return "".join(json.dumps(e) + draw(st.sampled_from(["\n", "\r\n"])) for e in items).encode()
    sep = draw(st.sampled_from(["\n", "\r\n", "\r"]))
    body = "".join(draw(st.sampled_from([": c" + sep, "event: e" + sep, "id: 1" + sep, ""]))
                   + f"data: {json.dumps(e)}{sep}{sep}" for e in items)
    return (draw(st.sampled_from(["", "\ufeff"])) + body).encode()


def assert_verdict_or_one_line(code: int, out: str, err: str) -> None:
    """What every reader must end with: 0 or 1 (a verdict; lint's report), or 2 with one line."""
    assert code in (0, 1, 2), (code, err[-2000:])
    assert "Traceback" not in err and "Traceback" not in out
    if code == 2:
        one_error_line(err)


READERS = [
    ["replay"], ["replay", "--all-readings", "--json"], ["lint"], ["lint", "--format", "junit"],
    ["lint", "--format", "sarif"], ["lint", "--format", "json"], ["export", "--format", "jsonl"],
]


@settings(max_examples=60, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=documents(), reader=st.sampled_from(READERS))
def test_every_reader_ends_with_a_verdict_or_one_line(tmp_path, capsys, data, reader):
    path = tmp_path / "input.jsonl"
    path.write_bytes(data)
    argv = [reader[0], str(path), *reader[1:], "--max-bytes", "4096"]
    tracemalloc.start()
    began = time.monotonic()
    try:
        code = main(argv)
    finally:
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    out, err = capsys.readouterr()
    assert time.monotonic() - began < 20, argv
    assert peak < 64 * 2**20, (argv, peak)
    assert_verdict_or_one_line(code, out, err)
    if code != 2 and "junit" in reader:
        ET.fromstring(out.encode("utf-8"))
    if code != 2 and "sarif" in reader:
        json.loads(out)


@settings(max_examples=30, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=documents())
def test_stdin_gives_a_verdict_or_one_line(monkeypatch, capsys, data):
    for command in ("replay", "lint"):
        code, out, err = cli(capsys, command, "-", "--max-bytes", "4096", stdin=data,
                             monkeypatch=monkeypatch)
        assert_verdict_or_one_line(code, out, err)


class _Hostile(_SSE):
    """Answers every POST with the body queued in :attr:`body`."""

    body = b""

    def answer(self):
        self.wfile.write(_Hostile.body)


@pytest.fixture(scope="module")
def hostile_endpoint():
    with serve_http(_Hostile) as url:
        yield url + "/"


@settings(max_examples=25, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=documents())
def test_a_hostile_endpoint_gives_a_verdict_or_one_line(hostile_endpoint, capsys, data):
    _Hostile.body = data
    code, out, err = cli(capsys, "lint", "--url", hostile_endpoint, "--timeout", 5,
                         "--max-seconds", 5, "--max-bytes", 4096)
    assert_verdict_or_one_line(code, out, err)


@settings(max_examples=4, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(files=st.lists(documents(), min_size=1, max_size=3))
def test_peer_check_on_a_hostile_folder_gives_a_verdict_or_one_line(tmp_path_factory, files):
    folder = tmp_path_factory.mktemp("peer")
    for i, data in enumerate(files):
        (folder / f"t{i}.jsonl").write_bytes(data)
    os.mkfifo(folder / "zz.jsonl")
    done = subprocess.run([sys.executable, "-m", "activity_check.cli", "peer", "check",
                           "--adapter", "model", "--no-shrink", "--max-bytes", "4096",
                           str(folder)], capture_output=True, text=True, timeout=120)
    assert_verdict_or_one_line(done.returncode, done.stdout, done.stderr)


def test_lint_pretty_shows_control_characters_as_escapes(tmp_path, capsys):
    trace = tmp_path / "t.jsonl"
    trace.write_text(jsonl(RUN_STARTED, {"type": "X\x1b]0;pwned\x07[/]\u202e"}))
    code, out, _ = cli(capsys, "lint", trace)
    assert code == 1 and "\x1b" not in out and "\x07" not in out and "\u202e" not in out
    assert "PRC-NO-PRIVATE-TYPES (MUST NOT) X\\x1b]0;pwned\\x07[/]\\u202e /type" in out


def test_an_adapter_stderr_line_is_read_in_pieces():
    from collections import deque
    from counterexamples.peers.adapter import _pump_tail
    tail: deque = deque(maxlen=20)
    _pump_tail(io.StringIO("x" * 200_000 + "\nlast\n" + "y" * 70_000), tail)
    assert list(tail) == ["x" * 300, "last", "y" * 300]
