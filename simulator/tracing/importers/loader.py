"""Loading foreign traces into our trace format, with bounded memory.

Importers stream what they read into a ``Loader``:

* ``add(ForeignTask)``: a task, with its parent named by the source's text ID;
* ``add_link(src_ext, dst_ext, kind)``: a flow between two tasks named by text ID;
* ``add_flow_point(...)``: one end or step of a flow bound by time on a track (Chrome
  flow v1 events, which name no task: the task is found when everything is staged);
* ``add_instant(...)`` and ``add_counter(...)``: markers and counter samples;
* ``set_clock``, ``set_metadata`` and ``set_location_order``: run metadata.

Every time an importer passes is an exact integer number of picoseconds on the source's
clock, however large (epoch-scale profiles exceed 2**63 ps). The loader stores times
relative to the trace's origin: one the importer declares, or else the earliest event;
the absolute origin becomes ``run.time_origin``.

Rows are staged in a scratch SQLite file beside the output, because a foreign task may
name a parent (or a link may name a task) that appears millions of rows later. Once
everything is staged, IDs are resolved by joins on an index, tasks get dense integer
keys in input order, and the output is finalized like a simulator trace. The output is
written to a temporary file and moved into place only on success, so bad input never
leaves a half-written trace behind.
"""
import json
import sqlite3
from dataclasses import dataclass
from decimal import ROUND_HALF_EVEN, Decimal, InvalidOperation
from pathlib import Path

import numpy as np

from ... import user_input
from ..writer import PendingOutput, TraceError, TraceWriter, remove_trace_files

BATCH = 50_000
# SQLite page cache per database (output and staging), in KiB. It is the import's
# largest memory; 64 MiB imported a 2M-task CSV only 3% faster (14.5 s against 15.0 s)
# at 346 MiB peak instead of 192 MiB, and a cache that small traces never fill makes
# the peak grow with the trace up to the cap.
CACHE_KB = 8 * 1024
PS_PER_SECOND = Decimal(10) ** 12
INT64_MAX = 2 ** 63 - 1
ROWS_COLUMNS = ("seq", "ext_id", "parent_ext", "kind", "location", "start_ps", "end_ps", "details",
                "track", "src", "flags")
# Flow point phases, in the order they chain within one flow.
FLOW_PHASES = {"s": 0, "t": 1, "f": 2}


class TraceFormatError(TraceError):
    """Input that does not follow its format; the message gives the file position."""


@dataclass
class ForeignTask:
    """One task as an importer reads it, before keys are assigned."""

    ext_id: str
    parent_ext: object  # text ID of the parent, or None for a root
    category: str
    action: str
    location: str
    start_ps: int  # on the source's clock, any size
    end_ps: int
    where: str  # file position, for error messages
    details: object = None  # JSON text or None
    track: object = None  # Chrome only: "pid:tid" whose nesting gives the parent
    flags: int = 0  # task.flags: bit 0 = still open when the trace ended (end_ps is its end)


@dataclass
class LoadReport:
    """What a load wrote, and what it had to leave out."""

    tasks: int = 0
    orphans: int = 0  # tasks whose parent ID is not in the input (stored without parent)
    links: int = 0
    unresolved_links: int = 0  # links or flow ends naming no task, or a flow with one end
    instants: int = 0
    counters: int = 0  # counter samples
    duplicates: int = 0  # exact duplicate task rows dropped (set by the importer)


def seconds_to_ps(value, where, column):
    """Exact picoseconds from a number of seconds (decimal text, or a float from SQLite)."""
    return _scaled(value, PS_PER_SECOND, where, column)


def scaled_to_ps(value, ps_per_unit, where, column):
    """Exact picoseconds from a number in some unit (µs in Chrome, ps in akita v5)."""
    return _scaled(value, Decimal(ps_per_unit), where, column)


MAX_TIME_DIGITS = 30
"""Times of more digits of picoseconds (past 10**30 ps, 3e10 years) are refused before
they are converted: no clock reads that far, and 1e999999999 must not become a
billion-digit integer. Smaller times of any size are kept exactly; the loader stores
them relative to the trace's origin, which must fit 64 bits."""


def _scaled(value, factor, where, column):
    number_type = isinstance(value, (int, float)) and not isinstance(value, bool)
    if isinstance(value, float) or (number_type and abs(value) < 2 ** 52):
        # A binary float holds the nearest double to a whole number of picoseconds; for
        # times under ~1000 s its error is far below half a picosecond, so rounding the
        # float product recovers that number exactly (and much faster than Decimal).
        # Past 2**53 a float product is off by more than a picosecond (an epoch-scale
        # time by thousands); below, either path gives the same integer, so the bound
        # sits a factor of two under the limit, and lowering it changes only the speed.
        scaled = value * float(factor)
        if abs(scaled) < 2 ** 52:
            return int(round(scaled))
    try:
        if isinstance(value, Decimal):
            number = value
        elif number_type:
            number = Decimal(value)
        else:
            # Text: ASCII digits only (Decimal would take any script's digits as well).
            number = user_input.decimal(value if isinstance(value, str) else repr(value))
        if not number.is_finite():
            raise InvalidOperation
    except (InvalidOperation, ValueError):
        raise TraceFormatError(f"{where}: {column} is not a number: {value!r}") from None
    if number and number.adjusted() + factor.adjusted() >= MAX_TIME_DIGITS:  # before converting
        raise TraceFormatError(f"{where}: {column} is out of range (past 10**{MAX_TIME_DIGITS}"
                               f" picoseconds): {str(value)[:40]!r}")
    # To the nearest picosecond, halves to even, as ``round`` does on the float path.
    return int((number * factor).to_integral_value(rounding=ROUND_HALF_EVEN))


def decimal_seconds(ps):
    """Exact decimal text of ``ps`` picoseconds in seconds, without trailing zeros."""
    sign = "-" if ps < 0 else ""
    whole, frac = divmod(abs(ps), 10 ** 12)
    return f"{sign}{whole}.{frac:012d}".rstrip("0").rstrip(".") or "0"


def parse_decimal_seconds(text):
    """Exact picoseconds from ``decimal_seconds`` text."""
    return int(Decimal(text) * PS_PER_SECOND)


class Loader:
    """Stages foreign tasks, links, instants and counters, then writes a finalized trace."""

    def __init__(self, out_path, *, source, command, config=None, drop_exact_duplicates=False):
        self.out_path = Path(out_path)
        self.pending = PendingOutput(self.out_path)
        self.tmp_path = self.pending.path
        self.scratch_path = Path(str(self.tmp_path) + ".stage")
        self.writer = None
        try:
            self.writer = TraceWriter(self.tmp_path, command=command, config=config or {},
                                      source=source, workload=None, watchable=False)
            self.db = self.writer.db
            remove_trace_files(self.scratch_path)
            self.db.execute("ATTACH DATABASE ? AS stage", (str(self.scratch_path),))
            self.db.execute("PRAGMA stage.journal_mode=OFF")
            self.db.execute("PRAGMA stage.synchronous=OFF")
            # Staged tasks: seq is the input order from 1 (task key + 1); src the input position.
            self.db.executescript(
                "CREATE TABLE stage.rows (seq INTEGER PRIMARY KEY, ext_id TEXT NOT NULL,"
                " parent_ext TEXT, kind INTEGER, location INTEGER, start_ps INTEGER,"
                " end_ps INTEGER, details TEXT, track TEXT, src, flags INTEGER NOT NULL DEFAULT 0);"
                "CREATE TABLE stage.links (src_ext TEXT NOT NULL, dst_ext TEXT NOT NULL,"
                " kind TEXT NOT NULL);"
                # A flow point is bound to a task by ID (task_ext) or by time on a track
                # (bind: 0 the innermost task enclosing time_ps, 1 the next task to start).
                "CREATE TABLE stage.flow_points (seq INTEGER PRIMARY KEY, flow TEXT NOT NULL,"
                " phase INTEGER NOT NULL, kind TEXT NOT NULL, track TEXT, time_ps INTEGER,"
                " bind INTEGER, task_ext TEXT, task_seq INTEGER);"
                "CREATE TABLE stage.instants (seq INTEGER PRIMARY KEY, location INTEGER,"
                " time_ps INTEGER NOT NULL, name TEXT NOT NULL, category TEXT, details TEXT);"
                "CREATE TABLE stage.counters (series INTEGER NOT NULL, time_ps INTEGER NOT NULL,"
                " value NUMERIC NOT NULL);"
                "CREATE TABLE stage.tags (task_ext TEXT NOT NULL, time_ps INTEGER NOT NULL,"
                " name TEXT NOT NULL);"
                # Found by the sweep over each track: a task's enclosing parent, a point's task.
                "CREATE TABLE stage.nest (child INTEGER PRIMARY KEY, parent INTEGER NOT NULL);"
                "CREATE TABLE stage.bound (point INTEGER PRIMARY KEY, task INTEGER NOT NULL);")
            # Sorts and index builds spill to files, not RAM, once past the page cache (which
            # also bounds the sorter), so memory stays bounded however large the input.
            self.db.execute("PRAGMA temp_store=FILE")
            self.db.execute(f"PRAGMA cache_size=-{CACHE_KB}")
            self.db.execute(f"PRAGMA stage.cache_size=-{CACHE_KB}")
        except BaseException:
            self.abort()  # a full disk, say: leave nothing behind
            raise
        self.locations = {}
        self.kinds = {}
        self.series = {}
        self.dedupe = drop_exact_duplicates  # else any repeated task ID is an error
        self.count = 0
        self.report = LoadReport()
        self._batch, self._links, self._points, self._instants, self._counters = [], [], [], [], []
        self._tags = []
        self._where_prefix = ""
        self._base = None  # absolute time (ps, source clock) that staged times are relative to
        self._origin = None  # declared absolute origin, or None for the earliest event
        self._clock = None
        self._epoch = 0
        self._metadata = None
        self._order = {}

    # -- run metadata ----------------------------------------------------------------
    def set_clock(self, clock, origin_ps=None, epoch_ps=0):
        """Say what clock the source's times are on ('unix', 'simulation' or 'source').

        ``origin_ps``: the source time that becomes relative 0 (default: the earliest
        event); declare it before adding anything. ``epoch_ps``: where the source's time 0
        lies on ``clock`` (Kineto's ``baseTimeNanoseconds``); it may be set at any time
        before ``finish``, as metadata often follows the events.
        """
        self._clock = clock
        self._epoch = int(epoch_ps)
        if origin_ps is not None:
            self._origin = int(origin_ps)
            if self._base is None:
                self._base = self._origin

    def set_metadata(self, metadata):
        """Keep the source's top-level metadata (a JSON-serialisable dict) as run metadata."""
        self._metadata = metadata or None

    def set_location_order(self, name, key):
        """Display order of a location: locations are ranked by ``key`` (any comparable
        tuple) into ``location.sort_index``; those without a key follow, by name."""
        self._location(name)
        self._order[name] = key

    # -- staging ---------------------------------------------------------------------
    def _relative(self, ps, where, column):
        if self._base is None:
            self._base = ps
        rel = ps - self._base
        if not -INT64_MAX <= rel <= INT64_MAX:
            raise TraceFormatError(
                f"{where}: {column} is {rel / 1e12:.3g} s from the trace's first event; a trace"
                f" may span at most {INT64_MAX / 1e12 / 86400:.0f} days")
        return rel

    def _location(self, name):
        loc = self.locations.get(name)
        if loc is None:
            loc = self.locations[name] = len(self.locations)
            self.db.execute("INSERT INTO location (id, name) VALUES (?, ?)", (loc, name))
        return loc

    def add(self, task):
        """Stage one ``ForeignTask`` (validated here, so every importer checks the same things)."""
        self.stage(task.ext_id, task.parent_ext, task.category, task.action, task.location,
                   task.start_ps, task.end_ps, task.where, task.details, task.track, task.flags)

    def stage(self, ext_id, parent_ext, category, action, location, start_ps, end_ps, where,
              details=None, track=None, flags=0):
        """``add`` without building a ``ForeignTask``: the per-event path of streaming readers."""
        if not ext_id:
            raise TraceFormatError(f"{where}: empty task ID")
        if end_ps < start_ps:
            raise TraceFormatError(
                f"{where}: task {ext_id!r} ends ({end_ps} ps) before it starts ({start_ps} ps)")
        loc = self.locations.get(location)
        if loc is None:
            loc = self._location(location)
        kind = self.kinds.get((category, action))
        if kind is None:
            kind = self.kind_id(category, action)
        start = start_ps - self._base if self._base is not None else None
        if start is None or not -INT64_MAX <= start <= INT64_MAX:
            start = self._relative(start_ps, where, "start")
        end = start + (end_ps - start_ps)
        if end > INT64_MAX:  # ts + dur, say: refused as a start that far would be
            self._relative(end_ps, where, "end")
        self._batch.append((ext_id, parent_ext or None, kind, loc, start, end, details, track,
                            where, flags))
        self.count += 1
        if len(self._batch) >= BATCH:
            self._flush()

    def kind_id(self, category, action):
        """The key of a (category, action) pair, interned on first use."""
        pair = (category, action)
        kind = self.kinds.get(pair)
        if kind is None:
            kind = self.kinds[pair] = len(self.kinds)
            self.db.execute("INSERT INTO kind (id, category, action) VALUES (?, ?, ?)",
                            (kind, category, action))
        return kind

    def location_id(self, name):
        """The key of a location, interned on first use."""
        return self._location(name)

    def add_many(self, ext_ids, parents, kinds, locations, starts, ends, lines, where_prefix):
        """Stage many tasks at once: the fast path of columnar readers.

        ``ext_ids`` and ``parents`` are sequences of text (a parent '' or None: a root);
        ``kinds`` and ``locations`` int arrays of ``kind_id``/``location_id`` keys;
        ``starts``/``ends`` int64 arrays of ps on the source's clock; ``lines`` the rows'
        positions, reported as ``where_prefix`` + line. Checks as ``add`` does.
        """
        n = len(ext_ids)
        if not n:
            return
        starts = np.asarray(starts, dtype=np.int64)
        ends = np.asarray(ends, dtype=np.int64)
        lines = np.asarray(lines)
        empty = np.flatnonzero(np.asarray(ext_ids, dtype=object) == "")
        if len(empty):
            raise TraceFormatError(f"{where_prefix}{lines[empty[0]]}: empty task ID")
        backwards = np.flatnonzero(ends < starts)
        if len(backwards):
            i = backwards[0]
            raise TraceFormatError(
                f"{where_prefix}{lines[i]}: task {ext_ids[i]!r} ends ({ends[i]} ps) before it"
                f" starts ({starts[i]} ps)")
        if self._base is None:
            self._base = int(starts[0])
        low, high = int(starts.min()), int(ends.max())
        for value, i in ((low, int(starts.argmin())), (high, int(ends.argmax()))):
            self._relative(value, f"{where_prefix}{lines[i]}", "time")
        base = np.int64(self._base)
        self._where_prefix = where_prefix
        self._flush()
        self.db.execute("BEGIN")
        self.db.executemany(
            "INSERT INTO stage.rows (ext_id, parent_ext, kind, location, start_ps, end_ps, src)"
            " VALUES (?, ?, ?, ?, ?, ?, ?)",
            zip(ext_ids, [p or None for p in parents], np.asarray(kinds).tolist(),
                np.asarray(locations).tolist(), (starts - base).tolist(), (ends - base).tolist(),
                lines.tolist()))
        self.db.execute("COMMIT")
        self.count += n

    def add_link(self, src_ext, dst_ext, kind):
        """A flow from task ``src_ext`` to task ``dst_ext`` (text IDs, resolved at finish;
        one naming a missing task, or a task linked to itself, is dropped and counted)."""
        self._links.append((str(src_ext), str(dst_ext), str(kind)))
        if len(self._links) >= BATCH:
            self._flush()

    def add_flow_point(self, flow, phase, kind, *, time_ps=None, track=None, bind_next=False,
                       task_ext=None, where=""):
        """One point of flow ``flow`` (a key unique to one flow while it is open).

        ``phase`` is 's' (start), 't' (step) or 'f' (finish). The point belongs to task
        ``task_ext`` if given, else to the task on ``track`` enclosing ``time_ps`` (or,
        with ``bind_next``, the next task to start there at or after ``time_ps``).
        Points of one flow are chained in time order into links; a finish ends the flow,
        so an ID used again later starts a new one.
        """
        rel = None if time_ps is None else self._relative(time_ps, where, "ts")
        self._points.append((str(flow), FLOW_PHASES[phase], str(kind), track, rel,
                             int(bool(bind_next)), task_ext))
        if len(self._points) >= BATCH:
            self._flush()

    def add_instant(self, location, time_ps, name, category=None, details=None, where=""):
        """A zero-length marker at ``location`` (None: the whole trace); details JSON text."""
        loc = None if location is None else self._location(location)
        self._instants.append((loc, self._relative(time_ps, where, "ts"), str(name),
                               category, details))
        if len(self._instants) >= BATCH:
            self._flush()

    def add_counter(self, location, name, time_ps, value, unit=None, where=""):
        """One sample of counter ``name`` at ``location``: it holds ``value`` from ``time_ps``
        until its next sample (a later sample at the same time replaces it)."""
        key = (location, name)
        series = self.series.get(key)
        if series is None:
            series = self.series[key] = len(self.series)
            self.db.execute("INSERT INTO counter_series (id, location, name, unit) VALUES (?, ?, ?, ?)",
                            (series, self._location(location), str(name), unit))
        self._counters.append((series, self._relative(time_ps, where, "ts"), value))
        if len(self._counters) >= BATCH:
            self._flush()

    def add_tag(self, task_ext, time_ps, name, where=""):
        """A named step inside task ``task_ext`` (akita tags and milestones), at ``time_ps``."""
        self._tags.append((str(task_ext), self._relative(time_ps, where, "time"), str(name)))
        if len(self._tags) >= BATCH:
            self._flush()

    def _flush(self):
        db = self.db
        db.execute("BEGIN")
        if self._batch:
            db.executemany(
                "INSERT INTO stage.rows (ext_id, parent_ext, kind, location, start_ps, end_ps,"
                " details, track, src, flags) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", self._batch)
        if self._links:
            db.executemany("INSERT INTO stage.links VALUES (?, ?, ?)", self._links)
        if self._points:
            db.executemany(
                "INSERT INTO stage.flow_points (flow, phase, kind, track, time_ps, bind, task_ext)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)", self._points)
        if self._instants:
            db.executemany(
                "INSERT INTO stage.instants (location, time_ps, name, category, details)"
                " VALUES (?, ?, ?, ?, ?)", self._instants)
        if self._counters:
            db.executemany("INSERT INTO stage.counters VALUES (?, ?, ?)", self._counters)
        if self._tags:
            db.executemany("INSERT INTO stage.tags VALUES (?, ?, ?)", self._tags)
        db.execute("COMMIT")
        self._batch, self._links, self._points, self._instants, self._counters = [], [], [], [], []
        self._tags = []

    def rename_location(self, old_name, new_name):
        """Give a staged location its final name (Chrome track names arrive late)."""
        self.db.execute("UPDATE location SET name = ? WHERE id = ?",
                        (new_name, self.locations[old_name]))
        if old_name in self._order:
            self._order[new_name] = self._order.pop(old_name)
        self.locations[new_name] = self.locations.pop(old_name)

    # -- finishing -------------------------------------------------------------------
    def finish(self, show_progress=None):
        """Resolve IDs, links and flows, write everything, finalize and move into place."""
        self._flush()
        db = self.db
        report = self.report
        if not self.count:
            raise TraceFormatError("no tasks found in the input")
        self._index_unique_ids()
        self._resolve_flow_points()
        if db.execute("SELECT 1 FROM stage.rows WHERE track IS NOT NULL LIMIT 1").fetchone():
            self._nest_by_track()
        shift = self._shift()
        report.tasks = self.count
        report.orphans = db.execute(
            "SELECT count(*) FROM stage.rows r WHERE r.parent_ext IS NOT NULL AND NOT EXISTS"
            " (SELECT 1 FROM stage.rows p WHERE p.ext_id = r.parent_ext)").fetchone()[0]
        db.execute("BEGIN")
        db.execute(
            "INSERT INTO task (id, parent, kind, location, start_ps, end_ps, flags, ext_id, details)"
            " SELECT r.seq - 1, coalesce((SELECT p.seq FROM stage.rows p"
            " WHERE p.ext_id = r.parent_ext LIMIT 1),"
            " (SELECT n.parent FROM stage.nest n WHERE n.child = r.seq)) - 1,"
            " r.kind, r.location, r.start_ps - ?1, r.end_ps - ?1, r.flags,"
            " CASE WHEN r.ext_id = CAST(r.seq - 1 AS TEXT) THEN NULL ELSE r.ext_id END, r.details"
            " FROM stage.rows r ORDER BY r.seq", (shift,))
        self._write_links()
        db.execute(
            "INSERT INTO instant (id, location, time_ps, name, category, details)"
            " SELECT seq - 1, location, time_ps - ?, name, category, details FROM stage.instants"
            " ORDER BY seq", (shift,))
        report.instants = db.execute("SELECT count(*) FROM instant").fetchone()[0]
        db.execute(
            "INSERT OR REPLACE INTO counter (series, time_ps, value)"
            " SELECT series, time_ps - ?, value FROM stage.counters ORDER BY rowid", (shift,))
        report.counters = db.execute("SELECT count(*) FROM counter").fetchone()[0]
        db.execute("INSERT INTO tag_name (name) SELECT DISTINCT name FROM stage.tags ORDER BY name")
        db.execute(
            "INSERT INTO task_tag (task, time_ps, tag) SELECT r.seq - 1, g.time_ps - ?, n.id"
            " FROM stage.tags g JOIN stage.rows r ON r.ext_id = g.task_ext"
            " JOIN tag_name n ON n.name = g.name ORDER BY g.rowid", (shift,))
        self._write_run_metadata(shift)
        db.execute("COMMIT")
        db.execute("DETACH DATABASE stage")
        self.scratch_path.unlink()
        self.writer.tasks_written = self.count
        open_tasks = db.execute("SELECT count(*) FROM task WHERE flags & 1").fetchone()[0]
        self.writer.finalize(completed=True, extra_orphans=report.orphans, open_tasks=open_tasks,
                             show_progress=show_progress)
        self.writer.close()
        self.pending.publish()
        return report

    def _shift(self):
        """Staged time that becomes relative 0: the declared origin, or the earliest event
        (also when something lies before a declared origin, so no time is negative)."""
        earliest = min(v for v, in self.db.execute(
            "SELECT min(start_ps) FROM stage.rows UNION ALL SELECT min(time_ps) FROM stage.instants"
            " UNION ALL SELECT min(time_ps) FROM stage.counters UNION ALL"
            " SELECT min(time_ps) FROM stage.tags") if v is not None)
        if self._origin is not None and self._origin - self._base <= earliest:
            return self._origin - self._base
        return earliest

    def _write_run_metadata(self, shift):
        origin = self._epoch + self._base + shift
        order = sorted(self._order, key=lambda name: self._order[name])
        self.db.executemany("UPDATE location SET sort_index = ? WHERE id = ?",
                            [(rank, self.locations[name]) for rank, name in enumerate(order)])
        self.db.execute(
            "UPDATE run SET time_origin = ?, clock = ?, metadata = ? WHERE id = 1",
            (decimal_seconds(origin), self._clock or "source",
             None if self._metadata is None else json.dumps(self._metadata, sort_keys=True,
                                                            default=str)))

    def _write_links(self):
        db = self.db
        staged = db.execute("SELECT count(*) FROM stage.links").fetchone()[0]
        db.execute(
            "INSERT OR IGNORE INTO task_link (src, dst, kind)"
            " SELECT s.seq - 1, d.seq - 1, l.kind FROM stage.links l"
            " JOIN stage.rows s ON s.ext_id = l.src_ext JOIN stage.rows d ON d.ext_id = l.dst_ext"
            " WHERE s.seq != d.seq")
        resolved = db.execute(
            "SELECT count(*) FROM stage.links l WHERE l.src_ext != l.dst_ext AND EXISTS"
            " (SELECT 1 FROM stage.rows s WHERE s.ext_id = l.src_ext) AND EXISTS"
            " (SELECT 1 FROM stage.rows d WHERE d.ext_id = l.dst_ext)").fetchone()[0]
        self.report.unresolved_links += staged - resolved
        # Flow points, bound to tasks, chain into links in time order within each flow;
        # a finish closes the flow, so its ID may start another one later.
        cursor = db.execute(
            "SELECT f.flow, f.phase, f.kind, f.task_seq FROM stage.flow_points f"
            " LEFT JOIN stage.rows r ON r.seq = f.task_seq"
            " ORDER BY f.flow, coalesce(f.time_ps, r.start_ps), f.phase, f.seq")
        links, current, previous, unmatched = [], None, None, 0
        for flow, phase, kind, task in cursor:
            if flow != current:
                unmatched += previous is not None
                current, previous = flow, None
            if task is None:  # bound to nothing: the flow cannot pass through it
                unmatched += 1
                continue
            if previous is not None and previous != task:
                links.append((previous - 1, task - 1, kind))
            elif previous is None and phase == FLOW_PHASES["f"]:
                unmatched += 1  # a finish without its start
            previous = None if phase == FLOW_PHASES["f"] else task
        unmatched += previous is not None
        db.executemany("INSERT OR IGNORE INTO task_link (src, dst, kind) VALUES (?, ?, ?)", links)
        self.report.unresolved_links += unmatched
        self.report.links = db.execute("SELECT count(*) FROM task_link").fetchone()[0]

    def _resolve_flow_points(self):
        """Flow points that name their task by ID get its staged key."""
        self.db.execute("BEGIN")
        self.db.execute(
            "UPDATE stage.flow_points SET task_seq = (SELECT r.seq FROM stage.rows r"
            " WHERE r.ext_id = stage.flow_points.task_ext) WHERE task_ext IS NOT NULL")
        self.db.execute("COMMIT")

    def _index_unique_ids(self):
        try:
            self.db.execute("CREATE UNIQUE INDEX stage.rows_ext ON rows (ext_id)")
            return
        except sqlite3.IntegrityError:
            if not self.dedupe:
                dup = self.db.execute(
                    "SELECT ext_id, min(seq), max(seq) FROM stage.rows GROUP BY ext_id"
                    " HAVING count(*) > 1 LIMIT 1").fetchone()
                first, again = (self._source(seq) for seq in dup[1:])
                raise TraceFormatError(f"{again}: duplicate task ID {dup[0]!r} (first at {first})") from None
        self._drop_exact_duplicates()
        self.db.execute("CREATE UNIQUE INDEX stage.rows_ext ON rows (ext_id)")

    def _source(self, seq):
        """The input position of staged row ``seq`` (``add_many`` stores line numbers)."""
        src = self.db.execute("SELECT src FROM stage.rows WHERE seq = ?", (seq,)).fetchall()[0][0]
        return f"{self._where_prefix}{src}" if isinstance(src, int) else src

    def _drop_exact_duplicates(self):
        """Drop rows that repeat an earlier row field for field (akita's CSV writer does);
        a repeated ID with different fields is an error naming both positions. The rows
        left are renumbered densely, so task keys stay dense."""
        db = self.db
        db.execute("CREATE INDEX stage.rows_ext_any ON rows (ext_id, seq)")
        same = ("f.parent_ext IS r.parent_ext AND f.kind = r.kind AND f.location = r.location"
                " AND f.start_ps = r.start_ps AND f.end_ps = r.end_ps AND f.details IS r.details")
        differing = db.execute(
            "SELECT f.seq, r.seq, r.ext_id FROM stage.rows r JOIN stage.rows f"
            f" ON f.ext_id = r.ext_id AND f.seq < r.seq WHERE NOT ({same})"
            " ORDER BY r.seq LIMIT 1").fetchall()  # fetchall: no statement left open
        if differing:
            first, again, ext = differing[0]
            raise TraceFormatError(
                f"{self._source(again)}: task ID {ext!r} again with different fields"
                f" (first at {self._source(first)})")
        db.execute("BEGIN")
        dropped = db.execute(
            "DELETE FROM stage.rows WHERE seq IN (SELECT r.seq FROM stage.rows r JOIN stage.rows f"
            f" ON f.ext_id = r.ext_id AND f.seq < r.seq WHERE {same})").rowcount
        db.execute("DROP INDEX stage.rows_ext_any")
        # (not ALTER TABLE RENAME: it leaves the main file locked against the checkpoint)
        rest = ", ".join(ROWS_COLUMNS[1:])
        db.execute(f"CREATE TABLE stage.rows_sparse AS SELECT {rest} FROM stage.rows ORDER BY seq")
        db.execute("DELETE FROM stage.rows")
        db.execute(f"INSERT INTO stage.rows ({rest}) SELECT {rest} FROM stage.rows_sparse ORDER BY rowid")
        db.execute("DROP TABLE stage.rows_sparse")
        db.execute("COMMIT")
        self.count -= dropped
        self.report.duplicates += dropped

    def _nest_by_track(self):
        """Parent = innermost enclosing task on the same Chrome track (pid:tid); flow points
        bound by time take the innermost task enclosing them, or the next one to start.

        One sweep over the tasks in (track, start) order, read through an index; what
        it finds goes to side tables in batches, so memory holds one track's open stack.
        """
        db = self.db
        db.execute("CREATE INDEX stage.rows_track ON rows (track, start_ps, end_ps DESC, seq)"
                   " WHERE track IS NOT NULL")
        tasks = db.execute(
            "SELECT seq, track, start_ps, end_ps, parent_ext IS NULL FROM stage.rows"
            " INDEXED BY rows_track WHERE track IS NOT NULL"
            " ORDER BY track, start_ps, end_ps DESC, seq")
        # Flow ends are few next to tasks (about one per launch), so they fit in memory.
        enclosing, following = (db.execute(
            "SELECT track, time_ps, seq FROM stage.flow_points WHERE track IS NOT NULL"
            " AND bind = ? ORDER BY track, time_ps, seq", (bind,)).fetchall() for bind in (0, 1))
        nest, bound = [], []  # (child, parent) and (point, task), written in batches
        stack, current, e, f = [], None, 0, 0

        def bind_enclosed(before):
            # Points of the current track before ``before``: the innermost task around them.
            nonlocal e
            while e < len(enclosing) and enclosing[e][0] == current and enclosing[e][1] < before:
                _, time, point = enclosing[e]
                for task, end in reversed(stack):
                    if end >= time:
                        bound.append((point, task))
                        break
                e += 1

        def save():
            db.execute("BEGIN")
            db.executemany("INSERT INTO stage.nest VALUES (?, ?)", nest)
            db.executemany("INSERT INTO stage.bound VALUES (?, ?)", bound)
            db.execute("COMMIT")
            nest.clear()
            bound.clear()

        for seq, track, start, end, free in tasks:
            if track != current:
                bind_enclosed(float("inf"))
                stack, current = [], track
                while e < len(enclosing) and enclosing[e][0] < track:
                    e += 1  # on a track without tasks: bound to nothing
                while f < len(following) and following[f][0] < track:
                    f += 1
            bind_enclosed(start)
            while f < len(following) and following[f][0] == track and following[f][1] <= start:
                bound.append((following[f][2], seq))
                f += 1
            while stack and stack[-1][1] <= start:
                stack.pop()
            if free and stack and end <= stack[-1][1]:
                nest.append((seq, stack[-1][0]))
            stack.append((seq, end))
            if len(nest) >= BATCH:
                save()
        bind_enclosed(float("inf"))
        save()
        db.execute("BEGIN")
        db.execute("UPDATE stage.flow_points SET task_seq = (SELECT b.task FROM stage.bound b"
                   " WHERE b.point = stage.flow_points.seq) WHERE task_seq IS NULL")
        db.execute("COMMIT")

    def abort(self):
        """Remove every temporary file; the output path is left untouched."""
        if self.writer is not None:
            try:
                self.writer.close()
            except sqlite3.Error:
                pass
        self.pending.discard()
        remove_trace_files(self.scratch_path)
