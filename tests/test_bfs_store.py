"""The BFS driver's compact storage under memory pressure (issue 21, depth 7 within 20 GB): the
visited set's merges without three copies, parent entries spilled to a memory-mapped file, and
a depth-4 sweep with every spill forced giving the same output."""
import tracemalloc

import numpy as np
import pytest

import properties.search.bfs as bfs
from properties.search.store import BlockArray, FingerprintSet
from properties.search.explore import ExploreOptions, explore


def _members(visited: FingerprintSet) -> list:
    for run in visited.runs:  # every run sorted, the runs disjoint
        assert (np.diff(run.astype(np.int64)) > 0).all() or len(run) < 2
    return sorted(int(v) for run in visited.runs for v in run)


def test_merges_in_blocks_keep_the_set_exact(monkeypatch):
    """Small merge blocks, so that every merge crosses many blocks, with batches that fall
    inside one gap of the set and batches that interleave with it: the set holds exactly
    what was added, and ``with_added`` leaves the set it was called on as it was."""
    monkeypatch.setattr(FingerprintSet, "MERGE_BLOCK", 5)
    rng = np.random.default_rng(7)
    visited, expected = FingerprintSet(), set()
    for lo, hi, n in [(0, 10**6, 300), (500, 600, 90), (0, 10**6, 400), (10**5, 10**5 + 80, 70),
                      (0, 2**63, 700), (0, 10**6, 2000), (999_000, 10**6, 600)]:
        batch = np.unique(rng.integers(lo, hi, n, dtype=np.uint64))
        rng.shuffle(batch)
        new = visited.add(batch.copy())
        assert new.tolist() == [int(v) not in expected for v in batch]
        expected.update(int(v) for v in batch)
        assert _members(visited) == sorted(expected)
    assert len(visited.runs) <= 6
    before = [run.copy() for run in visited.runs]
    batch = np.unique(rng.integers(0, 10**6, 3000, dtype=np.uint64))
    grown, new = visited.with_added(batch)
    assert [r.tolist() for r in visited.runs] == [r.tolist() for r in before]
    assert _members(grown) == sorted(expected | {int(v) for v in batch})
    assert new.tolist() == [int(v) not in expected for v in batch]
    # the shared runs are not grown in place by a later add on either set
    visited.add(np.array([2**63 + 1], dtype=np.uint64))
    assert _members(grown) == sorted(expected | {int(v) for v in batch})


def test_a_merge_holds_the_two_runs_and_small_blocks_only(monkeypatch):
    """A merge of two runs of 2**21 members: what numpy allocates at its peak, above the set
    and the batch, is the batch's new members (one copy), the grown run (counted twice when
    ``realloc`` moves it: buffers this small are not memory maps) and small temporaries: under
    3.5 times a run's bytes (a concatenation then a sort, as before, took more than 5)."""
    monkeypatch.setattr(FingerprintSet, "MERGE_BLOCK", 1 << 16)
    monkeypatch.setattr(FingerprintSet, "INDEX_FROM", 1 << 30)  # the merge alone (no index)
    n = 1 << 21
    visited = FingerprintSet()
    visited.add(np.arange(0, 2 * n, 2, dtype=np.uint64))
    batch = np.arange(1, 2 * n, 2, dtype=np.uint64)
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        assert visited.add(batch).all()
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    assert len(visited.runs) == 1 and len(visited) == 2 * n
    assert (np.diff(visited.runs[0].astype(np.int64)) == 1).all()
    assert peak < 3.5 * 8 * n, peak / (8 * n)
    assert visited.peak_nbytes == 3 * 8 * n  # the grown run and the batch's run


def test_large_runs_are_looked_up_through_a_bucket_index(monkeypatch):
    """Runs of at least ``INDEX_FROM`` members carry a bucket index (half a byte a member,
    counted in ``nbytes``); lookups through it find exactly the members, for fingerprints
    spread as BLAKE2b spreads them and for clustered ones (every bucket but a few empty, one
    bucket holding a whole run), in sets that share runs too."""
    from properties.search.store import _bucket_index, _bucket_search
    monkeypatch.setattr(FingerprintSet, "INDEX_FROM", 1 << 12)
    rng = np.random.default_rng(7)
    spread = np.unique(rng.integers(0, 2**63, 40_000, dtype=np.int64).astype(np.uint64) << 1)
    clustered = np.arange(2**63, 2**63 + 9_000, dtype=np.uint64)  # one bucket
    for members in (spread, clustered):
        visited = FingerprintSet()
        for lo in range(0, len(members), 3_000):
            visited.add(members[lo:lo + 3_000])
        indexed = [ix for ix in visited.indexes if ix is not None]
        assert indexed and len(visited.indexes) == len(visited.runs)
        assert visited.nbytes == 8 * len(members) + sum(ix[1].nbytes for ix in indexed)
        probes = np.concatenate([members[::7], members[::11] + np.uint64(1),
                                 np.array([0, 2**64 - 1, 2**63 - 1], np.uint64)])
        expected = np.isin(probes, members)
        assert (visited.contains(probes) == expected).all()
        shared, new = visited.with_added(np.array([1, 3, 5], np.uint64))
        assert shared.indexes[0] is visited.indexes[0] and new.all()
        assert (shared.contains(probes) == (expected | np.isin(probes, [1, 3, 5]))).all()
        run = visited.runs[0]
        index = _bucket_index(run)
        assert index[1][-1] == len(run) and (np.diff(index[1]) >= 0).all()
        at = _bucket_search(run, index, run[::13])
        assert (run[at] == run[::13]).all()


def test_a_block_array_spills_full_blocks_to_a_memory_map(monkeypatch, tmp_path):
    monkeypatch.setattr(BlockArray, "BLOCK_BITS", 4)  # blocks of 16
    a = BlockArray(memory_limit=2 * 16 * 8, spill_dir=str(tmp_path))
    values = np.arange(100, dtype=np.int64) * 3
    for lo in range(0, 100, 7):
        a.extend(values[lo:lo + 7])
    assert len(a) == 100 and a.spilled_blocks == 5 and a.spilled_nbytes == 5 * 16 * 8
    assert all(isinstance(b, np.memmap) for b in a.blocks[:5])
    assert not any(isinstance(b, np.memmap) for b in a.blocks[5:])
    assert len({id(b.base) for b in a.blocks[:5]}) == 1  # views of one map
    assert [a[i] for i in range(100)] == values.tolist()
    assert a.to_numpy().tolist() == values.tolist()
    assert list(tmp_path.iterdir()) == []  # the spill file has no name
    a.truncate(40)  # into a spilled block: it comes back to memory, writable
    a.extend(np.array([-1, -2], dtype=np.int64))
    assert a.to_numpy().tolist() == values[:40].tolist() + [-1, -2]
    assert a.spilled_blocks == 2
    a.close()
    assert len(a) == 0 and a.to_numpy().tolist() == []


def test_every_spill_forced_at_depth_4_changes_nothing(monkeypatch, tmp_path):
    """The all-readings sweep to depth 4 with its graph kept, once as it is and once with the
    parent entries and kept edges in memory-mapped blocks of 1,024 (none in memory), the
    frontier spilled past 4 KB and merges of 64 members at a time: the same report, nodes,
    parents, edges and JSON. (About 15 s: two depth-4 sweeps with every edge kept.)"""
    plain = explore(ExploreOptions(depth=4, reading=None, keep_edges=True))
    monkeypatch.setattr(BlockArray, "BLOCK_BITS", 10)
    monkeypatch.setattr(bfs.LocalEngine, "PARENTS_LIMIT", 0)
    monkeypatch.setattr(FingerprintSet, "MERGE_BLOCK", 64)
    squeezed = explore(ExploreOptions(depth=4, reading=None, keep_edges=True, frontier_limit=4096,
                                      spill_dir=str(tmp_path)))
    assert squeezed.to_json(4) == plain.to_json(4) and plain.states == 64148
    assert squeezed.storage["parentSpilledBytes"] == 8 * 1024 * (64148 // 1024)
    assert plain.storage["parentSpilledBytes"] == 0
    assert squeezed.storage["frontierSpilledNodes"] > 0
    assert list(squeezed.parents) == list(plain.parents)
    edges = [(e.sources, e.targets, e.keys) for e in (plain.edges_seen, squeezed.edges_seen)]
    assert edges[0] == edges[1] and len(edges[0][0]) >= plain.edges  # a leaf each
    assert plain.storage["visitedBytes"] == squeezed.storage["visitedBytes"] == 8 * 64148
    assert 8 * 64148 <= plain.storage["visitedPeakBytes"] <= 3 * 8 * 64148
    assert list(tmp_path.iterdir()) == []  # the frontier's directory removed, no file named
