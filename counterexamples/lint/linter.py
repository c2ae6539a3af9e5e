"""``lint``: producer-side conformance of a whole AG-UI stream (issue 22).

The producer monitor (:func:`model.producer.violations`, :func:`model.producer.advance`) knows every
producer obligation the model encodes, and judges one event against what was sent before it.
:func:`lint_stream` runs it over a whole stream and keeps going after a violation, so that a
producer team sees every violation, not only the first, each with:

* the clause id, its BCP 14 keyword and a severity (:func:`severity_of`), from the clause
  registry :mod:`model.clauses` (or, for the few rules the registry does not number yet,
  :data:`PENDING_CLAUSES`);
* the 0-based event index (``None`` for the end-of-stream violations), the source line when known,
  and the RFC 6901 JSON pointer of the member at fault;
* our one-line paraphrase of the clause (the registry's ``summary``) and what was seen.

The monitor judges steps, tool calls, parent invocations and what RUN_FINISHED leaves open; lint
reports a RUN_FINISHED's open entities one violation each (from the monitor's belief). On top of
the monitor, lint adds only what it does not report, each citing a clause: a delta in a later run
with no fresh snapshot (SNP-SHOULD-SNAPSHOT, a SHOULD: a warning), and, when the stream ends,
everything left open: messages, tool calls, steps, subagent invocations and the run itself.
Malformed events carry the monitor's label of their actual fault and the member's schema clause;
undescribed members are one violation each (a TEXT_MESSAGE_START role outside the text roles is an
undescribed role, SCH-MESSAGE-UNION); an element that is not JSON at all is reported as an
undecodable event. The rest of the stream is still checked after any of them.

Readings: where a producer obligation depends on an open question (the knobs of
:data:`model.producer.PRODUCER_KNOBS`: Q2, Q4-opener, Q12, Q17), the monitor is asked under each
option the event makes it consult (a :class:`model.readings.PartialReading` raises
:class:`~model.readings.KnobUnset` on the knobs it reads), so one pass judges every producer
reading. A violation that only some readings make carries those readings, merged to the fewest
knobs (:func:`_merged`); so does lint's SNP-SHOULD-SNAPSHOT warning, given under the readings at
which the monitor finds the delta clean, beside the errors the other readings make at that event
(Q12=run's ACT-DELTA-BASELINE). With ``reading=R`` only R's options judge.

Speed: the monitor's :class:`~model.producer.Belief` keeps tuples that grow with the stream, which
is fine for the search's short traces but quadratic on a recorded stream of 100,000 events. Lint
keeps its own indexed copy of the belief (:class:`_Mirror`) and hands the monitor, for each event,
a belief holding only what that event can read (the ids it names; the run-scoped sets whole), then
writes the monitor's new belief back for those ids. The monitor stays the one judge; the cost per
event does not grow with the stream. Events are typed by :func:`model.wire.parse_event`, the one
parser (its plain lane builds the streaming events directly), and the monitor's answer for a text
or argument chunk is memoised (:data:`_PAYLOAD_ONLY`).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import product
from typing import Any, Callable, Iterable, Iterator, NamedTuple, Optional, Sequence

from model.clause_data import Clause
from model.clauses import UnknownClauseError, get as registry_clause, registry
from model.events import (
    ActivityDelta, ActivitySnapshot, Event, Malformed, MessagesSnapshot, RunError, RunFinished,
    RunStarted, StepFinished, StepStarted, SubagentStarted, TextMessageContent, TextMessageStart,
    ToolCallArgs, ToolCallEnd, ToolCallStart, Unrecognised,
)
from model.json_values import a_json_type
from model.producer import (ADVERSARIAL_KINDS, PRODUCER_KNOBS, UNDESCRIBED_CLAUSES,
                            ActivityBelief, Belief, ProducerViolation, advance, violations)
from model.readings import (KNOB_BY_ID, KnobUnset, PartialReading, Reading,
                            describe_assignment, parse_assignment)
from model.wire import parse_event

__all__ = ["StreamEntry", "LintViolation", "LintReport", "lint_stream", "lint_wire",
           "PENDING_CLAUSES", "clause_of", "severity_of", "SEVERITIES", "FAIL_ON",
           "LINT_KINDS", "clauses_checked", "producer_readings", "json_path_to_pointer",
           "REPORT_SCHEMA", "tool_version"]

REPORT_SCHEMA = "activity-check/lint/1"
"""The ``schema`` member of the JSON report; changes only when the report's shape does."""

SEVERITIES = ("error", "warning")
"""Severities, most severe first."""

FAIL_ON = ("error", "warning", "never")
"""The thresholds ``--fail-on`` takes: fail on errors, on warnings too, or never."""

PENDING_CLAUSES: tuple[Clause, ...] = ()
"""Producer rules of the draft pages that the registry does not hold yet: lint cites these ids,
and the registry's entry wins as soon as it has one of them. Empty: since issue 19 the registry
holds every clause lint cites."""

_PENDING_BY_ID = {c.id: c for c in PENDING_CLAUSES}

LINT_KINDS: dict[str, str] = {
    "undecodable": "PRC-MALFORMED-FATAL",
    "malformed-member": "PRC-MALFORMED-FATAL",
    "undescribed-role": "SCH-MESSAGE-UNION",
    "delta-without-fresh-snapshot": "SNP-SHOULD-SNAPSHOT",
    "open-at-end": "LIF-CLOSE-BEFORE-FINISH",
    "step-open-at-end": "LIF-STEP-CLOSE-BEFORE-FINISH",
    "run-open-at-end": "LIF-RUN-CLOSE",
}
"""Kinds lint reports beyond the monitor's (:data:`model.producer.ADVERSARIAL_KINDS`), with the
clause each cites by default (a malformed member is cited by the monitor's clause of its actual
fault, an undescribed member by the closed object it sits in: see :func:`_stripped_clause`)."""

_STRUCTURE_CLAUSES = ("SCH-ACTIVITY-SNAPSHOT", "SCH-REPLACE", "SCH-ACTIVITY-DELTA",
                      "SCH-ACTIVITY-MESSAGE", "SCH-MESSAGE-UNION", "SCH-MESSAGES-SNAPSHOT",
                      "SNP-MALFORMED-OP", "SCH-JSON-POINTER", "PRC-MALFORMED-FATAL")
"""The clauses a malformed or undescribed member is cited under, by where it sits."""

_STRIPPED_KINDS = frozenset({"undescribed-member", "undescribed-role"})
"""Kinds of material a consumer strips rather than fails the run on (PRC-DROP-STRIP)."""


@lru_cache(maxsize=1)
def tool_version() -> str:
    """The installed activity-check's version (``"unknown"`` when it is not installed)."""
    from importlib import metadata
    try:
        return metadata.version("activity-check")
    except metadata.PackageNotFoundError:  # pragma: no cover - run from a bare checkout
        return "unknown"


def clause_of(clause_id: str) -> Clause:
    """The clause ``clause_id``: the registry's entry, else the pending one.

    Raises:
        UnknownClauseError: for an id in neither.
    """
    try:
        return registry_clause(clause_id)
    except UnknownClauseError:
        if clause_id in _PENDING_BY_ID:
            return _PENDING_BY_ID[clause_id]
        raise


def severity_of(clause: Clause, kind: str = "") -> str:
    """``"error"`` or ``"warning"`` for a violation of ``clause`` (IDX-CONFORMANCE):

    * MUST, MUST NOT, REQUIRED: error;
    * SHOULD, SHOULD NOT: warning;
    * a schema (structure) clause, or a consumer's clause that the event is malformed and fatal
      (SNP-MALFORMED-OP, N39): error when a consumer fails the run on the event (a malformed
      value, PRC-MALFORMED-FATAL), warning when it strips the material and goes on (an undescribed
      member or role, PRC-DROP-STRIP: possibly a newer version's addition);
    * anything else: warning.
    """
    if kind in _STRIPPED_KINDS:
        return "warning"
    if clause.keyword in ("MUST", "MUST NOT", "REQUIRED"):
        return "error"
    if clause.actor == "structure" or clause.id == "SNP-MALFORMED-OP":
        return "error"
    return "warning"


def clauses_checked() -> tuple[str, ...]:
    """Every clause id lint can report, registry order first, then the pending ones."""
    ids = set(ADVERSARIAL_KINDS.values()) | set(LINT_KINDS.values()) | set(_STRUCTURE_CLAUSES) | \
        set(UNDESCRIBED_CLAUSES.values())
    ids |= {"EVM-ABSENT-NOT-NULL", "SUB-ABSENT-PARENT", "MET-NOT-NULL"}
    ordered = [cid for cid in registry() if cid in ids]
    return tuple(ordered + [c.id for c in PENDING_CLAUSES if c.id not in registry()])


def producer_readings(reading: Optional[Reading] = None) -> tuple[dict[str, str], ...]:
    """The producer readings judged: every combination of the options of
    :data:`~model.producer.PRODUCER_KNOBS` (draft's first), or ``reading``'s alone."""
    if reading is not None:
        return ({k: getattr(reading, KNOB_BY_ID[k].attr) for k in PRODUCER_KNOBS},)
    options = [KNOB_BY_ID[k].option_names for k in PRODUCER_KNOBS]
    return tuple(dict(zip(PRODUCER_KNOBS, combo)) for combo in product(*options))


# --- records ------------------------------------------------------------------------------------

class StreamEntry(NamedTuple):
    """One element of the stream as read: ``value`` the decoded JSON (None when it could not be
    decoded, then ``problem`` says why), ``line`` its 1-based source line (None: no lines, e.g. a
    live endpoint)."""

    value: Any
    line: Optional[int] = None
    problem: Optional[str] = None


@dataclass(frozen=True, slots=True)
class LintViolation:
    """One violation.

    Attributes:
        clause: clause id (registry, or :data:`PENDING_CLAUSES`).
        keyword: its BCP 14 keyword (``MUST``, ``SHOULD``, ``non-keyword`` for a schema clause).
        severity: ``"error"`` or ``"warning"`` (:func:`severity_of`).
        kind: what was wrong: a key of :data:`model.producer.ADVERSARIAL_KINDS` or of
            :data:`LINT_KINDS`.
        event_index: 0-based index of the event (None: at the end of the stream).
        line: 1-based source line of the event, when known.
        event_type: the event's wire ``type``, when it has one.
        pointer: RFC 6901 JSON pointer of the member at fault within the event (``""``: the whole
            event).
        message: our one-line paraphrase of the clause.
        detail: what was seen.
        readings: None when every producer reading judged makes this violation; else the
            assignments (``"Q2=parent"``) of the readings that do.
        related_index: the index of the event it relates to (the opener left open, the step
            opened before), when there is one.
    """

    clause: str
    keyword: str
    severity: str
    kind: str
    event_index: Optional[int]
    line: Optional[int]
    event_type: Optional[str]
    pointer: str
    message: str
    detail: str = ""
    readings: Optional[tuple[str, ...]] = None
    related_index: Optional[int] = None

    def to_json(self) -> dict:
        """The violation in the JSON report's form (camelCase members; see docs/lint.md)."""
        return {"clause": self.clause, "keyword": self.keyword, "severity": self.severity,
                "kind": self.kind, "eventIndex": self.event_index, "line": self.line,
                "eventType": self.event_type, "pointer": self.pointer, "message": self.message,
                "detail": self.detail,
                "readings": None if self.readings is None else list(self.readings),
                "relatedEventIndex": self.related_index}

    def applies_under(self, assignment: dict[str, str]) -> bool:
        """Whether this violation is made under the complete producer ``assignment``."""
        if self.readings is None:
            return True
        return any(all(assignment.get(k) == v for k, v in parse_assignment(r).items())
                   for r in self.readings)


@dataclass(frozen=True)
class LintReport:
    """What :func:`lint_stream` found.

    Attributes:
        source: the file name, ``<stdin>`` or the URL.
        input_format: ``"json"`` (an array), ``"jsonl"`` or ``"sse"``.
        events: how many events (stream elements) were read.
        reading: the name of the reading given, or None (every producer reading judged).
        readings: the producer readings judged, as assignments of the producer knobs.
        violations: in stream order, the end-of-stream ones last.
        notes: remarks on the input that are not violations (``{"line", "text"}``), e.g. an SSE
            line a reader ignores, a stream cut by a bound, violations not kept.
        not_kept: ``(errors, warnings)`` found beyond the :data:`MAX_VIOLATIONS_KEPT` kept
            (counted in :meth:`count`, :attr:`conformant` and :meth:`fails`, not listed).
    """

    source: str
    input_format: str
    events: int
    reading: Optional[str]
    readings: tuple[dict[str, str], ...]
    violations: tuple[LintViolation, ...]
    notes: tuple[dict, ...] = ()
    not_kept: tuple[int, int] = (0, 0)

    def count(self, severity: str) -> int:
        """How many violations of ``severity`` (those not kept included)."""
        return sum(1 for v in self.violations if v.severity == severity) + \
            self.not_kept[SEVERITIES.index(severity)]

    @property
    def conformant(self) -> bool:
        """True when no error is made under any reading judged (skipping a SHOULD is no
        violation, IDX-CONFORMANCE)."""
        return self.count("error") == 0

    def reading_names(self) -> list[str]:
        """The producer readings judged, as assignments (``"Q2=continues,Q4-opener=current"``)."""
        return [describe_assignment(a) for a in self.readings]

    def conformant_under(self) -> list[str]:
        """The producer readings judged under which the stream makes no error (none known when
        errors were found beyond those kept)."""
        if self.not_kept[0]:
            return []
        return [describe_assignment(a) for a in self.readings
                if not any(v.severity == "error" and v.applies_under(a) for v in self.violations)]

    def fails(self, fail_on: str = "error") -> bool:
        """Whether the stream fails the gate ``fail_on`` (one of :data:`FAIL_ON`): a violation of
        that severity or a more severe one. Raises ValueError for another threshold."""
        if fail_on not in FAIL_ON:
            raise ValueError(f"fail_on must be one of {', '.join(FAIL_ON)}, not {fail_on!r}")
        if fail_on == "never":
            return False
        rank = SEVERITIES.index(fail_on)
        return any(self.count(s) for s in SEVERITIES[:rank + 1])

    def violated_clauses(self) -> list[str]:
        """Clause ids with at least one violation, in first-seen order."""
        return list(dict.fromkeys(v.clause for v in self.violations))

    def to_json(self, fail_on: str = "error", version: Optional[str] = None) -> dict:
        """The report as JSON (schema :data:`REPORT_SCHEMA`, documented in docs/lint.md);
        ``version``: the tool's (default: the installed distribution's, :func:`tool_version`)."""
        return {
            "tool": "activity-check", "version": version or tool_version(),
            "schema": REPORT_SCHEMA,
            "source": self.source, "format": self.input_format, "events": self.events,
            "reading": self.reading,
            "readings": self.reading_names(),
            "failOn": fail_on, "failed": self.fails(fail_on), "conformant": self.conformant,
            "conformantUnder": self.conformant_under(),
            "counts": {s: self.count(s) for s in SEVERITIES},
            "clausesChecked": list(clauses_checked()),
            "violations": [v.to_json() for v in self.violations],
            "notes": list(self.notes),
        }


# --- JSON paths and pointers --------------------------------------------------------------------

_PATH_TOKEN = re.compile(r'\.([^.\[\s]+)|\[(\d+)\]|\[("(?:[^"\\]|\\.)*")\]')


def json_path_to_pointer(path: str) -> str:
    """The RFC 6901 pointer for one of :mod:`model.wire`'s JSON paths (``$.patch[0].path`` ->
    ``/patch/0/path``, ``$["a b"]`` -> ``/a b``); trailing words after the path (a notice's
    ``(role "x" unrecognised)``) are dropped. ``$`` alone is ``""``."""
    import json
    text = path
    if not text.startswith("$"):
        return ""
    out, pos = [], 1
    while pos < len(text):
        m = _PATH_TOKEN.match(text, pos)
        if m is None:
            break
        name = m.group(1) if m.group(1) is not None else (
            m.group(2) if m.group(2) is not None else json.loads(m.group(3)))
        out.append("/" + name.replace("~", "~0").replace("/", "~1"))
        pos = m.end()
    return "".join(out)


_POINTER: dict[str, str] = {
    "before-start": "/type", "after-close": "/type", "run-started-twice": "/type",
    "delta-without-baseline": "/messageId", "delta-on-unknown-id": "/messageId",
    "non-object-result": "/patch", "replace-false-owner-disagrees": "/subagentRunId",
    "delta-owner-disagrees": "/subagentRunId", "text-owner-disagrees": "/subagentRunId",
    "id-reused-across-roles": "/messageId", "unknown-event-type": "/type",
    "subagent-started-twice": "/subagentRunId", "finished-subagent-reused": "/subagentRunId",
    "tag-after-finished": "/subagentRunId", "announced-after-use": "/subagentRunId",
    "history-restreamed": "/messageId", "finish-with-open": "",
    "step-opened-twice": "/stepName", "step-not-open": "/stepName",
    "step-owner-disagrees": "/subagentRunId", "step-open-at-finish": "",
    "tool-call-started-twice": "/toolCallId", "tool-owner-disagrees": "/subagentRunId",
    "parent-not-announced": "/parentSubagentRunId",
    "delta-from-earlier-run": "/messageId", "activity-in-echo": "/input/messages",
}
"""Monitor kind -> the member at fault (malformed and undescribed members carry their own)."""


# --- the belief mirror --------------------------------------------------------------------------

class _Mirror:
    """The producer's belief, indexed by id (see the module docstring: "Speed").

    :meth:`slice` builds the :class:`~model.producer.Belief` an event can read: the run-scoped
    members whole (they hold what is open in the run, which a RUN_FINISHED reads whole), the
    id-keyed members (activities, texts and their owners, ids stated in other roles, dropped
    activities) only for the ids the event names, and every held activity when a
    MESSAGES_SNAPSHOT lists one (it revokes those it leaves out, STA-MS-SELF-REVOKE). Open steps
    and tool calls are run-scoped: whole.
    :meth:`merge` writes the monitor's belief after the event back for those ids."""

    __slots__ = ("run", "runs", "acts", "texts", "text_owner", "open_texts", "subagents",
                 "finished", "tags_used", "others", "dropped", "open_steps", "open_tools",
                 "earlier", "_cache")

    def __init__(self) -> None:
        self.run, self.runs = "idle", 0
        self.acts: dict[str, ActivityBelief] = {}
        self.texts: set[str] = set()
        self.text_owner: dict[str, Optional[str]] = {}
        self.open_texts: frozenset[str] = frozenset()
        self.subagents: frozenset[str] = frozenset()
        self.finished: frozenset[str] = frozenset()
        self.tags_used: frozenset[str] = frozenset()
        self.others: set[str] = set()
        self.dropped: set[str] = set()
        self.open_steps: frozenset[tuple[Optional[str], str]] = frozenset()
        self.open_tools: tuple[tuple[str, Optional[str]], ...] = ()
        self.earlier: set[str] = set()  # activities of an earlier run not restated (Q12=run)
        self._cache: Optional[tuple[tuple[str, ...], Belief]] = None

    @staticmethod
    def ids_of(event: Event) -> tuple[str, ...]:
        """The message ids ``event`` names (a MESSAGES_SNAPSHOT: each listed id)."""
        if type(event) is MessagesSnapshot:
            return tuple(dict.fromkeys(m.id for m in event.messages))
        mid = getattr(event, "message_id", None)
        return () if mid is None else (mid,)

    def slice(self, event: Event) -> tuple[tuple[str, ...], Belief]:
        """``(ids, belief)``: the ids the belief was cut to, and the belief."""
        ids = self.ids_of(event)
        if type(event) is MessagesSnapshot and any(m.is_activity for m in event.messages):
            ids = tuple(dict.fromkeys(tuple(self.acts) + ids))
        return self.slice_ids(ids)

    def slice_ids(self, ids: tuple[str, ...]) -> tuple[tuple[str, ...], Belief]:
        """:meth:`slice` for an event that names ``ids`` (and is no MESSAGES_SNAPSHOT)."""
        cache = self._cache
        if cache is not None and cache[0] == ids:
            return cache
        acts, texts = self.acts, self.texts
        belief = Belief(
            run=self.run, runs=self.runs,
            activities=tuple((k, acts[k]) for k in ids if k in acts),
            texts=tuple(k for k in ids if k in texts),
            open_texts=self.open_texts, subagents=self.subagents, finished=self.finished,
            text_owners=tuple((k, self.text_owner[k]) for k in ids if k in self.text_owner),
            tags_used=self.tags_used,
            others=frozenset(k for k in ids if k in self.others),
            dropped=frozenset(k for k in ids if k in self.dropped),
            open_steps=self.open_steps, open_tools=self.open_tools,
            earlier=frozenset(k for k in ids if k in self.earlier))
        self._cache = (ids, belief)
        return self._cache

    def merge(self, ids: tuple[str, ...], before: Belief, after: Belief) -> None:
        """Take ``after`` (the monitor's belief after the event, from ``before``, the slice for
        ``ids``) as the belief for those ids and for the run-scoped members."""
        if after is before:
            return
        self._cache = None
        self.run, self.runs = after.run, after.runs
        self.open_texts, self.subagents = after.open_texts, after.subagents
        self.finished, self.tags_used = after.finished, after.tags_used
        self.open_steps, self.open_tools = after.open_steps, after.open_tools
        if after.runs != before.runs:  # a RUN_STARTED, which names no id: every activity held
            self.earlier = set(self.acts)  # is now an earlier run's (model.producer.advance)
        if not ids:
            return
        held = dict(after.activities)
        owners = dict(after.text_owners)
        for k in ids:
            if k in held:
                self.acts[k] = held[k]
            else:
                self.acts.pop(k, None)
            for members, now in ((self.texts, k in after.texts), (self.others, k in after.others),
                                 (self.dropped, k in after.dropped),
                                 (self.earlier, k in after.earlier)):
                if now:
                    members.add(k)
                else:
                    members.discard(k)
            if k in owners:
                self.text_owner[k] = owners[k]
            else:
                self.text_owner.pop(k, None)


# --- the engine ---------------------------------------------------------------------------------

_ANY_READING = PartialReading({})
"""Fixes no knob: the monitor raises KnobUnset as soon as it consults one."""

_PAYLOAD_ONLY = frozenset({TextMessageContent, ToolCallArgs})
"""Chunk events whose monitor verdict and belief update cannot depend on their payload (the
``delta`` text) nor on ``timestamp`` (EVM-ARRIVAL-ORDER): the producer's obligations are about
ids, owners and the run, never about what a chunk says. Lint memoises the monitor's answer for
them on (belief, class, id, tag) when they carry no ``metadata`` or ``rawEvent``;
``tests/test_lint.py`` checks the invariance on the monitor itself."""

_UNTRACKED = frozenset({TextMessageContent, ToolCallArgs, RunStarted, RunFinished, RunError,
                        Malformed, Unrecognised})
"""Event classes :meth:`_Linter.track` has nothing to do for."""


@dataclass
class _Run:
    """What lint tracks beside the belief, scoped to the current run, for the related event index
    of a violation: where each open tool call (id -> index), step ((owner, name) -> index), text
    and subagent invocation was opened, the index of the last RUN_STARTED, and per activity the
    run number and index of its last snapshot (for SNP-SHOULD-SNAPSHOT)."""

    tools: dict = field(default_factory=dict)
    steps: dict = field(default_factory=dict)
    text_opened: dict = field(default_factory=dict)
    subagent_opened: dict = field(default_factory=dict)
    started_at: Optional[int] = None
    snapshot_run: dict = field(default_factory=dict)
    warned_fresh: set = field(default_factory=set)

    def reset(self, started_at: Optional[int]) -> None:
        self.tools, self.steps, self.text_opened, self.subagent_opened = {}, {}, {}, {}
        self.started_at = started_at
        self.warned_fresh = set()

    def step_opened(self, owner: Optional[str], name: str, other_owner: bool = False
                    ) -> Optional[int]:
        """Where step ``name`` of ``owner`` was opened; with ``other_owner``, the opener the
        monitor names for a STEP_FINISHED under the wrong owner (the first by owner, the parent
        as ``parent``)."""
        if not other_owner:
            return self.steps.get((owner, name))
        others = sorted((o or "parent", i) for (o, n), i in self.steps.items()
                        if n == name and o != owner)
        return others[0][1] if others else None


class _Judgement(NamedTuple):
    """The monitor's judgement of one event under the readings judged: ``found`` its violations,
    each with the readings that make it (None: every reading judged); ``clean`` the readings under
    which it makes none (None: every reading judged; ``()``: none)."""

    found: tuple[tuple[ProducerViolation, Optional[tuple[str, ...]]], ...]
    clean: Optional[tuple[str, ...]]


_CLEAN = _Judgement((), None)
"""The judgement of an event that makes no violation under any reading."""


def _described(where: list[dict], leaves: list) -> Optional[tuple[str, ...]]:
    """The leaves ``where`` (some of ``leaves``, the partial assignments of one judgement) as the
    assignments a violation carries: None when they are every leaf, else merged (:func:`_merged`)."""
    if len(where) == len(leaves):
        return None
    return tuple(describe_assignment(a) for a in _merged(where))


class _Linter:
    """One pass over a stream (see :func:`lint_stream`)."""

    def __init__(self, reading: Optional[Reading], keep: int = 0):
        self.reading = reading
        self.mirror = _Mirror()
        self.run = _Run()
        self.keep = keep or MAX_VIOLATIONS_KEPT
        self.not_kept = [0, 0]  # errors, warnings beyond self.keep
        self.out: list[LintViolation] = []
        self.partials: dict[tuple, PartialReading] = {}
        self.memo: dict[tuple, tuple] = {}

    # -- helpers --
    def add(self, kind: str, index: Optional[int], line: Optional[int], event_type: Optional[str],
            pointer: str, detail: str = "", clause: Optional[str] = None,
            readings: Optional[tuple[str, ...]] = None, related: Optional[int] = None) -> None:
        cid = clause or ADVERSARIAL_KINDS.get(kind) or LINT_KINDS[kind]
        c = clause_of(cid)
        if len(self.out) >= self.keep:  # counted, not kept: memory bounded on endless streams
            self.not_kept[SEVERITIES.index(severity_of(c, kind))] += 1
            return
        self.out.append(LintViolation(cid, c.keyword, severity_of(c, kind), kind, index, line,
                                      event_type, pointer, c.summary, detail, readings, related))

    def judge(self, belief: Belief, event: Event) -> _Judgement:
        """The monitor's judgement of ``event`` in ``belief``: its violations, each with the
        readings that make it, and the readings under which it makes none."""
        if self.reading is not None:
            found = violations(belief, event, self.reading)
            return _Judgement(tuple((v, None) for v in found), ()) if found else _CLEAN
        try:  # most events consult no knob: one call answers for every reading
            found = violations(belief, event, _ANY_READING)
            return _Judgement(tuple((v, None) for v in found), ()) if found else _CLEAN
        except KnobUnset as exc:
            stack = [{exc.knob_id: option} for option in
                     reversed(self._options(exc.knob_id))]
        leaves: list[tuple[dict, tuple[ProducerViolation, ...]]] = []
        while stack:
            assignment = stack.pop()
            key = tuple(sorted(assignment.items()))
            partial = self.partials.get(key)
            if partial is None:
                partial = self.partials[key] = PartialReading(assignment)
            try:
                leaves.append((assignment, violations(belief, event, partial)))
            except KnobUnset as exc:
                for option in reversed(self._options(exc.knob_id)):
                    stack.append({**assignment, exc.knob_id: option})
        out: dict[ProducerViolation, list[dict]] = {}
        for assignment, found in leaves:
            for v in found:
                out.setdefault(v, []).append(assignment)
        clean = [assignment for assignment, found in leaves if not found]
        return _Judgement(
            tuple((v, _described(where, leaves)) for v, where in out.items()),
            _described(clean, leaves) if clean else ())

    @staticmethod
    def _options(knob_id: str) -> tuple[str, ...]:
        if knob_id not in PRODUCER_KNOBS:  # pragma: no cover - a declaration error
            raise AssertionError(f"the producer monitor read {knob_id}, which PRODUCER_KNOBS "
                                 "does not declare")
        return KNOB_BY_ID[knob_id].option_names

    # -- one event --
    def step(self, index: int, entry: StreamEntry) -> None:
        value, line = entry.value, entry.line
        if entry.problem is not None or type(value) is not dict:
            problem = entry.problem or f"an event must be a JSON object, got {a_json_type(value)}"
            self.add("undecodable", index, line, None, "", problem)
            return
        event = parse_event(value)
        kind = type(event)
        if kind in _PAYLOAD_ONLY and event.metadata is None and event.raw_event is None:
            self.chunk(index, line, value, event)
            return
        event_type = value.get("type")
        if type(event_type) is not str:
            event_type = None
        mirror = self.mirror
        ids, before = mirror.slice(event)
        run_active = before.run == "active"
        found, clean = self.judge(before, event)
        for violation, readings in found:
            self.report_monitor(index, line, event_type, event, value, violation, readings)
        if run_active and kind not in _UNTRACKED:
            self.track(index, line, event_type, event, clean)
        after = advance(before, event)
        if after is not before:
            mirror.merge(ids, before, after)
        if kind is RunStarted or kind is RunError or (kind is RunFinished and run_active):
            self.run.reset(index if kind is RunStarted else None)

    def chunk(self, index: int, line, value: dict, event: Event) -> None:
        """A text or argument chunk with no metadata or rawEvent (see :data:`_PAYLOAD_ONLY`):
        the monitor's answer is memoised on (belief, class, id, tag)."""
        mid = getattr(event, "message_id", None)
        ids, before = self.mirror.slice_ids(() if mid is None else (mid,))
        key = (before, type(event), mid if mid is not None else event.tool_call_id,
               event.subagent_run_id)
        hit = self.memo.get(key)
        if hit is None:
            if len(self.memo) > 4096:
                self.memo.clear()
            hit = self.memo[key] = (self.judge(before, event), advance(before, event))
        (found, _), after = hit
        if found:
            event_type = value["type"]
            for violation, readings in found:
                self.report_monitor(index, line, event_type, event, value, violation, readings)
        if after is not before:
            self.mirror.merge(ids, before, after)

    def report_monitor(self, index, line, event_type, event, value, violation: ProducerViolation,
                       readings) -> None:
        """Report one monitor violation: a malformed event at its member with the monitor's
        clause, an undescribed member (or role) one violation each, what a RUN_FINISHED leaves
        open one violation per entity; anything else at the member :data:`_POINTER` names, with
        the related opener's index for the step and tool-call kinds."""
        kind = violation.kind
        if isinstance(event, Malformed):
            self.add(kind, index, line, event_type, json_path_to_pointer(event.path),
                     f"{event.path}: {event.reason}", violation.clause, readings)
            return
        if kind == "undescribed-member":
            for notice in event.notices:
                if type(event) is TextMessageStart and notice.startswith("$.role "):
                    self.add("undescribed-role", index, line, event_type, "/role", notice,
                             None, readings)
                    continue
                self.add(kind, index, line, event_type, json_path_to_pointer(notice),
                         f"{notice} is not described by the schema",
                         _stripped_clause(event_type, notice, value), readings)
            return
        if kind in ("finish-with-open", "step-open-at-finish") and type(event) is RunFinished:
            self.open_at_finish(index, line, event_type, kind, readings)
            return
        pointer = _POINTER.get(kind, "")
        if kind == "id-reused-across-roles" and isinstance(event, MessagesSnapshot):
            pointer = _snapshot_pointer(value, violation.detail)
        elif kind == "delta-by-other-agent":  # its tag, or the activity it names untagged
            pointer = "/subagentRunId" if isinstance(value, dict) and \
                "subagentRunId" in value else "/messageId"
        related = None
        if kind == "step-opened-twice" or kind == "step-owner-disagrees":
            related = self.run.step_opened(event.subagent_run_id, event.step_name,
                                           kind == "step-owner-disagrees")
        elif kind == "tool-call-started-twice" or kind == "tool-owner-disagrees":
            related = self.run.tools.get(event.tool_call_id)
        self.add(kind, index, line, event_type, pointer, violation.detail, None, readings,
                 related)

    def open_at_finish(self, index: int, line, event_type, kind: str, readings) -> None:
        """The monitor's ``finish-with-open`` (texts, tool calls, invocations) or
        ``step-open-at-finish`` of a RUN_FINISHED, one violation per open entity of the belief
        (LIF-CLOSE-BEFORE-FINISH, LIF-STEP-CLOSE-BEFORE-FINISH)."""
        run, mirror = self.run, self.mirror
        if kind == "step-open-at-finish":
            for owner, name in self.open_steps():
                self.add(kind, index, line, event_type, "",
                         f"step {name!r}{_owned(owner)} is still open", None, readings,
                         run.steps.get((owner, name)))
            return
        for mid in sorted(mirror.open_texts):
            self.add(kind, index, line, event_type, "", f"text message {mid} is still open",
                     None, readings, run.text_opened.get(mid))
        for call in dict.fromkeys(c for c, _ in mirror.open_tools):
            self.add(kind, index, line, event_type, "", f"tool call {call} is still open",
                     None, readings, run.tools.get(call))
        for sub in sorted(mirror.subagents):
            self.add(kind, index, line, event_type, "",
                     f"subagent invocation {sub} is still active", None, readings,
                     run.subagent_opened.get(sub))

    def open_steps(self) -> list[tuple[Optional[str], str]]:
        """The belief's open steps, in the order they were opened."""
        opened = self.run.steps
        return sorted(self.mirror.open_steps,
                      key=lambda k: (opened.get(k, len(opened)), k[0] or "", k[1]))

    def track(self, index, line, event_type, event: Event,
              clean: Optional[tuple[str, ...]]) -> None:
        """The bookkeeping for related indices and the end-of-stream checks, and
        SNP-SHOULD-SNAPSHOT, on an event of an active run; ``clean``: the readings under which
        the monitor found no violation at the event (:class:`_Judgement`), those the warning
        holds under (so a delta that some readings reject, Q12=run's ACT-DELTA-BASELINE, still
        carries the others' SHOULD)."""
        run, kind = self.run, type(event)
        if kind is TextMessageStart:
            run.text_opened.setdefault(event.message_id, index)
        elif kind is ToolCallStart:
            run.tools.setdefault(event.tool_call_id, index)
        elif kind is ToolCallEnd:
            run.tools.pop(event.tool_call_id, None)
        elif kind is StepStarted:
            run.steps.setdefault((event.subagent_run_id, event.step_name), index)
        elif kind is StepFinished:
            run.steps.pop((event.subagent_run_id, event.step_name), None)
        elif kind is SubagentStarted:
            run.subagent_opened.setdefault(event.subagent_run_id, index)
        elif kind is ActivitySnapshot:
            run.snapshot_run[event.message_id] = (self.mirror.runs, index)
        elif kind is MessagesSnapshot:
            for m in event.messages:
                if m.is_activity:
                    run.snapshot_run[m.id] = (self.mirror.runs, index)
        elif kind is ActivityDelta and clean != () and event.message_id in self.mirror.acts:
            last = run.snapshot_run.get(event.message_id)
            if last is not None and last[0] < self.mirror.runs and \
                    event.message_id not in run.warned_fresh:
                run.warned_fresh.add(event.message_id)
                self.add("delta-without-fresh-snapshot", index, line, event_type, "/messageId",
                         f"{event.message_id} was last snapshotted in an earlier run "
                         f"(event {last[1]}); this run sent no snapshot of it",
                         readings=clean, related=last[1])

    def finish(self, events: int) -> None:
        """The end-of-stream violations: what the stream left open (the belief's open texts,
        tool calls, steps and invocations, then the run: LIF-CLOSE-BEFORE-FINISH,
        LIF-STEP-CLOSE-BEFORE-FINISH, LIF-RUN-CLOSE)."""
        mirror, run = self.mirror, self.run
        if mirror.run != "active":
            return
        for mid in sorted(mirror.open_texts):
            self.add("open-at-end", None, None, None, "",
                     f"text message {mid} was never ended", related=run.text_opened.get(mid))
        for call in dict.fromkeys(c for c, _ in mirror.open_tools):
            self.add("open-at-end", None, None, None, "", f"tool call {call} was never ended",
                     related=run.tools.get(call))
        for owner, name in self.open_steps():
            self.add("step-open-at-end", None, None, None, "",
                     f"step {name!r}{_owned(owner)} was never finished",
                     related=run.steps.get((owner, name)))
        for sub in sorted(mirror.subagents):
            self.add("open-at-end", None, None, None, "",
                     f"subagent invocation {sub} was never finished",
                     related=run.subagent_opened.get(sub))
        self.add("run-open-at-end", None, None, None, "",
                 f"the stream ended after {events} events with the run still active (no "
                 "RUN_FINISHED or RUN_ERROR)", related=run.started_at)


def _merged(where: list[dict]) -> list[dict]:
    """The partial assignments ``where`` (leaves of one judgement: disjoint, each fixing the knobs
    the monitor read on its way) with every group that covers all options of one knob, the other
    knobs agreeing, merged into one assignment without that knob, until none is left; in the
    order of the first producer reading each covers (``Q4-opener=current,Q12=stream`` ...
    ``Q4-opener=current,Q12=run`` become ``Q4-opener=current``)."""
    items = {tuple(sorted(a.items())) for a in where}
    merged = True
    while merged:
        merged = False
        for knob in PRODUCER_KNOBS:
            options = set(KNOB_BY_ID[knob].option_names)
            groups: dict[tuple, set] = {}
            for item in items:
                a = dict(item)
                if knob in a:
                    rest = tuple(sorted((k, v) for k, v in a.items() if k != knob))
                    groups.setdefault(rest, set()).add(a[knob])
            full = [rest for rest, seen in groups.items() if seen == options]
            if full:
                for rest in full:
                    items = {i for i in items if not (dict(i).get(knob) is not None and tuple(
                        sorted((k, v) for k, v in i if k != knob)) == rest)} | {rest}
                merged = True
    readings = producer_readings()

    def first_covered(item: tuple) -> int:
        return next(n for n, r in enumerate(readings) if all(r[k] == v for k, v in item))
    return [dict(i) for i in sorted(items, key=lambda i: (first_covered(i), i))]


def _owned(owner: Optional[str]) -> str:
    return f" of {owner}" if owner is not None else ""


_MESSAGE_PATH = re.compile(r"^\$\.messages\[(\d+)\]")


def _message_clause(value: dict, path: str) -> Optional[str]:
    """For a path inside MESSAGES_SNAPSHOT's ``messages``: SCH-ACTIVITY-MESSAGE for an activity
    message, SCH-MESSAGE-UNION for another; None for a path outside the messages."""
    m = _MESSAGE_PATH.match(path)
    if m is None:
        return None
    messages = value.get("messages")
    i = int(m.group(1))
    item = messages[i] if isinstance(messages, list) and i < len(messages) else None
    is_activity = isinstance(item, dict) and item.get("role") == "activity"
    return "SCH-ACTIVITY-MESSAGE" if is_activity else "SCH-MESSAGE-UNION"


def _stripped_clause(event_type: Optional[str], notice: str, value: dict) -> str:
    """The clause an undescribed member breaks, by the closed object it sits in: inside a
    MESSAGES_SNAPSHOT's messages, the message's schema (:func:`_message_clause`); elsewhere the
    producer monitor's table, :data:`model.producer.UNDESCRIBED_CLAUSES` (an activity event's or
    MESSAGES_SNAPSHOT's own schema clause, PRC-DROP-STRIP for any other event)."""
    if event_type == "MESSAGES_SNAPSHOT":
        clause = _message_clause(value, notice)
        if clause is not None:
            return clause
    return UNDESCRIBED_CLAUSES.get(event_type, UNDESCRIBED_CLAUSES["other"])


def _snapshot_pointer(value: dict, detail: str) -> str:
    """The pointer of the message an EVM-ID-UNIQUE violation of a MESSAGES_SNAPSHOT is about."""
    messages = value.get("messages") if isinstance(value.get("messages"), list) else []
    ids = [m.get("id") if isinstance(m, dict) else None for m in messages]
    if detail.startswith("one id twice"):
        seen: set = set()
        for i, mid in enumerate(ids):
            if mid in seen:
                return f"/messages/{i}/id"
            seen.add(mid)
        return "/messages"
    target = detail.split(":", 1)[0]
    return f"/messages/{ids.index(target)}/id" if target in ids else "/messages"


# --- entry points -------------------------------------------------------------------------------

MAX_VIOLATIONS_KEPT = 10_000
"""The most violations one report lists; more are counted (:attr:`LintReport.not_kept`) and
said in a note, so that an endless stream of violations does not grow without bound."""


def lint_stream(entries: Iterable[StreamEntry], reading: Optional[Reading] = None,
                source: str = "<input>", input_format: str = "jsonl",
                notes: Sequence[dict] = (), cut: Optional[Callable[[], Optional[str]]] = None,
                keep: int = MAX_VIOLATIONS_KEPT) -> LintReport:
    """Lint a stream.

    Args:
        entries: the stream's elements in arrival order (:class:`StreamEntry`; see
            :mod:`counterexamples.lint.inputs` for reading files, stdin and endpoints).
        reading: judge under this reading's producer options only (None: every producer
            reading, :func:`producer_readings`). Knobs other than
            :data:`~model.producer.PRODUCER_KNOBS` do not bear on producer conformance.
        source, input_format, notes: carried into the report.
        cut: called after the last entry: None when the stream ended, else why it was stopped
            (a bound, e.g. ``"--max-events 1000 reached"``): then the end-of-stream checks
            (what the stream left open) are not made, and a note says so.
        keep: the most violations listed (default :data:`MAX_VIOLATIONS_KEPT`).

    Memory: one entry at a time is held (``entries`` may be an endless generator, e.g.
    :class:`counterexamples.lint.inputs.LiveStream`); what the rules remember (the producer
    belief: ids, owners, open messages) and at most ``keep`` violations.

    Returns:
        A :class:`LintReport` with every violation (stream order, then the end-of-stream ones).

    Clauses: every producer clause of :data:`model.producer.ADVERSARIAL_KINDS`, the schema
    clauses of malformed and undescribed members, LIF-CLOSE-BEFORE-FINISH for tool calls, the
    clauses of :data:`PENDING_CLAUSES` and SNP-SHOULD-SNAPSHOT (:func:`clauses_checked`).
    """
    linter = _Linter(reading, keep)
    count = 0
    for index, entry in enumerate(entries):
        linter.step(index, entry)
        count = index + 1
    stopped = cut() if cut is not None else None
    notes = list(notes)
    if stopped is None:
        linter.finish(count)
    else:
        notes.append({"line": None, "text": f"stopped after {count} events: {stopped}; what "
                      "the stream left open at that point is not judged"})
    if any(linter.not_kept):
        notes.append({"line": None, "text": f"{sum(linter.not_kept)} violation(s) beyond the "
                      f"first {linter.keep} counted, not listed"})
    return LintReport(source, input_format, count,
                      None if reading is None else reading.name or "draft",
                      producer_readings(reading), tuple(linter.out), tuple(notes),
                      tuple(linter.not_kept))


def lint_wire(events: Iterable[Any], reading: Optional[Reading] = None,
              source: str = "<input>") -> LintReport:
    """:func:`lint_stream` over decoded wire values (dicts), or typed events
    (:class:`model.events.Event`, taken through their wire form: ``to_wire`` writes the described
    members only, so members the parser stripped from an event are not seen again; pass the
    wire dicts to have them reported)."""
    def entries() -> Iterator[StreamEntry]:
        for e in events:
            yield StreamEntry(e.to_wire() if isinstance(e, Event) else e)
    return lint_stream(entries(), reading, source, "json")
