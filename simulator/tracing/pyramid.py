"""The metric pyramid: exact per-location Overview metrics at power-of-two resolutions.

For each location the finest level is chosen so that it has about one bin per 16
tasks; each coarser level halves the bin count until one bin spans the location's
whole activity. A bin at level L is ``base << L`` picoseconds wide, aligned to t = 0,
and half-open, so an event on an edge falls in exactly one bin.

What is stored are sums, not averages, so that a coarse bin is the exact integer sum
of its two children and any metric follows by one division (DESIGN.md's six metrics):

* ``req_in_started`` / ``req_in_ended``: arrival and completion counts;
* ``req_in_latency_ps``: summed durations of the ``req_in`` tasks ending in the bin;
* ``task_ps``, ``req_out_ps``, ``buffer_ps``: integrals (task × ps) of tasks in flight,
  of ``req_out`` in flight, and of ``req_in`` waiting between their parent's start and
  their own start; a ``req_in`` without a recorded parent is skipped (and counted);
* ``busy_ps``: time covered by at least one task.

All arithmetic is int64 and vectorised with numpy: an integral over a bin is
``active_at_bin_start * w`` plus the part of each interval edge that falls inside it.
"""
import math

import numpy as np

from .progress import track

# Long tasks: a location's tasks are split into short and long when its longest task
# spans more than LONG_SPLIT_FACTOR average task spacings; at most LONG_SHARE of them
# (at least one, at most LONG_MAX) are listed in long_task. The cap keeps what the
# incremental build holds per location from growing with the trace (it holds a few
# times as many candidates); the few tasks far longer than the rest are what it is for.
LONG_SPLIT_FACTOR = 64
LONG_SHARE = 0.001
LONG_MAX = 64


def long_keep(count):
    """How many of a location's ``count`` tasks ``long_task`` may list."""
    return min(LONG_MAX, max(1, int(count * LONG_SHARE)))

TARGET_TASKS_PER_BIN = 16
# The per-kind breakdown feeds stacked overviews, not exact zooms: it starts this many
# levels above a location's finest level, which keeps it a small fraction of the file.
KIND_LEVEL_OFFSET = 2
MAX_GLOBAL_BINS = 1 << 24


def base_width(span_ps):
    """Level-0 bin width: a power of two ps giving at most ``MAX_GLOBAL_BINS`` bins."""
    if span_ps <= MAX_GLOBAL_BINS:
        return 1
    return 1 << (int(span_ps // MAX_GLOBAL_BINS)).bit_length()


def min_level(count, first_ps, last_ps, base):
    """Finest level for a location holding ``count`` tasks over [first_ps, last_ps]."""
    span = max(1, last_ps - first_ps)
    width = span * TARGET_TASKS_PER_BIN / max(1, count)
    return max(0, math.ceil(math.log2(max(1.0, width / base))))


def interval_integral(starts, ends, width, lo, nbins):
    """Exact ∫ (number of intervals [s, e) covering t) dt over each bin, in int64.

    Bins are ``[(lo + i) * width, (lo + i + 1) * width)`` for ``i < nbins``.
    """
    out = np.zeros(nbins, dtype=np.int64)
    if len(starts) == 0:
        return out
    edges = (lo + np.arange(nbins, dtype=np.int64)) * width
    s_sorted = np.sort(starts)
    e_sorted = np.sort(ends)
    active = (np.searchsorted(s_sorted, edges, side="right")
              - np.searchsorted(e_sorted, edges, side="right"))
    out += active * width
    # An interval edge strictly inside a bin adds (start) or removes (end) the rest of the bin.
    for times, sign in ((starts, 1), (ends, -1)):
        inside = times % width != 0
        t = times[inside]
        b = t // width
        sel = (b >= lo) & (b < lo + nbins)
        t, b = t[sel], b[sel]
        np.add.at(out, b - lo, sign * ((b + 1) * width - t))
    return out


def merge_intervals(starts, ends):
    """Union of intervals as disjoint (starts, ends), both sorted."""
    if len(starts) == 0:
        return starts, ends
    order = np.argsort(starts, kind="stable")
    s, e = starts[order], ends[order]
    reach = np.maximum.accumulate(e)
    new = np.ones(len(s), dtype=bool)
    new[1:] = s[1:] > reach[:-1]
    first = np.flatnonzero(new)
    last = np.append(first[1:] - 1, len(s) - 1)
    return s[first], reach[last]


def event_sum(times, weights, width, lo, nbins):
    """Per-bin sum of ``weights`` of events at ``times`` (exact int64)."""
    out = np.zeros(nbins, dtype=np.int64)
    b = times // width - lo
    np.add.at(out, b, weights)
    return out


def location_levels(start, end, kind, parent_start, req_in, req_out, base, level0):
    """Dense per-level sums for one location.

    ``req_in``/``req_out`` are boolean masks over its tasks; ``parent_start`` is -1 where
    the parent is unknown. Yields ``(level, lo, columns, kind_started, kind_ps)`` with
    ``columns`` the seven metric_bin arrays and the per-kind arrays keyed by kind.
    """
    width = base << level0
    has_parent = req_in & (parent_start >= 0) & (parent_start <= start)
    # A request waits in the buffer from its parent's start, which may precede every task here.
    first = min(int(start.min()), int(parent_start[has_parent].min(initial=start.min())))
    lo = first // width
    hi = int(end.max() // width)
    nbins = hi - lo + 1
    one = np.ones(len(start), dtype=np.int64)
    busy_s, busy_e = merge_intervals(start, end)
    columns = [
        event_sum(start[req_in], one[req_in], width, lo, nbins),
        event_sum(end[req_in], one[req_in], width, lo, nbins),
        event_sum(end[req_in], (end - start)[req_in], width, lo, nbins),
        None,  # task_ps: the sum of the per-kind integrals below
        interval_integral(parent_start[has_parent], start[has_parent], width, lo, nbins),
        interval_integral(start[req_out], end[req_out], width, lo, nbins),
        interval_integral(busy_s, busy_e, width, lo, nbins),
    ]
    kind_started, kind_ps = {}, {}
    for k in np.unique(kind).tolist():
        sel = kind == k
        kind_started[k] = event_sum(start[sel], one[sel], width, lo, nbins)
        kind_ps[k] = interval_integral(start[sel], end[sel], width, lo, nbins)
    columns[3] = sum(kind_ps.values())
    level = level0
    while True:
        yield level, lo, columns, kind_started, kind_ps
        if nbins == 1:
            return
        # Pair bins up: bin b of the next level is the exact sum of bins 2b and 2b+1.
        group = (lo + np.arange(nbins)) >> 1
        cut = np.flatnonzero(np.r_[True, group[1:] != group[:-1]])
        lo, nbins, level = int(group[0]), len(cut), level + 1
        columns = [np.add.reduceat(c, cut) for c in columns]
        kind_started = {k: np.add.reduceat(v, cut) for k, v in kind_started.items()}
        kind_ps = {k: np.add.reduceat(v, cut) for k, v in kind_ps.items()}


def split_long(ids, start, end):
    """(short_duration_ps, long task rows): the bound window queries use, and the exceptions.

    Without a split the bound is the longest duration, which lets one task spanning the
    run turn every window query into a scan of the whole location.
    """
    durations = end - start
    longest = int(durations.max())
    span = max(1, int(end.max() - start.min()))
    if longest * len(durations) <= LONG_SPLIT_FACTOR * span:
        return longest, []
    keep = long_keep(len(durations))
    order = np.argsort(durations, kind="stable")
    short = int(durations[order[max(0, len(order) - keep - 1)]])
    if short >= longest:
        return longest, []
    sel = np.flatnonzero(durations > short)
    return short, list(zip(ids[sel].tolist(), start[sel].tolist(), end[sel].tolist()))


def _rows(location, level, lo, columns):
    """metric_bin rows of one level as an int64 matrix, empty bins left out."""
    stacked = np.vstack(columns)
    keep = np.flatnonzero(stacked.any(axis=0))
    head = np.empty((3, len(keep)), dtype=np.int64)
    head[0], head[1], head[2] = location, level, lo + keep
    return np.vstack([head, stacked[:, keep]]).T


def _kind_rows(location, level, lo, kind_started, kind_ps):
    """metric_kind_bin rows of one level as an int64 matrix."""
    parts = []
    for k in kind_started:
        started, ps = kind_started[k], kind_ps[k]
        keep = np.flatnonzero((started != 0) | (ps != 0))
        part = np.empty((len(keep), 6), dtype=np.int64)
        part[:, 0], part[:, 1], part[:, 2], part[:, 3] = location, level, lo + keep, k
        part[:, 4], part[:, 5] = started[keep], ps[keep]
        parts.append(part)
    return parts


def read_columns(db, chunk=200_000):
    """Every task as int64 columns (id, parent or -1, kind, location, start_ps, end_ps).

    One scan in key order, no join: parents' start times are looked up in numpy. The
    array is allocated once and filled chunk by chunk (no second copy to concatenate).
    """
    count = db.execute("SELECT count(*) FROM task").fetchone()[0]
    columns = np.empty((count, 6), dtype=np.int64)
    cursor = db.execute(
        "SELECT id, coalesce(parent, -1), kind, location, start_ps, end_ps FROM task")
    at = 0
    while True:
        rows = cursor.fetchmany(chunk)
        if not rows:
            break
        columns[at:at + len(rows)] = rows
        at += len(rows)
    return columns[:at]


def build_pyramid(db, columns=None, show_progress=None):
    """Fill ``metric_bin``, ``metric_kind_bin`` and the location statistics.

    ``columns`` are the task columns of ``read_columns`` if the caller already holds
    them (the writer keeps its batches); otherwise they are read from ``db``. Works
    location by location. Returns the level-0 width in ps.
    """
    db.execute("BEGIN")
    db.execute("DELETE FROM metric_bin")
    db.execute("DELETE FROM metric_kind_bin")
    db.execute("DELETE FROM long_task")
    cols = read_columns(db) if columns is None else columns
    ids, parents, kinds_col, locs, starts, ends = cols.T
    base = base_width(int(ends.max() - starts.min()) if len(cols) else 0)
    start_by_id = np.full(int(ids.max()) + 1 if len(ids) else 0, -1, dtype=np.int64)
    start_by_id[ids] = starts
    parent_starts = np.where(parents >= 0, start_by_id[np.maximum(parents, 0)], -1)
    categories = dict(db.execute("SELECT id, category FROM kind").fetchall())
    req_in_kinds = np.array([k for k, c in categories.items() if c == "req_in"], dtype=np.int64)
    req_out_kinds = np.array([k for k, c in categories.items() if c == "req_out"], dtype=np.int64)
    order = np.argsort(locs, kind="stable")
    sorted_locs = locs[order]
    present = np.unique(sorted_locs)
    bounds = np.searchsorted(sorted_locs, np.append(present, present[-1] + 1 if len(present) else 0))
    for i in track(range(len(present)), show_progress, desc="metric pyramid", unit="loc"):
        loc = int(present[i])
        sel = order[bounds[i]:bounds[i + 1]]
        start, end, kind, parent_start = starts[sel], ends[sel], kinds_col[sel], parent_starts[sel]
        req_in = np.isin(kind, req_in_kinds)
        req_out = np.isin(kind, req_out_kinds)
        level0 = min_level(len(start), int(start.min()), int(end.max()), base)
        metric_rows, kind_rows, busy = [], [], 0
        for level, lo, columns, k_started, k_ps in location_levels(
                start, end, kind, parent_start, req_in, req_out, base, level0):
            metric_rows.append(_rows(loc, level, lo, columns))
            if level >= level0 + KIND_LEVEL_OFFSET:
                kind_rows.extend(_kind_rows(loc, level, lo, k_started, k_ps))
            busy = int(columns[6].sum())
        db.executemany("INSERT INTO metric_bin VALUES (?,?,?,?,?,?,?,?,?,?)",
                       np.concatenate(metric_rows).tolist())
        if kind_rows:
            db.executemany("INSERT INTO metric_kind_bin VALUES (?,?,?,?,?,?)",
                           np.concatenate(kind_rows).tolist())
        short, long_tasks = split_long(ids[sel], start, end)
        db.executemany("INSERT INTO long_task VALUES (?, ?, ?, ?)",
                       [(loc, key, s, e) for key, s, e in long_tasks])
        db.execute(
            "UPDATE location SET task_count = ?, busy_ps = ?, max_duration_ps = ?,"
            " short_duration_ps = ?, first_start_ps = ?, last_end_ps = ?, pyramid_min_level = ?"
            " WHERE id = ?",
            (len(start), busy, int((end - start).max()), short, int(start.min()),
             int(end.max()), level0, loc))
    db.execute("COMMIT")
    return base
