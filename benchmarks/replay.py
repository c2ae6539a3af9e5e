"""Replay throughput: events per second for the ``draft`` reading on a mixed trace.

Builds a deterministic mixed trace (runs of activity snapshots, replacing and declined
snapshots, applying and failing deltas with metadata, text messages, state deltas and
MESSAGES_SNAPSHOT), parses it from wire JSON once, then times :func:`model.verdict.evaluate` over it
on one core: the first pass (patch memo cold) and the best of several. Target (issue 2): at least 20,000 events/s.

Usage: python benchmarks/replay.py [--events N] [--repeat K] [--json]
"""
from __future__ import annotations

import argparse
import json
import platform
import sys
import time

from model.readings import DRAFT
from model.verdict import evaluate
from model.wire import parse_events


def mixed_trace(n_events: int) -> list[dict]:
    """A deterministic wire trace of about ``n_events`` events mixing every activity path."""
    out: list[dict] = []
    run = 0
    i = 0
    while len(out) < n_events:
        run += 1
        out.append({"type": "RUN_STARTED", "threadId": "t1", "runId": f"r{run}"})
        for k in range(40):
            i += 1
            aid = f"act-{i % 25}"
            owner = {} if k % 3 else {"subagentRunId": f"sub-{k % 2}"}
            out.append({"type": "ACTIVITY_SNAPSHOT", "messageId": aid, "activityType": "PLAN",
                        "content": {"n": k, "items": [], "label": "step"},
                        "metadata": {"k": k}, **owner})
            out.append({"type": "ACTIVITY_DELTA", "messageId": aid, "activityType": "PLAN",
                        "patch": [{"op": "replace", "path": "/n", "value": k + 1},
                                  {"op": "add", "path": "/items/-", "value": {"s": k}}]})
            if k % 4 == 0:
                out.append({"type": "ACTIVITY_DELTA", "messageId": aid, "activityType": "SEARCH",
                            "patch": [{"op": "remove", "path": "/missing"}],
                            "metadata": {"fail": True}})
            if k % 5 == 0:
                out.append({"type": "ACTIVITY_SNAPSHOT", "messageId": aid, "activityType": "PLAN",
                            "content": {"n": 0}, "replace": False, **owner})
            if k % 7 == 0:
                tid = f"msg-{run}-{k}"
                out += [{"type": "TEXT_MESSAGE_START", "messageId": tid, "role": "assistant"},
                        {"type": "TEXT_MESSAGE_CONTENT", "messageId": tid, "delta": "working"},
                        {"type": "TEXT_MESSAGE_END", "messageId": tid}]
            if k % 9 == 0:
                out.append({"type": "STATE_DELTA",
                            "delta": [{"op": "add", "path": f"/s{k}", "value": k}]})
            if k % 13 == 0:
                out.append({"type": "ACTIVITY_DELTA", "messageId": "act-none",
                            "activityType": "PLAN", "patch": []})
        out.append({"type": "MESSAGES_SNAPSHOT",
                    "messages": [{"id": "u1", "role": "user", "content": "hi"}]})
        out.append({"type": "RUN_FINISHED", "threadId": "t1", "runId": f"r{run}"})
    return out


def measure(n_events: int = 20000, repeat: int = 5) -> dict:
    """Time ``evaluate`` under draft; returns figures (events, seconds, events/s, warnings)."""
    wire = mixed_trace(n_events)
    t0 = time.perf_counter()
    events = parse_events(wire)
    parse_seconds = time.perf_counter() - t0
    from model.patch import clear_memos
    clear_memos()
    times = []
    verdict = None
    for _ in range(repeat):
        t0 = time.perf_counter()
        verdict = evaluate(events, DRAFT)
        times.append(time.perf_counter() - t0)
    best, cold = min(times), times[0]
    kinds: dict[str, int] = {}
    for e in events:
        kinds[e.type_name] = kinds.get(e.type_name, 0) + 1
    return {
        "benchmark": "replay", "reading": "draft", "events": len(events),
        "eventKinds": dict(sorted(kinds.items())),
        "bestSeconds": round(best, 4), "eventsPerSecond": round(len(events) / best),
        "coldSeconds": round(cold, 4), "coldEventsPerSecond": round(len(events) / cold),
        "parseEventsPerSecond": round(len(events) / parse_seconds),
        "warnings": len(verdict.warnings), "fatal": verdict.fatal is not None,
        "target": 20000, "python": platform.python_version(), "machine": platform.machine(),
    }


def main(argv=None) -> int:
    """Command-line entry: parse the options, measure, print the figures (``--json``: as JSON);
    returns the exit code."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=20000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    figures = measure(args.events, args.repeat)
    if args.json:
        print(json.dumps(figures, indent=2))
    else:
        print(f"replay under draft: {figures['events']} events, best of {args.repeat}: "
              f"{figures['bestSeconds']} s -> {figures['eventsPerSecond']:,} events/s "
              f"(target {figures['target']:,}); first pass with a cold patch memo "
              f"{figures['coldEventsPerSecond']:,} events/s; parsing {figures['parseEventsPerSecond']:,} "
              f"events/s; {figures['warnings']} warnings, fatal: {figures['fatal']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
