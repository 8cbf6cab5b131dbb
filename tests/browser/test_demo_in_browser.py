"""The README's demo, `bash scripts/demo.sh`, as a newcomer runs it (issue 36): it serves
at once, makes its other traces in the background, and they reach every view the README
shows (the Overview, Component and Task views; the memory, branching and debug views; a
sweep and a comparison), each saying on the Traces page what it is for."""
import os
import signal
import sqlite3
import subprocess
import time
import urllib.request
from pathlib import Path

import driving as drive
import pytest
from app_server import _free_port
from selenium.webdriver.common.by import By

pytestmark = pytest.mark.browser
ROOT = Path(__file__).resolve().parents[2]
TRACES = ["reduction-v1.sqlite", "reduction-v2.sqlite", "reduction-v3.sqlite", "sobel.sqlite",
          "transpose.sqlite", "vectoradd.sqlite"]


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    """(URL, trace folder, seconds until it served) of the demo, once every trace is made."""
    traces = tmp_path_factory.mktemp("demo") / "traces"
    port = _free_port()
    log = open(traces.parent / "demo.out", "w")
    started = time.monotonic()
    proc = subprocess.Popen(["bash", "scripts/demo.sh"], cwd=ROOT, stdout=log,
                            stderr=subprocess.STDOUT, start_new_session=True,
                            env={**os.environ, "TRACE_DIR": str(traces), "PORT": str(port)})
    url = f"http://127.0.0.1:{port}"
    try:
        served = _until(lambda: _answers(url) or proc.poll() is not None, 300, "the demo served")
        assert proc.poll() is None, (traces.parent / "demo.out").read_text()
        served_after = time.monotonic() - started
        _until(lambda: "every trace is made" in _read(traces / "demo.log"), 600,
               "the demo made its traces")
        yield url, traces, served_after, served
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)
        log.close()


def _answers(url):
    try:
        urllib.request.urlopen(url + "/", timeout=2)
        return True
    except OSError:
        return False


def _read(path):
    try:
        return path.read_text()
    except OSError:
        return ""


def _until(predicate, seconds, what):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.5)
    raise AssertionError(f"not within {seconds} s: {what}")


def _drawn(browser, css):
    return browser.execute_script(
        "var gd = document.querySelector(arguments[0] + ' .js-plotly-plot') ||"
        " document.querySelector(arguments[0]);"
        "return !!(gd && gd._fullData && gd._fullData.length);", css)


def test_the_demo_serves_and_says_what_each_trace_is_for(browser, demo):
    url, traces, served_after, _ = demo
    print(f"\nthe demo served after {served_after:.0f} s (its install step up to date)")
    log = (traces / "demo.log").read_text()
    assert "error" not in log.lower(), log[-2000:]
    assert sorted(p.name for p in traces.glob("*.sqlite")) == TRACES
    browser.get(f"{url}/")
    drive.wait(browser, lambda d: len(d.find_elements(By.CSS_SELECTOR, ".gs-trace-link")) == 6,
               "the Traces page does not list the demo's six traces")
    about = browser.execute_script(
        "return Array.from(document.querySelectorAll('.gs-summary-table tr')).filter(r =>"
        " r.children[0].textContent === 'About').map(r => r.children[1].textContent);")
    assert len(about) == 6 and any(a.startswith("Start here") for a in about)
    assert "case study" in drive.text(browser, "home-sweeps")


def test_the_demo_reaches_the_daisen_views(browser, demo):
    url = demo[0]
    browser.get(f"{url}/overview?trace=transpose.sqlite")
    drive.wait(browser, lambda d: _drawn(d, "#ov-grid"), "the Overview did not draw")
    browser.get(f"{url}/component?trace=transpose.sqlite&loc=GPU.L2%5B0%5D")
    drive.wait(browser, lambda d: _drawn(d, "#cv-graph"), "the Component view did not draw")
    # A task of it: the Task view above the Component view.
    db = sqlite3.connect(demo[1] / "transpose.sqlite")
    task, = db.execute("SELECT t.id FROM task t JOIN location l ON l.id = t.location"
                       " WHERE l.name = 'GPU.L2[0]' ORDER BY t.start_ps LIMIT 1").fetchone()
    db.close()
    browser.get(f"{url}/component?trace=transpose.sqlite&loc=GPU.L2%5B0%5D&task={task}")
    drive.wait(browser, lambda d: drive.text(d, "cv-task") == str(task), "no Task view of it")


def test_the_demo_reaches_the_kernel_views(browser, demo):
    url = demo[0]
    browser.get(f"{url}/kernel?trace=reduction-v2.sqlite")
    drive.wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, ".kv-banks .barlayer .point"),
               "the memory view's banks did not draw")
    assert drive.text(browser, "kv-bank-report-0").startswith("Bank conflicts:")
    browser.get(f"{url}/kernel?trace=reduction-v1.sqlite")
    drive.wait(browser, lambda d: _drawn(d, ".kv-histogram"), "the branching view did not draw")
    browser.get(f"{url}/kernel?trace=vectoradd.sqlite")
    drive.wait(browser, lambda d: _drawn(d, "#kv-debug-0"), "the debug view did not draw")


def test_the_demo_reaches_a_sweep_and_a_comparison(browser, demo):
    url = demo[0]
    browser.get(f"{url}/sweep?dir=pagerank-dispatch")
    drive.wait(browser, lambda d: _drawn(d, "#sw-graph"), "the sweep's chart did not draw")
    a, b = "pagerank-dispatch/cp.wg_dispatch_per_cycle-1.sqlite", \
        "pagerank-dispatch/cp.wg_dispatch_per_cycle-2.sqlite"
    browser.get(f"{url}/compare?a={a}&b={b}")
    drive.wait(browser, lambda d: "faster" in drive.text(d, "cmp-speedup"),
               "the comparison did not show the speed-up")


def test_the_readme_s_first_five_minutes_by_clicking(browser, demo):
    """The README's "Your first five minutes", step by step, as a newcomer clicks."""
    url = demo[0]
    # 1. Traces: open transpose.sqlite, the one that says "Start here".
    browser.get(f"{url}/")
    drive.click(browser, By.XPATH, "//a[contains(@class, 'gs-trace-link') and text()='transpose.sqlite']")
    # 2. Overview: its charts draw.
    drive.wait(browser, lambda d: drive.path(d) == "/overview" and _drawn(d, "#ov-grid"),
               "the Overview did not open")
    # 3. Component view: a chart's title; then a bar (a window with bars) opens the Task view.
    drive.click(browser, By.CSS_SELECTOR, "#ov-grid .gs-chart-title")
    drive.wait(browser, lambda d: drive.path(d) == "/component" and _drawn(d, "#cv-graph"),
               "the Component view did not open")
    # 4. Kernel views: a launch of reduction-v2 from the Traces page.
    browser.get(f"{url}/")
    drive.click(browser, By.XPATH, "//a[contains(@class, 'gs-launch-link') and"
                                   " contains(@href, 'trace=reduction-v2.sqlite')]")
    drive.wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, ".kv-banks .barlayer .point"),
               "the memory view did not open")
    # 5. The sweep, its two rows picked and compared.
    browser.get(f"{url}/")
    drive.click(browser, By.LINK_TEXT, "pagerank-dispatch")
    drive.wait(browser, lambda d: _drawn(d, "#sw-graph"), "the sweep did not open")
    for box in browser.find_elements(By.CSS_SELECTOR, ".gs-sw-pick input")[:2]:
        box.click()
    drive.click(browser, By.ID, "sw-compare")
    drive.wait(browser, lambda d: "faster" in drive.text(d, "cmp-speedup"),
               "the comparison did not open")
