"""Synthetic GPU-shaped traces, written through the public tracing API.

Not a timing model: a seeded generator of a plausible task mix for benchmarks, tests
and demos before a simulation exists. It lays out an R9-Nano-like component tree
(command processor, 64 CUs with 4 SIMDs, a TLB and an L1V each, per-shader-array
instruction and scalar caches, 16 L2 banks, 16 DRAM channels: 514 locations) and
fills it with about 30 (category, action) pairs: work-groups dispatched by
``req_out``/``req_in`` pairs, wavefronts, instructions per unit, and memory requests
that travel CU → L1V → L2 → DRAM as nested ``req_out``/``req_in`` chains.
"""
import numpy as np

from ..interrupts import DeferredInterrupt
from . import Tracer  # the Cython build when it is built
from .writer import TraceWriter, pending_output

INST_UNITS = ("VALU", "SALU", "LDS", "VMEM", "Branch", "Barrier", "Special")
INST_CYCLES = (4, 1, 8, 4, 1, 2, 1)


class _Layout:
    """Interned locations and kinds of the synthetic GPU."""

    def __init__(self, tracer, cus, shader_arrays=16, l2_banks=16, dram_channels=16):
        loc, kind = tracer.location, tracer.kind
        self.cp = loc("GPU.CommandProcessor")
        self.driver = loc("Driver")
        self.cu, self.simd, self.l1v, self.tlb = [], [], [], []
        for c in range(cus):
            name = f"GPU.SA[{c * shader_arrays // cus}].CU[{c}]"
            self.cu.append(loc(name))
            self.simd.append([loc(f"{name}.SIMD[{s}]") for s in range(4)])
            self.tlb.append(loc(f"GPU.SA[{c * shader_arrays // cus}].L1VTLB[{c}]"))
            self.l1v.append(loc(f"GPU.SA[{c * shader_arrays // cus}].L1VCache[{c}]"))
        for sa in range(shader_arrays):
            loc(f"GPU.SA[{sa}].L1ICache")
            loc(f"GPU.SA[{sa}].L1SCache")
        self.l2 = [loc(f"GPU.L2[{b}]") for b in range(l2_banks)]
        self.dram = [loc(f"GPU.DRAM[{d}]") for d in range(dram_channels)]
        self.simulation = kind("Simulation", "Simulation")
        self.kernel = kind("Driver Command", "LaunchKernelCommand")
        self.kernel_on_gpu = kind("kernel", "kernel")
        self.out_map = kind("req_out", "MapWGReq")
        self.in_map = kind("req_in", "MapWGReq")
        self.workgroup = kind("work-group", "work-group")
        self.wavefront = kind("wavefront", "wavefront")
        self.inst = [kind("inst", unit) for unit in INST_UNITS]
        self.out_read = kind("req_out", "ReadReq")
        self.in_read = kind("req_in", "ReadReq")
        self.out_write = kind("req_out", "WriteReq")
        self.in_write = kind("req_in", "WriteReq")
        self.out_trans = kind("req_out", "TranslationReq")
        self.in_trans = kind("req_in", "TranslationReq")
        self.cache_read = kind("cache_transaction", "read")
        self.cache_write = kind("cache_transaction", "write")
        self.dram_read = kind("dram_transaction", "read")
        self.dram_write = kind("dram_transaction", "write")
        self.fetch = kind("fetch", "fetch")
        self.hit = tracer.tag_name("read-hit")
        self.miss = tracer.tag_name("read-miss")


def generate(path, tasks=100_000, seed=0, cus=64, tracer_class=None, batch_size=1 << 16,
             command="synthetic"):
    """Write a finalized synthetic trace of about ``tasks`` tasks to ``path``.

    The trace is written beside ``path`` and moved there when finalized (also after a
    Ctrl-C, marked incomplete). Returns the number of tasks written. The same ``seed``
    gives the same file content.
    """
    with pending_output(path) as pending:
        writer = TraceWriter(pending.path, command=command, workload="synthetic",
                             config={"tasks": tasks, "cus": cus}, seed=seed, source="simulator",
                             watchable=True)
        try:
            tracer = (tracer_class or Tracer)(writer, ps_per_tick=1000, batch_size=batch_size)
            clock = [0]
            ctrl_c = DeferredInterrupt()
            try:
                ctrl_c.install()
                emit(tracer, tasks, seed, cus, clock, ctrl_c.check)
                completed = True
            except KeyboardInterrupt:
                completed = False  # Ctrl-C: keep what was traced, flag open tasks, mark incomplete
            finally:
                ctrl_c.uninstall()
            open_tasks = tracer.close(clock[0])
            writer.finalize(completed=completed, virtual_end_ps=clock[0] * 1000,
                            open_tasks=open_tasks)
        finally:
            writer.close()
        pending.publish()
    if not completed:
        raise KeyboardInterrupt
    return writer.tasks_written


def emit(tracer, tasks, seed, cus, clock, check=None):
    """Drive ``tracer`` with about ``tasks`` tasks; ``clock[0]`` follows the latest cycle.
    ``check`` is called between work-groups (it may raise to stop)."""
    rng = np.random.default_rng(seed)
    lay = _Layout(tracer, cus)
    st, en, tag = tracer.start_task, tracer.end_task, tracer.tag_task
    root = st(-1, lay.simulation, lay.driver, 0)
    kernel = st(root, lay.kernel, lay.driver, 0)
    gpu_kernel = st(kernel, lay.kernel_on_gpu, lay.cp, 10)
    emitted = 3
    cu_free = np.zeros(cus, dtype=np.int64) + 20
    wg = 0
    while emitted < tasks:
        if check is not None:
            check()
        c = int(np.argmin(cu_free))  # the dispatcher's next work-group goes to the first free CU
        t0 = int(cu_free[c]) + int(rng.integers(0, 8))
        wg += 1
        dispatch = st(gpu_kernel, lay.out_map, lay.cp, t0)
        served = st(dispatch, lay.in_map, lay.cu[c], t0 + 2)
        group = st(served, lay.workgroup, lay.cu[c], t0 + 2)
        emitted += 3
        group_end = t0 + 2
        for w in range(4):
            t = t0 + 4 + w
            wave = st(group, lay.wavefront, lay.cu[c], t)
            emitted += 1
            units = rng.choice(len(INST_UNITS), size=24, p=(.45, .2, .1, .12, .08, .03, .02))
            for u in units.tolist():
                simd = lay.simd[c][w % 4]
                inst = st(wave, lay.inst[u], simd, t)
                emitted += 1
                if INST_UNITS[u] == "VMEM":
                    t, emitted = _memory(tracer, lay, rng, inst, c, t, emitted, tag)
                t += INST_CYCLES[u]
                en(inst, t)
            en(wave, t)
            group_end = max(group_end, t)
        en(group, group_end)
        tracer.trace_req_complete(served, group_end)
        tracer.trace_req_finalize(dispatch, group_end + 2)
        cu_free[c] = group_end + 1
        clock[0] = max(clock[0], group_end + 2)
    last = int(cu_free.max()) + 10
    en(gpu_kernel, last - 5)
    en(kernel, last - 2)
    en(root, last)
    clock[0] = last


def _memory(tracer, lay, rng, inst, c, t, emitted, tag):
    """One vector-memory access: CU → L1V (→ L2 → DRAM on a miss); returns (time, count)."""
    write = rng.random() < 0.25
    out_kind, in_kind = (lay.out_write, lay.in_write) if write else (lay.out_read, lay.in_read)
    cu_out = tracer.trace_req_initiate(inst, out_kind, lay.cu[c], t)
    l1_in = tracer.trace_req_receive(cu_out, in_kind, lay.l1v[c], t + 1)
    trans = tracer.start_task(l1_in, lay.cache_write if write else lay.cache_read, lay.l1v[c], t + 1)
    emitted += 3
    t_done = t + 4
    if write or rng.random() < 0.4:
        tag(trans, t + 2, lay.miss)
        bank = int(rng.integers(0, len(lay.l2)))
        l1_out = tracer.trace_req_initiate(trans, out_kind, lay.l1v[c], t + 2)
        l2_in = tracer.trace_req_receive(l1_out, in_kind, lay.l2[bank], t + 4 + int(rng.integers(0, 6)))
        emitted += 2
        t_l2 = t + 14
        if rng.random() < 0.3:
            l2_out = tracer.trace_req_initiate(l2_in, out_kind, lay.l2[bank], t + 12)
            dram_in = tracer.trace_req_receive(l2_out, in_kind, lay.dram[bank],
                                               t + 14 + int(rng.integers(0, 20)))
            dram_t = tracer.start_task(dram_in, lay.dram_write if write else lay.dram_read,
                                       lay.dram[bank], t + 40)
            tracer.end_task(dram_t, t + 90)
            tracer.trace_req_complete(dram_in, t + 100)
            tracer.trace_req_finalize(l2_out, t + 104)
            emitted += 3
            t_l2 = t + 106
        tracer.trace_req_complete(l2_in, t_l2)
        tracer.trace_req_finalize(l1_out, t_l2 + 2)
        t_done = t_l2 + 4
    else:
        tag(trans, t + 2, lay.hit)
    tracer.end_task(trans, t_done - 1)
    tracer.trace_req_complete(l1_in, t_done)
    tracer.trace_req_finalize(cu_out, t_done + 1)
    return t_done + 2, emitted
