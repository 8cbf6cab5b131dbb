"""Shared fixtures: the two builds of the simulator, and small seeded traces."""
import atexit
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import settings

from simulator import build as simulator_build
from simulator import tracing

ROOT = Path(__file__).resolve().parents[1]

# In CI every run explores the same examples (a seed fixed per test), so a run's result
# does not depend on chance; locally each run explores afresh.
settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")

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


@pytest.fixture(scope="module")
def served_traces(tmp_path_factory):
    """A folder for a real server: small reduction v3 (``v3.sqlite``, kernel records, 1,024
    elements in work-groups of 256) and a 20,000-task synthetic trace (``syn.sqlite``)."""
    from test_app_traces import write_synthetic_trace

    directory = tmp_path_factory.mktemp("served")
    subprocess.run([sys.executable, "-m", "simulator", "run", "reduction-v3", "--size", "1024",
                    "--local", "256", "--trace-level", "kernel", "--no-progress",
                    "-o", str(directory / "v3.sqlite")], cwd=ROOT, check=True,
                   capture_output=True)
    write_synthetic_trace(directory / "syn.sqlite", tasks=20_000)
    return directory


SHARED_TRACES = Path(os.environ.get("GPUSCOPE_SHARED", ROOT.parent / "shared")) / "traces"
"""Real traces from real tools (``shared/traces`` beside the checkout, as in CI): read
from there, never copied into the project."""


@pytest.fixture(scope="session")
def shared_trace():
    """The path of a real trace of ``shared/traces`` by name (skips where there is none:
    a checkout without the team's shared folder)."""
    def path(name):
        found = SHARED_TRACES / name
        if not found.is_file():
            pytest.skip(f"{found} is not here")
        return found
    return path
