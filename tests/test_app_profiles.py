"""The views on an imported profile: counters on the Overview, markers and links in the
Component and Task views, relative times readable, absolute times from the origin."""
import importlib
import json
import math
import sqlite3

from test_chrome_import import BASE_NS, kineto_events

from dashapp import urls
from dashapp.catalog import trace_meta
from dashapp.daisen import exporting, views
from dashapp.units import absolute_time, fmt_at
from simulator.tracing.importers import import_trace

DAY_US = 86_400 * 10 ** 6


def _profile(tmp_path, extra=()):
    src = tmp_path / "p.json"
    src.write_text(json.dumps({"baseTimeNanoseconds": str(BASE_NS),
                               "traceEvents": kineto_events() + list(extra)}))
    import_trace(src, tmp_path / "p.sqlite", show_progress=False)
    return tmp_path / "p.sqlite"


def test_counters_chart_on_the_overview_beside_the_metrics(tmp_path):
    path = _profile(tmp_path, [
        {"name": "mem", "ph": "C", "pid": 19392, "ts": 1419247333400.684 + dt, "args": {"bytes": v}}
        for dt, v in ((0, 10), (10, 30), (20, 20))])
    meta = trace_meta(path)
    assert [name for _, _, name, _ in meta.counters] == ["mem"]
    state = urls.OverviewState(trace=path.name, primary="counter:mem", secondary="concurrency")
    page = views.overview(path, state)
    charts = {c.location.name: c for c in page.charts}
    assert "python3[19392]" in charts  # the process holds the counter, though it ran no task
    values = charts["python3[19392]"].series.values("counter:mem")
    shown = [v for v in values.tolist() if not math.isnan(v)]
    assert shown and set(shown) <= {10.0, 20.0, 30.0} and max(shown) == 30.0
    assert charts["python3[19392]"].figure["data"][0]["name"] == "mem"
    assert urls.parse_overview({"primary": "counter:mem"})[0].primary == "counter:mem"
    header, *rows = exporting.overview_csv(page).splitlines()
    assert header.endswith(",counter:mem") and any(r.endswith(",30.0") for r in rows)


def test_component_view_draws_markers_and_lists_links(tmp_path):
    path = _profile(tmp_path)
    meta = trace_meta(path)
    launch = next(t for t in meta.kinds.values() if t.action == "cudaLaunchKernel")
    key = sqlite3.connect(path).execute("SELECT id FROM task WHERE kind = ?", (launch.id,)).fetchone()[0]
    page = views.component(path, urls.ComponentState(trace=path.name, task=key, t0=0, t1=10 ** 8))
    assert [link.kind for link in page.links_out] == ["ac2g"] and page.links_in == []
    assert {name for _, name, *_ in page.instants} == {"[memory]", "Iteration Start"}
    markers = [d for d in page.figure["data"] if d.get("name") == "markers"]
    assert len(markers) == 1 and len(markers[0]["x"]) == 2
    kernel = views.component(path, urls.ComponentState(trace=path.name, task=page.links_out[0].task.id))
    assert kernel.location.name == "GPU[0].stream[7]" and kernel.links_in[0].task.id == key


def test_times_read_apart_and_absolute_on_the_unix_clock():
    assert fmt_at(30_165_000) == "30.165 µs" and fmt_at(30_165_001) == "30.165001 µs"
    assert fmt_at(16_856_000) != fmt_at(21_969_000)
    assert absolute_time("1752830083.333400684", "unix", 17_000) == "2025-07-18 09:14:43.333400701 UTC"
    assert absolute_time("12.5", "source", 10 ** 12) == "13.5 s on the source clock"
    assert absolute_time(None, None, 5) is None


def test_a_profile_spanning_days_works_in_the_url(tmp_path):
    events = [{"name": "early", "ph": "X", "ts": 1.7e15, "dur": 1, "pid": 1, "tid": 1},
              {"name": "late", "ph": "X", "ts": 1.7e15 + 3 * DAY_US, "dur": 1, "pid": 1, "tid": 1}]
    src = tmp_path / "days.json"
    src.write_text(json.dumps(events))
    import_trace(src, tmp_path / "days.sqlite", show_progress=False)
    meta = trace_meta(tmp_path / "days.sqlite")
    assert meta.end_ps == 3 * DAY_US * 10 ** 6 + 10 ** 6
    state, problems = urls.parse_component({"trace": "days.sqlite", "loc": meta.locations[0].name,
                                            "t0": "0", "t1": str(meta.end_ps)})
    assert problems == [] and state.t1 == meta.end_ps
    page = views.component(tmp_path / "days.sqlite", state)
    assert page.total_in_window == 2


def test_kernel_category_in_either_case_names_an_unnamed_gpu_process(tmp_path):
    events = [{"name": "k", "cat": "Kernel", "ph": "X", "ts": 1, "dur": 1, "pid": 3, "tid": 20},
              {"name": "k2", "cat": "kernel", "ph": "X", "ts": 1, "dur": 1, "pid": 4, "tid": "7"},
              {"name": "k3", "cat": "Kernel", "ph": "X", "ts": 1, "dur": 1, "pid": 5, "tid": "stream 9"}]
    src = tmp_path / "k.json"
    src.write_text(json.dumps(events))
    import_trace(src, tmp_path / "k.sqlite", show_progress=False)
    names = sorted(loc.name for loc in trace_meta(tmp_path / "k.sqlite").locations)
    assert names == ["GPU[3].stream[20]", "GPU[4].stream[7]", "GPU[5].stream[9]"]


def test_the_traces_page_says_a_profile_s_span_is_profiled_time(tmp_path):
    from test_app import _texts
    from test_watch import _app

    path = _profile(tmp_path)
    _app(tmp_path)
    home = importlib.import_module("dashapp.pages.home")
    profile = _texts(home._trace_card(path.name, path))
    assert "Profiled time" in profile and "Simulated time" not in profile
