"""The Overview, Component and Task views in headless Chromium, against the real server."""
from urllib.parse import urlparse

import driving as drive
import pytest
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

pytestmark = pytest.mark.browser
L2 = [f"GPU.L2[{i}]" for i in range(16)]


def _titles(browser):
    return browser.execute_script(
        "return Array.from(document.querySelectorAll('.gs-chart-title'))"
        ".map(e => e.textContent);")


def _ranges(browser):
    """The time range of every chart (the charts are subplots of one figure)."""
    return browser.execute_script(
        "var gd = document.querySelector('.gs-ov-graph .js-plotly-plot');"
        "if (!gd || !gd._fullLayout) { return []; }"
        "return Object.keys(gd._fullLayout).filter(k => /^xaxis[0-9]*$/.test(k))"
        ".map(k => gd._fullLayout[k].range);")


def _open_overview(browser, app_url, query="filter=L2&sort=name"):
    browser.get(f"{app_url}/overview?{query}")
    drive.wait(browser, lambda d: len(_titles(d)) > 0 and len(_ranges(d)) == len(_titles(d)),
               "the overview charts did not render")


def test_filter_in_the_url_shows_exactly_the_l2_components(browser, app_url):
    _open_overview(browser, app_url)
    assert _titles(browser) == L2


def test_zooming_one_chart_moves_every_chart_and_the_url(browser, app_url):
    _open_overview(browser, app_url)
    before = _ranges(browser)
    drag = browser.find_elements(By.CSS_SELECTOR, ".gs-ov-graph .nsewdrag")[3]
    width = drag.size["width"]
    ActionChains(browser).move_to_element_with_offset(drag, -width // 4, 0).click_and_hold() \
        .move_by_offset(width // 5, 0).pause(0.2).move_by_offset(width // 10, 0).release() \
        .perform()
    drive.wait(browser, lambda d: "t0" in drive.query(d), "the zoom did not reach the URL")
    q = drive.query(browser)
    t0, t1 = int(q["t0"]), int(q["t1"])
    assert q["filter"] == "L2" and 0 <= t0 < t1

    def all_moved(d):
        ranges = _ranges(d)
        return len(ranges) == 16 and all(
            r is not None and abs(r[0] - t0 * 1e-12) < 1e-15 + 1e-9 * abs(t0 * 1e-12)
            and abs(r[1] - t1 * 1e-12) < 1e-15 + 1e-9 * abs(t1 * 1e-12) for r in ranges)
    drive.wait(browser, all_moved, "not every chart moved to the zoomed window")
    assert _ranges(browser) != before


def test_a_charts_png_button_saves_that_chart_alone_titled(browser, app_url):
    _open_overview(browser, app_url)
    browser.execute_script(
        "window.gsPng = null; window.Plotly.downloadImage = function (fig, opts) {"
        " window.gsPng = {title: fig.layout.title.text, file: opts.filename,"
        " axes: fig.data.map(t => [t.xaxis, t.yaxis, t.name]),"
        " range: fig.layout.xaxis.range, right: fig.layout.yaxis2.overlaying,"
        " names: [fig.layout.yaxis.title.text, fig.layout.yaxis2.title.text],"
        " times: fig.layout.xaxis.showticklabels, rate: fig.data[1].y};"
        " return Promise.resolve(); };")
    drawn_rate = browser.execute_script(
        "var gd = document.querySelector('.gs-ov-graph .js-plotly-plot');"
        "return gd.data.filter(t => t.xaxis === 'x3')[1].customdata;")
    button = browser.find_elements(By.CSS_SELECTOR, "#ov-grid .gs-png")[2]
    browser.execute_script("arguments[0].click();", button)
    png = drive.wait(browser, lambda d: d.execute_script("return window.gsPng;"), "no PNG made")
    assert " · GPU.L2[2] · " in png["title"] and "GPU.L2_2_" in png["file"]
    # Chart 3's own two series, on a figure of its own, at the window drawn.
    assert [a[:2] for a in png["axes"]] == [["x", "y"], ["x", "y2"]] and png["right"] == "y"
    assert png["rate"] == drawn_rate  # back on its own axis, its own values
    assert png["range"] == _ranges(browser)[2]
    # Its axes named (the page names them once, above the grid) and its time labelled.
    assert png["names"] == ["Concurrent tasks", "Request arrival rate (per ns)"] and png["times"]


def test_each_charts_right_axis_is_labelled_beside_its_plot_in_its_colour(browser, app_url):
    """The grid draws a right axis's line against the left axis and labels the right
    axis itself (grid.js): the labels sit right of the plot, bottom to top, the lowest
    one at the plot's bottom, in the axis's colour."""
    _open_overview(browser, app_url)
    boxes = browser.execute_script(
        "var gd = document.querySelector('.gs-ov-graph .js-plotly-plot');"
        "return Array.from(document.querySelectorAll('#ov-grid .gs-grid-right')).map((box, i) => {"
        " var n = i + 1, x = gd._fullLayout[n > 1 ? 'xaxis' + n : 'xaxis'],"
        "  y = gd._fullLayout[n > 1 ? 'yaxis' + (2 * n - 1) : 'yaxis'],"
        "  plot = gd.getBoundingClientRect();"
        " return {right: plot.left + x._offset + x._length, bottom: plot.top + y._offset + y._length,"
        "  labels: Array.from(box.children).map(s => { var r = s.getBoundingClientRect();"
        "   return [s.textContent, r.left, (r.top + r.bottom) / 2, getComputedStyle(s).color]; })};"
        "});")
    assert len(boxes) == 16
    labelled = [b for b in boxes if len(b["labels"]) > 1]
    assert labelled, "no chart has a right axis with values"
    for box in boxes:
        text, left, middle, colour = box["labels"][0]
        assert text == "0" and abs(middle - box["bottom"]) <= 1.5
        for label in box["labels"]:
            assert label[1] >= box["right"] and label[3] == "rgb(44, 123, 182)"  # SECONDARY
        assert [lab[2] for lab in box["labels"]] == sorted(
            (lab[2] for lab in box["labels"]), reverse=True)


def test_the_charts_fill_the_page_and_follow_the_windows_width(browser, app_url):
    _open_overview(browser, app_url)
    width = ("var gd = document.querySelector('.gs-ov-graph .js-plotly-plot');"
             "return [gd._fullLayout.width, gd.parentNode.clientWidth];")
    drawn, room = browser.execute_script(width)
    assert abs(drawn - room) <= 1
    before = browser.get_window_size()
    try:
        browser.set_window_size(before["width"] - 300, before["height"])
        drive.wait(browser, lambda d: (lambda w: w[0] < drawn - 200 and abs(w[0] - w[1]) <= 1)(
            d.execute_script(width)), "the charts did not follow the narrower window")
        # The titles move with their charts.
        drive.wait(browser, lambda d: d.execute_script(
            "var t = document.querySelectorAll('#ov-grid .gs-grid-title');"
            "return t[3].getBoundingClientRect().right <= arguments[0];", drawn - 200),
            "the titles did not follow their charts")
    finally:
        browser.set_window_size(before["width"], before["height"])


def test_drawing_a_page_runs_none_of_its_url_callbacks_on_the_server(browser, app_url):
    """The callbacks that write the URL (filter, zoom, finder…) run when used, not after
    every page is drawn (a round trip each that the page waited for)."""
    _open_overview(browser, app_url)
    browser.execute_script(
        "window.gsOutputs = []; var fetch = window.fetch;"
        "window.fetch = function (url, options) {"
        " if (String(url).indexOf('_dash-update-component') >= 0) {"
        "  window.gsOutputs.push(JSON.parse(options.body).output); }"
        " return fetch.apply(this, arguments); };")
    browser.execute_script(
        "window.history.pushState({}, '', '/overview?filter=L2&t0=20000&t1=90000');"
        "window.dispatchEvent(new CustomEvent('_dashprivate_pushstate'));")
    drive.wait(browser, lambda d: (r := _ranges(d)) and len(r) == 16 and
               abs(r[0][1] - 90000e-12) < 1e-15, "the zoomed page was not drawn")
    ActionChains(browser).pause(0.5).perform()  # anything the drawn page fires, fired
    outputs = browser.execute_script("return window.gsOutputs;")
    assert any("_pages_content.children" in o for o in outputs)
    # Nor does the navbar's trace picker, set to the page's trace, ask whether it was a pick,
    # nor the navbar, whose trace the zoom did not change.
    assert not [o for o in outputs if "ov-url" in o or "_pages_location" in o]
    assert not [o for o in outputs if "gs-current-trace" in o], outputs


def test_clicking_a_title_opens_its_component_view_at_the_window(browser, app_url):
    _open_overview(browser, app_url, "filter=L2&sort=name&t0=20000&t1=90000")
    browser.find_elements(By.CSS_SELECTOR, ".gs-chart-title")[2].click()
    drive.wait(browser, lambda d: urlparse(d.current_url).path == "/component",
               "the component page did not open")
    query = drive.query(browser)
    assert (query["loc"], query["t0"], query["t1"]) == ("GPU.L2[2]", "20000", "90000")
    drive.wait(browser, lambda d: d.find_element(By.ID, "cv-location").text == "GPU.L2[2]",
               "the component view did not render")


def _bars(browser, role):
    return browser.execute_script(
        "var gd = document.querySelector('#cv-graph .js-plotly-plot');"
        "if (!gd || !gd.data) { return null; }"
        "return gd.data.filter(t => t.type === 'bar' && t.meta[1] === arguments[0])"
        ".map(t => t.customdata.map(c => c[0])).flat();", role)


def test_clicking_a_bar_sets_the_task_and_updates_the_task_view(browser, app_url):
    browser.get(f"{app_url}/component?loc=GPU.L2%5B1%5D")
    drive.wait(browser, lambda d: _bars(d, "component"), "no component bars drawn")
    assert not _bars(browser, "task")
    points = browser.find_elements(By.CSS_SELECTOR, "#cv-graph .barlayer .point path")
    target = max(points, key=lambda p: p.size["width"] * p.size["height"])
    ActionChains(browser).move_to_element(target).pause(0.3).click().perform()
    drive.wait(browser, lambda d: "task" in drive.query(d), "clicking a bar did not set the task")
    key = int(drive.query(browser)["task"])
    drive.wait(browser, lambda d: d.find_element(By.ID, "cv-task").get_attribute("textContent")
               == str(key), "the page did not switch to the clicked task")
    drive.wait(browser, lambda d: key in (_bars(d, "task") or []), "the Task view is empty")
    assert key in _bars(browser, "component")


def test_back_and_forward_restore_the_views(browser, app_url):
    _open_overview(browser, app_url)
    box = browser.find_element(By.ID, "ov-filter")
    # Select and overwrite: clear() would blur the box and apply an empty filter first.
    box.send_keys(Keys.CONTROL, "a")
    box.send_keys("DRAM", Keys.ENTER)
    drive.wait(browser, lambda d: drive.query(d).get("filter") == "DRAM", "the filter did not reach the URL")
    assert drive.query(browser).get("sort") == "name"  # kept from the page it replaced
    drive.wait(browser, lambda d: _titles(d) == [f"GPU.DRAM[{i}]" for i in range(16)],
               "the DRAM charts did not render")
    browser.back()
    drive.wait(browser, lambda d: drive.query(d).get("filter") == "L2", "Back did not restore the URL")
    drive.wait(browser, lambda d: _titles(d) == L2, "Back did not restore the L2 charts")
    assert browser.find_element(By.ID, "ov-filter").get_attribute("value") == "L2"
    browser.forward()
    drive.wait(browser, lambda d: _titles(d) == [f"GPU.DRAM[{i}]" for i in range(16)],
               "Forward did not restore the DRAM charts")


def test_an_invalid_regex_shows_a_message(browser, app_url):
    _open_overview(browser, app_url, query="")
    box = browser.find_element(By.ID, "ov-filter")
    box.send_keys("(CU", Keys.ENTER)
    drive.wait(browser, lambda d: any("Invalid regular expression" in e.text for e in
                                      d.find_elements(By.CSS_SELECTOR, ".gs-message")),
          "no message for the invalid pattern")


def _bar_opacities(browser):
    return browser.execute_script(
        "return Array.from(document.querySelectorAll('#cv-graph .barlayer .trace')).map("
        "g => [g.__data__[0].trace.meta[0],"
        " Array.from(g.querySelectorAll('.point')).map(p => p.style.opacity)]);")


def test_hovering_a_legend_entry_highlights_that_kind(browser, app_url):
    browser.get(f"{app_url}/component?loc=GPU.L2%5B1%5D")
    drive.wait(browser, lambda d: _bars(d, "component"), "no component bars drawn")
    entry = browser.find_element(By.CSS_SELECTOR, "#cv-legend [data-kind^='req_in']")
    label = entry.get_attribute("data-kind")

    def highlighted(d):
        groups = _bar_opacities(d)
        if groups and all(
                all(o == ("1" if kind == label else "0.18") for o in ops) for kind, ops in groups):
            return True
        _hover_afresh(d, lambda: d.find_element(
            By.CSS_SELECTOR, "#cv-legend [data-kind^='req_in']"))
        return False
    drive.wait(browser, highlighted, "the legend hover did not highlight its kind")
    ActionChains(browser).move_to_element(browser.find_element(By.ID, "cv-location")).perform()
    drive.wait(browser, lambda d: all(o == "" for _, ops in _bar_opacities(d) for o in ops),
               "leaving the legend did not clear the highlight")


FIND_BAR = (
    "var gd = document.querySelector('#cv-graph .js-plotly-plot'); var out = null;"
    "gd.querySelectorAll('.barlayer .trace').forEach(function (g) {"
    "  var t = g.__data__[0].trace;"
    "  if (t.meta[1] !== ROLE) { return; }"
    "  g.querySelectorAll('.point').forEach(function (p) {"
    "    if (t.customdata[p.__data__.i][0] === KEY) { out = p.querySelector('path'); } }); });"
    "return out;")


def _bar(browser, role, key):
    return browser.execute_script(FIND_BAR.replace("ROLE", repr(role)).replace("KEY", str(key)))


def _hover_afresh(browser, find):
    """Move off to a neutral element, then onto ``find()``: a new hover event each call."""
    target = find()
    if target is not None:
        ActionChains(browser).move_to_element(browser.find_element(By.ID, "cv-location")) \
            .move_to_element(target).perform()


def _open_a_task(browser, app_url):
    """Open GPU.L2[1]'s Component view and click its largest bar to make it current."""
    browser.get(f"{app_url}/component?loc=GPU.L2%5B1%5D")
    drive.wait(browser, lambda d: _bars(d, "component"), "no component bars drawn")
    points = browser.find_elements(By.CSS_SELECTOR, "#cv-graph .barlayer .point path")
    ActionChains(browser).move_to_element(max(
        points, key=lambda p: p.size["width"] * p.size["height"])).pause(0.2).click().perform()
    drive.wait(browser, lambda d: _bars(d, "task"), "the Task view is empty")


def test_clicking_the_parent_walks_up_the_tree(browser, app_url):
    _open_a_task(browser, app_url)
    child = int(drive.query(browser)["task"])
    fields = browser.execute_script(
        "var gd = document.querySelector('#cv-graph .js-plotly-plot'); var out = {};"
        "gd.data.forEach(function (t) { if (t.type === 'bar' && t.meta[1] === 'task') {"
        "  t.customdata.forEach(function (c) { out[c[0]] = c; }); } });"
        "return out;")
    parent = fields[str(child)][8]
    parent_location = fields[parent][4]
    ActionChains(browser).move_to_element(_bar(browser, "task", int(parent))).pause(0.2) \
        .click().perform()
    drive.wait(browser, lambda d: drive.query(d).get("task") == parent, "the parent did not become current")
    # The Component view follows the parent to its own component.
    drive.wait(browser, lambda d: d.find_element(By.ID, "cv-location").text == parent_location,
               "the Component view did not move to the parent's component")
    assert drive.query(browser)["loc"] == parent_location
    drive.wait(browser, lambda d: int(parent) in (_bars(d, "component") or []),
               "the parent is not drawn in its Component view")


def test_hovering_a_bar_highlights_the_same_task_in_both_views(browser, app_url):
    _open_a_task(browser, app_url)
    key = int(drive.query(browser)["task"])

    def is_lit(d):
        lit_keys = d.execute_script(
            "var keys = [];"
            "document.querySelectorAll('#cv-graph .barlayer .trace').forEach(function (g) {"
            "  var t = g.__data__[0].trace;"
            "  g.querySelectorAll('.point').forEach(function (p) {"
            "    if (p.style.opacity === '1') {"
            "      keys.push([t.meta[1], t.customdata[p.__data__.i][0]]); }"
            "  }); });"
            "return keys;")
        return sorted(map(tuple, lit_keys)) == [("component", key), ("task", key)]

    def lit(d):
        if is_lit(d):
            return True
        # Hover the current task's bar in the Task view, looked up afresh on every try: the
        # figure may still be redrawn once after the click, detaching an earlier element.
        _hover_afresh(d, lambda: _bar(d, "task", key))
        return False
    drive.wait(browser, lit, "hovering did not highlight the task in both views")


def test_dragging_the_task_view_zooms_both_views_and_sets_the_url(browser, app_url):
    browser.get(f"{app_url}/component?loc=GPU.L2%5B2%5D")
    drive.wait(browser, lambda d: _bars(d, "component"), "no component bars drawn")
    drag = browser.find_element(By.CSS_SELECTOR, "#cv-graph .nsewdrag")
    width, height = drag.size["width"], drag.size["height"]
    # The Task view is the top band of the one figure: drag there, left to right.
    ActionChains(browser).move_to_element_with_offset(drag, -width // 3, -height // 2 + 30) \
        .click_and_hold().move_by_offset(width // 6, 0).pause(0.2) \
        .move_by_offset(width // 6, 0).release().perform()
    drive.wait(browser, lambda d: "t0" in drive.query(d), "the zoom did not reach the URL")
    t0, t1 = int(drive.query(browser)["t0"]), int(drive.query(browser)["t1"])

    def shows_window(d):
        r = d.execute_script("var gd = document.querySelector('#cv-graph .js-plotly-plot');"
                             "return gd && gd.layout.xaxis.range;")
        return r and abs(r[0] * 1e12 - t0) < 2 and abs(r[1] * 1e12 - t1) < 2
    drive.wait(browser, shows_window, "the views did not redraw at the zoomed window")
    assert browser.find_element(By.ID, "cv-window-ps").get_attribute("textContent") == \
        f"{t0},{t1}"


def test_paging_sorting_and_metric_pickers_write_the_url(browser, app_url):
    _open_overview(browser, app_url, query="")
    first_page = _titles(browser)
    browser.find_element(By.XPATH, "//*[@id='ov-pages']//*[contains(., 'Next')]").click()
    drive.wait(browser, lambda d: drive.query(d).get("page") == "2", "Next did not reach the URL")
    drive.wait(browser, lambda d: _titles(d) and _titles(d) != first_page, "page 2 did not render")
    # By load is the default (issue 36): sorting by name reaches the URL.
    drive.click(browser, By.CSS_SELECTOR, "#ov-sort input[value='name']")
    drive.wait(browser, lambda d: drive.query(d).get("sort") == "name" and "page" not in drive.query(d),
               "sorting did not reach the URL (and go back to page 1)")
    # Wait for the page rebuilt by the sort, then open the picker and choose.
    drive.wait(browser, lambda d: d.find_element(
        By.CSS_SELECTOR, "#ov-sort input[value='name']").is_selected(), "sort not shown")

    def choose(d):
        options = d.find_elements(By.XPATH, "//*[text()='Busy fraction']")
        if options:
            options[-1].click()
            return True
        d.find_element(By.ID, "ov-secondary").click()  # open (again, if it was rebuilt)
        return False
    drive.wait(browser, choose, "could not choose a secondary metric")
    drive.wait(browser, lambda d: drive.query(d).get("secondary") == "busy",
               "the secondary metric did not reach the URL")
    drive.wait(browser, lambda d: "right axis: Busy fraction" in d.find_element(By.ID, "ov-key").text,
               "the charts do not show the chosen metric")
