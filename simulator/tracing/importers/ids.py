"""Task IDs resolved near where they are named, so that a trace's IDs never sit in memory whole.

A foreign trace names a task's parent by its text ID, and the parent may come millions
of rows later (akita writes a task when it ends: a kernel after all its wavefronts).
Almost always, though, it comes within a few hundred rows. Tasks therefore pass here in
blocks, in input order. Each ID is hashed, and IDs are matched within a window of
three blocks (the one before, the one being resolved and the one after) through their
sorted hashes, every match confirmed on the text. What the window cannot settle goes to
the loader's scratch database, which holds every ID's hash, indexed once all are in:

* a parent outside the window becomes a *fix-up* (the child's key, the parent's hash
  and ID), resolved there;
* an ID repeated inside the window is settled at once: the repeat is dropped when it
  repeats the earlier row field for field (``dedupe``, for akita's CSV writer), else it
  is an error naming both positions. Repeats further apart are found there too.

Keys (``seq``, from 1 in input order) are given to the rows kept, so they stay dense
when repeats are dropped here. Blocks smaller than ``BLOCK`` rows are joined first, so
the window's reach is the same however a reader cuts its input (a Chrome reader's blocks
end with each megabyte of text: a few thousand slices).
"""
from dataclasses import dataclass, fields

import numpy as np

from .values import TraceFormatError

# Rows the window resolves at once, at least: the window holds about three such blocks of
# Python strings (50k-row blocks made a 1M-task import peak at 135 MiB against 99 MiB,
# for no measurable speed).
BLOCK = 16_384
NO_TIME = np.iinfo(np.int64).min  # an unknown parent start: never a valid relative time
# The 64-bit hash of an ID: Python's own, used only within one process, and every match
# confirmed on the text (tests replace it with one that collides).
HASH = hash


def hashes(texts):
    """``HASH`` of each of ``texts`` (str), as int64."""
    return np.fromiter(map(HASH, texts), dtype=np.int64, count=len(texts))


@dataclass
class Block:
    """Staged tasks in input order, one array (or list) per column.

    ``ext`` and ``parent`` hold text IDs (``parent`` None for no parent); ``src`` the
    input positions (line numbers or position texts); ``track`` the interned track
    (-1 for none); ``details`` JSON texts or None. The window adds the rest.
    """

    ext: np.ndarray
    parent: np.ndarray
    kind: np.ndarray
    location: np.ndarray
    start: np.ndarray
    end: np.ndarray
    flags: np.ndarray
    track: np.ndarray
    details: np.ndarray
    src: np.ndarray
    h = seq = parent_seq = pstart = wanted = by_hash = sorted_h = None

    def __len__(self):
        return len(self.ext)

    def keep(self, mask):
        for name in (*_read_columns(), "h"):
            setattr(self, name, getattr(self, name)[mask])

    @classmethod
    def joined(cls, blocks):
        """One block of the rows of ``blocks`` (as read: nothing added yet), in order."""
        if len(blocks) == 1:
            return blocks[0]
        return cls(*(np.concatenate([getattr(b, name) for b in blocks]) for name in _read_columns()))


def _read_columns():
    """A ``Block``'s columns as read (its dataclass fields; the window adds the rest)."""
    return [f.name for f in fields(Block)]


class IdWindow:
    """Resolves blocks of tasks; each block leaves through ``emit(block, fixups)`` once its
    parents are found or given up (``fixups``: row indexes of the block left to the
    database), one block behind the input.

    ``where(src)`` formats a position for a message.
    """

    def __init__(self, emit, where, dedupe=False):
        self.emit, self.where, self.dedupe = emit, where, dedupe
        self.older = self.pending = None
        self.waiting, self.waiting_rows = [], 0  # blocks not joined yet
        self.next_seq = 1
        self.dropped = 0  # repeats dropped here

    def add(self, block):
        """Take the next block (not empty)."""
        self.waiting.append(block)
        self.waiting_rows += len(block)
        if self.waiting_rows >= BLOCK:
            self._take()

    def _take(self):
        block = Block.joined(self.waiting)
        self.waiting, self.waiting_rows = [], 0
        block.h = hashes(block.ext)
        self._index(block)
        self._drop_repeats(block)
        if not len(block):
            return
        n = len(block)
        block.seq = np.arange(self.next_seq, self.next_seq + n, dtype=np.int64)
        self.next_seq += n
        block.parent_seq = np.full(n, -1, dtype=np.int64)
        block.pstart = np.full(n, NO_TIME, dtype=np.int64)
        block.wanted = np.flatnonzero(np.not_equal(block.parent, None))
        window = [b for b in (self.older, self.pending, block) if b is not None]
        if self.pending is not None:
            self._resolve(self.pending, window)
        self._resolve(block, window)
        self._release()
        self.older, self.pending = self.pending, block

    def close(self):
        """Give up on what the last blocks did not find."""
        if self.waiting:
            self._take()
        self._release()
        self.older = self.pending = None

    def _release(self):
        if self.pending is not None:
            self.emit(self.pending, self.pending.wanted)
            self.pending.wanted = None

    @staticmethod
    def _index(block):
        block.by_hash = np.argsort(block.h, kind="stable")
        block.sorted_h = block.h[block.by_hash]

    @staticmethod
    def _find(texts, keys, block):
        """Row of ``block`` with each text (hash ``keys``, sorted), -1 where there is none."""
        pos = np.searchsorted(block.sorted_h, keys)  # sorted keys: each search starts at the last
        pos[pos >= len(block.sorted_h)] = 0
        rows = block.by_hash[pos]
        hit = block.sorted_h[pos] == keys
        if hit.any():
            idx = np.flatnonzero(hit)
            hit[idx] = block.ext[rows[idx]] == texts[idx]
        return np.where(hit, rows, -1)

    def _resolve(self, block, window):
        """Parents of ``block``'s wanted rows found in ``window``; the rest stay wanted."""
        want = block.wanted
        if want is None or not len(want):
            return
        keys = hashes(block.parent[want])
        order = np.argsort(keys, kind="stable")
        want, keys = want[order], keys[order]
        texts = block.parent[want]
        for other in window:
            rows = self._find(texts, keys, other)
            hit = rows >= 0
            if hit.any():
                block.parent_seq[want[hit]] = other.seq[rows[hit]]
                block.pstart[want[hit]] = other.start[rows[hit]]
                miss = ~hit
                want, texts, keys = want[miss], texts[miss], keys[miss]
                if not len(want):
                    break
        block.wanted = np.sort(want)

    def _drop_repeats(self, block):
        """Rows whose ID already appears in the window (earlier blocks or earlier in this one)."""
        earlier = {}  # repeated row -> (block of the first, its row)
        texts = block.ext[block.by_hash]
        for other in (self.older, self.pending):
            if other is not None:
                rows = self._find(texts, block.sorted_h, other)
                for i in np.flatnonzero(rows >= 0).tolist():
                    earlier.setdefault(int(block.by_hash[i]), (other, int(rows[i])))
        same = np.flatnonzero(block.sorted_h[1:] == block.sorted_h[:-1])
        if len(same):
            for i, first in self._repeats_within(block, same):
                earlier.setdefault(i, (block, first))
        if not earlier:
            return
        drop = np.zeros(len(block), dtype=bool)
        for i in sorted(earlier):
            other, j = earlier[i]
            if self.dedupe and _same_fields(other, j, block, i):
                drop[i] = True
                continue
            again, first = self.where(block.src[i]), self.where(other.src[j])
            if self.dedupe:
                raise TraceFormatError(f"{again}: task ID {block.ext[i]!r} again with different"
                                       f" fields (first at {first})")
            raise TraceFormatError(f"{again}: duplicate task ID {block.ext[i]!r} (first at {first})")
        self.dropped += int(drop.sum())
        block.keep(~drop)
        self._index(block)

    @staticmethod
    def _repeats_within(block, same):
        """(row, first row with the same ID) for repeats inside ``block``; ``same`` are the
        positions in hash order whose successor has an equal hash (a stable order, so
        rows of one hash come in input order)."""
        firsts = {}
        for p in np.unique(np.concatenate([same, same + 1])).tolist():
            row = int(block.by_hash[p])
            first = firsts.setdefault((int(block.sorted_h[p]), block.ext[row]), row)
            if first != row:
                yield row, first


def _same_fields(a, i, b, j):
    """Whether row ``i`` of block ``a`` and row ``j`` of block ``b`` agree field for field."""
    return (a.parent[i] == b.parent[j] and a.kind[i] == b.kind[j] and a.location[i] == b.location[j]
            and a.start[i] == b.start[j] and a.end[i] == b.end[j] and a.details[i] == b.details[j])
