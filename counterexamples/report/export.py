"""Export a finding (``out/findings/<id>.json``) in other forms: the witness trace as AG-UI JSON
lines or a JSON array, the consumer's run through the trace as an ITF trace (the Informal Trace
Format of Apalache and Quint), a Mermaid sequence diagram, and a self-contained pytest file that
replays the finding as a regression test.

Every kind of finding of :mod:`counterexamples.findings` is handled, each by its type:

* :class:`~counterexamples.findings.AmbiguityFinding`: a trace and its verdict classes, each a
  set of readings (``"Q1=merge,Q5=retype"``; ``"(any reading)"`` for the empty assignment) that
  give one verdict;
* :class:`~counterexamples.findings.PropertyFinding`: a trace on which a named consumer (the
  reference model, or a mutant of :data:`properties.zoo.MUTANTS`) under a reading broke a
  property of :mod:`properties.catalogue` at event ``atEvent``;
* :class:`~counterexamples.findings.PeerDivergenceFinding` (:mod:`counterexamples.peers`): a
  trace on which a real implementation behind an adapter gave a verdict no reading gives; it
  records the model's verdict classes as an ambiguity does, plus the peer's verdict
  (``peerVerdict``), the ``peer``, the ``nearest`` reading and the event at which the peer
  ``divergesAt``.

Every exporter takes a finding (:func:`load_finding` reads one from its file) or its JSON
document (validated by :func:`~counterexamples.findings.finding_from_json`); what differs by
kind is dispatched on the finding's type (:func:`functools.singledispatch`). :func:`export`
picks a format by name (:data:`FORMATS`); the command line is ``activity-check export FINDING
--format F``.

Sources: the wire form is :mod:`model.wire` (:func:`~model.wire.parse_events`,
:func:`~model.wire.dump_jsonl`); each event's effect is a record of the trace fold,
:func:`model.verdict.fold` (a zoo mutant is folded with its own step function), and verdicts are
:func:`model.verdict.evaluate`;
readings are parsed by :func:`model.readings.parse_reading`. The ITF layout follows ADR-015,
"Informal Trace Format in JSON" (Apalache, ``docs/src/adr/015adr-trace.md``,
https://apalache-mc.org/docs/adr/015adr-trace.html); see :func:`to_itf`.
"""
from __future__ import annotations

import itertools
import json
import os
from dataclasses import dataclass
from functools import singledispatch
from typing import Any, Mapping, Optional, Sequence, Union

from model.consumer import ConsumerState, Fatal, StepResult, Warning, initial_state
from model.events import Event, Malformed, Unrecognised
from model.json_values import freeze
from model.readings import ANY_READING, DRAFT, Reading
from model.verdict import evaluate, fold
from counterexamples.findings import (AmbiguityFinding, ClassedFinding, Finding,
                                      PeerDivergenceFinding, PropertyFinding, VerdictClassEntry,
                                      finding_from_json, load_finding, parse_reading_spec)

__all__ = ["FORMATS", "ITF_SCHEMA", "ITF_SPEC_URL", "ITF_VARS", "load_finding",
           "open_finding", "to_jsonl",
           "to_json", "to_itf", "to_mermaid", "compare_mermaid", "to_pytest", "to_ag_ui_fixture",
           "export",
           "reading_of_class",
           "parse_reading_spec"]

FindingLike = Union[Finding, Mapping]
"""What the exporters take: a finding, or its JSON document (validated on the way in)."""

FORMATS = ("jsonl", "json", "itf", "mermaid", "pytest", "ag-ui-fixture")
"""Format names accepted by :func:`export` (and ``activity-check export --format``)."""

ITF_SPEC_URL = "https://apalache-mc.org/docs/adr/015adr-trace.html"
"""ADR-015, the published definition of the ITF format followed by :func:`to_itf`."""

ITF_VARS = ("event", "messages", "warnings", "fatal", "run", "agentState", "runInput")
"""The state variables of every exported ITF trace, in order (see :func:`to_itf`)."""


# --- the ITF schema -----------------------------------------------------------------------------

ITF_SCHEMA: dict = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": "https://activity-check.invalid/schemas/itf.json",
    "title": "ITF trace (Apalache ADR-015, Informal Trace Format in JSON)",
    "description": (
        "A trace object: optional '#meta' (any object), optional 'params' (names), 'vars' "
        "(names every state defines), 'states' (state objects), optional 'loop' (index of the "
        "state that starts the loop). A state: optional '#meta' object and one expression per "
        "variable. An expression: a JSON boolean, string, integer within +-(2^53-1), "
        "{'#bigint': '[-][0-9]+'}, a list (array), a record (object whose field names do not "
        "start with '#'), {'#tup': [...]}, {'#set': [...]}, {'#map': [[key, value], ...]}, or "
        "{'#unserializable': text}. JSON null is no ITF expression. That every state defines "
        "exactly the variables of 'vars' depends on the trace's own 'vars', which a schema "
        "cannot express; check it separately (the tests do)."),
    "type": "object",
    "required": ["vars", "states"],
    "properties": {
        "#meta": {"type": "object"},
        "params": {"type": "array", "items": {"type": "string"}},
        "vars": {"type": "array", "items": {"type": "string"}},
        "states": {"type": "array", "items": {"$ref": "#/$defs/state"}},
        "loop": {"type": "integer", "minimum": 0},
    },
    "additionalProperties": False,
    "$defs": {
        "state": {
            "type": "object",
            "properties": {"#meta": {"type": "object"}},
            "patternProperties": {"^[^#]": {"$ref": "#/$defs/expr"}},
            "additionalProperties": False,
        },
        "expr": {
            "oneOf": [
                {"type": "boolean"},
                {"type": "string"},
                {"type": "integer", "minimum": -(2**53) + 1, "maximum": 2**53 - 1},
                {"$ref": "#/$defs/bigint"},
                {"type": "array", "items": {"$ref": "#/$defs/expr"}},
                {"$ref": "#/$defs/record"},
                {"$ref": "#/$defs/tup"},
                {"$ref": "#/$defs/set"},
                {"$ref": "#/$defs/map"},
                {"$ref": "#/$defs/unserializable"},
            ],
        },
        "bigint": {
            "type": "object", "required": ["#bigint"], "additionalProperties": False,
            "properties": {"#bigint": {"type": "string", "pattern": "^-?[0-9]+$"}},
        },
        "record": {
            "type": "object",
            "propertyNames": {"not": {"pattern": "^#"}},
            "additionalProperties": {"$ref": "#/$defs/expr"},
        },
        "tup": {
            "type": "object", "required": ["#tup"], "additionalProperties": False,
            "properties": {"#tup": {"type": "array", "items": {"$ref": "#/$defs/expr"}}},
        },
        "set": {
            "type": "object", "required": ["#set"], "additionalProperties": False,
            "properties": {"#set": {"type": "array", "items": {"$ref": "#/$defs/expr"}}},
        },
        "map": {
            "type": "object", "required": ["#map"], "additionalProperties": False,
            "properties": {"#map": {"type": "array", "items": {
                "type": "array", "prefixItems": [{"$ref": "#/$defs/expr"},
                                                 {"$ref": "#/$defs/expr"}],
                "minItems": 2, "maxItems": 2}}},
        },
        "unserializable": {
            "type": "object", "required": ["#unserializable"], "additionalProperties": False,
            "properties": {"#unserializable": {"type": "string"}},
        },
    },
}
"""JSON Schema (draft 2020-12) of an ITF trace, written from ADR-015 (:data:`ITF_SPEC_URL`)."""


# --- shared helpers -----------------------------------------------------------------------------

def _as_finding(finding: FindingLike) -> Finding:
    """The typed finding (a JSON document is validated: ValueError naming what is wrong)."""
    return finding if isinstance(finding, Finding) else finding_from_json(finding)


def reading_of_class(verdict_class: Union[VerdictClassEntry, Mapping]) -> Reading:
    """The complete reading that stands for one verdict class of a finding
    (:attr:`counterexamples.findings.VerdictClassEntry.reading`): :data:`~model.readings.DRAFT`
    for the class that includes draft, otherwise the class's first ``readings`` entry parsed
    with :func:`~model.readings.parse_reading` (a partial assignment, completed with draft
    options for the knobs it leaves open, which stays in the class).

    Args:
        verdict_class: a :class:`~counterexamples.findings.VerdictClassEntry` or a member of a
            finding's ``verdicts`` (``{"readings", "includesDraft", "verdict"}``).

    Raises:
        model.readings.ReadingError: a readings entry that does not parse.
    """
    if not isinstance(verdict_class, VerdictClassEntry):
        verdict_class = VerdictClassEntry.from_json(verdict_class)
    return verdict_class.reading


def _reading_name(reading: Reading) -> str:
    return reading.name or "draft"


@singledispatch
def _consumer_of(finding: Finding):
    """``(Consumer, note)``: the consumer a finding's states are computed with. Ambiguities and
    peer divergences are about the reference model. A property finding names its consumer: the
    reference or a zoo mutant; an unknown name (say, a real SDK behind an adapter) falls back to
    the reference model, with a note saying so."""
    from model.consumers import REFERENCE
    return REFERENCE, ""


@_consumer_of.register(PropertyFinding)
def _(finding: PropertyFinding):
    from properties.zoo import MUTANT_BY_NAME
    from model.consumers import REFERENCE
    name = finding.consumer
    if name == REFERENCE.name:
        return REFERENCE, ""
    if name in MUTANT_BY_NAME:
        return MUTANT_BY_NAME[name], ""
    return REFERENCE, (f"consumer {name!r} is not in the zoo: states are the reference model's")


@singledispatch
def _default_reading(finding: Finding) -> Reading:
    """The reading a finding's ITF trace is under when none is asked for: draft's class."""
    return DRAFT


@_default_reading.register(PropertyFinding)
def _(finding: PropertyFinding) -> Reading:
    return parse_reading_spec(finding.reading)


@_default_reading.register(PeerDivergenceFinding)
def _(finding: PeerDivergenceFinding) -> Reading:
    return DRAFT if finding.nearest is None else parse_reading_spec(finding.nearest)


@dataclass(frozen=True)
class _Step:
    """One event's effect: the state after it, what it surfaced, or the exception it raised."""

    state: ConsumerState
    warnings: tuple[Warning, ...] = ()
    fatal: Optional[Fatal] = None
    error: Optional[str] = None


def _timeline(events: Sequence[Event], reading: Reading, consumer=None) -> list[_Step]:
    """The effect of each event (one entry per event) from the trace fold,
    :func:`model.verdict.fold`, under ``reading``: with the model's step, or a zoo mutant's
    (``consumer``; an exception its step raises leaves the state as it was, is recorded, and
    the fold goes on). After the fold's last record (a fatal) the halted state repeats."""
    from model.consumers import REFERENCE
    errors: dict[int, str] = {}
    step = None
    if consumer is not None and consumer is not REFERENCE:
        calls = itertools.count()  # the fold steps each event once, in order

        def step(state: ConsumerState, event: Event, reading: Reading) -> StepResult:
            index = next(calls)
            try:
                return consumer.step(state, event, reading)
            except Exception as exc:  # noqa: BLE001 - a crashing consumer is the finding (P00)
                errors[index] = f"{type(exc).__name__}: {exc}"
                return StepResult(state)

    records = fold(events, reading, step=step)
    out = [_Step(r.after, r.warnings, r.fatal, errors.get(r.index)) for r in records]
    last = records[-1].after if records else initial_state()
    return out + [_Step(last)] * (len(events) - len(out))


def _strip_detail(verdict_json: dict) -> dict:
    out = dict(verdict_json)
    out["warnings"] = [{k: v for k, v in w.items() if k != "detail"} for w in out.get("warnings", [])]
    if out.get("fatal"):
        out["fatal"] = {k: v for k, v in out["fatal"].items() if k != "detail"}
    return out


def _class_index(finding: ClassedFinding, verdict_json: dict) -> Optional[int]:
    """Index of the finding's verdict class equal to ``verdict_json`` (details aside)."""
    key = freeze(_strip_detail(verdict_json))
    for i, c in enumerate(finding.classes):
        if freeze(_strip_detail(c.verdict)) == key:
            return i
    return None


# --- JSON lines, JSON ---------------------------------------------------------------------------

def to_jsonl(finding: FindingLike) -> str:
    """The witness trace as AG-UI JSON lines: one compact wire event per line, newline-terminated
    (:meth:`counterexamples.findings.Finding.jsonl`: :func:`model.wire.dump_jsonl` over
    :func:`model.wire.parse_events`; the form ``activity-check replay`` reads).

    Raises:
        model.wire.TraceFormatError: an element of ``events`` that is not an object.
    """
    return _as_finding(finding).jsonl()


def to_json(finding: FindingLike) -> str:
    """The finding JSON itself (id, kind, knob or property, clauses, the verdict under each class
    of readings, the explanation and the step-by-step account), indented, newline-terminated;
    ``replay`` reads it too (an object with ``events``)."""
    return json.dumps(_as_finding(finding).to_json(), indent=2, ensure_ascii=False) + "\n"


# --- ITF ----------------------------------------------------------------------------------------

_NONE = {"tag": "None", "value": {"#tup": []}}


def _some(value: Any) -> dict:
    return {"tag": "Some", "value": value}


def _opt(value: Any) -> dict:
    return _NONE if value is None else _some(value)


def _bigint(n: int) -> dict:
    return {"#bigint": str(int(n))}


def _scalar(value: Any) -> Any:
    """An ITF expression for a top-level wire member: strings and booleans as they are, integers
    as ``#bigint``, anything else (object, array, non-integral number) as its canonical JSON
    text. Null has no encoding: the caller omits the member."""
    if isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return _bigint(value)
    return freeze(value)


def _itf_event(wire: dict) -> dict:
    record = {}
    for key, value in wire.items():
        if value is None or key.startswith("#") or key == "wireJson":
            continue
        record[key] = _scalar(value)
    record["wireJson"] = freeze(wire)
    return record


def _itf_message(m) -> dict:
    return {"id": m.id, "role": m.role, "activityType": _opt(m.activity_type),
            "content": _opt(m.content), "metadata": _opt(m.metadata), "owner": _opt(m.owner),
            "firstOwner": _opt(m.first_owner), "other": m.other}


def _itf_warning(at: int, w: Warning) -> dict:
    return {"code": w.code, "messageId": _opt(w.message_id), "atEvent": _bigint(at),
            "clause": w.clause, "detail": w.detail}


def _itf_fatal(at: int, f: Fatal) -> dict:
    return {"code": f.code, "atEvent": _bigint(at), "clause": f.clause,
            "messageId": _opt(f.message_id), "detail": f.detail}


def to_itf(finding: FindingLike, reading: Union[None, str, Reading] = None) -> dict:
    """The consumer's run through the witness as an ITF trace (ADR-015, :data:`ITF_SPEC_URL`).

    One state per prefix of the trace: state 0 is the consumer before any event, state ``i`` the
    consumer after event ``i-1``; so ``len(states) == len(events) + 1``. The states are those
    :func:`model.verdict.evaluate` passes through (after a fatal the halted state repeats), under
    one reading:

    * peer-divergence finding: by default the ``nearest`` reading the finding names.
    * ambiguity finding: by default the draft's class (``includesDraft``), i.e. :data:`DRAFT`.
      To export another verdict class pass its reading, e.g.
      ``to_itf(f, f["verdicts"][k]["readings"][0])`` (or :func:`reading_of_class`);
      on the command line ``activity-check export F --format itf --reading SPEC``.
    * property finding: by default the finding's ``reading``, stepping the finding's
      ``consumer`` (a zoo mutant is stepped with its own step; an unknown consumer name falls
      back to the reference model, noted in ``#meta``).

    Args:
        finding: from :func:`load_finding` (or its JSON document).
        reading: None (the default above), a reading spec (a preset, ``"Q1=ignore,..."`` or
            ``"(any reading)"``) or a :class:`~model.readings.Reading`.

    Returns:
        ``{"#meta": {...}, "vars": [...], "states": [...]}``, valid against :data:`ITF_SCHEMA`.
        ``#meta`` holds ``format`` ("ITF"), ``format-description`` (the ADR's URL), ``source``
        (``<id>.json``), ``description``, and the finding's ``finding``, ``kind``, ``knob`` or
        ``property``, ``consumer``, ``reading`` and, for an ambiguity, ``verdictClass``
        (``{"index", "readings", "includesDraft"}`` of the class the reading falls in, or null
        when it gives a verdict no class of the finding records). Each state's ``#meta`` is
        ``{"index": i}`` (plus ``"exception"`` when a mutant's step raised there).

    Variables (:data:`ITF_VARS`):

    * ``event``: the wire event that led here, as a record: its top-level members (strings and
      booleans as they are, integers as ``#bigint``, objects/arrays/other numbers as canonical
      JSON text) plus ``wireJson``, the canonical JSON text of the whole event (so the trace can
      be read back exactly); state 0 has ``{"type": "INIT"}``.
    * ``messages``: the ordered message list, records ``{id, role, activityType, content,
      metadata, owner, firstOwner, other}``; ``content`` and ``metadata`` are canonical JSON
      text; ``owner`` is the wire ``subagentRunId``; ``other`` the JSON text of the remaining
      wire members.
    * ``warnings``: every warning surfaced so far, records ``{code, messageId, atEvent, clause,
      detail}``.
    * ``fatal``: ``None`` or ``Some({code, atEvent, clause, messageId, detail})``.
    * ``run``: ``"idle"``, ``"active"``, ``"finished"``, ``"errored"`` or ``"rejected"`` (the
      verdict's ``run``).
    * ``agentState``: canonical JSON text of the agent state.
    * ``runInput``: the messages the consumer would send as the next run input, each as
      canonical JSON text.

    Encoding choices. ITF has no null, no floats and no free-form object keys (a record's field
    names must not start with ``#``), while AG-UI payloads (``content``, ``metadata``, patches,
    agent state) are arbitrary JSON; those are therefore carried as canonical JSON *text* (sorted
    keys, integral numbers as integers: :func:`model.json_values.freeze`), which is exact.
    Optional values of the model (an absent ``activityType``, ``owner``, ``messageId``, the
    fatal outcome) use the tagged-record option that Quint writes for its ``Option`` sum type,
    ``{"tag": "Some", "value": v}`` / ``{"tag": "None", "value": {"#tup": []}}``, so every record
    of one variable has the same fields (a Quint type such as ``Option[str]`` reads it).
    Wire members of ``event`` that are null (or named with a leading ``#``) are omitted from the
    record and kept in ``wireJson``. Integers are ``#bigint`` throughout. No ``varTypes`` are
    given (``event`` is heterogeneous), so Apalache cannot load the trace as input; Quint and
    the ITF trace viewer read it.

    Raises:
        model.readings.ReadingError: a reading spec that does not parse.
        model.wire.TraceFormatError: an element of ``events`` that is not an object.
    """
    finding = _as_finding(finding)
    events = finding.events
    consumer, note = _consumer_of(finding)
    if reading is None:
        chosen = _default_reading(finding)
    elif isinstance(reading, Reading):
        chosen = reading
    else:
        chosen = parse_reading_spec(reading)
    steps = _timeline(events, chosen, consumer)
    states = _itf_states(finding.wire, steps, getattr(consumer, "run_input", None))
    meta = {"format": "ITF", "format-description": ITF_SPEC_URL,
            "source": finding.id + ".json",
            "description": (f"activity-check export of finding {finding.id}: the "
                            f"{consumer.name} consumer under reading {_reading_name(chosen)}, "
                            "state i after event i-1 (state 0: before any event)"),
            "finding": finding.id, "kind": finding.kind}
    meta.update(_itf_kind_meta(finding))
    meta["consumer"] = consumer.name
    meta["reading"] = _reading_name(chosen)
    if note:
        meta["note"] = note
    meta.update(_itf_verdict_class(finding, events, chosen))
    return {"#meta": meta, "vars": list(ITF_VARS), "states": states}


def _itf_states(wires: Sequence[dict], steps: Sequence["_Step"], run_input=None) -> list[dict]:
    """The ITF states of :func:`to_itf`: state 0 before any event, then one per step, with the
    warnings so far, the first fatal, and the next run input (``run_input``, the consumer's own
    when it has one; a crash there is recorded in the state's ``#meta``)."""
    if run_input is None:
        from model.consumer import run_input

    def state_record(index: int, state: ConsumerState, warnings: list, fatal, event_record,
                     error: Optional[str]) -> dict:
        try:
            next_input = [freeze(m) for m in run_input(state)]
        except Exception as exc:  # noqa: BLE001 - a mutant's run_input may crash too
            next_input = []
            error = (error + "; " if error else "") + f"run_input: {type(exc).__name__}: {exc}"
        meta = {"index": index}
        if error:
            meta["exception"] = error
        return {"#meta": meta, "event": event_record,
                "messages": [_itf_message(m) for m in state.messages],
                "warnings": [_itf_warning(at, w) for at, w in warnings],
                "fatal": _NONE if fatal is None else _some(_itf_fatal(*fatal)),
                "run": "rejected" if state.halted else state.run,
                "agentState": state.state,
                "runInput": next_input}

    states = [state_record(0, initial_state(), [], None, {"type": "INIT"}, None)]
    warnings: list = []
    fatal = None
    for i, (wire, st) in enumerate(zip(wires, steps)):
        warnings = warnings + [(i, w) for w in st.warnings]
        if st.fatal is not None and fatal is None:
            fatal = (i, st.fatal)
        states.append(state_record(i + 1, st.state, warnings, fatal, _itf_event(wire), st.error))
    return states


@singledispatch
def _itf_kind_meta(finding: Finding) -> dict:
    """The members of an ITF ``#meta`` that name what the finding is about."""
    raise TypeError(f"not a finding: {type(finding).__name__}")


@_itf_kind_meta.register(AmbiguityFinding)
def _(finding: AmbiguityFinding) -> dict:
    return {"knob": finding.get("knob")}


@_itf_kind_meta.register(PeerDivergenceFinding)
def _(finding: PeerDivergenceFinding) -> dict:
    meta = {"peer": finding.peer}
    if finding.diverges_at is not None:
        meta["divergesAt"] = finding.diverges_at
    return meta


@_itf_kind_meta.register(PropertyFinding)
def _(finding: PropertyFinding) -> dict:
    return {"property": finding.property_id, "atEvent": finding.at_event}


@singledispatch
def _itf_verdict_class(finding: Finding, events: Sequence[Event], reading: Reading) -> dict:
    """``{"verdictClass": ...}`` for a finding with verdict classes: the class ``reading``
    falls in (null when none of the finding's classes has its verdict); ``{}`` otherwise."""
    return {}


@_itf_verdict_class.register(ClassedFinding)
def _(finding: ClassedFinding, events: Sequence[Event], reading: Reading) -> dict:
    index = _class_index(finding, evaluate(events, reading).to_json())
    if index is None:
        return {"verdictClass": None}
    c = finding.classes[index]
    return {"verdictClass": {"index": index, "readings": list(c.readings),
                             "includesDraft": c.includes_draft}}


# --- Mermaid ------------------------------------------------------------------------------------

_MERMAID_CODES = {"#": "#35;", ";": "#59;", '"': "#quot;", "{": "#123;", "}": "#125;",
                  "<": "#lt;", ">": "#gt;", "%": "#37;", "&": "#38;", "\\": "#92;",
                  "\n": " ", "\r": " ", "\t": " "}


def _mermaid_text(text: str) -> str:
    """Text safe after ``:`` in a sequence diagram line: characters Mermaid reads as syntax
    (``;`` ends a statement, ``#`` starts an entity code, quotes, braces, ``<``/``>`` of arrows
    and HTML, ``&`` of HTML entities, ``%`` of comments, the backslash) become Mermaid entity
    codes (``#59;``...), line breaks spaces, and every other character that is not printable
    (control characters, the line and paragraph separators, the bidirectional overrides) its
    numeric code (``#27;`` for ESC), so that a trace's text can neither end the line nor hide in
    it."""
    return "".join(_MERMAID_CODES.get(ch) or (ch if ch.isprintable() else f"#{ord(ch)};")
                   for ch in text)


def _short(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _event_label(wire: dict, event: Event) -> str:
    """A short label for an arrow: type, the id it is about, the members that matter."""
    name = wire.get("type") if isinstance(wire.get("type"), str) else "?"
    parts = [name]
    extra = []
    if name in ("ACTIVITY_SNAPSHOT", "ACTIVITY_DELTA"):
        for key in ("messageId", "activityType"):
            if isinstance(wire.get(key), str):
                parts.append(wire[key])
        if name == "ACTIVITY_DELTA" and isinstance(wire.get("patch"), list):
            ops = [f"{op.get('op')} {op.get('path', '')}".strip() if isinstance(op, dict) else "?"
                   for op in wire["patch"]]
            shown = ops[:3] + ([f"+{len(ops) - 3}"] if len(ops) > 3 else [])
            parts.append("[" + ", ".join(shown) + "]")
        if "replace" in wire:
            extra.append(f"replace:{json.dumps(wire['replace'])}")
        if "metadata" in wire:
            extra.append("metadata " + _short(freeze(wire["metadata"]), 30))
    elif name == "MESSAGES_SNAPSHOT" and isinstance(wire.get("messages"), list):
        ids = [str(m.get("id")) if isinstance(m, dict) else "?" for m in wire["messages"]]
        parts.append("[" + ", ".join(ids[:6] + (["…"] if len(ids) > 6 else [])) + "]")
    else:
        for key in ("messageId", "toolCallId", "runId"):
            if isinstance(wire.get(key), str):
                parts.append(wire[key])
                break
        echo = wire.get("input") if name == "RUN_STARTED" else None
        if isinstance(echo, dict) and isinstance(echo.get("messages"), list):
            held = [f"{m.get('id')}:{m.get('role')}" if isinstance(m, dict) else "?"
                    for m in echo["messages"]]
            extra.append("input [" + ", ".join(held[:4] + (["…"] if len(held) > 4 else []))
                         + "]")
        if isinstance(wire.get("role"), str):
            extra.append(wire["role"])
        if isinstance(wire.get("delta"), str):
            extra.append(json.dumps(_short(wire["delta"], 20), ensure_ascii=False))
    sub = wire.get("subagentRunId")
    if isinstance(sub, str) and name not in ("SUBAGENT_STARTED", "SUBAGENT_FINISHED",
                                             "SUBAGENT_ERROR"):
        extra.append(sub)
    elif isinstance(sub, str):
        parts.append(sub)
    elif sub is None and "subagentRunId" in wire:
        extra.append("subagentRunId:null")
    if isinstance(event, Malformed):
        extra.append(f"malformed {event.path}")
    elif isinstance(event, Unrecognised):
        extra.append("unrecognised")
    return " ".join(parts) + (f" ({', '.join(extra)})" if extra else "")


def _message_line(m) -> str:
    """A new message in a few words: id, activity type, content, and metadata when it has some
    (readings may differ only in the metadata kept, Q19, so a note must show it)."""
    if m.is_activity:
        text = f"{m.id} {m.activity_type} {_short(m.content or '', 40)}"
        if m.metadata is not None:
            text += " metadata " + _short(m.metadata, 40)
    else:
        text = f"{m.id} ({m.role})"
    return text


def _change(before: ConsumerState, step: _Step) -> str:
    """What one event did to the consumer, in a few words."""
    after = step.state
    parts = []
    held = {m.id: m for m in before.messages}
    for m in after.messages:
        old = held.get(m.id)
        if old is None:
            parts.append("+" + _message_line(m))
        elif old != m:
            bits = []
            if old.role != m.role:
                bits.append(f"role {m.role}")
            if old.activity_type != m.activity_type:
                bits.append(f"type {m.activity_type}")
            if old.content != m.content:
                bits.append("content " + _short(m.content or "(none)", 40))
            if old.metadata != m.metadata:
                bits.append("metadata " + _short(m.metadata or "(none)", 40))
            if old.owner != m.owner:
                bits.append(f"owner {m.owner or 'parent'}")
            if old.first_owner != m.first_owner:
                bits.append(f"opener {m.first_owner or 'parent'}")
            if old.other != m.other:
                bits.append("other " + _short(m.other, 30))
            parts.append(f"{m.id} " + ", ".join(bits))
    now = {m.id for m in after.messages}
    parts.extend(f"-{mid}" for mid in held if mid not in now)
    order_before = [m.id for m in before.messages if m.id in now]
    order_after = [m.id for m in after.messages if m.id in held]
    if order_before != order_after:
        parts.append("order " + ", ".join(m.id for m in after.messages))
    run_before = "rejected" if before.halted else before.run
    run_after = "rejected" if after.halted else after.run
    if run_before != run_after:
        parts.append(f"run {run_after}")
    if before.state != after.state:
        parts.append("state " + _short(after.state, 40))
    parts.extend(f"warn {w.code}" + (f" {w.message_id}" if w.message_id else "")
                 for w in step.warnings)
    if step.fatal is not None:
        parts.append(f"FATAL {step.fatal.code}")
    if step.error:
        parts.append(f"exception {_short(step.error, 60)}")
    return "; ".join(parts) or "unchanged"


def to_mermaid(finding: FindingLike) -> str:
    """The witness as a Mermaid ``sequenceDiagram``: participants ``Producer`` and ``Consumer``,
    one ``Producer->>Consumer:`` arrow per event with a short label (``ACTIVITY_SNAPSHOT act-1
    TYPE-A (replace:false, sub-1)``), and notes on the consumer's side:

    * peer-divergence finding: as an ambiguity (the model's classes; a note also at the event
      where the peer parts from every reading), then a last note with the peer's verdict.
    * ambiguity finding: after an event at which the verdict classes part (the event does not do
      the same thing under every class's reading), ``Note over Consumer:`` with what it did under
      each class, one class (or group of classes doing the same thing) a line, lines joined by
      Mermaid's ``<br/>``: ``draft: act-1 metadata {"k":1}<br/>Q1=ignore,Q2=continues:
      unchanged``. A class is labelled ``draft`` when it includes draft,
      otherwise by its first readings entry; its steps are the records of
      :func:`model.verdict.fold` under :func:`reading_of_class`. Events on which all classes
      agree get no note.
    * property finding: after every event, what it did to the finding's consumer under the
      finding's reading; at ``atEvent`` also the property broken.

    A first note over both participants names the finding. Label and note text is escaped with
    Mermaid entity codes (see :func:`_mermaid_text`). Returns the text, newline-terminated.
    """
    finding = _as_finding(finding)
    events = finding.events
    lines = ["sequenceDiagram", "    participant Producer", "    participant Consumer",
             f"    Note over Producer,Consumer: {_mermaid_text(_mermaid_title(finding))}"]
    tracks = _mermaid_tracks(finding, events)
    befores = [initial_state() for _ in tracks]
    for i, (wire, event) in enumerate(zip(finding.wire, events)):
        lines.append(f"    Producer->>Consumer: {_mermaid_text(_event_label(wire, event))}")
        changes = [_change(befores[k], steps[i]) for k, (_, steps) in enumerate(tracks)]
        befores = [steps[i].state for _, steps in tracks]
        note = _mermaid_note(finding, i, [label for label, _ in tracks], changes)
        if note is not None:
            lines.append(f"    Note over Consumer: {note}")
    lines.extend(_mermaid_tail(finding))
    return "\n".join(lines) + "\n"


def compare_mermaid(title: str, wire: Sequence[dict], readings: Sequence[tuple[str, Reading]]
                    ) -> str:
    """A witness trace as a Mermaid ``sequenceDiagram`` comparing the named readings (the
    settlement table's options of one knob): the lines of :func:`to_mermaid` (a first note
    ``title`` over both participants, one arrow per event), with a note after each event at
    which the readings do not all do the same thing, one line per group of readings doing the
    same, each labelled by the name given with it (``[("Q1=merge", DRAFT), ("Q1=ignore",
    ...)]``), so that a diagram compares exactly what its table does. ``wire``: the events'
    wire form (parsed by :func:`model.wire.parse_events`; TraceFormatError, a ValueError, for
    an element that is not an event object)."""
    from model.wire import parse_events
    events = parse_events(wire)
    lines = ["sequenceDiagram", "    participant Producer", "    participant Consumer",
             f"    Note over Producer,Consumer: {_mermaid_text(title)}"]
    tracks = [(label, _timeline(events, reading)) for label, reading in readings]
    befores = [initial_state() for _ in tracks]
    for i, (w, event) in enumerate(zip(wire, events)):
        lines.append(f"    Producer->>Consumer: {_mermaid_text(_event_label(w, event))}")
        changes = [_change(befores[k], steps[i]) for k, (_, steps) in enumerate(tracks)]
        befores = [steps[i].state for _, steps in tracks]
        if len(set(changes)) > 1:
            groups: dict[str, list[str]] = {}
            for (label, _), change in zip(tracks, changes):
                groups.setdefault(change, []).append(label)
            lines.append("    Note over Consumer: " + "<br/>".join(
                _mermaid_text(f"{' / '.join(names)}: {change}")
                for change, names in groups.items()))
    return "\n".join(lines) + "\n"


@singledispatch
def _mermaid_title(finding: Finding) -> str:
    """The first note: the finding's id and what it is about."""
    raise TypeError(f"not a finding: {type(finding).__name__}")


@_mermaid_title.register(AmbiguityFinding)
def _(finding: AmbiguityFinding) -> str:
    return f"{finding.id}: {finding.get('question') or finding.get('knob', '')}"


@_mermaid_title.register(PeerDivergenceFinding)
def _(finding: PeerDivergenceFinding) -> str:
    return f"{finding.id}: {finding.peer} gives a verdict no reading of the model gives"


@_mermaid_title.register(PropertyFinding)
def _(finding: PropertyFinding) -> str:
    return (f"{finding.id}: {finding.consumer} under {finding.reading} breaks "
            f"{finding.property_id}")


@singledispatch
def _mermaid_tracks(finding: Finding, events: Sequence[Event]) -> list:
    """``[(label, steps)]``: the consumers whose state changes the diagram notes, each with its
    :func:`_timeline` over the trace."""
    raise TypeError(f"not a finding: {type(finding).__name__}")


@_mermaid_tracks.register(ClassedFinding)
def _(finding: ClassedFinding, events: Sequence[Event]) -> list:
    return [(c.label, _timeline(events, c.reading)) for c in finding.classes]


@_mermaid_tracks.register(PropertyFinding)
def _(finding: PropertyFinding, events: Sequence[Event]) -> list:
    consumer, _ = _consumer_of(finding)
    return [(None, _timeline(events, parse_reading_spec(finding.reading), consumer))]


@singledispatch
def _mermaid_note(finding: Finding, index: int, labels: Sequence, changes: Sequence[str]
                  ) -> Optional[str]:
    """The note after event ``index`` (Mermaid text), or None for no note: for a finding with
    verdict classes, where the classes part (and at the event the peer parts from every
    reading), each group of classes doing the same thing a line; for a property finding, what
    the event did, and at ``atEvent`` the property broken."""
    raise TypeError(f"not a finding: {type(finding).__name__}")


@_mermaid_note.register(ClassedFinding)
def _(finding: ClassedFinding, index: int, labels: Sequence, changes: Sequence[str]
      ) -> Optional[str]:
    if len(set(changes)) <= 1 and index != finding.get("divergesAt", -1):
        return None
    groups: dict[str, list[str]] = {}
    for label, change in zip(labels, changes):
        groups.setdefault(change, []).append(label)
    return "<br/>".join(_mermaid_text(f"{' / '.join(names)}: {change}")
                        for change, names in groups.items())


@_mermaid_note.register(PropertyFinding)
def _(finding: PropertyFinding, index: int, labels: Sequence, changes: Sequence[str]
      ) -> Optional[str]:
    note = changes[0]
    if index == finding.at_event:
        note += f" -- breaks {finding.property_id}"
    return _mermaid_text(note)


@singledispatch
def _mermaid_tail(finding: Finding) -> list[str]:
    """Lines after the last event: a peer divergence's verdict of the peer."""
    return []


@_mermaid_tail.register(PeerDivergenceFinding)
def _(finding: PeerDivergenceFinding) -> list[str]:
    return [f"    Note over Consumer: {_mermaid_text(_peer_summary(finding))}"]


def _peer_summary(finding: PeerDivergenceFinding) -> str:
    """One line on the peer's verdict: the messages it ended with and whether it failed."""
    v = finding.peer_verdict
    held = " ".join(f"{m.get('id')}:{m.get('role')}" for m in v.get("messages") or []
                    if isinstance(m, dict))
    fatal = v.get("fatal")
    at = f" at event {fatal['atEvent']}" if isinstance(fatal, dict) and \
        isinstance(fatal.get("atEvent"), int) else ""
    diverges = finding.get("divergesAt")
    where = f" (parts from every reading at event {diverges})" if isinstance(diverges, int) \
        else ""
    return (f"peer {finding.peer}{where}: holds {held or 'no messages'}; "
            + (f"failed the run{at}" if fatal is not None and fatal is not False
               else "did not fail the run"))


# --- pytest -------------------------------------------------------------------------------------

def _py_json(value: Any) -> str:
    """A Python expression rebuilding ``value`` exactly: ``json.loads`` of its (ASCII) JSON text,
    as a raw triple-quoted string when the text allows it, else as a plain string literal."""
    text = json.dumps(value, indent=2, ensure_ascii=True)
    if "'''" in text or text.endswith("\\"):
        return f"json.loads({text!r})"
    return "json.loads(r'''\n" + text + "''')"


_HEADER = '''Regression test generated by ``activity-check export --format pytest`` from finding {id}.

{summary}

Self-contained: the witness trace is embedded as AG-UI wire JSON. Run with the activity-check
project's pytest (the ``model`` and ``properties`` packages must be importable).
'''
"""The generated module's docstring (``{id}``, ``{summary}``: the finding's own text)."""


def _py_docstring(text: str) -> str:
    """A triple-quoted Python string literal whose value is exactly ``text``, readable as a
    docstring: newlines kept, backslashes escaped, a double quote escaped where another follows
    it or the text ends (so no ``\"\"\"`` can end it early), and every character that is not
    printable (NUL, ESC, the bidirectional overrides, the line separator...) written as its
    escape (``\\x00``)."""
    out = []
    for i, ch in enumerate(text):
        if ch == "\n":
            out.append(ch)
        elif ch == "\\" or (ch == '"' and text[i + 1:i + 2] in ('"', "")):
            out.append("\\" + ch)
        elif ch.isprintable():
            out.append(ch)
        else:
            out.append(ch.encode("unicode_escape").decode("ascii"))
    return '"""' + "".join(out) + '"""'


def to_pytest(finding: FindingLike, reading: Union[None, str, Reading] = None) -> str:
    """A self-contained pytest module that replays the finding.

    With ``reading`` (a :class:`Reading` or its text, e.g. a proposal's ``Q2=parent,Q8=keep``)
    an ambiguity or peer-divergence module checks that reading's verdict alone (the one class
    it falls in, computed by :func:`model.verdict.evaluate`: what a consumer implementing the
    reading must give), and a property module re-runs the properties under that reading.

    * ambiguity or peer-divergence finding: one test parametrized over the model's verdict
      classes (a peer divergence also embeds the peer's verdict as ``PEER_VERDICT``, and adds
      ``test_peer_agrees_with_some_reading``, which replays the trace on the consumer that
      pytest's ``--activity-peer`` option names through the plugin's ``activity_peer`` fixture,
      skipped without the option, and fails while that consumer still diverges). For each
      class and each
      of its ``readings`` (completed with draft for the knobs it leaves open; ``"(any
      reading)"`` is draft itself; the draft class is also checked under :data:`DRAFT`), it asserts
      that ``model.verdict.evaluate(parse_events(TRACE), parse_reading(reading))`` gives the
      class's ``messages``, ``warnings`` (``code``, ``messageId``, ``atEvent``), ``fatal``
      (``code``, ``atEvent``) and ``runInput``. Values are compared as canonical JSON text,
      so ``1`` and ``true`` differ. Clause ids and free-text details are not compared.
    * property finding: ``test_reference_keeps_properties`` re-runs
      :func:`properties.search.machines.check_trace_properties` on the trace with the *reference*
      consumer under the finding's reading and asserts no property fails; when the finding's
      consumer is a zoo mutant, ``test_mutant_still_breaks_property`` asserts the mutant still
      breaks the same property at the same event (the finding replays). For a finding against
      the reference consumer itself the first test fails until the model is fixed, as a
      regression test should.

    Everything the finding holds is data in the module: its id, readings and names as
    ``repr()`` literals, its trace and verdicts as JSON text read back by ``json.loads``, its
    prose in a docstring that cannot be ended early (:func:`_py_docstring`). The module is
    parsed before it is returned, and its docstring and ``FINDING_ID`` read back from the syntax
    tree must be the finding's own (:func:`_check_module`).

    Save it under a ``test_*.py`` name. Returns the module text.

    Raises:
        ValueError: the module would not parse, or would not say what the finding says (then
            nothing is returned to write).
    """
    finding = _as_finding(finding)
    if isinstance(reading, str):
        reading = parse_reading_spec(reading)
    summary, body = _pytest_parts(finding, reading)
    if reading is not None:
        summary += f"\nPinned to the reading {reading.name or 'draft'}."
    docstring = _HEADER.format(id=finding.id, summary=summary)
    text = _py_docstring(docstring) + "\nimport json\n" + body
    _check_module(text, docstring, finding.id)
    return text


def _check_module(text: str, docstring: str, finding_id: str) -> None:
    """Refuse (ValueError) a generated module that does not parse, whose docstring is not
    ``docstring``, whose ``FINDING_ID`` is not ``finding_id``, or that holds a top-level
    statement other than the docstring, imports, assignments and function definitions (what a
    string breaking out of its literal would add)."""
    import ast
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError) as exc:
        raise ValueError(f"the generated pytest file does not parse ({exc}); not written") \
            from None
    ids = [ast.literal_eval(node.value) for node in tree.body if isinstance(node, ast.Assign)
           and [getattr(t, "id", None) for t in node.targets] == ["FINDING_ID"]]
    stray = [type(node).__name__ for node in tree.body[1:] if not isinstance(
        node, (ast.Import, ast.ImportFrom, ast.Assign, ast.FunctionDef))]
    if ast.get_docstring(tree, clean=False) != docstring or ids != [finding_id] or stray:
        raise ValueError("the generated pytest file would not say what the finding says "
                         f"(docstring, FINDING_ID or stray statements: {stray}); not written")


@singledispatch
def _pytest_parts(finding: Finding, reading: Optional[Reading] = None) -> tuple[str, str]:
    """``(summary, body)`` of the pytest module of :func:`to_pytest`: the docstring's summary
    and the code after the header (``reading``: the one reading checked, None for all)."""
    raise TypeError(f"not a finding: {type(finding).__name__}")


@_pytest_parts.register(AmbiguityFinding)
def _(finding: AmbiguityFinding, reading: Optional[Reading] = None) -> tuple[str, str]:
    summary = (f"Knob {finding.get('knob')}: {finding.get('question', '')}\n"
               f"The trace has {len(finding.classes)} verdict classes; each must "
               "keep its verdict." if reading is None else
               f"Knob {finding.get('knob')}: {finding.get('question', '')}\n"
               "The verdict of the pinned reading must stand.")
    return summary, _pytest_classes_body(finding, "", reading)


@_pytest_parts.register(PeerDivergenceFinding)
def _(finding: PeerDivergenceFinding, reading: Optional[Reading] = None) -> tuple[str, str]:
    summary = (f"Peer divergence: {_peer_summary(finding)}.\nNo reading of the model "
               f"gives that; the model's {len(finding.classes)} verdict class(es) "
               "below are what a consumer under each reading must give, and this file "
               "checks that the model keeps them. The peer's own verdict is kept as "
               "PEER_VERDICT, for reference.")
    body = _pytest_classes_body(finding, f"PEER_VERDICT = {_py_json(finding.peer_verdict)}\n",
                                reading)
    body += f'''

INITIAL_STATE = {_py_json(finding.initial_state)}


def test_peer_agrees_with_some_reading(activity_peer):
    """The trace on the consumer that --activity-peer names (skipped without it): fails while
    that consumer still gives a verdict no reading of the draft gives, passes once it agrees
    with some reading. Needs activity-check's pytest plugin (installed with it)."""
    from counterexamples.peers.traces import PeerTrace
    activity_peer.check(PeerTrace.of(FINDING_ID, TRACE, INITIAL_STATE))
'''
    return summary, body


def _pytest_classes_body(finding: ClassedFinding, peer_line: str,
                         reading: Optional[Reading] = None) -> str:
    """The test of every verdict class of the model (``peer_line``: more module constants), or
    with ``reading`` of that reading's verdict alone."""
    fid = finding.id
    classes = []
    entries = [(list(c.readings), c.includes_draft, c.verdict) for c in finding.classes]
    if reading is not None:
        from model.verdict import evaluate
        from model.wire import parse_events
        verdict = evaluate(parse_events(list(finding.wire)), reading).to_json()
        entries = [([reading.name or ANY_READING], reading == DRAFT, verdict)]
    for readings, includes_draft, v in entries:
        classes.append({
            "readings": readings, "includesDraft": includes_draft,
            "messages": v["messages"],
            "warnings": [{"code": w["code"], "messageId": w.get("messageId"),
                          "atEvent": w["atEvent"]} for w in v["warnings"]],
            "fatal": None if not v.get("fatal") else
            {"code": v["fatal"]["code"], "atEvent": v["fatal"]["atEvent"]},
            "runInput": v["runInput"]})
    ids = [f"class{i}" + ("-draft" if c["includesDraft"] else "")
           for i, c in enumerate(classes)]
    return f'''
import pytest

from model.readings import DRAFT, parse_reading
from model.verdict import evaluate
from model.wire import parse_events

FINDING_ID = {fid!r}
TRACE = {_py_json(list(finding.wire))}
CLASSES = {_py_json(classes)}
{peer_line}

def _canon(value):
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def _readings(cls):
    out = [DRAFT] if cls["includesDraft"] else []
    for spec in cls["readings"]:
        out.append(DRAFT if spec == "{ANY_READING}" else parse_reading(spec))
    return out


@pytest.mark.parametrize("cls", CLASSES, ids={ids!r})
def test_verdict_class(cls):
    events = parse_events(TRACE)
    for reading in _readings(cls):
        got = evaluate(events, reading).to_json()
        where = f"{{FINDING_ID}} under {{reading.name or 'draft'}}"
        assert _canon(got["messages"]) == _canon(cls["messages"]), where
        warnings = [{{"code": w["code"], "messageId": w["messageId"], "atEvent": w["atEvent"]}}
                    for w in got["warnings"]]
        assert _canon(warnings) == _canon(cls["warnings"]), where
        fatal = None if got["fatal"] is None else {{"code": got["fatal"]["code"],
                                                   "atEvent": got["fatal"]["atEvent"]}}
        assert _canon(fatal) == _canon(cls["fatal"]), where
        assert _canon(got["runInput"]) == _canon(cls["runInput"]), where
'''


@_pytest_parts.register(PropertyFinding)
def _(finding: PropertyFinding, reading: Optional[Reading] = None) -> tuple[str, str]:
    fid = finding.id
    consumer, _ = _consumer_of(finding)
    mutant = consumer.name == finding.consumer and consumer.name != "reference"
    summary = (f"Property {finding.property_id}: {finding.statement}\n"
               f"Broken by consumer {finding.consumer} under reading "
               f"{finding.reading} at event {finding.at_event}; the reference model "
               "must keep it.")
    body = f'''
from model.readings import DRAFT, parse_reading
from model.wire import parse_events
from model.consumers import REFERENCE
from properties.search.machines import check_trace_properties
from properties.zoo import MUTANT_BY_NAME

FINDING_ID = {fid!r}
PROPERTY = {finding.property_id!r}
CONSUMER = {finding.consumer!r}
READING = {(finding.reading if reading is None else reading.name or ANY_READING)!r}
AT_EVENT = {int(finding.at_event)!r}
TRACE = {_py_json(list(finding.wire))}


def _reading():
    return DRAFT if READING == "{ANY_READING}" else parse_reading(READING)


def test_reference_keeps_properties():
    violation = check_trace_properties(parse_events(TRACE), REFERENCE, _reading())
    assert violation is None, (
        f"{{FINDING_ID}}: the reference model breaks {{violation.property.id}} at event "
        f"{{violation.index}}: {{violation.witness}}")
'''
    if mutant:
        body += '''

def test_mutant_still_breaks_property():
    violation = check_trace_properties(parse_events(TRACE), MUTANT_BY_NAME[CONSUMER], _reading())
    assert violation is not None, f"{FINDING_ID}: {CONSUMER} no longer breaks any property"
    assert (violation.property.id, violation.index) == (PROPERTY, AT_EVENT)
'''
    return summary, body


# --- dispatch -----------------------------------------------------------------------------------

def open_finding(path: str) -> Finding:
    """The finding in file ``path``, for ``export``: :func:`load_finding`, except that a file of
    JSON lines (a finding's ``<id>.jsonl`` trace, or any trace) is refused saying what is
    expected instead of the decoder's ``Extra data``.

    Raises:
        OSError: the file cannot be read. ValueError: as :func:`load_finding`; for JSON lines
            ``"t.jsonl: expected a finding file, one JSON object (a run's
            findings/<id>.json); this is JSON lines, a trace (replay and lint read those)"``,
            and the finding file beside it when there is one (``<id>.json`` for
            ``<id>.jsonl``).
    """
    from model.wire import TraceFormatError
    try:
        return load_finding(path)
    except TraceFormatError as exc:
        if exc.reason != "not valid JSON: Extra data" or not _json_lines(path):
            raise
    beside = path[:-1] if path.endswith(".jsonl") else None
    hint = f"; the finding beside it is {beside}" \
        if beside is not None and os.path.isfile(beside) else ""
    raise ValueError(f"{path}: expected a finding file, one JSON object (a run's "
                     "findings/<id>.json); this is JSON lines, a trace (replay and lint read "
                     f"those){hint}") from None


def _json_lines(path: str) -> bool:
    """Whether every non-blank line of ``path`` is one JSON object (more than one line)."""
    from model.wire import loads_json, read_text
    try:
        lines = [line for line in read_text(path).splitlines() if line.strip()]
        return len(lines) > 1 and all(isinstance(loads_json(line), dict) for line in lines)
    except ValueError:  # TraceFormatError (unreadable, too large), JSONDecodeError
        return False


def export(finding: FindingLike, fmt: str, reading: Union[None, str, Reading] = None) -> str:
    """The finding in format ``fmt`` (one of :data:`FORMATS`) as text, newline-terminated; ITF is
    indented JSON. ``reading`` applies to ``itf`` only (see :func:`to_itf`). ``finding``: a
    finding or its JSON document (validated: ValueError naming what is wrong).

    Raises:
        ValueError: an unknown format, or ``reading`` given for a format other than ``itf``;
            a verdict the finding records without the members every exporter reads
            (:func:`_check_verdicts`); and whatever the chosen exporter raises (ReadingError,
            TraceFormatError: both ValueErrors; a pytest module that would not parse).
    """
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; formats: {', '.join(FORMATS)}")
    if reading is not None and fmt not in ("itf", "pytest", "ag-ui-fixture"):
        raise ValueError("a reading applies to the itf, pytest and ag-ui-fixture formats only")
    finding = _as_finding(finding)
    _check_verdicts(finding)
    if fmt == "jsonl":
        return to_jsonl(finding)
    if fmt == "json":
        return to_json(finding)
    if fmt == "itf":
        return json.dumps(to_itf(finding, reading), indent=2, ensure_ascii=False) + "\n"
    if fmt == "mermaid":
        return to_mermaid(finding)
    if fmt == "ag-ui-fixture":
        from counterexamples.report.fixture import dumps_fixture
        return dumps_fixture(to_ag_ui_fixture(finding, reading))
    return to_pytest(finding, reading)


def to_ag_ui_fixture(finding: FindingLike, reading: Union[None, str, Reading] = None) -> dict:
    """The finding's witness as an AG-UI conformance fixture (docs/conformance.md): named after
    the finding's id (lower case), ``specPage`` the page of its first clause, ``expect`` the
    model's verdict under ``reading`` (default: the reading the finding's ITF export uses, the
    draft's class or the finding's own), ``kill`` verified on the zoo
    (:func:`counterexamples.conformance.generate.trace_fixture`)."""
    from counterexamples.conformance.generate import trace_fixture
    from counterexamples.report.fixture import spec_page_of
    from model.clauses import UnknownClauseError, get
    finding = _as_finding(finding)
    if isinstance(reading, str):
        reading = parse_reading_spec(reading)
    reading = reading or _default_reading(finding)
    clauses = [c for c in finding.clauses if isinstance(c, str)]
    page = "/spec/draft"
    try:
        page = spec_page_of(get(clauses[0]).page) if clauses else page
    except (UnknownClauseError, KeyError):
        pass
    about = f" on {', '.join(clauses[:3])}" if clauses else ""
    name = "".join(c if c.isalnum() else "-" for c in finding.id.lower()).strip("-")
    state = getattr(finding, "initial_state", None)
    return trace_fixture(name, list(finding.wire), reading, page,
                         f"activity-check {finding.kind} finding {finding.id}{about}",
                         clauses[0] if clauses else "", _reading_name(reading), state)


_VERDICT_MEMBERS = (("messages", list), ("warnings", list), ("runInput", list))


def _check_verdicts(finding: Finding) -> None:
    """Refuse (ValueError) a finding with verdict classes (``verdicts``) one of whose verdicts
    lacks what a verdict as :meth:`model.verdict.Verdict.to_json` writes and the exporters read:
    ``messages``, ``warnings`` and ``runInput`` (arrays of objects) and ``fatal`` (null or an
    object with ``code`` and ``atEvent``). The loader checks only what every use needs; a file
    written by hand or by another tool may leave these out."""
    if not isinstance(finding, ClassedFinding):
        return
    for index, entry in enumerate(finding["verdicts"]):
        verdict = entry["verdict"]
        where = f"verdicts[{index}].verdict"
        for name, kind in _VERDICT_MEMBERS:
            value = verdict.get(name)
            if not isinstance(value, kind) or not all(isinstance(x, dict) for x in value):
                raise ValueError(f"not a finding as activity-check writes it: {where} needs "
                                 f"'{name}', an array of objects")
        fatal = verdict.get("fatal", ...)
        if fatal is not None and not (isinstance(fatal, dict) and "code" in fatal
                                      and "atEvent" in fatal):
            raise ValueError(f"not a finding as activity-check writes it: {where} needs "
                             "'fatal', null or an object with 'code' and 'atEvent'")
