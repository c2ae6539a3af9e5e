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

Every strategy is deterministic under Hypothesis' seed (``@seed`` / ``settings(derandomize=True)``).
"""
from __future__ import annotations


from hypothesis import strategies as st

from model.events import ActivityDelta, ActivitySnapshot, Event, MessagesSnapshot
from model.producer import (DEFAULT_VOCABULARY, Belief, ProducerViolation, Vocabulary,
                            adversarial_moves, advance, moves)
from model.readings import DRAFT, Reading

__all__ = ["conformant_traces", "adversarial_traces", "wire_events", "as_wire", "pick",
           "kind_of", "group_by_kind", "grouped_moves"]


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
                  adversarial: bool = False):
    """:func:`group_by_kind` of the conformant (or adversarial) moves, memoised per belief."""
    key = (adversarial, belief, id(vocabulary), reading)
    hit = _GROUPED.get(key)
    if hit is not None and hit[0] is vocabulary:
        return hit[1]
    options = (adversarial_moves if adversarial else moves)(belief, vocabulary, reading)
    grouped = group_by_kind(options)
    if len(_GROUPED) > 20000:
        _GROUPED.clear()
    _GROUPED[key] = (vocabulary, grouped)
    return grouped


def as_wire(trace) -> list[dict]:
    """A trace as a list of AG-UI wire JSON objects."""
    return [e.to_wire() for e in trace]


@st.composite
def conformant_traces(draw, vocabulary: Vocabulary = DEFAULT_VOCABULARY, max_events: int = 12,
                      reading: Reading = DRAFT) -> tuple[Event, ...]:
    """Traces of 1..``max_events`` events, each a conformant move of the producer (see
    :func:`model.producer.moves`) over ``vocabulary``; the first is RUN_STARTED.

    Shrinks towards shorter traces and earlier (simpler) moves."""
    events, _ = draw(adversarial_traces(vocabulary, max_events, reading, adversarial_rate=0.0))
    return events


@st.composite
def adversarial_traces(draw, vocabulary: Vocabulary = DEFAULT_VOCABULARY, max_events: int = 12,
                       reading: Reading = DRAFT, adversarial_rate: float = 0.25
                       ) -> tuple[tuple[Event, ...], tuple[tuple[int, ProducerViolation], ...]]:
    """Traces mixing conformant moves with non-conformant ones.

    Returns:
        ``(trace, violations)`` where ``violations`` lists ``(event index, ProducerViolation)``
        for each non-conformant event drawn (labelled with the clause it breaks)."""
    belief = Belief()
    events: list[Event] = []
    labels: list[tuple[int, ProducerViolation]] = []
    length = draw(st.integers(min_value=1, max_value=max_events))
    threshold = int(adversarial_rate * 100)
    for index in range(length):
        bad = threshold > 0 and draw(st.integers(0, 99)) < threshold
        if bad:
            options = grouped_moves(belief, vocabulary, reading, adversarial=True)
            if options:
                event, violation = pick(draw, options)
                events.append(event)
                labels.append((index, violation))
                belief = advance(belief, event)
                continue
        options = grouped_moves(belief, vocabulary, reading)
        if not options:
            break
        event = pick(draw, options)
        events.append(event)
        belief = advance(belief, event)
    return tuple(events), tuple(labels)


_JSON_LEAVES = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.text(max_size=3))
_JSON = st.recursive(_JSON_LEAVES, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=3), inner, max_size=3)),
    max_leaves=6)


@st.composite
def wire_events(draw, message_ids=("act-1", "act-2"), malformed: bool = True) -> dict:
    """One ACTIVITY_SNAPSHOT or ACTIVITY_DELTA as a wire JSON object. With ``malformed=True``
    members are sometimes dropped, nulled or given the wrong type (the processing rules then make
    the event fatal, or, for an undescribed member, stripped)."""
    kind = draw(st.sampled_from(["ACTIVITY_SNAPSHOT", "ACTIVITY_DELTA"]))
    obj: dict = {"type": kind, "messageId": draw(st.sampled_from(message_ids)),
                 "activityType": draw(st.sampled_from(["PLAN", "SEARCH"]))}
    if kind == "ACTIVITY_SNAPSHOT":
        obj["content"] = draw(st.dictionaries(st.text(max_size=3), _JSON, max_size=3))
        if draw(st.booleans()):
            obj["replace"] = draw(st.booleans())
    else:
        path = draw(st.sampled_from(["", "/a", "/a/0", "/b", "/-"]))
        op = draw(st.sampled_from(["add", "remove", "replace", "test", "move", "copy", "increment"]))
        operation = {"op": op, "path": path}
        if op in ("add", "replace", "test"):
            operation["value"] = draw(_JSON)
        if op in ("move", "copy"):
            operation["from"] = draw(st.sampled_from(["/a", "/b"]))
        obj["patch"] = [operation]
    if draw(st.booleans()):
        obj["subagentRunId"] = draw(st.sampled_from(["sub-1", "sub-2"]))
    if draw(st.booleans()):
        obj["metadata"] = draw(st.dictionaries(st.sampled_from(["k", "x"]), _JSON, max_size=2))
    if malformed and draw(st.integers(0, 3)) == 0:
        key = draw(st.sampled_from(sorted(obj)))
        mutation = draw(st.sampled_from(["drop", "null", "number", "extra"]))
        if mutation == "drop":
            obj.pop(key)
        elif mutation == "null":
            obj[key] = None
        elif mutation == "number":
            obj[key] = 7
        else:
            obj["unexpected"] = True
    return obj
