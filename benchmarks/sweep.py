"""A sweep on the process pool against the same points run one after the other.

Eight points of PageRank (dispatch rate 1 and 2 times four L2 bank counts), fully
traced (``--trace-level`` lighter ones). The baseline runs each point's task in this
process, one after the other; the sweep runs the same tasks on the default scheduler, a pool of ``--workers``
processes, through ``run_sweep`` (summary, progress and all). Both write every trace.

The overhead per point is what the pool adds to the simulations themselves: the
sweep's wall time times its workers, less the time the points spent running (as each
measured itself), divided by the points; and, apart from any parallelism, the pool's
own cost per point: 16 tiny points on one worker against the same in this process.
Goal: at least 1.7x on 2 cores, and under 0.5 s of overhead per point.

The speed-up needs two free cores: on a machine where other work keeps the cores busy,
the kernel shares CPU time between sessions, not processes, and a pool of two gets no
more than one process would (the load average is printed beside the figures).

    python benchmarks/sweep.py [--workers 2 --nodes 1024 --edges 8192 --iterations 2]
"""
import argparse
import os
import secrets
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from simulator.gpu.config import default_config  # noqa: E402
from simulator.runs.sweep import Sweep, parse_vary, prepare  # noqa: E402
from simulator.runs.sweep_point import TOKEN_FILE, option_names, run_point  # noqa: E402
from simulator.runs.sweep_schedule import point_tasks, run_sweep  # noqa: E402
from simulator.workloads import WORKLOADS  # noqa: E402

GOAL_SPEEDUP = 1.7
GOAL_OVERHEAD_S = 0.5


def measure(sweep, workers, tmp):
    """(wall one after the other, wall on the pool, summed wall of the pool's points,
    points) of ``sweep``; both write every trace, and their results must agree."""
    serial_dir = Path(tmp) / "serial"
    serial_dir.mkdir()
    token = secrets.token_hex(8)
    (serial_dir / TOKEN_FILE).write_text(token)
    start = time.perf_counter()
    serial = [run_point(task) for _, task in point_tasks(sweep, serial_dir, token, "shared")]
    serial_wall = time.perf_counter() - start
    pool_dir = Path(tmp) / "pool"
    existing = prepare(pool_dir, sweep)
    start = time.perf_counter()
    outcome = run_sweep(sweep, pool_dir, existing, "processes", workers, progress=False)
    pool_wall = time.perf_counter() - start
    failed = [r["error"] for r in serial + outcome.rows if r["status"] != "ok"]
    assert not failed, f"a point failed: {failed[0]}"
    assert [r["simulated_time_ps"] for r in serial] == \
        [int(r["simulated_time_ps"]) for r in outcome.rows], "the pool changed a result"
    return serial_wall, pool_wall, sum(float(r["wall_s"]) for r in outcome.rows), len(serial)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--nodes", type=int, default=1024)
    parser.add_argument("--edges", type=int, default=8192)
    parser.add_argument("--iterations", type=int, default=2)
    parser.add_argument("--trace-level", default="all",
                        help="all (default) or a lighter level, to tell simulating from writing")
    args = parser.parse_args(argv)
    load_before = os.getloadavg()[0]
    names = option_names(WORKLOADS["pagerank"])
    sweep = Sweep("pagerank", dict(nodes=args.nodes, edges=args.edges, iterations=args.iterations),
                  default_config(),
                  parse_vary(["cp.wg_dispatch_per_cycle=1,2", "l2.banks=4,8,16,32"], names),
                  trace_level=args.trace_level, option_names=names)
    # The pool's own cost, apart from parallelism: 16 tiny points on one worker.
    tiny = Sweep("vectoradd", dict(size=256, local=64), default_config(),
                 parse_vary(["l2.banks=1,2,4,8,16,32,64,128", "seed=0,1"],
                            option_names(WORKLOADS["vectoradd"])),
                 trace_level="kernel", option_names=option_names(WORKLOADS["vectoradd"]))
    with tempfile.TemporaryDirectory() as a, tempfile.TemporaryDirectory() as b:
        serial_wall, pool_wall, busy, points = measure(sweep, args.workers, a)
        tiny_serial, tiny_pool, _, tiny_points = measure(tiny, 1, b)
    overhead = (pool_wall * args.workers - busy) / points
    print(f"PageRank {args.nodes} nodes, {args.edges} edges, {args.iterations} iterations:"
          f" {points} points, trace level {args.trace_level}, {os.cpu_count()} cores;"
          f" load average {load_before:.1f} before, {os.getloadavg()[0]:.1f} after"
          " (other work on the machine takes cores from both runs)")
    print(f"one after the other  {serial_wall:7.2f} s  ({serial_wall / points:.2f} s per point)")
    print(f"process pool ({args.workers} workers) {pool_wall:7.2f} s"
          f"  (points ran {busy:.2f} s in all)")
    print(f"speedup {serial_wall / pool_wall:.2f}x (goal >= {GOAL_SPEEDUP}x on 2 cores);"
          f" overhead per point {overhead:.3f} s (goal < {GOAL_OVERHEAD_S} s)")
    print(f"pool cost alone: {tiny_points} tiny points on 1 worker {tiny_pool:.2f} s, one after"
          f" the other {tiny_serial:.2f} s: {(tiny_pool - tiny_serial) / tiny_points:.3f} s"
          " per point (worker start included)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
