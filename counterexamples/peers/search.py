"""The ``peer search`` job: the corpus and probes first, then generated traces within a budget,
then shrinking (:func:`search_peer`)."""
from __future__ import annotations

import time
from typing import Callable, Optional

from model.producer import Vocabulary
from counterexamples.peers.adapter import BUDGET_NOTE, AdapterProcess
from counterexamples.peers.check import PeerReport, finish_report, run_batch
from counterexamples.peers.generate import generation_parts, probe_traces
from counterexamples.peers.traces import corpus_traces

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    pass


CORPUS_SLACK = 3.0
"""Seconds past the budget the corpus and probes of a search may still take (they are always
checked first; only an adapter that cannot answer them is cut, at the budget plus this)."""


SHRINK_SECONDS = 1.0
"""What shrinking one kind of divergence is reckoned to take (seconds): feeding stops when the
kinds found would need the time left (generation stops in time to shrink what it found)."""

FEED_SHARE = 0.4
"""The share of the budget left after the corpus and probes that generating and feeding traces
may use; shrinking has the rest (and whatever feeding did not use)."""


def search_peer(adapter: AdapterProcess, seed: int = 0, budget: Optional[float] = 60.0,
                stateful: int = 200, bfs_depth: int = 3, batch: int = 64, max_findings: int = 40,
                progress: Optional[Callable[[int, int], None]] = None,
                deadline: Optional[float] = None, vocabulary: Optional[Vocabulary] = None,
                bfs_vocabulary: Optional[Vocabulary] = None) -> PeerReport:
    """Check the committed corpus and the :data:`PROBES` first (whatever the budget), then
    generate traces (:func:`generated_traces`) and feed them to the peer in batches of ``batch``,
    classify, and shrink the divergences (one finding per root cause, at most
    ``max_findings``, each within its share of the time left:
    :func:`counterexamples.peers.check.finish_report`); generation and feeding get at most
    :data:`FEED_SHARE` of what is left of
    the budget, shrinking the rest.

    Args:
        budget: seconds for the whole search (None: no limit); ``deadline`` (a
            :func:`time.monotonic` time) instead, when the caller's clock started earlier. With a
            budget the adapter never waits past the deadline (the corpus and probes: past it plus
            :data:`CORPUS_SLACK`), and a divergence not shrunk in time is exported unshrunk.
            Without one the report depends only on ``seed`` and the peer.
        progress: called as ``progress(done, total)`` after each batch.
        vocabulary, bfs_vocabulary: the generators' vocabularies (see
            :func:`generated_traces`).
    """
    started = time.monotonic()
    if deadline is None and budget is not None:
        deadline = started + budget
    report = PeerReport(adapter.spec.label)
    base = corpus_traces() + probe_traces()
    adapter.deadline = deadline + CORPUS_SLACK if deadline is not None else None
    for i in range(0, len(base), batch):
        report.results.extend(run_batch(adapter, base[i:i + batch]))
        report.note_first_divergence(started)
        if progress:
            progress(len(report.results), len(base))
    adapter.deadline = deadline
    # generating and feeding get at most FEED_SHARE of what is left; shrinking the rest
    feed_until = None if deadline is None else \
        time.monotonic() + max(0.0, deadline - time.monotonic()) * FEED_SHARE
    parts = generation_parts(seed, stateful, bfs_depth, deadline=feed_until,
                             vocabulary=vocabulary, bfs_vocabulary=bfs_vocabulary)
    _, counts = next(parts)
    total = len(base)

    def late() -> bool:
        """Past the feeding share, or so many kinds of divergence found that shrinking them
        (:data:`SHRINK_SECONDS` each) would need the time left."""
        if feed_until is None:
            return False
        now = time.monotonic()
        kinds = {(tuple(sorted(r.classification.aspects)), tuple(r.classification.divergent))
                 for r in report.results if r.classification.kind == "divergence"}
        return now > feed_until or len(kinds) * SHRINK_SECONDS > deadline - now

    for fresh, counts in parts:
        total += len(fresh)
        for i in range(0, len(fresh), batch):
            if late():
                break
            report.results.extend(run_batch(adapter, fresh[i:i + batch]))
            report.note_first_divergence(started)
            if progress:
                progress(len(report.results), total)
        if late():
            report.stopped_by = "budget"
            break
    if counts.pop("stopped", False):
        report.stopped_by = "budget"
    report.generated = counts
    if adapter.budget_hit:
        report.stopped_by = "budget"
    # a generated trace the deadline cut was not checked: it is left out, not counted as an
    # error; the corpus and probes always count (an adapter too slow for them has errors)
    report.results = report.results[:len(base)] + [
        r for r in report.results[len(base):] if r.reply.error != BUDGET_NOTE]
    finish_report(report, adapter, True, deadline, max_findings)
    if adapter.budget_hit:
        report.stopped_by = "budget"
    report.seconds = time.monotonic() - started
    return report
