"""The traces a peer is fed: the committed corpus, trace files and folders (:class:`PeerTrace`,
:func:`load_traces`)."""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any, Optional, Sequence

from model.events import Event
from model.wire import TraceFormatError, loads_json, parse_events, parse_trace_text, read_text


# --- traces -------------------------------------------------------------------------------------

@dataclass(frozen=True)
class PeerTrace:
    """A trace to put to a peer.

    Attributes:
        id: its name in reports (a finding or field-case id, a file name, ``gen-…``).
        wire: the wire events exactly as sent to the adapter.
        events: the same, parsed for the model.
        state: the agent state before the first event (a field case's ``initialState``), or None.
        source: where it came from (a path, ``corpus``, ``stateful``, ``bfs``).
    """

    id: str
    wire: tuple[dict, ...]
    events: tuple[Event, ...]
    state: Any = None
    source: str = ""

    @staticmethod
    def of(trace_id: str, wire: Sequence[dict], state: Any = None, source: str = "") -> "PeerTrace":
        """Build from wire events (parsed here; TraceFormatError for a non-object element)."""
        wire = tuple(wire)
        return PeerTrace(trace_id, wire, parse_events(wire), state, source)


def corpus_traces() -> list[PeerTrace]:
    """The committed corpus: every finding trace (``counterexamples/corpus/findings``), then every
    field case (``counterexamples/corpus/field-cases.jsonl``, with its initial state)."""
    from counterexamples.corpus import load_corpus
    from counterexamples.field_cases import load_cases
    out = [PeerTrace.of(e["id"], e["events"], None, "corpus") for e in load_corpus()]
    out.extend(PeerTrace.of(c.id, c.events, c.initial_state, "field-cases") for c in load_cases())
    return out


def load_traces(paths: Sequence[str], skipped: Optional[list] = None) -> list[PeerTrace]:
    """Traces from files and directories (a directory: its ``*.json`` and ``*.jsonl`` files, in
    name order; of a finding's ``X.json`` and ``X.jsonl`` only the first). A file is a trace as
    ``activity-check replay`` reads it (its ``id`` member names it, else its file name), or a
    case set: JSON lines each holding an object with ``events``.

    Args:
        skipped: when given, a file that cannot be read is left out and the reason appended
            to it (one line naming the file, line, event index and field) instead of raised, so
            that one bad file among many does not stop a check.

    Raises:
        TraceFormatError: a file that cannot be read as either (naming the file and line), when
            ``skipped`` is None.
    """
    files: list[str] = []
    for path in paths:
        if os.path.isdir(path):
            names = sorted(os.listdir(path))
            # a finding written as X.json (with its id) and X.jsonl (its trace) counts once
            files.extend(os.path.join(path, n) for n in names if n.endswith(".json") or (
                n.endswith(".jsonl") and n[:-1] not in names))
        else:
            files.append(path)
    out: list[PeerTrace] = []
    for path in files:
        try:
            out.extend(_file_traces(path))
        except (TraceFormatError, ValueError) as exc:  # TraceFormatError names file and line
            if skipped is None:
                raise
            skipped.append(str(exc))
    return out


def _file_traces(path: str) -> list[PeerTrace]:
    """The traces of one file (see :func:`load_traces`); TraceFormatError when unreadable."""
    text = read_text(path)
    cases = _case_lines(text)
    base = os.path.basename(path)
    if cases is not None:
        out: list[PeerTrace] = []
        for lineno, obj in cases:
            name = obj.get("id") if isinstance(obj.get("id"), str) else f"{base}:{lineno}"
            try:
                out.append(PeerTrace.of(name, obj["events"], obj.get("initialState"), path))
            except TraceFormatError as exc:
                raise TraceFormatError(exc.reason, file=path, line=lineno,
                                       event_index=exc.event_index) from None
        return out
    trace = parse_trace_text(text, path)
    name = trace.meta.get("id") if isinstance(trace.meta.get("id"), str) else base
    wire = _wire_of(text, trace.meta)
    return [PeerTrace(name, wire, trace.events, trace.meta.get("initialState"), path)]


def _case_lines(text: str) -> Optional[list[tuple[int, dict]]]:
    """``[(line, object)]`` when every non-blank line is a JSON object with an ``events`` array and
    no ``type`` (a case set); None otherwise."""
    found = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            obj = loads_json(line)  # the strict reader: a line it refuses is read as a trace,
        except json.JSONDecodeError:  # whose reader then names the file, line and reason
            return None
        if not isinstance(obj, dict) or "type" in obj or not isinstance(obj.get("events"), list):
            return None
        found.append((lineno, obj))
    return found or None


def _wire_of(text: str, meta: dict) -> tuple[dict, ...]:
    """The wire events of a trace text already accepted by :func:`parse_trace_text`."""
    stripped = text.lstrip()
    if stripped.startswith("["):
        return tuple(json.loads(text))
    if stripped.startswith("{"):
        try:
            doc = json.loads(text)
        except json.JSONDecodeError:
            doc = None
        if isinstance(doc, dict):
            return tuple(doc["events"]) if "events" in doc else (doc,)
    return tuple(json.loads(line) for line in text.splitlines() if line.strip())
