"""Loading foreign tasks into our trace format, with bounded memory.

Importers stream ``ForeignTask`` records into a ``Loader``. Rows are staged in a
scratch SQLite file beside the output, because a foreign task may name a parent that
appears millions of rows later (akita writes a parent after its children). Once
everything is staged, parents are resolved by a join on an index, tasks get dense
integer keys in input order, and the output is finalized like a simulator trace.

The output is written to a temporary file and moved into place only on success, so
bad input never leaves a half-written trace behind.
"""
import sqlite3
from array import array
from dataclasses import dataclass
from decimal import ROUND_HALF_EVEN, Decimal, InvalidOperation
from pathlib import Path

from ... import user_input
from ..writer import PendingOutput, TraceError, TraceWriter, remove_trace_files

BATCH = 50_000
PS_PER_SECOND = Decimal(10) ** 12


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
    start_ps: int
    end_ps: int
    where: str  # file position, for error messages
    details: object = None  # JSON text or None
    track: object = None  # Chrome only: "pid:tid" whose nesting gives the parent


def seconds_to_ps(value, where, column):
    """Exact picoseconds from a number of seconds (decimal text, or a float from SQLite)."""
    return _scaled(value, PS_PER_SECOND, where, column)


def scaled_to_ps(value, ps_per_unit, where, column):
    """Exact picoseconds from a number in some unit (µs in Chrome, ps in akita v5)."""
    return _scaled(value, Decimal(ps_per_unit), where, column)


MAX_PS = 2 ** 63
"""Times are stored as SQLite's 64-bit integers: anything at or past this is refused."""


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
    # The exponent first: 1e999999999 must not become a billion-digit integer. (Any
    # bound from 19 up refuses only what the exact check below refuses too: the bound
    # changes how early, not what.)
    if number and number.adjusted() + factor.adjusted() > 20:
        raise _out_of_range(where, column, value)
    # To the nearest picosecond, halves to even, as ``round`` does on the float path.
    ps = int((number * factor).to_integral_value(rounding=ROUND_HALF_EVEN))
    if not -MAX_PS <= ps < MAX_PS:
        raise _out_of_range(where, column, value)
    return ps


def _out_of_range(where, column, value):
    # The value is quoted cut short: it may be a number of a billion digits.
    return TraceFormatError(f"{where}: {column} is out of range (times are stored in 64-bit"
                            f" picoseconds, about 106 days): {str(value)[:40]!r}")


class Loader:
    """Stages foreign tasks, then writes a finalized trace to ``out_path``."""

    def __init__(self, out_path, *, source, command, config=None):
        self.out_path = Path(out_path)
        self.pending = PendingOutput(self.out_path)
        self.tmp_path = self.pending.path
        self.scratch_path = Path(str(self.tmp_path) + ".stage")
        self.writer = None
        try:
            self.writer = TraceWriter(self.tmp_path, command=command, config=config or {},
                                      source=source, workload=None, temporary=True)
            self.db = self.writer.db
            remove_trace_files(self.scratch_path)
            self.db.execute("ATTACH DATABASE ? AS stage", (str(self.scratch_path),))
            self.db.execute("PRAGMA stage.journal_mode=OFF")
            self.db.execute("PRAGMA stage.synchronous=OFF")
            self.db.execute(
                "CREATE TABLE stage.rows (seq INTEGER PRIMARY KEY, ext_id TEXT NOT NULL,"
                " parent_ext TEXT, kind INTEGER, location INTEGER, start_ps INTEGER,"
                " end_ps INTEGER, details TEXT, track TEXT, nest_parent INTEGER, src TEXT)")
        except BaseException:
            self.abort()  # a full disk, say: leave nothing behind
            raise
        self.locations = {}
        self.kinds = {}
        self.count = 0
        self._batch = []

    def add(self, task):
        """Stage one task (validated here, so every importer checks the same things)."""
        if not task.ext_id:
            raise TraceFormatError(f"{task.where}: empty task ID")
        if not (-MAX_PS <= task.start_ps and task.end_ps < MAX_PS):  # ts + dur, say
            raise _out_of_range(task.where, "the task's end", task.end_ps)
        if task.end_ps < task.start_ps:
            raise TraceFormatError(
                f"{task.where}: task {task.ext_id!r} ends ({task.end_ps} ps) before it starts"
                f" ({task.start_ps} ps)")
        loc = self.locations.get(task.location)
        if loc is None:
            loc = self.locations[task.location] = len(self.locations)
            self.db.execute("INSERT INTO location (id, name) VALUES (?, ?)", (loc, task.location))
        pair = (task.category, task.action)
        kind = self.kinds.get(pair)
        if kind is None:
            kind = self.kinds[pair] = len(self.kinds)
            self.db.execute("INSERT INTO kind (id, category, action) VALUES (?, ?, ?)",
                            (kind, task.category, task.action))
        parent = task.parent_ext if task.parent_ext not in ("", None) else None
        self._batch.append((task.ext_id, parent, kind, loc, task.start_ps, task.end_ps,
                            task.details, task.track, task.where))
        self.count += 1
        if len(self._batch) >= BATCH:
            self._flush()

    def _flush(self):
        self.db.execute("BEGIN")
        self.db.executemany(
            "INSERT INTO stage.rows (ext_id, parent_ext, kind, location, start_ps, end_ps,"
            " details, track, src) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", self._batch)
        self.db.execute("COMMIT")
        self._batch = []

    def rename_location(self, old_name, new_name):
        """Give a staged location its final name (Chrome track names arrive late)."""
        self.db.execute("UPDATE location SET name = ? WHERE id = ?",
                        (new_name, self.locations[old_name]))

    def finish(self, show_progress=None):
        """Resolve parents, write tasks, finalize and move the file into place."""
        self._flush()
        db = self.db
        if not self.count:
            raise TraceFormatError("no tasks found in the input")
        self._index_unique_ids()
        if db.execute("SELECT 1 FROM stage.rows WHERE track IS NOT NULL LIMIT 1").fetchone():
            self._nest_by_track()
        orphans = db.execute(
            "SELECT count(*) FROM stage.rows r WHERE r.parent_ext IS NOT NULL AND NOT EXISTS"
            " (SELECT 1 FROM stage.rows p WHERE p.ext_id = r.parent_ext)").fetchone()[0]
        db.execute("BEGIN")
        db.execute(
            "INSERT INTO task (id, parent, kind, location, start_ps, end_ps, flags, ext_id, details)"
            " SELECT r.seq - 1, coalesce((SELECT p.seq FROM stage.rows p"
            " WHERE p.ext_id = r.parent_ext LIMIT 1), r.nest_parent) - 1,"
            " r.kind, r.location, r.start_ps, r.end_ps, 0,"
            " CASE WHEN r.ext_id = CAST(r.seq - 1 AS TEXT) THEN NULL ELSE r.ext_id END, r.details"
            " FROM stage.rows r ORDER BY r.seq")
        db.execute("COMMIT")
        db.execute("DETACH DATABASE stage")
        self.scratch_path.unlink()
        self.writer.tasks_written = self.count
        self.writer.finalize(completed=True, extra_orphans=orphans, show_progress=show_progress)
        self.writer.close()
        self.pending.publish()
        return self.count, orphans

    def _index_unique_ids(self):
        try:
            self.db.execute("CREATE UNIQUE INDEX stage.rows_ext ON rows (ext_id)")
        except sqlite3.IntegrityError:
            dup = self.db.execute(
                "SELECT ext_id, min(seq), max(seq) FROM stage.rows GROUP BY ext_id"
                " HAVING count(*) > 1 LIMIT 1").fetchone()
            first, again = (self.db.execute("SELECT src FROM stage.rows WHERE seq = ?", (seq,)
                                            ).fetchone()[0] for seq in dup[1:])
            raise TraceFormatError(f"{again}: duplicate task ID {dup[0]!r} (first at {first})") from None

    def _nest_by_track(self):
        """Parent = innermost enclosing task on the same Chrome track (pid:tid)."""
        db = self.db
        cursor = db.execute(
            "SELECT seq, track, start_ps, end_ps FROM stage.rows"
            " WHERE track IS NOT NULL AND parent_ext IS NULL"
            " ORDER BY track, start_ps, end_ps DESC, seq")
        updates, stack, current = array("q"), [], None  # flat (parent, child) pairs, 16 B each
        for seq, track, start, end in cursor:
            if track != current:
                stack, current = [], track
            while stack and stack[-1][1] <= start:
                stack.pop()
            if stack and end <= stack[-1][1]:
                updates.extend((stack[-1][0], seq))
            stack.append((seq, end))
        db.execute("BEGIN")
        db.executemany("UPDATE stage.rows SET nest_parent = ? WHERE seq = ?",
                       zip(updates[0::2], updates[1::2]))
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
