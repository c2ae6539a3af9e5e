"""The producer matrix (issue 42 item 2): real producers driven offline, each stream linted.
The scripts' tests skip, saying why, when Node, the producers' packages or .venv-producers are
missing (``make peers``, ``make producers-venv``)."""
from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from counterexamples.peers import producers as P

SCHEMA = json.loads((Path(P.__file__).parent.parent / "schemas" /
                     "producers.schema.json").read_text())
RS = {"type": "RUN_STARTED", "threadId": "t1", "runId": "r1"}
RF = {"type": "RUN_FINISHED", "threadId": "t1", "runId": "r1"}
SNAP = {"type": "ACTIVITY_SNAPSHOT", "messageId": "a1", "activityType": "PLAN",
        "content": {"n": 0}}
LATE = P.ProducerStream("p", "1.0", "late", "an event after RUN_ERROR", (
    RS, SNAP, {"type": "RUN_ERROR", "message": "x"}, {"type": "CUSTOM", "name": "s", "value": 1}))
CLEAN = P.ProducerStream("p", "1.0", "clean", "a snapshot in a run", (RS, SNAP, RF))


def test_a_violation_is_the_producers_fault_only_once_checked_by_hand():
    row = P.judge_stream(LATE, checks={})
    assert row["verdict"] == "not conformant"
    assert [(v["clause"], v["eventIndex"], v["check"]) for v in row["violations"]] == [
        ("LIF-AFTER-CLOSE", 3, None)]
    checked = {("p", "late", "LIF-AFTER-CLOSE", 3): {"fault": "producer", "how": "read it"}}
    row = P.judge_stream(LATE, checks=checked)
    assert row["violations"][0]["check"] == {"fault": "producer", "how": "read it"}
    page = P.render_producers_markdown(P.build_producer_matrix([LATE], checks=checked))
    assert "LIF-AFTER-CLOSE (error)" in page and "the producer's fault: read it" in page
    unchecked = P.render_producers_markdown(P.build_producer_matrix([LATE], checks={}))
    assert "not yet checked by hand" in unchecked


def test_the_document_matches_its_schema_and_counts_verdicts():
    doc = P.build_producer_matrix([CLEAN, LATE], [("x", "not here")], checks={})
    jsonschema.validate(doc, SCHEMA)
    assert doc["counts"] == {"conformant": 1, "not conformant": 1}
    assert doc["producers"] == [{"producer": "p", "version": "1.0", "streams": 2}]
    assert doc["streams"][0]["file"] == "producers/p--clean.jsonl"


def test_every_hand_check_names_a_known_fault():
    for check in json.loads(Path(P.CHECKS_PATH).read_text())["checks"]:
        assert check["fault"] in ("producer", "scenario", "lint") and check["how"]


def _streams(script: P.ProducerScript) -> list[P.ProducerStream]:
    reason = P.script_ready(script)
    if reason:
        pytest.skip(f"{script.name}: {reason}")
    streams, skipped = P.run_producer_scripts([script], timeout=120)
    assert skipped == []
    return streams


def test_node_middlewares_write_their_activities():
    streams = {(s.producer, s.scenario): s for s in _streams(P.PRODUCER_SCRIPTS[0])}
    assert len(streams) == 12
    two = streams[("@ag-ui/a2ui-middleware", "two-surfaces-in-a-result")]
    ids = [e["messageId"] for e in two.events if e["type"] == "ACTIVITY_SNAPSHOT"]
    assert ids == ["a2ui-surface-left-tc1", "a2ui-surface-right-tc1"]
    mcp = streams[("@ag-ui/mcp-apps-middleware", "ui-tool-call")]
    snap = [e for e in mcp.events if e["type"] == "ACTIVITY_SNAPSHOT"]
    assert len(snap) == 1 and snap[0]["activityType"] == "mcp-apps"
    assert snap[0]["content"]["serverHash"] == "serverhash-canned"
    rows = [P.judge_stream(s, {}) for s in streams.values()]
    assert all(r["verdict"] == "conformant" for r in rows)


def test_mastra_background_tasks_are_activities():
    streams = {s.scenario: s for s in _streams(P.PRODUCER_SCRIPTS[1])}
    assert len(streams) == 5 and {s.producer for s in streams.values()} == {"@ag-ui/mastra"}
    cancelled = [e for e in streams["background-task-cancelled"].events
                 if e["type"].startswith("ACTIVITY_")]
    assert cancelled[0]["activityType"] == "mastra-background-task"
    assert cancelled[-1]["patch"][0] == {"op": "add", "path": "/status", "value": "cancelled"}
    resumed = [e["type"] for e in streams["two-runs-resumed"].events]
    assert resumed.count("ACTIVITY_SNAPSHOT") == 2  # the task restated in the second run
    assert all(P.judge_stream(s, {})["verdict"] == "conformant" for s in streams.values())


def test_pydantic_ai_tools_emit_activity():
    streams = {s.scenario: s for s in _streams(P.PRODUCER_SCRIPTS[2])}
    assert sorted(streams) == ["model-error", "tool-activity", "tool-retry", "two-activities",
                               "two-runs"]
    types = [e["type"] for e in streams["tool-activity"].events]
    assert types[9:12] == ["TOOL_CALL_RESULT", "ACTIVITY_SNAPSHOT", "ACTIVITY_DELTA"]
    assert P.judge_stream(streams["two-runs"], {})["exposure"] == ["Q11"]


def test_agent_framework_writes_an_event_after_run_error():
    streams = {s.scenario: s for s in _streams(P.PRODUCER_SCRIPTS[3])}
    row = P.judge_stream(streams["executor-fails"])
    assert [(v["clause"], v["eventType"], v["check"]["fault"]) for v in row["violations"]] == [
        ("LIF-AFTER-CLOSE", "CUSTOM", "producer")]
    assert P.judge_stream(streams["two-executors"])["verdict"] == "conformant"
