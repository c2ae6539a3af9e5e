"""Hostile input (issue 18): every string that comes from a trace, a finding, a vocabulary, a spec
page or an adapter's answer is data wherever it goes. On the terminal: never read as rich markup
(``[/]`` used to crash ``replay``, ``peer check`` and ``explore``; ``[link=...]`` became a
hyperlink), never obeyed as a control sequence (ESC, BEL, CR, the bidirectional overrides are
shown escaped), long values cut in tables while ``--json`` keeps them whole; in error lines, one
line whatever the value holds. In every export format (the second half): JSON and JSON lines
carry it back exactly, ITF stays valid, Mermaid keeps to the diagram's own lines, and the
generated pytest module parses, says what the finding says, and when run does only that.
"""
from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import jsonschema
import pytest

from activity_check.cli import main
import counterexamples.report.export as export_module
from counterexamples.report.export import ITF_SCHEMA, export, to_json, to_jsonl, to_mermaid, to_pytest
from counterexamples.findings import (AmbiguityFinding, PeerDivergenceFinding, PropertyFinding,
                                      VerdictClassEntry)
from model.text import CUT_NOTE, visible
from model.verdict import partition
from model.wire import parse_events

ERROR_PREFIX = "activity-check: error:"

MARKUP = ["[/]", "[link=https://evil.example/]click[/link]", "[bold red]x", "[/bold]", "a\\",
          "[@click=app.quit]q"]
"""Strings rich would read as markup (a closing tag with nothing open raises MarkupError)."""

CONTROL = ["\x1b]0;pwned\x07", "\x1b[2J", "\x1b[31mred", "back\rspace", "\u202eevil",
           "nul\x00byte", "del\x7f", "c1\x9b31m", "line\nbreak"]
"""Strings a terminal would obey: set the title, clear the screen, colour, overwrite the line,
reverse the text, a NUL, DEL, the C1 CSI, a newline inside a value."""

OBEYED = ["\x1b", "\x07", "\x00", "\r", "\u202e", "\x7f", "\x9b"]
"""Characters that must never reach the terminal raw."""


def cli(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def assert_inert(text: str) -> None:
    """Nothing in ``text`` is obeyed rather than shown, and nothing became a hyperlink."""
    for ch in OBEYED:
        assert ch not in text, (repr(ch), text[:400])
    assert "\x1b]8;" not in text  # an OSC 8 hyperlink


def write_trace(path: Path, events) -> Path:
    path.write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")
    return path


def trace_with(ids, types, content=None):
    events = [{"type": "RUN_STARTED", "threadId": "t", "runId": "r"}]
    for mid, atype in zip(ids, types):
        events.append({"type": "ACTIVITY_SNAPSHOT", "messageId": mid, "activityType": atype,
                       "content": content if content is not None else {"v": mid}})
    return events


# --- the helper ---------------------------------------------------------------------------------

@pytest.mark.parametrize("raw, shown", [
    ("a\x1b[2Jb", "a\\x1b[2Jb"), ("\x07", "\\x07"), ("x\ny", "x\\ny"), ("\r", "\\r"),
    ("\u202e", "\\u202e"), ("\x9b", "\\x9b"), ("\x00", "\\x00"),
    ("plain [/] text", "plain [/] text"),
    ("é ü 中", "é ü 中"),
])
def test_visible_escapes_what_a_terminal_obeys_and_keeps_the_rest(raw, shown):
    assert visible(raw) == shown


def test_visible_cuts_at_the_limit_and_says_how_much():
    assert visible("x" * 500, 10) == "x" * 10 + CUT_NOTE.format(n=490)
    assert visible("x" * 500, None) == "x" * 500
    start = time.monotonic()
    assert visible("\x1b" * 50_000_000, 4) == "\\x1b" * 4 + CUT_NOTE.format(n=49_999_996)
    assert time.monotonic() - start < 2  # only the part kept is scanned


# --- replay -------------------------------------------------------------------------------------

@pytest.mark.parametrize("hostile", MARKUP + CONTROL)
def test_replay_shows_hostile_ids_and_types_as_written(tmp_path, capsys, hostile):
    f = write_trace(tmp_path / "t.jsonl", trace_with([hostile], [hostile]))
    code, out, err = cli(capsys, "replay", f, "--all-readings")
    assert code == 0, err
    assert err == ""
    assert_inert(out)
    assert visible(hostile) in out  # shown, escaped where a terminal would obey it
    # the JSON keeps the value whole
    code, out, _ = cli(capsys, "replay", f, "--json")
    assert code == 0
    assert json.loads(out)["messages"][0]["id"] == hostile


def test_replay_of_a_hostile_file_name(tmp_path, capsys):
    name = "[link=https:evil.example]t\x1b[2J.jsonl"
    f = write_trace(tmp_path / name, trace_with(["a1"], ["PLAN"]))
    code, out, err = cli(capsys, "replay", f)
    assert code == 0, err
    assert_inert(out)
    assert "[link=https:evil.example]t\\x1b[2J.jsonl" in out


def test_a_malformed_event_s_error_line_stays_one_line(tmp_path, capsys):
    events = [{"type": "RUN_STARTED", "threadId": "t", "runId": "r"},
              {"type": "ACTIVITY_SNAPSHOT", "messageId": "a\x1b[2J\nb", "activityType": "T"}]
    f = write_trace(tmp_path / "m.jsonl", events)
    code, out, err = cli(capsys, "replay", f)
    assert code == 2
    assert err.count("\n") == 1 and err.startswith(ERROR_PREFIX), err
    assert_inert(err)


def test_the_table_of_a_huge_content_is_bounded_and_the_json_whole(tmp_path, capsys):
    """A 20 MB content object (10 MB took 42 s, 100 MB never ended): the table cell is cut,
    ``--json`` is untouched."""
    blob = "x" * 20_000_000
    f = write_trace(tmp_path / "big.jsonl", trace_with(["a1"], ["PLAN"], {"blob": blob}))
    start = time.monotonic()
    code, out, err = cli(capsys, "replay", f, "--all-readings")
    seconds = time.monotonic() - start
    assert code == 0, err
    assert seconds < 30, seconds
    assert len(out) < 20_000
    assert "more characters)" in out
    code, out, _ = cli(capsys, "replay", f, "--json")
    assert code == 0 and json.loads(out)["messages"][0]["content"]["blob"] == blob


# --- explore and run with a hostile vocabulary --------------------------------------------------

def test_explore_with_markup_and_escapes_in_the_vocabulary(tmp_path, capsys):
    vocabulary = tmp_path / "v.json"
    vocabulary.write_text(json.dumps({"activityIds": ["[/]", "b\x1b[2J"],
                                      "activityTypes": ["[link=https://evil.example/]T"]}),
                          encoding="utf-8")
    code, out, err = cli(capsys, "explore", "--depth", "3", "--vocabulary", vocabulary)
    assert code == 0, err
    assert_inert(out)
    code, out, err = cli(capsys, "explore", "--depth", "3", "--vocabulary", vocabulary, "--wide")
    assert code == 0, err
    assert_inert(out)  # the full table: a trace cell on one line
    assert "ACTIVITY_SNAPSHOT [/] [link=https://evil.example/]T" in out
    code, out, _ = cli(capsys, "explore", "--depth", "3", "--vocabulary", vocabulary, "--json")
    assert code == 0
    assert any(e.get("messageId") == "[/]" for s in json.loads(out)["splits"].values()
               for e in s["trace"])


def test_run_with_markup_in_the_vocabulary(tmp_path, capsys):
    vocabulary = tmp_path / "v.json"
    vocabulary.write_text(json.dumps({"activityIds": ["[/]", "[link=https://e.example/]b"],
                                      "activityTypes": ["[/b]", "\x1b[2J"]}), encoding="utf-8")
    code, out, err = cli(capsys, "run", "--examples", "20", "--bfs-depth", "0",
                         "--vocabulary", vocabulary, "--out", tmp_path / "o")
    assert code == 0, err
    assert_inert(out)


# --- peer check: hostile trace ids and values ---------------------------------------------------

def test_peer_check_of_hostile_traces(tmp_path, capsys):
    files = []
    for i, hostile in enumerate(MARKUP[:3] + CONTROL[:3]):
        files.append(write_trace(tmp_path / f"t{i}[b].jsonl", trace_with([hostile], [hostile])))
    code, out, err = cli(capsys, "peer", "check", "--adapter", "model", *files)
    assert code == 0, err
    assert_inert(out)
    assert "t0[b].jsonl" in out


# --- spec pages ---------------------------------------------------------------------------------

def test_spec_sentences_with_brackets_are_shown_as_written(tmp_path, capsys):
    page = tmp_path / "page.md"
    page.write_text("# Title [bold]\n\nA consumer MUST keep [/] and [link=x]y as sent.\n"
                    "A producer MUST NOT send \x1b[2J.\n", encoding="utf-8")
    code, out, err = cli(capsys, "spec", "clauses", page)
    assert code == 0, err
    assert_inert(out)
    assert "keep [/] and [link=x]y as sent." in out and "send \\x1b[2J." in out


# --- error lines --------------------------------------------------------------------------------

def test_a_usage_error_naming_a_hostile_value_is_one_inert_line(tmp_path, capsys):
    code, out, err = cli(capsys, "replay", tmp_path / "no\x1b[2J\nsuch.jsonl")
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith(ERROR_PREFIX), err
    assert_inert(err)
    assert "no\\x1b[2J\\nsuch.jsonl" in err


# --- every export format ------------------------------------------------------------------------
# A finding's strings are data in every medium. Every field a finding carries (its id, question, explanation, the trace's ids, types,
# owners, content and metadata, a peer's name, verdict and log, a property's statement) holds
# strings built to break out: triple quotes and quotes for Python, NUL and other control
# characters, newlines and ``;``/``%%``/``-->>`` for Mermaid, markup and escape sequences for the
# terminal, a very long value. The generated pytest module is parsed, then run in a subprocess:
# its tests pass, and the file a payload would create does not appear.

SENTINEL_NAME = "PWNED"


def payloads(sentinel: Path) -> list[str]:
    """Strings that would run code, end a line or a literal, or drive a terminal."""
    code = f'open({str(sentinel)!r}, "w").write("pwned")'
    return [
        f'"""\n{code}\n"""', f"'''\n{code}\n'''", f'"; {code}; "', f"'); {code}; ('",
        '"', "'", "\\", "\\\\'''", 'end"', "\x00nul", "\x1b]0;title\x07", "\x1b[2J", "\r\nx",
        "\u2028", "\u202eevil", "[/]", "[link=https://evil.example/]x[/link]",
        "%%{init: {}}%%", "-->>Producer: forged", ";\nNote over Consumer: forged", "#59;",
        "<script>alert(1)</script>", "&lt;", "{}", "${x}", "x" * 5000,
    ]


def hostile_trace(strings: list[str]) -> list[dict]:
    """A trace whose every id, type, owner, content and metadata is a hostile string, ending in
    a ``replace: false`` snapshot with metadata (which Q1 splits on)."""
    wire = [{"type": "RUN_STARTED", "threadId": strings[0], "runId": strings[1]}]
    for i, s in enumerate(strings):
        wire.append({"type": "ACTIVITY_SNAPSHOT", "messageId": f"{i}:{s}", "activityType": s,
                     "content": {s: s, "n": i}, "subagentRunId": s})
    wire.append({"type": "ACTIVITY_SNAPSHOT", "messageId": f"0:{strings[0]}",
                 "activityType": strings[0], "content": {"later": strings[-1]},
                 "replace": False, "metadata": {s: s for s in strings}})
    return wire


def classes_of(wire):
    return [VerdictClassEntry.of(c.assignments, c.verdict) for c in partition(parse_events(wire))]


def hostile_findings(sentinel: Path, finding_id=None):
    """An ambiguity, a peer divergence and a property finding, every text field hostile
    (``finding_id``: the ids too, unless given)."""
    strings = payloads(sentinel)
    bad_id = strings[0]
    wire = hostile_trace(strings)
    events = parse_events(wire)
    classes = classes_of(wire)
    assert len(classes) >= 2
    amb = AmbiguityFinding.of("Q1", events, classes, ({"Q1": "merge"}, {"Q1": "ignore"}),
                              strings, "\n".join(strings)).to_json()
    amb.update(id=finding_id or "AMB-Q1-00000000" + bad_id, question=" ".join(strings))
    peer = {"id": finding_id or "PEER-x-00000000" + bad_id, "kind": "peer-divergence",
            "adapter": bad_id, "peer": " ".join(strings), "source": strings[2],
            "clauses": strings, "relatedClauses": strings, "branch": strings[3],
            "divergesAt": len(wire) - 1, "event": strings[4], "nearest": classes[0].readings[0],
            "aspects": strings, "compared": strings, "conformant": True,
            "producerViolations": strings, "explanation": "\n".join(strings),
            "length": len(wire), "shrunk": True, "events": wire,
            "initialState": {s: s for s in strings},
            "peerVerdict": {"messages": [{"id": s, "role": s, "content": {s: s}}
                                         for s in strings],
                            "fatal": {"atEvent": 1, "detail": bad_id}, "warnings": None,
                            "runInput": None, "log": strings},
            "verdicts": [c.to_json() for c in classes]}
    prop = {"id": finding_id or "PROP-P01-00000000" + bad_id, "kind": "property",
            "property": "P01-unique-ids", "statement": " ".join(strings), "clauses": strings,
            "consumer": "reference", "reading": "draft", "atEvent": len(wire) - 1,
            "explanation": "\n".join(strings), "length": len(wire), "events": wire}
    return [AmbiguityFinding(amb), PeerDivergenceFinding(peer), PropertyFinding(prop)]


OBEYED_IN_MERMAID = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
"""Characters that must not reach a Mermaid line raw (tab and newline aside)."""

MERMAID_LINE = re.compile(r"^(sequenceDiagram|    participant (Producer|Consumer)|"
                          r"    Note over (Producer,Consumer|Consumer): .*|"
                          r"    Producer->>Consumer: .*)$")


@pytest.fixture
def sentinel(tmp_path) -> Path:
    return tmp_path / "elsewhere" / SENTINEL_NAME


def test_jsonl_and_json_carry_every_hostile_string_back(sentinel):
    for finding in hostile_findings(sentinel):
        text = to_jsonl(finding)
        lines = text.split("\n")  # JSON lines end at "\n" only (a raw U+2028 is inside one)
        assert lines[-1] == "" and len(lines) == len(finding.wire) + 1
        assert [json.loads(line) for line in lines[:-1]] == list(finding.wire)
        assert json.loads(to_json(finding)) == finding.to_json()


def test_itf_is_valid_and_keeps_the_trace_exactly(sentinel):
    for finding in hostile_findings(sentinel):
        doc = json.loads(export(finding, "itf"))
        jsonschema.validate(doc, ITF_SCHEMA)
        assert doc["#meta"]["finding"] == finding.id
        assert [json.loads(s["event"]["wireJson"]) for s in doc["states"][1:]] == \
            list(finding.wire)


def test_mermaid_lines_are_only_the_diagram_s_own(sentinel):
    for finding in hostile_findings(sentinel):
        text = to_mermaid(finding)
        lines = text.splitlines()
        assert text.endswith("\n") and len(text.split("\n")) == len(lines) + 1
        for line in lines:
            assert MERMAID_LINE.match(line), line[:200]
            assert not OBEYED_IN_MERMAID.search(line), line[:200]
            label = line.partition(": ")[2]
            # ; # % < > " only inside the entity codes the exporter writes (and our <br/>)
            bare = re.sub(r"#\d+;|#[a-z]+;|<br/>", "", label)
            assert not set(bare) & set(';#%<>"{}&\\'), (finding.id[:20], bare[:200])
        assert sum(1 for line in lines if line.startswith("    Producer->>Consumer: ")) == \
            len(finding.wire)
        assert "forged" not in "".join(line for line in lines
                                       if not line.startswith(("    Producer->>", "    Note")))


def test_pytest_module_parses_says_what_the_finding_says_and_runs_nothing_else(sentinel,
                                                                               tmp_path):
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    expected_passed = expected_skipped = 0
    for n, finding in enumerate(hostile_findings(sentinel)):
        text = to_pytest(finding)
        tree = ast.parse(text)
        assert ast.get_docstring(tree, clean=False).count(finding.id) == 1
        ids = [ast.literal_eval(node.value) for node in tree.body
               if isinstance(node, ast.Assign) and node.targets[0].id == "FINDING_ID"]
        assert ids == [finding.id]
        assert "\x00" not in text and "\x1b" not in text and "\u2028" not in text
        (run_dir / f"test_hostile_{n}.py").write_text(text, encoding="utf-8")
        if isinstance(finding, PropertyFinding):
            expected_passed += 1
        else:
            expected_passed += len(finding["verdicts"])
            expected_skipped += isinstance(finding, PeerDivergenceFinding)
    before = sorted(os.listdir(run_dir))
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           "-rs", str(run_dir)], cwd=run_dir, capture_output=True, text=True,
                          timeout=300, env=env)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert re.search(rf"\b{expected_passed} passed\b", proc.stdout), proc.stdout[-800:]
    assert re.search(rf"\b{expected_skipped} skipped\b", proc.stdout), proc.stdout[-800:]
    assert not sentinel.exists() and not sentinel.parent.exists()
    assert not list(tmp_path.rglob(SENTINEL_NAME))
    assert sorted(os.listdir(run_dir)) == before  # it wrote nothing beside itself


def test_a_generated_module_that_would_not_parse_is_refused(sentinel, monkeypatch, tmp_path,
                                                            capsys):
    """The check after generation catches what an escaping mistake would let through: with the
    docstring left unescaped, export refuses (exit 2) instead of writing the file."""
    finding = hostile_findings(sentinel, finding_id="AMB-Q1-00000000")[0]
    path = tmp_path / "AMB-Q1-00000000.json"
    path.write_text(json.dumps(finding.to_json()), encoding="utf-8")
    monkeypatch.setattr(export_module, "_py_docstring", lambda text: '"""' + text + '"""')
    out = tmp_path / "test_x.py"
    code = main(["export", str(path), "--format", "pytest", "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1, err
    assert "not written" in err and not out.exists()
    assert not sentinel.exists()


def test_cli_refuses_a_finding_whose_id_is_not_of_the_scheme_in_one_inert_line(sentinel,
                                                                               tmp_path,
                                                                               capsys):
    for n, finding in enumerate(hostile_findings(sentinel)):
        path = tmp_path / f"f{n}.json"
        path.write_text(json.dumps(finding.to_json()), encoding="utf-8")
        for fmt in ("jsonl", "json", "itf", "mermaid", "pytest"):
            code = main(["export", str(path), "--format", fmt])
            out, err = capsys.readouterr()
            assert (code, out) == (2, ""), (fmt, err)
            assert err.count("\n") == 1 and "not a finding id" in err, err[:300]
            assert not OBEYED_IN_MERMAID.search(err)


def test_cli_exports_hostile_fields_under_a_valid_id_in_every_format(sentinel, tmp_path,
                                                                     capsys):
    for n, finding in enumerate(hostile_findings(sentinel, finding_id=None)):
        doc = finding.to_json()
        doc["id"] = {"ambiguity": "AMB-Q1", "peer-divergence": "PEER-x",
                     "property": "PROP-P01"}[doc["kind"]] + "-0000000" + str(n)
        path = tmp_path / f"{doc['id']}.json"
        path.write_text(json.dumps(doc), encoding="utf-8")
        for fmt in ("jsonl", "json", "itf", "mermaid", "pytest"):
            target = tmp_path / f"test_{n}_{fmt}.out"
            code = main(["export", str(path), "--format", fmt, "--out", str(target)])
            assert code == 0, capsys.readouterr().err
            if fmt == "pytest":
                ast.parse(target.read_text(encoding="utf-8"))
    assert not sentinel.exists()
