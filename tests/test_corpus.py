"""The committed corpus: replayed on the model, and in step with the default run."""
import copy
import json

import pytest

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


@pytest.fixture(scope="module")
def default_run(tmp_path_factory):
    """The default run's output directory (seed 0, 3,000 examples), made once for this module
    and only read: no time budget, so that the witnesses do not depend on how fast this
    machine is."""
    out = tmp_path_factory.mktemp("default-run") / "out"
    assert main(["run", "--out", str(out), "--budget", "inf", "--json"]) == 0
    return out


def test_default_run_matches_the_corpus(default_run, tmp_path, capsys, monkeypatch):
    """The default run (seed 0) finds exactly the committed findings: a model change that moves
    a finding shows as new and vanished ids here."""
    out = default_run
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
    # bound has exactly the BFS shortest length (before the events that end what it left
    # open, issue 39).
    checked = [f for f in summary["findings"] if f.get("bfsShortest")]
    assert len(checked) >= 10
    assert [(f["knob"], f["length"] - f["closing"]) for f in checked] == \
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


def test_finding_ids_do_not_depend_on_seed_or_budget(default_run, tmp_path, capsys):
    """A run with another seed and another number of examples (seed 7, 120 examples) reports
    the same finding as the default run (seed 0, 3,000) for every question both find (the
    breadth-first search's witness is kept over the seeded searches', then shrunk canonically),
    and those are the committed corpus's ids: a reviewer's `--seed 7` shows no spurious new or
    vanished findings."""
    summaries = [json.loads((default_run / "summary.json").read_text(encoding="utf-8"))]
    out = tmp_path / "seed7"
    assert main(["run", "--seed", "7", "--examples", "120", "--budget", "inf",
                 "--out", str(out), "--json"]) == 0
    summaries.append(json.loads((out / "summary.json").read_text(encoding="utf-8")))
    capsys.readouterr()
    assert [s["seed"] for s in summaries] == [0, 7]
    assert [s["requestedExamples"] for s in summaries] == [3000, 120]
    by_knob = [{f["knob"]: f["id"] for f in s["findings"] if f["kind"] == "ambiguity"}
               for s in summaries]
    both = by_knob[0].keys() & by_knob[1].keys()
    reached = {f["knob"] for s in summaries for f in s["findings"] if f.get("bfsShortest")}
    assert len(reached) >= 10 and reached <= both
    assert {k: by_knob[0][k] for k in both} == {k: by_knob[1][k] for k in both}
    for s in summaries:
        assert s["corpus"]["new"] == [] and s["corpus"]["vanished"] == []


# --- hostile runs and durable updates (issue 18) ------------------------------------------------

import os  # noqa: E402
import shutil  # noqa: E402


@pytest.fixture(scope="module")
def small_run(tmp_path_factory):
    """A real run's output with a few ambiguity findings."""
    out = tmp_path_factory.mktemp("run") / "out"
    assert main(["run", "--examples", "10", "--bfs-depth", "0", "--out", str(out)]) == 0
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert any(f["kind"] == "ambiguity" for f in summary["findings"])
    return out


@pytest.fixture
def corpus_copy(tmp_path, monkeypatch):
    from counterexamples import corpus as corpus_module
    target = tmp_path / "corpus" / "findings"
    shutil.copytree(corpus_module.corpus_dir(), target)
    monkeypatch.setattr(corpus_module, "corpus_dir", lambda: str(target))
    return target


def contents(directory):
    return {p.name: (p.is_symlink(), p.read_bytes() if not p.is_symlink() else os.readlink(p))
            for p in sorted(directory.iterdir())}


def run_copy(small_run, where):
    shutil.copytree(small_run, where)
    return where, json.loads((where / "summary.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("fid, listed", [
    ("../../victim/package", "findings/../../victim/package.json"),
    ("AMB-Q1-deadbeef/../../../victim/package",
     "findings/AMB-Q1-deadbeef/../../../victim/package.json"),
    ("PEER-x-deadbeef", "findings/PEER-x-deadbeef.json"),
    ("AMB-Q1-DEADBEEF", "findings/AMB-Q1-DEADBEEF.json"),
    ("AMB-Q1-deadbeef", "../elsewhere/AMB-Q1-deadbeef.json"),
], ids=["dotdot", "dotdot-after-id", "peer-id", "upper-hex", "file-elsewhere"])
def test_corpus_update_takes_only_ids_of_the_finding_scheme(small_run, corpus_copy, tmp_path,
                                                            capsys, fid, listed):
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "package.json").write_text('{"name": "precious"}', encoding="utf-8")
    run, summary = run_copy(small_run, tmp_path / "run")
    entry = next(f for f in summary["findings"] if f["kind"] == "ambiguity")
    entry["id"], entry["files"][0] = fid, listed
    (run / "summary.json").write_text(json.dumps(summary), encoding="utf-8")
    before = contents(corpus_copy)
    assert main(["corpus", "update", str(run)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "the corpus is unchanged" in err, err
    assert contents(corpus_copy) == before
    assert (victim / "package.json").read_text(encoding="utf-8") == '{"name": "precious"}'


def test_corpus_update_refuses_a_finding_file_holding_another_id(small_run, corpus_copy,
                                                                 tmp_path, capsys):
    run, summary = run_copy(small_run, tmp_path / "run")
    first = next(f for f in summary["findings"] if f["kind"] == "ambiguity")
    path = run / first["files"][0]
    doc = json.loads(path.read_text(encoding="utf-8"))
    doc["id"] = "AMB-Q1-00000000"
    path.write_text(json.dumps(doc), encoding="utf-8")
    before = contents(corpus_copy)
    assert main(["corpus", "update", str(run)]) == 2
    assert "holds finding AMB-Q1-00000000" in capsys.readouterr().err
    assert contents(corpus_copy) == before


def test_corpus_update_does_not_follow_a_symbolic_link(small_run, corpus_copy, tmp_path,
                                                       capsys):
    run, summary = run_copy(small_run, tmp_path / "run")
    first = next(f for f in summary["findings"] if f["kind"] == "ambiguity")
    path = run / first["files"][0]
    moved = tmp_path / "moved.json"
    path.rename(moved)
    path.symlink_to(moved)
    before = contents(corpus_copy)
    assert main(["corpus", "update", str(run)]) == 2
    assert "symbolic link" in capsys.readouterr().err
    assert contents(corpus_copy) == before


def test_a_link_in_the_corpus_is_replaced_never_written_through(small_run, corpus_copy,
                                                                tmp_path, capsys):
    victim = tmp_path / "victim.json"
    victim.write_text("precious", encoding="utf-8")
    summary = json.loads((small_run / "summary.json").read_text(encoding="utf-8"))
    ids = [f["id"] for f in summary["findings"] if f["kind"] == "ambiguity"]
    (corpus_copy / f"{ids[0]}.json").unlink(missing_ok=True)
    (corpus_copy / f"{ids[0]}.json").symlink_to(victim)
    (corpus_copy / "README.txt").write_text("kept", encoding="utf-8")
    assert main(["corpus", "update", str(small_run)]) == 0
    assert victim.read_text(encoding="utf-8") == "precious"
    assert not (corpus_copy / f"{ids[0]}.json").is_symlink()
    assert sorted(p.name for p in corpus_copy.iterdir()) == sorted(
        [f"{i}.json" for i in ids] + ["README.txt"])
    assert (corpus_copy / "README.txt").read_text(encoding="utf-8") == "kept"


@pytest.mark.parametrize("failure", ["interrupt", "full-disk"])
def test_an_interrupted_corpus_update_leaves_the_corpus(small_run, corpus_copy, tmp_path,
                                                        capsys, monkeypatch, failure):
    import errno

    from counterexamples import corpus as corpus_module
    before = contents(corpus_copy)
    real_dump = json.dump
    calls = []

    def flaky(obj, fh, **kwargs):
        calls.append(1)
        if len(calls) == 2:
            fh.write('{"id": ')
            if failure == "interrupt":
                raise KeyboardInterrupt
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_dump(obj, fh, **kwargs)

    monkeypatch.setattr(corpus_module.json, "dump", flaky)
    code = main(["corpus", "update", str(small_run)])
    err = capsys.readouterr().err
    if failure == "interrupt":
        assert code == 130
    else:
        assert code == 2 and "No space left on device" in err and "unchanged" in err
    assert len(calls) == 2
    assert contents(corpus_copy) == before
    assert sorted(os.listdir(corpus_copy.parent)) == ["findings"]  # no staging left


def test_emptying_the_corpus_needs_allow_empty_and_an_empty_corpus_fails_check(
        tmp_path, corpus_copy, capsys):
    run = tmp_path / "run"
    run.mkdir()
    (run / "summary.json").write_text(json.dumps({"tool": "activity-check", "findings": []}),
                                      encoding="utf-8")
    before = contents(corpus_copy)
    assert main(["corpus", "update", str(run)]) == 2
    assert "--allow-empty" in capsys.readouterr().err
    assert contents(corpus_copy) == before
    assert main(["corpus", "update", str(run), "--allow-empty"]) == 0
    assert "corpus now holds 0 entries" in capsys.readouterr().out
    assert list(corpus_copy.iterdir()) == []
    assert main(["corpus", "check"]) == 1
    out = capsys.readouterr().out
    assert "holds no entry" in out and "0 corpus entries replayed; 1 change(s)" in out
    assert main(["corpus", "check", "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["entries"] == 0


def test_load_corpus_refuses_an_entry_whose_id_is_not_its_name(tmp_path):
    entry = load_corpus()[0]
    (tmp_path / "AMB-Q1-00000000.json").write_text(json.dumps(entry), encoding="utf-8")
    with pytest.raises(ValueError, match="not an ambiguity finding id naming the file"):
        load_corpus(str(tmp_path))


def test_corpus_update_lists_what_it_added_dropped_and_changed(small_run, corpus_copy, capsys):
    """``corpus update`` names every entry id it added, dropped or changed (one line each, as
    ``corpus check`` lists its changes), then the counts; ``--json`` gives the same lists. The
    expected ids are the run's ambiguity findings against the corpus's files before."""
    before = {p.name[:-5] for p in corpus_copy.iterdir() if p.name.endswith(".json")}
    summary = json.loads((small_run / "summary.json").read_text(encoding="utf-8"))
    ids = {f["id"] for f in summary["findings"] if f["kind"] == "ambiguity"}
    added, dropped = sorted(ids - before), sorted(before - ids)
    assert added and dropped  # the small run (no BFS) finds other witnesses than the corpus
    stale = sorted(ids & before)[0] if ids & before else None
    if stale is not None:  # an entry that differs from what the update writes: changed
        (corpus_copy / f"{stale}.json").write_text('{"id": "x"}\n', encoding="utf-8")
    assert main(["corpus", "update", str(small_run)]) == 0
    lines = capsys.readouterr().out.splitlines()
    changed = [stale] if stale else []
    assert lines[:-1] == [f"{i}: added" for i in added] + [f"{i}: dropped" for i in dropped] \
        + [f"{i}: changed (its trace or verdict classes differ from the entry it replaces)"
           for i in changed]
    kept = len(ids & before) - len(changed)
    assert lines[-1] == (f"corpus now holds {len(ids)} entries: {len(added)} added, "
                         f"{len(dropped)} dropped, {len(changed)} changed, {kept} kept")
    # the same update again changes nothing, and says so in JSON
    assert main(["corpus", "update", str(small_run), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {
        "entries": len(ids), "added": [], "dropped": [], "changed": [], "kept": len(ids)}
