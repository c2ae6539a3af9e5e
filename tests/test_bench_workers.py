"""benchmarks/explore.py's worker series (issue 43.4): per number of workers, the search's wall
seconds, the process tree's CPU seconds and peak memory, and the speedup over one worker."""
import importlib
import json
import os
import sys
from pathlib import Path

import pytest

from properties.search.explore import ExploreOptions, explore


def _benchmark(monkeypatch, name: str):
    """The module benchmarks/<name>.py, imported fresh (and dropped after the test)."""
    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parent.parent / "benchmarks"))
    monkeypatch.delitem(sys.modules, name, raising=False)
    yield importlib.import_module(name)
    sys.modules.pop(name, None)


@pytest.fixture
def bench(monkeypatch):
    yield from _benchmark(monkeypatch, "explore")


def test_the_series_reports_each_count_the_cores_allow_and_skips_the_others(bench, capsys):
    figures = bench.measure_series(depth=2, series=(1, 2, 4), repeat=2, cores=2)
    assert (figures["benchmark"], figures["depth"], figures["cores"], figures["repeat"]) == \
        ("explore-workers", 2, 2, 2)
    one, two, four = figures["rows"]
    assert four == {"workers": 4, "skipped": "this machine gives this process 2 cores"}
    states = explore(ExploreOptions(depth=2, reading=None)).states
    for row, workers in ((one, 1), (two, 2)):
        assert row["workers"] == workers and row["states"] == states and row["complete"]
        assert len(row["secondsEach"]) == len(row["treeCpuSecondsEach"]) == 2
        assert row["seconds"] == min(row["secondsEach"]) <= row["secondsMedian"]
        # the tree's CPU time holds a fresh interpreter's start-up and imports (over 0.2 s),
        # and its memory at least that interpreter with numpy (over 20 MB)
        assert all(cpu > 0.2 for cpu in row["treeCpuSecondsEach"])
        assert row["peakBytes"] == max(row["peakBytesEach"]) > 20e6
        assert row["speedup"] == round(one["secondsMedian"] / row["secondsMedian"], 2)
    assert one["speedup"] == 1.0
    table = bench.series_table(figures)
    assert table.splitlines()[2].startswith(f"| 1 | {one['seconds']} | ")
    assert table.splitlines()[4] == "| 4 | skipped: this machine gives this process 2 cores " \
                                    "| | | | |"
    for series, repeat in (((), 1), ((0, 1), 1), ((1,), 0)):
        with pytest.raises(ValueError):
            bench.measure_series(depth=1, series=series, repeat=repeat)


def test_the_series_from_the_command_line(bench, capsys):
    assert bench.main(["--depth", "1", "--repeat", "1", "--workers-series", "1", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    assert [r["workers"] for r in rows] == [1] and rows[0]["speedup"] == 1.0
    for argv, said in ((["--workers-series", "1,x"], "comma-separated numbers of workers"),
                       (["--workers-series", "1", "--workers", "2"], "give it without"),
                       (["--workers-series", "0"], "numbers of workers of 1 or more")):
        with pytest.raises(SystemExit) as stopped:
            bench.main(["--depth", "1", "--repeat", "1", *argv])
        err = capsys.readouterr().err
        assert stopped.value.code == 2 and said in err and err.count("\n") == 1


@pytest.fixture
def split(monkeypatch):
    yield from _benchmark(monkeypatch, "explore_split")


def test_the_split_in_fresh_processes_accounts_for_every_node_and_byte(split):
    """benchmarks/explore_split.py --fresh (issue 43.1's profile at many partitions): every
    frontier node is expanded by exactly one partition, each process reports its memory, and
    the summary is computed from the rows it prints."""
    mine = dict(os.environ)
    figures = split.measure_fresh(depth=3, parts=2, from_nodes=1, jobs=2)
    one = explore(ExploreOptions(depth=3, reading=None))
    assert (figures["depth"], figures["parts"], figures["fresh"]) == (3, 2, True)
    # the partitions ran in the environment a Dask nanny gives its workers (Dask's own defaults)
    assert figures["workerEnvironment"]["MALLOC_TRIM_THRESHOLD_"] == "65536"
    assert figures["workerEnvironment"]["OMP_NUM_THREADS"] == "1"
    assert dict(os.environ) == mine  # and this process's is as it was
    levels = figures["levels"]
    assert [row["level"] for row in levels] == [0, 1, 2]  # every level with a node, to depth - 1
    assert levels[0]["nodes"] == 1
    for row in levels:
        assert len(row["parts"]) == 2
        assert sum(p["nodes"] for p in row["parts"]) == row["nodes"]
    # the levels expanded hold every state but the last level's, which no one expands
    assert sum(row["nodes"] for row in levels) < one.states
    summary = figures["summary"]
    split_cpu = sum(p["cpuSeconds"] for row in levels for p in row["parts"])
    assert summary["partitionsCpuSeconds"] == round(split_cpu, 2)
    path = summary["driverCpuSeconds"] + sum(max(p["cpuSeconds"] for p in row["parts"])
                                             for row in levels)
    assert abs(summary["criticalPathCpuSeconds"] - path) < 0.02
    mb = 1 << 20
    memory = figures["memory"]
    assert memory["oneProcess"]["peak"] > memory["oneProcess"]["imports"] > 20 * mb
    for part in memory["parts"]:
        assert part["imports"] > 20 * mb  # numpy, the project and distributed
        assert part["peak"] is None or part["peak"] >= part["end"] > 0
    if summary.get("partitionsPeakBytes") is not None:
        assert summary["partitionsPeakBytes"] == sum(p["peak"] for p in memory["parts"])
    tables = figures["tables"]
    for name, entries in tables["oneProcess"].items():
        # what one process interns or computes, the partitions together do at least once
        # (a partition may meet a value another met too, never fewer overall)
        if name in ("classes", "states"):
            assert sum(t[name] for t in tables["parts"]) >= entries, name
    # each process's evictions and trims are reported; at depth 3 every process's tables stay
    # far within even a 1/16 share of the budget, so nothing is evicted or emptied (that each
    # partition has the whole budget, as a worker does, is test_bfs's SweepAdapter.spec test)
    for t in [tables["oneProcess"], *tables["parts"]]:
        assert (t["memoEvictions"], t["memoTrims"]) == (0, 0) and t["checked"] > 0


def test_the_split_with_partitions_to_spare_times_each_and_bounds_stealing(split):
    """benchmarks/explore_split.py --fresh --spread (issue 43.1, more expansion partitions
    than workers): each worker expands its own partitions (``e % workers`` its index) one by
    one, every node exactly once, and the stealing path is that of a worker taking the last
    partition of the queue with most left once its own are done."""
    assert split._stealing_makespan([[5, 1, 1], [1]]) == 5  # the second takes both 1s
    # the first runs 3 and 3, the second its 1 and then the last 3 twice
    assert split._stealing_makespan([[3, 3, 3, 3], [1]]) == 7
    assert split._stealing_makespan([[2], [2], []]) == 2 and split._stealing_makespan([]) == 0
    figures = split.measure_fresh(depth=3, parts=2, from_nodes=1, jobs=2, spread=3,
                                  spread_from=4)
    levels, summary = figures["levels"], figures["summary"]
    assert (summary["spread"], summary["spreadFrom"]) == (3, 4)
    for row in levels:
        spread = 3 if row["nodes"] >= 4 * 2 else 1
        for j, part in enumerate(row["parts"]):
            mine = part["partitions"]
            assert sorted(p["partition"] for p in mine) == list(range(j, 2 * spread, 2)), row
            # a worker runs its largest partition first (the engine's task priorities)
            assert [p["nodes"] for p in mine] == sorted((p["nodes"] for p in mine), reverse=True)
            assert sum(p["nodes"] for p in mine) == part["nodes"]
        assert sum(p["nodes"] for p in row["parts"]) == row["nodes"]
    assert [row["nodes"] >= 8 for row in levels] == [False, False, True]
    stolen = summary["driverCpuSeconds"] + sum(
        split._stealing_makespan([[q["cpuSeconds"] for q in p["partitions"]]
                                  for p in row["parts"]]) for row in levels)
    assert abs(summary["criticalPathStealingCpuSeconds"] - stolen) < 0.02
    # a worker that steals is never later than the same worker left to its own queue
    assert summary["criticalPathStealingCpuSeconds"] <= summary["criticalPathCpuSeconds"] + 0.02


def test_the_split_refuses_a_spread_it_cannot_measure(split, capsys):
    """explore_split.py: ``--spread`` needs ``--fresh`` (each worker a process of its own),
    ``--spread-from`` a spread above 1, and every count at least 1: refused with exit 2 and the
    reason, before any search."""
    for argv, said in ((["--spread", "4"], "--spread needs --fresh"),
                       (["--spread-from", "5"], "--spread-from needs --spread above 1"),
                       (["--fresh", "--spread", "0"], "must be at least 1"),
                       (["--fresh", "--spread", "2", "--spread-from", "0"], "must be at least 1")):
        with pytest.raises(SystemExit) as stopped:
            split.main(argv)
        assert stopped.value.code == 2 and said in capsys.readouterr().err, argv
