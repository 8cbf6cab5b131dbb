"""Shared fixtures: the two builds of the simulator, and small seeded traces."""
import atexit
import os
import shutil
import tempfile

import pytest

from simulator import build as simulator_build
from simulator import tracing

# Edited kernel runs made by the tests (and the servers they start) go to a directory of
# their own, never into a developer's, whose oldest runs they would prune.
if "GPUSCOPE_RUN_DIR" not in os.environ:
    os.environ["GPUSCOPE_RUN_DIR"] = tempfile.mkdtemp(prefix="gpuscope-test-runs-")
    atexit.register(shutil.rmtree, os.environ["GPUSCOPE_RUN_DIR"], ignore_errors=True)


@pytest.fixture(params=simulator_build.BUILDS)
def build(request):
    """Runs a test on each build of the simulator (``simulator.build``): plain Python and
    compiled, the latter skipped where the extensions are not built."""
    if request.param == "cython" and not simulator_build.compiled_available():
        pytest.skip("compiled build missing: run `python setup.py build_ext --inplace`")
    return request.param


@pytest.fixture
def tracer_class(build):
    """The ``Tracer`` class of each build."""
    return tracing.tracer_class(build)


class MemorySink:
    """Collects batches in memory, in the shape the SQLite writer receives them."""

    def __init__(self):
        self.batches = []

    def write_batch(self, tasks, details, tags, locations, kinds, tag_names):
        self.batches.append((tasks.copy(), list(details), tags.copy(), list(locations),
                             list(kinds), list(tag_names)))

    @property
    def tasks(self):
        rows = [tuple(r) for batch in self.batches for r in batch[0].tolist()]
        return {r[0]: r for r in rows}


@pytest.fixture
def memory_sink():
    return MemorySink()
