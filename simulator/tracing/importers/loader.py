"""Loading foreign traces into our trace format, with bounded memory.

Importers stream what they read into a ``Loader``:

* ``add(ForeignTask)`` (or ``stage``, or ``add_many`` for a block of columns): a task,
  with its parent named by the source's text ID;
* ``add_link(src_ext, dst_ext, kind)``: a flow between two tasks named by text ID;
* ``add_flow_point(...)``: one end or step of a flow bound by time on a track (Chrome
  flow v1 events, which name no task: the task is found when everything is staged);
* ``add_instant(...)`` and ``add_counter(...)``: markers and counter samples;
* ``set_clock``, ``set_metadata`` and ``set_location_order``: run metadata.

Every time an importer passes is an exact integer number of picoseconds on the source's
clock, however large (epoch-scale profiles exceed 2**63 ps). The loader stores times
relative to the trace's origin: one the importer declares, or else the earliest event;
the absolute origin becomes ``run.time_origin``.

A foreign task may name a parent (or a link may name a task) that appears millions of
rows later, so tasks pass through an ID window (``ids``), which resolves the IDs named
near each other; a scratch SQLite file beside the output (``stage``) settles the rest by
joins on an index of every ID's hash. Tasks get dense integer keys in input order.

Where times are final as they are read (the importer declared the origin first: Daisen
CSV, akita, Nsight Systems), the tasks go *direct*: through the trace writer's bulk
path into the output as the window lets them go, feeding the metric pyramid as they
come, and the few parents found later are set in place. Otherwise (Chrome: the origin is
the earliest event, and parents come from nesting on tracks) they are staged in the
scratch file, and once everything is read one pass takes them back in key order through
the same bulk path. Something that needs every task first on the direct path (a track, a
time before the origin, a repeated ID to drop) stages what was written and goes on so.
Settled blocks are stored by a writer thread while the next one is read: SQLite's part
of an insert runs without the GIL. The output is then finalized like a simulator trace.
It is written to a temporary file and moved into place only on success, so bad input
never leaves a half-written trace behind.
"""
import sqlite3
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ... import build
from ..writer import SORTER_THREADS, PendingOutput, TraceWriter, remove_trace_files
from . import ids
from .ids import NO_TIME, Block, IdWindow
from .stage import FLOW_PHASES, Stage
from .values import (
    MAX_TIME_DIGITS,
    TraceFormatError,
    decimal_seconds,
    details_json,
    parse_decimal_seconds,
    scaled_to_ps,
    seconds_to_ps,
)

__all__ = ["ForeignTask", "LoadReport", "Loader", "TraceFormatError", "MAX_TIME_DIGITS",
           "decimal_seconds", "parse_decimal_seconds", "scaled_to_ps", "seconds_to_ps"]

_bulk = build.module("simulator.tracing._bulk")
TrackSweep = build.module("simulator.tracing.importers._nesting").TrackSweep

BATCH = 50_000
# SQLite page cache of the loader's connection (output and staging), in KiB: it bounds
# the sorts and index builds of the scratch database, which spill to files past it. It
# is the import's largest memory, and a cache that small traces never fill makes the
# peak grow with the trace up to the cap: at 8 MiB a 2M-task CSV peaked 21 MiB above a
# 200k-task one, at 2 MiB 11 MiB, and imported as fast (64 MiB was only 3% faster).
CACHE_KB = 2 * 1024
INT64_MAX = 2 ** 63 - 1
# Events the metric pyramid may hold in flight (32 bytes each) while tasks are read back
# in key order; past it they are fed again in the order of their first events.
PYRAMID_BUDGET = 1 << 19


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


class Loader:
    """Stages foreign tasks, links, instants and counters, then writes a finalized trace."""

    def __init__(self, out_path, *, source, command, config=None, drop_exact_duplicates=False):
        self.out_path = Path(out_path)
        self.pending = PendingOutput(self.out_path)
        self.tmp_path = self.pending.path
        self.scratch_path = Path(str(self.tmp_path) + ".stage")
        self.writer = self.stage_db = self.db = self._writer_thread = self._storing = None
        try:
            self.writer = TraceWriter(self.tmp_path, command=command, config=config or {},
                                      source=source, workload=None, watchable=False)
            self.db = self.writer.db
            remove_trace_files(self.scratch_path)
            self.db.execute("ATTACH DATABASE ? AS stage", (str(self.scratch_path),))
            self.db.execute("PRAGMA stage.journal_mode=OFF")
            self.db.execute("PRAGMA stage.synchronous=OFF")
            # Sorts and index builds spill to files, not RAM, once past the page cache (which
            # also bounds the sorter), so memory stays bounded however large the input.
            self.db.execute("PRAGMA temp_store=FILE")
            self.db.execute(f"PRAGMA cache_size=-{CACHE_KB}")
            self.db.execute(f"PRAGMA stage.cache_size=-{CACHE_KB}")
            self.stage_db = Stage(self.db, self.scratch_path, _bulk)
        except BaseException:
            self.abort()  # a full disk, say: leave nothing behind
            raise
        self.locations = {}
        self.kinds = {}
        self.series = {}
        self.tracks = {}
        self.dedupe = drop_exact_duplicates  # else any repeated task ID is an error
        self.unique_ids = False  # the importer made every ID itself (``declare_unique_ids``)
        self.direct = None  # tasks go straight into the output (decided by the first block)
        self._feeding = self.writer.incremental_pyramid  # the direct path feeds the pyramid
        self._declared_kinds = 0
        self.window = IdWindow(self._staged, self._where, dedupe=drop_exact_duplicates)
        self._writer_thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="import-writer")
        self.report = LoadReport()
        self._batch, self._links, self._points, self._instants, self._counters = [], [], [], [], []
        self._tags = []
        self._where_prefix = ""
        self._base = None  # absolute time (ps, source clock) that staged times are relative to
        self._origin = None  # declared absolute origin, or None for the earliest event
        self._earliest = None  # earliest staged time (relative to _base)
        self._open_tasks = 0
        self._clock = None
        self._epoch = 0
        self._metadata = None
        self._order = {}

    @property
    def count(self):
        """Tasks staged so far (repeats dropped)."""
        window = self.window
        return window.next_seq - 1 + window.waiting_rows + len(self._batch) - self.stage_db.dropped

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

    def declare_unique_ids(self):
        """Say that the importer made every task ID itself, never twice (Chrome's serial
        numbers): the IDs need not be checked for repeats."""
        self.unique_ids = True

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
            origin = "first event" if self._origin is None else "time origin"
            raise TraceFormatError(
                f"{where}: {column} is {rel / 1e12:.3g} s from the trace's {origin}; a trace"
                f" may span at most {INT64_MAX / 1e12 / 86400:.0f} days")
        return rel

    def _note(self, rel):
        if self._earliest is None or rel < self._earliest:
            self._earliest = rel
        return rel

    def _location(self, name):
        loc = self.locations.get(name)
        if loc is None:
            loc = self.locations[name] = len(self.locations)
            self.db.execute("INSERT INTO location (id, name) VALUES (?, ?)", (loc, name))
        return loc

    @property
    def time_base(self):
        """The absolute time (ps, source clock) staged times are relative to; None until
        the first time is staged (or an origin declared)."""
        return self._base

    def track_id(self, track):
        """The key of a Chrome track (``"pid:tid"``), interned on first use."""
        return self._track(track)

    def _track(self, track):
        if track is None:
            return -1
        key = self.tracks.get(track)
        if key is None:
            key = self.tracks[track] = len(self.tracks)
        return key

    def _where(self, src):
        return f"{self._where_prefix}{src}" if isinstance(src, int) else src

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
        track_key = -1 if track is None else self.tracks.get(track)
        if track_key is None:
            track_key = self._track(track)
        self._batch.append((ext_id, parent_ext or None, kind, loc, start, end, flags, track_key,
                            details, where))
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
        ext_ids, parents = _ids(ext_ids, parents, lines, where_prefix)
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
        self._add_block(Block(
            ext=ext_ids, parent=parents, kind=np.asarray(kinds, dtype=np.int64),
            location=np.asarray(locations, dtype=np.int64), start=starts - base, end=ends - base,
            flags=np.zeros(n, dtype=np.int64), track=np.full(n, -1, dtype=np.int64),
            details=np.full(n, None, dtype=object), src=np.asarray(lines.tolist(), dtype=object)))

    def add_relative(self, base, ext_ids, kinds, locations, starts, ends, tracks, details, lines,
                     where_prefix, parents=None):
        """Stage a block of tasks whose times are already relative to ``base`` (the loader's
        ``time_base``, or the base to take if it has none) and checked, as the Chrome
        slice reader gives them: ``kinds``, ``locations`` and ``tracks`` int arrays of
        ``kind_id``/``location_id``/``track_id`` keys, ``details`` texts or None,
        ``lines`` positions reported as ``where_prefix`` + line; ``parents`` the text ID
        of each one's parent ('' or None: a root), or None where they name none."""
        n = len(ext_ids)
        if self._base is None:
            self._base = base
        elif base != self._base:
            raise ValueError(f"times relative to {base}, not to the loader's {self._base}")
        ext_ids, parents = _ids(ext_ids, parents, lines, where_prefix)
        self._where_prefix = where_prefix
        self._flush()
        self._add_block(Block(
            ext=ext_ids, parent=parents,
            kind=np.asarray(kinds, dtype=np.int64), location=np.asarray(locations, dtype=np.int64),
            start=np.asarray(starts, dtype=np.int64), end=np.asarray(ends, dtype=np.int64),
            flags=np.zeros(n, dtype=np.int64), track=np.asarray(tracks, dtype=np.int64),
            details=_objects(details), src=np.asarray(lines.tolist(), dtype=object)))

    def _add_block(self, block):
        self._note(int(block.start.min()))
        self._open_tasks += int(np.count_nonzero(block.flags & 1))
        self.window.add(block)

    def _staged(self, block, wanted):
        """A block the ID window has settled: straight into the output while no task needs
        another order or time (``direct``), else into the scratch database; written by
        the writer thread while the next block is read."""
        if self.direct is None:
            # Times are final when the origin was declared before any time was read.
            self.direct = self._origin is not None and self._origin == self._base
        if self.direct and (block.track >= 0).any():
            self._stage_everything()  # nesting on tracks needs every task first
        kinds = list(self.kinds.items())[self._declared_kinds:] if self.direct else []
        self._declared_kinds += len(kinds)
        previous = self._storing
        self._storing = self._writer_thread.submit(self._store, block, wanted, self.direct, kinds)
        if previous is not None:
            # One block waits while another is stored (memory stays bounded); a failure
            # to store (a full disk) is raised here.
            previous.result()

    def _written(self):
        """Wait until the writer thread has stored every block given to it."""
        storing, self._storing = self._storing, None
        if storing is not None:
            storing.result()

    def _store(self, block, wanted, direct, kinds):
        """The writer thread's part of ``_staged``: ``kinds`` are the (category, action)
        pairs new since the last block."""
        self.stage_db.add_block(block, wanted, rows=not direct)
        if direct:
            self._write_direct(block, kinds)

    def _write_direct(self, block, kinds):
        """Write a block into the output, its parents as the ID window found them (fix-ups
        are set at the end), and feed it to the metric pyramid."""
        writer = self.writer
        keys = block.seq - 1
        tasks = np.ascontiguousarray(np.column_stack([
            keys, np.where(block.parent_seq > 0, block.parent_seq - 1, -1), block.kind,
            block.location, block.start, block.end, block.flags]))
        writer.write_imported(tasks, _unless_key(block.ext, keys), block.details.tolist())
        if self._feeding:
            if kinds:
                writer.declare_kinds([(key, category, action) for (category, action), key in kinds])
            parent_starts = np.where(block.pstart == NO_TIME, -1, block.pstart)
            self._feeding = writer.feed_pyramid(tasks, parent_starts) <= PYRAMID_BUDGET

    def _stage_everything(self):
        """Leave the direct path: what it wrote goes back into the scratch database."""
        self._written()
        self.stage_db.take_back(NO_TIME)
        self.writer.forget_imported()
        self.direct = False

    def add_link(self, src_ext, dst_ext, kind):
        """A flow from task ``src_ext`` to task ``dst_ext`` (text IDs, resolved at finish;
        one naming a missing task, or a task linked to itself, is dropped and counted)."""
        src_ext, dst_ext = str(src_ext), str(dst_ext)
        self._links.append((ids.HASH(src_ext), src_ext, ids.HASH(dst_ext), dst_ext, str(kind)))
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
        task_ext = None if task_ext is None else str(task_ext)
        self._points.append((str(flow), FLOW_PHASES[phase], str(kind),
                             None if track is None else self._track(track), rel,
                             int(bool(bind_next)), None if task_ext is None else ids.HASH(task_ext),
                             task_ext))
        if len(self._points) >= BATCH:
            self._flush()

    def add_instant(self, location, time_ps, name, category=None, details=None, where=""):
        """A zero-length marker at ``location`` (None: the whole trace); details JSON text."""
        loc = None if location is None else self._location(location)
        self._instants.append((loc, self._note(self._relative(time_ps, where, "ts")), str(name),
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
        self._counters.append((series, self._note(self._relative(time_ps, where, "ts")), value))
        if len(self._counters) >= BATCH:
            self._flush()

    def add_tag(self, task_ext, time_ps, name, where=""):
        """A named step inside task ``task_ext`` (akita tags and milestones), at ``time_ps``."""
        task_ext = str(task_ext)
        self._tags.append((ids.HASH(task_ext), task_ext,
                           self._note(self._relative(time_ps, where, "time")), str(name)))
        if len(self._tags) >= BATCH:
            self._flush()

    def _flush(self):
        if self._batch:
            batch, self._batch = self._batch, []
            ext, parent, kind, loc, start, end, flags, track, details, src = zip(*batch)
            self._add_block(Block(
                ext=_objects(ext), parent=_objects(parent), kind=np.array(kind, dtype=np.int64),
                location=np.array(loc, dtype=np.int64), start=np.array(start, dtype=np.int64),
                end=np.array(end, dtype=np.int64), flags=np.array(flags, dtype=np.int64),
                track=np.array(track, dtype=np.int64), details=_objects(details), src=_objects(src)))
        db = self.db
        if not (self._links or self._points or self._instants or self._counters or self._tags):
            return
        db.execute("BEGIN")
        if self._links:
            db.executemany("INSERT INTO stage.links VALUES (?, ?, ?, ?, ?)", self._links)
        if self._points:
            db.executemany(
                "INSERT INTO stage.flow_points (flow, phase, kind, track, time_ps, bind, task_h,"
                " task_ext) VALUES (?, ?, ?, ?, ?, ?, ?, ?)", self._points)
        if self._instants:
            db.executemany(
                "INSERT INTO stage.instants (location, time_ps, name, category, details)"
                " VALUES (?, ?, ?, ?, ?)", self._instants)
        if self._counters:
            db.executemany("INSERT INTO stage.counters VALUES (?, ?, ?)", self._counters)
        if self._tags:
            db.executemany("INSERT INTO stage.tags VALUES (?, ?, ?, ?)", self._tags)
        db.execute("COMMIT")
        self._links, self._points, self._instants, self._counters, self._tags = [], [], [], [], []

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
        self.window.close()
        self._written()
        db, stage, report = self.db, self.stage_db, self.report
        if not self.count:
            raise TraceFormatError("no tasks found in the input")
        shift = self._shift()
        if self.direct and shift:
            self._stage_everything()  # something came before the declared origin
        # The input is read: SQLite's sorter may use the cores for the index builds (the
        # ID index, then finalize's).
        db.execute(f"PRAGMA threads={SORTER_THREADS}")
        distinct = True
        if not self.unique_ids or stage.looks_up_ids():
            distinct = stage.index_ids()
        if not distinct:
            if self.direct:
                self._stage_everything()  # dropping a repeat closes up the keys after it
            stage.drop_far_repeats(self.dedupe, self._where)
        report.duplicates += self.window.dropped + stage.dropped
        stage.name_tasks(self.direct)
        report.orphans = stage.resolve_fixups(self.direct)
        stage.resolve_task_points()
        nested = bool(self.tracks) and not self.direct and db.execute(
            "SELECT 1 FROM stage.rows WHERE track >= 0 LIMIT 1").fetchone() is not None
        if nested:
            stage.nest_by_track(TrackSweep)
        report.tasks = self.count
        if self.direct:
            # A req_in whose parent a fix-up found waited from a start the pyramid did not know.
            self.writer.redo_pyramid(stage.found_locations(
                [key for (category, _), key in self.kinds.items() if category == "req_in"]))
        else:
            self._write_tasks(shift, nested)
        db.execute("BEGIN")
        report.links, unresolved = stage.write_links()
        report.unresolved_links += unresolved
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
            f"INSERT INTO task_tag (task, time_ps, tag) SELECT {stage.key_sql('r.seq')},"
            " g.time_ps - ?, n.id FROM stage.tags g"
            " JOIN stage.named r ON r.h = g.task_h AND r.ext_id = g.task_ext"
            " JOIN tag_name n ON n.name = g.name ORDER BY g.rowid", (shift,))
        self._write_run_metadata(shift)
        db.execute("COMMIT")
        stage.close()
        db.execute("DETACH DATABASE stage")
        self.scratch_path.unlink()
        self._writer_thread.shutdown()
        self.writer.finalize(completed=True, extra_orphans=report.orphans,
                             open_tasks=self._open_tasks, show_progress=show_progress)
        self.writer.close()
        self.pending.publish()
        return report

    def _shift(self):
        """Staged time that becomes relative 0: the declared origin, or the earliest event
        (also when something lies before a declared origin, so no time is negative)."""
        earliest = self._earliest
        if self._origin is not None and self._origin - self._base <= earliest:
            return self._origin - self._base
        return earliest

    def _write_tasks(self, shift, nested):
        """Every task, read back in key order, through the writer's bulk path; the metric
        pyramid is built from the same pass unless the tasks' order holds too many of them
        in flight (``PYRAMID_BUDGET``), when it is fed again in the order of their first
        events, sorted on disk."""
        writer = self.writer
        writer.declare_kinds([(key, category, action) for (category, action), key in self.kinds.items()])
        feeding = writer.incremental_pyramid
        for rows, ext_ids, details in self.stage_db.tasks(nested):
            tasks, parent_starts = _shifted(rows, shift)
            writer.write_imported(tasks, ext_ids, details)
            if feeding:
                feeding = writer.feed_pyramid(tasks, parent_starts) <= PYRAMID_BUDGET
        if feeding or not writer.incremental_pyramid:
            return
        writer.restart_pyramid()
        waits = [key for (category, _), key in self.kinds.items() if category == "req_in"]
        for rows, _, _ in self.stage_db.tasks(nested, first_event_of=waits):
            order = np.argsort(rows[:, 0], kind="stable")  # a batch is given in key order
            writer.feed_pyramid(*_shifted(rows[order], shift))

    def _write_run_metadata(self, shift):
        origin = self._epoch + self._base + shift
        order = sorted(self._order, key=lambda name: self._order[name])
        self.db.executemany("UPDATE location SET sort_index = ? WHERE id = ?",
                            [(rank, self.locations[name]) for rank, name in enumerate(order)])
        self.db.execute(
            "UPDATE run SET time_origin = ?, clock = ?, metadata = ? WHERE id = 1",
            (decimal_seconds(origin), self._clock or "source",
             None if self._metadata is None else details_json(self._metadata)))

    def abort(self):
        """Remove every temporary file; the output path is left untouched."""
        if self.db is not None and self.db.in_transaction:  # a batch of links cut short
            try:
                self.db.execute("ROLLBACK")  # its lock would hold up the writer thread
            except sqlite3.Error:
                pass
        if self._storing is not None:
            wait([self._storing])  # its error, if any, is not the one to report
        if self._writer_thread is not None:
            self._writer_thread.shutdown()
        for part in (self.stage_db, self.writer):
            if part is not None:
                try:
                    part.close()
                except sqlite3.Error:
                    pass
        self.pending.discard()
        remove_trace_files(self.scratch_path)


def _shifted(rows, shift):
    """Staged rows (``Stage.tasks``) as task rows and parent starts, ``shift`` earlier."""
    rows[:, 4:6] -= shift
    parent_starts = np.where(rows[:, 7] == NO_TIME, -1, rows[:, 7] - shift)
    return np.ascontiguousarray(rows[:, :7]), parent_starts


def _unless_key(ext_ids, keys):
    """The IDs, None where an ID is its task's key written out (``task.ext_id`` NULL)."""
    lengths = np.fromiter(map(len, ext_ids), dtype=np.int64, count=len(ext_ids))
    digits = np.searchsorted(_POWERS_OF_TEN, keys, side="right")  # of each key, 0 having 1
    maybe = np.flatnonzero(lengths == np.maximum(digits, 1))
    out = ext_ids.copy()
    if len(maybe):
        same = out[maybe] == keys[maybe].astype(str).astype(object)
        out[maybe[same]] = None
    return out.tolist()


_POWERS_OF_TEN = 10 ** np.arange(19, dtype=np.int64)


def _ids(ext_ids, parents, lines, where_prefix):
    """``ext_ids`` and ``parents`` (None: no task names one) as object arrays, a parent ''
    as None; an empty task ID is refused at its line."""
    ext_ids = _objects(ext_ids)
    empty = np.flatnonzero(ext_ids == "")
    if len(empty):
        raise TraceFormatError(f"{where_prefix}{lines[empty[0]]}: empty task ID")
    parents = np.full(len(ext_ids), None, dtype=object) if parents is None else _objects(parents)
    parents[np.equal(parents, "")] = None
    return ext_ids, parents


def _objects(values):
    """An object array of ``values`` (a tuple), never a 2-D one."""
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out
