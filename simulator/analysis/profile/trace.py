"""Read-only access to an imported profile: every SQL statement of the profile analyses.

The file is opened read-only (``mode=ro``) and values are always bound. A profile is
small beside a simulation (a training step is some 10⁵ events), so its tasks are read
once, whole, as an int64 matrix (``TASK_COLUMNS``) through SQLite's C API; names, links
and the few details an analysis needs are read by their own queries.
"""
from __future__ import annotations

import json
import sqlite3
from decimal import Decimal
from pathlib import Path

import numpy as np

from ...tracing.writer import BulkConnection, TraceError, open_readonly, read_ints, sqlite_error

TASK_COLUMNS = ("id", "parent", "kind", "location", "start_ps", "end_ps")
COLUMN = {name: i for i, name in enumerate(TASK_COLUMNS)}
PS_PER_S = 10 ** 12


def trace_source(path: str | Path) -> str:
    """The trace's ``run.source``: 'simulator', or the importer that wrote it."""
    db = open_readonly(Path(path), "SELECT source FROM run", "a GPUscope trace")
    try:
        row = db.execute("SELECT source FROM run").fetchone()
    except sqlite3.DatabaseError as exc:
        raise sqlite_error(Path(path), exc) from None
    finally:
        db.close()
    if row is None:
        raise TraceError(f"{path}: not a GPUscope trace (its run table is empty)")
    return row[0]


class ProfileTrace:
    """An imported trace, open read-only."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.db = open_readonly(self.path, "SELECT source FROM run", "a GPUscope trace")
        try:
            self.source, origin = self.db.execute("SELECT source, time_origin FROM run").fetchone()
            # the origin's part below a whole µs, in ps: HTA rounds absolute µs times
            self.origin_sub_us_ps = int(Decimal(origin or 0) * PS_PER_S) % 10 ** 6
            self.kinds = {k: (c, a) for k, c, a in self.db.execute(
                "SELECT id, category, action FROM kind")}
            self.locations = dict(self.db.execute("SELECT id, name FROM location"))
            self.bulk = BulkConnection(self.path, readonly=True)
        except (sqlite3.DatabaseError, UnicodeDecodeError) as exc:
            self.db.close()
            raise sqlite_error(self.path, exc) from None

    def close(self) -> None:
        self.db.close()
        if hasattr(self, "bulk"):
            self.bulk.close()

    def __enter__(self) -> ProfileTrace:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def tasks(self) -> np.ndarray:
        """Every task as rows of TASK_COLUMNS (a missing parent reads -1), in id order."""
        return read_ints(self.bulk, "SELECT id, coalesce(parent, -1), kind, location, start_ps,"
                         " end_ps FROM task ORDER BY id", ())

    def links(self) -> np.ndarray:
        """Every task link as (src, dst) rows, whatever its kind (launch flows are told
        apart by what they join, not by the flow's name, which each profiler spells its
        own way: ac2g, async_cpu_to_gpu, async)."""
        return read_ints(self.bulk, "SELECT src, dst FROM task_link ORDER BY dst, src", ())

    def correlations(self, kinds: list[int]) -> np.ndarray:
        """(task id, correlation id) of the tasks of ``kinds`` whose details carry the
        profiler's correlation id (Kineto and nsys both keep it), in id order."""
        if not kinds:
            return np.zeros((0, 2), dtype=np.int64)
        return read_ints(self.bulk, "SELECT id, json_extract(details, '$.correlation') FROM task"
                         f" WHERE kind IN ({','.join('?' * len(kinds))})"
                         " AND json_type(details, '$.correlation') = 'integer' ORDER BY id", kinds)

    def kinds_outside(self, kinds: list[int], locations: list[int]) -> set[int]:
        """Which of ``kinds`` have a task at a location not in ``locations``."""
        if not kinds:
            return set()
        return {k for (k,) in self.db.execute(
            f"SELECT DISTINCT kind FROM task WHERE kind IN ({','.join('?' * len(kinds))})"
            f" AND location NOT IN ({','.join('?' * len(locations))})", [*kinds, *locations])}

    def details(self, tasks: np.ndarray) -> dict[int, dict]:
        """The details JSON of the given tasks, by task id (absent where there are none)."""
        out = {}
        ids = [int(t) for t in tasks]
        for i in range(0, len(ids), 900):  # SQLite's bound-parameter limit
            part = ids[i:i + 900]
            out.update((task, json.loads(text)) for task, text in self.db.execute(
                f"SELECT id, details FROM task WHERE id IN ({','.join('?' * len(part))})"
                " AND details IS NOT NULL", part))
        return out

    def gpu_counter_series(self) -> list[tuple[int, str, str]]:
        """(series id, location, name) of the counter series recorded at a GPU
        (``GPU[d]``: nsys GPU_METRICS, a Chrome counter of the GPU's process)."""
        return self.db.execute(
            "SELECT s.id, l.name, s.name FROM counter_series s JOIN location l"
            " ON l.id = s.location WHERE l.name GLOB 'GPU[[]*]' ORDER BY s.id").fetchall()

    def counter_samples(self, series: int) -> tuple[np.ndarray, np.ndarray]:
        """(times in ps, values) of one series, in time order; each value holds from its
        time until the next sample's."""
        rows = self.db.execute("SELECT time_ps, value FROM counter WHERE series = ?"
                               " ORDER BY time_ps", (series,)).fetchall()
        return (np.array([t for t, _ in rows], dtype=np.int64),
                np.array([v for _, v in rows], dtype=np.float64))
