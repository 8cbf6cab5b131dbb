"""The Findings page in headless Chromium, on the Daisen case study (PageRank at its
default size): a finding's evidence opens the Overview on its components and window, and
(back on the Findings page) the Task view of the task behind a tail, each drawn."""
import subprocess
import sys
import time
from pathlib import Path

import driving as drive
import pytest
from selenium.webdriver.common.by import By
from test_views_in_browser import _bars, _ranges, _titles

pytestmark = pytest.mark.browser
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def pagerank_app(tmp_path_factory, serve_traces):
    directory = tmp_path_factory.mktemp("findings-traces")
    subprocess.run([sys.executable, "-m", "simulator", "run", "pagerank", "--no-progress",
                    "-o", str(directory / "pagerank.sqlite")], cwd=ROOT, check=True,
                   capture_output=True)
    return serve_traces(directory)


def _evidence(browser, view):
    """The href of the first evidence link to ``view`` on the Findings page."""
    return browser.execute_script(
        "var a = document.querySelector('li[data-view=\"' + arguments[0] + '\"] a');"
        "return a ? a.getAttribute('href') : null;", view)


def _open_findings(browser, url):
    browser.get(f"{url}/findings?trace=pagerank.sqlite")
    drive.wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, ".fd-finding")
               and d.find_elements(By.CSS_SELECTOR, "#fd-sol .barlayer .point"),
               "the findings and their charts did not render")


def test_evidence_opens_the_overview_and_the_task_view(browser, pagerank_app):
    started = time.monotonic()
    _open_findings(browser, pagerank_app)
    opened = time.monotonic() - started
    ranked = browser.execute_script(
        "return Array.from(document.querySelectorAll('.fd-explains')).map(e => e.textContent);")
    assert len(ranked) >= 4 and ranked[0].startswith("explains ")

    href = _evidence(browser, "overview")
    drive.click(browser, By.CSS_SELECTOR, 'li[data-view="overview"] a')
    drive.wait(browser, lambda d: drive.path(d) == "/overview", "the Overview did not open")
    query = drive.query(browser)
    t0, t1 = int(query["t0"]), int(query["t1"])
    assert f"t0={t0}&t1={t1}" in href and query["filter"].startswith("CommandProcessor|")

    def drawn_on_the_window(d):
        ranges = _ranges(d)
        return len(_titles(d)) > 0 and len(ranges) == len(_titles(d)) and all(
            r is not None and r[0] == pytest.approx(t0 * 1e-12) and r[1] == pytest.approx(t1 * 1e-12)
            for r in ranges)
    drive.wait(browser, drawn_on_the_window, "the Overview's charts did not draw on the window")
    assert _titles(browser)[0] == "GPU.CommandProcessor"

    browser.back()
    drive.wait(browser, lambda d: drive.path(d) == "/findings", "Back did not return")
    drive.wait(browser, lambda d: _evidence(d, "task"), "the findings did not render again")
    drive.click(browser, By.CSS_SELECTOR, 'li[data-view="task"] a')
    drive.wait(browser, lambda d: drive.path(d) == "/component" and "task" in drive.query(d),
               "the Task view did not open")
    key = int(drive.query(browser)["task"])
    drive.wait(browser, lambda d: key in (_bars(d, "task") or []), "the Task view is empty")
    assert key in _bars(browser, "component")
    assert drive.text(browser, "cv-task") == str(key)
    print(f"findings page drawn in {opened:.1f} s (analysis included); "
          f"whole walk {time.monotonic() - started:.1f} s")


@pytest.fixture(scope="module")
def profile_app(tmp_path_factory, serve_traces, shared_trace):
    """A real Kineto trace (HTA's AlexNet on an A100: long GPU gaps, a CPU thread that
    launches), imported as a user would."""
    source = shared_trace("hta_alexnet_a100.json.gz")
    directory = tmp_path_factory.mktemp("profile-traces")
    subprocess.run([sys.executable, "-m", "simulator", "import", str(source), "-o",
                    str(directory / "alexnet.sqlite")], cwd=ROOT, check=True, capture_output=True)
    return serve_traces(directory)


def _link_of(browser, rule, view, nth=0):
    """The href of the ``nth`` evidence link to ``view`` of the first ``rule`` finding."""
    return browser.execute_script(
        "var f = document.querySelector('.fd-finding[data-rule=\"' + arguments[0] + '\"]');"
        "if (!f) { return null; }"
        "var a = f.querySelectorAll('li[data-view=\"' + arguments[1] + '\"] a')[arguments[2]];"
        "return a ? a.getAttribute('href') : null;", rule, view, nth)


def _follow(browser, rule, view, nth=0):
    href = _link_of(browser, rule, view, nth)
    browser.execute_script(
        "document.querySelector('.fd-finding[data-rule=\"' + arguments[0] + '\"]')"
        ".querySelectorAll('li[data-view=\"' + arguments[1] + '\"] a')[arguments[2]].click();",
        rule, view, nth)
    drive.wait(browser, lambda d: drive.path(d) == "/component", f"{href} did not open")
    return drive.query(browser)


def _drawn(browser):
    """Whether the Component view's chart has been laid out (a gap's window holds no bar)."""
    return browser.execute_script(
        "var gd = document.querySelector('#cv-graph .js-plotly-plot');"
        "return !!(gd && gd._fullLayout && gd._fullLayout.xaxis);")


def test_a_profile_s_findings_open_the_gap_s_stream_its_thread_and_the_path_s_task(
        browser, profile_app):
    started = time.monotonic()
    browser.get(f"{profile_app}/findings?trace=alexnet.sqlite")
    drive.wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, ".fd-finding[data-rule=gaps]")
               and d.find_elements(By.CSS_SELECTOR, "#fd-devices .barlayer .point"),
               "the profile's findings and its time budget did not render")
    opened = time.monotonic() - started
    assert "GPU 0:" in drive.text(browser, "fd-summary")
    assert "critical path (I10)" in drive.text(browser, "fd-summary")

    query = _follow(browser, "gaps", "component")
    stream, t0, t1 = query["loc"], int(query["t0"]), int(query["t1"])
    assert stream.startswith("GPU[0].stream[")
    drive.wait(browser, lambda d: drive.text(d, "cv-location") == stream and _drawn(d),
               "the gap's stream did not draw")

    browser.back()
    drive.wait(browser, lambda d: _link_of(d, "gaps", "component", 1), "Back did not return")
    query = _follow(browser, "gaps", "component", 1)
    thread = query["loc"]
    assert "thread" in thread and (int(query["t0"]), int(query["t1"])) == (t0, t1)
    drive.wait(browser, lambda d: drive.text(d, "cv-location") == thread and _bars(d, "component"),
               "the launching thread's tasks over the gap did not draw")

    browser.back()
    drive.wait(browser, lambda d: _link_of(d, "critical-path", "task"), "Back did not return")
    query = _follow(browser, "critical-path", "task")
    key = int(query["task"])
    drive.wait(browser, lambda d: key in (_bars(d, "task") or []), "the Task view is empty")
    assert drive.text(browser, "cv-task") == str(key)
    print(f"profile findings drawn in {opened:.1f} s (analysis included); "
          f"whole walk {time.monotonic() - started:.1f} s")
