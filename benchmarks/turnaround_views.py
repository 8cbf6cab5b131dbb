"""Klein's turnaround, from the kernel's source text to the views rendered in a browser.

Klein (2015, Table 7.1) timed parallel reduction v1 with work-groups of 64 at 256, 2,560
and 25,600 elements "starting with the submission of the program, until the views are
completely rendered". We time the same thing on the kernel page in headless Chromium:
with the page open, put a fresh source text in the editor, press Run, and stop the clock
when the edited run's views are all drawn (memory view, bank panel, histogram, donuts);
the clock is the page's own (``performance.now``), checked every 5 ms in the page. In
between, the server hands ``python -m simulator run-kernel`` to a bounded child (its
spare, already started and imported), which parses, executes on real data, runs the
timing model and writes a trace with the kernel records; the server reads the records
back, computes logical time, conflicts and patterns, builds the figures, and the
browser draws them.

For information the same run is split in-process: ``run`` (``SimulatorPool.run``),
``views`` (``klein_views.build``) and ``json`` (serialising the figures). Each Run gets
a fresh source (a comment with a counter and a per-invocation nonce), so no cache
answers. The baseline is Klein's published "both views" column (his system cannot be
run here); the ratio is ours / his, and the goal is 1.5 s at 25,600 elements. Headless
Chromium draws WebGL in software, so a desktop browser with a GPU draws faster.

    python benchmarks/turnaround_views.py [--repeat 3] [--sizes 256,2560,25600]
"""
import argparse
import json
import os
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

from dashapp.klein import runner
from dashapp.klein import views as klein_views  # noqa: E402

KLEIN_BOTH_MS = {256: 1354, 2560: 1773, 25600: 5372}
GOAL_SECONDS = {25600: 1.5}
SOURCE = (ROOT / "simulator" / "kernels" / "builtin" / "reduction_v1.cl").read_text()
LOCAL = 64
NONCE = f"{os.getpid()}-{time.time_ns()}"
DRAWN = """
var ids = ['kv-memory-0', 'kv-banks-0', 'kv-histogram', 'kv-donuts'];
return ids.every(function (id) {
  var gd = document.querySelector('#' + id + ' .js-plotly-plot');
  return gd && gd._fullLayout && gd.querySelector('.main-svg') && !gd._transitioning;
});"""
RUN_UNTIL_DRAWN = """
var finish = arguments[arguments.length - 1];
function edited() {
  var t = document.getElementById('kv-title');
  return !!t && t.textContent.indexOf('(edited run)') >= 0;
}
function drawn() {""" + DRAWN + """
}
var start = performance.now();
document.getElementById('kv-run').click();
(function check() {
  var error = document.getElementById('kv-run-error');
  if (error) { finish({error: error.textContent}); }
  else if (edited() && drawn()) { finish({seconds: (performance.now() - start) / 1000}); }
  else { setTimeout(check, 5); }
})();"""


def spec(elements, tag):
    # The nonce keeps this invocation's sources apart from every earlier one: edited runs
    # are cached by content in a directory that outlives the process.
    return runner.RunSpec(
        source=SOURCE + f"// turnaround run {tag} {NONCE}\n", kernel="reduce",
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

    def edit_and_run_seconds(self, trace_name, source):
        """Seconds from pressing Run with ``source`` on the kernel page of ``trace_name`` to
        every view of the edited run drawn."""
        d = self.driver
        d.get(f"http://127.0.0.1:{self.port}/kernel?trace={trace_name}")
        self._until(lambda: d.execute_script(DRAWN), "the kernel page did not draw")
        d.execute_script(
            "var el = document.getElementById('kv-editor');"
            "var set = Object.getOwnPropertyDescriptor(HTMLTextAreaElement.prototype,"
            " 'value').set; set.call(el, arguments[0]);"
            "el.dispatchEvent(new Event('input', {bubbles: true}));", source)
        # The clock runs in the page: polling it from here (a WebDriver round trip every
        # few ms) would cost the browser, and the server beside it, CPU during the run.
        d.set_script_timeout(120)
        done = d.execute_async_script(RUN_UNTIL_DRAWN)
        if "error" in done:
            raise RuntimeError(f"the edited run's views were not drawn: {done['error']}")
        return done["seconds"]

    def _until(self, predicate, message, seconds=120):
        start = time.perf_counter()
        while not predicate():
            error = self.driver.execute_script(
                "var e = document.getElementById('kv-run-error'); return e && e.textContent;")
            if error or time.perf_counter() - start > seconds:
                raise RuntimeError(f"{message}: {error or 'timed out'}")
            time.sleep(0.01)

    def close(self):
        self.driver.quit()
        self.profile.cleanup()
        self.server.terminate()
        self.server.wait(timeout=10)


def base_trace(elements, served):
    """The recorded launch whose page the edits start from (its size is offered)."""
    _run_id, path, _seconds = runner.default_pool().run(spec(elements, "base"))
    name = f"v1-{elements}.sqlite"
    shutil.copy(path, served / name)
    return name


def one(elements, repetition, served, browser, base):
    """(run, views, json, total) seconds of one turnaround."""
    _run_id, path, run_s = runner.default_pool().run(spec(elements, f"split {repetition}"))
    start = time.perf_counter()
    views = klein_views.build(path, 0)
    views_s = time.perf_counter() - start
    start = time.perf_counter()
    json.dumps([m.figure for m in views.memory] + [m.banks for m in views.memory]
               + [views.histogram, views.donuts], cls=plotly.utils.PlotlyJSONEncoder)
    json_s = time.perf_counter() - start
    total = browser.edit_and_run_seconds(base, spec(elements, f"edit {repetition}").source) \
        if browser is not None else run_s + views_s + json_s
    return run_s, views_s, json_s, total


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs per size, median shown")
    parser.add_argument("--sizes", default="256,2560,25600", help="elements, comma separated")
    parser.add_argument("--no-browser", action="store_true",
                        help="skip Chromium: total = run + views + json (nothing drawn)")
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    served = Path(tempfile.mkdtemp(prefix="gpuscope-turnaround-views-"))
    browser = None if args.no_browser else Browser(served)
    try:
        print(f"reduction v1, work-groups of {LOCAL}, both views; median of {args.repeat}"
              " (best: the fastest total)")
        print(f"{'elements':>9} {'run':>7} {'views':>7} {'json':>7} {'total':>7} {'best':>7}"
              f" {'Klein':>7} {'ratio':>6}  goal")
        for elements in sizes:
            base = base_trace(elements, served)
            cells = [one(elements, r, served, browser, base) for r in range(args.repeat)]
            run_s, views_s, json_s, total = (statistics.median(c) for c in zip(*cells))
            best = min(c[3] for c in cells)
            klein = KLEIN_BOTH_MS.get(elements)
            ratio = f"{total * 1000 / klein:6.2f}" if klein else "     -"
            goal = GOAL_SECONDS.get(elements)
            verdict = "" if goal is None else ("met" if total <= goal else f"missed ({goal} s)")
            print(f"{elements:>9,} {run_s:7.3f} {views_s:7.3f} {json_s:7.3f} {total:7.3f}"
                  f" {best:7.3f} {(klein or 0) / 1000:7.3f} {ratio}  {verdict}")
    finally:
        if browser is not None:
            browser.close()
        shutil.rmtree(served, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
