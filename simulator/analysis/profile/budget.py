"""I1, the GPU time budget of each device: HTA's temporal breakdown, with copy-only time
apart (why-layer.md §9.2 I1; ``hta/analyzers/breakdown_analysis.py:get_temporal_breakdown``).

Over a device's GPU operations: span = last end − first start; idle = span − |∪ ops|;
compute = |∪ computation kernels| (communication or copies under a computation kernel
count as compute); non-compute = span − compute − idle. Copy-only = the time a copy or
memset runs and no kernel does (nsys-ai#599: copies that hide nothing). Compute,
non-compute and idle sum to the span exactly, in ps. HTA counts the GPU's
synchronization events as GPU events here; so does ``like_hta`` (``ops.Profile.syncs``).
"""
from __future__ import annotations

import numpy as np

from ..intervals import length
from .ops import COMPUTE, KERNEL, WAIT, Ops, Profile


def _device_ops(profile: Profile) -> Ops:
    if not profile.like_hta or not len(profile.syncs):
        return profile.ops
    both = Ops(**{name: np.r_[getattr(profile.ops, name), getattr(profile.syncs, name)]
                  for name in Ops.__dataclass_fields__})
    return both.take(np.lexsort((both.task, both.start)))


def time_budget(profile: Profile) -> list[dict]:
    """One row per device: span, compute, non-compute, idle and copy-only time, in ps."""
    ops = _device_ops(profile)
    rows = []
    for device in np.unique(ops.device).tolist():
        on = ops.take(ops.device == device)
        span = int(on.end.max() - on.start.min())
        idle = span - _union(on.start, on.end)
        compute = _union(on.start[on.cls == COMPUTE], on.end[on.cls == COMPUTE])
        kernels, work = on.category == KERNEL, on.category != WAIT
        copy_only = (_union(on.start[work], on.end[work])
                     - _union(on.start[kernels], on.end[kernels]))
        rows.append({"device": device, "span_ps": span, "compute_ps": compute,
                     "non_compute_ps": span - compute - idle, "idle_ps": idle,
                     "copy_only_ps": copy_only, "first_ps": int(on.start.min()),
                     "last_ps": int(on.end.max())})
    return rows


def _union(starts: np.ndarray, ends: np.ndarray) -> int:
    """|∪ intervals|; an interval HTA's µs rounding left shorter than nothing (its end
    before its start) takes away its negative length where it stands alone, as HTA's
    merge (``merge_kernel_intervals``) does."""
    if not len(starts):
        return 0
    negative = ends < starts
    if not negative.any():
        return length(starts, ends)
    return _hta_union(starts, ends)


def _hta_union(starts: np.ndarray, ends: np.ndarray) -> int:
    """Σ (group end − group start) over HTA's groups: in start order, an interval opens a
    group when it starts after every end before it."""
    order = np.argsort(starts, kind="stable")
    s, e = starts[order], ends[order]
    reach = np.maximum.accumulate(e)
    first = np.flatnonzero(np.r_[True, s[1:] > reach[:-1]])
    group_end = np.maximum.reduceat(e, first)
    return int((group_end - s[first]).sum())

