"""Checkpoints of the breadth-first driver (:mod:`properties.bfs`): a deep search saved on disk
as it goes, resumed where it stopped by a later process.

A search of hours (the all-readings sweep to depth 7) outlives sessions, machines' restarts and
``--timeout`` s; a checkpoint lets it be taken up again with nothing explored twice past the
last save, and the resumed search's output is byte for byte that of a search never stopped
(the driver's merge makes the output independent of how the levels are cut into chunks; the
memo tables are caches, rebuilt on demand).

What is saved, in one directory (``DIR``):

* ``checkpoint.json``: the description (:data:`FORMAT`, the search's identity, the digest of
  the code that wrote it, the level under way and how many of its frontier rows are expanded,
  the first node id of every level, the moves examined, how long and how much memory the
  processes so far took, and the length of every log below). It is replaced atomically (written
  aside, then renamed), last of all, so that the files it describes are always complete; a
  process stopped mid-save leaves the previous checkpoint standing.
* ``parents.i64`` and ``fingerprints.u64``: every node's parent entry and 64-bit fingerprint,
  in node id order (8 bytes a node each), appended as nodes are numbered. On resume the
  parents become the search's parent map and the fingerprints, sorted, its visited set.
* ``frontier-L.i64``: the ids of the nodes at depth ``L`` that are expanded (not halted), in id
  order, appended as they are found (also at the last level, so that a finished search can be
  taken deeper).
* ``findings-K.pickle`` and ``tags-K.u64``: the merged findings and the distinct tags at save
  ``K`` (rewritten at each save; small).

Nodes themselves are not saved: on resume the frontier's nodes (what is left of the level under
way, and the next level's found so far) are rebuilt by re-executing their event chains from the
root, level by level, each ancestor once (:func:`rebuild`), as witnesses are; each rebuilt
node's fingerprint is compared with the saved one, so a checkpoint resumed by code that steps
differently is refused rather than silently continued. Disk: 24 bytes a node (parents,
fingerprints, frontier ids) plus the findings; depth 7 of the default vocabulary, about a
billion nodes, takes some 24 GB.

A checkpoint is written every ``every`` seconds at a chunk boundary, when the search stops by
its timeout, and when it ends; a Ctrl-C (or a killed process) keeps the last one written.
"""
from __future__ import annotations

import hashlib
import json
import os
import pickle
import re
import resource
import time
from array import array
from pathlib import Path
from typing import Callable, Optional

import numpy as np

from properties.bfs_store import _KEY_LOW, KEY_LEAF_BITS, KEY_MOVE_BITS

__all__ = ["FORMAT", "CheckpointError", "Checkpoint", "code_digest", "rebuild"]

FORMAT = 1
"""Version of the checkpoint layout (``checkpoint.json``'s ``format``)."""

_META = "checkpoint.json"
_OWN = re.compile(r"parents\.i64|fingerprints\.u64|frontier-\d+\.i64|findings-\d+\.pickle|"
                  r"tags-\d+\.u64|checkpoint\.json\.new")
"""The names of the files a checkpoint writes (besides :data:`_META`)."""
_PARENTS = "parents.i64"
_FINGERPRINTS = "fingerprints.u64"


class CheckpointError(Exception):
    """A checkpoint directory that cannot be used (not a checkpoint, another search's, written
    by other code, damaged): the message names the directory or file and what is wrong."""


def code_digest() -> str:
    """A digest (BLAKE2b, 16 hex digits) of the source of the model and the search (every
    ``.py`` file under ``model/`` and ``properties/``, by relative path): a checkpoint is only
    resumed by the code that wrote it."""
    root = Path(__file__).resolve().parent.parent
    h = hashlib.blake2b(digest_size=8)
    for package in ("model", "properties"):
        for path in sorted((root / package).rglob("*.py")):
            h.update(str(path.relative_to(root)).encode())
            h.update(path.read_bytes())
    return h.hexdigest()


def _peak_bytes() -> int:
    """This process's peak resident memory so far, in bytes (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


class Checkpoint:
    """One search's checkpoint directory (see the module).

    Args:
        directory: the directory (made if missing; a directory holding other files than a
            checkpoint's is refused, so that nothing of the user's is written over).
        identity: what the search is (JSON-able; e.g. the vocabulary's digest, the reading,
            the properties): a checkpoint of another search is refused.
        every: seconds between periodic saves (0: at every chunk boundary, for tests).

    Attributes:
        meta: the saved description (``checkpoint.json``), or None for a new checkpoint.

    Raises:
        CheckpointError: the directory cannot be made or read, holds other files, or holds a
            checkpoint of another format, search or code.
    """

    def __init__(self, directory: str, identity: dict, every: float = 600.0):
        self.directory = Path(directory)
        self.identity = json.loads(json.dumps(identity))  # as it reads back
        self.every = every
        self.digest = code_digest()
        self.meta: Optional[dict] = None
        self._logs: dict = {}  # file name -> open append handle
        self._lengths: dict = {}  # file name -> bytes written (flushed or not)
        self._last_save = time.monotonic()
        self._open()

    def _path(self, name: str) -> Path:
        return self.directory / name

    def _open(self) -> None:
        d = self.directory
        try:
            if d.exists() and not d.is_dir():
                raise CheckpointError(f"checkpoint {d}: not a directory")
            d.mkdir(parents=True, exist_ok=True)
            names = sorted(p.name for p in d.iterdir())
        except OSError as exc:
            raise CheckpointError(f"checkpoint {d}: {exc.strerror or exc}") from None
        if _META not in names:
            foreign = [n for n in names if not _OWN.fullmatch(n)]
            if foreign:  # (a process stopped before its first save leaves only its own logs)
                raise CheckpointError(
                    f"checkpoint {d}: the directory holds other files ({', '.join(foreign[:3])}"
                    f"{', ...' if len(foreign) > 3 else ''}) and no {_META}; give an empty or "
                    "new directory")
            return
        try:
            meta = json.loads(self._path(_META).read_text())
        except (OSError, ValueError) as exc:
            raise CheckpointError(f"checkpoint {self._path(_META)}: unreadable ({exc})") from None
        if not isinstance(meta, dict) or meta.get("format") != FORMAT:
            raise CheckpointError(f"checkpoint {self._path(_META)}: not a checkpoint of format "
                                  f"{FORMAT}")
        if meta.get("identity") != self.identity:
            theirs, ours = meta.get("identity") or {}, self.identity
            differ = sorted(k for k in set(theirs) | set(ours) if theirs.get(k) != ours.get(k))
            raise CheckpointError(
                f"checkpoint {d}: it is another search's (it differs in "
                f"{', '.join(differ)}: {', '.join(f'{k} {theirs.get(k)!r}' for k in differ)})")
        if meta.get("code") != self.digest:
            raise CheckpointError(
                f"checkpoint {d}: written by other code of the model or the search (digest "
                f"{meta.get('code')}, this code {self.digest}); resume it with the code that "
                "wrote it, or start afresh in a new directory")
        for name, length in meta["logs"].items():
            path = self._path(name)
            if not path.is_file() or path.stat().st_size < length:
                raise CheckpointError(f"checkpoint {path}: missing or shorter than the "
                                      f"{length} bytes {_META} says")
        self.meta = meta

    # -- writing ------------------------------------------------------------------------------

    def start_logs(self) -> None:
        """Open the logs for appending, each cut back to the length the checkpoint gives (what a
        process wrote after its last save is dropped; a new checkpoint starts them empty), and
        remove the checkpoint's files no save describes."""
        lengths = self.meta["logs"] if self.meta else {}
        kept = set(lengths) | ({self.meta["findings"], self.meta["tags"]} if self.meta else set())
        for p in self.directory.iterdir():  # what no save describes: a stopped process's
            if p.name != _META and _OWN.fullmatch(p.name) and p.name not in kept:
                p.unlink()
        for name in (_PARENTS, _FINGERPRINTS, *lengths):
            if name in self._logs:
                continue
            path = self._path(name)
            with open(path, "ab"):
                pass
            os.truncate(path, lengths.get(name, 0))
            self._logs[name] = open(path, "ab")
            self._lengths[name] = lengths.get(name, 0)

    def _append(self, name: str, values: np.ndarray) -> None:
        handle = self._logs.get(name)
        if handle is None:
            handle = self._logs[name] = open(self._path(name), "ab")
            self._lengths[name] = 0
        data = np.ascontiguousarray(values).tobytes()
        handle.write(data)
        self._lengths[name] += len(data)

    def log_nodes(self, keys: np.ndarray, fps: np.ndarray) -> None:
        """Append newly numbered nodes, in id order: their parent entries (int64) and
        fingerprints (uint64)."""
        self._append(_PARENTS, keys.astype(np.int64, copy=False))
        self._append(_FINGERPRINTS, fps.astype(np.uint64, copy=False))

    def log_frontier(self, level: int, ids: np.ndarray) -> None:
        """Append the ids (int64, ascending) of nodes at depth ``level`` that are expanded."""
        self._append(f"frontier-{level}.i64", ids.astype(np.int64, copy=False))

    def due(self) -> bool:
        """Whether ``every`` seconds have passed since the last save."""
        return time.monotonic() - self._last_save >= self.every

    def save(self, state: dict, findings: dict, tags: np.ndarray) -> None:
        """Write a checkpoint: the logs flushed to disk, the findings and tags, then the
        description (``state``: the driver's position and counts, JSON-able; see
        :func:`properties.bfs.search`). Raises CheckpointError when the disk refuses."""
        try:
            for handle in self._logs.values():
                handle.flush()
                os.fsync(handle.fileno())
            seq = (self.meta or {}).get("save", 0) + 1
            findings_name, tags_name = f"findings-{seq}.pickle", f"tags-{seq}.u64"
            with open(self._path(findings_name), "wb") as fh:
                pickle.dump(findings, fh, protocol=pickle.HIGHEST_PROTOCOL)
                fh.flush()
                os.fsync(fh.fileno())
            with open(self._path(tags_name), "wb") as fh:
                fh.write(np.ascontiguousarray(tags, dtype=np.uint64).tobytes())
                fh.flush()
                os.fsync(fh.fileno())
            prior = (self.meta or {}).get("peakBytes", 0)
            meta = {"format": FORMAT, "identity": self.identity, "code": self.digest,
                    "save": seq, "findings": findings_name, "tags": tags_name,
                    "logs": dict(sorted(self._lengths.items())),
                    **state, "peakBytes": max(prior, _peak_bytes())}
            aside = self._path(_META + ".new")
            aside.write_text(json.dumps(meta, indent=1) + "\n")
            with open(aside, "rb") as fh:
                os.fsync(fh.fileno())
            os.replace(aside, self._path(_META))
        except OSError as exc:
            raise CheckpointError(f"checkpoint {self.directory}: cannot save "
                                  f"({exc.strerror or exc})") from None
        old = self.meta
        self.meta = meta
        self._last_save = time.monotonic()
        if old is not None and old["save"] != seq:
            for name in (old["findings"], old["tags"]):
                try:
                    self._path(name).unlink()
                except OSError:
                    pass

    def close(self) -> None:
        """Close the logs (what was appended since the last save is left on disk, and cut back
        by the next process to resume)."""
        for handle in self._logs.values():
            handle.close()
        self._logs.clear()

    # -- reading ------------------------------------------------------------------------------

    def array(self, name: str, dtype) -> np.ndarray:
        """The saved part of a log as a read-only memory map (an empty array for an empty
        log)."""
        n = self.meta["logs"].get(name, 0) // 8
        if n == 0:
            return np.zeros(0, dtype)
        return np.memmap(self._path(name), dtype=dtype, mode="r", shape=(n,))

    def parents(self) -> np.ndarray:
        return self.array(_PARENTS, np.int64)

    def fingerprints(self) -> np.ndarray:
        return self.array(_FINGERPRINTS, np.uint64)

    def frontier(self, level: int) -> np.ndarray:
        return self.array(f"frontier-{level}.i64", np.int64)

    def findings(self) -> dict:
        try:
            with open(self._path(self.meta["findings"]), "rb") as fh:
                return pickle.load(fh)
        except (OSError, pickle.UnpicklingError, EOFError) as exc:
            raise CheckpointError(f"checkpoint {self._path(self.meta['findings'])}: "
                                  f"unreadable ({exc})") from None

    def tags(self) -> np.ndarray:
        try:
            return np.fromfile(self._path(self.meta["tags"]), dtype=np.uint64)
        except OSError as exc:
            raise CheckpointError(f"checkpoint {self._path(self.meta['tags'])}: "
                                  f"unreadable ({exc.strerror})") from None


def rebuild(system, parents: np.ndarray, starts: list, targets: np.ndarray,
            fingerprints: Optional[np.ndarray] = None,
            room: Optional[Callable] = None) -> np.ndarray:
    """The nodes ``targets`` (int64 node ids, ascending, no repeats) of ``system``, rebuilt by
    re-executing their event chains from the root (:meth:`TransitionSystem.child`), level by
    level, each ancestor once; returns an int64 array of shape ``(len(targets), width)``.

    Args:
        parents: every node's parent entry (int64, by id; :func:`~properties.bfs_store.pack_key`).
        starts: the first node id of each depth (``starts[0] == 0``, the root).
        fingerprints: every node's saved fingerprint (uint64, by id), to compare with the
            rebuilt nodes' (None: not compared).
        room: called as ``room(pending)`` every 65,536 steps, with the parent rows still to
            step from (:meth:`TransitionSystem.make_room`), so that the system's caches keep
            to their budget.

    Raises:
        CheckpointError: a rebuilt node's fingerprint differs from the saved one (the
            checkpoint was written by a system that steps otherwise).
    """
    width = system.width
    targets = np.asarray(targets, dtype=np.int64)
    if not len(targets):
        return np.zeros((0, width), np.int64)
    bounds = np.asarray(starts, dtype=np.int64)
    level_of = np.searchsorted(bounds, targets, side="right") - 1
    top = int(level_of.max())
    wanted = set(np.unique(level_of).tolist())
    need: dict = {}
    carry = np.zeros(0, np.int64)
    for level in range(top, 0, -1):
        ids = np.union1d(targets[level_of == level], carry)
        need[level] = ids
        carry = np.unique(np.asarray(parents[ids]) >> np.int64(_KEY_LOW))
    ids_prev = np.zeros(1, np.int64)
    rows_prev = np.array([system.root()], dtype=np.int64)
    levels = {0: (ids_prev, rows_prev)}
    move_mask, leaf_mask = (1 << KEY_MOVE_BITS) - 1, (1 << KEY_LEAF_BITS) - 1
    for level in range(1, top + 1):
        ids = need[level]
        keys = np.asarray(parents[ids])
        at = np.searchsorted(ids_prev, keys >> np.int64(_KEY_LOW))
        moves = (keys >> np.int64(KEY_LEAF_BITS)) & move_mask
        leaves = keys & leaf_mask
        rows = np.empty((len(ids), width), np.int64)
        child = system.child
        step = 1 << 16
        for lo in range(0, len(ids), step):
            if room is not None:
                first = int(at[lo])
                room(lambda first=first: iter((rows_prev[first:],)))
            flat = array("q")  # a block's rows, then copied in: no array grown whole
            # the block's parents as Python ints (a level's in one list would take some 200
            # bytes a node)
            for parent, m, f in zip(rows_prev[at[lo:lo + step]].tolist(),
                                    moves[lo:lo + step].tolist(), leaves[lo:lo + step].tolist()):
                flat.extend(child(tuple(parent), m, f, level - 1)[1])
            rows[lo:lo + step] = np.frombuffer(flat, dtype=np.int64).reshape(-1, width)
        for lo in range(0, len(ids) if fingerprints is not None else 0, 1 << 20):
            part = slice(lo, lo + (1 << 20))
            wrong = np.flatnonzero(system.fingerprints(rows[part])
                                   != np.asarray(fingerprints[ids[part]]))
            if len(wrong):
                raise CheckpointError(
                    f"node {int(ids[part][wrong[0]])} (depth {level}) rebuilt from the "
                    "checkpoint has another fingerprint than the one saved: the checkpoint was "
                    "written by a search that steps otherwise")
        levels[level] = (ids, rows)
        if level - 2 not in wanted:
            levels.pop(level - 2, None)  # no target's, and no longer any node's parents
        ids_prev, rows_prev = ids, rows
    if len(wanted) == 1:  # one level's nodes (a checkpoint inside the last level): no copy
        ids, rows = levels[top]
        if len(ids) == len(targets):
            return rows
    out = np.empty((len(targets), width), np.int64)
    for level in sorted(wanted):
        mask = level_of == level
        ids, rows = levels[level]
        out[mask] = rows[np.searchsorted(ids, targets[mask])]
    return out
