"""The analyses on hand-made traces whose answers are known by construction, and on
Hypothesis-made ones, where every attribution must sum to its window to the picosecond."""
import pytest
from analysis_traces import PS, write_trace
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from simulator.analysis.budget import time_budget
from simulator.analysis.cpi import cpi_stack
from simulator.analysis.cu_idle import cu_idle
from simulator.analysis.hints import kernel_hints
from simulator.analysis.scope import Scope, Unavailable
from simulator.analysis.sol import classify, speed_of_light
from simulator.analysis.stalls import stall_breakdown
from simulator.analysis.trace import Trace

# Two CUs. CU0 runs group a [11, 50) with one wavefront; CU1 runs b [12, 30) and c [41, 90).
WAVEFRONT = {"start": 11, "end": 50,
             "insts": [("VALU", 12, 16), ("LDS", 14, 30), ("VMEM", 30, 45), ("SALU", 44, 48)],
             "requests": [(32, 40)]}
LAUNCH = {"start": 0, "end": 100, "groups": [
    {"cu": 0, "dispatch": 10, "start": 11, "end": 50, "wavefronts": [WAVEFRONT]},
    {"cu": 1, "dispatch": 11, "start": 12, "end": 30},
    {"cu": 1, "dispatch": 40, "start": 41, "end": 90}]}


@pytest.fixture(scope="module")
def scope(tmp_path_factory):
    path = write_trace(tmp_path_factory.mktemp("analysis") / "known.sqlite", [LAUNCH])
    trace = Trace(path)
    yield Scope(trace, trace.kernels()[0])
    trace.close()


def test_time_budget_of_the_known_trace(scope):
    b = time_budget(scope)
    # launch until the first dispatch at 10; both CUs busy from 12; none after 90
    assert [b[f"{p}_ps"] for p in ("launch", "ramp", "steady", "tail")] == [
        10 * PS, 2 * PS, 78 * PS, 10 * PS]
    assert b["tail_idle_ps"] == 10 * PS
    assert b["max_work_groups_per_cu"] == 1 and b["waves_per_cu"] == 1.5
    assert b["flag"] == "tail effect"
    # with the whole peak as the bar, the tail starts when CU0 ends at 50; CU1 works 40 of its 50
    b = time_budget(scope, tail_frac=1.0)
    assert (b["steady_ps"], b["tail_ps"], b["tail_idle_ps"]) == (38 * PS, 50 * PS, 30 * PS)


def test_cu_idle_classes_of_the_known_trace(scope):
    idle = cu_idle(scope)
    per_cu = [{k: v // PS for k, v in row.items() if k != "cu"} for row in idle["per_cu"]]
    assert per_cu == [
        {"busy_ps": 39, "pre_launch_ps": 10, "dispatch_starved_ps": 1, "tail_ps": 0, "drain_ps": 50},
        {"busy_ps": 67, "pre_launch_ps": 10, "dispatch_starved_ps": 12, "tail_ps": 1, "drain_ps": 10}]
    # Work-groups remain from the first dispatch (10) to the end of the last one's cycle
    # (41); a CU holds one at most, so two CUs are full with two: resident 0 on [10, 11),
    # 1 on [11, 12), 2 on [12, 30) (full: the CUs set the pace), 1 on [30, 41).
    assert idle["dispatch_bound_ps"] == 13 * PS
    # the one wavefront [11, 50) is resident 1 + 11 of those cycles, over 2 CUs x 13
    assert idle["wavefronts_per_cu_when_bound"] == round(12 / 26, 3)


def test_while_every_cu_is_full_the_dispatcher_is_not_the_limit(tmp_path):
    # Two CUs, one group each at a time; a third group waits for CU0 to free at 30.
    launch = {"start": 0, "end": 60, "groups": [
        {"cu": 0, "dispatch": 10, "start": 11, "end": 30},
        {"cu": 1, "dispatch": 11, "start": 12, "end": 50},
        {"cu": 0, "dispatch": 30, "start": 31, "end": 45}]}
    with Trace(write_trace(tmp_path / "full.sqlite", [launch])) as trace:
        idle = cu_idle(Scope(trace, trace.kernels()[0]))
    # [10, 12) filling, [12, 30) both full, [30, 31) CU0 free until the group arrives
    assert idle["dispatch_bound_ps"] == 3 * PS


def test_cpi_stack_of_the_known_trace(scope):
    cpi = cpi_stack(scope)
    assert {k: v // PS for k, v in cpi["per_cu"][0].items() if k != "cu"} == {
        "VALU": 4, "SALU": 4, "Branch": 0, "LDS": 14, "VMEM_transaction": 8, "VMEM": 6,
        "Barrier": 0, "Stalled": 3, "Idle": 61}
    assert cpi["per_cu"][1]["Idle"] == 100 * PS  # work-groups without wavefronts
    assert cpi["instructions"] == 4


def test_stall_breakdown_of_the_known_trace(scope):
    stalls = stall_breakdown(scope)
    assert {k: v // PS for k, v in stalls["charged_ps"].items()} == {
        "VALU": 4, "SALU": 4, "Branch": 0, "LDS": 14, "memory_wait": 14, "barrier": 0,
        "not_issued": 3}
    assert stalls["wavefront_time_ps"] == 39 * PS


def test_a_window_cuts_every_attribution_to_itself(scope):
    cut = Scope(scope.trace, scope.kernel, (20 * PS, 45 * PS))
    b = time_budget(cut)
    assert sum(b[f"{p}_ps"] for p in ("launch", "ramp", "steady", "tail")) == 25 * PS
    assert sum(cpi_stack(cut)["charged_ps"].values()) == 2 * 25 * PS
    stalls = stall_breakdown(cut)
    assert sum(stalls["charged_ps"].values()) == stalls["wavefront_time_ps"] == 25 * PS


def test_speed_of_light_names_the_bound_memory_level(tmp_path):
    # two DRAM channels of 32 B/cycle take one 64 B line a cycle between them: 80 lines
    # in the 100 cycles after the dispatch at 0 are 80 % of the peak
    served = [("DRAM", i % 2, i, i + 5) for i in range(80)]
    launch = {"start": 0, "end": 100, "groups": [
        {"cu": 0, "dispatch": 0, "start": 1, "end": 100,
         "wavefronts": [{"start": 1, "end": 100, "served": served, "requests": [(1, 3)],
                         "insts": [("VALU", 1, 5)]}]}]}
    path = write_trace(tmp_path / "dram.sqlite", [launch], overrides=["l2.banks=2"])
    with Trace(path) as trace:
        sol = speed_of_light(Scope(trace, trace.kernels()[0]))
    assert sol["units"]["DRAM"]["sol"] == 0.8
    assert sol["units"]["DRAM"]["busiest_sol"] == 0.8
    assert sol["classification"]["kind"] == "memory-bound"
    assert sol["classification"]["unit"] == "DRAM"
    assert sol["units"]["VALU"]["sol"] == 4 / (2 * 4 * 100)  # 4 busy cycles of 8 SIMDs' 100


@pytest.mark.parametrize(("c", "m", "kind"), [
    (0.3, 0.5, "latency-bound"), (0.3, 0.7, "memory-heavier"), (0.7, 0.3, "compute-heavier"),
    (0.65, 0.7, "balanced"), (0.85, 0.4, "compute-bound"), (0.5, 0.8, "memory-bound")])
def test_classification_follows_nsight_computes_rule(c, m, kind):
    units = {"VALU": {"sol": c}, "DRAM": {"sol": m}}
    assert classify(units, c, m, 0.8, 0.6, 0.1, None)["kind"] == kind


def test_hints_fire_on_divergence_and_on_bank_conflicts(tmp_path):
    launch = {"start": 0, "end": 10, "groups": [{"cu": 0, "dispatch": 0, "start": 1, "end": 9}]}
    path = write_trace(tmp_path / "hints.sqlite", [launch, {**launch, "start": 10, "end": 20,
                       "groups": [{"cu": 0, "dispatch": 10, "start": 11, "end": 19}]}],
                       records={0: {"vector_instructions": 10, "active_lanes": 320,
                                    "lds_instructions": 4, "lds_conflicted": 1, "lds_max_degree": 2},
                                1: {"vector_instructions": 10, "active_lanes": 640}})
    with Trace(path) as trace:
        first, second = (kernel_hints(Scope(trace, k)) for k in trace.kernels())
    assert first["simd_efficiency"] == 0.5 and first["lds_conflict_rate"] == 0.25
    # no branch in the kernel (no branch nodes): it cannot diverge
    assert first["divergent_wavefronts"] == 0.0
    assert [h["hint"] for h in first["hints"]] == ["bank-conflicts"]
    assert second["hints"] == []


def test_a_trace_without_instructions_says_which_level_it_needs(tmp_path):
    launch = {"start": 0, "end": 10, "groups": [{"cu": 0, "dispatch": 0, "start": 1, "end": 9}]}
    with Trace(write_trace(tmp_path / "wg.sqlite", [launch])) as trace:
        scope = Scope(trace, trace.kernels()[0])
        assert time_budget(scope)["launch_ps"] == 0
        with pytest.raises(Unavailable, match="--trace-level inst"):
            cpi_stack(scope)


# -- Hypothesis: any layout sums to its window ---------------------------------------------

@st.composite
def launches(draw):
    cus = draw(st.integers(1, 3))
    end = draw(st.integers(20, 200))
    groups = []
    for dispatch in sorted(draw(st.lists(st.integers(1, end - 2), min_size=1, max_size=6))):
        start = draw(st.integers(dispatch, end - 1))
        stop = draw(st.integers(start + 1, end))
        wavefronts = []
        for _ in range(draw(st.integers(1, 2))):
            insts = []
            for _ in range(draw(st.integers(1, 5))):
                a = draw(st.integers(start, stop - 1))
                insts.append((draw(st.sampled_from(["VALU", "SALU", "Branch", "LDS", "VMEM",
                                                    "Barrier"])), a, draw(st.integers(a, stop))))
            wavefronts.append({"start": start, "end": stop, "insts": insts,
                               "requests": [(start, draw(st.integers(start, stop)))]})
        groups.append({"cu": draw(st.integers(0, cus - 1)), "dispatch": dispatch, "start": start,
                       "end": stop, "wavefronts": wavefronts})
    window = sorted(draw(st.lists(st.integers(0, end), min_size=2, max_size=2, unique=True)))
    return cus, {"start": 0, "end": end, "groups": groups}, window


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(launches(), st.sampled_from([0.25, 0.5, 1.0]))
def test_every_attribution_sums_to_its_window(tmp_path, case, tail_frac):
    cus, launch, window = case
    path = write_trace(tmp_path / "h.sqlite", [launch], cus=cus)
    with Trace(path) as trace:
        kernel = trace.kernels()[0]
        for lo_hi in (None, (window[0] * PS, window[1] * PS)):
            scope = Scope(trace, kernel, lo_hi)
            b = time_budget(scope, tail_frac)
            assert sum(b[f"{p}_ps"] for p in ("launch", "ramp", "steady", "tail")) == scope.width
            idle = cu_idle(scope)
            for row in idle["per_cu"]:
                assert sum(v for k, v in row.items() if k != "cu") == scope.width
            cpi = cpi_stack(scope)
            assert sum(cpi["charged_ps"].values()) == cus * scope.width
            for row in cpi["per_cu"]:
                assert sum(v for k, v in row.items() if k != "cu") == scope.width
            stalls = stall_breakdown(scope)
            assert sum(stalls["charged_ps"].values()) == stalls["wavefront_time_ps"]
    path.unlink()


def test_the_component_names_are_the_timing_models():
    from simulator.analysis.components import Components
    from simulator.gpu.config import default_config
    from simulator.gpu.trace_vocabulary import ALL_LEVELS, TraceKeys

    class Names:
        def __init__(self):
            self.names = {}

        def location(self, name):
            return self.names.setdefault(name, len(self.names))

        def kind(self, category, action):
            return 0

        def tag_name(self, name):
            return 0

    names = Names()
    keys = TraceKeys(names, ALL_LEVELS, default_config())
    found = Components((key, name) for name, key in names.names.items())
    assert sorted(found.unit("")) == sorted(keys.loc_cu)
    assert sorted(found.unit("SIMD")) == sorted(k for cu in keys.loc_simd for k in cu)
    for unit, name in (("SALU", "Scalar"), ("LDS", "LDS"), ("VMEM", "VMem"), ("Barrier", "WFPool")):
        assert sorted(found.unit(name)) == sorted(keys.loc_unit[unit])
    assert sorted(found.memory["L1V"]) == sorted(keys.loc_l1v)
    assert sorted(found.memory["L2"]) == sorted(keys.loc_l2)
    assert sorted(found.memory["DRAM"]) == sorted(keys.loc_dram)
