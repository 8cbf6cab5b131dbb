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

from .intervals import Lanes, step_count
from .scope import COLUMN, Scope

LISTED = 20
PLATEAU_BINS = 64
CAPACITY = {"L1V": ("l1v", "buffer"), "L2": ("l2", "buffer"), "MALL": ("mall", "buffer"),
            "DRAM": ("dram", "buffer")}


def _integral(times: np.ndarray, counts: np.ndarray, t: np.ndarray) -> np.ndarray:
    """∫ count from the first time to each t, of a step function (``step_count``)."""
    area = np.r_[0, np.cumsum(counts[:-1] * np.diff(times))]
    j = np.searchsorted(times, t, "right") - 1
    inside = j >= 0
    out = np.zeros(len(t), dtype=np.int64)
    out[inside] = area[j[inside]] + counts[j[inside]] * (t[inside] - times[j[inside]])
    return out


def _steps(lanes: Lanes, groups: np.ndarray, starts: np.ndarray, ends: np.ndarray
           ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Every group's count of intervals in flight (cut to the window), as one step
    function on the lanes' shared axis: (times, counts, each step's group, its span).
    A group's intervals all end inside its lane, so its count is back at 0 before the
    next lane begins, and each step is one group's."""
    times, counts = step_count(*lanes.place(groups, starts, ends))
    return times, counts, times // lanes.width, np.diff(times, append=times[-1:])


def _per_group(lanes: Lanes, groups: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Σ values per group, exactly (integers)."""
    total = np.zeros(lanes.n, dtype=np.int64)
    np.add.at(total, groups, values)
    return total


def blocking(scope: Scope, saturated_busy: float = 0.95, plateau: float = 0.10,
             full_share: float = 0.05) -> dict:
    """The locations ranked by the time requests waited in their buffers."""
    scope.require("mem")
    tasks, lo, hi, width = scope.tasks, scope.lo, scope.hi, scope.width
    comps, cfg = scope.trace.components, scope.trace.config
    capacity = {loc: cfg[CAPACITY[level][0]][CAPACITY[level][1]]
                for level, instances in comps.memory.items() for loc in instances}
    capacity.update({loc: cfg["cp"]["map_buffer"] for loc in comps.unit("")})
    ins = scope.rows_of(("req_in", "ReadReq"), ("req_in", "WriteReq"), ("req_in", "MapWGReq"))
    parent = scope.parent_rows[ins]
    ins, parent = ins[parent >= 0], parent[parent >= 0]
    location = tasks[:, COLUMN["location"]]
    # the ranked locations, numbered densely: the buffers of those with a request
    ranked = sorted(capacity.keys() & set(np.unique(location[ins]).tolist()))
    number = np.full(max(comps.name, default=0) + 1, -1, dtype=np.int64)
    number[ranked] = np.arange(len(ranked))
    # all of them laid side by side (``Lanes``): one step function serves every location
    lanes = Lanes(len(ranked), lo, hi)
    group = number[location[ins]]
    ins, parent, group = ins[group >= 0], parent[group >= 0], group[group >= 0]
    times, counts, step_group, spans = _steps(lanes, group, tasks[parent, COLUMN["start"]],
                                              tasks[ins, COLUMN["start"]])
    blocked = _per_group(lanes, step_group, counts * spans)
    cap = np.array([capacity[where] for where in ranked])
    full_steps = counts >= cap[step_group]
    full = _per_group(lanes, step_group[full_steps], spans[full_steps])
    # busy time and the plateau: every task at the location, of any kind
    here = np.flatnonzero(number[location] >= 0)
    times, counts, step_group, spans = _steps(lanes, number[location[here]],
                                              tasks[here, COLUMN["start"]], tasks[here, COLUMN["end"]])
    busy = _per_group(lanes, step_group[counts > 0], spans[counts > 0])
    edges = np.linspace(lo, hi, PLATEAU_BINS + 1).astype(np.int64)
    shifted = (edges - lo) + (np.arange(len(ranked), dtype=np.int64) * lanes.width)[:, None]
    area = _integral(times, counts, shifted.ravel()).reshape(shifted.shape)
    per_bin = np.diff(area, axis=1) / np.diff(edges).clip(min=1)
    rows = []
    for g, where in enumerate(ranked):
        busy_bins = per_bin[g][per_bin[g] > 0]
        cv = float(busy_bins.std() / busy_bins.mean()) if len(busy_bins) else None
        rows.append({"loc": comps.name[where], "blocked_ps": int(blocked[g]),
                     "mean_waiting": round(int(blocked[g]) / width, 3) if width else 0.0,
                     "capacity": capacity[where], "full_ps": int(full[g]),
                     "full_fraction": round(int(full[g]) / width, 4) if width else 0.0,
                     "busy": round(int(busy[g]) / width, 4) if width else 0.0,
                     "plateau_cv": None if cv is None else round(cv, 3)})
    rows.sort(key=lambda r: (-r["blocked_ps"], r["loc"]))
    for r in rows:
        r["saturated"] = r["busy"] >= saturated_busy and r["plateau_cv"] is not None \
            and r["plateau_cv"] <= plateau
        r["back_pressured"] = r["full_fraction"] >= full_share
    return {"window_ps": [lo, hi], "locations": len(rows), "ranking": rows[:LISTED]}
