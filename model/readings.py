"""Readings: one resolution of every open question of the draft that changes a consumer's verdict.

Each open question (the Q-ids of ``spec/notes.md`` part (b)) that a faithful implementer could
answer in more than one way is a :class:`Knob` with named options. A :class:`Reading` fixes every
knob. :data:`DRAFT` is the most literal reading of the text; every other reading differs from it
in at least one knob. Readings are named on the command line either by preset name (``draft``,
``lenient``, ``strict``) or as overrides of ``draft`` (``"Q1=ignore,Q7=fatal"``).

The consumer step reads knobs as attributes (``reading.q7``). :class:`PartialReading` fixes only
some knobs and raises :class:`KnobUnset` on the others; :mod:`model.verdict` uses it to run one
trace under *all* readings at once, forking only on the knobs a step actually consults.
"""
from __future__ import annotations

import itertools
import json
import os
from dataclasses import dataclass, fields, replace
from functools import lru_cache
from typing import Iterator, Mapping, Optional, Sequence

from model.text import quoted

__all__ = ["Knob", "KNOBS", "KNOB_BY_ID", "Reading", "DRAFT", "PRESETS", "PartialReading",
           "KnobUnset", "ReadingError", "parse_reading", "all_readings", "reading_count",
           "describe_assignment", "RecordingReading", "RECOMMENDATIONS", "RECOMMENDATIONS_FILE",
           "recommended_reading", "deviations_of", "deviation_note", "basis_of",
           "peer_options_document", "recorded_peer_options", "knob_of", "knob_named",
           "option_named"]


@lru_cache(maxsize=None)
def _attr_of(knob_id: str) -> str:
    return knob_id.lower().replace("-", "_")


@lru_cache(maxsize=None)
def _names_of(options: tuple[tuple[str, str], ...]) -> tuple[str, ...]:
    return tuple(name for name, _ in options)


@dataclass(frozen=True)
class Knob:
    """One open question as a choice.

    Attributes:
        id: the question id as the user types it (``"Q1"``, ``"Q4-opener"``, ``"X1"``).
        attr: the :class:`Reading` attribute (``"q1"``, ``"q4_opener"``).
        question: the question, in our words.
        options: ``(name, what the consumer does)`` pairs; the first is the ``draft`` option.
        clauses: clause ids of the statements the question sits between.
        deviations: ``(option, clause id, reason)`` for each option that is a *deviation*:
            modelled because implementations do it, against the text of the clause named;
            ``reason`` says in one line, in our words, which page and section rule it out.
            Every other option is *faithful* (a reading the pages allow; reviewed for every
            knob against the draft pages and the notes, issue 39). A peer that matches the
            model only through a deviation is not conformant (:func:`deviations_of`).
    """

    id: str
    question: str
    options: tuple[tuple[str, str], ...]
    clauses: tuple[str, ...]
    deviations: tuple[tuple[str, str, str], ...] = ()

    def deviation(self, option: str) -> Optional[str]:
        """The clause whose text ``option`` goes against, or None for a faithful option."""
        return next((clause for name, clause, _ in self.deviations if name == option), None)

    def deviation_reason(self, option: str) -> Optional[str]:
        """Why ``option`` is a deviation (page and section, in our words), or None for a
        faithful option."""
        return next((why for name, _, why in self.deviations if name == option), None)

    def mark(self, option: str) -> str:
        """``"deviation"`` or ``"faithful"`` (:attr:`deviations`)."""
        return "faithful" if self.deviation(option) is None else "deviation"

    @property
    def gloss(self) -> str:
        """The question itself, for a table cell: :attr:`question` up to its first question
        mark (the argument in parentheses after it left out), whole where it has none."""
        end = self.question.find("?")
        return self.question if end < 0 else self.question[:end + 1]

    @property
    def outside_draft(self) -> bool:
        """True for a question the model asks of its own, outside the draft's open questions
        (an ``X`` id, e.g. X1: its options rest on the model's assumptions, not on the
        pages)."""
        return not self.id.startswith("Q")

    @property
    def attr(self) -> str:
        return _attr_of(self.id)

    @property
    def option_names(self) -> tuple[str, ...]:
        return _names_of(self.options)

    @property
    def draft(self) -> str:
        return self.options[0][0]

    @property
    def peers(self) -> tuple[tuple[str, str], ...]:
        """``((peer name, option), ...)``: the option each peer of the conformance matrix was
        recorded to take, where observable, in the matrix's order (:func:`peer_options_document`,
        the one home of that data: ``model/data/peer_options.json``)."""
        return tuple((peer["name"], peer["knobs"][self.id]["option"])
                     for peer in peer_options_document()["peers"]
                     if "option" in peer["knobs"][self.id])

    def peer_groups(self) -> list[tuple[Optional[str], list[str]]]:
        """The peers grouped by the option they were recorded to take: ``[(option, [peer
        name, ...]), ...]`` in option order, then ``(None, [...])`` for those it is not
        observable for; empty groups left out, peers in the matrix's order."""
        groups: dict = {o: [] for o in self.option_names}
        groups[None] = []
        for peer in peer_options_document()["peers"]:
            groups[peer["knobs"][self.id].get("option")].append(peer["name"])
        return [(o, names) for o, names in groups.items() if names]

    @property
    def recommended(self) -> dict:
        """What this project recommends for the knob (:data:`RECOMMENDATIONS`): ``{"option",
        "argument" (our words), "cites" ([{"page", "section"}]), "important" (a starred
        question of the notes)}``."""
        return RECOMMENDATIONS["knobs"][self.id]


KNOBS: tuple[Knob, ...] = (
    Knob("Q1", "Does a replace:false snapshot that leaves an existing activity alone still merge "
               "its metadata?",
         (("merge", "merge the declined snapshot's metadata, as every event of the item merges"),
          ("ignore", "leave the message entirely as it stands, metadata included")),
         ("ACT-SNAP-REPLACE-FALSE", "MET-MERGE", "MET-ACTIVITY-TARGET")),
    Knob("Q2", "Does an untagged replace:false snapshot agree with a subagent owner?",
         (("continues", "an untagged continuation agrees with whatever the opener owns"),
          ("parent", "absent attribution means the parent, so it disagrees with a subagent owner")),
         ("ACT-ATTR-AGREE", "SUB-UNTAGGED-CONTINUES", "SUB-ABSENT-PARENT")),
    Knob("Q3", "What does a consumer do with a replace:false snapshot whose attribution disagrees "
               "with the owner?",
         (("keep", "owner stands, nothing else happens"),
          ("warn", "owner stands, and a warning is surfaced"),
          ("skip", "the event is dropped with a warning (its metadata does not merge)"),
          ("fatal", "the stream is rejected")),
         ("ACT-ATTR-AGREE", "ACT-ATTR-TOLERATE", "ACT-ATTR-KEEP")),
    Knob("Q4", "What does a consumer do with an ACTIVITY_DELTA whose subagentRunId disagrees with "
               "the activity's opener?",
         (("fatal", "reject the stream: a continuation's disagreeing tag"),
          ("skip", "reject the event: skip it with a warning, as for other skipped deltas"),
          ("accept", "a delta is no continuation: apply it and keep the owner")),
         ("SUB-REJECT-MISMATCH", "SUB-OWNER-AGREE", "ACT-DELTA-APPLY")),
    Knob("Q4-opener", "Which snapshot 'opened' an activity for the ownership check of later events?",
         (("current", "the snapshot that last minted the owner (a replacing snapshot re-mints)"),
          ("first", "the snapshot that created the activity")),
         ("SUB-OWNER-AGREE", "ACT-ATTR-REMINT")),
    Knob("Q5", "Does a delta whose patch fails still retype the activity?",
         (("skip", "warn and skip the whole delta: the type stays"),
          ("retype", "the patch fails but the delta's activityType still applies")),
         ("ACT-DELTA-RETYPE", "ACT-DELTA-PATCHFAIL", "ACT-TOLERATED")),
    Knob("Q6", "Does a delta whose patch fails still merge its metadata?",
         (("skip", "warn and skip the whole delta: no metadata merges"),
          ("merge", "metadata of every event of the item merges, failed patch or not")),
         ("MET-MERGE", "ACT-DELTA-PATCHFAIL", "ACT-TOLERATED")),
    Knob("Q6-ms", "Does a MESSAGES_SNAPSHOT that restates an activity keep its accumulated metadata?",
         (("replace", "the snapshot's copy replaces the held one wholesale, metadata included"),
          ("merge", "accumulated metadata survives; the snapshot's metadata merges over it")),
         ("STA-MS-IN-PLACE", "ACT-SNAP-KEEP-METADATA", "MET-MERGE")),
    Knob("Q7", "What does a consumer do with a delta whose result is not an object?",
         (("apply", "not detected: the content becomes the non-object value"),
          ("skip", "detected as a patch that does not apply: warn and keep the prior content"),
          ("fatal", "detected as a malformed value: fail the run")),
         ("ACT-DELTA-OBJECT", "ACT-DELTA-OBJECT-DETECT", "SCH-ACTIVITY-MESSAGE")),
    Knob("Q8", "Which held activity messages survive a MESSAGES_SNAPSHOT that omits them?",
         (("self-revoking", "all survive, unless the snapshot carries any activity: then none do"),
          ("keep", "activity messages always survive"),
          ("by-type", "only held activities of a type the snapshot carries are dropped")),
         ("STA-MS-DROP-EXCEPT", "STA-MS-SELF-REVOKE", "ACT-MSGSNAP"),
         deviations=(
             ("keep", "STA-MS-SELF-REVOKE",
              "state page, MESSAGES_SNAPSHOT: a snapshot carrying any activity declares the "
              "complete activity set, so held activities it omits go"),
             ("by-type", "STA-MS-SELF-REVOKE",
              "state page, MESSAGES_SNAPSHOT: the exemption lapses per role, not per activity "
              "type; every omitted held activity goes"))),
    Knob("Q9", "What does ACTIVITY_SNAPSHOT do to an id held by a non-activity message?",
         (("skip", "neither create nor replace applies: skip with a warning"),
          ("replace", "the message becomes an activity, in place"),
          ("fatal", "reject the stream (the id is not unique across roles)")),
         ("ACT-SNAP-CREATE", "ACT-SNAP-REPLACE", "EVM-ID-UNIQUE")),
    Knob("Q10", "Does ACTIVITY_SNAPSHOT create a message for an id the consumer held once but no "
                "longer holds?",
         (("seen", "no: the id has been seen; skip with a warning"),
          ("held", "yes: only the ids currently held count")),
         ("ACT-SNAP-CREATE", "SNP-ADOPT-NEXT")),
    Knob("Q11", "Where does an activity stand after a replacing snapshot?",
         (("in-place", "it keeps its position"),
          ("move", "it moves to the point of arrival")),
         ("ACT-SNAP-REPLACE", "ACT-ATTR-REMINT", "ACT-SNAP-CREATE")),
    Knob("Q12", "Who is the producer that must have created an activity with a snapshot before "
                "it sends a delta for it (ACT-DELTA-BASELINE)? A producer-side question, read by "
                "the producer monitor. (The activity page's 'a producer' is the party that sends "
                "the stream, IDX's producer role, and the rule exists so that the consumer holds "
                "a baseline, SNP-BASELINE: the pattern page says an activity has one after its "
                "first snapshot, whoever sent it. The subagents page has an untagged continuation "
                "continue whatever the opener owns, so a per-agent reading contradicts it, and "
                "the snapshot at the start of a continuing run is a SHOULD, so a per-run reading "
                "turns a SHOULD into a MUST. 'stream' is the draft option.)",
         (("stream", "any ACTIVITY_SNAPSHOT earlier on the stream is the baseline, whichever "
                     "agent sent it and in whichever run"),
          ("owner", "only the activity's owner (the attribution of its creating or last "
                    "replacing snapshot) created it: a delta from another agent, the parent's "
                    "untagged delta on a subagent's activity included, breaks the rule"),
          ("run", "only a snapshot of the delta's own run counts: a delta in a later run "
                  "against an activity no snapshot of this run has restated breaks the rule")),
         ("ACT-DELTA-BASELINE", "SNP-BASELINE", "SUB-UNTAGGED-CONTINUES", "SNP-SHOULD-SNAPSHOT")),
    Knob("Q13", "May a consumer fail the run on a well-formed activity patch that does not apply?",
         (("tolerate", "warn and keep the prior value"),
          ("fatal", "fail the run")),
         ("ACT-TOLERATED", "SNP-KEEP-PRIOR", "SNP-SURFACE-FAILURE")),
    Knob("Q14", "Does a replace:false snapshot resynchronise an activity whose last delta did "
                "not apply? (The pattern page lets a snapshot opt out of replacement through its "
                "family's field, naming replace:false as the one case, and calls a snapshot "
                "'applied or declined' the new baseline moment, so declining is foreseen; the "
                "activity page's replace:false leaves the message as it stands, with no "
                "exception for a diverged one. 'decline' is the draft option; 'adopt' reads the "
                "pattern's 'adopt the next snapshot regardless of what it skipped' as overriding "
                "replace:false.)",
         (("decline", "the replace:false snapshot is declined as always: content and type "
                      "stand, stale; it is the new baseline moment but repairs nothing"),
          ("adopt", "after a skipped delta the next snapshot is adopted whatever its replace: "
                    "content and type are taken, the owner stands")),
         ("SNP-ADOPT-NEXT", "ACT-SNAP-REPLACE-FALSE", "SNP-SPENT", "ACT-REPAIR")),
    Knob("Q15", "Does an activity take deltas after the subagent invocation that owns it has "
                "ended (SUBAGENT_FINISHED or SUBAGENT_ERROR in this run)? (The subagents page "
                "forbids reusing a finished invocation's id, which a tagged delta does and the "
                "producer monitor flags, but an untagged delta continues whatever the opener "
                "owns and reuses no id; activities are never opened or closed, so run-scoped "
                "tracking does not end them (lifecycle page), and a failed run keeps what it "
                "delivered. 'live' is the draft option.)",
         (("live", "an activity outlives the invocation that owns it: a delta after the "
                   "invocation ended applies as before"),
          ("closed", "an ended invocation's activity takes no more continuations: a delta on "
                     "it is skipped with a warning (a replacing snapshot still takes it over)")),
         ("SUB-NO-REUSE-FINISHED", "SUB-UNTAGGED-CONTINUES", "LIF-RUN-SCOPED",
          "SUB-ENDED-ACTIVITY")),
    Knob("Q17", "Does the stripping of activity messages from run input bind the producer's echo "
                "of its input on RUN_STARTED.input? A producer-side question, read by the "
                "producer monitor. (The run-input page puts the stripping on the consumer, "
                "before it sends, and lets the producer echo 'the input the run was started "
                "from'; no producer-side rule names activity messages, and the producer must "
                "take what it received as the complete history. So an echo shows what was "
                "received, activity messages a consumer failed to strip included: "
                "'as-received' is the draft option. Either way an echoed activity gives the "
                "producer no baseline for a delta: it did not create it with a snapshot.)",
         (("as-received", "an echo holding activity messages is conformant: it shows the input "
                          "as received"),
          ("strip-echo", "every run input on the wire is stripped, the echo included: an "
                         "activity message in RUN_STARTED.input.messages breaks the rule")),
         ("RIN-STRIP-ACTIVITY", "RIN-COMPLETE-HISTORY", "ACT-STRIP-RUNINPUT",
          "RIN-ECHO-STRIPPED")),
    Knob("Q18", "Does a replace:false snapshot that leaves an existing activity alone also leave "
                "its activityType? (The activity page says content and type stand; the schema's "
                "description of replace names content only, and defers behaviour to the prose, "
                "so the prose is the draft option.)",
         (("prose", "content and activityType both stand, as the activity page says"),
          ("schema", "only content stands: the declined snapshot's activityType is taken, as a "
                     "reader of the schema's replace description alone would")),
         ("ACT-SNAP-REPLACE-FALSE", "SCH-REPLACE"),
         deviations=(
             ("schema", "ACT-SNAP-REPLACE-FALSE",
              "activity page, ACTIVITY_SNAPSHOT: replace:false keeps the type as well as the "
              "content, and the schema leaves behaviour to that prose"),)),
    Knob("Q19", "Does ACTIVITY_SNAPSHOT's metadata merge into the activity message, or does the "
                "metadata table's catch-all row (whose examples name snapshots) send it nowhere? "
                "(The table gives ACTIVITY_SNAPSHOT a row of its own, and the activity page says "
                "accumulated metadata keeps merging across a replacing snapshot, so the specific "
                "row is the draft option; the catch-all read literally is the other.)",
         (("activity-row", "its own row: the snapshot's metadata merges into the activity"),
          ("catch-all", "the catch-all row: the snapshot's metadata merges into nothing (a "
                        "created activity has none of its own; held metadata stands)")),
         ("MET-ACTIVITY-TARGET", "MET-NO-TARGET", "ACT-SNAP-KEEP-METADATA")),
    Knob("Q20", "What happens to an operation with an op RFC 6902 does not define?",
         (("drop-op", "drop that operation with a warning and apply the rest"),
          ("skip-patch", "the whole patch does not apply: warn and skip"),
          ("fatal", "fail the run")),
         ("SNP-UNKNOWN-OP", "PRC-STRIP-POSITION"),
         deviations=(
             ("skip-patch", "SNP-UNKNOWN-OP",
              "snapshots pattern page, When a patch does not apply: only the unknown operation "
              "is dropped, with a warning; the rest applies"),
             ("fatal", "SNP-UNKNOWN-OP",
              "snapshots pattern page, When a patch does not apply: an unknown op is not "
              "malformed; it is dropped and the run survives"))),
    Knob("Q21", "Is an optional member sent as null fatal, or shimmed to absent?",
         (("fatal", "a malformed known value: fail the run"),
          ("shim", "treat it as absent, with a warning")),
         ("EVM-ABSENT-NOT-NULL", "PRC-MALFORMED-FATAL")),
    Knob("Q23", "Does a delta in a later run apply against an activity of an earlier run that "
                "no snapshot of its own run has restated? (Activity messages outlive their run: "
                "the lifecycle page's run-scoped tracking covers open entities, and activities "
                "are never opened or closed; nothing forbids the delta, and the snapshot at the "
                "start of a continuing run is only a SHOULD (pattern page). 'continue' is the "
                "draft option; 'run-scoped' reads the SHOULD as the only baseline a new run has.)",
         (("continue", "the held activity is the baseline: the delta applies"),
          ("run-scoped", "each run gives its own baseline: the delta is skipped with a warning, "
                         "as one without a baseline")),
         ("LIF-RUN-SCOPED", "SNP-SHOULD-SNAPSHOT", "ACT-DELTA-BASELINE", "ACT-RUN-BASELINE")),
    Knob("X1", "Does a text message still being streamed survive a MESSAGES_SNAPSHOT that omits it?",
         (("drop", "the snapshot is complete: the message is dropped, and its stream with it"),
          ("preserve", "in-flight messages survive"),
          ("drop-open", "the message is dropped but its stream stays open: RUN_FINISHED then "
                        "finds it open, and a second TEXT_MESSAGE_START for its id fails the run "
                        "(the snapshot reconciles the message list, not the run's open streams, "
                        "LIF-RUN-SCOPED)")),
         ("MS-IN-FLIGHT", "STA-MS-DROP-EXCEPT", "MS-IN-FLIGHT-OPEN", "LIF-RUN-SCOPED")),
)
"""Every knob, in the order the CLI lists them."""

KNOB_BY_ID: dict[str, Knob] = {k.id: k for k in KNOBS}
_KNOB_BY_FOLDED_ID: dict[str, Knob] = {k.id.lower(): k for k in KNOBS}
"""The knobs by lower-case id, for :func:`knob_of` (ids differ in more than case)."""
assert len(_KNOB_BY_FOLDED_ID) == len(KNOBS)

RECOMMENDATIONS_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                    "data", "recommendations.json")
"""The recommendations' data file (schema: ``counterexamples/schemas/
recommendations.schema.json``)."""


def _load_recommendations() -> dict:
    """:data:`RECOMMENDATIONS` read from :data:`RECOMMENDATIONS_FILE`, checked against the
    knobs: one entry per knob, each option one of the knob's (ImportError otherwise: a
    declaration error)."""
    with open(RECOMMENDATIONS_FILE, encoding="utf-8") as fh:
        doc = json.load(fh)
    knobs = doc.get("knobs", {})
    if set(knobs) != set(KNOB_BY_ID):  # pragma: no cover - a declaration error
        raise ImportError(f"{RECOMMENDATIONS_FILE}: knobs {sorted(set(knobs) ^ set(KNOB_BY_ID))} "
                          "are missing or unknown")
    for kid, rec in knobs.items():
        if rec.get("option") not in KNOB_BY_ID[kid].option_names:  # pragma: no cover
            raise ImportError(f"{RECOMMENDATIONS_FILE}: {kid}: unknown option "
                              f"{rec.get('option')!r}")
    return doc


@lru_cache(maxsize=1)
def peer_options_document() -> dict:
    """The options each peer of the conformance matrix was recorded to take (the document of
    :data:`model.peer_options.PEER_OPTIONS_FILE`, :func:`model.peer_options.load_peer_options`
    checked against the knobs), read once.

    Raises:
        ImportError: the committed file does not fit the knobs (a declaration error)."""
    from model.peer_options import PEER_OPTIONS_FILE, PeerOptionsError, load_peer_options
    try:
        return load_peer_options(PEER_OPTIONS_FILE, {k.id: k.option_names for k in KNOBS})
    except PeerOptionsError as exc:  # pragma: no cover - a declaration error
        raise ImportError(str(exc)) from None


def recorded_peer_options() -> dict[str, dict[str, str]]:
    """``{peer name: {knob id: option}}``: the option each peer of the matrix was recorded to
    take where observable (:func:`peer_options_document`), peers in the matrix's order, knobs
    in knob order; a peer with no observable option maps to ``{}``."""
    return {peer["name"]: {k.id: peer["knobs"][k.id]["option"] for k in KNOBS
                           if "option" in peer["knobs"][k.id]}
            for peer in peer_options_document()["peers"]}


RECOMMENDATIONS: dict = _load_recommendations()
"""The option this project recommends for each knob, the argument for it in our words citing
page and section, and whether its question is one of the notes' starred ones
(``{"knobs": {knob id: {...}}, "questions": {question id without knob: {...}}}``)."""
_ATTR_OF_ID: dict[str, str] = {k.id: k.attr for k in KNOBS}
_KNOB_BY_ATTR: dict[str, Knob] = {k.attr: k for k in KNOBS}


@dataclass(frozen=True, slots=True)
class Reading:
    """A value for every knob (attribute name = knob id lower-cased, ``-`` as ``_``).

    The default of every field is the ``draft`` option, so ``Reading()`` is :data:`DRAFT`.
    """

    q1: str = "merge"
    q2: str = "continues"
    q3: str = "keep"
    q4: str = "fatal"
    q4_opener: str = "current"
    q5: str = "skip"
    q6: str = "skip"
    q6_ms: str = "replace"
    q7: str = "apply"
    q8: str = "self-revoking"
    q9: str = "skip"
    q10: str = "seen"
    q11: str = "in-place"
    q12: str = "stream"
    q13: str = "tolerate"
    q14: str = "decline"
    q15: str = "live"
    q17: str = "as-received"
    q18: str = "prose"
    q19: str = "activity-row"
    q20: str = "drop-op"
    q21: str = "fatal"
    q23: str = "continue"
    x1: str = "drop"

    def as_dict(self) -> dict[str, str]:
        """``{knob id: option}`` for every knob."""
        return {_KNOB_BY_ATTR[f.name].id: getattr(self, f.name) for f in fields(self)}

    def differences(self, other: "Reading" = None) -> dict[str, str]:
        """Knobs on which this reading departs from ``other`` (default :data:`DRAFT`)."""
        other = other or DRAFT
        return {k: v for k, v in self.as_dict().items() if other.as_dict()[k] != v}

    @property
    def name(self) -> str:
        """Preset name if this is a preset, else the override form against ``draft``."""
        for pname, preset in PRESETS.items():
            if preset == self:
                return pname
        return ",".join(f"{k}={v}" for k, v in self.differences().items())

    def with_(self, **overrides: str) -> "Reading":
        """A copy with knobs changed by knob id (``with_(Q1="ignore")``) or attribute."""
        return replace(self, **{(_KNOB_BY_ID_ATTR(k)): v for k, v in overrides.items()})


def knob_of(key: str) -> Optional[Knob]:
    """The knob whose id ``key`` is, in any case (``q2``, ``q4-OPENER``, ``x1``: ids are
    ASCII, compared letter for letter without case), as a reading or a pin is typed; None
    for no knob."""
    knob = KNOB_BY_ID.get(key)
    if knob is None and key.isascii():
        knob = _KNOB_BY_FOLDED_ID.get(key.lower())
    return knob


def knob_named(key) -> Knob:
    """The knob ``key`` names, in any case (:func:`knob_of`), as a reading item or a pin gives
    it.

    Raises:
        ReadingError: ``unknown knob KEY`` (quoted as given, :func:`model.text.quoted`) with
            the knobs listed; for a key that is not a string too."""
    knob = knob_of(key) if isinstance(key, str) else None
    if knob is None:
        raise ReadingError(f"unknown knob {quoted(key)}; knobs: {', '.join(KNOB_BY_ID)}")
    return knob


def option_named(knob: Knob, value) -> str:
    """``value`` as one of ``knob``'s option names (lower case; read in any case).

    Raises:
        ReadingError: ``unknown option VALUE for KNOB`` (quoted as given) with its options
            listed; for a value that is not a string too."""
    option = value.lower() if isinstance(value, str) else None
    if option not in knob.option_names:
        raise ReadingError(f"unknown option {quoted(value)} for {knob.id}; options: "
                           f"{', '.join(knob.option_names)}")
    return option


def _KNOB_BY_ID_ATTR(key: str) -> str:
    if key in KNOB_BY_ID:
        return KNOB_BY_ID[key].attr
    if key in _KNOB_BY_ATTR:
        return key
    raise ReadingError(f"unknown knob {quoted(key)}; knobs: {', '.join(KNOB_BY_ID)}")


assert all(_KNOB_BY_ATTR[f.name].draft == f.default for f in fields(Reading)), "draft mismatch"
assert {f.name for f in fields(Reading)} == set(_KNOB_BY_ATTR), "knob/reading mismatch"

DRAFT = Reading()
"""The most literal reading of the draft text."""

PRESETS: dict[str, Reading] = {
    "draft": DRAFT,
    "lenient": Reading(q3="keep", q4="accept", q7="skip", q10="held", q20="drop-op", q21="shim",
                       x1="preserve"),
    "strict": Reading(q2="parent", q3="fatal", q4="fatal", q7="fatal", q9="fatal", q13="fatal",
                      q20="fatal"),
}
"""Named readings: ``draft``; ``lenient`` (tolerate wherever a reading allows); ``strict`` (fail
wherever a reading allows)."""


class ReadingError(ValueError):
    """An unknown preset, knob or option in a reading specification."""


def parse_reading(spec: str) -> Reading:
    """Parse a reading: a preset name, or comma-separated ``KNOB=OPTION`` overrides of ``draft``
    (optionally starting from a preset: ``"strict,Q7=skip"``). Presets, knob ids (hyphenated
    ones too: ``q4-OPENER``, :func:`knob_of`) and options are read in any case.

    Raises:
        ReadingError: naming the unknown preset, knob or option as typed (an over-long one cut
            inside its quotes, :func:`model.text.quoted`) and listing the valid ones.
    """
    spec = (spec or "").strip()
    if not spec:
        raise ReadingError("empty reading; use a preset (" + ", ".join(PRESETS) +
                           ") or KNOB=OPTION pairs")
    base, overrides = DRAFT, {}
    for i, part in enumerate(p.strip() for p in spec.split(",")):
        if not part:
            raise ReadingError(f"empty item in reading {quoted(spec)}")
        if "=" not in part:
            preset = part.lower()  # quoted as typed: 'QQQQ' is not shown as 'qqqq'
            if i == 0 and preset in PRESETS:
                base = PRESETS[preset]
                continue
            if preset in PRESETS:
                raise ReadingError(f"only the first item may name a preset; {quoted(part)} comes "
                                   "later")
            raise ReadingError(f"unknown reading {quoted(part)}; presets: {', '.join(PRESETS)}; "
                               "or KNOB=OPTION pairs such as Q1=ignore,Q7=fatal")
        key, _, value = (s.strip() for s in part.partition("="))
        knob = knob_named(key)
        if knob.attr in overrides:
            raise ReadingError(f"{knob.id} is given twice")
        overrides[knob.attr] = option_named(knob, value)
    return replace(base, **overrides)


def recommended_reading() -> "Reading":
    """The reading of every recommended option (:data:`RECOMMENDATIONS`)."""
    return replace(DRAFT, **{KNOB_BY_ID[k].attr: r["option"]
                             for k, r in RECOMMENDATIONS["knobs"].items()})


def reading_count() -> int:
    """How many distinct readings exist (the product of the option counts)."""
    n = 1
    for k in KNOBS:
        n *= len(k.options)
    return n


def all_readings() -> Iterator[Reading]:
    """Every reading, ``draft`` first, then in knob-option order (lazy; there are many)."""
    yield DRAFT
    for combo in itertools.product(*(k.option_names for k in KNOBS)):
        r = Reading(**{k.attr: v for k, v in zip(KNOBS, combo)})
        if r != DRAFT:
            yield r


class KnobUnset(Exception):
    """Raised by :class:`PartialReading` when a step consults a knob the assignment leaves open."""

    def __init__(self, knob_id: str):
        super().__init__(knob_id)
        self.knob_id = knob_id


class PartialReading:
    """A reading that fixes only the knobs in ``assignment`` (``{knob id: option}``); reading any
    other knob raises :class:`KnobUnset`. Stands for every reading consistent with it."""

    __slots__ = ("_values", "assignment")

    def __init__(self, assignment: Mapping[str, str]):
        self.assignment = dict(assignment)
        self._values = {_ATTR_OF_ID[k]: v for k, v in self.assignment.items()}

    def __getattr__(self, attr: str) -> str:
        try:
            return self._values[attr]
        except KeyError:
            knob = _KNOB_BY_ATTR.get(attr)
            if knob is None:
                raise AttributeError(attr) from None
            raise KnobUnset(knob.id) from None

    def complete(self, base: Reading = DRAFT) -> Reading:
        """The reading that takes this assignment and ``base`` for the open knobs."""
        return replace(base, **self._values)


class RecordingReading:
    """A complete reading that records which knobs a step consults (``consulted``: attribute
    names, in order). Lets a search skip the all-readings fork for steps that consult none.

    Each knob is a property of the class (a plain attribute read, several times cheaper than a
    ``__getattr__`` fallback: the searches read knobs through recorders millions of times);
    any other attribute passes to ``base`` and is recorded too."""

    __slots__ = ("base", "consulted")

    def __init__(self, base: Reading):
        self.base = base
        self.consulted: list[str] = []

    def __getattr__(self, attr: str) -> str:
        if attr in RecordingReading.__slots__:  # not set yet (copy and pickle build it bare)
            raise AttributeError(attr)
        value = getattr(self.base, attr)
        self.consulted.append(attr)
        return value


def _recorded(attr: str) -> property:
    def read(self: RecordingReading) -> str:
        value = getattr(self.base, attr)  # first: a knob the base cannot give is not consulted
        self.consulted.append(attr)
        return value
    return property(read, doc=f"The knob ``{attr}`` of ``base``, recorded as consulted.")


for _knob in KNOBS:
    setattr(RecordingReading, _knob.attr, _recorded(_knob.attr))


ANY_READING = "(any reading)"
"""The text of the empty assignment: a result that holds under every reading."""


def deviation_note(knob_id: str, option: str) -> str:
    """What a table adds after a peer's ``option`` of knob ``knob_id``: ``" (deviation, against
    STA-MS-SELF-REVOKE: not conformant)"`` for a deviation (:attr:`Knob.deviations`: a peer
    that behaves so is not conformant), ``""`` for a faithful option or an unknown knob."""
    knob = KNOB_BY_ID.get(knob_id)
    against = knob.deviation(option) if knob is not None else None
    return f" (deviation, against {against}: not conformant)" if against else ""


def deviations_of(assignment: Mapping[str, str]) -> list[str]:
    """The deviations an assignment takes (:attr:`Knob.deviations`), each as ``"Q8=keep
    (against STA-MS-SELF-REVOKE)"``, in knob order; empty when every option it fixes is
    faithful."""
    out = []
    for knob in KNOBS:
        option = assignment.get(knob.id)
        clause = option is not None and knob.deviation(option)
        if clause:
            out.append(f"{knob.id}={option} (against {clause})")
    return out


def basis_of(assignments: Sequence[Mapping[str, str]]) -> str:
    """What a result that holds under ``assignments`` (e.g. the two sides of a split, or the
    readings a peer agrees with) rests on, in words for a table: ``"draft"`` when some of them
    takes only faithful options of the draft's questions; ``"deviation: Q8=keep (against
    STA-MS-SELF-REVOKE)"`` when every one takes a deviation (:attr:`Knob.deviations`: a peer
    matching only so is not conformant), ``"draft (the other side a deviation: ...)"`` when only
    some do (a split between a faithful option and a deviation); ``"outside the draft: X1 (the model's own
    question)"`` when one names a knob of the model's own (:attr:`Knob.outside_draft`)."""
    outside = sorted({k for a in assignments for k in a if KNOB_BY_ID[k].outside_draft})
    if outside:
        return f"outside the draft: {', '.join(outside)} (the model's own question)"
    devs = [deviations_of(a) for a in assignments]
    named = "; ".join(dict.fromkeys(d for ds in devs for d in ds))
    if devs and all(devs):
        return "deviation: " + named
    return "draft" + (f" (the other side a deviation: {named})" if named else "")


def describe_assignment(assignment: Mapping[str, str]) -> str:
    """The text of a partial assignment ``{knob id: option}``: ``"Q1=merge,Q5=retype"`` in knob
    order, or :data:`ANY_READING` for an empty assignment. :func:`parse_assignment` reads it
    back."""
    if not assignment:
        return ANY_READING
    order = {k.id: i for i, k in enumerate(KNOBS)}
    return ",".join(f"{k}={assignment[k]}" for k in sorted(assignment, key=order.__getitem__))


def parse_assignment(text: str) -> dict[str, str]:
    """The partial assignment ``{knob id: option}`` that :func:`describe_assignment` wrote as
    ``text`` (``"Q1=merge,Q5=retype"``; :data:`ANY_READING` is ``{}``).

    Raises:
        ReadingError: an item that is not ``KNOB=OPTION`` of a knob of the model."""
    if text.strip() == ANY_READING:
        return {}
    out = {}
    for item in text.split(","):
        knob, sep, option = (s.strip() for s in item.partition("="))
        if not sep or knob not in KNOB_BY_ID or option not in KNOB_BY_ID[knob].option_names:
            raise ReadingError(f"{quoted(item)} is not KNOB=OPTION of a knob of the model")
        out[knob] = option
    return out
