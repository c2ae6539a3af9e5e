"""The generators over the draft's whole surface (issue 20): properties/strategies.py and
properties/surface.py. Conformant traces stay conformant under the producer monitor; adversarial
moves carry the clause they break; the surface features are generated."""
from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

from model.consumer import initial_state, step
from model.events import (ActivityDelta, ActivitySnapshot, Malformed, MessagesSnapshot,
                          RunStarted)
from model.producer import Belief, advance, check_trace, violations
from model.readings import DRAFT, PRESETS
from model.wire import parse_event
from properties.strategies import (adversarial_traces, as_wire, conformant_traces,
                                   random_operation, wire_events)
from properties.surface import (HISTORY_WIRE, MALFORMED_UNIVERSE, POINTER_SHAPES,
                                SURFACE_CONTENT, malformed_feature, malformed_wires, op_features,
                                patch_feature, pointer_shape, surface_adversarial, surface_moves,
                                value_type)

_SETTINGS = dict(deadline=None, database=None, suppress_health_check=list(HealthCheck))


def _active() -> Belief:
    return advance(Belief(), RunStarted())


def _history_belief() -> Belief:
    ms = parse_event({"type": "MESSAGES_SNAPSHOT", "messages": list(HISTORY_WIRE)})
    return advance(_active(), ms)


@seed(0)
@settings(max_examples=150, **_SETTINGS)
@given(conformant_traces())
def test_conformant_traces_stay_conformant(trace):
    assert check_trace(trace) == []


@seed(1)
@settings(max_examples=60, **_SETTINGS)
@given(conformant_traces(reading=PRESETS["strict"]))
def test_conformant_traces_stay_conformant_under_another_reading(trace):
    assert check_trace(trace, PRESETS["strict"]) == []


@seed(0)
@settings(max_examples=150, **_SETTINGS)
@given(adversarial_traces(adversarial_rate=0.5))
def test_adversarial_labels_name_a_clause_the_event_breaks(drawn):
    trace, labels = drawn
    found = check_trace(trace)
    for index, violation in labels:
        assert (index, violation) in found
    labelled = {i for i, _ in labels}
    assert all(i in labelled for i, _ in found)  # nothing unlabelled breaks a clause


def test_surface_moves_are_conformant_and_hold_each_family():
    belief = _active()
    snap = parse_event({"type": "ACTIVITY_SNAPSHOT", "messageId": "act-1", "activityType": "PLAN",
                        "content": SURFACE_CONTENT})
    belief = advance(belief, snap)
    groups = dict(surface_moves(belief))
    for kind in ("surface:content", "surface:snapshot", "surface:delta:move-copy",
                 "surface:delta:pointer", "surface:delta:array", "surface:delta:test",
                 "surface:delta:root", "surface:metadata", "surface:messages", "surface:state"):
        assert groups.get(kind), kind
    for events in groups.values():
        for event in events:
            assert violations(belief, event) == ()
    firsts = {e.patch[0].op for e in groups["surface:delta:move-copy"]}
    assert firsts == {"move", "copy"}
    # copy-then-write: a write under a copy made earlier in the same patch (RFC 6902 4.5)
    assert any([op.op for op in e.patch] == ["copy", "add"]
               for e in groups["surface:delta:move-copy"])
    names = {e.patch[0].path for e in groups["surface:delta:other"]}
    assert "/missing" in names  # replace-missing (RFC 6902 4.3)
    assert any([op.op for op in e.patch] == ["test", "replace"] and e.patch[0].path == "/missing"
               for e in groups["surface:delta:test"])  # test-missing-null (RFC 6902 4.6)


def test_surface_adversarial_offers_a_text_with_an_unrecognised_role():
    groups = dict(surface_adversarial(_active()))
    [(event, v)] = groups["surface:stripped"]
    assert event.type_name == "TEXT_MESSAGE_START" and event.role == "assistant"
    assert event.notices and "narrator" in event.notices[0]
    assert v.kind == "undescribed-member"


def test_surface_adversarial_labels_and_roles():
    belief = _history_belief()
    groups = dict(surface_adversarial(belief))
    for kind, pairs in groups.items():
        for event, violation in pairs:
            assert violation in violations(belief, event), (kind, event)
    aimed = {(type(e).__name__, e.message_id, v.clause) for e, v in groups["surface:role"]
             if isinstance(e, (ActivityDelta, ActivitySnapshot))}
    for mid in ("user-1", "asst-h", "tool-h", "sys-h"):
        assert ("ActivityDelta", mid, "EVM-ID-UNIQUE") in aimed
        assert ("ActivitySnapshot", mid, "EVM-ID-UNIQUE") in aimed
    assert len(groups["surface:malformed"]) >= len(malformed_wires())


def test_a_messages_snapshot_without_activity_keeps_a_local_one():
    belief, state = _active(), initial_state()
    for wire in ({"type": "RUN_STARTED", "threadId": "t", "runId": "r"},
                 {"type": "ACTIVITY_SNAPSHOT", "messageId": "act-1", "activityType": "PLAN",
                  "content": {"n": 1}}):
        state = step(state, parse_event(wire), DRAFT).state
    belief = advance(belief, parse_event({"type": "ACTIVITY_SNAPSHOT", "messageId": "act-1",
                                          "activityType": "PLAN", "content": {"n": 1}}))
    keeping = [e for e in dict(surface_moves(belief))["surface:messages"]
               if not any(m.is_activity for m in e.messages)]
    assert keeping and {m.role for m in keeping[0].messages} >= {"user", "assistant", "tool",
                                                                  "system"}
    after = step(state, keeping[0], DRAFT).state
    assert [m.id for m in after.messages if m.is_activity] == ["act-1"]


def test_malformed_wires_cover_wrong_types_not_only_null():
    assert "malformed:ACTIVITY_SNAPSHOT.replace:string" in MALFORMED_UNIVERSE
    assert "malformed:ACTIVITY_SNAPSHOT.activityType:number" in MALFORMED_UNIVERSE
    assert "malformed:ACTIVITY_DELTA.patch:object" in MALFORMED_UNIVERSE
    assert "malformed:ACTIVITY_SNAPSHOT.replace:boolean" not in MALFORMED_UNIVERSE
    for member, kind, wire in malformed_wires():
        event = parse_event(wire)
        assert isinstance(event, Malformed)
        assert malformed_feature(event) == f"malformed:{member}:{kind}"
        assert violations(_active(), event)  # the producer monitor flags every one


def test_pointer_shapes_and_value_types():
    assert [pointer_shape(p) for p in ("", "/n", "/a/b", "/list/0", "/list/-", "/list/01",
                                       "/a~1b", "/m~0n")] == \
        ["root", "member", "nested", "index", "dash", "leading-zero", "escaped", "escaped"]
    assert [value_type(v) for v in (None, True, 1, 1.5, "x", [], {})] == \
        ["null", "boolean", "integer", "float", "string", "array", "object"]


def test_patch_feature_tells_a_late_failure_from_an_early_one():
    from model.events import PatchOp
    from model.json_values import freeze
    doc = freeze(SURFACE_CONTENT)
    ops = lambda *o: tuple(PatchOp.of(x) for x in o)  # noqa: E731
    assert patch_feature(doc, ops({"op": "replace", "path": "/n", "value": 2},
                                  {"op": "add", "path": "/x", "value": 1},
                                  {"op": "remove", "path": "/missing"})) == \
        "patch:3+:fails-after-applying"
    assert patch_feature(doc, ops({"op": "remove", "path": "/missing"})) == "patch:1:fails-first"
    assert patch_feature(doc, ops({"op": "move", "from": "/nest", "path": ""})) == \
        "patch:1:applies"
    assert patch_feature(doc, ops({"op": "add", "path": "", "value": 3})) == "patch:1:non-object"
    assert op_features(ops({"op": "copy", "from": "/n", "path": "/list/-"})) == \
        ["op:copy:dash:-"]


def test_random_operations_reach_every_op_and_pointer_shape():
    seen: Counter = Counter()

    @settings(max_examples=600, derandomize=True, **_SETTINGS)
    @given(random_operation(SURFACE_CONTENT))
    def draw(op):
        seen[(op["op"], pointer_shape(op["path"]))] += 1

    draw()
    for op in ("add", "remove", "replace", "move", "copy", "test"):
        for shape in POINTER_SHAPES:
            assert seen[(op, shape)], (op, shape)


def test_wire_events_give_wrong_types_and_all_ops():
    types, ops = Counter(), Counter()

    @seed(0)
    @settings(max_examples=1000, **_SETTINGS)
    @given(wire_events())
    def draw(obj):
        event = parse_event(obj)
        if isinstance(event, Malformed):
            feature = malformed_feature(event)
            if feature:
                types[feature.rsplit(":", 1)[1]] += 1
        for op in obj.get("patch", []) if isinstance(obj.get("patch"), list) else []:
            # a malformed patch[0] may carry an op of another JSON type (issue 20): count names
            if isinstance(op, dict) and isinstance(op.get("op"), str):
                ops[op["op"]] += 1

    from properties.strategies import fixed_constants
    with fixed_constants():  # the same draws whatever test modules ran before in the process
        draw()
    assert {"string", "number", "object", "null"} <= set(types)
    assert {"move", "copy", "test", "add", "remove", "replace"} <= set(ops)


def test_a_trace_of_surface_moves_without_surface_keeps_to_the_vocabulary():
    @seed(0)
    @settings(max_examples=50, **_SETTINGS)
    @given(conformant_traces(surface=False))
    def draw(trace):
        for e in trace:
            if isinstance(e, ActivityDelta):
                assert {op.op for op in e.patch} <= {"replace", "add", "remove", "test",
                                                     "increment"}
            # the vocabulary's history candidate restates a user and a system message
            assert not isinstance(e, MessagesSnapshot) or \
                all(m.role in ("user", "system", "assistant", "activity") for m in e.messages)
    draw()


# --- issue 20: the local-constants pin is scoped; recording what a search drew -------------------

def test_fixed_constants_pins_the_pool_only_inside_the_block():
    from hypothesis.internal.conjecture import providers
    from properties.strategies import fixed_constants
    kinds = ("integer", "float", "bytes", "string")
    outside = providers._get_local_constants
    assert outside.__module__ == providers.__name__  # importing the strategies pinned nothing
    cache = providers.CONSTANTS_CACHE
    with fixed_constants():
        pool = providers._get_local_constants()
        assert not any(pool.set_for_type(k) for k in kinds)
        assert providers.CONSTANTS_CACHE is not cache
        with fixed_constants():  # re-entrant
            assert providers._get_local_constants() is pool
        assert providers._get_local_constants() is pool
    assert providers._get_local_constants is outside and providers.CONSTANTS_CACHE is cache


_PIN_DRAW = """
import json, sys
from hypothesis import HealthCheck, Phase, given, seed, settings
from properties.strategies import as_wire, conformant_traces, fixed_constants, recording


def draw():
    got, into = [], []

    @seed(3)
    @settings(max_examples=25, database=None, deadline=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(conformant_traces(max_events=10))
    def run(trace):
        got.append(trace)
    with recording(into), fixed_constants():
        run()
    assert into == got and len(got) == 25
    return json.loads(json.dumps([as_wire(t) for t in got]))


if __name__ == "__main__":
    if len(sys.argv) > 1:  # a local module of literals, as a user's code or the suite adds them
        sys.path.insert(0, sys.argv[1])
        import vendor_literals  # noqa: F401
        from hypothesis.internal.conjecture import providers
        pool = providers._get_local_constants()  # outside the pin: Hypothesis mixes these in
        assert "zebra-47" in pool.set_for_type("string") and \\
            987654321 in pool.set_for_type("integer")
    print(json.dumps(draw()))
"""
"""``draw()``: 25 conformant traces drawn with seed 3 inside the pin, recorded, in wire form; run
as a script, prints them (argument: a folder holding ``vendor_literals.py``, imported first)."""


def test_the_same_seed_draws_the_same_traces_inside_the_pin_and_recording_keeps_them(tmp_path):
    """The pin makes the draw independent of the local modules a process has loaded: two fresh
    processes with other hash seeds, one of which first imports a module of literals Hypothesis
    would otherwise mix into its draws (checked there: they are in its pool), draw the same
    traces as this one, which has the whole suite loaded. (Without the pin the second process
    draws other traces: with this seed, from the first 25.) Inside each, ``recording`` keeps
    exactly what the search drew."""
    import json
    import os
    import subprocess
    import sys

    (tmp_path / "vendor_literals.py").write_text(
        'WORDS = ("zebra-47", "quokka", "act-9", "m-31337", "PLAN-X", 987654321, -31337, '
        '2.718281828, 10**15)\n', encoding="utf-8")

    def fresh(*argv: str, hash_seed: str) -> list:
        r = subprocess.run([sys.executable, "-c", _PIN_DRAW, *argv], capture_output=True,
                           text=True, cwd=tmp_path, timeout=300,
                           env=dict(os.environ, PYTHONHASHSEED=hash_seed))
        assert r.returncode == 0, r.stderr
        return json.loads(r.stdout)

    here: dict = {"__name__": "pin_draw"}
    exec(compile(_PIN_DRAW, "<pin draw>", "exec"), here)  # noqa: S102 - the script above
    plain = fresh(hash_seed="1")
    assert fresh(str(tmp_path), hash_seed="2") == plain
    assert here["draw"]() == plain


# --- the blind red team's pointer and move edges in the random patch -----------------------------

def _replayed(doc, patch: list[dict]):
    """``(document before the operation, operation)`` for each operation of ``patch``, each
    applied on its own to the document the earlier ones left (a failing one leaves it)."""
    from model.events import PatchOp
    from model.json_values import freeze, thaw
    from model.patch import apply_patch
    for obj in patch:
        yield doc, obj
        outcome = apply_patch(freeze(doc), (PatchOp.of(obj),))
        if outcome.ok and isinstance(thaw(outcome.result), dict):
            doc = thaw(outcome.result)


def _slot(doc, pointer: str):
    """``(array pointer, index token, array)`` when ``pointer``'s parent is an array of ``doc``."""
    from jsonpointer import resolve_pointer
    parent, _, token = pointer.rpartition("/")
    try:
        node = resolve_pointer(doc, parent)
    except Exception:  # noqa: BLE001 - a parent that does not resolve
        return None
    return (parent, token, node) if isinstance(node, list) else None


def _edges(doc, obj: dict) -> set[str]:
    """Which of the edges (a)..(e) the operation ``obj`` is, over ``doc`` (the document before
    it)."""
    from jsonpointer import unescape
    found, op, path, src = set(), obj["op"], obj["path"], obj.get("from")
    for pointer in (path, src):
        slot = _slot(doc, pointer) if pointer else None
        if slot and slot[1] == "-1" and (op in ("replace", "remove", "test") or pointer == src):
            found.add("a")  # RFC 6901 section 4: -1 is no index
    if path in ("/~01", "/~10"):
        found.add(path)
    if op == "move":
        a, b = _slot(doc, src), _slot(doc, path)
        if a and b and a[0] == b[0] and a[1].isdigit() and b[1].isdigit() and a[1] != b[1] \
                and int(a[1]) < len(a[2]):
            found.add("c")  # RFC 6902 4.4: move between two indices of one array
        name = unescape(src[1:]) if src.count("/") == 1 else None
        if name in doc and path.count("/") == 1 and unescape(path[1:]) != name and \
                unescape(path[1:]).startswith(name):
            found.add("e")  # /n to /nx: not a move into a child
    slot = _slot(doc, path)
    if op == "remove" and slot and slot[1] == "0" and len(slot[2]) >= 2:
        found.add("d")  # RFC 6902 4.2
    return found


def test_random_patches_draw_the_pointer_and_move_edges():
    """Over 400 seeded draws on the surface content and on an object without arrays (where the
    array edges draw on an array the patch adds first), each edge appears on one of them: a ``-1`` index, the
    pointers ``/~01`` and ``/~10``, a move between two indices of one array, a remove at index
    0 of an array of two elements or more, a move to a member whose name extends the source's."""
    from properties.strategies import random_patch
    seen: Counter = Counter()

    @settings(max_examples=400, derandomize=True, **_SETTINGS)
    @given(st.sampled_from([SURFACE_CONTENT, {"k": "v"}]).flatmap(
        lambda doc: st.tuples(st.just(doc), random_patch(doc))))
    def draw(drawn):
        doc, patch = drawn
        for before, obj in _replayed(doc, patch):
            for edge in _edges(before, obj):
                seen[(edge, "plain" if doc is SURFACE_CONTENT else "no arrays")] += 1

    draw()
    for edge in ("a", "/~01", "/~10", "c", "d", "e"):
        assert seen[(edge, "plain")] + seen[(edge, "no arrays")], (edge, seen)
    assert seen[("c", "plain")] and seen[("d", "plain")], seen  # on the content's own arrays
    for edge in ("a", "c", "d"):
        assert seen[(edge, "no arrays")], (edge, seen)


def test_the_pointer_and_move_edges_reach_conformant_deltas():
    """The random surface event carries the edges into deltas the producer monitor accepts (a
    patch that fails, as one at ``-1`` does, is still a conformant delta in the draft)."""
    from model.json_values import thaw
    from properties.strategies import random_surface_event
    belief = advance(_active(), parse_event({"type": "ACTIVITY_SNAPSHOT", "messageId": "act-1",
                                             "activityType": "PLAN",
                                             "content": SURFACE_CONTENT}))
    seen: set = set()

    @settings(max_examples=300, derandomize=True, **_SETTINGS)
    @given(random_surface_event(belief))
    def draw(event):
        if isinstance(event, ActivityDelta) and event.message_id == "act-1" and \
                violations(belief, event) == ():
            for before, obj in _replayed(SURFACE_CONTENT, [thaw(op.raw) for op in event.patch]):
                seen.update(_edges(before, obj))

    draw()
    assert {"a", "c", "d", "e"} <= seen, seen


def test_text_is_drawn_as_hypothesis_default_text_without_its_codec_table():
    """``_TEXT`` (two code-point ranges) draws, seed for seed, what ``st.text(max_size=3)`` draws
    (whose table comes from the UTF-8 codec, seconds in a fresh process): a run's output is
    the same bytes as before the change. No surrogate is drawn; characters past the BMP are."""
    from properties.strategies import _TEXT

    def draws(strategy) -> list:
        out = []

        @seed(20261206)
        @settings(max_examples=400, derandomize=True, **_SETTINGS)
        @given(strategy)
        def collect(text):
            out.append(text)

        collect()
        return out

    mine, default = draws(_TEXT), draws(st.text(max_size=3))
    assert len(mine) == 400 and mine == default
    chars = {c for text in mine for c in text}
    assert not any(0xD800 <= ord(c) <= 0xDFFF for c in chars)
    assert any(ord(c) > 0xFFFF for c in chars) and any(ord(c) < 0x80 for c in chars)


def test_text_has_exactly_the_characters_of_hypothesis_default_text():
    """The draws above show only the characters drawn; this compares the two character sets
    whole (every code point but the surrogates), through Hypothesis's internals (the interval
    set of a text strategy's one-character strategy): a range cut short at either end fails
    here. Skipped, with the reason, where a Hypothesis release has moved those internals."""
    from properties.strategies import _TEXT
    try:
        from hypothesis.strategies._internal.lazy import unwrap_strategies

        def intervals(strategy) -> tuple:
            return tuple(unwrap_strategies(strategy).element_strategy.intervals.intervals)
        mine, default = intervals(_TEXT), intervals(st.text(max_size=3))
    except (ImportError, AttributeError) as moved:
        pytest.skip(f"Hypothesis's text internals have moved ({moved})")
    assert mine == default == ((0, 0xD7FF), (0xE000, 0x10FFFF))
