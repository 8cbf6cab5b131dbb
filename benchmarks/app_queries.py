"""Server-side cost of the app's views on large synthetic traces, against a baseline.

Measured per trace size (default 1M tasks; ``--tasks 10000000`` for the 10M goal):

* one Overview page (16 components × 2 metrics, figures built and JSON-encoded) at full
  range and at a 1/1000 zoom, read from the metric pyramid;
* one Component view window (bars + Task view + concurrency line), at a compute unit
  and at the command processor, whose run-long kernel task defeats the plain window
  query (one-time split cost excluded: it is paid once per location and process);
* the Daisen-v3-style baseline for the same Overview page: for every chart and metric,
  fetch the component's tasks overlapping the window (with their parents' start, as
  Daisen's LEFT JOIN does) and bin them on every request (vectorised with numpy here,
  which is kinder to the baseline than Daisen's O(bins × tasks) loop).

Traces are generated once and cached under ``--cache-dir`` (10M tasks take a while).
The goal from issue 5: ≥ 50× faster than the baseline at full range on 10M tasks, and
under 100 ms per Overview page at every zoom. Timing never fails anything: it is printed.
"""
import argparse
import hashlib
import json
import os
import sys
import time
from pathlib import Path

import numpy as np
import plotly.utils

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from dashapp import queries, urls
from dashapp.catalog import trace_meta  # noqa: E402
from dashapp.daisen import binning, views  # noqa: E402

FILTER = r"CU\[\d+\]$"  # the 64 compute units; page 1 holds 16 of them
METRIC_PAIR = ("concurrency", "arrival")
BINS = views.OVERVIEW_POINTS


def trace_path(cache_dir, tasks, seed):
    """The cached synthetic trace of ``tasks`` tasks, generated on first use.

    The file name carries a digest of the trace schema, so a cache written under an
    older contract is never read.
    """
    from simulator.tracing.writer import schema_text

    schema = hashlib.sha256(schema_text().encode()).hexdigest()[:10]
    path = Path(cache_dir) / f"synthetic-{tasks}-seed{seed}-schema{schema}.sqlite"
    if not path.exists():
        from simulator.tracing.synthetic import generate

        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(f".{path.name}.partial-{os.getpid()}")
        print(f"generating {path} ({tasks:,} tasks, cached for later runs) ...", flush=True)
        started = time.perf_counter()
        generate(partial, tasks=tasks, seed=seed)
        os.replace(partial, path)
        print(f"  generated in {time.perf_counter() - started:.0f} s", flush=True)
    return path


def best_ms(fn, repeat):
    """Fastest of ``repeat`` timed calls after one warm-up, in milliseconds (the machine
    is shared, so the minimum is the least noisy estimate; both sides get the same)."""
    fn()
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        times.append((time.perf_counter() - started) * 1000)
    return min(times)


def ours_overview(path, state):
    page = views.overview(path, state)
    for chart in page.charts:
        json.dumps(chart.figure, cls=plotly.utils.PlotlyJSONEncoder)
    return page


def baseline_overview(path, state, window):
    """Daisen v3: per chart and metric, fetch the window's tasks and bin them."""
    meta = trace_meta(path)
    page = views.overview(path, state)  # only to pick the same 16 components
    t0, t1 = window
    width = max(1, (t1 - t0) // BINS)
    first = t0 // width
    n = -(-t1 // width) - first
    out = []
    with queries.open_trace(path, seconds=600) as db:
        for chart in page.charts:
            loc = chart.location
            for metric in METRIC_PAIR:
                rows = db.fetch(
                    "SELECT t.start_ps, t.end_ps, t.kind, p.start_ps FROM task t"
                    " LEFT JOIN task p ON p.id = t.parent"
                    " WHERE t.location = ? AND t.start_ps < ? AND t.end_ps > ?",
                    (loc.id, t1, t0))
                arr = np.array([r[:3] for r in rows], dtype=np.int64).reshape(-1, 3)
                if metric == "concurrency":
                    out.append(binning.interval_integrals(arr[:, 0], arr[:, 1], first, n, width)
                               / width)
                else:
                    req_in = np.isin(arr[:, 2], meta.req_in_kinds)
                    out.append(binning.event_counts(arr[req_in, 0], first, n, width)
                               / (width * 1e-12))
    return out


def run(tasks, seed, cache_dir, repeat):
    path = trace_path(cache_dir, tasks, seed)
    meta = trace_meta(path)
    name = path.name
    span = meta.end_ps - meta.start_ps
    full = (meta.start_ps, meta.end_ps)
    mid = meta.start_ps + span // 2
    zoom = (mid, mid + max(1, span // 1000))
    state = urls.OverviewState(trace=name, filter=FILTER, primary=METRIC_PAIR[0],
                               secondary=METRIC_PAIR[1])
    zoomed = urls.OverviewState(**{**state.__dict__, "t0": zoom[0], "t1": zoom[1]})
    loc = ours_overview(path, state).charts[0].location.name
    comp = urls.ComponentState(trace=name, loc=loc, t0=zoom[0], t1=zoom[1])
    comp_full = urls.ComponentState(trace=name, loc=loc)
    # The command processor holds a kernel task spanning the whole run (see windows.py).
    comp_cp = urls.ComponentState(trace=name, loc="GPU.CommandProcessor", t0=zoom[0], t1=zoom[1])

    results = {
        "overview full range": best_ms(lambda: ours_overview(path, state), repeat),
        "overview 1/1000 zoom": best_ms(lambda: ours_overview(path, zoomed), repeat),
        "component window 1/1000": best_ms(lambda: views.component(path, comp), repeat),
        "component full range": best_ms(lambda: views.component(path, comp_full), repeat),
        "component CP window 1/1000": best_ms(lambda: views.component(path, comp_cp), repeat),
        "baseline full range": best_ms(lambda: baseline_overview(path, state, full),
                                       max(1, repeat // 3)),
        "baseline 1/1000 zoom": best_ms(lambda: baseline_overview(path, zoomed, zoom), repeat),
    }
    mode = views.component(path, comp_full).mode
    print(f"\n{tasks:,} tasks ({meta.task_count:,} written), {len(meta.locations)} locations,"
          f" {span / 1e6:.1f} µs simulated; Overview = 16 × {'+'.join(METRIC_PAIR)}")
    for label, ms in results.items():
        print(f"  {label:28s} {ms:9.2f} ms")
    print(f"  (component full range drew: {mode})")
    for scope in ("full range", "1/1000 zoom"):
        ratio = results[f"baseline {scope}"] / results[f"overview {scope}"]
        print(f"  speed-up vs Daisen-v3-style at {scope}: {ratio:.1f}x")
    return results


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", type=int, nargs="+", default=[1_000_000],
                        help="trace sizes in tasks (default 1000000; add 10000000 for the goal)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cache-dir", default="/tmp/gpuscope-bench",
                        help="where generated traces are kept between runs")
    parser.add_argument("--repeat", type=int, default=7, help="timed calls per measurement")
    args = parser.parse_args(argv)
    for tasks in args.tasks:
        run(tasks, args.seed, args.cache_dir, args.repeat)


if __name__ == "__main__":
    main()
