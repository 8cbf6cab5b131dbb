"""What the timing model writes into a trace: detail levels, names and task kinds.

The names follow MGPUSim so a trace reads like one Daisen users know: a ``Simulation``
root task, kernel tasks at ``GPU.CommandProcessor``, ``MapWGReq`` request pairs from the
Command Processor to ``GPU.SA[s].CU[c]``, ``work-group`` and ``wavefront`` tasks,
``inst`` tasks per execution unit (``GPU.SA[s].CU[c].SIMD[i]``, ``.Scalar``, ``.Branch``,
``.LDS``, ``.VMem``; barriers at ``.WFPool``) and ``ReadReq``/``WriteReq`` pairs along
CU → ``GPU.SA[s].L1V[c]`` → ``GPU.L2[b]`` (``GPU.XCD[x].L2[b]`` on a GPU of several
XCDs, banks numbered across the GPU) → ``GPU.MALL[m]`` (if the GPU has a memory-side
cache) → ``GPU.DRAM[m]``, where the caches tag their ``req_in`` with ``read-hit``,
``read-miss``, ``read-mshr-hit``, ``write-hit`` or ``write-miss``.

Everything is interned once, when the GPU is built, in a fixed order; components then
pass small integers only, and the same configuration gives the same keys.
"""
from ..tracing import NO_TASK
from .config import dram_channels

LEVELS = {"kernel": 1, "wg": 2, "wf": 4, "inst": 8, "mem": 16}
"""Trace detail levels, coarse to fine, as bits of a mask."""

ALL_LEVELS = 31


class TraceLevelError(ValueError):
    """A ``--trace-level`` value that names no level."""


def parse_trace_level(text):
    """Mask of the levels in ``text``.

    A single level is cumulative (``inst`` = kernel + wg + wf + inst); a comma-separated
    list is exactly that set (``kernel,mem``); ``all`` is everything and ``off`` nothing.
    """
    if isinstance(text, int):
        return text
    text = text.strip().lower()
    if text in ("off", "none", ""):
        return 0
    if text in ("all", "full"):
        return ALL_LEVELS
    names = [name.strip() for name in text.split(",")]
    unknown = [name for name in names if name not in LEVELS]
    if unknown:
        raise TraceLevelError(f"unknown trace level {unknown[0]!r}; choose from "
                              f"{', '.join(LEVELS)}, all or off (or a comma-separated set)")
    if len(names) == 1:
        return (LEVELS[names[0]] << 1) - 1
    mask = 0
    for name in names:
        mask |= LEVELS[name]
    return mask


def cu_name(cu, cus_per_sa):
    """Hierarchical name of compute unit ``cu`` (numbered across the whole GPU)."""
    return f"GPU.SA[{cu // cus_per_sa}].CU[{cu}]"


class TraceKeys:
    """Interned location, kind and tag keys of one GPU, and which levels are recorded.

    With no tracer every key is ``NO_TASK`` and every level is off.
    """

    UNITS = ("VALU", "SALU", "LDS", "VMEM", "Branch", "Barrier")

    def __init__(self, tracer, levels, config):
        self.tracer = tracer
        mask = levels if tracer is not None else 0
        self.kernel = bool(mask & LEVELS["kernel"])
        self.wg = bool(mask & LEVELS["wg"])
        self.wf = bool(mask & LEVELS["wf"])
        self.inst = bool(mask & LEVELS["inst"])
        self.mem = bool(mask & LEVELS["mem"])
        g = config["gpu"]
        n_cus = g["shader_arrays"] * g["cus_per_shader_array"]
        per_sa = g["cus_per_shader_array"]
        banks, xcds = config["l2"]["banks"], g["xcds"]
        channels = dram_channels(config)
        simds = config["cu"]["simds"]

        def loc(name, *used):
            return tracer.location(name) if any(used) else NO_TASK

        def kind(category, action, *used):
            return tracer.kind(category, action) if any(used) else NO_TASK

        def tag(name):
            return tracer.tag_name(name) if self.mem else NO_TASK

        # only what the chosen levels record is interned, so the trace lists no
        # component or kind without tasks
        k, wg, wf, ins, mem = self.kernel, self.wg, self.wf, self.inst, self.mem
        self.loc_gpu = loc("GPU", k)
        self.loc_cp = loc("GPU.CommandProcessor", k, wg)
        self.loc_cu = [loc(cu_name(c, per_sa), wg, mem) for c in range(n_cus)]
        self.loc_simd = [[loc(f"{cu_name(c, per_sa)}.SIMD[{s}]", ins) for s in range(simds)]
                         for c in range(n_cus)]
        self.loc_unit = {unit: [loc(f"{cu_name(c, per_sa)}.{name}", ins or (unit == "Barrier" and wf))
                                for c in range(n_cus)]
                         for unit, name in (("SALU", "Scalar"), ("Branch", "Branch"),
                                            ("LDS", "LDS"), ("VMEM", "VMem"),
                                            ("Barrier", "WFPool"))}
        self.loc_l1v = [loc(f"GPU.SA[{c // per_sa}].L1V[{c}]", mem) for c in range(n_cus)]
        self.name_l2 = [f"GPU.XCD[{b // banks}].L2[{b}]" if xcds > 1 else f"GPU.L2[{b}]"
                        for b in range(banks * xcds)]
        self.name_mall = [f"GPU.MALL[{m}]" for m in range(channels)]
        self.name_dram = [f"GPU.DRAM[{m}]" for m in range(channels)]
        self.loc_l2 = [loc(name, mem) for name in self.name_l2]
        has_mall = bool(config["mall"]["slice_bytes"])
        self.loc_mall = [loc(name, mem and has_mall) for name in self.name_mall]
        self.loc_dram = [loc(name, mem) for name in self.name_dram]

        self.kind_sim = kind("Simulation", "Simulation", k)
        self.kind_map_out = kind("req_out", "MapWGReq", wg)
        self.kind_map_in = kind("req_in", "MapWGReq", wg)
        self.kind_wg = kind("work-group", "work-group", wg)
        self.kind_wf = kind("wavefront", "wavefront", wf)
        self.kind_inst = {unit: kind("inst", unit, ins) for unit in self.UNITS}
        self.kind_read_out = kind("req_out", "ReadReq", mem)
        self.kind_write_out = kind("req_out", "WriteReq", mem)
        self.kind_read_in = kind("req_in", "ReadReq", mem)
        self.kind_write_in = kind("req_in", "WriteReq", mem)
        self.tag_read_hit = tag("read-hit")
        self.tag_read_miss = tag("read-miss")
        self.tag_read_mshr_hit = tag("read-mshr-hit")
        self.tag_write_hit = tag("write-hit")
        self.tag_write_miss = tag("write-miss")

    def kernel_kind(self, name):
        """Kind key of a kernel launch task, by kernel name."""
        return self.tracer.kind("kernel", name) if self.kernel else NO_TASK
