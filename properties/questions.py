"""The settlement table: for each open question Q1..Q25 of the notes (part (b)), the form in which
the tool settles it, computed by the engines, never written by hand (issue 19).

Forms:

* ``"A"``: a knob of the question whose options give different verdicts on a *conformant* trace;
  the shortest such trace is its witness: the all-readings breadth-first sweep of
  :func:`properties.search.explore.explore` over :data:`properties.search.explore.EXPLORE_VOCABULARY`, and for
  a knob of the Z3 fragment also :func:`properties.smt.queries.distinguishing` on the same pair
  of readings (the sweep's split pair, :func:`model.verdict.split_readings`).
* ``"B"``: the question's knobs split only on traces that break a producer clause; the shortest
  such trace: a breadth-first search over the same vocabulary whose prefix is conformant and
  whose last event is any move, adversarial ones (:func:`model.producer.adversarial_moves`)
  included, each trace forked over the readings as :func:`model.verdict.reading_leaves` does
  (incrementally, one event at a time), to :data:`VIOLATING_DEPTH` events at most; for fragment
  knobs also Z3 with conformance dropped.
* ``"C"``: a bounded proof, to a stated depth, that no reading changes a consumer verdict: a Z3
  bounded proof, under every reading at once (:func:`properties.smt.queries.bounded_proof`,
  ``reading=None``), of the property stating the question's consumer side (``proofs``); or an
  exhaustive all-readings search finding no violation of such a property to the depth
  (``searches``, over :data:`OPEN_CONTENT_VOCABULARY`); or, for a knob, the searches above
  finding no split to their depths. For a producer-side question (a knob of
  :data:`model.producer.PRODUCER_ONLY_KNOBS`, which the consumer never consults) the row also
  carries the shortest trace whose conformance an option changes
  (:func:`model.producer.conformance_splits`).
* ``None``: not settled: the question has no knob and no proof in the model yet.

Lengths count events with the opening RUN_STARTED, in both engines (the fragment's
:attr:`properties.smt.queries.Witness.length` is its abstract events plus one), so a BFS and a Z3
length compare as they are.

Each row (:func:`settle`) is a dict with wire names: ``question``, ``title``, ``form``, ``knobs``,
``knob`` (the one whose witness is shown), ``length`` (the shortest witness's events),
``engine`` (``"BFS"``, ``"Z3"`` or ``"both"``: which engine found a witness of that length; for C
the engine of the proof), ``bfsLength`` and ``z3Length`` (each engine's own, None where it found
none or was not asked), ``readings`` (the two readings of the split, as text), ``witness`` (wire
events), ``witnessFile`` (where :func:`counterexamples.report.questions_page.write_questions` puts it,
relative to the output directory), ``options`` (what each option of ``knob`` ends with on the
witness: :func:`option_outcomes`), ``proofs`` (property ids), ``proofDepth`` (for C) and
``note``; for a row settled by proofs, ``proven`` (``[{"property", "engine", "statement"}]``)
and ``settles`` (why they answer the question); and ``closing``: how many events were appended to the shortest witness to end what it
left open (:func:`model.producer.closing_events`: RUN_FINISHED, and the ends of open texts, tool
calls, steps and invocations), kept only where the split and the option outcomes stay as they
were, so that a witness file is a complete stream that ``lint`` judges as its form says
(``length`` is the shortest witness's, ``witness`` holds ``length + closing`` events).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np

from model.consumer import initial_state, step as model_step
from model.producer import (PRODUCER_ONLY_KNOBS, Belief, adversarial_moves, advance,
                            check_trace, closing_events, conformance_splits, moves)
from model.readings import (DRAFT, KNOB_BY_ID, KnobUnset, PartialReading, Reading,
                            describe_assignment)
from model.verdict import (Verdict, evaluate, knob_splits, split_readings, splits_of,
                           verdict_key, visible_key)
from properties.search.bfs import Expansion, TransitionSystem
from properties.search.store import Interned, mix, pack_key

__all__ = ["Question", "QUESTIONS", "QUESTION_BY_ID", "settle", "settled_count",
           "option_outcomes", "engine_lengths", "OPEN_CONTENT_VOCABULARY", "VIOLATING_DEPTH",
           "QUESTIONS_DIR", "LIFECYCLE_VOCABULARY", "DEEPER", "closed_witness", "split_key",
           "violating_pair"]

DEEPER = 2
"""How many events past the sweep's depth the pair search for a knob that nothing split goes
(over :data:`LIFECYCLE_VOCABULARY`): lifecycle knobs need a run or an invocation to end, which
takes events the sweep's depth does not reach."""

VIOLATING_DEPTH = 3
"""The longest trace the form-B search tries (events): its last event ranges over every
adversarial move, so each level costs far more than a conformant one."""

QUESTIONS_DIR = "questions"
"""Where the witnesses' trace files go, relative to an output directory (``<Q-id>.jsonl``)."""


@dataclass(frozen=True)
class Question:
    """One open question: ``id`` (``"Q1"``), a short ``title`` in our words, the ``knobs`` that
    model it, ``proofs``: ids of Z3 proof properties stating its consumer side
    (:data:`properties.smt.checks.PROOF_BY_ID`), and ``searches``: ids of properties an
    exhaustive all-readings search checks for it
    (:data:`properties.catalogue.QUESTION_PROPERTIES`); both give form C. ``settles``: for a
    question settled by a proof or a search, why that property answers it, in our words (the
    page prints it after what was proven)."""

    id: str
    title: str
    knobs: tuple[str, ...] = ()
    proofs: tuple[str, ...] = ()
    searches: tuple[str, ...] = ()
    settles: str = ""


QUESTIONS: tuple[Question, ...] = (
    Question("Q1", "Does a declined replace:false snapshot merge its metadata?", ("Q1",)),
    Question("Q2", "Does an untagged replace:false agree with a subagent owner?", ("Q2",)),
    Question("Q3", "What may a consumer do with a disagreeing replace:false?", ("Q3",)),
    Question("Q4", "Must a delta's subagentRunId match the activity's opener?",
             ("Q4", "Q4-opener")),
    Question("Q5", "Does a delta whose patch fails still retype?", ("Q5",)),
    Question("Q6", "What does 'metadata keeps merging' mean (failed delta, MESSAGES_SNAPSHOT)?",
             ("Q6", "Q6-ms")),
    Question("Q7", "What follows a patch result that is not an object?", ("Q7",)),
    Question("Q8", "How do activity messages survive MESSAGES_SNAPSHOT?", ("Q8",)),
    Question("Q9", "ACTIVITY_SNAPSHOT on an id held by a non-activity message", ("Q9",)),
    Question("Q10", "'Has not seen' or 'does not hold'?", ("Q10",)),
    Question("Q11", "Where does an activity stand after a replacing snapshot?", ("Q11",)),
    Question("Q12", "Who counts as 'it' that created the activity a delta continues?",
             ("Q12",)),
    Question("Q13", "May a consumer fail the run on a patch that does not apply?", ("Q13",)),
    Question("Q14", "Does a replace:false snapshot resynchronise?", ("Q14",)),
    Question("Q15", "Activities of finished or abandoned subagent invocations", ("Q15",)),
    Question("Q16", "May the parent send untagged deltas to a subagent's activity?",
             proofs=("P19-untagged-accepted",),
             settles="The consumer cannot tell a parent's untagged delta from a subagent's "
             "untagged continuation, and the question is whether its verdict depends on which "
             "one it is. The proof shows that under no reading does an untagged delta on a live "
             "activity draw an ownership warning or fatal, whoever owns the activity: every "
             "reading takes it as a continuation, so no consumer verdict turns on the answer "
             "(whether the producer may send it is the producer-side question Q12)."),
    Question("Q17", "Stripping scope on the producer side (the RUN_STARTED.input echo)",
             ("Q17",)),
    Question("Q18", "Schema vs prose on the scope of replace:false", ("Q18",)),
    Question("Q19", "Overlapping rows of the metadata table", ("Q19",)),
    Question("Q20", "Unknown operations inside an activity patch", ("Q20",)),
    Question("Q21", "Which null handling applies (fatal or shimmed)?", ("Q21",)),
    Question("Q22", "What 'skip' and 'fail the run' mean",
             proofs=("P12-delta-missing-tolerated", "P15-patch-atomic", "P39-fatal-justified"),
             settles="Within a run no reading gives the two words different effects: a skipped "
             "delta changes nothing and never fails the run (P12, P15), and a fatal comes only "
             "where the draft makes the input fatal, keeping what was delivered (P39). Readings "
             "could part only after a fatal, on a later run of the same stream, which no engine "
             "steps."),
    Question("Q23", "Activity events across run boundaries", ("Q23",)),
    Question("Q24", "A delta after a replace:false creation",
             proofs=("PQ24-replace-false-creates",),
             settles="The question is whether an activity created by a replace:false snapshot "
             "is a baseline like any other. The proof shows that such a creation leaves exactly "
             "the state the same snapshot without replace leaves, under every reading, so every "
             "later event, a delta included, meets the same consumer either way."),
    Question("Q25", "Open content and unknown keys", searches=("PQ25-content-open",),
             settles="The question is whether processing may strip unknown content keys or "
             "nulls inside content. The exhaustive search over content with unknown keys and "
             "nulls at every depth, patched by operations that add nulls, replace nested ones "
             "and mix in an unknown op, finds no step under any reading that holds content "
             "other than what the producer stated or a patch made of it."),
)
"""Q1..Q25 in order; a question with neither knobs nor proofs nor searches is not modelled
yet."""

QUESTION_BY_ID = {q.id: q for q in QUESTIONS}

_unknown = [k for q in QUESTIONS for k in q.knobs if k not in KNOB_BY_ID]
if _unknown:  # pragma: no cover - a declaration error, raised at import
    raise ImportError(f"QUESTIONS names unknown knobs: {_unknown}")
del _unknown


def _open_content_vocabulary():
    from dataclasses import replace
    from properties.search.explore import EXPLORE_VOCABULARY
    return replace(
        EXPLORE_VOCABULARY, owners=(None,), activity_types=("PLAN",), metadata=(None,),
        contents=({"n": None, "x-open": {"deep": None}, "list": [None, {}]},),
        patches=(("add-null", ({"op": "add", "path": "/x-added", "value": None},)),
                 ("replace-deep", ({"op": "replace", "path": "/x-open/deep",
                                    "value": {"k": None}},)),
                 ("unknown-op", ({"op": "increment", "path": "/n"},
                                 {"op": "add", "path": "/y", "value": None})),
                 ("remove-missing", ({"op": "remove", "path": "/missing"},))))


OPEN_CONTENT_VOCABULARY = _open_content_vocabulary()
"""The finite world of the Q25 search: the exploration's two activity ids and text id, one type,
the parent only, and content with unknown keys and nulls at every depth (``{"n": null,
"x-open": {"deep": null}, "list": [null, {}]}``), patched by operations that add nulls, replace
a nested null, mix an unrecognised op with one that adds a null (Q20), or fail."""


def _lifecycle_vocabulary():
    from dataclasses import replace
    from properties.search.explore import EXPLORE_VOCABULARY
    return replace(EXPLORE_VOCABULARY, activity_ids=("act-1",), text_ids=(),
                   activity_types=("PLAN",), patches=(EXPLORE_VOCABULARY.patches[0],),
                   metadata=(None,), replace_flags=(None,))


LIFECYCLE_VOCABULARY = _lifecycle_vocabulary()
"""The small world of the deeper pair search: one activity, the parent and one subagent, one
patch that applies, two runs (as the exploration's vocabulary), so that a trace can end a
run or an invocation and go on (Q15, Q23) within a few events."""


def settle(depth: int = 4, z3: bool = True, report=None) -> list[dict]:
    """The settlement table (see the module docstring), one row per question of
    :data:`QUESTIONS`, in order.

    Args:
        depth: the bound of every search (events, RUN_STARTED included) and of every proof; the
            form-B search stops at ``min(depth, VIOLATING_DEPTH)``.
        z3: also ask the Z3 fragment (fragment knobs and proofs); False: breadth-first only
            (a question settled only by a Z3 proof is then unsettled).
        report: an :class:`properties.search.report.ExploreReport` of ``explore(depth=depth,
            reading=None, properties=())`` already computed (``run``'s own), reused when its
            depth is ``depth`` and it completed; otherwise the sweep is run here.

    Raises:
        ValueError: depth below 2 (no activity event fits after RUN_STARTED)."""
    if depth < 2:
        raise ValueError(f"depth must be at least 2, not {depth}")
    from properties.search.explore import EXPLORE_VOCABULARY, ExploreOptions, explore
    if report is None or report.depth != depth or not report.complete:
        report = explore(ExploreOptions(depth=depth, reading=None, properties=()))
        if report.stopped_by == "interrupted":  # no table from part of a sweep
            raise KeyboardInterrupt
    conformant = {k: (tuple(trace), pair) for k, (trace, pair) in report.splits.items()}
    mine = {k for q in QUESTIONS for k in q.knobs}
    producer_side = [k for k in PRODUCER_ONLY_KNOBS if k in mine]
    producer = conformance_splits(producer_side, depth, EXPLORE_VOCABULARY) if producer_side \
        else {}
    wanted = {k for k in mine if k not in conformant and k not in PRODUCER_ONLY_KNOBS}
    violating = _violating_splits(min(depth, VIOLATING_DEPTH), wanted)
    beyond = _deeper_splits(wanted - set(violating), depth + DEEPER)
    conformant.update({k: v for k, v in beyond.items() if k not in conformant})
    return [_row(q, depth, conformant, violating, producer, z3) for q in QUESTIONS]


def _deeper_splits(knobs: set, depth: int) -> dict:
    """``{knob: (trace, pair)}``: for knobs no search above split, the shortest conformant
    trace up to ``depth`` events over :data:`LIFECYCLE_VOCABULARY` on which draft and draft
    with the knob at another option differ (one search for every pair:
    :func:`properties.search.system_pair.shortest_distinguishing_each`; options in order, the
    shortest kept)."""
    from properties.search.system_pair import shortest_distinguishing_each
    pairs = [(knob_id, option) for knob_id in sorted(knobs, key=list(KNOB_BY_ID).index)
             for option in KNOB_BY_ID[knob_id].option_names
             if option != KNOB_BY_ID[knob_id].draft]
    traces = shortest_distinguishing_each(
        DRAFT, [DRAFT.with_(**{k: o}) for k, o in pairs], depth,
        LIFECYCLE_VOCABULARY) if pairs else []  # one search for every pair
    found: dict = {}
    for (knob_id, option), trace in zip(pairs, traces):
        if trace is not None and (knob_id not in found or
                                  len(trace) < len(found[knob_id][0])):
            found[knob_id] = (tuple(trace), ({knob_id: KNOB_BY_ID[knob_id].draft},
                                             {knob_id: option}))
    return found


def settled_count(rows: list[dict]) -> int:
    """How many rows have a form."""
    return sum(1 for r in rows if r["form"] is not None)


def _row(question: Question, depth: int, conformant: dict, violating: dict, producer: dict,
         z3: bool) -> dict:
    row = {"question": question.id, "title": question.title, "form": None,
           "knobs": list(question.knobs), "knob": None, "length": None, "engine": None,
           "bfsLength": None, "z3Length": None, "readings": None, "witness": None,
           "witnessFile": None, "options": None, "closing": 0,
           "proofs": list(question.proofs + question.searches),
           "proofDepth": None, "note": ""}
    for form, table in (("A", conformant), ("B", violating)):
        found = [(len(table[k][0]), i, k) for i, k in enumerate(question.knobs) if k in table]
        if found:
            _, _, knob = min(found)
            _split_row(row, form, knob, *table[knob], z3, depth)
            return row
    found = [(len(producer[k][0]), i, k) for i, k in enumerate(question.knobs) if k in producer]
    if found:
        _, _, knob = min(found)
        trace, draft, other = producer[knob]
        _producer_row(row, knob, trace, (draft, other), depth)
        return row
    if question.knobs:
        row.update(form="C", engine="BFS", proofDepth=depth, note=(
            f"no split to depth {depth} on conformant traces (to {depth + DEEPER} in the pair "
            f"search), nor to depth {min(depth, VIOLATING_DEPTH)} after a producer violation"))
        return row
    proved = [(pid, engine) for pid, engine in _proofs(question, depth, z3)]
    if proved and all(engine is not None for _, engine in proved):
        engines = {engine for _, engine in proved}
        row.update(form="C", engine=engines.pop() if len(engines) == 1 else "both",
                   proofDepth=depth, note="no violation under any reading to depth "
                   f"{depth}: " + ", ".join(pid for pid, _ in proved),
                   proven=[{"property": pid, "engine": engine, "statement": _statement(pid)}
                           for pid, engine in proved],
                   settles=question.settles)
        return row
    failed = [pid for pid, engine in proved if engine is None]
    row["note"] = (f"not proved: {', '.join(failed)}" if failed else
                   "not modelled yet: no knob and no proof")
    return row


def _statement(pid: str) -> str:
    """The statement of a proof or search property, in words."""
    from properties.catalogue import QUESTION_PROPERTIES
    if pid in QUESTION_PROPERTIES:
        return QUESTION_PROPERTIES[pid].statement
    from properties.smt.checks import PROOF_BY_ID
    return PROOF_BY_ID[pid].statement


def _proofs(question: Question, depth: int, z3: bool):
    """``(property id, engine or None)`` for each of the question's proofs and searches: the
    engine that proved it to ``depth`` under every reading, None where a violation was found
    (or the proof could not be asked: Z3 off)."""
    if question.proofs:
        from properties.smt.queries import bounded_proof
        for pid in question.proofs:
            ok = z3 and bounded_proof(pid, depth, reading=None).status == "unsat"
            yield pid, "Z3" if ok else None
    for pid in question.searches:
        from properties.catalogue import QUESTION_PROPERTIES
        from properties.search.explore import ExploreOptions, explore
        found = explore(ExploreOptions(depth=depth, reading=None,
                                       vocabulary=OPEN_CONTENT_VOCABULARY,
                                       properties=(QUESTION_PROPERTIES[pid],)))
        if found.stopped_by == "interrupted":
            raise KeyboardInterrupt
        yield pid, "BFS" if found.complete and not found.violations else None


def _split_row(row: dict, form: str, knob: str, trace: tuple, pair: tuple, z3: bool,
               depth: int) -> None:
    """Fill a form A or B row from the breadth-first witness, compared with Z3's on the same
    pair of readings (the shorter wins; ``both`` on a tie)."""
    bfs_len, length, engine = len(trace), len(trace), "BFS"
    z3_witness = _z3_witness(knob, pair, form == "A", bfs_len) if z3 else None
    z3_len = None if z3_witness is None else z3_witness.length
    if z3_len is not None and z3_len < bfs_len:
        trace, length, engine = tuple(z3_witness.trace), z3_len, "Z3"
    elif z3_len == bfs_len:
        engine = "both"
    shown = closed_witness(trace, knob, pair)
    row.update(form=form, knob=knob, length=length, engine=engine, bfsLength=bfs_len,
               z3Length=z3_len, readings=[describe_assignment(a) for a in pair],
               witness=[e.to_wire() for e in shown], closing=len(shown) - len(trace),
               witnessFile=f"{QUESTIONS_DIR}/{row['question']}.jsonl",
               options=option_outcomes(shown, knob, pair),
               note=f"knob {knob}: " + ("a conformant trace" if form == "A" else
                                        "only after a producer violation (no conformant split "
                                        f"to depth {depth})"))
    if len(trace) > depth:
        row["note"] += " (longer than the sweep's depth: the pair search over the lifecycle " \
            "vocabulary)"


def _producer_row(row: dict, knob: str, trace: tuple, options: tuple, depth: int) -> None:
    """Fill a producer-side form C row: no consumer verdict reads the knob; its options change
    the conformance of ``trace``."""
    outcomes, core = [], len(trace)
    shown = tuple(trace) + closing_events(trace)
    if any(i >= core for o in KNOB_BY_ID[knob].option_names
           for i, _ in check_trace(shown, DRAFT.with_(**{knob: o}))):
        shown = tuple(trace)  # a closing event would break a clause itself: not appended
    trace = shown
    for option in KNOB_BY_ID[knob].option_names:
        reading = DRAFT.with_(**{knob: option})
        broken = [v.clause for i, v in check_trace(trace, reading) if i == core - 1]
        outcomes.append({"option": option, "reading": reading.name or "draft",
                         "conformant": not broken, "breaks": sorted(set(broken))})
    row.update(form="C", knob=knob, length=core, engine="BFS", bfsLength=core,
               closing=len(trace) - core,
               readings=[f"{knob}={o}" for o in options], witness=[e.to_wire() for e in trace],
               witnessFile=f"{QUESTIONS_DIR}/{row['question']}.jsonl", options=outcomes,
               proofDepth=depth,
               note=f"producer-side knob {knob}: no consumer step reads it; its options "
                    "change this trace's conformance")


def closed_witness(trace, knob: str, pair: tuple) -> tuple:
    """``trace`` with its :func:`model.producer.closing_events` appended (the stream complete:
    every run it opened finished) when that keeps the witness what it was: the knob still splits
    it (:func:`model.verdict.splits_of`), its options, in the pair's context, end
    in as many different verdicts as before and in the same place relative to each other (the
    same outcomes compare equal), and the closing events break no producer clause (under draft)
    that the trace does not already break. Otherwise ``trace`` itself (a tuple)."""
    trace = tuple(trace)
    ending = closing_events(trace)
    if not ending:
        return trace
    shown = trace + ending
    base = split_readings(pair, knob)[0]

    def classes(events) -> list[int]:
        keys = [verdict_key(evaluate(events, base.with_(**{knob: o})))
                for o in KNOB_BY_ID[knob].option_names]
        return [keys.index(k) for k in keys]

    if knob not in splits_of(shown) or classes(shown) != classes(trace) or \
            not {v.clause for _, v in check_trace(shown)} <= \
            {v.clause for _, v in check_trace(trace)}:
        return trace
    return shown


def split_key(verdict: Verdict) -> str:
    """What a form-B witness must tell apart: the whole verdict (:func:`model.verdict.verdict_key`)
    while the run stands; once the consumer rejected the stream, only what was delivered and
    where it stopped (:func:`model.verdict.visible_key`): a fatal under every option,
    at one event, with the same messages, masks the knob (the codes differ, the reader sees the
    same rejected stream), so such a trace is no witness (issue 39: Q21 needs RUN_STARTED)."""
    if verdict.fatal is None:
        return verdict_key(verdict)
    return visible_key(verdict)


def option_outcomes(trace, knob: str, pair: tuple) -> list[dict]:
    """What each option of ``knob`` ends with on ``trace``, in the split's context (the pair's
    other knobs, draft elsewhere): ``[{"option", "reading", "messages" (wire), "warnings"
    (codes), "fatal" (code or None), "run", "label"}]`` in option order
    (:func:`model.verdict.evaluate`; RUN_STARTED included in ``atEvent`` counts). ``label`` names
    exactly the reading the row is evaluated under: the option, then the split's context (the
    pair's other knobs away from draft, :func:`model.verdict.context_of`), every other knob at
    draft (``"Q3=warn,Q2=parent"``); the page's table and diagram use it alike."""
    from model.verdict import context_of
    base = split_readings(pair, knob)[0]
    context = context_of(pair, knob)
    out = []
    for option in KNOB_BY_ID[knob].option_names:
        reading = base.with_(**{knob: option})
        doc = evaluate(trace, reading).to_json(detail=False)
        label = f"{knob}={option}" + (f",{describe_assignment(context)}" if context else "")
        out.append({"option": option, "reading": reading.name or "draft", "label": label,
                    "messages": doc["messages"], "warnings": [w["code"] for w in doc["warnings"]],
                    "fatal": doc["fatal"] and doc["fatal"]["code"], "run": doc["run"]})
    return out


def _z3_witness(knob: str, pair: tuple, conformant: bool, bound: int):
    """Z3's shortest trace (up to ``bound`` events) on which the pair's two readings differ, or
    None: knob outside the fragment, a context outside it, or none that short."""
    from properties.smt.encoding import FRAGMENT_KNOBS
    from properties.smt.queries import distinguishing
    if knob not in FRAGMENT_KNOBS:
        return None
    a, b = split_readings(pair, knob)
    try:
        answer = distinguishing(a, b, bound, conformant=conformant)
    except ValueError:  # the split's context fixes a knob outside the fragment
        return None
    return answer.witness if answer.status == "sat" else None


def engine_lengths(report) -> dict[str, tuple[int, Optional[int], Optional[int]]]:
    """For each knob of the Z3 fragment the all-readings sweep ``report`` splits, ``(BFS
    length, Z3's shortest on the same pair of readings searched up to that length, Z3's
    shortest against draft over every other option searched up to one event less)``, None
    where Z3 found none that short. The exploration vocabulary reaches the knob's shortest
    witness exactly when the second equals the first and the third is None (issue 19, item 4):
    no trace of the fragment's world is shorter, in the split's context or in draft's."""
    from properties.smt.encoding import FRAGMENT_KNOBS
    from properties.smt.queries import distinguishing
    out = {}
    for knob, (trace, pair) in report.splits.items():
        if knob not in FRAGMENT_KNOBS:
            continue
        same = _z3_witness(knob, pair, True, len(trace))
        shorter = []
        for option in KNOB_BY_ID[knob].option_names:
            if option == KNOB_BY_ID[knob].draft or len(trace) - 1 < 2:
                continue
            answer = distinguishing(DRAFT, DRAFT.with_(**{knob: option}), len(trace) - 1)
            if answer.status == "sat":
                shorter.append(answer.length)
        out[knob] = (len(trace), same and same.length, min(shorter) if shorter else None)
    return out


# --- form B: the shortest split after a producer violation ---------------------------------------

def _fork(leaves: list, event, index: int) -> list:
    """Every leaf ``(assignment, state, warnings, fatal)`` stepped by ``event`` (the event at
    ``index``), forked over each knob the step consults that the leaf leaves open, as
    :func:`model.verdict.reading_leaves` does; a halted leaf stays as it is."""
    out = []
    for assignment, state, warnings, fatal in leaves:
        if fatal is not None:
            out.append((assignment, state, warnings, fatal))
            continue
        work = [assignment]
        while work:
            a = work.pop()
            try:
                result = model_step(state, event, PartialReading(a))
            except KnobUnset as unset:
                knob = KNOB_BY_ID[unset.knob_id]
                work.extend({**a, knob.id: o} for o in reversed(knob.option_names))
                continue
            w = warnings + tuple((index, x) for x in result.warnings) if result.warnings \
                else warnings
            f = (index, result.fatal) if result.fatal is not None else None
            out.append((a, result.state, w, f))
    return out


def _violating_splits(depth: int, wanted: set) -> dict:
    """``{knob: (trace, pair)}``: for each wanted knob, the shortest trace over
    :data:`~properties.search.explore.EXPLORE_VOCABULARY` (up to ``depth`` events) whose prefix is
    conformant under draft and whose last event is any move, adversarial ones included, on
    which the knob splits the readings (:func:`model.verdict.knob_splits`); breadth-first,
    first found on ties: :class:`SplitSystem` on the one driver
    (:func:`properties.search.bfs.search`)."""
    from properties.search.bfs import LocalEngine, search
    from properties.search.explore import EXPLORE_VOCABULARY
    system = SplitSystem(EXPLORE_VOCABULARY, wanted)
    found = search(system, depth, LocalEngine(system))
    found.raise_if_interrupted()
    out: dict = {}
    for (_, knob), (_, _, (node, move, pair)) in found.findings.items():
        out[knob] = (system.trace_to(found.path(node), move), pair)
    return out


def violating_pair(reading_a: Reading, reading_b: Reading, depth: int = VIOLATING_DEPTH,
                   vocabulary=None) -> Optional[tuple]:
    """The shortest trace, up to ``depth`` events, whose prefix is conformant under draft and
    whose last event is any move, adversarial ones included (the form-B notion of
    :func:`_violating_splits`), on which two complete readings give what :func:`split_key`
    tells apart; None when there is none. Breadth-first over ``vocabulary`` (default
    :data:`~properties.search.explore.EXPLORE_VOCABULARY`), moves in the order of
    :class:`SplitSystem`, the first found on ties; the two readings agree along every prefix
    it extends, so a node is the producer's belief and the one consumer state.

    Clauses: IDX-CONFORMANCE (a split after a producer violation decides no conformance)."""
    from properties.search.explore import EXPLORE_VOCABULARY
    vocabulary = EXPLORE_VOCABULARY if vocabulary is None else vocabulary

    def key(result, index: int) -> str:
        warnings = tuple((index, w) for w in result.warnings)
        fatal = (index, result.fatal) if result.fatal is not None else None
        return split_key(Verdict(result.state, warnings, fatal, index + 1))

    level = {(Belief(), initial_state()): ()}
    for index in range(depth):
        following: dict = {}
        for (belief, state), trace in level.items():
            conform = list(dict.fromkeys(moves(belief, vocabulary)))
            seen = set(conform)
            events = conform + [e for e in dict.fromkeys(
                e for e, _ in adversarial_moves(belief, vocabulary)) if e not in seen]
            for m, event in enumerate(events):
                a = model_step(state, event, reading_a)
                b = model_step(state, event, reading_b)
                if key(a, index) != key(b, index):
                    return trace + (event,)
                if m < len(conform) and a.fatal is None:
                    node = (advance(belief, event), a.state)
                    if node not in following:
                        following[node] = trace + (event,)
        level = following
    return None


class SplitSystem(TransitionSystem):
    """The form-B search of :func:`_violating_splits` as a transition system of the one
    breadth-first driver.

    A node is ``(belief, leaves)``, each a number of an :class:`~properties.search.store.Interned`
    table: the producer's belief and the consumer's reading leaves (``(assignment as sorted
    pairs, state, warnings, fatal)``, as :func:`_fork` steps them). A node's moves are its
    belief's distinct events, the conformant ones (:func:`model.producer.moves`) first, then
    the adversarial ones; only a conformant move has a successor. A knob of ``wanted`` that
    splits the leaves after a move is the finding ``("split", knob)``, its payload
    ``(node, move, pair)``. Never distributed (its tables are exact in one process).

    Args:
        vocabulary: the producer vocabulary; wanted: the knob ids sought.
    """

    width = 2

    def __init__(self, vocabulary, wanted: set):
        self.vocabulary, self.wanted = vocabulary, set(wanted)
        self.beliefs = Interned([Belief()])
        self.leaves = Interned([(((), initial_state(), (), None),)])
        self._moves: dict = {}  # belief number -> (events, number of conformant ones)

    def root(self) -> tuple:
        return (0, 0)

    def fingerprints(self, nodes: np.ndarray) -> np.ndarray:
        return mix([nodes[:, 0].astype(np.uint64), nodes[:, 1].astype(np.uint64)])

    def _events(self, b: int) -> tuple:
        got = self._moves.get(b)
        if got is None:
            belief = self.beliefs.values[b]
            conform = moves(belief, self.vocabulary)
            events = list(dict.fromkeys(conform))
            n, seen = len(events), set(events)
            events += [e for e in dict.fromkeys(e for e, _ in
                                                adversarial_moves(belief, self.vocabulary))
                       if e not in seen]
            got = self._moves[b] = (tuple(events), n)
        return got

    def _leaves(self, node: tuple) -> list:
        """A node's reading leaves with their assignments as dicts (:func:`_fork` reads them
        and never changes them, so every move of the node shares them)."""
        return [(dict(a), s, w, f) for a, s, w, f in self.leaves.values[node[1]]]

    def _after(self, node: tuple, m: int, level: int) -> list:
        """The leaves after move ``m`` of ``node``."""
        return _fork(self._leaves(node), self._events(node[0])[0][m], level)

    def expand(self, ids: np.ndarray, nodes: np.ndarray, level: int, out: Expansion,
               known: dict) -> None:
        open_knobs = {k for k in self.wanted if ("split", k) not in known}
        for node_id, row in zip(ids.tolist(), nodes.tolist()):
            node = tuple(row)
            events, n = self._events(node[0])
            out.moves.append(len(events))
            leaves = self._leaves(node)  # once per node, for all its moves
            for m, event in enumerate(events):
                after = _fork(leaves, event, level)
                if open_knobs and any(k in a for a, *_ in after for k in open_knobs) and \
                        not all(leaf[1:] == after[0][1:] for leaf in after):
                    verdicts = [(a, Verdict(s, w, f, f[0] + 1 if f else level + 1))
                                for a, s, w, f in after]
                    for knob, pair in knob_splits(verdicts, split_key).items():
                        if knob in open_knobs:
                            open_knobs.discard(knob)
                            out.findings.append((("split", knob), (), (node_id, m, 0),
                                                 (node_id, m, pair)))
                if m < n:
                    out.keys.append(pack_key(node_id, m, 0))
                    out.nodes.extend(self._child(node, event, after))
                    out.halted.append(False)

    def _child(self, node: tuple, event, after: list) -> tuple:
        belief = advance(self.beliefs.values[node[0]], event)
        leaves = tuple((tuple(sorted(a.items())), s, w, f) for a, s, w, f in after)
        return (self.beliefs.number(belief), self.leaves.number(leaves))

    def child(self, node: tuple, move: int, leaf: int, level: int) -> tuple:
        event = self._events(node[0])[0][move]
        return event, self._child(node, event, self._after(node, move, level))

    def event(self, node: tuple, move: int, level: int):
        return self._events(node[0])[0][move]

    def value(self, node: tuple) -> tuple:
        return (self.beliefs.values[node[0]], self.leaves.values[node[1]])

    def trace_to(self, path: list, move: int) -> tuple:
        """The events of ``path`` (``[(move, leaf)]`` from the root) and then ``move``."""
        node, trace = self.root(), []
        for level, (m, leaf) in enumerate(path):
            event, node = self.child(node, m, leaf, level)
            trace.append(event)
        return tuple(trace) + (self.event(node, move, len(path)),)

    def done(self, findings: dict) -> bool:
        return all(("split", k) in findings for k in self.wanted)

