"""The finding family (counterexamples/findings.py): one id scheme for every kind, the typed
findings a document loads as, and what they read from it.

The ids below were given by the writers this family replaced (one per kind); they must not move,
or every finding a run or a peer check has written changes its name. Exports and the on-disk
bytes of each kind are checked in test_export.py.
"""
from __future__ import annotations

import json

import pytest

from counterexamples.corpus import load_corpus
from counterexamples.findings import (FINDING_TYPES, AmbiguityFinding, Finding,
                                      PeerDivergenceFinding, PropertyFinding, finding_from_json,
                                      finding_id, property_finding)
from model.readings import ANY_READING, describe_assignment, parse_assignment
from model.wire import parse_events
from properties.search.machines import check_trace_properties
from properties.zoo import MUTANT_BY_NAME

RUN = {"type": "RUN_STARTED", "threadId": "t1", "runId": "r1"}
SNAP = {"type": "ACTIVITY_SNAPSHOT", "messageId": "act-1", "activityType": "A",
        "content": {"n": 0}}


def test_every_committed_corpus_entry_keeps_its_id():
    """The committed corpus was written with the ambiguity writer's ids: the family's scheme
    gives each entry's id back from its knob and trace."""
    entries = load_corpus()
    assert len(entries) == 19  # issue 19 added AMB-Q18, AMB-Q19, then AMB-Q14, AMB-Q15, AMB-Q23
    for entry in entries:
        assert AmbiguityFinding.id_for(entry["knob"], parse_events(entry["events"])) == \
            entry["id"]


def test_property_and_peer_ids_are_those_the_old_writers_gave():
    empty_patch = [RUN, SNAP, {"type": "ACTIVITY_DELTA", "messageId": "act-1",
                               "activityType": "A", "patch": []}]
    assert PropertyFinding.id_for("P00-no-exception", parse_events(empty_patch)) == \
        "PROP-P00-74fb1823"
    assert PropertyFinding.id_label("P00-no-exception") == "P00"
    created = [RUN, {"type": "ACTIVITY_SNAPSHOT", "messageId": "act-1",
                     "activityType": "TYPE-A", "content": {}}]
    events = parse_events(created)
    # a peer divergence hashes its initial agent state too (null when none is given)
    assert PeerDivergenceFinding.id_for("forgetful", events, "null") == \
        "PEER-forgetful-6cd9351e"
    assert PeerDivergenceFinding.id_for("forgetful", events, json.dumps({"a": 1})) != \
        "PEER-forgetful-6cd9351e"
    # the one function behind them: prefix, label, then the hash of tag, name and trace
    assert finding_id("PEER", "peer", "forgetful", events, "null") == "PEER-forgetful-6cd9351e"
    assert finding_id("PEER", "peer", "forgetful", events) != "PEER-forgetful-6cd9351e"


def test_property_finding_is_typed_and_keeps_the_trace_up_to_the_violation_then_closed():
    wire = [RUN, SNAP, {"type": "ACTIVITY_DELTA", "messageId": "act-1", "activityType": "A",
                        "patch": []}, {"type": "TEXT_MESSAGE_START", "messageId": "m1",
                                       "role": "assistant"}]
    events = parse_events(wire)
    violation = check_trace_properties(events, MUTANT_BY_NAME["crashes-on-empty-patch"])
    finding = property_finding(violation, events, "crashes-on-empty-patch", "draft")
    closed = events[:3] + parse_events([{"type": "RUN_FINISHED", "threadId": "t1",
                                         "runId": "r1"}])
    # issue 39: the trace up to the violation, then RUN_FINISHED (a complete stream); the id
    # hashes the closed trace
    assert isinstance(finding, PropertyFinding)
    assert finding.id == PropertyFinding.id_for("P00-no-exception", closed) != \
        "PROP-P00-74fb1823"
    assert (finding.property_id, finding.consumer, finding.reading, finding.at_event) == (
        "P00-no-exception", "crashes-on-empty-patch", "draft", 2)
    assert finding.events == closed and (finding["length"], finding["closing"]) == (4, 1)
    assert list(finding) == ["id", "kind", "property", "statement", "clauses", "consumer",
                             "reading", "atEvent", "explanation", "length", "closing",
                             "events"]
    # replayed whole, the mutant breaks the same property at the same event
    again = check_trace_properties(finding.events, MUTANT_BY_NAME["crashes-on-empty-patch"])
    assert (again.property.id, again.index) == ("P00-no-exception", 2)
    # the document it loads back as is the same finding, of the same type
    again = finding_from_json(finding.to_json())
    assert type(again) is PropertyFinding and again == finding and again.events == closed


def test_property_finding_with_nothing_open_or_no_run_is_left_as_it_stopped():
    # no RUN_STARTED: no run to close, nothing appended and no note
    events = parse_events([SNAP, {"type": "ACTIVITY_DELTA", "messageId": "act-1",
                                  "activityType": "A", "patch": []}])
    violation = check_trace_properties(events, MUTANT_BY_NAME["crashes-on-empty-patch"])
    finding = property_finding(violation, events, "crashes-on-empty-patch", "draft")
    assert finding.events == events and finding["closing"] == 0
    assert "closingNote" not in finding


def test_property_finding_is_left_unclosed_with_a_note_when_closing_changes_its_verdict(
        monkeypatch):
    import counterexamples.findings as findings_module
    import properties.search.machines as machines
    wire = [RUN, SNAP, {"type": "ACTIVITY_DELTA", "messageId": "act-1", "activityType": "A",
                        "patch": []}]
    events = parse_events(wire)
    violation = check_trace_properties(events, MUTANT_BY_NAME["crashes-on-empty-patch"])
    # a replay that no longer breaks the property at that event keeps the trace as it stopped
    monkeypatch.setattr(machines, "check_trace_properties", lambda *a, **k: None)
    finding = findings_module.property_finding(violation, events, "crashes-on-empty-patch",
                                               "draft")
    assert finding.events == events and finding["closing"] == 0
    assert finding["closingNote"].startswith("left unclosed: ") and \
        "P00-no-exception first at event 2" in finding["closingNote"]


def test_a_document_loads_as_its_kind():
    assert {k: cls.__name__ for k, cls in FINDING_TYPES.items()} == {
        "ambiguity": "AmbiguityFinding", "property": "PropertyFinding",
        "peer-divergence": "PeerDivergenceFinding"}
    entry = next(e for e in load_corpus() if e["knob"] == "Q1")
    doc = {"id": entry["id"], "kind": "ambiguity", "knob": "Q1", "events": entry["events"],
           "pair": ["Q1=merge", "Q1=ignore,Q2=parent"],
           "verdicts": [{"readings": ["Q1=merge"], "includesDraft": True, "verdict": {}},
                        {"readings": ["Q1=ignore"], "verdict": {}}]}
    finding = finding_from_json(doc)
    assert isinstance(finding, AmbiguityFinding) and isinstance(finding, Finding)
    assert finding.pair == ({"Q1": "merge"}, {"Q1": "ignore", "Q2": "parent"})
    assert finding.context == {"Q2": "parent"}
    assert [(c.label, c.includes_draft) for c in finding.classes] == [("draft", True),
                                                                        ("Q1=ignore", False)]
    assert finding.classes[1].reading.q1 == "ignore"
    with pytest.raises(ValueError, match="unknown kind \"nope\""):
        finding_from_json(dict(doc, kind="nope"), "x.json")
    with pytest.raises(ValueError, match="^x.json: not a finding: a peer-divergence finding "
                                         "needs 'peer'"):
        finding_from_json(dict(doc, kind="peer-divergence"), "x.json")


@pytest.mark.parametrize("assignment", [{}, {"Q1": "ignore"}, {"Q4-opener": "first",
                                                                "Q7": "fatal"}])
def test_parse_assignment_reads_what_describe_assignment_writes(assignment):
    assert parse_assignment(describe_assignment(assignment)) == assignment
    assert parse_assignment(ANY_READING) == {}


@pytest.mark.parametrize("text", ["Q1", "Q1=nope", "Q99=merge", "Q1=merge,"])
def test_parse_assignment_refuses_what_is_not_one(text):
    with pytest.raises(ValueError, match="not KNOB=OPTION"):
        parse_assignment(text)


@pytest.mark.parametrize("duplicate, where", [
    # the id named twice with the same value: json.loads kept one and read the file as valid
    (lambda text, fid: text.replace('"kind"', f'"id": "{fid}",\n  "kind"', 1),
     ':3:3: not valid JSON: duplicate member "id" in $'),
    # a member twice in one of the witness's events, the later one winning under json.loads
    # (line 25: the document has "closing" since issue 39)
    (lambda text, fid: text.replace('"messageId": "act-1"',
                                    '"messageId": "act-1", "messageId": "act-1"', 1),
     ':25:29: not valid JSON: duplicate member "messageId" in $.events[1]'),
], ids=["id-twice", "event-member-twice"])
def test_load_finding_reads_as_strictly_as_every_file(tmp_path, duplicate, where):
    """A finding file is read with :func:`model.wire.loads_json`, like every file the tool
    reads: a member named twice in one object is refused (file, line, column and the object's
    path) instead of silently keeping the last value; the file as written loads back."""
    from counterexamples.findings import load_finding, write_finding
    from model.wire import TraceFormatError
    events = parse_events([RUN, SNAP, {"type": "ACTIVITY_DELTA", "messageId": "act-1",
                                       "activityType": "A", "patch": []}])
    violation = check_trace_properties(events, MUTANT_BY_NAME["crashes-on-empty-patch"])
    finding = property_finding(violation, events, "crashes-on-empty-patch", "draft")
    path, _ = write_finding(finding, str(tmp_path / "findings"))
    assert load_finding(path) == finding
    twice = tmp_path / "twice.json"
    text = duplicate(open(path, encoding="utf-8").read(), finding.id)
    assert json.loads(text) == finding.to_json()  # what the lax reader accepted
    twice.write_text(text, encoding="utf-8")
    with pytest.raises(TraceFormatError) as caught:
        load_finding(str(twice))
    assert str(caught.value) == f"{twice}{where}"
