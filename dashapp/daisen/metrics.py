"""The Overview metrics of one location over a time window, exact at any zoom.

DESIGN.md's six metrics plus busy fraction, from the sums the trace stores per bin.
A window is served from the metric pyramid level whose bins are closest to the width
of one drawn point, so a chart reads about as many rows as it draws. Below a
location's finest stored level the same sums are computed from the window's raw tasks
(``binning``); both paths give identical numbers for identical bins.

An idle bin reads zero: no request arrived, none was in flight, the component was not
busy, and a chart that broke its line there would hide the idle time an architect is
looking for (DESIGN.md drew such bins as gaps; issue 13 found them read as "no data").
Only a value that does not exist is a gap (NaN): the latency of a bin where no request
ended. Windows are cut to the run, so no bin lies outside it. Rates are per second,
latency is in seconds.
"""
import math
from dataclasses import dataclass, field, replace

import numpy as np

from .. import queries
from ..catalog import LRU
from . import binning, windows

PS = 1e-12
COLUMNS = ("req_in_started", "req_in_ended", "req_in_latency_ps", "task_ps", "buffer_ps",
           "req_out_ps", "busy_ps")
RAW_SERIES_ENTRIES = 256
"""Series computed from raw tasks kept across requests: a few kilobytes each (about a
hundred bins of seven sums, at most about 400), 16 Overview pages' worth."""
_RAW_SERIES = LRU(RAW_SERIES_ENTRIES)


@dataclass(frozen=True)
class Metric:
    key: str
    title: str
    unit: str
    axis_unit: str = None
    """The unit a chart shows (an architect reads requests per ns, not 0.76G per s)."""
    axis_scale: float = 1.0
    """Factor from ``unit`` to ``axis_unit``."""


METRICS = {m.key: m for m in (
    Metric("arrival", "Request arrival rate", "1/s", "per ns", 1e-9),
    Metric("completion", "Request completion rate", "1/s", "per ns", 1e-9),
    Metric("latency", "Average request latency", "s", "ns", 1e9),
    Metric("concurrency", "Concurrent tasks", ""),
    Metric("buffer", "Buffer pressure", ""),
    Metric("pending_out", "Pending outgoing requests", ""),
    Metric("busy", "Busy fraction", ""),
)}
"""The metrics a chart may show, by URL key (a whitelist)."""

NEEDS = {"arrival": "req_in", "completion": "req_in", "latency": "req_in", "buffer": "req_in",
         "pending_out": "req_out"}
"""The task category a metric is made of; the rest hold for any tasks."""


def applicable(categories):
    """The metric keys that mean something for a trace with tasks of ``categories``: a
    profile of a real GPU (kernels, API calls) has no req_in/req_out requests."""
    return tuple(k for k in METRICS if NEEDS.get(k, "") in set(categories) | {""})

COUNTER_PREFIX = "counter:"
"""URL key prefix of a counter series (Chrome ``C`` events), followed by its name: the
trace's own counters chart beside the six metrics at every location that has them."""


def is_counter(key):
    return key is not None and key.startswith(COUNTER_PREFIX)


def describe(key):
    """The ``Metric`` of a URL key: one of ``METRICS`` or a counter series."""
    if is_counter(key):
        return Metric(key, key[len(COUNTER_PREFIX):], "")
    return METRICS[key]


@dataclass
class Series:
    """Per-bin sums of one location: bins ``first_bin ..`` of ``width_ps``.

    ``present`` marks bins with activity; ``source`` says where the sums came from:
    ``"pyramid"`` (stored level ``level``) or ``"tasks"`` (computed from raw tasks).
    """
    first_bin: int
    width_ps: int
    level: int
    sums: dict
    present: np.ndarray
    source: str
    counters: dict = field(default_factory=dict)  # counter key -> values per bin


    @property
    def nbins(self):
        return len(self.present)

    def centres_ps(self):
        return (self.first_bin + np.arange(self.nbins) + 0.5) * self.width_ps

    def values(self, key):
        """The metric ``key`` per bin: zero where idle, NaN where it has no value."""
        if is_counter(key):
            return self.counters.get(key, np.full(self.nbins, np.nan))
        s, w = self.sums, float(self.width_ps)
        with np.errstate(divide="ignore", invalid="ignore"):
            if key == "arrival":
                v = s["req_in_started"] / (w * PS)
            elif key == "completion":
                v = s["req_in_ended"] / (w * PS)
            elif key == "latency":
                v = np.where(s["req_in_ended"] > 0,
                             s["req_in_latency_ps"] * PS / s["req_in_ended"], np.nan)
            elif key == "concurrency":
                v = s["task_ps"] / w
            elif key == "buffer":
                v = s["buffer_ps"] / w
            elif key == "pending_out":
                v = s["req_out_ps"] / w
            elif key == "busy":
                v = s["busy_ps"] / w
            else:
                raise KeyError(key)
        return v


def choose_level(base_ps, t0, t1, points):
    """Pyramid level whose bin width is nearest (in log2) to the window / ``points``."""
    per_point = max(1.0, (t1 - t0) / max(1, points))
    return max(0, round(math.log2(max(1.0, per_point / base_ps))))


def top_level(loc, base_ps):
    """Coarsest stored level of a location: the first where one bin holds all its
    activity; while the trace is written, at most the coarsest level holding a finished
    bin (the bin that will hold everything is not written yet)."""
    level = loc.min_level
    while (loc.first_start_ps // (base_ps << level)) != (loc.last_end_ps // (base_ps << level)):
        level += 1
    return level if loc.complete_level is None else min(level, loc.complete_level)


def bin_range(t0, t1, width):
    """(first bin, number of bins) covering [t0, t1)."""
    first = t0 // width
    return first, max(1, -(-t1 // width) - first)


def within_run(meta, t0, t1):
    """[t0, t1) cut to the run, so a window from the URL can never ask for more bins
    than the run holds (outside it every bin is empty anyway)."""
    lo, hi = max(t0, meta.start_ps), min(t1, meta.end_ps)
    return (lo, hi) if lo < hi else (meta.start_ps, meta.start_ps + 1)


def location_series(db, meta, loc, t0, t1, points):
    """The ``Series`` of ``loc`` over [t0, t1) at about ``points`` bins.

    While the trace is written its tasks have no index yet, so a window finer than the
    location's finest stored level is drawn from that level (fewer, wider bins) instead
    of from its raw tasks."""
    base = meta.base_ps
    t0, t1 = within_run(meta, t0, t1)
    wanted = choose_level(base, t0, t1, points)
    if not loc.has_tasks:
        first, n = bin_range(t0, t1, base << wanted)
        return _empty(first, n, base << wanted, wanted)
    if meta.live is not None:
        wanted = max(wanted, loc.min_level)
    if wanted >= loc.min_level:
        level = min(wanted, top_level(loc, base))
        return pyramid_series(db, loc, level, base << level, t0, t1)
    # Computed from up to a few thousand raw tasks (a few ms a location, the most of an
    # Overview page's server time), so kept for the next request of the same window.
    series = _RAW_SERIES.get_or_make(
        (meta.path, meta.version, loc.id, wanted, t0, t1),
        lambda: task_series(db, meta, loc, wanted, base << wanted, t0, t1))
    return replace(series, counters={})  # callers add counters to their own copy


def _empty(first, n, width, level, source="pyramid"):
    return Series(first, width, level, {c: np.zeros(n, dtype=np.int64) for c in COLUMNS},
                  np.zeros(n, dtype=bool), source)


def pyramid_series(db, loc, level, width, t0, t1):
    """Sums read from the stored pyramid level ``level``."""
    first, n = bin_range(t0, t1, width)
    series = _empty(first, n, width, level)
    rows = queries.metric_bins(db, loc.id, level, first, first + n)
    if rows:
        arr = np.array(rows, dtype=np.int64)
        idx = arr[:, 0] - first
        series.present[idx] = True
        for i, col in enumerate(COLUMNS, start=1):
            series.sums[col][idx] = arr[:, i]
    return series


def task_series(db, meta, loc, level, width, t0, t1):
    """Sums computed from the raw tasks of the window (deep zoom)."""
    first, n = bin_range(t0, t1, width)
    lo, hi = first * width, (first + n) * width
    # end_ps > lo - 1 keeps tasks ending exactly at lo: their end event is in the first bin.
    rows = windows.intervals(db, meta, loc, lo - 1, hi)
    arr = np.array(rows, dtype=np.int64).reshape(-1, 4)
    start, end, kind, parent_start = arr.T
    req_in = meta.category_mask("req_in")[kind]
    req_out = meta.category_mask("req_out")[kind]
    waiting = req_in & (parent_start >= 0) & (parent_start <= start)
    wait_s, wait_e = parent_start[waiting], start[waiting]
    # Requests served after the window still wait in it from their parent's start on.
    later = queries.waiting_requests(db, loc.id, meta.req_in_kinds, hi, _max_wait(db, meta, loc))
    if later:
        extra = np.array(later, dtype=np.int64)
        wait_s = np.concatenate([wait_s, extra[:, 0]])
        wait_e = np.concatenate([wait_e, extra[:, 1]])
    busy_s, busy_e = binning.union(start, end)
    sums = {
        "req_in_started": binning.event_counts(start[req_in], first, n, width),
        "req_in_ended": binning.event_counts(end[req_in], first, n, width),
        "req_in_latency_ps": binning.event_counts(end[req_in], first, n, width,
                                                  weights=(end - start)[req_in]),
        "task_ps": binning.interval_integrals(start, end, first, n, width),
        "buffer_ps": binning.interval_integrals(wait_s, wait_e, first, n, width),
        "req_out_ps": binning.interval_integrals(start[req_out], end[req_out], first, n, width),
        "busy_ps": binning.interval_integrals(busy_s, busy_e, first, n, width),
    }
    present = np.zeros(n, dtype=bool)
    for col in sums.values():
        present |= col != 0
    return Series(first, width, level, sums, present, "tasks")


def _max_wait(db, meta, loc):
    """Longest req_in wait at a location, 0 where it never has buffer pressure (cached)."""
    def make():
        top = top_level(loc, meta.base_ps)
        total = queries.metric_bins(db, loc.id, top, 0, 1 << 62)
        waits = any(queries.MetricRow(*row).buffer_ps for row in total)
        return queries.max_request_wait(db, loc.id, meta.req_in_kinds) if waits else 0
    return meta.memo(("max_wait", loc.id), make)


def kind_density(db, meta, loc, t0, t1, points):
    """Exact time-weighted tasks in flight per kind and bin: (first bin, width, {kind: array}).

    Uses the per-kind pyramid where it is stored (coarser levels), else the raw tasks.
    """
    base = meta.base_ps
    t0, t1 = within_run(meta, t0, t1)
    wanted = choose_level(base, t0, t1, points)
    finest, coarsest = queries.kind_levels(db, loc.id)
    if meta.live is not None and finest is not None:
        wanted = max(wanted, finest)  # as in location_series: no raw tasks while written
    if finest is not None and wanted >= finest:
        level = min(wanted, coarsest)
        width = base << level
        first, n = bin_range(t0, t1, width)
        out = {}
        for b, kind, _started, task_ps in queries.kind_bins(db, loc.id, level, first, first + n):
            out.setdefault(kind, np.zeros(n, dtype=np.int64))[b - first] = task_ps
        return first, width, out
    width = base << wanted
    first, n = bin_range(t0, t1, width)
    rows = windows.intervals(db, meta, loc, first * width, (first + n) * width)
    arr = np.array(rows, dtype=np.int64).reshape(-1, 4)
    out = {}
    for kind in np.unique(arr[:, 2]).tolist():
        sel = arr[:, 2] == kind
        out[kind] = binning.interval_integrals(arr[sel, 0], arr[sel, 1], first, n, width)
    return first, width, out


def counter_values(db, series_id, series):
    """A counter on the bins of ``series``: the mean of the samples in a bin, and in a
    bin without samples the value the counter holds from its last sample (NaN before
    its first)."""
    out = np.full(series.nbins, np.nan)
    rows = queries.counter_bins(db, series_id, series.first_bin * series.width_ps,
                                series.width_ps, series.nbins)
    held, at = np.nan, 0
    for b, value in rows:
        b = int(b)
        if b >= 0:
            out[at:b] = held
            at = b
        held = float(value)
        if b >= 0:
            out[b] = held
            at = b + 1
    out[at:] = held
    return out
