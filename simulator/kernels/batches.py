"""A launch run batch by batch: work-groups executed when the dispatcher needs them.

The SIMT executor runs a statement for every lane it is given at once; given a whole
launch, its instruction streams (every wavefront's instructions, with each lane's
addresses) would all exist before the timing model starts, and memory would grow with
the launch. ``LaunchBatches`` runs the executor on a batch of consecutive work-groups at
a time instead, when the Command Processor asks for the next work-group and the
previous batch's are all handed out; a work-group's streams are dropped as it retires.
A batch is ``BATCHES_RESIDENT`` times the work-groups the GPU holds at once (``plan``),
so memory is bounded by the GPU and the kernel's buffers.

Order of execution (see ``docs/simulation.md``): the batches run one after the other,
in dispatch order; inside a batch, every lane finishes a statement before any starts
the next. OpenCL 1.2 promises no order between work-groups, and no work-group may wait
for another (there is no forward-progress guarantee across groups): a work-group's
instructions and results depend only on its own work-items and on what is in memory
when it runs. So a kernel whose work-groups do not race gives the same outputs and the
same streams whatever the batch size; work-groups that communicate through atomics see
a valid order, the batches' (an earlier batch's writes are all visible to a later one).
"""
import time

from ..stream import KernelLaunch, StreamCounts, WorkGroupSource, WorkGroupStream
from .diagnostics import KernelError
from .lanes import Geometry
from .regions import LaunchMemory
from .simt import Executor, vgpr_estimate
from .wavefronts import InstructionLog

BATCHES_RESIDENT = 1
"""Work-groups per batch, in multiples of those the GPU holds at once: numpy's arrays
are long already (an R9 Nano holds 163,840 lanes), and the streams in memory are those
of the work-groups on the GPU and of one batch."""

UNPLANNED_WAVEFRONTS = 2560
"""Wavefronts per batch when no GPU has said how many it holds (an R9 Nano's 64 CUs x
40 wavefront slots): a launch run functionally alone."""


class LaunchBatches(WorkGroupSource):
    """The work-groups of one launch, executed batch by batch (see the module docstring).

    ``counts`` sums the launch's streams and ``regions``/``lds_bytes``/``watched`` describe
    its memory, once ``complete``; ``on_complete`` callbacks then run with this object.
    """

    def __init__(self, program, kernel, geometry, args, probes=None):
        self.program, self.kernel, self.geometry, self.args = program, kernel, geometry, args
        self.probes = probes
        # Bind the arguments now: a wrong one fails before the timing model starts.
        memory = LaunchMemory(program.path, kernel, geometry.batch(0, 1), args)
        self.lds_bytes = memory.lds_bytes
        self.regions = memory.regions
        self.vgprs = vgpr_estimate(kernel)
        self.watched = set()
        self.counts = StreamCounts()
        self.printed = 0
        self.seconds = 0.0
        self.batch_groups = max(1, UNPLANNED_WAVEFRONTS // geometry.waves_per_group)
        self.on_complete = []
        self.done = False
        self._streams = None

    def __len__(self):
        return self.geometry.launch_groups

    def plan(self, resident_wavefronts):
        self.batch_groups = max(1, int(BATCHES_RESIDENT * resident_wavefronts
                                       / self.geometry.waves_per_group))

    def __iter__(self):
        if self._streams is not None:
            raise RuntimeError("a launch's work-groups are made once")
        self._streams = self._produce()
        return self._streams

    def complete(self):
        """Run the work-groups not made yet, dropping their streams; then the callbacks."""
        if self._streams is None:
            iter(self)
        for _ in self._streams:
            pass

    def _produce(self):
        geometry = self.geometry
        if self.probes is not None:
            self.probes.reset(geometry)
        first = 0
        while first < geometry.launch_groups:
            started = time.perf_counter()
            count = min(self.batch_groups, geometry.launch_groups - first)
            batch = geometry.batch(first, count)
            records = self._run_batch(batch)
            self.seconds += time.perf_counter() - started
            first += count
            w = batch.waves_per_group
            for g in range(count):
                # Each work-group takes a copy of its streams: the batch's records go as
                # soon as the batch is handed out, not when its last work-group retires.
                yield WorkGroupStream(batch.group_ids(g), records.copy_streams(range(g * w, g * w + w)),
                                      lds_bytes=self.lds_bytes, vgprs_per_wavefront=self.vgprs)
            del records   # before the next batch runs, not after
        self.done = True
        for callback in self.on_complete:
            callback(self)

    def _run_batch(self, batch):
        if self.probes is not None:
            self.probes.start_batch(batch)
        log = InstructionLog(batch.wavefronts)
        executor = Executor(self.program, self.kernel, batch, self.args, log, self.probes,
                            printed=self.printed).run()
        self.printed = executor.printed
        self.watched |= executor.watched
        self.regions = executor.regions
        if self.probes is not None:
            self.probes.end_batch()
        records = log.streams()
        self.counts.add(records.insts)
        return records


def start_launch(program, kernel_name, global_size, local_size, args, *, probes=None,
                 launch_id=0, name=None):
    """One kernel launch on real data, as a ``stream.KernelLaunch`` whose work-groups
    (a ``LaunchBatches``) run as they are consumed; ``complete()`` them to finish it.

    ``args`` maps each kernel parameter name to a ``memory.Buffer`` (global and
    constant pointers), a ``memory.LocalMem`` (local pointers) or a number.
    """
    kernel = program.kernel(kernel_name)
    try:
        geometry = Geometry(global_size, local_size)
    except ValueError as exc:
        raise KernelError(program.path, kernel.line, 1, str(exc)) from None
    batches = LaunchBatches(program, kernel, geometry, args, probes)
    return KernelLaunch(name or kernel.name, geometry.global_size[:geometry.dims],
                        geometry.local_size[:geometry.dims], batches, launch_id)


def finished(launch):
    """``launch`` (from ``start_launch``) run to the end: every work-group's stream in a list."""
    launch.work_groups = list(launch.work_groups)
    return launch


def launch(program, kernel_name, global_size, local_size, args, *, probes=None, launch_id=0,
           name=None):
    """``start_launch``, run to the end (``finished``)."""
    return finished(start_launch(program, kernel_name, global_size, local_size, args,
                                 probes=probes, launch_id=launch_id, name=name))
