"""Trace writing: our tracer + writer + finalize versus an akita-v3-style SQLite writer.

Both sides write the same synthetic task stream (R9-Nano-shaped: 514 locations, about
25 (category, action) pairs, nested req_out/req_in chains), recorded once up front so
that generating it is not timed:

* ours: the recorded API calls replayed through the public ``Tracer`` into a
  ``TraceWriter``, then ``finalize`` (indexes, statistics and the metric pyramid);
* baseline: akita v3's ``SQLiteTraceWriter`` layout: one ``trace`` table of 7 text-ish
  columns (xid task IDs, ``msg@component`` receiver IDs, float seconds), its 7 indexes
  created before the load and maintained per insert, 100,000-row transactions.

Prints tasks/s and bytes/task for each, and the ratios (goals: ≥ 5× the throughput,
≤ 1/3 of the bytes per task, ours counting indexes and pyramid).

    python benchmarks/trace_write.py [--tasks 2000000]
"""
import argparse
import os
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from simulator.tracing import PyTracer, Tracer, TraceWriter  # noqa: E402
from simulator.tracing.synthetic import emit  # noqa: E402

XID_ALPHABET = "0123456789abcdefghijklmnopqrstuv"


class Recorder(PyTracer):
    """Runs the generator once, keeping every API call for replay and every final row."""

    def __init__(self):
        self.rows = []
        super().__init__(self, ps_per_tick=1000, batch_size=1 << 30)
        self.calls = []

    def start_task(self, parent, kind, location, time, details=None):
        key = super().start_task(parent, kind, location, time, details)
        self.calls.append((0, parent, kind, location, time))
        return key

    def end_task(self, key, time):
        super().end_task(key, time)
        self.calls.append((1, key, time, 0, 0))

    def tag_task(self, key, time, tag):
        super().tag_task(key, time, tag)
        self.calls.append((2, key, time, tag, 0))

    def write_batch(self, tasks, details, tags, locations, kinds, tag_names):
        self.rows.extend(tasks.tolist())


def record(tasks, seed):
    rec = Recorder()
    clock = [0]
    emit(rec, tasks, seed, 64, clock)
    rec.close(clock[0])
    names = {
        "locations": dict((v, k) for k, v in rec._locations.items()),
        "kinds": dict((v, k) for k, v in rec._kinds.items()),
        "tags": dict((v, k) for k, v in rec._tag_names.items()),
    }
    return rec, names, clock[0]


def run_ours(rec, names, end, path, tracer_class, watchable=True):
    """(seconds to write the rows, seconds including finalize) of replaying ``rec``."""
    started = time.perf_counter()
    writer = TraceWriter(path, command="benchmark", config={}, workload="synthetic",
                         watchable=watchable)
    tracer = tracer_class(writer, ps_per_tick=1000)
    for name in sorted(names["locations"]):
        tracer.location(names["locations"][name])
    for key in sorted(names["kinds"]):
        tracer.kind(*names["kinds"][key])
    for key in sorted(names["tags"]):
        tracer.tag_name(names["tags"][key])
    start, finish, tag = tracer.start_task, tracer.end_task, tracer.tag_task
    for op, a, b, c, d in rec.calls:
        if op == 0:
            start(a, b, c, d)
        elif op == 1:
            finish(a, b)
        else:
            tag(a, b, c)
    tracer.close(end)
    written = time.perf_counter() - started
    writer.finalize(completed=True, show_progress=False)
    writer.close()
    return written, time.perf_counter() - started


def _xid(n):
    """A 20-character, xid-like task ID (akita uses rs/xid)."""
    digits = []
    value = 0x5F3A_9C00_0000_0000_0000 + n * 0x9E37_79B9
    for _ in range(20):
        value, r = divmod(value, 32)
        digits.append(XID_ALPHABET[r])
    return "".join(digits)


def akita_rows(rec, names):
    """The recorded tasks as akita v3 would store them."""
    locs, kinds = names["locations"], names["kinds"]
    ids = {}
    for key, parent, kind, loc, *_ in rec.rows:
        category = kinds[kind][0]
        if category == "req_in":
            ids[key] = f"{_xid(parent)}@{locs[loc]}"
        elif category == "req_out":
            ids[key] = f"{_xid(key)}_req_out"
        else:
            ids[key] = _xid(key)
    return [(ids[key], ids.get(parent, ""), kinds[kind][0], kinds[kind][1], locs[loc],
             start / 1e12, end / 1e12)
            for key, parent, kind, loc, start, end, _ in rec.rows]


AKITA_V3_SCHEMA = """
create table trace (task_id varchar(200) null unique, parent_id varchar(200) null,
  kind varchar(100) null, what varchar(100) null, location varchar(100) null,
  start_time float null, end_time float null);
create index trace_end_time_index on trace (end_time);
create unique index trace_task_id_uindex on trace (task_id);
create index trace_kind_index on trace (kind);
create index trace_start_time_index on trace (start_time);
create index trace_what_index on trace (what);
create index trace_location_index on trace (location);
create index trace_parent_id_index on trace (parent_id);
"""


def run_baseline(rows, path):
    started = time.perf_counter()
    db = sqlite3.connect(path, isolation_level=None)
    db.executescript(AKITA_V3_SCHEMA)
    for i in range(0, len(rows), 100_000):
        db.execute("BEGIN")
        db.executemany("INSERT INTO trace VALUES (?, ?, ?, ?, ?, ?, ?)", rows[i:i + 100_000])
        db.execute("COMMIT")
    db.close()
    return time.perf_counter() - started


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", type=int, default=2_000_000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()

    t0 = time.perf_counter()
    rec, names, end = record(args.tasks, args.seed)
    n = len(rec.rows)
    rows = akita_rows(rec, names)
    print(f"recorded {n:,} tasks, {len(names['locations'])} locations, {len(names['kinds'])} kinds "
          f"({time.perf_counter() - t0:.1f} s, not timed)")
    with tempfile.TemporaryDirectory() as tmp:
        results = {}
        for label, cls in (("ours (Cython tracer)", Tracer), ("ours (Python tracer)", PyTracer)):
            path = Path(tmp) / f"{label.split('(')[1][:6]}.sqlite"
            written, total = run_ours(rec, names, end, path, cls)
            results[label] = (written, total, path.stat().st_size)
            print(f"{label:24} {n / written:12,.0f} tasks/s  {path.stat().st_size / n:7.1f} B/task  "
                  f"(rows + indexes {written:.1f} s; {n / total:,.0f} tasks/s including the "
                  f"metric pyramid, {total:.1f} s)")
        base_path = Path(tmp) / "akita.sqlite3"
        base = run_baseline(rows, base_path)
        base_bytes = base_path.stat().st_size
        print(f"{'baseline (akita v3)':24} {n / base:12,.0f} tasks/s  {base_bytes / n:7.1f} B/task  "
              f"({base:.1f} s)")
        written, total, size = results["ours (Cython tracer)"]
        print(f"write throughput ratio ours/baseline: {base / written:.2f}x (goal >= 5x); "
              f"including the pyramid: {base / total:.2f}x")
        print(f"bytes-per-task ratio ours/baseline: {size / base_bytes:.3f} (goal <= 0.333; ours "
              f"counts its indexes and pyramid)")


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    main()
