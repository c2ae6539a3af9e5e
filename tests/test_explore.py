"""The exhaustive breadth-first search: bounds, shortest witnesses, graph export, CLI."""
import dataclasses
import json
import os
from pathlib import Path

import networkx as nx

from activity_check.cli import main
import pytest

from model.verdict import splits_of
from properties.search.explore import ExploreOptions, explore
from properties.search.graph import shortest_trace_to, state_graph
from properties.search.reading_classes import PRODUCER_READINGS, step_splits
from properties.search.report import trace_to
from properties.search.system_pair import shortest_distinguishing
from properties.zoo import MUTANT_BY_NAME
from model.readings import DRAFT
from model.producer import check_trace
from model.verdict import evaluate, split_readings, trace_states, verdict_key
from wirekit import delta, snap, trace


def test_depth_three_counts_and_shortest_splits():
    r = explore(ExploreOptions(depth=3))
    assert (r.states, r.depth, r.complete, r.stopped_by) == (441, 3, True, "depth")
    assert r.violations == {}
    # each question found at depth <= 3 has a 3-event witness (RUN_STARTED + two events), but
    # Q19 (where a snapshot's metadata goes), which splits on the snapshot creating the message;
    # Q11's is a MESSAGES_SNAPSHOT stating two activities, then a replacing snapshot of the first
    assert {k: len(t) for k, (t, _) in r.splits.items()} == {
        **{k: 3 for k in ("Q1", "Q13", "Q6", "Q20", "Q5", "Q6-ms", "Q8", "X1", "Q18", "Q11")},
        "Q19": 2}
    witness, (a, b) = r.splits["Q1"]
    ra, rb = DRAFT.with_(**{"Q1": a["Q1"]}), DRAFT.with_(**{"Q1": b["Q1"]})
    assert verdict_key(evaluate(witness, ra)) != verdict_key(evaluate(witness, rb))
    # no shorter trace splits Q1: depth 2 finds nothing
    assert "Q1" not in explore(ExploreOptions(depth=2)).splits


def test_parent_map_rebuilds_paths():
    r = explore(ExploreOptions(depth=2))
    for node in range(1, r.states):
        path = trace_to(r, node)
        assert 1 <= len(path) <= 2 and path[0].type_name == "RUN_STARTED"


def test_bounds_say_what_stopped_them():
    r = explore(ExploreOptions(depth=6, max_states=300))
    assert r.stopped_by == "max-states" and r.states == 300 and not r.complete
    r = explore(ExploreOptions(depth=50, timeout=0.2))
    assert r.stopped_by == "timeout" and not r.complete


def test_graph_has_every_examined_edge_only_when_kept():
    kept = explore(ExploreOptions(depth=3, keep_edges=True))
    graph = state_graph(kept)
    assert graph.number_of_nodes() == kept.states
    tree = [e for e in graph.edges(data=True) if e[2]["tree"]]
    assert len(tree) == kept.states - 1
    assert graph.number_of_edges() > len(tree)  # edges into visited states are there too
    assert nx.is_weakly_connected(graph)
    assert explore(ExploreOptions(depth=3)).edges_seen == []


def test_bfs_finds_a_mutant_with_a_shortest_witness():
    mutant = MUTANT_BY_NAME["owner-not-reminted"]
    r = explore(ExploreOptions(depth=4, consumer=mutant, check_readings=False,
                               stop_when_found=True))
    witness, _ = r.violations["P07-replace-remints"]
    assert len(witness) == 3 and r.depth == 3


def test_step_splits_one_step():
    events = trace(snap(), snap(replace=False, metadata={"k": 1}))
    from model.verdict import trace_states
    before = trace_states(events[:2])[-1]
    # the second snapshot carries metadata: Q1 (merge or not) and Q19 (where metadata goes) part
    assert set(step_splits(before, events[2])) == {"Q1", "Q19"}
    assert step_splits(before, trace(delta(patch=[]))[1]) == {}


def test_explore_cli(tmp_path, capsys):
    graph = tmp_path / "g.graphml"
    assert main(["explore", "--depth", "2", "--graph", str(graph)]) == 0
    out = " ".join(capsys.readouterr().out.split())  # lines wrap at 120 columns (issue 39)
    assert "stopped by the depth bound (2)" in out
    states = explore(ExploreOptions(depth=2, reading=None)).states
    assert nx.read_graphml(graph).number_of_nodes() == states
    assert main(["explore", "--depth", "2", "--graph", str(graph)]) == 2  # never overwrites
    assert main(["explore", "--depth", "0"]) == 2
    assert main(["explore", "--max-states", "-1"]) == 2


def test_explore_cli_writes_no_graph_after_an_interrupted_search(tmp_path, capsys, monkeypatch):
    """A search stopped by Ctrl-C (or SIGTERM) prints its report and then stops: the graph,
    a minute or more at the default bound, is not written (from the third review)."""
    import properties.search.explore as explore_module

    def interrupted(options):
        report = explore(dataclasses.replace(options, depth=1))
        report.stopped_by = "interrupted"
        return report
    monkeypatch.setattr(explore_module, "explore", interrupted)
    path = tmp_path / "g.graphml"
    for json_flag in ([], ["--json"]):
        assert main(["explore", "--depth", "3", "--graph", str(path), *json_flag]) == 130
        out, err = capsys.readouterr()
        assert "explored" in out or json.loads(out)["stoppedBy"] == "interrupted"
        assert [line for line in err.splitlines() if line] == [
            f"activity-check: interrupted; the state graph was not written to {path}"]
        assert not path.exists()


def test_the_cli_and_the_api_share_the_default_bound():
    """``activity-check explore`` and :func:`explore` explore to the same depth by default (the
    command line keeps its own constant so as not to import the search when it starts)."""
    from activity_check.cli import build_parser
    from activity_check.cmd_explore import DEFAULT_EXPLORE_DEPTH
    assert ExploreOptions().depth == DEFAULT_EXPLORE_DEPTH == 5
    assert build_parser().parse_args(["explore"]).depth == DEFAULT_EXPLORE_DEPTH


def test_explore_takes_one_frozen_options_value():
    """``explore`` takes one :class:`ExploreOptions` (frozen: a variant is derived with
    ``dataclasses.replace``), and says so in one line when given anything else."""
    options = ExploreOptions(depth=2, reading=None)
    with pytest.raises(dataclasses.FrozenInstanceError):
        options.depth = 3
    with pytest.raises(TypeError, match=r"explore\(ExploreOptions\(depth=4\)\), not int"):
        explore(2)
    assert explore(options).states == 35
    assert explore(dataclasses.replace(options, depth=1)).states < 35


def test_explore_cli_prints_the_report_before_the_graph(tmp_path, capsys):
    """The report comes first (the graph of the default bound takes a minute or more to write),
    then the line that names the written graph; with --json the JSON alone on stdout."""
    dot = tmp_path / "g.dot"
    assert main(["explore", "--depth", "2", "--graph", str(dot)]) == 0
    out = " ".join(capsys.readouterr().out.split())  # as one line, however the console wraps
    edges = dot.read_text(encoding="utf-8").count(" -> ")
    said = f"wrote the state graph (35 states, {edges:,} edges: one per class of readings a " \
           f"move reaches) to {dot}"
    assert out.index("stopped by the depth bound (2)") < out.index(said)
    assert dot.read_text(encoding="utf-8").startswith("digraph states {\n") and edges >= 34
    graphml = tmp_path / "g.graphml"
    assert main(["explore", "--depth", "2", "--json", "--graph", str(graphml)]) == 0
    states = explore(ExploreOptions(depth=2, reading=None)).states
    assert json.loads(capsys.readouterr().out)["states"] == states
    assert nx.read_graphml(graphml).number_of_nodes() == states


@pytest.mark.parametrize("fault, code", [(KeyboardInterrupt, 130),
                                         (OSError(28, "No space left on device"), 2)])
def test_explore_cli_leaves_no_partial_graph(tmp_path, capsys, monkeypatch, fault, code):
    """A write of the graph that is interrupted or fails after some bytes removes its file (from
    the second review of the new default bound: a Ctrl-C left a truncated graph that then made
    the same command refuse to run); the report is printed before, and one line says why."""
    def failing(graph, fh):
        fh.write(b"<?xml partial")
        raise fault
    monkeypatch.setattr(nx, "write_graphml", failing)
    path = tmp_path / "g.graphml"
    assert main(["explore", "--depth", "2", "--graph", str(path)]) == code
    out, err = capsys.readouterr()
    out = " ".join(out.split())  # lines wrap at 120 columns (issue 39)
    assert "stopped by the depth bound (2)" in out and "wrote the state graph" not in out
    assert not path.exists()
    lines = [line for line in err.splitlines() if line]  # besides the progress displays' blanks
    assert len(lines) == 1 and "Traceback" not in err, err
    assert (f"the state graph was not written to {path}" if code == 130
            else f"--graph {path}: No space left on device") in lines[0]


# --- every reading in one sweep ---------------------------------------------------------------

@pytest.fixture(scope="module")
def sweep4():
    return explore(ExploreOptions(depth=4, reading=None, properties=()))


def test_all_readings_sweep_reaches_contexts_the_draft_sweep_cannot():
    one = explore(ExploreOptions(depth=3))
    every = explore(ExploreOptions(depth=3, reading=None))
    assert (every.states, every.complete, every.violations) == (1635, True, {})
    assert every.classes > 1
    # Q2 and Q3 decide only where another knob departs from draft (Q3 needs Q2=parent; Q2's
    # split shows under Q3=warn), so the draft sweep cannot see them and the full sweep must
    assert {"Q2", "Q3"} <= set(every.splits) and not {"Q2", "Q3"} & set(one.splits)
    assert set(one.splits) <= set(every.splits)
    assert every.splits["Q3"][1] == ({"Q2": "parent", "Q3": "keep"},
                                     {"Q2": "parent", "Q3": "warn"})


def test_all_readings_sweep_finds_every_corpus_question_at_depth_four(sweep4):
    from counterexamples.corpus import load_corpus
    corpus_knobs = {entry["knob"] for entry in load_corpus()}
    # but Q15 and Q23, whose witnesses have 5 events (the run takes them from the settlement
    # table's deeper exhaustive search)
    assert corpus_knobs - {"Q15", "Q23"} <= set(sweep4.splits)
    assert not {"Q15", "Q23"} & set(sweep4.splits)
    for knob, (witness, pair) in sweep4.splits.items():
        # the executable model, run on the witness under every reading, agrees that the knob
        # decides it, and two complete readings differing only there give different verdicts
        assert knob in splits_of(witness), knob
        ra, rb = split_readings(pair, knob)
        assert verdict_key(evaluate(witness, ra)) != verdict_key(evaluate(witness, rb)), knob


def test_pair_bfs_agrees_with_the_sweep_on_shortest_lengths(sweep4):
    for knob in ("Q1", "Q3", "Q4", "Q11", "Q10"):
        witness, pair = sweep4.splits[knob]
        ra, rb = split_readings(pair, knob)
        shortest = shortest_distinguishing(ra, rb, depth=4)
        assert shortest is not None and len(shortest) == len(witness), knob
        assert verdict_key(evaluate(shortest, ra)) != verdict_key(evaluate(shortest, rb))


def test_shortest_distinguishing_is_shortest_and_none_when_equal():
    move = DRAFT.with_(Q11="move")
    found = shortest_distinguishing(DRAFT, move, depth=5)
    assert len(found) == 3 and not check_trace(found)
    assert shortest_distinguishing(DRAFT, move, depth=2) is None  # nothing shorter exists
    assert shortest_distinguishing(DRAFT, DRAFT, depth=4) is None


@pytest.mark.parametrize("pinned", [(), (("Q3", "fatal"), ("Q15", "closed"))])
def test_one_search_for_every_pair_gives_each_pair_search_s_trace(pinned, monkeypatch):
    """``shortest_distinguishing_each`` of a reading against every reading that moves one knob
    to another option gives, pair by pair, the very trace of that pair's own search: under any
    producer reading and under the reading's own, and when the readings are searched a few at a
    time (past ``MAX_PAIRS``)."""
    import properties.search.system_pair as system_pair
    from model.readings import KNOBS
    a = DRAFT.with_(**dict(pinned))
    others = [a.with_(**{k.id: o}) for k in KNOBS for o in k.option_names
              if o != getattr(a, k.attr)]
    for producer in (None, a):
        each = system_pair.shortest_distinguishing_each(a, others, 3, producer=producer)
        alone = [shortest_distinguishing(a, b, 3, producer=producer) for b in others]
        assert each == alone
        lengths = sorted(len(t) for t in each if t is not None)
        assert lengths[0] <= 2 and lengths[-1] == 3 and each.count(None) >= 5, lengths
    monkeypatch.setattr(system_pair, "MAX_PAIRS", 4)
    assert system_pair.shortest_distinguishing_each(a, others, 3, producer=a) == each
    with pytest.raises(ValueError, match="1 to 4 readings"):
        system_pair.PairSystem(a, others[:5], system_pair.EXPLORE_VOCABULARY, True, a)


def test_producer_readings_and_mode_guard():
    assert len(PRODUCER_READINGS) == 4
    with pytest.raises(ValueError):
        explore(ExploreOptions(depth=1, reading=None,
                               consumer=MUTANT_BY_NAME["owner-not-reminted"]))


def test_graph_query_shortest_trace_to_a_state_class():
    def retyped_by_subagent(state):
        return any(m.is_activity and m.owner == "sub-1" and m.activity_type == "SEARCH"
                   for m in state.messages)
    tree_only = explore(ExploreOptions(depth=3))
    found = shortest_trace_to(tree_only, retyped_by_subagent)
    # RUN_STARTED then one snapshot that mints sub-1 with type SEARCH
    assert [e.type_name for e in found] == ["RUN_STARTED", "ACTIVITY_SNAPSHOT"]
    assert retyped_by_subagent(trace_states(found)[-1])
    full = explore(ExploreOptions(depth=3, keep_edges=True))
    assert len(shortest_trace_to(full, retyped_by_subagent)) == 2
    # four messages within 3: two activities met first in one snapshot, then the history
    # (a user and a system message) restated with them; five are not within 3
    four = shortest_trace_to(tree_only, lambda s: len(s.messages) > 3)
    assert [e.type_name for e in four] == ["RUN_STARTED", "MESSAGES_SNAPSHOT", "MESSAGES_SNAPSHOT"]
    assert [m.role for m in four[-1].messages] == ["user", "system", "activity", "activity"]
    assert shortest_trace_to(tree_only, lambda s: len(s.messages) > 4) is None
    graph = state_graph(explore(ExploreOptions(depth=2, reading=None)))
    assert graph.nodes[0]["readings"] == "(any reading)"


@pytest.fixture
def ctrl_c_after_30_beliefs(monkeypatch):
    """Ctrl-C arrives while the search computes its 30th producer belief."""
    import properties.search.move_table as move_table
    calls = []
    real_advance = move_table.advance

    def interrupting_advance(belief, event):
        calls.append(event)
        if len(calls) == 30:
            raise KeyboardInterrupt
        return real_advance(belief, event)
    monkeypatch.setattr(move_table, "advance", interrupting_advance)


def test_an_interrupt_stops_the_search_with_a_report(ctrl_c_after_30_beliefs):
    import properties.search.explore as explore_module
    r = explore_module.explore(explore_module.ExploreOptions(depth=4, reading=None))
    assert r.stopped_by == "interrupted" and not r.complete
    assert 1 < r.states < 30 and len(r.parents) == r.states  # what it had, consistent


def test_the_graph_does_not_depend_on_the_hash_seed(tmp_path):
    import subprocess
    import sys
    outs = []
    for seed in ("1", "2"):
        path = tmp_path / f"g{seed}.dot"
        proc = subprocess.run([sys.executable, "-m", "activity_check.cli", "explore", "--depth",
                               "3", "--graph", str(path)], capture_output=True, text=True,
                              env={**__import__("os").environ, "PYTHONHASHSEED": seed},
                              timeout=120)
        assert proc.returncode == 0, proc.stderr
        outs.append(path.read_text(encoding="utf-8"))
    assert outs[0] == outs[1]


def test_searches_leave_no_garbage_cycles_and_restore_the_collector():
    """The searches pause the cyclic garbage collector (a large share of a deep sweep's time
    otherwise); that is sound only if what they allocate is acyclic, freed by reference counts,
    a step that raises included. Run in a fresh interpreter: a Dask cluster that ran earlier in
    the same process (another test's) leaves threads that make cyclic garbage of their own
    while the count below is taken."""
    import subprocess
    import sys
    here = Path(__file__).resolve().parent
    proc = subprocess.run([sys.executable, "-c", "import test_explore as t; t.no_garbage_cycles()"],
                          cwd=here, capture_output=True, text=True, timeout=300,
                          env={**__import__("os").environ, "PYTHONPATH": os.pathsep.join(
                              [str(here), str(here.parent)])})
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.strip() == "no garbage cycles", proc.stdout


def no_garbage_cycles() -> None:
    """The body of :func:`test_searches_leave_no_garbage_cycles_and_restore_the_collector`, run
    in a fresh interpreter; prints "no garbage cycles" when every assertion held. The collector
    stays off from before the searches to the count, so that no automatic collection in
    between can free a cycle before it is counted."""
    import gc
    import model.consumer as consumer_module
    from model.events import ActivityDelta
    from model.readings import parse_reading
    decide_delta = consumer_module._DECIDERS[ActivityDelta]

    def raises_on_act_2(f, event, reading):
        if event.message_id == "act-2":
            raise RuntimeError("planted")
        return decide_delta(f, event, reading)
    # a first search warms up what is built once per process and is not the searches' own
    # (numpy builds numpy.ma lazily on the BFS driver's first np.unique; its import leaves cycles)
    explore(ExploreOptions(depth=2, reading=None))
    gc.collect()
    assert gc.isenabled()
    gc.disable()
    try:
        report = explore(ExploreOptions(depth=3, reading=None))
        explore(ExploreOptions(depth=3, adversarial=True))
        explore(ExploreOptions(depth=3, reading=None, adversarial=True, properties=()))
        shortest_distinguishing(DRAFT, parse_reading("Q1=ignore"), depth=3)
        with pytest.MonkeyPatch.context() as planted:
            planted.setitem(consumer_module._DECIDERS, ActivityDelta, raises_on_act_2)
            crashed = explore(ExploreOptions(depth=4, reading=None))
        assert list(crashed.violations) == ["P00-no-exception"]
        assert not gc.isenabled()  # left as the caller had it
        del report, crashed
        assert gc.collect() == 0
    finally:
        gc.enable()
    explore(ExploreOptions(depth=2, reading=None))
    assert gc.isenabled()
    print("no garbage cycles")


def test_searches_park_their_report_with_the_oldest_generation_and_keep_callers_frozen_objects():
    """Restoring the collector after a search moves what the search returns to the oldest
    generation (freeze, unfreeze, then enable), so the first collection after it does not walk the
    whole report; it leaves nothing frozen, and a caller's own frozen objects stay frozen
    (then the collector is simply enabled)."""
    import gc
    assert gc.isenabled() and gc.get_freeze_count() == 0
    report = explore(ExploreOptions(depth=3, reading=None))
    assert gc.isenabled() and gc.get_freeze_count() == 0
    oldest = gc.get_objects(generation=2)
    assert any(o is report.nodes for o in oldest) and any(o is report.parents for o in oldest)
    del oldest, report
    callers = [object()]  # tracked by the collector, frozen below with everything else
    gc.freeze()
    try:
        assert not any(o is callers for o in gc.get_objects())  # frozen: in no generation
        explore(ExploreOptions(depth=3, reading=None))
        assert gc.isenabled() and not any(o is callers for o in gc.get_objects())
    finally:
        gc.unfreeze()
    assert any(o is callers for o in gc.get_objects())


def test_searches_free_the_callers_young_garbage_and_leave_nothing_frozen_when_interrupted():
    """The search collects the young generations as it starts, so a garbage cycle of the
    caller's is not moved to the oldest generation with the report; a Ctrl-C that lands just
    after the collector is paused, or while it is being restored (just after ``gc.freeze``),
    still leaves it enabled with nothing frozen."""
    import gc
    import sys
    import weakref

    class Node:
        pass

    def garbage_cycle():
        a, b = Node(), Node()
        a.b, b.a = b, a
        return weakref.ref(a)

    cycle = garbage_cycle()
    explore(ExploreOptions(depth=2, reading=None))
    assert cycle() is None

    for call in (gc.disable, gc.freeze):  # the Ctrl-C lands just after this call returns
        fired = []

        def interrupt_after(frame, event, arg):
            if event == "c_return" and arg is call and not fired:
                fired.append(True)
                raise KeyboardInterrupt
        sys.setprofile(interrupt_after)
        try:
            report = explore(ExploreOptions(depth=2, reading=None))
        finally:
            sys.setprofile(None)
        assert fired and report.stopped_by == "interrupted", call
        assert gc.isenabled() and gc.get_freeze_count() == 0, call


def test_cli_explore_after_ctrl_c_prints_what_it_explored_and_exits_130(ctrl_c_after_30_beliefs,
                                                                         capsys):
    import json
    assert main(["explore", "--depth", "4", "--json"]) == 130
    out = json.loads(capsys.readouterr().out)
    assert out["stoppedBy"] == "interrupted" and out["complete"] is False and out["states"] > 1


def _reading_dependent_properties():
    """Properties that fire often and only under some readings, on what the step produced: the
    sweep's shared outcomes must give each of them exactly what a fresh check gives."""
    from model.events import ActivityDelta
    from properties.catalogue import Property

    def changed_under_drop_op(t):
        held, after = t.target_before, t.target_after
        if isinstance(t.event, ActivityDelta) and held is not None and after is not None and \
                held.content != after.content and t.reading.q20 == "drop-op":
            return "content changed under Q20=drop-op"
        return None

    def warned_under_q3_warn(t):
        return "a warning under Q3=warn" if t.warnings and t.reading.q3 == "warn" else None

    def halted_under_q13_fatal(t):
        return "the run failed under Q13=fatal" if t.fatal is not None and \
            t.reading.q13 == "fatal" else None

    def two_activities_under_q20_skip_patch(t):
        held = [m for m in t.after.messages if m.is_activity]
        return "two activities under Q20=skip-patch" if len(held) == 2 and \
            t.reading.q20 == "skip-patch" else None

    def changed_behind_another_under_q2_parent(t):
        first = t.before.messages[:1]
        return "a change behind another message under Q2=parent" if first and \
            first[0].id != getattr(t.event, "message_id", None) and \
            t.after.messages != t.before.messages and t.reading.q2 == "parent" else None

    # one table of the sweep each: target view, state after, step, the whole transition
    return (Property("T0", "synthetic", (), "step", changed_under_drop_op, scope="target"),
            Property("T1", "synthetic", (), "step", warned_under_q3_warn, scope="target"),
            Property("A0", "synthetic", (), "invariant", two_activities_under_q20_skip_patch,
                     scope="after"),
            Property("S0", "synthetic", (), "step", changed_behind_another_under_q2_parent,
                     scope="step"),
            Property("X0", "synthetic", (), "step", halted_under_q13_fatal))


def test_the_sweeps_shared_check_outcomes_equal_fresh_checks(monkeypatch):
    """The all-readings sweep shares a check's outcome across beliefs, leaves with the same step
    outcome and classes that agree on the knobs it consulted. Every violation it records, on
    every transition, is the one recorded when every outcome is computed afresh. (The synthetic
    properties alone consult few knobs, so a key or a knob test too coarse shows here; with the
    whole catalogue, the knobs its other checks consult would hide it.)"""
    import properties.search.explore as explore_module
    import properties.search.sweep_cache as sweep_cache
    import properties.search.system_sweep as system_sweep
    real_record = sweep_cache._record

    def run(share: bool) -> list:
        seen = []

        def record(out, recorded, key, seq, payload):
            seen.append((key, seq, payload))
            real_record(out, recorded, key, seq, payload)
        for module in (sweep_cache, system_sweep):  # where the sweep records
            monkeypatch.setattr(module, "_record", record)
        if not share:
            monkeypatch.setattr(sweep_cache, "_known", lambda entries, reading: None)
        report = explore_module.explore(explore_module.ExploreOptions(
            depth=4, reading=None, properties=_reading_dependent_properties()))
        monkeypatch.undo()
        assert report.states == 64148
        return seen

    shared = run(True)
    assert shared == run(False)
    fired = {key for key, *_ in shared}
    assert fired == {"T0", "T1", "A0", "S0", "X0"}  # each fires, so the comparison means something
    assert len(shared) > 10000


def test_a_decider_that_raises_only_on_renamed_ids_is_a_p37_finding_in_both_searches(
        monkeypatch):
    """P37 re-steps the transition with every id renamed; a step that raises only then is
    reported as P37, with the exception, by the sweep and by the single-reading search alike
    (neither stops on it)."""
    import model.consumer as consumer_module
    from model.events import ActivitySnapshot
    from properties.catalogue import PROPERTY_BY_ID
    decide_snapshot = consumer_module._DECIDERS[ActivitySnapshot]

    def raises_on_renamed(f, event, reading):
        if event.message_id.startswith("op4que:"):
            raise RuntimeError("planted")
        return decide_snapshot(f, event, reading)
    monkeypatch.setitem(consumer_module._DECIDERS, ActivitySnapshot, raises_on_renamed)
    for reading in (None, DRAFT):
        report = explore(ExploreOptions(depth=2, reading=reading,
                                        properties=(PROPERTY_BY_ID["P37-ids-opaque"],)))
        assert report.stopped_by == "depth" and list(report.violations) == ["P37-ids-opaque"]
        trace, witness = report.violations["P37-ids-opaque"]
        assert len(trace) == 2 and \
            witness == "the step raised RuntimeError: planted when the message ids were renamed"


def plant_act_1_decider(monkeypatch) -> None:
    """Make the model's ACTIVITY_SNAPSHOT decider special-case the id ``act-1`` (its message
    gets the type ``ODD``): a step that treats one id's spelling specially, which P37 must
    report. The sweep steps an activity event through its decision on the focus."""
    import model.consumer as consumer_module
    from model.events import ActivitySnapshot
    decide_snapshot = consumer_module._DECIDERS[ActivitySnapshot]

    def special_cases_act_1(f, event, reading):
        d = decide_snapshot(f, event, reading)
        if event.message_id == "act-1" and d.message is not None:
            return d.but(message=d.message.but(activity_type="ODD"))
        return d
    monkeypatch.setitem(consumer_module._DECIDERS, ActivitySnapshot, special_cases_act_1)


def test_the_sweep_checks_p37_with_every_id_renamed(monkeypatch):
    """P37 in the all-readings sweep renames every id (as every engine does), so a step that
    treats one id's spelling specially is caught whatever the vocabulary: a list's only id
    included (a permutation of the vocabulary's own ids would leave it as it is)."""
    import properties.search.explore as explore_module
    from properties.catalogue import PROPERTY_BY_ID
    plant_act_1_decider(monkeypatch)
    p37 = (PROPERTY_BY_ID["P37-ids-opaque"],)
    for ids in (("act-1",), ("act-0", "act-1", "act-2")):
        vocabulary = dataclasses.replace(explore_module.EXPLORE_VOCABULARY, activity_ids=ids)
        report = explore(ExploreOptions(depth=2, vocabulary=vocabulary, reading=None,
                                        properties=p37))
        assert list(report.violations) == ["P37-ids-opaque"], ids


def test_the_explore_benchmark_takes_the_fastest_of_runs_in_fresh_processes(monkeypatch,
                                                                          capsys):
    """benchmarks/explore.py runs each configuration ``repeat`` times, each in a process of its
    own, and reports the fastest with the median and every run's seconds."""
    import importlib
    import sys
    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parent.parent / "benchmarks"))
    monkeypatch.delitem(sys.modules, "explore", raising=False)
    bench = importlib.import_module("explore")
    try:
        figures = bench.measure(depth=2, extra_depth=1, repeat=2)
        with pytest.raises(ValueError):
            bench.measure(depth=2, extra_depth=0, repeat=0)
        with pytest.raises(ValueError):
            bench.measure(depth=2, timeout=0)
        # a run stopped by its timeout reports what it explored, as partial
        cut = bench.measure(depth=5, repeat=1, only={"all-readings"}, timeout=0.5)
        assert bench.main(["--depth", "2", "--repeat", "1", "--only", "all-readings"]) == 0
        printed = capsys.readouterr().out
    finally:
        sys.modules.pop("explore", None)
    rows = figures["configurations"]
    assert list(rows) == ["all-readings", "all-readings-bare", "draft", "draft-readings",
                          "draft-bare", "all-readings@1", "all-readings-bare@1"]
    assert rows["all-readings@1"]["states"] == explore(ExploreOptions(depth=1, reading=None)).states
    assert rows["all-readings"]["states"] == explore(ExploreOptions(depth=2, reading=None)).states
    assert rows["draft"]["states"] == explore(ExploreOptions(depth=2)).states
    for row_name, row in rows.items():
        assert len(row["secondsEach"]) == 2
        assert row["seconds"] == min(row["secondsEach"]) <= row["secondsMedian"]
        assert row["complete"] and row["depth"] == (1 if "@" in row_name else 2)
    assert (figures["depth"], figures["defaultBound"], figures["extraDepth"]) == (2, 5, 1)
    # issue 21's one-core aims are set at the default bound: a shallower run judges none
    row = figures["configurations"]["all-readings"]
    assert [(a["aim"], a["configuration"], a["met"]) for a in figures["aims"]] == [
        ("statesPerSecond", "all-readings", None), ("bytesPerState", "all-readings", None),
        ("statesPerSecond", "all-readings@1", None), ("bytesPerState", "all-readings@1", None)]
    assert all(a["why"].startswith("below the default bound (depth 5)") for a in figures["aims"])
    assert "issue 21 aim 100 bytes/state, all-readings at depth 2: not judged (" in printed
    deep = {**row, "depth": 5, "statesPerSecond": 40_000, "bytesPerState": 90}
    assert [(a["aim"], a["met"]) for a in bench.judge({"all-readings": deep}, 1)] == [
        ("statesPerSecond", False), ("bytesPerState", True)]
    partial = cut["configurations"]["all-readings"]
    assert cut["timeout"] == 0.5 and not partial["complete"] and partial["depth"] < 5
    assert 0 < partial["states"] < 2_040_459 and partial["statesPerSecond"] > 0
    # a partial run judges no aim, and no speedup is taken from partial runs
    assert {a["met"] for a in cut["aims"]} == {None}
    assert all(a["why"].startswith("partial run") for a in cut["aims"])
    rows = {"all-readings": {**partial, "secondsMedian": 9.0},
            "all-readings-workers2": {**partial, "secondsMedian": 6.0, "speedup": None}}
    assert [a["met"] for a in bench.judge(rows, 2)] == [None, None, None]
    # the speedup is judged on complete runs whose levels the workers expanded, by the same
    # verdict step as the other aims
    whole = {**row, "complete": True}
    spread = {**whole, "workers": 2, "speedup": 1.4}
    aims = bench.judge({"all-readings": whole, "all-readings-workers2": spread}, 2)
    assert (aims[-1]["aim"], aims[-1]["value"], aims[-1]["met"]) == \
        ("speedupOnTwoWorkers", 1.4, False) and "why" not in aims[-1]
    aims = bench.judge({"all-readings-workers2": {**spread, "speedup": 1.8}}, 2)
    assert [a["met"] for a in aims] == [True]
    # every level of a small search stays in the command's process: no speedup to judge
    aims = bench.judge({"all-readings-workers2": {**spread, "workers": 1}}, 2)
    assert aims[0]["met"] is None and aims[0]["why"].startswith("every level was expanded")
    # the text says why a two-worker row has no speedup, or gives it
    for speedup, said in ((None, "no speedup: a run stopped by --timeout covers less"),
                          (1.4, "on 2 workers, speedup 1.4x;")):
        shown = {**figures, "workers": 2, "aims": [], "issue4Aims": [], "configurations": {
            "all-readings-workers2": {**spread, "speedup": speedup}}}
        monkeypatch.setattr(bench, "measure", lambda *a, **k: shown)
        assert bench.main(["--workers", "2"]) == 0
        out = capsys.readouterr().out
        assert said in out and "Nonex" not in out


def test_the_sweep_catches_a_delta_that_moves_its_message(monkeypatch):
    """P11 covers deltas as well as snapshots: a settle that moves a delta's message to the
    front (untouched messages keep their relative order, so P40 alone would not see it) is
    reported, on the shortest trace that shows it."""
    import properties.search.sweep_cache as sweep_cache
    from model.consumer import PUT, StepResult, settle
    from model.events import ActivityDelta
    from properties.catalogue import PROPERTY_BY_ID

    def moves_the_target_first(state, event, d):
        r = settle(state, event, d)
        held = r.state.messages
        if isinstance(event, ActivityDelta) and d.change == PUT and held[0].id != event.message_id:
            i = [m.id for m in held].index(event.message_id)
            moved = (held[i],) + held[:i] + held[i + 1:]
            return StepResult(r.state.but(messages=moved), r.warnings, r.fatal)
        return r
    monkeypatch.setattr(sweep_cache, "settle", moves_the_target_first)
    p11 = PROPERTY_BY_ID["P11-snapshot-keeps-position"]
    report = explore(ExploreOptions(depth=4, reading=None, properties=(p11,)))
    assert list(report.violations) == [p11.id]
    trace, witness = report.violations[p11.id]
    assert [type(e).__name__ for e in trace] == ["RunStarted", "ActivitySnapshot",
                                                 "ActivitySnapshot", "ActivityDelta"]
    assert witness.startswith("order ['act-")


def test_the_sweep_checks_properties_under_every_reading_of_a_class(monkeypatch):
    """A class of readings shares a step's result, not a property's verdict: a snapshot that
    ignores Q11=move when it carries rawEvent steps alike under both options of Q11 (so the
    sweep never splits on it there), but P36's re-step without rawEvent moves the message under
    Q11=move. The sweep checks that option too, as one-reading exploration under Q11=move
    does, and finds it on the same shortest trace."""
    import model.consumer as consumer_module
    from model.events import ActivitySnapshot
    from model.readings import parse_reading
    from properties.catalogue import PROPERTY_BY_ID
    decide_snapshot = consumer_module._DECIDERS[ActivitySnapshot]

    def ignores_move_with_raw_event(f, event, reading):
        d = decide_snapshot(f, event, reading)
        if event.raw_event is not None and d.change == consumer_module.MOVE:
            return d.but(change=consumer_module.PUT)
        return d
    monkeypatch.setitem(consumer_module._DECIDERS, ActivitySnapshot, ignores_move_with_raw_event)
    p36 = PROPERTY_BY_ID["P36-raw-event-ignored"]
    swept = explore(ExploreOptions(depth=4, reading=None, properties=(p36,)))
    alone = explore(ExploreOptions(depth=4, reading=parse_reading("Q11=move"), properties=(p36,),
                                   check_readings=False))
    assert list(swept.violations) == list(alone.violations) == [p36.id]
    assert len(swept.violations[p36.id][0]) == len(alone.violations[p36.id][0]) == 3
    assert swept.violations[p36.id][1].endswith("(under Q11=move)")
    assert explore(ExploreOptions(depth=4, properties=(p36,),
                                  check_readings=False)).violations == {}  # draft


def test_a_violation_under_one_reading_does_not_hide_another_under_another():
    """On one transition, one property may fail under a class's forked reading and a later one
    under its representative: the sweep reports both, as the two one-reading explorations
    each report theirs."""
    from model.events import ActivitySnapshot
    from model.readings import parse_reading
    from properties.catalogue import Property

    def under_retype(t):
        return "snapshot under Q5=retype" if isinstance(t.event, ActivitySnapshot) and \
            t.reading.q5 == "retype" else None

    def under_skip(t):
        return "snapshot under Q5=skip" if isinstance(t.event, ActivitySnapshot) and \
            t.reading.q5 == "skip" else None
    first = Property("Y-first", "synthetic", (), "step", under_retype, scope="step")
    second = Property("X-second", "synthetic", (), "step", under_skip, scope="step")
    swept = explore(ExploreOptions(depth=3, reading=None, properties=(first, second)))
    assert sorted(swept.violations) == ["X-second", "Y-first"]
    assert swept.violations["Y-first"][1] == "snapshot under Q5=retype (under Q5=retype)"
    for reading, expected in (("draft", ["X-second"]), ("Q5=retype", ["Y-first"])):
        alone = explore(ExploreOptions(depth=3, reading=parse_reading(reading),
                                       properties=(first, second), check_readings=False))
        assert sorted(alone.violations) == expected
        assert len(alone.violations[expected[0]][0]) == len(swept.violations[expected[0]][0])


def test_the_explore_benchmark_reports_progress_per_depth_and_per_minute(monkeypatch, capsys):
    """``--progress`` prints a line when a depth is done and at most once a minute within the
    level under way (a deep run takes hours), on standard error."""
    import importlib
    import sys
    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parent.parent / "benchmarks"))
    monkeypatch.delitem(sys.modules, "explore", raising=False)
    bench = importlib.import_module("explore")
    try:
        report = bench._progress("all-readings@7")
        for call in [(0, 1, 0, 0.1), (1, 2, 1, 0.2), (1, 40, 50, 30.0), (1, 90, 99, 61.0),
                     (1, 95, 120, 62.0), (2, 200, 300, 70.0)]:
            report(*call)
    finally:
        sys.modules.pop("explore", None)
    captured = capsys.readouterr()
    lines = captured.err.splitlines()
    assert captured.out == "" and len(lines) == 3, lines
    assert lines[0].startswith("all-readings@7: depth 1 done, 2 states, 1 edges, 0 s, ")
    assert lines[1].startswith("all-readings@7: exploring depth 2, 90 states, 99 edges, 61 s, ")
    assert lines[2].startswith("all-readings@7: depth 2 done, 200 states, 300 edges, 70 s, ")
    assert all(line.endswith(" GB resident") for line in lines)
