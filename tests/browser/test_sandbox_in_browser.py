"""Edit-and-run keeps a deployment's files private, in headless Chromium (issue 37): on a
real ``python -m dashapp --kernel-include DIR``, each hostile edit typed into the kernel
page's editor (and its build-options field) ends in a one-line refusal on the page, and
the canary token reaches no page, run trace, job file or log line; a header of the
include folder works; ``--no-edit`` serves the kernel page without an editor."""
import contextlib
import subprocess
import sys
from pathlib import Path

import driving as drive
import pytest
from app_server import serve
from canary import RULE, files_holding, make_canary
from selenium.webdriver.common.by import By
from test_kernel_in_browser import _run, _set_editor

pytestmark = pytest.mark.browser
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """(edit URL, read-only URL, canary, traces folder, runs folder) of two real servers
    on a small reduction v3 trace."""
    root = tmp_path_factory.mktemp("sandbox")
    traces = root / "traces"
    traces.mkdir()
    subprocess.run([sys.executable, "-m", "simulator", "run", "reduction-v3", "--size", "512",
                    "--local", "128", "--trace-level", "kernel", "--no-progress",
                    "-o", str(traces / "v3.sqlite")], cwd=ROOT, check=True, capture_output=True)
    canary = make_canary(root)
    runs = root / "runs"
    with contextlib.ExitStack() as servers:
        edit, _ = servers.enter_context(serve(
            traces, {"GPUSCOPE_RUN_DIR": str(runs)},
            args=["--kernel-include", str(canary.include_dir)]))
        read_only, _ = servers.enter_context(serve(
            traces, {"GPUSCOPE_RUN_DIR": str(root / "read-only-runs")}, args=["--no-edit"]))
        yield edit, read_only, canary, traces, runs


def _set_options(browser, text):
    browser.execute_script(
        "var el = document.getElementById('kv-options');"
        "var set = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value').set;"
        "set.call(el, arguments[0]); el.dispatchEvent(new Event('input', {bubbles: true}));",
        text)


def test_hostile_edits_are_refused_and_the_canary_reaches_nothing(browser, served):
    edit, _read_only, canary, traces, runs = served
    for name, source, options in canary.hostile_edits():
        browser.get(f"{edit}/kernel?trace=v3.sqlite")
        drive.wait(browser, lambda d: d.find_elements(By.ID, "kv-editor"), "no editor")
        _set_editor(browser, source)
        _set_options(browser, options)
        _run(browser)
        error = drive.wait(browser, lambda d: drive.text(d, "kv-run-error"),
                           f"{name}: no refusal came back")
        message = error.splitlines()[0]
        assert "refused" in message and RULE in message, (name, error)
        assert canary.token not in browser.page_source, name
    # A header of the server's include folder is there for the visitor's kernel.
    browser.get(f"{edit}/kernel?trace=v3.sqlite")
    drive.wait(browser, lambda d: d.find_elements(By.ID, "kv-editor"), "no editor")
    _set_editor(browser, canary.allowed_edit())
    _run(browser)
    drive.wait(browser, lambda d: "run" in drive.query(d), "the edited run did not open")
    drive.wait(browser, lambda d: "(edited run)" in drive.text(d, "kv-title"), "no edited run")
    facts = drive.text(browser, "kv-facts")
    assert "kernel.cl" in facts and str(runs) not in browser.page_source
    assert canary.token not in browser.page_source
    assert files_holding(canary.token, runs, traces) == []


def test_a_read_only_server_shows_the_kernel_without_an_editor(browser, served):
    _edit, read_only, *_ = served
    browser.get(f"{read_only}/kernel?trace=v3.sqlite")
    drive.wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, ".kv-banks .barlayer .point"),
               "the bank panel did not render")
    assert "runs no edited kernel" in drive.text(browser, "kv-read-only")
    assert not browser.find_elements(By.ID, "kv-editor")
    assert not browser.find_elements(By.ID, "kv-run")
