"""The front page works as written (issue 37, item 4).

* Every command of the README's "Start here" blocks runs, in a temporary directory that sees the
  repository's files (and ``../shared`` beside it), with the exit status 0 and what the README
  says the user will see. Commands of features still being written elsewhere are listed in
  :data:`PENDING_COMMANDS` with the reason; they are run too, and must still fail, so that the
  list is emptied as the features land.
* Every link between the README and ``docs/`` (and within ``docs/``) resolves to a file and, where
  it has a ``#anchor``, to a heading of that file (GitHub's anchor rule). Pages other changes are
  writing are listed in :data:`PENDING_DOCS`; the integrator empties it once they are merged.
* Every page of ``docs/`` is reachable from the README; the README stays short (at most
  :data:`MAX_README_LINES` lines) and carries no dated figures, commit hashes or issue numbers.
* Every concrete ``activity-check`` command line in a code block of the README or ``docs/``
  parses with the real command-line parser.
"""
from __future__ import annotations

import os
import pathlib
import re
import shlex
import subprocess
import sys

import pytest

from activity_check.cli import COMMANDS, UsageError, build_parser

ROOT = pathlib.Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
SHARED = ROOT.parent / "shared"
MAX_README_LINES = 250

PENDING_DOCS: set = set()
"""Pages that other changes write at the same time; a link to one may not resolve yet. Empty
this set once they are merged (a page listed here that exists fails the test)."""

PENDING_COMMANDS = {
}
"""Start-here commands of features other changes deliver, with the reason they cannot run yet.
Each is still run, and must fail; one that succeeds fails the test, to be removed from here."""

COVERED_ELSEWHERE = {
    "jupyter execute notebooks/04-messages-snapshot-and-run-input.ipynb":
        ("tests/test_notebooks.py executes every notebook",
         "notebooks/04-messages-snapshot-and-run-input.ipynb"),
}
"""Start-here commands another test runs in full, with the file they need (checked here)."""

EXPECT = {
    "activity-check questions": "25 of 25 questions settled",
    "activity-check resolve --pin Q2=parent,Q8=keep": "2 decided, 8 closed, 16 open",
    "activity-check readings": "Q8",
    "activity-check peer check --adapter \"$ADAPTER\"": "0 with none, 0 errors",
    "activity-check lint docs/examples/streams/agent-run.jsonl": "0 error(s), 0 warning(s): conformant",
    "activity-check questions --out review": "witness files (the witness file column): in "
                                             "review/questions",
    "activity-check replay review/questions/Q8.jsonl --all-readings": "Q8=keep",
    "activity-check replay docs/examples/streams/agent-run.jsonl": "run: finished",
    "activity-check conformance generate --out activity-corpus": "fixtures written to",
    'activity-check conformance run ../shared/data/ag-ui-conformance/draft activity-corpus '
    '--adapter "$ADAPTER" --third-party --junit activity.xml': "0 unargued",
    "activity-check lint docs/examples/streams/ --format junit --out lint.xml":
        "report written to lint.xml",
    "activity-check replay docs/examples/streams/agent-run.jsonl --reading lenient --json":
        '"run": "finished"',
}
"""What each runnable start-here command prints (a substring of its stdout): every runnable
command must have an entry, so that none is run without a check of what the user sees."""

FILES_MADE = {
    "activity-check questions --out review": ["review/questions.html", "review/questions/Q8.jsonl"],
    "activity-check conformance generate --out activity-corpus":
        ["activity-corpus/streams/MANIFEST.txt", "activity-corpus/coverage.md"],
    'activity-check conformance run ../shared/data/ag-ui-conformance/draft activity-corpus '
    '--adapter "$ADAPTER" --third-party --junit activity.xml': ["activity.xml"],
    "activity-check lint docs/examples/streams/ --format junit --out lint.xml": ["lint.xml"],
}
"""Files a command must leave, relative to the directory it runs in."""


# -- reading the Markdown ------------------------------------------------------------------------

_FENCE = re.compile(r"^```([^\n`]*)\n(.*?)^```\s*$", re.M | re.S)


def _without_code(text: str) -> str:
    """The text with fenced blocks and inline code removed (links there are not links)."""
    text = _FENCE.sub("", text)
    return re.sub(r"`[^`\n]*`", "", text)


def _sections(text: str, level: int = 2) -> dict[str, str]:
    """``{heading: body}`` for the headings of the given level (the body stops at the next one)."""
    parts = re.split(rf"^{'#' * level} (.+)$", text, flags=re.M)
    return {parts[i].strip(): parts[i + 1] for i in range(1, len(parts), 2)}


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, code marks and punctuation dropped, spaces to
    hyphens (``The @ag-ui/client adapter`` -> ``the-ag-uiclient-adapter``)."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading.strip()).lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def _anchors(path: pathlib.Path) -> set[str]:
    text = _FENCE.sub("", path.read_text(encoding="utf-8"))
    return {_slug(h) for h in re.findall(r"^#{1,6} (.+)$", text, flags=re.M)}


def _links(path: pathlib.Path) -> list[str]:
    return re.findall(r"\]\(([^)\s]+)\)", _without_code(path.read_text(encoding="utf-8")))


def start_here_commands() -> list[tuple[str, str]]:
    """``(block heading, command line)`` for every line of the ``sh`` blocks under "Start here",
    in order; ``NAME=value`` assignments included (they set the environment of what follows)."""
    section = _sections(README.read_text(encoding="utf-8"))["Start here"]
    out = []
    for heading, body in _sections(section, level=3).items():
        for info, block in _FENCE.findall(body):
            assert info.strip() == "sh", f"{heading}: a start-here block is marked sh"
            for line in block.splitlines():
                command = line.split("  #", 1)[0].strip()
                if command:
                    out.append((heading, command))
    return out


_ASSIGNMENT = re.compile(r"^([A-Z_]+)=(\S.*)$")


# -- the start-here commands ---------------------------------------------------------------------

@pytest.fixture(scope="module")
def ran(tmp_path_factory) -> dict[str, subprocess.CompletedProcess]:
    """Run every start-here command in order, in one temporary directory laid out as a checkout
    (each top-level entry of the repository linked in, ``../shared`` linked beside it)."""
    base = tmp_path_factory.mktemp("readme")
    work = base / "checkout"
    work.mkdir()
    for entry in ROOT.iterdir():
        if entry.name not in (".git", "out", "review", "activity-corpus", "activity.xml",
                              "lint.xml"):
            (work / entry.name).symlink_to(entry)
    if SHARED.is_dir():
        (base / "shared").symlink_to(SHARED)
    env = {**os.environ, "PATH": f"{pathlib.Path(sys.executable).parent}{os.pathsep}"
           f"{os.environ.get('PATH', '')}"}
    results = {}
    for _, command in start_here_commands():
        assignment = _ASSIGNMENT.match(command)
        if assignment:
            env[assignment[1]] = shlex.split(assignment[2])[0]
            continue
        if command in COVERED_ELSEWHERE:
            continue
        results[command] = subprocess.run(
            ["bash", "-c", command], cwd=work, env=env, capture_output=True, text=True,
            timeout=600)
    results["<dir>"] = work
    return results


@pytest.mark.parametrize("heading,command", start_here_commands(),
                         ids=[c for _, c in start_here_commands()])
def test_start_here_command_runs(ran, heading, command):
    if _ASSIGNMENT.match(command):
        return
    if command in COVERED_ELSEWHERE:
        reason, needed = COVERED_ELSEWHERE[command]
        assert (ROOT / needed).is_file(), needed
        pytest.skip(reason)
    if "../shared" in command and not SHARED.is_dir():
        pytest.skip("../shared is not beside the checkout")
    proc = ran[command]
    if command in PENDING_COMMANDS:
        assert proc.returncode != 0, (
            f"{command!r} runs now: remove it from PENDING_COMMANDS so that it is checked")
        pytest.skip(PENDING_COMMANDS[command])
    assert proc.returncode == 0, f"{heading}: {command}\n{proc.stdout[-2000:]}{proc.stderr[-2000:]}"
    assert command in EXPECT, f"no expectation for {command!r}: add what the user sees to EXPECT"
    assert EXPECT[command] in proc.stdout, proc.stdout[-2000:]
    for name in FILES_MADE.get(command, ()):
        assert (ran["<dir>"] / name).is_file(), name


def test_the_lists_name_only_start_here_commands():
    commands = {c for _, c in start_here_commands()}
    for table in (PENDING_COMMANDS, COVERED_ELSEWHERE, EXPECT, FILES_MADE):
        assert set(table) <= commands, set(table) - commands
    assert not set(PENDING_COMMANDS) & set(EXPECT)


def test_each_kind_of_user_has_a_start():
    headings = [h for h, _ in start_here_commands()]
    for who in ("Spec authors", "Consumer SDK teams", "Producer (agent) teams", "Reviewers"):
        starts = [h for h in dict.fromkeys(headings) if h.startswith(who)]
        assert len(starts) == 1, who
        assert 2 <= headings.count(starts[0]) <= 5, starts[0]


# -- links ---------------------------------------------------------------------------------------

def _pages() -> list[pathlib.Path]:
    return [README, *sorted((ROOT / "docs").glob("*.md"))]


def _target(page: pathlib.Path, link: str) -> tuple[pathlib.Path, str]:
    path, _, anchor = link.partition("#")
    return ((page.parent / path).resolve() if path else page), anchor


LINKING_PAGES = [ROOT / "benchmarks" / "README.md", ROOT / "counterexamples" / "README.md",
                 ROOT / "notebooks" / "README.md", ROOT / "tests" / "README.md"]
"""Other READMEs, whose links into the README and docs/ are checked too."""


@pytest.mark.parametrize("page", _pages() + LINKING_PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_links_resolve(page):
    bad = []
    for link in _links(page):
        if re.match(r"[a-z]+:", link):
            continue  # a web address
        target, anchor = _target(page, link)
        name = target.relative_to(ROOT).as_posix() if target.is_relative_to(ROOT) else str(target)
        if not target.exists():
            if name not in PENDING_DOCS:
                bad.append(f"{link}: no file {name}")
            continue
        if anchor and target.suffix == ".md" and anchor not in _anchors(target):
            bad.append(f"{link}: no heading #{anchor} in {name}")
    assert not bad, "\n".join(bad)


def test_pending_docs_are_still_pending():
    done = sorted(name for name in PENDING_DOCS if (ROOT / name).exists())
    assert not done, f"{done} exist now: remove them from PENDING_DOCS"


def test_every_docs_page_is_reachable_from_the_readme():
    seen, todo = set(), [README.resolve()]
    while todo:
        page = todo.pop()
        if page in seen or not page.is_file() or page.suffix != ".md":
            continue
        seen.add(page)
        todo.extend(_target(page, link)[0] for link in _links(page)
                    if not re.match(r"[a-z]+:", link))
    missing = [p.name for p in (ROOT / "docs").glob("*.md") if p.resolve() not in seen]
    assert not missing


# -- the README's shape --------------------------------------------------------------------------

def test_the_readme_is_short_and_undated():
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= MAX_README_LINES
    prose = _FENCE.sub("", text)
    assert not re.search(r"\bissue[s]? \d+", prose, re.I)
    assert not re.search(r"\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}\b", text)
    assert not re.search(r"\b\d+(\.\d+)? ?(s|ms|seconds|GB|MB)\b", prose)
    assert "coming soon" not in text.lower()
    for heading in ("Set up", "Start here", "Documentation"):
        assert heading in _sections(text)
    assert "make run" in _sections(text)["Set up"] and "make test" in _sections(text)["Set up"]


@pytest.mark.parametrize("page", _pages(), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_line_is_a_wall(page):
    longest = max(page.read_text(encoding="utf-8").splitlines(), key=len)
    assert len(longest) <= 500, longest[:80]


# -- command lines in the documentation ------------------------------------------------------------

def _documented_commands() -> list[tuple[str, str]]:
    out = []
    for page in [*_pages(), ROOT / "benchmarks" / "README.md"]:
        for _, block in _FENCE.findall(page.read_text(encoding="utf-8")):
            for line in block.splitlines():
                command = line.split("  #", 1)[0].strip()
                if command.startswith(".venv/bin/"):
                    command = command[len(".venv/bin/"):]
                # a synopsis ([--opt], a|b, ...) is not a command line
                if command.startswith("activity-check ") and not re.search(r"[\[|]|\.\.\.",
                                                                               command):
                    out.append((page.relative_to(ROOT).as_posix(), command))
    return out


@pytest.mark.parametrize("page,command", _documented_commands(),
                         ids=[f"{p}: {c}" for p, c in _documented_commands()])
def test_documented_command_parses(page, command):
    argv = shlex.split(command)[1:]
    argv = argv[:next((i for i, a in enumerate(argv) if a in (">", ">>", "<", "2>")), len(argv))]
    if argv[0] not in {name for name, _ in COMMANDS}:
        assert any(c.startswith(f"activity-check {argv[0]} ") for c in PENDING_COMMANDS), (
            f"{page}: {argv[0]} is no command")
        pytest.skip(f"{argv[0]} is not merged yet")
    try:
        build_parser().parse_args([a.replace("$ADAPTER", "model") for a in argv])
    except (SystemExit, UsageError) as exc:
        pytest.fail(f"{page}: {command!r} does not parse: {exc}")


# -- sample output ---------------------------------------------------------------------------------

_LINT_SAMPLE = re.compile(r"`bad\.jsonl`:\n\n```json\n(?P<stream>.*?)```\n\nas `activity-check "
                          r"lint bad\.jsonl` reports it .*?\n\n```\n(?P<output>.*?)```\n", re.S)


def test_lint_md_sample_output_is_what_lint_prints(tmp_path, monkeypatch, capsys):
    """docs/lint.md's sample is the real output of its command on its stream, byte for byte (it
    went stale: the clause line without ``clause:``, the detail on a third line)."""
    from activity_check.cli import main
    found = _LINT_SAMPLE.search((ROOT / "docs" / "lint.md").read_text(encoding="utf-8"))
    assert found, "docs/lint.md: the bad.jsonl stream and its output are not found"
    (tmp_path / "bad.jsonl").write_text(found["stream"], encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert main(["lint", "bad.jsonl"]) == 1
    out, err = capsys.readouterr()
    assert err == "" and out == found["output"]
    assert "      clause: A producer emits deltas only" in out
