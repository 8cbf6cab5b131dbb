"""I5 launch statistics and I8 launch-queue length, from each operation's launching call.

I5 (``hta/analyzers/cuda_kernel_analysis.py:cuda_kernel_launch_stats``; nsys
``cuda_kern_exec_sum``): per (call, operation) pair, cpu = call length, gpu = operation
length, launch delay = max(0, op start − call end); nsys' queue time = op start − call
end where that is ≥ 0 (QCount: the launches queued a positive time). Short kernels: cpu
≤ runtime cutoff and gpu < cpu; runtime outliers: cpu > cutoff; delay outliers: delay >
cutoff.

I8 (``hta/analyzers/trace_counters.py:get_queue_length_time_series``): per stream, +1 at
each launching call's start, −1 at each operation's start; the queue length after each
step, summarised as HTA does (count, mean, std, min, quartiles, max over the steps), and
the time spent at the maximum queue length or above. At one instant an operation's
start counts before a launch (HTA's own order there is an unstable sort's).

Which calls launch: every call linked to an operation; ``like_hta`` keeps HTA's lists
(``HTA_LAUNCH_STATS``, ``HTA_QUEUED``), so its figures can be held against HTA's.
"""
from __future__ import annotations

import numpy as np

from .ops import Profile
from .trace import COLUMN

PS_PER_US = 10 ** 6
HTA_LAUNCH_STATS = frozenset({"cudaLaunchKernel", "cudaLaunchKernelExC", "cudaMemcpyAsync",
                              "cudaMemsetAsync"})
HTA_QUEUED = HTA_LAUNCH_STATS | {"cuLaunchKernel", "hipLaunchKernel", "hipExtModuleLaunchKernel",
                                 "hipMemcpyAsync", "hipMemsetAsync", "hipMemcpyWithStream"}


def _launched(profile: Profile, names: frozenset[str]) -> np.ndarray:
    """Rows of ``profile.ops`` with a launching call (of ``names`` under ``like_hta``)."""
    ops = profile.ops
    rows = np.flatnonzero(ops.launch >= 0)
    if profile.like_hta:
        kinds = profile.tasks[ops.launch[rows], COLUMN["kind"]]
        allowed = [k for k, name in profile.names.items() if name in names]
        rows = rows[np.isin(kinds, allowed)]
    return rows


def launch_stats(profile: Profile, runtime_cutoff_us: int, delay_cutoff_us: int) -> list[dict]:
    """One row per device: the launch statistics, in ps, and the worst delay's operation."""
    ops, tasks = profile.ops, profile.tasks
    rows = _launched(profile, HTA_LAUNCH_STATS)
    call = ops.launch[rows]
    cpu = tasks[call, COLUMN["end_ps"]] - tasks[call, COLUMN["start_ps"]]
    gpu = ops.end[rows] - ops.start[rows]
    queue = ops.start[rows] - tasks[call, COLUMN["end_ps"]]
    delay = queue.clip(min=0)
    runtime_cut, delay_cut = runtime_cutoff_us * PS_PER_US, delay_cutoff_us * PS_PER_US
    out = []
    for device in np.unique(ops.device[rows]).tolist():
        on = ops.device[rows] == device
        worst = int(np.argmax(np.where(on, delay, -1)))
        out.append({
            "device": device, "launches": int(on.sum()), "cpu_ps": int(cpu[on].sum()),
            "gpu_ps": int(gpu[on].sum()), "launch_delay_ps": int(delay[on].sum()),
            "queued": int((queue[on] > 0).sum()),
            "short_kernels": int((on & (cpu <= runtime_cut) & (gpu < cpu)).sum()),
            "runtime_outliers": int((on & (cpu > runtime_cut)).sum()),
            "delay_outliers": int((on & (delay > delay_cut)).sum()),
            "worst_delay": {"task": int(ops.task[rows[worst]]), "delay_ps": int(delay[worst]),
                            "loc": profile.location(ops.location[rows[worst]]),
                            "call": int(tasks[call[worst], COLUMN["id"]]),
                            "thread": profile.location(tasks[call[worst], COLUMN["location"]]),
                            "t0": int(tasks[call[worst], COLUMN["start_ps"]]),
                            "t1": int(ops.end[rows[worst]])}})
    return out


def _queue_steps(profile: Profile, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """HTA's queue-length steps of the operations ``rows`` (of one stream): +1 at each
    launching call's start, −1 at each operation's start, an operation before a launch
    at one instant. Returns (times, the length after each step, the step's position in
    ``np.r_[calls, operations]``)."""
    calls = profile.ops.launch[rows]
    times = np.r_[profile.tasks[calls, COLUMN["start_ps"]], profile.ops.start[rows]]
    step = np.r_[np.ones(len(calls), np.int64), -np.ones(len(rows), np.int64)]
    order = np.lexsort((step, times))
    return times[order], np.cumsum(step[order]), order


def _streams(profile: Profile, rows: np.ndarray):
    """Yield (device, stream, the ``rows`` on that stream), streams in order."""
    ops = profile.ops
    for device, stream in sorted(set(zip(ops.device[rows].tolist(), ops.stream[rows].tolist()))):
        yield device, stream, rows[(ops.device[rows] == device) & (ops.stream[rows] == stream)]


def queue_at_launch(profile: Profile) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(rows of ``profile.ops`` with a launching call, the stream's queue length just
    after the call's +1, just after the operation's −1): HTA's ``queue_length`` joined
    to the call and to the operation, which its critical path reads."""
    rows = _launched(profile, HTA_QUEUED)
    at_call, at_op = np.zeros(len(rows), np.int64), np.zeros(len(rows), np.int64)
    out = []
    for _, _, on in _streams(profile, rows):
        _, length, order = _queue_steps(profile, on)
        after = np.empty_like(length)
        after[order] = length
        out.append((on, after[:len(on)], after[len(on):]))
    if out:
        rows = np.concatenate([o[0] for o in out])
        at_call, at_op = np.concatenate([o[1] for o in out]), np.concatenate([o[2] for o in out])
    return rows, at_call, at_op


def queue_length(profile: Profile, max_queue: int) -> list[dict]:
    """Per (device, stream): HTA's queue-length summary and the time at ``max_queue``."""
    out = []
    for device, stream, on in _streams(profile, _launched(profile, HTA_QUEUED)):
        times, length, _ = _queue_steps(profile, on)
        held = np.diff(times)  # each step's value holds until the next step
        full = int(held[length[:-1] >= max_queue].sum())
        q1, median, q3 = np.quantile(length, [0.25, 0.5, 0.75]).tolist()
        out.append({"device": device, "stream": stream,
                    "loc": profile.location(profile.ops.location[on[0]]),
                    "count": len(length), "mean": float(length.mean()),
                    "std": float(length.std(ddof=1)) if len(length) > 1 else 0.0,
                    "min": int(length.min()), "q1": q1, "median": median, "q3": q3,
                    "max": int(length.max()), "at_max_ps": full,
                    "peak_ps": int(times[np.argmax(length)])})
    return out
