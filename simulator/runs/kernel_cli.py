"""The ``run-kernel`` command: run a user's OpenCL C kernel file on generated data.

    python -m simulator run-kernel FILE.cl --global 1024 --local 64 \\
        --arg in=random:1024 --arg out=zeros:16 --arg n=1024 --arg sdata=local:64 -o k.sqlite

Arguments are given by kernel parameter name. Pointer arguments take ``random:N``,
``zeros:N``, ``range:N`` (N elements of the pointer's type, structs included) or a
``.npy`` file (a structured array for a pointer to structs); ``local`` pointers take
``local:N`` (N elements of the pointee type) or ``local:16KiB`` (bytes, as OpenCL's
``clSetKernelArg`` takes a local size); scalars take a number; vectors and structs take their components, as
``(uint2)(32,16)``, ``(32,16)`` or ``{1, 2.5}`` (struct fields in order); an
``image2d_t`` takes a ``.npy`` image ((height, width) or (height, width, channels)) or
``zeros:WxH[xC]``/``random:WxH[xC]`` (float), an ``image3d_t`` a ``.npy`` volume ((depth,
height, width) or (depth, height, width, channels)) or ``zeros:WxHxD[xC]``/``random:WxHxD[xC]``;
a ``sampler_t`` takes ``CLK_*`` flags joined by ``|``. ``-D``/``-U``/``-I`` and
``--build-options`` are clBuildProgram's build options; ``--kernel`` picks the kernel and
compiles only it. The kernel runs on the timing model, with Klein's kernel tables in the trace.
"""
import argparse
import re
import sys
from pathlib import Path

import numpy as np

from ..gpu.config import ConfigError
from ..gpu.trace_vocabulary import TraceLevelError, parse_trace_level
from ..kernels import types as T
from ..kernels.diagnostics import KernelError
from ..kernels.encoding import text_of
from ..kernels.frontend import compile_source
from ..kernels.images import SAMPLER_FLAGS, shape_error
from ..kernels.includes import confinement_for
from ..kernels.lanes import Geometry
from ..kernels.memory import LocalMem
from ..kernels.preprocess import BuildOptions, parse_build_options
from ..kernels.records import KernelRecorder
from ..kernels.types import Pointer
from ..tracing.cli import command_line
from ..tracing.outputs import prepare_output
from ..tracing.writer import atomic_output
from ..user_input import InputError, integer, read_bytes, real
from ..workloads.base import Workload
from .records import simulate_with_records
from .workload_cli import add_common_arguments, build_config, prepare_trace_output


def parse_size(text):
    """``1024`` or ``1024x768`` (up to three dimensions)."""
    try:
        dims = tuple(integer(part) for part in text.lower().split("x"))
    except InputError:
        raise argparse.ArgumentTypeError(f"expected sizes like 1024 or 64x64, got {text!r}") from None
    if not 1 <= len(dims) <= 3 or min(dims) <= 0:
        raise argparse.ArgumentTypeError(f"expected 1 to 3 positive sizes, got {text!r}")
    return dims


def parse_arg(text):
    name, sep, value = text.partition("=")
    if not sep or not name.isidentifier() or not value:
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE, got {text!r}")
    return name, value


class KernelFile(Workload):
    """A one-launch workload made from a kernel file and command-line arguments."""

    def __init__(self, program, kernel, global_size, local_size, arg_specs, seed=0):
        super().__init__(seed)
        self.program = program
        self.kernel = program.kernel(kernel)
        self.name = Path(program.path).name
        self.global_size, self.local_size = global_size, local_size
        Geometry(global_size, local_size)  # a bad NDRange fails here, before any run starts
        self.args = self._build_args(dict(arg_specs))
        self.launch = None

    def _build_args(self, specs):
        rng = np.random.default_rng(self.seed)
        memory = self.memory
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
                args[name] = LocalMem(_local_elements(name, spec, ty.elem))
            elif isinstance(ty, Pointer):
                args[name] = memory.buffer(name, _buffer_data(name, spec, ty.elem, rng))
            elif T.is_image(ty):
                args[name] = memory.buffer(name, _image_data(name, spec, ty, rng))
            else:
                args[name] = parse_value(name, spec, ty)
        return args

    def host(self, recorder):
        self.launch = self.run(recorder, self.program, self.kernel.name, self.global_size,
                               self.local_size, self.args)
        yield self.launch

    def check(self):
        """A user kernel has no reference result to compare with."""


_CAST = re.compile(r"^\(\s*([A-Za-z_]\w*(?:\s+[A-Za-z_]\w*)*)\s*\)\s*(?=[({])")


def parse_value(name, spec, ty):
    """A by-value argument: a number, ``(uint2)(32,16)``/``(32,16)``, a struct's ``{...}``,
    or a sampler's ``CLK_*|CLK_*`` flags."""
    text = spec.strip()
    if ty is T.SAMPLER:
        try:
            return np.uint32(sum(SAMPLER_FLAGS[f.strip()] if f.strip() in SAMPLER_FLAGS else int(f, 0)
                                 for f in text.split("|")))
        except ValueError:
            raise ValueError(f"--arg {name}: a sampler takes CLK_* flags joined by |"
                             f" ({', '.join(SAMPLER_FLAGS)}), got {spec!r}") from None
    cast = _CAST.match(text)
    if cast:
        text = text[cast.end():]
    numbers = [part for part in re.split(r"[\s,(){}\[\]]+", text) if part]
    want = _components(ty)
    if ty.width == 1 and not isinstance(ty, T.Struct) and len(numbers) == 1 and not cast:
        want = 1
    if len(numbers) != want:
        raise ValueError(f"--arg {name}: a {ty} takes {want} number{'s' if want > 1 else ''}"
                         f" like {_example(ty)}, got {spec!r}")
    try:
        values = [_number(part, ty) for part in numbers]
    except ValueError:
        raise ValueError(f"--arg {name}: expected a {ty} number like {_example(ty)}, got {spec!r}") from None
    if isinstance(ty, T.Struct):
        return np.array(_struct_tuple(ty, iter(values)), dtype=ty.dtype)
    if ty.width == 1:
        return float(values[0]) if ty.is_float else int(values[0])
    return np.array(values, dtype=ty.dtype)


def _number(text, ty):
    """A number in ASCII as C writes it (``1.5f``, ``0x1F``, ``7u``); ValueError if not."""
    try:
        if _any_float(ty) and ("." in text or "e" in text.lower() or not text.lstrip("-").isdigit()):
            return real(text.rstrip("fF"))
        return integer(text.rstrip("uUlL"), allow_hex=True)
    except InputError:
        raise ValueError(text) from None


def _any_float(ty):
    if isinstance(ty, T.Struct):
        return any(_any_float(f[1]) for f in ty.fields)
    return ty.is_float


def _components(ty):
    if isinstance(ty, T.Struct):
        return sum(_components(f[1]) for f in ty.fields)
    if isinstance(ty, T.ArrayType):
        return _components(ty.elem) * ty.length
    return ty.width


def _struct_tuple(ty, values):
    out = []
    for _, field, _ in ty.fields:
        if isinstance(field, T.Struct):
            out.append(_struct_tuple(field, values))
        elif isinstance(field, T.ArrayType) or field.width > 1:
            out.append([next(values) for _ in range(_components(field))])
        else:
            out.append(next(values))
    return tuple(out)


def _example(ty):
    if isinstance(ty, T.Struct):
        return "{" + ", ".join(["1"] * _components(ty)) + "}"
    if ty.width > 1:
        return f"({ty})({', '.join(['1'] * ty.width)})"
    return "1.5" if ty.is_float else "3"


def _load_npy(name, spec):
    try:
        return np.load(spec, allow_pickle=False)
    except (OSError, ValueError) as exc:
        raise ValueError(f"--arg {name}: cannot read {spec}: {exc}") from None


def _buffer_data(name, spec, elem, rng):
    if elem is T.VOID or isinstance(elem, (T.Pointer, T.Opaque)):
        raise ValueError(f"--arg {name}: cannot make data for a buffer of {elem}")
    dtype = elem.dtype
    if spec.endswith(".npy"):
        data = _load_npy(name, spec)
        if isinstance(elem, T.Struct):
            if data.dtype.names is None or data.dtype.itemsize != elem.size:
                raise ValueError(f"--arg {name}: {spec} holds {data.dtype}, the kernel expects"
                                 f" structs of {elem.size} bytes ({dtype.descr})")
            return data.reshape(-1)
        if data.dtype != dtype:
            raise ValueError(f"--arg {name}: {spec} holds {data.dtype}, the kernel expects {dtype}")
        return data.reshape(-1)
    kind, _, count = spec.partition(":")
    if kind not in ("random", "zeros", "range") or _count(count) <= 0:
        raise ValueError(f"--arg {name}: expected random:N, zeros:N, range:N or FILE.npy, got {spec!r}")
    if isinstance(elem, T.Struct):
        data = np.zeros(int(count), dtype=dtype)
        for field in dtype.names:
            column = data[field]
            column[...] = _fill(kind, column.shape, column.dtype, rng)
        return data
    return _fill(kind, (int(count) * elem.width,), dtype, rng)


def _fill(kind, shape, dtype, rng):
    n = int(np.prod(shape))
    if kind == "zeros":
        return np.zeros(shape, dtype=dtype)
    if kind == "range":
        return np.arange(n).astype(dtype).reshape(shape)
    if dtype.kind == "f":
        # copy=False: a float buffer's values are made once, not held twice while copied
        return rng.random(n, dtype=np.float32).astype(dtype, copy=False).reshape(shape)
    return rng.integers(0, 100, size=n).astype(dtype).reshape(shape)


def _image_data(name, spec, ty, rng):
    """An image argument: a .npy image, or zeros:/random: floats of the given extent
    (WxH[xC] for a 2-D image, WxHxD[xC] for a 3-D one)."""
    if spec.endswith(".npy"):
        data = _load_npy(name, spec)
        problem = shape_error(data.shape, ty.dims)
        if problem:
            raise ValueError(f"--arg {name}: {problem} ({spec})")
        return data
    extent = "WxH" if ty.dims == 2 else "WxHxD"
    kind, _, size = spec.partition(":")
    dims = size.lower().split("x")
    sizes_ok = len(dims) in (ty.dims, ty.dims + 1) and all(d.isdigit() and int(d) > 0 for d in dims)
    if kind not in ("zeros", "random") or not sizes_ok:
        raise ValueError(f"--arg {name}: an image takes FILE.npy, zeros:{extent}[xC] or"
                         f" random:{extent}[xC], got {spec!r}")
    # The host array is indexed as C would: the last spatial axis is x (width).
    shape = tuple(int(d) for d in dims[:ty.dims][::-1]) + tuple(int(d) for d in dims[ty.dims:])
    problem = shape_error(shape, ty.dims)
    if problem:
        raise ValueError(f"--arg {name}: {problem}")
    return _fill(kind, shape, np.dtype(np.float32), rng)


_BYTES = re.compile(r"^(\d+)\s*(B|KiB|MiB)$")
_UNIT = {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20}


def _local_elements(name, spec, elem):
    """Elements of a ``local`` pointer argument: ``local:N`` counts elements of its
    pointee type; ``local:16KiB`` (or ``B``, ``MiB``) gives bytes, as clSetKernelArg
    does, which must be a whole number of elements."""
    kind, _, count = spec.partition(":")
    size = T.storage_size(elem)
    if kind == "local" and _count(count) > 0:
        return int(count)
    found = _BYTES.match(count) if kind == "local" else None
    if found and int(found[1]) > 0:
        nbytes = int(found[1]) * _UNIT[found[2]]
        if nbytes % size:
            raise ValueError(f"--arg {name}: {count} is not a whole number of {elem}"
                             f" elements ({size} bytes each)")
        return nbytes // size
    raise ValueError(f"--arg {name}: a local pointer takes local:N, N elements of its"
                     f" {elem} ({size} bytes each), or local:BYTES such as local:16KiB")


def _count(text):
    """An element count in ASCII digits, or -1 if ``text`` is none."""
    return int(text) if text.isascii() and text.isdigit() else -1


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
    p.add_argument("--kernel", help="kernel function to run and the only one compiled"
                   " (default: the first in the file; all are compiled)")
    p.add_argument("-D", dest="defines", action="append", default=[], metavar="NAME[=VALUE]",
                   help="define a macro, as the build option -D (repeatable)")
    p.add_argument("-U", dest="undefines", action="append", default=[], metavar="NAME",
                   help="undefine a macro, as the build option -U (repeatable)")
    p.add_argument("-I", dest="include_dirs", action="append", default=[], metavar="DIR",
                   help="search DIR for #include \"...\" files (repeatable)")
    p.add_argument("--confine-includes", action="store_true",
                   help="let #include and -I reach only the kernel's own folder and the"
                   " --allow-include folders, and quote no text of an included file in"
                   " errors (what a server compiling visitors' kernels needs; from the"
                   " command line a kernel includes whatever you can read)")
    p.add_argument("--allow-include", action="append", default=[], metavar="DIR",
                   help="a folder a confined kernel may include from, searched after -I"
                   " (repeatable; implies --confine-includes)")
    p.add_argument("--build-options", default="", metavar="OPTIONS",
                   help="clBuildProgram's options string, written with '=' as in"
                   " --build-options=\"-D N=64 -cl-mad-enable\"")
    p.add_argument("--global", dest="global_size", type=parse_size, required=True, metavar="N[xN[xN]]",
                   help="global work size")
    p.add_argument("--local", dest="local_size", type=parse_size, required=True, metavar="N[xN[xN]]",
                   help="work-group size")
    p.add_argument("--arg", dest="args", type=parse_arg, action="append", default=[],
                   metavar="NAME=VALUE",
                   help="kernel argument: random:N, zeros:N, range:N, FILE.npy (N elements of"
                   " the pointee type), local:N (elements of the pointee type: local:1024 of a"
                   " __local float4 * is 16 KiB) or local:16KiB (bytes, as clSetKernelArg takes), a number,"
                   " a vector or struct like (uint2)(32,16), sampler flags, or an image:"
                   " FILE.npy or zeros:/random: WxH (2-D) or WxHxD (3-D), then xC for channels")
    p.add_argument("--no-instrument", action="store_true",
                   help="record no watched accesses, branch streams or emitted values")
    p.add_argument("--save", action="append", default=[], type=parse_arg, metavar="NAME=FILE.npy",
                   help="save a buffer argument after the run (repeatable)")
    add_common_arguments(p)
    p.set_defaults(func=_run)


def _run(args):
    source = text_of(read_bytes(args.file, "kernel source (.cl)"))   # as clang reads it
    inputs = [args.file] + [spec for _, spec in args.args if spec.endswith(".npy")]
    prepare_trace_output(args, inputs)
    for _, path in args.save:
        prepare_output(path, [*inputs, args.config, args.output], force=args.force)
    try:
        options = build_options(args)
        confinement = confinement_for(args.file, args.allow_include) \
            if args.confine_includes or args.allow_include else None
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    report = confinement.redact if confinement is not None else (lambda err: err)
    try:
        program = compile_source(args.file, source, options, kernel=args.kernel,
                                 confinement=confinement)
        workload = KernelFile(program, args.kernel, args.global_size, args.local_size, args.args,
                              seed=args.seed)
    except KernelError as exc:
        print(report(exc), file=sys.stderr)
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
        print(report(exc), file=sys.stderr)
        return 1
    _summary(workload)
    for name, path in args.save:
        buffer = workload.args.get(name)
        if not hasattr(buffer, "array"):
            print(f"error: --save {name}: not a buffer argument", file=sys.stderr)
            return 2
        with atomic_output(path) as tmp, open(tmp, "wb") as handle:
            np.save(handle, buffer.array)  # to a handle: np.save would add .npy to a name
        print(f"saved {name} to {path}")
    if args.output:
        print(f"trace           {args.output}")
    return 0


def build_options(args):
    """The build options from ``--build-options`` followed by ``-D``/``-U``/``-I``."""
    options = parse_build_options(args.build_options) if args.build_options else BuildOptions()
    for text in args.defines:
        options.define(text)
    for text in args.undefines:
        options.undefine(text)
    options.include_dirs.extend(args.include_dirs)
    for kind, name, _ in options.macros:
        if not name.split("(")[0].isidentifier():
            raise ValueError(f"-{kind} needs a macro name, got {name!r}")
    return options


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
                                   note=args.note,
                                   writer_process=_writer_process(workload))
    print(f"simulated time  {result.simulated_ps / 1e6:,.3f} us ({result.cycles:,} cycles)")
    return result


WRITER_PROCESS_WAVEFRONTS = 4096
"""Launches of at least this many wavefronts write their trace from a second process, beside
the simulation; a smaller one writes inline, which costs less than starting the process."""


def _writer_process(workload):
    geometry = Geometry(workload.global_size, workload.local_size)
    return geometry.wavefronts >= WRITER_PROCESS_WAVEFRONTS


def _summary(workload):
    launch = workload.launch
    counts = launch.work_groups.counts
    efficiency = counts.vector_active_lanes / counts.vector / 64 if counts.vector else 0.0
    print(f"kernel {launch.name}: {len(launch.work_groups):,} work-groups, "
          f"{counts.wavefronts:,} wavefronts, {counts.instructions:,} wavefront-instructions")
    print(f"  SIMD efficiency {efficiency:.1%}, {counts.partial:,} partial-mask vector"
          f" instructions, LDS conflict degree max {counts.lds_max_degree}"
          f" ({counts.lds_conflicted:,} of {counts.lds:,} LDS instructions conflicted)")
