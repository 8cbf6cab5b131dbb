"""Row placement for Gantt bars: Daisen's up-floating layout, with nesting.

Up-floating (Daisen paper §6.2): in order of start time, each task takes the lowest
(top-most) row where it overlaps no task already placed. That uses the fewest rows, so
each bar gets the greatest height, and the number of bars stacked at an x position is
the number of tasks in flight there. Intervals are half-open: a task starting exactly
when another ends may reuse its row.

Nesting: in the Component view, a task whose parent is also drawn (same location, in
the window) is placed inside its parent's band, with the parent's children laid out
up-floating within that band; tasks at the same depth share one height.

Sub-pixel bars: runs of bars too thin to see are merged into one aggregate bar that
says how many tasks it holds, so a wide window is never silently thinned out.
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


@dataclass(frozen=True)
class Aggregate:
    """Consecutive bars of one kind in one band, each narrower than a pixel, drawn as one."""
    kind: int
    y0: float
    y1: float
    depth: int
    start_ps: int
    end_ps: int
    count: int


def merge_thin(tasks, placements, pixel_ps):
    """(singles, aggregates): bars narrower than ``pixel_ps`` that follow each other in the
    same band and kind, less than a pixel apart, become one ``Aggregate``; nothing is
    dropped, and a lone thin bar stays a single bar.

    ``tasks`` have ``id``, ``kind``, ``start_ps`` and ``end_ps``; ``placements`` come
    from ``nested_layout``. Within a band bars never overlap, so start order is bar order.
    """
    def band(t):
        p = placements[t.id]
        return p.y0, p.y1, p.depth, t.kind

    singles, aggregates = [], []
    run, run_band, run_end = [], None, 0
    for t in sorted(tasks, key=lambda t: (band(t), t.start_ps, t.id)):
        thin = t.end_ps - t.start_ps < pixel_ps
        joins = thin and run and band(t) == run_band and t.start_ps - run_end < pixel_ps
        if run and not joins:
            _close(run, run_band, run_end, singles, aggregates)
            run = []
        if thin:
            if not run:
                run_band, run_end = band(t), t.end_ps
            run.append(t)
            run_end = max(run_end, t.end_ps)
        else:
            singles.append(t)
    if run:
        _close(run, run_band, run_end, singles, aggregates)
    return singles, aggregates


def _close(run, band, end, singles, aggregates):
    if len(run) == 1:
        singles.append(run[0])
        return
    y0, y1, depth, kind = band
    aggregates.append(Aggregate(kind, y0, y1, depth, run[0].start_ps, end, len(run)))
