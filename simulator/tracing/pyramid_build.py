"""Where a trace's metric pyramid comes from, in memory bounded by the model.

* While a run is written (``LivePyramid``), each batch of finished tasks, and the tasks
  the tracer reports still open, feed ``_pyramid.IncrementalPyramid`` in the writer's
  process, on a thread of its own beside the batch's inserts; bins behind the
  *frontier* are final and go into the file 64k rows at a time, or after a second
  (``HOLD_ROWS``). At finalize only the bins still in flight remain.
* A trace whose tasks did not come through the writer's batches (an import, a trace
  reopened after a crash), and any location whose events arrived behind the frontier,
  is rebuilt from the task table (``rebuild``): one scan in the order of each task's
  first event, sorted by SQLite on disk, through the same incremental builder, with
  tasks and rows as int64 matrices (``_bulk``).

The frontier is the earliest event added by the last ``RECENT_BATCHES`` batches (a
start, an end, or a ``req_in``'s wait from its parent's start; a task reported open
earlier adds only its end), and never past the start of a request still unanswered: the
``req_in`` it will get waits from then on, at a location not known yet. Both are about
the time a task stays in flight, not the trace.

Without the compiled builder (``SIMULATOR_PUREPYTHON=1``) the numpy reference in
``pyramid.py`` builds everything at finalize.
"""
import time
from collections import deque
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from .. import build
from .progress import track
from .pyramid import KIND_LEVEL_OFFSET, build_pyramid, min_level

_compiled = build.accelerator("simulator.tracing._pyramid")
_bulk = build.module("simulator.tracing._bulk")
# Without it (plain Python, or not built) the reference builds the pyramid at finalize.
IncrementalPyramid = _compiled.IncrementalPyramid if _compiled is not None else None
if _compiled is not None:
    OTHER, REQ_IN, REQ_OUT = _compiled.OTHER, _compiled.REQ_IN, _compiled.REQ_OUT

BASE_PS = 1  # level-0 bins are 1 ps << level wide: no global span is known in advance
RECENT_BATCHES = 2
MAX_PENDING_EVENTS = 4_000_000  # 32 B each; past it the frontier moves up to the newest batch
# Tasks a rebuild reads per step (rows of 8 int64).
REBUILD_CHUNK = 16_384
# Pyramid rows held back before they are written (80 B each), and for how long at most
# (a viewer of a running trace sees the run up to the bins written). Each write touches,
# and SQLite rebalances, the last page of every (location, level) it appends to, all over
# the two tables: writing each batch's few rows per location at once cost 2.7 us a row
# at 10M tasks (a quarter of the run), against 1.1 at 1M; 64k rows at a time halve it.
HOLD_ROWS = 1 << 16
HOLD_SECONDS = 1.0
_NO_ROWS = np.empty((0, 5), dtype=np.int64)
INSERT_METRICS = "INSERT INTO metric_bin VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
INSERT_KIND_METRICS = "INSERT INTO metric_kind_bin VALUES (?, ?, ?, ?, ?, ?)"


def _class(category):
    return REQ_IN if category == "req_in" else REQ_OUT if category == "req_out" else OTHER


class LivePyramid:
    """The pyramid of a trace being written, fed batch by batch.

    ``inserter(sql)`` opens a bulk inserter on the trace (``BulkInserter``); ``db`` is
    the writer's connection, used to look up a parent written in an earlier batch.
    Final rows are written once ``hold_rows`` are gathered or ``hold_seconds`` have passed
    since the last write (0: each batch's at once).
    """
    hold_rows = HOLD_ROWS
    hold_seconds = HOLD_SECONDS

    def __init__(self, db, inserter):
        self._written_at = time.monotonic()
        self.db = db
        self.builder = IncrementalPyramid(base=BASE_PS)
        self._metrics = inserter(INSERT_METRICS)
        self._kind_metrics = inserter(INSERT_KIND_METRICS)
        self._held, self._held_rows = ([], []), 0  # final rows not written yet, per table
        self._recent = deque(maxlen=RECENT_BATCHES)
        self._opened = None
        self.fed = 0
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="pyramid")
        self._feeding = None  # the batch the thread is adding

    def declare_kinds(self, kinds):
        """New ``(key, category, action)`` kinds, before tasks that use them."""
        self.join()  # the builder is the thread's until then
        for key, category, _ in kinds:
            self.builder.set_kind(key, _class(category))

    def opened(self, rows):
        """Tasks still open at the tracer's flush (in key order, as it gives them), taken
        with the next batch."""
        self._opened = np.array(rows, dtype=np.int64).reshape(-1, 5)

    def add(self, tasks, parent_starts=None):
        """One batch of finished tasks (``(n, 7)`` int64, sorted by key), with each one's
        parent's start if the caller knows them (else they are looked for); returns once
        the builder has it."""
        self.start(tasks, parent_starts)
        self.join()

    def start(self, tasks, parent_starts=None):
        """Begin adding a batch, as ``add``: its parents' starts are found here, and the
        builder takes it on the pyramid's own thread, beside what the caller does until
        ``join`` (the writer's inserts of the batch, which release the GIL: a fully traced
        run's writer spent as long in the builder as in SQLite, one after the other).
        ``tasks`` must not change until then."""
        self.join()
        tasks = np.ascontiguousarray(tasks, dtype=np.int64)
        opened, self._opened = self._opened, None
        if opened is None or not len(opened):
            opened = open_starts = None
        else:
            open_starts = self._parent_starts(opened, tasks, opened)
        if len(tasks):
            parent_starts = (self._parent_starts(tasks, tasks, _NO_ROWS if opened is None else opened)
                             if parent_starts is None
                             else np.ascontiguousarray(parent_starts, dtype=np.int64))
            self.fed += len(tasks)
        else:
            tasks = None
        self._feeding = self._thread.submit(self._feed, opened, open_starts, tasks, parent_starts)

    def join(self):
        """Wait for the batch ``start`` began; write the rows of the bins it made final, or
        hold them (``hold_rows``)."""
        feeding, self._feeding = self._feeding, None
        if feeding is None:
            return
        rows = feeding.result()
        if rows is not None:
            self._write_rows(rows)

    def _feed(self, opened, open_starts, tasks, parent_starts):
        """The builder's part of a batch: its events, the frontier they allow, and the rows
        of the bins now final (None if the batch added no event)."""
        first = []
        if opened is not None:
            first.append(self.builder.open(opened, open_starts))
        if tasks is not None:
            first.append(self.builder.add(tasks, parent_starts))
        first = [t for t in first if t is not None]
        if not first:
            return None
        self._recent.append(min(first))
        frontier = min(self._recent)
        unanswered = self.builder.open_req_out_floor()
        if unanswered is not None:
            frontier = min(frontier, unanswered)
        if self.builder.pending_events > MAX_PENDING_EVENTS and tasks is not None:
            frontier = max(frontier, int(tasks[:, 5].min()))  # memory first; late events mean a rebuild
        self.builder.advance(frontier)
        return self.builder.take_rows()

    def _parent_starts(self, rows, tasks, opened):
        """Start of each ``req_in``'s parent (-1 for other tasks): from this batch's
        ``tasks`` and ``opened`` ones, the open tasks, or the file. A parent found nowhere
        yet may still come: the task's location is then rebuilt at the end."""
        ps = self.builder.parent_starts(rows, tasks, opened)
        for i in np.flatnonzero(ps == _compiled.NOT_HELD).tolist():
            found = self.db.execute("SELECT start_ps FROM task WHERE id = ?",
                                    (int(rows[i, 1]),)).fetchone()
            if found is None:
                self.builder.mark_dirty(int(rows[i, 3]))
                ps[i] = -1
            else:
                ps[i] = found[0]
        return ps

    def _write_rows(self, rows):
        """Write the rows of the bins now final, or keep them (``HOLD_ROWS``)."""
        self._hold(rows)
        self._write_if_due(self._held_rows >= self.hold_rows)

    def write_due(self):
        """Wait for the batch under way, then write the rows held past ``hold_seconds``:
        called while no batch comes (a long functional execution), so a viewer of the run
        waits at most about that long for what is final."""
        self.join()
        self._write_if_due()

    def _write_if_due(self, now=False):
        """Write the rows held if ``hold_seconds`` have passed since the last write (or
        ``now``)."""
        at = time.monotonic()
        if now or (self._held_rows and at - self._written_at >= self.hold_seconds):
            self._insert_held()
            self._written_at = at

    def _insert_held(self):
        """Write the rows held, each table's in its key order (the rows of one transaction
        then fill pages one after another); a table's parts are freed once joined, and
        its rows once written, so the held rows are in memory at most twice."""
        for inserter, parts, key_columns in ((self._metrics, self._held[0], 3),
                                             (self._kind_metrics, self._held[1], 4)):
            if not parts:
                continue
            rows = np.concatenate(parts)
            parts.clear()
            rows = rows[np.lexsort(rows[:, :key_columns].T[::-1])]
            if len(rows):
                inserter.insert(rows)
        self._held_rows = 0

    def _hold(self, rows):
        for parts, part in zip(self._held, rows):
            parts.append(part)
            self._held_rows += len(part)

    def finish(self):
        """Write the bins still in flight: (statistics per location, dirty locations).
        The bins of a long task (a kernel spanning the run) stay in flight to the end, so
        this can be most of the pyramid's rows: they go in bound in bulk."""
        self.join()
        stats = self.builder.finish()
        self._hold(self.builder.take_rows())
        self._insert_held()
        coarsened = [(loc, stats[loc][6]) for loc in sorted(self.builder.coarsened) if loc in stats]
        if coarsened:
            self.db.execute("BEGIN")
            _delete_finer(self.db, coarsened)
            self.db.execute("COMMIT")
        return stats, set(self.builder.dirty)

    def close(self):
        """Close the inserters' connections (rows still held are not written: without
        ``finish`` the pyramid is rebuilt, or the file abandoned) and stop its thread."""
        self._feeding = None
        self._thread.shutdown(wait=True)
        for inserter in (self._metrics, self._kind_metrics):
            if inserter is not None:
                inserter.close()
        self._metrics = self._kind_metrics = None


def rebuild(db, path, locations=None, show_progress=None):
    """Build the pyramid of ``locations`` (all if None) from the task table of the trace at
    ``path`` (open as ``db``, idle), in place of what it had of theirs; returns the
    per-location statistics as ``IncrementalPyramid.finish`` gives them.

    Tasks come out, and rows go in, as int64 matrices through a connection of the C API
    (``_bulk``): as Python tuples through ``sqlite3`` they cost two fifths of the rebuild
    (1.0 of 2.4 s at 1M tasks). Rows go in a chunk per transaction, after the old ones
    are deleted: a rebuild cut short leaves the trace unfinalized, and the next finalize
    rebuilds again. Memory is the builder's (tasks in flight) plus SQLite's sorter, which
    spills to disk.
    """
    db.execute("BEGIN")
    clear_locations(db, locations)
    db.execute("COMMIT")
    conn = _bulk.Connection(path)
    try:
        return _rebuild(conn, locations, show_progress)
    finally:
        conn.close()


def _rebuild(conn, locations, show_progress):
    builder = IncrementalPyramid(base=BASE_PS)
    keys, (categories,) = read_all(conn, "SELECT id, category FROM kind", ints=1)
    req_in = [-1]
    for key, category in zip(keys[:, 0].tolist(), categories):
        builder.set_kind(key, _class(category))
        if category == "req_in":
            req_in.append(key)
    where, params = "", ()
    if locations is not None:
        locations = sorted(locations)
        where = f" WHERE t.location IN ({', '.join('?' * len(locations))})"
        params = tuple(locations)
    levels, _ = read_all(conn, f"SELECT t.location, count(*), min(t.start_ps), max(t.end_ps)"
                                f" FROM task t{where} GROUP BY t.location", params)
    total = 0
    for loc, count, first, last in levels.tolist():
        builder.set_level(loc, min_level(count, first, last, BASE_PS))
        total += count
    # A req_in's parent is found by its key; kinds are interned integers.
    reader = _bulk.BulkReader(conn, (
        "SELECT id, parent, kind, location, start_ps, end_ps, ps,"
        " CASE WHEN ps BETWEEN 0 AND start_ps THEN ps ELSE start_ps END AS first_ps FROM ("
        " SELECT t.id, coalesce(t.parent, -1) AS parent, t.kind, t.location, t.start_ps,"
        " t.end_ps, CASE WHEN t.kind IN (" + ", ".join("?" * len(req_in)) + ")"
        " THEN coalesce((SELECT p.start_ps FROM task p WHERE p.id = t.parent), -1)"
        " ELSE -1 END AS ps FROM task t" + where + ") ORDER BY first_ps"),
        tuple(req_in) + params)
    metrics = _bulk.BulkInserter(conn, INSERT_METRICS)
    kind_metrics = _bulk.BulkInserter(conn, INSERT_KIND_METRICS)
    try:
        for _ in track(range((total + REBUILD_CHUNK - 1) // REBUILD_CHUNK), show_progress,
                       desc="metric pyramid", unit="chunk"):
            chunk, _ = reader.fetch(REBUILD_CHUNK)
            if not len(chunk):
                break
            builder.add(chunk, np.ascontiguousarray(chunk[:, 6]))
            builder.advance(int(chunk[-1, 7]))
            _drain(builder, metrics, kind_metrics)
        stats = builder.finish()
        _drain(builder, metrics, kind_metrics)
    finally:
        for closing in (reader, metrics, kind_metrics):
            closing.close()
    return stats


def read_all(conn, sql, params=(), ints=None):
    """Every row of a query on a ``_bulk`` connection: ``BulkReader.fetch``'s (int64
    matrix, [list per other column]), the integers read in C loops."""
    reader = _bulk.BulkReader(conn, sql, params, ints)
    try:
        parts = []
        while True:
            values, others = reader.fetch(REBUILD_CHUNK)
            if not len(values):
                break
            parts.append((values, others))
    finally:
        reader.close()
    if not parts:
        return values, others
    return (np.concatenate([v for v, _ in parts]),
            [[x for _, o in parts for x in o[c]] for c in range(len(parts[0][1]))])


def _drain(builder, metrics, kind_metrics):
    for inserter, rows in zip((metrics, kind_metrics), builder.take_rows()):
        if len(rows):
            inserter.insert(np.ascontiguousarray(rows, dtype=np.int64))


def _delete_finer(db, levels):
    """Delete the rows below each ``(location, finest level)`` (those a coarsened location
    wrote before it was coarsened: they cover only the start of its run)."""
    db.executemany("DELETE FROM metric_bin WHERE location = ? AND level < ?", levels)
    db.executemany("DELETE FROM metric_kind_bin WHERE location = ? AND level < ?",
                   [(loc, level + KIND_LEVEL_OFFSET) for loc, level in levels])


def store_statistics(db, stats):
    """Fill ``location``'s finalize columns and ``long_task`` from ``stats``."""
    db.executemany("INSERT INTO long_task VALUES (?, ?, ?, ?)",
                   [(loc, key, s, e) for loc, row in stats.items() for key, s, e in row[7]])
    db.executemany(
        "UPDATE location SET task_count = ?, busy_ps = ?, max_duration_ps = ?,"
        " short_duration_ps = ?, first_start_ps = ?, last_end_ps = ?, pyramid_min_level = ?"
        " WHERE id = ?", [(*row[:7], loc) for loc, row in stats.items()])


def clear_locations(db, locations=None):
    """Delete the pyramid rows and long tasks of ``locations`` (all if None)."""
    for table in ("metric_bin", "metric_kind_bin", "long_task"):
        if locations is None:
            db.execute(f"DELETE FROM {table}")
        else:
            db.executemany(f"DELETE FROM {table} WHERE location = ?", [(loc,) for loc in locations])


def reference_build(db, show_progress=None):
    """The numpy reference over every task (pure-Python mode); returns the base width."""
    return build_pyramid(db, show_progress=show_progress)
