"""Compact storage for the breadth-first driver (:mod:`properties.search.bfs`).

What the driver keeps for every distinct node is 16 bytes: its *fingerprint* in the visited set
(:class:`FingerprintSet`, 8 bytes) and its *parent entry* (:class:`BlockArray`, 8 bytes: the
parent's node id, the move taken and the leaf of the fork, packed by :func:`pack_key`; past a
memory limit, in a memory-mapped spill file). A node's
full value is held only while it is in the frontier (:class:`Frontier`, ``width`` int64 columns
per node, spilled to ``.npy`` files in a temporary directory past a memory limit); any other
node is rebuilt by re-executing the event chain its parent entries spell out.

Fingerprints. A node is a tuple of components (for the all-readings sweep: producer belief,
consumer state, producer readings, class of readings). Each component value is fingerprinted
once, when first seen, as the first 8 bytes of BLAKE2b over its canonical text
(:func:`canonical`: frozensets sorted, dataclasses by field, so the same value gives the same
fingerprint in every process whatever its hash seed); a node's fingerprint mixes its
components' (:func:`mix`: an odd-multiplier sum then the SplitMix64 finaliser), 64 bits. Two
distinct nodes share a fingerprint with probability about ``n**2 / 2**65`` for ``n`` nodes
(:func:`collision_probability`); a collision would drop the second node silently, as TLC's
fingerprint set would.
"""
from __future__ import annotations

import dataclasses
import hashlib
import os
import shutil
import sys
import tempfile
from typing import Iterator, Optional

import numpy as np

__all__ = ["canonical", "component_fingerprint", "Interned", "mix", "collision_probability",
           "pack_key",
           "unpack_key", "FingerprintSet", "BlockArray", "Frontier", "FINGERPRINT",
           "KEY_MOVE_BITS", "KEY_LEAF_BITS"]

FINGERPRINT = "BLAKE2b-64 per component, mixed by SplitMix64 (64 bits)"
"""How a node's fingerprint is made (printed with the collision probability)."""

KEY_MOVE_BITS = 16
KEY_LEAF_BITS = 12
_KEY_LOW = KEY_MOVE_BITS + KEY_LEAF_BITS
_MAX_PARENT = (1 << (63 - _KEY_LOW)) - 1


def pack_key(parent: int, move: int, leaf: int) -> int:
    """The parent entry of a node, one int64: ``parent`` id (35 bits), ``move`` index among the
    parent's moves (16 bits) and ``leaf`` index in that move's fork (12 bits). Ordered as the
    sequential search discovers nodes: by parent, then move, then leaf. Raises ValueError when
    a field does not fit."""
    if not (0 <= move < (1 << KEY_MOVE_BITS) and 0 <= leaf < (1 << KEY_LEAF_BITS)
            and 0 <= parent <= _MAX_PARENT):
        raise ValueError(f"parent entry out of range: parent {parent}, move {move}, leaf {leaf}")
    return (parent << _KEY_LOW) | (move << KEY_LEAF_BITS) | leaf


def unpack_key(key: int) -> tuple[int, int, int]:
    """``(parent, move, leaf)`` of a parent entry (see :func:`pack_key`)."""
    return key >> _KEY_LOW, (key >> KEY_LEAF_BITS) & ((1 << KEY_MOVE_BITS) - 1), \
        key & ((1 << KEY_LEAF_BITS) - 1)


def canonical(value) -> str:
    """A text that two equal values share in every process: scalars by ``repr``, tuples and
    lists in order, sets and frozensets sorted by their members' texts, dicts by sorted items,
    dataclass instances by class name and compared fields. Raises TypeError for anything
    else (an unknown type has no canonical text)."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return repr(value)
    if isinstance(value, (tuple, list)):
        return "(" + ",".join(canonical(v) for v in value) + ")"
    if isinstance(value, (frozenset, set)):
        return "{" + ",".join(sorted(canonical(v) for v in value)) + "}"
    if isinstance(value, dict):
        return "<" + ",".join(sorted(f"{canonical(k)}:{canonical(v)}"
                                     for k, v in value.items())) + ">"
    hit = _TEXTS.get(id(value))
    if hit is not None and hit[0] is value:
        return hit[1]
    found = _COMPARED.get(type(value))
    if found is None and dataclasses.is_dataclass(value) and not isinstance(value, type):
        found = _COMPARED[type(value)] = (
            tuple(f.name for f in dataclasses.fields(value) if f.compare),
            type(value).__dataclass_params__.frozen)
    if found is not None:
        names, frozen = found
        text = type(value).__name__ + "(" + ",".join(
            canonical(getattr(value, name)) for name in names) + ")"
        if frozen:
            if len(_TEXTS) >= _TEXTS_MAX:
                _TEXTS.clear()
            _TEXTS[id(value)] = (value, text)
        return text
    raise TypeError(f"no canonical text for {type(value).__name__}")


_COMPARED: dict = {}
"""Per dataclass type, the names of its compared fields, in order, and whether it is frozen
(:func:`canonical`)."""

_TEXTS: dict = {}
"""The canonical texts of the frozen dataclass values met last, by identity (``id -> (value,
text)``; an entry holds its value, so that its id is not reused while it stands): a new
consumer state holds mostly the message objects of the state it came from, and its text is
made of theirs. A frozen value's text never changes."""

_TEXTS_MAX = 1 << 14
"""Entries of :data:`_TEXTS` before it is emptied (a bound on the values it keeps alive)."""


def component_fingerprint(value) -> int:
    """The 64-bit fingerprint of a component value: BLAKE2b (8-byte digest) of
    :func:`canonical`, as an unsigned int. The same in every process."""
    digest = hashlib.blake2b(canonical(value).encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "little")


_MULTIPLIERS = np.array([0x9E3779B97F4A7C15, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9,
                         0xD6E8FEB86659FD93, 0xFF51AFD7ED558CCD, 0xC4CEB9FE1A85EC53],
                        dtype=np.uint64)


class Interned:
    """Values numbered in order of first appearance (the interning every transition system of
    the driver keys its nodes by): ``number(v)`` gives v's int, ``values[i]``
    the value. The systems key their maps by these ints, so that a hot-loop lookup hashes a
    tuple of small ints rather than beliefs, states and events; ``fingerprints()`` gives each
    value's 64-bit fingerprint (:func:`component_fingerprint`, computed
    once per value, on first need) as a uint64 array indexed by number."""

    def __init__(self, first=()):
        self.values: list = []
        self.ids: dict = {}
        self._fps = np.zeros(0, dtype=np.uint64)
        for value in first:
            self.number(value)

    def number(self, value) -> int:
        i = self.ids.get(value)
        if i is None:
            i = self.ids[value] = len(self.values)
            self.values.append(value)
        return i

    def fingerprints(self) -> np.ndarray:
        done = len(self._fps)
        if done < len(self.values):
            more = np.array([component_fingerprint(v) for v in self.values[done:]],
                            dtype=np.uint64)
            self._fps = np.concatenate((self._fps, more))
        return self._fps


def mix(columns: list) -> np.ndarray:
    """A node fingerprint per row from its components' fingerprints: ``columns`` is a list of
    equal-length uint64 arrays (at most 6), one per component; returns a uint64 array. Each
    component is multiplied by its own odd constant, the products summed (mod 2**64), then
    SplitMix64's finaliser spreads every bit."""
    if not 1 <= len(columns) <= len(_MULTIPLIERS):
        raise ValueError(f"mix takes 1 to {len(_MULTIPLIERS)} columns, not {len(columns)}")
    with np.errstate(over="ignore"):
        h = np.zeros(len(columns[0]), dtype=np.uint64)
        for column, k in zip(columns, _MULTIPLIERS):
            h += np.asarray(column, dtype=np.uint64) * k
        h ^= h >> np.uint64(30)
        h *= np.uint64(0xBF58476D1CE4E5B9)
        h ^= h >> np.uint64(27)
        h *= np.uint64(0x94D049BB133111EB)
        h ^= h >> np.uint64(31)
    return h


def collision_probability(states: int, bits: int = 64) -> float:
    """The probability that two of ``states`` distinct nodes share a ``bits``-bit fingerprint,
    for fingerprints spread uniformly (``1 - exp(-n(n-1)/2**(bits+1))``, about ``n**2/2**65``
    for 64 bits)."""
    import math
    return -math.expm1(-states * (states - 1) / 2.0 ** (bits + 1)) + 0.0  # never -0.0


def first_new(visited: "FingerprintSet", fps: np.ndarray) -> np.ndarray:
    """The ascending positions in ``fps`` (uint64, in discovery order) of the first of each
    fingerprint not yet in ``visited``; adds those fingerprints to it (the BFS's deduplication
    of a batch of successors)."""
    unique, first = np.unique(fps, return_index=True)
    return np.sort(first[visited.add(unique)])


class FingerprintSet:
    """The visited set: 64-bit fingerprints in sorted runs (disjoint uint64 arrays, sizes
    falling geometrically, so at most about log2(n) runs), 8 bytes per member.

    :meth:`add` returns which of a batch's fingerprints were new and adds them, merging runs in
    place: a merge of runs of ``n`` and ``m`` members grows the older run's buffer to ``n + m``
    (``realloc``: no copy for large buffers on Linux) and merges backwards into it, block by
    block, so that it needs the two runs plus ``2 * MERGE_BLOCK`` members of temporaries, not
    three copies. :meth:`with_added` does the same without changing this set (its runs are then
    shared, never written: a merge writes a new array, ``2 * (n + m)`` members at its peak),
    for engines that pass the set from task to task.

    Lookups: a run of at least :attr:`INDEX_FROM` members also has a bucket index
    (:func:`_bucket_index`: where each value of its top bits starts, one int64 per 16
    members, half a byte per member), so that a lookup reads one bucket of some 16 members,
    a cache line or two, instead of binary-searching the whole run (some 25 dependent reads
    at a billion members, most of them cache and TLB misses). Fingerprints are spread
    uniformly, so the buckets are even (at most a few dozen members at 2**30).

    Attributes:
        runs: the sorted runs, largest first (a tuple of uint64 arrays).
        indexes: per run, its bucket index ``(shift, starts)`` or None (a small run).
        peak_nbytes: the most bytes the runs, their indexes and a merge's new buffer held at
            once.
    """

    MERGE_BLOCK = 1 << 20
    """Members merged per block (each block's temporaries are a few times this, in bytes x 8)."""

    INDEX_FROM = 1 << 20
    """Members from which a run is given a bucket index (smaller runs fit the caches)."""

    def __init__(self, runs: tuple = (), indexes: Optional[tuple] = None):
        self.runs: tuple = tuple(runs)
        self.indexes: tuple = tuple(indexes) if indexes is not None else \
            tuple(_bucket_index(r) if len(r) >= self.INDEX_FROM else None for r in self.runs)
        self._owned: list = [False] * len(self.runs)  # whether a run may be grown in place
        self.peak_nbytes = self.nbytes

    @classmethod
    def of(cls, members: np.ndarray) -> "FingerprintSet":
        """A set of ``members`` (uint64, no repeats; this array is taken over and sorted in
        place, and later merges may grow it in place), as one run."""
        members.sort()
        out = cls((members,) if len(members) else ())
        out._owned = [True] * len(out.runs)
        return out

    def __len__(self) -> int:
        return sum(len(r) for r in self.runs)

    @property
    def nbytes(self) -> int:
        """Bytes of the runs and their bucket indexes."""
        return sum(r.nbytes for r in self.runs) + \
            sum(ix[1].nbytes for ix in self.indexes if ix is not None)

    def contains(self, fps: np.ndarray) -> np.ndarray:
        """A bool array: which of ``fps`` (uint64) are members."""
        found = np.zeros(len(fps), dtype=bool)
        step = self.MERGE_BLOCK
        for run, index in zip(self.runs, self.indexes):
            if len(run) == 0:
                continue
            for lo in range(0, len(fps), step):  # temporaries of one block at a time
                part = fps[lo:lo + step]
                if index is None:
                    at = np.searchsorted(run, part)
                    np.minimum(at, len(run) - 1, out=at)
                else:
                    at = _bucket_search(run, index, part)
                found[lo:lo + step] |= run[at] == part
        return found

    def with_added(self, fps: np.ndarray) -> tuple["FingerprintSet", np.ndarray]:
        """``(set with the new ones added, bool mask of the new ones)`` for ``fps``, a uint64
        array without repeats. This set is left as it is (its runs are shared with the new
        set and never written again)."""
        new = ~self.contains(fps)
        self._owned = [False] * len(self.runs)
        out = FingerprintSet(self.runs, self.indexes)
        out.peak_nbytes = self.peak_nbytes
        out._insert(fps[new])
        return out, new

    def add(self, fps: np.ndarray) -> np.ndarray:
        """The bool mask of the new ones among ``fps`` (uint64, no repeats); adds them."""
        new = ~self.contains(fps)
        self._insert(fps[new])
        return new

    def _insert(self, added: np.ndarray) -> None:
        """Add ``added`` (uint64, new members, no repeats; this array is taken over and sorted
        in place) as a run, merging the last runs while the last is at least half the one
        before it; the run that results is indexed anew (:func:`_bucket_index`)."""
        if not len(added):
            return
        added.sort()
        runs, owned, indexes = list(self.runs), list(self._owned), list(self.indexes)
        runs.append(added)
        owned.append(True)
        indexes.append(None)
        self.runs, self._owned, self.indexes = (), [], ()  # the lists alone hold the runs
        while len(runs) > 1 and len(runs[-1]) * 2 >= len(runs[-2]):
            last, into = runs.pop(), runs.pop()
            owned.pop()
            del indexes[-2:]  # both are merged into one run, indexed below
            size = len(into) + len(last)
            others = sum(r.nbytes for r in runs) + \
                sum(ix[1].nbytes for ix in indexes if ix is not None)
            if owned.pop() and into.flags.owndata and sys.getrefcount(into) <= 2:  # no other name
                into.resize(size, refcheck=False)  # (refcheck would count this frame's names)
                self.peak_nbytes = max(self.peak_nbytes, others + into.nbytes + last.nbytes)
                _merge_backwards(into, size - len(last), last)
            else:
                merged = np.empty(size, dtype=np.uint64)
                self.peak_nbytes = max(self.peak_nbytes, others + into.nbytes + last.nbytes
                                       + merged.nbytes)
                merged[:len(into)] = into
                del into
                _merge_backwards(merged, size - len(last), last)
                into = merged
            del last
            runs.append(into)
            owned.append(True)
            indexes.append(None)
        last = runs[-1]
        if len(last) >= self.INDEX_FROM:
            indexes[-1] = _bucket_index(last)
        self.runs, self._owned, self.indexes = tuple(runs), owned, tuple(indexes)
        self.peak_nbytes = max(self.peak_nbytes, self.nbytes)


def _bucket_index(run: np.ndarray) -> tuple:
    """A sorted run's bucket index ``(shift, starts)``: the top ``64 - shift`` bits of a
    member number its bucket (some 16 members a bucket), and ``starts[b]`` (int64, one more
    than the buckets) is the position of bucket ``b``'s first member, ``starts[b + 1]`` the
    end (:func:`_bucket_search`)."""
    bits = max((len(run) // 16).bit_length() - 1, 1)
    shift = np.uint64(64 - bits)
    bounds = np.arange(1 << bits, dtype=np.uint64) << shift
    starts = np.empty((1 << bits) + 1, np.int64)
    starts[:-1] = np.searchsorted(run, bounds)  # the bounds ascend: each search starts near
    starts[-1] = len(run)
    return shift, starts


def _bucket_search(run: np.ndarray, index: tuple, query: np.ndarray) -> np.ndarray:
    """The position in ``run`` where each of ``query`` is, or else some position in its bucket
    (clipped to the run): a vectorised bisection within each query's bucket, as many rounds as
    the largest bucket needs (see :func:`_bucket_index`). The caller compares ``run[at]``."""
    shift, starts = index
    bucket = (query >> shift).astype(np.intp)
    lo, hi = starts[bucket], starts[bucket + 1]
    widest = int((hi - lo).max()) if len(query) else 0
    last = len(run) - 1
    for _ in range(widest.bit_length()):
        mid = (lo + hi) >> 1
        below = (mid < hi) & (run[np.minimum(mid, last)] < query)
        lo = np.where(below, mid + 1, lo)
        hi = np.where(below, hi, mid)
    return np.minimum(lo, last)


def _merge_backwards(buf: np.ndarray, n: int, b: np.ndarray) -> None:
    """Merge sorted ``b`` into ``buf``, whose first ``n`` members are sorted and whose length
    is ``n + len(b)``, from the back, :attr:`FingerprintSet.MERGE_BLOCK` members of each side
    at a time (so the temporaries stay small whatever the sizes). ``b`` and ``buf[:n]`` are
    disjoint."""
    step = FingerprintSet.MERGE_BLOCK
    i, j = n, len(b)  # buf[:i] and b[:j] are still to merge; buf[i + j:] is done
    while j > 0:
        b_seg = b[max(j - step, 0):j]
        lo = int(np.searchsorted(buf[:i], b_seg[0]))
        if i - lo > step:  # the b block spans many a members: take the last block of a
            lo = i - step
            b_seg = b[int(np.searchsorted(b[:j], buf[lo])):j]
        a_seg = buf[lo:i].copy()  # its place is about to be written over
        k = len(a_seg) + len(b_seg)
        region = buf[i + j - k:i + j]
        at = np.searchsorted(a_seg, b_seg) + np.arange(len(b_seg))
        rest = np.ones(k, dtype=bool)
        rest[at] = False
        region[at] = b_seg
        region[rest] = a_seg
        i, j = lo, j - len(b_seg)


class BlockArray:
    """A growable int64 sequence in fixed blocks of ``2**BLOCK_BITS`` (2**20: 8 MiB):
    appending never copies what is stored, and nothing is over-allocated beyond the last block.
    Index with ``a[i]``; :meth:`extend` appends an array; :meth:`truncate` drops the tail;
    :meth:`to_numpy` gives a copy of the whole.

    Written once, read rarely (parent entries are read only to rebuild witnesses and nodes):
    past ``memory_limit`` bytes of blocks in memory (None: no limit), every further full block
    is written to a spill file and replaced by a read-only memory map of it, so that the
    operating system keeps in memory only the pages read. The spill file is an anonymous
    temporary file in ``spill_dir`` (default: the system's temporary directory): it has no name
    once made, and its space is freed when the array is dropped or :meth:`close` d.

    Attributes:
        size: members; spilled_blocks: the leading blocks held in the spill file.
    """

    BLOCK_BITS = 20

    def __init__(self, memory_limit: Optional[int] = None, spill_dir: Optional[str] = None):
        self.bits = self.BLOCK_BITS
        self.block = 1 << self.bits
        self.memory_limit, self.spill_dir = memory_limit, spill_dir
        self.blocks: list = []
        self.size = 0
        self.spilled_blocks = 0
        self._file = None

    def __len__(self) -> int:
        return self.size

    @property
    def nbytes(self) -> int:
        """Bytes of the blocks, in memory or spilled."""
        return len(self.blocks) * self.block * 8

    @property
    def spilled_nbytes(self) -> int:
        """Bytes of the blocks held in the spill file (memory-mapped)."""
        return self.spilled_blocks * self.block * 8

    def __getitem__(self, i: int) -> int:
        if not 0 <= i < self.size:
            raise IndexError(i)
        return int(self.blocks[i >> self.bits][i & (self.block - 1)])

    def extend(self, values: np.ndarray) -> None:
        values = np.asarray(values, dtype=np.int64)
        done, block = 0, self.block
        while done < len(values):
            at = self.size & (block - 1)
            if at == 0 and self.size >> self.bits == len(self.blocks):
                self.blocks.append(np.zeros(block, dtype=np.int64))
            take = min(block - at, len(values) - done)
            self.blocks[self.size >> self.bits][at:at + take] = values[done:done + take]
            self.size += take
            done += take
        if self.memory_limit is not None:
            self._spill()

    def _spill(self) -> None:
        """Move full blocks, oldest first, to the spill file while the blocks in memory take
        more than the limit; then map the file once, every spilled block a view of that one
        map (one map and one descriptor however many blocks: a billion entries are a thousand
        blocks)."""
        full, start = self.size >> self.bits, self.spilled_blocks
        while (self.spilled_blocks < full and
               (len(self.blocks) - self.spilled_blocks) * self.block * 8 > self.memory_limit):
            if self._file is None:
                self._file = tempfile.TemporaryFile(prefix="activity-check-blocks-",
                                                    dir=self.spill_dir)
            k = self.spilled_blocks
            self._file.seek(k * self.block * 8)
            self.blocks[k].tofile(self._file)
            self.spilled_blocks += 1
        if self.spilled_blocks > start:
            self._file.flush()
            mapped = np.memmap(self._file, dtype=np.int64, mode="r",
                               shape=(self.spilled_blocks, self.block))
            for k in range(self.spilled_blocks):
                self.blocks[k] = mapped[k]

    def truncate(self, n: int) -> None:
        if n < self.size:
            self.size = n
            del self.blocks[(n + self.block - 1) >> self.bits:]
            self.spilled_blocks = min(self.spilled_blocks, len(self.blocks))
            if n & (self.block - 1) and self.spilled_blocks == len(self.blocks):
                # the last block is appended to again: back in memory, writable
                self.blocks[-1] = np.array(self.blocks[-1])
                self.spilled_blocks -= 1  # (the file keeps it: it is written over if spilled)

    def to_numpy(self) -> np.ndarray:
        out = np.empty(self.size, dtype=np.int64)
        for k, block in enumerate(self.blocks):
            lo = k << self.bits
            out[lo:lo + self.block] = block[:self.size - lo]
        return out

    def close(self) -> None:
        """Drop the blocks and the spill file."""
        self.blocks, self.size, self.spilled_blocks = [], 0, 0
        if self._file is not None:
            self._file.close()
            self._file = None


class Frontier:
    """The nodes of one level waiting to be expanded, as blocks of ``(ids, nodes)``: node ids
    (int64) and their full values (an int64 array of ``width`` columns, one row per node).
    Blocks are kept in memory up to ``memory_limit`` bytes; past it each further block is
    written to an ``.npy`` pair in a temporary directory (made under ``spill_dir``, default the
    system's temporary directory, removed by :meth:`close`) and read back, memory-mapped, when
    iterated. Iteration yields the blocks in the order added."""

    def __init__(self, width: int, memory_limit: int = 2 << 30, spill_dir: Optional[str] = None):
        self.width, self.memory_limit, self.spill_dir = width, memory_limit, spill_dir
        self.blocks: list = []  # (ids, nodes) in memory, or (path of ids, path of nodes)
        self.in_memory = 0
        self.size = 0
        self.spilled = 0
        self._dir: Optional[str] = None

    def __len__(self) -> int:
        return self.size

    def add(self, ids: np.ndarray, nodes: np.ndarray) -> None:
        """Append a block (``ids``: int64, ``nodes``: int64 of shape (len(ids), width))."""
        if not len(ids):
            return
        nbytes = ids.nbytes + nodes.nbytes
        self.size += len(ids)
        if self.in_memory + nbytes <= self.memory_limit:
            self.blocks.append((ids, nodes))
            self.in_memory += nbytes
            return
        if self._dir is None:
            self._dir = tempfile.mkdtemp(prefix="activity-check-frontier-", dir=self.spill_dir)
        stem = os.path.join(self._dir, f"block{len(self.blocks)}")
        np.save(stem + "-ids.npy", ids)
        np.save(stem + "-nodes.npy", nodes)
        self.blocks.append((stem + "-ids.npy", stem + "-nodes.npy"))
        self.spilled += len(ids)

    def __iter__(self) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        return self.blocks_from(0)

    def blocks_from(self, start: int) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """The blocks from the ``start``-th on (0: every block), in the order added (read one
        at a time, so that a block :meth:`release` d meanwhile is not held here). Raises
        ValueError for a block released before it is reached."""
        for i in range(start, len(self.blocks)):
            block = self.blocks[i]
            if block is None:
                raise ValueError(f"frontier block {i} was released")
            ids, nodes = block
            del block
            if isinstance(ids, str):
                yield np.load(ids, mmap_mode="r"), np.load(nodes, mmap_mode="r")
            else:
                yield ids, nodes

    def release(self, i: int) -> None:
        """Drop block ``i`` (expanded: it is never read again), its memory given back or its
        spill files removed; the blocks keep their numbers."""
        block = self.blocks[i]
        if block is None:
            return
        self.blocks[i] = None
        ids, nodes = block
        if isinstance(ids, str):
            for path in (ids, nodes):
                try:
                    os.remove(path)
                except OSError:
                    pass
        else:
            self.in_memory -= ids.nbytes + nodes.nbytes

    def close(self) -> None:
        """Drop the blocks and remove the spill directory, if any."""
        self.blocks = []
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None
