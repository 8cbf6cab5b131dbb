"""One run with Klein's records: a workload on the timing model, kernel tables in its trace.

``simulator.gpu.run.simulate`` owns the trace writer and asks the workload for its
launches without a recorder. ``simulate_with_records`` hands it a thin wrapper whose
launches go through a ``KernelRecorder``, and the recorder to write through its trace
writer: each launch's kernel tables go in as it runs, beside the simulation (an
interrupted run's trace keeps the records of the launches that ran).

``record_only`` runs the workload functionally, without the timing model, and writes
the run metadata and the kernel tables through a ``TraceWriter`` directly (the
turnaround benchmark's measure of the front end and SIMT execution alone).
"""
import time

from ..gpu.run import simulate
from ..tracing.writer import TraceWriter, pending_output


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
    """``simulate(workload, config, out_path, **options)`` plus the recorder's kernel tables
    in its trace."""
    return simulate(_RecordedWorkload(workload, recorder), config, out_path=out_path,
                    recorder=recorder, **options)


def record_only(workload, out_path, recorder, *, command, config=None):
    """Run ``workload`` functionally and write a trace of its run metadata and kernel tables."""
    with pending_output(out_path) as pending:
        writer = TraceWriter(pending.path, command=command, config=config or {},
                             workload=workload.name, seed=workload.seed, watchable=False)
        start = time.perf_counter()
        try:
            recorder.write_to(writer)
            launches = 0
            for _ in workload.launches(recorder=recorder):
                launches += 1
            writer.finalize(completed=True, virtual_end_ps=0)
        finally:
            writer.close()
    return launches, time.perf_counter() - start
