"""One run with Klein's records: a workload on the timing model, kernel tables in its trace.

``simulator.gpu.run.simulate`` owns the trace writer and asks the workload for its
launches without a recorder. ``simulate_with_records`` hands it a thin wrapper whose
launches go through a ``KernelRecorder`` that buffers its rows, and appends them to
the trace file once ``simulate`` has finished it (also when the run was interrupted:
the partial trace keeps the records of the launches that ran).

``record_only`` runs the workload functionally, without the timing model, and writes
the run metadata and the kernel tables through a ``TraceWriter`` directly (the
turnaround benchmark's measure of the front end and SIMT execution alone).
"""
import time
from pathlib import Path

from ..gpu.run import SimulationInterrupted, simulate
from ..tracing.writer import TraceWriter, remove_trace_files, replace_atomically, temporary_path


class _RecordedWorkload:
    """A workload whose launches always run through ``recorder``."""

    def __init__(self, workload, recorder):
        self.workload = workload
        self.recorder = recorder
        self.name = workload.name
        self.seed = workload.seed

    def launches(self, recorder=None):
        return self.workload.launches(recorder=self.recorder)

    def check(self):
        self.workload.check()


def simulate_with_records(workload, config, out_path, recorder, **options):
    """``simulate(workload, config, out_path, **options)`` plus the recorder's kernel tables."""
    try:
        result = simulate(_RecordedWorkload(workload, recorder), config, out_path=out_path,
                          **options)
    except SimulationInterrupted as stop:
        if stop.result.trace_path:
            recorder.write_into(stop.result.trace_path)
        raise
    if out_path is not None and result.trace_path:
        recorder.write_into(out_path)
    return result


def record_only(workload, out_path, recorder, *, command, config=None):
    """Run ``workload`` functionally and write a trace of its run metadata and kernel tables."""
    tmp_path = Path(temporary_path(out_path))
    writer = TraceWriter(tmp_path, command=command, config=config or {}, workload=workload.name,
                         seed=workload.seed, temporary=True)
    start = time.perf_counter()
    try:
        recorder.write_to(writer)
        launches = 0
        for _ in workload.launches(recorder=recorder):
            launches += 1
        writer.finalize(completed=True, virtual_end_ps=0)
    except BaseException:
        writer.close()
        remove_trace_files(tmp_path)
        raise
    writer.close()
    replace_atomically(tmp_path, out_path)
    return launches, time.perf_counter() - start
