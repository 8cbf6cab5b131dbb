"""Readers for akita's SQLite traces (what MGPUSim writes for Daisen).

* v3 ``SQLiteTraceWriter``: ``trace(task_id, parent_id, kind, what, location,
  start_time, end_time)``, times in seconds.
* v4/v5 DataRecorder: ``trace(ID, ParentID, Kind, What, Location, StartTime, EndTime)``.
  Location is text (v4) or an integer into ``location(ID, Locale)`` (v5). v4 times are
  seconds; v5 times are picoseconds.

The input is opened read-only and streamed in rowid order.
"""
from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable, Iterator
from typing import Any

from .. import writer
from ..writer import TraceError
from .loader import ForeignTask, Loader, TraceFormatError, scaled_to_ps, seconds_to_ps

V3_COLUMNS = ("task_id", "parent_id", "kind", "what", "location", "start_time", "end_time")
V4_COLUMNS = ("ID", "ParentID", "Kind", "What", "Location", "StartTime", "EndTime")


def open_readonly(path: str | os.PathLike) -> sqlite3.Connection:
    """A read-only connection, or a clear error if the file is not SQLite."""
    try:
        return writer.open_readonly(path)
    except TraceError as exc:
        raise TraceFormatError(str(exc)) from None


def _rows(db: sqlite3.Connection, path: str | os.PathLike,
          sql: str) -> Iterator[tuple[Any, ...]]:
    """The rows of ``sql`` on the input ``db``, with SQLite's errors (a damaged file) as
    ``TraceFormatError`` naming ``path``."""
    try:
        yield from db.execute(sql)
    except (sqlite3.DatabaseError, UnicodeDecodeError) as exc:
        raise TraceFormatError(f"{path}: {writer.sqlite_problem(exc, 'an akita trace')}") from None


def detect(db: sqlite3.Connection, path: str | os.PathLike) -> str:
    """'akita-v3', 'akita-v4' or 'akita-v5' from the ``trace`` table's columns."""
    columns = [r[1] for r in _rows(db, path, "PRAGMA table_info(trace)")]
    if not columns:
        raise TraceFormatError(f"{path}: no table named 'trace': not an akita trace")
    if all(c in columns for c in V3_COLUMNS):
        return "akita-v3"
    if all(c in columns for c in V4_COLUMNS):
        has_locations = next(_rows(db, path, "SELECT 1 FROM sqlite_master WHERE type = 'table'"
                                             " AND name = 'location'"), None)
        sample = next(_rows(db, path, "SELECT typeof(Location) FROM trace LIMIT 1"), None)
        if has_locations and sample and sample[0] == "integer":
            return "akita-v5"
        return "akita-v4"
    missing = [c for c in V4_COLUMNS if c not in columns]
    raise TraceFormatError(f"{path}: table 'trace' lacks the akita columns {missing}: found {columns}")


def row_count(db: sqlite3.Connection, path: str | os.PathLike) -> int:
    """Rows of the ``trace`` table: the tasks ``read`` will stage (for the progress bar)."""
    return next(_rows(db, path, "SELECT count(*) FROM trace"))[0]


def read(db: sqlite3.Connection, path: str | os.PathLike, version: str, loader: Loader,
         progress: Callable[[int], object] | None = None) -> None:
    """Stage every row of an akita trace into ``loader``, then its milestones and tags."""
    if version == "akita-v3":
        sql = ("SELECT rowid, task_id, parent_id, kind, what, location, start_time, end_time"
               " FROM trace ORDER BY rowid")
    elif version == "akita-v4":
        sql = ("SELECT rowid, ID, ParentID, Kind, What, Location, StartTime, EndTime"
               " FROM trace ORDER BY rowid")
    else:
        sql = ("SELECT t.rowid, t.ID, t.ParentID, t.Kind, t.What, coalesce(l.Locale, t.Location),"
               " t.StartTime, t.EndTime FROM trace t LEFT JOIN location l ON l.ID = t.Location"
               " ORDER BY t.rowid")
    for rowid, tid, parent, kind, what, location, start, end in _rows(db, path, sql):
        where = f"{path}: trace row {rowid}"
        if tid is None or kind is None or what is None or location is None:
            raise TraceFormatError(f"{where}: ID, Kind, What and Location must not be NULL")
        if version == "akita-v5":
            parent = None if parent in (0, "0", "") else parent  # v5 roots have ParentID 0
        loader.add(ForeignTask(
            ext_id=str(tid), parent_ext=None if parent is None else str(parent),
            category=str(kind), action=str(what), location=str(location),
            start_ps=_time(start, version, where, "start time"),
            end_ps=_time(end, version, where, "end time"), where=where))
        if progress:
            progress(1)
    _steps(db, path, version, loader)


def _time(value: int | float | str | bytes | None, version: str, where: str,
          column: str) -> int:
    if version == "akita-v5":
        return scaled_to_ps(value, 1, where, column)
    return seconds_to_ps(value, where, column)


def _table(db: sqlite3.Connection, *names: str) -> str | None:
    """The first of ``names`` that is a table in ``db``, or None."""
    for name in names:
        if db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?",
                      (name,)).fetchone():
            return name
    return None


def _steps(db: sqlite3.Connection, path: str | os.PathLike, version: str,
           loader: Loader) -> None:
    """akita v4/v5 milestones (the release of what held a task up: ``Kind: What``) and v5
    tags become task steps (``task_tag``), at the task they name."""
    if version == "akita-v3":
        return
    milestones = _table(db, "milestone", "trace_milestones")  # renamed in akita #331
    if milestones:
        for rowid, task, time, kind, what in db.execute(
                f"SELECT rowid, TaskID, Time, Kind, What FROM {milestones} ORDER BY rowid"):
            where = f"{path}: {milestones} row {rowid}"
            loader.add_tag(task, _time(time, version, where, "Time"), f"{kind}: {what}", where=where)
    if version == "akita-v5" and _table(db, "tag"):
        for rowid, task, time, what in db.execute("SELECT rowid, TaskID, Time, What FROM tag ORDER BY rowid"):
            where = f"{path}: tag row {rowid}"
            loader.add_tag(task, _time(time, version, where, "Time"), str(what), where=where)
