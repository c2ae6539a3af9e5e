"""activity-check adapter for the Python SDK's event models, ``ag-ui-protocol`` (pinned in
``requirements.txt`` beside this file and in the project's ``dev`` extra).

The package has no consumer of its own (no reducer, no agent client): it is the wire layer a
Python consumer parses events with. This adapter is that consumer: every wire event goes through
the package's discriminated union ``ag_ui.core.events.Event`` (``TypeAdapter(Event)``, what
``EventDecoder``-style code and FastAPI request models use), and what the models give back,
``model_dump(mode="json", by_alias=True, exclude_unset=True)``, is handed to activity-check's
reference consumer under the ``draft`` reading. So every difference from the model is the wire
layer's doing:

* an event the models reject (a missing required member, a wrong type, an unknown event type or
  patch op) fails the run there: ``fatal`` ``{"atEvent", "reason": "rejected by the event
  models", "detail"}`` (no ``code``: a ``code`` is compared, and this cause is not one of
  activity-check's), with the messages the consumer held before it;
* an event the models accept is passed on as they read it: a coerced value (``"replace":
  "false"`` becomes ``false``), a member they drop (``metadata: null`` is left out) or keep
  (undescribed members: ``extra="allow"``).

``warnings`` are the reference consumer's (activity-check codes) over what the models passed on;
``runInput`` and ``state`` likewise, and the conformance members (``events``: what the models
passed on and the consumer took, ``request``, ``observes``; docs/conformance.md). Usage:
``python peers/ag-ui-protocol/adapter.py`` (JSON lines on stdin and stdout, docs/peers.md,
"Adapter protocol").
"""
from __future__ import annotations

import importlib.metadata
import sys
from typing import Any

from pydantic import TypeAdapter, ValidationError

from ag_ui.core.events import Event
from counterexamples.peers.model_adapter import answer as model_answer
from counterexamples.peers.model_adapter import requests, write_response
from model.readings import DRAFT

VERSION = importlib.metadata.version("ag-ui-protocol")
PEER = f"ag-ui-protocol@{VERSION} (event models as the wire layer)"
REJECTED = "rejected by the event models"
_EVENTS = TypeAdapter(Event)


def through_models(wire: list) -> tuple[list[dict], Any]:
    """The events as ``ag-ui-protocol`` reads them: ``(accepted events re-serialised, None)``, or
    ``(the ones before the first rejected event, (index, detail))``."""
    out: list[dict] = []
    for index, event in enumerate(wire):
        try:
            parsed = _EVENTS.validate_python(event)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first.get("loc", ())) or "(event)"
            return out, (index, f"{where}: {first.get('msg', '')}"[:500])
        out.append(parsed.model_dump(mode="json", by_alias=True, exclude_unset=True))
    return out, None


def answer(request: Any) -> dict:
    """The response to one decoded request (docs/peers.md, "Adapter protocol"); never raises."""
    rid = request.get("id") if isinstance(request, dict) else None
    if not isinstance(request, dict) or not isinstance(request.get("events"), list):
        return {"id": rid, "error": "request needs an 'events' array"}
    if not all(isinstance(e, dict) for e in request["events"]):
        return {"id": rid, "error": "every event must be a JSON object"}
    passed, rejected = through_models(request["events"])
    inner = {"id": rid, "events": passed}
    inner.update({k: request[k] for k in ("state", "input") if k in request})
    out = model_answer(inner, DRAFT)
    if "error" in out:
        return out
    if rejected is not None and out["fatal"] is None:
        out["fatal"] = {"atEvent": rejected[0], "reason": REJECTED, "detail": rejected[1]}
    out["peer"] = PEER
    out["log"] = [] if rejected is None else [f"event {rejected[0]} rejected: {rejected[1]}"]
    return out


def main() -> int:
    """Answer every request line of stdin on stdout until end of input; exit status 0."""
    for request, refused in requests(sys.stdin):
        write_response(sys.stdout, refused if refused is not None else answer(request))
    return 0


if __name__ == "__main__":
    sys.exit(main())
