"""Read-only access to a simulator trace: every SQL statement of the analysis room.

The analyses read the trace contract (``sqlite_schema.sql``) and nothing else: the
file is opened read-only (``mode=ro``), values are always bound, and each query reads
one kernel launch (or one window of it) through the task indexes, so memory follows
the launch, not the trace. Times are integer ps throughout.
"""
from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..tracing.writer import BulkConnection, TraceError, open_readonly, read_ints, sqlite_error
from .components import Components

TASK_COLUMNS = ("id", "parent", "kind", "location", "start_ps", "end_ps")


@dataclass(frozen=True)
class Kernel:
    """One kernel launch task at the Command Processor."""

    task: int            # task.id of the kernel task
    index: int           # position in launch order, from 0 (the CLI's --kernel)
    launch: int | None   # kernel_launch.id of its records, when the details name it
    name: str
    start_ps: int
    end_ps: int
    work_groups: int | None  # from the task's details
    last_task: int       # the largest task.id that can belong to it (the next launch's id - 1)

    @property
    def duration_ps(self) -> int:
        return self.end_ps - self.start_ps


MODEL_KEYS = ("clock_mhz", "gpu.shader_arrays", "gpu.cus_per_shader_array", "cu.simds",
              "cu.wf_slots_per_simd", "cu.lanes_per_simd", "cu.vmem_lines_per_cycle",
              "cu.lds_latency", "l1v.buffer", "l2.banks", "l2.requests_per_cycle", "l2.buffer",
              "dram.bytes_per_cycle", "dram.buffer", "cp.wg_dispatch_per_cycle", "cp.map_buffer")
"""The timing model's parameters the analyses read from ``run.config`` (its peaks and
capacities)."""


def model_config(config: object, path: Path) -> dict:
    """``config`` when it holds every ``MODEL_KEYS`` parameter as a positive number;
    otherwise a ``TraceError`` naming the first one missing (a trace written through
    the tracing API by another model has no such configuration)."""
    for key in MODEL_KEYS:
        value = config
        for part in key.split("."):
            value = value.get(part) if isinstance(value, dict) else None
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
            raise TraceError(f"{path}: its configuration has no {key}: analyze explains traces"
                             " of GPUscope's timing model, whose peaks it reads there")
    return config


class Trace:
    """A simulator trace, open read-only."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.db = open_readonly(self.path, "SELECT source, config FROM run", "a GPUscope trace")
        try:
            row = self.db.execute("SELECT source, config FROM run").fetchone()
            if row is None:
                raise TraceError(f"{self.path}: not a GPUscope trace (its run table is empty)")
            source, config = row
            if source != "simulator":
                raise TraceError(f"{self.path}: an imported trace ({source}); analyze explains "
                                 "simulator traces, whose components and peaks it knows")
            self.config = model_config(json.loads(config), self.path)
            self.kinds = {(c, a): k for k, c, a in self.db.execute(
                "SELECT id, category, action FROM kind")}
            self.components = Components(self.db.execute("SELECT id, name FROM location"))
            # task rows are read through SQLite's C API, in C loops: through Python's
            # sqlite3 a row of six integers costs about 1.5 µs, most of an analysis's time
            self.bulk = BulkConnection(self.path, readonly=True)
        except (sqlite3.DatabaseError, UnicodeDecodeError) as exc:
            self.db.close()
            raise sqlite_error(self.path, exc) from None
        except (TraceError, ValueError):
            self.db.close()
            raise

    def close(self) -> None:
        self.db.close()
        if hasattr(self, "bulk"):
            self.bulk.close()

    def __enter__(self) -> Trace:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def kind(self, category: str, action: str) -> int | None:
        """The kind id of (category, action), or None when the trace recorded none."""
        return self.kinds.get((category, action))

    def kernels(self) -> list[Kernel]:
        """Every kernel launch task, in start order."""
        # kernel tasks are at the Command Processor: read through its index, not a scan
        rows = self.db.execute(
            "SELECT t.id, json_extract(t.details, '$.launch'), k.action, t.start_ps, t.end_ps,"
            " json_extract(t.details, '$.work_groups')"
            " FROM location l JOIN task t ON t.location = l.id JOIN kind k ON k.id = t.kind"
            " WHERE l.name = 'GPU.CommandProcessor' AND k.category = 'kernel'"
            " ORDER BY t.start_ps, t.id").fetchall()
        # task ids are dense in creation order, and one launch runs at a time: a launch's
        # tasks are those created after its own task and before the next launch's
        last = self.db.execute("SELECT coalesce(max(id), 0) FROM task").fetchone()[0]
        bounds = [row[0] - 1 for row in rows[1:]] + [last]
        kernels = [Kernel(task, i, launch, name, start, end, groups, bound)
                   for i, ((task, launch, name, start, end, groups), bound)
                   in enumerate(zip(rows, bounds))]
        for before, after in zip(kernels, kernels[1:]):
            # a launch's tasks are found by time at each unit (see scope.py)
            if after.start_ps < before.end_ps:
                raise TraceError(f"{self.path}: launches {before.index} and {after.index} overlap"
                                 " in time; analyze reads one launch at a time")
        return kernels

    def launch_record(self, launch: int) -> dict | None:
        """The launch's kernel_launch row as a dict, or None."""
        cursor = self.db.execute("SELECT * FROM kernel_launch WHERE id = ?", (launch,))
        row = cursor.fetchone()
        return None if row is None else dict(zip((c[0] for c in cursor.description), row))

    def divergent_wavefronts(self, launch: int) -> tuple[int, int]:
        """(wavefronts, wavefronts whose lanes took more than one branch path) of a
        launch, from Klein's proxy warps; (0, 0) when none were recorded."""
        total, divergent = self.db.execute(
            "SELECT coalesce(sum(wavefronts), 0), coalesce(sum(wavefronts * divergent), 0)"
            " FROM kernel_proxy_warp WHERE launch = ?", (launch,)).fetchone()
        return int(total), int(divergent)

    def branch_nodes(self, launch: int) -> int:
        """How many conditionals and loops the launch's kernel has (Klein's semantic model)."""
        return self.db.execute(
            "SELECT count(*) FROM kernel_branch_node n JOIN kernel_launch l"
            " ON l.source = n.source AND l.kernel = n.kernel WHERE l.id = ?", (launch,)).fetchone()[0]

    def divergent_line(self, launch: int) -> int | None:
        """Source line of the kernel's first conditional, where the Klein branching view
        opens; None without branch records."""
        row = self.db.execute(
            "SELECT min(n.line) FROM kernel_branch_node n JOIN kernel_launch l"
            " ON l.source = n.source AND l.kernel = n.kernel WHERE l.id = ? AND n.type = 'if'",
            (launch,)).fetchone()
        return row[0]

    def _rows(self, sql: str, params: tuple) -> np.ndarray:
        """The query's rows of TASK_COLUMNS (a missing parent reads -1) as an int64 matrix."""
        return read_ints(self.bulk, sql, params)

    def launch_tasks(self, kernel: Kernel) -> np.ndarray:
        """Every task of the launch (the ids after its own, up to ``kernel.last_task``),
        as rows of TASK_COLUMNS in id order: one sequential read of that range."""
        return self._rows(
            "SELECT id, coalesce(parent, -1), kind, location, start_ps, end_ps FROM task"
            " WHERE id > ? AND id <= ?", (kernel.task, kernel.last_task))

    def tasks_at(self, location: str, window: tuple[int, int], kind: tuple[str, str] | None
                 ) -> np.ndarray:
        """Tasks at the named location (of ``kind``, or all) overlapping [t0, t1), as rows
        of TASK_COLUMNS: a range of the (location, start) index, widened back by the
        location's longest task."""
        row = self.db.execute("SELECT id, coalesce(max_duration_ps, 0) FROM location WHERE name = ?",
                              (location,)).fetchone()
        if row is None or (kind is not None and self.kind(*kind) is None):
            return np.zeros((0, len(TASK_COLUMNS)), dtype=np.int64)
        loc, longest = row
        lo, hi = window
        where, params = "", ()
        if kind is not None:
            where, params = " AND kind = ?", (self.kind(*kind),)
        return self._rows(
            "SELECT id, coalesce(parent, -1), kind, location, start_ps, end_ps FROM task"
            " WHERE location = ? AND start_ps >= ? AND start_ps < ? AND end_ps > ?" + where,
            (loc, lo - longest, hi, lo, *params))

    def tags(self, kernel: Kernel) -> tuple[np.ndarray, dict[str, int]]:
        """The launch's task steps (a cache's read-hit, read-miss, ...) as (task, tag)
        rows in task then time order, and the tag ids by name."""
        names = {name: key for key, name in self.db.execute("SELECT id, name FROM tag_name")}
        rows = read_ints(self.bulk, "SELECT task, tag FROM task_tag WHERE task > ? AND task <= ?"
                         " ORDER BY task, time_ps", (kernel.task, kernel.last_task))
        return rows, names
