"""Artefacts people act on without checking them (issue 39): every witness a run writes is a
complete stream that replays to its stated verdict and lints as its form says; every id and link
of the questions page resolves in the same output; the page lays out at 900 and 1,400 px in
headless Chromium; text tables fit 120 columns; the code and adapter-event pages are current."""
from __future__ import annotations

import json
from collections import Counter
import os
import re
import shutil
import sys
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

from counterexamples.findings import load_finding, FINDING_ID
from counterexamples.lint.linter import lint_wire
from model.readings import DRAFT, KNOB_BY_ID, parse_reading
from model.verdict import evaluate, partition, verdict_key
from model.wire import parse_events

OPEN_AT_END = {"LIF-RUN-CLOSE", "LIF-CLOSE-BEFORE-FINISH", "LIF-STEP-CLOSE-BEFORE-FINISH"}
"""The clauses lint cites for a stream that stops with something still open."""


@pytest.fixture(scope="module")
def run_result():
    """A small run (the questions table at depth 4, every ambiguity finding, resolve.html)."""
    from counterexamples.pipeline import RunConfig, run_pipeline
    config = RunConfig(seed=0, examples=5, budget=float("inf"), max_events=4, bfs_depth=4)
    return run_pipeline(config, "test")


@pytest.fixture(scope="module")
def run_out(run_result, tmp_path_factory) -> Path:
    """The small run's output directory, as ``make run`` writes it."""
    from counterexamples.pipeline import write_run
    out = tmp_path_factory.mktemp("run")
    write_run(run_result, str(out))
    return out


def _lint(wire, reading=DRAFT):
    return lint_wire(list(wire), reading)


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_every_finding_is_a_complete_conformant_stream_that_replays(run_out):
    """Each finding file replays to the verdict classes it records, its trace file holds the
    same events, it ends every run it opens, and lint (under draft) calls it conformant: an
    ambiguity is a split on a conformant trace."""
    findings = sorted((run_out / "findings").glob("*.json"))
    assert len(findings) >= 15
    for path in findings:
        finding = load_finding(str(path))
        events = finding.events
        assert _jsonl(path.with_suffix(".jsonl")) == list(finding.wire), path.name
        report = _lint(finding.wire)
        assert report.conformant, (path.name, [v.clause for v in report.violations])
        assert not {v.clause for v in report.violations} & OPEN_AT_END, path.name
        assert events[-1].to_wire()["type"] in ("RUN_FINISHED", "RUN_ERROR"), path.name
        for c in getattr(finding, "classes", ()):  # each class's reading gives its verdict
            assert evaluate(events, c.reading).to_json() == c.verdict, (path.name, c.readings)
        if finding.kind == "ambiguity":
            assert len(partition(events)) == len(finding.classes), path.name
            assert finding["closing"] >= 1 and finding["length"] == len(events)
        if finding.kind == "property":  # the same property breaks first at the same event
            _assert_property_replays(finding, path.name)


def _assert_property_replays(finding, name: str) -> None:
    """A property finding replays whole to its property at ``atEvent``, and is closed unless
    its ``closingNote`` says why not."""
    from counterexamples.findings import parse_reading_spec
    from counterexamples.report.export import _consumer_of
    from properties.search.machines import check_trace_properties
    consumer, _ = _consumer_of(finding)
    again = check_trace_properties(finding.events, consumer,
                                   parse_reading_spec(finding.reading))
    assert again is not None, name
    assert (again.property.id, again.index) == (finding.property_id, finding.at_event), name
    assert finding["length"] == len(finding.events), name
    assert finding["closing"] >= 1 or finding.get("closingNote"), name


def test_a_property_finding_the_run_writes_is_closed_and_replays(tmp_path):
    """The run writes a property finding only when the reference consumer fails (never with the
    model); the writer it uses gives a complete stream that replays, as the walk checks."""
    from counterexamples.findings import property_finding, write_finding
    from properties.search.machines import check_trace_properties
    from properties.zoo import MUTANT_BY_NAME
    events = parse_events([
        {"type": "RUN_STARTED", "threadId": "t", "runId": "r"},
        {"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "assistant"},
        {"type": "ACTIVITY_SNAPSHOT", "messageId": "a", "activityType": "A", "content": {}},
        {"type": "ACTIVITY_DELTA", "messageId": "a", "activityType": "A", "patch": []}])
    mutant = MUTANT_BY_NAME["crashes-on-empty-patch"]
    finding = property_finding(check_trace_properties(events, mutant), events, mutant.name,
                               "draft")
    path, trace = write_finding(finding, str(tmp_path))
    loaded = load_finding(path)
    assert [e["type"] for e in _jsonl(Path(trace))] == [
        "RUN_STARTED", "TEXT_MESSAGE_START", "ACTIVITY_SNAPSHOT", "ACTIVITY_DELTA",
        "TEXT_MESSAGE_END", "RUN_FINISHED"]
    assert (loaded["closing"], loaded.at_event) == (2, 3)
    assert _lint(loaded.wire).conformant
    _assert_property_replays(loaded, "written")


def test_every_question_witness_replays_to_its_table_and_lints_as_its_form_says(run_out):
    summary = json.loads((run_out / "summary.json").read_text(encoding="utf-8"))
    rows = summary["questions"]["rows"]
    with_witness = [r for r in rows if r["witnessFile"]]
    assert len(with_witness) >= 20
    from properties.questions import option_outcomes
    from model.verdict import visible_key
    for r in with_witness:
        wire = _jsonl(run_out / r["witnessFile"])
        assert wire == r["witness"] and len(wire) == r["length"] + r["closing"], r["question"]
        report = _lint(wire)
        clauses = {v.clause for v in report.violations}
        assert not clauses & OPEN_AT_END, (r["question"], clauses)  # every run is ended
        assert wire[0]["type"] == "RUN_STARTED", r["question"]
        if r["form"] == "A":
            assert report.conformant, (r["question"], clauses)
        if r["form"] in ("A", "B"):
            a, b = r["readings"]
            pair = tuple(dict(x.split("=") for x in side.split(",")) for side in (a, b))
            assert option_outcomes(parse_events(wire), r["knob"], pair) == r["options"]
            verdicts = {o["label"]: evaluate(parse_events(wire), parse_reading(o["label"]))
                        for o in r["options"]}
            # no fatal masks the options: what a reader sees differs between some two
            assert len({visible_key(v) if v.fatal else verdict_key(v)
                        for v in verdicts.values()}) > 1, r["question"]
        if r["form"] == "B":
            assert not report.conformant, r["question"]  # a producer clause is broken
        if r["form"] == "C":  # producer-side: each option's conformance is lint's
            for o in r["options"]:
                judged = _lint(wire, DRAFT.with_(**{r["knob"]: o["option"]}))
                assert judged.conformant == o["conformant"], (r["question"], o)
    q21 = next(r for r in rows if r["question"] == "Q21")
    assert q21["form"] == "B" and q21["witness"][0]["type"] == "RUN_STARTED"
    by = {o["option"]: o for o in q21["options"]}
    assert by["fatal"]["run"] == "rejected" and by["shim"]["run"] == "finished"
    assert by["shim"]["messages"] and not by["fatal"]["messages"]


def _resolve_witnesses(report: dict) -> list[tuple[str, dict]]:
    """Every witness resolve.html shows, with where it is on the page: the pin traces, the
    peers' and the open questions'."""
    out = [(f"pin {t['knob']}", t["witness"]) for t in report["traces"] if t["witness"]]
    out += [(f"peer {r['peer']} {f['knob']}", f["witness"]) for r in report["peers"]
            for f in r["findings"] if f["witness"]]
    out += [(f"open {q['question']}", q["witness"]) for q in report["questions"]
            if q.get("witness")]
    return out


def test_every_resolve_trace_replays_to_its_stated_verdict_and_lints_as_it_says(run_result,
                                                                                  tmp_path):
    """resolve.html's traces (the recommended proposal, as ``make run`` writes the page):
    each replays to the verdicts (or producer clauses) it states for each option; each marked
    closed ends every run it opens, and a verdict witness or a conflict's witness marked closed
    lints conformant under the reading it is stated under. Written with ``resolve --out``
    (``traces/``, ``conflicts/``, ``fixtures/``), each file is that trace, and each fixture
    passes against the model and lints conformant."""
    import copy
    from counterexamples.conformance.fixtures import fixture_from_json
    from counterexamples.conformance.runner import judge, model_answers
    from counterexamples.report.resolve import write_report
    from model.producer import check_trace
    from properties.resolve import _verdict
    report = copy.deepcopy(run_result.resolve_report)
    assert report is not None
    pinned = parse_reading(report["reading"])
    shown = _resolve_witnesses(report)
    assert len(shown) >= 10
    for where, w in shown:
        events = parse_events(w["trace"])
        assert len(events) == w["length"], where
        for option, verdict in w.get("verdicts", {}).items():
            assert _verdict(events, pinned.with_(**{w["knob"]: option})) == verdict, where
        for option, clauses in w.get("conformance", {}).items():
            under = pinned.with_(**{w["knob"]: option})
            assert sorted({v.clause for _, v in check_trace(events, under)}) == clauses, where
        linted = _lint(w["trace"], pinned)
        clauses = {v.clause for v in linted.violations}
        if w["closed"]:
            assert not clauses & OPEN_AT_END, (where, clauses)
            if w["decides"] == "verdict":  # a SHOULD lint reports does not count
                assert linted.conformant, (where, clauses)
    for x in report["conflicts"]:
        under = DRAFT if x["witnessUnder"] == "draft" else pinned
        linted = _lint(x["trace"], under)
        assert len(x["trace"]) == x["length"], x["subject"]
        if x["closed"]:
            assert not {v.clause for v in linted.violations} & OPEN_AT_END, x["subject"]
            if x["kind"] == "vacuous":  # a branch taken on a conformant trace under draft
                assert linted.conformant, x["subject"]
    write_report(report, str(tmp_path))
    for t in report["traces"]:
        if t["witness"]:
            assert _jsonl(tmp_path / t["file"]) == t["witness"]["trace"], t["file"]
    for i, x in enumerate(report["conflicts"]):
        assert _jsonl(tmp_path / "conflicts" / f"{i + 1}.jsonl") == x["trace"]
    fixtures = sorted((tmp_path / "fixtures").glob("*.json"))
    assert fixtures and len(fixtures) == sum(1 for t in report["traces"] if t.get("fixture"))
    for path in fixtures:
        fx = fixture_from_json(json.loads(path.read_text(encoding="utf-8")), str(path))
        assert judge(fx, model_answers([fx], pinned)[0]).status == "passed", path.name
        assert _lint(fx.doc["stream"], pinned).conformant, path.name


class _Page(HTMLParser):
    def __init__(self):
        super().__init__()
        self.links, self.ids, self.sections, self.text, self.h2 = [], set(), [], [], []
        self._in_h2 = False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "id" in a:
            self.ids.add(a["id"])
        if tag == "a" and "href" in a:
            self.links.append(a["href"])
        if tag == "section":
            self.sections.append(a["id"])
        self._in_h2 = tag == "h2"

    def handle_endtag(self, tag):
        if tag == "h2":
            self._in_h2 = False

    def handle_data(self, data):
        self.text.append(data)
        if self._in_h2:
            self.h2.append(data)


def test_every_id_and_link_of_the_page_resolves_in_the_same_output(run_out):
    page = _Page()
    page.feed((run_out / "questions.html").read_text(encoding="utf-8"))
    text = "".join(page.text)
    assert page.sections == [f"Q{i}" for i in range(1, 26)]  # questions.html#Q11: its section
    for href in page.links:
        if href.startswith("#"):
            assert href[1:] in page.ids, href
        else:
            assert (run_out / href).is_file(), href
    ids = {m.group(0) for m in FINDING_ID.finditer(text)}
    assert ids, "the page links the run's findings"
    for fid in ids:
        assert (run_out / "findings" / f"{fid}.json").is_file(), fid
    assert "#quot;" not in text and " 1 events" not in text
    assert all(len(h) < 90 for h in page.h2), [h for h in page.h2 if len(h) >= 90]


def test_labels_name_the_readings_the_table_compares(run_out):
    """The diagram's notes and the option table name the same readings (Q1: Q1=merge and
    Q1=ignore, not a class label with other knobs)."""
    from counterexamples.report.questions_page import witness_mermaid
    summary = json.loads((run_out / "summary.json").read_text(encoding="utf-8"))
    for r in summary["questions"]["rows"]:
        if r["form"] not in ("A", "B"):
            continue
        labels = {o["label"] for o in r["options"]}
        source = witness_mermaid(r)
        notes = [line.split(": ", 1)[1] for line in source.splitlines()
                 if line.startswith("    Note over Consumer:")]
        named = {name for note in notes for part in note.split("<br/>")
                 for name in part.split(": ", 1)[0].split(" / ")}
        assert named and named <= labels, (r["question"], named, labels)
    q1 = next(r for r in summary["questions"]["rows"] if r["question"] == "Q1")
    assert [o["label"] for o in q1["options"]] == ["Q1=merge", "Q1=ignore"]


def test_form_c_sections_say_what_was_proven_to_what_bound_by_which_engine():
    from counterexamples.report.questions_page import settlement_text
    row = {"question": "Q16", "form": "C", "proofDepth": 4, "engine": "Z3", "knob": None,
           "proven": [{"property": "P19-untagged-accepted", "engine": "Z3",
                       "statement": "An untagged delta is accepted."}],
           "settles": "Because no verdict turns on it.", "note": ""}
    text = settlement_text(row)
    assert "every reading" in text and "4 events" in text and "Z3 bounded model checking" in text
    assert "P19-untagged-accepted" in text and "Why this settles Q16: Because" in text


def test_recommendation_of_a_question_without_knob_says_no_knob_once():
    """The page's "Recommended" paragraph: ``KNOB=OPTION.`` then the argument for a knob; for a
    question without knob (Q16, Q22, Q24, Q25) the argument alone, which itself says "no knob"
    (it read "Recommended: no knob. no knob: the bounded proof ...")."""
    from counterexamples.report.questions_page import recommendations, recommended_html
    for q in ("Q16", "Q22", "Q24", "Q25"):
        (rec,) = recommendations({"question": q, "knobs": []})
        text = recommended_html(rec)
        assert text.count("no knob") == 1 and "Recommended: no knob: " in text, (q, text)
    (rec,) = recommendations({"question": "Q8", "knobs": ["Q8"]})
    assert recommended_html(rec).startswith(
        "<p class='recommended'>Recommended (★): <code>Q8=keep</code>. ")


# --- the page in a browser ----------------------------------------------------------------------

CHROMIUM = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome")
                 if shutil.which(n)), None)

_PROBE = """<script>
window.addEventListener('load', () => {
  const over = [];
  for (const svg of document.querySelectorAll('svg')) {
    const lives = [...svg.querySelectorAll('line.life')].map(l => +l.getAttribute('x1'));
    const consumer = Math.max(...lives);
    for (const t of svg.querySelectorAll('text.label')) {
      const right = +t.getAttribute('x') + t.getComputedTextLength();
      if (right > consumer) over.push(t.textContent);
    }
  }
  const out = document.createElement('pre');
  out.id = 'probe';
  out.textContent = JSON.stringify({scroll: document.documentElement.scrollWidth,
                                    width: window.innerWidth, over});
  document.body.appendChild(out);
});
</script>"""


@pytest.mark.skipif(CHROMIUM is None, reason="no Chromium on this machine (apt-get install "
                                             "chromium): the layout check needs a browser")
@pytest.mark.parametrize("width", [900, 1400])
def test_page_lays_out_in_chromium(run_out, tmp_path, width):
    """At 900 and 1,400 px the page does not scroll sideways (wide tables and diagrams scroll
    in their own boxes) and no arrow label runs over the consumer's lifeline."""
    page = (run_out / "questions.html").read_text(encoding="utf-8")
    probed = tmp_path / "probed.html"
    probed.write_text(page.replace("</body>", _PROBE + "</body>"), encoding="utf-8")
    done = subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
         f"--window-size={width},1000", "--virtual-time-budget=5000", "--dump-dom",
         probed.as_uri()], capture_output=True, text=True, timeout=120)
    found = re.search(r"<pre id=\"probe\">(.*?)</pre>", done.stdout, re.S)
    assert found, done.stderr[-2000:]
    probe = json.loads(found.group(1).replace("&quot;", '"').replace("&amp;", "&"))
    assert probe["width"] == width
    assert probe["scroll"] <= width, probe
    assert probe["over"] == [], probe["over"][:5]


# --- the reference pages ------------------------------------------------------------------------

DOCS = Path(__file__).resolve().parents[1] / "docs"


def test_codes_page_is_current_and_lists_every_code_with_its_clause():
    from counterexamples.report.docs_pages import codes_markdown
    from model.codes import CODE_LIST
    text = (DOCS / "codes.md").read_text(encoding="utf-8")
    assert text == codes_markdown(), "docs/codes.md is stale: python -m " \
        "counterexamples.report.docs_pages docs"
    for code in CODE_LIST:
        assert f"| `{code.code}` |" in text, code.code
    assert "| `ACTIVITY_PATCH_FAILED` | warning or fatal | `delta.patch-failed` |" in text


def test_adapter_events_page_is_current_and_covers_what_the_peers_send():
    """Every event of the corpus, the probes and a small generation has a type the page gives
    and only members the page lists for it (or the ones every event may carry); the subagent
    events among them."""
    from counterexamples.peers.generate import generated_traces
    from counterexamples.report.docs_pages import COMMON_MEMBERS, adapter_events_markdown, \
        event_members
    text = (DOCS / "adapter-events.md").read_text(encoding="utf-8")
    assert text == adapter_events_markdown(), "docs/adapter-events.md is stale: python -m " \
        "counterexamples.report.docs_pages docs"
    shapes = {t: {m for m, _, _ in members} for t, members in event_members().items()}
    traces, _ = generated_traces(seed=0, stateful=20, bfs_depth=2)
    seen = set()
    for trace in traces:
        for event in trace.wire:
            kind = event.get("type")
            if trace.source in ("probe", "field-cases") or kind not in shapes:
                # on purpose: unknown types and malformed members (the page's last section)
                continue
            seen.add(kind)
            extra = set(event) - shapes[kind] - set(COMMON_MEMBERS)
            if trace.source in ("corpus", "bfs"):  # conformant traces: described members only
                assert not extra, (trace.id, kind, extra)
    assert {"SUBAGENT_STARTED", "SUBAGENT_FINISHED", "ACTIVITY_SNAPSHOT", "ACTIVITY_DELTA",
            "MESSAGES_SNAPSHOT", "RUN_STARTED", "RUN_FINISHED"} <= seen
    for kind in ("SUBAGENT_STARTED", "SUBAGENT_ERROR", "SUBAGENT_FINISHED"):
        assert f"## {kind}" in text


# --- text tables --------------------------------------------------------------------------------

def _table_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line[:1] in "┏┃┡│└"]


def test_run_tables_fit_120_columns_and_never_break_an_id(run_out, capsys):
    from types import SimpleNamespace
    from activity_check.cmd_run import _print_run
    summary = json.loads((run_out / "summary.json").read_text(encoding="utf-8"))
    ambiguities = [load_finding(str(run_out / f["files"][0])) for f in summary["findings"]
                   if f["kind"] == "ambiguity"]
    result = SimpleNamespace(ambiguities=ambiguities, seconds=0.0)
    _print_run(summary, result, str(run_out))
    lines = _table_lines(capsys.readouterr().out)
    assert lines and max(len(line) for line in lines) <= 120, max(len(x) for x in lines)
    for f in ambiguities:  # every id whole on one line of the table
        assert any(f" {f.id} " in line for line in lines), f.id
    x1 = next(line for line in lines if "AMB-X1-" in line)
    assert "outside the draft" in x1
    q8 = lines.index(next(line for line in lines if "AMB-Q8-" in line))
    assert "deviation: Q8=keep" in " ".join(x.split("│")[5].strip() for x in lines[q8:q8 + 3])
    _print_run(summary, result, str(run_out), wide=True)
    wide = _table_lines(capsys.readouterr().out)
    assert max(len(line) for line in wide) > 120 and len(wide) < len(lines)


SPEC = Path(__file__).resolve().parents[2] / "shared" / "spec"
if not SPEC.is_dir():  # the worktree beside the team's shared/ (make run's layout)
    SPEC = Path("/work/shared/spec")

NARROW_COMMANDS = [
    ["run", "--examples", "5", "--max-events", "4", "--bfs-depth", "2", "--budget", "5",
     "--seed", "0", "--out", "{tmp}/run"],
    ["questions"],
    ["questions", "--out", "{tmp}/review"],
    ["resolve", "--recommended", "--depth", "2", "--no-z3"],
    ["explore", "--depth", "2"],
    ["peer", "check", "--adapter", "model"],
    ["readings"],
    # the draft's snapshots page against a copy with one MUST made SHOULD ({edited}): 1.0 and
    # the draft no longer differ, and a diff of nothing has nothing to fold
    ["spec", "diff", "{spec}/draft/snapshots.md", "{edited}/snapshots.md"],
    ["clauses"],
]
"""make run's command at a small budget and every command with a text table or long lines."""


@pytest.mark.parametrize("argv", NARROW_COMMANDS, ids=lambda a: " ".join(a[:2]))
def test_text_output_fits_120_columns_and_wide_gives_the_full_lines(argv, tmp_path, capsys):
    """Issue 39 item 5: no stdout line wider than 120 columns (long cells and lines folded at
    word boundaries, ids whole); ``--wide`` gives the full table (wider, on fewer lines) where
    the folded output had something to fold."""
    from activity_check.cli import main
    if any("{spec}" in a for a in argv) and not (SPEC / "draft" / "snapshots.md").is_file():
        pytest.skip(f"the spec pages are not at {SPEC}")
    edited = tmp_path / "edited"
    if any("{edited}" in a for a in argv):
        page = (SPEC / "draft" / "snapshots.md").read_text(encoding="utf-8")
        assert "MUST" in page
        edited.mkdir()
        (edited / "snapshots.md").write_text(page.replace("MUST", "SHOULD", 1), encoding="utf-8")
    args = [a.format(tmp=tmp_path, spec=SPEC, edited=edited) for a in argv]
    assert main(args) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines and max(len(line) for line in lines) <= 120, \
        [line for line in lines if len(line) > 120][:3]
    # no finding id broken over two lines: each one begun is there whole
    assert len(re.findall(r"\b(?:AMB|PROP|PEER)-", out)) == len(list(FINDING_ID.finditer(out)))
    if argv[0] == "run":
        summary = json.loads((tmp_path / "run" / "summary.json").read_text(encoding="utf-8"))
        assert all(f["id"] in out for f in summary["findings"])
    if argv[0] == "run":
        return  # --wide for run: test_run_tables_fit_120_columns_and_never_break_an_id
    assert main(args + ["--wide"]) == 0
    full = capsys.readouterr().out
    wide = full.splitlines()
    assert max(len(line) for line in wide) > 120 and len(wide) < len(lines)
    # no clause, property or branch id broken either: folded and full output name each as often
    assert Counter(CITED_ID.findall(out)) == Counter(CITED_ID.findall(full))


CITED_ID = re.compile(r"\b[A-Z]{2,4}(?:-[A-Z0-9]+)+\b|\bP\d\d-[a-z-]+[a-z]\b")
"""A clause id (``ACT-DELTA-MISSING-NOFAIL``) or a property id (``P05-snapshot-creates``)."""


# --- peer findings by root cause ----------------------------------------------------------------

TWO_CAUSES = (
    "import json, sys\n"
    "from counterexamples.peers.model_adapter import answer\n"
    "for line in sys.stdin:\n"
    "    req = json.loads(line)\n"
    "    events = req.get('events') or []\n"
    "    cut = next((i for i, e in enumerate(events) if isinstance(e, dict)\n"
    "                and e.get('type') == 'SUBAGENT_STARTED'), None)\n"
    "    if cut is not None:  # silently stops reading there\n"
    "        events = events[:cut]\n"
    "    out = answer({**req, 'events': events}) if events else {\n"
    "        'id': req.get('id'), 'messages': [], 'warnings': [], 'fatal': None,\n"
    "        'runInput': [], 'state': {}}\n"
    "    for m in out.get('messages') or []:  # and drops the key 'x' from content\n"
    "        if isinstance(m.get('content'), dict):\n"
    "            m['content'].pop('x', None)\n"
    "    print(json.dumps(out), flush=True)\n")
"""A peer with two causes of divergence: it stops reading at SUBAGENT_STARTED (no error, the
rest of the stream lost) and it drops a content key named ``x``."""


def _peer_check(tmp_path, capsys, script, traces: dict, out) -> dict:
    """``peer check --json --out OUT`` of the Python adapter ``script`` over ``traces`` (name ->
    wire events, each written as NAME.jsonl): the JSON report (exit 0 asserted)."""
    from activity_check.cli import main
    paths = []
    for name, trace in traces.items():
        path = tmp_path / f"{name}.jsonl"
        path.write_text("".join(json.dumps(e) + "\n" for e in trace), encoding="utf-8")
        paths.append(str(path))
    assert main(["peer", "check", "--adapter", f"{sys.executable} {script}", "--json",
                 "--out", str(out), *paths]) == 0
    return json.loads(capsys.readouterr().out)


def test_peer_findings_one_per_root_cause_and_a_stopped_reading_kind(tmp_path, capsys):
    script = tmp_path / "two_causes.py"
    script.write_text(TWO_CAUSES)
    run = {"type": "RUN_STARTED", "threadId": "t1", "runId": "r1"}
    end = {"type": "RUN_FINISHED", "threadId": "t1", "runId": "r1"}
    snap = {"type": "ACTIVITY_SNAPSHOT", "messageId": "act-1", "activityType": "PLAN",
            "content": {"a": 1}}
    both = [run, {"type": "SUBAGENT_STARTED", "subagentRunId": "sub-1"},
            {**snap, "content": {"a": 1, "x": 2}},
            {"type": "SUBAGENT_FINISHED", "subagentRunId": "sub-1"}, end]
    key = [run, {**snap, "content": {"a": 1, "x": 2}}, end]
    out = tmp_path / "out"
    report = _peer_check(tmp_path, capsys, script, {"both": both, "key": key}, out)
    divergences = report["divergences"]
    causes = {(d["branch"], tuple(d["aspects"]), d["divergenceKind"]) for d in divergences}
    assert len(causes) == len(divergences) == len({d["id"] for d in divergences})
    stopped = [d for d in divergences if d["divergenceKind"] == "stopped-reading"]
    assert len(stopped) == 1 and all(d["shrunk"] for d in divergences)
    finding = load_finding(str(out / "findings" / f"{stopped[0]['id']}.json"))
    assert finding.wire[finding["stoppedAt"]]["type"] == "SUBAGENT_STARTED"
    assert "stopped reading the stream" in finding.explanation
    dropped = [d for d in divergences if d["aspects"] == ["messages.content"]]
    assert len(dropped) == 1 and dropped[0]["divergenceKind"] == "verdict"


IGNORES_DELTAS = (
    "import json, sys\n"
    "from counterexamples.peers.model_adapter import answer\n"
    "for line in sys.stdin:\n"
    "    req = json.loads(line)\n"
    "    events = [e for e in req.get('events') or []\n"
    "              if not (isinstance(e, dict) and e.get('type') == 'ACTIVITY_DELTA')]\n"
    "    out = answer({**req, 'events': events}) if events else {\n"
    "        'id': req.get('id'), 'messages': [], 'warnings': [], 'fatal': None,\n"
    "        'runInput': [], 'state': {}}\n"
    "    print(json.dumps(out), flush=True)\n")
"""A peer that ignores every ACTIVITY_DELTA (no error, no warning): one root cause, whatever
the delta and whatever the aspects its missing effect shows in."""


def test_a_peer_that_ignores_an_event_is_one_finding_whatever_the_aspects(tmp_path, capsys):
    """Issue 39 item 3: deltas whose missed effects differ (content alone; content and the
    type a retyping delta sets) are one root cause, ``ignored-event``, one id."""
    script = tmp_path / "ignores_deltas.py"
    script.write_text(IGNORES_DELTAS)
    run = {"type": "RUN_STARTED", "threadId": "t1", "runId": "r1"}
    end = {"type": "RUN_FINISHED", "threadId": "t1", "runId": "r1"}
    snap = {"type": "ACTIVITY_SNAPSHOT", "messageId": "act-1", "activityType": "PLAN",
            "content": {"a": 1}}
    delta = {"type": "ACTIVITY_DELTA", "messageId": "act-1", "activityType": "PLAN"}
    traces = {
        "replace": [run, snap, {**delta, "patch": [{"op": "replace", "path": "/a", "value": 2}]},
                    end],
        "retype": [run, snap, {**delta, "activityType": "TODO",
                               "patch": [{"op": "add", "path": "/b", "value": 3}]}, end],
    }
    out = tmp_path / "out"
    report = _peer_check(tmp_path, capsys, script, traces, out)
    divergences = report["divergences"]
    assert [d["divergenceKind"] for d in divergences] == ["ignored-event"], \
        [(d["branch"], d["aspects"], d["divergesAt"]) for d in divergences]
    assert all(d["shrunk"] for d in divergences)
    finding = load_finding(str(out / "findings" / f"{divergences[0]['id']}.json"))
    assert finding.wire[finding["divergesAt"]]["type"] == "ACTIVITY_DELTA"
    assert finding["eventIgnored"] is True and "It ignored event" in finding.explanation
    traced = [t for t in report["traces"] if t.get("finding")]
    assert len(traced) == 2 and {t["finding"] for t in traced} == {divergences[0]["id"]}


def test_peer_check_text_fits_120_columns_and_keeps_every_id_whole(tmp_path, capsys):
    """Issue 39 item 5 for a peer with divergences (``peer check`` over the committed corpus):
    no line wider than 120 columns, and every id the JSON report gives (trace, finding,
    clause, model branch, differing aspect) stands whole on one line of the text (the traces
    table cut ``messages.subagentRu`` / ``nId``, the divergences table ``STA-MS-SELF-REV`` /
    ``OKE``); ``--wide`` puts each divergence on one line."""
    from activity_check.cli import main
    script = tmp_path / "two_causes.py"
    script.write_text(TWO_CAUSES)
    run = {"type": "RUN_STARTED", "threadId": "t1", "runId": "r1"}
    end = {"type": "RUN_FINISHED", "threadId": "t1", "runId": "r1"}
    snap = {"type": "ACTIVITY_SNAPSHOT", "messageId": "act-1", "activityType": "PLAN",
            "content": {"a": 1, "x": 2}}
    paths = []
    for name, trace in (("stops", [run, {"type": "SUBAGENT_STARTED", "subagentRunId": "sub-1",
                                         "name": "helper"}, snap,
                                   {"type": "SUBAGENT_FINISHED", "subagentRunId": "sub-1"}, end]),
                        ("key", [run, snap, end]),
                        ("snapshot", [run, {**snap, "content": {"x": 1}},
                                      {"type": "MESSAGES_SNAPSHOT", "messages": []}, end])):
        path = tmp_path / f"{name}.jsonl"
        path.write_text("".join(json.dumps(e) + "\n" for e in trace), encoding="utf-8")
        paths.append(str(path))
    argv = ["peer", "check", "--adapter", f"{sys.executable} {script}", *paths]
    assert main(argv + ["--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert len(report["divergences"]) >= 2
    ids = {r["id"] for r in report["traces"]} | {r["finding"] for r in report["traces"]
                                                 if r.get("finding")}
    for r in report["traces"]:
        ids |= set(r.get("differsFromNearest") or []) | set(r.get("differsFromDraft") or [])
    for d in report["divergences"]:
        ids |= {d["id"], d["branch"], *d["clauses"], *d["relatedClauses"], *d["aspects"]}
    assert main(argv) == 0
    lines = capsys.readouterr().out.splitlines()
    assert max(len(line) for line in lines) <= 120, [x for x in lines if len(x) > 120][:2]
    words = {w.strip(",;:()") for line in lines for w in line.replace("│", " ").split()}
    assert not ids - words, sorted(ids - words)[:5]
    assert main(argv + ["--wide"]) == 0
    wide = capsys.readouterr().out.splitlines()
    for d in report["divergences"]:
        assert any(d["id"] in x and d["branch"] in x and d["aspects"][-1] in x for x in wide)
