"""S11, the distribution of task durations in a selection, and its outliers
(why-layer.md §9.1, S11): Daisen's mean request latency made a histogram.

A selection is tasks of one kind (or all) at one location that overlap a window, as
the Component view shows them (``selection_distribution``, for the app), or a launch's
CU memory requests as its wavefronts wait for them (``load_latency``, for the report).
Bins are log-spaced, ``BINS_PER_DECADE`` to a decade, when the durations span a decade
or more, else Freedman–Diaconis (width 2·IQR/n^⅓). Percentiles are order statistics
(nearest rank), exact integers. Outliers are the durations above Q3 + 3·IQR, the
``k`` longest listed with their task ids.
"""
from __future__ import annotations

import math

import numpy as np

from .scope import COLUMN, Scope
from .trace import Trace

BINS_PER_DECADE = 20


def _rank(ordered: np.ndarray, q: float) -> int:
    """The nearest-rank q-quantile of sorted integers."""
    return int(ordered[max(0, math.ceil(q * len(ordered)) - 1)])


def _edges(ordered: np.ndarray) -> np.ndarray:
    lo, hi = int(ordered[0]), int(ordered[-1])
    if lo > 0 and hi >= 10 * lo:
        first = math.floor(math.log10(lo) * BINS_PER_DECADE)
        last = math.ceil(math.log10(hi) * BINS_PER_DECADE)
        edges = np.unique(np.round(10 ** (np.arange(first, last + 1) / BINS_PER_DECADE)).astype(np.int64))
    else:
        iqr = _rank(ordered, 0.75) - _rank(ordered, 0.25)
        width = max(1, math.ceil(2 * iqr / len(ordered) ** (1 / 3))) if iqr else max(1, hi - lo)
        edges = np.arange(lo, hi + width, width, dtype=np.int64)
    edges[0] = min(edges[0], lo)
    if edges[-1] <= hi:  # half-open bins: the last must hold the maximum
        edges = np.r_[edges, hi + 1]
    return edges


def distribution(rows: np.ndarray, names: dict[int, str], k: int = 20) -> dict:
    """Histogram, percentiles and outliers of the durations of tasks (rows of
    TASK_COLUMNS; ``names`` names their locations)."""
    durations = rows[:, COLUMN["end"]] - rows[:, COLUMN["start"]]
    if not len(durations):
        return {"count": 0, "bins": [], "outliers": []}
    order = np.argsort(durations, kind="stable")
    ordered = durations[order]
    edges = _edges(ordered)
    counts = np.diff(np.searchsorted(ordered, edges, "left"))
    q1, q3 = _rank(ordered, 0.25), _rank(ordered, 0.75)
    fence = q3 + 3 * (q3 - q1)
    above = order[ordered > fence][::-1][:k]
    return {"count": len(durations), "mean_ps": round(float(ordered.mean()), 1),
            "p50_ps": _rank(ordered, 0.5), "p90_ps": _rank(ordered, 0.9),
            "p99_ps": _rank(ordered, 0.99), "max_ps": int(ordered[-1]),
            "bins": [{"lo_ps": int(a), "hi_ps": int(b), "count": int(c)}
                     for a, b, c in zip(edges[:-1], edges[1:], counts) if c],
            "fence_ps": fence, "above_fence": int((ordered > fence).sum()),
            "outliers": [{"task": int(rows[i, COLUMN["id"]]), "loc": names[int(rows[i, COLUMN["location"]])],
                          "start_ps": int(rows[i, COLUMN["start"]]), "end_ps": int(rows[i, COLUMN["end"]]),
                          "ps": int(durations[i])} for i in above.tolist()]}


def load_latency(scope: Scope, k: int = 20) -> dict:
    """The distribution of the launch's CU memory requests starting in the window (the
    latency a wavefront's load or store sees)."""
    scope.require("mem")
    rows = scope.cu_requests
    rows = rows[rows[:, COLUMN["start"]] >= scope.lo]
    return {"selection": "ReadReq/WriteReq req_out at the CUs",
            **distribution(rows, scope.trace.components.name, k)}


def selection_distribution(trace: Trace, location: str, window: tuple[int, int],
                           kind: tuple[str, str] | None = None, k: int = 20) -> dict:
    """The distribution of the tasks the Component view shows: those at ``location``
    (a name) of ``kind`` (category, action; all when None) overlapping [t0, t1)."""
    rows = trace.tasks_at(location, window, kind)
    return distribution(rows, trace.components.name, k)
