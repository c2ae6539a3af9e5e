"""The all-readings sweep's expansion in blocks: a chunk of nodes at once, with numpy columns.

:meth:`properties.search.system_sweep.SweepSystem.expand` hands a chunk of nodes (up to the driver's 4096)
to :meth:`BlockTables.expand`, which produces exactly what expanding them one by one, move by
move and leaf by leaf, produces (the per-leaf loop, ``SweepSystem._expand_node``, which stays as
the reference): the same successors in the same order, the same findings at the same places and
as many memo-table entries (computed in another order: see the slow leaves below; an entry
depends on what its key stands for alone, so the order changes no outcome and no output). The Python work is done once per distinct
item of the chunk, not once per leaf:

* per distinct (belief, producer set): its move rows (the :class:`~properties.search.sweep_cache.SweepCache`
  memo ``move_rows``), as int columns kept here; node x move pairs by ``np.repeat``;
* per distinct (consumer state, event) among the pairs: its step tree (``SweepCache.tree_of``),
  numbered here by a *tree id* whose leaves' (state after, halted, outcome) are int columns;
* per distinct (tree shape, class): the fork (``SweepCache.fork_of``), numbered by a *fork id*;
* per leaf transition: the check key ``(view, state, event, outcome, conformant)`` packed into
  one int64 and looked up in a sorted column of the keys whose ``SweepCache.checked`` entries
  are mirrored here (a *check id*): the entry that ``sweep_cache._known`` would take for the leaf's
  class (the first whose consulted knobs all agree with the class's representative) is found
  for every leaf at once by comparing option numbers, and taken when its consulted knobs are
  ones the class fixes (as the per-leaf loop does). Everything else (a key not mirrored yet, no
  entry applies, or one that needs the class's forked readings) is a *slow leaf*, handled as the
  per-leaf loop handles it (``SweepCache.leaf_outcome``, the one sequence both take), in
  waves: each key's first slow leaf in the sequential order (node, move, leaf), then the later
  ones against the updated mirrors.

Split candidates (forks into several classes on conformant moves) are visited in the sequential
order too, since ``split_cost`` updates depend on it; those whose knobs a cost already settles
(``split_settled``) are dropped with numpy first. Violations are recorded per violating leaf in
the sequential order (through the ``record`` function given, ``move_table._record``), so the first
one recorded per property is the least ``(node, move, 2j + 1)``.

The mirrors are caches of caches: an entry mirrored here is a prefix of the ``checked``
entries it mirrors (a key's tuple of entries only grows, replaced by a longer one), so a stale
mirror can only send a leaf to the slow path, never give another outcome. They are dropped
with the memo tables (:meth:`SweepCache.trim`).

Memory (int32 columns): per tree id 4 ints plus 3 per leaf; per fork id 3 plus 2 per leaf;
per check id 5 plus 3 per mirrored entry (a key's entries are written again when its tuple
grows); per class 25 int16 option numbers; the sorted key columns 16 bytes per tree, fork,
check and class-outcome key; per (belief, producers) its move rows, 6 ints per move. At depth 4
(64,148 states) about 6 MB in all.
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from properties.search.store import KEY_LEAF_BITS, KEY_MOVE_BITS

__all__ = ["BlockTables", "ComponentColumns", "CHECK_STATE_MASK", "CHECK_STEP_MASK",
           "CHECK_VIEW_SHIFT", "check_key", "check_key_state"]

_TREE_E_BITS = 24  # tree key: state << 24 | event
_FORK_C_BITS = 40  # fork key: shape << 40 | class
_VIEW_LIMIT = 1 << 16  # check key: tree id << 24 | (view + 1) << 8 | outcome << 1 | ok
_OUTCOME_LIMIT = 1 << 7
_TREE_LIMIT = 1 << 39
_NO = np.int64(-1)
_LC_BITS = 24  # class-outcome key: check id << 24 | class
_LC_LIMIT = 1 << _LC_BITS
_CID_LIMIT = 1 << 39

CHECK_STATE_BITS, CHECK_EVENT_BITS, CHECK_OUTCOME_BITS = 40, 24, 16
CHECK_STATE_MASK = (1 << CHECK_STATE_BITS) - 1
CHECK_STEP_MASK = (1 << (CHECK_STATE_BITS + CHECK_EVENT_BITS + CHECK_OUTCOME_BITS)) - 1
CHECK_VIEW_SHIFT = CHECK_STATE_BITS + CHECK_EVENT_BITS + CHECK_OUTCOME_BITS + 1


def check_key(view: Optional[int], s: int, e: int, outcome: int, ok: bool) -> int:
    """The key of a leaf transition in the sweep's check table (``checked`` of
    :class:`properties.search.sweep_cache.SweepCache`): its consumer state, event, step outcome, belief
    view and conformance, packed into one int, from the lowest bits: 40 bits of state, 24 of
    event, 16 of outcome, 1 of conformance and the view above them (its number + 1; 0 for
    None, when no property reads the beliefs). So ``key & CHECK_STEP_MASK`` is the (state,
    event, outcome) key of the step-scoped checks (``step_checked``), :func:`check_key_state`
    the state and ``key >> CHECK_VIEW_SHIFT`` the view field. A Python int of 40 bytes, where
    the tuple of five took about 140 with its own ints. (An int hashes to itself modulo
    2**61 - 1, so one state's keys share their low hash bits; XORing a multiple of the event
    into the state's bits spreads them, but cost more instructions than the probes it saved.)
    Raises OverflowError when a field does not fit its bits."""
    if s >> CHECK_STATE_BITS or e >> CHECK_EVENT_BITS or outcome >> CHECK_OUTCOME_BITS:
        raise OverflowError(f"a check key out of range: state {s}, event {e}, "
                            f"outcome {outcome}")
    return (((((0 if view is None else view + 1) << 1 | ok) << CHECK_OUTCOME_BITS | outcome)
             << CHECK_EVENT_BITS | e) << CHECK_STATE_BITS) | s


def check_key_state(key: int) -> int:
    """The consumer state's number in a :func:`check_key`."""
    return key & CHECK_STATE_MASK


class _Column:
    """A growable column (amortised doubling; int32 unless told: a value out of its range
    raises): ``extend(values)`` returns the first new index; ``view()`` the filled part (a
    view: valid until the next ``extend``)."""

    __slots__ = ("data", "n")

    def __init__(self, dtype=np.int32):
        self.data = np.zeros(1024, dtype)
        self.n = 0

    def extend(self, values) -> int:
        values = np.asarray(values, dtype=self.data.dtype)
        start = self.n
        end = start + len(values)
        if end > len(self.data):
            grown = np.zeros(max(end, 2 * len(self.data)), self.data.dtype)
            grown[:start] = self.data[:start]
            self.data = grown
        self.data[start:end] = values
        self.n = end
        return start

    def set(self, at: np.ndarray, values) -> None:
        self.data[at] = values

    def view(self) -> np.ndarray:
        return self.data[:self.n]


class _KeyIndex:
    """A map from int64 keys to int64 ids, as two sorted columns (``find`` is vectorised;
    ``add`` inserts keys not present)."""

    __slots__ = ("keys", "ids")

    def __init__(self):
        self.keys = np.zeros(0, np.int64)
        self.ids = np.zeros(0, np.int64)

    def find(self, query: np.ndarray) -> np.ndarray:
        """The id per key of ``query`` (-1 where absent)."""
        if not len(self.keys):
            return np.full(len(query), -1, np.int64)
        at = np.searchsorted(self.keys, query)
        np.minimum(at, len(self.keys) - 1, out=at)
        return np.where(self.keys[at] == query, self.ids[at], _NO)

    def add(self, keys: np.ndarray, ids: np.ndarray) -> None:
        """Insert ``keys`` (distinct, absent) with their ``ids``."""
        order = np.argsort(keys, kind="stable")
        keys, ids = keys[order], ids[order]
        at = np.searchsorted(self.keys, keys)
        self.keys = np.insert(self.keys, at, keys)
        self.ids = np.insert(self.ids, at, ids)


def _first_order(keys: np.ndarray) -> tuple:
    """``(distinct keys in order of first appearance, inverse)``: ``inverse[i]`` is the
    position of ``keys[i]`` among the distinct ones."""
    unique, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")
    rank = np.empty(len(order), np.int64)
    rank[order] = np.arange(len(order))
    return unique[order], rank[inverse.reshape(-1)]


class ComponentColumns:
    """Per-class and per-state columns the block expansion reads, derived from the sweep's
    interned classes and consumer states alone, so that they outlive the mirrors of a
    :class:`BlockTables` (rebuilt whenever memo entries are dropped): per class, the option
    id its representative reading takes for each knob (int16: the class's option where it
    fixes the knob, ``draft``'s elsewhere; then a column of -1, the pad of the consulted
    sets' matrices) and the bit mask of the knobs it fixes; per consumer state, whether it is
    halted. Grown by amortised doubling (some 62 bytes per class and 1 per state).

    Args:
        options: reading attribute -> its option names (option ids are their positions);
        draft: the reading whose options stand for the knobs a class leaves free;
        attr_of_knob: knob id -> reading attribute.
    """

    def __init__(self, options: dict, draft, attr_of_knob: dict):
        self.attrs = tuple(options)
        self.bit = {a: 1 << i for i, a in enumerate(self.attrs)}
        self.column = {a: i for i, a in enumerate(self.attrs)}
        self.option_ids = {a: {o: i for i, o in enumerate(names)} for a, names in options.items()}
        self.attr_of_knob = attr_of_knob
        self.draft_row = np.array([self.option(a, getattr(draft, a)) for a in self.attrs] + [-1],
                                  np.int16)
        self._rep = np.zeros((1024, len(self.attrs) + 1), np.int16)
        self._mask = np.zeros(1024, np.int64)
        self._halted = np.zeros(1024, bool)
        self.classes = self.states = 0  # how many are filled

    def option(self, attr: str, value) -> int:
        """The id of option ``value`` of reading attribute ``attr`` (a value not among its
        option names is numbered after them, when first seen)."""
        ids = self.option_ids[attr]
        found = ids.get(value)
        if found is None:
            found = ids[value] = len(ids)
        return found

    def grow(self, classes: list, states: list) -> tuple:
        """Fill the columns for the classes (tuples of ``(knob id, option)``) and consumer
        states (with ``halted``) interned since the last call; returns ``(option ids per class,
        fixed-knob mask per class, halted per state)``, views of the filled parts (valid until
        the next call)."""
        have, want = self.classes, len(classes)
        if have < want:
            if want > len(self._mask):
                size = max(want, 2 * len(self._mask))
                rep = np.empty((size, self._rep.shape[1]), np.int16)
                rep[:have] = self._rep[:have]
                mask = np.zeros(size, np.int64)
                mask[:have] = self._mask[:have]
                self._rep, self._mask = rep, mask
            rows = self._rep[have:want]
            rows[:] = self.draft_row
            column, bit, attr_of, option = self.column, self.bit, self.attr_of_knob, self.option
            masks = self._mask
            for i, cls in enumerate(classes[have:want]):
                mask = 0
                for knob, value in cls:
                    attr = attr_of[knob]
                    rows[i, column[attr]] = option(attr, value)
                    mask |= bit[attr]
                masks[have + i] = mask
            self.classes = want
        have, want = self.states, len(states)
        if have < want:
            if want > len(self._halted):
                halted = np.zeros(max(want, 2 * len(self._halted)), bool)
                halted[:have] = self._halted[:have]
                self._halted = halted
            self._halted[have:want] = [st.halted for st in states[have:want]]
            self.states = want
        return self._rep[:self.classes], self._mask[:self.classes], self._halted[:self.states]


class BlockTables:
    """The block expansion of one :class:`~properties.search.system_sweep.SweepSystem` (see the module):
    int columns mirroring the sweep's memo tables, keyed by packed ints.

    Attributes:
        waves: how many times a chunk's slow leaves are split into each key's first one (the
            others resolved again once the mirrors hold its entries); the last wave takes
            every slow leaf left, in order.

    Args:
        cache: the system's :class:`~properties.search.sweep_cache.SweepCache` (read, and filled through
            its methods); broken: the outcome ``SweepCache.check`` gives when a run input raised
            (``sweep_cache._BROKEN``); columns: the system's :class:`ComponentColumns` (the knobs a
            check may consult, in a fixed order, and the per-class and per-state columns,
            which outlive these mirrors).
    """

    waves = 4

    def __init__(self, cache, broken, columns: ComponentColumns):
        self.cache, self.broken, self.columns = cache, broken, columns
        self.generation = cache.generation
        self.attrs, self.bit, self.column = columns.attrs, columns.bit, columns.column
        self.rows: dict = {}  # (belief, producers) -> move columns
        self.tree_index, self.tree_objs = _KeyIndex(), []
        self.t_exc, self.t_n, self.t_off, self.t_shape = (_Column() for _ in range(4))
        self.l_rs, self.l_halted, self.l_outcome = (_Column() for _ in range(3))
        self.fork_index, self.fork_objs = _KeyIndex(), []
        self.f_n, self.f_off, self.f_cand = (_Column() for _ in range(3))
        self.fl_lc, self.fl_li = _Column(), _Column()
        self.candidate_ids: dict = {}
        self.candidates: list = []
        self.check_index = _KeyIndex()
        self.c_fast, self.c_hit, self.c_eoff, self.c_en, self.c_seen = (_Column()
                                                                         for _ in range(5))
        self.e_cs, self.e_hit, self.e_mask = (_Column() for _ in range(3))
        self.hits: list = []  # per hit id: the violations, ((property, witness), ...)
        self.class_index = _KeyIndex()  # check id << 24 | class -> hit id + 1 (0: none)
        self.consulted_ids: dict = {}
        self.consulted: list = []  # per consulted-set id: [(attribute column, option id)]
        self.entry_codes: dict = {}  # see _entry_code
        self.pk = self.po = None  # consulted sets as padded (column, option) matrices
        # per class: option ids, fixed-knob mask; per state: halted (ComponentColumns.grow)
        self.rep, self.class_mask, self.state_halted = columns.grow((), ())

    # -- the interned components, as columns -------------------------------------------------
    def _grow_components(self) -> None:
        """Bring the per-class and per-state columns up to the interned values there are."""
        c = self.cache
        self.rep, self.class_mask, self.state_halted = self.columns.grow(c.classes.values,
                                                                         c.states.values)

    def _move_rows(self, b: int, p: int) -> tuple:
        """The move columns of (belief ``b``, producers ``p``): event, producers after,
        conformant, belief after, view + 1 (0: none), whether any property fires."""
        found = self.rows.get((b, p))
        if found is None:
            c = self.cache
            rows = c.move_rows.get((b, p)) or c.move_rows_of(b, p)
            cols = np.array([(e, pa, bool(ok), ba, 0 if view is None else view + 1,
                              bool(props)) for e, pa, ok, ba, props, view in rows],
                            np.int64).reshape(-1, 6)
            if len(cols) and cols.max() < 1 << 31:
                cols = cols.astype(np.int32)  # half the memory; widened per chunk
            found = self.rows[(b, p)] = cols
        return found

    # -- trees and forks ----------------------------------------------------------------------
    @staticmethod
    def _numbered(index: _KeyIndex, key: np.ndarray, objs: list, fill) -> np.ndarray:
        """The id in ``index`` of each of ``key`` (int64); the keys missing are numbered in the
        order of their first appearance, after ``fill(new keys as a list of ints)`` has
        appended one object to ``objs`` per key (and its columns)."""
        ids = index.find(key)
        missing = ids < 0
        if not missing.any():
            return ids
        new_keys, _ = _first_order(key[missing])
        first = len(objs)
        fill(new_keys.tolist())
        index.add(new_keys, np.arange(first, len(objs), dtype=np.int64))
        ids[missing] = index.find(key[missing])
        return ids

    def _tree_ids(self, s: np.ndarray, e: np.ndarray) -> np.ndarray:
        """The tree id of each (state, event), the trees missing computed (``tree_of``) in
        the order of their first appearance."""
        return self._numbered(self.tree_index, (s << _TREE_E_BITS) | e, self.tree_objs,
                              self._add_trees)

    def _add_trees(self, keys: list) -> None:
        c = self.cache
        exc, n, off, shape, rs, halted, outcome = [], [], [], [], [], [], []
        at = self.l_rs.n
        for k in keys:
            tree = c.tree_of(k >> _TREE_E_BITS, k & ((1 << _TREE_E_BITS) - 1))
            self.tree_objs.append(tree)
            if isinstance(tree, Exception):
                exc.append(1), n.append(0), off.append(at), shape.append(-1)
                continue
            leaves, sh = tree
            exc.append(0), n.append(len(leaves)), off.append(at), shape.append(sh)
            at += len(leaves)
            for leaf in leaves:
                rs.append(leaf[2]), halted.append(leaf[3]), outcome.append(leaf[4])
        for column, values in ((self.t_exc, exc), (self.t_n, n), (self.t_off, off),
                               (self.t_shape, shape), (self.l_rs, rs),
                               (self.l_halted, halted), (self.l_outcome, outcome)):
            column.extend(values)

    def _fork_ids(self, shape: np.ndarray, cl: np.ndarray) -> np.ndarray:
        """The fork id of each (tree shape, class), the forks missing computed (``fork_of``)
        in the order of their first appearance."""
        return self._numbered(self.fork_index, (shape.astype(np.int64) << _FORK_C_BITS) | cl,
                              self.fork_objs, self._add_forks)

    def _add_forks(self, keys: list) -> None:
        c = self.cache
        n, off, cand, lcs, lis = [], [], [], [], []
        at = self.fl_lc.n
        for k in keys:
            fork = c.fork_of(k >> _FORK_C_BITS, k & ((1 << _FORK_C_BITS) - 1))
            self.fork_objs.append(fork)
            leaves, candidates = fork
            ci = self.candidate_ids.get(candidates)
            if ci is None:
                ci = self.candidate_ids[candidates] = len(self.candidates)
                self.candidates.append(candidates)
            n.append(len(leaves)), off.append(at), cand.append(ci)
            at += len(leaves)
            for lc, li in leaves:
                lcs.append(lc), lis.append(li)
        for column, values in ((self.f_n, n), (self.f_off, off), (self.f_cand, cand),
                               (self.fl_lc, lcs), (self.fl_li, lis)):
            column.extend(values)

    # -- check outcomes -----------------------------------------------------------------------
    def _consulted_id(self, consulted: tuple):
        """The number of a consulted set (``[(attribute column, option id)]``), None when it
        names an attribute that is not a knob (then the mirror stops before its entry)."""
        found = self.consulted_ids.get(consulted)
        if found is None:
            if any(a not in self.bit for a, _ in consulted):
                return None
            found = self.consulted_ids[consulted] = len(self.consulted)
            self.consulted.append([(self.column[a], self.columns.option(a, o))
                                   for a, o in consulted])
        return found

    def _entry_code(self, consulted: tuple, attrs: frozenset) -> tuple:
        """``(consulted, attrs, consulted-set id, attribute mask)`` of a check entry's consulted
        pairs and attributes (the id None when one of them is not a knob: the mirror stops
        there), kept in :attr:`entry_codes` by the identity of the two (the sweep's entries
        share a few dozen such objects, :func:`properties.search.sweep_cache._consulted_set`)."""
        cs = self._consulted_id(consulted)
        if cs is not None and any(a not in self.bit for a in attrs):
            cs = None
        code = (consulted, attrs, cs, None if cs is None else sum(self.bit[a] for a in attrs))
        self.entry_codes[(id(consulted), id(attrs))] = code
        return code

    def _mirror(self, cids: list, entry_lists: list) -> None:
        """(Re)write the mirrors of check ids ``cids`` from their ``checked`` entries: the fast
        flag (the first entry consulted no knob) and hit, and each entry's consulted set, hit
        and attribute mask, up to the first entry that cannot be mirrored."""
        fast, hit, eoff, en, seen, e_cs, e_hit, e_mask = [], [], [], [], [], [], [], []
        at = self.e_cs.n
        hits, codes = self.hits, self.entry_codes
        for entries in entry_lists:
            first = entries[0]
            fast.append(0 if first[0] else 1)
            hit.append(-1 if first[1] is None else len(hits))
            if first[1] is not None:
                hits.append((first[1],))
            count = 0
            for consulted, outcome, attrs in entries:
                code = codes.get((id(consulted), id(attrs)))
                if code is None or code[0] is not consulted or code[1] is not attrs:
                    code = self._entry_code(consulted, attrs)
                cs = code[2]
                if cs is None:
                    break
                e_cs.append(cs)
                e_mask.append(code[3])
                if outcome is None:
                    e_hit.append(-1)
                else:
                    e_hit.append(len(hits))
                    hits.append((outcome,))
                count += 1
            eoff.append(at), en.append(count), seen.append(len(entries))
            at += count
        for column, values in ((self.e_cs, e_cs), (self.e_hit, e_hit), (self.e_mask, e_mask)):
            column.extend(values)
        at = np.asarray(cids, np.int64)
        for column, values in ((self.c_fast, fast), (self.c_hit, hit), (self.c_eoff, eoff),
                               (self.c_en, en), (self.c_seen, seen)):
            column.set(at, values)

    def _update_mirrors(self, touched: dict, cid_of: dict) -> None:
        """After the slow leaves: mirror the ``checked`` entries of the keys they touched
        (``touched``: packed key -> :func:`check_key`; ``cid_of``: packed key -> check id or
        -1)."""
        checked = self.cache.checked
        new_keys, redo, redo_lists = [], [], []
        for packed, key in touched.items():
            entries = checked.get(key)
            if not entries:
                continue
            cid = cid_of[packed]
            if cid < 0:
                new_keys.append(packed)
                cid = self.c_fast.n + len(new_keys) - 1
            elif len(entries) <= self.c_seen.data[cid]:
                continue
            redo.append(cid), redo_lists.append(entries)
        if new_keys:
            for column in (self.c_fast, self.c_hit, self.c_eoff, self.c_en, self.c_seen):
                column.extend(np.zeros(len(new_keys), np.int64))
            start = self.c_fast.n - len(new_keys)
            self.check_index.add(np.array(new_keys, np.int64),
                                 np.arange(start, self.c_fast.n, dtype=np.int64))
        if redo:
            self._mirror(redo, redo_lists)
        if len(self.consulted) != (0 if self.pk is None else len(self.pk)):
            width = max([len(p) for p in self.consulted] + [1])
            pad = len(self.attrs)
            self.pk = np.full((len(self.consulted), width), pad, np.int64)
            self.po = np.full((len(self.consulted), width), -1, np.int64)
            for i, pairs in enumerate(self.consulted):
                for w, (col, opt) in enumerate(pairs):
                    self.pk[i, w], self.po[i, w] = col, opt

    def _resolve(self, tid, view, outcome, ok, lc) -> tuple:
        """Per leaf with checks: ``(hit, resolved, check id, packed key)``; ``resolved`` where
        the mirrors give the outcome the per-leaf loop would take (then ``hit`` is the number
        of the violation in :attr:`hits`, -1 for none); the others are slow leaves."""
        packed = (tid << 24) | (view << 8) | (outcome.astype(np.int64) << 1) | ok
        cid = self.check_index.find(packed)
        cid[(view >= _VIEW_LIMIT) | (outcome >= _OUTCOME_LIMIT)] = -2  # never mirrored
        hit = np.full(len(tid), -1, np.int64)
        resolved = np.zeros(len(tid), bool)
        known = np.flatnonzero(cid >= 0)
        kc = cid[known]
        fast = self.c_fast.data[kc] == 1
        at = known[fast]
        hit[at] = self.c_hit.data[kc[fast]]
        resolved[at] = True
        at, kc = known[~fast], kc[~fast]
        en = self.c_en.data[kc]
        some = en > 0
        at, kc, en = at[some], kc[some], en[some]
        if len(at) and self.pk is not None:
            starts = np.zeros(len(at), np.int64)
            np.cumsum(en[:-1], out=starts[1:])
            owner = np.repeat(np.arange(len(at)), en)
            pos = np.arange(len(owner)) - starts[owner]
            eoff = self.c_eoff.data[kc]
            cs = self.e_cs.data[eoff[owner] + pos]
            leaf_lc = lc[at]
            match = (self.rep[leaf_lc[owner][:, None], self.pk[cs]] == self.po[cs]).all(axis=1)
            big = np.int64(1 << 40)
            first = np.minimum.reduceat(np.where(match, pos, big), starts)
            found = first < big
            row = eoff + np.where(found, first, 0)
            good = found & ((self.e_mask.data[row] & ~self.class_mask[leaf_lc]) == 0)
            hit[at[good]] = self.e_hit.data[row[good]]
            resolved[at[good]] = True
            # an entry that holds for the representative but not class-wide: the outcome over
            # the class's readings, where class_outcome has settled it (class_checked)
            forks = np.flatnonzero(found & ~good & (kc < _CID_LIMIT) & (leaf_lc < _LC_LIMIT))
            if len(forks):
                outcome = self.class_index.find((kc[forks] << _LC_BITS) | leaf_lc[forks])
                settled = outcome >= 0
                hit[at[forks[settled]]] = outcome[settled] - 1
                resolved[at[forks[settled]]] = True
        return hit, resolved, cid, packed

    # -- a chunk ------------------------------------------------------------------------------
    def fits(self) -> bool:
        """Whether the interned numbers fit the packed keys (else the per-leaf loop is taken:
        some 16 million events or 8 million tree shapes would be needed)."""
        c = self.cache
        return len(c.events.values) < 1 << _TREE_E_BITS and \
            len(c.states.values) < _TREE_LIMIT and len(c.shapes.values) < 1 << 22 and \
            len(c.classes.values) < 1 << _FORK_C_BITS and \
            len(c.producer_sets.values) < 1 << 24 and len(self.tree_objs) < _TREE_LIMIT

    def expand(self, ids: np.ndarray, nodes: np.ndarray, level: int, out, recorded: set,
               record, may_improve) -> None:
        """Expand ``nodes`` (int64 (n, 4): belief, state, producers, class) whose ids are
        ``ids`` into ``out`` (:class:`~properties.search.bfs.Expansion`), as the per-leaf loop does;
        ``recorded``, ``record``: the violation keys merged so far and ``move_table._record``;
        ``may_improve``: ``sweep_cache._may_improve``."""
        c = self.cache
        n = len(ids)
        b, s, p, cl = (nodes[:, i] for i in range(4))
        # node x move pairs
        bp, inverse = _first_order((b << 24) | p)
        tables = [self._move_rows(k >> 24, k & 0xFFFFFF) for k in bp.tolist()]
        counts = np.array([len(t) for t in tables], np.int64)
        offs = np.zeros(len(tables), np.int64)
        np.cumsum(counts[:-1], out=offs[1:])
        rows = np.concatenate(tables).astype(np.int64) if tables else \
            np.zeros((0, 6), np.int64)
        n_moves = counts[inverse]
        out.moves.frombytes(n_moves.tobytes())
        pair_node = np.repeat(np.arange(n), n_moves)
        move_starts = np.zeros(n, np.int64)
        np.cumsum(n_moves[:-1], out=move_starts[1:])
        pm = np.arange(len(pair_node)) - move_starts[pair_node]
        e, pa, ok, ba, view, props = rows[np.repeat(offs[inverse], n_moves) + pm].T
        ps = s[pair_node]
        tid = self._tree_ids(ps, e)
        exc = self.t_exc.data[tid] == 1
        n_leaves = self.t_n.data[tid]
        multi = np.flatnonzero(n_leaves > 1)
        fid = np.full(len(tid), -1, np.int64)
        if len(multi):
            fid[multi] = self._fork_ids(self.t_shape.data[tid[multi]], cl[pair_node[multi]])
            n_leaves[multi] = self.f_n.data[fid[multi]]
        self._grow_components()
        findings = []  # (sequence, property id, payload), recorded in order at the end
        node_ids = ids.astype(np.int64)
        for q in np.flatnonzero(exc).tolist():
            node, m, tree = int(node_ids[pair_node[q]]), int(pm[q]), self.tree_objs[tid[q]]
            findings.append(((node, m, 0), "P00-no-exception",
                             (node, m, f"{type(tree).__name__}: {tree}")))
        if len(multi):
            self._splits(multi, fid, n_leaves, ok, pa, ps, tid, node_ids[pair_node], pm,
                         level, out, may_improve)
        # leaves
        leaf_pair = np.repeat(np.arange(len(tid)), n_leaves)
        leaf_starts = np.zeros(len(tid), np.int64)
        np.cumsum(n_leaves[:-1], out=leaf_starts[1:])
        j = np.arange(len(leaf_pair)) - leaf_starts[leaf_pair]
        lc = cl[pair_node[leaf_pair]]
        li = np.zeros(len(leaf_pair), np.int64)
        forked = np.flatnonzero(fid[leaf_pair] >= 0)
        if len(forked):
            at = self.f_off.data[fid[leaf_pair[forked]]] + j[forked]
            lc[forked], li[forked] = self.fl_lc.data[at], self.fl_li.data[at]
        lrow = self.t_off.data[tid[leaf_pair]] + li
        alive = np.ones(len(leaf_pair), bool)
        checking = np.flatnonzero(props[leaf_pair] == 1)
        if len(checking):
            q = leaf_pair[checking]
            columns = (tid[q], view[q], self.l_outcome.data[lrow[checking]], ok[q],
                       lc[checking])
            pending = np.arange(len(checking))
            waves = 0
            while len(pending):  # waves: a key's later leaves after its first slow one
                hit, resolved, cid, packed = self._resolve(*(c[pending] for c in columns))
                for i in np.flatnonzero(hit >= 0).tolist():
                    leaf = int(checking[pending[i]])
                    pair = leaf_pair[leaf]
                    node, m = int(node_ids[pair_node[pair]]), int(pm[pair])
                    sub = 2 * int(j[leaf]) + 1
                    for prop, witness in self.hits[hit[i]]:
                        findings.append(((node, m, sub), prop.id, (node, m, witness)))
                slow = np.flatnonzero(~resolved)
                if not len(slow):
                    break
                # each key's first slow leaf now (keys the mirrors cannot hold: every leaf;
                # the last wave: every leaf left, in order)
                waves += 1
                if waves >= self.waves:
                    first = np.ones(len(slow), bool)
                else:
                    first = np.zeros(len(slow), bool)
                    first[np.unique(packed[slow], return_index=True)[1]] = True
                    first |= cid[slow] == -2
                now = slow[first]
                self._slow(checking[pending[now]], cid[now], packed[now], leaf_pair,
                           pair_node, node_ids, pm, j, lc, li, tid, b, s, p, level, alive,
                           findings)
                pending = pending[slow[~first]]
        findings.sort(key=lambda f: f[0])
        for seq, key, payload in findings:
            record(out, recorded, key, seq, payload)
        # successors
        keep = np.flatnonzero(alive) if not alive.all() else slice(None)
        q = leaf_pair[keep]
        out.keys.frombytes((((node_ids[pair_node[q]]) << (KEY_MOVE_BITS + KEY_LEAF_BITS))
                            | (pm[q] << KEY_LEAF_BITS) | j[keep])
                           .tobytes())
        succ = np.stack((ba[q], self.l_rs.data[lrow[keep]], pa[q], lc[keep]), axis=1)
        out.nodes.frombytes(np.ascontiguousarray(succ, np.int64).tobytes())
        out.halted.extend((self.l_halted.data[lrow[keep]] == 1).tolist())

    def _splits(self, multi, fid, n_leaves, ok, pa, ps, tid, pair_ids, pm, level: int, out,
                may_improve) -> None:
        """The split candidates among the pairs ``multi`` (forked trees), in the sequential
        order: a fork into several classes on a conformant move from a live state, recorded
        by ``SweepCache.splits_at`` when it may improve a split witness (as the per-leaf loop
        does); those a settled cost rules out at the start of the chunk are dropped first."""
        c = self.cache
        at = multi[(n_leaves[multi] > 1) & (ok[multi] == 1) & ~self.state_halted[ps[multi]]]
        if not len(at):
            return
        conformant = np.array(c.draft_conformant, bool)
        cand = self.f_cand.data[fid[at]]
        bad = ~conformant[pa[at]]
        keys, inverse = _first_order(cand * 2 + bad)
        settled_now = c.split_settled
        skip = np.zeros(len(keys), bool)
        for i, k in enumerate(keys.tolist()):
            settled = settled_now.get(self.candidates[k >> 1])
            skip[i] = settled is not None and settled <= (level, bool(k & 1))
        at = at[~skip[inverse]]
        classes = c.classes.values
        for q, node, m in zip(at.tolist(), pair_ids[at].tolist(), pm[at].tolist()):
            leaves, candidates = self.fork_objs[fid[q]]
            rank = (level, not c.draft_conformant[pa[q]])
            settled = settled_now.get(candidates)
            if settled is not None and settled <= rank:
                continue  # no split witness of these knobs can improve any more
            if may_improve(c.split_cost, candidates, rank):
                tree = self.tree_objs[tid[q]][0]
                c.splits_at(out, [(classes[lc], tree[leaf][1]) for lc, leaf in leaves],
                            node, m, rank)
            else:
                settled_now[candidates] = rank

    def _slow(self, leaves, cid, packed, leaf_pair, pair_node, node_ids, pm, j, lc, li, tid,
              b, s, p, level: int, alive, findings: list) -> None:
        """The slow leaves (indices ``leaves``, in order), checked as the per-leaf loop checks
        them (:meth:`~properties.search.sweep_cache.SweepCache.leaf_outcome`); their violations go to
        ``findings``, a leaf whose run input raised is marked not ``alive``; then the mirrors of the keys they touched are brought up to date."""
        c = self.cache
        states, move_rows, broken = c.states.values, c.move_rows, self.broken
        leaf_outcome, tree_objs = c.leaf_outcome, self.tree_objs
        touched, cid_of, settled = {}, {}, []
        class_checked, checked = c.class_checked, c.checked
        collector, recorded = _Collector(), set()  # for a leaf's P00, emptied after each
        qs = leaf_pair[leaves]
        ns = pair_node[qs]
        for leaf, tq, node, m, jj, bv, sv, pv, lcv, liv, ci, pk in zip(
                leaves.tolist(), tid[qs].tolist(), node_ids[ns].tolist(), pm[qs].tolist(),
                j[leaves].tolist(), b[ns].tolist(), s[ns].tolist(), p[ns].tolist(),
                lc[leaves].tolist(), li[leaves].tolist(), cid.tolist(), packed.tolist()):
            e, pa, ok, ba, _, view = move_rows[(bv, pv)][m]
            _, result, rs, _, outcome, _ = tree_objs[tq][0][liv]
            key = check_key(view, sv, e, outcome, ok)
            seq = (node, m, 2 * jj + 1)
            found = leaf_outcome(key, lcv, (level, states[sv], e, result, rs, bv, ba, ok),
                                 (collector, recorded, seq, node, m), checked.get(key))
            if collector.findings:  # a P00 recorded for this leaf (once per leaf)
                findings.extend((f[2], f[0][1], f[3]) for f in collector.findings)
                collector.findings.clear()
                recorded.clear()
            if found is broken:
                alive[leaf] = False
                continue
            if ci != -2 and class_checked and (key, lcv) in class_checked:
                settled.append((pk, lcv, found))
            for prop, witness in found:
                findings.append((seq, prop.id, (node, m, witness)))
            if ci != -2:
                touched[pk] = key
                cid_of[pk] = ci
        self._update_mirrors(touched, cid_of)
        if settled:
            self._settle(settled)

    def _settle(self, settled: list) -> None:
        """Mirror the class outcomes ``class_outcome`` settled (``class_checked``) for the slow
        leaves: ``settled`` is ``[(packed check key, class, violations)]``."""
        cid = self.check_index.find(np.array([k for k, _, _ in settled], np.int64))
        lcs = np.array([lc for _, lc, _ in settled], np.int64)
        ok = (cid >= 0) & (cid < _CID_LIMIT) & (lcs < _LC_LIMIT)
        keys = (cid << _LC_BITS) | lcs
        known = self.class_index.find(keys) >= 0
        new_keys, new_ids, seen = [], [], set()
        for k, good, old, (_, _, found) in zip(keys.tolist(), ok.tolist(), known.tolist(),
                                               settled):
            if good and not old and k not in seen:
                seen.add(k)
                new_keys.append(k)
                new_ids.append(len(self.hits) + 1 if found else 0)  # hit id + 1
                if found:
                    self.hits.append(found)
        if new_keys:
            self.class_index.add(np.array(new_keys, np.int64), np.array(new_ids, np.int64))


class _Collector:
    """Stands for an :class:`~properties.search.bfs.Expansion` where a check records a P00 finding
    (``findings``), so that the chunk's findings are recorded in the sequential order."""

    __slots__ = ("findings",)

    def __init__(self):
        self.findings: list = []
