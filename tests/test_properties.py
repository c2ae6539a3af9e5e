"""The property catalogue against the zoo: every property is broken by one wrong consumer on a
hand-written wire trace (at the expected event), and the same trace leaves the reference consumer
clean under every property. Also: the declarations (order and fields of the catalogue, each
check the function its decorator sits on, the registry refusing each bad declaration), a reduced
zoo benchmark, determinism of the stateful search, and the reference consumer surviving both
machines.
"""
from __future__ import annotations

from collections import Counter
import importlib.util
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Optional

import pytest

from model.clauses import registry
from model.consumer import initial_state
from model.events import ActivityDelta, ActivitySnapshot
from model.readings import DRAFT, Reading
from model.verdict import Verdict, evaluate, verdict_key
import properties.catalogue as catalogue
from properties.catalogue import (MUST_PROPERTIES, PROPERTIES, PROPERTY_BY_ID, SCOPES, Property,
                                  PropertyDeclarationError, PropertyRegistry)
from properties.search.machines import check_trace_properties, consumer_machine, run_machine
from properties.zoo import MUTANT_BY_NAME, MUTANTS
from model.consumers import REFERENCE
from wirekit import RF, delta, snap, trace

SKIPPED = "P32-readings-agree"

# --- small wire builders ------------------------------------------------------------------------

REPLACE_N1 = {"op": "replace", "path": "/n", "value": 1}
REMOVE_MISSING = {"op": "remove", "path": "/missing"}
UNKNOWN_OP = {"op": "frobnicate", "path": "/n"}
RUN_ERROR = {"type": "RUN_ERROR", "message": "boom"}


def user(mid: str, text: str = "hi") -> dict:
    return {"id": mid, "role": "user", "content": text}


def activity(mid: str, content=None, atype: str = "PLAN") -> dict:
    return {"id": mid, "role": "activity", "activityType": atype,
            "content": {"n": 0} if content is None else content}


def ms(*messages: dict) -> dict:
    return {"type": "MESSAGES_SNAPSHOT", "messages": list(messages)}


# --- the table ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Row:
    """``mutant`` breaks ``prop`` at event ``index`` of RUN_STARTED + ``wire``; the reference
    breaks nothing on the same trace. ``reading``: a reading under which the mutant's behaviour is
    the reference's (the mutant is a reading of the draft, wrong only against ``draft``)."""

    prop: str
    mutant: str
    wire: tuple
    index: int
    reading: Optional[dict] = None


def row(prop, mutant, *wire, index, reading=None, marks=(), id_suffix=""):
    r = Row(prop, mutant, tuple(wire), index, reading)
    return pytest.param(r, id=f"{prop}:{mutant}{id_suffix}", marks=marks)


TABLE = [
    # P00 is raised by the runner itself when the step raises.
    row("P00-no-exception", "crashes-on-empty-patch", snap(), delta(patch=[]), index=2),
    row("P01-unique-ids", "snapshot-appends-duplicate", snap(), snap(content={"n": 1}), index=2),
    row("P02-content-object", "content-double-encoded", snap(), index=1),
    row("P03-no-activity-in-run-input", "activity-in-run-input", snap(), index=1),
    row("P04-run-input-keeps-others", "run-input-drops-assistant",
        {"type": "TEXT_MESSAGE_START", "messageId": "m1", "role": "assistant"}, index=1),
    row("P05-snapshot-creates", "unknown-type-dropped", snap(atype="WEATHER"), index=1),
    row("P06-replace-replaces", "absent-replace-as-false", snap(), snap(content={"n": 1}),
        index=2),
    row("P07-replace-remints", "owner-not-reminted", snap(subagentRunId="sub-1"),
        snap(content={"n": 1}), index=2),
    row("P08-replace-keeps-metadata", "metadata-reset-on-replace", snap(metadata={"a": 1}),
        snap(content={"n": 1}), index=2),
    row("P09-replace-false-leaves", "replace-false-merges", snap(content={"a": 1}),
        snap(content={"b": 2}, replace=False), index=2),
    row("P10-replace-false-owner-stands", "owner-reminted-on-false", snap(subagentRunId="sub-1"),
        snap(content={"n": 1}, replace=False), index=2),
    row("P11-snapshot-keeps-position", "snapshot-appends-duplicate", snap(),
        snap(content={"n": 1}), index=2),
    row("P12-delta-missing-tolerated", "delta-missing-fatal", delta(mid="nope", patch=[REPLACE_N1]),
        index=1),
    row("P13-delta-missing-warned", "delta-missing-silent", delta(mid="nope", patch=[REPLACE_N1]),
        index=1),
    row("P14-delta-applies", "delta-ignores-retype", snap(),
        delta(atype="TASK", patch=[REPLACE_N1]), index=2),
    row("P15-patch-atomic", "partial-patch-kept", snap(),
        delta(patch=[REPLACE_N1, REMOVE_MISSING]), index=2),
    row("P16-patch-failure-surfaced", "patch-failure-silent", snap(),
        delta(patch=[REMOVE_MISSING]), index=2),
    row("P17-tolerated-not-fatal", "patch-failure-fatal", snap(), delta(patch=[REMOVE_MISSING]),
        index=2, reading={"Q13": "fatal"}),
    row("P18-metadata-merged", "metadata-ignored-on-delta", snap(),
        delta(patch=[REPLACE_N1], metadata={"k": 1}), index=2),
    row("P19-untagged-accepted", "untagged-delta-rejected", snap(subagentRunId="sub-1"),
        delta(patch=[REPLACE_N1]), index=2),
    row("P20-mismatch-rejected", "mismatch-applied", snap(),
        delta(patch=[REPLACE_N1], subagentRunId="sub-9"), index=2, reading={"Q4": "accept"}),
    row("P21-malformed-fatal", "malformed-ignored",
        {"type": "ACTIVITY_SNAPSHOT", "messageId": "act-1", "activityType": "PLAN", "content": 5},
        index=1),
    row("P22-unknown-not-fatal", "unknown-event-fatal", {"type": "MY_PRIVATE_EVENT"}, index=1),
    row("P23-stripped-warned", "strip-silently", snap(bogus=1), index=1),
    row("P24-lifecycle-enforced", "after-close-accepted", snap(), RF, snap(content={"n": 1}),
        index=3),
    row("P25-run-error-keeps", "run-error-drops-activity", snap(), RUN_ERROR, index=2),
    row("P26-ms-in-place", "ms-reorders", ms(user("u1"), user("u2")), ms(user("u2"), user("u1")),
        index=2),
    row("P27-ms-restated", "ms-keeps-stale-activity", snap(),
        ms(activity("act-1", {"n": 5})), index=2),
    row("P28-ms-appends", "ms-new-first", ms(user("u1")), ms(user("u1"), user("u2")), index=2),
    row("P29-ms-activity-survives", "ms-drops-held-activity", snap(), ms(user("u1")), index=2),
    row("P30-ms-self-revoking", "ms-never-revokes", snap(mid="act-1"),
        ms(activity("act-2")), index=2, reading={"Q8": "keep"}),
    row("P31-agree-after-snapshot", "owner-not-reminted", snap(subagentRunId="sub-1"),
        snap(content={"n": 1}), index=2),
    row("P33-unknown-op-not-fatal", "unknown-op-fatal", snap(), delta(patch=[UNKNOWN_OP]),
        index=2),
    row("P34-unknown-op-surfaced", "unknown-op-silent", snap(), delta(patch=[UNKNOWN_OP]),
        index=2),
    row("P35-text-leaves-activity", "text-into-activity", snap(),
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "act-1", "delta": "hi"}, index=2),
    row("P36-raw-event-ignored", "raw-event-used", snap(rawEvent={"n": 7}), index=1),
    row("P37-ids-opaque", "ids-matched-by-prefix", snap(mid="act-1"), snap(mid="act-2"), index=2),
    row("P39-fatal-justified", "fails-on-replace-false", snap(), snap(replace=False), index=2),
    row("P40-activity-persists", "activity-cleared-at-run-end", snap(), RF, index=2),
]
"""One row per property (P32 excepted), mutant as mapped in the brief."""

EXTRA = [
    # The other mutants of the zoo, each on the property whose clauses hold the mutant's clause.
    row("P09-replace-false-leaves", "replace-false-overwrites", snap(content={"a": 1}),
        snap(content={"b": 2}, replace=False), index=2),
    row("P18-metadata-merged", "metadata-merged-recursively", snap(metadata={"a": {"x": 1}}),
        delta(patch=[REPLACE_N1], metadata={"a": {"y": 2}}), index=2),
    row("P18-metadata-merged", "metadata-nulls-dropped", snap(),
        delta(patch=[REPLACE_N1], metadata={"k": None}), index=2),
    row("P15-patch-atomic", "test-loose-equality", snap(content={"n": 1}),
        delta(patch=[{"op": "test", "path": "/n", "value": True},
                     {"op": "replace", "path": "/n", "value": 2}]), index=2),
    row("P05-snapshot-creates", "snapshot-creates-at-start", snap(mid="act-1"), snap(mid="act-2"),
        index=2),
    row("P40-activity-persists", "subagent-end-drops-its-activity",
        {"type": "SUBAGENT_STARTED", "subagentRunId": "sub-1"}, snap(subagentRunId="sub-1"),
        {"type": "SUBAGENT_FINISHED", "subagentRunId": "sub-1"}, index=3),
    # The mistakes over the draft's wider surface (issue 20), each on its shortest witness.
    row("P14-delta-applies", "move-as-copy", snap(content={"n": 1}),
        delta(patch=[{"op": "move", "from": "/n", "path": "/m"}]), index=2),
    row("P14-delta-applies", "copy-as-move", snap(content={"n": 1}),
        delta(patch=[{"op": "copy", "from": "/n", "path": "/m"}]), index=2),
    row("P14-delta-applies", "pointer-not-unescaped", snap(content={"a/b": 1}),
        delta(patch=[{"op": "replace", "path": "/a~1b", "value": 2}]), index=2),
    row("P14-delta-applies", "pointer-unescaped-wrong-order", snap(content={"m~n": 1}),
        delta(patch=[{"op": "replace", "path": "/m~0n", "value": 2}]), index=2),
    row("P15-patch-atomic", "dash-as-last-element", snap(content={"list": [1, 2]}),
        delta(patch=[{"op": "remove", "path": "/list/-"}]), index=2),
    row("P15-patch-atomic", "leading-zero-index-accepted", snap(content={"list": [1, 2]}),
        delta(patch=[{"op": "replace", "path": "/list/01", "value": 0}]), index=2),
    row("P14-delta-applies", "root-add-merges", snap(content={"n": 1}),
        delta(patch=[{"op": "add", "path": "", "value": {"r": 1}}]), index=2),
    row("P15-patch-atomic", "test-numbers-truncated", snap(content={"f": 1.5}),
        delta(patch=[{"op": "test", "path": "/f", "value": 1},
                     {"op": "replace", "path": "/f", "value": 2.5}]), index=2),
    row("P21-malformed-fatal", "string-replace-flag-read", snap(), snap(replace="false"),
        index=2),
    row("P12-delta-missing-tolerated", "delta-on-other-role-applies", ms(user("u1")),
        delta(mid="u1", patch=[REPLACE_N1]), index=2),
    row("P05-snapshot-creates", "content-nulls-dropped", snap(content={"n": None}), index=1),
    row("P29-ms-activity-survives", "ms-without-activity-drops", snap(), ms(user("u1")),
        index=2),
    # issue 20 item 5: the mutants for the rest of the generated surface, each on its witness.
    row("P14-delta-applies", "dash-add-before-last", snap(content={"list": [1, 2]}),
        delta(patch=[{"op": "add", "path": "/list/-", "value": 3}]), index=2),
    row("P14-delta-applies", "array-add-overwrites", snap(content={"list": [1, 2]}),
        delta(patch=[{"op": "add", "path": "/list/0", "value": 0}]), index=2),
    row("P15-patch-atomic", "array-index-past-end-appends", snap(content={"list": [1]}),
        delta(patch=[{"op": "add", "path": "/list/5", "value": 2}]), index=2),
    row("P14-delta-applies", "array-remove-leaves-null", snap(content={"list": [1, 2]}),
        delta(patch=[{"op": "remove", "path": "/list/0"}]), index=2),
    row("P15-patch-atomic", "add-creates-missing-parents", snap(content={"n": 1}),
        delta(patch=[{"op": "add", "path": "/nope/x", "value": 1}]), index=2),
    row("P15-patch-atomic", "replace-missing-adds", snap(content={"n": 1}),
        delta(patch=[{"op": "replace", "path": "/m", "value": 2}]), index=2),
    row("P15-patch-atomic", "move-into-own-child-applied", snap(content={"a": {"b": 1}}),
        delta(patch=[{"op": "move", "from": "/a", "path": "/a/b/c"}]), index=2),
    row("P14-delta-applies", "copy-aliases-source", snap(content={"a": {"b": 1}}),
        delta(patch=[{"op": "copy", "from": "/a", "path": "/c"},
                     {"op": "add", "path": "/c/d", "value": 2}]), index=2),
    row("P14-delta-applies", "from-pointer-not-unescaped", snap(content={"m~n": 1}),
        delta(patch=[{"op": "move", "from": "/m~0n", "path": "/a~1b"}]), index=2),
    row("P14-delta-applies", "root-pointer-as-empty-key", snap(content={"n": 1}),
        delta(patch=[{"op": "add", "path": "", "value": {"r": 1}}]), index=2),
    row("P15-patch-atomic", "test-arrays-unordered", snap(content={"list": [1, 2]}),
        delta(patch=[{"op": "test", "path": "/list", "value": [2, 1]},
                     {"op": "replace", "path": "/list", "value": []}]), index=2),
    row("P15-patch-atomic", "test-missing-equals-null", snap(content={"n": 1}),
        delta(patch=[{"op": "test", "path": "/m", "value": None},
                     {"op": "replace", "path": "/n", "value": 2}]), index=2),
    row("P14-delta-applies", "null-value-removes-member", snap(content={"n": 1}),
        delta(patch=[{"op": "replace", "path": "/n", "value": None}]), index=2),
    row("P21-malformed-fatal", "string-replace-flag-truthy", snap(), snap(replace="false"),
        index=2),
    row("P21-malformed-fatal", "number-activity-type-coerced", snap(), delta(atype=7), index=2),
    row("P21-malformed-fatal", "malformed-patch-tolerated", snap(),
        dict(delta(), patch={"op": "replace"}), index=2),
    row("P21-malformed-fatal", "array-content-accepted", snap(content=[1]), index=1),
    row("P35-text-leaves-activity", "text-start-replaces-activity", snap(),
        {"type": "TEXT_MESSAGE_START", "messageId": "act-1", "role": "assistant"}, index=2),
    row("P27-ms-restated", "ms-drops-system-messages",
        ms({"id": "sys-1", "role": "system", "content": "be brief"}), index=1),
    row("P24-lifecycle-enforced", "step-finish-unopened-accepted",
        {"type": "STEP_FINISHED", "stepName": "plan"}, index=1),
    row("P24-lifecycle-enforced", "steps-tracked-by-name",
        {"type": "STEP_STARTED", "stepName": "plan"},
        {"type": "STEP_FINISHED", "stepName": "plan", "subagentRunId": "sub-1"}, index=2),
    row("P24-lifecycle-enforced", "open-step-at-finish-accepted",
        {"type": "STEP_STARTED", "stepName": "plan"}, RF, index=2),
    row("P24-lifecycle-enforced", "open-tool-call-at-finish-accepted",
        {"type": "TOOL_CALL_START", "toolCallId": "call-1", "toolCallName": "search"}, RF,
        index=2),
    row("P39-fatal-justified", "unannounced-parent-fatal",
        {"type": "SUBAGENT_STARTED", "subagentRunId": "sub-2", "parentSubagentRunId": "sub-9"},
        index=1),
    row("P23-stripped-warned", "unknown-role-text-dropped",
        {"type": "TEXT_MESSAGE_START", "messageId": "msg-1", "role": "narrator"}, index=1),
    row("P39-fatal-justified", "in-flight-stream-left-open",
        {"type": "TEXT_MESSAGE_START", "messageId": "msg-1", "role": "assistant"}, ms(),
        {"type": "TEXT_MESSAGE_START", "messageId": "msg-1", "role": "assistant"}, index=3),
    # the mistakes only the widened generation shows
    row("P15-patch-atomic", "replace-at-length-appends", snap(content={"list": [1, 2, 3]}),
        delta(patch=[{"op": "replace", "path": "/list/3", "value": 1}]), index=2),
    row("P39-fatal-justified", "open-member-fatal", snap(),
        delta(patch=[{"op": "replace", "path": "/n", "value": 2, "comment": "why"}]), index=2),
    row("P14-delta-applies", "numbers-rounded-14-digits", snap(),
        delta(patch=[{"op": "add", "path": "/g", "value": 0.30000000000000004}]), index=2),
]
"""Rows for the mutants the brief's mapping does not name."""

from test_zoo_blind import BLIND_ROWS, PROPERTY_ROWS  # noqa: E402 - the blind red team's

ALL_ROWS = TABLE + EXTRA + BLIND_ROWS

GAP = Row("P38-delta-keeps-owner", "delta-remints-owner", (snap(), delta(patch=[REPLACE_N1],
          subagentRunId="sub-1")), 2, {"Q4": "accept"})
"""delta-remints-owner (clause SUB-OWNER-AGREE) cannot differ from the reference under draft: there
a tagged delta applies only when its tag equals the current owner (Q4=fatal, Q4-opener=current),
so re-minting the owner to the tag changes nothing. The zoo therefore judges it under Q4=accept
(its ``reading``), where it takes the activity over and P38 catches it."""


def _events(r: Row):
    return trace(*r.wire)


# --- the catalogue is covered -------------------------------------------------------------------

def test_table_covers_every_property_but_the_difference_one():
    in_table = {p.values[0].prop for p in TABLE}
    all_ids = {p.id for p in PROPERTIES}
    assert len(TABLE) == len(in_table), "one row per property"
    in_table |= set(PROPERTY_ROWS)  # the blind red team's properties have their rows there
    # P38 is caught by a mutant judged under its own reading (GAP, below)
    assert all_ids - in_table == {SKIPPED, GAP.prop}
    assert PROPERTY_BY_ID[SKIPPED].kind == "difference"
    assert [p.id for p in PROPERTIES if p.kind == "difference"] == [SKIPPED]
    assert in_table <= all_ids


@pytest.mark.parametrize("r", ALL_ROWS)
def test_mutant_breaks_property_at_expected_event(r: Row):
    events = _events(r)
    assert events[0].type_name == "RUN_STARTED"
    prop = PROPERTY_BY_ID[r.prop]
    found = check_trace_properties(events, MUTANT_BY_NAME[r.mutant], DRAFT, properties=(prop,))
    assert found is not None, f"{r.mutant} not caught by {r.prop}"
    assert found.property.id == r.prop, str(found)
    assert found.index == r.index, str(found)
    assert found.witness


@pytest.mark.parametrize("r", ALL_ROWS)
def test_reference_is_clean_on_the_same_trace(r: Row):
    assert check_trace_properties(_events(r), REFERENCE, DRAFT, PROPERTIES) is None


# --- mutants that are readings ------------------------------------------------------------------

def _fold(consumer, events, reading: Reading) -> Verdict:
    """What ``consumer`` leaves on ``events`` under ``reading``, as a Verdict (as evaluate does
    for the reference: stop at the first fatal)."""
    state = initial_state()
    warnings = []
    for index, event in enumerate(events):
        result = consumer.step(state, event, reading)
        state = result.state
        warnings.extend((index, w) for w in result.warnings)
        if result.fatal is not None:
            return Verdict(state, tuple(warnings), (index, result.fatal), index + 1)
    return Verdict(state, tuple(warnings), None, len(events))


READING_ROWS = [p for p in ALL_ROWS if p.values[0].reading]


def test_reading_rows_are_the_reading_mutants():
    assert sorted(p.values[0].mutant for p in READING_ROWS) == ["mismatch-applied",
                                                                 "ms-never-revokes",
                                                                 "patch-failure-fatal"]


@pytest.mark.parametrize("r", READING_ROWS)
def test_reading_mutant_is_the_reference_under_its_reading(r: Row):
    events = _events(r)
    mutant = MUTANT_BY_NAME[r.mutant]
    other = DRAFT.with_(**r.reading)
    assert other != DRAFT
    # Under draft the mutant leaves what the reference leaves under the other reading...
    as_mutant = _fold(mutant, events, DRAFT)
    assert verdict_key(as_mutant) == verdict_key(evaluate(events, other))
    # ... which differs from what the reference leaves under draft (the draft reading decides),
    assert verdict_key(as_mutant) != verdict_key(evaluate(events, DRAFT))
    # and under the other reading neither the mutant nor the reference breaks anything.
    assert check_trace_properties(events, REFERENCE, other, PROPERTIES) is None
    assert check_trace_properties(events, mutant, other, PROPERTIES) is None


# --- a mutant no property catches --------------------------------------------------------------

def test_delta_remints_owner_is_equivalent_under_draft():
    """Why the zoo benchmark (run under draft) never catches delta-remints-owner."""
    events = _events(GAP)
    mutant = MUTANT_BY_NAME[GAP.mutant]
    assert verdict_key(_fold(mutant, events, DRAFT)) == verdict_key(evaluate(events, DRAFT))
    again = trace(snap(subagentRunId="s1"), snap(subagentRunId="s2"),
                  delta(patch=[REPLACE_N1], subagentRunId="s2"))
    assert verdict_key(_fold(mutant, again, DRAFT)) == verdict_key(evaluate(again, DRAFT))
    # Under Q4=accept the mutant does differ from the reference: it takes the activity over.
    other = DRAFT.with_(**GAP.reading)
    held = _fold(mutant, events, other).state.message("act-1")
    assert held.owner == "sub-1"
    assert evaluate(events, other).state.message("act-1").owner is None


def test_delta_remints_owner_is_caught_where_it_differs():
    other = DRAFT.with_(**GAP.reading)
    found = check_trace_properties(_events(GAP), MUTANT_BY_NAME[GAP.mutant], other, PROPERTIES)
    assert found is not None
    assert found.property.id == "P38-delta-keeps-owner"
    assert "SUB-OWNER-AGREE" in found.property.clauses
    assert found.index == GAP.index
    assert MUTANT_BY_NAME[GAP.mutant].reading == other  # the zoo judges it under that reading


# --- the declarations: each property at its check, in one ordered registry ---------------------

def test_properties_keep_their_order_and_fields():
    """The engines check the properties in this order and report the first violated one, so the
    order is part of every output: id order, except P32 (added after P40, and checked across
    readings rather than per transition), which comes last. The fields below are what the
    engines' shortcuts rest on, read off the declarations."""
    assert [p.id[:3] for p in PROPERTIES] == \
        [f"P{n:02d}" for n in range(44) if n != 32] + ["P32"]
    assert len({p.id for p in PROPERTIES}) == len(PROPERTIES) == 44
    assert list(PROPERTY_BY_ID) == [p.id for p in PROPERTIES]
    assert all(PROPERTY_BY_ID[p.id] is p for p in PROPERTIES)
    assert [p.id for p in MUST_PROPERTIES] == \
        [p.id for p in PROPERTIES if p.id not in SHOULD_LEVEL]
    assert {p.id for p in PROPERTIES if p.severity == "should"} == SHOULD_LEVEL
    assert {p.kind: [q.id[:3] for q in PROPERTIES if q.kind == p.kind] for p in PROPERTIES} == {
        "step": [f"P{n:02d}" for n in (0, *range(5, 32), *range(33, 44)) if n != 31],
        "invariant": ["P01", "P02", "P03", "P04"], "relation": ["P31"], "difference": ["P32"]}
    assert {s: sorted(p.id[:3] for p in PROPERTIES if p.scope == s) for s in SCOPES} == {
        "after": ["P01", "P02", "P03", "P04"],
        "step": ["P11", "P25", "P26", "P27", "P28", "P29", "P30", "P36", "P37", "P40", "P41",
                 "P42", "P43"],
        "transition": ["P00", "P32"],
        "target": ["P05", "P06", "P07", "P08", "P09", "P10", "P12", "P13", "P14", "P15", "P16",
                   "P17", "P18", "P19", "P20", "P21", "P22", "P23", "P24", "P31", "P33", "P34",
                   "P35", "P38", "P39"]}
    p05 = PROPERTY_BY_ID["P05-snapshot-creates"]
    assert (p05.clauses, p05.kind, p05.severity, p05.events, p05.belief_view, p05.scope) == (
        ("ACT-SNAP-CREATE", "ACT-TYPE-OPEN", "ACT-SNAP-REPLACE-FALSE", "EVM-ARRIVAL-ORDER",
         "SUB-ACCEPT-UNANNOUNCED"), "step", "must", (ActivitySnapshot,), None, "target")
    p31 = PROPERTY_BY_ID["P31-agree-after-snapshot"]
    assert p31.belief_view is catalogue._target_belief and p31.events == (ActivitySnapshot,)
    assert [p.id for p in PROPERTIES if p.events is None] == [
        "P01-unique-ids", "P02-content-object", "P03-no-activity-in-run-input",
        "P04-run-input-keeps-others", "P23-stripped-warned", "P24-lifecycle-enforced",
        "P36-raw-event-ignored", "P39-fatal-justified", "P40-activity-persists"]


SHOULD_LEVEL = {"P13-delta-missing-warned", "P23-stripped-warned", "P34-unknown-op-surfaced"}
"""The properties whose clauses only recommend (the warnings a consumer should surface)."""


def test_every_check_is_the_function_its_declaration_decorates():
    """No wrapper on the hot path: each property's check is the module's own function, the one
    its decorator sits on (and tagged with that property alone: no check is shared today). The
    two properties the engines check themselves have the placeholder and fire on no event."""
    elsewhere = [p.id for p in PROPERTIES if p.check is catalogue.checked_elsewhere]
    assert elsewhere == ["P00-no-exception", "P32-readings-agree"]
    assert all(PROPERTY_BY_ID[i].events == () for i in elsewhere)
    assert not hasattr(catalogue.checked_elsewhere, "property_ids")
    own = [p for p in PROPERTIES if p.id not in elsewhere]
    for p in own:
        assert getattr(catalogue, p.check.__name__) is p.check, p.id
        # the function itself, not a wrapper named after it
        assert p.check.__code__.co_name == p.check.__name__ and \
            not hasattr(p.check, "__wrapped__"), p.id
        assert p.check.__module__ == "properties.catalogue", p.id
        assert p.check.property_ids == (p.id,), p.id
    assert len({id(p.check) for p in own}) == len(own) == 42


def _registry(**known):
    return PropertyRegistry(known_clauses=lambda: {"ACT-SNAP-CREATE", "SNP-ATOMIC"}, **known)


def _never(t):
    return None


GOOD = dict(clauses=("ACT-SNAP-CREATE",), kind="step")


@pytest.mark.parametrize("declaration, problem", [
    (dict(GOOD, scope="everywhere"),
     "scope 'everywhere' is not one of transition, step, target, after"),
    (dict(GOOD, severity="may"), "severity 'may' is not one of must, should"),
    (dict(GOOD, kind="obligation"), "kind 'obligation' is not one of invariant, step, relation, "
     "difference"),
    (dict(GOOD, clauses=("ACT-SNAP-CREATE", "NOT-A-CLAUSE", "NOR-THIS")),
     "clause ids not in the clause registry: NOT-A-CLAUSE, NOR-THIS"),
    (dict(GOOD, clauses="ACT-SNAP-CREATE"), "clauses must be a tuple of clause ids, not "
     "'ACT-SNAP-CREATE'"),
    (dict(GOOD, clauses=("SNP-ATOMIC", "SNP-ATOMIC")), "clauses listed twice: SNP-ATOMIC"),
    (dict(GOOD, events=ActivitySnapshot), "events must be None or a tuple of event classes, not "
     "<class 'model.events.ActivitySnapshot'>"),
    (dict(GOOD, belief_view="target"), "the belief view 'target' is not callable"),
], ids=["scope", "severity", "kind", "clause", "clauses-not-tuple", "clause-twice", "events",
        "belief-view"])
def test_the_decorator_refuses_a_bad_declaration_naming_the_property(declaration, problem):
    decls = _registry()
    decorate = decls.prop("P-bad", "A statement.", **declaration)
    with pytest.raises(PropertyDeclarationError) as caught:
        decorate(_never)
    assert str(caught.value) == f"property P-bad: {problem}"
    assert caught.value.property_id == "P-bad"
    assert isinstance(caught.value, ValueError)
    assert decls.close() == ()  # nothing was declared
    assert not hasattr(_never, "property_ids")


def test_the_declsrefuses_a_duplicate_a_late_or_a_checkless_firing_declaration():
    decls = _registry()
    decls.declare("P-a", "A statement.", check=_never, **GOOD)
    cases = [
        (lambda: decls.prop("P-a", "Again.", **GOOD)(lambda t: None), "declared twice"),
        (lambda: decls.declare("P-b", "No check.", events=(ActivitySnapshot,), **GOOD),
         "declared without a check, so it cannot fire on "
         "(<class 'model.events.ActivitySnapshot'>,): pass events=() or give it a check"),
        (lambda: decls.prop("P-c", "Not a check.", **GOOD)("_create"),
         "decorates '_create', which is not a callable check"),
        (lambda: decls.declare("P-d", "", check=_never, **GOOD),
         "the statement must be a non-empty string"),
    ]
    for declare_it, problem in cases:
        with pytest.raises(PropertyDeclarationError, match="^property P-") as caught:
            declare_it()
        assert str(caught.value).endswith(f": {problem}")
    assert [p.id for p in decls.close()] == ["P-a"]
    with pytest.raises(PropertyDeclarationError) as caught:
        decls.prop("P-late", "Too late.", **GOOD)(lambda t: None)
    assert str(caught.value) == \
        "property P-late: declared after the registry closed (its properties were already taken)"
    # The catalogue's own registry is closed once PROPERTIES is built.
    with pytest.raises(PropertyDeclarationError, match="^property P41-new: declared after"):
        catalogue.prop("P41-new", "A statement.", **GOOD)(lambda t: None)
    assert len(PROPERTIES) == 44


def test_the_catalogue_validates_clause_ids_against_the_clause_registry():
    decls = PropertyRegistry(known_clauses=registry)
    with pytest.raises(PropertyDeclarationError,
                       match="^property P-x: clause ids not in the clause registry: ACT-SNAP$"):
        decls.declare("P-x", "A statement.", clauses=("ACT-SNAP-CREATE", "ACT-SNAP"),
                          kind="step", check=_never)
    assert catalogue._REGISTRY._known_clauses is registry
    assert {c for p in PROPERTIES for c in p.clauses} <= set(registry())


def test_shared_and_checkless_properties_are_declared_in_order():
    """A check two properties share is declared with the first (decorator) and passed to the
    second (``declare(check=...)``); a property no per-transition check decides gets the
    placeholder and no events. Declaration order is the registry's order; the decorator returns
    the function it was given."""
    decls = PropertyRegistry()  # no clause registry: any clause id

    def shared(t):
        return "witness"

    returned = decls.prop("P-first", "First.", clauses=("ANY-ID",), kind="invariant",
                              scope="after")(shared)
    second = decls.declare("P-second", "Second.", clauses=(), kind="step", check=shared,
                               severity="should", events=(ActivityDelta,))
    third = decls.declare("P-third", "Third.", clauses=(), kind="difference")
    assert returned is shared and shared.property_ids == ("P-first", "P-second")
    first, got_second, got_third = decls.close()
    assert (first.id, first.check, first.scope, first.events) == ("P-first", shared, "after", None)
    assert got_second is second and (second.check, second.severity, second.events) == (
        shared, "should", (ActivityDelta,))
    assert got_third is third and (third.check, third.events) == (catalogue.checked_elsewhere, ())
    assert decls.close() == (first, second, third)


def test_a_property_built_directly_is_validated_too():
    """Synthetic properties (the engines' tests build them) get the same field checks, without
    the registry's (any id, any clause)."""
    with pytest.raises(PropertyDeclarationError, match="^property S: scope 'nowhere' is not"):
        Property("S", "synthetic", (), "step", _never, scope="nowhere")
    with pytest.raises(ValueError, match="^property S: the check None is not callable$"):
        Property("S", "synthetic", (), "step", None)
    assert Property("S", "synthetic", ("NOT-A-CLAUSE",), "step", _never).clauses == \
        ("NOT-A-CLAUSE",)


# --- the zoo is used, and its clauses exist -----------------------------------------------------

BENCH_ONLY = ["absent-replace-as-false", "partial-patch-kept", "ms-drops-held-activity",
              "activity-in-run-input", "malformed-ignored"]
# generated fixtures' kills (test_conformance), the last two under their own reading
CONFORMANCE_ONLY = ["passthrough-event-fatal", "strip-recurses-into-open",
                    "ended-owner-delta-applied", "earlier-run-delta-applied"]


def test_every_mutant_is_used_and_names_a_known_clause():
    used = ({p.values[0].mutant for p in ALL_ROWS} | set(BENCH_ONLY) | set(CONFORMANCE_ONLY)
            | {GAP.mutant})
    names = [m.name for m in MUTANTS]
    assert len(names) == len(set(names))
    assert set(names) - used == set()
    assert used <= set(names)
    clauses = registry()
    unknown = {m.name: m.clause for m in MUTANTS if m.clause not in clauses}
    assert unknown == {}


def test_each_rows_property_cites_its_mutants_clause_or_is_mapped():
    """Sanity: most rows pair a mutant with a property that lists the mutant's clause."""
    cited = [p.values[0] for p in ALL_ROWS
             if MUTANT_BY_NAME[p.values[0].mutant].clause in PROPERTY_BY_ID[p.values[0].prop].clauses]
    assert len(cited) >= len(ALL_ROWS) * 3 // 4


# --- the zoo benchmark, reduced -----------------------------------------------------------------

def _load_benchmark():
    path = Path(__file__).resolve().parent.parent / "benchmarks" / "mutants.py"
    spec = importlib.util.spec_from_file_location("benchmark_mutants", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_reduced_zoo_benchmark():
    """The zoo benchmark on five mutants, unshrunk (the examples until caught are those of a
    shrinking run) and with the exhaustive search at depth 3 (where each of them shows)."""
    figures = _load_benchmark().measure(examples=250, seed=0, only=BENCH_ONLY, bfs_depth=3,
                                        shrink=False)
    rows = figures["rows"]
    assert sorted(r["mutant"] for r in rows) == sorted(BENCH_ONLY)
    assert figures["mutants"] == len(BENCH_ONLY) == figures["caught"] == figures["bfsCaught"]
    assert figures["shrunk"] is False and figures["bfsDepth"] == 3
    for r in rows:
        assert r["caught"], r
        assert r["property"], r
        assert r["property"] in PROPERTY_BY_ID, r
        assert r["witnessLength"] >= 1, r
        assert 1 <= r["examplesUntilCaught"] <= figures["examplesPerMutant"], r
        bfs = r["bfs"]
        assert bfs["caught"] and bfs["property"] in PROPERTY_BY_ID, r
        assert 1 <= bfs["witnessLength"] <= 3 and bfs["stoppedBy"] == "depth", r
    for name in ("conformant", "adversarial"):
        machine = figures["machines"][name]
        assert machine["referenceFailed"] is False, machine
        assert machine["steps"] > 0


# --- determinism and the reference --------------------------------------------------------------

def test_search_is_deterministic_for_a_seed():
    mutant = MUTANT_BY_NAME["ms-drops-held-activity"]
    first = run_machine(consumer_machine(mutant, adversarial=True), seed=2, max_examples=100)
    second = run_machine(consumer_machine(mutant, adversarial=True), seed=2, max_examples=100)
    assert first.caught and second.caught
    assert first.property == second.property
    assert first.examples_until_caught == second.examples_until_caught
    assert [e.to_wire() for e in first.witness] == [e.to_wire() for e in second.witness]
    assert len(first.witness) >= 1


@pytest.mark.parametrize("adversarial", [False, True], ids=["conformant", "adversarial"])
def test_reference_survives_the_machines(adversarial):
    result = run_machine(consumer_machine(REFERENCE, adversarial=adversarial), seed=2,
                         max_examples=150)
    assert result.caught is False, result.message
    assert result.examples > 0 and result.steps > 0


ASSISTANT_ACT_1 = {"id": "act-1", "role": "assistant", "content": "hi"}


def test_snapshot_repeating_an_id_is_flagged_and_not_judged():
    """Regression: the adversarial machine (seed 2) once failed the reference on this trace. The
    MESSAGES_SNAPSHOT restates act-1 as assistant and as activity (after a TEXT_MESSAGE_START
    reused the activity's id); no consumer can hold both, so P27 was unsatisfiable. Now the
    producer monitor flags the repeated id (EVM-ID-UNIQUE) and the MESSAGES_SNAPSHOT properties
    leave such a snapshot alone."""
    from model.producer import Belief, advance, violations
    events = trace(snap(content={"items": [], "n": 0}),
                   {"type": "TEXT_MESSAGE_START", "messageId": "act-1", "role": "assistant"},
                   RF, {"type": "RUN_STARTED", "threadId": "t1", "runId": "r2"},
                   ms(user("user-1", "hello"), ASSISTANT_ACT_1,
                      activity("act-1", {"items": [], "n": 0})))
    belief, flagged = Belief(), []
    for e in events:
        flagged.append([(v.kind, v.clause) for v in violations(belief, e, DRAFT)])
        belief = advance(belief, e)
    assert flagged[2] == [("id-reused-across-roles", "EVM-ID-UNIQUE")]
    assert [c for _, c in flagged[5]] == ["EVM-ID-UNIQUE"]
    assert check_trace_properties(events, REFERENCE, DRAFT, PROPERTIES) is None
    minimal = trace(snap(), ms(ASSISTANT_ACT_1, activity("act-1")))
    assert check_trace_properties(minimal, REFERENCE, DRAFT, PROPERTIES) is None


def test_a_consumer_that_raises_only_on_the_variant_input_violates_the_relational_property():
    """P36 and P37 re-step a variant of the input (rawEvent removed, ids renamed). A consumer
    that handles the event itself but raises on the variant changed what the step did: the
    property fires and names the exception, instead of the exception stopping the engine."""
    from model.consumer import step as reference_step
    from model.consumers import Consumer

    def raises_on(predicate):
        def step_fn(state, event, reading):
            if predicate(event):
                raise RuntimeError("planted")
            return reference_step(state, event, reading)
        return step_fn

    renamed = Consumer("raises-on-renamed-ids", raises_on(
        lambda e: str(getattr(e, "message_id", "")).startswith("op4que:")))
    # act-9 comes only with rawEvent in this trace: only P36's stripped variant of it lacks it
    stripped = Consumer("raises-without-raw-event", raises_on(
        lambda e: getattr(e, "message_id", None) == "act-9" and e.raw_event is None))
    events = trace(snap(), snap(mid="act-9", rawEvent={"n": 7}))
    p36, p37 = PROPERTY_BY_ID["P36-raw-event-ignored"], PROPERTY_BY_ID["P37-ids-opaque"]
    found = check_trace_properties(events, renamed, DRAFT, (p37,))
    assert found is not None and found.property.id == "P37-ids-opaque" and found.index == 1
    assert "the step raised RuntimeError: planted when the message ids were renamed" in \
        str(found)
    found = check_trace_properties(events, stripped, DRAFT, (p36,))
    assert found is not None and found.property.id == "P36-raw-event-ignored" and \
        found.index == 2
    assert "the step raised RuntimeError: planted when rawEvent was removed" in str(found)
    assert check_trace_properties(events, REFERENCE, DRAFT, (p36, p37)) is None


# --- the engines' shortcuts: Property.events and Property.belief_view -------------------------

_SHARES_TRANSITIONS = pytest.mark.xdist_group(
    "tests/test_properties.py::_transitions_of_adversarial_explorations")
"""The mark of the tests that read :func:`_transitions_of_adversarial_explorations`, a cache of
one process: one xdist worker runs them all (tests/conftest.py)."""


@lru_cache(maxsize=1)
def _transitions_of_adversarial_explorations():
    """Every transition (with a restep) that single-reading adversarial explorations check:
    conformant and non-conformant input, under the draft and under each preset, for the
    reference consumer and for the mutants that break a step property."""
    import properties.search.explore as explore_module
    import properties.search.system_single as system_single
    from model.readings import PRESETS
    seen = []
    real = system_single.check_transition

    def spy(t, props):
        seen.append(t)
        return real(t, props)

    system_single.check_transition = spy
    try:
        for reading in (DRAFT, *PRESETS.values()):
            explore_module.explore(explore_module.ExploreOptions(depth=3, reading=reading,
                                                                 adversarial=True,
                                                                 check_readings=False))
        for name in ("ids-matched-by-prefix", "raw-event-used", "text-into-activity",
                     "ms-reorders", "mismatch-applied", "after-close-accepted",
                     "partial-patch-kept", "malformed-ignored"):
            explore_module.explore(explore_module.ExploreOptions(
                depth=3, reading=DRAFT, adversarial=True, consumer=MUTANT_BY_NAME[name],
                check_readings=False))
    finally:
        system_single.check_transition = real
    return seen


@_SHARES_TRANSITIONS
def test_declared_event_classes_and_belief_independence_hold_on_every_explored_transition():
    """``events``: a property never fires on an event class it does not declare (so
    ``check_transition`` may skip it); ``belief_view``: the outcome does not change when the
    producer beliefs are replaced by others with the same view (by empty beliefs, for a property
    that reads none), so the sweep may share it across such beliefs. Both are checked by calling
    the check itself, on thousands of transitions of every event class the adversarial producer
    sends."""
    from dataclasses import replace
    from model.producer import Belief
    transitions = _transitions_of_adversarial_explorations()
    classes = {type(t.event) for t in transitions}
    assert len(transitions) > 5000 and len(classes) >= 10
    skipped = stand_ins = 0

    def stand_in(belief, event):
        """A belief holding only the event's target activity: same target view, nothing else."""
        mid = getattr(event, "message_id", None)
        target = None if mid is None else belief.activity(mid)
        return Belief(activities=((mid, target),)) if target is not None else Belief()

    for t in transitions:
        blank = replace(t, belief_before=Belief(), belief_after=Belief())
        narrowed = replace(t, belief_before=stand_in(t.belief_before, t.event),
                           belief_after=stand_in(t.belief_after, t.event))
        for prop in PROPERTIES:
            if not prop.applies_to(type(t.event)):
                skipped += 1
                assert prop.check(t) is None, (prop.id, t.event)
            elif not prop.reads_belief:
                assert prop.check(blank) == prop.check(t), (prop.id, t.event)
            else:
                assert prop.belief_view(narrowed.belief_before, t.event) == \
                    prop.belief_view(t.belief_before, t.event)
                assert prop.check(narrowed) == prop.check(t), (prop.id, t.event)
                stand_ins += narrowed.belief_before != t.belief_before
    assert skipped > 50000  # the declarations do exclude work
    assert stand_ins > 1000  # the stand-ins do differ from the beliefs they replace
    assert {p.id for p in PROPERTIES if p.reads_belief} == {"P31-agree-after-snapshot"}


def _scope_disagreements(properties) -> tuple[list, Counter, Counter]:
    """Call every check of ``properties`` on every transition of the adversarial explorations
    and compare outcomes (witness text included) across transitions that agree on what the
    check's ``scope`` says it reads, besides the reading: :func:`target_view` and the belief
    views (``"target"``); the state before, event, state after, warnings and fatal
    (``"step"``); the state after, run input and conformance flag (``"after"``). Returns the
    disagreements as ``(property id, event)``, and per scope how many transitions shared an
    outcome and how many of those differed from the first outside what the scope reads."""
    from properties.catalogue import target_view
    outcomes: dict = {}
    disagreements: list = []
    shared: Counter = Counter()
    differ_elsewhere: Counter = Counter()
    for t in _transitions_of_adversarial_explorations():
        view = target_view(t)
        for prop in properties:
            if prop.scope == "transition" or not prop.applies_to(type(t.event)):
                continue
            if prop.scope == "target":
                beliefs = (prop.belief_view(t.belief_before, t.event),
                           prop.belief_view(t.belief_after, t.event)) if prop.reads_belief \
                    else None
                key = (prop.id, view, beliefs, t.reading)
                elsewhere = (t.before, t.after)
            elif prop.scope == "step":
                assert not prop.reads_belief, prop.id
                key = (prop.id, t.before, t.event, t.after, t.warnings, t.fatal, t.reading)
                elsewhere = (t.belief_before, t.belief_after, t.conformant, t.run_input)
            else:
                assert not prop.reads_belief, prop.id
                key = (prop.id, t.after, repr(t.run_input), t.conformant, t.reading)
                elsewhere = (t.before, t.after)
            got = prop.check(t)
            if key not in outcomes:
                outcomes[key] = (got, elsewhere)
                continue
            first, seen = outcomes[key]
            if got != first:
                disagreements.append((prop.id, t.event))
            shared[prop.scope] += 1
            differ_elsewhere[prop.scope] += seen != elsewhere
    return disagreements, shared, differ_elsewhere


@_SHARES_TRANSITIONS
def test_declared_scopes_hold_on_every_explored_transition():
    """``scope``: every check gives the same outcome on every transition that agrees on what
    its scope says it reads (:func:`_scope_disagreements`), so an engine may share outcomes
    across such transitions. Checked on the transitions of adversarial explorations (reference
    consumer and mutants), where many transitions agree on a view and differ elsewhere."""
    assert {p.scope for p in PROPERTIES} == set(SCOPES)
    disagreements, shared, differ_elsewhere = _scope_disagreements(PROPERTIES)
    assert disagreements == []
    # The scopes are exercised: many transitions share a view, many differing elsewhere.
    assert shared["target"] > 20000 and differ_elsewhere["target"] > 10000
    assert shared["after"] > 10000 and differ_elsewhere["after"] > 5000
    assert shared["step"] > 20000 and differ_elsewhere["step"] > 5000


@_SHARES_TRANSITIONS
def test_the_scope_test_catches_a_check_that_reads_beyond_its_scope():
    """Each scope's comparison has the power to show a false declaration: a check that reads
    what its scope leaves out (the conformance flag for ``"step"``, the messages before for
    ``"after"``, the untouched messages for ``"target"``) disagrees with itself somewhere."""

    def reads_conformance(t):
        return "conformant so far" if t.conformant else None

    def reads_list_before(t):
        return f"{len(t.before.messages)} messages before"

    def reads_untouched(t):
        return f"{len(t.after.messages)} messages after"

    planted = (Property("S-conformant", "synthetic", (), "step", reads_conformance, scope="step"),
               Property("A-before", "synthetic", (), "step", reads_list_before, scope="after"),
               Property("T-list", "synthetic", (), "step", reads_untouched, scope="target"))
    disagreements, _, _ = _scope_disagreements(planted)
    assert {pid for pid, _ in disagreements} == {"S-conformant", "A-before", "T-list"}


def test_check_transition_skips_exactly_the_undeclared_classes():
    from model.consumer import step as reference_step
    from model.events import RunStarted
    from properties.catalogue import Transition, check_transition
    calls = []
    spy = Property("X", "spy", (), "step", lambda t: calls.append(type(t.event).__name__),
                   events=(ActivitySnapshot,))
    anywhere = Property("Y", "spy", (), "step", lambda t: calls.append("any"))
    never = Property("Z", "engine", (), "step", lambda t: calls.append("never"), events=())
    state = initial_state()
    for event in (RunStarted(thread_id="t", run_id="r"),
                  ActivitySnapshot(message_id="a", activity_type="PLAN", content="{}"),
                  ActivityDelta(message_id="a", activity_type="PLAN", patch=())):
        r = reference_step(state, event, DRAFT)
        check_transition(Transition(0, state, event, r.state, r.warnings, r.fatal, DRAFT),
                         (spy, anywhere, never))
        state = r.state
    assert calls == ["any", "ActivitySnapshot", "any", "any"]


# --- the surface mutants (issue 20 item 5): honest features, a real difference --------------------

SURFACE_MUTANTS = [m.name for m in MUTANTS if m.features]


def test_surface_mutants_declare_coverage_items():
    from properties.coverage import universe
    items = set().union(*universe().values())
    assert len(SURFACE_MUTANTS) == 45  # 38 of issue 20, three the widened random patches catch,
    # four the blind red team's edge patches show
    assert {m.name: [f for f in m.features if f not in items] for m in MUTANTS} == \
        {m.name: [] for m in MUTANTS}


@pytest.mark.parametrize("name", SURFACE_MUTANTS)
def test_surface_mutant_differs_on_its_witness_which_hits_its_feature(name):
    """The row's witness separates the mutant from the reference (a mutant equivalent to the
    model would be a defect of the zoo) and exercises a surface feature the mutant declares."""
    from properties.coverage import trace_coverage
    rows = [p.values[0] for p in ALL_ROWS if p.values[0].mutant == name]
    assert rows, name
    events = _events(rows[0])
    mutant = MUTANT_BY_NAME[name]
    assert verdict_key(_fold(mutant, events, mutant.reading)) != \
        verdict_key(evaluate(events, mutant.reading))
    items, _ = trace_coverage(events)
    assert set(mutant.features) & set().union(*items.values()), (mutant.features, items)
