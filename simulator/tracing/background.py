"""The trace writer in its own process, so SQLite inserts run beside the simulation.

Writing rows is the largest cost of a fully traced run, and most of it is spent
binding parameters under the GIL, so a writer *thread* cannot overlap it with the
simulation (a Cython event loop never yields the GIL to it either). A writer process
can. ``BackgroundWriter`` has the ``TraceWriter`` methods the simulator uses
(``write_open``, ``write_batch``, ``execute``, ``executemany``, ``finalize``, ``close``) and forwards
each call, in order, through a pipe to a process that owns the real ``TraceWriter``.

A batch's task, tag and open-task arrays do not go through the pipe: pickling them and pushing
them through it 64 KB at a time cost the simulating process a third of an untraced
run. They are copied into one of ``SLOTS`` slots of a file both processes map, and
only the slot number and the small lists travel; the writer hands the slot back when
its rows are in the file. With every slot in flight the simulation waits for one, so
a slow disk holds it back instead of filling memory. A batch too large for a slot
goes through the pipe.

An error in the writer is raised in the caller at the next call that waits for an
answer (``sync``, ``finalize``, ``close``). The writer ignores Ctrl-C, so an
interrupted run can still be finalized as incomplete.
"""
import mmap
import multiprocessing
import os
import signal
import tempfile
from pathlib import Path

import numpy as np

_CONTEXT = multiprocessing.get_context("spawn")  # no fork of a process holding threads or a GPU model
SLOTS = 2
# One Tracer batch: 65,536 task rows of 7 columns, as many tag rows of 3 and open-task rows of 5.
SLOT_VALUES = (1 << 16) * 15
_FREE = "free"
# With no call for this long (a kernel executed functionally between two batches), the
# writer writes the pyramid rows it held past their time, for a viewer of the run.
IDLE_SECONDS = 0.5


class _SlotFile:
    """``count`` slots of ``values`` int64 each, in a file mapped by both processes."""

    def __init__(self, path, count, values):
        self.values = values
        with open(path, "r+b") as f:
            self._map = mmap.mmap(f.fileno(), count * values * 8)
        whole = np.frombuffer(self._map, dtype=np.int64)
        self.slots = [whole[k * values:(k + 1) * values] for k in range(count)]

    @classmethod
    def create(cls, count, values):
        """A new slot file in shared memory (``/dev/shm``) where there is room, else in the
        temporary directory; ``(path, file)``."""
        shm = Path("/dev/shm")
        places = [str(shm)] if shm.is_dir() and os.access(shm, os.W_OK) else []
        for directory in places + [None]:
            try:
                path = _reserved_file(directory, count * values * 8)
            except OSError:
                if directory is None:
                    raise
                continue
            try:
                return path, cls(path, count, values)
            except BaseException:
                os.unlink(path)
                raise

    def arrays(self, slot, *shapes):
        """The arrays of these shapes stored one after the other in ``slot`` (views, valid
        until it is reused)."""
        buffer, at, out = self.slots[slot], 0, []
        for shape in shapes:
            size = shape[0] * shape[1]
            out.append(buffer[at:at + size].reshape(shape))
            at += size
        return out

    def close(self):
        """Let go of the map: it is unmapped when the last array viewing it is gone."""
        self.slots = []
        self._map = None


def _reserved_file(directory, size):
    """A new file of ``size`` allocated bytes in ``directory``. Not sparse: in a full tmpfs
    the first touch of a page it cannot back would kill the simulation with SIGBUS."""
    fd, path = tempfile.mkstemp(prefix="gpuscope-batches-", dir=directory)
    try:
        os.posix_fallocate(fd, 0, size)
    except BaseException:
        os.unlink(path)
        raise
    finally:
        os.close(fd)
    return path


def _serve(conn, path, options, slot_file):
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    from .writer import TraceWriter

    try:
        slots = _SlotFile(*slot_file)
        os.unlink(slot_file[0])  # both processes hold it mapped now; nothing to leak
        writer = TraceWriter(path, **options)
    except Exception as exc:
        conn.send(("error", exc))
        return
    conn.send(("ok", None))
    error = None
    while True:
        try:
            name, args, kwargs, reply = (conn.recv() if conn.poll(IDLE_SECONDS)
                                         else ("idle", (), {}, False))
        except (EOFError, ConnectionResetError):
            # The simulation is gone (killed outright): stop here, leaving the rows
            # written so far for `finalize` to recover, and no traceback.
            writer.close()
            return
        if name == "close":
            writer.close()
            slots.close()
            conn.send(("error", error) if error else ("ok", None))
            return
        result = None
        if error is None:  # after a failure only drain: report the first
            try:
                if name == "write_slot":
                    slot, task_shape, tag_shape, open_shape, *lists = args
                    tasks, tags, opened = slots.arrays(slot, task_shape, tag_shape, open_shape)
                    writer.write_open(opened)
                    writer.write_batch(tasks, lists[0], tags, *lists[1:])
                else:
                    result = getattr(writer, name)(*args, **kwargs)
            except Exception as exc:
                error = exc
        try:
            if name == "write_slot":
                conn.send((_FREE, args[0]))
            if reply:
                conn.send(("error", error) if error else ("ok", result))
                error = None
        except (BrokenPipeError, ConnectionResetError):
            writer.close()  # as above: the simulation was killed while this batch went in
            return


class BackgroundWriter:
    """``TraceWriter(path, **options)`` run in a child process."""

    def __init__(self, path, **options):
        slot_path, self._slots = _SlotFile.create(SLOTS, SLOT_VALUES)
        self._slot_path = slot_path
        self._free = list(range(SLOTS))
        self._opened = np.empty((0, 5), dtype=np.int64)
        self._unanswered = 1  # the writer says whether it started
        self._started = False
        self._start_error = None
        self._closed = False
        self._conn, child = _CONTEXT.Pipe()
        self._process = _CONTEXT.Process(target=_serve,
                                         args=(child, str(path), options,
                                               (slot_path, SLOTS, SLOT_VALUES)),
                                         name="trace-writer", daemon=True)
        try:
            self._process.start()
            child.close()
        except BaseException:
            self._conn.close()
            if self._process.pid is not None:
                self._process.join()  # it exits once its end of the pipe is closed
            self._slots.close()
            os.unlink(slot_path)
            raise

    def _wait_started(self):
        """Take the writer's word that it started, raising its error if it could not.
        Not waited for at once: the process starts (a second interpreter, its imports, the
        new file) beside the run's own start, the functional execution of its kernels."""
        if self._started:
            return
        self._started = True
        try:
            self._answer()
        except Exception as exc:  # not an interrupt: the writer will not map the slots now
            Path(self._slot_path).unlink(missing_ok=True)
            self._start_error = exc
            raise

    def _receive(self):
        try:
            return self._conn.recv()
        except EOFError:
            raise RuntimeError("the trace writer process died") from None

    def _take_message(self):
        """Read one message from the writer: take a slot back (None), or count a reply
        down; the reply ``(status, value)`` when it answers the latest call, None when it
        answers one an interrupt abandoned (a second Ctrl-C)."""
        status, value = self._receive()
        if status == _FREE:
            self._free.append(value)
            return None
        if not self._unanswered:  # replies only come to calls that wait for them
            raise RuntimeError(f"the trace writer answered {status!r} out of turn")
        self._unanswered -= 1
        return None if self._unanswered else (status, value)

    def _answer(self):
        """The reply to the last call, taking back the slots handed back before it."""
        message = None
        while message is None:
            message = self._take_message()
        status, value = message
        if status == "error":
            raise value
        return value

    def _free_slot(self):
        self._wait_started()
        while not self._free:  # every slot in flight: wait for the writer to hand one back
            self._take_message()  # no call waits now: any reply is an abandoned one's
        return self._free.pop(0)

    def _call(self, name, *args, reply=False, **kwargs):
        self._wait_started()
        try:
            self._conn.send((name, args, kwargs, reply))
        except OSError:  # a broken pipe: the process is gone
            raise RuntimeError("the trace writer process died") from None
        if not reply:
            return None
        self._unanswered += 1
        return self._answer()

    def write_open(self, rows):
        """Tasks still open at the tracer's flush: sent with the batch that follows."""
        self._opened = np.asarray(rows, dtype=np.int64).reshape(-1, 5)

    def write_batch(self, tasks, details, tags, locations, kinds, tag_names):
        """Send one batch (the ``Tracer`` sink interface)."""
        lists = (list(details), list(locations), list(kinds), list(tag_names))
        tasks = np.asarray(tasks, dtype=np.int64)
        tags = np.asarray(tags, dtype=np.int64)
        opened, self._opened = self._opened, np.empty((0, 5), dtype=np.int64)
        if (tasks.ndim != 2 or tags.ndim != 2
                or tasks.size + tags.size + opened.size > self._slots.values):
            self._call("write_open", opened)
            self._call("write_batch", tasks, lists[0], tags, *lists[1:])
            return
        slot = self._free_slot()
        for stored, given in zip(self._slots.arrays(slot, tasks.shape, tags.shape, opened.shape),
                                 (tasks, tags, opened)):
            stored[...] = given
        self._call("write_slot", slot, tasks.shape, tags.shape, opened.shape, *lists)

    def execute(self, sql, params=()):
        """Run one statement in the writer (inserts: nothing is returned)."""
        self._call("execute", sql, params)

    def executemany(self, sql, rows):
        """Insert many rows (tuples, or an int64 matrix: sent whole) in one transaction."""
        self._call("executemany", sql, rows if isinstance(rows, np.ndarray) else list(rows))

    def sync(self):
        """Wait until every call sent so far has run; raise the writer's error, if any."""
        self._call("sync", reply=True)

    def finalize(self, **options):
        """Finalize the trace (indexes, metric pyramid, run row) and wait for it."""
        return self._call("finalize", reply=True, **options)

    def close(self):
        """Close the file and stop the process; raise the writer's error, if any."""
        if self._closed:
            return
        self._closed = True
        try:
            self._wait_started()
            if self._start_error is None:
                self._call("close", reply=True)
        finally:
            self._conn.close()
            self._process.join()
            self._slots.close()
