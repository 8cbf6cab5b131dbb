"""Hand-made simulator-shaped traces for the analysis tests, from a compact description.

A launch is ``{"start", "end", "groups": [group, ...]}`` in cycles (1 cycle = 1000 ps);
a group ``{"cu", "dispatch", "start", "end", "wavefronts": [wf, ...]}`` is dispatched
(MapWGReq) at ``dispatch`` and runs [start, end) on CU ``cu``; a wavefront ``{"start",
"end", "insts": [(unit, start, end), ...], "requests": [(start, end), ...],
"served": [(level, instance, start, end), ...]}`` holds instructions (VALU on SIMD[0]),
the CU's requests to its L1V and requests served at L1V/L2/DRAM. An instruction may
carry a fourth item, the hops of its request as the model nests them: ``[(level,
instance, out_start, in_start, in_end, out_end), ...]`` from the CU down, each hop a
``req_out`` at the sender (the CU, then the level above) with its ``req_in`` at
``level``, the next hop a child of that ``req_in``. The names and kinds are the timing
model's (simulator/gpu/trace_vocabulary.py).
"""
from simulator.gpu.config import apply_overrides, default_config
from simulator.tracing import Tracer
from simulator.tracing.writer import TraceWriter

PS = 1000
UNIT_LOCATION = {"VALU": "SIMD[0]", "SALU": "Scalar", "Branch": "Branch", "LDS": "LDS",
                 "VMEM": "VMem", "Barrier": "WFPool"}


def config(cus, *overrides):
    return apply_overrides(default_config(), [
        "gpu.shader_arrays=1", f"gpu.cus_per_shader_array={cus}", *overrides])


def write_trace(path, launches, cus=2, overrides=(), records=None):
    """Write the launches into a finalized trace at ``path``; ``records`` maps a launch
    index to extra kernel_launch columns (a row is written for each launch)."""
    cfg = config(cus, *overrides)
    writer = TraceWriter(path, command="analysis fixture", workload="fixture", config=cfg,
                         watchable=False)
    tr = Tracer(writer, ps_per_tick=PS)
    cp = tr.location("GPU.CommandProcessor")
    cu_loc = [tr.location(f"GPU.SA[0].CU[{c}]") for c in range(cus)]
    # kinds are interned on first use, as the model interns only what its levels record
    root = tr.start_task(-1, tr.kind("Simulation", "Simulation"), tr.location("GPU"), 0)
    end = 0
    for index, launch in enumerate(launches):
        k = tr.start_task(root, tr.kind("kernel", launch.get("name", "fixture")), cp, launch["start"],
                          details={"launch": index, "work_groups": len(launch["groups"])})
        for g in launch["groups"]:
            _group(tr, cp, cu_loc, k, g)
        tr.end_task(k, launch["end"])
        end = max(end, launch["end"])
    tr.end_task(root, end)
    tr.close(end)
    for index, launch in enumerate(launches):
        _record(writer, index, launch, (records or {}).get(index, {}))
    writer.finalize(completed=True, virtual_end_ps=end * PS)
    writer.close()
    return path


def _group(tr, cp, cu_loc, kernel, g):
    c = g["cu"]
    out = tr.start_task(kernel, tr.kind("req_out", "MapWGReq"), cp, g["dispatch"])
    inn = tr.start_task(out, tr.kind("req_in", "MapWGReq"), cu_loc[c], g["dispatch"])
    tr.end_task(inn, g["dispatch"] + 1)
    wg = tr.start_task(inn, tr.kind("work-group", "work-group"), cu_loc[c], g["start"])
    for w in g.get("wavefronts", ()):
        pool = tr.location(f"GPU.SA[0].CU[{c}].WFPool")
        wf = tr.start_task(wg, tr.kind("wavefront", "wavefront"), pool, w["start"])
        for unit, start, end, *hops in w.get("insts", ()):
            loc = tr.location(f"GPU.SA[0].CU[{c}].{UNIT_LOCATION[unit]}")
            inst = tr.start_task(wf, tr.kind("inst", unit), loc, start)
            _hops(tr, inst, cu_loc[c], hops[0] if hops else ())
            tr.end_task(inst, end)
        for start, end in w.get("requests", ()):
            tr.end_task(tr.start_task(wf, tr.kind("req_out", "ReadReq"), cu_loc[c], start), end)
        for level, instance, start, end in w.get("served", ()):
            tr.end_task(tr.start_task(wf, tr.kind("req_in", "ReadReq"), _memory(tr, level, instance),
                                      start), end)
        tr.end_task(wf, w["end"])
    tr.end_task(wg, g["end"])
    tr.end_task(out, g["end"])


def _memory(tr, level, instance):
    return tr.location(f"GPU.SA[0].L1V[{instance}]" if level == "L1V" else f"GPU.{level}[{instance}]")


def _hops(tr, parent, sender, hops):
    ends = []
    for level, instance, out_start, in_start, in_end, out_end in hops:
        out = tr.start_task(parent, tr.kind("req_out", "ReadReq"), sender, out_start)
        sender = _memory(tr, level, instance)
        parent = tr.start_task(out, tr.kind("req_in", "ReadReq"), sender, in_start)
        ends += [(out, out_end), (parent, in_end)]
    for task, end in reversed(ends):
        tr.end_task(task, end)


def _record(writer, index, launch, extra):
    groups = len(launch["groups"])
    row = {"id": index, "source": 0, "kernel": launch.get("name", "fixture"), "global_size": "[64]",
           "local_size": "[64]", "work_groups": groups, "wavefronts": groups, "args": "{}",
           "lds_bytes": 0, "instructions": 0, "vector_instructions": 0, "active_lanes": 0,
           "partial_instructions": 0, "lds_instructions": 0, "lds_conflicted": 0,
           "lds_max_degree": 0, "watch_truncated": 0, "branch_truncated": 0, **extra}
    writer.execute(f"INSERT INTO kernel_launch ({', '.join(row)}) VALUES ({', '.join('?' * len(row))})",
                   list(row.values()))
