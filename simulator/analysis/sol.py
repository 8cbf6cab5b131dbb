"""S7, speed of light per unit, and the launch's classification (why-layer.md §9.1, S7).

Each unit's throughput over the window as a fraction of its peak from ``run.config``:

- compute: **VALU** = time the SIMDs were busy with VALU instructions ÷ (SIMDs × |W|);
  **SALU**, **Branch** = instructions ÷ (CUs × cycles), each unit taking one a cycle;
  **LDS** = bank passes (an instruction's cycles beyond ``cu.lds_latency``) ÷ (CUs ×
  cycles): the model's issue costs (``simulator/gpu/compute_unit.py``), not the
  instructions' latencies;
- memory: **L1V** = 64 B lines the CUs sent ÷ (CUs × ``cu.vmem_lines_per_cycle`` ×
  cycles); **L2** = requests served ÷ (banks × ``l2.requests_per_cycle`` × cycles);
  **MALL** (a memory-side cache, where the GPU has one) likewise with its slices and
  ``mall.requests_per_cycle``; **DRAM** = 64 B × requests ÷ (channels ×
  ``dram.bytes_per_cycle`` × cycles);
- **dispatch** = work-groups dispatched ÷ (``cp.wg_dispatch_per_cycle`` × cycles), shown
  but in neither group.

The time is the window from the launch's first dispatch on (Nsight Compute's SOL is over
the kernel's execution; the launch overhead before it is S1's). Busy time is a union per
unit instance, so an instance is never more than 100 % busy; a
request counts in the window it starts in. Each unit also names its busiest instance.
C and M are the largest compute and memory SOLs; the classification is Nsight Compute's
SOLBottleneck rule: if C and M are both below ``bound`` (80 %), a launch is
**latency-bound** when both are below ``latency`` (60 %), else **compute-heavier** or
**memory-heavier** when they differ by at least ``gap`` (10 points), else **balanced**;
otherwise it is **bound** by the unit with the highest SOL. Fewer than one wave per CU
adds "grid too small".
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np

from .intervals import Lanes
from .scope import COLUMN, Scope, Unavailable, line_rate

COMPUTE = ("VALU", "SALU", "Branch", "LDS")
MEMORY = ("L1V", "L2", "MALL", "DRAM")


def _busy(scope: Scope, rows: np.ndarray) -> tuple[int, int, int]:
    """(busy ps summed over instances, busiest instance's busy ps, its location id)."""
    locations, group = np.unique(rows[:, COLUMN["location"]], return_inverse=True)
    lanes = Lanes(len(locations), scope.lo, scope.hi)
    busy = lanes.busy(group, rows[:, COLUMN["start"]], rows[:, COLUMN["end"]])
    if not len(busy):
        return 0, 0, -1
    top = int(np.argmax(busy))
    return int(busy.sum()), int(busy[top]), int(locations[top])


def _lds_passes(scope: Scope, rows: np.ndarray) -> tuple[int, int, int]:
    """(LDS busy ps, at the busiest LDS, its location id): an LDS instruction holds the
    unit one cycle per bank pass, its duration less ``cu.lds_latency``."""
    latency = scope.cycles_ps(scope.trace.config["cu"]["lds_latency"])
    rows = rows[rows[:, COLUMN["start"]] >= scope.lo]
    if not len(rows):
        return 0, 0, -1
    busy = (rows[:, COLUMN["end"]] - rows[:, COLUMN["start"]] - latency).clip(min=0)
    locations, group = np.unique(rows[:, COLUMN["location"]], return_inverse=True)
    per = np.zeros(len(locations), dtype=np.int64)
    np.add.at(per, group, busy)
    top = int(np.argmax(per))
    return int(per.sum()), int(per[top]), int(locations[top])


def _counted(counts: dict[int, int]) -> tuple[int, int, int]:
    """(requests, requests at the busiest instance, that instance's location id)."""
    if not counts:
        return 0, 0, -1
    top = max(counts, key=counts.get)
    return sum(counts.values()), counts[top], top


def _execution_span(scope: Scope) -> int:
    """The window from the first dispatch on: like Nsight Compute's kernel duration, the
    time the GPU executes the launch, without the launch overhead S1 shows apart."""
    try:
        first = int(scope.dispatches[0]) if len(scope.dispatches) else scope.lo
    except Unavailable:
        first = scope.lo
    return scope.hi - max(scope.lo, first)


def speed_of_light(scope: Scope, bound: float = 0.8, latency: float = 0.6, gap: float = 0.1,
                   waves: float | None = None) -> dict:
    """SOL per unit (fractions of peak), C, M, and the classification."""
    cfg = scope.trace.config
    names = scope.trace.components.name
    span = _execution_span(scope)
    if span <= 0:
        raise Unavailable("the window holds only the launch overhead, before any dispatch")
    cycles = Fraction(span, scope.ps_per_cycle)
    units: dict[str, dict] = {}
    missing = []

    def add(unit, amount, peak, top_amount, top_peak, top_location):
        units[unit] = {"sol": round(float(amount / peak), 4) if peak else 0.0,
                       "busiest": names.get(top_location),
                       "busiest_sol": round(float(top_amount / top_peak), 4) if top_peak else 0.0}

    try:
        inst = scope.instructions
        total, top, where = _busy(scope, inst["VALU"])
        add("VALU", total, scope.n_cu * scope.simds * span, top, span, where)
        for unit in ("SALU", "Branch"):
            rows = inst[unit]
            started = rows[rows[:, COLUMN["start"]] >= scope.lo, COLUMN["location"]]
            total, top, where = _counted(dict(zip(*np.unique(started, return_counts=True))))
            add(unit, total, scope.n_cu * cycles, top, cycles, where)
        total, top, where = _lds_passes(scope, inst["LDS"])
        add("LDS", total, scope.n_cu * span, top, span, where)
    except Unavailable as exc:
        missing.append(f"compute units {exc}")
    try:
        lines = scope.cu_requests
        rate = cfg["cu"]["vmem_lines_per_cycle"]
        started = lines[lines[:, COLUMN["start"]] >= scope.lo, COLUMN["location"]]
        total, top, where = _counted(dict(zip(*np.unique(started, return_counts=True))))
        add("L1V", total, scope.n_cu * rate * cycles, top, rate * cycles, where)
        for level in ("L2", "MALL", "DRAM"):
            if scope.peers[level]:
                per_instance = line_rate(cfg, level)
                total, top, where = _counted(scope.requests_served(level))
                add(level, total, scope.peers[level] * per_instance * cycles, top,
                    per_instance * cycles, where)
    except Unavailable as exc:
        missing.append(f"memory levels {exc}")
    try:
        dispatched = scope.dispatches
        in_window = dispatched[(dispatched >= scope.lo) & (dispatched < scope.hi)]
        rate = cfg["cp"]["wg_dispatch_per_cycle"]
        cp = [key for key, name in names.items() if name == "GPU.CommandProcessor"]
        add("dispatch", len(in_window), rate * cycles, len(in_window), rate * cycles,
            cp[0] if cp else -1)
    except Unavailable as exc:
        missing.append(f"dispatch {exc}")
    if not units.keys() & {*COMPUTE, *MEMORY}:
        raise Unavailable("; ".join(missing))
    c = max((units[u]["sol"] for u in COMPUTE if u in units), default=0.0)
    m = max((units[u]["sol"] for u in MEMORY if u in units), default=0.0)
    return {"units": units, "compute_sol": c, "memory_sol": m,
            "classification": classify(units, c, m, bound, latency, gap, waves),
            "missing": missing,
            "thresholds": {"bound": bound, "latency": latency, "gap": gap}}


def classify(units: dict[str, dict], c: float, m: float, bound: float, latency: float,
             gap: float, waves: float | None) -> dict:
    """Nsight Compute's SOLBottleneck rule on C and M (fractions of peak)."""
    if c < bound and m < bound:
        if c < latency and m < latency:
            kind = "latency-bound"
        elif abs(c - m) >= gap:
            kind = "compute-heavier" if c > m else "memory-heavier"
        else:
            kind = "balanced"
        unit = None
    else:
        group = COMPUTE if c >= m else MEMORY
        unit = max((u for u in group if u in units), key=lambda u: units[u]["sol"])
        kind = f"{'compute' if c >= m else 'memory'}-bound"
    # the busiest memory level names where the bytes went, whatever the verdict
    level = max((u for u in MEMORY if u in units), key=lambda u: units[u]["sol"], default=None)
    return {"kind": kind, "unit": unit, "busiest_memory": level,
            "grid_too_small": waves is not None and waves < 1}
