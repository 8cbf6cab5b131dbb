"""S12, kernel hints from the launch's Klein records (why-layer.md §9.1, S12).

From ``kernel_launch`` and Klein's proxy warps:

- **SIMD efficiency** = active lanes ÷ (64 × vector instructions);
- **divergent wavefronts** = the share of wavefronts whose lanes took more than one
  branch path (``kernel_proxy_warp.divergent``);
- **LDS conflict rate** = LDS instructions with a bank-conflict degree above 1 ÷ LDS
  instructions, and the worst degree.

The divergence hint fires on divergent wavefronts (``divergent_wavefronts``, 0.5,
proposed), not on SIMD efficiency alone (Nsight Compute's ThreadDivergence, < 0.75): a
tree reduction's last steps leave lanes idle with no branch diverging (reduction v3
runs at 0.73 with a quarter of its wavefronts divergent), which is not what the hint is
for. The bank-conflict hint fires when the conflict rate exceeds ``lds_conflict_rate``
(0.1) or the worst degree reaches ``lds_degree`` (2) (proposed thresholds).

What each costs is measured on the trace when it holds the instructions: the SIMD time
spent on idle lanes, and the LDS time spent in extra bank passes, each per unit instance.
"""
from __future__ import annotations

import numpy as np

from .scope import COLUMN, Scope, Unavailable

LANES = 64


def kernel_hints(scope: Scope, divergent_wavefronts: float = 0.5, lds_conflict_rate: float = 0.1,
                 lds_degree: int = 2) -> dict:
    """The launch's SIMD efficiency, divergence and LDS conflicts, and the hints they give."""
    trace, launch = scope.trace, scope.kernel.launch
    record = None if launch is None else trace.launch_record(launch)
    if record is None:
        raise Unavailable("needs the launch's kernel records (kernel_launch)")
    vector = record["vector_instructions"]
    efficiency = record["active_lanes"] / (LANES * vector) if vector else None
    wavefronts, divergent = trace.divergent_wavefronts(launch)
    if wavefronts and not record["branch_truncated"]:
        divergent_share = divergent / wavefronts
    elif not trace.branch_nodes(launch):
        divergent_share = 0.0  # a kernel without a branch cannot diverge
    else:
        divergent_share = None
    lds = record["lds_instructions"]
    conflict_rate = record["lds_conflicted"] / lds if lds else 0.0
    out = {
        "launch": launch,
        "simd_efficiency": None if efficiency is None else round(efficiency, 4),
        "divergent_wavefronts": None if divergent_share is None else round(divergent_share, 4),
        "partial_instructions": record["partial_instructions"],
        "vector_instructions": vector,
        "lds_conflict_rate": round(conflict_rate, 4),
        "lds_max_degree": record["lds_max_degree"],
        "thresholds": {"divergent_wavefronts": divergent_wavefronts,
                       "lds_conflict_rate": lds_conflict_rate, "lds_degree": lds_degree},
        "hints": [],
    }
    if divergent_share is None:
        out["divergence_note"] = "no branch records (run without --no-instrument)"
    elif divergent_share >= divergent_wavefronts:
        out["hints"].append({"hint": "divergence", "line": trace.divergent_line(launch),
                             "cost_ps": _idle_lane_ps(scope, efficiency)})
    if conflict_rate > lds_conflict_rate or record["lds_max_degree"] >= lds_degree:
        out["hints"].append({"hint": "bank-conflicts", "line": None,
                             "cost_ps": _extra_pass_ps(scope)})
    return out


def _idle_lane_ps(scope: Scope, efficiency: float | None) -> int | None:
    """SIMD time on idle lanes per SIMD: VALU busy time × (1 − SIMD efficiency) ÷ SIMDs."""
    try:
        valu = scope.instructions["VALU"]
    except Unavailable:
        return None
    busy = int((np.minimum(valu[:, COLUMN["end"]], scope.hi)
                - np.maximum(valu[:, COLUMN["start"]], scope.lo)).clip(min=0).sum())
    return round(busy * (1 - (efficiency or 0)) / (scope.n_cu * scope.simds))


def _extra_pass_ps(scope: Scope) -> int | None:
    """LDS time in extra bank passes per CU: each LDS instruction's time beyond one pass
    (``cu.lds_latency`` + 1 cycles, the model's conflict-free LDS access), summed over the
    launch and divided by the CUs."""
    try:
        lds = scope.instructions["LDS"]
    except Unavailable:
        return None
    one_pass = scope.cycles_ps(scope.trace.config["cu"]["lds_latency"] + 1)
    extra = (lds[:, COLUMN["end"]] - lds[:, COLUMN["start"]] - one_pass).clip(min=0)
    return int(extra.sum()) // scope.n_cu
