"""I14, speed of light on real kernels, where the profile recorded GPU counters (Perfetto's
GpuCompute, which reads counter samples inside each kernel; Nsight Compute's
``SOLBottleneck`` rule; why-layer.md §3, §4, §9.2 I14). Without them it says so and
finds nothing: a profiler's timeline alone cannot tell how busy a kernel kept the SMs.

The counters are series at a GPU (``GPU[d]``), each value holding from its sample until
the next (the trace contract): nsys ``GPU_METRICS``, or Chrome/Perfetto counter events
of the GPU's process. Per kernel name on device d, over the time of its instances that
the samples cover, the time-weighted mean of each series, as a share of peak:

- **C**, SM throughput: Nsight Compute's ``sm__throughput`` where the trace has it;
  else the larger of nsys' ``SM Issue`` and ``Tensor Active`` throughputs (NCU's C is
  the largest of the SM's sub-unit throughputs; these are the two nsys samples);
- **M**, memory throughput: NCU's ``gpu__compute_memory_throughput`` where present;
  else nsys' ``DRAM Read`` + ``DRAM Write Bandwidth`` throughputs (one DRAM's peak
  shared by both directions; hedged: nsys documents them as shares of one peak).

Classification, NCU's rule with S7's thresholds: C or M at ``bound`` (80 %) or above:
compute- or memory-bound (the higher); else both below ``latency`` (60 %):
latency-bound; else differing by ``gap`` (10 points) or more: compute- or
memory-heavier; else balanced. As for simulated launches (S7), the bound and heavier
kernels are findings.
"""
from __future__ import annotations

import re

import numpy as np

from .kernels import kernel_summary
from .ops import KERNEL, Profile

NCU_COMPUTE = "sm__throughput.avg.pct_of_peak_sustained_elapsed"
NCU_MEMORY = "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed"
NSYS_COMPUTE = ("SM Issue [Throughput %]", "Tensor Active [Throughput %]")
NSYS_MEMORY = ("DRAM Read Bandwidth [Throughput %]", "DRAM Write Bandwidth [Throughput %]")
GPU = re.compile(r"^GPU\[(\d+)\]$").match
NEEDS = ("needs counters: GPU counter series of SM throughput (Nsight Compute's"
         f" {NCU_COMPUTE}, or nsys' {' / '.join(NSYS_COMPUTE)}) and memory throughput"
         f" ({NCU_MEMORY}, or nsys' {' + '.join(NSYS_MEMORY)}) sampled inside the kernels,"
         " such as nsys profile --gpu-metrics-devices=all records")


def _find(named: dict[str, int], *metrics: str) -> list[int]:
    """The ids of the series that are one of ``metrics`` (a Chrome counter event with
    several values names each series ``EVENT.KEY``)."""
    return [sid for m in metrics for name, sid in named.items()
            if name == m or name.endswith("." + m)]


def _covered_mean(times: np.ndarray, values: np.ndarray, starts: np.ndarray,
                  ends: np.ndarray) -> tuple[float, int]:
    """(∫ value over the intervals, the part of them after the first sample), the series
    a step function holding each value until the next sample."""
    if not len(times):
        return 0.0, 0
    area_at = np.r_[0.0, np.cumsum(values[:-1] * np.diff(times))]

    def area(t: np.ndarray) -> np.ndarray:
        i = np.searchsorted(times, t, side="right") - 1
        return area_at[i] + values[i] * (t - times[i])
    lo = np.maximum(starts, times[0])
    keep = ends > lo
    lo, hi = lo[keep], ends[keep]
    return float((area(hi) - area(lo)).sum()), int((hi - lo).sum())


def _classify(c: float, m: float, bound: float, latency: float, gap: float) -> str:
    """Nsight Compute's SOLBottleneck verdict on C and M (shares of peak)."""
    if c >= bound or m >= bound:
        return "compute-bound" if c >= m else "memory-bound"
    if c < latency and m < latency:
        return "latency-bound"
    if abs(c - m) >= gap:
        return "compute-heavier" if c > m else "memory-heavier"
    return "balanced"


def speed_of_light(profile: Profile, bound: float, latency: float, gap: float) -> dict:
    """Per kernel name with counter samples inside it: C, M and NCU's verdict; or what
    the trace lacks."""
    series: dict[int, dict[str, int]] = {}
    for sid, loc, name in profile.trace.gpu_counter_series():
        series.setdefault(int(GPU(loc)[1]), {})[name] = sid
    groups = {}
    for device, named in series.items():
        compute = _find(named, NCU_COMPUTE) or _find(named, *NSYS_COMPUTE)
        memory = _find(named, NCU_MEMORY) or _find(named, *NSYS_MEMORY)
        if compute and memory:
            groups[device] = (compute, memory)
    if not groups:
        return {"unavailable": NEEDS}
    samples = {sid: profile.trace.counter_samples(sid)
               for compute, memory in groups.values() for sid in compute + memory}
    ops = profile.ops
    rows = []
    for k in kernel_summary(profile):
        mine = (ops.category == KERNEL) & np.isin(
            ops.kind, [kind for kind, n in profile.names.items() if n == k["name"]])
        for device, (compute, memory) in groups.items():
            on = mine & (ops.device == device)
            if not on.any():
                continue
            starts, ends = ops.start[on], ops.end[on]
            c_parts = [_covered_mean(*samples[sid], starts, ends) for sid in compute]
            m_parts = [_covered_mean(*samples[sid], starts, ends) for sid in memory]
            covered = min(t for _, t in c_parts + m_parts)
            if not covered:
                continue
            # C: the busiest SM sub-unit; M: the two directions of the one DRAM
            c = max(a / t for a, t in c_parts) / 100
            m = sum(a / t for a, t in m_parts) / 100
            rows.append({"name": k["name"], "device": device, "instances": int(on.sum()),
                         "total_ps": int((ends - starts).sum()), "covered_ps": covered,
                         "compute_sol": c, "memory_sol": m,
                         "kind": _classify(c, m, bound, latency, gap), "longest": k["longest"]})
    if not rows:
        return {"unavailable": NEEDS + " (the trace has such series, but no sample falls"
                                       " inside a kernel)"}
    return {"kernels": rows, "thresholds": {"bound": bound, "latency": latency, "gap": gap}}
