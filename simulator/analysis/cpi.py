"""S2, the CPI stack per CU: where each CU's cycles go (why-layer.md §9.1, S2).

MGPUSim's ``-report-cpi-stack`` priority rule (``amd/timing/cu/cpistacktracer.go``):
every instant is charged to the highest-priority class in flight on the CU:

    VALU > SALU > Branch > LDS > VMEM transaction (a request of the CU to its L1V)
    > VMEM instruction > Barrier > Stalled > Idle

where **Stalled** means at least one wavefront is resident and nothing above is in
flight, and **Idle** that no wavefront is resident: GPUscope splits MGPUSim's single idle
class in two by wavefront residency. Every CU is charged over the same window (the
launch, or the window asked for), so per CU the classes sum to the window and over the
launch they sum to CUs × |window| (test). CPI per class = cycles charged ÷ instructions
that started in the window.
"""
from __future__ import annotations

import numpy as np

from .intervals import Lanes, priority_charge
from .scope import COLUMN, Scope, Unavailable

CLASSES = ("VALU", "SALU", "Branch", "LDS", "VMEM_transaction", "VMEM", "Barrier", "Stalled", "Idle")


def cpi_stack(scope: Scope) -> dict:
    """Charged ps per class (over all CUs and per CU), instructions and CPI per class."""
    scope.require("wf", "inst")
    inst = scope.instructions
    try:
        requests = scope.cu_requests
        note = None
    except Unavailable as exc:
        requests = np.zeros((0, 7), dtype=np.int64)
        note = f"VMEM transactions not separated from VMEM instructions: {exc}"
    sources = [inst["VALU"], inst["SALU"], inst["Branch"], inst["LDS"], requests, inst["VMEM"],
               inst["Barrier"], scope.wavefronts]
    lanes = Lanes(scope.n_cu, scope.lo, scope.hi)
    charged = priority_charge(lanes, [(rows[:, 6], rows[:, COLUMN["start"]], rows[:, COLUMN["end"]])
                                      for rows in sources])
    totals = {name: int(charged[i].sum()) for i, name in enumerate(CLASSES)}
    count = sum(int((rows[:, COLUMN["start"]] >= scope.lo).sum()) for rows in inst.values())
    cycles = float(scope.ps_per_cycle)
    out = {
        "window_ps": [scope.lo, scope.hi],
        "cu_time_ps": scope.n_cu * scope.width,
        "charged_ps": totals,
        "instructions": count,
        "cpi": {name: round(totals[name] / cycles / count, 4) if count else None for name in CLASSES},
        "per_cu": [{"cu": cu, **{name: int(charged[i, cu]) for i, name in enumerate(CLASSES)}}
                   for cu in range(scope.n_cu)],
    }
    if note:
        out["note"] = note
    return out
