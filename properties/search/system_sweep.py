"""Every reading in one sweep, as a transition system (:class:`SweepSystem`), and its engine
side (:class:`SweepAdapter`).

A node is ``(belief, state, producer readings, class)``, each a number of the
:class:`~properties.search.sweep_cache.SweepCache`'s interned tables, where the class is a
partial assignment of knobs standing for every reading consistent with it, all of which have
given the same result on every step so far. A move is an event of
:func:`~properties.search.move_table._node_moves`; a step that consults a knob the class leaves
open is forked over its options (:func:`~properties.search.reading_classes.step_leaves`):
options that give equal results stay one class, options that differ become sibling classes
(a leaf of the move), and the knob is recorded as a split there, in whatever context the
class fixes. Every property of the catalogue is checked on every class's transition under
every reading of the class. A chunk of nodes is expanded in blocks
(:class:`~properties.search.blocks.BlockTables`) or, as the reference they must equal, node by
node (:meth:`SweepSystem._expand_node`).

:class:`SweepAdapter` is what the engines ask beyond the model's contract: routing by consumer
state, nodes as portable values for Dask workers, each worker's memo-table budget (the whole
of :data:`~properties.search.sweep_cache.CACHE_ENTRIES`, not a share) and the eviction that
keeps the tables within it (:meth:`SweepAdapter.make_room`).
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from model.events import Event
from model.producer import Vocabulary
from properties.search.bfs import EngineAdapter, Expansion, TransitionSystem
from properties.search.blocks import BlockTables, ComponentColumns, check_key
from properties.search import sweep_cache as _tables_module
from properties.search.move_table import _fps_of, _record
from properties.search.reading_classes import (_ATTR_OF_KNOB, _OPTIONS_OF_ATTR, _pair,
                                              _representative)
from properties.search.sweep_cache import CACHE_ENTRIES, SweepCache, _BROKEN, _may_improve

__all__ = ["SweepAdapter", "SweepSystem"]


def _first_places(blocks, states: int, classes: int) -> tuple:
    """One pass over the pending nodes (``blocks``: int64 arrays of sweep nodes, in the order
    they will be expanded): ``(first, class_first)``, per consumer state number below
    ``states`` and per class number below ``classes`` the place of the first pending node
    that holds it (int64; -1 where none does). Only the nodes whose state or class has not
    been met in an earlier block are sorted, so the pass costs a few array operations per node
    (some 44 million at depth 7's last level, where a sort of them all took 12 s, at every
    eviction)."""
    first = np.full(states, -1, np.int64)
    class_first = np.full(classes, -1, np.int64)
    at = 0
    for nodes in blocks:
        for column, places in ((np.asarray(nodes[:, 1], dtype=np.int64), first),
                               (np.asarray(nodes[:, 3], dtype=np.int64), class_first)):
            new = np.flatnonzero(places[column] < 0)
            if len(new):
                found, place = np.unique(column[new], return_index=True)
                places[found] = at + new[place]
        at += len(nodes)
    return first, class_first


class SweepSystem(TransitionSystem):
    """Every reading in one sweep (see the module and :func:`~properties.search.explore.explore`),
    as a transition system: a node is ``(belief, state, producer readings, class)``, each a
    number of the :class:`~properties.search.sweep_cache.SweepCache`'s interned tables; a move
    is an event of :func:`~properties.search.move_table._node_moves`, a leaf one class of the
    step's fork (:func:`~properties.search.reading_classes._select`).

    Args:
        vocabulary: the producer's finite world; properties: checked on every transition
        (catalogue order); adversarial: also take the producer's non-conformant moves.
    """

    width = 4
    blocks = True
    """Expand a chunk of nodes in blocks (:class:`~properties.search.blocks.BlockTables`); False:
    node by node, leaf by leaf (:meth:`_expand_node`, the reference the blocks must equal; also
    taken while ``_known`` is replaced, as a test does to compare shared and fresh checks)."""

    def __init__(self, vocabulary: Vocabulary, properties: tuple, adversarial: bool):
        self.cache = SweepCache(vocabulary, properties, adversarial)
        self._tables: Optional[BlockTables] = None
        self._columns: Optional[ComponentColumns] = None  # outlive the tables' generations

    def root(self) -> tuple:
        return (0, 0, 0, 0)

    def fingerprints(self, nodes: np.ndarray) -> np.ndarray:
        c = self.cache
        return _fps_of((c.beliefs, c.states, c.producer_sets, c.classes), nodes)

    def tags(self, nodes: np.ndarray) -> np.ndarray:
        """The class of readings of each node (the report counts the distinct ones)."""
        return self.cache.classes.fingerprints()[nodes[:, 3]]

    def child(self, node: tuple, move: int, leaf: int, level: int = 0) -> tuple:
        b, s, p, cl = node
        c = self.cache
        e, pa, _, ba = c.moves_of(b, p)[move]
        tree, shape = c.tree_of(s, e)
        leaves = ((cl, 0),) if len(tree) == 1 else c.fork_of(shape, cl)[0]
        lc, li = leaves[leaf]
        return c.events.values[e], (ba, tree[li][2], pa, lc)

    def event(self, node: tuple, move: int, level: int = 0) -> Event:
        c = self.cache
        return c.events.values[c.moves_of(node[0], node[2])[move][0]]

    def value(self, node: tuple) -> tuple:
        b, s, p, cl = node
        c = self.cache
        return (c.beliefs.values[b], c.states.values[s], c.producer_sets.values[p],
                c.classes.values[cl])

    def expand(self, ids: np.ndarray, nodes: np.ndarray, level: int, out: Expansion,
               known: dict) -> None:
        c = self.cache
        for key, cost in known.items():
            if key[0] == "split" and (key[1] not in c.split_cost or cost < c.split_cost[key[1]]):
                c.split_cost[key[1]] = cost
        recorded = {k[1] for k in known if k[0] == "violation"}
        if self.blocks and _exact_known() and len(ids):
            tables = self._tables
            if tables is None or tables.generation != c.generation:
                if self._columns is None:
                    self._columns = ComponentColumns(_OPTIONS_OF_ATTR, _representative(()),
                                                     _ATTR_OF_KNOB)
                tables = self._tables = BlockTables(c, _BROKEN, self._columns)
            if tables.fits():
                tables.expand(ids, np.asarray(nodes, dtype=np.int64), level, out, recorded,
                              _record, _may_improve)
                return
        for node, (b, s, p, cl) in zip(ids.tolist(), nodes.tolist()):
            self._expand_node(node, b, s, p, cl, level, out, recorded)

    def _expand_node(self, node: int, b: int, s: int, p: int, cl: int, level: int,
                     out: Expansion, recorded: set) -> None:
        """One node's moves, leaves, checks and successors (the sweep's hot loop)."""
        c = self.cache
        trees, forks, checked = c.trees, c.forks, c.checked
        exact = _exact_known()
        add_node, add_key, add_halted = out.nodes.extend, out.keys.append, out.halted.append
        state = c.states.values[s]
        node_moves = c.move_rows.get((b, p)) or c.move_rows_of(b, p)
        out.moves.append(len(node_moves))
        for m, (e, pa, ok, ba, props, view) in enumerate(node_moves):
            tree = trees.get((s, e))
            if tree is None:
                tree = c.tree_of(s, e)
            if isinstance(tree, Exception):
                _record(out, recorded, "P00-no-exception", (node, m, 0),
                        (node, m, f"{type(tree).__name__}: {tree}"))
                continue
            tree, shape = tree
            if len(tree) == 1:
                leaves = ((cl, 0),)
            else:
                leaves, candidates = forks.get((shape, cl)) or c.fork_of(shape, cl)
                if len(leaves) > 1 and ok and not state.halted:
                    rank = (level, not c.draft_conformant[pa])
                    settled = c.split_settled.get(candidates)
                    if settled is not None and settled <= rank:
                        pass  # no split witness of these knobs can improve any more
                    elif _may_improve(c.split_cost, candidates, rank):
                        c.splits_at(out, [(c.classes.values[lc], tree[leaf][1])
                                          for lc, leaf in leaves], node, m, rank)
                    else:
                        c.split_settled[candidates] = rank
            base = (node << 28) | (m << 12)
            for j, (lc, leaf) in enumerate(leaves):
                _, result, rs, halted, outcome, _ = tree[leaf]
                if props:
                    key = check_key(view, s, e, outcome, ok)
                    entries = checked.get(key)
                    if entries is not None and not entries[0][0] and exact:
                        # the commonest case: the checks consulted no knob (the first entry,
                        # the one _known would take, holds under every reading)
                        hit = entries[0][1]
                        if hit is not None:
                            _record(out, recorded, hit[0].id, (node, m, 2 * j + 1),
                                    (node, m, hit[1]))
                        add_key(base | j)
                        add_node((ba, rs, pa, lc))
                        add_halted(halted)
                        continue
                    found = c.leaf_outcome(key, lc, (level, state, e, result, rs, b, ba, ok),
                                           (out, recorded, (node, m, 2 * j + 1), node, m),
                                           entries)
                    if found is _BROKEN:
                        continue
                    for prop, witness in found:
                        _record(out, recorded, prop.id, (node, m, 2 * j + 1),
                                (node, m, witness))
                add_key(base | j)
                add_node((ba, rs, pa, lc))
                add_halted(halted)


def _exact_known() -> bool:
    """Whether the check tables' lookup is :func:`~properties.search.sweep_cache._known` as
    defined (a test replaces it to compare shared and fresh checks; the blocks and the
    per-leaf shortcut then step aside)."""
    return _tables_module._known is _tables_module._KNOWN


class SweepAdapter(EngineAdapter):
    """The engine side of a :class:`SweepSystem` (:class:`~properties.search.bfs.EngineAdapter`):
    the system built from its arguments, routed by consumer state, its nodes exported as
    values, each process (this one and every worker) given the whole memo-table budget, and
    the tables kept within it.

    Args:
        vocabulary, properties, adversarial: the :class:`SweepSystem`'s.
        cache_entries: the memo-table budget of each process, in entries
            (:data:`CACHE_ENTRIES`; past it, entries are dropped or the tables emptied: the
            output is the same, only time changes).
    """

    def __init__(self, vocabulary: Vocabulary, properties: tuple, adversarial: bool,
                 cache_entries: int = CACHE_ENTRIES):
        super().__init__(SweepSystem(vocabulary, properties, adversarial))
        self.config = (vocabulary, properties, adversarial, cache_entries)
        self.cache_entries = cache_entries

    def spec(self, workers: int) -> tuple:
        """Each of ``workers`` processes gets the whole memo-table budget, not a share of it.
        Routing by consumer state splits only the tables keyed by the state a step starts
        from; the others (forks of classes, target-scoped outcomes, focus trees) are filled
        again in each worker that meets their keys, so a worker's tables need well over a
        1/``workers`` share, and a share made each worker evict and recompute its own
        partition's entries over and over (at depth 6 on 16 partitions, 10 to 14 evictions
        in each of the four measured and a quarter more CPU in the largest level:
        benchmarks/README.md, issue 43.1, "the memo budget per worker"). The process tree's
        memo tables may so hold up to ``workers`` budgets; ``explore --memo-entries`` sets the
        budget."""
        return type(self), self.config

    def cache_size(self) -> int:
        """Entries of the memo tables keyed by consumer transitions (:meth:`SweepCache.size`)."""
        return self.system.cache.size()

    def storage(self) -> dict:
        """``{"memoEntries": entries of the memo tables keyed by consumer transitions now,
        "memoTrims": how many times they were emptied (:meth:`SweepCache.trim`),
        "memoEvictions": how many times the entries of states no pending node holds were
        dropped (:meth:`make_room`)}``."""
        c = self.system.cache
        return {"memoEntries": c.size(), "memoTrims": c.trims, "memoEvictions": c.evictions}

    EVICT_KEEPS = 0.85
    """After an eviction (:meth:`make_room`) the tables may hold up to this share of
    ``cache_entries`` (the pending states' entries and those of the tables not keyed by a state
    before a step); past it they are emptied."""

    def make_room(self, pending) -> None:
        """When the memo tables hold more than ``cache_entries`` entries (:meth:`SweepCache.size`),
        make one eviction (:meth:`SweepCache.evict`): the entries of the consumer states and
        the forks of the classes that no pending node holds go (at the last level, a state
        whose last node has been expanded is never stepped from again). If the entries of
        every pending state and class, beside the tables keyed otherwise, would still be more
        than :attr:`EVICT_KEEPS` of the budget, only those whose first place among the pending
        nodes (:func:`_first_places`) comes before one horizon are kept, as many as half the
        budget holds (the furthest next use goes first, as in Belady's replacement, over
        states and classes alike). The tables are emptied (:meth:`SweepCache.trim`) only if
        what is left is still more than :attr:`EVICT_KEEPS` of the budget. ``pending``: a
        callable giving the pending nodes' int64 blocks in the order they will be expanded.
        See :meth:`~properties.search.bfs.EngineAdapter.make_room`."""
        c = self.system.cache
        if c.size() <= self.cache_entries:
            return
        n, m = len(c.states.values), len(c.classes.values)
        first, class_first = _first_places(pending(), n, m)
        counts, fork_counts = c.entries_by_state(n), c.forks_by_class(m)
        # the places, in the pending order, from which the entries of a state or class are
        # needed next, and how many entries each keeps; what no pending node needs goes first
        pending_states = np.flatnonzero(first >= 0)
        pending_classes = np.flatnonzero(class_first >= 0)
        places = np.concatenate((first[pending_states], class_first[pending_classes]))
        weights = np.concatenate((counts[pending_states], fork_counts[pending_classes]))
        kept = int(weights.sum())
        others = c.size() - int(counts.sum()) - int(fork_counts.sum())  # not keyed so
        horizon = None  # keep every pending state's and class's entries
        if others + kept > self.cache_entries * self.EVICT_KEEPS:
            # keep those needed soonest, as many as half the budget holds beside the tables not
            # keyed by a state or class: the furthest next use goes first (Belady)
            order = np.argsort(places, kind="stable")
            within = np.cumsum(weights[order]) <= self.cache_entries // 2 - others
            horizon = int(places[order][within].max()) + 1 if within.any() else 0
        live = first >= 0 if horizon is None else (first >= 0) & (first < horizon)
        live_classes = class_first >= 0 if horizon is None else \
            (class_first >= 0) & (class_first < horizon)
        c.evict(bytearray(live.tobytes()), bytearray(live_classes.tobytes()))
        c.trim(int(self.cache_entries * self.EVICT_KEEPS))

    def forget_findings(self) -> None:
        """Empty the split witnesses' costs and settled forks (:attr:`SweepCache.split_cost`,
        ``split_settled``): :meth:`SweepSystem.expand` takes them up again from ``known``. See
        :meth:`~properties.search.bfs.EngineAdapter.forget_findings`."""
        self.system.cache.split_cost.clear()
        self.system.cache.split_settled.clear()

    def routing(self, nodes: np.ndarray) -> np.ndarray:
        """By consumer state: the step trees and most check outcomes are keyed by it."""
        return self.system.cache.states.fingerprints()[nodes[:, 1]]

    def export(self, nodes: np.ndarray) -> list:
        c = self.system.cache
        return [(c.beliefs.values[b], c.states.values[s],
                 tuple(sorted(c.producer_sets.values[p])), c.classes.values[cl])
                for b, s, p, cl in nodes.tolist()]

    def import_(self, values: list) -> np.ndarray:
        c = self.system.cache
        rows = [(c.beliefs.number(b), c.states.number(s),
                 c.producer_set(frozenset(p)), c.classes.number(tuple(map(_pair, cl))))
                for b, s, p, cl in values]
        c.describe_classes()
        return np.array(rows, dtype=np.int64).reshape(len(rows), 4)
