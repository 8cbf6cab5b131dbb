"""The real app in a subprocess on a free localhost port (``app_server``), driven by
headless Chromium.

Debian's ``chromium`` and ``chromedriver`` are installed by scripts/install.sh; the tests
are never skipped, because a page is only done when a real browser has shown it.
"""
import contextlib
import sys
import tempfile
from pathlib import Path

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from app_server import serve  # noqa: E402
from test_app_traces import write_synthetic_trace  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
CHROME_FLAGS = ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--disable-background-networking", "--disable-component-update",
                "--disable-sync", "--no-first-run", "--window-size=1400,1000")


@pytest.fixture(scope="session")
def serve_traces():
    """Start the app on a directory of traces; every server stops with the session."""
    with contextlib.ExitStack() as servers:
        yield lambda directory: servers.enter_context(serve(directory))[0]


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
