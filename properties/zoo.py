"""Consumers under test, and the zoo: plausible wrong consumers, each one mistake tied to one clause.

A :class:`Consumer` is anything with the step signature ``step(state, event, reading) ->
StepResult`` over :class:`model.consumer.ConsumerState`, plus ``run_input(state)``. The reference
model is :data:`REFERENCE`; real SDKs come in through adapters (a later issue).

Each mutant wraps the reference step and changes one behaviour, the way an implementer who misread
one sentence would. A result a mutant builds itself names the model's branch it departs on
(``StepResult.branch``, and its fatal's), so that its steps are named as the model's are; codes the
model never surfaces (``ACTIVITY_NOT_FOUND``, ``UNKNOWN_EVENT``, ``REPLACE_FALSE_REJECTED``) are
the mutant's own. Several reproduce mistakes from the field cases (``case``). The zoo is the
yardstick of the checking engines: a property catalogue that does not catch a mutant has a hole.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable

from model.codes import (ACTIVITY_DELTA_TARGET_MISSING, ACTIVITY_DELTA_TARGET_NOT_ACTIVITY,
                         ACTIVITY_OWNER_MISMATCH, ACTIVITY_PATCH_FAILED, UNKNOWN_MEMBER_STRIPPED,
                         UNKNOWN_PATCH_OP, UNKNOWN_PATCH_OP_DROPPED)
from model.consumer import ConsumerState, Fatal, StepResult, run_input, step
from model.events import (ActivityDelta, ActivitySnapshot, Event, Malformed, Message,
                          MessagesSnapshot, PatchOp, RunError, RunFinished, SubagentFinished,
                          TextMessageContent, Unrecognised)
from model.json_values import freeze, thaw
from model.patch import apply_patch
from model.wire import parse_event
from model.readings import DRAFT, Reading

__all__ = ["Consumer", "REFERENCE", "MUTANTS", "MUTANT_BY_NAME"]

StepFn = Callable[[ConsumerState, Event, Reading], StepResult]


@dataclass(frozen=True)
class Consumer:
    """A consumer under test.

    Attributes:
        name: short name.
        step: the step function (same signature and state type as :func:`model.consumer.step`).
        run_input: what the consumer sends next, ``run_input(state) -> list of wire messages``.
        clause: for a mutant, the clause its mistake breaks.
        description: the mistake, in words.
        case: the field case the mistake comes from, if any.
        reading: the reading the consumer claims to implement and is checked under.
    """

    name: str
    step: StepFn
    run_input: Callable[[ConsumerState], list] = run_input
    clause: str = ""
    description: str = ""
    case: str = ""
    reading: Reading = DRAFT


REFERENCE = Consumer("reference", step, run_input, description="the model itself")


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


def _is_live_snapshot(state, event) -> bool:
    return isinstance(event, ActivitySnapshot) and not state.halted and state.run == "active"


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
            state.message(event.message_id) is None and state.run == "active" and not state.halted:
        return StepResult(state, branch="snapshot.create")
    return step(state, event, reading)


def _unknown_op_fatal(state, event, reading):
    if isinstance(event, ActivityDelta) and any(not op.recognised for op in event.patch) and \
            state.run == "active" and not state.halted:
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
            event.subagent_run_id is None and state.run == "active" and not state.halted:
        return StepResult(replace(state, halted=True), (), Fatal(
            ACTIVITY_OWNER_MISMATCH, "SUB-ACCEPT-UNTAGGED", message_id=held.id,
            branch="delta.owner-mismatch"), "delta.owner-mismatch")
    return step(state, event, reading)


def _unknown_event_fatal(state, event, reading):
    if isinstance(event, Unrecognised) and not state.halted:
        return StepResult(replace(state, halted=True), (), Fatal(
            "UNKNOWN_EVENT", "PRC-UNKNOWN-NOT-FATAL", branch="unrecognised.drop"),
            "unrecognised.drop")
    return step(state, event, reading)


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
            state.run == "active" and not state.halted:
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

def _rewrite_ops(rewrite: Callable[[dict, object], dict | None]) -> Callable:
    """A pre-step rewrite of each operation of an ACTIVITY_DELTA on a held activity:
    ``rewrite(operation object, thawed held content)`` returns the operation the mistaken
    consumer carries out (None: as sent)."""
    def pre(state, event):
        if not isinstance(event, ActivityDelta):
            return event
        held = state.message(event.message_id)
        if held is None or not held.is_activity:
            return event
        doc = thaw(held.content)
        ops, changed = [], False
        for op in event.patch:
            obj = thaw(op.raw) if op.recognised else None
            new = rewrite(obj, doc) if obj is not None else None
            if new is None:
                ops.append(op)
            else:
                ops.append(PatchOp.of(new))
                changed = True
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


def _parent(doc, pointer: str):
    node = doc
    for token in pointer.split("/")[1:-1]:
        token = token.replace("~1", "/").replace("~0", "~")
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
    token = obj["path"].split("/")[-1].replace("~1", "/").replace("~0", "~")
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


def _m(name: str, clause: str, description: str, step_fn: StepFn = step,
       run_input_fn=run_input, case: str = "", reading: Reading = DRAFT) -> Consumer:
    return Consumer(name, step_fn, run_input_fn, clause, description, case, reading)


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
       "fails the run on an event type it does not know", _unknown_event_fatal),
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
       "carries out move as copy (the source stays)", _pre(_rewrite_ops(_move_as_copy))),
    _m("copy-as-move", "SCH-JSON-PATCH",
       "carries out copy as move (the source goes)", _pre(_rewrite_ops(_copy_as_move))),
    _m("pointer-not-unescaped", "SCH-JSON-POINTER",
       "reads ~1 and ~0 in a pointer literally", _pre(_rewrite_ops(_no_unescape))),
    _m("pointer-unescaped-wrong-order", "SCH-JSON-POINTER",
       "decodes ~0 before ~1, so an escaped tilde turns into a slash",
       _pre(_rewrite_ops(_unescape_wrong_order))),
    _m("dash-as-last-element", "SCH-JSON-POINTER",
       "reads the '-' index as the last element on remove, replace and test",
       _pre(_rewrite_ops(_dash_as_last))),
    _m("leading-zero-index-accepted", "SCH-JSON-POINTER",
       "reads an array index with a leading zero (01) as the number",
       _pre(_rewrite_ops(_leading_zero_accepted))),
    _m("root-add-merges", "ACT-DELTA-APPLY",
       "merges an object added at the root pointer into the content instead of replacing it",
       _pre(_rewrite_ops(_root_add_merges))),
    _m("test-numbers-truncated", "SNP-TEST-FAIL",
       "compares numbers in test by their integer part (1.5 equals 1)",
       _pre(_rewrite_ops(_numbers_truncated))),
    _m("string-replace-flag-read", "ACT-MALFORMED-FATAL",
       'takes "replace": "false" (a string) as false instead of failing the run',
       _pre(_string_booleans_read)),
    _m("delta-on-other-role-applies", "ACT-DELTA-MISSING",
       "treats a delta on a user, assistant or tool message's id as an activity",
       _post(_delta_on_other_role_applies)),
    _m("content-nulls-dropped", "EVM-KEEP-NULL-IN-OPEN",
       "drops null members from a snapshot's content", _post(_content_nulls_dropped)),
    _m("ms-without-activity-drops", "STA-MS-DROP-EXCEPT",
       "drops held activity on a MESSAGES_SNAPSHOT that restates other roles but carries no "
       "activity", _post(_ms_without_activity_drops)),
)
"""The zoo: 56 wrong consumers, one mistake each. Three (``mismatch-applied``,
``ms-never-revokes``, ``patch-failure-fatal``) behave as another reading would: wrong against
``draft``, right under that reading, so they are caught by properties checked under draft. Two
(``delta-missing-silent``, ``strip-silently``) depart from a SHOULD only: caught by SHOULD-level
properties, conformant nonetheless."""

MUTANT_BY_NAME = {m.name: m for m in MUTANTS}
