"""Nsight Systems exports: the real sample (counts, exact times, links, metadata, views'
data), the same file with optional tables and columns removed or an essential one
missing, and a small file built here from nsys's documented schema."""
import gzip
import hashlib
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path

import pytest

from simulator.tracing.exporters import export_trace
from simulator.tracing.importers import TraceFormatError, detect_format, import_trace, nsys
from simulator.tracing.importers.loader import decimal_seconds

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "tests" / "data" / "nsys_saxpy_mpi_a100.sqlite"
RUNTIME = "CUPTI_ACTIVITY_KIND_RUNTIME"
KERNEL = "CUPTI_ACTIVITY_KIND_KERNEL"
MEMCPY = "CUPTI_ACTIVITY_KIND_MEMCPY"
BACKTRACE = 67  # eventClass of a row that only carries a call's backtrace


def _ro(path):
    return sqlite3.connect(f"file:{path}?mode=ro", uri=True)


def _import(src, out):
    return import_trace(src, out, show_progress=False)


@pytest.fixture(scope="module")
def sample(tmp_path_factory):
    out = tmp_path_factory.mktemp("nsys") / "saxpy.sqlite"
    report = _import(SAMPLE, out)
    db = _ro(out)
    db.execute("ATTACH DATABASE ? AS src", (f"file:{SAMPLE}?mode=ro",))
    yield report, db, out
    db.close()


def _tasks(db, category):
    return db.execute(
        "SELECT t.ext_id, t.start_ps, t.end_ps, t.details, k.action, l.name FROM task t"
        " JOIN kind k ON k.id = t.kind JOIN location l ON l.id = t.location"
        " WHERE k.category = ? ORDER BY t.id", (category,)).fetchall()


def test_the_sample_is_detected_as_nsys():
    assert detect_format(SAMPLE) == "nsys"


def test_counts_equal_the_files_own(sample):
    report, db, _ = sample
    kernels, memcpys, memsets, calls, ranges = db.execute(
        f"SELECT (SELECT count(*) FROM src.{KERNEL}), (SELECT count(*) FROM src.{MEMCPY}),"
        " (SELECT count(*) FROM src.CUPTI_ACTIVITY_KIND_MEMSET),"
        # A backtrace row repeats a call of the same correlationId: one call, not two.
        f" (SELECT count(*) FROM src.{RUNTIME} r WHERE r.eventClass != {BACKTRACE} OR NOT EXISTS"
        f" (SELECT 1 FROM src.{RUNTIME} o WHERE o.correlationId = r.correlationId"
        f" AND o.eventClass != {BACKTRACE})),"
        " (SELECT count(*) FROM src.NVTX_EVENTS WHERE eventType IN (59, 60)"
        " AND end IS NOT NULL)").fetchone()
    assert (kernels, memcpys, calls, ranges) == (5, 15, 57, 22)
    assert len(_tasks(db, "kernel")) == kernels
    assert len(_tasks(db, "gpu_memcpy")) == memcpys
    assert len(_tasks(db, "gpu_memset")) == memsets
    assert len(_tasks(db, "cuda_runtime")) + len(_tasks(db, "cuda_driver")) == calls
    assert len(_tasks(db, "nvtx")) == ranges
    assert report.tasks == kernels + memcpys + memsets + calls + ranges
    backtraces = db.execute(f"SELECT count(*) FROM src.{RUNTIME} WHERE eventClass = ?",
                            (BACKTRACE,)).fetchone()[0]
    assert report.skipped == backtraces == 38


@pytest.mark.parametrize("table", [KERNEL, MEMCPY, RUNTIME, "NVTX_EVENTS"])
def test_every_duration_is_exact_to_the_nanosecond(sample, table):
    _, db, _ = sample
    rows = db.execute(
        f"SELECT s.start, s.end, t.start_ps, t.end_ps FROM task t JOIN src.{table} s"
        f" ON t.ext_id = '{table}:' || s.rowid").fetchall()
    assert rows
    for start, end, start_ps, end_ps in rows:
        # Relative to the session start, which is nsys's time 0: ns -> ps exactly.
        assert (start_ps, end_ps) == (start * 1000, end * 1000)


def test_every_correlation_pair_is_a_link(sample):
    report, db, _ = sample
    expected = set()
    for table in (KERNEL, MEMCPY, "CUPTI_ACTIVITY_KIND_MEMSET"):
        expected |= set(db.execute(
            f"SELECT '{RUNTIME}:' || r.rowid, '{table}:' || w.rowid FROM src.{table} w"
            f" JOIN src.{RUNTIME} r ON r.correlationId = w.correlationId"
            f" AND r.eventClass != {BACKTRACE}").fetchall())
    links = set(db.execute(
        "SELECT s.ext_id, d.ext_id FROM task_link l JOIN task s ON s.id = l.src"
        " JOIN task d ON d.id = l.dst WHERE l.kind = 'ac2g'").fetchall())
    assert links == expected and len(links) == 20 == report.links


def test_locations_are_the_kineto_names(sample):
    _, db, _ = sample
    names = [n for n, in db.execute("SELECT name FROM location ORDER BY sort_index")]
    # CPU thread under its process (basename of ./saxpy-mpi-cuda), its ThreadNames name.
    assert names == ["saxpy-mpi-cuda.MPI Rank 0", "GPU[0].stream[7]"]
    assert {loc for *_, loc in _tasks(db, "kernel")} == {"GPU[0].stream[7]"}
    assert {loc for *_, loc in _tasks(db, "cuda_runtime")} == {"saxpy-mpi-cuda.MPI Rank 0"}


def test_launches_nest_in_their_nvtx_range(sample):
    _, db, _ = sample
    rows = db.execute(
        "SELECT k.action, pk.category, pk.action FROM task t JOIN kind k ON k.id = t.kind"
        " JOIN task p ON p.id = t.parent JOIN kind pk ON pk.id = p.kind"
        " WHERE k.action = 'cudaLaunchKernel'").fetchall()
    assert rows == [("cudaLaunchKernel", "nvtx", "saxpy")] * 5


def test_kernel_details_carry_the_files_launch_facts(sample):
    _, db, _ = sample
    rows = db.execute(
        "SELECT t.details, k.action, s.gridX, s.gridY, s.gridZ, s.blockX, s.blockY, s.blockZ,"
        " s.registersPerThread, s.staticSharedMemory, s.dynamicSharedMemory, d.value, n.value"
        f" FROM task t JOIN kind k ON k.id = t.kind JOIN src.{KERNEL} s"
        f" ON t.ext_id = '{KERNEL}:' || s.rowid JOIN src.StringIds d ON d.id = s.demangledName"
        " JOIN src.StringIds n ON n.id = s.shortName").fetchall()
    assert len(rows) == 5
    for details, action, gx, gy, gz, bx, by, bz, regs, static, dynamic, demangled, short in rows:
        d = json.loads(details)
        assert d["grid"] == [gx, gy, gz] and d["block"] == [bx, by, bz]
        assert d["registers per thread"] == regs
        assert d["shared memory"] == static + dynamic
        assert d["demangled name"] == demangled == action
        assert d["short name"] == short == "saxpy"


def test_memcpy_details_carry_bytes_kind_and_bandwidth(sample):
    _, db, _ = sample
    rows = db.execute(
        "SELECT t.details, k.action, s.bytes, s.copyKind, s.start, s.end FROM task t"
        f" JOIN kind k ON k.id = t.kind JOIN src.{MEMCPY} s ON t.ext_id = '{MEMCPY}:' || s.rowid"
    ).fetchall()
    kinds = {1: "HtoD", 2: "DtoH"}
    for details, action, size, copy_kind, start, end in rows:
        d = json.loads(details)
        assert d["bytes"] == size and d["kind"] == kinds[copy_kind]
        assert action.startswith(f"Memcpy {kinds[copy_kind]}")
        assert d["memory bandwidth (GB/s)"] == pytest.approx(size / (end - start))


def test_session_start_and_gpu_facts_are_run_metadata(sample):
    _, db, _ = sample
    origin, clock, metadata = db.execute("SELECT time_origin, clock, metadata FROM run").fetchone()
    epoch_ns, utc = db.execute(
        "SELECT utcEpochNs, utcTime FROM src.TARGET_INFO_SESSION_START_TIME").fetchone()
    assert clock == "unix" and origin == decimal_seconds(epoch_ns * 1000)
    meta = json.loads(metadata)
    assert meta["session_start"]["utcTime"] == utc
    name, sms, clock_hz = db.execute(
        "SELECT name, smCount, clockRate FROM src.TARGET_INFO_GPU").fetchone()
    assert [(g["name"], g["smCount"], g["clockRate"]) for g in meta["gpus"]] == [(name, sms, clock_hz)]
    assert meta["export"]["EXPORT_PRODUCT_VERSION"] == "2022.2.1.31"


def test_info_shows_the_clock_and_the_gpu(sample):
    _, _, out = sample
    result = subprocess.run([sys.executable, "-m", "simulator", "info", str(out)],
                            capture_output=True, text=True, env=_env(), check=True)
    assert "time origin  2023-06-26 21:00:57.637297504 UTC" in result.stdout
    assert "NVIDIA A100-SXM4-40GB" in result.stdout


def test_chrome_export_writes_the_links_as_flows(sample, tmp_path):
    _, db, out = sample
    export_trace(out, tmp_path / "saxpy.json", "chrome")
    events = json.loads((tmp_path / "saxpy.json").read_text())["traceEvents"]
    starts = [e for e in events if e.get("ph") == "s"]
    finishes = [e for e in events if e.get("ph") == "f"]
    assert len(starts) == len(finishes) == db.execute("SELECT count(*) FROM task_link").fetchone()[0]


def test_the_input_is_left_unchanged(tmp_path):
    digest = hashlib.sha256(SAMPLE.read_bytes()).hexdigest()
    _import(SAMPLE, tmp_path / "a.sqlite")
    assert hashlib.sha256(SAMPLE.read_bytes()).hexdigest() == digest


# -- versions: optional tables and columns, essential ones --------------------------------
def _copy(tmp_path, *statements):
    path = tmp_path / "edited.sqlite"
    shutil.copyfile(SAMPLE, path)
    db = sqlite3.connect(path)
    for statement in statements:
        db.execute(statement)
    db.commit()
    db.close()
    return path


OPTIONAL_TABLES = ("NVTX_EVENTS", "ThreadNames", "PROCESSES", "TARGET_INFO_GPU",
                   "TARGET_INFO_SESSION_START_TIME", "EXPORT_META_DATA", MEMCPY,
                   "CUPTI_ACTIVITY_KIND_MEMSET", "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", "OSRT_API")
OPTIONAL_COLUMNS = {KERNEL: ("mangledName", "gridX", "gridY", "gridZ", "registersPerThread",
                             "sharedMemoryExecuted", "globalPid", "launchType"),
                    RUNTIME: ("eventClass", "returnValue", "callchainId")}


def test_optional_tables_and_columns_may_be_missing(tmp_path):
    drops = [f"DROP TABLE {t}" for t in OPTIONAL_TABLES]
    drops += [f"ALTER TABLE {t} DROP COLUMN {c}" for t, cs in OPTIONAL_COLUMNS.items() for c in cs]
    path = _copy(tmp_path, *drops)
    report = _import(path, tmp_path / "out.sqlite")
    db = _ro(tmp_path / "out.sqlite")
    # Without eventClass the backtrace rows cannot be told apart: every row is a call.
    assert report.tasks == 5 + 95
    names = {n for n, in db.execute("SELECT name FROM location")}
    assert names == {"process[1230493].thread[1230493]", "GPU[0].stream[7]"}
    assert db.execute("SELECT clock, time_origin FROM run").fetchone() == ("source", "0")
    details = json.loads(db.execute(
        "SELECT details FROM task t JOIN kind k ON k.id = t.kind WHERE k.category = 'kernel'"
        " LIMIT 1").fetchone()[0])
    assert "grid" not in details and details["block"] == [512, 1, 1]
    assert report.links == 10  # each kernel from both rows of its correlationId


def _cli_import(src, out):
    return subprocess.run([sys.executable, "-m", "simulator", "import", str(src), "-o", str(out)],
                          capture_output=True, text=True, env=_env(), check=False)


def _env():
    return dict(os.environ, PYTHONPATH=str(ROOT))


@pytest.mark.parametrize("statement, words", [
    ("DROP TABLE StringIds", ["without table StringIds"]),
    (f"ALTER TABLE {KERNEL} DROP COLUMN start", [KERNEL, "no column start"]),
    (f"ALTER TABLE {RUNTIME} DROP COLUMN nameId", [RUNTIME, "no column nameId"]),
])
def test_a_missing_essential_table_or_column_is_one_clear_line(tmp_path, statement, words):
    path = _copy(tmp_path, statement)
    out = tmp_path / "out.sqlite"
    result = _cli_import(path, out)
    assert result.returncode != 0
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr
    assert lines[0].startswith(f"error: {path}: ")
    assert all(w in lines[0] for w in words)
    assert not out.exists() and not list(tmp_path.glob("out.sqlite*"))


def test_an_export_without_activity_has_nothing_to_import(tmp_path):
    path = _copy(tmp_path, *[f"DROP TABLE {t}" for t in (
        KERNEL, MEMCPY, RUNTIME, "CUPTI_ACTIVITY_KIND_MEMSET", "NVTX_EVENTS", "OSRT_API",
        "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION")])
    with pytest.raises(TraceFormatError, match="without any table of activity"):
        _import(path, tmp_path / "out.sqlite")


# -- a small export built from nsys's documented schema ----------------------------------
SCHEMA = {
    "StringIds": "id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL",
    "ThreadNames": "nameId INTEGER NOT NULL, priority INTEGER, globalTid INTEGER",
    "PROCESSES": "globalPid INTEGER, pid INTEGER, name TEXT",
    "TARGET_INFO_SESSION_START_TIME": "utcEpochNs INTEGER, utcTime TEXT, localTime TEXT",
    "TARGET_INFO_GPU": "vmId INTEGER NOT NULL, id INTEGER NOT NULL, name TEXT, busLocation TEXT,"
                       " totalMemory INTEGER, memoryBandwidth INTEGER, clockRate INTEGER,"
                       " smCount INTEGER, chipName TEXT, computeMajor INTEGER,"
                       " computeMinor INTEGER",
    "ENUM_CUDA_MEMCPY_OPER": "id INTEGER NOT NULL PRIMARY KEY, name TEXT, label TEXT",
    "ENUM_CUDA_MEM_KIND": "id INTEGER NOT NULL PRIMARY KEY, name TEXT, label TEXT",
    RUNTIME: "start INTEGER NOT NULL, end INTEGER NOT NULL, eventClass INTEGER NOT NULL,"
             " globalTid INTEGER, correlationId INTEGER, nameId INTEGER NOT NULL,"
             " returnValue INTEGER NOT NULL, callchainId INTEGER",
    KERNEL: "start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,"
            " contextId INTEGER NOT NULL, greenContextId INTEGER, streamId INTEGER NOT NULL,"
            " correlationId INTEGER, globalPid INTEGER, demangledName INTEGER NOT NULL,"
            " shortName INTEGER NOT NULL, mangledName INTEGER, launchType INTEGER,"
            " cacheConfig INTEGER, registersPerThread INTEGER NOT NULL, gridX INTEGER NOT NULL,"
            " gridY INTEGER NOT NULL, gridZ INTEGER NOT NULL, blockX INTEGER NOT NULL,"
            " blockY INTEGER NOT NULL, blockZ INTEGER NOT NULL,"
            " staticSharedMemory INTEGER NOT NULL, dynamicSharedMemory INTEGER NOT NULL,"
            " localMemoryPerThread INTEGER NOT NULL, localMemoryTotal INTEGER NOT NULL,"
            " gridId INTEGER NOT NULL, sharedMemoryExecuted INTEGER, graphNodeId INTEGER,"
            " sharedMemoryLimitConfig INTEGER",
    MEMCPY: "start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,"
            " contextId INTEGER NOT NULL, streamId INTEGER NOT NULL, correlationId INTEGER,"
            " globalPid INTEGER, bytes INTEGER NOT NULL, copyKind INTEGER NOT NULL,"
            " deprecatedSrcId INTEGER, srcKind INTEGER, dstKind INTEGER, srcDeviceId INTEGER,"
            " srcContextId INTEGER, dstDeviceId INTEGER, dstContextId INTEGER,"
            " migrationCause INTEGER, graphNodeId INTEGER, virtualAddress INTEGER",
    "CUPTI_ACTIVITY_KIND_MEMSET": "start INTEGER NOT NULL, end INTEGER NOT NULL,"
            " deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, streamId INTEGER NOT NULL,"
            " correlationId INTEGER, globalPid INTEGER, value INTEGER NOT NULL,"
            " bytes INTEGER NOT NULL, graphNodeId INTEGER, memKind INTEGER",
    "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION": "start INTEGER NOT NULL, end INTEGER NOT NULL,"
            " deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, streamId INTEGER NOT NULL,"
            " correlationId INTEGER, globalPid INTEGER, syncType INTEGER NOT NULL,"
            " eventId INTEGER NOT NULL",
    "NVTX_EVENTS": "start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL,"
                   " rangeId INTEGER, category INTEGER, color INTEGER, text TEXT,"
                   " globalTid INTEGER, endGlobalTid INTEGER, textId INTEGER, domainId INTEGER,"
                   " uint64Value INTEGER, int64Value INTEGER, doubleValue REAL,"
                   " uint32Value INTEGER, int32Value INTEGER, floatValue REAL,"
                   " jsonTextId INTEGER, jsonText TEXT",
    "OSRT_API": "start INTEGER NOT NULL, end INTEGER NOT NULL, eventClass INTEGER NOT NULL,"
                " globalTid INTEGER, nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL,"
                " nestingLevel INTEGER, callchainId INTEGER NOT NULL",
    "GPU_METRICS": "typeId INTEGER NOT NULL, timestamp INTEGER, metricId INTEGER NOT NULL,"
                   " value INTEGER NOT NULL",
    "TARGET_INFO_GPU_METRICS": "typeId INTEGER NOT NULL, sourceId INTEGER NOT NULL,"
                               " typeName TEXT NOT NULL, metricId INTEGER NOT NULL,"
                               " metricName TEXT NOT NULL",
}
T = 5_000_000_000_000  # ns: 5000 s into the session, past what a double holds in ps
EPOCH_NS = 1_700_000_000_123_456_789


def _gpid(pid):
    return (0x11 << 48) | (pid << 24)


def _gtid(pid, tid):
    return _gpid(pid) | tid


RANK0, W1, W2, RANK1 = _gtid(100, 100), _gtid(100, 101), _gtid(100, 102), _gtid(200, 200)
STRINGS = ["rank0", "worker", "cudaLaunchKernel_v7000", "cudaLaunchKernel",
           "cudaMemsetAsync_v3020", "cudaStreamSynchronize_v3020", "cuLaunchKernel",
           "void scale<float>(float*, int)", "scale", "_Z5scaleIfEvPfi", "registered-range",
           "pthread_cond_wait"]
S = {s: i for i, s in enumerate(STRINGS)}


def build_export(path):
    """Two MPI ranks of one program (same name, same correlationIds), three CPU threads
    in rank 0 (two of them named alike), two GPUs, every table this importer reads."""
    db = sqlite3.connect(path)
    for table, columns in SCHEMA.items():
        db.execute(f"CREATE TABLE {table} ({columns})")

    def rows(table, *values):
        marks = ", ".join("?" * len(values[0]))
        db.executemany(f"INSERT INTO {table} VALUES ({marks})", values)

    rows("StringIds", *enumerate(STRINGS))
    rows("ThreadNames", (S["rank0"], 10, RANK0), (S["worker"], 10, W1), (S["worker"], 10, W2))
    rows("PROCESSES", (_gpid(100), 100, "/opt/app/trainer"), (_gpid(200), 200, "/opt/app/trainer"))
    rows("TARGET_INFO_SESSION_START_TIME", (EPOCH_NS, "2023-11-14T22:13:20", "2023-11-14T23:13:20"))
    rows("TARGET_INFO_GPU", (1, 0, "GPU Zero", "0000:03:00.0", 1 << 35, 10 ** 12, 1_400_000_000,
                             108, "GA100", 8, 0),
         (1, 1, "GPU One", "0000:04:00.0", 1 << 35, 10 ** 12, 1_400_000_000, 108, "GA100", 8, 0))
    rows("ENUM_CUDA_MEMCPY_OPER", (1, "CUDA_MEMCPY_KIND_HTOD", "Host-to-Device"),
         (14, "CUDA_MEMCPY_KIND_FUTURE", "Future-Copy"))
    rows("ENUM_CUDA_MEM_KIND", (1, "CUDA_MEMOPR_MEMORY_KIND_PINNED", "Pinned"),
         (2, "CUDA_MEMOPR_MEMORY_KIND_DEVICE", "Device"))
    rows(RUNTIME,
         (T + 100, T + 110, 0, RANK0, 5, S["cudaLaunchKernel_v7000"], 0, None),
         (T + 99, T + 111, 67, RANK0, 5, S["cudaLaunchKernel"], 0, 1),  # its backtrace
         (T + 120, T + 125, 0, RANK0, 6, S["cudaMemsetAsync_v3020"], 0, None),
         (T + 130, T + 400, 0, RANK0, 7, S["cudaStreamSynchronize_v3020"], 0, None),
         (T + 410, T + 420, 1, RANK0, 8, S["cuLaunchKernel"], 0, None),
         (T + 105, T + 115, 0, RANK1, 5, S["cudaLaunchKernel_v7000"], 0, None))
    kernel = (S["void scale<float>(float*, int)"], S["scale"])
    rows(KERNEL,
         (T + 200, T + 350, 0, 1, None, 7, 5, _gpid(100), *kernel, S["_Z5scaleIfEvPfi"], 1, 0,
          32, 4, 2, 1, 256, 1, 1, 1024, 2048, 0, 0, 1, 3072, None, 0),
         (T + 300, T + 500, 1, 2, None, 13, 5, _gpid(200), *kernel, None, 1, 0,
          40, 8, 1, 1, 128, 1, 1, 0, 0, 0, 0, 2, 0, None, 0),
         (T + 500, T + 600, 0, 1, None, 7, 8, _gpid(100), *kernel, None, 1, 0,
          32, 4, 2, 1, 256, 1, 1, 1024, 2048, 0, 0, 3, 3072, None, 0))
    rows("CUPTI_ACTIVITY_KIND_MEMSET", (T + 150, T + 160, 0, 1, 7, 6, _gpid(100), 0, 4096, None, 2))
    rows(MEMCPY, (T + 700, T + 800, 0, 1, 8, 9, _gpid(100), 1 << 20, 14, None, 1, 2, 0, 1, 0, 1,
                  None, None, None))
    rows("CUPTI_ACTIVITY_KIND_SYNCHRONIZATION",
         (T + 350, T + 399, 0, 1, 7, 7, _gpid(100), 3, 0),
         (T + 900, T + 950, 0, 1, 0xFFFFFFFF, 99, _gpid(100), 4, 0))  # no call of its own
    nvtx = "start, end, eventType, category, color, text, globalTid, endGlobalTid, textId," \
           " domainId, uint64Value"
    for values in ((T + 1, None, 75, None, None, "io", RANK0, None, None, 3, None),
                   (T + 2, None, 33, 2, None, "phase", RANK0, None, None, 3, None),
                   (T + 50, T + 700, 60, 2, 0xFF00FF00, "load", RANK0, W1, None, 3, 42),
                   (T + 90, T + 450, 59, None, None, "step", RANK0, None, None, 0, None),
                   (T + 95, T + 128, 59, None, None, "forward", RANK0, None, None, 0, None),
                   (T + 300, None, 34, None, None, "checkpoint", RANK0, None, None, 0, None),
                   (T + 800, None, 59, None, None, "unfinished", RANK0, None, None, 0, None),
                   (T + 600, T + 650, 59, None, None, None, W1, None, S["registered-range"], 0,
                    None)):
        db.execute(f"INSERT INTO NVTX_EVENTS ({nvtx}) VALUES ({', '.join('?' * 11)})", values)
    rows("OSRT_API", (T + 10, T + 900, 27, W2, S["pthread_cond_wait"], 0, 0, 1))
    gpu1 = (5 << 8) | 1
    rows("TARGET_INFO_GPU_METRICS", (gpu1, 1, "GA100", 0, "SMs Active [Throughput %]"),
         (gpu1, 1, "GA100", 1, "GPC Clock Frequency [MHz]"))
    rows("GPU_METRICS", (gpu1, T + 100, 0, 55), (gpu1, T + 200, 0, 60), (gpu1, T + 100, 1, 1410),
         (gpu1, -5, 0, 1))
    db.commit()
    db.close()
    return path


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    directory = tmp_path_factory.mktemp("nsys-schema")
    src = build_export(directory / "built.sqlite")
    report = _import(src, directory / "out.sqlite")
    db = _ro(directory / "out.sqlite")
    yield report, db
    db.close()


def _by_action(db):
    rows = db.execute(
        "SELECT t.id, t.parent, k.category, k.action, l.name, t.start_ps, t.end_ps, t.details"
        " FROM task t JOIN kind k ON k.id = t.kind JOIN location l ON l.id = t.location"
        " ORDER BY t.id").fetchall()
    return {r[3] + ("@" + r[4] if r[3] in ("cudaLaunchKernel", "void scale<float>(float*, int)")
                    else ""): r for r in rows}


def test_schema_built_export_is_detected_and_counted(built, tmp_path):
    report, _ = built
    assert detect_format(build_export(tmp_path / "again.sqlite")) == "nsys"
    # 5 calls (the backtrace row is its call's), 3 kernels, 1 memset, 1 memcpy, 2 waits,
    # 5 NVTX ranges (one never ended), 1 OS runtime call.
    assert report.tasks == 18
    assert report.skipped == 2  # the backtrace row, a sample before 0
    assert report.instants == 1 and report.counters == 3


def test_schema_built_range_never_ended_lasts_to_the_recordings_end_flagged_open(built):
    """The recording stopped inside the range: it ends where the export's last activity
    does (a synchronization, at T + 950), flagged still open, as Perfetto draws it."""
    _, db = built
    rows = db.execute("SELECT k.action, t.start_ps, t.end_ps, t.flags & 1 FROM task t JOIN kind k"
                      " ON k.id = t.kind WHERE t.flags & 1").fetchall()
    assert rows == [("unfinished", (T + 800) * 1000, (T + 950) * 1000, 1)]
    assert db.execute("SELECT open_tasks FROM run").fetchone() == (1,)


def test_schema_built_locations(built):
    _, db = built
    names = [n for n, in db.execute("SELECT name FROM location ORDER BY sort_index")]
    assert names == ["trainer[100].rank0", "trainer[100].worker[101]", "trainer[100].worker[102]",
                     "trainer[200].thread[200]", "GPU[0].stream[7]", "GPU[0].stream[8]",
                     "GPU[0].sync", "GPU[1]", "GPU[1].stream[13]"]


def test_schema_built_times_are_exact(built):
    _, db = built
    tasks = _by_action(db)
    assert tasks["cudaLaunchKernel@trainer[100].rank0"][5:7] == ((T + 100) * 1000, (T + 110) * 1000)
    assert tasks["pthread_cond_wait"][5:7] == ((T + 10) * 1000, (T + 900) * 1000)
    assert db.execute("SELECT time_origin, clock FROM run").fetchone() == (
        "1700000000.123456789", "unix")


def test_schema_built_links_match_within_a_process(built):
    _, db = built
    links = set(db.execute(
        "SELECT sk.action, sl.name, dk.action, dl.name, l.kind FROM task_link l"
        " JOIN task s ON s.id = l.src JOIN kind sk ON sk.id = s.kind"
        " JOIN location sl ON sl.id = s.location JOIN task d ON d.id = l.dst"
        " JOIN kind dk ON dk.id = d.kind JOIN location dl ON dl.id = d.location").fetchall())
    kernel = "void scale<float>(float*, int)"
    assert links == {
        ("cudaLaunchKernel", "trainer[100].rank0", kernel, "GPU[0].stream[7]", "ac2g"),
        ("cudaLaunchKernel", "trainer[200].thread[200]", kernel, "GPU[1].stream[13]", "ac2g"),
        ("cuLaunchKernel", "trainer[100].rank0", kernel, "GPU[0].stream[7]", "ac2g"),
        ("cudaMemsetAsync", "trainer[100].rank0", "Memset (Device)", "GPU[0].stream[7]", "ac2g"),
        ("cudaStreamSynchronize", "trainer[100].rank0", "Stream Sync", "trainer[100].rank0",
         "sync"),
    }


def test_schema_built_nesting_on_each_thread(built):
    _, db = built
    tasks = _by_action(db)
    key = {r[0]: name for name, r in tasks.items()}
    parent = {name: key.get(r[1]) for name, r in tasks.items()}
    assert parent["load"] is None and parent["step"] == "load"
    assert parent["forward"] == "step"
    assert parent["cudaLaunchKernel@trainer[100].rank0"] == "forward"
    assert parent["cudaStreamSynchronize"] == "step"
    assert parent["Stream Sync"] == "cudaStreamSynchronize"
    assert tasks["Context Sync"][4] == "GPU[0].sync"
    assert tasks["registered-range"][4] == "trainer[100].worker[101]"
    assert tasks["cuLaunchKernel"][2] == "cuda_driver"
    assert json.loads(tasks["cudaLaunchKernel@trainer[100].rank0"][7])["name"] == \
        "cudaLaunchKernel_v7000"


def test_schema_built_details(built):
    _, db = built
    tasks = _by_action(db)
    kernel = json.loads(db.execute("SELECT details FROM task WHERE ext_id = ?",
                                   (f"{KERNEL}:1",)).fetchone()[0])
    assert kernel["grid"] == [4, 2, 1] and kernel["block"] == [256, 1, 1]
    assert kernel["registers per thread"] == 32 and kernel["shared memory"] == 3072
    assert kernel["short name"] == "scale" and kernel["mangled name"] == "_Z5scaleIfEvPfi"
    memset = json.loads(tasks["Memset (Device)"][7])
    assert memset["bytes"] == 4096 and memset["memory bandwidth (GB/s)"] == 409.6
    # A copy kind the built-in table lacks takes the export's own enum label.
    memcpy = tasks["Memcpy Future-Copy (Pinned -> Device)"]
    assert json.loads(memcpy[7])["bytes"] == 1 << 20
    load = json.loads(tasks["load"][7])
    assert load == {"domain": "io", "category": "phase", "color": "#00ff00", "payload": 42,
                    "ended on thread": 101}


def test_schema_built_marks_and_metrics(built):
    _, db = built
    assert db.execute(
        "SELECT l.name, i.time_ps, i.name, i.category FROM instant i"
        " JOIN location l ON l.id = i.location").fetchall() == [
        ("trainer[100].rank0", (T + 300) * 1000, "checkpoint", "nvtx")]
    series = db.execute(
        "SELECT l.name, s.name, s.unit, c.time_ps, c.value FROM counter c"
        " JOIN counter_series s ON s.id = c.series JOIN location l ON l.id = s.location"
        " ORDER BY s.name, c.time_ps").fetchall()
    assert series == [
        ("GPU[1]", "GPC Clock Frequency [MHz]", "MHz", (T + 100) * 1000, 1410),
        ("GPU[1]", "SMs Active [Throughput %]", "%", (T + 100) * 1000, 55),
        ("GPU[1]", "SMs Active [Throughput %]", "%", (T + 200) * 1000, 60)]
    gpus = json.loads(db.execute("SELECT metadata FROM run").fetchone()[0])["gpus"]
    assert [g["name"] for g in gpus] == ["GPU Zero", "GPU One"]


def test_a_gzipped_export_imports_alike(sample, tmp_path):
    report, _, _ = sample
    zipped = tmp_path / "saxpy.sqlite.gz"
    with open(SAMPLE, "rb") as f, gzip.open(zipped, "wb") as out:
        shutil.copyfileobj(f, out)
    assert detect_format(zipped) == "nsys"
    again = _import(zipped, tmp_path / "out.sqlite")
    assert (again.tasks, again.links, again.skipped) == (report.tasks, report.links, report.skipped)


GRAPH = "CUPTI_ACTIVITY_KIND_GRAPH_TRACE"


def test_whole_cuda_graphs_are_tasks_on_their_stream_linked_from_their_launch(tmp_path):
    """``--cuda-graph-trace=graph`` records each graph launch as one row of
    CUPTI_ACTIVITY_KIND_GRAPH_TRACE instead of its kernels (the columns as nsys writes
    them); here the sample's kernels are recorded so."""
    path = _copy(
        tmp_path,
        f"CREATE TABLE {GRAPH} (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER"
        " NOT NULL, contextId INTEGER NOT NULL, greenContextId INTEGER, streamId INTEGER NOT NULL,"
        " correlationId INTEGER, globalPid INTEGER, graphId INTEGER NOT NULL, graphExecId INTEGER"
        " NOT NULL)",
        f"INSERT INTO {GRAPH} SELECT start, end, deviceId, contextId, NULL, streamId,"
        f" correlationId, globalPid, 1, 100 + rowid FROM {KERNEL}",
        f"DELETE FROM {KERNEL}")
    _import(path, tmp_path / "out.sqlite")
    db = _ro(tmp_path / "out.sqlite")
    db.execute("ATTACH DATABASE ? AS src", (f"file:{path}?mode=ro",))
    graphs = _tasks(db, "cuda_graph")
    expected = db.execute(f"SELECT rowid, start * 1000, end * 1000, correlationId, graphExecId"
                          f" FROM src.{GRAPH} ORDER BY start").fetchall()
    assert len(graphs) == len(expected) == 5
    shift = graphs[0][1] - expected[0][1]  # one constant shift to relative time
    for (ext, start, end, details, action, location), (row, s, e, corr, exec_id) in zip(
            graphs, expected):
        assert (ext, action, location) == (f"{GRAPH}:{row}", f"Graph Exec {exec_id}",
                                           "GPU[0].stream[7]")
        assert (start - s, end - e) == (shift, shift)
        assert json.loads(details)["correlation"] == corr
    launched = db.execute(
        "SELECT count(DISTINCT l.dst) FROM task_link l JOIN task g ON g.id = l.dst JOIN kind k"
        " ON k.id = g.kind JOIN task c ON c.id = l.src WHERE k.category = 'cuda_graph'"
        " AND json_extract(c.details, '$.correlation') = json_extract(g.details, '$.correlation')"
    ).fetchone()[0]
    assert launched == 5


def test_the_exporters_version_is_read_from_either_tables_name(tmp_path):
    """nsys 2023 and later name the exporter's table META_DATA_EXPORT."""
    path = _copy(tmp_path, "ALTER TABLE EXPORT_META_DATA RENAME TO META_DATA_EXPORT")
    _import(path, tmp_path / "out.sqlite")
    meta = json.loads(_ro(tmp_path / "out.sqlite").execute("SELECT metadata FROM run").fetchone()[0])
    assert meta["export"]["EXPORT_PRODUCT_VERSION"] == "2022.2.1.31"


def _normalized_export(path):
    """``build_export``'s file as ``--ts-normalize=true`` writes it: every time on the Unix
    clock, from the session start's ``utcEpochNs``."""
    build_export(path)
    with closing(sqlite3.connect(path)) as db:
        for table, columns in SCHEMA.items():
            for column in ("start", "end", "timestamp"):
                if re.search(rf"\b{column} INTEGER", columns):
                    db.execute(f'UPDATE "{table}" SET "{column}" = "{column}" + ?', (EPOCH_NS,))
        db.commit()
    return path


def test_an_export_with_times_on_the_unix_clock_imports_as_the_plain_one(built, tmp_path):
    """``nsys export --ts-normalize=true`` writes every time as UTC nanoseconds (the session
    start's ``utcEpochNs`` and on): the same tasks, times and origin as the plain export
    (it was refused as spanning 54 years)."""
    _, plain = built
    path = _normalized_export(tmp_path / "normalized.sqlite")
    report = _import(path, tmp_path / "out.sqlite")
    assert report.tasks == 18 and report.skipped == 2  # the sample before the session too
    out = _ro(tmp_path / "out.sqlite")
    query = ("SELECT k.action, l.name, t.start_ps, t.end_ps, t.flags FROM task t JOIN kind k"
             " ON k.id = t.kind JOIN location l ON l.id = t.location ORDER BY t.id")
    assert out.execute(query).fetchall() == plain.execute(query).fetchall()
    run = "SELECT time_origin, clock FROM run"
    assert out.execute(run).fetchone() == plain.execute(run).fetchone() == (
        "1700000000.123456789", "unix")


def test_an_export_on_the_unix_clock_whose_first_row_precedes_the_session_still_imports(tmp_path):
    """Which clock the times are on is read from one row, which may lie a little before
    the session start (it was taken for a time since the start, and refused)."""
    path = _normalized_export(tmp_path / "normalized.sqlite")
    db = sqlite3.connect(path)
    first = next(t for t in nsys.ACTIVITY if t in SCHEMA)
    db.execute(f'UPDATE "{first}" SET start = ? WHERE rowid = (SELECT min(rowid) FROM "{first}")',
               (EPOCH_NS - 5000,))
    db.commit()
    db.close()
    _import(path, tmp_path / "out.sqlite")
    run = _ro(tmp_path / "out.sqlite").execute("SELECT time_origin, clock FROM run").fetchone()
    assert run == ("1700000000.123451789", "unix")
