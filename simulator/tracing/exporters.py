"""Exporters: our traces as Chrome Trace Event JSON (for Perfetto UI) and as CSV.

Chrome export: one process per location (named by a ``process_name`` metadata event,
ordered by ``process_sort_index``) and, inside it, one thread per lane. Perfetto
(since v51) drops slices that overlap on one thread, so each location's tasks are
packed greedily into lanes of non-overlapping tasks: every thread nests strictly.
Slices are written in time order across locations (each location's tasks in start
order, merged), so a task's parent, which starts before it, is near it in the file:
an importer finds it there, where written location by location, at 100M tasks four
tasks in five had their parent in another location's stretch, millions of events
away. The metadata events follow the slices.
Every event carries the task's identity (``args.id``, ``args.parent``,
``args.category``, ``args.location``) so that importing the file back gives exactly
the same tasks. Task links become flows (``s``/``f``), instants ``i`` events and
counter samples ``C`` events. Times are written as exact decimal microseconds (six
decimals = picoseconds) on the source's clock again: relative time plus the origin,
which the ``gpuscope`` key states, with the run's other metadata at the top level.

CSV export: Daisen's header ``ID, ParentID, Kind, What, Where, Start, End`` with times
as exact decimal seconds (twelve decimals = picoseconds); details are not included.

Both stream the trace one location (or one batch) at a time and write through a
temporary file, so a failure never leaves a half-written output.

A Chrome export can also be of a range of task ids only (one kernel launch's tasks),
with some tasks marked ``args.critical = 1`` and extra flows between tasks, as HTA
overlays a critical path (``export_highlighted``).
"""
import csv
import heapq
import json
import sqlite3
from decimal import Decimal

from .outputs import prepare_output
from .progress import track
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


def _file_origin_ps(db):
    """(origin, clock, metadata): the file time (ps) of our relative 0, so that exported
    times are the source's own again (Kineto's relative to ``baseTimeNanoseconds``)."""
    origin, clock, metadata = db.execute("SELECT time_origin, clock, metadata FROM run").fetchone()
    metadata = json.loads(metadata) if metadata else {}
    if origin is None:  # a simulator's trace: its time is simulated time from 0
        return 0, clock or "simulation", metadata
    ps = int(Decimal(origin) * 10 ** 12)
    base = metadata.get("baseTimeNanoseconds")
    if base is not None:
        ps -= int(Decimal(str(base))) * 1000
    return ps, clock, metadata


def _lanes(rows):
    """Yield (row, lane): each task on the lowest lane whose last task has ended, so the
    tasks of one lane never overlap and every thread nests strictly (Perfetto drops
    overlapping slices)."""
    lanes_end, free_lanes, lane_count = [], [], 0
    for row in rows:
        start, end = row[7], row[8]
        while lanes_end and lanes_end[0][0] <= start:
            heapq.heappush(free_lanes, heapq.heappop(lanes_end)[1])
        if free_lanes:
            lane = heapq.heappop(free_lanes)
        else:
            lane, lane_count = lane_count, lane_count + 1
        heapq.heappush(lanes_end, (end, lane))
        yield row, lane


def _in_time_order(db, locations, tasks):
    """Yield (start, key, location, row, lane) for every task (with ids in the inclusive
    range ``tasks``): each location's tasks in start order with their lanes, merged into
    one order by start, then key (a parent starting with its child was given its key
    first). A query per location is open at once, each holding its next row: memory
    grows with the locations, not the tasks."""
    def location(loc_id):
        rows = db.execute(TASK_SELECT + " WHERE t.location = ? AND t.id BETWEEN ? AND ?"
                          " ORDER BY t.start_ps, t.id", (loc_id, *tasks))
        for row, lane in _lanes(rows):
            yield row[7], row[0], loc_id, row, lane
    return heapq.merge(*(location(loc_id) for loc_id, _, _ in locations))


def export_chrome(trace_path, out_path, show_progress=None, *, tasks=None, critical=frozenset(),
                  flows=()):
    """Write ``trace_path`` as Chrome Trace Event JSON; returns the number of tasks.

    With ``tasks`` (first, last), only the tasks with ids in that range, without the
    trace's links, instants and counters; ``critical`` task ids get ``args.critical = 1``
    and ``flows`` lists (src, dst, name, args) flows between exported tasks."""
    db = open_trace(trace_path)
    count = 0
    try:
        origin, clock, metadata = _file_origin_ps(db)
        version = db.execute("PRAGMA user_version").fetchone()[0]
        head = {"displayTimeUnit": "ns", **metadata,
                "gpuscope": {"origin_ts": decimal_time(origin, 6), "clock": clock}}
        endpoints, marked = {key: None for src, dst, _, _ in flows for key in (src, dst)}, set()
        whole = tasks is None
        if whole:
            tasks = (0, 1 << 62)
        if whole and version >= 2:
            for src, dst in db.execute("SELECT src, dst FROM task_link"):
                endpoints[src] = endpoints[dst] = None
            marked = {loc for loc, in db.execute(
                "SELECT location FROM instant UNION SELECT location FROM counter_series")}

        def ts(ps):
            return decimal_time(origin + ps, 6)

        with atomic_output(out_path) as tmp, open(tmp, "w", encoding="utf-8") as out:
            out.write(json.dumps(head)[:-1] + ', "traceEvents": [\n')
            first = True

            def emit(text):
                nonlocal first
                out.write(text if first else ",\n" + text)
                first = False

            locations = db.execute(
                "SELECT id, name, " + ("sort_index" if version >= 2 else "NULL")
                + " FROM location ORDER BY id").fetchall()
            lanes = {loc_id: 0 for loc_id, _, _ in locations}  # lanes used per location
            total = db.execute("SELECT count(*) FROM task WHERE id BETWEEN ? AND ?", tasks).fetchone()[0]
            with track(range(total), show_progress, desc="export", unit="task") as bar:
                for start, key, loc_id, row, lane in _in_time_order(db, locations, tasks):
                    _, ext, pkey, pext, cat, action, name, _, end, details = row
                    lanes[loc_id] = max(lanes[loc_id], lane + 1)
                    pid = loc_id + 1
                    args = {"id": _task_id(key, ext),
                            "parent": None if pkey is None else _task_id(pkey, pext),
                            "category": cat, "location": name}
                    if details is not None:
                        args["details"] = json.loads(details)
                    if key in critical:
                        args["critical"] = 1
                    if key in endpoints:
                        endpoints[key] = (pid, lane, start, args["id"])
                    emit('{"name": %s, "cat": %s, "ph": "X", "ts": %s, "dur": %s, "pid": %d,'
                         ' "tid": %d, "args": %s}' % (
                             json.dumps(action), json.dumps(cat), ts(start),
                             decimal_time(end - start, 6), pid, lane, json.dumps(args)))
                    count += 1
                    if count % BATCH == 0:
                        bar.update(BATCH)
                bar.update(count % BATCH)
            for loc_id, name, sort_index in locations:
                used = lanes[loc_id]
                if not used and loc_id not in marked:
                    continue  # a location without tasks or markers gets no track
                pid = loc_id + 1
                meta = [{"name": "process_name", "ph": "M", "pid": pid, "tid": 0,
                         "args": {"name": name}}]
                if sort_index is not None:
                    meta.append({"name": "process_sort_index", "ph": "M", "pid": pid, "tid": 0,
                                 "args": {"sort_index": sort_index}})
                meta += [{"name": "thread_name", "ph": "M", "pid": pid, "tid": lane,
                          "args": {"name": f"lane {lane}"}} for lane in range(used)]
                for event in meta:
                    emit(json.dumps(event))
            linked = _export_extras(db, emit, ts, endpoints) if whole and version >= 2 else 0
            _flows(emit, ts, endpoints, flows, first_id=linked)
            out.write("\n]}\n")
    finally:
        db.close()
    return count


def _export_extras(db, emit, ts, endpoints):
    """Links as flows (``_flows``), instants and counters; returns the number of flows."""
    linked = _flows(emit, ts, endpoints, ((src, dst, kind, {}) for src, dst, kind in db.execute(
        "SELECT src, dst, kind FROM task_link ORDER BY src, dst, kind")))
    rows = db.execute("SELECT i.location, l.name, i.time_ps, i.name, i.category, i.details"
                      " FROM instant i LEFT JOIN location l ON l.id = i.location ORDER BY i.id")
    for loc, loc_name, time_ps, name, category, details in rows:
        event = {"name": name, "ph": "i", "ts": "TS", "pid": 0 if loc is None else loc + 1,
                 "tid": 0, "s": "g" if loc is None else "p",
                 "args": {"location": loc_name, "details": json.loads(details) if details else None}}
        if category is not None:
            event["cat"] = category
        emit(json.dumps(event).replace('"TS"', ts(time_ps)))
    rows = db.execute("SELECT s.location, s.name, s.unit, c.time_ps, c.value FROM counter c"
                      " JOIN counter_series s ON s.id = c.series ORDER BY s.id, c.time_ps")
    for loc, name, unit, time_ps, value in rows:
        event = {"name": name, "ph": "C", "ts": "TS", "pid": loc + 1, "args": {"value": value}}
        if unit is not None:
            event["unit"] = unit
        emit(json.dumps(event).replace('"TS"', ts(time_ps)))
    return linked


def _flows(emit, ts, endpoints, flows, first_id=0):
    """Flows (src, dst, name, args) as v1 flow events: ``s`` on the source, ``f`` bound
    to the enclosing slice on the destination, both naming their task in ``args.task``;
    ids from ``first_id`` on (a viewer joins the two ends by id). Returns the next id."""
    n = first_id
    for src, dst, name, extra in flows:
        for ph, (pid, lane, start, task) in (("s", endpoints[src]), ("f", endpoints[dst])):
            event = {"name": name, "cat": name, "ph": ph, "id": n, "pid": pid, "tid": lane,
                     "ts": "TS", "args": {"task": task, **extra}}
            if ph == "f":
                event["bp"] = "e"
            emit(json.dumps(event).replace('"TS"', ts(start)))
        n += 1
    return n


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


def export_highlighted(trace_path, out_path, tasks, critical, flows, force=False):
    """Export the tasks with ids in ``tasks`` (first, last) as Chrome JSON, marking the
    ``critical`` ones and adding ``flows`` (``export_chrome``); ``out_path`` is replaced
    only if ``force``."""
    prepare_output(out_path, [trace_path], force=force)
    try:
        return export_chrome(trace_path, out_path, tasks=tasks, critical=critical, flows=flows)
    except (sqlite3.DatabaseError, UnicodeDecodeError) as exc:
        raise sqlite_error(trace_path, exc) from None


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
