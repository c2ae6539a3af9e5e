"""The producer: what a conformant agent may send next, and what a broken one might.

The producer keeps a :class:`Belief`: for each activity it created, what it believes the activity
holds (content, type, owner) after what it sent, plus the run status, the text messages it opened
and the subagent invocations it announced. :func:`violations` is the producer-side monitor: the
clause ids a next event would break (empty = conformant). On top of it:

* :func:`moves` enumerates the conformant next events over a finite :class:`Vocabulary`;
* :func:`adversarial_moves` enumerates non-conformant ones, each labelled with the clause it breaks;
* :func:`advance` updates the belief with an event sent;
* :func:`check_trace` runs the monitor over a whole trace (for SDK teams checking a producer);
* :func:`conformance_splits` finds, for a producer knob, the shortest trace whose conformance
  one of its options changes.

Where the producer's duty itself depends on an open question (Q2: does an untagged replace:false
agree with a subagent owner; Q4-opener: which snapshot opened an activity; Q12: who must have
created the activity a delta amends; Q17: must the RUN_STARTED.input echo be stripped of
activity messages), the monitor takes the reading's option. Q12 and Q17 are read by the monitor
alone (:data:`PRODUCER_ONLY_KNOBS`).
"""
from __future__ import annotations

import json
import re
from functools import lru_cache
from dataclasses import dataclass, field, replace
from typing import Iterator, Optional, Sequence

from model.events import (
    ActivityDelta, ActivitySnapshot, Event, Malformed, Message, MessagesSnapshot, PatchOp, RunError, RunFinished, RunStarted, SubagentFinished, SubagentStarted,
    StepFinished, StepStarted, SubagentError, TextMessageContent, TextMessageEnd, TextMessageStart,
    ToolCallArgs, ToolCallEnd, ToolCallStart, Unrecognised,
)
from model.frozen import fast_init
from model.json_values import JsonText, NonJsonValueError, freeze, is_json_object_text, thaw
from model.patch import apply_patch
from model.readings import DRAFT, KNOB_BY_ID, Reading
from model.wire import parse_event

__all__ = ["Vocabulary", "DEFAULT_VOCABULARY", "Belief", "ActivityBelief", "violations",
           "PRODUCER_KNOBS", "PRODUCER_ONLY_KNOBS", "conformance_splits",
           "monitor_disagreements",
           "moves", "adversarial_moves", "advance", "check_trace", "ADVERSARIAL_KINDS",
           "MALFORMED_KIND_CLAUSES", "ProducerViolation", "load_vocabulary",
           "UNKNOWN_ROLE_TEXT_START", "UNDESCRIBED_CLAUSES", "closing_events", "closed"]


@dataclass(frozen=True)
class Vocabulary:
    """The finite world the producer draws from.

    Attributes:
        activity_ids: message ids used for activities.
        text_ids: message ids used for text messages.
        owners: attributions; None is the parent agent, strings are subagent run ids.
        activity_types: activity types.
        contents: snapshot contents (JSON objects).
        patches: named patches (lists of RFC 6902 operation objects).
        metadata: metadata values for activity events (None = no metadata member).
        replace_flags: values of ``replace`` on snapshots (None = absent).
        max_runs: how many runs a trace may open.
    """

    activity_ids: tuple[str, ...] = ("act-1", "act-2")
    text_ids: tuple[str, ...] = ("msg-1",)
    owners: tuple[Optional[str], ...] = (None, "sub-1", "sub-2")
    activity_types: tuple[str, ...] = ("PLAN", "SEARCH")
    contents: tuple[dict, ...] = ({"n": 0, "items": []}, {"n": 1})
    patches: tuple[tuple[str, tuple[dict, ...]], ...] = (
        ("set-n", ({"op": "replace", "path": "/n", "value": 2},)),
        ("append-item", ({"op": "add", "path": "/items/-", "value": "x"},)),
        ("empty", ()),
        ("remove-missing", ({"op": "remove", "path": "/missing"},)),
        ("partly-applies", ({"op": "replace", "path": "/n", "value": 5},
                            {"op": "remove", "path": "/missing"})),
        ("test-fails", ({"op": "test", "path": "/n", "value": True},
                        {"op": "replace", "path": "/n", "value": 3})),
        ("unknown-op", ({"op": "increment", "path": "/n"},
                        {"op": "replace", "path": "/n", "value": 4})),
        ("root-array", ({"op": "replace", "path": "", "value": []},)),
    )
    metadata: tuple[Optional[dict], ...] = (None, {"k": {"a": 1}}, {"k": {"b": None}})
    replace_flags: tuple[Optional[bool], ...] = (None, True, False)
    max_runs: int = 2

    def to_json(self) -> dict:
        """The vocabulary as JSON (the format :func:`load_vocabulary` reads)."""
        return {"activityIds": list(self.activity_ids), "textIds": list(self.text_ids),
                "owners": list(self.owners), "activityTypes": list(self.activity_types),
                "contents": list(self.contents),
                "patches": {name: list(ops) for name, ops in self.patches},
                "metadata": list(self.metadata), "replaceFlags": list(self.replace_flags),
                "maxRuns": self.max_runs}


DEFAULT_VOCABULARY = Vocabulary()


def load_vocabulary(doc: dict, base: Optional[Vocabulary] = None) -> Vocabulary:
    """Build a vocabulary from its JSON form (see :meth:`Vocabulary.to_json`); members left out
    take ``base``'s (default :data:`DEFAULT_VOCABULARY`, the search's; the exhaustive search
    passes its own smaller one).

    Every value must make well-formed events: ids, types and owners are strings (an owner may be
    null, the parent), contents are objects, metadata objects or null, replace flags booleans or
    null, patches arrays of operations that pass the wire's structural checks (SNP-MALFORMED-OP).

    And every value must be a distinct choice, or the search means nothing: ids, types, owners and
    patch names are not empty, no array holds the same value twice (nor two patches the same
    operations), and a message id is an activity id or a text id, never both, nor the id of the
    history message the producer restates (EVM-ID-UNIQUE: ids are unique across roles).

    Raises:
        ValueError: naming the member, the index within it and the offending value, e.g.
            ``activityIds[1]: "a" repeats activityIds[0]``.
    """
    if not isinstance(doc, dict):
        raise ValueError("a vocabulary is a JSON object")
    try:
        freeze(doc)
    except NonJsonValueError as exc:
        raise ValueError(f"not a JSON value: {exc}") from None
    known = set(DEFAULT_VOCABULARY.to_json())
    unknown = sorted(set(doc) - known)
    if unknown:
        raise ValueError(f"unknown member(s) {', '.join(unknown)}; members: {', '.join(sorted(known))}")

    def items(name, default, check, what, nonempty_text=False):
        value = doc.get(name, default)
        if not isinstance(value, (list, tuple)) or not value:
            raise ValueError(f"{name}: expected a non-empty array")
        seen: dict[str, int] = {}
        for i, item in enumerate(value):
            if not check(item):
                raise ValueError(f"{name}[{i}]: expected {what}, got {json.dumps(item)[:40]}")
            if nonempty_text and item == "":
                raise ValueError(f"{name}[{i}]: expected {what}, got the empty string")
            key = freeze(item)
            if key in seen:
                raise ValueError(f"{name}[{i}]: {_shown(item)} repeats {name}[{seen[key]}]")
            seen[key] = i
        return tuple(value)

    d = DEFAULT_VOCABULARY if base is None else base
    is_str = lambda v: isinstance(v, str)  # noqa: E731
    patches = d.patches
    if "patches" in doc:
        if not isinstance(doc["patches"], dict) or not doc["patches"]:
            raise ValueError("patches: expected a non-empty object of named patches")
        seen_ops: dict[str, str] = {}
        for name, ops in doc["patches"].items():
            if name == "":
                raise ValueError('patches[""]: expected a patch name, got the empty string')
            probe = parse_event({"type": "ACTIVITY_DELTA", "messageId": "m", "activityType": "t",
                                 "patch": ops})
            if isinstance(probe, Malformed):
                # $.patch[0].op -> patches.NAME[0].op; $.patch itself -> patches.NAME
                raise ValueError(f"patches.{name}{probe.path.replace('$.patch', '', 1)}: "
                                 f"{probe.reason}")
            key = freeze(ops)
            if key in seen_ops:
                raise ValueError(f"patches.{name}: the same operations as patches.{seen_ops[key]}")
            seen_ops[key] = name
        patches = tuple((k, tuple(v)) for k, v in doc["patches"].items())
    max_runs = doc.get("maxRuns", d.max_runs)
    if isinstance(max_runs, bool) or not isinstance(max_runs, int) or max_runs < 1:
        raise ValueError("maxRuns: expected a whole number of at least 1")
    activity_ids = items("activityIds", d.activity_ids, is_str, "a non-empty string", True)
    text_ids = items("textIds", d.text_ids, is_str, "a non-empty string", True)
    for i, tid in enumerate(text_ids):
        if tid in activity_ids:
            raise ValueError(f"textIds[{i}]: {_shown(tid)} is also activityIds"
                             f"[{activity_ids.index(tid)}]; a message id is unique across roles "
                             "(EVM-ID-UNIQUE)")
    for name, ids in (("activityIds", activity_ids), ("textIds", text_ids)):
        for restated in _HISTORY_ALL:
            if restated.id in ids:
                raise ValueError(f"{name}[{ids.index(restated.id)}]: {_shown(restated.id)} is "
                                 "the id of a history message the producer restates; a message "
                                 "id is unique across roles (EVM-ID-UNIQUE)")
    return Vocabulary(
        activity_ids=activity_ids,
        text_ids=text_ids,
        owners=items("owners", d.owners, lambda v: v is None or is_str(v),
                     "a non-empty string or null", True),
        activity_types=items("activityTypes", d.activity_types, is_str, "a non-empty string",
                             True),
        contents=items("contents", d.contents, lambda v: isinstance(v, dict), "an object"),
        patches=patches,
        metadata=items("metadata", d.metadata, lambda v: v is None or isinstance(v, dict),
                       "an object or null"),
        replace_flags=items("replaceFlags", d.replace_flags,
                            lambda v: v is None or isinstance(v, bool), "true, false or null"),
        max_runs=max_runs,
    )


def _shown(value) -> str:
    """A vocabulary value as it reads in an error: its JSON, cut to 40 characters."""
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 40 else text[:37] + "..."


@fast_init
@dataclass(frozen=True, slots=True, init=False)
class ActivityBelief:
    """What the producer believes one activity holds.

    Attributes:
        content: canonical text of the content.
        activity_type: the type.
        owner: the owner it minted (None = parent).
        opener: the owner of the snapshot that first created it.
        via_snapshot: True when created by ACTIVITY_SNAPSHOT (the baseline ACT-DELTA-BASELINE
            names); False when known only from a MESSAGES_SNAPSHOT.
    """

    content: JsonText
    activity_type: str
    owner: Optional[str]
    opener: Optional[str]
    via_snapshot: bool = True


@fast_init
@dataclass(frozen=True, slots=True, init=False)
class Belief:
    """The producer's view after what it sent; hashable.

    Attributes:
        run: ``"idle"``, ``"active"``, ``"finished"`` or ``"errored"``.
        runs: how many runs it opened.
        activities: ``((id, ActivityBelief), ...)`` in creation order.
        texts: ids of text messages it opened, in order; ``open_texts`` those not yet ended;
            ``text_owners`` the owner each was opened under.
        tags_used: subagent run ids attributed in this run (for SUB-STARTED-FIRST).
        subagents: active invocations; ``finished`` invocations finished in this run.
        others: ids a MESSAGES_SNAPSHOT stated as non-activity messages (restated history, run
            input) that are not texts the producer opened; with ``texts``, the ids the producer
            uses in a non-activity role (EVM-ID-UNIQUE, N80; the thread keeps them across runs).
        dropped: ids of activities a self-revoking MESSAGES_SNAPSHOT left out (STA-MS-SELF-REVOKE)
            and not created again since: no longer held, but still ids of the activity role
            (EVM-ID-UNIQUE).
        open_steps: ``(owner, step name)`` of steps opened in this run and not finished
            (LIF-STEP-OPEN-ONCE, LIF-STEP-FINISH-OPENED; per owner, SUB-STEP-PER-OWNER).
        open_tools: ``(tool call id, owner)`` of tool calls started in this run and not ended
            (TOOL-CALL-OPEN-ONCE, SUB-OWNER-AGREE, LIF-CLOSE-BEFORE-FINISH).
        earlier: ids of activities held from an earlier run that no snapshot of this run has
            restated (reading Q12=run).
    """

    run: str = "idle"
    runs: int = 0
    activities: tuple[tuple[str, ActivityBelief], ...] = ()
    texts: tuple[str, ...] = ()
    open_texts: frozenset[str] = frozenset()
    subagents: frozenset[str] = frozenset()
    finished: frozenset[str] = frozenset()
    text_owners: tuple[tuple[str, Optional[str]], ...] = ()
    tags_used: frozenset[str] = frozenset()
    others: frozenset[str] = frozenset()
    dropped: frozenset[str] = frozenset()
    open_steps: frozenset[tuple[Optional[str], str]] = frozenset()
    open_tools: tuple[tuple[str, Optional[str]], ...] = ()
    earlier: frozenset[str] = frozenset()
    _hash: int = field(default=0, init=False, repr=False, compare=False)

    def text_owner(self, message_id: str) -> Optional[str]:
        """The owner a text message was opened under (None: the parent)."""
        return dict(self.text_owners).get(message_id)

    def activity(self, message_id: str) -> Optional[ActivityBelief]:
        for mid, a in self.activities:
            if mid == message_id:
                return a
        return None

    def non_activity(self, message_id: str) -> bool:
        """Whether the producer uses ``message_id`` for a non-activity message: a text it opened
        or a message a MESSAGES_SNAPSHOT stated with another role (EVM-ID-UNIQUE)."""
        return message_id in self.texts or message_id in self.others

    def activity_role(self, message_id: str) -> bool:
        """Whether ``message_id`` is an activity's id: held, or dropped by a self-revoking
        MESSAGES_SNAPSHOT (EVM-ID-UNIQUE: the id keeps its role in the thread)."""
        return message_id in self.dropped or self.activity(message_id) is not None

    def with_activity(self, message_id: str, belief: ActivityBelief) -> "Belief":
        if message_id in self.dropped:  # created again (Q10: "does not hold")
            self = self.but(dropped=self.dropped - {message_id})
        items = [(m, a) for m, a in self.activities if m != message_id]
        if len(items) == len(self.activities):
            return self.but(activities=self.activities + ((message_id, belief),))
        return self.but(activities=tuple((m, belief if m == message_id else a)
                                         for m, a in self.activities))


ADVERSARIAL_KINDS: dict[str, str] = {
    "before-start": "LIF-STREAM-START",
    "after-close": "LIF-AFTER-CLOSE",
    "run-started-twice": "LIF-ONE-ACTIVE",
    "delta-without-baseline": "ACT-DELTA-BASELINE",
    "delta-on-unknown-id": "SNP-BASELINE",
    "non-object-result": "ACT-DELTA-OBJECT",
    "replace-false-owner-disagrees": "ACT-ATTR-AGREE",
    "delta-owner-disagrees": "SUB-OWNER-AGREE",
    "text-owner-disagrees": "SUB-OWNER-AGREE",
    "id-reused-across-roles": "EVM-ID-UNIQUE",
    "null-optional-member": "EVM-ABSENT-NOT-NULL",
    "null-subagent-run-id": "SUB-ABSENT-PARENT",
    "null-metadata": "MET-NOT-NULL",
    "content-not-object": "SCH-ACTIVITY-SNAPSHOT",
    "malformed-patch": "SNP-MALFORMED-OP",
    "malformed-member": "PRC-MALFORMED-FATAL",
    "unknown-event-type": "PRC-NO-PRIVATE-TYPES",
    "undescribed-member": "SCH-ACTIVITY-SNAPSHOT",
    "subagent-started-twice": "SUB-STARTED-ACTIVE",
    "finished-subagent-reused": "SUB-NO-REUSE",
    "tag-after-finished": "SUB-NO-REUSE-FINISHED",
    "announced-after-use": "SUB-STARTED-FIRST",
    "history-restreamed": "LIF-RESTATE-SNAPSHOT",
    "finish-with-open": "LIF-CLOSE-BEFORE-FINISH",
    "step-opened-twice": "LIF-STEP-OPEN-ONCE",
    "step-not-open": "LIF-STEP-FINISH-OPENED",
    "step-owner-disagrees": "SUB-OWNER-AGREE",
    "step-open-at-finish": "LIF-STEP-CLOSE-BEFORE-FINISH",
    "tool-call-started-twice": "TOOL-CALL-OPEN-ONCE",
    "tool-owner-disagrees": "SUB-OWNER-AGREE",
    "parent-not-announced": "SUB-PARENT-ANNOUNCED",
    "delta-by-other-agent": "ACT-DELTA-BASELINE",
    "delta-from-earlier-run": "ACT-DELTA-BASELINE",
    "activity-in-echo": "RIN-ECHO-STRIPPED",
}
"""Kind of adversarial move -> the producer clause it breaks (a malformed kind's violation cites
the member's own schema clause, one of :data:`MALFORMED_KIND_CLAUSES`; an undescribed member
cites the clause of what was stripped, :data:`UNDESCRIBED_CLAUSES`)."""

UNDESCRIBED_CLAUSES: dict[str, str] = {
    "ACTIVITY_SNAPSHOT": "SCH-ACTIVITY-SNAPSHOT",
    "ACTIVITY_DELTA": "SCH-ACTIVITY-DELTA",
    "MESSAGES_SNAPSHOT": "SCH-MESSAGES-SNAPSHOT",
    "unrecognised-value": "PRC-STRIP-POSITION",
    "other": "PRC-DROP-STRIP",
}
"""The clause an ``undescribed-member`` violation cites, by what the wire stripped: a member the
schema of an activity event or of MESSAGES_SNAPSHOT does not describe (that event's schema
clause); a value the draft does not define in a slot, such as an unrecognised ``role``
(``unrecognised-value``: PRC-STRIP-POSITION); an undescribed member of any other event's closed
object (``other``: PRC-DROP-STRIP). Read by :func:`violations` from the event's first notice."""

MALFORMED_KIND_CLAUSES: dict[str, tuple[str, ...]] = {
    "content-not-object": ("SCH-ACTIVITY-SNAPSHOT",),
    "malformed-patch": ("SNP-MALFORMED-OP", "SCH-JSON-POINTER"),
    "malformed-member": ("PRC-MALFORMED-FATAL", "SCH-REPLACE", "SCH-ACTIVITY-SNAPSHOT",
                         "SCH-ACTIVITY-DELTA", "SCH-MESSAGES-SNAPSHOT", "SCH-ACTIVITY-MESSAGE",
                         "SCH-MESSAGE-UNION"),
    "undescribed-member": tuple(dict.fromkeys(UNDESCRIBED_CLAUSES.values())),
}
"""The clauses a malformed event's violation may cite, by kind: the schema clause of the member at
fault (:func:`_malformed_violation`), the first being the kind's entry in
:data:`ADVERSARIAL_KINDS`."""


@dataclass(frozen=True)
class ProducerViolation:
    """A producer clause an event breaks: ``kind`` (a key of :data:`ADVERSARIAL_KINDS`),
    ``clause`` and ``detail``."""

    kind: str
    clause: str
    detail: str = ""


def _v(kind: str, detail: str = "") -> ProducerViolation:
    return ProducerViolation(kind, ADVERSARIAL_KINDS[kind], detail)


def _undescribed_violation(event: Event) -> ProducerViolation:
    """The ``undescribed-member`` violation of an event whose wire had material stripped
    (``event.notices`` non-empty), citing :data:`UNDESCRIBED_CLAUSES` by its first notice."""
    if event.notices[0].endswith(" unrecognised)"):
        clause = UNDESCRIBED_CLAUSES["unrecognised-value"]
    else:
        clause = UNDESCRIBED_CLAUSES.get(event.type_name, UNDESCRIBED_CLAUSES["other"])
    return ProducerViolation("undescribed-member", clause, ", ".join(event.notices))


PRODUCER_KNOBS: tuple[str, ...] = ("Q2", "Q4-opener", "Q12", "Q17")
"""The knobs the producer's obligations read (:func:`violations`: ACT-ATTR-AGREE reads Q2,
SUB-OWNER-AGREE reads Q4-opener, ACT-DELTA-BASELINE reads Q12, RIN-ECHO-STRIPPED reads Q17).
What a conformant producer may send depends on them, so the engines fork conformance on them:
the all-readings sweep, the Z3 encoding's producer readings, and ``lint``'s readings. Declared
once here; a knob the monitor starts to read must be added."""

PRODUCER_ONLY_KNOBS: tuple[str, ...] = ("Q12", "Q17")
"""The producer knobs the consumer step never consults (producer-side questions): their options
change which traces are conformant, never a consumer verdict, so they are settled by
:func:`conformance_splits` (the shortest trace whose conformance an option changes). Each one's
draft option is its most permissive: the others only add violations."""
_unknown = [k for k in PRODUCER_KNOBS if k not in KNOB_BY_ID] + \
    [k for k in PRODUCER_ONLY_KNOBS if k not in PRODUCER_KNOBS]
if _unknown:  # pragma: no cover - a declaration error, raised at import
    raise ImportError(f"PRODUCER_KNOBS names unknown knobs: {_unknown}")
del _unknown


def violations(belief: Belief, event: Event, reading: Reading = DRAFT
               ) -> tuple[ProducerViolation, ...]:
    """The producer clauses ``event`` breaks when sent in ``belief`` (empty tuple: conformant).

    Clauses: LIF-STREAM-START, LIF-AFTER-CLOSE, LIF-ONE-ACTIVE, ACT-DELTA-BASELINE (and
    SNP-BASELINE; with Q12: under ``owner`` a delta from another agent than the activity's
    owner, under ``run`` one against an earlier run's activity no snapshot of this run
    restated), RIN-ECHO-STRIPPED (with Q17=strip-echo: a RUN_STARTED.input echo holding an
    activity message), ACT-DELTA-OBJECT, ACT-ATTR-AGREE (with Q2), SUB-OWNER-AGREE (with Q4-opener),
    EVM-ID-UNIQUE, EVM-ABSENT-NOT-NULL / SUB-ABSENT-PARENT / MET-NOT-NULL, the schema shapes,
    PRC-NO-PRIVATE-TYPES, SUB-STARTED-ACTIVE, SUB-NO-REUSE-FINISHED.

    EVM-ID-UNIQUE (N80) covers every role the producer gave an id: an ACTIVITY_SNAPSHOT or
    ACTIVITY_DELTA on an id it uses for a non-activity message (a text it opened, or a message a
    MESSAGES_SNAPSHOT stated with another role, e.g. restated history), a text event on an
    activity's id (held, or dropped by a self-revoking MESSAGES_SNAPSHOT), and a
    MESSAGES_SNAPSHOT that states an activity's id with another role or a non-activity id as an
    activity. After a self-revoking MESSAGES_SNAPSHOT dropped an activity (STA-MS-SELF-REVOKE),
    the producer holds nothing for its id: a delta on it has no baseline (ACT-DELTA-BASELINE,
    SNP-BASELINE), and any ACTIVITY_SNAPSHOT on it, ``replace: false`` included, creates the
    activity again (whether the consumer creates it is Q10's reading, not the producer's duty).
    """
    kind = type(event)
    if (kind is ActivitySnapshot or kind is ActivityDelta) and belief.run == "active" and \
            not event.notices:
        return _activity_violations(belief, event, reading)
    out: list[ProducerViolation] = []
    if isinstance(event, Malformed):
        wire = event.to_wire()
        if event.path in ("$.subagentRunId",) and wire.get("subagentRunId", 0) is None:
            out.append(_v("null-subagent-run-id", event.path))
        elif event.path == "$.metadata" and wire.get("metadata", 0) is None:
            out.append(_v("null-metadata", event.path))
        elif event.clause == "EVM-ABSENT-NOT-NULL":
            out.append(_v("null-optional-member", event.path))
        else:
            out.append(_malformed_violation(event, wire))
        return tuple(out)
    if isinstance(event, Unrecognised):
        return (_v("unknown-event-type", event.name),)
    if event.notices:
        out.append(_undescribed_violation(event))
    if isinstance(event, RunStarted):
        if belief.run == "active":
            return (_v("run-started-twice"),)
        if event.input is not None and _echoes_activity(event.input) and \
                reading.q17 == "strip-echo":
            return (_v("activity-in-echo", event.run_id),)
        return ()
    if isinstance(event, RunError):
        return (_v("after-close", "RUN_ERROR after RUN_ERROR"),) if belief.run == "errored" else ()
    if belief.run != "active":
        return (_v("before-start" if belief.run == "idle" else "after-close", event.type_name),)
    if isinstance(event, RunFinished):
        if belief.open_texts or belief.subagents or belief.open_tools:
            out.append(_v("finish-with-open", ", ".join(
                sorted(belief.open_texts | belief.subagents) + [c for c, _ in belief.open_tools])))
        if belief.open_steps:
            out.append(_v("step-open-at-finish", ", ".join(
                sorted(name for _, name in belief.open_steps))))
        return tuple(out)
    if isinstance(event, (ActivitySnapshot, ActivityDelta)):
        out.extend(_activity_violations(belief, event, reading))
        return tuple(out)
    tag = getattr(event, "subagent_run_id", None)
    if tag is not None and tag in belief.finished and not isinstance(event, SubagentStarted):
        out.append(_v("tag-after-finished", tag))
    if isinstance(event, TextMessageStart):
        if belief.activity_role(event.message_id):
            out.append(_v("id-reused-across-roles", event.message_id))
        elif belief.non_activity(event.message_id):  # streamed, or stated by a snapshot
            out.append(_v("history-restreamed", event.message_id))
    elif isinstance(event, (TextMessageContent, TextMessageEnd)):
        if belief.activity_role(event.message_id):
            out.append(_v("id-reused-across-roles", event.message_id))
        elif tag is not None and event.message_id in belief.texts and \
                tag != belief.text_owner(event.message_id):
            out.append(_v("text-owner-disagrees",
                          f"{tag} vs opener {belief.text_owner(event.message_id) or 'parent'}"))
    elif isinstance(event, MessagesSnapshot):
        ids = [m.id for m in event.messages]
        if len(ids) != len(set(ids)):
            out.append(_v("id-reused-across-roles", "one id twice in MESSAGES_SNAPSHOT"))
        else:
            for m in event.messages:
                if m.is_activity and belief.non_activity(m.id):
                    out.append(_v("id-reused-across-roles", f"{m.id}: stated as an activity"))
                    break
                if not m.is_activity and belief.activity_role(m.id):
                    out.append(_v("id-reused-across-roles", f"{m.id}: stated as {m.role}"))
                    break
    elif isinstance(event, (StepStarted, StepFinished)):
        out.extend(_step_violations(belief, event))
    elif isinstance(event, (ToolCallStart, ToolCallArgs, ToolCallEnd)):
        out.extend(_tool_violations(belief, event, tag))
    elif isinstance(event, SubagentStarted):
        parent = event.parent_subagent_run_id
        if parent is not None and parent not in belief.subagents and parent not in belief.finished:
            out.append(_v("parent-not-announced", parent))
        if event.subagent_run_id in belief.subagents:
            out.append(_v("subagent-started-twice", event.subagent_run_id))
        elif event.subagent_run_id in belief.finished:
            out.append(_v("finished-subagent-reused", event.subagent_run_id))
        elif event.subagent_run_id in belief.tags_used:
            out.append(_v("announced-after-use", event.subagent_run_id))
    return tuple(out)


@lru_cache(maxsize=256)
def _echoes_activity(run_input: JsonText) -> bool:
    """Whether a RUN_STARTED.input echo's ``messages`` hold an activity message (reading
    Q17: RIN-ECHO-STRIPPED)."""
    value = thaw(run_input)
    messages = value.get("messages") if isinstance(value, dict) else None
    return isinstance(messages, list) and any(
        isinstance(m, dict) and m.get("role") == "activity" for m in messages)


_MESSAGE_PATH = re.compile(r"^\$\.messages\[(\d+)\]")


def _malformed_violation(event: Malformed, wire: dict) -> ProducerViolation:
    """The violation of a malformed event (not a null optional member), labelled by its actual
    fault: a pointer that is not one (SCH-JSON-POINTER) or another patch fault: not an array, an
    operation lacking or mistyping a required member (SNP-MALFORMED-OP, N39: the clause the
    consumer's verdict cites for the same event), kind ``malformed-patch``; an ACTIVITY_SNAPSHOT ``content`` that is not an object,
    ``content-not-object``; any other member, ``malformed-member``, citing the schema of the
    object it sits in (SCH-REPLACE, SCH-ACTIVITY-SNAPSHOT, SCH-ACTIVITY-DELTA, a message of a
    MESSAGES_SNAPSHOT: SCH-ACTIVITY-MESSAGE or SCH-MESSAGE-UNION, SCH-MESSAGES-SNAPSHOT), or
    PRC-MALFORMED-FATAL for an event whose schema the reference pages do not hold."""
    detail = f"{event.path}: {event.reason}"
    name, path = event.name, event.path
    if event.clause == "SCH-JSON-POINTER":
        return ProducerViolation("malformed-patch", "SCH-JSON-POINTER", detail)
    if path.startswith(("$.patch", "$.delta")):
        return ProducerViolation("malformed-patch", "SNP-MALFORMED-OP", detail)
    if name == "ACTIVITY_SNAPSHOT" and path == "$.content":
        return ProducerViolation("content-not-object", "SCH-ACTIVITY-SNAPSHOT", detail)
    clause = "PRC-MALFORMED-FATAL"
    if name == "ACTIVITY_SNAPSHOT":
        clause = "SCH-REPLACE" if path == "$.replace" else "SCH-ACTIVITY-SNAPSHOT"
    elif name == "ACTIVITY_DELTA":
        clause = "SCH-ACTIVITY-DELTA"
    elif name == "MESSAGES_SNAPSHOT":
        clause = "SCH-MESSAGES-SNAPSHOT"
        m = _MESSAGE_PATH.match(path)
        messages = wire.get("messages")
        if m is not None and isinstance(messages, list) and int(m.group(1)) < len(messages):
            item = messages[int(m.group(1))]
            clause = "SCH-ACTIVITY-MESSAGE" if isinstance(item, dict) and \
                item.get("role") == "activity" else "SCH-MESSAGE-UNION"
        elif m is not None:
            clause = "SCH-MESSAGE-UNION"
    return ProducerViolation("malformed-member", clause, detail)


def _step_violations(belief: Belief, event) -> list[ProducerViolation]:
    """LIF-STEP-OPEN-ONCE and LIF-STEP-FINISH-OPENED, per owner (SUB-STEP-PER-OWNER); a
    STEP_FINISHED whose step of that name is open only under another owner carries the wrong
    attribution (SUB-OWNER-AGREE)."""
    key = (event.subagent_run_id, event.step_name)
    if isinstance(event, StepStarted):
        return [_v("step-opened-twice", event.step_name)] if key in belief.open_steps else []
    if key in belief.open_steps:
        return []
    others = sorted(o or "parent" for o, name in belief.open_steps if name == event.step_name)
    if others:
        return [_v("step-owner-disagrees", f"{event.subagent_run_id or 'parent'} vs opener "
                                           f"{others[0]}")]
    return [_v("step-not-open", event.step_name)]


def _tool_violations(belief: Belief, event, tag: Optional[str]) -> list[ProducerViolation]:
    """TOOL-CALL-OPEN-ONCE for a TOOL_CALL_START on an open call's id; SUB-OWNER-AGREE for a
    TOOL_CALL_ARGS or TOOL_CALL_END whose tag disagrees with its TOOL_CALL_START."""
    opened = next((o for c, o in belief.open_tools if c == event.tool_call_id), _NOT_OPEN)
    if isinstance(event, ToolCallStart):
        return [] if opened is _NOT_OPEN else [_v("tool-call-started-twice", event.tool_call_id)]
    if opened is not _NOT_OPEN and tag is not None and tag != opened:
        return [_v("tool-owner-disagrees", f"{tag} vs opener {opened or 'parent'}")]
    return []


_NOT_OPEN = object()


def _activity_violations(belief: Belief, event, reading: Reading
                         ) -> tuple[ProducerViolation, ...]:
    """:func:`violations` for an ACTIVITY_SNAPSHOT or ACTIVITY_DELTA in an active run (the hot
    path of move enumeration); same clauses, same order."""
    out: list[ProducerViolation] = []
    tag = event.subagent_run_id
    if tag is not None and tag in belief.finished:
        out.append(_v("tag-after-finished", tag))
    held = belief.activity(event.message_id)
    if type(event) is ActivitySnapshot:
        if held is None:  # a new id, an id dropped by STA-MS-SELF-REVOKE, or another role's
            if belief.non_activity(event.message_id):
                out.append(_v("id-reused-across-roles", event.message_id))
        elif event.replace is False:
            disagrees = tag != held.owner if tag is not None else \
                held.owner is not None and reading.q2 == "parent"
            if disagrees:
                out.append(_v("replace-false-owner-disagrees",
                              f"{tag or 'parent'} vs owner {held.owner or 'parent'}"))
        return tuple(out)
    if held is None:  # no snapshot (N18) and no baseline at all (N37), e.g. a dropped activity
        if belief.non_activity(event.message_id):
            out.append(_v("id-reused-across-roles", event.message_id))
        out.append(_v("delta-without-baseline", event.message_id))
        out.append(_v("delta-on-unknown-id", event.message_id))
        return tuple(out)
    if not held.via_snapshot:
        out.append(_v("delta-without-baseline", event.message_id))
        return tuple(out)
    if tag != held.owner and reading.q12 == "owner":  # Q12: only the owner created it
        out.append(_v("delta-by-other-agent", f"{tag or 'parent'} vs owner "
                                              f"{held.owner or 'parent'}"))
    elif event.message_id in belief.earlier and reading.q12 == "run":
        out.append(_v("delta-from-earlier-run", event.message_id))
    if tag is not None:
        # Q4-opener is read only where its options name different openers
        opener = held.owner if held.owner == held.opener or reading.q4_opener == "current" \
            else held.opener
        if tag != opener:
            out.append(_v("delta-owner-disagrees", f"{tag} vs opener {opener or 'parent'}"))
    ops = event.patch if all(op.recognised for op in event.patch) else \
        tuple(op for op in event.patch if op.recognised)
    outcome = apply_patch(held.content, ops)
    if outcome.ok and not is_json_object_text(outcome.result):
        out.append(_v("non-object-result", event.message_id))
    return tuple(out)


def advance(belief: Belief, event: Event) -> Belief:
    """The belief after the producer sent ``event`` (its intent, whatever the consumer did).

    A MESSAGES_SNAPSHOT that carries an activity states the complete activity set
    (STA-MS-SELF-REVOKE): held activities it does not list leave the belief (their ids move to
    ``dropped``); one with no activity leaves them held (STA-MS-DROP-EXCEPT). A listed activity
    already held keeps its opener and baseline flag (Q4-opener, Q8-iv); one not held is known
    from the snapshot only (no ACT-DELTA-BASELINE baseline, opener its owner). Ids it states with
    another role join ``others`` (EVM-ID-UNIQUE).
    """
    tag = getattr(event, "subagent_run_id", None)
    if tag is not None and tag not in belief.tags_used and \
            not isinstance(event, (SubagentStarted, SubagentFinished, SubagentError)):
        belief = belief.but(tags_used=belief.tags_used | {tag})
    if isinstance(event, RunStarted):  # the activities held now are of an earlier run (Q12)
        return belief.but(run="active", runs=belief.runs + 1, open_texts=frozenset(),
                          subagents=frozenset(), finished=frozenset(), tags_used=frozenset(),
                          open_steps=frozenset(), open_tools=(),
                          earlier=frozenset(mid for mid, _ in belief.activities))
    if isinstance(event, RunFinished):
        return belief.but(run="finished", open_texts=frozenset(), open_steps=frozenset(),
                          open_tools=())
    if isinstance(event, RunError):
        return belief.but(run="errored", open_texts=frozenset(), open_steps=frozenset(),
                          open_tools=())
    if isinstance(event, ActivitySnapshot):
        if event.message_id in belief.earlier:  # restated in this run
            belief = belief.but(earlier=belief.earlier - {event.message_id})
        held = belief.activity(event.message_id)
        if held is None:
            return belief.with_activity(event.message_id, ActivityBelief(
                event.content, event.activity_type, event.subagent_run_id,
                event.subagent_run_id, True))
        # A snapshot, applied or declined, is a baseline (SNP-SPENT), also for an activity
        # first known from a MESSAGES_SNAPSHOT.
        if event.replacing:
            return belief.with_activity(event.message_id, ActivityBelief(
                event.content, event.activity_type, event.subagent_run_id, held.opener, True))
        return belief.with_activity(event.message_id, held.but(via_snapshot=True))
    if isinstance(event, ActivityDelta):
        held = belief.activity(event.message_id)
        if held is None:
            return belief
        outcome = apply_patch(held.content, tuple(op for op in event.patch if op.recognised))
        content = outcome.result if outcome.ok else held.content
        return belief.with_activity(event.message_id, held.but(
            content=content, activity_type=event.activity_type))
    if isinstance(event, MessagesSnapshot):
        out = belief
        listed = {m.id for m in event.messages if m.is_activity}
        if out.earlier:  # restated in this run, or dropped: no longer an earlier run's
            out = out.but(earlier=frozenset(mid for mid in out.earlier if mid not in listed
                                            and not (listed and out.activity(mid))))
        if listed:  # self-revoking: the activities it leaves out are gone
            gone = frozenset(mid for mid, _ in belief.activities if mid not in listed)
            if gone:
                out = out.but(activities=tuple((mid, a) for mid, a in out.activities
                                               if mid not in gone),
                              dropped=out.dropped | gone)
        stated = frozenset(m.id for m in event.messages
                           if not m.is_activity and m.id not in belief.texts) - out.others
        if stated:
            out = out.but(others=out.others | stated)
        for m in event.messages:
            if m.is_activity:
                prior = out.activity(m.id)
                out = out.with_activity(m.id, ActivityBelief(
                    m.content, m.activity_type, m.owner,
                    prior.opener if prior else m.owner,
                    prior.via_snapshot if prior else False))
        return out
    if isinstance(event, TextMessageStart):
        return belief.but(texts=belief.texts + (event.message_id,),
                          open_texts=belief.open_texts | {event.message_id},
                          text_owners=belief.text_owners + ((event.message_id,
                                                             event.subagent_run_id),))
    if isinstance(event, TextMessageEnd):
        return belief.but(open_texts=belief.open_texts - {event.message_id})
    if isinstance(event, SubagentStarted):
        return belief.but(subagents=belief.subagents | {event.subagent_run_id})
    if isinstance(event, (SubagentFinished, SubagentError)):  # either closes the invocation
        return belief.but(subagents=belief.subagents - {event.subagent_run_id},
                          finished=belief.finished | {event.subagent_run_id})
    if isinstance(event, StepStarted):
        return belief.but(open_steps=belief.open_steps | {(event.subagent_run_id,
                                                           event.step_name)})
    if isinstance(event, StepFinished):
        return belief.but(open_steps=belief.open_steps - {(event.subagent_run_id,
                                                           event.step_name)})
    if isinstance(event, ToolCallStart):  # a restart (TOOL-CALL-OPEN-ONCE) keeps one entry
        kept = tuple(t for t in belief.open_tools if t[0] != event.tool_call_id)
        return belief.but(open_tools=kept + ((event.tool_call_id, event.subagent_run_id),))
    if isinstance(event, ToolCallEnd):
        return belief.but(open_tools=tuple(t for t in belief.open_tools
                                           if t[0] != event.tool_call_id))
    return belief


def _meta(m: Optional[dict]) -> Optional[JsonText]:
    return None if m is None else freeze(m)


_HISTORY = Message(id="user-1", role="user", content='"hello"')
"""A message a MESSAGES_SNAPSHOT may restate from the run input's history."""

_HISTORY_ALL: tuple[Message, ...] = (_HISTORY, Message(id="sys-h", role="system",
                                                       content='"be brief"'))
"""The history the MESSAGES_SNAPSHOT history candidate restates: the user message and a system
message, which a consumer must keep like any other (STA-MS-COMPLETE)."""

_STEP_NAME = "plan"
"""The one step name of the vocabulary's candidates (the parent's; SUB-STEP-PER-OWNER,
LIF-STEP-CLOSE-BEFORE-FINISH)."""

_TOOL_CALL_ID = "call-1"
"""The one tool call id of the vocabulary's candidates (LIF-CLOSE-BEFORE-FINISH)."""

_STATIC: dict[int, tuple[Vocabulary, dict[str, tuple[Event, ...]], dict[str, tuple[Event, ...]]]] = {}


def _static_candidates(vocab: Vocabulary):
    """Snapshots and deltas of the vocabulary per message id, built once per vocabulary
    (events are immutable, so the same objects serve every belief)."""
    hit = _STATIC.get(id(vocab))
    if hit is not None and hit[0] is vocab:
        return hit[1], hit[2]
    contents = [freeze(c) for c in vocab.contents]
    metas = [_meta(m) for m in vocab.metadata]
    patches = [tuple(PatchOp.of(op) for op in ops) for _, ops in vocab.patches]
    snaps, deltas = {}, {}
    for mid in vocab.activity_ids:
        snaps[mid] = tuple(
            ActivitySnapshot(message_id=mid, activity_type=atype, content=content, replace=flag,
                             subagent_run_id=owner, metadata=meta)
            for atype in vocab.activity_types for content in contents
            for flag in vocab.replace_flags for owner in vocab.owners for meta in metas)
        deltas[mid] = tuple(
            ActivityDelta(message_id=mid, activity_type=atype, patch=patch,
                          subagent_run_id=owner, metadata=meta)
            for atype in vocab.activity_types for patch in patches
            for owner in vocab.owners for meta in metas)
    _STATIC[id(vocab)] = (vocab, snaps, deltas)
    return snaps, deltas


def _candidates(belief: Belief, vocab: Vocabulary) -> Iterator[Event]:
    """Every event over the vocabulary that makes sense to try next (conformant or not)."""
    if belief.run != "active":
        if belief.runs < vocab.max_runs:
            yield RunStarted(thread_id="t1", run_id=f"r{belief.runs + 1}")
        if belief.run == "finished":  # a late failure of a finished run (N97: LIF-AFTER-CLOSE)
            yield RunError(message="late failure")
    else:
        yield RunFinished(thread_id="t1", run_id=f"r{belief.runs}")
        yield RunError(message="failed")
    snaps, deltas = _static_candidates(vocab)
    for mid in vocab.activity_ids:
        yield from snaps[mid]
        # rawEvent is legal and carries the provider's original; nothing may depend on it
        yield replace(snaps[mid][0], raw_event=freeze({"provider": "x", "n": 7}))
        if belief.activity(mid) is not None or belief.run == "active":
            yield from deltas[mid]
    if belief.run == "active":
        for owner in vocab.owners:  # announcing and closing invocations (SUB lifecycle)
            if owner is None:
                continue
            if owner in belief.subagents:
                yield SubagentFinished(subagent_run_id=owner)
            elif owner not in belief.finished and owner not in belief.tags_used:
                yield SubagentStarted(subagent_run_id=owner)
        for tid in vocab.text_ids:
            if tid not in belief.texts:
                yield TextMessageStart(message_id=tid)
            elif tid in belief.open_texts:
                yield TextMessageContent(message_id=tid, delta="hi")
                yield TextMessageEnd(message_id=tid)
        # one step of the parent, opened when not open and finished when open (LIF-STEP-*)
        if (None, _STEP_NAME) in belief.open_steps:
            yield StepFinished(step_name=_STEP_NAME)
        else:
            yield StepStarted(step_name=_STEP_NAME)
        # one tool call of the parent, started when not open and ended when open (LIF-CLOSE-*)
        if any(c == _TOOL_CALL_ID for c, _ in belief.open_tools):
            yield ToolCallEnd(tool_call_id=_TOOL_CALL_ID)
        else:
            yield ToolCallStart(tool_call_id=_TOOL_CALL_ID, tool_call_name="search")
        # MESSAGES_SNAPSHOT: every text the producer sent, plus each subset of its activities.
        # With no activity it leaves held activity alone (STA-MS-DROP-EXCEPT); with some it
        # declares the complete activity set (STA-MS-SELF-REVOKE).
        texts = tuple(Message(id=t, role="assistant", content='"hi"')
                      for t in belief.texts if t not in belief.open_texts)
        acts = belief.activities
        # ...and once with history the consumer never saw streamed (a user message from input)
        yield MessagesSnapshot(messages=_HISTORY_ALL + texts + tuple(
            Message(id=mid, role="activity", content=a.content, activity_type=a.activity_type,
                    owner=a.owner, first_owner=a.owner) for mid, a in acts))
        for mask in range(1 << len(acts)):
            chosen = tuple(Message(id=mid, role="activity", content=a.content,
                                   activity_type=a.activity_type, owner=a.owner,
                                   first_owner=a.owner)
                           for bit, (mid, a) in enumerate(acts) if mask >> bit & 1)
            yield MessagesSnapshot(messages=texts + chosen)  # may be empty: nothing of its own
        unknown = [mid for mid in vocab.activity_ids if belief.activity(mid) is None]
        if unknown:  # an activity the consumer meets first in the snapshot (STA-MS-APPEND)
            yield MessagesSnapshot(messages=texts + tuple(
                Message(id=mid, role="activity", content=freeze(vocab.contents[0]),
                        activity_type=vocab.activity_types[0]) for mid in unknown[:1]))
        if len(unknown) > 1:  # several activities met first in one snapshot: Q11's shortest
            # witness states two at once, then replaces the first (issue 19 item 4)
            yield MessagesSnapshot(messages=texts + tuple(
                Message(id=mid, role="activity", content=freeze(vocab.contents[0]),
                        activity_type=vocab.activity_types[0]) for mid in unknown))
        if acts:  # the producer restates its activities with another value (MS is authoritative)
            other = freeze(vocab.contents[0])
            restated = tuple(Message(id=mid, role="activity",
                                     content=other if a.content != other else freeze(vocab.contents[-1]),
                                     activity_type=a.activity_type, owner=a.owner,
                                     first_owner=a.owner) for mid, a in acts)
            yield MessagesSnapshot(messages=texts + restated)


_MALFORMED_WIRE: tuple[dict, ...] = (
    {"type": "ACTIVITY_SNAPSHOT", "messageId": "act-1", "activityType": "PLAN", "content": None},
    {"type": "ACTIVITY_SNAPSHOT", "messageId": "act-1", "activityType": "PLAN",
     "content": {"n": 0}, "replace": None},
    {"type": "ACTIVITY_SNAPSHOT", "messageId": "act-1", "activityType": "PLAN",
     "content": {"n": 0}, "subagentRunId": None},
    {"type": "ACTIVITY_DELTA", "messageId": "act-1", "activityType": "PLAN",
     "patch": [{"op": "replace", "path": "n", "value": 1}]},
    {"type": "ACTIVITY_DELTA", "messageId": "act-1", "activityType": "PLAN",
     "patch": {"op": "replace"}},
    {"type": "ACTIVITY_DELTA", "messageId": "act-1", "activityType": "PLAN",
     "patch": [], "metadata": None},
    {"type": "ACTIVITY_PROGRESS", "messageId": "act-1"},
    {"type": "ACTIVITY_SNAPSHOT", "messageId": "act-1", "activityType": "PLAN",
     "content": {"n": 0}, "x-vendor-hint": True},
    # members of the wrong JSON type, not only null (issue 20)
    {"type": "ACTIVITY_SNAPSHOT", "messageId": "act-1", "activityType": "PLAN",
     "content": {"n": 0}, "replace": "false"},
    {"type": "ACTIVITY_DELTA", "messageId": "act-1", "activityType": 7, "patch": []},
    {"type": "ACTIVITY_SNAPSHOT", "messageId": "act-1", "activityType": "PLAN", "content": [1]},
)


def moves(belief: Belief, vocabulary: Vocabulary = DEFAULT_VOCABULARY,
          reading: Reading = DRAFT) -> list[Event]:
    """Every conformant next event over ``vocabulary``, in a fixed order (simple events first).

    Returns:
        Events ``e`` with ``violations(belief, e, reading) == ()`` (memoised: beliefs, events
        and readings are immutable).
    """
    key = (belief, id(vocabulary), reading)
    hit = _MOVES.get(key)
    if hit is not None and hit[0] is vocabulary:
        return list(hit[1])
    found = tuple(e for e in _candidates(belief, vocabulary) if not violations(belief, e, reading))
    if len(_MOVES) >= _MOVES_MAX:
        _MOVES.clear()
    _MOVES[key] = (vocabulary, found)
    return list(found)


_MOVES: dict = {}
_MOVES_MAX = 20000
"""Memo of :func:`moves` by (belief, vocabulary, reading): searches revisit the same beliefs."""


def adversarial_moves(belief: Belief, vocabulary: Vocabulary = DEFAULT_VOCABULARY,
                      reading: Reading = DRAFT) -> list[tuple[Event, ProducerViolation]]:
    """Non-conformant next events, one entry per clause each breaks (an event breaking two
    clauses appears twice): the vocabulary's candidates that break a clause, plus malformed and
    unrecognised events, lifecycle misuse, id reuse and subagent misuse."""
    key = ("adversarial", belief, id(vocabulary), reading)
    hit = _MOVES.get(key)
    if hit is not None and hit[0] is vocabulary:
        return list(hit[1])
    out: list[tuple[Event, ProducerViolation]] = []
    for event in list(_candidates(belief, vocabulary)) + _extra_candidates(belief, vocabulary):
        out.extend((event, v) for v in violations(belief, event, reading))
    if len(_MOVES) >= _MOVES_MAX:
        _MOVES.clear()
    _MOVES[key] = (vocabulary, tuple(out))
    return out


_ECHO = freeze({"threadId": "t1", "runId": "r1", "messages": [
    {"id": "user-1", "role": "user", "content": "hello"},
    {"id": "act-echoed", "role": "activity", "activityType": "PLAN", "content": {"n": 0}}]})
"""A run input echo holding an activity message a consumer failed to strip (reading Q17)."""


def _extra_candidates(belief: Belief, vocabulary: Vocabulary) -> list[Event]:
    """The events :func:`adversarial_moves` tries beyond the vocabulary's candidates: malformed
    and unrecognised events, lifecycle misuse, id reuse, subagent, step and tool-call misuse,
    and a RUN_STARTED echoing an input that holds an activity message (Q17)."""
    extra: list[Event] = list(_malformed_events())
    if belief.run == "active":
        extra.append(RunStarted(thread_id="t1", run_id="r-extra"))
        if UNKNOWN_ROLE_TEXT_START.message_id not in belief.texts:
            extra.append(UNKNOWN_ROLE_TEXT_START)
        extra.extend(TextMessageStart(message_id=mid) for mid, _ in belief.activities)
        extra.extend(SubagentStarted(subagent_run_id=s)
                     for s in sorted(belief.subagents | belief.finished | belief.tags_used))
        extra.extend(TextMessageStart(message_id=t) for t in belief.texts)
        extra.extend(TextMessageContent(message_id=mid, delta="x") for mid, _ in belief.activities)
        extra.extend(ActivityDelta(message_id="act-unknown", activity_type="PLAN", patch=())
                     for _ in (0,))
        # steps, tool calls and subagent parents (issue 19's producer duties)
        extra.extend(StepStarted(step_name=name, subagent_run_id=owner)
                     for owner, name in sorted(belief.open_steps, key=repr))
        extra.append(StepFinished(step_name="step-unopened"))
        extra.extend(StepFinished(step_name=name, subagent_run_id=o)
                     for owner, name in sorted(belief.open_steps, key=repr)
                     for o in vocabulary.owners if o is not None and o != owner)
        extra.extend(ToolCallStart(tool_call_id=c, tool_call_name="f")
                     for c, _ in belief.open_tools)
        extra.extend(ToolCallArgs(tool_call_id=c, delta="x", subagent_run_id=o)
                     for c, owner in belief.open_tools for o in vocabulary.owners
                     if o is not None and o != owner)
        extra.append(SubagentStarted(subagent_run_id="sub-new",
                                     parent_subagent_run_id="sub-unannounced"))
        # activity events aimed at the id of a message of another role (EVM-ID-UNIQUE)
        for mid in sorted(set(belief.texts) | belief.others):
            extra.append(ActivityDelta(message_id=mid, activity_type="PLAN", patch=(
                PatchOp.of({"op": "add", "path": "/n", "value": 1}),)))
            extra.append(ActivitySnapshot(message_id=mid, activity_type="PLAN",
                                          content='{"n":1}'))
        extra.extend(TextMessageContent(message_id=t, delta="x", subagent_run_id=owner)
                     for t in sorted(belief.open_texts) for owner in vocabulary.owners
                     if owner is not None and owner != belief.text_owner(t))
    else:
        extra.append(RunFinished(thread_id="t1", run_id="r-extra"))
        if belief.runs < vocabulary.max_runs:
            extra.append(RunStarted(thread_id="t1", run_id=f"r{belief.runs + 1}", input=_ECHO))
    return extra


def conformance_splits(knobs: Sequence[str] = PRODUCER_ONLY_KNOBS, depth: int = 5,
                       vocabulary: Vocabulary = DEFAULT_VOCABULARY, base: Reading = DRAFT,
                       options: Optional[Sequence[str]] = None
                       ) -> dict[str, tuple[tuple[Event, ...], str, str]]:
    """For each producer knob in ``knobs``, the shortest trace whose conformance one of its
    options changes: every event but the last conformant under both readings compared
    (:data:`DRAFT`, and draft with the knob at that option), the last one breaking a producer
    clause under exactly one of them. Breadth-first over the producer's beliefs (deduplicated:
    conformance reads the belief and the event alone), the candidates of :func:`moves` and
    :func:`adversarial_moves` in their fixed order, first found on ties; the option nearest the
    knob's draft option first.

    Args:
        knobs: producer knob ids (:data:`PRODUCER_KNOBS`).
        depth: the longest trace tried (events).
        vocabulary: the producer's finite world.
        base: the reading compared against (default :data:`DRAFT`; ``resolve`` passes a
            proposal's reading).
        options: the options tried (default every option but ``base``'s).

    Returns:
        ``{knob: (trace, base's option, other option)}`` for the knobs with such a trace; a knob
        with none up to ``depth`` is absent.

    Raises:
        ValueError: a knob that is not a producer knob.

    Clauses: those the knobs sit between (ACT-DELTA-BASELINE for Q12, RIN-ECHO-STRIPPED for
    Q17), IDX-CONFORMANCE."""
    unknown = [k for k in knobs if k not in PRODUCER_KNOBS]
    if unknown:
        raise ValueError(f"not producer knobs: {unknown}; producer knobs: {PRODUCER_KNOBS}")
    found: dict[str, tuple[tuple[Event, ...], str, str]] = {}
    for knob_id in knobs:
        knob = KNOB_BY_ID[knob_id]
        mine = getattr(base, knob.attr)
        for option in (knob.option_names if options is None else options):
            if option == mine:
                continue
            trace = _shortest_conformance_split(base, base.with_(**{knob_id: option}), depth,
                                                vocabulary)
            if trace is not None and (knob_id not in found or
                                      len(trace) < len(found[knob_id][0])):
                found[knob_id] = (trace, mine, option)
    return found


def _shortest_conformance_split(a: Reading, b: Reading, depth: int, vocabulary: Vocabulary
                                ) -> Optional[tuple[Event, ...]]:
    """The shortest trace conformant under ``a`` and ``b`` but for its last event, which breaks
    a producer clause under one of them only; None when none is ``depth`` events long or less."""
    def candidates(belief: Belief) -> list[Event]:
        return list(_candidates(belief, vocabulary)) + _extra_candidates(belief, vocabulary)
    for trace, _, _ in monitor_disagreements(a, b, depth, candidates):
        return trace
    return None


def monitor_disagreements(a: Reading, b: Reading, depth: int, candidates
                          ) -> Iterator[tuple[tuple[Event, ...], list, list]]:
    """Breadth-first over the producer's beliefs, every event on which the producer monitors
    under readings ``a`` and ``b`` disagree (one finds a violation, the other none), after a
    prefix conformant under both: yields ``(trace ending in that event, violations under a,
    violations under b)``, shortest first, at most ``depth`` events long. ``candidates(belief)``
    gives the events tried after a belief, in a fixed order (repeats are tried once).

    Clauses: IDX-CONFORMANCE (conformance reads the belief and the event alone)."""
    level: list[tuple[tuple[Event, ...], Belief]] = [((), Belief())]
    seen = {Belief()}
    for _ in range(depth):
        nxt = []
        for trace, belief in level:
            for event in dict.fromkeys(candidates(belief)):
                va, vb = violations(belief, event, a), violations(belief, event, b)
                if bool(va) != bool(vb):
                    yield trace + (event,), va, vb
                elif not va:
                    after = advance(belief, event)
                    if after not in seen:
                        seen.add(after)
                        nxt.append((trace + (event,), after))
        level = nxt


_MALFORMED_EVENTS: list = []

UNKNOWN_ROLE_TEXT_START_WIRE: dict = {"type": "TEXT_MESSAGE_START", "messageId": "msg-r",
                                      "role": "narrator"}
UNKNOWN_ROLE_TEXT_START: Event = parse_event(UNKNOWN_ROLE_TEXT_START_WIRE)
"""A text opened with a role the draft does not define: the wire strips the member and notes it
(PRC-STRIP-POSITION), so :func:`violations` reports it (``undescribed-member``). An adversarial
extra of :func:`adversarial_moves` and of :func:`properties.surface.surface_adversarial`."""


def _malformed_events() -> list:
    if not _MALFORMED_EVENTS:
        _MALFORMED_EVENTS.extend(parse_event(w) for w in _MALFORMED_WIRE)
    return _MALFORMED_EVENTS


def check_trace(events: Sequence[Event], reading: Reading = DRAFT
                ) -> list[tuple[int, ProducerViolation]]:
    """Run the producer monitor over a trace: ``(event index, violation)`` for each clause broken."""
    belief = Belief()
    found: list[tuple[int, ProducerViolation]] = []
    for i, event in enumerate(events):
        found.extend((i, v) for v in violations(belief, event, reading))
        belief = advance(belief, event)
    return found


def closing_events(events: Sequence[Event]) -> tuple[Event, ...]:
    """The events a producer sends to end what ``events`` left open, in this order: a
    TEXT_MESSAGE_END per open text message (in opening order), a TOOL_CALL_END per open tool call,
    a STEP_FINISHED per open step, a SUBAGENT_FINISHED per active invocation (sorted), then a
    RUN_FINISHED with the ids of the last RUN_STARTED (LIF-CLOSE-BEFORE-FINISH,
    LIF-STEP-CLOSE-BEFORE-FINISH, LIF-RUN-CLOSE). Empty when no run is active at the end (the
    belief of :func:`advance`); a trace with no RUN_STARTED gets nothing either, since no run
    is there to close.

    Each closing event carries the attribution its entity was opened under, so that the
    ownership clauses (SUB-OWNER-AGREE) hold for it as for the events before."""
    belief, started = Belief(), None
    for event in events:
        belief = advance(belief, event)
        if isinstance(event, RunStarted):
            started = event
    if belief.run != "active" or started is None:
        return ()
    out: list[Event] = []
    for mid in belief.texts:
        if mid in belief.open_texts:
            out.append(TextMessageEnd(message_id=mid, subagent_run_id=belief.text_owner(mid)))
    out.extend(ToolCallEnd(tool_call_id=call, subagent_run_id=owner)
               for call, owner in belief.open_tools)
    out.extend(StepFinished(step_name=name, subagent_run_id=owner)
               for owner, name in sorted(belief.open_steps, key=lambda s: (s[0] or "", s[1])))
    out.extend(SubagentFinished(subagent_run_id=sub) for sub in sorted(belief.subagents))
    out.append(RunFinished(thread_id=started.thread_id, run_id=started.run_id))
    return tuple(out)


def closed(events: Sequence[Event]) -> tuple[Event, ...]:
    """``events`` followed by its :func:`closing_events`: the same stream, complete (every run
    it opened is finished), as a witness is written for a reader to replay or lint."""
    return tuple(events) + closing_events(events)
