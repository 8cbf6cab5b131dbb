"""The real app in a subprocess on a free localhost port, driven by headless Chromium.

Debian's ``chromium`` and ``chromedriver`` are installed by scripts/install.sh; the tests
are never skipped, because a page is only done when a real browser has shown it.
"""
import contextlib
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from test_app_traces import write_synthetic_trace  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
CHROME_FLAGS = ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--disable-background-networking", "--disable-component-update",
                "--disable-sync", "--no-first-run", "--window-size=1400,1000")


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def serve(directory):
    """The real app on a free localhost port, serving the traces in ``directory``."""
    port = _free_port()
    log = open(directory / "server.log", "w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "dashapp", "--trace-dir", str(directory), "--port", str(port)],
        stdout=log, stderr=subprocess.STDOUT, cwd=Path(__file__).resolve().parents[2])
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            urllib.request.urlopen(url + "/", timeout=2)
            break
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                raise RuntimeError("the app did not start:\n" +
                                   (directory / "server.log").read_text())
            time.sleep(0.2)
    try:
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        log.close()


@pytest.fixture(scope="session")
def serve_traces():
    """Start the app on a directory of traces; every server stops with the session."""
    with contextlib.ExitStack() as servers:
        yield lambda directory: servers.enter_context(serve(directory))


@pytest.fixture(scope="session")
def app_url(tmp_path_factory, serve_traces):
    directory = tmp_path_factory.mktemp("browser-traces")
    write_synthetic_trace(directory / "synthetic.sqlite", tasks=5000, seed=11)
    return serve_traces(directory)


@pytest.fixture(scope="session")
def chromium():
    """One headless Chromium for the session (starting one costs seconds)."""
    options = Options()
    options.binary_location = CHROMIUM
    for flag in CHROME_FLAGS:
        options.add_argument(flag)
    profile = tempfile.TemporaryDirectory(prefix="gpuscope-chromium-")
    options.add_argument(f"--user-data-dir={profile.name}")
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(30)
    yield driver
    driver.quit()
    profile.cleanup()


@pytest.fixture
def browser(chromium):
    """The session's browser on a blank page, so each test starts its own history."""
    chromium.get("about:blank")
    return chromium
