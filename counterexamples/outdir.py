"""Output that is written whole or not at all, and only inside the directory the user named.

A command that writes a directory (``run --out``, ``peer check|search --out``, ``corpus
update``) checks it first (:func:`plan_output`: new, empty, or an earlier output of the same
command, recognised by its summary file) and then builds the new output in a *staging
directory* beside it (:meth:`OutputPlan.staged`). Only when everything is written is the
staging directory swapped in, with one atomic ``renameat2(RENAME_EXCHANGE)`` where the kernel
offers it (else two renames with the interrupt signals held back between them), and the earlier
output, now at the staging path, removed. An exception, a Ctrl-C, a SIGTERM (which the command
line turns into one, :class:`activity_check.process.Terminated`) or a full disk before the swap removes
the staging directory and leaves the earlier output exactly as it was.

What an earlier output holds besides what it wrote (the files its summary lists inside
``findings/`` and the summary itself) is the user's: it is carried into the new output as hard
links (a symbolic link as the link itself, never what it points to), so nothing the user keeps
there is lost; one whose name the new output writes too stops the swap (:class:`NameTaken`),
the earlier output left as it was, rather than being dropped or overwritten. A symbolic link where the output's own files go (``findings``, the summary, a
listed finding file) is replaced, never followed: the new output is a fresh directory tree, and
the old one is removed with :func:`shutil.rmtree`, which unlinks a symbolic link rather than
entering it. The directory named must not itself be a symbolic link or a mount point (the swap
renames it).

A single file (``export --out``, ``explore --graph``) is written with :func:`new_file`: to a
temporary file beside it, then linked to its name, which fails if anything (a symbolic link
included) is there already.
"""
from __future__ import annotations

import ctypes
import errno
import os
import secrets
import shutil
import signal
import stat
import threading
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Callable, Iterator, Optional

__all__ = ["OutputPlan", "OutputRefused", "NameTaken", "plan_output", "write_new_file",
           "new_file", "own_name", "FINDINGS_DIR", "QUESTIONS_DIR", "OWN_FILES", "STAGING_MARK"]

FINDINGS_DIR = "findings"
"""The subdirectory an output keeps its finding files in."""

QUESTIONS_DIR = "questions"
"""The subdirectory an output keeps the settlement table's witness files in (issue 19)."""

OWN_FILES = frozenset({"questions.html", "questions.json", "resolve.html", "resolve.json",
                       "resolve.md", "proposal.json", "matrix.md", "matrix.html",
                       "producers.md"})
"""Top-level file names an earlier output may list as its own besides its summary (the
settlement table's page and JSON; a resolve report's page, JSON, Markdown and proposal; the
peer and producer matrices' Markdown and page); anything else at the top level is the
user's."""

_OWN_DIRS = {FINDINGS_DIR: (".json", ".jsonl"), QUESTIONS_DIR: (".jsonl",),
             "traces": (".jsonl", ".json"), "pytest": (".py",), "fixtures": (".json",),
             "conflicts": (".jsonl",), "producers": (".jsonl",)}

STAGING_MARK = ".activity-check-"
"""Part of the name of every staging (and leftover) directory: ``.<name>.activity-check-<hex>``
beside the target."""


def own_name(rel: str, summary_name: str) -> bool:
    """Whether ``rel`` (a path relative to an output directory) is a name an output of ours may
    write there: its summary, one of :data:`OWN_FILES`, or a file of one of its own
    subdirectories with that subdirectory's suffix (``traces/Q8.jsonl``)."""
    rel = os.path.normpath(rel)
    head, name = os.path.split(rel)
    return rel == summary_name or (not head and rel in OWN_FILES) or \
        (head in _OWN_DIRS and name.endswith(_OWN_DIRS[head]))


class NameTaken(FileExistsError):
    """The user's file in an earlier output has the name of a file the new output writes: the
    new output is not swapped in (the earlier one, the user's file with it, stays as it was).
    ``strerror`` says which file, in a phrase that follows "cannot write the output: "."""


FilesOf = Callable[[dict], Optional[list]]
"""An earlier summary -> the files it lists (paths relative to the output directory), None when
the summary is not the command's; ValueError when it is, but not in the form it writes."""


class OutputRefused(ValueError):
    """The directory named is not ours to write: ``str()`` says why in a phrase that follows the
    directory's name (``"exists and is not a directory"``)."""


@dataclass
class OutputPlan:
    """A checked output directory, ready for :meth:`staged`.

    Attributes:
        target: the directory the user named.
        summary_name: the summary file of this kind of output (``summary.json``).
        replaced: the paths, relative to ``target``, of what the earlier output wrote (its
            summary and the finding files it lists inside ``findings/``): not carried over.
        earlier: True when ``target`` holds an earlier output (False: new or empty).
    """

    target: str
    summary_name: str
    replaced: frozenset = field(default_factory=frozenset)
    earlier: bool = False

    def check_writable(self) -> None:
        """Make the missing parents of :attr:`target` and a staging directory beside it, and
        remove that again: called before a command's work, so that an output that cannot be
        written is refused before, not after, minutes of search.

        Raises:
            OSError: the parent cannot be made or written (a read-only file system, no
                permission); NotADirectoryError when a path above the target is a file,
                its ``strerror`` naming that path (``"afile exists and is not a
                directory"``, not the ``File exists`` of :func:`os.makedirs`).
        """
        parent = os.path.dirname(os.path.abspath(self.target))
        _make_parents(self.target)
        os.rmdir(_new_staging(parent, os.path.basename(os.path.abspath(self.target))))

    @contextmanager
    def staged(self) -> Iterator[str]:
        """``with plan.staged() as directory:`` write the whole output into ``directory`` (a
        new, empty staging directory beside :attr:`target`); when the block ends normally it
        becomes :attr:`target` (:func:`_commit`). When the block raises anything (an OSError,
        a KeyboardInterrupt), the staging directory is removed and :attr:`target` is left
        exactly as it was; the exception propagates.

        Raises:
            OSError: the staging directory cannot be made beside the target (the parent is
                not writable), or the swap fails.
        """
        parent = os.path.dirname(os.path.abspath(self.target))
        _make_parents(self.target)
        staging = _new_staging(parent, os.path.basename(os.path.abspath(self.target)))
        try:
            yield staging
            with _signals_held():
                _commit(self, staging)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise


def _make_parents(target: str) -> None:
    """Make the missing directories above ``target`` (:func:`os.makedirs`). Raises
    NotADirectoryError naming the first path above it (as the user wrote it) that exists and
    is not a directory, whose ``os.makedirs`` error would say only ``File exists``; other
    OSErrors as :func:`os.makedirs` raises them."""
    written = os.path.dirname(os.path.normpath(target))
    while written and written != os.path.dirname(written):
        if os.path.lexists(written) and not os.path.isdir(written):
            raise NotADirectoryError(errno.ENOTDIR,
                                     f"{written} exists and is not a directory", written)
        written = os.path.dirname(written)
    os.makedirs(os.path.dirname(os.path.abspath(target)), exist_ok=True)


def plan_output(target: str, summary_name: str, files_of: FilesOf,
                owner: str = "activity-check") -> OutputPlan:
    """Check that ``target`` is ours to write: absent, an empty directory, or an earlier output
    whose ``summary_name`` names ``"tool": "activity-check"`` and which ``files_of`` accepts
    (``owner``: the command that writes it, as the refusal names it). Nothing is written or
    removed.

    Raises:
        OutputRefused: ``target`` is a symbolic link, a mount point, the working directory
            (or one holding it), not a directory, holds
            something other than an earlier output of this command, or an earlier output whose
            summary or ``findings`` is not what the command writes (a symbolic link summary is
            refused, since reading it would follow it).
    """
    if os.path.islink(target):
        raise OutputRefused("is a symbolic link; name the directory itself")
    if os.path.lexists(target) and not os.path.isdir(target):
        raise OutputRefused("exists and is not a directory")
    if not os.path.isdir(target):
        return OutputPlan(target, summary_name)
    if os.path.ismount(target):
        raise OutputRefused("is a mount point; name a directory inside it (the output is "
                            "built beside the directory and swapped in)")
    here, there = os.path.realpath(os.getcwd()), os.path.realpath(target)
    if here == there or here.startswith(there.rstrip(os.sep) + os.sep):
        raise OutputRefused("is the working directory or holds it (the output is built beside "
                            "the directory and swapped in); run from outside it")
    if not os.listdir(target):
        return OutputPlan(target, summary_name)
    refusal = OutputRefused(f"directory is not empty and holds no earlier {owner} output; "
                            "choose another directory")
    summary_path = os.path.join(target, summary_name)
    if os.path.islink(summary_path):
        raise OutputRefused(f"{summary_name} there is a symbolic link; refused (not followed)")
    from model.wire import loads_json, read_text
    try:  # a regular file only, not through a link, bounded, strict JSON, depth-bounded
        previous = loads_json(read_text(summary_path, listed=True))
    except ValueError:  # TraceFormatError (a pipe, a device, unreadable), not JSON
        raise refusal from None
    if not isinstance(previous, dict) or previous.get("tool") != "activity-check":
        raise refusal
    shapeless = OutputRefused(f"{summary_name} there is not in the form activity-check "
                              "writes; choose another directory or remove it")
    try:
        files = files_of(previous)
    except ValueError:
        raise shapeless from None
    if files is None:
        raise refusal
    if not all(isinstance(path, str) for path in files):
        raise shapeless
    findings = os.path.join(target, FINDINGS_DIR)
    if os.path.lexists(findings) and not os.path.islink(findings) and \
            not os.path.isdir(findings):
        raise OutputRefused(f"{FINDINGS_DIR} there is not a directory; refused")
    replaced = {summary_name}
    for path in files:
        rel = os.path.normpath(path)
        if own_name(rel, summary_name):
            replaced.add(rel)
    return OutputPlan(target, summary_name, frozenset(replaced), earlier=True)


def write_new_file(path: str, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path``, which must not exist, whole or not at all
    (:func:`new_file`). A lone surrogate (a ``\\ud800`` escape read from a stream) is written
    as its backslash escape, as the command line's standard output does, never a traceback.

    Raises:
        FileExistsError: something is at ``path``.
        OSError: the directory cannot be written (full disk, read-only, missing).
    """
    with new_file(path) as fh:
        fh.write(text.encode("utf-8", errors="backslashreplace"))


@contextmanager
def new_file(path: str) -> Iterator:
    """``with new_file(path) as fh:`` write the binary file ``path``, which must not exist:
    into a temporary file in the same directory, hard-linked to ``path`` when the block ends
    normally, so that ``path`` appears whole or not at all and nothing already at ``path`` (a
    file, a directory, a symbolic link, dangling or not) is overwritten or followed. The
    temporary file is removed in every case (an exception, a Ctrl-C, a full disk).

    Raises:
        FileExistsError: something is at ``path`` (before or when linking).
        OSError: the directory cannot be written (full disk, read-only, missing).
    """
    directory = os.path.dirname(os.path.abspath(path))
    if os.path.lexists(path):
        raise FileExistsError(errno.EEXIST, os.strerror(errno.EEXIST), path)
    temporary = os.path.join(directory, f".{os.path.basename(path)}{STAGING_MARK}"
                                        f"{secrets.token_hex(4)}")
    try:
        with open(temporary, "xb") as fh:
            yield fh
        os.link(temporary, path, follow_symlinks=False)
    finally:
        try:
            os.unlink(temporary)
        except FileNotFoundError:
            pass


# --- the swap -----------------------------------------------------------------------------------

def _new_staging(parent: str, name: str) -> str:
    """A new directory ``parent/.<name>.activity-check-<hex>`` (mode from the umask)."""
    for _ in range(100):
        path = os.path.join(parent, f".{name}{STAGING_MARK}{secrets.token_hex(4)}")
        try:
            os.mkdir(path)
            return path
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "no free staging name", parent)  # pragma: no cover


def _commit(plan: OutputPlan, staging: str) -> None:
    """Carry the user's files of an earlier output into ``staging``, give it the target's mode,
    and swap it in; the earlier output, then at ``staging``, is removed."""
    target = plan.target
    if not os.path.isdir(target) or os.path.islink(target):
        os.rename(staging, target)  # new (or vanished meanwhile); fails if something is there
        return
    # whatever is there now that the earlier output did not write (all of it, for a directory
    # that was empty when checked) is the user's
    _carry(target, staging, "", plan.replaced)
    os.chmod(staging, stat.S_IMODE(os.lstat(target).st_mode))
    if not _exchange(staging, target):
        aside = staging + "-old"
        os.rename(target, aside)
        try:
            os.rename(staging, target)
        except BaseException:
            os.rename(aside, target)
            raise
        staging = aside
    shutil.rmtree(staging, ignore_errors=True)


def _carry(source: str, staging: str, rel: str, replaced: frozenset) -> None:
    """Hard-link into ``staging`` every entry under ``source/rel`` that is not in ``replaced``;
    directories are made anew, symbolic links linked as links (never followed).

    Raises:
        NameTaken: an entry to carry has the name of something the new output wrote (the
            user's ``traces/Q19.jsonl`` where the new report writes its own): neither is
            dropped; the caller leaves the earlier output as it was."""
    here = os.path.join(source, rel)
    for entry in os.scandir(here):
        sub = os.path.join(rel, entry.name) if rel else entry.name
        if sub in replaced:
            continue
        if sub == FINDINGS_DIR and entry.is_symlink():
            continue  # ours by name: replaced by the new findings directory, not followed
        destination = os.path.join(staging, sub)
        if entry.is_dir(follow_symlinks=False):
            if not os.path.isdir(destination):
                if os.path.lexists(destination):
                    raise _taken(sub)
                os.mkdir(destination)
                os.chmod(destination, stat.S_IMODE(entry.stat(follow_symlinks=False).st_mode))
            _carry(source, staging, sub, replaced)
        elif os.path.lexists(destination):
            raise _taken(sub)
        else:
            try:
                os.link(entry.path, destination, follow_symlinks=False)
            except OSError:  # a file system without hard links: a copy (a link as a link)
                shutil.copy2(entry.path, destination, follow_symlinks=False)


def _taken(rel: str) -> NameTaken:
    """The :class:`NameTaken` for the user's ``rel``."""
    from model.text import visible
    return NameTaken(errno.EEXIST, f"{visible(rel)} there is not a file the earlier output "
                     "wrote, and the new output writes that name; move it out of the "
                     "directory and run again", rel)


_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


def _exchange(a: str, b: str) -> bool:
    """Swap the directories ``a`` and ``b`` in one atomic ``renameat2(..., RENAME_EXCHANGE)``;
    False when the system does not offer it (then nothing was done). Raises OSError for
    another failure."""
    try:
        renameat2 = ctypes.CDLL(None, use_errno=True).renameat2
    except (AttributeError, OSError):
        return False
    renameat2.argtypes = (ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p,
                          ctypes.c_uint)
    if renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP):
        return False
    raise OSError(code, os.strerror(code), b)


@contextmanager
def _signals_held():
    """Hold Ctrl-C and SIGTERM back while the swap runs, so that an interrupt finds either the
    earlier output or the new one in place, never neither: their handlers only record the
    signal meanwhile, and the handler that was in place then runs once for each (raising
    KeyboardInterrupt, :class:`activity_check.process.Terminated`, or ending the process by default).
    Outside the main thread (where handlers cannot be set) nothing is held."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    pending = []
    previous = {}
    for signum in (signal.SIGINT, signal.SIGTERM):
        previous[signum] = signal.signal(signum, lambda number, frame: pending.append(number))
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        for signum in pending:
            handler = previous[signum]
            if callable(handler):
                handler(signum, None)
            elif handler == signal.SIG_DFL:
                signal.raise_signal(signum)
