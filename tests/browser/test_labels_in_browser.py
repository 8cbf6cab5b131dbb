"""Labels that tell the truth, in headless Chromium (issue 36): what the Traces page's
numbers count, and a navbar that opens on the trace just made with its Kernel link."""
import subprocess
import sys
from pathlib import Path

import driving as drive
import pytest
from selenium.webdriver.common.by import By
from test_app_traces import write_synthetic_trace

pytestmark = pytest.mark.browser
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def app(tmp_path_factory, serve_traces):
    """A synthetic trace with no kernel records ("a-synthetic", first by name), then a
    small reduction v2 made after it (the newest)."""
    directory = tmp_path_factory.mktemp("labels")
    write_synthetic_trace(directory / "a-synthetic.sqlite", tasks=3000, seed=5)
    subprocess.run([sys.executable, "-m", "simulator", "run", "reduction-v2", "--size", "1024",
                    "--local", "128", "--no-progress", "-o", str(directory / "v2.sqlite")],
                   cwd=ROOT, check=True, capture_output=True)
    return serve_traces(directory)


def _rows(browser):
    return browser.execute_script(
        "return Array.from(document.querySelectorAll('.gs-summary-table tr')).map(r =>"
        " Array.from(r.children).map(c => c.textContent));")


def test_task_time_per_category_says_it_adds_overlapping_tasks(browser, app):
    browser.get(f"{app}/")
    drive.wait(browser, lambda d: len(d.find_elements(By.CSS_SELECTOR, ".gs-trace-link")) == 2,
               "the Traces page did not list both traces")
    headers = [row for row in _rows(browser) if row and row[0] == "Category"]
    assert headers and all(row == ["Category", "Task time", "Mean in flight"] for row in headers)
    req_out = [row for row in _rows(browser) if row and row[0] == "req_out"]
    # Thousands of requests are in flight at once: their task time passes the run's.
    assert req_out and float(req_out[0][2].replace(",", "")) > 1
    components = [row[1] for row in _rows(browser) if row and row[0] == "Components"]
    assert any("did work" in c and "ran no task" in c for c in components)


def test_the_navbar_opens_the_newest_trace_with_its_kernel_link(browser, app):
    browser.get(f"{app}/")
    drive.wait(browser, lambda d: d.find_element(By.ID, "gs-nav-overview").get_attribute("href")
               .endswith("/overview?trace=v2.sqlite"), "the navbar did not open the newest trace")
    kernel = browser.find_element(By.ID, "gs-nav-kernel")
    assert kernel.is_displayed() and kernel.get_attribute("href").endswith("/kernel?trace=v2.sqlite")
    # On a trace without kernel records the Kernel link stays, and leads to one with them.
    browser.get(f"{app}/overview?trace=a-synthetic.sqlite")
    drive.wait(browser, lambda d: d.find_element(By.ID, "gs-nav-overview").get_attribute("href")
               .endswith("/overview?trace=a-synthetic.sqlite"), "the navbar lost the trace")
    kernel = browser.find_element(By.ID, "gs-nav-kernel")
    assert kernel.is_displayed() and kernel.get_attribute("href").endswith("/kernel?trace=v2.sqlite")


def test_the_memory_view_s_time_arrow_points_down_and_its_legend_clears_the_rows(browser, app):
    browser.get(f"{app}/kernel?trace=v2.sqlite")
    drive.wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, ".kv-banks .barlayer .point"),
               "the kernel page did not render")
    found = drive.wait(browser, lambda d: d.execute_script(
        "var gd = document.querySelector('.kv-memory .js-plotly-plot');"
        "if (!gd || !gd._fullLayout) return null;"
        "var title = gd.querySelector('.g-ytitle text');"
        "var legend = gd.querySelector('.legend').getBoundingClientRect();"
        "var plot = gd.querySelector('.nsewdrag').getBoundingClientRect();"
        "return {text: title.textContent, turn: title.getAttribute('transform'),"
        " reversed: gd._fullLayout.yaxis.range[0] > gd._fullLayout.yaxis.range[1],"
        " legendBottom: legend.bottom, plotTop: plot.top};"), "the memory view did not draw")
    # Logical time runs down the view; the title is turned anticlockwise, so its first
    # character is at the bottom: a left arrow there points down.
    assert found["reversed"] and found["text"].startswith("←") and "rotate(-90" in found["turn"]
    assert found["legendBottom"] <= found["plotTop"] + 1
    title = browser.find_element(By.CSS_SELECTOR, ".kv-memview-title").text
    assert "accesses of float elements" in title
    assert "4-byte word accesses" in browser.find_element(By.CSS_SELECTOR, ".kv-bank-unit").text


def test_a_kind_whose_action_repeats_its_category_is_named_once(browser, app, tmp_path_factory):
    import sqlite3
    from urllib.parse import quote

    trace = next(Path(p) for p in Path(tmp_path_factory.getbasetemp()).glob("labels*/v2.sqlite"))
    with sqlite3.connect(trace) as db:
        loc, = db.execute("SELECT l.name FROM task t JOIN kind k ON k.id = t.kind JOIN location l"
                          " ON l.id = t.location WHERE k.category = 'work-group' LIMIT 1").fetchone()
    browser.get(f"{app}/component?trace=v2.sqlite&loc={quote(loc)}")
    drive.wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#cv-legend .gs-legend-item"),
               "the Component view's legend did not render")
    names = [e.text for e in browser.find_elements(By.CSS_SELECTOR, "#cv-legend .gs-legend-item")]
    assert "work-group" in names and not any(n == "work-group-work-group" for n in names)


def test_the_component_view_shows_its_tasks_durations_and_an_outlier_opens_its_task(browser, app):
    # A SIMD of the seeded synthetic trace with a few tasks far longer than the rest.
    browser.get(f"{app}/component?trace=a-synthetic.sqlite&loc=GPU.SA%5B0%5D.CU%5B2%5D.SIMD%5B1%5D")
    drive.wait(browser, lambda d: d.find_elements(By.ID, "cv-durations-button"), "no Component view")
    drive.click(browser, By.ID, "cv-durations-button")
    drive.wait(browser, lambda d: d.execute_script(
        "var gd = document.querySelector('#cv-durations-graph .js-plotly-plot');"
        "return !!(gd && gd._fullData && gd._fullData.length);"), "the histogram did not draw")
    assert "median" in drive.text(browser, "cv-durations-facts")
    outlier = browser.find_elements(By.CSS_SELECTOR, ".cv-outlier")
    assert outlier
    task = outlier[0].text.split(":")[0].split()[1]
    browser.execute_script("arguments[0].click();", outlier[0])
    drive.wait(browser, lambda d: drive.text(d, "cv-task") == task,
               "the outlier did not open in the Task view")


def test_the_kernel_page_scrolls_once_and_its_run_bar_covers_nothing(browser, app):
    from test_kernel_in_browser import V3, _run, _set_editor

    browser.set_window_size(1600, 1000)
    try:
        browser.get(f"{app}/kernel?trace=v2.sqlite")
        drive.wait(browser, lambda d: d.find_elements(By.ID, "kv-run"), "no Run button")
        boxes = browser.execute_script(
            "function box(id) { var r = document.getElementById(id).getBoundingClientRect();"
            " return [r.top, r.bottom]; }"
            "var side = document.querySelector('.kv-side');"
            "return {scroll: getComputedStyle(side).overflowY, bar: box('kv-run'),"
            " heading: box('kv-edit-heading'), editor: box('kv-editor'), height: innerHeight};")
        # The page scrolls; the side column does not scroll on its own.
        assert boxes["scroll"] == "visible"
        bar, heading, editor = boxes["bar"], boxes["heading"], boxes["editor"]
        assert heading[1] <= bar[0] and bar[1] <= editor[0]  # covers neither
        assert bar[1] < boxes["height"]  # and is on screen at 1600 x 1000
        # An idle server starts the run at once: nothing waits for a free slot.
        browser.execute_script(
            "window.gsTexts = []; new MutationObserver(() => {"
            " var t = document.getElementById('kv-run-progress-text');"
            " if (t) { window.gsTexts.push(t.textContent); } })"
            ".observe(document.body, {subtree: true, childList: true, characterData: true});")
        _set_editor(browser, V3 + "// idle server\n")
        _run(browser)
        drive.wait(browser, lambda d: "run" in drive.query(d), "the run did not finish")
        seen = browser.execute_script("return window.gsTexts;")
        assert not any("waiting for a free run slot" in t for t in seen), seen
    finally:
        browser.set_window_size(1400, 1000)


def test_the_overview_opens_on_busy_components_with_a_time_axis_and_a_clear_toolbar(browser, app):
    from selenium.webdriver.common.action_chains import ActionChains

    browser.set_window_size(1600, 1000)
    try:
        browser.get(f"{app}/overview?trace=v2.sqlite")
        drive.wait(browser, lambda d: d.execute_script(
            "var gd = document.querySelector('#ov-grid .js-plotly-plot');"
            "return !!(gd && gd._fullLayout);"), "the Overview did not draw")
        ActionChains(browser).move_to_element(
            browser.find_element(By.CSS_SELECTOR, "#ov-grid .js-plotly-plot")).perform()
        found = browser.execute_script(
            "var gd = document.querySelector('#ov-grid .js-plotly-plot');"
            "var bar = gd.querySelector('.modebar-container .modebar').getBoundingClientRect();"
            "var pngs = Array.from(document.querySelectorAll('#ov-grid .gs-png'))"
            ".map(e => e.getBoundingClientRect());"
            "var overlaps = pngs.filter(p => p.left < bar.right && p.right > bar.left"
            " && p.top < bar.bottom && p.bottom > bar.top).length;"
            "var ticks = Array.from(gd.querySelectorAll('.xtick text'))"
            ".map(t => t.getBoundingClientRect().bottom).filter(b => b > 0 && b < innerHeight);"
            "var dashes = gd._fullData.map(t => t.line && t.line.dash);"
            "return {overlaps: overlaps, ticks: ticks.length, dashes: dashes,"
            " titles: Array.from(document.querySelectorAll('.gs-chart-title'))"
            ".map(e => e.textContent)};")
        assert found["overlaps"] == 0  # the toolbar covers no chart's PNG button
        assert found["ticks"] > 0  # a time axis on screen as the page opens
        assert set(found["dashes"]) == {"solid", "dot"}  # red solid, blue dotted
        # By load: the busy components first, not GPU.CommandProcessor and DRAM[0..13].
        assert not found["titles"][2].startswith("GPU.DRAM")
    finally:
        browser.set_window_size(1400, 1000)
