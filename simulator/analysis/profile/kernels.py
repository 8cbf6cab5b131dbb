"""I7, the kernel summary and hotspot (nsys ``cuda_gpu_kern_sum``; HTA kernel breakdown).

Per kernel name: Total = Σ duration, Instances, Avg, Med, Min, Max, StdDev (sample), Q1,
Q3, and Time % = Total ÷ Σ Total over all kernels (as nsys: not a share of the run's
wall time). Sorted by Total, descending. Times in ps; the averages and quartiles are the
only non-integers.
"""
from __future__ import annotations

import numpy as np

from .ops import KERNEL, Profile


def kernel_summary(profile: Profile) -> list[dict]:
    """One row per kernel name, the most total time first."""
    ops = profile.ops
    rows = np.flatnonzero(ops.category == KERNEL)
    if not len(rows):
        return []
    names = np.array([profile.name(k) for k in ops.kind[rows]], dtype=object)
    duration = ops.end[rows] - ops.start[rows]
    grand = int(duration.sum())
    out = []
    for name in np.unique(names):
        mine = names == name
        d = duration[mine]
        q1, median, q3 = np.quantile(d, [0.25, 0.5, 0.75]).tolist()
        longest = rows[mine][np.argmax(d)]
        out.append({"name": str(name), "total_ps": int(d.sum()), "instances": len(d),
                    "avg_ps": float(d.mean()), "med_ps": median, "min_ps": int(d.min()),
                    "max_ps": int(d.max()), "std_ps": float(d.std(ddof=1)) if len(d) > 1 else 0.0,
                    "q1_ps": q1, "q3_ps": q3, "time_share": int(d.sum()) / grand if grand else 0.0,
                    "longest": {"task": int(ops.task[longest]),
                                "loc": profile.location(ops.location[longest]),
                                "t0": int(ops.start[longest]), "t1": int(ops.end[longest])}})
    return sorted(out, key=lambda r: (-r["total_ps"], r["name"]))
