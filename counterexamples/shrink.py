"""Shrinking: delta debugging of a witness trace to a 1-minimal one.

:func:`ddmin` is Zeller and Hildebrandt's minimising delta debugging over the events of a trace:
it removes ever smaller chunks while the predicate still holds, and ends with a trace from which
no single event can be removed (1-minimal). :func:`canonical_names` then renames message ids,
owners and activity types in order of first use, so that equal findings print alike.
"""
from __future__ import annotations

from dataclasses import fields, replace
from typing import Callable, Sequence, TypeVar

from model.events import ActivityDelta, ActivitySnapshot, Event, MessagesSnapshot

__all__ = ["ddmin", "is_one_minimal", "canonical_names", "simplify_members", "OPTIONAL_MEMBERS"]

T = TypeVar("T")


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


def simplify_members(events: Sequence[Event], holds: Callable[[tuple[Event, ...]], bool]
                     ) -> tuple[Event, ...]:
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


def is_one_minimal(items: Sequence[T], holds: Callable[[tuple[T, ...]], bool]) -> bool:
    """True when ``holds(items)`` and removing any single item makes it false."""
    items = tuple(items)
    return holds(items) and not any(holds(items[:i] + items[i + 1:]) for i in range(len(items)))


def canonical_names(events: Sequence[Event]) -> tuple[Event, ...]:
    """Rename activity ids (``act-1``...), text ids (``msg-1``...), owners (``sub-1``...) and
    activity types (``TYPE-A``...) in order of first use. Other values are left alone."""
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

    out = []
    for e in events:
        if isinstance(e, (ActivitySnapshot, ActivityDelta)):
            e = replace(e, message_id=mid(e.message_id, True), activity_type=typ(e.activity_type),
                        subagent_run_id=own(e.subagent_run_id))
        elif isinstance(e, MessagesSnapshot):
            e = replace(e, messages=tuple(
                replace(m, id=mid(m.id, m.is_activity), owner=own(m.owner),
                        first_owner=own(m.first_owner), activity_type=typ(m.activity_type))
                for m in e.messages))
        elif hasattr(e, "message_id") and isinstance(getattr(e, "message_id"), str):
            e = replace(e, message_id=mid(e.message_id, False))
            if "subagent_run_id" in {f.name for f in fields(e)}:
                e = replace(e, subagent_run_id=own(e.subagent_run_id))
        out.append(e)
    return tuple(out)
