"""I4, the cause of each idle gap on a stream, in HTA's taxonomy
(``hta/analyzers/breakdown_analysis.py:_analyze_idle_time_for_stream``).

Per stream, in start order, the gap before an operation is its start less the latest end
before it (0 where they overlap or touch). It is *host wait* when the operation's
launching call started after that end (the CPU had not yet asked for it), else *kernel
wait* when the gap is below ``consecutive_kernel_delay`` (the cost of back-to-back
launches), else *other* (such as a wait on another stream's event). The classes sum to
the stream's idle time between its first start and last end, exactly.
"""
from __future__ import annotations

import numpy as np

from .ops import Profile
from .trace import COLUMN

PS_PER_US = 10 ** 6
CLASSES = ("host_wait", "kernel_wait", "other")


def idle_breakdown(profile: Profile, consecutive_kernel_delay_us: int) -> list[dict]:
    """Per (device, stream): idle time by class in ps, and the longest gap of each."""
    ops, tasks = profile.ops, profile.tasks
    out = []
    for device, stream in sorted(set(zip(ops.device.tolist(), ops.stream.tolist()))):
        rows = np.flatnonzero((ops.device == device) & (ops.stream == stream))
        start, end = ops.start[rows], ops.end[rows]
        before = np.r_[start[0], np.maximum.accumulate(end)[:-1]]
        gap = (start - before).clip(min=0)
        launch = ops.launch[rows]
        call_start = np.where(launch >= 0, tasks[launch, COLUMN["start_ps"]], np.iinfo(np.int64).min)
        host = call_start > before
        kernel = ~host & (gap < consecutive_kernel_delay_us * PS_PER_US)
        cls = np.where(host, 0, np.where(kernel, 1, 2))
        cls[0] = -1  # no gap before the first operation
        row = {"device": device, "stream": stream, "loc": profile.location(ops.location[rows[0]]),
               "idle_ps": int(gap.sum()), "span_ps": int(end.max() - start[0])}
        for c, name in enumerate(CLASSES):
            row[f"{name}_ps"] = int(gap[cls == c].sum())
            mine = np.flatnonzero((cls == c) & (gap > 0))
            if len(mine):
                worst = mine[np.argmax(gap[mine])]
                row[f"{name}_longest"] = {"t0": int(before[worst]), "t1": int(start[worst]),
                                          "task": int(ops.task[rows[worst]])}
        out.append(row)
    return out
