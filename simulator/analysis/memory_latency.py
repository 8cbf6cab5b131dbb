"""S4, the latency of the CUs' memory requests, hop by hop (why-layer.md §9.1, S4).

A CU's ``ReadReq``/``WriteReq`` ``req_out`` R lasts until its answer arrives; the model
nests the rest inside it: the L1V's ``req_in``, on a miss the L1V's ``req_out`` to an L2
bank with that bank's ``req_in``, on an L2 miss its ``req_out`` to a memory-side cache
slice (MALL, where the GPU has one) and on a miss there to a DRAM channel, each with
its ``req_in``. For each finished R and each hop h it reached:

- **queue@h** = h's ``req_in`` start − the upstream ``req_out`` start (time in h's buffer,
  the ``buffer_ps`` of the metric pyramid);
- **service@h** = h's ``req_in`` duration − its own downstream ``req_out``'s duration
  (a downstream request that outlives the ``req_in``, a write the L2 answered before
  DRAM took it, is not part of R's latency: R stops at h);
- **return@h** = the upstream ``req_out`` end − h's ``req_in`` end (the answer's way back).

These telescope: Σ segments = R's duration for every request, exactly (test). Requests
are classed by the caches' tags: **L1 hit**, **L1 MSHR-hit** (waits for a miss in
flight), **L2 hit**, **L2 MSHR-hit**, **MALL hit**, **MALL MSHR-hit** (where there is
one), **DRAM**, and **write** for stores. The hop with
the largest share of request time is flagged, "queue-dominated" when its queue time
exceeds its service time. Requests count in the window they start in.
"""
from __future__ import annotations

import numpy as np

from .scope import COLUMN, Scope, member

LEVELS = ("L1V", "L2", "MALL", "DRAM")


def hops(scope: Scope) -> tuple[str, ...]:
    """The levels a request passes on the trace's GPU, in order: the memory-side cache
    only where it has one."""
    return tuple(level for level in LEVELS if level == "L1V" or scope.peers[level])


def segment_names(levels: tuple[str, ...]) -> tuple[str, ...]:
    """``queue@L1V``, ``service@L1V``, ``return@L1V``, ... for each of ``levels``."""
    return tuple(f"{part}@{hop}" for hop in levels for part in ("queue", "service", "return"))


def outcome_names(levels: tuple[str, ...]) -> tuple[str, ...]:
    """A request's classes on a GPU of ``levels``: a hit or an MSHR-hit at each cache,
    else DRAM; and stores."""
    caches = [("L1" if level == "L1V" else level) for level in levels[:-1]]
    return (*(f"{cache} {outcome}" for cache in caches for outcome in ("hit", "MSHR-hit")),
            "DRAM", "write")


def request_segments(scope: Scope) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(request task ids, (n, segments) ps per ``segment_names(hops(scope))``, outcome per
    request: its index in ``outcome_names(hops(scope))``) for the CU requests that start
    in the window."""
    scope.require("mem")
    levels = hops(scope)
    tasks = scope.tasks
    ids = tasks[:, COLUMN["id"]]
    start, end = tasks[:, COLUMN["start"]], tasks[:, COLUMN["end"]]
    cu_locations = scope.trace.components.unit("")
    outs = scope.kinds_of(("req_out", "ReadReq"), ("req_out", "WriteReq"))
    ins = scope.kinds_of(("req_in", "ReadReq"), ("req_in", "WriteReq"))
    reads = scope.kinds_of(("req_out", "ReadReq"), ("req_in", "ReadReq"))
    requests = np.flatnonzero(outs & member(tasks[:, COLUMN["location"]], cu_locations)
                              & (start >= scope.lo) & (start < scope.hi))
    # each request's next hop: the child of the same action (a write-back is not the answer)
    down = np.full(len(ids), -1, dtype=np.int64)
    child = np.flatnonzero(outs | ins)
    up = scope.parent_rows[child]
    child, up = child[up >= 0], up[up >= 0]
    same = reads[child] == reads[up]
    down[up[same]] = child[same]
    segments = np.zeros((len(requests), 3 * len(levels)), dtype=np.int64)
    outer = requests
    for h in range(len(levels)):
        inner = np.where(outer >= 0, down[np.maximum(outer, 0)], -1)
        # a hop whose req_in was not recorded: its req_out's span stays with the hop
        # above (all of it, for a request that never reached its L1V), so sums stay exact
        lost = (outer >= 0) & (inner < 0)
        segments[lost, max(3 * h - 1, 2)] += end[outer[lost]] - start[outer[lost]]
        hit = inner >= 0
        o, i = outer[hit], inner[hit]
        below = down[i]
        # a posted write is answered before its downstream request ends: the request's
        # time stops at this hop
        nested = below >= 0
        nested[nested] = end[below[nested]] <= end[i[nested]]
        below = np.where(nested, below, -1)
        below_span = np.where(below >= 0, end[np.maximum(below, 0)] - start[np.maximum(below, 0)], 0)
        segments[hit, 3 * h] = start[i] - start[o]
        segments[hit, 3 * h + 1] = end[i] - start[i] - below_span
        segments[hit, 3 * h + 2] = end[o] - end[i]
        outer = np.full(len(requests), -1, dtype=np.int64)
        outer[hit] = below
    return ids[requests], segments, _outcomes(scope, levels, requests, down, reads)


def _outcomes(scope: Scope, levels: tuple[str, ...], requests: np.ndarray, down: np.ndarray,
              reads: np.ndarray) -> np.ndarray:
    """Each request's class (its index in ``outcome_names(levels)``), from the tags of
    its ``req_in`` at each cache, the first hit deciding."""
    rows, names = scope.trace.tags(scope.kernel)
    tag = np.full(len(scope.tasks) + 1, -1, dtype=np.int64)  # the last entry: no task
    at = scope.positions(rows[:, 0])
    tag[at[at >= 0]] = rows[at >= 0, 1]  # a task's last step wins
    conditions, classes = [~reads[requests]], [len(outcome_names(levels)) - 1]
    req_in = down[requests]  # the L1V's req_in, then each cache's below it
    for cache in range(len(levels) - 1):
        for outcome, name in enumerate(("read-hit", "read-mshr-hit")):
            conditions.append(tag[req_in] == names.get(name, -2))  # -1 indexes the last entry
            classes.append(2 * cache + outcome)
        req_in = np.where(req_in >= 0, down[np.maximum(req_in, 0)], -1)  # its req_out
        req_in = np.where(req_in >= 0, down[np.maximum(req_in, 0)], -1)  # the next req_in
    return np.select(conditions, classes, len(outcome_names(levels)) - 2)


def memory_latency(scope: Scope) -> dict:
    """Mean segments per outcome, total segment time, and the flagged hop."""
    levels = hops(scope)
    names = segment_names(levels)
    _, segments, outcomes = request_segments(scope)
    by_outcome = {}
    for code, name in enumerate(outcome_names(levels)):
        mine = segments[outcomes == code]
        if len(mine):
            by_outcome[name] = {"requests": len(mine),
                                "mean_ps": round(float(mine.sum(axis=1).mean()), 1),
                                "segments_ps": {s: round(float(v), 1)
                                                for s, v in zip(names, mine.mean(axis=0))}}
    totals = {s: int(v) for s, v in zip(names, segments.sum(axis=0))}
    per_hop = {hop: sum(totals[f"{p}@{hop}"] for p in ("queue", "service", "return"))
               for hop in levels}
    top = max(levels, key=lambda hop: per_hop[hop]) if len(segments) else None
    return {"window_ps": [scope.lo, scope.hi], "requests": len(segments),
            "request_time_ps": int(segments.sum()), "segments_ps": totals,
            "by_outcome": by_outcome, "top_hop": top,
            "top_hop_share": round(per_hop[top] / segments.sum(), 3) if top and segments.sum() else None,
            "queue_dominated": bool(top and totals[f"queue@{top}"] > totals[f"service@{top}"])}
