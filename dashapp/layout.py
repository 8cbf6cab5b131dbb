"""Row placement for Gantt bars: Daisen's up-floating layout, with nesting.

Up-floating (Daisen paper §6.2): in order of start time, each task takes the lowest
(top-most) row where it overlaps no task already placed. That uses the fewest rows, so
each bar gets the greatest height, and the number of bars stacked at an x position is
the number of tasks in flight there. Intervals are half-open: a task starting exactly
when another ends may reuse its row.

Nesting: in the Component view, a task whose parent is also drawn (same location, in
the window) is placed inside its parent's band, with the parent's children laid out
up-floating within that band; tasks at the same depth share one height.
"""
import heapq
from dataclasses import dataclass

BAND_FILL = 0.8
"""Fraction of a parent's band that its children use, leaving the parent visible."""


def up_float(starts, ends):
    """Row index of each interval, in the input order; O(n log n)."""
    order = sorted(range(len(starts)), key=lambda i: (starts[i], -ends[i], i))
    rows = [0] * len(starts)
    busy = []  # (end, row) of the last task placed in each occupied row
    free = []  # rows whose last task has ended, smallest first
    count = 0
    for i in order:
        while busy and busy[0][0] <= starts[i]:
            heapq.heappush(free, heapq.heappop(busy)[1])
        if free:
            row = heapq.heappop(free)
        else:
            row, count = count, count + 1
        rows[i] = row
        heapq.heappush(busy, (ends[i], row))
    return rows


def row_count(rows):
    return max(rows) + 1 if rows else 0


@dataclass(frozen=True)
class Placement:
    """Where one bar goes: vertical extent [y0, y1) in rows of the canvas, and depth."""
    y0: float
    y1: float
    depth: int


def nested_layout(keys, parents, starts, ends):
    """Placements for tasks forming a forest by ``parents`` (a key not drawn is a root).

    Roots are laid out up-floating over rows of height 1 (the canvas spans
    ``[0, number of root rows)``); the children of a task share its band, shrunk by
    ``BAND_FILL`` and split into up-floating rows. Returns {key: Placement}.
    """
    index = {k: i for i, k in enumerate(keys)}
    children = {}
    roots = []
    for i, key in enumerate(keys):
        p = parents[i]
        if p is not None and p in index and p != key:
            children.setdefault(p, []).append(i)
        else:
            roots.append(i)
    out = {}
    _place(keys, starts, ends, children, roots, 0.0, out)
    # Tasks on a parent cycle (possible only in malformed imports) are never reached from
    # a root: lay them out below the rest rather than lose them.
    stray = [i for i, k in enumerate(keys) if k not in out]
    if stray:
        bottom = max((p.y1 for p in out.values()), default=0.0)
        _place(keys, starts, ends, {}, stray, bottom, out)
    return out


def _place(keys, starts, ends, children, roots, top, out):
    # Depth-first with an explicit stack: traces can nest deeper than Python's recursion.
    stack = [(roots, top, 1.0, 0, True)]
    while stack:
        members, top, row_height, depth, is_root = stack.pop()
        rows = up_float([starts[i] for i in members], [ends[i] for i in members])
        n = row_count(rows)
        if not is_root:
            row_height = row_height / max(1, n)
        for i, row in zip(members, rows):
            y0 = top + row * row_height
            out[keys[i]] = Placement(y0, y0 + row_height, depth)
            kids = children.get(keys[i])
            if kids:
                pad = row_height * (1 - BAND_FILL) / 2
                stack.append((kids, y0 + pad, row_height * BAND_FILL, depth + 1, False))
