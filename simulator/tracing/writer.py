"""The trace file: batched SQLite writing, with the indexes and metric pyramid kept as it grows.

A ``TraceWriter`` creates a fresh file from ``sqlite_schema.sql`` (tables only). Task
rows arrive in large batches, one transaction each, with integer keys and interned
strings. The run row is written first with ``completed = 0``; a crash therefore leaves
a readable file that says it is incomplete.

A ``watchable`` file (the default: the tracing API's own use, and what ``run``,
``run-kernel`` and ``synth`` write as the hidden sibling of their output) is in WAL
mode from the start, so the app can show a run while it is written: its readers
never block the writer's commits, and a killed writer leaves the file readable. WAL
costs the load about 3 % of the writer's time and a PageRank run about 2 % (every page
is framed into the log and copied back at a checkpoint; ``benchmarks/watch.py``
measures both against a rollback journal). An import, which nobody watches, loads with
a rollback journal (``watchable=False``). Finalize leaves WAL
(``journal_mode=DELETE``) before it builds anything, so the indexes are not written
twice, and every finished trace has a rollback journal: a reader of a WAL file must be
able to create its ``-shm`` beside it, so a finalized trace in a directory the reader
may not write (a shared data set, a read-only volume) could not be opened.

The metric pyramid is built batch by batch (``pyramid_build.LivePyramid``, on a thread
of its own while the batch's rows go in), so ``finalize`` only builds the task indexes
(SQLite's sort after the load is four times cheaper than keeping them up to date row by
row, measured; the kernel records' grow at their end, see the schema), writes the bins
still in flight and the per-location statistics, and records the end of the run. An
importer writes its tasks through ``write_imported`` and feeds the pyramid itself
(``feed_pyramid``). A trace whose tasks did not all reach the pyramid (a reopened file,
an import in an order that held too much in flight) is rebuilt from its task table in
bounded memory.

What the writer holds is bounded by the model, not by the trace: SQLite's page caches
are small (``CACHE_KIB``, ``bulk.INSERT_CACHE_KIB``), its sorter spills to a temporary
file, not to RAM, the pyramid builder keeps bins in flight and a capped list of
long-task candidates per location, and freed batches leave the process (``heap``).
README, Trace sizes, has the peaks measured from 1M to 100M tasks.
"""
from __future__ import annotations

import contextlib
import datetime as _dt
import json
import os
import sqlite3
import time
from collections.abc import Iterable, Iterator, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from .. import __version__, build
from . import heap, pyramid_build
from .bulk import INSERT_IMPORTED_TASKS, INSERT_TAGS, INSERT_TASKS

_bulk = build.module("simulator.tracing._bulk")
BulkInserter = _bulk.BulkInserter
BulkConnection = _bulk.Connection
"""A connection of SQLite's C API (``BulkConnection(path, readonly=True)`` for readers)."""


def read_ints(conn, sql: str, params: Sequence[int]) -> np.ndarray:
    """Every row of ``sql`` (integer columns, none NULL) on a ``BulkConnection``, as an
    int64 matrix read in C loops, without a Python object per value."""
    return pyramid_build.read_all(conn, sql, tuple(params))[0]


INDEX_MARKER = "-- INDEXES"
CACHE_KIB = 2048  # SQLite's page cache (and sorter memory) of the writer's connection
# The bulk connection's: the pages its inserters append to, the right edge of each table
# and of each (location, level) of the metric pyramid (it had one such cache per inserter).
BULK_CACHE_KIB = 4 * 2048
LEAVE_WAL_WAIT_MS = 10_000
LEAVE_WAL_RETRY_S = 0.005
SORTER_THREADS = min(4, os.cpu_count() or 1)


class TraceError(Exception):
    """A trace file cannot be read or written; the message says where and why."""


class TraceDamaged(TraceError):
    """SQLite found the file damaged (``integrity.py`` says how it checks)."""


def schema_text() -> str:
    """The full text of ``sqlite_schema.sql``, the contract shared with the app."""
    packaged = resources.files("simulator.tracing").joinpath("sqlite_schema.sql")
    if packaged.is_file():
        return packaged.read_text()
    return (Path(__file__).resolve().parents[2] / "sqlite_schema.sql").read_text()


def schema_parts() -> tuple[str, str]:
    """(tables, indexes): the schema up to the marker, run when a file is created (the
    tables, and the indexes kept as rows go in), and every index, run at finalize (those
    after the marker are built then; the others are there already, except in a file an
    older version began)."""
    tables, _, rest = schema_text().partition(INDEX_MARKER)
    kept = [line for line in tables.splitlines() if line.startswith("CREATE INDEX")]
    return tables, "\n".join(kept) + "\n" + rest.partition("\n")[2]


def _utc_now() -> str:
    """Wall-clock start of the run, or ``SOURCE_DATE_EPOCH`` for reproducible files."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    when = (_dt.datetime.fromtimestamp(int(epoch), _dt.timezone.utc) if epoch
            else _dt.datetime.now(_dt.timezone.utc))
    return when.isoformat(timespec="seconds")


def _wall_seconds(started: float) -> float:
    """Wall-clock duration since ``started``; 0 under ``SOURCE_DATE_EPOCH`` (byte-identical runs)."""
    return 0.0 if os.environ.get("SOURCE_DATE_EPOCH") else time.perf_counter() - started


def _connect(path):
    """The writer's own connection to ``path`` (in a process whose large blocks are
    unmapped when freed: ``heap``)."""
    heap.map_large_blocks()
    db = sqlite3.connect(str(path), isolation_level=None)
    # No fsync: a crashed simulator loses at most its last batch (committed ones are in
    # the file or the WAL); only an OS crash or power loss could damage the file, which
    # for a re-runnable trace is worth the speed.
    db.execute("PRAGMA synchronous=OFF")
    db.execute(f"PRAGMA cache_size=-{CACHE_KIB}")
    return db


class TraceWriter:
    """Writes one run into a new SQLite trace file at ``path``.

    An existing file at ``path`` is replaced. ``config`` is stored as JSON.
    ``watchable`` writes it in WAL mode, for viewers while it grows (see above).
    """

    def __init__(self, path: str | os.PathLike, *, command: str | None,
                 config: dict[str, Any] | None = None, workload: str | None = None,
                 seed: int | None = None, source: str = "simulator",
                 watchable: bool = True, note: str | None = None) -> None:
        self.path = Path(path)
        self._wall_start = time.perf_counter()
        for suffix in ("", "-wal", "-shm"):
            extra = Path(str(self.path) + suffix)
            if extra.exists():
                extra.unlink()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.db = _connect(self.path)
        if watchable:
            self.db.execute("PRAGMA journal_mode=WAL")
        tables, _ = schema_parts()
        self.db.executescript(tables)
        self.db.execute(
            "INSERT INTO run (id, simulator_version, command, workload, config, seed, source,"
            " wall_start, metadata) VALUES (1, ?, ?, ?, ?, ?, ?, ?, ?)",
            (__version__, command, workload, json.dumps(config or {}, sort_keys=True), seed,
             source, _utc_now(), None if note is None else json.dumps({"note": note})),
        )
        self.tasks_written = 0
        # Through write_batch and write_imported: tasks, largest key, largest parent key,
        # earliest start, latest end.
        self._keys = _no_keys()
        # Task, tag and pyramid rows are bound in bulk, all through one connection of
        # the C API: a connection's page cache is dropped whenever another one commits,
        # so inserters of their own would each read back the pages they append to at
        # every batch (measured: the task and tag inserts of 1.3M tasks 1.36 -> 1.14 s).
        self._conn = BulkConnection(self.path, cache_kib=BULK_CACHE_KIB)
        self._bulk = BulkInserter(self._conn, INSERT_TASKS, null_if_negative=1)
        self._bulk_tags = BulkInserter(self._conn, INSERT_TAGS)
        self._bulk_imported = None  # made by the first ``write_imported``
        self._live = self._new_live_pyramid()
        self._kinds = []  # declared for write_imported
        if self._live is not None:  # its bins go into the file as the run goes: say how wide
            self.db.execute("UPDATE run SET pyramid_base_ps = ? WHERE id = 1",
                            (pyramid_build.BASE_PS,))

    @classmethod
    def reopen(cls, path: str | os.PathLike) -> TraceWriter:
        """Open an existing trace to finalize it again (after a crash, say)."""
        path = Path(path)
        if not path.is_file():
            raise TraceError(f"{path}: no such file")
        self = cls.__new__(cls)
        self.path = path
        self._wall_start = time.perf_counter()
        self.db = _connect(path)
        # A killed run's writer process may still be closing the file for a moment.
        self.db.execute(f"PRAGMA busy_timeout={LEAVE_WAL_WAIT_MS}")
        try:
            if self.db.execute("SELECT count(*) FROM sqlite_master WHERE name = 'run'"
                               ).fetchone()[0] != 1:
                raise TraceError(f"{path}: not a GPUscope trace (no run table)")
            self.tasks_written = self.db.execute("SELECT count(*) FROM task").fetchone()[0]
        except (sqlite3.DatabaseError, UnicodeDecodeError) as exc:
            self.db.close()
            raise sqlite_error(path, exc) from None
        except TraceError:
            self.db.close()
            raise
        self._keys = _no_keys()
        self._conn = self._bulk = self._bulk_tags = self._bulk_imported = self._live = None
        return self

    # -- loading -------------------------------------------------------------------
    def write_open(self, rows: np.ndarray) -> None:
        """Tasks the tracer reports still open (an ``(n, 5)`` int64 array of ``(key,
        parent, kind, location, start_ps)`` rows), for the pyramid; they come with the
        next ``write_batch``."""
        if self._live is not None:
            self._live.opened(rows)

    def write_batch(self, tasks: np.ndarray, details: list[tuple[int, str]], tags: np.ndarray,
                    locations: list[tuple[int, str]], kinds: list[tuple[int, str, str]],
                    tag_names: list[tuple[int, str]]) -> None:
        """Insert one batch (the ``Tracer`` sink interface).

        Names are committed before the tasks that use them, and details and tags after.
        """
        db = self.db
        if locations or kinds or tag_names:
            db.execute("BEGIN")
            db.executemany("INSERT INTO location (id, name) VALUES (?, ?)", locations)
            db.executemany("INSERT INTO kind (id, category, action) VALUES (?, ?, ?)", kinds)
            db.executemany("INSERT INTO tag_name (id, name) VALUES (?, ?)", tag_names)
            db.execute("COMMIT")
            if self._live is not None:
                self._live.declare_kinds(kinds)
        tasks = np.ascontiguousarray(
            np.asarray(tasks, dtype=np.int64).reshape(-1, 7)[np.argsort(tasks[:, 0], kind="stable")]
            if len(tasks) else np.empty((0, 7), dtype=np.int64))
        if self._live is not None:
            self._live.start(tasks)  # on its own thread, while the rows go in
        if len(tasks):
            # Tasks arrive in end order; in key order they append to the B-tree's right edge.
            self._bulk.insert(tasks)
            self.tasks_written += len(tasks)
            _count(self._keys, tasks)
        if details:
            db.execute("BEGIN")
            db.executemany("UPDATE task SET details = ? WHERE id = ?",
                           [(text, key) for key, text in details])
            db.execute("COMMIT")
        if len(tags):
            self._bulk_tags.insert(np.ascontiguousarray(tags, dtype=np.int64))

    def declare_kinds(self, kinds: list[tuple[int, str, str]]) -> None:
        """Kinds (``(key, category, action)``) already in the file, before ``write_imported``
        rows use them."""
        self._kinds += kinds
        if self._live is not None:
            self._live.declare_kinds(kinds)

    def write_imported(self, tasks: np.ndarray, ext_ids: list, details: list) -> None:
        """Insert imported tasks whose locations and kinds are in the file already.

        ``tasks``: ``(n, 7)`` int64 rows as in ``write_batch``, in key order, after every
        earlier call's; ``ext_ids`` and ``details``: each task's text or None. The metric
        pyramid takes them through ``feed_pyramid``.
        """
        if not len(tasks):
            return
        if self._bulk_imported is None:
            self._bulk_imported = BulkInserter(self._conn, INSERT_IMPORTED_TASKS, null_if_negative=1)
        self._bulk_imported.insert(tasks, (ext_ids, details))
        self.tasks_written += len(tasks)
        _count(self._keys, tasks)

    @property
    def incremental_pyramid(self) -> bool:
        """Whether the metric pyramid is built as tasks come (else at ``finalize``: plain Python)."""
        return self._live is not None

    def feed_pyramid(self, tasks: np.ndarray, parent_starts: np.ndarray) -> int:
        """Tasks written by ``write_imported`` (``(n, 7)`` rows sorted by key, in batches in
        any order) for the incremental metric pyramid, with each one's parent's start (-1 if
        unknown: only a ``req_in``'s is used). Returns the events the pyramid holds waiting
        for later batches."""
        self._live.add(tasks, parent_starts)
        return self._live.builder.pending_events

    def restart_pyramid(self) -> None:
        """Forget what ``feed_pyramid`` was given (say, tasks in an order that held too much
        in flight), so that the tasks can be fed again in another order."""
        if self._live is None:
            return
        self._live.close()
        pyramid_build.clear_locations(self.db)
        self._live = self._new_live_pyramid()
        self._live.declare_kinds(self._kinds)

    def redo_pyramid(self, locations: Iterable[int]) -> None:
        """Have ``finalize`` rebuild the pyramid of ``locations`` from the task table (their
        tasks changed after ``feed_pyramid`` took them)."""
        if self._live is not None:
            self._live.join()
            for location in locations:
                self._live.builder.mark_dirty(location)

    def forget_imported(self) -> None:
        """Empty the counts of ``write_imported`` (its rows were deleted from the file) and
        what ``feed_pyramid`` was given."""
        self.tasks_written = 0
        self._keys = _no_keys()
        self.restart_pyramid()

    def _new_live_pyramid(self):
        if pyramid_build.IncrementalPyramid is None:
            return None
        return pyramid_build.LivePyramid(self.db, lambda sql: BulkInserter(self._conn, sql))

    def idle(self) -> None:
        """Nothing came for a while: write the pyramid rows held past their time."""
        if self._live is not None:
            self._live.write_due()

    def sync(self) -> None:
        """Wait until every batch given is in the file, and in the pyramid (the pyramid's
        thread may still be at the last one; the rows it makes final are written at the
        next batch, or held)."""
        if self._live is not None:
            self._live.join()

    def execute(self, sql: str, params: Sequence[Any] = ()) -> sqlite3.Cursor:
        """Run one statement of the writer's own (kernel-record inserts and such)."""
        return self.db.execute(sql, params)

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]] | np.ndarray) -> None:
        """Insert many rows (tuples, or an int64 matrix: bound in bulk) in one transaction."""
        if isinstance(rows, np.ndarray):
            inserter = BulkInserter(self.path if self._conn is None else self._conn, sql)
            try:
                inserter.insert(np.ascontiguousarray(rows, dtype=np.int64))
            finally:
                inserter.close()
            return
        self.db.execute("BEGIN")
        try:
            self.db.executemany(sql, rows)
        except BaseException:  # a second Ctrl-C too: leave no transaction open
            self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")

    # -- finishing -----------------------------------------------------------------
    def finalize(self, *, completed: bool, virtual_end_ps: int | None = None,
                 open_tasks: int = 0, extra_orphans: int = 0,
                 show_progress: bool | None = None) -> None:
        """Write what is left of the pyramid and the statistics; record how the run ended.

        ``extra_orphans`` counts parents an importer could not resolve before loading.
        """
        live, self._live = self._live, None
        finished = None  # (statistics, locations to rebuild) of the pyramid built so far
        if live is not None and live.fed == self.tasks_written:
            finished = live.finish()
        # Out of WAL first: what finalize writes (the indexes above all) would otherwise
        # go through the log and be copied again. From here on a viewer waits for the
        # finished trace (``dashapp/live.py``: it reads a running trace only in WAL mode).
        self._close_bulk()
        if live is not None:
            live.close()
        self._leave_wal()
        db = self.db
        _, indexes = schema_parts()
        # The run is over and its cores are free (unless a sweep runs other points beside
        # it): SQLite's sorter may use them (the index builds are most of finalize;
        # measured 18-29 % faster on 2 cores).
        db.execute(f"PRAGMA threads={SORTER_THREADS}")
        db.executescript(indexes)
        orphans = 0
        if not self._every_parent_known():
            orphans = db.execute(
                "SELECT count(*) FROM task t WHERE t.parent IS NOT NULL"
                " AND NOT EXISTS (SELECT 1 FROM task p WHERE p.id = t.parent)").fetchone()[0]
        if orphans:
            db.execute("UPDATE task SET parent = NULL WHERE parent IS NOT NULL"
                       " AND NOT EXISTS (SELECT 1 FROM task p WHERE p.id = task.parent)")
        if self._keys[0] == self.tasks_written:  # every task counted on its way in
            start_ps, end_ps = (self._keys[3], self._keys[4]) if self.tasks_written else (None, None)
        else:
            start_ps, end_ps = db.execute("SELECT min(start_ps), max(end_ps) FROM task").fetchone()
        if virtual_end_ps is not None:
            end_ps = max(end_ps or 0, virtual_end_ps)
        base = self._finish_pyramid(None if orphans else finished, show_progress)
        db.execute(
            "UPDATE run SET completed = ?, finalized = 1, open_tasks = ?, orphan_tasks = ?,"
            " virtual_start_ps = ?, virtual_end_ps = ?, wall_seconds = coalesce(wall_seconds, ?),"
            " pyramid_base_ps = ? WHERE id = 1",
            (int(bool(completed)), int(open_tasks), orphans + extra_orphans, start_ps or 0, end_ps or 0,
             _wall_seconds(self._wall_start), base),
        )

    def _leave_wal(self):
        """Take the file out of WAL mode, folding its log in (a no-op for a file with a
        rollback journal). Needs the only connection to the file."""
        if self.db.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
            return
        # On a fresh connection: the writer's own may hold pages the bulk inserters
        # changed since, and out of WAL nothing tells it (measured: the indexes built
        # next missed the last rows).
        self.db.close()
        self.db = _connect(self.path)
        self.db.execute(f"PRAGMA busy_timeout={LEAVE_WAL_WAIT_MS}")
        # Leaving WAL needs the file to itself, and SQLite tries that once, without its
        # busy handler: a viewer's connection open at that moment (each holds the file
        # while it answers a request) makes it fail. Viewers' requests are short: retry.
        deadline = time.monotonic() + LEAVE_WAL_WAIT_MS / 1000
        while True:
            try:
                mode = self.db.execute("PRAGMA journal_mode=DELETE").fetchone()[0]
            except sqlite3.OperationalError as exc:
                if (exc.sqlite_errorcode & 0xFF) != sqlite3.SQLITE_BUSY:
                    raise
                mode = "wal"
            if mode == "delete":
                return
            if time.monotonic() > deadline:
                raise TraceError(f"{self.path}: could not leave WAL mode: readers kept the file"
                                 f" open for {LEAVE_WAL_WAIT_MS / 1000:g} s")
            time.sleep(LEAVE_WAL_RETRY_S)

    def _every_parent_known(self) -> bool:
        """Whether every task came through ``write_batch`` with keys 0..n-1 and parents
        among them: then no parent can be missing and the file need not be scanned."""
        count, largest, largest_parent = self._keys[:3]
        return count == self.tasks_written and largest == count - 1 and largest_parent <= largest

    def _finish_pyramid(self, finished: tuple[dict, set] | None,
                        show_progress: bool | None) -> int:
        """The statistics, and the pyramid of the locations the incremental build could
        not finish (all of them if ``finished`` is None); returns the level-0 bin width."""
        db = self.db
        if pyramid_build.IncrementalPyramid is None:
            return pyramid_build.reference_build(db, show_progress=show_progress)
        stats, redo = finished if finished is not None else ({}, None)  # None: every location
        if redo is None or redo:
            stats.update(pyramid_build.rebuild(db, self.path, redo, show_progress=show_progress))
        db.execute("BEGIN")
        pyramid_build.store_statistics(db, stats)
        db.execute("COMMIT")
        return pyramid_build.BASE_PS

    def _close_bulk(self) -> None:
        """Close the bulk inserters and their connection (the pyramid keeps what it holds)."""
        for bulk in (self._bulk, self._bulk_tags, self._bulk_imported, self._live, self._conn):
            if bulk is not None:
                bulk.close()
        self._conn = self._bulk = self._bulk_tags = self._bulk_imported = None

    def close(self) -> None:
        """Close the connections."""
        self._close_bulk()
        self._live = None
        self.db.close()


def _no_keys():
    return [0, -1, -1, None, None]


def _count(keys, tasks):
    """Add a batch of ``(n, 7)`` task rows sorted by key to ``keys`` (see ``_keys``)."""
    keys[0] += len(tasks)
    keys[1] = max(keys[1], int(tasks[-1, 0]))
    keys[2] = max(keys[2], int(tasks[:, 1].max()))
    first, last = int(tasks[:, 4].min()), int(tasks[:, 5].max())
    keys[3] = first if keys[3] is None else min(keys[3], first)
    keys[4] = last if keys[4] is None else max(keys[4], last)


def open_readonly(path: str | os.PathLike, probe: str = "SELECT count(*) FROM sqlite_master",
                  what: str = "a readable SQLite file") -> sqlite3.Connection:
    """A read-only connection to ``path``, or a ``TraceError`` saying why not.

    ``probe`` is run once to make sure the file really is ``what``. Nothing is written
    to open it (no ``-shm``, no journal), so a file in a directory the reader may not
    write opens too, as long as it is not in WAL mode (finalize takes it out).
    """
    path = Path(path)
    if not path.is_file():
        raise TraceError(f"{path}: {'is a directory' if path.is_dir() else 'no such file'}")
    try:
        db = sqlite3.connect(path.resolve().as_uri() + "?mode=ro", uri=True)
    except sqlite3.Error as exc:
        raise sqlite_error(path, exc, what) from None
    # Text that is not UTF-8 (a damaged page, another tool's bytes) is read with
    # replacement characters instead of failing the query that meets it.
    db.text_factory = _lenient_text
    try:
        db.execute(probe).fetchone()
    except (sqlite3.Error, UnicodeDecodeError) as exc:
        db.close()
        raise sqlite_error(path, exc, what) from None
    return db


def _lenient_text(data: bytes) -> str:
    return data.decode("utf-8", "replace")


def sqlite_error(path: str | os.PathLike, exc: sqlite3.Error | UnicodeDecodeError,
                 what: str = "a GPUscope trace") -> TraceError:
    """The ``TraceError`` (``TraceDamaged`` for damage) for SQLite's error ``exc`` on ``path``."""
    problem = sqlite_problem(exc, what)
    return (TraceDamaged if problem.startswith("damaged") else TraceError)(f"{path}: {problem}")


def sqlite_problem(exc: sqlite3.Error | UnicodeDecodeError,
                   what: str = "a GPUscope trace") -> str:
    """What SQLite's error ``exc`` says about a file meant to be ``what``: SQLite's own
    words, preceded only by what its error code means (damaged, not SQLite, not ours)."""
    if isinstance(exc, UnicodeDecodeError):  # SQLite's message quotes the damaged bytes
        return "damaged (SQLite's error message is not even text)"
    code = (getattr(exc, "sqlite_errorcode", None) or 0) & 0xFF
    text = str(exc)
    if code == sqlite3.SQLITE_CORRUPT or "malformed" in text:
        return f"damaged (SQLite: {text})"
    if code == sqlite3.SQLITE_NOTADB or text.startswith(("no such table", "no such column")):
        return f"not {what} (SQLite: {text})"
    return f"SQLite: {text}"


class PendingOutput:
    """An output being written: a hidden sibling of ``out`` (``temporary_path``, or
    ``path``), moved into place by ``publish`` or removed with its SQLite companions by
    ``discard``."""

    def __init__(self, out: str | os.PathLike, path: str | os.PathLike | None = None) -> None:
        self.out = Path(out)
        self.path = Path(path) if path is not None else temporary_path(self.out)
        self.published = False

    def publish(self) -> None:
        """Move the finished file into place, in one rename."""
        remove_trace_files(self.out, main=False)  # an old trace's -wal would corrupt the new one
        replace_atomically(self.path, self.out)
        self.published = True

    def discard(self) -> None:
        """Remove the unfinished file; whatever was at ``out`` stays as it was."""
        remove_trace_files(self.path)


@contextlib.contextmanager
def pending_output(out: str | os.PathLike) -> Iterator[PendingOutput]:
    """Yield a ``PendingOutput`` for ``out``: published when the block ends normally
    (unless the block published it already), discarded when it raises."""
    pending = PendingOutput(out)
    try:
        yield pending
    except BaseException:
        if not pending.published:
            pending.discard()
        raise
    if not pending.published:
        pending.publish()


@contextlib.contextmanager
def atomic_output(final_path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary path; move it to ``final_path`` only if the block succeeds."""
    with pending_output(final_path) as pending:
        yield pending.path


def remove_trace_files(path: str | os.PathLike, main: bool = True) -> None:
    """Delete a trace's ``-wal``, ``-shm`` and ``-journal`` companions, and the file itself
    if ``main``."""
    for suffix in ("", "-wal", "-shm", "-journal") if main else ("-wal", "-shm", "-journal"):
        Path(str(path) + suffix).unlink(missing_ok=True)


def replace_atomically(tmp_path: str | os.PathLike, final_path: str | os.PathLike) -> None:
    """Move a fully written temporary file into place (never a half-written output)."""
    os.replace(tmp_path, final_path)


PARTIAL_MARK = ".partial-"


def temporary_path(final_path: str | os.PathLike) -> Path:
    """A sibling path to write into before ``replace_atomically``: hidden, and named by
    the writing process so that ``outputs.interrupted`` can tell a live writer's file
    from one a killed writer left."""
    final_path = Path(final_path)
    return final_path.with_name(f".{final_path.name}{PARTIAL_MARK}{os.getpid()}")
