"""I12, the pace of iterations and its jitter (Nsight Systems' ``cuda_gpu_kern_pace`` and
``nvtx_pace`` recipes; why-layer.md §1, §9.2 I12).

An *iteration* is one instance of a subject that recurs once per iteration: the profiler
steps (``ProfilerStep#N``, what PyTorch marks as one), or a range (NVTX, annotation) or a
kernel the user names, as those recipes ask (``--name``). Per instance, in start order:
its start, its duration and its delta, the time from the previous instance's start to
its own. A range is timed on its CPU thread (as ``nvtx_pace``), a kernel on the GPU.
The pace's spread is the coefficient of variation of the deltas, CV = sample standard
deviation ÷ mean (two deltas at least); above the threshold the iterations jitter.
Outlier iterations follow S11's rule (``analysis.distribution``): a duration, or a
delta, above Q3 + 3·IQR of its kind. The time jitter costs is Σ max(0, delta − the
median delta), the lower median for an even count: what the slower iterations took
beyond the typical pace.
"""
from __future__ import annotations

import numpy as np

from ...tracing.writer import TraceError
from ..distribution import distribution
from .ops import KERNEL, Profile
from .ranges import STEP, ranges
from .trace import COLUMN

STEPS = "ProfilerStep#N"
"""The subject the profiler steps make together, whatever their numbers."""


def _subject_rows(profile: Profile, name: str | None) -> tuple[str, str, np.ndarray]:
    """(subject, kind, its instances as task rows of TASK_COLUMNS, by start): the profiler
    steps if ``name`` is None, else the ranges called ``name``, else the kernels."""
    tasks = profile.tasks
    found = ranges(profile)
    if name is None:
        mine = [i for i, n in enumerate(found.names) if STEP.match(n)]
        return STEPS, "step", tasks[found.rows[mine]]
    mine = found.instances(name)
    if len(mine):
        return name, "range", tasks[found.rows[mine]]
    ops = profile.ops
    kernels = np.flatnonzero((ops.category == KERNEL) & np.isin(
        ops.kind, [k for k, n in profile.names.items() if n == name]))
    if not len(kernels):
        raise TraceError(f"{profile.trace.path}: no range or kernel is called {name!r}, whose"
                         " instances would delimit the iterations")
    rows = np.column_stack([ops.task[kernels], np.full(len(kernels), -1), ops.kind[kernels],
                            ops.location[kernels], ops.start[kernels], ops.end[kernels]])
    return name, "kernel", rows


def _fenced(rows: np.ndarray, locations: dict[int, str], k: int) -> dict:
    """S11's outliers of the rows' durations: the fence and the ``k`` longest above it."""
    d = distribution(rows, locations, k)
    return {"fence_ps": d["fence_ps"], "count": d["above_fence"], "instances": d["outliers"]}


def pace(profile: Profile, cv_threshold: float, outliers: int, name: str | None = None) -> dict:
    """The pace of the iterations ``name`` delimits (None: the profiler steps), in ps; or
    what the trace lacks for it."""
    subject, kind, rows = _subject_rows(profile, name)
    if profile.window is not None:  # the instances that overlap the window
        lo, hi = profile.window
        rows = rows[(rows[:, COLUMN["start_ps"]] < hi) & (rows[:, COLUMN["end_ps"]] > lo)]
    rows = rows[np.lexsort((rows[:, COLUMN["id"]], rows[:, COLUMN["start_ps"]]))]
    if len(rows) < 3:
        found = f"{len(rows)} instance{'' if len(rows) == 1 else 's'} of {subject}"
        return {"unavailable": f"needs iterations: three or more profiler steps, or a range or"
                               f" kernel named with --pace (found {found})"}
    start, end = rows[:, COLUMN["start_ps"]], rows[:, COLUMN["end_ps"]]
    delta = np.diff(start)
    mean = float(delta.mean())
    cv = float(delta.std(ddof=1)) / mean if mean else None
    median = int(np.sort(delta)[(len(delta) - 1) // 2])
    # a delta as a task from the previous start to this one: S11's rule reads it the same
    between = rows[1:].copy()
    between[:, COLUMN["start_ps"]], between[:, COLUMN["end_ps"]] = start[:-1], start[1:]
    slowest = 1 + int(np.argmax(delta))
    return {
        "subject": subject, "kind": kind, "count": len(rows),
        "instances": [{"task": int(r[COLUMN["id"]]), "name": profile.name(r[COLUMN["kind"]]),
                       "loc": profile.location(r[COLUMN["location"]]),
                       "start_ps": int(r[COLUMN["start_ps"]]),
                       "duration_ps": int(r[COLUMN["end_ps"]] - r[COLUMN["start_ps"]]),
                       "delta_ps": int(delta[i - 1]) if i else None}
                      for i, r in enumerate(rows)],
        "mean_delta_ps": mean, "median_delta_ps": median, "cv": cv,
        "jitter": cv is not None and cv > cv_threshold,
        "beyond_median_ps": int((delta - median).clip(min=0).sum()),
        "slowest": {"task": int(rows[slowest, COLUMN["id"]]),
                    "loc": profile.location(rows[slowest, COLUMN["location"]]),
                    "t0": int(start[slowest - 1]), "t1": int(end[slowest]),
                    "delta_ps": int(delta[slowest - 1])},
        "duration_outliers": _fenced(rows, profile.trace.locations, outliers),
        "delta_outliers": _fenced(between, profile.trace.locations, outliers)}

