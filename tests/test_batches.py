"""A launch runs in batches of work-groups: the same trace at any batch size, and memory
that does not grow with the launch."""
import sqlite3
import sys
import tracemalloc
from pathlib import Path

import numpy as np
import pytest

from simulator.gpu import apply_overrides, default_config
from simulator.gpu.run import simulate
from simulator.kernels import Memory, compile_source, start_launch
from simulator.kernels import batches as batching
from simulator.kernels.records import KernelRecorder
from simulator.runs.records import simulate_with_records
from simulator.stream import WorkGroupStream, complete
from simulator.workloads import WORKLOADS

sys.path.insert(0, str(Path(__file__).parent))
from trace_compare import table_digests  # noqa: E402

SMALL_GPU = ["gpu.shader_arrays=1", "gpu.cus_per_shader_array=2"]   # holds 80 wavefronts

# Batches of one work-group, of a few, and one batch for the whole launch.
FACTORS = [0.0, 0.05, 1000.0]


def traced(tmp_path, monkeypatch, factor, name, options, **recorder_options):
    monkeypatch.setattr(batching, "BATCHES_RESIDENT", factor)
    out = tmp_path / f"{name}-{factor}.sqlite"
    recorder = KernelRecorder(**recorder_options)
    simulate_with_records(WORKLOADS[name](seed=2, **options), apply_overrides(default_config(),
                          SMALL_GPU), out, recorder, progress=False, writer_process=False)
    return table_digests(out), out


@pytest.mark.parametrize("name, options", [
    ("transpose", {"size": 128}),
    ("reduction-v1", {"size": 8192, "local": 64}),
    ("pagerank", {"nodes": 200, "edges": 1500, "iterations": 2}),
    ("sobel", {"width": 64, "height": 48, "local_x": 16, "local_y": 8}),
])
def test_every_table_is_the_same_at_any_batch_size(tmp_path, monkeypatch, name, options):
    digests = [traced(tmp_path, monkeypatch, f, name, options)[0] for f in FACTORS]
    assert digests[0]["kernel_launch"][0] > 0 and digests[0]["task"][0] > 100
    assert digests[0] == digests[1] == digests[2]


def test_records_cut_at_their_limit_are_the_same_at_any_batch_size(tmp_path, monkeypatch):
    options = {"size": 8192, "local": 64}
    runs = [traced(tmp_path, monkeypatch, f, "reduction-v1", options, max_accesses=3000,
                   max_branch_bits=2000) for f in FACTORS]
    db = sqlite3.connect(runs[0][1])
    first = db.execute("SELECT count(*), count(DISTINCT work_group), max(work_group)"
                       " FROM kernel_access WHERE launch = 0").fetchone()
    # whole work-groups from the first: 3000 rows hold 11 groups' 261 rows each
    assert first == (11 * 261, 11, 10)
    assert db.execute("SELECT watch_truncated, branch_truncated FROM kernel_launch"
                      " WHERE id = 0").fetchone() == (1, 1)
    assert runs[0][0] == runs[1][0] == runs[2][0]


LAST_GROUP_SUMS = """
kernel void partial_then_total(global const float *in, global float *partial,
                               global volatile uint *done, global float *total)
{
    local float sums[64];
    uint l = get_local_id(0);
    sums[l] = in[get_global_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = 32; s > 0; s >>= 1) {
        if (l < s) sums[l] += sums[l + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (l == 0) {
        partial[get_group_id(0)] = sums[0];
        mem_fence(CLK_GLOBAL_MEM_FENCE);
        /* the group that finishes last adds up every group's partial sum */
        if (atomic_inc(done) == get_num_groups(0) - 1) {
            float t = 0.0f;
            for (uint g = 0; g < get_num_groups(0); g++) t += partial[g];
            *total = t;
        }
    }
}
"""


@pytest.mark.parametrize("factor", FACTORS)
def test_the_last_group_reads_what_every_earlier_group_wrote(monkeypatch, factor):
    monkeypatch.setattr(batching, "BATCHES_RESIDENT", factor)
    program = compile_source("last_group.cl", LAST_GROUP_SUMS)
    memory = Memory()
    values = np.random.default_rng(0).random(64 * 300, dtype=np.float32)
    args = {"in": memory.buffer("in", values),
            "partial": memory.buffer("partial", np.zeros(300, np.float32)),
            "done": memory.buffer("done", np.zeros(1, np.uint32)),
            "total": memory.buffer("total", np.zeros(1, np.float32))}
    launch = start_launch(program, "partial_then_total", (64 * 300,), (64,), args)
    launch.work_groups.plan(80)
    streams = 0
    for group in launch.work_groups:
        streams += isinstance(group, WorkGroupStream)
    assert streams == 300 and launch.work_groups.done
    assert args["done"].array[0] == 300
    assert args["total"].array[0] == pytest.approx(values.sum(dtype=np.float64), rel=1e-4)


LOOP = """
kernel void loop(global const float *in, global float *out, int trips)
{
    float acc = 0.0f;
    for (int k = 0; k < trips; k++) acc += in[(get_global_id(0) + 64 * k) & 4095] * 0.5f;
    out[get_global_id(0)] = acc;
}
"""


def peak_bytes(groups):
    """Peak traced memory of simulating ``groups`` work-groups of LOOP, less its buffers."""
    program = compile_source("loop.cl", LOOP)
    memory = Memory()
    args = {"in": memory.buffer("in", np.ones(4096, np.float32)),
            "out": memory.buffer("out", np.zeros(64 * groups, np.float32)), "trips": 40}

    class OneLaunch:
        name, seed = "loop", 0

        def launches(self, recorder=None):
            launch = start_launch(program, "loop", (64 * groups,), (64,), args)
            yield launch
            complete(launch)

    tracemalloc.start()
    try:
        simulate(OneLaunch(), apply_overrides(default_config(), SMALL_GPU), progress=False)
        return tracemalloc.get_traced_memory()[1] - args["out"].array.nbytes
    finally:
        tracemalloc.stop()


def test_memory_does_not_grow_with_the_work_groups(monkeypatch):
    monkeypatch.setattr(batching, "BATCHES_RESIDENT", 1)   # batches of 80 work-groups
    small, large = peak_bytes(160), peak_bytes(640)
    assert large <= 1.2 * small, (small, large)
