"""The ``run-kernel`` command: run a user's OpenCL C kernel file on generated data.

    python -m simulator run-kernel FILE.cl --global 1024 --local 64 \\
        --arg in=random:1024 --arg out=zeros:16 --arg n=1024 --arg sdata=local:64 -o k.sqlite

Arguments are given by kernel parameter name. Pointer arguments take ``random:N``,
``zeros:N``, ``range:N`` (N elements of the pointer's type) or a ``.npy`` file;
``local`` pointers take ``local:N``; scalars take a number. The kernel runs on the
timing model, with Klein's kernel tables in the trace.
"""
import argparse
import sys
from pathlib import Path

import numpy as np

from ..gpu.config import ConfigError
from ..gpu.trace_vocabulary import TraceLevelError, parse_trace_level
from ..kernels.diagnostics import KernelError
from ..kernels.frontend import compile_source
from ..kernels.lanes import Geometry
from ..kernels.memory import LocalMem, Memory
from ..kernels.records import KernelRecorder
from ..kernels.simt import launch
from ..kernels.types import Pointer
from ..stream import Unit
from ..tracing.cli import command_line
from .records import simulate_with_records
from .workload_cli import add_common_arguments, build_config


def parse_size(text):
    """``1024`` or ``1024x768`` (up to three dimensions)."""
    try:
        dims = tuple(int(part) for part in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected sizes like 1024 or 64x64, got {text!r}") from None
    if not 1 <= len(dims) <= 3 or min(dims) <= 0:
        raise argparse.ArgumentTypeError(f"expected 1 to 3 positive sizes, got {text!r}")
    return dims


def parse_arg(text):
    name, sep, value = text.partition("=")
    if not sep or not name.isidentifier() or not value:
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE, got {text!r}")
    return name, value


class KernelFile:
    """A one-launch workload made from a kernel file and command-line arguments."""

    def __init__(self, program, kernel, global_size, local_size, arg_specs, seed=0):
        self.program = program
        self.kernel = program.kernel(kernel)
        self.name = Path(program.path).name
        self.seed = seed
        self.global_size, self.local_size = global_size, local_size
        Geometry(global_size, local_size)  # a bad NDRange fails here, before any run starts
        self.args = self._build_args(dict(arg_specs))
        self.launch = None

    def _build_args(self, specs):
        rng = np.random.default_rng(self.seed)
        memory = Memory()
        params = [(name.split("#")[0], ty) for name, ty in self.kernel.params]
        names = {name for name, _ in params}
        unknown = sorted(set(specs) - names)
        missing = [name for name, _ in params if name not in specs]
        if unknown or missing:
            raise ValueError(f"kernel '{self.kernel.name}' takes "
                             f"{', '.join(n for n, _ in params) or 'no arguments'}"
                             + (f"; missing --arg for {', '.join(missing)}" if missing else "")
                             + (f"; no parameter named {', '.join(unknown)}" if unknown else ""))
        args = {}
        for name, ty in params:
            spec = specs[name]
            if isinstance(ty, Pointer) and ty.space == "local":
                kind, _, count = spec.partition(":")
                if kind != "local" or not count.isdigit() or int(count) <= 0:
                    raise ValueError(f"--arg {name}: a local pointer takes local:N (elements)")
                args[name] = LocalMem(int(count))
            elif isinstance(ty, Pointer):
                args[name] = memory.buffer(name, _buffer_data(name, spec, ty.elem, rng))
            else:
                try:
                    args[name] = float(spec) if ty.is_float else int(spec, 0)
                except ValueError:
                    raise ValueError(f"--arg {name}: expected a {ty} number, got {spec!r}") from None
        return args

    def launches(self, recorder=None):
        if recorder is None:
            self.launch = launch(self.program, self.kernel.name, self.global_size, self.local_size,
                                 self.args)
        else:
            self.launch = recorder.launch(self.program, self.kernel.name, self.global_size,
                                          self.local_size, self.args, launch_id=0)
        yield self.launch

    def check(self):
        """A user kernel has no reference result to compare with."""


def _buffer_data(name, spec, elem, rng):
    dtype = elem.dtype
    if spec.endswith(".npy"):
        try:
            data = np.load(spec, allow_pickle=False)
        except (OSError, ValueError) as exc:
            raise ValueError(f"--arg {name}: cannot read {spec}: {exc}") from None
        if data.dtype != dtype:
            raise ValueError(f"--arg {name}: {spec} holds {data.dtype}, the kernel expects {dtype}")
        return data.reshape(-1)
    kind, _, count = spec.partition(":")
    if kind not in ("random", "zeros", "range") or not count.isdigit() or int(count) <= 0:
        raise ValueError(f"--arg {name}: expected random:N, zeros:N, range:N or FILE.npy, got {spec!r}")
    n = int(count) * elem.width
    if kind == "zeros":
        return np.zeros(n, dtype=dtype)
    if kind == "range":
        return np.arange(n).astype(dtype)
    if dtype.kind == "f":
        return rng.random(n, dtype=np.float32).astype(dtype)
    return rng.integers(0, 100, size=n).astype(dtype)


def register(subparsers):
    p = subparsers.add_parser(
        "run-kernel", help="run an OpenCL C kernel file on generated data into a trace",
        description="Run an OpenCL C kernel (with Klein's @watch/@emit/@bind annotations) on\n"
                    "generated data, on the GPU timing model, into a trace with the kernel\n"
                    "records of the memory, branching and debug views.",
        epilog="example:\n" + __doc__.split("\n\n")[1] + "\n\nKernel errors are reported as"
               " FILE:LINE:COL: reason.",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("file", help="kernel source (.cl), OpenCL C with @watch/@emit/@bind annotations")
    p.add_argument("--kernel", help="kernel function to run (default: the first in the file)")
    p.add_argument("--global", dest="global_size", type=parse_size, required=True, metavar="N[xN[xN]]",
                   help="global work size")
    p.add_argument("--local", dest="local_size", type=parse_size, required=True, metavar="N[xN[xN]]",
                   help="work-group size")
    p.add_argument("--arg", dest="args", type=parse_arg, action="append", default=[],
                   metavar="NAME=VALUE",
                   help="kernel argument: random:N, zeros:N, range:N, FILE.npy, local:N or a number")
    p.add_argument("--no-instrument", action="store_true",
                   help="record no watched accesses, branch streams or emitted values")
    p.add_argument("--save", action="append", default=[], type=parse_arg, metavar="NAME=FILE.npy",
                   help="save a buffer argument after the run (repeatable)")
    add_common_arguments(p)
    p.set_defaults(func=_run)


def _run(args):
    try:
        source = Path(args.file).read_text()
    except OSError as exc:
        print(f"error: cannot read {args.file}: {exc.strerror}", file=sys.stderr)
        return 2
    try:
        program = compile_source(args.file, source)
        workload = KernelFile(program, args.kernel, args.global_size, args.local_size, args.args,
                              seed=args.seed)
    except KernelError as exc:
        print(exc, file=sys.stderr)
        return 1
    except (KeyError, ValueError) as exc:
        print(f"error: {exc.args[0] if exc.args else exc}", file=sys.stderr)
        return 2
    recorder = KernelRecorder(instrument=not args.no_instrument)
    command = command_line()
    try:
        if _simulate(args, workload, recorder, command) is None:
            return 2
    except KernelError as exc:
        print(exc, file=sys.stderr)
        return 1
    _summary(workload)
    for name, path in args.save:
        buffer = workload.args.get(name)
        if not hasattr(buffer, "array"):
            print(f"error: --save {name}: not a buffer argument", file=sys.stderr)
            return 2
        np.save(path, buffer.array)
        print(f"saved {name} to {path}")
    if args.output:
        print(f"trace           {args.output}")
    return 0


def _simulate(args, workload, recorder, command):
    try:
        config = build_config(args)
        parse_trace_level(args.trace_level)
    except (ConfigError, TraceLevelError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return None
    result = simulate_with_records(workload, config, args.output, recorder,
                                   trace_level=args.trace_level, window=args.window,
                                   progress=not args.no_progress, command=command, seed=args.seed,
                                   writer_process=False)  # user kernels are small: write inline
    print(f"simulated time  {result.simulated_ps / 1e6:,.3f} us ({result.cycles:,} cycles)")
    return result


def _summary(workload):
    launch = workload.launch
    insts = np.concatenate([w.insts for g in launch.work_groups for w in g.wavefronts])
    body = insts[insts["unit"] != Unit.END]
    vector = body[np.isin(body["unit"], (Unit.VALU, Unit.LDS, Unit.VMEM))]
    lds = body[body["unit"] == Unit.LDS]
    waves = sum(len(g.wavefronts) for g in launch.work_groups)
    efficiency = vector["active"].mean() / 64 if len(vector) else 0.0
    print(f"kernel {launch.name}: {len(launch.work_groups):,} work-groups, {waves:,} wavefronts, "
          f"{len(body):,} wavefront-instructions")
    print(f"  SIMD efficiency {efficiency:.1%}, {int((vector['active'] < 64).sum()):,} partial-mask"
          f" vector instructions, LDS conflict degree max {int(lds['passes'].max(initial=0))}"
          f" ({int((lds['passes'] > 1).sum()):,} of {len(lds):,} LDS instructions conflicted)")
