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

from counterexamples.peers import node_peer_ready  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NOTEBOOK_DIR = os.path.join(ROOT, "notebooks")
NOTEBOOKS = sorted(os.path.basename(p) for p in glob.glob(os.path.join(NOTEBOOK_DIR, "*.ipynb")))
EXPECTED = ["01-replace-and-ownership.ipynb", "02-deltas-retype-patch-failure.ipynb",
            "03-metadata.ipynb", "04-messages-snapshot-and-run-input.ipynb",
            "05-peer-report.ipynb"]
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
    assert set(summary) == {"Q2", "Q3", "Q4", "Q4-opener", "Q11"}
    assert summary["Q11"]["sweep"] == 4 and summary["Q11"]["pairSearch"] == 4
    assert summary["Q11"]["classes"] == 2
    assert summary["Q2"]["sweep"] == summary["Q3"]["sweep"] == 3
    assert summary["Q4"]["sweep"] == summary["Q4-opener"]["sweep"] == 4
    for k, v in summary.items():
        assert v["sweep"] == v["pairSearch"] == v["z3"]["snapshots and deltas"], k
    # Z3's full world holds a MESSAGES_SNAPSHOT that introduces two activities at once, which the
    # sweep's vocabulary cannot send: one event shorter for Q11, equal elsewhere
    assert summary["Q11"]["z3"]["full world"] == 3
    assert all(v["z3"]["full world"] == v["sweep"] for k, v in summary.items() if k != "Q11")
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
    if PEERS:
        assert summary["Q21"]["peer"] == {"reducer": "shim", "pipeline": "fatal"}


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
        assert summary["Q9"]["peer"] == {"reducer": None, "pipeline": None}  # no single option


def _check_05(summary: dict, text: str) -> None:
    assert summary["traces"] > 30  # the corpus (findings, field cases) and the probes
    if not PEERS:
        assert summary["counts"] == {} and "peer run skipped" in text
        return
    for mode in ("reducer", "pipeline"):
        counts = summary["counts"][mode]
        assert counts["traces"] == summary["traces"] and counts["error"] == 0
    assert summary["contradictions"] == 0  # the recorded behaviour still holds
    assert summary["behavesAs"]["reducer"]["Q4"] == "accept"
    assert summary["behavesAs"]["pipeline"]["Q4"] == "fatal"
    assert summary["modesDiffer"] == ["Q4", "Q20", "Q21"]
    assert summary["conformantDivergences"] == []
    assert summary["counts"]["pipeline"]["divergence"] == 0
    # a null member: the producer's MET-NOT-NULL where the model fails the run, or the shim's
    # EVM-ABSENT-NOT-NULL where the nearest reading (Q21=shim) steps the event as its shim
    assert all({"MET-NOT-NULL", "PRC-MALFORMED-FATAL", "EVM-ABSENT-NOT-NULL"} & set(c)
               for c in summary["divergenceClauses"].values())
    assert summary["divergences"]


CHECKS = {"01-replace-and-ownership.ipynb": _check_01, "02-deltas-retype-patch-failure.ipynb":
          _check_02, "03-metadata.ipynb": _check_03,
          "04-messages-snapshot-and-run-input.ipynb": _check_04, "05-peer-report.ipynb": _check_05}


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
    from counterexamples.walkthrough import (draw_slice, split_finding, split_path, split_slice,
                                             verdicts_markdown)
    from properties.explore import explore, state_graph, trace_to
    report = explore(4, reading=None, properties=(), keep_edges=True)

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
    assert sum(1 for _, d in g.nodes(data=True) if d["role"] == "path") == 4
    assert all(d["layer"] == 4 for d in leaves.values())
    fig = draw_slice(g)
    assert fig.axes[0].get_title() == "Q11: Q11=in-place  vs  Q11=move"

    finding = split_finding(report, "Q13")
    text = verdicts_markdown(finding)
    assert len(text.splitlines()) == 2 + len(finding["verdicts"]) == 4
    assert "FATAL ACTIVITY_PATCH_FAILED@2 (SNP-SURFACE-FAILURE)" in text


def test_theme_traces_pick_the_knobs():
    from counterexamples.walkthrough import theme_traces
    ids = list(theme_traces(None, ["Q4"]))
    assert ids and all(i.startswith(("AMB-Q4-", "probe-Q4")) for i in ids)
    assert not any("opener" in i for i in ids)
    assert "probe-Q4-opener" in theme_traces(None, ["Q4-opener"])
