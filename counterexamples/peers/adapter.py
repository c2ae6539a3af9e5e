"""The adapter process and its protocol: resolving an adapter name or command (:func:`resolve_adapter`),
running it (:class:`AdapterProcess`: pipelined batches, a hung, crashed or babbling adapter turned into an
error for the one trace it was working on, then restarted), and checking each answer's shape."""
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
from dataclasses import dataclass
from typing import Any, Optional, Sequence

from model.text import named, schema_message
from model.wire import loads_json


DEFAULT_TIMEOUT = 10.0
"""Seconds an adapter may take to answer one request (after the previous answer) before it is
declared hung, killed and restarted."""

BUDGET_NOTE = "not run: the budget ran out"
"""The error of a request not sent, or not answered, before the deadline (Reply kind
``"skipped"``; a search leaves such traces out of its results)."""

MAX_ANSWER_CHARS = 64 * 2**20
"""Default bound on one answer line of an adapter, in characters (64 Mi; ``--max-answer``): a
longer line is read no further than its end and the trace reported as the adapter's error
(kind ``"bad-response"``), the run going on."""

START_GRACE = 10.0
"""Extra seconds allowed for the first answer after an adapter (re)starts (process start-up)."""

MAX_CONSECUTIVE_FAILURES = 5
"""After this many failed requests in a row (no good answer between them) the adapter is given up
and the remaining traces are reported as not run."""

PEERS_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                         "peers")
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
    "model[:READING]": "the reference model (python -m counterexamples.peers.model_adapter)",
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
            parse, the Node adapter not installed, or a program that is not found; the command
            or program named as given, an over-long one cut inside quotes
            (:func:`model.text.named`) so that what is wrong stays on the line.
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
            raise PeerError(f"--adapter {named(text)}: {exc}") from None
        name = "model-" + _slug(reading.name or "draft")
        return AdapterSpec(name, (sys.executable, "-m", "counterexamples.peers.model_adapter",
                                  "--reading", reading_text), text)
    if text.startswith("ag-ui-client:") or text == "ag-ui-client":
        mode = text.partition(":")[2]
        if mode not in ("reducer", "pipeline"):
            raise PeerError(f"--adapter {named(text)}: the mode is reducer or pipeline "
                            "(ag-ui-client:reducer, ag-ui-client:pipeline)")
        reason = node_peer_ready()
        if reason:
            raise PeerError(f"--adapter {named(text)}: {reason}")
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
        if os.path.isdir(program):
            raise PeerError(f"--adapter: {named(program)}: a directory, not a program")
        if not os.path.isfile(program):
            raise PeerError(f"--adapter: {named(program)}: no such file")
        if not os.access(program, os.X_OK):
            raise PeerError(f"--adapter: {named(program)}: not executable")
    elif shutil.which(program) is None:
        raise PeerError(f"--adapter: {named(program)}: command not found")
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
        max_answer: the longest answer line read, in characters (default
            :data:`MAX_ANSWER_CHARS`); a longer one is skipped to its end and reported as that
            trace's ``"bad-response"``.

    Raises:
        PeerError: from :meth:`start` when the program cannot be started at all.
    """

    def __init__(self, spec: AdapterSpec, timeout: float = DEFAULT_TIMEOUT,
                 env: Optional[dict] = None, start_grace: float = START_GRACE,
                 max_answer: int = MAX_ANSWER_CHARS):
        self.spec = spec
        self.max_answer = max_answer
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
            raise PeerError(f"--adapter {named(self.spec.label)}: cannot start "
                            f"{named(self.spec.argv[0])}: {exc.strerror}") from None
        self.starts += 1
        self._fresh = True
        self.lines = queue.Queue()
        self.outbox = queue.Queue()
        self.stderr_tail = deque(maxlen=20)
        proc, lines, tail = self.proc, self.lines, self.stderr_tail
        threading.Thread(target=_pump_lines, args=(proc.stdout, lines, self.max_answer),
                         daemon=True).start()
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

    def request_many(self, items: Sequence[tuple]) -> list[Reply]:
        """Send a batch of ``(wire events, initial state or None, label)`` and return one
        :class:`Reply` per item, in order; an item may carry a fourth member, an object of
        further request members (the conformance corpus's ``input``, its RunAgentInput, and
        ``client``, its peer pin).
        A failure affects only the item being answered; the adapter is restarted and the rest
        of the batch resent."""
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
            for item in pending:
                events, state, label = item[:3]
                self._counter += 1
                rid = f"{self._counter}" + (f":{label}" if label else "")
                ids.append(rid)
                request: dict = {"id": rid, "events": list(events)}
                if state is not None:
                    request["state"] = state
                if len(item) > 3 and item[3]:
                    request.update(item[3])
                line = json.dumps(request, ensure_ascii=False, separators=(",", ":"))
                # a lone surrogate from the trace (a \ud800 escape read) is sent as its JSON
                # escape: the pipe's errors="replace" sent "?", another trace than the model's
                line = line.encode("utf-8", "backslashreplace").decode("utf-8")
                if not self._write(line):
                    break
            done = 0
            restart = False
            for rid, item in zip(ids, pending):
                reply, restart = self._await(rid)
                if reply.kind == "ok":
                    reply = _indices_in_range(reply, len(item[0]))
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

    def _next_line(self, wait: float):
        """The adapter's next line (or :data:`_EOF`, a :class:`_TooLong`), waited for at most
        ``wait`` seconds, and no more than :data:`EXITED_GRACE` seconds once the adapter
        process has exited (a process it started may hold its output open, so that no end of
        file comes).

        Raises:
            queue.Empty: nothing came in time."""
        end = time.monotonic() + wait
        exited_at = None
        while True:
            now = time.monotonic()
            if now >= end:
                raise queue.Empty
            try:
                return self.lines.get(timeout=min(end - now, 0.25))
            except queue.Empty:
                if self.proc is not None and self.proc.poll() is not None:
                    exited_at = exited_at or time.monotonic()
                    if time.monotonic() - exited_at >= EXITED_GRACE:
                        raise

    def _await(self, rid: str) -> tuple[Reply, bool]:
        """Wait for the answer to ``rid``, never past :attr:`deadline`; ``(reply, restart
        needed)``."""
        limit = self.timeout + (self.start_grace if self._fresh else 0.0)
        left = self._left()
        try:
            line = self._next_line(max(0.0, min(limit, left)))
        except queue.Empty:
            status = self.proc.poll() if self.proc is not None else None
            if left < limit and status is None:
                self.budget_hit = True
                return Reply("skipped", error=BUDGET_NOTE), True
            if status is not None:  # it ended, but something it started holds its output
                how = f"exit status {status}" if status >= 0 else f"killed by signal {-status}"
                return Reply("crash", error=f"the adapter stopped ({how}) before answering; a "
                                            "process it started still holds its output open",
                             stderr=tuple(self.stderr_tail)), True
            return Reply("timeout", error=f"no answer within {limit:g} s; the adapter was "
                                          "stopped and restarted",
                         stderr=tuple(self.stderr_tail)), True
        self._fresh = False
        if isinstance(line, _TooLong):  # skipped to its end, so still in step
            return Reply("bad-response", error=f"answer line longer than {line.limit} "
                                               "characters, the most read (--max-answer "
                                               "raises it); not read"), False
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


class _TooLong:
    """An answer line longer than ``limit`` characters (its text dropped, not kept)."""

    def __init__(self, limit: int):
        self.limit = limit


def _pump_lines(stream, lines: "queue.Queue", limit: int = MAX_ANSWER_CHARS) -> None:
    """The reader thread: each non-blank answer line, at most ``limit`` characters held at a
    time; a longer line is read to its end in pieces and queued as :class:`_TooLong`."""
    try:
        while True:
            line = stream.readline(limit + 1)
            if not line:
                break
            if len(line) > limit and not line.endswith("\n"):
                while line and not line.endswith("\n"):
                    line = stream.readline(1 << 20)
                lines.put(_TooLong(limit))
            elif line.strip():
                lines.put(line)
    except (OSError, ValueError, MemoryError):
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
    """The stderr thread: the last lines, each cut to 300 characters; a line is read in pieces
    of at most 64 Ki characters, so a line of any length is never held whole."""
    try:
        continued = False
        while True:
            piece = stream.readline(1 << 16)
            if not piece:
                break
            if not continued:
                tail.append(piece.rstrip("\n")[:300])
            continued = not piece.endswith("\n")
    except (OSError, ValueError):
        pass


ANSWER_SCHEMA_PATH = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                  "schemas", "adapter-answer.schema.json")
"""The JSON Schema of an adapter's answer line (a refusal, or ``$defs.answer``)."""


def _indices_in_range(reply: Reply, events: int) -> Reply:
    """``reply`` itself, or a ``"bad-response"`` when its ``fatal.atEvent`` or a warning's
    ``atEvent`` is not an index of the ``events`` events of the trace asked about (-1, or one
    past the end): such an answer says nothing the model can compare, and was reported as the
    consumer's divergence."""
    response = reply.response or {}
    fatal = response.get("fatal")
    places = [("fatal.atEvent", fatal.get("atEvent") if isinstance(fatal, dict) else None)]
    warnings = response.get("warnings")
    if isinstance(warnings, list):
        places += [(f"warnings.{i}.atEvent", w.get("atEvent")) for i, w in enumerate(warnings)
                   if isinstance(w, dict)]
    for member, at in places:
        if isinstance(at, int) and not isinstance(at, bool) and not 0 <= at < events:
            return Reply("bad-response", error=f"answer member '{member}' is {at}, not an "
                                               f"index of the trace's {events} events")
    return reply


EXITED_GRACE = 1.0
"""Seconds an answer is still waited for after the adapter process has exited without its
output reaching its end (a process it started holds it open): then it is a crash, not a
hang."""


_ANSWER_VALIDATOR: list = []


def _answer_validator():
    """The Draft 2020-12 validator of ``$defs.answer`` (built once a process)."""
    if not _ANSWER_VALIDATOR:
        import jsonschema
        with open(ANSWER_SCHEMA_PATH, encoding="utf-8") as f:
            root = json.load(f)
        jsonschema.Draft202012Validator.check_schema(root)
        answer = dict(root["$defs"]["answer"], **{"$defs": root["$defs"]})
        _ANSWER_VALIDATOR.append(jsonschema.Draft202012Validator(answer))
    return _ANSWER_VALIDATOR[0]


def _check_response(r: dict) -> Optional[str]:
    """None when an answer fits the answer schema (:data:`ANSWER_SCHEMA_PATH`,
    ``$defs.answer``), else one line naming the first member at fault (in member order), what
    the protocol wants there (the member's schema description) and what the schema says."""
    validator = _answer_validator()
    errors = list(validator.iter_errors(r))
    if not errors:
        fatal = r.get("fatal")
        if isinstance(fatal, dict) and isinstance(fatal.get("atEvent"), float):
            # JSON Schema's integer takes 1.0; an event index is written without a fraction
            return ("answer member 'fatal.atEvent' must be an integer event index, written "
                    f"without a fraction (not {fatal['atEvent']!r})")
        return None
    props = validator.schema["properties"]
    order = list(props)

    def rank(e):
        top = str(e.path[0]) if e.path else ""
        return (order.index(top) if top in order else len(order), len(e.path), e.message)

    error = min(errors, key=rank)
    if not error.path:
        missing = [m for m in validator.schema["required"] if m not in r]
        if missing:
            want = props[missing[0]].get("description", "")
            return f"answer needs '{missing[0]}'" + (f": {want}" if want else "")
        return f"answer: {schema_message(error)}"
    top = str(error.path[0])
    where = ".".join(str(p) for p in error.path)
    want = props.get(top, {}).get("description")
    text = schema_message(error)  # a long value cut inside its quotes, not the message
    return (f"answer member '{where}' " + (f"must be {want}" if want else "is not valid")
            + f" ({text})")
