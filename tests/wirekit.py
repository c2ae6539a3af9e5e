"""Small builders for wire-form test traces, shared by the test files."""
from __future__ import annotations

from model.wire import parse_events

RS = {"type": "RUN_STARTED", "threadId": "t1", "runId": "r1"}
RF = {"type": "RUN_FINISHED", "threadId": "t1", "runId": "r1"}


def snap(mid="act-1", atype="PLAN", content=None, **extra) -> dict:
    """An ACTIVITY_SNAPSHOT wire object (content defaults to {"n": 0})."""
    obj = {"type": "ACTIVITY_SNAPSHOT", "messageId": mid, "activityType": atype,
           "content": {"n": 0} if content is None else content}
    obj.update(extra)
    return obj


def delta(mid="act-1", atype="PLAN", patch=(), **extra) -> dict:
    """An ACTIVITY_DELTA wire object."""
    obj = {"type": "ACTIVITY_DELTA", "messageId": mid, "activityType": atype,
           "patch": list(patch)}
    obj.update(extra)
    return obj


def trace(*wire):
    """Parse a trace that starts with RUN_STARTED followed by ``wire``."""
    return parse_events([RS] + list(wire))
