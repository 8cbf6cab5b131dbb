"""Comparing runs without a browser: statistics, kernel matching and the comparison
views on two fixture traces with known differences (tests/compare_traces.py), the
sweep summary as the app reads it, and the /compare and /sweep layouts in the server."""
import json
from urllib.parse import parse_qs

import numpy as np
import pytest
from app_inside import serve, serving_copies
from compare_traces import NS, write_run
from dash import html

from dashapp import urls
from dashapp.comparison import figures, profiles, stats, views
from dashapp.comparison.sweep import SweepReadError, read_sweep, sort_rows
from simulator.tracing.importers import import_trace

PS = 1e-12


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    directory = tmp_path_factory.mktemp("compare")
    return write_run(directory / "a.sqlite", "A"), write_run(directory / "b.sqlite", "B")


def test_run_statistics_read_back_the_known_values(runs):
    a, b = (stats.run_stats(p) for p in runs)
    assert [(k.name, k.start_ps, k.end_ps) for k in a.kernels] == [
        ("gemm", 0, 100 * NS), ("relu", 100 * NS, 150 * NS)]
    assert a.simulated_ps == 200 * NS and b.simulated_ps == 160 * NS
    assert a.group_busy["CU"] == pytest.approx(0.375) and b.group_busy["CU"] == pytest.approx(0.5)
    assert a.group_busy["SIMD"] == pytest.approx(12 / 200)
    assert b.group_busy["SIMD"] == pytest.approx(20 / 160)
    assert a.group_busy["L2"] == pytest.approx(0.2) and b.group_busy["L2"] == pytest.approx(0.25)
    assert list(a.group_busy)[:4] == ["CU", "SIMD", "L1V", "L2"]
    assert a.hit_rates == {"L2": 0.75} and b.hit_rates == {"L2": 0.5}
    assert a.instruction_mix == {"VALU": 3} and b.instruction_mix == {"VALU": 5}
    assert a.wavefronts_per_cu == pytest.approx(0.5)
    assert b.wavefronts_per_cu == pytest.approx(160 / 120 / 2)
    assert (a.kernel_start_ps, b.kernel_start_ps) == (0, 10 * NS)


def test_kernels_matched_by_name_are_added_removed_or_faster(runs):
    a, b = (stats.run_stats(p) for p in runs)
    matches = {m.name: m for m in stats.match_kernels(a.kernels, b.kernels)}
    assert matches["gemm"].status == "faster"
    assert (matches["gemm"].time_a, matches["gemm"].time_b) == (100 * NS, 80 * NS)
    assert stats.speedup(matches["gemm"].time_a, matches["gemm"].time_b) == 1.25
    assert matches["relu"].status == "removed" and matches["relu"].count_b == 0
    assert matches["softmax"].status == "added" and matches["softmax"].time_b == 40 * NS
    assert not stats.same_program(a.kernels, b.kernels)
    assert stats.same_program(a.kernels, a.kernels)
    slower = stats.match_kernels([stats.Kernel("k", 0, 100)], [stats.Kernel("k", 0, 150)])
    same = stats.match_kernels([stats.Kernel("k", 0, 1000)], [stats.Kernel("k", 5, 1004)])
    assert slower[0].status == "slower" and same[0].status == "same"


def test_configurations_differing_keys_come_first(runs):
    a, b = (stats.trace_meta(p) for p in runs)
    rows = stats.config_rows(a.config, b.config)
    assert rows[0] == ("cp.rate", 1, 2, True)
    assert ("l2.banks", 16, 16, False) in rows
    assert stats.config_rows({"x": {"y": 1}}, {})[0] == ("x.y", 1, None, True)


def test_statistics_rows_pair_a_and_b(runs):
    a, b = (stats.run_stats(p) for p in runs)
    rows = {(r.section, r.label): r for r in stats.stat_rows(a, b)}
    cu = rows[("Busy fraction", "CU")]
    assert (cu.a, cu.b) == (pytest.approx(0.375), pytest.approx(0.5))
    assert stats.ratio(cu.a, cu.b) == pytest.approx(0.5 / 0.375)
    assert (rows[("Hit rate", "L2")].a, rows[("Hit rate", "L2")].b) == (0.75, 0.5)
    traced = stats.TRACED_INSTRUCTIONS
    assert (rows[(traced, "VALU")].a, rows[(traced, "VALU")].b) == (3, 5)
    assert rows[(traced, "all traced")].a == sum(
        r.a for (section, label), r in rows.items() if section == traced and label != "all traced")
    assert rows[("Top components", "GPU.CU[0]")].b == pytest.approx(0.5)


def _chart(runs, **state):
    page = views.overview(*runs, urls.CompareState(a="a", b="b", **state))
    assert len(page.charts) == 1, [c.name for c in page.charts]
    return page, page.charts[0]


def test_overview_overlay_draws_a_and_b_on_simulated_time(runs):
    page, chart = _chart(runs, view="overview", metric="busy", filter=r"CU\[1\]$")
    assert page.window == (0, 200 * NS)
    a, b = chart.figure["data"]
    assert (a["name"], b["name"]) == ("A", "B")
    x = np.array(a["x"]) / PS / NS
    ya = np.array([np.nan if v is None else v for v in a["y"]])
    assert np.all(ya[x < 48] == 1) and np.all(ya[x > 52] == 0)  # idle once A is done


def test_b_minus_a_aligned_to_each_first_kernel(runs):
    # CU[1] is busy [0, 50) in A and [10, 90) in B: from each first kernel, B's extra
    # 30 ns are +1 and the rest is 0. B's bins start 10 ns later than A's and are
    # resampled onto A's, so the edges are exact to within a bin (2 ns here).
    page, chart = _chart(runs, metric="busy", mode="diff", align="kernel", filter=r"CU\[1\]$")
    assert page.window == (0, 200 * NS)
    (line,) = chart.figure["data"]
    x = np.array(line["x"]) / PS / NS
    y = np.array([np.nan if v is None else v for v in line["y"]])
    assert np.all(y[(x > 4) & (x < 46)] == 0) and np.all(y[(x > 54) & (x < 76)] == 1)
    assert np.all(y[x > 84] == 0)
    page, chart = _chart(runs, metric="busy", mode="diff", filter=r"CU\[1\]$")
    y = np.array([np.nan if v is None else v for v in chart.figure["data"][0]["y"]])
    x = np.array(chart.figure["data"][0]["x"]) / PS / NS
    assert np.all(y[x < 8] == -1) and np.all(y[(x > 12) & (x < 48)] == 0)


def test_overview_filter_paging_and_a_component_only_one_run_has(runs, tmp_path):
    page = views.overview(*runs, urls.CompareState(filter="CU", page=7))
    assert page.state.page == 1 and "There is no page 7" in page.messages[0]
    assert [c.name for c in page.charts] == ["GPU.CU[0]", "GPU.CU[0].SIMD[0]", "GPU.CU[1]"]
    page = views.overview(*runs, urls.CompareState(filter="(unclosed"))
    assert page.messages and len(page.charts) > 3


def test_component_view_a_above_b_on_one_time_axis(runs):
    page = views.component(*runs, ("a", "b"), urls.CompareState(loc="GPU.CU[0]",
                                                                 align="kernel"))
    assert page.location == "GPU.CU[0]" and page.counts == {"A": 1, "B": 1}
    fig_a, fig_b = page.figures["A"], page.figures["B"]
    assert fig_a["layout"]["xaxis"]["range"] == pytest.approx(fig_b["layout"]["xaxis"]["range"])

    def bars(fig):
        return [(b["base"][0] / PS, b["x"][0] / PS) for b in fig["data"]
                if b["type"] == "bar" and b.get("yaxis") == "y2"]
    assert bars(fig_a) == [pytest.approx((0, 100 * NS))]
    assert bars(fig_b) == [pytest.approx((0, 80 * NS))]  # B's wavefront from its kernel start
    with pytest.raises(LookupError):
        views.component(*runs, ("a", "b"), urls.CompareState(loc="GPU.Nothing"))


def test_shift_figure_moves_bars_lines_and_the_range():
    fig = {"data": [{"type": "bar", "orientation": "h", "base": [2e-9], "x": [1e-9]},
                    {"type": "scatter", "x": [1e-9, 3e-9], "y": [1, 2]},
                    {"type": "scatter", "x": [5.0], "y": [1], "xaxis": "x2"}],
           "layout": {"xaxis": {"range": [1e-9, 4e-9]}}}
    out = figures.shift_figure(fig, 1000)
    assert out["data"][0]["base"] == pytest.approx([1e-9]) and out["data"][0]["x"] == [1e-9]
    assert out["data"][1]["x"] == pytest.approx([0, 2e-9])
    assert out["data"][2]["x"] == [5.0]
    assert out["layout"]["xaxis"]["range"] == pytest.approx([0, 3e-9])
    assert fig["data"][1]["x"] == [1e-9, 3e-9]  # the input is left alone


def test_compare_state_round_trips_and_bad_values_are_reported():
    state = urls.CompareState(a="s/x.sqlite", b="y.sqlite", view="overview", mode="diff",
                              align="kernel", metric="latency", page=3, filter="L2",
                              sort="load", loc="GPU.L2[0]", t0=5, t1=9)
    params = {k: v[0] for k, v in parse_qs(urls.search(state).lstrip("?")).items()}
    assert urls.parse_compare(params) == (state, [])
    state, errors = urls.parse_compare({"view": "x", "mode": "y", "metric": "z"})
    assert state == urls.CompareState() and len(errors) == 3


SUMMARY = """\
l2.banks,local,simulated_time_ps,kernels,cu_busy,trace,status,error,wall_s
8,64,3000,1,0.5,l2.banks-8__local-64.sqlite,ok,,1.5
8,128,2000,1,0.25,l2.banks-8__local-128.sqlite,ok,,1.25
16,64,,,,,failed,parameters must be positive,0
16,128,1000,1,0.75,l2.banks-16__local-128.sqlite,ok,,1
"""


def test_a_sweep_summary_reads_its_keys_metrics_and_rows(tmp_path):
    (tmp_path / "summary.csv").write_text(SUMMARY)
    table = read_sweep(tmp_path)
    assert table.keys == ["l2.banks", "local"]
    assert table.metrics == ["simulated_time_ps", "kernels", "cu_busy"]
    assert len(table.rows) == 4 and len(table.ok) == 3
    assert table.rows[0]["simulated_time_ps"] == 3000 and table.rows[0]["local"] == "64"
    assert [r["simulated_time_ps"] for r in sort_rows(table.rows, "simulated_time_ps")] == [
        1000, 2000, 3000, None]
    assert [r["l2.banks"] for r in sort_rows(table.rows, "l2.banks", descending=True)] == [
        "16", "16", "8", "8"]
    lines = figures.sweep_lines(table.rows, "l2.banks", "simulated_time_ps", ["local"])
    by_name = {d["name"]: d for d in lines["data"]}
    assert by_name["local=64"]["x"] == [8.0, 16.0]
    assert by_name["local=64"]["y"] == [pytest.approx(3e-9), None]  # the failed point: a gap
    assert by_name["local=128"]["customdata"] == ["l2.banks-8__local-128.sqlite",
                                                   "l2.banks-16__local-128.sqlite"]
    heat = figures.sweep_heatmap(table.rows, "l2.banks", "local", "cu_busy")["data"][0]
    assert heat["x"] == ["8", "16"] and heat["y"] == ["64", "128"]
    assert heat["z"] == [[0.5, None], [0.25, 0.75]]
    (tmp_path / "summary.csv").write_text("a,b\n1,2\n")
    with pytest.raises(SweepReadError, match="not a sweep summary"):
        read_sweep(tmp_path)


# -- the pages inside the real server ---------------------------------------------------------
@pytest.fixture(scope="module")
def app(tmp_path_factory, runs):
    import shutil

    app, directory = serving_copies(tmp_path_factory, runs, "compare-served")
    (directory / "grid").mkdir()
    (directory / "grid" / "summary.csv").write_text(SUMMARY)
    shutil.copy(runs[0], directory / "grid" / "l2.banks-8__local-64.sqlite")
    return serve(app, directory)


def _render(app, page, **query):
    import importlib

    from test_app import _texts

    module = importlib.import_module(f"dashapp.pages.{page}")
    with app.server.test_request_context("/"):
        return _texts(module.layout(**query))


def test_compare_page_views_render_in_the_server(app):
    text = _render(app, "compare", a="a.sqlite", b="b.sqlite")
    assert "1 of 2 keys differ" in text and "cp.rate" in text
    assert "B is 1.25× faster" in text and "1 faster" in text and "1 added" in text
    assert "Simulated time: " in text
    text = _render(app, "compare", a="a.sqlite", b="b.sqlite", view="overview", mode="diff")
    assert "GPU.CU[0]" in text and "page 1 of 1" in text
    text = _render(app, "compare", a="a.sqlite", b="grid/l2.banks-8__local-64.sqlite",
                   view="component", loc="GPU.L2[0]")
    assert "· 4 tasks" in text and "configurations are identical" in text
    assert "Pick the two runs" in _render(app, "compare", a="a.sqlite")
    assert "no trace named 'nope.sqlite'" in _render(app, "compare", a="a.sqlite",
                                                      b="nope.sqlite")
    assert "no trace named '../a.sqlite'" in _render(app, "compare", a="a.sqlite",
                                                      b="../a.sqlite")


def test_sweep_page_and_the_traces_page_find_the_sweep(app):
    text = _render(app, "sweep", dir="grid", x="local", sort="-cu_busy", y="bogus")
    assert "Sweep grid" in text and "4 points" in text and "1 failed" in text
    assert "Ignored y='bogus'" in text
    assert "grid" in _render(app, "sweep")
    assert "no sweep named 'x'" in _render(app, "sweep", dir="x")
    home = _render(app, "home")
    assert "Sweeps" in home and "grid" in home and "compare with…" in home


@pytest.mark.slow
def test_the_daisen_case_study_as_a_sweep(tmp_path, capsys):
    """Dispatch rate 1 vs 2 on PageRank (small here; benchmarks/case_study_sweep.py runs
    the full size, 1.12x): B is faster because more wavefronts are resident per CU and
    the SIMDs are busier, and the comparison shows exactly that."""
    from simulator.__main__ import main

    out = tmp_path / "dispatch"
    assert main(["sweep", "pagerank", "--nodes", "512", "--edges", "4096", "--iterations", "1",
                 "--no-progress", "--vary", "cp.wg_dispatch_per_cycle=1,2", "-o", str(out)]) == 0
    a = stats.run_stats(out / "cp.wg_dispatch_per_cycle-1.sqlite")
    b = stats.run_stats(out / "cp.wg_dispatch_per_cycle-2.sqlite")
    assert stats.speedup(a.simulated_ps, b.simulated_ps) > 1.02
    assert [k.name for k in a.kernels] == [k.name for k in b.kernels] == ["pagerank"]
    assert b.group_busy["SIMD"] > a.group_busy["SIMD"]
    assert b.wavefronts_per_cu > a.wavefronts_per_cu
    assert a.instruction_mix == b.instruction_mix  # the same work, dispatched faster
    rows = {(r.section, r.label): r for r in stats.stat_rows(a, b)}
    assert ("Occupancy", "wavefronts per CU") in rows and ("Busy fraction", "SIMD") in rows


def _chrome_run(path, origin_us, kernels):
    """A Chrome trace (as PyTorch's profiler writes) of a CPU op launching GPU kernels."""
    import json

    events = [{"ph": "X", "cat": "cpu_op", "name": "aten::forward", "pid": 1, "tid": 1,
               "ts": origin_us, "dur": 1000}]
    at = origin_us + 10
    for name, dur in kernels:
        events.append({"ph": "X", "cat": "kernel", "name": name, "pid": 2, "tid": 7, "ts": at,
                       "dur": dur, "args": {"stream": 7}})
        at += dur + 5
    path.write_text(json.dumps({"traceEvents": events}))
    return path


@pytest.mark.usefixtures("app")  # the page module registers itself with the app
def test_imported_runs_of_one_program_match_kernels_by_name(tmp_path):
    """Two profiles of one program taken at different moments (epoch-scale times):
    kernels pair up by name, and aligned to each first kernel the runs line up."""
    from simulator.__main__ import main

    paths = []
    for run, origin, kernels in (("one", 1_419_247_333_430,
                                  [("gemm", 50), ("relu", 10), ("gemm", 50)]),
                                 ("two", 2_204_338_330_237,
                                  [("gemm", 40), ("gemm", 40), ("softmax", 20)])):
        source = _chrome_run(tmp_path / f"{run}.json", origin, kernels)
        paths.append(tmp_path / f"{run}.sqlite")
        assert main(["import", str(source), "-o", str(paths[-1])]) == 0
    a, b = (stats.run_stats(p) for p in paths)
    assert [k.name for k in a.kernels] == ["gemm", "relu", "gemm"]
    matches = {m.name: m for m in stats.match_kernels(a.kernels, b.kernels)}
    assert (matches["gemm"].status, matches["gemm"].time_a, matches["gemm"].time_b) == (
        "faster", 100_000_000, 80_000_000)
    assert matches["relu"].status == "removed" and matches["softmax"].status == "added"
    page = views.overview(*paths, urls.CompareState(align="kernel", metric="concurrency"))
    assert page.window[1] - page.window[0] < 2_000_000_000  # the runs' own spans, not the gap
    assert all(c.in_a and c.in_b for c in page.charts)
    # Profiled runs' times are not simulated; each kernel's name sits in a cell that shows
    # its start and the whole name on hover, so the numbers beside it stay on screen.
    from dashapp.pages import compare

    assert stats.time_name(*paths) == "run time"
    summary = compare._summary(*paths)
    assert "Run time: " in summary.children[0].children[0].children
    kernels = _by_id(summary, "cmp-kernels")
    spans = [c for c in _walk(kernels) if getattr(c, "className", None) == "gs-long-name"]
    assert sorted(s.title for s in spans) == ["gemm", "relu", "softmax"]
    assert all(s.children == s.title for s in spans)


def _by_id(component, ident):
    return next(c for c in _walk(component) if getattr(c, "id", None) == ident)


def _walk(component):
    yield component
    children = getattr(component, "children", None)
    for child in children if isinstance(children, (list, tuple)) else [children]:
        if hasattr(child, "to_plotly_json"):  # a component, not text
            yield from _walk(child)


@pytest.mark.usefixtures("app")  # the page module registers itself with the app
def test_a_training_runs_thousands_of_launches_show_the_ones_that_changed_most(tmp_path):
    """Two runs of one program with 300 launches of 60 kernels: each summary table shows
    at most 50 rows, the largest changes first, and says how many there are in all."""
    from dashapp.pages import compare
    from simulator.__main__ import main

    paths = []
    for run, slower in (("one", 0), ("two", 1)):
        # Launch 137 (kernel k17) takes 900 us more in run two; launch i of both runs
        # otherwise differs by i % 7 us.
        kernels = [(f"k{i % 60}", 20 + (i % 7) * slower + (900 if slower and i == 137 else 0))
                   for i in range(300)]
        source = _chrome_run(tmp_path / f"{run}.json", 1_700_000_000_000_000, kernels)
        paths.append(tmp_path / f"{run}.sqlite")
        assert main(["import", str(source), "-o", str(paths[-1])]) == 0
    a, b = (stats.run_stats(p) for p in paths)
    shown = stats.changed_launches(a.kernels, b.kernels, compare.MAX_TABLE_ROWS)
    assert len(shown) == 50 and shown[0][0] == 137
    changes = [kb.duration_ps - ka.duration_ps for _, ka, kb in shown]
    assert changes == sorted(changes, reverse=True)
    assert stats.changed_launches(a.kernels[:3], b.kernels[:3], 50) == [
        (i, a.kernels[i], b.kernels[i]) for i in range(3)]  # few: all, in launch order
    metas = [stats.trace_meta(p) for p in paths]
    # two profiles: their diff is drawn by a callback, below the summary and step pickers
    summary = html.Div([compare._summary(*paths), compare._profile_section(
        urls.CompareState(a="one.sqlite", b="two.sqlite"), *metas)[0],
        *compare._profile_why(profiles.profile_diff(*metas))])
    headings = [c.children for c in _walk(summary) if type(c).__name__ == "H6"]
    assert "Kernel launches (the 50 of 300 launches that changed most)" in headings
    assert "Kernels matched by name: 60 slower (the 50 of 60 kernels that changed most)" in headings
    for table in ("cmp-launches", "cmp-kernels", "cmp-ops"):  # capped (with the header)
        assert len([c for c in _walk(_by_id(summary, table)) if type(c).__name__ == "Tr"]) <= 51
    assert "Operations by name (HTA TraceDiff's categories): 61 unchanged (the 50 of 61 names" \
        " that changed most)" in headings
    # their analyses side by side, the time budget drawn for both
    assert "Why, A and B: the profile analyses side by side (I13)" in headings
    why = [[cell.children for cell in row.children]
           for row in _walk(_by_id(summary, "cmp-why")) if type(row).__name__ == "Tr"]
    assert ["I1 time budget", "GPU 2 span"] == why[1][:2]
    assert [t["name"] for t in _by_id(summary, "cmp-budget").figure["data"]] == [
        "compute", "non-compute", "copy-only", "idle"]


def test_sweep_lines_that_coincide_are_one_line_named_for_all():
    from dashapp.comparison.figures import sweep_lines

    rows = [{"x": "1", "k": k, "y": str(y), "trace": f"t{k}{x}"}
            for k, pts in (("a", (10, 20)), ("b", (10, 20)), ("c", (11, 20))) for x, y in zip("12", pts)]
    for row in rows:
        row["x"] = "1" if row["trace"].endswith("1") else "2"
    fig = sweep_lines(rows, "x", "y", ["k"])
    assert [t["name"] for t in fig["data"]] == ["k=a = k=b (identical)", "k=c"]
    assert fig["data"][0]["y"] == [10.0, 20.0]


def _profile(path, device, streams):
    """A two-stream profile: kernels k0.. on each stream in turn, the first stream first,
    and a busy Python thread (which must not be what the Component tab opens on)."""
    events = [{"ph": "X", "cat": "python_function", "name": "train", "pid": 9, "tid": 9,
               "ts": 0, "dur": 10_000}]
    for i, stream in enumerate(streams):
        for j in range(3):
            events.append({"ph": "X", "cat": "kernel", "name": f"k{i}", "pid": device,
                           "tid": stream, "ts": 100 + 1000 * i + 200 * j, "dur": 150,
                           "args": {"device": device, "stream": stream}})
    path.write_text(json.dumps({"traceEvents": events}))
    out = path.with_suffix(".sqlite")
    import_trace(path, out, show_progress=False)
    return out


def test_two_profiles_pair_their_gpu_streams_by_role(tmp_path):
    from dashapp.comparison import pairing

    a = _profile(tmp_path / "a.json", 0, [7, 20])
    b = _profile(tmp_path / "b.json", 2, [0, 13])
    meta_a, meta_b = stats.trace_meta(a), stats.trace_meta(b)
    assert pairing.partners(meta_a, meta_b) == {"GPU[0].stream[7]": "GPU[2].stream[0]",
                                                "GPU[0].stream[20]": "GPU[2].stream[13]"}
    names = views.component_names(meta_a, meta_b, "name")
    assert "GPU[2].stream[0]" not in names and "GPU[0].stream[7]" in names
    page = views.overview(a, b, urls.CompareState(a="a.sqlite", b="b.sqlite", view="overview"))
    paired = {c.name: c for c in page.charts}["GPU[0].stream[7]"]
    assert paired.in_a and paired.in_b and paired.label == "GPU[0].stream[7] ↔ GPU[2].stream[0]"
    # The Component tab opens on the busiest GPU stream, B's partner beside it.
    comp = views.component(a, b, ("a.sqlite", "b.sqlite"), urls.CompareState(
        a="a.sqlite", b="b.sqlite", view="component"))
    assert pairing.GPU_STREAM.match(comp.location) and comp.partner is not None
    assert comp.counts["A"] == comp.counts["B"] == 3
