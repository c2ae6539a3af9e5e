"""Checkpoints of the breadth-first driver (issue 21): a search saved as it goes and resumed by
fresh systems, as many times as it is stopped, gives the output of a search never stopped."""
import functools
import json
import os
import time
import zlib

import numpy as np
import pytest

import properties.search.checkpoint as checkpoint_module
from activity_check.cli import main
from model.readings import DRAFT
from properties.search.bfs import LocalEngine, Stop, search
from properties.search.checkpoint import Checkpoint, CheckpointError, rebuild, rebuilt
from properties.catalogue import PROPERTIES
from properties.search.explore import EXPLORE_VOCABULARY, ExploreOptions, _identity, explore
from properties.search.system_single import SingleSystem
from properties.search.system_sweep import SweepSystem
from model.consumers import REFERENCE

pytestmark = pytest.mark.xdist_group("tests/test_bfs_checkpoint.py")
"""One worker runs this module: its tests share the searches never stopped (:func:`_plain`)."""


def _sweep():
    return SweepSystem(EXPLORE_VOCABULARY, tuple(PROPERTIES), False)


def _single():
    return SingleSystem(EXPLORE_VOCABULARY, DRAFT, REFERENCE, tuple(PROPERTIES), False, True)


def _figures(found) -> dict:
    """What a search gives: parents, findings (keys, costs, sequences, payloads as text),
    counts."""
    return {"parents": found.parents.to_numpy().tolist(), "edges": found.edges,
            "depth": found.depth, "stoppedBy": found.stopped_by, "drained": found.drained,
            "tags": found.tags,
            "findings": [[repr(k), repr(v)] for k, v in found.findings.items()]}


@functools.lru_cache(maxsize=None)
def _plain(make, depth: int) -> dict:
    """:func:`_figures` of the search never stopped (made once per process)."""
    return _figures(search(make(), depth))


def _stopping_after(chunks: int):
    """A ``Stop("timeout")`` raised by the driver's time check after ``chunks`` checks (the
    timeout of a process stopped every few chunks, whatever the machine's speed)."""
    left = [chunks]

    def check_time(self):
        left[0] -= 1
        if left[0] < 0:
            raise Stop("timeout")
    return check_time


def _resumed(make, depth, directory, monkeypatch, chunks=3, chunk=64, every=0.0,
             frontier_limit=2 << 30):
    """Run the search in ``directory`` with a fresh system each time, each run stopped after
    ``chunks`` chunks of ``chunk`` nodes (its frontier kept in memory up to ``frontier_limit``
    bytes), until it ends; returns ``(last search, runs)``."""
    import properties.search.bfs as bfs
    runs = 0
    while True:
        runs += 1
        monkeypatch.setattr(bfs._Merge, "check_time", _stopping_after(chunks))
        system = make()
        saved = Checkpoint(str(directory), {"test": make.__name__}, every)
        found = search(system, depth,
                       LocalEngine(system, chunk=chunk, frontier_limit=frontier_limit),
                       checkpoint=saved)
        if found.stopped_by != "timeout":
            monkeypatch.undo()
            return found, runs
        assert runs < 500


@pytest.mark.parametrize("make,chunk", [(_sweep, 64), (_single, 8)])
def test_a_search_stopped_and_resumed_many_times_gives_the_same_output(make, chunk, tmp_path,
                                                                      monkeypatch):
    cpu = time.process_time()
    found, runs = _resumed(make, 4, tmp_path / "ck", monkeypatch, chunk=chunk)
    cpu = time.process_time() - cpu
    assert runs > 5  # stopped inside levels, and at their ends
    plain = _plain(make, 4)
    assert _figures(found) == plain
    assert found.storage["checkpoint"]["runs"] == runs
    meta = json.loads((tmp_path / "ck" / "checkpoint.json").read_text())
    # the CPU time of every run's search is added up (each run's own is a fraction of it)
    assert 0.5 * cpu <= meta["cpuSeconds"] <= cpu
    assert found.storage["checkpoint"]["cpuSeconds"] == meta["cpuSeconds"]
    assert meta["finished"] == "depth" and meta["level"] == 4
    assert meta["logs"]["parents.i64"][0] == 8 * len(plain["parents"])
    assert meta["starts"][:2] == [0, 1] and len(meta["starts"]) == 5


def test_periodic_saves_alone_let_a_killed_search_resume(tmp_path, monkeypatch):
    """A process that dies (here: its save is the last thing it does) leaves its last save;
    what it logged after that is cut back and done again."""
    import properties.search.bfs as bfs
    directory = tmp_path / "ck"
    saves = []

    class Killed(Exception):
        pass

    real_save = bfs._Merge.save

    def save_then_die(self, level, rows, finished=None):
        real_save(self, level, rows, finished)
        saves.append((level, rows))
        if finished is None and len(saves) % 5 == 0:
            raise Killed  # the process goes without another save
    monkeypatch.setattr(bfs._Merge, "save", save_then_die)
    for _ in range(200):
        system = _sweep()
        try:
            found = search(system, 4, LocalEngine(system, chunk=64),
                           checkpoint=Checkpoint(str(directory), {}, 0.0))
            break
        except Killed:
            continue
    monkeypatch.undo()
    assert len(saves) > 20
    assert _figures(found) == _plain(_sweep, 4)


def test_a_finished_search_is_deepened_and_reported_again_from_its_checkpoint(tmp_path):
    directory = str(tmp_path / "ck")
    three = search(_sweep(), 3, checkpoint=Checkpoint(directory, {}))
    again = search(_sweep(), 3, checkpoint=Checkpoint(directory, {}))
    assert _figures(again) == _figures(three) == _plain(_sweep, 3)
    deeper = search(_sweep(), 4, checkpoint=Checkpoint(directory, {}))
    assert _figures(deeper) == _plain(_sweep, 4)
    with pytest.raises(CheckpointError, match="deeper than 3"):
        search(_sweep(), 3, checkpoint=Checkpoint(directory, {}))
    with pytest.raises(CheckpointError, match="more than the search's bound of 100"):
        search(_sweep(), 5, max_states=100, checkpoint=Checkpoint(directory, {}))


def test_a_max_states_stop_is_saved_and_taken_further_with_a_larger_bound(tmp_path):
    directory = str(tmp_path / "ck")
    bound = 20_000  # inside level 4's expansion
    system = _sweep()
    cut = search(system, 4, LocalEngine(system, chunk=64), max_states=bound,
                 checkpoint=Checkpoint(directory, {}))
    plain_cut = search(_sweep(), 4, max_states=bound)
    assert cut.stopped_by == plain_cut.stopped_by == "max-states"
    assert _figures(cut) == _figures(plain_cut)
    meta = json.loads((tmp_path / "ck" / "checkpoint.json").read_text())
    # saved as it stood before the chunk that crossed the bound (not at a periodic save)
    assert meta["finished"] is None and meta["level"] == 3
    assert bound - 64 * 40 < meta["logs"]["parents.i64"][0] // 8 <= bound
    again = search(_sweep(), 4, max_states=bound, checkpoint=Checkpoint(directory, {}))
    assert _figures(again) == _figures(plain_cut)  # the same bound stops at the same state
    system = _sweep()
    further = search(system, 4, LocalEngine(system, chunk=64),
                     checkpoint=Checkpoint(directory, {}))
    assert _figures(further) == _plain(_sweep, 4)
    assert further.storage["checkpoint"]["runs"] == 3


def _unwritable(monkeypatch, lock_unreadable=False):
    """The checkpoint module's files opened for writing fail as on a read-only file system
    (``lock_unreadable``: reading the lock file fails too, as another user's of mode 0600)."""
    import errno
    real = checkpoint_module._open_own  # (every open of the checkpoint's files)

    def read_only(path, flags, mode):
        if flags & (os.O_WRONLY | os.O_RDWR):
            raise OSError(errno.EROFS, "Read-only file system", str(path))
        if lock_unreadable and str(path).endswith("checkpoint.lock"):
            raise PermissionError(errno.EACCES, "Permission denied", str(path))
        return real(path, flags, mode)
    monkeypatch.setattr(checkpoint_module, "_open_own", read_only)


def test_a_finished_search_is_reported_again_from_a_directory_it_cannot_write(tmp_path,
                                                                              monkeypatch):
    directory = tmp_path / "ck"
    search(_sweep(), 3, checkpoint=Checkpoint(str(directory), {}))
    before = {p.name: p.read_bytes() for p in directory.iterdir()}
    holder = Checkpoint(str(directory), {})  # a writer's exclusive lock
    _unwritable(monkeypatch)
    with pytest.raises(CheckpointError, match="another process is using it"):
        Checkpoint(str(directory), {})
    holder.close()
    saved = Checkpoint(str(directory), {})
    assert saved.read_only == "Read-only file system"
    again = search(_sweep(), 3, checkpoint=saved)
    assert _figures(again) == _plain(_sweep, 3) and again.storage["checkpoint"]["ended"]
    with pytest.raises(CheckpointError, match="cannot be written \\(Read-only file system\\) "
                       "and its search is not finished to depth 4: it was finished to depth 3 "
                       "\\(give that depth"):
        search(_sweep(), 4, checkpoint=Checkpoint(str(directory), {}))
    assert {p.name: p.read_bytes() for p in directory.iterdir()} == before
    monkeypatch.undo()
    _unwritable(monkeypatch, lock_unreadable=True)  # reported all the same, unlocked
    again = search(_sweep(), 3, checkpoint=Checkpoint(str(directory), {}))
    assert _figures(again) == _plain(_sweep, 3)
    # a search stopped midway cannot be taken further here
    monkeypatch.undo()
    import properties.search.bfs as bfs
    monkeypatch.setattr(bfs._Merge, "check_time", _stopping_after(4))
    stopped, system = tmp_path / "stopped", _sweep()
    assert search(system, 3, LocalEngine(system, chunk=8),
                  checkpoint=Checkpoint(str(stopped), {})).stopped_by == "timeout"
    monkeypatch.undo()
    _unwritable(monkeypatch)
    with pytest.raises(CheckpointError, match="not finished to depth 3: copy it where it can be "
                       "written to take it further \\(a search stopped by a timeout"):
        search(_sweep(), 3, checkpoint=Checkpoint(str(stopped), {}))
    # nor started in an empty one
    (tmp_path / "empty").mkdir()
    with pytest.raises(CheckpointError, match="cannot write \\(Read-only file system\\)"):
        search(_sweep(), 3, checkpoint=Checkpoint(str(tmp_path / "empty"), {}))


def test_explore_resumes_with_the_same_report_and_refuses_another_search(tmp_path, capsys):
    directory = str(tmp_path / "ck")
    plain = explore(ExploreOptions(depth=3, reading=None)).to_json(3, None, False)
    first = explore(ExploreOptions(depth=3, reading=None, checkpoint=directory))
    assert first.to_json(3, None, False) == plain
    again = explore(ExploreOptions(depth=3, reading=None, checkpoint=directory))
    assert again.to_json(3, None, False) == plain
    with pytest.raises(CheckpointError,
                       match="another search's \\(it differs in reading: "
                             "\"all\" there, \"draft\" here\\)"):
        explore(ExploreOptions(depth=3, reading=DRAFT, checkpoint=directory))
    with pytest.raises(CheckpointError, match="differs in adversarial: false there, true here"):
        explore(ExploreOptions(depth=3, reading=None, adversarial=True, checkpoint=directory))
    with pytest.raises(ValueError, match="a checkpoint needs a search without the graph"):
        explore(ExploreOptions(depth=3, reading=None, keep_edges=True, checkpoint=directory))
    assert _identity(EXPLORE_VOCABULARY, None, REFERENCE, (), False, True, False)["reading"] \
        == "all"
    # a reading by the name a user gives it: a preset's, or its knobs set against the draft
    from model.readings import KNOBS
    knob = KNOBS[0]
    other = next(o for o in knob.options if o != knob.draft)
    assert _identity(EXPLORE_VOCABULARY, DRAFT.with_(**{knob.id: other}), REFERENCE, (), False,
                     True, False)["reading"] == f"{knob.id}={other}"


def test_a_checkpoint_of_other_code_or_with_a_damaged_log_is_refused(tmp_path, monkeypatch):
    directory = str(tmp_path / "ck")
    import properties.search.bfs as bfs
    monkeypatch.setattr(bfs._Merge, "check_time", _stopping_after(4))
    system = _sweep()
    assert search(system, 4, LocalEngine(system, chunk=64),
                  checkpoint=Checkpoint(directory, {})).stopped_by == "timeout"
    monkeypatch.undo()
    with monkeypatch.context() as m:
        m.setattr(checkpoint_module, "code_digest", lambda: "0123456789abcdef")
        with pytest.raises(CheckpointError, match="written by other code.*digest"):
            Checkpoint(directory, {})
    meta = json.loads((tmp_path / "ck" / "checkpoint.json").read_text())
    assert meta["finished"] is None and meta["rows"] > 0
    # the first node of the frontier the resume rebuilds
    node = int(np.fromfile(tmp_path / "ck" / f"frontier-{meta['level']}.i64",
                           dtype=np.int64)[meta["rows"]])
    path = tmp_path / "ck" / "fingerprints.u64"
    with open(path, "r+b") as fh:
        fh.seek(8 * node)
        fh.write(b"\x00" * 8)
    with pytest.raises(CheckpointError, match="fingerprints.u64: damaged \\(its CRC-32"):
        search(_sweep(), 4, checkpoint=Checkpoint(directory, {}))
    # a damage the CRC does not show (here: made to agree) shows in the rebuilt node
    length = meta["logs"]["fingerprints.u64"][0]
    meta["logs"]["fingerprints.u64"][1] = zlib.crc32(path.read_bytes()[:length])
    meta["check"] = checkpoint_module._meta_check(meta)
    (tmp_path / "ck" / "checkpoint.json").write_text(json.dumps(meta))
    with pytest.raises(CheckpointError, match=f"node {node} .*another fingerprint.*damaged"):
        search(_sweep(), 4, checkpoint=Checkpoint(directory, {}))
    os.truncate(tmp_path / "ck" / "parents.i64", 8)
    with pytest.raises(CheckpointError, match="parents.i64: missing or shorter"):
        Checkpoint(directory, {})


def _stopped(directory, chunks=4, identity=None) -> dict:
    """A depth-4 sweep saved in ``directory`` (as a search of ``identity``, default ``{}``) and
    stopped by its timeout after ``chunks`` chunks of 64 nodes; returns its
    ``checkpoint.json``."""
    import properties.search.bfs as bfs
    with pytest.MonkeyPatch.context() as m:
        m.setattr(bfs._Merge, "check_time", _stopping_after(chunks))
        system = _sweep()
        saved = Checkpoint(str(directory), identity or {}, 3600)
        assert search(system, 4, LocalEngine(system, chunk=64),
                      checkpoint=saved).stopped_by == "timeout"
    return json.loads((directory / "checkpoint.json").read_text())


def test_what_a_process_logged_after_its_last_save_is_cut_back(tmp_path):
    """A process killed between two saves leaves more in its logs than the last save says: the
    resume cuts it back (and does that work again)."""
    meta = _stopped(tmp_path / "ck")
    for name in meta["logs"]:
        with open(tmp_path / "ck" / name, "ab") as fh:
            fh.write(np.arange(3, 40, dtype=np.int64).tobytes())  # nodes no save describes
    found = search(_sweep(), 4, checkpoint=Checkpoint(str(tmp_path / "ck"), {}))
    assert _figures(found) == _plain(_sweep, 4)


def test_a_second_process_on_a_checkpoint_is_refused(tmp_path):
    first = Checkpoint(str(tmp_path / "ck"), {})
    with pytest.raises(CheckpointError, match="another process is using it"):
        Checkpoint(str(tmp_path / "ck"), {})
    first.close()
    Checkpoint(str(tmp_path / "ck"), {}).close()
    # a checkpoint with a file of the user's beside it is taken, locked as any, and the file
    # left as it was (its names are not the checkpoint's)
    search(_sweep(), 3, checkpoint=Checkpoint(str(tmp_path / "kept"), {}))
    (tmp_path / "kept" / "notes.txt").write_text("mine")
    (tmp_path / "kept" / "findings-x.pickle").write_text("mine too")
    first = Checkpoint(str(tmp_path / "kept"), {})
    with pytest.raises(CheckpointError, match="another process is using it"):
        Checkpoint(str(tmp_path / "kept"), {})
    first.close()
    again = search(_sweep(), 4, checkpoint=Checkpoint(str(tmp_path / "kept"), {}))
    assert _figures(again) == _plain(_sweep, 4)
    assert (tmp_path / "kept" / "notes.txt").read_text() == "mine"
    assert (tmp_path / "kept" / "findings-x.pickle").read_text() == "mine too"


def test_a_log_that_fails_before_any_save_says_nothing_was_saved(tmp_path):
    """A write refused before the first save (a full disk) says no save stands, not that the
    last one does; after a save, that the last one stands."""
    import errno

    class Full:
        def close(self, *data):
            raise OSError(errno.ENOSPC, "No space left on device")
        write = close
    for saved, said in ((False, "nothing was saved yet, and the next run starts afresh"),
                        (True, "the last save stands, and the same command takes the search "
                               "up from there")):
        checkpoint = Checkpoint(str(tmp_path / f"ck{saved}"), {})
        if saved:
            search(_sweep(), 2, checkpoint=checkpoint)
            checkpoint = Checkpoint(str(tmp_path / f"ck{saved}"), {})
        real = checkpoint._logs.get("parents.i64")
        checkpoint._logs["parents.i64"] = Full()
        # a write during the search, and the close after it
        with pytest.raises(CheckpointError, match=f"parents.i64: cannot write \\(No space left "
                                                  f"on device\\); {said}$"):
            checkpoint.log_nodes(np.zeros(2, np.int64), np.zeros(2, np.uint64))
        with pytest.raises(CheckpointError, match=f"cannot write \\(No space left on device\\); "
                                                  f"{said}$"):
            checkpoint.close()
        if real is not None:
            real.close()


def test_a_checkpoint_of_other_code_is_said_so_before_any_other_difference(tmp_path):
    """Other code can also describe the search otherwise (an identity of another shape): the
    digest is compared first, so the message names the real reason."""
    directory = tmp_path / "ck"
    search(_sweep(), 2, checkpoint=Checkpoint(str(directory), {"reading": "old spelling"}))
    meta = json.loads((directory / "checkpoint.json").read_text())
    meta["code"] = "0" * 16
    meta["check"] = checkpoint_module._meta_check(meta)
    (directory / "checkpoint.json").write_text(json.dumps(meta))
    with pytest.raises(CheckpointError, match="written by other code of the model or the search"):
        Checkpoint(str(directory), {"reading": "draft"})


@pytest.mark.parametrize("edit,said", [
    (lambda m: m["logs"].update({"../victim.txt": [0, 0]}), "logs: '../victim.txt' does not match"),
    (lambda m: m.update(rows=-5), "rows: -5 is less than the minimum of 0"),
    (lambda m: m.update(rows=10 ** 6), "rows 1000000 past the level's"),
    (lambda m: m.update(tags=["/abs/victim.bin", 8, 0]), "tags/0: '/abs/victim.bin' does not"),
    (lambda m: m.pop("logs"), "'logs' is a required property"),
    (lambda m: m.update(starts=[0, 5, 2]), "the level starts are not ascending"),
    (lambda m: m.update(identity=[1]), "identity: \\[1\\] is not of type 'object'"),
    (lambda m: m.update(format=1), "of format 1, and this code reads format 4 only"),
    (lambda m: m.update(format=2), "of format 2, and this code reads format 4 only"),
    (lambda m: m.update(format=3), "of format 3, and this code reads format 4 only \\(format "
                                   "3 and earlier stored the findings as a pickle"),
])
def test_a_hand_edited_description_is_refused_in_one_line(tmp_path, edit, said):
    victim = tmp_path / "victim.txt"
    victim.write_text("mine")
    meta = _stopped(tmp_path / "ck", chunks=2)
    path = tmp_path / "ck" / "checkpoint.json"
    edit(meta)
    path.write_text(json.dumps(meta))
    # an edit is refused by the description's checksum (or its schema, checked first)...
    with pytest.raises(CheckpointError, match="checkpoint.json: .*(edited or damaged|" + said
                       + ")"):
        Checkpoint(str(tmp_path / "ck"), {})
    # ... and one made to agree with the checksum by its schema and its consistency checks
    if isinstance(meta, dict) and "check" in meta:
        meta["check"] = checkpoint_module._meta_check(meta)
        path.write_text(json.dumps(meta))
    with pytest.raises(CheckpointError, match=f"checkpoint.json: .*{said}"):
        Checkpoint(str(tmp_path / "ck"), {})
    assert victim.read_text() == "mine"  # (refused before any log is opened)


def test_saved_files_without_a_description_are_not_started_afresh(tmp_path, monkeypatch):
    import properties.search.bfs as bfs
    monkeypatch.setattr(bfs._Merge, "check_time", _stopping_after(6))
    system = _sweep()
    search(system, 4, LocalEngine(system, chunk=64), checkpoint=Checkpoint(str(tmp_path), {}, 0))
    monkeypatch.undo()
    (tmp_path / "checkpoint.json").unlink()  # saves past the first: a description was there
    with pytest.raises(CheckpointError, match="saved files \\(findings-\\d+.json\\) but no "
                                              "checkpoint.json: the checkpoint is damaged"):
        Checkpoint(str(tmp_path), {})
    assert (tmp_path / "parents.i64").stat().st_size > 0


def test_a_process_stopped_in_its_first_save_leaves_a_directory_to_start_afresh(tmp_path,
                                                                               monkeypatch):
    """Killed after the first save's findings and tags are written, before its description
    is: the next run starts afresh (at most one save's worth of work is done again)."""
    class Killed(BaseException):
        pass

    def die(*args):
        raise Killed
    monkeypatch.setattr(checkpoint_module.os, "replace", die)
    with pytest.raises(Killed):
        search(_sweep(), 3, checkpoint=Checkpoint(str(tmp_path), {}, 0))
    monkeypatch.undo()
    assert {"findings-1.json", "tags-1.u64", "checkpoint.json.new"} <= \
        {p.name for p in tmp_path.iterdir()} and not (tmp_path / "checkpoint.json").exists()
    found = search(_sweep(), 3, checkpoint=Checkpoint(str(tmp_path), {}))
    assert _figures(found) == _plain(_sweep, 3)


def test_a_finished_checkpoint_with_a_damaged_log_is_refused_not_reported(tmp_path):
    search(_sweep(), 3, checkpoint=Checkpoint(str(tmp_path), {}))
    with open(tmp_path / "parents.i64", "r+b") as fh:
        fh.seek(33)
        fh.write(b"\x40")
    with pytest.raises(CheckpointError, match="parents.i64: damaged \\(its CRC-32"):
        search(_sweep(), 3, checkpoint=Checkpoint(str(tmp_path), {}))


def test_a_damaged_tags_or_findings_file_is_refused(tmp_path):
    meta = _stopped(tmp_path / "ck", chunks=2)
    tags = tmp_path / "ck" / meta["tags"][0]
    tags.write_bytes(tags.read_bytes()[:8])
    with pytest.raises(CheckpointError, match="tags-1.u64: damaged"):
        search(_sweep(), 4, checkpoint=Checkpoint(str(tmp_path / "ck"), {}))


def test_a_directory_holding_other_files_is_not_written_into(tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(CheckpointError, match="holds other files \\(notes.txt\\)"):
        Checkpoint(str(tmp_path), {})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]
    (tmp_path / "file").write_text("x")
    with pytest.raises(CheckpointError, match="not a directory"):
        Checkpoint(str(tmp_path / "file"), {})


def test_a_process_stopped_before_its_first_save_leaves_a_directory_to_start_afresh(tmp_path):
    for name, data in (("parents.i64", b"\x01" * 24), ("fingerprints.u64", b"\x02" * 16),
                       ("frontier-3.i64", b"\x03" * 8), ("checkpoint.json.new", b"{")):
        (tmp_path / name).write_bytes(data)
    found = search(_sweep(), 3, checkpoint=Checkpoint(str(tmp_path), {}))
    assert _figures(found) == _plain(_sweep, 3)
    assert not (tmp_path / "checkpoint.json.new").exists()
    assert (tmp_path / "parents.i64").stat().st_size == 8 * len(_plain(_sweep, 3)["parents"])
    assert sorted(p.name for p in tmp_path.glob("frontier-*")) == [
        f"frontier-{d}.i64" for d in range(4)]


def _levels(found) -> tuple:
    """``(parents, level of each node, first id of each level)`` of a depth-3 search."""
    parents = found.parents.to_numpy()
    # the level of each node: its parent's plus one (ids come level by level)
    level = np.zeros(len(parents), np.int64)
    for i in range(1, len(parents)):
        level[i] = level[parents[i] >> 28] + 1
    return parents, level, [int(np.searchsorted(level, d)) for d in range(4)]


def test_rebuild_gives_the_frontier_nodes_of_the_search():
    system = _sweep()
    found = search(system, 3)
    parents, _, starts = _levels(found)
    targets = np.arange(starts[2], len(parents), 7, dtype=np.int64)
    fresh = _sweep()
    rows = rebuild(fresh, parents, starts, targets)
    from properties.search.report import _replay
    for target, row in zip(targets.tolist()[:50], rows):
        path = found.path(target)
        _, node = _replay(fresh, path)
        assert tuple(row) == node
    assert (fresh.fingerprints(rows) == system.fingerprints(
        np.array([_replay(system, found.path(t))[1] for t in targets.tolist()]))).all()


def test_rebuilt_yields_the_targets_block_by_block_in_id_order():
    system = _sweep()
    parents, level, starts = _levels(search(system, 3))
    # a resume inside level 2: its last nodes and level 3's found so far
    targets = np.concatenate((np.arange(starts[2] + 3, starts[3], dtype=np.int64),
                              np.arange(starts[3], len(parents), 2, dtype=np.int64)))
    fresh = _sweep()
    whole = rebuild(fresh, parents, starts, targets)
    # every node's fingerprint, as a checkpoint's log has them (a node's row is the system's
    # own numbering: fingerprinted by the system that made it)
    every = fresh.fingerprints(rebuild(fresh, parents, starts,
                                       np.arange(len(parents), dtype=np.int64)))
    blocks = list(rebuilt(fresh, parents, starts, targets, every, None, block=100))
    assert all(0 < len(ids) <= 100 and len(ids) == len(rows) for ids, rows in blocks)
    # no block spans the two levels, and the deepest level's come as they are made
    assert all(len(np.unique(level[ids])) == 1 for ids, _ in blocks)
    assert sum(1 for ids, _ in blocks if level[ids[0]] == 3) == -(-len(
        np.flatnonzero(level[targets] == 3)) // 100)
    assert np.concatenate([ids for ids, _ in blocks]).tolist() == targets.tolist()
    assert (np.concatenate([rows for _, rows in blocks]) == whole).all()
    # the deepest level's nodes are made as the blocks are taken, not all before the first
    calls = [0]
    child = fresh.child

    def counted(*args):
        calls[0] += 1
        return child(*args)
    fresh.child = counted
    made = []
    for ids, _ in rebuilt(fresh, parents, starts, targets, every, None, block=100):
        made.append((int(level[ids[0]]), calls[0]))
    deep = [at for depth, at in made if depth == 3]
    assert np.diff(deep).tolist() == [100] * (len(deep) - 2) + [calls[0] - deep[-2]]
    del fresh.child
    assert list(rebuilt(fresh, parents, starts, np.zeros(0, np.int64))) == []
    root_ids, root_rows = next(rebuilt(fresh, parents, starts, np.zeros(1, np.int64)))
    assert root_ids.tolist() == [0] and tuple(root_rows[0]) == fresh.root()
    wrong = every.copy()
    wrong[targets[-1]] ^= np.uint64(1)
    with pytest.raises(CheckpointError, match=f"node {targets[-1]} \\(depth 3\\)"):
        list(rebuilt(fresh, parents, starts, targets, wrong, None, block=100))


def test_a_resumed_frontier_is_spilled_past_its_limit_not_held_whole(tmp_path, monkeypatch):
    """A resume rebuilds its frontier into the frontier store block by block, so a frontier
    over the limit is spilled to disk as in a search never stopped (issue 21, item 2)."""
    seen = []
    original = LocalEngine.resume

    def resume(self, *args, **kwargs):
        original(self, *args, **kwargs)
        seen.append((len(self.frontier) + len(self._resumed_next),
                     self.frontier.spilled + self._resumed_next.spilled,
                     self.frontier.in_memory + self._resumed_next.in_memory))
    monkeypatch.setattr(LocalEngine, "resume", resume)
    limit = 8 * 1024
    found, runs = _resumed(_sweep, 4, tmp_path / "ck", monkeypatch, frontier_limit=limit)
    assert _figures(found) == _plain(_sweep, 4)
    assert runs > 2 and len(seen) == runs - 1
    big = [s for s in seen if s[0] * 8 * (_sweep().width + 1) > 4 * limit]
    assert big, seen  # some resume had a frontier well past the limit
    for nodes, spilled, in_memory in big:
        assert spilled > 0 and in_memory <= limit, (nodes, spilled, in_memory)


def test_the_cli_resumes_and_refuses_what_it_cannot_save(tmp_path, capsys):
    directory = str(tmp_path / "ck")
    assert main(["explore", "--depth", "4", "--json", "--workers", "1"]) == 0
    plain = capsys.readouterr().out
    # a search stopped inside level 4 (a depth-4 search's last), then resumed by the command
    _stopped(tmp_path / "ck", chunks=3, identity=_identity(
        EXPLORE_VOCABULARY, None, REFERENCE, tuple(PROPERTIES), False, True, False))
    assert main(["explore", "--depth", "4", "--checkpoint", directory]) == 0
    out = " ".join(capsys.readouterr().out.split())  # lines wrap at 120 columns (issue 39)
    assert f"checkpoint {directory}: resumed, run 2 of the search; saved" in out
    assert main(["explore", "--depth", "4", "--json", "--checkpoint", directory]) == 0
    assert capsys.readouterr().out == plain
    assert main(["explore", "--depth", "4", "--checkpoint", directory]) == 0
    assert f"checkpoint {directory}: the search had ended (run 2); its report again" in \
        " ".join(capsys.readouterr().out.split())
    directory = str(tmp_path / "ck3")
    assert main(["explore", "--depth", "3", "--json", "--checkpoint", directory]) == 0
    three = capsys.readouterr().out
    # workers asked for with a checkpoint (the engine's saves: tests/test_bfs.py)
    assert main(["explore", "--depth", "3", "--json", "--workers", "2", "--checkpoint",
                 str(tmp_path / "ck3w")]) == 0
    assert capsys.readouterr().out == three
    for extra, said in ((["--graph", str(tmp_path / "g.dot")],
                         "--checkpoint: the graph's edges are not saved; give it without --graph"),
                        (["--checkpoint-every", "-1"], "--checkpoint-every must be"),
                        (["--workers", "0"], "--workers must be at least 1")):
        assert main(["explore", "--depth", "3", "--checkpoint", directory, *extra]) == 2
        assert said in capsys.readouterr().err
    assert main(["explore", "--depth", "2", "--checkpoint", directory]) == 2
    err = capsys.readouterr().err
    assert "--checkpoint: checkpoint" in err and "deeper than 2" in err
    assert "Traceback" not in err
    other = tmp_path / "other"
    other.mkdir()
    (other / "keep.txt").write_text("x")
    assert main(["explore", "--depth", "3", "--checkpoint", str(other)]) == 2
    assert "holds other files (keep.txt)" in capsys.readouterr().err
    assert main(["explore", "--depth", "3", "--checkpoint-every", "5"]) == 2
    assert "--checkpoint-every: give it with --checkpoint" in capsys.readouterr().err


def test_the_benchmark_saves_each_configuration_and_adds_up_its_runs(tmp_path, monkeypatch,
                                                                      capsys):
    import importlib
    import sys
    from pathlib import Path
    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parent.parent / "benchmarks"))
    monkeypatch.delitem(sys.modules, "explore", raising=False)
    bench = importlib.import_module("explore")
    try:
        with pytest.raises(ValueError, match="--repeat 1 and no --workers"):
            bench.measure(depth=3, repeat=2, checkpoint=str(tmp_path))
        first = bench.measure(depth=3, repeat=1, only={"all-readings"},
                              checkpoint=str(tmp_path))
        again = bench.measure(depth=3, repeat=1, only={"all-readings"},
                              checkpoint=str(tmp_path))
        assert bench.main(["--depth", "3", "--repeat", "1", "--only", "all-readings",
                           "--checkpoint", str(tmp_path)]) == 0
        printed = capsys.readouterr().out
        with pytest.raises(SystemExit) as exited:
            bench.main(["--workers", "2", "--checkpoint", str(tmp_path)])
        assert exited.value.code == 2
        assert "--repeat 1 and no --workers" in capsys.readouterr().err
    finally:
        sys.modules.pop("explore", None)
    row, row2 = first["configurations"]["all-readings"], again["configurations"]["all-readings"]
    assert (tmp_path / "all-readings" / "checkpoint.json").is_file()
    assert row["checkpointRuns"] == row2["checkpointRuns"] == 1
    assert row["states"] == row2["states"] == explore(ExploreOptions(depth=3, reading=None)).states
    # the finished search is reported from its checkpoint: its seconds are the saved ones (the
    # first run's, taken at its last save, just before it ended), its peak at least theirs
    saved = json.loads((tmp_path / "all-readings" / "checkpoint.json").read_text())
    assert abs(row2["seconds"] - saved["seconds"]) < 1
    assert abs(row["seconds"] - saved["seconds"]) < 1
    assert row2["peakBytes"] >= saved["peakBytes"] > 0
    # and its CPU seconds are the search's, not those of reading its checkpoint again
    assert row2["processCpuSeconds"] == round(saved["cpuSeconds"], 2) > 0
    assert "over 1 run of its checkpoint" in printed


def test_the_benchmarks_progress_lines_after_a_resume_do_not_call_its_level_done(
        tmp_path, monkeypatch, capsys):
    """A search resumed inside a level reports that level as under way, and its depth as done
    only when the level moves on (the depth-7 run's first line after a resume said "depth 6
    done" with level 6's frontier still being expanded)."""
    import importlib
    import sys
    from pathlib import Path
    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parent.parent / "benchmarks"))
    monkeypatch.delitem(sys.modules, "explore", raising=False)
    bench = importlib.import_module("explore")
    try:
        assert bench._saved_level(None) == 0
        assert bench._saved_level(str(tmp_path / "none")) == 0
        (tmp_path / "checkpoint.json").write_text('{"level": 6}')
        assert bench._saved_level(str(tmp_path)) == 6
        (tmp_path / "checkpoint.json").write_text('[6]')  # not a description: no level
        assert bench._saved_level(str(tmp_path)) == 0
        report = bench._progress("x", start=6)
        report(6, 100, 200, 19417.0)  # the first chunk after the resume
        report(6, 150, 300, 19430.0)  # within a minute of it: quiet
        report(7, 300, 700, 19500.0)  # the level moves on
        fresh = bench._progress("y")
        fresh(1, 2, 1, 0.0)
    finally:
        sys.modules.pop("explore", None)
    lines = [line.split(", ")[0] for line in capsys.readouterr().err.splitlines()]
    assert lines == ["x: exploring depth 7", "x: depth 7 done", "y: depth 1 done"]


# --- checkpoints that hold no code, and own files that are never followed (issues 43, 38) -----

def _resave(directory, meta: dict, name: str, data: bytes) -> None:
    """Replace the checkpoint's file ``name`` (its findings or tags) by ``data`` and make its
    description agree: length, CRC-32 and checksum recomputed, as a forger would."""
    (directory / name).write_bytes(data)
    which = "findings" if name.startswith("findings-") else "tags"
    meta[which] = [name, len(data), zlib.crc32(data)]
    meta["check"] = checkpoint_module._meta_check(meta)
    (directory / "checkpoint.json").write_text(json.dumps(meta))


def test_the_findings_are_json_that_reads_back_as_the_search_kept_them(tmp_path):
    """The saved findings are JSON as FINDINGS_SCHEMA says, and read back equal, with their
    types (a bool in a cost, a dict's order in a split's pair), to the driver's own."""
    import jsonschema
    meta = _stopped(tmp_path / "ck", chunks=6)
    name = meta["findings"][0]
    assert name.endswith(".json") and meta["format"] == checkpoint_module.FORMAT == 4
    document = json.loads((tmp_path / "ck" / name).read_text())
    jsonschema.Draft202012Validator(checkpoint_module.FINDINGS_SCHEMA).validate(document)
    read = Checkpoint(str(tmp_path / "ck"), {})
    found = read.findings()
    read.close()
    assert found and all(isinstance(k, tuple) and isinstance(v, list) for k, v in found.items())
    split = next(v for k, v in found.items() if k[0] == "split")
    assert type(split[1][1]) is bool  # (level, not conformant): not turned into 0 or 1
    assert isinstance(split[3][2], tuple) and all(isinstance(a, dict) for a in split[3][2])
    assert checkpoint_module.findings_to_json(found) == document
    # every kind of value a system puts in a finding goes and comes back exactly
    value = (None, True, 0, -2 ** 62, "\udcff ok", ({"Q1": "merge", "A": "b"}, {}), ())
    back = checkpoint_module.value_from_json(
        json.loads(json.dumps(checkpoint_module.value_to_json(value))))
    assert back == value and list(back[5][0]) == ["Q1", "A"] and type(back[1]) is bool
    for other in (1.5, [1], {1: "a"}, object()):
        with pytest.raises(TypeError):
            checkpoint_module.value_to_json(other)
    for other in (1.5, [1], {"tuple": [1], "map": []}, {"map": [["a"]]}):
        with pytest.raises(ValueError):
            checkpoint_module.value_from_json(other)


class _Runs:
    """A pickle that runs code when unpickled: it makes the file ``path``."""

    def __init__(self, path):
        self.path = str(path)

    def __reduce__(self):
        return (open, (self.path, "w"))


def test_a_findings_file_holding_a_pickle_is_refused_and_its_code_never_runs(tmp_path, capsys):
    import pickle
    directory = tmp_path / "ck"
    identity = _identity(EXPLORE_VOCABULARY, None, REFERENCE, tuple(PROPERTIES), False, True,
                         False)  # (the command's, so that it takes the checkpoint up)
    meta = _stopped(directory, chunks=3, identity=identity)
    ran = tmp_path / "ran"
    _resave(directory, meta, meta["findings"][0], pickle.dumps({("x",): _Runs(ran)}))
    with pytest.raises(CheckpointError, match=r"findings-1\.json: not a findings file of "
                                              r"format 4 \(.*\)$"):
        search(_sweep(), 4, checkpoint=Checkpoint(str(directory), identity))
    assert main(["explore", "--depth", "4", "--checkpoint", str(directory)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "findings-1.json: not a findings file" in err
    assert not ran.exists()
    # JSON of another shape, a key given twice: refused the same way
    for document, said in (({"format": 4, "findings": [{"key": 1}]}, "findings/0"),
                           ({"format": 4, "findings": [
                               {"key": {"tuple": ["a"]}, "first": {"tuple": [0, 0, 0]},
                                "cost": None, "sequence": {"tuple": [0, 0, 0]},
                                "payload": None}] * 2}, "a finding's key given twice")):
        _resave(directory, meta, meta["findings"][0], json.dumps(document).encode())
        with pytest.raises(CheckpointError, match=f"not a findings file .*{said}"):
            search(_sweep(), 4, checkpoint=Checkpoint(str(directory), identity))


@pytest.mark.parametrize("kind", ["symlink", "fifo", "hardlink", "directory"])
@pytest.mark.parametrize("name", ["parents.i64", "checkpoint.json", "frontier-4.i64",
                                  "checkpoint.lock"])
def test_a_checkpoint_whose_own_file_is_not_a_regular_file_is_refused_before_any_write(
        tmp_path, capsys, kind, name):
    """A link, pipe or directory in place of one of the checkpoint's own files: the command
    says so in one line, exit 2, and nothing is written, inside the directory or out."""
    directory = tmp_path / "ck"
    _stopped(directory, chunks=3, identity=_identity(
        EXPLORE_VOCABULARY, None, REFERENCE, tuple(PROPERTIES), False, True, False))
    victim = tmp_path / "victim.bin"
    victim.write_bytes(b"mine" * 100)
    target = directory / name
    if target.exists():
        target.unlink()
    if kind == "symlink":
        target.symlink_to(victim)
    elif kind == "fifo":
        os.mkfifo(target)
    elif kind == "hardlink":
        os.link(victim, target)
    else:
        target.mkdir()
    before = {p.name: (p.lstat().st_mtime_ns, p.lstat().st_size) for p in directory.iterdir()}
    code = main(["explore", "--depth", "4", "--checkpoint", str(directory)])
    err = capsys.readouterr().err
    said = {"symlink": "a symbolic link", "fifo": "a named pipe",
            "hardlink": "a file with other names", "directory": "a directory"}[kind]
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err
    assert f"{target}: {said}" in err and "refused, as a checkpoint's own files" in err
    assert victim.read_bytes() == b"mine" * 100
    assert {p.name: (p.lstat().st_mtime_ns, p.lstat().st_size)
            for p in directory.iterdir()} == before


def test_a_link_put_in_place_of_a_log_while_it_is_opened_is_not_followed(tmp_path):
    """The entries are checked before the lock; a link that appears after that check (a race)
    is still not followed: every own file is opened with O_NOFOLLOW and checked once open."""
    directory = tmp_path / "ck"
    _stopped(directory, chunks=3)
    victim = tmp_path / "victim.bin"
    victim.write_bytes(b"mine")
    real = Checkpoint._refuse_odd

    def then_swap(self, names):
        real(self, names)
        (directory / "parents.i64").unlink()
        (directory / "parents.i64").symlink_to(victim)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(Checkpoint, "_refuse_odd", then_swap)
        with pytest.raises(CheckpointError, match="parents.i64: a symbolic link; refused"):
            Checkpoint(str(directory), {})
    assert victim.read_bytes() == b"mine"
    for flags, mode in ((os.O_RDONLY, "rb"), (checkpoint_module._APPEND, "ab"),
                        (checkpoint_module._WRITE, "wb")):
        with pytest.raises(CheckpointError, match="a symbolic link"):
            checkpoint_module._open_own(directory / "parents.i64", flags, mode)
    assert victim.read_bytes() == b"mine"


def test_a_deeply_nested_or_huge_description_is_refused_in_one_line(tmp_path, capsys):
    directory = tmp_path / "ck"
    _stopped(directory, chunks=3)
    meta = directory / "checkpoint.json"
    for text, said in (("[" * 100_000 + "]" * 100_000, "not JSON \\(nested"),
                       ('{"format": 4, "format": 4}', "not JSON \\(duplicate member"),
                       ("\xff", "not JSON")):
        meta.write_bytes(text.encode("utf-8", "surrogateescape") if text != "\xff"
                         else b"\xff")
        with pytest.raises(CheckpointError, match=f"checkpoint.json: {said}"):
            Checkpoint(str(directory), {})
        assert main(["explore", "--depth", "4", "--checkpoint", str(directory)]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "Traceback" not in err and "checkpoint.json" in err
    with open(meta, "wb") as fh:
        fh.truncate(checkpoint_module.MAX_META_BYTES + 1)
    with pytest.raises(CheckpointError, match="checkpoint.json: larger than the"):
        Checkpoint(str(directory), {})
