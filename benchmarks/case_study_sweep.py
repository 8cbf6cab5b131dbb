"""The Daisen case study as a sweep, read back the way the Compare page shows it.

    python -m simulator sweep pagerank --vary cp.wg_dispatch_per_cycle=1,2 -o DIR

then the comparison of the two points (``/compare?a=DIR/...-1.sqlite&b=DIR/...-2.sqlite``
in the app): the speed-up of dispatch rate 2 over 1 (Daisen's paper: 1.16x; our model
about 1.12x at the default size) and where it comes from, the SIMD busy fraction and
the wavefronts resident per CU, next to the statistics that moved most.

    python benchmarks/case_study_sweep.py [--nodes 2048 --edges 16384 --iterations 3] [-o DIR]
"""
import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dashapp.comparison import stats  # noqa: E402
from simulator.__main__ import main as simulator  # noqa: E402

PAPER_SPEEDUP = 1.16


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, default=2048)
    parser.add_argument("--edges", type=int, default=16384)
    parser.add_argument("--iterations", type=int, default=3)
    parser.add_argument("-o", "--output", help="sweep directory to keep (default: a temporary one)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(args.output or Path(tmp) / "pagerank-dispatch")
        start = time.perf_counter()
        code = simulator(["sweep", "pagerank", "--nodes", str(args.nodes), "--edges",
                          str(args.edges), "--iterations", str(args.iterations), "--no-progress",
                          "--vary", "cp.wg_dispatch_per_cycle=1,2", "-o", str(out)])
        if code:
            return code
        wall = time.perf_counter() - start
        a = stats.run_stats(out / "cp.wg_dispatch_per_cycle-1.sqlite")
        b = stats.run_stats(out / "cp.wg_dispatch_per_cycle-2.sqlite")
        speedup = stats.speedup(a.simulated_ps, b.simulated_ps)
        print(f"PageRank {args.nodes} nodes, {args.edges} edges, {args.iterations} iterations:"
              f" sweep of 2 points in {wall:.1f} s")
        print(f"speed-up of dispatch rate 2 over 1: {speedup:.3f}x (paper {PAPER_SPEEDUP}x;"
              f" ratio to the paper {speedup / PAPER_SPEEDUP:.2f})")
        print(f"SIMD busy          {a.group_busy['SIMD']:.1%} -> {b.group_busy['SIMD']:.1%}")
        print(f"wavefronts per CU  {a.wavefronts_per_cu:.2f} -> {b.wavefronts_per_cu:.2f}")
        print("largest changes:   " + "; ".join(
            f"{r.section} {r.label} {stats.ratio(r.a, r.b):.2f}x"
            for r in stats.largest_changes(stats.stat_rows(a, b))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
