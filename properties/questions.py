"""The settlement table: for each open question Q1..Q25 of the notes (part (b)), the form in which
the tool settles it, computed by the engines, never written by hand (issue 19).

Forms:

* ``"A"``: a knob of the question whose options give different verdicts on a *conformant* trace;
  the shortest such trace is its witness (the all-readings breadth-first sweep of
  :func:`properties.explore.explore`, and for a knob of the Z3 fragment also
  :func:`properties.smt.queries.distinguishing`).
* ``"B"``: the question's knobs split only on traces that break a producer clause; the shortest
  such trace (Z3 with conformance dropped, for fragment knobs; otherwise a breadth-first search
  whose prefix is conformant and whose last event is any adversarial move of
  :func:`model.producer.adversarial_moves`, each trace partitioned by
  :func:`model.verdict.reading_leaves`).
* ``"C"``: a bounded proof, to a stated depth, that no reading changes a consumer verdict: a Z3
  bounded proof of the property that states the question's consumer side, under every reading
  at once (:func:`properties.smt.queries.bounded_proof`, ``reading=None``), or, for a knob, the
  exhaustive searches above finding no split to their depth.
* ``None``: not settled: the question has no knob and no proof in the model yet.

Each row is a dict: ``question``, ``title``, ``knobs``, ``form``, ``length`` (events of the
shortest witness, RUN_STARTED included, for A and B), ``engine`` (``"BFS"``, ``"Z3"`` or
``"both"`` when both found a witness of that form; Z3 lengths are in the fragment's own count,
``z3Length``), ``witness`` (the trace as wire events), ``proofDepth`` (for C) and ``note``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from model.producer import Belief, adversarial_moves, advance, moves
from model.readings import DRAFT, KNOB_BY_ID
from model.verdict import knob_splits, reading_leaves

__all__ = ["Question", "QUESTIONS", "settle", "settled_count"]


@dataclass(frozen=True)
class Question:
    """One open question: ``id`` (``"Q1"``), a short ``title`` in our words, the ``knobs`` that
    model it, and ``proofs``: ids of Z3 proof properties stating its consumer side (form C)."""

    id: str
    title: str
    knobs: tuple[str, ...] = ()
    proofs: tuple[str, ...] = ()


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
    Question("Q12", "Who counts as 'it' that created the activity a delta continues?"),
    Question("Q13", "May a consumer fail the run on a patch that does not apply?", ("Q13",)),
    Question("Q14", "Does a replace:false snapshot resynchronise?"),
    Question("Q15", "Activities of finished or abandoned subagent invocations"),
    Question("Q16", "May the parent send untagged deltas to a subagent's activity?",
             proofs=("P19-untagged-accepted",)),
    Question("Q17", "Stripping scope on the producer side"),
    Question("Q18", "Schema vs prose on the scope of replace:false", ("Q18",)),
    Question("Q19", "Overlapping rows of the metadata table", ("Q19",)),
    Question("Q20", "Unknown operations inside an activity patch", ("Q20",)),
    Question("Q21", "Which null handling applies (fatal or shimmed)?", ("Q21",)),
    Question("Q22", "What 'skip' and 'fail the run' mean"),
    Question("Q23", "Activity events across run boundaries"),
    Question("Q24", "A delta after a replace:false creation"),
    Question("Q25", "Open content and unknown keys"),
)
"""Q1..Q25 in order; a question with neither knobs nor proofs is not modelled yet."""

_unknown = [k for q in QUESTIONS for k in q.knobs if k not in KNOB_BY_ID]
if _unknown:  # pragma: no cover - a declaration error, raised at import
    raise ImportError(f"QUESTIONS names unknown knobs: {_unknown}")
del _unknown


def settle(depth: int = 4, z3: bool = True) -> list[dict]:
    """The settlement table (see the module docstring), one row per question of
    :data:`QUESTIONS`, in order.

    Args:
        depth: the bound of every search (events, RUN_STARTED included) and of every proof.
        z3: also ask the Z3 fragment (fragment knobs and proofs); False: breadth-first only.

    Raises:
        ValueError: depth below 2 (no activity event fits after RUN_STARTED)."""
    if depth < 2:
        raise ValueError(f"depth must be at least 2, not {depth}")
    from properties.explore import explore
    report = explore(depth=depth, reading=None, properties=())
    conformant = {k: tuple(trace) for k, (trace, _) in report.splits.items()}
    wanted = {k for q in QUESTIONS for k in q.knobs if k not in conformant}
    violating = _violating_splits(min(depth, 3), wanted)
    rows = []
    for question in QUESTIONS:
        rows.append(_row(question, depth, conformant, violating, z3))
    return rows


def settled_count(rows: list[dict]) -> int:
    """How many rows have a form."""
    return sum(1 for r in rows if r["form"] is not None)


def _row(question: Question, depth: int, conformant: dict, violating: dict, z3: bool) -> dict:
    row = {"question": question.id, "title": question.title, "knobs": list(question.knobs),
           "form": None, "length": None, "engine": None, "z3Length": None, "witness": None,
           "proofDepth": None, "note": ""}
    found = [(len(conformant[k]), k) for k in question.knobs if k in conformant]
    form, table = ("A", conformant) if found else ("B", violating)
    if not found:
        found = [(len(violating[k]), k) for k in question.knobs if k in violating]
    if found:
        length, knob = min(found)
        z3_length = _z3_length(knob, form == "A") if z3 else None
        row.update(form=form, length=length, witness=[e.to_wire() for e in table[knob]],
                   engine="both" if z3_length is not None else "BFS", z3Length=z3_length,
                   note=f"knob {knob}")
        return row
    if question.knobs:
        row.update(form="C", engine="BFS", proofDepth=depth,
                   note="no split on any trace of the exploration vocabulary to this depth")
        return row
    if question.proofs and z3:
        from properties.smt.queries import bounded_proof
        proved = all(bounded_proof(p, depth, reading=None).status == "unsat"
                     for p in question.proofs)
        if proved:
            row.update(form="C", engine="Z3", proofDepth=depth,
                       note="bounded proof under every reading: " + ", ".join(question.proofs))
            return row
    row["note"] = "not modelled yet: no knob and no proof"
    return row


def _z3_length(knob: str, conformant: bool) -> Optional[int]:
    """The shortest Z3 witness (fragment count) of any option of ``knob`` against draft, or
    None when the knob is outside the fragment or Z3 finds none within its default bound."""
    from properties.smt.encoding import FRAGMENT_KNOBS
    from properties.smt.queries import distinguishing
    if knob not in FRAGMENT_KNOBS:
        return None
    lengths = []
    for option in KNOB_BY_ID[knob].option_names[1:]:
        answer = distinguishing(DRAFT, DRAFT.with_(**{knob: option}), 6, conformant=conformant)
        if answer.status == "sat":
            lengths.append(answer.length)
    return min(lengths) if lengths else None


def _violating_splits(depth: int, wanted: set) -> dict:
    """``{knob: trace}``: for each wanted knob, the shortest trace (up to ``depth`` events) whose
    prefix is conformant under draft and whose last event is any adversarial move, on which the
    knob splits the readings; breadth-first, first found on ties."""
    found: dict = {}
    level = [((), Belief())]
    for _ in range(depth):
        if not wanted - set(found):
            break
        nxt = []
        for trace, belief in level:
            lasts = [e for e in moves(belief)] + [e for e, _ in adversarial_moves(belief)]
            seen = set()
            for event in lasts:
                if event in seen:
                    continue
                seen.add(event)
                candidate = trace + (event,)
                for knob in knob_splits(list(reading_leaves(candidate))):
                    if knob in wanted and knob not in found:
                        found[knob] = candidate
            nxt.extend((trace + (e,), advance(belief, e)) for e in moves(belief))
        level = nxt
    return found
