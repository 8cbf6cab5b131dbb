"""Exporters: our traces as Chrome Trace Event JSON (for Perfetto UI) and as CSV.

Chrome export: one process per location (named by a ``process_name`` metadata event)
and, inside it, one thread per lane. Perfetto requires the slices of one thread to nest
properly, which overlapping tasks at a location do not, so each location's tasks are
packed greedily into lanes of non-overlapping tasks. Every event carries the task's
identity (``args.id``, ``args.parent``, ``args.category``, ``args.location``) so that
importing the file back gives exactly the same tasks. Times are written as exact
decimal microseconds (six decimals = picoseconds).

CSV export: Daisen's header ``ID, ParentID, Kind, What, Where, Start, End`` with times
as exact decimal seconds (twelve decimals = picoseconds); details are not included.

Both stream the trace one location (or one batch) at a time and write through a
temporary file, so a failure never leaves a half-written output.
"""
import csv
import heapq
import json
import sqlite3

from .progress import track
from .outputs import prepare_output
from .writer import TraceError, atomic_output, open_readonly, sqlite_error

FORMATS = ("chrome", "csv")
BATCH = 20_000


def open_trace(path):
    """Read-only connection to one of our traces, or a clear error."""
    return open_readonly(path, "SELECT count(*) FROM task", "a GPUscope trace")


def decimal_time(ps, digits):
    """Exact decimal text of ``ps`` picoseconds in units of 10**digits ps."""
    sign = "-" if ps < 0 else ""
    whole, frac = divmod(abs(ps), 10 ** digits)
    return f"{sign}{whole}.{frac:0{digits}d}"


def _task_id(key, ext_id):
    return ext_id if ext_id is not None else str(key)


TASK_SELECT = (
    "SELECT t.id, t.ext_id, p.id, p.ext_id, k.category, k.action, l.name, t.start_ps, t.end_ps,"
    " t.details FROM task t JOIN kind k ON k.id = t.kind JOIN location l ON l.id = t.location"
    " LEFT JOIN task p ON p.id = t.parent")


def export_chrome(trace_path, out_path, show_progress=None):
    """Write ``trace_path`` as Chrome Trace Event JSON; returns the number of tasks."""
    db = open_trace(trace_path)
    count = 0
    try:
        with atomic_output(out_path) as tmp, open(tmp, "w", encoding="utf-8") as out:
            out.write('{"displayTimeUnit": "ns", "traceEvents": [\n')
            first = True
            locations = db.execute("SELECT id, name FROM location ORDER BY id").fetchall()
            for loc_id, name in track(locations, show_progress, desc="export", unit="loc"):
                pid = loc_id + 1
                lanes_end, free_lanes, lane_count = [], [], 0
                rows = db.execute(TASK_SELECT + " WHERE t.location = ? ORDER BY t.start_ps, t.id",
                                  (loc_id,))
                for key, ext, pkey, pext, cat, action, _, start, end, details in rows:
                    # Greedy lanes: reuse the lowest lane whose last task has ended.
                    while lanes_end and lanes_end[0][0] <= start:
                        heapq.heappush(free_lanes, heapq.heappop(lanes_end)[1])
                    if free_lanes:
                        lane = heapq.heappop(free_lanes)
                    else:
                        lane, lane_count = lane_count, lane_count + 1
                    heapq.heappush(lanes_end, (end, lane))
                    args = {"id": _task_id(key, ext),
                            "parent": None if pkey is None else _task_id(pkey, pext),
                            "category": cat, "location": name}
                    if details is not None:
                        args["details"] = json.loads(details)
                    event = ('{"name": %s, "cat": %s, "ph": "X", "ts": %s, "dur": %s, "pid": %d,'
                             ' "tid": %d, "args": %s}' % (
                                 json.dumps(action), json.dumps(cat), decimal_time(start, 6),
                                 decimal_time(end - start, 6), pid, lane, json.dumps(args)))
                    out.write(event if first else ",\n" + event)
                    first = False
                    count += 1
                if not lane_count:
                    continue  # a location without tasks gets no track
                meta = [{"name": "process_name", "ph": "M", "pid": pid, "tid": 0,
                         "args": {"name": name}}]
                meta += [{"name": "thread_name", "ph": "M", "pid": pid, "tid": lane,
                          "args": {"name": f"lane {lane}"}} for lane in range(lane_count)]
                for event in meta:
                    out.write((",\n" if not first else "") + json.dumps(event))
                    first = False
            out.write("\n]}\n")
    finally:
        db.close()
    return count


def export_csv(trace_path, out_path, show_progress=None):
    """Write ``trace_path`` as Daisen-style CSV; returns the number of tasks."""
    db = open_trace(trace_path)
    count = 0
    try:
        total = db.execute("SELECT count(*) FROM task").fetchone()[0]
        with atomic_output(out_path) as tmp, open(tmp, "w", encoding="utf-8", newline="") as out:
            writer = csv.writer(out)
            writer.writerow(("ID", "ParentID", "Kind", "What", "Where", "Start", "End"))
            cursor = db.execute(TASK_SELECT + " ORDER BY t.id")
            with track(range(total), show_progress, desc="export", unit="task") as bar:
                while True:
                    rows = cursor.fetchmany(BATCH)
                    if not rows:
                        break
                    writer.writerows(
                        (_task_id(key, ext), "" if pkey is None else _task_id(pkey, pext), cat,
                         action, loc, decimal_time(start, 12), decimal_time(end, 12))
                        for key, ext, pkey, pext, cat, action, loc, start, end, _ in rows)
                    count += len(rows)
                    bar.update(len(rows))
    finally:
        db.close()
    return count


def export_trace(trace_path, out_path, fmt, show_progress=None, force=True):
    """Export in ``fmt`` (one of ``FORMATS``). ``out_path`` must not be the trace (nor a
    link to it); an existing one is replaced only if ``force``."""
    exporters = {"chrome": export_chrome, "csv": export_csv}
    if fmt not in exporters:
        raise TraceError(f"unknown export format {fmt!r}; choose one of {', '.join(FORMATS)}")
    prepare_output(out_path, [trace_path], force=force)
    try:
        return exporters[fmt](trace_path, out_path, show_progress)
    except (sqlite3.DatabaseError, UnicodeDecodeError) as exc:  # reading: writing is to a plain file
        raise sqlite_error(trace_path, exc) from None
