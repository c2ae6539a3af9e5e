"""One breadth-first driver for every explicit-state search, over one transition-system contract.

The model's contract (:class:`TransitionSystem`), as small as Stateright's ``Model`` (initial
states, actions, next state, properties): a system says

* ``root()``: its initial node;
* ``expand(ids, nodes, level, out, known)``: each node's moves, their steps and the properties
  checked on them, as successor nodes and findings (:class:`Expansion`), in a fixed order;
* ``child(node, move, leaf, level)``: one step re-executed, ``(event, child node)``, so that
  only the frontier holds full nodes: any other node, and every witness, is rebuilt by
  re-executing its event chain; ``event(node, move, level)``: a move's label;
* ``fingerprints(nodes)``: 64 bits per node, equal in every process;

and may say ``value(node)`` (what a node stands for, in a report), ``tags(nodes)`` (a value
per node whose distinct values are counted, such as classes of readings) and
``done(findings)`` (the search may stop). Nodes are tuples of ``width`` ints (the system
interns whatever they stand for), held in int64 columns.

The engine side (:class:`EngineAdapter`) is not the model's: how a system is rebuilt in a
worker process (``spec``), how its nodes travel there (``export``, ``import_``) and are
partitioned (``routing``), what its caches hold and when they are trimmed (``storage``,
``make_room``), and what a rerun task must forget (``forget_findings``). A bare system gets
the defaults (:func:`adapter_of`: one process, nothing to trim); the all-readings sweep and the
single-reading search come with adapters of their own
(:class:`~properties.search.system_sweep.SweepAdapter`,
:class:`~properties.search.system_single.SingleAdapter`). ``docs/search.md`` says how to add a
transition system.

The driver (:func:`search`) runs the levels one after another. Every node's *parent entry*
``(parent id, move index, leaf index)`` (:func:`~properties.search.store.pack_key`) is also its
place in the order in which a sequential search discovers nodes, so a level can be expanded in
any order, in chunks, on any number of workers: the driver numbers a level's new nodes by their
sorted parent entries, keeps for each fingerprint the first entry, and keeps for each finding
the least ``(cost, sequence)``, where a finding's sequence ``(parent, move, sub)`` places it
among the sequential search's steps. So the node numbering, the parent map, the findings and
their witnesses are those of the sequential search, byte for byte, whatever the number of
workers (engines: in-process here, Dask in :mod:`properties.search.dask_engine`).

Memory per distinct node: 8 bytes of fingerprint (:class:`~properties.search.store.FingerprintSet`)
and 8 of parent entry (:class:`~properties.search.store.BlockArray`, memory-mapped from a spill
file past :attr:`LocalEngine.PARENTS_LIMIT`: only read to rebuild witnesses and nodes); up to
``8 * n`` more for ``n`` members while the visited set merges its runs in place; ``8 * width``
more while in the frontier (:class:`~properties.search.store.Frontier`, spilled to disk past a
limit); plus whatever the system caches (its memo tables, bounded by the distinct components,
not nodes).
"""
from __future__ import annotations

import time
from array import array
from dataclasses import dataclass, field
from typing import Callable, Iterator, Optional

import numpy as np

from properties.search.store import (_MAX_PARENT, FINGERPRINT, KEY_MOVE_BITS, BlockArray,
                                  FingerprintSet, Frontier, collision_probability, first_new,
                                  pack_key, unpack_key)

__all__ = ["TransitionSystem", "EngineAdapter", "adapter_of", "Expansion", "Batch", "Search",
           "search", "Stop", "LocalEngine", "sequence_of_key"]


class Stop(Exception):
    """A bound other than the depth stopped the search; ``reason`` names it."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


class Expansion:
    """What expanding some nodes produced, in the sequential search's order (the driver's
    merge makes the order of several expansions irrelevant).

    Attributes:
        nodes: the successors, ``width`` ints each, one after another (``array('q')``:
            ``out.nodes.extend(node)``); keys: their parent entries (``array('q')``,
            :func:`~properties.search.store.pack_key`); halted: per successor, whether it is
            never expanded (a halted consumer).
        findings: ``[(key, cost, sequence, payload)]``: the driver keeps, per key, the least
            ``(cost, sequence)``; ``sequence`` is ``(parent id, move index, sub)`` with sub 0
            for what happens on the move before its leaves, ``2j + 1`` for leaf ``j``'s checks
            and ``2j + 2`` for leaf ``j``'s successor.
        moves: per expanded node (in the order given), how many moves it has (edges).
    """

    __slots__ = ("nodes", "keys", "halted", "findings", "moves")

    def __init__(self):
        self.nodes = array("q")
        self.keys = array("q")
        self.halted: list = []
        self.findings: list = []
        self.moves = array("q")


class TransitionSystem:
    """What a model says to the driver (see the module): an abstract base; each required
    method raises NotImplementedError here.

    Attributes:
        width: ints per node.

    Required: :meth:`root`, :meth:`expand`, :meth:`child`, :meth:`event`,
    :meth:`fingerprints`. Optional (defaults here): :meth:`value`, :meth:`tags`, :meth:`done`.
    Nothing here is about storage, routing or distribution: that is the engine side's
    (:class:`EngineAdapter`).
    """

    width: int = 1

    def root(self) -> tuple:
        """The initial node (a tuple of ``width`` ints)."""
        raise NotImplementedError

    def expand(self, ids: np.ndarray, nodes: np.ndarray, level: int, out: Expansion,
               known: dict) -> None:
        """Moves, steps and properties of ``nodes`` (int64, shape (m, width)) whose ids are
        ``ids``, at ``level`` (the depth of the nodes), written into ``out`` in order;
        ``known`` maps every finding key merged so far to its cost (for pruning only: a
        finding no better than a known one may be left out)."""
        raise NotImplementedError

    def child(self, node: tuple, move: int, leaf: int, level: int) -> tuple:
        """``(event, child node)``: one step re-executed: ``move`` (and ``leaf`` of its fork)
        from ``node``, a node at depth ``level`` (a system whose moves depend on the position,
        as the Z3 cross-check's realised events do, reads it; others ignore it). The driver
        rebuilds nodes and witnesses with it, so it must give what :meth:`expand` gave."""
        raise NotImplementedError

    def event(self, node: tuple, move: int, level: int):
        """The event of ``node``'s ``move`` (``node`` at depth ``level``): a move's label, also
        for a move whose step raised (a witness ends with it)."""
        raise NotImplementedError

    def fingerprints(self, nodes: np.ndarray) -> np.ndarray:
        """The 64-bit fingerprints (uint64) of ``nodes``: equal nodes, equal fingerprints, in
        every process."""
        raise NotImplementedError

    def value(self, node: tuple):
        """What the node stands for, for a report (e.g. a tuple of belief, state, ...).
        Default: the node itself."""
        return node

    def tags(self, nodes: np.ndarray) -> Optional[np.ndarray]:
        """A uint64 per node whose distinct values the driver counts (e.g. classes of
        readings). Default: None (no count)."""
        return None

    def done(self, findings: dict) -> bool:
        """Whether the search may stop at the end of this level, given the merged findings
        (``{key: (cost, sequence, payload)}``). Default: never."""
        return False


class EngineAdapter:
    """The engine side of a transition system: what the engines ask beyond the model's
    contract, with defaults that suit a system kept in one process. A system with caches to
    bound, or one to run on Dask workers, comes with a subclass (e.g.
    :class:`~properties.search.system_sweep.SweepAdapter`); any other is wrapped in this class
    by :func:`adapter_of`.

    Attributes:
        system: the :class:`TransitionSystem`.
    """

    def __init__(self, system: TransitionSystem):
        self.system = system

    def spec(self, workers: int) -> tuple:
        """``(class, arguments)``: ``class(*arguments)`` builds this adapter, with its system
        afresh, in a worker process, one of ``workers`` (an adapter may size a worker's memory
        budget by ``workers``; the sweep's gives each the whole memo budget). Raises
        NotImplementedError here: a bare system runs in one process only."""
        raise NotImplementedError(f"{type(self.system).__name__} runs in one process only: "
                                  "it has no adapter that can rebuild it elsewhere")

    def fresh_system(self) -> TransitionSystem:
        """The same system with empty caches (a report's nodes are rebuilt on one): built from
        :meth:`spec` for one worker."""
        cls, args = self.spec(1)
        return cls(*args).system

    def routing(self, nodes: np.ndarray) -> np.ndarray:
        """A uint64 per node that decides its partition among workers (equal nodes agree):
        by default the fingerprint; an adapter may route by a component the system's caches
        are keyed by, so that each worker computes those once."""
        return self.system.fingerprints(nodes)

    def export(self, nodes: np.ndarray) -> list:
        """``nodes`` as values another process can import (picklable, canonical). Raises
        NotImplementedError here (one process only)."""
        raise NotImplementedError(f"{type(self.system).__name__} nodes cannot leave the process")

    def import_(self, values: list) -> np.ndarray:
        """Nodes (int64, shape (len(values), width)) from :meth:`export`'s values. Raises
        NotImplementedError here (one process only)."""
        raise NotImplementedError(f"{type(self.system).__name__} nodes cannot leave the process")

    def make_room(self, pending: Callable[[], Iterator[np.ndarray]]) -> None:
        """Called by an engine before it expands each chunk: a system whose caches have
        outgrown their budget may drop what no pending node needs. ``pending()`` iterates over
        the nodes the engine knows it has still to expand in this process, as int64 arrays of
        shape (m, width), the chunk about to be expanded first: for :class:`LocalEngine` the
        rest of this level and the next level's nodes found so far; for a Dask expansion task
        the rest of its share of the level (its worker learns its share of the next level only
        when it starts on it). Caches are pure (an entry depends on its key alone), so what is
        dropped is only computed again: no output changes. Default: nothing."""

    def forget_findings(self) -> None:
        """Called by an engine before a task whose nodes are not those that follow this
        process's last ones in the sequential order (a Dask task, which may be a lost
        worker's rerun on another): drop whatever the system remembers of findings it made
        (a cost that prunes later ones, as first found wins ties), so that the task prunes by
        the ``known`` costs of earlier levels alone and reports what it would report anywhere.
        Default: nothing."""

    def storage(self) -> dict:
        """What the system's own caches hold, for :attr:`Search.storage` (wire names: e.g.
        ``{"memoEntries": n, "memoTrims": k}``). Default: nothing."""
        return {}

    def cache_size(self) -> Optional[int]:
        """Entries of the system's caches, for a Dask task's figures (None: not counted)."""
        return None


def adapter_of(system) -> EngineAdapter:
    """``system`` itself when it is an :class:`EngineAdapter`, else a :class:`TransitionSystem`
    wrapped in the default one."""
    return system if isinstance(system, EngineAdapter) else EngineAdapter(system)


def sequence_of_key(key: int) -> tuple:
    """The sequence (see :class:`Expansion`) at which the successor with parent entry ``key``
    is reached."""
    parent, move, leaf = unpack_key(key)
    return (parent, move, 2 * leaf + 2)


@dataclass
class Batch:
    """New nodes of a level, deduplicated, in the order of their parent entries, with what
    their expansion found: ``keys`` (int64, sorted), ``fps`` (uint64), ``halted`` (bool),
    ``tags`` (uint64 or None), ``findings`` (as in :class:`Expansion`), ``edges`` (moves
    examined), ``move_ids``/``move_counts`` (int64: each expanded node and its moves), and,
    with ``keep_edges``, ``edge_keys`` and ``edge_fps`` of every successor reached."""

    keys: np.ndarray
    fps: np.ndarray
    halted: np.ndarray
    tags: Optional[np.ndarray]
    findings: list
    edges: int
    move_ids: np.ndarray
    move_counts: np.ndarray
    edge_keys: Optional[np.ndarray] = None
    edge_fps: Optional[np.ndarray] = None


@dataclass
class Search:
    """A finished (or stopped) search.

    Attributes:
        parents: parent entry per node id (node 0, the root, has entry 0).
        findings: ``{key: (cost, sequence, payload)}`` in the order the sequential search
            first recorded each key.
        edges: moves examined; depth: deepest level fully expanded; stopped_by: ``"depth"``,
            ``"max-states"``, ``"timeout"`` or ``"interrupted"``; drained: the frontier ran
            empty; partial: some moves of the level after ``depth`` were merged (the search
            stopped inside it, not between two levels).
        tags: distinct :meth:`TransitionSystem.tags` seen; workers: processes that expanded.
        edge_list: with ``keep_edges``, every examined edge as int64 arrays ``(from, to,
            key)`` in the sequential order (``key``: the successor's parent entry, giving the
            move).
        storage: bytes per part and the fingerprint's description (see :meth:`storage_report`).
        seconds: wall time.
    """

    parents: BlockArray = field(default_factory=BlockArray)
    findings: dict = field(default_factory=dict)
    edges: int = 0
    depth: int = 0
    stopped_by: str = "depth"
    drained: bool = False
    partial: bool = False
    tags: int = 0
    workers: int = 1
    edge_list: Optional[tuple] = None
    storage: dict = field(default_factory=dict)
    seconds: float = 0.0

    @property
    def states(self) -> int:
        return len(self.parents)

    def raise_if_interrupted(self) -> None:
        """Raise KeyboardInterrupt when a Ctrl-C (or a SIGTERM, which unwinds as one) stopped
        the search: for a caller that has no partial answer to give, so that an interrupt is
        not taken for "nothing found"."""
        if self.stopped_by == "interrupted":
            raise KeyboardInterrupt

    def path(self, node: int) -> list[tuple[int, int]]:
        """``[(move, leaf)]`` from the root to ``node``."""
        labels = []
        while node:
            parent, move, leaf = unpack_key(self.parents[node])
            labels.append((move, leaf))
            node = parent
        labels.reverse()
        return labels


class _Merge:
    """The driver's bookkeeping over batches: parents, findings, bounds, progress."""

    def __init__(self, result: Search, started: float, max_states: Optional[int],
                 timeout: Optional[float], progress, keep_edges: bool,
                 arrays: Callable[[], BlockArray] = BlockArray):
        self.result, self.started = result, started
        self.max_states, self.timeout, self.progress = max_states, timeout, progress
        self.keep_edges = keep_edges
        self.first: dict = {}  # finding key -> [first sequence, cost, sequence, payload]
        self.known: dict = {}  # finding key -> cost (handed to the systems for pruning)
        self.tag_set = FingerprintSet()  # distinct tags, 8 bytes each
        # with keep_edges: every edge's key and target fingerprint, every node's fingerprint
        self.edge_keys = arrays() if keep_edges else None
        self.edge_fps = arrays() if keep_edges else None
        self.node_fps = arrays() if keep_edges else None
        self.level = 0
        self.partial = False  # a batch of the current level's expansions has been merged
        self.checkpoint = None  # a Checkpoint the new nodes are logged to, or None
        # (depth being expanded, its rows done) at the chunk under way: where a save made
        # before the chunk's batch is merged puts the search (set by the engine)
        self.position = (0, 0)
        self.starts: list = [0]  # the first node id of each depth
        self.prior_seconds = 0.0  # the search's time in the processes before a resume
        self.prior_cpu = 0.0  # and their CPU time
        self.cpu_started = time.process_time()

    def absorb(self, batch: Batch) -> int:
        """Add a batch of new nodes (in parent-entry order, after every earlier batch's);
        returns how many were kept. Raises :class:`Stop` when the batch holds a node past
        ``max_states`` (the batch is cut at the last node within it, and so are its findings and
        edges; a search that ends with exactly ``max_states`` nodes is not stopped by it; the
        timeout is :meth:`check_time`'s), after saving the checkpoint, if any, as it stood
        before the batch (what the cut batch logs after that save is cut back on resume)."""
        r = self.result
        keys, findings, edges = batch.keys, batch.findings, batch.edges
        if len(r.parents) + len(keys) > _MAX_PARENT or (
                len(batch.move_counts) and int(batch.move_counts.max()) >> KEY_MOVE_BITS):
            raise OverflowError("more nodes or moves than a parent entry holds "
                                "(pack_key: 2**35 nodes, 2**16 moves per node)")
        cut = None
        if self.max_states is not None and len(r.parents) + len(keys) > self.max_states:
            if self.checkpoint is not None:  # the search as it was before this chunk, which
                self.save(*self.position)  # a resume with a larger bound does again
            keep = self.max_states - len(r.parents)
            last = int(keys[keep - 1]) if keep > 0 else None
            cut = sequence_of_key(last) if last is not None else (-1, 0, 0)
            findings = [f for f in findings if f[2] <= cut]
            parent, move, _ = cut
            before = batch.move_ids < parent
            # the moves examined up to the one reaching the last node kept (none when no node
            # of the batch is kept, or it holds the root, which no move reaches)
            edges = int(batch.move_counts[before].sum()) + move + 1 \
                if keep > 0 and len(batch.move_ids) else 0
            keys = keys[:keep]
            batch = _cut(batch, keep, last)
        r.parents.extend(keys)
        if self.checkpoint is not None:
            self.checkpoint.log_nodes(keys, batch.fps[:len(keys)])
        r.edges += edges
        if len(batch.move_ids) and (len(keys) or edges):
            self.partial = True  # some of this level's moves are merged
        if batch.tags is not None:
            self.tag_set.add(np.unique(batch.tags))
        if self.keep_edges:
            self.node_fps.extend(batch.fps.view(np.int64))
            self.edge_keys.extend(batch.edge_keys)
            self.edge_fps.extend(batch.edge_fps.view(np.int64))
        for key, cost, seq, payload in sorted(findings, key=lambda f: f[2]):
            known = self.first.get(key)
            if known is None:
                self.first[key] = [seq, cost, seq, payload]
                self.known[key] = cost
            elif (cost, seq) < (known[1], known[2]):
                known[1:] = [cost, seq, payload]
                self.known[key] = cost
        if cut is not None:
            raise Stop("max-states")
        if self.progress is not None:
            self.progress(self.level, len(r.parents), r.edges, self.seconds())
        return len(keys)

    def check_time(self) -> None:
        """Raise :class:`Stop` (``"timeout"``) once the search has run past its timeout. The
        engines call it before they expand a chunk or a level, never after merging one, so a
        level whose last batch was merged counts as complete."""
        if self.timeout is not None and time.monotonic() - self.started > self.timeout:
            raise Stop("timeout")

    def seconds(self) -> float:
        """The search's wall time so far, with that of the processes before a resume."""
        return self.prior_seconds + time.monotonic() - self.started

    def cpu_seconds(self) -> float:
        """This process's CPU time in the search so far, with that of the processes before a
        resume (the search's own process; worker tasks are counted by the engine)."""
        return self.prior_cpu + time.process_time() - self.cpu_started

    def save(self, level: int, rows: int, finished: Optional[str] = None) -> None:
        """Write a checkpoint (:meth:`~properties.search.checkpoint.Checkpoint.save`): the
        nodes at depth ``level`` are being expanded and the first ``rows`` of them are done
        (``finished``: why the search ended, ``"depth"``, ``"drained"`` or ``"found"``, and
        ``level`` its depth)."""
        r, cp = self.result, self.checkpoint
        runs = self.tag_set.runs
        tags = np.concatenate(runs) if runs else np.zeros(0, np.uint64)
        cp.save({"level": level, "rows": rows, "starts": list(self.starts), "edges": r.edges,
                 "depth": r.depth, "drained": r.drained, "finished": finished,
                 "seconds": round(self.seconds(), 3),
                 "cpuSeconds": round(self.cpu_seconds(), 3),
                 "runs": (cp.meta or {}).get("runs", 1)}, self.first, tags)

    def finish(self) -> None:
        r = self.result
        r.findings = {k: (v[1], v[2], v[3]) for k, v in
                      sorted(self.first.items(), key=lambda kv: kv[1][0])}
        r.tags = len(self.tag_set)
        r.seconds = self.seconds()
        if self.keep_edges:
            r.edge_list = _edge_list(self.edge_keys, self.edge_fps, self.node_fps,
                                     len(r.parents))
            for array in (self.edge_keys, self.edge_fps, self.node_fps):
                array.close()


def _cut(batch: Batch, keep: int, last: Optional[int]) -> Batch:
    """The batch's first ``keep`` new nodes, and its edges up to the one reaching the last."""
    edge_keys, edge_fps = batch.edge_keys, batch.edge_fps
    if edge_keys is not None:
        n = int(np.searchsorted(edge_keys, last, side="right")) if last is not None else 0
        edge_keys, edge_fps = edge_keys[:n], edge_fps[:n]
    return Batch(batch.keys[:keep], batch.fps[:keep], batch.halted[:keep],
                 None if batch.tags is None else batch.tags[:keep], [], 0,
                 batch.move_ids, batch.move_counts, edge_keys, edge_fps)


def _edge_list(edge_keys: BlockArray, edge_fps: BlockArray, node_fps: BlockArray,
               states: int) -> tuple:
    """``(from, to, key)`` int64 arrays of every edge, in sequential order: an edge's target
    is the node with its fingerprint (the first one, for an edge into a visited node)."""
    keys, fps = edge_keys.to_numpy(), edge_fps.to_numpy().view(np.uint64)
    if len(keys) > 1 and not (keys[1:] >= keys[:-1]).all():  # the levels come in order
        order = np.argsort(keys, kind="stable")
        keys, fps = keys[order], fps[order]
    all_fps = node_fps.to_numpy()[:states].view(np.uint64)
    by_fp = np.argsort(all_fps, kind="stable")
    at = np.searchsorted(all_fps[by_fp], fps)
    at = np.minimum(at, max(len(by_fp) - 1, 0))
    known = all_fps[by_fp][at] == fps if len(by_fp) else np.zeros(len(fps), bool)
    targets = np.where(known, by_fp[at] if len(by_fp) else 0, -1)
    keep = targets >= 0  # edges into nodes a max-states cut dropped are not edges
    return (keys[keep] >> np.int64(28), targets[keep].astype(np.int64), keys[keep])


class LocalEngine:
    """Expands every level in this process, in chunks of ``chunk`` nodes, deduplicating each
    chunk's successors as it goes (so memory holds one chunk's successors at a time).

    Args:
        system: a :class:`TransitionSystem`, or its :class:`EngineAdapter` (a bare system gets
            the default one, :func:`adapter_of`).

    Attributes:
        adapter, system: the engine side and the model.
        frontier_limit: bytes of frontier kept in memory before spilling to disk.
        parents_limit: bytes of parent entries (and, with ``keep_edges``, of edge and node
            fingerprints) kept in memory before the full blocks go to a memory-mapped spill
            file (:class:`~properties.search.store.BlockArray`; None: :data:`PARENTS_LIMIT`).
        spill_dir: where the spill directory and files are made (None: the system's
            temporary directory).
    """

    workers = 1
    PARENTS_LIMIT = 256 << 20
    """Default of ``parents_limit``: 33 million parent entries (depth 6's 29.7 million fit)."""

    def __init__(self, system, chunk: int = 4096,
                 frontier_limit: int = 2 << 30, spill_dir: Optional[str] = None,
                 parents_limit: Optional[int] = None):
        self.adapter = adapter_of(system)
        self.system, self.chunk = self.adapter.system, chunk
        self.frontier_limit, self.spill_dir = frontier_limit, spill_dir
        self.parents_limit = self.PARENTS_LIMIT if parents_limit is None else parents_limit
        self.visited = FingerprintSet()
        self.frontier: Optional[Frontier] = None
        self.next: Optional[Frontier] = None
        self.spilled = 0
        self.frontier_peak = 0
        self.checkpoint = None  # set by search(): the Checkpoint the frontier ids go to
        self.resumed_rows = 0  # rows of the level under way done before a resume
        self._resumed_next: Optional[Frontier] = None  # its next level's so far, rebuilt
        self.hold_time = False  # a resumed search expands one chunk before its timeout counts

    def block_array(self) -> BlockArray:
        """An empty :class:`~properties.search.store.BlockArray` with this engine's limit and
        spill directory (for the parent entries and the kept edges)."""
        return BlockArray(self.parents_limit, self.spill_dir)

    def start(self, merge: _Merge) -> None:
        root = np.array([self.system.root()], dtype=np.int64)
        fps = self.system.fingerprints(root)
        self.visited.add(fps)
        tags = self.system.tags(root)
        merge.absorb(Batch(np.zeros(1, np.int64), fps, np.zeros(1, bool), tags, [], 0,
                           np.zeros(0, np.int64), np.zeros(0, np.int64),
                           np.zeros(0, np.int64), np.zeros(0, np.uint64)))
        self.frontier = Frontier(self.system.width, self.frontier_limit, self.spill_dir)
        self.frontier.add(np.zeros(1, np.int64), root)
        if self.checkpoint is not None:
            self.checkpoint.log_frontier(0, np.zeros(1, np.int64))

    def resume(self, merge: _Merge, checkpoint, level: int, rows: int, last: bool) -> None:
        """Take up a checkpointed search (:mod:`properties.search.checkpoint`): the visited set
        from the saved fingerprints, the frontier (depth ``level``'s expanded nodes past the
        first ``rows``) and, unless ``last``, the next level's nodes found so far, rebuilt by
        re-executing their event chains (:func:`~properties.search.checkpoint.rebuilt`) and added
        to the frontiers block by block (spilled past ``frontier_limit`` like any frontier).
        Raises CheckpointError when a rebuilt node differs from the saved one."""
        from properties.search.checkpoint import rebuilt
        self.visited = FingerprintSet.of(checkpoint.read("fingerprints.u64", np.uint64))
        current = checkpoint.read(f"frontier-{level}.i64", np.int64, rows)
        after = checkpoint.read(f"frontier-{level + 1}.i64", np.int64) if not last else \
            np.zeros(0, np.int64)
        targets, left = np.concatenate((current, after)), len(current)
        del current, after
        self.frontier = Frontier(self.system.width, self.frontier_limit, self.spill_dir)
        self._resumed_next = Frontier(self.system.width, self.frontier_limit, self.spill_dir)
        # the rebuilt nodes go into the two frontiers block by block (in id order: this
        # level's first), spilled past their limit, never held whole
        for ids, nodes in rebuilt(self.system, checkpoint.parents(), merge.starts, targets,
                                  checkpoint.fingerprints(), self.adapter.make_room):
            cut = min(left, len(ids))
            left -= cut
            self.frontier.add(ids[:cut], nodes[:cut])
            self._resumed_next.add(ids[cut:], nodes[cut:])
        self.resumed_rows, self.hold_time = rows, True

    def frontier_size(self) -> int:
        return len(self.frontier)

    def resumed_next(self) -> Frontier:
        """The next level's nodes that a resume inside a level rebuilt (an empty frontier
        if none), handed to the caller: this engine no longer holds them."""
        out = self._resumed_next or Frontier(self.system.width, self.frontier_limit,
                                             self.spill_dir)
        self._resumed_next = None
        return out

    def level(self, merge: _Merge, level: int, last: bool) -> None:
        """Expand the frontier (nodes at ``level``), absorbing each chunk's new nodes into
        ``merge``; ``last``: their successors will not be expanded (not kept in full)."""
        self.next = self._resumed_next or \
            Frontier(self.system.width, self.frontier_limit, self.spill_dir)
        self._resumed_next = None
        base = len(merge.result.parents)
        rows, self.resumed_rows = self.resumed_rows, 0
        try:
            for block, (ids, nodes) in enumerate(self.frontier):
                for lo in range(0, len(ids), self.chunk):
                    merge.position = (level, rows)
                    if self.checkpoint is not None and self.checkpoint.due():
                        merge.save(level, rows)
                    if not self.hold_time:
                        merge.check_time()
                    self.hold_time = False
                    self.adapter.make_room(lambda: self._pending(block, lo))
                    out = Expansion()
                    part_ids = np.asarray(ids[lo:lo + self.chunk])
                    self.system.expand(part_ids, np.asarray(nodes[lo:lo + self.chunk]), level,
                                       out, merge.known)
                    self._absorb(merge, part_ids, out, last, base, level)
                    rows += len(part_ids)
                    self.frontier_peak = max(self.frontier_peak,
                                             self.frontier.in_memory + self.next.in_memory)
                del ids, nodes
                self.frontier.release(block)  # expanded: its memory goes as the level goes on
        finally:
            self.spilled = max(self.spilled, self.frontier.spilled)
            self.frontier.close()
            self.frontier, self.next = self.next, None

    def _pending(self, block: int, lo: int) -> Iterator[np.ndarray]:
        """The nodes still to expand from row ``lo`` of frontier block ``block`` on, then
        the next level's so far (:meth:`EngineAdapter.make_room`)."""
        for i, (_, nodes) in enumerate(self.frontier.blocks_from(block)):
            yield np.asarray(nodes[lo:] if i == 0 else nodes)
        for _, nodes in self.next:
            yield np.asarray(nodes)

    def _absorb(self, merge: _Merge, ids: np.ndarray, out: Expansion, last: bool,
                base: int, level: int) -> None:
        system = self.system
        n = len(out.keys)
        keys = np.frombuffer(out.keys, dtype=np.int64) if n else np.zeros(0, np.int64)
        nodes = np.frombuffer(out.nodes, dtype=np.int64).reshape(n, system.width) if n else \
            np.zeros((0, system.width), np.int64)
        fps = system.fingerprints(nodes) if n else np.zeros(0, np.uint64)
        chosen = first_new(self.visited, fps)
        halted = np.array(out.halted, dtype=bool)[chosen] if n else np.zeros(0, bool)
        batch = Batch(keys[chosen], fps[chosen], halted,
                      system.tags(nodes[chosen]) if n else None, out.findings, len(out.moves)
                      and int(np.frombuffer(out.moves, dtype=np.int64).sum()),
                      ids, np.frombuffer(out.moves, dtype=np.int64) if len(out.moves)
                      else np.zeros(0, np.int64),
                      keys if merge.keep_edges else None, fps if merge.keep_edges else None)
        start = len(merge.result.parents)
        try:
            kept = merge.absorb(batch)
        finally:
            if not last or self.checkpoint is not None:
                take = chosen[~halted]
                kept_ids = start + np.flatnonzero(~halted)
                if merge.max_states is not None:
                    limit = merge.max_states
                    take, kept_ids = take[kept_ids < limit], kept_ids[kept_ids < limit]
                kept_ids = kept_ids.astype(np.int64)
                if self.checkpoint is not None:  # also at the last level: a deeper resume
                    self.checkpoint.log_frontier(level + 1, kept_ids)
                if not last:
                    self.next.add(kept_ids, nodes[take])

    def storage(self) -> dict:
        """Bytes per part (wire names): ``visitedBytes`` (the fingerprints now),
        ``visitedPeakBytes`` (with a merge's new run), ``frontierPeakBytes`` (the most held in
        memory by the frontier being expanded and the next one), ``frontierSpilledNodes``,
        and the system's own (:meth:`EngineAdapter.storage`)."""
        return {"visitedBytes": self.visited.nbytes,
                "visitedPeakBytes": self.visited.peak_nbytes,
                "frontierPeakBytes": self.frontier_peak, "frontierSpilledNodes": self.spilled,
                **self.adapter.storage()}

    def close(self) -> None:
        for f in (self.frontier, self.next):
            if f is not None:
                f.close()


def _closed(engine, result: Search) -> dict:
    """The engine's storage figures (:meth:`LocalEngine.storage`; ``{}`` if an interrupt
    stopped that), then the engine closed. A Ctrl-C (or SIGTERM) that lands while it closes
    is the search's interrupt too (``result.stopped_by`` becomes ``"interrupted"``), and the
    closing is taken up again, so that no cluster is left running and the search still
    reports what it merged; a third interrupt is let through."""
    storage: dict = {}
    try:
        storage = engine.storage()
    except KeyboardInterrupt:
        result.stopped_by = "interrupted"
    try:
        engine.close()
    except KeyboardInterrupt:
        result.stopped_by = "interrupted"
        engine.close()
    return storage


def _resume(system: TransitionSystem, engine: LocalEngine, merge: _Merge, checkpoint,
            depth: int) -> tuple:
    """Take a search up from ``checkpoint`` (see :func:`search`): the merge's parents,
    findings, tags, counts and level starts, then the engine's visited set and frontier
    (:meth:`LocalEngine.resume`). Returns ``(level, rows done in it, finished)``, finished
    ``"resumed"`` when the saved search had already ended (nothing is expanded or saved).
    Raises CheckpointError when the checkpoint holds more nodes than the search's
    ``max_states`` or a deeper search than ``depth``."""
    from properties.search.checkpoint import CheckpointError
    meta, r = checkpoint.meta, merge.result
    n = meta["logs"]["parents.i64"][0] // 8
    if merge.max_states is not None and n > merge.max_states:
        raise CheckpointError(f"checkpoint {checkpoint.directory}: it holds {n:,} states, more "
                              f"than the search's bound of {merge.max_states:,} (--max-states "
                              "0: no bound)")
    level, rows, finished = meta["level"], meta["rows"], meta["finished"]
    ended = finished in ("drained", "found") or (finished == "depth" and level == depth)
    if (finished == "depth" and level > depth) or (finished is None and level >= depth):
        at = level + (finished is None)
        raise CheckpointError(f"checkpoint {checkpoint.directory}: it holds a search to depth "
                              f"{at}, deeper than {depth}; give a depth of {at} or more")
    step = 1 << 20
    for lo in range(0, n, step):
        r.parents.extend(checkpoint.read("parents.i64", np.int64, lo, lo + step))
    for key, entry in checkpoint.findings().items():
        merge.first[key] = entry
        merge.known[key] = entry[1]
    merge.tag_set = FingerprintSet.of(checkpoint.tags())
    r.edges, r.depth = meta["edges"], meta["depth"]
    merge.starts = list(meta["starts"])
    merge.prior_seconds, merge.prior_cpu = meta["seconds"], meta["cpuSeconds"]
    merge.level = level
    if ended:
        r.drained = meta["drained"]
        checkpoint.ended = True
        return level, 0, "resumed"
    if checkpoint.read_only:
        raise CheckpointError(
            f"checkpoint {checkpoint.directory}: cannot be written ({checkpoint.read_only}) "
            f"and its search is not finished to depth {depth}: "
            + (f"it was finished to depth {level} (give that depth to report it again), or "
               if finished == "depth" else "")
            + "copy it where it can be written to take it further (a search stopped by a "
            "timeout or a state bound is reported again only by taking it up)")
    meta["runs"] = meta.get("runs", 1) + 1
    checkpoint.start_logs()
    merge.checkpoint = engine.checkpoint = checkpoint
    engine.resume(merge, checkpoint, level, rows, last=level + 1 == depth)
    if merge.progress is not None:
        merge.progress(level, len(r.parents), r.edges, merge.seconds())
    return level, rows, None


def search(system, depth: int, engine=None, max_states: Optional[int] = None,
           timeout: Optional[float] = None,
           progress: Optional[Callable[[int, int, int, float], None]] = None,
           stop_when_found: bool = False, keep_edges: bool = False,
           checkpoint=None) -> Search:
    """Breadth-first search of ``system`` to ``depth`` levels.

    Args:
        system: the :class:`TransitionSystem` (also used here to rebuild nodes and
            witnesses), or its :class:`EngineAdapter` (what the default engine asks of it).
        depth: levels expanded (the longest path, in moves).
        engine: how levels are expanded: None for :class:`LocalEngine` (in process), or an
            engine of :mod:`properties.search.dask_engine`.
        max_states, timeout (seconds): further bounds (:class:`Stop` reasons
            ``"max-states"``, ``"timeout"``); the search stops at exactly ``max_states`` nodes.
        progress: ``progress(level, states, edges, seconds)`` after each chunk and level.
        stop_when_found: stop at the end of the first level with a finding (or where
            :meth:`TransitionSystem.done` says so).
        keep_edges: keep every examined edge (:attr:`Search.edge_list`).
        checkpoint: a :class:`~properties.search.checkpoint.Checkpoint`: the search is saved to
            it as it goes (every ``checkpoint.every`` seconds, at a chunk boundary in process
            and between rounds on a cluster; when the timeout or ``max_states`` stops it; at
            its end), and taken up from it, by either engine, where it holds
            a saved search (the same output as a search never stopped; the timeout counts
            this process's time, the resume's too, and at least one chunk is expanded after
            a resume, so that every resume makes progress).

    Returns:
        A :class:`Search`; a Ctrl-C ends it with ``stopped_by="interrupted"`` and what was
        merged until then.

    Raises:
        ValueError: a checkpoint with ``keep_edges``.
        CheckpointError: the checkpoint cannot be read, resumed (it holds more nodes than
            ``max_states`` or a deeper search than ``depth``, or a rebuilt node differs) or
            written.
    """
    adapter = adapter_of(system)
    system = adapter.system
    engine = engine or LocalEngine(adapter)
    if checkpoint is not None and keep_edges:
        raise ValueError("a checkpoint needs a search that keeps no edges (no graph)")
    arrays = getattr(engine, "block_array", BlockArray)
    result = Search(parents=arrays())
    result.workers = engine.workers
    merge = _Merge(result, time.monotonic(), max_states, timeout, progress, keep_edges, arrays)
    level, finished, rows = 0, None, 0
    try:
        if checkpoint is not None and checkpoint.meta is not None:
            level, rows, finished = _resume(system, engine, merge, checkpoint, depth)
        else:
            if checkpoint is not None:
                checkpoint.start_logs()
                merge.checkpoint = engine.checkpoint = checkpoint
            engine.start(merge)
        while finished is None and level < depth and engine.frontier_size():
            merge.level, merge.partial = level, rows > 0
            if len(merge.starts) == level + 1:
                merge.starts.append(len(result.parents))
            engine.level(merge, level, last=level + 1 == depth)
            merge.partial, rows = False, 0
            level += 1
            result.depth = level
            result.drained = engine.frontier_size() == 0
            if progress is not None:
                progress(level, len(result.parents), result.edges, merge.seconds())
            if (stop_when_found and merge.first) or system.done(merge.first):
                finished = "found"
                break
        result.drained = result.drained or finished == "drained" or (
            finished is None and not engine.frontier_size())
        if checkpoint is not None and finished != "resumed":
            merge.save(level, 0, finished or ("depth" if level >= depth else "drained"))
    except Stop as stop:
        result.stopped_by = stop.reason
        if checkpoint is not None and stop.reason == "timeout":
            merge.save(*merge.position)
    except KeyboardInterrupt:
        result.stopped_by = "interrupted"
    finally:
        storage = _closed(engine, result)
        if checkpoint is not None:
            checkpoint.close()
    result.partial = merge.partial
    merge.finish()
    if checkpoint is not None:
        meta = checkpoint.meta or {}
        storage["checkpoint"] = {"directory": str(checkpoint.directory),
                                 "runs": meta.get("runs", 1),
                                 "peakBytes": meta.get("peakBytes", 0),
                                 "cpuSeconds": meta.get("cpuSeconds", 0.0),
                                 "ended": checkpoint.ended}
    n = len(result.parents)
    result.workers = storage.pop("workers", result.workers)
    storage.update(parentBytes=8 * n, parentSpilledBytes=result.parents.spilled_nbytes,
                   fingerprint=FINGERPRINT, fingerprintBits=64,
                   collisionProbability=collision_probability(n))
    result.storage = storage
    return result
