"""I10: the CPU–GPU critical path of a profile, HolisticTraceAnalysis' lightweight
critical path (``hta/analyzers/critical_path_analysis.py``, ``CPGraph``; why-layer.md
§2.1) re-implemented on the trace contract.

A graph with two nodes per event (its start and its end) for each CPU operator and
runtime/driver call of positive length and each GPU operation whose launching call has
one; its edges, of HTA's five types:

- ``critical_path_operator``: an operation's start to its end; on a CPU thread, the
  walk of each call stack in depth-first order (parent start → child start → child end
  → next sibling start → … → parent end), each weighing the time between its nodes; a
  blocking call (``BLOCKING``) weighs 0, so the GPU work it waits for carries the path;
- ``critical_path_dependency`` (weight 0): each top-level operator of a thread after
  the one before;
- ``critical_path_kernel_launch_delay``: the launching call's start to the operation's
  start, where the stream was empty (queue length 1 after the launch and 0 after the
  start; the previous operation on the stream, and any event it waits for, ended
  before the launch);
- ``critical_path_kernel_kernel_delay``: otherwise the previous operation's end on the
  stream to this start, for a gap under ``kernel_kernel_delay`` (HTA's 1,500 µs:
  beyond that the wait has a cause the trace does not show);
- ``critical_path_sync_dependency`` (weight 0): the last operation of the stream (of
  every stream for a context sync) to the end of the synchronizing call; for an event
  sync, the operation launched on the recorded stream before ``cudaEventRecord`` to
  the end of ``cudaEventSynchronize``; for a stream wait, that operation to the start
  of the next operation launched on the waiting stream.

The path is the longest one (networkx' ``dag_longest_path`` rule: nodes in Kahn's
topological order by generations, the first heaviest predecessor, the first heaviest
end). Each edge of the path is attributed to an event as HTA does (start → start: the
source; start → end: the event; end → end: the destination; end → start: the
enclosing event; a kernel-kernel delay: the previous operation) and bound by
``cpu_bound``, ``gpu_compute_bound``, ``gpu_communication_bound``,
``gpu_kernel_launch_overhead``, ``gpu_kernel_kernel_overhead`` or nothing (dependency
and sync edges). The weights sum to the path's length exactly, in ps.
"""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

import numpy as np

from ...tracing.exporters import export_highlighted
from .launches import queue_at_launch
from .ops import COMMUNICATION, GPU_LOCATION, Profile, load
from .trace import COLUMN, ProfileTrace

PS_PER_US = 10 ** 6
OPERATOR = "critical_path_operator"
DEPENDENCY = "critical_path_dependency"
LAUNCH = "critical_path_kernel_launch_delay"
KERNEL_KERNEL = "critical_path_kernel_kernel_delay"
SYNC = "critical_path_sync_dependency"
EDGE_TYPES = (OPERATOR, DEPENDENCY, LAUNCH, KERNEL_KERNEL, SYNC)
WEIGHTLESS = (EDGE_TYPES.index(DEPENDENCY), EDGE_TYPES.index(SYNC))
SHOWN = (DEPENDENCY, LAUNCH, SYNC)
"""The edge types HTA's overlay draws as flows by default."""
BLOCKING = frozenset({"cudaDeviceSynchronize", "cudaStreamSynchronize", "cudaEventQuery",
                      "cudaEventSynchronize", "cudaMemcpy", "cudaMemcpyAsync"})
CPU_OP_CATEGORIES = frozenset({"cpu_op", "operator"})
BOUND_BY = {LAUNCH: "gpu_kernel_launch_overhead", KERNEL_KERNEL: "gpu_kernel_kernel_overhead",
            DEPENDENCY: "", SYNC: ""}


class Edge(NamedTuple):
    src: int      # node
    dst: int
    weight: int   # ps
    type: str
    owner: int    # row in Profile.tasks the edge is attributed to, -1 for none


@dataclass
class Edges:
    """Edges as columns, one row per edge (``Edge``'s fields; ``type`` as an index in
    ``EDGE_TYPES``): a profile's graph holds some 10⁵ of them, its path as many."""

    src: np.ndarray
    dst: np.ndarray
    weight: np.ndarray
    type: np.ndarray
    owner: np.ndarray

    def __len__(self) -> int:
        return len(self.src)

    def __iter__(self) -> Iterator[Edge]:
        for src, dst, weight, kind, owner in zip(self.src.tolist(), self.dst.tolist(),
                                                 self.weight.tolist(), self.type.tolist(),
                                                 self.owner.tolist()):
            yield Edge(src, dst, weight, EDGE_TYPES[kind], owner)

    def take(self, rows: np.ndarray) -> Edges:
        return Edges(*(getattr(self, name)[rows] for name in self.__dataclass_fields__))


@dataclass
class Graph:
    """Nodes (row in ``Profile.tasks``, time, is an end) and the edges between them, as
    added (``edges`` keeps one per node pair, as a networkx ``DiGraph`` does)."""

    row: list[int] = field(default_factory=list)
    ts: list[int] = field(default_factory=list)
    is_end: list[bool] = field(default_factory=list)
    start: dict[int, int] = field(default_factory=dict)   # task row -> start node
    end: dict[int, int] = field(default_factory=dict)     # task row -> end node
    # the edges: blocks of (src, dst, type, owner, zero) rows, and those added one by one
    # since the last block
    added: list[np.ndarray] = field(default_factory=list)
    pending: list[tuple[int, int, int, int, bool]] = field(default_factory=list)

    def add(self, src: int, dst: int, kind: str, owner: int = -1, zero: bool = False) -> None:
        """An edge; it weighs the time between its nodes, or 0 with ``zero`` and for the
        dependency and sync types."""
        self.pending.append((src, dst, EDGE_TYPES.index(kind), owner, zero))

    def extend(self, src: np.ndarray, dst: np.ndarray, kind: np.ndarray, owner: np.ndarray,
               zero: np.ndarray) -> None:
        """Many edges at once, as ``add`` would one after the other."""
        self._flush()
        self.added.append(np.stack([src, dst, kind, owner, zero]).astype(np.int64))

    def _flush(self) -> None:
        if self.pending:
            self.added.append(np.array(self.pending, dtype=np.int64).T.reshape(5, -1))
            self.pending = []

    @property
    def edges(self) -> Edges:
        """The edges in insertion order, one per node pair: a later edge between the same
        nodes takes the place of the first (networkx' ``add_edge`` on an existing edge)."""
        self._flush()
        if not self.added:
            return Edges(*np.zeros((5, 0), dtype=np.int64))
        src, dst, kind, owner, zero = np.concatenate(self.added, axis=1)
        key = src * max(len(self.row), 1) + dst
        order = np.argsort(key, kind="stable")
        ends = np.r_[key[order][1:] != key[order][:-1], True]
        first = order[np.r_[True, ends[:-1]]]
        take = order[ends][np.argsort(first)]  # each pair's last edge, where its first was
        src, dst, kind, owner = src[take], dst[take], kind[take], owner[take]
        ts = np.array(self.ts, dtype=np.int64)
        weightless = zero[take].astype(bool) | np.isin(kind, WEIGHTLESS)
        weight = np.where(weightless, 0, ts[dst] - ts[src])
        return Edges(src, dst, weight, kind, owner)


def _nodes(profile: Profile, events: np.ndarray) -> Graph:
    """Start and end nodes of ``events`` (task rows), in time order (starts first at
    one instant, then by row)."""
    tasks = profile.tasks
    ts = np.r_[tasks[events, COLUMN["start_ps"]], tasks[events, COLUMN["end_ps"]]]
    is_end = np.r_[np.zeros(len(events), bool), np.ones(len(events), bool)]
    rows = np.r_[events, events]
    order = np.lexsort((rows, is_end, ts))
    g = Graph(row=rows[order].tolist(), ts=ts[order].tolist(), is_end=is_end[order].tolist())
    for node, (row, end) in enumerate(zip(g.row, g.is_end)):
        (g.end if end else g.start)[row] = node
    return g


def _cpu_events(profile: Profile) -> tuple[np.ndarray, np.ndarray]:
    """(CPU tasks of positive length, the operators and calls among them): HTA leaves
    out zero-length events, which break its call stacks. With a window, HTA's region:
    the events that start in it (an operation is in when its launching call is)."""
    tasks = profile.tasks
    gpu_locs = [loc for loc, name in profile.trace.locations.items() if GPU_LOCATION.match(name)]
    keep = (~np.isin(tasks[:, COLUMN["location"]], gpu_locs)
            & (tasks[:, COLUMN["end_ps"]] > tasks[:, COLUMN["start_ps"]]))
    if profile.window is not None:
        t0, t1 = profile.window
        keep &= (tasks[:, COLUMN["start_ps"]] >= t0) & (tasks[:, COLUMN["start_ps"]] < t1)
    cpu = np.flatnonzero(keep)
    op_kinds = [k for k, c in profile.categories.items() if c.lower() in CPU_OP_CATEGORIES]
    ops = np.union1d(cpu[np.isin(tasks[cpu, COLUMN["kind"]], op_kinds)],
                     np.intersect1d(cpu, profile.calls))
    return cpu, ops


def _call_stacks(profile: Profile, g: Graph, cpu: np.ndarray) -> None:
    """Operator and dependency edges: the depth-first walk of each thread's call stack
    (``cpu``: its tasks; those without nodes, such as user annotations, only nest)."""
    tasks = profile.tasks
    kept = np.zeros(len(tasks), dtype=bool)
    kept[cpu] = True
    # each kept task's nearest kept ancestor (-1: a root), climbing all of them at once
    parent = tasks[:, COLUMN["parent"]]
    parent_row = np.where(parent >= 0, profile.row_of(parent), -1)
    up = parent_row[cpu]
    climbing = up >= 0
    climbing[climbing] = ~kept[up[climbing]]
    while climbing.any():
        up[climbing] = parent_row[up[climbing]]
        climbing &= up >= 0
        climbing[climbing] = ~kept[up[climbing]]
    order = np.lexsort((cpu, tasks[cpu, COLUMN["start_ps"]]))
    children = defaultdict(list)
    for row, parent_of in zip(cpu[order].tolist(), up[order].tolist()):
        children[parent_of].append(row)
    threads = defaultdict(list)
    for root, thread in zip(children[-1], tasks[children[-1], COLUMN["location"]].tolist()):
        threads[thread].append(root)
    enclosing = np.full(len(tasks), -1, dtype=np.int64)
    enclosing[cpu] = up
    # an event is top-level when no enclosing event has nodes (an annotation has none)
    has_node = np.zeros(len(tasks) + 1, dtype=bool)  # the last: -1, no event
    has_node[list(g.start)] = True
    outer = up.copy()
    climbing = (outer >= 0) & ~has_node[outer]
    while climbing.any():
        outer[climbing] = enclosing[outer[climbing]]
        climbing &= (outer >= 0) & ~has_node[outer]
    top = np.zeros(len(tasks), dtype=bool)
    top[cpu] = outer < 0
    blocking = [k for k, name in profile.names.items() if name in BLOCKING]
    blocks = np.isin(tasks[:, COLUMN["kind"]], blocking)
    row, is_end = np.array(g.row, dtype=np.int64), np.array(g.is_end, dtype=bool)
    for roots in threads.values():
        tour = np.array(_tour(g, roots, children), dtype=np.int64)
        src, dst = tour[:-1], tour[1:]
        src_row, dst_row = row[src], row[dst]
        # from a top-level event's end to the next: a dependency; else an operator edge,
        # attributed as HTA does: from a start, to its event; else to an end, to its
        # event; else (an end to a start) to the event enclosing both
        dependency = is_end[src] & top[src_row]
        owner = np.where(~is_end[src], src_row, np.where(is_end[dst], dst_row,
                                                         enclosing[dst_row]))
        g.extend(src, dst, np.where(dependency, EDGE_TYPES.index(DEPENDENCY),
                                    EDGE_TYPES.index(OPERATOR)),
                 np.where(dependency, -1, owner), is_end[dst] & blocks[dst_row])


def _tour(g: Graph, roots: list[int], children: dict) -> list[int]:
    """The nodes of one thread's depth-first walk, in order: enter each event (its start
    node), then its children, then leave it (its end node); events without nodes only
    nest."""
    starts, ends = g.start, g.end
    tour = []
    stack = roots[::-1]  # a row to enter, or ~row to leave
    while stack:
        row = stack.pop()
        if row >= 0:
            stack.append(~row)
            if row in children:
                stack += reversed(children[row])
            node = starts.get(row)
        else:
            node = ends.get(~row)
        if node is not None:
            tour.append(node)
    return tour


def _event_syncs(profile: Profile, launched: np.ndarray) -> tuple[dict, dict]:
    """(sync row -> op row it waits for, op row -> op row it waits for): an event sync
    or stream wait names its ``cudaEventRecord`` by correlation (``details``); the op it
    waits for is the last launched on the recorded stream before the record, and a
    stream wait holds the next op its thread launches on the waiting stream."""
    syncs, ops, tasks = profile.syncs, profile.ops, profile.tasks
    waits = [i for i in range(len(syncs))
             if profile.name(syncs.kind[i]) in ("Event Sync", "Stream Wait Event")]
    if not waits:
        return {}, {}
    details = profile.trace.details(syncs.task[waits])
    records = [k for k, name in profile.names.items() if name == "cudaEventRecord"]
    record_at = {corr: int(profile.row_of(np.array([task]))[0])
                 for task, corr in profile.trace.correlations(records).tolist()}
    call_start = tasks[ops.launch[launched], COLUMN["start_ps"]]
    by_start = launched[np.lexsort((launched, call_start))]
    on_sync, on_op = {}, {}
    for i in waits:
        d = details.get(int(syncs.task[i]), {})
        record = record_at.get(d.get("wait_on_cuda_event_record_corr_id"))
        if record is None:
            continue
        t = tasks[record, COLUMN["start_ps"]]
        before = [r for r in by_start.tolist()
                  if ops.stream[r] == d.get("wait_on_stream") and ops.device[r] == syncs.device[i]
                  and tasks[ops.launch[r], COLUMN["start_ps"]] <= t]
        if not before:
            continue
        if profile.name(syncs.kind[i]) == "Event Sync":
            on_sync[i] = before[-1]
            continue
        call = syncs.launch[i]
        after = [r for r in by_start.tolist()
                 if ops.stream[r] == syncs.stream[i] and ops.device[r] == syncs.device[i]
                 and tasks[ops.launch[r], COLUMN["location"]] == tasks[call, COLUMN["location"]]
                 and tasks[ops.launch[r], COLUMN["start_ps"]] >= tasks[call, COLUMN["start_ps"]]]
        if after:
            on_op[after[0]] = before[-1]
    return on_sync, on_op


def _streams(profile: Profile, g: Graph, launched: np.ndarray, at_call: dict, at_op: dict,
             kernel_kernel_ps: int) -> None:
    """Operation, launch-delay, kernel-kernel and sync edges, walking the operations in
    start order and the synchronizations in end order (a sync overlaps the work it
    waits for)."""
    ops, syncs, tasks = profile.ops, profile.syncs, profile.tasks
    on_sync, on_op = _event_syncs(profile, launched)
    op_row = profile.row_of(ops.task).tolist()
    waits = [i for i in range(len(syncs)) if syncs.launch[i] in g.end]
    items = sorted([(int(ops.start[r]), int(ops.task[r]), 0, r) for r in launched.tolist()]
                   + [(int(syncs.end[i]), int(syncs.task[i]), 1, i) for i in waits])
    last: dict[int, int] = {}  # stream location -> end node of its last operation
    for _, _, is_sync, i in items:
        if is_sync:
            call_end = g.end[syncs.launch[i]]
            name = profile.name(syncs.kind[i])
            if name == "Context Sync":
                for node in list(last.values()):
                    g.add(node, call_end, SYNC)
            elif name == "Stream Sync" and syncs.location[i] in last:
                g.add(last[syncs.location[i]], call_end, SYNC)
            elif i in on_sync and op_row[on_sync[i]] in g.end:
                g.add(g.end[op_row[on_sync[i]]], call_end, SYNC)
            continue
        row = op_row[i]
        start, end, loc = g.start[row], g.end[row], int(ops.location[i])
        g.add(start, end, OPERATOR, row)
        waited = g.end.get(op_row[on_op[i]]) if i in on_op else None
        if waited is not None:
            g.add(waited, start, SYNC)
        launch_ts = tasks[ops.launch[i], COLUMN["start_ps"]]
        prev = last.get(loc)
        if (at_call.get(i) == 1 and at_op.get(i) == 0
                and (prev is None or g.ts[prev] < launch_ts)
                and (waited is None or g.ts[waited] < launch_ts)):
            g.add(g.start[ops.launch[i]], start, LAUNCH)
        elif (prev is not None and (waited is None or g.ts[waited] < g.ts[prev])
              and g.ts[start] - g.ts[prev] < kernel_kernel_ps):
            g.add(prev, start, KERNEL_KERNEL, g.row[prev])
        last[loc] = end


def build(profile: Profile, kernel_kernel_delay_us: int = 1500) -> Graph:
    """HTA's critical-path graph of the profile."""
    cpu, events = _cpu_events(profile)
    ops = profile.ops
    has_call = np.flatnonzero(ops.launch >= 0)
    launched = has_call[np.isin(ops.launch[has_call], events)]
    g = _nodes(profile, np.r_[events, profile.row_of(ops.task[launched])])
    _call_stacks(profile, g, cpu)
    rows, at_call, at_op = queue_at_launch(profile)
    _streams(profile, g, launched, dict(zip(rows.tolist(), at_call.tolist())),
             dict(zip(rows.tolist(), at_op.tolist())), kernel_kernel_delay_us * PS_PER_US)
    return g


def longest_path(g: Graph) -> Edges:
    """The edges of the heaviest path, with networkx' ``dag_longest_path`` choices among
    equals (see the module docstring)."""
    edges = g.edges
    n = len(g.row)
    # each node's edges out and in, in insertion order (the order networkx keeps)
    succ = edges.dst[np.argsort(edges.src, kind="stable")].tolist()
    succ_at = np.r_[0, np.cumsum(np.bincount(edges.src, minlength=n))].tolist()
    pred = np.argsort(edges.dst, kind="stable").tolist()
    indegree = np.bincount(edges.dst, minlength=n)
    pred_at = np.r_[0, np.cumsum(indegree)].tolist()
    indegree = indegree.tolist()
    # Kahn's order by generations (networkx' topological_generations): the order itself
    # is the queue, as each generation joins it while the one before is read; a node's
    # predecessors all come before it, so its heaviest path in is settled as it joins
    src, weight = edges.src.tolist(), edges.weight.tolist()
    length, via = [0] * n, [-1] * n
    order = [v for v in range(n) if not indegree[v]]
    for u in order:
        for v in succ[succ_at[u]:succ_at[u + 1]]:
            indegree[v] -= 1
            if not indegree[v]:
                order.append(v)
                best, through = 0, -1
                for e in pred[pred_at[v]:pred_at[v + 1]]:
                    here = length[src[e]] + weight[e]
                    if through < 0 or here > best:
                        best, through = here, e
                length[v], via[v] = best, through
    if len(order) != n:
        raise ValueError("the critical-path graph has a cycle")
    path = []
    if order:
        heaviest = max(length)
        node = next(v for v in order if length[v] == heaviest)
        while via[node] >= 0:
            path.append(via[node])
            node = src[via[node]]
    return edges.take(np.array(path[::-1], dtype=np.int64))


BOUNDS = ("", "cpu_bound", "gpu_compute_bound", "gpu_communication_bound",
          "gpu_kernel_launch_overhead", "gpu_kernel_kernel_overhead")
"""What an edge of the path is bound by (HTA's words; "" for dependency and sync edges)."""


def _bound_by(profile: Profile, edges: Edges) -> np.ndarray:
    """Per edge, its index in ``BOUNDS``: an operator edge by the event it is attributed
    to (a GPU operation by its class, anything else the CPU), the others by type."""
    by_type = np.array([BOUNDS.index(BOUND_BY.get(t, "")) for t in EDGE_TYPES])
    cls = np.full(len(profile.tasks) + 1, -1, dtype=np.int64)  # the last: owner -1
    cls[profile.row_of(profile.ops.task)] = profile.ops.cls
    owner_cls = cls[edges.owner]
    operator = np.where(owner_cls < 0, BOUNDS.index("cpu_bound"),
                        np.where(owner_cls == COMMUNICATION, BOUNDS.index("gpu_communication_bound"),
                                 BOUNDS.index("gpu_compute_bound")))
    return np.where(edges.type == EDGE_TYPES.index(OPERATOR), operator, by_type[edges.type])


@dataclass
class CriticalPath:
    """The path: its edges, the tasks on it, and each edge's bound (an index in
    ``BOUNDS``)."""

    graph: Graph
    edges: Edges
    bound_by: np.ndarray

    def tasks(self) -> set[int]:
        """Rows (in ``Profile.tasks``) of the events with a node on the path."""
        row = np.array(self.graph.row, dtype=np.int64)
        return set(np.unique(row[np.r_[self.edges.src, self.edges.dst]]).tolist())


def critical_path(profile: Profile, kernel_kernel_delay_us: int = 1500) -> CriticalPath:
    """HTA's lightweight critical path of the whole profile."""
    g = build(profile, kernel_kernel_delay_us)
    edges = longest_path(g)
    return CriticalPath(g, edges, _bound_by(profile, edges))


def _sums(keys: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(distinct keys ascending, the exact int64 sum of ``weights`` per key, the first
    position of each key)."""
    distinct, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    sums = np.zeros(len(distinct), dtype=np.int64)
    np.add.at(sums, inverse, weights)
    return distinct, sums, first


def summary(profile: Profile, path: CriticalPath) -> dict:
    """The report's entry: length, ps and count per edge type and per bound (HTA's
    ``summary``, in ps and shares), and the task most of the path is attributed to."""
    edges = path.edges
    total = int(edges.weight.sum())
    by_type = {t: {"count": int((edges.type == i).sum()),
                   "ps": int(edges.weight[edges.type == i].sum())}
               for i, t in enumerate(EDGE_TYPES)}
    # the bounds with the most time first; among equals, the first met along the path
    bounds, ps, first = _sums(path.bound_by, edges.weight)
    ranked = sorted(zip((-ps).tolist(), first.tolist(), bounds.tolist()))
    out = {"length_ps": total, "events": len(path.tasks()), "edges": by_type,
           "bound_by": {BOUNDS[b] or "dependency": {"ps": -p, "share": -p / total if total else 0.0}
                        for p, _, b in ranked},
           "dominant": None}
    attributed = edges.owner >= 0
    if attributed.any():
        rows, owned, _ = _sums(edges.owner[attributed], edges.weight[attributed])
        at = int(np.argmax(owned))  # the first of the most: the lowest row
        row, tasks = int(rows[at]), profile.tasks
        out["dominant"] = {"task": int(tasks[row, COLUMN["id"]]),
                           "name": profile.name(tasks[row, COLUMN["kind"]]),
                           "loc": profile.location(tasks[row, COLUMN["location"]]),
                           "ps": int(owned[at]), "t0": int(tasks[row, COLUMN["start_ps"]]),
                           "t1": int(tasks[row, COLUMN["end_ps"]])}
    return out


def overlay(profile: Profile, path: CriticalPath) -> tuple[frozenset[int], list[tuple]]:
    """HTA's overlay: the task ids on the path (``args.critical = 1``) and a
    ``critical_path`` flow (src task, dst task, name, {weight, type}) along each path
    edge of the types HTA draws (``SHOWN``)."""
    ids = profile.tasks[:, COLUMN["id"]]
    critical = frozenset(int(ids[r]) for r in path.tasks())
    shown = path.edges.take(np.isin(path.edges.type, [EDGE_TYPES.index(t) for t in SHOWN]))
    flows = [(int(ids[path.graph.row[e.src]]), int(ids[path.graph.row[e.dst]]), "critical_path",
              {"weight": e.weight, "type": e.type}) for e in shown]
    return critical, flows


def export_path(path: str | Path, out: Path, like_hta: bool = False,
                kernel_kernel_delay_us: int = 1500, force: bool = False) -> int:
    """Write the whole profile as Chrome JSON with its critical path overlaid as HTA
    does (``overlay``; the trace's own links stay, as HTA keeps ``ac2g``)."""
    with ProfileTrace(path) as trace:
        profile = load(trace, like_hta=like_hta)
        critical, flows = overlay(profile, critical_path(profile, kernel_kernel_delay_us))
    return export_highlighted(Path(path), out, None, critical, flows, force)
