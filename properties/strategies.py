"""Public Hypothesis strategies for AG-UI activity traces.

SDK teams can drive their own consumer from their own test suite with these:

    from hypothesis import given
    from properties.strategies import conformant_traces, as_wire

    @given(conformant_traces())
    def test_my_consumer_survives(trace):
        my_consumer.replay(as_wire(trace))   # list of wire JSON objects

* :func:`conformant_traces`: traces a conformant producer may send (every event drawn from
  :func:`model.producer.moves`), starting with RUN_STARTED.
* :func:`adversarial_traces`: conformant moves mixed with labelled non-conformant ones
  (:func:`model.producer.adversarial_moves`); each trace comes with the violations it contains.
* :func:`wire_events`: single wire JSON objects of the activity events, well-formed or not.

Besides the vocabulary's moves, every trace strategy draws from the draft's wider surface
(:mod:`properties.surface`: move and copy, pointer escapes, the ``-`` index, array targets,
leading-zero indices, ``test`` across number and boolean types, root-pointer operations, floats,
nulls, nested metadata, unicode keys, wrong-typed members, activity events aimed at other roles'
ids) and from Hypothesis-drawn JSON values (:data:`JSON_VALUES`, floats at the edge of double
precision among them) and patches (:func:`random_patch`: each operation drawn against the
document the operations before it left, copies of containers with writes under them, array
indices at the edges, the pointer and move edges of :func:`_pointer_edge`, members RFC 6902 does
not define); ``surface=False`` keeps to the vocabulary alone.

Every strategy is deterministic under Hypothesis' seed (``@seed`` / ``settings(derandomize=True)``)
for a given set of loaded modules; inside :func:`fixed_constants` whatever the process imported.
"""
from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator

from hypothesis import strategies as st

from model.events import ActivityDelta, ActivitySnapshot, Event, MessagesSnapshot
from model.producer import (DEFAULT_VOCABULARY, Belief, ProducerViolation, Vocabulary,
                            adversarial_moves, advance, moves, violations)
from model.readings import DRAFT, Reading
from model.wire import parse_event
from properties.surface import (POINTER_SHAPES, SURFACE_CONTENT, VALUE_TYPES, malformed_wires, pointer_shape,
                                role_events, surface_adversarial, surface_moves)


_PINNED: dict = {}
"""The empty pool and the constants cache :func:`fixed_constants` swaps in (made on first use)."""
_PIN_DEPTH = [0]


@contextmanager
def fixed_constants() -> Iterator[None]:
    """Within the block, Hypothesis draws as if no local module had been imported.

    Hypothesis (6.1xx) mixes into its draws the literals it finds in every *local* module in
    ``sys.modules``, so the same seed drew different traces in the command line, in a script
    and inside the test suite (whose test modules add their literals). Every search here takes
    a seed and must give the same bytes whatever ran before in the process, so our searches
    (``run``'s pipeline, ``peer search``'s generation, the benchmarks) run inside this block:
    it swaps Hypothesis's local pool for an empty one (its built-in constants still apply) and
    its cache of permitted constants for one of its own, and puts both back on the way out, so
    that a user's own Hypothesis tests in the same process keep the heuristic. Re-entrant; not
    thread-safe (it swaps module attributes of ``hypothesis.internal.conjecture.providers``).
    A Hypothesis without the pool is left alone."""
    try:
        from hypothesis.internal.conjecture import providers
    except ImportError:  # pragma: no cover - a Hypothesis without the local-constant pool
        providers = None
    usable = providers is not None and hasattr(providers, "_get_local_constants") and \
        hasattr(providers, "_local_constants") and hasattr(providers, "CONSTANTS_CACHE")
    if not usable or _PIN_DEPTH[0]:
        _PIN_DEPTH[0] += 1
        try:
            yield
        finally:
            _PIN_DEPTH[0] -= 1
        return
    if not _PINNED:
        empty = type(providers._local_constants)()
        _PINNED["pool"] = lambda: empty
        _PINNED["cache"] = type(providers.CONSTANTS_CACHE)(1024)
    saved = providers._get_local_constants, providers.CONSTANTS_CACHE
    providers._get_local_constants, providers.CONSTANTS_CACHE = _PINNED["pool"], _PINNED["cache"]
    _PIN_DEPTH[0] += 1
    try:
        yield
    finally:
        _PIN_DEPTH[0] -= 1
        providers._get_local_constants, providers.CONSTANTS_CACHE = saved


_RECORDERS: list[list] = []


@contextmanager
def recording(into: list) -> Iterator[list]:
    """Within the block, every trace :func:`conformant_traces` and :func:`adversarial_traces`
    draw is appended to ``into`` (the events; for :func:`adversarial_traces` without the
    labels), in draw order; yields ``into``. Used by ``run`` to measure the spec coverage of
    the traces its search drew (:mod:`properties.coverage`) without drawing them again. A draw
    Hypothesis abandons midway is not recorded; nested blocks each record."""
    _RECORDERS.append(into)
    try:
        yield into
    finally:
        del _RECORDERS[next(i for i, r in enumerate(_RECORDERS) if r is into)]

__all__ = ["conformant_traces", "adversarial_traces", "wire_events", "as_wire", "pick",
           "kind_of", "group_by_kind", "grouped_moves", "JSON_VALUES", "random_surface_event",
           "random_operation", "random_patch",
           "fixed_constants", "recording"]


def kind_of(option) -> str:
    """The sampling kind of an option: the violation kind for an ``(event, violation)`` pair;
    else the event type, snapshots split by ``replace`` (and rawEvent), deltas by their
    operations, MESSAGES_SNAPSHOT by how many activities it carries."""
    if isinstance(option, tuple):
        return option[1].kind
    if isinstance(option, ActivitySnapshot):
        return f"{option.type_name}:{option.replace}" + (":raw" if option.raw_event else "")
    if isinstance(option, ActivityDelta):
        return f"{option.type_name}:{'+'.join(op.op for op in option.patch)}"
    if isinstance(option, MessagesSnapshot):
        return f"{option.type_name}:{sum(m.is_activity for m in option.messages)}"
    return option.type_name


def group_by_kind(options) -> tuple[tuple[str, tuple], ...]:
    """``((kind, options of that kind), ...)`` in order of first appearance."""
    groups: dict[str, list] = {}
    for o in options:
        groups.setdefault(kind_of(o), []).append(o)
    return tuple((k, tuple(v)) for k, v in groups.items())


def pick(draw, options, label: str = "event"):
    """Draw one of ``options`` (events, or ``(event, violation)`` pairs, or the result of
    :func:`group_by_kind`): first the kind, uniformly, then one option of that kind. Drawing
    uniformly from the flat list would make rare kinds (a text message, RUN_ERROR, an unknown
    event) all but unreachable next to hundreds of snapshot variants."""
    groups = options if options and isinstance(options[0], tuple) and len(options[0]) == 2 \
        and isinstance(options[0][0], str) else group_by_kind(options)
    if len(groups) == 1:
        return draw(st.sampled_from(groups[0][1]), label=label)
    index = draw(st.integers(0, len(groups) - 1), label=f"{label} kind")
    return draw(st.sampled_from(groups[index][1]), label=label)


_GROUPED: dict = {}


def grouped_moves(belief: Belief, vocabulary: Vocabulary, reading: Reading,
                  adversarial: bool = False, surface: bool = True):
    """:func:`group_by_kind` of the conformant (or adversarial) moves, memoised per belief;
    with ``surface`` (default) followed by the surface moves' groups
    (:func:`properties.surface.surface_moves`, :func:`~properties.surface.surface_adversarial`:
    kinds ``surface:...``), which keep to the vocabulary's activity ids and first type."""
    key = (adversarial, surface, belief, id(vocabulary), reading)
    hit = _GROUPED.get(key)
    if hit is not None and hit[0] is vocabulary:
        return hit[1]
    options = (adversarial_moves if adversarial else moves)(belief, vocabulary, reading)
    grouped = group_by_kind(options)
    if surface:
        extra = (surface_adversarial if adversarial else surface_moves)(
            belief, reading, vocabulary.activity_ids, vocabulary.activity_types[0])
        grouped = grouped + extra
    if len(_GROUPED) > 20000:
        _GROUPED.clear()
    _GROUPED[key] = (vocabulary, grouped)
    return grouped


def as_wire(trace) -> list[dict]:
    """A trace as a list of AG-UI wire JSON objects."""
    return [e.to_wire() for e in trace]


@st.composite
def conformant_traces(draw, vocabulary: Vocabulary = DEFAULT_VOCABULARY, max_events: int = 12,
                      reading: Reading = DRAFT, surface: bool = True) -> tuple[Event, ...]:
    """Traces of 1..``max_events`` events, each a conformant move of the producer (see
    :func:`model.producer.moves`, and with ``surface`` the surface moves and Hypothesis-drawn
    values of :func:`random_surface_event`) over ``vocabulary``; the first is RUN_STARTED. Every
    event satisfies ``model.producer.violations(belief, event, reading) == ()``.

    Shrinks towards shorter traces and earlier (simpler) moves."""
    events, _ = draw(adversarial_traces(vocabulary, max_events, reading, adversarial_rate=0.0,
                                        surface=surface))
    return events


@st.composite
def adversarial_traces(draw, vocabulary: Vocabulary = DEFAULT_VOCABULARY, max_events: int = 12,
                       reading: Reading = DRAFT, adversarial_rate: float = 0.25,
                       surface: bool = True
                       ) -> tuple[tuple[Event, ...], tuple[tuple[int, ProducerViolation], ...]]:
    """Traces mixing conformant moves with non-conformant ones.

    Args:
        surface: also draw from the draft's wider surface (see the module docstring); while a
            run is active one event in four is then a Hypothesis-drawn one
            (:func:`random_surface_event`) when one fits.

    Returns:
        ``(trace, violations)`` where ``violations`` lists ``(event index, ProducerViolation)``
        for each non-conformant event drawn (labelled with the clause it breaks); the events not
        listed are conformant in the belief they were sent in."""
    belief = Belief()
    events: list[Event] = []
    labels: list[tuple[int, ProducerViolation]] = []
    length = draw(st.integers(min_value=1, max_value=max_events))
    threshold = int(adversarial_rate * 100)
    for index in range(length):
        bad = threshold > 0 and draw(st.integers(0, 99)) < threshold
        if surface and belief.run == "active" and draw(st.integers(0, 3), label="random") == 0:
            event = draw(random_surface_event(belief, vocabulary, malformed=bad))
            found = violations(belief, event, reading)
            if bool(found) == bad:
                events.append(event)
                labels.extend((index, v) for v in found[:1])
                belief = advance(belief, event)
                continue
        if bad:
            options = grouped_moves(belief, vocabulary, reading, adversarial=True,
                                    surface=surface)
            if options:
                event, violation = pick(draw, options)
                events.append(event)
                labels.append((index, violation))
                belief = advance(belief, event)
                continue
        options = grouped_moves(belief, vocabulary, reading, surface=surface)
        if not options:
            break
        event = pick(draw, options)
        events.append(event)
        belief = advance(belief, event)
    for into in _RECORDERS:
        into.append(tuple(events))
    return tuple(events), tuple(labels)


_UNICODE = st.characters(min_codepoint=0, max_codepoint=0xD7FF) | \
    st.characters(min_codepoint=0xE000, max_codepoint=0x10FFFF)
"""Any character UTF-8 can carry: every code point but the surrogates (U+D800 to U+DFFF), as
two ranges. The same characters as Hypothesis's default for text, drawn alike, but that default
builds its table from a codec, some seconds in each process whose Hypothesis storage is fresh (a
command's is: ``activity_check.cli``), where ranges need no table."""
_TEXT = st.text(_UNICODE, max_size=3)
_FLOATS = st.floats(allow_nan=False, allow_infinity=False, min_value=-1e6, max_value=1e6)
_KEYS = st.one_of(st.sampled_from(["n", "a/b", "m~n", "", "ключ", "ü", "~1", "0", "-"]),
                  _TEXT)
_EDGE_FLOATS = st.sampled_from([0.30000000000000004, 5e-324, 2.2250738585072014e-308,
                                 4503599627370495.5, -1e-07, 123456789.12345679])
"""Floats at the edge of double precision, none integral (an integral float is an integer in
the model, :mod:`model.json_values`) and none past 2**53 (where a JavaScript consumer's numbers
stop being exact): 0.1 + 0.2, the smallest subnormal and normal doubles, a half just under 2**52,
an exponent form and seventeen significant digits (a consumer that keeps 14 or 15 of them, as
PHP's old json_encode and lua-cjson do, changes them)."""
_JSON_LEAVES = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), _FLOATS, _EDGE_FLOATS,
                         _TEXT)
JSON_VALUES = st.recursive(_JSON_LEAVES, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(_KEYS, inner, max_size=3)), max_leaves=8)
"""Any JSON value: nulls, booleans, integers, floats (finite), text (unicode), and arrays and
objects of them (unicode keys, keys a pointer must escape, numeric keys)."""
_JSON = JSON_VALUES
_OBJECTS = st.dictionaries(_KEYS, JSON_VALUES, max_size=4)
_SNAPSHOT_CONTENTS = st.one_of(_OBJECTS, st.just(SURFACE_CONTENT))
_REPLACE_FLAGS = st.sampled_from([None, True, False])
"""Strategies with fixed arguments are built once: Hypothesis validates each strategy object
it is handed, and building them per draw made validation a sixth of a run's time."""


def _escape(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


def _pointers(value, prefix: str = "", depth: int = 0) -> list[str]:
    """Every JSON Pointer to a location inside ``value`` (RFC 6901, escaped), root included."""
    out = [prefix]
    if depth > 3:
        return out
    if isinstance(value, dict):
        for k, v in value.items():
            out.extend(_pointers(v, f"{prefix}/{_escape(k)}", depth + 1))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out.extend(_pointers(v, f"{prefix}/{i}", depth + 1))
    return out


_VALUE_OF_TYPE = {
    "null": st.none(), "boolean": st.booleans(), "integer": st.integers(-3, 3),
    "float": st.one_of(_FLOATS.filter(lambda f: f != int(f)), _EDGE_FLOATS),
    "string": _TEXT,
    "array": st.lists(JSON_VALUES, max_size=3), "object": _OBJECTS,
}


def _at(doc, pointer: str):
    """The value at an (existing, escaped) pointer of :func:`_pointers`."""
    node = doc
    for token in pointer.split("/")[1:]:
        token = token.replace("~1", "/").replace("~0", "~")
        node = node[int(token)] if isinstance(node, list) else node[token]
    return node


@st.composite
def _pointer(draw, doc, shape: str) -> str:
    """A pointer of ``shape`` (:data:`properties.surface.POINTER_SHAPES`) into ``doc``, at an
    existing location when there is one of that shape, else built to that shape."""
    existing = [p for p in _pointers(doc) if pointer_shape(p) == shape]
    if existing and draw(st.booleans(), label="existing"):
        return draw(st.sampled_from(existing), label="pointer")
    keys = [k for k in doc] if isinstance(doc, dict) else []
    key = "/" + _escape(draw(st.sampled_from(keys))) if keys and draw(st.booleans()) else "/new"
    arrays = [p for p in _pointers(doc) if isinstance(_at(doc, p), list)]
    index = 0
    if shape in ("index", "dash", "leading-zero") and arrays and draw(st.booleans()):
        key = draw(st.sampled_from(arrays), label="array")  # an index into an existing array
        size = len(_at(doc, key))
        # the edges: the first and last elements, the index equal to the length (an append for
        # add, out of range for every other op) and one past it (RFC 6902 4.1, 4.2, 4.3)
        index = draw(st.sampled_from(sorted({0, max(size - 1, 0), size, size + 1})),
                     label="index")
    built = {"root": "", "member": key, "nested": f"{key}/x", "index": f"{key}/{index}",
             "dash": f"{key}/-", "leading-zero": f"{key}/01",
             "escaped": draw(st.sampled_from(["/a~1b", "/m~0n", "/~1", "/x~0~1y"]))}
    pointer = built[shape]
    return pointer if pointer_shape(pointer) == shape else \
        {"member": "/new", "nested": "/new/x", "index": "/new/0", "dash": "/new/-",
         "leading-zero": "/new/01"}.get(shape, pointer)


@st.composite
def random_operation(draw, doc) -> dict:
    """One RFC 6902 operation object over ``doc`` (a thawed JSON value): op, pointer shape
    (:data:`~properties.surface.POINTER_SHAPES`) and value type
    (:data:`~properties.surface.VALUE_TYPES`) each drawn uniformly, so that every combination of
    the coverage report's op dimension is as likely as any other; ``from`` of move and copy is
    drawn the same way."""
    op = draw(st.sampled_from(["add", "remove", "replace", "move", "copy", "test"]), label="op")
    obj = {"op": op, "path": draw(_pointer(doc, draw(st.sampled_from(POINTER_SHAPES))))}
    if op in ("move", "copy"):
        obj["from"] = draw(_pointer(doc, draw(st.sampled_from(POINTER_SHAPES))))
    if op in ("add", "replace", "test"):
        vt = draw(st.sampled_from(VALUE_TYPES), label="value type")
        obj["value"] = draw(_VALUE_OF_TYPE[vt], label="value")
    if draw(st.integers(0, 15), label="open member") == 0:
        obj[draw(_OPEN_MEMBERS, label="member")] = draw(JSON_VALUES, label="member value")
    return obj


_OPEN_MEMBERS = st.sampled_from(["comment", "meta", "x-trace", "ключ"])
"""Members RFC 6902 does not define, which an operation may carry (patch operations are open
objects: SNP-OPEN-OPS, PRC-KEEP-OPEN); never one of the six ops' own members."""


def _apply_op(doc, obj: dict):
    """``doc`` after the operation ``obj`` when it applies and leaves a container, else ``doc``
    (the working document a patch's later operations are drawn against)."""
    from model.json_values import freeze, thaw
    from model.patch import apply_patch
    from model.events import PatchOp
    try:
        outcome = apply_patch(freeze(doc), (PatchOp.of(obj),))
    except Exception:  # noqa: BLE001 - a value the model refuses leaves the document as it was
        return doc
    if not outcome.ok:
        return doc
    value = thaw(outcome.result)
    return value if isinstance(value, (dict, list)) else doc


def _containers_under(doc, base: str) -> list[str]:
    """The pointers to objects and arrays at or under ``base`` in ``doc``."""
    try:
        node = _at(doc, base)
    except (KeyError, IndexError, ValueError, TypeError):
        return []
    return [base + p for p in _pointers(node) if isinstance(_at(node, p), (dict, list))]


@st.composite
def _write_under(draw, doc, base: str) -> dict:
    """An add, replace or remove at or under the container at ``base`` (a location an earlier
    operation of the same patch copied or moved to, or copied from): a copy is a value of its
    own (RFC 6902 4.5), so a write under it must not reach its source, nor the other way."""
    target = draw(st.sampled_from(_containers_under(doc, base)), label="under")
    node = _at(doc, target)
    inside = [target + p for p in _pointers(node) if p]
    op = draw(st.sampled_from(["add", "replace", "remove"] if inside else ["add"]), label="op")
    if op == "add":
        path = f"{target}/{'-' if isinstance(node, list) else 'w'}"
    else:
        path = draw(st.sampled_from(inside), label="pointer")
    obj = {"op": op, "path": path}
    if op != "remove":
        obj["value"] = draw(_VALUE_OF_TYPE[draw(st.sampled_from(VALUE_TYPES))], label="value")
    return obj


@st.composite
def _array_edge(draw, doc, arrays: list[str]) -> dict:
    """An operation at the edge of one of ``arrays`` (pointers into ``doc``): at the index equal
    to its length (an append for add, out of range for replace, remove, test and a ``from``:
    RFC 6902 4.1 to 4.6), one past it, or its last element."""
    array = draw(st.sampled_from(arrays), label="array")
    size = len(_at(doc, array))
    index = draw(st.sampled_from([size, size + 1, max(size - 1, 0)]), label="index")
    op = draw(st.sampled_from(["replace", "remove", "add", "test", "move", "copy"]), label="op")
    if op in ("move", "copy"):
        return {"op": op, "from": f"{array}/{index}", "path": f"{array}/0"}
    obj = {"op": op, "path": f"{array}/{index}"}
    if op != "remove":
        obj["value"] = draw(_VALUE_OF_TYPE[draw(st.sampled_from(VALUE_TYPES))], label="value")
    return obj


_EDGE_NAMES = ("~1", "/0", "~/", "a/~b")
"""Member names holding both ``~`` and ``/``: their pointers (``/~01``, ``/~10``, ``/~0~1``,
``/a~1~0b``) decode to another member when ``~0`` is decoded before ``~1`` (RFC 6901 section 4)."""

_EDGE_KINDS = ("negative-index", "escaped-pair", "move-in-array", "remove-first",
               "move-to-extension")
"""The pointer and move edges :func:`_pointer_edge` draws, one of them uniformly."""


def _own_array(doc, arrays: list[str], draw) -> tuple[list[dict], str, int]:
    """``(ops, array, size)``: an array of ``doc`` of two elements or more (``ops`` empty), or,
    when there is none (or one time in four), an add of a new one of three distinct elements at
    ``/e`` (``ops`` that add), so that the edge after it can show on any content held."""
    long = [a for a in arrays if len(_at(doc, a)) >= 2]
    if long and draw(st.integers(0, 3), label="own array") != 0:
        array = draw(st.sampled_from(long), label="array")
        return [], array, len(_at(doc, array))
    return [{"op": "add", "path": "/e", "value": [1, 2, 3]}], "/e", 3


@st.composite
def _pointer_edge(draw, doc) -> list[dict]:
    """One or two operations over ``doc`` (an object) at a pointer or move edge that a
    hand-written applier gets wrong, the kind drawn uniformly from :data:`_EDGE_KINDS`:

    * ``negative-index``: a replace, remove or test at the index ``-1`` of an array (or a move
      or copy from it), which names nothing (RFC 6901 section 4: an index is digits; the patch
      fails, SNP-ATOMIC);
    * ``escaped-pair``: an add (or, at an existing member, a replace, remove or test) at a member
      of :data:`_EDGE_NAMES` (``/~01``: decoding ``~0`` before ``~1`` reads it as ``/1``);
    * ``move-in-array``: a move between two distinct indices of one array (RFC 6902 4.4: the
      source is removed before the target is added);
    * ``remove-first``: a remove at index 0 of an array of two elements or more (RFC 6902 4.2);
    * ``move-to-extension``: a move from a member to one whose name extends the source's (``/n``
      to ``/nx``): not a move into a child, which RFC 6902 4.4 forbids by reference token.

    The array ones take an array of ``doc`` of two elements or more, or add one first
    (:func:`_own_array`). Returns the operations in order (the last one is the edge)."""
    kind = draw(st.sampled_from(_EDGE_KINDS), label="edge")
    arrays = [c for c in _containers_under(doc, "") if c and isinstance(_at(doc, c), list)]
    if kind == "escaped-pair":
        name = draw(st.sampled_from(_EDGE_NAMES), label="name")
        op = draw(st.sampled_from(["add", "replace", "remove", "test"] if name in doc
                                  else ["add"]), label="op")
        obj = {"op": op, "path": "/" + _escape(name)}
        if op != "remove":
            obj["value"] = draw(_VALUE_OF_TYPE[draw(st.sampled_from(VALUE_TYPES))], label="value")
        return [obj]
    if kind == "move-to-extension":
        names = [k for k in doc if k]
        if not names:
            return [{"op": "add", "path": "/n", "value": 1},
                    {"op": "move", "from": "/n", "path": "/nx"}]
        name = draw(st.sampled_from(names), label="from")
        suffix = draw(st.sampled_from(["x", "0", "~"]), label="suffix")
        return [{"op": "move", "from": "/" + _escape(name), "path": "/" + _escape(name + suffix)}]
    if kind == "negative-index" and arrays and draw(st.booleans(), label="any array"):
        ops, array = [], draw(st.sampled_from(arrays), label="array")  # -1 fails on any length
    else:
        ops, array, size = _own_array(doc, arrays, draw)
    if kind == "negative-index":
        op = draw(st.sampled_from(["replace", "remove", "test", "move", "copy"]), label="op")
        if op in ("move", "copy"):
            return ops + [{"op": op, "from": f"{array}/-1", "path": "/moved"}]
        obj = {"op": op, "path": f"{array}/-1"}
        if op != "remove":
            obj["value"] = draw(_VALUE_OF_TYPE[draw(st.sampled_from(VALUE_TYPES))], label="value")
        return ops + [obj]
    if kind == "remove-first":
        return ops + [{"op": "remove", "path": f"{array}/0"}]
    source = draw(st.integers(0, size - 1), label="source")
    target = draw(st.integers(0, size - 2), label="target")
    target += target >= source  # a distinct index
    return ops + [{"op": "move", "from": f"{array}/{source}", "path": f"{array}/{target}"}]


@st.composite
def random_patch(draw, doc, max_ops: int = 4) -> list[dict]:
    """Zero (one time in eight) to ``max_ops`` RFC 6902 operations over ``doc`` (a thawed JSON
    value), each drawn
    against the document as the operations before it left it (:func:`random_operation`), so
    that a later operation can reach what an earlier one created. One operation in four (of an
    object holding containers) copies or moves one of them to a new member, one in four of
    the rest (of a document holding arrays) is at an array's edge (:func:`_array_edge`) and one
    in four of the rest (of an object) at a pointer or move edge (:func:`_pointer_edge`: a
    ``-1`` index, a member named with ``~`` and ``/``, a move between two indices of one array,
    a remove at index 0, a move to a member whose name extends the source's; with the add of the
    array it is drawn on before it when it needs one, one more operation whatever the count); after
    a copy, a move or an add of a container, one time in two an operation follows (one more,
    whatever the count) that writes at or under its ``path`` (or, after a copy, under its
    ``from``: :func:`_write_under`): the shape a consumer that copies by reference gets
    wrong."""
    ops: list[dict] = []
    current = doc
    if draw(st.integers(0, 7), label="empty") == 0:
        return ops  # the empty patch: legal, applies and changes nothing (RFC 6902 section 3)
    count = draw(st.integers(1, max_ops), label="operations")
    while len(ops) < count:
        sources = [c for c in _containers_under(current, "") if c] \
            if isinstance(current, dict) else []
        arrays = [c for c in sources if isinstance(_at(current, c), list)]
        if sources and draw(st.integers(0, 3), label="copy container") == 0:
            obj = {"op": draw(st.sampled_from(["copy", "move"]), label="op"),
                   "from": draw(st.sampled_from(sources), label="from"),
                   "path": "/" + _escape(draw(st.sampled_from(["copied", "c~", "ü"]),
                                              label="to"))}
        elif arrays and draw(st.integers(0, 3), label="array edge") == 0:
            obj = draw(_array_edge(current, arrays))
        elif isinstance(current, dict) and draw(st.integers(0, 3), label="pointer edge") == 0:
            *before, obj = draw(_pointer_edge(current))
            for first in before:  # the array (or member) the edge is drawn on
                ops.append(first)
                current = _apply_op(current, first)
        else:
            obj = draw(random_operation(current))
        ops.append(obj)
        current = _apply_op(current, obj)
        bases = [] if obj["op"] not in ("copy", "move", "add") else \
            [b for b in ([obj["path"]] + ([obj["from"]] if obj["op"] == "copy" else []))
             if b and _containers_under(current, b)]
        if bases and draw(st.booleans(), label="write under"):
            under = draw(_write_under(current, draw(st.sampled_from(bases), label="base")))
            ops.append(under)
            current = _apply_op(current, under)
    return ops


@st.composite
def random_surface_event(draw, belief: Belief, vocabulary: Vocabulary = DEFAULT_VOCABULARY,
                         malformed: bool = False) -> Event:
    """One event with Hypothesis-drawn values: an ACTIVITY_SNAPSHOT of a drawn object (and
    metadata), or (two times in three when an activity is held, the id drawn among the
    held ones one time in two) an ACTIVITY_DELTA of a :func:`random_patch` over the held
    content; with ``malformed``, one of :func:`properties.surface.malformed_wires` or an event
    aimed at an id of another role (:func:`properties.surface.role_events`) instead.
    Conformance is not guaranteed: callers check :func:`model.producer.violations`."""
    from model.json_values import thaw
    if malformed:
        aimed = role_events(belief, vocabulary.activity_types[0])
        if aimed and draw(st.booleans(), label="role"):
            return draw(st.sampled_from(aimed), label="aimed")
        return parse_event(draw(st.sampled_from([w for _, _, w in malformed_wires()])))
    held_ids = [m for m in vocabulary.activity_ids if belief.activity(m) is not None]
    mid = draw(st.sampled_from(held_ids if held_ids and draw(st.booleans(), label="held")
                               else vocabulary.activity_ids), label="id")
    held = belief.activity(mid)
    atype = held.activity_type if held else vocabulary.activity_types[0]
    wire = {"messageId": mid, "activityType": atype}
    if held is not None and held.opener is not None:
        wire["subagentRunId"] = held.opener
    if held is None or draw(st.integers(0, 2), label="snapshot") == 2:
        wire.update(type="ACTIVITY_SNAPSHOT", content=draw(
            _SNAPSHOT_CONTENTS, label="content"))
        if held is not None and held.owner is not None:
            wire["subagentRunId"] = held.owner
        flag = draw(_REPLACE_FLAGS, label="replace")
        if flag is not None:
            wire["replace"] = flag
    else:
        doc = thaw(held.content)
        wire.update(type="ACTIVITY_DELTA",
                    patch=draw(random_patch(doc)))
    if draw(st.integers(0, 3), label="metadata") == 0:
        wire["metadata"] = draw(_OBJECTS, label="metadata value")
    return parse_event(wire)


@st.composite
def wire_events(draw, message_ids=("act-1", "act-2"), malformed: bool = True) -> dict:
    """One ACTIVITY_SNAPSHOT or ACTIVITY_DELTA as a wire JSON object, over the whole surface:
    contents and metadata of any JSON values (:data:`JSON_VALUES`), one to four operations of any
    RFC 6902 op (and an undefined one) with pointers of every shape (root, escapes, ``-``,
    leading zeros). With ``malformed=True`` members are sometimes dropped, nulled or given a
    value of another JSON type (``"replace": "false"``, a number for ``activityType``, an object
    for ``patch``...), or an undescribed member is added (the processing rules then make the
    event fatal, or, for an undescribed member, stripped)."""
    kind = draw(st.sampled_from(["ACTIVITY_SNAPSHOT", "ACTIVITY_DELTA"]))
    obj: dict = {"type": kind, "messageId": draw(st.sampled_from(message_ids)),
                 "activityType": draw(st.sampled_from(["PLAN", "SEARCH"]))}
    if kind == "ACTIVITY_SNAPSHOT":
        obj["content"] = draw(_OBJECTS)
        if draw(st.booleans()):
            obj["replace"] = draw(st.booleans())
    else:
        paths = st.sampled_from(["", "/a", "/a/0", "/a/01", "/a/-", "/b", "/-", "/a~1b", "/m~0n",
                                 "/ключ", "/a/b/c"])
        operations = []
        for _ in range(draw(st.integers(1, 4))):
            op = draw(st.sampled_from(["add", "remove", "replace", "test", "move", "copy",
                                       "increment"]))
            operation = {"op": op, "path": draw(paths)}
            if op in ("add", "replace", "test"):
                operation["value"] = draw(_JSON)
            if op in ("move", "copy"):
                operation["from"] = draw(paths)
            operations.append(operation)
        obj["patch"] = operations
    if draw(st.booleans()):
        obj["subagentRunId"] = draw(st.sampled_from(["sub-1", "sub-2"]))
    if draw(st.booleans()):
        obj["metadata"] = draw(st.dictionaries(st.sampled_from(["k", "x", "ключ"]), _JSON,
                                               max_size=2))
    if malformed and draw(st.integers(0, 3)) == 0:
        key = draw(st.sampled_from(sorted(obj) + (["patch[0]"] if "patch" in obj else [])))
        mutation = draw(st.sampled_from(["drop", "null", "boolean", "number", "string", "array",
                                         "object", "extra"]))
        target, name = (obj["patch"][0], draw(st.sampled_from(sorted(obj["patch"][0])))) \
            if key == "patch[0]" else (obj, key)
        values = {"null": None, "boolean": False, "number": 7, "string": "false",
                  "array": [1], "object": {"op": "replace"}}
        if mutation == "drop":
            target.pop(name)
        elif mutation == "extra":
            obj["unexpected"] = True
        else:
            target[name] = values[mutation]
    return obj
