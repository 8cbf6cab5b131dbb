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
    wf = scope.wavefronts  # in id order
    inst = scope.instructions
    lanes = Lanes(len(wf), np.maximum(wf[:, COLUMN["start"]], scope.lo),
                  np.minimum(wf[:, COLUMN["end"]], scope.hi))
    # each task row's wavefront lane, -1 for rows not of a wavefront in the window
    lane = np.full(len(scope.tasks) + 1, -1, dtype=np.int64)  # the last entry: no task
    lane[scope.positions(wf[:, COLUMN["id"]])] = np.arange(len(wf))
    classes = []
    for name in SOURCES:
        rows = inst[name]
        # an instruction's wavefront is its parent; one whose wavefront lies outside
        # the window has nothing to charge here
        at = lane[scope.positions(rows[:, COLUMN["parent"]])]  # -1 indexes the last entry
        found = at >= 0
        classes.append((at[found], rows[found, COLUMN["start"]], rows[found, COLUMN["end"]]))
    charged = priority_charge(lanes, classes)
    totals = {name: int(charged[i].sum()) for i, name in enumerate(CLASSES)}
    return {
        "window_ps": [scope.lo, scope.hi],
        "wavefronts": len(wf),
        "wavefront_time_ps": int(lanes.window_lengths().sum()),
        "charged_ps": totals,
    }
