"""The recorded options of the conformance matrix's peers (issue 41, the peers part):
``model/data/peer_options.json``, its schema, ``activity-check peer options`` and the readers
(``resolve``'s peers section, ``questions``, the knobs)."""
from __future__ import annotations

import copy
import json
import shutil
from dataclasses import fields
from pathlib import Path

import jsonschema
import pytest

from activity_check.cli import main
from counterexamples.peers.matrix import MATRIX_PEERS, peer_ready
from counterexamples.peers.options import differences, peer_knob_options
from model.peer_options import PEER_OPTIONS_FILE, PeerOptionsError, load_peer_options
from model.producer import PRODUCER_ONLY_KNOBS
from model.readings import (DRAFT, KNOB_BY_ID, KNOBS, Knob, peer_options_document as
                            peer_options, recorded_peer_options as recorded_options)

KNOB_OPTIONS = {k.id: k.option_names for k in KNOBS}
from model.verdict import evaluate, verdict_key
from model.wire import parse_events

ROOT = Path(__file__).resolve().parents[1]
SCHEMA = ROOT / "counterexamples" / "schemas" / "peer-options.schema.json"


def _doc() -> dict:
    return json.loads(Path(PEER_OPTIONS_FILE).read_text(encoding="utf-8"))


def test_data_file_is_valid_against_its_schema():
    jsonschema.validate(_doc(), json.loads(SCHEMA.read_text(encoding="utf-8")))


def test_every_matrix_peer_is_recorded_with_its_locked_version():
    doc = peer_options()
    assert [p["adapter"] for p in doc["peers"]] == [p.shortcut for p in MATRIX_PEERS]
    assert len(doc["peers"]) == 9
    for peer, entry in zip(MATRIX_PEERS, doc["peers"]):
        assert entry["package"] == peer.package
        assert entry["name"].startswith(f"{peer.package} {entry['version']}")
        if peer.toolchain == "node":  # the version the committed lock file installs
            lock = json.loads((ROOT / "peers" / peer.folder / "package-lock.json").read_text())
            assert lock["packages"][f"node_modules/{peer.package}"]["version"] == \
                entry["version"], peer.shortcut
        assert set(entry["knobs"]) == set(KNOB_BY_ID)
        for kid in PRODUCER_ONLY_KNOBS:  # no consumer shows a producer-side knob
            assert "notObservable" in entry["knobs"][kid]


def test_one_home_the_knobs_read_the_data():
    assert "peers" not in {f.name for f in fields(Knob)}
    assert "peers=" not in (ROOT / "model" / "readings.py").read_text(encoding="utf-8")
    for knob in KNOBS:
        assert dict(knob.peers) == {name: opts[knob.id] for name, opts in
                                    recorded_options().items() if knob.id in opts}
    groups = dict(KNOB_BY_ID["Q8"].peer_groups())
    assert "@ag-ui/client 1.0.0 reducer" in groups["self-revoking"]
    assert sum(len(v) for v in groups.values()) == 9


def test_recorded_traces_separate_what_they_say():
    items = peer_options()["traces"]["items"]
    # Q2 splits verdicts only beside Q3 away from keep: nothing separates it in the draft's
    # context, so no peer shows it
    assert {i["knob"] for i in items} == \
        {k.id for k in KNOBS if k.id not in PRODUCER_ONLY_KNOBS} - {"Q2"}
    assert all(p["knobs"]["Q2"]["notObservable"].startswith("no trace separates")
               for p in peer_options()["peers"])
    ids = {i["id"] for i in items}
    assert {i["source"] for i in items} == {"pair search", "form B", "probe"}
    for item in items:  # each splits its pair in the draft's context
        a, b = item["separates"]
        events = parse_events(item["trace"])
        assert verdict_key(evaluate(events, DRAFT.with_(**{item["knob"]: a}))) != \
            verdict_key(evaluate(events, DRAFT.with_(**{item["knob"]: b}))), item["id"]
    for peer in peer_options()["peers"]:  # evidence names recorded traces
        for kid, entry in peer["knobs"].items():
            assert set(entry["evidence"]) <= ids, (peer["name"], kid)


def test_recorded_traces_are_what_the_searches_find_today():
    """The record's separating traces are those ``separating_traces`` computes at the record's
    depth (every knob's option pairs in one joint pair search per reading, then the deeper and
    form-B searches): a model change that moves one shows here, before ``peer options --check``
    runs the peers."""
    from counterexamples.peers.options import separating_traces
    recorded = peer_options()["traces"]
    assert separating_traces(recorded["depth"]) == recorded
    assert sum(i["source"] == "pair search" for i in recorded["items"]) >= 15


def test_a_bad_entry_is_named(tmp_path):
    doc = _doc()
    doc["peers"][0]["knobs"]["Q8"] = {"option": "sometimes", "evidence": []}
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(PeerOptionsError, match="Q8: unknown option 'sometimes'"):
        load_peer_options(str(path), KNOB_OPTIONS)
    del doc["peers"][0]["knobs"]["Q8"]
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(PeerOptionsError, match=r"knobs \['Q8'\] are missing"):
        load_peer_options(str(path), KNOB_OPTIONS)


def test_differences_name_peer_knob_and_options():
    recorded = _doc()
    live = copy.deepcopy(recorded)
    assert differences(recorded, live) == []
    live["peers"][0]["knobs"]["Q8"] = {"option": "keep", "evidence": []}
    live["peers"][1]["version"] = "9.9.9"
    assert differences(recorded, live) == [
        "ag-ui-client:reducer Q8: recorded self-revoking, live keep",
        f"ag-ui-client:pipeline: recorded version {recorded['peers'][1]['version']}, "
        "installed 9.9.9"]


def _run_model(reading: str):
    from counterexamples.peers.adapter import AdapterProcess, resolve_adapter
    from counterexamples.peers.check import run_batch
    from counterexamples.peers.traces import PeerTrace
    items = peer_options()["traces"]["items"]
    with AdapterProcess(resolve_adapter(f"model:{reading}")) as adapter:
        results = run_batch(adapter, [PeerTrace.of(i["id"], i["trace"]) for i in items])
    return peer_knob_options({r.trace.id: r for r in results}, items)


def test_the_model_as_a_peer_takes_its_own_options():
    """The reference model behind its adapter, under a reading: every knob recorded as an
    option gets that reading's; the others say why not."""
    from model.readings import parse_reading
    text = "Q4=skip,Q8=by-type,Q10=held,Q20=fatal,X1=drop-open"
    reading = parse_reading(text).as_dict()
    got = _run_model(text)
    taken = {k: e["option"] for k, e in got.items() if "option" in e}
    assert {k: taken[k] for k in ("Q4", "Q8", "Q10", "Q20", "X1", "Q1")} == {
        "Q4": "skip", "Q8": "by-type", "Q10": "held", "Q20": "fatal", "X1": "drop-open",
        "Q1": "merge"}
    assert taken == {k: reading[k] for k in taken}  # never another option than its own
    assert set(got) - set(taken) == {"Q2", "Q12", "Q17"}
    assert got["Q12"]["notObservable"].startswith("a producer-side knob")
    assert got["Q2"]["notObservable"].startswith("no trace separates")


def _ready_node_peers() -> list[str]:
    if shutil.which("node") is None:
        pytest.skip("Node.js is not installed (no 'node' on PATH)")
    ready = [p.shortcut for p in MATRIX_PEERS if p.toolchain == "node" and not peer_ready(p)]
    if not ready:
        pytest.skip("the Node peers' modules are not installed (make peers)")
    return ready


def test_peer_options_check_passes_for_the_installed_node_peers(capsys):
    ready = _ready_node_peers()
    argv = ["peer", "options", "--check"]
    for shortcut in ready:
        argv += ["--adapter", shortcut]
    code = main(argv)
    out = capsys.readouterr().out
    assert code == 0, out
    assert out.strip().endswith(f"{len(ready)} peer(s) checked against the record: they match")


def test_peer_options_refuses_what_it_cannot_do(capsys, tmp_path):
    assert main(["peer", "options", "--adapter", "nope", "--check"]) == 2
    assert "not a built-in peer of the matrix" in capsys.readouterr().err
    assert main(["peer", "options", "--check", "--depth", "3"]) == 2
    assert "--check replays the recorded ones" in capsys.readouterr().err
    other = tmp_path / "notes.json"
    other.write_text("{}", encoding="utf-8")
    assert main(["peer", "options", "--check", "--out", str(other)]) == 2
    assert "not an earlier peer options document" in capsys.readouterr().err
    assert other.read_text(encoding="utf-8") == "{}"


def test_peer_check_accepts_the_python_matrix_peer(capsys, tmp_path):
    peer = next(p for p in MATRIX_PEERS if p.shortcut == "ag-ui-protocol")
    reason = peer_ready(peer)
    if reason:
        pytest.skip(reason)
    trace = tmp_path / "t.jsonl"
    trace.write_text("\n".join(json.dumps(e) for e in peer_options()["traces"]["items"][0]
                               ["trace"]) + "\n", encoding="utf-8")
    code = main(["peer", "check", "--adapter", "ag-ui-protocol", "--json", str(trace)])
    out = capsys.readouterr().out
    assert code == 0
    summary = json.loads(out)
    assert summary["adapter"] == "ag-ui-protocol" and summary["counts"]["traces"] == 1
    assert summary["peer"].startswith("ag-ui-protocol@")


def test_resolve_lists_every_peer_and_ag_ui_client_fails_q8(capsys):
    code = main(["resolve", "--pin", "Q2=parent,Q8=keep", "--depth", "3", "--no-z3",
                 "--format", "json", "--live"])
    report = json.loads(capsys.readouterr().out)
    assert code in (0, 1)
    jsonschema.validate(report, json.loads(
        (SCHEMA.parent / "resolve-report.schema.json").read_text(encoding="utf-8")))
    for row, peer in zip(report["peers"], MATRIX_PEERS):  # --live: as recorded, or why not
        live = row["live"]
        assert live["ready"] == (peer_ready(peer) is None), (row["peer"], live)
        if live["ready"]:
            assert live["matchesRecord"], (row["peer"], live)
            assert [o["knob"] for o in live["options"]] == ["Q2", "Q8"]
            assert live["version"] == row["version"]
    rows = {r["peer"]: r for r in report["peers"]}
    assert len(rows) == 9
    assert [r["adapter"] for r in report["peers"]] == [p.shortcut for p in MATRIX_PEERS]
    row = rows["@ag-ui/client 1.0.0 reducer"]
    assert not row["conformant"]
    (finding,) = row["findings"]
    assert (finding["question"], finding["recorded"], finding["pinned"]) == \
        ("Q8", "self-revoking", "keep")
    assert finding["witness"]["trace"][0]["type"] == "RUN_STARTED"
    # Q2 is observable for none of them: named, with the recorded reason
    assert all("Q2" in r["unrecorded"] and r["notObservable"]["Q2"] for r in rows.values())
    # a peer recorded on neither pinned knob is listed, not judged
    assert rows["@tanstack/ai 0.58.0"]["conformant"]
    assert rows["@tanstack/ai 0.58.0"]["unrecorded"] == ["Q2", "Q8"]
    assert report["counts"]["nonConformantPeers"] == \
        sum(1 for r in report["peers"] if not r["conformant"])


def test_docs_table_of_the_record_is_the_data():
    """docs/peers.md's table of the record ("What the record says today") is the data file's:
    both @ag-ui/client versions in one cell when they agree (``a / b`` when not), ``-`` where
    not observable."""
    text = (ROOT / "docs" / "peers.md").read_text(encoding="utf-8")
    block = text[text.index("What the record says today"):].splitlines()
    start = next(i for i, line in enumerate(block) if line.startswith("| knob"))
    end = next(i for i in range(start, len(block)) if not block[i].startswith("|"))
    rows = block[start + 2:end]
    assert len(rows) == 6, rows
    by = {p["adapter"]: p["knobs"] for p in peer_options()["peers"]}

    def cell(*adapters):
        got = [by[a][knob].get("option", "-") for a in adapters]
        return got[0] if len(set(got)) == 1 else " / ".join(got)

    for line in rows:
        knob = line.split("|")[1].strip()
        expected = [knob, cell("ag-ui-client:reducer", "ag-ui-client@0.0.59:reducer"),
                    cell("ag-ui-client:pipeline", "ag-ui-client@0.0.59:pipeline"),
                    cell("copilotkitnext-core"), cell("copilotkit"), cell("ag-ui-protocol")]
        assert [c.strip() for c in line.strip("|").split("|")] == expected, line
