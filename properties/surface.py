"""The draft's surface: the shapes of input a careful reader of the pages would try, as finite
sets of events (for the Hypothesis strategies, the machines and the peer probes) and as named
*features* (for the coverage report, :mod:`properties.coverage`).

Three dimensions of features, each with its universe declared here:

* **patch operations** (SCH-JSON-PATCH, SCH-JSON-POINTER, RFC 6902 section 4, RFC 6901):
  ``op:<op>:<pointer shape>:<value type>``, e.g. ``op:move:escaped:-`` or
  ``op:test:member:float``; and the patch as a whole, ``patch:<length>:<outcome>`` (how many
  operations, and whether it applies, fails at its first operation, or fails after applying ones:
  SNP-ATOMIC, SNP-NO-PARTIAL);
* **malformed members** (PRC-MALFORMED-FATAL, ACT-MALFORMED-FATAL, SNP-MALFORMED-OP,
  EVM-ABSENT-NOT-NULL): ``malformed:<event>.<member>:<JSON type>``, e.g.
  ``malformed:ACTIVITY_SNAPSHOT.replace:string``. The universe is derived from the wire layer:
  every member of the two activity events given every JSON type (or left out) that
  :func:`model.wire.parse_event` refuses;
* **roles** (EVM-ID-UNIQUE, ACT-DELTA-MISSING, TXT-TARGET-ACTIVITY, STA-MS-DROP-EXCEPT,
  STA-MS-SELF-REVOKE): ``role:<event>:<role the consumer holds at the event's id>``, e.g.
  ``role:ACTIVITY_DELTA:user``, and what a MESSAGES_SNAPSHOT does to the activities held,
  ``ms:<what>`` (``keeps-unlisted`` for one that carries no activity and leaves a local one
  alone).

Values are drawn from :data:`SURFACE_CONTENT` (floats, booleans, nulls at the top level, arrays,
nested objects, keys that need pointer escapes, unicode keys) and :data:`SURFACE_METADATA`
(nested values worth merging: the merge is key by key and not recursive, MET-NO-RECURSE). JSON
numbers are canonical in the model (``1.0`` is ``1``, :mod:`model.json_values`), so a float that
reaches the wire is never integral: ``test`` of a float against an integer compares ``1.5``
with ``1``.
"""
from __future__ import annotations

import json
import re
from functools import lru_cache
from typing import Any, Iterable, Optional

from model.events import (ActivityDelta, ActivitySnapshot, Event, Malformed, MessagesSnapshot,
                          TextMessageContent, TextMessageEnd, TextMessageStart)
from model.json_values import thaw
from model.patch import apply_patch
from model.producer import (UNKNOWN_ROLE_TEXT_START, Belief, ProducerViolation,
                            violations)
from model.readings import DRAFT, Reading
from model.wire import parse_event

__all__ = ["SURFACE_CONTENT", "SURFACE_METADATA", "SURFACE_PATCHES", "HISTORY_WIRE",
           "surface_moves", "surface_adversarial", "role_events", "malformed_wires", "pointer_shape",
           "value_type", "op_features", "patch_feature", "malformed_feature", "role_feature",
           "messages_snapshot_features", "OP_UNIVERSE", "PATCH_UNIVERSE", "MALFORMED_UNIVERSE",
           "ROLE_UNIVERSE", "MS_UNIVERSE", "FEATURE_UNIVERSE", "RFC6902_MEMBERS", "SPECIAL_KEYS",
           "KEY_UNIVERSE", "REF_UNIVERSE", "REFERENCES", "special_key_features",
           "reference_features"]

SURFACE_CONTENT: dict = {
    "n": 1, "f": 1.5, "b": True, "z": None, "s": "x", "list": [1, 2, 3],
    "nest": {"x": {"y": 1}}, "a/b": 1, "m~n": 2, "ключ": "значение", "": 0,
}
"""A content holding every JSON type at the top level (a null too, EVM-KEEP-NULL-IN-OPEN), an
array, a nested object, keys that a pointer must escape (``~1`` for ``/``, ``~0`` for ``~``), a
unicode key and the empty key."""

SPECIAL_KEYS: tuple[str, ...] = ("__proto__", "constructor", "prototype")
"""Member names a JavaScript object treats specially: assigning ``__proto__`` on a plain object
sets its prototype instead of a member, and ``constructor``/``prototype`` are inherited from
every object, so a consumer that builds content by assignment, spread or an ``in`` test loses,
merges away or invents them. In JSON they are ordinary members (content and metadata are open
objects, PRC-KEEP-OPEN, MET-KEEP-UNKNOWN)."""

SURFACE_CONTENTS: tuple[dict, ...] = (SURFACE_CONTENT, {"n": None}, {"list": [], "ключ": {}},
                                      {"p": 0.30000000000000004, "tiny": 5e-324},
                                      {"__proto__": {"x": 1}, "constructor": {"prototype": 2},
                                       "prototype": None})
"""Snapshot contents of the surface moves (besides the vocabulary's); the fourth holds floats
at the edge of double precision (0.1 + 0.2, the smallest subnormal), the last the
:data:`SPECIAL_KEYS` as members, one nested."""

SURFACE_METADATA: tuple[dict, ...] = (
    {"k": {"a": 1}}, {"k": {"b": 2}}, {"k": None}, {"ключ": 1.5, "k": {"a": {"deep": [1]}}},
    {"ag-ui": {"trace": "t-1"}, "k": 0},
    {"__proto__": {"k": 1}, "constructor": "c"},
)
"""Metadata values: two nested objects under one key (a recursive merge keeps both inner keys, the
draft's key-by-key merge keeps the second), a top-level null, a unicode key and a float, and the
key ``ag-ui`` the protocol reserves (reserved by convention only: processing never strips a
metadata key, MET-RESERVED-KEY, MET-KEEP-UNKNOWN), and :data:`SPECIAL_KEYS` as metadata keys."""


def _ops(*ops: dict) -> tuple[dict, ...]:
    return tuple(ops)


SURFACE_PATCHES: tuple[tuple[str, tuple[dict, ...]], ...] = (
    ("move-member", _ops({"op": "move", "from": "/n", "path": "/moved"})),
    ("move-array-element", _ops({"op": "move", "from": "/list/0", "path": "/list/-"})),
    ("move-into-child", _ops({"op": "move", "from": "/nest", "path": "/nest/x/inner"})),
    ("move-missing", _ops({"op": "move", "from": "/missing", "path": "/m"})),
    ("move-to-root", _ops({"op": "move", "from": "/nest", "path": ""})),
    ("copy-member", _ops({"op": "copy", "from": "/nest", "path": "/copied"})),
    ("copy-into-array", _ops({"op": "copy", "from": "/n", "path": "/list/1"})),
    ("copy-missing", _ops({"op": "copy", "from": "/missing", "path": "/c"})),
    ("escaped-slash", _ops({"op": "replace", "path": "/a~1b", "value": 2})),
    ("escaped-tilde", _ops({"op": "replace", "path": "/m~0n", "value": 3})),
    ("escaped-add", _ops({"op": "add", "path": "/p~1q~0r", "value": "new"})),
    ("escaped-remove", _ops({"op": "remove", "path": "/a~1b"})),
    ("escaped-move", _ops({"op": "move", "from": "/m~0n", "path": "/a~1b"})),
    ("empty-key", _ops({"op": "replace", "path": "/", "value": 9})),
    ("dash-append", _ops({"op": "add", "path": "/list/-", "value": 4})),
    ("dash-remove", _ops({"op": "remove", "path": "/list/-"})),
    ("dash-replace", _ops({"op": "replace", "path": "/list/-", "value": 0})),
    ("array-insert", _ops({"op": "add", "path": "/list/1", "value": {"o": 1}})),
    ("array-replace", _ops({"op": "replace", "path": "/list/0", "value": [9]})),
    ("array-remove", _ops({"op": "remove", "path": "/list/2"})),
    ("array-past-end", _ops({"op": "add", "path": "/list/9", "value": 1})),
    ("array-at-end", _ops({"op": "add", "path": "/list/3", "value": 1})),
    ("leading-zero", _ops({"op": "replace", "path": "/list/01", "value": 1})),
    ("leading-zero-add", _ops({"op": "add", "path": "/list/00", "value": 1})),
    ("nested-add", _ops({"op": "add", "path": "/nest/x/z", "value": None})),
    ("nested-missing-parent", _ops({"op": "add", "path": "/nope/x", "value": 1})),
    ("fails-after-three", _ops({"op": "replace", "path": "/n", "value": 2},
                               {"op": "add", "path": "/added", "value": [1.5]},
                               {"op": "remove", "path": "/s"},
                               {"op": "remove", "path": "/missing"})),
    ("test-float-int", _ops({"op": "test", "path": "/f", "value": 1},
                            {"op": "replace", "path": "/f", "value": 2.5})),
    ("test-float", _ops({"op": "test", "path": "/f", "value": 1.5},
                        {"op": "replace", "path": "/f", "value": 2.5})),
    ("test-int-float", _ops({"op": "test", "path": "/n", "value": 1.5},
                            {"op": "replace", "path": "/n", "value": 7})),
    ("test-bool-number", _ops({"op": "test", "path": "/b", "value": 1},
                              {"op": "replace", "path": "/b", "value": False})),
    ("test-number-bool", _ops({"op": "test", "path": "/n", "value": True},
                              {"op": "replace", "path": "/n", "value": 8})),
    ("test-null", _ops({"op": "test", "path": "/z", "value": None},
                       {"op": "replace", "path": "/z", "value": "set"})),
    ("test-object", _ops({"op": "test", "path": "/nest", "value": {"x": {"y": 1}}},
                         {"op": "remove", "path": "/nest/x"})),
    ("test-array-order", _ops({"op": "test", "path": "/list", "value": [3, 2, 1]},
                              {"op": "replace", "path": "/list", "value": []})),
    ("test-unicode", _ops({"op": "test", "path": "/ключ", "value": "значение"},
                          {"op": "add", "path": "/ключ2", "value": "ü"})),
    ("root-add", _ops({"op": "add", "path": "", "value": {"r": 1}})),
    ("root-replace-object", _ops({"op": "replace", "path": "", "value": {"r": 2}})),
    ("root-remove", _ops({"op": "remove", "path": ""})),
    ("root-test", _ops({"op": "test", "path": "", "value": {}})),
    ("root-copy", _ops({"op": "copy", "from": "/nest", "path": ""})),
    ("root-string", _ops({"op": "add", "path": "", "value": "scalar"})),
    ("null-value", _ops({"op": "replace", "path": "/n", "value": None})),
    ("float-value", _ops({"op": "add", "path": "/g", "value": -0.25})),
    ("unknown-op-last", _ops({"op": "replace", "path": "/n", "value": 3},
                             {"op": "merge", "path": "/nest", "value": {}})),
    ("replace-missing", _ops({"op": "replace", "path": "/missing", "value": 1})),
    ("copy-then-write", _ops({"op": "copy", "from": "/nest", "path": "/copied"},
                             {"op": "add", "path": "/copied/x/z", "value": 2})),
    ("test-missing-null", _ops({"op": "test", "path": "/missing", "value": None},
                               {"op": "replace", "path": "/n", "value": 5})),
    ("array-replace-at-length", _ops({"op": "replace", "path": "/list/3", "value": 1})),
    ("array-remove-at-length", _ops({"op": "remove", "path": "/list/3"})),
    ("copy-write-source", _ops({"op": "copy", "from": "/list", "path": "/copied"},
                               {"op": "add", "path": "/list/-", "value": 4})),
    ("open-member", _ops({"op": "replace", "path": "/n", "value": 2, "comment": "why"},
                         {"op": "add", "path": "/o", "value": 1, "x-trace": {"id": 7}})),
    ("float-precision", _ops({"op": "add", "path": "/g", "value": 0.30000000000000004},
                             {"op": "replace", "path": "/f", "value": 4503599627370495.5})),
    # blind red team: shapes a hand-written applier gets wrong that the ones above cannot show
    ("edge-tilde-one", _ops({"op": "add", "path": "/~01", "value": 1})),
    ("edge-negative-index", _ops({"op": "replace", "path": "/list/-1", "value": 0})),
    ("edge-remove-first", _ops({"op": "remove", "path": "/list/0"})),
    ("edge-move-sibling-prefix", _ops({"op": "move", "from": "/n", "path": "/nx"})),
    ("edge-move-array-index", _ops({"op": "move", "from": "/list/0", "path": "/list/1"})),
    ("edge-add-existing", _ops({"op": "add", "path": "/n", "value": 7})),
    # the same on an array the patch makes itself, so that they show on any content held
    ("edge-own-negative-index", _ops({"op": "add", "path": "/e", "value": [1, 2, 3]},
                                     {"op": "replace", "path": "/e/-1", "value": 0})),
    ("edge-own-remove-first", _ops({"op": "add", "path": "/e", "value": [1, 2, 3]},
                                   {"op": "remove", "path": "/e/0"})),
    ("edge-own-move-index", _ops({"op": "add", "path": "/e", "value": [1, 2, 3]},
                                 {"op": "move", "from": "/e/0", "path": "/e/1"})),
)
"""Named patches over :data:`SURFACE_CONTENT`: move and copy (RFC 6902 4.4, 4.5), pointer escapes
(RFC 6901 section 4), the ``-`` index on a write and on a read, array targets, indices with a
leading zero (which do not resolve), a failing operation after three applying ones, ``test`` of a
float against an integer, a boolean against a number, null, objects, arrays and unicode text
(RFC 6902 4.6), root-pointer operations other than replacing with an array, an unrecognised
op after one that applies (SNP-UNKNOWN-OP), a replace of a member that does not exist (RFC 6902
4.3), a write under a copy made earlier in the same patch (the copy is a value of its own, 4.5)
and under its source, a ``test`` of null at a location that does not exist (4.6), a replace and
a remove at the index equal to the array's length (out of range for both: 4.2, 4.3), operations
carrying members RFC 6902 does not define (legal: SNP-OPEN-OPS), floats at the edge of double
precision; and (the blind red team's) ``~01`` (RFC 6901 section 4: ``~1`` is decoded first, so
it names the member ``~1``, not ``/``), a negative index (not an array index: RFC 6901 section
4), a remove of the first array element (the rest shift), a move to a member whose name starts
with the source's (a proper prefix by token only is a move into a child: RFC 6902 4.4), a move
between array indices (the source is removed before the target is added: 4.4) and an add onto
an existing member (it replaces: 4.1), the array ones also on an array the patch adds first.
Which of them apply is decided by the model's patch semantics
(:func:`model.patch.apply_patch`), never here."""

HISTORY_WIRE: tuple[dict, ...] = (
    {"id": "user-1", "role": "user", "content": "hello"},
    {"id": "asst-h", "role": "assistant", "content": "earlier answer"},
    {"id": "tool-h", "role": "tool", "content": "42", "toolCallId": "call-h"},
    {"id": "sys-h", "role": "system", "content": "be brief"},
)
"""Messages of other roles a MESSAGES_SNAPSHOT may restate from the run input's history; their ids
become ids of those roles (EVM-ID-UNIQUE), which the adversarial moves then aim activity events
at."""


# --- events ------------------------------------------------------------------------------------

def _parse(wire: dict) -> Event:
    return parse_event(wire)


def _wire_of(message) -> dict:
    return message.to_wire()


@lru_cache(maxsize=1)
def _history_messages() -> tuple:
    event = _parse({"type": "MESSAGES_SNAPSHOT", "messages": list(HISTORY_WIRE)})
    assert isinstance(event, MessagesSnapshot), event
    return event.messages


def _snapshot_wires(mid: str, atype: str, owner: Optional[str]) -> Iterable[tuple[str, dict]]:
    base = {"type": "ACTIVITY_SNAPSHOT", "messageId": mid, "activityType": atype}
    if owner is not None:
        base["subagentRunId"] = owner
    yield "content", {**base, "content": SURFACE_CONTENT}
    for content in SURFACE_CONTENTS:
        yield "snapshot", {**base, "content": content}
        yield "snapshot", {**base, "content": content, "replace": False}
    for meta in SURFACE_METADATA:
        yield "snapshot", {**base, "content": SURFACE_CONTENT, "metadata": meta}


_FAMILY = {"move": "delta:move-copy", "copy": "delta:move-copy", "escaped": "delta:pointer",
           "empty": "delta:pointer", "dash": "delta:pointer", "leading": "delta:pointer",
           "nested": "delta:pointer", "array": "delta:array", "test": "delta:test",
           "root": "delta:root", "fails": "delta:other", "unknown": "delta:other",
           "null": "delta:other", "float": "delta:other", "replace": "delta:other",
           "edge": "delta:edge"}
"""The sampling kind of each surface patch (by its name's first word): seven kinds, so that the
strategies, which draw a kind first, reach each family as often as a vocabulary kind. ``edge``
holds the shapes a hand-written applier gets wrong at the edges of RFC 6901 and 6902 (the blind
red team's), each of which also belongs to another family."""


def _delta_wires(mid: str, atype: str, owner: Optional[str]) -> Iterable[tuple[str, dict]]:
    base = {"type": "ACTIVITY_DELTA", "messageId": mid, "activityType": atype}
    if owner is not None:
        base["subagentRunId"] = owner
    for name, ops in SURFACE_PATCHES:
        yield _FAMILY.get(name.split("-")[0], "delta:other"), {**base, "patch": list(ops)}
    for meta in SURFACE_METADATA:
        yield "metadata", {**base, "patch": [], "metadata": meta}


_SURFACE_MEMO: dict = {}


def surface_moves(belief: Belief, reading: Reading = DRAFT,
                  activity_ids: tuple[str, ...] = ("act-1", "act-2"),
                  activity_type: str = "PLAN") -> tuple[tuple[str, tuple[Event, ...]], ...]:
    """The conformant surface moves from ``belief``, grouped by kind.

    Args:
        belief: the producer's belief (:class:`model.producer.Belief`).
        reading: the reading the producer's duties are read in (Q2, Q4-opener).
        activity_ids: the ids new surface snapshots may create.
        activity_type: the type of a new surface snapshot.

    Returns:
        ``((kind, events), ...)`` with kinds ``surface:content`` (a snapshot of
        :data:`SURFACE_CONTENT`, the document the surface patches are written against),
        ``surface:snapshot`` (wide contents and metadata, creating or restating), ``surface:delta:<family>`` (:data:`SURFACE_PATCHES` on each held
        activity, in seven families: move-copy, pointer, array, test, root, other, edge), ``surface:metadata`` (empty patches carrying :data:`SURFACE_METADATA`) and
        ``surface:messages`` (MESSAGES_SNAPSHOT restating history of other roles, with no
        activity, so that held activities stay: STA-MS-DROP-EXCEPT; or restating the held ones
        with :data:`SURFACE_CONTENT`), ``surface:messages-reasoning`` (the history with a
        reasoning message: the exception is per role, STA-MS-SELF-REVOKE), ``surface:state``
        (STATE_DELTA of the surface patches), ``surface:state-snapshot`` (STATE_SNAPSHOT, the
        parent's and a subagent's), ``surface:tool`` and ``surface:step``. Every event satisfies
        ``model.producer.violations(belief, event, reading) == ()``; memoised per belief.
    """
    key = ("ok", belief, reading, activity_ids, activity_type)
    hit = _SURFACE_MEMO.get(key)
    if hit is not None:
        return hit
    groups: dict[str, list[Event]] = {}
    if belief.run == "active":
        for kind, event in _surface_candidates(belief, activity_ids, activity_type):
            if not violations(belief, event, reading):
                groups.setdefault(kind, []).append(event)
    out = tuple((k, tuple(v)) for k, v in groups.items())
    if len(_SURFACE_MEMO) > 20000:
        _SURFACE_MEMO.clear()
    _SURFACE_MEMO[key] = out
    return out


@lru_cache(maxsize=4096)
def _activity_candidates(mid: str, atype: str, owner: Optional[str], held: bool,
                         opener: Optional[str]) -> tuple[tuple[str, Event], ...]:
    """The surface snapshots of ``mid`` and, when ``held``, its surface deltas (untagged, and
    tagged with the ``opener`` when it is a subagent): independent of the content held, so
    built once per signature."""
    out = [(f"surface:{k}", _parse(w)) for k, w in _snapshot_wires(mid, atype, owner)]
    if held:
        out.extend((f"surface:{k}", _parse(w)) for k, w in _delta_wires(mid, atype, None))
        if opener is not None:
            out.extend((f"surface:{k}", _parse(w)) for k, w in _delta_wires(mid, atype, opener))
    return tuple(out)


@lru_cache(maxsize=4096)
def _message_of(wire_text: str):
    return _parse({"type": "MESSAGES_SNAPSHOT", "messages": [json.loads(wire_text)]}).messages[0]


def _surface_candidates(belief: Belief, activity_ids, activity_type
                        ) -> Iterable[tuple[str, Event]]:
    """Every surface event worth trying from ``belief`` (conformant or not), with its kind."""
    for mid in activity_ids:
        held = belief.activity(mid)
        if held is None:
            yield from _activity_candidates(mid, activity_type, None, False, None)
        else:
            yield from _activity_candidates(mid, held.activity_type, held.owner, True,
                                            held.opener)
    yield from _other_candidates(belief)
    texts = tuple(_message_of(json.dumps({"id": t, "role": "assistant", "content": "hi"}))
                  for t in belief.texts if t not in belief.open_texts)
    history = _history_messages()
    yield "surface:messages", MessagesSnapshot(messages=history + texts)
    # with a reasoning message: the exception for client-only material is per role, so this one
    # revokes the reasoning exception only and leaves held activity alone (STA-MS-SELF-REVOKE);
    # a later snapshot without it keeps the reasoning message (STA-MS-DROP-EXCEPT)
    yield "surface:messages-reasoning", MessagesSnapshot(
        messages=history + texts + _reasoning_messages())
    if belief.activities:
        restated = tuple(_message_of(json.dumps(dict(
            {"id": mid, "role": "activity", "activityType": a.activity_type,
             "content": SURFACE_CONTENT},
            **({"subagentRunId": a.owner} if a.owner is not None else {}))))
            for mid, a in belief.activities)
        yield "surface:messages", MessagesSnapshot(messages=history + texts + restated)
        yield "surface:messages", MessagesSnapshot(messages=history + texts + restated[:1])


REASONING_WIRE: dict = {"id": "reason-h", "role": "reasoning", "content": "weighing it"}
"""A reasoning message a MESSAGES_SNAPSHOT of the surface may carry (client-only material, like
activity: STA-MS-DROP-EXCEPT, STA-MS-SELF-REVOKE)."""


@lru_cache(maxsize=1)
def _reasoning_messages() -> tuple:
    event = _parse({"type": "MESSAGES_SNAPSHOT", "messages": [REASONING_WIRE]})
    assert isinstance(event, MessagesSnapshot), event
    return event.messages


@lru_cache(maxsize=1)
def _state_events() -> tuple[tuple[str, Event], ...]:
    """STATE_SNAPSHOT of :data:`SURFACE_CONTENT` and of ``{"n": null}`` (a snapshot replaces,
    it does not merge: SNP-REPLACE), each also attributed to the subagent ``sub-1`` (state is
    run-scoped: a subagent's update is the run's), of kind ``surface:state-snapshot`` (a kind of
    their own, so that a search draws two in a row as often as any kind); and STATE_DELTA of
    each surface patch (the agent state takes the same RFC 6902 patches: SNP-ATOMIC,
    STA-PATCHFAIL), and one a subagent sends. A tagged event the producer may not send from its
    belief is left out by :func:`surface_moves`."""
    out = []
    for snapshot in (SURFACE_CONTENT, {"n": None}):
        out.append(("surface:state-snapshot", _parse({"type": "STATE_SNAPSHOT",
                                                      "snapshot": snapshot})))
        out.append(("surface:state-snapshot", _parse({"type": "STATE_SNAPSHOT",
                                                      "snapshot": snapshot,
                                                      "subagentRunId": "sub-1"})))
    out.extend(("surface:state", _parse({"type": "STATE_DELTA", "delta": list(ops)}))
               for _, ops in SURFACE_PATCHES)
    out.append(("surface:state", _parse({"type": "STATE_DELTA", "subagentRunId": "sub-1",
                                         "delta": [{"op": "add", "path": "/n", "value": 3}]})))
    return tuple(out)


def _other_candidates(belief: Belief) -> Iterable[tuple[str, Event]]:
    """Agent state, tool calls and steps (kinds ``surface:state``, ``surface:tool``,
    ``surface:step``): a tool call opened, given arguments, ended and answered, and a step
    opened and finished, as far as the producer's belief tracks them."""
    yield from _state_events()
    open_tools = dict(getattr(belief, "open_tools", ()))
    if "call-1" in open_tools:
        yield "surface:tool", _parse({"type": "TOOL_CALL_ARGS", "toolCallId": "call-1",
                                      "delta": "{\"q\": 1.5}"})
        yield "surface:tool", _parse({"type": "TOOL_CALL_END", "toolCallId": "call-1"})
    else:
        yield "surface:tool", _parse({"type": "TOOL_CALL_START", "toolCallId": "call-1",
                                      "toolCallName": "search"})
        yield "surface:tool", _parse({"type": "TOOL_CALL_RESULT", "messageId": "tool-1",
                                      "toolCallId": "call-1", "content": "done"})
    for name in ("plan",):
        opened = any(n == name for _, n in getattr(belief, "open_steps", ()))
        yield "surface:step", _parse({"type": "STEP_FINISHED" if opened else "STEP_STARTED",
                                      "stepName": name})


def _role_wires(mid: str, activity_type: str, activity: bool) -> tuple[dict, ...]:
    """Events aimed at ``mid``: activity events when it holds another role, text events when it
    is an activity's (EVM-ID-UNIQUE, TXT-TARGET-ACTIVITY)."""
    if activity:
        return ({"type": "TEXT_MESSAGE_START", "messageId": mid, "role": "assistant"},
                {"type": "TEXT_MESSAGE_CONTENT", "messageId": mid, "delta": "x"},
                {"type": "TEXT_MESSAGE_END", "messageId": mid})
    return ({"type": "ACTIVITY_SNAPSHOT", "messageId": mid, "activityType": activity_type,
             "content": {"n": 1}},
            {"type": "ACTIVITY_SNAPSHOT", "messageId": mid, "activityType": activity_type,
             "content": {"n": 1}, "replace": False},
            {"type": "ACTIVITY_DELTA", "messageId": mid, "activityType": activity_type,
             "patch": [{"op": "add", "path": "/n", "value": 1}]},
            {"type": "TEXT_MESSAGE_START", "messageId": mid, "role": "assistant"},
            {"type": "TEXT_MESSAGE_CONTENT", "messageId": mid, "delta": "x"},
            {"type": "TEXT_MESSAGE_END", "messageId": mid})


def role_events(belief: Belief, activity_type: str = "PLAN") -> tuple[Event, ...]:
    """Events aimed at an id of another role than theirs (conformant or not; see
    :func:`surface_adversarial`)."""
    out = []
    for mid in sorted(set(belief.texts) | set(belief.others)):
        out.extend(_parse(w) for w in _role_wires(mid, activity_type, False))
    for mid in sorted({m for m, _ in belief.activities} | set(belief.dropped)):
        out.extend(_parse(w) for w in _role_wires(mid, activity_type, True))
    return tuple(out)


def surface_adversarial(belief: Belief, reading: Reading = DRAFT,
                        activity_ids: tuple[str, ...] = ("act-1", "act-2"),
                        activity_type: str = "PLAN"
                        ) -> tuple[tuple[str, tuple[tuple[Event, ProducerViolation], ...]], ...]:
    """Non-conformant surface moves from ``belief``, each labelled with the clause it breaks.

    Returns:
        ``((kind, ((event, violation), ...)), ...)`` with kinds ``surface:malformed`` (every
        member of the activity events given a JSON type the wire refuses, :func:`malformed_wires`:
        PRC-MALFORMED-FATAL, SCH-* and EVM-ABSENT-NOT-NULL), ``surface:role`` (ACTIVITY_SNAPSHOT
        and ACTIVITY_DELTA aimed at the id of a user, assistant, tool or system message the
        producer stated, or of a text it opened, and text events aimed at an activity's id:
        EVM-ID-UNIQUE, :func:`role_events`), ``surface:stripped`` (a TEXT_MESSAGE_START with a
        role the draft does not define, which the wire strips: PRC-STRIP-POSITION) and
        ``surface:bad-delta`` (the
        surface patches and snapshots that break a clause, e.g. a root op leaving a non-object:
        ACT-DELTA-OBJECT). An event breaking two clauses appears twice.
    """
    key = ("bad", belief, reading, activity_ids, activity_type)
    hit = _SURFACE_MEMO.get(key)
    if hit is not None:
        return hit
    groups: dict[str, list] = {}

    def add(kind: str, event: Event) -> None:
        for v in violations(belief, event, reading):
            groups.setdefault(kind, []).append((event, v))

    for event in _malformed_events():
        add("surface:malformed", event)
    if belief.run == "active":
        if UNKNOWN_ROLE_TEXT_START.message_id not in belief.texts:
            add("surface:stripped", UNKNOWN_ROLE_TEXT_START)
        for event in role_events(belief, activity_type):
            add("surface:role", event)
        for _, event in _surface_candidates(belief, activity_ids, activity_type):
            add("surface:bad-delta", event)
    out = tuple((k, tuple(v)) for k, v in groups.items())
    if len(_SURFACE_MEMO) > 20000:
        _SURFACE_MEMO.clear()
    _SURFACE_MEMO[key] = out
    return out


@lru_cache(maxsize=1)
def _malformed_events() -> tuple[Event, ...]:
    return tuple(_parse(w) for _, _, w in malformed_wires())


# --- malformed members -------------------------------------------------------------------------

_JSON_SAMPLES: tuple[tuple[str, Any], ...] = (
    ("null", None), ("boolean", False), ("number", 7), ("string", "false"),
    ("array", [1]), ("object", {"op": "replace"}),
)
"""One value of each JSON type (``"false"`` as the string: the classic ``"replace": "false"``)."""

_MEMBERS: tuple[tuple[str, dict, tuple[str, ...]], ...] = (
    ("ACTIVITY_SNAPSHOT",
     {"type": "ACTIVITY_SNAPSHOT", "messageId": "act-1", "activityType": "PLAN",
      "content": {"n": 0}},
     ("messageId", "activityType", "content", "replace", "subagentRunId", "metadata")),
    ("ACTIVITY_DELTA",
     {"type": "ACTIVITY_DELTA", "messageId": "act-1", "activityType": "PLAN",
      "patch": [{"op": "copy", "from": "/n", "path": "/m"}]},
     ("messageId", "activityType", "patch", "patch[].op", "patch[].path", "patch[].from",
      "subagentRunId", "metadata")),
    ("ACTIVITY_DELTA",
     {"type": "ACTIVITY_DELTA", "messageId": "act-1", "activityType": "PLAN",
      "patch": [{"op": "add", "path": "/m", "value": 1}]},
     ("patch[].value",)),
)


def _set_member(base: dict, member: str, value: Any, absent: bool) -> dict:
    wire = json.loads(json.dumps(base))
    if member.startswith("patch[]."):
        target, name = wire["patch"][0], member[len("patch[]."):]
    else:
        target, name = wire, member
    if absent:
        target.pop(name, None)
    else:
        target[name] = value
    return wire


@lru_cache(maxsize=1)
def malformed_wires() -> tuple[tuple[str, str, dict], ...]:
    """``((event.member, JSON type, wire), ...)``: each member of ACTIVITY_SNAPSHOT and
    ACTIVITY_DELTA (``patch[].op`` for a patch operation's) given a value of each JSON type, or
    left out (``absent``), where :func:`model.wire.parse_event` refuses the event (a
    :class:`~model.events.Malformed`), named as :func:`malformed_feature` names the refused event
    (by the member the wire refused: ``patch: [1]`` is refused at ``patch[]``), once each.
    Derived from the wire layer, so it is the malformed universe of the coverage report."""
    out, seen = [], set()
    for event_name, base, members in _MEMBERS:
        for member in members:
            for type_name, value in _JSON_SAMPLES + (("absent", None),):
                wire = _set_member(base, member, value, type_name == "absent")
                event = parse_event(wire)
                feature = malformed_feature(event) if isinstance(event, Malformed) else None
                if feature and feature not in seen:  # named by where the wire refused it
                    seen.add(feature)
                    _, where, kind = feature.split(":")
                    out.append((where, kind, wire))
    return tuple(out)


# --- features ----------------------------------------------------------------------------------

POINTER_SHAPES = ("root", "member", "nested", "index", "dash", "leading-zero", "escaped")
VALUE_TYPES = ("null", "boolean", "integer", "float", "string", "array", "object")
VALUE_OPS = ("add", "replace", "test")
PLAIN_OPS = ("remove", "move", "copy")
_LEADING_ZERO = re.compile(r"^0[0-9]+$")


def pointer_shape(pointer: str) -> str:
    """The shape of a JSON Pointer (RFC 6901): ``root`` (``""``), ``dash`` (last token ``-``),
    ``leading-zero`` (a numeric token with a leading zero), ``escaped`` (``~0`` or ``~1``),
    ``index`` (a numeric token), ``nested`` (two tokens or more), else ``member``."""
    if pointer == "":
        return "root"
    tokens = pointer.split("/")[1:]
    if tokens[-1] == "-":
        return "dash"
    if any(_LEADING_ZERO.match(t) for t in tokens):
        return "leading-zero"
    if "~" in pointer:
        return "escaped"
    if any(t.isdigit() for t in tokens):
        return "index"
    return "nested" if len(tokens) > 1 else "member"


def value_type(value: Any) -> str:
    """The JSON type of a value, integers and floats apart (one of :data:`VALUE_TYPES`)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "float"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


OP_UNIVERSE: tuple[str, ...] = tuple(
    [f"op:{op}:{shape}:{vt}" for op in VALUE_OPS for shape in POINTER_SHAPES for vt in VALUE_TYPES]
    + [f"op:{op}:{shape}:-" for op in PLAIN_OPS for shape in POINTER_SHAPES]
    + ["op:unknown", "op:open-member"])
"""Every patch-operation feature: op x pointer shape (of ``path``) x value type; an unrecognised
op; and ``op:open-member``, a recognised operation carrying a member RFC 6902 does not define
(legal, kept whole: SNP-OPEN-OPS, PRC-KEEP-OPEN)."""

RFC6902_MEMBERS = frozenset(("op", "path", "from", "value"))
"""The members RFC 6902 defines for an operation (section 4); any other is an open member
(SNP-OPEN-OPS, PRC-KEEP-OPEN)."""

PATCH_OUTCOMES = ("applies", "fails-first", "fails-after-applying", "non-object")
PATCH_UNIVERSE: tuple[str, ...] = tuple(
    ["patch:0:applies"] + [f"patch:{n}:{o}" for n in ("1", "2", "3+") for o in PATCH_OUTCOMES
                           if not (n == "1" and o == "fails-after-applying")])
"""Every patch-level feature: length (0, 1, 2, 3 or more) x outcome on the held content."""


def op_features(ops) -> list[str]:
    """The operation features of a patch (:class:`~model.events.PatchOp` sequence)."""
    out = []
    for op in ops:
        if not op.recognised:
            out.append("op:unknown")
            continue
        raw = thaw(op.raw)
        shape = pointer_shape(raw.get("path", ""))
        vt = value_type(raw["value"]) if op.op in VALUE_OPS else "-"
        out.append(f"op:{op.op}:{shape}:{vt}")
        if set(raw) - RFC6902_MEMBERS:
            out.append("op:open-member")
    return out


def patch_feature(content_text, ops) -> Optional[str]:
    """``patch:<length>:<outcome>`` for ``ops`` applied to the canonical text ``content_text``
    (None when there is no content to apply to). Unrecognised ops are left out of the
    application, as a consumer dropping them would (SNP-UNKNOWN-OP)."""
    if content_text is None:
        return None
    n = len(ops)
    size = "0" if n == 0 else "1" if n == 1 else "2" if n == 2 else "3+"
    outcome = apply_patch(content_text, tuple(op for op in ops if op.recognised))
    if outcome.ok:
        result = outcome.result or ""
        what = "applies" if result.startswith("{") else "non-object"
    else:
        what = "fails-first" if outcome.failed_index == 0 else "fails-after-applying"
    return f"patch:{size}:{what}"




def malformed_feature(event: Malformed) -> Optional[str]:
    """``malformed:<event>.<member>:<JSON type>`` of a malformed activity event, the member being
    the one the wire refused (array indices written ``[]``); None for another event type."""
    wire = thaw(event.wire) if event.wire else {}
    name = wire.get("type") if isinstance(wire, dict) else None
    if name not in ("ACTIVITY_SNAPSHOT", "ACTIVITY_DELTA"):
        return None
    path = event.path[2:] if event.path.startswith("$.") else event.path
    member = re.sub(r"\[\d+\]", "[]", path)
    node: Any = wire
    absent = False
    for token in re.findall(r"[^.\[\]]+|\[\d+\]", path):
        if token.startswith("["):
            index = int(token[1:-1])
            if not isinstance(node, list) or index >= len(node):
                absent = True
                break
            node = node[index]
        elif isinstance(node, dict) and token in node:
            node = node[token]
        else:
            absent = True
            break
    kind = "absent" if absent else _wire_type(node)
    return f"malformed:{name}.{member}:{kind}"


def _wire_type(value: Any) -> str:
    vt = value_type(value)
    return "number" if vt in ("integer", "float") else vt


MALFORMED_UNIVERSE: tuple[str, ...] = tuple(sorted({f"malformed:{m}:{t}"
                                                    for m, t, _ in malformed_wires()}))
"""Every malformed-member feature (derived from the wire layer, :func:`malformed_wires`)."""


ROLE_EVENTS = ("ACTIVITY_SNAPSHOT", "ACTIVITY_DELTA", "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT",
               "TEXT_MESSAGE_END")
ROLES = ("none", "activity", "user", "assistant", "tool", "system")
ROLE_UNIVERSE: tuple[str, ...] = tuple(f"role:{e}:{r}" for e in ROLE_EVENTS for r in ROLES)
"""Every role feature: event aimed at an id x the role the consumer holds there."""

MS_UNIVERSE: tuple[str, ...] = ("ms:keeps-unlisted", "ms:revokes-unlisted", "ms:restates",
                                "ms:introduces", "ms:history-user", "ms:history-assistant",
                                "ms:history-tool", "ms:history-system")
"""What a MESSAGES_SNAPSHOT does to held activities (keeps one it does not list while carrying
no activity, STA-MS-DROP-EXCEPT; revokes one while carrying others, STA-MS-SELF-REVOKE; restates
one, STA-MS-IN-PLACE; introduces one, STA-MS-APPEND) and the other roles it restates."""


def role_feature(event: Event, state) -> Optional[str]:
    """``role:<event>:<role>`` for an activity or text event aimed at a message id, with the
    role the consumer ``state`` (before the event) holds at that id (``none``: no message)."""
    if not isinstance(event, (ActivitySnapshot, ActivityDelta, TextMessageStart,
                              TextMessageContent, TextMessageEnd)):
        return None
    held = state.message(event.message_id)
    role = "none" if held is None else held.role
    feature = f"role:{event.type_name}:{role}"
    return feature if role in ROLES else None


def messages_snapshot_features(event: MessagesSnapshot, state) -> list[str]:
    """The :data:`MS_UNIVERSE` features of a MESSAGES_SNAPSHOT against the state before it."""
    listed = {m.id: m for m in event.messages}
    carries_activity = any(m.is_activity for m in event.messages)
    out = []
    for m in state.messages:
        if not m.is_activity:
            continue
        if m.id in listed:
            out.append("ms:restates")
        else:
            out.append("ms:revokes-unlisted" if carries_activity else "ms:keeps-unlisted")
    held = {m.id for m in state.messages}
    out.extend("ms:introduces" for m in event.messages if m.is_activity and m.id not in held)
    out.extend(f"ms:history-{m.role}" for m in event.messages
               if m.role in ("user", "assistant", "tool", "system"))
    return sorted(set(out))


KEY_PLACES = ("content", "metadata", "patch-path", "patch-value")
KEY_UNIVERSE: tuple[str, ...] = tuple(f"key:{place}:{k}" for place in KEY_PLACES
                                      for k in SPECIAL_KEYS)
"""Every special-key feature: ``key:<place>:<name>``, a :data:`SPECIAL_KEYS` member in an
activity's content (a snapshot's, at any depth), in metadata, as a token of a patch
operation's ``path`` or ``from``, or in an operation's ``value``."""


def _keys_in(value: Any) -> set[str]:
    """The :data:`SPECIAL_KEYS` used as member names anywhere in a JSON value."""
    found: set[str] = set()
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            found.update(k for k in node if k in SPECIAL_KEYS)
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return found


def special_key_features(event: Event) -> list[str]:
    """The :data:`KEY_UNIVERSE` features of an activity event (sorted; [] for another)."""
    out: set[str] = set()
    if isinstance(event, (ActivitySnapshot, ActivityDelta)):
        meta = getattr(event, "metadata", None)
        if meta is not None:
            out.update(f"key:metadata:{k}" for k in _keys_in(json.loads(meta)))
    if isinstance(event, ActivitySnapshot):
        out.update(f"key:content:{k}" for k in _keys_in(json.loads(event.content)))
    elif isinstance(event, ActivityDelta):
        for op in event.patch:
            raw = thaw(op.raw)
            for member in ("path", "from"):
                pointer = raw.get(member)
                if isinstance(pointer, str):
                    tokens = {t.replace("~1", "/").replace("~0", "~") for t in pointer.split("/")}
                    out.update(f"key:patch-path:{k}" for k in tokens & set(SPECIAL_KEYS))
            if "value" in raw:
                out.update(f"key:patch-value:{k}" for k in _keys_in(raw["value"]))
    return sorted(out)


REFERENCES: tuple[tuple[str, str], ...] = (
    ("TOOL_CALL_START", "parentMessageId"), ("TOOL_CALL_START", "toolCallId"),
    ("TOOL_CALL_ARGS", "toolCallId"), ("TOOL_CALL_END", "toolCallId"),
    ("TOOL_CALL_RESULT", "toolCallId"), ("TOOL_CALL_RESULT", "messageId"),
    ("TEXT_MESSAGE_START", "messageId"), ("TEXT_MESSAGE_CONTENT", "messageId"),
    ("TEXT_MESSAGE_END", "messageId"))
"""Every member by which a text or tool event names a message (or a tool call, whose id shares
the messages' id space: EVM-ID-UNIQUE), wire names."""

REF_UNIVERSE: tuple[str, ...] = tuple(f"ref:{e}.{m}:activity" for e, m in REFERENCES)
"""Every reference feature: ``ref:<event>.<member>:activity``, a reference of
:data:`REFERENCES` whose value is the id of an activity the consumer holds before the event
(TXT-TARGET-ACTIVITY, EVM-ID-UNIQUE)."""


def reference_features(event: Event, state) -> list[str]:
    """The :data:`REF_UNIVERSE` features of ``event`` against the consumer ``state`` before it."""
    wire_type = event.type_name
    out = []
    for e, member in REFERENCES:
        if e != wire_type:
            continue
        attr = re.sub(r"(?<!^)(?=[A-Z])", "_", member).lower()
        value = getattr(event, attr, None)
        held = state.message(value) if isinstance(value, str) else None
        if held is not None and held.is_activity:
            out.append(f"ref:{e}.{member}:activity")
    return out


FEATURE_UNIVERSE: dict[str, tuple[str, ...]] = {
    "op": OP_UNIVERSE, "patch": PATCH_UNIVERSE, "malformed": MALFORMED_UNIVERSE,
    "role": ROLE_UNIVERSE, "ms": MS_UNIVERSE, "key": KEY_UNIVERSE, "ref": REF_UNIVERSE}
"""Every surface feature by dimension."""
