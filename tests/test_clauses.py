"""The clause registry: complete, well-formed, and covered."""
import re

from model.clauses import ACTORS, KEYWORDS, by_n_id, coverage, get, is_duty, registry
from model.consumer import BRANCHES
from model.producer import ADVERSARIAL_KINDS
from model.readings import KNOBS


def test_every_numbered_statement_has_exactly_one_entry():
    reg = registry()
    n_ids = [n for c in reg.values() for n in c.n_ids]
    assert sorted(n_ids, key=lambda n: int(n[1:])) == [f"N{i}" for i in range(1, 113)]
    assert by_n_id("N3").id == "ACT-SNAP-CREATE"
    assert by_n_id("N26").id == "ACT-STRIP-RUNINPUT"


def test_entries_are_well_formed():
    for c in registry().values():
        assert re.fullmatch(r"[A-Z]+(-[A-Z0-9]+)+", c.id), c.id
        assert c.keyword in KEYWORDS and c.actor in ACTORS, c.id
        assert c.summary and "\n" not in c.summary and len(c.summary) <= 160, c.id
        assert all(re.fullmatch(r"Q\d+", q) for q in c.questions), c.id


def test_every_cited_clause_exists():
    cited = {cid for ids in BRANCHES.values() for cid in ids}
    cited |= {cid for k in KNOBS for cid in k.clauses}
    cited |= set(ADVERSARIAL_KINDS.values())
    for cid in cited:
        assert get(cid).id == cid


def test_consumer_duties_are_covered_by_a_branch_or_knob():
    missing = [c.clause.id for c in coverage()
               if c.clause.actor == "consumer" and is_duty(c.clause) and c.clause.page in
               ("ACT", "SNP", "STA", "MET", "PRC") and not c.covered]
    # Duties about pipeline staging, outgoing input and transports are outside a step model.
    assert set(missing) <= {"PRC-STAGE-ORDER", "PRC-OUTGOING", "PRC-SAME-VERDICT"}, missing


def test_coverage_rejects_unknown_ids():
    import pytest
    from model.clauses import UnknownClauseError
    with pytest.raises(UnknownClauseError):
        coverage({"property": {"P-typo": ("NO-SUCH-CLAUSE",)}})


def test_every_consumer_duty_is_checked_by_a_property():
    """Issue 3: each consumer MUST / MUST NOT is checked by at least one property (or declared
    outside the model's scope with a reason)."""
    from model.clauses import OUT_OF_SCOPE
    from properties.catalogue import coverage_table
    rows = coverage({"property": coverage_table()})
    missing = [c.clause.id for c in rows if c.clause.actor in ("consumer", "both")
               and is_duty(c.clause) and c.clause.id not in OUT_OF_SCOPE
               and not c.covered_by.get("property")]
    assert missing == []


def test_every_producer_duty_is_exercised_by_an_adversarial_move():
    from model.clauses import OUT_OF_SCOPE
    reachable = set(ADVERSARIAL_KINDS.values())
    missing = [c.id for c in registry().values() if c.actor == "producer" and is_duty(c)
               and c.id not in OUT_OF_SCOPE and c.id not in reachable]
    assert missing == []


def test_every_adversarial_kind_is_reachable():
    """Each labelled kind is actually produced by adversarial_moves from some belief."""
    from model.producer import Belief, adversarial_moves, advance
    from model.wire import parse_events
    wire = [
        [],
        [{"type": "RUN_STARTED", "threadId": "t", "runId": "r"},
         {"type": "ACTIVITY_SNAPSHOT", "messageId": "act-1", "activityType": "PLAN",
          "content": {"n": 1}, "subagentRunId": "sub-1"},
         {"type": "TEXT_MESSAGE_START", "messageId": "msg-1"},
         {"type": "SUBAGENT_STARTED", "subagentRunId": "sub-2"},
         {"type": "SUBAGENT_FINISHED", "subagentRunId": "sub-2"},
         {"type": "SUBAGENT_STARTED", "subagentRunId": "sub-3"},
         # lists act-1 too: a MESSAGES_SNAPSHOT carrying an activity drops the ones it leaves
         # out (STA-MS-SELF-REVOKE), and act-1 must stay held
         {"type": "MESSAGES_SNAPSHOT", "messages": [
             {"id": "act-1", "role": "activity", "activityType": "PLAN", "content": {"n": 1},
              "subagentRunId": "sub-1"},
             {"id": "act-2", "role": "activity", "activityType": "PLAN", "content": {}}]}],
        [{"type": "RUN_STARTED", "threadId": "t", "runId": "r"},
         {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"}],
        # a step and a tool call open: the step, tool-call and parent kinds (issue 19)
        [{"type": "RUN_STARTED", "threadId": "t", "runId": "r"},
         {"type": "STEP_STARTED", "stepName": "plan"},
         {"type": "TOOL_CALL_START", "toolCallId": "c1", "toolCallName": "f"}],
        [{"type": "RUN_STARTED", "threadId": "t", "runId": "r"},
         {"type": "RUN_ERROR", "message": "x"}],
        # a second run after an activity of the first (Q12=run)
        [{"type": "RUN_STARTED", "threadId": "t", "runId": "r"},
         {"type": "ACTIVITY_SNAPSHOT", "messageId": "act-1", "activityType": "PLAN",
          "content": {"n": 1}},
         {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"},
         {"type": "RUN_STARTED", "threadId": "t", "runId": "r2"}],
    ]
    from model.producer import PRODUCER_ONLY_KNOBS
    from model.readings import DRAFT, KNOB_BY_ID
    # the producer-only knobs' kinds are adversarial under their other options only
    readings = [DRAFT] + [DRAFT.with_(**{k: o}) for k in PRODUCER_ONLY_KNOBS
                          for o in KNOB_BY_ID[k].option_names[1:]]
    seen = set()
    for prefix in wire:
        belief = Belief()
        for e in parse_events(prefix):
            belief = advance(belief, e)
        for reading in readings:
            seen |= {v.kind for _, v in adversarial_moves(belief, reading=reading)}
    assert set(ADVERSARIAL_KINDS) - seen == set()
