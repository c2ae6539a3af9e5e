"""The bundled field cases (real traces from public bug reports) replayed on the model."""
from pathlib import Path

import pytest

from counterexamples.field_cases import ARGUED, check_case, load_cases
from model.verdict import evaluate
from model.wire import parse_events

CASES = load_cases()
SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "cases" / "field-cases.jsonl"


def test_corpus_holds_every_case_with_sources():
    assert len(CASES) == 18
    assert all(c.sources and all(s.startswith("https://") for s in c.sources) for c in CASES)
    assert len({c.id for c in CASES}) == len(CASES)


@pytest.mark.skipif(not SHARED.exists(), reason="../shared is not beside the checkout")
def test_corpus_copy_matches_shared_cases():
    bundled = (Path(__file__).resolve().parents[1] / "counterexamples" / "corpus" /
               "field-cases.jsonl").read_text(encoding="utf-8")
    assert bundled == SHARED.read_text(encoding="utf-8")


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_case_verdict(case):
    result = check_case(case)
    assert result.problems == []
    basis = case.expected.get("basis")
    if basis in ("draft", "draft+assumption"):
        assert result.status == ("argued" if case.id in ARGUED else "agrees")
    else:
        assert result.status == "covered"
        assert all(result.readings.values())


def test_fc22_malformed_content_is_fatal_at_event_1():
    case = next(c for c in CASES if c.id == "FC-22")
    v = evaluate(parse_events(case.events)).to_json()
    assert v["fatal"]["code"] == "MALFORMED_ACTIVITY_EVENT"
    assert v["fatal"]["atEvent"] == 1
    assert v["fatal"]["clause"] == "ACT-MALFORMED-FATAL"
    assert v["messages"] == []


def test_fc03_candidates_map_to_q8_options():
    case = next(c for c in CASES if c.id == "FC-03")
    readings = check_case(case).readings
    all_or_nothing = next(v for k, v in readings.items() if k.startswith("all-or-nothing"))
    scoped = next(v for k, v in readings.items() if k.startswith("scoped"))
    assert all_or_nothing == ["Q8=self-revoking"]
    assert scoped == ["Q8=keep", "Q8=by-type"]


def test_a_wrong_expectation_is_reported():
    case = next(c for c in CASES if c.id == "FC-23")
    broken = type(case)(case.id, case.title, case.sources, case.events,
                        {**case.expected, "warnings": []})
    result = check_case(broken)
    assert result.status == "differs"
    assert any(p.startswith("warnings:") for p in result.problems)


def test_argued_deviation_is_the_only_difference():
    case = next(c for c in CASES if c.id == "FC-17")
    got = evaluate(parse_events(case.events)).to_json()["messages"]
    calls = got[0]["toolCalls"]
    assert [c["function"]["arguments"] for c in calls] == ["", ""]
    assert got[-1]["id"] == "app-tc1" and got[-1]["role"] == "activity"
