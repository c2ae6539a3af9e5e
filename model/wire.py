"""The wire boundary: AG-UI JSON in, typed events out, and back.

Parsing applies the processing rules of the draft (PRC page; notes N85..N89) to each event:

* a described member holding a value the schema rejects makes the event :class:`Malformed`
  (fatal when stepped; PRC-MALFORMED-FATAL, ACT-MALFORMED-FATAL, SNP-MALFORMED-OP);
* an event ``type`` the protocol does not describe gives :class:`Unrecognised` (dropped with a
  warning; PRC-DROP-STRIP);
* undescribed members of closed objects (the activity events, MESSAGES_SNAPSHOT, messages) are
  stripped, and their paths recorded in the event's ``notices`` (PRC-DROP-STRIP, PRC-STRIP-POSITION);
* open objects (``content``, ``metadata``, patch operations) are kept whole (PRC-KEEP-OPEN,
  SNP-OPEN-OPS, MET-KEEP-UNKNOWN);
* a message of an unrecognised ``role`` inside MESSAGES_SNAPSHOT is dropped from the list (the
  list rule, PRC-STRIP-POSITION), noted like a stripped member;
* a TEXT_MESSAGE_START role outside the closed set of text-message roles sits in an optional
  position, so that member is stripped (noted like any stripped member) and the event goes on with
  the default role ``assistant`` (PRC-STRIP-POSITION);
* STEP_STARTED and STEP_FINISHED are typed (:class:`~model.events.StepStarted`,
  :class:`~model.events.StepFinished`: ``stepName`` a required string), since the consumer
  tracks steps (LIF-STEP-REJECT).

Event types whose full schema is not among the reference pages (RUN_*, TEXT_*, TOOL_*, STATE_*,
SUBAGENT_*) are checked on the members the model uses; their other members are ignored without a
warning rather than stripped, so that real traces do not drown in spurious notices.

File-level problems (not JSON, not a list of objects, a document that is not a trace: no element
with a ``type``, or a case nested where an event belongs) raise :class:`TraceFormatError`, which
names the file, line, column, event index and, where one member is at fault, its JSON path.
"""
from __future__ import annotations

import errno
import json
import math
import os
import re
import stat
from dataclasses import dataclass
from typing import Any, Iterable, Optional, Sequence

from model.events import (
    EVENT_CLASSES, ActivityDelta, ActivitySnapshot, Event, Malformed, Message, MessagesSnapshot,
    Passthrough, PatchOp, RFC6902_OPS, RunError, RunFinished, RunStarted, StateDelta, StateSnapshot,
    StepFinished, StepStarted, SubagentError, SubagentFinished, SubagentStarted, TextMessageContent, TextMessageEnd,
    TextMessageStart, ToolCallArgs, ToolCallEnd, ToolCallResult, ToolCallStart, Unrecognised,
)
from model.json_values import a_json_type, freeze

__all__ = [
    "TraceFormatError", "ParsedTrace", "parse_event", "parse_events", "parse_trace_text",
    "not_a_trace", "NO_EVENTS", "EVENTS_NOT_ARRAY", "EMPTY_FILE",
    "load_trace", "trace_from_values", "read_text", "read_bytes", "decode_text", "undecodable_at",
    "read_stdin",
    "InputLimits", "INPUT_LIMITS", "set_input_limits", "MAX_INPUT_BYTES", "MAX_INPUT_LINES",
    "STDIN", "STDIN_NAME", "loads_json", "dump_jsonl", "dump_wire_jsonl", "event_to_json",
    "JSON_POINTER", "KNOWN_PASSTHROUGH", "TEXT_MESSAGE_ROLES", "MESSAGE_ROLES", "described_members",
]

JSON_POINTER = re.compile(r"^(/([^/~]|~[01])*)*\Z")
"""RFC 6901 JSON Pointer syntax as the schema states it (SCH-JSON-POINTER, N110)."""

MAX_SAFE_INT = 2**53 - 1

TEXT_MESSAGE_ROLES = frozenset({"developer", "system", "assistant", "user"})
MESSAGE_ROLES = frozenset({"developer", "system", "assistant", "user", "tool", "activity",
                           "reasoning"})

KNOWN_PASSTHROUGH = frozenset({
    "RAW", "CUSTOM", "TEXT_MESSAGE_CHUNK", "TOOL_CALL_CHUNK",
    "REASONING_START", "REASONING_MESSAGE_START", "REASONING_MESSAGE_CONTENT",
    "REASONING_MESSAGE_END", "REASONING_MESSAGE_CHUNK", "REASONING_END",
    "REASONING_ENCRYPTED_VALUE",
})
"""Described event types (EVX-ACCEPT-FAMILIES) the model accepts without interpreting."""


class TraceFormatError(ValueError):
    """A trace file that cannot be read as a list of events.

    Attributes:
        file: the file name (or ``"<input>"``).
        line, column: 1-based position, when known.
        event_index: 0-based index of the offending event, when known.
        reason: what is wrong.
    """

    def __init__(self, reason: str, *, file: str = "<input>", line: Optional[int] = None,
                 column: Optional[int] = None, event_index: Optional[int] = None):
        self.reason, self.file, self.line = reason, file, line
        self.column, self.event_index = column, event_index
        where = file
        if line is not None:
            where += f":{line}"
            if column is not None:
                where += f":{column}"
        if event_index is not None:
            where += f": event {event_index}"
        super().__init__(f"{where}: {reason}")


# --- member kinds -------------------------------------------------------------------------------

class _Bad(Exception):
    """Internal: a malformed member (path, reason, clause, shimmable)."""

    def __init__(self, path: str, reason: str, clause: str = "PRC-MALFORMED-FATAL",
                 shim_field: Optional[str] = None):
        super().__init__(reason)
        self.path, self.reason, self.clause, self.shim_field = path, reason, clause, shim_field


def _check_str(v, path):
    if not isinstance(v, str):
        raise _Bad(path, f"expected a string, got {a_json_type(v)}")


def _check_obj(v, path):
    if not isinstance(v, dict):
        raise _Bad(path, f"expected an object, got {a_json_type(v)}")


def _check_bool(v, path):
    if not isinstance(v, bool):
        raise _Bad(path, f"expected a boolean, got {a_json_type(v)}")


def _check_int(v, path):
    if isinstance(v, bool) or not isinstance(v, (int, float)) or (
            isinstance(v, float) and not v.is_integer()) or abs(v) > MAX_SAFE_INT:
        raise _Bad(path, f"expected an integer within +/-(2^53-1), got {json.dumps(v)[:40]}")


def _check_any(v, path):
    return None


def _check_not_null(v, path):
    if v is None:
        raise _Bad(path, "null is not allowed here")


def _check_str_or_array(v, path):
    if not isinstance(v, (str, list)):
        raise _Bad(path, f"expected a string or an array, got {a_json_type(v)}")


def _check_array(v, path):
    if not isinstance(v, list):
        raise _Bad(path, f"expected an array, got {a_json_type(v)}")


def _check_patch(v, path, clause="SNP-MALFORMED-OP"):
    """Validate a JSON Patch document structurally (SNP-MALFORMED-OP, SCH-JSON-PATCH, SCH-JSON-POINTER)."""
    if not isinstance(v, list):
        raise _Bad(path, f"expected a JSON Patch array, got {a_json_type(v)}", clause)
    for i, op in enumerate(v):
        p = f"{path}[{i}]"
        if not isinstance(op, dict):
            raise _Bad(p, f"expected a patch operation object, got {a_json_type(op)}", clause)
        if "op" not in op:
            raise _Bad(f"{p}.op", "required member is missing", clause)
        if not isinstance(op["op"], str):
            raise _Bad(f"{p}.op", f"expected a string, got {a_json_type(op['op'])}", clause)
        if op["op"] not in RFC6902_OPS:
            continue  # unrecognised union member: decided by the step (SNP-UNKNOWN-OP, Q20)
        required = ["path"]
        if op["op"] in ("add", "replace", "test"):
            required.append("value")
        if op["op"] in ("move", "copy"):
            required.append("from")
        for member in required:
            if member not in op:
                raise _Bad(f"{p}.{member}", "required member is missing", clause)
        for member in ("path", "from"):
            if member in op and member in required:
                ptr = op[member]
                if not isinstance(ptr, str):
                    raise _Bad(f"{p}.{member}", f"expected a JSON Pointer string, got "
                               f"{a_json_type(ptr)}", clause)
                if not JSON_POINTER.fullmatch(ptr):
                    raise _Bad(f"{p}.{member}", f"{json.dumps(ptr)} is not a JSON Pointer "
                               "(RFC 6901)", "SCH-JSON-POINTER")


# member -> (check, required)
_BASE = {"type": (_check_str, True), "timestamp": (_check_int, False),
         "rawEvent": (_check_not_null, False), "metadata": (_check_obj, False)}
_ATTR = {"subagentRunId": (_check_str, False)}


@dataclass(frozen=True)
class _Spec:
    members: dict
    closed: bool


def _spec(members: dict, attributable: bool = True, closed: bool = False) -> _Spec:
    m = dict(_BASE)
    if attributable:
        m.update(_ATTR)
    m.update(members)
    return _Spec(m, closed)


_SPECS: dict[str, _Spec] = {
    "RUN_STARTED": _spec({"threadId": (_check_str, True), "runId": (_check_str, True),
                          "parentRunId": (_check_str, False), "input": (_check_obj, False),
                          "protocolVersion": (_check_str, False)}, attributable=False),
    "RUN_FINISHED": _spec({"threadId": (_check_str, True), "runId": (_check_str, True),
                           "outcome": (_check_any, False), "result": (_check_any, False),
                           "usage": (_check_any, False)}, attributable=False),
    "RUN_ERROR": _spec({"message": (_check_str, True), "code": (_check_str, False)},
                       attributable=False),
    "TEXT_MESSAGE_START": _spec({"messageId": (_check_str, True), "role": (_check_str, False),
                                 "name": (_check_str, False)}),
    "TEXT_MESSAGE_CONTENT": _spec({"messageId": (_check_str, True), "delta": (_check_str, True)}),
    "TEXT_MESSAGE_END": _spec({"messageId": (_check_str, True)}),
    "TOOL_CALL_START": _spec({"toolCallId": (_check_str, True), "toolCallName": (_check_str, True),
                              "parentMessageId": (_check_str, False)}),
    "TOOL_CALL_ARGS": _spec({"toolCallId": (_check_str, True), "delta": (_check_str, True)}),
    "TOOL_CALL_END": _spec({"toolCallId": (_check_str, True)}),
    "TOOL_CALL_RESULT": _spec({"messageId": (_check_str, True), "toolCallId": (_check_str, True),
                               "content": (_check_str_or_array, True), "role": (_check_str, False)}),
    "STATE_SNAPSHOT": _spec({"snapshot": (_check_any, True)}),
    "STATE_DELTA": _spec({"delta": (_check_patch, True)}),
    "MESSAGES_SNAPSHOT": _spec({"messages": (_check_array, True)}, attributable=False, closed=True),
    "ACTIVITY_SNAPSHOT": _spec({"messageId": (_check_str, True), "activityType": (_check_str, True),
                                "content": (_check_obj, True), "replace": (_check_bool, False)},
                               closed=True),
    "ACTIVITY_DELTA": _spec({"messageId": (_check_str, True), "activityType": (_check_str, True),
                             "patch": (_check_patch, True)}, closed=True),
    "SUBAGENT_STARTED": _spec({"subagentRunId": (_check_str, True), "name": (_check_str, False),
                               "parentSubagentRunId": (_check_str, False)}, attributable=False),
    "SUBAGENT_FINISHED": _spec({"subagentRunId": (_check_str, True),
                                "outcome": (_check_any, False)}, attributable=False),
    "SUBAGENT_ERROR": _spec({"subagentRunId": (_check_str, True), "message": (_check_str, False)},
                            attributable=False),
    "STEP_STARTED": _spec({"stepName": (_check_str, True)}),
    "STEP_FINISHED": _spec({"stepName": (_check_str, True)}),
}

_MESSAGE_COMMON = {"id": (_check_str, True), "role": (_check_str, True),
                   "metadata": (_check_obj, False), "subagentRunId": (_check_str, False)}
_NAMED = {"name": (_check_str, False), "encryptedValue": (_check_str, False)}
_MESSAGE_SPECS: dict[str, dict] = {
    "developer": {**_MESSAGE_COMMON, **_NAMED, "content": (_check_str, True)},
    "system": {**_MESSAGE_COMMON, **_NAMED, "content": (_check_str, True)},
    "assistant": {**_MESSAGE_COMMON, **_NAMED, "content": (_check_str, False),
                  "toolCalls": (_check_array, False)},
    "user": {**_MESSAGE_COMMON, **_NAMED, "content": (_check_str_or_array, True)},
    "tool": {**_MESSAGE_COMMON, "content": (_check_str_or_array, True),
             "toolCallId": (_check_str, True), "error": (_check_str, False),
             "encryptedValue": (_check_str, False)},
    "activity": {**_MESSAGE_COMMON, "activityType": (_check_str, True),
                 "content": (_check_obj, True)},
    "reasoning": {**_MESSAGE_COMMON, "content": (_check_str, True),
                  "encryptedValue": (_check_str, False)},
}
"""Closed message shapes (SCH-MESSAGE-UNION, SCH-ACTIVITY-MESSAGE)."""

_SHIMMABLE = frozenset({"replace", "subagentRunId", "metadata", "rawEvent", "timestamp"})


def _check_members(obj: dict, members: dict, path: str, closed: bool, notices: list[str],
                   shimmable: bool) -> dict:
    """Check ``obj`` against ``members``; return the kept members (undescribed ones stripped from
    closed objects and recorded in ``notices``)."""
    for name, (check, required) in members.items():
        if name not in obj:
            if required:
                raise _Bad(f"{path}.{name}", "required member is missing")
            continue
        value = obj[name]
        if value is None and not required:
            # An optional member sent as null is malformed (EVM-ABSENT-NOT-NULL, MET-NOT-NULL).
            raise _Bad(f"{path}.{name}", "null is not allowed for an optional member; omit it",
                       "EVM-ABSENT-NOT-NULL", name if shimmable and name in _SHIMMABLE else None)
        check(value, f"{path}.{name}")
    kept = {}
    for name, value in obj.items():
        if name in members:
            kept[name] = value
        elif closed:
            notices.append(f"{path}.{name}")
        else:
            kept[name] = value
    return kept


def parse_message(obj: Any, path: str, notices: list[str]) -> Optional[Message]:
    """Validate one wire message (closed object; SCH-MESSAGE-UNION).

    Returns the :class:`Message`, or None when its ``role`` is unrecognised (dropped under the
    list rule, with a notice). Raises the internal malformed signal for a schema violation.
    """
    if not isinstance(obj, dict):
        raise _Bad(path, f"expected a message object, got {a_json_type(obj)}")
    role = obj.get("role")
    if "role" not in obj:
        raise _Bad(f"{path}.role", "required member is missing")
    _check_str(role, f"{path}.role")
    if role not in _MESSAGE_SPECS:
        notices.append(f"{path} (role {json.dumps(role)} unrecognised)")
        return None
    kept = _check_members(obj, _MESSAGE_SPECS[role], path, True, notices, shimmable=False)
    return Message.from_wire(kept)


def _build(type_name: str, kept: dict, notices: tuple[str, ...]) -> Event:
    """Build the typed event from validated members."""
    common = dict(
        timestamp=int(kept["timestamp"]) if "timestamp" in kept else None,
        raw_event=freeze(kept["rawEvent"]) if "rawEvent" in kept else None,
        metadata=freeze(kept["metadata"]) if "metadata" in kept else None,
        notices=notices,
    )
    g = kept.get
    if type_name == "ACTIVITY_SNAPSHOT":
        return ActivitySnapshot(message_id=kept["messageId"], activity_type=kept["activityType"],
                                content=freeze(kept["content"]), replace=g("replace"),
                                subagent_run_id=g("subagentRunId"), **common)
    if type_name == "ACTIVITY_DELTA":
        return ActivityDelta(message_id=kept["messageId"], activity_type=kept["activityType"],
                             patch=tuple(PatchOp.of(op) for op in kept["patch"]),
                             subagent_run_id=g("subagentRunId"), **common)
    if type_name == "MESSAGES_SNAPSHOT":
        return MessagesSnapshot(messages=kept["messages"], **common)
    if type_name == "RUN_STARTED":
        return RunStarted(thread_id=kept["threadId"], run_id=kept["runId"],
                          parent_run_id=g("parentRunId"), protocol_version=g("protocolVersion"),
                          input=freeze(kept["input"]) if "input" in kept else None, **common)
    if type_name == "RUN_FINISHED":
        return RunFinished(thread_id=kept["threadId"], run_id=kept["runId"],
                           outcome=freeze(kept["outcome"]) if "outcome" in kept else None,
                           result=freeze(kept["result"]) if "result" in kept else None,
                           usage=freeze(kept["usage"]) if "usage" in kept else None, **common)
    if type_name == "RUN_ERROR":
        return RunError(message=kept["message"], code=g("code"), **common)
    if type_name == "TEXT_MESSAGE_START":
        return TextMessageStart(message_id=kept["messageId"], role=g("role", "assistant"),
                                name=g("name"), subagent_run_id=g("subagentRunId"), **common)
    if type_name == "TEXT_MESSAGE_CONTENT":
        return TextMessageContent(message_id=kept["messageId"], delta=kept["delta"],
                                  subagent_run_id=g("subagentRunId"), **common)
    if type_name == "TEXT_MESSAGE_END":
        return TextMessageEnd(message_id=kept["messageId"], subagent_run_id=g("subagentRunId"),
                              **common)
    if type_name == "TOOL_CALL_START":
        return ToolCallStart(tool_call_id=kept["toolCallId"], tool_call_name=kept["toolCallName"],
                             parent_message_id=g("parentMessageId"),
                             subagent_run_id=g("subagentRunId"), **common)
    if type_name == "TOOL_CALL_ARGS":
        return ToolCallArgs(tool_call_id=kept["toolCallId"], delta=kept["delta"],
                            subagent_run_id=g("subagentRunId"), **common)
    if type_name == "TOOL_CALL_END":
        return ToolCallEnd(tool_call_id=kept["toolCallId"], subagent_run_id=g("subagentRunId"),
                           **common)
    if type_name == "TOOL_CALL_RESULT":
        return ToolCallResult(message_id=kept["messageId"], tool_call_id=kept["toolCallId"],
                              content=freeze(kept["content"]), role=g("role"),
                              subagent_run_id=g("subagentRunId"), **common)
    if type_name == "STATE_SNAPSHOT":
        return StateSnapshot(snapshot=freeze(kept["snapshot"]), subagent_run_id=g("subagentRunId"),
                             **common)
    if type_name == "STATE_DELTA":
        return StateDelta(delta=tuple(PatchOp.of(op) for op in kept["delta"]),
                          subagent_run_id=g("subagentRunId"), **common)
    if type_name == "SUBAGENT_STARTED":
        return SubagentStarted(subagent_run_id=kept["subagentRunId"], name=g("name"),
                               parent_subagent_run_id=g("parentSubagentRunId"), **common)
    if type_name == "SUBAGENT_FINISHED":
        return SubagentFinished(subagent_run_id=kept["subagentRunId"],
                                outcome=freeze(kept["outcome"]) if "outcome" in kept else None,
                                **common)
    if type_name == "SUBAGENT_ERROR":
        return SubagentError(subagent_run_id=kept["subagentRunId"], message=g("message"), **common)
    if type_name == "STEP_STARTED":
        return StepStarted(step_name=kept["stepName"], subagent_run_id=g("subagentRunId"),
                           **common)
    if type_name == "STEP_FINISHED":
        return StepFinished(step_name=kept["stepName"], subagent_run_id=g("subagentRunId"),
                            **common)
    raise AssertionError(type_name)  # pragma: no cover - _SPECS and _build cover the same types


def _parse_known(obj: dict, type_name: str, shimmable: bool = True) -> Event:
    spec = _SPECS[type_name]
    notices: list[str] = []
    kept = _check_members(obj, spec.members, "$", spec.closed, notices, shimmable)
    if type_name == "MESSAGES_SNAPSHOT":
        msgs = []
        for i, m in enumerate(kept["messages"]):
            parsed = parse_message(m, f"$.messages[{i}]", notices)
            if parsed is not None:
                msgs.append(parsed)
        kept["messages"] = tuple(msgs)
    if type_name == "TEXT_MESSAGE_START" and "role" in kept and kept["role"] not in TEXT_MESSAGE_ROLES:
        # An unrecognised member of a closed string set in an optional position: the member is
        # stripped and the event goes on with the default role (PRC-STRIP-POSITION, PRC-DROP-STRIP).
        notices.append(f"$.role (role {json.dumps(kept.pop('role'))} unrecognised)")
    return _build(type_name, kept, tuple(notices))


# --- the plain lane ------------------------------------------------------------------------------

_NOT_PLAIN = object()
"""What a member converter of :data:`_PLAIN_LANES` returns for a value outside the plain form."""


def _plain_object(item: Any) -> Any:
    return freeze(item) if type(item) is dict else _NOT_PLAIN


def _plain_bool(item: Any) -> Any:
    return item if type(item) is bool else _NOT_PLAIN


def _plain_text_content(item: Any) -> Any:
    return freeze(item) if type(item) is str else _NOT_PLAIN


_PLAIN_OP_NEEDS = {"add": ("path", "value"), "replace": ("path", "value"),
                   "test": ("path", "value"), "remove": ("path",), "move": ("path", "from"),
                   "copy": ("path", "from")}
"""The members each RFC 6902 operation requires (section 4); ``path`` and ``from`` are JSON
Pointers (SCH-JSON-POINTER); what :func:`_check_patch` checks, on the same members."""
assert set(_PLAIN_OP_NEEDS) == RFC6902_OPS


def _plain_patch(item: Any) -> Any:
    """A JSON Patch whose operations are objects with a string ``op`` and, for the recognised
    ones, their required members (``path``/``from`` JSON Pointer strings): the operations, else
    :data:`_NOT_PLAIN` (:func:`_check_patch` then decides, naming the fault)."""
    if type(item) is not list:
        return _NOT_PLAIN
    for op in item:
        if type(op) is not dict or type(op.get("op")) is not str:
            return _NOT_PLAIN
        for member in _PLAIN_OP_NEEDS.get(op["op"], ()):
            if member not in op:
                return _NOT_PLAIN
            if member != "value":
                pointer = op[member]
                if type(pointer) is not str or not JSON_POINTER.fullmatch(pointer):
                    return _NOT_PLAIN
    return tuple(PatchOp.of(op) for op in item)


_S = str
"""In :data:`_PLAIN_LANES`: a member that is plain when it holds a string, kept as it is."""

_JSON_TYPE_OF_CHECK = {_check_str: "string", _check_obj: "object", _check_bool: "boolean",
                       _check_int: "integer", _check_any: "any JSON value",
                       _check_not_null: "any JSON value but null",
                       _check_str_or_array: "string or array", _check_array: "array",
                       _check_patch: "array of RFC 6902 operations"}


def described_members() -> dict[str, list[tuple[str, str, bool]]]:
    """``{type: [(member, JSON type in words, required)]}`` for every event type the schema
    describes, as :func:`parse_event` checks them (:data:`_SPECS`: the BaseEvent members, the
    attribution member where the type takes one, then the type's own), for documentation
    (``docs/adapter-events.md``)."""
    return {type_name: [(name, _JSON_TYPE_OF_CHECK.get(check, "any JSON value"), needed)
                        for name, (check, needed) in spec.members.items()]
            for type_name, spec in _SPECS.items()}


_PLAIN_CONVERTERS: dict[Any, Any] = {
    _check_str: _S, _check_obj: _plain_object, _check_bool: _plain_bool,
    _check_str_or_array: _plain_text_content, _check_patch: _plain_patch}
"""A member check of :data:`_SPECS` -> the plain lane's converter for that member (a check not
listed, e.g. :func:`_check_any`, has no plain form: such a member sends the event to the general
path, and a type that requires one has no lane)."""


def _plain_lane(type_name: str, spec: _Spec) -> Optional[tuple]:
    """The lane of ``type_name`` derived from its :data:`_SPECS` entry: its members beyond
    :data:`_BASE` that have a plain converter, each with the event class's field (the inverse of
    the class's ``WIRE`` names), and its required members; None when a required member has no
    plain form (STATE_SNAPSHOT, MESSAGES_SNAPSHOT)."""
    cls = EVENT_CLASSES[type_name]
    field_of = {wire: name for name, wire in cls.WIRE.items()}
    members, required = {}, []
    for name, (check, needed) in spec.members.items():
        if name in _BASE:
            continue
        convert = _PLAIN_CONVERTERS.get(check)
        if convert is None:
            if needed:
                return None
            continue
        members[name] = (field_of.get(name, name), convert)
        if needed:
            required.append(name)
    return cls, members, tuple(required)


_PLAIN_LANES: dict[str, tuple[type, dict[str, tuple[str, Any]], tuple[str, ...]]] = {
    type_name: lane for type_name, spec in _SPECS.items()
    if (lane := _plain_lane(type_name, spec)) is not None}
"""The plain forms :func:`parse_event` builds directly, derived from :data:`_SPECS`
(:func:`_plain_lane`): ``type -> (class, wire member -> (field, converter), required members)``.
An event is in its plain form when every member is ``type``, a
member of its lane holding a plain value (a string for ``_S``; else what the converter takes:
an object, a boolean, a string ``content``, a patch of well-formed operations), ``timestamp`` a
safe integer, or ``metadata`` an object, and its required members are there (a
TEXT_MESSAGE_START's role one of :data:`TEXT_MESSAGE_ROLES`). Such an event passes every check of
its :data:`_SPECS` entry and strips nothing, so the general path would build the same event; a
long stream is mostly these (text and argument chunks). ``tests/test_wire.py`` checks that the
lane and the general path agree on every object the lane takes."""


def _plain_event(obj: dict) -> Optional[Event]:
    """The event of ``obj`` when it is in its plain form (:data:`_PLAIN_LANES`), else None."""
    kind = obj.get("type")
    lane = _PLAIN_STRINGS.get(kind) if type(kind) is str else None
    if lane is None:
        return None
    cls, strings, converted, required = lane
    fields_: dict = {}
    for name, item in obj.items():
        attr = strings.get(name)
        if attr is not None:
            if type(item) is not str:
                return None
            fields_[attr] = item
        elif name == "type":
            continue
        elif name in converted:
            attr, convert = converted[name]
            value = convert(item)
            if value is _NOT_PLAIN:
                return None
            fields_[attr] = value
        elif name == "timestamp":
            if type(item) is not int or not -MAX_SAFE_INT <= item <= MAX_SAFE_INT:
                return None
            fields_["timestamp"] = item
        elif name == "metadata":
            if type(item) is not dict:
                return None
            fields_["metadata"] = freeze(item)
        else:
            return None
    for name in required:
        if name not in obj:
            return None
    if cls is TextMessageStart and fields_.get("role", "assistant") not in TEXT_MESSAGE_ROLES:
        return None
    return cls(**fields_)


_PLAIN_STRINGS: dict[str, tuple[type, dict[str, str], dict[str, tuple[str, Any]], tuple[str, ...]]] = {
    kind: (cls, {name: attr for name, (attr, convert) in members.items() if convert is _S},
           {name: (attr, convert) for name, (attr, convert) in members.items()
            if convert is not _S}, required)
    for kind, (cls, members, required) in _PLAIN_LANES.items()}
""":data:`_PLAIN_LANES` as :func:`_plain_event` reads it: ``type -> (class, string members ->
field, other members -> (field, converter), required members)``."""


def parse_event(obj: Any) -> Event:
    """Parse one wire event object into a typed event, applying the processing rules.

    Args:
        obj: the decoded JSON value of one event (normally a ``dict``).

    Returns:
        A typed :class:`~model.events.Event`; :class:`~model.events.Malformed` for a schema
        violation (never raised), :class:`~model.events.Unrecognised` for an undescribed type.
        An event in its plain form (:data:`_PLAIN_LANES`: the streaming and lifecycle events,
        activity events and patches with well-formed members, nothing undescribed) is built
        directly, with the same result.

    Raises:
        TypeError: when ``obj`` is not a JSON object (the caller reports it as a trace-format
            error, since a non-object cannot be typed at all).
    """
    if type(obj) is dict:
        plain = _plain_event(obj)
        if plain is not None:
            return plain
    elif not isinstance(obj, dict):
        raise TypeError(f"an event must be a JSON object, got {a_json_type(obj)}")
    return _parse_general(obj)


def _parse_general(obj: dict) -> Event:
    """:func:`parse_event` without the plain lane: every check of :data:`_SPECS`, the event's
    canonical wire text kept for a malformed, unrecognised or passed-through event."""
    wire = freeze(obj)
    type_name = obj.get("type")
    if not isinstance(type_name, str):
        reason = "required member is missing" if "type" not in obj else \
            f"expected a string, got {a_json_type(type_name)}"
        return Malformed(name="?", path="$.type", reason=reason, clause="PRC-MALFORMED-FATAL",
                         wire=wire)
    if type_name not in _SPECS:
        if type_name in KNOWN_PASSTHROUGH:
            return Passthrough(name=type_name, wire=wire)
        return Unrecognised(name=type_name, wire=wire)
    try:
        return _parse_known(obj, type_name)
    except _Bad as bad:
        shim = None
        if bad.shim_field is not None:
            repaired = {k: v for k, v in obj.items() if k != bad.shim_field}
            shim = parse_event(repaired)
            if isinstance(shim, Malformed) and shim.shim is None:
                shim = None  # still malformed after the repair, for a reason no shim mends
        clause = bad.clause
        if type_name in ("ACTIVITY_SNAPSHOT", "ACTIVITY_DELTA") and clause == "PRC-MALFORMED-FATAL":
            clause = "ACT-MALFORMED-FATAL"
        return Malformed(name=type_name, path=bad.path, reason=bad.reason, clause=clause,
                         wire=wire, shim=shim)


def parse_events(objs: Iterable[Any]) -> tuple[Event, ...]:
    """Parse decoded event objects (see :func:`parse_event`); raises TraceFormatError naming the
    index of a non-object element."""
    out = []
    for i, obj in enumerate(objs):
        try:
            out.append(parse_event(obj))
        except TypeError as exc:
            raise TraceFormatError(str(exc), event_index=i) from None
    return tuple(out)


@dataclass(frozen=True)
class ParsedTrace:
    """A trace read from text.

    Attributes:
        events: the typed events, in arrival order.
        lines: 1-based line of each event in the source text (same length as ``events``).
        file: the source name.
        meta: for a case/finding object wrapping ``events``, its other members (else empty).
    """

    events: tuple[Event, ...]
    lines: tuple[int, ...]
    file: str
    meta: dict

    def line_of(self, index: int) -> Optional[int]:
        """Source line of event ``index`` (None when out of range)."""
        return self.lines[index] if 0 <= index < len(self.lines) else None


_NONZERO_MANTISSA = re.compile(r"^-?0*[.]?0*[1-9]")
"""A number token whose digits before the exponent are not all zero."""

def loads_json(text: str) -> Any:
    """Decode JSON text strictly, as every file the tool reads is decoded.

    Beyond :func:`json.loads` it refuses ``NaN`` and ``Infinity`` (not JSON), numbers out of range
    or too long to read, a member name that appears twice in one object (named with the JSON
    path of that object, e.g. ``$.patches``), and nesting deeper than :data:`MAX_DEPTH`.

    Raises:
        json.JSONDecodeError: with the reason and a position (``lineno``, ``colno``).
    """
    def reject(name: str):
        raise _NotJson(name, f"{name} is not a JSON value")

    def number(token: str) -> float:
        value = float(token)
        if math.isinf(value):
            raise _NotJson(token, f"the number {token[:20]} is out of range")
        if value == 0.0 and _NONZERO_MANTISSA.search(token):
            # 1.5e-400 is below the smallest double: reading it as 0 would change its value
            raise _NotJson(token, f"the number {token[:20]} is out of range (too small to "
                                  "tell from 0)")
        return value

    seen_repeat = []

    def pairs(items: list) -> dict:
        obj: dict = {}
        repeated = None
        for key, value in items:
            if key in obj and repeated is None:
                repeated = key
            obj[key] = value
        if repeated is None:
            return obj
        marked = _Repeated(obj)
        marked.repeated = repeated
        seen_repeat.append(marked)
        return marked

    try:
        value = json.loads(text, parse_constant=reject, parse_float=number,
                           object_pairs_hook=pairs)
        if seen_repeat:
            _check_repeated(value)
        _check_depth(value, text)
        return value
    except json.JSONDecodeError:
        raise
    except _NotJson as exc:
        raise json.JSONDecodeError(exc.reason, text, exc.locate(text)) from None
    except RecursionError:  # deeper than the interpreter reads: far past MAX_DEPTH
        raise json.JSONDecodeError(f"nested more than {MAX_DEPTH} levels deep", text,
                                   _too_deep_at(text)) from None
    except ValueError as exc:  # an integer with more digits than Python reads
        long_number = re.search(r"\d{4000,}", text)
        raise json.JSONDecodeError(f"a number is too long to read ({str(exc).split(':')[0]})",
                                   text, long_number.start() if long_number else 0) from None


class _Repeated(dict):
    """Internal: a decoded object in which the member name ``repeated`` appeared more than once
    (reported after decoding, when the object's path is known)."""

    repeated: str


def _check_repeated(value: Any) -> None:
    """Raise :class:`_NotJson` for the first object, in document order, that repeats a member."""
    stack = [(value, "$")]
    while stack:
        node, path = stack.pop()
        if isinstance(node, _Repeated):
            key = json.dumps(node.repeated, ensure_ascii=False)
            raise _NotJson(key, f"{DUPLICATE_MEMBER} {key} in {path}", member=True)
        if isinstance(node, dict):
            stack.extend((child, _member_path(path, name))
                         for name, child in reversed(list(node.items())))
        elif isinstance(node, list):
            stack.extend((child, f"{path}[{i}]") for i, child in reversed(list(enumerate(node))))


DUPLICATE_MEMBER = "duplicate member"
"""How :func:`loads_json` begins the reason for a member named twice in one object
(``duplicate member "type" in $``)."""


def _member_path(path: str, name: str) -> str:
    """``path.name``, or ``path["name"]`` when the name is not a plain identifier."""
    if name.isidentifier() or re.fullmatch(r"[A-Za-z_][A-Za-z0-9_-]*", name):
        return f"{path}.{name}"
    return f"{path}[{json.dumps(name, ensure_ascii=False)}]"


MAX_DEPTH = 128
"""Deepest nesting of arrays and objects a trace may hold (deeper input is refused, not crashed on)."""


def _check_depth(value: Any, text: str) -> None:
    """Raise a positioned JSONDecodeError when ``value`` nests deeper than :data:`MAX_DEPTH`."""
    stack = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, (dict, list)):
            if depth > MAX_DEPTH:
                raise json.JSONDecodeError(f"nested more than {MAX_DEPTH} levels deep", text,
                                           _too_deep_at(text))
            stack.extend((child, depth + 1) for child in
                         (node.values() if isinstance(node, dict) else node))


def _too_deep_at(text: str) -> int:
    """Offset in ``text`` (JSON) of the ``[`` or ``{`` that opens level :data:`MAX_DEPTH` + 1,
    brackets inside strings skipped; 0 when there is none (so that an error names its line and
    column)."""
    depth, in_string, escaped = 0, False, False
    for i, ch in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                return i
        elif ch in "]}":
            depth -= 1
    return 0


class _NotJson(ValueError):
    """Internal: a decoded value JSON does not allow; ``token`` is searched for in the text to
    give the position (a repeated ``member`` name: its second occurrence as a member name)."""

    def __init__(self, token: str, reason: str, member: bool = False):
        super().__init__(reason)
        self.token, self.reason, self.member = token, reason, member

    def locate(self, text: str) -> int:
        """Offset of the offending token in ``text`` (0 when it cannot be found)."""
        if self.member:
            names = [m.start() for m in re.finditer(re.escape(self.token) + r"\s*:", text)]
            if len(names) > 1:
                return names[1]
        return max(text.find(self.token), 0)


def _position(text: str, pos: int) -> tuple[int, int]:
    line = text.count("\n", 0, pos) + 1
    col = pos - (text.rfind("\n", 0, pos) + 1) + 1
    return line, col


def _decode_error(exc: Exception, text: str, file: str, base_line: int = 0) -> TraceFormatError:
    if isinstance(exc, json.JSONDecodeError):
        return TraceFormatError(f"not valid JSON: {exc.msg}", file=file,
                                line=exc.lineno + base_line, column=exc.colno)
    return TraceFormatError(f"not valid JSON: {exc}", file=file, line=base_line or None)


def _member_offset(text: str, start: int, name: str) -> int:
    """Offset of the value of top-level member ``name`` of the JSON object at ``start``."""
    decoder = json.JSONDecoder()
    n, pos = len(text), start + 1

    def skip(p):
        while p < n and text[p] in " \t\r\n":
            p += 1
        return p

    pos = skip(pos)
    while pos < n and text[pos] != "}":
        key, pos = decoder.raw_decode(text, pos)
        pos = skip(pos)
        pos = skip(pos + 1)  # the colon
        if key == name:
            return pos
        _, pos = decoder.raw_decode(text, pos)
        pos = skip(pos)
        if pos < n and text[pos] == ",":
            pos = skip(pos + 1)
    raise ValueError(name)


def _array_lines(text: str, start: int) -> list[int]:
    """1-based lines where each top-level element of the JSON array at ``start`` begins."""
    decoder = json.JSONDecoder()
    lines, pos, n = [], start + 1, len(text)

    def skip(p):
        while p < n and text[p] in " \t\r\n":
            p += 1
        return p

    pos = skip(pos)
    while pos < n and text[pos] != "]":
        lines.append(text.count("\n", 0, pos) + 1)
        _, end = decoder.raw_decode(text, pos)
        pos = skip(end)
        if pos < n and text[pos] == ",":
            pos = skip(pos + 1)
    return lines


def parse_trace_text(text: str, file: str = "<input>") -> ParsedTrace:
    """Read a trace from text: a JSON array of events, JSON lines (one event per line), or one
    JSON object with an ``events`` array (a field case or a finding).

    Raises:
        TraceFormatError: empty input, invalid JSON (with line and column), a top level that is
            not an array/object, an ``events`` member that is not an array, an element that is
            not a JSON object, an element that wraps ``events`` itself, or no element with a
            ``type`` (not a trace; these with the event index, line and ``$.type``).
    """
    stripped = text.lstrip()
    if not stripped:
        raise TraceFormatError(f"{EMPTY_FILE}: expected {_TRACE_FORMS}", file=file)
    start = len(text) - len(stripped)
    meta: dict = {}
    if stripped[0] in "[{":
        try:
            doc = loads_json(text)
        except json.JSONDecodeError as exc:
            if stripped[0] == "{" and exc.msg == "Extra data":
                doc = None  # JSON lines whose first line is an object
            else:
                raise _decode_error(exc, text, file) from None
        except ValueError as exc:
            raise _decode_error(exc, text, file) from None
        if isinstance(doc, list):
            return _finish(doc, _array_lines(text, start), file, meta)
        if isinstance(doc, dict):
            if "events" in doc:
                events = doc["events"]
                if not isinstance(events, list):
                    raise TraceFormatError(EVENTS_NOT_ARRAY, file=file)
                arr = _member_offset(text, start, "events")
                meta = {k: v for k, v in doc.items() if k != "events"}
                return _finish(events, _array_lines(text, arr), file, meta)
            # a single event object on one line, or a one-line JSON-lines file
            return _finish([doc], [_position(text, start)[0]], file, meta)
    objs, lines = [], []
    for lineno, raw in enumerate(text.split("\n"), start=1):
        raw = raw[:-1] if raw.endswith("\r") else raw
        if not raw.strip():
            continue
        try:
            objs.append(loads_json(raw))
        except (json.JSONDecodeError, ValueError) as exc:
            if isinstance(exc, json.JSONDecodeError):
                raise TraceFormatError(f"not valid JSON: {exc.msg}", file=file, line=lineno,
                                       column=exc.colno, event_index=len(objs)) from None
            raise TraceFormatError(f"not valid JSON: {exc}", file=file, line=lineno,
                                   event_index=len(objs)) from None
        lines.append(lineno)
    return _finish(objs, lines, file, meta)


_TRACE_FORMS = 'a JSON array of events, JSON lines, or an object with an "events" array'
"""The forms a trace file may take (said in the errors for a file that is none of them)."""

EMPTY_FILE = "the file is empty"
"""The reason given for a file with nothing but white space (followed by the forms expected)."""

EVENTS_NOT_ARRAY = 'member "events" must be an array of events'
"""The reason given for an object whose ``events`` member is not an array."""

NESTED_CASE = ('$.type: required member is missing, and the object holds "events": it is a '
               "case or finding, not an event")
"""The reason given for a case or finding nested where an event belongs."""

NO_EVENTS = "the trace holds no events"
"""The reason given for a trace (or stream) with no element at all."""


def not_a_trace(first: Any, *, file: str, line: Optional[int], column: Optional[int] = None,
                problem: Optional[str] = None, forms: str = _TRACE_FORMS) -> TraceFormatError:
    """The error for a document none of whose elements has a ``type`` (``replay``'s, and
    ``lint``'s for a stream), in one wording: the first element's fault at ``event 0``, then
    that the document is not a trace and the forms expected.

    Args:
        first: the first element, decoded (None with ``problem``).
        file, line, column: where the first element is (column: of a JSON fault).
        problem: why the first element could not be decoded (``"not valid JSON: ..."``).
        forms: the forms the command reads (default: a trace file's).

    Returns:
        The TraceFormatError, e.g. ``x.json:1: event 0: $.type: required member is missing
        (members "foo"), and no event of the file has a type, so it is not a trace: expected
        ...``; for a ``problem`` that is a member named twice (:data:`DUPLICATE_MEMBER`), that
        alone (``x.jsonl:1:23: event 0: not valid JSON: duplicate member "type" in $; a
        member may appear only once in an object``): the element may well have a type.
    """
    if problem is not None and problem.startswith(f"not valid JSON: {DUPLICATE_MEMBER} "):
        # the element is an object whose only fault is a member named twice (a "type" among
        # them, often): whether it has a type is not the question, the repeated member is
        return TraceFormatError(f"{problem}; a member may appear only once in an object",
                                file=file, line=line, column=column, event_index=0)
    if problem is not None:
        what = problem
    elif isinstance(first, dict) and "events" in first:
        what = NESTED_CASE
    elif not isinstance(first, dict):
        what = f"an event must be a JSON object, got {a_json_type(first)}"
    else:
        names = ", ".join(json.dumps(k, ensure_ascii=False)[:40] for k in list(first)[:4])
        what = "$.type: required member is missing (" + (
            f"members {names}{', ...' if len(first) > 4 else ''}" if first else "no members") + ")"
    return TraceFormatError(f"{what}, and no event of the file has a type, so it is not a "
                            f"trace: expected {forms}", file=file, line=line, column=column,
                            event_index=0)


def trace_from_values(objs: Sequence[Any], lines: Sequence[Optional[int]], file: str,
                      meta: Optional[dict] = None) -> ParsedTrace:
    """A :class:`ParsedTrace` from decoded wire values (e.g. the events of an SSE body) and the
    line of each, checked as a trace file's are (see :func:`parse_trace_text`).

    Raises:
        TraceFormatError: no element, an element that is not an object or wraps ``events``, or
            no element with a ``type`` (naming the file, line and event index).
    """
    return _finish(objs, lines, file, meta or {})


def _finish(objs: Sequence[Any], lines: Sequence[int], file: str, meta: dict) -> ParsedTrace:
    """Parse the decoded elements of a trace, refusing a document that is not a trace.

    An element without a ``type`` is an event the consumer finds malformed
    (PRC-MALFORMED-FATAL), but only inside a trace: when no element has a ``type`` the document is
    something else (a configuration, a summary, a wrapper under another name), and an element
    that itself wraps ``events`` is a case or finding nested where an event belongs.
    """
    if not objs:
        raise TraceFormatError(NO_EVENTS, file=file)
    events = []
    for i, obj in enumerate(objs):
        line = lines[i] if i < len(lines) else None
        if isinstance(obj, dict) and "type" not in obj and "events" in obj:
            raise TraceFormatError(
                f"{NESTED_CASE} (replay takes one case a file; a file of cases, one a line, is "
                "a case set, which peer check reads)", file=file, line=line, event_index=i)
        try:
            events.append(parse_event(obj))
        except TypeError as exc:
            raise TraceFormatError(str(exc), file=file, line=line, event_index=i) from None
    if not any("type" in obj for obj in objs):
        raise not_a_trace(objs[0], file=file, line=lines[0] if lines else None)
    return ParsedTrace(tuple(events), tuple(lines), file, meta)


MAX_INPUT_BYTES = 512 * 2**20
"""Default bound on the bytes of one input file or of standard input (512 MiB; ``--max-bytes``)."""

MAX_INPUT_LINES = 10_000_000
"""Default bound on the lines of one input file or of standard input (``--max-lines``)."""


@dataclass
class InputLimits:
    """The bounds every read of untrusted input keeps (see ``docs/limits.md``).

    Attributes:
        max_bytes: most bytes read from one file or from stdin (more: refused, not read on).
        max_lines: most lines (newline characters) one file or stdin may hold.
    """

    max_bytes: int = MAX_INPUT_BYTES
    max_lines: int = MAX_INPUT_LINES


INPUT_LIMITS = InputLimits()
"""The bounds in force; the command line sets them from ``--max-bytes``/``--max-lines``
(:func:`set_input_limits`) and puts the defaults back for each command."""


def set_input_limits(max_bytes: Optional[int] = None, max_lines: Optional[int] = None) -> None:
    """Set :data:`INPUT_LIMITS` (None: the default). Raises ValueError for a bound below 1."""
    for name, value in (("max_bytes", max_bytes), ("max_lines", max_lines)):
        if value is not None and value < 1:
            raise ValueError(f"{name} must be at least 1, not {value}")
    INPUT_LIMITS.max_bytes = MAX_INPUT_BYTES if max_bytes is None else max_bytes
    INPUT_LIMITS.max_lines = MAX_INPUT_LINES if max_lines is None else max_lines


_FILE_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a named pipe"),
               (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
               (stat.S_ISSOCK, "a socket"))


def _kind_of(mode: int) -> str:
    return next((name for test, name in _FILE_KINDS if test(mode)), "not a regular file")


def read_bytes(path: str, *, listed: bool = True, max_bytes: Optional[int] = None) -> bytes:
    """The bytes of the file ``path``, read with a bound; the one way the tool opens an input.

    Args:
        path: the file.
        listed: True (the default) for a name that came from data or from a directory listing
            (a trace in a folder, a finding a summary lists, a corpus entry, a spec page, a
            vocabulary): it is opened without following a symbolic link (``O_NOFOLLOW``) and
            without waiting on a pipe (``O_NONBLOCK``), and read only when the opened
            descriptor is a regular file. False for a file the user named on the command line:
            a link is followed and a pipe or device read (``<(cmd)``, ``/dev/stdin``), bounded
            all the same; a named pipe with no writer reads as empty, it never hangs.
        max_bytes: the bound (default :data:`INPUT_LIMITS`' ``max_bytes``).

    Raises:
        TraceFormatError: one line naming the file: no such file, a symbolic link or not a
            regular file (``listed``), a directory, unreadable, larger than the bound (and the
            flag that raises it).
    """
    limit = INPUT_LIMITS.max_bytes if max_bytes is None else max_bytes
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    if listed:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if listed and exc.errno == errno.ELOOP and os.path.islink(path):
            raise TraceFormatError("refused: a symbolic link (this input is read only from a "
                                   "regular file, never through a link)",
                                   file=path) from None
        raise TraceFormatError(f"cannot read the file: {exc.strerror or exc}",
                               file=path) from None
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise TraceFormatError("cannot read the file: it is a directory", file=path)
        if listed and not stat.S_ISREG(mode):
            raise TraceFormatError(f"refused: {_kind_of(mode)}, not a regular file", file=path)
        if not stat.S_ISREG(mode) and hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)  # a pipe the user named: read what its writer sends
        chunks, size = [], 0
        while True:
            chunk = os.read(fd, min(1 << 20, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
            if size > limit:
                raise TraceFormatError(f"larger than {limit} bytes, the most read from one "
                                       "input (--max-bytes raises it)", file=path)
        return b"".join(chunks)
    except OSError as exc:
        raise TraceFormatError(f"cannot read the file: {exc.strerror or exc}",
                               file=path) from None
    finally:
        os.close(fd)


def undecodable_at(data: bytes, exc: UnicodeDecodeError) -> tuple[int, int]:
    """Where the first byte of ``data`` that is not UTF-8 (``exc``, from decoding ``data``)
    stands: ``(line, column)``, both from 1, the column in characters (what precedes the byte
    on its line is valid UTF-8), so that an error names the line as a JSON error does."""
    start = data.rfind(b"\n", 0, exc.start) + 1
    return (data.count(b"\n", 0, exc.start) + 1,
            len(data[start:exc.start].decode("utf-8", "replace")) + 1)


def decode_text(data: bytes, file: str) -> str:
    """``data`` as UTF-8 text (a leading byte-order mark dropped), within the line bound.

    Raises:
        TraceFormatError: naming ``file``: not UTF-8 (with the line and column of the first
            byte that is not, and its byte offset), or more lines than :data:`INPUT_LIMITS`
            allows (and the flag that raises it).
    """
    lines = data.count(b"\n")
    if lines > INPUT_LIMITS.max_lines:
        raise TraceFormatError(f"more than {INPUT_LIMITS.max_lines} lines, the most read from "
                               "one input (--max-lines raises it)", file=file)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line, column = undecodable_at(data, exc)
        raise TraceFormatError(f"not UTF-8 text ({exc.reason} at byte {exc.start})",
                               file=file, line=line, column=column) from None
    return text[1:] if text.startswith("\ufeff") else text


def read_text(path: str, *, listed: bool = False) -> str:
    """The text of an input file: :func:`read_bytes` (bounded; ``listed``: a name from data or
    a listing, read only as a regular file and never through a link) then
    :func:`decode_text` (UTF-8, a leading byte-order mark dropped, bounded in lines).

    Raises:
        TraceFormatError: naming the file: missing, a directory, refused, unreadable, too
            large, or not UTF-8 (with the byte offset).
    """
    return decode_text(read_bytes(path, listed=listed), path)


STDIN = "-"
"""The path that names standard input (``replay -``, ``lint -``)."""

STDIN_NAME = "<stdin>"
"""The file name errors and reports give standard input."""


def read_stdin(stdin=None) -> str:
    """The whole text of ``stdin`` (default :data:`sys.stdin`), read as bytes where it has
    them and decoded as UTF-8 (a leading byte-order mark dropped), as :func:`read_text` reads
    a file, within the same bounds (:data:`INPUT_LIMITS`: read in chunks, refused past
    ``max_bytes`` without reading on, then ``max_lines``).

    Raises:
        TraceFormatError: naming :data:`STDIN_NAME`: not UTF-8 (with the byte offset),
            unreadable, or larger than a bound.
    """
    import sys
    stream = stdin if stdin is not None else sys.stdin
    limit = INPUT_LIMITS.max_bytes
    source = stream.buffer if hasattr(stream, "buffer") else stream
    chunks, size = [], 0
    try:
        while True:
            chunk = source.read(min(1 << 20, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk) if isinstance(chunk, bytes) else len(chunk.encode("utf-8"))
            if size > limit:
                raise TraceFormatError(f"larger than {limit} bytes, the most read from one "
                                       "input (--max-bytes raises it)", file=STDIN_NAME)
    except OSError as exc:
        raise TraceFormatError(f"cannot read standard input: {exc.strerror or exc}",
                               file=STDIN_NAME) from None
    data = b"".join(c if isinstance(c, bytes) else c.encode("utf-8") for c in chunks)
    return decode_text(data, STDIN_NAME)


def load_trace(path: str, stdin=None) -> ParsedTrace:
    """Read a trace file (see :func:`parse_trace_text`); ``path`` :data:`STDIN` (``-``) reads
    ``stdin`` (default :data:`sys.stdin`, :func:`read_stdin`), named ``<stdin>``.

    Raises:
        TraceFormatError: unreadable file, undecodable bytes, or any format problem.
    """
    if path == STDIN:
        return parse_trace_text(read_stdin(stdin), STDIN_NAME)
    return parse_trace_text(read_text(path), path)


def event_to_json(event: Event) -> str:
    """One event as a compact wire JSON line (stable member order)."""
    return json.dumps(event.to_wire(), ensure_ascii=False, separators=(",", ":"))


def dump_wire_jsonl(values: Iterable[Any]) -> str:
    """Wire values (decoded JSON, e.g. a finding's recorded events) as JSON lines: each as one
    compact line in its own member order, non-ASCII kept, newline-terminated; the form of every
    ``.jsonl`` the tools write."""
    return "".join(json.dumps(v, ensure_ascii=False, separators=(",", ":")) + "\n"
                   for v in values)


def dump_jsonl(events: Iterable[Event]) -> str:
    """A trace as AG-UI JSON lines: one wire event per line, newline-terminated
    (:func:`dump_wire_jsonl` of the events' wire form)."""
    return dump_wire_jsonl(e.to_wire() for e in events)
