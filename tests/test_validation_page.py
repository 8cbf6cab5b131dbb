"""The Validation page without a browser: a real validation directory read back, its
figure, the page and the Traces page in the server, and on the Compare page a simulated
kernel against the same kernel in an imported profile, matched by name."""
import json
import math

import pytest
import validation_runs
from profile_traces import kineto
from test_app import _render, _texts

from dashapp import urls
from dashapp.catalog import UnknownTrace
from dashapp.comparison import stats
from dashapp.comparison.measured import function_name, match_measured
from dashapp.validation.figures import sim_vs_measured
from dashapp.validation.report import ValidationReadError, read_report

ROWS = validation_runs.ROWS + (
    "k.cl,scale,2048,64,a=random:2048 b=zeros:2048 k=2,1,single,no link here\n")


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """A trace directory holding a validation ``val``, made by ``simulator validate``."""
    directory = tmp_path_factory.mktemp("validation-served")
    validation_runs.write_validation(tmp_path_factory.mktemp("validation-input"),
                                     directory / "val", ROWS)
    return directory


def test_the_report_reads_back_each_row_and_the_figures(served):
    report = read_report(served / "val")
    assert [r.line for r in report.rows] == [2, 3, 4]
    assert [r.family for r in report.rows] == ["k.cl:scale", "k.cl:scale", "single"]
    assert all(r.status == "ok" and r.trace.endswith(".sqlite") for r in report.rows)
    written = json.loads((served / "val" / "validation.json").read_text())
    assert [r.simulated_us for r in report.rows] == [r["simulated_us"] for r in written["rows"]]
    assert report.figures["spearman"] == written["agreement"]["spearman"]
    assert [(f.name, f.rows) for f in report.families] == [("k.cl:scale", 2), ("single", 1)]
    assert report.families[1].slope is None
    assert report.measurements.endswith("m.csv") and report.gpu == "r9nano"


def test_a_hostile_or_broken_report_is_read_safely(tmp_path):
    folder = tmp_path / "v"
    folder.mkdir()
    (folder / "validation.json").write_text(json.dumps({"format": 1, "rows": [
        {"measured_us": 2, "simulated_us": float("nan"), "trace": "../../etc/passwd",
         "family": 7, "line": "x"},
        {"measured_us": -1, "simulated_us": 3},
        "not a row",
        {"measured_us": 4, "simulated_us": 2, "trace": "ok.sqlite", "status": "ok"}],
        "agreement": {"wmape": "high", "families": [{"name": "f", "slope": True}]}}))
    report = read_report(folder)
    assert len(report.rows) == 2
    first, second = report.rows
    assert first.trace == "" and first.simulated_us is None and first.ratio is None
    assert first.family == "" and first.line == 0
    assert second.ratio == 0.5 and second.trace == "ok.sqlite"
    assert report.figures["wmape"] is None and report.families[0].slope is None
    (folder / "validation.json").write_text("{\"format\": 9, \"rows\": []}")
    with pytest.raises(ValidationReadError, match="not a validation report"):
        read_report(folder)
    (folder / "validation.json").write_text("{")
    with pytest.raises(ValidationReadError, match="cannot read"):
        read_report(folder)


def test_the_figure_puts_each_family_on_log_axes_around_y_equals_x(served):
    report = read_report(served / "val")
    figure = sim_vs_measured(report)
    layout = figure["layout"]
    assert layout["xaxis"]["type"] == layout["yaxis"]["type"] == "log"
    assert layout["xaxis"]["range"] == layout["yaxis"]["range"]  # y = x is the diagonal
    exact = figure["data"][0]
    assert exact["name"] == "y = x (exact)" and exact["x"] == exact["y"]
    slow, fast = figure["data"][1:3]
    assert slow["y"] == [2 * x for x in slow["x"]] and fast["y"] == [x / 2 for x in fast["x"]]
    families = {t["name"]: t for t in figure["data"][3:]}
    assert list(families) == ["k.cl:scale", "single"]
    scale = families["k.cl:scale"]
    assert scale["mode"] == "lines+markers" and families["single"]["mode"] == "markers"
    assert scale["x"] == pytest.approx([5e-6, 9e-6])  # seconds, in order of measured time
    rows = report.rows
    assert scale["y"] == pytest.approx([rows[0].simulated_us * 1e-6,
                                        rows[1].simulated_us * 1e-6])
    assert [c[0] for c in scale["customdata"]] == [f"val/{rows[0].trace}", f"val/{rows[1].trace}"]
    assert scale["customdata"][0][2] == pytest.approx(rows[0].ratio)
    # Every point lies between the ends of the y = x line.
    assert exact["x"][0] < min(scale["x"] + scale["y"]) and exact["x"][1] > max(scale["y"])


def test_a_report_without_simulated_times_has_an_empty_figure(tmp_path):
    folder = tmp_path / "v"
    folder.mkdir()
    (folder / "validation.json").write_text(json.dumps(
        {"format": 1, "rows": [{"measured_us": 3, "status": "pending"}]}))
    assert sim_vs_measured(read_report(folder))["data"] == []


@pytest.fixture(scope="module")
def app(served):
    from dashapp import app as app_module

    app = app_module._created[0] if app_module._created else app_module.create_app(
        trace_dir=served)
    app.server.config["GPUSCOPE_CATALOG"].__init__(trace_dir=served)
    return app


def _links(component):
    """Every href in a layout."""
    found = []
    href = getattr(component, "href", None)
    if href:
        found.append(href)
    children = getattr(component, "children", None)
    for child in children if isinstance(children, (list, tuple)) else [children]:
        if child is not None and not isinstance(child, (str, int, float)):
            found += _links(child)
    return found


def test_the_page_shows_the_figures_the_chart_and_each_rows_trace(app, served):
    page = _render(app, "validation", run="val")
    text = _texts(page)
    report = read_report(served / "val")
    assert "Validation val" in text and "3 rows" in text and "GPU r9nano" in text
    assert f"{report.figures['wmape']:.1%}" in text
    assert f"{report.figures['spearman']:.3f}" in text
    typical = report.figures["median_abs_log2"]
    assert f"a factor {math.pow(2, typical):.2f}" in text
    assert "k.cl:scale" in text and "no link here" in text
    links = _links(page)
    for row in report.rows:
        member = f"val/{row.trace}"
        assert urls.href("/overview", urls.OverviewState(trace=member)) in links
        assert urls.href("/kernel", urls.KernelState(trace=member)) in links
    assert "https://example.org/a" in links
    # The links open: the catalogue serves a validation's traces as DIR/FILE.
    catalog = app.server.config["GPUSCOPE_CATALOG"]
    assert catalog.path(f"val/{report.rows[0].trace}") == served / "val" / report.rows[0].trace


def test_the_page_lists_validations_and_names_an_unknown_one(app):
    assert "val" in _texts(_render(app, "validation"))
    text = _texts(_render(app, "validation", run="nope"))
    assert "no validation named 'nope'" in text
    home = _texts(_render(app, "home"))
    assert "Validations" in home and "val" in home
    catalog = app.server.config["GPUSCOPE_CATALOG"]
    for name in ("val/../val/validation.json", "val/validation.json", "nope/x.sqlite"):
        with pytest.raises(UnknownTrace):
            catalog.path(name)


@pytest.mark.parametrize("name, function", [
    ("scale", "scale"),
    ("void scale<float>(float const*, float*, float)", "scale"),
    ("ns::detail::scale(float*)", "scale"),
    ("_Z5scalePKfPff", "scale"),
    ("_ZN2ns5scaleIfEEvPKT_PS1_S1_", "scale"),
    ("void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>,"
     " at::detail::Array<char*, 1> >(int, at::native::FillFunctor<float>,"
     " at::detail::Array<char*, 1>)", "vectorized_elementwise_kernel"),
])
def test_a_profile_kernel_name_gives_its_function_name(name, function):
    assert function_name(name) == function


def test_simulated_kernels_match_measured_ones_by_name_then_function_name():
    sim = [stats.Kernel("scale", 0, 100), stats.Kernel("scale", 100, 300),
           stats.Kernel("other", 0, 10)]
    real = [stats.Kernel("void scale<float>(float*)", 0, 400),
            stats.Kernel("void scale<float>(float*)", 0, 500),
            stats.Kernel("void scale<float>(float*)", 0, 600), stats.Kernel("copy", 0, 5)]
    (found,) = match_measured(sim, real)
    assert found.name == "scale" and found.real_names == ("void scale<float>(float*)",)
    assert (found.sim_launches, found.real_launches) == (2, 3)
    assert (found.sim_ps, found.real_ps) == (150, 500)  # medians per launch
    assert found.ratio == pytest.approx(0.3)
    exact = match_measured([stats.Kernel("copy", 0, 10)], real + [stats.Kernel("x::copy", 0, 99)])
    assert exact[0].real_names == ("copy",)  # the same name first


def test_the_compare_page_holds_a_simulated_kernel_against_a_profile(app, served):
    report = read_report(served / "val")
    sim = report.rows[0]
    kineto(served / "real", [
        {"name": "void scale<float>(float const*, float*, float)", "ts": 10, "dur": 4,
         "stream": 7},
        {"name": "void scale<float>(float const*, float*, float)", "ts": 20, "dur": 6,
         "stream": 7},
        {"name": "elementwise_kernel", "ts": 30, "dur": 2, "stream": 7}])
    a, b = f"val/{sim.trace}", "real.sqlite"
    text = _texts(_render(app, "compare", a=a, b=b))
    assert "Simulated (A) against measured (B)" in text
    assert "void scale<float>(float const*, float*, float)" in text
    # One simulated launch against the median of two measured ones (4 and 6 µs).
    assert f"{sim.simulated_us / 5:.2f}×" in text
    from dashapp.pages.compare import trace_options
    with app.server.test_request_context("/"):
        assert a in [o["value"] for o in trace_options(app.server.config["GPUSCOPE_CATALOG"])]
    swapped = _texts(_render(app, "compare", a=b, b=a))
    assert "Simulated (B) against measured (A)" in swapped
    # Two simulated runs: no such table.
    assert "against measured" not in _texts(_render(app, "compare", a=a, b=a))
