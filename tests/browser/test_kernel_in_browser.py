"""The kernel page in headless Chromium: reduction v2's bank conflicts, the bank hover, and
editing the kernel into v3 in the browser (a real re-run) until the conflicts are gone."""
import math
import subprocess
import sys
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import driving as drive
import pytest
from selenium.webdriver.common.actions.action_builder import ActionBuilder
from selenium.webdriver.common.by import By

pytestmark = pytest.mark.browser
ROOT = Path(__file__).resolve().parents[2]
V3 = (ROOT / "simulator" / "kernels" / "builtin" / "reduction_v3.cl").read_text()


@pytest.fixture(scope="module")
def kernel_app(tmp_path_factory, serve_traces):
    """The app serving small reduction v2 (512 elements, work-groups of 128) and Sobel
    (32 x 16 pixels, work-groups of 16 x 8) traces."""
    directory = tmp_path_factory.mktemp("kernel-traces")
    subprocess.run([sys.executable, "-m", "simulator", "run", "reduction-v2", "--size", "512",
                    "--local", "128", "--trace-level", "kernel", "--no-progress",
                    "-o", str(directory / "v2.sqlite")], cwd=ROOT, check=True,
                   capture_output=True)
    subprocess.run([sys.executable, "-m", "simulator", "run", "sobel", "--width", "32",
                    "--height", "16", "--local-x", "16", "--local-y", "8", "--trace-level",
                    "kernel", "--no-progress", "-o", str(directory / "sobel.sqlite")],
                   cwd=ROOT, check=True, capture_output=True)
    return serve_traces(directory)


def _report(browser):
    el = browser.find_element(By.ID, "kv-bank-report-0")
    return el.text, int(el.get_attribute("data-conflicted"))


def _set_editor(browser, text):
    # React owns the textarea's value: set it through the native setter, then tell React.
    browser.execute_script(
        "var el = document.getElementById('kv-editor');"
        "var set = Object.getOwnPropertyDescriptor(HTMLTextAreaElement.prototype, 'value').set;"
        "set.call(el, arguments[0]); el.dispatchEvent(new Event('input', {bubbles: true}));",
        text)


def _run(browser):
    # A DOM click: the side column scrolls on its own, so a pointer click can land on
    # whatever scrolled over the button in between.
    browser.execute_script("arguments[0].click();", browser.find_element(By.ID, "kv-run"))


def _open(browser, kernel_app, trace="v2.sqlite"):
    browser.get(f"{kernel_app}/kernel?trace={trace}")
    drive.wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, ".kv-banks .barlayer .point"),
               "the bank panel did not render")


def _bound(browser, graph):
    """Wait until assets/kernel.js listens to ``graph`` (it binds graphs as they appear)
    and the graph has its final width: a hover before the first would go unseen, and a
    graph still resizing to its column redraws under the mouse, which Plotly answers with
    a hover on whatever bar is now there."""
    drive.wait(browser, lambda d: d.execute_script(
        "var gd = document.querySelector(arguments[0] + ' .js-plotly-plot');"
        "return !!(gd && gd.kvBound && gd._fullLayout"
        " && Math.abs(gd._fullLayout.width - gd.getBoundingClientRect().width) < 1);", graph),
        f"{graph} was never bound at its final width")


def _point_at(browser, x, y):
    """Move the mouse to viewport pixel (x, y), then one pixel aside and back: Plotly
    throttles hover handling, and the last position is the one it must see."""
    actions = ActionBuilder(browser)
    for dx in (0, 1, 0):
        actions.pointer_action.move_to_location(int(x) + dx, int(y)).pause(0.2)
    actions.perform()


def _hover(browser, css, index):
    element = browser.find_elements(By.CSS_SELECTOR, css)[index]
    # Viewport coordinates after an instant scroll (Bootstrap makes scrolling smooth, so a
    # rectangle read during the animation is stale).
    rect = browser.execute_script(
        "arguments[0].scrollIntoView({block: 'center', behavior: 'instant'});"
        "var r = arguments[0].getBoundingClientRect();"
        "return [r.x + r.width / 2, r.y + r.height / 2];", element)
    _point_at(browser, *rect)


def test_v2_bank_panel_reports_conflicts_and_a_bank_hover_highlights_accesses(
        browser, kernel_app):
    _open(browser, kernel_app)
    text, conflicted = _report(browser)
    assert text.startswith("Bank conflicts:") and conflicted > 0
    # Bank 2 is hit by the strided steps of v2 (words 0, 2, 4, ... of each step).
    _bound(browser, ".kv-banks")
    _hover(browser, ".kv-banks .barlayer .point", 2)
    info = browser.find_element(By.CSS_SELECTOR, ".kv-hover-info")
    drive.wait(browser, lambda d: int(info.get_attribute("data-highlighted")) > 0,
               "hovering a bank highlighted no access")
    assert info.text.startswith("bank 2:") and "conflict degree" in info.text
    # The highlighted points are exactly the accesses to bank 2, in the plot itself.
    picked = browser.execute_script(
        "var gd = document.querySelector('.kv-memory .js-plotly-plot');"
        "return gd.data.filter(t => t.meta && t.meta[0] === 'access')"
        ".reduce((n, t) => n + (t.selectedpoints || []).length, 0);")
    assert picked == int(info.get_attribute("data-highlighted"))


def test_an_edit_with_an_error_comes_back_with_line_and_column(browser, kernel_app):
    _open(browser, kernel_app)
    _set_editor(browser, V3.replace("int tid = get_local_id(0);", "int tid = get_local_id(0)"))
    _run(browser)
    error = drive.wait(browser, lambda d: d.find_elements(By.ID, "kv-run-error"),
                       "no error message came back")[0]
    assert error.text.startswith("kernel.cl:") and error.text.split(":")[1].isdigit()
    assert "run" not in parse_qs(urlparse(browser.current_url).query)


def test_editing_the_kernel_into_v3_and_rerunning_shows_no_conflicts(browser, kernel_app):
    _open(browser, kernel_app)
    _set_editor(browser, V3)
    _run(browser)
    drive.wait(browser, lambda d: "run" in parse_qs(urlparse(d.current_url).query),
               "the edited run did not open")
    drive.wait(browser, lambda d: _report(d)[0].startswith("No bank conflicts"),
               "the re-run still reports bank conflicts")
    assert _report(browser)[1] == 0
    assert "(edited run)" in browser.find_element(By.ID, "kv-title").text


def test_a_pattern_bin_colours_the_source_and_paints_its_pixels(browser, kernel_app):
    _open(browser, kernel_app, "sobel.sqlite")
    drive.wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, ".kv-image .js-plotly-plot"),
               "the work-item image did not render")
    _bound(browser, ".kv-histogram")
    # The second-largest pattern: work-items on a tile edge, which load the apron.
    _hover(browser, ".kv-histogram .barlayer .point", 1)

    def states(d):
        return d.execute_script(
            "var out = {}; document.querySelectorAll('#kv-source .kv-line').forEach(function (e) {"
            " ['kv-taken', 'kv-not-taken', 'kv-mixed', 'kv-faded'].forEach(function (c) {"
            " if (e.classList.contains(c)) { out[c] = (out[c] || 0) + 1; } }); }); return out;")
    found = drive.wait(browser, lambda d: states(d) or None, "hovering a bin coloured no source line")
    assert found.get("kv-taken") and found.get("kv-not-taken") and found.get("kv-faded")
    painted = browser.execute_script(
        "var gd = document.querySelector('.kv-image .js-plotly-plot');"
        "var paint = gd.data.find(t => (t.meta || [])[0] === 'paint');"
        "return paint.z.reduce((n, row) => n + row.reduce((a, b) => a + b, 0), 0);")
    assert 0 < painted < 32 * 16


def test_a_donut_region_highlights_the_accesses_of_its_work_items(browser, kernel_app):
    _open(browser, kernel_app)
    _bound(browser, ".kv-donuts")
    # Point the mouse into the ring, in the middle of the first donut's first region
    # (regions start at 12 o'clock and go clockwise), from Plotly's own geometry.
    x, y, radius, share = browser.execute_script(
        "var gd = document.querySelector('.kv-donuts .js-plotly-plot');"
        "gd.scrollIntoView({block: 'center', behavior: 'instant'});"
        "var box = gd.getBoundingClientRect(), cd = gd.calcdata[0][0];"
        "var values = Array.from(gd.data[0].values);"
        "return [box.x + cd.cx, box.y + cd.cy, cd.r,"
        " values[0] / values.reduce((a, b) => a + b, 0)];")
    angle = math.pi * share
    radius *= 0.78
    _point_at(browser, x + radius * math.sin(angle), y - radius * math.cos(angle))
    info = browser.find_element(By.CSS_SELECTOR, ".kv-hover-info")
    drive.wait(browser, lambda d: int(info.get_attribute("data-highlighted")) > 0,
               "hovering a donut region highlighted no access")
    assert "work-items of this pattern" in info.text
