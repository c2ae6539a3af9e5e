"""The ambiguity search, shrinking and findings export."""
import json

from counterexamples.findings import ambiguity_finding, write_finding
from model.verdict import evaluate
from counterexamples.shrink import canonical_names, ddmin, is_one_minimal
from model.producer import check_trace
from model.wire import dump_jsonl, parse_trace_text
from properties.search.ambiguity import search_ambiguities
from model.verdict import splits_knob


def test_same_seed_same_witnesses():
    a = search_ambiguities(seed=5, examples=60)
    b = search_ambiguities(seed=5, examples=60)
    assert a.examples == b.examples == 60
    assert {k: dump_jsonl(w.events) for k, w in a.witnesses.items()} == \
           {k: dump_jsonl(w.events) for k, w in b.witnesses.items()}


def test_search_finds_replace_false_metadata_and_patch_failure_questions():
    report = search_ambiguities(seed=0, examples=200)
    assert {"Q1", "Q5", "Q13", "Q20"} <= set(report.witnesses)
    for knob, w in report.witnesses.items():
        assert check_trace(w.events) == []          # witnesses are conformant traces
        assert splits_knob(w.events, knob)


def test_ddmin_reaches_one_minimal():
    items = tuple(range(12))
    holds = lambda s: 3 in s and 7 in s and 9 in s
    out = ddmin(items, holds)
    assert out == (3, 7, 9)
    assert is_one_minimal(out, holds)


def test_findings_are_shrunk_conformant_and_exported(tmp_path):
    report = search_ambiguities(seed=0, examples=200)
    finding = ambiguity_finding(report.witnesses["Q13"])
    # the shrunk witness, then the events that end what it left open (a complete stream)
    closing = finding.get("closing", 0)
    shrunk = finding.events[:len(finding.events) - closing]
    assert closing >= 1 and finding.events[-1].type_name == "RUN_FINISHED"
    assert is_one_minimal(shrunk, lambda t: splits_knob(t, "Q13"))
    assert splits_knob(finding.events, "Q13")
    assert finding.id.startswith("AMB-Q13-")
    assert len(finding.classes) >= 2
    assert any(c == "ACT-TOLERATED" for c in finding.clauses)
    json_path, jsonl_path = write_finding(finding, str(tmp_path))
    doc = json.loads(open(json_path).read())
    assert doc["knob"] == "Q13" and doc["length"] == len(finding.events)
    assert sum(v["includesDraft"] for v in doc["verdicts"]) == 1
    replayed = parse_trace_text(open(jsonl_path).read()).events
    assert replayed == finding.events


def test_canonical_names_rename_in_order_of_first_use():
    text = ('{"type":"RUN_STARTED","threadId":"t","runId":"r"}\n'
            '{"type":"ACTIVITY_SNAPSHOT","messageId":"zzz","activityType":"Q","content":{},'
            '"subagentRunId":"s9"}\n'
            '{"type":"ACTIVITY_SNAPSHOT","messageId":"aaa","activityType":"P","content":{}}\n')
    events = canonical_names(parse_trace_text(text).events)
    assert [getattr(e, "message_id", None) for e in events] == [None, "act-1", "act-2"]
    assert events[1].activity_type == "TYPE-A" and events[2].activity_type == "TYPE-B"
    assert events[1].subagent_run_id == "sub-1"


def test_every_finding_states_a_true_split_in_its_context():
    """The readings a finding names really disagree, and a finding claiming draft context splits
    with every other knob at draft (so a user's --reading KNOB=OPTION reproduces it)."""
    from model.readings import DRAFT
    from model.verdict import context_of, split_readings, verdict_key
    report = search_ambiguities(seed=0, examples=300)
    assert report.witnesses
    for knob, witness in report.witnesses.items():
        finding = ambiguity_finding(witness)
        ra, rb = split_readings(finding.pair, knob)
        assert ra.differences(rb).keys() == {knob}
        assert verdict_key(evaluate(finding.events, ra)) != verdict_key(evaluate(finding.events, rb))
        if not context_of(finding.pair, knob):
            a, b = (p[knob] for p in finding.pair)
            assert verdict_key(evaluate(finding.events, DRAFT.with_(**{knob: a}))) != \
                verdict_key(evaluate(finding.events, DRAFT.with_(**{knob: b})))


def _finding_of(knob, text):
    from properties.search.ambiguity import Witness
    from model.verdict import splits_of
    events = parse_trace_text(text).events
    assert check_trace(events) == []
    return ambiguity_finding(Witness(knob, events, splits_of(events)[knob]))


def test_canonical_minimisation_drops_an_owner_pair_the_split_does_not_need():
    """Q1 (metadata of a declined replace:false): the witness tags both snapshots with the same
    subagent; neither tag can go alone (the attribution would disagree), both can together."""
    finding = _finding_of("Q1", (
        '{"type":"RUN_STARTED","threadId":"t1","runId":"r1"}\n'
        '{"type":"ACTIVITY_SNAPSHOT","messageId":"a","activityType":"PLAN","content":{"n":0},'
        '"subagentRunId":"s"}\n'
        '{"type":"ACTIVITY_SNAPSHOT","messageId":"a","activityType":"PLAN","content":{"n":0},'
        '"replace":false,"metadata":{"k":1,"j":2},"subagentRunId":"s"}\n'))
    assert [e.to_wire() for e in finding.events] == [
        {"type": "RUN_STARTED", "threadId": "t1", "runId": "r1"},
        {"type": "ACTIVITY_SNAPSHOT", "messageId": "act-1", "activityType": "TYPE-A",
         "content": {}},
        {"type": "ACTIVITY_SNAPSHOT", "messageId": "act-1", "activityType": "TYPE-A",
         "content": {}, "replace": False, "metadata": {"k": 1}},   # one member kept, never {}
        {"type": "RUN_FINISHED", "threadId": "t1", "runId": "r1"}]  # the run closed
    assert splits_knob(finding.events, "Q1", max_context=0)


def test_canonical_minimisation_drops_an_unneeded_retype_and_unknown_op():
    """Q4 (a delta tagged against its opener): the witness's delta also retypes and carries an
    unrecognised op; neither matters to Q4, so both go, and the result is the one the plain
    witness shrinks to, whatever trace it was found from."""
    head = ('{"type":"RUN_STARTED","threadId":"t1","runId":"r1"}\n'
            '{"type":"ACTIVITY_SNAPSHOT","messageId":"a","activityType":"PLAN","content":{"n":0}}\n'
            '{"type":"ACTIVITY_SNAPSHOT","messageId":"a","activityType":"PLAN","content":{"n":0},'
            '"subagentRunId":"s"}\n')
    noisy = _finding_of("Q4", head + (
        '{"type":"ACTIVITY_DELTA","messageId":"a","activityType":"SEARCH","patch":['
        '{"op":"increment","path":"/n"},{"op":"replace","path":"/n","value":2}],'
        '"subagentRunId":"s"}\n'))
    plain = _finding_of("Q4", head + (
        '{"type":"ACTIVITY_DELTA","messageId":"a","activityType":"PLAN","patch":['
        '{"op":"replace","path":"/n","value":2}],"subagentRunId":"s"}\n'))
    assert noisy.id == plain.id and noisy.events == plain.events
    # the applying operation stays: without it accept and skip would differ only in a warning
    assert [e.to_wire() for e in noisy.events[1:]] == [
        {"type": "ACTIVITY_SNAPSHOT", "messageId": "act-1", "activityType": "TYPE-A",
         "content": {}},
        {"type": "ACTIVITY_SNAPSHOT", "messageId": "act-1", "activityType": "TYPE-A",
         "content": {"n": 0}, "subagentRunId": "sub-1"},
        {"type": "ACTIVITY_DELTA", "messageId": "act-1", "activityType": "TYPE-A",
         "patch": [{"op": "replace", "path": "/n", "value": 2}], "subagentRunId": "sub-1"},
        {"type": "RUN_FINISHED", "threadId": "t1", "runId": "r1"}]
    assert noisy.context == {"Q4-opener": "first"}
    assert len({json.dumps(c.verdict["messages"]) for c in noisy.classes}) == 2


def test_minimise_reaches_a_fixpoint():
    from counterexamples.shrink import minimise
    report = search_ambiguities(seed=3, examples=80)
    for knob, witness in report.witnesses.items():
        holds = lambda t, k=knob: splits_knob(t, k)  # noqa: E731
        once = minimise(witness.events, holds)
        assert holds(once) and is_one_minimal(once, holds)
        assert minimise(once, holds) == once
        assert len(once) <= len(witness.events)


def test_an_exhaustive_witness_is_kept_over_any_seeded_one():
    from properties.search.ambiguity import SearchReport, merge_witnesses
    seeded = parse_trace_text(
        '{"type":"RUN_STARTED","threadId":"t1","runId":"r1"}\n'
        '{"type":"ACTIVITY_SNAPSHOT","messageId":"a","activityType":"A","content":{}}\n'
        '{"type":"ACTIVITY_SNAPSHOT","messageId":"a","activityType":"A","content":{},'
        '"replace":false,"metadata":{"k":1}}\n').events
    bfs = parse_trace_text(
        '{"type":"RUN_STARTED","threadId":"t1","runId":"r1"}\n'
        '{"type":"ACTIVITY_SNAPSHOT","messageId":"act-1","activityType":"PLAN","content":{"n":0}}\n'
        '{"type":"TEXT_MESSAGE_START","messageId":"m","role":"assistant"}\n'
        '{"type":"ACTIVITY_SNAPSHOT","messageId":"act-1","activityType":"PLAN","content":{"n":0},'
        '"replace":false,"metadata":{"k":1}}\n').events
    report = SearchReport()
    assert merge_witnesses(report, {"Q1": seeded}) == ["Q1"]
    # longer, and later by wire text, but exhaustive: it wins, whatever the order offered
    assert merge_witnesses(report, {"Q1": bfs}, exhaustive=True) == ["Q1"]
    assert merge_witnesses(report, {"Q1": seeded}) == []
    assert report.witnesses["Q1"].events == bfs and report.witnesses["Q1"].exhaustive
    other = SearchReport()
    merge_witnesses(other, {"Q1": bfs}, exhaustive=True)
    merge_witnesses(other, {"Q1": seeded})
    assert other.witnesses == report.witnesses


def test_shrinking_never_merges_options_the_witness_tells_apart():
    """Every option of the knob keeps its own verdict on the shrunk witness, as seen with and
    without warnings (a peer that reports none must still see what the witness showed)."""
    from model.verdict import context_of, split_readings
    from model.verdict import option_classes
    report = search_ambiguities(seed=0, examples=300)
    for knob, witness in report.witnesses.items():
        base = split_readings(witness.pair, knob)[0]
        before = option_classes(witness.events, knob, base)
        finding = ambiguity_finding(witness)
        after = option_classes(finding.events, knob, base)
        assert after[0] >= before[0] and after[1] >= before[1], knob
        assert len(context_of(finding.pair, knob)) <= len(context_of(witness.pair, knob))
