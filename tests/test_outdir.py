"""Durable output (issue 18): a command's output appears whole or not at all, replaces an earlier
one only when complete, and nothing outside the directory named is written, followed or removed.

:mod:`counterexamples.outdir` on its own first (the swap, what is carried over, symbolic links,
the signals held during the swap, single files), then through the commands that write
directories (``run``, ``peer check|search --out``) and files (``export --out``), each with
the failures injected: an exception, a Ctrl-C (KeyboardInterrupt), a full disk (ENOSPC) in the
middle of the write, and a real SIGTERM on a subprocess.
"""
from __future__ import annotations

import errno
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from activity_check.cli import main
from counterexamples import outdir
from counterexamples.outdir import (STAGING_MARK, OutputRefused, plan_output,
                                    write_new_file)

ERROR_PREFIX = "activity-check: error:"
RUN_SMALL = ("run", "--examples", "10", "--bfs-depth", "0")


def run_files(summary: dict) -> list:
    return [p for f in summary.get("findings", []) for p in f.get("files", [])]


def snapshot(root: Path) -> dict:
    """Everything under ``root`` (not following links): path -> (kind, bytes or link target,
    inode), so that "exactly as it was" includes which file is which."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            rel = p.relative_to(root).as_posix()
            st = os.lstat(p)
            if p.is_symlink():
                out[rel] = ("link", os.readlink(p), st.st_ino)
            elif p.is_dir():
                out[rel] = ("dir", None, st.st_ino)
            else:
                out[rel] = ("file", p.read_bytes(), st.st_ino)
    return out


def leftovers(parent: Path) -> list:
    return sorted(p.name for p in parent.iterdir() if STAGING_MARK in p.name)


def one_error_line(err: str, *needles: str) -> str:
    assert "Traceback" not in err, err
    assert err.endswith("\n") and err.count("\n") == 1, repr(err)
    assert err.startswith(ERROR_PREFIX), err
    for needle in needles:
        assert needle in err, (needle, err)
    return err


def earlier_output(root: Path, listed=("findings/AMB-Q1-00000000.json",)) -> Path:
    """An earlier ``run`` output: a summary listing ``listed``, those files, and a file of the
    user's (``notes.txt``)."""
    (root / "findings").mkdir(parents=True)
    for rel in listed:
        (root / rel).write_text("old finding\n", encoding="utf-8")
    (root / "summary.json").write_text(json.dumps(
        {"tool": "activity-check", "findings": [{"id": "x", "files": list(listed)}]}),
        encoding="utf-8")
    (root / "notes.txt").write_text("mine\n", encoding="utf-8")
    return root


def write_some(directory: str, names=("findings/NEW.json",), summary="{}\n") -> None:
    os.makedirs(os.path.join(directory, "findings"), exist_ok=True)
    for rel in names:
        with open(os.path.join(directory, rel), "w", encoding="utf-8") as fh:
            fh.write("new finding\n")
    with open(os.path.join(directory, "summary.json"), "w", encoding="utf-8") as fh:
        fh.write(summary)


# --- the module ---------------------------------------------------------------------------------

def test_a_new_directory_appears_whole(tmp_path):
    target = tmp_path / "a" / "out"
    plan = plan_output(str(target), "summary.json", run_files)
    assert not plan.earlier and not target.exists()
    with plan.staged() as staging:
        assert Path(staging).parent == target.parent and STAGING_MARK in Path(staging).name
        write_some(staging)
        assert not target.exists()  # nothing at the target until the block is done
    assert sorted(snapshot(target)) == ["findings", "findings/NEW.json", "summary.json"]
    assert leftovers(target.parent) == []


@pytest.mark.parametrize("exchange", [True, False], ids=["renameat2", "two-renames"])
def test_an_earlier_output_is_replaced_and_the_user_s_files_carried_over(tmp_path, monkeypatch,
                                                                          exchange):
    if not exchange:
        monkeypatch.setattr(outdir, "_exchange", lambda a, b: False)
    target = earlier_output(tmp_path / "out")
    (target / "findings" / "unlisted.json").write_text("user's\n", encoding="utf-8")
    (target / "sub").mkdir()
    (target / "sub" / "deep.txt").write_text("deep\n", encoding="utf-8")
    notes_inode = os.lstat(target / "notes.txt").st_ino
    plan = plan_output(str(target), "summary.json", run_files)
    assert plan.earlier and plan.replaced == {"summary.json", "findings/AMB-Q1-00000000.json"}
    with plan.staged() as staging:
        write_some(staging)
    after = snapshot(target)
    assert sorted(after) == ["findings", "findings/NEW.json", "findings/unlisted.json",
                             "notes.txt", "sub", "sub/deep.txt", "summary.json"]
    assert after["notes.txt"][:2] == ("file", b"mine\n")
    assert after["notes.txt"][2] == notes_inode  # the same file, hard-linked, not a copy
    assert after["summary.json"][1] == b"{}\n"
    assert leftovers(tmp_path) == []


def test_a_file_of_the_user_s_that_the_new_output_writes_stops_the_swap(tmp_path):
    """A file the earlier output did not write, whose name the new output writes too, is
    neither dropped nor overwritten: the swap stops with NameTaken (an OSError, which the
    command line reports in one line), the earlier output exactly as it was, no staging
    directory left."""
    target = earlier_output(tmp_path / "out")
    (target / "findings" / "NEW.json").write_text("user's\n", encoding="utf-8")
    before = snapshot(target)
    plan = plan_output(str(target), "summary.json", run_files)
    with pytest.raises(outdir.NameTaken) as caught:
        with plan.staged() as staging:
            write_some(staging)
    assert "findings/NEW.json there is not a file the earlier output wrote" in \
        caught.value.strerror
    assert snapshot(target) == before and leftovers(tmp_path) == []
    assert outdir.own_name("findings/NEW.json", "summary.json")
    assert outdir.own_name("summary.json", "summary.json") and outdir.own_name("resolve.md", "x")
    assert not outdir.own_name("notes.txt", "summary.json")
    assert not outdir.own_name("findings/notes.txt", "summary.json")


@pytest.mark.parametrize("failure", [KeyboardInterrupt, OSError(errno.ENOSPC, "No space left "
                                                                "on device"), RuntimeError],
                         ids=["ctrl-c", "full-disk", "exception"])
def test_a_failure_while_writing_leaves_the_earlier_output_exactly_as_it_was(tmp_path,
                                                                              failure):
    target = earlier_output(tmp_path / "out")
    before = snapshot(target)
    plan = plan_output(str(target), "summary.json", run_files)
    with pytest.raises(type(failure) if isinstance(failure, BaseException) else failure):
        with plan.staged() as staging:
            write_some(staging)
            raise failure
    assert snapshot(target) == before
    assert leftovers(tmp_path) == []


def test_a_failing_swap_leaves_the_earlier_output(tmp_path, monkeypatch):
    target = earlier_output(tmp_path / "out")
    before = snapshot(target)

    def refuse(a, b):
        raise OSError(errno.EIO, "Input/output error", b)

    monkeypatch.setattr(outdir, "_exchange", refuse)
    plan = plan_output(str(target), "summary.json", run_files)
    with pytest.raises(OSError):
        with plan.staged() as staging:
            write_some(staging)
    assert snapshot(target) == before and leftovers(tmp_path) == []


def test_symbolic_links_in_an_earlier_output_are_replaced_never_followed(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "victim.json").write_text("precious\n", encoding="utf-8")
    (outside / "keep.txt").write_text("keep\n", encoding="utf-8")
    target = tmp_path / "out"
    target.mkdir()
    # findings/ itself is a link to a directory outside, and the summary lists a file in it
    (target / "findings").symlink_to(outside, target_is_directory=True)
    (target / "summary.json").write_text(json.dumps(
        {"tool": "activity-check", "findings": [{"files": ["findings/victim.json"]}]}),
        encoding="utf-8")
    before_outside = snapshot(outside)
    plan = plan_output(str(target), "summary.json", run_files)
    with plan.staged() as staging:
        write_some(staging, names=("findings/victim.json",))
    assert snapshot(outside) == before_outside  # nothing written, nothing deleted through it
    assert not (target / "findings").is_symlink() and (target / "findings").is_dir()
    assert (target / "findings" / "victim.json").read_text(encoding="utf-8") == "new finding\n"


def test_a_link_with_a_finding_s_name_is_never_written_through(tmp_path):
    """A symbolic link the earlier output did not write, at a name the new output writes: the
    link is not followed (the file it points to is untouched), and, being the user's, not
    dropped either: the swap stops (NameTaken) and the earlier output stays as it was."""
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n", encoding="utf-8")
    target = earlier_output(tmp_path / "out", listed=())
    (target / "findings" / "NEW.json").symlink_to(victim)
    plan = plan_output(str(target), "summary.json", run_files)
    with pytest.raises(outdir.NameTaken):
        with plan.staged() as staging:
            write_some(staging)
    assert victim.read_text(encoding="utf-8") == "precious\n"
    assert os.readlink(target / "findings" / "NEW.json") == str(victim)
    assert leftovers(tmp_path) == []


def test_a_link_the_user_left_is_carried_as_a_link(tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n", encoding="utf-8")
    target = earlier_output(tmp_path / "out")
    (target / "mylink").symlink_to(victim)
    with plan_output(str(target), "summary.json", run_files).staged() as staging:
        write_some(staging)
    assert os.readlink(target / "mylink") == str(victim)
    assert victim.read_text(encoding="utf-8") == "precious\n"


@pytest.mark.parametrize("setup, words", [
    (lambda t: t.symlink_to(t.parent / "real", target_is_directory=True), "symbolic link"),
    (lambda t: t.write_text("x"), "not a directory"),
    (lambda t: (t.mkdir(), (t / "other.txt").write_text("x")), "not empty"),
    (lambda t: (t.mkdir(), (t / "summary.json").symlink_to(t.parent / "s.json")),
     "symbolic link"),
    (lambda t: (t.mkdir(), (t / "summary.json").write_text('{"tool": "activity-check"}'),
                (t / "findings").write_text("x")), "findings there is not a directory"),
], ids=["target-link", "file", "foreign", "summary-link", "findings-file"])
def test_what_is_not_ours_is_refused_untouched(tmp_path, setup, words):
    (tmp_path / "real").mkdir()
    (tmp_path / "s.json").write_text('{"tool": "activity-check", "findings": []}')
    target = tmp_path / "out"
    setup(target)
    before = snapshot(tmp_path)
    with pytest.raises(OutputRefused, match=words):
        plan_output(str(target), "summary.json", run_files)
    assert snapshot(tmp_path) == before


def test_the_working_directory_is_refused(tmp_path, monkeypatch):
    (tmp_path / "out" / "sub").mkdir(parents=True)
    for cwd in (tmp_path / "out", tmp_path / "out" / "sub"):
        monkeypatch.chdir(cwd)
        with pytest.raises(OutputRefused, match="working directory"):
            plan_output(str(tmp_path / "out"), "summary.json", run_files)
        with pytest.raises(OutputRefused, match="working directory"):
            plan_output(".", "summary.json", run_files)


def test_a_mount_point_is_refused():
    mounts = [p for p in ("/proc", "/sys", "/dev") if os.path.ismount(p)]
    if not mounts:
        pytest.skip("no mount point to try")
    with pytest.raises(OutputRefused, match="mount point"):
        plan_output(mounts[0], "summary.json", run_files)


def test_the_swap_holds_back_a_sigterm_until_it_is_done(monkeypatch):
    class Caught(Exception):
        pass

    seen = []

    def handler(signum, frame):
        seen.append("handler")
        raise Caught

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        with pytest.raises(Caught):
            with outdir._signals_held():
                os.kill(os.getpid(), signal.SIGTERM)
                time.sleep(0.05)
                seen.append("swap done")  # not interrupted inside
        assert seen == ["swap done", "handler"]
    finally:
        signal.signal(signal.SIGTERM, previous)


def test_write_new_file_is_whole_or_absent_and_never_over_anything(tmp_path, monkeypatch):
    path = tmp_path / "t.py"
    write_new_file(str(path), "x = 1\n")
    assert path.read_text() == "x = 1\n"
    with pytest.raises(FileExistsError):
        write_new_file(str(path), "x = 2\n")
    assert path.read_text() == "x = 1\n"
    dangling = tmp_path / "d.py"
    dangling.symlink_to(tmp_path / "nowhere.py")
    with pytest.raises(FileExistsError):
        write_new_file(str(dangling), "x = 3\n")
    assert not (tmp_path / "nowhere.py").exists()

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "link", full)
    with pytest.raises(OSError):
        write_new_file(str(tmp_path / "n.py"), "x = 4\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d.py", "t.py"]


# --- through the commands -----------------------------------------------------------------------

def cli(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def earlier_run(tmp_path_factory):
    """A real earlier ``run`` output (seed 0), with a file of the user's in it."""
    out = tmp_path_factory.mktemp("earlier") / "out"
    assert main([*RUN_SMALL, "--out", str(out)]) == 0
    (out / "notes.txt").write_text("mine\n", encoding="utf-8")
    return out


def copy_of(tree: Path, where: Path) -> Path:
    import shutil
    shutil.copytree(tree, where, symlinks=True)
    return where


def test_a_rerun_replaces_the_earlier_run_and_keeps_the_user_s_file(earlier_run, tmp_path,
                                                                     capsys):
    out = copy_of(earlier_run, tmp_path / "out")
    code, _, err = cli(capsys, *RUN_SMALL, "--seed", "5", "--out", out)
    assert code == 0, err
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["seed"] == 5
    on_disk = {p for p, (kind, _, _) in snapshot(out).items() if kind == "file"}
    assert on_disk == set(run_files(summary)) | {"summary.json", "notes.txt"}
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize("failure", ["interrupt", "full-disk"])
def test_an_interrupted_or_full_rerun_leaves_the_earlier_run(earlier_run, tmp_path, capsys,
                                                             monkeypatch, failure):
    from counterexamples import findings

    out = copy_of(earlier_run, tmp_path / "out")
    before = snapshot(out)
    real = findings.write_finding
    calls = []

    def flaky(finding, directory):
        calls.append(finding.id)
        if len(calls) == 2:  # the second finding: half a file, then the failure
            with open(os.path.join(directory, finding.id + ".json"), "w") as fh:
                fh.write('{"id": ')
            if failure == "interrupt":
                raise KeyboardInterrupt
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(finding, directory)

    monkeypatch.setattr(findings, "write_finding", flaky)
    code, out_text, err = cli(capsys, *RUN_SMALL, "--seed", "5", "--out", out)
    if failure == "interrupt":
        assert code == 130 and err == "activity-check: interrupted\n"
    else:
        assert code == 2
        one_error_line(err, "--out", "No space left on device",
                       "the earlier output there is unchanged")
    assert len(calls) == 2
    assert snapshot(out) == before  # every byte and every inode as it was
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert all((out / p).is_file() for p in run_files(summary))  # the summary is still true
    assert leftovers(tmp_path) == []


def test_a_full_disk_on_a_new_output_leaves_nothing(tmp_path, capsys, monkeypatch):
    from counterexamples import findings

    def full(finding, directory):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(findings, "write_finding", full)
    code, _, err = cli(capsys, *RUN_SMALL, "--out", tmp_path / "new")
    assert code == 2
    one_error_line(err, "No space left on device", "nothing was written")
    assert sorted(os.listdir(tmp_path)) == []


SIGTERM_DRIVER = r"""
import os, sys, time
from counterexamples import findings
real = findings.write_finding
ready = sys.argv[1]
calls = []
def slow(finding, directory):
    paths = real(finding, directory)
    calls.append(1)
    if len(calls) == 1:
        open(ready, "w").close()   # the test may now send the signal
        time.sleep(60)
    return paths
findings.write_finding = slow
sys.argv = ["activity-check", *sys.argv[2:]]
from activity_check.console import console_main
console_main()
"""


def test_a_real_sigterm_while_writing_leaves_the_earlier_run(earlier_run, tmp_path):
    out = copy_of(earlier_run, tmp_path / "out")
    before = snapshot(out)
    ready = tmp_path / "ready"
    proc = subprocess.Popen([sys.executable, "-c", SIGTERM_DRIVER, str(ready), *RUN_SMALL,
                             "--seed", "5", "--out", str(out)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while not ready.exists():
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the run never reached its writes"
            time.sleep(0.05)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 143, err
    assert err.endswith("activity-check: terminated\n") and "Traceback" not in err
    assert snapshot(out) == before
    assert leftovers(tmp_path) == []


def test_an_output_below_a_file_is_refused_before_the_work(tmp_path, capsys, monkeypatch):
    from counterexamples import pipeline

    (tmp_path / "file.txt").write_text("x")
    monkeypatch.setattr(pipeline, "run_pipeline",
                        lambda *a, **k: pytest.fail("the search ran before the refusal"))
    code, out, err = cli(capsys, *RUN_SMALL, "--out", tmp_path / "file.txt" / "sub")
    assert (code, out) == (2, "")
    one_error_line(err, "--out", "file.txt/sub", "cannot create the directory")


@pytest.mark.parametrize("below", ["sub", "a/b/sub"])
def test_an_output_below_a_file_names_the_file_not_file_exists(tmp_path, capsys, monkeypatch,
                                                               below):
    """``--out afile/sub`` (and deeper) where ``afile`` is a regular file names ``afile`` as
    what is not a directory; it said ``File exists`` (the error of :func:`os.makedirs`)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "afile").write_text("x")
    code, out, err = cli(capsys, *RUN_SMALL, "--out", f"afile/{below}")
    assert (code, out) == (2, "")
    assert one_error_line(err) == (f"{ERROR_PREFIX} --out afile/{below}: cannot create the "
                                   "directory: afile exists and is not a directory\n")
    assert (tmp_path / "afile").read_text() == "x"
    assert sorted(os.listdir(tmp_path)) == ["afile"]


def test_a_read_only_output_is_one_line_exit_2(tmp_path, capsys, monkeypatch):
    """A read-only mount cannot be made as root with chmod: the staging directory's creation
    fails as it would there (EROFS)."""
    real_mkdir = os.mkdir

    def read_only(path, *args, **kwargs):
        if STAGING_MARK in os.fspath(path):
            raise OSError(errno.EROFS, "Read-only file system", os.fspath(path))
        return real_mkdir(path, *args, **kwargs)

    (tmp_path / "empty").mkdir()
    monkeypatch.setattr(os, "mkdir", read_only)
    code, out, err = cli(capsys, *RUN_SMALL, "--out", tmp_path / "empty")
    assert (code, out) == (2, "")
    one_error_line(err, "--out", "Read-only file system")
    assert os.listdir(tmp_path / "empty") == []


def test_peer_check_out_is_replaced_whole_or_kept(tmp_path, capsys, monkeypatch):
    from activity_check import cmd_peer

    trace = tmp_path / "t.jsonl"
    trace.write_text('{"type": "RUN_STARTED", "threadId": "t", "runId": "r"}\n')
    out = tmp_path / "peer-out"
    argv = ("peer", "check", "--adapter", "model", trace, "--out", out)
    assert cli(capsys, *argv)[0] == 0
    (out / "notes.txt").write_text("mine\n")
    before = snapshot(out)
    real = cmd_peer._write_out

    def interrupted(directory, report, summary):
        real(directory, report, summary)
        raise KeyboardInterrupt

    monkeypatch.setattr(cmd_peer, "_write_out", interrupted)
    assert cli(capsys, *argv)[0] == 130
    assert snapshot(out) == before
    monkeypatch.setattr(cmd_peer, "_write_out", real)
    code, _, err = cli(capsys, *argv)
    assert code == 0, err
    assert (out / "notes.txt").read_text() == "mine\n"
    summary = json.loads((out / "peer-summary.json").read_text())
    assert summary["command"] == "peer check" and summary["files"] == []
    assert leftovers(tmp_path) == []


def test_export_out_full_disk_leaves_no_file(tmp_path, capsys, monkeypatch, earlier_run):
    summary = json.loads((earlier_run / "summary.json").read_text())
    finding = earlier_run / run_files(summary)[0]
    real_open = open

    def full_open(path, mode="r", *args, **kwargs):
        fh = real_open(path, mode, *args, **kwargs)
        if "x" in mode and STAGING_MARK in os.fspath(path):
            fh.close()
            raise OSError(errno.ENOSPC, "No space left on device")
        return fh

    monkeypatch.setattr("builtins.open", full_open)
    code, _, err = cli(capsys, "export", finding, "--format", "pytest", "--out",
                       tmp_path / "test_x.py")
    monkeypatch.undo()
    assert code == 2
    one_error_line(err, "--out", "No space left on device", "nothing was written")
    assert os.listdir(tmp_path) == []
