"""Exact interval arithmetic on integer picoseconds, vectorised with numpy.

Every interval is half-open, [start, end), so two intervals that touch share no
instant and an event on an edge counts once (why-layer.md §9, rule R2). A *set* of
intervals is a pair of int64 arrays (starts, ends) kept sorted and disjoint; lengths are
sums of integer differences, never floats.

Many analyses need one union per group (per CU, per wavefront). Rather than loop over
groups in Python, the groups are laid side by side on one axis: group g's window is
shifted by g times (window width + 1), so intervals of different groups can never touch
and one sort-and-sweep serves them all.
"""
from __future__ import annotations

import numpy as np

from .order import grouped_order

EMPTY = np.zeros(0, dtype=np.int64)


def as_int64(values) -> np.ndarray:
    return np.asarray(values, dtype=np.int64).reshape(-1)


def merge(starts: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The union of the intervals as sorted, disjoint (starts, ends); empty ones vanish."""
    starts, ends = as_int64(starts), as_int64(ends)
    keep = ends > starts
    starts, ends = starts[keep], ends[keep]
    # a stable sort: it merges runs already sorted (two sets to unite) in linear time
    order = np.argsort(starts, kind="stable")
    return _disjoint(starts[order], ends[order])


def _disjoint(starts: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The union of non-empty intervals sorted by start, as sorted, disjoint (starts, ends)."""
    if not len(starts):
        return EMPTY, EMPTY
    reach = np.maximum.accumulate(ends)
    # a block begins where an interval starts after everything before it has ended
    first = np.flatnonzero(np.r_[True, starts[1:] > reach[:-1]])
    last = np.r_[first[1:] - 1, len(starts) - 1]
    return starts[first], reach[last]


def clip(starts: np.ndarray, ends: np.ndarray, lo, hi) -> tuple[np.ndarray, np.ndarray]:
    """The intervals cut to [lo, hi) (scalars or one bound per interval); empty ones vanish."""
    starts = np.maximum(as_int64(starts), lo)
    ends = np.minimum(as_int64(ends), hi)
    keep = ends > starts
    return starts[keep], ends[keep]


def length(starts: np.ndarray, ends: np.ndarray) -> int:
    """Total length of the union of the intervals, in ps."""
    s, e = merge(starts, ends)
    return int((e - s).sum())


def complement(starts: np.ndarray, ends: np.ndarray, lo: int, hi: int) -> tuple[np.ndarray, np.ndarray]:
    """[lo, hi) minus the union of the intervals, as sorted disjoint intervals."""
    s, e = merge(*clip(starts, ends, lo, hi))
    gap_starts = np.r_[lo, e].astype(np.int64)
    gap_ends = np.r_[s, hi].astype(np.int64)
    keep = gap_ends > gap_starts
    return gap_starts[keep], gap_ends[keep]


def covered(set_starts: np.ndarray, set_ends: np.ndarray, starts: np.ndarray,
            ends: np.ndarray) -> int:
    """Σ over the intervals [starts, ends) of their overlap with a sorted, disjoint
    interval set, exactly: the set's length up to ``end`` less its length up to ``start``."""
    set_starts, set_ends = as_int64(set_starts), as_int64(set_ends)
    if not len(set_starts):
        return 0
    before = np.r_[0, np.cumsum(set_ends - set_starts)]  # length of the first j intervals

    def upto(t: np.ndarray) -> np.ndarray:
        """The set's length before instant ``t``: the set intervals that start at or
        before ``t`` but the last lie wholly before it; the last one, up to ``t``."""
        j = np.searchsorted(set_starts, t, side="right")
        last = np.maximum(j - 1, 0)
        part = (np.minimum(t, set_ends[last]) - set_starts[last]).clip(min=0)
        return np.where(j > 0, before[last] + part, 0)

    s, e = as_int64(starts), as_int64(ends)
    keep = e > s
    return int((upto(e[keep]) - upto(s[keep])).sum())


def step_count(starts: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """How many intervals are in flight, as a step function: ``count[i]`` holds on
    [times[i], times[i + 1]) (and 0 after the last time). Ends sort before starts at the
    same instant, so an interval ending as another starts is never counted twice."""
    starts, ends = as_int64(starts), as_int64(ends)
    keep = ends > starts
    ends, starts = np.sort(ends[keep]), np.sort(starts[keep])
    # the two sorted runs merged (a stable sort merges runs in linear time), ends first
    events = np.r_[ends, starts]
    order = np.argsort(events, kind="stable")
    times = events[order]
    counts = np.cumsum(np.where(order < len(ends), -1, 1))
    # one step per distinct time: the count after the last event at that time
    last = np.r_[times[1:] != times[:-1], len(times) > 0]
    return times[last[:len(times)]], counts[last[:len(times)]]


class Lanes:
    """Groups laid side by side on one axis, each in its own window [lo_g, hi_g).

    ``lo`` and ``hi`` are one window per group (or one scalar window for all). Intervals
    are clipped to their group's window and shifted onto the shared axis; ``per_group``
    turns shifted interval sets back into one length per group.
    """

    def __init__(self, n_groups: int, lo, hi) -> None:
        self.n = int(n_groups)
        self.lo = np.broadcast_to(as_int64(lo), (self.n,)) if self.n else EMPTY
        self.hi = np.broadcast_to(as_int64(hi), (self.n,)) if self.n else EMPTY
        width = int((self.hi - self.lo).max(initial=0)) + 1
        if self.n * width >= 1 << 62:
            raise OverflowError(f"{self.n} groups of up to {width} ps do not fit one int64 axis")
        self.width = width
        self.offset = np.arange(self.n, dtype=np.int64) * width - self.lo

    def _clipped(self, groups: np.ndarray, starts: np.ndarray, ends: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(groups, starts, ends) of the intervals clipped to their groups' windows,
        the empty ones left out."""
        groups = as_int64(groups)
        s = np.maximum(as_int64(starts), self.lo[groups])
        e = np.minimum(as_int64(ends), self.hi[groups])
        keep = e > s
        return groups[keep], s[keep], e[keep]

    def place(self, groups: np.ndarray, starts: np.ndarray, ends: np.ndarray
              ) -> tuple[np.ndarray, np.ndarray]:
        """The intervals of ``groups`` clipped to their windows, on the shared axis."""
        groups, s, e = self._clipped(groups, starts, ends)
        shift = self.offset[groups]
        return s + shift, e + shift

    def union(self, groups: np.ndarray, starts: np.ndarray, ends: np.ndarray
              ) -> tuple[np.ndarray, np.ndarray]:
        """The union of each group's intervals clipped to its window, on the shared axis:
        sorted and disjoint."""
        groups, s, e = self._clipped(groups, starts, ends)
        # by group, then start: one radix pass over the groups when the starts already
        # ascend, as tasks do in id order (the model creates a task when it starts)
        order = grouped_order(groups, s)
        shift = self.offset[groups[order]]
        return _disjoint(s[order] + shift, e[order] + shift)

    def busy(self, groups: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
        """Length per group of the union of its intervals, clipped to its window."""
        return self.per_group(*self.union(groups, starts, ends))

    def per_group(self, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
        """Length per group of a sorted, disjoint interval set on the shared axis
        (integer sums: a float accumulator would round beyond 2**53 ps)."""
        total = np.r_[0, np.cumsum(as_int64(ends) - as_int64(starts))]
        bounds = np.searchsorted(as_int64(starts), np.arange(self.n + 1, dtype=np.int64) * self.width)
        return total[bounds[1:]] - total[bounds[:-1]]

    def window_lengths(self) -> np.ndarray:
        return (self.hi - self.lo).clip(min=0).astype(np.int64)


def priority_charge(lanes: Lanes, classes: list[tuple[np.ndarray, np.ndarray, np.ndarray]]
                    ) -> np.ndarray:
    """Charge every instant of every group's window to the highest-priority class in
    flight there (MGPUSim's CPI-stack rule), the rest to a last, implicit class.

    ``classes`` lists (groups, starts, ends) from the highest priority down. Returns a
    (len(classes) + 1, n_groups) int64 array; each column sums to its group's window.
    """
    charged = np.zeros((len(classes) + 1, lanes.n), dtype=np.int64)
    covered_s, covered_e = EMPTY, EMPTY
    covered = np.zeros(lanes.n, dtype=np.int64)
    for row, (groups, starts, ends) in enumerate(classes):
        s, e = lanes.union(groups, starts, ends)
        covered_s, covered_e = merge(np.r_[covered_s, s], np.r_[covered_e, e])
        now = lanes.per_group(covered_s, covered_e)
        charged[row] = now - covered
        covered = now
    charged[-1] = lanes.window_lengths() - covered
    return charged


class Overlaps:
    """A fixed list of intervals, asked many times which of them overlap a window.

    Scanning the whole list per window costs its length each time; here the intervals
    are sorted by start and cut into blocks of ``BLOCK``, each keeping its latest end, so
    a window reads only the blocks that start before it ends and reach past its start.
    An interval of any length is found (a long one only keeps its own block in reach).
    """

    BLOCK = 64

    def __init__(self, starts: np.ndarray, ends: np.ndarray) -> None:
        starts, ends = as_int64(starts), as_int64(ends)
        self.order = np.argsort(starts, kind="stable")
        self.starts, self.ends = starts[self.order], ends[self.order]
        firsts = np.arange(0, len(starts), self.BLOCK)
        self.reach = np.maximum.reduceat(self.ends, firsts) if len(starts) else EMPTY

    def __call__(self, t0: int, t1: int) -> np.ndarray:
        """Positions (in the order given) of the intervals with start < t1 and end > t0,
        ascending."""
        before = int(np.searchsorted(self.starts, t1, side="left"))
        blocks = np.flatnonzero(self.reach[:-(-before // self.BLOCK)] > t0)
        if not len(blocks):
            return EMPTY
        at = (blocks[:, None] * self.BLOCK + np.arange(self.BLOCK)).ravel()
        at = at[at < before]
        return np.sort(self.order[at[self.ends[at] > t0]])
