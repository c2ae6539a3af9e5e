"""benchmarks/explore.py's worker series (issue 43.4): per number of workers, the search's wall
seconds, the process tree's CPU seconds and peak memory, and the speedup over one worker."""
import importlib
import json
import sys
from pathlib import Path

import pytest

from properties.search.explore import ExploreOptions, explore


@pytest.fixture
def bench(monkeypatch):
    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parent.parent / "benchmarks"))
    monkeypatch.delitem(sys.modules, "explore", raising=False)
    yield importlib.import_module("explore")
    sys.modules.pop("explore", None)


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
