"""The analysis of an imported profile as one document, in the shape of a simulated
run's (``analysis.report``): ``{"kernels", "devices", "analyses", "findings"}``.

``kernels`` is the kernel summary (I7), ``devices`` the GPU time budget (I1: span,
compute, non-compute, idle and copy-only ps per device), ``analyses`` every other
analysis by rule name, and ``findings`` what they say, ranked by the GPU time they
explain. ``like_hta`` reads the trace as HolisticTraceAnalysis does (``ops``), so the
figures can be held against HTA's. ``scope`` is the range or profiler step the analyses
were cut to (None: the window given, or the whole profile).
"""
from __future__ import annotations

from pathlib import Path

from ...tracing.writer import TraceError
from ..findings import ranked
from ..thresholds import Thresholds
from .budget import time_budget
from .critical_path import critical_path, summary
from .findings import (
    budget_findings,
    critical_path_findings,
    gap_findings,
    hotspot_findings,
    idle_findings,
    launch_findings,
    overlap_findings,
    pace_findings,
    queue_findings,
    rule_findings,
    sol_findings,
    starvation_findings,
    utilization_findings,
)
from .gaps import gaps, low_utilization
from .idle import idle_breakdown
from .kernels import kernel_summary
from .launches import launch_stats, queue_length
from .ops import cut, load
from .overlap import overlap
from .pace import pace
from .ranges import nvtx_projection, scope
from .rules import anti_patterns
from .sol import speed_of_light
from .starvation import starvation
from .trace import ProfileTrace


def analyze_profile(path: str | Path, window: tuple[int, int] | None = None,
                    thresholds: Thresholds | None = None, like_hta: bool = False,
                    range_name: str | None = None, step: int | None = None,
                    pace_of: str | None = None) -> dict:
    """Every profile analysis of the trace at ``path``, cut to ``window`` (in ps), or to
    the GPU work of the range ``range_name`` (``NAME`` or ``NAME#k``) or profiler step
    ``step`` (``ranges.scope``, given as ``"scope"``); the pace of the iterations the
    range or kernel ``pace_of`` delimits (None: the profiler steps)."""
    t = thresholds or Thresholds()
    scoped = None
    with ProfileTrace(path) as trace:
        profile = load(trace, like_hta=like_hta, window=window)
        if range_name is not None or step is not None:
            scoped = scope(profile, range_name, step)
            profile = cut(profile, (scoped["t0"], scoped["t1"]))
        if not len(profile.ops):
            raise TraceError(f"{trace.path}: an imported trace ({trace.source}) with no GPU"
                             " operation on a stream"
                             + (" in the window" if profile.window else "")
                             + "; the profile analyses explain kernels, copies and memsets")
        devices = time_budget(profile)
        analyses = {
            "idle-cause": idle_breakdown(profile, t.consecutive_kernel_delay_us),
            "idle-gaps": starvation(profile, t.noise_us, t.launch_to_exec_us, t.runtime_share,
                                    t.cpu_share),
            "launch-stats": launch_stats(profile, t.runtime_cutoff_us, t.launch_delay_cutoff_us),
            "queue-length": queue_length(profile, t.max_queue_length),
            "overlap": overlap(profile),
            "gaps": gaps(profile, t.noise_us, t.gap_us),
            "low-utilization": low_utilization(profile, t.util_chunks, t.util_threshold),
            "anti-patterns": anti_patterns(profile),
            "critical-path": summary(profile, critical_path(profile, t.kernel_kernel_delay_us)),
            "nvtx-projection": nvtx_projection(profile),
            "pace": pace(profile, t.pace_cv, t.outliers, pace_of),
            "speed-of-light": speed_of_light(profile, t.sol_bound, t.sol_latency, t.sol_gap),
        }
        kernels = kernel_summary(profile)
    found = (budget_findings(devices, t) + idle_findings(analyses["idle-cause"], t)
             + starvation_findings(analyses["idle-gaps"], t)
             + launch_findings(analyses["launch-stats"], t)
             + queue_findings(analyses["queue-length"], t)
             + overlap_findings(analyses["overlap"], t, devices)
             + gap_findings(analyses["gaps"], t)
             + utilization_findings(analyses["low-utilization"], t)
             + rule_findings(analyses["anti-patterns"]) + hotspot_findings(kernels, t)
             + critical_path_findings(analyses["critical-path"], t)
             + pace_findings(analyses["pace"], t)
             + sol_findings(analyses["speed-of-light"], t))
    return {"source": trace.source, "like_hta": like_hta, "scope": scoped, "kernels": kernels,
            "devices": [{k: r[k] for k in ("device", "span_ps", "compute_ps", "non_compute_ps",
                                           "idle_ps", "copy_only_ps")} for r in devices],
            "analyses": analyses, "findings": ranked(found)}
