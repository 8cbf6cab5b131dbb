"""Timing-model speed per kernel family, on the kernels in ``benchmarks/kernels``.

Issue #35 found the speed of the timing model to vary tenfold between families of
kernels (per wavefront instruction): transposes and sparse products, whose instructions
each send many memory requests, are the slow ones. This benchmark runs one launch of
each family at a moderate size and splits its wall time into:

* functional execution (SIMT on real data), done once, up front;
* the timing model, untraced;
* the timing model with the full trace into SQLite, through the writer process;
* the same full trace into a sink that drops the rows (the tracer without SQLite).

Each is the best of ``--repeat`` rounds. It prints wavefront instructions, memory
requests (64 B lines sent by the CUs) and the rates per wall second.

    python benchmarks/families.py [--families transpose spmv] [--repeat 3] [--scale 1]
"""
import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

from simulator.gpu import GPU, default_config, default_implementation
from simulator.gpu.run import simulate
from simulator.kernels.frontend import compile_source
from simulator.runs.kernel_cli import KernelFile
from simulator.stream import Unit
from simulator.tracing import tracer_class

KERNELS = Path(__file__).resolve().parent / "kernels"


def _spmv_inputs(rows, tmp, seed=0):
    """A CSR matrix of ``rows`` square rows with 1 to 32 random columns each, as .npy files."""
    rng = np.random.default_rng(seed)
    lengths = rng.integers(1, 33, size=rows)
    row_ptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
    col = rng.integers(0, rows, size=int(row_ptr[-1])).astype(np.int32)
    paths = {}
    for name, data in (("row_ptr", row_ptr), ("col", col)):
        paths[name] = str(Path(tmp) / f"spmv_{name}.npy")
        np.save(paths[name], data)
    return paths, int(row_ptr[-1])


def families(scale, tmp):
    """{family: (kernel file, global size, local size, [(arg, spec)])} at ``scale``."""
    side = 1024 * scale
    rows = 8192 * scale
    spmv, nnz = _spmv_inputs(rows, tmp)
    fft_n = (1 << 19) * scale
    image = 256 * scale
    relu_n = (1 << 20) * scale
    return {
        "transpose": ("transpose_naive.cl", (side, side), (16, 16),
                      [("in", f"random:{side * side}"), ("out", f"zeros:{side * side}"),
                       ("width", str(side)), ("height", str(side))]),
        "spmv": ("spmv_csr.cl", (rows,), (64,),
                 [("row_ptr", spmv["row_ptr"]), ("col", spmv["col"]), ("val", f"random:{nnz}"),
                  ("x", f"random:{rows}"), ("y", f"zeros:{rows}"), ("rows", str(rows))]),
        "convolution": ("convolution.cl", (image, image), (16, 16),
                        [("in", f"random:{image * image}"), ("mask", "random:25"),
                         ("out", f"zeros:{image * image}"), ("width", str(image)),
                         ("height", str(image)), ("mask_width", "5")]),
        "stencil": ("stencil5.cl", (2 * image, 2 * image), (16, 16),
                    [("u", f"random:{4 * image * image}"),
                     ("u_next", f"zeros:{4 * image * image}"),
                     ("width", str(2 * image)), ("height", str(2 * image))]),
        "fft": ("fft_stockham.cl", (fft_n // 2,), (64,),
                [("src", f"random:{fft_n}"), ("dst", f"zeros:{fft_n}"), ("n", str(fft_n)),
                 ("span", "64")]),
        "relu": ("relu.cl", (relu_n,), (256,),
                 [("in", f"random:{relu_n}"), ("out", f"zeros:{relu_n}"), ("n", str(relu_n))]),
    }


class Prepared:
    """One launch of a kernel file, executed functionally once (its time kept)."""

    def __init__(self, name, spec):
        file, global_size, local_size, args = spec
        path = KERNELS / file
        program = compile_source(str(path), path.read_text())
        started = time.perf_counter()
        workload = KernelFile(program, None, global_size, local_size, args)
        self.recorded = workload.made_launches()  # every work-group made now, kept in lists
        self.functional_seconds = time.perf_counter() - started
        self.name = name
        self.seed = 0
        insts = [w.insts for g in self.recorded[0].work_groups for w in g.wavefronts]
        units = np.concatenate([i["unit"] for i in insts])
        self.instructions = int((units != Unit.END).sum())
        self.lines = int(sum(int(i["addr_cnt"][i["unit"] == Unit.VMEM].sum()) for i in insts))

    def launches(self, recorder=None):
        return iter(self.recorded)


class DropRows:
    """A tracer sink that keeps nothing."""

    def write_batch(self, tasks, details, tags, locations, kinds, tag_names):
        pass


def _dropped(workload, implementation):
    tracer = tracer_class(implementation)(DropRows(), ps_per_tick=1000)
    start = time.perf_counter()
    gpu = GPU(default_config(), tracer, "all", implementation)
    gpu.start_simulation()
    for launch in workload.launches():
        gpu.run_kernel(launch)
    gpu.finish()
    tracer.close(gpu.now)
    return time.perf_counter() - start, gpu.now


def _measure(workload, label, out, implementation):
    """(wall seconds until every row is written, CPU seconds of this process, cycles,
    finalize seconds) of one run. Finalizing runs in the writer process, so the CPU
    seconds of a traced run are the simulation's and the cost of handing rows over."""
    cpu = time.process_time()
    if label == "dropped":
        seconds, cycles = _dropped(workload, implementation)
        return seconds, time.process_time() - cpu, cycles, 0.0
    r = simulate(workload, default_config(), out if label == "all" else None, trace_level=label,
                 progress=False, implementation=implementation)
    return r.wall_seconds, time.process_time() - cpu, r.cycles, r.finalize_seconds


LABELS = ("off", "all", "dropped")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--families", nargs="+")
    parser.add_argument("--scale", type=int, default=1, help="problem size multiplier")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--implementation", choices=("cython", "python"),
                        default=default_implementation())
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        specs = families(args.scale, tmp)
        print("seconds: best wall (best CPU of the simulating process); 'all' is the full trace"
              " until its last row is in the file, finalize apart; 'dropped' the full trace"
              " into a sink that keeps nothing")
        print(f"{'family':12s} {'k inst':>7s} {'k lines':>8s} {'func':>6s} "
              + " ".join(f"{label:>13s}" for label in LABELS)
              + f" {'finalize':>8s} {'kinst/s off':>11s} {'all':>5s} {'cycles':>9s}")
        out = Path(tmp) / "trace.sqlite"
        for name in args.families or specs:
            workload = Prepared(name, specs[name])
            wall, cpu, finalize = {}, {}, []
            for _ in range(args.repeat):  # rounds: a noisy stretch falls on every label alike
                for label in LABELS:
                    seconds, used, cycles, fin = _measure(workload, label, out, args.implementation)
                    out.unlink(missing_ok=True)
                    wall[label] = min(wall.get(label, seconds), seconds)
                    cpu[label] = min(cpu.get(label, used), used)
                    if label == "all":
                        finalize.append(fin)
            k = workload.instructions / 1e3
            print(f"{name:12s} {k:7.0f} {workload.lines / 1e3:8.0f} "
                  f"{workload.functional_seconds:6.2f} "
                  + " ".join(f"{wall[label]:6.2f} ({cpu[label]:4.2f})" for label in LABELS)
                  + f" {min(finalize):8.2f} {k / wall['off']:11.0f} {k / wall['all']:5.0f}"
                  f" {cycles:9,}", flush=True)


if __name__ == "__main__":
    main()
