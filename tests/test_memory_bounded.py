"""Memory is bounded by the model, not by the trace: a ten times longer run, the same peak.

Each command runs as its own process; its peak resident set (the SQLite cache, the
pyramid builder, Python and numpy included) is read from the kernel when it exits.
"""
import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.slow

SMALL, LARGE = 200_000, 2_000_000
TOLERANCE = 1.2


def peak_mib(*args):
    """Peak resident memory, in MiB, of ``python -m simulator ARGS`` run to completion."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    process = subprocess.Popen([sys.executable, "-m", "simulator", *map(str, args)], env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    assert process.returncode == 0, process.stderr.read().decode()
    process.stderr.close()
    return usage.ru_maxrss / 1024


@pytest.fixture(scope="module")
def traces(tmp_path_factory):
    """Synthetic traces of both sizes, with the writer's peak for each."""
    tmp = tmp_path_factory.mktemp("bounded")
    out = {}
    for n in (SMALL, LARGE):
        path = tmp / f"synth-{n}.sqlite"
        out[n] = (path, peak_mib("synth", "--tasks", n, "-o", path))
    return out


def test_the_writers_peak_does_not_grow_with_the_trace(traces):
    small, large = traces[SMALL][1], traces[LARGE][1]
    assert large <= small * TOLERANCE, f"synth: {small:.0f} MiB at 200k tasks, {large:.0f} MiB at 2M"


def test_finalizing_again_does_not_grow_with_the_trace(traces):
    small, large = (peak_mib("finalize", traces[n][0]) for n in (SMALL, LARGE))
    assert large <= small * TOLERANCE, f"finalize: {small:.0f} MiB at 200k tasks, {large:.0f} MiB at 2M"


@pytest.mark.parametrize("fmt", ["csv", "chrome"])
def test_an_imports_peak_does_not_grow_with_the_trace(traces, tmp_path, fmt):
    peaks = []
    for n in (SMALL, LARGE):
        exported = tmp_path / f"{n}.{fmt}"
        subprocess.run([sys.executable, "-m", "simulator", "export", traces[n][0], "-o", exported,
                        "--format", fmt], check=True, stdout=subprocess.DEVNULL,
                       env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)))
        peaks.append(peak_mib("import", exported, "-o", tmp_path / f"{n}-{fmt}.sqlite"))
        exported.unlink()
    assert peaks[1] <= peaks[0] * TOLERANCE, \
        f"import {fmt}: {peaks[0]:.0f} MiB at 200k tasks, {peaks[1]:.0f} MiB at 2M"
