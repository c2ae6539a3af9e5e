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


def test_default_run_matches_the_corpus(tmp_path, capsys, monkeypatch):
    """The default run (seed 0) finds exactly the committed findings: a model change that moves
    a finding shows as new and vanished ids here."""
    out = tmp_path / "out"
    # no time budget: the witnesses must not depend on how fast this machine is
    assert main(["run", "--out", str(out), "--budget", "inf", "--json"]) == 0
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["corpus"] == {"new": [], "vanished": [], "kept": len(load_corpus()),
                                 "rewitnessed": []}
    ids = [f["id"] for f in summary["findings"] if f["kind"] == "ambiguity"]
    assert diff_ids(ids)["new"] == []
    # a question found with another witness is named as such, beside the new and vanished ids
    other = [i for i in ids if not i.startswith("AMB-Q1-")] + ["AMB-Q1-00000000"]
    moved = diff_ids(other)
    assert moved["new"] == ["AMB-Q1-00000000"] and len(moved["vanished"]) == 1
    assert moved["vanished"][0].startswith("AMB-Q1-") and moved["rewitnessed"] == ["AMB-Q1"]
    # Issue 4: checked against BFS. Every finding the breadth-first search reaches within its
    # bound has exactly the BFS shortest length.
    checked = [f for f in summary["findings"] if f.get("bfsShortest")]
    assert len(checked) >= 10
    assert [(f["knob"], f["length"]) for f in checked] == \
        [(f["knob"], f["bfsShortest"]) for f in checked]
    # and `corpus update` from this run rewrites a corpus to exactly these findings
    from counterexamples import corpus as corpus_module
    target = tmp_path / "corpus"
    target.mkdir()
    (target / "stale.json").write_text("{}", encoding="utf-8")
    monkeypatch.setattr(corpus_module, "corpus_dir", lambda: str(target))
    assert main(["corpus", "update", str(out)]) == 0
    assert sorted(p.name[:-5] for p in target.iterdir()) == sorted(ids)
    assert check_corpus(str(target)) == []


def test_corpus_update_refuses_what_is_not_a_run_and_leaves_the_corpus(tmp_path, capsys,
                                                                       monkeypatch):
    import shutil
    from counterexamples import corpus as corpus_module
    copy_dir = tmp_path / "corpus"
    shutil.copytree(corpus_module.corpus_dir(), copy_dir)
    monkeypatch.setattr(corpus_module, "corpus_dir", lambda: str(copy_dir))
    before = sorted(p.name for p in copy_dir.iterdir())
    # a directory with findings but no run summary (e.g. a peer output)
    (tmp_path / "peer" / "findings").mkdir(parents=True)
    (tmp_path / "peer" / "findings" / "PEER-x.json").write_text("{}", encoding="utf-8")
    assert main(["corpus", "update", str(tmp_path / "peer")]) == 2
    # a run whose summary lists a finding file that is not a finding
    run = tmp_path / "run"
    (run / "findings").mkdir(parents=True)
    (run / "findings" / "AMB-Q99-deadbeef.json").write_text('{"mine": 1}', encoding="utf-8")
    (run / "summary.json").write_text(json.dumps({"tool": "activity-check", "findings": [
        {"kind": "ambiguity", "id": "AMB-Q99-deadbeef",
         "files": ["findings/AMB-Q99-deadbeef.json"]}]}), encoding="utf-8")
    assert main(["corpus", "update", str(run)]) == 2
    # a run with no ambiguity finding at all
    (run / "summary.json").write_text(json.dumps({"tool": "activity-check", "findings": []}),
                                      encoding="utf-8")
    assert main(["corpus", "update", str(run)]) == 2
    assert main(["corpus", "update"]) == 2
    assert main(["corpus", "check", "extra"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.count("activity-check: error:") == 5
    assert sorted(p.name for p in copy_dir.iterdir()) == before  # nothing lost


def test_finding_ids_do_not_depend_on_seed_or_budget(tmp_path, capsys):
    """Two runs with another seed and another number of examples report the same finding for
    every question both find (the breadth-first search's witness is kept over the seeded
    searches', then shrunk canonically), and those are the committed corpus's ids: a reviewer's
    `--seed 7` shows no spurious new or vanished findings."""
    summaries = []
    for seed, examples in (("0", "40"), ("7", "120")):
        out = tmp_path / f"seed{seed}"
        assert main(["run", "--seed", seed, "--examples", examples, "--budget", "inf",
                     "--out", str(out), "--json"]) == 0
        summaries.append(json.loads((out / "summary.json").read_text(encoding="utf-8")))
    capsys.readouterr()
    by_knob = [{f["knob"]: f["id"] for f in s["findings"] if f["kind"] == "ambiguity"}
               for s in summaries]
    both = by_knob[0].keys() & by_knob[1].keys()
    reached = {f["knob"] for s in summaries for f in s["findings"] if f.get("bfsShortest")}
    assert len(reached) >= 10 and reached <= both
    assert {k: by_knob[0][k] for k in both} == {k: by_knob[1][k] for k in both}
    for s in summaries:
        assert s["corpus"]["new"] == [] and s["corpus"]["vanished"] == []
