"""Shared fixtures: both builds of the tracer, and small seeded traces."""
import atexit
import os
import shutil
import tempfile

import pytest

from simulator.tracing import PyTracer, Tracer

# Edited kernel runs made by the tests (and the servers they start) go to a directory of
# their own, never into a developer's, whose oldest runs they would prune.
if "GPUSCOPE_RUN_DIR" not in os.environ:
    os.environ["GPUSCOPE_RUN_DIR"] = tempfile.mkdtemp(prefix="gpuscope-test-runs-")
    atexit.register(shutil.rmtree, os.environ["GPUSCOPE_RUN_DIR"], ignore_errors=True)


@pytest.fixture(params=["python", "cython"])
def tracer_class(request):
    """Each tracer test runs on the readable reference and on the Cython build."""
    if request.param == "cython":
        if Tracer is PyTracer:
            pytest.skip("Cython tracer not built")
        return Tracer
    return PyTracer


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
