"""All read SQL of the app, as named functions over a read-only connection.

Every value is bound as a parameter; the only identifiers ever put into SQL text come
from the whitelists below. Connections open the file with ``mode=ro`` and carry a
per-query time limit enforced by an SQLite progress handler, so a slow query is
interrupted (``QueryTimeout``) instead of tying up a server worker.

The limit counts the query's own running time: the CPU time of the thread running it
(SQLite runs a statement in the caller's thread), so time spent waiting for the GIL,
for other requests' threads or for a worker is never charged to it, and a query that
ran for milliseconds is never reported as slow because the server was busy. Time
blocked on the disk is not CPU time either, so a wall-clock backstop
(``WALL_FACTOR`` times the limit) still stops a query stuck on a dead network disk.

Times are integer picoseconds throughout, as stored in the trace. Row types say what
the schema stores (``sqlite_schema.sql``): ``None`` where a column may be NULL.
"""
from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

QUERY_SECONDS = 5.0
"""Default time limit of one query."""

LIVE_QUERY_SECONDS = 1.0
"""Time limit of one query on a trace still being written: its task table has no
index until finalize, so a query on tasks reads all of them, and the simulation
writing it wants the machine (``catalog.TraceMeta.query_seconds``)."""

PROGRESS_STEPS = 100_000
"""SQLite virtual-machine steps between two deadline checks (a few ms of work): each
check takes the GIL, which on a busy server is a wait, so not too often."""

WALL_FACTOR = 12
"""The wall-clock backstop, in multiples of the limit: only a query that waits for the
disk (or for a server overloaded beyond use) for this long is stopped by it."""


class Location(NamedTuple):
    """A location (component) with its finalize-time statistics, which are None for a
    location without tasks; for a trace still being written, what its metric pyramid
    holds so far (``live_locations``)."""

    id: int
    name: str
    task_count: int | None
    busy_ps: int | None
    max_duration_ps: int | None
    short_duration_ps: int | None
    first_start_ps: int | None
    last_end_ps: int | None
    min_level: int | None  # location.pyramid_min_level
    sort_index: int | None  # None: natural order by name (always, before format 2)
    complete_level: int | None = None  # while written: coarsest level with a finished bin

    @property
    def has_tasks(self) -> bool:
        """Whether any task ran here (so far, for a trace being written)."""
        return bool(self.task_count) or (self.task_count is None and self.min_level is not None)


class Kind(NamedTuple):
    """A (category, action) pair: Daisen's (kind, what)."""

    id: int
    category: str
    action: str


class Task(NamedTuple):
    """A task row, as stored."""

    id: int
    parent: int | None
    kind: int
    location: int
    start_ps: int
    end_ps: int
    flags: int
    ext_id: str | None
    details: str | None  # JSON object text


class MetricRow(NamedTuple):
    """A metric_bin row of one location and level."""

    bin: int
    req_in_started: int
    req_in_ended: int
    req_in_latency_ps: int
    task_ps: int
    buffer_ps: int
    req_out_ps: int
    busy_ps: int


MetricTuple = tuple[int, int, int, int, int, int, int, int]
"""A ``MetricRow`` as the plain tuple ``metric_bins`` returns."""


IntervalTuple = tuple[int, int, int, int]
"""What the Overview's exact metrics need of a task: (start_ps, end_ps, kind, the
parent's start_ps or -1 for none), as a plain tuple: a page of a busy trace reads
hundreds of thousands of them straight into an array, and a named tuple each was a third
of the page's server time."""


TASK_COLUMNS = "id, parent, kind, location, start_ps, end_ps, flags, ext_id, details"


class QueryTimeout(RuntimeError):
    """A query ran past its time limit and was interrupted."""


class TraceError(RuntimeError):
    """The file is not a readable, finalized GPUscope trace."""


# SQLite's words (or its extended error name) for what is wrong with a file, and what
# they mean to someone opening a trace; the original message follows in parentheses.
# "attempt to write a readonly database" alone means nothing certain: only the error
# name tells a hot journal (a killed writer) from, say, a WAL file in a read-only
# directory, which is reported in SQLite's words.
_EXPLANATIONS = (
    ("file is not a database", "not an SQLite file"),
    ("no such table", "not a GPUscope trace, or one from another version"),
    ("no such column", "not a GPUscope trace, or one from another version"),
    ("database disk image is malformed", "damaged: SQLite found the file malformed"),
    # Bytes changed in the schema table: SQLite cannot even parse the file's own SQL.
    ("malformed database schema", "damaged: SQLite found the file's schema malformed"),
    ("SQLITE_READONLY_ROLLBACK",
     "a writer was killed in the middle of a batch; `python -m simulator finalize FILE`"
     " repairs the file"),
    ("database is locked", "a writer holds the file; try again when it is done"),
)


def explain(err: sqlite3.Error | OverflowError) -> str:
    """A reader's account of the SQLite error ``err``."""
    text = str(err)
    name = getattr(err, "sqlite_errorname", None)
    for words, meaning in _EXPLANATIONS:
        if words in text or words == name:
            return f"{meaning} ({text})"
    return text


class Connection:
    """A read-only connection whose ``fetch`` calls are time-limited."""

    def __init__(self, path: str | os.PathLike, seconds: float = QUERY_SECONDS) -> None:
        self.path = Path(path)
        self.seconds = seconds
        uri = self.path.resolve().as_uri() + "?mode=ro"
        try:
            self.db = sqlite3.connect(uri, uri=True, check_same_thread=False)
        except sqlite3.Error as err:
            raise TraceError(f"{self.path.name}: cannot open ({err})") from None
        self._cpu_deadline = self._wall_deadline = float("inf")
        self.db.set_progress_handler(self._expired, PROGRESS_STEPS)

    def _expired(self) -> bool:
        # Called by SQLite in the thread running the statement.
        return (time.thread_time() > self._cpu_deadline
                or time.monotonic() > self._wall_deadline)

    def fetch(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """All rows of one statement, interrupted after ``self.seconds`` of its own
        running time (see the module's docstring)."""
        started = time.monotonic()
        self._cpu_deadline = time.thread_time() + self.seconds
        self._wall_deadline = started + WALL_FACTOR * self.seconds
        try:
            return self.db.execute(sql, params).fetchall()
        except sqlite3.OperationalError as err:
            if "interrupt" in str(err):
                if time.monotonic() > self._wall_deadline:
                    raise QueryTimeout(
                        f"{self.path.name}: query stopped after {WALL_FACTOR * self.seconds:g} s"
                        " of waiting (the disk or the server is too slow)") from None
                raise QueryTimeout(
                    f"{self.path.name}: query took longer than {self.seconds:g} s") from None
            raise TraceError(f"{self.path.name}: {explain(err)}") from None
        except (sqlite3.DatabaseError, OverflowError) as err:
            raise TraceError(f"{self.path.name}: {explain(err)}") from None
        finally:
            self._cpu_deadline = self._wall_deadline = float("inf")

    def close(self) -> None:
        self.db.close()


@contextmanager
def open_trace(path: str | os.PathLike, seconds: float = QUERY_SECONDS) -> Iterator[Connection]:
    """A ``Connection`` to ``path`` for the duration of a ``with`` block."""
    conn = Connection(path, seconds)
    try:
        yield conn
    finally:
        conn.close()


def _marks(values: Sequence[object]) -> str:
    """``?, ?, ?`` for binding a list of values (never the values themselves)."""
    return ", ".join("?" * len(values))


# -- run and catalogue -----------------------------------------------------------------
TRACE_FORMAT = 3
"""The ``PRAGMA user_version`` of the trace format these queries read (sqlite_schema.sql)."""

READABLE_FORMATS = (1, 2, 3)
"""Formats the app opens: version 1 lacks links, instants, counters and the time origin,
which then read as empty; version 2 lacks the kernel records' VALU and LDS lane counts,
which the app does not read (see sqlite_schema.sql)."""


def quick_check(db: Connection, limit: int = 10) -> list[str]:
    """What SQLite's ``PRAGMA quick_check`` finds wrong with the file (at most ``limit``
    lines): an empty list for a sound file. It reads every page once, so it takes about
    as long as reading the file."""
    rows = [row[0] for row in db.fetch(f"PRAGMA quick_check({int(limit)})")]
    if rows == ["ok"]:
        return []
    # A row may hold several lines, under a "*** in database main ***" heading.
    return [line for row in rows for line in str(row).splitlines()
            if line.strip() and not line.startswith("***")]


@contextmanager
def snapshot(db: Connection) -> Iterator[Connection]:
    """One read transaction around the statements of a ``with`` block, so they all see
    the file as it was at the first of them: a trace being written grows between two
    statements otherwise (in WAL mode the writer goes on meanwhile)."""
    db.fetch("BEGIN")
    try:
        yield db
    except BaseException:
        # The statement that failed (on a damaged page, say) is the one to report: ending
        # the transaction may fail on the same damage, and must not take its place.
        with suppress(sqlite3.Error):
            db.db.execute("ROLLBACK")
        raise
    db.fetch("COMMIT")


def trace_format(db: Connection) -> int:
    """The trace file's format version (0 for files older than versioning)."""
    return db.fetch("PRAGMA user_version")[0][0]


def run_info(db: Connection) -> dict[str, Any]:
    """The run's metadata row as a dict (workload, config JSON, times, completion; from
    format 2 also the time origin, its clock and the source's metadata JSON)."""
    keys = ("simulator_version", "command", "workload", "config", "seed", "source",
            "virtual_start_ps", "virtual_end_ps", "wall_start", "wall_seconds", "completed",
            "finalized", "open_tasks", "orphan_tasks", "pyramid_base_ps")
    extra = ("time_origin", "clock", "metadata")
    rows = db.fetch("SELECT " + ", ".join(keys + extra if trace_format(db) >= 2 else keys)
                    + " FROM run WHERE id = 1")
    if not rows:
        raise TraceError(f"{db.path.name}: no run row")
    return {**dict.fromkeys(extra), **dict(zip(keys + extra, rows[0]))}


def task_count(db: Connection) -> int:
    """Number of tasks in the trace (the largest key + 1: keys are dense from 0)."""
    return db.fetch("SELECT coalesce(max(id) + 1, 0) FROM task")[0][0]


def locations(db: Connection) -> list[Location]:
    """Every location with its finalize-time statistics, by id (views sort them)."""
    order = "sort_index" if trace_format(db) >= 2 else "NULL"
    return [Location(*r) for r in db.fetch(
        "SELECT id, name, task_count, busy_ps, max_duration_ps, short_duration_ps,"
        " first_start_ps, last_end_ps, pyramid_min_level, " + order
        + " FROM location ORDER BY id")]


def live_locations(db: Connection, base_ps: int) -> list[Location]:
    """Every location of a trace still being written, by id, with what its metric
    pyramid holds so far in place of the statistics finalize writes: ``min_level`` and
    ``complete_level`` are its finest level and the coarsest one holding a finished
    bin (bins are written once final: a coarser bin when its last finer one is);
    ``first_start_ps`` and ``last_end_ps`` bound its finest bins; ``busy_ps`` is the busy
    time of its coarsest finished bins; ``task_count`` is None (not known yet). Levels
    are None where no bin is written yet. Each figure is one probe of metric_bin's key.
    """
    order = "x.sort_index" if trace_format(db) >= 2 else "NULL"
    rows = db.fetch(
        "SELECT x.id, x.name, " + order + ", x.lo, x.hi,"
        " (SELECT min(bin) FROM metric_bin m WHERE m.location = x.id AND m.level = x.lo),"
        " (SELECT max(bin) FROM metric_bin m WHERE m.location = x.id AND m.level = x.lo),"
        " (SELECT sum(busy_ps) FROM metric_bin m WHERE m.location = x.id AND m.level = x.hi)"
        " FROM (SELECT l.*,"
        " (SELECT min(level) FROM metric_bin m WHERE m.location = l.id) AS lo,"
        " (SELECT max(level) FROM metric_bin m WHERE m.location = l.id) AS hi"
        " FROM location l) x ORDER BY x.id")
    out = []
    for key, name, sort_index, lo, hi, first, last, busy in rows:
        if lo is None:
            out.append(Location(key, name, None, None, None, None, None, None, None, sort_index))
            continue
        width = base_ps << lo
        out.append(Location(key, name, None, busy or 0, None, None, first * width,
                            (last + 1) * width, lo, sort_index, hi))
    return out


def finalized(db: Connection) -> bool:
    """Whether the trace is finalized (indexes and statistics built), from its run row."""
    return bool(db.fetch("SELECT finalized FROM run WHERE id = 1")[0][0])


def kinds(db: Connection) -> list[Kind]:
    """Every (category, action) pair: Daisen's (kind, what)."""
    return [Kind(*r) for r in db.fetch("SELECT id, category, action FROM kind ORDER BY id")]


# -- metric pyramid ----------------------------------------------------------------------
def metric_bins(db: Connection, location: int, level: int, first_bin: int,
                end_bin: int) -> list[MetricTuple]:
    """Stored metric_bin rows of one location and level with ``first_bin <= bin < end_bin``,
    as plain tuples in ``MetricRow`` order (the Overview turns them straight into arrays)."""
    return db.fetch(
        "SELECT bin, req_in_started, req_in_ended, req_in_latency_ps, task_ps, buffer_ps,"
        " req_out_ps, busy_ps FROM metric_bin"
        " WHERE location = ? AND level = ? AND bin >= ? AND bin < ? ORDER BY bin",
        (location, level, first_bin, end_bin))


def kind_bins(db: Connection, location: int, level: int, first_bin: int,
              end_bin: int) -> list[tuple[int, int, int, int]]:
    """Per-kind (bin, kind, started, task_ps) rows of one location and level in a bin range."""
    return db.fetch(
        "SELECT bin, kind, started, task_ps FROM metric_kind_bin"
        " WHERE location = ? AND level = ? AND bin >= ? AND bin < ? ORDER BY bin, kind",
        (location, level, first_bin, end_bin))


def kind_levels(db: Connection, location: int) -> tuple[int | None, int | None]:
    """(finest, coarsest) level holding per-kind rows for a location, or (None, None)."""
    # Two single-aggregate statements: SQLite answers each with one index probe.
    finest = db.fetch("SELECT min(level) FROM metric_kind_bin WHERE location = ?", (location,))
    coarsest = db.fetch("SELECT max(level) FROM metric_kind_bin WHERE location = ?", (location,))
    return finest[0][0], coarsest[0][0]


def kind_totals(db: Connection, location: int, level: int) -> list[tuple[int, int, int]]:
    """Per kind (kind, started, task_ps) summed over every bin of one level of a location."""
    return db.fetch(
        "SELECT kind, sum(started), sum(task_ps) FROM metric_kind_bin"
        " WHERE location = ? AND level = ? GROUP BY kind", (location, level))


def location_kind_totals(db: Connection, location: int) -> list[tuple[int, int, int]]:
    """Per kind (kind, tasks, summed duration in ps) of one location, from its raw tasks."""
    return db.fetch(
        "SELECT kind, count(*), sum(end_ps - start_ps) FROM task WHERE location = ?"
        " GROUP BY kind", (location,))


# -- raw tasks ---------------------------------------------------------------------------
def window_tasks(db: Connection, location: int, short_ps: int, t0: int, t1: int,
                 limit: int, ordered: bool = True) -> list[Task]:
    """Tasks of a location lasting at most ``short_ps`` that overlap [t0, t1), in start
    order, at most ``limit`` (not ``ordered``: any ``limit`` of them, in no order).

    ``start_ps >= t0 - short_ps`` bounds the index range scan on (location, start_ps).
    Longer tasks are listed once per location by ``windows``.
    """
    return [Task(*r) for r in db.fetch(
        "SELECT " + TASK_COLUMNS + " FROM task WHERE location = ? AND start_ps >= ?"
        " AND start_ps < ? AND end_ps > ? AND end_ps - start_ps <= ?"
        + (" ORDER BY start_ps" if ordered else "") + " LIMIT ?",
        (location, t0 - short_ps, t1, t0, short_ps, limit))]


def window_task_count(db: Connection, location: int, short_ps: int, t0: int, t1: int,
                      cap: int) -> int:
    """How many tasks lasting at most ``short_ps`` overlap [t0, t1), counting at most ``cap``."""
    return db.fetch(
        "SELECT count(*) FROM (SELECT 1 FROM task WHERE location = ? AND start_ps >= ?"
        " AND start_ps < ? AND end_ps > ? AND end_ps - start_ps <= ? LIMIT ?)",
        (location, t0 - short_ps, t1, t0, short_ps, cap))[0][0]


def window_intervals(db: Connection, location: int, short_ps: int, t0: int,
                     t1: int) -> list[IntervalTuple]:
    """The intervals of a location's tasks lasting at most ``short_ps`` that overlap
    [t0, t1)."""
    return db.fetch(
        "SELECT t.start_ps, t.end_ps, t.kind, coalesce(p.start_ps, -1) FROM task t"
        " LEFT JOIN task p ON p.id = t.parent WHERE t.location = ? AND t.start_ps >= ?"
        " AND t.start_ps < ? AND t.end_ps > ? AND t.end_ps - t.start_ps <= ?",
        (location, t0 - short_ps, t1, t0, short_ps))


def long_tasks(db: Connection, location: int) -> list[tuple[int, int, int]]:
    """(id, start, end) of the location's long tasks (finalize lists them), by start."""
    return db.fetch("SELECT task, start_ps, end_ps FROM long_task WHERE location = ?"
                    " ORDER BY start_ps, task", (location,))


def tasks_by_id(db: Connection, keys: Sequence[int]) -> list[Task]:
    """Full rows of the tasks ``keys`` (a short list), in start order."""
    if not keys:
        return []
    return [Task(*r) for r in db.fetch(
        "SELECT " + TASK_COLUMNS + " FROM task WHERE id IN (" + _marks(keys) + ")"
        " ORDER BY start_ps, id", tuple(keys))]


def intervals_by_id(db: Connection, keys: Sequence[int]) -> list[IntervalTuple]:
    """``window_intervals`` rows for the tasks ``keys`` (a short list)."""
    if not keys:
        return []
    return db.fetch(
        "SELECT t.start_ps, t.end_ps, t.kind, coalesce(p.start_ps, -1) FROM task t"
        " LEFT JOIN task p ON p.id = t.parent WHERE t.id IN (" + _marks(keys) + ")",
        tuple(keys))


def max_request_wait(db: Connection, location: int, req_in_kinds: Sequence[int]) -> int:
    """Longest time a req_in here waited after its parent req_out started, in ps (or 0)."""
    if not req_in_kinds:
        return 0
    return db.fetch(
        "SELECT coalesce(max(t.start_ps - p.start_ps), 0) FROM task t JOIN task p"
        " ON p.id = t.parent WHERE t.location = ? AND t.kind IN (" + _marks(req_in_kinds) + ")",
        (location, *req_in_kinds))[0][0]


def waiting_requests(db: Connection, location: int, req_in_kinds: Sequence[int], t1: int,
                     max_wait_ps: int) -> list[tuple[int, int]]:
    """(parent start, own start) of req_in tasks here starting at or after ``t1`` whose
    wait began before ``t1``: they add buffer pressure to a window ending at ``t1``."""
    if not req_in_kinds or max_wait_ps <= 0:
        return []
    return db.fetch(
        "SELECT p.start_ps, t.start_ps FROM task t JOIN task p ON p.id = t.parent"
        " WHERE t.location = ? AND t.start_ps >= ? AND t.start_ps < ? AND p.start_ps < ?"
        " AND t.kind IN (" + _marks(req_in_kinds) + ")",
        (location, t1, t1 + max_wait_ps, t1, *req_in_kinds))


# -- the task tree -----------------------------------------------------------------------
def task(db: Connection, key: int) -> Task | None:
    """One task by key, or None."""
    rows = db.fetch("SELECT " + TASK_COLUMNS + " FROM task WHERE id = ?", (key,))
    return Task(*rows[0]) if rows else None


def subtasks(db: Connection, key: int, limit: int) -> list[Task]:
    """Children of a task (any location) in start order, at most ``limit``."""
    return [Task(*r) for r in db.fetch(
        "SELECT " + TASK_COLUMNS + " FROM task WHERE parent = ? ORDER BY start_ps, id LIMIT ?",
        (key, limit))]


class Link(NamedTuple):
    """A link beyond the tree, seen from one of its ends: its kind and the other end."""

    kind: str
    task: Task


def task_links(db: Connection, key: int, limit: int) -> tuple[list[Link], list[Link]]:
    """(outgoing, incoming) links of a task (format 2): ``Link(kind, Task)`` of the task at
    the other end, in its start order, at most ``limit`` each way."""
    cols = ", ".join("t." + c.strip() for c in TASK_COLUMNS.split(","))
    out, into = (
        [Link(r[0], Task(*r[1:])) for r in db.fetch(
            "SELECT l.kind, " + cols + " FROM task_link l JOIN task t ON t.id = l." + other
            + " WHERE l." + this + " = ? ORDER BY t.start_ps, t.id LIMIT ?", (key, limit))]
        for this, other in (("src", "dst"), ("dst", "src")))
    return out, into


def instants(db: Connection, location: int, t0: int, t1: int,
             limit: int) -> list[tuple[int, str, str | None, str | None, int | None]]:
    """Markers (time_ps, name, category, details, location) in [t0, t1) at ``location`` and
    those of the whole trace (location NULL), in time order, at most ``limit`` (format 2)."""
    return db.fetch(
        "SELECT time_ps, name, category, details, location FROM instant"
        " WHERE (location = ? OR location IS NULL) AND time_ps >= ? AND time_ps < ?"
        " ORDER BY time_ps, id LIMIT ?", (location, t0, t1, limit))


def counter_series(db: Connection) -> list[tuple[int, int, str, str | None]]:
    """Every counter series (id, location, name, unit), by id (format 2)."""
    return db.fetch("SELECT id, location, name, unit FROM counter_series ORDER BY id")


def counter_bins(db: Connection, series: int, t0: int, width: int,
                 nbins: int) -> list[tuple[int, float]]:
    """Per bin of ``width`` ps from ``t0``: (bin, mean of the samples in it), for the bins
    holding samples; bin -1 carries the last sample before ``t0`` (the value it holds)."""
    end = t0 + width * nbins
    before = db.fetch("SELECT -1, value FROM counter WHERE series = ? AND time_ps < ?"
                      " ORDER BY time_ps DESC LIMIT 1", (series, t0))
    return before + db.fetch(
        "SELECT (time_ps - ?) / ?, avg(value) FROM counter WHERE series = ? AND time_ps >= ?"
        " AND time_ps < ? GROUP BY 1 ORDER BY 1", (t0, width, series, t0, end))


def subtask_count(db: Connection, key: int) -> int:
    """Number of children of a task."""
    return db.fetch("SELECT count(*) FROM task WHERE parent = ?", (key,))[0][0]


def task_tags(db: Connection, key: int) -> list[tuple[int, str]]:
    """(time_ps, step name) of a task's steps (Daisen's task steps, akita tags)."""
    return db.fetch(
        "SELECT g.time_ps, n.name FROM task_tag g JOIN tag_name n ON n.id = g.tag"
        " WHERE g.task = ? ORDER BY g.time_ps", (key,))


# -- kernel records (Klein's views; dashapp/pages/kernel.py) ------------------------------
class KernelLaunch(NamedTuple):
    """A kernel_launch row (see sqlite_schema.sql for each count)."""

    id: int
    source: int
    kernel: str
    global_size: str  # JSON list
    local_size: str  # JSON list
    work_groups: int
    wavefronts: int
    args: str  # JSON object
    lds_bytes: int
    instructions: int
    vector_instructions: int
    active_lanes: int
    partial_instructions: int
    lds_instructions: int
    lds_conflicted: int
    lds_max_degree: int
    watch_truncated: int
    branch_truncated: int


class KernelSource(NamedTuple):
    """A kernel program: its text and its annotations as JSON lists."""

    id: int
    path: str
    text: str
    emits: str
    binds: str


def kernel_launches(db: Connection) -> list[KernelLaunch]:
    """Every kernel launch of the trace, in launch order (empty for traces without kernels)."""
    return [KernelLaunch(*r) for r in db.fetch(
        "SELECT " + ", ".join(KernelLaunch._fields) + " FROM kernel_launch ORDER BY id")]


def kernel_source(db: Connection, source: int) -> KernelSource | None:
    """The program text and annotations of a kernel_source id, or None."""
    rows = db.fetch("SELECT id, path, text, emits, binds FROM kernel_source WHERE id = ?",
                    (source,))
    return KernelSource(*rows[0]) if rows else None


def kernel_arrays(db: Connection, launch: int) -> list[tuple[str, str, str, int, int, int, int]]:
    """(name, space, elem_type, elem_bytes, length, base, watched) of a launch's arrays."""
    return db.fetch("SELECT name, space, elem_type, elem_bytes, length, base, watched"
                    " FROM kernel_array WHERE launch = ? ORDER BY rowid", (launch,))


def kernel_image(db: Connection, launch: int) -> tuple[str, int, int, bytes] | None:
    """(name, width, height, float32 pixel bytes) of the launch's first recorded image, or None."""
    rows = db.fetch("SELECT name, width, height, pixels FROM kernel_image WHERE launch = ?"
                    " ORDER BY rowid LIMIT 1", (launch,))
    return rows[0] if rows else None


ACCESS_COLUMNS = ("seq", "epoch", "work_item", "work_group", "local_id", "kind", "line",
                  "element", "address", "bank")
"""kernel_access columns read by the memory view, in ``dashapp.klein.analysis.ACCESS_FIELDS`` order."""


def kernel_accesses(db: Connection, launch: int, array: str) -> npt.NDArray[np.int64]:
    """Watched accesses to ``array`` plus the launch's barrier rows: an int64 array of one
    row per access, columns in ``ACCESS_COLUMNS`` order.

    A launch has up to 500,000 such rows, and a Python tuple per row is most of the time
    of the memory view; so each column comes back as one comma-separated text, parsed by
    numpy (three times faster). The columns line up because they are aggregated in one
    pass over the same rows, and none is ever NULL (``group_concat`` would skip it).
    """
    texts = db.fetch(
        "SELECT " + ", ".join(f"group_concat({c})" for c in ACCESS_COLUMNS) +
        " FROM kernel_access WHERE launch = ? AND (array = ? OR kind = 2)", (launch, array))[0]
    if texts[0] is None:
        return np.zeros((0, len(ACCESS_COLUMNS)), dtype=np.int64)
    return np.stack([np.fromstring(t, sep=",", dtype=np.int64) for t in texts], axis=1)


def kernel_launch_task(db: Connection, launch: int) -> tuple[int, str, int, int] | None:
    """(task id, location name, start_ps, end_ps) of the 'kernel' task that ran a launch,
    or None when the trace did not record one.

    Kernel tasks sit at the top of the tree (roots, or children of the ``Simulation``
    root), so only those are searched, through the parent index: no scan of all tasks.
    """
    rows = db.fetch(
        "SELECT t.id, l.name, t.start_ps, t.end_ps FROM task t JOIN kind k ON k.id = t.kind"
        " JOIN location l ON l.id = t.location WHERE k.category = 'kernel'"
        " AND json_extract(t.details, '$.launch') = ? AND t.id IN ("
        " SELECT id FROM task WHERE parent IS NULL UNION ALL"
        " SELECT c.id FROM task r JOIN task c ON c.parent = r.id WHERE r.parent IS NULL)"
        " ORDER BY t.id LIMIT 1", (launch,))
    return rows[0] if rows else None


def task_kernel_launch(db: Connection, key: int) -> int | None:
    """The kernel launch id a task belongs to: its own or its nearest ancestor's
    'kernel' task details, walking up at most 8 parents; None if there is none."""
    rows = db.fetch(
        "WITH RECURSIVE up(id, depth) AS (SELECT ?, 0 UNION ALL SELECT t.parent, up.depth + 1"
        " FROM up JOIN task t ON t.id = up.id WHERE t.parent IS NOT NULL AND up.depth < 8)"
        " SELECT json_extract(t.details, '$.launch') FROM up JOIN task t ON t.id = up.id"
        " JOIN kind k ON k.id = t.kind WHERE k.category = 'kernel' ORDER BY up.depth LIMIT 1",
        (key,))
    return rows[0][0] if rows and rows[0][0] is not None else None


def branch_nodes(db: Connection, source: int,
                 kernel: str) -> list[tuple[int, int, str, str, int, int, int]]:
    """Klein's semantic model of one kernel: (id, parent, branch, type, line, col, end_line)."""
    return db.fetch("SELECT id, parent, branch, type, line, col, end_line FROM"
                    " kernel_branch_node WHERE source = ? AND kernel = ? ORDER BY id",
                    (source, kernel))


def branch_patterns(db: Connection, launch: int) -> list[tuple[int, str, str, int]]:
    """(id, bits, nodes, work_items) of a launch's distinct branch bit-streams."""
    return db.fetch("SELECT id, bits, nodes, work_items FROM kernel_branch_pattern"
                    " WHERE launch = ? ORDER BY id", (launch,))


def proxy_warps(db: Connection, launch: int) -> list[tuple[int, int, int, str, int]]:
    """(id, wavefronts, representative, patterns JSON, divergent) of a launch's proxy warps."""
    return db.fetch("SELECT id, wavefronts, representative, patterns, divergent FROM"
                    " kernel_proxy_warp WHERE launch = ? ORDER BY id", (launch,))


def work_item_branches(db: Connection, launch: int) -> list[tuple[int, int, int]]:
    """(work_item, pattern, proxy) of every work-item of a launch with a branch stream."""
    return db.fetch("SELECT work_item, pattern, proxy FROM kernel_branch WHERE launch = ?",
                    (launch,))


def emitted(db: Connection, launch: int, name: str) -> list[tuple[int, float]]:
    """(idx, value) of one @emit series of a launch, by index."""
    return db.fetch("SELECT idx, value FROM kernel_emit WHERE launch = ? AND name = ?"
                    " ORDER BY idx", (launch, name))


# -- comparing runs (dashapp/comparison) ---------------------------------------------------
def tasks_of_kinds(db: Connection, kinds: Sequence[int]) -> list[tuple[int, int, int]]:
    """(kind, start_ps, end_ps) of every task of the given kinds (such as the 'kernel'
    kinds: one row per kernel launch), in start order."""
    if not kinds:
        return []
    return db.fetch("SELECT kind, start_ps, end_ps FROM task WHERE kind IN (" + _marks(kinds) +
                    ") ORDER BY start_ps, id", tuple(kinds))


def tag_counts(db: Connection, names: Sequence[str]) -> list[tuple[int, str, int]]:
    """(location, tag name, count) of the task tags (steps) named ``names``, such as a
    cache's read-hit and read-miss, by the location of the tagged task."""
    if not names:
        return []
    return db.fetch(
        "SELECT t.location, n.name, count(*) FROM tag_name n JOIN task_tag g ON g.tag = n.id"
        " JOIN task t ON t.id = g.task WHERE n.name IN (" + _marks(names) + ")"
        " GROUP BY t.location, n.name", tuple(names))
