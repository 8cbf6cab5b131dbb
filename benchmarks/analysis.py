"""Analysis cost: every analysis of a launch but the what-if, against reading its tasks.

Simulates PageRank at three sizes (one iteration: one launch, its tasks growing with the
nodes), then times ``analyze_kernel`` on the launch (S1-S12: budget, CPI stack, stalls,
memory latency, blocking, imbalance, SOL, roofline, critical path, CU idle, hints) and,
as the baseline, the plain cost of fetching the launch's task rows into Python with
``sqlite3`` (``SELECT ... FROM task WHERE id BETWEEN ...``). Prints both per size, the
ratio, and the time per task, which stays flat when the cost grows linearly.

    python benchmarks/analysis.py [--nodes 512 1024 2048] [--repeat 3]
"""
import argparse
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from simulator.__main__ import main as simulator  # noqa: E402
from simulator.analysis.report import analyze_kernel  # noqa: E402
from simulator.analysis.scope import Scope  # noqa: E402
from simulator.analysis.thresholds import Thresholds  # noqa: E402
from simulator.analysis.trace import Trace  # noqa: E402


def best(repeat, work):
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        work()
        times.append(time.perf_counter() - started)
    return min(times)


def measure(path, repeat):
    """(tasks, analysis seconds, baseline read seconds) of the trace's first launch."""
    with Trace(path) as trace:
        kernel = trace.kernels()[0]
        analysis = best(repeat, lambda: analyze_kernel(Scope(trace, kernel), Thresholds()))
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    read = best(repeat, lambda: db.execute(
        "SELECT id, parent, kind, location, start_ps, end_ps FROM task WHERE id BETWEEN ? AND ?",
        (kernel.task + 1, kernel.last_task)).fetchall())
    db.close()
    return kernel.last_task - kernel.task, analysis, read


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, nargs="+", default=[512, 1024, 2048])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for nodes in args.nodes:
            path = Path(tmp) / f"pagerank{nodes}.sqlite"
            assert simulator(["run", "pagerank", "--nodes", str(nodes), "--edges", str(8 * nodes),
                              "--iterations", "1", "-o", str(path), "--no-progress"]) == 0
            rows.append((nodes, *measure(path, args.repeat)))
    print(f"\n{'nodes':>6} {'tasks':>9} {'analysis s':>11} {'read s':>8} {'ratio':>7} {'µs/task':>8}")
    for nodes, tasks, analysis, read in rows:
        print(f"{nodes:>6} {tasks:>9,} {analysis:>11.3f} {read:>8.3f} {analysis / read:>6.2f}x"
              f" {1e6 * analysis / tasks:>8.2f}")


if __name__ == "__main__":
    main()
