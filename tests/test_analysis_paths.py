"""S9, the critical path, on hand-made traces whose path is known by construction, and
on Hypothesis-made ones, where its charges must sum to the launch to the picosecond."""
import json

import pytest
from analysis_traces import PS, write_trace
from hypothesis import HealthCheck, given, settings
from test_analysis import launches

from simulator.__main__ import main
from simulator.analysis.critical_path import critical_path
from simulator.analysis.scope import Scope, Unavailable
from simulator.analysis.trace import Trace

# One CU. The group is dispatched at 10 and its wavefront runs VALU [12, 16), LDS
# [18, 30), SALU [30, 34) and VALU [40, 56); the CP sees the group end at 60, the
# kernel ends at 70.
COMPUTE = {"start": 0, "end": 70, "groups": [
    {"cu": 0, "dispatch": 10, "start": 11, "end": 60, "wavefronts": [
        {"start": 11, "end": 58,
         "insts": [("VALU", 12, 16), ("LDS", 18, 30), ("SALU", 30, 34), ("VALU", 40, 56)]}]}]}

# A load that misses down to DRAM: CU -> L1V -> L2 -> DRAM, each hop's req_out sent
# after its req_in arrived, and the answer returning two cycles per hop.
HOPS = [("L1V", 0, 21, 22, 78, 80), ("L2", 0, 24, 26, 74, 76), ("DRAM", 0, 27, 30, 70, 72)]
MEMORY = {"start": 0, "end": 90, "groups": [
    {"cu": 0, "dispatch": 10, "start": 11, "end": 86, "wavefronts": [
        {"start": 11, "end": 85, "insts": [("VMEM", 20, 80, HOPS), ("VALU", 80, 84)]}]}]}


def path_of(tmp_path, launch, **options):
    with Trace(write_trace(tmp_path / "path.sqlite", [launch], cus=1, **options)) as trace:
        return critical_path(Scope(trace, trace.kernels()[0]))


def test_the_critical_path_of_a_chain_of_instructions(tmp_path):
    path = path_of(tmp_path, COMPUTE)
    assert {k: v // PS for k, v in path["by_class"].items()} == {
        # VALU 4 + SALU 4 + VALU 16; LDS 12
        "compute": 24, "LDS": 12, "memory-queue": 0, "memory-service": 0,
        # [11, 12) before the first VALU, [16, 18) before the LDS, [34, 40) before the
        # last VALU (the SALU ended last), [56, 58) and [58, 60): wavefront, group ending
        "issue-wait": 1 + 2 + 6 + 2 + 2,
        # launch [0, 10), the dispatch reaching the group [10, 11), the CP's [60, 70)
        "launch": 10 + 1 + 10}
    assert path["total_ps"] == sum(path["by_class"].values()) == 70 * PS
    assert [(s["action"], s["start_ps"] // PS) for s in path["chain"]
            if s["category"] == "inst"] == [("VALU", 12), ("LDS", 18), ("SALU", 30), ("VALU", 40)]
    assert path["critical_task"]["action"] == "VALU" and path["critical_task"]["start_ps"] == 40 * PS
    top = path["by_component"][0]
    assert (top["loc"], top["category"], top["ps"]) == ("GPU.CommandProcessor", "kernel", 20 * PS)


def test_the_critical_path_through_the_memory_hops(tmp_path):
    path = path_of(tmp_path, MEMORY)
    by_class = {k: v // PS for k, v in path["by_class"].items()}
    # DRAM serves [30, 70); each of the five returns above it takes 2
    assert by_class["memory-service"] == 40 + 5 * 2
    # waits to be sent or served: [20, 21) at the CU, [21, 22) and [22, 24) at the L1V,
    # [24, 26) and [26, 27) at the L2, [27, 30) at the DRAM
    assert by_class["memory-queue"] == 1 + 1 + 2 + 2 + 1 + 3
    assert by_class["compute"] == 4
    assert sum(path["by_class"].values()) == 90 * PS
    dram = [c for c in path["by_component"] if c["loc"] == "GPU.DRAM[0]"]
    assert dram == [{"loc": "GPU.DRAM[0]", "category": "req_in/ReadReq", "ps": 40 * PS}]
    assert path["critical_task"]["loc"] == "GPU.DRAM[0]"


def test_a_barrier_continues_at_the_last_wavefront_to_arrive(tmp_path):
    # wavefront a reaches the barrier at 14 and waits; b computes until 40 and arrives;
    # both leave at 41
    a = {"start": 11, "end": 50, "insts": [("VALU", 12, 14), ("Barrier", 14, 41), ("VALU", 42, 46)]}
    b = {"start": 11, "end": 45, "insts": [("SALU", 12, 40), ("Barrier", 40, 41), ("SALU", 41, 44)]}
    launch = {"start": 0, "end": 50, "groups": [
        {"cu": 0, "dispatch": 10, "start": 11, "end": 50, "wavefronts": [a, b]}]}
    path = path_of(tmp_path, launch)
    steps = [(s["action"], s["start_ps"] // PS) for s in path["chain"] if s["category"] == "inst"]
    assert steps == [("SALU", 12), ("Barrier", 14), ("Barrier", 40), ("VALU", 42)]
    assert path["by_class"]["compute"] == (28 + 4) * PS


def test_the_critical_path_needs_instructions(tmp_path):
    launch = {"start": 0, "end": 10, "groups": [{"cu": 0, "dispatch": 0, "start": 1, "end": 9}]}
    with Trace(write_trace(tmp_path / "wg.sqlite", [launch])) as trace, \
            pytest.raises(Unavailable, match="--trace-level inst"):
        critical_path(Scope(trace, trace.kernels()[0]))


def test_the_critical_path_exports_as_hta_overlays_it(tmp_path):
    trace = write_trace(tmp_path / "path.sqlite", [COMPUTE], cus=1)
    out = tmp_path / "path.json"
    assert main(["analyze", str(trace), "--critical-path-out", str(out)]) == 0
    events = json.loads(out.read_text())["traceEvents"]
    critical = {e["args"]["id"] for e in events if e.get("args", {}).get("critical") == 1}
    with Trace(trace) as t:
        path = critical_path(Scope(t, t.kernels()[0]))
    assert critical == {str(task) for task in path["path_tasks"]}
    flows = [e for e in events if e.get("cat") == "critical_path"]
    assert len(flows) == 2 * len(path["edges"])
    # the SALU ended last before the last VALU issued, 6 cycles later
    assert any(e["args"] == {"task": e["args"]["task"], "weight": 6 * PS, "type": "program-order"}
               for e in flows)
    assert main(["analyze", str(trace), "--critical-path-out", str(out)]) != 0  # not replaced


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(launches())
def test_the_critical_path_sums_to_the_launch(tmp_path, case):
    cus, launch, _ = case
    path = write_trace(tmp_path / "h.sqlite", [launch], cus=cus)
    with Trace(path) as trace:
        kernel = trace.kernels()[0]
        cp = critical_path(Scope(trace, kernel))
        assert sum(cp["by_class"].values()) == kernel.duration_ps
        assert sum(c["ps"] for c in cp["by_component"]) == kernel.duration_ps
        starts = [s["start_ps"] for s in cp["chain"]]
        assert starts == sorted(starts)
    path.unlink()
