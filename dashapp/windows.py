"""A location's tasks overlapping a time window, fast even when a few tasks are long.

The contract's window query, ``start_ps >= t0 - max_duration_ps AND start_ps < t1``,
scans every task that starts within one maximum duration before the window. One
long task (a kernel spanning the run at the command processor) makes that the whole
location for every window. So when a location's maximum duration is far above what
its task density needs, its tasks are split once (per process and trace version): the
few *long* ones are listed and kept in memory, and the window query runs over the
short ones only, bounded by the short tasks' maximum. Both parts are exact.
"""
from dataclasses import dataclass

import numpy as np

from . import queries

SPLIT_FACTOR = 64
"""Split when one maximum duration spans more than this many tasks' average spacing."""
LONG_SHARE = 0.001
"""At most this share of a location's tasks is kept in memory as long tasks."""


@dataclass(frozen=True)
class Reach:
    short_ps: int  # every task not in ``long`` lasts at most this long
    long: tuple  # (id, start_ps, end_ps) of the longer tasks, by start


def reach(db, meta, loc):
    """The cached ``Reach`` of ``loc``."""
    key = ("reach", loc.id)
    if key not in meta.cache:
        meta.cache[key] = _split(db, loc)
    return meta.cache[key]


def _split(db, loc):
    longest = loc.max_duration_ps or 0
    span = max(1, (loc.last_end_ps or 0) - (loc.first_start_ps or 0))
    if not loc.task_count or longest * loc.task_count <= SPLIT_FACTOR * span:
        return Reach(longest, ())
    spans = np.array(queries.location_spans(db, loc.id), dtype=np.int64).reshape(-1, 3)
    durations = spans[:, 2] - spans[:, 1]
    keep = max(1, int(len(durations) * LONG_SHARE))
    order = np.argsort(durations, kind="stable")
    short = int(durations[order[max(0, len(order) - keep - 1)]])
    if short >= longest:
        return Reach(longest, ())
    long = spans[durations > short]
    long = long[np.argsort(long[:, 1], kind="stable")]
    return Reach(short, tuple(map(tuple, long.tolist())))


def _long_overlapping(r, t0, t1):
    return [key for key, start, end in r.long if start < t1 and end > t0]


def tasks(db, meta, loc, t0, t1, limit):
    """Tasks of ``loc`` overlapping [t0, t1) in start order, at most ``limit``."""
    r = reach(db, meta, loc)
    rows = queries.window_tasks(db, loc.id, r.short_ps, t0, t1, limit)
    extra = _long_overlapping(r, t0, t1)
    if extra:
        rows = sorted(rows + queries.tasks_by_id(db, extra),
                      key=lambda t: (t.start_ps, t.id))[:limit]
    return rows


def count(db, meta, loc, t0, t1, cap):
    """How many tasks of ``loc`` overlap [t0, t1), counting at most about ``cap``."""
    r = reach(db, meta, loc)
    return (queries.window_task_count(db, loc.id, r.short_ps, t0, t1, cap)
            + len(_long_overlapping(r, t0, t1)))


def intervals(db, meta, loc, t0, t1):
    """(start, end, kind, parent start or -1) of the tasks of ``loc`` overlapping [t0, t1)."""
    r = reach(db, meta, loc)
    rows = queries.window_intervals(db, loc.id, r.short_ps, t0, t1)
    extra = _long_overlapping(r, t0, t1)
    return rows + queries.intervals_by_id(db, extra) if extra else rows
