"""The trace writer in its own process, so SQLite inserts run beside the simulation.

Writing rows is the largest cost of a fully traced run, and most of it is spent
binding parameters under the GIL, so a writer *thread* cannot overlap it with the
simulation (a Cython event loop never yields the GIL to it either). A writer process
can. ``BackgroundWriter`` has the ``TraceWriter`` methods the simulator uses
(``write_batch``, ``execute``, ``executemany``, ``finalize``, ``close``) and forwards
each call, in order, through a pipe to a process that owns the real ``TraceWriter``.
The pipe holds about one batch, so a slow disk holds the simulation back instead of
filling memory. An error in the writer is raised in the caller at the next call that
waits for an answer (``sync``, ``finalize``, ``close``). The writer ignores Ctrl-C, so
an interrupted run can still be finalized as incomplete.
"""
import multiprocessing
import signal

_CONTEXT = multiprocessing.get_context("spawn")  # no fork of a process holding threads or a GPU model


def _serve(conn, path, options):
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    from .writer import TraceWriter

    try:
        writer = TraceWriter(path, **options)
    except Exception as exc:
        conn.send(("error", exc))
        return
    conn.send(("ok", None))
    error = None
    while True:
        name, args, kwargs, reply = conn.recv()
        if name == "close":
            writer.close()
            conn.send(("error", error) if error else ("ok", None))
            return
        result = None
        if error is None and name != "sync":  # after a failure only drain: report the first
            try:
                result = getattr(writer, name)(*args, **kwargs)
            except Exception as exc:
                error = exc
        if reply:
            conn.send(("error", error) if error else ("ok", result))
            error = None


class BackgroundWriter:
    """``TraceWriter(path, **options)`` run in a child process."""

    def __init__(self, path, **options):
        self._conn, child = _CONTEXT.Pipe()
        self._process = _CONTEXT.Process(target=_serve, args=(child, str(path), options),
                                         name="trace-writer", daemon=True)
        self._process.start()
        child.close()
        self._closed = False
        self._answer()

    def _answer(self):
        try:
            status, value = self._conn.recv()
        except EOFError:
            raise RuntimeError("the trace writer process died") from None
        if status == "error":
            raise value
        return value

    def _call(self, name, *args, reply=False, **kwargs):
        self._conn.send((name, args, kwargs, reply))
        return self._answer() if reply else None

    def write_batch(self, tasks, details, tags, locations, kinds, tag_names):
        """Send one batch (the ``Tracer`` sink interface)."""
        self._call("write_batch", tasks, list(details), tags, list(locations), list(kinds),
                   list(tag_names))

    def execute(self, sql, params=()):
        """Run one statement in the writer (inserts: nothing is returned)."""
        self._call("execute", sql, params)

    def executemany(self, sql, rows):
        """Insert many rows in one transaction."""
        self._call("executemany", sql, list(rows))

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
            self._call("close", reply=True)
        finally:
            self._conn.close()
            self._process.join()
