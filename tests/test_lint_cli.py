"""``activity-check lint`` (issue 22): the command, its input forms and exit codes, a real
producer (ag-ui-protocol's SSE encoder), and a live endpoint on 127.0.0.1.

The command is driven through :func:`activity_check.cli.main`, as the console script runs it.
"""
from __future__ import annotations

import io
import json
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest

from activity_check import cli
from counterexamples.lint.inputs import (DEFAULT_RUN_INPUT, decode_event, fetch_stream,
                                     parse_stream_text, read_stream)
from model.wire import TraceFormatError

ROOT = Path(__file__).resolve().parents[1]
from wirekit import RF, RS, delta, serve_http, snap

ag_ui = pytest.importorskip("ag_ui.core", reason="ag-ui-protocol (the dev extra) is not "
                            "installed")
from ag_ui.encoder import EventEncoder  # noqa: E402


@pytest.fixture
def lint(monkeypatch, capsys):
    """``lint(*argv, stdin=None) -> (exit code, stdout, stderr)``."""
    assert ("lint", "activity_check.cmd_lint") in cli.COMMANDS

    def run(*argv, stdin=None):
        if stdin is not None:
            monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(
                stdin.encode() if isinstance(stdin, str) else stdin), encoding="utf-8"))
        code = cli.main(["lint", *argv])
        out, err = capsys.readouterr()
        return code, out, err
    return run


def jsonl(*events) -> str:
    return "".join(json.dumps(e) + "\n" for e in events)


def encoder_stream() -> str:
    """A stream written by ag-ui-protocol 1.0.0's own models and SSE encoder (it knows the
    activity events, ``replace`` and ``subagentRunId`` included). It breaks two rules: the
    subagent is announced after an event it produced (SUB-STARTED-FIRST), and an untagged
    ``replace: false`` restates the subagent's activity (ACT-ATTR-AGREE, under Q2=parent only)."""
    c = ag_ui
    encoder = EventEncoder()
    assert encoder.get_content_type() == "text/event-stream"
    events = [
        c.RunStartedEvent(thread_id="t1", run_id="r1"),
        c.StepStartedEvent(step_name="research"),
        c.ActivitySnapshotEvent(message_id="plan", activity_type="PLAN",
                                content={"steps": []}, subagent_run_id="sub-1"),
        c.SubagentStartedEvent(subagent_run_id="sub-1", name="researcher"),
        c.ActivityDeltaEvent(message_id="plan", activity_type="PLAN", subagent_run_id="sub-1",
                             patch=[{"op": "add", "path": "/steps/-", "value": "search"}]),
        c.ActivitySnapshotEvent(message_id="plan", activity_type="PLAN", content={"steps": []},
                                replace=False),
        c.SubagentFinishedEvent(subagent_run_id="sub-1"),
        c.TextMessageStartEvent(message_id="m1", role="assistant"),
        c.TextMessageContentEvent(message_id="m1", delta="done"),
        c.TextMessageEndEvent(message_id="m1"),
        c.StepFinishedEvent(step_name="research"),
        c.RunFinishedEvent(thread_id="t1", run_id="r1"),
    ]
    return "".join(encoder.encode(e) for e in events)


def conformant_encoder_stream(tag_delta: bool = True) -> str:
    """A subagent's activity, amended by the subagent (``tag_delta``) or by an untagged delta,
    which is conformant under every producer reading but Q12=owner (the owner must amend)."""
    c = ag_ui
    encoder = EventEncoder()
    tag = {"subagent_run_id": "sub-1"} if tag_delta else {}
    events = [c.RunStartedEvent(thread_id="t1", run_id="r1"),
              c.SubagentStartedEvent(subagent_run_id="sub-1", name="researcher"),
              c.ActivitySnapshotEvent(message_id="plan", activity_type="PLAN",
                                      content={"steps": []}, subagent_run_id="sub-1"),
              c.ActivityDeltaEvent(message_id="plan", activity_type="PLAN",
                                   patch=[{"op": "add", "path": "/steps/-", "value": "x"}], **tag),
              c.SubagentFinishedEvent(subagent_run_id="sub-1"),
              c.RunFinishedEvent(thread_id="t1", run_id="r1")]
    return "".join(encoder.encode(e) for e in events)


# --- a real producer: ag-ui-protocol's encoder ---------------------------------------------------

def test_the_ag_ui_encoders_stream_is_read_back_and_judged(lint, tmp_path):
    body = encoder_stream()
    path = tmp_path / "agent.sse"
    path.write_text(body)
    code, out, err = lint(str(path), "--format", "json")
    assert code == 1 and err == ""
    report = json.loads(out)
    assert report["format"] == "sse" and report["events"] == 12
    rows = [(v["eventIndex"], v["line"], v["clause"], v["pointer"], v["readings"])
            for v in report["violations"]]
    assert rows == [(3, 7, "SUB-STARTED-FIRST", "/subagentRunId", None),
                    (5, 11, "ACT-ATTR-AGREE", "/subagentRunId", ["Q2=parent"])]
    assert report["conformantUnder"] == []     # SUB-STARTED-FIRST is broken under every reading
    # the same body on stdin, judged under draft's producer options only
    code, out, _ = lint("-", "--reading", "draft", "--format", "json", stdin=body)
    assert code == 1
    assert [v["clause"] for v in json.loads(out)["violations"]] == ["SUB-STARTED-FIRST"]
    # a stream the encoder writes for a conformant agent passes
    code, out, _ = lint("-", stdin=conformant_encoder_stream())
    assert code == 0 and "0 error(s), 0 warning(s): conformant" in out
    # the parent amending the subagent's activity untagged: an error under Q12=owner only
    code, out, _ = lint("-", "--format", "json", stdin=conformant_encoder_stream(tag_delta=False))
    report = json.loads(out)
    assert code == 1 and [(v["eventIndex"], v["clause"], v["readings"])
                          for v in report["violations"]] == [(3, "ACT-DELTA-BASELINE", ["Q12=owner"])]
    assert len(report["conformantUnder"]) == 16 and not any(
        "Q12=owner" in r for r in report["conformantUnder"])
    code, _, _ = lint("-", "--reading", "draft", stdin=conformant_encoder_stream(tag_delta=False))
    assert code == 0


# --- input forms and exit codes -----------------------------------------------------------------

def test_the_parsers_choices_are_the_apis():
    from activity_check import cmd_lint
    import counterexamples.lint.formats as lint_formats
    import counterexamples.lint.linter as engine
    assert cmd_lint.FORMATS == lint_formats.FORMATS
    assert cmd_lint.FAIL_ON == engine.FAIL_ON


def test_json_array_jsonl_and_a_finding_file_are_read(lint, tmp_path):
    events = [RS, snap(), delta("act-2"), RF]
    forms = {"array.json": json.dumps(events, indent=1),
             "lines.jsonl": jsonl(*events),
             "finding.json": json.dumps({"id": "X", "events": events}, indent=2)}
    for name, text in forms.items():
        (tmp_path / name).write_text(text)
        code, out, _ = lint(str(tmp_path / name), "--format", "json")
        report = json.loads(out)
        assert code == 1 and report["format"] == ("jsonl" if name.endswith("l") else "json")
        assert [(v["eventIndex"], v["clause"]) for v in report["violations"]] == [
            (2, "ACT-DELTA-BASELINE"), (2, "SNP-BASELINE")]
        at = text[:text.index('"act-2"')].count("\n") + 1     # the line of its messageId
        assert report["violations"][0]["line"] == (at if name.endswith("l") else at - 2)


def test_exit_codes_follow_fail_on(lint, tmp_path):
    warning_only = tmp_path / "w.jsonl"
    warning_only.write_text(jsonl(RS, snap(x=1), RF))         # an undescribed member: warning
    assert lint(str(warning_only))[0] == 0
    assert lint(str(warning_only), "--fail-on", "warning")[0] == 1
    erroring = tmp_path / "e.jsonl"
    erroring.write_text(jsonl(RS, delta("ghost"), RF))
    assert lint(str(erroring))[0] == 1
    assert lint(str(erroring), "--fail-on", "never")[0] == 0
    code, out, _ = lint(str(erroring), "--fail-on", "never")
    assert "2 error(s), 0 warning(s): not conformant (--fail-on never)" in out


def test_out_writes_a_new_file_and_never_over_one(lint, tmp_path):
    stream = tmp_path / "e.jsonl"
    stream.write_text(jsonl(RS, delta("ghost"), RF))
    kept = tmp_path / "kept.txt"
    kept.write_text("keep me")
    link = tmp_path / "link.out"
    link.symlink_to(tmp_path / "elsewhere.txt")
    for target in (kept, link):
        code, out, err = lint(str(stream), "--out", str(target))
        assert code == 2 and out == "" and "already exists; not overwritten" in err
    assert kept.read_text() == "keep me" and not (tmp_path / "elsewhere.txt").exists()
    fresh = tmp_path / "report.json"
    code, out, _ = lint(str(stream), "--out", str(fresh), "--format", "json")
    assert code == 1 and f"report written to {fresh}" in out
    assert json.loads(fresh.read_text())["tool"] == "activity-check"



@pytest.mark.parametrize("fmt", ["pretty", "json", "sarif", "junit"])
def test_out_writes_a_lone_surrogate_from_the_stream(lint, tmp_path, fmt):
    """A ``\\ud800`` escape in an id is a lone surrogate once read: --out writes it as its
    escape, as standard output does (it raised UnicodeEncodeError, a traceback, in every format
    but JUnit)."""
    stream = tmp_path / "s.jsonl"
    stream.write_text(jsonl(RS, delta("ghost")).replace("ghost", "gh\\ud800ost") + jsonl(RF))
    out_file = tmp_path / f"report.{fmt}"
    code, out, err = lint(str(stream), "--out", str(out_file), "--format", fmt)
    assert code == 1 and f"report written to {out_file}" in out, err
    text = out_file.read_text(encoding="utf-8")
    if fmt in ("json", "sarif"):
        assert "gh\\ud800ost" in json.dumps(json.loads(text))

@pytest.mark.parametrize("content, message", [
    ("", "{path}: the file is empty"),
    ('[{"type": "RUN_STARTED",\n  "threadId": }]', "{path}:2:15: not valid JSON: Expecting value"),
    # replay's wording (model.wire.not_a_trace), the column after the line
    ('{"foo": []}\n', '{path}:1: event 0: $.type: required member is missing (members "foo"), '
                      "and no event of the file has a type, so it is not a trace"),
    ("hello\nworld\n", "{path}:1:1: event 0: not valid JSON: Expecting value, and no event"),
])
def test_unusable_input_exits_2_with_one_line(lint, tmp_path, content, message):
    path = tmp_path / "bad.jsonl"
    path.write_text(content)
    code, out, err = lint(str(path))
    assert code == 2 and out == ""
    assert err.startswith("activity-check: error: " + message.format(path=path))
    assert err.count("\n") == 1 and "Traceback" not in err


@pytest.mark.parametrize("name, content, where", [
    ("dup.jsonl", '{"type":"RUN_STARTED","type":"X","threadId":"t","runId":"r"}\n', ":1:23"),
    ("dup.sse", 'data: {"type":"RUN_STARTED","type":"X","threadId":"t","runId":"r"}\n\n', ":1"),
])
def test_a_duplicated_member_is_named_not_a_missing_type(lint, tmp_path, name, content, where):
    """A stream whose only event names ``type`` twice is refused for the repeated member, at
    its line (and column, in JSON lines); it said "no event of the file has a type"."""
    path = tmp_path / name
    path.write_text(content)
    code, out, err = lint(str(path))
    assert (code, out) == (2, "")
    assert err.startswith(f'activity-check: error: {path}{where}: event 0: not valid JSON: '
                          'duplicate member "type" in $'), err
    assert err.endswith("; a member may appear only once in an object\n"), err
    assert "has a type" not in err and err.count("\n") == 1


def test_unreadable_files_and_arguments_exit_2(lint, tmp_path):
    code, _, err = lint(str(tmp_path / "missing.jsonl"))
    assert code == 2 and "cannot read the file" in err
    (tmp_path / "latin.jsonl").write_bytes(b'{"type": "RUN_STARTED", "x": "\xe9"}\n')
    code, _, err = lint(str(tmp_path / "latin.jsonl"))
    assert code == 2 and "not UTF-8 text" in err
    code, _, err = lint("-", stdin=b"\xff\xfe")
    assert code == 2 and err.startswith("activity-check: error: <stdin>:1:1: not UTF-8 text")


def test_a_file_that_is_not_utf8_is_refused_naming_its_line_and_column(lint, tmp_path):
    """The byte that is not UTF-8 is located as other input errors are, FILE:LINE:COLUMN (the
    column in characters: a valid two-byte character before it counts one), with its byte
    offset: docs/lint.md says an exit-2 line names the line."""
    path = tmp_path / "latin.jsonl"
    path.write_bytes(b'{"type": "RUN_STARTED", "threadId": "t", "runId": "r"}\n'
                     b'{"type": "\xc3\xa9\xe9"}\n')
    code, out, err = lint(str(path))
    assert code == 2 and out == ""
    assert err == (f"activity-check: error: {path}:2:12: not UTF-8 text (invalid continuation "
                   "byte at byte 67)\n")
    code, _, err = lint("x.jsonl", "--url", "http://127.0.0.1:9/")
    assert code == 2 and "give a FILE or --url, not both" in err
    code, _, err = lint("-", "--reading", "Q99=x", stdin=jsonl(RS, RF))
    assert code == 2 and "--reading: unknown knob 'Q99'" in err
    code, _, err = lint("-", "--format", "xml", stdin=jsonl(RS, RF))
    assert code == 2 and "invalid choice: 'xml'" in err
    code, _, err = lint("-", "--out", str(tmp_path / "no" / "dir" / "r.json"),
                        stdin=jsonl(RS, RF))
    assert code == 2 and "--out" in err and "cannot write" in err


def test_without_a_file_stdin_is_read_unless_it_is_a_terminal(lint, monkeypatch):
    code, out, _ = lint(stdin=jsonl(RS, RF))
    assert code == 0 and out.startswith("<stdin>: 2 events (jsonl)")

    class Terminal(io.StringIO):
        def isatty(self):
            return True
    monkeypatch.setattr("sys.stdin", Terminal())
    code, _, err = lint()
    assert code == 2 and "give the stream: a FILE, a folder, '-' to read stdin, or --url URL" in err


def test_a_broken_line_is_reported_and_the_rest_checked(lint):
    body = jsonl(RS) + '{"type": broken\n' + jsonl(delta("ghost"), RF)
    code, out, _ = lint("-", "--format", "json", stdin=body)
    report = json.loads(out)
    assert code == 1 and report["events"] == 4
    assert [(v["eventIndex"], v["line"], v["kind"]) for v in report["violations"]] == [
        (1, 2, "undecodable"), (2, 3, "delta-without-baseline"), (2, 3, "delta-on-unknown-id")]
    assert report["violations"][0]["detail"].startswith("not valid JSON: Expecting value")


def test_what_the_stream_left_open_names_the_event_that_opened_it(lint, tmp_path):
    """docs/lint.md: each end-of-stream violation comes with the index of the event that opened
    what was left open; the text says it where the violation stands (JSON: relatedEventIndex)."""
    path = tmp_path / "open.jsonl"
    path.write_text(jsonl(
        {"type": "RUN_STARTED", "threadId": "t1", "runId": "r1"},
        {"type": "STEP_STARTED", "stepName": "s"},
        {"type": "TEXT_MESSAGE_START", "messageId": "m1", "role": "assistant"}))
    code, out, _ = lint(str(path), "--wide")
    assert code == 1
    assert [line for line in out.splitlines() if "end of stream" in line] == [
        "  end of stream (opened at event 2): error LIF-CLOSE-BEFORE-FINISH (MUST): text message m1 "
        "was never ended",
        "  end of stream (opened at event 1): error LIF-STEP-CLOSE-BEFORE-FINISH (MUST): step 's' "
        "was never finished",
        "  end of stream (opened at event 0): error LIF-RUN-CLOSE (MUST): the stream ended after 3 "
        "events with the run still active (no RUN_FINISHED or RUN_ERROR)"]
    code, out, _ = lint(str(path), "--format", "json")
    assert [(v["eventIndex"], v["relatedEventIndex"]) for v in json.loads(out)["violations"]] \
        == [(None, 2), (None, 1), (None, 0)]


def test_out_writes_the_report_and_prints_one_line(lint, tmp_path):
    target = tmp_path / "report.sarif"
    code, out, _ = lint("-", "--format", "sarif", "--out", str(target),
                        stdin=jsonl(RS, delta("ghost"), RF))
    assert code == 1
    assert out == f"<stdin>: 2 error(s), 0 warning(s): not conformant; report written to " \
                  f"{target}\n"
    assert json.loads(target.read_text())["version"] == "2.1.0"


def test_decoding_is_as_strict_as_every_other_file():
    assert decode_event('{"a": 1}') == ({"a": 1}, None)
    for text, reason in (('{"a": 1, "a": 2}', 'duplicate member "a" in $'),
                         ('{"a": NaN}', "NaN is not a JSON value"),
                         ('{"a": 1e999}', "out of range"),
                         ('{"a": 1.5e-400}', "too small to tell from 0"),
                         ("[" * 129 + "]" * 129, "nested more than 128 levels deep")):
        value, problem = decode_event(text)
        assert value is None and reason in problem, (text, problem)
    assert decode_event("[" * 128 + "]" * 128)[1] is None


def test_sse_framing_is_httpx_sses():
    body = (": a comment\n"
            "event: message\n"
            'data: {"type":"RUN_STARTED",\n'
            'data:  "threadId":"t","runId":"r"}\n'
            "\r\n"
            "id: 7\n\n"                                   # dispatched, no data: no event
            '{"type":"CUSTOM","name":"x","value":1}\n\n'  # no data: prefix
            'data: {"type":"RUN_FINISHED","threadId":"t","runId":"r"}\r\n\r\n')
    found = parse_stream_text(body, "b.sse")
    assert found.input_format == "sse"
    assert [(e.value["type"], e.line) for e in found.entries] == [("RUN_STARTED", 2),
                                                                 ("RUN_FINISHED", 10)]
    assert found.notes == ({"line": 8, "text": "not an SSE field (no 'data:' prefix?): an SSE "
                                               "reader ignores this line, so any event on it "
                                               "is lost"},)


def test_read_stream_reads_stdin_bytes(tmp_path):
    stdin = io.TextIOWrapper(io.BytesIO(("\ufeff" + jsonl(RS, RF)).encode()), encoding="utf-8")
    found = read_stream("-", stdin)
    assert found.source == "<stdin>" and len(found.entries) == 2
    with pytest.raises(TraceFormatError, match="holds no events|empty"):
        parse_stream_text("\n\n", "x")


# --- a live endpoint on 127.0.0.1 ---------------------------------------------------------------

class _Agent(BaseHTTPRequestHandler):
    """An AG-UI endpoint: POST a RunAgentInput, get the encoder's SSE answer. ``/broken``
    answers 500, ``/json`` answers application/json."""

    received: list = []

    def do_POST(self):  # noqa: N802 - http.server's name
        length = int(self.headers.get("Content-Length", 0))
        _Agent.received.append((self.path, self.headers.get("Accept"),
                                json.loads(self.rfile.read(length))))
        if self.path == "/broken":
            self.send_response(500)
            self.end_headers()
            return
        encoder = EventEncoder(accept=self.headers.get("Accept"))
        self.send_response(200)
        self.send_header("Content-Type", "application/json" if self.path == "/json" else
                         encoder.get_content_type())
        self.end_headers()
        body = encoder_stream() if self.path == "/agent" else conformant_encoder_stream()
        for frame in body.split("\n\n")[:-1]:    # one event at a time, flushed
            self.wfile.write((frame + "\n\n").encode())
            self.wfile.flush()

    def log_message(self, *args):
        pass


@pytest.fixture
def endpoint():
    _Agent.received.clear()
    with serve_http(_Agent) as url:
        yield url


def test_a_live_endpoint_is_posted_a_run_input_and_linted(lint, endpoint, tmp_path):
    code, out, err = lint("--url", f"{endpoint}/agent", "--format", "json")
    assert code == 1 and err == ""
    report = json.loads(out)
    assert report["source"] == f"{endpoint}/agent" and report["format"] == "sse"
    assert [(v["eventIndex"], v["clause"], v["line"]) for v in report["violations"]] == [
        (3, "SUB-STARTED-FIRST", None), (5, "ACT-ATTR-AGREE", None)]
    path, accept, body = _Agent.received[-1]
    assert (path, accept, body) == ("/agent", "text/event-stream", DEFAULT_RUN_INPUT)
    run_input = tmp_path / "input.json"
    run_input.write_text(json.dumps({**DEFAULT_RUN_INPUT, "threadId": "mine"}))
    code, out, _ = lint("--url", f"{endpoint}/ok", "--run-input", str(run_input))
    assert code == 0 and "conformant" in out
    assert _Agent.received[-1][2]["threadId"] == "mine"


def test_a_live_endpoint_that_cannot_be_read_exits_2(lint, endpoint):
    code, _, err = lint("--url", f"{endpoint}/broken")
    assert code == 2 and err == (f"activity-check: error: {endpoint}/broken: the endpoint "
                                 "answered HTTP 500 Internal Server Error\n")
    code, _, err = lint("--url", f"{endpoint}/json")
    assert code == 2 and "not an event stream" in err and "application/json" in err
    with pytest.raises(TraceFormatError, match="cannot read the endpoint"):
        fetch_stream("http://127.0.0.1:9/", timeout=2)


class _NotUtf8(BaseHTTPRequestHandler):
    """An SSE answer whose second event holds bytes that are not UTF-8."""

    def do_POST(self):  # noqa: N802 - http.server's name
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        self.wfile.write(b'data: {"type":"RUN_STARTED","threadId":"t1","runId":"r1"}\n\n')
        self.wfile.write(b'data: {"type":"RUN_FINISHED","threadId":"\xff\xfe","runId":"r1"}\n\n')
        self.wfile.flush()

    def log_message(self, *args):
        pass


def test_a_live_body_that_is_not_utf8_is_refused_as_a_file_is(lint):
    """A byte that is not UTF-8 in a live answer is refused in one line (exit 2), as the same
    bytes in a file are, never replaced and judged."""
    with serve_http(_NotUtf8) as url:
        code, out, err = lint("--url", url)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and "not UTF-8: byte" in err, err


def test_pretty_output_fits_120_columns(lint, tmp_path):
    """Issue 39 item 5 for ``lint``: the header (every producer reading) and each clause's
    paraphrase fold at word boundaries within 120 columns (they were up to 151 wide)."""
    path = tmp_path / "reused-id.jsonl"
    path.write_text(jsonl(RS, {"type": "TEXT_MESSAGE_START", "messageId": "m-1",
                               "role": "assistant"},
                          {"type": "TEXT_MESSAGE_END", "messageId": "m-1"}, snap("m-1"), RF))
    code, out, _ = lint(str(path))
    words = " ".join(out.split())
    assert code == 1 and "EVM-ID-UNIQUE" in words and "under every producer reading" in words
    assert max(len(line) for line in out.splitlines()) <= 120, out


def test_pretty_output_folds_in_display_columns_and_never_breaks_an_id(lint, tmp_path):
    """The hanging-indent fold measures terminal columns, not characters: a detail of wide
    characters (39 CJK characters, 78 columns) that takes 118 characters but 157 columns
    still folds under its event with the hanging indent (it was printed as one line and
    wrapped by the console at column 120, flush left), and an id wider than the room left (a
    150-character message id) stands whole on its own line instead of being cut in two."""
    from rich.cells import cell_len
    wide_id, long_id = "日本語" * 13, "x" * 150
    path = tmp_path / "wide.jsonl"
    path.write_text(jsonl(RS, delta(wide_id), delta(long_id), RF), encoding="utf-8")
    code, out, _ = lint(str(path))
    lines = out.splitlines()
    assert code == 1
    # SNP-BASELINE's event line is 76 characters before the id: 118 characters, 157 columns
    head = "  event 1 (line 2): error SNP-BASELINE (MUST NOT) ACTIVITY_DELTA /messageId:"
    at = lines.index(head)
    assert lines[at + 1] == " " * 6 + wide_id
    for clause in ("ACT-DELTA-BASELINE", "SNP-BASELINE"):
        assert f"  event 2 (line 3): error {clause} (MUST NOT) ACTIVITY_DELTA /messageId:" \
            in lines
    assert lines.count(" " * 6 + long_id) == 2  # whole, on a line of its own, each time
    assert max(cell_len(line) for line in lines if long_id not in line) <= 120
    assert all(line == line.rstrip() for line in lines)


def test_wide_prints_every_line_whole(lint, tmp_path):
    """``lint --wide``: the pretty report one line each, unfolded (the header is 123
    characters here, folded at 120 without it); the same violations either way."""
    path = tmp_path / "a-stream-with-a-long-name.jsonl"
    path.write_text(jsonl(RS, delta("plan-1"), RF))
    code, folded, _ = lint(str(path))
    wide_code, wide, err = lint("--wide", str(path))
    assert (code, wide_code, err) == (1, 1, "")
    header = (f"{path}: 3 events (jsonl), under every producer reading (24: each combination "
              "of the options of Q2, Q4-opener, Q12, Q17)")
    assert wide.splitlines()[0] == header and len(header) > 120
    assert header not in folded.splitlines()
    assert " ".join(folded.split()) == " ".join(wide.split())
    assert len(wide.splitlines()) < len(folded.splitlines())


def test_an_over_long_url_is_cut_inside_its_quotes(lint):
    """``lint --url`` with a URL of thousands of characters names it cut inside its quotes
    (model.text.named) and says what went wrong after it; the whole line was cut at 2,000
    characters, all URL. A URL of ordinary length is named as it is."""
    url = "http://127.0.0.1:9/" + "a" * 3000
    code, out, err = lint("--url", url, "--timeout", "5")
    assert code == 2 and out == ""
    assert err.startswith(f"activity-check: error: {url[:200]!r}"[:-1] + "…': cannot read the "
                          "endpoint: ") and err.count("\n") == 1, err[-300:]
    code, _, err = lint("--url", "http://127.0.0.1:9/x", "--timeout", "5")
    assert code == 2 and err.startswith("activity-check: error: http://127.0.0.1:9/x: cannot "
                                        "read the endpoint: ")


def test_a_url_httpx_refuses_is_one_line_not_a_traceback(lint):
    """A URL with a port or a character httpx refuses (``InvalidURL``, not one of its HTTP
    errors) raised a traceback, exit 1: one line naming it (escaped), exit 2."""
    code, out, err = lint("--url", "http://[::1")
    assert (code, out) == (2, "") and err.count("\n") == 1
    assert err == "activity-check: error: http://[::1: not a valid URL: Invalid port: ':1'\n"
    code, _, err = lint("--url", "http://x\x01/")
    assert code == 2 and err.startswith("activity-check: error: http://x\\x01/: not a valid URL")
    assert "\x01" not in err
    for url in ("http://a..b/", "http://xn--zz/", "http://" + "a" * 64 + ".com/"):  # IDNA's
        code, _, err = lint("--url", url)
        assert code == 2 and "not a valid URL" in err and err.count("\n") == 1, err
    code, _, err = lint("--url", "", stdin='[{"type": "RUN_STARTED"}]')  # not stdin: refused
    assert code == 2 and err.startswith("activity-check: error: --url: an empty value")


def test_a_linked_folder_in_a_folder_is_refused_not_passed_over(lint, tmp_path):
    """``lint DIR``: a symbolic link to a folder inside it is refused as a linked stream file
    is (exit 2, one line), not passed over in silence (the CI went green on streams it never
    read); with the link gone the folder's own streams are judged."""
    real, top = tmp_path / "real", tmp_path / "top"
    real.mkdir()
    top.mkdir()
    (real / "bad.jsonl").write_text('{"type":"RUN_STARTED","threadId":"t","runId":"r"}\n')
    (top / "ok.jsonl").write_text((ROOT / "docs/examples/streams/agent-run.jsonl").read_text())
    (top / "recordings").symlink_to(real)
    code, out, err = lint(str(top))
    assert code == 2 and err.count("\n") == 1
    assert "recordings: refused: a symbolic link" in err
    (top / "recordings").unlink()
    code, out, err = lint(str(top))
    assert code == 0, err


def test_lint_out_names_what_it_read_and_wrote_escaped(lint, tmp_path, monkeypatch):
    """``lint FILE --out REPORT`` prints a line per input; a control character in a file name
    or the report's name is escaped there, as everywhere else (it went to the terminal raw)."""
    monkeypatch.chdir(tmp_path)
    name = "a\x1b[2Jb.jsonl"
    (tmp_path / name).write_text((ROOT / "docs/examples/streams/agent-run.jsonl").read_text())
    code, out, err = lint(name, "--format", "json", "--out", "r\x1b[2J.json")
    assert code == 0, err
    assert "\x1b" not in out
    assert out == ("a\\x1b[2Jb.jsonl: 0 error(s), 0 warning(s): conformant; report written to "
                   "r\\x1b[2J.json\n")
