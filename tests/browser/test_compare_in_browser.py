"""The Compare and Sweep pages in headless Chromium, against the real server: two
fixture runs with known differences and a real sweep made by ``simulator sweep``."""
from urllib.parse import parse_qs, urlparse

import pytest
from compare_traces import write_run
from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait

from simulator.__main__ import main as simulator

pytestmark = pytest.mark.browser
WAIT = 30


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


def _wait(browser, predicate, message):
    return WebDriverWait(browser, WAIT, ignored_exceptions=(StaleElementReferenceException,)) \
        .until(lambda d: predicate(d), message=message)


def _query(browser):
    return {k: v[0] for k, v in parse_qs(urlparse(browser.current_url).query).items()}


def _click(browser, by, selector):
    def clicked(d):
        d.execute_script("arguments[0].click();", d.find_element(by, selector))
        return True
    _wait(browser, clicked, f"could not click {selector}")


def _plots(browser, selector):
    """(trace count, trace types, x range) of every drawn Plotly chart under ``selector``."""
    return browser.execute_script(
        "return Array.from(document.querySelectorAll(arguments[0] + ' .js-plotly-plot'))"
        ".filter(gd => gd.data && gd.layout)"
        ".map(gd => [gd.data.length, gd.data.map(t => t.type), gd.layout.xaxis.range]);",
        selector)


def _text(browser, element_id):
    found = browser.find_elements(By.ID, element_id)
    return found[0].text if found else ""


def test_compare_summary_overview_and_component_views(browser, compare_url):
    browser.get(f"{compare_url}/compare?a=a.sqlite&b=b.sqlite")
    _wait(browser, lambda d: "B is 1.25× faster" in _text(d, "cmp-speedup"),
          "the speed-up is not shown")
    kernels = _text(browser, "cmp-kernels")
    assert "removed" in kernels and "added" in kernels and "faster" in kernels
    assert "cp.rate" in _text(browser, "cmp-config-diff")

    _click(browser, By.ID, "cmp-nav-overview")
    _wait(browser, lambda d: _query(d).get("view") == "overview", "the Overview did not open")
    _wait(browser, lambda d: len(_plots(d, ".gs-cmp-graph")) >= 4,
          "the comparison charts did not render")
    titles = [e.text for e in browser.find_elements(By.CSS_SELECTOR, ".gs-chart-title")]
    assert "GPU.CU[1]" in titles
    assert all(n == 2 for n, _, _ in _plots(browser, ".gs-cmp-graph"))  # A and B

    _click(browser, By.CSS_SELECTOR, "#cmp-mode input[value='diff']")
    _wait(browser, lambda d: _query(d).get("mode") == "diff", "B − A did not reach the URL")
    _wait(browser, lambda d: (p := _plots(d, ".gs-cmp-graph")) and all(n == 1 for n, _, _ in p),
          "the charts did not switch to B − A")

    drag = browser.find_elements(By.CSS_SELECTOR, ".gs-cmp-graph .nsewdrag")[0]
    width = drag.size["width"]
    ActionChains(browser).move_to_element_with_offset(drag, -width // 4, 0).click_and_hold() \
        .move_by_offset(width // 5, 0).pause(0.2).move_by_offset(width // 10, 0).release() \
        .perform()
    _wait(browser, lambda d: "t0" in _query(d), "the zoom did not reach the URL")
    t0, t1 = int(_query(browser)["t0"]), int(_query(browser)["t1"])
    _wait(browser, lambda d: (p := _plots(d, ".gs-cmp-graph")) and all(
        abs(r[0] - t0 * 1e-12) < 1e-12 and abs(r[1] - t1 * 1e-12) < 1e-12 for _, _, r in p),
        "not every chart moved to the zoomed window")

    _click(browser, By.XPATH, "//a[contains(@class, 'gs-chart-title') and text()='GPU.CU[0]']")
    _wait(browser, lambda d: _query(d).get("view") == "component", "no Component comparison")
    assert _query(browser)["loc"] == "GPU.CU[0]" and int(_query(browser)["t0"]) == t0
    _wait(browser, lambda d: len(_plots(d, "#gs-page")) == 2, "A and B were not both drawn")
    (_, _, range_a), (_, _, range_b) = _plots(browser, "#gs-page")
    assert range_a == range_b  # one time axis
    browser.back()
    _wait(browser, lambda d: _query(d).get("view") == "overview" and len(
        _plots(d, ".gs-cmp-graph")) >= 4, "Back did not restore the Overview comparison")


def test_aligned_to_the_first_kernel_and_a_missing_b(browser, compare_url):
    browser.get(f"{compare_url}/compare?a=a.sqlite&b=b.sqlite&view=component&loc=GPU.CU%5B0%5D")
    _wait(browser, lambda d: len(_plots(d, "#gs-page")) == 2, "A and B were not both drawn")
    _click(browser, By.CSS_SELECTOR, "#cmp-align input[value='kernel']")
    _wait(browser, lambda d: _query(d).get("align") == "kernel", "the alignment is not in the URL")

    def bar_starts(d):
        return d.execute_script(
            "return Array.from(document.querySelectorAll('#gs-page .js-plotly-plot'))"
            ".map(gd => gd.data.filter(t => t.type === 'bar' && t.yaxis === 'y2')"
            ".map(t => t.base[0]));")
    # Both wavefronts start with their run's first kernel: at 0 on the shared axis.
    _wait(browser, lambda d: bar_starts(d) == [[0], [0]], "B was not aligned to its kernel")

    # "compare with…" on the Traces page, then run B picked from the list.
    browser.get(f"{compare_url}/")
    _wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, ".gs-compare-link"),
          "no compare link on the Traces page")
    _click(browser, By.CSS_SELECTOR, ".gs-compare-link")
    _wait(browser, lambda d: _query(d) == {"a": "a.sqlite"}, "the link did not name run A")
    _wait(browser, lambda d: any("Pick the two runs" in e.text for e in
                                 d.find_elements(By.CSS_SELECTOR, ".gs-message")),
          "no prompt for run B")
    browser.find_element(By.ID, "cmp-b").click()
    ActionChains(browser).pause(0.5).send_keys("b.sql").pause(0.5).send_keys(Keys.ENTER) \
        .perform()
    _wait(browser, lambda d: _query(d).get("b") == "b.sqlite", "picking B did not reach the URL")
    _wait(browser, lambda d: "1.25×" in _text(d, "cmp-speedup"), "the comparison did not open")


def test_sweep_page_sorts_opens_runs_and_compares_two(browser, compare_url):
    browser.get(f"{compare_url}/")
    _wait(browser, lambda d: "grid" in _text(d, "home-sweeps"), "the Traces page lists no sweep")
    _click(browser, By.LINK_TEXT, "grid")
    _wait(browser, lambda d: urlparse(d.current_url).path == "/sweep", "the sweep did not open")
    _wait(browser, lambda d: (p := _plots(d, "#sw-graph")) and p[0][0] == 2,
          "no line per value of the other key")

    def times(d):
        return [int(r.find_elements(By.TAG_NAME, "td")[3].text.replace(",", ""))
                for r in d.find_elements(By.CSS_SELECTOR, "#sw-table tbody tr")]
    _click(browser, By.PARTIAL_LINK_TEXT, "simulated_time_ps")
    _wait(browser, lambda d: _query(d).get("sort") == "simulated_time_ps", "no sort in the URL")
    _wait(browser, lambda d: len(times(d)) == 4 and times(d) == sorted(times(d)),
          "the table is not sorted by simulated time")
    _click(browser, By.PARTIAL_LINK_TEXT, "simulated_time_ps")
    _wait(browser, lambda d: _query(d).get("sort") == "-simulated_time_ps", "no reverse sort")
    _wait(browser, lambda d: times(d) == sorted(times(d), reverse=True), "not sorted downwards")

    boxes = browser.find_elements(By.CSS_SELECTOR, ".gs-sw-pick input")
    boxes[0].click()
    boxes[-1].click()
    _wait(browser, lambda d: "disabled" not in d.find_element(By.ID, "sw-compare")
          .get_attribute("class"), "picking two rows did not offer a comparison")
    _click(browser, By.ID, "sw-compare")
    _wait(browser, lambda d: urlparse(d.current_url).path == "/compare", "no comparison opened")
    query = _query(browser)
    assert query["a"].startswith("grid/") and query["b"].startswith("grid/")
    _wait(browser, lambda d: "faster" in _text(d, "cmp-speedup"), "the comparison is empty")

    browser.get(f"{compare_url}/sweep?dir=grid&chart=heatmap")
    _wait(browser, lambda d: (p := _plots(d, "#sw-graph")) and p[0][1] == ["heatmap"],
          "no heatmap over the two keys")
    browser.get(f"{compare_url}/sweep?dir=grid")
    _wait(browser, lambda d: _plots(d, "#sw-graph"), "the chart did not render")
    point = browser.find_elements(By.CSS_SELECTOR, "#sw-graph .scatterlayer .point")[0]
    ActionChains(browser).move_to_element(point).pause(0.3).click().perform()
    _wait(browser, lambda d: urlparse(d.current_url).path == "/overview",
          "clicking a point did not open its run")
    assert _query(browser)["trace"].startswith("grid/")
    _wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, ".gs-ov-graph .js-plotly-plot"),
          "the run's Overview did not render")
