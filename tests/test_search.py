"""The ambiguity search, shrinking and findings export."""
import json

from counterexamples.findings import ambiguity_finding, write_finding
from model.verdict import evaluate
from counterexamples.shrink import canonical_names, ddmin, is_one_minimal
from model.producer import check_trace
from model.wire import dump_jsonl, parse_trace_text
from properties.ambiguity import search_ambiguities, splits_knob


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
    assert is_one_minimal(finding.events, lambda t: splits_knob(t, "Q13"))
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
