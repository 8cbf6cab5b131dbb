"""The Overview of an imported Nsight Systems profile: GPU streams and CPU threads, with
busy fraction and tasks in flight that match the profile, and no request metrics."""
import sqlite3
from pathlib import Path

import numpy as np
import pytest
from test_app_traces import write_synthetic_trace

from dashapp import urls
from dashapp.catalog import trace_meta
from dashapp.daisen import metrics, views
from simulator.tracing.importers import import_trace

SAMPLE = Path(__file__).resolve().parent / "data" / "nsys_saxpy_mpi_a100.sqlite"
THREAD, STREAM = "saxpy-mpi-cuda.MPI Rank 0", "GPU[0].stream[7]"


@pytest.fixture(scope="module")
def imported(tmp_path_factory):
    path = tmp_path_factory.mktemp("nsys-views") / "saxpy.sqlite"
    import_trace(SAMPLE, path, show_progress=False)
    return path


def _union_ns(intervals):
    """Time covered by at least one of ``intervals`` (start, end)."""
    total, reach = 0, None
    for start, end in sorted(intervals):
        if reach is None or start > reach:
            total += end - start
            reach = end
        elif end > reach:
            total += end - reach
            reach = end
    return total


def _source(sql):
    db = sqlite3.connect(f"file:{SAMPLE}?mode=ro", uri=True)
    try:
        return db.execute(sql).fetchall()
    finally:
        db.close()


def test_the_overview_shows_streams_and_threads_with_fitting_metrics(imported):
    page = views.overview(imported, urls.OverviewState(trace=imported.name))
    assert [c.location.name for c in page.charts] == [THREAD, STREAM]
    # No req_in/req_out in a profile: busy fraction replaces the request arrival rate.
    assert (page.state.primary, page.state.secondary) == ("concurrency", "busy")
    assert views.metric_keys(trace_meta(imported)) == ("concurrency", "busy")
    explicit = views.overview(imported, urls.OverviewState(trace=imported.name,
                                                           primary="latency", secondary="busy"))
    assert (explicit.state.primary, explicit.state.secondary) == ("concurrency", "busy")


def test_a_simulator_trace_keeps_every_metric(tmp_path):
    write_synthetic_trace(tmp_path / "s.sqlite", tasks=2000, seed=3)
    meta = trace_meta(tmp_path / "s.sqlite")
    assert views.metric_keys(meta) == tuple(metrics.METRICS)
    state = urls.OverviewState(trace="s.sqlite")
    assert views.fit_metrics(meta, state) == state


def test_busy_time_is_the_gpu_work_and_the_api_time_of_the_profile(imported):
    gpu = _source("SELECT start, end FROM CUPTI_ACTIVITY_KIND_KERNEL UNION ALL"
                  " SELECT start, end FROM CUPTI_ACTIVITY_KIND_MEMCPY")
    # (a backtrace row, eventClass 67, only repeats its call: the call's own times count)
    cpu = _source("SELECT start, end FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE eventClass != 67"
                  " UNION ALL"
                  " SELECT start, end FROM NVTX_EVENTS WHERE end IS NOT NULL"
                  " AND eventType IN (59, 60)")
    meta = trace_meta(imported)
    page = views.overview(imported, urls.OverviewState(trace=imported.name))
    expected = {STREAM: _union_ns(gpu) * 1000, THREAD: _union_ns(cpu) * 1000}
    for chart in page.charts:
        loc = meta.by_name[chart.location.name]
        assert loc.busy_ps == expected[loc.name]
        busy = chart.series.values("busy")
        assert np.nanmin(busy) >= 0 and np.nanmax(busy) <= 1
        # The bins' busy time adds up to the location's, exactly.
        assert int(chart.series.sums["busy_ps"].sum()) == loc.busy_ps


def test_kernels_in_flight_per_stream_never_exceed_one(imported):
    # One stream runs its work in order: the file's kernels and copies never overlap...
    work = sorted(_source("SELECT start, end FROM CUPTI_ACTIVITY_KIND_KERNEL UNION ALL"
                          " SELECT start, end FROM CUPTI_ACTIVITY_KIND_MEMCPY"))
    assert all(a[1] <= b[0] for a, b in zip(work, work[1:]))
    # ...so the stream's tasks in flight equal its busy fraction in every bin.
    page = views.overview(imported, urls.OverviewState(trace=imported.name))
    stream = next(c for c in page.charts if c.location.name == STREAM)
    concurrency, busy = stream.series.values("concurrency"), stream.series.values("busy")
    assert np.nanmax(concurrency) <= 1
    assert np.allclose(concurrency, busy, equal_nan=True)


def test_the_traces_page_names_time_zero_and_the_gpu(imported):
    from test_app import _render, _texts

    from dashapp import app as app_module

    meta = trace_meta(imported)
    assert meta.absolute(0) == "2023-06-26 21:00:57.637297504 UTC"
    assert meta.devices() == ["NVIDIA A100-SXM4-40GB (108 SMs, 1.41 GHz, 39.4 GiB)"]
    app = app_module._created[0] if app_module._created else app_module.create_app(
        trace_dir=imported.parent)
    app.server.config["GPUSCOPE_CATALOG"].__init__(trace_dir=imported.parent)
    text = _texts(_render(app, "home"))
    assert "2023-06-26 21:00:57.637297504 UTC" in text
    assert "NVIDIA A100-SXM4-40GB (108 SMs, 1.41 GHz, 39.4 GiB)" in text
