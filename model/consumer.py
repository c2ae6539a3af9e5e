"""The consumer: a pure ``step(state, event, reading)`` over immutable, hashable states.

``step`` implements the consumer side of the activity page and of the parts of the snapshot
pattern, state, subagent, metadata, processing, lifecycle and run-input pages that activity meets.
It never raises for protocol input: every outcome (a new state, warnings, a fatal verdict) is a
value. Where the draft is open, the step asks the :class:`~model.readings.Reading` (a knob per
open question) and consults a knob only when the options would lead to different results, so that
running one trace under all readings forks no more than it must.

Each branch of the step has an id, declared once in :mod:`model.branches` (:data:`BRANCHES` maps
the ids to the clause ids they implement) and written at the code that takes it: every
:class:`StepResult` and :class:`Decision` names the branch the step returned on, and each warning
and fatal names the branch that surfaced it and cites its first clause, so that coverage, findings
and the peer report can say which sentence of the draft is at stake. The warning and fatal codes
are declared once in :mod:`model.codes`.

An activity event concerns the one message it names (ACT-PER-MESSAGE), and the step says so in
its structure: it reads the event's :class:`Focus` (that message, whether it is last, whether its
id was ever held), :func:`decide` chooses a :class:`Decision` from the focus, the event and the
reading alone, and :func:`settle` applies it to the whole state. A search may therefore decide
once per (focus, event) and settle on every state with that focus.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Optional, Union

from model.events import (
    ActivityDelta, ActivitySnapshot, Event, Malformed, Message, MessagesSnapshot, RunError,
    RunFinished, RunStarted, StateDelta, StateSnapshot, StepFinished, StepStarted, SubagentError,
    SubagentFinished, SubagentStarted, TextMessageContent, TextMessageEnd, TextMessageStart,
    ToolCallArgs, ToolCallEnd, ToolCallResult, ToolCallStart, Unrecognised,
)
from model.frozen import fast_init
from model.branches import BRANCHES
from model.codes import (
    ACTIVITY_CONTENT_NOT_OBJECT, ACTIVITY_DELTA_TARGET_MISSING, ACTIVITY_DELTA_TARGET_NOT_ACTIVITY,
    ACTIVITY_DELTA_NO_RUN_BASELINE, ACTIVITY_ID_SEEN_BEFORE, ACTIVITY_OWNER_ENDED,
    ACTIVITY_OWNER_MISMATCH, ACTIVITY_PATCH_FAILED,
    ACTIVITY_TARGET_NOT_ACTIVITY, EVENT_AFTER_RUN_CLOSED, MALFORMED_ACTIVITY_EVENT,
    MALFORMED_EVENT, NULL_MEMBER_SHIMMED, RUN_ALREADY_ACTIVE, RUN_FINISHED_WITH_OPEN,
    STATE_PATCH_FAILED, STEP_ALREADY_OPEN, STEP_NOT_OPEN, STREAM_NOT_STARTED,
    TEXT_MESSAGE_ID_REUSED, TEXT_MESSAGE_STILL_OPEN, TEXT_OWNER_MISMATCH,
    TEXT_TARGET_IS_ACTIVITY, TEXT_TARGET_MISSING, TOOL_CALL_TARGET_MISSING, UNKNOWN_EVENT_DROPPED,
    UNKNOWN_MEMBER_STRIPPED, UNKNOWN_PATCH_OP, UNKNOWN_PATCH_OP_DROPPED,
)
from model.json_values import EMPTY_OBJECT, JsonText, freeze, is_json_object_text, thaw
from model.patch import apply_patch
from model.readings import PartialReading, Reading

__all__ = ["ConsumerState", "Warning", "Fatal", "StepResult", "step", "run_input",
           "initial_state", "BRANCHES", "merge_metadata", "find_message", "Focus", "Decision",
           "focus", "focus_fields", "decide", "settle", "KEEP", "CREATE", "PUT", "MOVE", "BECOME", "HALT"]

AnyReading = Union[Reading, PartialReading]


@fast_init
@dataclass(frozen=True, slots=True, init=False)
class Warning:  # noqa: A001 - the field's own word for it
    """A surfaced, non-fatal problem.

    Attributes:
        code: e.g. ``ACTIVITY_PATCH_FAILED``.
        message_id: the message concerned, or None.
        clause: the clause id that asks for (or allows) the warning (its branch's first).
        detail: what happened, in words.
        branch: the branch that surfaced it (a key of :data:`BRANCHES`; ``""`` when a step
            function other than the model's built it).
    """

    code: str
    message_id: Optional[str]
    clause: str
    detail: str = ""
    branch: str = ""
    _hash: int = field(default=0, init=False, repr=False, compare=False)


@fast_init
@dataclass(frozen=True, slots=True, init=False)
class Fatal:
    """The run fails here.

    Attributes:
        code: e.g. ``MALFORMED_ACTIVITY_EVENT``.
        clause: the clause that makes it fatal.
        detail: what was wrong, in words (for malformed input: the JSON path and reason).
        message_id: the message concerned, or None.
        branch: the branch that failed the run (a key of :data:`BRANCHES`; ``""`` when a step
            function other than the model's built it).
    """

    code: str
    clause: str
    detail: str = ""
    message_id: Optional[str] = None
    branch: str = ""
    _hash: int = field(default=0, init=False, repr=False, compare=False)


@fast_init
@dataclass(frozen=True, slots=True, init=False)
class ConsumerState:
    """What a consumer holds; immutable and hashable.

    Attributes:
        messages: the ordered message list (position = sequence position, EVM-ARRIVAL-ORDER).
        held_ever: ids of every message the consumer has held ("seen", reading Q10).
        run: ``"idle"`` (no run yet), ``"active"``, ``"finished"`` or ``"errored"``.
        open_texts: ids of text messages opened and not yet ended (run-scoped, LIF-RUN-SCOPED).
        open_tools: ``(tool call id, message id)`` of tool calls opened and not yet ended.
        state: canonical text of the agent state (``{}`` when the run input carried none).
        subagents: ids of announced, still active subagent invocations.
        open_steps: ``(owner, step name)`` of steps opened and not yet finished in this run
            (steps are per owner, SUB-STEP-PER-OWNER; None is the parent agent).
        halted: True once a fatal verdict has been reached; a halted state ignores every event.
        stale: ids of activities one of whose deltas was skipped since their last snapshot
            (their content may have diverged from the producer's; reading Q14).
        ended: subagent run ids whose invocation ended in this run (SUBAGENT_FINISHED or
            SUBAGENT_ERROR; reading Q15).
        earlier: ids of activities held from an earlier run (or from history held before the
            first) that no snapshot of this run has restated (reading Q23).
    """

    messages: tuple[Message, ...] = ()
    held_ever: frozenset[str] = frozenset()
    run: str = "idle"
    open_texts: frozenset[str] = frozenset()
    open_tools: tuple[tuple[str, str], ...] = ()
    state: JsonText = EMPTY_OBJECT
    subagents: frozenset[str] = frozenset()
    open_steps: frozenset[tuple[Optional[str], str]] = frozenset()
    halted: bool = False
    stale: frozenset[str] = frozenset()
    ended: frozenset[str] = frozenset()
    earlier: frozenset[str] = frozenset()
    _hash: int = field(default=0, init=False, repr=False, compare=False)

    def message(self, message_id: str) -> Optional[Message]:
        """The held message with this id, or None."""
        for m in self.messages:
            if m.id == message_id:
                return m
        return None

    def to_json(self) -> dict:
        """The state as JSON: ``{"messages", "state", "run", "openMessages", "subagents"}``."""
        return {"messages": [m.to_wire() for m in self.messages], "state": thaw(self.state),
                "run": self.run, "openMessages": sorted(self.open_texts),
                "subagents": sorted(self.subagents)}


def initial_state(state_value: object = None, messages: tuple[Message, ...] = ()) -> ConsumerState:
    """A consumer before its first event: optional starting agent state (the run input's
    ``state``, SNP-CURRENT-VALUE) and held messages (history the consumer already has)."""
    return ConsumerState(messages=tuple(messages), held_ever=frozenset(m.id for m in messages),
                         state=freeze({} if state_value is None else state_value))


@fast_init
@dataclass(frozen=True, slots=True, init=False)
class StepResult:
    """What one step leaves.

    Attributes:
        state: the next state.
        warnings: surfaced in order.
        fatal: None or the failure.
        branch: the branch the step returned on, a key of :data:`BRANCHES` whose ``where`` is
            ``"step"`` (:data:`model.branches.STEP_BRANCHES`); the branch of ``fatal`` when
            there is one. ``""`` only from a step function other than the model's (a zoo
            mutant) that builds its own result without naming one.
    """

    state: ConsumerState
    warnings: tuple[Warning, ...] = ()
    fatal: Optional[Fatal] = None
    branch: str = ""


def find_message(messages: tuple[Message, ...], message_id: str) -> int:
    """Index of the message with ``message_id`` in ``messages``, or -1."""
    for i, m in enumerate(messages):
        if m.id == message_id:
            return i
    return -1


@lru_cache(maxsize=1 << 14)
def merge_metadata(held: Optional[JsonText], incoming: Optional[JsonText]) -> Optional[JsonText]:
    """Key-by-key, last-write-wins, non-recursive merge of two metadata objects
    (MET-MERGE, MET-NO-RECURSE; a ``null`` under a key is data, EVM-KEEP-NULL-IN-OPEN).

    Returns ``held`` unchanged when the event carries no metadata. Memoised (both arguments
    are canonical texts; the result is a string)."""
    if incoming is None:
        return held
    if held is None or held == EMPTY_OBJECT:
        return incoming
    merged = thaw(held)
    merged.update(thaw(incoming))
    return freeze(merged)


def _w(branch: str, code: str, message_id: Optional[str], detail: str = "") -> Warning:
    return Warning(code, message_id, BRANCHES[branch][0], detail, branch)


def _f(branch: str, code: str, detail: str = "", message_id: Optional[str] = None) -> Fatal:
    return Fatal(code, BRANCHES[branch][0], detail, message_id, branch)


# --- the step -----------------------------------------------------------------------------------

def step(state: ConsumerState, event: Event, reading: AnyReading) -> StepResult:
    """Apply one event.

    Args:
        state: the consumer state before the event.
        event: a typed event (see :mod:`model.events`).
        reading: a :class:`~model.readings.Reading` (or a ``PartialReading``, which raises
            ``KnobUnset`` when the step needs a knob it leaves open).

    Returns:
        A :class:`StepResult` naming the branch it returned on. A halted state (after a fatal)
        is returned unchanged (branch ``lifecycle.halted``). A malformed event shimmed under
        Q21=shim steps as its shim and names the shim's branch (its NULL_MEMBER_SHIMMED warning
        names ``malformed.null-shim``); an event the model accepts without interpreting names
        ``passthrough.accept``.

    Clauses: see :data:`BRANCHES`; every branch below names its entry.
    """
    if state.halted:
        return StepResult(state, (), None, "lifecycle.halted")
    fields = focus_fields(state, event)
    if fields is not None:  # an activity event: decided on what it reads of the state (focus)
        return settle(state, event, decide(Focus(*fields), event, reading))
    notices = _notices(event) if event.notices else ()

    if isinstance(event, Malformed):
        if event.shim is not None and reading.q21 == "shim":
            inner = step(state, event.shim, reading)
            shimmed = _w("malformed.null-shim", NULL_MEMBER_SHIMMED, _mid(event.shim),
                         f"{event.path}: null treated as absent")
            return StepResult(inner.state, notices + (shimmed,) + inner.warnings, inner.fatal,
                              inner.branch)
        code = MALFORMED_ACTIVITY_EVENT if event.name.startswith("ACTIVITY_") else \
            MALFORMED_EVENT
        fatal = Fatal(code, event.clause, f"{event.path}: {event.reason}", _mid_wire(event),
                      "malformed.fatal")
        return StepResult(state.but(halted=True), notices, fatal, "malformed.fatal")

    if isinstance(event, Unrecognised):
        warn = _w("unrecognised.drop", UNKNOWN_EVENT_DROPPED, None,
                  f"event type {event.name!r} is not described; dropped")
        return StepResult(state, (warn,) + notices, None, "unrecognised.drop")

    # Run lifecycle (verification stage, after enforcement).
    if isinstance(event, RunStarted):
        if state.run == "active":
            return _halt(state, notices, _f("lifecycle.one-active", RUN_ALREADY_ACTIVE,
                                            "RUN_STARTED while a run is active"))
        # activities held now come from an earlier run (Q23); invocations end with their run
        earlier = frozenset(m.id for m in state.messages if m.is_activity) \
            if state.messages else frozenset()
        return StepResult(state.but(run="active", open_texts=frozenset(), open_tools=(),
                                  subagents=frozenset(), open_steps=frozenset(),
                                  ended=frozenset(), earlier=earlier), notices, None,
                          "lifecycle.run-boundary")
    if isinstance(event, RunError):
        if state.run == "errored":
            return _halt(state, notices, _f("lifecycle.after-close", EVENT_AFTER_RUN_CLOSED,
                                            "RUN_ERROR after RUN_ERROR"))
        return StepResult(state.but(run="errored", open_texts=frozenset(), open_tools=(),
                                  subagents=frozenset(), open_steps=frozenset(),
                                  ended=frozenset()), notices, None, "lifecycle.run-error")
    if state.run != "active":
        if state.run == "idle":
            return _halt(state, notices, _f("lifecycle.not-started", STREAM_NOT_STARTED,
                                            f"{event.type_name} before RUN_STARTED",
                                            _mid(event)))
        return _halt(state, notices, _f("lifecycle.after-close", EVENT_AFTER_RUN_CLOSED,
                                        f"{event.type_name} after the run closed", _mid(event)))
    if isinstance(event, RunFinished):
        still_open = sorted(state.open_texts) + [c for c, _ in state.open_tools] + \
            sorted(state.subagents) + _step_names(state.open_steps)
        if still_open:
            return _halt(state, notices, _f("lifecycle.open-at-finish", RUN_FINISHED_WITH_OPEN,
                                            f"still open at RUN_FINISHED: {', '.join(still_open)}"))
        return StepResult(state.but(run="finished", open_texts=frozenset(), open_tools=()),
                          notices, None, "lifecycle.run-boundary")

    handler = _HANDLERS.get(type(event))
    if handler is None:  # Passthrough and anything the model accepts without interpreting
        return StepResult(state, notices, None, "passthrough.accept")
    result = handler(state, event, reading)
    if notices:
        return StepResult(result.state, notices + result.warnings, result.fatal, result.branch)
    return result


def _step_names(open_steps: frozenset) -> list[str]:
    """Open steps as they read in a fatal's detail: ``step "plan"`` or ``step "plan" of sub-1``."""
    return sorted(f"step {name!r}" + (f" of {owner}" if owner is not None else "")
                  for owner, name in open_steps)


def _notices(event: Event) -> tuple[Warning, ...]:
    """A warning for each unknown member the wire layer stripped from ``event``."""
    return tuple(_w("member.strip", UNKNOWN_MEMBER_STRIPPED, _mid(event), path)
                 for path in event.notices)


def _article(role: str) -> str:
    return ("an " if role[:1] in "aeiou" else "a ") + role


def _mid(event: Event) -> Optional[str]:
    return getattr(event, "message_id", None)


def _mid_wire(event: Malformed) -> Optional[str]:
    mid = thaw(event.wire).get("messageId")
    return mid if isinstance(mid, str) else None


def _halt(state: ConsumerState, warnings: tuple, fatal: Fatal) -> StepResult:
    return StepResult(state.but(halted=True), tuple(warnings), fatal, fatal.branch)


def _put(messages: tuple[Message, ...], index: int, message: Message) -> tuple[Message, ...]:
    return messages[:index] + (message,) + messages[index + 1:]


# --- activity events: decided on their focus ------------------------------------------------

@fast_init
@dataclass(frozen=True, slots=True, init=False)
class Focus:
    """What the step of an activity event (ACTIVITY_SNAPSHOT, ACTIVITY_DELTA) reads of the
    state, once the run is active and nothing has halted it: the decision (:func:`decide`)
    depends on this, the event and the reading alone, and :func:`settle` applies it to the
    whole state (ACT-PER-MESSAGE: an activity event concerns the one message it names).

    Attributes:
        held: the held message with the event's ``message_id``, or None.
        last: that message is the last of the list (reading Q11 moves a replaced activity
            there only when it is not).
        seen: the id was ever held (reading Q10).
        stale: one of the activity's deltas was skipped since its last snapshot (reading Q14).
        owner_ended: the held message's owner is an invocation that ended in this run (Q15).
        earlier: the activity comes from an earlier run and no snapshot of this run restated it
            (reading Q23).
    """

    held: Optional[Message]
    last: bool
    seen: bool
    stale: bool = False
    owner_ended: bool = False
    earlier: bool = False


KEEP, CREATE, PUT, MOVE, BECOME, HALT = "keep", "create", "put", "move", "become", "halt"
"""The changes a :class:`Decision` makes (see :func:`settle`)."""


@fast_init
@dataclass(frozen=True, slots=True, init=False)
class Decision:
    """What an activity event does, decided on its :class:`Focus`.

    Attributes:
        change: :data:`KEEP` (the state stands), :data:`CREATE` (append ``message``, its id
            now held), :data:`PUT` (``message`` replaces the held one in place), :data:`MOVE`
            (``message`` replaces the held one, moved to the end), :data:`BECOME` (``message``
            replaces a held non-activity message in place, whose text, if open, is closed) or
            :data:`HALT` (the run fails: ``fatal``).
        message: the message put in place, or None for KEEP and HALT.
        warnings: surfaced in order (before them, :func:`settle` puts the event's notices).
        fatal: the failure, for HALT; otherwise None.
        branch: the branch decided on (a key of :data:`BRANCHES`), which the step's result
            names.
        baseline: the event is a new baseline moment for the activity (a snapshot, applied or
            declined, SNP-SPENT): :func:`settle` clears its stale and earlier-run marks.
        skipped: a delta for a held activity was skipped: :func:`settle` marks it stale.
    """

    change: str
    message: Optional[Message] = None
    warnings: tuple[Warning, ...] = ()
    fatal: Optional[Fatal] = None
    branch: str = ""
    baseline: bool = False
    skipped: bool = False


def focus(state: ConsumerState, event: Event) -> Optional[Focus]:
    """The :class:`Focus` of ``event`` in ``state``, when the step decides the event on its
    focus alone: an ACTIVITY_SNAPSHOT or ACTIVITY_DELTA, the run active, the state not halted.
    None otherwise (the step then reads the whole state)."""
    fields = focus_fields(state, event)
    return None if fields is None else Focus(*fields)


def focus_fields(state: ConsumerState, event: Event) -> Optional[tuple]:
    """The fields of :func:`focus` in order, ``(held, last, seen, stale, owner_ended,
    earlier)`` (``Focus(*fields)`` is the focus), or None where it is None: what a search keys
    its memo of decisions by without building a Focus."""
    if state.halted or state.run != "active" or type(event) not in _DECIDERS:
        return None
    messages, mid = state.messages, event.message_id
    i = find_message(messages, mid)
    if i < 0:
        return None, False, mid in state.held_ever, False, False, False
    held = messages[i]
    return (held, i == len(messages) - 1, mid in state.held_ever, mid in state.stale,
            held.owner in state.ended if state.ended else False, mid in state.earlier)


def decide(f: Focus, event: Event, reading: AnyReading) -> Decision:
    """The :class:`Decision` of an activity event on its focus ``f`` under ``reading``; the
    reading's knobs are consulted as the step consults them (ACTIVITY_SNAPSHOT: SNP-*, ACT-*,
    MET-*, Q1, Q2, Q3, Q9, Q10, Q11, Q14, Q18, Q19; ACTIVITY_DELTA: ACT-DELTA-*, Q4, Q4-opener,
    Q5, Q6, Q7, Q13, Q15, Q20, Q23; every branch names its clauses in :data:`BRANCHES`).

    Raises KeyError when ``event`` is not an activity event."""
    return _DECIDERS[type(event)](f, event, reading)


def settle(state: ConsumerState, event: Event, d: Decision) -> StepResult:
    """Apply the decision ``d`` on ``event`` (whose :func:`focus` in ``state`` it was decided
    on) to the whole state, with the event's notices before the decision's warnings.

    Returns a :class:`StepResult` naming the decision's branch; KEEP returns ``state`` itself
    unless the decision marks the activity (``baseline``, ``skipped``).
    Raises ValueError for a change that is not one of :data:`KEEP` .. :data:`HALT`."""
    warnings = _notices(event) + d.warnings if event.notices else d.warnings
    change, branch = d.change, d.branch
    if d.skipped or d.baseline:  # a baseline is decided only on a marked focus
        state = _marked(state, event.message_id, d.skipped)
    if change == KEEP:
        return StepResult(state, warnings, None, branch)
    if change == HALT:
        return StepResult(state.but(halted=True), warnings, d.fatal, branch)
    messages, new = state.messages, d.message
    if change == CREATE:
        return StepResult(state.but(messages=messages + (new,),
                                    held_ever=state.held_ever | {new.id}), warnings, None, branch)
    i = find_message(messages, new.id)
    if change == PUT:
        return StepResult(state.but(messages=_put(messages, i, new)), warnings, None, branch)
    if change == MOVE:
        return StepResult(state.but(messages=messages[:i] + messages[i + 1:] + (new,)), warnings,
                          None, branch)
    if change == BECOME:
        return StepResult(state.but(messages=_put(messages, i, new),
                                    open_texts=state.open_texts - {new.id}), warnings, None,
                          branch)
    raise ValueError(f"unknown change {change!r}")


# --- ACTIVITY_SNAPSHOT --------------------------------------------------------------------------

def _snapshot_metadata(ev: ActivitySnapshot, reading: AnyReading) -> Optional[JsonText]:
    """The metadata an ACTIVITY_SNAPSHOT merges into its activity: its own (MET-ACTIVITY-TARGET),
    or none when reading Q19 takes the metadata table's catch-all row (MET-NO-TARGET). The knob
    is consulted only for a snapshot that carries metadata."""
    if ev.metadata is None or reading.q19 == "activity-row":
        return ev.metadata
    return None


def _marked(state: ConsumerState, message_id: str, skipped: bool) -> ConsumerState:
    """``state`` with the activity ``message_id`` marked stale (a delta for it was skipped), or
    with its stale and earlier-run marks cleared (a snapshot gave it a new baseline moment)."""
    if skipped:
        return state if message_id in state.stale else state.but(stale=state.stale | {message_id})
    # a baseline: the activity is stale or of an earlier run (its focus says so, and
    # _decide_snapshot decides a baseline only then)
    return state.but(stale=state.stale - {message_id}, earlier=state.earlier - {message_id})


def _decide_snapshot(f: Focus, ev: ActivitySnapshot, reading: AnyReading) -> Decision:
    """An ACTIVITY_SNAPSHOT's decision; on a marked activity (stale, or of an earlier run) it
    is also a new baseline moment, applied, declined or skipped (SNP-SPENT), unless it fails
    the run."""
    d = _decide_snapshot_change(f, ev, reading)
    if (f.stale or f.earlier) and d.change != HALT:
        return d.but(baseline=True)
    return d


def _decide_snapshot_change(f: Focus, ev: ActivitySnapshot, reading: AnyReading) -> Decision:
    held = f.held
    if held is None:
        if f.seen and reading.q10 == "seen":
            return Decision(KEEP, None, (_w("snapshot.seen-not-held", ACTIVITY_ID_SEEN_BEFORE,
                                            ev.message_id, "the id was held before and is not "
                                            "created again"),), None, "snapshot.seen-not-held")
        created = Message(id=ev.message_id, role="activity", content=ev.content,
                          activity_type=ev.activity_type, metadata=_snapshot_metadata(ev, reading),
                          owner=ev.subagent_run_id, first_owner=ev.subagent_run_id)
        return Decision(CREATE, created, (), None, "snapshot.create")
    if not held.is_activity:
        choice = reading.q9
        if choice == "fatal":
            return Decision(HALT, None, (), _f("snapshot.not-activity",
                                               ACTIVITY_TARGET_NOT_ACTIVITY,
                                               f"id is held by {_article(held.role)} message",
                                               ev.message_id), "snapshot.not-activity")
        if choice == "skip":
            return Decision(KEEP, None, (_w("snapshot.not-activity", ACTIVITY_TARGET_NOT_ACTIVITY,
                                            ev.message_id, f"id is held by {_article(held.role)} "
                                            "message; snapshot skipped"),), None,
                            "snapshot.not-activity")
        became = Message(id=ev.message_id, role="activity", content=ev.content,
                         activity_type=ev.activity_type, metadata=_snapshot_metadata(ev, reading),
                         owner=ev.subagent_run_id, first_owner=ev.subagent_run_id)
        return Decision(BECOME, became, (), None, "snapshot.not-activity")
    if ev.replacing:
        # Content and type replaced, never merged; owner re-minted; metadata keeps merging.
        new = held.but(content=ev.content, activity_type=ev.activity_type,
                       owner=ev.subagent_run_id,
                       metadata=merge_metadata(held.metadata, _snapshot_metadata(ev, reading)))
        if not f.last and reading.q11 == "move":
            return Decision(MOVE, new, (), None, "snapshot.replace")
        return Decision(PUT, new, (), None, "snapshot.replace")
    # replace: false on an existing activity: content, type and owner stand.
    tag = ev.subagent_run_id
    if tag is not None:
        disagrees = tag != held.owner
    elif held.owner is None:
        disagrees = False
    else:
        disagrees = reading.q2 == "parent"
    warnings: tuple[Warning, ...] = ()
    branch = "snapshot.replace-false"
    if disagrees:
        branch = "snapshot.owner-disagrees"
        reaction = reading.q3
        detail = f"replace:false snapshot attributed to {tag or 'the parent'} but the owner is " \
                 f"{held.owner or 'the parent'}"
        if reaction == "fatal":
            return Decision(HALT, None, (), _f("snapshot.owner-disagrees",
                                               ACTIVITY_OWNER_MISMATCH, detail, ev.message_id),
                            branch)
        if reaction == "skip":
            return Decision(KEEP, None, (_w("snapshot.owner-disagrees", ACTIVITY_OWNER_MISMATCH,
                                            ev.message_id, detail + "; snapshot skipped"),), None,
                            branch)
        if reaction == "warn":
            warnings = (_w("snapshot.owner-disagrees", ACTIVITY_OWNER_MISMATCH, ev.message_id,
                           detail),)
    if f.stale and (ev.content != held.content or ev.activity_type != held.activity_type) and \
            reading.q14 == "adopt":
        # a delta was skipped since the last snapshot: this one resynchronises (Q14=adopt),
        # content and type adopted, the owner standing, metadata merged (MET-MERGE)
        return Decision(PUT, held.but(content=ev.content, activity_type=ev.activity_type,
                                      metadata=merge_metadata(held.metadata,
                                                              _snapshot_metadata(ev, reading))),
                        warnings, None, "snapshot.resync")
    new = held
    if ev.activity_type != held.activity_type and reading.q18 == "schema":
        new = held.but(activity_type=ev.activity_type)  # the schema names content only (Q18)
    if ev.metadata is not None:
        merged = merge_metadata(held.metadata, ev.metadata)
        if merged != held.metadata and reading.q1 == "merge" and \
                _snapshot_metadata(ev, reading) is not None:
            new = new.but(metadata=merged)
    if new is not held:
        return Decision(PUT, new, warnings, None, branch)
    return Decision(KEEP, None, warnings, None, branch)


# --- ACTIVITY_DELTA -----------------------------------------------------------------------------

def _decide_delta(f: Focus, ev: ActivityDelta, reading: AnyReading) -> Decision:
    held = f.held
    if held is None:
        return Decision(KEEP, None, (_w("delta.missing", ACTIVITY_DELTA_TARGET_MISSING,
                                        ev.message_id, "no message with this id; delta skipped"),),
                        None, "delta.missing")
    if not held.is_activity:
        return Decision(KEEP, None, (_w("delta.not-activity", ACTIVITY_DELTA_TARGET_NOT_ACTIVITY,
                                        ev.message_id, f"id is held by {_article(held.role)} "
                                        "message; delta skipped"),), None, "delta.not-activity")
    if f.earlier and reading.q23 == "run-scoped":
        return Decision(KEEP, None, (_w("delta.earlier-run", ACTIVITY_DELTA_NO_RUN_BASELINE,
                                        ev.message_id, "the activity comes from an earlier run "
                                        "and no snapshot of this run restated it; delta "
                                        "skipped"),), None, "delta.earlier-run", False, True)
    if f.owner_ended and reading.q15 == "closed":
        return Decision(KEEP, None, (_w("delta.owner-ended", ACTIVITY_OWNER_ENDED, ev.message_id,
                                        f"the activity's owner {held.owner} ended in this run; "
                                        "delta skipped"),), None, "delta.owner-ended", False,
                        True)
    tag = ev.subagent_run_id
    if tag is not None and not (tag == held.owner and tag == held.first_owner):
        opener = held.owner if held.owner == held.first_owner or reading.q4_opener == "current" \
            else held.first_owner
        if tag != opener:
            detail = f"delta attributed to {tag} but the activity's opener is " \
                     f"{opener or 'the parent'}"
            reaction = reading.q4
            if reaction == "fatal":
                return Decision(HALT, None, (), _f("delta.owner-mismatch",
                                                   ACTIVITY_OWNER_MISMATCH, detail,
                                                   ev.message_id), "delta.owner-mismatch")
            if reaction == "skip":
                return Decision(KEEP, None, (_w("delta.owner-mismatch", ACTIVITY_OWNER_MISMATCH,
                                                ev.message_id, detail + "; delta skipped"),), None,
                                "delta.owner-mismatch", False, True)
    warnings: tuple[Warning, ...] = ()
    ops = ev.patch
    unknown = [op for op in ops if not op.recognised]
    failure: Optional[str] = None
    if unknown:
        reaction = reading.q20
        names = ", ".join(sorted({op.op for op in unknown}))
        if reaction == "fatal":
            return Decision(HALT, None, (), _f("delta.unknown-op", UNKNOWN_PATCH_OP,
                                               f"op {names} is not defined by RFC 6902",
                                               ev.message_id), "delta.unknown-op")
        if reaction == "drop-op":
            warnings = tuple(_w("delta.unknown-op", UNKNOWN_PATCH_OP_DROPPED, ev.message_id,
                                f"op {op.op!r} dropped from the patch") for op in unknown)
            ops = tuple(op for op in ops if op.recognised)
        else:
            failure = f"op {names} is not defined by RFC 6902; the patch does not apply"
    result_content: Optional[JsonText] = None
    branch = "delta.apply"
    if failure is None:
        outcome = apply_patch(held.content, ops)
        if outcome.ok:
            result_content = outcome.result
            if not is_json_object_text(result_content) and is_json_object_text(held.content):
                reaction = reading.q7
                if reaction == "fatal":
                    return Decision(HALT, None, warnings,
                                    _f("delta.non-object", ACTIVITY_CONTENT_NOT_OBJECT,
                                       "the patched content is not an object", ev.message_id),
                                    "delta.non-object")
                if reaction == "skip":  # handled as a failed patch (delta.patch-failed)
                    failure = "the patched content would not be an object"
                else:
                    branch = "delta.non-object"
        else:
            failure = outcome.reason
    if failure is not None:
        if reading.q13 == "fatal":
            return Decision(HALT, None, warnings, _f("delta.patch-failed", ACTIVITY_PATCH_FAILED,
                                                     failure, ev.message_id), "delta.patch-failed")
        warnings += (_w("delta.patch-failed", ACTIVITY_PATCH_FAILED, ev.message_id, failure),)
        new = held
        if ev.activity_type != held.activity_type and reading.q5 == "retype":
            new = new.but(activity_type=ev.activity_type)
        if ev.metadata is not None:
            merged = merge_metadata(held.metadata, ev.metadata)
            if merged != held.metadata and reading.q6 == "merge":
                new = new.but(metadata=merged)
        if new is held:
            return Decision(KEEP, None, warnings, None, "delta.patch-failed", False, True)
        return Decision(PUT, new, warnings, None, "delta.patch-failed", False, True)
    new = held.but(content=result_content, activity_type=ev.activity_type,
                   metadata=merge_metadata(held.metadata, ev.metadata))
    return Decision(PUT, new, warnings, None, branch)


_DECIDERS = {ActivitySnapshot: _decide_snapshot, ActivityDelta: _decide_delta}


# --- MESSAGES_SNAPSHOT --------------------------------------------------------------------------

def _messages_snapshot(state: ConsumerState, ev: MessagesSnapshot, reading: AnyReading
                       ) -> StepResult:
    incoming = {m.id: m for m in ev.messages}
    carried_roles = {m.role for m in ev.messages}
    activity_types = {m.activity_type for m in ev.messages if m.is_activity}
    branch = "messages-snapshot.reconcile"
    still_open: frozenset[str] = frozenset()
    kept: list[Message] = []
    for held in state.messages:
        if held.id in incoming:
            snap = incoming[held.id]
            if snap.is_activity and held.is_activity:
                meta = snap.metadata
                if held.metadata is not None:
                    merged = merge_metadata(held.metadata, snap.metadata)
                    if merged != snap.metadata and reading.q6_ms == "merge":
                        meta = merged
                # restating does not re-open: the opener stays the creating snapshot's owner
                # (reading Q4-opener=first; the producer monitor keeps it likewise)
                snap = snap.but(metadata=meta, first_owner=held.first_owner)
            kept.append(snap)  # replaced in place (STA-MS-IN-PLACE)
            continue
        if held.role in ("activity", "reasoning"):
            if held.role not in carried_roles:
                kept.append(held)  # client-only material survives (STA-MS-DROP-EXCEPT)
                continue
            if held.role == "activity":
                rule = reading.q8
                if rule == "keep" or (rule == "by-type" and held.activity_type not in activity_types):
                    kept.append(held)
            continue  # self-revoking: the snapshot declares the complete set (STA-MS-SELF-REVOKE)
        if held.id in state.open_texts:  # in flight: X1 decides
            branch = "messages-snapshot.in-flight"
            x1 = reading.x1
            if x1 == "preserve":
                kept.append(held)
            elif x1 == "drop-open":
                still_open = still_open | {held.id}  # the message goes, its stream stays open
            continue
        # dropped: the producer declares the complete set (STA-MS-COMPLETE)
    kept_ids = {m.id for m in kept}
    for m in ev.messages:
        if m.id not in kept_ids:
            kept.append(m)  # appended in snapshot order (STA-MS-APPEND)
            kept_ids.add(m.id)
    new_ids = frozenset(kept_ids)
    if state.stale or state.earlier:  # restated or dropped: the marks go (Q14, Q23)
        state = state.but(stale=frozenset(i for i in state.stale
                                          if i in new_ids and i not in incoming),
                          earlier=frozenset(i for i in state.earlier
                                            if i in new_ids and i not in incoming))
    return StepResult(state.but(messages=tuple(kept),
                              held_ever=state.held_ever | new_ids,
                              open_texts=_still_streaming(state, new_ids, still_open),
                              open_tools=tuple(t for t in state.open_tools if t[1] in new_ids)),
                      (), None, branch)


def _still_streaming(state: ConsumerState, new_ids: frozenset, dropped_open: frozenset
                     ) -> frozenset:
    """The open text streams after a MESSAGES_SNAPSHOT: those whose message it keeps, those it
    dropped in flight under X1=drop-open (``dropped_open``), and those whose message was not
    held before it (dropped in flight by an earlier snapshot under X1=drop-open, MS-IN-FLIGHT-OPEN).
    """
    open_texts = state.open_texts
    if not open_texts:
        return open_texts
    kept = open_texts & new_ids
    if kept == open_texts:
        return open_texts
    held = {m.id for m in state.messages}
    return frozenset(t for t in open_texts if t in kept or t in dropped_open or t not in held)


# --- text messages, tool calls, state, subagents ------------------------------------------------

def _text_target(state: ConsumerState, message_id: str) -> tuple[int, Optional[Warning]]:
    i = find_message(state.messages, message_id)
    if i >= 0 and state.messages[i].is_activity:
        return i, _w("text.target-activity", TEXT_TARGET_IS_ACTIVITY, message_id,
                     "text event aimed at an activity message; skipped")
    if i < 0:
        return i, _w("text.target-missing", TEXT_TARGET_MISSING, message_id,
                     "no message with this id; text event skipped")
    return i, None


def _text_owner_check(held: Message, tag: Optional[str]) -> Optional[Fatal]:
    if tag is not None and tag != held.owner:
        return _f("text.owner-mismatch", TEXT_OWNER_MISMATCH,
                  f"text continuation attributed to {tag} but the message is owned by "
                  f"{held.owner or 'the parent'}", held.id)
    return None


def _text_start(state: ConsumerState, ev: TextMessageStart, reading: AnyReading) -> StepResult:
    i = find_message(state.messages, ev.message_id)
    if i < 0 and ev.message_id in state.open_texts:  # dropped in flight, stream open (X1=drop-open)
        return _halt(state, (), _f("text.still-open", TEXT_MESSAGE_STILL_OPEN,
                                   "TEXT_MESSAGE_START for a message whose stream is still open",
                                   ev.message_id))
    if i >= 0:
        held = state.messages[i]
        if held.is_activity:
            return StepResult(state, (_w("text.target-activity", TEXT_TARGET_IS_ACTIVITY,
                                         ev.message_id, "text message opened on an activity "
                                         "message's id; skipped"),), None, "text.target-activity")
        return StepResult(state, (_w("text.target-missing", TEXT_MESSAGE_ID_REUSED,
                                     ev.message_id, f"id already held by {_article(held.role)} message; "
                                     "skipped"),), None, "text.target-missing")
    other = {"name": ev.name} if ev.name is not None else {}
    created = Message(id=ev.message_id, role=ev.role, content='""', metadata=ev.metadata,
                      owner=ev.subagent_run_id, other=freeze(other))
    return StepResult(state.but(messages=state.messages + (created,),
                              held_ever=state.held_ever | {ev.message_id},
                              open_texts=state.open_texts | {ev.message_id}),
                      (), None, "passthrough.accept")


def _text_continue(state: ConsumerState, ev, reading: AnyReading) -> StepResult:
    """TEXT_MESSAGE_CONTENT (appends ``delta``) and TEXT_MESSAGE_END (closes): both continue the
    message their START opened (SUB-REJECT-MISMATCH for a disagreeing tag)."""
    i, warn = _text_target(state, ev.message_id)
    if warn is not None:
        if i < 0 and ev.message_id in state.open_texts and isinstance(ev, TextMessageEnd):
            # the stream a MESSAGES_SNAPSHOT left open (X1=drop-open) ends here
            return StepResult(state.but(open_texts=state.open_texts - {ev.message_id}), (warn,),
                              None, warn.branch)
        return StepResult(state, (warn,), None, warn.branch)
    held = state.messages[i]
    fatal = _text_owner_check(held, ev.subagent_run_id)
    if fatal is not None:
        return _halt(state, (), fatal)
    new = held.but(metadata=merge_metadata(held.metadata, ev.metadata))
    open_texts = state.open_texts
    if isinstance(ev, TextMessageContent):
        text = (thaw(held.content) if held.content is not None else "") or ""
        new = new.but(content=freeze(text + ev.delta))
    else:
        open_texts = open_texts - {ev.message_id}
    return StepResult(state.but(messages=_put(state.messages, i, new), open_texts=open_texts),
                      (), None, "passthrough.accept")


def _tool_start(state: ConsumerState, ev: ToolCallStart, reading: AnyReading) -> StepResult:
    parent = ev.parent_message_id or ev.tool_call_id
    call = {"id": ev.tool_call_id, "type": "function",
            "function": {"name": ev.tool_call_name, "arguments": ""}}
    if ev.metadata is not None:
        call["metadata"] = thaw(ev.metadata)
    i = find_message(state.messages, parent)
    if i >= 0 and state.messages[i].is_activity:
        return StepResult(state, (_w("text.target-activity", TEXT_TARGET_IS_ACTIVITY, parent,
                                     "tool call aimed at an activity message; skipped"),), None,
                          "text.target-activity")
    if i < 0:
        msg = Message(id=parent, role="assistant", owner=ev.subagent_run_id,
                      other=freeze({"toolCalls": [call]}))
        msgs = state.messages + (msg,)
    else:
        held = state.messages[i]
        other = thaw(held.other)
        other["toolCalls"] = other.get("toolCalls", []) + [call]
        msgs = _put(state.messages, i, held.but(other=freeze(other)))
    return StepResult(state.but(messages=msgs, held_ever=state.held_ever | {parent},
                              open_tools=state.open_tools + ((ev.tool_call_id, parent),)),
                      (), None, "passthrough.accept")


def _tool_update(state: ConsumerState, tool_call_id: str, delta: Optional[str],
                 metadata: Optional[JsonText], close: bool) -> StepResult:
    owner_id = next((mid for cid, mid in state.open_tools if cid == tool_call_id), None)
    if owner_id is None:
        return StepResult(state, (_w("text.target-missing", TOOL_CALL_TARGET_MISSING, None,
                                     f"no open tool call {tool_call_id!r}; skipped"),), None,
                          "text.target-missing")
    i = find_message(state.messages, owner_id)
    held = state.messages[i]
    other = thaw(held.other)
    for call in other.get("toolCalls", []):
        if call.get("id") == tool_call_id:
            if delta:
                call["function"]["arguments"] += delta
            if metadata is not None:
                call["metadata"] = thaw(merge_metadata(freeze(call.get("metadata", {})), metadata))
    msgs = _put(state.messages, i, held.but(other=freeze(other)))
    tools = tuple(t for t in state.open_tools if t[0] != tool_call_id) if close else \
        state.open_tools
    return StepResult(state.but(messages=msgs, open_tools=tools), (), None, "passthrough.accept")


def _tool_args(state: ConsumerState, ev: ToolCallArgs, reading: AnyReading) -> StepResult:
    return _tool_update(state, ev.tool_call_id, ev.delta, ev.metadata, close=False)


def _tool_end(state: ConsumerState, ev: ToolCallEnd, reading: AnyReading) -> StepResult:
    return _tool_update(state, ev.tool_call_id, None, ev.metadata, close=True)


def _tool_result(state: ConsumerState, ev: ToolCallResult, reading: AnyReading) -> StepResult:
    i = find_message(state.messages, ev.message_id)
    if i >= 0:
        code = TEXT_TARGET_IS_ACTIVITY if state.messages[i].is_activity else \
            TEXT_MESSAGE_ID_REUSED
        branch = "text.target-activity" if state.messages[i].is_activity else "text.target-missing"
        return StepResult(state, (_w(branch, code, ev.message_id,
                                     "tool result on an id already held; skipped"),), None, branch)
    msg = Message(id=ev.message_id, role="tool", content=ev.content, metadata=ev.metadata,
                  owner=ev.subagent_run_id, other=freeze({"toolCallId": ev.tool_call_id}))
    return StepResult(state.but(messages=state.messages + (msg,),
                              held_ever=state.held_ever | {ev.message_id}),
                      (), None, "passthrough.accept")


def _state_snapshot(state: ConsumerState, ev: StateSnapshot, reading: AnyReading) -> StepResult:
    return StepResult(state.but(state=ev.snapshot), (), None, "state.snapshot")


def _state_delta(state: ConsumerState, ev: StateDelta, reading: AnyReading) -> StepResult:
    ops = ev.delta
    warnings: tuple[Warning, ...] = ()
    unknown = [op for op in ops if not op.recognised]
    if unknown:
        reaction = reading.q20
        if reaction == "fatal":
            return _halt(state, (), _f("delta.unknown-op", UNKNOWN_PATCH_OP,
                                       "an op is not defined by RFC 6902"))
        if reaction == "skip-patch":
            return StepResult(state, (_w("state.delta", STATE_PATCH_FAILED, None,
                                         "the patch holds an op RFC 6902 does not define"),), None,
                              "state.delta")
        warnings = tuple(_w("delta.unknown-op", UNKNOWN_PATCH_OP_DROPPED, None,
                            f"op {op.op!r} dropped from the patch") for op in unknown)
        ops = tuple(op for op in ops if op.recognised)
    outcome = apply_patch(state.state, ops)
    if not outcome.ok:
        return StepResult(state, warnings + (_w("state.delta", STATE_PATCH_FAILED, None,
                                                outcome.reason),), None, "state.delta")
    return StepResult(state.but(state=outcome.result), warnings, None, "state.delta")


def _subagent_started(state: ConsumerState, ev: SubagentStarted, reading: AnyReading) -> StepResult:
    return StepResult(state.but(subagents=state.subagents | {ev.subagent_run_id}), (), None,
                      "subagent.track")


def _subagent_ended(state: ConsumerState, ev, reading: AnyReading) -> StepResult:
    """SUBAGENT_FINISHED or SUBAGENT_ERROR: the invocation is no longer active, and has ended in
    this run (what its activities take afterwards is reading Q15's)."""
    return StepResult(state.but(subagents=state.subagents - {ev.subagent_run_id},
                                ended=state.ended | {ev.subagent_run_id}), (), None,
                      "subagent.track")


def _step_started(state: ConsumerState, ev: StepStarted, reading: AnyReading) -> StepResult:
    key = (ev.subagent_run_id, ev.step_name)
    if key in state.open_steps:
        return _halt(state, (), _f("step.unbalanced", STEP_ALREADY_OPEN,
                                   f"step {ev.step_name!r} is already open"
                                   + (f" for {ev.subagent_run_id}" if ev.subagent_run_id else "")))
    return StepResult(state.but(open_steps=state.open_steps | {key}), (), None, "step.track")


def _step_finished(state: ConsumerState, ev: StepFinished, reading: AnyReading) -> StepResult:
    key = (ev.subagent_run_id, ev.step_name)
    if key not in state.open_steps:
        return _halt(state, (), _f("step.unbalanced", STEP_NOT_OPEN,
                                   f"step {ev.step_name!r} is not open"
                                   + (f" for {ev.subagent_run_id}" if ev.subagent_run_id else
                                      " for the parent agent")))
    return StepResult(state.but(open_steps=state.open_steps - {key}), (), None, "step.track")


_HANDLERS = {
    MessagesSnapshot: _messages_snapshot,
    TextMessageStart: _text_start,
    TextMessageContent: _text_continue,
    TextMessageEnd: _text_continue,
    ToolCallStart: _tool_start,
    ToolCallArgs: _tool_args,
    ToolCallEnd: _tool_end,
    ToolCallResult: _tool_result,
    StateSnapshot: _state_snapshot,
    StateDelta: _state_delta,
    SubagentStarted: _subagent_started,
    SubagentFinished: _subagent_ended,
    SubagentError: _subagent_ended,
    StepStarted: _step_started,
    StepFinished: _step_finished,
}


def run_input(state: ConsumerState) -> list[dict]:
    """The ``messages`` a consumer would send in its next run input: every held message in
    order, activity messages stripped (branch ``run-input.strip``: ACT-STRIP-RUNINPUT,
    RIN-STRIP-ACTIVITY). Wire form."""
    return [m.to_wire() for m in state.messages if not m.is_activity]
