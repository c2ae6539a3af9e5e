"""The all-readings sweep's memo tables (:class:`SweepCache`) and the check-table helpers.

The tables are shared by every node the sweep (:class:`~properties.search.system_sweep.SweepSystem`)
expands in one process: each (state, event)'s decision tree over the knobs, each (tree shape,
class)'s fork, moves, beliefs, run input, and property outcomes keyed by the transition, what
the properties read of the producer's beliefs (:attr:`~properties.catalogue.Property.belief_view`)
and the knobs a check consulted. Only the properties whose ``events`` include the event's class
are run, and those of a narrower :attr:`~properties.catalogue.Property.scope` share their
outcomes across every transition that agrees on what they read (the step, the target view, or
the state after). An activity event's decision tree is computed once per (focus, event), where
the focus is the little the model's step reads of the state (:func:`model.consumer.focus`), and
settled on each state with that focus. The re-steps of P36 and P37 read decision trees too
(:class:`_Restep`), computed once per re-stepped (state, event) and shared by every leaf and
class that checks it; P37 compares decisions where it can
(:func:`properties.catalogue.decided_alike`). Every entry depends on its key alone, so a table
may be dropped at any time (the engine side decides when:
:class:`~properties.search.system_sweep.SweepAdapter`); only time changes.
"""
from __future__ import annotations

from typing import Callable, Optional, Sequence

import numpy as np

from model.consumer import ConsumerState, Focus, decide, focus_fields, initial_state, settle
from model.events import Event
from model.producer import Vocabulary
from model.readings import Reading, RecordingReading, describe_assignment
from model.verdict import Verdict, context_of, knob_splits
from properties.search.bfs import Expansion
from properties.search.store import KEY_LEAF_BITS, Interned
from properties.search.blocks import (CHECK_STATE_MASK, CHECK_STEP_MASK, CHECK_VIEW_SHIFT,
                                      check_key_state)
from properties.catalogue import (Property, Transition, applicable, by_identity, first_violation,
                                  target_view)
from model.consumers import REFERENCE
from properties.search.move_table import MoveTable, _record
from properties.search.reading_classes import (PRODUCER_READINGS, _ATTR_OF_KNOB, _KNOB_OF_ATTR,
                                              _OPTIONS_OF_ATTR, _forked, _representative,
                                              _select, _step_key, step_leaves)

__all__ = ["CACHE_ENTRIES", "SweepCache"]


CACHE_ENTRIES = 6_000_000
"""The budget of the all-readings sweep's memo tables keyed by consumer transitions, with the
class outcomes and the forks (:meth:`SweepCache.size`), in entries (some 0.3 KB each), of each
process (every worker has the whole of it: :meth:`~properties.search.system_sweep.SweepAdapter.spec`;
``explore --memo-entries`` sets it): past it,
the entries of the consumer states and classes that no node still to expand needs soon are
dropped (:meth:`~properties.search.system_sweep.SweepAdapter.make_room`), and the tables are emptied
(:meth:`SweepCache.trim`) when they still hold more than
:attr:`~properties.search.system_sweep.SweepAdapter.EVICT_KEEPS` of it; so memory follows the
states, not the transitions, on deep searches."""


class _Dispatch:
    """Per event number: the properties for its type, those reading beliefs, and those of each
    scope (after, target, step, transition)."""

    __slots__ = ("fires", "readers", "scoped")

    def __init__(self, properties: tuple, event: Event):
        self.fires = applicable(properties, type(event))
        self.readers = tuple(q for q in self.fires if q.reads_belief)
        self.scoped = tuple(tuple(q for q in self.fires if q.scope == scope)
                            for scope in ("after", "target", "step", "transition"))


class SweepCache(MoveTable):
    """The all-readings sweep's memo tables, shared by every node the sweep expands in one
    process, and the computations that fill them (all pure: an entry depends on its key
    alone, so every process computes the same ones, and a table may be dropped at any time).

    Interned values (:class:`~properties.search.store.Interned`): ``beliefs``, ``events``,
    ``producer_sets`` and the ``moves`` table of the
    :class:`~properties.search.move_table.MoveTable` it is, ``states``, ``classes``, ``shapes``
    (decision-tree shapes: leaf assignments and result groups), ``view_ids`` (belief views). Tables:

    * ``trees``: (state, event) -> ``([(assignment items, result, result state, halted, outcome,
      knobs)], shape)`` or the exception the step raised; ``local_trees``: the fields of a
      focus (:func:`model.consumer.focus_fields`) and an event -> an activity event's decisions
      (``[(items, knobs, attributes, Decision)]``) or exception.
    * ``forks``: (shape, class) -> ``([(leaf class, leaf index)], candidate knobs)``.
    * ``dispatch``: event -> :class:`_Dispatch`; ``views``: (belief, belief after, event) ->
      view id; ``move_rows``: (belief, producers) -> each move with what the hot loop reads
      of it (:meth:`move_rows_of`).
    * ``checked``: (view, state, event, outcome, conformant), packed by :func:`check_key`,
      -> ``((consulted, result, attributes), ...)``, a tuple that only grows, each time
      replaced by a longer one (:func:`_with_entry`); ``class_checked``: (that key, class) ->
      the violations under the class's readings; ``after_checked``, ``step_checked`` (keyed
      by the check key's (state, event, outcome) bits), ``target_checked``: the narrower
      scopes'.
    * ``inputs``: result state -> run input; ``resteps``: (state, event) -> the decision tree
      P36 and P37 re-step; ``numbered_by_id``: the restep's events by identity;
      ``step_decisions``: (state, event) -> the step's own decision tree on the state's focus
      (the ``local_trees`` entry) and the renamed one P37 last compared it with, for P37's
      decided shortcut (:meth:`step_decisions_of`, :class:`_Restep`); ``renamed_trees``: by
      the identity of such a tree, whether the renamed event's tree on the renamed focus decides
      alike, leaf by leaf (:meth:`renamed_alike_of`).
    * ``split_cost``, ``split_settled``: the split witnesses' costs so far and the forks that
      cannot improve them (:func:`_may_improve`).

    Past the sweep's budget of entries (:meth:`size`), the entries keyed by a consumer state
    and the forks of a class that no pending node needs soon are dropped (:meth:`evict`, as
    :meth:`~properties.search.system_sweep.SweepAdapter.make_room` chooses), and the tables are
    emptied (:meth:`trim`) only when what is left is still too much: each entry is computed again,
    equal, if needed.
    """

    def __init__(self, vocabulary: Vocabulary, properties: tuple, adversarial: bool):
        super().__init__(vocabulary, adversarial, frozenset(PRODUCER_READINGS))
        self.properties = properties
        self.states = Interned([initial_state()])
        self.classes = Interned([()])
        self.shapes = Interned()
        self.view_ids = Interned()
        self.class_attrs = [frozenset()]
        self.attr_sets: dict = {}
        self.move_rows: dict = {}
        self.trees: dict = {}
        self.local_trees: dict = {}
        self.forks: dict = {}
        self.dispatch: dict = {}
        self.checked: dict = {}
        self.class_checked: dict = {}
        self.after_checked: dict = {}
        self.step_checked: dict = {}
        self.target_checked: dict = {}
        self.order = {p.id: i for i, p in enumerate(properties)}
        self.views: dict = {}
        self.inputs: dict = {}
        self.split_cost: dict = {}
        self.split_settled: dict = {}
        self.numbered_by_id: dict = {}
        self.resteps: dict = {}
        self.step_decisions: dict = {}
        self.renamed_trees: dict = {}
        self.consulted_sets: dict = {(): ((), _NOTHING, _NO_KNOBS, (_NO_KNOBS,))}  # none
        self.trims = 0
        self.evictions = 0
        self.generation = 0  # changed whenever entries are dropped (the blocks' mirrors go)

    def size(self) -> int:
        """Entries of the tables that grow with the search: those keyed by consumer
        transitions, the class outcomes and the forks (the forks of the classes of depth 7's
        last level come to millions, some 0.5 KB each)."""
        return len(self.trees) + len(self.checked) + len(self.step_checked) + \
            len(self.resteps) + len(self.target_checked) + len(self.local_trees) + \
            len(self.step_decisions) + len(self.renamed_trees) + len(self.class_checked) + \
            len(self.forks)

    def trim(self, limit: int) -> bool:
        """Empty the tables :meth:`size` counts, and those keyed by the state after a step,
        when :meth:`size` is more than ``limit`` entries (every entry is recomputed, equal, when
        next needed; the interned values, the moves and split costs stay). Returns whether it
        did."""
        if self.size() <= limit:
            return False
        for table in (self.trees, self.local_trees, self.checked, self.class_checked,
                      self.after_checked, self.step_checked, self.target_checked, self.inputs,
                      self.resteps, self.numbered_by_id, self.step_decisions,
                      self.renamed_trees, self.forks):
            table.clear()
        self.trims += 1
        self.generation += 1
        return True

    def evict(self, live: bytearray, live_classes: Optional[bytearray] = None) -> int:
        """Drop the entries of the tables keyed by the consumer state a step starts from
        (``trees``, ``step_decisions``, ``checked``, ``step_checked``, ``class_checked``) for
        every state number ``s`` with ``live[s] == 0`` (numbers past ``live``'s end count as
        live), and with ``live_classes`` likewise the ``forks`` of the classes whose byte is 0:
        the states and classes no pending node holds, or none needed soon
        (:meth:`~properties.search.system_sweep.SweepAdapter.make_room`). The tables keyed otherwise
        (by focus, state after, target view) are kept. Returns how many entries of the tables
        :meth:`size` counts were dropped. The dropped keys are deleted in place (a table keeps its
        room for the entries that come next; rebuilding each table took twice as long)."""
        n = len(live)
        mask = CHECK_STATE_MASK
        before = self.size()
        dropped = (
            (self.trees, [k for k in self.trees if k[0] < n and not live[k[0]]]),
            (self.step_decisions, [k for k in self.step_decisions
                                   if k[0] < n and not live[k[0]]]),
            (self.checked, [k for k in self.checked if (k & mask) < n and not live[k & mask]]),
            (self.step_checked, [k for k in self.step_checked
                                 if (k & mask) < n and not live[k & mask]]),
            (self.class_checked, [k for k in self.class_checked
                                  if (k[0] & mask) < n and not live[k[0] & mask]]))
        if live_classes is not None:
            m = len(live_classes)
            dropped += ((self.forks, [k for k in self.forks
                                      if k[1] < m and not live_classes[k[1]]]),)
        for table, keys in dropped:
            for k in keys:
                del table[k]
        self.evictions += 1
        self.generation += 1
        return before - self.size()

    def entries_by_state(self, n: int) -> np.ndarray:
        """The entries of the tables :meth:`evict` keys by the consumer state a step starts
        from (``trees``, ``step_decisions``, ``checked``, ``step_checked``,
        ``class_checked``), per state number below ``n``: an int64 array of ``n`` counts
        (numbers past ``n`` are not counted)."""
        mask = CHECK_STATE_MASK
        columns = [np.fromiter((k[0] for k in self.trees), np.int64, len(self.trees)),
                   np.fromiter((k[0] for k in self.step_decisions), np.int64,
                               len(self.step_decisions)),
                   np.fromiter((k & mask for k in self.checked), np.int64, len(self.checked)),
                   np.fromiter((k & mask for k in self.step_checked), np.int64,
                               len(self.step_checked)),
                   np.fromiter((k[0] & mask for k in self.class_checked), np.int64,
                               len(self.class_checked))]
        keys = np.concatenate(columns)
        return np.bincount(keys[keys < n], minlength=n)[:n]

    def forks_by_class(self, m: int) -> np.ndarray:
        """The ``forks`` per class number below ``m``: an int64 array of ``m`` counts."""
        keys = np.fromiter((k[1] for k in self.forks), np.int64, len(self.forks))
        return np.bincount(keys[keys < m], minlength=m)[:m]

    def moves_of(self, b: int, p: int) -> list:
        """:meth:`MoveTable.moves_of`, with each new event's :class:`_Dispatch` made."""
        found = self.moves.get((b, p))
        if found is None:
            found = super().moves_of(b, p)
            for e, _, _, _ in found:
                if e not in self.dispatch:
                    self.dispatch[e] = _Dispatch(self.properties, self.events.values[e])
        return found

    def move_rows_of(self, b: int, p: int) -> list:
        """``move_rows[(b, p)]``: the moves of :meth:`moves_of` as ``(event, producers after,
        conformant, belief after, properties that fire, belief view)`` (the properties of the
        event's type, none without properties; the view of :meth:`view_of`, None when none of
        them reads beliefs), computed when missing: what the hot loop reads per move."""
        rows = self.move_rows[(b, p)] = []
        for e, pa, ok, ba in self.moves_of(b, p):
            d = self.dispatch[e]
            props, readers = (d.fires, d.readers) if self.properties else ((), ())
            rows.append((e, pa, ok, ba, props,
                         self.view_of(b, ba, e, readers) if readers else None))
        return rows

    def decisions_of(self, state: ConsumerState, e: int):
        """The decision tree of an activity event on its focus in ``state`` (computed once per
        (focus, event), :func:`model.consumer.focus`), as ``[(assignment items, knobs, their
        attributes, Decision)]`` with knobs as (reading attribute, option) pairs; None when the
        step reads more of the state than a focus. Raises what deciding raised."""
        event = self.events.values[e]
        fields = focus_fields(state, event)
        if fields is None:
            return None
        key = fields + (e,)  # the focus's fields: no Focus built, nor hashed, to look it up
        found = self.local_trees.get(key)
        if found is None:
            try:
                found = []
                for a, d in step_leaves(Focus(*fields), event, decide):
                    knobs = tuple((_ATTR_OF_KNOB[k], v) for k, v in a.items())
                    found.append((tuple(a.items()), knobs, tuple(x for x, _ in knobs), d))
            except Exception as exc:  # noqa: BLE001 - raised again for every state with it
                found = exc.with_traceback(None)
            self.local_trees[key] = found
        if isinstance(found, Exception):
            # afresh each time: a traceback kept would grow by every raise and hold frames
            raise found.with_traceback(None)
        return found

    def leaves_of(self, state: ConsumerState, e: int, s: Optional[int] = None) -> list:
        """The step's decision tree on (state, event), as ``[(assignment items, knobs,
        StepResult)]``: an activity event's decisions (:meth:`decisions_of`) settled on the
        state, any other event stepped whole (:func:`step_leaves`). With ``s``, the state's
        number, and properties to check, the decisions are also kept as ``step_decisions[(s,
        e)]`` (:meth:`step_decisions_of`), which P37's checks of the tree read."""
        decisions = self.decisions_of(state, e)
        if s is not None and decisions is not None and self.properties:
            self.step_decisions.setdefault((s, e), [decisions, None, None, None])
        event = self.events.values[e]
        if decisions is None:
            return [(tuple(a.items()), tuple((_ATTR_OF_KNOB[k], v) for k, v in a.items()), r)
                    for a, r in step_leaves(state, event)]
        return [(items, knobs, settle(state, event, d)) for items, knobs, _, d in decisions]

    def tree_of(self, s: int, e: int):
        """``trees[(s, e)]``, computed when missing (see the class)."""
        tree = self.trees.get((s, e))
        if tree is None:
            states = self.states
            state = states.values[s]
            number = states.number
            try:
                # a step that leaves the state itself (a kept or dropped event) needs no lookup
                leaves = [(items, r, s if r.state is state else number(r.state), r.state.halted,
                           knobs) for items, knobs, r in self.leaves_of(state, e, s)]
                # each result holds the interned state after, not an equal copy of it
                leaves = [leaf if leaf[1].state is states.values[leaf[2]] else
                          (leaf[0], leaf[1].but(state=states.values[leaf[2]])) + leaf[2:]
                          for leaf in leaves]
            except Exception as exc:  # noqa: BLE001 - the escape is the finding
                # kept without its traceback, whose frames would hold the exception in a cycle
                tree = self.trees[(s, e)] = exc.with_traceback(None)
                return tree
            outcomes = [(rs, r.warnings, r.fatal) for _, r, rs, _, _ in leaves]
            groups = tuple(outcomes.index(o) for o in outcomes)
            shape = self.shapes.number((tuple(leaf[0] for leaf in leaves), groups))
            tree = self.trees[(s, e)] = ([(items, r, rs, halted, g, knobs)
                                          for (items, r, rs, halted, knobs), g
                                          in zip(leaves, groups)], shape)
        return tree

    def fork_of(self, shape: int, c: int) -> tuple:
        """``forks[(shape, c)]``, computed when missing (see the class)."""
        found = self.forks.get((shape, c))
        if found is None:
            classes = self.classes
            assignments, groups = self.shapes.values[shape]
            cls = classes.values[c]
            selected = [(classes.number(leaf_class), leaf)
                        for leaf_class, leaf in _select(assignments, groups, cls)]
            fixed = dict(cls)
            candidates = tuple(dict.fromkeys(k for lc, _ in selected
                                             for k, _ in classes.values[lc] if k not in fixed))
            if len(selected) >= 1 << KEY_LEAF_BITS:
                raise OverflowError(f"a fork into {len(selected)} classes: more than a parent "
                                    "entry holds (pack_key)")
            found = self.forks[(shape, c)] = (selected, candidates)
            self.describe_classes()
        return found

    def describe_classes(self) -> None:
        """Give each class interned since the last call the frozenset of the reading
        attributes it fixes (``class_attrs``; equal sets are one object: 4,037 sets for 67,244
        classes at depth 5, where a set per class took 46 MB). A class's representative
        reading is made when a check needs it (:meth:`representative`), not kept per class:
        at depth 7 most classes are those of the last level's successors, never checked
        under."""
        classes, attrs, shared = self.classes.values, self.class_attrs, self.attr_sets
        while len(attrs) < len(classes):
            fixed = frozenset(_ATTR_OF_KNOB[k] for k, _ in classes[len(attrs)])
            attrs.append(shared.setdefault(fixed, fixed))

    def representative(self, c: int) -> Reading:
        """The reading standing for class number ``c``: its options, ``draft`` for the knobs
        it leaves free (:func:`_representative`, memoised for the classes met last)."""
        return _representative(self.classes.values[c])

    def view_of(self, b: int, ba: int, e: int, props: tuple) -> int:
        """What ``props`` read of the beliefs around the event (their ``belief_view``s), as an
        interned int: outcomes are shared across beliefs whose views agree."""
        found = self.views.get((b, ba, e))
        if found is None:
            beliefs = self.beliefs.values
            event, before, after = self.events.values[e], beliefs[b], beliefs[ba]
            read = tuple(dict.fromkeys(p.belief_view for p in props))
            found = self.views[(b, ba, e)] = self.view_ids.number(
                tuple((view(before, event), view(after, event)) for view in read))
        return found

    def restep_tree(self, st: ConsumerState, ev: Event):
        """The decision tree the re-steps of P36 and P37 read for (``st``, ``ev``): ``(decided,
        [(items, knobs, attributes, leaf)], settled)``, each leaf a Decision (decided) or a
        StepResult, ``settled[i]`` leaf i's ``(state, warnings, fatal)`` once a re-step
        reached it (None before); raises what the step raised. Computed once per (state,
        event)."""
        # The renamed events P37 passes come from its memo table, the same objects each time:
        # find their numbers by identity before hashing and comparing them whole.
        key = (st, by_identity(self.numbered_by_id, ev, self.events.number))
        tree = self.resteps.get(key)
        if tree is None:
            try:
                decisions = self.decisions_of(st, key[1])
                # an activity event's leaves are settled when a reading reaches them
                leaves = decisions if decisions is not None else \
                    [(items, knobs, tuple(a for a, _ in knobs), r)
                     for items, knobs, r in self.leaves_of(st, key[1])]
                tree = (decisions is not None, leaves, [None] * len(leaves))
            except Exception as exc:  # noqa: BLE001 - raised to the check, as the step would
                tree = exc.with_traceback(None)
            self.resteps[key] = tree
        if isinstance(tree, Exception):
            raise tree.with_traceback(None)
        return tree

    def restep_for(self, recorder: RecordingReading, s: int, e: int) -> "_Restep":
        """The reference step under ``recorder``'s reading for the transition from state number
        ``s`` on event number ``e``, read off decision trees (a :class:`_Restep`)."""
        return _Restep(self, recorder, s, e)

    def step_decisions_of(self, s: int, e: int) -> list:
        """``step_decisions[(s, e)]``, computed when missing: ``[the decision tree of event
        ``e`` on state ``s``'s focus (:meth:`decisions_of`, the same list) or None when the step
        does not decide it on a focus, then the renamed state, renamed event and decision tree
        of P37's last re-step of this transition (None before)]`` (:class:`_Restep`)."""
        key = (s, e)
        found = self.step_decisions.get(key)
        if found is None:
            found = self.step_decisions[key] = [self.decisions_of(self.states.values[s], e),
                                                None, None, None]
        return found

    def renamed_alike_of(self, mine: list, st: ConsumerState, ev: Event, alike: Callable):
        """For the decision tree ``mine`` of an event on a focus (a :meth:`decisions_of` list),
        whether the tree of the renamed event ``ev`` on the renamed state ``st`` (P37's renaming
        of a state with that focus) has the same leaves, knob by knob, and then, leaf by leaf,
        whether its decision is ``mine``'s renamed (``alike(mine's, theirs)``): a tuple of
        bools, or None when the renamed event is not decided on a focus, the trees' leaves
        differ or deciding the renamed event raised (the caller then reads the decisions one at
        a time, as without this memo). Sound because renaming ids renames a focus whole: states
        with one focus have one renamed focus (a test checks it on every focus of a sweep).
        Kept in
        ``renamed_trees`` by the identity of ``mine`` (each (focus, event) has one such list
        while ``local_trees`` holds it): what renaming does to a decision depends on the focus
        and the event alone."""
        hit = self.renamed_trees.get(id(mine))
        if hit is not None and hit[0] is mine:
            return hit[1]
        try:
            theirs = self.decisions_of(st, by_identity(self.numbered_by_id, ev,
                                                       self.events.number))
        except Exception:  # noqa: BLE001 - raised again where the decisions are read singly
            theirs = None
        flags = None
        if theirs is not None and len(theirs) == len(mine) and \
                all(a[0] == b[0] for a, b in zip(mine, theirs)):
            flags = tuple(alike(a[3], b[3]) for a, b in zip(mine, theirs))
        self.renamed_trees[id(mine)] = (mine, flags)
        return flags

    def leaf_outcome(self, key: int, lc: int, t_args: tuple, report: tuple,
                     entries: Optional[list]):
        """The per-leaf check sequence (the per-leaf loop's,
        :meth:`~properties.search.system_sweep.SweepSystem._expand_node`, and the blocks' slow
        leaves', :meth:`~properties.search.blocks.BlockTables._slow`): what :meth:`class_outcome`
        returns for the leaf transition ``key`` under the readings of class ``lc`` (``t_args``,
        ``report`` as there), taken from ``checked`` where an entry holds class-wide (the first
        entry when it consulted no knob; else the one ``_known`` finds for the class's
        representative, when the knobs it consulted are ones the class fixes), else
        :meth:`class_outcome` (checked under the representative first when no entry holds for it).
        ``entries``: ``checked.get(key)``, which the caller has looked up."""
        if entries is None:  # a first check, under the class's representative
            entry = self.check(key, self.representative(lc), t_args, report)
            if entry is _BROKEN:
                return _BROKEN
        elif not entries[0][0] and _known is _KNOWN:
            hit = entries[0][1]
            return (hit,) if hit is not None else ()
        else:
            entry = _known(entries, self.representative(lc))
        if entry is not None and entry[2] <= self.class_attrs[lc]:  # it holds class-wide
            return (entry[1],) if entry[1] is not None else ()
        return self.class_outcome(key, lc, entry, t_args, report)

    def class_outcome(self, key: int, lc: int, entry: Optional[tuple], t_args: tuple,
                      report: tuple):
        """The properties the leaf transition ``key`` violates under the readings of class
        ``lc``: for each reading, the first it violates (catalogue order), as a tuple of
        ``(property, witness)`` in catalogue order, one per property (the witness of one found
        under a forked reading says under which options); ``()`` when all hold under every one
        of them; :data:`_BROKEN` when the run input raised.

        The checks run under the class's representative first. Where they consulted a knob
        the class leaves open, the class's other readings may disagree, so they run again for
        each other option of it (the readings that agree on the knobs before it in the
        consulted list and take that option), and so on: the class's readings are partitioned
        by the knobs the checks consult, as a step's by the knobs it consults
        (:func:`step_leaves`). Each outcome comes from ``checked`` when an entry holds for the
        reading, else from :meth:`check`; ``entry`` is the one that holds for the
        representative, or None when none does yet. ``t_args`` are :meth:`check`'s transition
        arguments, ``report`` its ``(out, recorded, seq, node, move)``."""
        rep = self.representative(lc)
        fixed = self.class_attrs[lc]
        if entry is None:
            entry = self.check(key, rep, t_args, report)
            if entry is _BROKEN:
                return _BROKEN
        if entry[2] <= fixed:  # it holds class-wide
            return (entry[1],) if entry[1] is not None else ()
        found = self.class_checked.get((key, lc))
        if found is not None:
            return found
        pending = [({}, rep)]  # (options beyond the class's, their reading)
        violated: dict = {}  # property id -> (property, witness), the first found
        while pending:
            extra, reading = pending.pop()
            entry = _known(self.checked.get(key), reading)
            if entry is None:
                entry = self.check(key, reading, t_args, report)
                if entry is _BROKEN:
                    return _BROKEN
            knobs, found, _ = entry
            if found is not None and found[0].id not in violated:
                violated[found[0].id] = found if not extra else (found[0], (
                    f"{found[1]} (under "
                    f"{describe_assignment({_KNOB_OF_ATTR[a]: o for a, o in extra.items()})})"))
            agreed = dict(extra)
            for attr, option in knobs:
                if attr in fixed or attr in extra:
                    continue
                for other in _OPTIONS_OF_ATTR[attr]:
                    if other != option:
                        fork = {**agreed, attr: other}
                        pending.append((fork, _forked(rep, fork)))
                agreed[attr] = option
        order = self.order
        outcome = self.class_checked[(key, lc)] = tuple(
            sorted(violated.values(), key=lambda found: order[found[0].id]))
        return outcome

    def check(self, key: int, reading: Reading, t_args: tuple, report: tuple):
        """Compute (no cached outcome applies to the transition ``key`` under ``reading``) the
        first property the leaf transition violates under ``reading``: the entry ``(consulted
        (attribute, option) pairs, (property, witness) or None, frozenset of the consulted
        attributes)`` added to ``checked[key]``, valid under every reading that agrees on those
        pairs; :data:`_BROKEN` when the run input raised (recorded as P00 through ``report``,
        ``(out, recorded, seq, node, move)``). ``t_args`` is ``(level, state, e, result, rs, b,
        ba, ok)``. The properties of scope ``"after"``, ``"target"`` and ``"step"`` come from
        their shared tables (:func:`_shared`), the others are checked afresh (:func:`_fresh`)."""
        level, state, e, result, rs, b, ba, ok = t_args
        event = self.events.values[e]
        run_input = self.inputs.get(rs)
        if run_input is None:
            try:
                run_input = self.inputs[rs] = tuple(REFERENCE.run_input(result.state))
            except Exception as exc:  # noqa: BLE001
                out, recorded, seq, node, move = report
                _record(out, recorded, "P00-no-exception", seq,
                        (node, move, f"{type(exc).__name__}: {exc}"))
                return _BROKEN
        recorder = RecordingReading(reading)
        beliefs = self.beliefs.values
        t = Transition(level, state, event, result.state, result.warnings, result.fatal,
                       recorder, run_input, beliefs[b], beliefs[ba], ok,
                       self.restep_for(recorder, check_key_state(key), e))
        after_props, target_props, step_props, other_props = self.dispatch[e].scoped
        interned = self.consulted_sets
        parts = []
        if after_props:
            parts.append(_shared(self.after_checked, (rs, ok), t, recorder, after_props,
                                 interned))
        if target_props:
            # the event by its number: the view's other members as they are
            parts.append(_shared(self.target_checked,
                                 (key >> CHECK_VIEW_SHIFT, e) + target_view(t)[1:], t,
                                 recorder, target_props, interned))
        if step_props:
            # (state, event, step outcome): the step's outcome numbers its state after,
            # warnings and fatal
            parts.append(_shared(self.step_checked, key & CHECK_STEP_MASK, t, recorder,
                                 step_props, interned))
        if other_props:
            parts.append(_fresh(t, recorder, other_props, interned))
        for part in parts:
            if part is not _NO_KNOBS:
                break
        else:  # the commonest: no part consulted a knob or found anything
            self.checked[key] = _with_entry(interned, self.checked.get(key), _NO_KNOBS)
            return _NO_KNOBS
        # The first violation in catalogue order, valid under every reading that agrees on the
        # knobs any part consulted.
        order = self.order
        outcome, consulted, attrs, merged = None, (), _NOTHING, False
        for knobs, found, part_attrs in parts:
            if knobs:
                if consulted:  # several parts consulted knobs: merged below
                    consulted += knobs
                    attrs = attrs | part_attrs
                    merged = True
                else:
                    consulted, attrs = knobs, part_attrs
            if found is not None and (outcome is None or
                                      order[found[0].id] < order[outcome[0].id]):
                outcome = found
        if merged:
            consulted, attrs, _, _ = _consulted_set(self.consulted_sets,
                                                 tuple(dict.fromkeys(consulted)))
        entry = (consulted, outcome, attrs) if outcome is not None else \
            _consulted_set(self.consulted_sets, consulted)[2]
        self.checked[key] = _with_entry(self.consulted_sets, self.checked.get(key), entry)
        return entry

    def splits_at(self, out: Expansion, leaves: list, node: int, move: int, rank: tuple) -> None:
        """Record the knobs that split at a fork, as findings ``("split", knob)`` whose cost
        is ``rank + (context length,)`` (per knob: the shortest trace; among equally short
        ones, one conformant under the draft's producer obligations first, then the pair whose
        context departs least from ``draft``; first found on ties). ``rank`` is (level, not
        conformant under draft); ``leaves`` are ``[(class, StepResult)]``. Only knobs that
        improve :attr:`split_cost` are recorded (it is updated)."""
        cost = self.split_cost
        verdict_leaves = [(dict(c), Verdict(r.state, tuple((0, w) for w in r.warnings),
                                            (0, r.fatal) if r.fatal else None, 1))
                          for c, r in leaves]
        for knob, pair in knob_splits(verdict_leaves, key=_step_key).items():
            c = rank + (len(context_of(pair, knob)),)
            if knob not in cost or c < cost[knob]:
                cost[knob] = c
                out.findings.append((("split", knob), c, (node, move, 0), (node, move, pair)))


class _Restep:
    """The re-step of one checked transition of the all-readings sweep (a
    :attr:`~properties.catalogue.Transition.restep`), read off the sweep's decision trees:
    ``restep(st, ev) -> (state, warnings, fatal)`` is the reference step under ``recorder``'s
    reading, the leaf of :meth:`SweepCache.restep_tree` the reading reaches, with that leaf's
    knobs recorded as consulted, as the step would consult them.

    It also reads decisions, for P37 (:func:`properties.catalogue.decided_alike`):
    :meth:`decision` is the :class:`~model.consumer.Decision` the reading reaches on an activity
    event's decision tree on its focus (computed once per (focus, event) and shared by every
    state with that focus, :meth:`SweepCache.decisions_of`; the tree last read for this
    transition is kept with the renamed state and event it was read for, and taken again only
    for those same objects), and :meth:`step_decision` the decision of the transition's own
    step, from state number ``s`` on event number ``e`` (both from
    :meth:`SweepCache.step_decisions_of`)."""

    __slots__ = ("cache", "recorder", "s", "e", "pair")

    def __init__(self, cache: SweepCache, recorder: RecordingReading, s: int, e: int):
        self.cache, self.recorder, self.s, self.e = cache, recorder, s, e
        self.pair = None

    def _reached(self, leaves: list) -> int:
        """The index of the leaf of a decision tree (``[(items, knobs, attributes, leaf)]``)
        the reading takes."""
        if not leaves[0][1]:  # a tree of one leaf, which consulted no knob
            return 0
        base = self.recorder.base
        for i, (_, knobs, _, _) in enumerate(leaves):
            for attr, option in knobs:
                if getattr(base, attr) != option:
                    break
            else:
                return i
        raise AssertionError("no leaf of the step's decision tree takes the reading")

    def __call__(self, st: ConsumerState, ev: Event) -> tuple:
        decided, leaves, settled = self.cache.restep_tree(st, ev)
        i = self._reached(leaves)
        self.recorder.consulted.extend(leaves[i][2])
        found = settled[i]
        if found is None:
            result = settle(st, ev, leaves[i][3]) if decided else leaves[i][3]
            found = settled[i] = (result.state, result.warnings, result.fatal)
        return found

    def decision(self, st: ConsumerState, ev: Event):
        """The Decision the reading reaches on (``st``, ``ev``), its knobs recorded as
        :meth:`__call__` would record them; None for an event the step does not decide on a
        focus. Raises what deciding raised."""
        pair = self._pair()
        if pair[1] is st and pair[2] is ev:
            leaves = pair[3]
        else:
            c = self.cache
            # the focus's decision tree itself (shared by every state with that focus), not
            # the re-step's tree of this state: the same leaves, without a table entry per state
            leaves = c.decisions_of(st, by_identity(c.numbered_by_id, ev, c.events.number))
            pair[1:] = st, ev, leaves
        if leaves is None:
            return None
        _, _, attrs, d = leaves[self._reached(leaves)]
        self.recorder.consulted.extend(attrs)
        return d

    def renamed_alike(self, st: ConsumerState, ev: Event, alike: Callable) -> bool:
        """True when the reading's decision on the renamed ``st`` and ``ev`` is certainly the
        renamed decision of the transition's own step, as :meth:`decision` and
        :meth:`step_decision` compared by ``alike(mine, theirs)`` would find (the reached
        leaf's knobs then recorded as :meth:`decision` records them); False where that is not
        known here (the caller reads the decisions). Read off
        :meth:`SweepCache.renamed_alike_of`: computed once per decision tree on a focus, for
        every state with that focus."""
        mine = self._pair()[0]
        if mine is None:
            return False
        flags = self.cache.renamed_alike_of(mine, st, ev, alike)
        if flags is None:
            return False
        i = self._reached(mine)
        if not flags[i]:
            return False
        self.recorder.consulted.extend(mine[i][2])
        return True

    def step_decision(self):
        """The Decision of the transition's own step under the reading (nothing recorded: the
        step's knobs are the fork's, not the checks'), or None (not decided on a focus)."""
        leaves = self._pair()[0]
        return None if leaves is None else leaves[self._reached(leaves)][3]

    def _pair(self) -> list:
        """``SweepCache.step_decisions[(s, e)]`` (:meth:`SweepCache.step_decisions_of`), kept
        for the checks of this transition."""
        pair = self.pair
        if pair is None:
            pair = self.pair = self.cache.step_decisions.get((self.s, self.e)) or \
                self.cache.step_decisions_of(self.s, self.e)
        return pair


_NOTHING: frozenset = frozenset()
"""The consulted attributes of a sweep check entry that consulted none."""


_NO_KNOBS = ((), None, _NOTHING)
"""A sweep check entry that consulted no knob and found nothing (the commonest)."""


_BROKEN = ("run input raised",)
"""A sweep check outcome: computing the run input raised (recorded as P00; the leaf is not
explored)."""


def _known(entries: Optional[list], reading: Reading) -> Optional[tuple]:
    """The cached ``(consulted, outcome, ...)`` entry that applies under ``reading``, or None.

    A check reads the reading only through its knobs, so its outcome under ``reading`` is the
    outcome under any reading that agrees on the knobs it consulted. ``entries`` are
    ``[(consulted (attribute, option) pairs, outcome, ...)]`` for one transition, or one view
    of transitions, without its reading (see :func:`_fresh`)."""
    if entries:
        for entry in entries:
            for attr, value in entry[0]:
                if getattr(reading, attr) != value:
                    break
            else:
                return entry
    return None


def _consulted_set(interned: dict, consulted: tuple) -> tuple:
    """``(consulted, attributes, entry, (entry,))`` for a tuple of consulted (attribute,
    option) pairs, where ``entry`` is ``(consulted, None, attributes)``, the check-table entry
    of those knobs without a violation, each the same object for equal pairs (``interned``: a
    sweep's :attr:`SweepCache.consulted_sets`): the check tables hold hundreds of thousands of
    entries and a few dozen distinct knob sets, and the keys whose one entry is ``entry`` share
    the one-entry tuple (:func:`_with_entry`)."""
    found = interned.get(consulted)
    if found is None:
        attrs = frozenset(a for a, _ in consulted)
        entry = (consulted, None, attrs)
        found = interned[consulted] = (consulted, attrs, entry, (entry,))
    return found


def _fresh(t: Transition, recorder: RecordingReading, properties: Sequence[Property],
           interned: dict) -> tuple:
    """``(consulted, outcome, attributes)``: :func:`~properties.catalogue.first_violation` of
    ``properties`` (the ones that apply to the event) on ``t``, whose reading is ``recorder``,
    the knobs they consulted, as (attribute, option) pairs, and the frozenset of those
    attributes: the outcome holds under every reading that agrees on those (equal pairs and
    sets as one object, see :func:`_consulted_set`). Reference consumer only: its step, too,
    reads the reading only through knobs."""
    consulted = recorder.consulted
    start = len(consulted)
    outcome = first_violation(t, properties)
    if len(consulted) == start:
        return _NO_KNOBS if outcome is None else ((), outcome, _NOTHING)
    reading = recorder.base
    pairs, attrs, empty, _ = _consulted_set(interned, tuple([(a, getattr(reading, a)) for a in
                                                         dict.fromkeys(consulted[start:])]))
    return empty if outcome is None else (pairs, outcome, attrs)


def _shared(cache: dict, key: tuple, t: Transition, recorder: RecordingReading,
            properties: Sequence[Property], interned: dict) -> tuple:
    """``(consulted, outcome, attributes)`` for ``properties`` on ``t`` (see :func:`_fresh`):
    the entry of ``cache[key]`` that holds for ``t``'s reading (see :func:`_known`), or else
    computed by :func:`_fresh` and added there. ``key`` must stand for everything the
    properties read of ``t`` besides its reading."""
    entries = cache.get(key)
    if entries is not None and not entries[0][0] and _known is _KNOWN:
        return entries[0]  # the commonest: the first entry, which _known takes, consulted none
    entry = _known(entries, recorder.base)
    if entry is None:
        entry = _fresh(t, recorder, properties, interned)
        cache[key] = _with_entry(interned, entries, entry)
    return entry


def _with_entry(interned: dict, entries: Optional[tuple], entry: tuple) -> tuple:
    """A check table's entries for one key, ``entries`` (None: none yet) and then ``entry``, as
    a tuple. The tables hold hundreds of thousands of keys, most with a single entry without a
    violation, one of a few dozen objects: those keys share the one-entry tuple
    :func:`_consulted_set` keeps beside it in ``interned`` (a sweep's
    :attr:`SweepCache.consulted_sets`), where a list per key took 88 bytes."""
    if entries is not None:
        return entries + (entry,)
    return interned[entry[0]][3] if entry[1] is None else (entry,)


def _may_improve(cost: dict, candidates: tuple, rank: tuple) -> bool:
    """Whether a fork whose leaves fix ``candidates`` (knobs the parent class left open) at
    ``rank`` could give some knob a better split witness than ``cost`` holds (see
    :meth:`SweepCache.splits_at`)."""
    return not all(k in cost and (cost[k][:2] < rank or (cost[k][2] == 0 and cost[k][:2] <= rank))
                   for k in candidates)


_KNOWN = _known
""":func:`_known` as defined (the sweep's blocks stand for it; see
:attr:`~properties.search.system_sweep.SweepSystem.blocks`)."""
