"""A profile as the analyses see it: GPU operations, the CPU calls that launched them,
and the rest of the CPU work, as numpy arrays in integer ps.

A *GPU operation* is a task at a GPU stream (``GPU[d].stream[s]``) whose category is a
kernel, a copy, a memset or a CUDA graph launch (Kineto's ``kernel``/``gpu_memcpy``/
``gpu_memset``, the 2021 format's ``Kernel``/``Memcpy``/``Memset``, nsys' ``cuda_graph``).
A *call* is a runtime or driver API task on a CPU thread (``cuda_runtime``,
``cuda_driver``, 2021's ``Runtime``). The call that launched an operation is the one
with its correlation id (as HTA and nsys join them), else the one linked to it
(``task_link``): a flow bound by time can land on a zero-length call that starts at the
same instant as the launch (45 ``cudaFuncSetAttribute`` in the shared A100 trace).

Kernel classes follow HTA's (``hta/utils/utils.py:get_kernel_type``): communication
(``^nccl``...), memory (copies, memsets, ``^dma``), computation (the rest), with
synchronization waits apart; memory is tested first, so a ``hip``-prefixed copy is not
communication (why-layer.md §9.2 I1).

``like_hta`` makes HolisticTraceAnalysis' two choices when it reads a trace
(``hta/common/trace.py:_filter_irrelevant_gpu_kernels``,
``hta/common/trace_parser.py:round_down_time_stamps``): with two or more profiler steps
it keeps only the CPU events that start before the last ``ProfilerStep#`` (often cut
short) and the GPU operations they launched; and where the source times have digits
below the microsecond it moves each start up and each end down to a whole microsecond
of the source clock. HTA also counts synchronization events of the GPU as GPU events
in its time breakdown (a context sync too: Kineto writes its stream as 2³² − 1, which
HTA's test ``stream != -1`` lets through); the view keeps them apart (``syncs``) for that.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, replace

import numpy as np

from .trace import COLUMN, ProfileTrace

PS_PER_US = 10 ** 6
GPU_LOCATION = re.compile(r"^GPU\[(\d+)\](?:\.stream\[(\d+)\]$|\.)")
"""A stream (``GPU[0].stream[7]``) or another track of the GPU (``GPU[0].Device 0``, where
Kineto puts a context synchronization): stream -1."""
KERNEL, COPY, MEMSET, WAIT = 0, 1, 2, 3
OP_CATEGORIES = {"kernel": KERNEL, "cuda_graph": KERNEL, "gpu_memcpy": COPY, "memcpy": COPY,
                 "gpu_memset": MEMSET, "memset": MEMSET}
SYNC_CATEGORIES = {"cuda_sync"}
CALL_CATEGORIES = {"cuda_runtime", "cuda_driver", "runtime"}
COMPUTE, COMMUNICATION, MEMORY, SYNC = 0, 1, 2, 3
CLASS_NAMES = ("computation", "communication", "memory", "sync")
MEMORY_NAME = re.compile(r"^(hip)?Memcpy|^(hip)?Memset|^dma")
COMMUNICATION_NAME = re.compile(r"^nccl|^rccl|^hccl|.*ncclKernel")
SYNC_NAME = re.compile(r".*Sync")
PROFILER_STEP = re.compile(r"ProfilerStep\s*#\s*\d+")


def kernel_class(category: int, name: str) -> int:
    """The HTA class of an operation (memory tested first). A synchronization event
    (``WAIT``) is computation unless its name says ``Sync``, as in HTA's regex: a
    ``Stream Wait Event`` counts as computation in HTA's breakdown."""
    if category == WAIT:
        return SYNC if SYNC_NAME.match(name) else COMPUTE
    if category in (COPY, MEMSET) or MEMORY_NAME.match(name):
        return MEMORY
    if COMMUNICATION_NAME.match(name):
        return COMMUNICATION
    return COMPUTE


@dataclass
class Ops:
    """GPU operations (one row per operation, sorted by start then id)."""

    task: np.ndarray
    kind: np.ndarray
    location: np.ndarray
    start: np.ndarray
    end: np.ndarray
    device: np.ndarray
    stream: np.ndarray
    category: np.ndarray    # KERNEL, COPY or MEMSET (WAIT for a synchronization event)
    cls: np.ndarray         # COMPUTE, COMMUNICATION, MEMORY or SYNC
    launch: np.ndarray      # row in Profile.tasks of the launching call, -1 without one

    def __len__(self) -> int:
        return len(self.task)

    def take(self, rows) -> Ops:
        return Ops(**{name: getattr(self, name)[rows] for name in self.__dataclass_fields__})


@dataclass
class Profile:
    """Every task, the GPU operations among them, and what the analyses look up."""

    trace: ProfileTrace
    tasks: np.ndarray                 # rows of TASK_COLUMNS, times as the view sees them
    ops: Ops                          # kernels, copies, memsets on streams
    syncs: Ops                        # synchronization events of a GPU (HTA counts them)
    calls: np.ndarray                 # rows in ``tasks`` of runtime/driver calls
    names: dict[int, str]             # kind id -> action (the operation's or call's name)
    categories: dict[int, str]        # kind id -> category
    window: tuple[int, int] | None    # the time window analyzed, or all
    like_hta: bool

    def name(self, kind: int) -> str:
        return self.names[int(kind)]

    def location(self, location: int) -> str:
        return self.trace.locations[int(location)]

    def row_of(self, task_ids: np.ndarray) -> np.ndarray:
        """Rows in ``tasks`` of task ids (tasks are in id order)."""
        return np.searchsorted(self.tasks[:, COLUMN["id"]], task_ids)


def _round_inward(tasks: np.ndarray, origin_sub_us: int) -> np.ndarray:
    """Starts up and ends down to a whole microsecond of the source clock (HTA's
    ``round_down_time_stamps``); an event shorter than its rounding keeps its length
    negative, as HTA's does."""
    out = tasks.copy()
    start = out[:, COLUMN["start_ps"]] + origin_sub_us
    end = out[:, COLUMN["end_ps"]] + origin_sub_us
    out[:, COLUMN["start_ps"]] = -(-start // PS_PER_US) * PS_PER_US - origin_sub_us
    out[:, COLUMN["end_ps"]] = end // PS_PER_US * PS_PER_US - origin_sub_us
    return out


def load(trace: ProfileTrace, like_hta: bool = False,
         window: tuple[int, int] | None = None) -> Profile:
    """The profile of ``trace``: every operation, or (``like_hta``) those HTA keeps."""
    tasks = trace.tasks()
    categories = {k: c for k, (c, _) in trace.kinds.items()}
    names = {k: a for k, (_, a) in trace.kinds.items()}
    sub_us = (tasks[:, COLUMN["start_ps"]] + trace.origin_sub_us_ps) % PS_PER_US
    if like_hta and sub_us.any():
        tasks = _round_inward(tasks, trace.origin_sub_us_ps)
    streams = {loc: GPU_LOCATION.match(name) for loc, name in trace.locations.items()}
    streams = {loc: (int(m.group(1)), -1 if m.group(2) is None else int(m.group(2)))
               for loc, m in streams.items() if m}
    kind_col, loc_col = tasks[:, COLUMN["kind"]], tasks[:, COLUMN["location"]]
    on_gpu = np.isin(loc_col, list(streams))
    on_stream = np.isin(loc_col, [loc for loc, (_, stream) in streams.items() if stream >= 0])
    op_code = np.full(len(tasks), -1, dtype=np.int64)
    for k, category in categories.items():
        code = OP_CATEGORIES.get(category.lower())
        if code is not None:
            op_code[kind_col == k] = code
    call_kinds = [k for k, c in categories.items() if c.lower() in CALL_CATEGORIES]
    sync_kinds = [k for k, c in categories.items() if c.lower() in SYNC_CATEGORIES]
    is_op = on_stream & (op_code >= 0)
    is_sync = on_gpu & np.isin(kind_col, sync_kinds)
    is_call = ~on_gpu & np.isin(kind_col, call_kinds)
    launch = _launches(trace, tasks, is_call, is_op | is_sync)
    _by_correlation(trace, tasks, launch, call_kinds,
                    [k for k, c in categories.items() if c.lower() in OP_CATEGORIES] + sync_kinds,
                    on_gpu)
    keep = np.ones(len(tasks), dtype=bool)
    if like_hta:
        keep = _before_last_step(tasks, names, on_gpu, launch)
    ops = _ops(tasks, np.flatnonzero(is_op & keep), op_code, launch, streams, names)
    syncs = _ops(tasks, np.flatnonzero(is_sync & keep), np.full(len(tasks), WAIT), launch,
                 streams, names)
    calls = np.flatnonzero(is_call & keep)
    whole = Profile(trace, tasks, ops, syncs, calls, names, categories, None, like_hta)
    return whole if window is None else cut(whole, window)


def cut(profile: Profile, window: tuple[int, int]) -> Profile:
    """The profile cut to [t0, t1): the operations that overlap it, cut to it, and the
    calls that overlap it (every task stays, for the links to reach)."""
    tasks, calls = profile.tasks, profile.calls
    calls = calls[(tasks[calls, COLUMN["start_ps"]] < window[1])
                  & (tasks[calls, COLUMN["end_ps"]] > window[0])]
    return replace(profile, ops=_in_window(profile.ops, window),
                   syncs=_in_window(profile.syncs, window), calls=calls, window=window)


def _in_window(ops: Ops, window: tuple[int, int]) -> Ops:
    """The operations overlapping [t0, t1), cut to it."""
    lo, hi = window
    kept = ops.take((ops.start < hi) & (ops.end > lo))
    kept.start, kept.end = np.maximum(kept.start, lo), np.minimum(kept.end, hi)
    return kept


def _launches(trace: ProfileTrace, tasks: np.ndarray, is_call: np.ndarray,
              is_gpu: np.ndarray) -> np.ndarray:
    """Per task row, the row of the call linked to it (its launch), else -1."""
    links = trace.links()
    launch = np.full(len(tasks), -1, dtype=np.int64)
    if not len(links):
        return launch
    ids = tasks[:, COLUMN["id"]]
    src, dst = np.searchsorted(ids, links[:, 0]), np.searchsorted(ids, links[:, 1])
    ok = (src < len(ids)) & (dst < len(ids))
    src, dst = src[ok], dst[ok]
    ok = is_call[src] & is_gpu[dst]
    src, dst = src[ok], dst[ok]
    # one launch per operation: the first linked call (links are sorted by dst, src)
    first = np.r_[True, dst[1:] != dst[:-1]]
    launch[dst[first]] = src[first]
    return launch


def _by_correlation(trace: ProfileTrace, tasks: np.ndarray, launch: np.ndarray,
                    call_kinds: list[int], gpu_kinds: list[int], on_gpu: np.ndarray) -> None:
    """Set ``launch`` of each GPU task to the call with its correlation id, where exactly
    one call has it."""
    calls = trace.correlations(call_kinds)
    gpu = trace.correlations(gpu_kinds)
    if not len(calls) or not len(gpu):
        return
    ids = tasks[:, COLUMN["id"]]
    calls = calls[~on_gpu[np.searchsorted(ids, calls[:, 0])]]
    gpu = gpu[on_gpu[np.searchsorted(ids, gpu[:, 0])]]
    value, first, count = np.unique(calls[:, 1], return_index=True, return_counts=True)
    at = np.searchsorted(value, gpu[:, 1]).clip(max=max(len(value) - 1, 0))
    found = (value[at] == gpu[:, 1]) & (count[at] == 1)
    launch[np.searchsorted(ids, gpu[found, 0])] = np.searchsorted(ids, calls[first[at[found]], 0])


def _before_last_step(tasks: np.ndarray, names: dict[int, str], on_gpu: np.ndarray,
                      launch: np.ndarray) -> np.ndarray:
    """HTA's filter: with two or more distinct ``ProfilerStep#`` names, CPU events that
    start before the last step starts, and the GPU events launched by one of them."""
    steps = [k for k, name in names.items() if PROFILER_STEP.search(name)]
    keep = np.ones(len(tasks), dtype=bool)
    is_step = np.isin(tasks[:, COLUMN["kind"]], steps) & ~on_gpu
    if len({names[k] for k in steps}) < 2 or not is_step.any():
        return keep
    last = tasks[is_step, COLUMN["start_ps"]].max()
    cpu_kept = ~on_gpu & (tasks[:, COLUMN["start_ps"]] < last)
    keep[:] = cpu_kept
    launched = on_gpu & (launch >= 0)
    keep[launched] = cpu_kept[launch[launched]]
    return keep


def _ops(tasks: np.ndarray, rows: np.ndarray, op_code: np.ndarray, launch: np.ndarray,
         streams: dict[int, tuple[int, int]], names: dict[int, str]) -> Ops:
    sub = tasks[rows]
    order = np.lexsort((sub[:, COLUMN["id"]], sub[:, COLUMN["start_ps"]]))
    rows, sub = rows[order], sub[order]
    locs = sub[:, COLUMN["location"]]
    # per distinct location and (category, kind) pair, not per operation
    places, at = np.unique(locs, return_inverse=True)
    device = np.array([streams[p][0] for p in places.tolist()], dtype=np.int64)[at]
    stream = np.array([streams[p][1] for p in places.tolist()], dtype=np.int64)[at]
    category = op_code[rows]
    pairs, at = np.unique(np.c_[category, sub[:, COLUMN["kind"]]], axis=0, return_inverse=True)
    cls = np.array([kernel_class(c, names[k]) for c, k in pairs.tolist()],
                   dtype=np.int64)[at.reshape(-1)]
    return Ops(sub[:, COLUMN["id"]], sub[:, COLUMN["kind"]], locs, sub[:, COLUMN["start_ps"]],
               sub[:, COLUMN["end_ps"]], device, stream, category, cls, launch[rows])
