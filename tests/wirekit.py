"""Small builders for wire-form test traces, shared by the test files."""
from __future__ import annotations

import threading
from contextlib import contextmanager
from http.server import ThreadingHTTPServer
from typing import Iterator

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


@contextmanager
def serve_http(handler) -> Iterator[str]:
    """Serve ``handler`` (an ``http.server.BaseHTTPRequestHandler`` class) on 127.0.0.1, on a
    free port, in a daemon thread; yields ``http://127.0.0.1:PORT`` and stops the server (and
    its handler threads' sockets) on exit."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)
