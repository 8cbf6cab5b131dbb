"""The thresholds of the findings, each a parameter with its stated default (rule R3).

Sources are in why-layer.md §9.1 (simulated runs) and §9.2 (real profiles, I1–I14);
"(proposed)" marks values no anchor sets, to be tuned.
The CLI offers each as ``--NAME`` (underscores as dashes), with its help text.
"""
from __future__ import annotations

from dataclasses import dataclass, field


def _param(default: float, text: str):
    return field(default=default, metadata={"help": text})


@dataclass(frozen=True)
class Thresholds:
    tail_frac: float = _param(0.5, "S1: the tail starts when fewer than this share of the peak"
                                   " of busy CUs hold work-groups")
    launch_share: float = _param(0.1, "S1: report the launch overhead above this share of the"
                                      " launch (proposed)")
    tail_share: float = _param(0.1, "S1: report the tail when the CU-time it idles exceeds this"
                                    " share of the launch (proposed)")
    idle_share: float = _param(0.05, "S10: report an idle class above this share of CU-time"
                                     " (proposed)")
    dispatch_share: float = _param(0.05, "S10: report dispatch-bound time above this share of"
                                         " the launch (proposed)")
    not_issued: float = _param(0.3, "S3: issue-limited when wavefronts are ready but not issued"
                                    " for more than this share of their time (proposed)")
    sol_bound: float = _param(0.8, "S7: a unit at or above this share of its peak bounds the"
                                   " launch (Nsight Compute)")
    sol_latency: float = _param(0.6, "S7: latency-bound when compute and memory are both below"
                                     " this share (Nsight Compute)")
    sol_gap: float = _param(0.1, "S7: compute- or memory-heavier when they differ by at least"
                                 " this (Nsight Compute)")
    divergent_wavefronts: float = _param(0.5, "S12: divergence hint when this share of"
                                              " wavefronts diverge (proposed)")
    lds_conflict_rate: float = _param(0.1, "S12: bank-conflict hint above this share of"
                                           " conflicted LDS instructions (proposed)")
    lds_degree: int = _param(2, "S12: bank-conflict hint at this worst conflict degree (proposed)")
    imbalance: float = _param(1.5, "S6: report peers whose max ÷ mean load reaches this"
                                   " (proposed)")
    back_pressure: float = _param(0.05, "S5: back-pressured when a buffer is full this share of"
                                        " the window (proposed)")
    saturated_busy: float = _param(0.95, "S5: saturated when busy at least this share of the"
                                         " window (with a flat plateau; proposed)")
    plateau_cv: float = _param(0.1, "S5: a flat plateau: the CV of tasks in flight per bin is at"
                                    " most this (proposed)")
    outliers: int = _param(20, "S11: list at most this many outliers")
    roof_share: float = _param(0.5, "S8: report a launch below this share of its roofline"
                                    " (proposed)")
    critical_share: float = _param(0.5, "S9: report the class that takes at least this share of"
                                        " the launch's critical path (proposed)")
    what_if_change: float = _param(0.05, "S13: report a what-if whose speed-up differs from 1 by"
                                         " at least this")
    idle_share_device: float = _param(0.1, "I1: report a device idle above this share of its"
                                           " span (proposed)")
    runtime_cutoff_us: int = _param(50, "I5: a launch call longer than this many µs is a"
                                        " runtime outlier (HTA)")
    launch_delay_cutoff_us: int = _param(100, "I5: a launch delay above this many µs is an"
                                              " outlier (HTA)")
    consecutive_kernel_delay_us: int = _param(30, "I4: a gap on a stream below this many µs"
                                                  " is kernel wait (HTA)")
    max_queue_length: int = _param(1024, "I8: a stream's launch queue holds at most this many"
                                         " operations (HTA, CUDA)")
    kernel_kernel_delay_us: int = _param(1500, "I10: consecutive operations on a stream closer"
                                               " than this many µs wait for each other on the"
                                               " critical path (HTA)")
    overlap_share: float = _param(0.3, "I9: report communication overlapped by computation"
                                       " less than this share (nsys-ai)")
    noise_us: int = _param(5, "I2: a gap shorter than this many µs is noise (TraceLens)")
    gap_us: int = _param(1000, "I2: list gaps at least this many µs long (nsys-ai's long gap;"
                               " nsys' own rule: 500000)")
    launch_to_exec_us: int = _param(10, "I4: a launch not prequeued whose operation starts more"
                                        " than this many µs after the call is an anomaly"
                                        " (TraceLens)")
    runtime_share: float = _param(0.25, "I4: a gap is runtime-dominated when one runtime call"
                                        " covers this share of it (TraceLens)")
    cpu_share: float = _param(0.2, "I4: a gap is CPU-dominated when CPU self time covers this"
                                   " share of it (TraceLens)")
    util_chunks: int = _param(30, "I3: cut a device's span into this many chunks (nsys)")
    util_threshold: float = _param(0.5, "I3: report chunks in use less than this share (nsys)")
    hotspot_share: float = _param(0.5, "I7: report a kernel holding more than this share of"
                                        " kernel time (nsys-ai)")
    pace_cv: float = _param(0.1, "I12: iterations jitter when the coefficient of variation of"
                                 " their start-to-start deltas exceeds this (proposed)")
