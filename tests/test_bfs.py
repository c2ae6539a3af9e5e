"""The one breadth-first driver (issue 21): compact storage, workers and the Dask engine give the
sequential search's output byte for byte."""
import dataclasses
import functools
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import properties.search.explore as explore_module
import properties.search.report as report_module
import properties.search.system_sweep as sweep_module
from activity_check.cli import main
from model.consumer import initial_state
from properties.search.blocks import CHECK_STATE_MASK
from properties.search.store import (BlockArray, FingerprintSet, Frontier, collision_probability,
                                  component_fingerprint, pack_key, unpack_key)
from properties.search.explore import ExploreOptions, explore
from properties.search.system_pair import shortest_distinguishing

distributed = pytest.importorskip("distributed")
pytestmark = pytest.mark.xdist_group("tests/test_bfs.py")
"""One worker runs this module: its tests share the depth-4 reference (:func:`_depth4`) and the
local cluster."""


@pytest.fixture(scope="module")
def cluster():
    """A Dask cluster of two single-threaded worker processes on 127.0.0.1, for this module."""
    from properties.search.dask_engine import local_cluster
    with local_cluster(2) as running:
        yield running.scheduler_address


def _signature(report) -> str:
    """What a report shows, as JSON text: counts, shortest splits and violations with their
    wire traces, and every node's parent and event."""
    return json.dumps({
        "states": report.states, "edges": report.edges, "depth": report.depth,
        "complete": report.complete, "stoppedBy": report.stopped_by, "classes": report.classes,
        "splits": {k: [[e.to_wire() for e in t], list(p)] for k, (t, p) in report.splits.items()},
        "violations": {k: [[e.to_wire() for e in t], w]
                       for k, (t, w) in report.violations.items()},
        "parents": [[p, e.to_wire() if e else None] for p, e in report.parents]})


@functools.lru_cache(maxsize=None)
def _depth4():
    """``(report, signature)`` of the sweep to depth 4 under every reading (64,148 states),
    made once per process: the reference that the squeezed, evicting and distributed searches
    are compared with (read only)."""
    report = explore(ExploreOptions(depth=4, reading=None))
    return report, _signature(report)


def test_parent_entries_order_nodes_as_the_sequential_search_finds_them():
    assert unpack_key(pack_key(12345, 7, 3)) == (12345, 7, 3)
    assert pack_key(1, 0, 5) < pack_key(1, 1, 0) < pack_key(2, 0, 0)
    with pytest.raises(ValueError):
        pack_key(0, 1 << 16, 0)


def test_fingerprint_set_blockarray_and_collision_probability():
    seen = FingerprintSet()
    first = np.array([5, 3, 9], dtype=np.uint64)
    assert seen.add(first).tolist() == [True, True, True]
    assert seen.add(np.array([9, 4, 3, 7], dtype=np.uint64)).tolist() == [False, True, False, True]
    assert len(seen) == 5 and seen.nbytes == 40
    assert seen.contains(np.array([4, 6], dtype=np.uint64)).tolist() == [True, False]
    big = np.arange(10, 3000, dtype=np.uint64)  # many runs, merged as they grow
    for lo in range(0, len(big), 100):
        seen.add(big[lo:lo + 100])
    assert len(seen) == 5 + len(big) and len(seen.runs) <= 12
    assert seen.contains(big).all()
    parents = BlockArray()
    parents.extend(np.arange(3, dtype=np.int64) * 7)
    assert (len(parents), parents[2]) == (3, 14)
    # the default bound: 492,495 states, about 6.6e-9 (n**2 / 2**65)
    assert collision_probability(492_495) == pytest.approx(6.574e-9, rel=1e-3)


def test_component_fingerprints_do_not_depend_on_the_hash_seed():
    state = initial_state({"k": [1, 2]}).but(open_texts=frozenset({"a", "b", "c"}))
    code = ("from model.consumer import initial_state; "
            "from properties.search.store import component_fingerprint as f; "
            "print(f(initial_state({'k': [1, 2]}).but(open_texts=frozenset({'a', 'b', 'c'}))))")
    outs = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           env={**os.environ, "PYTHONHASHSEED": seed}, check=True).stdout
            for seed in ("1", "2", "3")}
    assert outs == {f"{component_fingerprint(state)}\n"}


def test_a_frontier_spills_to_disk_and_reads_back(tmp_path):
    frontier = Frontier(width=2, memory_limit=100, spill_dir=str(tmp_path))
    for i in range(4):
        ids = np.arange(i * 3, i * 3 + 3, dtype=np.int64)
        frontier.add(ids, np.stack([ids, ids * 2], axis=1))
    assert len(frontier) == 12 and frontier.spilled > 0 and any(tmp_path.iterdir())
    got = [(ids.tolist(), nodes[:, 1].tolist()) for ids, nodes in frontier]
    assert [i for ids, _ in got for i in ids] == list(range(12))
    assert [v for _, vs in got for v in vs] == [2 * i for i in range(12)]
    frontier.close()
    assert not any(tmp_path.iterdir())


def test_an_expanded_frontier_block_is_released_as_the_level_goes_on(tmp_path, monkeypatch):
    """A frontier block, once expanded, is dropped: its bytes no longer count as in memory, a
    spilled block's files are removed, the later blocks read as before, and reading a released
    block again is refused. The engine releases each block after expanding it, so the peak it
    reports is the frontiers' largest sum while a level runs, not at its end."""
    frontier = Frontier(width=2, memory_limit=100, spill_dir=str(tmp_path))
    for i in range(4):
        ids = np.arange(i * 3, i * 3 + 3, dtype=np.int64)
        frontier.add(ids, np.stack([ids, ids * 2], axis=1))
    in_memory, files = frontier.in_memory, len(list(next(tmp_path.iterdir()).iterdir()))
    assert in_memory == 72 and files == 6  # one block of 72 bytes; three spilled, in pairs
    seen = []
    for block, (ids, _) in enumerate(frontier):
        seen.append(ids.tolist())
        frontier.release(block)
    assert seen == [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9, 10, 11]]
    assert frontier.in_memory == 0 and not any(next(tmp_path.iterdir()).iterdir())
    with pytest.raises(ValueError, match="released"):
        list(frontier.blocks_from(2))
    frontier.close()
    import properties.search.bfs as bfs
    released = []
    real = Frontier.release
    monkeypatch.setattr(Frontier, "release", lambda self, i: (released.append(i), real(self, i)))
    engine = bfs.LocalEngine(sweep_module.SweepSystem(explore_module.EXPLORE_VOCABULARY, (),
                                                      False), chunk=16, frontier_limit=1024)
    found = bfs.search(engine.system, 4, engine)
    # a block per chunk absorbed: levels 0 to 2 have one chunk each before level 2's 33 nodes
    # (three chunks: level 3's frontier in three blocks), each released once expanded
    assert found.states == 64148 and released == [0, 0, 0, 0, 1, 2]
    assert 0 < found.storage["frontierPeakBytes"] <= 2 * 1024  # each frontier's memory limit


def test_a_spilled_frontier_and_emptied_memo_tables_change_nothing(tmp_path):
    plain, signature = _depth4()
    squeezed = explore(ExploreOptions(depth=4, reading=None, frontier_limit=4096,
                                      spill_dir=str(tmp_path),
                                      cache_entries=500))
    assert signature == _signature(squeezed)
    assert squeezed.storage["frontierSpilledNodes"] > 0 and plain.states == 64148
    # the memo tables were emptied (checked before each expansion chunk) and the default
    # bound never empties them at this depth
    assert squeezed.storage["memoTrims"] >= 1 and plain.storage["memoTrims"] == 0
    assert squeezed.storage["memoEvictions"] >= 1 and plain.storage["memoEvictions"] == 0
    assert 0 < squeezed.storage["memoEntries"] < plain.storage["memoEntries"]
    assert plain.storage["parentBytes"] == 8 * plain.states


class _Watched(sweep_module.SweepAdapter):
    """The sweep, recording around each eviction what its tables held keyed by a state before
    a step or by a class (the forks), and which states and classes the pending nodes hold."""

    def __init__(self, *config):
        super().__init__(*config)
        self.seen: list = []

    def _keyed(self) -> dict:
        c, mask = self.system.cache, CHECK_STATE_MASK
        return {"trees": {k: (k[0], v) for k, v in c.trees.items()},
                "checked": {k: (k & mask, v) for k, v in c.checked.items()},
                "step_checked": {k: (k & mask, v) for k, v in c.step_checked.items()},
                "class_checked": {k: (k[0] & mask, v) for k, v in c.class_checked.items()},
                "step_decisions": {k: (k[0], v) for k, v in c.step_decisions.items()},
                "forks": {k: (("class", k[1]), v) for k, v in c.forks.items()}}

    def make_room(self, pending):
        held = self._keyed()
        c = self.system.cache
        evictions, trims = c.evictions, c.trims
        super().make_room(pending)
        if c.evictions > evictions:
            live = {int(s) for nodes in pending() for s in nodes[:, 1]} | \
                {("class", int(c)) for nodes in pending() for c in nodes[:, 3]}
            self.seen.append((held, self._keyed(), live, c.trims > trims))


def test_the_engine_offers_make_room_the_nodes_still_to_expand():
    """Before each chunk the in-process engine calls ``make_room`` with the nodes it has still
    to expand: the chunk about to be expanded first, then the rest of the level, then the next
    level's nodes found so far (which only grow)."""
    from properties.search.bfs import EngineAdapter, LocalEngine, search
    calls = []

    class Recording(sweep_module.SweepSystem):
        def expand(self, ids, nodes, level, out, known):
            calls.append(("expand", np.array(nodes), level))
            super().expand(ids, nodes, level, out, known)

    class Offered(EngineAdapter):
        def make_room(self, pending):
            calls.append(("room", [np.array(a) for a in pending()]))

    system = Offered(Recording(explore_module.EXPLORE_VOCABULARY, (), False))
    found = search(system, 4, LocalEngine(system, chunk=256))
    assert found.states == 64148
    rooms, expands = calls[0::2], calls[1::2]
    assert [c[0] for c in rooms] == ["room"] * len(rooms) and len(rooms) == len(expands)
    by_level: dict = {}
    for (_, pending), (_, nodes, level) in zip(rooms, expands):
        assert (pending[0][:len(nodes)] == nodes).all()  # the chunk comes first
        by_level.setdefault(level, []).append((sum(len(a) for a in pending), len(nodes)))
    assert sorted(by_level) == [0, 1, 2, 3] and len(by_level[3]) > 5
    for level, steps in by_level.items():
        size = sum(n for _, n in steps)  # the level's frontier
        if level:
            assert steps[0][0] == size  # at a level's first chunk: the whole level, no more
        rest, before = size, 0
        for total, n in steps:
            beyond = total - rest  # the next level's nodes found so far
            assert beyond >= before
            rest, before = rest - n, beyond
        if level < 2:  # the next level's nodes found before its last chunk, and no more
            assert before <= by_level.get(level + 1, [(0, 0)])[0][0]
        if level == 3:  # the last level: its successors are never expanded, never pending
            assert all(total == size - sum(n for _, n in steps[:i])
                       for i, (total, _) in enumerate(steps))


def test_memo_evictions_drop_only_what_no_pending_node_needs():
    """Past the memo budget the sweep drops the entries of the consumer states that no node
    still to expand holds (this level's rest, the next level's so far), and the forks of the
    classes none holds, keeps every other entry as it was, and finds what it finds with every
    entry kept (depth 4 in chunks of 256 nodes, a budget of 50,000 entries: evicted several
    times, never emptied)."""
    from properties.search.bfs import LocalEngine, search
    system = _Watched(explore_module.EXPLORE_VOCABULARY, explore_module.PROPERTIES, False,
                      50_000)
    found = search(system, 4, LocalEngine(system, chunk=256))
    plain, signature = _depth4()
    evicted = report_module._report(found, system, 4, True)
    assert _signature(evicted) == signature and plain.states == 64148
    assert found.storage["memoEvictions"] >= 2 and found.storage["memoTrims"] == 0
    assert len(system.seen) == found.storage["memoEvictions"]
    for held, kept, live, emptied in system.seen:
        assert not emptied
        for table, entries in held.items():
            wanted = {k: v for k, v in entries.items() if v[0] in live}
            assert {k: v for k, v in kept[table].items() if k in entries} == wanted, table
        dropped = sum(len(held[t]) - len(kept[t]) for t in held)
        assert dropped > 0 and all(v[0] in live for t in kept for v in kept[t].values())
    assert any(len(held["forks"]) > len(kept["forks"]) for held, kept, _, _ in system.seen)


def test_when_the_pending_states_fill_the_budget_those_needed_soonest_are_kept():
    """Past the budget with every pending state's entries kept, the sweep keeps those of the
    states and classes whose first pending node comes soonest (half the budget's worth) rather
    than emptying everything, in the one eviction: every state it keeps comes before every
    pending state it drops, and the report is unchanged (depth 4 in chunks of 256 nodes, a
    budget of 20,000 entries)."""
    from properties.search.bfs import LocalEngine, search
    steps = []

    class Counted(sweep_module.SweepAdapter):
        def make_room(self, pending):
            c = self.system.cache
            before = (c.evictions, c.trims, c.size())
            held = {k[0] for k in c.trees}
            super().make_room(pending)
            if c.evictions == before[0]:
                return
            firsts = {}
            for i, s in enumerate(int(s) for nodes in pending() for s in nodes[:, 1]):
                firsts.setdefault(s, i)
            kept = {k[0] for k in c.trees}
            dropped = {s for s in held - kept if s in firsts}  # pending, yet dropped
            steps.append((c.evictions - before[0], c.trims - before[1], before[2], c.size(),
                          max((firsts[s] for s in kept & held if s in firsts), default=-1),
                          min((firsts[s] for s in dropped), default=None)))

    system = Counted(explore_module.EXPLORE_VOCABULARY, explore_module.PROPERTIES, False,
                     20_000)
    found = search(system, 4, LocalEngine(system, chunk=256))
    assert _signature(report_module._report(found, system, 4, True)) == _depth4()[1]
    assert steps and all(s[0] == 1 for s in steps)  # one eviction a call
    # calls where pending states' entries went too: the soonest kept, and no emptying
    soonest = [s for s in steps if s[5] is not None and s[1] == 0]
    assert soonest
    for _, _, size, after, last_kept, first_dropped in soonest:
        assert 0 < after <= 0.85 * 20_000 < size and last_kept < first_dropped


def test_evictions_in_the_per_leaf_loop_change_nothing(monkeypatch):
    """The per-leaf loop (the blocks' reference) gives the same report under a budget that
    forces evictions (the Dask workers' evictions:
    :func:`test_the_distributed_engine_matches_the_sequential_search`)."""
    signature = _depth4()[1]
    monkeypatch.setattr(sweep_module.SweepSystem, "blocks", False)
    from properties.search.bfs import LocalEngine, search
    system = sweep_module.SweepAdapter(explore_module.EXPLORE_VOCABULARY,
                                       explore_module.PROPERTIES, False, 20_000)
    found = search(system, 4, LocalEngine(system, chunk=512))
    assert found.storage["memoEvictions"] >= 1
    assert _signature(report_module._report(found, system, 4, True)) == signature


def test_the_pair_search_runs_on_the_driver():
    from model.readings import DRAFT
    found = shortest_distinguishing(DRAFT, DRAFT.with_(Q11="move"), depth=5)
    assert len(found) == 3  # a MESSAGES_SNAPSHOT stating two activities, then a replacing snapshot
    # a bound that stops the search before the distinguishing trace: no answer
    assert shortest_distinguishing(DRAFT, DRAFT.with_(Q11="move"), depth=5, max_states=50) is None


def test_a_bare_system_runs_in_process_and_says_so_when_asked_to_travel():
    """The model's contract holds no storage, routing or distribution: a bare system (the pair
    search's) gets the default engine adapter, which routes by fingerprint, keeps no figures,
    and refuses, naming the system, what only a distributable system's adapter can do; an
    adapter passed again is taken as it is."""
    from model.readings import DRAFT
    from properties.search.bfs import EngineAdapter, adapter_of, search
    from properties.search.reading_classes import PRODUCER_READINGS
    from properties.search.system_pair import PairSystem
    system = PairSystem(DRAFT, (DRAFT.with_(Q11="move"),), explore_module.EXPLORE_VOCABULARY,
                        frozenset(PRODUCER_READINGS))
    adapter = adapter_of(system)
    assert type(adapter) is EngineAdapter and adapter.system is system
    assert adapter_of(adapter) is adapter
    found = search(adapter, 3)
    # found on a step from level 2 (a trace of three events): the finding's cost is its level
    assert found.states > 100 and found.findings[("distinguishing", 0)][0] == (2,)
    nodes = np.array([system.root()], dtype=np.int64)
    assert (adapter.routing(nodes) == system.fingerprints(nodes)).all()
    assert adapter.storage() == {} and adapter.cache_size() is None
    for ask in (lambda: adapter.spec(2), lambda: adapter.export(nodes),
                lambda: adapter.import_([])):
        with pytest.raises(NotImplementedError, match="PairSystem"):
            ask()
    sweep = sweep_module.SweepAdapter(explore_module.EXPLORE_VOCABULARY, (), False, 1_000)
    cls, args = sweep.spec(4)  # each of four workers gets the whole budget, not a quarter
    assert cls is sweep_module.SweepAdapter and args[-1] == 1_000
    assert cls(*args).system.cache is not sweep.system.cache


def test_the_distributed_engine_matches_the_sequential_search(cluster):
    """Two worker processes from the first level on (every level handed to them): the same
    nodes, parents, findings and witnesses, also when a state bound cuts a level and in the
    single-reading search with the producer's non-conformant moves. The depth-4 sweep runs
    again under a memo budget that forces evictions on the workers (each evicting by the nodes
    its own task has still to expand, counted in the storage figures): every level goes to them,
    so a worker's tables, filled by one level, are over its budget when the next task starts."""
    cases = [dict(depth=4, reading=None), dict(depth=4, reading=None, cache_entries=4_000),
             dict(depth=4, reading=None, max_states=9_000), dict(depth=3, adversarial=True)]
    for kwargs in cases:
        alone = _depth4()[1] if kwargs in cases[:2] else \
            _signature(explore(ExploreOptions(**kwargs)))
        spread = explore(ExploreOptions(**kwargs, cluster=cluster, parallel_from=1))
        assert spread.workers == 2, kwargs
        assert _signature(spread) == alone, kwargs
        if kwargs == cases[1]:
            assert spread.storage["memoEvictions"] >= 1
            tasks = spread.storage["workerTasks"]
            assert sum(sum(t["memoEvictions"]) for t in tasks) >= 1


def test_the_next_round_goes_to_the_workers_before_the_driver_merges_this_one(cluster,
                                                                            monkeypatch):
    """Issue 43 (the driver's sequential share): a level's rounds are pipelined, the next round
    handed to the workers once this one's results are in and before the driver merges them;
    a round handed over when ``max_states`` stops the search at the merge is cancelled and the
    visited sets put back. Either way the search is the in-process one."""
    import properties.search.bfs as bfs
    from properties.search.bfs import search
    from properties.search.dask_engine import DaskEngine
    from properties.catalogue import PROPERTIES
    from properties.search.explore import EXPLORE_VOCABULARY
    from properties.search.system_sweep import SweepAdapter

    def sweep():
        return SweepAdapter(EXPLORE_VOCABULARY, tuple(PROPERTIES), False)

    def figures(found):
        return (found.parents.to_numpy().tolist(), found.edges, found.depth, found.tags,
                [[repr(k), repr(v)] for k, v in found.findings.items()])

    events, handles = [], []
    submit, absorb = DaskEngine._submit, bfs._Merge.absorb

    def handed_over(self, *args, **kwargs):
        events.append("hand over")
        handles.append(submit(self, *args, **kwargs))
        return handles[-1]
    monkeypatch.setattr(DaskEngine, "_submit", handed_over)
    cancel, withdrawals = DaskEngine._cancel, []

    def withdrawn(self, handle, before):
        # what the withdrawal leaves, seen before the search closes the client
        cancel(self, handle, before)
        withdrawals.append((handle, before, self.visited,
                            {f.status for f in handle["summaries"] + handle["reports"]},
                            {f.status for f in before["visited after"]}))
    monkeypatch.setattr(DaskEngine, "_cancel", withdrawn)
    monkeypatch.setattr(bfs._Merge, "absorb",
                        lambda self, batch: events.append("merge") or absorb(self, batch))
    for bound in (None, 1_500):
        alone = figures(search(sweep(), 3, max_states=bound))
        events.clear()
        handles.clear()
        system = sweep()
        engine = DaskEngine(system, address=cluster, local_below=1, round_nodes=8)
        found = search(system, 3, engine, max_states=bound)
        engine.close()
        assert figures(found) == alone, bound
        if bound is None:
            # the root, merged in the driver; levels 0 and 1 in one round each; level 2 in
            # five, each handed over before the one before it is merged
            assert events == ["merge"] + ["hand over", "merge"] * 2 + ["hand over"] + \
                ["hand over", "merge"] * 4 + ["merge"]
            assert engine.settled is True
        else:  # the state bound stops the search at a merge with the next round handed over
            assert found.stopped_by == "max-states" and events[-2:] == ["hand over", "merge"]
            # the round handed over last is cancelled, and the visited sets are again those
            # after the last round merged, whose futures stand
            assert len(withdrawals) == 1
            handle, before, visited, statuses, kept = withdrawals[0]
            assert (handle, before) == (handles[-1], handles[-2])
            assert statuses == {"cancelled"} and "cancelled" not in kept
            assert visited is before["visited after"]
            assert engine.settled is False  # a cancelled task may still be running


def test_a_large_level_is_cut_into_partitions_that_run_largest_first(cluster, monkeypatch):
    """Issue 43 (balance): a level of ``spread_from`` frontier nodes a worker or more is cut
    into ``spread`` expansion partitions a worker, each an expand task queued on its home worker
    with its nodes as its Dask priority (a worker runs its largest first, and an idle worker
    steals what is left); a smaller level keeps one partition a worker. The search is the
    in-process one, and the level's figures count one task a partition. A spread that is not
    a whole number of at least 1 is refused."""
    from properties.search.bfs import search
    from properties.search.dask_engine import DaskEngine
    from properties.catalogue import PROPERTIES
    from properties.search.explore import EXPLORE_VOCABULARY
    from properties.search.system_sweep import SweepAdapter

    def sweep():
        return SweepAdapter(EXPLORE_VOCABULARY, tuple(PROPERTIES), False)

    def figures(found):
        return (found.parents.to_numpy().tolist(), found.edges, found.depth, found.tags,
                [[repr(k), repr(v)] for k, v in found.findings.items()])

    handed, submit = [], DaskEngine._submit

    def spied(self, merge, level, last, pieces, where, first):
        handed.append((level, len(pieces), first))
        return submit(self, merge, level, last, pieces, where, first)
    monkeypatch.setattr(DaskEngine, "_submit", spied)
    system = sweep()
    engine = DaskEngine(system, address=cluster, local_below=1, spread=3, spread_from=50)
    found = search(system, 4, engine)
    engine.close()
    assert figures(found) == figures(search(sweep(), 4))
    tasks = {t["level"]: t for t in found.storage["workerTasks"]}
    assert sorted(tasks) == [0, 1, 2, 3]
    for level, cut, first in handed:  # one round a level (rounds of 1,048,576 nodes)
        nodes = tasks[level]["nodes"]
        assert len(nodes) == cut and 0 <= tasks[level]["stolenTasks"] <= cut
        if sum(nodes) >= 100:  # 50 a worker: three partitions each, their nodes their priority
            assert cut == 6 and first == nodes
        else:
            assert cut == 2 and first == [0, 0]  # no priority
    assert [cut for _, cut, _ in handed] == [2, 2, 2, 6]  # only level 3 (1,444 nodes) is cut
    assert sum(tasks[3]["nodes"]) == 1_444
    for bad in (0, -1, 2.5):  # no expansion partition at all, or a fraction of one
        with pytest.raises(ValueError, match="spread: expansion partitions a worker"):
            DaskEngine(sweep(), address=cluster, spread=bad)


def test_a_search_on_the_cluster_is_saved_between_rounds_and_taken_up_by_either_engine(
        cluster, tmp_path, monkeypatch):
    """Checkpoints with the Dask engine: a level on the cluster is expanded in rounds of
    frontier nodes (here 64), between which the checkpoint is saved and the timeout checked;
    a checkpoint is taken up on the cluster or in process, inside a level too (the next
    level's nodes found before the stop go to the workers with the new ones): every way, the
    parents, findings and counts of the search never stopped."""
    import shutil

    import properties.search.bfs as bfs
    from properties.search.bfs import LocalEngine, search
    from properties.search.checkpoint import Checkpoint
    from properties.search.dask_engine import DaskEngine
    from properties.catalogue import PROPERTIES
    from properties.search.explore import EXPLORE_VOCABULARY
    from properties.search.system_sweep import SweepAdapter

    def sweep():
        return SweepAdapter(EXPLORE_VOCABULARY, tuple(PROPERTIES), False)

    def figures(found):
        return (found.parents.to_numpy().tolist(), found.edges, found.depth, found.tags,
                [[repr(k), repr(v)] for k, v in found.findings.items()])

    def run(directory, engine_of, checks):
        """One process's run: stopped by its timeout at the ``checks``-th time check."""
        left = [checks]

        def check_time(self):
            left[0] -= 1
            if left[0] < 0:
                raise bfs.Stop("timeout")
        monkeypatch.setattr(bfs._Merge, "check_time", check_time)
        system = sweep()
        try:
            found = search(system, 4, engine_of(system),
                           checkpoint=Checkpoint(str(directory), {}, 0.0))
        finally:
            monkeypatch.undo()
        meta = json.loads((directory / "checkpoint.json").read_text())
        return found, (found.stopped_by, meta["level"], meta["rows"])

    def on_cluster(system):
        # levels of 32 nodes or more in eight expansion partitions (four a worker)
        return DaskEngine(system, address=cluster, local_below=1, round_nodes=64,
                          spread_from=16)

    def in_process(system):
        return LocalEngine(system, chunk=8)
    plain = figures(search(sweep(), 4))
    for depth, rounds, bound in ((4, 64, 9_000), (4, 10**6, 35), (3, 7, None), (3, 1, None)):
        # a state bound that cuts a round; rounds where a partition has no node (their tasks
        # find nothing, and take no class of readings away from the others'); every level
        # past the first in more expansion partitions than workers where rounds are small
        system = sweep()
        engine = DaskEngine(system, address=cluster, local_below=1, round_nodes=rounds,
                            spread_from=1 if rounds < 100 else 1 << 30)
        assert figures(search(system, depth, engine, max_states=bound)) == \
            figures(search(sweep(), depth, max_states=bound)), (depth, rounds, bound)

    where = tmp_path / "cluster"
    assert run(where, on_cluster, 1)[1] == ("timeout", 1, 0)
    # the resume's first round runs whatever the time; level 3 (1,444 nodes) has 23 rounds
    found, said = run(where, on_cluster, 1)
    assert said == ("timeout", 3, 0) and found.storage["workerTasks"]
    assert run(where, on_cluster, 10)[1] == ("timeout", 3, 11 * 64)
    shutil.copytree(where, tmp_path / "back")
    found, said = run(where, on_cluster, 10_000)
    assert said == ("depth", 4, 0) and figures(found) == plain
    tasks = found.storage["workerTasks"]  # one entry per level, its rounds added up
    level3 = (where / "frontier-3.i64").stat().st_size // 8  # its nodes not halted
    assert [t["level"] for t in tasks] == [3] and sum(tasks[0]["nodes"]) == level3 - 11 * 64
    assert len(tasks[0]["nodes"]) == 8  # four expansion partitions a worker
    found, said = run(tmp_path / "back", in_process, 10_000)
    assert said == ("depth", 4, 0) and figures(found) == plain

    where = tmp_path / "mixed"
    assert run(where, in_process, 4)[1] == ("timeout", 2, 16)
    found, said = run(where, on_cluster, 10_000)
    assert said == ("depth", 4, 0) and figures(found) == plain
    assert [t["level"] for t in found.storage["workerTasks"]] == [2, 3]


def _cli(args: list, capsys) -> str:
    assert main(args) == 0
    return capsys.readouterr().out


def test_explore_workers_and_cluster_print_the_same_bytes(cluster, tmp_path, capsys,
                                                          monkeypatch):
    """``explore --json --graph`` with one worker, with two local workers (started and
    stopped by the command) and on a running cluster: the same JSON and the same graph file.
    Every level goes to the workers (``parallel_from=1``), so that a small search uses them."""
    one = _cli(["explore", "--depth", "3", "--json", "--workers", "1",
                "--graph", str(tmp_path / "one.dot")], capsys)
    real = explore_module.explore
    monkeypatch.setattr(explore_module, "explore",
                        lambda options: real(dataclasses.replace(options, parallel_from=1)))
    two = _cli(["explore", "--depth", "3", "--json", "--workers", "2",
                "--graph", str(tmp_path / "two.dot")], capsys)
    joined = _cli(["explore", "--depth", "3", "--json", "--cluster", cluster,
                   "--graph", str(tmp_path / "joined.dot")], capsys)
    assert json.loads(one)["states"] == 1635  # depth 4 is compared in the engine's test
    assert one == two == joined
    graphs = {(tmp_path / f"{name}.dot").read_bytes() for name in ("one", "two", "joined")}
    assert len(graphs) == 1


def test_explore_checks_its_cluster_before_searching(cluster, capsys, monkeypatch):
    """``explore --cluster`` asks the scheduler for its workers before the search, whatever
    its size (a depth-1 search never leaves the process): a running cluster's two workers
    answer; an address where nothing listens, one that is not an address and one whose scheme
    is no Dask transport (the dashboard's http://) are refused at once, in one line naming the
    address (exit 2), not after a search."""
    import socket

    import properties.search.dask_engine as bfs_dask
    assert bfs_dask.cluster_workers(cluster) == 2
    assert main(["explore", "--depth", "1", "--json", "--cluster", cluster]) == 0
    assert json.loads(capsys.readouterr().out)["states"] > 1
    monkeypatch.setattr(bfs_dask, "CONNECT_SECONDS", 1.0)
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    import time
    for address, said in ((f"tcp://127.0.0.1:{port}",
                           f"no Dask scheduler answered at tcp://127.0.0.1:{port} (the "
                           "connection was refused: nothing listens there)\n"),
                          ("nonsense", "nonsense is not a Dask scheduler's address (missing "
                                       "port number in address 'nonsense')\n"),
                          # the dashboard's address: refused by its scheme, before any attempt
                          (f"http://127.0.0.1:{port}", f"http://127.0.0.1:{port} is not a Dask "
                           "scheduler's address (Dask has no 'http' transport;")):
        started = time.monotonic()
        assert main(["explore", "--depth", "1", "--cluster", address]) == 2
        assert time.monotonic() - started < 1.0  # refused at once, not after Dask's retries
        captured = capsys.readouterr()
        assert captured.out == ""
        assert captured.err.startswith(f"activity-check: error: --cluster: {said}"), captured.err


def _run_out_of_time_in_level_1(monkeypatch) -> None:
    """Make the search's time run out while level 1's batches are merged (its start moved a
    million seconds back after each merge of level 1)."""
    import properties.search.bfs as bfs
    real = bfs._Merge.absorb

    def absorb_then_run_out(self, batch):
        kept = real(self, batch)
        if self.level == 1:
            self.started -= 1e6
        return kept
    monkeypatch.setattr(bfs._Merge, "absorb", absorb_then_run_out)


def test_a_level_whose_last_batch_is_merged_after_the_timeout_is_complete(monkeypatch):
    """The timeout is checked before a chunk or level is expanded, not after one is merged:
    when the time runs out while the last level's last batch is merged, the search is complete
    (depth reached, every state kept), and a further level would have been stopped."""
    _run_out_of_time_in_level_1(monkeypatch)
    unbounded = explore(ExploreOptions(depth=2, reading=None))
    r = explore(ExploreOptions(depth=2, reading=None, timeout=60))
    assert (r.stopped_by, r.complete, r.depth, r.states) == \
        (unbounded.stopped_by, True, 2, unbounded.states)
    deeper = explore(ExploreOptions(depth=3, reading=None, timeout=60))
    assert (deeper.stopped_by, deeper.complete, deeper.depth, deeper.states) == \
        ("timeout", False, 2, unbounded.states)


def _listener(reply: bytes):
    """A TCP server on 127.0.0.1 that accepts connections, sends ``reply`` (b"": nothing) and
    keeps them open until closed: something at an address that is not a Dask scheduler.
    Returns ``(address, close)``."""
    import socket
    import threading
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    server.settimeout(0.2)
    held, stop = [], threading.Event()

    def serve():
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            held.append(conn)
            if reply:
                conn.sendall(reply)
    thread = threading.Thread(target=serve, daemon=True)
    thread.start()

    def close():
        stop.set()
        thread.join()
        for conn in held:
            conn.close()
        server.close()
    return f"tcp://127.0.0.1:{server.getsockname()[1]}", close


def test_explore_refuses_a_cluster_address_where_something_else_answers(capsys, monkeypatch):
    """An address where something other than a Dask scheduler listens is refused in one line
    (exit 2), not waited on for ever: one that accepts and says nothing after twice
    ``CONNECT_SECONDS``, one that answers in another protocol (its bytes would be read as a
    frame length) at once."""
    import time

    import properties.search.dask_engine as bfs_dask
    monkeypatch.setattr(bfs_dask, "CONNECT_SECONDS", 1.0)
    for reply, said in ((b"", "did not complete a Dask handshake within 2 s"),
                        (b"HTTP/1.0 400 Bad request\r\n\r\n" * 8,
                         "is not a Dask scheduler, or Dask could not speak to it ("),
                        (b"\x00" * 8,
                         "is not a Dask scheduler, or Dask could not speak to it ("),
                        (b"\xde\xad\xbe\xef" * 16,
                         "is not a Dask scheduler, or Dask could not speak to it (")):
        address, close = _listener(reply)
        try:
            started = time.monotonic()
            assert main(["explore", "--depth", "1", "--cluster", address]) == 2
            took = time.monotonic() - started
        finally:
            close()
        captured = capsys.readouterr()
        assert captured.out == "" and captured.err.count("\n") == 1, captured.err
        assert captured.err.startswith(f"activity-check: error: --cluster: what answered at "
                                       f"{address} ") and said in captured.err, captured.err
        assert took < 15, took


def test_explore_refuses_an_address_out_of_range_or_empty_at_once(capsys):
    """An empty ``--cluster`` or one whose port cannot be is refused before anything is
    tried, in one line naming it (exit 2); so are ``--workers`` beside ``--cluster`` (the
    cluster's workers expand the levels) and an empty ``--graph``, and the cheap checks come
    before the cluster is asked (a bad reading is said at once, not after its timeout)."""
    import time
    for argv, said in ((["--cluster", "tcp://127.0.0.1:1", "--workers", "2"],
                        "--workers and --cluster: the cluster's own workers expand the levels"),
                       (["--graph", ""], "--graph: an empty value"),
                       (["--cluster", "tcp://192.0.2.1:8786", "--reading", "Q1=nonsense"],
                        "Q1")):
        started = time.monotonic()
        assert main(["explore", "--depth", "1"] + argv) == 2
        assert time.monotonic() - started < 5
        captured = capsys.readouterr()
        assert captured.out == "" and captured.err.startswith("activity-check: error: ") \
            and said in captured.err and captured.err.count("\n") == 1, captured.err
    for address, said in (("", "--cluster: an empty value"),
                          ("tcp://127.0.0.1:99999", "--cluster: tcp://127.0.0.1:99999 is not a "
                                                    "Dask scheduler's address (port 99999 out "
                                                    "of range)")):
        assert main(["explore", "--depth", "1", "--cluster", address]) == 2
        captured = capsys.readouterr()
        assert captured.out == "" and captured.err.startswith(
            f"activity-check: error: {said}"), captured.err


def test_explore_refuses_workers_far_beyond_the_cores_and_other_transports_say_why(
        capsys, monkeypatch):
    """``--workers`` above four a core available is refused in one line naming the cores (a
    typo's 100000 would start that many processes), four a core is taken; a ``tls://`` or
    ``ucx://`` address whose transport Dask cannot set up says so, not that something
    answered there (nothing listens on either port)."""
    import socket
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0})
    assert main(["explore", "--depth", "2", "--workers", "5"]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == (
        "activity-check: error: --workers 5: each is a process of its own, and this process "
        "may run on 1 core; give at most 4, or run the search on a cluster (--cluster)\n")
    assert main(["explore", "--depth", "2", "--workers", "4", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["states"] == 35
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    for scheme, said in (("tls", "tls:// takes its certificates from Dask's distributed.comm.tls "
                                 "configuration; or give the scheduler's tcp:// address"),
                         ("ucx", "ucx:// needs what Dask's documentation names for it")):
        address = f"{scheme}://127.0.0.1:{port}"
        assert main(["explore", "--depth", "1", "--cluster", address]) == 2
        captured = capsys.readouterr()
        assert captured.err.startswith(f"activity-check: error: --cluster: could not connect to "
                                       f"{address}: Dask's {scheme}:// transport could not be "
                                       "set up (") and said in captured.err, captured.err
        assert captured.err.count("\n") == 1 and "answered" not in captured.err
    # TLS settings that name no certificate: the setup's error (an OSError itself), not "no
    # scheduler answered"
    import dask
    with dask.config.set({"distributed.comm.tls.ca-file": "/nonexistent/ca.pem",
                          "distributed.comm.tls.client.cert": "/nonexistent/c.pem",
                          "distributed.comm.tls.client.key": "/nonexistent/k.pem"}):
        assert main(["explore", "--depth", "1", "--cluster", f"tls://127.0.0.1:{port}"]) == 2
    captured = capsys.readouterr()
    assert captured.err.startswith(f"activity-check: error: --cluster: could not connect to "
                                   f"tls://127.0.0.1:{port}: Dask's tls:// transport could not "
                                   "be set up (FileNotFoundError: "), captured.err


def test_an_interrupt_during_a_workers_level_asks_the_cluster_nothing_more(monkeypatch):
    """A Ctrl-C while the driver waits for the workers' level (a terminal's Ctrl-C reaches the
    workers too, which may then be gone): the engine asks the cluster nothing more (no
    figures, no clean-up task, either of which would wait for the workers), closes it, and
    the report holds the levels merged before, not partly the interrupted one."""
    import properties.search.dask_engine as bfs_dask
    events = []
    real_level = bfs_dask.DaskEngine._level

    def level_interrupted(self, merge, level, last):
        if level == 2:
            client = self.client

            def asked(name):
                real = getattr(client, name)

                def spy(*args, **kwargs):
                    if "Ctrl-C" in events:
                        events.append(name)  # asked after the interrupt
                    elif name == "gather":
                        events.append("Ctrl-C")
                        raise KeyboardInterrupt
                    return real(*args, **kwargs)
                return spy
            for name in ("submit", "gather", "run"):
                setattr(client, name, asked(name))
        return real_level(self, merge, level, last)
    monkeypatch.setattr(bfs_dask.DaskEngine, "_level", level_interrupted)
    r = explore(ExploreOptions(depth=4, reading=None, workers=2, parallel_from=1))
    assert events == ["Ctrl-C"]
    assert (r.stopped_by, r.depth, r.partial, r.complete) == ("interrupted", 2, False, False)
    assert r.states == explore(ExploreOptions(depth=2, reading=None)).states


def test_a_ctrl_c_while_the_engine_closes_is_the_searchs_interrupt(monkeypatch):
    """An interrupt that lands while the engine closes stops the search as one during it
    would (the report says interrupted), and the closing is taken up again."""
    import properties.search.bfs as bfs
    closes = []
    real_close = bfs.LocalEngine.close

    def close_interrupted(self):
        closes.append(self)
        if len(closes) == 1:
            raise KeyboardInterrupt
        real_close(self)
    monkeypatch.setattr(bfs.LocalEngine, "close", close_interrupted)
    r = explore(ExploreOptions(depth=2, reading=None))
    assert len(closes) == 2 and closes[0] is closes[1]
    assert (r.stopped_by, r.complete, r.depth) == ("interrupted", False, 2)
    monkeypatch.undo()
    assert r.states == explore(ExploreOptions(depth=2, reading=None)).states


def test_a_stop_says_whether_the_next_level_was_partly_explored(monkeypatch, capsys):
    """A bound that cuts a level leaves it partly explored; one met between two levels (a
    timeout found before the next level's first chunk, a state bound at the root) leaves the
    next level not explored, with no move of it counted, and the command says which."""
    cut = explore(ExploreOptions(depth=4, reading=None, max_states=300))
    assert (cut.stopped_by, cut.depth, cut.partial, cut.states) == ("max-states", 2, True, 300)
    root = explore(ExploreOptions(depth=3, reading=None, max_states=1))
    assert (root.stopped_by, root.depth, root.partial, root.states, root.edges) == \
        ("max-states", 0, False, 1, 0)
    assert main(["explore", "--depth", "3", "--max-states", "1"]) == 0
    out = capsys.readouterr().out
    flat = " ".join(out.split())  # the report's lines read across their wrap at 120 columns
    assert "stopped by --max-states 1; depth 1 is not explored" in flat
    # one state, no move: counted in the singular where it is one
    assert flat.startswith("explored 1 distinct state and 0 moves to depth 0 under every reading "
                           "at once (1 class of readings)") and "for 1 state " in flat
    # one reading: no classes of readings in what is said
    assert main(["explore", "--depth", "2", "--reading", "draft"]) == 0
    out = capsys.readouterr().out
    assert "moves checked)" in out and "class" not in out
    assert main(["explore", "--depth", "4", "--max-states", "300"]) == 0
    assert "stopped by --max-states 300; depth 3 is partly explored" in \
        " ".join(capsys.readouterr().out.split())
    # --json says the same in its member "partial"
    import json
    for bound, partial in (("1", False), ("300", True)):
        assert main(["explore", "--depth", "4", "--max-states", bound, "--json"]) == 0
        doc = json.loads(capsys.readouterr().out)
        assert (doc["stoppedBy"], doc["partial"], doc["complete"]) == \
            ("max-states", partial, False)
    _run_out_of_time_in_level_1(monkeypatch)
    timed = explore(ExploreOptions(depth=4, reading=None, timeout=60))
    assert (timed.stopped_by, timed.depth, timed.partial) == ("timeout", 2, False)
    assert timed.edges == explore(ExploreOptions(depth=2, reading=None)).edges


def test_explore_refuses_a_graph_file_name_held_by_a_dangling_link(tmp_path, capsys):
    """``--graph`` through a symbolic link is refused before the search, a dangling link too
    (the writer never follows one; the search would have run for nothing)."""
    link = tmp_path / "graph.dot"
    link.symlink_to(tmp_path / "nowhere.dot")
    assert main(["explore", "--depth", "5", "--graph", str(link)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (f"activity-check: error: --graph {link}: is a symbolic link; "
                            "choose a new file name\n")
    assert not (tmp_path / "nowhere.dot").exists()


def test_a_level_on_a_cluster_without_workers_or_scheduler_stops_in_one_line(cluster,
                                                                            monkeypatch,
                                                                            capsys, tmp_path):
    """Dask holds a task for as long as no worker can run it: a level whose workers have all
    left gives up after ``CONNECT_SECONDS`` without a worker, and a level whose futures are
    cancelled (the scheduler lost) stops at once, both as :class:`ClusterError` naming the
    cluster and the depth; ``explore`` says either in one line and exits 1."""
    import time

    from distributed import Client

    import properties.search.dask_engine as bfs_dask
    from properties.search.system_sweep import SweepAdapter
    monkeypatch.setattr(bfs_dask, "CONNECT_SECONDS", 1.0)
    engine = bfs_dask.DaskEngine(SweepAdapter(explore_module.EXPLORE_VOCABULARY, (), False),
                                 address=cluster)
    with Client(cluster) as client:
        engine.client = client
        # a task no worker may run stands for one whose workers are gone
        stuck = client.submit(time.sleep, 60, workers=["tcp://127.0.0.1:1"],
                              allow_other_workers=False, pure=False)
        monkeypatch.setattr(client, "nthreads", lambda: {})
        started = time.monotonic()
        with pytest.raises(bfs_dask.ClusterError,
                           match=f"every worker of the Dask cluster at {cluster} left during "
                                 "depth 3, and none joined within 1 s"):
            engine._gather([stuck], 2)
        assert time.monotonic() - started < 10
        monkeypatch.undo()
        monkeypatch.setattr(bfs_dask, "CONNECT_SECONDS", 1.0)
        stuck.cancel()
        with pytest.raises(bfs_dask.ClusterError,
                           match=f"lost the scheduler of the Dask cluster at {cluster} during "
                                 "depth 3"):
            engine._gather([stuck], 2)
        # a task's own error is its own, not the cluster's
        with pytest.raises(ZeroDivisionError):
            engine._gather([client.submit(divmod, 1, 0, pure=False)], 2)

    def lost(options):
        raise bfs_dask.ClusterError("lost the scheduler of the Dask cluster at tcp://x:1 "
                                    "during depth 5 (FuturesCancelledError)")
    monkeypatch.setattr(explore_module, "explore", lost)
    assert main(["explore", "--depth", "5", "--workers", "1"]) == 1
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == (
        "activity-check: error: lost the scheduler of the Dask cluster at tcp://x:1 during "
        "depth 5 (FuturesCancelledError); nothing explored is reported\n")
    # with a checkpoint the line says whether a save stands to be taken up
    directory = tmp_path / "ck"
    for saved, said in ((False, "; nothing was saved yet, and the next run starts afresh\n"),
                        (True, "; the last save stands, and the same command takes the search "
                               "up from there\n")):
        if saved:
            directory.mkdir()
            (directory / "checkpoint.json").write_text("{}")
        assert main(["explore", "--depth", "5", "--workers", "1", "--checkpoint",
                     str(directory)]) == 1
        captured = capsys.readouterr()
        assert captured.err.endswith("nothing explored is reported" + said), captured.err


def test_a_cluster_that_fails_while_a_level_is_cut_is_not_asked_for_figures(cluster,
                                                                            monkeypatch):
    """A level cut into more expansion partitions than workers first awaits its partitions'
    sizes (the tasks' priorities): the cluster is not settled then, so a search that the
    cluster fails in that wait (here: every worker gone) stops with :class:`ClusterError` and
    its figures leave the cluster alone, as they would in a round (asking a cluster without
    workers would wait for ever)."""
    import properties.search.dask_engine as bfs_dask
    from properties.search.bfs import search
    from properties.catalogue import PROPERTIES
    from properties.search.system_sweep import SweepAdapter
    seen, gather = [], bfs_dask.DaskEngine._gather

    def failing(self, futures, level):
        if futures and str(futures[0].key).startswith("_round_sizes"):
            seen.append(self.settled)
            raise bfs_dask.ClusterError(f"every worker of the Dask cluster at {cluster} left "
                                        f"during depth {level + 1}")
        return gather(self, futures, level)
    monkeypatch.setattr(bfs_dask.DaskEngine, "_gather", failing)
    figures, storage = [], bfs_dask.DaskEngine.storage
    monkeypatch.setattr(bfs_dask.DaskEngine, "storage",
                        lambda self: figures.append(storage(self)) or figures[-1])
    system = SweepAdapter(explore_module.EXPLORE_VOCABULARY, tuple(PROPERTIES), False)
    engine = bfs_dask.DaskEngine(system, address=cluster, local_below=1, spread=2,
                                 spread_from=1)
    with pytest.raises(bfs_dask.ClusterError, match="every worker"):
        search(system, 3, engine)
    # the figures the search took as it stopped: the driver's, none of the cluster's
    assert seen == [False] and len(figures) == 1 and figures[0]["workerTasks"]
    assert "workerPeakBytes" not in figures[0]


def test_an_interrupt_while_the_local_cluster_starts_takes_effect_once_it_is_up(
        python_sigint):
    """A Ctrl-C that lands while the local cluster starts is held back until it is up
    (``bfs_dask._interrupts_held``): the start is not cut half-way, and the interrupt is raised
    as soon as it ends."""
    import signal
    import threading

    from properties.search.dask_engine import _interrupts_held
    reached = []
    with pytest.raises(KeyboardInterrupt):
        with _interrupts_held():
            signal.pthread_kill(threading.get_ident(), signal.SIGINT)
            for _ in range(1000):  # bytecode enough for a pending Python signal to be raised
                reached.append(len(reached))
            reached = ["the start ran to its end"]
    assert reached == ["the start ran to its end"]
    assert signal.SIGINT not in signal.pthread_sigmask(signal.SIG_BLOCK, [])


def test_a_partition_rerun_on_another_worker_reports_what_it_reports_alone(monkeypatch):
    """A Dask task may run on a worker that has expanded another partition of the same level
    (a lost worker's task rerun there): it reports the same findings as on a worker of its own,
    since what the worker found before (split costs, whose ties the first found wins) is
    forgotten at the task's start (``EngineAdapter.forget_findings``). Without that, the
    partition's split witnesses were pruned by the other partition's equal ones, and the
    output changed when a worker was lost."""
    import properties.search.bfs as bfs
    import properties.search.dask_engine as bfs_dask
    from properties.catalogue import PROPERTIES
    from properties.search.system_sweep import SweepAdapter
    captured = {}

    class Capture(bfs.LocalEngine):
        def level(self, merge, level, last):
            if level == 2:  # level 2's frontier and what is known before it, then stop
                blocks = [(np.array(i), np.array(n)) for i, n in self.frontier]
                captured.update(ids=np.concatenate([b[0] for b in blocks]),
                                nodes=np.concatenate([b[1] for b in blocks]),
                                known=dict(merge.known))
                raise bfs.Stop("timeout")
            super().level(merge, level, last)
    system = SweepAdapter(explore_module.EXPLORE_VOCABULARY, tuple(PROPERTIES), False)
    bfs.search(system, 3, engine=Capture(system))
    ids, nodes, known = captured["ids"], captured["nodes"], captured["known"]
    part = (system.routing(nodes) % np.uint64(2)).astype(np.int64)
    pieces = [[(ids[part == j], system.export(nodes[part == j]))] for j in range(2)]
    spec = system.spec(2)

    def findings(token, j):
        return bfs_dask._expand_part(token, spec, pieces[j], 2, known, 2, True,
                                     False)["findings"]
    import gc
    try:
        alone = findings("alone", 0)
        findings("rerun", 1)
        assert len(alone) == 10 and findings("rerun", 0) == alone
        # the same worker without forgetting: the partition's split witnesses go missing
        monkeypatch.setattr(SweepAdapter, "forget_findings", lambda self: None)
        findings("kept", 1)
        assert findings("kept", 0) != alone
    finally:  # a task freezes what it leaves, as a worker process should; this one is not
        bfs_dask._SYSTEMS.clear()
        gc.unfreeze()
