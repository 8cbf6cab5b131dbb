"""A newcomer's first hour in headless Chromium (issue 13): finding the way (navbar,
trace picker, kernel links, component finder and tree) and charts that tell the truth
(the busy-component density, kernel axes, hover toolbars, the memory view's extent)."""
import sqlite3
import subprocess
import sys
from pathlib import Path

import driving as drive
import pytest
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By

pytestmark = pytest.mark.browser
ROOT = Path(__file__).resolve().parents[2]


def _simulate(directory, name, *args):
    subprocess.run([sys.executable, "-m", "simulator", "run", *args, "--no-progress",
                    "-o", str(directory / name)], cwd=ROOT, check=True, capture_output=True)


@pytest.fixture(scope="module")
def traces(tmp_path_factory):
    """reduction v2, Sobel and vector add (kernel records) and transpose 512 (an L2 bank
    with 3,072 tasks: more than the Component view draws as bars)."""
    directory = tmp_path_factory.mktemp("newcomer-traces")
    _simulate(directory, "v2.sqlite", "reduction-v2", "--size", "1024", "--local", "128",
              "--trace-level", "kernel")
    _simulate(directory, "sobel.sqlite", "sobel", "--width", "32", "--height", "16",
              "--local-x", "16", "--local-y", "8", "--trace-level", "kernel")
    _simulate(directory, "transpose.sqlite", "transpose", "--size", "512")
    _simulate(directory, "vectoradd.sqlite", "vectoradd", "--size", "256", "--local", "64",
              "--trace-level", "kernel")
    return directory


@pytest.fixture(scope="module")
def app(traces, serve_traces):
    return serve_traces(traces)


def _choose(browser, dropdown, text, option):
    """Type ``text`` into a Dash dropdown's search box and pick ``option``."""
    drive.wait(browser, lambda d: d.find_element(By.ID, dropdown).is_displayed(),
               f"no {dropdown}")
    browser.find_element(By.ID, dropdown).click()
    search = drive.wait(browser, lambda d: d.find_element(By.CSS_SELECTOR, "input.dash-dropdown-search"),
                        "the dropdown has no search box")
    search.send_keys(text)
    xpath = f"//label[@role='option'][.//input[@value='{option}']]"
    drive.wait(browser, lambda d: d.find_element(By.XPATH, xpath).is_displayed(),
               f"{option} is not offered after typing {text!r}")
    browser.find_element(By.XPATH, xpath).click()


def _overview_ready(browser):
    return browser.execute_script(
        "var t = document.querySelectorAll('#ov-grid .gs-chart-title');"
        "var g = document.querySelector('#ov-grid .js-plotly-plot');"
        "return t.length > 0 && !!g && !!g._fullLayout &&"
        " t.length === JSON.parse(document.getElementById('ov-grid').dataset.charts).length;")


def _open_overview(browser, app, trace):
    browser.get(f"{app}/overview?trace={trace}")
    drive.wait(browser, _overview_ready, "the overview did not render")


def _titles(browser):
    return browser.execute_script(
        "return Array.from(document.querySelectorAll('.gs-chart-title')).map(e => e.textContent);")


# -- 1. the navbar keeps the trace; a picker changes it ----------------------------------
def test_the_navbar_overview_keeps_the_trace_and_the_picker_changes_it(browser, app):
    browser.get(f"{app}/kernel?trace=v2.sqlite")
    drive.wait(browser, lambda d: d.find_element(By.ID, "kv-title").text.startswith("reduce"),
               "the kernel page did not render")
    drive.click(browser, By.CSS_SELECTOR, "#gs-nav-overview")
    drive.wait(browser, lambda d: drive.path(d) == "/overview", "the navbar did not open the Overview")
    assert drive.query(browser)["trace"] == "v2.sqlite"  # not sobel.sqlite, the first by name
    drive.wait(browser, _overview_ready, "the overview did not render")
    # From the Traces page (no trace in its URL) the link still leads to the same trace.
    drive.click(browser, By.CSS_SELECTOR, "#gs-nav-traces")
    drive.wait(browser, lambda d: drive.path(d) == "/", "the Traces page did not open")
    drive.wait(browser, lambda d: d.find_element(By.ID, "gs-nav-overview").get_attribute("href")
               .endswith("/overview?trace=v2.sqlite"), "the Overview link forgot the trace")
    # The picker shows the trace and opens another one on the same kind of page.
    _open_overview(browser, app, "v2.sqlite")
    assert browser.find_element(By.ID, "gs-trace-picker").text == "v2.sqlite"
    _choose(browser, "gs-trace-picker", "trans", "transpose.sqlite")
    drive.wait(browser, lambda d: drive.query(d).get("trace") == "transpose.sqlite",
               "picking a trace did not open it")
    assert drive.path(browser) == "/overview"
    drive.wait(browser, lambda d: "GPU.L2[0]" in _titles(d) or len(_titles(d)) == 16,
               "the picked trace's overview did not render")
    # On the kernel page, the picked trace opens on the kernel page.
    browser.get(f"{app}/kernel?trace=v2.sqlite")
    drive.wait(browser, lambda d: d.find_element(By.ID, "gs-trace-picker").text == "v2.sqlite",
               "the kernel page did not show its trace in the picker")
    _choose(browser, "gs-trace-picker", "sob", "sobel.sqlite")
    drive.wait(browser, lambda d: drive.query(d).get("trace") == "sobel.sqlite",
               "picking a trace on the kernel page did not open it")
    assert drive.path(browser) == "/kernel"


# -- 2. the Traces page links every launch to the kernel page ----------------------------
def test_the_traces_page_lists_each_launch_with_a_link_to_its_kernel_views(browser, app):
    browser.get(f"{app}/")
    drive.wait(browser, lambda d: len(d.find_elements(By.CSS_SELECTOR, ".gs-launch-link")) >= 2,
               "no kernel launch links on the Traces page")
    links = {e.text: e.get_attribute("href") for e in
             browser.find_elements(By.CSS_SELECTOR, ".gs-launch-link")}
    v2 = [text for text, href in links.items() if "trace=v2.sqlite" in href]
    assert v2 and all(text.startswith("reduce #") for text in v2)
    assert any("trace=sobel.sqlite" in href for href in links.values())
    # Issue 13, item 13: what "components" counts, the command as typed, the whole config.
    facts = browser.execute_script(
        "return Array.from(document.querySelectorAll('.gs-summary-table tr')).map(r =>"
        " Array.from(r.children).map(c => c.textContent));")
    components = [row[1] for row in facts if row and row[0] == "Components"]
    commands = [row[1] for row in facts if row and row[0] == "Command"]
    assert components and all("did work" in c for c in components)
    assert commands and all(c.startswith("python -m simulator run ") for c in commands)
    assert len(browser.find_elements(By.CSS_SELECTOR, "details.gs-config pre")) == 4
    second = next(e for e in browser.find_elements(By.CSS_SELECTOR, ".gs-launch-link")
                  if "trace=v2.sqlite" in e.get_attribute("href") and "launch=1" in
                  e.get_attribute("href"))
    # The Traces page draws with plotly.js's cartesian bundle, which has no WebGL scatter;
    # the memory view below needs it, so the link must bring the full bundle.
    assert browser.execute_script("return !!document.getElementById('gs-plotly-cartesian')")
    browser.execute_script("window.gsSamePage = true; arguments[0].click();", second)
    drive.wait(browser, lambda d: d.find_element(By.ID, "kv-title").text == "reduce, launch 1",
               "the link did not open the kernel views of that launch")
    drive.wait(browser, lambda d: d.execute_script(
        "var gd = document.querySelector('.kv-memview .js-plotly-plot');"
        "return !!gd && !!gd._fullData && gd._fullData.some(t => t.type === 'scattergl'"
        " && t.visible === true) && !!gd.querySelector('canvas.gl-canvas-context');"),
        "the memory view's accesses were not drawn (WebGL scatter)")
    assert browser.execute_script(
        "return window.gsSamePage === undefined && !document.getElementById('gs-plotly-cartesian')")
    # In-app to the Overview, a reload there (which brings the cartesian bundle), then
    # Back to the kernel page's entry of the reloaded document: loaded again, whole.
    drive.click(browser, By.ID, "gs-nav-overview")
    drive.wait(browser, lambda d: drive.path(d) == "/overview", "the navbar did not open the Overview")
    browser.refresh()
    drive.wait(browser, lambda d: d.execute_script(
        "return !!document.getElementById('gs-plotly-cartesian')"), "the Overview did not reload")
    browser.back()
    drive.wait(browser, lambda d: drive.path(d) == "/kernel" and d.execute_script(
        "var gd = document.querySelector('.kv-memview .js-plotly-plot');"
        "return !document.getElementById('gs-plotly-cartesian') && !!gd && !!gd._fullData &&"
        " gd._fullData.some(t => t.type === 'scattergl' && t.visible === true);"),
        "Back to the kernel page drew it with the cartesian bundle")
    # The navbar offers the kernel views of a trace that has kernel records.
    assert browser.find_element(By.ID, "gs-nav-kernel").is_displayed()


# -- 3. finding one component among hundreds ---------------------------------------------
def test_the_finder_opens_a_typed_component(browser, app):
    _open_overview(browser, app, "transpose.sqlite")
    _choose(browser, "ov-finder", "L2[13", "GPU.L2[13]")
    drive.wait(browser, lambda d: drive.path(d) == "/component", "the finder did not open the component")
    assert drive.query(browser)["loc"] == "GPU.L2[13]"
    drive.wait(browser, lambda d: d.find_element(By.ID, "cv-location").text == "GPU.L2[13]",
               "the component view did not render")


def test_the_component_tree_browses_the_hierarchy_and_filters_the_overview(browser, app):
    _open_overview(browser, app, "transpose.sqlite")
    roots = browser.execute_script(
        "return Array.from(document.querySelectorAll('#ov-tree > .gs-tree-node'))"
        ".map(e => e.getAttribute('data-path'));")
    assert "GPU" in roots
    browser.execute_script("document.querySelector('.gs-tree-node[data-path=\"GPU\"]')"
                           ".open = true;")
    children = drive.wait(browser, lambda d: d.execute_script(
        "return Array.from(document.querySelectorAll("
        "'.gs-tree-node[data-path=\"GPU\"] > .gs-tree-children > .gs-tree-node'))"
        ".map(e => e.getAttribute('data-path'));"), "opening GPU showed no children")
    shader_arrays = [c for c in children if c.startswith("GPU.SA[")]
    assert "GPU.SA[1]" in shader_arrays  # natural order: SA[2] before SA[10]
    assert shader_arrays == sorted(shader_arrays, key=lambda p: int(p[len("GPU.SA["):-1]))
    drive.click(browser, By.CSS_SELECTOR, '.gs-tree-node[data-path="GPU.SA[1]"] > summary > .gs-tree-filter')
    drive.wait(browser, lambda d: "filter" in drive.query(d), "the tree did not filter the Overview")
    drive.wait(browser, lambda d: _overview_ready(d) and _titles(d) and all(
        t.startswith("GPU.SA[1].") for t in _titles(d)),
        "the Overview does not show exactly the components under GPU.SA[1]")


# -- 5. a busy component: colours, a colour scale, a click that leads to bars ------------
def _heatmaps(browser):
    return browser.execute_script(
        "var gd = document.querySelector('#cv-graph .js-plotly-plot');"
        "if (!gd || !gd.data) { return null; }"
        "return gd.data.filter(t => t.type === 'heatmap').map(t => ({label: t.meta[0],"
        " top: t.colorscale[t.colorscale.length - 1][1], zmax: t.zmax,"
        " peak: Math.max(1, Math.max(...t.z[0]))}));")


def test_a_busy_component_shows_a_coloured_density_with_a_scale_and_a_click_zooms_to_bars(
        browser, app, traces):
    browser.get(f"{app}/component?trace=transpose.sqlite&loc=GPU.L2%5B0%5D")
    drive.wait(browser, lambda d: _heatmaps(d), "no density drawn")
    assert browser.find_element(By.ID, "cv-mode").get_attribute("textContent") == "density"
    legend = browser.execute_script(
        "var out = {}; document.querySelectorAll('#cv-legend .gs-legend-item').forEach(e =>"
        " { out[e.getAttribute('data-kind')] = getComputedStyle(e.querySelector('.gs-swatch'))"
        ".backgroundColor; }); return out;")
    rows = _heatmaps(browser)
    assert len(rows) >= 2

    def rgb(hex_colour):
        return "rgb({}, {}, {})".format(*(int(hex_colour[i:i + 2], 16) for i in (1, 3, 5)))
    assert all(legend[r["label"]] == rgb(r["top"]) for r in rows)
    # The scale (issue 36): no one-hue colour bar, but a ramp per row in its own colour,
    # each from white to the row's peak, which its axis label gives too.
    assert not browser.find_elements(By.CSS_SELECTOR, "#cv-graph .colorbar")
    ramps = browser.execute_script(
        "var out = {}; document.querySelectorAll('#cv-legend .gs-density-scale').forEach(e =>"
        " { out[e.getAttribute('data-kind')] = [getComputedStyle(e.querySelector('.gs-ramp'))"
        ".backgroundImage, e.textContent]; }); return out;")
    assert sorted(ramps) == sorted(r["label"] for r in rows)
    assert all(rgb(r["top"]) in ramps[r["label"]][0] and ramps[r["label"]][1].startswith("0 to ")
               for r in rows)
    # Every row is drawn to its own peak: none is left nearly white.
    assert all(r["zmax"] == r["peak"] for r in rows)
    assert "click the density" in browser.find_element(By.ID, "cv-graph").text
    # The default window ends with the run, not past it.
    with sqlite3.connect(traces / "transpose.sqlite") as db:
        end = db.execute("SELECT virtual_end_ps FROM run").fetchone()[0]
    t0, t1 = (int(v) for v in browser.find_element(By.ID, "cv-window-ps")
              .get_attribute("textContent").split(","))
    assert t1 <= end
    drag = browser.find_element(By.CSS_SELECTOR, "#cv-graph .nsewdrag[data-subplot='xy2']")
    ActionChains(browser).move_to_element(drag).pause(0.3).click().perform()
    drive.wait(browser, lambda d: "t0" in drive.query(d), "a click on the density did not zoom")
    drive.wait(browser, lambda d: d.find_element(By.ID, "cv-mode").get_attribute("textContent")
               == "bars", "the zoomed window still has no bars")
    q = drive.query(browser)
    assert t0 <= int(q["t0"]) < int(q["t1"]) <= t1
    assert browser.execute_script(
        "var gd = document.querySelector('#cv-graph .js-plotly-plot');"
        "return gd.data.filter(t => t.type === 'bar').length;") > 0


# -- 9. axes that are named, honest ticks and units, toolbars on hover -------------------
def _axis_titles(browser, graph_id):
    return browser.execute_script(
        "var g = document.getElementById(arguments[0]); if (!g) { return null; }"
        "var box = g.getBoundingClientRect(); var out = {};"
        "['xtitle', 'ytitle'].forEach(c => { var t = g.querySelector('.' + c);"
        " if (!t) { return; } var r = t.getBoundingClientRect();"
        " var inside = r.width > 0 && r.left >= box.left - 1 && r.right <= box.right + 1 &&"
        "  r.top >= box.top - 1 && r.bottom <= box.bottom + 1;"
        " out[c] = inside ? t.textContent : null; }); return out;", graph_id)


def test_kernel_charts_name_their_axes_and_toolbars_show_on_hover(browser, app):
    browser.get(f"{app}/kernel?trace=v2.sqlite")
    drive.wait(browser, lambda d: _axis_titles(d, "kv-memory-0"), "the memory view did not render")
    expected = {"kv-memory-0": ("work-item", "logical time"),
                "kv-banks-0": ("bank", "accesses"),
                "kv-histogram": ("pattern", "work-items")}
    for graph, (x, y) in expected.items():
        titles = drive.wait(browser, lambda d, g=graph: (lambda t: t if t and len(t) == 2 else None)(
            _axis_titles(d, g)), f"{graph} has no axis titles on screen")
        assert x in (titles["xtitle"] or "") and y in (titles["ytitle"] or ""), (graph, titles)
    opacity = ("return getComputedStyle(document.querySelector("
               "'#' + arguments[0] + ' .modebar-container')).opacity;")
    assert browser.execute_script(opacity, "kv-banks-0") == "0"
    ActionChains(browser).move_to_element(browser.find_element(By.ID, "kv-banks-0")).perform()
    drive.wait(browser, lambda d: d.execute_script(opacity, "kv-banks-0") == "1",
               "the toolbar did not appear on hover")


def test_an_all_zero_series_has_one_zero_tick_and_rates_are_per_ns(browser, app):
    # A DRAM channel sends no requests of its own: its pending outgoing requests are zero.
    _open_overview(browser, app, "transpose.sqlite&filter=DRAM&primary=arrival"
                                 "&secondary=pending_out")
    # The grid labels its right axes itself (grid.js): the first chart's labels.
    ticks = browser.execute_script(
        "var box = document.querySelector('#ov-grid .gs-grid-right');"
        "return Array.from(box.children).map(t => t.textContent);")
    assert ticks == ["0"]
    # The charts' shared axes are named once, above them, in their colours.
    key = browser.find_element(By.ID, "ov-key").text
    assert "left axis: Request arrival rate (per ns)" in key
    assert "right axis: Pending outgoing requests" in key


# -- 10. the memory view opens on everything it draws, 2-D launches by tile --------------
def _memory_extent(browser):
    return browser.execute_script(
        "var gd = document.querySelector('#kv-memory-0 .js-plotly-plot');"
        "if (!gd || !gd._fullData) { return null; } var lo = Infinity, hi = -Infinity, n = 0,"
        " inside = 0, r = gd.layout.xaxis.range;"
        "gd._fullData.filter(t => t.meta && t.meta[0] === 'access').forEach(t => {"
        " for (var i = 0; i < t._length; i++) { var x = t.x[i]; n++;"
        "  lo = Math.min(lo, x); hi = Math.max(hi, x);"
        "  if (x >= r[0] && x <= r[1]) { inside++; } } });"
        "return {lo: lo, hi: hi, n: n, inside: inside, range: r};")


@pytest.mark.parametrize("trace", ["v2.sqlite", "sobel.sqlite"])
def test_the_memory_view_opens_on_every_drawn_work_group(browser, app, trace):
    browser.get(f"{app}/kernel?trace={trace}")
    extent = drive.wait(browser, lambda d: _memory_extent(d), "the memory view did not render")
    assert extent["n"] > 0 and extent["inside"] == extent["n"]
    # The drawn work-items fill the view: no more than a column of margin either side.
    assert extent["range"][0] >= extent["lo"] - 1 and extent["range"][1] <= extent["hi"] + 1


def test_a_2d_launch_draws_each_work_group_as_one_block(browser, app):
    browser.get(f"{app}/kernel?trace=sobel.sqlite")
    drive.wait(browser, lambda d: _memory_extent(d), "the memory view did not render")
    # Sobel's 16 x 8 tiles: work-items of one group share a contiguous run of 128 columns.
    columns = browser.execute_script(
        "var gd = document.querySelector('#kv-memory-0 .js-plotly-plot'); var out = {};"
        "gd._fullData.filter(t => t.meta && t.meta[0] === 'access').forEach(t => {"
        " for (var i = 0; i < t._length; i++) {"
        "  var item = t.customdata[i][5]; var group = Math.floor(item % 32 / 16) +"
        "   2 * Math.floor(item / 32 / 8);"
        "  (out[group] = out[group] || []).push(t.x[i]); } });"
        "var spans = {}; Object.keys(out).forEach(g => { spans[g] = [Math.min.apply(null, out[g]),"
        " Math.max.apply(null, out[g])]; }); return spans;")
    assert columns
    for group, (lo, hi) in columns.items():
        assert hi - lo < 128 and lo // 128 == int(group), (group, lo, hi)


def test_donuts_and_memory_view_are_on_screen_together(browser, app):
    browser.set_window_size(1600, 1000)
    try:
        browser.get(f"{app}/kernel?trace=v2.sqlite")
        drive.wait(browser, lambda d: _memory_extent(d), "the memory view did not render")
        tops = browser.execute_script(
            "return ['kv-memory-0', 'kv-donuts'].map(id => {"
            " var r = document.getElementById(id).getBoundingClientRect();"
            " return [r.top, Math.min(r.bottom, innerHeight) - r.top]; }).concat([innerHeight]);")
        (memory, memory_seen), (donuts, donuts_seen), height = tops
        assert 0 <= memory < height and memory_seen > 150
        assert 0 <= donuts < height and donuts_seen > 100
    finally:
        browser.set_window_size(1400, 1000)


# -- 4. never a blank wait: a loading indicator, a Run button that shows it is busy ------
RECORD = (
    # After any change to the page (React may re-create an element rather than restyle it),
    # note whether the Run button is disabled and whether a loading wrapper is dimmed.
    "window.gsSeen = []; new MutationObserver(() => {"
    " var run = document.getElementById('kv-run');"
    " if (run && run.disabled) { window.gsSeen.push('disabled'); }"
    " document.querySelectorAll('.gs-loading').forEach(el => {"
    "  if (el.style.opacity === '0.5') { window.gsSeen.push('dimmed'); } }); })"
    ".observe(document.body, {subtree: true, childList: true, attributes: true,"
    " attributeFilter: ['disabled', 'style']});")


def test_a_page_change_shows_a_loading_indicator(browser, app):
    _open_overview(browser, app, "transpose.sqlite")
    browser.execute_script(RECORD)
    # The indicator waits 150 ms before it shows, so that a quick answer does not flash;
    # on a quiet machine the page comes back sooner. A real slow link (Chromium's own
    # network emulation) makes the wait one the user would see.
    browser.execute_cdp_cmd("Network.enable", {})
    browser.execute_cdp_cmd("Network.emulateNetworkConditions", {
        "offline": False, "latency": 800, "downloadThroughput": -1, "uploadThroughput": -1})
    try:
        drive.click(browser, By.CSS_SELECTOR, ".pagination a.page-link")  # page 2 (the first real link)
        drive.wait(browser, lambda d: "dimmed" in d.execute_script("return window.gsSeen;"),
                   "no loading indicator while the page was rebuilt")
        drive.wait(browser, lambda d: drive.query(d).get("page") == "2", "the click did not turn the page")
    finally:
        browser.execute_cdp_cmd("Network.emulateNetworkConditions", {
            "offline": False, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1})
        browser.execute_cdp_cmd("Network.disable", {})


def test_the_run_button_is_on_screen_and_disabled_while_running(browser, app):
    browser.set_window_size(1600, 1000)
    try:
        browser.get(f"{app}/kernel?trace=v2.sqlite")
        drive.wait(browser, lambda d: d.find_element(By.ID, "kv-run").is_displayed(),
                   "no Run button")
        bottom, height = browser.execute_script(
            "return [document.getElementById('kv-run').getBoundingClientRect().bottom,"
            " innerHeight];")
        assert bottom < height
        browser.execute_script(RECORD)
        browser.execute_script("document.getElementById('kv-run').click();")
        drive.wait(browser, lambda d: "run=" in d.current_url, "the run did not finish")
        assert "disabled" in browser.execute_script("return window.gsSeen;")
        drive.wait(browser, lambda d: not d.find_element(By.ID, "kv-run").get_attribute("disabled"),
                   "the Run button stayed disabled")
    finally:
        browser.set_window_size(1400, 1000)


# -- 7, 12: separate bars, the current task marked; a PNG that says what it shows -------
def test_bars_are_separated_the_current_task_is_outlined_and_the_png_has_a_title(
        browser, app, traces):
    with sqlite3.connect(traces / "transpose.sqlite") as db:
        key = db.execute("SELECT t.id FROM task t JOIN location l ON l.id = t.location"
                         " WHERE l.name = 'GPU.DRAM[0]' ORDER BY t.start_ps LIMIT 1 OFFSET 5"
                         ).fetchone()[0]
    browser.get(f"{app}/component?trace=transpose.sqlite&loc=GPU.DRAM%5B0%5D&task={key}")
    outlines = drive.wait(browser, lambda d: d.execute_script(
        "var gd = document.querySelector('#cv-graph .js-plotly-plot');"
        "if (!gd || !gd.data) { return null; } var out = [];"
        "gd.data.filter(t => t.type === 'bar' && t.meta[1] === 'component').forEach(t =>"
        " t.customdata.forEach((c, i) => out.push([c[0], t.marker.line.width[i],"
        " t.marker.line.color[i]]))); return out.length ? out : null;"),
        "no component bars drawn")
    current = [o for o in outlines if o[0] == key]
    assert current and current[0][1] > 2
    others = [o for o in outlines if o[0] != key]
    assert others and all(o[2].startswith("rgba(255, 255, 255") for o in others)
    browser.execute_script(
        "window.gsPng = null; window.Plotly.downloadImage = function (fig, opts) {"
        " window.gsPng = {title: fig.layout.title.text, legend: fig.layout.showlegend,"
        " entries: fig.data.filter(t => t.showlegend).map(t => t.name),"
        " file: opts.filename}; return Promise.resolve(); };")
    drive.click(browser, By.CSS_SELECTOR, ".gs-png")
    png = drive.wait(browser, lambda d: d.execute_script("return window.gsPng;"), "no PNG made")
    assert png["title"].startswith("transpose.sqlite · GPU.DRAM[0] · ")
    assert png["legend"] and png["entries"] and len(set(png["entries"])) == len(png["entries"])


# -- 11. a bundled workload shows the Debug view ------------------------------------------
def test_vectoradd_shows_its_emitted_sums_in_the_debug_view(browser, app):
    browser.get(f"{app}/kernel?trace=vectoradd.sqlite")
    points = drive.wait(browser, lambda d: d.execute_script(
        "var gd = document.querySelector('#kv-debug-0 .js-plotly-plot');"
        "return gd && gd._fullData ? gd._fullData[0]._length : null;"), "no Debug view drawn")
    assert points == 64


def test_each_kernel_chart_has_a_png_button_that_saves_it_titled(browser, app):
    browser.get(f"{app}/kernel?trace=vectoradd.sqlite")
    drive.wait(browser, lambda d: d.execute_script(
        "var gd = document.querySelector('#kv-debug-0 .js-plotly-plot');"
        "return !!(gd && gd._fullData);"), "no Debug view drawn")
    graphs = browser.execute_script(
        "return Array.from(document.querySelectorAll('.gs-png')).map(b => b.dataset.graph);")
    assert "kv-debug-0" in graphs and all(browser.execute_script(
        "return !!document.getElementById(arguments[0]);", g) for g in graphs)
    browser.execute_script(
        "window.gsPng = null; window.Plotly.downloadImage = function (fig, opts) {"
        " window.gsPng = {title: fig.layout.title.text, file: opts.filename};"
        " return Promise.resolve(); };")
    drive.click(browser, By.CSS_SELECTOR, '.gs-png[data-graph="kv-debug-0"]')
    png = drive.wait(browser, lambda d: d.execute_script("return window.gsPng;"), "no PNG made")
    assert png["title"].startswith("vectoradd.sqlite · ") and "debug chart 1" in png["title"]
    assert png["file"].startswith("vectoradd.sqlite-")
