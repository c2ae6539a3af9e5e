"""Checkpoints of the breadth-first driver (:mod:`properties.search.bfs`): a deep search saved on disk
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
* ``findings-K.json`` and ``tags-K.u64``: the merged findings (JSON as :data:`FINDINGS_SCHEMA`
  says, each value written by :func:`value_to_json`) and the distinct tags (raw uint64) at save
  ``K`` (rewritten at each save; small). Nothing in a checkpoint is code: a replaced findings
  file, its length and CRC-32 recomputed, is at worst refused or read as other findings; no
  file is unpickled (issue 43).

Every own file is opened without following a symbolic link (``O_NOFOLLOW``), without blocking
on a pipe (``O_NONBLOCK``), and checked to be a regular file once open; a directory whose own
files are links, pipes or devices is refused before anything is written in it (issue 38).
``checkpoint.json`` and the findings are read with the project's bounded JSON reader
(:func:`model.wire.loads_json`: at most :data:`model.wire.MAX_DEPTH` levels of nesting) and at
most :data:`MAX_META_BYTES` and :data:`MAX_FINDINGS_BYTES` bytes.

Nodes themselves are not saved: on resume the frontier's nodes (what is left of the level under
way, and the next level's found so far) are rebuilt by re-executing their event chains from the
root, level by level, each ancestor once (:func:`rebuilt`), as witnesses are, and handed to
the frontier block by block (spilled to disk past its limit, as any frontier); each rebuilt
node's fingerprint is compared with the saved one, so a checkpoint resumed by code that steps
differently is refused rather than silently continued. Disk: 24 bytes a node (parents,
fingerprints, frontier ids) plus the findings; depth 7 of the default vocabulary, about a
billion nodes, takes some 24 GB.

A checkpoint is written every ``every`` seconds at a chunk boundary (with the Dask engine, at a
round boundary: :mod:`properties.search.dask_engine`), when the search stops by its timeout or its state
bound (as it stood before the chunk that crossed it), and when it ends; a Ctrl-C (or a killed
process) keeps the last one written.
"""
from __future__ import annotations

import errno
import fcntl
import hashlib
import json
import os
import re
import resource
import stat
import time
import zlib
from array import array
from pathlib import Path
from typing import Callable, Iterator, Optional

import numpy as np

from model.text import schema_message
from model.wire import loads_json
from properties.search.store import _KEY_LOW, KEY_LEAF_BITS, KEY_MOVE_BITS

__all__ = ["FORMAT", "META", "SCHEMA", "FINDINGS_SCHEMA", "CheckpointError", "Checkpoint",
           "code_digest", "findings_to_json", "findings_from_json", "value_to_json",
           "value_from_json", "rebuild", "rebuilt", "what_stands"]

FORMAT = 4
"""Version of the checkpoint layout (``checkpoint.json``'s ``format``; 2: each log, the
findings and the tags with their length and CRC-32; 3: with ``cpuSeconds``; 4: the findings as
JSON, not a pickle). A checkpoint of another format is refused, naming its format."""

MAX_META_BYTES = 64 << 20
"""The most bytes of ``checkpoint.json`` read (a description of a depth-12 search is some
kilobytes: larger is not a checkpoint's)."""

MAX_FINDINGS_BYTES = 256 << 20
"""The most bytes of a findings file read (a search's findings are a few dozen, some
kilobytes)."""

META = "checkpoint.json"
"""The description's file name in a checkpoint directory: there once a save was made."""
_LOCK = "checkpoint.lock"
_OWN = re.compile(r"parents\.i64|fingerprints\.u64|frontier-\d+\.i64|findings-\d+\.json|"
                  r"tags-\d+\.u64|checkpoint\.json\.new|checkpoint\.lock")
"""The names of the files a checkpoint writes (besides :data:`META`)."""
_PARENTS = "parents.i64"
_FINGERPRINTS = "fingerprints.u64"


_NAME = r"^(parents\.i64|fingerprints\.u64|frontier-\d+\.i64)$"
_COUNT = {"type": "integer", "minimum": 0}
SCHEMA = {
    "type": "object",
    "required": ["format", "identity", "code", "save", "findings", "tags", "logs", "level",
                 "rows", "starts", "edges", "depth", "drained", "finished", "seconds",
                 "cpuSeconds", "runs", "peakBytes", "check"],
    "properties": {
        "check": _COUNT,  # CRC-32 of the rest (_meta_check): a hand edit is refused
        "format": {"const": FORMAT}, "identity": {"type": "object"}, "code": {"type": "string"},
        "save": {"type": "integer", "minimum": 1},
        # [file name, bytes, CRC-32]: the findings (FINDINGS_SCHEMA) and the tags
        "findings": {"type": "array", "prefixItems": [
            {"type": "string", "pattern": r"^findings-\d+\.json$"}, _COUNT, _COUNT],
            "minItems": 3, "maxItems": 3},
        "tags": {"type": "array", "prefixItems": [
            {"type": "string", "pattern": r"^tags-\d+\.u64$"}, _COUNT, _COUNT],
            "minItems": 3, "maxItems": 3},
        # log name -> [bytes, CRC-32 of those bytes]
        "logs": {"type": "object", "propertyNames": {"pattern": _NAME},
                 "required": ["parents.i64", "fingerprints.u64"],
                 "additionalProperties": {"type": "array", "items": _COUNT,
                                          "minItems": 2, "maxItems": 2}},
        "level": _COUNT, "rows": _COUNT, "edges": _COUNT, "depth": _COUNT,
        "starts": {"type": "array", "items": _COUNT, "minItems": 1},
        "drained": {"type": "boolean"},
        "finished": {"enum": [None, "depth", "drained", "found"]},
        # wall seconds, and CPU seconds of the search's process, over every run so far
        "seconds": {"type": "number", "minimum": 0}, "cpuSeconds": {"type": "number", "minimum": 0},
        "runs": {"type": "integer", "minimum": 1},
        "peakBytes": _COUNT},
}
"""JSON Schema (2020-12) of ``checkpoint.json``: every file it names is one of the checkpoint's
own, in its directory."""


_VALUE = {"$ref": "#/$defs/value"}
_SEQUENCE = {"type": "object", "required": ["tuple"], "additionalProperties": False,
             "properties": {"tuple": {"type": "array", "items": {"type": "integer"},
                                      "minItems": 3, "maxItems": 3}}}
FINDINGS_SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object", "required": ["format", "findings"], "additionalProperties": False,
    "properties": {
        "format": {"const": FORMAT},
        # in the order the driver first found them (Search.findings' order)
        "findings": {"type": "array", "items": {
            "type": "object", "additionalProperties": False,
            "required": ["key", "first", "cost", "sequence", "payload"],
            "properties": {"key": {"type": "object", "required": ["tuple"],
                                   "additionalProperties": False,
                                   "properties": {"tuple": {"type": "array", "items": {
                                       "type": ["null", "boolean", "integer", "string"]}}}},
                           "first": _SEQUENCE, "cost": _VALUE, "sequence": _SEQUENCE,
                           "payload": _VALUE}}}},
    "$defs": {"value": {"anyOf": [
        {"type": ["null", "boolean", "integer", "string"]},
        {"type": "object", "required": ["tuple"], "additionalProperties": False,
         "properties": {"tuple": {"type": "array", "items": _VALUE}}},
        {"type": "object", "required": ["map"], "additionalProperties": False,
         "properties": {"map": {"type": "array", "items": {
             "type": "array", "prefixItems": [{"type": "string"}, _VALUE],
             "minItems": 2, "maxItems": 2}}}}]}},
}
"""JSON Schema (2020-12) of a findings file (``findings-K.json``): per finding, its key, the
place it was first found (``first``), its cost, the place of the kept witness (``sequence``)
and its payload (see :class:`~properties.search.bfs.Expansion`), each a value as
:func:`value_to_json` writes it."""


def value_to_json(value):
    """A finding's part (key, cost, place or payload, as the transition systems make them:
    ``None``, bools, ints, strings, tuples of these and dicts of string keys, e.g. a split's
    pair of reading assignments ``({"Q1": "merge"}, {"Q1": "ignore"})``) as JSON: scalars as
    themselves, a tuple as ``{"tuple": [...]}``, a dict as ``{"map": [[key, value], ...]}`` in
    its order. Raises TypeError for anything else (a float, a list, an object: no system puts
    one in a finding, and none is stored in a form that could run code)."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, tuple):
        return {"tuple": [value_to_json(v) for v in value]}
    if isinstance(value, dict):
        if not all(isinstance(k, str) for k in value):
            raise TypeError("a finding holds a dict with a key that is not a string")
        return {"map": [[k, value_to_json(v)] for k, v in value.items()]}
    raise TypeError(f"a finding holds a {type(value).__name__}, which a checkpoint does not "
                    "store")


def value_from_json(data):
    """The value :func:`value_to_json` wrote as ``data`` (decoded JSON): the inverse, exactly
    (a bool stays a bool, a dict keeps its order). Raises ValueError for any other JSON (a
    float, a bare array, an object of another shape)."""
    if data is None or isinstance(data, (bool, int, str)):
        return data
    if isinstance(data, dict) and len(data) == 1:
        if isinstance(data.get("tuple"), list):
            return tuple(value_from_json(v) for v in data["tuple"])
        if isinstance(data.get("map"), list):
            out = {}
            for item in data["map"]:
                if not (isinstance(item, list) and len(item) == 2 and isinstance(item[0], str)):
                    raise ValueError("a map's item is not a [name, value] pair")
                out[item[0]] = value_from_json(item[1])
            return out
    raise ValueError(f"not a finding's value: {json.dumps(data)[:60]}")


def findings_to_json(first: dict) -> dict:
    """The driver's merged findings (``{key: [first place, cost, place, payload]}``, see
    :class:`properties.search.bfs._Merge`) as a findings document (:data:`FINDINGS_SCHEMA`).
    Raises TypeError for a value :func:`value_to_json` does not store."""
    return {"format": FORMAT, "findings": [
        {"key": value_to_json(key), "first": value_to_json(tuple(entry[0])),
         "cost": value_to_json(entry[1]), "sequence": value_to_json(tuple(entry[2])),
         "payload": value_to_json(entry[3])} for key, entry in first.items()]}


def findings_from_json(document) -> dict:
    """The merged findings a findings document (decoded JSON) holds, as
    :func:`findings_to_json` took them (each entry a fresh list, for the driver to update).
    Raises ValueError naming what is wrong when the document is not as
    :data:`FINDINGS_SCHEMA` says (the schema is checked first) or repeats a key."""
    import jsonschema
    error = jsonschema.exceptions.best_match(
        jsonschema.Draft202012Validator(FINDINGS_SCHEMA).iter_errors(document))
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path) or "the document"
        raise ValueError(f"{where}: {schema_message(error)}")
    out: dict = {}
    for i, item in enumerate(document["findings"]):
        key = value_from_json(item["key"])
        if key in out:
            raise ValueError(f"findings/{i}: a finding's key given twice")
        out[key] = [value_from_json(item["first"]), value_from_json(item["cost"]),
                    value_from_json(item["sequence"]), value_from_json(item["payload"])]
    return out


class CheckpointError(Exception):
    """A checkpoint directory that cannot be used (not a checkpoint, another search's, written
    by other code, damaged): the message names the directory or file and what is wrong."""


def code_digest() -> str:
    """A digest (BLAKE2b, 16 hex digits) of the source of the model and the search (every
    ``.py`` file under ``model/`` and ``properties/``, by relative path): a checkpoint is only
    resumed by the code that wrote it."""
    root = Path(__file__).resolve().parents[2]
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
            checkpoint's and no checkpoint is refused, so that nothing of the user's is
            written over; other files beside a checkpoint are left as they are).
        identity: what the search is (JSON-able; e.g. the vocabulary's digest, the reading,
            the properties): a checkpoint of another search is refused.
        every: seconds between periodic saves (0: at every chunk boundary, for tests).

    Attributes:
        meta: the saved description (``checkpoint.json``), or None for a new checkpoint.
        ended: the saved search had ended when it was taken up (its report is given again).
        read_only: why this process may not write the directory (e.g. ``"Read-only file
            system"``), or None: a finished search is still reported again from it, and an
            unfinished one is refused (:func:`properties.search.bfs.search`).

    The directory is locked (``flock`` on ``checkpoint.lock``) from here to :meth:`close`, so
    that a second process on it is refused rather than writing into the first one's logs (a
    directory this process may not write is locked shared, and only read).

    Raises:
        CheckpointError: the directory cannot be made or read, is in use by another process,
            holds other files, or holds a checkpoint that is damaged (not as
            :data:`SCHEMA` says, or saved files without a description) or of another
            format, search or code.
    """

    def __init__(self, directory: str, identity: dict, every: float = 600.0):
        self.directory = Path(directory)
        self.identity = json.loads(json.dumps(identity))  # as it reads back
        self.every = every
        self.digest = code_digest()
        self.meta: Optional[dict] = None
        self._logs: dict = {}  # file name -> open append handle
        self._lengths: dict = {}  # file name -> bytes written (flushed or not)
        self._crcs: dict = {}  # file name -> CRC-32 of those bytes
        self._last_save = time.monotonic()
        self._lock = None
        self.ended = False
        self.read_only: Optional[str] = None
        try:
            self._open()
        except BaseException:
            self.close()
            raise

    def _path(self, name: str) -> Path:
        return self.directory / name

    def _open(self) -> None:
        d = self.directory
        try:
            if d.exists() and not d.is_dir():
                raise CheckpointError(f"checkpoint {d}: not a directory")
            if not d.is_dir():
                d.mkdir(parents=True, exist_ok=True)
            names = sorted(p.name for p in d.iterdir())
            self._refuse_odd(names)  # (before the lock file is made: nothing is written)
            # a checkpoint, or an empty directory or one of a process stopped before its first
            # save: locked (a directory of other files is refused below, no lock made in it)
            if META in names or not any(not _OWN.fullmatch(n) for n in names):
                self._take_lock()
        except BlockingIOError:
            raise CheckpointError(f"checkpoint {d}: another process is using it (its search is "
                                  "under way, or its report is being given again); wait for "
                                  "it to stop, or give another directory") from None
        except OSError as exc:
            raise CheckpointError(f"checkpoint {d}: {exc.strerror or exc}") from None
        if META not in names:
            foreign = [n for n in names if not _OWN.fullmatch(n)]
            if foreign:  # (a process stopped before its first save leaves only its own logs)
                raise CheckpointError(
                    f"checkpoint {d}: the directory holds other files ({', '.join(foreign[:3])}"
                    f"{', ...' if len(foreign) > 3 else ''}) and no {META}; give an empty or "
                    "new directory")
            # a process stopped in its first save leaves save 1's files: started afresh; a
            # later save's files say a description was there, and is lost
            saved = [n for n in names if n.startswith(("findings-", "tags-"))
                     and int(re.search(r"-(\d+)\.", n).group(1)) > 1]
            if saved:
                raise CheckpointError(
                    f"checkpoint {d}: saved files ({saved[0]}) but no {META}: the checkpoint "
                    f"is damaged; restore its {META}, or give a new directory to start afresh")
            return
        meta = self._read_meta()
        # other code is said first: a change of the code may change how a search is described
        if meta.get("code") != self.digest:
            raise CheckpointError(
                f"checkpoint {d}: written by other code of the model or the search (digest "
                f"{meta.get('code')}, this code {self.digest}); resume it with the code that "
                "wrote it, or start afresh in a new directory")
        if meta.get("identity") != self.identity:
            theirs, ours = meta.get("identity") or {}, self.identity
            differ = sorted(k for k in set(theirs) | set(ours) if theirs.get(k) != ours.get(k))
            raise CheckpointError(
                f"checkpoint {d}: it is another search's (it differs in "
                + "; ".join(f"{k}: {json.dumps(theirs.get(k))} there, "
                            f"{json.dumps(ours.get(k))} here"
                            for k in differ) + ")")
        for name, (length, crc) in meta["logs"].items():
            path = self._path(name)
            try:
                with _open_own(path, os.O_RDONLY, "rb") as fh:
                    size = os.fstat(fh.fileno()).st_size
            except OSError:
                size = -1
            if size < length:
                raise CheckpointError(f"checkpoint {path}: missing or shorter than the "
                                      f"{length} bytes {META} says")
            if _crc(path, length) != crc:  # (some seconds a billion states)
                raise CheckpointError(f"checkpoint {path}: damaged (its CRC-32 differs from "
                                      f"the one {META} gives)")
        self.meta = meta

    def _refuse_odd(self, names: list) -> None:
        """Raise CheckpointError for the first of the checkpoint's own files among ``names``
        (the directory's entries) that is not a regular file of one name (:func:`_odd`: a
        symbolic link, a pipe, a device...), which would be followed, blocked on or written
        through (issue 38)."""
        for name in names:
            if name == META or _OWN.fullmatch(name):
                path = self._path(name)
                info = os.lstat(path)
                word = _odd(info.st_mode, info.st_nlink)
                if word is not None:
                    raise _refused(path, word)

    def _take_lock(self) -> None:
        """Lock the directory for this process: exclusively (``checkpoint.lock`` opened for
        appending), or, where this process may not write (a read-only file system, another
        user's directory), shared (the lock file opened for reading, if there is one), which a
        writer's exclusive lock still refuses; :attr:`read_only` then says why. Raises
        BlockingIOError when another process holds the lock, OSError otherwise."""
        path = self._path(_LOCK)
        try:
            self._lock = _open_own(path, _APPEND, "a")
            fcntl.flock(self._lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except OSError as exc:
            if exc.errno not in (errno.EROFS, errno.EACCES, errno.EPERM):
                raise
            self.read_only = exc.strerror or str(exc)
        try:
            self._lock = _open_own(path, os.O_RDONLY, "r")
        except FileNotFoundError:
            return  # (no process ever wrote here that could be writing now)
        except PermissionError:
            return  # (another user's, unreadable: nothing here is written, and every log's
            # length and CRC-32 are checked as the checkpoint is opened)
        fcntl.flock(self._lock, fcntl.LOCK_SH | fcntl.LOCK_NB)

    def _read_meta(self) -> dict:
        """``checkpoint.json``, checked against :data:`SCHEMA` and for consistency (level
        starts ascending from 0, as many parents as fingerprints, the level under way and its
        rows within the logs). Raises CheckpointError naming the file and what is wrong."""
        import jsonschema
        path = self._path(META)
        try:
            meta = loads_json(_read_own(path, MAX_META_BYTES).decode("utf-8"))
        except OSError as exc:
            raise CheckpointError(f"checkpoint {path}: unreadable ({exc.strerror or exc})") \
                from None
        except ValueError as exc:  # (JSONDecodeError, UnicodeDecodeError: one line each)
            raise CheckpointError(f"checkpoint {path}: not JSON ({_one_line(exc)})") from None
        if isinstance(meta, dict) and meta.get("format") != FORMAT:
            theirs = meta.get("format")
            raise CheckpointError(
                f"checkpoint {path}: of format {json.dumps(theirs)[:20]}, and this code reads "
                f"format {FORMAT} only"
                + (" (format 3 and earlier stored the findings as a pickle, which is never "
                   "read)" if isinstance(theirs, int) and not isinstance(theirs, bool)
                   and theirs < FORMAT else "")
                + "; resume it with the code that wrote it, or start afresh in a new directory")
        error = jsonschema.exceptions.best_match(
            jsonschema.Draft202012Validator(SCHEMA).iter_errors(meta))
        if error is not None:
            where = "/".join(str(p) for p in error.absolute_path) or "the document"
            raise CheckpointError(f"checkpoint {path}: {where}: {schema_message(error)}")
        if meta["check"] != _meta_check(meta):
            raise CheckpointError(f"checkpoint {path}: edited or damaged (its checksum differs "
                                  "from its content)")
        logs, starts = meta["logs"], meta["starts"]
        frontier = logs.get(f"frontier-{meta['level']}.i64", [0, 0])[0] // 8
        wrong = ("the level starts are not ascending from 0"
                 if starts[0] != 0 or any(b < a for a, b in zip(starts, starts[1:])) else
                 "parents and fingerprints differ in length"
                 if logs["parents.i64"][0] != logs["fingerprints.u64"][0] else
                 "the level under way has no start" if meta["level"] >= len(starts) else
                 f"rows {meta['rows']} past the level's {frontier} frontier states"
                 if meta["rows"] > frontier else None)
        if wrong:
            raise CheckpointError(f"checkpoint {path}: {wrong}")
        return meta

    # -- writing ------------------------------------------------------------------------------

    def start_logs(self) -> None:
        """Open the logs for appending, each cut back to the length the checkpoint gives (what a
        process wrote after its last save is dropped; a new checkpoint starts them empty), and
        remove the checkpoint's files no save describes."""
        logs = self.meta["logs"] if self.meta else {}
        kept = set(logs) | ({self.meta["findings"][0], self.meta["tags"][0]}
                            if self.meta else set())
        try:
            for p in self.directory.iterdir():  # what no save describes: a stopped process's
                if p.name not in (META, _LOCK) and _OWN.fullmatch(p.name) and p.name not in kept:
                    p.unlink()
            for name in (_PARENTS, _FINGERPRINTS, *logs):
                if name in self._logs:
                    continue
                path = self._path(name)
                length, crc = logs.get(name, (0, 0))
                handle = _open_own(path, _APPEND, "ab")
                self._logs[name] = handle
                os.ftruncate(handle.fileno(), length)  # (its first length bytes are checked
                # at open)
                self._lengths[name], self._crcs[name] = length, crc
        except OSError as exc:
            raise CheckpointError(f"checkpoint {exc.filename or self.directory}: cannot write "
                                  f"({exc.strerror or exc}); "
                                  + what_stands(self.meta is not None)) from None

    def _append(self, name: str, values: np.ndarray) -> None:
        data = np.ascontiguousarray(values).tobytes()
        try:
            handle = self._logs.get(name)
            if handle is None:
                handle = self._logs[name] = _open_own(self._path(name), _APPEND, "ab")
                self._lengths[name], self._crcs[name] = 0, 0
            handle.write(data)
        except OSError as exc:
            raise CheckpointError(f"checkpoint {self._path(name)}: cannot write "
                                  f"({exc.strerror or exc}); "
                                  + what_stands(self.meta is not None)) from None
        self._lengths[name] += len(data)
        self._crcs[name] = zlib.crc32(data, self._crcs[name])

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
        :func:`properties.search.bfs.search`). Raises CheckpointError when the disk refuses."""
        where = self.directory
        try:
            document = json.dumps(findings_to_json(findings), separators=(",", ":")).encode()
        except TypeError as exc:  # (a system's finding of a kind no checkpoint stores)
            raise CheckpointError(f"checkpoint {where}: cannot save the findings ({exc}); "
                                  + what_stands(self.meta is not None)) from None
        try:
            for name, handle in self._logs.items():
                where = self._path(name)
                handle.flush()
                os.fsync(handle.fileno())
            seq = (self.meta or {}).get("save", 0) + 1
            written = []
            for name, data in ((f"findings-{seq}.json", document),
                               (f"tags-{seq}.u64",
                                np.ascontiguousarray(tags, dtype=np.uint64).tobytes())):
                where = self._path(name)
                with _open_own(where, _WRITE, "wb") as fh:
                    fh.truncate(0)
                    fh.write(data)
                    fh.flush()
                    os.fsync(fh.fileno())
                written.append([name, len(data), zlib.crc32(data)])
            prior = (self.meta or {}).get("peakBytes", 0)
            meta = {"format": FORMAT, "identity": self.identity, "code": self.digest,
                    "save": seq, "findings": written[0], "tags": written[1],
                    "logs": {name: [self._lengths[name], self._crcs[name]]
                             for name in sorted(self._lengths)},
                    **state, "peakBytes": max(prior, _peak_bytes())}
            meta["check"] = _meta_check(meta)
            aside = where = self._path(META + ".new")
            with _open_own(aside, _WRITE, "wb") as fh:
                fh.truncate(0)
                fh.write((json.dumps(meta, indent=1) + "\n").encode())
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(aside, self._path(META))
        except OSError as exc:
            raise CheckpointError(f"checkpoint {exc.filename or where}: cannot save "
                                  f"({exc.strerror or exc}); "
                                  + what_stands(self.meta is not None)) from None
        old = self.meta
        self.meta = meta
        self._last_save = time.monotonic()
        if old is not None and old["save"] != seq:
            for name in (old["findings"][0], old["tags"][0]):
                try:
                    self._path(name).unlink()
                except OSError:
                    pass

    def close(self) -> None:
        """Close the logs (what was appended since the last save is left on disk, and cut back
        by the next process to resume) and give up the directory's lock. Raises
        CheckpointError when a log's last write fails (the last save stands, if there is one)."""
        failed = None
        for name, handle in self._logs.items():
            try:
                handle.close()  # (flushes what was appended since the last save)
            except OSError as exc:
                failed = failed or (name, exc)
        self._logs.clear()
        if self._lock is not None:
            self._lock.close()  # (the lock goes with the descriptor)
            self._lock = None
        if failed is not None:
            raise CheckpointError(f"checkpoint {self._path(failed[0])}: cannot write "
                                  f"({failed[1].strerror or failed[1]}); "
                                  + what_stands(self.meta is not None))

    # -- reading ------------------------------------------------------------------------------

    def array(self, name: str, dtype) -> np.ndarray:
        """The saved part of a log as a read-only memory map (an empty array for an empty
        log): for reading parts of it."""
        n = self.meta["logs"].get(name, (0, 0))[0] // 8
        if n == 0:
            return np.zeros(0, dtype)
        with _open_own(self._path(name), os.O_RDONLY, "rb") as fh:
            return np.memmap(fh, dtype=dtype, mode="r", shape=(n,))  # (the map keeps its own
            # descriptor)

    def read(self, name: str, dtype, lo: int = 0, hi: Optional[int] = None) -> np.ndarray:
        """Members ``lo`` to ``hi`` (None: the end) of the saved part of a log, read into
        memory (no file pages are mapped, so none count in the process's resident memory)."""
        n = self.meta["logs"].get(name, (0, 0))[0] // 8
        hi = n if hi is None else min(hi, n)
        if hi <= lo:
            return np.zeros(0, dtype)
        with _open_own(self._path(name), os.O_RDONLY, "rb") as fh:
            fh.seek(8 * lo)
            return np.fromfile(fh, dtype=dtype, count=hi - lo)

    def parents(self) -> np.ndarray:
        return self.array(_PARENTS, np.int64)

    def fingerprints(self) -> np.ndarray:
        return self.array(_FINGERPRINTS, np.uint64)

    def _saved(self, which: str) -> bytes:
        """The bytes of the findings or tags file, checked against their length and CRC-32."""
        name, length, crc = self.meta[which]
        path = self._path(name)
        try:
            with _open_own(path, os.O_RDONLY, "rb") as fh:  # (read no further than its length)
                data = fh.read(length + 1)
        except OSError as exc:
            raise CheckpointError(f"checkpoint {path}: unreadable ({exc.strerror})") from None
        if len(data) != length or zlib.crc32(data) != crc:
            raise CheckpointError(f"checkpoint {path}: damaged (its length or CRC-32 differs "
                                  f"from what {META} gives)")
        return data

    def findings(self) -> dict:
        """The merged findings (:func:`findings_from_json` of the findings file: data, never
        code). Raises CheckpointError naming the file when it is damaged, too large
        (:data:`MAX_FINDINGS_BYTES`), not JSON or not as :data:`FINDINGS_SCHEMA` says."""
        path = self._path(self.meta["findings"][0])
        if self.meta["findings"][1] > MAX_FINDINGS_BYTES:
            raise CheckpointError(f"checkpoint {path}: larger than the {MAX_FINDINGS_BYTES:,} "
                                  "bytes a findings file may take; refused")
        data = self._saved("findings")
        try:
            return findings_from_json(loads_json(data.decode("utf-8")))
        except ValueError as exc:  # (not UTF-8, not JSON, not as the schema says)
            raise CheckpointError(f"checkpoint {path}: not a findings file of format {FORMAT} "
                                  f"({_one_line(exc)})") from None

    def tags(self) -> np.ndarray:
        return np.frombuffer(self._saved("tags"), dtype=np.uint64).copy()


_SAFE = os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
"""Flags of every open of a checkpoint's own file: never through a symbolic link, never blocked
on a named pipe."""
_APPEND = os.O_WRONLY | os.O_APPEND | os.O_CREAT
_WRITE = os.O_WRONLY | os.O_CREAT  # (cut to 0 once checked: an O_TRUNC would cut what it opens)


def _odd(mode: int, links: int = 1) -> Optional[str]:
    """What a file that is not a plain regular file of one name is, in words (None for one
    that is): a symbolic link, a named pipe, a device, a socket, a directory, or a regular
    file with other names (a hard link, which a write would change under its other name)."""
    for test, word in ((stat.S_ISLNK, "a symbolic link"), (stat.S_ISFIFO, "a named pipe"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a directory")):
        if test(mode):
            return word
    if not stat.S_ISREG(mode):
        return "not a regular file"
    return "a file with other names (a hard link)" if links > 1 else None


def _refused(path, word: str) -> CheckpointError:
    """The error for a checkpoint's own file that is ``word`` (:func:`_odd`)."""
    return CheckpointError(f"checkpoint {path}: {word}; refused, as a checkpoint's own files "
                           "are regular files of one name (never followed, read or written)")


def _open_own(path, flags: int, mode: str):
    """One of the checkpoint's own files opened (``flags``: ``os.O_*``; ``mode``: the file
    object's, e.g. ``"rb"``, ``"ab"``) without following a symbolic link or blocking on a
    pipe, and checked, once open, to be a regular file of one name. Raises CheckpointError
    for any other kind of file in its place (:func:`_refused`), OSError when the open
    fails otherwise."""
    try:
        fd = os.open(path, flags | _SAFE, 0o666)
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # O_NOFOLLOW: a symbolic link in the file's place
            raise _refused(path, "a symbolic link") from None
        if exc.errno == errno.ENXIO:  # O_NONBLOCK: a pipe with no reader, or a device
            raise _refused(path, "a named pipe or a device") from None
        raise
    try:
        info = os.fstat(fd)
        word = _odd(info.st_mode, info.st_nlink if flags & os.O_WRONLY else 1)
        if word is not None:
            raise _refused(path, word)
        return os.fdopen(fd, mode)
    except BaseException:
        os.close(fd)
        raise


def _read_own(path, limit: int) -> bytes:
    """The whole of one of the checkpoint's own files (:func:`_open_own`), refused past
    ``limit`` bytes. Raises CheckpointError for a file too large or of another kind, OSError
    when it cannot be read."""
    with _open_own(path, os.O_RDONLY, "rb") as fh:
        size = os.fstat(fh.fileno()).st_size
        data = fh.read(limit + 1) if size <= limit else b""
    if size > limit or len(data) > limit:
        raise CheckpointError(f"checkpoint {path}: larger than the {limit:,} bytes a "
                              "checkpoint's file of its kind may take; refused")
    return data


def what_stands(saved: bool) -> str:
    """What a search that failed leaves in its checkpoint to take up (``saved``: whether a save
    was made, i.e. whether :data:`META` is there), for the end of an error line."""
    return "the last save stands, and the same command takes the search up from there" \
        if saved else "nothing was saved yet, and the next run starts afresh"


def _one_line(exc: Exception) -> str:
    """An error's text on one line, at most 200 characters."""
    text = " ".join(str(exc).split())
    return text if len(text) <= 200 else text[:199] + "…"


def _meta_check(meta: dict) -> int:
    """The CRC-32 of a description's canonical JSON without its ``check`` member."""
    rest = {k: v for k, v in meta.items() if k != "check"}
    return zlib.crc32(json.dumps(rest, sort_keys=True, separators=(",", ":")).encode())


def _crc(path: Path, length: int) -> int:
    """The CRC-32 of the first ``length`` bytes of ``path``, read 16 MiB at a time."""
    crc = 0
    with _open_own(path, os.O_RDONLY, "rb") as fh:
        while length > 0:
            data = fh.read(min(length, 1 << 24))
            if not data:
                break
            crc = zlib.crc32(data, crc)
            length -= len(data)
    return crc


def rebuilt(system, parents: np.ndarray, starts: list, targets: np.ndarray,
            fingerprints: Optional[np.ndarray] = None, room: Optional[Callable] = None,
            block: int = 1 << 16) -> Iterator[tuple]:
    """The nodes ``targets`` (int64 node ids, ascending, no repeats) of ``system``, rebuilt by
    re-executing their event chains from the root (:meth:`TransitionSystem.child`), level by
    level, each ancestor once; yields ``(ids, rows)`` blocks of at most ``block`` targets in
    ascending order of id (``ids``: int64; ``rows``: a fresh int64 array of shape
    ``(len(ids), width)``), so that a caller can spill them as they come.

    What is held at once: the ancestors of the deepest targets' level (a level's nodes that a
    target descends from, as one array: they are stepped from) and one block of that deepest
    level's nodes; a resume inside level ``L`` of a search whose next level is kept has its
    targets on two levels, ``L``'s remaining nodes and ``L + 1``'s found so far, and the
    latter, however many, are made and yielded block by block (issue 21: the frontier spills
    past its limit, resumed or not).

    Args:
        parents: every node's parent entry (int64, by id; :func:`~properties.search.store.pack_key`).
        starts: the first node id of each depth (``starts[0] == 0``, the root).
        fingerprints: every node's saved fingerprint (uint64, by id), to compare with the
            rebuilt nodes' (None: not compared).
        room: called as ``room(pending)`` every ``block`` steps, with the parent rows still to
            step from (:meth:`EngineAdapter.make_room`), so that the system's caches keep
            to their budget.
        block: the most targets a yielded block holds (at least 1).

    Raises:
        CheckpointError: a rebuilt node's fingerprint differs from the saved one (the
            checkpoint was written by a system that steps otherwise).
    """
    width = system.width
    targets = np.asarray(targets, dtype=np.int64)
    if not len(targets):
        return
    bounds = np.asarray(starts, dtype=np.int64)
    level_of = np.searchsorted(bounds, targets, side="right") - 1
    top = int(level_of.max())
    need: dict = {}
    carry = np.zeros(0, np.int64)
    for level in range(top, 0, -1):
        ids = np.union1d(targets[level_of == level], carry)
        need[level] = ids
        carry = np.unique(np.asarray(parents[ids]) >> np.int64(_KEY_LOW))
    ids_prev = np.zeros(1, np.int64)
    rows_prev = np.array([system.root()], dtype=np.int64)
    if targets[0] == 0:  # the root
        yield targets[:1], rows_prev.copy()
    for level in range(1, top + 1):
        ids = need[level]
        rows = np.empty((len(ids), width), np.int64) if level < top else None
        mine = targets[level_of == level]
        for lo in range(0, len(ids), block):
            part = ids[lo:lo + block]
            made = _stepped(system, parents, ids_prev, rows_prev, part, level, room)
            if fingerprints is not None:
                _compare(system, made, part, np.asarray(fingerprints[part]), level)
            if rows is not None:
                rows[lo:lo + len(part)] = made
            else:  # the deepest level: every node of it is a target
                yield part, made
        if rows is not None and len(mine):
            at = np.searchsorted(ids, mine)
            for lo in range(0, len(mine), block):
                yield mine[lo:lo + block], rows[at[lo:lo + block]]
        ids_prev, rows_prev = ids, rows


def _stepped(system, parents: np.ndarray, ids_prev: np.ndarray, rows_prev: np.ndarray,
             ids: np.ndarray, level: int, room: Optional[Callable]) -> np.ndarray:
    """The nodes ``ids`` (all at depth ``level``), each made by one step from its parent's row
    in ``rows_prev`` (the rows of the nodes ``ids_prev`` of depth ``level - 1``): an int64
    array of shape ``(len(ids), width)``."""
    keys = np.asarray(parents[ids])
    at = np.searchsorted(ids_prev, keys >> np.int64(_KEY_LOW))
    moves = (keys >> np.int64(KEY_LEAF_BITS)) & ((1 << KEY_MOVE_BITS) - 1)
    leaves = keys & ((1 << KEY_LEAF_BITS) - 1)
    if room is not None:
        first = int(at[0])
        room(lambda: iter((rows_prev[first:],)))
    flat = array("q")  # the block's rows; its parents as Python ints, a block at a time (a
    # level's in one list would take some 200 bytes a node)
    child = system.child
    for parent, m, f in zip(rows_prev[at].tolist(), moves.tolist(), leaves.tolist()):
        flat.extend(child(tuple(parent), m, f, level - 1)[1])
    return np.frombuffer(flat, dtype=np.int64).reshape(-1, system.width)


def _compare(system, rows: np.ndarray, ids: np.ndarray, saved: np.ndarray, level: int) -> None:
    """Raise CheckpointError unless the rebuilt ``rows`` (nodes ``ids`` at depth ``level``)
    have the ``saved`` fingerprints."""
    wrong = np.flatnonzero(system.fingerprints(rows) != saved)
    if len(wrong):
        raise CheckpointError(
            f"node {int(ids[wrong[0]])} (depth {level}) rebuilt from the checkpoint has "
            "another fingerprint than the one saved: the checkpoint is damaged, or was written "
            "by a search that steps otherwise")


def rebuild(system, parents: np.ndarray, starts: list, targets: np.ndarray,
            fingerprints: Optional[np.ndarray] = None,
            room: Optional[Callable] = None) -> np.ndarray:
    """The nodes ``targets`` of ``system`` rebuilt, as one int64 array of shape
    ``(len(targets), width)`` in the order of ``targets``: :func:`rebuilt`'s blocks joined
    (arguments and errors as there)."""
    blocks = [rows for _, rows in rebuilt(system, parents, starts, targets, fingerprints, room)]
    return np.concatenate(blocks) if blocks else np.zeros((0, system.width), np.int64)
