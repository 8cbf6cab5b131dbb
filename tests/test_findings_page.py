"""The Findings page in the app (layout and callbacks in a request context, no browser):
what it lists, the messages it gives instead of a traceback, and the links to it."""
import importlib
import json
import shutil
import threading

import pytest
from analysis_traces import write_trace
from profile_traces import kineto
from test_analysis import LAUNCH
from test_app import _ids, _render, serving
from test_app import _texts as _spaced
from test_findings_app import SECOND

from dashapp import urls
from simulator.analysis.report import analyze
from simulator.tracing.importers import import_trace

WG_ONLY = {"start": 0, "end": 10, "groups": [{"cu": 0, "dispatch": 0, "start": 1, "end": 9}]}


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    directory = tmp_path_factory.mktemp("findings-traces")
    write_trace(directory / "known.sqlite", [LAUNCH, SECOND])
    write_trace(directory / "wg.sqlite", [WG_ONLY])
    profile = directory / "profile.json"
    profile.write_text(json.dumps({"traceEvents": [
        {"name": "k", "ph": "X", "pid": 1, "tid": 1, "ts": 0, "dur": 10}]}))
    import_trace(profile, directory / "imported.sqlite", show_progress=False)
    # a kernel [10, 20) launched at 5, a long gap, a kernel [2010, 2020) launched at 2000
    kineto(tmp_path_factory.mktemp("profile") / "p", [
        {"name": "k1", "ts": 10, "dur": 10, "stream": 7, "launch": (5, 2)},
        {"name": "k2", "ts": 2010, "dur": 10, "stream": 7, "launch": (2000, 2)}],
        [{"name": "step", "ts": 0, "dur": 2005}]).rename(directory / "profile.sqlite")
    # two profiler steps, each launching a kernel: k1 [10, 20), k2 [70, 90)
    kineto(tmp_path_factory.mktemp("ranged") / "r", [
        {"name": "k1", "ts": 10, "dur": 10, "stream": 7, "launch": (5, 2)},
        {"name": "k2", "ts": 70, "dur": 20, "stream": 7, "launch": (60, 2)}],
        [{"name": "ProfilerStep#1", "cat": "user_annotation", "ts": 0, "dur": 50},
         {"name": "ProfilerStep#2", "cat": "user_annotation", "ts": 50, "dur": 50},
         {"name": "fwd", "cat": "user_annotation", "ts": 4, "dur": 4},
         {"name": "fwd", "cat": "user_annotation", "ts": 59, "dur": 4}]).rename(
        directory / "ranged.sqlite")
    yield serving(tmp_path_factory, directory)
    shutil.rmtree(directory, ignore_errors=True)


def _texts(component):
    """The component's text, its whitespace runs as single spaces."""
    return " ".join(_spaced(component).split())


def _page(name):
    """A page module: imported once the app exists (a page registers itself)."""
    return importlib.import_module(f"dashapp.pages.{name}")


def _report(app, **query):
    search = urls.search(urls.parse_findings({k: [v] for k, v in query.items()})[0])
    with app.server.test_request_context("/"):
        return _page("findings").fill_report(search)


def _findings(component):
    return [node for node in _walk(component) if getattr(node, "className", None)
            and "fd-finding" in node.className.split()]


def _walk(node):
    if isinstance(node, (list, tuple)):
        for n in node:
            yield from _walk(n)
    elif node is not None and hasattr(node, "to_plotly_json"):
        yield node
        yield from _walk(getattr(node, "children", None))


def _hrefs(component):
    return [n.href for n in _walk(component) if getattr(n, "href", None)]


def test_the_page_lists_the_findings_ranked_with_evidence_links(app):
    page = _render(app, "findings", trace="known.sqlite")
    assert "Launches: all #0 fixture (100 ns) #1 fixture (100 ns)" in _texts(page)
    assert "Thresholds (all at their defaults)" in _texts(page)
    report = _report(app, trace="known.sqlite")
    listed = _findings(report)
    # In the report's order: the most time explained first.
    known = app.server.config["GPUSCOPE_CATALOG"].path("known.sqlite")
    assert [n.to_plotly_json()["props"]["data-rule"] for n in listed] == [
        f["rule"] for f in analyze(known)["findings"]]
    assert [n.to_plotly_json()["props"]["data-rule"] for n in listed].count("time-budget") >= 2
    text = _texts(report)
    assert "launch overhead: 0.010 µs (10.0 % of the launch)" in text
    assert "Definition: S1 launch phase; threshold: 10% of the launch." in text
    hrefs = _hrefs(report)
    assert "/component?trace=known.sqlite&loc=GPU.CommandProcessor&t0=0&t1=10000" in hrefs
    assert any(h.startswith("/component?") and "&task=" in h for h in hrefs)
    assert {c.id for c in _ids(report, "fd-budget") + _ids(report, "fd-cpi")
            + _ids(report, "fd-stalls") + _ids(report, "fd-sol")} == {
        "fd-budget", "fd-cpi", "fd-stalls", "fd-sol"}
    assert _ids(report, "fd-critical") and _ids(report, "fd-roofline")  # S9 and S8 drawn too


def test_a_threshold_in_the_url_changes_the_findings(app):
    before = _texts(_report(app, trace="known.sqlite", kernel="0"))
    after = _texts(_report(app, trace="known.sqlite", kernel="0", launch_share="0.2"))
    assert "launch overhead" in before and "launch overhead" not in after
    page = _render(app, "findings", trace="known.sqlite", launch_share="0.2")
    assert "Thresholds (1 changed: launch_share)" in _texts(page)


@pytest.mark.parametrize("query, message", [
    ({"kernel": "5"}, "Ignored kernel=5: the trace has launches 0 to 1; showing them all."),
    ({"kernel": "-3"}, "Ignored kernel=-3: must be at least 0."),
    ({"sol_bound": "NaN"}, "Ignored sol_bound='NaN': give a share between 0 and 1"),
    ({"lds_degree": "1e9999"}, "Ignored lds_degree='1e9999': not a whole number."),
])
def test_hostile_parameters_give_a_message_and_the_page(app, query, message):
    page = _render(app, "findings", trace="known.sqlite", **query)
    assert message in _texts(page)
    assert _ids(page, "fd-search")  # the report is still asked for


def test_an_imported_trace_without_gpu_work_gets_the_analysis_message(app):
    text = _texts(_report(app, trace="imported.sqlite"))
    assert "no GPU operation on a stream" in text


def test_a_profile_shows_its_devices_critical_path_and_findings(app):
    assert "Ignored kernel=0: an imported profile is explained whole" in _texts(
        _render(app, "findings", trace="profile.sqlite", kernel="0"))
    report = _report(app, trace="profile.sqlite")
    text = _texts(report)
    assert "GPU 0: 2.01 ms from its first operation to its last; compute 20 µs" in text
    assert "critical path (I10)" in text
    rules = [f.to_plotly_json()["props"]["data-rule"] for f in _findings(report)]
    assert "gaps" in rules and "critical-path" in rules
    assert [c.id for c in _walk(report) if getattr(c, "id", None) in
            ("fd-devices", "fd-profile-path")] == ["fd-devices", "fd-profile-path"]
    hrefs = _hrefs(report)
    assert "/component?trace=profile.sqlite&loc=GPU%5B0%5D.stream%5B7%5D&t0=20000000&t1=2010000000" in hrefs


def test_an_unknown_trace_gets_a_message(app):
    assert "no trace named 'nope.sqlite'" in _texts(_render(app, "findings", trace="nope.sqlite"))


def test_analyses_the_trace_cannot_support_say_what_they_need(app):
    text = _texts(_report(app, trace="wg.sqlite"))
    assert "S2 CPI stack (launch 0): needs --trace-level inst" in text
    assert "S3 stall breakdown (launch 0): needs --trace-level inst" in text


def test_the_form_writes_the_thresholds_typed_into_the_url(app):
    findings = _page("findings")
    ids = [{"type": "fd-threshold", "name": f.name} for f in findings.FORM_THRESHOLDS]
    values = [f.default for f in findings.FORM_THRESHOLDS]
    values[[f.name for f in findings.FORM_THRESHOLDS].index("sol_bound")] = 0.7
    values[[f.name for f in findings.FORM_THRESHOLDS].index("lds_degree")] = 3.0
    values[[f.name for f in findings.FORM_THRESHOLDS].index("tail_share")] = None
    with app.server.test_request_context("/"):
        go = findings.thresholds_to_url(1, [None] * len(ids), values, ids,
                                        "?trace=known.sqlite&kernel=1&tail_share=0.3")
        assert go == {"search": "?trace=known.sqlite&kernel=1&sol_bound=0.7&lds_degree=3"}
        # a value out of range is dropped as the URL would drop it
        values[0] = 7
        enter = [None] * len(ids)
        enter[0] = 1  # Enter in the first field
        assert "tail_frac" not in findings.thresholds_to_url(None, enter, values, ids,
                                                             "?trace=known.sqlite")["search"]


def test_the_traces_overview_and_kernel_pages_link_to_the_findings(app):
    home = _hrefs(_render(app, "home"))
    assert "/findings?trace=known.sqlite" in home and "/findings?trace=imported.sqlite" in home
    overview = _render(app, "overview", trace="known.sqlite")
    assert [n.href for n in _ids(overview, "ov-findings")] == ["/findings?trace=known.sqlite"]
    assert [n.href for n in _ids(_render(app, "overview", trace="imported.sqlite"),
                                  "ov-findings")] == ["/findings?trace=imported.sqlite"]
    request, _ = _resolve(app, "known.sqlite")
    with app.server.test_request_context("/"):
        link = _page("kernel")._findings_link(request, 1)
    assert link.href == "/findings?trace=known.sqlite&kernel=1"


def _resolve(app, name):
    from dashapp.pages import resolve

    with app.server.test_request_context("/"):
        return resolve(urls.KernelState(trace=name), [])


def test_the_kernel_page_marks_the_line_a_link_points_at(app):
    kernel = _page("kernel")
    state, problems = kernel.parse_kernel({"trace": ["t"], "line": ["2"]})
    assert (state.line, problems) == (2, [])
    source = kernel._source_view("a\nb\nc\n", 2)
    assert [line.className for line in source.children] == [
        "kv-line", "kv-line kv-target", "kv-line"]
    assert kernel.parse_kernel({"line": ["0"]})[1] == ["Ignored line=0: must be at least 1."]


def test_the_layout_starts_the_analysis_its_callback_collects(app, monkeypatch):
    from dashapp.findings import reports

    started, calls = threading.Event(), []

    def counting(path, kernel=None, window=None, thresholds=None):
        calls.append(kernel)
        started.set()
        return analyze(path, kernel=kernel, window=window, thresholds=thresholds)
    monkeypatch.setattr(reports, "analyze", counting)
    _render(app, "findings", trace="known.sqlite", kernel="1", sol_gap="0.27")
    assert started.wait(20)  # begun before the browser asks for the report
    report = _report(app, trace="known.sqlite", kernel="1", sol_gap="0.27")
    found = len(analyze(app.server.config["GPUSCOPE_CATALOG"].path("known.sqlite"),
                        kernel=1)["findings"])
    assert found >= 1 and f"{found} finding{'s' * (found > 1)}, most launch time explained" \
        " first" in _texts(report)
    assert calls == [1]


def test_a_window_in_the_url_cuts_the_report_to_it(app):
    known = app.server.config["GPUSCOPE_CATALOG"].path("known.sqlite")
    page = _render(app, "findings", trace="known.sqlite", t0="20000", t1="45000")
    assert "in 20 ns – 45 ns" in _texts(page)
    report = _report(app, trace="known.sqlite", t0="20000", t1="45000")
    expected = analyze(known, window=(20_000, 45_000))
    assert [n.to_plotly_json()["props"]["data-rule"] for n in _findings(report)] == [
        f["rule"] for f in expected["findings"]]
    # A window after every launch is a message, not a traceback.
    assert "overlaps no launch" in _texts(_report(app, trace="known.sqlite", t0="10000000",
                                                  t1="20000000"))


def test_a_profile_lists_its_ranges_with_links_to_their_findings(app):
    report = _report(app, trace="ranged.sqlite")
    assert "Ranges projected onto the GPU (I11): 4 ranges of 3 names" in _texts(report)
    hrefs = _hrefs(report)
    assert "/findings?trace=ranged.sqlite&step=2" in hrefs
    assert "/findings?trace=ranged.sqlite&range=fwd%230" in hrefs
    assert "needs ranges" in _texts(_report(app, trace="profile.sqlite"))
    assert "speed of light (I14): needs counters" in _texts(report)


def test_a_step_in_the_url_cuts_the_findings_to_its_gpu_work(app):
    page = _render(app, "findings", trace="ranged.sqlite", step="2")
    assert "in ProfilerStep#2 (whole profile)" in _texts(page)
    text = _texts(_report(app, trace="ranged.sqlite", step="2"))
    assert "Cut to ProfilerStep#2 on " in text and "GPU 0: 20 µs from its first operation" in text
    assert "GPU 0: 10 µs from" in _texts(_report(app, trace="ranged.sqlite", range="fwd#0"))


@pytest.mark.parametrize("query, message", [
    ({"trace": "ranged.sqlite", "range": "nope"}, "no range is called 'nope'"),
    ({"trace": "ranged.sqlite", "range": "fwd"}, "2 ranges are called 'fwd'"),
    ({"trace": "ranged.sqlite", "step": "7"}, "there is no ProfilerStep#7"),
    ({"trace": "profile.sqlite", "step": "1"}, "records no profiler step"),
    ({"trace": "ranged.sqlite", "pace": "nope"}, "no range or kernel is called 'nope'"),
    ({"trace": "ranged.sqlite"}, "pace (I12): needs iterations: three or more profiler steps")])
def test_a_range_the_profile_lacks_is_a_message(app, query, message):
    assert message in _texts(_report(app, **query))


def test_a_simulator_trace_ignores_a_range_and_both_ignore_a_window():
    state, problems = urls.parse_findings({"trace": ["t"], "range": ["a"], "step": ["1"],
                                           "t0": ["1"], "t1": ["2"]})
    assert (state.range, state.step, state.t0) == (None, 1, None)
    assert problems == ["Ignored range='a': step=1 names the window.",
                        "Ignored the time window: the step names it."]
    assert urls.parse_findings({"range": ["fwd#0"]})[0] == urls.FindingsState(range="fwd#0")


def test_a_simulator_trace_says_it_has_no_ranges(app):
    assert "Ignored range='x': a simulator trace has no ranges" in _texts(
        _render(app, "findings", trace="known.sqlite", range="x"))
