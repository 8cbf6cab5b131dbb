"""Two small traces A and B with known differences, for the comparison tests.

Times in ns (one tick is 1000 ps), A then B:

* config: cp.rate 1 / 2, l2.banks 16 in both; the run [0, 200) / [0, 160);
* kernels (GPU.CommandProcessor): gemm [0, 100), relu [100, 150) /
  gemm [10, 90), softmax [90, 130);
* wavefronts: GPU.CU[0] [0, 100) / [10, 90); GPU.CU[1] [0, 50) / [10, 90);
* GPU.L2[0]: 4 reads over [10, 50), 3 hits and 1 miss / 2 hits and 2 misses;
* GPU.CU[0].SIMD[0]: 3 / 5 VALU instructions of 4 ns from 20 ns on.

The reads come from GPU.SA[0].L1V[0]. So B's gemm is 1.25x faster, relu is removed and
softmax added; CU busy is 0.375 in A (0.5 and 0.25) and 0.5 in B; SIMD busy 12/200 and
20/160; L2 busy 40/200 and 40/160; the L2 hit rate 0.75 and 0.5; wavefronts per CU
150/150/2 = 0.5 and 160/120/2 = 0.667. B's first kernel starts at 10 ns, A's at 0.
"""
from simulator.tracing.api import Tracer
from simulator.tracing.writer import TraceWriter

NS = 1000

RUNS = {
    "A": dict(config={"cp": {"rate": 1}, "l2": {"banks": 16}}, end=200,
              kernels=[("gemm", 0, 100), ("relu", 100, 150)],
              wavefronts=[("GPU.CU[0]", 0, 100), ("GPU.CU[1]", 0, 50)],
              tags=["read-hit", "read-hit", "read-hit", "read-miss"], valu=3),
    "B": dict(config={"cp": {"rate": 2}, "l2": {"banks": 16}}, end=160,
              kernels=[("gemm", 10, 90), ("softmax", 90, 130)],
              wavefronts=[("GPU.CU[0]", 10, 90), ("GPU.CU[1]", 10, 90)],
              tags=["read-hit", "read-miss", "read-hit", "read-miss"], valu=5),
}


def write_run(path, run):
    spec = RUNS[run]
    writer = TraceWriter(path, command=f"compare fixture {run}", workload="fixture",
                         config=spec["config"], seed=0)
    tr = Tracer(writer, ps_per_tick=NS)
    root = tr.start_task(-1, tr.kind("Simulation", "Simulation"), tr.location("Driver"), 0)
    cp = tr.location("GPU.CommandProcessor")
    for name, start, end in spec["kernels"]:
        tr.end_task(tr.start_task(root, tr.kind("kernel", name), cp, start), end)
    for loc, start, end in spec["wavefronts"]:
        tr.end_task(tr.start_task(root, tr.kind("wavefront", "wavefront"), tr.location(loc),
                                  start), end)
    l2, l1 = tr.location("GPU.L2[0]"), tr.location("GPU.SA[0].L1V[0]")
    for i, tag in enumerate(spec["tags"]):
        start = 10 + 10 * i
        out = tr.trace_req_initiate(root, tr.kind("req_out", "ReadReq"), l1, start - 2)
        inn = tr.trace_req_receive(out, tr.kind("req_in", "ReadReq"), l2, start)
        tr.tag_task(inn, start, tr.tag_name(tag))
        tr.trace_req_complete(inn, start + 10)
        tr.trace_req_finalize(out, start + 11)
    simd = tr.location("GPU.CU[0].SIMD[0]")
    for i in range(spec["valu"]):
        tr.end_task(tr.start_task(root, tr.kind("inst", "VALU"), simd, 20 + 4 * i), 24 + 4 * i)
    tr.end_task(root, spec["end"])
    tr.close(spec["end"])
    writer.finalize(completed=True, virtual_end_ps=spec["end"] * NS)
    writer.close()
    return path
