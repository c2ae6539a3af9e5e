"""The bounded Z3 encoding of the ownership-and-replace fragment, unrolled one event at a time.

An :class:`Unrolling` holds, for trace positions ``1..n`` (position 0 is the RUN_STARTED every
trace opens with), the abstract event variables, the producer's belief after each event with the
producer clauses each event breaks, and one or more *consumer copies*: the consumer's abstract
state after each event with the warning and fatal outcome of each step. Each copy runs under its
own reading; a reading is a value for each knob of :data:`FRAGMENT_KNOBS`, either fixed (a
:class:`~model.readings.Reading`) or left to the solver (``None``: every knob a variable), so that
"is there a reading under which ..." can be asked too. The producer's obligations read Q2 and
Q4-opener from a reading of their own.

The state and step equations mirror :func:`model.consumer.step` and
:func:`model.producer.violations` / :func:`model.producer.advance` branch by branch for the
fragment's events; every model is replayed on those functions in lock step
(:mod:`properties.smt.replay`), so a difference between the two is found, not assumed away.

Consumer state per id slot: held, activity (role), position key (message order is the order of the
keys of held slots), type, owner, first owner (the opener under ``Q4-opener=first``), content
version, seen (``held_ever``, reading Q10), open (a text message not yet ended); plus the next
position key and whether the consumer halted on a fatal. Slots that are not held hold zeros, so a
state is a function of the trace.

Each step's outcome is named as the model names it: its branch (:attr:`Step.branch`, an index into
:data:`STEP_BRANCH_IDS`, the ids of :mod:`model.branches`), its warning and fatal (:data:`WARNINGS`,
:data:`FATALS`: branch id and code of :mod:`model.codes`), and the conditions rules and properties
read (:attr:`Step.b`, keyed by branch id where a condition is exactly a branch). The fragment's
knobs (:data:`FRAGMENT_KNOBS`, :data:`OUTSIDE_KNOBS`) are checked at import to partition
:data:`model.readings.KNOBS`; the producer's (:data:`model.producer.PRODUCER_KNOBS`) are among them.

Clauses (consumer): ACT-SNAP-CREATE (N3), ACT-SNAP-REPLACE (N4), ACT-SNAP-REPLACE-DEFAULT (N6),
ACT-SNAP-REPLACE-FALSE (N7), ACT-ATTR-REMINT (N10), ACT-ATTR-KEEP (N11), ACT-ATTR-TOLERATE (N13),
ACT-DELTA-APPLY (N14), ACT-DELTA-RETYPE (N15), ACT-DELTA-MISSING (N19..N21),
ACT-DELTA-OBJECT-DETECT (N23), SNP-ATOMIC / SNP-NO-PARTIAL / SNP-SURFACE-FAILURE /
SNP-KEEP-PRIOR (N35, N41..N43), SUB-REJECT-MISMATCH (N62), SUB-ACCEPT-UNTAGGED (N63),
STA-MS-IN-PLACE / STA-MS-APPEND / STA-MS-DROP-EXCEPT / STA-MS-SELF-REVOKE / STA-MS-OWNERSHIP
(N48..N52), TXT-TARGET-ACTIVITY. Clauses (producer): ACT-ATTR-AGREE (N12), ACT-DELTA-BASELINE (N18),
SNP-BASELINE (N37), SUB-OWNER-AGREE (N60), ACT-DELTA-OBJECT (N22), EVM-ID-UNIQUE (N80),
LIF-RESTATE-SNAPSHOT (N99).
"""
from __future__ import annotations

import copy
import types
from dataclasses import dataclass, field, fields
from typing import Optional

import z3

from model.branches import BRANCHES, STEP_BRANCHES
from model.codes import (ACTIVITY_CONTENT_NOT_OBJECT, ACTIVITY_DELTA_TARGET_MISSING,
                         ACTIVITY_DELTA_TARGET_NOT_ACTIVITY, ACTIVITY_ID_SEEN_BEFORE,
                         ACTIVITY_OWNER_MISMATCH, ACTIVITY_PATCH_FAILED,
                         ACTIVITY_TARGET_NOT_ACTIVITY, CODES, TEXT_MESSAGE_ID_REUSED,
                         TEXT_MESSAGE_STILL_OPEN,
                         TEXT_TARGET_IS_ACTIVITY)
from model.producer import PRODUCER_KNOBS, PRODUCER_ONLY_KNOBS
from model.readings import KNOB_BY_ID, KNOBS, Reading
from properties.smt.world import (DELTA, FRESH, I_ACT, I_NONE, I_TEXT, MS, NON_OBJECT, P_APPLY,
                                  P_NONOBJ, R_FALSE, SNAP, TEXT, TEXT_CONTENT, World)

__all__ = ["FRAGMENT_KNOBS", "OUTSIDE_KNOBS", "DRAFT_ENCODED_KNOBS", "PRODUCER_RULES", "WARNINGS",
           "FATALS",
           "STEP_BRANCH_IDS", "Knobs", "Unrolling", "EventVars", "Step", "configure_z3"]

FRAGMENT_KNOBS: tuple[str, ...] = ("Q2", "Q3", "Q4", "Q4-opener", "Q5", "Q7", "Q8", "Q9", "Q10",
                                   "Q11", "Q13", "X1")
"""Knobs the encoding parameterises: every knob the consumer step consults on the fragment's
events."""

OUTSIDE_KNOBS: dict[str, str] = {
    "Q1": "metadata is outside the fragment (no event carries metadata), so a declined snapshot "
          "never has metadata to merge",
    "Q6": "metadata is outside the fragment, so a failed delta never has metadata to merge",
    "Q6-ms": "metadata is outside the fragment, so a MESSAGES_SNAPSHOT never meets accumulated "
             "metadata",
    "Q20": "patches of the fragment use RFC 6902 operations only (unknown ops are outside)",
    "Q19": "metadata is outside the fragment, so no snapshot carries metadata to merge or not",
    "Q18": "the encoding models the activity page's replace:false (content and type stand); the "
           "schema reading, where a declined snapshot's type is taken, is searched by BFS only",
    "Q21": "optional members are absent or well-formed; null members are outside the fragment",
    "Q12": "a producer-side knob: the consumer never consults it, and the fragment's producer "
           "encodes its draft option, the most permissive (the others only add violations), so "
           "a query over every producer reading is exact",
    "Q14": "the fragment's consumer does not record that a delta was skipped, so a replace:false "
           "snapshot is declined under the draft option only; searched by BFS",
    "Q15": "subagent lifecycle events are outside the fragment, so no invocation ends",
    "Q17": "a producer-side knob on RUN_STARTED.input, which the fragment never carries (its "
           "draft option is the fragment's producer)",
    "Q23": "the fragment's traces hold one run",
}
"""Knobs the fragment leaves out, with the reason (the consumer never consults them on the
fragment's events)."""


DRAFT_ENCODED_KNOBS: tuple[str, ...] = ("Q12", "Q14", "Q17", "Q18")
"""The knobs of :data:`OUTSIDE_KNOBS` that the fragment's own events would reach, encoded at
their draft option: Q14 and Q18 on the consumer's side (a replace:false snapshot after a skipped
delta, a declined snapshot's type), Q12 and Q17 on the producer's (its draft option, the most
permissive). An answer under a reading that takes another option of one of them is not that
reading's answer (:func:`properties.smt.queries.require_fragment` refuses such a reading;
``resolve`` drops or qualifies the answers it would take, and says so in its ``limits``). The
other outside knobs are never consulted on the fragment's traces: any option gives the same
answer there."""


def _check_knob_partition() -> None:
    """FRAGMENT_KNOBS and OUTSIDE_KNOBS partition :data:`model.readings.KNOBS`: a knob added to
    the model fails here, at import, until it is classified (and the producer's knobs are in the
    fragment)."""
    every = [k.id for k in KNOBS]
    inside, outside = set(FRAGMENT_KNOBS), set(OUTSIDE_KNOBS)
    if len(inside) != len(FRAGMENT_KNOBS) or inside & outside or inside | outside != set(every):
        raise AssertionError(
            f"the Z3 fragment's knobs do not partition the model's: unclassified "
            f"{sorted(set(every) - inside - outside)}, both {sorted(inside & outside)}, unknown "
            f"{sorted((inside | outside) - set(every))}")
    # a producer-only knob (never consulted by the consumer) may stay outside: the fragment's
    # producer then encodes its draft option, its most permissive (model.producer)
    if not set(PRODUCER_KNOBS) - set(PRODUCER_ONLY_KNOBS) <= inside:
        raise AssertionError(f"producer knobs {PRODUCER_KNOBS} outside the fragment")
    if not set(DRAFT_ENCODED_KNOBS) <= outside:
        raise AssertionError(f"DRAFT_ENCODED_KNOBS {DRAFT_ENCODED_KNOBS} are not all outside")


_check_knob_partition()
_FRAGMENT_PRODUCER_KNOBS = tuple(k for k in PRODUCER_KNOBS if k in FRAGMENT_KNOBS)
"""The producer knobs the fragment's producer reads (the producer-only ones outside it are at
their draft option)."""

# Warning and fatal outcomes of one step: code -> (branch id, wire code) of the model's warning or
# fatal (model.branches, model.codes); the clause it cites is the branch's first.
WARNINGS: dict[int, tuple[str, str]] = {
    1: ("snapshot.seen-not-held", ACTIVITY_ID_SEEN_BEFORE),
    2: ("snapshot.not-activity", ACTIVITY_TARGET_NOT_ACTIVITY),
    3: ("snapshot.owner-disagrees", ACTIVITY_OWNER_MISMATCH),
    4: ("delta.missing", ACTIVITY_DELTA_TARGET_MISSING),
    5: ("delta.not-activity", ACTIVITY_DELTA_TARGET_NOT_ACTIVITY),
    6: ("delta.owner-mismatch", ACTIVITY_OWNER_MISMATCH),
    7: ("delta.patch-failed", ACTIVITY_PATCH_FAILED),
    8: ("text.target-activity", TEXT_TARGET_IS_ACTIVITY),
    9: ("text.target-missing", TEXT_MESSAGE_ID_REUSED),
}
W_SEEN, W_SNAP_NONACT, W_SNAP_OWNER, W_DELTA_MISSING, W_DELTA_NONACT, W_DELTA_OWNER, W_PATCH, \
    W_TEXT_ON_ACT, W_TEXT_REUSED = range(1, 10)

FATALS: dict[int, tuple[str, str]] = {
    1: ("snapshot.not-activity", ACTIVITY_TARGET_NOT_ACTIVITY),
    2: ("snapshot.owner-disagrees", ACTIVITY_OWNER_MISMATCH),
    3: ("delta.owner-mismatch", ACTIVITY_OWNER_MISMATCH),
    4: ("delta.non-object", ACTIVITY_CONTENT_NOT_OBJECT),
    5: ("delta.patch-failed", ACTIVITY_PATCH_FAILED),
    6: ("text.still-open", TEXT_MESSAGE_STILL_OPEN),
}
F_SNAP_NONACT, F_SNAP_OWNER, F_DELTA_OWNER, F_NONOBJ, F_PATCH, F_STILL_OPEN = range(1, 7)

STEP_BRANCH_IDS: tuple[str, ...] = (
    "lifecycle.halted", "snapshot.create", "snapshot.seen-not-held", "snapshot.not-activity",
    "snapshot.replace", "snapshot.replace-false", "snapshot.owner-disagrees", "delta.missing",
    "delta.not-activity", "delta.owner-mismatch", "delta.apply", "delta.non-object",
    "delta.patch-failed", "text.target-activity", "text.target-missing", "passthrough.accept",
    "messages-snapshot.reconcile", "messages-snapshot.in-flight", "text.still-open")
"""The model's step branches the fragment's events can take (:data:`model.branches.BRANCHES`);
:attr:`Step.branch` is an index into this tuple."""


def _check_outcome_tables() -> None:
    """Every branch and code the tables name is the model's, and each code comes from that
    branch as that kind (:data:`model.codes.CODES`)."""
    for table, kind in ((WARNINGS, "warning"), (FATALS, "fatal")):
        for branch, code in table.values():
            c = CODES[code]
            if branch not in BRANCHES or branch not in c.branches or kind not in c.kinds:
                raise AssertionError(f"Z3 {kind} ({branch}, {code}) is not the model's")
    if not set(STEP_BRANCH_IDS) <= STEP_BRANCHES or len(set(STEP_BRANCH_IDS)) != len(STEP_BRANCH_IDS):
        raise AssertionError("STEP_BRANCH_IDS names a branch that is not a step branch of the model")


_check_outcome_tables()
_BR = {name: i for i, name in enumerate(STEP_BRANCH_IDS)}

PRODUCER_RULES: tuple[str, ...] = ("ACT-ATTR-AGREE", "ACT-DELTA-BASELINE", "SNP-BASELINE",
                                   "SUB-OWNER-AGREE", "ACT-DELTA-OBJECT", "EVM-ID-UNIQUE",
                                   "LIF-RESTATE-SNAPSHOT")
"""The producer clauses the fragment's events can break (the monitor's labels)."""


def configure_z3(seed: int = 0) -> None:
    """Fix Z3's random seeds so that runs are reproducible (models are canonicalised anyway)."""
    z3.set_param("smt.random_seed", seed)
    z3.set_param("sat.random_seed", seed)


class Knobs:
    """The options of the fragment's knobs as Z3 terms.

    ``Knobs(reading)`` fixes each knob to the reading's option (the terms are Python-level
    constants, so the solver never branches on them); ``Knobs(None, prefix)`` makes each knob of
    ``knob_ids`` an integer variable ranging over its options (index 0 is the draft option).
    :meth:`is_` gives ``knob == option``.
    """

    def __init__(self, reading: Optional[Reading], prefix: str = "k",
                 knob_ids: tuple[str, ...] = FRAGMENT_KNOBS):
        self.reading = reading
        self.knob_ids = knob_ids
        self.vars: dict[str, z3.ArithRef] = {}
        self.domain: list[z3.BoolRef] = []
        if reading is None:
            for kid in knob_ids:
                v = z3.Int(f"{prefix}_{kid}")
                self.vars[kid] = v
                self.domain.append(z3.And(v >= 0, v < len(KNOB_BY_ID[kid].options)))

    def is_(self, knob: str, option: str) -> z3.BoolRef:
        """``knob == option`` (raises KeyError for an option the knob does not have)."""
        names = KNOB_BY_ID[knob].option_names
        index = names.index(option)
        if self.reading is not None:
            return z3.BoolVal(getattr(self.reading, KNOB_BY_ID[knob].attr) == option)
        return self.vars[knob] == index

    def value(self, model: z3.ModelRef) -> dict[str, str]:
        """``{knob: option}`` of a model (the fixed reading's options when fixed)."""
        out = {}
        for kid in self.knob_ids:
            knob = KNOB_BY_ID[kid]
            if self.reading is not None:
                out[kid] = getattr(self.reading, knob.attr)
            else:
                out[kid] = knob.option_names[model.eval(self.vars[kid], True).as_long()]
        return out


@dataclass
class EventVars:
    """The variables of the event at one trace position (see :class:`~properties.smt.world.
    AbstractEvent` for their meaning); ``inc``/``mtyp``/``mown``/``mcont``/``rank`` per slot."""

    kind: z3.ArithRef
    mid: z3.ArithRef
    typ: z3.ArithRef
    cont: z3.ArithRef
    rep: z3.ArithRef
    tag: z3.ArithRef
    pk: z3.ArithRef
    inc: list
    mtyp: list
    mown: list
    mcont: list
    rank: list

    def fields(self) -> list[tuple[str, z3.ArithRef]]:
        """Every variable in canonical (lexicographic-minimisation) order."""
        out = [("kind", self.kind), ("mid", self.mid), ("typ", self.typ), ("cont", self.cont),
               ("rep", self.rep), ("tag", self.tag), ("pk", self.pk)]
        for j in range(len(self.inc)):
            out += [(f"inc{j}", self.inc[j]), (f"mtyp{j}", self.mtyp[j]),
                    (f"mown{j}", self.mown[j]), (f"mcont{j}", self.mcont[j]),
                    (f"rank{j}", self.rank[j])]
        return out


CONSUMER_FIELDS = ("ex", "act", "pos", "typ", "own", "fown", "cont", "seen", "open")
BOOL_FIELDS = frozenset({"ex", "act", "seen", "open"})
PRODUCER_FIELDS = ("pa", "ptext", "pown", "popen", "pvia", "ptyp", "pused")
PRODUCER_BOOL = frozenset({"pa", "ptext", "pvia", "pused"})
"""Producer belief per id slot: held activity, non-activity id (a text it opened or a message a
MESSAGES_SNAPSHOT stated with another role: ``Belief.texts`` and ``Belief.others``), owner,
opener, baseline flag, type, and activity role ever (held or ``Belief.dropped``)."""


@dataclass
class Step:
    """One consumer copy's step at one position.

    Attributes:
        before, after: the state (``{field: [term per slot]}`` plus ``"npos"`` and
            ``"halted"``).
        warn, fatal: the codes of :data:`WARNINGS` and :data:`FATALS` (0 = none).
        b: conditions for rules and properties: keyed by the model's branch id where the
            condition is exactly that branch of :func:`model.consumer.step` (``"snapshot.create"``,
            ``"delta.missing"``, ...), by a name of its own where it is finer or coarser than a
            branch (``"declined"``, ``"mismatch"``, ``"detect"``, ``"applied"``, ...).
        branch: the branch the step returns on, an index into :data:`STEP_BRANCH_IDS` (a term,
            not a solver variable: it adds no constraint; :meth:`on` compares it).
    """

    before: dict
    after: dict
    warn: z3.ArithRef
    fatal: z3.ArithRef
    b: dict = field(default_factory=dict)
    branch: Optional[z3.ArithRef] = None

    def on(self, branch: str) -> z3.BoolRef:
        """The step returns on ``branch`` (a model branch id; KeyError outside the fragment)."""
        return self.branch == _BR[branch]


def _sel(values: list, index: z3.ArithRef):
    """``values[index]`` as an if-then-else chain over the slots."""
    out = values[-1]
    for j in range(len(values) - 2, -1, -1):
        out = z3.If(index == j, values[j], out)
    return out


_TARGET = ("ex", "act", "typ", "own", "fown", "cont", "seen", "pos", "open")
"""The per-id state arrays the step reads at the event's target id, in the order it unpacks them."""


_COLLECTIONS = (list, tuple, set, frozenset, types.GeneratorType)
"""What z3's ``Solver.add`` unpacks when it is the one argument (anything else, a Python bool
included, is one constraint)."""


class _Recorder:
    """A solver's ``add`` that also keeps what it added (:meth:`Unrolling.extend`)."""

    def __init__(self, solver: z3.Solver):
        self.solver, self.added = solver, []

    def add(self, *constraints) -> None:
        if len(constraints) == 1 and isinstance(constraints[0], _COLLECTIONS):
            constraints = tuple(constraints[0])  # one collection given, as z3's own add takes
        boolean = z3.BoolSort(self.solver.ctx)
        self.added.extend(boolean.cast(c) for c in constraints)  # as z3's add casts them
        self.solver.add(*constraints)


@dataclass(frozen=True, eq=False)
class _Position:
    """One position as :meth:`Unrolling.extend` built it: the constraints it added to the
    solver, in order (as Boolean terms), the event's variables, the producer's belief after it
    and the clauses the event breaks, the conformance so far, each copy's step (in the order of
    the unrolling's copies) and the symmetry breaking's mentioned-so-far terms after it."""

    constraints: tuple
    event: EventVars
    pstate: dict
    viol: dict
    conformant: z3.BoolRef
    steps: tuple
    mentioned: tuple


_PREFIXES: dict = {}
"""The positions built so far per unrolling configuration (:meth:`Unrolling._configuration`):
a list of :class:`_Position`, position ``t`` at index ``t - 1``. Queries unroll the same
configurations again and again (a ``resolve`` report makes 31 positions of 3 configurations,
11 of them distinct); the terms are kept while the configuration is among the last
:data:`_PREFIX_CONFIGURATIONS` met."""

_PREFIX_CONFIGURATIONS = 16
"""How many configurations :data:`_PREFIXES` keeps (the oldest met is dropped first); 0 turns
the memo off."""


def _copied(value):
    """``value`` in new containers (dicts, lists, :class:`EventVars` and :class:`Step`,
    recursively) around the same Z3 terms, which are immutable."""
    if isinstance(value, dict):
        return {k: _copied(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copied(v) for v in value]
    if isinstance(value, (EventVars, Step)):
        out = copy.copy(value)
        for f in fields(value):
            setattr(out, f.name, _copied(getattr(value, f.name)))
        return out
    return value


def _same(a, b) -> bool:
    """Whether ``a`` and ``b`` hold the same terms in the same shape (Z3 terms compared as
    terms, ``.eq``)."""
    if isinstance(a, z3.AstRef) or isinstance(b, z3.AstRef):
        return isinstance(a, z3.AstRef) and isinstance(b, z3.AstRef) and a.eq(b)
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(_same(v, b[k])
                                                                    for k, v in a.items())
    if isinstance(a, (list, tuple)):
        return isinstance(b, (list, tuple)) and len(a) == len(b) and \
            all(_same(x, y) for x, y in zip(a, b))
    return a == b


def _prefix_of(key) -> Optional[list]:
    """The list of :data:`_PREFIXES` for configuration ``key`` (a new empty one the first time;
    met again, it becomes the newest); None when the memo is off or ``key`` is None."""
    if key is None or _PREFIX_CONFIGURATIONS < 1:
        return None
    prefix = _PREFIXES.pop(key, None)
    if prefix is None:
        prefix = []
        while len(_PREFIXES) >= _PREFIX_CONFIGURATIONS:
            del _PREFIXES[next(iter(_PREFIXES))]
    _PREFIXES[key] = prefix
    return prefix


class Unrolling:
    """An incrementally unrolled encoding: ``extend()`` adds one trace position.

    Args:
        world: the finite world.
        consumers: ``{copy name: reading or None}``; ``None`` leaves that copy's knobs to the
            solver.
        producer: the reading whose Q2 and Q4-opener the producer's obligations use, or a list of
            readings (an event is conformant when it breaks no obligation under any of them), or
            None for a symbolic reading of its own, or the name of a consumer copy whose knobs
            it shares (so that a symbolic reading is one reading for both sides).
        symmetry: break the symmetry between ids, types and content literals (see
            :meth:`_break_symmetry`); off only to test that it changes no answer.
        timeout_ms: Z3's timeout per check (None: none).
        shadows: ``{copy name: reading}`` of *shadow* copies: at every position a shadow copy
            steps from the state the first consumer copy held before that position, not from
            its own. Used for shortest distinguishing traces: at the first length where two
            readings' steps can differ, they agreed on every earlier step (else a shorter trace
            would differ), so the state the shadow steps from is its own.

    Attributes:
        solver: the Z3 solver (definitional constraints only; queries pass assumptions).
        events: ``events[t]`` for ``t >= 1`` (index 0 unused: RUN_STARTED).
        steps: ``{copy: [None, Step at 1, Step at 2, ...]}``.
        pstates: producer belief ``pstates[t]`` after position ``t`` (``pstates[0]`` initial).
        viol: ``viol[t]``: ``{producer clause: Bool}`` of the event at ``t``.
        conformant: ``conformant[t]``: no event in ``1..t`` breaks a producer clause.
    """

    def __init__(self, world: World, consumers: dict, producer=None,
                 timeout_ms: Optional[int] = None, shadows: Optional[dict] = None,
                 symmetry: bool = True):
        configure_z3()
        self.world = world
        self.solver = z3.SolverFor("QF_LIA")
        if timeout_ms is not None:
            self.solver.set("timeout", int(timeout_ms))
        self.symmetry = symmetry
        self._mentioned: dict = {}
        self.shadows = dict(shadows or {})
        self.knobs = {name: Knobs(r, f"k_{name}") for name, r in
                      list(consumers.items()) + list(self.shadows.items())}
        if isinstance(producer, str):  # the producer reads the knobs of that consumer copy
            self.pknobs = [self.knobs[producer]]
        else:
            preadings = producer if isinstance(producer, (list, tuple)) else [producer]
            self.pknobs = [Knobs(r, f"p{i}", _FRAGMENT_PRODUCER_KNOBS)
                           for i, r in enumerate(preadings)]
        for k in {id(k): k for k in list(self.knobs.values()) + self.pknobs}.values():
            self.solver.add(*k.domain)
        n = len(world.ids)
        self.events: list = [None]
        self.steps: dict = {name: [None] for name in self.knobs}
        self._leader = next(iter(consumers))
        self.cstates: dict = {name: [self._initial_consumer(n)] for name in consumers}
        self.pstates: list = [self._initial_producer(n)]
        self.viol: list = [None]
        self.conformant: list = [z3.BoolVal(True)]
        self._indicators = 0

    def symbolic(self) -> list[tuple[str, z3.ArithRef]]:
        """The knob variables left to the solver (consumer copies first, then the producer's),
        in knob order: the first things a canonical model minimises."""
        out, seen = [], set()
        for owner, k in list(self.knobs.items()) + [("producer", k) for k in self.pknobs]:
            if id(k) in seen:
                continue
            seen.add(id(k))
            out.extend((f"{owner}.{kid}", v) for kid, v in k.vars.items())
        return out

    @property
    def n(self) -> int:
        """The number of positions unrolled (the trace length is ``n + 1``)."""
        return len(self.events) - 1

    def indicator(self, formula: z3.BoolRef) -> z3.BoolRef:
        """A fresh Boolean ``a`` with ``a -> formula`` asserted, to pass as an assumption."""
        self._indicators += 1
        a = z3.Bool(f"assume_{self._indicators}")
        self.solver.add(z3.Implies(a, formula))
        return a

    # --- initial states --------------------------------------------------------------------

    @staticmethod
    def _initial_consumer(n: int) -> dict:
        s = {f: [z3.BoolVal(False) if f in BOOL_FIELDS else z3.IntVal(0) for _ in range(n)]
             for f in CONSUMER_FIELDS}
        s["npos"] = z3.IntVal(0)
        s["halted"] = z3.BoolVal(False)
        return s

    @staticmethod
    def _initial_producer(n: int) -> dict:
        return {f: [z3.BoolVal(False) if f in PRODUCER_BOOL else z3.IntVal(0) for _ in range(n)]
                for f in PRODUCER_FIELDS}

    # --- unrolling -------------------------------------------------------------------------

    def extend(self) -> None:
        """Add position ``n + 1``: its event variables and domain, the producer step and every
        consumer copy's step.

        A position an earlier unrolling of the same configuration
        (:meth:`_configuration`) has built is taken from :data:`_PREFIXES`: the same terms,
        and the same constraints added to this solver in the same order, as building it again
        would give (the terms are a function of the configuration and the position alone),
        without the Python work of building them; else it is built, and kept there for the
        next unrolling when what it was built from is what that configuration's positions
        before it hold (a caller may have changed this unrolling's terms)."""
        t = self.n + 1
        prefix = _prefix_of(self._configuration())
        if prefix is not None and t <= len(prefix) and self._pristine(prefix, t):
            self._replay(prefix[t - 1])
            return
        keep = prefix is not None and t == len(prefix) + 1 and self._pristine(prefix, t)
        solver, recorder = self.solver, _Recorder(self.solver)
        self.solver = recorder  # what the position adds, in order
        try:
            e = self._event_vars(t)
            self.events.append(e)
            before = self.pstates[-1]
            after, viol = self._producer_step(before, e, t)
            self.pstates.append(after)
            self.viol.append(viol)
            self.conformant.append(z3.And(self.conformant[-1],
                                          z3.Not(z3.Or(list(viol.values())))))
            for name, knobs in self.knobs.items():
                if name in self.shadows:
                    st = self._consumer_step(self.cstates[self._leader][-2], e, knobs, t, name)
                    self.steps[name].append(st)
                    continue
                st = self._consumer_step(self.cstates[name][-1], e, knobs, t, name)
                self.steps[name].append(st)
                self.cstates[name].append(st.after)
        finally:
            self.solver = solver
        if keep:  # in containers of its own: callers may change theirs
            prefix.append(_Position(tuple(recorder.added), _copied(e), _copied(after),
                                    dict(viol), self.conformant[-1],
                                    tuple(_copied(self.steps[name][-1]) for name in self.knobs),
                                    tuple((k, tuple(v)) for k, v in self._mentioned.items())))

    def _configuration(self):
        """What the terms of a position depend on besides the position: the world, each copy
        with its reading (shadows apart), the producer's knobs (a copy's name, or the
        readings), symmetry breaking; None where the memo must not serve (a subclass, a build
        method replaced on the class or the instance, or a part that cannot be a dict key)."""
        if type(self) is not Unrolling or any(
                name in vars(self) or Unrolling.__dict__.get(name) is not method
                for name, method in _BUILDERS.items()):
            return None
        copies = tuple((name, k.reading, k.knob_ids) for name, k in self.knobs.items())
        shared = [name for name, k in self.knobs.items() if self.pknobs == [k]]
        producer = ("copy", shared[0]) if shared else \
            tuple((k.reading, k.knob_ids) for k in self.pknobs)
        key = (self.world, copies, producer, tuple(self.shadows), self._leader, self.symmetry)
        try:
            hash(key)
        except TypeError:
            return None
        return key

    def _pristine(self, prefix: list, t: int) -> bool:
        """Whether this unrolling holds, before position ``t``, the terms the configuration's
        positions ``1..t-1`` hold (``prefix``; before position 1, the initial states):
        nothing changed since it built or replayed them."""
        n = len(self.world.ids)
        if t == 1:
            pstate, conformant, mentioned = self._initial_producer(n), z3.BoolVal(True), ()
            states = [self._initial_consumer(n) for name in self.knobs
                      if name not in self.shadows]
        else:
            p = prefix[t - 2]
            pstate, conformant, mentioned = p.pstate, p.conformant, p.mentioned
            states = [st.after for name, st in zip(self.knobs, p.steps)
                      if name not in self.shadows]
        return len(self.pstates) == t and _same(self.pstates[-1], pstate) and \
            _same(self.conformant[-1], conformant) and \
            _same(tuple((k, tuple(v)) for k, v in self._mentioned.items()), mentioned) and \
            _same([self.cstates[name][-1] for name in self.knobs if name not in self.shadows],
                  states)

    def _replay(self, position: "_Position") -> None:
        """Add a position built before (:meth:`extend`): its constraints to this solver, its
        terms to this unrolling's lists (in containers of this unrolling's own, as a build
        gives)."""
        # what z3's Solver.add does with each (cast) constraint, without its per-call checks
        context, solver = self.solver.ctx.ref(), self.solver.solver
        for constraint in position.constraints:
            z3.Z3_solver_assert(context, solver, constraint.as_ast())
        self.events.append(_copied(position.event))
        self.pstates.append(_copied(position.pstate))
        self.viol.append(dict(position.viol))
        self.conformant.append(position.conformant)
        for name, st in zip(self.knobs, position.steps):
            st = _copied(st)
            self.steps[name].append(st)
            if name not in self.shadows:
                self.cstates[name].append(st.after)
        self._mentioned = {k: list(v) for k, v in position.mentioned}

    def step_variant(self, t: int, state: dict, knobs: "Knobs", name: str, **fields: int
                     ) -> "Step":
        """The consumer step at position ``t`` from ``state`` under ``knobs`` on a *variant* of
        that position's event: the event with each of ``fields`` (an :class:`EventVars` field
        name, e.g. ``rep=R_ABSENT``) set to the given constant. For relational properties that
        compare a step with the step on a variant input (PQ24: a replace:false creation against
        the same snapshot without ``replace``). ``name`` prefixes the variant's solver
        variables (distinct from every copy's name); asking twice for the same (``name``,
        ``t``) adds the same definitions again, which changes nothing.

        Raises:
            TypeError: a field :class:`EventVars` does not have."""
        import dataclasses
        e = dataclasses.replace(self.events[t], **{k: z3.IntVal(v) for k, v in fields.items()})
        return self._consumer_step(state, e, knobs, t, name)

    def _fresh(self, value, name: str, is_bool: bool):
        v = z3.Bool(name) if is_bool else z3.Int(name)
        self.solver.add(v == value)
        return v

    def _event_vars(self, t: int) -> EventVars:
        w, n = self.world, len(self.world.ids)
        I = lambda name: z3.Int(f"e{t}_{name}")  # noqa: E731
        e = EventVars(I("kind"), I("mid"), I("typ"), I("cont"), I("rep"), I("tag"), I("pk"),
                      [I(f"inc{j}") for j in range(n)], [I(f"mtyp{j}") for j in range(n)],
                      [I(f"mown{j}") for j in range(n)], [I(f"mcont{j}") for j in range(n)],
                      [I(f"rank{j}") for j in range(n)])
        s = self.solver
        s.add(z3.Or([e.kind == k for k in w.kinds]))
        s.add(e.mid >= 0, e.mid < n, e.typ >= 0, e.typ < len(w.types), e.cont >= 0,
              e.cont < w.contents, e.rep >= 0, e.rep <= 2, e.tag >= 0, e.tag < w.owners,
              e.pk >= 0, e.pk <= 2)
        # unused fields are zero, so that one event has one assignment
        s.add(z3.Implies(e.kind != SNAP, z3.And(e.cont == 0, e.rep == 0)))
        s.add(z3.Implies(z3.And(e.kind != SNAP, e.kind != DELTA), z3.And(e.typ == 0, e.tag == 0)))
        s.add(z3.Implies(e.kind != DELTA, e.pk == 0))
        s.add(z3.Implies(e.kind == MS, e.mid == 0))
        listed = [e.inc[j] != I_NONE for j in range(n)]
        count = z3.Sum([z3.If(x, 1, 0) for x in listed])
        for j in range(n):
            s.add(e.inc[j] >= 0, e.inc[j] <= 2, e.mtyp[j] >= 0, e.mtyp[j] < len(w.types),
                  e.mown[j] >= 0, e.mown[j] < w.owners, e.mcont[j] >= 0,
                  e.mcont[j] < w.contents)
            s.add(z3.Implies(e.kind != MS, e.inc[j] == I_NONE))
            s.add(z3.Implies(e.inc[j] != I_ACT,
                             z3.And(e.mtyp[j] == 0, e.mown[j] == 0, e.mcont[j] == 0)))
            s.add(z3.If(listed[j], z3.And(e.rank[j] >= 0, e.rank[j] < count), e.rank[j] == 0))
            for k in range(j + 1, n):
                s.add(z3.Implies(z3.And(listed[j], listed[k]), e.rank[j] != e.rank[k]))
        if self.symmetry:
            self._break_symmetry(e, t)
        return e

    def _break_symmetry(self, e: EventVars, t: int) -> None:
        """Ids, activity types and content literals are interchangeable (no check and no step
        treats one differently from another), so every trace has a renaming in which each is
        first mentioned in index order: value ``v > 0`` may be mentioned only once ``v - 1`` has
        been, at this event or before. Shortest lengths and sat/unsat answers are unchanged."""
        w, n = self.world, len(self.world.ids)
        ids = [z3.Or(z3.And(e.kind != MS, e.mid == j), z3.And(e.kind == MS, e.inc[j] != I_NONE))
               for j in range(n)]
        types = [z3.Or(z3.And(z3.Or(e.kind == SNAP, e.kind == DELTA), e.typ == v),
                       z3.Or([z3.And(e.inc[j] == I_ACT, e.mtyp[j] == v) for j in range(n)]))
                 for v in range(len(w.types))]
        conts = [z3.Or(z3.And(e.kind == SNAP, e.cont == v),
                       z3.Or([z3.And(e.inc[j] == I_ACT, e.mcont[j] == v) for j in range(n)]))
                 for v in range(w.contents)]
        for name, mentions in (("id", ids), ("type", types), ("content", conts)):
            prior = self._mentioned.setdefault(name, [z3.BoolVal(False)] * len(mentions))
            now = [self._fresh(z3.Or(prior[v], mentions[v]), f"sym{t}_{name}{v}", True)
                   for v in range(len(mentions))]
            for v in range(1, len(mentions)):
                self.solver.add(z3.Implies(mentions[v], now[v - 1]))
            self._mentioned[name] = now

    # --- the producer (model.producer.violations / advance, fragment events) --------------

    def _producer_step(self, p: dict, e: EventVars, t: int) -> tuple[dict, dict]:
        """The belief after ``e`` and the producer clauses it breaks. A MESSAGES_SNAPSHOT listing
        an activity drops the held ones it leaves out (STA-MS-SELF-REVOKE; ``pused`` keeps their
        role for EVM-ID-UNIQUE); one listing none keeps them (STA-MS-DROP-EXCEPT); ids it states
        with another role become non-activity ids (``ptext``, EVM-ID-UNIQUE, N80)."""
        n = len(self.world.ids)
        isS, isD, isT, isM = (e.kind == SNAP), (e.kind == DELTA), (e.kind == TEXT), (e.kind == MS)
        tpa, tptext, tpown, tpopen, tpvia, tpused = (
            _sel(p[f], e.mid) for f in ("pa", "ptext", "pown", "popen", "pvia", "pused"))
        # a MESSAGES_SNAPSHOT stating an activity's id with another role, or a non-activity id
        # as an activity
        ms_reuse = z3.Or([z3.Or(z3.And(e.inc[j] == I_ACT, p["ptext"][j]),
                                z3.And(e.inc[j] == I_TEXT, p["pused"][j])) for j in range(n)])
        viol_sets = []
        for pk in self.pknobs:
            disagree = z3.If(e.tag != 0, e.tag != tpown,
                             z3.And(tpown != 0, pk.is_("Q2", "parent")))
            opener = z3.If(pk.is_("Q4-opener", "current"), tpown, tpopen)
            viol_sets.append({
                "ACT-ATTR-AGREE": z3.And(isS, tpa, e.rep == R_FALSE, disagree),
                "SUB-OWNER-AGREE": z3.And(isD, tpa, tpvia, e.tag != 0, e.tag != opener),
            })
        viol = {
            # ids are unique across roles (EVM-ID-UNIQUE, N80): a snapshot or delta on a
            # non-activity id, a text on an activity's id (held or dropped), a MESSAGES_SNAPSHOT
            # changing an id's role
            "EVM-ID-UNIQUE": z3.Or(z3.And(z3.Or(isS, isD), z3.Not(tpa), tptext),
                                   z3.And(isT, tpused), z3.And(isM, ms_reuse)),
            "ACT-ATTR-AGREE": z3.Or([v["ACT-ATTR-AGREE"] for v in viol_sets]),
            "ACT-DELTA-BASELINE": z3.And(isD, z3.Or(z3.Not(tpa), z3.Not(tpvia))),
            "SNP-BASELINE": z3.And(isD, z3.Not(tpa)),
            "SUB-OWNER-AGREE": z3.Or([v["SUB-OWNER-AGREE"] for v in viol_sets]),
            "ACT-DELTA-OBJECT": z3.And(isD, tpa, tpvia, e.pk == P_NONOBJ),
            "LIF-RESTATE-SNAPSHOT": z3.And(isT, z3.Not(tpused), tptext),
        }
        viol = {k: self._fresh(v, f"v{t}_{k}", True) for k, v in viol.items()}
        after = {f: [] for f in PRODUCER_FIELDS}
        # a MESSAGES_SNAPSHOT carrying an activity states the complete set (STA-MS-SELF-REVOKE)
        revokes = z3.And(isM, z3.Or([e.inc[j] == I_ACT for j in range(n)]))
        for j in range(n):
            here = e.mid == j
            pa, ptext, pown, popen, pvia, ptyp, _ = (p[f][j] for f in PRODUCER_FIELDS)
            create = z3.And(isS, here, z3.Not(pa))
            replace = z3.And(isS, here, pa, e.rep != R_FALSE)
            snap = z3.And(isS, here)
            retype = z3.And(isD, here, pa)
            ms_act = z3.And(isM, e.inc[j] == I_ACT)
            pa_after = z3.If(revokes, ms_act, z3.Or(pa, create))
            new = {
                "pa": pa_after,
                "ptext": z3.Or(ptext, z3.And(isT, here), z3.And(isM, e.inc[j] == I_TEXT)),
                "pused": z3.Or(p["pused"][j], pa_after),
                "pown": z3.If(z3.Or(create, replace), e.tag, z3.If(ms_act, e.mown[j], pown)),
                "popen": z3.If(create, e.tag, z3.If(z3.And(ms_act, z3.Not(pa)), e.mown[j], popen)),
                "pvia": z3.If(snap, True, z3.If(z3.And(ms_act, z3.Not(pa)), False, pvia)),
                "ptyp": z3.If(z3.Or(create, replace, retype), e.typ,
                              z3.If(ms_act, e.mtyp[j], ptyp)),
            }
            for f in PRODUCER_FIELDS:
                after[f].append(self._fresh(new[f], f"p{t}_{f}{j}", f in PRODUCER_BOOL))
        return after, viol

    # --- the consumer (model.consumer.step, fragment events) ------------------------------

    def _consumer_step(self, s: dict, e: EventVars, k: Knobs, t: int, name: str) -> Step:
        n = len(self.world.ids)
        live = z3.Not(s["halted"])
        isS = z3.And(live, e.kind == SNAP)
        isD = z3.And(live, e.kind == DELTA)
        isT = z3.And(live, e.kind == TEXT)
        isM = z3.And(live, e.kind == MS)
        tex, tact, ttyp, town, tfown, tcont, tseen, tpos, topen = (
            _sel(s[f], e.mid) for f in _TARGET)
        b = {}
        # ACTIVITY_SNAPSHOT
        b["snapshot.create"] = z3.And(isS, z3.Not(tex), z3.Not(z3.And(tseen, k.is_("Q10", "seen"))))
        b["snapshot.seen-not-held"] = z3.And(isS, z3.Not(tex), tseen, k.is_("Q10", "seen"))
        b["snapshot.not-activity"] = z3.And(isS, tex, z3.Not(tact))
        q9_replace = z3.And(b["snapshot.not-activity"], k.is_("Q9", "replace"))
        b["snapshot.replace"] = z3.And(isS, tex, tact, e.rep != R_FALSE)
        is_last = z3.And([z3.Or(e.mid == j, z3.Not(s["ex"][j]), s["pos"][j] < tpos)
                          for j in range(n)])
        b["not_last"] = z3.Not(is_last)
        b["move"] = z3.And(b["snapshot.replace"], k.is_("Q11", "move"), z3.Not(is_last))
        b["declined"] = z3.And(isS, tex, tact, e.rep == R_FALSE)
        b["snapshot.owner-disagrees"] = z3.And(b["declined"], z3.If(e.tag != 0, e.tag != town,
                                                    z3.And(town != 0, k.is_("Q2", "parent"))))
        # ACTIVITY_DELTA
        b["delta.missing"] = z3.And(isD, z3.Not(tex))
        b["delta.not-activity"] = z3.And(isD, tex, z3.Not(tact))
        b["delta_live"] = z3.And(isD, tex, tact)
        opener = z3.If(k.is_("Q4-opener", "current"), town, tfown)
        b["mismatch"] = z3.And(b["delta_live"], e.tag != 0, e.tag != opener)
        b["patch"] = z3.And(b["delta_live"], z3.Or(z3.Not(b["mismatch"]), k.is_("Q4", "accept")))
        is_object = tcont >= 0
        ok = z3.Or(z3.And(e.pk == P_APPLY, is_object), e.pk == P_NONOBJ)
        b["not_applies"] = z3.And(b["patch"], z3.Not(ok))
        b["detect"] = z3.And(b["patch"], e.pk == P_NONOBJ, is_object)
        result = z3.If(e.pk == P_APPLY, FRESH + t, NON_OBJECT)
        failure = z3.And(b["patch"], z3.Or(z3.Not(ok), z3.And(b["detect"], k.is_("Q7", "skip"))))
        b["failure"] = failure
        nonobj_fatal = z3.And(b["detect"], k.is_("Q7", "fatal"))
        b["applied"] = z3.And(b["patch"], ok, z3.Not(z3.And(b["detect"],
                                                             z3.Not(k.is_("Q7", "apply")))))
        patch_fatal = z3.And(failure, k.is_("Q13", "fatal"))
        patch_warn = z3.And(failure, k.is_("Q13", "tolerate"))
        retype_fail = z3.And(patch_warn, k.is_("Q5", "retype"))
        # TEXT_MESSAGE_START
        b["text.target-activity"] = z3.And(isT, tex, tact)
        b["text.target-missing"] = z3.And(isT, tex, z3.Not(tact))
        # a START whose message a MESSAGES_SNAPSHOT dropped with its stream open (X1=drop-open)
        b["text.still-open"] = z3.And(isT, z3.Not(tex), topen)
        b["text_create"] = z3.And(isT, z3.Not(tex), z3.Not(topen))
        b["ms"] = isM
        branch = self._branch(s, e, k, b, failure)

        fatal = z3.If(z3.And(b["snapshot.not-activity"], k.is_("Q9", "fatal")), F_SNAP_NONACT,
                z3.If(z3.And(b["snapshot.owner-disagrees"], k.is_("Q3", "fatal")), F_SNAP_OWNER,
                z3.If(z3.And(b["mismatch"], k.is_("Q4", "fatal")), F_DELTA_OWNER,
                z3.If(nonobj_fatal, F_NONOBJ,
                z3.If(patch_fatal, F_PATCH,
                z3.If(b["text.still-open"], F_STILL_OPEN, 0))))))
        warn = z3.If(b["snapshot.seen-not-held"], W_SEEN,
               z3.If(z3.And(b["snapshot.not-activity"], k.is_("Q9", "skip")), W_SNAP_NONACT,
               z3.If(z3.And(b["snapshot.owner-disagrees"], z3.Or(k.is_("Q3", "skip"), k.is_("Q3", "warn"))),
                     W_SNAP_OWNER,
               z3.If(b["delta.missing"], W_DELTA_MISSING,
               z3.If(b["delta.not-activity"], W_DELTA_NONACT,
               z3.If(z3.And(b["mismatch"], k.is_("Q4", "skip")), W_DELTA_OWNER,
               z3.If(patch_warn, W_PATCH,
               z3.If(b["text.target-activity"], W_TEXT_ON_ACT,
               z3.If(b["text.target-missing"], W_TEXT_REUSED, 0)))))))))

        # MESSAGES_SNAPSHOT reconciliation (STA-MS-*)
        any_act = z3.Or([e.inc[j] == I_ACT for j in range(n)])
        b["ms_any_activity"] = z3.And(isM, any_act)
        ms_new = {f: [] for f in CONSUMER_FIELDS}
        b["ms_kept_unlisted_activity"] = []
        b["ms_dropped_activity"] = []
        b["ms_appended"] = []
        b["ms_restated"] = []
        for j in range(n):
            listed = e.inc[j] != I_NONE
            as_act = e.inc[j] == I_ACT
            by_type = z3.And([z3.Or(e.inc[x] != I_ACT, e.mtyp[x] != s["typ"][j])
                              for x in range(n)])
            keep_act = z3.And(s["act"][j], z3.Or(z3.Not(any_act), k.is_("Q8", "keep"),
                                                 z3.And(k.is_("Q8", "by-type"), by_type)))
            keep_text = z3.And(z3.Not(s["act"][j]), s["open"][j], k.is_("X1", "preserve"))
            keep = z3.And(s["ex"][j], z3.Not(listed), z3.Or(keep_act, keep_text))
            appended = z3.And(z3.Not(s["ex"][j]), listed)
            b["ms_kept_unlisted_activity"].append(
                z3.And(isM, s["ex"][j], s["act"][j], z3.Not(listed), keep_act))
            b["ms_dropped_activity"].append(
                z3.And(isM, s["ex"][j], s["act"][j], z3.Not(listed), z3.Not(keep_act)))
            b["ms_appended"].append(z3.And(isM, appended))
            b["ms_restated"].append(z3.And(isM, s["ex"][j], listed))
            held = z3.Or(listed, keep)
            ms_new["ex"].append(held)
            ms_new["act"].append(z3.If(listed, as_act, z3.And(keep, s["act"][j])))
            ms_new["pos"].append(z3.If(appended, s["npos"] + e.rank[j],
                                       z3.If(held, s["pos"][j], 0)))
            ms_new["typ"].append(z3.If(listed, z3.If(as_act, e.mtyp[j], 0),
                                       z3.If(keep, s["typ"][j], 0)))
            ms_new["own"].append(z3.If(listed, z3.If(as_act, e.mown[j], 0),
                                       z3.If(keep, s["own"][j], 0)))
            restated_act = z3.And(as_act, s["ex"][j], s["act"][j])  # keeps its opener
            ms_new["fown"].append(z3.If(listed, z3.If(restated_act, s["fown"][j],
                                                      z3.If(as_act, e.mown[j], 0)),
                                        z3.If(keep, s["fown"][j], 0)))
            ms_new["cont"].append(z3.If(listed, z3.If(as_act, e.mcont[j], TEXT_CONTENT),
                                        z3.If(keep, s["cont"][j], 0)))
            ms_new["seen"].append(z3.Or(s["seen"][j], held))
            # a stream stays open when its message is held, was not held (dropped earlier under
            # X1=drop-open), or is dropped in flight now under X1=drop-open
            ms_new["open"].append(z3.And(s["open"][j], z3.Or(
                held, z3.Not(s["ex"][j]),
                z3.And(z3.Not(s["act"][j]), z3.Not(listed), k.is_("X1", "drop-open")))))

        after = {f: [] for f in CONSUMER_FIELDS}
        for j in range(n):
            here = e.mid == j
            c_create = z3.And(here, b["snapshot.create"])
            c_q9 = z3.And(here, q9_replace)
            c_repl = z3.And(here, b["snapshot.replace"])
            c_move = z3.And(here, b["move"])
            c_applied = z3.And(here, b["applied"])
            c_retype = z3.And(here, retype_fail)
            c_text = z3.And(here, b["text_create"])
            new = {
                "ex": z3.Or(s["ex"][j], c_create, c_text),
                "act": z3.If(z3.Or(c_create, c_q9), True, z3.If(c_text, False, s["act"][j])),
                "pos": z3.If(z3.Or(c_create, c_text, c_move), s["npos"], s["pos"][j]),
                "typ": z3.If(z3.Or(c_create, c_q9, c_repl, c_applied, c_retype), e.typ,
                             s["typ"][j]),
                "own": z3.If(z3.Or(c_create, c_q9, c_repl), e.tag, s["own"][j]),
                "fown": z3.If(z3.Or(c_create, c_q9), e.tag, s["fown"][j]),
                "cont": z3.If(z3.Or(c_create, c_q9, c_repl), e.cont,
                              z3.If(c_applied, result,
                                    z3.If(c_text, TEXT_CONTENT, s["cont"][j]))),
                "seen": z3.Or(s["seen"][j], c_create, c_text),
                "open": z3.If(c_text, True, z3.If(c_q9, False, s["open"][j])),
            }
            for f in CONSUMER_FIELDS:
                value = z3.If(isM, ms_new[f][j], new[f])
                after[f].append(self._fresh(value, f"{name}{t}_{f}{j}", f in BOOL_FIELDS))
        grow = z3.If(isM, len(self.world.ids),
                     z3.If(z3.Or(b["snapshot.create"], b["text_create"], b["move"]), 1, 0))
        after["npos"] = self._fresh(s["npos"] + grow, f"{name}{t}_npos", False)
        warn_v = self._fresh(warn, f"{name}{t}_warn", False)
        fatal_v = self._fresh(fatal, f"{name}{t}_fatal", False)
        after["halted"] = self._fresh(z3.Or(s["halted"], fatal_v != 0), f"{name}{t}_halted",
                                      True)
        return Step(s, after, warn_v, fatal_v, b, branch)

    def _branch(self, s: dict, e: EventVars, k: Knobs, b: dict, failure: z3.BoolRef
                ) -> z3.ArithRef:
        """The branch the step of :meth:`_consumer_step` returns on (an index into
        :data:`STEP_BRANCH_IDS`), as :func:`model.consumer.step` names it: from the branch
        conditions ``b`` and the delta's ``failure`` (its patch does not apply, or is skipped as
        failed under Q7=skip)."""
        n = len(self.world.ids)
        snapshot = z3.If(b["snapshot.create"], _BR["snapshot.create"],
                   z3.If(b["snapshot.seen-not-held"], _BR["snapshot.seen-not-held"],
                   z3.If(b["snapshot.not-activity"], _BR["snapshot.not-activity"],
                   z3.If(b["snapshot.replace"], _BR["snapshot.replace"],
                   z3.If(b["snapshot.owner-disagrees"], _BR["snapshot.owner-disagrees"],
                         _BR["snapshot.replace-false"])))))
        delta = z3.If(b["delta.missing"], _BR["delta.missing"],
                z3.If(b["delta.not-activity"], _BR["delta.not-activity"],
                z3.If(z3.And(b["mismatch"], z3.Not(k.is_("Q4", "accept"))),
                      _BR["delta.owner-mismatch"],
                z3.If(failure, _BR["delta.patch-failed"],
                z3.If(b["detect"], _BR["delta.non-object"], _BR["delta.apply"])))))
        text = z3.If(b["text.target-activity"], _BR["text.target-activity"],
               z3.If(b["text.target-missing"], _BR["text.target-missing"],
               z3.If(b["text.still-open"], _BR["text.still-open"],
                     _BR["passthrough.accept"])))
        # a held text message still open that the MESSAGES_SNAPSHOT leaves out: X1 decides
        in_flight = z3.Or([z3.And(s["ex"][j], z3.Not(s["act"][j]), s["open"][j],
                                  e.inc[j] == I_NONE) for j in range(n)])
        listing = z3.If(in_flight, _BR["messages-snapshot.in-flight"],
                        _BR["messages-snapshot.reconcile"])
        return z3.If(s["halted"], _BR["lifecycle.halted"],
               z3.If(e.kind == SNAP, snapshot, z3.If(e.kind == DELTA, delta,
               z3.If(e.kind == TEXT, text, listing))))


_BUILDERS = {name: Unrolling.__dict__[name] for name in (
    "extend", "_initial_consumer", "_initial_producer", "_fresh", "_event_vars",
    "_break_symmetry", "_producer_step", "_consumer_step", "_branch")}
"""The methods a position's terms come from, as defined here: an unrolling whose class or
instance has another of them builds every position itself (:meth:`Unrolling._configuration`)."""
