"""S1, the kernel time budget: launch, ramp, steady and tail (why-layer.md §9.1, S1).

The launch's time is split at three instants:

- **launch**: from the kernel's start to its first dispatch (the first MapWGReq);
- **ramp**: from there to the first instant the number of CUs holding a work-group
  reaches its maximum;
- **steady**: from there to the last instant that count falls below ``tail_frac`` times
  its maximum;
- **tail**: from there to the kernel's end.

The four phases partition the kernel exactly (an instant that comes out of order is
clamped to the one before it, giving an empty phase), and within a window the phases
are cut to it, so they sum to the window to the picosecond. What the tail costs is the
CU-time it leaves idle, in launch time: |tail| − ∫ busy CUs ÷ their peak. Waves per CU = work-groups ÷
(CUs × the most work-groups one CU was seen to hold at once): below 1 the grid is too
small to fill the GPU (Nsight Compute's SOLBottleneck), between 1 and 2 the last partial
wave is a large share of the run (Perfetto's occupancy prompt, "tail effect").
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np

from .intervals import Lanes, step_count
from .scope import COLUMN, Scope

PHASES = ("launch", "ramp", "steady", "tail")


def busy_cus(scope: Scope) -> tuple[np.ndarray, np.ndarray]:
    """How many CUs hold at least one of the launch's work-groups, as a step function
    (``intervals.step_count``) over the whole launch."""
    wg, k = scope.work_groups, scope.kernel
    lanes = Lanes(scope.n_cu, k.start_ps, k.end_ps)
    s, e = lanes.union(wg[:, 6], wg[:, COLUMN["start"]], wg[:, COLUMN["end"]])
    group = s // lanes.width
    return step_count(s - lanes.offset[group], e - lanes.offset[group])


def most_resident(groups: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> int:
    """The most intervals of one group in flight at once, over all groups."""
    if not len(starts):
        return 0
    times = np.r_[starts, ends]
    delta = np.r_[np.ones(len(starts), np.int64), -np.ones(len(ends), np.int64)]
    # group by group, ends before starts at one instant; each group nets to zero, so
    # one running sum over all of them is every group's own count
    order = np.lexsort((delta, times, np.r_[groups, groups]))
    return int(np.cumsum(delta[order]).max())


def _integral(times: np.ndarray, counts: np.ndarray, t0: int, t1: int) -> int:
    """∫ of a step function (``step_count``'s) over [t0, t1), exactly."""
    if t1 <= t0 or not len(times):
        return 0
    ends = np.r_[times[1:], times[-1]]
    width = (np.minimum(ends, t1) - np.maximum(times, t0)).clip(min=0)
    return int((width * counts).sum())


def time_budget(scope: Scope, tail_frac: float = 0.5) -> dict:
    """The S1 budget of ``scope``: phases in ps (summing to the window), their
    boundaries, the peak of busy CUs, waves per CU and its flag."""
    k = scope.kernel
    dispatches = scope.dispatches
    wg = scope.work_groups
    times, counts = busy_cus(scope)
    peak = int(counts.max(initial=0))
    first_dispatch = int(dispatches[0]) if len(dispatches) else k.end_ps
    at_peak = int(times[np.argmax(counts == peak)]) if peak else k.end_ps
    below = counts < tail_frac * peak
    # the start of the last run of steps below the threshold (the count is 0 at the end)
    rising = np.flatnonzero(~below)
    tail_start = int(times[rising[-1] + 1]) if len(rising) else first_dispatch
    bounds = [k.start_ps]
    for instant in (first_dispatch, at_peak, tail_start):
        bounds.append(min(max(bounds[-1], instant), k.end_ps))
    bounds.append(k.end_ps)
    phases = {name: max(0, min(bounds[i + 1], scope.hi) - max(bounds[i], scope.lo))
              for i, name in enumerate(PHASES)}
    # the CU-time the tail leaves idle, in launch time: |tail| - ∫ busy CUs ÷ peak
    t0, t1 = max(bounds[3], scope.lo), min(bounds[4], scope.hi)
    tail_busy = _integral(times, counts, t0, t1)
    tail_idle = (peak * max(0, t1 - t0) - tail_busy) // peak if peak else 0
    per_cu = most_resident(wg[:, 6], wg[:, COLUMN["start"]], wg[:, COLUMN["end"]])
    waves = Fraction(len(wg), scope.n_cu * per_cu) if per_cu else None
    flag = None
    if waves is not None and waves < 1:
        flag = "grid too small"
    elif waves is not None and waves < 2:
        flag = "tail effect"
    return {
        "window_ps": [scope.lo, scope.hi],
        **{f"{name}_ps": phases[name] for name in PHASES},
        "boundaries_ps": bounds,
        "tail_idle_ps": tail_idle,
        "peak_busy_cus": peak,
        "work_groups": len(wg),
        "max_work_groups_per_cu": per_cu,
        "waves_per_cu": None if waves is None else round(float(waves), 3),
        "flag": flag,
        "tail_frac": tail_frac,
    }
