"""The app without a browser: URL state, the regex filter, and every page's layout
built inside a request of the real Flask server (bad parameters give messages)."""
import json
import re
import shutil
import time
from urllib.parse import parse_qs

import dash
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_app_traces import write_exact_trace, write_synthetic_trace

from dashapp import urls
from dashapp.daisen.namefilter import FilterError, filter_names


# -- URL state ---------------------------------------------------------------------------
def _params(search):
    return {k: v[0] for k, v in parse_qs(search.lstrip("?"), keep_blank_values=True).items()}


overview_states = st.builds(
    urls.OverviewState, trace=st.sampled_from([None, "a.sqlite", "b c.sqlite"]),
    page=st.integers(1, 50), filter=st.text(max_size=30),
    primary=st.sampled_from(["concurrency", "latency", "busy", "none"]),
    secondary=st.sampled_from(["arrival", "buffer", "none"]), sort=st.sampled_from(urls.SORTS),
    t0=st.none(), t1=st.none())


@settings(max_examples=150, deadline=None)
@given(overview_states, st.one_of(st.none(), st.tuples(st.integers(0, 10**15),
                                                       st.integers(1, 10**9))))
def test_overview_state_round_trips_through_the_url(state, window):
    if window is not None:
        state = urls.OverviewState(**{**state.__dict__, "t0": window[0],
                                      "t1": window[0] + window[1]})
    parsed, errors = urls.parse_overview(_params(urls.search(state)))
    assert errors == [] and parsed == state


def test_component_state_round_trips():
    state = urls.ComponentState(trace="t.sqlite", loc="GPU.SA[3].CU[12]", t0=5, t1=9, task=42)
    assert urls.parse_component(_params(urls.search(state))) == (state, [])


def test_defaults_are_left_out_of_the_url():
    assert urls.search(urls.OverviewState()) == ""
    assert urls.search(urls.OverviewState(page=2)) == "?page=2"


@pytest.mark.parametrize("params, fragment", [
    ({"page": "x"}, "page='x'"), ({"page": "0"}, "at least 1"),
    ({"t0": "5"}, "needs both"), ({"t0": "9", "t1": "3"}, "not after"),
    ({"primary": "bogus"}, "Unknown metric"), ({"sort": "size"}, "Unknown sort"),
])
def test_bad_overview_parameters_give_messages_and_defaults(params, fragment):
    state, errors = urls.parse_overview(params)
    assert len(errors) == 1 and fragment in errors[0]
    assert state.page == 1 and state.t0 is None and state.primary == "concurrency"


@pytest.mark.parametrize("relayout, window", [
    ({"xaxis.range[0]": 1e-9, "xaxis.range[1]": 2e-9}, (1000, 2000)),
    ({"xaxis2.range": [3e-9, 1e-9]}, (1000, 3000)),
    ({"xaxis.autorange": True}, "reset"),
    ({"autosize": True}, None), (None, None), ({"xaxis.range[0]": "x"}, None),
    ({"xaxis.range": [float("nan"), 1e-9]}, None), ({"xaxis.range": [0, float("inf")]}, None),
    ({"xaxis.range": [0, 1e30]}, (0, urls.MAX_INT)),
])
def test_zoom_events_become_windows(relayout, window):
    assert urls.window_from_relayout(relayout) == window


# -- the filter --------------------------------------------------------------------------
NAMES = [f"GPU.SA[{i // 4}].CU[{i}]" for i in range(8)] + [f"GPU.L2[{i}]" for i in range(3)]


def test_filter_is_a_regex_substring_search():
    assert filter_names("L2", NAMES) == ["GPU.L2[0]", "GPU.L2[1]", "GPU.L2[2]"]
    assert len(filter_names("(CU|L2)", NAMES)) == 11
    assert filter_names(r"CU\[1\]$", NAMES) == ["GPU.SA[0].CU[1]"]


def test_an_invalid_pattern_is_a_message():
    with pytest.raises(FilterError, match="Invalid regular expression"):
        filter_names("(CU", NAMES)


def test_a_catastrophic_pattern_answers_in_linear_time():
    # (a|aa)+$ backtracks 2**64 ways on a backtracking engine; RE2 does not backtrack.
    names = ["a" * 64 + "!"] * 50 + ["a" * 64]
    started = time.monotonic()
    assert filter_names("(a|aa)+$", names) == ["a" * 64]
    assert time.monotonic() - started < 5


def test_huge_counted_repeats_are_refused_before_compiling():
    for pattern in ("(?:(?:a{1000}){1000}){1000}", "(?:b{1000}){1000}", "a{1001}"):
        with pytest.raises(FilterError, match="repetition size"):
            filter_names(pattern, NAMES)
    # A count too large to be one is read as literal text (as Perl does): harmless.
    assert filter_names("(?:a{4294967294}){4294967294}", NAMES) == []
    assert filter_names(r"CU\[\d{1,2}\]", NAMES) == [n for n in NAMES if "CU" in n]


def test_a_pattern_over_the_memory_budget_is_refused():
    with pytest.raises(FilterError, match="too large"):
        filter_names(r"[\pL\pN]{999}", NAMES)


def test_a_lone_surrogate_is_a_message():
    with pytest.raises(FilterError, match="Unicode"):
        filter_names("CU\ud800", NAMES)


# -- pages inside the real server ----------------------------------------------------------
def serving(tmp_path_factory, directory):
    """The process's Dash app (one per process: made on first use), serving the traces
    in ``directory``."""
    from dashapp import app as app_module

    if app_module._created:
        app = app_module._created[0]
    else:
        app = app_module.create_app(trace_dir=tmp_path_factory.mktemp("served"))
    app.server.config["GPUSCOPE_CATALOG"].__init__(trace_dir=directory)
    return app


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    directory = tmp_path_factory.mktemp("traces")
    write_exact_trace(directory / "exact.sqlite")
    write_synthetic_trace(directory / "synthetic.sqlite", tasks=3000)
    yield serving(tmp_path_factory, directory)
    shutil.rmtree(directory, ignore_errors=True)


def _render(app, page_module, **query):
    import importlib

    module = importlib.import_module(f"dashapp.pages.{page_module}")
    with app.server.test_request_context("/"):
        return module.layout(**query)


def _texts(component):
    out = []

    def walk(node):
        if isinstance(node, str):
            out.append(node)
        elif isinstance(node, (list, tuple)):
            for n in node:
                walk(n)
        elif node is not None and hasattr(node, "children"):
            walk(node.children)
    walk(component)
    return " ".join(out)


def _ids(component, prefix):
    found = []

    def walk(node):
        if isinstance(node, (list, tuple)):
            for n in node:
                walk(n)
        elif node is not None and hasattr(node, "to_plotly_json"):
            ident = getattr(node, "id", None)
            if ident == prefix or isinstance(ident, dict) and ident.get("type") == prefix:
                found.append(node)
            walk(getattr(node, "children", None))
    walk(component)
    return found


def test_home_lists_traces_with_run_facts(app):
    text = _texts(_render(app, "home"))
    assert "exact.sqlite" in text and "synthetic.sqlite" in text
    assert "Busiest components" in text and "Instruction mix" in text and "VALU" in text


def test_overview_filter_shows_exactly_the_matching_components(app):
    page = _render(app, "overview", trace="synthetic.sqlite", filter="L2", sort="name")
    (graph,) = _ids(page, "ov-graph")  # the charts are subplots of one figure
    (grid,) = _ids(page, "ov-grid")
    names = [chart[0] for chart in json.loads(grid.to_plotly_json()["props"]["data-charts"])]
    assert names == [f"GPU.L2[{i}]" for i in range(16)]
    x_axes = [k for k in graph.figure["layout"] if k.startswith("xaxis")]
    assert len(x_axes) == 16 and {t["xaxis"] for t in graph.figure["data"]} == {
        "x"} | {f"x{n}" for n in range(2, 17)}
    assert "16 of" in _texts(page)


def test_overview_bad_parameters_give_friendly_messages(app):
    text = _texts(_render(app, "overview", trace="synthetic.sqlite", filter="(L2",
                          page="99", t0="abc"))
    assert "Invalid regular expression" in text and "no page 99" in text
    assert "not a whole number" in text
    assert "no trace named" in _texts(_render(app, "overview", trace="../../etc/passwd"))


def test_component_page_and_its_messages(app):
    ok = _render(app, "component", trace="exact.sqlite", loc="GPU.L2[0]", task="2")
    assert "Current task" in _texts(ok) and "GPU.L2[0]" in _texts(ok)
    assert "no component named" in _texts(_render(app, "component", trace="exact.sqlite",
                                                  loc="GPU.Nope[1]"))
    stale = _texts(_render(app, "component", trace="exact.sqlite", loc="GPU.L2[0]",
                           task="12345"))
    assert "no task 12345" in stale


def test_component_page_follows_a_task_and_flags_idle_windows(app):
    by_task = _texts(_render(app, "component", trace="exact.sqlite", task="3"))
    assert "GPU.L2[0]" in by_task and "cache_transaction" in by_task
    idle = _texts(_render(app, "component", trace="exact.sqlite", loc="GPU.L2[0]",
                          t0="90000", t1="95000"))
    assert "idle in this window" in idle


def test_the_assets_folder_is_served(app):
    client = app.server.test_client()
    assert b"gs-legend-item" in client.get("/assets/gpuscope.css").data
    assert b"highlightKind" in client.get("/assets/gpuscope.js").data
    page = client.get("/overview").data
    assert b"gpuscope.css" in page and b"bootstrap" in page


def test_assets_are_kept_by_the_browser_since_their_urls_change_with_them(app):
    """A page load asks for no asset again (each was a round trip before its scripts could
    run): the page names every asset with its modification time."""
    import re

    client = app.server.test_client()
    for path in ("/overview?trace=exact.sqlite", "/kernel?trace=exact.sqlite"):
        urls = re.findall(rb'(?:src|href)="(/assets/[^"]*)"', client.get(path).data)
        assert len(urls) >= 5, path
        for url in urls:
            assert re.search(rb"\?m=[0-9.]+$", url), url
            response = client.get(url.decode())
            assert response.status_code == 200
            assert response.cache_control.max_age >= 365 * 24 * 3600, url


def test_pages_load_the_cartesian_plotly_bundle_but_the_kernel_page_the_full_one(app):
    from plotly.offline import get_plotlyjs_version

    from dashapp import plotly_bundle
    from dashapp.app import ASSETS

    assert plotly_bundle.vendored_version(ASSETS) == get_plotlyjs_version(), (
        f"assets/{plotly_bundle.FILE} is not the plotly.js release the installed plotly "
        "ships: replace it with that release's cartesian bundle (npm "
        "plotly.js-cartesian-dist-min)")
    client = app.server.test_client()
    tag = b'<script id="gs-plotly-cartesian" src="/assets/plotly-cartesian.min.js?m='
    for path in ("/", "/overview?trace=exact.sqlite", "/component", "/compare"):
        page = client.get(path).data
        # Before Dash's own scripts, so graphs find it defined and fetch nothing.
        assert tag in page and page.index(tag) < page.index(b"dash_renderer"), path
    assert b"plotly-cartesian" not in client.get("/kernel?trace=exact.sqlite").data
    assert b"plotly-cartesian" not in client.get("/kernel/").data
    bundle = client.get("/assets/plotly-cartesian.min.js")
    assert bundle.status_code == 200 and b"cartesian" in bundle.data[:200]


def test_pages_load_behind_a_proxy_that_strips_the_requests_prefix(tmp_path):
    """DASH_REQUESTS_PATHNAME_PREFIX set and the proxy stripping it: the routes stay /,
    the page's own URLs carry the prefix (every page was a 400)."""
    import subprocess
    import sys
    from pathlib import Path

    write_exact_trace(tmp_path / "exact.sqlite")
    code = ("import dashapp.app as a; c = a.create_app(trace_dir=__import__('sys').argv[1])"
            ".server.test_client()\n"
            "for p in ('/', '/overview?trace=exact.sqlite', '/kernel'):\n"
            "    r = c.get(p); print(p, r.status_code, b'/gpuscope/assets/plotly-cartesian' in r.data)")
    env = {"DASH_REQUESTS_PATHNAME_PREFIX": "/gpuscope/", "PATH": "/usr/bin:/bin",
           "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path)], env=env,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split("\n")[:3] == ["/ 200 True", "/overview?trace=exact.sqlite 200 True",
                                          "/kernel 200 False"]


def test_a_bundle_of_another_plotly_release_is_not_used(tmp_path, monkeypatch):
    from dashapp import plotly_bundle

    monkeypatch.setattr(plotly_bundle, "get_plotlyjs_version", lambda: "4.1.1")
    (tmp_path / plotly_bundle.FILE).write_bytes(b"/**\n* plotly.js (cartesian - minified) v4.0.9\n")
    assert plotly_bundle.script_tag(tmp_path, "/assets/x.js", "overview") == ""
    other = tmp_path / "same"
    other.mkdir()
    (other / plotly_bundle.FILE).write_bytes(b"/**\n* plotly.js (cartesian - minified) v4.1.1\n")
    assert plotly_bundle.script_tag(other, "/assets/x.js", "overview").startswith(
        '<script id="gs-plotly-cartesian" src="/assets/x.js?m=')
    assert plotly_bundle.script_tag(other, "/assets/x.js", "kernel") == ""
    assert plotly_bundle.script_tag(tmp_path / "missing", "/assets/x.js", "overview") == ""


def test_gunicorn_entry_point_builds_the_app_from_the_environment(tmp_path):
    import subprocess
    import sys
    from pathlib import Path

    write_exact_trace(tmp_path / "exact.sqlite")
    code = ("import dashapp.app as a, flask; s = a.server; assert isinstance(s, flask.Flask);"
            "c = s.config['GPUSCOPE_CATALOG']; print(c.names())")
    env = {"GPUSCOPE_TRACE_DIR": str(tmp_path), "PATH": "/usr/bin:/bin",
           "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "['exact.sqlite']"


def test_csv_downloads_name_the_view_and_hold_its_data(app):
    import importlib

    overview = importlib.import_module("dashapp.pages.overview")
    component = importlib.import_module("dashapp.pages.component")
    with app.server.test_request_context("/"):
        ov, ov_message = overview.download_csv(1, "?trace=synthetic.sqlite&filter=L2%5C%5B1")
        cv, cv_message = component.download_csv(1, "?trace=exact.sqlite&loc=GPU.L2%5B0%5D")
    assert ov_message == cv_message == ""
    # The filter and the window are in the name (issue 13): exports of two views differ.
    assert re.fullmatch(r"synthetic\.sqlite-overview-L2_1-0-\d+-page1\.csv", ov["filename"])
    with app.server.test_request_context("/"):
        zoomed, _message = overview.download_csv(
            1, "?trace=synthetic.sqlite&filter=L2%5C%5B1&t0=5&t1=90")
    assert zoomed["filename"] == "synthetic.sqlite-overview-L2_1-5-90-page1.csv"
    assert {line.split(",")[0] for line in ov["content"].splitlines()[1:]} == {
        "GPU.L2[1]", "GPU.L2[10]", "GPU.L2[11]", "GPU.L2[12]", "GPU.L2[13]", "GPU.L2[14]",
        "GPU.L2[15]"}
    assert cv["filename"].startswith("exact.sqlite-GPU.L2_0_-") and cv["filename"].endswith(".csv")
    assert len(cv["content"].splitlines()) == 1 + 3  # header + the three tasks at GPU.L2[0]


def test_the_finder_offers_the_components_whose_names_contain_what_was_typed(app):
    import importlib

    overview = importlib.import_module("dashapp.pages.overview")
    with app.server.test_request_context("/"):
        found = overview.finder_options("l2[1", "?trace=synthetic.sqlite")
        nothing = overview.finder_options("no such part", "?trace=synthetic.sqlite")
        untyped = overview.finder_options("  ", "?trace=synthetic.sqlite")
        gone = overview.finder_options("L2", "?trace=missing.sqlite")
    assert found == ["GPU.L2[1]", "GPU.L2[10]", "GPU.L2[11]", "GPU.L2[12]", "GPU.L2[13]",
                     "GPU.L2[14]", "GPU.L2[15]"]  # any case, in name order
    assert nothing == [] and gone == []
    assert untyped is dash.no_update


def test_awkward_traces_render_without_errors(tmp_path):
    """Zero-length tasks, a task still open at the stop, an unrecorded parent and
    details that are not JSON all reach the views intact."""
    from dashapp.daisen import views
    from simulator.tracing.api import Tracer
    from simulator.tracing.writer import TraceWriter

    path = tmp_path / "awkward.sqlite"
    writer = TraceWriter(path, command="awkward")
    tr = Tracer(writer)
    loc, kind = tr.location("GPU.L2[0]"), tr.kind("req_in", "ReadReq")
    tr.end_task(tr.start_task(-1, kind, loc, 5), 5)  # zero length
    tr.end_task(tr.start_task(12345, kind, loc, 6, details="plain text"), 9)  # lost parent
    tr.start_task(-1, tr.kind("wavefront", "wavefront"), loc, 7)  # never ended
    open_tasks = tr.close(20)
    writer.finalize(completed=False, open_tasks=open_tasks)
    writer.close()
    page = views.component(path, urls.ComponentState(trace="awkward.sqlite", loc="GPU.L2[0]"))
    assert page.mode == "bars" and {t.id for t in page.tasks} == {0, 1, 2}
    page = views.component(path, urls.ComponentState(trace="awkward.sqlite", loc="GPU.L2[0]",
                                                     task=2))
    assert page.current.flags & 1 and page.current.end_ps == 20
    overview = views.overview(path, urls.OverviewState(trace="awkward.sqlite"))
    assert [c.location.name for c in overview.charts] == ["GPU.L2[0]"]
    assert views.summary(path).category_time


def test_a_click_on_a_bar_follows_its_task_and_keeps_the_window():
    state = urls.ComponentState(trace="t.sqlite", loc="GPU.CU[0]", task=3)
    bar = {"points": [{"customdata": [42, 0, 0, 0, "GPU.L2[1]", 0, 0, 0, 0, 0, 100, 200]}]}
    new = urls.component_after_click(state, bar, shown_window="1000,5000")
    assert (new.task, new.loc, new.t0, new.t1) == (42, "GPU.L2[1]", 1000, 5000)
    merged = {"points": [{"customdata": [-1, 0, 0, 0, "GPU.L2[1]", 0, 0, 0, 0, 0, 100, 200]}]}
    zoomed = urls.component_after_click(state, merged)
    assert (zoomed.task, zoomed.t0, zoomed.t1) == (3, 90, 210)
    assert urls.component_after_click(state, {"points": [{"z": 3}]}) is None
    assert urls.component_after_click(state, None) is None


def test_a_zoom_sets_the_window_and_a_double_click_clears_it():
    state = urls.ComponentState(trace="t.sqlite", loc="GPU.CU[0]", t0=5, t1=9)
    assert urls.component_after_zoom(state, {"xaxis.autorange": True}).t0 is None
    assert urls.component_after_zoom(state, {"autosize": True}) is None
