"""Edited kernel runs off the request path: the page submits a run, then polls for it.

A run takes up to ``runner.TIMEOUT_SECONDS``, and a gunicorn sync worker serves one
request at a time, so a Run click must not wait for it. ``RunQueue.submit`` starts the
run in a thread of the server process and returns at once; the page then asks
``status`` a few times a second, and whichever worker answers reads the same files in
the scratch directory:

- ``jobs/ID.json``: the job's state (``starting``, ``waiting`` for a slot, ``running``, ``done`` or
  ``failed`` with the error), written whole and renamed into place;
- ``jobs/ID.lock``: held (``flock``) by the process running the job for as long as it
  runs. The kernel drops it when that process dies, so a job whose worker was killed
  reads as failed, not as running for ever, and can be submitted again; and a second
  click on the same run, in any worker, joins the job instead of starting another.

The run itself goes to the worker's ``runner.SimulatorPool``, which bounds it and holds
one of the server-wide run slots while it runs.
"""
import errno
import fcntl
import json
import logging
import os
import threading
import time
from dataclasses import asdict, dataclass

from .runner import SOURCE_NAME, RunError, default_pool

_log = logging.getLogger(__name__)
ACTIVE = ("starting", "waiting", "running")


@dataclass(frozen=True)
class JobStatus:
    """Where a run is: ``state`` is one of ``starting``, ``waiting``, ``running``,
    ``done``, ``failed`` or ``unknown``, since the wall-clock time ``since``."""
    state: str
    since: float
    message: str = ""
    line: int = None
    col: int = None
    file: str = SOURCE_NAME
    seconds: float = 0.0

    def error(self):
        """The failure as a ``RunError`` (for its line and column)."""
        return RunError(self.message, self.line, self.col, self.file)


class RunQueue:
    """Background runs on ``pool`` (a ``runner.SimulatorPool``), their state in its
    scratch directory."""

    def __init__(self, pool):
        self.pool = pool

    def _dir(self):
        path = self.pool.scratch_dir() / "jobs"
        path.mkdir(mode=0o700, exist_ok=True)
        return path

    def _write(self, run_id, status):
        final = self._dir() / f"{run_id}.json"
        part = final.with_name(f".{run_id}.{os.getpid()}.{threading.get_ident()}")
        part.write_text(json.dumps(asdict(status)))
        os.replace(part, final)

    def _read(self, run_id):
        try:
            return JobStatus(**json.loads((self._dir() / f"{run_id}.json").read_text()))
        except (OSError, ValueError, TypeError):
            return JobStatus("unknown", time.time())

    def _held(self, run_id):
        """Whether some process holds the job's lock (is running it)."""
        try:
            fd = os.open(self._dir() / f"{run_id}.lock", os.O_RDONLY)
        except FileNotFoundError:
            return False
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            return False
        except BlockingIOError:
            return True
        finally:
            os.close(fd)

    def submit(self, spec):
        """Start running ``spec`` unless it has run or is running; returns its run id
        at once. Raises ``RunError`` when no thread can be started."""
        run_id = spec.run_id()
        if self.pool.run_path(run_id) is not None:
            return run_id
        fd = os.open(self._dir() / f"{run_id}.lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            os.close(fd)
            if exc.errno in (errno.EAGAIN, errno.EACCES):
                return run_id  # running in some worker: the page polls that job
            raise
        try:
            # "waiting" is said only once every slot is found taken (the pool's progress)
            self._write(run_id, JobStatus("starting", time.time()))
            threading.Thread(target=self._work, args=(spec, run_id, fd), daemon=True,
                             name=f"edited run {run_id}").start()
        except BaseException as exc:
            os.close(fd)
            raise RunError(f"could not start the run: {exc}") from None
        return run_id

    def _work(self, spec, run_id, fd):
        try:
            _id, _path, seconds = self.pool.run(
                spec, progress=lambda phase: self._write(run_id, JobStatus(phase, time.time())))
            self._write(run_id, JobStatus("done", time.time(), seconds=seconds))
        except RunError as err:
            self._write(run_id, JobStatus("failed", time.time(), err.message, err.line,
                                          err.col, err.file))
        except Exception as exc:  # noqa: BLE001 - a job thread has no one else to tell
            _log.exception("edited run %s failed", run_id)
            self._write(run_id, JobStatus("failed", time.time(), f"the run failed: {exc}"))
        finally:
            os.close(fd)  # releases the job's lock

    def status(self, run_id):
        """The state of run ``run_id``, as any worker of the server sees it."""
        if self.pool.run_path(run_id) is not None:
            found = self._read(run_id)
            return found if found.state == "done" else JobStatus("done", time.time())
        found = self._read(run_id)
        if found.state in ACTIVE and not self._held(run_id):
            found = self._read(run_id)  # it may have ended between the two reads
            if found.state in ACTIVE and self.pool.run_path(run_id) is None:
                return JobStatus("failed", time.time(), "the server process running this"
                                 " run stopped before it ended; run it again")
        return found


def default_queue():
    """The queue of this process's default pool (a queue keeps no state of its own)."""
    return RunQueue(default_pool())
