"""Reader for Nsight Systems exports (``nsys export --type sqlite report.nsys-rep``).

What NVIDIA's profiler recorded becomes tasks, links and counters (docs/nsys.md has
the table-by-table mapping):

* kernels, memory copies and memsets (``CUPTI_ACTIVITY_KIND_KERNEL/_MEMCPY/_MEMSET``)
  are tasks on their GPU stream, ``GPU[0].stream[7]``, named as the Kineto importer
  names them; so are whole CUDA graphs (``CUPTI_ACTIVITY_KIND_GRAPH_TRACE``, what
  ``--cuda-graph-trace=graph`` records instead of the graph's kernels), named
  "Graph Exec N" as nsys names them;
* CUDA runtime and driver calls (``CUPTI_ACTIVITY_KIND_RUNTIME``), NVTX ranges
  (``NVTX_EVENTS``), OS runtime calls (``OSRT_API``) and synchronizations
  (``CUPTI_ACTIVITY_KIND_SYNCHRONIZATION``) are tasks on their CPU thread, under their
  process, named from ``ThreadNames``/``PROCESSES``; on one thread they nest by time,
  so a runtime call inside an NVTX range is its child; NVTX marks are instants;
* each kernel, copy, memset and graph is linked to the runtime call that launched it (equal
  ``correlationId`` in the same process), each synchronization to the call that waited;
* ``GPU_METRICS`` samples are counters at their GPU, ``GPU[0]``.

Times are integer nanoseconds since the session start, stored exactly as picoseconds
relative to it; the session's wall-clock start puts them on the Unix clock. The GPUs'
facts (``TARGET_INFO_GPU``), the session start and the exporter's version are run
metadata.

Versions differ: every table is read by column name, with a SELECT of the columns this
reader uses, in time order, one row at a time (memory does not grow with the file).
Tables are created lazily by nsys, so any table may be absent and most columns are
optional; a file without ``StringIds``, without any table of activity, or without a
column this reader cannot do without is refused with one line naming what is missing.
"""
from __future__ import annotations

import os
import re
import sqlite3
from collections.abc import Callable, Iterable
from typing import Any

from ..api import OPEN_AT_STOP
from . import naming
from .loader import ForeignTask, Loader, TraceFormatError
from .values import details_json

PS_PER_NS = 1000
PROGRESS_STEP = 10_000

STRINGS = "StringIds"
KERNEL = "CUPTI_ACTIVITY_KIND_KERNEL"
MEMCPY = "CUPTI_ACTIVITY_KIND_MEMCPY"
MEMSET = "CUPTI_ACTIVITY_KIND_MEMSET"
GRAPH = "CUPTI_ACTIVITY_KIND_GRAPH_TRACE"
RUNTIME = "CUPTI_ACTIVITY_KIND_RUNTIME"
SYNC = "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION"
NVTX = "NVTX_EVENTS"
OSRT = "OSRT_API"
GPU_METRICS = "GPU_METRICS"
METRIC_NAMES = "TARGET_INFO_GPU_METRICS"
THREAD_NAMES = "ThreadNames"
PROCESSES = "PROCESSES"
GPU_INFO = "TARGET_INFO_GPU"
SESSION_START = "TARGET_INFO_SESSION_START_TIME"
EXPORT_META = "EXPORT_META_DATA"
EXPORT_META_NEW = "META_DATA_EXPORT"  # its name since nsys 2023
MEMCPY_ENUM = "ENUM_CUDA_MEMCPY_OPER"
MEMKIND_ENUM = "ENUM_CUDA_MEM_KIND"
EVENT_TYPE_ENUM = "ENUM_NSYS_EVENT_TYPE"

ACTIVITY = (RUNTIME, NVTX, OSRT, SYNC, KERNEL, MEMCPY, MEMSET, GRAPH)
"""Tables of tasks, in the order they are read (so task keys group by table)."""
MARKERS = (STRINGS, SESSION_START, EXPORT_META, EXPORT_META_NEW, GPU_INFO) + ACTIVITY
"""Tables only an nsys export has: any of them makes a file one."""

# Columns without which a table means nothing; the others are read where present.
REQUIRED = {
    STRINGS: ("id", "value"),
    KERNEL: ("start", "end", "deviceId", "streamId"),
    MEMCPY: ("start", "end", "deviceId", "streamId"),
    MEMSET: ("start", "end", "deviceId", "streamId"),
    GRAPH: ("start", "end", "deviceId", "streamId"),
    RUNTIME: ("start", "end", "globalTid", "nameId"),
    SYNC: ("start", "end"),
    NVTX: ("start", "end", "eventType", "globalTid"),
    OSRT: ("start", "end", "globalTid", "nameId"),
    GPU_METRICS: ("timestamp", "metricId", "value"),
}
OPTIONAL = {
    KERNEL: ("contextId", "correlationId", "globalPid", "demangledName", "shortName",
             "mangledName", "gridX", "gridY", "gridZ", "blockX", "blockY", "blockZ",
             "registersPerThread", "staticSharedMemory", "dynamicSharedMemory",
             "sharedMemoryExecuted", "localMemoryPerThread", "localMemoryTotal", "gridId",
             "launchType", "cacheConfig"),
    MEMCPY: ("contextId", "correlationId", "globalPid", "bytes", "copyKind", "srcKind",
             "dstKind", "srcDeviceId", "dstDeviceId"),
    MEMSET: ("contextId", "correlationId", "globalPid", "bytes", "value", "memKind"),
    GRAPH: ("contextId", "correlationId", "globalPid", "graphId", "graphExecId"),
    RUNTIME: ("correlationId", "returnValue", "eventClass"),
    SYNC: ("deviceId", "contextId", "streamId", "correlationId", "globalPid", "syncType",
           "eventId"),
    NVTX: ("text", "textId", "category", "domainId", "color", "endGlobalTid", "rangeId",
           "uint64Value", "int64Value", "doubleValue", "uint32Value", "int32Value",
           "floatValue", "jsonText"),
    OSRT: ("returnValue", "nestingLevel"),
    GPU_METRICS: ("typeId",),
}

# CUPTI's enums, which nsys copies; its ENUM_* tables (newer exports) name other values.
COPY_KINDS = {0: "Unknown", 1: "HtoD", 2: "DtoH", 3: "HtoA", 4: "AtoH", 5: "AtoA",
              6: "AtoD", 7: "DtoA", 8: "DtoD", 9: "HtoH", 10: "PtoP", 11: "UVM HtoD",
              12: "UVM DtoH", 13: "UVM DtoD"}
MEMORY_KINDS = {0: "Pageable", 1: "Pinned", 2: "Device", 3: "Array", 4: "Managed",
                5: "Device Static", 6: "Managed Static", 7: "Unknown"}
SYNC_TYPES = {0: "Unknown Sync", 1: "Event Sync", 2: "Stream Wait Event", 3: "Stream Sync",
              4: "Context Sync"}
# NVTX_EVENTS.eventType (nsys's event type enum, ENUM_NSYS_EVENT_TYPE in newer exports).
NVTX_TYPES = {"NvtxCategory": 33, "NvtxMark": 34, "NvtxThread": 39,
              "NvtxPushPopRange": 59, "NvtxStartEndRange": 60, "NvtxDomainCreate": 75}
NVTX_PAYLOADS = ("uint64Value", "int64Value", "doubleValue", "uint32Value", "int32Value",
                 "floatValue", "jsonText")
EXPORT_KEYS = ("EXPORT_PRODUCT_NAME", "EXPORT_PRODUCT_VERSION", "EXPORT_SCHEMA_VERSION",
               "EXPORT_PLATFORM", "EXPORT_ARCH")
# CUPTI_ACTIVITY_KIND_RUNTIME.eventClass: a CUDA backtrace row repeats a call (same
# correlationId, its name without the _v suffix) to carry its call stack.
DRIVER_CLASS, BACKTRACE_CLASS = 1, 67
VERSION_SUFFIX = re.compile(r"_v\d+$")
UNIT = re.compile(r"\[([^\]]*)\]\s*$")
LINK_KIND = "ac2g"  # Kineto's name for a CPU launch flowing to its GPU work
SYNC_LINK_KIND = "sync"


def tables(db: sqlite3.Connection) -> set[str]:
    """Names of the tables in ``db``."""
    return {name for name, in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def detect(db: sqlite3.Connection) -> bool:
    """True if the file holds any table only an nsys export has."""
    return not tables(db).isdisjoint(MARKERS)


def row_count(db: sqlite3.Connection) -> int:
    """Rows this reader will go through (for the progress bar)."""
    present = tables(db)
    return sum(db.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0]
               for t in ACTIVITY + (GPU_METRICS,) if t in present)


class _Schema:
    """The columns each table has in this export; SELECT lists built from them."""

    def __init__(self, db: sqlite3.Connection, path: str | os.PathLike) -> None:
        self.db, self.path = db, path
        self.present = tables(db)
        self._columns: dict[str, set[str]] = {}

    def has(self, table: str) -> bool:
        return table in self.present

    def columns(self, table: str) -> set[str]:
        if table not in self._columns:
            self._columns[table] = {r[1] for r in self.db.execute(f'PRAGMA table_info("{table}")')}
        return self._columns[table]

    def select(self, table: str, alias: str = "t") -> str:
        """The SELECT list of ``REQUIRED`` then ``OPTIONAL`` columns of ``table`` (NULL for
        an optional column this version lacks); a missing required column is an error."""
        have = self.columns(table)
        missing = [c for c in REQUIRED[table] if c not in have]
        if missing:
            raise TraceFormatError(
                f"{self.path}: table {table} has no column {', '.join(missing)}"
                f" (needed: {', '.join(REQUIRED[table])}); not an Nsight Systems export this"
                f" importer can read")
        return ", ".join(f'{alias}."{c}"' if c in have else "NULL"
                         for c in REQUIRED[table] + OPTIONAL.get(table, ()))

    def name_join(self, table: str, column: str, alias: str) -> str | None:
        """A LEFT JOIN naming ``column`` (a StringIds key) as ``alias``.value, or None."""
        if column not in self.columns(table):
            return None
        return f'LEFT JOIN "{STRINGS}" {alias} ON {alias}.id = t."{column}"'

    def enum(self, table: str) -> dict[int, str]:
        """An ENUM_* table of newer exports as {id: label}, or {}."""
        if not self.has(table) or not {"id", "label"} <= self.columns(table):
            return {}
        return dict(self.db.execute(f'SELECT id, label FROM "{table}"'))


def _check(schema: _Schema) -> None:
    if not schema.has(STRINGS):
        raise TraceFormatError(
            f"{schema.path}: Nsight Systems export without table {STRINGS} (it holds every"
            f" kernel, call and thread name); export the report again with nsys export")
    schema.select(STRINGS)
    if not any(schema.has(t) for t in ACTIVITY):
        raise TraceFormatError(
            f"{schema.path}: Nsight Systems export without any table of activity"
            f" ({', '.join(ACTIVITY)}): nothing to import")
    for table in ACTIVITY + (GPU_METRICS,):
        if schema.has(table):
            schema.select(table)


def _clean(fields: dict[str, Any]) -> str:
    return details_json({k: v for k, v in fields.items() if v is not None and v != ""})


class _Places:
    """Location names: CPU threads under their process, GPU streams, GPUs."""

    def __init__(self, db: sqlite3.Connection, schema: _Schema, loader: Loader) -> None:
        self.loader = loader
        self.order: dict[str, tuple[int, int, int, int]] = {}  # location name -> display sort key
        self.threads: dict[int | None, str] = {}  # globalTid -> location name
        self.processes: dict[int | None, str] = {}  # pid -> process name
        if schema.has(PROCESSES) and {"pid", "name"} <= schema.columns(PROCESSES):
            for pid, name in db.execute(f'SELECT pid, name FROM "{PROCESSES}" ORDER BY rowid'):
                if name:
                    self.processes[pid] = os.path.basename(str(name).rstrip("/")) or str(name)
        counts: dict[str, int] = {}
        for name in self.processes.values():
            counts[name] = counts.get(name, 0) + 1
        self.shared_process = {name for name, n in counts.items() if n > 1}
        self.thread_names: dict[int | None, str] = {}  # globalTid -> name
        if schema.has(THREAD_NAMES) and {"nameId", "globalTid"} <= schema.columns(THREAD_NAMES):
            for gtid, name in db.execute(
                    f'SELECT n.globalTid, s.value FROM "{THREAD_NAMES}" n JOIN "{STRINGS}" s'
                    f' ON s.id = n.nameId ORDER BY n.rowid'):
                if name:
                    self.thread_names[gtid] = str(name)
        per_process: dict[tuple[int | None, str], list[int | None]] = {}
        for gtid, name in self.thread_names.items():
            per_process.setdefault((_pid(gtid), name), []).append(gtid)
        self.shared_thread = {gtid for gtids in per_process.values() if len(gtids) > 1
                              for gtid in gtids}

    def _use(self, name: str, key: tuple[int, int, int, int]) -> str:
        if name not in self.order:
            self.order[name] = key
        return name

    def thread(self, gtid: int | None) -> str:
        name = self.threads.get(gtid)
        if name is None:
            pid, tid = _pid(gtid), _tid(gtid)
            process = naming.process(self.processes.get(pid), pid,
                                     self.processes.get(pid) in self.shared_process)
            thread = self.thread_names.get(gtid)
            if thread is None:
                thread = naming.unnamed_thread(tid)
            elif gtid in self.shared_thread:
                thread = f"{thread}[{tid}]"
            name = self.threads[gtid] = naming.child(process, thread)
        return self._use(name, (0, _number(_pid(gtid)), _number(_tid(gtid)), 0))

    def stream(self, device: int | None, stream: int | None) -> str:
        return self._use(naming.gpu_stream(device, stream),
                         (1, _number(device), 0, _number(stream)))

    def gpu(self, device: int | None, part: str | None = None) -> str:
        gpu = naming.gpu("?" if device is None else device)
        name = gpu if part is None else naming.child(gpu, part)
        return self._use(name, (1, _number(device), -1 if part is None else 1, 0))

    def set_order(self) -> None:
        """CPU threads by process and thread ID first, then each GPU and its streams."""
        for name, key in self.order.items():
            self.loader.set_location_order(name, key + (name,))


def _number(value: object) -> int:
    return value if isinstance(value, int) else -1


def _pid(gtid: int | None) -> int | None:
    """The process ID inside a serialized GlobalId (nsys: bits 24-47)."""
    return None if gtid is None else (gtid >> 24) & 0xFFFFFF


def _tid(gtid: int | None) -> int | None:
    """The thread ID inside a serialized GlobalId (nsys: bits 0-23)."""
    return None if gtid is None else gtid & 0xFFFFFF


class _Reader:
    """One pass over an export: every table in turn into the loader."""

    def __init__(self, db: sqlite3.Connection, path: str | os.PathLike, loader: Loader,
                 progress: Callable[[int], object] | None) -> None:
        self.db, self.path, self.loader = db, path, loader
        self.schema = _Schema(db, path)
        _check(self.schema)
        self.places = _Places(db, self.schema, loader)
        self._progress, self._pending = progress, 0
        self.skipped = 0
        self.session_start = 0  # in the export's times: 0 but after --ts-normalize (``clock``)
        self._last: int | None = None  # ``last_time``, once asked
        self.copy_kinds = {**self.schema.enum(MEMCPY_ENUM), **COPY_KINDS}
        self.memory_kinds = {**self.schema.enum(MEMKIND_ENUM), **MEMORY_KINDS}

    def tick(self) -> None:
        self._pending += 1
        if self._pending >= PROGRESS_STEP:
            self.flush_progress()

    def flush_progress(self) -> None:
        if self._progress and self._pending:
            self._progress(self._pending)
        self._pending = 0

    def rows(self, table: str, joins: Iterable[str | None] = (),
             extra: str = "") -> sqlite3.Cursor:
        """Rows of ``table``: rowid, the table's columns (``REQUIRED`` + ``OPTIONAL``), then
        ``extra`` select expressions; in time order."""
        time = REQUIRED[table][0]
        sql = (f'SELECT t.rowid, {self.schema.select(table)}{extra} FROM "{table}" t '
               + " ".join(j for j in joins if j) + f' ORDER BY t."{time}", t.rowid')
        return self.db.execute(sql)

    def task(self, table: str, rowid: int, category: str, action: str, location: str,
             start: int | None, end: int | None, details: str, track: int | None = None,
             flags: int = 0) -> None:
        where = f"{self.path}: {table} row {rowid}"
        if start is None or end is None:
            raise TraceFormatError(f"{where}: start or end is NULL")
        self.loader.add(ForeignTask(
            ext_id=f"{table}:{rowid}", parent_ext=None, category=category, action=action,
            location=location, start_ps=start * PS_PER_NS, end_ps=end * PS_PER_NS, where=where,
            details=details, track=track, flags=flags))
        self.tick()

    # -- metadata --------------------------------------------------------------------
    def clock(self) -> None:
        """Time 0 is the session start; its UTC time puts the times on the Unix clock.

        An export written with ``nsys export --ts-normalize=true`` has every time on the
        Unix clock already: its times are about the session start's UTC time (a row may
        lie a little before it) while a time since the session start is never half as
        large, so the session start is its origin and the clock needs no shift."""
        epoch = None
        if self.schema.has(SESSION_START) and "utcEpochNs" in self.schema.columns(SESSION_START):
            row = self.db.execute(f'SELECT utcEpochNs FROM "{SESSION_START}" LIMIT 1').fetchone()
            epoch = row[0] if row and isinstance(row[0], int) else None
        if epoch is None:
            self.loader.set_clock("source", origin_ps=0)
            return
        sample = self._some_time()
        if epoch > 0 and sample is not None and sample >= epoch // 2:
            self.session_start = epoch
            self.loader.set_clock("unix", origin_ps=epoch * PS_PER_NS, epoch_ps=0)
        else:
            self.loader.set_clock("unix", origin_ps=0, epoch_ps=epoch * PS_PER_NS)

    def _some_time(self) -> int | None:
        """The start of one row of the first activity table that has rows (any row: the
        scale of the times is all ``clock`` asks)."""
        for table in ACTIVITY:
            if self.schema.has(table):
                row = self.db.execute(
                    f'SELECT "{REQUIRED[table][0]}" FROM "{table}" LIMIT 1').fetchone()
                if row and isinstance(row[0], int):
                    return row[0]
        return None

    def metadata(self) -> None:
        meta: dict[str, Any] = {"profiler": "Nsight Systems"}
        if self.schema.has(SESSION_START):
            row = self.db.execute(f'SELECT * FROM "{SESSION_START}" LIMIT 1')
            names = [d[0] for d in row.description]
            values = row.fetchone()
            if values:
                meta["session_start"] = {k: v for k, v in zip(names, values) if v is not None}
        if self.schema.has(GPU_INFO):
            cursor = self.db.execute(f'SELECT * FROM "{GPU_INFO}" ORDER BY rowid')
            names = [d[0] for d in cursor.description]
            meta["gpus"] = [{k: v for k, v in zip(names, row) if v is not None and v != ""}
                            for row in cursor]
        for table in (EXPORT_META, EXPORT_META_NEW):
            if self.schema.has(table) and {"name", "value"} <= self.schema.columns(table):
                export = dict(self.db.execute(f'SELECT name, value FROM "{table}"'))
                meta["export"] = {k: export[k] for k in EXPORT_KEYS if k in export}
        self.loader.set_metadata(meta)

    # -- CPU side ----------------------------------------------------------------------
    def calls(self) -> str | None:
        """The runtime rows that are calls, as (id, c: correlationId, p: process) rows: a
        backtrace row is left out when its call is in the table too."""
        if not self.schema.has(RUNTIME):
            return None
        columns = self.schema.columns(RUNTIME)
        corr = "correlationId" if "correlationId" in columns else "NULL"
        if "eventClass" not in columns or corr == "NULL":
            return f'SELECT rowid AS id, {corr} AS c, globalTid >> 24 AS p FROM "{RUNTIME}"'
        return (
            f'SELECT t.rowid AS id, t.{corr} AS c, t.globalTid >> 24 AS p FROM "{RUNTIME}" t'
            f" LEFT JOIN (SELECT {corr} AS c, globalTid >> 24 AS p FROM \"{RUNTIME}\""
            f" WHERE eventClass IS NOT {BACKTRACE_CLASS} GROUP BY 1, 2) o"
            f" ON o.c = t.{corr} AND o.p = t.globalTid >> 24"
            f" WHERE t.eventClass IS NOT {BACKTRACE_CLASS} OR o.c IS NULL")

    def runtime(self) -> None:
        """CUDA runtime and driver calls; a backtrace row whose call is present is only
        a record about that call, and is skipped (counted)."""
        joins = [self.schema.name_join(RUNTIME, "nameId", "n"),
                 f"LEFT JOIN ({self.calls()}) k ON k.id = t.rowid"]
        for rowid, start, end, gtid, name_id, corr, ret, event_class, name, call in self.rows(
                RUNTIME, joins, ", n.value, k.id"):
            if call is None:
                self.skipped += 1
                self.tick()
                continue
            name = str(name) if name is not None else f"[call {name_id}]"
            driver = event_class == DRIVER_CLASS or (
                event_class is None and name.startswith("cu") and not name.startswith("cuda"))
            self.task(RUNTIME, rowid, "cuda_driver" if driver else "cuda_runtime",
                      VERSION_SUFFIX.sub("", name), self.places.thread(gtid), start, end,
                      _clean({"name": name, "correlation": corr, "return value": ret,
                              "thread": _tid(gtid)}),
                      track=gtid)

    def nvtx(self) -> None:
        schema = self.schema
        types = dict(NVTX_TYPES)
        if schema.has(EVENT_TYPE_ENUM) and {"id", "name"} <= schema.columns(EVENT_TYPE_ENUM):
            named = dict(self.db.execute(f'SELECT name, id FROM "{EVENT_TYPE_ENUM}"'))
            types.update({k: named[k] for k in NVTX_TYPES if k in named})
        ranges = (types["NvtxPushPopRange"], types["NvtxStartEndRange"])
        domains, categories = self._nvtx_names(types)
        joins = [schema.name_join(NVTX, "textId", "n")]
        for row in self.rows(NVTX, joins, ", n.value" if joins[0] else ", NULL"):
            (rowid, start, end, event_type, gtid, text, _text_id, category, domain, color,
             end_gtid, range_id, *payloads, registered) = row
            name = text if text is not None else registered
            if event_type not in ranges and event_type != types["NvtxMark"]:
                self.tick()
                continue  # registrations (domains, categories, thread names): names only
            details = {"domain": domains.get(domain), "category": categories.get((domain, category),
                                                                                 category),
                       "color": None if color is None else f"#{color & 0xFFFFFF:06x}",
                       "range id": range_id,
                       "payload": next((p for p in payloads if p is not None), None)}
            if event_type == types["NvtxMark"]:
                self.loader.add_instant(self.places.thread(gtid), start * PS_PER_NS,
                                        name or "(unnamed mark)", "nvtx", _clean(details),
                                        where=f"{self.path}: {NVTX} row {rowid}")
                self.tick()
                continue
            flags = 0
            if end is None:  # never closed (the recording stopped first): open to its end
                end, flags = max(start, self.last_time()), OPEN_AT_STOP
            if end_gtid is not None and end_gtid != gtid:
                details["ended on thread"] = _tid(end_gtid)
            self.task(NVTX, rowid, "nvtx", name or "(unnamed range)", self.places.thread(gtid),
                      start, end, _clean(details), track=gtid, flags=flags)

    def last_time(self) -> int:
        """The last time any activity table records (ns): where a range never closed ends."""
        if self._last is None:
            ends = [self.db.execute(f'SELECT max("{REQUIRED[t][1]}") FROM "{t}"').fetchone()[0]
                    for t in ACTIVITY if self.schema.has(t)]
            starts = self.db.execute(f'SELECT max(start) FROM "{NVTX}"').fetchone()[0]
            self._last = max((v for v in ends + [starts] if v is not None), default=0)
        return self._last

    def _nvtx_names(
        self, types: dict[str, int]
    ) -> tuple[dict[int | None, str], dict[tuple[int | None, int | None], str]]:
        """Domain names by domainId and category names by (domainId, category)."""
        domains: dict[int | None, str] = {}
        categories: dict[tuple[int | None, int | None], str] = {}
        if "text" not in self.schema.columns(NVTX):
            return domains, categories
        domain = "domainId" if "domainId" in self.schema.columns(NVTX) else "NULL"
        category = "category" if "category" in self.schema.columns(NVTX) else "NULL"
        for event_type, dom, cat, text in self.db.execute(
                f'SELECT eventType, {domain}, {category}, text FROM "{NVTX}"'
                f" WHERE eventType IN (?, ?) AND text IS NOT NULL",
                (types["NvtxDomainCreate"], types["NvtxCategory"])):
            if event_type == types["NvtxDomainCreate"]:
                domains[dom] = text
            else:
                categories[(dom, cat)] = text
        return domains, categories

    def osrt(self) -> None:
        joins = [self.schema.name_join(OSRT, "nameId", "n")]
        for rowid, start, end, gtid, name_id, ret, level, name in self.rows(OSRT, joins, ", n.value"):
            self.task(OSRT, rowid, "os_runtime", str(name) if name is not None else f"[call {name_id}]",
                      self.places.thread(gtid), start, end,
                      _clean({"return value": ret, "nesting level": level}), track=gtid)

    def synchronization(self) -> None:
        """A synchronization is the time a thread waited: a task on the thread of the
        runtime call that waited (nested in it by time) and linked from it."""
        match = self._call_match(SYNC)
        join = (f'LEFT JOIN ({self.calls()}) c ON {match} LEFT JOIN "{RUNTIME}" r'
                " ON r.rowid = c.id") if match else None
        extra = ", r.globalTid, c.id" if match else ", NULL, NULL"
        for (rowid, start, end, device, context, stream, corr, _gpid, sync_type, event,
             gtid, call) in self.rows(SYNC, [join], extra):
            action = SYNC_TYPES.get(sync_type, f"Sync type {sync_type}")
            if gtid is not None:
                location = self.places.thread(gtid)
            else:  # no call to wait in: its GPU's track of waits
                location = self.places.gpu(device, "sync")
            self.task(SYNC, rowid, "cuda_sync", action, location, start, end,
                      _clean({"device": device, "context": context,
                              "stream": None if stream in (None, 0xFFFFFFFF, -1) else stream,
                              "correlation": corr, "event": event}), track=gtid)
            if call is not None:
                self.loader.add_link(f"{RUNTIME}:{call}", f"{SYNC}:{rowid}", SYNC_LINK_KIND)

    def _call_match(self, table: str) -> str | None:
        """The condition joining ``table`` (t) to its call (c, a row of ``calls``): the same
        correlationId in the same process (IDs are per process); None if it cannot."""
        if not self.schema.has(RUNTIME) or "correlationId" not in self.schema.columns(table) \
                or "correlationId" not in self.schema.columns(RUNTIME):
            return None
        match = "c.c = t.correlationId"
        if "globalPid" in self.schema.columns(table):
            match += " AND (t.globalPid IS NULL OR c.p = t.globalPid >> 24)"
        return match

    # -- GPU side ----------------------------------------------------------------------
    def kernels(self) -> None:
        joins = [self.schema.name_join(KERNEL, "demangledName", "d"),
                 self.schema.name_join(KERNEL, "shortName", "s"),
                 self.schema.name_join(KERNEL, "mangledName", "m")]
        extra = "".join(f", {a}.value" if j else ", NULL" for a, j in zip("dsm", joins))
        for row in self.rows(KERNEL, joins, extra):
            (rowid, start, end, device, stream, context, corr, _gpid, _d, _s, _m, gx, gy, gz,
             bx, by, bz, registers, static_shared, dynamic_shared, shared_executed,
             local_per_thread, local_total, grid_id, launch_type, cache_config,
             demangled, short, mangled) = row
            name = demangled or short or mangled or "(unnamed kernel)"
            shared = None if static_shared is None and dynamic_shared is None else \
                (static_shared or 0) + (dynamic_shared or 0)
            self.task(KERNEL, rowid, "kernel", str(name), self.places.stream(device, stream),
                      start, end, _clean({
                          "device": device, "context": context, "stream": stream,
                          "correlation": corr,
                          "grid": None if gx is None else [gx, gy, gz],
                          "block": None if bx is None else [bx, by, bz],
                          "registers per thread": registers, "shared memory": shared,
                          "static shared memory": static_shared,
                          "dynamic shared memory": dynamic_shared,
                          "shared memory executed": shared_executed,
                          "local memory per thread": local_per_thread,
                          "local memory total": local_total, "grid id": grid_id,
                          "launch type": launch_type, "cache config": cache_config,
                          "demangled name": demangled, "short name": short,
                          "mangled name": mangled}))

    def memcpys(self) -> None:
        for (rowid, start, end, device, stream, context, corr, _gpid, size, kind, src, dst,
             src_device, dst_device) in self.rows(MEMCPY):
            copy = self.copy_kinds.get(kind, f"kind {kind}") if kind is not None else None
            src_kind, dst_kind = self.memory_kinds.get(src), self.memory_kinds.get(dst)
            action = "Memcpy" + (f" {copy}" if copy else "") + (
                f" ({src_kind} -> {dst_kind})" if src_kind and dst_kind else "")
            self.task(MEMCPY, rowid, "gpu_memcpy", action, self.places.stream(device, stream),
                      start, end, _clean({
                          "device": device, "context": context, "stream": stream,
                          "correlation": corr, "bytes": size, "kind": copy,
                          "src kind": src_kind, "dst kind": dst_kind,
                          "src device": src_device, "dst device": dst_device,
                          "memory bandwidth (GB/s)": _bandwidth(size, start, end)}))

    def memsets(self) -> None:
        for (rowid, start, end, device, stream, context, corr, _gpid, size, value,
             mem_kind) in self.rows(MEMSET):
            kind = self.memory_kinds.get(mem_kind)
            self.task(MEMSET, rowid, "gpu_memset", f"Memset ({kind})" if kind else "Memset",
                      self.places.stream(device, stream), start, end, _clean({
                          "device": device, "context": context, "stream": stream,
                          "correlation": corr, "bytes": size, "value": value,
                          "memory kind": kind,
                          "memory bandwidth (GB/s)": _bandwidth(size, start, end)}))

    def graphs(self) -> None:
        for rowid, start, end, device, stream, context, corr, _gpid, graph, graph_exec in \
                self.rows(GRAPH):
            name = "CUDA graph" if graph_exec is None else f"Graph Exec {graph_exec}"
            self.task(GRAPH, rowid, "cuda_graph", name, self.places.stream(device, stream),
                      start, end, _clean({
                          "device": device, "context": context, "stream": stream,
                          "correlation": corr, "graph id": graph, "graph exec id": graph_exec}))

    def links(self, table: str) -> None:
        """Runtime call -> GPU work, by correlationId within a process (Kineto's ac2g)."""
        match = self._call_match(table)
        if match is None:
            return
        for call, work in self.db.execute(
                f'SELECT c.id, t.rowid FROM "{table}" t JOIN ({self.calls()}) c ON {match}'
                " ORDER BY t.rowid, c.id"):
            self.loader.add_link(f"{RUNTIME}:{call}", f"{table}:{work}", LINK_KIND)

    def gpu_metrics(self) -> None:
        """Samples at their GPU (typeId's low byte); named by TARGET_INFO_GPU_METRICS."""
        names: dict[tuple[int | None, int], str] = {}
        if self.schema.has(METRIC_NAMES) and {"metricId", "metricName"} <= \
                self.schema.columns(METRIC_NAMES):
            type_col = "typeId" if "typeId" in self.schema.columns(METRIC_NAMES) else "NULL"
            for type_id, metric, name in self.db.execute(
                    f'SELECT {type_col}, metricId, metricName FROM "{METRIC_NAMES}"'):
                names[(type_id, metric)] = names.setdefault((None, metric), name)
        for rowid, time, metric, value, type_id in self.rows(GPU_METRICS):
            self.tick()
            if time is None or time < self.session_start or not isinstance(value, (int, float)):
                self.skipped += 1  # a sample before the session or without a value
                continue
            name = names.get((type_id, metric)) or names.get((None, metric)) or f"metric {metric}"
            found = UNIT.search(name)
            unit = (None if found is None
                    else "%" if found.group(1).endswith("%") else found.group(1))
            self.loader.add_counter(self.places.gpu(0 if type_id is None else type_id & 0xFF),
                                    name, time * PS_PER_NS, value, unit=unit,
                                    where=f"{self.path}: {GPU_METRICS} row {rowid}")


def _bandwidth(size: int | None, start: int | None, end: int | None) -> float | None:
    """Bytes per ns, which is GB/s (Kineto's 'memory bandwidth (GB/s)')."""
    if size is None or end is None or start is None or end <= start:
        return None
    return size / (end - start)


def read(db: sqlite3.Connection, path: str | os.PathLike, loader: Loader,
         progress: Callable[[int], object] | None = None) -> int:
    """Stream an nsys export into ``loader``; returns the rows skipped (backtrace rows,
    samples without a time)."""
    reader = _Reader(db, path, loader, progress)
    reader.clock()
    steps = {RUNTIME: reader.runtime, NVTX: reader.nvtx, OSRT: reader.osrt,
             SYNC: reader.synchronization, KERNEL: reader.kernels, MEMCPY: reader.memcpys,
             MEMSET: reader.memsets, GRAPH: reader.graphs, GPU_METRICS: reader.gpu_metrics}
    for table, step in steps.items():
        if reader.schema.has(table):
            step()
    for table in (KERNEL, MEMCPY, MEMSET, GRAPH):
        if reader.schema.has(table):
            reader.links(table)
    reader.flush_progress()
    reader.places.set_order()
    reader.metadata()
    return reader.skipped
