"""AG-UI conformance fixtures written from our traces: :func:`fixture_of` builds one fixture
document (the format of the field's corpus, ``shared/data/ag-ui-conformance/draft/README.md``;
its JSON Schema is ``counterexamples/schemas/ag-ui-fixture.schema.json``) from a wire trace and
either a verdict of the model or an ``expect`` object written by hand.

What a fixture asserts is derived from the verdict, and only what a consumer must observably do:

* ``outcome``: ``"failed"`` when the verdict has a fatal, else ``"completed"``; a failure also
  gets ``errorContains`` (the README's gate requires a reason for every failure): the member a
  malformed event holds wrongly (``content``: a schema error names its path), else the wire
  ``type`` of the event the run failed on (the token a client's rejection most often names);
* ``messageCount`` and ``messages``: the final message list, subset-matched by the runners (so
  every member of each message is stated: an absent one is not asserted, which is why metadata
  and content arrays are given whole);
* ``state`` only when the trace touched the agent state (a STATE_* event) and the state is an
  object or array: subset-matching an empty object asserts nothing (the README's trap).

* ``warnings``: the codes of the warnings the verdict surfaces that a keyword clause asks for
  (:data:`model.codes.REQUIRED_WARNINGS`: SNP-SURFACE-FAILURE's MUST, ACT-DELTA-MISSING-WARN's
  and PRC-DROP-STRIP's SHOULD), each once, in order of first appearance; a client answers its
  warnings in activity-check's codes (the adapter protocol), so a code is the substring asserted.
  The model's other warnings (non-keyword statements) are its own choice and never asserted.

Identifiers are the caller's; :func:`prefix_ids` renames them with the fixture's
name, as the README asks, consistently across events and input messages.

Sources: the corpus README's sections on the format, ``expect`` and the gate (read, not copied);
clause pages as :data:`SPEC_PAGES`.
"""
from __future__ import annotations

import json
import re
from typing import Any, Mapping, Optional, Sequence, Union

__all__ = ["SPEC_PAGES", "FIXTURE_NAME", "fixture_of", "expect_of_verdict", "prefix_ids",
           "spec_page_of", "dumps_fixture"]

SPEC_PAGES: dict[str, str] = {
    "ACT": "/spec/draft/events/activity",
    "SNP": "/spec/draft/basic/patterns/snapshots",
    "STA": "/spec/draft/events/state",
    "SUB": "/spec/draft/events/subagents",
    "MET": "/spec/draft/basic/metadata",
    "PRC": "/spec/draft/basic/processing",
    "RIN": "/spec/draft/basic/run-input",
    "EVM": "/spec/draft/basic",
    "EVX": "/spec/draft/events",
    "LIF": "/spec/draft/events/lifecycle",
    "VER": "/spec/draft/basic/versioning",
    "IDX": "/spec/draft",
    "SCH": "/spec/draft/schema",
    "TXT": "/spec/draft/events/text-messages",
}
"""``{page key of the clause registry: the page's path on docs.ag-ui.com}`` (the ``specPage`` of
a fixture; the keys are :data:`model.spec_text.PAGE_KEYS`' values)."""

FIXTURE_NAME = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*\Z")
"""A fixture name: lowercase words joined by dashes (it is also the file name, ``NAME.json``)."""

ID_MEMBERS = ("messageId", "threadId", "runId", "parentRunId", "toolCallId", "subagentRunId",
              "parentMessageId", "parentSubagentRunId", "id")
"""Wire members holding identifiers that :func:`prefix_ids` renames (``id`` inside messages)."""

Verdictish = Union[Mapping, Any]

_MEMBER_AT_FAULT = re.compile(r"^\$\.([A-Za-z_][A-Za-z0-9_]*)")
"""The member a malformed-event failure names first (``$.content: ...`` -> ``content``)."""


def spec_page_of(page_key: str) -> str:
    """The ``specPage`` of a clause page key (``"ACT"`` -> ``/spec/draft/events/activity``).
    Raises KeyError for an unknown key."""
    return SPEC_PAGES[page_key]


def _verdict_json(verdict: Verdictish) -> dict:
    """A :class:`model.verdict.Verdict` or its ``to_json()`` form, as the JSON form."""
    if hasattr(verdict, "to_json"):
        return verdict.to_json()
    return dict(verdict)


def expect_of_verdict(events_wire: Sequence[Mapping], verdict: Verdictish) -> dict:
    """The ``expect`` object a verdict of the model stands for (see the module docstring).

    Args:
        events_wire: the trace, wire events (the fixture's ``stream``).
        verdict: a :class:`model.verdict.Verdict` or its JSON (``messages``, ``fatal``,
            ``state``; ``fatal`` null or ``{"atEvent", ...}``).

    Returns:
        ``{"outcome", ["errorContains"], ["warnings"], "messageCount", "messages", ["state"]}``.
    """
    from model.codes import REQUIRED_WARNINGS
    v = _verdict_json(verdict)
    expect: dict = {}
    fatal = v.get("fatal")
    if fatal:
        expect["outcome"] = "failed"
        at = fatal.get("atEvent") if isinstance(fatal, dict) else None
        kind = None
        if isinstance(at, int) and 0 <= at < len(events_wire):
            kind = events_wire[at].get("type") if isinstance(events_wire[at], Mapping) else None
        member = _MEMBER_AT_FAULT.match(str(fatal.get("detail", ""))) \
            if isinstance(fatal, dict) else None
        expect["errorContains"] = member.group(1) if member else (
            kind if isinstance(kind, str) and kind else "error")
    else:
        expect["outcome"] = "completed"
    required = []
    for w in v.get("warnings") or ():
        code = w.get("code") if isinstance(w, Mapping) else None
        if code in REQUIRED_WARNINGS and code not in required:
            required.append(code)
    if required:
        expect["warnings"] = required
    messages = [dict(m) for m in v.get("messages", [])]
    expect["messageCount"] = len(messages)
    expect["messages"] = messages
    touched_state = any(isinstance(e, Mapping) and str(e.get("type", "")).startswith("STATE_")
                        for e in events_wire)
    state = v.get("state")
    if touched_state and isinstance(state, (dict, list)) and state not in ({}, []):
        expect["state"] = state
    return expect


def prefix_ids(name: str, events_wire: Sequence[Mapping], input_: Optional[Mapping] = None
               ) -> tuple[list[dict], Optional[dict]]:
    """The trace (and run input) with every identifier renamed ``<name>-<id>`` (the README asks
    that a fixture's identifiers name it), the same id always the same new id. Identifiers are
    the members of :data:`ID_MEMBERS` at any depth outside payloads (``content``, ``snapshot``,
    ``patch``, ``delta``, ``metadata``... are data and left alone). Returns new objects; the
    arguments are not changed."""
    renamed: dict[str, str] = {}

    def new_id(old: str) -> str:
        if old.startswith(name + "-"):
            return old
        return renamed.setdefault(old, f"{name}-{old}")

    def walk(value: Any, under_content: bool = False) -> Any:
        if isinstance(value, list):
            return [walk(v, under_content) for v in value]
        if isinstance(value, dict):
            out = {}
            for k, v in value.items():
                if not under_content and k in ID_MEMBERS and isinstance(v, str):
                    out[k] = new_id(v)
                else:
                    out[k] = walk(v, under_content or k in ("content", "snapshot", "patch",
                                                            "delta", "metadata", "value",
                                                            "rawEvent", "result", "input"))
            return out
        return value

    events = [walk(dict(e)) for e in events_wire]
    new_input = None
    if input_ is not None:
        new_input = dict(input_)
        if isinstance(new_input.get("messages"), list):
            new_input["messages"] = [walk(m) for m in new_input["messages"]]
    return events, new_input


def fixture_of(name: str, events_wire: Sequence[Mapping], verdict_or_expect: Verdictish,
               reading: Any, spec_page: str, description: str, kill: Optional[str] = None, *,
               area: str = "activity", input_: Optional[Mapping] = None) -> dict:
    """One conformance fixture, in the corpus README's format and key order.

    Args:
        name: the fixture name (:data:`FIXTURE_NAME`; also its file name without ``.json``).
        events_wire: the ``stream``: wire events, written as given (use :func:`prefix_ids`
            first for identifiers that name the fixture).
        verdict_or_expect: a :class:`model.verdict.Verdict` (or its JSON, recognised by its
            ``fatal`` member), turned into ``expect`` by :func:`expect_of_verdict`; or an
            ``expect`` object (recognised by its ``outcome`` member), taken as is.
        reading: the reading the verdict was computed under (a :class:`model.readings.Reading`,
            its name, or None for the draft); a reading other than the draft is said in the
            description, since the verdict then holds under that resolution only.
        spec_page: the page the rule lives on (``/spec/draft/...``; :func:`spec_page_of`).
        description: one line in our words: what the fixture proves.
        kill: the one change to a consumer that must make the fixture fail (a zoo mutant's
            name and what it does); None gives a placeholder that says no kill was verified.
        area: the group of the test output (default ``activity``).
        input_: the run's ``input`` (``messages``, ``tools``, ``state``...), or None.

    Returns:
        ``{"name", "area", "description", "specPage", "kill", ["input"], "stream", "expect"}``.

    Raises:
        ValueError: a name that is not :data:`FIXTURE_NAME`, an empty description or a
            description over one line, or a ``verdict_or_expect`` that is neither a verdict nor an
            expect object.
    """
    if not isinstance(name, str) or not FIXTURE_NAME.match(name):
        raise ValueError(f"fixture name {name!r}: lowercase words joined by dashes")
    if not description or "\n" in description:
        raise ValueError(f"fixture {name}: the description is one non-empty line")
    if isinstance(verdict_or_expect, Mapping) and "outcome" in verdict_or_expect:
        expect = json.loads(json.dumps(dict(verdict_or_expect)))
    elif hasattr(verdict_or_expect, "to_json") or (
            isinstance(verdict_or_expect, Mapping) and "fatal" in verdict_or_expect):
        expect = expect_of_verdict(events_wire, verdict_or_expect)
    else:
        raise ValueError(f"fixture {name}: expected a verdict or an expect object")
    reading_name = getattr(reading, "name", reading)
    if reading_name not in (None, "", "draft"):
        description = f"{description} (verdict under the reading {reading_name})"
    out: dict = {"name": name, "area": area, "description": description,
                 "specPage": spec_page,
                 "kill": kill or "not verified: no consumer change was shown to make this fail"}
    if input_ is not None:
        out["input"] = json.loads(json.dumps(dict(input_)))
    out["stream"] = json.loads(json.dumps([dict(e) for e in events_wire]))
    out["expect"] = expect
    return out


def dumps_fixture(fixture: Mapping) -> str:
    """A fixture as the file text: two-space indented JSON, non-ASCII kept, one final newline
    (byte-identical for equal fixtures: key order is the document's own)."""
    return json.dumps(fixture, indent=2, ensure_ascii=False) + "\n"
