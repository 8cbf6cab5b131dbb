"""Importing other tools' traces: Daisen CSV and Chrome JSON versus an akita-v3 writer.

The same synthetic task stream (R9-Nano-shaped, as in ``trace_write.py``) is written,
untimed, as a Daisen CSV (akita's ``", "`` separators, xid task IDs, times in decimal
seconds) and as Chrome Trace Event JSON (one ``X`` event per task, ``pid``/``tid`` per
component, ``ts``/``dur`` in decimal µs, nesting on the track). Then, in the same run:

* ours: ``python -m simulator import`` of each file in a fresh process (so its peak
  resident memory is its own), everything included: parsing, staging, parent
  resolution, the task table, indexes and the metric pyramid;
* baseline: akita v3's ``SQLiteTraceWriter`` layout written with the same tasks (one
  ``trace`` table of text IDs and float seconds, 7 indexes, 100,000-row transactions):
  what a tool that merely stores these rows pays.

Prints tasks/s and the ratio to the baseline (goals: >= 1M tasks/s for the CSV, >= 500k
tasks/s for the JSON), and the peak memory of the CSV import at a quarter of the tasks
and at all of them (goal: it does not grow with the file).

    python benchmarks/import.py [--tasks 1000000]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from trace_write import akita_rows, record, run_baseline  # noqa: E402

from simulator.tracing.exporters import decimal_time  # noqa: E402

# The child's own peak is VmHWM: ru_maxrss would carry the parent's peak across exec.
CHILD = """
import sys, time
from simulator.tracing.importers import import_trace
started = time.perf_counter()
report = import_trace(sys.argv[1], sys.argv[2], show_progress=False)
seconds = time.perf_counter() - started
peak = next(line.split()[1] for line in open("/proc/self/status") if line.startswith("VmHWM"))
print(report.tasks, seconds, peak)
"""


def write_csv(rows, tasks, path):
    """akita's CSVTraceWriter layout: ``", "`` between unquoted fields, decimal seconds."""
    with open(path, "w", encoding="utf-8") as out:
        out.write("ID, ParentID, Kind, What, Where, Start, End\n")
        for (task_id, parent, kind, what, where, _, _), task in zip(rows, tasks):
            out.write(f"{task_id}, {parent}, {kind}, {what}, {where},"
                      f" {decimal_time(task[4], 12)}, {decimal_time(task[5], 12)}\n")


def write_chrome(rec, names, path):
    """One ``X`` per task on its component's track, as profilers write them."""
    locs, kinds = names["locations"], names["kinds"]
    with open(path, "w", encoding="utf-8") as out:
        out.write('{"displayTimeUnit": "ns", "traceEvents": [\n')
        for loc, name in sorted(locs.items()):
            out.write(json.dumps({"name": "process_name", "ph": "M", "pid": loc, "tid": 0,
                                  "args": {"name": name}}) + ",\n")
        for i, (key, _parent, kind, loc, start, end, _) in enumerate(rec.rows):
            category, action = kinds[kind]
            out.write(('{"name": %s, "cat": %s, "ph": "X", "ts": %s, "dur": %s, "pid": %d,'
                       ' "tid": 0, "args": {"key": %d}}') % (
                json.dumps(action), json.dumps(category), decimal_time(start, 6),
                decimal_time(end - start, 6), loc, key))
            out.write(",\n" if i + 1 < len(rec.rows) else "\n")
        out.write("]}\n")


def import_in_child(src, out):
    """(tasks, seconds, peak resident MB) of one import in a fresh process."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    result = subprocess.run([sys.executable, "-c", CHILD, str(src), str(out)], env=env,
                            capture_output=True, text=True, check=True)
    tasks, seconds, peak_kb = result.stdout.split()
    return int(tasks), float(seconds), int(peak_kb) / 1024


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()

    t0 = time.perf_counter()
    rec, names, _ = record(args.tasks, args.seed)
    rows = akita_rows(rec, names)
    n = len(rows)
    quarter = rows[: n // 4]
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        write_csv(rows, rec.rows, tmp / "full.csv")
        write_csv(quarter, rec.rows, tmp / "quarter.csv")
        write_chrome(rec, names, tmp / "full.json")
        print(f"{n:,} tasks, {len(names['locations'])} locations: CSV"
              f" {(tmp / 'full.csv').stat().st_size / 1e6:.0f} MB, JSON"
              f" {(tmp / 'full.json').stat().st_size / 1e6:.0f} MB"
              f" ({time.perf_counter() - t0:.1f} s to write, not timed)")
        load = os.getloadavg()[0]
        base = run_baseline(rows, tmp / "akita.sqlite3")
        print(f"{'baseline (akita v3 writer)':28} {n / base:12,.0f} tasks/s ({base:.1f} s)")
        results = {}
        for label, src in (("ours: Daisen CSV", "full.csv"), ("ours: Chrome JSON", "full.json")):
            tasks, seconds, peak = import_in_child(tmp / src, tmp / f"{src}.sqlite")
            results[label] = (tasks, seconds, peak)
            print(f"{label:28} {tasks / seconds:12,.0f} tasks/s ({seconds:.1f} s, peak {peak:.0f} MB)"
                  f"  ratio to baseline {base / seconds:.2f}x")
        q_tasks, _, q_peak = import_in_child(tmp / "quarter.csv", tmp / "quarter.sqlite")
        csv_rate = results["ours: Daisen CSV"][0] / results["ours: Daisen CSV"][1]
        json_rate = results["ours: Chrome JSON"][0] / results["ours: Chrome JSON"][1]
        print(f"CSV: {csv_rate / 1e6:.2f} of the 1M tasks/s goal; JSON: {json_rate / 5e5:.2f} of the"
              f" 500k tasks/s goal")
        print(f"CSV peak memory: {q_peak:.0f} MB for {q_tasks:,} tasks, "
              f"{results['ours: Daisen CSV'][2]:.0f} MB for {n:,} tasks"
              f" (ratio {results['ours: Daisen CSV'][2] / q_peak:.2f}; goal: about 1)")
        print(f"load average (1 min): {load:.2f} before the timed part, {os.getloadavg()[0]:.2f} after"
              f" ({os.cpu_count()} CPUs; the machine may be shared)")


if __name__ == "__main__":
    main()
