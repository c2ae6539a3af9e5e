"""The Z3 cross-check's enumeration fits the one breadth-first driver: the driver's version
answers what ``properties.smt.replay.enumerate_shortest`` answers (issue 21)."""
import pytest

from model.readings import DRAFT, parse_reading
from properties import bfs_replay
from properties.smt import queries as q
from properties.smt.checks import PROOF_PROPERTIES, RULES, SHAPES, SITUATIONS
from properties.smt.replay import Goal, enumerate_shortest
from properties.smt.world import SMALL_WORLD


def _goals(mode):
    checks = [("sit", SITUATIONS), ("shape", SHAPES), ("rule", RULES)]
    return {f"{kind}:{c.id}": Goal(c.holds, c.track, mode(c)) for kind, cs in checks for c in cs}


@pytest.mark.parametrize("reading", ["draft", "strict,Q20=drop-op"])
def test_the_driver_enumerates_the_same_shortest_traces(reading):
    r = parse_reading(reading)
    conformant = _goals(lambda c: "prefix" if c.actor == "producer" else "conformant")
    old = enumerate_shortest(SMALL_WORLD, 4, {"a": r}, [r], conformant)
    new = bfs_replay.enumerate_shortest(SMALL_WORLD, 4, {"a": r}, [r], conformant)
    assert new == old and sum(v is not None for v in old.values()) > 10
    anything = {f"prop:{c.id}": Goal(c.holds, c.track, "any") for c in PROOF_PROPERTIES}
    assert bfs_replay.enumerate_shortest(SMALL_WORLD, 3, {"a": r}, [r], anything) == \
        enumerate_shortest(SMALL_WORLD, 3, {"a": r}, [r], anything)


def test_the_driver_enumerates_pairs_under_any_producer_reading_and_keeps_the_node_bound():
    pairs = q.knob_pairs()[:6]
    readings = {"draft": DRAFT, **{f"r{i}": b for i, (_, b) in enumerate(pairs)}}
    goals = {f"r{i}": Goal(lambda view, aux, name=f"r{i}": view.copies["draft"].after !=
                           view.copies[name].after) for i in range(len(pairs))}
    old = enumerate_shortest(SMALL_WORLD, 3, readings, None, goals)
    assert bfs_replay.enumerate_shortest(SMALL_WORLD, 3, readings, None, goals) == old
    with pytest.raises(RuntimeError):
        bfs_replay.enumerate_shortest(SMALL_WORLD, 4, {"a": DRAFT}, [DRAFT],
                                      _goals(lambda c: "conformant"), max_nodes=100)
