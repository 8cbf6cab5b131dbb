"""The compiled build and the plain-Python build give the same trace, task for task."""
import random

import pytest
from test_gpu_units import inst, launch, run, wavefront

from simulator.gpu.platform import cython_available
from simulator.stream import Unit

pytestmark = pytest.mark.skipif(not cython_available(), reason="Cython GPU not built")


def random_launches(seed, kernels=2, groups=10):
    """Seeded random work-groups exercising every unit, barriers and shared lines."""
    rng = random.Random(seed)
    launches = []
    for k in range(kernels):
        wgs = []
        for _ in range(groups):
            n_wf = rng.choice((1, 2, 4))
            body = []
            for _ in range(rng.randrange(5, 25)):
                unit = rng.choice((Unit.VALU, Unit.VALU, Unit.SALU, Unit.BRANCH, Unit.LDS,
                                   Unit.VMEM, Unit.VMEM, Unit.WAITCNT))
                if unit == Unit.VMEM:
                    first = rng.randrange(256)
                    lines = sorted({(first + rng.randrange(8)) * 64 for _ in range(rng.randrange(1, 9))})
                    body.append(inst(unit, lines=lines, write=int(rng.random() < 0.3)))
                elif unit == Unit.LDS:
                    body.append(inst(unit, passes=rng.choice((1, 2, 8)),
                                     exec_hi=rng.choice((0, 0xFFFFFFFF))))
                else:
                    body.append(inst(unit))
            barrier_at = rng.randrange(len(body))
            body.insert(barrier_at, inst(Unit.BARRIER))
            wgs.append([wavefront(*body) for _ in range(n_wf)])
        launches.append(launch(wgs, name=f"random{k}", lds_bytes=rng.choice((0, 4096, 20000)),
                               launch_id=k))
    return launches


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("overrides", [
    [],
    ["l1v.mshrs=2", "l1v.buffer=2", "l2.buffer=2", "dram.buffer=1", "l2.mshrs=2",
     "cp.wg_dispatch_per_cycle=2", "l1v.size_bytes=1024", "l2.bank_bytes=2048",
     "l2.write_buffer=1"],
], ids=["default", "contended"])
def test_cython_and_python_traces_are_identical(seed, overrides):
    launches = random_launches(seed)
    py_gpu, py_trace, py_cycles = run(launches, overrides, implementation="python")
    cy_gpu, cy_trace, cy_cycles = run(launches, overrides, implementation="cython")
    assert py_cycles == cy_cycles
    assert py_gpu.stats() == cy_gpu.stats()
    assert len(py_trace.tasks) > 500
    assert py_trace.tasks == cy_trace.tasks
    assert py_trace.tags == cy_trace.tags
    assert py_trace.kinds == cy_trace.kinds and py_trace.locations == cy_trace.locations


@pytest.mark.parametrize("name, options", [
    ("transpose", {"size": 128}),
    ("reduction-v2", {"size": 4096}),
    ("pagerank", {"nodes": 128, "edges": 1024, "iterations": 2}),
])
def test_real_workloads_give_identical_traces(name, options):
    from simulator.workloads import WORKLOADS

    launches = WORKLOADS[name](seed=0, **options).made_launches()
    overrides = ["gpu.shader_arrays=2"]
    py_gpu, py_trace, py_cycles = run(launches, overrides, implementation="python")
    cy_gpu, cy_trace, cy_cycles = run(launches, overrides, implementation="cython")
    assert py_cycles == cy_cycles
    assert py_gpu.stats() == cy_gpu.stats()
    assert py_trace.tasks == cy_trace.tasks
    assert py_trace.tags == cy_trace.tags
