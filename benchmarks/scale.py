"""Scale: writing, importing and opening traces of growing size, rate and memory per size.

For each size (1M and 10M tasks; 100M with ``--huge``) this runs, each as its own
process so each peak is its own:

* ``synth``: write and finalize a synthetic trace;
* ``export --format csv`` and ``--format chrome`` of that trace, then ``import`` of each
  file (Daisen's CSV and Chrome Trace Event JSON of the same tasks);
* opening it as the app does: the first Overview page (16 compute units, two metrics,
  figures JSON-encoded) through ``dashapp`` and its queries, timed inside the process
  (Dash and Plotly imports excluded); and ``info``.

Peak memory is the peak resident set of the whole process tree (``synth`` writes from
a child process), sampled every 20 ms, and never less than the largest single process's
``ru_maxrss``. The baseline is this program at the first size: the table prints, per
step, the speed (tasks/s for the steps that handle every task, pages/s for opening) and
the peak against the first row (goal: speed within 20%, memory flat and under 512 MiB).

    python benchmarks/scale.py [--sizes 1000000 10000000] [--huge] [--keep DIR]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parents[1]
SAMPLE_S = 0.02
OPEN_STEPS = ("overview", "info")  # cost independent of the task count


def tree_rss(process: psutil.Process) -> int:
    """Resident bytes of ``process`` and all its descendants (0 once it has gone)."""
    total = 0
    try:
        for member in [process, *process.children(recursive=True)]:
            try:
                total += member.memory_info().rss
            except psutil.Error:
                pass
    except psutil.Error:
        pass
    return total


def measure(argv: list) -> tuple[float, float, str]:
    """(wall seconds, peak MiB of the process tree, stdout) of running ``argv``."""
    # Files, not pipes: a chatty child must not block on a full pipe while we wait.
    with tempfile.TemporaryFile() as stdout, tempfile.TemporaryFile() as stderr:
        started = time.perf_counter()
        process = subprocess.Popen([str(a) for a in argv], stdout=stdout, stderr=stderr,
                                   cwd=ROOT)
        status, usage, peak = wait_sampling(process)
        seconds = time.perf_counter() - started
        stdout.seek(0)
        stderr.seek(0)
        out, err = stdout.read().decode(), stderr.read().decode()
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(map(str, argv))} failed: {err.strip()}")
    return seconds, max(peak, usage.ru_maxrss * 1024) / 2**20, out


def wait_sampling(process: subprocess.Popen) -> tuple:
    """(wait status, rusage, peak tree RSS bytes) of ``process``, sampled until it exits."""
    watched = psutil.Process(process.pid)
    peak = 0
    while True:
        pid, status, usage = os.wait4(process.pid, os.WNOHANG)
        if pid:
            break
        peak = max(peak, tree_rss(watched))
        time.sleep(SAMPLE_S)
    process.returncode = os.waitstatus_to_exitcode(status)
    return status, usage, peak


def simulator(*args) -> list:
    return [sys.executable, "-m", "simulator", *args]


def open_overview(path: Path) -> None:
    """Child mode: build the first Overview page of ``path`` as the app does; print its
    seconds (after the imports, which any page pays once per server)."""
    sys.path.insert(0, str(ROOT))
    import plotly.utils

    from dashapp import urls
    from dashapp.daisen import views

    started = time.perf_counter()
    page = views.overview(path, urls.OverviewState(trace=path.name, filter=r"CU\[\d+\]$"))
    for chart in page.charts:
        json.dumps(chart.figure, cls=plotly.utils.PlotlyJSONEncoder)
    if not page.charts:
        raise SystemExit(f"{path}: the Overview page has no charts")
    print(time.perf_counter() - started)


def steps_of(n: int, directory: Path) -> dict:
    """{step: a function measuring it, (seconds, peak MiB)} for ``n`` tasks, in order:
    write first, then the cheap opens, then the exports and imports."""
    trace = directory / f"synth-{n}.sqlite"
    steps = {
        "synth": lambda: measure(simulator("synth", "--tasks", n, "-o", trace, "--force"))[:2],
        "overview": lambda: overview(trace),
        "info": lambda: measure(simulator("info", trace))[:2],
    }
    for fmt, suffix in (("csv", "csv"), ("chrome", "json")):
        exported = directory / f"synth-{n}.{suffix}"
        imported = directory / f"imported-{n}-{fmt}.sqlite"
        steps[f"export-{fmt}"] = lambda exported=exported, fmt=fmt: measure(
            simulator("export", trace, "-o", exported, "--format", fmt, "--force"))[:2]
        steps[f"import-{fmt}"] = lambda exported=exported, imported=imported: import_once(
            exported, imported)
    return steps


def overview(trace: Path) -> tuple[float, float]:
    _, peak, printed = measure([sys.executable, __file__, "--open-overview", trace])
    return float(printed), peak


def import_once(exported: Path, imported: Path) -> tuple[float, float]:
    """Import ``exported`` and delete both files (they are as large as the trace)."""
    result = measure(simulator("import", exported, "-o", imported, "--force"))[:2]
    exported.unlink()
    imported.unlink()
    return result


def speed(step: str, n: int, seconds: float) -> float:
    return 1 / seconds if step in OPEN_STEPS else n / seconds


STEPS = ("synth", "overview", "info", "export-csv", "import-csv", "export-chrome",
         "import-chrome")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000_000, 10_000_000])
    parser.add_argument("--huge", action="store_true", help="also 100M tasks (tens of minutes)")
    parser.add_argument("--steps", nargs="+", choices=STEPS, default=STEPS,
                        help="measure only these (synth always runs: the others read its trace;"
                             " an import needs its export)")
    parser.add_argument("--keep", help="directory for the traces (default: a temporary one)")
    parser.add_argument("--open-overview", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.open_overview:
        return open_overview(args.open_overview)
    sizes = args.sizes + ([100_000_000] if args.huge else [])
    wanted = {"synth", *args.steps} | {f"export-{s[7:]}" for s in args.steps
                                       if s.startswith("import-")}
    first = {}
    with tempfile.TemporaryDirectory(dir=args.keep) as tmp:
        print(f"{'tasks':>12} {'step':13} {'seconds':>9} {'tasks/s':>10} {'peak MiB':>9} "
              f"{'speed vs first':>15} {'memory vs first':>16}  load", flush=True)
        for n in sizes:
            for step, run in steps_of(n, Path(tmp)).items():
                if step not in wanted:
                    continue
                seconds, peak = run()
                first.setdefault(step, (n, seconds, peak))
                base_n, base_seconds, base_peak = first[step]
                ratio = speed(step, n, seconds) / speed(step, base_n, base_seconds)
                rate = "-" if step in OPEN_STEPS else f"{n / seconds:,.0f}"
                print(f"{n:>12,} {step:13} {seconds:>9.3f} {rate:>10} {peak:>9.0f} "
                      f"{ratio:>14.2f}x {peak / base_peak:>15.2f}x  {os.getloadavg()[0]:.1f}",
                      flush=True)
            trace = Path(tmp) / f"synth-{n}.sqlite"
            print(f"{n:>12,} trace {trace.stat().st_size:,} bytes "
                  f"({trace.stat().st_size / n:.1f} B/task)", flush=True)
            trace.unlink()


if __name__ == "__main__":
    main()
