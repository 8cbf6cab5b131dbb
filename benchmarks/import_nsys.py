"""Importing an Nsight Systems export versus the same profile as Kineto Chrome JSON.

Both files hold the same synthetic CUDA program, written once up front: one CPU thread
launching kernels (each inside an NVTX range, each with a cudaLaunchKernel) and copies on
one GPU stream, every launch linked to its work (nsys: correlationId; Chrome: ac2g flows).

* ours: ``import_trace`` on the nsys SQLite export (``simulator/tracing/importers/nsys.py``);
* baseline: ``import_trace`` on the Kineto-style Chrome JSON of the same events (the Chrome
  importer, the other importer of real GPU profiles).

Prints tasks/s of each and the ratio (goal: at least the Chrome importer's speed), and
the Python heap peak of the nsys import at two sizes, both past the loader's
batches (goal: it does not grow with the file).

    python benchmarks/import_nsys.py [--launches 100000]
"""
import argparse
import json
import sqlite3
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from simulator.tracing.importers import import_trace  # noqa: E402

PID, TID, DEVICE, STREAM = 4242, 4242, 0, 7
GTID = (1 << 48) | (PID << 24) | TID
BASE_NS = 1_700_000_000_000_000_000


def program(launches):
    """(kind, start_ns, end_ns, correlation) rows: per launch an NVTX range, the call,
    and its kernel or copy on the GPU."""
    t = 1_000_000
    for i in range(launches):
        corr = i + 1
        yield "nvtx", t, t + 9_000, None
        yield "call", t + 1_000, t + 6_000, corr
        yield ("kernel" if i % 4 else "memcpy"), t + 5_000, t + 14_000, corr
        t += 15_000


def write_nsys(path, launches):
    db = sqlite3.connect(path)
    db.executescript(
        "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);"
        "CREATE TABLE ThreadNames (nameId INTEGER, priority INTEGER, globalTid INTEGER);"
        "CREATE TABLE PROCESSES (globalPid INTEGER, pid INTEGER, name TEXT);"
        "CREATE TABLE TARGET_INFO_SESSION_START_TIME (utcEpochNs INTEGER, utcTime TEXT,"
        " localTime TEXT);"
        "CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER, end INTEGER,"
        " eventClass INTEGER, globalTid INTEGER, correlationId INTEGER, nameId INTEGER,"
        " returnValue INTEGER, callchainId INTEGER);"
        "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER, deviceId INTEGER,"
        " contextId INTEGER, streamId INTEGER, correlationId INTEGER, globalPid INTEGER,"
        " demangledName INTEGER, shortName INTEGER, mangledName INTEGER,"
        " registersPerThread INTEGER, gridX INTEGER, gridY INTEGER, gridZ INTEGER,"
        " blockX INTEGER, blockY INTEGER, blockZ INTEGER, staticSharedMemory INTEGER,"
        " dynamicSharedMemory INTEGER, localMemoryPerThread INTEGER, localMemoryTotal INTEGER,"
        " gridId INTEGER);"
        "CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER, end INTEGER, deviceId INTEGER,"
        " contextId INTEGER, streamId INTEGER, correlationId INTEGER, globalPid INTEGER,"
        " bytes INTEGER, copyKind INTEGER, srcKind INTEGER, dstKind INTEGER);"
        "CREATE TABLE NVTX_EVENTS (start INTEGER, end INTEGER, eventType INTEGER,"
        " text TEXT, globalTid INTEGER, domainId INTEGER);")
    db.executemany("INSERT INTO StringIds VALUES (?, ?)", enumerate(
        ["main", "cudaLaunchKernel_v7000", "void step<float>(float*, int)", "step", "_Z4stepIfEvPfi"]))
    db.execute("INSERT INTO ThreadNames VALUES (0, 10, ?)", (GTID,))
    db.execute("INSERT INTO PROCESSES VALUES (?, ?, 'bench')", (GTID >> 24 << 24, PID))
    db.execute("INSERT INTO TARGET_INFO_SESSION_START_TIME VALUES (?, '', '')", (BASE_NS,))
    gpid = GTID >> 24 << 24
    rows = {"nvtx": [], "call": [], "kernel": [], "memcpy": []}
    for kind, start, end, corr in program(launches):
        if kind == "nvtx":
            rows[kind].append((start, end, 59, "iteration", GTID, 0))
        elif kind == "call":
            rows[kind].append((start, end, 0, GTID, corr, 1, 0, None))
        elif kind == "kernel":
            rows[kind].append((start, end, DEVICE, 1, STREAM, corr, gpid, 2, 3, 4, 32, 128, 1, 1,
                               256, 1, 1, 0, 1024, 0, 0, corr))
        else:
            rows[kind].append((start, end, DEVICE, 1, STREAM, corr, gpid, 1 << 20, 1, 1, 2))
    for table, kind in (("NVTX_EVENTS", "nvtx"), ("CUPTI_ACTIVITY_KIND_RUNTIME", "call"),
                        ("CUPTI_ACTIVITY_KIND_KERNEL", "kernel"),
                        ("CUPTI_ACTIVITY_KIND_MEMCPY", "memcpy")):
        marks = ", ".join("?" * len(rows[kind][0]))
        db.executemany(f"INSERT INTO {table} VALUES ({marks})", rows[kind])
    db.commit()
    db.close()


def write_chrome(path, launches):
    """The same events as PyTorch's profiler writes them (µs with ns digits, ac2g flows)."""
    def us(ns):
        return f"{ns // 1000}.{ns % 1000:03d}"

    with open(path, "w") as f:
        f.write('{"baseTimeNanoseconds": %d, "traceEvents": [\n' % BASE_NS)
        f.write(json.dumps({"ph": "M", "name": "process_labels", "pid": DEVICE,
                            "args": {"labels": "GPU 0"}}))
        for kind, start, end, corr in program(launches):
            if kind == "nvtx":
                event = {"ph": "X", "cat": "user_annotation", "name": "iteration", "pid": PID,
                         "tid": TID}
            elif kind == "call":
                event = {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": PID,
                         "tid": TID, "args": {"correlation": corr}}
                f.write(',\n{"ph": "s", "id": %d, "pid": %d, "tid": %d, "ts": %s, "cat": "ac2g",'
                        ' "name": "ac2g"}' % (corr, PID, TID, us(start)))
            else:
                event = {"ph": "X", "cat": "kernel" if kind == "kernel" else "gpu_memcpy",
                         "name": "void step<float>(float*, int)" if kind == "kernel"
                         else "Memcpy HtoD (Pageable -> Device)", "pid": DEVICE, "tid": STREAM,
                         "args": {"correlation": corr, "grid": [128, 1, 1], "block": [256, 1, 1],
                                  "registers per thread": 32}}
                f.write(',\n{"ph": "f", "id": %d, "pid": %d, "tid": %d, "ts": %s, "cat": "ac2g",'
                        ' "name": "ac2g", "bp": "e"}' % (corr, DEVICE, STREAM, us(start)))
            text = json.dumps(event)[:-1]
            f.write(',\n%s, "ts": %s, "dur": %s}' % (text, us(start), us(end - start)))
        f.write("\n]}\n")


def timed(src, out):
    started = time.perf_counter()
    report = import_trace(src, out, show_progress=False)
    return report, time.perf_counter() - started


def heap_peak(src, out):
    tracemalloc.start()
    import_trace(src, out, show_progress=False)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--launches", type=int, default=100_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        write_nsys(tmp / "p.nsys.sqlite", args.launches)
        write_chrome(tmp / "p.json", args.launches)
        ours, ours_s = timed(tmp / "p.nsys.sqlite", tmp / "a.sqlite")
        base, base_s = timed(tmp / "p.json", tmp / "b.sqlite")
        assert ours.tasks == base.tasks and ours.links == base.links == args.launches
        print(f"nsys import:   {ours.tasks:,} tasks, {ours.links:,} links in {ours_s:.2f} s"
              f" ({ours.tasks / ours_s:,.0f} tasks/s)")
        print(f"chrome import: {base.tasks:,} tasks, {base.links:,} links in {base_s:.2f} s"
              f" ({base.tasks / base_s:,.0f} tasks/s)")
        print(f"ratio (nsys / chrome throughput): {base_s / ours_s:.2f}x")
        small = args.launches // 2  # both sizes past the loader's 50,000-row batches
        write_nsys(tmp / "s.nsys.sqlite", small)
        peaks = [heap_peak(tmp / f, tmp / f"peak-{i}.sqlite")
                 for i, f in enumerate(("s.nsys.sqlite", "p.nsys.sqlite"))]
        print(f"nsys import Python heap peak: {peaks[0] / 2**20:.1f} MiB at {small:,} launches,"
              f" {peaks[1] / 2**20:.1f} MiB at {args.launches:,} (ratio {peaks[1] / peaks[0]:.2f})")


if __name__ == "__main__":
    main()
