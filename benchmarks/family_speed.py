"""Timing-model speed per kernel family: untraced, fully traced, and traced into nothing.

Issue #35 found the timing model's speed to vary tenfold between kernel families, per
wavefront instruction: transposes and sparse products, whose instructions each send many
memory requests, were the slow ones. This benchmark runs one launch of each family in
``benchmarks/kernels`` (``families.launch_spec``) at a moderate size on the default GPU,
its streams made once, up front (the functional execution is timed apart), then:

* ``off``: the timing model, untraced;
* ``all``: the full trace into SQLite through the writer process, until its last row is
  in the file (finalize, the indexes and the rest of the pyramid, printed apart);
* ``dropped``: the full trace into a sink that keeps nothing (the tracer without SQLite),
  the baseline of the last column: what writing the rows costs on top of making them.

Each is the best of ``--repeat`` rounds, in wall seconds and in CPU seconds of the
simulating process; the writer's own CPU seconds (its load and finalize) are printed
apart: on a busy machine the wall clock mostly measures the wait for a free core, so the
two processes' CPU time is what a fully traced run costs. It prints wavefront
instructions, memory requests (64 B lines the CUs send) and thousands of instructions
per wall second.

    python benchmarks/family_speed.py [--families transpose spmv] [--repeat 3] [--scale 1]
"""
import argparse
import resource
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.kernels.families import FAMILIES, launch_spec  # noqa: E402

# The trace writer's process is spawned, and so runs this file's top level again (as
# multiprocessing does for a script, not for ``python -m simulator``): the modules only
# the simulating process uses are not imported there, or every writer would wait for
# them (the kernel compiler and the timing model: 0.4 s) before its first row.
if __name__ == "__main__":
    from benchmarks.simulate import traced_to_nowhere
    from simulator.gpu import default_config, default_implementation
    from simulator.gpu.run import simulate
    from simulator.kernels.frontend import compile_source
    from simulator.runs.kernel_cli import KernelFile
    from simulator.stream import Unit

# Wavefronts of each family's launch at scale 1: a few seconds each, untraced, before #35.
WAVEFRONTS = {"transpose": 16384, "spmv": 128, "convolution": 1024, "stencil": 4096,
              "fft": 4096, "relu": 16384}
LABELS = ("off", "all", "dropped")


class Prepared:
    """One launch of a family, executed functionally once (its time kept)."""

    def __init__(self, family, wavefronts, tmp):
        spec = launch_spec(family, wavefronts, tmp)
        path = Path(spec["file"])
        program = compile_source(str(path), path.read_text())
        started = time.perf_counter()
        workload = KernelFile(program, None, tuple(spec["global"]), tuple(spec["local"]),
                              [tuple(arg) for arg in spec["args"]])
        self.recorded = workload.made_launches()  # every work-group made now, in lists
        self.functional_seconds = time.perf_counter() - started
        self.name = family
        self.seed = 0
        insts = [w.insts for g in self.recorded[0].work_groups for w in g.wavefronts]
        units = np.concatenate([i["unit"] for i in insts])
        self.instructions = int((units != Unit.END).sum())
        self.lines = int(sum(int(i["addr_cnt"][i["unit"] == Unit.VMEM].sum()) for i in insts))

    def launches(self, recorder=None):
        return iter(self.recorded)


def _children_cpu():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _measure(workload, label, out, implementation):
    """(wall seconds until every row is written, CPU seconds of this process, cycles,
    finalize seconds, CPU seconds of the writer process) of one run."""
    cpu = time.process_time()
    if label == "dropped":
        seconds, _, _, cycles = traced_to_nowhere(workload, implementation)
        return seconds, time.process_time() - cpu, cycles, 0.0, 0.0
    writer_cpu = _children_cpu()  # the writer is joined before ``simulate`` returns
    r = simulate(workload, default_config(), out if label == "all" else None, trace_level=label,
                 progress=False, implementation=implementation)
    return (r.wall_seconds, time.process_time() - cpu, r.cycles, r.finalize_seconds,
            _children_cpu() - writer_cpu)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--families", nargs="+", choices=FAMILIES, default=list(FAMILIES))
    parser.add_argument("--scale", type=int, default=1, help="wavefronts multiplier")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--implementation", choices=("cython", "python"),
                        default=default_implementation())
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        print(f"best of {args.repeat}: wall seconds (CPU seconds of the simulating process)")
        print(f"{'family':12s} {'k inst':>7s} {'k lines':>8s} {'func':>6s} "
              + " ".join(f"{label:>13s}" for label in LABELS)
              + f" {'finalize':>8s} {'writer':>6s} {'kinst/s off':>11s} {'all':>5s} {'cycles':>9s}"
              f" {'all/dropped':>11s}")
        out = Path(tmp) / "trace.sqlite"
        for name in args.families:
            workload = Prepared(name, WAVEFRONTS[name] * args.scale, tmp)
            wall, cpu, finalize, writer = {}, {}, [], []
            for _ in range(args.repeat):  # rounds: a noisy stretch falls on every label alike
                for label in LABELS:
                    seconds, used, cycles, fin, written = _measure(workload, label, out,
                                                                   args.implementation)
                    out.unlink(missing_ok=True)
                    wall[label] = min(wall.get(label, seconds), seconds)
                    cpu[label] = min(cpu.get(label, used), used)
                    if label == "all":
                        finalize.append(fin)
                        writer.append(written)
            k = workload.instructions / 1e3
            print(f"{name:12s} {k:7.0f} {workload.lines / 1e3:8.0f} "
                  f"{workload.functional_seconds:6.2f} "
                  + " ".join(f"{wall[label]:6.2f} ({cpu[label]:4.2f})" for label in LABELS)
                  + f" {min(finalize):8.2f} {min(writer):6.2f} {k / wall['off']:11.0f}"
                  f" {k / wall['all']:5.0f}"
                  f" {cycles:9,} {wall['all'] / wall['dropped']:10.2f}x", flush=True)


if __name__ == "__main__":
    main()
