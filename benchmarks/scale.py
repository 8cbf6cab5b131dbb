"""Scale: writing, importing and opening traces of growing size, rate and memory per size.

For each size (1M and 10M tasks; 100M with ``--huge``) this runs, as separate
processes so each peak is its own:

* ``synth``: write and finalize a synthetic trace;
* ``export --format csv`` then ``import`` of that CSV (Daisen's format);
* ``info``: open the trace and summarize it, as a reader does.

It prints tasks/s and peak resident MiB for each, and the ratio to the 1M row (goal:
rates within 20% and memory flat, at most 512 MiB; the baseline is this program at the
smallest size).

    python benchmarks/scale.py [--sizes 1000000 10000000] [--huge] [--keep DIR]
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

STEPS = ("synth", "import", "info")


def measure(*args):
    """(wall seconds, peak MiB) of ``python -m simulator ARGS``."""
    started = time.perf_counter()
    process = subprocess.Popen([sys.executable, "-m", "simulator", *map(str, args)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(process.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(map(str, args))} failed: {process.stderr.read().decode()}")
    process.stderr.close()
    return time.perf_counter() - started, usage.ru_maxrss / 1024


def run_size(n, directory):
    trace = directory / f"synth-{n}.sqlite"
    csv = directory / f"synth-{n}.csv"
    imported = directory / f"imported-{n}.sqlite"
    out = {"synth": measure("synth", "--tasks", n, "-o", trace)}
    measure("export", trace, "-o", csv, "--format", "csv")
    out["import"] = measure("import", csv, "-o", imported)
    csv.unlink()
    imported.unlink()
    out["info"] = measure("info", trace)
    out["bytes"] = trace.stat().st_size
    trace.unlink()
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000_000, 10_000_000])
    parser.add_argument("--huge", action="store_true", help="also 100M tasks (tens of minutes)")
    parser.add_argument("--keep", help="directory for the traces (default: a temporary one)")
    args = parser.parse_args()
    sizes = args.sizes + ([100_000_000] if args.huge else [])
    with tempfile.TemporaryDirectory(dir=args.keep) as tmp:
        rows = {}
        print(f"{'tasks':>12} {'step':7} {'tasks/s':>10} {'peak MiB':>9} {'rate vs first':>14} "
              f"{'memory vs first':>16}  file B/task")
        for n in sizes:
            rows[n] = run_size(n, Path(tmp))
            first = rows[sizes[0]]
            for step in STEPS:
                seconds, peak = rows[n][step]
                rate = n / seconds
                print(f"{n:>12,} {step:7} {rate:>10,.0f} {peak:>9.0f} "
                      f"{rate / (sizes[0] / first[step][0]):>13.2f}x {peak / first[step][1]:>15.2f}x"
                      f"  {rows[n]['bytes'] / n:.1f}", flush=True)


if __name__ == "__main__":
    main()
