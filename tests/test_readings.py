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


@pytest.mark.parametrize("knob_id, options, producer_only", [
    ("Q12", ("stream", "owner", "run"), True),
    ("Q14", ("decline", "adopt"), False),
    ("Q15", ("live", "closed"), False),
    ("Q17", ("as-received", "strip-echo"), True),
    ("Q23", ("continue", "run-scoped"), False),
])
def test_issue_19_knobs_are_declared_with_clauses_and_peers(knob_id, options, producer_only):
    from model.clauses import registry
    from model.producer import PRODUCER_KNOBS, PRODUCER_ONLY_KNOBS
    from model.readings import KNOB_BY_ID
    knob = KNOB_BY_ID[knob_id]
    assert knob.option_names == options and getattr(DRAFT, knob.attr) == options[0]
    assert all(c in registry() for c in knob.clauses)
    assert all(option in options for _, option in knob.peers)
    assert dict(knob.peers)["@ag-ui/client 1.0.0 pipeline"] == options[0]
    assert (knob_id in PRODUCER_ONLY_KNOBS) is producer_only
    assert (knob_id in PRODUCER_KNOBS) is producer_only
    assert parse_reading(f"{knob_id}={options[-1]}") == DRAFT.with_(**{knob_id: options[-1]})
