"""lint --exposure (issue 42 item 3): the open questions a conformant stream still depends on."""
import json

import jsonschema
import pytest

from activity_check import cli
from counterexamples.lint.exposure import ADVICE, exposure
from counterexamples.lint.linter import lint_wire
from model.readings import KNOBS
from model.wire import parse_event

START = {"type": "RUN_STARTED", "threadId": "t1", "runId": "r1"}
FINISH = {"type": "RUN_FINISHED", "threadId": "t1", "runId": "r1"}
TEXT = [{"type": "TEXT_MESSAGE_START", "messageId": "m1", "role": "assistant"},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": "working"},
        {"type": "TEXT_MESSAGE_END", "messageId": "m1"}]


def snap(content, **extra):
    return {"type": "ACTIVITY_SNAPSHOT", "messageId": "a1", "activityType": "plan",
            "content": content, **extra}


RESENT = [START, snap({"step": 1}), *TEXT, snap({"step": 2}), FINISH]


def questions(stream):
    return {e.knob: e for e in exposure([parse_event(e) for e in stream]).exposures}


def test_a_resent_snapshot_is_exposed_to_q11_at_that_event():
    assert lint_wire(RESENT).conformant
    found = questions(RESENT)
    assert list(found) == ["Q11"]
    q11 = found["Q11"]
    assert (q11.event_index, q11.event_type, q11.message_id) == (5, "ACTIVITY_SNAPSHOT", "a1")
    assert q11.differs_in == ("messages",)
    assert q11.groups == (("in-place",), ("move",))
    assert "ACTIVITY_DELTA" in q11.advice


def test_the_advice_removes_the_exposure():
    delta = {"type": "ACTIVITY_DELTA", "messageId": "a1", "activityType": "plan",
             "patch": [{"op": "replace", "path": "/step", "value": 2}]}
    mended = [START, snap({"step": 1}), *TEXT, delta, FINISH]
    assert lint_wire(mended).conformant
    assert questions(mended) == {}
    declined = [START, snap({"step": 1}), *TEXT, snap({"step": 1}, replace=False), FINISH]
    assert "Q11" not in questions(declined)


def test_metadata_on_a_declined_snapshot_is_exposed_to_q1():
    stream = [START, snap({"step": 1}), snap({"step": 1}, replace=False, metadata={"k": "v"}),
              FINISH]
    found = questions(stream)
    assert "Q1" in found and found["Q1"].groups == (("merge",), ("ignore",))
    assert found["Q1"].event_index == 2


def test_every_consumer_knob_has_advice():
    consumer = {k.id for k in KNOBS} - {"Q12", "Q17"}
    assert consumer <= set(ADVICE)


@pytest.fixture
def _cli(capsys):
    def run(*args):
        code = cli.main(["lint", *args])
        out, err = capsys.readouterr()
        return code, out, err
    return run


def test_cli_json_matches_its_schema_and_names_q11(tmp_path, _cli):
    path = tmp_path / "s.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in RESENT))
    code, out, err = _cli("--exposure", "--format", "json", str(path))
    assert code == 0, err
    doc = json.loads(out)
    with open("counterexamples/schemas/exposure.schema.json") as fh:
        jsonschema.validate(doc, json.load(fh))
    assert doc["conformant"] is True
    assert [q["question"] for q in doc["exposure"]["questions"]] == ["Q11"]
    code, out, _ = _cli("--exposure", str(path))
    assert code == 0 and "Q11 from event 5 ACTIVITY_SNAPSHOT a1" in out


def test_cli_refuses_exposure_with_sarif(tmp_path, _cli):
    path = tmp_path / "s.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in RESENT))
    code, _, err = _cli("--exposure", "--format", "sarif", str(path))
    assert code == 2
    assert err.count("\n") == 1 and "--exposure" in err


def test_cli_refuses_exposure_with_url_saying_why(_cli):
    """--url with --exposure is refused before any connection, naming the endpoint as the
    reason (it said "give one FILE or '-'" to a user who had given --url and no FILE)."""
    code, _, err = _cli("--exposure", "--url", "http://127.0.0.1:9/")
    assert code == 2 and err.count("\n") == 1
    assert "not a live endpoint" in err and "FILE or '-'" not in err


def test_cli_pretty_exposure_folds_within_120_columns(tmp_path, _cli):
    """lint --exposure's section folds within 120 columns with a hanging indent under each
    label, as lint's report does (its lines were printed whole: Q11's advice is 216
    characters, its known peers 283); --wide prints each line whole; a message id from the
    stream is shown as data, control characters escaped."""
    from rich.cells import cell_len
    stream = [dict(e, messageId="a1\x1b[2J") if e.get("messageId") == "a1" else e
              for e in RESENT]
    path = tmp_path / "s.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in stream))
    code, out, _ = _cli("--exposure", str(path))
    lines = out.splitlines()
    assert code == 0 and max(cell_len(line) for line in lines) <= 120, out
    assert "  Q11 from event 5 ACTIVITY_SNAPSHOT a1\\x1b[2J: messages differ" in lines
    assert "\x1b" not in out
    advice = next(i for i, line in enumerate(lines) if line.startswith("      send instead: "))
    assert lines[advice + 1].startswith(" " * 20) and lines[advice + 1][20] != " "
    known = next(i for i, line in enumerate(lines) if line.startswith("      known: "))
    assert lines[known + 1].startswith(" " * 13) and lines[known + 1][13] != " "
    code, wide, _ = _cli("--exposure", "--wide", str(path))
    assert code == 0 and " ".join(wide.split()) == " ".join(out.split())
    whole = next(line for line in wide.splitlines() if line.startswith("      send instead: "))
    assert len(whole) > 120 and whole.endswith("give it a new id")
