"""Figure builders, colours, exports and URL state, with no server."""
import csv
import io
import re
import sqlite3

import numpy as np
import plotly.graph_objects as go
import pytest
from test_app_traces import NS, write_exact_trace, write_synthetic_trace

from dashapp import colors, urls, widgets
from dashapp.catalog import trace_meta
from dashapp.daisen import exporting, figures, views
from dashapp.daisen.metrics import Series


@pytest.fixture(scope="module")
def exact(tmp_path_factory):
    return write_exact_trace(tmp_path_factory.mktemp("exact") / "exact.sqlite")


def _series():
    sums = {c: np.array([2, 0, 4], dtype=np.int64) for c in
            ("req_in_started", "req_in_ended", "req_in_latency_ps", "task_ps", "buffer_ps",
             "req_out_ps", "busy_ps")}
    return Series(first_bin=5, width_ps=1000, level=0, sums=sums,
                  present=np.array([True, False, True]), source="pyramid")


def test_overview_chart_plots_bin_centres_idle_as_zero_and_a_missing_latency_as_a_gap():
    fig = figures.overview_chart(_series(), "concurrency", "latency", (5000, 8000))
    go.Figure(fig)  # a valid Plotly figure
    primary, secondary = fig["data"]
    centres = [primary["x0"] + i * primary["dx"] for i in range(len(primary["y"]))]
    assert centres == pytest.approx([5.5e-9, 6.5e-9, 7.5e-9])
    assert primary["y"] == [0.002, 0.0, 0.004]  # task_ps / width; the idle bin is 0
    assert secondary["yaxis"] == "y2" and secondary["y"][1] is None
    # 2 ps of latency over 2 requests: 1 ps, drawn in ns (issue 13: what an architect reads)
    assert secondary["y"][0] == pytest.approx(1e-3)
    assert fig["layout"]["yaxis2"]["title"]["text"] == "Average request latency (ns)"
    assert fig["layout"]["xaxis"]["range"] == pytest.approx([5e-9, 8e-9])
    assert fig["layout"]["yaxis"]["fixedrange"]  # drags zoom time only


def test_rates_are_drawn_per_ns_and_an_all_zero_series_has_a_single_zero_tick():
    series = _series()
    series.sums["req_out_ps"] = np.zeros(3, dtype=np.int64)  # never waits on a request
    fig = figures.overview_chart(series, "arrival", "pending_out", (5000, 8000))
    rate, zero = fig["data"]
    assert rate["y"][0] == pytest.approx(2.0)  # 2 arrivals in 1000 ps: 2 per ns
    assert fig["layout"]["yaxis"]["title"]["text"] == "Request arrival rate (per ns)"
    assert zero["y"] == [0.0, 0.0, 0.0]
    assert fig["layout"]["yaxis2"]["tickvals"] == [0]
    assert "tickvals" not in fig["layout"]["yaxis"]


def test_the_overview_grid_puts_each_chart_in_its_own_cell_with_every_time_axis_matched():
    charts = [figures.overview_chart(_series(), "concurrency", "latency", (5000, 8000)),
              figures.overview_chart(_series(), "concurrency", None, (5000, 8000)),
              figures.overview_chart(_series(), "busy", "arrival", (5000, 8000)),
              figures.overview_chart(_series(), "concurrency", "latency", (5000, 8000)),
              figures.overview_chart(_series(), "concurrency", "latency", (5000, 8000))]
    grid = figures.overview_grid(charts, columns=4)
    go.Figure(grid)  # a valid Plotly figure
    layout = grid["layout"]
    assert layout["height"] == 2 * figures.CELL_PX
    # Every line is drawn against its chart's left axis (a right axis with a line of its
    # own is a second subplot); chart 3's right axis is its own, labelled by the page.
    assert [(t["xaxis"], t["yaxis"]) for t in grid["data"]] == [
        ("x", "y"), ("x", "y"), ("x2", "y3"), ("x3", "y5"), ("x3", "y5"),
        ("x4", "y7"), ("x4", "y7"), ("x5", "y9"), ("x5", "y9")]
    assert [t.get("meta") for t in grid["data"][:3]] == [None, figures.ON_LEFT, None]
    assert layout["yaxis6"]["overlaying"] == "y5" and layout["yaxis6"]["side"] == "right"
    # Axes are named once for the page (axis_key), time under the first row (on screen as
    # the page opens) and each column's last chart: here, every chart of the two rows.
    assert all(layout[k]["title"] is None for k in layout if k.startswith("yaxis"))
    assert [layout[k]["showticklabels"] for k in ("xaxis", "xaxis2", "xaxis3", "xaxis4",
                                                   "xaxis5")] == [True, True, True, True, True]
    # A middle row (chart 5 of 12) is unlabelled: the rows below it are.
    twelve = figures.overview_grid([charts[0]] * 12, 4)["layout"]
    assert [twelve[f"xaxis{n}"]["showticklabels"] for n in (5, 9)] == [False, True]
    assert all(layout[f"xaxis{n}"]["matches"] == "x" for n in range(2, 6))
    assert "matches" not in layout["xaxis"]
    assert layout["xaxis5"]["range"] == pytest.approx([5e-9, 8e-9])
    # Cells do not overlap: columns side by side, chart 5 alone on the second row.
    columns = [layout[k]["domain"] for k in ("xaxis", "xaxis2", "xaxis3", "xaxis4")]
    assert all(a[1] < b[0] for a, b in zip(columns, columns[1:]))
    assert layout["xaxis5"]["domain"] == columns[0]
    top_row, second_row = layout["yaxis"]["domain"], layout["yaxis9"]["domain"]
    assert second_row[1] < top_row[0] and 0 <= second_row[0] and top_row[1] <= 1
    assert figures.overview_grid([])["data"] == []


def test_the_grid_names_its_shared_axes_once_and_keeps_the_names_for_a_chart_saved_alone():
    charts = [figures.overview_chart(_series(), "arrival", "latency", (5000, 8000))] * 3
    grid = figures.overview_grid(charts)
    assert figures.axis_key(grid) == [
        ("left", "Request arrival rate (per ns)", figures.PRIMARY_COLOUR),
        ("right", "Average request latency (ns)", figures.SECONDARY_COLOUR)]
    left, right = grid["layout"]["meta"]["axis_titles"]
    assert left["text"] == "Request arrival rate (per ns)" and right["font"]["size"] == 9
    hidden = figures.overview_grid([figures.overview_chart(_series(), "busy", None, (5000, 8000))])
    assert figures.axis_key(hidden) == [("left", "Busy fraction", figures.PRIMARY_COLOUR)]


def test_a_right_axis_line_in_the_grid_reads_true_on_its_own_axis_and_in_its_hover():
    series = _series()
    chart = figures.overview_chart(series, "concurrency", "latency", (5000, 8000))
    left, right = (chart["layout"][k]["range"][1] for k in ("yaxis", "yaxis2"))
    # Fixed ranges with Plotly's headroom: 0.004 concurrent tasks, 0.001 ns latency at most.
    assert left == pytest.approx(0.004 * figures.HEADROOM)
    assert right == pytest.approx(0.001 * figures.HEADROOM)
    line = figures.overview_grid([chart])["data"][1]
    assert line["yaxis"] == "y" and line["customdata"] == chart["data"][1]["y"]
    # Drawn at the same height of the left axis as its value is on the right one.
    for drawn, value in zip(line["y"], line["customdata"]):
        assert (drawn is None) == (value is None)
        if value is not None:
            assert drawn / left == pytest.approx(value / right, rel=1e-6)
    assert "%{customdata:.4s} ns" in line["hovertemplate"] and "%{y" not in line["hovertemplate"]


def test_right_axis_labels_are_plotly_like_steps_in_si_notation():
    def labels(top):
        ticks = figures.right_ticks({"layout": {"yaxis2": {"range": [0, top]}}})
        assert all(0 <= f <= 1 for f, _ in ticks) and ticks[0] == (0.0, "0")
        return [text for _, text in ticks]

    assert labels(2.1) == ["0", "1", "2"]
    assert labels(1) == ["0", "0.5", "1"]
    assert labels(0.0042) == ["0", "2m", "4m"]
    assert labels(1530) == ["0", "500", "1k", "1.5k"]
    assert labels(3e-7) == ["0", "100n", "200n", "300n"]
    ticks = figures.right_ticks({"layout": {"yaxis2": {"range": [0, 2.1]}}})
    assert ticks[2][0] == pytest.approx(2 / 2.1)  # where 2 is on an axis up to 2.1
    # All zero: one 0 tick; hidden: none.
    series = _series()
    series.sums["req_out_ps"] = np.zeros(3, dtype=np.int64)
    zero = figures.overview_chart(series, "arrival", "pending_out", (5000, 8000))
    assert figures.right_ticks(zero) == [(0.0, "0")]
    hidden = figures.overview_chart(series, "arrival", None, (5000, 8000))
    assert figures.right_ticks(hidden) == []


def test_a_hidden_metric_draws_no_trace():
    fig = figures.overview_chart(_series(), "busy", None, (5000, 8000))
    assert len(fig["data"]) == 1


def test_component_figure_has_both_views_on_one_time_axis(exact):
    page = views.component(exact, urls.ComponentState(trace="exact.sqlite", loc="GPU.L2[0]",
                                                      task=2))
    fig = page.figure
    go.Figure(fig)
    roles = {tuple(t["meta"]) for t in fig["data"] if t["type"] == "bar"}
    assert ("req_in-ReadReq", "component") in roles and ("req_in-ReadReq", "task") in roles
    assert all(t.get("xaxis", "x") == "x" for t in fig["data"])
    component = [t for t in fig["data"] if t["type"] == "bar" and t["meta"][1] == "component"]
    keys = sorted(c[0] for t in component for c in t["customdata"])
    assert keys == [2, 3, 5]  # both req_in and the nested cache transaction
    task_bars = [c[0] for t in fig["data"] if t["type"] == "bar" and t["meta"][1] == "task"
                 for c in t["customdata"]]
    assert sorted(task_bars) == [1, 2, 3]  # parent, current, subtask
    cache = next(t for t in component if t["meta"][0] == "cache_transaction-read")
    req = next(t for t in component if t["meta"][0] == "req_in-ReadReq")
    parent_y = req["y"][[c[0] for c in req["customdata"]].index(2)]
    assert abs(cache["y"][0] - parent_y) < 0.5 and cache["width"][0] < 1  # nested inside
    hover = cache["customdata"][0]
    assert hover[2:5] == ["cache_transaction", "read", "GPU.L2[0]"] and "4096" in hover[9]
    line = next(t for t in fig["data"] if t["type"] == "scatter")
    assert line["yaxis"] == "y3" and max(v for v in line["y"] if v is not None) >= 1


def test_colours_are_stable_and_distinct():
    labels = {0: "req_in-ReadReq", 1: "inst-VALU", 2: "req_out-ReadReq"}
    a = colors.kind_colours(labels)
    b = colors.kind_colours(dict(reversed(list(labels.items()))))
    assert a == b and len(set(a.values())) == 3
    assert all(c.startswith("#") and len(c) == 7 for c in a.values())


def test_kind_colours_agree_across_pages(exact):
    meta = trace_meta(exact)
    comp = views.component(exact, urls.ComponentState(trace="exact.sqlite", loc="GPU.CU[0]"))
    for trace in comp.figure["data"]:
        if trace["type"] == "bar":
            kind = next(k for k in meta.kinds if meta.kind_label(k) == trace["meta"][0])
            assert trace["marker"]["color"] == meta.colours[kind]


def test_graph_config_exports_svg_with_a_safe_name():
    config = widgets.graph_config("t.sqlite-GPU.L2[3]-0-100")
    assert config["toImageButtonOptions"] == {"format": "svg",
                                              "filename": "t.sqlite-GPU.L2_3_-0-100"}


def test_overview_csv_holds_every_bin_and_metric(exact):
    page = views.overview(exact, urls.OverviewState(trace="exact.sqlite", filter="L2"))
    rows = list(csv.reader(io.StringIO(exporting.overview_csv(page))))
    assert rows[0][:4] == ["component", "bin_start_ps", "bin_end_ps", "source"]
    assert len(rows) - 1 == page.charts[0].series.nbins
    assert {r[0] for r in rows[1:]} == {"GPU.L2[0]"}


def test_component_csv_lists_the_drawn_tasks(exact):
    page = views.component(exact, urls.ComponentState(trace="exact.sqlite", loc="GPU.L2[0]"))
    rows = list(csv.reader(io.StringIO(exporting.component_csv(page, trace_meta(exact)))))
    assert [r[6] for r in rows[1:]] == [str(20 * NS), str(22 * NS), str(35 * NS)]


def test_too_many_tasks_switch_to_an_exact_density(tmp_path, monkeypatch):
    path = write_synthetic_trace(tmp_path / "syn.sqlite", tasks=4000)
    monkeypatch.setattr(views, "MAX_BARS", 5)
    page = views.component(path, urls.ComponentState(trace="syn.sqlite", loc="GPU.L2[0]"))
    assert page.mode == "density" and any("density" in m or "in flight" in m
                                          for m in page.messages)
    _, centres, density = page.drawn
    width = centres[1] - centres[0]
    # Exact: the density integrates back to the total task time at this location.
    meta = trace_meta(path)
    loc = meta.by_name["GPU.L2[0]"]
    total = sqlite3.connect(path).execute(
        "SELECT sum(end_ps - start_ps) FROM task WHERE location = ?", (loc.id,)).fetchone()[0]
    assert sum(float(v.sum()) for v in density.values()) * width == pytest.approx(total)


def test_the_density_is_shaded_in_legend_colours_and_a_click_finds_a_window_of_bars(
        tmp_path, monkeypatch):
    path = write_synthetic_trace(tmp_path / "syn.sqlite", tasks=4000)
    monkeypatch.setattr(views, "MAX_BARS", 5)
    state = urls.ComponentState(trace="syn.sqlite", loc="GPU.L2[0]")
    page = views.component(path, state)
    meta = trace_meta(path)
    heatmaps = [t for t in page.figure["data"] if t["type"] == "heatmap"]
    go.Figure(page.figure)
    assert [t["meta"][0] for t in heatmaps] == sorted(meta.kind_label(k) for k in page.drawn[2])
    by_label = {meta.kind_label(k): k for k in meta.kinds}
    assert all(t["colorscale"][-1][1] == meta.colours[by_label[t["meta"][0]]]
               for t in heatmaps)
    # Each row is shaded up to its own peak (a kind with few tasks in flight stays
    # visible); the row's label and the legend's ramp say what its full colour means.
    assert not any(t["showscale"] for t in heatmaps)
    assert [t["zmax"] for t in heatmaps] == [
        max(1.0, float(max(page.drawn[2][by_label[t["meta"][0]]]))) for t in heatmaps]
    ticks = page.figure["layout"]["yaxis2"]["ticktext"]
    assert all(tick.startswith(t["meta"][0] + " (≤ ") for tick, t in zip(ticks, heatmaps))
    # The default window stays inside the run.
    assert page.window[1] <= meta.end_ps
    # A click anywhere on the density leads to a window that draws bars.
    centre = heatmaps[0]["customdata"][0][len(heatmaps[0]["customdata"][0]) // 2]
    t0, t1 = views.bars_window(path, "GPU.L2[0]", centre, page.window)
    assert t0 <= centre < t1 and t1 - t0 < page.window[1] - page.window[0]
    zoomed = views.component(path, urls.ComponentState(trace="syn.sqlite", loc="GPU.L2[0]",
                                                       t0=t0, t1=t1))
    assert zoomed.mode == "bars"
    click = {"points": [{"x": centre * 1e-12, "z": 1.0, "customdata": centre}]}
    assert urls.density_click(click) == centre
    assert urls.density_click({"points": [{"customdata": [3, "x"]}]}) is None


def test_overview_pages_sort_and_report_counts(tmp_path):
    path = write_synthetic_trace(tmp_path / "syn.sqlite", tasks=3000)
    meta = trace_meta(path)
    first = views.overview(path, urls.OverviewState(trace="syn.sqlite", filter=r"CU\[\d+\]$",
                                                    sort="name"))
    second = views.overview(path, urls.OverviewState(trace="syn.sqlite", filter=r"CU\[\d+\]$",
                                                     page=2, sort="name"))
    names = [c.location.name for c in first.charts + second.charts]
    cus = [loc for loc in meta.locations if loc.task_count and re.search(r"CU\[\d+\]$", loc.name)]
    # Natural order: CU[2] before CU[10] (a plain string sort would put CU[10] first).
    expected = sorted((loc.name for loc in cus),
                      key=lambda n: int(re.search(r"CU\[(\d+)\]$", n).group(1)))
    assert 16 < len(cus) <= 32 and first.matched == len(cus) and first.pages == 2
    assert len(first.charts) == 16 and names == expected
    # By load is the default (issue 36): the first page is the busiest components.
    by_load = views.overview(path, urls.OverviewState(trace="syn.sqlite"))
    busy = [c.location.busy_ps for c in by_load.charts]
    assert busy == sorted(busy, reverse=True)
    assert busy[0] == max(loc.busy_ps or 0 for loc in meta.locations)
    none = views.overview(path, urls.OverviewState(trace="syn.sqlite", filter="NoSuchUnit"))
    assert none.charts == [] and "No component matches" in none.messages[0]
    beyond = views.overview(path, urls.OverviewState(trace="syn.sqlite", filter="L2", page=5))
    assert beyond.state.page == 1 and "no page 5" in beyond.messages[0]


def test_nested_bars_are_drawn_above_their_parents(exact):
    page = views.component(exact, urls.ComponentState(trace="exact.sqlite", loc="GPU.L2[0]"))
    order = [t["meta"][0] for t in page.figure["data"]
             if t["type"] == "bar" and t["meta"][1] == "component"]
    # The cache transaction (depth 1) sorts before req_in by name but nests inside one,
    # so its trace must come later (Plotly paints later traces on top).
    assert order.index("cache_transaction-read") > order.index("req_in-ReadReq")


def test_sub_pixel_bars_are_merged_and_counted_not_dropped(tmp_path):
    from simulator.tracing.api import Tracer
    from simulator.tracing.writer import TraceWriter

    path = tmp_path / "thin.sqlite"
    writer = TraceWriter(path, command="thin bars")
    tr = Tracer(writer)
    loc, thin, wide = tr.location("GPU.X"), tr.kind("inst", "VALU"), tr.kind("wavefront", "w")
    for i in range(300):  # 1-ps instructions every 10 ps: far below a pixel of the run
        tr.end_task(tr.start_task(-1, thin, loc, 10 * i), 10 * i + 1)
    tr.end_task(tr.start_task(-1, wide, loc, 0), 50_000)
    tr.end_task(tr.start_task(-1, thin, loc, 40_000), 40_001)  # alone: stays a single bar
    tr.close(50_000)
    writer.finalize(completed=True)
    writer.close()
    page = views.component(path, urls.ComponentState(trace="thin.sqlite", loc="GPU.X"))
    bars = [t for t in page.figure["data"] if t["type"] == "bar"]
    singles = [c for t in bars for c in t["customdata"] if c[0] >= 0]
    merged = [c for t in bars for c in t["customdata"] if c[0] < 0]
    assert [(c[1], c[10], c[11]) for c in merged] == [
        ("300 tasks, each narrower than a pixel", 0, 2991)]
    assert sorted(c[0] for c in singles) == [300, 301]  # the wide task and the lone thin one
    assert len(page.tasks) == page.total_in_window == 302  # all still in the CSV


def test_only_a_value_between_gaps_gets_a_marker():
    """Lines alone (markers everywhere cost the page a third of its drawing time), but a
    latency bin between two gaps would draw nothing without one."""
    series = _series()
    series.sums["req_in_ended"] = np.array([2, 0, 4], dtype=np.int64)
    fig = figures.overview_chart(series, "concurrency", "latency", (5000, 8000))
    line, latency = fig["data"]
    assert line["mode"] == "lines" and "marker" not in line
    assert latency["mode"] == "lines+markers" and latency["marker"]["size"] == [4, 0, 4]
    series.sums["req_in_ended"] = np.array([2, 3, 0], dtype=np.int64)
    latency = figures.overview_chart(series, None, "latency", (5000, 8000))["data"][0]
    assert latency["mode"] == "lines"  # 0 and 1 join; the gap after them is just a gap
