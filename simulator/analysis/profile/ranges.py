"""I11, the ranges a program marks on its CPU threads, projected onto the GPU (Nsight
Systems' ``nvtx_gpu_proj_trace`` and ``_sum``; why-layer.md §1, §9.2 I11).

A *range* is a CPU task that names a span of the program: an NVTX push/pop or
start/end range (nsys, category ``nvtx``), a ``record_function`` annotation (Kineto
``user_annotation``) or a profiler step (``ProfilerStep#N``, whatever its category:
the 2021 Kineto format calls it an ``Operator``). Kineto's ``gpu_user_annotation``
ranges are on the GPU already, Kineto's own projection, which charges each kernel to
the innermost annotation alone (on the shared ResNet-18 H100 trace ``ProfilerStep#2``
ends there at 4.8 s while the kernels its CPU range launched run until 12.7 s), so
they are not projected again.

Projection, as nsys defines it: a GPU operation (kernel, copy, memset) belongs to a
range when the call that launched it lies inside the range on the range's own thread
(call start ≥ range start, call end ≤ range end); projected start = the earliest start
of those operations, projected end = the latest end, and their count. A range that
launched nothing has no projection. Only a range that starts and ends on one thread
counts (the nsys importer notes "ended on thread" on the others). Ranges nest per
thread: a range's parent is the innermost range of its thread that holds it, its level
the number of ranges above it. Projected ranges may overlap, so their sum can exceed
the run (as nsys warns).

A range is named by its name, or ``NAME#k`` for the k-th (from 0, in start order) of
several alike, and a profiler step by its number; ``scope`` turns either into the
window its GPU work spans (its projection), to which the other analyses are cut.
"""
from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

import numpy as np

from ...tracing.writer import TraceError
from .ops import GPU_LOCATION, Profile
from .trace import COLUMN, ProfileTrace

RANGE_CATEGORIES = frozenset({"nvtx", "user_annotation"})
STEP = re.compile(r"ProfilerStep\s*#\s*(\d+)$")
INSTANCE = re.compile(r"(.*)#(\d+)$")


@dataclass
class Ranges:
    """The ranges of a profile (rows of ``Profile.tasks``, by start then id) and their
    projections (-1 where a range launched nothing)."""

    rows: np.ndarray
    names: list[str]
    proj_start: np.ndarray
    proj_end: np.ndarray
    gpu_ops: np.ndarray
    parent: np.ndarray      # index in ``rows`` of the enclosing range, -1 at the top
    level: np.ndarray

    def __len__(self) -> int:
        return len(self.rows)

    def instances(self, name: str) -> np.ndarray:
        """Indices (in ``rows``) of the ranges called ``name``, in start order."""
        return np.flatnonzero(np.array(self.names, dtype=object) == name)


def _range_rows(profile: Profile) -> np.ndarray:
    """Rows of the CPU tasks that are ranges and end on the thread they start on."""
    tasks = profile.tasks
    kinds = [k for k, c in profile.categories.items() if c.lower() in RANGE_CATEGORIES]
    kinds += [k for k, name in profile.names.items() if STEP.match(name) and k not in kinds]
    gpu = [loc for loc, name in profile.trace.locations.items() if GPU_LOCATION.match(name)]
    rows = np.flatnonzero(np.isin(tasks[:, COLUMN["kind"]], kinds)
                          & ~np.isin(tasks[:, COLUMN["location"]], gpu))
    nvtx = [k for k, c in profile.categories.items() if c.lower() == "nvtx"]
    crossed = rows[np.isin(tasks[rows, COLUMN["kind"]], nvtx)]
    if len(crossed):
        details = profile.trace.details(tasks[crossed, COLUMN["id"]])
        ended_elsewhere = [task for task, d in details.items() if "ended on thread" in d]
        rows = rows[~np.isin(tasks[rows, COLUMN["id"]], ended_elsewhere)]
    order = np.lexsort((tasks[rows, COLUMN["id"]], tasks[rows, COLUMN["start_ps"]]))
    return rows[order]


def _project(profile: Profile, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(projected start, projected end, operations) of each range row."""
    tasks, ops = profile.tasks, profile.ops
    start, end = np.full(len(rows), -1, np.int64), np.full(len(rows), -1, np.int64)
    count = np.zeros(len(rows), np.int64)
    launched = np.flatnonzero(ops.launch >= 0)
    call = ops.launch[launched]
    # the launches by (thread, call start), so each range reads one slice
    order = np.lexsort((tasks[call, COLUMN["start_ps"]], tasks[call, COLUMN["location"]]))
    launched, call = launched[order], call[order]
    where = tasks[call, COLUMN["location"]]
    call_start, call_end = tasks[call, COLUMN["start_ps"]], tasks[call, COLUMN["end_ps"]]
    for i, row in enumerate(rows.tolist()):
        loc, lo, hi = (int(tasks[row, COLUMN[c]]) for c in ("location", "start_ps", "end_ps"))
        a, b = np.searchsorted(where, loc, "left"), np.searchsorted(where, loc, "right")
        a, b = a + np.searchsorted(call_start[a:b], lo, "left"), a + np.searchsorted(
            call_start[a:b], hi, "right")
        inside = launched[a:b][call_end[a:b] <= hi]
        if len(inside):
            start[i], end[i] = ops.start[inside].min(), ops.end[inside].max()
            count[i] = len(inside)
    return start, end, count


def _nesting(tasks: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(parent index, level) of each range among the ranges of its thread."""
    parent, level = np.full(len(rows), -1, np.int64), np.zeros(len(rows), np.int64)
    open_on: dict[int, list[int]] = {}
    # by start, the longer first where two start together: an outer range before its inner
    order = np.lexsort((-tasks[rows, COLUMN["end_ps"]], tasks[rows, COLUMN["start_ps"]]))
    for i in order.tolist():
        row = rows[i]
        stack = open_on.setdefault(int(tasks[row, COLUMN["location"]]), [])
        while stack and tasks[rows[stack[-1]], COLUMN["end_ps"]] < tasks[row, COLUMN["end_ps"]]:
            stack.pop()
        if stack:
            parent[i], level[i] = stack[-1], level[stack[-1]] + 1
        stack.append(i)
    return parent, level


def ranges(profile: Profile) -> Ranges:
    """Every range of the profile with its projection onto the GPU."""
    rows = _range_rows(profile)
    names = [profile.name(k) for k in profile.tasks[rows, COLUMN["kind"]]]
    return Ranges(rows, names, *_project(profile, rows), *_nesting(profile.tasks, rows))


def nvtx_projection(profile: Profile) -> dict:
    """I11: every range (nsys ``nvtx_gpu_proj_trace``) and a summary per name (``_sum``),
    in ps; or what the trace lacks for it."""
    found = ranges(profile)
    if not len(found):
        return {"unavailable": "needs ranges: the trace records no NVTX range, user"
                               " annotation or profiler step on a CPU thread"}
    tasks = profile.tasks
    ids = tasks[found.rows, COLUMN["id"]]
    rows = []
    for i, row in enumerate(found.rows.tolist()):
        projected = found.gpu_ops[i] > 0
        rows.append({
            "task": int(ids[i]), "name": found.names[i],
            "thread": profile.location(tasks[row, COLUMN["location"]]),
            "start_ps": int(tasks[row, COLUMN["start_ps"]]),
            "end_ps": int(tasks[row, COLUMN["end_ps"]]),
            "proj_start_ps": int(found.proj_start[i]) if projected else None,
            "proj_end_ps": int(found.proj_end[i]) if projected else None,
            "gpu_ops": int(found.gpu_ops[i]), "level": int(found.level[i]),
            "parent": int(ids[found.parent[i]]) if found.parent[i] >= 0 else None,
            "children": int((found.parent == i).sum())})
    return {"ranges": rows, "names": _per_name(rows)}


def _per_name(rows: list[dict]) -> list[dict]:
    """Per range name: instances, projected and range time in all, GPU operations; the
    most projected time first."""
    out: dict[str, dict] = {}
    for r in rows:
        s = out.setdefault(r["name"], {"name": r["name"], "instances": 0, "projected": 0,
                                       "proj_total_ps": 0, "proj_max_ps": 0,
                                       "range_total_ps": 0, "gpu_ops": 0})
        s["instances"] += 1
        s["range_total_ps"] += r["end_ps"] - r["start_ps"]
        s["gpu_ops"] += r["gpu_ops"]
        if r["gpu_ops"]:
            length = r["proj_end_ps"] - r["proj_start_ps"]
            s["projected"] += 1
            s["proj_total_ps"] += length
            s["proj_max_ps"] = max(s["proj_max_ps"], length)
    return sorted(out.values(), key=lambda s: (-s["proj_total_ps"], s["name"]))


def _find_range(found: Ranges, text: str, where: str) -> int:
    """The index in ``found`` of the range ``text`` names: a name held by one range, or
    ``NAME#k``, the k-th (from 0) of the ranges called NAME. A name that is no range's
    is a ``TraceError`` naming the closest; ``where`` names the trace."""
    exact = found.instances(text)
    if len(exact) == 1:
        return int(exact[0])
    if len(exact) > 1:
        raise TraceError(f"{where}: {len(exact)} ranges are called {text!r}; name one as"
                         f" {text}#0 to {text}#{len(exact) - 1}")
    match = INSTANCE.match(text)
    if match and len(found.instances(match[1])):
        alike = found.instances(match[1])
        k = int(match[2])
        if k >= len(alike):
            raise TraceError(f"{where}: {match[1]!r} has {len(alike)} instance"
                             f"{'s' if len(alike) > 1 else ''}, #0 to #{len(alike) - 1};"
                             f" there is no #{k}")
        return int(alike[k])
    names = sorted(set(found.names))
    if not names:
        raise TraceError(f"{where}: the trace records no NVTX range, user annotation or"
                         " profiler step to scope the analyses to")
    close = difflib.get_close_matches(text, names, n=3) or names[:3]
    raise TraceError(f"{where}: no range is called {text!r}; the trace has {len(names)}"
                     f" range names, such as {', '.join(map(repr, close))}")


def _find_step(found: Ranges, step: int, where: str) -> int:
    """The index in ``found`` of profiler step ``step`` (``ProfilerStep#step``)."""
    steps = {int(m[1]): i for i, name in enumerate(found.names) if (m := STEP.match(name))}
    if step in steps:
        return steps[step]
    if not steps:
        raise TraceError(f"{where}: the trace records no profiler step (ProfilerStep#N)")
    raise TraceError(f"{where}: there is no ProfilerStep#{step}; the trace has steps"
                     f" {min(steps)} to {max(steps)}")


def steps(trace: ProfileTrace) -> list[int]:
    """The numbers of the profiler steps the trace records on its CPU threads (those
    ``scope`` and the diff's step membership find), ascending; read without loading the
    profile."""
    named = {k: int(m[1]) for k, (_, name) in trace.kinds.items() if (m := STEP.match(name))}
    gpu = [loc for loc, name in trace.locations.items() if GPU_LOCATION.match(name)]
    return sorted({named[k] for k in trace.kinds_outside(list(named), gpu)})


def scope(profile: Profile, range_name: str | None = None, step: int | None = None) -> dict:
    """The range ``range_name`` names (``_find_range``), or profiler step ``step``, and
    its window: its projection onto the GPU, where its GPU work runs (what the profile
    analyses explain), or the range itself if it launched nothing."""
    found = ranges(profile)
    where = str(profile.trace.path)
    index = (_find_step(found, step, where) if step is not None
             else _find_range(found, range_name, where))
    row = found.rows[index]
    if found.gpu_ops[index]:
        t0, t1 = int(found.proj_start[index]), int(found.proj_end[index])
    else:
        t0, t1 = int(profile.tasks[row, COLUMN["start_ps"]]), int(profile.tasks[row, COLUMN["end_ps"]])
    return {"range": found.names[index], "task": int(profile.tasks[row, COLUMN["id"]]),
            "thread": profile.location(profile.tasks[row, COLUMN["location"]]),
            "gpu_ops": int(found.gpu_ops[index]), "t0": t0, "t1": t1}
