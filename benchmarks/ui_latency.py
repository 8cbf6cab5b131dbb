"""What a user waits for: navigation to every chart drawn, in headless Chromium.

For a large synthetic trace (``--tasks``, default 1M; the goal is stated for 10M) and a
small one, against the real app (``python -m dashapp`` in a subprocess):

* Overview, cold: a fresh server and a fresh browser, the first page load;
* Overview, warm: the same page loaded again (assets and the trace's metadata cached,
  and the series the server computed from raw tasks: ``metrics.RAW_SERIES_ENTRIES``);
* a zoom: the Overview redrawn at a 1/100 window (the URL a zoom writes, followed inside
  the app as a drag does);
* the Component view of one compute unit, followed inside the app;
* the kernel page of a small reduction-v2 launch, loaded: a link to it from the other
  pages is a full page load, since it needs plotly.js's full bundle
  (``dashapp/plotly_bundle.py``).

Beside each, the server's own time for the same navigation: the summed time of the
``_dash-update-component`` requests it made (request sent to last byte, read from the
browser's Resource Timing), so the ratio says how much of the wait is the round trip,
the rendering and the drawing rather than the server. The goal (issue 13): warm Overview
≤ 0.4 s, zoom ≤ 0.2 s, Component view ≤ 0.3 s, whatever the trace's size. Timing never
fails anything: it is printed.
"""
import argparse
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from app_server import serve  # noqa: E402
from selenium import webdriver  # noqa: E402
from selenium.webdriver.chrome.options import Options  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402

CHROME_FLAGS = ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--disable-background-networking", "--no-first-run",
                "--window-size=1600,1000")
GOALS = {"overview warm": 0.4, "zoom": 0.2, "component": 0.3}

# Shared by every wait: the app is idle (Dash titles the tab "Updating..." while
# callbacks run) and every Plotly graph of the page has been drawn.
DRAWN = ("var idle = document.title.indexOf('Updating') < 0;"
         "var graphs = Array.from(document.querySelectorAll('#_pages_content .js-plotly-plot'));"
         "var drawn = graphs.length > 0 && graphs.every(g => g._fullLayout &&"
         " g.querySelector('.main-svg'));")
READY = {
    # The charts are one figure; grid.js draws each chart's title once it is drawn.
    "overview": DRAWN + "var n = document.getElementById('ov-chart-count');"
                "var titles = document.querySelectorAll('#ov-grid .gs-chart-title').length;"
                "return idle && drawn && n && graphs.length === 1 && titles === +n.textContent &&"
                " location.search === arguments[0];",
    "zoom": DRAWN + "return idle && drawn && location.search === arguments[0] && graphs.every("
            "g => Math.abs(g._fullLayout.xaxis.range[1] - arguments[1]) < 1e-15 + 1e-9 *"
            " arguments[1]);",
    "component": DRAWN + "var loc = document.getElementById('cv-location');"
                 "return idle && drawn && loc && location.search === arguments[0];",
    "kernel": DRAWN + "return idle && drawn && !!document.getElementById('kv-title') &&"
              " !!document.getElementById('kv-donuts') && location.search === arguments[0];",
}

# Wait inside the page (once per frame) and report the elapsed time and the server's
# part: time from each update request sent to its last byte, summed.
MEASURE = """
var done = arguments[arguments.length - 1], args = Array.from(arguments).slice(0, -1);
var ready = new Function(args[0]), rest = args.slice(1), start = args[args.length - 1];
var begin = start === null ? 0 : performance.now();
if (start !== null) {
  window.history.pushState({}, '', start);
  window.dispatchEvent(new CustomEvent('_dashprivate_pushstate'));
}
function server() {
  return performance.getEntriesByType('resource').filter(e =>
    e.name.indexOf('_dash-update-component') >= 0 && e.startTime >= begin)
    .reduce((s, e) => s + (e.responseEnd - e.requestStart), 0);
}
(function check() {
  if (ready.apply(null, rest)) { done([performance.now() - begin, server()]); }
  else { window.requestAnimationFrame(check); }
})();
"""


def browser():
    options = Options()
    options.binary_location = "/usr/bin/chromium"
    for flag in CHROME_FLAGS:
        options.add_argument(flag)
    profile = tempfile.TemporaryDirectory(prefix="gpuscope-latency-")
    options.add_argument(f"--user-data-dir={profile.name}")
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    driver.set_script_timeout(300)
    driver.set_page_load_timeout(300)
    driver.gpuscope_profile = profile
    return driver


def load(driver, url, search, kind, *extra):
    """A full page load of ``url``: (seconds to every chart drawn, server seconds)."""
    driver.get(url)
    # Navigation start is Resource Timing's zero: the whole load counts.
    elapsed, server = driver.execute_async_script(MEASURE, READY[kind], search, *extra, None)
    return elapsed / 1000, server / 1000


def follow(driver, target, kind, *extra):
    """In-app navigation to ``target`` (path and query), as a link or a zoom does."""
    search = target[target.index("?"):]
    elapsed, server = driver.execute_async_script(MEASURE, READY[kind], search, *extra,
                                                  target)
    return elapsed / 1000, server / 1000


def make_traces(directory, tasks, small):
    paths = {}
    for label, count in (("large", tasks), ("small", small)):
        path = directory / f"synth-{count}.sqlite"
        if not path.exists():
            print(f"generating a {count:,}-task trace …", flush=True)
            subprocess.run([sys.executable, "-m", "simulator", "synth", "--tasks", str(count),
                            "-o", str(path)], cwd=ROOT, check=True, capture_output=True)
        paths[label] = path
    kernel = directory / "reduction-v2.sqlite"
    if not kernel.exists():
        subprocess.run([sys.executable, "-m", "simulator", "run", "reduction-v2", "--size",
                        "4096", "--local", "128", "--trace-level", "kernel", "--no-progress",
                        "-o", str(kernel)], cwd=ROOT, check=True, capture_output=True)
    return paths, kernel


def run_end_ps(path):
    import sqlite3
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        return db.execute("SELECT virtual_end_ps FROM run").fetchone()[0]


def measure(directory, name, kernel, repeat):
    """{view: (median browser s, median server s)} for trace ``name`` in ``directory``."""
    results = {}
    search = f"?trace={name}"
    with serve(directory) as (url, _proc):
        driver = browser()
        try:
            results["overview cold"] = load(driver, f"{url}/overview{search}", search,
                                            "overview")
            samples = {k: [] for k in ("overview warm", "zoom", "component", "kernel")}
            end = run_end_ps(directory / name)
            for i in range(repeat):
                samples["overview warm"].append(
                    load(driver, f"{url}/overview{search}", search, "overview"))
                # Each repeat zooms to another 1/100 of the run: never a cached answer.
                t0 = end * (10 + i) // 100
                t1 = t0 + end // 100
                samples["zoom"].append(follow(
                    driver, f"/overview{search}&t0={t0}&t1={t1}", "zoom", t1 * 1e-12))
                loc = f"GPU.SA%5B{i}%5D.CU%5B{4 * i}%5D"
                samples["component"].append(follow(
                    driver, f"/component{search}&loc={loc}", "component"))
                kernel_search = f"?trace={kernel.name}&group={i}"
                samples["kernel"].append(load(
                    driver, f"{url}/kernel{kernel_search}", kernel_search, "kernel"))
                driver.get(f"{url}/")
            for key, values in samples.items():
                results[key] = (statistics.median(v[0] for v in values),
                                statistics.median(v[1] for v in values))
        finally:
            driver.quit()
            driver.gpuscope_profile.cleanup()
    return results


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tasks", type=int, default=1_000_000)
    parser.add_argument("--small", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--cache-dir", default=str(Path(tempfile.gettempdir())
                                                   / "gpuscope-ui-latency"))
    args = parser.parse_args(argv)
    cache = Path(args.cache_dir)
    cache.mkdir(parents=True, exist_ok=True)
    paths, kernel = make_traces(cache, args.tasks, args.small)
    for label, path in paths.items():
        # One directory per size: the cold page is that trace's first request.
        serve_dir = Path(tempfile.mkdtemp(prefix=f"gpuscope-ui-{label}-"))
        for source in (path, kernel):
            (serve_dir / source.name).symlink_to(source)
        results = measure(serve_dir, path.name, kernel, args.repeat)
        print(f"\n{label} trace: {path.name}")
        print(f"  {'view':<15} {'browser':>9} {'server':>9} {'ratio':>7}  goal")
        for key, (seconds, server) in results.items():
            goal = GOALS.get(key)
            verdict = "" if goal is None else \
                f"≤ {goal:.1f} s {'met' if seconds <= goal else 'NOT met'}"
            ratio = seconds / server if server > 0 else float("inf")
            print(f"  {key:<15} {seconds:>8.3f}s {server:>8.3f}s {ratio:>6.1f}×  {verdict}")


if __name__ == "__main__":
    main()
