"""Timing-model throughput and the cost of tracing, on real workloads.

Simulates the 1024x1024 matrix transpose and PageRank with tracing off and at full
detail (and at the ``inst`` level, without memory requests), in the same run, and
prints events/s, tasks/s and the tracing overhead as a ratio of timing-model wall time
(functional execution of the kernels on real data is measured separately and excluded,
as it is the same with or without tracing). Goal: full tracing at most 2x the untraced
time (MGPUSim reports about 10x).

    python benchmarks/simulate.py [--workloads transpose pagerank] [--implementation python]
"""
import argparse
import tempfile
from pathlib import Path

from simulator.gpu import default_config, default_implementation
from simulator.gpu.run import simulate
from simulator.workloads import WORKLOADS

CASES = {
    "transpose": {"size": 1024},
    "pagerank": {},
}


def run_case(name, options, level, out, implementation):
    workload = WORKLOADS[name](seed=0, **options)
    return simulate(workload, default_config(), out if level != "off" else None,
                    trace_level=level, progress=False, implementation=implementation)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workloads", nargs="+", default=list(CASES), choices=list(CASES))
    parser.add_argument("--implementation", choices=("cython", "python"),
                        default=default_implementation())
    args = parser.parse_args()
    print(f"implementation: {args.implementation}")
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.workloads:
            base = None
            for level in ("off", "inst", "all"):
                result = run_case(name, CASES[name], level, Path(tmp) / f"{name}.sqlite",
                                  args.implementation)
                if base is None:
                    base = result
                ratio = result.timing_seconds / base.timing_seconds
                print(f"{name:10s} trace {level:4s}: {result.cycles:>9,} cycles  "
                      f"{result.timing_seconds:6.2f} s  {result.events_per_second / 1e6:5.2f} M events/s  "
                      f"{result.tasks_per_second / 1e3:7.1f} k tasks/s  {result.tasks:>9,} tasks  "
                      f"overhead {ratio:4.2f}x  (functional {result.functional_seconds:.2f} s, "
                      f"finalize {result.finalize_seconds:.2f} s)")
                if result.cycles != base.cycles:
                    raise SystemExit("tracing changed the simulated time: a bug")


if __name__ == "__main__":
    main()
