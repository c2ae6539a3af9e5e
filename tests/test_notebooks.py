"""The ambiguity notebooks (notebooks/*.ipynb): committed without outputs, and each one executes
without a cell error (nbclient, a Python kernel of this environment, run from a temporary
directory), printing in its ``summary`` cell the values checked here."""
from __future__ import annotations

import glob
import json
import os
import time

import pytest

_MISSING = "{} is not installed (pip install -e '.[dev]')"
nbformat = pytest.importorskip("nbformat", reason=_MISSING.format("nbformat"))
nbclient = pytest.importorskip("nbclient", reason=_MISSING.format("nbclient"))
pytest.importorskip("ipykernel", reason=_MISSING.format("ipykernel"))
pytest.importorskip("matplotlib", reason=_MISSING.format("matplotlib"))

from counterexamples.peers.adapter import node_peer_ready

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NOTEBOOK_DIR = os.path.join(ROOT, "notebooks")
NOTEBOOKS = sorted(os.path.basename(p) for p in glob.glob(os.path.join(NOTEBOOK_DIR, "*.ipynb")))
EXPECTED = ["01-replace-and-ownership.ipynb", "02-deltas-retype-patch-failure.ipynb",
            "03-metadata.ipynb", "04-messages-snapshot-and-run-input.ipynb",
            "05-peer-report.ipynb", "06-runs-subagents-and-resync.ipynb"]
CELL_TIMEOUT = 300
"""Seconds one cell may take (the slowest cell of any notebook takes a few seconds)."""

PEERS = node_peer_ready() is None


def _read(name: str):
    with open(os.path.join(NOTEBOOK_DIR, name), encoding="utf-8") as fh:
        return nbformat.read(fh, as_version=4)


def _execute(name: str, tmp_path) -> tuple[object, float]:
    nb = _read(name)
    client = nbclient.NotebookClient(nb, timeout=CELL_TIMEOUT, kernel_name="python3",
                                     resources={"metadata": {"path": str(tmp_path)}})
    started = time.monotonic()
    client.execute()
    return nb, time.monotonic() - started


def _summary(nb) -> dict:
    """The JSON the cell tagged ``summary`` prints."""
    cells = [c for c in nb.cells if "summary" in c.metadata.get("tags", [])]
    assert len(cells) == 1, "one summary cell per notebook"
    text = "".join(o.get("text", "") for o in cells[0].outputs if o.output_type == "stream")
    return json.loads(text)


def _outputs_text(nb) -> str:
    parts = []
    for c in nb.cells:
        for o in c.get("outputs", []):
            if o.output_type == "stream":
                parts.append(o.text)
            elif "data" in o:
                parts.append(o.data.get("text/markdown", "") or o.data.get("text/plain", ""))
    return "\n".join(parts)


def test_every_notebook_is_there():
    assert NOTEBOOKS == EXPECTED


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_committed_without_outputs(name):
    nb = _read(name)
    nbformat.validate(nb)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code
    for c in code:
        assert c.outputs == [], f"{name}: a code cell holds outputs"
        assert c.execution_count is None, f"{name}: a code cell holds an execution count"
    assert nb.metadata["kernelspec"]["name"] == "python3"


# --- what each notebook must show ---------------------------------------------------------------

def _check_01(summary: dict, text: str) -> None:
    assert set(summary) == {"Q2", "Q3", "Q4", "Q4-opener", "Q11", "Q18"}
    # Q18 (outside the Z3 fragment): a declined snapshot's type, prose against schema
    q18 = summary.pop("Q18")
    assert (q18["sweep"], q18["pairSearch"], q18["classes"]) == (3, 3, 2)
    assert q18["options"] == {"prose": ["PLAN"], "schema": ["SEARCH"]}
    assert summary["Q11"]["sweep"] == 3 and summary["Q11"]["pairSearch"] == 3
    assert summary["Q11"]["classes"] == 2
    assert summary["Q2"]["sweep"] == summary["Q3"]["sweep"] == 3
    assert summary["Q4"]["sweep"] == summary["Q4-opener"]["sweep"] == 4
    for k, v in summary.items():
        assert v["sweep"] == v["pairSearch"], k
        # without MESSAGES_SNAPSHOT, Q11 takes two snapshots: past the sweep's 3 events (the
        # bound Z3 is given), so Z3 finds nothing that short there
        assert v["z3"]["snapshots and deltas"] == (None if k == "Q11" else v["sweep"]), k
    # Z3's full world holds a MESSAGES_SNAPSHOT that introduces two activities at once, and since
    # issue 19 (item 4) so does the sweep's vocabulary: equal everywhere, Q11 included
    assert summary["Q11"]["z3"]["full world"] == 3
    assert all(v["z3"]["full world"] == v["sweep"] for v in summary.values())
    assert "sequenceDiagram" in text and "Producer->>Consumer" in text
    if PEERS:
        assert summary["Q11"]["peer"] == {"reducer": "in-place", "pipeline": "in-place"}


def _check_02(summary: dict, text: str) -> None:
    for k in ("Q5", "Q13", "Q20"):
        assert summary[k]["sweep"] == summary[k]["pairSearch"] == 3, k
    assert summary["Q20"]["classes"] == 4  # drop-op, skip-patch (tolerate / fatal), fatal
    assert summary["Q5"]["z3"] == summary["Q13"]["z3"] == {"full world": 3}
    assert summary["Q20"]["z3"] == {}  # outside the Z3 fragment
    assert summary["Q7"]["z3"] == {"conformant": ["unsat", None], "any trace": ["sat", 3]}
    assert summary["Q7"]["sweep"] is None  # no conformant witness
    assert summary["Q7"]["probeBreaks"] == ["ACT-DELTA-OBJECT"]
    assert summary["Q7"]["classes"] == 4
    if PEERS:
        assert summary["Q20"]["peer"] == {"reducer": "skip-patch", "pipeline": "drop-op"}
        assert summary["Q5"]["peer"] == {"reducer": "skip", "pipeline": "skip"}


def _check_03(summary: dict, text: str) -> None:
    for k in ("Q1", "Q6", "Q6-ms"):
        assert summary[k]["sweep"] == summary[k]["pairSearch"] == 3, k
    assert not any(summary[k]["inZ3Fragment"] for k in ("Q1", "Q6", "Q6-ms", "Q21"))
    assert summary["Q21"]["probeBreaks"] == {"probe-Q21-metadata": ["MET-NOT-NULL"],
                                             "probe-Q21-owner": ["SUB-ABSENT-PARENT"]}
    assert summary["Q21"]["classes"] == {"probe-Q21-metadata": 2, "probe-Q21-owner": 2}
    # Q19: an activity snapshot's own metadata, its own row against the catch-all
    assert (summary["Q19"]["sweep"], summary["Q19"]["pairSearch"]) == (2, 2)
    assert summary["Q19"]["options"] == {"activity-row": [{"k": 1}], "catch-all": [None]}
    if PEERS:
        assert summary["Q21"]["peer"] == {"reducer": None, "pipeline": "fatal"}


def _check_04(summary: dict, text: str) -> None:
    assert summary["Q8"]["sweep"] == 3 and summary["Q10"]["sweep"] == 4
    assert summary["X1"]["sweep"] == summary["X1"]["pairSearch"] == 3
    for k in ("Q8", "Q10", "X1"):
        assert summary[k]["z3"] == {"full world": summary[k]["sweep"]}, k
    # no conformant Q9 witness: an activity snapshot on an id a MESSAGES_SNAPSHOT stated in
    # another role breaks EVM-ID-UNIQUE (N80) like one on a streamed text's id; the text says so
    assert summary["Q9"]["z3"] == {"conformant": ["unsat", None], "any trace": ["sat", 3]}
    assert summary["Q9"]["z3ConformantBreaks"] is None
    assert "Q9, conformant: unsat up to 4 events" in text
    assert "Q9, any trace: 3 events" in text
    prose = "".join(c.source for c in _read("04-messages-snapshot-and-run-input.ipynb").cells
                    if c.cell_type == "markdown")
    assert "no *conformant* trace" in prose and "monitor has a gap" not in prose
    assert summary["runInput"]["withActivity"] == 0
    assert summary["runInput"]["states"] > 1000
    assert summary["runInput"]["differsFor"] == ["X1"]
    assert summary["Q9"]["probeBreaks"] == {"probe-Q9-replace": ["EVM-ID-UNIQUE"],
                                            "probe-Q9-replace-false": ["EVM-ID-UNIQUE"]}
    if PEERS:
        # the x1-open-at-finish trace tells drop from drop-open (issue 19)
        assert summary["X1"]["peer"] == {"reducer": "drop", "pipeline": "drop-open"}
        # with its warnings observed (issue 23), both modes take Q9=replace: no warning, replaced
        assert summary["Q9"]["peer"] == {"reducer": "replace", "pipeline": "replace"}


def _check_05(summary: dict, text: str) -> None:
    # the Python peer runs everywhere: its models refuse an unknown patch op
    assert "ag-ui-protocol" in summary["peers"]
    assert summary["behavesAs"]["ag-ui-protocol"]["Q20"] == "fatal"
    assert all(n > 30 for n in summary["traces"].values())  # corpus, probes and the search
    if not PEERS:
        assert "Node peers skipped" in text and summary["peers"] == ["ag-ui-protocol"]
        assert summary["versionDiff"] == {}
        return
    assert len(summary["peers"]) == 9 and summary["skipped"] == []  # CopilotKit 1.54.1 and 1.74.0 too
    b = summary["behavesAs"]
    assert (b["ag-ui-client-reducer"]["Q4"], b["ag-ui-client-pipeline"]["Q4"]) == ("accept", "fatal")
    assert b["ag-ui-client-reducer"]["Q3"] == "keep"  # warnings compared: keep, not warn
    # one SDK, two versions: the reducer is the same, the pipeline's enforcement is new in 1.0.0
    assert summary["versionDiff"]["reducer"] == {"knobs": {}, "only1.0.0": [], "only0.0.59": []}
    assert summary["versionDiff"]["pipeline"]["knobs"] == {
        "Q20": {"1.0.0": "drop-op", "0.0.59": "skip-patch"}}
    assert "unrecognised.drop" in summary["versionDiff"]["pipeline"]["only0.0.59"]
    assert set(summary["warningsCompared"]) == {
        "ag-ui-client-reducer", "ag-ui-client-pipeline", "ag-ui-client-0-0-59-reducer",
        "ag-ui-client-0-0-59-pipeline", "ag-ui-protocol"}
    # assistant-ui and tanstack render no generic activity: no evidence on any activity knob
    # (X1, a text message in flight, is the one they can show: the @ag-ui/client 0.0.58 verifier
    # under assistant-ui makes it drop-open)
    for name in ("assistant-ui-react-ag-ui", "tanstack-ai"):
        assert {k for k, v in b[name].items() if v is not None} <= {"X1"}
        assert "snapshot.create" in summary["divergenceBranches"][name]


def _check_06(summary: dict, text: str) -> None:
    from model.readings import KNOB_BY_ID

    def ends(knob, option):
        o = summary[knob]["options"][option]
        return o["activities"], o["warnings"], o["fatal"]

    # producer-side knobs: the monitor's shortest conformance split, every option put to it
    assert summary["Q12"]["length"] == 3
    assert summary["Q12"]["options"] == {"stream": [], "owner": ["ACT-DELTA-BASELINE"], "run": []}
    # Q12=run needs a second run: Q23's witness is its case, Q15's (parent's delta on a finished
    # subagent's activity) is owner's
    assert summary["Q12"]["onWitness"] == {
        "Q15": {"stream": [], "owner": ["ACT-DELTA-BASELINE"], "run": []},
        "Q23": {"stream": [], "owner": [], "run": ["ACT-DELTA-BASELINE"]}}
    assert summary["Q17"]["length"] == 1
    assert summary["Q17"]["options"] == {"as-received": [], "strip-echo": ["RIN-ECHO-STRIPPED"]}
    # Q14 in the depth-4 sweep: a declined snapshot after a failed delta
    assert summary["Q14"]["sweep"] == 4 and summary["Q14"]["classes"] == 3
    assert ends("Q14", "decline") == ({"act-1": ["PLAN", {"n": 0}]}, ["ACTIVITY_PATCH_FAILED"], None)
    assert ends("Q14", "adopt") == ({"act-1": ["SEARCH", {"n": 0}]}, ["ACTIVITY_PATCH_FAILED"],
                                    None)
    # Q15 and Q23 need an end and a restart: past the sweep, 5 events in the pair search
    for knob, other, code in (("Q15", "closed", "ACTIVITY_OWNER_ENDED"),
                              ("Q23", "run-scoped", "ACTIVITY_DELTA_NO_RUN_BASELINE")):
        assert summary[knob]["sweep"] is None and summary[knob]["pairSearch"] == 5, knob
        draft = KNOB_BY_ID[knob].draft
        assert ends(knob, draft)[1:] == ([], None) and ends(knob, other)[1:] == ([code], None)
        assert [a["act-1"][1] for a, _, _ in (ends(knob, draft), ends(knob, other))] == \
            [{"n": 2}, {"n": 0}], knob
    assert summary["Q22"] == {"P12-delta-missing-tolerated": "unsat", "P15-patch-atomic": "unsat",
                              "P39-fatal-justified": "unsat"}
    # X1: drop-open ends like drop on the conformant witness, parts from it on the probe
    assert summary["X1"]["sweep"] == 3
    assert {o: v["texts"] for o, v in summary["X1"]["options"].items()} == {
        "drop": ["user-1", "sys-h"], "preserve": ["msg-1", "user-1", "sys-h"],
        "drop-open": ["user-1", "sys-h"]}
    probe = summary["X1"]["probe"]
    assert probe["length"] == 4 and probe["breaks"] == ["LIF-CLOSE-BEFORE-FINISH"]
    assert {o: v["fatal"] for o, v in probe["options"].items()} == {
        "drop": None, "preserve": "RUN_FINISHED_WITH_OPEN", "drop-open": "RUN_FINISHED_WITH_OPEN"}
    # the recorded peer options (model/data/peer_options.json), as the knobs give them: the
    # producer-side knobs are observable for no consumer
    assert all(summary[k]["peer"] == dict(KNOB_BY_ID[k].peers) for k in summary if k != "Q22")
    assert summary["Q12"]["peer"] == {} and summary["Q17"]["peer"] == {}
    assert {k: summary[k]["peer"]["@ag-ui/client 1.0.0 pipeline"] for k in ("Q14", "Q23")} == {
        "Q14": "decline", "Q23": "continue"}
    assert "sequenceDiagram" in text and "unsat up to 4 events" in text


CHECKS = {"01-replace-and-ownership.ipynb": _check_01, "02-deltas-retype-patch-failure.ipynb":
          _check_02, "03-metadata.ipynb": _check_03,
          "04-messages-snapshot-and-run-input.ipynb": _check_04, "05-peer-report.ipynb": _check_05,
          "06-runs-subagents-and-resync.ipynb": _check_06}


THEME_QUESTIONS = {"01-replace-and-ownership.ipynb": ["Q2", "Q3", "Q4", "Q11"],
                   "02-deltas-retype-patch-failure.ipynb": ["Q5", "Q13", "Q20", "Q7"],
                   "03-metadata.ipynb": ["Q1", "Q6", "Q21"],
                   "04-messages-snapshot-and-run-input.ipynb": ["Q8", "Q10", "Q9"],
                   "06-runs-subagents-and-resync.ipynb": ["Q12", "Q14", "Q15", "Q17", "Q23"]}
"""The open questions each theme notebook walks through (the knobs of its THEME, X1 aside)."""


@pytest.mark.parametrize("name", sorted(THEME_QUESTIONS))
def test_theme_links_to_its_rows_of_the_settlement_table(name):
    """Each theme has one link cell (id ``questions-links``) linking every question it walks
    through to its row of ``questions.html`` (the page's rows are ``<tr id="Qn">``), and the
    notebook's THEME names those questions' knobs."""
    import re
    from properties.questions import QUESTION_BY_ID
    nb = _read(name)
    cells = [c for c in nb.cells if c.get("id") == "questions-links"]
    assert len(cells) == 1 and cells[0].cell_type == "markdown"
    linked = re.findall(r"\]\(\.\./out/questions\.html#(Q\d+)\)", cells[0].source)
    assert linked == THEME_QUESTIONS[name]
    theme = next(c.source for c in nb.cells if c.cell_type == "code" and "THEME = " in c.source)
    knobs = set(re.search(r"THEME = \[(.*)\]", theme).group(1).replace('"', "").split(", "))
    assert all(set(QUESTION_BY_ID[q].knobs) & knobs for q in linked), (linked, knobs)


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_notebook_executes(name, tmp_path):
    nb, seconds = _execute(name, tmp_path)
    assert os.listdir(tmp_path) == [], "a notebook wrote files"
    print(f"{name}: {seconds:.1f} s")
    check = CHECKS.get(name)
    if check is not None:
        check(_summary(nb), _outputs_text(nb))


# --- the helpers the notebooks are made of ------------------------------------------------------

def test_sweep_helpers():
    """split_path, split_slice, draw_slice, split_finding and verdicts_markdown on one sweep."""
    import matplotlib
    matplotlib.use("Agg")
    from counterexamples.report.walkthrough import (draw_slice, split_finding, split_path, split_slice,
                                             verdicts_markdown)
    from properties.search.explore import ExploreOptions, explore
    from properties.search.graph import state_graph
    from properties.search.report import trace_to
    report = explore(ExploreOptions(4, reading=None, properties=(), keep_edges=True))

    sp = split_path(report, "Q4")
    trace = report.splits["Q4"][0]
    assert len(sp.path) == len(trace)  # the start and one node per event but the last
    assert trace_to(report, sp.path[-1]) == tuple(trace[:-1])
    assert {a.get("Q4") for _, a in sp.leaves if a.get("Q4-opener") == "first"} == \
        {"fatal", "skip", "accept"}

    g = split_slice(report, "Q11", state_graph(report), neighbours=1)
    leaves = {n: d for n, d in g.nodes(data=True) if d["role"] == "leaf"}
    assert sorted(d["side"] for d in leaves.values()) == [0, 1]
    assert {d["text"].splitlines()[0] for d in leaves.values()} == {"Q11=in-place", "Q11=move"}
    # Q11's witness is 3 events since issue 19 (a MESSAGES_SNAPSHOT stating both activities)
    assert sum(1 for _, d in g.nodes(data=True) if d["role"] == "path") == 3
    assert all(d["layer"] == 3 for d in leaves.values())
    fig = draw_slice(g)
    assert fig.axes[0].get_title() == "Q11: Q11=in-place  vs  Q11=move"

    finding = split_finding(report, "Q13")
    text = verdicts_markdown(finding)
    assert len(text.splitlines()) == 2 + len(finding["verdicts"]) == 4
    assert "FATAL ACTIVITY_PATCH_FAILED@2 (SNP-SURFACE-FAILURE)" in text


def test_theme_traces_pick_the_knobs():
    from counterexamples.report.walkthrough import theme_traces
    ids = list(theme_traces(None, ["Q4"]))
    assert ids and all(i.startswith(("AMB-Q4-", "probe-Q4")) for i in ids)
    assert not any("opener" in i for i in ids)
    assert "probe-Q4-opener" in theme_traces(None, ["Q4-opener"])


def test_option_helpers():
    """options_markdown on a consumer row and a producer row; recorded_peers_markdown."""
    from counterexamples.report.walkthrough import options_markdown, recorded_peers_markdown
    from model.wire import parse_events
    from properties.questions import option_outcomes
    trace = parse_events([
        {"type": "RUN_STARTED", "threadId": "t1", "runId": "r1"},
        {"type": "ACTIVITY_SNAPSHOT", "messageId": "a", "activityType": "PLAN", "content": {}},
        {"type": "ACTIVITY_SNAPSHOT", "messageId": "a", "activityType": "SEARCH", "content": {},
         "replace": False}])
    lines = options_markdown(option_outcomes(trace, "Q18", ({"Q18": "prose"},
                                                            {"Q18": "schema"}))).splitlines()
    assert lines[2:] == ["| prose | draft | a PLAN {} | - | active |",
                         "| schema | Q18=schema | a SEARCH {} | - | active |"]
    producer = options_markdown([{"option": "owner", "reading": "Q12=owner", "conformant": False,
                                  "breaks": ["ACT-DELTA-BASELINE"]}])
    assert producer.splitlines()[2] == "| owner | Q12=owner | no | ACT-DELTA-BASELINE |"
    peers = recorded_peers_markdown(["Q12", "Q4"]).splitlines()
    assert peers[0].startswith("| knob | @ag-ui/client 1.0.0 reducer | @ag-ui/client 1.0.0 "
                               "pipeline | @ag-ui/client 0.0.59 reducer |")
    assert peers[0].count("|") == 11  # the knob and the nine peers of the matrix
    assert peers[2].startswith("| Q12 | not observable | not observable |")
    assert peers[3].startswith("| Q4 | accept | fatal | accept | fatal |")
