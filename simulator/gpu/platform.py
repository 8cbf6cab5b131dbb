"""The GPU platform: builds and wires the components, then runs kernels on them.

``GPU(config, tracer, trace_level)`` builds, as MGPUSim's R9 Nano platform builder does,
a Command Processor, ``shader_arrays x cus_per_shader_array`` compute units each with an
L1V, ``l2.banks`` L2 banks per XCD (``gpu.xcds``, the CUs split evenly among them), a
memory-side cache slice per memory channel if ``mall.slice_bytes`` is not 0, and the
memory channels, all on one event engine.
``run_kernel`` simulates one ``KernelLaunch`` to completion; launches run one after the
other on the same timeline, so caches stay warm between them.

Each component is written once (``memory.py``, ``compute_unit.py``,
``command_processor.py``); ``implementation`` names the build that runs it, as
``simulator.build`` defines them: ``"cython"`` (compiled, on the Cython engine and
tracer) or ``"python"`` (the same sources interpreted, on the reference engine and
tracer). ``None`` takes the build ``simulator.build`` chooses. Both give identical traces.
"""
import copy
from types import SimpleNamespace

from .. import build as _build
from ..engine import module_for as engine_module
from ..stream import WorkGroupSource
from ..tracing import NO_TASK
from .config import (
    LINE_BYTES,
    address_hash,
    default_config,
    dram_channels,
    dram_interleave,
    l2_banks,
    validate,
)
from .trace_vocabulary import TraceKeys, parse_trace_level

cython_available = _build.compiled_available
default_implementation = _build.default_build


def components(implementation):
    """The engine and component classes of ``implementation`` ("python" or "cython")."""
    memory = _build.module("simulator.gpu.memory", implementation)
    compute_unit = _build.module("simulator.gpu.compute_unit", implementation)
    command_processor = _build.module("simulator.gpu.command_processor", implementation)
    return SimpleNamespace(Engine=engine_module(implementation).Engine,
                           AddressMap=memory.AddressMap, DRAMChannel=memory.DRAMChannel,
                           CacheBank=memory.CacheBank, L1VCache=memory.L1VCache,
                           ComputeUnit=compute_unit.ComputeUnit,
                           CommandProcessor=command_processor.CommandProcessor)


def dispatch_order(cus, xcds):
    """CU numbers in the order the dispatcher offers them work-groups: round robin over
    the XCDs (AMD's CDNA 3 places consecutive work-groups on consecutive XCDs), in CU
    order within one."""
    per_xcd = cus // xcds
    return [x * per_xcd + k for k in range(per_xcd) for x in range(xcds)]


class SimulationStalled(RuntimeError):
    """Work is left but no event is scheduled: a modelling bug, never a normal outcome."""


class GPU:
    """A whole GPU on one event engine."""

    def __init__(self, config=None, tracer=None, trace_level="inst", implementation=None):
        self.config = validate(copy.deepcopy(config if config is not None else default_config()))
        self.implementation = _build.check_build(implementation)
        build = components(self.implementation)
        self.tracer = tracer
        self.levels = parse_trace_level(trace_level)
        cfg = self.config
        keys = self.keys = TraceKeys(tracer, self.levels, cfg)
        engine = self.engine = build.Engine()
        n_cus = cfg["gpu"]["shader_arrays"] * cfg["gpu"]["cus_per_shader_array"]
        xcds = cfg["gpu"]["xcds"]
        banks = cfg["l2"]["banks"]
        per_sa = cfg["gpu"]["cus_per_shader_array"]
        hashed = address_hash(cfg)
        bank_map = build.AddressMap(cfg["l2"]["interleave_bytes"], banks, hashed, LINE_BYTES)
        channels = dram_channels(cfg)
        channel_map = build.AddressMap(dram_interleave(cfg), channels, hashed, LINE_BYTES)
        self.dram = [build.DRAMChannel(engine, keys.name_dram[m], cfg, tracer, keys, m)
                     for m in range(channels)]
        below = self.dram
        self.mall = []
        if cfg["mall"]["slice_bytes"]:
            whole = build.AddressMap(LINE_BYTES, 1, False, LINE_BYTES)  # one channel each
            self.mall = below = [
                build.CacheBank(engine, keys.name_mall[m], cfg["mall"], cfg["mall"]["slice_bytes"],
                                hashed, tracer, keys, keys.loc_mall[m], channel_map, m, whole,
                                [self.dram[m]])
                for m in range(channels)]
        self.l2 = [build.CacheBank(engine, keys.name_l2[b], cfg["l2"], cfg["l2"]["bank_bytes"],
                                   hashed, tracer, keys, keys.loc_l2[b], bank_map, b % banks,
                                   channel_map, below)
                   for b in range(l2_banks(cfg))]
        per_xcd = n_cus // xcds
        self.l1v = [build.L1VCache(engine, f"GPU.SA[{c // per_sa}].L1V[{c}]", cfg, tracer, keys,
                                   c, self.l2[c // per_xcd * banks:(c // per_xcd + 1) * banks],
                                   bank_map)
                    for c in range(n_cus)]
        self.cus = [build.ComputeUnit(engine, f"GPU.SA[{c // per_sa}].CU[{c}]", cfg, tracer,
                                      keys, c, self.l1v[c]) for c in range(n_cus)]
        self.cp = build.CommandProcessor(engine, "GPU.CommandProcessor", cfg, tracer, keys,
                                         [self.cus[c] for c in dispatch_order(n_cus, xcds)])
        self.root_task = NO_TASK
        self.kernels = 0
        c = cfg["cu"]
        self.resident_wavefronts = n_cus * c["simds"] * c["wf_slots_per_simd"]

    @property
    def now(self):
        """The current cycle."""
        return self.engine.now

    @property
    def events(self):
        """Events processed so far."""
        return self.engine.events

    def start_simulation(self, details=None):
        """Open the ``Simulation`` root task (once, before the first kernel)."""
        if self.keys.kernel and self.root_task == NO_TASK:
            self.root_task = self.tracer.start_task(NO_TASK, self.keys.kind_sim, self.keys.loc_gpu,
                                                    self.now, details)
        return self.root_task

    def run_kernel(self, launch, progress=None, horizon=20000):
        """Simulate ``launch`` to completion; returns its duration in cycles.

        ``progress(completed_work_groups)`` is called every ``horizon`` simulated cycles.
        """
        start = self.now
        kernel_task = NO_TASK
        if self.keys.kernel:
            kernel_task = self.tracer.start_task(
                self.root_task, self.keys.kernel_kind(launch.name), self.keys.loc_cp, start,
                {"launch": launch.launch_id, "global_size": list(launch.global_size),
                 "local_size": list(launch.local_size), "work_groups": len(launch.work_groups)})
        cp = self.cp
        if isinstance(launch.work_groups, WorkGroupSource):
            launch.work_groups.plan(self.resident_wavefronts)
        cp.launch(launch.work_groups, kernel_task)
        engine = self.engine
        while not cp.kernel_done:
            if engine.pending == 0:
                raise SimulationStalled(
                    f"kernel {launch.name!r} stalled at cycle {self.now}: {cp.completed} of "
                    f"{len(launch.work_groups)} work-groups done and nothing scheduled")
            engine.run(max(engine.now, engine.peek_time()) + horizon)
            if progress is not None:
                progress(cp.completed)
        self.kernels += 1
        return cp.kernel_end - start

    def finish(self):
        """Let in-flight write-backs drain and close the root task; returns the end cycle."""
        self.engine.run()
        if self.keys.kernel:
            self.tracer.end_task(self.root_task, self.now)
        return self.now

    def stats(self):
        """Counters a user wants after a run (hits, misses, instructions, events)."""
        return {
            "cycles": self.now,
            "events": self.engine.events,
            "instructions": sum(cu.instructions for cu in self.cus),
            "l1v_hits": sum(c.hits for c in self.l1v),
            "l1v_misses": sum(c.misses for c in self.l1v),
            "l2_hits": sum(c.hits for c in self.l2),
            "l2_misses": sum(c.misses for c in self.l2),
            "mall_hits": sum(c.hits for c in self.mall),
            "mall_misses": sum(c.misses for c in self.mall),
            "dram_requests": sum(d.served for d in self.dram),
        }
