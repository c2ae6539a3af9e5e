"""The spec coverage report (issue 20): properties/coverage.py."""
from __future__ import annotations

import json

from model.branches import BRANCH_LIST
from model.wire import parse_events
from properties.coverage import (DIMENSIONS, Coverage, coverage_of, render_text, report,
                                 totals_line, trace_coverage, universe)

RUN = {"type": "RUN_STARTED", "threadId": "t", "runId": "r"}


def _snap(mid="act-1", content=None, **more):
    return {"type": "ACTIVITY_SNAPSHOT", "messageId": mid, "activityType": "PLAN",
            "content": {"n": 1, "list": [1]} if content is None else content, **more}


def _delta(patch, mid="act-1", **more):
    return {"type": "ACTIVITY_DELTA", "messageId": mid, "activityType": "PLAN", "patch": patch,
            **more}


def test_one_trace_names_its_branches_knobs_clauses_and_features():
    trace = parse_events([
        RUN, _snap(metadata={"k": {"a": 1}}),
        _delta([{"op": "move", "from": "/n", "path": "/m~1x"},
                {"op": "test", "path": "/list/0", "value": 1.5}]),
        _snap(replace=False, metadata={"k": {"b": 2}}),
        {"type": "MESSAGES_SNAPSHOT", "messages": [{"id": "u", "role": "user", "content": "x"}]},
        _delta([{"op": "add", "path": "/x", "value": 1}], mid="u"),
    ])
    items, capped = trace_coverage(trace)
    assert not capped
    assert {"snapshot.create", "delta.patch-failed", "snapshot.replace-false",
            "messages-snapshot.reconcile", "delta.not-activity"} <= items["branch"]
    assert {"op:move:escaped:-", "op:test:index:float"} <= items["op"]
    assert "patch:2:fails-after-applying" in items["patch"]
    assert {"role:ACTIVITY_DELTA:user", "role:ACTIVITY_SNAPSHOT:activity"} <= items["role"]
    assert {"ms:keeps-unlisted", "ms:history-user"} <= items["ms"]
    assert "Q1=merge" in items["knob"] and "Q1=ignore" in items["knob"]  # replace:false metadata
    assert "Q1" in items["split"]
    assert {"ACTIVITY_PATCH_FAILED", "ACTIVITY_DELTA_TARGET_NOT_ACTIVITY"} <= items["code"]
    assert "id-reused-across-roles" in items["violation"]
    assert {"EVM-ID-UNIQUE", "SNP-TEST-FAIL"} <= items["clause"]


def test_malformed_members_halted_steps_and_producer_knobs():
    trace = parse_events([RUN, _snap(subagentRunId="sub-1"),
                          _snap(replace=False),  # untagged replace:false on a subagent's: Q2
                          _snap(replace="false"), RUN])
    items, _ = trace_coverage(trace)
    assert "malformed:ACTIVITY_SNAPSHOT.replace:string" in items["malformed"]
    assert "lifecycle.halted" in items["branch"]  # the step after the fatal
    assert {"Q2=continues", "Q2=parent"} <= items["knob"] and "Q2" in items["split"]


def test_report_counts_what_was_hit_and_lists_what_never_was():
    traces = [parse_events([RUN, _snap()]), parse_events([RUN, _snap(), _snap()])]
    doc = report(coverage_of(traces))
    assert doc["traces"] == 2 and set(doc["dimensions"]) == set(DIMENSIONS)
    branches = doc["dimensions"]["branch"]
    assert branches["total"] == len(BRANCH_LIST)
    assert branches["counts"]["snapshot.create"] == 2 and branches["counts"]["snapshot.replace"] == 1
    assert "delta.apply" in branches["never"] and "snapshot.create" not in branches["never"]
    assert branches["hit"] + len(branches["never"]) == branches["total"]
    line = totals_line(doc)
    assert line.startswith("coverage of 2 traces: clauses ") and \
        f"branches {branches['hit']}/{len(BRANCH_LIST)}" in line
    text = render_text(doc)
    assert max(len(x) for x in text.splitlines()) <= 120  # folded at word boundaries
    assert render_text(doc, width=None).splitlines()[0] == line and "never: " in text


def test_coverage_merges_and_universe_is_complete():
    a = coverage_of([parse_events([RUN, _snap()])])
    b = coverage_of([parse_events([RUN, _delta([])])])
    both = a.merge(b)
    assert both.traces == 2
    assert both.hits["branch"]["lifecycle.run-boundary"] == 2
    assert isinstance(Coverage(), Coverage) and set(universe()) == set(DIMENSIONS)
    assert len(universe()["knob"]) == len(set(universe()["knob"]))


def test_run_prints_the_totals_line_and_its_coverage_in_full(tmp_path, capsys):
    """``run`` ends its text output with the totals of the coverage of the search's traces;
    ``--coverage --json`` adds the whole report; summary.json is unchanged by either."""
    from activity_check.cli import main
    small = ["run", "--examples", "20", "--seed", "3", "--budget", "inf", "--bfs-depth", "0"]
    assert main([*small, "--out", str(tmp_path / "a")]) == 0
    out = capsys.readouterr().out.strip()
    # the totals line ends the output, folded within 120 columns (issue 39)
    last = " ".join(x.strip() for x in out[out.rindex("\ncoverage of ") + 1:].splitlines())
    assert last.startswith("coverage of ") and "branches " in last
    traces = int(last.split()[2])
    assert traces >= 20  # the 20 drawn (a repeat counts again) and the witnesses offered
    assert main([*small, "--out", str(tmp_path / "b"), "--coverage", "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    doc = printed.pop("coverage")
    assert doc["traces"] == traces and set(doc["dimensions"]) == set(DIMENSIONS)
    assert doc["dimensions"]["branch"]["counts"]["lifecycle.run-boundary"] >= 20
    summary = json.loads((tmp_path / "b" / "summary.json").read_text())
    assert "coverage" not in summary and summary == printed
    assert (tmp_path / "a" / "summary.json").read_text() == \
        (tmp_path / "b" / "summary.json").read_text()


def test_explore_coverage_walks_every_leaf_of_the_search_tree(capsys):
    from activity_check.cli import main
    from properties.coverage import exploration_traces
    from properties.search.explore import ExploreOptions, explore
    explored = explore(ExploreOptions(depth=2, reading=None, properties=()))
    traces = exploration_traces(explored)
    # every node's shortest trace is a prefix of one of them
    prefixes = {tuple(t[:n]) for t in traces for n in range(1, len(t) + 1)}
    assert all(explored.parents.trace(i) in prefixes for i in range(1, len(explored.parents)))
    assert len(traces) < len(explored.parents)
    assert main(["explore", "--depth", "2", "--workers", "1", "--coverage", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)["coverage"]
    assert doc["traces"] == len(traces)
    assert "snapshot.create" in doc["dimensions"]["branch"]["counts"]
