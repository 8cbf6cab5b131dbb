"""Finalize cost: building indexes and the metric pyramid, as a ratio to the write time.

Writes a synthetic trace through the Cython tracer (timing the write), then times
``finalize`` split into its index build and its pyramid build, and prints both as
ratios of the write time. Also reports the pyramid's share of the file.

    python benchmarks/finalize.py [--tasks 2000000]
"""
import argparse
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from simulator.tracing import Tracer, TraceWriter  # noqa: E402
from simulator.tracing.synthetic import emit  # noqa: E402
from simulator.tracing.writer import schema_parts  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", type=int, default=2_000_000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "f.sqlite"
        started = time.perf_counter()
        writer = TraceWriter(path, command="benchmark")
        tracer = Tracer(writer, ps_per_tick=1000)
        clock = [0]
        emit(tracer, args.tasks, args.seed, 64, clock)
        tracer.close(clock[0])
        write = time.perf_counter() - started
        n = writer.tasks_written

        started = time.perf_counter()
        _, indexes = schema_parts()
        for statement in indexes.split(";"):
            if statement.strip():
                writer.db.execute(statement)
        index = time.perf_counter() - started

        started = time.perf_counter()
        writer.finalize(completed=True, show_progress=False)  # indexes exist: pyramid + stats
        pyramid = time.perf_counter() - started
        writer.close()

        db = sqlite3.connect(path)
        sizes = dict(db.execute("SELECT name, sum(pgsize) FROM dbstat GROUP BY name").fetchall())
        total = sum(sizes.values())
        pyramid_bytes = sum(v for k, v in sizes.items() if k.startswith("metric_"))
        levels = db.execute("SELECT count(*) FROM metric_bin").fetchone()[0]
        print(f"write (generator + tracer + rows) {n:,} tasks: {write:.2f} s ({n / write:,.0f} tasks/s)")
        print(f"index build:   {index:.2f} s = {index / write:.2f}x the write time")
        print(f"pyramid build: {pyramid:.2f} s = {pyramid / write:.2f}x the write time "
              f"({n / pyramid:,.0f} tasks/s, {levels:,} metric_bin rows)")
        print(f"pyramid share of the file: {100 * pyramid_bytes / total:.1f} % "
              f"({pyramid_bytes / n:.1f} B/task)")


if __name__ == "__main__":
    main()
