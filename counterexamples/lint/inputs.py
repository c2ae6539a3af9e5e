"""Reading a stream for ``lint``: a file, stdin, or a live AG-UI endpoint.

Three forms of recorded stream are read (:func:`parse_stream_text`), told apart by their first
character and lines:

* a JSON array of events (``[`` first), or an object whose ``events`` member is one (a field case
  or a finding, as ``replay`` reads);
* JSON lines, one event a line (``{`` first, or any text none of whose lines is an SSE field);
* a recorded ``text/event-stream`` body (lines ``data: ...``, ``event:``, ``id:``, ``retry:`` or
  comments ``:``): framed by httpx-sse's decoder, the JSON of each event taken from its data.

:func:`fetch_stream` POSTs a run input (``RunAgentInput`` JSON) to an endpoint with httpx and
reads its answer as it arrives (:class:`LiveStream`: httpx, httpx-sse's decoder), as an AG-UI
HTTP client does, within bounds.

Each element becomes a :class:`counterexamples.lint.linter.StreamEntry`; an element that is not valid
JSON (in JSON lines or an SSE event) is kept as an entry with its ``problem``, so that lint reports
it and goes on. Input that cannot be a stream at all raises :class:`model.wire.TraceFormatError`,
one line naming the file, the line and what is wrong: unreadable, not UTF-8, empty, an array that
is not valid JSON, or no element that is an event (no ``type``). JSON is read strictly, as every
file the tool reads (:func:`model.wire.loads_json`): no NaN or infinities, no number out of
range, no member named twice in one object, nesting at most 128 deep.
"""
from __future__ import annotations

import codecs
import json
import math
import re
from dataclasses import dataclass
from typing import Any, Iterator, Optional, Sequence

from model.text import named
from model.wire import (EMPTY_FILE, EVENTS_NOT_ARRAY, MAX_DEPTH, NO_EVENTS, STDIN, STDIN_NAME,
                        ParsedTrace, TraceFormatError, loads_json, not_a_trace,
                        parse_trace_text, read_stdin, read_text, trace_from_values)

from counterexamples.lint.linter import StreamEntry

__all__ = ["LintInput", "parse_stream_text", "read_stream", "read_trace", "fetch_stream", "LiveStream",
           "decode_event", "DEFAULT_RUN_INPUT", "INPUT_FORMATS", "DEFAULT_MAX_EVENTS",
           "DEFAULT_MAX_SECONDS"]

INPUT_FORMATS = ("json", "jsonl", "sse")
"""The forms of stream read: a JSON array, JSON lines, a text/event-stream body."""

DEFAULT_RUN_INPUT: dict = {"threadId": "activity-check-lint", "runId": "activity-check-lint-1",
                           "state": {}, "messages": [], "tools": [], "context": [],
                           "forwardedProps": {}}
"""The run input ``fetch_stream`` POSTs when none is given: an empty thread."""

_SSE_FIELDS = ("data", "event", "id", "retry")

STREAM_FORMS = ('a JSON array of events, JSON lines, an object with an "events" array, or a '
                "text/event-stream body")
"""The forms of stream lint reads, as its errors say them (``replay``'s wording,
:func:`model.wire.not_a_trace`, with the event-stream body added)."""

_COLUMN = re.compile(r"^(not valid JSON: .*) \(column (\d+)\)\Z")
"""A :func:`decode_event` problem with the column it names."""


@dataclass(frozen=True)
class LintInput:
    """A stream read for lint: its entries, where it came from (``source``), its form (one of
    :data:`INPUT_FORMATS`) and remarks on the input that are not violations (``notes``)."""

    entries: tuple[StreamEntry, ...]
    source: str
    input_format: str
    notes: tuple[dict, ...] = ()


class _Repeated(ValueError):
    pass


def _pairs(items: list) -> dict:
    obj = dict(items)
    if len(obj) != len(items):
        raise _Repeated("a member is named twice")
    return obj


def _reject(token: str):
    raise ValueError(f"{token} is not a JSON value")


def _number(token: str) -> float:
    value = float(token)
    if math.isinf(value) or (value == 0.0 and any(c in "123456789" for c in
                                                  token.lower().split("e")[0])):
        raise ValueError("number out of range")
    return value


_FAST = json.JSONDecoder(object_pairs_hook=_pairs, parse_constant=_reject, parse_float=_number)
"""The C decoder with the strict checks as hooks (called only on objects, floats and constants);
anything it refuses is decoded again by :func:`model.wire.loads_json` for the exact message."""

_SCAN = _FAST.scan_once
"""The decoder's scanner: one value from a position (what ``decode`` calls, without its checks
for surrounding whitespace, which :func:`decode_event` strips first)."""


def decode_event(text: str) -> tuple[Any, Optional[str]]:
    """Decode one event's JSON text strictly: ``(value, None)``, or ``(None, problem)`` with the
    reason and column (``"not valid JSON: Expecting value (column 9)"``)."""
    body = text.strip(" \t\r\n")
    try:
        if body.count("{") + body.count("[") <= MAX_DEPTH:
            value, end = _SCAN(body, 0)
            if end == len(body):
                return value, None
    except (ValueError, RecursionError, StopIteration):
        pass
    try:
        return loads_json(text), None
    except json.JSONDecodeError as exc:
        return None, f"not valid JSON: {exc.msg} (column {exc.colno})"
    except ValueError as exc:  # pragma: no cover - loads_json raises JSONDecodeError
        return None, f"not valid JSON: {exc}"


def _array_lines(text: str, start: int, count: int) -> list[int]:
    """1-based line where each of the ``count`` elements of the array at ``start`` begins."""
    decoder = json.JSONDecoder()
    lines, pos, n = [], start + 1, len(text)
    line, counted = 1, 0

    def skip(p: int) -> int:
        while p < n and text[p] in " \t\r\n":
            p += 1
        return p

    pos = skip(pos)
    while pos < n and text[pos] != "]" and len(lines) < count:
        line += text.count("\n", counted, pos)
        counted = pos
        lines.append(line)
        _, pos = decoder.raw_decode(text, pos)
        pos = skip(pos)
        if pos < n and text[pos] == ",":
            pos = skip(pos + 1)
    return lines + [None] * (count - len(lines))


def _json_document(text: str, source: str, start: int) -> Optional[LintInput]:
    """A JSON array, or an object with an ``events`` array; None when ``text`` (starting with
    ``{``) is JSON lines instead. Raises TraceFormatError for an array that is not JSON."""
    try:
        doc = loads_json(text)
    except json.JSONDecodeError as exc:
        if text[start] == "{" and exc.msg == "Extra data":
            return None
        if text[start] == "{":
            return None  # JSON lines whose first line is broken: read line by line
        raise TraceFormatError(f"not valid JSON: {exc.msg}", file=source, line=exc.lineno,
                               column=exc.colno) from None
    if isinstance(doc, dict) and "events" not in doc:
        return None  # one event on one line
    if isinstance(doc, dict):
        events = doc["events"]
        if not isinstance(events, list):
            raise TraceFormatError(EVENTS_NOT_ARRAY, file=source)
        at = text.find("[", text.find('"events"'))
        lines = _array_lines(text, at, len(events)) if at >= 0 else [None] * len(events)
    elif isinstance(doc, list):
        events = doc
        lines = _array_lines(text, start, len(events))
    else:
        raise TraceFormatError(f"expected a JSON array of events, got {type(doc).__name__}",
                               file=source)
    return LintInput(tuple(StreamEntry(v, ln) for v, ln in zip(events, lines)), source, "json")


def _is_sse(lines: Sequence[str]) -> bool:
    for raw in lines:
        if not raw.strip():
            continue
        if raw.startswith(":"):
            return True
        name, colon, _ = raw.partition(":")
        if colon and name in _SSE_FIELDS:
            return True
        if raw.lstrip().startswith(("{", "[")):
            return False
    return False


def _sse_entries(text: str, source: str) -> LintInput:
    """The events of a recorded text/event-stream body, framed by httpx-sse's decoder (line
    splitting as the SSE format defines it, fields, data lines joined, dispatch at a blank
    line); each event's line is that of its first field. The decoder classes are httpx-sse's
    own (``httpx_sse._decoders``, what its ``EventSource`` runs; the dependency is pinned below
    0.5): ``EventSource`` itself reads only a live response and gives no line numbers."""
    from httpx_sse._decoders import SSEDecoder, SSELineDecoder

    splitter = SSELineDecoder()
    lines = splitter.decode(text) + splitter.flush() + [""]
    decoder = SSEDecoder()
    entries: list[StreamEntry] = []
    notes: list[dict] = []
    first: Optional[int] = None
    for number, line in enumerate(lines, start=1):
        if line and not line.startswith(":"):
            name = line.partition(":")[0]
            if name not in _SSE_FIELDS:
                notes.append({"line": number, "text": "not an SSE field (no 'data:' prefix?): "
                              "an SSE reader ignores this line, so any event on it is lost"})
            elif first is None:
                first = number
        sse = decoder.decode(line)
        if sse is None:
            continue
        at, first = first, None
        if sse.data == "":
            continue  # a keep-alive or an event with no data: no AG-UI event
        value, problem = decode_event(sse.data)
        entries.append(StreamEntry(value, at, problem))
    return LintInput(tuple(entries), source, "sse", tuple(notes))


def _jsonl_entries(lines: Sequence[str], source: str) -> LintInput:
    entries = []
    append = entries.append
    for number, raw in enumerate(lines, start=1):
        if raw and not raw.isspace():
            value, problem = decode_event(raw)
            append(StreamEntry(value, number, problem))
    return LintInput(tuple(entries), source, "jsonl")


def _require_trace(found: LintInput) -> LintInput:
    """Refuse a document none of whose elements is an event (model.wire's rule for traces)."""
    if not found.entries:
        raise TraceFormatError(NO_EVENTS, file=found.source)
    if not any(isinstance(e.value, dict) and "type" in e.value for e in found.entries):
        first = found.entries[0]
        problem, column = first.problem, None
        located = _COLUMN.match(problem or "") if found.input_format == "jsonl" else None
        if located:  # a JSON line: its column is the file's, said where replay says it
            problem, column = located.group(1), int(located.group(2))
        raise not_a_trace(first.value, file=found.source, line=first.line, column=column,
                          problem=problem, forms=STREAM_FORMS)
    return found


def parse_stream_text(text: str, source: str = "<input>") -> LintInput:
    """Read a recorded stream (see the module docstring for the forms).

    Raises:
        TraceFormatError: empty input, an array that is not valid JSON (with line and column), or
            no element that is an event.
    """
    if text.startswith("\ufeff"):
        text = text[1:]
    stripped = text.lstrip()
    if not stripped:
        raise TraceFormatError(f"{EMPTY_FILE}: expected {STREAM_FORMS}", file=source)
    start = len(text) - len(stripped)
    if stripped[0] in "[{":
        found = _json_document(text, source, start)
        if found is not None:
            return _require_trace(found)
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    if stripped[0] != "[" and _is_sse(lines):
        return _require_trace(_sse_entries(text, source))
    return _require_trace(_jsonl_entries(lines, source))


def read_trace(path: str, stdin=None) -> ParsedTrace:
    """``replay``'s reader: the trace in file ``path`` (``-``: ``stdin``), read as ``lint``
    reads a stream: a JSON array, JSON lines or an object with ``events``
    (:func:`model.wire.parse_trace_text`, keeping a case's other members), or a recorded
    text/event-stream body, framed as :func:`parse_stream_text` frames it; bounded alike.

    Raises:
        TraceFormatError: naming the file (``<stdin>``), the line and what is wrong; for an SSE
            body also an event whose data is not JSON (with its line and event index).
    """
    source = STDIN_NAME if path == STDIN else path
    text = read_stdin(stdin) if path == STDIN else read_text(path)
    stripped = text.lstrip("\ufeff \t\r\n")
    if stripped and stripped[0] not in "[{" and \
            _is_sse(text.replace("\r\n", "\n").replace("\r", "\n").split("\n")):
        found = _require_trace(_sse_entries(text.lstrip("\ufeff"), source))
        for index, entry in enumerate(found.entries):
            if entry.problem is not None:
                raise TraceFormatError(entry.problem, file=source, line=entry.line,
                                       event_index=index)
        return trace_from_values([e.value for e in found.entries],
                                 [e.line for e in found.entries], source)
    return parse_trace_text(text, source)


def read_stream(path: str, stdin=None, listed: bool = False) -> LintInput:
    """Read the stream in file ``path`` (``-``: ``stdin``, default :data:`sys.stdin`), bounded
    (:data:`model.wire.INPUT_LIMITS`); ``listed``: found in a folder, so read only when a
    regular file and not a link (:func:`model.wire.read_bytes`).

    Raises:
        TraceFormatError: naming the file (``<stdin>``): unreadable, refused, too large, not
            UTF-8, or not a stream.
    """
    if path == STDIN:
        return parse_stream_text(read_stdin(stdin), STDIN_NAME)
    return parse_stream_text(read_text(path, listed=listed), path)


DEFAULT_MAX_EVENTS = 1_000_000
"""Default bound on the events read from a live endpoint (``lint --max-events``)."""

DEFAULT_MAX_SECONDS = 600.0
"""Default bound on the seconds a live endpoint is read (``lint --max-seconds``)."""


class LiveStream:
    """The events of a live AG-UI endpoint, read as they arrive (an iterable of
    :class:`~counterexamples.lint.linter.StreamEntry`, each held only until the linter has
    judged it): ``run_input`` (default :data:`DEFAULT_RUN_INPUT`) is POSTed with httpx and the
    text/event-stream answer framed by httpx-sse's decoder, as an AG-UI HTTP client does.

    Bounds (docs/limits.md): ``timeout`` seconds to connect and between two reads;
    ``max_seconds`` for the whole read (checked at every chunk, and no read waits past it by
    more than ``timeout``), ``max_events`` events, and one event's lines at most
    :data:`model.wire.INPUT_LIMITS` ``max_bytes`` characters. A stream stopped by
    ``max_seconds`` or ``max_events`` is a verdict on what was read: :attr:`cut` says why.

    Attributes:
        url: the endpoint. cut: None, or why the read stopped before the stream's end.
        events: how many events were read. first: the first entry (for :meth:`check_trace`).
        typed: whether any entry was an object with a ``type``.

    Raises (while iterated):
        TraceFormatError: naming the URL (an over-long one cut inside quotes,
            :func:`model.text.named`): the URL is not one httpx takes, the connection failed
            or timed out, the answer is not
            a 2xx, not ``text/event-stream``, or holds an event larger than the bound.
    """

    def __init__(self, url: str, run_input: Optional[dict] = None, timeout: float = 30.0,
                 max_events: int = DEFAULT_MAX_EVENTS,
                 max_seconds: float = DEFAULT_MAX_SECONDS, headers: Optional[dict] = None,
                 transport=None):
        self.url, self.timeout, self.transport = url, timeout, transport
        self.where = named(url)  # the URL as an error names it (an over-long one cut)
        self.body = DEFAULT_RUN_INPUT if run_input is None else run_input
        self.max_events, self.max_seconds = max_events, max_seconds
        self.headers = dict(headers or {})
        self.cut: Optional[str] = None
        self.events = 0
        self.first: Optional[StreamEntry] = None
        self.typed = False

    def __iter__(self) -> Iterator[StreamEntry]:
        import time
        import httpx
        from httpx_sse._decoders import SSEDecoder, SSELineDecoder
        from model.wire import INPUT_LIMITS

        url, limit = self.url, INPUT_LIMITS.max_bytes
        deadline = time.monotonic() + self.max_seconds
        timeout = httpx.Timeout(self.timeout, read=min(self.timeout, self.max_seconds))
        headers = {"Accept": "text/event-stream", "Cache-Control": "no-store", **self.headers}
        try:
            with httpx.Client(timeout=timeout, transport=self.transport) as client:
                with client.stream("POST", url, json=self.body, headers=headers) as response:
                    status = response.status_code
                    if not 200 <= status < 300:
                        raise TraceFormatError(f"the endpoint answered HTTP {status} "
                                               f"{response.reason_phrase}".rstrip(),
                                               file=self.where)
                    kind = response.headers.get("content-type", "")
                    if "text/event-stream" not in kind:
                        raise TraceFormatError(
                            "not an event stream: expected response header Content-Type to "
                            f"contain 'text/event-stream', got {kind[:80]!r}", file=self.where)
                    splitter, decoder = SSELineDecoder(), SSEDecoder()
                    pending = 0  # characters of the current event (its lines so far)
                    # the body is UTF-8 (as a file must be): a byte that is not is refused,
                    # never replaced, so what is judged is what was sent
                    utf8 = codecs.getincrementaldecoder("utf-8")(errors="strict")
                    received = 0  # bytes of the body so far
                    for raw in response.iter_bytes():
                        try:
                            chunk = utf8.decode(raw)
                        except UnicodeDecodeError as exc:
                            raise TraceFormatError(
                                f"not UTF-8: byte {received + exc.start} of the body "
                                f"({exc.reason})", file=self.where) from None
                        received += len(raw)
                        lines = splitter.decode(chunk) if chunk else []
                        pending += len(chunk) if not lines else 0
                        for line in lines:
                            pending += len(line)
                            sse = decoder.decode(line)
                            if not line:
                                pending = 0
                            if sse is None or sse.data == "":
                                continue
                            yield self._entry(sse.data)
                            if self.events >= self.max_events:
                                self.cut = f"--max-events {self.max_events} reached"
                                return
                        if pending > limit:
                            raise TraceFormatError(f"an event larger than {limit} characters, "
                                                   "the most read (--max-bytes raises it)",
                                                   file=self.where)
                        if time.monotonic() >= deadline:
                            self.cut = f"--max-seconds {self.max_seconds:g} reached"
                            return
                    for line in splitter.flush() + [""]:
                        sse = decoder.decode(line)
                        if sse is not None and sse.data != "":
                            yield self._entry(sse.data)
        except httpx.TimeoutException:
            if time.monotonic() >= deadline:
                self.cut = f"--max-seconds {self.max_seconds:g} reached"
                return
            raise TraceFormatError(f"no answer within {self.timeout:g} s",
                                   file=self.where) from None
        except httpx.HTTPError as exc:
            raise TraceFormatError(f"cannot read the endpoint: {exc}".rstrip(": "),
                                   file=self.where) from None
        except (httpx.InvalidURL, UnicodeError) as exc:
            # not HTTPErrors: a port or a character httpx refuses, a host name IDNA refuses
            # (an empty or over-long label, an invalid A-label)
            raise TraceFormatError(f"not a valid URL: {exc}".rstrip(": "),
                                   file=self.where) from None

    def _entry(self, data: str) -> StreamEntry:
        value, problem = decode_event(data)
        entry = StreamEntry(value, None, problem)
        self.events += 1
        if self.first is None:
            self.first = entry
        if not self.typed and isinstance(value, dict) and "type" in value:
            self.typed = True
        return entry

    def check_trace(self) -> None:
        """After reading: raise TraceFormatError (naming the URL) when the stream held no
        event, or no element that is an event (as :func:`parse_stream_text` refuses a file)."""
        if self.first is None:
            raise TraceFormatError(NO_EVENTS, file=self.where)
        if not self.typed:
            _require_trace(LintInput((self.first,), self.where, "sse"))


def fetch_stream(url: str, run_input: Optional[dict] = None, timeout: float = 30.0,
                 headers: Optional[dict] = None, transport=None,
                 max_events: int = DEFAULT_MAX_EVENTS,
                 max_seconds: float = DEFAULT_MAX_SECONDS) -> LintInput:
    """The whole answer of an endpoint as a :class:`LintInput` (:class:`LiveStream` read to
    its end or its bounds; every entry kept: ``lint --url`` lints the :class:`LiveStream`
    itself instead, holding one event at a time).

    Raises:
        TraceFormatError: as :class:`LiveStream`, or no event (:meth:`LiveStream.check_trace`).
    """
    live = LiveStream(url, run_input, timeout, max_events, max_seconds, headers, transport)
    entries = tuple(live)
    live.check_trace()
    return LintInput(entries, url, "sse")
