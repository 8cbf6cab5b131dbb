"""Running a whole workload: trace file, ``Simulation`` root task, kernels, finalize.

``simulate`` is the one entry point used by ``python -m simulator run`` and the
benchmarks. The trace is written to a temporary file beside the output and moved into
place when it is complete and valid, so an error never leaves a half-written trace.
Ctrl-C is different: the open tasks are closed and flagged, the file is finalized with
``run.completed = 0`` and kept, and the ``KeyboardInterrupt`` is raised again.
"""
import contextlib
import time
from dataclasses import dataclass, field

from ..interrupts import DeferredInterrupt
from ..stream import WorkGroupSource
from ..tracing import TraceWriter, tracer_class
from ..tracing.background import BackgroundWriter
from ..tracing.writer import PendingOutput
from .config import ps_per_cycle, validate
from .platform import GPU, default_implementation
from .trace_vocabulary import parse_trace_level


class SimulationInterrupted(KeyboardInterrupt):
    """Ctrl-C during ``simulate``; ``result`` describes the partial run and its trace."""

    def __init__(self, result):
        super().__init__("simulation interrupted")
        self.result = result


@dataclass
class SimulationResult:
    """What a run achieved; rates are per wall-clock second of simulation."""

    cycles: int = 0
    simulated_ps: int = 0
    events: int = 0
    tasks: int = 0
    wall_seconds: float = 0.0        # the whole run, until every row is written
    functional_seconds: float = 0.0  # of which executing the kernels on real data (SIMT)
    finalize_seconds: float = 0.0    # after the run: indexes and the metric pyramid
    kernels: list = field(default_factory=list)   # (name, cycles) per launch
    stats: dict = field(default_factory=dict)
    completed: bool = False
    trace_path: str = None

    @property
    def total_seconds(self):
        """Wall time as the user waits for it: the run and finalizing its trace."""
        return self.wall_seconds + self.finalize_seconds

    @property
    def timing_seconds(self):
        """Wall time of the timing model and tracing, without functional execution."""
        return max(self.wall_seconds - self.functional_seconds, 1e-9)

    @property
    def events_per_second(self):
        return self.events / self.timing_seconds

    @property
    def tasks_per_second(self):
        return self.tasks / self.timing_seconds


def _abandon(writer, pending):
    """Close ``writer`` after a failure and remove its unfinished file."""
    with contextlib.suppress(Exception):  # the failure that brought us here is the one to report
        writer.close()
    pending.discard()


def simulate(workload, config, out_path=None, trace_level="all", window=None, progress=True,
             implementation=None, command=None, seed=None, writer_process=True, recorder=None,
             watchable=True, note=None):
    """Simulate every launch of ``workload`` on a GPU built from ``config``.

    ``out_path`` None (or ``trace_level`` "off") runs untraced. ``window`` is a
    ``(start, end)`` pair of cycles (either may be None) limiting what is recorded.
    ``writer_process`` writes rows in a child process beside the simulation; small
    interactive runs turn it off, since starting that process costs more than they do.
    ``recorder`` (a ``KernelRecorder``) writes its kernel tables through the run's trace
    writer as the workload's launches run, beside the simulation.
    ``watchable`` writes the trace so that the app can show the run while it goes (WAL
    mode, see ``tracing.writer``). ``note`` says what the run is for (``--note``).
    """
    config = validate(config)
    levels = parse_trace_level(trace_level)
    implementation = implementation or default_implementation()
    result = SimulationResult(trace_path=str(out_path) if out_path is not None and levels else None)
    writer = tracer = None
    pending = None
    if out_path is not None and levels:
        pending = PendingOutput(out_path)
        try:
            writer = (BackgroundWriter if writer_process else TraceWriter)(
                pending.path, command=command or "simulate", config=config,
                workload=getattr(workload, "name", None), seed=getattr(workload, "seed", seed),
                watchable=watchable, note=note)
        except BaseException:
            pending.discard()
            raise
        tracer = tracer_class(implementation)(writer, ps_per_tick=ps_per_cycle(config),
                              window=window or (None, None))
        if recorder is not None:
            try:
                recorder.write_to(writer)  # its buffered rows, then each launch's as it runs
            except BaseException:
                _abandon(writer, pending)
                raise
    bar = None
    if progress:
        from ..tracing.progress import progress_bar  # tqdm's import is deferred to runs that draw
        bar = progress_bar(unit=" wg", desc="simulating")
    wall_start = time.perf_counter()
    gpu = None
    interrupted = False
    ctrl_c = DeferredInterrupt()
    try:
        ctrl_c.install()
        gpu = GPU(config, tracer, levels if tracer is not None else 0, implementation)
        gpu.start_simulation({"workload": getattr(workload, "name", None)})
        done_before = 0
        launches = iter(workload.launches(recorder=None))
        while True:
            produced = time.perf_counter()
            launch = next(launches, None)  # the host program, up to its next launch
            result.functional_seconds += time.perf_counter() - produced
            if launch is None:
                break
            ctrl_c.check()
            if bar is not None:
                bar.set_description(launch.name)
                bar.total = done_before + len(launch.work_groups)

            def report(completed, base=done_before):
                if bar is not None:
                    bar.n = base + completed
                    bar.refresh()
                ctrl_c.check()  # between events: the model and the tracer are consistent

            cycles = gpu.run_kernel(launch, report)
            if isinstance(launch.work_groups, WorkGroupSource):  # made while the model ran
                result.functional_seconds += launch.work_groups.seconds
            done_before += len(launch.work_groups)
            result.kernels.append((launch.name, cycles))
        gpu.finish()
        result.completed = True
    except KeyboardInterrupt:
        interrupted = True
    except BaseException:
        if writer is not None:
            _abandon(writer, pending)
        raise
    finally:
        ctrl_c.uninstall()
        if bar is not None:
            bar.close()
        if gpu is not None:
            gpu.engine.clear()  # events left by an interrupted or failed run hold the model
    if gpu is not None:
        result.cycles = gpu.now
        result.events = gpu.events
        result.stats = gpu.stats()
    result.simulated_ps = int(result.cycles * ps_per_cycle(config))  # rounded down, as the trace's
    if tracer is None:
        result.wall_seconds = time.perf_counter() - wall_start
    else:
        try:
            open_tasks = tracer.close(result.cycles)
            result.tasks = tracer.next_key - tracer.dropped  # recorded, not cut by the window
            writer.sync()  # every row is in the file: the traced run's time ends here
            result.wall_seconds = time.perf_counter() - wall_start
            writer.finalize(completed=result.completed, virtual_end_ps=result.simulated_ps,
                            open_tasks=open_tasks)
            writer.close()
            pending.publish()
        except BaseException:
            _abandon(writer, pending)
            raise
        result.finalize_seconds = time.perf_counter() - wall_start - result.wall_seconds
    if interrupted:
        raise SimulationInterrupted(result)
    return result
