"""The committed corpus: replayed on the model, and in step with the default run."""
import copy
import json

from activity_check.cli import main
from counterexamples.corpus import check_entry, check_corpus, diff_ids, load_corpus


def test_corpus_replays_without_change():
    entries = load_corpus()
    assert len(entries) >= 10
    assert check_corpus() == []
    knobs = {e["knob"] for e in entries}
    assert {"Q1", "Q5", "Q8", "Q10", "Q13", "Q20", "X1"} <= knobs


def test_a_changed_verdict_is_reported():
    entry = copy.deepcopy(load_corpus()[0])
    entry["classes"][0]["verdict"]["warnings"].append(
        {"code": "INVENTED", "messageId": None, "atEvent": 0, "clause": "ACT-SNAP-CREATE"})
    changes = check_entry(entry)
    assert len(changes) == 1 and "changed" in changes[0].what
    entry["classes"].pop()
    assert any("new class" in c.what for c in check_entry(entry))


def test_default_run_matches_the_corpus(tmp_path, capsys):
    """The default run (seed 0) finds exactly the committed findings: a model change that moves
    a finding shows as new and vanished ids here."""
    out = tmp_path / "out"
    assert main(["run", "--out", str(out), "--json"]) == 0
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["corpus"] == {"new": [], "vanished": [], "kept": len(load_corpus())}
    ids = [f["id"] for f in summary["findings"] if f["kind"] == "ambiguity"]
    assert diff_ids(ids)["new"] == []
    # Issue 4: checked against BFS. Every finding the breadth-first search reaches within its
    # bound has exactly the BFS shortest length.
    checked = [f for f in summary["findings"] if f.get("bfsShortest")]
    assert len(checked) >= 10
    assert [(f["knob"], f["length"]) for f in checked] == \
        [(f["knob"], f["bfsShortest"]) for f in checked]
