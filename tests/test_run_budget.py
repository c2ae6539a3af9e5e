"""What bounds ``run``'s breadth-first cross-check: ``--bfs-depth``, which has an upper bound
(:data:`activity_check.cmd_run.MAX_BFS_DEPTH`), not ``--budget``, which stops the seeded
generation only, so that the ids of the knobs the BFS reaches do not depend on the budget
(:mod:`counterexamples.pipeline`, step 4); and a Ctrl-C or SIGTERM during that BFS stopping the
run.

``run --bfs-depth 9`` once ran on to 6.5 GB until stopped: the depth bound refuses it. A Ctrl-C
or a SIGTERM during the run's BFS was swallowed (explore ends itself on it, and the settlement
table then ran the whole sweep again): the pipeline now raises KeyboardInterrupt on it."""
from __future__ import annotations

import math

import pytest

from activity_check.cli import main

ERROR_PREFIX = "activity-check: error:"


def _one_error_line(err: str) -> str:
    assert "Traceback" not in err and err.endswith("\n") and err.count("\n") == 1, err
    assert err.startswith(ERROR_PREFIX), err
    return err.rstrip("\n")


@pytest.fixture
def storage_aside(tmp_path, monkeypatch):
    """Hypothesis's storage in ``tmp_path`` (as the command line keeps it), from an empty
    working directory (:func:`tests.test_cli._in_a_storage_aside`), put back after."""
    from hypothesis.configuration import set_hypothesis_home_dir
    from tests.test_cli import _in_a_storage_aside
    yield _in_a_storage_aside(tmp_path, monkeypatch)
    set_hypothesis_home_dir(None)


class _Spy:
    """Stands in for :func:`properties.search.explore.explore` and records the arguments; returns the
    real search's report for the same arguments."""

    def __init__(self, real):
        self.real, self.calls = real, []

    def __call__(self, **kwargs):
        self.calls.append(kwargs)
        return self.real(**kwargs)


def _bfs_ids(summary) -> dict:
    """``{knob: finding id}`` of the ambiguity findings the BFS reached (``bfsShortest`` set)."""
    return {f["knob"]: f["id"] for f in summary.findings
            if f["kind"] == "ambiguity" and f["bfsShortest"] is not None}


def test_a_tiny_budget_stops_generation_but_not_the_bfs(storage_aside, monkeypatch):
    """A budget spent before the seeded search is done (a millisecond) stops the generation
    only: the BFS still runs to the requested depth with no timeout, the settlement table is
    built at that depth, and the knobs the BFS reaches get the same finding ids as with no
    budget at all (the seed's traces are the same, so only the budget differs); the summary
    ends with the settlement table."""
    import properties.search.explore as explore_module
    from counterexamples.pipeline import RunConfig, run_pipeline

    spy = _Spy(explore_module.explore)
    monkeypatch.setattr(explore_module, "explore", spy)
    cut = run_pipeline(RunConfig(examples=20, budget=0.001, max_events=4, bfs_depth=3),
                       "0").summary
    full = run_pipeline(RunConfig(examples=20, budget=math.inf, max_events=4, bfs_depth=3),
                        "0").summary
    assert (cut.stopped_by, full.stopped_by) == ("budget", "examples")
    assert cut.examples < full.examples == 20
    run_calls = [c for c in spy.calls if c.get("properties") == ()]
    assert [(c["depth"], c.get("timeout")) for c in run_calls] == [(3, None), (3, None)]
    assert cut.questions is not None and cut.questions["depth"] == 3
    assert cut.questions["rows"] == full.questions["rows"]
    reached = _bfs_ids(cut)  # 13 knobs at depth 3 (Q1, Q2, Q3, Q5, ..., Q19, Q20, X1)
    assert len(reached) >= 10 and {"Q1", "Q19", "X1"} <= set(reached), reached
    assert reached == _bfs_ids(full)
    doc = cut.to_json()
    assert list(doc)[-1] == "questions"


def test_an_interrupted_bfs_stops_the_run(storage_aside, monkeypatch):
    """A Ctrl-C or a SIGTERM during the run's BFS (which :func:`explore` ends with
    ``stopped_by="interrupted"``) stops the run: the pipeline raises KeyboardInterrupt instead
    of building the settlement table, which would run the whole sweep again and swallow the
    signal (a SIGTERM then exited 0 with a complete output)."""
    import properties.search.explore as explore_module
    from counterexamples.pipeline import RunConfig, run_pipeline

    real = explore_module.explore
    calls = []

    def interrupted(**kwargs):
        calls.append(kwargs)
        report = real(**{**kwargs, "depth": 1})
        report.stopped_by, report.complete = "interrupted", False
        return report

    monkeypatch.setattr(explore_module, "explore", interrupted)
    with pytest.raises(KeyboardInterrupt):
        run_pipeline(RunConfig(examples=3, budget=math.inf, max_events=3, bfs_depth=2), "0")
    assert len(calls) == 1  # not searched again by the settlement table


@pytest.mark.parametrize("depth", ["6", "9", "100"])
def test_bfs_depth_above_the_bound_is_refused_in_one_line(depth, tmp_path, capsys):
    """``--bfs-depth`` above :data:`MAX_BFS_DEPTH` (5) is refused before any work, in one line
    naming the option, the bound and the command for deeper searches (exit 2)."""
    from activity_check.cmd_run import MAX_BFS_DEPTH
    assert MAX_BFS_DEPTH == 5
    out = tmp_path / "out"
    assert main(["run", "--bfs-depth", depth, "--out", str(out)]) == 2
    captured = capsys.readouterr()
    line = _one_error_line(captured.err)
    assert line == (f"{ERROR_PREFIX} --bfs-depth must be at most 5, not {depth} (deeper: "
                    "activity-check explore --depth N, which --timeout and --max-states bound)")
    assert captured.out == "" and not out.exists()


def test_the_bound_is_in_the_help(capsys, monkeypatch):
    """``run --help`` gives the depth bound and says the budget does not bound the BFS."""
    monkeypatch.setenv("COLUMNS", "1000")  # one line an option: no wrap inside --bfs-depth
    assert main(["run", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "at most 5" in text
    assert "breadth-first cross-check is bounded by --bfs-depth, not by the budget" in text


SIGTERM_DURING_BFS = r"""
import os, signal, sys, time
import properties.search.explore as explore_module
real = explore_module.explore

def explore(**kwargs):
    # the run's BFS receives a real SIGTERM and ends itself on it, as explore does
    try:
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(30)  # the handler raises Terminated into the sleep
    except KeyboardInterrupt:
        pass
    report = real(**{**kwargs, "depth": 1})
    report.stopped_by, report.complete = "interrupted", False
    return report

explore_module.explore = explore
sys.argv = ["activity-check", "run", "--examples", "3", "--max-events", "3", "--budget", "inf",
            "--out", sys.argv[1]]
from activity_check.console import console_main
console_main()
"""


def test_a_sigterm_during_the_run_s_bfs_is_reported_as_terminated_subprocess(tmp_path):
    """A SIGTERM that the run's BFS ends itself on exits 143 with the one line "terminated",
    leaving no output; before, the settlement table ran the sweep again and the run went on
    to exit 0 (and once the pipeline stopped, it was also reported as "interrupted")."""
    import subprocess
    import sys
    out = tmp_path / "out"
    r = subprocess.run([sys.executable, "-c", SIGTERM_DURING_BFS, str(out)], cwd=tmp_path,
                       capture_output=True, text=True, timeout=120)
    assert (r.returncode, r.stderr) == (143, "activity-check: terminated\n"), r.stderr
    assert r.stdout == "" and not out.exists()
