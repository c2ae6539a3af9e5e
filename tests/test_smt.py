"""Z3 bounded model checking of the ownership-and-replace fragment (issue 5).

The heart is cross-validation: every witness Z3 returns is replayed in lock step on the
executable model inside the queries (a difference raises CrossCheckError); here, in addition,
Z3's answers (sat with the shortest length, or unsat) are compared with an exhaustive
enumeration of the same abstract alphabet on the executable model, and the shortest
distinguishing lengths with the breadth-first search of properties.search.explore.
"""
import json
import random

import pytest
import z3

from activity_check.cli import main
from model.producer import check_trace
from model.readings import DRAFT, KNOBS, PRESETS, Reading, parse_reading
from model.verdict import evaluate
from properties.search.system_pair import shortest_distinguishing
from properties.smt import queries as q
from properties.smt.checks import PROOF_PROPERTIES, RULES, SHAPES, SITUATIONS
from properties.smt.encoding import STEP_BRANCH_IDS, Unrolling
from properties.smt.replay import (CrossCheckError, Goal, StepView, alphabet,
                                   enumerate_shortest, lockstep)
from properties.smt.world import (DEFAULT_WORLD, P_NONOBJ, SMALL_WORLD, AbstractEvent, MsEntry,
                                  realise_trace)
from wirekit import delta, snap, trace


def _fix(u: Unrolling, t: int, ev: AbstractEvent):
    e = u.events[t]
    cons = [e.kind == ev.kind, e.mid == ev.mid, e.typ == ev.typ, e.cont == ev.cont,
            e.rep == ev.rep, e.tag == ev.tag, e.pk == ev.pk]
    for j, m in enumerate(ev.ms):
        cons += [e.inc[j] == m.inc, e.mtyp[j] == m.typ, e.mown[j] == m.own,
                 e.mcont[j] == m.cont, e.rank[j] == m.rank]
    return u.indicator(z3.And(cons))


# --- the encoding agrees with the executable model, event by event ------------------------------

DRAFT_ONLY = {"Q14", "Q18"}
"""Knobs outside the fragment that its consumer encodes at their draft option although the model
consults them on the fragment's events (:data:`properties.smt.encoding.OUTSIDE_KNOBS`: Q14's
adopt needs the record of a skipped delta, which the fragment's state does not keep; Q18's
schema reading takes a declined snapshot's type, the encoding models the prose)."""


def test_encoding_agrees_with_the_executable_model_on_random_traces():
    """Random traces under random pairs of readings: after every event, each consumer copy's
    abstract state, warning and fatal, and the producer clauses broken, are the executable
    model's (lockstep raises CrossCheckError otherwise)."""
    rng = random.Random(5)
    letters = alphabet(DEFAULT_WORLD)
    non_ms = [x for x in letters if x.kind != 3]
    ms = [x for x in letters if x.kind == 3]
    for _ in range(20):
        ra, rb = (Reading(**{k.attr: rng.choice(k.option_names) if k.id not in DRAFT_ONLY
                             else k.draft for k in KNOBS}) for _ in range(2))
        u = Unrolling(DEFAULT_WORLD, {"a": ra, "b": rb}, [ra], symmetry=False)
        fixes = []
        for t in range(1, rng.randint(2, 8)):
            u.extend()
            fixes.append(_fix(u, t, rng.choice(ms if rng.random() < 0.2 else non_ms)))
        assert u.solver.check(*fixes) == z3.sat
        views = lockstep(u, u.solver.model())
        assert len(views) == u.n


def test_lockstep_catches_a_disagreement():
    """The cross-check is not vacuous: when the executable model runs under another reading than
    the one Z3 encoded (Q11=move against in-place), the replay stops at the event that shows it."""
    u = Unrolling(DEFAULT_WORLD, {"a": DRAFT}, [DRAFT])
    for _ in range(3):
        u.extend()
    fixes = [_fix(u, 1, AbstractEvent(0, 0)), _fix(u, 2, AbstractEvent(0, 1)),
             _fix(u, 3, AbstractEvent(0, 0))]     # snapshots id-1, id-2, id-1 again
    assert u.solver.check(*fixes) == z3.sat
    model = u.solver.model()
    assert len(lockstep(u, model)) == 3
    u.knobs["a"].reading = DRAFT.with_(Q11="move")
    with pytest.raises(CrossCheckError, match="message order") as caught:
        lockstep(u, model)
    assert caught.value.position == 3


def test_every_step_branch_of_the_fragment_is_reached_in_z3_and_named_as_the_model_names_it():
    """Each branch of STEP_BRANCH_IDS is reachable in the encoding (some reading, some trace of
    at most three fragment events), and the lockstep replay of the witness finds the model's step
    on the same branch id (it compares the branch at every event)."""
    for branch in STEP_BRANCH_IDS:
        u = Unrolling(SMALL_WORLD, {"a": None}, "a")
        found = None
        for t in range(1, 4):
            u.extend()
            if u.solver.check(u.indicator(u.steps["a"][t].on(branch))) == z3.sat:
                found = t
                break
        assert found is not None, branch
        views = lockstep(u, u.solver.model())
        assert views[found - 1].branches["a"] == branch


@pytest.mark.parametrize("q7, branch", [("skip", "delta.patch-failed"),
                                        ("apply", "delta.non-object"),
                                        ("fatal", "delta.non-object")])
def test_a_root_array_delta_is_named_alike_in_z3_and_the_model(q7, branch):
    u = Unrolling(DEFAULT_WORLD, {"a": DRAFT.with_(Q7=q7)}, [DRAFT])
    u.extend()
    u.extend()
    assert u.solver.check(_fix(u, 1, AbstractEvent(0, 0)),
                          _fix(u, 2, AbstractEvent(1, 0, pk=P_NONOBJ))) == z3.sat
    assert lockstep(u, u.solver.model())[1].branches["a"] == branch


def test_lockstep_catches_a_branch_named_otherwise():
    """The branch comparison is not vacuous: a Z3 branch term that names another branch than the
    model's stops the replay."""
    u = Unrolling(DEFAULT_WORLD, {"a": DRAFT}, [DRAFT])
    u.extend()
    assert u.solver.check(_fix(u, 1, AbstractEvent(1, 0))) == z3.sat  # a delta on no message
    model = u.solver.model()
    assert lockstep(u, model)[0].branches["a"] == "delta.missing"
    u.steps["a"][1].branch = z3.IntVal(STEP_BRANCH_IDS.index("delta.apply"))
    with pytest.raises(CrossCheckError, match="branch Z3 delta.apply, executable model "
                                              "delta.missing"):
        lockstep(u, model)


def test_an_unrolling_replays_the_positions_built_before_as_building_them_gives(monkeypatch):
    """Unrollings of one configuration share the positions built (``encoding._PREFIXES``): one
    that replays positions 1 and 2 and builds 3 adds the same constraints in the same order,
    and holds the same terms, as one built from nothing; what a caller changes in its own
    unrolling's steps reaches no other; the memo keeps the configurations met last."""
    from properties.smt import encoding

    def built(n, world=SMALL_WORLD, reading=None):
        u = Unrolling(world, {"a": reading}, "a")
        for _ in range(n):
            u.extend()
        return u

    def said(u):
        return [c.sexpr() for c in u.solver.assertions()]

    monkeypatch.setattr(encoding, "_PREFIXES", {})
    alone = built(3)
    monkeypatch.setattr(encoding, "_PREFIXES", {})
    built(2)
    [prefix] = encoding._PREFIXES.values()
    assert len(prefix) == 2
    second = built(3)  # replays 1 and 2, builds 3
    assert len(prefix) == 3 and said(second) == said(alone)
    third = built(3)  # replays all three
    assert said(third) == said(alone)
    for u in (second, third):
        for t in (1, 2, 3):
            assert [v.eq(w) for (_, v), (_, w) in zip(u.events[t].fields(),
                                                      alone.events[t].fields())] == \
                [True] * len(alone.events[t].fields())
            assert u.steps["a"][t].branch.eq(alone.steps["a"][t].branch)
            assert u.conformant[t].eq(alone.conformant[t])
    # a caller's change to its steps (as test_lockstep_catches_a_branch_named_otherwise makes)
    third.steps["a"][1].branch = z3.IntVal(0)
    third.steps["a"][1].b["mine"] = z3.BoolVal(True)
    fourth = built(1)
    assert fourth.steps["a"][1].branch.eq(alone.steps["a"][1].branch)
    assert "mine" not in fourth.steps["a"][1].b
    # ... nor does a change made before a further position is built: that position is built
    # from the changed terms, as without the memo, and not kept
    fifth = built(3)
    fifth.steps["a"][3].after["halted"] = z3.BoolVal(True)
    fifth.extend()
    assert len(prefix) == 3 and fifth.steps["a"][4].before["halted"].eq(z3.BoolVal(True))
    assert said(built(4))[:len(said(alone))] == said(alone) and len(prefix) == 4
    assert not built(4).steps["a"][4].before["halted"].eq(z3.BoolVal(True))
    # an encoding other than this one's (a subclass, a build method replaced) builds its own
    # positions and keeps none of them
    class Other(Unrolling):
        def _branch(self, *args):
            return z3.IntVal(0)
    monkeypatch.setattr(encoding, "_PREFIXES", {})
    assert Other(SMALL_WORLD, {"a": None}, "a")._configuration() is None
    other = Other(SMALL_WORLD, {"a": None}, "a")
    other.extend()
    assert other.steps["a"][1].branch.eq(z3.IntVal(0)) and not encoding._PREFIXES
    assert not built(1).steps["a"][1].branch.eq(z3.IntVal(0))
    with monkeypatch.context() as m:
        m.setattr(Unrolling, "_branch", Other._branch)
        assert built(2).steps["a"][2].branch.eq(z3.IntVal(0))
    assert not built(2).steps["a"][2].branch.eq(z3.IntVal(0))
    # the configurations met last are kept, the oldest dropped first; 0 keeps none
    monkeypatch.setattr(encoding, "_PREFIX_CONFIGURATIONS", 2)
    built(1, reading=DRAFT)
    built(1, world=DEFAULT_WORLD)
    assert len(encoding._PREFIXES) == 2
    assert list(encoding._PREFIXES)[0][1][0][:2] == ("a", DRAFT)
    monkeypatch.setattr(encoding, "_PREFIXES", {})
    monkeypatch.setattr(encoding, "_PREFIX_CONFIGURATIONS", 0)
    assert said(built(3)) == said(alone) and not encoding._PREFIXES
    # what a position adds is recorded as z3's add takes it: one collection unpacked, anything
    # else (a Python bool included) one constraint
    solver, x = z3.Solver(), z3.Int("x")
    recorder = encoding._Recorder(solver)
    recorder.add(True)
    recorder.add([x > 0, x < 5])
    recorder.add(c for c in (x != 1,))
    assert [str(c) for c in recorder.added] == ["True", "x > 0", "x < 5", "x != 1"] == \
        [str(c) for c in solver.assertions()]


def test_the_fragment_knob_partition_is_checked_at_import(monkeypatch):
    """FRAGMENT_KNOBS and OUTSIDE_KNOBS partition the model's knobs, and the import-time check
    fails for a knob neither classifies and for one both do."""
    from dataclasses import replace as copy
    from properties.smt import encoding
    assert sorted(encoding.FRAGMENT_KNOBS + tuple(encoding.OUTSIDE_KNOBS)) == \
        sorted(k.id for k in KNOBS)
    encoding._check_knob_partition()
    monkeypatch.setattr(encoding, "KNOBS", KNOBS + (copy(KNOBS[0], id="Q99"),))
    with pytest.raises(AssertionError, match=r"unclassified \['Q99'\]"):
        encoding._check_knob_partition()
    monkeypatch.setattr(encoding, "KNOBS", KNOBS)
    monkeypatch.setattr(encoding, "OUTSIDE_KNOBS", {**encoding.OUTSIDE_KNOBS, "Q2": "twice"})
    with pytest.raises(AssertionError, match=r"both \['Q2'\]"):
        encoding._check_knob_partition()


# --- the queries, against the exhaustive enumeration of the same alphabet -----------------------

def _goals(world_checks, mode_of):
    return {f"{kind}:{c.id}": Goal(c.holds, c.track, mode_of(c)) for kind, checks in world_checks
            for c in checks}


def _z3_answers(depth: int, reading: Reading) -> dict:
    w = SMALL_WORLD
    out = {}
    for c in SITUATIONS:
        out[f"sit:{c.id}"] = q.reachability(c.id, depth, reading, w).length
    for a in q.consistency(depth, reading, w):
        out[f"shape:{a.subject}"] = a.length
    for a in q.vacuity(depth, reading, w):
        out[f"rule:{a.subject}"] = a.length
        if a.detail["actor"] == "consumer":
            out[f"any:{a.subject}"] = a.detail["anyTrace"]["length"]
    for c in PROOF_PROPERTIES:
        out[f"prop:{c.id}"] = q.bounded_proof(c.id, depth, reading, w).length
    return out


def _enumerated(depth: int, reading: Reading) -> dict:
    conformant = _goals([("sit", SITUATIONS), ("shape", SHAPES), ("rule", RULES)],
                        lambda c: "prefix" if c.actor == "producer" else "conformant")
    found = enumerate_shortest(SMALL_WORLD, depth, {"a": reading}, [reading], conformant)
    anything = {f"any:{c.id}": Goal(c.holds, c.track, "any") for c in RULES
                if c.actor == "consumer"}
    anything.update({f"prop:{c.id}": Goal(c.holds, c.track, "any") for c in PROOF_PROPERTIES})
    found.update(enumerate_shortest(SMALL_WORLD, min(depth, 3), {"a": reading}, [reading],
                                    anything))
    return {k: (len(v) + 1 if v is not None else None) for k, v in found.items()}


@pytest.mark.parametrize("reading", ["draft", "strict,Q20=drop-op"])
def test_every_query_agrees_with_exhaustive_enumeration(reading):
    """Reachability, vacuity (conformant and any trace), consistency and bounded proof: Z3's
    shortest length (or unsat) equals the executable model's, by breadth-first enumeration of the
    same abstract alphabet (depth 4 on conformant traces, 3 on any trace). The enumeration has no
    symmetry breaking, so this also checks that the encoding's changes no answer."""
    r = parse_reading(reading)
    expected = _enumerated(4, r)
    got = _z3_answers(4, r)
    any_keys = {k for k in expected if k.startswith(("any:", "prop:"))}
    for k in any_keys:  # enumerated to depth 3 only: Z3 at depth 4 may find a 4-event one
        if expected[k] is None and got[k] == 4:
            got[k] = None
    assert {k: got[k] for k in expected} == expected
    # the comparison has content on both sides
    assert sum(v is not None for v in expected.values()) > 30
    assert sum(v is None for v in expected.values()) > 10


# --- reachability: real answers -----------------------------------------------------------------

def test_reachability_answers_under_the_draft():
    a = q.reachability("owner-changed-by-replace-false", depth=7)
    assert (a.status, a.searched) == ("unsat", 7)
    a = q.reachability("retyped-after-declined", depth=6)
    assert a.status == "sat" and a.length == 4
    assert a.witness.to_json()["events"][1:] == [
        "ACTIVITY_SNAPSHOT id-1 PLAN {n:0}",
        "ACTIVITY_SNAPSHOT id-1 PLAN {n:0} replace:false",
        "ACTIVITY_DELTA id-1 SEARCH patch applies"]
    assert q.reachability("content-not-object", depth=7).status == "unsat"
    # a producer that breaks N22 leaves a non-object under Q7=apply (not detected)
    a = q.reachability("content-not-object", depth=6, conformant=False)
    assert a.length == 3 and "non-object" in a.witness.to_json()["events"][2]
    assert q.reachability("content-not-object", 6, parse_reading("Q7=skip"),
                          conformant=False).status == "unsat"
    # a conformant delta is skipped only when the consumer ignored a snapshot that created the
    # activity again (Q10=seen) after a self-revoking MESSAGES_SNAPSHOT dropped it: a delta on
    # the dropped id itself has no baseline (the producer's belief forgets it too)
    a = q.reachability("delta-skipped", depth=6)
    assert a.length == 5
    assert a.witness.to_json()["events"][1:] == [
        "ACTIVITY_SNAPSHOT id-1 PLAN {n:0}", "MESSAGES_SNAPSHOT [id-2:PLAN {n:0}]",
        "ACTIVITY_SNAPSHOT id-1 PLAN {n:0}", "ACTIVITY_DELTA id-1 PLAN patch applies"]
    assert [w.code for _, w in evaluate(a.witness.trace).warnings] == [
        "ACTIVITY_ID_SEEN_BEFORE", "ACTIVITY_DELTA_TARGET_MISSING"]


def test_reachability_with_the_reading_left_to_the_solver():
    a = q.reachability("activity-moved", depth=5, reading=None)
    assert a.status == "sat" and a.detail["knobs"]["Q11"] == "move"
    # canonical: every other knob at its draft option
    assert {k: v for k, v in a.detail["knobs"].items() if k != "Q11"} == {
        k: DRAFT.as_dict()[k] for k in a.detail["knobs"] if k != "Q11"}
    assert q.reachability("activity-moved", depth=5).status == "unsat"


def test_q4_opener_first_and_a_restating_messages_snapshot():
    """Regression (found by Z3): the consumer reset an activity's first opener when a
    MESSAGES_SNAPSHOT restated it, while the producer monitor keeps it; under Q4-opener=first a
    conformant producer's delta tagged by the creating subagent then failed the run."""
    events = trace(snap(subagentRunId="sub-1"),
                   {"type": "MESSAGES_SNAPSHOT", "messages": [
                       {"id": "act-1", "role": "activity", "activityType": "PLAN",
                        "content": {"n": 0}}]},
                   delta(patch=[{"op": "replace", "path": "/n", "value": 1}],
                         subagentRunId="sub-1"))
    first = parse_reading("Q4-opener=first")
    assert check_trace(events, first) == []
    verdict = evaluate(events, first)
    assert verdict.fatal is None
    assert verdict.state.messages[0].content == '{"n":1}'
    # Regression (found by Z3): the producer's belief kept an activity a self-revoking
    # MESSAGES_SNAPSHOT dropped (STA-MS-SELF-REVOKE), with its old opener; a later snapshot
    # restated it and the creator's delta was "conformant" but failed the run. The belief now
    # forgets it, so that delta has no baseline and the 5-event trace is not conformant.
    dropped = trace(snap(), {"type": "MESSAGES_SNAPSHOT", "messages": [
                        {"id": "act-2", "role": "activity", "activityType": "PLAN",
                         "content": {"n": 0}}]},
                    {"type": "MESSAGES_SNAPSHOT", "messages": [
                        {"id": "act-1", "role": "activity", "activityType": "PLAN",
                         "content": {"n": 0}, "subagentRunId": "sub-1"}]},
                    delta(patch=[{"op": "replace", "path": "/n", "value": 1}],
                          subagentRunId="sub-1"))
    assert [(i, v.clause) for i, v in check_trace(dropped, first)] == [(4, "ACT-DELTA-BASELINE")]
    # what remains needs Q10=seen: the consumer ignores the snapshot that creates the dropped
    # activity again (so the MESSAGES_SNAPSHOT after it creates it with another first opener),
    # while the producer believes it created it; six events, and none up to 8 under Q10=held
    a = q.reachability("owner-mismatch-fatal", depth=6, reading=first)
    assert a.length == 6
    assert a.witness.to_json()["events"][2:] == [
        "MESSAGES_SNAPSHOT [id-2:PLAN {n:0}]", "ACTIVITY_SNAPSHOT id-1 PLAN {n:0} by sub-1",
        "MESSAGES_SNAPSHOT [id-1:PLAN {n:0}]", "ACTIVITY_DELTA id-1 PLAN patch applies by sub-1"]
    assert evaluate(a.witness.trace, first).warnings[0][1].code == "ACTIVITY_ID_SEEN_BEFORE"
    assert q.reachability("owner-mismatch-fatal", depth=8,
                          reading=parse_reading("Q4-opener=first,Q10=held")).status == "unsat"
    assert q.reachability("owner-mismatch-fatal", depth=6).status == "unsat"


# --- vacuity, consistency, bounded proof --------------------------------------------------------

def test_vacuity_reports_the_rules_that_never_fire():
    by = {a.subject: a for a in q.vacuity(depth=5)}
    never = sorted(k for k, a in by.items() if a.status == "unsat")
    assert never == ["ACT-ATTR-TOLERATE", "ACT-DELTA-OBJECT-DETECT", "ACT-DELTA-REPEAT-TYPE",
                     "SUB-REJECT-MISMATCH"]
    # consumer rules that fire only after a producer violation are error handling, not vacuous
    for rule in ("ACT-ATTR-TOLERATE", "ACT-DELTA-OBJECT-DETECT", "SUB-REJECT-MISMATCH"):
        assert by[rule].detail["anyTrace"]["length"] == 3
    assert by["ACT-DELTA-REPEAT-TYPE"].detail["actor"] == "producer"
    # a conformant delta on a missing activity: the consumer ignored the snapshot that created
    # a dropped activity again (Q10=seen); a delta on the dropped id itself is not conformant
    assert by["ACT-DELTA-MISSING-NOFAIL"].length == 5
    assert by["SNP-ADOPT-NEXT"].length == 4
    # under Q4-opener=first the mismatch rule decides on a conformant trace: the consumer
    # ignored a re-creating snapshot (Q10=seen), the producer believes its opener
    first = q.vacuity(6, parse_reading("Q4-opener=first"), rules=["SUB-REJECT-MISMATCH"])[0]
    assert (first.status, first.length) == ("sat", 6)


def test_consistency_admits_every_shape_but_the_forbidden_ones():
    by = {a.subject: a for a in q.consistency(depth=5)}
    excluded = sorted(k for k, a in by.items() if a.status == "unsat")
    assert excluded == ["delta-non-object", "delta-on-activity-known-from-messages-snapshot",
                        "delta-tagged-by-first-opener-after-remint"]
    first = q.consistency(5, parse_reading("Q4-opener=first"),
                          shapes=["delta-tagged-by-first-opener-after-remint"])[0]
    assert first.length == 4
    parent = q.consistency(5, parse_reading("Q2=parent"), shapes=[
        "snapshot-replace-false-untagged-on-subagent-activity"])[0]
    assert parent.status == "unsat"
    assert by["snapshot-replace-false-untagged-on-subagent-activity"].length == 3


def test_bounded_proofs_and_a_counterexample():
    for prop in ("P10-replace-false-owner-stands", "P02-content-object", "P38-delta-keeps-owner"):
        a = q.bounded_proof(prop, depth=7)
        assert a.status == "unsat" and a.detail["proved"] and a.seconds >= 0
    # every reading at once
    assert q.bounded_proof("P07-replace-remints", depth=6, reading=None).status == "unsat"
    # P02 fails once the producer may break N22 (the catalogue's check confirms the replay)
    assert q.bounded_proof("P02-content-object", 5, conformant=True).status == "unsat"
    a = q.bounded_proof("P39-fatal-justified", depth=5, reading=None)
    assert a.status == "unsat"


# --- distinguishing, against the breadth-first search -------------------------------------------

@pytest.mark.parametrize("knob,option,length", [
    ("Q4", "skip", 4), ("Q4-opener", "first", 4), ("Q5", "retype", 3), ("Q8", "keep", 3),
    ("Q10", "held", 4), ("Q13", "fatal", 3), ("X1", "preserve", 3), ("Q2", "parent", None)])
def test_shortest_distinguishing_length_equals_bfs(knob, option, length):
    other = DRAFT.with_(**{knob: option})
    z = q.distinguishing(DRAFT, other, depth=5)
    bfs = shortest_distinguishing(DRAFT, other, depth=5 if length else 4)
    assert z.length == length
    assert (len(bfs) if bfs else None) == length
    if length:
        assert z.detail["differences"]


def test_distinguishing_where_the_z3_world_is_larger_than_the_bfs_vocabulary():
    """Q11: Z3's MESSAGES_SNAPSHOT may introduce two activities at once, and so may the BFS
    vocabulary's since issue 19 (item 4): both witnesses are three events long (they used to be
    3 and 4). Q9: Z3's MESSAGES_SNAPSHOT may state any id as an
    assistant message, but an activity snapshot on it breaks EVM-ID-UNIQUE (N80), so neither
    finds a conformant witness; on any trace Z3's is three events. (The exhaustive enumeration
    of Z3's own alphabet agrees with Z3: see the next test.)"""
    q11 = q.distinguishing(DRAFT, DRAFT.with_(Q11="move"), depth=5)
    assert q11.length == 3 and q11.detail["differences"] == ["position"]
    assert len(shortest_distinguishing(DRAFT, DRAFT.with_(Q11="move"), depth=4)) == 3
    q9 = q.distinguishing(DRAFT, DRAFT.with_(Q9="fatal"), depth=6)
    assert (q9.status, q9.searched) == ("unsat", 6)
    assert shortest_distinguishing(DRAFT, DRAFT.with_(Q9="fatal"), depth=5) is None
    q9 = q.distinguishing(DRAFT, DRAFT.with_(Q9="fatal"), depth=4, conformant=False)
    assert q9.witness.to_json()["events"] == ["RUN_STARTED", "TEXT_MESSAGE_START id-1",
                                               "ACTIVITY_SNAPSHOT id-1 PLAN {n:0}"]
    # the Q9 trace through a MESSAGES_SNAPSHOT is not conformant (the former monitor gap)
    ms = trace({"type": "MESSAGES_SNAPSHOT", "messages": [
        {"id": "x", "role": "assistant", "content": "hi"}]}, snap("x"))
    assert [(i, v.clause) for i, v in check_trace(ms)] == [(2, "EVM-ID-UNIQUE")]


def test_every_knob_pair_agrees_with_exhaustive_enumeration():
    """Distinguishing, for every knob of the fragment and each of its other options: Z3's
    shortest length (or none) equals the executable model's over the same alphabet, every
    reading stepped side by side and conformance judged under some producer reading (depth 3
    here; depth 4 agrees too, but takes minutes to enumerate)."""
    pairs = q.knob_pairs()
    readings = {"draft": DRAFT}
    readings.update({f"r{i}": b for i, (_, b) in enumerate(pairs)})

    def goal(name):
        def holds(view, aux):
            pair = StepView(view.index, view.event, view.abstract,
                            {"a": view.copies["draft"], "b": view.copies[name]},
                            view.belief_before, view.belief_after, view.broken,
                            view.conformant_before, view.conformant)
            return bool(q._concrete_differences(pair))
        return Goal(holds)

    found = enumerate_shortest(SMALL_WORLD, 3, readings, None,
                               {f"r{i}": goal(f"r{i}") for i in range(len(pairs))})
    expected = {f"r{i}": (len(v) + 1 if v else None) for i, v in
                enumerate(found[f"r{i}"] for i in range(len(pairs)))}
    got = {f"r{i}": q.distinguishing(a, b, 3, SMALL_WORLD).length
           for i, (a, b) in enumerate(pairs)}
    assert got == expected
    knob_of = {f"r{i}": next(iter(b.differences())) for i, (_, b) in enumerate(pairs)}
    assert {knob_of[k] for k, v in expected.items() if v == 3} == {
        "Q5", "Q8", "Q11", "Q13", "X1"}
    # X1=drop-open parts from drop only after a producer violation (RUN_FINISHED or a second
    # START with the dropped stream open), so that pair has no conformant witness
    assert {knob_of[k] for k, v in expected.items() if v is None} == {
        "Q2", "Q3", "Q4", "Q4-opener", "Q7", "Q9", "Q10", "X1"}
    assert [v for k, v in expected.items() if pairs[int(k[1:])][1].x1 == "drop-open"] == [None]


def test_distinguishing_producer_modes():
    first = DRAFT.with_(**{"Q4-opener": "first"})
    # some producer reading (Q4-opener=current) allows the tagged delta after a re-mint
    assert q.distinguishing(DRAFT, first, 5).detail["producerReading"] == {
        "Q2": "continues", "Q4-opener": "current"}
    # conformant under both readings: only a drop, a re-creating snapshot the consumer ignores
    # (Q10=seen), a restatement and a re-mint by the creator tell them apart
    assert q.distinguishing(DRAFT, first, 6, producer="both").status == "unsat"
    both = q.distinguishing(DRAFT, first, 7, producer="both")
    assert both.length == 7 and both.detail["differences"] == ["content", "fatal"]
    # any trace: a re-mint and a delta tagged by the new owner
    assert q.distinguishing(DRAFT, first, 5, conformant=False).length == 4


def test_distinguish_labels_name_both_full_readings():
    """A row names both readings in full: a draft option is named, never dropped."""
    pr = parse_reading("Q2=parent,Q8=keep")
    assert q.pair_label(DRAFT, DRAFT.with_(Q2="parent")) == "Q2=continues vs Q2=parent"
    assert q.pair_label(pr, pr.with_(Q2="continues")) == \
        "Q2=parent,Q8=keep vs Q2=continues,Q8=keep"
    answer = q.distinguishing(DRAFT, DRAFT.with_(Q5="retype"), 3)
    assert answer.subject == "Q5=skip vs Q5=retype" and answer.reading == answer.subject


def test_cli_distinguish_judges_the_producer_under_its_reading(capsys):
    """`--reading R` judges conformance under R's own producer rules by default (Q2=parent
    forbids an untagged replace:false on a subagent's activity), `--producer any` widens it
    to some producer reading; the rows name both readings in full."""
    base = ["smt", "distinguish", "--reading", "Q2=parent,Q8=keep", "--versus",
            "Q2=parent,Q8=keep,Q3=warn", "--depth", "5", "--json"]
    assert main(base) == 0
    (mine,) = json.loads(capsys.readouterr().out)["answers"]
    assert mine["subject"] == "Q2=parent,Q3=keep,Q8=keep vs Q2=parent,Q3=warn,Q8=keep"
    assert mine["producer"] == "Q2=parent,Q8=keep" and mine["length"] == 4
    from model.wire import parse_events
    # conformant under the proposal: a MESSAGES_SNAPSHOT revokes the activity for the producer
    # (Q8 is the consumer's), so the subagent's replace:false creates it again
    assert check_trace(parse_events(mine["witness"]["wire"]), parse_reading("Q2=parent")) == []
    assert main(base + ["--producer", "any"]) == 0
    (wide,) = json.loads(capsys.readouterr().out)["answers"]
    assert wide["producer"] == "any" and wide["length"] == 3
    # the wider witness breaks the proposal's own producer rule (ACT-ATTR-AGREE under Q2=parent)
    events = parse_events(wide["witness"]["wire"])
    assert check_trace(events, DRAFT) == []
    assert {v.clause for _, v in check_trace(events, parse_reading("Q2=parent"))} == \
        {"ACT-ATTR-AGREE"}


@pytest.mark.parametrize("knob, option, why", [("Q1", "ignore", "no event carries metadata"),
                                                ("Q20", "fatal", "unknown ops are outside"),
                                                ("Q21", "shim", "null members")])
def test_readings_outside_the_fragment_are_refused(knob, option, why):
    """The encoding never consults Q1, Q6, Q6-ms, Q20, Q21: an answer under a reading that sets
    one would be draft's answer (Q1 splits a 3-event trace the fragment cannot express, so
    distinguish would say "agree"). Every query refuses such a reading, naming the knob and the
    encoding's reason, instead of answering."""
    off = DRAFT.with_(**{knob: option})
    expected = rf"^{knob} is outside the Z3 fragment \({knob}={option}; .*{why}.*explore"
    calls = [lambda: q.distinguishing(DRAFT, off, 5), lambda: q.distinguishing(off, DRAFT, 5),
             lambda: q.distinguishing(off, off.with_(Q5="retype"), 5),
             lambda: q.distinguishing(DRAFT, DRAFT.with_(Q5="retype"), 5, producer=off),
             lambda: q.reachability("any-fatal", 3, off), lambda: q.vacuity(3, off),
             lambda: q.consistency(3, off), lambda: q.bounded_proof("P02-content-object", 3, off)]
    for call in calls:
        with pytest.raises(ValueError, match=expected):
            call()
    with pytest.raises(ValueError, match=r"^the two readings are the same \(draft\)$"):
        q.distinguishing(DRAFT, DRAFT, 5)
    # None (the knobs left to the solver) ranges over the fragment's knobs only, and is accepted
    assert q.reachability("any-fatal", 2, None).status == "unsat"


def test_answers_are_deterministic():
    a = q.distinguishing(DRAFT, DRAFT.with_(Q10="held"), depth=5).to_json(timing=False)
    b = q.distinguishing(DRAFT, DRAFT.with_(Q10="held"), depth=5).to_json(timing=False)
    assert json.dumps(a) == json.dumps(b)
    assert a["witness"]["wire"][2] == {"type": "MESSAGES_SNAPSHOT", "messages": [
        {"id": "id-2", "role": "activity", "activityType": "PLAN", "content": {"n": 0}}]}


def test_witness_is_a_replayable_wire_trace():
    # only a producer that reuses an id across roles (EVM-ID-UNIQUE) gets there
    assert q.reachability("snapshot-on-non-activity", depth=5).status == "unsat"
    a = q.reachability("snapshot-on-non-activity", depth=4, conformant=False)
    assert [e.type_name for e in a.witness.trace] == ["RUN_STARTED", "TEXT_MESSAGE_START",
                                                      "ACTIVITY_SNAPSHOT"]
    assert evaluate(a.witness.trace).warnings[0][1].code == "ACTIVITY_TARGET_NOT_ACTIVITY"
    assert evaluate(a.witness.trace, PRESETS["strict"]).fatal is not None
    ms = AbstractEvent(3, ms=(MsEntry(), MsEntry(2, rank=0)))
    assert realise_trace(SMALL_WORLD, (ms,))[1].messages[0].role == "assistant"


# --- command line -------------------------------------------------------------------------------

def test_cli_text_fits_120_columns(capsys):
    """``smt``'s text fits 120 columns as every other command's (docs/outputs.md): the vacuity
    table (its detail column) was drawn 160 columns wide off a terminal, and ``smt list``
    printed each query's subjects on one line of up to 654 columns; the subjects stay whole."""
    from model.text import columns
    from properties.smt import queries as q
    assert main(["smt", "vacuity", "--depth", "3"]) == 0
    out = capsys.readouterr().out
    assert max(columns(line) for line in out.splitlines()) <= 120
    assert "ACT-DELTA-BASELINE" in out and "never fires" in out
    assert main(["smt", "list"]) == 0
    out = capsys.readouterr().out
    assert max(columns(line) for line in out.splitlines()) <= 120
    listed = out.split("consistency:")[0].split("vacuity:")[1]
    assert [s.strip(",") for s in listed.split()] == list(q.SUBJECTS["vacuity"])


def test_cli_json_is_stable_and_errors_are_one_line(capsys):
    args = ["smt", "distinguish", "--versus", "Q5=retype", "--depth", "4", "--json"]
    assert main(args) == 0
    first = json.loads(capsys.readouterr().out)
    assert main(args) == 0
    second = json.loads(capsys.readouterr().out)
    for doc in (first, second):
        doc.pop("seconds")
        for a in doc["answers"]:
            a.pop("seconds")
    assert first == second and first["answers"][0]["length"] == 3
    assert main(["smt", "prove", "--subject", "P10-replace-false-owner-stands",
                 "--depth", "4"]) == 0
    assert "proved" in capsys.readouterr().out
    for bad in (["smt", "nope"], ["smt", "reach", "--depth", "0"],
                ["smt", "reach", "--reading", "Q7=maybe"], ["smt", "reach", "--subject", "x"],
                ["smt", "vacuity", "--traces", "any"], ["smt", "distinguish", "--reading", "any"]):
        assert main(bad) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "Traceback" not in err


@pytest.mark.parametrize("args, message", [
    (["distinguish", "--versus", "Q1=ignore", "--depth", "5"],
     ("--versus: Q1 is outside the Z3 fragment (Q1=ignore; metadata is outside the fragment "
      "(no event carries metadata)")),
    (["distinguish", "--versus", "Q20=fatal", "--depth", "5"],
     "--versus: Q20 is outside the Z3 fragment (Q20=fatal; "),
    (["distinguish", "--reading", "Q6=merge"], "--reading: Q6 is outside the Z3 fragment"),
    (["distinguish", "--producer", "Q6-ms=merge"], "--producer: Q6-ms is outside the Z3 fragment"),
    (["reach", "--reading", "Q1=ignore"], "--reading: Q1 is outside the Z3 fragment"),
    (["prove", "--reading", "strict"], "--reading: Q20 is outside the Z3 fragment"),
    (["vacuity", "--reading", "lenient"], "--reading: Q21 is outside the Z3 fragment"),
    (["distinguish", "--versus", "draft"], "--versus: the two readings are the same (draft)"),
    (["distinguish", "--reading", "Q7=skip", "--versus", "Q7=skip"],
     "--versus: the two readings are the same (Q7=skip)"),
    (["distinguish", "--producer", "nope"], "--producer: unknown reading 'nope'"),
    (["distinguish", "--versus", "nope"], "--versus: unknown reading 'nope'"),
    (["reach", "--subject", ""],
     "--subject: empty subject for reach; subjects: owner-changed-by-replace-false, "),
    (["prove", "--subject", "P02-content-object,"],
     "--subject: empty subject for prove; subjects: P02-content-object, "),
])
def test_cli_refuses_what_it_cannot_answer(capsys, args, message):
    """Exit 2 with one line naming the option at fault, before any solving: a reading outside
    the fragment (the answer would be wrong, not "agree"), the same reading twice, an empty
    subject (it used to mean every subject)."""
    assert main(["smt"] + args) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1
    assert captured.err.startswith(f"activity-check: error: {message}")
