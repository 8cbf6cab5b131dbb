"""Klein's turnaround table, measured on GPUscope.

Klein (2015, Table 7.1) timed parallel reduction v1 with a work-group size of 64 at
256, 2,560 and 25,600 elements, from submitting the program to seeing the views,
without instrumentation and with the branching view, the memory view or both. We
time the same cells from the kernel's source text to a finished trace file: parse,
build the host data, run the kernel SIMT on it, simulate it on the timing model
(R9 Nano), write the trace and finalize it, and append the kernel records the views
read (``kernel_*`` tables). Rendering is the browser's job and is not included,
which Klein's figures do include; his ran on a real GPU instead of a simulator.

The baseline is Klein's published figures (his system is not available to run);
the ratio column is ours divided by his, and the goal is at most 1/3 in every cell.

    python benchmarks/turnaround.py [--repeat 3] [--trace-level kernel]
"""
import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from simulator.gpu.config import default_config  # noqa: E402
from simulator.kernels import builtin_source, compile_source  # noqa: E402
from simulator.kernels.cli import KernelFile  # noqa: E402
from simulator.kernels.records import KernelRecorder  # noqa: E402
from simulator.kernels.session import simulate_with_records  # noqa: E402

SIZES = (256, 2560, 25600)
# Klein, Table 7.1, in ms: elements -> (no instrumentation, branching, memory, both views)
KLEIN_MS = {256: (730, 1163, 996, 1354), 2560: (843, 1263, 1489, 1773), 25600: (873, 2680, 4102, 5372)}
COLUMNS = (
    ("none", None),
    ("branching", dict(watch=False, branches=True, emit=False)),
    ("memory", dict(watch=True, branches=False, emit=False)),
    ("both", dict(watch=True, branches=True, emit=True)),
)
GOAL = 1 / 3


def one_cell(source_text, elements, probes, trace_path, trace_level):
    """Seconds from source text to a finished trace file with the kernel records."""
    start = time.perf_counter()
    program = compile_source("reduction_v1.cl", source_text)
    workload = KernelFile(program, "reduce", (elements,), (64,),
                          [("g_idata", f"random:{elements}"), ("g_odata", f"zeros:{elements // 64}"),
                           ("n", str(elements)), ("sdata", "local:64")])
    recorder = (KernelRecorder(instrument=False) if probes is None
                else KernelRecorder(instrument=True, **probes))
    simulate_with_records(workload, default_config(), trace_path, recorder, progress=False,
                          trace_level=trace_level, command="benchmarks/turnaround.py")
    return time.perf_counter() - start


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5, help="runs per cell, the median is shown (default 5)")
    parser.add_argument("--trace-level", default="kernel",
                        help="timing-model trace detail (default kernel: what the kernel views need; "
                             "'all' also records every wavefront, instruction and memory task)")
    args = parser.parse_args(argv)
    source_text = builtin_source("reduction_v1")
    one_cell(source_text, 256, None, Path(tempfile.gettempdir()) / "warmup.sqlite", args.trace_level)
    print(f"reduction v1, work-group 64, trace level {args.trace_level!r}, median of {args.repeat};"
          " ms ours / ms Klein = ratio (goal <= 0.33)")
    print(f"{'elements':>9}  " + "  ".join(f"{name:>24}" for name, _ in COLUMNS))
    worst = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        for elements in SIZES:
            cells = []
            for col, (name, probes) in enumerate(COLUMNS):
                times = [one_cell(source_text, elements, probes, Path(tmp) / f"{name}-{elements}.sqlite",
                                  args.trace_level) for _ in range(args.repeat)]
                ours = statistics.median(times) * 1000
                klein = KLEIN_MS[elements][col]
                ratio = ours / klein
                worst = max(worst, ratio)
                cells.append(f"{ours:7.0f} / {klein:5d} = {ratio:4.2f}{'' if ratio <= GOAL else '!'}")
            print(f"{elements:>9,}  " + "  ".join(f"{c:>24}" for c in cells))
    verdict = "meets" if worst <= GOAL else "misses"
    print(f"worst ratio {worst:.2f}: {verdict} the goal of {GOAL:.2f} ('!' marks cells above it)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
