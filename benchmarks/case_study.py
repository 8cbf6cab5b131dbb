"""The Daisen case study, reproduced: PageRank at work-group dispatch rate 1 versus 2.

Daisen's authors found PageRank on an R9 Nano limited by the Command Processor's
work-group dispatch: thousands of one-wavefront work-groups, each short-lived, so
compute units sit mostly idle while waiting for work. Raising the dispatch rate from
1 to 2 work-groups per cycle made it 1.16x faster. Their traces showed the signature:
low SIMD occupancy, L1 buffer pressure far below 1, and only a few wavefronts per CU.

This runs both configurations with full traces and reads the three metrics back from
the trace files, the way the Overview would show them:

* SIMD occupancy: the fraction of time the SIMD units are busy (mean over SIMDs),
  and the share of lanes active in the vector instructions (SIMD efficiency);
* L1 buffer pressure: the time-averaged number of requests waiting in an L1V
  (Daisen's buffer pressure), mean and max over the L1V caches;
* wavefronts per CU: the time-averaged number of resident wavefronts per CU while
  kernels run.

    python benchmarks/case_study.py [--nodes 2048 --edges 16384 --iterations 3]
"""
import argparse
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from simulator.gpu.config import apply_overrides, default_config  # noqa: E402
from simulator.kernels.records import KernelRecorder  # noqa: E402
from simulator.runs.records import simulate_with_records  # noqa: E402
from simulator.workloads import WORKLOADS  # noqa: E402

PAPER_SPEEDUP = 1.16


def metrics(path):
    """The case study's three metrics, read from a finished trace file."""
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    end_ps = db.execute("SELECT virtual_end_ps FROM run").fetchone()[0]
    kernel_ps = db.execute(
        "SELECT sum(t.end_ps - t.start_ps) FROM task t JOIN kind k ON k.id = t.kind"
        " WHERE k.category = 'kernel'").fetchone()[0]
    simd_busy = db.execute(
        "SELECT avg(busy_ps) FROM location WHERE name LIKE '%.SIMD[%'").fetchone()[0]
    lanes = db.execute(
        "SELECT sum(active_lanes), sum(vector_instructions) FROM kernel_launch").fetchone()
    pressure = db.execute(
        "SELECT avg(p), max(p) FROM (SELECT sum(m.buffer_ps) * 1.0 / ? AS p FROM metric_bin m"
        " JOIN location l ON l.id = m.location WHERE l.name LIKE '%.L1V[%'"
        " AND m.level = l.pyramid_min_level GROUP BY m.location)", (end_ps,)).fetchone()
    # Each CU has one wavefront pool, which is where wavefront tasks live.
    cus = db.execute("SELECT count(*) FROM location WHERE name LIKE '%.CU[%].WFPool'").fetchone()[0]
    wavefront_ps = db.execute(
        "SELECT sum(t.end_ps - t.start_ps) FROM task t JOIN kind k ON k.id = t.kind"
        " WHERE k.category = 'wavefront'").fetchone()[0]
    db.close()
    return {
        "simd_busy": simd_busy / end_ps,
        "simd_efficiency": lanes[0] / 64 / lanes[1],
        "l1_pressure_mean": pressure[0] or 0.0,
        "l1_pressure_max": pressure[1] or 0.0,
        "wavefronts_per_cu": wavefront_ps / kernel_ps / cus,
    }


def run(rate, options, path):
    config = apply_overrides(default_config(), [f"cp.wg_dispatch_per_cycle={rate}"])
    workload = WORKLOADS["pagerank"](seed=0, **options)
    start = time.perf_counter()
    result = simulate_with_records(workload, config, path, KernelRecorder(instrument=False),
                                   progress=False, trace_level="all",
                                   command=f"benchmarks/case_study.py dispatch rate {rate}")
    workload.check()
    return result, time.perf_counter() - start


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, default=2048, help="graph vertices (paper: 66000)")
    parser.add_argument("--edges", type=int, default=16384, help="graph edges (paper: 420000)")
    parser.add_argument("--iterations", type=int, default=3, help="PageRank launches")
    args = parser.parse_args(argv)
    options = dict(nodes=args.nodes, edges=args.edges, iterations=args.iterations)
    rows = {}
    with tempfile.TemporaryDirectory() as tmp:
        for rate in (1, 2):
            path = Path(tmp) / f"pagerank-dispatch{rate}.sqlite"
            result, wall = run(rate, options, path)
            rows[rate] = (result, metrics(path), wall)
    print(f"PageRank {args.nodes} nodes, {args.edges} edges, {args.iterations} iterations, R9 Nano")
    print(f"{'dispatch rate':>14} {'simulated us':>13} {'SIMD busy':>10} {'lanes active':>13}"
          f" {'L1 pressure mean/max':>21} {'WFs per CU':>11} {'wall s':>7}")
    for rate, (result, m, wall) in rows.items():
        print(f"{rate:>14} {result.simulated_ps / 1e6:>13.2f} {m['simd_busy']:>10.1%}"
              f" {m['simd_efficiency']:>13.1%} {m['l1_pressure_mean']:>10.3f} / {m['l1_pressure_max']:<8.3f}"
              f" {m['wavefronts_per_cu']:>11.2f} {wall:>7.1f}")
    speedup = rows[1][0].cycles / rows[2][0].cycles
    print(f"speedup of dispatch rate 2 over 1: {speedup:.3f}x (paper: {PAPER_SPEEDUP}x;"
          f" ratio to the paper {speedup / PAPER_SPEEDUP:.2f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
