"""S3, the wavefront stall breakdown: what each wavefront was doing (why-layer.md §9.1, S3).

For each wavefront W over its life [W.start, W.end) (cut to the window), every instant
is charged to the first that holds:

- **executing** on unit u (VALU, SALU, Branch, LDS): an instruction of W on u covers it
  (in that order, when W has several in flight);
- **memory_wait**: a VMEM instruction of W covers it (issue to last response);
- **barrier**: W waits at a barrier (its Barrier task, arrival to release);
- **not_issued**: none of these: W was ready but not selected, its unit busy or its
  vector-memory queue full.

These are GPGPU-Sim's issue classes (W0_Scoreboard, Stall, ...) made exact per
wavefront. Summed over wavefronts they equal Σ|W ∩ window| (test); a launch whose
``not_issued`` share exceeds ``not_issued`` (30 %, proposed) is issue-limited.
"""
from __future__ import annotations

import numpy as np

from .intervals import Lanes, priority_charge
from .scope import COLUMN, Scope

CLASSES = ("VALU", "SALU", "Branch", "LDS", "memory_wait", "barrier", "not_issued")
SOURCES = ("VALU", "SALU", "Branch", "LDS", "VMEM", "Barrier")


def stall_breakdown(scope: Scope) -> dict:
    """Wavefront time per class, summed over the launch's wavefronts in the window."""
    scope.require("wf", "inst")
    wf = scope.wavefronts
    inst = scope.instructions
    ids = wf[:, COLUMN["id"]]
    order = np.argsort(ids)
    lanes = Lanes(len(wf), np.maximum(wf[order, COLUMN["start"]], scope.lo),
                  np.minimum(wf[order, COLUMN["end"]], scope.hi))
    classes = []
    for name in SOURCES:
        rows = inst[name]
        # an instruction's wavefront is its parent; one whose wavefront lies outside
        # the window has nothing to charge here
        at = np.searchsorted(ids[order], rows[:, COLUMN["parent"]])
        found = (at < len(ids)) & (ids[order][np.minimum(at, len(ids) - 1)] == rows[:, COLUMN["parent"]])
        classes.append((at[found], rows[found, COLUMN["start"]], rows[found, COLUMN["end"]]))
    charged = priority_charge(lanes, classes)
    totals = {name: int(charged[i].sum()) for i, name in enumerate(CLASSES)}
    return {
        "window_ps": [scope.lo, scope.hi],
        "wavefronts": len(wf),
        "wavefront_time_ps": int(lanes.window_lengths().sum()),
        "charged_ps": totals,
    }
