"""A location's tasks overlapping a time window, fast even when a few tasks are long.

A window query ``start_ps >= t0 - bound AND start_ps < t1`` scans every task that
starts within ``bound`` before the window, so the bound must not be the duration of
one task spanning the run (a kernel at the command processor). Finalize therefore
lists each location's few long tasks in ``long_task`` and bounds the rest by
``location.short_duration_ps``; the query runs over the short tasks and the long ones
are added from that list, read once per process and trace version. Both parts are exact.

A trace still being written has neither list nor bound yet: its windows read every
short task (``UNBOUNDED``), within the time limit of a query on such a trace.
"""
from dataclasses import dataclass

from .. import queries


@dataclass(frozen=True)
class Reach:
    short_ps: int  # every task not in ``long`` lasts at most this long
    long: tuple  # (id, start_ps, end_ps) of the longer tasks, by start


UNBOUNDED = Reach(1 << 62, ())


def reach(db, meta, loc):
    """The cached ``Reach`` of ``loc``."""
    if meta.live is not None:
        return UNBOUNDED
    return meta.memo(("reach", loc.id), lambda: Reach(
        loc.short_duration_ps or 0, tuple(map(tuple, queries.long_tasks(db, loc.id)))))


def _long_overlapping(r, t0, t1):
    return [key for key, start, end in r.long if start < t1 and end > t0]


def tasks(db, meta, loc, t0, t1, limit, ordered=True):
    """Tasks of ``loc`` overlapping [t0, t1) in start order: the first ``limit`` of them,
    or (not ``ordered``) any ``limit`` of them, which a scan without an index finds
    sooner."""
    r = reach(db, meta, loc)
    rows = queries.window_tasks(db, loc.id, r.short_ps, t0, t1, limit, ordered)
    extra = _long_overlapping(r, t0, t1)
    if extra:
        rows = rows + queries.tasks_by_id(db, extra)
    return sorted(rows, key=lambda t: (t.start_ps, t.id))[:limit] if extra or not ordered else rows


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
