"""The reference model behind the adapter protocol: ``python -m counterexamples.peers.model_adapter``.

It reads requests from stdin, one JSON object a line (``{"id", "events": [wire events],
"state"?: initial agent state, "input"?: the run's RunAgentInput}``), and answers each on stdout,
one JSON object a line, in order: ``{"id", "peer", "messages", "warnings", "fatal", "runInput",
"state", "events", "request", "observes"}`` where the first members are those of
:meth:`model.verdict.Verdict.to_json` under the reading given by ``--reading`` (default
``draft``). Warnings are reported in the model's own codes (``{"code", "messageId",
"atEvent", "clause", "detail"}``), so a checker compares them; ``fatal`` carries ``atEvent`` and a
one-line ``message`` naming the event type it failed on. The conformance members (optional in
the protocol, docs/conformance.md): ``events``, the events delivered to the application (wire
form after stripping, the dropped ones left out, none from the failing event on); ``request``, the
RunAgentInput this consumer sends for the run (``input`` with its messages as the consumer holds
and sends them: activity stripped, RIN-STRIP-ACTIVITY); ``observes``, the members whose
``null`` is a value rather than "not observed" (``state``: the agent state may be null).

A request that cannot be processed (not JSON, no ``events`` array, an event that is not an
object) is answered ``{"id", "error": text}`` and the adapter goes on with the next line. It exits
0 at the end of its input. See docs/peers.md, "Adapter protocol", for the contract every adapter
follows; :mod:`counterexamples.peers` is the checking side.

Options (test hooks, to exercise the checker's error handling with a real process):
``--crash-on ID`` exits with status 3 on the request with that id (or an id ending in ``:ID``),
``--hang-on ID`` stops answering on that request (sleeps), ``--garbage-on ID`` answers that request
with a line that is not JSON.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Iterator, Optional, Sequence, TextIO

from model.consumer import initial_state
from model.consumers import REFERENCE, Consumer
from model.events import Malformed, Unrecognised
from model.readings import DRAFT, Reading, ReadingError, parse_reading
from model.verdict import evaluate
from model.wire import TraceFormatError, parse_events, parse_message

__all__ = ["answer", "requests", "write_response", "serve", "main"]


def answer(request: object, reading: Reading = DRAFT, consumer: Optional[Consumer] = None
           ) -> dict:
    """The response to one decoded request (see the module docstring).

    Args:
        request: the decoded JSON request: an object with ``id`` (any JSON value, echoed),
            ``events`` (a list of wire event objects), optionally ``state`` (the agent state
            before the first event; default ``{}``, else ``input.state``) and ``input`` (the
            run's RunAgentInput: its ``messages`` are held before the first event).
        reading: the reading the model consumer follows.
        consumer: the consumer that steps the trace (default the reference model; a zoo mutant
            of :mod:`properties.zoo` in-process, as ``conformance generate`` verifies a kill).

    Returns:
        ``{"id", "peer", "messages", "warnings", "fatal", "runInput", "state", "events",
        "request", "observes"}``, or ``{"id", "error"}`` for a request that is not of that shape
        (an input message the schema refuses included). Never raises for bad input.
    """
    rid = request.get("id") if isinstance(request, dict) else None
    if not isinstance(request, dict) or not isinstance(request.get("events"), list):
        return {"id": rid, "error": "request needs an 'events' array"}
    try:
        events = parse_events(request["events"])
    except TraceFormatError as exc:
        return {"id": rid, "error": f"event {exc.event_index}: {exc.reason}"}
    run_in = request.get("input") if isinstance(request.get("input"), dict) else {}
    held, problem = _input_messages(run_in.get("messages"))
    if problem:
        return {"id": rid, "error": problem}
    consumer = consumer or REFERENCE
    state_value = request["state"] if "state" in request else run_in.get("state")
    start = initial_state(state_value, held)
    verdict = evaluate(events, reading, start=start,
                       step=None if consumer is REFERENCE else consumer.step)
    out = verdict.to_json()
    fatal = out["fatal"]
    stop = len(events)
    if fatal is not None:
        stop = fatal["atEvent"]
        fatal["message"] = (f"{events[stop].type_name} (event {stop}): {fatal['code']}: "
                            f"{fatal.get('detail', '')}")
    delivered = [e.to_wire() for e in events[:stop] if not isinstance(e, (Unrecognised,
                                                                          Malformed))]
    sent = {k: v for k, v in run_in.items() if k != "messages"}
    sent["messages"] = consumer.run_input(start)
    return {"id": rid, "peer": f"activity-check model ({reading.name or 'draft'})"
                                + ("" if consumer is REFERENCE else f" mutant {consumer.name}"),
            "messages": out["messages"], "warnings": out["warnings"],
            "fatal": fatal, "runInput": consumer.run_input(verdict.state),
            "state": out["state"], "events": delivered, "request": sent,
            "observes": ["state"]}


def _input_messages(raw: object) -> tuple[tuple, Optional[str]]:
    """The run input's messages as model messages (unrecognised roles dropped, as a list of
    messages drops them, PRC-DROP-STRIP); ``((), reason)`` when one is malformed."""
    if raw is None:
        return (), None
    if not isinstance(raw, list):
        return (), "input.messages must be an array"
    held = []
    for index, obj in enumerate(raw):
        try:
            message = parse_message(obj, f"input.messages[{index}]", [])
        except Exception as exc:  # the wire module's internal malformed signal
            return (), f"input.messages[{index}]: {getattr(exc, 'reason', exc)}"
        if message is not None:
            held.append(message)
    return tuple(held), None


def _names(rid: object, target: Optional[str]) -> bool:
    """True when request id ``rid`` is ``target`` or ends in ``:target`` (the checker's ids are
    ``<n>:<trace id>``)."""
    return target is not None and isinstance(rid, str) and (rid == target
                                                            or rid.endswith(":" + target))


def requests(stdin: TextIO) -> Iterator[tuple[object, Optional[dict]]]:
    """The request lines of the adapter protocol, decoded: for each non-blank line of ``stdin``,
    ``(request, None)`` (any JSON value), or ``(None, {"id": None, "error": ...})`` for a line
    that is not JSON (the response to send for it). Shared with the Python peer adapters
    (``peers/ag-ui-protocol/adapter.py``)."""
    for line in stdin:
        if not line.strip():
            continue
        try:
            yield json.loads(line), None
        except json.JSONDecodeError as exc:
            yield None, {"id": None, "error": f"request is not JSON: {exc.msg}"}


def write_response(stdout: TextIO, response: dict) -> None:
    """Write one response as a compact JSON line (non-ASCII kept as is, a lone surrogate from
    the trace as its JSON escape ``\\ud800``, the same value read back) and flush."""
    text = json.dumps(response, ensure_ascii=False, separators=(",", ":"))
    # a lone surrogate can only stand inside a JSON string, where its backslash escape is the
    # JSON escape; it made the write raise UnicodeEncodeError, a crash of the adapter
    text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    stdout.write(text + "\n")
    stdout.flush()


def serve(reading: Reading, stdin: TextIO, stdout: TextIO, crash_on: Optional[str] = None,
          hang_on: Optional[str] = None, garbage_on: Optional[str] = None) -> int:
    """Answer every line of ``stdin`` on ``stdout`` until end of input; returns the exit status
    (0). The three ``*_on`` ids are the test hooks of the module docstring."""
    for request, refused in requests(stdin):
        if refused is not None:
            write_response(stdout, refused)
            continue
        rid = request.get("id") if isinstance(request, dict) else None
        if _names(rid, crash_on):
            sys.stderr.write(f"model_adapter: crashing on request {rid!r} as asked\n")
            sys.stderr.flush()
            return 3
        if _names(rid, hang_on):
            time.sleep(3600)
        if _names(rid, garbage_on):
            stdout.write("this is not JSON\n")
            stdout.flush()
            continue
        write_response(stdout, answer(request, reading))
    return 0


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Command-line entry: ``python -m counterexamples.peers.model_adapter [--reading R]``."""
    parser = argparse.ArgumentParser(prog="python -m counterexamples.peers.model_adapter",
                                     description="The reference model as an adapter "
                                                 "(JSON lines on stdin/stdout).")
    parser.add_argument("--reading", default="draft",
                        help="preset (draft, lenient, strict) or KNOB=OPTION,... (default draft)")
    parser.add_argument("--crash-on", help=argparse.SUPPRESS)
    parser.add_argument("--hang-on", help=argparse.SUPPRESS)
    parser.add_argument("--garbage-on", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    try:
        reading = parse_reading(args.reading)
    except ReadingError as exc:
        print(f"model_adapter: --reading: {exc}", file=sys.stderr)
        return 2
    return serve(reading, sys.stdin, sys.stdout, args.crash_on, args.hang_on, args.garbage_on)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
