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
