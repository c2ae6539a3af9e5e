"""Tests for the spec wording checks (model/spec_text.py) and the ``spec`` command.

Two kinds of test. The parser tests write small pages of our own (made-up sentences, no spec
text) to ``tmp_path`` and check what is extracted, split, stripped and skipped. The page tests read
the shared spec copies at run time (``../shared/spec/draft/`` and ``../shared/spec/1.0/`` next to
the repository) and are skipped, with the reason, only when that directory is absent. No spec
sentence is written into this file: sentences are found by page, section and key word.
"""
from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest

from activity_check.cli import main
from model.clauses import registry
from model.spec_text import (
    NORMATIVE, PAGE_KEYS, Sentence, coverage, dependents_of, diff, extract, keyword_class,
    page_key, page_keys_from_notes, same_keyword, sentences,
)
from properties.catalogue import coverage_table

SPEC = Path(__file__).resolve().parents[1].parent / "shared" / "spec"
DRAFT = SPEC / "draft"
V10 = SPEC / "1.0"
needs_spec = pytest.mark.skipif(
    not (DRAFT / "activity.md").is_file(),
    reason=f"the shared spec copies are absent ({SPEC} not found next to the repository); "
           "the page tests read them at run time")
ERROR_PREFIX = "activity-check: error:"


def cli(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


# --- the parser, on pages of our own --------------------------------------------------------------

SAMPLE = """Source: https://example.invalid/widgets - a test page, not spec text.

<!-- provenance
- a header comment with a MUST that is skipped
-->

---
title: "Widgets"
description: "a REQUIRED word in the frontmatter is skipped"
---

import Banner from "/snippets/banner.mdx";

<Banner />

Widgets are small things, e.g. Dials and Knobs. Version 1.5 is current.

## Rules

### `WIDGET_EVENT`

A sender MUST NOT emit a widget twice. A receiver SHOULD log it, and MAY
drop it.

- A [linked rule](/spec/draft/widgets) says a receiver **MUST** keep `a. B` intact.
- This default is normative for receivers.
- This remark is non-normative.
- Lower-case must and should do not count; neither does MUSTARD.

```json
{"note": "a MUST inside code is skipped"}
```

```mermaid
sequenceDiagram
    A->>B: a SHOULD inside a diagram is skipped
```

<Note>
  Text inside a note is prose, and it
  SHALL count.
</Note>

## Tables

| Event | Rule |
| --- | --- |
| `W1` | a sender MUST NOT repeat it |
"""


@pytest.fixture
def sample(tmp_path) -> Path:
    path = tmp_path / "widgets.md"
    path.write_text(SAMPLE, encoding="utf-8")
    return path


def test_sample_sentences_sections_and_lines(sample):
    got = sentences(sample)
    lines = SAMPLE.splitlines()
    assert [s.section for s in got] == (
        ["(introduction)"] * 2 + ["Rules > WIDGET_EVENT"] * 7 + ["Tables"])
    assert [s.line for s in got] == [16, 16, 22, 22, 25, 26, 27, 28, 40, 48]
    assert [s.end_line for s in got][3] == 23  # the second sentence runs onto the next line
    for s in got:
        assert s.page == "widgets.md" and s.file == "widgets.md"  # not in the notes' table
        # the line recorded is the line the sentence starts on
        assert s.text.split()[0].strip("`;") in lines[s.line - 1]
    # header, comment, frontmatter, import, JSX, code and the diagram are skipped
    joined = " ".join(s.text for s in got)
    for skipped in ("example.invalid", "header comment", "frontmatter", "import", "Banner",
                    "inside code", "diagram", "sequenceDiagram"):
        assert skipped not in joined


def test_sample_splitting(sample):
    texts = [s.text for s in sentences(sample)]
    # no split after e.g. before a capital, nor at a decimal point, nor inside inline code
    assert texts[0].endswith("e.g. Dials and Knobs.")
    assert texts[1] == "Version 1.5 is current."
    assert any("`a. B`" in t for t in texts)
    # a paragraph split into its two sentences, the second joined across its line break
    assert texts[2] == "A sender MUST NOT emit a widget twice."
    assert texts[3] == "A receiver SHOULD log it, and MAY drop it."


def test_sample_markup_stripped(sample):
    rule = next(s for s in sentences(sample) if "linked" in s.text)
    assert rule.text == "A linked rule says a receiver MUST keep `a. B` intact."
    assert "](" not in rule.text and "**" not in rule.text


def test_sample_keywords(sample):
    by_start = {s.text[:12]: s for s in sentences(sample)}
    assert by_start["A sender MUS"].keyword == "MUST NOT"
    assert by_start["A receiver S"].keywords == ("SHOULD", "MAY")
    assert by_start["A receiver S"].keyword == "SHOULD"  # the strongest
    assert by_start["This default"].keyword == NORMATIVE
    assert by_start["This remark "].keyword == ""  # non-normative is not a marker
    assert by_start["Lower-case m"].keyword == ""  # lower case and MUSTARD do not count
    assert by_start["Text inside "].keyword == "SHALL"  # a Note's prose is kept
    assert by_start["`W1`; a send"].keyword == "MUST NOT"  # a table row is one block
    assert [s.keyword for s in extract(sample)] == [
        "MUST NOT", "SHOULD", "MUST", NORMATIVE, "SHALL", "MUST NOT"]


def test_rendered_banner_is_skipped(tmp_path):
    page = tmp_path / "widgets.md"
    page.write_text(
        '---\ntitle: "W"\n---\n\n<Warning>\n  **Draft notice.** Testing text with a MUST.\n'
        "</Warning>\n\nA widget MAY spin.\n\n## Later\n\n<Warning>\n  A later warning with a "
        "SHOULD is prose.\n</Warning>\n", encoding="utf-8")
    assert [(s.keyword, s.section) for s in extract(page)] == [
        ("MAY", "(introduction)"), ("SHOULD", "Later")]


def test_keyword_classes():
    assert same_keyword("SHALL", "MUST") and same_keyword("REQUIRED", "MUST")
    assert same_keyword("OPTIONAL", "MAY") and same_keyword("RECOMMENDED", "SHOULD")
    assert same_keyword("non-keyword", NORMATIVE) and same_keyword("informative", "")
    assert not same_keyword("MUST", "SHOULD") and not same_keyword("MUST", "MUST NOT")
    with pytest.raises(ValueError):
        keyword_class("must")


def test_page_key_from_file_name():
    assert page_key("/x/draft/activity.md") == "ACT" and page_key("1.0/snapshots.md") == "SNP"
    assert page_key("other.md") is None


def test_dependents_of_uses_the_given_table():
    deps = dependents_of(["ACT-TYPE-OPEN"], {"P-x": ("ACT-TYPE-OPEN",), "P-y": ("SNP-ATOMIC",)})
    assert deps["property"] == ("P-x",)
    assert dependents_of(["ACT-ATTR-AGREE"])["knob"] == ("Q2", "Q3")
    assert dependents_of([]) == {}


# --- the shared spec pages ------------------------------------------------------------------------

@needs_spec
def test_page_keys_agree_with_the_notes_table():
    assert page_keys_from_notes(SPEC / "notes.md") == PAGE_KEYS


@needs_spec
def test_activity_page_counts():
    for version in (DRAFT, V10):
        every = sentences(version / "activity.md")
        normative = extract(version / "activity.md")
        assert len(every) == 29
        assert len(normative) == 8
        assert Counter(s.keyword for s in normative) == {"MUST": 4, "MUST NOT": 3, "OPTIONAL": 1}
        # one sentence the page itself calls normative; it also carries OPTIONAL
        assert [s.keywords for s in every if NORMATIVE in s.keywords] == [("OPTIONAL", NORMATIVE)]
        assert {s.section for s in normative} == {
            "Events > ACTIVITY_SNAPSHOT", "Events > ACTIVITY_DELTA",
            "Activity messages in the conversation"}


def _notes_statements() -> dict[str, str]:
    """``{"N2": statement text}`` from notes part (a)."""
    out: dict[str, str] = {}
    current = None
    for line in (SPEC / "notes.md").read_text(encoding="utf-8").splitlines():
        m = re.match(r"- \*\*(N\d+)\*\*", line)
        if m:
            current = m.group(1)
            out[current] = line
        elif current and line.startswith("  "):
            out[current] += " " + line.strip()
        else:
            current = None
    return out


@needs_spec
def test_every_activity_duty_is_found_with_its_keyword_in_its_section():
    duties = [c for c in registry().values() if c.page == "ACT"
              and any(int(n[1:]) <= 30 for n in c.n_ids) and c.keyword in ("MUST", "MUST NOT")]
    assert {c.id for c in duties} == {
        "ACT-TYPE-OPEN", "ACT-ATTR-AGREE", "ACT-DELTA-REPEAT-TYPE", "ACT-DELTA-BASELINE",
        "ACT-DELTA-MISSING-NOFAIL", "ACT-DELTA-OBJECT", "ACT-STRIP-RUNINPUT"}
    notes = _notes_statements()
    report = coverage([DRAFT / "activity.md"])
    for clause in duties:
        # the registry's keyword is the notes' keyword
        (n_id,) = clause.n_ids
        assert clause.keyword in notes[n_id], n_id
        matched = [m.sentence for m in report.matches if m.clause_id == clause.id]
        assert matched, clause.id
        assert any(clause.keyword in s.keywords
                   and clause.section in s.section.split(" > ") for s in matched), clause.id


@needs_spec
def test_activity_coverage():
    report = coverage([DRAFT / "activity.md"])
    # Every keyword sentence of the page has an entry, every ACT entry has its sentence, and no
    # keyword differs: the exact sets are empty.
    assert report.unmatched == ()
    assert report.gone == ()
    assert report.keyword_changes == ()
    assert report.matched_share == 1.0
    by_line = {}
    for m in report.matches:
        if m.sentence.normative:
            by_line.setdefault(m.sentence.line, set()).add(m.clause_id)
    assert by_line == {
        56: {"ACT-TYPE-OPEN"},
        60: {"ACT-REPLACE-OPTIONAL", "ACT-SNAP-REPLACE-DEFAULT"},
        70: {"ACT-ATTR-AGREE", "ACT-ATTR-KEEP"},
        80: {"ACT-DELTA-REPEAT-TYPE", "ACT-DELTA-MAY-RETYPE", "ACT-DELTA-RETYPE"},
        85: {"ACT-DELTA-BASELINE"},
        88: {"ACT-DELTA-MISSING-NOFAIL", "ACT-DELTA-MISSING-WARN", "ACT-DELTA-MISSING"},
        91: {"ACT-DELTA-OBJECT"},
        101: {"ACT-STRIP-RUNINPUT"},
    }


@needs_spec
def test_coverage_of_the_activity_bearing_pages():
    report = coverage([DRAFT / f"{name}.md" for name in ("snapshots", "state", "metadata")])
    # snapshots and metadata: every keyword sentence has an entry. The state page's three keyword
    # sentences are about STATE_SNAPSHOT and the application's handling of state, which the
    # registry leaves out (it holds only what activity meets), so they have no entry.
    assert [(s.page, s.keyword) for s in report.unmatched] == [
        ("STA", "MUST"), ("STA", "MUST"), ("STA", "SHOULD NOT")]
    assert {s.section for s in report.unmatched} == {
        "Events > STATE_SNAPSHOT", "Security Considerations"}
    assert report.gone == ()
    # the registry's in-flight-message entries record what the state page leaves unstated: the
    # message's fate (MS-IN-FLIGHT) and, under X1=drop-open, its stream's (MS-IN-FLIGHT-OPEN)
    assert report.unstated == ("MS-IN-FLIGHT", "MS-IN-FLIGHT-OPEN")
    assert report.keyword_changes == ()


@needs_spec
@pytest.mark.parametrize("name", ["activity", "snapshots", "state"])
def test_draft_and_1_0_show_no_normative_difference(name):
    report = diff(DRAFT / f"{name}.md", V10 / f"{name}.md", coverage_table())
    # notes part (c): the same text apart from link prefixes, the banner and the description
    assert report.normative_changes == ()
    assert report.changes == ()
    assert report.unchanged == len(sentences(DRAFT / f"{name}.md")) > 0


def _edited_activity_page(tmp_path: Path) -> Path:
    """A copy of the draft activity page with two edits: the key word of the ACTIVITY_SNAPSHOT
    section's MUST sentence lowered to SHOULD, and the ACTIVITY_DELTA sentence that carries a
    SHOULD (a list item of its own) deleted."""
    src = DRAFT / "activity.md"
    lines = src.read_text(encoding="utf-8").split("\n")
    normative = extract(src)
    lowered = next(s for s in normative
                   if s.section.endswith("ACTIVITY_SNAPSHOT") and s.keywords == ("MUST",)
                   and "MUST" in lines[s.line - 1])
    deleted = next(s for s in normative
                   if s.section.endswith("ACTIVITY_DELTA") and "SHOULD" in s.keywords)
    assert lowered.line < deleted.line
    lines[lowered.line - 1] = lines[lowered.line - 1].replace("MUST", "SHOULD", 1)
    del lines[deleted.line - 1:deleted.end_line]
    out = tmp_path / "activity.md"
    out.write_text("\n".join(lines), encoding="utf-8")
    return out


@needs_spec
def test_synthetic_edit_is_a_keyword_change_and_a_removal(tmp_path):
    edited = _edited_activity_page(tmp_path)
    report = diff(DRAFT / "activity.md", edited, coverage_table())
    assert [c.kind for c in report.changes] == ["changed", "removed"]
    changed, removed = report.changes
    assert changed.keyword_change == (("MUST",), ("SHOULD",))
    assert report.keyword_changes == (changed,)
    assert changed.clauses == ("ACT-TYPE-OPEN",)
    assert "P05-snapshot-creates" in changed.dependents["property"]
    assert removed.old.keywords == ("SHOULD", "MUST NOT") and removed.new is None
    assert set(removed.clauses) == {
        "ACT-DELTA-MISSING", "ACT-DELTA-MISSING-WARN", "ACT-DELTA-MISSING-NOFAIL"}
    assert {"P12-delta-missing-tolerated", "P13-delta-missing-warned"} <= set(
        removed.dependents["property"])
    assert "delta.missing" in removed.dependents["branch"]
    assert report.normative_changes == report.changes
    assert report.unchanged == 27
    # a knob depends on a clause whose sentence changes: lower the ACT-ATTR-AGREE sentence too
    assert dependents_of(("ACT-ATTR-AGREE",), coverage_table())["knob"] == ("Q2", "Q3")

    # coverage of the edited page sees the same two edits from the registry's side
    cov = coverage([edited])
    assert [(k.clause_id, k.clause_keyword, k.sentence.keywords) for k in cov.keyword_changes] \
        == [("ACT-TYPE-OPEN", "MUST", ("SHOULD",))]
    # The deleted sentence held three clauses. The warning clause (a SHOULD) is then matched to
    # the lowered sentence, which now carries a SHOULD and shares the consumer's words: word
    # overlap cannot tell them apart, so only two of the three are reported gone.
    assert cov.gone == ("ACT-DELTA-MISSING", "ACT-DELTA-MISSING-NOFAIL")


@needs_spec
def test_diff_of_a_knob_clause(tmp_path):
    """Lowering the key word of the ACT-ATTR-AGREE sentence names the knobs that sit on it."""
    src = DRAFT / "activity.md"
    lines = src.read_text(encoding="utf-8").split("\n")
    target = next(s for s in extract(src)
                  if s.section.endswith("ACTIVITY_SNAPSHOT") and s.keywords == ("MUST",)
                  and "MUST" not in lines[s.line - 1])
    for i in range(target.line - 1, target.end_line):
        if "MUST" in lines[i]:
            lines[i] = lines[i].replace("MUST", "SHOULD", 1)
            break
    out = tmp_path / "activity.md"
    out.write_text("\n".join(lines), encoding="utf-8")
    (change,) = diff(src, out, coverage_table()).changes
    assert change.keyword_change == (("MUST",), ("SHOULD",))
    assert "ACT-ATTR-AGREE" in change.clauses
    assert {"Q2", "Q3"} <= set(change.dependents["knob"])


# --- the command line ---------------------------------------------------------------------------

@needs_spec
def test_cli_spec_commands(capsys, tmp_path):
    code, out, err = cli(capsys, "spec", "clauses", DRAFT / "activity.md", "--json")
    assert code == 0 and err == ""
    rows = json.loads(out)
    assert len(rows) == 8 and rows[0]["page"] == "ACT" and rows[0]["keyword"] == "MUST"
    code, out, _ = cli(capsys, "spec", "clauses", DRAFT / "activity.md", "--all", "--json")
    assert code == 0 and len(json.loads(out)) == 29
    code, out, _ = cli(capsys, "spec", "clauses", DRAFT / "activity.md")
    assert code == 0 and "ACTIVITY_DELTA" in out

    code, out, _ = cli(capsys, "spec", "coverage", DRAFT / "activity.md", DRAFT / "snapshots.md",
                       "--json")
    report = json.loads(out)
    assert code == 0 and report["pages"] == ["ACT", "SNP"] and report["unmatched"] == []
    assert report["gone"] == [] and report["matchedShare"] == 1.0
    code, out, _ = cli(capsys, "spec", "coverage", DRAFT / "activity.md")
    assert code == 0 and "sentences with no entry: none" in out

    code, out, _ = cli(capsys, "spec", "diff", DRAFT / "activity.md", V10 / "activity.md",
                       "--json")
    assert code == 0 and json.loads(out)["normativeDifference"] is False
    code, out, _ = cli(capsys, "spec", "diff", DRAFT / "snapshots.md", V10 / "snapshots.md")
    assert code == 0 and "no normative difference" in out

    edited = _edited_activity_page(tmp_path)
    code, out, _ = cli(capsys, "spec", "diff", DRAFT / "activity.md", edited, "--json")
    got = json.loads(out)
    assert code == 0 and got["normativeDifference"] is True and got["keywordChanges"] == 1
    assert got["counts"] == {"added": 0, "removed": 1, "changed": 1, "moved": 0}
    assert "ACT-TYPE-OPEN" in got["affectedClauses"]
    code, out, _ = cli(capsys, "spec", "diff", DRAFT / "activity.md", edited)
    assert code == 0 and "MUST -> SHOULD" in out and "P05-snapshot-creates" in out


def test_cli_spec_usage_errors(capsys, tmp_path, sample):
    missing = tmp_path / "nope.md"
    for argv in (("spec", "clauses", missing), ("spec", "coverage", sample, missing),
                 ("spec", "diff", missing, sample), ("spec", "diff", sample, missing)):
        code, out, err = cli(capsys, *argv)
        assert code == 2 and out == ""
        assert err.splitlines() == [f"{ERROR_PREFIX} {missing}: no such file"]
    code, _, err = cli(capsys, "spec", "diff", sample)
    assert code == 2 and len(err.splitlines()) == 1 and "two files" in err
    code, _, err = cli(capsys, "spec", "diff", sample, sample, sample)
    assert code == 2 and len(err.splitlines()) == 1
    code, _, err = cli(capsys, "spec", "clauses", tmp_path)
    assert code == 2 and err.strip() == f"{ERROR_PREFIX} {tmp_path}: not a file"
    binary = tmp_path / "binary.md"
    binary.write_bytes(b"\xff\xfe\x00 not text")
    code, _, err = cli(capsys, "spec", "clauses", binary)
    assert code == 2 and err.strip() == f"{ERROR_PREFIX} {binary}:1:1: not UTF-8 text (invalid start byte at byte 0)"
    code, _, err = cli(capsys, "spec", "summarise", sample)
    assert code == 2 and err.startswith(ERROR_PREFIX) and len(err.splitlines()) == 1
    code, _, err = cli(capsys, "spec")
    assert code == 2 and len(err.splitlines()) == 1


def test_cli_spec_on_a_page_of_our_own(capsys, sample):
    code, out, _ = cli(capsys, "spec", "coverage", sample, "--json")
    report = json.loads(out)
    # a page the notes' table does not name matches no clause: its keyword sentences are all
    # reported as having no entry
    assert code == 0 and report["pages"] == ["widgets.md"] and report["matches"] == []
    assert len(report["unmatched"]) == 6 and report["gone"] == []
    code, out, _ = cli(capsys, "spec", "diff", sample, sample, "--json")
    assert code == 0 and json.loads(out)["changes"] == []


def test_sentence_is_frozen(sample):
    s = sentences(sample)[0]
    assert isinstance(s, Sentence)
    with pytest.raises(AttributeError):
        s.text = "x"  # type: ignore[misc]


def test_cli_says_when_a_file_is_no_spec_page_or_pages_differ(tmp_path, capsys):
    from activity_check.cli import main
    notes = tmp_path / "notes.md"
    notes.write_text("# Notes\n\nSome plain words here. Nothing required.\n", encoding="utf-8")
    assert main(["spec", "coverage", str(notes)]) == 0
    assert "no normative one: is" in capsys.readouterr().out
    other = tmp_path / "other.md"
    other.write_text("# Other\n\nA producer MUST do it.\n", encoding="utf-8")
    assert main(["spec", "diff", str(notes), str(other)]) == 0
    assert "different file names" in capsys.readouterr().err
