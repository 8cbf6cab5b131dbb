"""The loader's scratch database: everything staged, and the joins that settle what the
ID window left open, in memory bounded however large the input.

It is a file beside the output, attached to the loader's connection as ``stage``. Rows
come in bulk through a connection of their own:

* ``ids``: every task's ``seq`` (input order from 1: the task's key + 1 unless repeats
  are dropped later), its ID's hash ``h`` and its input position. Indexed on ``h`` once
  everything is staged, it finds the repeats the window did not see and every task named
  by ID (fix-ups, links, flow points, tags): those are gathered with their ID text in
  ``named`` first, and every match is confirmed on the text;
* ``rows``: the tasks themselves, unless the loader writes them straight into the output
  (then the output's task table is where their IDs are read). ``parent`` is the parent's
  seq where the ID window found it, ``NO_PARENT`` where the task names none and
  ``UNRESOLVED`` where it names one that was not found near it (its ``fixups`` row says
  which); ``pstart`` the parent's start (``NO_TIME`` if unknown); ``track`` the interned
  Chrome track (-1 for none), whose nesting gives the parent of a task that names none
  (``nest``, filled by ``nesting``'s sweep).

Repeated IDs found here go to ``dropped`` (each with the row it repeats and its rank
among the dropped), and the keys of the rows after them close up.
"""
import sqlite3

import numpy as np

from .ids import NO_TIME, hashes
from .values import TraceFormatError

NO_PARENT, UNRESOLVED = -1, -2
# Flow point phases, in the order they chain within one flow.
FLOW_PHASES = {"s": 0, "t": 1, "f": 2}
READ_BLOCK = 16_384
INSERT_IDS = "INSERT INTO ids (seq, h, src) VALUES (?, ?, ?)"
INSERT_ROWS = ("INSERT INTO rows (seq, parent, pstart, kind, location, start_ps, end_ps, flags,"
               " track, ext_id, details) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
INSERT_FIXUPS = "INSERT INTO fixups (seq, ph, parent_ext) VALUES (?, ?, ?)"
SCHEMA = (
    "CREATE TABLE stage.ids (seq INTEGER PRIMARY KEY, h INTEGER NOT NULL, src);"
    "CREATE TABLE stage.rows (seq INTEGER PRIMARY KEY, parent INTEGER NOT NULL,"
    " pstart INTEGER NOT NULL, kind INTEGER NOT NULL, location INTEGER NOT NULL,"
    " start_ps INTEGER NOT NULL, end_ps INTEGER NOT NULL, flags INTEGER NOT NULL,"
    " track INTEGER NOT NULL, ext_id TEXT NOT NULL, details TEXT);"
    "CREATE TABLE stage.fixups (seq INTEGER PRIMARY KEY, ph INTEGER NOT NULL,"
    " parent_ext TEXT NOT NULL);"
    "CREATE TABLE stage.named (seq INTEGER PRIMARY KEY, h INTEGER NOT NULL, ext_id TEXT NOT NULL,"
    " start_ps INTEGER NOT NULL);"
    "CREATE TABLE stage.links (src_h INTEGER NOT NULL, src_ext TEXT NOT NULL,"
    " dst_h INTEGER NOT NULL, dst_ext TEXT NOT NULL, kind TEXT NOT NULL);"
    # A flow point is bound to a task by ID (task_ext) or by time on a track
    # (bind: 0 the innermost task enclosing time_ps, 1 the next task to start).
    "CREATE TABLE stage.flow_points (seq INTEGER PRIMARY KEY, flow TEXT NOT NULL,"
    " phase INTEGER NOT NULL, kind TEXT NOT NULL, track INTEGER, time_ps INTEGER,"
    " bind INTEGER, task_h INTEGER, task_ext TEXT, task_seq INTEGER);"
    "CREATE TABLE stage.instants (seq INTEGER PRIMARY KEY, location INTEGER,"
    " time_ps INTEGER NOT NULL, name TEXT NOT NULL, category TEXT, details TEXT);"
    "CREATE TABLE stage.counters (series INTEGER NOT NULL, time_ps INTEGER NOT NULL,"
    " value NUMERIC NOT NULL);"
    "CREATE TABLE stage.tags (task_h INTEGER NOT NULL, task_ext TEXT NOT NULL,"
    " time_ps INTEGER NOT NULL, name TEXT NOT NULL);"
    # Found by the sweep over each track: a task's enclosing parent, a point's task.
    "CREATE TABLE stage.nest (child INTEGER NOT NULL, parent INTEGER NOT NULL,"
    " pstart INTEGER NOT NULL);"
    "CREATE TABLE stage.bound (point INTEGER PRIMARY KEY, task INTEGER NOT NULL);"
    "CREATE TABLE stage.found (child INTEGER PRIMARY KEY, parent INTEGER NOT NULL,"
    " pstart INTEGER NOT NULL);"
    "CREATE TABLE stage.dropped (seq INTEGER PRIMARY KEY, survivor INTEGER NOT NULL,"
    " rank INTEGER);")
# The hashes of the IDs that something names (for ``named``), each as often as named.
NAMED_HASHES = ("SELECT ph FROM stage.fixups UNION ALL SELECT src_h FROM stage.links UNION ALL"
                " SELECT dst_h FROM stage.links UNION ALL SELECT task_h FROM stage.tags UNION ALL"
                " SELECT task_h FROM stage.flow_points WHERE task_h IS NOT NULL")


class Stage:
    """The scratch database at ``path``, attached to ``db`` as ``stage``; ``bulk`` is the
    build's bulk module."""

    def __init__(self, db, path, bulk):
        self.db, self.path, self.bulk = db, path, bulk
        db.executescript(SCHEMA)
        self.conn = bulk.Connection(path)
        self.conn.execute("PRAGMA journal_mode=OFF")
        self._ids = bulk.BulkInserter(self.conn, INSERT_IDS)
        self._rows = bulk.BulkInserter(self.conn, INSERT_ROWS)
        self._fixups = bulk.BulkInserter(self.conn, INSERT_FIXUPS)
        self.dropped = 0  # repeats found here (dedupe mode)

    def close(self):
        for inserter in (self._ids, self._rows, self._fixups):
            inserter.close()
        self.conn.close()

    # -- loading ---------------------------------------------------------------------
    def add_block(self, block, wanted, rows=True):
        """A block the ID window has resolved (``wanted``: its rows whose parent it did not
        find); ``rows``: the tasks are kept here (else the loader writes them out)."""
        self._ids.insert(np.ascontiguousarray(np.column_stack([block.seq, block.h])),
                         (block.src.tolist(),))
        if rows:
            parent = block.parent_seq.copy()
            parent[np.equal(block.parent, None)] = NO_PARENT
            parent[wanted] = UNRESOLVED
            ints = np.column_stack([block.seq, parent, block.pstart, block.kind, block.location,
                                    block.start, block.end, block.flags, block.track])
            self._rows.insert(np.ascontiguousarray(ints, dtype=np.int64),
                              (block.ext.tolist(), block.details.tolist()))
        if len(wanted):
            texts = block.parent[wanted]
            self._fixups.insert(np.ascontiguousarray(np.column_stack([block.seq[wanted], hashes(texts)])),
                                (texts.tolist(),))

    def take_back(self, no_time):
        """Tasks the loader wrote straight to the output (``main.task``), back into ``rows``;
        the output's task table is emptied (then the loader stages everything here)."""
        db = self.db
        db.execute("BEGIN")
        db.execute(
            "INSERT INTO stage.rows (seq, parent, pstart, kind, location, start_ps, end_ps, flags,"
            " track, ext_id, details) SELECT t.id + 1, CASE WHEN t.parent IS NOT NULL"
            f" THEN t.parent + 1 WHEN f.seq IS NOT NULL THEN {UNRESOLVED} ELSE {NO_PARENT} END,"
            " coalesce((SELECT p.start_ps FROM main.task p WHERE p.id = t.parent), ?), t.kind,"
            " t.location, t.start_ps, t.end_ps, t.flags, -1, coalesce(t.ext_id, CAST(t.id AS TEXT)),"
            " t.details FROM main.task t LEFT JOIN stage.fixups f ON f.seq = t.id + 1 ORDER BY t.id",
            (no_time,))
        db.execute("DELETE FROM main.task")
        db.execute("COMMIT")

    # -- settling what the window left -----------------------------------------------
    def index_ids(self):
        """Index the staged IDs' hashes. Returns whether they are all distinct (then no
        ID repeats): a unique index is tried first, since its build finds that for free
        where a scan of the index took a fifth as long again (12 s after 57 s at 100M
        IDs); only a repeat (or a rare collision of two IDs' hashes) pays for a second
        build."""
        try:
            self.db.execute("CREATE UNIQUE INDEX stage.ids_h ON ids (h)")
            return True
        except sqlite3.IntegrityError:
            self.db.execute("CREATE INDEX stage.ids_h ON ids (h)")
            return False

    def looks_up_ids(self):
        """Whether anything staged names a task by ID for ``index_ids`` to find."""
        return self.db.execute(
            "SELECT EXISTS (SELECT 1 FROM stage.fixups) OR EXISTS (SELECT 1 FROM stage.links)"
            " OR EXISTS (SELECT 1 FROM stage.tags)"
            " OR EXISTS (SELECT 1 FROM stage.flow_points WHERE task_ext IS NOT NULL)").fetchone()[0] == 1

    def drop_far_repeats(self, dedupe, where):
        """Repeated IDs the window did not see: dropped if they repeat the first row field for
        field (``dedupe``), else an error at the first repeat in input order. Returns how
        many rows were dropped."""
        db = self.db
        groups = db.execute("SELECT h FROM stage.ids GROUP BY h HAVING count(*) > 1")
        drops, worst = [], None  # worst: (again seq, first seq, ID, fields differ)
        while True:
            chunk = groups.fetchmany(1024)
            if not chunk:
                break
            for (h,) in chunk:
                firsts = {}
                for row in db.execute(
                        "SELECT r.seq, r.ext_id, CASE WHEN r.parent >= 0 THEN p.ext_id"
                        " WHEN r.parent = ? THEN f.parent_ext END, r.kind, r.location, r.start_ps,"
                        " r.end_ps, r.details FROM stage.ids i JOIN stage.rows r ON r.seq = i.seq"
                        " LEFT JOIN stage.rows p ON p.seq = r.parent"
                        " LEFT JOIN stage.fixups f ON f.seq = r.seq"
                        " WHERE i.h = ? ORDER BY r.seq", (UNRESOLVED, h)).fetchall():
                    first = firsts.setdefault(row[1], row)
                    if first is row:
                        continue
                    if dedupe and first[2:] == row[2:]:
                        drops.append((row[0], first[0]))
                    elif worst is None or row[0] < worst[0]:
                        worst = (row[0], first[0], row[1], dedupe)
            if len(drops) >= READ_BLOCK:
                self._drop(drops)
        if worst is not None:
            again, first, ext, differ = worst
            again, first = where(self.source(again)), where(self.source(first))
            if differ:
                raise TraceFormatError(f"{again}: task ID {ext!r} again with different fields"
                                       f" (first at {first})")
            raise TraceFormatError(f"{again}: duplicate task ID {ext!r} (first at {first})")
        self._drop(drops)
        if self.dropped:
            self._close_up()
        return self.dropped

    def source(self, seq):
        """The input position of staged row ``seq``."""
        return self.db.execute("SELECT src FROM stage.ids WHERE seq = ?", (seq,)).fetchall()[0][0]

    def _drop(self, drops):
        if drops:
            self.db.execute("BEGIN")
            self.db.executemany("INSERT INTO stage.dropped (seq, survivor) VALUES (?, ?)", drops)
            self.db.execute("COMMIT")
            self.dropped += len(drops)
            drops.clear()

    def _close_up(self):
        """Remove the dropped rows; what named them names their survivor; ranks for ``key_sql``."""
        db = self.db
        db.execute("BEGIN")
        for table in ("rows", "ids", "fixups"):
            db.execute(f"DELETE FROM stage.{table} WHERE seq IN (SELECT seq FROM stage.dropped)")
        db.execute("UPDATE stage.rows SET parent = (SELECT d.survivor FROM stage.dropped d"
                   " WHERE d.seq = stage.rows.parent) WHERE parent IN (SELECT seq FROM stage.dropped)")
        db.execute("UPDATE stage.dropped SET rank = r.n FROM (SELECT seq, row_number()"
                   " OVER (ORDER BY seq) AS n FROM stage.dropped) r WHERE r.seq = dropped.seq")
        db.execute("COMMIT")

    def key_sql(self, seq, table="stage.dropped"):
        """SQL for the task key of staged row ``seq`` (an SQL expression)."""
        if not self.dropped:
            return f"({seq}) - 1"
        return (f"({seq}) - 1 - coalesce((SELECT d.rank FROM {table} d WHERE d.seq < ({seq})"
                f" ORDER BY d.seq DESC LIMIT 1), 0)")

    def name_tasks(self, direct):
        """Gather the tasks something names by ID (``named``: seq, hash, ID, start), from
        the staged rows or, ``direct``, the output's task table.

        Both lookups go in order, each through a sort (SQLite's sorter, which spills to
        disk in runs): the named hashes sorted, so the ID index is read once from end to
        end, then the tasks found sorted by key, so the task table is read, and ``named``
        written, from end to end. Looked up in the order they were staged, each hash and
        each task cost a seek into a file as large as the trace (at 10M tasks, 1.1M named:
        6.5 against 3.0 s).
        """
        if direct:
            task, ext_id = "main.task t ON t.id = w.seq - 1", "coalesce(t.ext_id, CAST(t.id AS TEXT))"
        else:
            task, ext_id = "stage.rows t ON t.seq = w.seq", "t.ext_id"
        self.db.execute("BEGIN")
        # OR IGNORE: a task named more than once is found once for each time.
        self.db.execute(
            f"INSERT OR IGNORE INTO stage.named WITH f AS MATERIALIZED ({NAMED_HASHES} ORDER BY 1),"
            " w AS MATERIALIZED (SELECT i.seq, i.h FROM f JOIN stage.ids i ON i.h = f.ph"
            f" ORDER BY i.seq) SELECT w.seq, w.h, {ext_id}, t.start_ps FROM w JOIN {task}")
        self.db.execute("CREATE INDEX stage.named_h ON named (h, ext_id)")
        self.db.execute("COMMIT")

    def resolve_fixups(self, direct):
        """Parents named far from their children; returns the orphans (parents not in the
        input). ``direct``: the tasks are in the output, whose parents are set."""
        db = self.db
        db.execute("BEGIN")
        # min(): the first of rows with that ID (the survivor, if one was dropped); start_ps
        # is taken from that same row.
        db.execute("INSERT INTO stage.found SELECT f.seq, min(n.seq), n.start_ps"
                   " FROM stage.fixups f JOIN stage.named n ON n.h = f.ph AND n.ext_id = f.parent_ext"
                   " GROUP BY f.seq")
        if direct:
            db.execute("UPDATE main.task SET parent = (SELECT f.parent - 1 FROM stage.found f"
                       " WHERE f.child = main.task.id + 1)"
                       " WHERE id IN (SELECT child - 1 FROM stage.found)")
        else:
            db.execute("UPDATE stage.rows SET"
                       " parent = (SELECT f.parent FROM stage.found f WHERE f.child = stage.rows.seq),"
                       " pstart = (SELECT f.pstart FROM stage.found f WHERE f.child = stage.rows.seq)"
                       " WHERE seq IN (SELECT child FROM stage.found)")
        db.execute("COMMIT")
        wanted, found = (db.execute(f"SELECT count(*) FROM stage.{t}").fetchone()[0]
                         for t in ("fixups", "found"))
        return wanted - found

    def found_locations(self, kinds):
        """Locations of the output's tasks of ``kinds`` whose parent a fix-up found."""
        return [loc for loc, in self.db.execute(
            "SELECT DISTINCT t.location FROM stage.found f JOIN main.task t ON t.id = f.child - 1"
            f" WHERE t.kind IN ({', '.join(map(str, kinds)) or 'NULL'})")]

    def resolve_task_points(self):
        """Flow points that name their task by ID get its staged key."""
        self.db.execute("BEGIN")
        self.db.execute(
            "UPDATE stage.flow_points SET task_seq = (SELECT min(n.seq) FROM stage.named n"
            " WHERE n.h = stage.flow_points.task_h AND n.ext_id = stage.flow_points.task_ext)"
            " WHERE task_ext IS NOT NULL")
        self.db.execute("COMMIT")

    def write_links(self):
        """Links between tasks named by ID, and flow points chained into links, into the
        output's ``task_link``; returns (links, those left unresolved: naming no task, or a
        flow with one end)."""
        db, key = self.db, self.key_sql
        staged = db.execute("SELECT count(*) FROM stage.links").fetchone()[0]
        db.execute(
            f"INSERT OR IGNORE INTO task_link (src, dst, kind) SELECT {key('s.seq')}, {key('d.seq')},"
            " l.kind FROM stage.links l"
            " JOIN stage.named s ON s.h = l.src_h AND s.ext_id = l.src_ext"
            " JOIN stage.named d ON d.h = l.dst_h AND d.ext_id = l.dst_ext WHERE s.seq != d.seq")
        resolved = db.execute(
            "SELECT count(*) FROM stage.links l WHERE l.src_ext != l.dst_ext AND EXISTS"
            " (SELECT 1 FROM stage.named s WHERE s.h = l.src_h AND s.ext_id = l.src_ext) AND EXISTS"
            " (SELECT 1 FROM stage.named d WHERE d.h = l.dst_h AND d.ext_id = l.dst_ext)").fetchone()[0]
        # Flow points, bound to tasks, chain into links in time order within each flow;
        # a finish closes the flow, so its ID may start another one later. As in
        # Perfetto, a start while the flow is open (an ID two processes both used) and a
        # step or finish while it is not are dropped.
        cursor = db.execute(
            f"SELECT f.flow, f.phase, f.kind, {key('f.task_seq')} FROM stage.flow_points f"
            " LEFT JOIN stage.named r ON r.seq = f.task_seq"
            " ORDER BY f.flow, coalesce(f.time_ps, r.start_ps), f.phase, f.seq")
        links, current, previous, unmatched = [], None, None, staged - resolved
        for flow, phase, kind, task in cursor:
            if flow != current:
                unmatched += previous is not None
                current, previous = flow, None
            if task is None:  # bound to nothing: the flow cannot pass through it
                unmatched += 1
                continue
            if (previous is None) != (phase == FLOW_PHASES["s"]):
                unmatched += 1  # a second start, or a step or finish without a start
                continue
            if previous is not None and previous != task:
                links.append((previous, task, kind))
            previous = None if phase == FLOW_PHASES["f"] else task
        unmatched += previous is not None
        db.executemany("INSERT OR IGNORE INTO task_link (src, dst, kind) VALUES (?, ?, ?)", links)
        return db.execute("SELECT count(*) FROM task_link").fetchone()[0], unmatched

    def nest_by_track(self, sweep_class):
        """Parents of tasks that name none, and tasks of flow points bound by time, from the
        nesting on each track (``sweep_class``: the build's ``TrackSweep``)."""
        db = self.db
        # Covering the sweep's columns, so the sweep reads the index alone.
        db.execute("CREATE INDEX stage.rows_track ON rows (track, start_ps, end_ps DESC, seq, parent)"
                   " WHERE track >= 0")
        # Flow ends are few next to tasks (about one per launch), so they fit in memory.
        enclosing, following = (db.execute(
            "SELECT track, time_ps, seq FROM stage.flow_points WHERE track IS NOT NULL"
            " AND bind = ? ORDER BY track, time_ps, seq", (bind,)).fetchall() for bind in (0, 1))
        sweep = sweep_class(np.array(enclosing, dtype=np.int64).reshape(-1, 3),
                            np.array(following, dtype=np.int64).reshape(-1, 3))
        bulk = self.bulk
        reader = bulk.BulkReader(
            self.conn, f"SELECT seq, track, start_ps, end_ps, parent = {NO_PARENT} FROM rows"
            " INDEXED BY rows_track WHERE track >= 0 ORDER BY track, start_ps, end_ps DESC, seq")
        nest = bulk.BulkInserter(self.conn, "INSERT INTO nest VALUES (?, ?, ?)")
        bound = bulk.BulkInserter(self.conn, "INSERT INTO bound VALUES (?, ?)")
        try:
            while True:
                rows, _ = reader.fetch(READ_BLOCK)
                if not len(rows):
                    break
                nested, points = sweep.feed(rows)
                nest.insert(nested)
                bound.insert(points)
            bound.insert(sweep.finish())
        finally:
            for part in (reader, nest, bound):
                part.close()
        db.execute("CREATE INDEX stage.nest_child ON nest (child, parent, pstart)")
        db.execute("BEGIN")
        db.execute("UPDATE stage.flow_points SET task_seq = (SELECT b.task FROM stage.bound b"
                   " WHERE b.point = stage.flow_points.seq) WHERE task_seq IS NULL")
        db.execute("COMMIT")

    # -- reading back ----------------------------------------------------------------
    def tasks(self, nested, first_event_of=None):
        """Blocks of ``(key, parent key or -1, kind, location, start, end, flags, parent
        start or NO_TIME)`` int64 rows with their ID and details texts, in key order; or,
        given ``first_event_of`` (the kinds whose wait from their parent's start is their
        first event, ``req_in``), without texts in the order of each task's first event."""
        key = self.key_sql
        parent = f"CASE WHEN r.parent >= 0 THEN {key('r.parent', 'dropped')}"
        pstart, join = "r.pstart", ""
        if nested:
            join = " LEFT JOIN nest n ON n.child = r.seq"
            nest_parent = key("n.parent", "dropped")
            parent += f" WHEN r.parent = {NO_PARENT} AND n.parent IS NOT NULL THEN {nest_parent}"
            pstart = f"CASE WHEN r.parent = {NO_PARENT} THEN coalesce(n.pstart, {NO_TIME}) ELSE r.pstart END"
        # An ID that is the key itself is stored as NULL (``task.ext_id``).
        texts = (f", CASE WHEN r.ext_id = CAST({key('r.seq', 'dropped')} AS TEXT) THEN NULL"
                 " ELSE r.ext_id END, r.details")
        order = "r.seq"
        if first_event_of is not None:
            waits = ", ".join(map(str, first_event_of)) or "NULL"
            texts = ""
            order = (f"CASE WHEN r.kind IN ({waits}) AND ({pstart}) BETWEEN {NO_TIME + 1} AND r.start_ps"
                     f" THEN ({pstart}) ELSE r.start_ps END, r.seq")
        sql = (f"SELECT {key('r.seq', 'dropped')}, {parent} ELSE -1 END, r.kind, r.location, r.start_ps,"
               f" r.end_ps, r.flags, {pstart}{texts} FROM rows r{join} ORDER BY {order}")
        reader = self.bulk.BulkReader(self.conn, sql, ints=8)
        try:
            while True:
                rows, others = reader.fetch(READ_BLOCK)
                if not len(rows):
                    return
                yield (rows, *others) if others else (rows, None, None)
        finally:
            reader.close()
