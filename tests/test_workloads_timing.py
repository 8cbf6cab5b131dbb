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


def test_pagerank_is_dispatch_bound_so_rate_two_is_faster():
    from simulator.gpu.config import apply_overrides

    def at_rate(rate):
        workload = WORKLOADS["pagerank"](seed=0, nodes=512, edges=4096, iterations=1)
        config = apply_overrides(default_config(), [f"cp.wg_dispatch_per_cycle={rate}"])
        return gpu_run.simulate(workload, config, out_path=None, progress=False).cycles

    assert at_rate(2) < at_rate(1)
