"""Retake the README's screenshots of the app's views (headless Chromium, 1600 x 1000).

    python docs/screenshots.py [--trace-dir DIR]

Traces are simulated into DIR (a temporary directory by default) unless already there:
a 20,000-task synthetic trace, transpose 512 (an L2 bank busy enough for the density),
reduction v2 (1024 elements, work-groups of 256) and Sobel (128 x 96, 16 x 8 tiles).
The Validation page is taken when DIR holds the R9 Nano file's validation, ``r9nano-val``
(an hour or more to make: ``python -m simulator validate benchmarks/validation/r9nano.csv
--trace-level wg -o DIR/r9nano-val``).
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from app_server import serve  # noqa: E402
from selenium import webdriver  # noqa: E402
from selenium.common.exceptions import StaleElementReferenceException  # noqa: E402
from selenium.webdriver.chrome.options import Options  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.action_chains import ActionChains  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

TRACES = {
    "synthetic.sqlite": ["synth", "--tasks", "20000"],
    "transpose.sqlite": ["run", "transpose", "--size", "512", "--no-progress"],
    "reduction-v2.sqlite": ["run", "reduction-v2", "--size", "1024", "--local", "256",
                            "--trace-level", "kernel", "--no-progress"],
    "sobel.sqlite": ["run", "sobel", "--width", "128", "--height", "96", "--local-x", "16",
                     "--local-y", "8", "--trace-level", "kernel", "--no-progress"],
}

VALIDATION = "r9nano-val"


def settle(driver, seconds=1.5):
    """Wait until Dash is idle and every graph is drawn, then a moment for transitions."""
    WebDriverWait(driver, 120).until(lambda d: d.execute_script(
        "var g = Array.from(document.querySelectorAll('.js-plotly-plot'));"
        "return document.title.indexOf('Updating') < 0 && g.every(x => x._fullLayout);"))
    time.sleep(seconds)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--trace-dir", default=None)
    args = parser.parse_args(argv)
    directory = Path(args.trace_dir or tempfile.mkdtemp(prefix="gpuscope-shots-"))
    directory.mkdir(parents=True, exist_ok=True)
    for name, command in TRACES.items():
        if not (directory / name).exists():
            # Run in the directory, so the command a trace records (Traces page) is short.
            subprocess.run([sys.executable, "-m", "simulator", *command, "-o", name],
                           cwd=directory, env=dict(os.environ, PYTHONPATH=str(ROOT)),
                           check=True, capture_output=True)
    options = Options()
    options.binary_location = "/usr/bin/chromium"
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1600,1000",
                 "--hide-scrollbars"):
        options.add_argument(flag)
    with serve(directory) as (url, _proc):
        driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
        try:
            def shot(path, name, prepare=None):
                driver.get(url + path)
                settle(driver)
                if prepare is not None:
                    prepare()
                    settle(driver)
                driver.save_screenshot(str(ROOT / "docs" / name))
                print("docs/" + name)

            def open_tree():
                driver.execute_script(
                    "var t = document.querySelector('#ov-tree').closest('details');"
                    "t.open = true; var g = document.querySelector("
                    "'.gs-tree-node[data-path=\"GPU\"]'); g.open = true;")

            def pick_task():
                bars = driver.find_elements(By.CSS_SELECTOR, "#cv-graph .barlayer .point path")
                target = max(bars, key=lambda p: p.size["width"] * p.size["height"])
                ActionChains(driver).move_to_element(target).pause(0.3).click().perform()
                # The Task view is drawn again as the task is set: its old element goes.
                WebDriverWait(driver, 60, ignored_exceptions=(StaleElementReferenceException,)).until(
                    lambda d: d.find_element(By.ID, "cv-task").get_attribute("textContent"))

            shot("/", "app-traces.png")
            shot("/overview?trace=transpose.sqlite&filter=L2", "app-overview.png", open_tree)
            shot("/component?trace=synthetic.sqlite&loc=GPU.L2%5B3%5D", "app-component.png",
                 pick_task)
            shot("/component?trace=transpose.sqlite&loc=GPU.L2%5B0%5D",
                 "app-component-density.png")
            shot("/kernel?trace=reduction-v2.sqlite", "app-kernel-v2.png")
            shot("/kernel?trace=sobel.sqlite", "app-kernel-sobel.png")
            if (directory / VALIDATION / "validation.json").is_file():
                shot(f"/validation?run={VALIDATION}", "app-validation.png")
        finally:
            driver.quit()


if __name__ == "__main__":
    main()
