"""A PyTorch-profiler-shaped trace in headless Chromium: readable relative times, the
absolute time on hover, and a flow followed from a CPU launch to its GPU kernel and back."""
import json
import re
import sqlite3
import sys
from pathlib import Path

import pytest
from selenium.webdriver.common.by import By

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import driving as drive
from test_chrome_import import BASE_NS, kineto_events  # noqa: E402

from simulator.tracing.importers import import_trace  # noqa: E402

pytestmark = pytest.mark.browser
READABLE = re.compile(r"^window \d+(\.\d+)? (ps|ns|µs|ms|s) – \d+(\.\d+)? (ps|ns|µs|ms|s)$")


@pytest.fixture(scope="module")
def kineto(tmp_path_factory, serve_traces):
    directory = tmp_path_factory.mktemp("kineto-traces")
    src = directory / "bert.json"
    src.write_text(json.dumps({"baseTimeNanoseconds": str(BASE_NS), "traceEvents": kineto_events()}))
    import_trace(src, directory / "bert.sqlite", show_progress=False)
    src.unlink()
    db = sqlite3.connect(directory / "bert.sqlite")
    launch, kernel = db.execute("SELECT src, dst FROM task_link").fetchone()
    db.close()
    return serve_traces(directory), launch, kernel


def test_pytorch_trace_reads_in_relative_time_and_follows_a_launch_to_its_kernel(browser, kineto):
    url, launch, kernel = kineto
    browser.get(f"{url}/component?trace=bert.sqlite&task={launch}")
    drive.wait(browser, lambda d: drive.text(d, "cv-location") == "python3[19392].thread[19392]",
               "the launch's component did not open")
    window = drive.text(browser, "cv-window")
    assert READABLE.match(window), window  # no 4.513e+06 s, no mega-seconds
    start = browser.find_element(By.ID, "cv-start")
    assert start.text == "16.856 µs"  # 1419247333417.54 µs, relative to the first event
    assert start.get_attribute("title") == "2025-07-18 09:14:43.333417540 UTC"
    assert drive.text(browser, "cv-end") == "21.969 µs"  # start and end read apart

    link = browser.find_element(By.ID, "cv-link-out-0")
    assert "ac2g" in link.text and "GPU[0].stream[7]" in link.text
    browser.execute_script("arguments[0].click();", link)
    drive.wait(browser, lambda d: drive.text(d, "cv-location") == "GPU[0].stream[7]",
               "following the link did not reach the GPU stream")
    assert drive.query(browser)["task"] == str(kernel)
    assert drive.text(browser, "cv-task") == str(kernel)
    details = browser.find_element(By.CSS_SELECTOR, ".gs-details").text
    assert '"grid"' in details and '"registers per thread": 32' in details

    back = browser.find_element(By.ID, "cv-link-in-0")
    browser.execute_script("arguments[0].click();", back)
    drive.wait(browser, lambda d: drive.text(d, "cv-location") == "python3[19392].thread[19392]",
               "the link back did not reach the launch")
    assert drive.query(browser)["task"] == str(launch)


def test_pytorch_trace_overview_lists_gpu_streams_in_the_profilers_order(browser, kineto):
    url, _, _ = kineto
    browser.get(f"{url}/overview?trace=bert.sqlite")
    drive.wait(browser, lambda d: len(d.find_elements(By.CSS_SELECTOR, ".gs-chart-title")) == 2,
               "the overview charts did not render")
    titles = [e.text for e in browser.find_elements(By.CSS_SELECTOR, ".gs-chart-title")]
    assert titles == ["python3[19392].thread[19392]", "GPU[0].stream[7]"]
    assert READABLE.match(drive.text(browser, "ov-window").split(" (")[0])
