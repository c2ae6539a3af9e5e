"""Typed, immutable AG-UI events and messages: the values the model steps over.

Every event is a frozen, hashable dataclass. Wire names (``messageId``, ``activityType``,
``subagentRunId``) exist only at the boundary (:mod:`model.wire` parses them, ``to_wire`` writes
them back); inside, fields are snake_case. JSON payloads that the model does not interpret
(content, metadata, state, patch operations) are held as canonical JSON text
(:mod:`model.json_values`), so events compare and hash by JSON equality.

Shapes follow the draft schema (notes N102..N110, clauses SCH-*): an ACTIVITY_SNAPSHOT carries
``message_id``, ``activity_type``, ``content`` (object text), optional ``replace`` (``None`` means
absent); an ACTIVITY_DELTA carries a :class:`Patch`. ``subagent_run_id`` is ``None`` when absent
(the parent agent, SUB-ABSENT-PARENT).

Two event kinds stand for input that is not a well-formed known event:

* :class:`Unrecognised`: a ``type`` the protocol does not describe; dropped with a warning
  (PRC-DROP-STRIP, N87).
* :class:`Malformed`: a described field holding a value the schema rejects; fatal
  (PRC-MALFORMED-FATAL, N85), or, for a whole optional field sent as ``null``, repairable by the
  compatibility shim under reading ``Q21=shim``.

Every event carries ``notices``: the JSON paths of undescribed members that enforcement stripped
from it (PRC-DROP-STRIP); the consumer step turns each into a warning at that event's index.
"""
from __future__ import annotations

from dataclasses import dataclass, field, fields, replace as dc_replace
from typing import Any, ClassVar, Optional

from model.frozen import fast_init
from model.json_values import JsonText, freeze, thaw

__all__ = [
    "Event", "RunStarted", "RunFinished", "RunError", "TextMessageStart", "TextMessageContent",
    "TextMessageEnd", "ToolCallStart", "ToolCallArgs", "ToolCallEnd", "ToolCallResult",
    "StateSnapshot", "StateDelta", "MessagesSnapshot", "ActivitySnapshot", "ActivityDelta",
    "SubagentStarted", "SubagentFinished", "SubagentError", "StepStarted", "StepFinished",
    "Passthrough", "Unrecognised",
    "Malformed", "PatchOp", "Patch", "Message", "RFC6902_OPS", "ACTIVITY_TYPES", "EVENT_CLASSES",
]

RFC6902_OPS = frozenset({"add", "remove", "replace", "move", "copy", "test"})
"""The operation names RFC 6902 section 4 defines; any other ``op`` is unrecognised (SNP-UNKNOWN-OP)."""


@dataclass(frozen=True, slots=True)
class PatchOp:
    """One JSON Patch operation (RFC 6902 section 4), kept whole.

    Attributes:
        op: the operation name, e.g. ``"add"``.
        raw: canonical text of the whole operation object, undescribed members included
            (patch operations are open objects, SNP-OPEN-OPS / PRC-KEEP-OPEN).
    """

    op: str
    raw: JsonText

    @property
    def recognised(self) -> bool:
        """True when ``op`` is one of the six RFC 6902 operations."""
        return self.op in RFC6902_OPS

    @property
    def path(self) -> Optional[str]:
        """The operation's ``path`` member (a JSON Pointer), or None for an unrecognised op without one."""
        return thaw(self.raw).get("path")

    def to_wire(self) -> dict:
        """The operation as a wire JSON object."""
        return thaw(self.raw)

    @staticmethod
    def of(obj: dict) -> "PatchOp":
        """Build from a wire operation object (assumed already validated by :mod:`model.wire`)."""
        return PatchOp(op=obj["op"], raw=freeze(obj))


Patch = tuple[PatchOp, ...]
"""A JSON Patch document (RFC 6902 section 3): operations in order."""


@fast_init
@dataclass(frozen=True, slots=True, init=False)
class Message:
    """One message as a consumer holds it (SCH-MESSAGE-UNION, N105/N106).

    Attributes:
        id: ``id`` on the wire.
        role: ``"activity"``, ``"assistant"``, ``"user"``, ``"tool"``, ``"system"``,
            ``"developer"`` or ``"reasoning"``.
        content: canonical text of ``content`` (an object for activity, a JSON string for text
            roles), or None when absent.
        activity_type: ``activityType`` (activity messages only).
        metadata: canonical text of the ``metadata`` object, None when absent.
        owner: ``subagentRunId``; None means the parent agent (SUB-ABSENT-PARENT).
        first_owner: activity only: the owner the activity was first opened under (reading
            ``Q4-opener=first``); not on the wire.
        other: canonical text of an object holding the remaining wire members (``name``,
            ``toolCalls``, ``toolCallId``, ``error``, ``encryptedValue``...).
    """

    id: str
    role: str
    content: Optional[JsonText] = None
    activity_type: Optional[str] = None
    metadata: Optional[JsonText] = None
    owner: Optional[str] = None
    first_owner: Optional[str] = None
    other: JsonText = "{}"
    # the hash, computed once (fast_init): a new consumer state hashes all its messages, most
    # of them shared, unchanged, with the state it came from
    _hash: int = field(default=0, init=False, repr=False, compare=False)

    @property
    def is_activity(self) -> bool:
        """True for role ``activity`` (ACT-ROLE)."""
        return self.role == "activity"

    def to_wire(self) -> dict:
        """The message in AG-UI wire form (camelCase members, stable order)."""
        out: dict[str, Any] = {"id": self.id, "role": self.role}
        if self.activity_type is not None:
            out["activityType"] = self.activity_type
        if self.content is not None:
            out["content"] = thaw(self.content)
        out.update(thaw(self.other))
        if self.metadata is not None:
            out["metadata"] = thaw(self.metadata)
        if self.owner is not None:
            out["subagentRunId"] = self.owner
        return out

    @staticmethod
    def from_wire(obj: dict) -> "Message":
        """Build from a validated wire message object (see :func:`model.wire.parse_message`)."""
        rest = {k: v for k, v in obj.items()
                if k not in ("id", "role", "content", "activityType", "metadata", "subagentRunId")}
        owner = obj.get("subagentRunId")
        return Message(
            id=obj["id"],
            role=obj["role"],
            content=freeze(obj["content"]) if "content" in obj else None,
            activity_type=obj.get("activityType"),
            metadata=freeze(obj["metadata"]) if "metadata" in obj else None,
            owner=owner,
            first_owner=owner if obj["role"] == "activity" else None,
            other=freeze(rest),
        )


# --- events -------------------------------------------------------------------------------------

_COMMON = {"message_id": "messageId", "activity_type": "activityType",
           "subagent_run_id": "subagentRunId", "thread_id": "threadId", "run_id": "runId",
           "parent_run_id": "parentRunId", "protocol_version": "protocolVersion",
           "tool_call_id": "toolCallId", "tool_call_name": "toolCallName",
           "parent_message_id": "parentMessageId", "parent_subagent_run_id": "parentSubagentRunId"}
"""The wire names of the members events share (snake_case inside, camelCase on the wire); an
event class adds its own by overriding :attr:`Event.WIRE`."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Event:
    """Fields every event carries (BaseEvent; SCH).

    Attributes:
        timestamp: integer or None; never used for ordering (EVM-ARRIVAL-ORDER).
        raw_event: canonical text of ``rawEvent`` or None; never used for behaviour (EVM-NO-RAWEVENT).
        metadata: canonical text of the ``metadata`` object or None.
        notices: JSON paths of undescribed members stripped from this event (PRC-DROP-STRIP).
    """

    TYPE: ClassVar[str] = ""
    WIRE: ClassVar[dict[str, str]] = _COMMON

    timestamp: Optional[int] = None
    raw_event: Optional[JsonText] = None
    metadata: Optional[JsonText] = None
    notices: tuple[str, ...] = ()

    @property
    def type_name(self) -> str:
        """The wire ``type`` of this event."""
        return self.TYPE

    def to_wire(self) -> dict:
        """The event as an AG-UI wire object: ``type`` first, then described members in schema
        order, JSON payloads thawed; absent members omitted (EVM-ABSENT-NOT-NULL)."""
        out: dict[str, Any] = {"type": self.TYPE}
        for f in fields(self):
            name = f.name
            if name in ("timestamp", "raw_event", "metadata", "notices"):
                continue
            value = getattr(self, name)
            if value is None:
                continue
            out[self.WIRE.get(name, name)] = _wire_value(name, value)
        if self.metadata is not None:
            out["metadata"] = thaw(self.metadata)
        if self.timestamp is not None:
            out["timestamp"] = self.timestamp
        if self.raw_event is not None:
            out["rawEvent"] = thaw(self.raw_event)
        return out

    def without_notices(self) -> "Event":
        """The same event with no stripped-member notices."""
        return dc_replace(self, notices=()) if self.notices else self


_JSON_FIELDS = frozenset({"content", "snapshot", "input", "outcome", "result", "usage", "wire"})


def _wire_value(name: str, value: Any) -> Any:
    if name in ("patch", "delta") and isinstance(value, tuple):
        return [op.to_wire() for op in value]
    if name == "messages":
        return [m.to_wire() for m in value]
    if name in _JSON_FIELDS:
        return thaw(value)
    return value


@dataclass(frozen=True, slots=True, kw_only=True)
class RunStarted(Event):
    """RUN_STARTED: opens a run (LIF-STREAM-START, LIF-ONE-ACTIVE)."""
    TYPE: ClassVar[str] = "RUN_STARTED"
    thread_id: str = "t1"
    run_id: str = "r1"
    parent_run_id: Optional[str] = None
    protocol_version: Optional[str] = None
    input: Optional[JsonText] = None


@dataclass(frozen=True, slots=True, kw_only=True)
class RunFinished(Event):
    """RUN_FINISHED: closes a run that did not fail (LIF-AFTER-CLOSE)."""
    TYPE: ClassVar[str] = "RUN_FINISHED"
    thread_id: str = "t1"
    run_id: str = "r1"
    outcome: Optional[JsonText] = None
    result: Optional[JsonText] = None
    usage: Optional[JsonText] = None


@dataclass(frozen=True, slots=True, kw_only=True)
class RunError(Event):
    """RUN_ERROR: the run failed; activity already delivered stays (LIF-FAILED-KEEPS)."""
    TYPE: ClassVar[str] = "RUN_ERROR"
    message: str = "error"
    code: Optional[str] = None


@dataclass(frozen=True, slots=True, kw_only=True)
class TextMessageStart(Event):
    """TEXT_MESSAGE_START: opens a streamed text message."""
    TYPE: ClassVar[str] = "TEXT_MESSAGE_START"
    message_id: str
    role: str = "assistant"
    name: Optional[str] = None
    subagent_run_id: Optional[str] = None


@dataclass(frozen=True, slots=True, kw_only=True)
class TextMessageContent(Event):
    """TEXT_MESSAGE_CONTENT: appends ``delta`` to an open text message."""
    TYPE: ClassVar[str] = "TEXT_MESSAGE_CONTENT"
    message_id: str
    delta: str = ""
    subagent_run_id: Optional[str] = None


@dataclass(frozen=True, slots=True, kw_only=True)
class TextMessageEnd(Event):
    """TEXT_MESSAGE_END: closes a streamed text message."""
    TYPE: ClassVar[str] = "TEXT_MESSAGE_END"
    message_id: str
    subagent_run_id: Optional[str] = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCallStart(Event):
    """TOOL_CALL_START: opens a tool call on an assistant message."""
    TYPE: ClassVar[str] = "TOOL_CALL_START"
    tool_call_id: str
    tool_call_name: str
    parent_message_id: Optional[str] = None
    subagent_run_id: Optional[str] = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCallArgs(Event):
    """TOOL_CALL_ARGS: appends argument text to an open tool call."""
    TYPE: ClassVar[str] = "TOOL_CALL_ARGS"
    tool_call_id: str
    delta: str = ""
    subagent_run_id: Optional[str] = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCallEnd(Event):
    """TOOL_CALL_END: closes a tool call."""
    TYPE: ClassVar[str] = "TOOL_CALL_END"
    tool_call_id: str
    subagent_run_id: Optional[str] = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCallResult(Event):
    """TOOL_CALL_RESULT: creates the tool message answering a call."""
    TYPE: ClassVar[str] = "TOOL_CALL_RESULT"
    message_id: str
    tool_call_id: str
    content: JsonText = '""'
    role: Optional[str] = None
    subagent_run_id: Optional[str] = None


@dataclass(frozen=True, slots=True, kw_only=True)
class StateSnapshot(Event):
    """STATE_SNAPSHOT: replaces the agent state wholesale (SNP-REPLACE)."""
    TYPE: ClassVar[str] = "STATE_SNAPSHOT"
    snapshot: JsonText
    subagent_run_id: Optional[str] = None


@dataclass(frozen=True, slots=True, kw_only=True)
class StateDelta(Event):
    """STATE_DELTA: amends the agent state by a JSON Patch (SNP-ATOMIC, STA-PATCHFAIL)."""
    TYPE: ClassVar[str] = "STATE_DELTA"
    delta: Patch
    subagent_run_id: Optional[str] = None


@dataclass(frozen=True, slots=True, kw_only=True)
class MessagesSnapshot(Event):
    """MESSAGES_SNAPSHOT: the producer's complete message set, reconciled by id (STA-MS-*)."""
    TYPE: ClassVar[str] = "MESSAGES_SNAPSHOT"
    messages: tuple[Message, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class ActivitySnapshot(Event):
    """ACTIVITY_SNAPSHOT: creates or replaces one activity message (ACT-SNAP-*, SCH-ACTIVITY-SNAPSHOT).

    ``content`` is the canonical text of an object; ``replace`` is None when absent (which means
    replace, ACT-SNAP-REPLACE-DEFAULT)."""
    TYPE: ClassVar[str] = "ACTIVITY_SNAPSHOT"
    message_id: str
    activity_type: str
    content: JsonText
    replace: Optional[bool] = None
    subagent_run_id: Optional[str] = None

    @property
    def replacing(self) -> bool:
        """True unless ``replace`` is explicitly false (ACT-SNAP-REPLACE-DEFAULT)."""
        return self.replace is not False


@dataclass(frozen=True, slots=True, kw_only=True)
class ActivityDelta(Event):
    """ACTIVITY_DELTA: amends one activity's content by a JSON Patch and sets its type
    (ACT-DELTA-APPLY, ACT-DELTA-RETYPE, SCH-ACTIVITY-DELTA)."""
    TYPE: ClassVar[str] = "ACTIVITY_DELTA"
    message_id: str
    activity_type: str
    patch: Patch
    subagent_run_id: Optional[str] = None


@dataclass(frozen=True, slots=True, kw_only=True)
class SubagentStarted(Event):
    """SUBAGENT_STARTED: announces an invocation (SUB-STARTED-FIRST)."""
    TYPE: ClassVar[str] = "SUBAGENT_STARTED"
    subagent_run_id: str
    name: Optional[str] = None
    parent_subagent_run_id: Optional[str] = None


@dataclass(frozen=True, slots=True, kw_only=True)
class SubagentFinished(Event):
    """SUBAGENT_FINISHED: closes an invocation."""
    TYPE: ClassVar[str] = "SUBAGENT_FINISHED"
    subagent_run_id: str
    outcome: Optional[JsonText] = None


@dataclass(frozen=True, slots=True, kw_only=True)
class SubagentError(Event):
    """SUBAGENT_ERROR: an invocation failed (ends the invocation, not the run)."""
    TYPE: ClassVar[str] = "SUBAGENT_ERROR"
    subagent_run_id: str
    message: Optional[str] = None


@dataclass(frozen=True, slots=True, kw_only=True)
class StepStarted(Event):
    """STEP_STARTED: opens the step ``step_name`` of its owner (LIF-STEP-OPEN-ONCE; steps are
    per owner, SUB-STEP-PER-OWNER: ``subagent_run_id`` None is the parent agent)."""
    TYPE: ClassVar[str] = "STEP_STARTED"
    WIRE: ClassVar[dict[str, str]] = {**_COMMON, "step_name": "stepName"}
    step_name: str
    subagent_run_id: Optional[str] = None


@dataclass(frozen=True, slots=True, kw_only=True)
class StepFinished(Event):
    """STEP_FINISHED: closes the open step ``step_name`` of its owner (LIF-STEP-FINISH-OPENED)."""
    TYPE: ClassVar[str] = "STEP_FINISHED"
    WIRE: ClassVar[dict[str, str]] = {**_COMMON, "step_name": "stepName"}
    step_name: str
    subagent_run_id: Optional[str] = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Passthrough(Event):
    """A described event type the model does not interpret (RAW, CUSTOM, REASONING_*,
    chunks): accepted (EVX-ACCEPT-FAMILIES) and subject only to the run lifecycle.
    ``wire`` is the canonical text of the whole event as received."""
    name: str
    wire: JsonText

    @property
    def type_name(self) -> str:
        return self.name

    def to_wire(self) -> dict:
        return thaw(self.wire)


@dataclass(frozen=True, slots=True, kw_only=True)
class Unrecognised(Event):
    """An event whose ``type`` the protocol does not describe: dropped with a warning (PRC-DROP-STRIP)."""
    name: str
    wire: JsonText

    @property
    def type_name(self) -> str:
        return self.name

    def to_wire(self) -> dict:
        return thaw(self.wire)


@dataclass(frozen=True, slots=True, kw_only=True)
class Malformed(Event):
    """A known event carrying a value the schema rejects (PRC-MALFORMED-FATAL).

    Attributes:
        name: the event's wire ``type`` (or ``"?"`` when ``type`` itself is bad).
        path: JSON path of the offending member, e.g. ``"$.content"``, ``"$.patch[0].path"``.
        reason: what is wrong, in words.
        clause: the clause id broken (e.g. ``"PRC-MALFORMED-FATAL"``, ``"SNP-MALFORMED-OP"``).
        wire: canonical text of the event as received.
        shim: for a whole optional field sent as ``null`` (EVM-ABSENT-NOT-NULL), the event with
            that field removed, which the compatibility shim (reading ``Q21=shim``) processes.
    """
    name: str
    path: str
    reason: str
    clause: str
    wire: JsonText
    shim: Optional[Event] = None

    @property
    def type_name(self) -> str:
        return self.name

    def to_wire(self) -> dict:
        return thaw(self.wire)


ACTIVITY_TYPES = frozenset({"ACTIVITY_SNAPSHOT", "ACTIVITY_DELTA"})

EVENT_CLASSES: dict[str, type[Event]] = {
    cls.TYPE: cls for cls in (
        RunStarted, RunFinished, RunError, TextMessageStart, TextMessageContent, TextMessageEnd,
        ToolCallStart, ToolCallArgs, ToolCallEnd, ToolCallResult, StateSnapshot, StateDelta,
        MessagesSnapshot, ActivitySnapshot, ActivityDelta, SubagentStarted, SubagentFinished,
        SubagentError, StepStarted, StepFinished)
}
"""Wire ``type`` -> event class, for the event types the model interprets."""
