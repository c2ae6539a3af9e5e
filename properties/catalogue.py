"""The property catalogue: statements tied to clause ids, each with a check that returns a witness
or nothing.

A property is checked on one :class:`Transition`: the consumer state before and after one event,
what the step surfaced, the reading the consumer runs under, and the producer's belief before and
after (so relations between what the producer meant and what the consumer holds can be stated).
The checks compute what the draft asks *from the event and the state before it*, never by calling
the reference step, so they judge the reference consumer too. Where a duty depends on an open
question, the check reads the same knob the consumer runs under.

Kinds (design section 5): ``invariant`` (of every state), ``step`` (an obligation of one step),
``relation`` (producer belief vs consumer state) and ``difference`` (readings that disagree; see
:mod:`properties.search.ambiguity`, listed here so coverage shows it).

Each property is declared at its check, by a decorator carrying its id, statement, clauses, kind,
severity, events, belief view and scope (:meth:`PropertyRegistry.prop`); the few with no check of
their own are declared in the same order with :meth:`PropertyRegistry.declare`. Declarations are
validated at import (:class:`PropertyDeclarationError`), and their order is :data:`PROPERTIES`'s.
To add a property: decorate its check with ``@prop(...)`` here, where it should come in that
order, and give it a row in ``tests/test_properties.py`` (a mutant of the zoo that breaks it).
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Callable, Container, Optional, Sequence

from model.clauses import registry as clause_registry
from model.codes import (ACTIVITY_DELTA_TARGET_MISSING, ACTIVITY_DELTA_TARGET_NOT_ACTIVITY,
                         ACTIVITY_OWNER_MISMATCH, ACTIVITY_PATCH_FAILED, UNKNOWN_MEMBER_STRIPPED,
                         UNKNOWN_PATCH_OP_DROPPED)
from model.consumer import ConsumerState, Fatal, Warning, merge_metadata
from model.events import (ActivityDelta, ActivitySnapshot, Event, Malformed, Message,
                          MessagesSnapshot, Passthrough, RunError, RunFinished, RunStarted,
                          StateDelta, StateSnapshot, StepFinished, StepStarted, SubagentError,
                          SubagentFinished,
                          TextMessageContent, TextMessageEnd, TextMessageStart, ToolCallArgs,
                          ToolCallEnd, ToolCallResult, ToolCallStart, Unrecognised)
from model.json_values import is_json_object_text
from model.patch import apply_patch
from model.producer import Belief
from model.readings import Reading

__all__ = ["Transition", "Property", "PROPERTIES", "PROPERTY_BY_ID", "MUST_PROPERTIES",
           "check_transition", "applicable", "first_violation", "coverage_table",
           "PropertyViolation", "SCOPES", "KINDS", "SEVERITIES", "target_view", "by_identity",
           "PropertyRegistry", "PropertyDeclarationError", "checked_elsewhere", "decided_alike",
           "renamed_decision_alike"]


@dataclass(frozen=True, init=False)
class Transition:
    """One step of a consumer, as a property sees it (immutable).

    Attributes:
        index: the event's index in the trace.
        before, after: consumer states around the step.
        event: the event stepped.
        warnings, fatal: what the step surfaced.
        reading: the reading the consumer runs under.
        run_input: the consumer's next run input after the step (wire messages).
        belief_before, belief_after: the producer's belief around the event (default: the
            belief before any event).
        conformant: True when no event so far (this one included) broke a producer clause.
        restep: the consumer under test as ``restep(state, event) -> (state, warnings, fatal)``,
            for relational properties that compare the step with the step on a variant input.
    """

    index: int
    before: ConsumerState
    event: Event
    after: ConsumerState
    warnings: tuple[Warning, ...]
    fatal: Optional[Fatal]
    reading: Reading
    run_input: tuple = ()
    belief_before: Belief = field(default_factory=Belief)
    belief_after: Belief = field(default_factory=Belief)
    conformant: bool = True
    restep: Optional[Callable[[ConsumerState, Event], tuple]] = field(default=None, compare=False)

    def __init__(self, index: int, before: ConsumerState, event: Event, after: ConsumerState,
                 warnings: tuple, fatal: Optional[Fatal], reading: Reading, run_input: tuple = (),
                 belief_before: Optional[Belief] = None, belief_after: Optional[Belief] = None,
                 conformant: bool = True, restep=None):
        # The exhaustive search builds one per checked transition: filling the instance dict at
        # once is several times cheaper than a frozen dataclass's attribute-by-attribute init.
        self.__dict__.update(
            index=index, before=before, event=event, after=after, warnings=warnings,
            fatal=fatal, reading=reading, run_input=run_input,
            belief_before=Belief() if belief_before is None else belief_before,
            belief_after=Belief() if belief_after is None else belief_after,
            conformant=conformant, restep=restep)

    @property
    def target_before(self) -> Optional[Message]:
        """The message the event names by ``message_id``, as held before the step (None when
        not held, or when the event names no message). Computed once per transition: most
        checks start from it."""
        d = self.__dict__
        if "_target_before" not in d:
            mid = getattr(self.event, "message_id", None)
            d["_target_before"] = None if mid is None else self.before.message(mid)
        return d["_target_before"]

    @property
    def target_after(self) -> Optional[Message]:
        """The same message as held after the step (None when not held)."""
        d = self.__dict__
        if "_target_after" not in d:
            mid = getattr(self.event, "message_id", None)
            d["_target_after"] = None if mid is None else self.after.message(mid)
        return d["_target_after"]


Check = Callable[[Transition], Optional[str]]

KINDS = ("invariant", "step", "relation", "difference")
"""The values of :attr:`Property.kind` (see the module docstring)."""

SEVERITIES = ("must", "should")
"""The values of :attr:`Property.severity`."""

SCOPES = ("transition", "step", "target", "after")
"""The values of :attr:`Property.scope`: ``"transition"`` reads most; ``"step"``, ``"target"``
and ``"after"`` each read less of it, in different parts (see :attr:`Property.scope`)."""


class PropertyDeclarationError(ValueError):
    """A property declared wrongly: a field out of its range or of the wrong shape (raised by
    :class:`Property` itself), or, through a :class:`PropertyRegistry`, an id declared twice, a
    clause id the clause registry does not hold, or a declaration after the registry closed.
    The message starts ``property <id>:``; ``property_id`` holds the id."""

    def __init__(self, property_id: object, problem: str):
        super().__init__(f"property {property_id}: {problem}")
        self.property_id = property_id


@dataclass(frozen=True)
class Property:
    """A checked statement: ``id``, one-line ``statement``, ``clauses`` it checks, ``kind``,
    ``check(transition) -> None | witness text``, and ``severity``: ``"must"`` when the clauses
    make it a duty, ``"should"`` when the draft only recommends it (a consumer that departs from a
    SHOULD is still conformant, IDX-CONFORMANCE; use :data:`MUST_PROPERTIES` to judge conformance
    alone).

    Three declarations let the search engines skip work without changing any outcome (a test
    checks each against every transition of adversarial explorations):

    * ``events``: the event classes on which the check can fire (``None``: any event; ``()``:
      none, for the properties the engines check themselves). On any other event the check
      returns None, so :func:`check_transition` does not call it.
    * ``belief_view``: None when the check never reads the producer's belief; its outcome then
      depends only on the consumer's step (states, event, what was surfaced, reading, run input)
      and the conformance flag, so an engine may share it across producer beliefs. Otherwise
      ``belief_view(belief, event)`` (hashable) is all the check reads of ``belief_before`` and
      of ``belief_after``, and an engine may share its outcome across beliefs whose views agree.
    * ``scope``: how much of the consumer's transition the check reads besides the reading
      (and, through ``belief_view``, the beliefs), so that an engine may share its outcome
      across transitions that agree on that much. ``"transition"`` (the default): any of it.
      ``"step"``: only the step itself, the state before, the event, the state after, the
      warnings and the fatal (and the reading, directly or through ``restep``); never the
      belief, the run input, the conformance flag or the index. ``"target"``: only
      :func:`target_view`, what the step did to the message the event names. ``"after"``:
      only the state after the step, the run input and the conformance flag (and never the
      belief).

    Construction checks each field's range and shape (``kind`` in :data:`KINDS`, ``severity``
    in :data:`SEVERITIES`, ``scope`` in :data:`SCOPES`: an engine would not know where to check
    another; ``clauses`` a tuple of distinct strings; ``check`` and ``belief_view`` callable;
    ``events`` None or a tuple of classes) and raises :class:`PropertyDeclarationError` (a
    ValueError) naming the id otherwise. The catalogue's properties are declared at their
    checks through a :class:`PropertyRegistry`, which checks more.
    """

    id: str
    statement: str
    clauses: tuple[str, ...]
    kind: str
    check: Check
    severity: str = "must"
    events: Optional[tuple[type, ...]] = None
    belief_view: Optional[Callable[[Belief, Event], object]] = None
    scope: str = "transition"

    def __post_init__(self):
        problem = _field_problem(self)
        if problem is not None:
            raise PropertyDeclarationError(self.id, problem)

    @property
    def reads_belief(self) -> bool:
        """Whether the check reads the producer's belief at all (see ``belief_view``)."""
        return self.belief_view is not None

    def applies_to(self, event_type: type) -> bool:
        """Whether the check can fire on an event of class ``event_type`` (see ``events``)."""
        return self.events is None or issubclass(event_type, self.events)


def _one_of(name: str, value: object, values: tuple[str, ...]) -> Optional[str]:
    return None if value in values else f"{name} {value!r} is not one of {', '.join(values)}"


def _field_problem(p: Property) -> Optional[str]:
    """What is wrong with ``p``'s fields, in words (None when nothing)."""
    if not isinstance(p.id, str) or not p.id:
        return "the id must be a non-empty string"
    if not isinstance(p.statement, str) or not p.statement:
        return "the statement must be a non-empty string"
    if not isinstance(p.clauses, tuple) or not all(isinstance(c, str) for c in p.clauses):
        return f"clauses must be a tuple of clause ids, not {p.clauses!r}"
    twice = sorted({c for c in p.clauses if p.clauses.count(c) > 1})
    if twice:
        return f"clauses listed twice: {', '.join(twice)}"
    if not callable(p.check):
        return f"the check {p.check!r} is not callable"
    if p.events is not None and not (isinstance(p.events, tuple) and
                                     all(isinstance(c, type) for c in p.events)):
        return f"events must be None or a tuple of event classes, not {p.events!r}"
    if p.belief_view is not None and not callable(p.belief_view):
        return f"the belief view {p.belief_view!r} is not callable"
    return (_one_of("kind", p.kind, KINDS) or _one_of("severity", p.severity, SEVERITIES) or
            _one_of("scope", p.scope, SCOPES))


def checked_elsewhere(t: Transition) -> None:
    """The check of a property that no per-transition check decides (the engines check it
    themselves, as P00, or it is checked across readings, as P32): always None. Such a property
    declares ``events=()``, so :func:`check_transition` never calls it."""
    return None


class PropertyRegistry:
    """The properties of a catalogue, in declaration order, each declared where its check is.

    Declare a property with its check by decorating the check (:meth:`prop`); a property whose
    check is another property's, or that has no check of its own, with :meth:`declare`. Each
    declaration is validated at once, so a wrong one fails at import with
    :class:`PropertyDeclarationError` naming the property. :meth:`close` ends the declarations
    and returns the properties as a tuple, in the order they were declared: that order is the
    order the engines check them in (the first violated property of a transition is the one
    reported), so it is part of every output.

    ``known_clauses``: a callable returning the clause ids a declaration may cite (a container
    of strings; called at each declaration), or None to accept any id.
    """

    def __init__(self, known_clauses: Optional[Callable[[], Container[str]]] = None):
        self._known_clauses = known_clauses
        self._declared: dict[str, Property] = {}
        self._closed: Optional[tuple[Property, ...]] = None

    def declare(self, property_id: str, statement: str, *, clauses: tuple[str, ...], kind: str,
                check: Optional[Check] = None, severity: str = "must",
                events: Optional[tuple[type, ...]] = None,
                belief_view: Optional[Callable[[Belief, Event], object]] = None,
                scope: str = "transition") -> Property:
        """Declare one property (the fields of :class:`Property`) and return it.

        ``check``: the check, given here when it is another property's too (a check declared
        with its own property by :meth:`prop`); None for a property no per-transition check
        decides, which gets :func:`checked_elsewhere` and must leave ``events`` unset or ``()``
        (so no engine calls it). A check given or decorated gets the property's id appended to
        its ``property_ids`` attribute (a tuple: the properties it is the check of).

        Raises :class:`PropertyDeclarationError` naming the property for a field
        :class:`Property` refuses, an id already declared, a clause id that ``known_clauses``
        does not hold, event classes on a property without a check, or a declaration after
        :meth:`close`.
        """
        if self._closed is not None:
            raise PropertyDeclarationError(
                property_id, "declared after the registry closed (its properties were already "
                "taken)")
        if property_id in self._declared:
            raise PropertyDeclarationError(property_id, "declared twice")
        if check is None:
            if events:
                raise PropertyDeclarationError(
                    property_id, f"declared without a check, so it cannot fire on {events!r}: "
                    "pass events=() or give it a check")
            check, events = checked_elsewhere, ()
        declared = Property(property_id, statement, clauses, kind, check, severity, events,
                            belief_view, scope)
        if self._known_clauses is not None:
            known = self._known_clauses()
            unknown = [c for c in clauses if c not in known]
            if unknown:
                raise PropertyDeclarationError(
                    property_id, f"clause ids not in the clause registry: {', '.join(unknown)}")
        self._declared[property_id] = declared
        if check is not checked_elsewhere:
            try:
                check.property_ids = getattr(check, "property_ids", ()) + (property_id,)
            except AttributeError:
                pass  # a callable that takes no attributes (a builtin) is declared untagged
        return declared

    def prop(self, property_id: str, statement: str, *, clauses: tuple[str, ...], kind: str,
             severity: str = "must", events: Optional[tuple[type, ...]] = None,
             belief_view: Optional[Callable[[Belief, Event], object]] = None,
             scope: str = "transition") -> Callable[[Check], Check]:
        """A decorator declaring the property (arguments as :meth:`declare`) whose check is the
        decorated function, ``check(transition) -> None | witness text``.

        Returns the function itself, unwrapped (the searches call the checks millions of times;
        :meth:`declare` tags it). Raises, when it decorates, what :meth:`declare` raises, and
        :class:`PropertyDeclarationError` when what it decorates is not callable. Decorators
        stacked on one check declare bottom-up (:meth:`declare` with ``check=`` is clearer).
        """
        def decorate(check: Check) -> Check:
            if not callable(check):
                raise PropertyDeclarationError(property_id, f"decorates {check!r}, which is not "
                                               "a callable check")
            self.declare(property_id, statement, clauses=clauses, kind=kind, check=check,
                         severity=severity, events=events, belief_view=belief_view, scope=scope)
            return check
        return decorate

    def close(self) -> tuple[Property, ...]:
        """End the declarations and return every property declared, in declaration order (the
        same tuple on every call); a later declaration raises."""
        if self._closed is None:
            self._closed = tuple(self._declared.values())
        return self._closed


class PropertyViolation(AssertionError):
    """Raised by the stateful machines when a property fails: carries the property and witness."""

    def __init__(self, prop: Property, witness: str, index: int):
        super().__init__(f"{prop.id} ({', '.join(prop.clauses)}) at event {index}: {witness}")
        self.property, self.witness, self.index = prop, witness, index


def target_view(t: Transition) -> tuple:
    """What a ``"target"``-scoped check reads of ``t`` (besides the reading and the producer's
    belief), as a hashable tuple: the event; the run status, halt flag and whether anything
    (text, tool call, invocation) was open before the step, and the steps open before it; the message the event names (its
    ``message_id``, or a malformed event's shim's) as held before and after, its position
    counted from the end of the list before and after, and whether its id was ever held; whether
    the message list is unchanged; the warnings, the fatal and the conformance flag. Two
    transitions with equal views give a target-scoped check the same outcome (the catalogue's
    test checks every such property on adversarial explorations)."""
    ev, before, after = t.event, t.before, t.after
    mid = getattr(ev, "message_id", None)
    if mid is None and isinstance(ev, Malformed) and ev.shim is not None:
        mid = getattr(ev.shim, "message_id", None)
    target = None
    if mid is not None:
        target = (_located(before.messages, mid), _located(after.messages, mid),
                  mid in before.held_ever)
    return (ev, before.run, before.halted,
            bool(before.open_texts or before.open_tools or before.subagents), target,
            before.messages == after.messages, t.warnings, t.fatal, t.conformant,
            before.open_steps)


def _located(messages: tuple[Message, ...], message_id: str) -> Optional[tuple[Message, int]]:
    """(message, position from the end: -1 for the last) of the message with this id, or None."""
    n = len(messages)
    for i, m in enumerate(messages):
        if m.id == message_id:
            return m, i - n
    return None


# --- the declarations ---------------------------------------------------------------------------

_REGISTRY = PropertyRegistry(known_clauses=clause_registry)
"""Where every property below is declared, at its check; closed into :data:`PROPERTIES`."""

prop = _REGISTRY.prop
declare = _REGISTRY.declare

_SNAPSHOT = (ActivitySnapshot,)
_DELTA = (ActivityDelta,)
_ACTIVITY = (ActivitySnapshot, ActivityDelta)
_MS = (MessagesSnapshot,)
_TEXT_OR_TOOL = (TextMessageStart, TextMessageContent, TextMessageEnd, ToolCallStart, ToolCallArgs,
                 ToolCallEnd, ToolCallResult, Passthrough, Unrecognised)
"""Event classes for :attr:`Property.events` (text and tool checks go by wire type name, which a
passthrough chunk or an undescribed type may share)."""


# --- helpers ------------------------------------------------------------------------------------

def _held(state: ConsumerState, message_id: str):
    return state.message(message_id)


def _codes(t: Transition) -> set[str]:
    return {w.code for w in t.warnings}


def _live(t: Transition) -> bool:
    """The step ran on a live stream with an active run (not halted, not a lifecycle event)."""
    return not t.before.halted and t.before.run == "active"


def _ids(state: ConsumerState) -> list[str]:
    return [m.id for m in state.messages]


# --- checked by the engines ---------------------------------------------------------------------

# properties.search.machines and properties.search.explore record P00 when the consumer's step raises.
declare("P00-no-exception",
        "The step never raises on protocol input: every outcome is a value.",
        clauses=("PRC-UNKNOWN-NOT-FATAL", "EVX-ACCEPT-FAMILIES", "ACT-TOLERATED"),
        kind="step", events=())


# --- invariants ---------------------------------------------------------------------------------

@prop("P01-unique-ids",
      "No two held messages share an id.",
      clauses=("EVM-ID-UNIQUE", "STA-MS-IN-PLACE", "ACT-PER-MESSAGE"),
      kind="invariant", scope="after")
def _unique_ids(t: Transition) -> Optional[str]:
    ids = _ids(t.after)
    if len(ids) != len(set(ids)):
        return f"message ids held twice: {sorted(i for i in set(ids) if ids.count(i) > 1)}"
    return None


@prop("P02-content-object",
      "With a conformant producer, activity content is always an object.",
      clauses=("SCH-ACTIVITY-MESSAGE", "ACT-DELTA-OBJECT", "ACT-ROLE"),
      kind="invariant", scope="after")
def _content_object(t: Transition) -> Optional[str]:
    if not t.conformant:
        return None  # a producer that breaks ACT-DELTA-OBJECT may leave a non-object (Q7)
    for m in t.after.messages:
        if m.is_activity and not is_json_object_text(m.content or ""):
            return f"activity {m.id} content is {m.content}"
    return None


@prop("P03-no-activity-in-run-input",
      "Run input never carries an activity message.",
      clauses=("ACT-STRIP-RUNINPUT", "RIN-STRIP-ACTIVITY", "SCH-RUN-INPUT-MESSAGES"),
      kind="invariant", scope="after")
def _no_activity_in_run_input(t: Transition) -> Optional[str]:
    bad = [m.get("id") for m in t.run_input if m.get("role") == "activity"]
    return f"activity messages in run input: {bad}" if bad else None


@prop("P04-run-input-keeps-others",
      "Run input is every non-activity message, in order.",
      clauses=("ACT-STRIP-RUNINPUT", "RIN-COMPLETE-HISTORY"),
      kind="invariant", scope="after")
def _run_input_keeps_others(t: Transition) -> Optional[str]:
    expected = [m.id for m in t.after.messages if not m.is_activity]
    got = [m.get("id") for m in t.run_input]
    return None if got == expected else f"run input ids {got}, held non-activity ids {expected}"


# --- activity snapshot obligations --------------------------------------------------------------

def _snap(t: Transition):
    """(event, held-before) for a live ACTIVITY_SNAPSHOT that did not fail the run."""
    if not isinstance(t.event, ActivitySnapshot) or not _live(t) or t.fatal is not None:
        return None, None
    return t.event, t.target_before


@prop("P05-snapshot-creates",
      "A snapshot for an id never held creates the activity at the end with the snapshot's own "
      "values.",
      clauses=("ACT-SNAP-CREATE", "ACT-TYPE-OPEN", "ACT-SNAP-REPLACE-FALSE", "EVM-ARRIVAL-ORDER",
               "SUB-ACCEPT-UNANNOUNCED"),
      kind="step", events=_SNAPSHOT, scope="target")
def _create(t: Transition) -> Optional[str]:
    ev, held = _snap(t)
    if ev is None or held is not None or ev.message_id in t.before.held_ever:
        return None
    if not t.after.messages or t.after.messages[-1].id != ev.message_id:
        return f"{ev.message_id} not created at the end of the message list"
    m = t.after.messages[-1]
    if (m.role, m.content, m.activity_type, m.owner, m.metadata) != (
            "activity", ev.content, ev.activity_type, ev.subagent_run_id, _snap_meta(t, ev)):
        return f"{ev.message_id} created as {m.to_wire()}, not with the snapshot's own values"
    return None


@prop("P06-replace-replaces",
      "A replacing snapshot sets content and type to its own.",
      clauses=("ACT-SNAP-REPLACE", "ACT-SNAP-REPLACE-DEFAULT", "SNP-REPLACE", "SNP-ADOPT-NEXT",
               "ACT-SNAP-NO-MERGE"),
      kind="step", events=_SNAPSHOT, scope="target")
def _replace_replaces(t: Transition) -> Optional[str]:
    ev, held = _snap(t)
    if ev is None or held is None or not held.is_activity or not ev.replacing:
        return None
    m = t.target_after
    if m is None or (m.content, m.activity_type) != (ev.content, ev.activity_type):
        return f"replacing snapshot left {m.to_wire() if m else 'nothing'}"
    return None


@prop("P07-replace-remints",
      "A replacing snapshot makes its attribution the owner, absent included.",
      clauses=("ACT-ATTR-REMINT",),
      kind="step", events=_SNAPSHOT, scope="target")
def _replace_remints(t: Transition) -> Optional[str]:
    ev, held = _snap(t)
    if ev is None or held is None or not held.is_activity or not ev.replacing:
        return None
    m = t.target_after
    if m is not None and m.owner != ev.subagent_run_id:
        return f"owner {m.owner!r} after a replacing snapshot attributed to {ev.subagent_run_id!r}"
    return None


@prop("P08-replace-keeps-metadata",
      "A replacing snapshot merges its metadata into what accumulated; it never resets it.",
      clauses=("ACT-SNAP-KEEP-METADATA", "MET-ACTIVITY-TARGET"),
      kind="step", events=_SNAPSHOT, scope="target")
def _replace_keeps_metadata(t: Transition) -> Optional[str]:
    ev, held = _snap(t)
    if ev is None or held is None or not held.is_activity or not ev.replacing:
        return None
    m = t.target_after
    expected = merge_metadata(held.metadata, _snap_meta(t, ev))
    if m is not None and m.metadata != expected:
        return f"metadata {m.metadata} after replace, expected {expected}"
    return None


def _snap_meta(t: Transition, ev: ActivitySnapshot):
    """The metadata a snapshot brings under the transition's reading: its own, or none under
    Q19=catch-all (the knob read only when the snapshot carries metadata)."""
    if ev.metadata is None or t.reading.q19 == "activity-row":
        return ev.metadata
    return None


@prop("P09-replace-false-leaves",
      "replace:false on an existing activity leaves content and type (content only under "
      "Q18=schema).",
      clauses=("ACT-SNAP-REPLACE-FALSE", "ACT-SNAP-NO-MERGE", "SNP-SPENT"),
      kind="step", events=_SNAPSHOT, scope="target")
def _replace_false_leaves(t: Transition) -> Optional[str]:
    ev, held = _snap(t)
    if ev is None or held is None or not held.is_activity or ev.replacing:
        return None
    m = t.target_after
    if m is None or (m.content, m.activity_type) != (held.content, held.activity_type):
        if m is not None and m.content == held.content and m.activity_type == ev.activity_type \
                and t.reading.q18 == "schema":  # only content stands under the schema (Q18)
            return None
        if ev.message_id in t.before.stale and t.reading.q14 == "adopt":
            return None  # resynchronised: Q14=adopt adopts after a skipped delta (SNP-ADOPT-NEXT)
        return f"replace:false changed the activity to {m.to_wire() if m else 'nothing'}"
    return None


@prop("P10-replace-false-owner-stands",
      "replace:false never changes the owner.",
      clauses=("ACT-ATTR-KEEP", "ACT-ATTR-TOLERATE"),
      kind="step", events=_SNAPSHOT, scope="target")
def _replace_false_owner(t: Transition) -> Optional[str]:
    ev, held = _snap(t)
    if ev is None or held is None or not held.is_activity or ev.replacing:
        return None
    m = t.target_after
    if m is not None and m.owner != held.owner:
        return f"replace:false changed the owner from {held.owner!r} to {m.owner!r}"
    return None


@prop("P11-snapshot-keeps-position",
      "An activity snapshot or delta never moves an existing message (unless the reading moves "
      "replaced activities).",
      clauses=("STA-MS-IN-PLACE", "EVM-ARRIVAL-ORDER"),
      kind="step", events=_ACTIVITY, scope="step")
def _position_kept(t: Transition) -> Optional[str]:
    ev = t.event
    if not isinstance(ev, (ActivitySnapshot, ActivityDelta)) or not _live(t) or \
            t.fatal is not None or t.target_before is None or \
            t.after.messages is t.before.messages:
        return None
    held, now = t.before.messages, t.after.messages
    if len(held) == len(now):  # the common case first: the same ids in the same order
        for m, n in zip(held, now):
            if m.id != n.id:
                break
        else:
            return None
    before, after = _ids(t.before), _ids(t.after)
    # the knob last: read only where it changes the verdict
    if before == after or (isinstance(ev, ActivitySnapshot) and ev.replacing and
                           t.reading.q11 == "move"):
        return None
    return f"order {before} became {after}"


# --- delta obligations --------------------------------------------------------------------------

def _skipped_by_reading(t: Transition, held: Message) -> bool:
    """A delta on a held activity that the reading skips before its patch: one of an earlier
    run that no snapshot of this run restated (Q23=run-scoped, ACT-RUN-BASELINE), or one whose
    owning invocation ended in this run (Q15=closed, SUB-ENDED-ACTIVITY). Consults Q23 and Q15
    only where the consumer does."""
    mid = t.event.message_id
    return (mid in t.before.earlier and t.reading.q23 == "run-scoped") or \
        (held.owner is not None and held.owner in t.before.ended and t.reading.q15 == "closed")


def _delta(t: Transition):
    """(event, held-before) for a live ACTIVITY_DELTA, unless the reading skips it before its
    patch (:func:`_skipped_by_reading`): the delta properties do not judge such a delta."""
    if not isinstance(t.event, ActivityDelta) or not _live(t):
        return None, None
    held = t.target_before
    if held is not None and held.is_activity and _skipped_by_reading(t, held):
        return None, None
    return t.event, held


@prop("P12-delta-missing-tolerated",
      "A delta on a missing or non-activity id changes nothing and never fails the run.",
      clauses=("ACT-DELTA-MISSING", "ACT-DELTA-MISSING-NOFAIL", "ACT-TOLERATED"),
      kind="step", events=_DELTA, scope="target")
def _delta_missing(t: Transition) -> Optional[str]:
    ev, held = _delta(t)
    if ev is None or (held is not None and held.is_activity):
        return None
    if t.fatal is not None:
        return f"a delta on a {'missing' if held is None else held.role} target failed the run"
    if _ids(t.before) != _ids(t.after) or t.before.messages != t.after.messages:
        return "a skipped delta changed the messages"
    return None


_SKIPPED_DELTA_CODES = frozenset((ACTIVITY_DELTA_TARGET_MISSING,
                                  ACTIVITY_DELTA_TARGET_NOT_ACTIVITY))
"""The warnings a skipped delta may surface (P13)."""


@prop("P13-delta-missing-warned",
      "A skipped delta surfaces a warning.",
      clauses=("ACT-DELTA-MISSING-WARN",),
      kind="step", severity="should", events=_DELTA, scope="target")
def _delta_missing_warned(t: Transition) -> Optional[str]:
    ev, held = _delta(t)
    if ev is None or (held is not None and held.is_activity) or t.fatal is not None:
        return None
    return None if _codes(t) & _SKIPPED_DELTA_CODES else "a skipped delta surfaced no warning"


def _opener(reading: Reading, held: Message) -> Optional[str]:
    """Who opened a held activity, for a tagged delta to agree with: its owner, or under
    Q4-opener=first the owner it was first opened under. Consults the knob only where the two
    differ (so that cached checks stay shared across the readings it cannot tell apart)."""
    if held.owner == held.first_owner:
        return held.owner
    return held.owner if reading.q4_opener == "current" else held.first_owner


def _owner_ok(t: Transition, ev: ActivityDelta, held) -> bool:
    tag = ev.subagent_run_id
    if tag is None:
        return True
    return tag == _opener(t.reading, held) or t.reading.q4 == "accept"


def _reference_patch(ev: ActivityDelta, held):
    ops = ev.patch
    if any(not op.recognised for op in ops):
        return None  # Q20 decides; not judged here
    return apply_patch(held.content, ops)


@prop("P14-delta-applies",
      "A delta whose patch applies sets content to the RFC 6902 result and type to its own.",
      clauses=("ACT-DELTA-APPLY", "ACT-DELTA-RETYPE", "SNP-CURRENT-VALUE", "SCH-JSON-PATCH",
               "SNP-OPEN-OPS", "PRC-KEEP-OPEN", "EVM-SUPPORT-PATTERNS"),
      kind="step", events=_DELTA, scope="target")
def _delta_applies(t: Transition) -> Optional[str]:
    ev, held = _delta(t)
    if ev is None or held is None or not held.is_activity or t.fatal is not None:
        return None
    if not _owner_ok(t, ev, held):
        return None
    outcome = _reference_patch(ev, held)
    if outcome is None or not outcome.ok or not is_json_object_text(outcome.result):
        return None
    m = t.target_after
    if m is None or (m.content, m.activity_type) != (outcome.result, ev.activity_type):
        return (f"patch that applies gave {m.to_wire() if m else 'nothing'}, expected content "
                f"{outcome.result} type {ev.activity_type}")
    return None


@prop("P15-patch-atomic",
      "A patch that does not apply leaves content exactly as it was.",
      clauses=("SNP-ATOMIC", "SNP-NO-PARTIAL", "SNP-KEEP-PRIOR", "SNP-TEST-FAIL"),
      kind="step", events=_DELTA, scope="target")
def _patch_atomic(t: Transition) -> Optional[str]:
    ev, held = _delta(t)
    if ev is None or held is None or not held.is_activity:
        return None
    outcome = _reference_patch(ev, held)
    if outcome is None or outcome.ok:
        return None
    m = t.target_after
    if m is not None and m.content != held.content:
        return f"failed patch ({outcome.reason}) changed content {held.content} -> {m.content}"
    return None


@prop("P16-patch-failure-surfaced",
      "A patch that does not apply is surfaced as a warning (or fails the run).",
      clauses=("SNP-SURFACE-FAILURE", "ACT-DELTA-PATCHFAIL"),
      kind="step", events=_DELTA, scope="target")
def _patch_failure_surfaced(t: Transition) -> Optional[str]:
    ev, held = _delta(t)
    if ev is None or held is None or not held.is_activity or not _owner_ok(t, ev, held):
        return None
    outcome = _reference_patch(ev, held)
    if outcome is None or outcome.ok:
        return None
    if t.fatal is None and ACTIVITY_PATCH_FAILED not in _codes(t):
        return f"patch did not apply ({outcome.reason}) and nothing was surfaced"
    return None


@prop("P17-tolerated-not-fatal",
      "Under Q13=tolerate a patch that does not apply never fails the run.",
      clauses=("ACT-TOLERATED", "SNP-KEEP-PRIOR"),
      kind="step", events=_DELTA, scope="target")
def _tolerated_not_fatal(t: Transition) -> Optional[str]:
    ev, held = _delta(t)
    if ev is None or held is None or not held.is_activity or t.fatal is None:
        return None
    outcome = _reference_patch(ev, held)
    if outcome is None or outcome.ok:
        return None
    # the knobs last: read only where they change the verdict
    if t.reading.q13 == "tolerate" and _owner_ok(t, ev, held):
        return f"a patch that does not apply failed the run ({t.fatal.code})"
    return None


@prop("P18-metadata-merged",
      "Activity metadata merges key by key, last write wins, never recursively.",
      clauses=("MET-MERGE", "MET-NO-RECURSE", "MET-ACTIVITY-TARGET", "EVM-KEEP-NULL-IN-OPEN",
               "MET-KEEP-UNKNOWN"),
      kind="step", events=_ACTIVITY, scope="target")
def _metadata_merged(t: Transition) -> Optional[str]:
    """Where the event certainly applies to a held activity (a delta whose patch applies from a
    permitted owner; a replace:false under Q1=merge that agrees), its metadata merges key by key
    over what the message held."""
    ev = t.event
    if not isinstance(ev, (ActivitySnapshot, ActivityDelta)) or ev.metadata is None or \
            t.fatal is not None or not _live(t):
        return None
    held = t.target_before
    if held is None or not held.is_activity:
        return None
    if isinstance(ev, ActivityDelta):
        if not _owner_ok(t, ev, held) or _skipped_by_reading(t, held):
            return None
        outcome = _reference_patch(ev, held)
        if outcome is None or not outcome.ok or not is_json_object_text(outcome.result):
            return None
    elif ev.replacing or any(w.code == ACTIVITY_OWNER_MISMATCH for w in t.warnings):
        return None
    m = t.target_after
    expected = merge_metadata(held.metadata, ev.metadata)
    # the knob last: read only where it changes the verdict
    if (m is None or m.metadata != expected) and \
            (isinstance(ev, ActivityDelta) or (t.reading.q1 == "merge" and
                                               t.reading.q19 == "activity-row")):
        return f"metadata {m.metadata if m else None}, expected key-by-key merge {expected}"
    return None


@prop("P19-untagged-accepted",
      "An untagged delta is never an ownership mismatch.",
      clauses=("SUB-ACCEPT-UNTAGGED", "SUB-UNTAGGED-CONTINUES", "SUB-INTERLEAVE"),
      kind="step", events=_DELTA, scope="target")
def _untagged_accepted(t: Transition) -> Optional[str]:
    ev, held = _delta(t)
    if ev is None or held is None or not held.is_activity or ev.subagent_run_id is not None:
        return None
    if any(w.code == ACTIVITY_OWNER_MISMATCH for w in t.warnings) or (
            t.fatal is not None and t.fatal.code == ACTIVITY_OWNER_MISMATCH):
        return "an untagged delta was rejected as an ownership mismatch"
    return None


@prop("P20-mismatch-rejected",
      "A delta whose tag disagrees with the opener never changes the activity (unless the reading "
      "accepts it).",
      clauses=("SUB-REJECT-MISMATCH", "SUB-OWNER-AGREE"),
      kind="step", events=_DELTA, scope="target")
def _mismatch_rejected(t: Transition) -> Optional[str]:
    ev, held = _delta(t)
    if ev is None or held is None or not held.is_activity or ev.subagent_run_id is None:
        return None
    opener = _opener(t.reading, held)
    if ev.subagent_run_id == opener or t.reading.q4 == "accept":
        return None
    m = t.target_after
    if t.fatal is None and (m is None or m.content != held.content or
                            m.activity_type != held.activity_type):
        return f"a delta attributed to {ev.subagent_run_id} changed {opener or 'parent'}'s activity"
    if t.reading.q4 == "fatal" and t.fatal is None:
        return "a disagreeing delta was not rejected"
    return None


# --- processing, lifecycle ----------------------------------------------------------------------

@prop("P21-malformed-fatal",
      "A malformed known value fails the run.",
      clauses=("PRC-MALFORMED-FATAL", "ACT-MALFORMED-FATAL", "SNP-MALFORMED-OP",
               "EVM-ABSENT-NOT-NULL", "MET-NOT-NULL"),
      kind="step", events=(Malformed,), scope="target")
def _malformed_fatal(t: Transition) -> Optional[str]:
    if not isinstance(t.event, Malformed) or t.before.halted:
        return None
    if t.event.shim is not None and t.reading.q21 == "shim":
        return None
    return None if t.fatal is not None else f"malformed {t.event.path} did not fail the run"


@prop("P22-unknown-not-fatal",
      "An unrecognised event type never fails the run or changes the messages.",
      clauses=("PRC-UNKNOWN-NOT-FATAL", "PRC-DROP-STRIP", "EVX-ACCEPT-FAMILIES"),
      kind="step", events=(Unrecognised,), scope="target")
def _unknown_not_fatal(t: Transition) -> Optional[str]:
    if not isinstance(t.event, Unrecognised) or t.before.halted:
        return None
    if t.fatal is not None:
        return f"unrecognised event {t.event.name} failed the run"
    if t.after.messages != t.before.messages:
        return "an unrecognised event changed the messages"
    return None


@prop("P23-stripped-warned",
      "Every stripped member is surfaced.",
      clauses=("PRC-DROP-STRIP", "PRC-STRIP-POSITION"),
      kind="step", severity="should", scope="target")
def _stripped_warned(t: Transition) -> Optional[str]:
    if not t.event.notices or t.before.halted or isinstance(t.event, Malformed):
        return None
    n = sum(1 for w in t.warnings if w.code == UNKNOWN_MEMBER_STRIPPED)
    return None if n >= len(t.event.notices) else \
        f"{len(t.event.notices)} member(s) stripped, {n} warning(s)"


@prop("P24-lifecycle-enforced",
      "An event before RUN_STARTED or after the run closed, RUN_FINISHED with anything still "
      "open, or an unbalanced step (its owner's step opened twice or finished unopened), fails "
      "the stream.",
      clauses=("LIF-AFTER-CLOSE", "LIF-STREAM-START", "LIF-CLOSE-BEFORE-FINISH",
               "LIF-STEP-REJECT", "SUB-STEP-PER-OWNER"),
      kind="step", scope="target")
def _after_close_rejected(t: Transition) -> Optional[str]:
    if t.before.halted or isinstance(t.event, (Unrecognised, Malformed)):
        return None
    if t.before.run == "idle" and not isinstance(t.event, (RunStarted, RunError)):
        return None if t.fatal is not None else f"{t.event.type_name} accepted before RUN_STARTED"
    if isinstance(t.event, RunFinished) and t.before.run == "active" and (
            t.before.open_texts or t.before.open_tools or t.before.subagents or
            t.before.open_steps):
        return None if t.fatal is not None else "RUN_FINISHED accepted with messages, tool calls, " \
            "steps or invocations still open"
    if isinstance(t.event, (StepStarted, StepFinished)) and t.before.run == "active":
        is_open = (t.event.subagent_run_id, t.event.step_name) in t.before.open_steps
        if is_open == isinstance(t.event, StepStarted) and t.fatal is None:
            return f"{t.event.type_name} {t.event.step_name!r} accepted on an unbalanced step"
        return None
    if t.before.run not in ("finished", "errored"):
        return None
    if isinstance(t.event, (RunStarted, Unrecognised, Malformed)) or (
            isinstance(t.event, RunError) and t.before.run == "finished"):
        return None
    return None if t.fatal is not None else f"{t.event.type_name} accepted after the run closed"


@prop("P25-run-error-keeps",
      "RUN_ERROR marks the run failed, abandons open invocations and keeps the activity delivered "
      "before it.",
      clauses=("LIF-FAILED-KEEPS", "LIF-RUN-ERROR-FAILED", "LIF-RUN-ERROR-SURFACE",
               "SUB-RUN-ERROR-ABANDON"),
      kind="step", events=(RunError,), scope="step")
def _run_error_keeps(t: Transition) -> Optional[str]:
    if not isinstance(t.event, RunError) or t.before.halted or t.fatal is not None:
        return None
    lost = [m.id for m in t.before.messages if m.is_activity and _held(t.after, m.id) is None]
    if lost:
        return f"RUN_ERROR dropped activity {lost}"
    if t.after.run != "errored":
        return f"after RUN_ERROR the run reads {t.after.run!r}, not failed"
    if t.after.subagents:
        return f"invocations still open after RUN_ERROR: {sorted(t.after.subagents)}"
    return None


# --- MESSAGES_SNAPSHOT --------------------------------------------------------------------------

def _ms(t: Transition):
    """A live MESSAGES_SNAPSHOT whose ids are distinct (with one id twice, which copy a consumer
    keeps is not stated; the producer broke EVM-ID-UNIQUE)."""
    if not isinstance(t.event, MessagesSnapshot) or not _live(t) or t.fatal is not None:
        return None
    ids = [m.id for m in t.event.messages]
    return t.event if len(ids) == len(set(ids)) else None


@prop("P26-ms-in-place",
      "MESSAGES_SNAPSHOT never reorders messages the consumer holds.",
      clauses=("STA-MS-IN-PLACE",),
      kind="step", events=_MS, scope="step")
def _ms_in_place(t: Transition) -> Optional[str]:
    ev = _ms(t)
    if ev is None:
        return None
    incoming = {m.id for m in ev.messages}
    before = [i for i in _ids(t.before) if i in incoming and i in _ids(t.after)]
    after = [i for i in _ids(t.after) if i in before]
    return None if before == after else f"held messages reordered: {before} -> {after}"


@prop("P27-ms-restated",
      "Every message in MESSAGES_SNAPSHOT is held as the snapshot states it, owner included.",
      clauses=("STA-MS-COMPLETE", "STA-MS-OWNERSHIP", "ACT-MSGSNAP"),
      kind="step", events=_MS, scope="step")
def _ms_restated(t: Transition) -> Optional[str]:
    ev = _ms(t)
    if ev is None:
        return None
    for m in ev.messages:
        got = _held(t.after, m.id)
        if got is None or (got.role, got.content, got.activity_type, got.owner) != (
                m.role, m.content, m.activity_type, m.owner):
            return f"{m.id} not taken from the snapshot: {got.to_wire() if got else 'missing'}"
        if m.is_activity and got.metadata != m.metadata and t.reading.q6_ms == "replace":
            return f"{m.id} kept metadata {got.metadata} the snapshot does not state"
    return None


@prop("P28-ms-appends",
      "Messages met first in MESSAGES_SNAPSHOT are appended in snapshot order.",
      clauses=("STA-MS-APPEND",),
      kind="step", events=_MS, scope="step")
def _ms_appends(t: Transition) -> Optional[str]:
    ev = _ms(t)
    if ev is None:
        return None
    held = set(_ids(t.before))
    new = [m.id for m in ev.messages if m.id not in held]
    tail = _ids(t.after)[len(_ids(t.after)) - len(new):] if new else []
    return None if tail == new else \
        f"messages met first should end the list in snapshot order {new}; the list is {_ids(t.after)}"


@prop("P29-ms-activity-survives",
      "A MESSAGES_SNAPSHOT carrying no activity drops no held activity.",
      clauses=("STA-MS-DROP-EXCEPT",),
      kind="step", events=_MS, scope="step")
def _ms_activity_survives(t: Transition) -> Optional[str]:
    return _ms_keeps(t, _is_activity, "activity")


def _is_activity(m: Message) -> bool:
    return m.is_activity


def _ms_keeps(t: Transition, kind: Callable[[Message], bool], what: str) -> Optional[str]:
    """The witness when ``t``'s MESSAGES_SNAPSHOT carries no message of ``kind`` and the held
    messages of that kind are not all kept (``what`` names the kind); else None (P29, P42)."""
    ev = _ms(t)
    if ev is None or any(kind(m) for m in ev.messages):
        return None
    lost = [m.id for m in t.before.messages if kind(m) and _held(t.after, m.id) is None]
    return f"snapshot without {what} dropped {lost}" if lost else None


@prop("P30-ms-self-revoking",
      "A MESSAGES_SNAPSHOT carrying activity declares the complete activity set (under "
      "Q8=self-revoking).",
      clauses=("STA-MS-SELF-REVOKE",),
      kind="step", events=_MS, scope="step")
def _ms_self_revoking(t: Transition) -> Optional[str]:
    ev = _ms(t)
    if ev is None or not any(m.is_activity for m in ev.messages):
        return None
    incoming = {m.id for m in ev.messages}
    kept = [m.id for m in t.after.messages if m.is_activity and m.id not in incoming]
    return f"snapshot carrying activity kept {kept}" if kept and \
        t.reading.q8 == "self-revoking" else None


# --- relation: producer belief vs consumer state -------------------------------------------------

def _target_belief(belief: Belief, event: Event):
    """What the producer believes of the activity the event names (None when nothing): all P31
    reads of a belief."""
    return belief.activity(event.message_id)


@prop("P31-agree-after-snapshot",
      "After a conformant snapshot that creates or replaces, consumer and producer agree on "
      "content, type and owner.",
      clauses=("SNP-ADOPT-NEXT", "ACT-REPAIR", "SNP-RESYNC", "SNP-SHOULD-SNAPSHOT"),
      kind="relation", events=_SNAPSHOT, belief_view=_target_belief, scope="target")
def _agree_after_replace(t: Transition) -> Optional[str]:
    ev = t.event
    if not isinstance(ev, ActivitySnapshot) or not t.conformant or t.fatal is not None or \
            not _live(t):
        return None
    held_before = t.target_before
    if held_before is not None and not (held_before.is_activity and ev.replacing):
        return None
    if held_before is None and ev.message_id in t.before.held_ever and t.reading.q10 == "seen":
        return None
    if held_before is None and not ev.replacing and \
            t.belief_before.activity(ev.message_id) is not None:
        return None  # declined by the producer, on an activity the consumer no longer holds
    belief = t.belief_after.activity(ev.message_id)
    m = t.target_after
    if belief is None or m is None:
        return f"{ev.message_id}: producer believes {belief}, consumer holds {m}"
    if (m.content, m.activity_type, m.owner) != (belief.content, belief.activity_type,
                                                  belief.owner):
        return (f"{ev.message_id}: after the snapshot the consumer holds {m.content}/"
                f"{m.activity_type}/{m.owner}, the producer believes {belief.content}/"
                f"{belief.activity_type}/{belief.owner}")
    return None


def _unknown_op(t: Transition):
    ev = t.event
    if not isinstance(ev, ActivityDelta) or not _live(t) or \
            all(op.recognised for op in ev.patch) or t.reading.q20 != "drop-op":
        return None
    held = t.target_before
    if held is None or not held.is_activity or not _owner_ok(t, ev, held) or \
            _skipped_by_reading(t, held):
        return None
    return ev


@prop("P33-unknown-op-not-fatal",
      "Under Q20=drop-op an unrecognised op never fails the run by itself.",
      clauses=("SNP-UNKNOWN-OP", "PRC-UNKNOWN-NOT-FATAL"),
      kind="step", events=_DELTA, scope="target")
def _unknown_op_not_fatal(t: Transition) -> Optional[str]:
    ev = _unknown_op(t)
    if ev is None or t.fatal is None:
        return None
    held = t.target_before
    rest = apply_patch(held.content, tuple(op for op in ev.patch if op.recognised))
    if rest.ok and (is_json_object_text(rest.result) or t.reading.q7 != "fatal") or \
            (not rest.ok and t.reading.q13 == "tolerate"):
        return f"an unrecognised op failed the run ({t.fatal.code})"
    return None


@prop("P34-unknown-op-surfaced",
      "Under Q20=drop-op a dropped op is surfaced.",
      clauses=("SNP-UNKNOWN-OP", "PRC-DROP-STRIP"),
      kind="step", severity="should", events=_DELTA, scope="target")
def _unknown_op_surfaced(t: Transition) -> Optional[str]:
    ev = _unknown_op(t)
    if ev is None or t.fatal is not None:
        return None
    return None if UNKNOWN_PATCH_OP_DROPPED in _codes(t) else \
        "an unrecognised op was dropped without a warning"


@prop("P35-text-leaves-activity",
      "Text and tool-call events never change an activity message.",
      clauses=("TXT-TARGET-ACTIVITY", "SCH-ACTIVITY-MESSAGE", "SCH-MESSAGE-UNION"),
      kind="step", events=_TEXT_OR_TOOL, scope="target")
def _text_leaves_activity(t: Transition) -> Optional[str]:
    mid = getattr(t.event, "message_id", None)
    if not t.event.type_name.startswith(("TEXT_MESSAGE", "TOOL_CALL")) or mid is None:
        return None
    held = _held(t.before, mid)
    if held is None or not held.is_activity:
        return None
    after = _held(t.after, mid)
    return None if after == held else f"a {t.event.type_name} changed activity {mid}: " \
        f"{after.to_wire() if after else 'dropped'}"


@prop("P36-raw-event-ignored",
      "The step does the same without rawEvent.",
      clauses=("EVM-NO-RAWEVENT",),
      kind="step", scope="step")
def _raw_event_ignored(t: Transition) -> Optional[str]:
    if t.restep is None or t.event.raw_event is None or t.before.halted:
        return None
    stripped = by_identity(_STRIPPED_EVENTS, t.event, _without_raw_event)
    try:
        state, _, fatal = t.restep(t.before, stripped)
    except Exception as exc:  # noqa: BLE001 - the consumer's own failure on the variant input
        return f"the step raised {type(exc).__name__}: {exc} when rawEvent was removed"
    if (state, fatal is None) != (t.after, t.fatal is None):
        return "the step's outcome changed when rawEvent was removed"
    return None


def decided_alike(t: Transition, before: ConsumerState, event: Event) -> bool:
    """Whether P37's re-step on the renamed ``before`` and ``event`` certainly gives the renamed
    result of ``t``, read off decisions where the engine's ``t.restep`` offers them (the
    all-readings sweep's does, :meth:`properties.search.sweep_cache.SweepCache.restep_for`):
    ``t.restep.decision(before, event)``, the :class:`~model.consumer.Decision` the reading
    reaches on the renamed activity event's focus (its knobs recorded as consulted, as the
    re-step would record them), is the renamed decision of the step itself,
    ``t.restep.step_decision()`` (:func:`renamed_decision_alike`). :func:`model.consumer.settle`
    treats message ids as names only (it compares and collects them, never reads their
    spelling; a test checks it on every settle of a sweep), so settling the renamed decision on
    the renamed state gives the renamed state after. False when the engine offers no decisions
    (any other consumer), the event is not decided on a focus, or the decisions differ: then P37
    re-steps and compares the states. Raises what deciding the renamed event raised.

    An engine may also offer ``t.restep.renamed_alike(before, event, alike)``, the same answer
    where it is True, read off a memo of whole decision trees (the sweep's compares the step's
    tree with the renamed event's tree on the renamed focus once, leaf by leaf, with ``alike``,
    and shares the result across every state with that focus); it returns False where it does
    not know, and then the decisions are read as above."""
    known = getattr(t.restep, "renamed_alike", None)
    if known is not None and known(before, event, renamed_decision_alike):
        return True
    decision = getattr(t.restep, "decision", None)
    if decision is None:
        return False
    theirs = decision(before, event)
    if theirs is None:
        return False
    mine = t.restep.step_decision()
    return mine is not None and renamed_decision_alike(mine, theirs)


def renamed_decision_alike(mine, theirs) -> bool:
    """Whether ``theirs``, a :class:`~model.consumer.Decision` on the renamed input, is the
    renamed ``mine``: the same change, baseline and skip marks, a fatal or none alike, and the
    message renamed by P37's renaming (:func:`decided_alike`)."""
    if theirs.change != mine.change or theirs.baseline != mine.baseline or \
            theirs.skipped != mine.skipped or (theirs.fatal is None) != (mine.fatal is None):
        return False
    message = mine.message
    return theirs.message == (None if message is None else _renamed_message(message))


def _opaque(message_id: str) -> str:
    """The renaming P37 applies: injective, and sharing no id with any vocabulary."""
    return "op4que:" + message_id[::-1]


@lru_cache(maxsize=1 << 18)
def _renamed_state(state: ConsumerState) -> ConsumerState:
    """``state`` with every message id renamed by :func:`_opaque` (memoised: the exhaustive
    search checks P37 on the same states many times, the state after one step being the state
    before the next ones, and a renamed state computes its hash once)."""
    f = _opaque
    return state.but(messages=tuple(map(_renamed_message, state.messages)),
                     held_ever=frozenset(f(i) for i in state.held_ever),
                     open_texts=frozenset(f(i) for i in state.open_texts),
                     open_tools=tuple((c, f(m)) for c, m in state.open_tools),
                     stale=frozenset(f(i) for i in state.stale),
                     earlier=frozenset(f(i) for i in state.earlier))


@lru_cache(maxsize=1 << 16)
def _renamed_message(m: Message) -> Message:
    """``m`` renamed by :func:`_opaque` (memoised: a message held by many states is renamed
    once, and the renamed states share it, so comparing them compares it by identity)."""
    return Message(_opaque(m.id), m.role, m.content, m.activity_type, m.metadata, m.owner,
                   m.first_owner, m.other)


def _renamed_event(event: Event) -> Event:
    """``event`` with its ``message_id`` renamed by :func:`_opaque`."""
    return replace(event, message_id=_opaque(event.message_id))


def _without_raw_event(event: Event) -> Event:
    """``event`` without its ``rawEvent`` (what P36 compares the step against)."""
    return replace(event, raw_event=None)


def by_identity(memo: dict, value: object, make: Callable[[object], object]) -> object:
    """``make(value)``, memoised in ``memo`` by the value's identity, for values the searches
    pass as the same objects many times and that cost a full hash to look up by equality
    (events hash all their fields). ``memo`` maps ``id(value)`` to ``(value, made)``: an entry
    holds the value itself, so its id cannot pass to another object while the entry stands. The
    memo is emptied when it reaches 4,096 entries. Raises what ``make`` raises."""
    hit = memo.get(id(value))
    if hit is not None and hit[0] is value:
        return hit[1]
    made = make(value)
    if len(memo) >= 4096:
        memo.clear()
    memo[id(value)] = (value, made)
    return made


_RENAMED_EVENTS: dict = {}
"""The memo of :func:`_renamed_event` for P37 (see :func:`by_identity`)."""

_STRIPPED_EVENTS: dict = {}
"""The memo of :func:`_without_raw_event` for P36 (see :func:`by_identity`)."""


@prop("P37-ids-opaque",
      "Renaming message ids renames the result and changes nothing else.",
      clauses=("EVM-OPAQUE-ID", "ACT-PER-MESSAGE"),
      kind="step", events=_ACTIVITY, scope="step")
def _ids_opaque(t: Transition) -> Optional[str]:
    if t.restep is None or not isinstance(t.event, (ActivitySnapshot, ActivityDelta)) or \
            t.before.halted:
        return None
    before, event = _renamed_state(t.before), by_identity(_RENAMED_EVENTS, t.event,
                                                           _renamed_event)
    try:
        if decided_alike(t, before, event):
            return None
        state, _, fatal = t.restep(before, event)
    except Exception as exc:  # noqa: BLE001 - the consumer's own failure on the variant input
        return f"the step raised {type(exc).__name__}: {exc} when the message ids were renamed"
    if (fatal is None) != (t.fatal is None) or state != _renamed_state(t.after):
        return "renaming the message ids changed what the step did"
    return None


@prop("P38-delta-keeps-owner",
      "A delta never changes who owns the activity.",
      clauses=("SUB-OWNER-AGREE", "ACT-ATTR-KEEP"),
      kind="step", events=_DELTA, scope="target")
def _delta_keeps_owner(t: Transition) -> Optional[str]:
    ev, held = _delta(t)
    if ev is None or held is None or not held.is_activity or t.fatal is not None:
        return None
    m = t.target_after
    if m is not None and m.owner != held.owner:
        return f"a delta changed the owner from {held.owner!r} to {m.owner!r}"
    return None


@prop("P39-fatal-justified",
      "The consumer fails the run only where the draft (under the reading) makes the input fatal.",
      clauses=("ACT-TOLERATED", "PRC-UNKNOWN-NOT-FATAL", "EVX-ACCEPT-FAMILIES",
               "SUB-ACCEPT-UNANNOUNCED", "ACT-DELTA-MISSING-NOFAIL", "LIF-STEP-OVERLAP"),
      kind="step", scope="target")
def _fatal_justified(t: Transition) -> Optional[str]:
    """A consumer fails the run only where the draft, under the reading, makes it fatal."""
    if t.fatal is None or t.before.halted:
        return None
    ev, r = t.event, t.reading
    if isinstance(ev, Malformed):
        return None if ev.shim is None or r.q21 == "fatal" else _fatal_justified_inner(t, ev.shim)
    return _fatal_justified_inner(t, ev)


def _fatal_justified_inner(t: Transition, ev: Event) -> Optional[str]:
    r, before = t.reading, t.before
    if isinstance(ev, (Unrecognised,)):
        return f"an unrecognised event failed the run ({t.fatal.code})"
    if isinstance(ev, Malformed):
        return None
    if isinstance(ev, RunStarted):
        return None if before.run == "active" else f"RUN_STARTED failed the run ({t.fatal.code})"
    if isinstance(ev, RunError):
        return None if before.run == "errored" else f"RUN_ERROR failed the stream ({t.fatal.code})"
    if before.run != "active":
        return None  # before start or after close
    if isinstance(ev, RunFinished):
        return None if (before.open_texts or before.open_tools or before.subagents or
                        before.open_steps) else \
            f"a clean RUN_FINISHED failed the run ({t.fatal.code})"
    if isinstance(ev, (StepStarted, StepFinished)):  # unbalanced (LIF-STEP-REJECT)
        is_open = (ev.subagent_run_id, ev.step_name) in before.open_steps
        return None if is_open == isinstance(ev, StepStarted) else \
            f"{ev.type_name} on a balanced step failed the run ({t.fatal.code})"
    mid = getattr(ev, "message_id", None)
    held = _held(before, mid) if mid is not None else None
    tag = getattr(ev, "subagent_run_id", None)
    if isinstance(ev, ActivitySnapshot) and held is not None:
        if not held.is_activity and r.q9 == "fatal":
            return None
        if held.is_activity and ev.replace is False and (
                (tag is not None and tag != held.owner) or
                (tag is None and held.owner is not None and r.q2 == "parent")) and \
                r.q3 == "fatal":
            return None
    if isinstance(ev, ActivityDelta) and held is not None and held.is_activity:
        if tag is not None and tag != _opener(r, held) and r.q4 == "fatal":
            return None
        unknown = any(not op.recognised for op in ev.patch)
        if unknown and r.q20 == "fatal":
            return None
        if unknown and r.q20 == "skip-patch" and r.q13 == "fatal":
            return None
        outcome = apply_patch(held.content, tuple(op for op in ev.patch if op.recognised))
        if not outcome.ok and r.q13 == "fatal":
            return None
        if outcome.ok and not is_json_object_text(outcome.result) and (
                r.q7 == "fatal" or (r.q7 == "skip" and r.q13 == "fatal")):
            return None
    if ev.type_name in ("TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END") and held is not None and \
            not held.is_activity and tag is not None and tag != held.owner:
        return None
    if isinstance(ev, TextMessageStart) and held is None and ev.message_id in before.open_texts \
            and r.x1 == "drop-open":  # its stream outlived its message (MS-IN-FLIGHT-OPEN)
        return None
    if ev.type_name == "STATE_DELTA" and any(not op.recognised for op in ev.delta) and \
            r.q20 == "fatal":
        return None
    return f"{ev.type_name} failed the run ({t.fatal.code}) where the draft makes nothing fatal"


@prop("P40-activity-persists",
      "An event that does not address an activity leaves it exactly as it was, in place (run "
      "boundaries and subagent ends included).",
      clauses=("LIF-RUN-SCOPED", "LIF-FAILED-KEEPS", "SUB-INTERLEAVE", "ACT-PER-MESSAGE",
               "MET-NO-TARGET"),
      kind="step", scope="step")
def _untouched_activity_persists(t: Transition) -> Optional[str]:
    """Activity messages persist (they have no open or close): an event that does not address an
    activity leaves it exactly as it was, in the same relative order."""
    if t.before.halted or isinstance(t.event, MessagesSnapshot) or \
            t.after.messages is t.before.messages:
        return None
    target = getattr(t.event, "message_id", None)
    if isinstance(t.event, Malformed) and t.event.shim is not None:
        target = getattr(t.event.shim, "message_id", None)
    if not isinstance(t.event, (ActivitySnapshot, ActivityDelta, Malformed)):
        target = None  # text and tool events aimed at an activity may not change it either
    held, now = t.before.messages, t.after.messages
    if len(held) == len(now):  # the common case first: at most the target replaced in place
        for m, n in zip(held, now):
            if m is not n and (m.id != target or n.id != target):
                break
        else:
            return None
    before = [m for m in held if m.is_activity and m.id != target]
    after = {m.id: m for m in t.after.messages if m.is_activity}
    for m in before:
        kept = after.get(m.id)
        if kept is not m and kept != m:
            return f"activity {m.id} changed or vanished on {t.event.type_name}: " \
                f"{kept.to_wire() if kept is not None else 'gone'}"
    order_before = [m.id for m in before]
    untouched = set(order_before)
    order_after = [m.id for m in t.after.messages if m.id in untouched]
    if order_before != order_after:
        return f"activity order {order_before} became {order_after} on {t.event.type_name}"
    return None


# --- the blind red team's: agent state, reasoning messages, subagent ends ----------------


@prop("P41-state-follows",
      "The agent state is the last STATE_SNAPSHOT's value amended by every STATE_DELTA since, "
      "whoever sent it: a snapshot replaces the state (no merge), a delta that applies gives its "
      "RFC 6902 result and one that does not leaves the state as it was.",
      clauses=("SNP-REPLACE", "SNP-CURRENT-VALUE", "SNP-ATOMIC", "STA-PATCHFAIL"),
      kind="step", events=(StateSnapshot, StateDelta), scope="step")
def _state_follows(t: Transition) -> Optional[str]:
    """State is run-scoped, so a subagent's update counts as the parent's (the subagents page,
    section State); a delta holding an op RFC 6902 does not define is reading Q20's and not
    judged here."""
    if not _live(t) or t.fatal is not None:
        return None
    ev = t.event
    if isinstance(ev, StateSnapshot):
        want = ev.snapshot
    elif not isinstance(ev, StateDelta):
        return None
    else:
        if not all(op.recognised for op in ev.delta):
            return None
        outcome = apply_patch(t.before.state, ev.delta)
        want = outcome.result if outcome.ok else t.before.state
    if t.after.state == want:
        return None
    sender = f" from {ev.subagent_run_id}" if ev.subagent_run_id is not None else ""
    return f"{ev.type_name}{sender} left the state {t.after.state}, not {want}"


@prop("P42-ms-reasoning-survives",
      "A MESSAGES_SNAPSHOT carrying no reasoning message drops no held reasoning message (the "
      "exception for client-only material is per role).",
      clauses=("STA-MS-DROP-EXCEPT", "STA-MS-SELF-REVOKE"),
      kind="step", events=_MS, scope="step")
def _ms_reasoning_survives(t: Transition) -> Optional[str]:
    return _ms_keeps(t, _is_reasoning, "reasoning")


def _is_reasoning(m: Message) -> bool:
    return m.role == "reasoning"


def _owner_of(state: ConsumerState, message_id: Optional[str]) -> Optional[str]:
    held = _held(state, message_id) if message_id is not None else None
    return held.owner if held is not None else None


@prop("P43-subagent-end-keeps-others",
      "SUBAGENT_FINISHED or SUBAGENT_ERROR closes no text message or tool call another owner "
      "has open.",
      clauses=("SUB-INTERLEAVE",),
      kind="step", events=(SubagentFinished, SubagentError), scope="step")
def _subagent_end_keeps_others(t: Transition) -> Optional[str]:
    if not isinstance(t.event, (SubagentFinished, SubagentError)) or not _live(t) or \
            t.fatal is not None:
        return None
    ended = t.event.subagent_run_id
    closed = [mid for mid in sorted(t.before.open_texts) if mid not in t.after.open_texts
              and _owner_of(t.before, mid) != ended]
    closed += [call for call, mid in t.before.open_tools if (call, mid) not in t.after.open_tools
               and _owner_of(t.before, mid) != ended]
    return f"the end of {ended} closed {closed}, which it does not own" if closed else None


# --- checked across readings --------------------------------------------------------------------

# properties.search.ambiguity (and explore's all-readings sweep) check P32 across readings.
declare("P32-readings-agree",
        "On a conformant trace, every reading gives the same verdict (violated: an ambiguity of "
        "the draft).",
        clauses=("IDX-CONFORMANCE",),
        kind="difference", events=())


# --- the catalogue ------------------------------------------------------------------------------

PROPERTIES: tuple[Property, ...] = _REGISTRY.close()
"""Every property, in declaration order (id order, P32 after P43): the order the engines
check them in."""

PROPERTY_BY_ID = {p.id: p for p in PROPERTIES}

MUST_PROPERTIES: tuple[Property, ...] = tuple(p for p in PROPERTIES if p.severity == "must")
"""The properties whose failure is a conformance failure (the SHOULD-level ones left out)."""


# --- properties of the settlement table (not in PROPERTIES) --------------------------------------

def _content_open(t: Transition) -> Optional[str]:
    """PQ25: content is open by key. The event's content (a snapshot's, a MESSAGES_SNAPSHOT's
    activity entries', a delta's operation values) survives the wire unchanged, with no member
    stripped inside it, and the content an activity holds after the step is one the producer
    stated or a patch computed from it: the content before, the snapshot's (or the listed
    entry's), or the RFC 6902 result of the delta's patch (whole, or its recognised operations,
    Q20). A key stripped or a null turned into absence anywhere gives another JSON value."""
    if t.before.halted:
        return None
    ev = t.event
    kept = by_identity(_WIRE_KEPT, ev, _wire_keeps_content)
    if kept is not None:
        return kept
    before = {m.id: m.content for m in t.before.messages if m.is_activity}
    if isinstance(ev, MessagesSnapshot):
        listed = {m.id: m.content for m in ev.messages if m.role == "activity"}
        for m in t.after.messages:
            if m.is_activity and m.id in listed and m.content not in (listed[m.id],
                                                                      before.get(m.id)):
                return f"activity {m.id} holds {m.content}, not the listed {listed[m.id]}"
        return None
    m = t.target_after
    if m is None or not m.is_activity or m.content == before.get(m.id):
        return None
    if isinstance(ev, ActivitySnapshot):
        allowed = {ev.content}
    else:
        held = before.get(m.id)
        allowed = set()
        for ops in (ev.patch, tuple(op for op in ev.patch if op.recognised)):
            outcome = apply_patch(held, ops) if held is not None else None
            if outcome is not None and outcome.ok:
                allowed.add(outcome.result)
    return None if m.content in allowed else \
        f"activity {m.id} holds {m.content}: neither the content stated nor a patch result"


def _wire_keeps_content(ev: Event) -> Optional[str]:
    """None when ``ev``'s wire form parses back with the same content, patch and messages and
    no member stripped; else what changed."""
    from model.wire import parse_event
    parsed = parse_event(ev.to_wire())
    if type(parsed) is not type(ev) or parsed.notices:
        return f"{ev.type_name} did not survive the wire ({type(parsed).__name__}, stripped " \
            f"{list(parsed.notices)})"
    for name in ("content", "patch", "messages"):
        if getattr(parsed, name, None) != getattr(ev, name, None):
            return f"{ev.type_name}'s {name} changed on the wire"
    return None


_WIRE_KEPT: dict = {}
"""The memo of :func:`_wire_keeps_content` (see :func:`by_identity`)."""

CONTENT_OPEN = Property(
    "PQ25-content-open",
    "Content is open by key: processing never strips a content key and nulls inside content "
    "are data (the content held is one the producer stated, or a patch result on it, and it "
    "survives the wire unchanged).",
    ("SCH-ACTIVITY-MESSAGE", "PRC-KEEP-OPEN", "ACT-TYPE-OPEN", "EVM-ABSENT-NOT-NULL"),
    "step", _content_open, events=(ActivitySnapshot, ActivityDelta, MessagesSnapshot))
"""The property of open question Q25 (notes N79, N88), checked by the settlement table's
exhaustive all-readings search (:func:`properties.questions.settle`) over a vocabulary whose
contents hold unknown keys and nulls. Not in :data:`PROPERTIES`: the catalogue's engines and
its zoo table do not check it (the table's search does)."""

QUESTION_PROPERTIES: dict[str, Property] = {CONTENT_OPEN.id: CONTENT_OPEN}
"""The settlement table's properties checked by exhaustive search, by id."""
for _p in QUESTION_PROPERTIES.values():  # the clause ids exist (as the registry checks)
    _missing = [c for c in _p.clauses if c not in clause_registry()]
    if _missing:  # pragma: no cover - a declaration error, raised at import
        raise PropertyDeclarationError(_p.id, f"clause ids not in the clause registry: {_missing}")
del _p


def check_transition(t: Transition, properties: Sequence[Property] = PROPERTIES
                     ) -> Optional[tuple[Property, str]]:
    """The first property ``t`` violates, with its witness text; None when all hold. A property
    whose ``events`` exclude the event's class is not called (it could not fire)."""
    return first_violation(t, applicable(properties, type(t.event)))


def applicable(properties: Sequence[Property], event_type: type) -> tuple[Property, ...]:
    """The properties that can fire on an event of class ``event_type`` (see
    :meth:`Property.applies_to`), in order; memoised per (properties, class)."""
    key = (id(properties), event_type)
    hit = _APPLICABLE.get(key)
    if hit is not None and hit[0] is properties:
        return hit[1]
    found = tuple(p for p in properties if p.applies_to(event_type))
    if len(_APPLICABLE) >= 4096:
        _APPLICABLE.clear()
    _APPLICABLE[key] = (properties, found)
    return found


_APPLICABLE: dict = {}
"""Memo of :func:`applicable` by (identity of the property sequence, event class); an entry
holds the sequence itself, so a reused identity never returns another sequence's answer."""


def first_violation(t: Transition, properties: Sequence[Property]
                    ) -> Optional[tuple[Property, str]]:
    """The first of ``properties`` that ``t`` violates, with its witness text, calling every
    check given (callers pass :func:`applicable` ones); None when all hold."""
    for p in properties:
        witness = p.check(t)
        if witness is not None:
            return p, witness
    return None


def coverage_table() -> dict[str, tuple[str, ...]]:
    """``{property id: clause ids}``, for :func:`model.clauses.coverage` (kind ``property``)."""
    return {p.id: p.clauses for p in PROPERTIES}
