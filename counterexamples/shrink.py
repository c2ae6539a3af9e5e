"""Shrinking: delta debugging of a witness trace to a 1-minimal one, then canonical minimisation.

:func:`ddmin` is Zeller and Hildebrandt's minimising delta debugging over the events of a trace:
it removes ever smaller chunks while the predicate still holds, and ends with a trace from which
no single event can be removed (1-minimal). :func:`minimise` alternates it with the member
simplifications (:func:`simplify_members`, :func:`unify_names`, :func:`simplify_patches`,
:func:`simplify_payloads`) until none of them changes anything, so that what is left is needed: every
event, optional member, patch operation, content member, owner and activity type.
:func:`canonical_names` then renames message ids, owners and activity types in order of first
use, so that equal findings print alike.
"""
from __future__ import annotations

from dataclasses import fields, replace
from typing import Callable, Iterator, Optional, Sequence, TypeVar

from model.events import ActivityDelta, ActivitySnapshot, Event, MessagesSnapshot
from model.json_values import EMPTY_OBJECT, freeze, thaw

__all__ = ["ddmin", "is_one_minimal", "canonical_names", "simplify_members", "OPTIONAL_MEMBERS",
           "simplify_payloads", "simplify_patches", "unify_names", "minimise"]

T = TypeVar("T")
Holds = Callable[[tuple[Event, ...]], bool]


def ddmin(items: Sequence[T], holds: Callable[[tuple[T, ...]], bool]) -> tuple[T, ...]:
    """Shrink ``items`` to a 1-minimal subsequence on which ``holds`` is still true.

    Args:
        items: the failing input (a trace), on which ``holds`` must be true.
        holds: the predicate to preserve (pure; called on subsequences in original order).

    Returns:
        A subsequence ``s`` with ``holds(s)`` and ``holds(s minus any one item)`` false.

    Raises:
        ValueError: when ``holds(items)`` is false to begin with.
    """
    current = tuple(items)
    if not holds(current):
        raise ValueError("the predicate does not hold on the input")
    n = 2
    while len(current) >= 2:
        chunk = max(1, len(current) // n)
        subsets = [current[i:i + chunk] for i in range(0, len(current), chunk)]
        progressed = False
        for i in range(len(subsets)):
            complement = tuple(x for j, s in enumerate(subsets) if j != i for x in s)
            if complement and holds(complement):
                current, n, progressed = complement, max(n - 1, 2), True
                break
        if not progressed:
            if n >= len(current):
                break
            n = min(len(current), n * 2)
    return current


OPTIONAL_MEMBERS = ("metadata", "subagent_run_id", "replace", "raw_event")
"""Optional event members :func:`simplify_members` tries to drop (set to absent); inside a
MESSAGES_SNAPSHOT, each message's ``metadata`` and owner too."""


def simplify_members(events: Sequence[Event], holds: Holds) -> tuple[Event, ...]:
    """Drop optional members (metadata, subagentRunId, replace) from events one at a time,
    keeping each removal only while ``holds`` stays true. Greedy, one pass per member, left to
    right; the result still satisfies ``holds`` and has no fewer events."""
    current = tuple(events)
    for index in range(len(current)):
        for name in OPTIONAL_MEMBERS:
            event = current[index]
            if getattr(event, name, None) is None:
                continue
            candidate = current[:index] + (replace(event, **{name: None}),) + current[index + 1:]
            if holds(candidate):
                current = candidate
        event = current[index]
        if isinstance(event, MessagesSnapshot):
            for position in range(len(event.messages)):
                for name, blank in (("metadata", None), ("owner", None)):
                    event = current[index]
                    message = event.messages[position]
                    if getattr(message, name) is None:
                        continue
                    changed = replace(message, **{name: blank},
                                      **({"first_owner": None} if name == "owner" else {}))
                    messages = event.messages[:position] + (changed,) + \
                        event.messages[position + 1:]
                    candidate = current[:index] + (replace(event, messages=messages),) + \
                        current[index + 1:]
                    if holds(candidate):
                        current = candidate
    return current


def simplify_payloads(events: Sequence[Event], holds: Holds) -> tuple[Event, ...]:
    """Try the plainest payload for each activity event, left to right, keeping each change only
    while ``holds`` stays true: an empty patch for ACTIVITY_DELTA, ``{}`` content for
    ACTIVITY_SNAPSHOT. The result still satisfies ``holds`` and has as many events."""
    current = tuple(events)
    for i, event in enumerate(current):
        if isinstance(event, ActivityDelta) and event.patch:
            candidate = replace(event, patch=())
        elif isinstance(event, ActivitySnapshot) and event.content != EMPTY_OBJECT:
            candidate = replace(event, content=EMPTY_OBJECT)
        else:
            continue
        trial = current[:i] + (candidate,) + current[i + 1:]
        if holds(trial):
            current = trial
    return current


def _without_key(text: str, key: str) -> str:
    value = thaw(text)
    del value[key]
    return freeze(value)


def _object_keys(text: Optional[str]) -> list[str]:
    if text is None:
        return []
    value = thaw(text)
    return sorted(value) if isinstance(value, dict) else []


def _object_size(text: Optional[str]) -> int:
    return len(_object_keys(text))


def _smaller_members(event: Event) -> Iterator[Event]:
    """Each variant of ``event`` with one part fewer: one patch operation, one top-level member
    of an activity's content or of the metadata object, or (MESSAGES_SNAPSHOT) one message or
    one member of a message's content or metadata. A metadata object keeps at least one member
    (an empty one would make a split that only shows ``{}`` against an absent member; dropping
    the whole member is :func:`simplify_members`'s). In a fixed order (event fields, then sorted
    keys), so that shrinking is deterministic."""
    if isinstance(event, ActivityDelta):
        for i in range(len(event.patch)):
            yield replace(event, patch=event.patch[:i] + event.patch[i + 1:])
    if isinstance(event, ActivitySnapshot):
        for key in _object_keys(event.content):
            yield replace(event, content=_without_key(event.content, key))
    for key in _object_keys(event.metadata) if _object_size(event.metadata) > 1 else ():
        yield replace(event, metadata=_without_key(event.metadata, key))
    if isinstance(event, MessagesSnapshot):
        messages = event.messages
        for i in range(len(messages)):
            yield replace(event, messages=messages[:i] + messages[i + 1:])
        for i, message in enumerate(messages):
            for name in (("content", "metadata") if message.is_activity else ("metadata",)):
                if name == "metadata" and _object_size(message.metadata) < 2:
                    continue
                for key in _object_keys(getattr(message, name)):
                    changed = replace(message, **{name: _without_key(getattr(message, name),
                                                                        key)})
                    yield replace(event, messages=messages[:i] + (changed,) + messages[i + 1:])


def simplify_patches(events: Sequence[Event], holds: Holds) -> tuple[Event, ...]:
    """Remove, one at a time and left to right, the parts of events that may not be needed: a
    patch operation (e.g. an unrecognised op the split does not rest on), a top-level member of
    an activity's content or of a metadata object (never its last), a message of a
    MESSAGES_SNAPSHOT or a member of its content or metadata; each removal is kept only while ``holds`` stays true. The result
    still satisfies ``holds`` and has as many events."""
    current = tuple(events)
    for i in range(len(current)):
        progressed = True
        while progressed:
            progressed = False
            for candidate in _smaller_members(current[i]):
                trial = current[:i] + (candidate,) + current[i + 1:]
                if holds(trial):
                    current, progressed = trial, True
                    break
    return current


def _map_names(event: Event, mid: Callable[[str, bool], str],
               own: Callable[[Optional[str]], Optional[str]],
               typ: Callable[[Optional[str]], Optional[str]]) -> Event:
    """``event`` with its message ids (``mid(id, is_activity)``), owners (``own``: every
    ``subagentRunId`` and ``parentSubagentRunId``) and activity types (``typ``) mapped."""
    if isinstance(event, (ActivitySnapshot, ActivityDelta)):
        return replace(event, message_id=mid(event.message_id, True),
                       activity_type=typ(event.activity_type),
                       subagent_run_id=own(event.subagent_run_id))
    if isinstance(event, MessagesSnapshot):
        return replace(event, messages=tuple(
            replace(m, id=mid(m.id, m.is_activity), owner=own(m.owner),
                    first_owner=own(m.first_owner), activity_type=typ(m.activity_type))
            for m in event.messages))
    names = {f.name for f in fields(event)}
    changes = {}
    if "message_id" in names and isinstance(getattr(event, "message_id"), str):
        changes["message_id"] = mid(event.message_id, False)
    for name in ("subagent_run_id", "parent_subagent_run_id"):
        if name in names and getattr(event, name) is not None:
            changes[name] = own(getattr(event, name))
    return replace(event, **changes) if changes else event


def _names_in_order(events: Sequence[Event]) -> tuple[list[str], list[str]]:
    """The owners and activity types of ``events``, each in order of first use."""
    owners: dict[str, None] = {}
    types: dict[str, None] = {}

    def own(value):
        if value is not None:
            owners.setdefault(value)
        return value

    def typ(value):
        if value is not None:
            types.setdefault(value)
        return value

    for e in events:
        _map_names(e, _same_id, own, typ)
    return list(owners), list(types)


def _keep(value):
    return value


def _same_id(value: str, activity: bool) -> str:
    return value


def unify_names(events: Sequence[Event], holds: Holds) -> tuple[Event, ...]:
    """Use fewer owners and activity types where the predicate does not need them, keeping each
    change only while ``holds`` stays true:

    - each owner, in order of first use, is replaced in the whole trace by the parent
      (``subagentRunId`` absent, on activity events and messages only) or else by an owner used
      before it; each activity type by a type used before it (in the whole trace: the
      attribution or type a pair of events must share moves together);
    - then each activity event's type alone is set to a type used before it (an unneeded
      retype dropped).

    The result still satisfies ``holds`` and has as many events."""
    current = tuple(events)
    owners, types = _names_in_order(current)
    for position, owner in enumerate(owners):
        parent = tuple(
            replace(e, subagent_run_id=None) if isinstance(e, (ActivitySnapshot, ActivityDelta))
            and e.subagent_run_id == owner else
            replace(e, messages=tuple(
                replace(m, owner=None, first_owner=None) if m.owner == owner else m
                for m in e.messages)) if isinstance(e, MessagesSnapshot) else e
            for e in current)
        candidates = [parent] + [
            tuple(_map_names(e, _same_id, lambda v, o=owner, to=earlier: to if v == o else v, _keep)
                  for e in current) for earlier in owners[:position]]
        for trial in candidates:
            if trial != current and holds(trial):
                current = trial
                break
    for position, kind in enumerate(types):
        for earlier in types[:position]:
            trial = tuple(_map_names(e, _same_id, _keep,
                                     lambda v, k=kind, to=earlier: to if v == k else v)
                          for e in current)
            if trial != current and holds(trial):
                current = trial
                break
    _, types = _names_in_order(current)
    for i, event in enumerate(current):
        if not isinstance(event, (ActivitySnapshot, ActivityDelta)):
            continue
        for earlier in types[:types.index(event.activity_type)]:
            trial = current[:i] + (replace(event, activity_type=earlier),) + current[i + 1:]
            if holds(trial):
                current = trial
                break
    return current


def minimise(events: Sequence[Event], holds: Holds) -> tuple[Event, ...]:
    """The canonical minimisation of a witness: :func:`ddmin`, :func:`simplify_members`,
    :func:`unify_names`, :func:`simplify_patches` and :func:`simplify_payloads` in turn,
    repeated until a whole round changes nothing (a fixpoint: each accepted change removes an
    event, a member, an operation or a name, or moves a name to one used earlier; should moving
    names ever lead back to a trace an earlier round left, that ends it too, so the loop always
    ends). Names go before payloads: where either an unneeded retype or a patch operation could
    carry the split, the retype is dropped and the operation kept.

    Args:
        events: a trace on which ``holds`` is true.
        holds: the predicate to preserve (pure).

    Returns:
        A 1-minimal trace on which ``holds`` is true and from which no step above removes
        anything more. Deterministic: the same input and predicate give the same output.

    Raises:
        ValueError: when ``holds(events)`` is false to begin with.
    """
    current = tuple(events)
    seen = {current}
    while True:
        current = ddmin(current, holds)
        for step in (simplify_members, unify_names, simplify_patches, simplify_payloads):
            current = step(current, holds)
        if current in seen:
            return current
        seen.add(current)


def is_one_minimal(items: Sequence[T], holds: Callable[[tuple[T, ...]], bool]) -> bool:
    """True when ``holds(items)`` and removing any single item makes it false."""
    items = tuple(items)
    return holds(items) and not any(holds(items[:i] + items[i + 1:]) for i in range(len(items)))


def canonical_names(events: Sequence[Event]) -> tuple[Event, ...]:
    """Rename activity ids (``act-1``...), text ids (``msg-1``...), owners (``sub-1``...: every
    ``subagentRunId`` and ``parentSubagentRunId``, SUBAGENT_* events included) and activity types
    (``TYPE-A``...) in order of first use. Other values are left alone."""
    ids: dict[str, str] = {}
    owners: dict[str, str] = {}
    types: dict[str, str] = {}

    def mid(value: str, activity: bool) -> str:
        if value not in ids:
            prefix = "act" if activity else "msg"
            ids[value] = f"{prefix}-{sum(1 for v in ids.values() if v.startswith(prefix)) + 1}"
        return ids[value]

    def own(value):
        if value is None:
            return None
        owners.setdefault(value, f"sub-{len(owners) + 1}")
        return owners[value]

    def typ(value):
        if value is None:
            return None
        types.setdefault(value, f"TYPE-{chr(ord('A') + len(types))}")
        return types[value]

    return tuple(_map_names(e, mid, own, typ) for e in events)
