"""Edit and run: the kernel page re-runs an edited kernel in a bounded child process.

The app never imports the simulator (data flows simulator → trace file → app), so an
edited kernel is run as ``python -m simulator run-kernel`` in a child process that writes
a trace into a scratch directory. Starting Python and importing the simulator takes
about as long as a whole run at these sizes (~0.3 s), so each server process (each
gunicorn worker) has a ``SimulatorPool`` that keeps one *spare*: a
``python -m simulator standby`` child started ahead of time, imported and waiting for
one command line on stdin. A run hands its command line to the spare (or, when the
spare has died or the simulator's files changed since it started, to a fresh one), and
the next spare starts at once. A spare serves exactly one run and exits, so nothing of
one run can leak into the next.

The child is bounded so a bad kernel cannot take the server down: a wall-clock timeout
(its whole process group is killed), a CPU-time limit and an address-space limit
(``prlimit`` on the child when the run is handed over; the CPU limit counts from the CPU
time the child has already spent importing), and ``RUNS_AT_ONCE`` runs at a time across
every process sharing the scratch directory (``slots.Slots``). Runs die with the server:
the pool stops its children when the process exits, and a child stops itself when its
stdin, held open by the server process for the whole run, reaches its end, which is what
happens when that process is killed (``kill -9`` of a gunicorn worker included). A kernel error
comes back as ``RunError`` with the line and column the simulator reported
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

from .slots import Slots, SlotsBusy

TIMEOUT_SECONDS = 30.0
CPU_SECONDS = 60
MEMORY_BYTES = 3 << 30
MAX_WORK_ITEMS = 1 << 16
"""Largest NDRange the page offers: edit-and-run is for small, fast sizes."""
MAX_SOURCE_BYTES = 256 << 10
"""Largest kernel source accepted for a run (UTF-8 bytes): kernels are a page or two."""
MAX_OPTIONS_CHARS = 4096
"""Longest build-options string a run takes (clBuildProgram's are a line or two)."""
RUNS_AT_ONCE = 2
"""Edited runs at once across every worker of a server (each may use a core and GBs)."""
QUEUE_SECONDS = 2 * TIMEOUT_SECONDS
"""How long a run waits for a free slot: long enough for the runs ahead to end."""
KEEP = 16
GPUS = ("r9nano", "mi100", "mi250x", "mi300a", "mi300x")
"""The GPU presets a run may simulate (``--gpu``), the default first: the simulator's
``gpu.presets.PRESETS``, named here because the app never imports the simulator (a test
holds the two equal)."""
SOURCE_NAME = "kernel.cl"
TRACE_NAME = "trace.sqlite"
RUN_ID = re.compile(r"^[0-9a-f]{16}$")
_LOCATED = re.compile(r"^(?P<file>[^:\n]+):(?P<line>\d+):(?P<col>\d+): (?P<reason>.+)$", re.M)
_log = logging.getLogger(__name__)


class RunError(Exception):
    """Why a run failed: a message for the page, with the file (the edited kernel, or a
    header named relative to its include folder), line and column if known."""

    def __init__(self, message, line=None, col=None, file=SOURCE_NAME):
        super().__init__(message, line, col, file)
        self.message, self.line, self.col, self.file = message, line, col, file

    def __str__(self):
        where = f"{self.file}:{self.line}:{self.col}: " if self.line is not None else ""
        return where + self.message

    @property
    def in_kernel(self):
        """Whether it is located in the edited kernel itself (so its line can be shown)."""
        return self.line is not None and self.file == SOURCE_NAME


@dataclass(frozen=True)
class Settings:
    """What a server lets visitors do with kernels: run edited ones at all (``edit``),
    and which folders (absolute paths) their ``#include`` may read besides the run's
    own. ``python -m dashapp --no-edit --kernel-include DIR``; under gunicorn,
    ``GPUSCOPE_NO_EDIT=1`` and ``GPUSCOPE_KERNEL_INCLUDE=DIR[:DIR...]``."""
    edit: bool = True
    include_dirs: tuple = ()

    @classmethod
    def create(cls, edit=True, include_dirs=()):
        """Settings with each include folder made absolute (a run's working directory is
        its own folder); raises ``ValueError`` for one that is not a directory."""
        dirs = []
        for directory in include_dirs:
            path = Path(directory).expanduser()
            if not path.is_dir():
                raise ValueError(f"kernel include folder {directory}: not a directory")
            dirs.append(str(path.resolve()))
        return cls(bool(edit), tuple(dirs))

    @classmethod
    def from_environment(cls, environ=os.environ):
        """The settings gunicorn's ``server`` takes from the environment."""
        no_edit = environ.get("GPUSCOPE_NO_EDIT", "").strip().lower() not in ("", "0", "false", "no")
        dirs = [d for d in environ.get("GPUSCOPE_KERNEL_INCLUDE", "").split(os.pathsep) if d]
        try:
            return cls.create(edit=not no_edit, include_dirs=dirs)
        except ValueError as exc:
            raise SystemExit(f"GPUSCOPE_KERNEL_INCLUDE: {exc}") from None


@dataclass(frozen=True)
class RunSpec:
    """Everything that defines a run: source, kernel name, sizes, ``--arg`` values, the
    build options (clBuildProgram's string: ``-D``/``-U``/``-I``), the server's
    include folders (``Settings.include_dirs``), the only ones besides its own that the
    run's ``#include`` and ``-I`` may reach, and the GPU preset it simulates (one of
    ``GPUS``; empty for the simulator's default)."""
    source: str
    kernel: str
    global_size: tuple
    local_size: tuple
    args: tuple
    options: str = ""
    include_dirs: tuple = ()
    gpu: str = ""

    def run_id(self):
        parts = [self.source, self.kernel, list(self.global_size), list(self.local_size),
                 list(self.args), simulator_digest()]
        if self.options or self.include_dirs:
            parts.append(self.options)
        if self.include_dirs:
            parts.append(list(self.include_dirs))
        if self.gpu:
            parts.append({"gpu": self.gpu})
        return hashlib.sha256(json.dumps(parts).encode()).hexdigest()[:16]


def simulator_digest():
    """A digest of the simulator's files (code, kernels, the trace schema), read as text
    (a few ms): a run cached by an older simulator or trace contract is never shown as
    current, and a spare started before the files changed is not used."""
    root = Path(__file__).resolve().parents[2] / "simulator"
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


def default_scratch_dir():
    """``$GPUSCOPE_RUN_DIR``, or one directory per user in the temp directory: shared by
    every worker of a server (gunicorn -w 4), so that a run made by one worker can be
    shown by another; runs are named by content, so sharing is safe. A directory that
    belongs to another user is never used (a private one is made)."""
    path = Path(os.environ.get("GPUSCOPE_RUN_DIR")
                or Path(tempfile.gettempdir()) / f"gpuscope-runs-{os.getuid()}")
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    if path.stat().st_uid != os.getuid():
        path = Path(tempfile.mkdtemp(prefix="gpuscope-runs-"))
    return path


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


def _command(spec):
    """The run's command line, run in its own folder: the kernel and its trace are named
    relative to it, so neither a message nor the trace names a server path, and its
    ``#include`` is confined to that folder and the server's include folders."""
    cmd = ["run-kernel", SOURCE_NAME, "--kernel", spec.kernel,
           "--global", size_text(spec.global_size), "--local", size_text(spec.local_size),
           "--trace-level", "kernel", "--no-progress", "-o", TRACE_NAME, "--confine-includes"]
    for directory in spec.include_dirs:
        cmd.append(f"--allow-include={directory}")
    for name, value in spec.args:
        cmd += ["--arg", f"{name}={value}"]
    if spec.options.strip():
        cmd.append(f"--build-options={spec.options}")
    if spec.gpu:
        cmd += ["--gpu", spec.gpu]
    return cmd


def _error_from(stderr, returncode):
    found = list(_LOCATED.finditer(stderr))
    if found:
        last = found[-1]
        return RunError(last["reason"].strip(), int(last["line"]), int(last["col"]), last["file"])
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


@dataclass
class _Child:
    """A started ``python -m simulator standby`` child, what it was started from, and the
    unnamed file its stderr goes to (a pipe nobody reads before "ready" could fill and
    stall it)."""
    proc: subprocess.Popen
    digest: str
    owner: int
    errors: object


class SimulatorPool:
    """The simulator children of one server process: at most one spare waiting, and the
    runs in progress. ``command`` replaces the standby command line (tests give a child
    that misbehaves); ``scratch`` the scratch directory (default ``default_scratch_dir``).
    """

    def __init__(self, scratch=None, command=None, runs_at_once=RUNS_AT_ONCE):
        self._scratch_given = Path(scratch) if scratch is not None else None
        self._scratch = None
        self.command = command
        self.runs_at_once = runs_at_once
        self.owner = os.getpid()
        self._spare = None
        self._children = []
        self._closing = False
        self._lock = threading.RLock()  # held while a child is started or discarded
        atexit.register(self.close)

    # -- the scratch directory ------------------------------------------------------
    def scratch_dir(self):
        """The directory of edited runs (made again if a temp cleaner removed it)."""
        with self._lock:
            if self._scratch is None or not self._scratch.is_dir():
                if self._scratch_given is not None:
                    self._scratch_given.mkdir(mode=0o700, parents=True, exist_ok=True)
                    self._scratch = self._scratch_given
                else:
                    self._scratch = default_scratch_dir()
            return self._scratch

    def slots(self):
        """The run slots shared by every process using this scratch directory."""
        return Slots(self.scratch_dir() / "slots", self.runs_at_once)

    def run_path(self, run_id):
        """The trace of an earlier run, or None for an unknown or malformed id."""
        if not isinstance(run_id, str) or not RUN_ID.match(run_id):
            return None
        path = self.scratch_dir() / f"{run_id}.sqlite"
        return path if path.is_file() else None

    # -- children -------------------------------------------------------------------
    @property
    def spare(self):
        """The waiting spare, or None."""
        return self._spare

    @property
    def children(self):
        """Every child started and not yet reaped, waiting or running."""
        with self._lock:
            return list(self._children)

    def _start(self, digest):
        """A new child, tracked until it is reaped. Called with ``_lock`` held."""
        if self._closing:
            raise RunError("the server is shutting down")
        env = dict(os.environ)
        # The simulator package sits beside dashapp, in a checkout and when installed.
        package_root = str(Path(__file__).resolve().parents[2])
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [package_root, env.get("PYTHONPATH")]))
        # numpy's BLAS reserves memory per thread, which counts against RLIMIT_AS.
        env.setdefault("OPENBLAS_NUM_THREADS", "1")
        errors = tempfile.TemporaryFile()
        try:
            # Its own session, so a timeout kills whatever the run started too.
            proc = subprocess.Popen(
                self.command or [sys.executable, "-m", "simulator", "standby"],
                cwd=self.scratch_dir(), env=env, stdin=subprocess.PIPE,
                stdout=subprocess.PIPE, stderr=errors, start_new_session=True)
        except BaseException:
            errors.close()
            raise
        child = _Child(proc, digest, os.getpid(), errors)
        self._children.append(child)
        return child

    def _forget(self, child):
        for pipe in (child.proc.stdin, child.proc.stdout):
            try:
                pipe.close()
            except OSError:  # a broken pipe's last write
                pass
        child.errors.close()
        with self._lock:
            if child in self._children:
                self._children.remove(child)

    def _reaped(self, child):
        """What ``child`` wrote on stderr, once it has exited and been waited for."""
        try:
            child.errors.seek(0)
            text = child.errors.read().decode(errors="replace")
        except ValueError:  # closed: the server stopped the child while it ran
            text = ""
        self._forget(child)
        return text

    @staticmethod
    def _kill(child):
        """Kill ``child`` (and whatever it started) and wait for it. Safe while another
        thread reads it: the process is only killed and waited for."""
        if child.owner != os.getpid():
            return  # inherited through fork (gunicorn --preload): the parent's to reap
        try:
            os.killpg(child.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        child.proc.wait()

    def _discard(self, child):
        self._kill(child)
        if child.owner == os.getpid():
            self._forget(child)

    def _take_spare(self):
        """The waiting spare if it is usable, else a fresh one; a new spare starts either way."""
        digest = simulator_digest()
        with self._lock:
            spare, self._spare = self._spare, None
            if spare is not None and (spare.owner != os.getpid() or spare.digest != digest
                                      or spare.proc.poll() is not None):
                self._discard(spare)
                spare = None
            if spare is None:
                spare = self._start(digest)
            try:
                # The next run's spare imports while this run runs (the thread only waits).
                self._spare = self._start(digest)
            except (OSError, RunError):
                pass  # this run has its child; the next one starts its own
        return spare

    def _fresh_child(self):
        with self._lock:
            return self._start(simulator_digest())

    def prepare(self):
        """Start this process's spare if none is waiting (the kernel page calls this, so
        that its first Run does not wait for one either). Best effort: viewing needs no
        spare, and a Run that finds none starts a child and reports what went wrong."""
        with self._lock:
            if self._spare is None:
                try:
                    self._spare = self._start(simulator_digest())
                except (OSError, RunError) as exc:
                    _log.warning("could not start a spare simulator: %s", exc)

    def close(self):
        """Stop and reap every child of this process, waiting or in the middle of a run,
        and start no more: the server's threads do not outlive it, so no one else would.
        A run in progress then fails with "the server is shutting down"."""
        with self._lock:
            self._closing = True
            children = [c for c in self._children if c.owner == os.getpid()]
            spare, self._spare = self._spare, None
        for child in children:
            self._kill(child)
        if spare is not None and spare.owner == os.getpid():
            self._forget(spare)

    # -- a run ------------------------------------------------------------------------
    def run(self, spec, timeout=TIMEOUT_SECONDS, progress=None):
        """Run ``spec`` and return (run id, trace path, seconds); raises ``RunError``.

        ``progress(phase)`` is told ``"waiting"`` when every run slot is taken and
        ``"running"`` when the run starts.
        """
        run_id = spec.run_id()
        done = self.run_path(run_id)
        if done is not None:
            return run_id, done, 0.0
        if len(spec.source.encode(errors="replace")) > MAX_SOURCE_BYTES:
            raise RunError(f"the kernel source is larger than {MAX_SOURCE_BYTES >> 10} KB")
        if len(spec.options) > MAX_OPTIONS_CHARS:
            raise RunError(f"the build options are longer than {MAX_OPTIONS_CHARS} characters")
        if spec.gpu and spec.gpu not in GPUS:
            raise RunError(f"unknown GPU {spec.gpu!r}: the presets are {', '.join(GPUS)}")
        report = progress or (lambda _phase: None)
        try:
            with self.slots().hold(QUEUE_SECONDS, lambda: report("waiting")):
                report("running")
                return self._run_child(spec, run_id, timeout)
        except SlotsBusy as exc:
            raise RunError(str(exc)) from None
        except RunError:
            raise
        except Exception as exc:  # no process, no file descriptor, no scratch space...
            _log.exception("edited run %s could not be run", run_id)
            raise RunError(f"could not run the simulator: {exc}") from None

    def _run_child(self, spec, run_id, timeout):
        root = self.scratch_dir()
        work = Path(tempfile.mkdtemp(prefix=f"{run_id}-", dir=root))
        # The page's text is Unicode (a file's byte that was not UTF-8 came to it as the
        # character the trace shows): written as UTF-8, whatever the server's locale.
        (work / SOURCE_NAME).write_text(spec.source, encoding="utf-8", errors="replace")
        # Written inside the run's own directory, so whatever a killed run leaves behind
        # goes with it; only a finished trace is moved to its final name.
        trace = work / TRACE_NAME
        out_path = root / f"{run_id}.sqlite"
        job = (json.dumps({"argv": _command(spec), "cwd": str(work), "tied": True})
               + "\n").encode()
        start = time.perf_counter()
        deadline = time.monotonic() + timeout
        try:
            returncode, err, took = self._hand_over(self._take_spare(), job, deadline)
            if not took:
                # The spare died before it took the job: a fresh child, once (if that one
                # dies too, say, the simulator fails to import, its stderr says why).
                returncode, err, took = self._hand_over(self._fresh_child(), job, deadline)
        except subprocess.TimeoutExpired:
            raise RunError(f"the run took longer than {timeout:g} s and was stopped") from None
        else:
            if returncode == 0 and trace.is_file():
                os.replace(trace, out_path)
        finally:
            shutil.rmtree(work, ignore_errors=True)
        seconds = time.perf_counter() - start
        if self._closing:
            raise RunError("the server is shutting down")
        if returncode != 0 or not out_path.is_file():
            raise _error_from(err, returncode)
        _prune(root)
        return run_id, out_path, seconds

    def _hand_over(self, child, job, deadline):
        """Run ``job`` on ``child``: (returncode, stderr text, whether it took the job); a
        child that died first says why on stderr. Raises ``subprocess.TimeoutExpired`` at
        ``deadline``, after killing the child's process group."""
        proc = child.proc
        took = False
        try:
            if _ready(proc, deadline):
                bound(proc.pid)
                # stdin stays open until the run ends: the child stops itself at its end
                # of input, which comes early only if this process dies.
                proc.stdin.write(job)
                proc.stdin.flush()
                took = True
            _wait(proc, deadline)
        except (ProcessLookupError, BrokenPipeError):
            _wait(proc, deadline)  # it died before taking the job: its stderr says why
        except BaseException:
            # A timeout, or anything else: the child never outlives its run unreaped.
            self._discard(child)
            raise
        return proc.returncode, self._reaped(child), took


def _ready(proc, deadline):
    """True once ``proc`` says it is ready, False if it exited first; raises
    ``subprocess.TimeoutExpired`` at ``deadline``."""
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            raise subprocess.TimeoutExpired(proc.args, 0)
        if select.select([proc.stdout], [], [], left)[0]:
            return proc.stdout.readline() == b"ready\n"


def _wait(proc, deadline):
    """Wait for ``proc`` to exit, reading (and dropping) its stdout so it never stalls on
    a full pipe; raises ``subprocess.TimeoutExpired`` at ``deadline``."""
    fd = proc.stdout.fileno()
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            raise subprocess.TimeoutExpired(proc.args, 0)
        try:
            readable = select.select([fd], [], [], left)[0]
            if readable and not os.read(fd, 1 << 16):
                break  # end of output: it has exited (or closed stdout, so exits soon)
        except (OSError, ValueError):  # closed by the server's exit, which kills it
            break
    proc.wait(timeout=max(0.0, deadline - time.monotonic()))


_pools = {}
_pools_lock = threading.Lock()


def default_pool():
    """This process's pool over the default scratch directory (one per process: a
    gunicorn worker forked from a parent that had one makes its own)."""
    with _pools_lock:
        pool = _pools.get(os.getpid())
        if pool is None:
            pool = _pools[os.getpid()] = SimulatorPool()
        return pool


def _mtime(path):
    try:
        return path.stat().st_mtime
    except FileNotFoundError:  # another worker pruned it meanwhile
        return 0.0


_WORK_DIR = re.compile(r"^[0-9a-f]{16}-[A-Za-z0-9_]+$")  # tempfile.mkdtemp(prefix=f"{run_id}-")


def _prune(root):
    """Keep the newest ``KEEP`` runs, and drop the work directories of runs a killed
    server left behind (no run lasts twice its timeout). Only names the app gives its
    own files are touched (traces named by a run id, work directories named after one):
    ``$GPUSCOPE_RUN_DIR`` may hold anything else of the user's."""
    runs = sorted((p for p in root.glob("*.sqlite") if RUN_ID.match(p.stem) and p.is_file()),
                  key=_mtime, reverse=True)
    for stale in root.iterdir():
        if (_WORK_DIR.match(stale.name) and stale.is_dir() and not stale.is_symlink()
                and time.time() - _mtime(stale) > 2 * TIMEOUT_SECONDS):
            shutil.rmtree(stale, ignore_errors=True)
    for old in runs[KEEP:]:
        # A trace the page has read may have SQLite's -wal/-shm files beside it.
        for suffix in ("", "-wal", "-shm"):
            old.with_name(old.name + suffix).unlink(missing_ok=True)
