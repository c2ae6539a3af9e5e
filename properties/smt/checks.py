"""What the queries ask about: situations, rules, event shapes and properties of the fragment.

Each entry carries two predicates that must mean the same thing:

* ``z3_at(at)``: a Z3 formula about trace position ``at.t`` of an
  :class:`~properties.smt.encoding.Unrolling` (via :class:`At`);
* ``holds(view, aux)``: a Python predicate about the same event replayed on the executable model
  (a :class:`~properties.smt.replay.StepView`), with ``aux`` the value of ``track`` before it when
  the predicate needs history.

Z3 answers with the first; the replay of every witness checks the second, and the tests compare
both answers over the whole alphabet at small depth (:func:`~properties.smt.replay.
enumerate_shortest`). Property entries use the catalogue's own check
(:data:`properties.catalogue.PROPERTY_BY_ID`) as their Python predicate.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

import z3

from model.codes import (ACTIVITY_DELTA_TARGET_MISSING, ACTIVITY_DELTA_TARGET_NOT_ACTIVITY,
                         ACTIVITY_OWNER_MISMATCH, ACTIVITY_PATCH_FAILED)
from model.events import ActivityDelta, ActivitySnapshot, MessagesSnapshot, TextMessageStart
from model.json_values import is_json_object_text
from model.patch import apply_patch
from properties.catalogue import PROPERTY_BY_ID
from properties.smt.encoding import (F_DELTA_OWNER, F_SNAP_OWNER, W_DELTA_MISSING,
                                     W_DELTA_NONACT, W_DELTA_OWNER, W_PATCH, Unrolling, _sel)
from properties.smt.replay import StepView
from properties.smt.world import (DELTA, I_ACT, I_NONE, MS, NON_OBJECT, P_APPLY, P_FAIL,
                                  P_NONOBJ, R_ABSENT, R_FALSE, R_TRUE, SNAP, TEXT)

__all__ = ["At", "Check", "SITUATIONS", "RULES", "SHAPES", "PROOF_PROPERTIES", "SITUATION_BY_ID",
           "RULE_BY_ID", "SHAPE_BY_ID", "PROOF_BY_ID"]


class At:
    """Position ``t`` of an unrolling, seen from consumer copy ``copy``.

    Attributes:
        e: the event variables; st: the copy's :class:`~properties.smt.encoding.Step`;
        B, A: consumer state before and after; b: branch conditions; P, P2: producer belief
        before and after; k: the copy's knobs; live: the consumer had not halted.
    """

    def __init__(self, u: Unrolling, t: int, copy: str = "a"):
        self.u, self.t = u, t
        self.e = u.events[t]
        self.st = u.steps[copy][t]
        self.B, self.A, self.b = self.st.before, self.st.after, self.st.b
        self.P, self.P2 = u.pstates[t - 1], u.pstates[t]
        self.k = u.knobs[copy]
        self.live = z3.Not(self.B["halted"])
        self.slots = range(len(u.world.ids))

    def tgt(self, state: dict, field: str):
        """``state[field]`` of the slot the event names."""
        return _sel(state[field], self.e.mid)

    def order_kept(self, among=None) -> z3.BoolRef:
        """Held slots before and after are the same and keep their relative order (restricted to
        slots for which ``among(j)`` holds, when given)."""
        B, A = self.B, self.A
        pick = among or (lambda j: z3.BoolVal(True))
        same = [] if among is not None else [B["ex"][j] == A["ex"][j] for j in self.slots]
        pairs = [z3.Implies(z3.And(pick(j), pick(x), B["ex"][j], B["ex"][x], A["ex"][j],
                                   A["ex"][x]),
                            (B["pos"][j] < B["pos"][x]) == (A["pos"][j] < A["pos"][x]))
                 for j in self.slots for x in self.slots if j < x]
        return z3.And(same + pairs)


@dataclass(frozen=True)
class Check:
    """One question the queries ask.

    Attributes:
        id: a short stable name; statement: what it says, in words.
        clauses: clause ids (with the notes' N-ids in the statement where they exist).
        z3_at: ``At -> BoolRef``; holds: ``(StepView, aux) -> bool``; track: ``(aux, StepView)
        -> aux`` for predicates with history (None: no history).
        keyword, actor: for rules (vacuity): the clause's BCP 14 keyword and who it binds.
        expect: for shapes: whether a conformant trace is expected (documentation only).
        note: a remark printed with the answer.
    """

    id: str
    statement: str
    clauses: tuple[str, ...]
    z3_at: Callable[[At], z3.BoolRef]
    holds: Callable[[StepView, object], bool]
    track: Optional[Callable[[object, StepView], object]] = None
    keyword: str = ""
    actor: str = ""
    note: str = ""


# --- Python-side helpers ------------------------------------------------------------------------

def _held(state, mid):
    return state.message(mid)


def _snap(v: StepView):
    """(event, held-before) when the event is an ACTIVITY_SNAPSHOT on a live consumer (copy a)."""
    if not isinstance(v.event, ActivitySnapshot) or v.a.before.halted:
        return None, None
    return v.event, _held(v.a.before, v.event.message_id)


def _delta(v: StepView):
    if not isinstance(v.event, ActivityDelta) or v.a.before.halted:
        return None, None
    return v.event, _held(v.a.before, v.event.message_id)


def _opener(v: StepView, held):
    return held.owner if v.a.reading.q4_opener == "current" else held.first_owner


def _mismatch(v: StepView, ev, held) -> bool:
    return ev.subagent_run_id is not None and ev.subagent_run_id != _opener(v, held)


def _patch_outcome(ev: ActivityDelta, held):
    return apply_patch(held.content, ev.patch)


def _accepted_delta(v: StepView):
    """(event, held) for a delta on a held activity that passes the ownership check."""
    ev, held = _delta(v)
    if ev is None or held is None or not held.is_activity:
        return None, None
    if _mismatch(v, ev, held) and v.a.reading.q4 != "accept":
        return None, None
    return ev, held


def _created(v: StepView) -> bool:
    ev, held = _snap(v)
    return ev is not None and held is None and not (
        ev.message_id in v.a.before.held_ever and v.a.reading.q10 == "seen")


def _replacing(v: StepView) -> bool:
    ev, held = _snap(v)
    return ev is not None and held is not None and held.is_activity and ev.replacing


def _declined(v: StepView) -> bool:
    ev, held = _snap(v)
    return ev is not None and held is not None and held.is_activity and not ev.replacing


def _disagrees(v: StepView) -> bool:
    ev, held = _snap(v)
    if not _declined(v):
        return False
    if ev.subagent_run_id is not None:
        return ev.subagent_run_id != held.owner
    return held.owner is not None and v.a.reading.q2 == "parent"


def _applied(v: StepView) -> bool:
    ev, held = _accepted_delta(v)
    if ev is None:
        return False
    out = _patch_outcome(ev, held)
    if not out.ok:
        return False
    detected = not is_json_object_text(out.result) and is_json_object_text(held.content)
    return not detected or v.a.reading.q7 == "apply"


def _skipped_delta(v: StepView) -> bool:
    ev, held = _delta(v)
    return ev is not None and (held is None or not held.is_activity)


def _order(state) -> list:
    return [m.id for m in state.messages]


def _ms(v: StepView):
    return v.event if isinstance(v.event, MessagesSnapshot) and not v.a.before.halted else None


def _ms_unlisted_activity(v: StepView) -> bool:
    ev = _ms(v)
    if ev is None:
        return False
    listed = {m.id for m in ev.messages}
    return any(m.is_activity and m.id not in listed for m in v.a.before.messages)


def _ms_carries_activity(v: StepView) -> bool:
    ev = _ms(v)
    return ev is not None and any(m.is_activity for m in ev.messages)


def _mids_with(view_pred) -> Callable[[object, StepView], object]:
    """A tracker: the set of message ids on which ``view_pred`` held so far."""
    def track(aux, v: StepView):
        aux = aux or frozenset()
        mid = getattr(v.event, "message_id", None)
        return aux | {mid} if mid is not None and view_pred(v) else aux
    return track


# --- Z3-side helpers ----------------------------------------------------------------------------

def _kind(at: At, kind: int) -> z3.BoolRef:
    return z3.And(at.live, at.e.kind == kind)


def _earlier_on_same_id(at: At, pred: Callable[[At], z3.BoolRef]) -> z3.BoolRef:
    """``pred`` held at some earlier position on an event naming the same id slot."""
    return z3.Or([z3.And(pred(At(at.u, s)), at.u.events[s].mid == at.e.mid,
                         at.u.events[s].kind != MS) for s in range(1, at.t)] or [z3.BoolVal(False)])


def _declined_z3(at: At) -> z3.BoolRef:
    return at.b["declined"]


def _skipped_delta_z3(at: At) -> z3.BoolRef:
    w = at.st.warn
    return z3.Or(w == W_DELTA_MISSING, w == W_DELTA_NONACT, w == W_DELTA_OWNER, w == W_PATCH)


def _skipped_delta_py(v: StepView) -> bool:
    codes = {w.code for w in v.a.warnings}
    return isinstance(v.event, ActivityDelta) and bool(codes & {
        ACTIVITY_DELTA_TARGET_MISSING, ACTIVITY_DELTA_TARGET_NOT_ACTIVITY,
        ACTIVITY_OWNER_MISMATCH, ACTIVITY_PATCH_FAILED})


# --- situations (reachability) ------------------------------------------------------------------

def _py_owner_changed_by_false(v: StepView, aux) -> bool:
    ev, held = _snap(v)
    if ev is None or held is None or not held.is_activity or ev.replace is not False:
        return False
    m = _held(v.a.after, ev.message_id)
    return m is not None and m.owner != held.owner


def _py_retyped_after_declined(v: StepView, aux) -> bool:
    ev, held = _delta(v)
    if ev is None or held is None or not held.is_activity or ev.message_id not in (aux or ()):
        return False
    m = _held(v.a.after, ev.message_id)
    return m is not None and m.activity_type != held.activity_type


def _py_content_not_object(v: StepView, aux) -> bool:
    return any(m.is_activity and not is_json_object_text(m.content) for m in v.a.after.messages)


def _py_owner_disagrees_with_producer(v: StepView, aux) -> bool:
    if v.a.after.halted:
        return False
    for m in v.a.after.messages:
        belief = v.belief_after.activity(m.id)
        if m.is_activity and belief is not None and belief.owner != m.owner:
            return True
    return False


def _py_moved(v: StepView, aux) -> bool:
    if isinstance(v.event, MessagesSnapshot):
        return False
    before, after = _order(v.a.before), _order(v.a.after)
    common = [i for i in before if i in after]
    return common != [i for i in after if i in common]


def _py_recreated(v: StepView, aux) -> bool:
    ev, held = _snap(v)
    return ev is not None and held is None and ev.message_id in v.a.before.held_ever and \
        _held(v.a.after, ev.message_id) is not None


def _py_snap_on_non_activity(v: StepView, aux) -> bool:
    ev, held = _snap(v)
    return ev is not None and held is not None and not held.is_activity


def _z3_moved(at: At) -> z3.BoolRef:
    B, A = at.B, at.A
    return z3.And(at.e.kind != MS, z3.Not(at.order_kept(
        among=lambda j: z3.And(B["ex"][j], A["ex"][j]))))


SITUATIONS: tuple[Check, ...] = (
    Check("owner-changed-by-replace-false",
          "A replace:false snapshot on a held activity changes its owner (ACT-ATTR-KEEP, N11 says "
          "the owner stands).", ("ACT-ATTR-KEEP", "ACT-ATTR-TOLERATE"),
          lambda at: z3.And(at.b["declined"], at.tgt(at.A, "own") != at.tgt(at.B, "own")),
          _py_owner_changed_by_false),
    Check("retyped-after-declined",
          "A delta retypes an activity on whose id a replace:false snapshot was declined earlier "
          "(N7 protects the type against that snapshot only; N15/N16 let a delta retype).",
          ("ACT-SNAP-REPLACE-FALSE", "ACT-DELTA-RETYPE", "ACT-DELTA-MAY-RETYPE"),
          lambda at: z3.And(_earlier_on_same_id(at, _declined_z3), at.b["delta_live"],
                            at.tgt(at.A, "ex"), at.tgt(at.A, "typ") != at.tgt(at.B, "typ")),
          _py_retyped_after_declined, _mids_with(_declined)),
    Check("content-not-object",
          "An activity's content is not an object (N22 forbids the producer to cause it; N23 lets "
          "the consumer not notice).", ("ACT-DELTA-OBJECT", "ACT-DELTA-OBJECT-DETECT"),
          lambda at: z3.Or([z3.And(at.A["ex"][j], at.A["act"][j], at.A["cont"][j] == NON_OBJECT)
                            for j in at.slots]),
          _py_content_not_object),
    Check("delta-skipped",
          "A delta is skipped because its id is missing or not an activity (N19).",
          ("ACT-DELTA-MISSING", "ACT-DELTA-BASELINE", "STA-MS-SELF-REVOKE"),
          lambda at: z3.Or(at.b["delta.missing"], at.b["delta.not-activity"]),
          lambda v, aux: _skipped_delta(v)),
    Check("owner-mismatch-fatal",
          "The consumer fails the run on an ownership mismatch (N62 for deltas; Q3 for a "
          "replace:false snapshot).", ("SUB-REJECT-MISMATCH", "ACT-ATTR-AGREE", "SUB-OWNER-AGREE"),
          lambda at: z3.Or(at.st.fatal == F_SNAP_OWNER, at.st.fatal == F_DELTA_OWNER),
          lambda v, aux: v.a.fatal is not None and v.a.fatal.code == ACTIVITY_OWNER_MISMATCH),
    Check("any-fatal", "The consumer fails the run (N29: activity has two tolerated failures).",
          ("ACT-TOLERATED", "SNP-KEEP-PRIOR"),
          lambda at: at.st.fatal != 0,
          lambda v, aux: v.a.fatal is not None),
    Check("owner-disagrees-with-producer",
          "The consumer holds an activity whose owner differs from the one the producer believes "
          "it minted (N30: the next snapshot should repair it).",
          ("ACT-REPAIR", "ACT-ATTR-REMINT", "STA-MS-OWNERSHIP"),
          lambda at: z3.And(z3.Not(at.A["halted"]), z3.Or([z3.And(
              at.A["ex"][j], at.A["act"][j], at.P2["pa"][j], at.A["own"][j] != at.P2["pown"][j])
              for j in at.slots])),
          _py_owner_disagrees_with_producer),
    Check("activity-moved",
          "An event other than MESSAGES_SNAPSHOT changes the relative order of held messages "
          "(Q11: a replacing snapshot may move its activity to the point of arrival).",
          ("ACT-SNAP-REPLACE", "EVM-ARRIVAL-ORDER", "ACT-SNAP-CREATE"),
          _z3_moved, _py_moved),
    Check("recreated-after-drop",
          "A snapshot re-creates an activity for an id the consumer held before (Q10).",
          ("ACT-SNAP-CREATE", "STA-MS-SELF-REVOKE", "SNP-ADOPT-NEXT"),
          lambda at: z3.And(at.b["snapshot.create"], at.tgt(at.B, "seen")),
          _py_recreated),
    Check("snapshot-on-non-activity",
          "An ACTIVITY_SNAPSHOT names an id the consumer holds as a non-activity message (Q9).",
          ("ACT-SNAP-CREATE", "EVM-ID-UNIQUE", "STA-MS-IN-PLACE"),
          lambda at: at.b["snapshot.not-activity"], _py_snap_on_non_activity),
)


# --- rules (vacuity) ----------------------------------------------------------------------------

def _producer_rule(clause: str, statement: str, keyword: str, note: str = "") -> Check:
    return Check(clause, statement, (clause,), lambda at: at.u.viol[at.t][clause],
                 lambda v, aux: clause in v.broken, keyword=keyword, actor="producer", note=note)


def _consumer_rule(clause: str, statement: str, keyword: str, z3_at, holds, track=None,
                   note: str = "") -> Check:
    return Check(clause, statement, (clause,), z3_at, holds, track, keyword, "consumer", note)


def _py_create(v, aux):
    return _created(v)


def _py_replace(v, aux):
    return _replacing(v)


def _py_retype(v, aux):
    ev, held = _accepted_delta(v)
    return _applied(v) and ev.activity_type != held.activity_type


def _py_remint(v, aux):
    ev, held = _snap(v)
    return _replacing(v) and ev.subagent_run_id != held.owner


def _py_keep(v, aux):
    ev, held = _snap(v)
    return _declined(v) and ev.subagent_run_id != held.owner


def _py_detect(v, aux):
    ev, held = _accepted_delta(v)
    if ev is None:
        return False
    out = _patch_outcome(ev, held)
    return out.ok and not is_json_object_text(out.result) and is_json_object_text(held.content)


def _py_not_applies(v, aux):
    ev, held = _accepted_delta(v)
    return ev is not None and not _patch_outcome(ev, held).ok


def _py_mismatch(v, aux):
    ev, held = _delta(v)
    return ev is not None and held is not None and held.is_activity and _mismatch(v, ev, held)


def _py_untagged_on_subagent(v, aux):
    ev, held = _delta(v)
    return ev is not None and held is not None and held.is_activity and \
        ev.subagent_run_id is None and held.owner is not None


def _py_tagged(v, aux):
    return isinstance(v.event, (ActivitySnapshot, ActivityDelta)) and not v.a.before.halted and \
        v.event.subagent_run_id is not None


def _py_adopt_next(v, aux):
    mid = getattr(v.event, "message_id", None)
    return (_created(v) or _replacing(v)) and mid in (aux or ())


def _py_ms_restated(v, aux):
    ev = _ms(v)
    return ev is not None and any(_held(v.a.before, m.id) is not None for m in ev.messages)


def _py_ms_appended(v, aux):
    ev = _ms(v)
    return ev is not None and any(_held(v.a.before, m.id) is None for m in ev.messages)


def _z3_unlisted_activity(at: At) -> z3.BoolRef:
    return z3.Or([z3.And(at.B["ex"][j], at.B["act"][j], at.e.inc[j] == I_NONE)
                  for j in at.slots])


RULES: tuple[Check, ...] = (
    _producer_rule("ACT-ATTR-AGREE", "N12: a replace:false snapshot's attribution agrees with the "
                   "established owner.", "MUST"),
    _producer_rule("ACT-DELTA-BASELINE", "N18: no delta for an activity the producer has not "
                   "created with a snapshot.", "MUST NOT"),
    _producer_rule("SNP-BASELINE", "N37: no delta without a baseline.", "MUST NOT"),
    _producer_rule("SUB-OWNER-AGREE", "N60: a continuation's tag agrees with the opener's owner.",
                   "MUST"),
    _producer_rule("ACT-DELTA-OBJECT", "N22: no patch whose result is not an object.", "MUST NOT"),
    _producer_rule("EVM-ID-UNIQUE", "N80: a message id is unique across roles.", "MUST"),
    _producer_rule("LIF-RESTATE-SNAPSHOT", "N99: history is restated by snapshots, not streamed "
                   "again.", "MUST"),
    Check("ACT-DELTA-REPEAT-TYPE", "N17: a delta not meant to retype repeats the current type.",
          ("ACT-DELTA-REPEAT-TYPE",), lambda at: z3.BoolVal(False), lambda v, aux: False,
          keyword="MUST", actor="producer",
          note="no event can break it: intent is not on the wire, and every other type is a "
               "retype that N16 (MAY) allows"),
    _consumer_rule("ACT-TYPE-OPEN", "N2: a type the consumer does not recognise is taken "
                   "(every type of the world is unknown to the model).", "MUST",
                   lambda at: z3.Or(at.b["snapshot.create"], at.b["snapshot.replace"], at.b["applied"]),
                   lambda v, aux: _created(v) or _replacing(v) or _applied(v)),
    _consumer_rule("ACT-SNAP-CREATE", "N3: a snapshot for an unseen id creates the activity at "
                   "the point of arrival.", "non-keyword",
                   lambda at: at.b["snapshot.create"], _py_create),
    _consumer_rule("ACT-SNAP-REPLACE", "N4: a snapshot for a held activity replaces its content "
                   "and type.", "non-keyword", lambda at: at.b["snapshot.replace"], _py_replace),
    _consumer_rule("SNP-REPLACE", "N31: a consumer replaces its copy with the snapshot's, unless "
                   "the family opts out (replace:false).", "MUST",
                   lambda at: at.b["snapshot.replace"], _py_replace),
    _consumer_rule("ACT-SNAP-REPLACE-DEFAULT", "N6: an absent replace means replace.",
                   "non-keyword", lambda at: z3.And(at.b["snapshot.replace"], at.e.rep == R_ABSENT),
                   lambda v, aux: _replacing(v) and v.event.replace is None),
    _consumer_rule("ACT-SNAP-REPLACE-FALSE", "N7: replace:false on a held activity leaves content "
                   "and type.", "non-keyword", lambda at: at.b["declined"],
                   lambda v, aux: _declined(v)),
    _consumer_rule("ACT-ATTR-REMINT", "N10: a replacing snapshot re-mints the owner (decides "
                   "something when its attribution differs).", "non-keyword",
                   lambda at: z3.And(at.b["snapshot.replace"], at.e.tag != at.tgt(at.B, "own")), _py_remint),
    _consumer_rule("ACT-ATTR-KEEP", "N11: replace:false does not re-mint (decides something when "
                   "its attribution differs).", "non-keyword",
                   lambda at: z3.And(at.b["declined"], at.e.tag != at.tgt(at.B, "own")), _py_keep),
    _consumer_rule("ACT-ATTR-TOLERATE", "N13: a disagreeing replace:false need not be rejected.",
                   "non-keyword", lambda at: at.b["snapshot.owner-disagrees"], lambda v, aux: _disagrees(v)),
    _consumer_rule("ACT-DELTA-APPLY", "N14: a delta's patch applies to the content.",
                   "non-keyword", lambda at: at.b["applied"], lambda v, aux: _applied(v)),
    _consumer_rule("ACT-DELTA-RETYPE", "N15: the delta's type replaces the message's (decides "
                   "something when it differs).", "non-keyword",
                   lambda at: z3.And(at.b["applied"], at.e.typ != at.tgt(at.B, "typ")), _py_retype),
    _consumer_rule("ACT-DELTA-MISSING", "N19: a delta on a missing or non-activity id is "
                   "skipped.", "non-keyword",
                   lambda at: z3.Or(at.b["delta.missing"], at.b["delta.not-activity"]),
                   lambda v, aux: _skipped_delta(v)),
    _consumer_rule("ACT-DELTA-MISSING-WARN", "N20: that skip is warned about.", "SHOULD",
                   lambda at: z3.Or(at.b["delta.missing"], at.b["delta.not-activity"]),
                   lambda v, aux: _skipped_delta(v)),
    _consumer_rule("ACT-DELTA-MISSING-NOFAIL", "N21: that skip never fails the run.", "MUST NOT",
                   lambda at: z3.Or(at.b["delta.missing"], at.b["delta.not-activity"]),
                   lambda v, aux: _skipped_delta(v)),
    _consumer_rule("ACT-DELTA-OBJECT-DETECT", "N23: a patch result that is not an object need not "
                   "be detected.", "non-keyword", lambda at: at.b["detect"], _py_detect),
    _consumer_rule("SNP-NO-PARTIAL", "N41: no partially applied result is kept.", "MUST NOT",
                   lambda at: at.b["not_applies"], _py_not_applies),
    _consumer_rule("SNP-SURFACE-FAILURE", "N42: a patch that does not apply is surfaced.", "MUST",
                   lambda at: at.b["not_applies"], _py_not_applies),
    _consumer_rule("SNP-ADOPT-NEXT", "N46: the next snapshot is adopted whatever deltas were "
                   "skipped on that id before it.", "MUST",
                   lambda at: z3.And(z3.Or(at.b["snapshot.create"], at.b["snapshot.replace"]),
                                     _earlier_on_same_id(at, _skipped_delta_z3)),
                   _py_adopt_next, _mids_with(_skipped_delta_py)),
    _consumer_rule("SUB-ACCEPT-UNANNOUNCED", "N59: attribution without lifecycle events is "
                   "accepted (the fragment has no SUBAGENT_STARTED).", "MUST",
                   lambda at: z3.And(at.live, z3.Or(at.e.kind == SNAP, at.e.kind == DELTA),
                                     at.e.tag != 0), _py_tagged),
    _consumer_rule("SUB-REJECT-MISMATCH", "N62: a delta whose tag disagrees with the opener is "
                   "rejected.", "MUST", lambda at: at.b["mismatch"], _py_mismatch),
    _consumer_rule("SUB-ACCEPT-UNTAGGED", "N63: an untagged delta on a subagent's activity is "
                   "accepted.", "MUST",
                   lambda at: z3.And(at.b["delta_live"], at.e.tag == 0, at.tgt(at.B, "own") != 0),
                   _py_untagged_on_subagent),
    _consumer_rule("STA-MS-IN-PLACE", "N48: a restated message is replaced in place.",
                   "non-keyword", lambda at: z3.Or(at.b["ms_restated"]), _py_ms_restated),
    _consumer_rule("STA-MS-APPEND", "N49: a message met first in the snapshot is appended.",
                   "non-keyword", lambda at: z3.Or(at.b["ms_appended"]), _py_ms_appended),
    _consumer_rule("STA-MS-DROP-EXCEPT", "N50: held activity survives a snapshot that carries "
                   "none.", "non-keyword",
                   lambda at: z3.And(at.b["ms"], z3.Not(at.b["ms_any_activity"]),
                                     _z3_unlisted_activity(at)),
                   lambda v, aux: _ms_unlisted_activity(v) and not _ms_carries_activity(v)),
    _consumer_rule("STA-MS-SELF-REVOKE", "N51: a snapshot carrying activity declares the complete "
                   "activity set.", "non-keyword",
                   lambda at: z3.And(at.b["ms_any_activity"], _z3_unlisted_activity(at)),
                   lambda v, aux: _ms_unlisted_activity(v) and _ms_carries_activity(v)),
    _consumer_rule("STA-MS-OWNERSHIP", "N52: a restated activity's owner is its own "
                   "subagentRunId.", "non-keyword",
                   lambda at: z3.And(at.b["ms"], z3.Or([at.e.inc[j] == I_ACT for j in at.slots])),
                   lambda v, aux: _ms_carries_activity(v)),
)


# --- event shapes (consistency) -----------------------------------------------------------------

def _pt(at: At, field: str):
    return _sel(at.P[field], at.e.mid)


def _belief(v: StepView):
    mid = getattr(v.event, "message_id", None)
    return v.belief_before.activity(mid) if mid is not None else None


def _shape(sid: str, statement: str, clauses, z3_at, holds, note: str = "") -> Check:
    return Check(sid, statement, tuple(clauses), z3_at, holds, note=note)


def _is(v: StepView, cls) -> bool:
    return isinstance(v.event, cls)


SHAPES: tuple[Check, ...] = (
    _shape("snapshot-creates", "ACTIVITY_SNAPSHOT for an id the producer has no activity on.",
           ("ACT-SNAP-CREATE",), lambda at: z3.And(at.e.kind == SNAP, z3.Not(_pt(at, "pa"))),
           lambda v, aux: _is(v, ActivitySnapshot) and _belief(v) is None),
    _shape("snapshot-replace-absent", "Replacing ACTIVITY_SNAPSHOT, replace absent.",
           ("ACT-SNAP-REPLACE-DEFAULT",),
           lambda at: z3.And(at.e.kind == SNAP, _pt(at, "pa"), at.e.rep == R_ABSENT),
           lambda v, aux: _is(v, ActivitySnapshot) and _belief(v) is not None and
           v.event.replace is None),
    _shape("snapshot-replace-true", "Replacing ACTIVITY_SNAPSHOT, replace:true.",
           ("ACT-SNAP-REPLACE",),
           lambda at: z3.And(at.e.kind == SNAP, _pt(at, "pa"), at.e.rep == R_TRUE),
           lambda v, aux: _is(v, ActivitySnapshot) and _belief(v) is not None and
           v.event.replace is True),
    _shape("snapshot-replace-false", "replace:false ACTIVITY_SNAPSHOT on an existing activity.",
           ("ACT-SNAP-REPLACE-FALSE", "ACT-ATTR-AGREE"),
           lambda at: z3.And(at.e.kind == SNAP, _pt(at, "pa"), at.e.rep == R_FALSE),
           lambda v, aux: _is(v, ActivitySnapshot) and _belief(v) is not None and
           v.event.replace is False),
    _shape("snapshot-replace-false-untagged-on-subagent-activity",
           "Untagged replace:false on an activity a subagent owns (Q2 decides whether it agrees).",
           ("ACT-ATTR-AGREE", "SUB-UNTAGGED-CONTINUES", "SUB-ABSENT-PARENT"),
           lambda at: z3.And(at.e.kind == SNAP, _pt(at, "pa"), at.e.rep == R_FALSE,
                             at.e.tag == 0, _pt(at, "pown") != 0),
           lambda v, aux: _is(v, ActivitySnapshot) and _belief(v) is not None and
           v.event.replace is False and v.event.subagent_run_id is None and
           _belief(v).owner is not None),
    _shape("snapshot-remints-owner", "Replacing snapshot whose attribution differs from the owner.",
           ("ACT-ATTR-REMINT",),
           lambda at: z3.And(at.e.kind == SNAP, _pt(at, "pa"), at.e.rep != R_FALSE,
                             at.e.tag != _pt(at, "pown")),
           lambda v, aux: _is(v, ActivitySnapshot) and _belief(v) is not None and
           v.event.replacing and v.event.subagent_run_id != _belief(v).owner),
    _shape("delta-applies", "ACTIVITY_DELTA whose patch applies (replace /n).",
           ("ACT-DELTA-APPLY",), lambda at: z3.And(at.e.kind == DELTA, at.e.pk == P_APPLY),
           lambda v, aux: _is(v, ActivityDelta) and v.abstract.pk == P_APPLY),
    _shape("delta-fails", "ACTIVITY_DELTA whose patch does not apply (remove /missing).",
           ("ACT-DELTA-PATCHFAIL",), lambda at: z3.And(at.e.kind == DELTA, at.e.pk == P_FAIL),
           lambda v, aux: _is(v, ActivityDelta) and v.abstract.pk == P_FAIL),
    _shape("delta-non-object", "ACTIVITY_DELTA replacing the root with a non-object.",
           ("ACT-DELTA-OBJECT",), lambda at: z3.And(at.e.kind == DELTA, at.e.pk == P_NONOBJ),
           lambda v, aux: _is(v, ActivityDelta) and v.abstract.pk == P_NONOBJ,
           note="expected none: N22 forbids it"),
    _shape("delta-retypes", "ACTIVITY_DELTA with a type other than the one the producer believes.",
           ("ACT-DELTA-MAY-RETYPE",),
           lambda at: z3.And(at.e.kind == DELTA, _pt(at, "pa"), at.e.typ != _pt(at, "ptyp")),
           lambda v, aux: _is(v, ActivityDelta) and _belief(v) is not None and
           v.event.activity_type != _belief(v).activity_type),
    _shape("delta-tagged", "ACTIVITY_DELTA attributed to a subagent.", ("SUB-OWNER-AGREE",),
           lambda at: z3.And(at.e.kind == DELTA, at.e.tag != 0),
           lambda v, aux: _is(v, ActivityDelta) and v.event.subagent_run_id is not None),
    _shape("delta-untagged-on-subagent-activity",
           "Untagged ACTIVITY_DELTA on an activity a subagent owns.", ("SUB-UNTAGGED-CONTINUES",),
           lambda at: z3.And(at.e.kind == DELTA, at.e.tag == 0, _pt(at, "pa"),
                             _pt(at, "pown") != 0),
           lambda v, aux: _is(v, ActivityDelta) and v.event.subagent_run_id is None and
           _belief(v) is not None and _belief(v).owner is not None),
    _shape("delta-tagged-by-first-opener-after-remint",
           "ACTIVITY_DELTA tagged with the first opener's id after a snapshot re-minted the owner "
           "(Q4-opener decides whether that agrees).", ("SUB-OWNER-AGREE", "ACT-ATTR-REMINT"),
           lambda at: z3.And(at.e.kind == DELTA, at.e.tag != 0, _pt(at, "pa"),
                             at.e.tag == _pt(at, "popen"), _pt(at, "popen") != _pt(at, "pown")),
           lambda v, aux: _is(v, ActivityDelta) and _belief(v) is not None and
           v.event.subagent_run_id is not None and
           v.event.subagent_run_id == _belief(v).opener != _belief(v).owner),
    _shape("delta-on-activity-known-from-messages-snapshot",
           "ACTIVITY_DELTA on an activity the producer knows only from MESSAGES_SNAPSHOT.",
           ("ACT-DELTA-BASELINE",),
           lambda at: z3.And(at.e.kind == DELTA, _pt(at, "pa"), z3.Not(_pt(at, "pvia"))),
           lambda v, aux: _is(v, ActivityDelta) and _belief(v) is not None and
           not _belief(v).via_snapshot,
           note="expected none: N18 asks for a snapshot first"),
    _shape("text-start", "TEXT_MESSAGE_START.", ("EVM-ID-UNIQUE",),
           lambda at: at.e.kind == TEXT, lambda v, aux: _is(v, TextMessageStart)),
    _shape("messages-snapshot-with-activity", "MESSAGES_SNAPSHOT carrying an activity message.",
           ("STA-MS-SELF-REVOKE", "STA-MS-OWNERSHIP"),
           lambda at: z3.And(at.e.kind == MS, z3.Or([at.e.inc[j] == I_ACT for j in at.slots])),
           lambda v, aux: _is(v, MessagesSnapshot) and
           any(m.is_activity for m in v.event.messages)),
    _shape("messages-snapshot-without-activity", "MESSAGES_SNAPSHOT carrying no activity.",
           ("STA-MS-DROP-EXCEPT",),
           lambda at: z3.And(at.e.kind == MS, z3.And([at.e.inc[j] != I_ACT for j in at.slots])),
           lambda v, aux: _is(v, MessagesSnapshot) and
           not any(m.is_activity for m in v.event.messages)),
)


# --- properties (bounded proof) -----------------------------------------------------------------

def _owner_ok(at: At) -> z3.BoolRef:
    opener = z3.If(at.k.is_("Q4-opener", "current"), at.tgt(at.B, "own"), at.tgt(at.B, "fown"))
    return z3.Or(at.e.tag == 0, at.e.tag == opener, at.k.is_("Q4", "accept"))


def _applies(at: At) -> z3.BoolRef:
    """The patch applies to the held content (what :func:`model.patch.apply_patch` says)."""
    obj = at.tgt(at.B, "cont") >= 0
    return z3.Or(z3.And(at.e.pk == P_APPLY, obj), at.e.pk == P_NONOBJ)


def _held_activity(at: At) -> z3.BoolRef:
    return z3.And(at.tgt(at.B, "ex"), at.tgt(at.B, "act"))


def _messages_changed(at: At) -> z3.BoolRef:
    B, A = at.B, at.A
    fields = ("ex", "act", "typ", "own", "fown", "cont")
    return z3.Or(z3.Not(at.order_kept()),
                 z3.Or([B[f][j] != A[f][j] for f in fields for j in at.slots]))


def _is_last(at: At, state: dict) -> z3.BoolRef:
    mine = at.tgt(state, "pos")
    return z3.And([z3.Or(at.e.mid == j, z3.Not(state["ex"][j]), state["pos"][j] < mine)
                   for j in at.slots])


def _p05(at: At) -> z3.BoolRef:
    A = at.A
    created_ok = z3.And(at.tgt(A, "ex"), at.tgt(A, "act"), at.tgt(A, "typ") == at.e.typ,
                        at.tgt(A, "cont") == at.e.cont, at.tgt(A, "own") == at.e.tag,
                        _is_last(at, A))
    return z3.And(_kind(at, SNAP), at.st.fatal == 0, z3.Not(at.tgt(at.B, "ex")),
                  z3.Not(at.tgt(at.B, "seen")), z3.Not(created_ok))


def _snap_premise(at: At, replacing: bool) -> z3.BoolRef:
    rep = at.e.rep != R_FALSE if replacing else at.e.rep == R_FALSE
    return z3.And(_kind(at, SNAP), at.st.fatal == 0, _held_activity(at), rep)


def _p11(at: At) -> z3.BoolRef:
    moving = z3.And(at.e.kind == SNAP, at.e.rep != R_FALSE, at.k.is_("Q11", "move"))
    return z3.And(z3.Or(_kind(at, SNAP), _kind(at, DELTA)), at.st.fatal == 0,
                  at.tgt(at.B, "ex"), z3.Not(moving), z3.Not(at.order_kept()))


def _delta_live(at: At) -> z3.BoolRef:
    return z3.And(_kind(at, DELTA), _held_activity(at))


def _p20(at: At) -> z3.BoolRef:
    opener = z3.If(at.k.is_("Q4-opener", "current"), at.tgt(at.B, "own"), at.tgt(at.B, "fown"))
    premise = z3.And(_delta_live(at), at.e.tag != 0, at.e.tag != opener,
                     z3.Not(at.k.is_("Q4", "accept")))
    changed = z3.Or(z3.Not(at.tgt(at.A, "ex")), at.tgt(at.A, "cont") != at.tgt(at.B, "cont"),
                    at.tgt(at.A, "typ") != at.tgt(at.B, "typ"))
    return z3.And(premise, at.st.fatal == 0, z3.Or(changed, at.k.is_("Q4", "fatal")))


def _p26(at: At) -> z3.BoolRef:
    listed = lambda j: at.e.inc[j] != I_NONE  # noqa: E731
    return z3.And(_kind(at, MS), at.st.fatal == 0, z3.Not(at.order_kept(among=listed)))


def _p29(at: At) -> z3.BoolRef:
    return z3.And(_kind(at, MS), z3.And([at.e.inc[j] != I_ACT for j in at.slots]),
                  z3.Or([z3.And(at.B["ex"][j], at.B["act"][j], z3.Not(at.A["ex"][j]))
                         for j in at.slots]))


def _p30(at: At) -> z3.BoolRef:
    return z3.And(_kind(at, MS), at.k.is_("Q8", "self-revoking"),
                  z3.Or([at.e.inc[j] == I_ACT for j in at.slots]),
                  z3.Or([z3.And(at.A["ex"][j], at.A["act"][j], at.e.inc[j] == I_NONE)
                         for j in at.slots]))


def _p31(at: At) -> z3.BoolRef:
    """P31 on the fragment: after a conformant snapshot that creates or replaces, consumer and
    producer agree on content, type and owner (the producer's content is the snapshot's own in
    every case the property judges, so content is compared with the event's)."""
    B, A = at.B, at.A
    creating = z3.And(z3.Not(at.tgt(B, "ex")),
                      z3.Not(z3.And(at.tgt(B, "seen"), at.k.is_("Q10", "seen"))),
                      z3.Not(z3.And(at.e.rep == R_FALSE, _pt(at, "pa"))))
    replacing = z3.And(_held_activity(at), at.e.rep != R_FALSE)
    agree = z3.And(at.tgt(A, "ex"), at.tgt(A, "cont") == at.e.cont,
                   z3.If(at.tgt(A, "act"), at.tgt(A, "typ") == _sel(at.P2["ptyp"], at.e.mid),
                         z3.BoolVal(False)),
                   at.tgt(A, "own") == _sel(at.P2["pown"], at.e.mid))
    return z3.And(_kind(at, SNAP), at.u.conformant[at.t], at.st.fatal == 0,
                  z3.Or(creating, replacing), z3.Not(agree))


def _p39(at: At) -> z3.BoolRef:
    B, k, e = at.B, at.k, at.e
    town = at.tgt(B, "own")
    opener = z3.If(k.is_("Q4-opener", "current"), town, at.tgt(B, "fown"))
    disagree = z3.If(e.tag != 0, e.tag != town, z3.And(town != 0, k.is_("Q2", "parent")))
    nonobject_result = e.pk == P_NONOBJ
    justified = z3.Or(
        z3.And(e.kind == SNAP, at.tgt(B, "ex"), z3.Not(at.tgt(B, "act")), k.is_("Q9", "fatal")),
        z3.And(e.kind == SNAP, _held_activity(at), e.rep == R_FALSE, k.is_("Q3", "fatal"),
               disagree),
        z3.And(e.kind == DELTA, _held_activity(at), z3.Or(
            z3.And(e.tag != 0, e.tag != opener, k.is_("Q4", "fatal")),
            z3.And(z3.Not(_applies(at)), k.is_("Q13", "fatal")),
            z3.And(_applies(at), nonobject_result,
                   z3.Or(k.is_("Q7", "fatal"), z3.And(k.is_("Q7", "skip"),
                                                      k.is_("Q13", "fatal")))))),
        # a START whose stream outlived its message (X1=drop-open, MS-IN-FLIGHT-OPEN)
        z3.And(e.kind == TEXT, z3.Not(at.tgt(B, "ex")), at.tgt(B, "open"),
               k.is_("X1", "drop-open")))
    return z3.And(at.live, at.st.fatal != 0, z3.Not(justified))


def _pq24(at: At) -> z3.BoolRef:
    """PQ24's violation at ``at``: a live replace:false snapshot on an id not held whose step
    differs, in any state field of any slot, the position counter, the halt flag, the warning or
    the fatal, from the step of the same snapshot with ``replace`` absent."""
    e = at.e
    premise = z3.And(at.live, e.kind == SNAP, e.rep == R_FALSE, z3.Not(at.tgt(at.B, "ex")))
    other = at.u.step_variant(at.t, at.B, at.k, "pq24_", rep=R_ABSENT)
    A, O = at.A, other.after
    differs = [A[f][j] != O[f][j] for f in A if f not in ("npos", "halted") for j in at.slots]
    differs += [A["npos"] != O["npos"], A["halted"] != O["halted"], at.st.warn != other.warn,
                at.st.fatal != other.fatal]
    return z3.And(premise, z3.Or(differs))


def _pq24_holds(v: StepView) -> Optional[str]:
    """PQ24 on the executable model (copy a): None when it holds, else what differs."""
    from dataclasses import replace as but
    from model.consumer import step as model_step
    ev, held = _snap(v)
    if ev is None or held is not None or ev.replace is not False:
        return None
    t = v.a
    other = model_step(t.before, but(ev, replace=None), t.reading)
    mine = (t.after, [(w.code, w.message_id, w.clause) for w in t.warnings],
            t.fatal and (t.fatal.code, t.fatal.clause))
    theirs = (other.state, [(w.code, w.message_id, w.clause) for w in other.warnings],
              other.fatal and (other.fatal.code, other.fatal.clause))
    if mine != theirs:
        return "a replace:false snapshot on an id not held did not do what the same snapshot " \
            "without replace does"
    return None


def _prop(pid: str, z3_violation: Callable[[At], z3.BoolRef]) -> Check:
    prop = PROPERTY_BY_ID[pid]
    return Check(pid, prop.statement, prop.clauses, z3_violation,
                 lambda v, aux, check=prop.check: check(v.a) is not None)


PROOF_PROPERTIES: tuple[Check, ...] = (
    _prop("P02-content-object", lambda at: z3.And(at.u.conformant[at.t], z3.Or(
        [z3.And(at.A["ex"][j], at.A["act"][j], at.A["cont"][j] < 0) for j in at.slots]))),
    _prop("P05-snapshot-creates", _p05),
    _prop("P06-replace-replaces", lambda at: z3.And(_snap_premise(at, True), z3.Not(z3.And(
        at.tgt(at.A, "ex"), at.tgt(at.A, "cont") == at.e.cont,
        at.tgt(at.A, "typ") == at.e.typ)))),
    _prop("P07-replace-remints", lambda at: z3.And(_snap_premise(at, True), at.tgt(at.A, "ex"),
                                                   at.tgt(at.A, "own") != at.e.tag)),
    _prop("P09-replace-false-leaves", lambda at: z3.And(_snap_premise(at, False), z3.Not(z3.And(
        at.tgt(at.A, "ex"), at.tgt(at.A, "cont") == at.tgt(at.B, "cont"),
        at.tgt(at.A, "typ") == at.tgt(at.B, "typ"))))),
    _prop("P10-replace-false-owner-stands", lambda at: z3.And(
        _snap_premise(at, False), at.tgt(at.A, "ex"), at.tgt(at.A, "own") != at.tgt(at.B, "own"))),
    _prop("P11-snapshot-keeps-position", _p11),
    _prop("P12-delta-missing-tolerated", lambda at: z3.And(
        _kind(at, DELTA), z3.Not(_held_activity(at)),
        z3.Or(at.st.fatal != 0, _messages_changed(at)))),
    _prop("P15-patch-atomic", lambda at: z3.And(
        _delta_live(at), z3.Not(_applies(at)), at.tgt(at.A, "ex"),
        at.tgt(at.A, "cont") != at.tgt(at.B, "cont"))),
    _prop("P16-patch-failure-surfaced", lambda at: z3.And(
        _delta_live(at), _owner_ok(at), z3.Not(_applies(at)), at.st.fatal == 0,
        at.st.warn != W_PATCH)),
    _prop("P17-tolerated-not-fatal", lambda at: z3.And(
        _delta_live(at), at.st.fatal != 0, at.k.is_("Q13", "tolerate"), _owner_ok(at),
        z3.Not(_applies(at)))),
    _prop("P19-untagged-accepted", lambda at: z3.And(
        _delta_live(at), at.e.tag == 0,
        z3.Or(at.st.warn == W_DELTA_OWNER, at.st.fatal == F_DELTA_OWNER))),
    _prop("P20-mismatch-rejected", _p20),
    _prop("P26-ms-in-place", _p26),
    _prop("P29-ms-activity-survives", _p29),
    _prop("P30-ms-self-revoking", _p30),
    _prop("P31-agree-after-snapshot", _p31),
    _prop("P38-delta-keeps-owner", lambda at: z3.And(
        _delta_live(at), at.st.fatal == 0, at.tgt(at.A, "ex"),
        at.tgt(at.A, "own") != at.tgt(at.B, "own"))),
    _prop("P39-fatal-justified", _p39),
    Check("PQ24-replace-false-creates",
          "A replace:false snapshot on an id the consumer does not hold does exactly what the "
          "same snapshot without replace does: same state (message, position, owner, opener, "
          "content, seen ids), same warning, same fatal; so every later event, a delta "
          "included, behaves as after any creation with the same values (Q24, N7).",
          ("ACT-SNAP-CREATE", "ACT-SNAP-REPLACE-FALSE", "ACT-DELTA-APPLY", "SNP-BASELINE"),
          lambda at: _pq24(at), lambda v, aux: _pq24_holds(v) is not None),
)
"""The properties whose premises fall in the fragment, each with its negation encoded (a model
of the negation is a violation): the catalogue's (their Python predicate is the catalogue's
check) and the settlement table's proofs of questions (``PQ<n>-...``: a property stating the
consumer side of open question Q<n>, with a Python predicate of its own here;
:data:`properties.questions.QUESTIONS` names them in its ``proofs``)."""

SITUATION_BY_ID = {c.id: c for c in SITUATIONS}
RULE_BY_ID = {c.id: c for c in RULES}
SHAPE_BY_ID = {c.id: c for c in SHAPES}
PROOF_BY_ID = {c.id: c for c in PROOF_PROPERTIES}
