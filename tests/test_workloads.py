"""Workloads: real results equal numpy, and the behaviour each one exists to show."""
import numpy as np
import pytest

from simulator.stream import Unit
from simulator.workloads import WORKLOADS
from simulator.workloads.graphs import power_law_graph

SMALL = {
    "vectoradd": dict(size=1000, local=64),
    "transpose": dict(size=128),
    "reduction-v1": dict(size=5000, local=64),
    "reduction-v2": dict(size=5000, local=64),
    "reduction-v3": dict(size=5000, local=64),
    "pagerank": dict(nodes=300, edges=2000, iterations=2),
    "sobel": dict(width=64, height=48, local_x=16, local_y=8),
}


def all_insts(launches):
    return np.concatenate([w.insts for launch in launches for g in launch.work_groups
                           for w in g.wavefronts])


def test_every_workload_is_registered_with_its_options():
    assert set(WORKLOADS) == set(SMALL)
    import argparse

    for name, cls in WORKLOADS.items():
        parser = argparse.ArgumentParser()
        cls.add_arguments(parser)
        defaults = vars(parser.parse_args([]))
        assert set(SMALL[name]) <= set(defaults), name
        assert cls.name == name


@pytest.mark.parametrize("name", sorted(SMALL))
def test_results_equal_numpy(name):
    workload = WORKLOADS[name](seed=3, **SMALL[name])
    launches = workload.made_launches()
    assert launches and all(launch.work_groups for launch in launches)
    workload.check()


@pytest.mark.parametrize("name", ["vectoradd", "reduction-v3", "pagerank"])
def test_check_catches_a_wrong_result(name):
    workload = WORKLOADS[name](seed=3, **SMALL[name])
    workload.made_launches()
    if name == "vectoradd":
        workload.c.array[7] += 1
    elif name == "pagerank":
        workload.ranks[5] *= 2
    else:
        workload.result += 1.0
    with pytest.raises(AssertionError, match=name):
        workload.check()


def reduction_insts(version, local=256):
    workload = WORKLOADS[f"reduction-v{version}"](seed=0, size=4096, local=local)
    return all_insts([workload.made_launches()[0]])


def test_divergence_v1_issues_more_partial_mask_instructions_than_v3():
    def partial(insts):
        vector = insts[np.isin(insts["unit"], (Unit.VALU, Unit.LDS, Unit.VMEM))]
        return int((vector["active"] < 64).sum())

    v1, v3 = partial(reduction_insts(1)), partial(reduction_insts(3))
    assert v1 > 2 * v3, (v1, v3)


def test_bank_conflicts_v2_has_degree_above_one_and_v3_none():
    v2 = reduction_insts(2)
    v3 = reduction_insts(3)
    lds2 = v2[v2["unit"] == Unit.LDS]["passes"]
    lds3 = v3[v3["unit"] == Unit.LDS]["passes"]
    assert lds2.max() >= 8          # 2-, 4- and 8-way conflicts as the stride grows
    assert {2, 4} <= set(lds2.tolist())
    assert lds3.max() == 1


def test_transpose_lds_reads_conflict_and_writes_do_not():
    workload = WORKLOADS["transpose"](seed=0, size=128)
    insts = all_insts(workload.made_launches())
    lds = insts[insts["unit"] == Unit.LDS]
    assert (lds[lds["write"] == 1]["passes"] == 1).all()
    assert (lds[lds["write"] == 0]["passes"] > 1).all()


def test_transpose_default_is_1024_square():
    workload = WORKLOADS["transpose"]()
    assert workload.size == 1024


def test_sobel_border_work_items_diverge():
    workload = WORKLOADS["sobel"](seed=0, **SMALL["sobel"])
    insts = all_insts(workload.made_launches())
    vector = insts[insts["unit"] == Unit.LDS]
    assert (vector["active"] < 64).any()


def test_pagerank_launches_iterate_with_tiny_work_groups():
    workload = WORKLOADS["pagerank"](seed=1, **SMALL["pagerank"])
    launches = workload.made_launches()
    assert len(launches) == 2
    assert all(len(g.wavefronts) == 1 for g in launches[0].work_groups)
    assert len(launches[0].work_groups) == 300
    insts = all_insts(launches)
    gathers = insts[(insts["unit"] == Unit.VMEM) & (insts["write"] == 0)]
    assert np.median(gathers["active"]) < 32   # most lanes idle on short rows


def test_power_law_graph_is_seeded_and_heavy_tailed():
    a = power_law_graph(2000, 20000, seed=7)
    b = power_law_graph(2000, 20000, seed=7)
    c = power_law_graph(2000, 20000, seed=8)
    assert np.array_equal(a.cols, b.cols) and not np.array_equal(a.cols, c.cols)
    assert a.edges == 20000 and a.row_offsets[-1] == 20000
    in_degree = np.diff(a.row_offsets)
    assert in_degree.max() > 10 * in_degree.mean()
    pairs = set(zip(np.repeat(np.arange(2000), in_degree).tolist(), a.cols.tolist()))
    assert len(pairs) == 20000 and all(r != c for r, c in pairs)
    with pytest.raises(ValueError, match="cannot draw"):
        power_law_graph(3, 100)


def test_the_summary_says_why_dram_sees_fewer_requests_than_l2_misses(capsys):
    from simulator.__main__ import main

    assert main(["run", "transpose", "--size", "256", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "L2 hits/misses 0/8,192   DRAM requests 4,096" in out
    assert "line fetches for its read misses plus" in out and "without a fetch" in out
