"""I13, two profiles compared: their operations by name, and the "why" of each (why-layer.md
§2 Trace diff, §9.2 I13).

**Operations** (HolisticTraceAnalysis' ``TraceDiff.compare_traces`` and ``ops_diff``):
per name, the count and total duration of the tasks of that name (CPU operators,
annotations, runtime calls, GPU operations) in A and in B; ``diff_counts`` = B − A,
``diff_ps`` likewise. A name is *added* (none in A), *deleted* (none in B), *increased*,
*decreased* or *unchanged* by its count. The whole profile by default; or one profiler
step with HTA's membership rule: the CPU tasks that start inside the step, and the GPU
tasks whose launching call is one of them (``hta/common/trace.py:add_iteration``).

**Analyses**: the figures of each report side by side, A and B, per analysis: the I1
time budget and the I4 idle causes (summed over the streams) and I5 launch statistics
per device, the devices paired in the order of their numbers (two profiles of one
program rarely share device numbers); the shares of the I10 critical path by bound;
the I12 pace. Each row names its unit, so a reader can difference it.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...tracing.writer import TraceError
from .ops import GPU_LOCATION, Profile
from .ranges import STEP
from .trace import COLUMN

CATEGORIES = ("added", "deleted", "increased", "decreased", "unchanged")


def _step_members(profile: Profile, step: int) -> np.ndarray:
    """Which tasks belong to profiler step ``step`` by HTA's rule (a bool per task row)."""
    tasks = profile.tasks
    names = {k: n for k, n in profile.names.items() if STEP.match(n)}
    on_gpu = np.isin(tasks[:, COLUMN["location"]],
                     [loc for loc, n in profile.trace.locations.items() if GPU_LOCATION.match(n)])
    kinds = [k for k, n in names.items() if int(STEP.match(n)[1]) == step]
    rows = np.flatnonzero(np.isin(tasks[:, COLUMN["kind"]], kinds) & ~on_gpu)
    if not len(rows):
        steps = sorted({int(STEP.match(n)[1]) for n in names.values()})
        raise TraceError(f"{profile.trace.path}: there is no ProfilerStep#{step}"
                         + (f"; the trace has steps {steps[0]} to {steps[-1]}" if steps else ""))
    lo, hi = tasks[rows[0], COLUMN["start_ps"]], tasks[rows[0], COLUMN["end_ps"]]
    start = tasks[:, COLUMN["start_ps"]]
    member = ~on_gpu & (start >= lo) & (start < hi)
    for gpu in (profile.ops, profile.syncs):
        launched = gpu.launch >= 0
        member[profile.row_of(gpu.task[launched])] = member[gpu.launch[launched]]
    return member


def ops_summary(profile: Profile, step: int | None = None) -> dict[str, tuple[int, int]]:
    """Per task name: (count, total duration in ps), over the whole profile or one step."""
    tasks = profile.tasks
    if step is not None:
        tasks = tasks[_step_members(profile, step)]
    out: dict[str, tuple[int, int]] = {}
    if not len(tasks):
        return out
    order = np.argsort(tasks[:, COLUMN["kind"]], kind="stable")
    kind = tasks[order, COLUMN["kind"]]
    first = np.flatnonzero(np.r_[True, kind[1:] != kind[:-1]])
    counts = np.diff(np.r_[first, len(kind)])
    # integer sums: a float's 53 bits would round a long profile's ps
    totals = np.add.reduceat(tasks[order, COLUMN["end_ps"]] - tasks[order, COLUMN["start_ps"]],
                             first)
    for k, n, total in zip(kind[first].tolist(), counts.tolist(), totals.tolist()):
        n0, total0 = out.get(profile.name(k), (0, 0))  # one name in several categories
        out[profile.name(k)] = (n0 + n, total0 + total)
    return out


def _category(a: int, b: int) -> str:
    if not a:
        return "added"
    if not b:
        return "deleted"
    return "increased" if b > a else "decreased" if b < a else "unchanged"


def ops_diff(a: dict[str, tuple[int, int]], b: dict[str, tuple[int, int]]) -> list[dict]:
    """Every name of either summary with its counts and totals in A and B, their
    differences and its category; the largest change of total duration first."""
    rows = []
    for name in set(a) | set(b):
        (ca, ta), (cb, tb) = a.get(name, (0, 0)), b.get(name, (0, 0))
        rows.append({"name": name, "count_a": ca, "count_b": cb, "total_a_ps": ta,
                     "total_b_ps": tb, "diff_counts": cb - ca, "diff_ps": tb - ta,
                     "category": _category(ca, cb)})
    return sorted(rows, key=lambda r: (-abs(r["diff_ps"]), r["name"]))


@dataclass(frozen=True)
class Row:
    """One figure of an analysis in A and in B (None where a profile lacks it)."""

    analysis: str
    label: str
    a: float | int | None
    b: float | int | None
    unit: str   # "ps", "count", "fraction" or "number"


BUDGET = (("span", "span_ps"), ("compute", "compute_ps"), ("non-compute", "non_compute_ps"),
          ("copy-only", "copy_only_ps"), ("idle", "idle_ps"))
IDLE = (("host wait", "host_wait_ps"), ("kernel wait", "kernel_wait_ps"), ("other", "other_ps"))
LAUNCHES = (("launches", "launches", "count"), ("CPU time of the calls", "cpu_ps", "ps"),
            ("GPU time of the operations", "gpu_ps", "ps"),
            ("launch delay", "launch_delay_ps", "ps"), ("queued launches", "queued", "count"),
            ("short kernels", "short_kernels", "count"),
            ("runtime outliers", "runtime_outliers", "count"),
            ("delay outliers", "delay_outliers", "count"))


def _by_device(rows: list[dict]) -> dict[int, dict]:
    """Rows keyed by device; a per-stream analysis summed over its streams."""
    out: dict[int, dict] = {}
    for r in rows:
        entry = out.setdefault(r["device"], {})
        for key, value in r.items():
            if key != "device" and isinstance(value, int):
                entry[key] = entry.get(key, 0) + value
    return out


def _paired(a: dict[int, dict], b: dict[int, dict]):
    """(label, A's entry, B's entry) per device, paired in device order."""
    da, db = sorted(a), sorted(b)
    for i in range(max(len(da), len(db))):
        x = da[i] if i < len(da) else None
        y = db[i] if i < len(db) else None
        label = f"GPU {x if x is not None else '–'} ↔ GPU {y if y is not None else '–'}" \
            if x != y else f"GPU {x}"
        yield label, a.get(x, {}), b.get(y, {})


def analyses_diff(report_a: dict, report_b: dict) -> list[Row]:
    """The figures of two profile reports (``analyze_profile``) side by side."""
    rows: list[Row] = []
    for label, x, y in _paired(_by_device(report_a["devices"]), _by_device(report_b["devices"])):
        rows += [Row("I1 time budget", f"{label} {name}", x.get(key), y.get(key), "ps")
                 for name, key in BUDGET]
    idle_a, idle_b = (_by_device(r["analyses"]["idle-cause"]) for r in (report_a, report_b))
    for label, x, y in _paired(idle_a, idle_b):
        rows += [Row("I4 idle causes (HTA, summed over the streams)", f"{label} {name}",
                     x.get(key), y.get(key), "ps")
                 for name, key in IDLE]
    launch_a, launch_b = (_by_device(r["analyses"]["launch-stats"]) for r in (report_a, report_b))
    for label, x, y in _paired(launch_a, launch_b):
        rows += [Row("I5 launch statistics", f"{label} {name}", x.get(key), y.get(key), unit)
                 for name, key, unit in LAUNCHES]
    path_a, path_b = report_a["analyses"]["critical-path"], report_b["analyses"]["critical-path"]
    rows.append(Row("I10 critical path", "length", path_a["length_ps"], path_b["length_ps"], "ps"))
    for bound in dict.fromkeys([*path_a["bound_by"], *path_b["bound_by"]]):
        share = [p["bound_by"].get(bound, {}).get("share", 0.0) if p["length_ps"] else None
                 for p in (path_a, path_b)]
        if any(share):
            rows.append(Row("I10 critical path", f"{bound.replace('_', ' ')} share", *share,
                            "fraction"))
    pace_a, pace_b = report_a["analyses"]["pace"], report_b["analyses"]["pace"]
    if "unavailable" not in pace_a or "unavailable" not in pace_b:
        rows += [Row("I12 pace", label, pace_a.get(key), pace_b.get(key), unit)
                 for label, key, unit in (("iterations", "count", "count"),
                                          ("median delta", "median_delta_ps", "ps"),
                                          ("CV of the deltas", "cv", "number"))]
    return rows
