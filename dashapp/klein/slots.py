"""A limit on edited runs at once shared by every process of a server (gunicorn -w N).

A semaphore across processes that cannot leak: slot ``i`` is an exclusive ``flock`` on
a lock file, and the kernel releases a lock when the file is closed, which includes the
death of its holder (a ``kill -9``d worker frees its slot at once).
"""
import errno
import fcntl
import os
import time
from contextlib import contextmanager
from pathlib import Path


class SlotsBusy(RuntimeError):
    """Every slot stayed taken for as long as the caller would wait."""


class Slots:
    """At most ``count`` holders at once among every process that uses ``directory``:
    slot ``i`` is held by an exclusive ``flock`` on ``directory/slot-i.lock``. The kernel
    releases a lock when its holder's file is closed, so a killed process frees its slot."""

    def __init__(self, directory, count):
        self.directory = Path(directory)
        self.count = count

    def _try(self):
        self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        for i in range(self.count):
            fd = os.open(self.directory / f"slot-{i}.lock", os.O_RDWR | os.O_CREAT, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return fd
            except OSError as exc:
                os.close(fd)
                if exc.errno not in (errno.EAGAIN, errno.EACCES):
                    raise
        return None

    def busy(self):
        """How many slots are held now."""
        fd = None
        held = 0
        for i in range(self.count):
            try:
                fd = os.open(self.directory / f"slot-{i}.lock", os.O_RDONLY)
            except FileNotFoundError:
                continue
            try:
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            except BlockingIOError:
                held += 1
            finally:
                os.close(fd)
        return held

    @contextmanager
    def hold(self, wait_seconds, waiting=None):
        """Hold a slot for the ``with`` block, waiting up to ``wait_seconds`` for one
        (calling ``waiting()`` once if it has to wait); raises ``SlotsBusy`` when none
        comes free."""
        deadline = time.monotonic() + wait_seconds
        fd = self._try()
        if fd is None and waiting is not None:
            waiting()
        while fd is None:
            if time.monotonic() > deadline:
                raise SlotsBusy(f"the server is busy with {self.count} other runs; try again"
                               " in a moment")
            time.sleep(0.2)
            fd = self._try()
        try:
            yield
        finally:
            os.close(fd)  # closing the file releases the lock
