"""Klein's turnaround table, measured on GPUscope.

Klein (2015, Table 7.1) timed parallel reduction v1 with a work-group size of 64 at
256, 2,560 and 25,600 elements, from submitting the program to seeing the views,
without instrumentation and with the branching view, the memory view or both. We
time the same cells from the kernel's source text to a finished trace file, in two
ways:

* functional: parse, build the host data, run the kernel SIMT on it and write the
  trace (run metadata and the ``kernel_*`` tables the views read), then finalize.
  This is Klein's pipeline: his kernels ran on a real GPU, with no timing model;
* timed: the same plus the timing model (R9 Nano) through ``simulate``, with its
  trace at level ``kernel`` (or ``--trace-level``), the records appended after.

Rendering is the browser's job and is not included, which Klein's figures do include.
The baseline is Klein's published figures (his system is not available to run); the
ratio is ours divided by his, and the goal is at most 1/3 in every cell.

    python benchmarks/turnaround.py [--repeat 5] [--mode functional|timed|both]
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
from simulator.kernels.records import KernelRecorder  # noqa: E402
from simulator.runs.kernel_cli import KernelFile  # noqa: E402
from simulator.runs.records import record_only, simulate_with_records  # noqa: E402

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


def one_cell(source_text, elements, probes, trace_path, trace_level, timed):
    """Seconds from source text to a finished trace file with the kernel records."""
    start = time.perf_counter()
    program = compile_source("reduction_v1.cl", source_text)
    workload = KernelFile(program, "reduce", (elements,), (64,),
                          [("g_idata", f"random:{elements}"), ("g_odata", f"zeros:{elements // 64}"),
                           ("n", str(elements)), ("sdata", "local:64")])
    recorder = (KernelRecorder(instrument=False) if probes is None
                else KernelRecorder(instrument=True, **probes))
    if timed:
        simulate_with_records(workload, default_config(), trace_path, recorder, progress=False,
                              trace_level=trace_level, command="benchmarks/turnaround.py",
                              writer_process=False)
    else:
        record_only(workload, trace_path, recorder, command="benchmarks/turnaround.py")
    return time.perf_counter() - start


def table(source_text, mode, repeat, trace_level, tmp):
    """Print one table of cells; return the worst ratio to Klein's figures."""
    timed = mode == "timed"
    title = f"timed (timing model, trace level {trace_level!r})" if timed else "functional"
    print(f"\n{title}: reduction v1, work-group 64, median of {repeat};"
          " ms ours / ms Klein = ratio (goal <= 0.33)")
    print(f"{'elements':>9}  " + "  ".join(f"{name:>24}" for name, _ in COLUMNS))
    worst = 0.0
    for elements in SIZES:
        cells = []
        for col, (name, probes) in enumerate(COLUMNS):
            path = Path(tmp) / f"{mode}-{name}-{elements}.sqlite"
            times = [one_cell(source_text, elements, probes, path, trace_level, timed)
                     for _ in range(repeat)]
            ours = statistics.median(times) * 1000
            klein = KLEIN_MS[elements][col]
            ratio = ours / klein
            worst = max(worst, ratio)
            cells.append(f"{ours:7.0f} / {klein:5d} = {ratio:4.2f}{'' if ratio <= GOAL else '!'}")
        print(f"{elements:>9,}  " + "  ".join(f"{c:>24}" for c in cells))
    verdict = "meets" if worst <= GOAL else "misses"
    print(f"worst ratio {worst:.2f}: {verdict} the goal of {GOAL:.2f} ('!' marks cells above it)")
    return worst


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5,
                        help="runs per cell, the median is shown (default 5)")
    parser.add_argument("--mode", choices=("functional", "timed", "both"), default="both",
                        help="which pipeline to time (default both)")
    parser.add_argument("--trace-level", default="kernel",
                        help="timed mode's trace detail (default kernel: what the kernel views need; "
                             "'all' also records every wavefront, instruction and memory task)")
    args = parser.parse_args(argv)
    source_text = builtin_source("reduction_v1")
    modes = ("functional", "timed") if args.mode == "both" else (args.mode,)
    with tempfile.TemporaryDirectory() as tmp:
        for mode in modes:  # one warm-up run per mode: imports and first-call costs
            one_cell(source_text, 256, None, Path(tmp) / "warmup.sqlite", args.trace_level,
                     mode == "timed")
        for mode in modes:
            table(source_text, mode, args.repeat, args.trace_level, tmp)
    return 0


if __name__ == "__main__":
    sys.exit(main())
