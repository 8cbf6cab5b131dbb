"""I4 in TraceLens' taxonomy: why a device ran nothing in each gap (TraceLens
``IdleTimeAnalyser``, ``docs/idle_time_classification.md``; why-layer.md §2.2, §9.2 I4 (a)).

The gaps are those of the union of a device's operations over every stream (``gaps``);
one shorter than the noise floor (``micro_thresh_us``, 5 µs) is noise and not
classified. Each other gap is classified twice, by the operation that ends it and the
runtime call that launched that operation:

- ``drain_type``: **sync_drain** when a synchronizing call (``SYNC_CALL``: a device,
  stream or event synchronize, or a copy between host and device) ended inside the gap,
  before that launch: the CPU had drained the GPU and waited for it; else **starved**;
- ``cpu_during_gap``, the first that holds:
  - **LAUNCH_ANOMALY**: the operation was prequeued (its call ended a typical launch
    latency before the gap began) yet the gap lasts more than the noise floor; or it was
    not, and it started more than ``launch_to_exec_us`` (10 µs) after its call ended;
  - **LAUNCH_OVERHEAD_ONLY**: the CPU issued the launch within max(2 µs, half the
    typical launch latency) of the gap's start (only the launch itself held the GPU);
  - **RUNTIME_DOMINATED**: one runtime call covers at least ``runtime_share`` (25 %) of
    the gap; sub-typed MEMORY_ALLOC, LAUNCH_STALL, SYNC_CALL or OTHER_RUNTIME by name;
  - **CPU_DOMINATED**: the self time of CPU operators and Python functions on the
    launching thread, clipped to the gap, covers at least ``cpu_share`` (20 %) of it
    (``dominant_op``: the one with the most);
  - **CPU_UNTRACED**: the rest (the CPU did something the profile does not show).

Each class's ps sum to the device's classified gap time exactly.
"""
from __future__ import annotations

import re
from collections import defaultdict

import numpy as np

from ..intervals import Overlaps, complement
from .ops import COPY, Profile
from .trace import COLUMN

PS_PER_US = 10 ** 6
TYPICAL_LAUNCH_PS = 7_500_000
"""TraceLens' typical launch latency ("7–8 µs"), in ps."""
SYNC_CALL = re.compile(r"^(cuda|hip)(Device|Stream|Event)Synchronize")
HOST_COPY = re.compile(r"HtoD|DtoH|H2D|D2H")
SELF_TIMED = frozenset({"cpu_op", "operator", "python_function"})
RUNTIME_KINDS = ((re.compile(r"Malloc|Free|HostAlloc|HostRegister"), "MEMORY_ALLOC"),
                 (re.compile(r"Launch"), "LAUNCH_STALL"),
                 (re.compile(r"Synchronize|EventQuery|Memcpy(?!.*Async)"), "SYNC_CALL"))
CPU_CLASSES = ("LAUNCH_ANOMALY", "LAUNCH_OVERHEAD_ONLY", "RUNTIME_DOMINATED", "CPU_DOMINATED",
               "CPU_UNTRACED")


def _sync_ends(profile: Profile) -> np.ndarray:
    """End times (sorted) of the calls that drain the GPU: synchronizations and copies
    between host and device."""
    tasks, ops = profile.tasks, profile.ops
    host_copy = {c for c, kind, cat in zip(ops.launch.tolist(), ops.kind.tolist(),
                                           ops.category.tolist())
                 if c >= 0 and cat == COPY and HOST_COPY.search(profile.name(kind))}
    syncing = [k for k, name in profile.names.items() if SYNC_CALL.match(name)]
    calls = profile.calls[np.isin(tasks[profile.calls, COLUMN["kind"]], syncing)
                          | np.isin(profile.calls, list(host_copy))]
    return np.sort(tasks[calls, COLUMN["end_ps"]])


class _Threads:
    """Per CPU thread, found once for all its gaps: its tasks and its calls, each
    indexed by time (``Overlaps``), and which kinds count self time."""

    def __init__(self, profile: Profile) -> None:
        self.tasks = tasks = profile.tasks
        timed = [k for k, c in profile.categories.items() if c.lower() in SELF_TIMED]
        self.timed = np.isin(tasks[:, COLUMN["kind"]], timed)
        self.calls = profile.calls
        self._on: dict[int, tuple] = {}

    def on(self, thread: int) -> tuple[np.ndarray, Overlaps, np.ndarray, Overlaps]:
        """(task rows, their index, call rows, their index) on ``thread``, rows ascending."""
        if thread not in self._on:
            tasks, calls = self.tasks, self.calls
            rows = np.flatnonzero(tasks[:, COLUMN["location"]] == thread)
            calls = calls[tasks[calls, COLUMN["location"]] == thread]
            self._on[thread] = (
                rows, Overlaps(tasks[rows, COLUMN["start_ps"]], tasks[rows, COLUMN["end_ps"]]),
                calls, Overlaps(tasks[calls, COLUMN["start_ps"]], tasks[calls, COLUMN["end_ps"]]))
        return self._on[thread]

    def self_time(self, thread: int, t0: int, t1: int) -> dict[int, int]:
        """Per CPU operator or Python function on ``thread`` overlapping [t0, t1): its
        time in the window less its children's (on one thread, self times never
        overlap)."""
        tasks = self.tasks
        rows, overlaps, _, _ = self.on(thread)
        on = rows[overlaps(t0, t1)]
        inside = (np.minimum(tasks[on, COLUMN["end_ps"]], t1)
                  - np.maximum(tasks[on, COLUMN["start_ps"]], t0))
        # a child's time inside is not its parent's own (ids ascend with rows)
        ids, parents = tasks[on, COLUMN["id"]], tasks[on, COLUMN["parent"]]
        at = np.searchsorted(ids, parents).clip(max=max(len(on) - 1, 0))
        child = (parents >= 0) & (ids[at] == parents) if len(on) else np.zeros(0, bool)
        own = inside.copy()
        np.subtract.at(own, at[child], inside[child])
        mine = self.timed[on] & (own > 0)
        return dict(zip(on[mine].tolist(), own[mine].tolist()))

    def cover(self, thread: int, t0: int, t1: int) -> tuple[np.ndarray, np.ndarray]:
        """(rows, time inside [t0, t1)) of the calls on ``thread`` that overlap it, rows
        ascending."""
        tasks = self.tasks
        _, _, calls, overlaps = self.on(thread)
        calls = calls[overlaps(t0, t1)]
        return calls, (np.minimum(tasks[calls, COLUMN["end_ps"]], t1)
                       - np.maximum(tasks[calls, COLUMN["start_ps"]], t0))


def _runtime_kind(name: str) -> str:
    return next((kind for pattern, kind in RUNTIME_KINDS if pattern.search(name)), "OTHER_RUNTIME")


def classify_gap(profile: Profile, t0: int, t1: int, op: int, sync_ends: np.ndarray,
                 thresholds: dict, threads: _Threads) -> dict:
    """Both classes of the gap [t0, t1) that operation ``op`` (a row of ``profile.ops``)
    ends."""
    tasks, ops = profile.tasks, profile.ops
    call = int(ops.launch[op])
    gap = t1 - t0
    row = {"t0": t0, "t1": t1, "task": int(ops.task[op]), "loc": profile.location(ops.location[op]),
           "thread": None, "launch_to_exec_ps": None, "prequeued": None, "runtime": None,
           "dominant_op": None}
    launch_at = tasks[call, COLUMN["start_ps"]] if call >= 0 else t1
    first = np.searchsorted(sync_ends, t0, side="right")
    row["drain_type"] = ("sync_drain" if first < len(sync_ends) and sync_ends[first] <= launch_at
                         else "starved")
    if call < 0:
        row["cpu_during_gap"] = "CPU_UNTRACED"
        return row
    call_end = int(tasks[call, COLUMN["end_ps"]])
    thread = int(tasks[call, COLUMN["location"]])
    row["thread"] = profile.location(thread)
    row["launch_to_exec_ps"] = to_exec = int(ops.start[op]) - call_end
    row["prequeued"] = prequeued = call_end + TYPICAL_LAUNCH_PS < t0
    if (gap > thresholds["noise_ps"]) if prequeued else (to_exec > thresholds["to_exec_ps"]):
        cls = "LAUNCH_ANOMALY"
    elif launch_at - t0 < max(2 * PS_PER_US, TYPICAL_LAUNCH_PS // 2):
        cls = "LAUNCH_OVERHEAD_ONLY"
    else:
        cls = _busy_class(profile, threads, thread, t0, t1, thresholds, row)
    row["cpu_during_gap"] = cls
    return row


def _busy_class(profile: Profile, threads: _Threads, thread: int, t0: int, t1: int,
                thresholds: dict, row: dict) -> str:
    """The CPU class of a gap neither launch rule explains, by what ``thread`` did in it
    (looked up only for these gaps): its longest runtime call, else its operators' self
    time; the call or operator that dominates goes into ``row``."""
    tasks, gap = profile.tasks, t1 - t0
    calls, cover = threads.cover(thread, t0, t1)
    if len(cover) and cover.max() * 100 >= thresholds["runtime_pct"] * gap:
        name = profile.name(tasks[calls[int(np.argmax(cover))], COLUMN["kind"]])
        row["runtime"] = {"name": name, "kind": _runtime_kind(name), "ps": int(cover.max())}
        return "RUNTIME_DOMINATED"
    self_time = threads.self_time(thread, t0, t1)
    if sum(self_time.values()) * 100 >= thresholds["cpu_pct"] * gap:
        top = max(self_time, key=lambda r: (self_time[r], -r))
        row["dominant_op"] = {"name": profile.name(tasks[top, COLUMN["kind"]]),
                              "task": int(tasks[top, COLUMN["id"]]), "ps": self_time[top]}
        return "CPU_DOMINATED"
    return "CPU_UNTRACED"


def starvation(profile: Profile, noise_us: int = 5, launch_to_exec_us: int = 10,
               runtime_share: float = 0.25, cpu_share: float = 0.2, limit: int = 50) -> list[dict]:
    """Per device: the classified gap time by "drain type/CPU class" (count, ps, the
    longest gap), and the longest ``limit`` gaps with their classes."""
    ops = profile.ops
    thresholds = {"noise_ps": noise_us * PS_PER_US, "to_exec_ps": launch_to_exec_us * PS_PER_US,
                  "runtime_pct": runtime_share * 100, "cpu_pct": cpu_share * 100}
    sync_ends = _sync_ends(profile)
    threads = _Threads(profile)
    out = []
    for device in np.unique(ops.device).tolist():
        mine = np.flatnonzero(ops.device == device)
        lo, hi = int(ops.start[mine].min()), int(ops.end[mine].max())
        gs, ge = complement(ops.start[mine], ops.end[mine], lo, hi)
        real = ge - gs >= thresholds["noise_ps"]
        # the operation that ends each gap: the first to start at its end
        by_start = mine[np.lexsort((ops.task[mine], ops.start[mine]))]
        after = by_start[np.searchsorted(ops.start[by_start], ge[real])]
        rows = [classify_gap(profile, int(a), int(b), int(op), sync_ends, thresholds, threads)
                for a, b, op in zip(gs[real], ge[real], after)]
        classes: dict[str, dict] = defaultdict(lambda: {"count": 0, "ps": 0, "longest": None})
        for r in rows:
            c = classes[f"{r['drain_type']}/{r['cpu_during_gap']}"]
            c["count"] += 1
            c["ps"] += r["t1"] - r["t0"]
            if c["longest"] is None or r["t1"] - r["t0"] > c["longest"]["t1"] - c["longest"]["t0"]:
                c["longest"] = r
        rows.sort(key=lambda r: (r["t0"] - r["t1"], r["t0"]))
        out.append({"device": device, "gap_ps": int((ge - gs)[real].sum()),
                    "noise_ps": int((ge - gs)[~real].sum()),
                    "classes": dict(sorted(classes.items(), key=lambda x: -x[1]["ps"])),
                    "rows": rows[:limit]})
    return out
