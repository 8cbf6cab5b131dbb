"""S5, which components' queues held requests back, ranked by the time requests waited
(why-layer.md §9.1, S5).

A ``req_in`` waits in its receiver's buffer from its ``req_out``'s start (the request
sent) to its own start (taken): the pyramid's ``buffer_ps``, here computed exactly from
the launch's tasks and cut to the window. Per location:

- **blocked_ps** = Σ waiting time (task·ps); **mean_waiting** = blocked ÷ |W|;
- **full_fraction** = share of |W| with at least ``capacity`` requests waiting, the
  buffer's size from ``run.config`` (``l1v.buffer``, ``l2.buffer``, ``dram.buffer``,
  ``cp.map_buffer`` for the CUs' dispatches);
- **busy** = share of |W| with a task in flight there;
- **plateau_cv** = coefficient of variation of the mean tasks in flight over the
  ``PLATEAU_BINS`` bins of the window in which the location was busy.

Ranked by blocked_ps. **saturated** when busy ≥ 0.95 and plateau_cv ≤ 0.10,
**back-pressured** when full_fraction ≥ 0.05 (both proposed).
"""
from __future__ import annotations

import numpy as np

from .intervals import clip, length, step_count
from .scope import COLUMN, Scope

LISTED = 20
PLATEAU_BINS = 64
CAPACITY = {"L1V": ("l1v", "buffer"), "L2": ("l2", "buffer"), "DRAM": ("dram", "buffer")}


def _integral(times: np.ndarray, counts: np.ndarray, t: np.ndarray) -> np.ndarray:
    """∫ count from the first time to each t, of a step function (``step_count``)."""
    area = np.r_[0, np.cumsum(counts[:-1] * np.diff(times))]
    j = np.searchsorted(times, t, "right") - 1
    inside = j >= 0
    out = np.zeros(len(t), dtype=np.int64)
    out[inside] = area[j[inside]] + counts[j[inside]] * (t[inside] - times[j[inside]])
    return out


def blocking(scope: Scope, saturated_busy: float = 0.95, plateau: float = 0.10,
             full_share: float = 0.05) -> dict:
    """The locations ranked by the time requests waited in their buffers."""
    scope.require("mem")
    tasks, lo, hi, width = scope.tasks, scope.lo, scope.hi, scope.width
    comps, cfg = scope.trace.components, scope.trace.config
    capacity = {loc: cfg[CAPACITY[level][0]][CAPACITY[level][1]]
                for level, instances in comps.memory.items() for loc in instances}
    capacity.update({loc: cfg["cp"]["map_buffer"] for loc in comps.unit("")})
    ins = np.flatnonzero(tasks[:, COLUMN["kind"]] == -1)
    for category, action in (("req_in", "ReadReq"), ("req_in", "WriteReq"), ("req_in", "MapWGReq")):
        ins = np.r_[ins, np.flatnonzero(scope.kinds_of((category, action)))]
    parent = scope.positions(tasks[ins, COLUMN["parent"]])
    ins, parent = ins[parent >= 0], parent[parent >= 0]
    order = np.argsort(tasks[ins, COLUMN["location"]], kind="stable")
    ins, parent = ins[order], parent[order]
    loc = tasks[ins, COLUMN["location"]]
    wait_start, wait_end = tasks[parent, COLUMN["start"]], tasks[ins, COLUMN["start"]]
    edges = np.linspace(lo, hi, PLATEAU_BINS + 1).astype(np.int64)
    rows = []
    by_location = np.argsort(tasks[:, COLUMN["location"]], kind="stable")
    located = tasks[by_location, COLUMN["location"]]
    for where in np.unique(loc).tolist():
        if where not in capacity:
            continue
        mine = slice(np.searchsorted(loc, where, "left"), np.searchsorted(loc, where, "right"))
        s, e = clip(wait_start[mine], wait_end[mine], lo, hi)
        blocked = int((e - s).sum())
        times, counts = step_count(s, e)
        spans = np.diff(np.r_[times, hi])
        full = int(spans[counts >= capacity[where]].sum()) if len(times) else 0
        here = tasks[by_location[np.searchsorted(located, where, "left"):
                                 np.searchsorted(located, where, "right")]]
        busy = length(*clip(here[:, COLUMN["start"]], here[:, COLUMN["end"]], lo, hi))
        times, counts = step_count(*clip(here[:, COLUMN["start"]], here[:, COLUMN["end"]], lo, hi))
        per_bin = np.diff(_integral(times, counts, edges)) / np.diff(edges).clip(min=1)
        busy_bins = per_bin[per_bin > 0]
        cv = float(busy_bins.std() / busy_bins.mean()) if len(busy_bins) else None
        rows.append({"loc": comps.name[where], "blocked_ps": blocked,
                     "mean_waiting": round(blocked / width, 3) if width else 0.0,
                     "capacity": capacity[where], "full_ps": full,
                     "full_fraction": round(full / width, 4) if width else 0.0,
                     "busy": round(busy / width, 4) if width else 0.0,
                     "plateau_cv": None if cv is None else round(cv, 3)})
    rows.sort(key=lambda r: (-r["blocked_ps"], r["loc"]))
    for r in rows:
        r["saturated"] = r["busy"] >= saturated_busy and r["plateau_cv"] is not None \
            and r["plateau_cv"] <= plateau
        r["back_pressured"] = r["full_fraction"] >= full_share
    return {"window_ps": [lo, hi], "locations": len(rows), "ranking": rows[:LISTED]}
