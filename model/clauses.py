"""The clause registry: every normative statement the model implements or checks.

A :class:`Clause` has a stable id of our scheme (``PAGE-TOPIC[-DETAIL]``, e.g. ``ACT-SNAP-CREATE``),
the notes' N-ids it stands for, its BCP 14 keyword, its actor, page and section, and a one-line
paraphrase in our own words. The record type and the entries live in :mod:`model.clause_data`
(which imports nothing of the model); this module indexes and checks them.

Coverage is computed, not declared: :func:`coverage` collects, for each clause, the consumer step
branches that cite it (:data:`model.consumer.BRANCHES`), the knobs that sit on it
(:data:`model.readings.KNOBS`), the producer's adversarial moves labelled with it
(:data:`model.producer.ADVERSARIAL_KINDS`), and whatever further sources the caller passes (the
property catalogue, from ``properties``, which ``model`` does not import).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Iterable, Mapping, Optional

from model.clause_data import ACTORS, CLAUSES, KEYWORDS, Clause

__all__ = ["Clause", "registry", "get", "by_n_id", "UnknownClauseError", "coverage",
           "ClauseCoverage", "KEYWORDS", "ACTORS", "is_duty", "OUT_OF_SCOPE", "outside_draft"]

class UnknownClauseError(KeyError):
    """A clause id that is not in the registry."""


@lru_cache(maxsize=1)
def registry() -> dict[str, Clause]:
    """``{clause id: Clause}`` in registry order (N1..N112, then the extra rules)."""
    out: dict[str, Clause] = {}
    for c in CLAUSES:
        if c.id in out:
            raise ValueError(f"duplicate clause id {c.id}")
        out[c.id] = c
    return out


def get(clause_id: str) -> Clause:
    """The clause with this id. Raises :class:`UnknownClauseError`."""
    try:
        return registry()[clause_id]
    except KeyError:
        raise UnknownClauseError(clause_id) from None


def by_n_id(n_id: str) -> Clause:
    """The clause that stands for notes statement ``n_id`` (``"N3"``). Raises UnknownClauseError."""
    for c in registry().values():
        if n_id in c.n_ids:
            return c
    raise UnknownClauseError(n_id)


def outside_draft(clause_ids) -> list[str]:
    """The clauses among ``clause_ids`` that are the model's own rules outside the draft: those
    registered as an assumption (a section naming one: a field case's or a reading's), in the
    order given; ids not in the registry are left out."""
    out = []
    for cid in clause_ids:
        clause = registry().get(cid)
        if clause is not None and "assumption" in clause.section and cid not in out:
            out.append(cid)
    return out


def is_duty(clause: Clause) -> bool:
    """True for a MUST / MUST NOT / REQUIRED statement (what conformance is judged on, IDX-CONFORMANCE)."""
    return clause.keyword in ("MUST", "MUST NOT", "REQUIRED")


OUT_OF_SCOPE: dict[str, str] = {
    "LIF-RUN-CLOSE": "the end of a stream is not an event: the monitor judges events, so a run left "
                     "active when the stream stops is reported by lint's end-of-stream check",
    "PRC-STAGE-ORDER": "the order of middleware, enforcement and verification stages inside an "
                       "SDK is below the event-level model: the model is one enforcement stage",
    "PRC-OUTGOING": "validation of outgoing run input beyond activity stripping is not modelled",
    "PRC-SAME-VERDICT": "the model reads JSON only; transport equivalence (protobuf) is not "
                        "modelled",
    "PRC-PRODUCER-INPUT": "the producer's handling of received run input is not modelled",
    "VER-DOWNGRADE": "version downgrades are not modelled",
    "VER-NO-HIDDEN": "versioned additions are not modelled",
    "ACT-DELTA-REPEAT-TYPE": "whether a producer meant to retype is not observable on the wire: "
                             "a delta carrying another type is a legal retype (ACT-DELTA-MAY-RETYPE)",
    "RIN-COMPLETE-HISTORY": "the producer's reading of its run input is not modelled (the model's "
                            "producer starts every trace from its own belief)",
}
"""Clauses the model deliberately does not cover, with the reason (shown by ``clauses``)."""


@dataclass(frozen=True)
class ClauseCoverage:
    """What covers one clause: ``{source kind: names}``, e.g. ``{"branch": ("delta.missing",)}``."""

    clause: Clause
    covered_by: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    @property
    def covered(self) -> bool:
        """True when a branch, knob, move or property covers it (out-of-scope does not count)."""
        return any(v for k, v in self.covered_by.items() if k != "out-of-scope")


def coverage(extra: Optional[Mapping[str, Mapping[str, Iterable[str]]]] = None
             ) -> list[ClauseCoverage]:
    """Coverage of every clause, in registry order.

    Args:
        extra: further sources, ``{kind: {name: clause ids}}``; the CLI passes the property
            catalogue here as ``{"property": {...}}``.

    Returns:
        One :class:`ClauseCoverage` per clause.

    Raises:
        UnknownClauseError: when any source cites an id that is not in the registry (so a typo in
            a branch table cannot silently leave a clause uncovered).
    """
    from model.consumer import BRANCHES
    from model.producer import ADVERSARIAL_KINDS
    from model.readings import KNOBS

    sources: dict[str, dict[str, Iterable[str]]] = {
        "branch": dict(BRANCHES),
        "knob": {k.id: k.clauses for k in KNOBS},
        "adversarial": {name: (clause,) for name, clause in ADVERSARIAL_KINDS.items()},
    }
    sources["out-of-scope"] = {reason: (cid,) for cid, reason in OUT_OF_SCOPE.items()}
    for kind, table in (extra or {}).items():
        sources.setdefault(kind, {}).update(table)
    reg = registry()
    found: dict[str, dict[str, list[str]]] = {cid: {} for cid in reg}
    for kind, table in sources.items():
        for name, ids in table.items():
            for cid in ids:
                if cid not in reg:
                    raise UnknownClauseError(f"{kind} {name!r} cites unknown clause {cid!r}")
                found[cid].setdefault(kind, []).append(name)
    return [ClauseCoverage(reg[cid], {k: tuple(v) for k, v in found[cid].items()}) for cid in reg]
