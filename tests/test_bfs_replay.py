"""The Z3 cross-check's enumeration runs on the one breadth-first driver (issue 21):
``properties.smt.replay.enumerate_shortest`` (:class:`~properties.smt.replay.ReplaySystem` on
:func:`properties.search.bfs.search`) answers what replaying every trace one by one answers
(:func:`~properties.smt.replay.views_of`, no search, no merging of states): for each goal, the
shortest trace on which it holds at the last event, the first in the alphabet's order."""
import itertools
from dataclasses import replace

import pytest

from model.readings import DRAFT, parse_reading
from properties.smt import queries as q
from properties.smt.checks import RULES, SHAPES, SITUATIONS
from properties.smt.replay import Goal, alphabet, enumerate_shortest, views_of
from properties.smt.world import SMALL_WORLD


def _goals(mode):
    checks = [("sit", SITUATIONS), ("shape", SHAPES), ("rule", RULES)]
    return {f"{kind}:{c.id}": Goal(c.holds, c.track, mode(c)) for kind, cs in checks for c in cs}


def _holds(goal: Goal, views: list) -> bool:
    """Whether ``goal`` holds at the last of ``views``, its tracked value folded over the views
    before, on a trace of its mode."""
    aux = None
    for view in views[:-1]:
        if goal.track is not None:
            aux = goal.track(aux, view)
    last = views[-1]
    if (goal.mode == "conformant" and not last.conformant) or (
            goal.mode == "prefix" and not last.conformant_before):
        return False
    return bool(goal.holds(last, aux))


def _replayed(depth: int, readings: dict, producers: list, together: bool, goals: dict) -> dict:
    """The oracle: every trace of up to ``depth - 1`` letters, shortest first, in the alphabet's
    order, replayed alone; conformant while no event breaks any of ``producers``
    (``together``), else while some one of them allows every event."""
    letters = alphabet(SMALL_WORLD)
    out: dict = {name: None for name in goals}
    for n in range(1, depth):
        for trace in itertools.product(letters, repeat=n):
            open_goals = [name for name, v in out.items() if v is None]
            if not open_goals:
                return out
            if together:
                views = views_of(SMALL_WORLD, trace, readings, producers)
            else:  # the copies do not depend on the producer: only the flags are merged
                per = [views_of(SMALL_WORLD, trace, readings, [p]) for p in producers]
                flags = [any(vs[k].conformant for vs in per) for k in range(n)]
                views = [replace(v, conformant=flags[k],
                                 conformant_before=flags[k - 1] if k else True)
                         for k, v in enumerate(per[0])]
            for name in open_goals:
                if _holds(goals[name], views):
                    out[name] = trace
    return out


@pytest.mark.parametrize("reading", ["draft", "strict,Q20=drop-op"])
def test_the_enumeration_finds_what_replaying_every_trace_finds(reading):
    r = parse_reading(reading)
    goals = _goals(lambda c: "prefix" if c.actor == "producer" else "conformant")
    found = enumerate_shortest(SMALL_WORLD, 3, {"a": r}, [r], goals)
    assert found == _replayed(3, {"a": r}, [r], True, goals)
    assert sum(v is not None for v in found.values()) > 5
    assert sum(v is None for v in found.values()) > 5


def test_the_enumeration_under_any_producer_reading_finds_what_replaying_finds():
    # knobs that part from draft two letters in (the replay stops at the last goal found)
    pairs = [(a, b) for a, b in q.knob_pairs() if set(b.differences()) & {"Q5", "Q11"}]
    readings = {"draft": DRAFT, **{f"r{i}": b for i, (_, b) in enumerate(pairs)}}
    goals = {f"r{i}": Goal(lambda view, aux, name=f"r{i}": view.copies["draft"].after !=
                           view.copies[name].after) for i in range(len(pairs))}
    producers = [DRAFT.with_(Q2=a, **{"Q4-opener": b}) for a in ("continues", "parent")
                 for b in ("current", "first")]
    found = enumerate_shortest(SMALL_WORLD, 3, readings, None, goals)
    assert found == _replayed(3, readings, producers, False, goals)
    assert [len(v) if v else 0 for v in found.values()] == [2, 2]


def test_the_enumeration_keeps_its_node_bound():
    with pytest.raises(RuntimeError, match="exceeded 100 nodes"):
        enumerate_shortest(SMALL_WORLD, 4, {"a": DRAFT}, [DRAFT],
                           _goals(lambda c: "conformant"), max_nodes=100)
