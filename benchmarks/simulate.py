"""Timing-model throughput and the cost of tracing, on real workloads.

Headline: the cost of tracing as a user sees it. Whole ``python -m simulator run``
processes, from their start until the trace is finalized, in place and opened
read-only as the app opens it, at full detail against ``--trace-level off``, for the
1024x1024 transpose and PageRank; rounds of both, medians (goal: at most 1.5x;
MGPUSim's tracing costs about 10x).

Then the detail: simulates the 1024x1024 matrix transpose and PageRank (default size) in the same run:
untraced, traced at the ``inst`` level, and at full detail (``all``) into an SQLite
trace; plus full detail into a sink that drops the rows, which separates the cost of
the tracer from the cost of SQLite. The kernels are executed functionally once, up
front, so every configuration times the same thing: the timing model and its trace
(finalize, the index and metric-pyramid build after the run, is printed apart).
Prints events/s, tasks/s and the overhead as a ratio to the untraced time, best of
``--repeat`` rounds of all four (and the ratio of the medians, since these machines are
noisy), in wall-clock time and in CPU time of the simulating process (the trace writer
runs in a child process; on a busy machine the wall clock mostly measures the wait for a
free core). Goal: full tracing at most 2x (MGPUSim reports about 10x).

    python benchmarks/simulate.py [--workloads transpose pagerank] [--repeat 5] [--end-to-end-only]
"""
import argparse
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from simulator.gpu import GPU, default_config, default_implementation
from simulator.gpu.run import simulate
from simulator.tracing import tracer_class
from simulator.workloads import WORKLOADS

LABELS = ("off", "inst", "all", "all, rows dropped")
CASES = {
    "transpose": {"size": 1024},
    "pagerank": {},
}
CLI_OPTIONS = {"transpose": ["--size", "1024"], "pagerank": []}


def _run_process(name, out, level):
    """Wall seconds of one ``run`` process until its trace (if any) opens read-only, finalized."""
    command = [sys.executable, "-m", "simulator", "run", name, *CLI_OPTIONS[name], "--no-progress",
               "--trace-level", level] + (["-o", str(out), "--force"] if level != "off" else [])
    started = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    if level != "off":
        db = sqlite3.connect(f"file:{out}?mode=ro", uri=True)
        finalized, = db.execute("SELECT finalized FROM run").fetchone()
        db.execute("SELECT count(*) FROM metric_bin WHERE level = 30").fetchone()
        db.close()
        if not finalized:
            raise SystemExit(f"{name}: the trace is not finalized")
    return time.perf_counter() - started


def end_to_end(workloads, repeat, tmp):
    """The headline: full detail against tracing off, whole processes, medians of rounds."""
    print(f"end to end (whole processes until the trace opens finalized), median of {repeat}:")
    for name in workloads:
        times = {"off": [], "all": []}
        for _ in range(repeat):
            for level, rounds in times.items():
                rounds.append(_run_process(name, Path(tmp) / f"e2e-{name}.sqlite", level))
        off, full = statistics.median(times["off"]), statistics.median(times["all"])
        print(f"{name:9s} off {off:6.2f} s   full detail {full:6.2f} s   ratio {full / off:4.2f}x "
              f"(goal <= 1.5x; rounds: off {', '.join(f'{t:.2f}' for t in times['off'])}; "
              f"all {', '.join(f'{t:.2f}' for t in times['all'])})")


class Prepared:
    """A workload whose launches were produced (functionally executed) once, up front."""

    def __init__(self, name, options):
        self.name = name
        self.seed = 0
        self.recorded = WORKLOADS[name](seed=0, **options).made_launches()

    def launches(self, recorder=None):
        return iter(self.recorded)


class DropRows:
    """A tracer sink that counts rows and keeps nothing."""

    def __init__(self):
        self.rows = 0

    def write_batch(self, tasks, details, tags, locations, kinds, tag_names):
        self.rows += len(tasks)


def traced_to_nowhere(workload, implementation):
    """(seconds, events, tasks) of a full-detail run whose rows are dropped."""
    tracer = tracer_class(implementation)(DropRows(), ps_per_tick=1000)
    start = time.perf_counter()
    gpu = GPU(default_config(), tracer, "all", implementation)
    gpu.start_simulation()
    for launch in workload.launches():
        gpu.run_kernel(launch)
    gpu.finish()
    tracer.close(gpu.now)
    return time.perf_counter() - start, gpu.events, tracer.next_key, gpu.now


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workloads", nargs="+", default=list(CASES), choices=list(CASES))
    parser.add_argument("--implementation", choices=("cython", "python"),
                        default=default_implementation())
    parser.add_argument("--repeat", type=int, default=5, help="rounds of every configuration; best kept")
    parser.add_argument("--end-to-end-only", action="store_true", help="print the headline only")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        end_to_end(args.workloads, args.repeat, tmp)
        if args.end_to_end_only:
            return
        print(f"\ndetail (implementation: {args.implementation}; best of {args.repeat}):")
        for name in args.workloads:
            workload = Prepared(name, CASES[name])
            simulate(workload, default_config(), None, trace_level="off", progress=False,
                     implementation=args.implementation)  # warm-up: imports, allocator
            # Rounds of every configuration, so a noisy stretch of the machine falls on
            # all of them alike instead of on one.
            runs = {label: [] for label in LABELS}
            for _ in range(args.repeat):
                for label in LABELS:
                    runs[label].append(_measure(workload, label, tmp, args.implementation))
            base = min(runs["off"])
            base_median = statistics.median(r[0] for r in runs["off"])
            for label in LABELS:
                seconds, events, tasks, cycles, finalize, cpu = min(runs[label])
                median = statistics.median(r[0] for r in runs[label])
                if cycles != base[3]:
                    raise SystemExit(f"{name}: tracing changed the simulated time, a bug")
                print(f"{name:9s} {label:17s} {cycles:>8,} cycles {seconds:6.2f} s "
                      f"{events / seconds / 1e6:5.2f} M events/s {tasks / seconds / 1e3:7.1f} k tasks/s "
                      f"{tasks:>9,} tasks  overhead {seconds / base[0]:4.2f}x wall "
                      f"(medians {median / base_median:4.2f}x), {cpu / base[5]:4.2f}x cpu ({cpu:.2f} s)"
                      + (f"  (finalize {finalize:.2f} s)" if finalize else ""))


def _measure(workload, label, tmp, implementation):
    """(seconds, events, tasks, cycles, finalize seconds, cpu seconds) of one run."""
    cpu = time.process_time()
    if label == "all, rows dropped":
        seconds, events, tasks, cycles = traced_to_nowhere(workload, implementation)
        finalize = 0.0
    else:
        out = Path(tmp) / f"{workload.name}.sqlite" if label != "off" else None
        r = simulate(workload, default_config(), out, trace_level=label, progress=False,
                     implementation=implementation)
        seconds, events, tasks, cycles = r.timing_seconds, r.events, r.tasks, r.cycles
        finalize = r.finalize_seconds
    return seconds, events, tasks, cycles, finalize, time.process_time() - cpu

if __name__ == "__main__":
    main()
