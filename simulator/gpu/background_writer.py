"""A trace writer on its own thread, so SQLite inserts overlap the simulation.

Writing rows is the largest cost of a fully traced run. ``sqlite3`` releases the GIL
while SQLite works, so a writer thread turns most of that cost into parallel time.
``BackgroundWriter`` has the ``TraceWriter`` methods the simulator uses
(``write_batch``, ``execute``, ``executemany``, ``finalize``, ``close``); each call is
queued, in order, to a thread that owns the real ``TraceWriter`` (an SQLite
connection belongs to the thread that opened it). The queue is bounded, so a slow disk
holds the simulation back instead of filling memory. An error in the thread is raised
again in the caller at its next call.
"""
import queue
import threading

from ..tracing import TraceWriter

_STOP = object()


class BackgroundWriter:
    """``TraceWriter(path, **options)`` run on a dedicated thread."""

    def __init__(self, path, *, depth=4, **options):
        self._calls = queue.Queue(maxsize=depth)
        self._error = None
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._serve, args=(path, options),
                                        name="trace-writer", daemon=True)
        self._thread.start()
        self._ready.wait()
        self._raise_pending()

    def _serve(self, path, options):
        try:
            writer = TraceWriter(path, **options)
        except BaseException as exc:  # reported to the caller by __init__
            self._error = exc
            self._ready.set()
            return
        self._ready.set()
        while True:
            item = self._calls.get()
            if item is _STOP:
                break
            name, args, kwargs, done, result = item
            try:
                if self._error is None and name != "sync_point":
                    # after a failure only drain: the caller sees the first error
                    result.append(getattr(writer, name)(*args, **kwargs))
            except BaseException as exc:
                self._error = exc
            finally:
                if done is not None:
                    done.set()
        writer.close()

    def _raise_pending(self):
        if self._error is not None:
            error, self._error = self._error, None
            raise error

    def _call(self, name, *args, wait=False, **kwargs):
        self._raise_pending()
        done = threading.Event() if wait else None
        result = []
        self._calls.put((name, args, kwargs, done, result))
        if done is not None:
            done.wait()
            self._raise_pending()
            return result[0] if result else None
        return None

    def write_batch(self, tasks, details, tags, locations, kinds, tag_names):
        """Queue one batch (the ``Tracer`` sink interface)."""
        self._call("write_batch", tasks, list(details), tags, list(locations), list(kinds),
                   list(tag_names))

    def execute(self, sql, params=()):
        """Queue one statement (results are not returned: inserts only)."""
        self._call("execute", sql, params)

    def executemany(self, sql, rows):
        """Queue many rows in one transaction."""
        self._call("executemany", sql, list(rows))

    def sync(self):
        """Wait until every queued call has run."""
        self._call("sync_point", wait=True)

    def finalize(self, **options):
        """Finalize the trace and wait for it to be done."""
        return self._call("finalize", wait=True, **options)

    def close(self):
        """Stop the thread once every queued call has run; re-raise its error, if any."""
        if self._thread.is_alive():
            self._calls.put(_STOP)
            self._thread.join()
        self._raise_pending()
