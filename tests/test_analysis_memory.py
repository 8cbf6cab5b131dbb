"""S4 memory latency by hop, S5 blocking, S6 imbalance, S8 roofline and S11 latency distributions,
on hand-made traces whose answers are known by construction; S4's segments must sum to
each request's duration to the picosecond, for any hop layout (Hypothesis)."""
import numpy as np
from analysis_traces import PS, write_trace
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_analysis import LAUNCH
from test_analysis_paths import MEMORY

from simulator.analysis.blocking import blocking
from simulator.analysis.distribution import distribution, selection_distribution
from simulator.analysis.findings import roofline_findings
from simulator.analysis.imbalance import gini, imbalance
from simulator.analysis.memory_latency import (
    hops,
    memory_latency,
    outcome_names,
    request_segments,
    segment_names,
)
from simulator.analysis.roofline import roofline
from simulator.analysis.scope import Scope
from simulator.analysis.thresholds import Thresholds
from simulator.analysis.trace import TASK_COLUMNS, Trace


def scope_of(tmp_path, launch, cus=1, overrides=()):
    trace = Trace(write_trace(tmp_path / "m.sqlite", [launch], cus=cus, overrides=overrides))
    return Scope(trace, trace.kernels()[0])


def test_a_load_from_dram_hop_by_hop(tmp_path):
    scope = scope_of(tmp_path, MEMORY)
    _, segments, outcomes = request_segments(scope)
    assert hops(scope) == ("L1V", "L2", "DRAM")
    named, classes = segment_names(hops(scope)), outcome_names(hops(scope))
    # CU [21, 80) -> L1V [22, 78) -> L1V out [24, 76) -> L2 [26, 74) -> L2 out [27, 72)
    # -> DRAM [30, 70)
    assert dict(zip(named, (segments[0] // PS).tolist())) == {
        "queue@L1V": 1, "service@L1V": 56 - 52, "return@L1V": 2,
        "queue@L2": 2, "service@L2": 48 - 45, "return@L2": 2,
        "queue@DRAM": 3, "service@DRAM": 40, "return@DRAM": 2}
    assert [classes[o] for o in outcomes] == ["DRAM"]  # no cache tags: missed everywhere
    report = memory_latency(scope)
    assert report["top_hop"] == "DRAM" and not report["queue_dominated"]
    assert report["request_time_ps"] == 59 * PS
    scope.trace.close()


def test_blocking_ranks_by_the_time_requests_waited(tmp_path):
    # the DRAM request waits [27, 30) for a buffer of one: full all that time
    scope = scope_of(tmp_path, MEMORY, overrides=["dram.buffer=1"])
    top = blocking(scope)["ranking"][0]
    assert (top["loc"], top["blocked_ps"], top["full_ps"], top["capacity"]) == (
        "GPU.DRAM[0]", 3 * PS, 3 * PS, 1)
    assert top["busy"] == round(40 / 90, 4)
    scope.trace.close()


def test_imbalance_names_the_hot_cu(tmp_path):
    scope = scope_of(tmp_path, LAUNCH, cus=2)
    cu = imbalance(scope)["CU"]
    # CU0 holds a group 39 cycles, CU1 18 + 49 = 67: the mean is 53
    assert cu["hot"] == "GPU.SA[0].CU[1]" and cu["imbalance"] == round(67 / 53, 3)
    assert cu["excess_ps"] == 14 * PS
    assert gini([1, 1, 1]) == 0 and gini([0, 0, 4]) == 2 / 3
    scope.trace.close()


def test_distribution_percentiles_and_outliers():
    durations = np.r_[np.arange(1, 101), 10_000]
    rows = np.zeros((len(durations), len(TASK_COLUMNS)), dtype=np.int64)
    rows[:, 0] = np.arange(len(durations))
    rows[:, 5] = durations
    d = distribution(rows, {0: "X"}, k=5)
    assert (d["count"], d["p50_ps"], d["p90_ps"], d["p99_ps"], d["max_ps"]) == (101, 51, 91, 100, 10_000)
    assert d["fence_ps"] == 76 + 3 * (76 - 26)
    assert d["outliers"] == [{"task": 100, "loc": "X", "start_ps": 0, "end_ps": 10_000, "ps": 10_000}]
    assert sum(b["count"] for b in d["bins"]) == 101  # log bins: 1 to 10^4 spans 4 decades
    assert all(b["lo_ps"] < b["hi_ps"] for b in d["bins"])


def test_the_component_views_selection(tmp_path):
    scope = scope_of(tmp_path, MEMORY)
    d = selection_distribution(scope.trace, "GPU.DRAM[0]", (0, 100 * PS), ("req_in", "ReadReq"))
    assert (d["count"], d["max_ps"]) == (1, 40 * PS)
    assert selection_distribution(scope.trace, "GPU.DRAM[0]", (71 * PS, 100 * PS))["count"] == 0
    scope.trace.close()


@st.composite
def hop_chains(draw):
    """A load's hops with any times (each task's end at or after its start)."""
    hops = []
    for level in ("L1V", "L2", "DRAM")[:draw(st.integers(0, 3))]:
        a, b = sorted(draw(st.lists(st.integers(21, 80), min_size=2, max_size=2)))
        c, d = sorted(draw(st.lists(st.integers(21, 80), min_size=2, max_size=2)))
        hops.append((level, 0, a, c, d, b))
    return hops


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(hop_chains())
def test_segments_sum_to_every_requests_duration(tmp_path, hops):
    launch = {"start": 0, "end": 90, "groups": [
        {"cu": 0, "dispatch": 10, "start": 11, "end": 86, "wavefronts": [
            {"start": 11, "end": 85, "insts": [("VMEM", 20, 85, hops)]}]}]}
    if not hops:
        return
    scope = scope_of(tmp_path, launch)
    ids, segments, _ = request_segments(scope)
    rows = scope.tasks[scope.positions(ids)]
    assert (segments.sum(axis=1) == rows[:, 5] - rows[:, 4]).all()
    scope.trace.close()
    (tmp_path / "m.sqlite").unlink()


def test_the_roofline_of_a_known_launch(tmp_path):
    # 10 DRAM requests (640 B) in 100 cycles on 2 channels of 32 B/cycle, and 640 VALU
    # lane-operations: AI 1 lane-op/B under a DRAM roof of 64 GB/s, so at most 64 G
    # lane-ops/s against the 6.4 G done; the compute peak is 2 CUs x 64 lanes per ns
    served = [("DRAM", i % 2, i, i + 5) for i in range(10)]
    launch = {"start": 0, "end": 100, "groups": [
        {"cu": 0, "dispatch": 0, "start": 1, "end": 100,
         "wavefronts": [{"start": 1, "end": 100, "served": served, "requests": [(1, 3)],
                         "insts": [("VALU", 1, 5)]}]}]}
    path = write_trace(tmp_path / "roof.sqlite", [launch], overrides=["l2.banks=2"],
                       records={0: {"valu_active_lanes": 640, "lds_active_lanes": 0}})
    with Trace(path) as trace:
        scope = Scope(trace, trace.kernels()[0])
        roof = roofline(scope)
        found = roofline_findings(0, roof, Thresholds(), (0, 100 * PS))
    assert roof["points"] == [{"level": "DRAM", "bytes": 640, "ai": 1.0, "bandwidth": 64 * 10**9,
                               "attainable": 64 * 10**9}]
    assert (roof["peak_compute"], roof["limiter"], roof["roof_share"]) == (128 * 10**9, "DRAM", 0.1)
    assert roof["perf"] == 6.4e9
    rule, = found
    # A bound, not a cause: it names the roof it is far below and claims no time.
    assert rule["rule"] == "roofline" and rule["explains_ps"] == 0
    assert "10.0% of its roof" in rule["message"] and "DRAM" in rule["message"]


def _measure(intervals, lo, hi, at_least):
    """ps of [lo, hi) covered by at least ``at_least`` of the intervals, counted
    segment by segment between every clipped endpoint."""
    cut = [(max(a, lo), min(b, hi)) for a, b in intervals if min(b, hi) > max(a, lo)]
    points = sorted({t for pair in cut for t in pair})
    return sum(b - a for a, b in zip(points, points[1:])
               if sum(s <= a < e for s, e in cut) >= at_least)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(hop_chains().filter(len), min_size=1, max_size=4),
       st.lists(st.integers(0, 90), min_size=2, max_size=2, unique=True).map(sorted))
def test_blocking_matches_a_count_location_by_location(tmp_path, chains, window):
    insts = [("VMEM", 20, 85, hops) for hops in chains]
    launch = {"start": 0, "end": 90, "groups": [
        {"cu": 0, "dispatch": 10, "start": 11, "end": 86, "wavefronts": [
            {"start": 11, "end": 85, "insts": insts}]}]}
    scope = scope_of(tmp_path, launch, overrides=["l1v.buffer=1", "l2.buffer=1", "dram.buffer=2"])
    scope = Scope(scope.trace, scope.kernel, (window[0] * PS, window[1] * PS))
    rows = {r["loc"]: r for r in blocking(scope)["ranking"]}
    tasks, names = scope.tasks.tolist(), scope.trace.components.name
    by_id = {t[0]: t for t in tasks}
    served = {k for (c, _), k in scope.trace.kinds.items() if c == "req_in"}
    waits, busy = {}, {}
    for _, parent, kind, loc, start, end in tasks:
        busy.setdefault(names[loc], []).append((start, end))
        if kind in served and parent in by_id:
            waits.setdefault(names[loc], []).append((by_id[parent][4], start))
    assert set(rows) == set(waits)
    for loc, row in rows.items():
        lo, hi = scope.lo, scope.hi
        assert row["blocked_ps"] == sum(max(0, min(b, hi) - max(a, lo)) for a, b in waits[loc])
        assert row["full_ps"] == _measure(waits[loc], lo, hi, row["capacity"])
        assert row["busy"] == round(_measure(busy[loc], lo, hi, 1) / scope.width, 4)
    scope.trace.close()
    (tmp_path / "m.sqlite").unlink()
