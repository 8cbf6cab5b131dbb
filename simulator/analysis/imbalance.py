"""S6, how unevenly peers shared the launch's work (why-layer.md §9.1, S6).

Peers are the CUs (work-group residency, ps), the L2 banks, the memory-side cache
slices (where the GPU has them) and the DRAM channels (``req_in`` requests starting in
the window). For each group: **imbalance** = max ÷ mean
over every peer of the configuration (one that did nothing counts as 0), the **Gini**
coefficient, and the hot peer (the argmax). ``excess_ps`` is how much longer the hot
peer was busy than the mean peer: launch time the imbalance costs at most. Warn at
imbalance ≥ 1.5 (proposed).
"""
from __future__ import annotations

import numpy as np

from .intervals import Lanes
from .scope import COLUMN, Scope, Unavailable


def gini(values: np.ndarray) -> float:
    """Gini coefficient of non-negative values (0: all equal)."""
    x = np.sort(np.asarray(values, dtype=np.float64))
    n, total = len(x), x.sum()
    if not n or not total:
        return 0.0
    return float(((2 * np.arange(1, n + 1) - n - 1) * x).sum() / (n * total))


def _busy(scope: Scope, peers: int, index: np.ndarray, rows: np.ndarray) -> np.ndarray:
    lanes = Lanes(peers, scope.lo, scope.hi)
    return lanes.busy(index, rows[:, COLUMN["start"]], rows[:, COLUMN["end"]])


def _group(values: np.ndarray, busy: np.ndarray, names: list[str], unit: str) -> dict:
    mean = float(values.mean()) if len(values) else 0.0
    hot = int(np.argmax(values)) if len(values) else 0
    return {"unit": unit, "peers": len(values), "imbalance": round(float(values.max()) / mean, 3)
            if mean else None, "gini": round(gini(values), 3), "hot": names[hot] if names else None,
            "hot_value": int(values[hot]) if len(values) else 0, "mean_value": round(mean, 1),
            "excess_ps": max(0, int(busy[hot] - busy.mean())) if len(busy) else 0}


def imbalance(scope: Scope) -> dict:
    """Imbalance of the CUs, L2 banks, memory-side cache slices and DRAM channels over
    the window."""
    out = {}
    comps = scope.trace.components
    wg = scope.work_groups
    busy = _busy(scope, scope.n_cu, wg[:, 6], wg)
    out["CU"] = _group(busy, busy, [comps.cu_name(c) for c in range(scope.n_cu)], "busy ps")
    try:
        scope.require("mem")
    except Unavailable:
        return out
    tasks = scope.tasks
    served = tasks[scope.kinds_of(("req_in", "ReadReq"), ("req_in", "WriteReq"))]
    for level in ("L2", "MALL", "DRAM"):
        instances = comps.memory[level]  # location id -> instance number
        peers = scope.peers[level]
        if not peers:
            continue
        table = np.full(max(comps.name, default=0) + 1, -1, dtype=np.int64)
        for loc, number in instances.items():
            table[loc] = number
        number = table[served[:, COLUMN["location"]]]
        mine = served[number >= 0]
        number = number[number >= 0]
        starts = mine[:, COLUMN["start"]]
        counted = (starts >= scope.lo) & (starts < scope.hi)
        counts = np.bincount(number[counted], minlength=peers)[:peers]
        names = {n: comps.name[loc] for loc, n in instances.items()}
        out[level] = _group(counts, _busy(scope, peers, number, mine),
                            [names.get(n, f"GPU.{level}[{n}]") for n in range(peers)], "requests")
    return out
