"""The stateful machines' random share (``properties.search.machines.consumer_machine(random_share=)``):
share 0 draws no random-surface event (none counted, the strategy never called), a positive share
draws them only while a run is active and more often the smaller the share, a negative share is
refused; the zoo benchmark's ``--random-share`` option reaches the machines and its JSON reports
it."""
from __future__ import annotations

import json

import pytest

import properties.search.machines as machines
from properties.search.machines import RANDOM_SHARE, consumer_machine, run_machine
from properties.zoo import MUTANT_BY_NAME
from model.consumers import REFERENCE
from test_properties import _load_benchmark


def _counting(monkeypatch) -> list:
    """Wrap the machines' random-surface strategy; returns the list its calls are appended to
    (one entry per call: the belief's run status and whether malformed events were asked)."""
    calls: list = []
    real = machines.random_surface_event

    def wrapped(belief, *args, **kwargs):
        calls.append((belief.run, bool(kwargs.get("malformed", args[1] if len(args) > 1
                                                  else False))))
        return real(belief, *args, **kwargs)

    monkeypatch.setattr(machines, "random_surface_event", wrapped)
    return calls


def _run(share: int, adversarial: bool = True, examples: int = 40):
    return run_machine(consumer_machine(REFERENCE, adversarial=adversarial, random_share=share),
                       seed=3, max_examples=examples, shrink=False)


def test_share_zero_draws_no_random_surface_event(monkeypatch):
    calls = _counting(monkeypatch)
    result = _run(0)
    assert result.caught is False, result.message
    assert result.steps > 100
    assert result.random_steps == 0
    assert calls == []


@pytest.mark.parametrize("adversarial", [False, True], ids=["conformant", "adversarial"])
def test_positive_share_draws_random_events_while_a_run_is_active(monkeypatch, adversarial):
    calls = _counting(monkeypatch)
    result = _run(2, adversarial)
    assert result.caught is False, result.message
    assert 0 < result.random_steps < result.steps
    # kept draws are at most the strategy's calls (a draw the monitor disagrees with is dropped)
    assert result.random_steps <= len(calls)
    # only while a run is active, and never in the adversarial slot (never malformed)
    assert set(calls) == {("active", False)}


def test_smaller_share_draws_more_random_events():
    every_second, every_eighth = _run(2), _run(8)
    share_of = [r.random_steps / r.steps for r in (every_second, every_eighth)]
    assert share_of[0] > share_of[1] > 0
    assert every_second.random_steps < every_second.steps


def test_default_share_is_the_declared_one(monkeypatch):
    assert RANDOM_SHARE > 0
    default = run_machine(consumer_machine(REFERENCE, adversarial=True), seed=3,
                          max_examples=30, shrink=False)
    explicit = run_machine(consumer_machine(REFERENCE, adversarial=True,
                                            random_share=RANDOM_SHARE), seed=3,
                           max_examples=30, shrink=False)
    assert (default.steps, default.random_steps) == (explicit.steps, explicit.random_steps)
    assert default.random_steps > 0


def test_negative_share_is_refused():
    with pytest.raises(ValueError, match="random_share"):
        consumer_machine(REFERENCE, random_share=-1)


def test_share_changes_what_is_drawn_for_a_mutant():
    """The same seed with and without the random surface draws different traces, and both
    catch a mutant that vocabulary moves alone show."""
    mutant = MUTANT_BY_NAME["ms-drops-held-activity"]
    off = run_machine(consumer_machine(mutant, adversarial=True, random_share=0), seed=0,
                      max_examples=100, shrink=False)
    on = run_machine(consumer_machine(mutant, adversarial=True, random_share=2), seed=0,
                     max_examples=100, shrink=False)
    assert off.caught and on.caught
    assert off.random_steps == 0 < on.random_steps




def test_benchmark_reports_the_share(capsys):
    bench = _load_benchmark()
    assert bench.main(["--only", "ms-drops-held-activity", "--examples", "20", "--no-bfs",
                       "--no-shrink", "--random-share", "0", "--json"]) == 0
    figures = json.loads(capsys.readouterr().out)
    assert figures["randomShare"] == 0 and figures["shrunk"] is False
    assert [r["mutant"] for r in figures["rows"]] == ["ms-drops-held-activity"]
    for machine in figures["machines"].values():
        assert machine["steps"] > 0 and machine["randomSteps"] == 0
    assert bench.main(["--only", "ms-drops-held-activity", "--examples", "20", "--no-bfs",
                       "--no-shrink", "--random-share", "2", "--json"]) == 0
    figures = json.loads(capsys.readouterr().out)
    assert figures["randomShare"] == 2
    assert all(m["randomSteps"] > 0 for m in figures["machines"].values())


def test_benchmark_refuses_a_negative_share(capsys):
    with pytest.raises(SystemExit) as exit_info:
        _load_benchmark().main(["--random-share", "-1", "--no-bfs"])
    assert exit_info.value.code == 2
    assert "--random-share" in capsys.readouterr().err


@pytest.mark.parametrize("argv,member", [
    (["--only", "no-such-mutant", "--no-bfs"], "no-such-mutant"),
    (["--examples", "-1", "--no-bfs"], "--examples"),
    (["--bfs-depth", "-3"], "--bfs-depth")])
def test_benchmark_refuses_bad_arguments_in_one_line(capsys, argv, member):
    with pytest.raises(SystemExit) as exit_info:
        _load_benchmark().main(argv)
    assert exit_info.value.code == 2
    assert member in capsys.readouterr().err.splitlines()[-1]
