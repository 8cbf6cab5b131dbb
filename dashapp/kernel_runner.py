"""Edit and run: the kernel page re-runs an edited kernel in a bounded child process.

The app never imports the simulator (data flows simulator → trace file → app), so an
edited kernel is run by ``python -m simulator run-kernel`` in a subprocess that writes a
trace into a scratch directory private to this server process. The child is bounded
three ways so a bad kernel cannot take the server down: a wall-clock timeout (its whole
process group is killed), a CPU-time limit and an address-space limit (``setrlimit`` in
the child before it starts). A kernel error comes back as ``RunError`` with the line
and column the simulator reported (``FILE:LINE:COL: reason`` on stderr), never as a
traceback.

Runs are named by a hash of everything that defines them, so the same kernel, size and
arguments map to the same trace and are not run twice; the newest ``KEEP`` are kept.
"""
import functools
import hashlib
import json
import math
import os
import re
import resource
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

TIMEOUT_SECONDS = 30.0
CPU_SECONDS = 60
MEMORY_BYTES = 3 << 30
MAX_WORK_ITEMS = 1 << 16
"""Largest NDRange the page offers: edit-and-run is for small, fast sizes."""
KEEP = 16
SOURCE_NAME = "kernel.cl"
RUN_ID = re.compile(r"^[0-9a-f]{16}$")
_LOCATED = re.compile(r"^(?P<file>[^:\n]+):(?P<line>\d+):(?P<col>\d+): (?P<reason>.+)$", re.M)
_scratch = []
_lock = threading.Lock()


@dataclass(frozen=True)
class RunError(Exception):
    """Why a run failed: a message for the page, with the kernel line/column if known."""
    message: str
    line: int = None
    col: int = None

    def __str__(self):
        where = f"{SOURCE_NAME}:{self.line}:{self.col}: " if self.line is not None else ""
        return where + self.message


@dataclass(frozen=True)
class RunSpec:
    """Everything that defines a run: source, kernel name, sizes, ``--arg`` values."""
    source: str
    kernel: str
    global_size: tuple
    local_size: tuple
    args: tuple

    def run_id(self):
        text = json.dumps([self.source, self.kernel, list(self.global_size),
                           list(self.local_size), list(self.args), simulator_digest()])
        return hashlib.sha256(text.encode()).hexdigest()[:16]


@functools.lru_cache(maxsize=1)
def simulator_digest():
    """A digest of the simulator's files (code, kernels, the trace schema), read as text:
    a run cached by an older simulator or trace contract is never shown as current."""
    root = Path(__file__).resolve().parents[1] / "simulator"
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*")):
        if path.suffix in (".py", ".pyx", ".pxd", ".cl", ".sql") and path.is_file():
            digest.update(str(path.relative_to(root)).encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def size_text(dims):
    """``64x64`` for (64, 64): the simulator's size syntax."""
    return "x".join(str(int(d)) for d in dims)


def size_options(global_size, local_size):
    """NDRange sizes offered for a launch: whole multiples of its work-group size up to
    ``MAX_WORK_ITEMS`` work-items, plus the recorded size when it is small enough."""
    out = []
    for k in (1, 2, 4, 8, 16, 32, 64, 128, 256, 512):
        dims = tuple(int(local_size[0]) * k if i == 0 else int(d)
                     for i, d in enumerate(local_size)) if len(local_size) == 1 else \
            tuple(int(d) * k for d in local_size)
        if math.prod(dims) <= MAX_WORK_ITEMS:
            out.append(dims)
    if math.prod(global_size) <= MAX_WORK_ITEMS:
        out.append(tuple(int(d) for d in global_size))
    return sorted(set(out), key=lambda d: (math.prod(d), d))


def scaled_args(args, arrays, old_global, new_global):
    """``--arg`` values re-running a recorded launch at ``new_global``.

    Buffers get random data scaled with the NDRange (their recorded length times the
    ratio of work-items, at least one element); integer arguments that equal a global
    dimension follow that dimension (``n``, ``width``, ``height``); local arrays and other
    numbers are kept. ``args`` is kernel_launch.args (JSON text), ``arrays`` the
    kernel_array rows (name, space, elem_type, elem_bytes, length, base, watched).
    """
    lengths = {row[0]: row[4] for row in arrays}
    ratio = math.prod(new_global) / max(1, math.prod(old_global))
    out = []
    for name, value in json.loads(args).items():
        if isinstance(value, dict) and "local" in value:
            out.append((name, f"local:{int(value['local'])}"))
        elif isinstance(value, dict):
            out.append((name, f"random:{max(1, math.ceil(lengths.get(name, 1) * ratio))}"))
        elif isinstance(value, int) and value in old_global:
            out.append((name, str(new_global[list(old_global).index(value)])))
        else:
            out.append((name, str(value)))
    return tuple(out)


def scratch_dir():
    """The directory of edited runs: ``$GPUSCOPE_RUN_DIR`` or one per user in the temp
    directory, shared by every worker of a server (gunicorn -w 4), so that a run made by
    one worker can be shown by another; runs are named by content, so sharing is safe.
    A directory that belongs to another user is never used (a private one is made)."""
    with _lock:
        if not _scratch:
            path = Path(os.environ.get("GPUSCOPE_RUN_DIR")
                        or Path(tempfile.gettempdir()) / f"gpuscope-runs-{os.getuid()}")
            path.mkdir(mode=0o700, parents=True, exist_ok=True)
            if path.stat().st_uid != os.getuid():
                path = Path(tempfile.mkdtemp(prefix="gpuscope-runs-"))
            _scratch.append(path)
        return _scratch[0]


def run_path(run_id):
    """The trace of an earlier run, or None for an unknown or malformed id."""
    if not isinstance(run_id, str) or not RUN_ID.match(run_id):
        return None
    path = scratch_dir() / f"{run_id}.sqlite"
    return path if path.is_file() else None


def _limits():
    # Runs in the child between fork and exec: the limits bind the simulator only.
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_BYTES, MEMORY_BYTES))
    resource.setrlimit(resource.RLIMIT_CPU, (CPU_SECONDS, CPU_SECONDS + 1))


def _command(spec, source_path, out_path):
    cmd = [sys.executable, "-m", "simulator", "run-kernel", str(source_path),
           "--kernel", spec.kernel, "--global", size_text(spec.global_size),
           "--local", size_text(spec.local_size), "--trace-level", "kernel",
           "--no-progress", "-o", str(out_path)]
    for name, value in spec.args:
        cmd += ["--arg", f"{name}={value}"]
    return cmd


def _error_from(stderr, returncode):
    found = list(_LOCATED.finditer(stderr))
    if found:
        last = found[-1]
        return RunError(last["reason"].strip(), int(last["line"]), int(last["col"]))
    if returncode < 0:
        sig = signal.Signals(-returncode).name
        return RunError(f"the run was stopped by {sig} (CPU limit {CPU_SECONDS} s, "
                        f"memory limit {MEMORY_BYTES >> 30} GiB)")
    lines = [ln for ln in stderr.strip().splitlines() if ln.strip()]
    if lines and ("MemoryError" in stderr):
        return RunError(f"the run ran out of memory (limit {MEMORY_BYTES >> 30} GiB)")
    return RunError(lines[-1] if lines else f"the run failed (exit status {returncode})")


RUNS_AT_ONCE = 2
"""Edited runs one server process allows at the same time (each may use a core and GBs)."""
_RUN_SLOTS = threading.BoundedSemaphore(RUNS_AT_ONCE)


def run(spec, timeout=TIMEOUT_SECONDS):
    """Run ``spec`` and return (run id, trace path, seconds); raises ``RunError``."""
    run_id = spec.run_id()
    done = run_path(run_id)
    if done is not None:
        return run_id, done, 0.0
    if not _RUN_SLOTS.acquire(timeout=5):
        raise RunError("the server is busy with other runs; try again in a moment")
    try:
        return _run_child(spec, run_id, timeout)
    finally:
        _RUN_SLOTS.release()


def _run_child(spec, run_id, timeout):
    root = scratch_dir()
    work = Path(tempfile.mkdtemp(prefix=f"{run_id}-", dir=root))
    source_path = work / SOURCE_NAME
    source_path.write_text(spec.source)
    # Written inside the run's own directory, so whatever a killed run leaves behind goes
    # with it; only a finished trace is moved to its final name.
    trace = work / "trace.sqlite"
    out_path = root / f"{run_id}.sqlite"
    env = dict(os.environ)
    # The simulator package sits beside dashapp, in a checkout and when installed.
    package_root = str(Path(__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [package_root, env.get("PYTHONPATH")]))
    start = time.perf_counter()
    proc = subprocess.Popen(_command(spec, source_path, trace), cwd=work, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=_limits, start_new_session=True)
    try:
        _out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise RunError(f"the run took longer than {timeout:g} s and was stopped") from None
    else:
        if proc.returncode == 0 and trace.is_file():
            os.replace(trace, out_path)
    finally:
        for leftover in work.iterdir():
            leftover.unlink()
        work.rmdir()
    seconds = time.perf_counter() - start
    if proc.returncode != 0 or not out_path.is_file():
        raise _error_from(err.replace(str(source_path), SOURCE_NAME), proc.returncode)
    _prune(root)
    return run_id, out_path, seconds


def _prune(root):
    runs = sorted(root.glob("*.sqlite"), key=lambda p: p.stat().st_mtime, reverse=True)
    for old in runs[KEEP:]:
        # A trace the page has read may have SQLite's -wal/-shm files beside it.
        for suffix in ("", "-wal", "-shm"):
            old.with_name(old.name + suffix).unlink(missing_ok=True)
