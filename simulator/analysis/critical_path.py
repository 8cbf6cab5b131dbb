"""S9, the critical path through a kernel launch (why-layer.md §9.1, S9 and (b) below
its table): a backward walk from the launch's end along the last-arriving predecessor.

The walk holds a cursor, starting at the kernel's end, and every step charges the time
between the cursor and an earlier instant to one (location, category) and one class,
then moves the cursor there. The cursor only moves back, so the charges tile
[kernel start, kernel end) and sum to the launch time exactly, in integer ps (test).
Two moves alternate:

- **at a task's end**: a task's end is set by its latest-ending child (a request's by
  its ``req_in``, or the work the ``req_in`` holds: a work-group under a ``MapWGReq``, a
  downstream request under a cache's ``req_in``). The walk descends into it, charging
  the rest of the task after it (a response's return, a work-group's completion) to the
  task. A task without children is charged whole, and the walk goes to its start.
- **at a task's start**: the candidates are the previous instruction of the same
  wavefront that had ended (program order; a VMEM instruction ends at its last
  response, so an instruction after its wait names it), the previous task on the same
  serial resource (a SIMD, the scalar, branch or LDS unit; for a ``req_in``, the cache
  bank or DRAM channel, among tasks ending after the request was sent), the parent's
  start (a ``req_in`` waits for its ``req_out`` to be sent, the first instruction for
  its wavefront, work-group and ``MapWGReq``), for a barrier the last wavefront to
  arrive, and for a dispatch the previous dispatch or the work-group whose end freed
  its CU. The critical predecessor is the one at the latest instant not after the
  start; ties go to the resource. The gap between them is charged to ``wait@`` the
  task's location.

Tasks of zero duration are never a predecessor (HTA drops them too), so the walk
always moves back in time and ends. Classes: **compute** (VALU, SALU, Branch), **LDS**,
**memory-queue** (waits before a memory request is served, including a VMEM
instruction's wait for its lines to be sent), **memory-service** (requests' service
and return; a VMEM instruction whose requests were not recorded), **issue-wait**
(waits before an instruction issues, barriers, wavefronts finishing) and **launch**
(launch overhead, dispatch, work-group completion at the Command Processor).
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..tracing.exporters import export_highlighted
from .components import UNIT_OF_INST
from .order import stable_order
from .scope import COLUMN, Scope, member
from .trace import Kernel, Trace

CLASSES = ("compute", "LDS", "memory-queue", "memory-service", "issue-wait", "launch")
CHAIN_LIMIT = 200
"""Steps listed in the report's chain (the most expensive; the sums cover every step)."""

SERIAL_UNITS = ("SIMD", "Scalar", "Branch", "LDS")
"""Units that take one instruction at a time: a task there waits for the one before."""
MEMORY = ("ReadReq", "WriteReq")
OWN_CLASS = {"VALU": "compute", "SALU": "compute", "Branch": "compute", "LDS": "LDS",
             "VMEM": "memory-service", "Barrier": "issue-wait"}


def _own_class(category: str, action: str) -> str:
    """The class of a task's own time."""
    if category == "inst":
        return OWN_CLASS[action]
    if action in MEMORY:
        return "memory-service"
    return "issue-wait" if category in ("wavefront", "work-group") else "launch"


def _gap_class(category: str, action: str) -> str:
    """The class of the wait before a task starts."""
    if category == "inst":
        return "issue-wait"
    return "memory-queue" if action in MEMORY else "launch"


class _LatestEnd:
    """Some of the launch's tasks, by location and end: which one ended last by a time.
    A location's tasks are sorted when the walk first asks about it (it visits few)."""

    def __init__(self, scope: Scope, wanted: np.ndarray) -> None:
        self.scope = scope
        self.wanted = wanted
        self.end = scope.tasks[:, COLUMN["end"]]
        self.at: dict[int, tuple[np.ndarray, np.ndarray]] = {}

    def _group(self, location: int) -> tuple[np.ndarray, np.ndarray]:
        """(positions, ends) of the location's tasks by end, equal ends in id order."""
        if location not in self.at:
            rows = self.scope.rows_at(location)
            rows = rows[self.wanted[rows]]
            rows = rows[np.argsort(self.end[rows], kind="stable")]
            self.at[location] = rows, self.end[rows]
        return self.at[location]

    def latest(self, location: int, t: int, lo: int | None = None) -> int:
        """Position of the task at ``location`` with the latest end ≤ t (and ≥ lo), or -1."""
        rows, ends = self._group(location)
        j = int(np.searchsorted(ends, t, "right")) - 1
        if j < 0 or (lo is not None and ends[j] < lo):
            return -1
        return int(rows[j])

    def ending_at(self, location: int, t: int) -> np.ndarray:
        """Positions of the tasks at ``location`` that end at ``t``."""
        rows, ends = self._group(location)
        return rows[np.searchsorted(ends, t, "left"):np.searchsorted(ends, t, "right")]


@dataclass
class _Walk:
    """The charges of one walk, in the order they were made (backward in time)."""

    cursor: int
    floor: int
    by_class: dict = field(default_factory=lambda: dict.fromkeys(CLASSES, 0))
    by_component: dict = field(default_factory=lambda: defaultdict(int))
    charged: dict = field(default_factory=lambda: defaultdict(int))
    visited: list = field(default_factory=list)
    edges: list = field(default_factory=list)   # (pred, succ, type, weight ps)

    def charge(self, to: int, loc: str, category: str, cls: str, task: int) -> None:
        to = max(int(to), self.floor)
        if to < self.cursor:
            ps = self.cursor - to
            self.by_class[cls] += ps
            self.by_component[(loc, category)] += ps
            self.charged[task] += ps
            self.cursor = to


class _Graph:
    """A launch's tasks with the lookups the walk needs."""

    def __init__(self, scope: Scope) -> None:
        t = scope.trace
        rows = scope.tasks
        self.ids = rows[:, COLUMN["id"]]
        self.parent = rows[:, COLUMN["parent"]]
        self.kind = rows[:, COLUMN["kind"]]
        self.loc = rows[:, COLUMN["location"]]
        self.start = rows[:, COLUMN["start"]]
        self.end = rows[:, COLUMN["end"]]
        self.names = t.components.name
        self.kinds = {k: pair for pair, k in t.kinds.items()}
        # each task's children, a slice of the rows ordered by their parent's row
        self.parent_row = scope.parent_rows
        self.by_parent = stable_order(self.parent_row)
        self.first_child = np.r_[0, np.cumsum(np.bincount(self.parent_row + 1,
                                                          minlength=len(rows) + 1))]
        positive = self.end > self.start
        size = max(self.kinds, default=-1) + 1
        self.category = [self.kinds.get(k, ("", ""))[0] for k in range(size)]
        self.action = [self.kinds.get(k, ("", ""))[1] for k in range(size)]
        self.req_in = np.array([c == "req_in" for c in self.category], dtype=bool)
        self.write = np.array([a == "WriteReq" for a in self.action], dtype=bool)

        def of(*pairs: tuple[str, str]) -> np.ndarray:
            keys = [t.kind(*p) for p in pairs]
            return member(self.kind, [k for k in keys if k is not None])

        self.insts = of(*(("inst", u) for u in UNIT_OF_INST)) & positive
        serial = member(self.loc, [x for u in SERIAL_UNITS for x in t.components.unit(u)])
        self.serial = _LatestEnd(scope, self.insts & serial)
        self.served = _LatestEnd(scope, of(*(("req_in", a) for a in MEMORY)) & positive)
        self.groups = _LatestEnd(scope, of(("work-group", "work-group")) & positive)
        self.barriers = _LatestEnd(scope, of(("inst", "Barrier")))
        # dispatch order: the kernel's MapWGReq requests by start
        maps = np.flatnonzero(of(("req_out", "MapWGReq")))
        self.dispatch = maps[np.lexsort((self.ids[maps], self.start[maps]))]
        self.dispatch_rank = {int(p): i for i, p in enumerate(self.dispatch)}
        self.positive = positive

    def children(self, i: int) -> np.ndarray:
        return self.by_parent[self.first_child[i + 1]:self.first_child[i + 2]]

    def program_order(self, i: int, t: int) -> int:
        """The instruction of i's wavefront that ended last by ``t`` (the first by start,
        then id, among those ending together), or -1."""
        wavefront = int(self.parent_row[i])
        if wavefront >= 0:
            peers = self.children(wavefront)
        else:  # a wavefront outside the launch's tasks: its instructions by their parent id
            peers = np.flatnonzero(self.parent == self.parent[i])
        ends = self.end[peers]
        done = self.insts[peers] & (ends <= t)
        if not done.any():
            return -1
        ends = ends[done]
        peers = peers[done][ends == ends.max()]
        if len(peers) == 1:
            return int(peers[0])
        return int(peers[np.lexsort((self.ids[peers], self.start[peers]))[0]])

    def name(self, i: int) -> tuple[str, str, str]:
        k = int(self.kind[i])
        return self.names[int(self.loc[i])], self.category[k], self.action[k]


def critical_path(scope: Scope) -> dict:
    """The launch's critical path: its charges by class and by component, the chain of
    tasks on it (the ``CHAIN_LIMIT`` most expensive), the task charged most, and every
    path task and edge (``path_tasks``, ``edges``) for the Chrome export."""
    scope.require("wg", "wf", "inst")
    k = scope.kernel
    g = _Graph(scope)
    walk = _Walk(cursor=k.end_ps, floor=k.start_ps)
    cp = scope.trace.components.name.get(_kernel_location(g), "GPU.CommandProcessor")
    succ = ("end", _latest_child(g, g.dispatch, k.end_ps))
    walk.charge(g.end[succ[1]] if succ[1] >= 0 else k.start_ps, cp, "kernel", "launch", k.task)
    steps = 0
    while succ[1] >= 0 and walk.cursor > k.start_ps:
        steps += 1
        if steps > 4 * len(g.ids) + 16:
            raise RuntimeError("the critical-path walk did not converge")  # a bug, not input
        succ = (_at_end if succ[0] == "end" else _at_start)(g, walk, succ[1])
    walk.charge(k.start_ps, cp, "kernel", "launch", k.task)
    return _report(g, walk, k)


def _kernel_location(g: _Graph) -> int:
    return int(g.loc[g.dispatch[0]]) if len(g.dispatch) else -1


def _latest_child(g: _Graph, candidates: np.ndarray, t: int) -> int:
    """Of the positions, the task of positive duration ending last by ``t``, or -1."""
    ends = g.end[candidates]
    done = g.positive[candidates] & (ends <= t)
    if not done.any():
        return -1
    # latest end, then the latest created (a response follows its request): positions
    # ascend with ids
    ends = ends[done]
    return int(candidates[done][ends == ends.max()].max())


def _at_end(g: _Graph, walk: _Walk, i: int) -> tuple[str, int]:
    """The cursor is at task i's end: descend into what ended it, or charge it whole."""
    walk.visited.append(i)
    loc, category, action = g.name(i)
    if category == "inst" and action == "Barrier":
        return _barrier(g, walk, i)
    children = g.children(i)
    inner = children[g.req_in[g.kind[children]]].tolist()
    determiners = np.concatenate([children, *(g.children(c) for c in inner)])
    if action == "ReadReq":  # a cache's write-backs do not answer the read
        determiners = determiners[~g.write[g.kind[determiners]]]
    child = _latest_child(g, determiners, walk.cursor)
    if child >= 0:
        walk.charge(g.end[child], loc, f"{category}/{action}", _own_class(category, action), int(g.ids[i]))
        walk.edges.append((child, i, "child", 0))
        return "end", child
    walk.charge(g.start[i], loc, f"{category}/{action}", _own_class(category, action), int(g.ids[i]))
    return "start", i


def _barrier(g: _Graph, walk: _Walk, i: int) -> tuple[str, int]:
    """A barrier ends when the last wavefront of its work-group arrives: continue there."""
    loc, category, action = g.name(i)
    group = _group_of(g, i)
    same = [p for p in g.barriers.ending_at(int(g.loc[i]), int(g.end[i])).tolist()
            if _group_of(g, p) == group]
    last = max(same, key=lambda p: (int(g.start[p]), int(g.ids[p])), default=i)
    walk.charge(g.start[last], loc, f"{category}/{action}", "issue-wait", int(g.ids[i]))
    if last != i:
        walk.visited.append(last)
        walk.edges.append((last, i, "barrier", 0))
    return "start", last


def _group_of(g: _Graph, i: int) -> int:
    wavefront = int(g.parent_row[i])
    return int(g.parent[wavefront]) if wavefront >= 0 else -1


def _at_start(g: _Graph, walk: _Walk, i: int) -> tuple[str, int]:
    """The cursor is at task i's start: move to its critical predecessor."""
    walk.visited.append(i)
    loc, category, action = g.name(i)
    t = int(g.start[i])
    candidates = []  # (instant, priority: ties go to the highest, edge type, next move)
    parent = int(g.parent_row[i])
    if parent >= 0:  # a dispatch's parent is the kernel, outside the launch's tasks
        candidates.append((int(g.start[parent]), 0, "parent", ("start", parent)))
    if category == "inst":
        j = g.program_order(i, t)
        if j >= 0:
            candidates.append((int(g.end[j]), 1, "program-order", ("end", j)))
        j = g.serial.latest(int(g.loc[i]), t)
        if j >= 0:
            candidates.append((int(g.end[j]), 2, "resource", ("end", j)))
    elif category == "req_in" and action in MEMORY and parent >= 0:
        j = g.served.latest(int(g.loc[i]), t, int(g.start[parent]))
        if j >= 0:
            candidates.append((int(g.end[j]), 2, "resource", ("end", j)))
    elif category == "req_out" and action == "MapWGReq":
        rank = g.dispatch_rank[i]
        if rank:
            before = int(g.dispatch[rank - 1])
            candidates.append((int(g.start[before]), 2, "dispatch", ("start", before)))
        children = g.children(i)
        target = children[g.req_in[g.kind[children]]]
        if len(target):
            j = g.groups.latest(int(g.loc[target[0]]), t)
            if j >= 0:
                candidates.append((int(g.end[j]), 1, "cu-free", ("end", j)))
    if not candidates:
        return "start", -1
    when, _, kind, move = max(candidates, key=lambda c: (c[0], c[1]))
    walk.charge(when, f"wait@{loc}", "wait", _gap_class(category, action), int(g.ids[i]))
    walk.edges.append((move[1], i, kind, t - when))
    return move


def _report(g: _Graph, walk: _Walk, k) -> dict:
    order = list(dict.fromkeys(reversed(walk.visited)))  # kernel start -> end
    order.sort(key=lambda p: (int(g.start[p]), int(g.end[p])))
    charged = walk.charged

    def step(p: int) -> dict:
        loc, category, action = g.name(p)
        return {"task": int(g.ids[p]), "loc": loc, "category": category, "action": action,
                "start_ps": int(g.start[p]), "end_ps": int(g.end[p]),
                "charged_ps": int(charged.get(int(g.ids[p]), 0))}

    steps = [step(p) for p in order]
    listed = sorted(range(len(steps)), key=lambda j: -steps[j]["charged_ps"])[:CHAIN_LIMIT]
    top = max(steps, key=lambda s: s["charged_ps"], default=None)
    components = sorted(({"loc": loc, "category": cat, "ps": ps}
                         for (loc, cat), ps in walk.by_component.items()),
                        key=lambda c: (-c["ps"], c["loc"], c["category"]))
    return {
        "total_ps": k.duration_ps,
        "by_class": dict(walk.by_class),
        "by_component": components,
        "steps": len(steps),
        "chain": [steps[j] for j in sorted(listed)],
        "critical_task": top,
        "path_tasks": [s["task"] for s in steps],
        "edges": [{"src": int(g.ids[a]), "dst": int(g.ids[b]), "type": kind, "weight": int(w)}
                  for a, b, kind, w in reversed(walk.edges)],
    }


def public_path(path: dict) -> dict:
    """The report's entry: the path without its full task and edge lists."""
    return {k: v for k, v in path.items() if k not in ("path_tasks", "edges")}


def export_path(trace: Trace, kernels: list[Kernel], out: Path, force: bool = False) -> int:
    """Write the launches' tasks as Chrome JSON with their critical paths overlaid as HTA
    does: ``args.critical = 1`` on path tasks, and a ``critical_path`` flow with
    ``args {weight, type}`` along each edge (weight: the ps between the two tasks)."""
    critical, flows = set(), []
    for k in kernels:
        path = critical_path(Scope(trace, k))
        critical.update(path["path_tasks"])
        flows += [(e["src"], e["dst"], "critical_path", {"weight": e["weight"], "type": e["type"]})
                  for e in path["edges"]]
    tasks = (min(k.task for k in kernels), max(k.last_task for k in kernels))
    return export_highlighted(trace.path, out, tasks, frozenset(critical), flows, force)
