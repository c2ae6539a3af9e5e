"""Exhaustive bounded exploration: the entry point :func:`explore`, its options
(:class:`ExploreOptions`) and the default finite world (:data:`EXPLORE_VOCABULARY`).

Every trace the producer can send over a finite vocabulary, up to a depth, is explored once per
distinct state; because the search is breadth-first, the first witness recorded for a finding is
a shortest one. Two modes: every reading in one sweep
(:class:`~properties.search.system_sweep.SweepSystem`), or one reading
(:class:`~properties.search.system_single.SingleSystem`); both run on the one driver
(:func:`properties.search.bfs.search`) with their engine adapters, in this process or on Dask
workers, with or without a checkpoint. What the search returns is an
:class:`~properties.search.report.ExploreReport`; the state graph is built from it on demand
(:mod:`properties.search.graph`). ``docs/search.md`` gives the map of the modules.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional, Sequence

from model.producer import Vocabulary
from model.readings import DRAFT, Reading
from properties.search.bfs import LocalEngine, Search, search
from properties.search.store import component_fingerprint
from properties.catalogue import PROPERTIES, Property
from model.consumers import REFERENCE, Consumer
from properties.search.report import ExploreReport, _cyclic_gc_paused, _report
from properties.search.sweep_cache import CACHE_ENTRIES
from properties.search.system_single import SingleAdapter
from properties.search.system_sweep import SweepAdapter

__all__ = ["EXPLORE_VOCABULARY", "ExploreOptions", "explore"]


EXPLORE_VOCABULARY = Vocabulary(
    activity_ids=("act-1", "act-2"),
    text_ids=("msg-1",),
    owners=(None, "sub-1"),
    activity_types=("PLAN", "SEARCH"),
    contents=({"n": 0},),
    patches=(
        ("set-n", ({"op": "replace", "path": "/n", "value": 2},)),
        ("remove-missing", ({"op": "remove", "path": "/missing"},)),
        ("unknown-op", ({"op": "increment", "path": "/n"},
                        {"op": "replace", "path": "/n", "value": 2})),
        ("root-array", ({"op": "replace", "path": "", "value": []},)),
    ),
    metadata=(None, {"k": 1}),
    replace_flags=(None, False),
    max_runs=2,
)
"""The default finite world of the exhaustive search: two activity ids, the parent and one
subagent, two types, one content, four patches (applies, fails, an unrecognised op before one
that applies, root to a non-object), one metadata key, replace absent or false, two runs (a
second run is what questions of run boundaries need, Q12=run and Q23: it costs 0.3% more
states at depth 5, since a run closes only at RUN_FINISHED). The
unrecognised op comes with an op that applies so that the readings of Q20 differ in the content
a consumer holds, not only in a warning: a peer that reports no warnings still shows which
reading it follows."""


@dataclass(frozen=True)
class ExploreOptions:
    """What :func:`explore` searches and how: one value for every option (frozen; derive
    another with :func:`dataclasses.replace`).

    Attributes:
        depth: the longest trace explored, in events (default 5: the default bound of
            ``activity-check explore``).
        vocabulary: the producer's finite world (:data:`EXPLORE_VOCABULARY`).
        reading: the consumer's reading, or None for every reading in one sweep (default
            ``draft``).
        consumer: the consumer under test (default the reference model; any other consumer
            needs a reading).
        properties: checked on every edge (:class:`properties.catalogue.Transition`; default
            the whole catalogue, :data:`properties.catalogue.PROPERTIES`).
        adversarial: also take the producer's non-conformant moves (then properties that judge
            only conformant traces see the cumulative conformance flag; splits are recorded on
            conformant traces only). Default False.
        check_readings: with a reading, also look for knobs that split each step (reference
            step only); with ``reading=None`` splits are always recorded. Default True.
        max_states: a bound on distinct states (None: none); timeout: on wall time, in
            seconds (None: none); the report says which bound stopped the search.
        progress: called as ``progress(depth, states, edges, seconds)`` during and after each
            level (None: not called).
        stop_when_found: stop at the end of the first level with a property violation.
        keep_edges: record every examined edge for :func:`~properties.search.graph.state_graph`
            (off by default: the search itself needs only the parent map).
        workers: processes expanding each level (1, the default: this one; more: a Dask
            cluster of that many local worker processes, started for the search and stopped
            after it).
        cluster: the address of a running Dask scheduler to expand the levels on (its
            workers; ``workers`` is then ignored). None: no cluster.
        spill_dir: where a frontier larger than ``frontier_limit`` bytes is spilled (in a
            temporary directory made there; None: the system's temporary directory).
        frontier_limit: bytes of frontier held in memory (default 2 GiB).
        parallel_from: with workers or a cluster, levels whose frontier has fewer nodes than
            this (ten times this for the last level) are expanded here (starting the workers
            costs more than they would save). Default 1,000 nodes.
        cache_entries: the all-readings sweep's budget of memo-table entries, in each process
            (this one and every worker: :meth:`~properties.search.system_sweep.SweepAdapter.spec`;
            :data:`~properties.search.sweep_cache.CACHE_ENTRIES`; ``explore --memo-entries``;
            past it, entries are dropped or the tables emptied: the output is the same, only
            time changes).
        checkpoint: a directory where the search is saved as it goes and from which it is
            resumed when it holds this search's checkpoint
            (:mod:`properties.search.checkpoint`; no ``keep_edges``; with workers or a cluster,
            saved between the levels they expand); the report is the same as that of a search
            never stopped, whatever the workers of each part. None: no checkpoint.
        checkpoint_every: seconds between the checkpoint's periodic saves (default 600).
    """

    depth: int = 5
    vocabulary: Vocabulary = EXPLORE_VOCABULARY
    reading: Optional[Reading] = DRAFT
    consumer: Consumer = REFERENCE
    properties: Sequence[Property] = PROPERTIES
    adversarial: bool = False
    check_readings: bool = True
    max_states: Optional[int] = None
    timeout: Optional[float] = None
    progress: Optional[Callable[[int, int, int, float], None]] = None
    stop_when_found: bool = False
    keep_edges: bool = False
    workers: int = 1
    cluster: Optional[str] = None
    spill_dir: Optional[str] = None
    frontier_limit: int = 2 << 30
    parallel_from: int = 1_000
    cache_entries: int = CACHE_ENTRIES
    checkpoint: Optional[str] = None
    checkpoint_every: float = 600.0


def explore(options: ExploreOptions = ExploreOptions()) -> ExploreReport:
    """Breadth-first search to ``options.depth`` events (every option: :class:`ExploreOptions`).

    Two modes:

    * ``reading=None``: *every reading in one sweep*. A node is (belief, consumer state,
      conformant, class), where the class is a partial assignment of knobs standing for every
      reading consistent with it; all of those readings have given the same result on every
      step so far. A step that consults a knob the class leaves open is forked
      (:class:`~model.readings.PartialReading`); options that give equal results stay in one
      class, options that differ become sibling classes, and every knob whose options differ
      there is recorded as a split, in whatever context the class fixes. Producer conformance
      is forked the same way on the knobs the producer's own obligations read (Q2 and
      Q4-opener), so a move conformant under only some readings is taken in those readings'
      class. Properties are checked on every class's transition under every reading of the
      class: under its representative (the class's options, ``draft`` for the knobs it leaves
      free), and again under each other option of a knob the checks consulted that the class
      leaves open (the step's result is the same under all of them, a property's verdict need
      not be). Reference consumer only.
    * ``reading=R`` (default ``draft``): one consumer state per node, the one of reading R; a
      knob is recorded as a split where it decides in R's context
      (:func:`~properties.search.reading_classes.step_splits`).

    Both run on the one breadth-first driver (:func:`properties.search.bfs.search`), as a
    :class:`~properties.search.system_sweep.SweepSystem` or a
    :class:`~properties.search.system_single.SingleSystem`, with their engine adapters.

    Returns:
        An :class:`ExploreReport`. Deterministic: the same for every number of workers.

    Raises:
        TypeError: ``options`` is not an :class:`ExploreOptions`.
        ValueError: ``reading=None`` with a consumer other than the reference model,
            ``workers`` below 1, or a checkpoint with ``keep_edges``.
        CheckpointError: the checkpoint directory cannot be used (see
            :class:`~properties.search.checkpoint.Checkpoint`), or holds more states than
            ``max_states`` or a deeper search than ``depth``.

    Clauses: every clause of the property catalogue (P00..P40) and of the knobs (Q-ids).
    """
    if not isinstance(options, ExploreOptions):
        raise TypeError("explore takes one ExploreOptions value, e.g. "
                        f"explore(ExploreOptions(depth=4)), not {type(options).__name__}")
    o = options
    all_readings = o.reading is None
    if all_readings and o.consumer is not REFERENCE:
        raise ValueError("exploring every reading at once needs the reference consumer")
    if o.workers < 1:
        raise ValueError(f"workers must be at least 1, not {o.workers}")
    properties = tuple(o.properties)
    if all_readings:
        adapter = SweepAdapter(o.vocabulary, properties, o.adversarial, o.cache_entries)
    else:
        adapter = SingleAdapter(o.vocabulary, o.reading, o.consumer, properties, o.adversarial,
                                o.check_readings)
    saved = None
    if o.checkpoint is not None:
        if o.keep_edges:
            raise ValueError("a checkpoint needs a search without the graph (its edges are "
                             "not saved)")
        from properties.search.checkpoint import Checkpoint
        saved = Checkpoint(o.checkpoint, _identity(o.vocabulary, o.reading, o.consumer,
                                                   properties, o.adversarial, o.check_readings,
                                                   o.stop_when_found), o.checkpoint_every)
    if o.workers > 1 or o.cluster:
        from properties.search.dask_engine import DaskEngine
        engine = DaskEngine(adapter, workers=o.workers, address=o.cluster,
                            local_below=o.parallel_from, frontier_limit=o.frontier_limit,
                            spill_dir=o.spill_dir)
    else:
        engine = LocalEngine(adapter, frontier_limit=o.frontier_limit, spill_dir=o.spill_dir)
    found = report = None
    try:
        with _cyclic_gc_paused():  # the report too is parked with the oldest generation
            found = search(adapter.system, o.depth, engine, o.max_states, o.timeout,
                           o.progress, o.stop_when_found, o.keep_edges, saved)
            report = _report(found, adapter, o.depth, all_readings)
    except KeyboardInterrupt:  # a Ctrl-C while the collector was paused or restored
        if report is None:
            report = _report(found or Search(stopped_by="interrupted"), adapter, o.depth,
                             all_readings)
        report.stopped_by, report.complete = "interrupted", False
    return report


def _identity(vocabulary: Vocabulary, reading: Optional[Reading], consumer: Consumer,
              properties: tuple, adversarial: bool, check_readings: bool,
              stop_when_found: bool) -> dict:
    """What a checkpoint of :func:`explore` is a checkpoint of (JSON): the vocabulary's
    fingerprint (:func:`~properties.search.store.component_fingerprint`, hex), the reading (its
    :attr:`~model.readings.Reading.name`, a preset's or ``KNOB=OPTION,...``; or ``"all"``),
    the consumer's name, the properties' ids and the flags."""
    return {"vocabulary": f"{component_fingerprint(vocabulary):016x}",
            "reading": "all" if reading is None else reading.name,
            "consumer": consumer.name, "properties": [p.id for p in properties],
            "adversarial": adversarial, "checkReadings": check_readings,
            "stopWhenFound": stop_when_found}
