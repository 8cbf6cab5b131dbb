"""S10, CU idle time inside a kernel, by cause; and the dispatcher's own limit.

Every instant of the window at which a CU holds none of the launch's work-groups is
idle, and classed by what the GPU was doing then (why-layer.md §9.1, S10 (c)):

- **pre-launch**: before the Command Processor's first dispatch (MapWGReq);
- **dispatch-starved**: work-groups of the launch were still to be dispatched;
- **tail**: every work-group was dispatched, and this CU would still get or run one;
- **drain**: after this CU's last work-group, while others still run.

Per CU the four classes partition its idle time exactly (test), and summed over the CUs
they are fractions of n_CU × |window|.

A CU that holds work-groups can still be starved by dispatch: it could hold more. The
**dispatch-bound** time is the part of the window in which work-groups of the launch
were still to be dispatched (from the first dispatch to the end of the last one's
cycle) while some CU had room for one: fewer work-groups resident on the GPU than the
CUs × the most one CU held at once in this launch (its capacity for this kernel under
the resource model). Then a faster dispatcher (``cp.wg_dispatch_per_cycle``) would have
given that CU work sooner; while every CU is full the CUs, not the dispatcher, set the
pace, and that time is not counted. The mean wavefronts resident per CU over the
dispatch-bound time, against its wavefront slots, is the occupancy it leaves.
"""
from __future__ import annotations

import numpy as np

from .budget import most_resident
from .intervals import EMPTY, Lanes, clip, covered, merge, step_count
from .scope import COLUMN, Scope, Unavailable

CLASSES = ("pre_launch", "dispatch_starved", "tail", "drain")


def cu_idle(scope: Scope) -> dict:
    """Idle ps per class (summed over CUs, and per CU), and the dispatch-bound time."""
    wg = scope.work_groups
    dispatches = scope.dispatches
    n, lo, hi = scope.n_cu, scope.lo, scope.hi
    cu = wg[:, 6]
    lanes = Lanes(n, lo, hi)
    busy = lanes.busy(cu, wg[:, COLUMN["start"]], wg[:, COLUMN["end"]])
    first = int(dispatches[0]) if len(dispatches) else hi
    last = int(dispatches[-1]) if len(dispatches) else hi
    last_end = np.full(n, np.iinfo(np.int64).min, dtype=np.int64)
    np.maximum.at(last_end, cu, wg[:, COLUMN["end"]])
    # per CU, the window cut at the instants that change the class of an idle instant
    b1 = np.full(n, min(max(first, lo), hi))
    b2 = np.maximum(b1, min(max(last, lo), hi))
    b3 = np.maximum(b2, np.clip(last_end, lo, hi))
    edges = [np.full(n, lo), b1, b2, b3, np.full(n, hi)]
    per_cu = {}
    cus = np.arange(n)
    for name, start, end in zip(CLASSES, edges, edges[1:]):
        phase = Lanes(n, start, end)
        covered = phase.busy(cu, wg[:, COLUMN["start"]], wg[:, COLUMN["end"]])
        per_cu[name] = (end - start).clip(min=0) - covered
    idle = {name: int(per_cu[name].sum()) for name in CLASSES}
    return {
        "window_ps": [lo, hi],
        "cus": n,
        "cu_time_ps": n * scope.width,
        "busy_ps": int(busy.sum()),
        **{f"{name}_ps": idle[name] for name in CLASSES},
        "per_cu": [{"cu": int(c), "busy_ps": int(busy[c]),
                    **{f"{name}_ps": int(per_cu[name][c]) for name in CLASSES}} for c in cus],
        **dispatch_bound(scope),
    }


def dispatch_bound(scope: Scope) -> dict:
    """The window's time in which the dispatcher, not the CUs, limited the work the CUs
    held (see the module's docstring), and the mean wavefronts resident per CU over it
    (needs wavefront tasks)."""
    rate = scope.trace.config["cp"]["wg_dispatch_per_cycle"]
    dispatches, wg = scope.dispatches, scope.work_groups
    starts, ends = EMPTY, EMPTY
    if len(dispatches):
        first, last = int(dispatches[0]), scope.next_cycle_ps(int(dispatches[-1]))
        wg_start, wg_end = wg[:, COLUMN["start"]], wg[:, COLUMN["end"]]
        capacity = scope.n_cu * most_resident(wg[:, 6], wg_start, wg_end)
        times, counts = step_count(wg_start, wg_end)
        # the count before the first work-group starts, and after each step, is below
        # capacity where a CU had room
        edges = np.r_[first, times, last]
        below = np.r_[True, counts < capacity]
        starts, ends = merge(*clip(edges[:-1][below], edges[1:][below],
                                   max(first, scope.lo), min(last, scope.hi)))
    bound = int((ends - starts).sum())
    occupancy = None
    if bound:
        try:
            wf = scope.wavefronts
        except Unavailable:
            wf = None
        if wf is not None:
            resident = covered(starts, ends, wf[:, COLUMN["start"]], wf[:, COLUMN["end"]])
            occupancy = round(resident / (bound * scope.n_cu), 3)
    return {"dispatch_bound_ps": bound, "dispatch_rate": rate,
            "wavefronts_per_cu_when_bound": occupancy, "wavefront_slots_per_cu": scope.wf_slots}
