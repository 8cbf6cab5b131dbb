"""What every workload (host program) has in common.

A workload builds its input data from a seed, launches its kernels in order and can
check its results against numpy afterwards. Its ``host`` program is a generator of
launches, so the timing model can consume launches one by one while the host program
decides what comes next (PageRank iterates, the reduction relaunches on its partial
sums). A launch's work-groups run functionally (on the real data) as the timing model
takes them; ``launches`` resumes the host program only once the launch is complete, as
``clFinish`` would.
"""
import functools

from ..kernels import Memory, builtin_source, compile_source, start_launch
from ..kernels.batches import finished
from ..stream import complete


@functools.cache
def builtin_program(name):
    """The compiled IR of ``simulator/kernels/builtin/<name>.cl`` (compiled once)."""
    return compile_source(f"{name}.cl", builtin_source(name))


class Workload:
    """Base class: subclasses set ``name`` and implement ``add_arguments``, ``host`` and ``check``."""

    name = ""

    def __init__(self, seed=0, **options):
        self.seed = seed
        self.options = options
        self.memory = Memory()
        self._launch_id = 0

    @classmethod
    def add_arguments(cls, parser):
        """Add this workload's own command-line options to ``parser``."""

    def launches(self, recorder=None):
        """Yield ``stream.KernelLaunch`` objects in order, computing real results."""
        for launch in self.host(recorder):
            yield launch
            complete(launch)  # what the consumer left: the host reads every result

    def made_launches(self, recorder=None):
        """Every launch run to the end with its streams kept in lists (``batches.finished``):
        for looking at the streams rather than timing them."""
        return [finished(launch) for launch in self.launches(recorder)]

    def host(self, recorder):
        """The host program: yield each launch (``run``) in order."""
        raise NotImplementedError

    def check(self):
        """Raise AssertionError with a clear message if a result differs from numpy."""
        raise NotImplementedError

    # -- for subclasses --------------------------------------------------------------
    def run(self, recorder, program, kernel, global_size, local_size, args):
        """Start ``kernel`` of ``program``; through ``recorder`` when one is given."""
        launch_id = self._launch_id
        self._launch_id += 1
        start = start_launch if recorder is None else recorder.start
        return start(program, kernel, global_size, local_size, args, launch_id=launch_id)

    def fresh_memory(self):
        """Start a new address space (each ``launches`` run rebuilds its data)."""
        self.memory = Memory()
        self._launch_id = 0
        return self.memory
