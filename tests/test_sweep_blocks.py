"""The all-readings sweep's block expansion (``properties.search.blocks``) against the per-leaf
loop it replaces (``SweepSystem.blocks = False``): chunk by chunk, the same successors (keys,
nodes, halted), moves, findings (in the sequential order: key, cost, place, payload) and memo
tables, on the whole catalogue, on properties that fire under some readings only (so that the
mirrored check entries decide), adversarially, and across chunk boundaries (small chunks, so
that the mirrors carry outcomes from one chunk to the next)."""
from __future__ import annotations

import numpy as np
import pytest

import properties.search.sweep_cache as sweep_cache
from properties.search.bfs import LocalEngine, search
from properties.catalogue import PROPERTIES
from properties.search.explore import EXPLORE_VOCABULARY
from properties.search.system_sweep import SweepSystem
from tests.test_explore import _reading_dependent_properties


class _Recording(SweepSystem):
    """A sweep that keeps what each chunk's expansion produced."""

    def __init__(self, *args, blocks: bool):
        super().__init__(*args)
        self.blocks = blocks
        self.chunks: list = []

    def expand(self, ids, nodes, level, out, known):
        super().expand(ids, nodes, level, out, known)
        self.chunks.append((level, bytes(out.keys), bytes(out.nodes), list(out.halted),
                            bytes(out.moves), sorted(out.findings, key=lambda f: f[2])))


def _run(properties, depth: int, adversarial: bool, chunk: int, blocks: bool):
    system = _Recording(EXPLORE_VOCABULARY, tuple(properties), adversarial, blocks=blocks)
    found = search(system, depth, LocalEngine(system, chunk=chunk), keep_edges=True)
    c = system.cache
    # how many entries each memo table holds (the blocks compute them in another order, and
    # the tables' keys differ then, so they are compared by count)
    tables = {name: len(getattr(c, name)) for name in (
        "trees", "forks", "checked", "class_checked", "after_checked", "step_checked",
        "target_checked", "resteps", "split_settled")}
    return system, found, tables


@pytest.mark.parametrize("properties, depth, adversarial, chunk", [
    (PROPERTIES, 3, False, 4096),
    (PROPERTIES, 3, True, 97),
    ("reading-dependent", 3, False, 50),
])
def test_blocks_expand_exactly_as_the_per_leaf_loop(properties, depth, adversarial, chunk):
    if properties == "reading-dependent":
        properties = _reading_dependent_properties()
    a, found_a, tables_a = _run(properties, depth, adversarial, chunk, blocks=True)
    b, found_b, tables_b = _run(properties, depth, adversarial, chunk, blocks=False)
    assert a._tables is not None and b._tables is None  # each took its own path
    assert len(a.chunks) == len(b.chunks) >= depth
    for mine, reference in zip(a.chunks, b.chunks):
        assert mine == reference
    assert np.array_equal(found_a.parents.to_numpy(), found_b.parents.to_numpy())
    assert found_a.findings == found_b.findings
    for x, y in zip(found_a.edge_list, found_b.edge_list):
        assert np.array_equal(x, y)
    assert tables_a == tables_b
    assert found_a.states == found_b.states > 1000
    # the comparison means something: findings of each kind were recorded
    kinds = {key for key in found_a.findings}
    assert len([k for k in kinds if k[0] == "split"]) >= 10
    if properties is not PROPERTIES:
        assert {k[1] for k in kinds if k[0] == "violation"} == {"T0", "T1", "A0", "S0", "X0"}


def test_the_mirrors_resolve_most_leaves_of_a_warm_sweep(monkeypatch):
    """Past the first chunks, most leaf checks are taken from the mirrored entries without a
    per-leaf call (the point of the blocks): a second sweep over the same warm tables sends
    almost no leaf to the per-leaf path (only those whose outcome needs the class's forked
    readings: ``SweepCache.class_outcome``; its splits are not recorded again: the split costs
    are kept)."""
    import properties.search.blocks as sweep_blocks
    slow = []
    real = sweep_blocks.BlockTables._slow

    def counting(self, leaves, *args):
        slow.append(len(leaves))
        return real(self, leaves, *args)
    monkeypatch.setattr(sweep_blocks.BlockTables, "_slow", counting)
    system = SweepSystem(EXPLORE_VOCABULARY, tuple(PROPERTIES), False)
    first = search(system, 3)
    cold = sum(slow)
    slow.clear()
    again = search(system, 3)  # same system: its tables and mirrors are warm
    assert np.array_equal(again.parents.to_numpy(), first.parents.to_numpy())
    assert cold > 1000 and sum(slow) < cold / 100


def test_a_replaced_known_takes_the_per_leaf_path(monkeypatch):
    """While ``_known`` is replaced (as the shared-versus-fresh test does), the sweep expands
    leaf by leaf, so that the replacement decides."""
    monkeypatch.setattr(sweep_cache, "_known", lambda entries, reading: None)
    system = SweepSystem(EXPLORE_VOCABULARY, tuple(PROPERTIES), False)
    search(system, 2)
    assert system._tables is None


def test_a_check_key_packs_its_fields_apart_and_refuses_what_does_not_fit():
    """``check_key`` (issue 21's compact memo keys): the state, the (state, event, outcome)
    step key and the view field come back out of it, the state sits in the low bits, equal
    fields give equal keys and any differing field a different one; a field past its bits
    raises rather than wrapping."""
    from properties.search.blocks import (CHECK_STEP_MASK, CHECK_VIEW_SHIFT, check_key,
                                         check_key_state)
    key = check_key(3, 41_234, 417, 2, True)
    assert check_key_state(key) == 41_234
    assert check_key_state(check_key(None, (1 << 40) - 1, (1 << 24) - 1, 0, False)) == \
        (1 << 40) - 1
    assert key >> CHECK_VIEW_SHIFT == 4  # the view's number + 1
    assert check_key(None, 41_234, 417, 2, True) >> CHECK_VIEW_SHIFT == 0
    step = key & CHECK_STEP_MASK
    assert step == check_key(None, 41_234, 417, 2, False) & CHECK_STEP_MASK  # view, ok apart
    assert step != check_key(3, 41_234, 417, 1, True) & CHECK_STEP_MASK
    fields = [(3, 41_234, 417, 2, True), (3, 41_234, 417, 2, False), (None, 41_234, 417, 2, True),
              (2, 41_234, 417, 2, True), (3, 41_235, 417, 2, True), (3, 41_234, 416, 2, True),
              (3, 41_234, 417, 3, True), (0, 0, 0, 0, False)]
    keys = [check_key(*f) for f in fields]
    assert len(set(keys)) == len(fields) and keys[0] == check_key(3, 41_234, 417, 2, True)
    assert check_key(3, 7, 417, 2, True) & 0xFFFF == 7  # the state in the low bits
    for bad in ((0, 1 << 40, 0, 0, False), (0, 0, 1 << 24, 0, False), (0, 0, 0, 1 << 16, False)):
        with pytest.raises(OverflowError, match="check key out of range"):
            check_key(*bad)


def test_keys_with_one_clean_entry_share_one_tuple():
    """The check tables' entries (``sweep_cache._with_entry``): a key's first entry without a
    violation is one tuple (kept beside it by ``_consulted_set``) shared by every key holding
    that same entry, a violation's entry a tuple of its own, and a later entry is appended after the earlier ones, in order; on a
    real sweep most keys of ``checked`` share a few such tuples."""
    interned: dict = {}
    clean = sweep_cache._consulted_set(interned, ())[2]
    other = sweep_cache._consulted_set(interned, (("q1", "x"),))[2]
    assert clean == ((), None, frozenset()) and other == ((("q1", "x"),), None, frozenset({"q1"}))
    violation = ((), ("P01", "witness"), frozenset())
    one = sweep_cache._with_entry(interned, None, clean)
    assert one == (clean,) and sweep_cache._with_entry(interned, None, clean) is one
    assert sweep_cache._with_entry(interned, None, other) == (other,) != one
    assert sweep_cache._with_entry(interned, None, violation) == (violation,)
    assert sweep_cache._with_entry(interned, None, violation) is not \
        sweep_cache._with_entry(interned, None, violation)
    assert sweep_cache._with_entry(interned, one, other) == (clean, other) and one == (clean,)
    system, _, _ = _run(PROPERTIES, 3, False, 4096, blocks=True)
    values = list(system.cache.checked.values())
    assert len(values) > 1000
    assert len({id(v) for v in values}) < len(values) // 10
