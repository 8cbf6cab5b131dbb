"""One row of a validation file, simulated wherever a worker is (as a sweep's point).

``LaunchTask`` is plain data pickled to the worker: the kernel's source text (so a
worker that shares no file system with the client still has it; ``#include`` files
and ``.npy`` arguments must be readable at the same paths there), the launch as
``run-kernel`` takes it, the configuration and where the trace goes. Its ``run``
returns the row's result as a sweep point's is returned (``sweep_point.run_point``
runs it, turning a failure into the row's error).
"""
import shlex
from dataclasses import dataclass

from .. import __version__
from ..kernels.diagnostics import KernelError
from ..kernels.encoding import text_of
from ..kernels.frontend import compile_source
from ..kernels.records import KernelRecorder
from ..user_input import InputError, read_bytes
from .kernel_cli import KernelFile
from .records import simulate_with_records
from .sweep_point import TracePlace, check_version, config_arguments, run_traced
from .validate_rows import MeasuredLaunch


@dataclass(frozen=True)
class LaunchTask:
    path: str              # the kernel file (messages, #include, the recorded command)
    source: str            # its text, as clang reads it
    kernel: str            # None: the first kernel of the file
    global_size: tuple
    local_size: tuple
    args: tuple            # ((name, value text), ...)
    build_options: str
    config: dict
    seed: int
    trace_level: str
    window: tuple          # (start, end) cycles recorded, either None; None: all
    instrument: bool
    place: TracePlace      # where its trace goes
    note: str = None
    version: str = __version__

    def run(self):
        """The row: ``simulated_time_ps`` and the headline metrics of its trace."""
        check_version(self)
        program = compile_source(self.path, self.source, self.build_options,
                                 kernel=self.kernel)
        workload = KernelFile(program, self.kernel, self.global_size, self.local_size,
                              self.args, seed=self.seed)
        return run_traced(self, lambda path: simulate_with_records(
            workload, self.config, path, KernelRecorder(instrument=self.instrument),
            trace_level=self.trace_level, window=self.window, progress=False,
            command=self.command(),
            seed=self.seed, writer_process=False, watchable=False, note=self.note),
            workload.check)

    def command(self):
        """The ``run-kernel`` command line that reproduces this row, kept in its trace."""
        argv = ["python", "-m", "simulator", "run-kernel", self.path]
        if self.kernel:
            argv += ["--kernel", self.kernel]
        if self.build_options:
            argv.append(f"--build-options={self.build_options}")
        argv += ["--global", "x".join(map(str, self.global_size)),
                 "--local", "x".join(map(str, self.local_size))]
        argv += [f"--arg={name}={value}" for name, value in self.args]
        argv += config_arguments(self.config)
        argv += ["--seed", str(self.seed), "--trace-level", self.trace_level]
        if self.window:
            argv += ["--window", ":".join("" if v is None else str(v) for v in self.window)]
        if not self.instrument:
            argv.append("--no-instrument")
        return " ".join(shlex.quote(a) for a in argv)


def read_sources(measurements, launches: list[MeasuredLaunch]) -> dict:
    """{kernel file: its text} of the rows of the validation file ``measurements``.

    Each file is compiled here once per build options and kernel, and each row's
    ``args`` are checked against the parameters of its kernel, so that a row that
    cannot run is refused, naming its line, before any row runs."""
    sources, kernels = {}, {}
    for launch in launches:
        if launch.kernel_file not in sources:
            sources[launch.kernel_file] = text_of(read_bytes(launch.kernel_file,
                                                             "kernel source (.cl)"))
        key = (launch.kernel_file, launch.build_options, launch.kernel)
        if key not in kernels:
            kernels[key] = _compiled(measurements, launch, sources[launch.kernel_file])
        _check_args(measurements, launch, kernels[key])
    return sources


def _compiled(measurements, launch, source):
    try:
        program = compile_source(str(launch.kernel_file), source, launch.build_options,
                                 kernel=launch.kernel)
        return program.kernel(launch.kernel)
    except KernelError as exc:
        raise InputError(f"{measurements}:{launch.line}: {exc}") from None
    except KeyError as exc:
        raise InputError(f"{measurements}:{launch.line}: column kernel: {exc.args[0]}") \
            from None


def _check_args(measurements, launch, kernel):
    params = [name.split("#")[0] for name, _ in kernel.params]
    given = [name for name, _ in launch.args]
    missing = [p for p in params if p not in given]
    unknown = [g for g in given if g not in params]
    if missing or unknown:
        raise InputError(
            f"{measurements}:{launch.line}: column args: kernel '{kernel.name}' takes"
            f" {', '.join(params) or 'no arguments'}"
            + (f"; missing {', '.join(missing)}" if missing else "")
            + (f"; no parameter named {', '.join(unknown)}" if unknown else ""))
