"""The activity corpus the field lacks: one fixture per consumer-observable activity clause,
in the AG-UI conformance format, each with a verified ``kill``.

For each target clause (:func:`target_clauses`: a consumer or both-sides clause about activity
that a step branch of the model cites, and not out of scope) the generator takes the shortest
witness among the tool's traces (:func:`witness_pool`: the committed corpus, the probes, the
shortest trace to every state of the breadth-first search to depth 3, and the few
:data:`EXTRA_WITNESSES` the search cannot reach; shortest first, ties in pool order) whose fold
under the reading takes a branch citing the clause (or surfaces a warning of one) and which a
mutant of that clause's own fails (else the shortest citing one). The fixture's identifiers
are prefixed with its name, its ``expect`` is derived from the verdict
(:func:`counterexamples.report.fixture.expect_of_verdict`: outcome, the warnings a keyword
clause requires, the final messages, state where touched), and its ``kill`` is **verified**:
the fixture passes on the reference consumer and fails on a zoo mutant
(:data:`properties.zoo.MUTANTS`; one whose clause is the target is preferred, else the first in
the zoo's order). A clause no mutant's failure pins is reported, not shipped, and so is a clause no pool trace cites under the reading, with the reason
computed (:func:`_unreached_note`: the first other option of its questions' knobs under which a
pool trace does cite it; SUB-ENDED-ACTIVITY and ACT-RUN-BASELINE are observable only off the
draft, under Q15=closed and Q23=run-scoped). Under a reading other than the draft, a fixture
whose clause no pool trace cites under the draft says so in its description. Where the
witness's verdict depends on an open question (a knob splits the trace,
:func:`model.verdict.knob_splits`), the description says which, and under which reading the
verdict was generated.

Run-input stripping (RIN-STRIP-ACTIVITY, ACT-STRIP-RUNINPUT) is observable only in the request a
client sends, so its fixture carries the witness's final messages as the run's ``input`` and
asserts the ``request``'s messages (activity gone: the array's exact length says so).

Same inputs, same bytes: the pool, the clause order and the mutant order are fixed.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from functools import lru_cache
from typing import Optional, Sequence

from counterexamples.conformance.fixtures import MANIFEST, fixture_from_json
from counterexamples.conformance.runner import judge, model_answers
from counterexamples.report.fixture import (dumps_fixture, expect_of_verdict, fixture_of,
                                            prefix_ids, spec_page_of)

__all__ = ["RUN_INPUT_CLAUSES", "EXTRA_WITNESSES", "target_clauses", "witness_pool",
           "Generated", "generate", "coverage_table", "write_corpus",
           "trace_fixture", "generated_fixtures"]

RUN_INPUT_CLAUSES = ("ACT-STRIP-RUNINPUT", "RIN-STRIP-ACTIVITY")
"""Clauses observable only in the request (the run input the client sends)."""


def target_clauses() -> list:
    """The consumer-observable activity clauses, in registry order: actor consumer or both, on
    the activity page or naming activity, cited by a step branch (or run-input stripping), not
    in :data:`model.clauses.OUT_OF_SCOPE`."""
    from model.branches import BRANCHES
    from model.clauses import OUT_OF_SCOPE, registry
    cited = {c for ids in BRANCHES.values() for c in ids}
    out = []
    for c in registry().values():
        if c.actor not in ("consumer", "both") or c.id in OUT_OF_SCOPE or c.id not in cited:
            continue
        if c.page == "ACT" or "activit" in c.summary.lower() or c.id in PATCH_FAILURE_CLAUSES:
            out.append(c)
    return out


PATCH_FAILURE_CLAUSES = ("SNP-ATOMIC", "SNP-NO-PARTIAL")
"""The snapshots page's failure rules that activity patches follow (ACT-DELTA-PATCHFAIL, N24):
a patch applies as one unit or not at all. Targets too, so that the corpus has an activity
patch whose later operation fails after an earlier one applied (a consumer that keeps the
earlier operation's result fails it)."""


def _deviation_readings(clause_id: str, reading) -> list:
    """The readings that differ from ``reading`` only by one knob's *deviation* against
    ``clause_id`` (:attr:`model.readings.Knob.deviations`: a behaviour implementations have,
    which the clause's text rules out): a fixture of the clause should fail a consumer that
    behaves so (Q18=schema against ACT-SNAP-REPLACE-FALSE: the snapshot must retype)."""
    from model.readings import KNOBS
    out = []
    for knob in KNOBS:
        for option, against, _ in knob.deviations:
            if against == clause_id and getattr(reading, knob.attr) != option:
                out.append(reading.with_(**{knob.id: option}))
    return out


EXTRA_WITNESSES: tuple[tuple[str, tuple[dict, ...]], ...] = (
    ("described-passthrough", (
        {"type": "RUN_STARTED", "threadId": "t", "runId": "r"},
        {"type": "ACTIVITY_SNAPSHOT", "messageId": "a", "activityType": "PLAN",
         "content": {"step": 1}},
        {"type": "CUSTOM", "name": "progress", "value": {"step": 1}},
        {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"})),
    ("partly-applied-patch", (
        {"type": "RUN_STARTED", "threadId": "t", "runId": "r"},
        {"type": "ACTIVITY_SNAPSHOT", "messageId": "a", "activityType": "PLAN",
         "content": {"n": 0}},
        {"type": "ACTIVITY_DELTA", "messageId": "a", "activityType": "PLAN",
         "patch": [{"op": "replace", "path": "/n", "value": 5},
                   {"op": "remove", "path": "/missing"}]},
        {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"})),
)
"""Witnesses the tool's search does not reach: ``(id, wire events)``, added to the pool after
the tool's own traces. Its vocabulary has no pass-through event, and its patches that fail
fail at their first operation, so no trace of it shows a patch whose earlier operation applied
before a later one failed (SNP-NO-PARTIAL)."""


@lru_cache(maxsize=2)
def witness_pool(bfs_depth: int = 3) -> tuple:
    """The tool's traces and :data:`EXTRA_WITNESSES`, shortest first (ties: searched traces,
    then probes, then the extra witnesses, each in pool order):
    ``((id, wire events), ...)`` (computed once a process; do not change the events)."""
    from counterexamples.peers.generate import generated_traces
    traces, _ = generated_traces(seed=0, stateful=0, bfs_depth=bfs_depth)
    # at equal length the searched traces (the corpus, the breadth-first ones) come before the
    # hand-written probes, which aim at edge cases of a peer (a root patch, an echoed input)
    # rather than at the plain case a clause's fixture should show
    rank = {"probe": 1}
    indexed = [(len(t.wire), rank.get(t.source, 0), i, t.id, list(t.wire))
               for i, t in enumerate(traces) if t.state is None]
    indexed += [(len(w), 2, len(traces) + i, tid, [dict(e) for e in w])
                for i, (tid, w) in enumerate(EXTRA_WITNESSES)]
    indexed.sort(key=lambda x: x[:3])
    return tuple((tid, wire) for *_, tid, wire in indexed)


def _branch_clauses(wire: Sequence[dict], reading) -> set:
    """The clauses cited by the branches the model's fold under ``reading`` takes, and by those
    that surfaced its warnings (``member.strip``'s notices are warnings, not a step's branch),
    and, when the final state holds an activity message, run-input stripping's."""
    from model.branches import BRANCHES
    from model.verdict import fold
    from model.wire import parse_events
    records = fold(parse_events(wire), reading)
    out = {c for r in records for c in BRANCHES.get(r.branch, ())}
    out.update(c for r in records for w in r.warnings for c in BRANCHES.get(w.branch, ()))
    if records and any(m.is_activity for m in records[-1].after.messages):
        out.update(BRANCHES.get("run-input.strip", ()))
    return out


def _open_questions(wire: Sequence[dict], held: Sequence[dict] = ()) -> list[str]:
    """The knobs whose options give different verdicts on this trace from a consumer holding
    the wire messages ``held`` (sorted)."""
    from model.consumer import initial_state
    from model.verdict import LeavesExceeded, knob_splits, reading_leaves
    from model.wire import parse_events, parse_message
    start = initial_state(None, tuple(parse_message(m, "input", []) for m in held))
    try:
        return sorted(knob_splits(reading_leaves(parse_events(wire), start)))
    except LeavesExceeded:
        return ["(too many readings to tell)"]


@dataclass(frozen=True)
class Generated:
    """One target clause's outcome.

    Attributes:
        clause: the clause id.
        fixture: the fixture document, or None when not shipped.
        mutant: the zoo mutant whose failure verifies ``kill`` ('' when none).
        witness: the id of the trace it was built from ('' when none was found).
        note: why it was not shipped, or the open questions its verdict depends on.
    """

    clause: str
    fixture: Optional[dict]
    mutant: str = ""
    witness: str = ""
    note: str = ""


def _passes(doc: dict, reading, consumer=None) -> bool:
    """Whether the consumer (default the reference) passes the fixture document."""
    from counterexamples.conformance.fixtures import Fixture
    fx = Fixture(doc["name"], "<generated>", doc)
    return judge(fx, model_answers([fx], reading, consumer)[0]).status == "passed"


def _kill(doc: dict, clause: str, reading, exercised: set) -> tuple[str, str]:
    """``(mutant name, kill text)`` of the mutant that fails the fixture: one of the clause's
    own first, then one whose clause the witness exercises, then any, each in the zoo's order;
    ``("", why)`` when the reference fails it or no mutant does."""
    from properties.zoo import MUTANTS
    if not _passes(doc, reading):
        return "", "the reference consumer does not pass it"
    ranked = sorted(MUTANTS, key=lambda m: (m.clause != clause, m.clause not in exercised))
    for m in ranked:
        if not _passes(doc, reading, m):
            return m.name, f"zoo mutant {m.name} ({m.clause}): {m.description}"
    return "", "no zoo mutant fails it"


def trace_fixture(name: str, wire: Sequence[dict], reading, spec_page: str, description: str,
                  clause: str = "", reading_label: str = "draft", state=None) -> dict:
    """A fixture from any trace (a finding's witness, a questions witness, a trace file): its
    identifiers prefixed with ``name``, ``expect`` from the model's verdict under ``reading``
    (from the agent ``state`` when given, carried as ``input.state``), the open questions the
    verdict depends on said in the description, and ``kill`` verified on the zoo (a mutant of
    ``clause`` first) or, when no mutant fails it, saying so (``not verified: ...``).
    Raises ValueError for a name that is not a fixture name (:func:`fixture_of`)."""
    from model.consumer import initial_state
    from model.verdict import evaluate
    from model.wire import parse_events
    events, _ = prefix_ids(name, wire)
    verdict = evaluate(parse_events(events), reading, start=initial_state(state))
    said = _said(_open_questions(events), reading_label)
    run_in = None if state is None else {"state": state}
    doc = fixture_of(name, events, expect_of_verdict(events, verdict), reading, spec_page,
                     description + said, input_=run_in)
    mutant, kill = _kill(doc, clause, reading, _branch_clauses(events, reading))
    doc["kill"] = kill if mutant else f"not verified: {kill}"
    return doc


def _name(clause_id: str) -> str:
    return clause_id.lower()


def _build(clause, wire: Sequence[dict], reading, reading_label: str, describe: bool = True,
           note: str = "") -> dict:
    """The fixture document for ``clause`` from the witness ``wire`` (kill not yet set);
    ``describe=False`` skips the open-question analysis (a candidate being tried); ``note`` is
    added to the description (``"; ..."``)."""
    from model.verdict import evaluate
    from model.wire import parse_events
    name = _name(clause.id)
    page = spec_page_of(clause.page)
    events, _ = prefix_ids(name, wire)
    summary = clause.summary.rstrip(".")
    if clause.id in RUN_INPUT_CLAUSES:
        held = evaluate(parse_events(events), reading).to_json()["messages"]
        run = [{"type": "RUN_STARTED", "threadId": f"{name}-t", "runId": f"{name}-r"},
               {"type": "RUN_FINISHED", "threadId": f"{name}-t", "runId": f"{name}-r"}]
        kept = [m for m in held if m.get("role") != "activity"]
        expect = {"outcome": "completed", "request": {"messages": kept}}
        said = _said(_open_questions(run, held) if describe else [], reading_label)
        return fixture_of(name, run, expect, reading, page,
                          f"{clause.id}: {summary}{said}{note}", input_={"messages": held})
    verdict = evaluate(parse_events(events), reading)
    said = _said(_open_questions(events) if describe else [], reading_label)
    return fixture_of(name, events, expect_of_verdict(events, verdict), reading, page,
                      f"{clause.id}: {summary}{said}{note}")


def _said(open_q: Sequence[str], reading_label: str) -> str:
    """The description's note on the open questions a verdict depends on ('' for none)."""
    if not open_q:
        return ""
    return (f"; the verdict depends on {', '.join(open_q)} and is generated under the "
            f"{reading_label} reading")


def generate(reading=None, reading_label: str = "draft", bfs_depth: int = 3) -> list[Generated]:
    """One :class:`Generated` per :func:`target_clauses` entry, in registry order."""
    from model.readings import DRAFT
    reading = reading or DRAFT
    from properties.zoo import MUTANTS
    pool = witness_pool(bfs_depth)
    targets = target_clauses()
    wanted = {c.id for c in targets}
    own = {cid: [m for m in MUTANTS if m.clause == cid] for cid in wanted}
    first: dict[str, tuple] = {}     # the shortest citing witness
    chosen: dict[str, tuple] = {}    # the shortest one a mutant of the clause's own fails,
    # and every consumer taking a deviation against the clause (:func:`_deviation_readings`)
    own_only: dict[str, tuple] = {}  # the shortest one a mutant of its own fails (deviations
    # aside), when no witness fails both
    deviants = {cid: _deviation_readings(cid, reading) for cid in wanted}
    by_id = {c.id: c for c in targets}
    settled: dict[str, bool] = {}    # trace id -> no open question splits its verdict
    hits: dict[str, Optional[set]] = {}  # trace id -> the clauses its fold cites (None: no step)
    # two passes: first only traces every reading agrees on (a fixture any faithful client
    # must pass, whatever it does on the open questions), then any trace for what is left
    for settled_only in (True, False):
        for tid, wire in pool:
            if len(chosen) == len(wanted):
                break
            if tid not in hits:
                try:
                    hits[tid] = _branch_clauses(wire, reading)
                except Exception:  # a trace the model cannot step is no witness
                    hits[tid] = None
                for cid in sorted((hits[tid] or set()) & wanted):
                    first.setdefault(cid, (tid, wire, hits[tid]))
            hit = hits[tid]
            if hit is None:
                continue
            todo = [cid for cid in sorted(hit & wanted) if cid not in chosen and own[cid]]
            if not todo:
                continue
            if settled_only:
                if tid not in settled:
                    settled[tid] = not _open_questions(wire)
                if not settled[tid]:
                    continue
            for cid in todo:
                doc = _build(by_id[cid], wire, reading, reading_label, describe=False)
                if _passes(doc, reading) and any(not _passes(doc, reading, m)
                                                 for m in own[cid]):
                    own_only.setdefault(cid, (tid, wire, hit))
                    if all(not _passes(doc, deviant) for deviant in deviants[cid]):
                        chosen[cid] = (tid, wire, hit)
    out = []
    draft_cited = None  # the clauses some pool trace cites under draft (off-draft readings only)
    for c in targets:
        if c.id not in first:
            out.append(Generated(c.id, None, note=_unreached_note(c, pool, reading)))
            continue
        tid, wire, hit = chosen.get(c.id) or own_only.get(c.id) or first[c.id]
        note = ""
        if reading != DRAFT:
            if draft_cited is None:
                draft_cited = _cited_by_pool(pool, DRAFT)
            if c.id not in draft_cited:
                note = ("; not observable by a consumer under the draft reading (no trace of "
                        "the pool takes a branch citing it there)")
        doc = _build(c, wire, reading, reading_label, note=note)
        mutant, kill = _kill(doc, c.id, reading, hit)
        if not mutant:
            out.append(Generated(c.id, None, witness=tid, note=kill))
            continue
        doc["kill"] = kill
        fixture_from_json(doc)  # the gate every shipped fixture passes
        out.append(Generated(c.id, doc, mutant, tid))
    return out


def _cited_by_pool(pool: Sequence, reading) -> set:
    """Every clause some trace of ``pool`` cites under ``reading`` (:func:`_branch_clauses`)."""
    out: set = set()
    for _, wire in pool:
        try:
            out |= _branch_clauses(wire, reading)
        except Exception:  # a trace the model cannot step is no witness
            continue
    return out


def _unreached_note(clause, pool: Sequence, reading) -> str:
    """Why ``clause`` is not shipped when no pool trace cites it under ``reading``: computed, by
    trying each other option of the knobs of the clause's questions (in the clause's order,
    options in the knob's) for the first reading under which a pool trace does cite it, and
    naming the ``--reading`` that ships its fixture."""
    from model.readings import KNOB_BY_ID
    base = "no trace of the pool takes a branch citing it"
    for qid in clause.questions:
        knob = KNOB_BY_ID.get(qid)
        if knob is None:
            continue
        current = reading.as_dict()[qid]
        for option, _ in knob.options:
            if option == current:
                continue
            alt = reading.with_(**{qid: option})
            for tid, wire in pool:
                try:
                    if clause.id in _branch_clauses(wire, alt):
                        return (f"{base}: not observable by a consumer under the "
                                f"{reading.name or 'draft'} reading; "
                                f"under {qid}={option} `{tid}` does (`conformance generate "
                                f"--reading {alt.name}` ships it)")
                except Exception:  # a trace the model cannot step is no witness
                    continue
    return base


def coverage_table(generated: Sequence[Generated], official: Sequence = ()) -> str:
    """Markdown: each target clause, its keyword, the generated fixture and the mutant that
    verifies it (or why none is shipped), and the official activity fixtures (``official``:
    :class:`~counterexamples.conformance.fixtures.Fixture` list) whose stream takes a branch
    citing it under the draft reading."""
    from model.clauses import get
    from model.readings import DRAFT
    hits = {f.name: _branch_clauses(f.stream, DRAFT) for f in official}
    rows = ["| clause | keyword | generated fixture | kill (mutant) | official fixtures |",
            "| --- | --- | --- | --- | --- |"]
    for g in generated:
        c = get(g.clause)
        theirs = ", ".join(f"`{n}`" for n in sorted(hits) if g.clause in hits[n]) or "-"
        ours = f"`{g.fixture['name']}`" if g.fixture else f"not shipped: {g.note}"
        rows.append(f"| {g.clause} | {c.keyword} | {ours} | {g.mutant or '-'} | {theirs} |")
    shipped = sum(1 for g in generated if g.fixture)
    return "\n".join(rows) + (f"\n\n{len(generated)} clauses: {shipped} with a fixture, "
                              f"{len(generated) - shipped} reported, not shipped.\n")


def write_corpus(out_dir: str, generated: Sequence[Generated], table: str) -> list[str]:
    """Write ``out_dir/streams/NAME.json`` for each shipped fixture, ``streams/MANIFEST.txt``
    and ``coverage.md``; ``out_dir`` must not exist or be an empty folder (never a symbolic
    link; nothing is overwritten). Returns the paths written. Raises ValueError (one line)."""
    from counterexamples.outdir import write_new_file
    if os.path.islink(out_dir):
        raise ValueError(f"--out {out_dir}: a symbolic link; not written through")
    if os.path.exists(out_dir) and (not os.path.isdir(out_dir) or os.listdir(out_dir)):
        raise ValueError(f"--out {out_dir}: exists and is not an empty folder; nothing written")
    streams = os.path.join(out_dir, "streams")
    os.makedirs(streams, exist_ok=True)
    written = []
    names = []
    for g in generated:
        if g.fixture is None:
            continue
        path = os.path.join(streams, g.fixture["name"] + ".json")
        write_new_file(path, dumps_fixture(g.fixture))
        written.append(path)
        names.append(g.fixture["name"] + ".json")
    manifest = ("# The generated activity fixtures, sorted (activity-check conformance "
                "generate).\n" + "".join(n + "\n" for n in sorted(names)))
    write_new_file(os.path.join(streams, MANIFEST), manifest)
    write_new_file(os.path.join(out_dir, "coverage.md"), table)
    return written + [os.path.join(streams, MANIFEST), os.path.join(out_dir, "coverage.md")]


def generated_fixtures(reading=None, reading_label: str = "draft") -> list:
    """The shipped generated fixtures as :class:`~counterexamples.conformance.fixtures.Fixture`
    values (in memory, for the matrix and ``conformance run``'s callers)."""
    from counterexamples.conformance.fixtures import Fixture
    return [Fixture(g.fixture["name"], f"<generated>/{g.fixture['name']}.json", g.fixture)
            for g in generate(reading, reading_label) if g.fixture is not None]
