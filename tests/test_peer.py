"""Tests for peers (issue 6): the adapter protocol client, classification against the readings,
the knob table, shrinking of divergences, the ``peer`` commands, the pytest plugin, and the
``@ag-ui/client`` 1.0.0 adapter in both modes.

The reference model behind the protocol (``counterexamples.peers.model_adapter``) must agree with
``draft`` on every trace, and with the reading it is started under otherwise. Broken adapters
(crash, hang, garbage, refusal, a malformed answer, a program that exits at once) must cost one
trace each, never the run. The Node tests assert the classes observed for every corpus trace and
the divergences found; they skip, with the reason, only where Node or the installed packages are
missing (``make test`` installs them with ``npm ci`` when npm exists).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from activity_check.cli import main
from counterexamples.findings import PeerDivergenceFinding, load_finding
import counterexamples.peers.divergence as peer_divergence
from counterexamples.peers.adapter import AdapterProcess, AdapterSpec, PeerError, Reply, node_peer_ready, resolve_adapter
from counterexamples.peers.traces import PeerTrace, corpus_traces, load_traces
from counterexamples.peers.check import check_peer
from counterexamples.peers.classify import classify, knob_table
from counterexamples.peers.divergence import divergence_clauses, first_divergence, locate_divergence, shrink_divergence
from counterexamples.peers.generate import generated_traces, probe_traces
from counterexamples.peers.search import search_peer
from model.wire import parse_events

PY = sys.executable
MODEL = f"{PY} -m counterexamples.peers.model_adapter"
NODE_REASON = node_peer_ready()
needs_node = pytest.mark.skipif(NODE_REASON is not None,
                                reason=f"@ag-ui/client adapter unavailable: {NODE_REASON}")

RUN = {"type": "RUN_STARTED", "threadId": "t1", "runId": "r1"}
END = {"type": "RUN_FINISHED", "threadId": "t1", "runId": "r1"}


def snap(mid="act-1", content=None, **more):
    return {"type": "ACTIVITY_SNAPSHOT", "messageId": mid, "activityType": "PLAN",
            "content": {"n": 0} if content is None else content, **more}


def delta(mid="act-1", patch=None, **more):
    return {"type": "ACTIVITY_DELTA", "messageId": mid, "activityType": "PLAN",
            "patch": [{"op": "replace", "path": "/n", "value": 1}] if patch is None else patch,
            **more}


def classes(report) -> dict:
    return {r.trace.id: r.classification.kind for r in report.results}


def knobs(report) -> dict:
    """``{knob: option}`` for determined knobs, ``{knob: (status, options)}`` otherwise, leaving
    out knobs without evidence."""
    out = {}
    for k in report.knobs:
        if k.status == "determined":
            out[k.knob] = k.behaves_as
        elif k.status != "no-evidence":
            out[k.knob] = (k.status, tuple(k.options))
    return out


def check(spec: str, traces=None, **kw):
    with AdapterProcess(resolve_adapter(spec), **kw) as adapter:
        return check_peer(adapter, corpus_traces() if traces is None else traces)


CORPUS_IDS = [t.id for t in corpus_traces()]


# --- the reference model as a peer --------------------------------------------------------------

@pytest.fixture(scope="module")
def model_report():
    return check("model")


def test_model_adapter_agrees_with_draft_on_the_whole_corpus(model_report):
    assert len(CORPUS_IDS) == 37  # 19 findings (Q14, Q15, Q18, Q19, Q23 among them) and 18 FC traces
    assert classes(model_report) == {i: "draft" for i in CORPUS_IDS}
    assert model_report.findings == {}
    assert model_report.compared == ["messages", "fatal (with atEvent, code, clause)",
                                     "warnings (code, messageId, atEvent)", "runInput", "state"]
    assert model_report.peer == "activity-check model (draft)"
    assert model_report.starts == 1
    # Q6-ms's witness alone also fits Q19=catch-all, under which the snapshot's metadata merges
    # into nothing; jointly (issue 20) the other traces fix Q19=activity-row, so Q6-ms is
    # determined; X1's witness (and FC-34) tells drop from preserve, not from drop-open, which
    # differs only on a later TEXT_MESSAGE_START
    assert knobs(model_report) == {
        "Q1": "merge", "Q5": "skip", "Q6": "skip", "Q6-ms": "replace", "Q7": "apply",
        "Q8": "self-revoking", "Q10": "seen", "Q11": "in-place", "Q13": "tolerate",
        "Q18": "prose", "Q19": "activity-row", "Q20": "drop-op",
        "Q14": "decline", "Q15": "live", "Q23": "continue",
        "X1": ("undetermined", ("drop", "drop-open"))}


def test_model_adapter_under_another_reading_is_classified_as_that_reading():
    report = check("model:Q1=ignore,Q7=fatal")
    got = classes(report)
    assert got["AMB-Q1-ce6f949c"] == "reading"
    assert got["FC-08"] == "reading"
    assert {k for k, v in got.items() if v != "draft"} == {"AMB-Q1-ce6f949c", "FC-08"}
    by_id = {r.trace.id: r.classification for r in report.results}
    # Q19=catch-all sends the declined snapshot's metadata nowhere, as Q1=ignore does
    assert by_id["AMB-Q1-ce6f949c"].readings == ["Q1=merge,Q19=catch-all", "Q1=ignore"]
    # the model adapter names its fatal's code and clause, so the cause is compared too
    # (issue 20): Q7=skip with Q13=fatal fails the run at the same event for another reason
    assert by_id["FC-08"].readings == ["Q7=fatal"]
    assert by_id["FC-08"].aspects == ["messages.content", "fatal"]
    behaviour = knobs(report)
    # so that trace alone fits both options of Q1; the others (AMB-Q19's) fix Q1=ignore
    assert behaviour["Q1"] == "ignore" and behaviour["Q19"] == "activity-row"
    assert report.joint.consistent({"Q1": "ignore", "Q7": "fatal"})
    assert not report.joint.consistent({"Q1": "merge"})
    assert behaviour["Q7"] == "fatal"  # see FC-08 above: the cause separates skip from fatal
    assert report.findings == {}


LONE = [{"type": "RUN_STARTED", "threadId": "t", "runId": "r"},
        {"type": "ACTIVITY_SNAPSHOT", "messageId": "a\ud800", "activityType": "P", "content": {}},
        {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"}]
"""A trace whose id holds a lone surrogate, as a \\ud800 escape in a file reads."""


def test_a_lone_surrogate_travels_to_and_from_an_adapter_unchanged():
    """The request pipe replaced it by "?" (another trace than the model's, so the model
    disagreed with itself) and the model adapter crashed writing it back."""
    with AdapterProcess(resolve_adapter("model")) as a:
        reply = a.request(LONE)
    assert reply.kind == "ok", reply
    assert [m["id"] for m in reply.response["messages"]] == ["a\ud800"]


def test_a_divergence_on_a_lone_surrogate_is_exported(tmp_path):
    """finding_id hashed the trace with strict UTF-8 and write_finding wrote it so: both raised
    UnicodeEncodeError, a traceback of peer check."""
    from counterexamples.findings import finding_id, write_finding
    from model.wire import parse_events
    events = parse_events(LONE)
    fid = finding_id("PEER", "peer", "x", events)
    assert fid.startswith("PEER-x-")
    assert finding_id("PEER", "peer", "x", parse_events(LONE[:1])) == \
        finding_id("PEER", "peer", "x", parse_events(LONE[:1]))
    trace = tmp_path / "t.jsonl"
    trace.write_text("".join(json.dumps(e) + "\n" for e in LONE))
    adapter = tmp_path / "fake.py"
    adapter.write_text("import json, sys\nfor line in sys.stdin:\n    r = json.loads(line)\n"
                       "    print(json.dumps({'id': r['id'], 'messages': [], 'fatal': None, "
                       "'warnings': []}), flush=True)\n")
    out = tmp_path / "out"
    assert main(["peer", "check", "--adapter", f"{sys.executable} {adapter}", str(trace),
                 "--no-shrink", "--out", str(out)]) == 0
    written = list((out / "findings").glob("*.json"))
    assert len(written) == 1
    assert load_finding(str(written[0]))["events"][1]["messageId"] == "a\ud800"

def test_model_adapter_agrees_with_draft_on_generated_traces_and_probes():
    traces, counts = generated_traces(seed=3, stateful=40, bfs_depth=2)
    # one or two probes per knob, and (issue 20) one per branch, code and producer violation
    # the generators rarely reach
    assert counts["corpus"] == 37 and counts["probe"] == len(probe_traces()) == 56
    assert counts["stateful"] > 20 and counts["bfs"] > 20
    report = check("model", traces)
    assert set(classes(report).values()) == {"draft"}
    assert knobs(report)["Q9"] == "skip" and knobs(report)["Q21"] == "fatal"


def test_classify_compares_only_what_the_answer_reports():
    events = PeerTrace.of("t", [RUN, snap(), delta(patch=[{"op": "remove", "path": "/x"}])])
    from counterexamples.peers.adapter import Reply
    answer = {"messages": [{"id": "act-1", "role": "activity", "activityType": "PLAN",
                            "content": {"n": 0}}], "fatal": None, "warnings": None,
              "runInput": None}
    c = classify(events.events, Reply("ok", answer))
    assert c.kind == "draft"  # the patch-failure warning is not compared: warnings null
    wrong = dict(answer, warnings=[])
    c = classify(events.events, Reply("ok", wrong))
    assert c.kind == "divergence" and c.aspects == ["warnings"]
    fatal = dict(answer, fatal={"atEvent": 2})
    c = classify(events.events, Reply("ok", fatal))
    assert c.kind == "reading" and c.readings == ["Q13=fatal"]
    moved = dict(answer, fatal={"atEvent": 1})
    assert classify(events.events, Reply("ok", moved)).kind == "divergence"
    assert classify(events.events, Reply("ok", dict(answer, fatal=True))).kind == "reading"


# --- broken adapters ----------------------------------------------------------------------------

FIVE = [t for t in corpus_traces() if t.id in ("FC-08", "FC-09", "FC-10", "FC-11", "FC-14")]


@pytest.mark.parametrize("hook, victim, kind, words", [
    ("--crash-on", "FC-09", "crash", "exit status 3"),
    ("--hang-on", "FC-09", "timeout", "no answer within 1 s"),
    ("--garbage-on", "FC-09", "garbage", "answer is not JSON"),
])
def test_a_broken_adapter_costs_one_trace_and_the_run_goes_on(hook, victim, kind, words):
    spec = AdapterSpec("broken", (PY, "-m", "counterexamples.peers.model_adapter", hook, victim),
                       "broken")
    with AdapterProcess(spec, timeout=1.0) as adapter:
        report = check_peer(adapter, FIVE)
        starts = adapter.starts
    got = classes(report)
    assert got == {"FC-08": "draft", "FC-09": "error", "FC-10": "draft", "FC-11": "draft",
                   "FC-14": "draft"}
    error = next(r.classification.error for r in report.results if r.trace.id == victim)
    assert error.startswith(kind + ": ") and words in error
    assert starts == 2  # restarted once, after the failure


def test_adapter_refusal_and_malformed_answers_are_errors_without_restart(tmp_path):
    script = tmp_path / "odd.py"
    script.write_text(
        "import json, sys\n"
        "for line in sys.stdin:\n"
        "    r = json.loads(line)\n"
        "    n = len(r['events'])\n"
        "    if n == 3:\n"
        "        out = {'id': r['id'], 'error': 'cannot do three'}\n"
        "    elif n == 4:\n"
        "        out = {'id': r['id'], 'messages': 'none', 'fatal': None}\n"
        "    else:\n"
        "        out = {'id': r['id'], 'messages': [], 'fatal': None, 'warnings': None}\n"
        "    print(json.dumps(out), flush=True)\n")
    traces = [PeerTrace.of("three", [RUN, snap(), END]),
              PeerTrace.of("four", [RUN, snap(), delta(), END]),
              PeerTrace.of("one", [RUN])]
    with AdapterProcess(AdapterSpec("odd", (PY, str(script)), "odd")) as adapter:
        report = check_peer(adapter, traces, shrink=False)
        assert adapter.starts == 1
    errors = {r.trace.id: r.classification.error for r in report.results}
    assert errors["three"] == "refused: the adapter could not process the trace: cannot do three"
    assert errors["four"] == ("bad-response: answer member 'messages' must be an array of "
                              "message objects, each with a string 'id' (the consumer's "
                              "messages after the trace, AG-UI wire form) ('none' is not of "
                              "type 'array')")
    assert classes(report)["one"] == "draft"  # no messages, no fatal: what any reading gives


def test_answers_are_checked_against_the_answer_schema():
    import jsonschema
    from counterexamples.peers.adapter import ANSWER_SCHEMA_PATH, _check_response
    with open(ANSWER_SCHEMA_PATH, encoding="utf-8") as f:
        schema = json.load(f)
    jsonschema.Draft202012Validator.check_schema(schema)
    good = {"id": "1:x", "messages": [{"id": "a", "role": "activity"}], "fatal": None,
            "warnings": [{"code": "ACTIVITY_PATCH_FAILED", "messageId": "a", "atEvent": 2}],
            "events": [{"type": "RUN_STARTED"}], "request": {"messages": []},
            "observes": ["state"], "runInput": None, "state": None, "log": ["x"], "more": 1}
    assert _check_response(good) is None
    assert jsonschema.Draft202012Validator(schema).is_valid(good)
    assert jsonschema.Draft202012Validator(schema).is_valid({"id": "1:x", "error": "no"})
    bad = {"events": {"type": "RUN_STARTED"}, "request": [], "fatal": False,
           "warnings": [{"messageId": "a"}], "observes": "state", "runInput": [1]}
    for member, value in bad.items():
        problem = _check_response({**good, member: value})
        assert problem and problem.startswith(f"answer member '{member}") and "\n" not in problem
    assert _check_response({**good, "fatal": {"atEvent": 1.0}}).startswith(
        "answer member 'fatal.atEvent'")
    missing = {k: v for k, v in good.items() if k != "fatal"}
    assert _check_response(missing).startswith("answer needs 'fatal'")


def test_an_adapter_that_keeps_dying_is_given_up_after_five_failures():
    spec = AdapterSpec("dead", (PY, "-c", "import sys; sys.exit(7)"), "dead")
    with AdapterProcess(spec, timeout=2.0) as adapter:
        report = check_peer(adapter, corpus_traces()[:8], shrink=False)
    kinds = [r.classification.error.split(":")[0] for r in report.results]
    assert kinds == ["crash"] * 5 + ["skipped"] * 3
    assert "exit status 7" in report.results[0].classification.error


def test_resolve_adapter_refuses_what_cannot_start(tmp_path):
    with pytest.raises(PeerError, match="command not found"):
        resolve_adapter("no-such-program-xyz --flag")
    with pytest.raises(PeerError, match="unknown knob"):
        resolve_adapter("model:Q99=x")
    with pytest.raises(PeerError, match="reducer or pipeline"):
        resolve_adapter("ag-ui-client:fast")
    with pytest.raises(PeerError, match="empty command"):
        resolve_adapter("  ")
    plain = tmp_path / "plain.txt"
    plain.write_text("x")
    with pytest.raises(PeerError, match="not executable"):
        resolve_adapter(str(plain))
    with pytest.raises(PeerError) as refused:  # it exists: not 'no such file'
        resolve_adapter(f"{tmp_path} --flag")
    assert str(refused.value) == f"--adapter: {tmp_path}: a directory, not a program"
    with pytest.raises(PeerError) as refused:
        resolve_adapter(str(tmp_path / "missing.py"))
    assert str(refused.value) == f"--adapter: {tmp_path / 'missing.py'}: no such file"
    spec = resolve_adapter("model:strict")
    assert spec.name == "model-strict" and spec.argv[-1] == "strict"


# --- traces from files --------------------------------------------------------------------------

def test_load_traces_reads_traces_case_sets_and_directories(tmp_path):
    (tmp_path / "a.jsonl").write_text("\n".join(json.dumps(e) for e in [RUN, snap(), END]) + "\n")
    (tmp_path / "b.json").write_text(json.dumps({"id": "named", "events": [RUN, snap()],
                                                 "initialState": {"x": 1}}))
    cases = tmp_path / "cases.jsonl"
    cases.write_text(json.dumps({"id": "c1", "events": [RUN]}) + "\n"
                     + json.dumps({"events": [RUN, END]}) + "\n")
    got = load_traces([str(tmp_path)])
    assert [(t.id, len(t.wire), t.state) for t in got] == [
        ("a.jsonl", 3, None), ("named", 2, {"x": 1}), ("c1", 1, None), ("cases.jsonl:2", 2, None)]
    from model.wire import TraceFormatError
    (tmp_path / "bad.jsonl").write_text('{"type": "RUN_STARTED"\n')
    with pytest.raises(TraceFormatError, match="bad.jsonl:2:1: not valid JSON"):
        load_traces([str(tmp_path / "bad.jsonl")])


def test_load_traces_reads_a_one_line_case_as_strictly_as_replay(tmp_path):
    """Regression: a one-line {"events": [...]} file was decoded leniently, so a repeated member
    passed and deep nesting raised RecursionError (a traceback from `peer check`)."""
    from model.wire import TraceFormatError
    repeated = tmp_path / "dup.json"
    repeated.write_text('{"events": [' + json.dumps(RUN) + ', {"type": "ACTIVITY_SNAPSHOT", '
                        '"messageId": "a", "activityType": "P", "content": {"k": 1, "k": 2}}]}\n')
    with pytest.raises(TraceFormatError, match=r'dup.json:1:\d+: not valid JSON: duplicate member '
                                               r'"k" in \$\.events\[1\]\.content'):
        load_traces([str(repeated)])
    for levels in (300, 100_000):  # past the bound, and past what the interpreter reads
        deep = tmp_path / f"deep{levels}.jsonl"
        head = '{"events": [{"type": "RUN_STARTED", "threadId": "t", "runId": "r", "x": '
        deep.write_text(head + "[" * levels + "]" * levels + "}]}\n")
        # the column of the bracket that opens level 129 (the two objects and the events
        # array are levels 1 to 3: the 126th bracket of the run)
        column = len(head) + 126
        with pytest.raises(TraceFormatError, match=f"deep{levels}.jsonl:1:{column}: not valid "
                                                   "JSON: nested more than 128 levels deep"):
            load_traces([str(deep)])


def test_load_traces_counts_a_written_finding_once(tmp_path):
    """A run writes each finding as X.json (with its id) and X.jsonl (its trace): a directory of
    them is one trace per finding."""
    (tmp_path / "F-1.json").write_text(json.dumps({"id": "F-1", "events": [RUN, snap()]}))
    (tmp_path / "F-1.jsonl").write_text("\n".join(json.dumps(e) for e in [RUN, snap()]) + "\n")
    (tmp_path / "G.jsonl").write_text(json.dumps(RUN) + "\n")
    assert [t.id for t in load_traces([str(tmp_path)])] == ["F-1", "G.jsonl"]


# --- the command line ---------------------------------------------------------------------------

def test_cli_peer_check_json_and_out(tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["peer", "check", "--adapter", "model:Q7=fatal", "--json", "--out",
                 str(out)]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["command"] == "peer check" and report["counts"] == {
        "traces": 37, "draft": 36, "reading": 1, "deviation": 0, "divergence": 0, "error": 0}
    assert [t for t in report["traces"] if t["class"] != "draft"] == [
        {"id": "FC-08", "class": "reading", "readings": ["Q7=fatal"],
         "differsFromDraft": ["messages.content", "fatal"]}]
    saved = json.loads((out / "peer-summary.json").read_text())
    assert saved["counts"] == report["counts"]
    # no finding; the traces put to the peer (the corpus and the field cases), one file each
    assert saved["files"] == sorted(saved["traceFiles"].values()) and len(saved["files"]) == 37
    assert all(f.startswith("traces/") for f in saved["files"])
    # an earlier peer output may be overwritten; a foreign directory may not
    assert main(["peer", "check", "--adapter", "model", "--out", str(out)]) == 0
    capsys.readouterr()
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("mine")
    assert main(["peer", "check", "--adapter", "model", "--out", str(foreign)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "holds no earlier 'activity-check peer' output" in err
    assert (foreign / "notes.txt").read_text() == "mine"


@pytest.mark.parametrize("argv, words", [
    (["peer", "check", "--adapter", "nope-not-a-program"], "command not found"),
    (["peer", "check", "--adapter", "model", "missing.jsonl"], "missing.jsonl"),
    (["peer", "search", "--adapter", "model", "--budget", "0"], "--budget must be a positive"),
    (["peer", "check", "--adapter", "model", "--timeout", "-1"], "--timeout must be a positive"),
    (["peer", "check"], "the following arguments are required: --adapter"),
    (["peer", "check", "--adapter", "ag-ui-client:fast"], "reducer or pipeline"),
])
def test_cli_peer_bad_input_is_one_line_exit_2(argv, words, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("activity-check: error:") and err.count("\n") == 1
    assert words in err


def test_cli_peer_check_of_given_trace_files(tmp_path, capsys):
    trace = tmp_path / "mine.jsonl"
    trace.write_text("\n".join(json.dumps(e) for e in [RUN, snap(), delta(), END]) + "\n")
    assert main(["peer", "check", "--adapter", "model", str(trace)]) == 0
    text = capsys.readouterr().out
    assert "mine.jsonl" in text and "1 traces: 1 agree with draft" in text


def test_cli_peer_search_is_deterministic(tmp_path, capsys):
    argv = ["peer", "search", "--adapter", "model:Q13=fatal", "--examples", "20",
            "--bfs-depth", "2", "--budget", "inf", "--json", "--seed", "5"]
    assert main(argv + ["--out", str(tmp_path / "a")]) == 0
    first = capsys.readouterr().out
    assert main(argv + ["--out", str(tmp_path / "b")]) == 0
    assert capsys.readouterr().out == first
    report = json.loads(first)
    assert report["seed"] == 5 and report["counts"]["divergence"] == 0
    assert report["counts"]["reading"] > 0
    q13 = next(k for k in report["knobs"] if k["knob"] == "Q13")
    assert q13["behavesAs"] == "fatal"
    assert (tmp_path / "a" / "peer-summary.json").read_bytes() == \
        (tmp_path / "b" / "peer-summary.json").read_bytes()


# --- shrinking and findings ---------------------------------------------------------------------

def test_a_divergence_is_shrunk_by_rerunning_the_peer_and_exported(tmp_path, capsys):
    """A peer that treats ``replace: false`` like a replacing snapshot (a zoo mistake no reading
    makes) diverges; the finding keeps the two events that show it."""
    script = tmp_path / "overwrite.py"
    script.write_text(OVERWRITE)
    padded = [RUN, {"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "user"},
              {"type": "TEXT_MESSAGE_END", "messageId": "m"}, snap("x", {"k": 1}),
              snap("x", {"k": 2}, replace=False, metadata={"a": 1}), delta("x", [], ), END]
    out = tmp_path / "out"
    assert main(["peer", "check", "--adapter", f"{PY} {script}", "--out", str(out), "--json",
                 str(_write(tmp_path / "padded.jsonl", padded))]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["counts"]["divergence"] == 1
    (div,) = report["divergences"]
    assert div["branch"] == "snapshot.replace-false" and div["divergesAt"] == 2
    assert div["clauses"] == ["ACT-SNAP-REPLACE-FALSE", "ACT-ATTR-KEEP", "SNP-SPENT",
                              "ACT-SNAP-NO-MERGE"]
    assert div["aspects"] == ["messages.content"] and div["length"] - div["closing"] == 3
    finding = json.loads((out / div["files"][0]).read_text())
    assert finding["kind"] == "peer-divergence" and finding["source"] == "padded.jsonl"
    # text message, delta, run end and metadata dropped; the first content made plain; renamed;
    # then the run ended again (issue 39: a complete stream)
    assert finding["events"][-1]["type"] == "RUN_FINISHED"
    assert _core(finding) == [
        RUN, {"type": "ACTIVITY_SNAPSHOT", "messageId": "act-1", "activityType": "TYPE-A",
              "content": {}},
        {"type": "ACTIVITY_SNAPSHOT", "messageId": "act-1", "activityType": "TYPE-A",
         "content": {"k": 2}, "replace": False}]
    assert finding["peerVerdict"]["messages"][0]["content"] == {"k": 2}
    assert finding["verdicts"][0]["includesDraft"]
    assert finding["verdicts"][0]["verdict"]["messages"][0]["content"] == {}
    lines = (out / div["files"][1]).read_text().splitlines()
    assert [json.loads(x) for x in lines] == finding["events"]


def test_without_out_the_text_says_the_finding_ids_name_no_file_yet(tmp_path, capsys):
    """``peer check`` without ``--out`` prints each divergence's finding id, a file only
    ``--out`` writes: the text says so, and how to write it; with ``--out`` the file is there."""
    script = tmp_path / "overwrite.py"
    script.write_text(OVERWRITE)
    trace = _write(tmp_path / "t.jsonl", [RUN, snap("x", {"k": 1}),
                                          snap("x", {"k": 2}, replace=False), END])
    assert main(["peer", "check", "--adapter", f"{PY} {script}", str(trace)]) == 0
    lines = capsys.readouterr().out.splitlines()
    ids = [line.split()[0] for line in lines if line.startswith("  PEER-overwrite-")]
    assert len(ids) == 1
    assert lines[-1] == ("the findings above are not written: --out DIR writes each as "
                         "DIR/findings/<id>.json and .jsonl")
    out = tmp_path / "out"
    assert main(["peer", "check", "--adapter", f"{PY} {script}", str(trace),
                 "--out", str(out)]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert text.endswith(f"written to {out}/peer-summary.json and {out}/findings/")
    assert (out / "findings" / f"{ids[0]}.json").is_file()
    assert (out / "findings" / f"{ids[0]}.jsonl").is_file()


def test_a_peer_that_fails_the_final_rerun_of_its_shrunk_divergence_still_gets_a_finding(
        tmp_path, capsys):
    """The shrunk trace is run once more to build its finding; a peer that crashes there (an
    erratic one: out of step, dying) left no model verdicts to list and the command ended in an
    IndexError traceback. Now the finding lists the model's verdict classes and says the peer
    gave no usable answer on that run."""
    script = tmp_path / "erratic.py"
    script.write_text(OVERWRITE.replace(
        "    r = json.loads(line)\n",
        "    r = json.loads(line)\n    if '~final' in r['id']:\n        sys.exit(3)\n"))
    trace = _write(tmp_path / "t.jsonl", [RUN, snap("x", {"k": 1}),
                                          snap("x", {"k": 2}, replace=False), END])
    out = tmp_path / "out"
    assert main(["peer", "check", "--adapter", f"{PY} {script}", str(trace), "--out", str(out),
                 "--json"]) == 0
    (div,) = json.loads(capsys.readouterr().out)["divergences"]
    finding = json.loads((out / div["files"][0]).read_text())
    assert finding["verdicts"][0]["includesDraft"]
    assert finding["verdicts"][0]["verdict"]["messages"][0]["content"] == {}
    assert finding["peerVerdict"] == {}
    assert finding["explanation"].splitlines()[3] == (
        "- peer: no usable answer when the trace was run again (crash: the adapter stopped "
        "(exit status 3) before answering)")


ROOT_ARRAY = {"op": "replace", "path": "", "value": []}
"""A patch operation that replaces the whole content with an array (not an object)."""

Q7_FATAL_FORGETS = (
    "import json, sys\n"
    "from counterexamples.peers.model_adapter import answer\n"
    "from model.readings import parse_reading\n"
    "reading = parse_reading('Q7=fatal')\n"
    "for line in sys.stdin:\n"
    "    out = answer(json.loads(line), reading)\n"
    "    if out.get('fatal'):\n"
    "        out['messages'], out['runInput'] = [], []\n"
    "    print(json.dumps(out), flush=True)\n")
"""A peer that follows Q7=fatal but forgets every message when it fails the run."""


def test_divergence_branch_is_the_step_branch_of_the_nearest_reading():
    """The branch comes from the model's own step under the nearest reading (the fold's
    record), not from a guess over the event and the warning codes: a root-array delta that
    Q7=fatal fails on is ``delta.non-object``, with that branch's clauses."""
    events = parse_events([RUN, snap(), delta(patch=[ROOT_ARRAY])])
    assert divergence_clauses(events, 2, ["messages.missing"], None, {"Q7": "fatal"}) == (
        "delta.non-object", ["ACT-DELTA-OBJECT-DETECT", "ACT-DELTA-OBJECT"], [])
    # a reading that detects it as a failed patch takes the patch-failure branch instead
    branch, clauses, _ = divergence_clauses(events, 2, ["messages.missing"], None,
                                            {"Q7": "skip", "Q13": "fatal"})
    assert branch == "delta.patch-failed" and clauses[0] == "SNP-SURFACE-FAILURE"
    # an object result is an ordinary application
    plain = parse_events([RUN, snap(), delta()])
    assert divergence_clauses(plain, 2, ["messages.content"], None, {"Q7": "fatal"})[0] == \
        "delta.apply"
    # past the reading's fatal its halted consumer ignores the event, and says so
    late = parse_events([RUN, snap(), delta(patch=[ROOT_ARRAY]), delta()])
    assert divergence_clauses(late, 3, ["messages"], None, {"Q7": "fatal"})[0] == \
        "lifecycle.halted"


def test_peer_report_names_delta_non_object_for_a_root_array_delta_under_q7_fatal(
        tmp_path, capsys):
    """A peer that behaves as Q7=fatal (and forgets its messages on failing) diverges at the
    root-array delta; the report places it at the branch the Q7=fatal consumer takes there."""
    script = tmp_path / "q7_fatal_forgets.py"
    script.write_text(Q7_FATAL_FORGETS)
    # a failed patch first, so that only Q7=fatal (Q13 tolerating it) is nearest at the end
    trace = [RUN, snap(), delta(patch=[{"op": "remove", "path": "/missing"}]),
             delta(patch=[ROOT_ARRAY])]
    out = tmp_path / "out"
    assert main(["peer", "check", "--no-shrink", "--adapter", f"{PY} {script}", "--out",
                 str(out), "--json", str(_write(tmp_path / "root-array.jsonl", trace))]) == 0
    (div,) = json.loads(capsys.readouterr().out)["divergences"]
    assert (div["branch"], div["divergesAt"], div["nearest"]) == (
        "delta.non-object", 3, "Q7=fatal,Q13=tolerate")
    assert div["clauses"] == ["ACT-DELTA-OBJECT-DETECT", "ACT-DELTA-OBJECT"]
    assert div["relatedClauses"] == ["SNP-SURFACE-FAILURE"]  # the tolerated patch failure
    finding = load_finding(str(out / div["files"][0]))
    assert isinstance(finding, PeerDivergenceFinding) and finding.branch == "delta.non-object"
    assert "takes as 'delta.non-object'" in finding.explanation


def _write(path: Path, events) -> Path:
    path.write_text("".join(json.dumps(e) + "\n" for e in events))
    return path


# --- @ag-ui/client 1.0.0 ------------------------------------------------------------------------

# Observed on the committed corpus (32 traces); every other trace agrees with draft.
REDUCER_CORPUS = {
    "AMB-Q10-b4ae19ee": "reading", "AMB-Q6-3b94a4a0": "reading", "AMB-Q20-bb010536": "reading",
    "FC-22": "divergence", "FC-23": "divergence"}
# AMB-Q15: the pipeline's schema requires SUBAGENT_STARTED's `name`, which the draft pages do
# not; it fails the run there
PIPELINE_CORPUS = {"AMB-Q10-b4ae19ee": "reading", "AMB-Q6-3b94a4a0": "reading",
                   "FC-23": "divergence", "AMB-Q15-c64683a8": "divergence"}
WITH_WARNINGS = ["messages", "fatal (yes/no)", "warnings (code, messageId, atEvent)", "runInput",
                 "state"]
"""What the adapter's answers make comparable: its console warnings are mapped to our codes."""

# FC-23 (a delta for an activity never created): @ag-ui/client skips it without a warning where
# the model warns (ACT-DELTA-MISSING-WARN); the divergence is in the warnings alone
FC23_SHRUNK = [RUN, {"type": "ACTIVITY_DELTA", "messageId": "act-1", "activityType": "TYPE-A",
                     "patch": []}]


@pytest.fixture(scope="module")
def reducer_report():
    return check("ag-ui-client:reducer")


@pytest.fixture(scope="module")
def pipeline_report():
    return check("ag-ui-client:pipeline")


def _core(finding) -> list:
    """A peer finding's shrunk trace, without the events appended to end what it left open
    (issue 39: its ``closing``)."""
    return finding["events"][:finding["length"] - finding.get("closing", 0)]


def _by_source(report) -> dict:
    return {f["source"]: f for f in report.findings.values()}


@needs_node
def test_ag_ui_client_reducer_on_the_corpus(reducer_report):
    assert classes(reducer_report) == {i: REDUCER_CORPUS.get(i, "draft") for i in CORPUS_IDS}
    by_id = {r.trace.id: r.classification for r in reducer_report.results}
    assert by_id["AMB-Q6-3b94a4a0"].readings == ["Q6=merge,Q13=tolerate"]
    assert by_id["FC-22"].aspects == ["messages.extra", "fatal"]
    assert by_id["FC-22"].divergent == ["messages", "fatal"]
    assert reducer_report.compared == WITH_WARNINGS
    assert reducer_report.peer == "@ag-ui/client@1.0.0+@ag-ui/core@1.0.0 (reducer)"
    # Q6-ms as for the model adapter (see the first test); Q10 jointly (AMB-Q10 alone also fits
    # Q8=keep,Q11=move)
    assert knobs(reducer_report) == {
        "Q1": "merge", "Q5": "skip", "Q6": "merge", "Q6-ms": "replace", "Q7": "apply",
        "Q8": "self-revoking", "Q10": "held", "Q11": "in-place", "Q13": "tolerate",
        "Q18": "prose", "Q19": "activity-row", "Q20": "skip-patch",
        "Q14": "decline", "Q15": "live", "Q23": "continue",
        "X1": ("undetermined", ("drop", "drop-open"))}
    # FC-22 (content null) shrinks to the malformed snapshot alone: the reducer validates nothing;
    # its messages and its fatal diverge, two causes on one trace: two findings (issue 39: never
    # two causes in one id)
    found = _by_source(reducer_report)
    assert set(found) == {"FC-22", "FC-23"}
    fc22 = [f for f in reducer_report.findings.values() if f["source"] == "FC-22"]
    assert sorted(tuple(f["divergesIn"]) for f in fc22) == [("fatal",), ("messages",)]
    assert len({f.id for f in fc22}) == 2
    for finding in fc22:
        assert finding["branch"] == "malformed.fatal"
        assert finding["events"] == [{"type": "ACTIVITY_SNAPSHOT", "messageId": "activity-0001",
                                      "activityType": "thinking", "content": None}]
        assert "PRC-MALFORMED-FATAL" in finding["clauses"]
    assert _core(found["FC-23"]) == FC23_SHRUNK and found["FC-23"]["aspects"] == ["warnings"]


@needs_node
def test_ag_ui_client_pipeline_on_the_corpus(pipeline_report):
    assert classes(pipeline_report) == {i: PIPELINE_CORPUS.get(i, "draft") for i in CORPUS_IDS}
    by_id = {r.trace.id: r.classification for r in pipeline_report.results}
    assert by_id["AMB-Q6-3b94a4a0"].readings == ["Q6=merge,Q13=tolerate"]
    assert by_id["AMB-Q10-b4ae19ee"].readings == [
        "Q8=self-revoking,Q10=held", "Q8=keep,Q11=move", "Q8=by-type,Q10=held"]
    assert pipeline_report.compared == ["messages", "fatal (with atEvent)", *WITH_WARNINGS[2:]]
    found = _by_source(pipeline_report)
    assert set(found) == {"FC-23", "AMB-Q15-c64683a8"} and _core(found["FC-23"]) == FC23_SHRUNK
    # Q10: the AMB-Q10 trace alone also fits Q8=keep,Q11=move; jointly it is held (issue 20)
    assert knobs(pipeline_report) == {
        "Q1": "merge", "Q5": "skip", "Q6": "merge", "Q6-ms": "replace", "Q7": "apply",
        "Q8": "self-revoking", "Q10": "held", "Q11": "in-place", "Q13": "tolerate",
        "Q18": "prose", "Q19": "activity-row", "Q20": "drop-op",
        "Q14": "decline", "Q23": "continue",  # Q15: its witness is a divergence here
        "X1": ("undetermined", ("drop", "drop-open"))}


PROBES_REDUCER = {
    "probe-Q4": "reading", "probe-Q4-opener": "reading", "probe-Q9-replace": "reading",
    "probe-Q9-replace-false": "divergence", "probe-Q10": "reading", "probe-Q20": "reading",
    "probe-Q21-metadata": "divergence", "probe-Q21-owner": "divergence",
    "probe-Q17": "divergence", "probe-malformed-text": "error", "probe-tool-twice": "divergence",
    "probe-step-twice": "divergence", "probe-step-owner": "divergence",
    "probe-step-not-open": "divergence", "probe-unknown-event": "divergence",
    "probe-undescribed-member": "divergence", "probe-before-start": "divergence",
    "probe-after-close": "divergence", "probe-run-twice": "divergence",
    "probe-run-error": "divergence", "probe-text-owner": "divergence",
    "probe-null-replace": "divergence", "probe-malformed-patch": "divergence",
    "probe-finish-with-open": "divergence", "probe-step-open-at-finish": "divergence",
    "probe-remove-root": "divergence",
    # issue 42: a patch under __proto__ or constructor/prototype is refused (the content stays),
    # and a tool event naming an activity's id adds a message beside it or a tool call to it
    "probe-special-keys-content": "divergence", "probe-special-keys-patch": "divergence",
    "probe-ref-parent-activity": "divergence", "probe-ref-toolcall-activity": "divergence",
    "probe-ref-result-activity": "divergence",}
PROBES_PIPELINE = {
    "probe-Q9-replace": "reading", "probe-Q9-replace-false": "divergence", "probe-Q10": "reading",
    "probe-Q17": "divergence", "probe-tool-args-missing": "divergence",
    "probe-tool-twice": "divergence", "probe-subagent-twice": "divergence",
    "probe-subagent-reused": "divergence", "probe-X1": "reading",
    "probe-parent-not-announced": "divergence", "probe-remove-root": "divergence",
    # issue 42: a patch under __proto__ or constructor/prototype is refused (the content stays),
    # and a tool event naming an activity's id adds a message beside it or a tool call to it
    "probe-special-keys-content": "divergence", "probe-special-keys-patch": "divergence",
    "probe-ref-parent-activity": "divergence", "probe-ref-toolcall-activity": "divergence",
    "probe-ref-result-activity": "divergence",}


@needs_node
@pytest.mark.parametrize("mode, expected", [("reducer", PROBES_REDUCER),
                                            ("pipeline", PROBES_PIPELINE)])
def test_ag_ui_client_on_the_probes(mode, expected):
    report = check(f"ag-ui-client:{mode}", probe_traces())
    assert classes(report) == {t.id: expected.get(t.id, "draft") for t in probe_traces()}
    behaviour = knobs(report)
    # warnings are observable: keep is told from warn; replace:false on a text message's id is
    # skipped without the warning Q9=skip gives, so that probe diverges (combined) and Q9 is
    # what the replacing probe shows
    assert behaviour["Q3"] == "keep" and behaviour["Q9"] == "replace"
    assert behaviour["Q7"] == "apply" and behaviour["Q1"] == "merge"
    assert behaviour["Q15"] == "live" and behaviour["Q14"] == "decline"
    assert behaviour["Q20"] == ("skip-patch" if mode == "reducer" else "drop-op")
    found = _by_source(report)
    q9 = found["probe-Q9-replace-false"]
    assert q9["divergesIn"] == ["combined"] and q9["nearest"] == "Q9=skip"
    # an activity in RUN_STARTED.input is adopted as a message (the model holds no such message)
    assert found["probe-Q17"]["aspects"] == ["messages.extra"] and \
        found["probe-Q17"]["conformant"] is True
    if mode == "reducer":
        assert behaviour["Q4"] == "accept" and behaviour["X1"] == "drop"
        assert found["probe-before-start"]["branch"] == "lifecycle.not-started"
        assert found["probe-run-twice"]["divergesIn"] == ["fatal"]
    else:
        assert behaviour["Q4"] == "fatal" and behaviour["Q4-opener"] == "current"
        assert behaviour["Q21"] == "fatal" and behaviour["X1"] == "drop-open"
        assert found["probe-tool-args-missing"]["branch"] == "text.target-missing"


# The pipeline's failing a second TEXT_MESSAGE_START for a message a MESSAGES_SNAPSHOT dropped was
# a divergence (passthrough.accept) until X1 gained drop-open (issue 19): it is that reading now.
X1_DROP_OPEN = [RUN, {"type": "TEXT_MESSAGE_START", "messageId": "msg-1", "role": "assistant"},
                {"type": "MESSAGES_SNAPSHOT", "messages": [
                    {"id": "act-1", "role": "activity", "activityType": "PLAN",
                     "content": {"n": 0}}]},
                {"type": "TEXT_MESSAGE_START", "messageId": "msg-1", "role": "assistant"}]

# The divergences `peer search` finds in the pipeline (seed 0, defaults), already shrunk.
PIPELINE_DIVERGENCES = {
    "subagent.track": ([RUN, {"type": "SUBAGENT_STARTED", "subagentRunId": "sub-1"}], 1,
                       ["SUB-ACCEPT-UNANNOUNCED", "SUB-INTERLEAVE", "EVX-ACCEPT-FAMILIES"]),
    "text.target-missing": ([RUN, {"type": "TEXT_MESSAGE_START", "messageId": "msg-1",
                                   "role": "assistant"},
                             {"type": "TEXT_MESSAGE_START", "messageId": "msg-1",
                              "role": "assistant"}], 2,
                            ["TXT-TARGET-MISSING", "EVX-ACCEPT-FAMILIES"]),
    "text.target-activity": ([RUN, snap("act-1", {}),
                              {"type": "TEXT_MESSAGE_START", "messageId": "act-1",
                               "role": "assistant"},
                              {"type": "TEXT_MESSAGE_START", "messageId": "act-1",
                               "role": "assistant"}], 3,
                             ["TXT-TARGET-ACTIVITY", "EVX-ACCEPT-FAMILIES"]),
    "lifecycle.run-boundary": ([RUN, snap("act-1", {}),
                                {"type": "TEXT_MESSAGE_START", "messageId": "act-1",
                                 "role": "assistant"}, END], 3,
                               ["LIF-RUN-SCOPED", "LIF-RESTATE-SNAPSHOT", "EVX-ACCEPT-FAMILIES"]),
    "delta.missing": ([RUN, snap("act-1", {}),
                       {"type": "MESSAGES_SNAPSHOT", "messages": [
                           {"id": "act-2", "role": "activity", "activityType": "PLAN",
                            "content": {"n": 0}}]},
                       delta("act-1", [], subagentRunId="sub-1")], 3,
                      ["ACT-DELTA-MISSING", "ACT-DELTA-MISSING-WARN", "ACT-DELTA-MISSING-NOFAIL",
                       "ACT-TOLERATED", "EVX-ACCEPT-FAMILIES"]),
}


@needs_node
def test_ag_ui_client_pipeline_divergences_are_located_with_their_clauses():
    traces = [PeerTrace.of(k, w) for k, (w, _, _) in PIPELINE_DIVERGENCES.items()]
    with AdapterProcess(resolve_adapter("ag-ui-client:pipeline")) as adapter:
        for trace in traces:
            reply = adapter.request(trace.wire, None, trace.id)
            assert classify(trace.events, reply).kind == "divergence", trace.id
            assert reply.response["fatal"]["atEvent"] == PIPELINE_DIVERGENCES[trace.id][1]
            where = locate_divergence(adapter, trace)
            assert where.branch == trace.id
            assert where.index == PIPELINE_DIVERGENCES[trace.id][1]
            assert list(where.clauses) == PIPELINE_DIVERGENCES[trace.id][2]
            # already minimal: shrinking keeps every event
            assert len(shrink_divergence(adapter, trace)) == len(trace.wire)
        x1 = PeerTrace.of("x1", X1_DROP_OPEN)
        reply = adapter.request(x1.wire, None, x1.id)
        assert reply.response["fatal"]["atEvent"] == 3
        assert classify(x1.events, reply).readings == ["X1=drop-open"]
    # and the reducer alone accepts all five, and drops the message and its stream (X1=drop):
    # where it parts from draft it is only in not warning as the model does
    report = check("ag-ui-client:reducer", traces + [x1])
    assert {r.trace.id: r.classification.divergent for r in report.results
            if r.classification.kind != "draft"} == {"text.target-missing": ["warnings"],
                                                     "delta.missing": ["combined"]}


@needs_node
def test_ag_ui_client_pipeline_search_finds_the_divergences_the_corpus_does_not_hold():
    with AdapterProcess(resolve_adapter("ag-ui-client:pipeline")) as adapter:
        report = search_peer(adapter, seed=0, budget=None, stateful=40, bfs_depth=3)
    assert report.counts()["error"] == 0
    shrunk = {(f["branch"], tuple(f["divergesIn"])): _core(f)
              for f in report.findings.values() if f["shrunk"]}
    # one finding per root cause (issue 39): the fatal and the missing warning of a tool call's
    # arguments for a call never started are two, on one trace
    assert all(f["shrunk"] for f in report.findings.values())
    # deterministic (the seed's draws no longer depend on what the process imported, issue 20),
    # and the run's id is r1 throughout: the probes' witnesses shrink to themselves
    searched = {
        # SUBAGENT_STARTED must carry a name for @ag-ui/core (shrunk from the parent probe)
        ("subagent.track", ("fatal",)): [RUN, {"type": "SUBAGENT_STARTED",
                                              "subagentRunId": "sub-1", "name": "helper",
                                              "parentSubagentRunId": "sub-1"}],
        # `remove ""` makes the content null where the model keeps it (the patch does not apply)
        ("delta.patch-failed", ("messages",)): [
            RUN, _canonical([snap("act-1", {})])[0],
            _canonical([delta("act-1", [{"op": "remove", "path": ""}])])[0]],
        # a tool call's arguments for a call never started fail the run
        ("text.target-missing", ("fatal",)): [
            RUN, {"type": "TOOL_CALL_ARGS", "toolCallId": "tc-9", "delta": "{}"}],
        ("text.target-missing", ("warnings",)): [
            RUN, {"type": "TOOL_CALL_ARGS", "toolCallId": "tc-9", "delta": "{}"}],
        # FC-23's delta for a missing activity: skipped without the model's warning
        ("delta.missing", ("warnings",)): FC23_SHRUNK,
    }
    for key, events in searched.items():
        assert shrunk.get(key) == events, key
    assert ("lifecycle.run-boundary", ("messages",)) in shrunk  # RUN_STARTED.input adopted
    assert knobs(report)["Q4"] == "fatal"
    assert report.first_divergence["traces"] <= len(corpus_traces()) + len(probe_traces())


def _run_ids_alike(events):
    return [dict(e, runId="r") if e.get("type") == "RUN_STARTED" else e for e in events]


def _canonical(events):
    """The canonical names shrinking gives (TYPE-A for the first activity type)."""
    return [dict(e, activityType="TYPE-A") if "activityType" in e else e for e in events]


# --- the pytest plugin --------------------------------------------------------------------------

def _pytest(*args, cwd):
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    return subprocess.run([PY, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:xdist",
                           "-q", "--pyargs", "counterexamples.peers.suite", *args],
                          capture_output=True, text=True, cwd=cwd, env=env, timeout=120)


def test_pytest_plugin_runs_the_corpus_against_a_named_adapter(tmp_path):
    ran = _pytest("--activity-peer", "model", cwd=tmp_path)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "37 passed" in ran.stdout
    skipped = _pytest(cwd=tmp_path)
    assert skipped.returncode == 0 and "37 skipped" in skipped.stdout
    strict = _pytest("--activity-peer", "model:Q7=fatal", "--activity-peer-accept", "draft",
                     cwd=tmp_path)
    assert strict.returncode == 1
    assert "1 failed, 36 passed" in strict.stdout
    assert "FC-08: the peer agrees only with other readings than draft" in strict.stdout
    assert '{"op":"replace","path":"","value":[]}' in strict.stdout


def test_pytest_plugin_in_a_project_of_its_own(tmp_path):
    (tmp_path / "test_mine.py").write_text(
        "def test_corpus(activity_trace, activity_peer):\n"
        "    activity_peer.check(activity_trace)\n")
    trace = _write(tmp_path / "one.jsonl", [RUN, snap(), END])
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    ran = subprocess.run([PY, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:xdist", "-q",
                          "test_mine.py", "--activity-peer", MODEL, "--activity-peer-traces",
                          str(trace)], capture_output=True, text=True, cwd=tmp_path, env=env,
                         timeout=120)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "1 passed" in ran.stdout


@needs_node
def test_pytest_plugin_reports_the_reducer_divergence(tmp_path):
    ran = _pytest("--activity-peer", "ag-ui-client:reducer", cwd=tmp_path)
    assert ran.returncode == 1
    assert "2 failed, 35 passed" in ran.stdout  # FC-22, and FC-23's missing warning
    assert "FC-22: the peer agrees with no reading of the draft" in ran.stdout
    assert "FC-23: the peer agrees with no reading of the draft" in ran.stdout
    assert '"content":null' in ran.stdout


def test_knob_table_statuses():
    from counterexamples.peers.classify import Classification
    from counterexamples.peers.adapter import Reply
    from counterexamples.peers.check import TraceResult
    t = PeerTrace.of("t", [RUN])

    def result(name, matches, kind="reading"):
        return TraceResult(PeerTrace(name, t.wire, t.events), Reply("ok", {}),
                           Classification(kind, matches=matches))

    table = {k.knob: k for k in knob_table([
        result("a", [{"Q1": "merge"}]),
        result("b", [{"Q1": "merge"}, {"Q1": "ignore"}]),  # both options fit: no evidence
        result("c", [{"Q7": "apply"}, {"Q7": "skip"}]),
        result("g", [{"Q5": "skip"}, {"Q5": "skip", "Q6": "merge"}]),
        result("d", [{"Q9": "skip"}]), result("e", [{"Q9": "replace"}]),
        result("f", [{"Q13": "fatal"}], kind="divergence"),  # says nothing
    ])}
    assert (table["Q1"].status, table["Q1"].behaves_as, list(table["Q1"].evidence)) == \
        ("determined", "merge", ["a"])
    assert (table["Q5"].status, table["Q5"].options) == ("determined", ["skip"])
    assert (table["Q7"].status, table["Q7"].options) == ("undetermined", ["apply", "skip"])
    assert (table["Q9"].status, table["Q9"].options) == ("inconsistent", [])
    assert table["Q13"].status == "no-evidence"


@needs_node
@pytest.mark.parametrize("mode", ["reducer", "pipeline"])
def test_recorded_peer_behaviour_matches_what_the_adapter_shows(mode):
    """``model.readings.KNOBS[*].peers`` gives what ``peer options`` recorded
    (``model/data/peer_options.json``); the corpus and the probes must never contradict it (a
    knob they separate is determined as recorded)."""
    from model.readings import KNOBS
    name = f"@ag-ui/client 1.0.0 {mode}"
    report = check(f"ag-ui-client:{mode}", corpus_traces() + probe_traces())
    table = {k.knob: k for k in report.knobs}
    recorded = {k.id: dict(k.peers)[name] for k in KNOBS if name in dict(k.peers)}
    # every consumer knob but Q2 (no trace separates it in the draft's context), less the
    # reducer's Q4-opener and Q21 (it never fails a run) and the pipeline's Q15 (it diverges)
    assert len(recorded) == (19 if mode == "reducer" else 20)
    determined = 0
    for knob, option in recorded.items():
        seen = table[knob]
        assert seen.status in ("determined", "no-evidence", "undetermined"), (knob, seen)
        if seen.status == "determined":
            assert seen.behaves_as == option, knob
            determined += 1
        elif seen.status == "undetermined":
            assert option in seen.options, knob
    # jointly (issue 20) Q10 and Q6-ms are determined although no single trace separates them
    # (AMB-Q10 also fits Q8=keep,Q11=move; Q6-ms's witness Q19=catch-all), and the X1 probe
    # tells drop-open from drop
    assert determined == len(recorded)
    assert table["Q10"].behaves_as == "held" and table["Q6-ms"].behaves_as == "replace"
    assert table["X1"].behaves_as == ("drop" if mode == "reducer" else "drop-open")


# --- budgets, unshrunk exports, process groups, --fail-on (review of issue 6) -------------------

OVERWRITE = (
    "import json, sys\n"
    "from counterexamples.peers.model_adapter import answer\n"
    "for line in sys.stdin:\n"
    "    r = json.loads(line)\n"
    "    events = [dict(e) for e in r['events']]\n"
    "    for e in events:\n"
    "        if e.get('type') == 'ACTIVITY_SNAPSHOT' and e.get('replace') is False:\n"
    "            e.pop('replace')\n"
    "    out = answer({'id': r['id'], 'events': events})\n"
    "    print(json.dumps(out), flush=True)\n")
"""A peer that treats ``replace: false`` like a replacing snapshot: it diverges on probe-Q3."""


def _overwrite(tmp_path: Path) -> str:
    script = tmp_path / "overwrite.py"
    script.write_text(OVERWRITE)
    return f"{PY} {script}"


def test_search_checks_corpus_and_probes_first_and_exports_unshrunk_when_the_budget_ends(
        tmp_path, monkeypatch):
    """With the budget already spent, the corpus and probes are still checked, nothing is
    generated, and the divergence (probe-Q3) is exported unshrunk; the report says the budget
    stopped it."""
    import time
    import counterexamples.peers.search as peer_search
    monkeypatch.setattr(peer_search, "CORPUS_SLACK", 60.0)  # a loaded test machine is slow
    with AdapterProcess(resolve_adapter(_overwrite(tmp_path))) as adapter:
        report = search_peer(adapter, seed=0, stateful=20, bfs_depth=2,
                             deadline=time.monotonic())
    ids = [r.trace.id for r in report.results]
    assert ids == [t.id for t in corpus_traces() + probe_traces()]
    assert report.stopped_by == "budget"
    summary = report.to_json()
    assert summary["stoppedBy"] == "budget" and summary["checked"] == len(ids)
    assert summary["generated"]["stateful"] == 0 and summary["generated"]["bfs"] == 0
    divergent = [r for r in report.results if r.classification.kind == "divergence"]
    assert divergent and all(r.finding in report.findings for r in divergent)
    assert [d["shrunk"] for d in summary["divergences"]] == [False] * len(summary["divergences"])
    q3 = next(r for r in report.results if r.trace.id == "probe-Q3")
    finding = report.findings[q3.finding]
    assert finding["shrunk"] is False and finding["events"] == list(q3.trace.wire)


def test_cli_search_budget_report_says_the_budget_stopped_it(tmp_path, capsys):
    argv = ["peer", "search", "--adapter", _overwrite(tmp_path), "--budget", "0.01",
            "--examples", "400", "--bfs-depth", "4"]
    assert main(argv + ["--json", "--out", str(tmp_path / "out")]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["stoppedBy"] == "budget"
    assert report["checked"] == report["counts"]["traces"] >= 42
    assert report["counts"]["divergence"] >= 1 and report["divergences"]
    assert all(d["files"] for d in report["divergences"])
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert "stopped by the budget" in text and "checked: " in text
    assert "no usable answer" not in text


@needs_node
def test_reducer_search_with_a_short_budget_still_exports_the_fc22_divergence(tmp_path, capsys):
    assert main(["peer", "search", "--adapter", "ag-ui-client:reducer", "--budget", "8",
                 "--json", "--out", str(tmp_path / "out")]) == 0
    report = json.loads(capsys.readouterr().out)
    fc22 = next(t for t in report["traces"] if t["id"] == "FC-22")
    assert fc22["class"] == "divergence" and fc22["finding"]
    assert fc22["finding"] in {d["id"] for d in report["divergences"]}
    assert report["checked"] >= 42


def test_check_no_shrink_exports_every_divergence_unshrunk(tmp_path, capsys):
    a = [RUN, snap("x", {"k": 1}), snap("x", {"k": 2}, replace=False), END]
    b = [RUN, snap("y", {"k": 1}), snap("y", {"k": 3}, replace=False, metadata={"m": 1})]
    files = [str(_write(tmp_path / "a.jsonl", a)), str(_write(tmp_path / "b.jsonl", b))]
    out = tmp_path / "out"
    assert main(["peer", "check", "--adapter", _overwrite(tmp_path), "--no-shrink", "--json",
                 "--out", str(out), *files]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["counts"]["divergence"] == 2
    assert len(report["divergences"]) == 2
    assert all(not d["shrunk"] for d in report["divergences"])
    by_source = {d["source"]: d for d in report["divergences"]}
    for name, events in (("a.jsonl", a), ("b.jsonl", b)):
        finding = json.loads((out / by_source[name]["files"][0]).read_text())
        assert finding["events"] == events and finding["shrunk"] is False
        assert finding["divergesAt"] == 2


def test_a_hung_adapter_cannot_outlast_the_budget(tmp_path, capsys):
    import time
    script = tmp_path / "hang.py"
    script.write_text("import sys, time\nsys.stdin.readline()\ntime.sleep(1000)\n")
    began = time.monotonic()
    assert main(["peer", "search", "--adapter", f"{PY} {script}", "--budget", "2",
                 "--timeout", "30", "--json"]) == 0
    took = time.monotonic() - began
    report = json.loads(capsys.readouterr().out)
    # the corpus and probes it could not answer are errors (so --fail-on error catches it)
    base = len(corpus_traces()) + len(probe_traces())
    assert report["stoppedBy"] == "budget" and report["counts"]["traces"] == base
    assert report["counts"]["error"] == base
    assert took < 2 + 5, took  # the corpus slack (3 s) and closing


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_close_ends_processes_the_adapter_left_behind(tmp_path):
    import time
    pidfile = tmp_path / "child.pid"
    script = tmp_path / "spawner.py"
    script.write_text(
        "import json, subprocess, sys\n"
        "from counterexamples.peers.model_adapter import answer\n"
        f"child = subprocess.Popen(['sleep', '1000'])\n"
        f"open({str(pidfile)!r}, 'w').write(str(child.pid))\n"
        "for line in sys.stdin:\n"
        "    print(json.dumps(answer(json.loads(line))), flush=True)\n")
    report = check(f"{PY} {script}", [PeerTrace.of("t", [RUN, snap(), END])])
    assert classes(report) == {"t": "draft"}
    pid = int(pidfile.read_text())
    for _ in range(40):
        if not _alive(pid):
            break
        time.sleep(0.05)
    assert not _alive(pid)


def test_fail_on_gates_the_exit_code(tmp_path, capsys):
    trace = str(_write(tmp_path / "a.jsonl", [RUN, snap("x"), snap("x", {"n": 2},
                                                                    replace=False)]))
    peer = _overwrite(tmp_path)
    base = ["peer", "check", "--adapter", peer, "--no-shrink", trace]
    assert main(base) == 0
    assert main(base + ["--fail-on", "divergence"]) == 1
    assert main(base + ["--fail-on", "any"]) == 1
    assert main(base + ["--fail-on", "error"]) == 0
    assert main(["peer", "check", "--adapter", "model", trace, "--fail-on", "any"]) == 0
    capsys.readouterr()
    assert main(base + ["--fail-on", "bogus"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("activity-check: error:") and err.count("\n") == 1


def test_search_output_is_byte_identical_across_runs_and_hash_seeds(tmp_path):
    """Without a time budget the output depends only on the seed and the peer."""
    argv = [PY, "-c", "import sys; from activity_check.cli import main; sys.exit(main())",
            "peer", "search", "--adapter", _overwrite(tmp_path), "--examples", "20",
            "--bfs-depth", "2", "--budget", "inf", "--json", "--seed", "3"]
    outs = []
    for hash_seed, out in (("1", "a"), ("987", "b")):
        env = dict(os.environ, PYTHONHASHSEED=hash_seed)
        done = subprocess.run(argv + ["--out", str(tmp_path / out)], env=env,
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        outs.append(done.stdout)
    assert outs[0] == outs[1] and json.loads(outs[0])["divergences"]
    for path in sorted((tmp_path / "a").rglob("*")):
        if path.is_file():
            assert path.read_bytes() == (tmp_path / "b" / path.relative_to(tmp_path / "a")
                                         ).read_bytes()


# --- peers that answer badly or slowly, long divergent traces (issue 18) -------------------------
#
# * An answer that is not strict JSON (a 5,000-digit integer, NaN, 100,000-deep nesting) costs
#   that trace a ``bad-response``, never a traceback; markup and escape sequences in an answer are
#   data (shown escaped, compared as values).
# * ``"fatal": {}`` is a failure: the protocol's "otherwise an object" (docs/peers.md,
#   "Adapter protocol") says the run failed, without saying where, as ``true`` does.
# * An adapter that never reads its stdin cannot block a request past ``--timeout``.
# * Divergences are located by bisection of the prefixes and shrunk to a fixpoint: FC-24 through a
#   peer that ignores ``replace: false`` shrinks to the 3 events that show it.

BAD_ADAPTER = r'''
import json, sys, time
mode = sys.argv[1]
if mode == "no-read":
    time.sleep(3600)
for line in sys.stdin:
    rid = json.loads(line)["id"]
    head = '{"id": %s, "messages": [], "fatal": null' % json.dumps(rid)
    if mode == "bigint":
        out = head + ', "state": {"n": ' + "9" * 5000 + '}}'
    elif mode == "nan":
        out = head + ', "state": {"n": NaN}}'
    elif mode == "deep":
        out = head + ', "state": ' + "[" * 100000 + "]" * 100000 + '}'
    elif mode == "bad-id":
        out = json.dumps({"id": rid, "messages": [{"id": ["x"], "role": "user"}], "fatal": None})
    elif mode == "fatal-false":
        out = json.dumps({"id": rid, "messages": [], "fatal": False})
    elif mode == "markup":
        out = json.dumps({"id": rid, "messages": [
            {"id": "[/]", "role": "activity", "activityType": "[link=https://e.example/]x\u001b[2J",
             "content": {"[/]": "\u001b]0;t\u0007"}}], "fatal": None,
            "peer": "[/]\u001b]0;t\u0007 peer"})
    elif mode == "fatal-empty":
        out = json.dumps({"id": rid, "messages": [], "fatal": {}})
    elif mode in ("fatal-before", "fatal-after"):
        at = -1 if mode == "fatal-before" else len(json.loads(line)["events"])
        out = json.dumps({"id": rid, "messages": [], "fatal": {"atEvent": at}})
    elif mode == "warning-after":
        at = len(json.loads(line)["events"])
        out = json.dumps({"id": rid, "messages": [], "fatal": None, "warnings": [
            {"code": "ACTIVITY_PATCH_FAILED", "messageId": "a", "atEvent": at}]})
    print(out, flush=True)
'''


@pytest.fixture
def bad_adapter(tmp_path) -> Path:
    path = tmp_path / "bad_adapter.py"
    path.write_text(BAD_ADAPTER, encoding="utf-8")
    return path


def write_trace(path: Path, events) -> Path:
    path.write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")
    return path


def cli(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("mode, words", [
    ("bigint", "number is too long"), ("nan", "NaN is not a JSON value"),
    ("deep", "nested"), ("bad-id", "string 'id'"), ("fatal-false", "'fatal' must be null"),
    ("fatal-before", '{"atEvent": -1} is not valid'),
    ("fatal-after", "'fatal.atEvent' is 1, not an index"),
    ("warning-after", "'warnings.0.atEvent' is 1, not an index"),
])
def test_an_answer_that_is_not_usable_json_is_a_bad_response_for_that_trace(
        tmp_path, capsys, bad_adapter, mode, words):
    traces = [write_trace(tmp_path / f"t{i}.jsonl", [RUN]) for i in range(2)]
    code, out, err = cli(capsys, "peer", "check", "--adapter", f"{PY} {bad_adapter} {mode}",
                         "--json", *traces)
    assert code == 0 and err == "", err
    report = json.loads(out)
    assert report["counts"]["error"] == 2
    for row in report["traces"]:
        assert row["class"] == "error" and row["error"].startswith("bad-response: "), row
        assert words in row["error"], row["error"]
    code, out, err = cli(capsys, "peer", "check", "--adapter", f"{PY} {bad_adapter} {mode}",
                         "--fail-on", "error", *traces)
    assert code == 1 and "Traceback" not in err and "bad-response" in out


def test_markup_and_escapes_in_an_answer_are_data(tmp_path, capsys, bad_adapter):
    trace = write_trace(tmp_path / "t.jsonl", [RUN])
    code, out, err = cli(capsys, "peer", "check", "--adapter", f"{PY} {bad_adapter} markup",
                         "--out", tmp_path / "out", trace)
    assert code == 0, err
    for ch in ("\x1b", "\x07"):
        assert ch not in out
    assert "[/]\\x1b]0;t\\x07 peer" in out  # the peer's name, shown as written
    (finding_file,) = (tmp_path / "out" / "findings").glob("*.json")
    finding = json.loads(finding_file.read_text(encoding="utf-8"))
    assert finding["peerVerdict"]["messages"][0]["id"] == "[/]"  # kept whole in the JSON
    assert finding["peer"] == "[/]\x1b]0;t\x07 peer"


def test_fatal_as_an_empty_object_is_a_failure(tmp_path, capsys, bad_adapter):
    """``{}``: the run failed, where is not said. On a trace the model fails too (a malformed
    event) the peer agrees; on one the model accepts it diverges on ``fatal``."""
    ok = write_trace(tmp_path / "ok.jsonl", [RUN])
    broken = write_trace(tmp_path / "broken.jsonl", [RUN, {"type": "ACTIVITY_SNAPSHOT",
                                                            "messageId": "a"}])
    code, out, _ = cli(capsys, "peer", "check", "--adapter", f"{PY} {bad_adapter} fatal-empty",
                       "--json", "--no-shrink", ok, broken)
    assert code == 0
    report = json.loads(out)
    rows = {r["id"]: r for r in report["traces"]}
    assert rows["ok.jsonl"]["class"] == "divergence"
    assert "fatal" in rows["ok.jsonl"]["differsFromNearest"]
    assert rows["broken.jsonl"]["class"] in ("draft", "reading")
    assert "fatal (yes/no)" in report["compared"]


def test_an_adapter_that_never_reads_cannot_block_past_the_timeout(bad_adapter):
    """A 10 MB request fills the pipe of an adapter that reads nothing: the write goes on in
    the writer thread, and the answer's timeout ends the wait."""
    spec = resolve_adapter(f"{PY} {bad_adapter} no-read")
    big = [RUN, {"type": "ACTIVITY_SNAPSHOT", "messageId": "a", "activityType": "T",
                 "content": {"blob": "x" * 10_000_000}}]
    started = time.monotonic()
    with AdapterProcess(spec, timeout=1.0, start_grace=0.5) as adapter:
        reply = adapter.request(big, None, "big")
    seconds = time.monotonic() - started
    assert reply.kind == "timeout", reply
    assert seconds < 15, seconds


def test_peer_check_of_a_huge_trace_with_an_adapter_that_never_reads_ends(tmp_path, capsys,
                                                                           bad_adapter):
    big = write_trace(tmp_path / "big.jsonl", [RUN, {
        "type": "ACTIVITY_SNAPSHOT", "messageId": "a", "activityType": "T",
        "content": {"blob": "x" * 10_000_000}}])
    started = time.monotonic()
    code, out, err = cli(capsys, "peer", "check", "--adapter", f"{PY} {bad_adapter} no-read",
                         "--timeout", "1", "--json", big)
    assert code == 0, err
    assert json.loads(out)["traces"][0]["error"].startswith("timeout")
    assert time.monotonic() - started < 60


# --- locating and shrinking ---------------------------------------------------------------------

def fc24() -> list[dict]:
    from counterexamples.field_cases import load_cases
    (case,) = [c for c in load_cases() if c.id == "FC-24"]
    assert len(case.events) == 8
    return list(case.events)


def test_fc24_through_a_peer_that_ignores_replace_false_shrinks_to_three_events(tmp_path,
                                                                               capsys):
    trace = write_trace(tmp_path / "FC-24.jsonl", fc24())
    code, out, err = cli(capsys, "peer", "check", "--adapter", _overwrite(tmp_path), "--json",
                         "--out", tmp_path / "out", trace)
    assert code == 0, err
    (div,) = json.loads(out)["divergences"]
    assert div["shrunk"] and div["length"] - div["closing"] == 3 and div["divergesAt"] == 2
    finding = json.loads((tmp_path / "out" / div["files"][0]).read_text(encoding="utf-8"))
    assert [e["type"] for e in _core(finding)] == ["RUN_STARTED", "ACTIVITY_SNAPSHOT",
                                                   "ACTIVITY_SNAPSHOT"]
    assert finding["events"][2]["replace"] is False
    assert finding["events"][1]["content"] != finding["events"][2]["content"]


class CountingAdapter:
    """Stands in for an :class:`AdapterProcess`: answers as the model under draft, except that
    from event ``diverge_at`` on it reports no messages at all, and counts the prefixes put to
    it and the batches."""

    def __init__(self, diverge_at: int):
        self.diverge_at = diverge_at
        self.prefixes = 0
        self.batches = 0

    def request_many(self, items):
        from counterexamples.peers.model_adapter import answer
        self.batches += 1
        replies = []
        for events, state, label in items:
            self.prefixes += 1
            response = answer({"id": label, "events": list(events)})
            if len(events) > self.diverge_at:
                response["messages"] = []
            replies.append(Reply("ok", response=response))
        return replies


def long_trace(n: int) -> list[dict]:
    wire = [RUN]
    for i in range(n - 1):
        wire.append({"type": "ACTIVITY_SNAPSHOT", "messageId": f"a{i}", "activityType": "T",
                     "content": {"n": i}})
    return wire


@pytest.mark.parametrize("diverge_at", [1, 2, 15, 16, 17, 499, 750, 999])
def test_the_first_divergent_event_is_found_by_bisection(diverge_at):
    """A 1,000-event trace (more than PREFIX_SAMPLES squared, so three rounds, as for 2,000)
    diverging at its ends, at the edges of a round's samples and in its middle: the first
    divergent event is found in at most three batches."""
    wire = long_trace(1000)
    trace = PeerTrace("long", tuple(wire), parse_events(wire))
    adapter = CountingAdapter(diverge_at)
    index, classification = first_divergence(adapter, trace)
    assert index == diverge_at and classification.kind == "divergence"
    assert adapter.batches <= 3 and adapter.prefixes <= 3 * peer_divergence.PREFIX_SAMPLES, (
        adapter.batches, adapter.prefixes)


def test_a_short_trace_has_every_prefix_run_in_one_batch():
    wire = long_trace(10)
    trace = PeerTrace("short", tuple(wire), parse_events(wire))
    adapter = CountingAdapter(4)
    assert first_divergence(adapter, trace)[0] == 4
    assert (adapter.batches, adapter.prefixes) == (1, 10)
    assert first_divergence(CountingAdapter(99), trace) is None


def test_a_long_divergent_trace_shrinks_in_seconds(tmp_path, capsys):
    """600 events, the divergence in the middle (it took minutes when every prefix was run
    for every candidate)."""
    wire = long_trace(300)
    wire.append({"type": "ACTIVITY_SNAPSHOT", "messageId": "a5", "activityType": "T",
                 "content": {"n": "x"}, "replace": False})
    wire += [{"type": "ACTIVITY_DELTA", "messageId": f"a{i % 200}", "activityType": "T",
              "patch": [{"op": "add", "path": "/m", "value": i}]} for i in range(299)]
    assert len(wire) == 600
    trace = write_trace(tmp_path / "long.jsonl", wire)
    started = time.monotonic()
    code, out, err = cli(capsys, "peer", "check", "--adapter", _overwrite(tmp_path), "--json",
                         trace)
    seconds = time.monotonic() - started
    assert code == 0, err
    (div,) = json.loads(out)["divergences"]
    assert div["length"] - div["closing"] == 3 and div["shrunk"]
    assert seconds < 60, seconds


# --- issue 20: sharper comparison -----------------------------------------------------------------

def test_joint_inference_determines_a_knob_no_single_trace_separates():
    """The @ag-ui/client Q10 case: one trace is explained by Q8=self-revoking with Q10=held, or
    by Q8=keep with Q11=move; another fixes Q8=self-revoking; jointly Q10=held."""
    from counterexamples.peers.classify import joint_readings
    evidence = [("a", [{"Q8": "self-revoking", "Q10": "held"}, {"Q8": "keep", "Q11": "move"}]),
                ("b", [{"Q8": "self-revoking"}]),
                ("any", [{}]),  # agrees with every reading: says nothing
                ("c", [{"Q8": "keep"}])]  # against b: set aside
    joint = joint_readings(evidence)
    assert joint.options("Q10") == ["held"] and joint.options("Q8") == ["self-revoking"]
    assert joint.options("Q11") == ["in-place", "move"] or len(joint.options("Q11")) > 1
    assert joint.conflicts == ["c"] and joint.taken == 2
    assert joint.assignments == [{"Q8": "self-revoking", "Q10": "held"}]
    assert joint.narrowed["Q10"] == {"b": ["held"]}
    assert joint.consistent({"Q10": "held"}) and not joint.consistent({"Q8": "keep"})
    # options that together cover a knob merge away: no constraint
    from model.readings import KNOB_BY_ID
    every = [{"Q1": o} for o in KNOB_BY_ID["Q1"].option_names]
    assert joint_readings([("x", every)]).assignments == [{}]
    # the result does not depend on the order alternatives are listed in
    flipped = [(t, list(reversed(m))) for t, m in evidence]
    assert joint_readings(flipped).to_json() == joint.to_json()


CAUSE_AND_METADATA = (
    "import json, sys\n"
    "from counterexamples.peers.model_adapter import answer\n"
    "for line in sys.stdin:\n"
    "    out = answer(json.loads(line))\n"
    "    for m in out.get('messages', []):\n"
    "        if m.get('metadata'):\n"
    "            m['metadata'] = {'lost': True}\n"
    "    if out.get('fatal'):\n"
    "        out['fatal']['code'] = 'STREAM_NOT_STARTED'\n"
    "    print(json.dumps(out), flush=True)\n")
"""A peer that follows draft but garbles metadata, and names the wrong cause when it fails."""


def test_each_divergent_part_gets_its_own_shrunk_witness_and_the_cause_is_compared(
        tmp_path, capsys):
    script = tmp_path / "two_faults.py"
    script.write_text(CAUSE_AND_METADATA)
    malformed = {"type": "ACTIVITY_SNAPSHOT", "messageId": "act-2", "activityType": 7,
                 "content": {}}
    trace = _write(tmp_path / "both.jsonl", [RUN, snap(metadata={"k": 1}), delta(), malformed])
    assert main(["peer", "check", "--adapter", f"{PY} {script}", "--json",
                 str(trace)]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["compared"][1] == "fatal (with atEvent, code, clause)"
    (row,) = report["traces"]
    assert row["class"] == "divergence" and len(row["findings"]) == 2
    by_part = {tuple(d["divergesIn"]): d for d in report["divergences"]}
    assert set(by_part) == {("messages",), ("fatal",)}
    # the metadata witness needs no failure, the cause's witness no metadata
    assert by_part[("messages",)]["length"] - by_part[("messages",)]["closing"] == 2
    assert by_part[("messages",)]["aspects"] == ["messages.metadata"]
    assert by_part[("fatal",)]["aspects"] == ["fatal"]
    assert by_part[("fatal",)]["branch"] == "malformed.fatal"
    assert by_part[("fatal",)]["length"] == 1  # the malformed event alone
    assert report["firstDivergence"] == {"traces": 1}


def test_peer_check_skips_an_unreadable_trace_file_and_exits_2(tmp_path, capsys):
    good = _write(tmp_path / "good.jsonl", [RUN, snap()])
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(RUN) + "\n" + json.dumps({"type": "ACTIVITY_SNAPSHOT"})[:-1] + "\n")
    code = main(["peer", "check", "--adapter", "model", "--json", str(good), str(bad)])
    out, err = capsys.readouterr()
    assert code == 2
    report = json.loads(out)
    assert report["counts"]["traces"] == 1 and report["counts"]["draft"] == 1
    (skipped,) = report["skipped"]
    assert "bad.jsonl" in skipped and ":2" in skipped
    assert err.count("\n") == 1 and "skipped" in err and "bad.jsonl" in err
    # every file unreadable: nothing to check, one line
    assert main(["peer", "check", "--adapter", "model", str(bad)]) == 2
    assert "bad.jsonl" in capsys.readouterr().err


def test_peer_search_vocabulary_and_coverage(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text('{"activityIds": ["a", "a"]}')
    assert main(["peer", "search", "--adapter", "model", "--vocabulary", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "bad.json" in err and "activityIds[1]" in err
    vocabulary = tmp_path / "v.json"
    vocabulary.write_text('{"activityIds": ["zz-1", "zz-2"]}')
    assert main(["peer", "search", "--adapter", "model", "--budget", "inf", "--examples", "6",
                 "--bfs-depth", "2", "--vocabulary", str(vocabulary), "--coverage",
                 "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["counts"]["divergence"] == 0 and report["firstDivergence"] is None
    traces, _ = generated_traces(0, 6, 2, vocabulary=None)
    assert not any("zz-1" in json.dumps(t.wire) for t in traces)
    from counterexamples.peers.generate import generation_parts
    from model.producer import DEFAULT_VOCABULARY, load_vocabulary
    from properties.search.explore import EXPLORE_VOCABULARY
    v = json.loads(vocabulary.read_text())
    parts = list(generation_parts(0, 6, 2, vocabulary=load_vocabulary(v, DEFAULT_VOCABULARY),
                                  bfs_vocabulary=load_vocabulary(v, EXPLORE_VOCABULARY)))
    generated = [t for part, _ in parts[1:] for t in part]
    uses = sum("zz-1" in json.dumps(t.wire) for t in generated)
    assert uses > sum('"act-1"' in json.dumps(t.wire) for t in generated) and uses >= 10
    coverage = report["coverage"]
    assert coverage["traces"] == report["counts"]["traces"] - sum(
        1 for t in corpus_traces() if t.state is not None)
    branch = coverage["dimensions"]["branch"]
    assert "delta.not-activity" in branch["counts"]  # a probe aims a delta at a text message


def test_the_probes_reach_every_branch_a_consumer_can_meet():
    """The hand-written probes (with the corpus) reach the branches, codes and producer
    violations the generators rarely draw (issue 20)."""
    from properties.coverage import coverage_of, report as coverage_report
    doc = coverage_report(coverage_of(t.events for t in probe_traces()))
    hit = {d: set(v["counts"]) for d, v in doc["dimensions"].items()}
    assert {"delta.not-activity", "delta.owner-ended", "step.unbalanced", "malformed.fatal",
            "text.target-missing", "lifecycle.open-at-finish"} <= hit["branch"]
    assert {"ACTIVITY_DELTA_TARGET_NOT_ACTIVITY", "ACTIVITY_OWNER_ENDED", "MALFORMED_EVENT",
            "TOOL_CALL_TARGET_MISSING", "STEP_ALREADY_OPEN"} <= hit["code"]
    assert {"subagent-started-twice", "step-opened-twice", "step-owner-disagrees",
            "step-open-at-finish", "tool-call-started-twice", "tool-owner-disagrees",
            "activity-in-echo"} <= hit["violation"]
    assert {"Q15=live", "Q15=closed", "Q17=as-received", "Q17=strip-echo"} <= hit["knob"]


def test_a_divergence_on_a_branch_without_clauses_says_so():
    """A finding whose branch no clause is tied to (an event after the stream halted, say)
    names that in words, not an empty list ("clauses ;")."""
    from rich.console import Console
    from activity_check.cmd_peer import _print_divergences
    con = Console(record=True, width=200)
    divergence = {"id": "PEER-x-0001", "shrunk": True, "clauses": [], "relatedClauses": [],
                  "divergesAt": 2, "event": "ACTIVITY_SNAPSHOT act-1",
                  "branch": "lifecycle.halted", "nearest": "(any reading)",
                  "aspects": ["messages.extra"]}
    _print_divergences(con, [divergence], None)
    text = con.export_text()
    assert "clauses none (no clause is tied to this branch); differs" in text, text
    assert "clauses ;" not in text


FORKS_AND_EXITS = r'''
import subprocess, sys, time
subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])  # holds our stdout
sys.exit(3)
'''


def test_an_adapter_that_exits_leaving_its_output_held_is_a_crash_at_once(tmp_path, capsys):
    """An adapter that exits while a process it started keeps its standard output open gives no
    end of file: it was taken for a hang (each request waited the whole timeout, "no answer
    within"), and is now a crash with its exit status within about a second."""
    script = tmp_path / "forks.py"
    script.write_text(FORKS_AND_EXITS)
    trace = write_trace(tmp_path / "t.jsonl", [RUN])
    started = time.monotonic()
    code, out, err = cli(capsys, "peer", "check", "--adapter", f"{PY} {script}", "--timeout",
                         "30", "--json", trace)
    assert code == 0, err
    (row,) = json.loads(out)["traces"]
    assert row["error"].startswith("crash: the adapter stopped (exit status 3) before "
                                   "answering; a process it started still holds its output")
    assert time.monotonic() - started < 25  # not the 30-s timeout of each of the tries


def test_fail_on_deviation_gates_a_peer_that_matches_only_through_one(tmp_path, capsys):
    """A peer that agrees with the model only under a deviation (Q18=schema, against
    ACT-SNAP-REPLACE-FALSE) is reported not conformant: ``--fail-on deviation`` (and ``any``)
    exit 1 on it; the model itself passes both."""
    code, out, _ = cli(capsys, "peer", "check", "--adapter", "model:Q18=schema", "--json")
    assert code == 0 and json.loads(out)["counts"]["deviation"] >= 1
    for gate in ("deviation", "any"):
        assert cli(capsys, "peer", "check", "--adapter", "model:Q18=schema", "--fail-on",
                   gate)[0] == 1
        assert cli(capsys, "peer", "check", "--adapter", "model", "--fail-on", gate)[0] == 0


def test_every_trace_the_summary_names_by_id_is_written(tmp_path, capsys):
    """``peer search --out``: every trace put to the peer, generated ones that exist nowhere
    else (``stateful-18``, the probes) included, is written to ``traces/<id>.jsonl`` and
    listed (``traceFiles``, ``files``), so that every id the summary names resolves (the
    traces, the conflicts, the knobs' evidence, each divergence's source); they replay, and
    a rerun that reads them from the directory it would replace is refused."""
    out = tmp_path / "o"
    code, text, err = cli(capsys, "peer", "search", "--adapter", _overwrite(tmp_path),
                          "--seed", "0", "--examples", "20", "--bfs-depth", "2", "--budget",
                          "inf", "--out", out)
    assert code == 0, err
    assert f"written to {out}/peer-summary.json, {out}/findings/ and {out}/traces/" in \
        " ".join(text.split())  # folded within 120 columns
    summary = json.loads((out / "peer-summary.json").read_text())
    named = [t["id"] for t in summary["traces"]] + list(summary["readings"]["conflicts"]) + \
        [d["source"] for d in summary["divergences"]] + \
        [e for k in summary["knobs"] for e in k.get("evidence", [])]
    assert summary["divergences"] and any(k.get("evidence") for k in summary["knobs"])
    assert set(named) == set(summary["traceFiles"])
    assert [t["id"] for t in summary["traces"]] == list(summary["traceFiles"])
    for tid, rel in summary["traceFiles"].items():
        assert rel in (f"traces/{tid}.jsonl", f"traces/{tid}.json") and rel in summary["files"]
        assert (out / rel).is_file()
    # a field case that starts from an agent state keeps it beside its events
    stated = json.loads((out / summary["traceFiles"]["FC-26"]).read_text())
    assert set(stated) == {"id", "initialState", "events"} and stated["id"] == "FC-26"
    # the files read back as the traces they are (a field case's malformed event included)
    code, again, err = cli(capsys, "peer", "check", "--adapter", "model", out / "traces",
                           "--json")
    assert code == 0, err
    assert json.loads(again)["counts"]["traces"] == len(summary["traceFiles"])
    # traces read from the user's own files are not copied into an output
    code, _, err = cli(capsys, "peer", "check", "--adapter", "model", out / "traces", "--out",
                       tmp_path / "again")
    assert code == 0, err
    assert json.loads((tmp_path / "again" / "peer-summary.json").read_text())["traceFiles"] == {}
    assert main(["replay", str(out / summary["traceFiles"]["stateful-1"]), "--json"]) == 0
    capsys.readouterr()
    before = sorted(p.name for p in out.rglob("*"))
    code, _, err = cli(capsys, "peer", "check", "--adapter", _overwrite(tmp_path),
                       out / "traces", "--out", out)
    assert code == 2 and "is read as input and the output replaces it there" in err
    assert sorted(p.name for p in out.rglob("*")) == before
