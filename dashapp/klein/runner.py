"""Edit and run: the kernel page re-runs an edited kernel in a bounded child process.

The app never imports the simulator (data flows simulator → trace file → app), so an
edited kernel is run as ``python -m simulator run-kernel`` in a child process that writes
a trace into a scratch directory. Starting Python and importing the simulator takes
about as long as a whole run at these sizes (~0.3 s), so each server process (each
gunicorn worker) keeps one *spare*: a ``python -m simulator standby`` child started ahead
of time, imported and waiting for one command line on stdin. A run hands its command
line to the spare (or, when the spare has died or the simulator's files changed since it
started, to a fresh one), and the next spare starts at once. A spare serves exactly one
run and exits, so nothing of one run can leak into the next; the server stops and reaps
its spare when it exits.

The child is bounded three ways so a bad kernel cannot take the server down: a
wall-clock timeout (its whole process group is killed), a CPU-time limit and an
address-space limit (``prlimit`` on the child when the run is handed over; the CPU limit
counts from the CPU time the child has already spent importing). A kernel error comes
back as ``RunError`` with the line and column the simulator reported
(``FILE:LINE:COL: reason`` on stderr), never as a traceback.

Runs are named by a hash of everything that defines them, so the same kernel, size and
arguments map to the same trace and are not run twice; the newest ``KEEP`` are kept.
"""
import atexit
import hashlib
import json
import logging
import math
import os
import re
import resource
import select
import shutil
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
_log = logging.getLogger(__name__)


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
    """Everything that defines a run: source, kernel name, sizes, ``--arg`` values and
    the build options (clBuildProgram's string: ``-D``/``-U``/``-I``)."""
    source: str
    kernel: str
    global_size: tuple
    local_size: tuple
    args: tuple
    options: str = ""

    def run_id(self):
        parts = [self.source, self.kernel, list(self.global_size), list(self.local_size),
                 list(self.args), simulator_digest()]
        text = json.dumps(parts + [self.options] if self.options else parts)
        return hashlib.sha256(text.encode()).hexdigest()[:16]


def simulator_digest():
    """A digest of the simulator's files (code, kernels, the trace schema), read as text
    (a few ms): a run cached by an older simulator or trace contract is never shown as
    current, and a spare started before the files changed is not used."""
    root = Path(__file__).resolve().parents[1] / "simulator"
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*")):
        if not path.is_file():
            continue
        if path.suffix in (".py", ".pyx", ".pxd", ".cl", ".sql"):
            digest.update(str(path.relative_to(root)).encode())
            digest.update(path.read_bytes())
        elif path.suffix in (".so", ".pyd"):
            # The compiled extensions are what runs: a rebuild counts, by size and time.
            stat = path.stat()
            digest.update(f"{path.relative_to(root)} {stat.st_size} {stat.st_mtime_ns}".encode())
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
        if _scratch and not _scratch[0].is_dir():
            _scratch.clear()  # removed under a long-running server (a temp cleaner): again
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


def _cpu_seconds_used(pid):
    # utime and stime, in clock ticks, are fields 14 and 15 of /proc/PID/stat; the
    # command name before them may hold spaces, so count from its closing parenthesis.
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _within(pid, limit, value):
    """``value``, or the hard limit ``pid`` already has when that is lower (a process may
    not raise its own hard limit)."""
    hard = resource.prlimit(pid, limit)[1]
    return value if hard == resource.RLIM_INFINITY else min(value, hard)


def bound(pid):
    """Put the run limits on process ``pid``: ``MEMORY_BYTES`` of address space,
    ``CPU_SECONDS`` of CPU time from now on (RLIMIT_CPU counts from the process's start,
    and a spare has spent some importing), and no core file when a limit kills it.
    Raises ``ProcessLookupError`` if it is gone."""
    try:
        cpu = math.ceil(_cpu_seconds_used(pid)) + CPU_SECONDS
    except FileNotFoundError:
        raise ProcessLookupError(pid) from None
    memory = _within(pid, resource.RLIMIT_AS, MEMORY_BYTES)
    resource.prlimit(pid, resource.RLIMIT_AS, (memory, memory))
    cpu_hard = _within(pid, resource.RLIMIT_CPU, cpu + 1)
    resource.prlimit(pid, resource.RLIMIT_CPU, (min(cpu, cpu_hard), cpu_hard))
    resource.prlimit(pid, resource.RLIMIT_CORE, (0, 0))


def _command(spec, source_path, out_path):
    cmd = ["run-kernel", str(source_path), "--kernel", spec.kernel,
           "--global", size_text(spec.global_size), "--local", size_text(spec.local_size),
           "--trace-level", "kernel", "--no-progress", "-o", str(out_path)]
    for name, value in spec.args:
        cmd += ["--arg", f"{name}={value}"]
    if spec.options.strip():
        cmd.append(f"--build-options={spec.options}")
    return cmd


@dataclass
class _Spare:
    """A started ``python -m simulator standby`` child, what it was started from, and the
    unnamed file its stderr goes to (a pipe nobody reads before "ready" could fill and
    stall it)."""
    proc: subprocess.Popen
    digest: str
    owner: int
    errors: object


_spares = []  # the waiting spare, at most one
_children = []  # every child this process started and has not reaped, waiting or running
_closing = []  # set once the server exits: no new children after that
_spare_lock = threading.RLock()  # held while a spare is started or discarded


def _start_spare(digest, command=None):
    """A new child running ``command`` (default: the standby simulator), tracked until
    it is reaped. Called with ``_spare_lock`` held."""
    if _closing:
        raise RunError("the server is shutting down")
    env = dict(os.environ)
    # The simulator package sits beside dashapp, in a checkout and when installed.
    package_root = str(Path(__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [package_root, env.get("PYTHONPATH")]))
    # numpy's BLAS reserves memory per thread, which counts against RLIMIT_AS.
    env.setdefault("OPENBLAS_NUM_THREADS", "1")
    errors = tempfile.TemporaryFile()
    try:
        # Its own session, so a timeout kills whatever the run started too.
        proc = subprocess.Popen(command or [sys.executable, "-m", "simulator", "standby"],
                                cwd=scratch_dir(), env=env, stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=errors,
                                start_new_session=True)
    except BaseException:
        errors.close()
        raise
    spare = _Spare(proc, digest, os.getpid(), errors)
    _children.append(spare)
    return spare


def _forget(spare):
    spare.errors.close()
    with _spare_lock:
        if spare in _children:
            _children.remove(spare)


def _reaped(spare):
    """What ``spare`` wrote on stderr, once it has exited and been waited for."""
    try:
        spare.errors.seek(0)
        text = spare.errors.read().decode(errors="replace")
    except ValueError:  # closed: the server stopped the child while it ran
        text = ""
    _forget(spare)
    return text


def _discard(spare):
    """Kill ``spare`` (and whatever it started) and reap it. Safe while another thread
    waits on it: the process is only waited for, not read."""
    if spare.owner != os.getpid():
        return  # inherited through fork (gunicorn --preload): the parent's to reap
    try:
        os.killpg(spare.proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    spare.proc.wait()
    for pipe in (spare.proc.stdin, spare.proc.stdout):
        try:
            pipe.close()
        except OSError:  # a broken pipe's last write
            pass
    _forget(spare)


def _take_spare():
    """The waiting spare if it is usable, else a fresh one; a new spare starts either way."""
    digest = simulator_digest()
    with _spare_lock:
        spare = _spares.pop() if _spares else None
        if spare is not None and (spare.owner != os.getpid() or spare.digest != digest
                                  or spare.proc.poll() is not None):
            _discard(spare)
            spare = None
        if spare is None:
            spare = _start_spare(digest)
        try:
            # The next run's spare imports while this run runs (the thread only waits).
            _spares.append(_start_spare(digest))
        except (OSError, RunError):
            pass  # this run has its child; the next one starts its own
    return spare


def _fresh_child():
    with _spare_lock:
        return _start_spare(simulator_digest())


def prepare():
    """Start this server process's spare if none is waiting (the kernel page calls this,
    so that its first Run does not wait for one either). Best effort: viewing needs no
    spare, and a Run that finds none starts a child and reports what went wrong."""
    with _spare_lock:
        if not _spares:
            try:
                _spares.append(_start_spare(simulator_digest()))
            except (OSError, RunError) as exc:
                _log.warning("could not start a spare simulator: %s", exc)


@atexit.register
def _stop_spares():
    """Stop and reap every child of this process, waiting or in the middle of a run: the
    server's request threads do not outlive it, so no one else would."""
    with _spare_lock:
        _closing.append(True)
        children = [c for c in _children if c.owner == os.getpid()]
        _spares.clear()
    for child in children:
        _discard(child)


def _ready(proc, deadline):
    """True once ``proc`` says it is ready, False if it exited first; raises
    ``subprocess.TimeoutExpired`` at ``deadline``."""
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            raise subprocess.TimeoutExpired(proc.args, 0)
        if select.select([proc.stdout], [], [], left)[0]:
            return proc.stdout.readline() == b"ready\n"


def _hand_over(spare, job, deadline):
    """Run ``job`` on ``spare``: (returncode, stderr text, whether it took the job); a
    spare that died first says why on stderr. Raises ``subprocess.TimeoutExpired`` at
    ``deadline``, after killing the child's process group."""
    proc = spare.proc
    took = False
    try:
        if _ready(proc, deadline):
            bound(proc.pid)
            took = True
            proc.communicate(job, timeout=max(0.0, deadline - time.monotonic()))
        else:
            proc.communicate(timeout=max(0.0, deadline - time.monotonic()))
    except ProcessLookupError:
        proc.communicate(timeout=max(0.0, deadline - time.monotonic()))
    except BaseException:
        # A timeout, or anything else: the child never outlives its run unreaped.
        _discard(spare)
        raise
    return proc.returncode, _reaped(spare), took


def _error_from(stderr, returncode):
    found = list(_LOCATED.finditer(stderr))
    if found:
        last = found[-1]
        return RunError(last["reason"].strip(), int(last["line"]), int(last["col"]))
    if returncode < 0:
        try:
            sig = signal.Signals(-returncode).name
        except ValueError:  # a real-time signal has no name
            sig = f"signal {-returncode}"
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
    except RunError:
        raise
    except Exception as exc:  # no process, no file descriptor, no scratch space...
        _log.exception("edited run %s could not be run", run_id)
        raise RunError(f"could not run the simulator: {exc}") from None
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
    job = (json.dumps({"argv": _command(spec, source_path, trace), "cwd": str(work)})
           + "\n").encode()
    start = time.perf_counter()
    deadline = time.monotonic() + timeout
    try:
        returncode, err, took = _hand_over(_take_spare(), job, deadline)
        if not took:
            # The spare died before it took the job: a fresh child, once (if that one
            # dies too, say, the simulator fails to import, its stderr says why).
            returncode, err, took = _hand_over(_fresh_child(), job, deadline)
    except subprocess.TimeoutExpired:
        raise RunError(f"the run took longer than {timeout:g} s and was stopped") from None
    else:
        if returncode == 0 and trace.is_file():
            os.replace(trace, out_path)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    seconds = time.perf_counter() - start
    if returncode != 0 or not out_path.is_file():
        raise _error_from(err.replace(str(source_path), SOURCE_NAME), returncode)
    _prune(root)
    return run_id, out_path, seconds


def _mtime(path):
    try:
        return path.stat().st_mtime
    except FileNotFoundError:  # another worker pruned it meanwhile
        return 0.0


def _prune(root):
    """Keep the newest ``KEEP`` runs, and drop the work directories of runs a killed
    server left behind (no run lasts twice its timeout)."""
    runs = sorted(root.glob("*.sqlite"), key=_mtime, reverse=True)
    for stale in root.glob("*-*"):
        if stale.is_dir() and time.time() - _mtime(stale) > 2 * TIMEOUT_SECONDS:
            shutil.rmtree(stale, ignore_errors=True)
    for old in runs[KEEP:]:
        # A trace the page has read may have SQLite's -wal/-shm files beside it.
        for suffix in ("", "-wal", "-shm"):
            old.with_name(old.name + suffix).unlink(missing_ok=True)
