"""The workloads on the timing model: the orderings the case studies rely on."""
import pytest

gpu_run = pytest.importorskip("simulator.gpu.run")
from simulator.gpu.config import default_config  # noqa: E402
from simulator.workloads import WORKLOADS  # noqa: E402


def cycles(name, **options):
    workload = WORKLOADS[name](seed=0, **options)
    result = gpu_run.simulate(workload, default_config(), out_path=None, progress=False)
    workload.check()
    return result.cycles


def test_reduction_cycles_order_v1_v2_v3_on_the_same_input():
    v1, v2, v3 = (cycles(f"reduction-v{v}", size=16384, local=256) for v in (1, 2, 3))
    assert v1 > v2 > v3, (v1, v2, v3)
