"""The settlement table (properties.questions): one row per open question, its form computed by
the engines (issue 19)."""
from __future__ import annotations

import pytest

from properties.questions import QUESTIONS, settle, settled_count


@pytest.fixture(scope="module")
def sweep():
    """The depth-4 all-readings sweep, run once for the module: the table's and the engines'."""
    from properties.search.explore import ExploreOptions, explore
    return explore(ExploreOptions(depth=4, reading=None, properties=()))


@pytest.fixture(scope="module")
def rows(sweep):
    return settle(depth=4, report=sweep)


def test_one_row_per_question_in_order(rows):
    assert [r["question"] for r in rows] == [f"Q{i}" for i in range(1, 26)]
    assert [q.id for q in QUESTIONS] == [r["question"] for r in rows]


def test_forms_of_the_modelled_questions(rows):
    by = {r["question"]: r for r in rows}
    conformant = ["Q1", "Q2", "Q3", "Q4", "Q5", "Q6", "Q8", "Q10", "Q11", "Q13", "Q18", "Q19", "Q20"]
    assert [q for q in conformant if by[q]["form"] != "A"] == []
    assert {q: by[q]["form"] for q in ("Q7", "Q9", "Q21")} == {"Q7": "B", "Q9": "B", "Q21": "B"}
    assert by["Q16"]["form"] == "C" and by["Q16"]["proofDepth"] == 4
    assert by["Q16"]["engine"] == "Z3"
    # every witness of A or B is a trace of the stated length, then the events that end what
    # it left open (issue 39: a complete stream)
    for r in rows:
        if r["form"] in ("A", "B"):
            assert len(r["witness"]) == r["length"] + r["closing"] and r["witness"][0]["type"]
            assert r["witness"][-1]["type"] == "RUN_FINISHED", r["question"]
    # the shortest conformant witnesses the BFS finds at depth 4 (docs/readings.md, "The
    # settlement table"); Q11's is 3 since a MESSAGES_SNAPSHOT may state two new activities (item 4)
    assert {q: by[q]["length"] for q in ("Q1", "Q4", "Q10", "Q11")} == {
        "Q1": 3, "Q4": 4, "Q10": 4, "Q11": 3}


def test_bfs_and_z3_lengths_for_fragment_knobs(rows):
    """Item 4 of issue 19: on every row whose knob is in the Z3 fragment, Z3 asked on the same
    pair of readings finds a witness of exactly the BFS's length (Z3 searched up to it: none
    shorter)."""
    from properties.smt.encoding import FRAGMENT_KNOBS
    fragment = {r["question"]: (r["bfsLength"], r["z3Length"], r["engine"]) for r in rows
                if r["knob"] in FRAGMENT_KNOBS and r["form"] in ("A", "B")}
    assert set(fragment) == {"Q2", "Q3", "Q4", "Q5", "Q7", "Q8", "Q9", "Q10", "Q11", "Q13"}
    assert {q: v for q, v in fragment.items() if v[0] != v[1] or v[2] != "both"} == {}


def test_every_question_is_settled(rows):
    assert [r["question"] for r in rows if r["form"] is None] == []
    assert settled_count(rows) == 25


def test_depth_below_two_is_refused():
    with pytest.raises(ValueError):
        settle(depth=1)


# --- H1: the questions modelled as knobs in issue 19 (Q12, Q14, Q15, Q17, Q23) and Q22's proof ---

def _types(trace) -> list[str]:
    return [e["type"] if isinstance(e, dict) else e.type_name for e in trace]


def test_h1_producer_side_questions_have_a_monitor_knob_and_a_trace(rows):
    by = {r["question"]: r for r in rows}
    q12, q17 = by["Q12"], by["Q17"]
    assert (q12["form"], q12["knobs"], q12["length"]) == ("C", ["Q12"], 3)
    assert _types(q12["witness"]) == ["RUN_STARTED", "ACTIVITY_SNAPSHOT", "ACTIVITY_DELTA",
                                      "RUN_FINISHED"]
    assert q12["witness"][1]["subagentRunId"] == "sub-1" and \
        "subagentRunId" not in q12["witness"][2]
    assert (q17["form"], q17["knobs"], q17["length"]) == ("C", ["Q17"], 1)
    echoed = q17["witness"][0]["input"]["messages"]
    assert [m["role"] for m in echoed] == ["user", "activity"]
    # what each option makes of the trace: conformant under draft only
    from model.producer import check_trace
    from model.readings import DRAFT
    from model.wire import parse_events
    for q, other, clause in (("Q12", "owner", "ACT-DELTA-BASELINE"),
                             ("Q17", "strip-echo", "RIN-ECHO-STRIPPED")):
        trace = parse_events(by[q]["witness"])
        assert check_trace(trace) == []
        assert [v.clause for _, v in check_trace(trace, DRAFT.with_(**{q: other}))] == [clause]


def test_h1_q14_splits_a_conformant_trace_at_depth_4(rows):
    from model.readings import DRAFT
    from model.verdict import evaluate
    from model.wire import parse_events
    q14 = {r["question"]: r for r in rows}["Q14"]
    assert (q14["form"], q14["length"]) == ("A", 4)
    assert _types(q14["witness"]) == ["RUN_STARTED", "ACTIVITY_SNAPSHOT", "ACTIVITY_DELTA",
                                      "ACTIVITY_SNAPSHOT", "RUN_FINISHED"]
    trace = parse_events(q14["witness"])
    assert trace[3].replace is False
    decline = evaluate(trace, DRAFT).to_json()
    adopt = evaluate(trace, DRAFT.with_(Q14="adopt")).to_json()
    assert [m["activityType"] for m in decline["messages"]] == ["PLAN"]
    assert [m["activityType"] for m in adopt["messages"]] == ["SEARCH"]
    assert [w["code"] for w in decline["warnings"]] == [w["code"] for w in adopt["warnings"]] == [
        "ACTIVITY_PATCH_FAILED"]


def test_h1_q22_is_a_bounded_proof_under_every_reading(rows):
    q22 = {r["question"]: r for r in rows}["Q22"]
    assert (q22["form"], q22["engine"], q22["proofDepth"]) == ("C", "Z3", 4)
    assert QUESTIONS[21].proofs == ("P12-delta-missing-tolerated", "P15-patch-atomic",
                                    "P39-fatal-justified")


def test_h1_q15_and_q23_need_five_events():
    """Both need a fifth event (an invocation announced and finished; a second run), so at
    depth 4 the default vocabulary has no split (the rows' C) and at depth 5 it has one, here
    found on a one-activity world so the test stays quick."""
    from dataclasses import replace
    from model.readings import DRAFT
    from model.verdict import evaluate
    from properties.search.explore import EXPLORE_VOCABULARY, ExploreOptions, explore
    small = replace(EXPLORE_VOCABULARY, activity_ids=("act-1",), activity_types=("PLAN",),
                    patches=(("set-n", ({"op": "replace", "path": "/n", "value": 2},)),),
                    metadata=(None,), replace_flags=(None,))
    assert not {"Q15", "Q23"} & set(explore(ExploreOptions(depth=4, vocabulary=small, reading=None,
                                                           properties=())).splits)
    splits = explore(ExploreOptions(depth=5, vocabulary=small, reading=None, properties=())).splits
    q15, q23 = splits["Q15"][0], splits["Q23"][0]
    assert _types(q15) == ["RUN_STARTED", "SUBAGENT_STARTED", "ACTIVITY_SNAPSHOT",
                           "SUBAGENT_FINISHED", "ACTIVITY_DELTA"]
    assert _types(q23) == ["RUN_STARTED", "ACTIVITY_SNAPSHOT", "RUN_FINISHED", "RUN_STARTED",
                           "ACTIVITY_DELTA"]
    outcome = {}
    for knob, trace, options in (("Q15", q15, ("live", "closed")),
                                 ("Q23", q23, ("continue", "run-scoped"))):
        for option in options:
            v = evaluate(trace, DRAFT.with_(**{knob: option})).to_json()
            outcome[(knob, option)] = ([m["content"] for m in v["messages"]],
                                       [w["code"] for w in v["warnings"]])
    assert outcome == {
        ("Q15", "live"): ([{"n": 2}], []),
        ("Q15", "closed"): ([{"n": 0}], ["ACTIVITY_OWNER_ENDED"]),
        ("Q23", "continue"): ([{"n": 2}], []),
        ("Q23", "run-scoped"): ([{"n": 0}], ["ACTIVITY_DELTA_NO_RUN_BASELINE"])}


# --- H2: the command, the page, the run's table, item 4 and the proofs of Q24 and Q25 -----------

def test_q15_and_q23_rows_take_the_deeper_pair_search(rows):
    """Q15 and Q23 need five events, past the sweep's depth 4: the pair search over the
    lifecycle vocabulary (depth + DEEPER) finds them, so the rows are A, not a C that would
    claim no reading matters."""
    by = {r["question"]: r for r in rows}
    for q in ("Q15", "Q23"):
        r = by[q]
        assert (r["form"], r["length"], r["engine"]) == ("A", 5, "BFS"), r
        assert "longer than the sweep's depth" in r["note"]
        ends = {o["option"]: (o["warnings"], [m["content"] for m in o["messages"]])
                for o in r["options"]}
        assert len(set(map(repr, ends.values()))) == 2, ends


def test_q24_and_q25_are_proofs_under_every_reading(rows):
    by = {r["question"]: r for r in rows}
    assert (by["Q24"]["form"], by["Q24"]["engine"], by["Q24"]["proofDepth"]) == ("C", "Z3", 4)
    assert by["Q24"]["proofs"] == ["PQ24-replace-false-creates"]
    assert (by["Q25"]["form"], by["Q25"]["engine"], by["Q25"]["proofDepth"]) == ("C", "BFS", 4)
    assert by["Q25"]["proofs"] == ["PQ25-content-open"]


def test_pq24_is_not_vacuous():
    """The same relational statement on a *held* id (where replace:false declines) has a
    3-event counterexample, so the unsat answer of PQ24 comes from its premise, not from an
    encoding that can never differ."""
    import dataclasses
    import z3
    from properties.smt import checks
    from properties.smt.queries import bounded_proof
    from properties.smt.world import R_ABSENT, R_FALSE, SNAP

    def held(at):
        e = at.e
        other = at.u.step_variant(at.t, at.B, at.k, "held_", rep=R_ABSENT)
        return z3.And(at.live, e.kind == SNAP, e.rep == R_FALSE, at.tgt(at.B, "ex"),
                      z3.Or([at.A["cont"][j] != other.after["cont"][j] for j in at.slots]))
    pid = "PQ24-replace-false-creates"
    original = checks.PROOF_BY_ID[pid]
    checks.PROOF_BY_ID[pid] = dataclasses.replace(original, z3_at=held, holds=lambda v, a: True)
    try:
        answer = bounded_proof(pid, 4, reading=None)
    finally:
        checks.PROOF_BY_ID[pid] = original
    assert (answer.status, answer.length) == ("sat", 3)
    assert bounded_proof(pid, 5, reading=None).status == "unsat"


def test_pq25_catches_a_stripped_key_and_a_dropped_null():
    from model.consumer import initial_state, step
    from model.readings import DRAFT
    from model.wire import parse_events
    from properties.catalogue import CONTENT_OPEN, Transition
    run, snap = parse_events([
        {"type": "RUN_STARTED", "threadId": "t", "runId": "r"},
        {"type": "ACTIVITY_SNAPSHOT", "messageId": "a", "activityType": "PLAN",
         "content": {"n": None, "x": {"deep": None}}}])
    before = step(initial_state(), run, DRAFT).state
    good = step(before, snap, DRAFT)
    t = Transition(1, before, snap, good.state, good.warnings, good.fatal, DRAFT)
    assert CONTENT_OPEN.check(t) is None
    held = good.state.messages[0]
    for bad in ('{"x":{"deep":null}}', '{"n":null,"x":{}}'):
        stripped = good.state.but(messages=(held.__class__(
            held.id, held.role, bad, held.activity_type, held.metadata, held.owner,
            held.first_owner, held.other),))
        t = Transition(1, before, snap, stripped, good.warnings, good.fatal, DRAFT)
        assert "neither the content stated nor a patch result" in CONTENT_OPEN.check(t)


def test_questions_command_json_text_and_html(tmp_path, capsys, monkeypatch, sweep, rows):
    """``questions --json`` prints the settled count and the rows; ``--out`` writes the table,
    the page (one table row per question, parsed with html.parser) and the witnesses, which
    ``replay`` reads. (The command's depth-4 sweep is the module's: the same call answered by
    the sweep already run; the rest of the table is computed by the command.)"""
    import json
    from html.parser import HTMLParser
    import properties.search.explore as explore_module
    from activity_check.cli import main
    real, asked = explore_module.explore, []

    def explore(options):
        if options == explore_module.ExploreOptions(depth=4, reading=None, properties=()):
            asked.append(options)
            return sweep
        return real(options)
    monkeypatch.setattr(explore_module, "explore", explore)
    out = tmp_path / "q"
    assert main(["questions", "--depth", "4", "--json", "--out", str(out)]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert len(asked) == 1
    assert (doc["settled"], doc["total"], doc["depth"]) == (25, 25, 4)
    assert [r["question"] for r in doc["questions"]] == [f"Q{i}" for i in range(1, 26)]
    assert doc["questions"] == json.loads(json.dumps(rows))
    assert json.loads((out / "questions.json").read_text()) == doc

    class Rows(HTMLParser):
        def __init__(self):
            super().__init__()
            self.rows, self.sections, self.svgs, self.scripts = [], [], 0, 0

        def handle_starttag(self, tag, attrs):
            a = dict(attrs)
            if tag == "tr" and "question" in (a.get("class") or ""):
                self.rows.append(a["id"])
            elif tag == "section":
                self.sections.append(a["id"])
            self.svgs += tag == "svg"
            self.scripts += tag == "script"
    page = Rows()
    page.feed((out / "questions.html").read_text())
    assert page.rows == [f"row-Q{i}" for i in range(1, 26)]
    assert page.sections == [f"Q{i}" for i in range(1, 26)]  # questions.html#Q11: the section
    with_witness = [r for r in doc["questions"] if r["witnessFile"]]
    assert page.svgs == len(with_witness) and page.scripts == 0  # offline: nothing loaded
    for r in with_witness:
        lines = (out / r["witnessFile"]).read_text().splitlines()
        assert [json.loads(x) for x in lines] == r["witness"]
    q11 = next(r for r in doc["questions"] if r["question"] == "Q11")
    assert main(["replay", str(out / q11["witnessFile"]), "--json", "--all-readings"]) == 0
    assert "Q11=move" in capsys.readouterr().out
    for depth in ("1", "6", "99"):  # a deeper table would run for hours: refused, one line
        assert main(["questions", "--depth", depth]) == 2
        err = capsys.readouterr().err
        assert f"--depth must be from 2 to 5, not {depth}" in err and len(err.splitlines()) == 1


def test_run_writes_the_table_and_the_page(tmp_path, rows):
    """``run`` reuses its BFS sweep for the table: summary.json holds the same rows as
    ``settle`` at the BFS depth, and questions.html and the witnesses are written beside it."""
    import json
    from counterexamples.pipeline import RunConfig, run_pipeline, write_run
    config = RunConfig(seed=0, examples=5, budget=float("inf"), max_events=4, bfs_depth=4)
    result = run_pipeline(config, "test")
    write_run(result, str(tmp_path))
    summary = json.loads((tmp_path / "summary.json").read_text())
    table = summary["questions"]
    assert (table["depth"], table["total"], table["settled"]) == (4, 25, 25)
    assert table["rows"] == json.loads(json.dumps(rows))
    assert table["settled"] == settled_count(table["rows"])
    html_text = (tmp_path / "questions.html").read_text()
    assert html_text.count("<tr id='row-Q") == 25
    written = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*")
                     if p.is_file() and p.name != "summary.json" and
                     p.relative_to(tmp_path).parts[0] != "findings")
    # the recommended proposal's page stands beside the table's (issue 41)
    assert summary["resolve"]["files"] == ["resolve.html"]
    assert written == sorted(table["files"] + summary["resolve"]["files"])
    assert table["files"][0] == "questions.html"
    assert table["files"][1:] == [r["witnessFile"] for r in table["rows"] if r["witnessFile"]]


def test_bfs_and_smt_distinguish_agree_on_every_fragment_knob(sweep):
    """Issue 19 item 4: the sweep at depth 4 splits every knob of the Z3 fragment, and for each
    Z3 (``smt distinguish``) finds a witness of exactly the BFS's length on the same readings,
    and none shorter against draft (knobs split only after a violation aside). Costs some
    25 small Z3 searches (the sweep is the module's)."""
    from properties.questions import engine_lengths
    from properties.smt.encoding import FRAGMENT_KNOBS
    lengths = engine_lengths(sweep)
    # Q7 and Q9 split only after a producer violation (form B): their rows compare the
    # violating search with Z3 on any trace (test_bfs_and_z3_lengths_for_fragment_knobs)
    assert sorted(lengths) == sorted(set(FRAGMENT_KNOBS) - {"Q7", "Q9"})
    assert {k: v for k, v in lengths.items() if v[1] != v[0] or v[2] is not None} == {}
    assert lengths["Q11"] == (3, 3, None)


def test_an_interrupted_sweep_gives_no_table(monkeypatch):
    """A Ctrl-C (or a SIGTERM, which unwinds as one) during the sweep stops ``settle``: the
    partial sweep is not taken for "no split" (it would settle questions as form C)."""
    import properties.search.explore as explore_module
    from properties.search.bfs import Search
    from properties.questions import settle
    real = explore_module.explore

    def interrupted(options):
        report = real(explore_module.ExploreOptions(depth=2, reading=None, properties=()))
        report.stopped_by, report.complete = "interrupted", False
        return report

    monkeypatch.setattr(explore_module, "explore", interrupted)
    with pytest.raises(KeyboardInterrupt):
        settle(depth=3, z3=False)
    with pytest.raises(KeyboardInterrupt):
        Search(stopped_by="interrupted").raise_if_interrupted()
    Search(stopped_by="depth").raise_if_interrupted()  # any other stop: nothing raised


def test_recommendations_text_keeps_each_peer_name_whole():
    """The recommendations block of ``questions`` folds within 120 columns between peers,
    never inside a peer's name: package, version and mode stay on one line (it printed
    '@tanstack/ai' at a line's end and '0.58.0' at the next one's start)."""
    from counterexamples.report.questions_page import _recommendation_lines
    from model.readings import KNOBS
    rows = [{"question": k.id.split("-")[0], "knobs": [k.id]} for k in KNOBS]  # Q4-opener: Q4
    lines = _recommendation_lines(rows, "  ", 120)
    assert max(len(line) for line in lines) <= 120
    names = {n for k in KNOBS for _, group in k.peer_groups() for n in group}
    assert {"@tanstack/ai 0.58.0", "@ag-ui/client 1.0.0 reducer"} <= names
    flat = " ".join(line.strip() for line in lines)
    # a name folded over two lines is in the block read as one line, but in none of its lines
    broken = {n: flat.count(n) - sum(line.count(n) for line in lines) for n in names}
    assert {n: c for n, c in broken.items() if c} == {}


def test_the_printed_table_names_no_file_when_nothing_was_written():
    """``questions --json`` without --out lists no file (it listed questions.html and the
    witness files, none of them written); ``questions.json`` in an --out directory lists them."""
    from counterexamples.report.questions_page import table_json
    rows = [{"question": "Q8", "form": "A", "witnessFile": "questions/Q8.jsonl"},
            {"question": "Q16", "form": "C", "witnessFile": None}]
    assert table_json(rows, 4, written=False)["files"] == []
    assert table_json(rows, 4)["files"] == ["questions.html", "questions/Q8.jsonl"]
