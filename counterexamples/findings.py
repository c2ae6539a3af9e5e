"""Findings: the one family of things a run or a peer check reports, each a shrunk witness trace
with what it shows.

* :class:`AmbiguityFinding` (kind ``"ambiguity"``, id ``AMB-<knob>-<hash>``): a knob (open
  question) of the draft decides the trace; the verdict under each class of readings, the clauses
  at stake, a plain-words explanation and the step-by-step effects
  (:func:`ambiguity_finding` builds one from a search's witness);
* :class:`PropertyFinding` (``"property"``, ``PROP-<Pnn>-<hash>``): a consumer (the reference
  model or a mutant of :mod:`properties.zoo`) under a reading breaks a property of
  :mod:`properties.catalogue` at an event (:func:`property_finding`);
* :class:`PeerDivergenceFinding` (``"peer-divergence"``, ``PEER-<adapter>-<hash>``): a real
  implementation behind an adapter gives a verdict no reading gives (built by
  :mod:`counterexamples.peers`).

A finding *is* its wire document: the JSON object written to ``<id>.json`` (wire names, no
timings), read through typed attributes (snake_case) or as a read-only mapping of its members.
:meth:`Finding.to_json` gives the document, :func:`write_finding` writes any finding (``<id>.json``
and the trace as AG-UI JSON lines, ``<id>.jsonl``), and :func:`load_finding` /
:func:`finding_from_json` turn a document back into the typed finding, refusing what is not one.
The kind string stays in the document (it is the wire form); code dispatches on the type.

A finding's id is stable (:func:`finding_id`): a hash of its kind, its name (knob, property or
adapter) and the canonical wire text of its trace (and, for a peer divergence, the initial agent
state), so the same finding found twice, from any seed, gets the same id.
"""
from __future__ import annotations

import copy
import hashlib
import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Iterator, Optional, Sequence

from model.events import Event
from model.json_values import a_json_type
from model.readings import (ANY_READING, DRAFT, KNOB_BY_ID, Reading, ReadingError,
                            describe_assignment, parse_assignment, parse_reading)
from model.verdict import Verdict, context_of, evaluate, fold, partition, split_readings
from model.wire import (TraceFormatError, dump_jsonl, dump_wire_jsonl, loads_json, parse_events,
                        read_text)

if TYPE_CHECKING:  # the search and the shrinker are imported where a witness is shrunk
    from properties.search.ambiguity import Witness

__all__ = ["Finding", "ClassedFinding", "AmbiguityFinding", "PropertyFinding",
           "PeerDivergenceFinding", "VerdictClassEntry", "FINDING_TYPES",
           "finding_id", "is_finding_id", "FINDING_ID", "finding_from_json", "load_finding",
           "write_finding",
           "ambiguity_finding", "property_finding", "explain_difference", "explain_steps",
           "parse_reading_spec"]


# --- ids ----------------------------------------------------------------------------------------

def finding_id(prefix: str, tag: str, name: str, events: Sequence[Event],
               extra: Optional[str] = None, label: Optional[str] = None) -> str:
    """The stable id of a finding: ``<prefix>-<label>-<h>``, ``h`` the first 8 hex digits of the
    SHA-256 of ``"<tag>\\n<name>\\n<wire text>"`` (the trace as :func:`model.wire.dump_jsonl`
    writes it), followed by ``"\\n<extra>"`` when ``extra`` is given.

    Args:
        prefix: ``AMB``, ``PROP`` or ``PEER`` (:attr:`Finding.PREFIX`).
        tag: the kind as hashed (:attr:`Finding.ID_TAG`).
        name: the knob, property or adapter the finding is about.
        events: the witness trace (typed events).
        extra: more input to hash (a peer divergence's initial agent state as sorted JSON).
        label: the name shown in the id (default ``name``; a property's ``Pnn``).
    """
    text = f"{tag}\n{name}\n{dump_jsonl(events)}" + ("" if extra is None else f"\n{extra}")
    # surrogatepass: a lone surrogate of the trace (a \ud800 escape read) hashes too; any
    # other text gives the bytes it always gave, so no id changes
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return f"{prefix}-{label if label is not None else name}-{digest}"


FINDING_ID = re.compile(r"(?P<prefix>AMB|PROP|PEER)-(?P<label>[A-Za-z0-9]+(?:-[A-Za-z0-9]+)*)"
                        r"-(?P<hash>[0-9a-f]{8})")
"""The scheme of every finding id :func:`finding_id` gives: ``AMB-<knob>-<h>``,
``PROP-<Pnn>-<h>`` or ``PEER-<adapter>-<h>``, the label ASCII letters and digits in
dash-separated words, ``h`` 8 lowercase hex digits. An id of this scheme is a safe file name
(no dot, slash or other separator), which is what lets a finding's id name its files; what does
not match is not one of our findings (:func:`is_finding_id`)."""


def is_finding_id(text: Any, kind: Optional[str] = None) -> bool:
    """True when ``text`` is a finding id of :data:`FINDING_ID` as a whole (and, given a
    ``kind`` of :data:`FINDING_TYPES`, one with that kind's prefix; an ``AMB-`` id must name a
    knob of the model)."""
    if not isinstance(text, str):
        return False
    match = FINDING_ID.fullmatch(text)
    if match is None:
        return False
    if kind is not None and (kind not in FINDING_TYPES
                             or FINDING_TYPES[kind].PREFIX != match["prefix"]):
        return False
    return match["prefix"] != "AMB" or match["label"] in KNOB_BY_ID


# --- readings as findings write them ------------------------------------------------------------

def parse_reading_spec(spec: str) -> Reading:
    """The reading a finding's reading text names: a preset, ``"Q1=ignore,..."``
    (:func:`model.readings.parse_reading`), or ``"(any reading)"`` (:data:`ANY_READING`: a
    property that fails under every reading), which stands for draft.

    Raises:
        model.readings.ReadingError: a spec that does not parse."""
    return DRAFT if spec.strip() == ANY_READING else parse_reading(spec)


def _includes_draft(assignments: Sequence[dict]) -> bool:
    draft = DRAFT.as_dict()
    return any(all(draft[k] == v for k, v in a.items()) for a in assignments)


@dataclass(frozen=True)
class VerdictClassEntry:
    """One verdict class as a finding records it (a member of ``verdicts``).

    Attributes:
        readings: the class's partial assignments as text (``"Q1=merge,Q5=retype"``,
            :data:`ANY_READING`), in the order the model found them.
        includes_draft: whether :data:`~model.readings.DRAFT` is in the class.
        verdict: the class's verdict, :meth:`model.verdict.Verdict.to_json` (with details).
    """

    readings: tuple[str, ...]
    includes_draft: bool
    verdict: dict

    @classmethod
    def from_json(cls, doc: Mapping) -> "VerdictClassEntry":
        """From ``{"readings", "includesDraft", "verdict"}``."""
        return cls(tuple(doc["readings"]), bool(doc.get("includesDraft")), doc["verdict"])

    @classmethod
    def of(cls, assignments: Sequence[dict], verdict: Verdict) -> "VerdictClassEntry":
        """From a class of :func:`model.verdict.partition` (its assignments and verdict)."""
        return cls(tuple(describe_assignment(a) for a in assignments),
                   _includes_draft(assignments), verdict.to_json())

    def to_json(self) -> dict:
        """``{"readings", "includesDraft", "verdict"}``."""
        return {"readings": list(self.readings), "includesDraft": self.includes_draft,
                "verdict": self.verdict}

    @property
    def label(self) -> str:
        """``"draft"`` for the class holding draft, else its first readings entry."""
        return "draft" if self.includes_draft else self.readings[0]

    @property
    def reading(self) -> Reading:
        """The complete reading that stands for the class: :data:`~model.readings.DRAFT` for
        the class that includes draft, otherwise the first ``readings`` entry completed with
        draft's options for the knobs it leaves open (which stays in the class).

        Raises:
            model.readings.ReadingError: a readings entry that does not parse."""
        return DRAFT if self.includes_draft else parse_reading_spec(self.readings[0])


# --- the family ---------------------------------------------------------------------------------

class Finding(Mapping):
    """A finding: its wire document, with typed attributes. Abstract; the kinds are the
    subclasses of :data:`FINDING_TYPES`.

    Construct one from a document already known to be valid (a builder's); to read a document
    from outside use :func:`finding_from_json` or :func:`load_finding`, which validate it. The
    document is not to be changed after construction (:meth:`to_json` gives a copy).

    Class attributes:
        KIND: the ``kind`` member of the document; PREFIX: the id's prefix; ID_TAG: the kind as
        :func:`finding_id` hashes it.
    """

    KIND: ClassVar[str] = ""
    PREFIX: ClassVar[str] = ""
    ID_TAG: ClassVar[str] = ""

    __slots__ = ("_doc", "_events")

    def __init__(self, doc: dict) -> None:
        self._doc = doc
        self._events: Optional[tuple[Event, ...]] = None

    # the document, read-only
    def __getitem__(self, key: str) -> Any:
        return self._doc[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._doc)

    def __len__(self) -> int:
        return len(self._doc)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.id!r})"

    def to_json(self) -> dict:
        """The finding JSON, as ``<id>.json`` holds it (a copy)."""
        return copy.deepcopy(self._doc)

    def jsonl(self) -> str:
        """The witness as AG-UI JSON lines, as ``<id>.jsonl`` holds it: each recorded wire event
        (:attr:`wire`) as one compact line, exactly as the finding quotes it, so that a member
        the model strips (PRC-DROP-STRIP) and a number as the trace wrote it (``1.0``, which the
        model's canonical form writes ``1``) reach an SDK's test as they reached the peer; for
        a finding the model wrote (its events are typed events' wire form) the same text as
        :func:`model.wire.dump_jsonl` of :attr:`events`.

        Raises:
            model.wire.TraceFormatError: an element of ``events`` that is not an event object.
        """
        _ = self.events  # the same refusal as before for an element that is not an event object
        return dump_wire_jsonl(self.wire)

    @property
    def id(self) -> str:
        return self._doc["id"]

    @property
    def kind(self) -> str:
        return self._doc["kind"]

    @property
    def wire(self) -> tuple[dict, ...]:
        """The witness's wire events, as recorded."""
        return tuple(self._doc["events"])

    @property
    def events(self) -> tuple[Event, ...]:
        """The witness as typed events (:func:`model.wire.parse_events`; TraceFormatError, a
        ValueError, for an element that is not an event object)."""
        if self._events is None:
            self._events = parse_events(self._doc["events"])
        return self._events

    @property
    def clauses(self) -> tuple[str, ...]:
        return tuple(self._doc.get("clauses", ()))

    @property
    def explanation(self) -> str:
        return self._doc.get("explanation", "")

    @classmethod
    def id_for(cls, name: str, events: Sequence[Event], extra: Optional[str] = None) -> str:
        """This kind's :func:`finding_id` for ``name`` and ``events``."""
        return finding_id(cls.PREFIX, cls.ID_TAG, name, events, extra, cls.id_label(name))

    @classmethod
    def id_label(cls, name: str) -> str:
        """The name as the id shows it."""
        return name

    @classmethod
    def check_json(cls, name: str, doc: dict) -> None:
        """Refuse (ValueError, ``"<name>: not a finding: ..."``) a document of this kind that
        lacks a member this kind needs. The members every finding has are checked by
        :func:`finding_from_json` first."""
        _check_knob(name, doc, required=False)


def _not(name: str, what: str) -> ValueError:
    return ValueError(f"{name}: not a finding: {what}")


def _check_knob(name: str, doc: dict, required: bool) -> None:
    """Refuse a ``knob`` that is not a knob id of the model (and a missing one when
    ``required``)."""
    knob = doc.get("knob")
    if knob is None and not required:
        return
    if not isinstance(knob, str) or knob not in KNOB_BY_ID:
        raise _not(name, f"'knob' is {json.dumps(knob)}, not a knob of the model (known: "
                         f"{', '.join(KNOB_BY_ID)})")


class ClassedFinding(Finding):
    """A finding that records the model's verdict classes on its trace (``verdicts``): an
    ambiguity or a peer divergence."""

    __slots__ = ()

    @property
    def classes(self) -> tuple[VerdictClassEntry, ...]:
        """Every verdict class of the model on the trace, draft's first."""
        return tuple(VerdictClassEntry.from_json(c) for c in self._doc["verdicts"])

    @classmethod
    def check_json(cls, name: str, doc: dict) -> None:
        verdicts = doc.get("verdicts")
        if not isinstance(verdicts, list) or not verdicts or not all(
                isinstance(v, dict) and isinstance(v.get("readings"), list) and v["readings"]
                and isinstance(v.get("verdict"), dict) for v in verdicts):
            raise _not(name, f"an {doc['kind']} finding needs 'verdicts', a non-empty array of "
                             "{readings, includesDraft, verdict}")
        super().check_json(name, doc)


class AmbiguityFinding(ClassedFinding):
    """A knob of the draft that decides a trace.

    Document members: ``id``, ``kind`` (``"ambiguity"``), ``knob``, ``question``, ``clauses``
    (the knob's and those cited by the differing verdicts), ``explanation``, ``length``,
    ``events``, ``pair`` (the two readings, as text, that differ only in the knob), ``context``
    (the other knobs, away from draft, the split needs; ``"draft"`` for none), ``verdicts`` and
    ``steps`` (:func:`explain_steps`).
    """

    KIND = "ambiguity"
    PREFIX = "AMB"
    ID_TAG = "ambiguity"
    __slots__ = ()

    @property
    def knob(self) -> str:
        return self._doc["knob"]

    @property
    def question(self) -> str:
        return self._doc.get("question", "")

    @property
    def pair(self) -> tuple[dict, dict]:
        """The two partial assignments (``{knob id: option}``) that differ only in the knob."""
        a, b = (parse_assignment(side) for side in self._doc["pair"])
        return a, b

    @property
    def context(self) -> dict:
        """Other knobs, away from draft, that the split needs (see
        :func:`model.verdict.context_of`)."""
        return context_of(self.pair, self.knob)

    @property
    def steps(self) -> list:
        return self._doc.get("steps", [])

    @classmethod
    def check_json(cls, name: str, doc: dict) -> None:
        """Besides the verdicts: ``knob`` must be a knob id of the model and the one knob in
        which the two readings of ``pair`` differ."""
        super().check_json(name, doc)
        _check_knob(name, doc, required=True)
        knob, pair = doc["knob"], doc.get("pair")
        if not (isinstance(pair, list) and len(pair) == 2 and all(isinstance(x, str)
                                                                  for x in pair)):
            raise _not(name, "an ambiguity finding needs 'pair', the two readings (strings) "
                             "that differ in its knob")
        attr = KNOB_BY_ID[knob].attr
        try:
            options = [getattr(parse_reading(side), attr) for side in pair]
        except ReadingError as exc:
            raise _not(name, f"'pair' holds a reading that does not parse ({exc})") from None
        if options[0] == options[1]:
            raise _not(name, f"'knob' is {json.dumps(knob)}, but the readings of 'pair' "
                             f"({pair[0]}; {pair[1]}) agree on it")

    @classmethod
    def of(cls, knob: str, events: Sequence[Event], classes: Sequence[VerdictClassEntry],
           pair: tuple[dict, dict], clauses: Sequence[str], explanation: str,
           closing: int = 0) -> "AmbiguityFinding":
        """The finding for a trace ``knob`` decides, with the model's verdict ``classes`` on it
        (draft's first) and the ``pair`` of assignments that differ only in ``knob``;
        ``closing``: how many of the last events were appended to end what the shrunk witness
        left open (:func:`model.producer.closing_events`), so that ``length - closing`` is the
        shrunk witness's length."""
        events = tuple(events)
        context = context_of(pair, knob)
        doc = {
            "id": cls.id_for(knob, events),
            "kind": cls.KIND,
            "knob": knob,
            "question": KNOB_BY_ID[knob].question,
            "clauses": list(clauses),
            "explanation": explanation,
            "length": len(events),
            "closing": closing,
            "events": [e.to_wire() for e in events],
            "pair": [describe_assignment(a) for a in pair],
            "context": describe_assignment(context) if context else "draft",
            "verdicts": [c.to_json() for c in classes],
            "steps": explain_steps(events, classes),
        }
        finding = cls(doc)
        finding._events = events
        return finding


class PropertyFinding(Finding):
    """A property of :mod:`properties.catalogue` broken by a consumer under a reading.

    Document members: ``id``, ``kind`` (``"property"``), ``property``, ``statement``, ``clauses``
    (the property's), ``consumer`` (``reference`` or a zoo mutant's name), ``reading``,
    ``atEvent`` (the event at which it breaks), ``explanation`` (the witness text), ``length``,
    ``closing`` (how many of the last events end what the trace left open; 0 in documents
    written before issue 39), ``closingNote`` (only when the trace is left unclosed because
    closing would change the verdict: why), ``events`` (the trace up to ``atEvent``, then its
    ``closing`` events: :func:`property_finding`).
    """

    KIND = "property"
    PREFIX = "PROP"
    ID_TAG = "property"
    __slots__ = ()

    @property
    def property_id(self) -> str:
        """The id of the property broken (``P01-unique-ids``)."""
        return self._doc["property"]

    @property
    def statement(self) -> str:
        return self._doc.get("statement", "")

    @property
    def consumer(self) -> str:
        return self._doc["consumer"]

    @property
    def reading(self) -> str:
        """The reading as text (a preset, ``"Q1=ignore,..."`` or :data:`ANY_READING`)."""
        return self._doc["reading"]

    @property
    def at_event(self) -> int:
        return self._doc["atEvent"]

    @classmethod
    def id_label(cls, name: str) -> str:
        """A property id's number: ``P01`` for ``P01-unique-ids``."""
        return name.split("-")[0]

    @classmethod
    def check_json(cls, name: str, doc: dict) -> None:
        """``property``, ``consumer`` and ``reading`` (strings) and ``atEvent`` (an index)."""
        for key in ("property", "consumer", "reading"):
            if not isinstance(doc.get(key), str):
                raise _not(name, f"a property finding needs '{key}' (a string)")
        if not isinstance(doc.get("atEvent"), int) or isinstance(doc.get("atEvent"), bool):
            raise _not(name, "a property finding needs 'atEvent' (an event index)")
        super().check_json(name, doc)


class PeerDivergenceFinding(ClassedFinding):
    """A real implementation's verdict that no reading of the model gives.

    Document members (see :func:`counterexamples.peers.divergence.divergence_finding`): ``id``, ``kind``
    (``"peer-divergence"``), ``adapter``, ``peer``, ``source``, ``clauses``, ``relatedClauses``,
    ``branch``, ``divergesAt``, ``event``, ``nearest``, ``aspects``, ``compared``,
    ``conformant``, ``producerViolations``, ``explanation``, ``length``, ``shrunk``, ``events``,
    ``initialState`` (when given), ``peerVerdict`` and ``verdicts``. Its id hashes the initial
    agent state too (:meth:`id_for` with ``extra``).
    """

    KIND = "peer-divergence"
    PREFIX = "PEER"
    ID_TAG = "peer"
    __slots__ = ()

    @property
    def adapter(self) -> str:
        return self._doc.get("adapter", "")

    @property
    def peer(self) -> str:
        return self._doc["peer"]

    @property
    def source(self) -> str:
        return self._doc.get("source", "")

    @property
    def branch(self) -> str:
        """The nearest reading's step branch where the peer parts from every reading."""
        return self._doc.get("branch", "")

    @property
    def diverges_at(self) -> Optional[int]:
        at = self._doc.get("divergesAt")
        return at if isinstance(at, int) and not isinstance(at, bool) else None

    @property
    def nearest(self) -> Optional[str]:
        near = self._doc.get("nearest")
        return near if isinstance(near, str) else None

    @property
    def aspects(self) -> tuple[str, ...]:
        return tuple(self._doc.get("aspects", ()))

    @property
    def event_ignored(self) -> bool:
        """The peer ignored the event where it first parts from every reading (its answer the
        same without it): one root cause whatever the aspects
        (:func:`counterexamples.peers.divergence.divergence_signature`)."""
        return self._doc.get("eventIgnored") is True

    @property
    def related_clauses(self) -> tuple[str, ...]:
        return tuple(self._doc.get("relatedClauses", ()))

    @property
    def conformant(self) -> bool:
        return bool(self._doc.get("conformant"))

    @property
    def shrunk(self) -> bool:
        return bool(self._doc.get("shrunk"))

    @property
    def initial_state(self) -> Any:
        """The agent state before the first event (None: the default ``{}``)."""
        return self._doc.get("initialState")

    @property
    def peer_verdict(self) -> dict:
        return self._doc["peerVerdict"]

    @classmethod
    def check_json(cls, name: str, doc: dict) -> None:
        """``peer`` (a string) and ``peerVerdict`` (an object), then the verdicts."""
        if not (isinstance(doc.get("peerVerdict"), dict) and isinstance(doc.get("peer"), str)):
            raise _not(name, "a peer-divergence finding needs 'peer' (a string) and "
                             "'peerVerdict' (an object)")
        super().check_json(name, doc)


FINDING_TYPES: dict[str, type[Finding]] = {
    cls.KIND: cls for cls in (AmbiguityFinding, PropertyFinding, PeerDivergenceFinding)}
"""Every kind of finding, by its wire ``kind``."""


# --- reading and writing ------------------------------------------------------------------------

def finding_from_json(doc: Any, name: str = "finding") -> Finding:
    """The typed finding of a finding document, validated.

    Args:
        doc: the decoded JSON (a dict; kept, not copied).
        name: what to call it in error messages (the file name).

    Raises:
        ValueError: ``"<name>: not a finding: ..."`` naming what is missing or wrong: not an
            object; ``id``, ``kind`` or ``events`` missing; an empty or non-string ``id``; an
            unknown ``kind``; ``events`` not a non-empty array of objects; then the kind's own
            members (:meth:`Finding.check_json`): a peer divergence's ``peer`` and
            ``peerVerdict``, the ``verdicts`` of an ambiguity or peer divergence, a property
            finding's ``property``, ``consumer``, ``reading`` and ``atEvent``; a ``knob`` that
            is not a knob id of the model (:data:`~model.readings.KNOB_BY_ID`), or, in an
            ambiguity finding, missing or not the knob its ``pair`` differs in.
    """
    if isinstance(doc, Finding):
        return doc
    if not isinstance(doc, dict):
        raise _not(name, "expected a JSON object with 'id', 'kind' and 'events', got "
                         f"{type(doc).__name__ if doc is not None else 'null'}")
    missing = [k for k in ("id", "kind", "events") if k not in doc]
    if missing:
        raise _not(name, "missing " + ", ".join(f"'{k}'" for k in missing))
    if not isinstance(doc["id"], str) or not doc["id"]:
        raise _not(name, "'id' must be a non-empty string")
    cls = FINDING_TYPES.get(doc["kind"]) if isinstance(doc["kind"], str) else None
    if cls is None:
        raise _not(name, f"unknown kind {json.dumps(doc['kind'])} (known: "
                         f"{', '.join(FINDING_TYPES)})")
    events = doc["events"]
    if not isinstance(events, list) or not events:
        raise _not(name, "'events' must be a non-empty array of event objects")
    stray = next((i for i, e in enumerate(events) if not isinstance(e, dict)), None)
    if stray is not None:  # named as replay names it: the event index, then the fault
        raise _not(name, f"event {stray}: an event must be a JSON object, got "
                         f"{a_json_type(events[stray])}")
    cls.check_json(name, doc)
    if not is_finding_id(doc["id"], cls.KIND):
        raise _not(name, f"'id' is {json.dumps(doc['id'])[:120]}, not a finding id of its "
                         f"kind ({cls.PREFIX}-<{_LABEL_OF[cls.KIND]}>-<8 hex digits>, as "
                         "activity-check gives them)")
    return cls(doc)


_LABEL_OF = {"ambiguity": "knob", "property": "Pnn", "peer-divergence": "adapter"}


def load_finding(path: str, listed: bool = False) -> Finding:
    """Read a finding JSON file (``out/findings/<id>.json``, as ``activity-check run`` or
    ``peer`` writes it) into its typed finding (:func:`finding_from_json`); ``listed``: the
    name came from data (a run's ``summary.json``), so the file is read only when it is a
    regular file and not a link (:func:`model.wire.read_bytes`; bounded either way).

    Raises:
        ValueError: the file is not UTF-8 JSON, read as strictly as every file the tool
            reads (:func:`model.wire.loads_json`: no NaN, no number out of range, no member
            twice in one object, at most :data:`model.wire.MAX_DEPTH` levels), a
            :class:`model.wire.TraceFormatError` in the wording ``replay`` and ``lint`` use
            for the same file (``"x.jsonl:2:1: not valid JSON: Extra data"``,
            ``"f.json:3:3: not valid JSON: duplicate member "id" in $"``), or not a finding;
            the message names the file (as given) and what is missing or wrong, e.g.
            ``"t.json: not a finding: missing 'id', 'kind'"`` (see :func:`finding_from_json`
            for the members checked).
    """
    text = read_text(path, listed=listed)  # TraceFormatError: as replay and lint say it
    try:
        doc = loads_json(text)  # as strictly as every file the tool reads
    except json.JSONDecodeError as exc:  # as replay and lint say it: FILE:LINE:COLUMN: ...
        raise TraceFormatError(f"not valid JSON: {exc.msg}", file=path, line=exc.lineno,
                               column=exc.colno) from None
    except (ValueError, RecursionError) as exc:
        raise _not(path, f"not readable JSON ({exc})") from None
    return finding_from_json(doc, path)


def write_finding(finding: Finding, directory: str) -> tuple[str, str]:
    """Write ``<id>.json`` (:meth:`Finding.to_json`, indented, newline-terminated) and
    ``<id>.jsonl`` (:meth:`Finding.jsonl`, the witness as AG-UI JSON lines) into ``directory``
    (created if missing). Returns the two paths.

    Raises:
        ValueError: the id is not of :data:`FINDING_ID` (it names the files, so it must not
            name anything else); OSError: a file cannot be written.
    """
    if not is_finding_id(finding.id, finding.KIND or None):
        raise ValueError(f"{finding.id!r}: not a finding id; not written")
    os.makedirs(directory, exist_ok=True)
    base = os.path.join(directory, finding.id)
    # a lone surrogate is written as its JSON escape (backslashreplace), the value read back
    with open(base + ".json", "w", encoding="utf-8", errors="backslashreplace") as fh:
        json.dump(finding._doc, fh, indent=2, ensure_ascii=False)
        fh.write("\n")
    with open(base + ".jsonl", "w", encoding="utf-8", errors="backslashreplace") as fh:
        fh.write(finding.jsonl())
    return base + ".json", base + ".jsonl"


# --- explanations -------------------------------------------------------------------------------

def _step_effect(before, after, warnings, fatal) -> str:
    """Plain words for what one step did to the consumer."""
    if fatal is not None:
        return f"the run fails: {fatal.code} ({fatal.clause})"
    parts = []
    held_before = {m.id: m for m in before.messages}
    held_after = {m.id: m for m in after.messages}
    order_after = [m.id for m in after.messages]
    for m in after.messages:
        old = held_before.get(m.id)
        if old is None:
            parts.append(f"{m.id} ({m.role}) appears at position {order_after.index(m.id) + 1}")
        elif old != m:
            changed = [name for name, a, b in (
                ("content", old.content, m.content), ("type", old.activity_type, m.activity_type),
                ("metadata", old.metadata, m.metadata), ("owner", old.owner, m.owner),
                ("role", old.role, m.role)) if a != b]
            parts.append(f"{m.id}: " + ", ".join(
                f"{name} now {getattr(m, {'type': 'activity_type'}.get(name, name))}"
                for name in changed))
    parts.extend(f"{mid} dropped" for mid in held_before if mid not in held_after)
    if [i for i in order_after if i in held_before] != [m.id for m in before.messages
                                                         if m.id in held_after]:
        parts.append("order now " + ", ".join(order_after))
    if before.run != after.run:
        parts.append(f"run {after.run}")
    parts.extend(f"warning {w.code} ({w.clause})" for w in warnings)
    return "; ".join(parts) or "no change"


def explain_steps(events: Sequence[Event], classes: Sequence[VerdictClassEntry]) -> list[dict]:
    """What happened at each step, in plain words, under each verdict class (its readings as
    text), from the records of the trace fold (:func:`model.verdict.fold` under
    :attr:`VerdictClassEntry.reading`): ``[{"index", "event", "effect": {readings: text}}]``;
    classes that agree at a step are listed together. An event after the fold's last record
    (a fatal) is ``"stream already rejected"``."""
    per_class = [("; ".join(c.readings), fold(events, c.reading)) for c in classes]
    out = []
    for i, event in enumerate(events):
        effects: dict[str, list[str]] = {}
        for label, records in per_class:
            if i < len(records) and not records[i].before.halted:
                r = records[i]
                text = _step_effect(r.before, r.after, r.warnings, r.fatal)
            else:
                text = "stream already rejected"
            effects.setdefault(text, []).append(label)
        wire = event.to_wire()
        out.append({"index": i, "event": " ".join(str(wire.get(k)) for k in
                                                 ("type", "messageId") if k in wire),
                    "effect": {" | ".join(labels): text for text, labels in effects.items()}})
    return out


def explain_difference(events: Sequence[Event], a: dict, b: dict) -> str:
    """Plain words: what each of two readings makes of the trace, where they part, and in which
    context (the other knobs the pair fixes away from draft)."""
    knob = next(k for k in a if k in b and a[k] != b[k])
    ra, rb = split_readings((a, b), knob)
    va, vb = evaluate(events, ra), evaluate(events, rb)
    context = context_of((a, b), knob)
    where = ("with every other knob at its draft option" if not context else
             "with " + describe_assignment(context) + " and every other knob at draft "
             f"(with {knob}'s context at draft the two agree on this trace)")
    lines = [f"The draft leaves open: {KNOB_BY_ID[knob].question}",
             f"On this {len(events)}-event trace, {knob}={a[knob]} and {knob}={b[knob]} end "
             f"differently, {where}:"]
    for label, v in ((f"{knob}={a[knob]}", va), (f"{knob}={b[knob]}", vb)):
        lines.append(f"- under {label}: {_summarise(v)}")
    return "\n".join(lines)


def _summarise(v: Verdict) -> str:
    parts = []
    acts = [m for m in v.state.messages if m.is_activity]
    if acts:
        parts.append("activities " + "; ".join(
            f"{m.id} type {m.activity_type} content {m.content}"
            + (f" metadata {m.metadata}" if m.metadata else "")
            + (f" owner {m.owner}" if m.owner else "") for m in acts))
    else:
        parts.append("no activity message")
    order = [m.id for m in v.state.messages]
    if len(order) > 1:
        parts.append("order " + ", ".join(order))
    if v.warnings:
        parts.append("warnings " + ", ".join(f"{w.code}@{i}" for i, w in v.warnings))
    if v.fatal:
        parts.append(f"FATAL {v.fatal[1].code}@{v.fatal[0]} ({v.fatal[1].clause})")
    return "; ".join(parts)


# --- builders -----------------------------------------------------------------------------------

def ambiguity_finding(witness: Witness, shrink: bool = True) -> AmbiguityFinding:
    """Shrink a witness, rename canonically, re-verify it, and build the finding.

    Shrinking is :func:`counterexamples.shrink.minimise`: delta debugging to a 1-minimal trace
    and the member simplifications (optional members, payloads, patch operations, content and
    metadata members, owners, activity types) repeated to a fixpoint, each change kept only
    while the knob still splits the trace, the trace stays conformant, the split's context
    departs from draft in no more knobs than the witness's, and the knob's options, in the
    witness's context, give as many different verdicts as on the witness, both whole and as a
    peer that reports no warnings sees them (:func:`model.verdict.option_classes`).
    Names are then made canonical (:func:`counterexamples.shrink.canonical_names`). Shrinking
    never lengthens a trace, so a witness of the breadth-first search keeps its shortest length.
    Last, the events that end what the trace left open are appended
    (:func:`properties.questions.closed_witness`: RUN_FINISHED and the ends of open texts, tool
    calls, steps and invocations) where the split and the options' outcomes stay as they were,
    so that the witness is a complete stream ``lint`` calls conformant; the finding's
    ``closing`` counts them (``length - closing`` is the shrunk length).

    The clauses are the knob's own plus every clause cited by a warning or fatal that differs
    between the verdict classes.

    Raises:
        ValueError: when the witness's knob does not split its trace (an engine bug).
        AssertionError: when the shrunk trace is no longer a conformant witness (a shrinking
            bug; checked on every finding, so a bad trace is never exported).
    """
    from model.verdict import splits_of
    from properties.questions import closed_witness
    events = witness.events
    if shrink:
        events = _shrink_witness(witness)
    pair = splits_of(events).get(witness.knob)
    if pair is None:
        raise ValueError(f"{witness.knob} does not split the witness trace")
    shown = closed_witness(events, witness.knob, pair)  # a complete stream, the split kept
    closing = len(shown) - len(events)
    if closing:
        events = shown
        pair = splits_of(events)[witness.knob]
    classes = partition(events)
    clauses = list(KNOB_BY_ID[witness.knob].clauses)
    cited = set()
    for c in classes:
        cited.update(w.clause for _, w in c.verdict.warnings)
        if c.verdict.fatal:
            cited.add(c.verdict.fatal[1].clause)
    for c in sorted(cited):
        if c not in clauses:
            clauses.append(c)
    return AmbiguityFinding.of(witness.knob, events,
                               [VerdictClassEntry.of(c.assignments, c.verdict) for c in classes],
                               pair, clauses, explain_difference(events, *pair), closing)


def _shrink_witness(witness: Witness) -> tuple[Event, ...]:
    """The witness shrunk and renamed (see :func:`ambiguity_finding`)."""
    from counterexamples.shrink import canonical_names, minimise
    from model.verdict import option_classes, splits_knob
    events = witness.events
    context = len(context_of(witness.pair, witness.knob))
    # shrinking never merges options the witness tells apart (by the whole verdict, or by
    # what a peer that reports no warnings sees), so it never weakens the witness
    base = split_readings(witness.pair, witness.knob)[0]
    full, visible = option_classes(events, witness.knob, base)

    def holds(trace) -> bool:
        if not splits_knob(trace, witness.knob, max_context=context):
            return False
        f, v = option_classes(trace, witness.knob, base)
        return f >= full and v >= visible

    events = minimise(events, holds)
    renamed = canonical_names(events)
    if holds(renamed):
        events = renamed
    if not holds(events):
        raise AssertionError(f"shrinking lost the {witness.knob} split")
    return events


def property_finding(violation, events: Sequence[Event], consumer: str, reading: str
                     ) -> PropertyFinding:
    """The finding for a property violation found by a state machine or a trace check.

    The trace is kept up to ``violation.index`` (``atEvent``), then closed as the ambiguity
    findings are (:func:`model.producer.closing_events`: the ends of open texts, tool calls,
    steps and invocations, then RUN_FINISHED), so that the witness is a complete stream; the
    finding's ``closing`` counts the events appended (``length - closing`` is the trace up to
    the violation). The closing is kept only where it leaves the finding's verdict as it was:
    replayed whole, the same property breaks first at the same event, and the appended events
    break no producer clause (LIF-*, under draft) the trace did not already break. Otherwise,
    or when no run is open at the end (no RUN_STARTED, or the run already ended), the trace is
    left as it stopped and ``closingNote`` says why (issue 39).

    Args:
        violation: a :class:`properties.catalogue.PropertyViolation` (its ``property``,
            ``index`` and ``witness`` text).
        events: the trace it was found on; the finding keeps it up to ``violation.index``.
        consumer: the consumer's name (``reference`` or a zoo mutant's,
            :data:`properties.zoo.MUTANT_BY_NAME`; the model's reference consumer for any
            other name).
        reading: the reading, as text (:func:`parse_reading_spec`).
    """
    events = tuple(events[:violation.index + 1])
    prop = violation.property
    shown, note = _closed_property_trace(events, prop.id, violation.index, consumer, reading)
    doc = {"id": PropertyFinding.id_for(prop.id, shown), "kind": PropertyFinding.KIND,
           "property": prop.id, "statement": prop.statement, "clauses": list(prop.clauses),
           "consumer": consumer, "reading": reading, "atEvent": violation.index,
           "explanation": violation.witness, "length": len(shown),
           "closing": len(shown) - len(events),
           **({"closingNote": note} if note else {}),
           "events": [e.to_wire() for e in shown]}
    finding = PropertyFinding(doc)
    finding._events = shown
    return finding


def _closed_property_trace(events: tuple, property_id: str, index: int, consumer: str,
                           reading: str) -> tuple[tuple, Optional[str]]:
    """``(trace, note)``: ``events`` with its closing events when closing keeps the verdict
    (see :func:`property_finding`), note None; else ``events`` and why it is left open."""
    import model.consumers as consumers
    from model.producer import check_trace, closing_events
    from properties.search.machines import check_trace_properties
    from properties.zoo import MUTANT_BY_NAME
    ending = closing_events(events)
    if not ending:
        return events, None  # nothing open: already complete, or no run to close
    shown = events + ending
    impl = MUTANT_BY_NAME.get(consumer, consumers.REFERENCE)
    try:
        under = parse_reading_spec(reading)
    except ReadingError:
        under = DRAFT
    again = check_trace_properties(shown, impl, under)
    if again is None or again.property.id != property_id or again.index != index:
        return events, ("left unclosed: replayed with RUN_FINISHED and the ends of what is open "
                        "appended, the trace no longer breaks " + property_id + " first at "
                        f"event {index}")
    before = {v.clause for _, v in check_trace(events)}
    added = sorted({v.clause for _, v in check_trace(shown)} - before)
    if added:
        return events, ("left unclosed: the events that would end what is open break "
                        + ", ".join(added) + " on this trace")
    return shown, None
