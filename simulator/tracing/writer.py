"""The trace file: batched SQLite writing, then finalize.

A ``TraceWriter`` creates a fresh file from ``sqlite_schema.sql`` (tables only). Task
rows arrive in large batches, one transaction each, with integer keys and interned
strings. The run row is written first with ``completed = 0``; a crash therefore leaves
a readable file that says it is incomplete.

A file written in place is in WAL mode from the start, so a viewer can read it while
it grows, and a killed writer leaves it readable. A ``temporary`` file (written under
a name no viewer opens, and moved into place only when finalized) loads with a
rollback journal instead: WAL would cost a tenth of a fully traced run (every page is
framed and checksummed into the log) and buy nothing there, while appending rows
journals almost nothing. Finalize turns every trace to WAL, so viewers can read it
while kernel records are appended.

``finalize`` runs once after the load: it nulls parents that were never recorded
(counting them), builds the indexes, fills the per-location statistics and the metric
pyramid (``pyramid.py``), and records the end of the run.
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
from .bulk import INSERT_TAGS, INSERT_TASKS

BulkInserter = build.module("simulator.tracing._bulk").BulkInserter

INDEX_MARKER = "-- INDEXES"
# Task batches up to this many tasks are kept in memory (56 B each) so that finalize
# need not read them back from the file.
MAX_CACHED_TASKS = 16_000_000


class TraceError(Exception):
    """A trace file cannot be read or written; the message says where and why."""


def schema_text() -> str:
    """The full text of ``sqlite_schema.sql``, the contract shared with the app."""
    packaged = resources.files("simulator.tracing").joinpath("sqlite_schema.sql")
    if packaged.is_file():
        return packaged.read_text()
    return (Path(__file__).resolve().parents[2] / "sqlite_schema.sql").read_text()


def schema_parts() -> tuple[str, str]:
    """(tables, indexes): the schema split at the marker, so indexes come after the load."""
    tables, _, rest = schema_text().partition(INDEX_MARKER)
    return tables, rest.partition("\n")[2]


def _utc_now():
    """Wall-clock start of the run, or ``SOURCE_DATE_EPOCH`` for reproducible files."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    when = (_dt.datetime.fromtimestamp(int(epoch), _dt.timezone.utc) if epoch
            else _dt.datetime.now(_dt.timezone.utc))
    return when.isoformat(timespec="seconds")


def _wall_seconds(started):
    """Wall-clock duration since ``started``; 0 under ``SOURCE_DATE_EPOCH`` (byte-identical runs)."""
    return 0.0 if os.environ.get("SOURCE_DATE_EPOCH") else time.perf_counter() - started


class TraceWriter:
    """Writes one run into a new SQLite trace file at ``path``.

    An existing file at ``path`` is replaced. ``config`` is stored as JSON.
    ``temporary`` says no viewer opens ``path`` before it is finalized (see above).
    """

    def __init__(self, path: str | os.PathLike, *, command: str | None,
                 config: dict[str, Any] | None = None, workload: str | None = None,
                 seed: int | None = None, source: str = "simulator",
                 temporary: bool = False) -> None:
        self.path = Path(path)
        self._wall_start = time.perf_counter()
        for suffix in ("", "-wal", "-shm"):
            extra = Path(str(self.path) + suffix)
            if extra.exists():
                extra.unlink()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.db = sqlite3.connect(str(self.path), isolation_level=None)
        if not temporary:
            self.db.execute("PRAGMA journal_mode=WAL")
        # No fsync: a crashed simulator loses at most its last batch (committed ones are
        # in the file or the WAL); only an OS crash or power loss could damage the file, which for a
        # re-runnable trace is worth the speed.
        self.db.execute("PRAGMA synchronous=OFF")
        self.db.execute("PRAGMA cache_size=-262144")
        self.db.execute("PRAGMA temp_store=MEMORY")
        tables, _ = schema_parts()
        self.db.executescript(tables)
        self.db.execute(
            "INSERT INTO run (id, simulator_version, command, workload, config, seed, source,"
            " wall_start) VALUES (1, ?, ?, ?, ?, ?, ?, ?)",
            (__version__, command, workload, json.dumps(config or {}, sort_keys=True), seed,
             source, _utc_now()),
        )
        self.tasks_written = 0
        self._columns = []  # task batches kept for the pyramid, while under MAX_CACHED_TASKS
        # Task and tag rows go through their own connection, bound in bulk.
        self._bulk = BulkInserter(self.path, INSERT_TASKS, null_if_negative=1)
        self._bulk_tags = BulkInserter(self.path, INSERT_TAGS)

    @classmethod
    def reopen(cls, path: str | os.PathLike) -> TraceWriter:
        """Open an existing trace to finalize it again (after a crash, say)."""
        path = Path(path)
        if not path.is_file():
            raise TraceError(f"{path}: no such file")
        self = cls.__new__(cls)
        self.path = path
        self._wall_start = time.perf_counter()
        self.db = sqlite3.connect(str(path), isolation_level=None)
        if self.db.execute("SELECT count(*) FROM sqlite_master WHERE name = 'run'").fetchone()[0] != 1:
            self.db.close()
            raise TraceError(f"{path}: not a GPUscope trace (no run table)")
        self.tasks_written = self.db.execute("SELECT count(*) FROM task").fetchone()[0]
        self._columns = None
        self._bulk = self._bulk_tags = None
        return self

    # -- loading -------------------------------------------------------------------
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
        if len(tasks):
            # Tasks arrive in end order; in key order they append to the B-tree's right edge.
            tasks = np.ascontiguousarray(tasks[np.argsort(tasks[:, 0], kind="stable")],
                                         dtype=np.int64)
            self._bulk.insert(tasks)
            self.tasks_written += len(tasks)
            if self._columns is not None:
                if self.tasks_written > MAX_CACHED_TASKS:
                    self._columns = None  # too big to keep: finalize reads the file instead
                else:
                    self._columns.append(tasks)  # the sorted copy: no one else holds it
        if details:
            db.execute("BEGIN")
            db.executemany("UPDATE task SET details = ? WHERE id = ?",
                           [(text, key) for key, text in details])
            db.execute("COMMIT")
        if len(tags):
            self._bulk_tags.insert(np.ascontiguousarray(tags, dtype=np.int64))

    def sync(self) -> None:
        """Every batch is written when ``write_batch`` returns (``BackgroundWriter`` waits)."""

    def execute(self, sql: str, params: Sequence[Any] = ()) -> sqlite3.Cursor:
        """Run one statement of the writer's own (kernel-record inserts and such)."""
        return self.db.execute(sql, params)

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        """Insert many rows in one transaction."""
        self.db.execute("BEGIN")
        self.db.executemany(sql, rows)
        self.db.execute("COMMIT")

    # -- finishing -----------------------------------------------------------------
    def finalize(self, *, completed, virtual_end_ps=None, open_tasks=0, extra_orphans=0,
                 show_progress=None):
        """Build indexes, statistics and the metric pyramid; record how the run ended.

        ``extra_orphans`` counts parents an importer could not resolve before loading.
        """
        from .pyramid import build_pyramid

        db = self.db
        _, indexes = schema_parts()
        orphans = db.execute(
            "SELECT count(*) FROM task t WHERE t.parent IS NOT NULL"
            " AND NOT EXISTS (SELECT 1 FROM task p WHERE p.id = t.parent)").fetchone()[0]
        db.execute("BEGIN")
        if orphans:
            self._columns = None  # parents changed on disk; the cached batches are stale
            db.execute("UPDATE task SET parent = NULL WHERE parent IS NOT NULL"
                       " AND parent NOT IN (SELECT id FROM task)")
        for statement in indexes.split(";"):
            if statement.strip():
                db.execute(statement)
        db.execute("COMMIT")
        start_ps, end_ps = db.execute("SELECT min(start_ps), max(end_ps) FROM task").fetchone()
        if virtual_end_ps is not None:
            end_ps = max(end_ps or 0, virtual_end_ps)
        batches, self._columns = self._columns, []
        # Each batch is dropped as soon as it is copied, so the peak is one copy of the tasks.
        cached = None
        if batches:
            cached = np.empty((sum(len(b) for b in batches), 6), dtype=np.int64)
            at = 0
            while batches:
                batch = batches.pop(0)
                cached[at:at + len(batch)] = batch[:, :6]
                at += len(batch)
        base = build_pyramid(db, columns=cached, show_progress=show_progress)
        db.execute(
            "UPDATE run SET completed = ?, finalized = 1, open_tasks = ?, orphan_tasks = ?,"
            " virtual_start_ps = ?, virtual_end_ps = ?, wall_seconds = coalesce(wall_seconds, ?),"
            " pyramid_base_ps = ? WHERE id = 1",
            (int(bool(completed)), int(open_tasks), orphans + extra_orphans, start_ps or 0, end_ps or 0,
             _wall_seconds(self._wall_start), base),
        )
        self._close_bulk()  # switching to WAL needs the only connection
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # a file loaded in WAL mode: fold the log in

    def _close_bulk(self):
        for bulk in (self._bulk, self._bulk_tags):
            if bulk is not None:
                bulk.close()
        self._bulk = self._bulk_tags = None

    def close(self) -> None:
        """Close the connections; a finalized file stays in WAL mode for concurrent readers."""
        self._close_bulk()
        self.db.close()


def open_readonly(path: str | os.PathLike, probe: str = "SELECT count(*) FROM sqlite_master",
                  what: str = "a readable SQLite file") -> sqlite3.Connection:
    """A read-only connection to ``path``, or a ``TraceError`` saying why not.

    ``probe`` is run once to make sure the file really is ``what``.
    """
    path = Path(path)
    if not path.is_file():
        raise TraceError(f"{path}: no such file")
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        db.execute(probe).fetchone()
    except sqlite3.DatabaseError as exc:
        raise TraceError(f"{path}: not {what} ({exc})") from None
    return db


@contextlib.contextmanager
def atomic_output(final_path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary path; move it to ``final_path`` only if the block succeeds."""
    tmp = temporary_path(final_path)
    try:
        yield tmp
        os.replace(tmp, final_path)
    finally:
        if tmp.exists():
            tmp.unlink()


def remove_trace_files(path: str | os.PathLike, main: bool = True) -> None:
    """Delete a trace's ``-wal``, ``-shm`` and ``-journal`` companions, and the file itself
    if ``main``."""
    for suffix in ("", "-wal", "-shm", "-journal") if main else ("-wal", "-shm", "-journal"):
        Path(str(path) + suffix).unlink(missing_ok=True)


def replace_atomically(tmp_path: str | os.PathLike, final_path: str | os.PathLike) -> None:
    """Move a fully written temporary file into place (never a half-written output)."""
    os.replace(tmp_path, final_path)


def temporary_path(final_path: str | os.PathLike) -> Path:
    """A sibling path to write into before ``replace_atomically``."""
    final_path = Path(final_path)
    return final_path.with_name(f".{final_path.name}.partial-{os.getpid()}")
