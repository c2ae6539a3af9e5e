"""Readings as the user names them (model.readings.parse_reading): presets, overrides, errors."""
import pytest

from model.readings import DRAFT, PRESETS, ReadingError, parse_reading


@pytest.mark.parametrize("spec", ["Q1=ignore", "q1=ignore", "q1=IGNORE", " Q1 = Ignore "])
def test_knob_ids_and_options_in_any_case(spec):
    assert parse_reading(spec) == DRAFT.with_(Q1="ignore")


@pytest.mark.parametrize("spec", ["STRICT", "Strict,Q7=SKIP"])
def test_presets_in_any_case(spec):
    reading = parse_reading(spec)
    assert reading.q3 == PRESETS["strict"].q3 == "fatal"
    assert reading.q7 == ("skip" if "Q7" in spec else "fatal")


@pytest.mark.parametrize("spec, message", [
    ("Q1=maybe", "unknown option 'maybe' for Q1; options: merge, ignore"),
    ("Q99=x", "unknown knob 'Q99'"),
    ("Q1=ignore,q1=merge", "Q1 is given twice"),
    ("Q1=ignore,strict", "only the first item may name a preset"),
    ("", "empty reading"),
])
def test_errors_name_the_fault(spec, message):
    with pytest.raises(ReadingError, match=message.replace("(", r"\(")):
        parse_reading(spec)
