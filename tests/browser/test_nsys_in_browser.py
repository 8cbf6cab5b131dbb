"""The real Nsight Systems sample in headless Chromium: from a cudaLaunchKernel call on the
CPU thread to the kernel it launched on the GPU stream, and back; the Overview of it."""
import sqlite3
from pathlib import Path

import driving as drive
import pytest
from selenium.webdriver.common.by import By

from simulator.tracing.importers import import_trace

pytestmark = pytest.mark.browser
SAMPLE = Path(__file__).resolve().parents[1] / "data" / "nsys_saxpy_mpi_a100.sqlite"
THREAD, STREAM = "saxpy-mpi-cuda.MPI Rank 0", "GPU[0].stream[7]"


@pytest.fixture(scope="module")
def nsys(tmp_path_factory, serve_traces):
    directory = tmp_path_factory.mktemp("nsys-traces")
    import_trace(SAMPLE, directory / "saxpy.sqlite", show_progress=False)
    db = sqlite3.connect(f"file:{directory / 'saxpy.sqlite'}?mode=ro", uri=True)
    launch, kernel, kernel_name = db.execute(
        "SELECT l.src, l.dst, dk.action FROM task_link l JOIN task s ON s.id = l.src"
        " JOIN kind sk ON sk.id = s.kind JOIN task d ON d.id = l.dst JOIN kind dk ON dk.id = d.kind"
        " WHERE sk.action = 'cudaLaunchKernel' ORDER BY s.start_ps LIMIT 1").fetchone()
    db.close()
    return serve_traces(directory), launch, kernel, kernel_name


def test_a_launch_leads_to_its_kernel_on_the_gpu_stream_and_back(browser, nsys):
    url, launch, kernel, kernel_name = nsys
    browser.get(f"{url}/component?trace=saxpy.sqlite&task={launch}")
    drive.wait(browser, lambda d: drive.text(d, "cv-location") == THREAD,
               "the launch's CPU thread did not open")
    current = browser.find_element(By.ID, "cv-current").text
    assert "cudaLaunchKernel" in current and "cuda_runtime" in current

    link = browser.find_element(By.ID, "cv-link-out-0")
    assert "ac2g" in link.text and STREAM in link.text and "saxpy" in link.text
    browser.execute_script("arguments[0].click();", link)
    drive.wait(browser, lambda d: drive.text(d, "cv-location") == STREAM,
               "following the link did not reach the GPU stream")
    assert drive.query(browser)["task"] == str(kernel)
    assert kernel_name in browser.find_element(By.ID, "cv-current").text
    details = browser.find_element(By.CSS_SELECTOR, ".gs-details").text
    assert '"grid": [' in details and '"registers per thread": 26' in details
    assert '"short name": "saxpy"' in details

    back = browser.find_element(By.ID, "cv-link-in-0")
    assert "cudaLaunchKernel" in back.text and THREAD in back.text
    browser.execute_script("arguments[0].click();", back)
    drive.wait(browser, lambda d: drive.text(d, "cv-location") == THREAD,
               "the link back did not reach the CPU thread")
    assert drive.query(browser)["task"] == str(launch)


def _series_names(browser):
    """The names of each chart's series (the charts are subplots of one figure)."""
    return browser.execute_script(
        "var gd = document.querySelector('.gs-ov-graph .js-plotly-plot');"
        "var charts = [];"
        "((gd && gd.data) || []).forEach(t => {"
        "  var n = +((t.xaxis || 'x').slice(1) || 1) - 1;"
        "  (charts[n] = charts[n] || []).push(t.name); });"
        "return charts;")


def test_the_overview_shows_the_thread_and_the_stream_with_busy_fraction(browser, nsys):
    url = nsys[0]
    browser.get(f"{url}/overview?trace=saxpy.sqlite")
    drive.wait(browser, lambda d: len(d.find_elements(By.CSS_SELECTOR, ".gs-chart-title")) == 2
               and len(_series_names(d)) == 2, "the overview charts did not render")
    titles = [e.text for e in browser.find_elements(By.CSS_SELECTOR, ".gs-chart-title")]
    assert titles == [THREAD, STREAM]
    assert _series_names(browser) == [["Concurrent tasks", "Busy fraction"]] * 2
