"""The zoo: plausible wrong consumers, each one mistake tied to one clause.

A mutant is a :class:`model.consumers.Consumer` (the contract the engines check). Each mutant wraps the reference step and changes one behaviour, the way an implementer who misread
one sentence would. A result a mutant builds itself names the model's branch it departs on
(``StepResult.branch``, and its fatal's), so that its steps are named as the model's are; codes the
model never surfaces (``ACTIVITY_NOT_FOUND``, ``UNKNOWN_EVENT``, ``REPLACE_FALSE_REJECTED``) are
the mutant's own. Several reproduce mistakes from the field cases (``case``). The zoo is the
yardstick of the checking engines: a property catalogue that does not catch a mutant has a hole.
"""
from __future__ import annotations

import json
from dataclasses import replace
from typing import Callable

from jsonpointer import unescape

from model.codes import (ACTIVITY_DELTA_TARGET_MISSING, ACTIVITY_DELTA_TARGET_NOT_ACTIVITY,
                         ACTIVITY_OWNER_MISMATCH, ACTIVITY_PATCH_FAILED, EVENT_AFTER_RUN_CLOSED,
                         MALFORMED_ACTIVITY_EVENT, UNKNOWN_EVENT_DROPPED, UNKNOWN_MEMBER_STRIPPED,
                         UNKNOWN_PATCH_OP, UNKNOWN_PATCH_OP_DROPPED)
from model.consumer import ConsumerState, Fatal, StepResult, Warning, run_input, step
from model.events import (ActivityDelta, ActivitySnapshot, Event, Malformed, Message,
                          MessagesSnapshot, PatchOp, RunError, RunFinished, StateDelta,
                          StateSnapshot, StepFinished, SubagentError, SubagentFinished,
                          SubagentStarted, TextMessageContent, TextMessageStart, Unrecognised,
                          Passthrough)
from model.json_values import freeze, thaw
from model.patch import apply_patch, pointer_tokens
from model.wire import parse_event
from model.readings import DRAFT, Reading
from properties.surface import RFC6902_MEMBERS

from model.consumers import Consumer, StepFn

__all__ = ["MUTANTS", "MUTANT_BY_NAME"]

# --- helpers ------------------------------------------------------------------------------------

def _held(state: ConsumerState, mid: str):
    return state.message(mid)


def _with_message(state: ConsumerState, message) -> ConsumerState:
    return replace(state, messages=tuple(message if m.id == message.id else m
                                         for m in state.messages))


def _behaves_as(**knobs: str) -> StepFn:
    """A step that runs the reference under ``draft`` changed in ``knobs`` (by reading
    attribute): a consumer that implements another reading while claiming ``draft``."""
    def mutant(state, event, reading):
        if isinstance(reading, Reading):
            reading = replace(reading, **knobs)
        return step(state, event, reading)
    return mutant


def _post(mutate: Callable[[ConsumerState, Event, StepResult], StepResult]) -> StepFn:
    """A step that runs the reference step, then lets ``mutate`` change its result."""
    def mutant(state, event, reading):
        return mutate(state, event, step(state, event, reading))
    return mutant


def _pre(rewrite: Callable[[ConsumerState, Event], Event]) -> StepFn:
    """A step that rewrites the event before the reference step sees it."""
    def mutant(state, event, reading):
        return step(state, rewrite(state, event), reading)
    return mutant


def _live_now(state) -> bool:
    """Whether the consumer is in an active run it has not halted (it takes events)."""
    return state.run == "active" and not state.halted


def _is_live_snapshot(state, event) -> bool:
    return isinstance(event, ActivitySnapshot) and _live_now(state)


# --- the mutants --------------------------------------------------------------------------------

def _absent_replace_as_false(state, event):
    if isinstance(event, ActivitySnapshot) and event.replace is None:
        return replace(event, replace=False)
    return event


def _replace_false_merges(state, event, result):
    held = _held(state, getattr(event, "message_id", ""))
    if _is_live_snapshot(state, event) and event.replace is False and held is not None and \
            held.is_activity and result.fatal is None and held.content.startswith("{"):
        merged = {**thaw(held.content), **thaw(event.content)}
        m = _held(result.state, held.id)
        return replace(result, state=_with_message(result.state, replace(m, content=freeze(merged))))
    return result


def _replace_false_overwrites(state, event):
    if isinstance(event, ActivitySnapshot) and event.replace is False:
        return replace(event, replace=None)
    return event


def _owner_not_reminted(state, event, result):
    held = _held(state, getattr(event, "message_id", ""))
    if _is_live_snapshot(state, event) and event.replacing and held is not None and \
            held.is_activity and result.fatal is None:
        m = _held(result.state, held.id)
        if m is not None:
            return replace(result, state=_with_message(result.state, replace(m, owner=held.owner)))
    return result


def _owner_reminted_on_false(state, event, result):
    held = _held(state, getattr(event, "message_id", ""))
    if _is_live_snapshot(state, event) and event.replace is False and held is not None and \
            held.is_activity and result.fatal is None:
        m = _held(result.state, held.id)
        return replace(result, state=_with_message(result.state,
                                                   replace(m, owner=event.subagent_run_id)))
    return result


def _metadata_reset_on_replace(state, event, result):
    held = _held(state, getattr(event, "message_id", ""))
    if _is_live_snapshot(state, event) and event.replacing and held is not None and \
            held.is_activity and result.fatal is None:
        m = _held(result.state, held.id)
        return replace(result, state=_with_message(result.state,
                                                   replace(m, metadata=event.metadata)))
    return result


def _deep_merge(a: dict, b: dict) -> dict:
    out = dict(a)
    for k, v in b.items():
        out[k] = _deep_merge(out[k], v) if isinstance(out.get(k), dict) and isinstance(v, dict) \
            else v
    return out


def _metadata_recursive(state, event, result):
    if isinstance(event, (ActivitySnapshot, ActivityDelta)) and event.metadata is not None and \
            result.fatal is None:
        held = _held(state, event.message_id)
        m = _held(result.state, event.message_id)
        if held is not None and m is not None and held.is_activity and m.metadata != held.metadata:
            deep = _deep_merge(thaw(held.metadata or "{}"), thaw(event.metadata))
            return replace(result, state=_with_message(result.state,
                                                       replace(m, metadata=freeze(deep))))
    return result


def _metadata_ignored_on_delta(state, event, result):
    if isinstance(event, ActivityDelta) and result.fatal is None:
        held = _held(state, event.message_id)
        m = _held(result.state, event.message_id)
        if held is not None and m is not None and held.is_activity:
            return replace(result, state=_with_message(result.state,
                                                       replace(m, metadata=held.metadata)))
    return result


def _delta_missing_fatal(state, event, result):
    if any(w.code in (ACTIVITY_DELTA_TARGET_MISSING, ACTIVITY_DELTA_TARGET_NOT_ACTIVITY)
           for w in result.warnings):
        return StepResult(replace(state, halted=True), (), Fatal(
            "ACTIVITY_NOT_FOUND", "ACT-DELTA-MISSING-NOFAIL", branch=result.branch), result.branch)
    return result


def _drop_codes(*codes: str):
    def mutate(state, event, result):
        return replace(result, warnings=tuple(w for w in result.warnings if w.code not in codes))
    return mutate


def _partial_patch_kept(state, event, reading):
    result = step(state, event, reading)
    if isinstance(event, ActivityDelta) and any(w.code == ACTIVITY_PATCH_FAILED
                                                for w in result.warnings):
        # apply operations one by one and keep what applied before the failing one
        held = _held(state, event.message_id)
        from model.patch import apply_patch
        content = held.content
        for op in event.patch:
            if not op.recognised:
                continue
            outcome = apply_patch(content, (op,))
            if not outcome.ok:
                break
            content = outcome.result
        m = _held(result.state, event.message_id)
        return replace(result, state=_with_message(result.state, replace(m, content=content)))
    return result


_KNOWN_TYPES = frozenset({"PLAN"})


def _unknown_type_dropped(state, event, reading):
    if isinstance(event, ActivitySnapshot) and event.activity_type not in _KNOWN_TYPES and \
            state.message(event.message_id) is None and _live_now(state):
        return StepResult(state, branch="snapshot.create")
    return step(state, event, reading)


def _unknown_op_fatal(state, event, reading):
    if isinstance(event, ActivityDelta) and any(not op.recognised for op in event.patch) and \
            _live_now(state):
        held = state.message(event.message_id)
        if held is not None and held.is_activity:
            return StepResult(replace(state, halted=True), (), Fatal(
                UNKNOWN_PATCH_OP, "SNP-UNKNOWN-OP", branch="delta.unknown-op"), "delta.unknown-op")
    return step(state, event, reading)


def _activity_in_run_input(state: ConsumerState) -> list:
    return [m.to_wire() for m in state.messages]


def _test_loose_equality(state, event):
    """``test`` compared with Python's ``==`` (so ``1`` equals ``true``): a test that holds that
    way is treated as passed and removed before the patch is applied."""
    if not isinstance(event, ActivityDelta):
        return event
    held = state.message(event.message_id)
    if held is None or not held.is_activity:
        return event
    doc = thaw(held.content)
    kept = []
    for op in event.patch:
        obj = thaw(op.raw)
        if op.op == "test":
            try:
                import jsonpointer
                if jsonpointer.resolve_pointer(doc, obj["path"]) == obj["value"]:
                    continue
            except jsonpointer.JsonPointerException:
                pass
        kept.append(op)
    return replace(event, patch=tuple(kept))


def _ms_drops_held_activity(state, event, result):
    if isinstance(event, MessagesSnapshot) and result.fatal is None:
        ids = {m.id for m in event.messages}
        return replace(result, state=replace(result.state, messages=tuple(
            m for m in result.state.messages if not m.is_activity or m.id in ids)))
    return result


def _ms_keeps_stale_activity(state, event, result):
    if isinstance(event, MessagesSnapshot) and result.fatal is None:
        out = result.state
        for m in state.messages:
            if m.is_activity and _held(out, m.id) is not None:
                out = _with_message(out, m)
        return replace(result, state=out)
    return result


def _ms_reorders(state, event, result):
    if isinstance(event, MessagesSnapshot) and result.fatal is None:
        order = {m.id: i for i, m in enumerate(event.messages)}
        ranked = sorted(result.state.messages, key=lambda m: order.get(m.id, -1))
        return replace(result, state=replace(result.state, messages=tuple(ranked)))
    return result


def _snapshot_appends_duplicate(state, event, result):
    held = _held(state, getattr(event, "message_id", ""))
    if _is_live_snapshot(state, event) and event.replacing and held is not None and \
            held.is_activity and result.fatal is None:
        replaced = _held(result.state, held.id)
        kept = tuple(held if x.id == held.id else x for x in result.state.messages)
        return replace(result, state=replace(result.state, messages=kept + (replaced,)))
    return result


def _text_into_activity(state, event, result):
    if isinstance(event, TextMessageContent) and not state.halted:
        held = _held(state, event.message_id)
        if held is not None and held.is_activity:
            return StepResult(_with_message(state, replace(held, content=freeze(event.delta))),
                              branch=result.branch)
    return result


def _delta_ignores_retype(state, event, result):
    if isinstance(event, ActivityDelta) and result.fatal is None:
        held = _held(state, event.message_id)
        m = _held(result.state, event.message_id)
        if held is not None and m is not None and held.is_activity:
            return replace(result, state=_with_message(
                result.state, replace(m, activity_type=held.activity_type)))
    return result


def _untagged_delta_rejected(state, event, reading):
    held = state.message(getattr(event, "message_id", "")) if isinstance(event, ActivityDelta) \
        else None
    if held is not None and held.is_activity and held.owner is not None and \
            event.subagent_run_id is None and _live_now(state):
        return StepResult(replace(state, halted=True), (), Fatal(
            ACTIVITY_OWNER_MISMATCH, "SUB-ACCEPT-UNTAGGED", message_id=held.id,
            branch="delta.owner-mismatch"), "delta.owner-mismatch")
    return step(state, event, reading)


def _fatal_on(kind: type, clause: str, branch: str) -> StepFn:
    """A step that fails the run (``UNKNOWN_EVENT``) on an event of ``kind`` it should take."""
    def mutant(state, event, reading):
        if isinstance(event, kind) and not state.halted:
            return StepResult(replace(state, halted=True), (), Fatal(
                "UNKNOWN_EVENT", clause, branch=branch), branch)
        return step(state, event, reading)
    return mutant


def _malformed_ignored(state, event, reading):
    if isinstance(event, Malformed):
        return StepResult(state, branch="malformed.fatal")
    return step(state, event, reading)


def _drop_nulls(value):
    if isinstance(value, dict):
        return {k: _drop_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_drop_nulls(v) for v in value]
    return value


def _metadata_nulls_dropped(state, event, result):
    if isinstance(event, (ActivitySnapshot, ActivityDelta)) and event.metadata is not None and \
            result.fatal is None:
        m = _held(result.state, event.message_id)
        if m is not None and m.is_activity and m.metadata is not None:
            return replace(result, state=_with_message(result.state, replace(
                m, metadata=freeze(_drop_nulls(thaw(m.metadata))))))
    return result


def _snapshot_creates_at_start(state, event, result):
    if _is_live_snapshot(state, event) and _held(state, event.message_id) is None and \
            result.fatal is None:
        m = _held(result.state, event.message_id)
        if m is not None:
            rest = tuple(x for x in result.state.messages if x.id != m.id)
            return replace(result, state=replace(result.state, messages=(m,) + rest))
    return result


def _late_run_error_rejected(state, event, result):
    if isinstance(event, RunError) and state.run == "finished" and not state.halted:
        return StepResult(state.but(halted=True), (), Fatal(
            EVENT_AFTER_RUN_CLOSED, "LIF-AFTER-CLOSE", "RUN_ERROR after RUN_FINISHED",
            branch="lifecycle.after-close"), "lifecycle.after-close")
    return result


def _run_error_drops_activity(state, event, result):
    if isinstance(event, RunError) and result.fatal is None:
        return replace(result, state=replace(result.state, messages=tuple(
            m for m in result.state.messages if not m.is_activity)))
    return result


def _after_close_accepted(state, event, reading):
    if state.run == "finished" and not state.halted and \
            isinstance(event, (ActivitySnapshot, ActivityDelta)):
        result = step(replace(state, run="active"), event, reading)
        return replace(result, state=replace(result.state, run="finished"))
    return step(state, event, reading)


def _content_double_encoded(state, event):
    if isinstance(event, ActivitySnapshot):
        return replace(event, content=freeze(event.content))  # the JSON text, as a string
    return event


def _run_input_drops_assistant(state: ConsumerState) -> list:
    return [m.to_wire() for m in state.messages if m.role not in ("activity", "assistant")]


def _delta_remints_owner(state, event, result):
    if isinstance(event, ActivityDelta) and result.fatal is None:
        held = _held(state, event.message_id)
        m = _held(result.state, event.message_id)
        if held is not None and m is not None and held.is_activity and event.subagent_run_id:
            return replace(result, state=_with_message(result.state, replace(
                m, owner=event.subagent_run_id)))
    return result


def _strip_silently(state, event, result):
    return replace(result, warnings=tuple(w for w in result.warnings
                                          if w.code != UNKNOWN_MEMBER_STRIPPED))


def _ms_new_first(state, event, result):
    if isinstance(event, MessagesSnapshot) and result.fatal is None:
        held = {m.id for m in state.messages}
        new = tuple(m for m in result.state.messages if m.id not in held)
        old = tuple(m for m in result.state.messages if m.id in held)
        return replace(result, state=replace(result.state, messages=new + old))
    return result


def _raw_event_used(state, event):
    if isinstance(event, ActivitySnapshot) and event.raw_event is not None and \
            event.raw_event.startswith("{"):
        return replace(event, content=event.raw_event)
    return event


def _prefix(message_id: str) -> str:
    return message_id.split("-")[0]


def _ids_matched_by_prefix(state, event, reading):
    """Looks activities up by the part of the id before its first '-' (so act-1 and act-2 are
    taken for one message)."""
    if isinstance(event, (ActivitySnapshot, ActivityDelta)):
        for m in state.messages:
            if m.is_activity and m.id != event.message_id and \
                    _prefix(m.id) == _prefix(event.message_id):
                return step(state, replace(event, message_id=m.id), reading)
    return step(state, event, reading)


def _crashes_on_empty_patch(state, event, reading):
    if isinstance(event, ActivityDelta) and not event.patch:
        raise IndexError("list index out of range")  # reads patch[0] unguarded
    return step(state, event, reading)


def _fails_on_replace_false(state, event, reading):
    """Reads the producer's duty to agree (ACT-ATTR-AGREE) as a consumer's duty to reject, and
    rejects every replace:false snapshot on an existing activity."""
    held = state.message(getattr(event, "message_id", "")) if isinstance(event, ActivitySnapshot) \
        else None
    if held is not None and held.is_activity and event.replace is False and \
            _live_now(state):
        return StepResult(state.but(halted=True), (), Fatal(
            "REPLACE_FALSE_REJECTED", "ACT-ATTR-TOLERATE", message_id=held.id,
            branch="snapshot.replace-false"), "snapshot.replace-false")
    return step(state, event, reading)


def _activity_cleared_at_run_end(state, event, result):
    if isinstance(event, RunFinished) and result.fatal is None:
        return replace(result, state=result.state.but(messages=tuple(
            m for m in result.state.messages if not m.is_activity)))
    return result


def _subagent_end_drops_its_activity(state, event, result):
    if isinstance(event, SubagentFinished) and result.fatal is None:
        return replace(result, state=result.state.but(messages=tuple(
            m for m in result.state.messages
            if not (m.is_activity and m.owner == event.subagent_run_id))))
    return result


# --- mistakes over the draft's wider surface (issue 20: one per surface feature generated) ------

def _rewrite_ops(rewrite: Callable[[dict, object], dict | list | None],
                 in_turn: bool = False) -> Callable:
    """A pre-step rewrite of each operation of an ACTIVITY_DELTA on a held activity:
    ``rewrite(operation object, thawed content)`` returns the operation the mistaken consumer
    carries out, or a list of them (``[]``: none), or None (as sent). The content is the held
    one; with ``in_turn`` it is the content as the operations before it in the same patch left
    it (a mistaken applier errs at every operation, on arrays the patch itself made too), from
    the first operation that does not apply on the rest are sent as they are, and a patch with an
    operation RFC 6902 does not define is sent as it is."""
    def pre(state, event):
        if not isinstance(event, ActivityDelta):
            return event
        held = state.message(event.message_id)
        if held is None or not held.is_activity or \
                (in_turn and not all(op.recognised for op in event.patch)):
            return event
        doc = held.content
        view = thaw(doc)
        ops, changed = [], False
        for op in event.patch:
            obj = thaw(op.raw) if op.recognised else None
            new = rewrite(obj, view) if obj is not None and (doc is not None or not in_turn) \
                else None
            now = [op] if new is None else [PatchOp.of(o) for o in
                                             (new if isinstance(new, list) else [new])]
            changed = changed or new is not None
            ops.extend(now)
            if in_turn and doc is not None:
                outcome = apply_patch(doc, now)
                doc = outcome.result if outcome.ok else None
                view = thaw(doc) if doc is not None else None
        return replace(event, patch=tuple(ops)) if changed else event
    return pre


def _move_as_copy(obj, doc):
    return {**obj, "op": "copy"} if obj["op"] == "move" else None


def _copy_as_move(obj, doc):
    return {**obj, "op": "move"} if obj["op"] == "copy" else None


def _no_unescape(obj, doc):
    """Reads ``~1`` and ``~0`` literally: the pointer it resolves is the escaped one's."""
    if "~" not in obj["path"] and "~" not in obj.get("from", ""):
        return None
    out = dict(obj)
    for key in ("path", "from"):
        if key in out:
            out[key] = out[key].replace("~", "~0")
    return out


def _unescape_wrong_order(obj, doc):
    """Decodes ``~0`` before ``~1`` (RFC 6901 section 4 orders them the other way), so ``~01``
    becomes ``/`` instead of ``~1``; shown on any escaped pointer by decoding both to ``/``."""
    if "~0" not in obj["path"]:
        return None
    return {**obj, "path": obj["path"].replace("~0", "~1")}


def _token(pointer: str) -> str:
    """The last reference token of a JSON pointer, unescaped (RFC 6901 section 4)."""
    return unescape(pointer.rsplit("/", 1)[-1])


def _parent(doc, pointer: str):
    node = doc
    for token in pointer_tokens(pointer)[:-1]:
        if isinstance(node, dict) and token in node:
            node = node[token]
        elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
            node = node[int(token)]
        else:
            return None
    return node


def _dash_as_last(obj, doc):
    """Reads ``-`` as the last element on remove, replace and test (it names none: RFC 6901
    section 4, RFC 6902 4.1)."""
    if obj["op"] not in ("remove", "replace", "test") or not obj["path"].endswith("/-"):
        return None
    parent = _parent(doc, obj["path"])
    if not isinstance(parent, list) or not parent:
        return None
    return {**obj, "path": obj["path"][:-1] + str(len(parent) - 1)}


def _leading_zero_accepted(obj, doc):
    """Reads ``01`` as the index 1 (RFC 6901 forbids leading zeros)."""
    tokens = obj["path"].split("/")
    fixed = [str(int(t)) if len(t) > 1 and t.isdigit() and t[0] == "0" else t for t in tokens]
    return None if fixed == tokens else {**obj, "path": "/".join(fixed)}


def _root_add_merges(obj, doc):
    """Treats ``add`` or ``replace`` at the root with an object as a merge into the document
    (RFC 6902 4.1/4.3: the value replaces the whole document)."""
    if obj["op"] not in ("add", "replace") or obj["path"] != "" or \
            not isinstance(obj.get("value"), dict) or not isinstance(doc, dict):
        return None
    return {"op": "replace", "path": "", "value": {**doc, **obj["value"]}}


def _numbers_truncated(obj, doc):
    """Compares numbers in ``test`` by their integer part (1.5 equals 1), so such a test is
    taken as passed (RFC 6902 4.6: numbers are equal when their values are)."""
    if obj["op"] != "test" or isinstance(obj.get("value"), bool) or \
            not isinstance(obj.get("value"), (int, float)):
        return None
    parent = _parent(doc, obj["path"])
    token = _token(obj["path"])
    held = parent.get(token) if isinstance(parent, dict) else None
    if isinstance(held, (int, float)) and not isinstance(held, bool) and \
            held != obj["value"] and int(held) == int(obj["value"]):
        return {**obj, "value": held}
    return None


def _string_booleans_read(state, event):
    """Takes ``"replace": "false"`` (a string) as the boolean instead of refusing the event."""
    if isinstance(event, Malformed) and event.path == "$.replace":
        wire = thaw(event.wire)
        if wire.get("replace") in ("true", "false"):
            wire["replace"] = wire["replace"] == "true"
            return parse_event(wire)
    return event


def _delta_on_other_role_applies(state, event, result):
    """Treats an ACTIVITY_DELTA on the id of a user, assistant or tool message as an activity:
    the message becomes an activity holding the patch applied to an empty object."""
    if not isinstance(event, ActivityDelta) or result.fatal is not None:
        return result
    held = state.message(event.message_id)
    if held is None or held.is_activity:
        return result
    outcome = apply_patch("{}", tuple(op for op in event.patch if op.recognised))
    activity = Message(id=held.id, role="activity", activity_type=event.activity_type,
                       content=outcome.result if outcome.ok and
                       (outcome.result or "").startswith("{") else "{}")
    return replace(result, warnings=tuple(
        w for w in result.warnings if w.code != ACTIVITY_DELTA_TARGET_NOT_ACTIVITY),
        state=_with_message(result.state, activity), branch="delta.apply")


def _content_nulls_dropped(state, event, result):
    """Drops members whose value is null from a snapshot's content (EVM-KEEP-NULL-IN-OPEN)."""
    if _is_live_snapshot(state, event) and result.fatal is None:
        m = _held(result.state, event.message_id)
        if m is not None and m.is_activity and m.content and m.content.startswith("{"):
            return replace(result, state=_with_message(result.state, replace(
                m, content=freeze({k: v for k, v in thaw(m.content).items() if v is not None}))))
    return result


def _ms_without_activity_drops(state, event, result):
    """Drops held activity from a MESSAGES_SNAPSHOT that carries messages of other roles but no
    activity (STA-MS-DROP-EXCEPT: such a snapshot leaves activity alone)."""
    if isinstance(event, MessagesSnapshot) and result.fatal is None and event.messages and \
            not any(m.is_activity for m in event.messages):
        return replace(result, state=replace(result.state, messages=tuple(
            m for m in result.state.messages if not m.is_activity)))
    return result


# --- more of the wider surface (issue 20 item 5: RFC 6902 ops, JSON values, malformed members,
# roles, MESSAGES_SNAPSHOT, and the lifecycle of issue 19) ---------------------------------------


def _array_index(parent, token: str):
    """The index a token names in a list (RFC 6901: digits without a leading zero), or None."""
    if isinstance(parent, list) and token.isdigit() and (token == "0" or token[0] != "0"):
        return int(token)
    return None


def _dash_add_before_last(obj, doc):
    """Adds at ``-`` before the last element (``len - 1``) instead of after it (RFC 6901 section
    4: ``-`` names the position past the last element; RFC 6902 4.1)."""
    if obj["op"] != "add" or obj["path"] == "" or _token(obj["path"]) != "-":
        return None
    parent = _parent(doc, obj["path"])
    if not isinstance(parent, list) or not parent:
        return None
    return {**obj, "path": obj["path"][:-1] + str(len(parent) - 1)}


def _array_add_overwrites(obj, doc):
    """Sets an array element on ``add`` (``a[i] = v``) instead of inserting before it (RFC 6902
    4.1: the elements from the index on shift one place)."""
    if obj["op"] != "add" or obj["path"] == "":
        return None
    parent = _parent(doc, obj["path"])
    i = _array_index(parent, _token(obj["path"]))
    return {**obj, "op": "replace"} if i is not None and i < len(parent) else None


def _past_end_appends(obj, doc):
    """Adds at an index past the end of an array by appending (as JavaScript's ``splice``
    clamps) instead of failing (RFC 6902 4.1: the index must not exceed the array's size)."""
    if obj["op"] != "add" or obj["path"] == "":
        return None
    parent = _parent(doc, obj["path"])
    i = _array_index(parent, _token(obj["path"]))
    if i is None or i <= len(parent):
        return None
    return {**obj, "path": obj["path"].rsplit("/", 1)[0] + "/-"}


def _remove_leaves_null(obj, doc):
    """Removes an array element by nulling it (JavaScript's ``delete a[i]`` leaves a hole that
    serialises as null) instead of taking it out (RFC 6902 4.2: the elements after it shift)."""
    if obj["op"] != "remove" or obj["path"] == "":
        return None
    parent = _parent(doc, obj["path"])
    i = _array_index(parent, _token(obj["path"]))
    if i is None or i >= len(parent):
        return None
    return {"op": "replace", "path": obj["path"], "value": None}


def _add_creates_parents(obj, doc):
    """Creates missing parent objects on ``add`` (as ``mkdir -p`` or lodash ``set`` do) instead of
    failing (RFC 6902 4.1: the target's parent must exist)."""
    if obj["op"] != "add" or obj["path"] == "":
        return None
    tokens = obj["path"].split("/")[1:]
    node, built = doc, []
    for depth, raw in enumerate(tokens[:-1]):
        token = unescape(raw)
        if isinstance(node, dict) and token in node:
            node = node[token]
            continue
        if not isinstance(node, dict):
            return None
        built = [{"op": "add", "path": "/" + "/".join(tokens[:d + 1]), "value": {}}
                 for d in range(depth, len(tokens) - 1)]
        break
    return built + [obj] if built else None


def _replace_missing_adds(obj, doc):
    """Carries out ``replace`` of a missing member as ``add`` (a plain ``o[k] = v``) instead of
    failing (RFC 6902 4.3: the target location must exist)."""
    if obj["op"] != "replace" or obj["path"] == "":
        return None
    parent = _parent(doc, obj["path"])
    if isinstance(parent, dict) and _token(obj["path"]) not in parent:
        return {**obj, "op": "add"}
    return None


def _move_into_child(obj, doc):
    """Moves a value into its own child by copying it there and then removing the source, which
    takes the copy with it: the subtree is lost and the patch goes on (RFC 6902 4.4: ``from``
    must not be a proper prefix of ``path``; the operation fails)."""
    if obj["op"] != "move" or not obj["path"].startswith(obj.get("from", "") + "/") or \
            obj.get("from", "") == "":
        return None
    return {"op": "remove", "path": obj["from"]}


def _copy_aliases(state, event):
    """Copies by reference (``o[k] = o[src]``, no deep copy): an operation later in the same
    patch that writes under the copy writes under the source too, and the other way round
    (RFC 6902 4.5: the copy is a value of its own)."""
    if not isinstance(event, ActivityDelta):
        return event
    held = state.message(event.message_id)
    if held is None or not held.is_activity:
        return event
    aliases: list[tuple[str, str]] = []
    ops, changed = [], False
    for op in event.patch:
        ops.append(op)
        obj = thaw(op.raw) if op.recognised else None
        if obj is None:
            continue
        if obj["op"] == "copy" and obj.get("from") and obj["path"]:
            aliases.append((obj["path"], obj["from"]))
            continue
        if obj["op"] not in ("add", "replace", "remove"):
            continue
        for a, b in aliases:
            for mine, other in ((a, b), (b, a)):
                if obj["path"].startswith(mine + "/"):
                    ops.append(PatchOp.of({**obj, "path": other + obj["path"][len(mine):]}))
                    changed = True
    return replace(event, patch=tuple(ops)) if changed else event


def _from_not_unescaped(obj, doc):
    """Unescapes ``path`` but reads ``from`` literally (two code paths, one forgot RFC 6901
    section 4)."""
    if obj["op"] not in ("move", "copy") or "~" not in obj.get("from", ""):
        return None
    return {**obj, "from": obj["from"].replace("~", "~0")}


def _root_as_empty_key(obj, doc):
    """Reads the root pointer ``""`` as the member named ``""`` (a naive ``split('/')`` of it
    yields one empty token): an op on the whole document lands on that member (RFC 6901 section
    5: ``""`` is the whole document)."""
    if obj["path"] != "" or obj["op"] not in ("add", "replace", "remove", "test"):
        return None
    return {**obj, "path": "/"}


def _value_at(doc, pointer: str):
    """``(True, value)`` at an escaped pointer (RFC 6901), ``(False, None)`` when it does not
    resolve."""
    node = doc
    for token in pointer_tokens(pointer):
        if isinstance(node, dict) and token in node:
            node = node[token]
        elif _array_index(node, token) is not None and int(token) < len(node):
            node = node[int(token)]
        else:
            return False, None
    return True, node


def _test_arrays_unordered(obj, doc):
    """Compares arrays in ``test`` as multisets (sorted), so ``[3, 2, 1]`` passes against
    ``[1, 2, 3]`` (RFC 6902 4.6: arrays are equal when their elements are, in order)."""
    if obj["op"] != "test" or not isinstance(obj.get("value"), list):
        return None
    found, held = _value_at(doc, obj["path"])
    if not found or not isinstance(held, list) or held == obj["value"]:
        return None
    key = lambda v: json.dumps(v, sort_keys=True)  # noqa: E731
    same = sorted(map(key, held)) == sorted(map(key, obj["value"]))
    return {**obj, "value": held} if same else None


def _test_missing_is_null(obj, doc):
    """Reads a missing member as null in ``test`` (``o.get(k) == v``), so a test of null on a
    location that does not exist passes (RFC 6902 4.6: the target location must exist)."""
    if obj["op"] != "test" or obj.get("value", 0) is not None:
        return None
    found, _ = _value_at(doc, obj["path"])
    return None if found else []


def _null_removes(obj, doc):
    """Reads an ``add`` or ``replace`` of null as removing the member, as JSON Merge Patch
    (RFC 7396) does; in JSON Patch (RFC 6902 4.1, 4.3) null is a value like any other."""
    if obj["op"] not in ("add", "replace") or obj.get("value", 0) is not None or \
            obj["path"] == "":
        return None
    parent = _parent(doc, obj["path"])
    if not isinstance(parent, dict):
        return None
    return {"op": "remove", "path": obj["path"]} if _token(obj["path"]) in parent else []


def _reparsed(event: Malformed, member: str, value):
    wire = thaw(event.wire)
    wire[member] = value
    return parse_event(wire)


def _string_flag_truthy(state, event):
    """Reads ``replace`` by truthiness (``if (e.replace)``): any non-empty string, ``"false"``
    included, replaces; the event is not refused (ACT-MALFORMED-FATAL)."""
    if isinstance(event, Malformed) and event.path == "$.replace":
        flag = thaw(event.wire).get("replace")
        if isinstance(flag, str):
            return _reparsed(event, "replace", bool(flag))
    return event


def _number_type_coerced(state, event):
    """Coerces a number in ``activityType`` to text (``String(7)``) instead of refusing the
    event (ACT-MALFORMED-FATAL)."""
    if isinstance(event, Malformed) and event.path == "$.activityType":
        value = thaw(event.wire).get("activityType")
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return _reparsed(event, "activityType", str(value))
    return event


def _malformed_patch_tolerated(state, event, reading):
    """Treats a delta whose ``patch`` is not a valid operation list (an object, an op without a
    path that starts with ``/``...) as a patch that does not apply: a warning, the run goes on
    (SNP-MALFORMED-OP, PRC-MALFORMED-FATAL: the run fails)."""
    if isinstance(event, Malformed) and event.name == "ACTIVITY_DELTA" and \
            event.path.startswith("$.patch") and _live_now(state):
        mid = thaw(event.wire).get("messageId")
        return StepResult(state, (Warning(ACTIVITY_PATCH_FAILED, mid if isinstance(mid, str)
                                          else None, "SNP-SURFACE-FAILURE",
                                          f"{event.path}: {event.reason}", "delta.patch-failed"),),
                          None, "delta.patch-failed")
    return step(state, event, reading)


def _array_content_accepted(state, event):
    """Accepts an array as a snapshot's content (``typeof c === "object"`` holds for arrays)
    instead of refusing the event (SCH-ACTIVITY-MESSAGE: content is an object)."""
    if isinstance(event, Malformed) and event.path == "$.content":
        content = thaw(event.wire).get("content")
        if isinstance(content, list):
            return replace(_reparsed(event, "content", {}), content=freeze(content))
    return event


def _text_start_replaces_activity(state, event, result):
    """Opens a text message on an activity's id by overwriting the activity (``byId[id] =
    {role, content: ""}``) instead of skipping the event (TXT-TARGET-ACTIVITY)."""
    if isinstance(event, TextMessageStart) and result.fatal is None and not state.halted:
        held = _held(state, event.message_id)
        if held is not None and held.is_activity:
            opened = Message(id=held.id, role=event.role, content='""',
                             owner=event.subagent_run_id)
            return StepResult(_with_message(state, opened).but(
                open_texts=state.open_texts | {held.id}), (), None, "passthrough.accept")
    return result


def _ms_drops_system(state, event, result):
    """Leaves the system messages of a MESSAGES_SNAPSHOT out (as not meant for display) instead
    of holding every message it lists (STA-MS-COMPLETE)."""
    if isinstance(event, MessagesSnapshot) and result.fatal is None and \
            any(m.role == "system" for m in event.messages):
        return replace(result, state=result.state.but(messages=tuple(
            m for m in result.state.messages if m.role != "system")))
    return result


def _finish_unopened_accepted(state, event, reading):
    """Takes a STEP_FINISHED for a step that is not open as a no-op instead of failing the run
    (LIF-STEP-FINISH-OPENED, LIF-STEP-REJECT)."""
    if isinstance(event, StepFinished) and _live_now(state) and \
            (event.subagent_run_id, event.step_name) not in state.open_steps:
        return StepResult(state, (), None, "step.track")
    return step(state, event, reading)


def _steps_by_name(state, event, reading):
    """Tracks steps by name alone: a STEP_FINISHED closes the open step of that name whoever
    opened it (SUB-STEP-PER-OWNER: steps are per owner; another owner's is unbalanced)."""
    if isinstance(event, StepFinished) and _live_now(state) and \
            (event.subagent_run_id, event.step_name) not in state.open_steps:
        other = sorted((k for k in state.open_steps if k[1] == event.step_name), key=repr)
        if other:
            return StepResult(state.but(open_steps=state.open_steps - {other[0]}), (), None,
                              "step.track")
    return step(state, event, reading)


def _open_steps_forgotten(state, event, reading):
    """Checks texts, tool calls and invocations at RUN_FINISHED but not steps, so a run finishes
    with a step still open (LIF-STEP-CLOSE-BEFORE-FINISH)."""
    if isinstance(event, RunFinished) and _live_now(state) and state.open_steps:
        result = step(state.but(open_steps=frozenset()), event, reading)
        return result if result.fatal is not None else \
            replace(result, state=result.state.but(open_steps=frozenset()))
    return step(state, event, reading)


def _open_tools_forgotten(state, event, reading):
    """Checks text messages at RUN_FINISHED but not tool calls, so a run finishes with a tool
    call still open (LIF-CLOSE-BEFORE-FINISH)."""
    if isinstance(event, RunFinished) and _live_now(state) and state.open_tools:
        return step(state.but(open_tools=()), event, reading)
    return step(state, event, reading)


def _unannounced_parent_fatal(state, event, reading):
    """Fails the run when a SUBAGENT_STARTED names a parent invocation it never saw announced:
    the parent-announcement rule is the producer's duty (SUB-PARENT-ANNOUNCED); the consumer
    accepts such an invocation (SUB-ACCEPT-UNANNOUNCED)."""
    if isinstance(event, SubagentStarted) and _live_now(state) and \
            event.parent_subagent_run_id is not None and \
            event.parent_subagent_run_id not in state.subagents | state.ended:
        return StepResult(state.but(halted=True), (), Fatal(
            "PARENT_NOT_ANNOUNCED", "SUB-ACCEPT-UNANNOUNCED",
            f"parent {event.parent_subagent_run_id} never announced", branch="subagent.track"),
            "subagent.track")
    return step(state, event, reading)


def _unknown_role_drops_event(state, event, reading):
    """Drops a TEXT_MESSAGE_START whose role it does not know, the whole event, instead of
    stripping the member and opening the message with the default role (PRC-STRIP-POSITION,
    PRC-DROP-STRIP)."""
    if isinstance(event, TextMessageStart) and _live_now(state) and \
            any(n.startswith("$.role") for n in event.notices):
        return StepResult(state, (Warning(UNKNOWN_EVENT_DROPPED, event.message_id,
                                          "PRC-DROP-STRIP", "role not described; event dropped",
                                          "unrecognised.drop"),), None, "unrecognised.drop")
    return step(state, event, reading)


# --- mistakes the widened generation shows (index edges, open operations, precision) ---------

def _array_slot(doc, pointer: str):
    """``(array, index)`` when ``pointer`` names a slot of an array in ``doc`` by a plain decimal
    index (no leading zero), else None."""
    if "/" not in pointer:
        return None
    node = _parent(doc, pointer)
    i = _array_index(node, _token(pointer))
    return None if i is None else (node, i)


def _replace_at_length_appends(obj, doc):
    """Reads array slots as JavaScript does: ``arr[i] = v`` with ``i`` equal to the length
    appends, so a replace there adds (RFC 6902 4.3: the target must exist, so the patch fails:
    SNP-ATOMIC). The index is read against the content as held (the first operation of a patch,
    or one that no earlier operation reshaped)."""
    if obj["op"] != "replace":
        return None
    slot = _array_slot(doc, obj["path"])
    if slot is None or slot[1] != len(slot[0]):
        return None
    return {**obj, "op": "add"}


def _open_member_fatal(state, event, reading):
    """Validates patch operations against a closed schema (``additionalProperties: false``): an
    operation carrying a member RFC 6902 does not define fails the run as malformed, where the
    draft keeps operations open (SNP-OPEN-OPS, PRC-KEEP-OPEN: such a member is legal and never
    stripped)."""
    if isinstance(event, ActivityDelta) and _live_now(state) and \
            any(op.recognised and set(thaw(op.raw)) - RFC6902_MEMBERS for op in event.patch):
        return StepResult(replace(state, halted=True), (), Fatal(
            MALFORMED_ACTIVITY_EVENT, "SNP-MALFORMED-OP", "an operation carries an undefined "
            "member", branch="malformed.fatal"), "malformed.fatal")
    return step(state, event, reading)


def _fourteen_digits(value):
    if isinstance(value, float):
        return float(f"{value:.14g}")
    if isinstance(value, list):
        return [_fourteen_digits(v) for v in value]
    if isinstance(value, dict):
        return {k: _fourteen_digits(v) for k, v in value.items()}
    return value


def _numbers_rounded(state, event, result):
    """Keeps an activity's numbers to 14 significant digits whenever a snapshot or delta writes
    its content (PHP's json_encode before 7.1 and lua-cjson's default precision): 0.1 + 0.2
    reads back as 0.3 (SNP-CURRENT-VALUE: the value is the snapshot, or the RFC 6902 result,
    exactly)."""
    if not isinstance(event, (ActivitySnapshot, ActivityDelta)) or result.fatal is not None:
        return result
    m = _held(result.state, event.message_id)
    if m is None or not m.is_activity or "." not in m.content and "e" not in m.content:
        return result
    rounded = freeze(_fourteen_digits(thaw(m.content)))
    if rounded == m.content:
        return result
    return replace(result, state=_with_message(result.state, replace(m, content=rounded)))


# --- the blind red team's: mistakes written from the draft alone, each a hole it showed ---

def _negative_index_read(obj, doc):
    """Parses an array index with ``int()`` and indexes as Python does, so ``-1`` names the last
    element (RFC 6901 section 4: an index is digits only; ``-1`` resolves to nothing and the
    operation fails: SNP-ATOMIC)."""
    pointer = obj.get("path", "")
    if obj["op"] not in ("replace", "remove", "test") or "/" not in pointer:
        return None
    parent, token = _parent(doc, pointer), _token(pointer)
    if not isinstance(parent, list) or not token.startswith("-") or not token[1:].isdigit():
        return None
    i = len(parent) - int(token[1:])
    if not 0 <= i < len(parent):
        return None
    return {**obj, "path": pointer.rsplit("/", 1)[0] + f"/{i}"}


def _remove_pops_last(obj, doc):
    """Removes an array element with ``list.pop()`` and no index: the last element goes, whatever
    the index named (RFC 6902 4.2)."""
    if obj["op"] != "remove":
        return None
    slot = _array_slot(doc, obj["path"])
    if slot is None or slot[1] == len(slot[0]) - 1:
        return None
    return {**obj, "path": obj["path"].rsplit("/", 1)[0] + f"/{len(slot[0]) - 1}"}


def _move_prefix_by_string(obj, doc):
    """Refuses a move whose ``path`` starts with its ``from`` as a string (``/n`` to ``/nx``),
    where RFC 6902 4.4 refuses only a proper prefix by reference token (a move into a child).
    Carried out as the move into a child it takes it for, which fails the patch."""
    if obj["op"] != "move":
        return None
    src, dst = obj["from"], obj["path"]
    if src == "" or dst == src or not dst.startswith(src) or dst.startswith(src + "/"):
        return None
    return {**obj, "path": src + "/x"}


def _move_adds_first(obj, doc):
    """Moves between two slots of one array by adding at the target before removing the source,
    so the source index names the wrong element once the insertion shifts it (RFC 6902 4.4: the
    source is removed first)."""
    if obj["op"] != "move":
        return None
    src, dst = _array_slot(doc, obj["from"]), _array_slot(doc, obj["path"])
    if src is None or dst is None or src[0] is not dst[0] or dst[1] == src[1]:
        return None
    return [{"op": "copy", "from": obj["from"], "path": obj["path"]},
            {"op": "remove", "path": obj["from"]}]


def _reserved_key_dropped(state, event, result):
    """Drops the metadata key ``ag-ui`` from the activity an event merges into, reading the
    reservation as the consumer's to enforce (it is by convention only: MET-RESERVED-KEY; no key
    is ever stripped, MET-KEEP-UNKNOWN)."""
    if not isinstance(event, (ActivitySnapshot, ActivityDelta)) or result.fatal is not None:
        return result
    m = result.state.message(event.message_id)
    if m is None or not m.is_activity or m.metadata is None or '"ag-ui"' not in m.metadata:
        return result
    meta = {k: v for k, v in thaw(m.metadata).items() if k != "ag-ui"}
    return replace(result, state=_with_message(result.state, m.but(metadata=freeze(meta))))


def _strip_recurses_into_open(state, event):
    """Strips undescribed members at every depth: the strip pass that rightly removes an
    undescribed member of a closed event object recurses into the open objects it carries, so
    an activity event's content and metadata lose every member (no schema describes any of them;
    PRC-KEEP-OPEN keeps them, as SNP-OPEN-OPS keeps a patch operation's extra members)."""
    if isinstance(event, ActivitySnapshot):
        return replace(event, content=freeze({}),
                       metadata=None if event.metadata is None else freeze({}))
    if isinstance(event, ActivityDelta) and event.metadata is not None:
        return replace(event, metadata=freeze({}))
    return event


def _ms_drops_reasoning(state, event, result):
    """Applies the exception for client-only material to activity alone: held reasoning messages
    a MESSAGES_SNAPSHOT leaves out are dropped (STA-MS-DROP-EXCEPT names both roles)."""
    if not isinstance(event, MessagesSnapshot) or result.fatal is not None:
        return result
    listed = {m.id for m in event.messages}
    kept = tuple(m for m in result.state.messages if m.role != "reasoning" or m.id in listed)
    return result if len(kept) == len(result.state.messages) else \
        replace(result, state=result.state.but(messages=kept))


def _ms_revokes_across_roles(state, event, result):
    """Revokes the exception for both client-only roles when a MESSAGES_SNAPSHOT carries either
    (STA-MS-SELF-REVOKE: the revocation is per role): a snapshot with a reasoning message drops
    the held activity it leaves out."""
    if not isinstance(event, MessagesSnapshot) or result.fatal is not None or \
            not any(m.role in ("activity", "reasoning") for m in event.messages):
        return result
    listed = {m.id for m in event.messages}
    kept = tuple(m for m in result.state.messages
                 if m.id in listed or m.role not in ("activity", "reasoning"))
    return result if len(kept) == len(result.state.messages) else \
        replace(result, state=result.state.but(messages=kept))


def _subagent_end_closes_open(state, event, result):
    """Closes every open text message and tool call when any invocation ends (SUB-INTERLEAVE: a
    consumer does not close one invocation's entities because another ended)."""
    if not isinstance(event, (SubagentFinished, SubagentError)) or result.fatal is not None or \
            not (result.state.open_texts or result.state.open_tools):
        return result
    return replace(result, state=result.state.but(open_texts=frozenset(), open_tools=()))


def _state_snapshot_merges(state, event, result):
    """Merges a STATE_SNAPSHOT's object into the state key by key (SNP-REPLACE: a snapshot
    replaces, no merging)."""
    if not isinstance(event, StateSnapshot) or result.fatal is not None or not _live_now(state):
        return result
    held, new = thaw(state.state), thaw(event.snapshot)
    if not isinstance(held, dict) or not isinstance(new, dict):
        return result
    return replace(result, state=result.state.but(state=freeze({**held, **new})))


def _subagent_state_withheld(state, event, reading):
    """Reads a state event's ``subagentRunId`` as the subagent owning a private state and leaves
    the run's state alone (state is run-scoped: the update is the run's, SNP-CURRENT-VALUE)."""
    if isinstance(event, (StateSnapshot, StateDelta)) and event.subagent_run_id is not None \
            and _live_now(state):
        return StepResult(state, (), None, "state.snapshot" if isinstance(event, StateSnapshot)
                          else "state.delta")
    return step(state, event, reading)


def _m(name: str, clause: str, description: str, step_fn: StepFn = step,
       run_input_fn=run_input, case: str = "", reading: Reading = DRAFT,
       features: tuple[str, ...] = ()) -> Consumer:
    return Consumer(name, step_fn, run_input_fn, clause, description, case, reading, features)


MUTANTS: tuple[Consumer, ...] = (
    _m("absent-replace-as-false", "ACT-SNAP-REPLACE-DEFAULT",
       "reads an absent replace as false", _pre(_absent_replace_as_false), case="FC-11"),
    _m("replace-false-merges", "ACT-SNAP-NO-MERGE",
       "merges a replace:false snapshot's content into the held content",
       _post(_replace_false_merges)),
    _m("replace-false-overwrites", "ACT-SNAP-REPLACE-FALSE",
       "replaces on replace:false too", _pre(_replace_false_overwrites)),
    _m("owner-not-reminted", "ACT-ATTR-REMINT",
       "keeps the old owner after a replacing snapshot", _post(_owner_not_reminted), case="FC-10"),
    _m("owner-reminted-on-false", "ACT-ATTR-KEEP",
       "takes a replace:false snapshot's attribution as the new owner",
       _post(_owner_reminted_on_false)),
    _m("metadata-reset-on-replace", "ACT-SNAP-KEEP-METADATA",
       "resets accumulated metadata to the replacing snapshot's", _post(_metadata_reset_on_replace)),
    _m("metadata-merged-recursively", "MET-NO-RECURSE",
       "merges metadata objects recursively", _post(_metadata_recursive)),
    _m("metadata-ignored-on-delta", "MET-MERGE",
       "never merges a delta's metadata", _post(_metadata_ignored_on_delta)),
    _m("delta-missing-fatal", "ACT-DELTA-MISSING-NOFAIL",
       "fails the run on a delta for a missing or non-activity message",
       _post(_delta_missing_fatal)),
    _m("delta-missing-silent", "ACT-DELTA-MISSING-WARN",
       "skips a delta for a missing message without a warning",
       _post(_drop_codes(ACTIVITY_DELTA_TARGET_MISSING, ACTIVITY_DELTA_TARGET_NOT_ACTIVITY)),
       case="FC-23"),
    _m("partial-patch-kept", "SNP-NO-PARTIAL",
       "keeps the operations that applied before the failing one", _partial_patch_kept),
    _m("patch-failure-silent", "SNP-SURFACE-FAILURE",
       "skips a patch that does not apply without a warning",
       _post(_drop_codes(ACTIVITY_PATCH_FAILED))),
    _m("patch-failure-fatal", "ACT-TOLERATED",
       "fails the run on a patch that does not apply (behaves as Q13=fatal)",
       _behaves_as(q13="fatal"), case="FC-09"),
    _m("unknown-type-dropped", "ACT-TYPE-OPEN",
       "silently drops activity of a type it does not know", _unknown_type_dropped, case="FC-19"),
    _m("unknown-op-fatal", "SNP-UNKNOWN-OP",
       "fails the run on an op RFC 6902 does not define", _unknown_op_fatal),
    _m("unknown-op-silent", "SNP-UNKNOWN-OP",
       "drops an unrecognised op without a warning",
       _post(_drop_codes(UNKNOWN_PATCH_OP_DROPPED))),
    _m("activity-in-run-input", "ACT-STRIP-RUNINPUT",
       "sends activity messages back in run input", step, _activity_in_run_input, case="FC-14"),
    _m("test-loose-equality", "SNP-TEST-FAIL",
       "compares test values with Python equality (1 equals true)", _pre(_test_loose_equality)),
    _m("ms-drops-held-activity", "STA-MS-DROP-EXCEPT",
       "drops held activity that a MESSAGES_SNAPSHOT does not carry",
       _post(_ms_drops_held_activity), case="FC-06"),
    _m("ms-keeps-stale-activity", "STA-MS-IN-PLACE",
       "keeps its own copy of an activity a MESSAGES_SNAPSHOT restates",
       _post(_ms_keeps_stale_activity), case="FC-02"),
    _m("ms-reorders", "STA-MS-IN-PLACE",
       "reorders held messages into the snapshot's order", _post(_ms_reorders)),
    _m("snapshot-appends-duplicate", "ACT-SNAP-REPLACE",
       "appends a second message for a replacing snapshot", _post(_snapshot_appends_duplicate),
       case="FC-21"),
    _m("text-into-activity", "TXT-TARGET-ACTIVITY",
       "streams text into an activity message's content", _post(_text_into_activity),
       case="FC-01"),
    _m("delta-ignores-retype", "ACT-DELTA-RETYPE",
       "keeps the activity type a delta changes", _post(_delta_ignores_retype)),
    _m("untagged-delta-rejected", "SUB-ACCEPT-UNTAGGED",
       "rejects an untagged delta on a subagent's activity", _untagged_delta_rejected),
    _m("unknown-event-fatal", "PRC-UNKNOWN-NOT-FATAL",
       "fails the run on an event type it does not know",
       _fatal_on(Unrecognised, "PRC-UNKNOWN-NOT-FATAL", "unrecognised.drop")),
    _m("malformed-ignored", "PRC-MALFORMED-FATAL",
       "ignores a malformed event instead of failing", _malformed_ignored, case="FC-22"),
    _m("metadata-nulls-dropped", "EVM-KEEP-NULL-IN-OPEN",
       "drops null values from metadata", _post(_metadata_nulls_dropped)),
    _m("snapshot-creates-at-start", "ACT-SNAP-CREATE",
       "puts a new activity first instead of at its point of arrival",
       _post(_snapshot_creates_at_start), case="FC-17"),
    _m("run-error-drops-activity", "LIF-FAILED-KEEPS",
       "clears activity when the run errors", _post(_run_error_drops_activity)),
    _m("after-close-accepted", "LIF-AFTER-CLOSE",
       "applies activity events that arrive after RUN_FINISHED", _after_close_accepted),
    _m("content-double-encoded", "SCH-ACTIVITY-MESSAGE",
       "stores a snapshot's content as its JSON text (a string)", _pre(_content_double_encoded)),
    _m("run-input-drops-assistant", "ACT-STRIP-RUNINPUT",
       "strips assistant messages from run input along with activity", step,
       _run_input_drops_assistant),
    _m("delta-remints-owner", "SUB-OWNER-AGREE",
       "lets a tagged delta take the activity over (under Q4=accept, where such a delta "
       "applies; under draft it is refused first)", _post(_delta_remints_owner),
       reading=DRAFT.with_(Q4="accept")),
    _m("mismatch-applied", "SUB-REJECT-MISMATCH",
       "applies a delta whose tag disagrees with the opener (behaves as Q4=accept)",
       _behaves_as(q4="accept")),
    _m("strip-silently", "PRC-DROP-STRIP",
       "strips undescribed members without a warning", _post(_strip_silently)),
    _m("ms-new-first", "STA-MS-APPEND",
       "puts messages met first in MESSAGES_SNAPSHOT before the held ones", _post(_ms_new_first)),
    _m("ms-never-revokes", "STA-MS-SELF-REVOKE",
       "keeps held activity a MESSAGES_SNAPSHOT carrying activity leaves out (behaves as Q8=keep)",
       _behaves_as(q8="keep"), case="FC-03"),
    _m("raw-event-used", "EVM-NO-RAWEVENT",
       "takes a snapshot's content from rawEvent when there is one", _pre(_raw_event_used)),
    _m("ids-matched-by-prefix", "EVM-OPAQUE-ID",
       "matches activities by the id's prefix", _ids_matched_by_prefix),
    _m("crashes-on-empty-patch", "PRC-UNKNOWN-NOT-FATAL",
       "raises on an empty patch (reads its first operation unguarded)", _crashes_on_empty_patch),
    _m("fails-on-replace-false", "ACT-ATTR-TOLERATE",
       "fails the run on every replace:false snapshot for an existing activity",
       _fails_on_replace_false),
    _m("activity-cleared-at-run-end", "LIF-RUN-SCOPED",
       "treats activity as run-scoped and clears it at RUN_FINISHED",
       _post(_activity_cleared_at_run_end)),
    _m("subagent-end-drops-its-activity", "SUB-INTERLEAVE",
       "drops a subagent's activity when the subagent finishes",
       _post(_subagent_end_drops_its_activity)),
    _m("move-as-copy", "SCH-JSON-PATCH",
       "carries out move as copy (the source stays)", _pre(_rewrite_ops(_move_as_copy)),
       features=("op:move:member:-",)),
    _m("copy-as-move", "SCH-JSON-PATCH",
       "carries out copy as move (the source goes)", _pre(_rewrite_ops(_copy_as_move)),
       features=("op:copy:member:-",)),
    _m("pointer-not-unescaped", "SCH-JSON-POINTER",
       "reads ~1 and ~0 in a pointer literally", _pre(_rewrite_ops(_no_unescape)),
       features=("op:replace:escaped:integer",)),
    _m("pointer-unescaped-wrong-order", "SCH-JSON-POINTER",
       "decodes ~0 before ~1, so an escaped tilde turns into a slash",
       _pre(_rewrite_ops(_unescape_wrong_order)),
       features=("op:replace:escaped:integer",)),
    _m("dash-as-last-element", "SCH-JSON-POINTER",
       "reads the '-' index as the last element on remove, replace and test",
       _pre(_rewrite_ops(_dash_as_last)),
       features=("op:remove:dash:-", "op:replace:dash:integer")),
    _m("leading-zero-index-accepted", "SCH-JSON-POINTER",
       "reads an array index with a leading zero (01) as the number",
       _pre(_rewrite_ops(_leading_zero_accepted)),
       features=("op:replace:leading-zero:integer",)),
    _m("root-add-merges", "ACT-DELTA-APPLY",
       "merges an object added at the root pointer into the content instead of replacing it",
       _pre(_rewrite_ops(_root_add_merges)),
       features=("op:add:root:object",)),
    _m("test-numbers-truncated", "SNP-TEST-FAIL",
       "compares numbers in test by their integer part (1.5 equals 1)",
       _pre(_rewrite_ops(_numbers_truncated)),
       features=("op:test:member:integer",)),
    _m("string-replace-flag-read", "ACT-MALFORMED-FATAL",
       'takes "replace": "false" (a string) as false instead of failing the run',
       _pre(_string_booleans_read),
       features=("malformed:ACTIVITY_SNAPSHOT.replace:string",)),
    _m("delta-on-other-role-applies", "ACT-DELTA-MISSING",
       "treats a delta on a user, assistant or tool message's id as an activity",
       _post(_delta_on_other_role_applies),
       features=("role:ACTIVITY_DELTA:user",)),
    _m("content-nulls-dropped", "EVM-KEEP-NULL-IN-OPEN",
       "drops null members from a snapshot's content", _post(_content_nulls_dropped),
       features=("snapshot.create",)),
    _m("ms-without-activity-drops", "STA-MS-DROP-EXCEPT",
       "drops held activity on a MESSAGES_SNAPSHOT that restates other roles but carries no "
       "activity", _post(_ms_without_activity_drops),
       features=("ms:keeps-unlisted",)),
    # issue 20 item 5: one mistake per surface feature the generators now draw
    _m("dash-add-before-last", "SCH-JSON-POINTER",
       "adds at the '-' index before the last element instead of after it",
       _pre(_rewrite_ops(_dash_add_before_last)), features=("op:add:dash:integer",)),
    _m("array-add-overwrites", "SCH-JSON-PATCH",
       "overwrites an array element on add instead of inserting before it (RFC 6902 4.1)",
       _pre(_rewrite_ops(_array_add_overwrites)), features=("op:add:index:integer", "op:add:index:object")),
    _m("array-index-past-end-appends", "SNP-ATOMIC",
       "appends on an add past the end of an array (as splice clamps) instead of failing the "
       "patch (RFC 6902 4.1)", _pre(_rewrite_ops(_past_end_appends)),
       features=("op:add:index:integer", "patch:1:fails-first")),
    _m("array-remove-leaves-null", "SCH-JSON-PATCH",
       "removes an array element by nulling it (delete a[i]) instead of taking it out "
       "(RFC 6902 4.2)", _pre(_rewrite_ops(_remove_leaves_null)), features=("op:remove:index:-",)),
    _m("add-creates-missing-parents", "SNP-ATOMIC",
       "creates missing parent objects on add instead of failing the patch (RFC 6902 4.1)",
       _pre(_rewrite_ops(_add_creates_parents)), features=("op:add:nested:integer",)),
    _m("replace-missing-adds", "SNP-ATOMIC",
       "carries out replace of a missing member as add instead of failing the patch "
       "(RFC 6902 4.3)", _pre(_rewrite_ops(_replace_missing_adds)),
       features=("op:replace:member:integer",)),
    _m("move-into-own-child-applied", "SNP-ATOMIC",
       "moves a value into its own child by copy-then-remove, losing the subtree, instead of "
       "failing the patch (RFC 6902 4.4)", _pre(_rewrite_ops(_move_into_child)),
       features=("op:move:nested:-",)),
    _m("copy-aliases-source", "SCH-JSON-PATCH",
       "copies by reference, so a later write under the copy in the same patch changes the "
       "source too (RFC 6902 4.5)", _pre(_copy_aliases), features=("op:copy:member:-",)),
    _m("from-pointer-not-unescaped", "SCH-JSON-POINTER",
       "unescapes ~0 and ~1 in path but not in the from of move and copy (RFC 6901 section 4)",
       _pre(_rewrite_ops(_from_not_unescaped)), features=("op:move:escaped:-",)),
    _m("root-pointer-as-empty-key", "SCH-JSON-POINTER",
       "reads the root pointer \"\" as the member named \"\" (RFC 6901 section 5)",
       _pre(_rewrite_ops(_root_as_empty_key)), features=("op:add:root:object",)),
    _m("test-arrays-unordered", "SNP-TEST-FAIL",
       "compares arrays in test regardless of order (RFC 6902 4.6)",
       _pre(_rewrite_ops(_test_arrays_unordered)), features=("op:test:member:array",)),
    _m("test-missing-equals-null", "SNP-TEST-FAIL",
       "passes a test of null on a location that does not exist (RFC 6902 4.6)",
       _pre(_rewrite_ops(_test_missing_is_null)), features=("op:test:member:null",)),
    _m("null-value-removes-member", "SCH-JSON-PATCH",
       "reads add or replace of null as removing the member (JSON Merge Patch, RFC 7396)",
       _pre(_rewrite_ops(_null_removes)), features=("op:replace:member:null",)),
    _m("string-replace-flag-truthy", "ACT-MALFORMED-FATAL",
       'reads replace by truthiness, so "replace": "false" (a string) replaces',
       _pre(_string_flag_truthy), features=("malformed:ACTIVITY_SNAPSHOT.replace:string",)),
    _m("number-activity-type-coerced", "ACT-MALFORMED-FATAL",
       "coerces a number in activityType to text instead of failing the run",
       _pre(_number_type_coerced),
       features=("malformed:ACTIVITY_DELTA.activityType:number",
                 "malformed:ACTIVITY_SNAPSHOT.activityType:number")),
    _m("malformed-patch-tolerated", "SNP-MALFORMED-OP",
       "treats a malformed patch (an object, a path without a leading '/') as a patch that does "
       "not apply: a warning instead of failing the run", _malformed_patch_tolerated,
       features=("malformed:ACTIVITY_DELTA.patch:object",
                 "malformed:ACTIVITY_DELTA.patch[].path:string")),
    _m("array-content-accepted", "SCH-ACTIVITY-MESSAGE",
       "accepts an array as a snapshot's content (typeof [] is 'object')",
       _pre(_array_content_accepted), features=("malformed:ACTIVITY_SNAPSHOT.content:array",)),
    _m("text-start-replaces-activity", "TXT-TARGET-ACTIVITY",
       "opens a text message on an activity's id by overwriting the activity",
       _post(_text_start_replaces_activity), features=("role:TEXT_MESSAGE_START:activity",)),
    _m("ms-drops-system-messages", "STA-MS-COMPLETE",
       "leaves the system messages of a MESSAGES_SNAPSHOT out", _post(_ms_drops_system),
       features=("ms:history-system",)),
    _m("step-finish-unopened-accepted", "LIF-STEP-FINISH-OPENED",
       "takes a STEP_FINISHED for a step that is not open as a no-op",
       _finish_unopened_accepted, features=("step.unbalanced",)),
    _m("steps-tracked-by-name", "SUB-STEP-PER-OWNER",
       "tracks steps by name alone: another owner's STEP_FINISHED closes the step",
       _steps_by_name, features=("step.unbalanced",)),
    _m("open-step-at-finish-accepted", "LIF-STEP-CLOSE-BEFORE-FINISH",
       "finishes the run with a step still open", _open_steps_forgotten,
       features=("lifecycle.open-at-finish",)),
    _m("open-tool-call-at-finish-accepted", "LIF-CLOSE-BEFORE-FINISH",
       "finishes the run with a tool call still open", _open_tools_forgotten,
       features=("lifecycle.open-at-finish",)),
    _m("unannounced-parent-fatal", "SUB-ACCEPT-UNANNOUNCED",
       "fails the run on a SUBAGENT_STARTED whose parent invocation was never announced",
       _unannounced_parent_fatal, features=("subagent.track",)),
    _m("unknown-role-text-dropped", "PRC-STRIP-POSITION",
       "drops a TEXT_MESSAGE_START with an unrecognised role whole instead of stripping the role",
       _unknown_role_drops_event, features=("member.strip",)),
    _m("in-flight-stream-left-open", "MS-IN-FLIGHT",
       "keeps the stream of a text message a MESSAGES_SNAPSHOT dropped in flight open, so "
       "reopening it fails the run (behaves as X1=drop-open, as @ag-ui/client does)",
       _behaves_as(x1="drop-open"), features=("X1=drop-open", "messages-snapshot.in-flight")),
    # what only the widened generation shows
    _m("replace-at-length-appends", "SNP-ATOMIC",
       "reads array slots as JavaScript does (arr[i] = v): a replace at the index equal to the "
       "length appends instead of failing the patch (RFC 6902 4.3)",
       _pre(_rewrite_ops(_replace_at_length_appends)), features=("op:replace:index:integer",)),
    _m("open-member-fatal", "SNP-OPEN-OPS",
       "validates patch operations against a closed schema: an operation with a member RFC "
       "6902 does not define fails the run", _open_member_fatal, features=("op:open-member",)),
    _m("numbers-rounded-14-digits", "SNP-CURRENT-VALUE",
       "keeps an activity's numbers to 14 significant digits (PHP's old json_encode, "
       "lua-cjson), so 0.1 + 0.2 reads back as 0.3", _post(_numbers_rounded),
       features=("op:add:member:float", "op:replace:member:float")),
    # the blind red team's: written from the draft alone; each showed a hole now closed
    _m("negative-index-read", "SCH-JSON-POINTER",
       "parses an array index with int(), so -1 names the last element instead of failing the "
       "patch (RFC 6901 section 4)", _pre(_rewrite_ops(_negative_index_read, in_turn=True)),
       features=("op:replace:nested:integer",)),
    _m("remove-pops-last", "SCH-JSON-PATCH",
       "removes an array element with pop() and no index: the last one goes (RFC 6902 4.2)",
       _pre(_rewrite_ops(_remove_pops_last, in_turn=True)), features=("op:remove:index:-",)),
    _m("move-prefix-by-string", "SCH-JSON-PATCH",
       "refuses a move whose path starts with its from as a string (/n to /nx) as a move into "
       "a child (RFC 6902 4.4 means a prefix by token)",
       _pre(_rewrite_ops(_move_prefix_by_string, in_turn=True)),
       features=("op:move:member:-",)),
    _m("move-adds-first", "SCH-JSON-PATCH",
       "moves between array slots by adding at the target before removing the source, so the "
       "wrong element goes (RFC 6902 4.4)", _pre(_rewrite_ops(_move_adds_first, in_turn=True)),
       features=("op:move:index:-",)),
    _m("reserved-metadata-key-dropped", "MET-KEEP-UNKNOWN",
       "drops the reserved ag-ui key from an activity's metadata", _post(_reserved_key_dropped)),
    _m("ms-drops-reasoning", "STA-MS-DROP-EXCEPT",
       "drops held reasoning messages a MESSAGES_SNAPSHOT leaves out (the exception read as "
       "activity's alone)", _post(_ms_drops_reasoning)),
    _m("ms-revokes-across-roles", "STA-MS-SELF-REVOKE",
       "revokes the exception for activity too when a MESSAGES_SNAPSHOT carries a reasoning "
       "message", _post(_ms_revokes_across_roles)),
    _m("subagent-end-closes-open", "SUB-INTERLEAVE",
       "closes every open text message and tool call when any invocation ends",
       _post(_subagent_end_closes_open)),
    _m("state-snapshot-merges", "SNP-REPLACE",
       "merges a STATE_SNAPSHOT into the state instead of replacing it",
       _post(_state_snapshot_merges)),
    _m("subagent-state-withheld", "SNP-CURRENT-VALUE",
       "leaves the state alone on a state event a subagent sent (read as its private state)",
       _subagent_state_withheld),
    _m("late-run-error-rejected", "LIF-AFTER-CLOSE",
       "rejects a RUN_ERROR after RUN_FINISHED as an event after close, though a finished run "
       "may still fail late", _post(_late_run_error_rejected)),
    _m("passthrough-event-fatal", "EVX-ACCEPT-FAMILIES",
       "fails the run on a described event it does not interpret (RAW, CUSTOM, a chunk, "
       "reasoning) as if its type were unknown",
       _fatal_on(Passthrough, "EVX-ACCEPT-FAMILIES", "passthrough.accept")),
    _m("strip-recurses-into-open", "PRC-KEEP-OPEN",
       "strips undescribed members inside open objects too, so an activity's content and "
       "metadata lose every member", _pre(_strip_recurses_into_open)),
    _m("ended-owner-delta-applied", "SUB-ENDED-ACTIVITY",
       "keeps applying deltas to an activity whose owning invocation ended in this run, where "
       "the reading closes it (behaves as Q15=live: the invocation's end is never tracked)",
       _behaves_as(q15="live"), reading=DRAFT.with_(Q15="closed")),
    _m("earlier-run-delta-applied", "ACT-RUN-BASELINE",
       "applies a delta in a new run to an activity of an earlier run no snapshot of this run "
       "restated, where the reading gives each run its own baseline (behaves as "
       "Q23=continue)", _behaves_as(q23="continue"), reading=DRAFT.with_(Q23="run-scoped")),
)
"""The zoo: 100 wrong consumers, one mistake each. Four (``mismatch-applied``,
``ms-never-revokes``, ``patch-failure-fatal``, ``in-flight-stream-left-open``) behave as another
reading would: wrong against ``draft``, right under that reading, so they are caught by
properties checked under draft. Three (``delta-missing-silent``, ``strip-silently``,
``unknown-role-text-dropped``) are caught by SHOULD-level properties only. The 38 written for the
draft's wider surface (issue 20), and the three only the widened random patches show (a
replace at an array's length appending, an undefined operation member fatal, numbers kept to 14
digits), name in ``features`` the coverage items they target, as do the four patch mistakes of
the eleven the blind red team wrote from the draft alone (a negative index, ``pop()`` on remove,
a move refused by string prefix, a move that adds first; and a reserved metadata key dropped,
reasoning messages dropped or the activity exception revoked by MESSAGES_SNAPSHOT, open streams
closed when any invocation ends, a merged or a withheld agent state, a late RUN_ERROR
rejected), each the witness of a hole
in the generated surface or the catalogue that is now closed. One (``passthrough-event-fatal``)
verifies the kill of a generated conformance fixture (``conformance generate``,
EVX-ACCEPT-FAMILIES), where no other mutant failed it; one (``strip-recurses-into-open``) does
the same for PRC-KEEP-OPEN, whose fixture no mutant of its own clause failed. Two
(``ended-owner-delta-applied``, ``earlier-run-delta-applied``) are right under draft and wrong
under the reading of their assumption clause (Q15=closed, Q23=run-scoped; their ``reading``),
where they verify the kill of the fixtures ``conformance generate --reading`` ships for
SUB-ENDED-ACTIVITY and ACT-RUN-BASELINE, clauses no consumer can observe under draft; no
property of the catalogue catches them under their reading yet (the delta properties leave a
delta the reading skips unjudged, ``properties.catalogue._skipped_by_reading``), a hole the zoo
benchmark shows."""

MUTANT_BY_NAME = {m.name: m for m in MUTANTS}
