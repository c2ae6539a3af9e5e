"""The finite world of the Z3 encoding, its abstract events, and how they become real AG-UI events.

The encoding (:mod:`properties.smt.encoding`) reasons about *abstract* events over a :class:`World`:
message-id slots, owners (index 0 is the parent agent, ``i > 0`` the subagent
``world.subagents[i - 1]``), activity types and content literals, each an integer index. This module
fixes what every abstract event means on the wire, so that every model Z3 returns can be decoded
into a trace of real events (:func:`realise`) and replayed on the executable model, and gives the
inverse view of a concrete consumer state (:func:`abstract_state`) for the lock-step comparison.

Content is an abstract *version identity* (an integer):

* ``0 .. contents-1``: the literal a snapshot (or a MESSAGES_SNAPSHOT) states, ``{"n": c}``;
* ``FRESH + t`` (``t`` the event's index in the trace): the result of a patch that applies at event
  ``t``, ``{"n": FRESH + t}`` (the applying patch is ``replace /n`` with that value, so the result
  never depends on the prior content and never equals any other version);
* ``NON_OBJECT`` (-1): ``[]``, what a root replacement to an array leaves (ACT-DELTA-OBJECT, N22);
* ``TEXT_CONTENT`` (-2): the empty string a text message holds.

Patch outcomes are realised as: applies = ``replace /n`` (applies to any object content of this
world, fails on ``[]``), fails = ``remove /missing`` (never applies), non-object =
``replace "" -> []`` (always applies, leaves ``[]``).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from model.consumer import ConsumerState
from model.events import Event, Malformed
from model.json_values import thaw
from model.wire import parse_event

__all__ = ["World", "DEFAULT_WORLD", "SMALL_WORLD", "AbstractEvent", "MsEntry", "realise",
           "realise_trace", "wire_trace", "abstract_state", "AbstractState", "FRESH", "NON_OBJECT",
           "TEXT_CONTENT", "SNAP", "DELTA", "TEXT", "MS", "KIND_NAMES", "R_ABSENT", "R_TRUE",
           "R_FALSE", "P_APPLY", "P_FAIL", "P_NONOBJ", "I_NONE", "I_ACT", "I_TEXT",
           "RUN_STARTED_WIRE"]

# event kinds
SNAP, DELTA, TEXT, MS = 0, 1, 2, 3
KIND_NAMES = ("ACTIVITY_SNAPSHOT", "ACTIVITY_DELTA", "TEXT_MESSAGE_START", "MESSAGES_SNAPSHOT")
# replace flag on a snapshot
R_ABSENT, R_TRUE, R_FALSE = 0, 1, 2
# patch outcome class of a delta
P_APPLY, P_FAIL, P_NONOBJ = 0, 1, 2
# what a MESSAGES_SNAPSHOT says about one id slot
I_NONE, I_ACT, I_TEXT = 0, 1, 2

FRESH = 100
NON_OBJECT = -1
TEXT_CONTENT = -2

RUN_STARTED_WIRE = {"type": "RUN_STARTED", "threadId": "t1", "runId": "r1"}
"""Every trace of the fragment opens with this event (index 0); the fragment's events follow."""


@dataclass(frozen=True)
class World:
    """The finite world the encoding ranges over.

    Attributes:
        ids: message ids, one per slot; any event may name any of them (no id is reserved for a
            role: whether an id is an activity or a text message is part of the trace).
        subagents: subagent run ids (owners ``1..len``; owner 0 is the parent, no tag).
        types: activity types.
        contents: how many content literals snapshots choose from (``{"n": 0}`` ...); at most
            :data:`FRESH`.
        messages_snapshot: whether MESSAGES_SNAPSHOT is in the event alphabet.
        text: whether TEXT_MESSAGE_START is in the event alphabet.
    """

    ids: tuple[str, ...] = ("id-1", "id-2", "id-3")
    subagents: tuple[str, ...] = ("sub-1",)
    types: tuple[str, ...] = ("PLAN", "SEARCH")
    contents: int = 2
    messages_snapshot: bool = True
    text: bool = True

    def __post_init__(self):
        if not self.ids or not self.types or not 1 <= self.contents <= FRESH:
            raise ValueError("a world needs ids, types and 1..100 content literals")

    @property
    def owners(self) -> int:
        """Number of owner values (the parent plus the subagents)."""
        return 1 + len(self.subagents)

    @property
    def kinds(self) -> tuple[int, ...]:
        """The event kinds in the alphabet."""
        return (SNAP, DELTA) + ((TEXT,) if self.text else ()) + \
            ((MS,) if self.messages_snapshot else ())

    def owner_name(self, owner: int) -> Optional[str]:
        """The ``subagentRunId`` of owner index ``owner`` (None for 0, the parent)."""
        return None if owner == 0 else self.subagents[owner - 1]

    def owner_index(self, name: Optional[str]) -> int:
        """The owner index of a ``subagentRunId`` (0 for None). Raises ValueError if unknown."""
        return 0 if name is None else 1 + self.subagents.index(name)

    def to_json(self) -> dict:
        """The world as JSON (``ids``, ``subagents``, ``types``, ``contents``, flags)."""
        return {"ids": list(self.ids), "subagents": list(self.subagents),
                "types": list(self.types), "contents": self.contents,
                "messagesSnapshot": self.messages_snapshot, "text": self.text}


DEFAULT_WORLD = World()
"""Three ids, the parent and one subagent, two types, two content literals, every event kind."""

SMALL_WORLD = World(ids=("id-1", "id-2"), contents=1)
"""The world the executable enumeration of the tests exhausts: two ids, one content literal."""


@dataclass(frozen=True)
class MsEntry:
    """What a MESSAGES_SNAPSHOT states for one id slot: ``inc`` (:data:`I_NONE`, :data:`I_ACT`,
    :data:`I_TEXT`), for an activity its type, owner and content literal, and ``rank`` (its place
    in the snapshot's list; only the order of the ranks of listed slots matters)."""

    inc: int = I_NONE
    typ: int = 0
    own: int = 0
    cont: int = 0
    rank: int = 0


@dataclass(frozen=True)
class AbstractEvent:
    """One event of the fragment as integers (see the module docstring for their meaning).

    Attributes:
        kind: :data:`SNAP`, :data:`DELTA`, :data:`TEXT` or :data:`MS`.
        mid: id slot (SNAP, DELTA, TEXT).
        typ: activity type (SNAP, DELTA).
        cont: content literal (SNAP).
        rep: :data:`R_ABSENT`, :data:`R_TRUE` or :data:`R_FALSE` (SNAP).
        tag: owner index of ``subagentRunId`` (SNAP, DELTA; 0 = absent).
        pk: patch outcome class :data:`P_APPLY`, :data:`P_FAIL`, :data:`P_NONOBJ` (DELTA).
        ms: one :class:`MsEntry` per id slot (MS).
    """

    kind: int
    mid: int = 0
    typ: int = 0
    cont: int = 0
    rep: int = R_ABSENT
    tag: int = 0
    pk: int = P_APPLY
    ms: tuple[MsEntry, ...] = ()

    def describe(self, world: World) -> str:
        """A short human-readable form, e.g. ``SNAP id-1 PLAN {n:0} replace:false by sub-1``."""
        by = f" by {world.owner_name(self.tag)}" if self.tag else ""
        if self.kind == SNAP:
            rep = ("", " replace:true", " replace:false")[self.rep]
            return f"ACTIVITY_SNAPSHOT {world.ids[self.mid]} {world.types[self.typ]} " \
                   f"{{n:{self.cont}}}{rep}{by}"
        if self.kind == DELTA:
            pk = ("applies", "fails", "non-object")[self.pk]
            return f"ACTIVITY_DELTA {world.ids[self.mid]} {world.types[self.typ]} patch {pk}{by}"
        if self.kind == TEXT:
            return f"TEXT_MESSAGE_START {world.ids[self.mid]}"
        listed = sorted((e.rank, j) for j, e in enumerate(self.ms) if e.inc != I_NONE)
        parts = []
        for _, j in listed:
            e = self.ms[j]
            if e.inc == I_TEXT:
                parts.append(f"{world.ids[j]}:assistant")
            else:
                owner = f" by {world.owner_name(e.own)}" if e.own else ""
                parts.append(f"{world.ids[j]}:{world.types[e.typ]} {{n:{e.cont}}}{owner}")
        return "MESSAGES_SNAPSHOT [" + ", ".join(parts) + "]"


def _wire(world: World, ev: AbstractEvent, index: int) -> dict:
    if ev.kind == SNAP:
        out = {"type": "ACTIVITY_SNAPSHOT", "messageId": world.ids[ev.mid],
               "activityType": world.types[ev.typ], "content": {"n": ev.cont}}
        if ev.rep != R_ABSENT:
            out["replace"] = ev.rep == R_TRUE
    elif ev.kind == DELTA:
        patch = ([{"op": "replace", "path": "/n", "value": FRESH + index}],
                 [{"op": "remove", "path": "/missing"}],
                 [{"op": "replace", "path": "", "value": []}])[ev.pk]
        out = {"type": "ACTIVITY_DELTA", "messageId": world.ids[ev.mid],
               "activityType": world.types[ev.typ], "patch": patch}
    elif ev.kind == TEXT:
        return {"type": "TEXT_MESSAGE_START", "messageId": world.ids[ev.mid], "role": "assistant"}
    else:
        messages = []
        for _, j in sorted((e.rank, j) for j, e in enumerate(ev.ms) if e.inc != I_NONE):
            e = ev.ms[j]
            if e.inc == I_TEXT:
                messages.append({"id": world.ids[j], "role": "assistant", "content": ""})
            else:
                m = {"id": world.ids[j], "role": "activity", "activityType": world.types[e.typ],
                     "content": {"n": e.cont}}
                if e.own:
                    m["subagentRunId"] = world.owner_name(e.own)
                messages.append(m)
        return {"type": "MESSAGES_SNAPSHOT", "messages": messages}
    if ev.tag:
        out["subagentRunId"] = world.owner_name(ev.tag)
    return out


def realise(world: World, ev: AbstractEvent, index: int) -> Event:
    """The real event an abstract event stands for, at trace position ``index`` (>= 1), parsed
    from its wire form by :func:`model.wire.parse_event` (so it is what any SDK would receive).

    Raises:
        ValueError: if the wire form does not parse as a well-formed event (a bug here).
    """
    event = parse_event(_wire(world, ev, index))
    if isinstance(event, Malformed) or event.notices:
        raise ValueError(f"abstract event {ev} realised as a malformed event: {event}")
    return event


def realise_trace(world: World, events: tuple[AbstractEvent, ...]) -> tuple[Event, ...]:
    """RUN_STARTED followed by the realised events (event ``t`` of ``events`` at index ``t+1``)."""
    return (parse_event(RUN_STARTED_WIRE),) + tuple(
        realise(world, ev, i + 1) for i, ev in enumerate(events))


def wire_trace(world: World, events: tuple[AbstractEvent, ...]) -> list[dict]:
    """The trace in wire JSON (RUN_STARTED first)."""
    return [dict(RUN_STARTED_WIRE)] + [_wire(world, ev, i + 1) for i, ev in enumerate(events)]


@dataclass(frozen=True)
class AbstractState:
    """A consumer state seen through the abstraction: per id slot ``(held, activity, type,
    owner, first owner, content version, seen, open)`` with non-held slots all zero, the held
    slots in message order, and whether the consumer halted."""

    slots: tuple[tuple, ...]
    order: tuple[int, ...]
    halted: bool


def _content_version(text: Optional[str]) -> int:
    value = thaw(text) if text is not None else None
    if value == "":
        return TEXT_CONTENT
    if isinstance(value, dict) and set(value) == {"n"} and isinstance(value["n"], int):
        return value["n"]
    if value == []:
        return NON_OBJECT
    raise ValueError(f"content {text} is outside the abstraction")


def abstract_state(world: World, state: ConsumerState) -> AbstractState:
    """The abstract view of a concrete consumer state (inverse of the realisation).

    Raises:
        ValueError: if the state holds something the abstraction cannot express (a message id
            or content outside the world), which would mean the realisation is wrong.
    """
    slots = []
    for j, mid in enumerate(world.ids):
        m = state.message(mid)
        seen = mid in state.held_ever
        is_open = mid in state.open_texts
        if m is None:
            slots.append((False, False, 0, 0, 0, 0, seen, is_open))
            continue
        if m.is_activity:
            slots.append((True, True, world.types.index(m.activity_type),
                          world.owner_index(m.owner), world.owner_index(m.first_owner),
                          _content_version(m.content), seen, is_open))
        else:
            slots.append((True, False, 0, world.owner_index(m.owner), 0,
                          _content_version(m.content), seen, is_open))
    unknown = [m.id for m in state.messages if m.id not in world.ids]
    if unknown:
        raise ValueError(f"messages outside the world: {unknown}")
    order = tuple(world.ids.index(m.id) for m in state.messages)
    return AbstractState(tuple(slots), order, state.halted)
