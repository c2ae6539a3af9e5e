"""Hostile input (issue 18): every string that comes from a trace, a finding, a vocabulary, a spec
page or an adapter's answer is data wherever it goes. On the terminal: never read as rich markup
(``[/]`` used to crash ``replay``, ``peer check`` and ``explore``; ``[link=...]`` became a
hyperlink), never obeyed as a control sequence (ESC, BEL, CR, the bidirectional overrides are
shown escaped), long values cut in tables while ``--json`` keeps them whole; in error lines, one
line whatever the value holds.
"""
from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from activity_check.cli import main
from model.text import CUT_NOTE, visible

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
    ("\u202e", "\\u202e"), ("\x9b", "\\x9b"), ("\x00", "\\x00"), ("plain [/] text", "plain [/] text"),
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
