"""The option each peer takes on each knob, computed by running the knobs' separating traces
through the peers' adapters (``activity-check peer options``, issue 41).

For every consumer knob of :data:`model.readings.KNOBS` the *separating traces* are the
questions engine's witnesses (:mod:`properties.questions`), taken per pair of options in the
draft's context: the shortest conformant trace on which the two options' verdicts differ, over
the exploration's vocabulary to ``depth`` and then over the lifecycle vocabulary to ``depth +
DEEPER`` (:func:`properties.search.system_pair.shortest_distinguishing`, as the engine's pair
search, every pair of one reading a in one joint search:
:func:`~properties.search.system_pair.shortest_distinguishing_pairs`); for a pair no
conformant trace separates, the form-B witness (the shortest trace whose last event breaks a
producer clause, :func:`properties.questions.violating_pair`); and
the knob's probe (``probe-<knob>`` of :mod:`counterexamples.peers.generate`) when it separates
two options. Every search witness is completed by
:func:`properties.questions.closed_witness` where that keeps it a witness.

Each trace is put to the peer and its answer classified against every reading of the model
(:func:`counterexamples.peers.classify.classify`): an option *fits* the trace when some reading
whose verdict the peer gave takes it (or leaves the knob open). The peer takes option ``o`` of
the knob when ``o`` alone fits every separating trace; otherwise the knob is *not observable*
for that peer, with the reason: no option fits them all (its outcomes match none), several do
(the adapter's answers cannot show the part of the verdict that separates them: e.g. no
warnings), or the adapter gave no usable answer. Producer-side knobs
(:data:`model.producer.PRODUCER_ONLY_KNOBS`) are not observable for a consumer.

:func:`options_document` builds the document of ``model/data/peer_options.json`` (schema
``counterexamples/schemas/peer-options.schema.json``; read by :mod:`model.peer_options`);
:func:`differences` compares two. Same traces and peers give byte-identical documents (no
timings, no randomness).

Layering: ``model``, ``properties`` and :mod:`counterexamples.peers`; the CLI
(:mod:`activity_check.cmd_peer`) only wires it. Clauses: IDX-CONFORMANCE and the clauses of each
knob (the notes' Q-ids).
"""
from __future__ import annotations

import itertools
from typing import Callable, Optional, Sequence

from model.producer import PRODUCER_ONLY_KNOBS
from model.readings import DRAFT, KNOBS
from counterexamples.peers.adapter import AdapterProcess
from counterexamples.peers.check import run_batch
from counterexamples.peers.traces import PeerTrace

__all__ = ["separating_traces", "peer_knob_options", "peer_entry", "options_document",
           "differences", "NOT_OBSERVABLE_PRODUCER", "DEFAULT_DEPTH"]

DEFAULT_DEPTH = 4
"""The bound (events, RUN_STARTED included) of the conformant pair searches over the
exploration's vocabulary; the lifecycle search goes :data:`properties.questions.DEEPER` further,
the form-B search to :data:`properties.questions.VIOLATING_DEPTH`."""

NOT_OBSERVABLE_PRODUCER = ("a producer-side knob (read by the producer monitor): no consumer "
                           "verdict depends on it")
"""The reason recorded for the knobs of :data:`model.producer.PRODUCER_ONLY_KNOBS`."""


def separating_traces(depth: int = DEFAULT_DEPTH,
                      progress: Optional[Callable[[str], None]] = None) -> dict:
    """The separating traces of every consumer knob (see the module docstring).

    For each pair of a knob's options, in the draft's context: the shortest conformant trace
    that separates them (the exploration's vocabulary to ``depth``, then the lifecycle
    vocabulary to ``depth + DEEPER``), else the shortest form-B one (to
    :data:`properties.questions.VIOLATING_DEPTH`, :func:`properties.questions.violating_pair`);
    then the knob's probe (:func:`counterexamples.peers.generate.probe_traces`, ``probe-<knob>``)
    when it separates two of the knob's options.

    Args:
        depth: the conformant pair searches' bound (at least 2).
        progress: called with each knob id before its own searches (the pair searches of
            every knob run first, one joint search per reading a:
            :func:`~properties.search.system_pair.shortest_distinguishing_pairs`).

    Returns:
        ``{"depth", "lifecycleDepth", "violatingDepth", "items": [{"id", "knob",
        "separates" ([option a, option b]), "source" ("pair search", "form B" or "probe"),
        "conformant" (bool: the producer monitor finds no violation under draft), "trace"
        (wire events)}]}``, in knob order, then option-pair order, the probe last; ids
        ``"<knob>:<a>/<b>"`` (``"probe-<knob>"``); a trace already listed for the knob is not
        listed twice.

    Raises:
        ValueError: depth below 2."""
    if depth < 2:
        raise ValueError(f"depth must be at least 2, not {depth}")
    from counterexamples.peers.generate import probe_traces
    from model.producer import check_trace
    from model.verdict import evaluate, verdict_key
    from properties.questions import (DEEPER, LIFECYCLE_VOCABULARY, VIOLATING_DEPTH,
                                      closed_witness, violating_pair)
    from properties.search.explore import EXPLORE_VOCABULARY
    from properties.search.system_pair import shortest_distinguishing_pairs
    probes = {p.id: p for p in probe_traces()}
    violating_depth = min(depth, VIOLATING_DEPTH)
    # every knob's option pairs, searched together: one joint search per reading a
    pairs = [(DRAFT.with_(**{knob.id: a}), DRAFT.with_(**{knob.id: b}))
             for knob in KNOBS if knob.id not in PRODUCER_ONLY_KNOBS
             for a, b in itertools.combinations(knob.option_names, 2)]
    first = dict(zip(pairs, shortest_distinguishing_pairs(pairs, depth, EXPLORE_VOCABULARY)))
    unfound = [pair for pair in pairs if first[pair] is None]
    deeper = dict(zip(unfound, shortest_distinguishing_pairs(unfound, depth + DEEPER,
                                                             LIFECYCLE_VOCABULARY)))
    items = []
    for knob in KNOBS:
        if knob.id in PRODUCER_ONLY_KNOBS:
            continue
        if progress:
            progress(knob.id)
        seen = set()

        def add(item_id, a, b, source, events):
            wire = [e.to_wire() for e in events]
            if repr(wire) not in seen:
                seen.add(repr(wire))
                items.append({"id": item_id, "knob": knob.id, "separates": [a, b],
                              "source": source, "conformant": not check_trace(events, DRAFT),
                              "trace": wire})

        for a, b in itertools.combinations(knob.option_names, 2):
            ra, rb = DRAFT.with_(**{knob.id: a}), DRAFT.with_(**{knob.id: b})
            trace, source = first[(ra, rb)], "pair search"
            if trace is None:
                trace = deeper[(ra, rb)]
            if trace is None:
                trace, source = violating_pair(ra, rb, violating_depth), "form B"
            if trace is not None:
                add(f"{knob.id}:{a}/{b}", a, b, source,
                    closed_witness(trace, knob.id, ({knob.id: a}, {knob.id: b})))
        probe = probes.get(f"probe-{knob.id}")
        if probe is not None and probe.state is None:
            keys = [verdict_key(evaluate(probe.events, DRAFT.with_(**{knob.id: o})))
                    for o in knob.option_names]
            pair = next(((knob.option_names[i], knob.option_names[j])
                         for i, j in itertools.combinations(range(len(keys)), 2)
                         if keys[i] != keys[j]), None)
            if pair is not None:
                add(probe.id, *pair, "probe", probe.events)
    return {"depth": depth, "lifecycleDepth": depth + DEEPER, "violatingDepth": violating_depth,
            "items": items}


def peer_knob_options(results: dict, traces: Sequence[dict]) -> dict[str, dict]:
    """``{knob id: entry}`` for every knob, from the peer's classified answers on the separating
    traces, inferred jointly over all of them (:func:`counterexamples.peers.classify.knob_table`:
    an option is the peer's when some reading consistent with every trace it answered takes
    it, so another knob that would explain a trace otherwise is ruled out by its own traces).

    Args:
        results: ``{trace id: TraceResult}`` of the peer on the separating traces.
        traces: the ``items`` of :func:`separating_traces`.

    Returns:
        per knob either ``{"option", "evidence" ([trace id]: the traces that showed it),
        "conformantOnly" (bool: every one of them is conformant)}`` or ``{"notObservable":
        reason, "evidence" ([the knob's own separating trace ids])}``. Not observable: a
        producer-side knob; one of the knob's own traces on which the peer's outcome matches no
        reading (with the parts it differs in from the nearest) or got no usable answer; several
        options left (the answers do not show what separates them, e.g. no warnings); none
        left (no single option fits every separating trace)."""
    from counterexamples.peers.classify import knob_table
    ordered = [results[i["id"]] for i in traces]
    table = {k.knob: k for k in knob_table(ordered)}
    conformant = {i["id"]: i["conformant"] for i in traces}
    own: dict[str, list[str]] = {}
    for item in traces:
        own.setdefault(item["knob"], []).append(item["id"])
    out = {}
    for knob in KNOBS:
        mine = own.get(knob.id, [])
        if knob.id in PRODUCER_ONLY_KNOBS:
            out[knob.id] = {"notObservable": NOT_OBSERVABLE_PRODUCER, "evidence": []}
            continue
        diverged = [t for t in mine if results[t].classification.kind == "divergence"]
        errors = [t for t in mine if results[t].classification.kind == "error"]
        row = table[knob.id]
        if not mine:
            reason = "no trace separates its options to the searches' bounds"
        elif diverged:
            reason = "its outcome matches no reading of the model on " + "; ".join(
                f"{t} (differs from the nearest reading in "
                f"{', '.join(results[t].classification.aspects) or 'its verdict'})"
                for t in diverged)
        elif errors:
            reason = "the adapter gave no usable answer on " + "; ".join(
                f"{t} ({results[t].classification.error})" for t in errors)
        elif row.status == "determined":
            shown = list(row.evidence) or list(mine)
            out[knob.id] = {"option": row.behaves_as, "evidence": shown,
                            "conformantOnly": all(conformant.get(t, True) for t in shown)}
            continue
        elif row.status == "inconsistent":
            reason = "no single option fits every separating trace (" + "; ".join(
                f"{t}: {' / '.join(o)}" for t, o in row.evidence.items()) + ")"
        elif row.status == "undetermined":
            if _separated(knob.id, row.options, [i for i in traces if i["knob"] == knob.id]):
                reason = ("the adapter's answers do not show what separates "
                          + " / ".join(row.options) + " (each fits every separating trace)")
            else:
                reason = ("no separating trace tells " + " / ".join(row.options) + " apart "
                          "to the searches' bounds")
        else:
            reason = "no separating trace narrows its options (every option fits every answer)"
        out[knob.id] = {"notObservable": reason, "evidence": mine}
    return out


def _separated(knob_id: str, options: Sequence[str], items: Sequence[dict]) -> bool:
    """True when one of ``items`` (the knob's separating traces) gives two of ``options``
    different verdicts in the draft's context (:func:`model.verdict.verdict_key`)."""
    from model.verdict import evaluate, verdict_key
    from model.wire import parse_events
    for item in items:
        events = parse_events(item["trace"])
        keys = {verdict_key(evaluate(events, DRAFT.with_(**{knob_id: o}))) for o in options}
        if len(keys) > 1:
            return True
    return False


def peer_entry(peer, traces: dict, timeout: float = 10.0) -> dict:
    """One peer's entry of the document: run ``traces`` (:func:`separating_traces`) through the
    matrix peer ``peer`` (:class:`counterexamples.peers.matrix.CataloguePeer`, installed).

    Returns:
        ``{"name" ("<package> <version>[ <mode>]"), "package", "version", "adapter" (the
        ``--adapter`` shortcut), "reports" (what the adapter calls itself), "knobs"
        (:func:`peer_knob_options`)}``.

    Raises:
        counterexamples.peers.adapter.PeerError: the adapter cannot be started."""
    from counterexamples.peers.matrix import _spec, peer_version
    items = traces["items"]
    batch = [PeerTrace.of(i["id"], i["trace"], None, "separating") for i in items]
    with AdapterProcess(_spec(peer), timeout=timeout) as adapter:
        results = run_batch(adapter, batch)
        reports = adapter.peer_name or ""
    version = peer_version(peer)
    mode = peer.args[peer.args.index("--mode") + 1] if "--mode" in peer.args else ""
    name = " ".join(x for x in (peer.package, version, mode) if x)
    return {"name": name, "package": peer.package, "version": version,
            "adapter": peer.shortcut, "reports": reports,
            "knobs": peer_knob_options({r.trace.id: r for r in results}, items)}


def options_document(peers: Sequence, traces: dict, timeout: float = 10.0,
                     progress: Optional[Callable[[str], None]] = None) -> dict:
    """The document of ``model/data/peer_options.json`` for ``peers`` (matrix peers, in the
    matrix's order), from ``traces`` (:func:`separating_traces`).

    Raises:
        counterexamples.peers.adapter.PeerError: an adapter that cannot be started."""
    entries = []
    for peer in peers:
        if progress:
            progress(peer.shortcut)
        entries.append(peer_entry(peer, traces, timeout))
    return {"about": ABOUT, "tool": "activity-check", "command": "peer options",
            "traces": traces, "peers": entries}


ABOUT = ("The option each peer of the conformance matrix takes on each knob (model/readings.py), "
         "computed by 'activity-check peer options': the knobs' separating traces (below) run "
         "through each peer's adapter, an option recorded where it alone fits every one, "
         "'notObservable' with the reason otherwise. Read by model.peer_options; schema: "
         "counterexamples/schemas/peer-options.schema.json. Do not edit by hand: rerun "
         "'activity-check peer options --out model/data/peer_options.json'.")
"""The ``about`` member of the document."""


def _knob_text(entry: dict) -> str:
    if "option" in entry:
        return entry["option"]
    return "not observable"


def differences(recorded: dict, live: dict) -> list[str]:
    """Where ``live`` (a document of :func:`options_document`) departs from ``recorded``, one
    line each, for the peers ``live`` holds: a peer not recorded, another version, a knob whose
    option (or observability) changed. Empty when they agree."""
    out = []
    known = {p["adapter"]: p for p in recorded.get("peers", [])}
    for peer in live.get("peers", []):
        old = known.get(peer["adapter"])
        if old is None:
            out.append(f"{peer['adapter']}: not recorded")
            continue
        if old["version"] != peer["version"]:
            out.append(f"{peer['adapter']}: recorded version {old['version']}, installed "
                       f"{peer['version']}")
        for knob in KNOBS:
            a, b = old["knobs"].get(knob.id), peer["knobs"].get(knob.id)
            if a is None or b is None:
                if a is not b:
                    out.append(f"{peer['adapter']} {knob.id}: recorded {a and _knob_text(a)}, "
                               f"live {b and _knob_text(b)}")
                continue
            if a.get("option") != b.get("option"):
                out.append(f"{peer['adapter']} {knob.id}: recorded {_knob_text(a)}, live "
                           f"{_knob_text(b)}" + (f" ({b['notObservable']})"
                                                 if "notObservable" in b else ""))
    return out
