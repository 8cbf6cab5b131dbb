"""Small arithmetic, pinned down: tests that fail when a rounding, a boundary or an
operator is wrong (written against the survivors of ``scripts/mutate.py``).

Each test names the slip it catches. Mutants left alive on purpose are equivalent
changes, explained in a comment at the line concerned.
"""
from decimal import Decimal
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_app_traces import write_synthetic_trace
from test_klein import access, lanes

from dashapp import queries
from dashapp.catalog import trace_meta
from dashapp.daisen import metrics
from dashapp.klein import analysis as klein
from simulator.kernels.wavefronts import lds_conflict_degree
from simulator.tracing import NO_TASK, Tracer, TraceWriter, pyramid
from simulator.tracing.importers.loader import TraceFormatError, scaled_to_ps, seconds_to_ps


# -- imported times ----------------------------------------------------------------------
@pytest.mark.parametrize("value, ps", [
    ("0.0000000000016", 2), ("-0.0000000000016", -2),   # text: 1.6 ps rounds up, not down
    ("1.4e-12", 1), ("2.5e-12", 2), ("3.5e-12", 4),      # halves to even, as round() does
    (1.6e-12, 2), (-1.6e-12, -2), (2.001e-9, 2001),      # floats (akita's REAL columns)
    (Decimal("7.0000000000009"), 7_000_000_000_001),     # Chrome's exact decimals
    (3, 3_000_000_000_000), (10**6, 10**18),             # integers, past the float path
    # A day into a run: past 2**53 ps a float product is off by a few ps, so the
    # exact value of the double is scaled instead.
    (86400.23796462709, 86400237964627086),
])
def test_seconds_become_the_nearest_picosecond(value, ps):
    assert seconds_to_ps(value, "f:1", "Start") == ps


@pytest.mark.parametrize("value, unit, ps", [
    (Decimal("1.0000017"), 10**6, 1_000_002), ("0.0000004", 10**6, 0), ("0.0000005", 10**6, 0),
    ("0.0000015", 10**6, 2), (1000.7, 1, 1001), (-1000.7, 1, -1001), (2**60 + 0.0, 1, 2**60),
])
def test_scaled_times_become_the_nearest_picosecond(value, unit, ps):
    assert scaled_to_ps(value, unit, "f:1", "ts") == ps


@pytest.mark.parametrize("value", [True, False, None, "1\u0661", "nan", float("inf"), [1], b"1"])
def test_what_is_not_a_number_is_refused(value):
    with pytest.raises(TraceFormatError, match="f:1: ts is not a number"):
        scaled_to_ps(value, 10**6, "f:1", "ts")


@pytest.mark.parametrize("value", ["1e999999999", Decimal("-1e999999999"), 10**400, 1e300,
                                   "1e24", -10**24])  # 10**30 ps: past any clock
def test_times_past_any_clock_are_refused_at_once(value):
    with pytest.raises(TraceFormatError, match="f:1: ts is out of range"):
        scaled_to_ps(value, 10**6, "f:1", "ts")


@pytest.mark.parametrize("value, ps", [
    # Past 64-bit picoseconds but kept exactly: the loader stores times relative to the
    # trace's origin (an epoch in microseconds, as Chrome JSON from a profiler has).
    ("9223372036854.775808", 2**63), ("-9223372036854.775809", -(2**63) - 1),
    (1.7e15, 17 * 10**20), ("1751410836123456.789", 1_751_410_836_123_456_789_000),
    ("9" * 23 + "e0", (10**23 - 1) * 10**6),  # the largest exponent kept
])
def test_epoch_scale_times_are_kept_exactly(value, ps):
    assert scaled_to_ps(value, 10**6, "f:1", "ts") == ps


def test_the_largest_times_are_kept():
    assert scaled_to_ps("9223372036854.775807", 10**6, "f:1", "ts") == 2**63 - 1
    assert scaled_to_ps("-9223372036854.775808", 10**6, "f:1", "ts") == -(2**63)
    assert scaled_to_ps(2**63 - 1, 1, "f:1", "ts") == 2**63 - 1


# -- the Overview's bins -----------------------------------------------------------------
@pytest.mark.parametrize("t0, t1, width, expected", [
    (0, 15, 10, (0, 2)),     # the last, partial bin is kept: the end rounds up
    (5, 25, 10, (0, 3)),
    (10, 20, 10, (1, 1)),    # an end on an edge adds no bin
    (0, 10, 10, (0, 1)),
    (3, 4, 10, (0, 1)),      # never fewer than one bin
    (20, 21, 10, (2, 1)),
])
def test_bin_range_covers_the_window_and_no_more(t0, t1, width, expected):
    assert metrics.bin_range(t0, t1, width) == expected


@pytest.mark.parametrize("base, t0, t1, points, level", [
    (1000, 0, 100_000, 100, 0),        # a point per base bin: level 0, not 1
    (1000, 0, 50_000, 100, 0),         # finer than the base: still level 0
    (1000, 0, 200_000, 100, 1),
    (1000, 0, 400_000, 100, 2),
    (1000, 0, 282_000, 100, 1),        # log2(2.82) = 1.496: the nearest level in log2
    (1000, 0, 283_000, 100, 2),        # log2(2.83) = 1.501
    (1000, 0, 283_000, 0, 8),          # no points asked for: one bin
    (1000, 10**6, 10**6 + 100_000, 100, 0),  # the window's length counts, not its end
])
def test_choose_level_is_nearest_in_log2(base, t0, t1, points, level):
    assert metrics.choose_level(base, t0, t1, points) == level


# -- the metric pyramid ------------------------------------------------------------------
@pytest.mark.parametrize("span, width", [
    (0, 1), (1 << 24, 1),            # up to MAX_GLOBAL_BINS picoseconds: 1 ps bins
    ((1 << 24) + 1, 2), (1 << 25, 4), (3 << 24, 4), (10**12, 1 << 16),
])
def test_base_width_is_a_power_of_two_within_the_bin_budget(span, width):
    got = pyramid.base_width(span)
    assert got == width
    assert got & (got - 1) == 0 and -(-span // got) <= pyramid.MAX_GLOBAL_BINS


@pytest.mark.parametrize("count, first, last, base, level", [
    (16, 1000, 1000 + 1024, 1, 10),   # 16 tasks per bin: 1024 ps bins; the span is last - first
    (4, 0, 4096, 4, 12),              # 4096 * 16 / 4 ps per bin, in units of base 4
    (1, 5, 5, 1, 4),                  # an instant location spans at least 1 ps
    (0, 0, 64, 1, 10),                # no tasks counts as one
    (10**6, 0, 10, 1, 0),             # never below level 0
])
def test_min_level_gives_about_sixteen_tasks_per_bin(count, first, last, base, level):
    assert pyramid.min_level(count, first, last, base) == level


# -- the Overview's series ---------------------------------------------------------------
def test_a_window_outside_the_run_is_one_picosecond_at_its_start():
    meta = SimpleNamespace(start_ps=1000, end_ps=5000)
    assert metrics.within_run(meta, 6000, 9000) == (1000, 1001)
    assert metrics.within_run(meta, 0, 2000) == (1000, 2000)
    assert metrics.within_run(meta, 1500, 9000) == (1500, 5000)


def test_an_idle_location_gets_empty_bins_at_the_chosen_level():
    meta = SimpleNamespace(start_ps=0, end_ps=10**9, base_ps=1000)
    idle = queries.Location(7, "idle", 0, None, None, None, None, None, None, None)
    series = metrics.location_series(None, meta, idle, 0, 10**9, 100)
    assert series.level == 13 and series.width_ps == 1000 << 13    # round(log2(10**4))
    assert (series.first_bin, series.nbins) == (0, -(-10**9 // (1000 << 13)))
    assert not series.present.any()


def test_the_pyramid_serves_its_own_finest_level(tmp_path):
    path = write_synthetic_trace(tmp_path / "t.sqlite")
    meta = trace_meta(path)
    loc = min((lo for lo in meta.locations if lo.task_count), key=lambda lo: lo.min_level)
    width = meta.base_ps << loc.min_level
    points = (meta.end_ps - meta.start_ps) // width  # points of exactly that level's width
    assert points >= 4
    t0 = meta.start_ps
    with queries.open_trace(path) as db:
        series = metrics.location_series(db, meta, loc, t0, t0 + points * width, points)
        finer = metrics.location_series(db, meta, loc, t0, t0 + points * width // 2, points)
    assert (series.level, series.source) == (loc.min_level, "pyramid")
    assert finer.source == "tasks" and finer.level == loc.min_level - 1


# -- LDS bank conflicts: the memory view's count and the timing model's ---------------------
def test_no_local_access_no_instruction():
    found = klein.conflicts(access([dict(seq=0, kind=klein.BARRIER),
                                    dict(seq=1, wi=0, lid=0, element=3, address=4096, bank=-1)]))
    assert (found.instructions, found.conflicted, found.worst) == (0, 0, 0)


def test_a_conflict_free_access_puts_no_bank_in_conflict():
    table = klein.bank_table(klein.conflicts(access(lanes(0, range(64)))))
    assert list(table.accesses) == [2] * 32 and list(table.degree) == [1] * 32
    assert not table.conflicted.any()


def test_each_access_gets_the_degree_of_its_own_lane_group():
    # Lanes 0-31 stride 2 (two-way conflicts); lanes 32-63 consecutive (none).
    found = klein.conflicts(access(lanes(0, list(range(0, 64, 2)) + list(range(32)))))
    assert list(found.bank_degree) == [2] * 32 + [1] * 32
    assert list(found.instruction_degree) == [2] * 32 + [1] * 32


@pytest.mark.parametrize("elem_bytes, group_lanes", [(4, 32), (8, 16), (16, 8), (64, 2),
                                                     (128, 1)])
def test_wide_elements_make_narrower_lane_groups(elem_bytes, group_lanes):
    # Consecutive elements: every group covers each bank at most once, whatever its width.
    rows = [dict(seq=0, wi=i, lid=i, element=i, address=i * elem_bytes) for i in range(64)]
    found = klein.conflicts(access(rows), elem_bytes=elem_bytes)
    assert found.group_lanes == group_lanes and found.worst == 1
    assert found.instructions == 64 // group_lanes
    waves, degree, cycles = lds_conflict_degree(np.zeros(64, np.int64), np.arange(64),
                                                np.arange(64) * elem_bytes, elem_bytes)
    assert (list(waves), list(degree), list(cycles)) == ([0], [1], [64 // group_lanes])


@settings(max_examples=200, deadline=None, derandomize=True)
@given(elem_bytes=st.sampled_from([4, 8, 12, 16, 32, 128]),
       elements=st.lists(st.one_of(st.none(), st.integers(0, 200)), min_size=64, max_size=64))
def test_the_memory_view_counts_conflicts_as_the_timing_model_charges_them(elem_bytes, elements):
    active = [(lane, e) for lane, e in enumerate(elements) if e is not None]
    rows = [dict(seq=0, wi=lane, lid=lane, element=e, address=e * elem_bytes) for lane, e in active]
    if not rows:
        return
    found = klein.conflicts(access(rows), elem_bytes=elem_bytes)
    lane = np.array([lane for lane, _ in active], dtype=np.int64)
    address = np.array([e * elem_bytes for _, e in active], dtype=np.int64)
    _, degree, cycles = lds_conflict_degree(np.zeros(len(lane), np.int64), lane, address,
                                            elem_bytes)
    groups = {}
    for row, lane_id in enumerate(lane.tolist()):
        groups[lane_id // found.group_lanes] = int(found.instruction_degree[row])
    assert int(degree[0]) == found.worst == max(groups.values())
    assert int(cycles[0]) == sum(groups.values())


def test_pyramid_sums_land_in_bins_counted_from_lo():
    # Bins [10, 20), [20, 30), [30, 40): lo = 1, not 0.
    assert list(pyramid.interval_integral(np.array([15]), np.array([35]), 10, 1, 3)) == [5, 10, 5]
    assert list(pyramid.event_sum(np.array([15, 25, 25]), np.array([1, 2, 3]), 10, 1, 3)) == [1, 5, 0]


def _request_from_time_zero(path):
    """A req_out at GPU.CU[0] from t = 0 and its req_in at GPU.L2[0] from 5 ns to 40 ns."""
    writer = TraceWriter(path, command="test")
    tracer = Tracer(writer, ps_per_tick=1000)
    cu, l2 = tracer.location("GPU.CU[0]"), tracer.location("GPU.L2[0]")
    out = tracer.trace_req_initiate(NO_TASK, tracer.kind("req_out", "ReadReq"), cu, 0)
    inn = tracer.trace_req_receive(out, tracer.kind("req_in", "ReadReq"), l2, 5)
    tracer.trace_req_complete(inn, 40)
    tracer.trace_req_finalize(out, 42)
    writer.finalize(completed=True, open_tasks=tracer.close(42))
    writer.close()
    return path


def test_deep_zoom_counts_the_wait_of_a_request_whose_parent_starts_at_zero(tmp_path):
    path = _request_from_time_zero(tmp_path / "t.sqlite")
    meta = trace_meta(path)
    with queries.open_trace(path) as db:
        series = metrics.task_series(db, meta, meta.by_name["GPU.L2[0]"], 0, 1000, 0, 42_000)
    assert series.sums["buffer_ps"].sum() == 5000  # waiting from 0 ns until 5 ns
    assert list(series.sums["buffer_ps"][:6]) == [1000] * 5 + [0]


def test_kind_density_from_raw_tasks_adds_up_to_the_concurrency(tmp_path):
    path = write_synthetic_trace(tmp_path / "t.sqlite")
    meta = trace_meta(path)
    loc = min((lo for lo in meta.locations if lo.task_count), key=lambda lo: lo.min_level)
    width = meta.base_ps << loc.min_level  # below the per-kind pyramid: from raw tasks
    points = (meta.end_ps - meta.start_ps) // width
    t0, t1 = meta.start_ps, meta.start_ps + points * width
    with queries.open_trace(path) as db:
        finest = queries.kind_levels(db, loc.id)[0]
        assert finest is None or loc.min_level < finest
        first, got_width, per_kind = metrics.kind_density(db, meta, loc, t0, t1, points)
        series = metrics.location_series(db, meta, loc, t0, t1, points)
    assert (first, got_width) == (series.first_bin, series.width_ps)
    assert list(sum(per_kind.values())) == list(series.sums["task_ps"])


def test_each_metric_is_its_sum_over_the_bin_width():
    width = 2000  # ps
    sums = {"req_in_started": np.array([4, 0]), "req_in_ended": np.array([2, 0]),
            "req_in_latency_ps": np.array([3000, 0]), "task_ps": np.array([6000, 0]),
            "buffer_ps": np.array([1000, 0]), "req_out_ps": np.array([500, 0]),
            "busy_ps": np.array([1500, 0])}
    series = metrics.Series(7, width, 1, sums, np.array([True, False]), "pyramid")
    expected = {"arrival": 4 / 2e-9, "completion": 2 / 2e-9, "latency": 1.5e-9,
                "concurrency": 3.0, "buffer": 0.5, "pending_out": 0.25, "busy": 0.75}
    for key, value in expected.items():
        got = series.values(key)
        assert got[0] == pytest.approx(value, rel=1e-12), key
        assert np.isnan(got[1]) if key == "latency" else got[1] == 0, key  # idle: zero
    assert list(series.centres_ps()) == [15000.0, 17000.0]


def test_the_first_level_spans_exactly_the_location_from_lo():
    one = np.array([True])
    (level, lo, columns, _, _), *_ = pyramid.location_levels(
        np.array([25]), np.array([35]), np.array([0]), np.array([-1]), one, ~one, 10, 0)
    assert (level, lo) == (0, 2) and [len(c) for c in columns] == [2] * 7
    assert list(columns[1]) == [0, 1]  # the req_in ends at 35: bin [30, 40)
