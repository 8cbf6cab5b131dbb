"""S8, the launch on a hierarchical roofline (why-layer.md §9.1, S8; rocprof-compute's
definitions, with the model's exact peaks for ceilings).

- **work** = Σ active lanes over the launch's VALU instructions (``kernel_launch.
  valu_active_lanes``, lane-operations; an FMA counts once, as the model does not tell
  the operation);
- **bytes** per level: 64 B × ``req_in`` requests served at the L1V, L2, MALL (a
  memory-side cache, where the GPU has one) and DRAM; 4 B ×
  active LDS lanes (``lds_active_lanes``);
- **AI** = work ÷ bytes; **perf** = work ÷ launch time (lane-ops/s);
- ceilings from ``run.config``: compute = CUs × SIMDs × lanes per SIMD per cycle; L1V =
  CUs × ``cu.vmem_lines_per_cycle`` × 64 B; L2 = banks × ``l2.requests_per_cycle`` × 64 B;
  MALL = slices × ``mall.requests_per_cycle`` × 64 B; DRAM = channels ×
  ``dram.bytes_per_cycle``; LDS = CUs × 32 banks × 4 B, per cycle at
  ``clock_mhz``;
- **attainable** per level = min(peak compute, AI × bandwidth); the **limiter** is the
  level of the lowest, and **roof_share** = perf ÷ that attainable.

The lane counts are per launch, so the roofline is of the whole launch (a window does
not cut it). A trace written before format 3 has no VALU lane count: unavailable.
"""
from __future__ import annotations

from .scope import LINE_BYTES, Scope, Unavailable, line_rate

LDS_BANKS = 32  # the model's LDS: one dword per bank per cycle (bank = dword address mod 32)
DWORD = 4


def roofline(scope: Scope) -> dict:
    """The launch's point per memory level, its performance, ceilings and limiter."""
    k = scope.kernel
    record = scope.trace.launch_record(k.launch) if k.launch is not None else None
    if record is None or "valu_active_lanes" not in record:
        raise Unavailable("needs the kernel records' VALU lane counts (trace format 3:"
                          " simulate again)")
    scope.require("mem")
    cfg = scope.trace.config
    hz = cfg["clock_mhz"] * 1_000_000
    work = record["valu_active_lanes"]
    peak = scope.n_cu * scope.simds * cfg["cu"]["lanes_per_simd"] * hz
    levels = [level for level, count in scope.peers.items() if count]
    bandwidth = {"L1V": scope.n_cu * cfg["cu"]["vmem_lines_per_cycle"] * LINE_BYTES * hz,
                 **{level: float(scope.peers[level] * line_rate(cfg, level) * LINE_BYTES * hz)
                    for level in levels},
                 "LDS": scope.n_cu * LDS_BANKS * DWORD * hz}
    moved = {level: LINE_BYTES * sum(scope.requests_served(level).values())
             for level in ("L1V", *levels)}
    moved["LDS"] = DWORD * record["lds_active_lanes"]
    seconds = k.duration_ps / 1e12
    perf = work / seconds if seconds else 0.0
    points = []
    for level, bytes_ in moved.items():
        if not bytes_:
            continue
        ai = work / bytes_
        points.append({"level": level, "bytes": bytes_, "ai": round(ai, 4),
                       "bandwidth": bandwidth[level], "attainable": min(peak, ai * bandwidth[level])})
    if not work or not points:
        return {"points": points, "work": work, "perf": perf, "peak_compute": peak,
                "limiter": "compute" if work else None, "roof_share": perf / peak if work else None}
    low = min(points, key=lambda p: p["attainable"])
    limiter = low["level"] if low["attainable"] < peak else "compute"
    return {"points": points, "work": work, "perf": perf, "peak_compute": peak, "limiter": limiter,
            "roof_share": round(perf / low["attainable"], 4)}
