"""Generation reaching what JavaScript consumers get wrong (issue 42 item 5): member names
objects treat specially, and references aimed at an activity; the coverage report counts both,
and the probes carry them to every peer."""
from __future__ import annotations

from counterexamples.peers.generate import PROBES, probe_traces
from properties.coverage import DIMENSIONS, coverage_of, report, universe
from properties.surface import (KEY_UNIVERSE, REF_UNIVERSE, SURFACE_CONTENTS, SURFACE_METADATA,
                                reference_features, special_key_features)
from model.consumer import initial_state
from model.verdict import fold
from model.wire import parse_event


def _events(*wire):
    return [parse_event(w) for w in wire]


RS = {"type": "RUN_STARTED", "threadId": "t1", "runId": "r1"}
SNAP = {"type": "ACTIVITY_SNAPSHOT", "messageId": "act-1", "activityType": "PLAN",
        "content": {"a": {"__proto__": 1}}, "metadata": {"constructor": 2}}


def test_special_keys_are_found_in_each_place():
    snap, delta = _events(SNAP, {"type": "ACTIVITY_DELTA", "messageId": "act-1",
                                 "activityType": "PLAN", "patch": [
                                     {"op": "add", "path": "/prototype/x", "value": 1},
                                     {"op": "move", "from": "/a/__proto__", "path": "/b"},
                                     {"op": "add", "path": "/c", "value": [{"constructor": 1}]}]})
    assert special_key_features(snap) == ["key:content:__proto__", "key:metadata:constructor"]
    assert special_key_features(delta) == ["key:patch-path:__proto__", "key:patch-path:prototype",
                                           "key:patch-value:constructor"]
    # an escaped token is the same name; a key that merely contains one is not
    plain = _events({"type": "ACTIVITY_SNAPSHOT", "messageId": "a", "activityType": "P",
                     "content": {"__proto__x": 1, "Constructor": 2}})[0]
    assert special_key_features(plain) == []


def test_references_count_only_when_aimed_at_a_held_activity():
    events = _events(RS, SNAP, {"type": "TOOL_CALL_START", "toolCallId": "tc-1",
                                "toolCallName": "t", "parentMessageId": "act-1"},
                     {"type": "TOOL_CALL_START", "toolCallId": "tc-2", "toolCallName": "t",
                      "parentMessageId": "nobody"})
    records = fold(events)
    assert reference_features(events[2], records[2].before) == [
        "ref:TOOL_CALL_START.parentMessageId:activity"]
    assert reference_features(events[3], records[3].before) == []
    assert reference_features(events[2], initial_state()) == []


def test_the_probes_cover_both_dimensions_whole():
    assert {"key", "ref"} <= set(DIMENSIONS) and universe()["key"] == KEY_UNIVERSE
    wanted = [t for t in probe_traces() if t.id.startswith(("probe-special-keys", "probe-ref-"))]
    assert len(wanted) == 8 and all(t.id in PROBES for t in wanted)
    doc = report(coverage_of([t.events for t in wanted]))
    assert doc["dimensions"]["ref"]["never"] == [] and doc["dimensions"]["key"]["never"] == []
    assert doc["dimensions"]["ref"]["total"] == len(REF_UNIVERSE) == 9


def test_surface_generation_draws_special_keys():
    assert any("__proto__" in c for c in SURFACE_CONTENTS)
    assert any("__proto__" in m for m in SURFACE_METADATA)
