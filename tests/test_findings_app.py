"""The Findings page's parts without a server: its URL, evidence as links, the report's
charts (on a real report of a trace whose answers are known, and on hand-made S8/S9
entries), and the report cache."""
import threading
from urllib.parse import parse_qs, urlparse

import plotly.graph_objects as go
import pytest
from analysis_traces import write_trace
from test_analysis import LAUNCH

from dashapp import urls
from dashapp.catalog import trace_meta
from dashapp.findings import figures, reports
from dashapp.findings.evidence import evidence_link
from simulator.analysis.report import analyze
from simulator.analysis.thresholds import Thresholds

SECOND = {"start": 100, "end": 200, "groups": [
    {"cu": 0, "dispatch": 102, "start": 103, "end": 180},
    {"cu": 1, "dispatch": 103, "start": 104, "end": 150}]}


@pytest.fixture(scope="module")
def known(tmp_path_factory):
    """Two launches on two CUs: the first is test_analysis's known launch (with a
    wavefront and its instructions), the second work-groups only."""
    return write_trace(tmp_path_factory.mktemp("findings") / "known.sqlite", [LAUNCH, SECOND])


@pytest.fixture(scope="module")
def report(known):
    return analyze(known)


def _params(search):
    return parse_qs(search.lstrip("?"), keep_blank_values=True)


# -- the URL ---------------------------------------------------------------------------------
def test_the_findings_state_round_trips_and_leaves_defaults_out():
    state = urls.FindingsState(trace="a.sqlite", kernel=2, sol_bound=0.9, lds_degree=3)
    search = urls.search(state)
    assert search == "?trace=a.sqlite&kernel=2&sol_bound=0.9&lds_degree=3"
    assert urls.parse_findings(_params(search)) == (state, [])
    assert urls.search(urls.FindingsState(trace="a.sqlite", sol_bound=0.8)) == "?trace=a.sqlite"
    assert urls.thresholds_of(state) == Thresholds(sol_bound=0.9, lds_degree=3)


@pytest.mark.parametrize("params, fragment", [
    ({"kernel": ["-1"]}, "kernel=-1: must be at least 0"),
    ({"kernel": ["two"]}, "kernel='two': not a whole number"),
    ({"kernel": ["9" * 30]}, "too large"),
    ({"sol_bound": ["nan"]}, "sol_bound='nan': give a share between 0 and 1"),
    ({"sol_bound": ["inf"]}, "sol_bound='inf'"),
    ({"sol_bound": ["0"]}, "sol_bound='0'"),
    ({"tail_frac": ["1.5"]}, "tail_frac='1.5'"),
    ({"tail_frac": ["-0.2"]}, "tail_frac='-0.2'"),
    ({"not_issued": ["0.3; DROP TABLE task"]}, "not_issued='0.3; DROP TABLE task'"),
    ({"idle_share": ["1e999"]}, "idle_share='1e999'"),
    ({"idle_share": ["9" * 5000]}, "idle_share='9999999999"),
    ({"lds_degree": ["0"]}, "lds_degree=0: must be at least 1"),
    ({"lds_degree": ["2.5"]}, "lds_degree='2.5': not a whole number"),
])
def test_hostile_findings_parameters_give_a_message_and_the_default(params, fragment):
    state, messages = urls.parse_findings({"trace": ["t.sqlite"], **params})
    assert len(messages) == 1 and fragment in messages[0]
    assert len(messages[0]) < 200  # a huge value is not echoed whole
    assert urls.thresholds_of(state) == Thresholds() and state.kernel is None


def test_a_repeated_parameter_takes_the_first_and_a_blank_one_is_absent():
    state, messages = urls.parse_findings({"sol_gap": ["0.2", "0.9"], "kernel": [""]})
    assert (state.sol_gap, state.kernel, messages) == (0.2, None, [])


# -- evidence as links -----------------------------------------------------------------------
def _query(href):
    parts = urlparse(href)
    return parts.path, {k: v[0] for k, v in parse_qs(parts.query).items()}


def test_overview_evidence_opens_the_overview_filtered_on_the_window():
    label, href = evidence_link("t.sqlite", {"view": "overview", "filter": r"CU\[\d+\]$",
                                             "t0": 1600000, "t1": 3648000}, lambda p: None)
    assert _query(href) == ("/overview", {"trace": "t.sqlite", "filter": r"CU\[\d+\]$",
                                          "t0": "1600000", "t1": "3648000"})
    assert label == r"Overview of /CU\[\d+\]$/ over 1.600 µs – 3.648 µs"


def test_component_and_task_evidence_open_the_component_view():
    _, href = evidence_link("t.sqlite", {"view": "component", "loc": "GPU.CommandProcessor",
                                         "t0": 0, "t1": 10000}, lambda p: None)
    assert _query(href) == ("/component", {"trace": "t.sqlite", "loc": "GPU.CommandProcessor",
                                           "t0": "0", "t1": "10000"})
    label, href = evidence_link("t.sqlite", {"view": "task", "loc": "GPU.SA[0].CU[1]",
                                             "task": 16, "t0": 90000, "t1": 100000},
                                lambda p: None)
    assert _query(href) == ("/component", {"trace": "t.sqlite", "loc": "GPU.SA[0].CU[1]",
                                           "task": "16", "t0": "90000", "t1": "100000"})
    assert label == "Task view of task 16 at GPU.SA[0].CU[1]"
    # the state the Component page parses back is the one the analysis named
    state, problems = urls.parse_component(_params(urlparse(href).query))
    assert (state.loc, state.task, state.t0, state.t1, problems) == (
        "GPU.SA[0].CU[1]", 16, 90000, 100000, [])


def test_an_empty_window_is_left_out_rather_than_refused_by_the_page():
    _, href = evidence_link("t.sqlite", {"view": "component", "loc": "X", "t0": 5, "t1": 5},
                            lambda p: None)
    assert _query(href) == ("/component", {"trace": "t.sqlite", "loc": "X"})


def test_kernel_evidence_opens_the_kernel_page_at_the_line():
    label, href = evidence_link("t.sqlite", {"view": "kernel", "launch": 3, "line": 15},
                                lambda p: None)
    assert _query(href) == ("/kernel", {"trace": "t.sqlite", "launch": "3", "line": "15"})
    assert label == "kernel page of launch 3, line 15"
    _, href = evidence_link("t.sqlite", {"view": "kernel", "launch": 0, "line": None},
                            lambda p: None)
    assert _query(href) == ("/kernel", {"trace": "t.sqlite"})


def test_compare_evidence_links_two_served_runs_and_names_an_unserved_one():
    served = {"/d/a.sqlite": "a.sqlite", "/d/b.sqlite": "b.sqlite"}.get
    item = {"view": "compare", "a": "/d/a.sqlite", "b": "/d/b.sqlite"}
    label, href = evidence_link("a.sqlite", item, served)
    assert _query(href) == ("/compare", {"a": "a.sqlite", "b": "b.sqlite"})
    label, href = evidence_link("a.sqlite", {**item, "b": "/elsewhere/x.sqlite"}, served)
    assert href is None and label == "compare a.sqlite with /elsewhere/x.sqlite"


def test_a_view_the_app_does_not_have_is_named_without_a_link():
    label, href = evidence_link("t.sqlite", {"view": "timeline"}, lambda p: None)
    assert href is None and "timeline" in label


def test_every_evidence_of_a_real_report_has_a_link(report):
    items = [e for f in report["findings"] for e in f["evidence"]]
    assert {e["view"] for e in items} >= {"overview", "component", "task"}
    assert all(evidence_link("known.sqlite", e, lambda p: None)[1] for e in items)


# -- the charts ------------------------------------------------------------------------------
def _stack_totals(fig):
    """The height of each bar of a stacked bar chart, in µs."""
    totals = {}
    for trace in fig.data:
        for x, y in zip(trace.x, trace.y):
            totals[x] = totals.get(x, 0) + y
    return totals


def test_the_time_budget_stacks_each_launch_to_its_time(report):
    fig = figures.budget_figure(report["kernels"])
    go.Figure(fig)
    assert [t.name for t in fig.data] == ["launch", "ramp", "steady", "tail"]
    assert _stack_totals(fig) == pytest.approx({"#0 fixture": 0.1, "#1 fixture": 0.1})
    assert fig.layout.barmode == "stack"
    assert fig.data[0].y[0] == pytest.approx(0.010)  # the 10-cycle launch overhead


def test_the_cpi_stack_is_divided_by_the_cus_and_says_so(report):
    fig = figures.cpi_figure(report["kernels"])
    assert fig.layout.yaxis.title.text == "CU time ÷ 2 CUs (µs)"
    totals = _stack_totals(fig)
    assert totals["#0 fixture"] == pytest.approx(0.1)  # (2 CUs × 100 cycles) ÷ 2
    valu = next(t for t in fig.data if t.name == "VALU")
    assert valu.y[0] == pytest.approx(0.004 / 2)  # VALU [12, 16) on one CU of two


def test_the_stall_breakdown_is_scaled_to_the_launch(report):
    fig = figures.stall_figure(report["kernels"])
    totals = _stack_totals(fig)
    assert totals["#0 fixture"] == pytest.approx(0.1)
    # the wavefront [11, 50): LDS [14, 30) after VALU [12, 16) is 14 of its 39 cycles
    lds = next(t for t in fig.data if t.name == "LDS")
    assert lds.y[0] == pytest.approx(0.1 * 14 / 39)


def test_charts_of_unavailable_or_unbuilt_analyses_are_none():
    entry = {"launch": 0, "name": "k", "time_ps": 10, "budget": {"unavailable": "needs wg"},
             "cpi_stack": {"unavailable": "needs inst"}, "stalls": None, "sol": None,
             "roofline": None, "critical_path": None}
    for make in (figures.budget_figure, figures.cpi_figure, figures.stall_figure,
                 figures.sol_figure, figures.roofline_figure, figures.critical_path_figure):
        assert make([entry]) is None


def test_speed_of_light_draws_each_unit_against_the_thresholds(report):
    fig = figures.sol_figure(report["kernels"])
    go.Figure(fig)
    first = next(t for t in fig.data if t.name.startswith("#0"))
    sol = report["kernels"][0]["sol"]["units"]
    assert list(first.y) == [u for u in reversed(figures.SOL_UNITS) if u in sol]
    assert list(first.x) == pytest.approx([100 * sol[u]["sol"] for u in first.y])
    assert first.orientation == "h"
    lines = sorted(s.x0 for s in fig.layout.shapes)
    assert lines == [60, 80]
    assert fig.layout.xaxis.ticksuffix == " %"


def test_speed_of_light_of_one_launch_names_its_verdict_in_the_title(report):
    fig = figures.sol_figure(report["kernels"][:1])
    kind = report["kernels"][0]["sol"]["classification"]["kind"]
    assert fig.layout.title.text == f"S7 speed of light of #0 fixture: {kind}"


def test_speed_of_light_keeps_the_longest_launches():
    units = {"VALU": {"sol": 0.5, "busiest": "x", "busiest_sol": 0.6}}
    sol = {"units": units, "thresholds": {"latency": 0.6, "bound": 0.8},
           "classification": {"kind": "balanced", "unit": None}}
    kernels = [{"launch": i, "name": "k", "time_ps": 100 + (i % 3), "sol": sol} for i in range(9)]
    fig = figures.sol_figure(kernels)
    assert len(fig.data) == figures.SOL_LAUNCHES
    assert sorted(t.name.split(":")[0] for t in fig.data) == [
        "#1 k", "#2 k", "#4 k", "#5 k", "#7 k", "#8 k"]
    assert "the 6 longest of 9 launches" in fig.layout.title.text


CRITICAL = {"total_ps": 1_000_000, "by_class": {"compute": 600_000, "memory-service": 300_000,
                                                "launch": 100_000},
            "by_component": [{"loc": "GPU.SA[0].CU[0].SIMD[0]", "ps": 600_000}]}


def test_the_critical_path_stacks_its_classes_to_the_launch():
    kernels = [{"launch": 0, "name": "k", "time_ps": 1_000_000, "critical_path": CRITICAL},
               {"launch": 1, "name": "k", "time_ps": 5, "critical_path": None}]
    fig = figures.critical_path_figure(kernels)
    go.Figure(fig)
    assert [t.name for t in fig.data] == ["compute", "memory-service", "launch"]
    assert _stack_totals(fig) == pytest.approx({"#0 k": 1.0})
    assert "30.0 % of the path" in fig.data[1].hovertext[0]


def _roofline(perf, limiter):
    # bandwidths 1000 (L2) and 100 (DRAM) per s, peak 10,000: AI 2 → L2 roof 2000, DRAM 200
    return {"points": [{"level": "L2", "ai": 2.0, "attainable": 2000.0},
                       {"level": "DRAM", "ai": 4.0, "attainable": 400.0}],
            "perf": perf, "peak_compute": 10_000.0, "limiter": limiter, "roof_share": 0.5}


def test_the_roofline_is_log_log_with_a_point_per_launch_and_a_ceiling_per_level():
    kernels = [{"launch": 0, "name": "a", "time_ps": 1, "roofline": _roofline(200.0, "DRAM")},
               {"launch": 1, "name": "b", "time_ps": 1, "roofline": _roofline(900.0, "L2")}]
    fig = figures.roofline_figure(kernels)
    go.Figure(fig)
    assert fig.layout.xaxis.type == "log" and fig.layout.yaxis.type == "log"
    by_name = {t.name: t for t in fig.data}
    assert list(by_name["compute peak"].y) == [10_000.0, 10_000.0]
    l2, dram = by_name["L2 bandwidth"], by_name["DRAM bandwidth"]
    # each ceiling rises with slope 1 (bandwidth = attainable ÷ AI) to the compute peak
    assert l2.y[0] / l2.x[0] == pytest.approx(1000) and dram.y[0] / dram.x[0] == pytest.approx(100)
    assert (l2.x[1], l2.y[1]) == pytest.approx((10.0, 10_000.0))
    assert (dram.x[1], dram.y[1]) == pytest.approx((100.0, 10_000.0))
    # a launch's point: its performance at the intensity of its limiting level
    assert (by_name["#0 a"].x[0], by_name["#0 a"].y[0]) == (4.0, 200.0)
    assert (by_name["#1 b"].x[0], by_name["#1 b"].y[0]) == (2.0, 900.0)


def test_a_level_at_the_compute_peak_draws_no_ceiling_it_cannot_know():
    entry = _roofline(200.0, "DRAM")
    entry["points"][0]["attainable"] = entry["peak_compute"]  # L2's roof is the peak here
    fig = figures.roofline_figure([{"launch": 0, "name": "a", "time_ps": 1, "roofline": entry}])
    assert [t.name for t in fig.data] == ["compute peak", "DRAM bandwidth", "#0 a"]


# -- the report, cached ----------------------------------------------------------------------
def test_a_report_is_made_once_per_version_launch_and_thresholds(known, monkeypatch):
    calls = []

    def counting(path, kernel=None, window=None, thresholds=None):
        calls.append((kernel, thresholds))
        return analyze(path, kernel=kernel, window=window, thresholds=thresholds)
    monkeypatch.setattr(reports, "analyze", counting)
    meta = trace_meta(known)
    first = reports.report(meta, 0, Thresholds(tail_share=0.11))
    assert reports.report(meta, 0, Thresholds(tail_share=0.11)) is first
    reports.report(meta, 0, Thresholds(tail_share=0.12))
    reports.report(meta, 1, Thresholds(tail_share=0.11))
    reports.report(meta, 0, Thresholds(tail_share=0.11), (20_000, 45_000))  # a window: another
    assert len(calls) == 4


def test_requests_for_a_report_being_made_wait_for_that_one(known, monkeypatch):
    started, release, calls = threading.Event(), threading.Event(), []

    def slow(path, kernel=None, window=None, thresholds=None):
        calls.append(kernel)
        started.set()
        release.wait(10)
        return {"kernels": [], "findings": []}
    monkeypatch.setattr(reports, "analyze", slow)
    meta = trace_meta(known)
    got = []
    threads = [threading.Thread(target=lambda: got.append(
        reports.report(meta, 1, Thresholds(sol_gap=0.33)))) for _ in range(3)]
    threads[0].start()
    assert started.wait(10)
    for t in threads[1:]:
        t.start()
    release.set()
    for t in threads:
        t.join(10)
    assert calls == [1] and len(got) == 3 and got[0] is got[1] is got[2]


def test_a_failed_analysis_is_not_kept(known, monkeypatch):
    def failing(path, kernel=None, window=None, thresholds=None):
        raise reports.AnalysisError("broken")
    monkeypatch.setattr(reports, "analyze", failing)
    with pytest.raises(reports.AnalysisError):
        reports.report(trace_meta(known), 0, Thresholds(sol_gap=0.44))
    monkeypatch.setattr(reports, "analyze", analyze)
    assert reports.report(trace_meta(known), 0, Thresholds(sol_gap=0.44))["kernels"]


def test_the_launches_are_the_analysis_ones(known):
    launches = reports.launches(trace_meta(known))
    assert [(k.index, k.start_ps, k.end_ps) for k in launches] == [
        (0, 0, 100_000), (1, 100_000, 200_000)]
