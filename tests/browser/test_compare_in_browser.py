"""The Compare and Sweep pages in headless Chromium, against the real server: two
fixture runs with known differences and a real sweep made by ``simulator sweep``."""
from urllib.parse import urlparse

import driving as drive
import pytest
from compare_traces import write_run
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from simulator.__main__ import main as simulator

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def compare_url(tmp_path_factory, serve_traces):
    directory = tmp_path_factory.mktemp("compare-browser")
    write_run(directory / "a.sqlite", "A")
    write_run(directory / "b.sqlite", "B")
    code = simulator(["sweep", "vectoradd", "--size", "2048", "--no-progress", "--workers", "2",
                      "--vary", "cp.wg_dispatch_per_cycle=1,2", "--vary", "local=64,128",
                      "-o", str(directory / "grid")])
    assert code == 0
    return serve_traces(directory)


def _plots(browser, selector):
    """(trace count, trace types, x range) of every drawn Plotly chart under ``selector``."""
    return browser.execute_script(
        "return Array.from(document.querySelectorAll(arguments[0] + ' .js-plotly-plot'))"
        ".filter(gd => gd.data && gd.layout)"
        ".map(gd => [gd.data.length, gd.data.map(t => t.type), gd.layout.xaxis.range]);",
        selector)


def test_compare_summary_overview_and_component_views(browser, compare_url):
    browser.get(f"{compare_url}/compare?a=a.sqlite&b=b.sqlite")
    drive.wait(browser, lambda d: "B is 1.25× faster" in drive.text(d, "cmp-speedup"),
               "the speed-up is not shown")
    kernels = drive.text(browser, "cmp-kernels")
    assert "removed" in kernels and "added" in kernels and "faster" in kernels
    assert "cp.rate" in drive.text(browser, "cmp-config-diff")

    drive.click(browser, By.ID, "cmp-nav-overview")
    drive.wait(browser, lambda d: drive.query(d).get("view") == "overview", "the Overview did not open")
    drive.wait(browser, lambda d: len(_plots(d, ".gs-cmp-graph")) >= 4,
               "the comparison charts did not render")
    titles = [e.text for e in browser.find_elements(By.CSS_SELECTOR, ".gs-chart-title")]
    assert "GPU.CU[1]" in titles
    assert all(n == 2 for n, _, _ in _plots(browser, ".gs-cmp-graph"))  # A and B

    drive.click(browser, By.CSS_SELECTOR, "#cmp-mode input[value='diff']")
    drive.wait(browser, lambda d: drive.query(d).get("mode") == "diff", "B − A did not reach the URL")
    drive.wait(browser, lambda d: (p := _plots(d, ".gs-cmp-graph")) and all(n == 1 for n, _, _ in p),
               "the charts did not switch to B − A")

    drag = browser.find_elements(By.CSS_SELECTOR, ".gs-cmp-graph .nsewdrag")[0]
    width = drag.size["width"]
    ActionChains(browser).move_to_element_with_offset(drag, -width // 4, 0).click_and_hold() \
        .move_by_offset(width // 5, 0).pause(0.2).move_by_offset(width // 10, 0).release() \
        .perform()
    drive.wait(browser, lambda d: "t0" in drive.query(d), "the zoom did not reach the URL")
    t0, t1 = int(drive.query(browser)["t0"]), int(drive.query(browser)["t1"])
    drive.wait(browser, lambda d: (p := _plots(d, ".gs-cmp-graph")) and all(
        abs(r[0] - t0 * 1e-12) < 1e-12 and abs(r[1] - t1 * 1e-12) < 1e-12 for _, _, r in p),
        "not every chart moved to the zoomed window")

    drive.click(browser, By.XPATH, "//a[contains(@class, 'gs-chart-title') and text()='GPU.CU[0]']")
    drive.wait(browser, lambda d: drive.query(d).get("view") == "component", "no Component comparison")
    assert drive.query(browser)["loc"] == "GPU.CU[0]" and int(drive.query(browser)["t0"]) == t0
    drive.wait(browser, lambda d: len(_plots(d, "#gs-page")) == 2, "A and B were not both drawn")
    (_, _, range_a), (_, _, range_b) = _plots(browser, "#gs-page")
    assert range_a == range_b  # one time axis
    browser.back()
    drive.wait(browser, lambda d: drive.query(d).get("view") == "overview" and len(
        _plots(d, ".gs-cmp-graph")) >= 4, "Back did not restore the Overview comparison")


def test_aligned_to_the_first_kernel_and_a_missing_b(browser, compare_url):
    browser.get(f"{compare_url}/compare?a=a.sqlite&b=b.sqlite&view=component&loc=GPU.CU%5B0%5D")
    drive.wait(browser, lambda d: len(_plots(d, "#gs-page")) == 2, "A and B were not both drawn")
    drive.click(browser, By.CSS_SELECTOR, "#cmp-align input[value='kernel']")
    drive.wait(browser, lambda d: drive.query(d).get("align") == "kernel", "the alignment is not in the URL")

    def bar_starts(d):
        return d.execute_script(
            "return Array.from(document.querySelectorAll('#gs-page .js-plotly-plot'))"
            ".map(gd => gd.data.filter(t => t.type === 'bar' && t.yaxis === 'y2')"
            ".map(t => t.base[0]));")
    # Both wavefronts start with their run's first kernel: at 0 on the shared axis.
    drive.wait(browser, lambda d: bar_starts(d) == [[0], [0]], "B was not aligned to its kernel")

    # "compare with…" on the Traces page, then run B picked from the list.
    browser.get(f"{compare_url}/")
    drive.wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, ".gs-compare-link"),
               "no compare link on the Traces page")
    drive.click(browser, By.CSS_SELECTOR, ".gs-compare-link")
    drive.wait(browser, lambda d: drive.query(d) == {"a": "a.sqlite"}, "the link did not name run A")
    drive.wait(browser, lambda d: any("Pick the two runs" in e.text for e in
                                      d.find_elements(By.CSS_SELECTOR, ".gs-message")),
          "no prompt for run B")
    browser.find_element(By.ID, "cmp-b").click()
    ActionChains(browser).pause(0.5).send_keys("b.sql").pause(0.5).send_keys(Keys.ENTER) \
        .perform()
    drive.wait(browser, lambda d: drive.query(d).get("b") == "b.sqlite", "picking B did not reach the URL")
    drive.wait(browser, lambda d: "1.25×" in drive.text(d, "cmp-speedup"), "the comparison did not open")


def test_sweep_page_sorts_opens_runs_and_compares_two(browser, compare_url):
    browser.get(f"{compare_url}/")
    drive.wait(browser, lambda d: "grid" in drive.text(d, "home-sweeps"), "the Traces page lists no sweep")
    drive.click(browser, By.LINK_TEXT, "grid")
    drive.wait(browser, lambda d: urlparse(d.current_url).path == "/sweep", "the sweep did not open")
    drive.wait(browser, lambda d: (p := _plots(d, "#sw-graph")) and p[0][0] == 2,
               "no line per value of the other key")

    def times(d):
        return [int(r.find_elements(By.TAG_NAME, "td")[3].text.replace(",", ""))
                for r in d.find_elements(By.CSS_SELECTOR, "#sw-table tbody tr")]
    drive.click(browser, By.PARTIAL_LINK_TEXT, "simulated_time_ps")
    drive.wait(browser, lambda d: drive.query(d).get("sort") == "simulated_time_ps", "no sort in the URL")
    drive.wait(browser, lambda d: len(times(d)) == 4 and times(d) == sorted(times(d)),
               "the table is not sorted by simulated time")
    drive.click(browser, By.PARTIAL_LINK_TEXT, "simulated_time_ps")
    drive.wait(browser, lambda d: drive.query(d).get("sort") == "-simulated_time_ps", "no reverse sort")
    drive.wait(browser, lambda d: times(d) == sorted(times(d), reverse=True), "not sorted downwards")

    boxes = browser.find_elements(By.CSS_SELECTOR, ".gs-sw-pick input")
    boxes[0].click()
    boxes[-1].click()
    drive.wait(browser, lambda d: "disabled" not in d.find_element(By.ID, "sw-compare")
               .get_attribute("class"), "picking two rows did not offer a comparison")
    drive.click(browser, By.ID, "sw-compare")
    drive.wait(browser, lambda d: urlparse(d.current_url).path == "/compare", "no comparison opened")
    query = drive.query(browser)
    assert query["a"].startswith("grid/") and query["b"].startswith("grid/")
    drive.wait(browser, lambda d: "faster" in drive.text(d, "cmp-speedup"), "the comparison is empty")

    browser.get(f"{compare_url}/sweep?dir=grid&chart=heatmap")
    drive.wait(browser, lambda d: (p := _plots(d, "#sw-graph")) and p[0][1] == ["heatmap"],
               "no heatmap over the two keys")
    browser.get(f"{compare_url}/sweep?dir=grid")
    drive.wait(browser, lambda d: _plots(d, "#sw-graph"), "the chart did not render")
    point = browser.find_elements(By.CSS_SELECTOR, "#sw-graph .scatterlayer .point")[0]
    ActionChains(browser).move_to_element(point).pause(0.3).click().perform()
    drive.wait(browser, lambda d: urlparse(d.current_url).path == "/overview",
               "clicking a point did not open its run")
    assert drive.query(browser)["trace"].startswith("grid/")
    drive.wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, ".gs-ov-graph .js-plotly-plot"),
               "the run's Overview did not render")


def test_the_sweep_axis_names_its_unit_once_and_only_the_heatmap_offers_rows(browser, compare_url):
    browser.get(f"{compare_url}/sweep?dir=grid&y=simulated_time_ps")
    drive.wait(browser, lambda d: _plots(d, "#sw-graph"), "the chart did not render")
    axis = browser.execute_script(
        "var g = document.getElementById('sw-graph');"
        "return [g.querySelector('.ytitle').textContent,"
        " Array.from(g.querySelectorAll('.ytick text')).map(t => t.textContent)];")
    title, ticks = axis
    # The ticks carry the unit with its prefix (2µs); the title does not repeat a bare (s).
    assert title == "simulated time" and all(t.endswith("s") for t in ticks if t != "0")
    assert not browser.find_element(By.ID, "sw-by-col").is_displayed()  # lines: no rows
    browser.get(f"{compare_url}/sweep?dir=grid&chart=heatmap")
    drive.wait(browser, lambda d: (p := _plots(d, "#sw-graph")) and p[0][1] == ["heatmap"],
               "no heatmap over the two keys")
    assert browser.find_element(By.ID, "sw-by-col").is_displayed()


def test_the_compare_page_names_its_instruction_count_and_hovers_times_with_prefixes(
        browser, compare_url):
    browser.get(f"{compare_url}/compare?a=a.sqlite&b=b.sqlite")
    drive.wait(browser, lambda d: "faster" in drive.text(d, "cmp-speedup"), "no comparison")
    assert "Instruction tasks traced" in browser.find_element(By.TAG_NAME, "body").text
    browser.get(f"{compare_url}/compare?a=a.sqlite&b=b.sqlite&view=overview")
    drive.wait(browser, lambda d: len(_plots(d, ".gs-cmp-graph")) >= 4, "no charts")
    header = browser.execute_script(
        "var gd = document.querySelector('.gs-cmp-graph .js-plotly-plot');"
        "var r = gd._fullLayout.xaxis.range; var x = (r[0] + r[1]) / 2;"
        "window.Plotly.Fx.hover(gd, {xval: x});"
        "var t = gd.querySelector('.hoverlayer .legend text, .hoverlayer text');"
        "return t ? t.textContent : null;")
    # The unified hover's header is the time as the ticks write it (12.5µs), not 1.25e-05s.
    assert header and header.endswith("s") and "e-" not in header and not header.startswith("0.0")


@pytest.fixture(scope="module")
def profiles_url(tmp_path_factory, serve_traces):
    from test_compare import _profile

    directory = tmp_path_factory.mktemp("compare-profiles")
    _profile(directory / "a.json", 0, [7, 20])
    _profile(directory / "b.json", 2, [0, 13])
    return serve_traces(directory)


def test_two_profiles_compare_their_streams_paired_by_role(browser, profiles_url):
    browser.get(f"{profiles_url}/compare?a=a.sqlite&b=b.sqlite&view=component")
    drive.wait(browser, lambda d: len(_plots(d, "#gs-page")) == 2, "A and B were not both drawn")
    at = [e.text.lstrip("· ") for e in browser.find_elements(By.CSS_SELECTOR, ".gs-cmp-at")]
    # Opened on a GPU stream (not the Python thread), each run's own name for it.
    assert at in (["GPU[0].stream[7]", "GPU[2].stream[0]"],
                  ["GPU[0].stream[20]", "GPU[2].stream[13]"]), at
    browser.get(f"{profiles_url}/compare?a=a.sqlite&b=b.sqlite&view=overview&sort=name")
    drive.wait(browser, lambda d: len(_plots(d, ".gs-cmp-graph")) >= 2, "no charts")
    titles = [e.text for e in browser.find_elements(By.CSS_SELECTOR, ".gs-chart-title")]
    assert "GPU[0].stream[7] ↔ GPU[2].stream[0]" in titles
    assert not any(t.startswith("GPU[2]") for t in titles)


@pytest.fixture(scope="module")
def stepped_url(tmp_path_factory, serve_traces):
    from test_profile_diff import _steps

    directory = tmp_path_factory.mktemp("compare-steps")
    _steps(directory, "a", None)
    _steps(directory, "b", "k9")  # in its second step
    return serve_traces(directory)


def test_two_profiles_compare_the_steps_picked(browser, stepped_url):
    browser.get(f"{stepped_url}/compare?a=a.sqlite&b=b.sqlite")
    # each side's first step by default: the same operations, k9 nowhere
    drive.wait(browser, lambda d: "k1" in drive.text(d, "cmp-ops"), "the diff was not drawn")
    assert "k9" not in drive.text(browser, "cmp-ops") and "unchanged" in drive.text(browser, "cmp-ops")
    assert "ProfilerStep#1" in drive.text(browser, "cmp-step-b")
    browser.find_element(By.ID, "cmp-step-b").click()  # its list opens on the step shown
    drive.click(browser, By.XPATH, "//*[@role='option'][.//span[text()='ProfilerStep#2']]")
    drive.wait(browser, lambda d: drive.query(d).get("step_b") == "2", "the step is not in the URL")
    drive.wait(browser, lambda d: "k9" in drive.text(d, "cmp-ops"), "B's second step was not compared")
    assert "added" in drive.text(browser, "cmp-ops")
    assert "ProfilerStep#2" in drive.text(browser, "cmp-step-b")
    browser.back()
    drive.wait(browser, lambda d: "step_b" not in drive.query(d) and "k1" in drive.text(d, "cmp-ops")
               and "k9" not in drive.text(d, "cmp-ops"), "Back did not restore the first steps")
