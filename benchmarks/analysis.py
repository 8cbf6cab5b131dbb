"""Analysis cost: every analysis of a launch but the what-if, against reading its tasks.

Simulates PageRank at three sizes (one iteration: one launch, its tasks growing with the
nodes), then times ``analyze_kernel`` on the launch (S1-S12: budget, CPI stack, stalls,
memory latency, blocking, imbalance, SOL, roofline, critical path, CU idle, hints; the
launch's tasks read afresh each time) and, as the baseline, the plain cost of fetching
the launch's task rows into Python with ``sqlite3`` (``SELECT ... FROM task WHERE id
BETWEEN ...``). Prints both per size (wall and CPU time), the ratio, and the time per
task, which stays flat when the cost grows linearly. Then, as a user waits for it,
``analyze`` of the case study's whole trace (``run pagerank`` with its defaults: three
launches, about a million tasks), against the goal of 2 s (issue #32).

With ``--profile TRACE`` (a Kineto trace, such as the shared
``hta_diff_control_a100.json.gz``, 35 MB) it also imports the trace and times every
profile analysis (exact and ``--like-hta``) as a user waits for it, the command
``python -m simulator analyze`` end to end (Python's start, the imports, reading the
trace, every analysis, the report printed), and inside this process (``analyze``
alone), against HolisticTraceAnalysis' own time on the same file in the same run (its
parse plus the temporal, idle, launch, queue and overlap analyses), when HTA is
installed (the test extra). The goal is 3 s end to end (issue #33).

    python benchmarks/analysis.py [--nodes 512 1024 2048] [--repeat 3] [--no-whole]
                                  [--profile TRACE]
"""
import argparse
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import NamedTuple

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from simulator.__main__ import main as simulator  # noqa: E402
from simulator.analysis.report import analyze, analyze_kernel  # noqa: E402
from simulator.analysis.scope import Scope  # noqa: E402
from simulator.analysis.thresholds import Thresholds  # noqa: E402
from simulator.analysis.trace import Trace  # noqa: E402

GOAL_S = 2.0
PROFILE_GOAL_S = 3.0
ROOT = Path(__file__).resolve().parents[1]


class Seconds(NamedTuple):
    wall: float
    cpu: float  # this process's, all threads


def best(repeat, work) -> Seconds:
    """The least wall and the least CPU time of ``repeat`` runs of ``work``."""
    times = []
    for _ in range(repeat):
        wall, cpu = time.perf_counter(), time.process_time()
        work()
        times.append(Seconds(time.perf_counter() - wall, time.process_time() - cpu))
    return Seconds(min(t.wall for t in times), min(t.cpu for t in times))


def measure(path, repeat):
    """(tasks, analysis Seconds, baseline read Seconds) of the trace's first launch."""
    with Trace(path) as trace:
        kernel = trace.kernels()[0]
        analysis = best(repeat, lambda: analyze_kernel(Scope(trace, kernel), Thresholds()))
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    read = best(repeat, lambda: db.execute(
        "SELECT id, parent, kind, location, start_ps, end_ps FROM task WHERE id BETWEEN ? AND ?",
        (kernel.task + 1, kernel.last_task)).fetchall())
    db.close()
    return kernel.last_task - kernel.task, analysis, read


def hta_seconds(trace, tmp):
    """HTA's time to parse the trace and run the five analyses we hold against it."""
    import logging

    from hta.trace_analysis import TraceAnalysis

    folder = Path(tmp) / "hta"
    folder.mkdir()
    (folder / Path(trace).name).symlink_to(Path(trace).resolve())
    logging.disable(logging.WARNING)
    started = time.perf_counter()
    hta = TraceAnalysis(trace_dir=str(folder))
    rank = hta.t.get_ranks()[0]
    hta.get_temporal_breakdown(visualize=False)
    hta.get_idle_time_breakdown(ranks=[rank], visualize=False)
    hta.get_cuda_kernel_launch_stats(ranks=[rank], visualize=False)
    hta.get_queue_length_summary(ranks=[rank])
    hta.get_comm_comp_overlap(visualize=False)
    return time.perf_counter() - started


def command(args) -> Seconds:
    """One run of ``python -m simulator ARGS`` as a user starts it: its wall time, and
    the CPU time of the process (its children's, from the OS)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    before = os.times()
    wall = time.perf_counter()
    subprocess.run([sys.executable, "-m", "simulator", *args], check=True, env=env,
                   stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - wall
    after = os.times()
    return Seconds(wall, (after.children_user - before.children_user)
                   + (after.children_system - before.children_system))


def best_command(repeat, args) -> Seconds:
    """The least wall and the least CPU time of ``repeat`` runs of the command."""
    times = [command(args) for _ in range(repeat)]
    return Seconds(min(t.wall for t in times), min(t.cpu for t in times))


def profile(trace, repeat):
    """Our profile analyses of an imported Kineto trace, against HTA's on the file."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "profile.sqlite"
        started = time.perf_counter()
        assert simulator(["import", str(trace), "-o", str(path)]) == 0
        imported = time.perf_counter() - started
        cli = best_command(repeat, ["analyze", str(path)])
        cli_like = best_command(repeat, ["analyze", str(path), "--like-hta"])
        exact = best(repeat, lambda: analyze(path))
        like = best(repeat, lambda: analyze(path, like_hta=True))
        try:
            theirs = hta_seconds(trace, tmp)
        except ImportError:
            theirs = None
    print(f"\n{Path(trace).name}: import {imported:.2f} s (once)")
    print(f"every analysis, python -m simulator analyze end to end: {cli.wall:.3f} s wall"
          f" ({cli.cpu:.3f} s CPU), --like-hta {cli_like.wall:.3f} s ({cli_like.cpu:.3f} s CPU);"
          f" goal {PROFILE_GOAL_S:.0f} s")
    print(f"  of which analyze() in this process: {exact.wall:.3f} s ({exact.cpu:.3f} s CPU),"
          f" --like-hta {like.wall:.3f} s ({like.cpu:.3f} s CPU)")
    if theirs is not None:
        print(f"HTA 0.5 (parse + 5 analyses, in this process) {theirs:.2f} s:"
              f" {theirs / cli_like.wall:.1f}x our command end to end")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, nargs="+", default=[512, 1024, 2048])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-whole", action="store_true", help="skip the case study's whole"
                        " trace (its simulation takes about 20 s)")
    parser.add_argument("--profile", metavar="TRACE", help="also time the profile analyses of"
                        " this Kineto trace against HTA's")
    args = parser.parse_args()
    if args.profile:
        profile(args.profile, args.repeat)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for nodes in args.nodes:
            path = Path(tmp) / f"pagerank{nodes}.sqlite"
            assert simulator(["run", "pagerank", "--nodes", str(nodes), "--edges", str(8 * nodes),
                              "--iterations", "1", "-o", str(path), "--no-progress"]) == 0
            rows.append((nodes, *measure(path, args.repeat)))
        whole = None if args.no_whole else case_study(Path(tmp) / "pagerank.sqlite", args.repeat)
    print(f"\n{'nodes':>6} {'tasks':>9} {'analysis s':>11} {'(CPU s)':>8} {'read s':>8} {'ratio':>7}"
          f" {'µs/task':>8}")
    for nodes, tasks, analysis, read in rows:
        print(f"{nodes:>6} {tasks:>9,} {analysis.wall:>11.3f} {analysis.cpu:>8.3f} {read.wall:>8.3f}"
              f" {analysis.wall / read.wall:>6.2f}x {1e6 * analysis.wall / tasks:>8.2f}")
    if whole is not None:
        tasks, launches, seconds = whole
        print(f"\nrun pagerank (defaults: {launches} launches, {tasks:,} tasks): analyze"
              f" {seconds.wall:.3f} s wall, {seconds.cpu:.3f} s CPU (goal {GOAL_S:.0f} s)")


def case_study(path, repeat):
    """(tasks, launches, Seconds) of ``analyze`` on the whole trace of ``run pagerank``."""
    assert simulator(["run", "pagerank", "-o", str(path), "--no-progress"]) == 0
    with Trace(path) as trace:
        kernels = trace.kernels()
    tasks = sum(k.last_task - k.task for k in kernels)
    return tasks, len(kernels), best(repeat, lambda: analyze(path))


if __name__ == "__main__":
    main()
