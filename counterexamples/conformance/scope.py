"""What the model covers of the official corpus, and the table that says so.

A fixture is **out of scope** when it exercises what the model deliberately does not interpret
(:data:`OUT_OF_SCOPE_RULES`, decided from the fixture itself: its events, its ``client`` pin, its
description), each with the reason. An in-scope fixture the model does not pass under the draft
reading is **argued**: by :data:`ARGUED` (the page and section, and why the model reads it
otherwise), or, when the only failing key is ``errorContains`` on a failure the model also makes,
by the wording rule (the key pins the TypeScript client's message; the model fails the run at the
same event for the rule the fixture names). Anything else is **unargued**, and the docs test
fails on it. :func:`official_table` renders the table of docs/conformance.md.
"""
from __future__ import annotations

from typing import Callable, Optional, Sequence

from counterexamples.conformance.fixtures import Fixture
from counterexamples.conformance.runner import FAIL, FixtureResult, is_admitted_gap

__all__ = ["OUT_OF_SCOPE_RULES", "ARGUED", "out_of_scope", "argument", "classify",
           "unargued", "official_table", "docs_tables", "fill_docs"]


def _types(fixture: Fixture) -> set:
    return {e.get("type") for e in fixture.stream if isinstance(e, dict)}


def _has_chunks(f: Fixture) -> bool:
    return bool(_types(f) & {"TEXT_MESSAGE_CHUNK", "TOOL_CALL_CHUNK"})


def _has_reasoning(f: Fixture) -> bool:
    return any(str(t).startswith(("REASONING_", "THINKING_")) for t in _types(f))


def _has_versions(f: Fixture) -> bool:
    return ("client" in f.doc or f.name.startswith("era-")
            or any(isinstance(e, dict) and "protocolVersion" in e
                   and f.doc.get("specPage", "").endswith("versioning") for e in f.stream)
            or f.doc.get("specPage", "").endswith("/versioning"))


OUT_OF_SCOPE_RULES: tuple[tuple[str, Callable[[Fixture], bool], str], ...] = (
    ("admitted gap", is_admitted_gap,
     "asserts behaviour the spec contradicts (its description says so); one of the README's "
     "third-party relaxations"),
    ("versions", _has_versions,
     "protocol versions, era shims and version negotiation are not modelled (VER-DOWNGRADE, "
     "VER-NO-HIDDEN in the clause registry's out-of-scope list)"),
    ("chunks", _has_chunks,
     "chunk expansion is not modelled: *_CHUNK events are accepted and passed through "
     "uninterpreted (model.wire.KNOWN_PASSTHROUGH, EVX-ACCEPT-FAMILIES)"),
    ("reasoning", _has_reasoning,
     "reasoning events are accepted and passed through uninterpreted "
     "(model.wire.KNOWN_PASSTHROUGH); retired THINKING_* shapes are unrecognised events"),
)
"""``(label, applies to fixture, reason)``, first match wins."""

ARGUED: dict[str, tuple[str, str]] = {
    "content-without-start-fatal": (
        "/spec/draft/basic/patterns/streaming",
        "the streaming-pattern page is not among the pages the model is built from (design "
        "section 4: text events are modelled where activity meets them); the model follows its "
        "assumption TXT-TARGET-MISSING (field case FC-34): a content event for a message it "
        "does not hold is skipped with a warning, not fatal"),
    "subagent-attribution-mismatch-fatal": (
        "/spec/draft/events/subagents, Ownership (SUB-REJECT-MISMATCH)",
        "the model checks the owner of the text and activity messages a continuing event "
        "names; a tool call's owner is not kept in the model's state, so a tool-call "
        "continuation with another subagentRunId is not refused"),
    "subagent-finished-unstarted-fatal": (
        "/spec/draft/events/subagents, Lifecycle (SUB-ACCEPT-UNANNOUNCED)",
        "the model reads the duty to take subagentRunId tags at face value without an "
        "announcement as covering a closing event whose SUBAGENT_STARTED was never sent; the "
        "corpus reads the lifecycle as requiring the opener. The two readings differ on a "
        "conformant-looking stream: a question for the notes"),
    "subagent-started-missing-name-fatal": (
        "/spec/draft/events/subagents, Lifecycle; /spec/draft/schema",
        "the model's wire schema takes SUBAGENT_STARTED.name as optional (model/wire.py); the "
        "schema excerpt the model is built from (schema-activity.md) does not carry "
        "SubagentStartedEvent, so the required field is not modelled"),
    "unknown-outcome-array-fatal": (
        "/spec/draft/basic/processing, The rule (PRC-MALFORMED-FATAL); /spec/draft/events/"
        "lifecycle, RUN_FINISHED",
        "the model keeps RUN_FINISHED.outcome as opaque JSON (model/wire.py): the outcome "
        "union is not modelled, so an array there is not recognised as malformed"),
    "unknown-outcome-stripped": (
        "/spec/draft/basic/processing, What a consumer does with unrecognised material "
        "(PRC-STRIP-POSITION); /spec/draft/events/lifecycle, RUN_FINISHED",
        "the outcome union is not modelled (opaque JSON), so an unrecognised member in it is "
        "kept rather than stripped"),
    "unknown-part-in-message-list": (
        "/spec/draft/basic/processing, What a consumer does with unrecognised material "
        "(PRC-STRIP-POSITION)",
        "the model checks a user message's content as a string or an array and keeps the array "
        "whole; content parts are not modelled, so an unknown part is not removed"),
}
"""``{fixture: (page and section, why the model differs)}`` for in-scope fixtures the model
does not pass under the draft reading (third-party relaxations applied), in our words."""


def out_of_scope(fixture: Fixture) -> Optional[tuple[str, str]]:
    """``(label, reason)`` of the first :data:`OUT_OF_SCOPE_RULES` rule that applies, or None."""
    for label, applies, reason in OUT_OF_SCOPE_RULES:
        if applies(fixture):
            return label, reason
    return None


def argument(fixture: Fixture, result: FixtureResult, answer: dict) -> Optional[str]:
    """Why the model differs on an in-scope fixture it does not pass: :data:`ARGUED`'s entry,
    or the wording rule (only ``errorContains`` fails, on a failure the model makes too); None
    when nothing argues it."""
    if fixture.name in ARGUED:
        page, why = ARGUED[fixture.name]
        return f"{page}: {why}"
    failed = [k.key for k in result.failed_keys]
    fatal = answer.get("fatal")
    if failed == ["errorContains"] and isinstance(fatal, dict):
        return (f"wording: the model fails the run at event {fatal.get('atEvent')} with "
                f"{fatal.get('code')} ({fatal.get('clause')}), the rule the fixture names; "
                "errorContains pins the TypeScript client's message")
    return None


VERDICTS = ("passed", "argued", "out of scope", "unargued")
"""What the scope table says of a fixture run on the model, in the order it counts them."""


def classify(fixture: Fixture, result: FixtureResult, answer: dict) -> tuple[str, str]:
    """``(verdict, note)``: ``out of scope`` (the reason), ``passed``, ``argued`` (the
    argument) or ``unargued`` (the failing keys)."""
    scope = out_of_scope(fixture)
    if scope is not None:
        return "out of scope", scope[0]
    if result.status == "passed":
        skipped = [k.key for k in result.keys if k.status not in ("pass", FAIL)]
        return "passed", ("set aside: " + ", ".join(skipped)) if skipped else ""
    why = argument(fixture, result, answer)
    if why is not None:
        return "argued", why
    return "unargued", "failing: " + ", ".join(
        f"{k.key} ({k.note})" for k in result.failed_keys)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def unargued(fixtures: Sequence[Fixture], results: Sequence[FixtureResult],
             answers: Sequence[dict]) -> list[str]:
    """The fixtures :func:`classify` calls ``unargued`` (empty when the table is complete)."""
    return [f.name for f, r, a in zip(fixtures, results, answers)
            if classify(f, r, a)[0] == "unargued"]


def scope_counts(fixtures: Sequence[Fixture], results: Sequence[FixtureResult],
                 answers: Sequence[dict]) -> dict[str, int]:
    """How many fixtures :func:`classify` puts under each verdict, as ``{"passed": n,
    "argued": n, "out of scope": n, "unargued": n}`` in that order."""
    counts = dict.fromkeys(VERDICTS, 0)
    for f, r, a in zip(fixtures, results, answers):
        counts[classify(f, r, a)[0]] += 1
    return counts


def official_table(fixtures: Sequence[Fixture], results: Sequence[FixtureResult],
                   answers: Sequence[dict]) -> str:
    """The Markdown table of docs/conformance.md: one row per fixture (name, area, verdict,
    note), the counts per verdict, and what each out-of-scope label means. Deterministic for
    the same inputs."""
    from counterexamples.report.walkthrough import _cell as markdown_cell
    rows = ["| fixture | area | model (draft, third-party) | why |",
            "| --- | --- | --- | --- |"]
    labels: list[str] = []
    for f, r, a in zip(fixtures, results, answers):
        verdict, note = classify(f, r, a)
        if verdict == "out of scope" and note not in labels:
            labels.append(note)
        # the area is the fixture's own free text: inert in the cell (no HTML, link or `|`)
        area = markdown_cell(str(f.doc.get("area", "")))
        rows.append(f"| `{f.name}` | {area} | {verdict} | {_cell(note)} |")
    counts = scope_counts(fixtures, results, answers)
    total = ", ".join(f"{n} {verdict}" for verdict, n in counts.items())
    reasons = {label: reason for label, _, reason in OUT_OF_SCOPE_RULES}
    legend = "".join(f"- **{label}**: {reasons[label]}\n" for label in labels)
    out = "\n".join(rows) + f"\n\n{len(results)} fixtures: {total}.\n"
    return out + (f"\nOut of scope:\n\n{legend}" if legend else "")


def docs_tables(official: str) -> dict[str, str]:
    """The two generated tables of docs/conformance.md, ``{marker: Markdown}``: the model over
    the official corpus at ``official`` (``official-table``, :func:`official_table`) and the
    generated corpus's coverage beside the official activity fixtures (``coverage-table``)."""
    from counterexamples.conformance.fixtures import load_fixtures
    from counterexamples.conformance.generate import coverage_table, generate
    from counterexamples.conformance.runner import model_answers, run_fixtures
    fixtures = load_fixtures([official])
    answers = model_answers(fixtures)
    results = run_fixtures(fixtures, answers, third_party=True)
    activity = [f for f in fixtures if f.doc.get("area") == "activity"]
    return {"official-table": official_table(fixtures, results, answers),
            "coverage-table": coverage_table(generate(), activity)}


def fill_docs(text: str, tables: dict[str, str]) -> str:
    """``text`` with each ``<!-- BEGIN marker... -->`` .. ``<!-- END marker -->`` block's body
    replaced by ``tables[marker]``. Raises ValueError for a marker the text lacks."""
    import re
    for marker, table in tables.items():
        pattern = re.compile(r"(<!-- BEGIN " + re.escape(marker) + r"[^\n]*-->\n)(.*?)"
                             r"(<!-- END " + re.escape(marker) + r" -->)", re.S)
        if not pattern.search(text):
            raise ValueError(f"no {marker} block")
        text = pattern.sub(lambda m: m.group(1) + "\n" + table + "\n" + m.group(3), text)
    return text
