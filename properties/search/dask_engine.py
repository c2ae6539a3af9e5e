"""The breadth-first driver's distributed engine, on Dask distributed.

Why Dask rather than Ray: the driver's levels are a small static task graph (expand each
partition, exchange, deduplicate each partition), exactly what Dask's futures express, and
Dask moves the exchanged arrays worker to worker, schedules by data locality, recomputes lost
results from their lineage, and spills managed data to disk when a worker runs short of memory
(nothing of that is written here). A ``LocalCluster`` is a scheduler and N plain worker
processes on 127.0.0.1, light enough on a two-core machine (Ray's local start brings up a raylet,
a GCS server, an object store and a dashboard first), and the same code joins a cluster of many
machines by its scheduler's address (``dask scheduler`` / ``dask worker ADDRESS``).

The state space is partitioned by fingerprint: the visited set of partition ``d`` holds the
fingerprints ``f`` with ``f % P == d`` (P partitions, one per worker), so every node is
deduplicated by exactly one task. The frontier is partitioned by the system's routing key
(:meth:`~properties.search.bfs.EngineAdapter.routing`; for the all-readings sweep the consumer
state's fingerprint), so that each worker computes a state's decision trees and check outcomes
once (its memo tables live in the worker process, :data:`_SYSTEMS`, and are only a cache: a
task moved to another worker rebuilds them). A large level has :data:`PARTITIONS_PER_WORKER`
expansion partitions a worker (routing key modulo ``E``, ``E`` a multiple of P), each queued on
its home worker (partition ``e`` on worker ``e % P``, which holds the same consumer states at
every level) with its nodes as its priority (a worker runs its largest first) and taken by
whichever worker is idle when its own are done (Dask's work stealing), so that what is left
at the end of a level is small partitions that idle workers can share.
Per level:

1. ``expand`` (one task per expansion partition, on its worker): expand the nodes in id order,
   fingerprint the successors, keep the first of each fingerprint, route them by fingerprint;
2. ``absorb`` (one task per visited partition): the routed successors from every expand task,
   the first parent entry per fingerprint, those not yet visited (a new visited set, sharing
   the old one's sorted runs);
3. the driver gathers the new nodes' parent entries (8 bytes each) and the findings, numbers
   the nodes by sorted parent entry (the sequential search's order) and merges the findings
   (:class:`properties.search.bfs._Merge`); each new node's full value stays on its worker, sent to the
   worker of its routing partition for the next level.

So the output is byte-identical to the in-process search (:class:`properties.search.bfs.LocalEngine`)
for any number of workers. A level is expanded in rounds of ``round_nodes`` frontier nodes (by
id), each such a graph of tasks, merged as the in-process engine merges a chunk: the timeout
is checked and a checkpoint (:mod:`properties.search.checkpoint`) saved between rounds, the
driver logging each round's nodes and next frontier ids as it numbers them. The rounds of a
level are pipelined: the next is handed to the workers as soon as this one's results are in
the driver, which then merges this one while the workers expand the next
(:meth:`DaskEngine._level`). A resume rebuilds
the frontier in the driver's process and hands it over as at the first large level, with the
next level's nodes found before the stop. Levels whose frontier is smaller than
``local_below`` nodes (ten times that for the last level, which only one expansion follows)
are expanded in the driver's process (the workers would cost more than they save), and the
driver's state is handed to the workers when the frontier grows past it.
"""
from __future__ import annotations

import contextlib
import gc
import operator
import os
import time
import uuid
from typing import Optional

import numpy as np

from properties.search.bfs import Batch, EngineAdapter, Expansion, LocalEngine, Stop, adapter_of
from properties.search.store import FingerprintSet, first_new

__all__ = ["CONNECT_SECONDS", "ClusterError", "DaskEngine", "cluster_workers", "dask_setup",
           "local_cluster", "steady_allocator"]

_SYSTEMS: dict = {}
"""Per worker process: run token -> the transition system's engine adapter (with the system and
its memo tables)."""

_CHUNK = 4096


QUIET = {"distributed.worker.profile.enabled": False,
         "distributed.admin.tick.interval": "1s",
         "distributed.admin.system-monitor.interval": "5s",
         "distributed.worker.memory.monitor-interval": "1s",
         "distributed.scheduler.work-stealing": True}
"""Dask settings of the local cluster that cut what its processes spend beside the tasks:
no statistical profiler sampling each task's stack every 10 ms (about 12% of a task's CPU on
the sweep's deep Python stacks), the event-loop and system monitors ticking every second or
five instead of every 20 and 500 ms and the nannies' memory monitor every second. Work stealing
stays on (Dask's default, named here so that it is not lost): a worker that has run its own
expansion partitions takes queued ones from a busier worker (:data:`PARTITIONS_PER_WORKER`).
A cluster joined by address keeps its own settings (docs/exhaustive.md says how to give its
workers these)."""

PARTITIONS_PER_WORKER = 4
"""Expansion partitions per worker at a level of :data:`SPREAD_FROM` frontier nodes a worker or
more (one at a smaller level). A partition's cost is fixed when the frontier is routed, and
neither its nodes nor its consumer states predict it well (issue 43's profile: at depth 6 on 16
partitions the largest level-5 partition took 1.15 to 1.23 times their mean CPU); with several
a worker, run largest first and stolen by an idle worker, the last to finish waits for less, and
each task holds a quarter of the successors (benchmarks/README.md, "more partitions than
workers"). Each partition is one expand task and one exchange task per visited partition, so
more of them cost the scheduler more per round."""

SPREAD_FROM = 2048
"""Frontier nodes per worker from which a level is cut into :data:`PARTITIONS_PER_WORKER`
expansion partitions a worker (below it, one a worker: the level is short, and the tasks'
overhead would outweigh what balance gains)."""


CONNECT_SECONDS = 10.0
"""How long :func:`cluster_workers` and :class:`DaskEngine` wait for a scheduler to answer, and
how long a level waits on a cluster left without workers before it gives up
(:meth:`DaskEngine._gather`)."""


class ClusterError(RuntimeError):
    """The Dask cluster failed the search while a level ran on it: the scheduler was lost (the
    level's futures cancelled, the connection closed) or no worker was left for
    :data:`CONNECT_SECONDS`. The message names the cluster and the level."""


def cluster_workers(address: str) -> int:
    """The number of workers of the running Dask cluster whose scheduler is at ``address``
    (e.g. ``tcp://10.0.0.5:8786``), asked before a search, so that a wrong address fails at
    once whatever the search's size (levels below the parallel threshold stay in process and
    would never reach it). Raises OSError, with the address in its message, when no scheduler
    answers within :data:`CONNECT_SECONDS`, what answers is not a scheduler (refused within
    twice that: :func:`_connected`) or the cluster has no worker; ImportError when
    ``distributed`` is not installed."""
    with _connected(address) as client:
        count = len(client.scheduler_info()["workers"])
    if not count:
        raise OSError(f"the Dask cluster at {address} has no workers")
    return count


def _connected(address: str):
    """A Dask ``Client`` of the scheduler at ``address``. Raises OSError, naming the address:
    not an address Dask reads (no port, a port out of range, a scheme that is no Dask
    transport, such as the dashboard's ``http://``), no scheduler answered (a ``tcp://``
    connection refused, said at once: Dask itself would retry it until its timeout; the
    connection closed, or no answer within :data:`CONNECT_SECONDS`), or what answered is not a
    Dask scheduler (an HTTP server, a dashboard's port, any other protocol: Dask's handshake
    then waits for a reply that never comes, or fails on the reply's bytes; Dask's own error
    is quoted).

    The handshake runs in a daemon thread, waited for at most twice
    :data:`CONNECT_SECONDS`: Dask's own timeout covers the connection, not a peer that accepts
    it and never answers, and a thread still waiting then does not keep the process alive."""
    import threading
    import time

    from distributed import Client
    from distributed.comm.addressing import parse_address, parse_host_port
    from distributed.comm.registry import backends
    try:
        scheme, location = parse_address(address)
        host, port = parse_host_port(location)
        if not 0 < int(port) < 1 << 16:
            raise ValueError(f"port {port} out of range")
    except (ValueError, TypeError) as exc:
        raise OSError(f"{address} is not a Dask scheduler's address ({exc})") from None
    if scheme not in backends:  # http://, the dashboard's: not where a scheduler listens
        raise OSError(f"{address} is not a Dask scheduler's address (Dask has no '{scheme}' "
                      f"transport; a scheduler's address reads tcp://HOST:PORT, 8786 by "
                      "default, not the dashboard's http:// one)")
    if scheme == "tcp":  # Dask retries a refused connection until its timeout: ask once first
        import socket
        try:
            socket.create_connection((host, int(port)), timeout=CONNECT_SECONDS).close()
        except ConnectionRefusedError:
            raise OSError(f"no Dask scheduler answered at {address} (the connection was "
                          "refused: nothing listens there)") from None
        except OSError:
            pass  # unreachable, unknown host, silent: Dask's own attempt says which, in time
    box: dict = {}

    def connect():
        try:
            box["client"] = Client(address, timeout=f"{CONNECT_SECONDS}s")
        except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
            box["error"] = exc
    started = time.monotonic()
    thread = threading.Thread(target=connect, name="activity-check dask connect", daemon=True)
    thread.start()
    thread.join(2 * CONNECT_SECONDS)
    if thread.is_alive():
        raise OSError(f"what answered at {address} did not complete a Dask handshake within "
                      f"{2 * CONNECT_SECONDS:g} s: is a Dask scheduler listening there?")
    error = box.get("error")
    from distributed.comm.core import CommClosedError
    if scheme != "tcp" and isinstance(error, Exception) and type(error) is not OSError and \
            not isinstance(error, (TimeoutError, ConnectionError, CommClosedError)):
        # another transport's own setup or handshake failed (tls:// without Dask's TLS
        # settings, a certificate missing or not one, ucx:// without its package), not the
        # connection (Dask says a refused one as a plain OSError once it gives up)
        raise OSError(f"could not connect to {address}: Dask's {scheme}:// transport could "
                      f"not be set up ({type(error).__name__}: {error}); "
                      + ("tls:// takes its certificates from Dask's distributed.comm.tls "
                         "configuration" if scheme == "tls" else
                         f"{scheme}:// needs what Dask's documentation names for it")
                      + "; or give the scheduler's tcp:// address") from None
    if isinstance(error, (OSError, TimeoutError)):  # refused, closed, or silent
        waited = time.monotonic() - started >= CONNECT_SECONDS * 0.9
        raise OSError(f"no Dask scheduler answered at {address}"
                      + (f" within {CONNECT_SECONDS:g} s" if waited else
                         " (the connection was refused or closed)")) from None
    if isinstance(error, Exception):
        raise OSError(f"what answered at {address} is not a Dask scheduler, or Dask could not "
                      f"speak to it ({type(error).__name__}: {error})") from None
    if error is not None:
        raise error
    return box["client"]


def local_cluster(workers: int):
    """A Dask ``LocalCluster`` of ``workers`` single-threaded worker processes on 127.0.0.1,
    its HTTP server on a free port of 127.0.0.1 too (Dask's default listens on every
    interface), with :data:`QUIET`'s settings (the caller closes it).

    Each worker runs this module's :func:`dask_setup` as it starts (Dask's ``preload``), which
    makes it ignore SIGINT: a terminal's Ctrl-C reaches the whole process group, and the
    workers would die of it mid-task, each printing a traceback, while the command stops them
    itself as it closes the cluster (a Ctrl-C in the second or so a worker takes to start
    still reaches it). Dask's own log lines are kept to the critical ones (a worker that loses
    its scheduler while the command closes the cluster after an interrupt logs errors; a
    task's failure still reaches the command as an exception)."""
    import logging

    import dask
    from distributed import LocalCluster
    with dask.config.set(QUIET):
        return LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                            host="127.0.0.1", dashboard_address="127.0.0.1:0",
                            silence_logs=logging.CRITICAL, preload=[__name__])


@contextlib.contextmanager
def _interrupts_held():
    """SIGINT held back in this thread (blocked, so kept pending) while a local cluster starts: a
    Ctrl-C in the second or two it takes would stop the cluster half-started, and Dask's
    clean-up at exit then fails on it with a traceback (``AssertionError: Status.init``); held,
    the interrupt takes effect once the cluster is up, which the command then closes as after
    any interrupt. The worker processes are not covered: a spawned process starts with an empty
    mask, and one that the Ctrl-C reaches while it imports (before :func:`dask_setup` runs)
    still prints its own traceback. In the main thread only (elsewhere SIGINT is not Python's
    to raise)."""
    import signal
    import threading
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)


def dask_setup(worker) -> None:
    """Dask's preload hook, run in each worker process of :func:`local_cluster` as it starts
    (also for a cluster's workers started with ``dask worker --preload properties.search.dask_engine``):
    SIGINT is ignored there, so that only the command stops its workers, the allocator is set as
    :func:`steady_allocator` says, and Dask is told a visited set's real size
    (:attr:`FingerprintSet.nbytes`; its default guess is some 56 bytes, whatever the set holds,
    and work stealing would then move an absorb task and its set of millions of fingerprints
    as if it cost nothing to move)."""
    import signal
    import threading

    from dask.sizeof import sizeof
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    steady_allocator()
    sizeof.register(FingerprintSet)(_nbytes)


MMAP_THRESHOLD = 32 << 20
"""Bytes: a block of memory smaller than this comes from the C heap, not a mapping of its own
(glibc's ``M_MMAP_THRESHOLD``; 32 MiB is the largest it takes on a 64-bit machine)."""

TRIM_THRESHOLD = 64 << 20
"""Bytes of free memory at the top of the C heap past which glibc gives it back to the
system (``M_TRIM_THRESHOLD``)."""


def steady_allocator() -> bool:
    """Set glibc's allocator of this process to keep the memory it reuses: blocks under
    :data:`MMAP_THRESHOLD` from the heap, the heap's top given back past
    :data:`TRIM_THRESHOLD` (glibc's own pairing, twice the mmap threshold). Returns whether
    both settings were taken (False where the C library has no ``mallopt`` or refuses them, as
    musl does; nothing changes then). Called by :func:`dask_setup` as each worker starts; the
    search's output does not depend on it.

    Why: a Dask nanny starts its workers with ``MALLOC_TRIM_THRESHOLD_=65536`` (Dask's
    ``distributed.nanny.pre-spawn-environ``), so that a long-lived worker hands freed memory
    back. Any such setting also stops glibc from raising its mmap threshold as large blocks are
    freed, so every numpy array of 128 KiB or more that the block expansion makes for a chunk
    is mapped afresh, its pages faulted and zeroed again, then unmapped. Measured at depth 5
    (benchmarks/README.md, issue 43): on two workers 2.7 million page faults become 0.5
    million and the process tree's CPU falls by some 9% (medians 40.5 and 36.5 s), its peak
    memory rising from 1.71 to 1.97 GiB (as without Dask's setting: glibc's default keeps the
    same blocks); over 16 partitions 2.9 million faults become 0.9 million, CPU 6% less, memory
    9% more."""
    import ctypes
    try:
        mallopt = ctypes.CDLL(None).mallopt  # this process's C library
    except (OSError, AttributeError, TypeError):
        return False
    mallopt.argtypes, mallopt.restype = (ctypes.c_int, ctypes.c_int), ctypes.c_int
    m_trim_threshold, m_mmap_threshold = -1, -3  # glibc's <malloc.h>
    # the trim threshold only once the mmap threshold is taken: a C library that refuses the
    # first (a 32-bit glibc caps it at 512 KiB) is left as it was
    return bool(mallopt(m_mmap_threshold, MMAP_THRESHOLD)) and \
        bool(mallopt(m_trim_threshold, TRIM_THRESHOLD))


def _adapter(token: str, spec: tuple) -> EngineAdapter:
    """The worker's adapter (and system) for run ``token``, built from ``spec``, ``(class,
    arguments)`` (:meth:`~properties.search.bfs.EngineAdapter.spec`), on first use."""
    adapter = _SYSTEMS.get(token)
    if adapter is None:
        _SYSTEMS.clear()  # one run at a time per worker: an old run's tables go
        cls, config = spec
        adapter = _SYSTEMS[token] = cls(*config)
    return adapter


def _forget(token: str) -> None:
    """Drop run ``token``'s system from this worker."""
    _SYSTEMS.pop(token, None)


class _Paused:
    """The cyclic collector paused while a task runs; what the task leaves is frozen after it
    (the memo tables are acyclic and long-lived: no full collection should walk them)."""

    def __enter__(self):
        self.was = gc.isenabled()
        gc.disable()

    def __exit__(self, *exc):
        gc.freeze()
        if self.was:
            gc.enable()


def _expand_part(token: str, spec: tuple, pieces: list, level: int, known: dict, parts: int,
                 last: bool, keep_edges: bool) -> dict:
    """Expand one frontier partition. ``pieces``: ``(ids, values)`` from each absorb task (or
    the driver). Returns ``{"route": [per visited partition: (fps, keys, halted, tags, routes,
    values or None)], "findings", "move_ids", "move_counts", "edges": (keys, fps) or None,
    "cpu": (process CPU s, thread CPU s), "nodes", "cache", "worker": the Dask worker's address
    (None outside one), "memo": {"memoTrims", "memoEvictions": this task's}}``.

    The successors are deduplicated chunk by chunk as they are made (:class:`_FirstSeen`), so
    that the task holds each distinct successor once (33 bytes of it, and its row of the
    system's numbers while a further level follows), not every edge: at depth 6 a level-5
    task makes some 50 million edges."""
    cpu, own = time.process_time(), time.thread_time()
    with _Paused():
        adapter = _adapter(token, spec)
        system = adapter.system
        # this worker may have expanded another partition of this level (a lost worker's,
        # rerun here): what it found there must not prune this one's first-found ties
        adapter.forget_findings()
        ids = np.concatenate([p[0] for p in pieces]) if pieces else np.zeros(0, np.int64)
        values = [v for p in pieces for v in p[1]]
        order = np.argsort(ids, kind="stable")
        ids = ids[order]
        nodes = adapter.import_([values[i] for i in order.tolist()])
        del values
        findings, move_counts, edge_keys, edge_fps = [], [], [], []
        kept = _FirstSeen(adapter, rows=not last)
        memo = adapter.storage()  # the worker's counters before this task (cumulative)
        for lo in range(0, len(ids), _CHUNK):
            out = Expansion()
            # what this task has still to expand (the next level's nodes are not known here)
            adapter.make_room(lambda: iter((nodes[lo:],)))
            system.expand(ids[lo:lo + _CHUNK], nodes[lo:lo + _CHUNK], level, out, known)
            findings.extend(out.findings)
            move_counts.append(np.frombuffer(out.moves, dtype=np.int64).copy()
                              if len(out.moves) else np.zeros(0, np.int64))
            if len(out.keys):
                keys = np.frombuffer(out.keys, dtype=np.int64)
                succ = np.frombuffer(out.nodes, dtype=np.int64).reshape(-1, system.width)
                fps = system.fingerprints(succ)
                if keep_edges:
                    edge_keys.append(keys.copy())
                    edge_fps.append(fps)
                kept.add(keys, fps, np.array(out.halted, dtype=bool), succ)
        edges = (_joined(edge_keys, np.int64), _joined(edge_fps, np.uint64)) if keep_edges \
            else None
        keys, fps, halted, tags, routes, succ = kept.arrays()
        owner = (fps % np.uint64(parts)).astype(np.int64)
        route = []
        for d in range(parts):
            mine = np.flatnonzero(owner == d)
            route.append((fps[mine], keys[mine], halted[mine],
                          None if tags is None else tags[mine], routes[mine],
                          None if last else adapter.export(succ[mine])))
        return {"route": route, "findings": findings, "move_ids": ids,
                "move_counts": np.concatenate(move_counts) if move_counts
                else np.zeros(0, np.int64), "edges": edges,
                "cpu": (time.process_time() - cpu, time.thread_time() - own), "nodes": len(ids),
                "cache": adapter.cache_size(), "worker": _worker_address(),
                # what this task evicted and emptied of the worker's memo tables
                "memo": {k: v - memo.get(k, 0) for k, v in adapter.storage().items()
                         if k in ("memoTrims", "memoEvictions")}}


class _FirstSeen:
    """An expand task's successors, the first of each fingerprint in the order they are added
    (the nodes are expanded in id order, so that is the least parent entry): per successor
    its parent entry, fingerprint, halted flag, tag and routing key, and (``rows``) its row of
    the system's numbers, which the next level's import needs."""

    def __init__(self, adapter: EngineAdapter, rows: bool):
        self.adapter, self.system, self.rows = adapter, adapter.system, rows
        self.seen = FingerprintSet()
        self.parts: list = []

    def add(self, keys: np.ndarray, fps: np.ndarray, halted: np.ndarray,
            succ: np.ndarray) -> None:
        """One chunk's successors (keys ascending, after every earlier chunk's)."""
        chosen = first_new(self.seen, fps)
        if not len(chosen):
            return
        rows = succ[chosen]
        tags = self.system.tags(rows)
        self.parts.append((keys[chosen], fps[chosen], halted[chosen], tags,
                           self.adapter.routing(rows), rows if self.rows else None))

    def arrays(self) -> tuple:
        """``(keys, fps, halted, tags or None, routes, rows or None)``, in the order added."""
        keys, fps, halted, tags, routes, rows = zip(*self.parts) if self.parts else ((),) * 6
        return (_joined(keys, np.int64), _joined(fps, np.uint64), _joined(halted, bool),
                None if not tags or any(t is None for t in tags) else np.concatenate(tags),
                _joined(routes, np.uint64),
                None if not self.rows else np.concatenate(rows) if rows
                else np.zeros((0, self.system.width), np.int64))


def _joined(arrays: list, dtype) -> np.ndarray:
    """``arrays`` end to end (an empty array of ``dtype`` for none)."""
    return np.concatenate(arrays) if arrays else np.zeros(0, dtype)


def _absorb_part(visited: FingerprintSet, routed: list, parts: int) -> tuple:
    """Deduplicate one visited partition's successors (``routed``: one route from each expand
    task). Returns ``(visited after, new)``, ``new`` = ``(keys, fps, halted, tags, routes,
    values or None)`` sorted by key."""
    with _Paused():
        keys = np.concatenate([r[1] for r in routed])
        order = np.argsort(keys, kind="stable")
        keys = keys[order]
        fps = np.concatenate([r[0] for r in routed])[order]
        halted = np.concatenate([r[2] for r in routed])[order]
        routes = np.concatenate([r[4] for r in routed])[order]
        # (a route without nodes, such as a round's empty partition's, has no tags to give)
        full = [r for r in routed if len(r[0])]
        tagged = [r[3] for r in full if r[3] is not None]
        tags = np.concatenate(tagged)[order] if tagged and len(tagged) == len(full) else None
        valued = routed[0][5] is not None
        values = [v for r in routed for v in r[5]] if valued else None
        _, first = np.unique(fps, return_index=True)
        visited, new = visited.with_added(fps[first])
        chosen = np.sort(first[new])
        out_values = [values[i] for i in order[chosen].tolist()] if valued else None
        return visited, (keys[chosen], fps[chosen], halted[chosen],
                         None if tags is None else tags[chosen], routes[chosen], out_values)


def _summary(absorbed: tuple) -> tuple:
    """What the driver needs of an absorb task's new nodes: ``(keys, fps, halted, tags)``."""
    keys, fps, halted, tags, _, _ = absorbed[1]
    return keys, fps, halted, tags


def _piece(absorbed: tuple, ids: np.ndarray, home: int, parts: int) -> tuple:
    """The next frontier's nodes of absorb task ``absorbed`` whose home is worker ``home`` of
    ``parts``: ``(ids, values, routes)`` of the new nodes not halted whose routing key modulo
    ``parts`` is ``home`` (``ids``: the driver's numbers of all the new nodes, in the task's
    order). The next level cuts them into its expansion partitions (:func:`_cut_pieces`)."""
    _, _, halted, _, routes, values = absorbed[1]
    mine = np.flatnonzero(~halted & ((routes % np.uint64(parts)).astype(np.int64) == home))
    return ids[mine], [values[i] for i in mine.tolist()], routes[mine]


def _findings(expanded: dict) -> tuple:
    """What the driver needs of an expand task: ``(findings, move ids, move counts, edges,
    (cpu, nodes, cache, memo), worker)`` (:func:`_expand_part`'s entries)."""
    return (expanded["findings"], expanded["move_ids"], expanded["move_counts"],
            expanded["edges"], (expanded["cpu"], expanded["nodes"], expanded["cache"],
                                expanded["memo"]), expanded["worker"])


def _worker_address() -> Optional[str]:
    """The address of the Dask worker running this task (None outside one)."""
    try:
        from distributed import get_worker
        return get_worker().address
    except (ImportError, ValueError):
        return None


class DaskEngine:
    """Expands levels on a Dask cluster (see the module): one started here (``workers`` local
    processes, stopped by :meth:`close`) or the running one at ``address``. ``local_below``:
    frontier nodes below which a level stays in this process; ``round_nodes``: frontier nodes a
    round; ``spread``: expansion partitions a worker at a level of ``spread_from`` frontier
    nodes a worker or more (:data:`PARTITIONS_PER_WORKER`, :data:`SPREAD_FROM`).

    Raises ValueError (here) when ``spread`` is not a whole number of at least 1, ImportError
    (at the first distributed level) when ``distributed`` is not installed, and OSError when
    the cluster cannot be reached."""

    def __init__(self, system, workers: int = 2, address: Optional[str] = None,
                 local_below: int = 20_000, frontier_limit: int = 2 << 30,
                 spill_dir: Optional[str] = None, round_nodes: int = 1 << 20,
                 spread: int = PARTITIONS_PER_WORKER, spread_from: int = SPREAD_FROM):
        if not isinstance(spread, int) or spread < 1:
            # (none would leave a level without expand tasks, its absorb tasks failing)
            raise ValueError(f"spread: expansion partitions a worker, a whole number of at "
                             f"least 1, not {spread!r}")
        self.adapter = adapter_of(system)
        self.system, self.address, self.local_below = self.adapter.system, address, local_below
        self.workers = workers
        self.local = LocalEngine(self.adapter, frontier_limit=frontier_limit,
                                 spill_dir=spill_dir)
        self.client = self.cluster = None
        self.names: list = []
        self.token = uuid.uuid4().hex
        self.spec = self.adapter.spec(workers)
        self.on_cluster = False
        self.visited: list = []  # per visited partition: a future of its FingerprintSet
        # per worker (home): futures of (ids, values, routing keys) pieces of the frontier
        # whose routing key modulo the workers is the worker's index
        self.pieces: list = []
        self.frontier_n = 0
        self.round_nodes = round_nodes
        # expansion partitions a worker at a level of spread_from frontier nodes a worker
        self.spread, self.spread_from = spread, spread_from
        self.bounds: list = []  # the first frontier id of each round of the level
        # the next level's pieces, size and round bounds before the level is expanded: empty,
        # or a resume's nodes of it found before the stop
        self.carry: list = []
        self.carry_n = 0
        self.carry_bounds: list = []
        self.settled = True  # no level under way on the cluster: it may be asked for figures
        # (level, [((worker process CPU s, task thread CPU s), nodes, cache entries,
        # {"memoTrims", "memoEvictions": this task's}, rounds stolen) per expand task])
        self.task_log: list = []

    def block_array(self):
        """The driver's arrays (parent entries, kept edges): :meth:`LocalEngine.block_array`."""
        return self.local.block_array()

    @property
    def checkpoint(self):
        """The :class:`~properties.search.checkpoint.Checkpoint` the search is saved to, or None
        (set by :func:`properties.search.bfs.search`; the in-process engine's, which logs the levels
        expanded in this process)."""
        return self.local.checkpoint

    @checkpoint.setter
    def checkpoint(self, checkpoint) -> None:
        self.local.checkpoint = checkpoint

    def start(self, merge) -> None:
        self.local.start(merge)

    def resume(self, merge, checkpoint, level: int, rows: int, last: bool) -> None:
        """Take up a checkpointed search in this process (:meth:`LocalEngine.resume`: the
        visited set and the frontier rebuilt here), handed to the workers at the first level
        large enough, as a search never stopped is; a checkpoint saved inside a level (by
        either engine) hands over what is left of it, and the next level's nodes found
        before the stop go with the new ones."""
        self.local.resume(merge, checkpoint, level, rows, last)

    def frontier_size(self) -> int:
        return self.frontier_n if self.on_cluster else self.local.frontier_size()

    def level(self, merge, level: int, last: bool) -> None:
        # the cluster is started for a frontier of local_below nodes when a further level
        # follows (the workers then warm their tables on it), for the last level only when it
        # is ten times larger (one level's expansion barely pays for starting the workers)
        needed = self.local_below * (10 if last else 1)
        if not self.on_cluster and self.local.frontier_size() < needed:
            self.local.level(merge, level, last)
            return
        if not self.on_cluster:
            self._hand_over()
        self._level(merge, level, last)

    def _connect(self) -> None:
        from distributed import Client
        _mute_interrupted_gathers()
        _mute_client_logs()
        if self.address:
            self.client = _connected(self.address)
        else:
            with _interrupts_held():
                self.cluster = local_cluster(self.workers)
                self.client = Client(self.cluster)
        self.names = sorted(self.client.scheduler_info()["workers"])
        self.workers = len(self.names)
        self.spec = self.adapter.spec(max(self.workers, 1))
        if not self.names:
            raise OSError(f"the Dask cluster at {self.address} has no workers")

    def _hand_over(self) -> None:
        """Move the in-process search's visited set and frontier to the workers."""
        self._connect()
        parts, client = len(self.names), self.client
        runs = self.local.visited.runs
        fps = np.concatenate(runs) if runs else np.zeros(0, np.uint64)
        owner = (fps % np.uint64(parts)).astype(np.int64)
        # the data goes in the task itself, so that Dask can rebuild it if a worker is lost
        self.visited = [client.submit(_visited_of, fps[owner == d], workers=[self.names[d]],
                                      allow_other_workers=True, pure=False)
                        for d in range(parts)]
        ids, values, routes = self._exported(self.local.frontier)
        self.pieces = self._placed(ids, values, routes)
        self.frontier_n, self.bounds = len(ids), _round_starts(ids, 0, self.round_nodes)
        # a resume inside a level: the next level's nodes found before the stop go first into
        # the next level's pieces, which the level's rounds add to
        ids, values, routes = self._exported(self.local.resumed_next())
        self.carry = self._placed(ids, values, routes)
        self.carry_n, self.carry_bounds = len(ids), _round_starts(ids, 0, self.round_nodes)
        self.on_cluster = True

    def _exported(self, frontier) -> tuple:
        """The nodes of ``frontier`` (a :class:`~properties.search.store.Frontier`, closed here) as
        ``(ids, values, routes)``: ids ascending, the system's exported values, and each node's
        routing key (uint64)."""
        adapter = self.adapter
        ids_all, values, route_all = [], [], []
        for ids, nodes in frontier:
            nodes = np.asarray(nodes)
            ids_all.append(np.asarray(ids))
            values.extend(adapter.export(nodes))
            route_all.append(adapter.routing(nodes))
        frontier.close()
        ids = np.concatenate(ids_all) if ids_all else np.zeros(0, np.int64)
        routes = np.concatenate(route_all) if route_all else np.zeros(0, np.uint64)
        return ids, values, routes

    def _placed(self, ids: np.ndarray, values: list, routes: np.ndarray) -> list:
        """Per worker ``j``, a list of one future of ``(ids, values, routes)`` of the nodes
        whose routing key modulo the workers is ``j``, placed on it (the data goes in the task
        itself, so that Dask can rebuild it if a worker is lost)."""
        out, part = [], (routes % np.uint64(len(self.names))).astype(np.int64)
        for j in range(len(self.names)):
            mine = np.flatnonzero(part == j)
            piece = (ids[mine], [values[i] for i in mine.tolist()], routes[mine])
            out.append([self.client.submit(_identity, piece, workers=[self.names[j]],
                                           allow_other_workers=True, pure=False)])
        return out

    def _level(self, merge, level: int, last: bool) -> None:
        """Expand the frontier on the cluster in rounds of :attr:`round_nodes` frontier nodes
        (by id: :attr:`bounds`), each a graph of tasks over every partition, merged as the
        in-process engine merges a chunk: the timeout is checked before each round is handed
        over (the first round after a resume runs whatever the time, so that every resume makes
        progress; a round whose results are in is merged before the search stops) and the
        checkpoint saved when due between two rounds.

        The rounds are pipelined: once a round's results are in the driver, the next round is
        handed to the workers before the driver merges this one (the merge of a round of a
        million frontier nodes, some 30 million new nodes at depth 6 or 7, takes seconds in
        which the workers would otherwise wait). The next round's tasks then prune with the
        split costs known before that merge (:attr:`~properties.search.bfs._Merge.known`):
        they may report findings that the merge drops, never fewer, so the output is the same.
        A round handed over when the merge stops the search (``max_states``) is cancelled."""
        client, names, parts = self.client, self.names, len(self.names)
        where = [dict(workers=[n], allow_other_workers=True, pure=False) for n in names]
        bounds = self.bounds
        spread = self.spread if self.frontier_n >= self.spread_from * parts else 1
        cut = spread * parts  # expansion partitions: e's home is worker e % parts
        # each expansion partition's nodes taken from its home worker's pieces, joined and cut
        # once into the rounds' parts, there
        cuts = [client.submit(_cut_pieces, self.pieces[e % parts], bounds, e, cut,
                              **where[e % parts]) for e in range(cut)]
        # each partition's nodes in each round, for the tasks' priorities: a worker runs its
        # largest partitions first, so that what is left to steal at the end is small
        sizes = None
        if cut > parts:
            # the cluster is not settled while they are awaited: a search stopped in the wait
            # (every worker gone, the scheduler lost, an interrupt) must not ask it for figures
            settled, self.settled = self.settled, False
            sizes = self._gather([client.submit(_round_sizes, c, **where[e % parts])
                                  for e, c in enumerate(cuts)], level)
            self.settled = settled
        size, rows = self.frontier_n, self.local.resumed_rows
        self.local.resumed_rows = 0
        self.pieces, self.frontier_n, self.bounds = self.carry, self.carry_n, self.carry_bounds
        self.carry, self.carry_n, self.carry_bounds = [[] for _ in range(parts)], 0, []

        def submit(r: int) -> dict:
            first = [0] * cut if sizes is None else [s[r] for s in sizes]
            pieces = [[client.submit(operator.getitem, cuts[e], r, priority=first[e],
                                     **where[e % parts])] for e in range(cut)]
            return self._submit(merge, level, last, pieces, where, first)

        merge.position = (level, rows)
        if self.checkpoint is not None and self.checkpoint.due():
            merge.save(level, rows)
        if not self.local.hold_time:
            merge.check_time()
        self.local.hold_time = False
        handle = submit(0) if bounds else None
        for r in range(len(bounds)):
            gathered = self._collect(handle, level)
            following, stop = None, None
            if r + 1 < len(bounds):
                try:
                    merge.check_time()
                except Stop as stopped:  # this round is merged first, then the search stops
                    stop = stopped
                else:
                    following = submit(r + 1)
            merge.position = (level, rows)
            try:
                self._finish(merge, level, last, handle, gathered, first=r == 0,
                             following=following)
            except BaseException:
                if following is not None:
                    self._cancel(following, handle)
                raise
            rows += min(self.round_nodes, size - r * self.round_nodes)
            merge.position = (level, rows)
            if stop is not None:
                raise stop
            if following is not None and self.checkpoint is not None and \
                    self.checkpoint.due():
                merge.save(level, rows)
            handle = following

    def _submit(self, merge, level: int, last: bool, pieces: list, where: list,
                first: list) -> dict:
        """Hand one round of a level to the cluster: ``pieces``, per expansion partition ``e``
        (queued on worker ``e`` modulo the workers, stealable), futures of ``(ids, values)`` of the
        round's frontier nodes; ``first``, per partition, its expand task's Dask priority (the
        higher first among a worker's ready tasks). Returns the round's futures
        (``"summaries"``, ``"reports"``: what the driver gathers; ``"absorbed"``; ``"visited
        after"``, the visited sets after the round, what :meth:`_cancel` puts back when the
        round after it is withdrawn) and ``"where"``, the tasks' placement. The visited sets
        become the round's, so that a round handed over after it deduplicates against it."""
        client, parts = self.client, len(self.names)
        self.settled = False  # until every task handed over has answered
        known = dict(merge.known)
        expanded = [client.submit(_expand_part, self.token, self.spec, piece, level, known,
                                  parts, last, merge.keep_edges, priority=first[e],
                                  **where[e % parts])
                    for e, piece in enumerate(pieces)]
        # what follows an expand task runs where it ran (Dask places an unrestricted task
        # with its data), on its home worker or on the one that stole it
        routed = [[client.submit(_route, x, d, pure=False) for x in expanded]
                  for d in range(parts)]
        absorbed = [client.submit(_absorb_part, self.visited[d], routed[d], parts, **where[d])
                    for d in range(parts)]
        handle = {"summaries": [client.submit(_summary, a, **where[d])
                                for d, a in enumerate(absorbed)],
                  "reports": [client.submit(_findings, x, pure=False) for x in expanded],
                  "absorbed": absorbed, "where": where}
        self.visited = [client.submit(operator.getitem, a, 0, **where[d])
                        for d, a in enumerate(absorbed)]
        handle["visited after"] = self.visited
        return handle

    def _collect(self, handle: dict, level: int) -> tuple:
        """The driver's share of a round handed over (:meth:`_submit`), once its tasks have
        answered: ``(summaries, reports)``."""
        summaries = self._gather(handle.pop("summaries"), level)
        reports = self._gather(handle.pop("reports"), level)
        return summaries, reports

    def _cancel(self, handle: dict, before: dict) -> None:
        """Withdraw a round handed over (:meth:`_submit`) that will not be merged: its tasks
        cancelled and the visited sets put back to those after round ``before``. A cancelled task
        a worker has started runs to its end, so the cluster is not asked for figures after
        (:attr:`settled` stays False)."""
        try:
            self.client.cancel(handle["visited after"] + handle["absorbed"] +
                               handle["summaries"] + handle["reports"])
        except Exception:  # noqa: BLE001 - the search is stopping anyway
            pass
        self.visited = before["visited after"]

    def _finish(self, merge, level: int, last: bool, handle: dict, gathered: tuple,
                first: bool, following: Optional[dict]) -> None:
        """Merge one round (:meth:`_submit`, :meth:`_collect`): its new nodes numbered and
        absorbed, and (unless ``last``) routed to the next level's pieces; the tasks' figures
        added to the level's (``first``: the level's first round). ``following``: the round
        handed over after this one, if any (the cluster is settled only without one)."""
        client, parts, where = self.client, len(self.names), handle["where"]
        summaries, reports = gathered
        start = len(merge.result.parents)
        batch, ids_of = _merged(summaries, reports, start, merge.keep_edges)
        # each expand task's figures, and whether a worker other than its home ran it
        tasks = [(*r[4], int(r[5] is not None and r[5] != self.names[e % parts]))
                 for e, r in enumerate(reports)]
        if not first and self.task_log and self.task_log[-1][0] == level:
            tasks = [((a[0][0] + b[0][0], a[0][1] + b[0][1]), a[1] + b[1], b[2],
                      {k: a[3].get(k, 0) + b[3].get(k, 0) for k in sorted({*a[3], *b[3]})},
                      a[4] + b[4])
                     for a, b in zip(self.task_log.pop()[1], tasks)]
        self.task_log.append((level, tasks))
        kept = start + np.flatnonzero(~batch.halted)  # the next level's nodes, by id
        if not last:
            for d, a in enumerate(handle["absorbed"]):
                for j in range(parts):
                    self.pieces[j].append(client.submit(_piece, a, ids_of[d], j, parts,
                                                        **where[d]))
            self.bounds.extend(_round_starts(kept, self.frontier_n, self.round_nodes))
            self.frontier_n += len(kept)
        self.settled = following is None
        try:
            merge.absorb(batch)
        finally:
            if self.checkpoint is not None:
                if merge.max_states is not None:
                    kept = kept[kept < merge.max_states]
                self.checkpoint.log_frontier(level + 1, kept.astype(np.int64))

    def _gather(self, futures: list, level: int) -> list:
        """The results of ``futures`` (``client.gather``), the cluster watched while they are
        awaited: Dask holds a level's tasks for as long as no worker can run them, and a search
        whose workers have all left would wait for ever. Raises :class:`ClusterError` when the
        cluster has had no worker for :data:`CONNECT_SECONDS`, or when the scheduler is lost
        (the futures cancelled, the connection closed); a task's own exception is raised as
        it is."""
        from concurrent.futures import CancelledError

        from distributed import wait
        from distributed.comm import CommClosedError
        where = f"the Dask cluster at {self.address}" if self.address else \
            "the local Dask cluster"
        empty_since = None
        try:
            while True:
                try:
                    wait(futures, timeout=1.0)
                    break
                except TimeoutError:
                    pass
                if self.client.nthreads():
                    empty_since = None
                    continue
                now = time.monotonic()
                empty_since = now if empty_since is None else empty_since
                if now - empty_since >= CONNECT_SECONDS:
                    raise ClusterError(f"every worker of {where} left during depth "
                                       f"{level + 1}, and none joined within "
                                       f"{CONNECT_SECONDS:g} s")
            return self.client.gather(futures)
        except (CancelledError, OSError) as exc:
            if isinstance(exc, OSError) and not isinstance(exc, (CommClosedError, TimeoutError)) \
                    and self.client.status == "running":
                raise  # a task's own error, not the cluster's
            raise ClusterError(f"lost the scheduler of {where} during depth {level + 1} "
                               f"({type(exc).__name__})") from None

    def storage(self) -> dict:
        """:meth:`LocalEngine.storage`'s figures, with the cluster's when it expanded levels:
        ``visitedBytes`` (the partitions' fingerprints), ``workerPeakBytes`` (the workers' peak
        resident memory, added up), ``workers``, ``workerTasks`` (per level, each task's CPU
        seconds, nodes and memo counters, one per expansion partition, and ``stolenTasks``, how
        many of the level's expand tasks, over its rounds, a worker other than the partition's
        home ran: a lost worker's partitions count there too, as its replacement has another
        address) and the workers' memo evictions and trims added to this process's. The
        cluster is asked only when its last level finished (:attr:`settled`): after an
        interrupted level its workers may still be busy with it, or gone (a terminal's Ctrl-C
        reaches them too), and asking them would wait for them."""
        out = self.local.storage()
        if self.on_cluster and self.client is not None and self.settled:
            try:
                sizes = self.client.gather([self.client.submit(_nbytes, v, pure=False)
                                            for v in self.visited])
                out["visitedBytes"] = int(sum(sizes))
                peaks = self.client.run(_peak_rss)
                out["workerPeakBytes"] = int(sum(peaks.values()))
            except Exception:  # noqa: BLE001 - figures only; the cluster may be gone
                pass
        out["workers"] = self.workers if self.task_log else 1  # who expanded the levels
        out["workerTasks"] = [{"level": level, "cpuSeconds": [round(t[0][0], 2) for t in tasks],
                               "threadCpuSeconds": [round(t[0][1], 2) for t in tasks],
                               "nodes": [t[1] for t in tasks],
                               "cacheEntries": [t[2] for t in tasks],
                               "memoEvictions": [t[3].get("memoEvictions", 0) for t in tasks],
                               "memoTrims": [t[3].get("memoTrims", 0) for t in tasks],
                               "stolenTasks": sum(t[4] for t in tasks)}
                              for level, tasks in self.task_log]
        for name in ("memoTrims", "memoEvictions"):  # the workers' as well as this process's
            if name in out:
                out[name] += sum(t[3].get(name, 0) for _, tasks in self.task_log for t in tasks)
        return out

    def close(self) -> None:
        """Stop using the cluster: this run's memo tables dropped from its workers (only when
        its last level finished: see :meth:`storage`), the client closed and a local cluster
        stopped. Safe to call again: what was closed is not closed twice."""
        self.local.close()
        client, cluster = self.client, self.cluster
        self.client = self.cluster = None
        self.visited = self.pieces = []
        if client is not None:
            if self.settled:
                try:
                    client.run(_forget, self.token)
                except Exception:  # noqa: BLE001 - closing anyway
                    pass
            client.close()
        if cluster is not None:
            cluster.close()


class _AllExitFilter:
    """A logging filter that drops asyncio's "Task exception was never retrieved" records of a
    Dask gather cut short (``distributed.client.AllExit``): when a Ctrl-C stops the driver
    inside ``client.gather``, the gather's waiting tasks end with that exception and nobody is
    left to retrieve it; asyncio would print a traceback for each when it is collected."""

    @staticmethod
    def filter(record) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        return type(exc).__name__ != "AllExit"


def _mute_client_logs() -> None:
    """Keep this process's Dask loggers (``distributed`` and those below it that Dask's own
    logging set-up gives a level, such as ``distributed.client``) to critical lines: a lost
    scheduler or worker is reported once, as :class:`ClusterError`, not as the client's
    tracebacks of its reconnection attempts."""
    import logging
    for name in ["distributed"] + [n for n in logging.root.manager.loggerDict
                                   if n.startswith("distributed.")]:
        logging.getLogger(name).setLevel(logging.CRITICAL)


def _mute_interrupted_gathers() -> None:
    """Install :class:`_AllExitFilter` on the ``asyncio`` logger (once per process; it stays,
    since the tasks are reported whenever they are collected)."""
    import logging
    logger = logging.getLogger("asyncio")
    if not any(isinstance(f, _AllExitFilter) for f in logger.filters):
        logger.addFilter(_AllExitFilter())


def _identity(x):
    return x


def _round_starts(ids: np.ndarray, before: int, round_nodes: int) -> list:
    """The ids among ``ids`` (a frontier's, ascending, after ``before`` earlier ones) that open
    a round of ``round_nodes`` nodes: the 0th, the ``round_nodes``-th, ... of the frontier."""
    return ids[(-before) % round_nodes::round_nodes].tolist()


def _cut_pieces(pieces: list, bounds: list, part: int, parts: int) -> list:
    """Expansion partition ``part`` of ``parts`` of a level: the nodes of its home worker's
    frontier pieces ``(ids, values, routes)`` whose routing key modulo ``parts`` is ``part``,
    joined in id order and cut into the rounds whose first ids are ``bounds``: one ``(ids,
    values)`` per round, empty where the partition has none (one task a partition and level,
    whatever the pieces' number)."""
    ids = np.concatenate([p[0] for p in pieces]) if pieces else np.zeros(0, np.int64)
    values = [v for p in pieces for v in p[1]]
    routes = np.concatenate([p[2] for p in pieces]) if pieces else np.zeros(0, np.uint64)
    mine = np.flatnonzero((routes % np.uint64(parts)).astype(np.int64) == part)
    mine = mine[np.argsort(ids[mine], kind="stable")]  # the partition's nodes in id order
    ids, values = ids[mine], [values[i] for i in mine.tolist()]
    at = np.searchsorted(ids, np.asarray(bounds[1:], dtype=np.int64)).tolist()
    edges = [0, *at, len(ids)]
    return [(ids[a:b], values[a:b]) for a, b in zip(edges, edges[1:])]


def _round_sizes(cut: list) -> list:
    """The nodes of each round of a partition cut by :func:`_cut_pieces`."""
    return [len(ids) for ids, _ in cut]


def _peak_rss() -> int:
    """This process's peak resident memory, in bytes (Linux: ``ru_maxrss`` is in KiB)."""
    import resource
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def _visited_of(fps: np.ndarray) -> FingerprintSet:
    """A visited set of ``fps`` (uint64, no repeats)."""
    return FingerprintSet().with_added(fps)[0]


def _nbytes(visited: FingerprintSet) -> int:
    """Bytes of ``visited`` (:attr:`FingerprintSet.nbytes`), for the storage figures and Dask's
    ``sizeof`` on the workers (:func:`dask_setup`)."""
    return visited.nbytes


def _route(expanded: dict, d: int) -> tuple:
    """An expand task's successors for visited partition ``d``."""
    return expanded["route"][d]


def _merged(summaries: list, reports: list, base: int, keep_edges: bool) -> tuple:
    """The level as one :class:`~properties.search.bfs.Batch` (new nodes of every partition in
    parent-entry order), and per absorb task the node ids of its new nodes."""
    keys = np.concatenate([s[0] for s in summaries])
    order = np.argsort(keys, kind="stable")
    sorted_keys = keys[order]
    fps = np.concatenate([s[1] for s in summaries])[order]
    halted = np.concatenate([s[2] for s in summaries])[order]
    tagged = [s[3] for s in summaries if s[3] is not None]
    tags = np.concatenate(tagged)[order] if tagged else None
    ids_of = [base + np.searchsorted(sorted_keys, s[0]) for s in summaries]
    findings = [f for r in reports for f in r[0]]
    move_ids = np.concatenate([r[1] for r in reports])
    move_counts = np.concatenate([r[2] for r in reports])
    edge_keys = edge_fps = None
    if keep_edges:
        edge_keys = np.concatenate([r[3][0] for r in reports])
        edge_fps = np.concatenate([r[3][1] for r in reports])
        by_key = np.argsort(edge_keys, kind="stable")
        edge_keys, edge_fps = edge_keys[by_key], edge_fps[by_key]
    batch = Batch(sorted_keys, fps, halted, tags, findings, int(move_counts.sum()), move_ids,
                  move_counts, edge_keys, edge_fps)
    return batch, [i.astype(np.int64) for i in ids_of]


def default_workers() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


MAX_WORKERS_PER_CORE = 4
"""Local worker processes allowed per core this process may run on (:func:`default_workers`):
past a few a core they only add memory, and a typo's 100000 would start that many processes.
The command line (``explore --workers``, ``benchmarks/explore.py --workers``) refuses more."""


def too_many_workers(workers: int) -> Optional[str]:
    """Why ``workers`` local worker processes are refused (more than :data:`MAX_WORKERS_PER_CORE`
    a core this process may run on), as one line naming the option; None when they are not."""
    cores = default_workers()
    if workers <= MAX_WORKERS_PER_CORE * cores:
        return None
    return (f"--workers {workers}: each is a process of its own, and this process may run on "
            f"{cores} core{'s' if cores != 1 else ''}; give at most "
            f"{MAX_WORKERS_PER_CORE * cores}, or run the search on a cluster (--cluster)")
