"""Klein's turnaround, from the kernel's source text to the views rendered in a browser.

Klein (2015, Table 7.1) timed parallel reduction v1 with work-groups of 64 at 256, 2,560
and 25,600 elements "starting with the submission of the program, until the views are
completely rendered". We time the same path the kernel page's edit-and-run takes:

* run: ``dashapp.kernel_runner.run``, i.e. ``python -m simulator run-kernel`` in a bounded
  child process (interpreter start, parse, SIMT execution on real data, timing model,
  trace file with the kernel records);
* page: headless Chromium opens ``/kernel`` for that trace and waits until every view is
  drawn (memory view, bank panel, histogram, donuts): the server reads the records,
  computes logical time, conflicts and patterns and builds the figures, the browser
  draws them.

``views`` and ``json`` split the server's share in-process (``kernel_views.build`` and
serialising its figures) for information; they are inside ``page``. The total is
run + page. Each run gets a fresh source text (a comment with the repetition number),
so the runner's cache never answers. The baseline is Klein's published "both views"
column (his system cannot be run here); the ratio is ours / his, goal 1.5 s at 25,600.

    python benchmarks/turnaround_views.py [--repeat 3] [--sizes 256,2560,25600]
"""
import argparse
import json
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import plotly  # noqa: E402

from dashapp import kernel_runner, kernel_views  # noqa: E402

KLEIN_BOTH_MS = {256: 1354, 2560: 1773, 25600: 5372}
GOAL_SECONDS = {25600: 1.5}
SOURCE = (ROOT / "simulator" / "kernels" / "builtin" / "reduction_v1.cl").read_text()
LOCAL = 64
DRAWN = """
var ids = ['kv-memory-0', 'kv-banks-0', 'kv-histogram', 'kv-donuts'];
return ids.every(function (id) {
  var gd = document.querySelector('#' + id + ' .js-plotly-plot');
  return gd && gd._fullLayout && gd.querySelector('.main-svg') && !gd._transitioning;
});"""


def spec(elements, repetition):
    return kernel_runner.RunSpec(
        source=SOURCE + f"// turnaround run {repetition}\n", kernel="reduce",
        global_size=(elements,), local_size=(LOCAL,),
        args=(("g_idata", f"random:{elements}"), ("g_odata", f"random:{elements // LOCAL}"),
              ("n", str(elements)), ("sdata", f"local:{LOCAL}")))


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Browser:
    """The app serving ``directory`` and a headless Chromium looking at it."""

    def __init__(self, directory):
        from selenium import webdriver
        from selenium.webdriver.chrome.options import Options
        from selenium.webdriver.chrome.service import Service

        self.port = _free_port()
        self.server = subprocess.Popen(
            [sys.executable, "-m", "dashapp", "--trace-dir", str(directory), "--port",
             str(self.port)], cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{self.port}/", timeout=2)
                break
            except OSError:
                if time.monotonic() > deadline:
                    self.server.kill()
                    raise RuntimeError("the app did not start") from None
                time.sleep(0.2)
        options = Options()
        options.binary_location = "/usr/bin/chromium"
        for flag in ("--headless=new", "--no-sandbox", "--disable-gpu",
                     "--disable-dev-shm-usage", "--window-size=1400,1000"):
            options.add_argument(flag)
        self.profile = tempfile.TemporaryDirectory(prefix="gpuscope-bench-chromium-")
        options.add_argument(f"--user-data-dir={self.profile.name}")
        self.driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"),
                                       options=options)

    def page_seconds(self, trace_name):
        """Seconds from requesting the kernel page to every view drawn."""
        self.driver.get("about:blank")
        start = time.perf_counter()
        self.driver.get(f"http://127.0.0.1:{self.port}/kernel?trace={trace_name}")
        while not self.driver.execute_script(DRAWN):
            if time.perf_counter() - start > 60:
                raise RuntimeError("the kernel page did not draw within 60 s")
            time.sleep(0.01)
        return time.perf_counter() - start

    def close(self):
        self.driver.quit()
        self.profile.cleanup()
        self.server.terminate()
        self.server.wait(timeout=10)


def one(elements, repetition, served, browser):
    """(run, views, json, page) seconds of one turnaround."""
    run_id, path, run_s = kernel_runner.run(spec(elements, repetition))
    name = f"v1-{elements}-{repetition}.sqlite"
    shutil.copy(path, served / name)
    start = time.perf_counter()
    views = kernel_views.build(served / name, 0)
    views_s = time.perf_counter() - start
    start = time.perf_counter()
    json.dumps([m.figure for m in views.memory] + [m.banks for m in views.memory]
               + [views.histogram, views.donuts], cls=plotly.utils.PlotlyJSONEncoder)
    json_s = time.perf_counter() - start
    page_s = browser.page_seconds(name) if browser is not None else views_s + json_s
    return run_s, views_s, json_s, page_s


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs per size, median shown")
    parser.add_argument("--sizes", default="256,2560,25600", help="elements, comma separated")
    parser.add_argument("--no-browser", action="store_true",
                        help="skip Chromium: page = views + json (no drawing)")
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    served = Path(tempfile.mkdtemp(prefix="gpuscope-turnaround-views-"))
    browser = None if args.no_browser else Browser(served)
    try:
        print(f"reduction v1, work-groups of {LOCAL}, both views; median of {args.repeat}")
        print(f"{'elements':>9} {'run':>7} {'views':>7} {'json':>7} {'page':>7} {'total':>7}"
              f" {'Klein':>7} {'ratio':>6}  goal")
        for elements in sizes:
            cells = [one(elements, r, served, browser) for r in range(args.repeat)]
            run_s, views_s, json_s, page_s = (statistics.median(c) for c in zip(*cells))
            total = statistics.median(c[0] + c[3] for c in cells)
            klein = KLEIN_BOTH_MS.get(elements)
            ratio = f"{total * 1000 / klein:6.2f}" if klein else "     -"
            goal = GOAL_SECONDS.get(elements)
            verdict = "" if goal is None else ("met" if total <= goal else f"missed ({goal} s)")
            print(f"{elements:>9,} {run_s:7.3f} {views_s:7.3f} {json_s:7.3f} {page_s:7.3f}"
                  f" {total:7.3f} {(klein or 0) / 1000:7.3f} {ratio}  {verdict}")
    finally:
        if browser is not None:
            browser.close()
        shutil.rmtree(served, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
