"""The analysis of a trace as one document: per launch, every analysis; then the findings.

``analyze`` returns ``{"kernels": [...], "findings": [...]}``, the shape the CLI prints
with ``--json`` and the app reads. Each launch carries one entry per analysis of
why-layer.md §9.1; an analysis the trace cannot support is ``{"unavailable": reason}``
(and gives no finding), one not built yet is null.
"""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ..user_input import InputError
from .blocking import blocking
from .budget import time_budget
from .cpi import cpi_stack
from .critical_path import critical_path, public_path
from .cu_idle import cu_idle
from .distribution import load_latency
from .findings import (
    blocking_findings,
    budget_findings,
    critical_path_findings,
    hint_findings,
    idle_findings,
    imbalance_findings,
    latency_findings,
    public,
    ranked,
    roofline_findings,
    sol_findings,
    stall_findings,
    what_if_findings,
)
from .hints import kernel_hints
from .imbalance import imbalance
from .memory_latency import memory_latency
from .profile.report import analyze_profile
from .profile.trace import trace_source
from .roofline import roofline
from .scope import COLUMN, Scope, Unavailable
from .sol import speed_of_light
from .stalls import stall_breakdown
from .thresholds import Thresholds
from .trace import Kernel, Trace
from .what_if import measure

ANALYSES = ("budget", "cpi_stack", "stalls", "memory_latency", "blocking", "imbalance", "sol",
            "classification", "roofline", "critical_path", "cu_idle", "hints", "what_if")
"""A launch's entries, in the documented order; those not built yet are null."""


def _run(analysis: Callable[[], dict]) -> dict:
    try:
        return analysis()
    except Unavailable as exc:
        return {"unavailable": str(exc)}


def select_kernels(kernels: list[Kernel], index: int | None, window: tuple[int, int] | None,
                   path: Path) -> list[Kernel]:
    """The launches to analyze: one by index, or those overlapping the window."""
    if not kernels:
        raise InputError(f"{path}: the trace holds no kernel launch")
    if index is not None:
        if not 0 <= index < len(kernels):
            raise InputError(f"--kernel {index}: the trace holds launches 0 to {len(kernels) - 1}")
        kernels = [kernels[index]]
    if window is not None:
        kernels = [k for k in kernels if k.start_ps < window[1] and k.end_ps > window[0]]
        if not kernels:
            raise InputError(f"--window {window[0]}:{window[1]}: overlaps no launch"
                             + (" of those chosen" if index is not None else ""))
    return kernels


def analyze_kernel(scope: Scope, t: Thresholds) -> tuple[dict, list[dict]]:
    """One launch's entry and its findings."""
    k = scope.kernel
    budget = _run(lambda: time_budget(scope, t.tail_frac))
    idle = _run(lambda: cu_idle(scope))
    waves = budget.get("waves_per_cu")
    sol = _run(lambda: speed_of_light(scope, t.sol_bound, t.sol_latency, t.sol_gap, waves))
    hints = _run(lambda: kernel_hints(scope, t.divergent_wavefronts, t.lds_conflict_rate,
                                      t.lds_degree))
    stalls = _run(lambda: stall_breakdown(scope))
    path = _run(lambda: public_path(critical_path(scope)))
    latency = _run(lambda: {**memory_latency(scope), "distribution": load_latency(scope, t.outliers)})
    blocked = _run(lambda: blocking(scope, t.saturated_busy, t.plateau_cv, t.back_pressure))
    uneven = _run(lambda: imbalance(scope))
    roof = _run(lambda: roofline(scope))
    built = {"roofline": roof, "memory_latency": latency, "blocking": blocked, "imbalance": uneven,
             "budget": budget, "cpi_stack": _run(lambda: cpi_stack(scope)), "stalls": stalls,
             "sol": sol, "classification": sol.get("classification"), "cu_idle": idle,
             "hints": hints, "critical_path": path}
    entry = {"launch": k.index, "name": k.name, "time_ps": k.duration_ps,
             **{name: built.get(name) for name in ANALYSES}}
    window = (scope.lo, scope.hi)
    found = []
    if "unavailable" not in budget:
        found += budget_findings(k.index, budget, t, _last_group(scope))
    if "unavailable" not in idle:
        found += idle_findings(k.index, idle, t, window, _dispatch_window(scope))
    if "unavailable" not in sol:
        span = (max(scope.lo, budget.get("boundaries_ps", [scope.lo] * 2)[1]), scope.hi)
        unit = sol["classification"]["unit"]
        busiest = sol["units"][unit]["busiest"] if unit else None
        found += sol_findings(k.index, sol, t, span, busiest)
    if "unavailable" not in stalls:
        found += stall_findings(k.index, stalls, t, window)
    if "unavailable" not in hints:
        found += hint_findings(k.index, hints, t)
    if "unavailable" not in path:
        found += critical_path_findings(k.index, path, t)
    if "unavailable" not in latency:
        found += latency_findings(k.index, latency, None if "unavailable" in path else path, window)
    if "unavailable" not in blocked:
        found += blocking_findings(k.index, blocked, t)
    if "unavailable" not in roof:
        found += roofline_findings(k.index, roof, t, window)
    if "unavailable" not in uneven:
        found += imbalance_findings(k.index, uneven, t, window)
    return entry, found


def _last_group(scope: Scope) -> dict | None:
    """The work-group that ends the launch: the task behind its tail."""
    wg = scope.work_groups
    if not len(wg):
        return None
    row = wg[wg[:, COLUMN["end"]].argmax()]
    return {"loc": scope.trace.components.name[int(row[COLUMN["location"]])],
            "task": int(row[COLUMN["id"]])}


def _dispatch_window(scope: Scope) -> tuple[int, int]:
    d = scope.dispatches
    return (int(d[0]), scope.next_cycle_ps(int(d[-1]))) if len(d) else (scope.lo, scope.hi)


def analyze(path: str | Path, kernel: int | None = None, window: tuple[int, int] | None = None,
            thresholds: Thresholds | None = None, what_if: Path | None = None,
            like_hta: bool = False) -> dict:
    """Every analysis of the chosen launches of the trace at ``path``, and the findings,
    ranked by the time they explain. With ``what_if`` (a sweep directory), each launch's
    limiting key is re-simulated halved and doubled there (S13). An imported profile
    is explained by the profile analyses (``profile.report``; ``like_hta`` reads it as
    HolisticTraceAnalysis does); launches and what-ifs are the simulator's."""
    t = thresholds or Thresholds()
    if trace_source(path) != "simulator":
        if kernel is not None or what_if is not None:
            raise InputError("--kernel and --what-if explain simulator traces; this one was"
                             " imported (use --window)")
        return analyze_profile(path, window, t, like_hta)
    with Trace(path) as trace:
        kernels = select_kernels(trace.kernels(), kernel, window, trace.path)
        entries, found = [], []
        for k in kernels:
            entry, findings = analyze_kernel(Scope(trace, k, window), t)
            entries.append(entry)
            found += findings
        found = ranked(found)
        if what_if is not None:
            found = ranked(found + _what_ifs(trace, entries, found, t, Path(what_if)))
    return {"kernels": entries, "findings": [public(f) for f in found]}


def _what_ifs(trace: Trace, entries: list[dict], found: list[dict], t: Thresholds,
              directory: Path) -> list[dict]:
    """Measure each launch's limiting key: that of its finding explaining the most."""
    limiting = {}
    for f in found:
        if f.get("key"):
            limiting.setdefault(f["kernel"], f["key"])
    results = {}
    for key in dict.fromkeys(limiting.values()):
        try:
            results[key] = measure(trace, key, directory / key)
        except Unavailable as exc:
            results[key] = str(exc)
    out = []
    for entry in entries:
        index = entry["launch"]
        result = results.get(limiting.get(index))
        if result is None:
            entry["what_if"] = {"unavailable": "no finding names a configuration key"}
        elif isinstance(result, str):
            entry["what_if"] = {"unavailable": result}
        else:
            entry["what_if"] = [{"key": r["key"], "factor": r["factor"], "speedup": r["speedup"][index]}
                                for r in result]
            out += what_if_findings(index, result, entry["time_ps"], t, str(trace.path))
    return out
