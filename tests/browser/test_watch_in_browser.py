"""Watching a run while it runs, in headless Chromium: a real ``python -m simulator synth``
writes its trace while the real app shows it.

The Traces page marks the run as running with its progress; its Overview and Component
views draw the run so far and follow it (the task count grows, the window widens);
when the run ends the view opens its finished trace; a run killed outright is shown as
interrupted, with what it wrote still readable.
"""
import os
import re
import signal
import subprocess
import sys
import time

import driving as drive
import pytest
from selenium.webdriver.common.by import By

pytestmark = pytest.mark.browser
TASKS = 200_000_000  # far more than a test waits for: the run is stopped by the test


def _number(browser, element_id):
    text = drive.text(browser, element_id)
    return int(text) if text and text.isdigit() else None


def _window_ps(browser):
    """The Overview's window, read from the x range Plotly draws (seconds)."""
    return browser.execute_script(
        "var gd = document.querySelector('.gs-ov-graph .js-plotly-plot');"
        " return gd && gd.layout && gd.layout.xaxis.range && gd.layout.xaxis.range[1];")


@pytest.fixture
def watched(tmp_path, serve_traces):
    """(app url, directory, synth process writing run.sqlite there); the process is
    stopped (and its file left to the test's directory) on leaving."""
    directory = tmp_path / "watched"
    directory.mkdir()
    url = serve_traces(directory)  # serving before the run exists: the app finds it by itself
    proc = subprocess.Popen([sys.executable, "-m", "simulator", "synth", "--tasks", str(TASKS),
                             "-o", str(directory / "run.sqlite")],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        yield url, directory, proc
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate()


def _open_run(browser):
    """Follow the running card's link (the card is redrawn every few seconds)."""
    def clicked(d):
        d.execute_script("arguments[0].click();",
                         d.find_element(By.CSS_SELECTOR, ".gs-live-card .gs-trace-link"))
        return True
    drive.wait(browser, clicked, "could not open the run from the Traces page")


def _card_text(browser):
    return browser.execute_script(
        "var e = document.querySelector('.gs-live-card'); return e && e.innerText;")


def _running_card(browser, url, proc):
    """Open the Traces page until it lists the run as running; its card's text."""
    def listed(d):
        assert proc.poll() is None, proc.stderr.read()
        text = _card_text(d)
        if text and "running" in text and "tasks of about" in text:
            return text
        d.get(f"{url}/")  # the run had not written its first rows when the page was built
        return False
    browser.get(f"{url}/")
    return drive.wait(browser, listed, "the Traces page never listed the run as running")


def test_a_run_is_shown_while_synth_writes_it_and_followed_until_it_ends(browser, watched):
    url, directory, proc = watched
    text = _running_card(browser, url, proc)
    assert "run.sqlite" in text and "so far" in text and "Watch it" in text
    assert re.search(r"[\d,]+ tasks of about 200,000,000 \(\d+%\)", text), text
    progress = re.search(r"[\d,]+ tasks of about", text).group(0)

    # The Traces page redraws the run's progress while it goes.
    drive.wait(browser, lambda d: progress not in (_card_text(d) or progress),
               "the Traces page did not follow the run's progress")

    _open_run(browser)
    drive.wait(browser, lambda d: _number(d, "ov-live-tasks") is not None and
               int(drive.text(d, "ov-chart-count") or 0) > 0,
               "the Overview of the running trace did not draw")
    assert drive.query(browser)["trace"] == f".run.sqlite.partial-{proc.pid}"
    banner = drive.text(browser, "ov-live")
    assert banner.startswith("Running:") and "follows it" in banner and "so far" in banner

    first = _number(browser, "ov-live-tasks")
    # Read when a chart is drawn: following redraws the charts every 2 s.
    first_end = drive.wait(browser, _window_ps, "the Overview of the running trace drew no window")
    drive.wait(browser, lambda d: (_number(d, "ov-live-tasks") or 0) > first,
               "the task count did not grow while synth wrote")
    drive.wait(browser, lambda d: (_window_ps(d) or 0) > first_end,
               "the Overview's window did not grow with the run")
    assert "t0" not in drive.query(browser)  # followed by redrawing, not by rewriting the URL

    # The Component view of a busy component follows the run too.
    browser.get(f"{url}/component?trace=.run.sqlite.partial-{proc.pid}&loc=GPU.L2%5B0%5D")
    drive.wait(browser, lambda d: _number(d, "cv-live-tasks") is not None and drive.text(d, "cv-window"),
               "the Component view of the running trace did not draw")
    seen, window = _number(browser, "cv-live-tasks"), drive.text(browser, "cv-window")
    drive.wait(browser, lambda d: (_number(d, "cv-live-tasks") or 0) > seen and
               drive.text(d, "cv-window") != window, "the Component view did not follow the run")

    # Ctrl-C: synth finalizes what it wrote and renames it into place; the view opens it.
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=120) == 130
    drive.wait(browser, lambda d: drive.query(d).get("trace") == "run.sqlite",
               "the view did not move to the finished trace", timeout=60)
    drive.wait(browser, lambda d: drive.text(d, "cv-location") == "GPU.L2[0]" and
               not d.find_elements(By.ID, "cv-live"), "the finished trace's Component view did not draw")
    assert sorted(os.listdir(directory)) == ["run.sqlite", "server.log"]


def test_a_run_killed_while_watched_stays_readable_and_says_how_to_finish_it(browser, watched):
    url, directory, proc = watched
    _running_card(browser, url, proc)
    _open_run(browser)
    drive.wait(browser, lambda d: int(drive.text(d, "ov-chart-count") or 0) > 0,
               "the Overview of the running trace did not draw")
    shown = _number(browser, "ov-live-tasks")
    proc.kill()
    proc.wait()
    drive.wait(browser, lambda d: (drive.text(d, "ov-live-state") or "").startswith("Interrupted"),
               "the view did not say the run was interrupted")
    assert "python -m simulator finalize run.sqlite" in drive.text(browser, "ov-live")

    # What was shown stays readable: the page drawn again from the file.
    browser.refresh()
    drive.wait(browser, lambda d: int(drive.text(d, "ov-chart-count") or 0) > 0 and
               (_number(d, "ov-live-tasks") or 0) >= shown, "the killed run's trace no longer draws")
    time.sleep(2.5)  # no redraw timer for a run that no longer runs
    assert (_number(browser, "ov-live-tasks") or 0) >= shown
    browser.get(f"{url}/")
    text = drive.wait(browser, _card_text, "the Traces page lost the killed run")
    assert "interrupted" in text and "finalize run.sqlite" in text
