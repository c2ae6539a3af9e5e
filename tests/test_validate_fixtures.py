"""ag-ui-validate's fixture corpus side by side with the model (issue 19, item 5;
counterexamples/peers/validators.py): every fixture through the producer monitor and the draft
consumer, each in exactly one of agrees / differs-argued / out-of-scope, and the table in
docs/lint.md is what the code computes (so it cannot go stale)."""
from __future__ import annotations

import json
import pathlib

import pytest

import counterexamples.peers.validators as vf

pytest.importorskip("ag_ui_validate", reason="ag-ui-validate (the dev extra) is not installed")

DOC = pathlib.Path(__file__).resolve().parent.parent / "docs" / "lint.md"


@pytest.fixture(scope="module")
def rows():
    return vf.compare_corpus()


def test_every_fixture_is_in_exactly_one_category(rows):
    root = vf.fixtures_root()
    on_disk = sorted(f"invalid/{d.name}" for d in (root / "invalid").iterdir() if d.is_dir()) + \
        sorted(f"valid/{f.name}" for f in (root / "valid").iterdir() if f.name.endswith(".jsonl"))
    assert [r.fixture for r in rows] == on_disk
    assert all(r.category in vf.CATEGORIES for r in rows), \
        [(r.fixture, r.theirs, r.lint) for r in rows if r.category not in vf.CATEGORIES]
    assert sum(vf.counts(rows).values()) == len(rows) == len(on_disk)


def test_arguments_and_scope_are_neither_stale_nor_overlapping(rows):
    assert not set(vf.ARGUED) & set(vf.OUT_OF_SCOPE)
    by_rule = {}
    for r in rows:
        by_rule.setdefault(r.rule, []).append(r)
    # every argument is for a fixture that differs; every scope reason names a fixture
    for rule in vf.ARGUED:
        assert [r.category for r in by_rule[rule]] == ["differs-argued"], rule
    for rule in vf.OUT_OF_SCOPE:
        assert [r.category for r in by_rule[rule]] == ["out-of-scope"], rule
    for rule in vf.NOTES:
        assert [r.category for r in by_rule[rule]] == ["agrees"], rule
    # an argued difference names a page and a section, and every agreement is one of severity
    for r in rows:
        if r.category == "differs-argued":
            assert r.why.split(",")[0] in {"lifecycle", "snapshots", "state", "subagents"}
            assert (r.theirs if r.theirs != "info" else "none") != r.lint
        if r.category == "agrees":
            assert (r.theirs if r.theirs != "info" else "none") == r.lint


def test_the_two_sides_are_really_run(rows):
    row = {r.rule: r for r in rows}
    assert row["AGUI002"].lint_clauses == ("LIF-ONE-ACTIVE",)
    assert row["AGUI002"].replay == "fatal RUN_ALREADY_ACTIVE at 1"
    assert row["AGUI005"].replay == "run errored"          # a late failure fails the run
    assert row["AGUI502"].replay.startswith("refused (exit 2): line 2:")   # replay's own reader
    assert row["AGUI302"].replay == "warns STATE_PATCH_FAILED; run finished"


def test_the_documented_table_is_what_the_code_computes(rows):
    text = DOC.read_text(encoding="utf-8")
    assert text.count(vf.README_START) == 1 and text.count(vf.README_END) == 1
    start = text.index(vf.README_START) + len(vf.README_START)
    table = text[start:text.index(vf.README_END)].strip("\n") + "\n"
    assert table == vf.markdown_table(rows)


def _fake_corpus(tmp: pathlib.Path, fixtures: dict[str, tuple[list, list]]) -> pathlib.Path:
    for name, (events, expected) in fixtures.items():
        d = tmp / "invalid" / name
        d.mkdir(parents=True)
        (d / "stream.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))
        (d / "expected.json").write_text(json.dumps(expected))
    (tmp / "valid").mkdir()
    return tmp


def test_a_difference_without_an_argument_is_caught(tmp_path):
    rs = {"type": "RUN_STARTED", "threadId": "t", "runId": "r"}
    rf = {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"}
    error = [{"rule": "X", "severity": "error"}]
    root = _fake_corpus(tmp_path, {
        "AGUI999-conformant-but-called-an-error": ([rs, rf], error),
        "AGUI002-agrees": ([rs, rs, rf], error),
        "AGUI101-out-of-scope-whatever-the-verdict": ([rs, rf], error)})
    got = {r.rule: r.category for r in vf.compare_corpus(root)}
    assert got == {"AGUI999": "differs-unargued", "AGUI002": "agrees",
                   "AGUI101": "out-of-scope"}
