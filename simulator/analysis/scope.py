"""What one analysis looks at: one kernel launch, optionally cut to a time window.

A ``Scope`` loads the launch's tasks from the trace lazily, once each, and only those
of its window, so memory follows the launch, never the whole trace. It also knows the
model's peaks from ``run.config`` and which trace levels the run recorded: an analysis
whose tasks were not recorded raises ``Unavailable`` naming the ``--trace-level`` that
would record them, instead of inventing numbers (why-layer.md §9, rule R4).

The simulator runs one launch at a time, and task ids are dense in creation order, so
a launch's tasks are the ids between its own and the next launch's (``Trace.kernels``
checks launches do not overlap); they are read once per scope.
"""
from __future__ import annotations

import math
from fractions import Fraction
from functools import cached_property

import numpy as np

from .components import UNIT_OF_INST
from .order import stable_order
from .trace import Kernel, Trace

COLUMN = {"id": 0, "parent": 1, "kind": 2, "location": 3, "start": 4, "end": 5}

LEVEL_KINDS = {
    "wg": (("req_out", "MapWGReq"), ("work-group", "work-group")),
    "wf": (("wavefront", "wavefront"),),
    "inst": tuple(("inst", unit) for unit in UNIT_OF_INST),
    "mem": (("req_out", "ReadReq"), ("req_out", "WriteReq")),
}
"""Kinds whose presence shows a ``--trace-level`` was recorded (any one suffices)."""


def member(values: np.ndarray, keys) -> np.ndarray:
    """Which of ``values`` (small non-negative ids: kinds, locations) are among ``keys``:
    a lookup table, several times faster than ``np.isin`` over a launch's rows."""
    keys = np.asarray(list(keys), dtype=np.int64)
    values = np.asarray(values, dtype=np.int64)
    if not len(keys) or not len(values):
        return np.zeros(values.shape, dtype=bool)
    table = np.zeros(max(int(keys.max()), int(values.max())) + 1, dtype=bool)
    table[keys] = True
    return table[values]


LINE_BYTES = 64
"""The model's cache line: every memory request moves one."""


def memory_peers(cfg: dict) -> dict[str, int]:
    """Instances of each memory level below the L1Vs a run's configuration builds: L2
    banks (per XCD, times the XCDs), memory-side cache slices (one per memory channel,
    none if ``mall.slice_bytes`` is 0) and memory channels (0 in ``dram.channels``: one
    per L2 bank of an XCD). Keys older traces lack take the one-L2, no-MALL values."""
    per_xcd = cfg["l2"]["banks"]
    channels = cfg["dram"].get("channels", 0) or per_xcd
    mall = cfg.get("mall", {}).get("slice_bytes", 0)
    return {"L2": per_xcd * cfg["gpu"].get("xcds", 1), "MALL": channels if mall else 0,
            "DRAM": channels}


def line_rate(cfg: dict, level: str) -> Fraction:
    """64 B lines one instance of memory ``level`` (L2, MALL or DRAM) moves per cycle."""
    if level == "DRAM":
        return Fraction(repr(float(cfg["dram"]["bytes_per_cycle"]))) / LINE_BYTES
    return Fraction(cfg[level.lower()]["requests_per_cycle"])


class Unavailable(Exception):
    """The trace lacks what an analysis needs; the message says what would provide it."""


class Scope:
    """One kernel launch of a trace, within [lo, hi) (the launch cut to a window)."""

    def __init__(self, trace: Trace, kernel: Kernel, window: tuple[int, int] | None = None) -> None:
        self.trace = trace
        self.kernel = kernel
        lo, hi = window or (kernel.start_ps, kernel.end_ps)
        self.lo = max(kernel.start_ps, lo)
        self.hi = max(self.lo, min(kernel.end_ps, hi))
        cfg = trace.config
        self.ps_per_cycle = Fraction(1_000_000, cfg["clock_mhz"])   # exact: 2.1 GHz too
        self.n_cu = cfg["gpu"]["shader_arrays"] * cfg["gpu"]["cus_per_shader_array"]
        self.simds = cfg["cu"]["simds"]
        self.peers = memory_peers(cfg)
        self.wf_slots = self.simds * cfg["cu"]["wf_slots_per_simd"]

    def cycles_ps(self, cycles: int) -> int:
        """``cycles`` cycles in ps, rounded down (the tracer's rounding of a cycle's start)."""
        return int(cycles * self.ps_per_cycle)

    def next_cycle_ps(self, ps: int) -> int:
        """The start of the cycle after the one that starts at ``ps`` (a traced time)."""
        cycle = math.ceil(ps / self.ps_per_cycle)
        return self.cycles_ps(cycle + 1)

    @property
    def width(self) -> int:
        """|window|, in ps."""
        return self.hi - self.lo

    def has(self, level: str) -> bool:
        return any(self.trace.kind(*pair) is not None for pair in LEVEL_KINDS[level])

    def require(self, *levels: str) -> None:
        """Raise ``Unavailable`` unless every level was recorded."""
        missing = [level for level in levels if not self.has(level)]
        if missing:
            raise Unavailable(f"needs --trace-level {max(missing, key=list(LEVEL_KINDS).index)}"
                              f" (this trace has no {', '.join(missing)} tasks)")

    def _kinds(self, level: str) -> list[int]:
        return [k for k in (self.trace.kind(*pair) for pair in LEVEL_KINDS[level]) if k is not None]

    @cached_property
    def tasks(self) -> np.ndarray:
        """Every task of the launch (not cut to the window), rows of TASK_COLUMNS by id,
        stored column by column: the analyses work on whole columns, several times
        faster when each is contiguous."""
        return np.asfortranarray(self.trace.launch_tasks(self.kernel))

    def positions(self, task_ids: np.ndarray) -> np.ndarray:
        """Row of each task id in ``tasks``, -1 for ids not of the launch. Ids are dense
        in creation order, so a row is usually the id less the first id."""
        ids = self.tasks[:, COLUMN["id"]]
        task_ids = np.asarray(task_ids, dtype=np.int64)
        if not len(ids):
            return np.full(task_ids.shape, -1, dtype=np.int64)
        if ids[-1] - ids[0] == len(ids) - 1:
            rows = task_ids - ids[0]
        else:
            rows = np.searchsorted(ids, task_ids)
        inside = (rows >= 0) & (rows < len(ids))
        inside[inside] = ids[rows[inside]] == task_ids[inside]
        return np.where(inside, rows, -1)

    @cached_property
    def parent_rows(self) -> np.ndarray:
        """Row in ``tasks`` of each task's parent, -1 for a parent outside the launch."""
        return self.positions(self.tasks[:, COLUMN["parent"]])

    def kinds_of(self, *pairs: tuple[str, str]) -> np.ndarray:
        """Which rows of ``tasks`` are of one of the (category, action) kinds."""
        keys = [k for k in (self.trace.kind(*pair) for pair in pairs) if k is not None]
        return member(self.tasks[:, COLUMN["kind"]], keys)

    @cached_property
    def _by_kind(self) -> tuple[np.ndarray, np.ndarray]:
        """The rows of ``tasks`` grouped by kind, in id order within one, and where each
        kind id's group begins (a radix sort: kind ids are small)."""
        kinds = self.tasks[:, COLUMN["kind"]]
        counts = np.bincount(kinds, minlength=max(self.trace.kinds.values(), default=-1) + 1)
        return stable_order(kinds), np.r_[0, np.cumsum(counts)]

    def rows_of(self, *pairs: tuple[str, str]) -> np.ndarray:
        """Positions in ``tasks`` of the rows of the (category, action) kinds, grouped
        by kind (ascending kind id), in id order within one."""
        order, bounds = self._by_kind
        keys = sorted({k for k in (self.trace.kind(*pair) for pair in pairs) if k is not None})
        return np.concatenate([order[bounds[k]:bounds[k + 1]] for k in keys] or [order[:0]])

    @cached_property
    def _by_location(self) -> tuple[np.ndarray, np.ndarray]:
        """The rows of ``tasks`` grouped by location, in id order within one, and where
        each location id's group begins."""
        locations = self.tasks[:, COLUMN["location"]]
        counts = np.bincount(locations, minlength=max(self.trace.components.name, default=-1) + 1)
        return stable_order(locations), np.r_[0, np.cumsum(counts)]

    def rows_at(self, location: int) -> np.ndarray:
        """Positions in ``tasks`` of the rows at the location id, in id order."""
        order, bounds = self._by_location
        return order[bounds[location]:bounds[location + 1]] if location + 1 < len(bounds) else order[:0]

    @cached_property
    def _execution(self) -> np.ndarray:
        """The launch's wavefronts, instructions and the CUs' memory requests overlapping
        the window, plus their CU in a seventh column: taken from ``tasks`` once, shared
        by every analysis; grouped by kind (in id order within one), so each kind is a
        slice (``_of``)."""
        tasks = self.tasks
        rows = self.rows_of(("wavefront", "wavefront"), *LEVEL_KINDS["inst"], *LEVEL_KINDS["mem"])
        wanted = ~member(tasks[rows, COLUMN["kind"]], self._kinds("mem"))
        wanted |= member(tasks[rows, COLUMN["location"]], self.trace.components.unit(""))
        wanted &= (tasks[rows, COLUMN["start"]] < self.hi) & (tasks[rows, COLUMN["end"]] > self.lo)
        return self._with_cu(rows[wanted])

    def _with_cu(self, rows: np.ndarray) -> np.ndarray:
        """The rows of ``tasks`` at the positions, plus their CU in a seventh column."""
        out = np.empty((len(rows), len(COLUMN) + 1), dtype=np.int64, order="F")
        for column in range(len(COLUMN)):
            np.take(self.tasks[:, column], rows, out=out[:, column])
        out[:, -1] = self.trace.components.cu_index(out[:, COLUMN["location"]])
        return out

    def _of(self, category: str, action: str) -> np.ndarray:
        """Rows of ``_execution`` of one kind, with the CU in a seventh column."""
        rows = self._execution
        kind = self.trace.kind(category, action)
        if kind is None:
            return rows[:0]
        kinds = rows[:, COLUMN["kind"]]
        return rows[np.searchsorted(kinds, kind, "left"):np.searchsorted(kinds, kind, "right")]

    @cached_property
    def _dispatch_rows(self) -> np.ndarray:
        """Positions of the launch's MapWGReq requests: the kernel task's children."""
        rows = self.rows_of(("req_out", "MapWGReq"))
        return rows[self.tasks[rows, COLUMN["parent"]] == self.kernel.task]

    @cached_property
    def dispatches(self) -> np.ndarray:
        """Start times of the launch's MapWGReq requests (its dispatches), sorted; all of
        them, not only the window's, since idle classes depend on what is still to come."""
        self.require("wg")
        rows = self._dispatch_rows
        expected = self.kernel.work_groups
        if expected is not None and len(rows) != expected:
            raise Unavailable(f"the trace holds {len(rows)} of the launch's {expected} dispatches"
                              " (recorded with --window?)")
        return np.sort(self.tasks[rows, COLUMN["start"]])

    @cached_property
    def work_groups(self) -> np.ndarray:
        """The launch's work-group tasks (all of them), plus a seventh column: the CU. A
        work-group is the child of a child (the CU's ``req_in``) of a dispatch; they
        come in the order of their dispatches."""
        self.dispatches  # noqa: B018 - checks the launch was recorded whole
        groups = self.rows_of(("work-group", "work-group"))
        inner = self.parent_rows[groups]
        groups, inner = groups[inner >= 0], inner[inner >= 0]
        outer = self.parent_rows[inner]
        dispatch = np.zeros(len(self.tasks) + 1, dtype=bool)  # the last entry: no task
        dispatch[self._dispatch_rows] = True
        mine = dispatch[outer]
        groups, inner, outer = groups[mine], inner[mine], outer[mine]
        return self._with_cu(groups[np.lexsort((groups, inner, outer))])

    @cached_property
    def wavefronts(self) -> np.ndarray:
        """Wavefront tasks overlapping the window, plus their CU."""
        self.require("wf")
        return self._of("wavefront", "wavefront")

    @cached_property
    def instructions(self) -> dict[str, np.ndarray]:
        """Instruction tasks overlapping the window by kind (VALU, SALU, ...), plus their CU."""
        self.require("inst")
        return {inst: self._of("inst", inst) for inst in UNIT_OF_INST}

    @cached_property
    def cu_requests(self) -> np.ndarray:
        """ReadReq/WriteReq ``req_out`` tasks sent by the CUs (to their L1V), plus the CU."""
        self.require("mem")
        return np.r_[self._of("req_out", "ReadReq"), self._of("req_out", "WriteReq")]

    @cached_property
    def _served(self) -> dict[int, int]:
        """ReadReq/WriteReq ``req_in`` tasks starting in the window, per location: counted
        in the launch's rows, already read."""
        rows = self.tasks
        start = rows[:, COLUMN["start"]]
        served = self.kinds_of(("req_in", "ReadReq"), ("req_in", "WriteReq"))
        served &= (start >= self.lo) & (start < self.hi)
        locations, counts = np.unique(rows[served, COLUMN["location"]], return_counts=True)
        return dict(zip(locations.tolist(), counts.tolist()))

    def requests_served(self, level: str) -> dict[int, int]:
        """ReadReq/WriteReq ``req_in`` tasks that start in the window at each instance
        (location id) of a memory level: L1V, L2, MALL or DRAM."""
        self.require("mem")
        instances = self.trace.components.memory[level]
        return {key: count for key, count in self._served.items() if key in instances}
