"""Per-unit timing of the compute unit and dispatch, on hand-built instruction streams.

Helpers here (``run``, ``wavefront``, ``launch``...) are shared by the other GPU tests.
"""
from pathlib import Path

import pytest

from simulator.build import compiled_available, is_compiled, module
from simulator.gpu import GPU, apply_overrides, default_config
from simulator.stream import KernelLaunch, Unit, WorkGroupStream, make_stream
from simulator.tracing import tracer_class

TINY = ["gpu.shader_arrays=1", "gpu.cus_per_shader_array=2", "l2.banks=2",
        "cp.launch_overhead=0"]
FULL = {"active": 64, "exec_lo": 0xFFFFFFFF, "exec_hi": 0xFFFFFFFF}


class Capture:
    """A tracer sink that keeps everything in memory, resolved to names."""

    def __init__(self):
        self.tasks = {}
        self.tags = []
        self.kinds = {}
        self.locations = {}
        self.tag_names = {}

    def write_batch(self, tasks, details, tags, locations, kinds, tag_names):
        for row in tasks.tolist():
            self.tasks[row[0]] = tuple(row)
        self.tags += [tuple(t) for t in tags.tolist()]
        self.locations.update({k: name for k, name in locations})
        self.kinds.update({k: (c, a) for k, c, a in kinds})
        self.tag_names.update({k: name for k, name in tag_names})

    def rows(self, category, action=None, location=None):
        """Task rows of a kind (and location substring), by start time then key."""
        out = [r for r in self.tasks.values()
               if self.kinds[r[2]][0] == category
               and (action is None or self.kinds[r[2]][1] == action)
               and (location is None or location in self.locations[r[3]])]
        return sorted(out, key=lambda r: (r[4], r[0]))

    def tags_named(self, name):
        return [t for t in self.tags if self.tag_names[t[2]] == name]


def inst(unit, **fields):
    record = dict(FULL, unit=int(unit))
    record.update(fields)
    return record


def wavefront(*records):
    """A stream from records; a VMEM record may give ``lines=[...]`` (64 B line addresses)."""
    addresses = []
    out = []
    for rec in records:
        rec = dict(rec)
        lines = rec.pop("lines", None)
        if lines is not None:
            rec["addr_off"] = len(addresses)
            rec["addr_cnt"] = len(lines)
            addresses.extend(lines)
        out.append(rec)
    return make_stream(out, addresses)


def launch(groups, name="k", lds_bytes=0, launch_id=0, vgprs=32, sgprs=16):
    """A KernelLaunch of work-groups, each a list of wavefront streams."""
    wgs = [WorkGroupStream((i, 0, 0), list(wfs), lds_bytes=lds_bytes, vgprs_per_wavefront=vgprs,
                           sgprs_per_wavefront=sgprs) for i, wfs in enumerate(groups)]
    size = 64 * max((len(w) for w in groups), default=1)
    return KernelLaunch(name, (size * len(groups),), (size,), wgs, launch_id)


def run(launches, overrides=(), implementation="python", level="all", tiny=True):
    cfg = apply_overrides(default_config(), (TINY if tiny else []) + list(overrides))
    sink = Capture()
    tracer = tracer_class(implementation)(sink, ps_per_tick=1)
    gpu = GPU(cfg, tracer, level, implementation)
    gpu.start_simulation()
    cycles = [gpu.run_kernel(item) for item in launches]
    gpu.finish()
    assert tracer.close(gpu.now) == 0, "every task must be closed by the end of a run"
    return gpu, sink, cycles


@pytest.mark.parametrize("n", [1, 5, 17])
def test_n_independent_valu_on_one_simd_take_4n_cycles(build, n):
    gpu, trace, (cycles,) = run([launch([[wavefront(*[inst(Unit.VALU)] * n)]])],
                                implementation=build)
    valu = trace.rows("inst", "VALU")
    assert len(valu) == n
    first, last = valu[0][4], valu[-1][5]
    assert last - first == 4 * n
    assert [r[5] - r[4] for r in valu] == [4] * n
    assert all(b[4] == a[5] for a, b in zip(valu, valu[1:]))  # back to back
    # the CU receives the MapWGReq a cycle after dispatch and the wavefront issues a
    # cycle later; END retires as the last VALU completes
    assert cycles == 2 + 4 * n


def test_simds_run_in_parallel_but_share_issue(build):
    n = 8
    two = [[wavefront(*[inst(Unit.VALU)] * n), wavefront(*[inst(Unit.VALU)] * n)]]
    _, trace, (parallel,) = run([launch(two)], implementation=build)
    simds = {trace.locations[r[3]] for r in trace.rows("inst", "VALU")}
    assert len(simds) == 2  # the dispatcher spread them over two SIMDs
    # one SIMD pool issues per cycle: the second wavefront trails by one cycle
    assert parallel == 2 + 4 * n + 1
    _, trace, (serial,) = run([launch(two)], ["cu.simds=1"], implementation=build)
    assert serial == 2 + 8 * n


def test_lds_bank_conflicts_cost_their_passes(build):
    k = 6
    lat = default_config()["cu"]["lds_latency"]
    durations = {}
    for passes in (1, 8):
        stream = wavefront(*[inst(Unit.LDS, passes=passes)] * k)
        _, trace, (cycles,) = run([launch([[stream]])], implementation=build)
        lds = trace.rows("inst", "LDS")
        # two half-wavefronts, each served in `passes` passes
        assert {r[5] - r[4] for r in lds} == {lat + 2 * passes}
        durations[passes] = cycles
    assert durations[8] - durations[1] == k * 2 * (8 - 1)
    # a half-wavefront EXEC mask needs half the passes
    half = wavefront(inst(Unit.LDS, passes=8, exec_hi=0, active=32))
    _, trace, _ = run([launch([[half]])], implementation=build)
    (row,) = trace.rows("inst", "LDS")
    assert row[5] - row[4] == lat + 8
    # the executor's lds_cycles (all lane groups: 8 for a conflict-free 128-bit access)
    # is used when given, whatever the worst-group degree
    wide = wavefront(inst(Unit.LDS, passes=1, lds_cycles=8), inst(Unit.LDS, passes=2, lds_cycles=16))
    _, trace, _ = run([launch([[wide]])], implementation=build)
    assert [r[5] - r[4] for r in trace.rows("inst", "LDS")] == [lat + 8, lat + 16]


def test_scalar_and_branch_units(build):
    cfg = default_config()["cu"]
    stream = wavefront(inst(Unit.SALU), inst(Unit.BRANCH), inst(Unit.SALU))
    _, trace, (cycles,) = run([launch([[stream]])], implementation=build)
    assert cycles == 2 + 2 * cfg["salu_latency"] + cfg["branch_latency"]
    assert [trace.locations[r[3]] for r in trace.rows("inst")] == [
        "GPU.SA[0].CU[0].Scalar", "GPU.SA[0].CU[0].Branch", "GPU.SA[0].CU[0].Scalar"]


def test_barrier_waits_for_every_wavefront_of_the_group(build):
    slow = wavefront(*[inst(Unit.VALU)] * 10, inst(Unit.BARRIER), inst(Unit.VALU))
    fast = wavefront(inst(Unit.VALU), inst(Unit.BARRIER), inst(Unit.VALU))
    _, trace, _ = run([launch([[slow, fast]])], implementation=build)
    barriers = trace.rows("inst", "Barrier")
    assert len(barriers) == 2
    release = max(r[4] for r in barriers) + 1
    assert {r[5] for r in barriers} == {release}
    after = [r for r in trace.rows("inst", "VALU") if r[4] >= release]
    assert len(after) == 2 and min(r[4] for r in after) == release


def test_waitcnt_waits_for_the_load(build):
    stream = wavefront(inst(Unit.VMEM, lines=[0]), inst(Unit.WAITCNT), inst(Unit.VALU))
    _, trace, _ = run([launch([[stream]])], implementation=build)
    (load,) = trace.rows("inst", "VMEM")
    (valu,) = trace.rows("inst", "VALU")
    assert valu[4] >= load[5] + 1
    # without the wait the VALU overlaps the load
    stream = wavefront(inst(Unit.VMEM, lines=[0]), inst(Unit.VALU))
    _, trace, _ = run([launch([[stream]])], implementation=build)
    (load,) = trace.rows("inst", "VMEM")
    (valu,) = trace.rows("inst", "VALU")
    assert valu[4] < load[5]


@pytest.mark.parametrize("resources", [
    {"lds_bytes": 16384},       # 64 KB of LDS / 16 KB
    {"lds_bytes": 16200},       # rounded up to the 256 B granularity: still 4
    {"vgprs": 200},             # 256 VGPRs per SIMD: one wavefront per SIMD
    {"sgprs": 790},             # rounded to 800 of the CU's 3200 SGPRs
], ids=["lds", "lds-granularity", "vgpr", "sgpr"])
def test_dispatch_rate_and_occupancy_limits(build, resources):
    long_wf = [inst(Unit.VALU)] * 50
    groups = [[wavefront(*long_wf)] for _ in range(12)]
    for rate in (1, 2):
        _, trace, _ = run([launch(groups, **resources)],
                          [f"cp.wg_dispatch_per_cycle={rate}", "cp.map_buffer=8"],
                          implementation=build)
        maps = trace.rows("req_out", "MapWGReq")
        starts = [r[4] for r in maps]
        # the first wave: 2 CUs x 4 work-groups, then the resource is exhausted
        assert starts[:8] == [i // rate for i in range(8)]
        assert min(starts[8:]) > 100  # the rest waits for a work-group to finish
        wgs = trace.rows("work-group")
        for cu in ("CU[0]", "CU[1]"):
            mine = [r for r in wgs if cu in trace.locations[r[3]]]
            peak = max(sum(1 for o in mine if o[4] <= r[4] < o[5]) for r in mine)
            assert peak == 4


def test_lds_allocation_rounds_up_to_its_granularity(build):
    # 16,385 B take 65 granules of 256 B (16,640 B): three work-groups fit in 64 KB, not
    # four (rounding by C's truncating division once gave 16,128 B, and four)
    groups = [[wavefront(*[inst(Unit.VALU)] * 50)] for _ in range(8)]
    _, trace, _ = run([launch(groups, lds_bytes=16385)], ["cp.map_buffer=8"],
                      implementation=build)
    wgs = trace.rows("work-group")
    for cu in ("CU[0]", "CU[1]"):
        mine = [r for r in wgs if cu in trace.locations[r[3]]]
        assert max(sum(1 for o in mine if o[4] <= r[4] < o[5]) for r in mine) == 3


def test_oversized_work_group_is_a_clear_error():
    wfs = [wavefront(inst(Unit.VALU)) for _ in range(41)]
    with pytest.raises(ValueError, match="cannot fit on an empty CU"):
        run([launch([wfs])])


def test_trace_levels_select_detail(build):
    stream = wavefront(inst(Unit.VALU), inst(Unit.VMEM, lines=[0, 64]), inst(Unit.WAITCNT))
    counts = {}
    for level in ("kernel", "wg", "wf", "inst", "all", "kernel,mem"):
        _, trace, _ = run([launch([[stream]])], implementation=build, level=level)
        counts[level] = {c for c, _ in (trace.kinds[r[2]] for r in trace.tasks.values())}
    assert counts["kernel"] == {"Simulation", "kernel"}
    assert counts["wg"] == {"Simulation", "kernel", "req_out", "req_in", "work-group"}
    assert counts["wf"] == counts["wg"] | {"wavefront"}
    assert counts["inst"] == counts["wf"] | {"inst"}
    assert counts["all"] == counts["inst"]
    assert counts["kernel,mem"] == {"Simulation", "kernel", "req_out", "req_in"}


def test_task_tree_is_rooted_at_the_simulation(build):
    stream = wavefront(inst(Unit.VALU), inst(Unit.VMEM, lines=[0]), inst(Unit.WAITCNT))
    _, trace, _ = run([launch([[stream]]), launch([[stream]], name="k2")], implementation=build)
    tasks = trace.tasks
    (root,) = trace.rows("Simulation")
    kernels = trace.rows("kernel")
    assert [trace.kinds[k[2]][1] for k in kernels] == ["k", "k2"]
    for row in tasks.values():
        if row[0] != root[0]:
            assert row[1] in tasks, f"task {row} has no recorded parent"
            parent = tasks[row[1]]
            assert parent[4] <= row[4], "a child never starts before its parent"
    assert kernels[1][4] >= kernels[0][5]
    (l1_in, *_) = trace.rows("req_in", "ReadReq", "L1V")
    cu_out = tasks[l1_in[1]]
    assert trace.kinds[tasks[cu_out[1]][2]] == ("inst", "VMEM")


def test_idle_components_do_not_tick(build):
    n = 30
    gpu, _, (cycles,) = run([launch([[wavefront(*[inst(Unit.VALU)] * n)]])], implementation=build)
    busy, idle = gpu.cus
    assert idle.ticks == 0 and all(c.ticks == 0 for c in gpu.l1v + gpu.l2 + gpu.dram)
    # a tick to issue, one to find nothing to do, then asleep until the SIMD frees
    assert busy.ticks <= 2 * n + 4 < cycles
    assert gpu.events < 3 * n + 10


def test_the_unit_codes_are_the_stream_formats(build):
    # the compiled build holds them as C constants (compute_unit.pxd), a copy
    compute_unit = module("simulator.gpu.compute_unit", build)
    assert compute_unit.UNIT_CODES == {unit.name: int(unit) for unit in Unit}


@pytest.mark.skipif(not compiled_available(), reason="compiled build missing")
@pytest.mark.parametrize("name", ["memory", "compute_unit", "command_processor"])
def test_each_component_is_one_source_run_by_both_builds(name):
    compiled = module(f"simulator.gpu.{name}", "cython")
    source = module(f"simulator.gpu.{name}", "python")
    assert is_compiled(compiled) and not is_compiled(source)
    assert Path(source.__file__).name == f"{name}.py"
    assert Path(compiled.__file__).parent == Path(source.__file__).parent
    assert Path(compiled.__file__).name.startswith(f"{name}.")
