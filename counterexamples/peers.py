"""Peers: real implementations driven through an adapter, checked against the model.

An *adapter* is any program that speaks the adapter protocol (README, "Adapter protocol"): JSON
lines on stdin and stdout, one long-lived process for a whole corpus. This module is the checking
side:

* :class:`AdapterProcess` runs the adapter, sends requests (pipelined in batches), and turns a hung,
  crashed or babbling adapter into an error for the one trace it was working on, then restarts it
  and goes on with the next;
* :func:`classify` compares the peer's answer with every verdict class of the model
  (:func:`model.verdict.reading_leaves`) on the parts of a verdict the answer makes comparable
  (:class:`Observed`): the peer agrees with ``draft``, with some other reading, or with none (a
  *divergence*);
* :func:`knob_table` says, for each knob, which option the peer behaves as, from the traces that
  separate the options;
* :func:`shrink_divergence` shrinks a divergent trace by re-running the peer on smaller
  candidates (delta debugging, then optional members, then canonical names), and
  :func:`divergence_finding` builds the finding, with the peer's verdict beside the model's;
* :func:`check_peer` and :func:`search_peer` are the two jobs behind ``activity-check peer check``
  and ``activity-check peer search``.

Layering: this module uses ``model`` and ``properties`` and the rest of ``counterexamples``; nothing
in ``model`` or ``properties`` imports it.
"""
from __future__ import annotations

import json
import os
import queue
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Sequence

from model.branches import BRANCHES
from model.codes import CODES
from model.consumer import initial_state
from model.events import Event
from model.json_values import freeze
from model.producer import Vocabulary, check_trace
from model.readings import DRAFT, KNOB_BY_ID, KNOBS, describe_assignment
from model.verdict import fold, reading_leaves, step_record, verdict_key
from model.wire import (TraceFormatError, dump_jsonl, loads_json, parse_events, parse_trace_text,
                        read_text)
from counterexamples.findings import PeerDivergenceFinding, VerdictClassEntry

__all__ = [
    "PeerError", "AdapterSpec", "resolve_adapter", "BUILTIN_ADAPTERS", "PEERS_DIR",
    "node_peer_ready", "Reply", "AdapterProcess", "PeerTrace", "load_traces", "corpus_traces",
    "Observed", "observed_of", "view_of", "Classification", "classify", "TraceResult",
    "knob_table", "KnobBehaviour", "first_divergence", "Divergence", "locate_divergence",
    "divergence_clauses", "shrink_divergence",
    "divergence_finding", "unshrunk_finding", "PeerReport", "check_peer", "search_peer", "generated_traces", "generation_parts",
    "DEFAULT_TIMEOUT", "PROBES", "probe_traces", "describe_verdict",
]

DEFAULT_TIMEOUT = 10.0
"""Seconds an adapter may take to answer one request (after the previous answer) before it is
declared hung, killed and restarted."""

BUDGET_NOTE = "not run: the budget ran out"
"""The error of a request not sent, or not answered, before the deadline (Reply kind
``"skipped"``; a search leaves such traces out of its results)."""

START_GRACE = 10.0
"""Extra seconds allowed for the first answer after an adapter (re)starts (process start-up)."""

MAX_CONSECUTIVE_FAILURES = 5
"""After this many failed requests in a row (no good answer between them) the adapter is given up
and the remaining traces are reported as not run."""

PEERS_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "peers")
"""The project's folder of Node adapters (present in a source checkout)."""


class PeerError(Exception):
    """An adapter that cannot be used at all (unknown shortcut, missing program, Node packages not
    installed): one line for the user, exit 2."""


# --- adapters -----------------------------------------------------------------------------------

@dataclass(frozen=True)
class AdapterSpec:
    """How to start an adapter.

    Attributes:
        name: a short, stable name (used in finding ids): ``model-draft``,
            ``ag-ui-client-pipeline``,
            or ``peer`` for an arbitrary command.
        argv: the program and its arguments.
        label: the adapter as the user gave it (shown in reports).
        cwd: the working directory, or None for the current one.
    """

    name: str
    argv: tuple[str, ...]
    label: str
    cwd: Optional[str] = None


BUILTIN_ADAPTERS = {
    "model[:READING]": "the reference model (python -m counterexamples.model_adapter)",
    "ag-ui-client:reducer": "@ag-ui/client 1.0.0, its event reducer alone (Node)",
    "ag-ui-client:pipeline": "@ag-ui/client 1.0.0, the full agent pipeline via runAgent (Node)",
}
"""Shortcuts accepted by :func:`resolve_adapter`, with what they start."""


def node_peer_ready(folder: str = "ag-ui-client") -> Optional[str]:
    """None when the Node adapter in ``peers/<folder>`` can run; otherwise the reason it cannot
    (no ``node`` on PATH, folder missing, packages not installed)."""
    if shutil.which("node") is None:
        return "Node.js is not installed (no 'node' on PATH)"
    base = os.path.join(PEERS_DIR, folder)
    if not os.path.isfile(os.path.join(base, "adapter.mjs")):
        return f"{base}/adapter.mjs is missing (the Node adapters live in the source checkout)"
    if not os.path.isdir(os.path.join(base, "node_modules", "@ag-ui", "client")):
        return (f"the Node packages are not installed in {base} (run 'make peers', or "
                f"'npm ci' in that folder)")
    return None


def resolve_adapter(spec: str) -> AdapterSpec:
    """Turn ``--adapter`` into an :class:`AdapterSpec`.

    ``model`` or ``model:READING`` starts the reference model; ``ag-ui-client:reducer`` and
    ``ag-ui-client:pipeline`` start the Node adapter of ``peers/ag-ui-client``; anything else is a
    command line, split like a POSIX shell would (no shell is started).

    Raises:
        PeerError: an empty command, an unknown ``ag-ui-client`` mode, a reading that does not
            parse, the Node adapter not installed, or a program that is not found.
    """
    text = (spec or "").strip()
    if not text:
        raise PeerError("--adapter: empty command")
    if text == "model" or text.startswith("model:"):
        from model.readings import ReadingError, parse_reading
        reading_text = text.partition(":")[2] or "draft"
        try:
            reading = parse_reading(reading_text)
        except ReadingError as exc:
            raise PeerError(f"--adapter {text}: {exc}") from None
        name = "model-" + _slug(reading.name or "draft")
        return AdapterSpec(name, (sys.executable, "-m", "counterexamples.model_adapter",
                                  "--reading", reading_text), text)
    if text.startswith("ag-ui-client:") or text == "ag-ui-client":
        mode = text.partition(":")[2]
        if mode not in ("reducer", "pipeline"):
            raise PeerError(f"--adapter {text}: the mode is reducer or pipeline "
                            "(ag-ui-client:reducer, ag-ui-client:pipeline)")
        reason = node_peer_ready()
        if reason:
            raise PeerError(f"--adapter {text}: {reason}")
        base = os.path.join(PEERS_DIR, "ag-ui-client")
        return AdapterSpec(f"ag-ui-client-{mode}",
                           ("node", os.path.join(base, "adapter.mjs"), "--mode", mode), text, base)
    try:
        argv = tuple(shlex.split(text))
    except ValueError as exc:
        raise PeerError(f"--adapter: cannot split the command line: {exc}") from None
    if not argv:
        raise PeerError("--adapter: empty command")
    program = argv[0]
    if os.sep in program:
        if not os.path.isfile(program):
            raise PeerError(f"--adapter: {program}: no such file")
        if not os.access(program, os.X_OK):
            raise PeerError(f"--adapter: {program}: not executable")
    elif shutil.which(program) is None:
        raise PeerError(f"--adapter: {program}: command not found")
    return AdapterSpec(_command_name(argv), argv, text)


def _command_name(argv: Sequence[str]) -> str:
    """A short name for a custom adapter command, for finding ids (``PEER-<name>-<hash>``): the
    module after ``-m``, else the last argument naming an existing file (the script an
    interpreter runs), else the program, without directory and extension; ``peer`` when nothing
    usable is left."""
    if "-m" in argv[1:-1]:
        return _slug(argv[argv.index("-m") + 1].rsplit(".", 1)[-1])
    files = [a for a in argv[1:] if not a.startswith("-") and os.path.isfile(a)]
    chosen = os.path.basename(files[-1] if files else argv[0])
    return _slug(os.path.splitext(chosen)[0])


def _slug(text: str) -> str:
    """``text`` as the label of a finding id (:data:`counterexamples.findings.FINDING_ID`):
    lowercase ASCII letters and digits, every other run of characters one dash, at most 40."""
    out = "".join(c if c.isascii() and c.isalnum() else "-" for c in text.lower()).strip("-")
    while "--" in out:
        out = out.replace("--", "-")
    return out[:40] or "peer"


@dataclass
class Reply:
    """The outcome of one request.

    Attributes:
        kind: ``"ok"`` (a well-formed answer), ``"refused"`` (the adapter answered ``{"error"}``),
            ``"timeout"`` (no answer in time: killed and restarted), ``"crash"`` (the process
            exited), ``"garbage"`` (a line that is not a JSON object, or answers another request:
            restarted), ``"bad-response"`` (a JSON answer missing a required member or holding one
            of the wrong type) or ``"skipped"`` (not sent: the adapter kept failing).
        response: the answer (kind ``"ok"``), else None.
        error: what went wrong, in one line (kinds other than ``"ok"``).
        stderr: the adapter's last lines on stderr, for a crash or hang.
    """

    kind: str
    response: Optional[dict] = None
    error: str = ""
    stderr: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return self.kind == "ok"


_EOF = object()


class AdapterProcess:
    """One long-lived adapter process, restarted after a crash, hang or garbage line.

    Requests are written as JSON lines by a writer thread and answer lines collected by a reader
    thread, so a batch can be written in full before its answers are read (pipelining) without
    either side blocking, and an adapter that stops reading its input (a full pipe) costs the
    answer's ``--timeout``, never a hang of ours. Every answer must carry the ``id`` of its
    request, in order. Use as a context manager, or call :meth:`close`.

    Args:
        spec: what to start (:func:`resolve_adapter`).
        timeout: seconds for one answer, counted from the previous answer (default
            :data:`DEFAULT_TIMEOUT`); the first answer after a start gets :data:`START_GRACE` more.
        env: extra environment variables for the adapter.

    Raises:
        PeerError: from :meth:`start` when the program cannot be started at all.
    """

    def __init__(self, spec: AdapterSpec, timeout: float = DEFAULT_TIMEOUT,
                 env: Optional[dict] = None, start_grace: float = START_GRACE):
        self.spec = spec
        self.timeout = timeout
        self.start_grace = start_grace
        self.env = env
        self.proc: Optional[subprocess.Popen] = None
        self.lines: "queue.Queue" = queue.Queue()
        self.outbox: "queue.Queue" = queue.Queue()
        self.stderr_tail: deque = deque(maxlen=20)
        self.starts = 0
        self.requests = 0
        self.failures_in_a_row = 0
        self.peer_name: Optional[str] = None
        self.deadline: Optional[float] = None
        self.budget_hit = False
        self._counter = 0
        self._fresh = False

    def _left(self) -> float:
        """Seconds left before :attr:`deadline` (``inf`` without one)."""
        return float("inf") if self.deadline is None else self.deadline - time.monotonic()

    # lifecycle

    def start(self) -> None:
        """Start the process (a new process group, so that a hung adapter's children go too)."""
        env = dict(os.environ)
        if self.env:
            env.update(self.env)
        try:
            self.proc = subprocess.Popen(
                list(self.spec.argv), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=subprocess.PIPE, cwd=self.spec.cwd, env=env, text=True, encoding="utf-8",
                errors="replace", bufsize=1, start_new_session=True)
        except OSError as exc:
            raise PeerError(f"--adapter {self.spec.label}: cannot start "
                            f"{self.spec.argv[0]}: {exc.strerror}") from None
        self.starts += 1
        self._fresh = True
        self.lines = queue.Queue()
        self.outbox = queue.Queue()
        self.stderr_tail = deque(maxlen=20)
        proc, lines, tail = self.proc, self.lines, self.stderr_tail
        threading.Thread(target=_pump_lines, args=(proc.stdout, lines), daemon=True).start()
        threading.Thread(target=_pump_tail, args=(proc.stderr, tail), daemon=True).start()
        threading.Thread(target=_pump_requests, args=(proc.stdin, self.outbox),
                         daemon=True).start()

    def _stop(self, term_first: bool = False) -> Optional[int]:
        """Kill the adapter's whole process group (its children too, even when the adapter itself
        has already exited) and reap it; the exit status (None if it was never started).
        ``term_first``: send SIGTERM and allow a short grace before SIGKILL."""
        proc, self.proc = self.proc, None
        if proc is None:
            return None
        if term_first:
            _signal_group(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=0.3)
            except subprocess.TimeoutExpired:
                pass
            time.sleep(0.05)
        _signal_group(proc.pid, signal.SIGKILL)
        try:
            return proc.wait(timeout=5)
        except subprocess.TimeoutExpired:  # pragma: no cover - SIGKILL does not fail
            return None

    def close(self) -> None:
        """End of input for the adapter; wait up to 2 s for it to exit (less when the deadline is
        nearer), then terminate its whole process group (processes it left behind included)."""
        proc = self.proc
        if proc is None:
            return
        self.outbox.put(None)  # the writer closes stdin once what is queued is written
        try:
            proc.wait(timeout=max(0.2, min(2.0, self._left())))
        except subprocess.TimeoutExpired:
            pass
        self._stop(term_first=True)

    def __enter__(self) -> "AdapterProcess":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # requests

    def request(self, events: Sequence[dict], state: Any = None, label: str = "") -> Reply:
        """Send one trace (wire events, optional initial agent state); its :class:`Reply`."""
        return self.request_many([(events, state, label)])[0]

    def request_many(self, items: Sequence[tuple[Sequence[dict], Any, str]]) -> list[Reply]:
        """Send a batch of ``(wire events, initial state or None, label)`` and return one
        :class:`Reply` per item, in order. A failure affects only the item being answered; the
        adapter is restarted and the rest of the batch resent."""
        replies: list[Reply] = []
        pending = list(items)
        while pending:
            if self._left() <= 0:
                self.budget_hit = True
                replies.extend(Reply("skipped", error=BUDGET_NOTE) for _ in pending)
                break
            if self.failures_in_a_row >= MAX_CONSECUTIVE_FAILURES:
                note = (f"not run: the adapter failed {self.failures_in_a_row} requests in a "
                        "row and was given up")
                replies.extend(Reply("skipped", error=note) for _ in pending)
                break
            if self.proc is None or self.proc.poll() is not None:
                if self.proc is not None:
                    self._stop()
                self.start()
            ids = []
            for events, state, label in pending:
                self._counter += 1
                rid = f"{self._counter}" + (f":{label}" if label else "")
                ids.append(rid)
                request: dict = {"id": rid, "events": list(events)}
                if state is not None:
                    request["state"] = state
                if not self._write(json.dumps(request, ensure_ascii=False,
                                              separators=(",", ":"))):
                    break
            done = 0
            restart = False
            for rid in ids:
                reply, restart = self._await(rid)
                replies.append(reply)
                done += 1
                self.requests += 1
                # an answer in step (ok, refused, or unusable for that trace: no restart) is
                # no failure of the process: only what needs a restart (a crash, a hang,
                # garbage) counts towards giving it up
                self.failures_in_a_row = self.failures_in_a_row + 1 if restart else 0
                if restart:
                    self._stop()
                    break
            pending = pending[done:]
            if not restart and pending:  # a write failed before every item was sent
                continue
        return replies

    def _write(self, line: str) -> bool:
        """Queue one request line for the writer thread (never blocks); a write that fails
        shows as the adapter's crash or timeout when its answer is awaited."""
        self.outbox.put(line + "\n")
        return True

    def _await(self, rid: str) -> tuple[Reply, bool]:
        """Wait for the answer to ``rid``, never past :attr:`deadline`; ``(reply, restart
        needed)``."""
        limit = self.timeout + (self.start_grace if self._fresh else 0.0)
        left = self._left()
        try:
            line = self.lines.get(timeout=max(0.0, min(limit, left)))
        except queue.Empty:
            if left < limit:
                self.budget_hit = True
                return Reply("skipped", error=BUDGET_NOTE), True
            return Reply("timeout", error=f"no answer within {limit:g} s; the adapter was "
                                          "stopped and restarted",
                         stderr=tuple(self.stderr_tail)), True
        self._fresh = False
        if line is _EOF:
            status = None
            if self.proc is not None:
                try:
                    status = self.proc.wait(timeout=2)
                except subprocess.TimeoutExpired:
                    status = None
            time.sleep(0.05)  # let the stderr pump catch the last lines
            how = f"exit status {status}" if status is not None and status >= 0 else \
                (f"killed by signal {-status}" if status is not None else "closed its output")
            tail = tuple(self.stderr_tail)
            last = f"; stderr: {tail[-1]}" if tail else ""
            return Reply("crash", error=f"the adapter stopped ({how}) before answering{last}",
                         stderr=tail), True
        try:
            response = loads_json(line)
        except json.JSONDecodeError as exc:
            text = line.strip()
            if text.startswith("{") and text.endswith("}"):
                # one whole line, so still in step: an answer of that trace, not JSON the
                # model can compare (NaN, a number too long or out of range, nesting too deep)
                return Reply("bad-response", error=f"answer is not strict JSON ({exc.msg})"), \
                    False
            return Reply("garbage", error=f"answer is not JSON ({exc.msg}): "
                                          f"{text[:120]!r}"), True
        if not isinstance(response, dict):
            return Reply("garbage", error=f"answer is not a JSON object: {line.strip()[:120]!r}"), \
                True
        if response.get("id") != rid:
            return Reply("garbage", error=f"answer carries id {str(response.get('id'))[:120]!r}, "
                                          f"expected {rid!r} (answers must come in request "
                                          "order)"), True
        if "error" in response:
            return Reply("refused", error=f"the adapter could not process the trace: "
                                          f"{str(response['error'])[:300]}"), False
        problem = _check_response(response)
        if problem:
            return Reply("bad-response", error=problem), False
        if self.peer_name is None and isinstance(response.get("peer"), str):
            self.peer_name = response["peer"]
        return Reply("ok", response=response), False


def _signal_group(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _pump_lines(stream, lines: "queue.Queue") -> None:
    try:
        for line in stream:
            if line.strip():
                lines.put(line)
    except (OSError, ValueError):
        pass
    lines.put(_EOF)


def _pump_requests(stream, outbox: "queue.Queue") -> None:
    """The writer thread: write each queued line to the adapter's stdin until None (then close
    it) or a write fails (the adapter exited or was killed)."""
    try:
        for line in iter(outbox.get, None):
            stream.write(line)
            stream.flush()
    except (OSError, ValueError):
        return
    try:
        stream.close()
    except (OSError, ValueError):
        pass


def _pump_tail(stream, tail: deque) -> None:
    try:
        for line in stream:
            tail.append(line.rstrip("\n")[:300])
    except (OSError, ValueError):
        pass


def _check_response(r: dict) -> Optional[str]:
    """None when an answer has the members the protocol requires, else what is wrong."""
    if not isinstance(r.get("messages"), list) or not all(
            isinstance(m, dict) and isinstance(m.get("id"), str) for m in r["messages"]):
        return "answer needs 'messages', an array of message objects, each with a string 'id'"
    if "fatal" not in r:
        return "answer needs 'fatal' (null, or an object)"
    fatal = r["fatal"]
    if fatal is not None and fatal is not True and not isinstance(fatal, dict):
        return "'fatal' must be null, true or an object"
    if isinstance(fatal, dict) and "atEvent" in fatal and (
            not isinstance(fatal["atEvent"], int) or isinstance(fatal["atEvent"], bool)):
        return "'fatal.atEvent' must be an integer event index"
    warnings = r.get("warnings")
    if warnings is not None and (not isinstance(warnings, list) or not all(
            isinstance(w, dict) and isinstance(w.get("code"), str) for w in warnings)):
        return "'warnings' must be null (not observed) or an array of {code, messageId, atEvent}"
    run_input = r.get("runInput")
    if run_input is not None and (not isinstance(run_input, list)
                                  or not all(isinstance(m, dict) for m in run_input)):
        return "'runInput' must be null (not observed) or an array of message objects"
    return None


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


# --- what is compared ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Observed:
    """Which parts of a verdict an answer makes comparable.

    ``messages`` and ``fatal`` always; ``fatal_at`` when the peer places its failure at an event
    (``fatal.atEvent``); ``warnings`` when the answer lists them (in activity-check's codes; null
    means not observable); ``run_input`` and ``state`` when the answer gives them (not null);
    ``fatal_code`` and ``fatal_clause`` when its failure names its cause (a ``code`` that is one
    of activity-check's codes, :data:`model.codes.CODES`; a string ``clause`` id): then the
    cause is compared too, so a peer that fails at the right event for another reason
    diverges."""

    fatal_at: bool
    warnings: bool
    run_input: bool
    state: bool
    fatal_code: bool = False
    fatal_clause: bool = False

    FIELDS = ("fatal_at", "warnings", "run_input", "state", "fatal_code", "fatal_clause")

    def names(self) -> list[str]:
        """The compared parts, as the report lists them."""
        cause = [n for n, on in (("atEvent", self.fatal_at), ("code", self.fatal_code),
                                 ("clause", self.fatal_clause)) if on]
        out = ["messages", "fatal" + (f" (with {', '.join(cause)})" if cause else " (yes/no)")]
        out += [n for n, on in (("warnings (code, messageId, atEvent)", self.warnings),
                                ("runInput", self.run_input), ("state", self.state)) if on]
        return out


def observed_of(response: dict) -> Observed:
    """The :class:`Observed` parts of one answer."""
    fatal = response.get("fatal")
    named = isinstance(fatal, dict)
    return Observed(fatal_at=named and isinstance(fatal.get("atEvent"), int),
                    warnings=isinstance(response.get("warnings"), list),
                    run_input=isinstance(response.get("runInput"), list),
                    state=response.get("state") is not None,
                    fatal_code=named and fatal.get("code") in CODES,
                    fatal_clause=named and isinstance(fatal.get("clause"), str))




def _fatal_view(fatal: Any, observed: "Observed") -> Any:
    """A verdict's ``fatal`` as compared: None when the run did not fail; else the members the
    answer gives of ``atEvent``, ``code`` and ``clause`` (``observed``), else True. Any object
    is a failure (the protocol's "otherwise an object": ``{}`` says the run failed, not where),
    as is ``true``."""
    if fatal is None or fatal is False:
        return None
    named = fatal if isinstance(fatal, dict) else {}
    view = {key: named.get(key) for key, on in (("atEvent", observed.fatal_at),
                                                ("code", observed.fatal_code),
                                                ("clause", observed.fatal_clause)) if on}
    return view or True


def view_of(verdict: dict, observed: Observed) -> dict:
    """The comparable view of a verdict (the model's :meth:`~model.verdict.Verdict.to_json`, or a
    peer's answer): messages, fatal, and the optional parts ``observed`` names. Values are kept
    as canonical JSON text (:func:`model.json_values.freeze`: member order and ``1`` vs ``1.0``
    do not matter)."""
    view = {"messages": freeze(verdict.get("messages", [])),
            "fatal": freeze(_fatal_view(verdict.get("fatal"), observed))}
    if observed.warnings:
        view["warnings"] = freeze([{"code": w.get("code"), "messageId": w.get("messageId"),
                                    "atEvent": w.get("atEvent")}
                                   for w in verdict.get("warnings") or []])
    if observed.run_input:
        view["runInput"] = freeze(verdict.get("runInput") or [])
    if observed.state:
        view["state"] = freeze(verdict.get("state"))
    return view


# --- classification -----------------------------------------------------------------------------

@dataclass
class Classification:
    """How a peer's answer on one trace relates to the model.

    Attributes:
        kind: ``"draft"`` (the draft reading gives the peer's verdict), ``"reading"`` (another
            reading does; not draft), ``"divergence"`` (no reading does) or ``"error"`` (no usable
            answer; see ``error``).
        readings: for ``"draft"``/``"reading"``: every leaf assignment whose verdict the peer
            gives, as text (``"Q1=ignore"``; ``"(any reading)"``).
        matches: the matching leaf assignments (``{knob id: option}``).
        aspects: the parts where the peer differs from draft (see :func:`_aspects`); for a
            divergence, from the nearest reading (``nearest``).
        nearest: for ``"divergence"``: the leaf assignment whose verdict the peer's differs from
            in the fewest parts, as text (draft's when tied); ``nearest_assignment``: the same as
            ``{knob id: option}``.
        error: for ``"error"``: what went wrong.
        leaves: every ``(assignment, verdict)`` of the model on the trace.
        divergent: for ``"divergence"``: the parts of the verdict (``messages``, ``fatal``,
            ``warnings``, ``runInput``, ``state``, in that order) that no reading gives as the
            peer does, each a divergence of its own; ``["combined"]`` (:data:`COMBINED`) when
            every part alone is some reading's and only their combination is none's.
    """

    kind: str
    readings: list[str] = field(default_factory=list)
    matches: list[dict] = field(default_factory=list)
    aspects: list[str] = field(default_factory=list)
    nearest: str = ""
    nearest_assignment: dict = field(default_factory=dict)
    error: str = ""
    leaves: list = field(default_factory=list)
    divergent: list[str] = field(default_factory=list)


COMBINED = "combined"
"""The part named for a divergence that no single part of the verdict shows (each part is some
reading's; their combination is none's)."""

PARTS = ("messages", "fatal", "warnings", "runInput", "state")
"""The parts of a verdict a divergence is split by, in report order."""


def _part(view: dict, part: Optional[str]) -> dict:
    """``view`` restricted to one part (None: the whole view)."""
    if part is None:
        return view
    return {part: view[part]} if part in view else {}


def classify(events: Sequence[Event], reply: Reply, state: Any = None,
             context: Optional[Sequence[dict]] = None,
             part: Optional[str] = None) -> Classification:
    """Classify one answer against every reading of the model on ``events`` (from a consumer
    holding agent state ``state``).

    Args:
        context: for a divergence, look for the nearest reading among the leaves consistent with
            one of these assignments first (the readings the peer agreed with on a shorter
            prefix), then among all.
        part: compare only this part of the verdict (one of :data:`PARTS`; None: all of it), as
            the search does for a divergence in that part alone.

    Returns:
        A :class:`Classification`; kind ``"error"`` when ``reply`` is not ``"ok"``.
    """
    if not reply.ok:
        return Classification("error", error=f"{reply.kind}: {reply.error}")
    start = initial_state(state)
    try:
        leaves = reading_leaves(events, start)
    except RuntimeError as exc:  # the guard against runaway forking
        return Classification("error", error=f"model: {exc}")
    observed = observed_of(reply.response)
    whole = view_of(reply.response, observed)
    full = [view_of(v.to_json(detail=False), observed) for _, v in leaves]
    peer = _part(whole, part)
    views = [_part(v, part) for v in full]
    matches = [a for (a, _), view in zip(leaves, views) if view == peer]
    aspects = _aspects(views[0], peer)
    if not matches:
        # The nearest reading: the leaf the peer differs from in the fewest parts of the whole
        # verdict (draft first), preferring leaves consistent with the context.
        pool = [i for i, (a, _) in enumerate(leaves)
                if context and any(_consistent(a, c) for c in context)] or range(len(leaves))
        best = min(pool, key=lambda i: (len(_aspects(views[i], peer)),
                                        len(_aspects(full[i], whole)), i))
        divergent = [p for p in PARTS if p in peer and all(v.get(p) != peer[p] for v in views)]
        return Classification("divergence", aspects=_aspects(views[best], peer),
                              nearest=describe_assignment(leaves[best][0]),
                              nearest_assignment=dict(leaves[best][0]), leaves=leaves,
                              divergent=divergent or [COMBINED])
    draft = DRAFT.as_dict()
    kind = "draft" if any(all(draft[k] == v for k, v in a.items()) for a in matches) else "reading"
    return Classification(kind, [describe_assignment(a) for a in matches], matches, aspects,
                          leaves=leaves)


def _consistent(a: dict, b: dict) -> bool:
    """True when two partial assignments agree on every knob both fix."""
    return all(b[k] == v for k, v in a.items() if k in b)


def _aspects(model: dict, peer: dict) -> list[str]:
    """Where two views differ: ``fatal``, ``warnings``, ``runInput``, ``state``, and for messages
    ``messages.missing`` / ``messages.extra`` / ``messages.order`` or
    ``messages.<member>`` (``content``, ``activityType``, ``metadata``, ``subagentRunId``,
    ``role``...)."""
    out = [k for k in ("fatal", "warnings", "runInput", "state")
           if k in model and model.get(k) != peer.get(k)]
    if "messages" in model and model["messages"] != peer.get("messages"):
        mine = json.loads(model["messages"])
        theirs = json.loads(peer["messages"])
        a = {m.get("id"): m for m in mine}
        b = {m.get("id"): m for m in theirs}
        parts = []
        if a.keys() - b.keys():
            parts.append("messages.missing")
        if b.keys() - a.keys():
            parts.append("messages.extra")
        common = [i for i in a if i in b]
        if [i for i in (m.get("id") for m in theirs) if i in a] != common:
            parts.append("messages.order")
        members = set()
        for i in common:
            for key in set(a[i]) | set(b[i]):
                if freeze(a[i].get(key)) != freeze(b[i].get(key)):
                    members.add(key)
        parts.extend(f"messages.{k}" for k in sorted(members))
        out = (parts or ["messages"]) + out
    return out


# --- per-knob behaviour -------------------------------------------------------------------------

@dataclass
class KnobBehaviour:
    """What the traces say about one knob.

    Attributes:
        knob: the knob id.
        status: ``"determined"`` (one option fits every separating trace), ``"undetermined"``
            (several options fit every separating trace), ``"inconsistent"`` (no single option fits
            them all: the peer is not any one option of this knob) or ``"no-evidence"`` (no
            trace separates the options on which the peer agrees with some reading).
        options: the options that fit every separating trace.
        evidence: ``{trace id: [options that fit that trace]}`` for the separating traces.
    """

    knob: str
    status: str
    options: list[str]
    evidence: dict[str, list[str]]

    @property
    def behaves_as(self) -> Optional[str]:
        """The option, when determined."""
        return self.options[0] if self.status == "determined" else None


def knob_table(results: Sequence["TraceResult"],
               joint: Optional["JointReadings"] = None) -> list[KnobBehaviour]:
    """For each knob, the options the peer behaves as, inferred jointly
    (:func:`joint_readings`): an option is the peer's when some reading consistent with every
    trace the peer answered has it, so that a knob no single trace separates is still
    determined when the other traces rule out the readings that would explain it otherwise.

    ``evidence`` lists the traces that separate the knob alone: the readings the peer agrees
    with on the trace do not cover every option of it (an option fits the trace when some
    matching leaf fixes the knob to it; a leaf that leaves the knob open fits every option);
    when none does, the traces after which the joint inference narrowed the knob's options
    (with the options then left). A knob no single option fits on every separating trace is
    ``inconsistent``; one with all its options left and no such trace ``no-evidence``.
    Divergent traces and errors say nothing. ``joint``: :func:`joint_readings` of the results,
    when already computed."""
    joint = joint if joint is not None else joint_readings(evidence_of(results))
    table = []
    for knob in KNOBS:
        every = list(knob.option_names)
        evidence: dict[str, list[str]] = {}
        for r in results:
            c = r.classification
            if c.kind not in ("draft", "reading"):
                continue
            fit: set[str] = set()
            for a in c.matches:
                fit.update([a[knob.id]] if knob.id in a else every)
            if fit and len(fit) < len(every):
                evidence[r.trace.id] = [o for o in every if o in fit]
        alone = [o for o in every if all(o in fit for fit in evidence.values())]
        options = joint.options(knob.id)
        if evidence and not alone:
            table.append(KnobBehaviour(knob.id, "inconsistent", [], evidence))
            continue
        if not evidence:
            evidence = dict(joint.narrowed.get(knob.id, {}))
        if len(options) == len(every) and not evidence:
            table.append(KnobBehaviour(knob.id, "no-evidence", every, {}))
            continue
        status = "determined" if len(options) == 1 else "undetermined"
        table.append(KnobBehaviour(knob.id, status, options, evidence))
    return table


# --- joint inference of the peer's reading ------------------------------------------------------

@dataclass
class JointReadings:
    """The readings consistent with every trace a peer answered (:func:`joint_readings`).

    Attributes:
        assignments: partial assignments ``{knob id: option}``, most general first, none
            implied by another: a reading is consistent with the traces taken exactly when it
            agrees with one of them on every knob that one fixes (``[{}]``: every reading).
        taken: how many traces constrained the inference (the others agreed with every reading
            or were set aside).
        conflicts: ids of the traces set aside, in order: no reading consistent with the
            traces taken before gives the peer's verdict on them (the peer is not one reading
            of the model there; the knob table shows the knob as ``inconsistent`` when a single
            knob is at fault), or the assignments would have outgrown ``cap``.
        narrowed: ``{knob id: {trace id: options left}}``: the traces after which a knob's
            options narrowed, and what was left.
    """

    assignments: list[dict] = field(default_factory=lambda: [{}])
    taken: int = 0
    conflicts: list[str] = field(default_factory=list)
    narrowed: dict[str, dict[str, list[str]]] = field(default_factory=dict)

    def options(self, knob_id: str) -> list[str]:
        """The options of ``knob_id`` some consistent reading has, in the knob's order."""
        every = KNOB_BY_ID[knob_id].option_names
        found = set()
        for a in self.assignments:
            if knob_id not in a:
                return list(every)
            found.add(a[knob_id])
        return [o for o in every if o in found]

    def consistent(self, assignment: dict) -> bool:
        """True when the (partial) ``assignment`` agrees with some consistent reading."""
        return any(_consistent(a, assignment) for a in self.assignments)

    def to_json(self) -> dict:
        """``{"assignments": [{knob: option}], "taken", "conflicts", "narrowed"}``."""
        return {"assignments": [dict(a) for a in self.assignments], "taken": self.taken,
                "conflicts": list(self.conflicts), "narrowed": self.narrowed}


JOINT_CAP = 4096
"""The most partial assignments :func:`joint_readings` keeps; a trace that would make more is
set aside (listed in ``conflicts``)."""

_KNOB_ORDER = {k.id: i for i, k in enumerate(KNOBS)}


def evidence_of(results: Sequence["TraceResult"]) -> list[tuple[str, list[dict]]]:
    """``[(trace id, matching leaf assignments)]`` of the traces on which the peer agrees with
    some reading (classes ``draft`` and ``reading``), in order: the input of
    :func:`joint_readings`."""
    return [(r.trace.id, r.classification.matches) for r in results
            if r.classification.kind in ("draft", "reading")]


def _key(assignment: frozenset) -> tuple:
    return len(assignment), sorted((_KNOB_ORDER[k], o) for k, o in assignment)


def _simplify(assignments: set) -> list[frozenset]:
    """The same set of readings with as few, as general assignments as this finds: assignments
    that differ only in one knob and together cover all its options become one without that
    knob (repeated), and an assignment implied by a more general one is dropped. Sorted (most
    general first, then in knob order), so that the result does not depend on hashing."""
    current = set(assignments)
    while True:
        merged = set()
        for a in current:
            for knob, option in a:
                rest = a - {(knob, option)}
                every = KNOB_BY_ID[knob].option_names
                if all(rest | {(knob, o)} in current for o in every):
                    merged.add(rest)
        if not merged - current:
            break
        current |= merged
    kept: list[frozenset] = []
    for a in sorted(current, key=_key):
        if not any(k <= a for k in kept):
            kept.append(a)
    return kept


def joint_readings(evidence: Sequence[tuple[str, Sequence[dict]]],
                   cap: int = JOINT_CAP) -> JointReadings:
    """The readings consistent with every trace of ``evidence`` jointly.

    Args:
        evidence: ``[(trace id, assignments)]`` (:func:`evidence_of`): for each trace the
            partial assignments ``{knob id: option}`` whose verdict the peer gave there (any
            reading extending one of them gives it). Taken in order.
        cap: the most assignments kept (:data:`JOINT_CAP`).

    Returns:
        A :class:`JointReadings`: the intersection, over the traces, of the readings each
        allows, as partial assignments. A trace that would leave no reading (or more than
        ``cap`` assignments) is set aside and listed in ``conflicts``; the result is then the
        readings consistent with every other trace. Deterministic: the same evidence in the
        same order gives the same result, whatever the hash seed.
    """
    out = JointReadings()
    current: list[frozenset] = [frozenset()]
    options = {k.id: list(k.option_names) for k in KNOBS}
    for trace_id, matches in evidence:
        allowed = _simplify({frozenset(m.items()) for m in matches})
        if not allowed or not allowed[0]:
            continue  # every reading (or a trace that says nothing)
        if all(any(m <= a for m in allowed) for a in current):
            out.taken += 1  # already implied by the traces before
            continue
        new = set()
        for a in current:
            fixed = dict(a)
            for m in allowed:
                if all(fixed.get(k, o) == o for k, o in m):
                    new.add(a | m)
        merged = _simplify(new) if new else []
        if not merged or len(merged) > cap:
            out.conflicts.append(trace_id)
            continue
        current = merged
        out.taken += 1
        out.assignments = [dict(sorted(a, key=lambda kv: _KNOB_ORDER[kv[0]])) for a in current]
        for knob_id, before in options.items():
            now = out.options(knob_id)
            if now != before:
                out.narrowed.setdefault(knob_id, {})[trace_id] = now
                options[knob_id] = now
    return out


# --- divergences: where, which clauses, shrinking -----------------------------------------------

PREFIX_SAMPLES = 16
"""How many prefixes of a trace one round of :func:`first_divergence` puts to the peer (one
batch): a trace this long or shorter has every prefix run at once."""


def first_divergence(adapter: AdapterProcess, trace: PeerTrace, part: Optional[str] = None
                     ) -> Optional[tuple[int, Classification]]:
    """Where the peer first agrees with no reading, found by a bisection of the prefixes with
    :data:`PREFIX_SAMPLES` of them a round (one batch each): the first sample that diverges and
    the sample before it bound the first divergent prefix, until they are adjacent. A trace of
    at most :data:`PREFIX_SAMPLES` events has every prefix run in one round; a 2,000-event
    trace takes three rounds (about 40 prefixes) rather than 2,000. The nearest reading at the
    divergent prefix is sought first among those the peer agreed with one event before (the
    last round runs every prefix of its span, so that one is known).

    The bisection finds the first divergent prefix when a peer that agrees with no reading on a
    prefix agrees with none on any longer one either; a peer that a later event brings back to
    some reading may have an earlier divergence than the one found, which is still a prefix on
    which the peer goes from agreeing with some reading to agreeing with none.

    ``part`` (one of :data:`PARTS`): where the peer first agrees with no reading on that part
    of the verdict alone.

    Returns:
        ``(index of the last event of the first divergent prefix, that prefix's
        Classification)``, or None when the whole trace does not diverge (or the peer fails on
        every prefix put to it).
    """
    lo, lo_matches = 0, []  # a prefix length known not to diverge (0: none), its matches
    hi, hi_found = len(trace.wire), None  # the shortest prefix known to diverge (None: not yet)
    while True:
        span = hi - lo
        dense = span <= PREFIX_SAMPLES
        lengths = list(range(lo + 1, hi + 1)) if dense else sorted(
            {lo + span * k // PREFIX_SAMPLES for k in range(1, PREFIX_SAMPLES + 1)})
        if hi_found is not None and not dense:
            lengths = lengths[:-1]  # hi: known to diverge
        replies = adapter.request_many([(trace.wire[:n], trace.state, f"{trace.id}[:{n}]")
                                        for n in lengths])
        found, before, context = None, lo, lo_matches
        for n, reply in zip(lengths, replies):
            c = classify(trace.events[:n], reply, trace.state, context, part)
            if c.kind == "divergence":
                found = (n, c)
                break
            before, context = n, c.matches
        found = found or hi_found
        if found is None:
            return None
        n, c = found
        if n == before + 1 or dense:
            return n - 1, c
        lo, lo_matches, hi, hi_found = before, context, n, found


@dataclass(frozen=True)
class Divergence:
    """Where and how a peer parts from every reading on a trace.

    Attributes:
        index: the event after which it first agrees with no reading.
        nearest: the nearest reading there (as text); aspects: where it differs from it.
        branch: the nearest reading's step branch at that event; clauses: the clauses the
            divergence breaks; related: clauses the draft's warnings cite before it (see
            :func:`divergence_clauses`).
    """

    index: int
    nearest: str
    aspects: tuple[str, ...]
    branch: str
    clauses: tuple[str, ...]
    related: tuple[str, ...]

    @property
    def signature(self) -> tuple:
        """See :func:`_signature`."""
        return _signature(self.branch, self.aspects)


def locate_divergence(adapter: AdapterProcess, trace: PeerTrace, part: Optional[str] = None
                      ) -> Optional[Divergence]:
    """The :class:`Divergence` of ``trace`` (:func:`first_divergence`, then
    :func:`divergence_clauses`), on one ``part`` of the verdict (None: all of it), or None when
    the peer diverges on no prefix."""
    found = first_divergence(adapter, trace, part)
    if found is None:
        return None
    index, c = found
    branch, clauses, related = divergence_clauses(trace.events, index, c.aspects, trace.state,
                                                  c.nearest_assignment)
    return Divergence(index, c.nearest, tuple(c.aspects), branch, tuple(clauses), tuple(related))


_ASPECT_PREFIXES = {
    "messages.metadata": ("MET-", "ACT-SNAP-KEEP-METADATA"),
    "messages.subagentRunId": ("ACT-ATTR-", "SUB-"),
    "state": ("SNP-", "STA-"),
    "runInput": ("ACT-STRIP-RUNINPUT", "RIN-", "SCH-RUN-INPUT"),
}


def divergence_clauses(events: Sequence[Event], index: int, aspects: Sequence[str],
                       state: Any = None, assignment: Optional[dict] = None
                       ) -> tuple[str, list[str], list[str]]:
    """The consumer's step branch at event ``index`` and the clauses a divergence there breaks.

    The consumer is the model under the nearest reading (``assignment``, a partial assignment
    completed with draft; default draft itself), so that a peer already following another
    reading before the divergence is judged where that reading's consumer stands. The branch is
    the one that consumer's step returns on (the record of the trace fold,
    :func:`model.verdict.fold`, at ``index``; ``lifecycle.halted`` when that reading failed
    the run at an earlier event).

    The clauses are those the branch implements (:data:`model.branches.BRANCHES`), narrowed to the
    differing aspects where that leaves any (metadata: MET-*; attribution: ACT-ATTR-*, SUB-*;
    agent state: SNP-*, STA-*), plus the clauses the model's own warnings and fatal at that event
    cite; the stripping rules when only the run input differs; and, when the peer fails the run
    where the model does not, the duty to accept every described event (EVX-ACCEPT-FAMILIES).
    The *related* clauses are those the model's warnings cite at earlier events: a peer that
    fails later often parted from the model at an event the model tolerated (a skipped text
    event, say).

    Returns:
        ``(branch name, clause ids, related clause ids)``.
    """
    from model.readings import PartialReading
    reading = PartialReading(assignment or {}).complete()
    records = fold(events[:index + 1], reading, initial_state(state))
    if index < len(records):
        record = records[index]
    else:  # the reading failed the run earlier: its halted consumer's step, as the model names it
        record = step_record(index, records[-1].after, events[index], reading)
    branch, warnings, fatal = record.branch, record.warnings, record.fatal
    clauses = list(BRANCHES.get(branch, ()))
    prefixes = tuple(p for a in aspects for p in _ASPECT_PREFIXES.get(a, ()))
    if prefixes and all(a in _ASPECT_PREFIXES for a in aspects) and \
            not ("runInput" in aspects and len(aspects) == 1):
        narrowed = [c for c in clauses if c.startswith(prefixes)]
        extra = [p for p in prefixes if not p.endswith("-") and p not in narrowed]
        clauses = narrowed + extra if narrowed or extra else clauses
    if "runInput" in aspects and not any(a.startswith("messages") for a in aspects):
        # the run input differs while the messages agree: the stripping rule itself
        clauses += [c for c in ("ACT-STRIP-RUNINPUT", "RIN-STRIP-ACTIVITY") if c not in clauses]
    if "fatal" in aspects and fatal is None and "EVX-ACCEPT-FAMILIES" not in clauses:
        clauses.append("EVX-ACCEPT-FAMILIES")
    cited = [w.clause for w in warnings] + ([fatal.clause] if fatal else [])
    for c in cited:
        if c not in clauses:
            clauses.append(c)
    related: list[str] = []
    for w in (w for r in records[:index] for w in r.warnings):
        if w.clause not in clauses and w.clause not in related:
            related.append(w.clause)
    return branch, clauses, related


def _signature(branch: str, aspects: Sequence[str]) -> tuple:
    """What makes two divergences the same for a search: the model's branch of the step where the
    peer parts from every reading (which says what kind of event met what), and which parts of the
    verdict differ (messages, fatal, run input, state, warnings; not which message members)."""
    return branch, tuple(sorted({a.split(".")[0] for a in aspects}))


def shrink_divergence(adapter: AdapterProcess, trace: PeerTrace,
                      holds: Optional[Callable[[tuple[dict, ...]], bool]] = None,
                      part: Optional[str] = None) -> tuple[dict, ...]:
    """Shrink a divergent trace by re-running the peer on smaller candidates: the canonical
    minimisation to a fixpoint (:func:`counterexamples.shrink.minimise`: delta debugging to a
    1-minimal trace, optional members dropped, names unified, patch operations and content
    members dropped, payloads made plain, repeated until a whole round changes nothing), then
    canonical names (:func:`~counterexamples.shrink.canonical_names`). A candidate is kept only
    while the peer still diverges *the same way*: same :attr:`Divergence.signature` (the
    model's branch and differing parts where it first parts from every reading, located by
    :func:`first_divergence`), so that shrinking does not slide onto another divergence.
    Candidates are memoised.

    Args:
        holds: another predicate over wire events to preserve instead (optional).
        part: shrink the divergence in this part of the verdict alone (one of :data:`PARTS`;
            None: the whole verdict), so that each part gets its own witness.

    Returns:
        The shrunk wire events (the input itself when it does not diverge).
    """
    from counterexamples.shrink import canonical_names, minimise
    cache: dict[str, bool] = {}
    original = locate_divergence(adapter, trace, part) if holds is None else None
    if holds is None and original is None:
        return trace.wire

    def same_divergence(wire: tuple[dict, ...]) -> bool:
        if not wire:
            return False
        key = json.dumps(list(wire), sort_keys=True)
        if key not in cache:
            try:
                events = parse_events(wire)
            except TraceFormatError:
                cache[key] = False
                return False
            candidate = PeerTrace(f"{trace.id}~shrink", tuple(wire), events, trace.state)
            found = locate_divergence(adapter, candidate, part)
            cache[key] = found is not None and found.signature == original.signature
        return cache[key]

    test = holds or same_divergence
    if not test(trace.wire):
        return trace.wire

    def typed(evs: tuple[Event, ...]) -> bool:
        return test(tuple(e.to_wire() for e in evs))

    start = parse_events(trace.wire)
    if not typed(start):  # the events as the model writes them back no longer show it
        return trace.wire
    events = minimise(start, typed)
    wire = tuple(e.to_wire() for e in events)
    renamed = tuple(e.to_wire() for e in canonical_names(events))
    if renamed != wire and test(renamed):
        wire = renamed
    return wire


def describe_verdict(verdict: dict) -> str:
    """A verdict in a few words: the model's (:meth:`model.verdict.Verdict.to_json`) or a peer's
    answer (messages with type, content, metadata and owner; whether and where the run fails; the
    ids of the next run input)."""
    parts = []
    for m in verdict.get("messages", []):
        bits = [f"{m.get('id')} ({m.get('role')})"]
        if m.get("role") == "activity":
            bits.append(f"type {m.get('activityType')} content "
                        f"{json.dumps(m.get('content'), sort_keys=True)}")
        if "metadata" in m:
            bits.append(f"metadata {json.dumps(m['metadata'], sort_keys=True)}")
        if "subagentRunId" in m:
            bits.append(f"owner {m['subagentRunId']}")
        parts.append(" ".join(bits))
    text = "messages: " + ("; ".join(parts) if parts else "none")
    fatal = verdict.get("fatal")
    if fatal is not None and fatal is not False:
        where = f" at event {fatal['atEvent']}" if isinstance(fatal, dict) and \
            "atEvent" in fatal else ""
        code = f" {fatal['code']}" if isinstance(fatal, dict) and fatal.get("code") else ""
        text += f"; the run fails{where}{code}"
    else:
        text += "; no failure"
    if verdict.get("runInput") is not None:
        text += f"; next run input {[m.get('id') for m in verdict['runInput']]}"
    return text


def divergence_finding(adapter: AdapterProcess, trace: PeerTrace, wire: Sequence[dict],
                       source: str, part: Optional[str] = None) -> PeerDivergenceFinding:
    """The finding for a (shrunk) divergent trace
    (:class:`counterexamples.findings.PeerDivergenceFinding`).

    Its document's members: ``id`` (``PEER-<adapter>-<hash>``, a hash of the adapter name, the
    trace and the initial agent state: :meth:`~counterexamples.findings.Finding.id_for`),
    ``kind`` (``"peer-divergence"``; and ``shrunk``: true here, :func:`unshrunk_finding` gives
    false), ``adapter``, ``peer`` (what the adapter calls itself), ``source`` (the trace it was
    shrunk from), ``clauses``, ``branch`` (the step branch of the model consumer under the
    nearest reading, :func:`divergence_clauses`) and ``divergesAt`` / ``event`` (the first event
    after which the peer agrees with no reading), ``aspects`` (where it differs from the nearest
    reading), ``divergesIn`` (the parts of the verdict it is the witness for: ``part``, or
    :data:`COMBINED` for the whole verdict; a trace that is the shrunk witness of two parts
    names both), ``compared`` (the parts of a verdict compared), ``conformant`` (no producer clause
    broken) and ``producerViolations``, ``explanation``, ``length``, ``events``, ``initialState``
    (when given), ``peerVerdict`` (the peer's answer: messages, warnings, fatal, runInput, state,
    log) and ``verdicts`` (every verdict class of the model: readings, includesDraft, verdict).
    """
    events = parse_events(wire)
    small = PeerTrace(trace.id, tuple(wire), events, trace.state, trace.source)
    reply = adapter.request(small.wire, small.state, f"{trace.id}~final")
    classification = classify(events, reply, small.state, part=part)
    where = locate_divergence(adapter, small, part)
    return _finding(adapter, small, reply, classification, where, source, True, part)


def unshrunk_finding(adapter: AdapterProcess, result: "TraceResult",
                     locate: bool = True, part: Optional[str] = None) -> PeerDivergenceFinding:
    """The finding for a divergent trace as it was run (not shrunk; ``"shrunk": false``), from
    the answer already received, on one ``part`` of the verdict (None: all of it). ``locate``:
    re-run the peer on the prefixes to find where it first diverges (else the divergence is
    placed at the last event)."""
    where = locate_divergence(adapter, result.trace, part) if locate else None
    classification = result.classification if part is None else \
        classify(result.trace.events, result.reply, result.trace.state, part=part)
    return _finding(adapter, result.trace, result.reply, classification, where,
                    result.trace.id, False, part)


def _finding(adapter: AdapterProcess, small: PeerTrace, reply: Reply,
             classification: Classification, where: Optional[Divergence], source: str,
             shrunk: bool, part: Optional[str] = None) -> PeerDivergenceFinding:
    events = small.events
    if where is None:  # the peer no longer diverges (a flaky peer): describe the whole trace
        index = len(events) - 1
        aspects, nearest = classification.aspects, classification.nearest
        branch, clauses, related = divergence_clauses(events, index, aspects, small.state,
                                                      classification.nearest_assignment)
    else:
        index, aspects, nearest = where.index, list(where.aspects), where.nearest
        branch, clauses, related = where.branch, list(where.clauses), list(where.related)
    fid = PeerDivergenceFinding.id_for(adapter.spec.name, events,
                                       extra=json.dumps(small.state, sort_keys=True))
    response = reply.response or {}
    groups: dict[str, tuple[list[dict], Any]] = {}  # the leaves by verdict, first seen first
    for assignment, verdict in classification.leaves:
        groups.setdefault(verdict_key(verdict), ([], verdict))[0].append(assignment)
    entries = [VerdictClassEntry.of(assignments, verdict) for assignments, verdict in
               groups.values()]
    verdicts = [c.to_json() for c in sorted(entries, key=lambda c: not c.includes_draft)]
    violations = check_trace(events)
    wire_event = small.wire[index]
    at_text = " ".join(str(wire_event.get(k)) for k in ("type", "messageId") if k in wire_event)
    draft_json = verdicts[0]["verdict"]
    explanation = "\n".join([
        f"On this {len(events)}-event trace the peer ({response.get('peer', adapter.spec.label)}) "
        + ("ends in a verdict that no reading of the model gives." if part is None else
           f"ends in a verdict whose {part} no reading of the model gives (whatever the other "
           "parts)."),
        f"It first parts from every reading at event {index} ({at_text}), in the step the "
        f"model consumer under the nearest reading ({nearest}) takes as '{branch}'; there it "
        f"differs from that reading in: {', '.join(aspects) or '-'}.",
        f"- model (draft): {describe_verdict(draft_json)}",
        f"- peer: {describe_verdict(response)}",
        ("The trace is conformant: the producer breaks no clause." if not violations else
         "The producer breaks " + ", ".join(sorted({v.clause for _, v in violations})) +
         ", so this is the consumer's reaction to a producer violation."),
    ])
    finding = {
        "id": fid, "kind": PeerDivergenceFinding.KIND, "adapter": adapter.spec.label,
        "peer": response.get("peer", adapter.spec.label), "source": source,
        "clauses": clauses, "relatedClauses": related, "branch": branch, "divergesAt": index,
        "event": at_text, "nearest": nearest, "aspects": aspects,
        "divergesIn": [part or COMBINED],
        "compared": observed_of(response).names() if response else [],
        "conformant": not violations,
        "producerViolations": [{"atEvent": i, "clause": v.clause, "kind": v.kind}
                               for i, v in violations],
        "explanation": explanation, "length": len(events), "shrunk": shrunk,
        "events": list(small.wire),
    }
    if small.state is not None:
        finding["initialState"] = small.state
    finding["peerVerdict"] = {k: response.get(k) for k in
                              ("messages", "warnings", "fatal", "runInput", "state", "log")
                              if k in response}
    finding["verdicts"] = verdicts
    return PeerDivergenceFinding(finding)


# --- the two jobs -------------------------------------------------------------------------------

@dataclass
class TraceResult:
    """One trace's outcome: the trace, the reply and its classification, and the id of the
    divergence finding it led to (if any; ``findings``: every one, when its parts diverge
    separately)."""

    trace: PeerTrace
    reply: Reply
    classification: Classification
    finding: Optional[str] = None
    findings: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        c = self.classification
        out: dict = {"id": self.trace.id, "class": c.kind}
        if c.kind in ("draft", "reading"):
            out["readings"] = c.readings
        if c.kind == "error":
            out["error"] = c.error
        elif c.kind == "divergence":
            out["nearest"] = c.nearest
            out["differsFromNearest"] = c.aspects
        else:
            out["differsFromDraft"] = c.aspects
        if self.finding:
            out["finding"] = self.finding
        if len(self.findings) > 1:  # one per part of the verdict that diverges
            out["findings"] = list(self.findings)
        return out


_REPORTED = ("id", "source", "clauses", "relatedClauses", "divergesAt", "event", "branch",
             "nearest", "aspects", "divergesIn", "conformant", "length", "shrunk")
"""The members of a divergence finding the report lists (in this order)."""


@dataclass
class PeerReport:
    """What a check or search found.

    Attributes:
        adapter: the adapter as given; peer: what it calls itself (first answer's ``peer``).
        results: one :class:`TraceResult` per trace, in order.
        knobs: :func:`knob_table` over the results.
        findings: divergence findings (:func:`divergence_finding`), by id.
        compared: the parts of a verdict compared (any answer that reports a part makes it
            compared; each answer is compared on the parts it reports).
        stopped_by: for a search: ``"traces"`` (all generated traces were run and every
            divergence shrunk) or ``"budget"`` (the budget cut generation, feeding or shrinking).
        generated: for a search: ``{"stateful": n, "bfs": n}`` traces generated.
        seconds: wall time (reports on screen only; never in files).
        starts: how many times the adapter process was started.
        skipped: for a check: the trace files that could not be read, each as one line naming
            the file, line and field (:func:`load_traces` with ``skipped``); they were left out.
        scanned: how many results :meth:`note_first_divergence` has looked at.
        joint: :func:`joint_readings` over the results (the readings consistent with every
            answer; the knob table is read from it).
        first_divergence: ``{"traces": n, "seconds": s}``: how many traces had been checked, and
            how long after the start, when the first divergent answer came in (None: none
            did); the seconds are on screen only.
    """

    adapter: str
    peer: str = ""
    results: list[TraceResult] = field(default_factory=list)
    knobs: list[KnobBehaviour] = field(default_factory=list)
    findings: dict[str, PeerDivergenceFinding] = field(default_factory=dict)
    compared: list[str] = field(default_factory=list)
    stopped_by: str = "traces"
    generated: dict = field(default_factory=dict)
    seconds: float = 0.0
    starts: int = 0
    joint: JointReadings = field(default_factory=JointReadings)
    first_divergence: Optional[dict] = None
    scanned: int = 0
    skipped: list[str] = field(default_factory=list)

    def note_first_divergence(self, started: float) -> None:
        """Record :attr:`first_divergence` when the results hold the first divergent one."""
        if self.first_divergence is not None:
            return
        for n in range(self.scanned + 1, len(self.results) + 1):
            if self.results[n - 1].classification.kind == "divergence":
                self.first_divergence = {"traces": n,
                                         "seconds": round(time.monotonic() - started, 2)}
                return
        self.scanned = len(self.results)

    def counts(self) -> dict:
        """``{"traces", "draft", "reading", "divergence", "error"}``."""
        out = {"traces": len(self.results), "draft": 0, "reading": 0, "divergence": 0,
               "error": 0}
        for r in self.results:
            out[r.classification.kind] += 1
        return out

    def to_json(self) -> dict:
        """The report as JSON (no timings: the same seed gives the same text)."""
        return {
            "tool": "activity-check", "adapter": self.adapter, "peer": self.peer,
            "compared": self.compared, "counts": self.counts(),
            **({"generated": self.generated, "checked": len(self.results),
                "stoppedBy": self.stopped_by} if self.generated else {}),
            "traces": [r.to_json() for r in self.results],
            "knobs": [{"knob": k.knob, "status": k.status, "behavesAs": k.behaves_as,
                       "options": k.options, "evidence": k.evidence} for k in self.knobs],
            "readings": self.joint.to_json(),
            **({"skipped": list(self.skipped)} if self.skipped else {}),
            "firstDivergence": None if self.first_divergence is None else
            {"traces": self.first_divergence["traces"]},
            "divergences": [{key: f[key] for key in _REPORTED} for f in self.findings.values()],
        }


def _run_batch(adapter: AdapterProcess, traces: Sequence[PeerTrace]) -> list[TraceResult]:
    replies = adapter.request_many([(t.wire, t.state, t.id) for t in traces])
    return [TraceResult(t, r, classify(t.events, r, t.state))
            for t, r in zip(traces, replies, strict=True)]


def _finish(report: PeerReport, adapter: AdapterProcess, shrink: bool,
            deadline: Optional[float], max_findings: int) -> None:
    """Knob table, then shrink divergences into findings (shortest first; each divergent trace
    once for every part of the verdict no reading gives as the peer does,
    :attr:`Classification.divergent`, so one part does not hide another; one finding per
    signature (:func:`_signature`: branch and part, before and after shrinking), at most
    ``max_findings`` shrunk, until ``deadline``). Every divergence left without a finding
    (``shrink`` off, the deadline passed, ``max_findings`` reached) is exported as it was run
    (:func:`unshrunk_finding`); past the deadline without re-running the peer."""
    report.joint = joint_readings(evidence_of(report.results))
    report.knobs = knob_table(report.results, report.joint)
    seen = [observed_of(r.reply.response) for r in report.results if r.reply.ok]
    if seen:
        report.compared = Observed(*(any(getattr(o, f) for o in seen) for f in
                                     Observed.FIELDS)).names()
    divergent = sorted((r for r in report.results if r.classification.kind == "divergence"),
                       key=lambda r: (len(r.trace.wire), dump_jsonl(r.trace.events), r.trace.id))
    state = _Shrinking(report, adapter, shrink, deadline, max_findings)
    for r in divergent:
        for part in r.classification.divergent or [COMBINED]:
            state.one(r, None if part == COMBINED else part)
    report.peer = adapter.peer_name or ""
    report.starts = adapter.starts


class _Shrinking:
    """The bookkeeping of :func:`_finish`: signatures seen, unshrunk exports, the count."""

    def __init__(self, report: PeerReport, adapter: AdapterProcess, shrink: bool,
                 deadline: Optional[float], max_findings: int):
        self.report, self.adapter, self.shrink = report, adapter, shrink
        self.deadline, self.max_findings = deadline, max_findings
        self.signatures: dict[tuple, str] = {}
        self.unshrunk: dict[tuple, str] = {}
        self.shrunk_count = 0

    def add(self, r: TraceResult, finding: PeerDivergenceFinding) -> str:
        """Keep ``finding`` (merged with a finding of the same id, the same trace shrunk for
        another part: its ``divergesIn`` names both) and point ``r`` to it; its id."""
        findings = self.report.findings
        old = findings.get(finding.id)
        if old is None:
            findings[finding.id] = finding
        elif not set(finding["divergesIn"]) <= set(old["divergesIn"]):
            findings[finding.id] = PeerDivergenceFinding({**old.to_json(), "divergesIn": [
                p for p in (COMBINED, *PARTS) if p in old["divergesIn"] + finding["divergesIn"]]})
        self.point(r, finding.id)
        return finding.id

    @staticmethod
    def point(r: TraceResult, fid: str) -> None:
        if r.finding is None:
            r.finding = fid
        if fid not in r.findings:
            r.findings.append(fid)

    def export_unshrunk(self, r: TraceResult, locate: bool, part: Optional[str]) -> None:
        # without shrinking (--no-shrink) every divergent trace is exported; a budget or
        # max_findings cut exports one (the shortest) per signature, the others point to it
        finding = unshrunk_finding(self.adapter, r, locate, part)
        key = _signature(finding.branch, finding.aspects)
        if self.shrink and key in self.unshrunk:
            self.point(r, self.unshrunk[key])
            return
        self.unshrunk[key] = self.add(r, finding)

    def late(self) -> bool:
        return self.adapter.budget_hit and self.deadline is not None and \
            time.monotonic() > self.deadline

    def one(self, r: TraceResult, part: Optional[str]) -> None:
        """Locate, shrink and export the divergence of ``r`` in ``part`` (None: combined)."""
        adapter, report = self.adapter, self.report
        out_of_time = self.deadline is not None and time.monotonic() > self.deadline
        if out_of_time:
            report.stopped_by = "budget"
        if not self.shrink or out_of_time or self.shrunk_count >= self.max_findings:
            self.export_unshrunk(r, not out_of_time, part)
            return
        where = locate_divergence(adapter, r.trace, part)
        if where is None:
            if adapter.budget_hit:  # the deadline came while locating it
                report.stopped_by = "budget"
                self.export_unshrunk(r, False, part)
            return
        signature = where.signature
        if signature in self.signatures:
            self.point(r, self.signatures[signature])
            return
        wire = shrink_divergence(adapter, r.trace, part=part)
        if self.late():  # the deadline came while shrinking: the candidates after it were not run
            report.stopped_by = "budget"
            self.export_unshrunk(r, False, part)
            return
        finding = divergence_finding(adapter, r.trace, wire, r.trace.id, part)
        self.shrunk_count += 1
        shrunk = _signature(finding.branch, finding.aspects)
        if shrunk in self.signatures:  # shrank onto a divergence already found
            self.signatures[signature] = self.signatures[shrunk]
            self.point(r, self.signatures[shrunk])
            return
        self.signatures[signature] = self.signatures[shrunk] = self.add(r, finding)


def check_peer(adapter: AdapterProcess, traces: Sequence[PeerTrace], shrink: bool = True,
               batch: int = 64, max_findings: int = 50) -> PeerReport:
    """Run ``traces`` through the adapter (in batches of ``batch``), classify each, build the knob
    table, and shrink the divergences into findings (see :class:`PeerReport`)."""
    started = time.monotonic()
    report = PeerReport(adapter.spec.label)
    for i in range(0, len(traces), batch):
        report.results.extend(_run_batch(adapter, traces[i:i + batch]))
        report.note_first_divergence(started)
    _finish(report, adapter, shrink, None, max_findings)
    report.seconds = time.monotonic() - started
    return report


def _probe_events() -> dict[str, tuple[str, list[dict]]]:
    run = {"type": "RUN_STARTED", "threadId": "t1", "runId": "r1"}
    text = [{"type": "TEXT_MESSAGE_START", "messageId": "msg-1", "role": "assistant"},
            {"type": "TEXT_MESSAGE_END", "messageId": "msg-1"}]

    def snap(mid: str, content: Optional[dict] = None, **more) -> dict:
        return {"type": "ACTIVITY_SNAPSHOT", "messageId": mid, "activityType": "PLAN",
                "content": {"n": 0} if content is None else content, **more}

    def delta(mid: str, patch: Optional[list] = None, **more) -> dict:
        return {"type": "ACTIVITY_DELTA", "messageId": mid, "activityType": "PLAN",
                "patch": [{"op": "replace", "path": "/n", "value": 1}] if patch is None else patch,
                **more}

    end = {"type": "RUN_FINISHED", "threadId": "t1", "runId": "r1"}
    started = {"type": "SUBAGENT_STARTED", "subagentRunId": "sub-1", "name": "helper"}
    finished = {"type": "SUBAGENT_FINISHED", "subagentRunId": "sub-1"}
    tool = {"type": "TOOL_CALL_START", "toolCallId": "tc-1", "toolCallName": "search"}
    step = {"type": "STEP_STARTED", "stepName": "plan"}
    dropped = {"type": "MESSAGES_SNAPSHOT", "messages": [
        {"id": "act-2", "role": "activity", "activityType": "PLAN", "content": {"n": 0}}]}
    return {**_knob_and_branch_probes(run, text, snap, delta, end, started, finished, tool, step,
                                      dropped),
            **_surface_probes(run, snap, delta)}


def _knob_and_branch_probes(run, text, snap, delta, end, started, finished, tool, step,
                            dropped) -> dict[str, tuple[str, list[dict]]]:
    """The probes of the knobs and of issue 20's branches, codes and producer violations."""
    return {
        "probe-Q3": ("replace:false attributed to another subagent than the owner",
                     [run, snap("act-1", subagentRunId="sub-1"),
                      snap("act-1", replace=False, subagentRunId="sub-2", metadata={"k": 1})]),
        "probe-Q4": ("a delta tagged with another subagent than the opener",
                     [run, snap("act-1", subagentRunId="sub-1"), delta("act-1",
                                                                      subagentRunId="sub-2")]),
        "probe-Q4-opener": ("a delta tagged with the first owner after a replacing snapshot "
                            "re-minted the owner to the parent",
                            [run, snap("act-1", subagentRunId="sub-1"), snap("act-1"),
                             delta("act-1", subagentRunId="sub-1")]),
        "probe-Q7": ("a delta whose result is an array",
                     [run, snap("act-1"), delta("act-1", [{"op": "replace", "path": "",
                                                           "value": [1]}])]),
        "probe-Q9-replace": ("ACTIVITY_SNAPSHOT (replace absent) on a text message's id",
                             [run, *text, snap("msg-1")]),
        "probe-Q9-replace-false": ("ACTIVITY_SNAPSHOT with replace:false on a text message's id",
                                   [run, *text, snap("msg-1", replace=False)]),
        "probe-Q10": ("a snapshot for an activity a MESSAGES_SNAPSHOT dropped",
                      [run, snap("act-1"), dropped, snap("act-1", {"n": 5})]),
        "probe-Q20": ("an unrecognised op before an applying one: dropping the op applies the "
                      "rest, skipping the patch applies nothing (the corpus's shortest Q20 "
                      "witness tells these two apart by a warning only)",
                      [run, snap("act-1"), delta("act-1", [{"op": "increment", "path": "/n"},
                                                           {"op": "replace", "path": "/n",
                                                            "value": 1}])]),
        "probe-Q21-metadata": ("metadata sent as null", [run, snap("act-1", metadata=None)]),
        "probe-Q21-owner": ("subagentRunId sent as null",
                            [run, snap("act-1", subagentRunId=None)]),
        # issue 20: every branch, knob option, code and producer violation a consumer can meet
        "probe-delta-not-activity": ("ACTIVITY_DELTA aimed at a text message's id",
                                     [run, *text, delta("msg-1")]),
        "probe-Q15": ("an untagged delta on an activity whose owning subagent has finished",
                      [run, started, snap("act-1", subagentRunId="sub-1"), finished,
                       delta("act-1")]),
        "probe-Q12": ("a delta from the parent on a subagent's activity, and one in a second "
                      "run on the first run's activity",
                      [run, started, snap("act-1", subagentRunId="sub-1"), delta("act-1"),
                       finished, {"type": "RUN_FINISHED", "threadId": "t1", "runId": "r1"},
                       dict(run, runId="r2"), delta("act-1")]),
        "probe-Q17": ("RUN_STARTED echoing an input that holds an activity message",
                      [dict(run, input={"threadId": "t1", "runId": "r1", "state": {},
                                        "messages": [{"id": "act-9", "role": "activity",
                                                      "activityType": "PLAN",
                                                      "content": {"n": 0}}],
                                        "tools": [], "context": [], "forwardedProps": {}}),
                       snap("act-1")]),
        "probe-malformed-text": ("TEXT_MESSAGE_START whose messageId is a number",
                                 [run, {"type": "TEXT_MESSAGE_START", "messageId": 5,
                                        "role": "assistant"}]),
        "probe-tool-args-missing": ("TOOL_CALL_ARGS for a tool call never started",
                                    [run, {"type": "TOOL_CALL_ARGS", "toolCallId": "tc-9",
                                           "delta": "{}"}]),
        "probe-tool-twice": ("a tool call started twice, then continued under another owner",
                             [run, started, tool, tool,
                              {"type": "TOOL_CALL_ARGS", "toolCallId": "tc-1", "delta": "{}",
                               "subagentRunId": "sub-1"}]),
        "probe-subagent-twice": ("SUBAGENT_STARTED twice for one invocation",
                                 [run, started, started]),
        "probe-step-twice": ("a step started twice", [run, step, step]),
        "probe-step-owner": ("a step finished under another owner than the one that started it",
                             [run, started, step, dict(step, type="STEP_FINISHED",
                                                       subagentRunId="sub-1")]),
        "probe-step-not-open": ("STEP_FINISHED for a step never started",
                                [run, dict(step, type="STEP_FINISHED")]),
        "probe-subagent-reused": ("SUBAGENT_STARTED again for a finished invocation",
                                  [run, started, finished, started]),
        "probe-tag-after-finished": ("an ACTIVITY_SNAPSHOT tagged with a finished invocation",
                                     [run, started, finished,
                                      snap("act-1", subagentRunId="sub-1")]),
        "probe-X1": ("TEXT_MESSAGE_START again for a message a MESSAGES_SNAPSHOT dropped while "
                     "it was streaming",
                     [run, text[0], {"type": "MESSAGES_SNAPSHOT", "messages": []}, text[0]]),
        "probe-remove-root": ("a delta removing the whole content (remove at the root "
                              "pointer), which leaves no object",
                              [run, snap("act-1"), delta("act-1", [{"op": "remove",
                                                                    "path": ""}])]),
        "probe-Q14": ("a replace:false snapshot after a delta that did not apply",
                      [run, snap("act-1"), delta("act-1", [{"op": "remove", "path": "/gone"}]),
                       snap("act-1", {"n": 2}, replace=False)]),
        "probe-unknown-event": ("an event of an undescribed type",
                                [run, {"type": "ACTIVITY_PROGRESS", "messageId": "act-1"}]),
        "probe-undescribed-member": ("an ACTIVITY_SNAPSHOT with a member the schema does not "
                                     "describe", [run, snap("act-1", extra=1)]),
        "probe-before-start": ("an ACTIVITY_SNAPSHOT before RUN_STARTED", [snap("act-1")]),
        "probe-after-close": ("an ACTIVITY_SNAPSHOT after RUN_FINISHED",
                              [run, end, snap("act-1")]),
        "probe-run-twice": ("RUN_STARTED while the run is active", [run, dict(run, runId="r2")]),
        "probe-run-error": ("RUN_ERROR, then an event",
                            [run, snap("act-1"), {"type": "RUN_ERROR", "message": "boom"},
                             delta("act-1")]),
        "probe-text-owner": ("a text message continued under another owner than its start",
                             [run, started, dict(text[0], subagentRunId="sub-1"),
                              {"type": "TEXT_MESSAGE_CONTENT", "messageId": "msg-1",
                               "delta": "x", "subagentRunId": "sub-2"}]),
        "probe-null-replace": ("replace sent as null", [run, snap("act-1", replace=None)]),
        "probe-malformed-patch": ("a patch operation without a path",
                                  [run, snap("act-1"), delta("act-1", [{"op": "remove"}])]),
        "probe-announced-after-use": ("a subagent's tag used before its SUBAGENT_STARTED",
                                      [run, snap("act-1", subagentRunId="sub-1"), started]),
        "probe-finish-with-open": ("RUN_FINISHED with a text message still open",
                                   [run, text[0], end]),
        "probe-parent-not-announced": ("SUBAGENT_STARTED naming a parent never announced",
                                       [run, dict(started, parentSubagentRunId="sub-9")]),
        "probe-step-open-at-finish": ("RUN_FINISHED with a step still open",
                                      [run, step, {"type": "RUN_FINISHED", "threadId": "t1",
                                                   "runId": "r1"}]),
    }


def _surface_probes(run, snap, delta) -> dict[str, tuple[str, list[dict]]]:
    """Probes of the wire surface a consumer's own JSON handling decides, which the generated
    traces (built from the model's canonical values: sorted members, integral floats as
    integers) cannot carry, or carry rarely: references kept between deltas, array slots at the
    length, operation members RFC 6902 does not define, numbers written ``1.0``, member order,
    escapes, empty and non-BMP keys, precision, depth and size."""
    deep: dict = {"leaf": 1}
    for _ in range(64):
        deep = {"d": deep}
    return {
        "probe-copy-then-write": (
            "a copy written under in the same patch and in later deltas, then its source "
            "written: a copy is a value of its own (RFC 6902 4.5), never a reference",
            [run, snap("act-1", {"a": {"b": [1]}}),
             delta("act-1", [{"op": "copy", "from": "/a", "path": "/c"},
                             {"op": "add", "path": "/c/x", "value": 1}]),
             delta("act-1", [{"op": "add", "path": "/c/b/-", "value": 2}]),
             delta("act-1", [{"op": "replace", "path": "/a/b/0", "value": 3}])]),
        "probe-snapshot-not-shared": (
            "a delta after a snapshot whose content repeats the earlier one's: a consumer that "
            "patches the event's own object in place, or shares it between messages, shows it",
            [run, snap("act-1", {"a": {"b": 1}}), snap("act-2", {"a": {"b": 1}}),
             delta("act-1", [{"op": "add", "path": "/a/c", "value": 2}]),
             snap("act-1", {"a": {"b": 1}}, replace=False),
             delta("act-2", [{"op": "remove", "path": "/a/b"}])]),
        "probe-index-at-length": (
            "replace, remove and test at the index equal to the array's length (out of range: "
            "each patch fails), then an add there (an append)",
            [run, snap("act-1", {"list": [1, 2, 3]}),
             delta("act-1", [{"op": "replace", "path": "/list/3", "value": 9}]),
             delta("act-1", [{"op": "remove", "path": "/list/3"}]),
             delta("act-1", [{"op": "test", "path": "/list/3", "value": None}]),
             delta("act-1", [{"op": "move", "from": "/list/3", "path": "/m"}]),
             delta("act-1", [{"op": "add", "path": "/list/3", "value": 4}])]),
        "probe-open-member": (
            "operations carrying members RFC 6902 does not define (legal: SNP-OPEN-OPS)",
            [run, snap("act-1"),
             delta("act-1", [{"op": "replace", "path": "/n", "value": 1, "comment": "why"},
                             {"op": "add", "path": "/o", "value": 2, "x-trace": {"id": 7}}])]),
        "probe-number-forms": (
            "test of 1 written 1.0 and of an object written in another member order, both "
            "equal in JSON (RFC 6902 4.6), then writes that depend on them",
            [run, snap("act-1", {"n": 1, "o": {"a": 1, "b": [1.5, 2]}}),
             delta("act-1", [{"op": "test", "path": "/n", "value": 1.0},
                             {"op": "test", "path": "/o", "value": {"b": [1.5, 2.0], "a": 1}},
                             {"op": "replace", "path": "/n", "value": 2}])]),
        "probe-escaped-keys": (
            "keys that need escapes and that unescaping in the wrong order confuses (~01 is the "
            "key ~1, not /), the empty key nested, a key outside the BMP",
            [run, snap("act-1", {"~1": 1, "/": 2, "": {"": 3}, "😀": 4, "a~b/c": 5}),
             delta("act-1", [{"op": "replace", "path": "/~01", "value": 9},
                             {"op": "replace", "path": "//", "value": 8},
                             {"op": "replace", "path": "/😀", "value": 7},
                             {"op": "move", "from": "/a~0b~1c", "path": "/~1"}])]),
        "probe-float-precision": (
            "floats at the edge of double precision kept exactly",
            [run, snap("act-1", {"p": 0.30000000000000004, "tiny": 5e-324}),
             delta("act-1", [{"op": "test", "path": "/p", "value": 0.30000000000000004},
                             {"op": "add", "path": "/q", "value": 4503599627370495.5}])]),
        "probe-deep-content": (
            "content nested 65 objects deep with a 20,000-character string, then a delta at "
            "the bottom",
            [run, snap("act-1", {"deep": deep, "long": "x" * 20000}),
             delta("act-1", [{"op": "replace", "path": "/deep" + "/d" * 64 + "/leaf",
                              "value": 2}])]),
        "probe-metadata-nested-null": (
            "metadata merged key by key (never recursively) with nulls as values",
            [run, snap("act-1", metadata={"k": {"a": 1}, "j": None}),
             delta("act-1", [], metadata={"k": {"b": None}}),
             snap("act-1", {"n": 2}, metadata={"j": {"x": None}})]),
    }


PROBES: dict[str, str] = {k: v[0] for k, v in _probe_events().items()}
"""Hand-written probe traces (id -> what it does): one or two per knob whose options the
generators rarely separate (a reaction to a producer violation, or a case that needs a context).
:func:`probe_traces` gives them; ``peer search`` feeds them with the generated traces."""


def probe_traces() -> list[PeerTrace]:
    """The :data:`PROBES` as traces (source ``probe``)."""
    return [PeerTrace.of(k, wire, None, "probe") for k, (_, wire) in _probe_events().items()]


class _OutOfTime(Exception):
    """Raised inside the Hypothesis test to stop generating at the deadline."""


def generated_traces(seed: int = 0, stateful: int = 200, bfs_depth: int = 3,
                     max_events: int = 8, deadline: Optional[float] = None,
                     vocabulary: Optional[Vocabulary] = None,
                     bfs_vocabulary: Optional[Vocabulary] = None
                     ) -> tuple[list[PeerTrace], dict]:
    """The traces ``peer search`` feeds a peer, deterministic for a seed.

    * corpus: the committed corpus (:func:`corpus_traces`), which holds a witness for every
      knob the ambiguity search splits, and the hand-written :data:`PROBES`;
    * stateful: ``stateful`` traces from the Hypothesis producer strategies
      (:func:`properties.strategies.adversarial_traces`: half conformant, half mixed with
      labelled non-conformant events), seeded;
    * bfs: the shortest trace to every state the breadth-first search
      (:func:`properties.explore.explore`, adversarial moves included) reaches within
      ``bfs_depth`` events over its small vocabulary.

    ``vocabulary`` replaces the stateful traces' producer vocabulary (default
    :data:`model.producer.DEFAULT_VOCABULARY`), ``bfs_vocabulary`` the breadth-first search's
    (default :data:`properties.explore.EXPLORE_VOCABULARY`). Hypothesis draws inside
    :func:`properties.strategies.fixed_constants`, so the traces do not depend on what the
    process imported.

    Duplicates are dropped (first kept). Returns ``(traces, {"corpus": n, "probe": n,
    "stateful": n, "bfs": n})``; with a ``deadline`` (:func:`time.monotonic`), generation stops
    there and the counts also hold ``"stopped": True`` when it did.
    """
    out: list[PeerTrace] = []
    counts: dict = {}
    for part, counts in generation_parts(seed, stateful, bfs_depth, max_events, deadline,
                                         vocabulary, bfs_vocabulary):
        out += part
    return out, counts


def generation_parts(seed: int = 0, stateful: int = 200, bfs_depth: int = 3,
                     max_events: int = 8, deadline: Optional[float] = None,
                     vocabulary: Optional[Vocabulary] = None,
                     bfs_vocabulary: Optional[Vocabulary] = None):
    """:func:`generated_traces` part by part: yields ``(new traces, counts so far)`` after the
    corpus and probes, after the stateful traces and after the breadth-first ones, so that a
    search can feed each part before generating the next (and stop between parts)."""
    from hypothesis import HealthCheck, Phase, Verbosity, given, seed as hseed, settings
    from model.producer import DEFAULT_VOCABULARY
    from properties.explore import EXPLORE_VOCABULARY, explore, trace_to
    from properties.strategies import adversarial_traces, fixed_constants

    out: list[PeerTrace] = corpus_traces()
    probes = probe_traces()
    counts = {"corpus": len(out), "probe": len(probes), "stateful": 0, "bfs": 0}
    out += probes
    seen: set[str] = {dump_jsonl(t.events) for t in out if t.state is None}
    yield out, dict(counts)
    out = []

    def add(events: Sequence[Event], kind: str) -> None:
        if not events:
            return
        text = dump_jsonl(events)
        if text in seen:
            return
        seen.add(text)
        counts[kind] += 1
        out.append(PeerTrace.of(f"{kind}-{counts[kind]}", [_wire_for(e) for e in events], None,
                                kind))

    def late() -> bool:
        return deadline is not None and time.monotonic() > deadline

    for rate, share in ((0.0, stateful // 2), (0.25, stateful - stateful // 2)):
        if share <= 0 or late():
            continue
        drawn: list = []

        @hseed(seed)
        @settings(max_examples=share, database=None, deadline=None, derandomize=False,
                  phases=[Phase.generate], suppress_health_check=list(HealthCheck),
                  verbosity=Verbosity.quiet)
        @given(adversarial_traces(vocabulary=vocabulary or DEFAULT_VOCABULARY,
                                  max_events=max_events, adversarial_rate=rate))
        def draw(pair):
            if late():
                raise _OutOfTime
            drawn.append(pair[0])

        try:
            with fixed_constants():
                draw()
        except _OutOfTime:
            pass
        for events in drawn:
            add(events, "stateful")
    if late():
        counts["stopped"] = True
    yield out, dict(counts)
    out = []
    if bfs_depth > 0 and not late():
        report = explore(depth=bfs_depth, vocabulary=bfs_vocabulary or EXPLORE_VOCABULARY,
                         properties=(), check_readings=False, adversarial=True)
        for node in range(1, len(report.nodes)):
            if late():
                break
            add(trace_to(report, node), "bfs")
    if late():
        counts["stopped"] = True
    yield out, dict(counts)


def _wire_for(event: Event) -> dict:
    """The wire form of a generated event, with the undescribed top-level members its
    ``notices`` record put back (their values are lost when the event is built; ``true`` stands
    in), so that the peer is sent what the producer meant to send. The trace is parsed back from
    this wire form, so peer and model always see the same events."""
    wire = event.to_wire()
    for path in event.notices:
        name = path[2:] if path.startswith("$.") else ""
        if name and not any(c in name for c in ".[]") and name not in wire:
            wire[name] = True
    return wire


CORPUS_SLACK = 3.0
"""Seconds past the budget the corpus and probes of a search may still take (they are always
checked first; only an adapter that cannot answer them is cut, at the budget plus this)."""


FEED_SHARE = 0.5
"""The share of the budget left after the corpus and probes that generating and feeding traces
may use; shrinking has the rest (and whatever feeding did not use)."""


def search_peer(adapter: AdapterProcess, seed: int = 0, budget: Optional[float] = 60.0,
                stateful: int = 200, bfs_depth: int = 3, batch: int = 64, max_findings: int = 12,
                progress: Optional[Callable[[int, int], None]] = None,
                deadline: Optional[float] = None, vocabulary: Optional[Vocabulary] = None,
                bfs_vocabulary: Optional[Vocabulary] = None) -> PeerReport:
    """Check the committed corpus and the :data:`PROBES` first (whatever the budget), then
    generate traces (:func:`generated_traces`) and feed them to the peer in batches of ``batch``,
    classify, and shrink the divergences (one finding per first-divergence signature, at most
    ``max_findings``); generation and feeding get at most :data:`FEED_SHARE` of what is left of
    the budget, shrinking the rest.

    Args:
        budget: seconds for the whole search (None: no limit); ``deadline`` (a
            :func:`time.monotonic` time) instead, when the caller's clock started earlier. With a
            budget the adapter never waits past the deadline (the corpus and probes: past it plus
            :data:`CORPUS_SLACK`), and a divergence not shrunk in time is exported unshrunk.
            Without one the report depends only on ``seed`` and the peer.
        progress: called as ``progress(done, total)`` after each batch.
        vocabulary, bfs_vocabulary: the generators' vocabularies (see
            :func:`generated_traces`).
    """
    started = time.monotonic()
    if deadline is None and budget is not None:
        deadline = started + budget
    report = PeerReport(adapter.spec.label)
    base = corpus_traces() + probe_traces()
    adapter.deadline = deadline + CORPUS_SLACK if deadline is not None else None
    for i in range(0, len(base), batch):
        report.results.extend(_run_batch(adapter, base[i:i + batch]))
        report.note_first_divergence(started)
        if progress:
            progress(len(report.results), len(base))
    adapter.deadline = deadline
    # generating and feeding get at most half of what is left; shrinking the rest
    feed_until = None if deadline is None else \
        time.monotonic() + max(0.0, deadline - time.monotonic()) * FEED_SHARE
    parts = generation_parts(seed, stateful, bfs_depth, deadline=feed_until,
                             vocabulary=vocabulary, bfs_vocabulary=bfs_vocabulary)
    _, counts = next(parts)
    total = len(base)

    def late() -> bool:
        return feed_until is not None and time.monotonic() > feed_until

    for fresh, counts in parts:
        total += len(fresh)
        for i in range(0, len(fresh), batch):
            if late():
                break
            report.results.extend(_run_batch(adapter, fresh[i:i + batch]))
            report.note_first_divergence(started)
            if progress:
                progress(len(report.results), total)
        if late():
            report.stopped_by = "budget"
            break
    if counts.pop("stopped", False):
        report.stopped_by = "budget"
    report.generated = counts
    if adapter.budget_hit:
        report.stopped_by = "budget"
    # a generated trace the deadline cut was not checked: it is left out, not counted as an
    # error; the corpus and probes always count (an adapter too slow for them has errors)
    report.results = report.results[:len(base)] + [
        r for r in report.results[len(base):] if r.reply.error != BUDGET_NOTE]
    _finish(report, adapter, True, deadline, max_findings)
    if adapter.budget_hit:
        report.stopped_by = "budget"
    report.seconds = time.monotonic() - started
    return report
