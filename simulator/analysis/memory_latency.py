"""S4, the latency of the CUs' memory requests, hop by hop (why-layer.md §9.1, S4).

A CU's ``ReadReq``/``WriteReq`` ``req_out`` R lasts until its answer arrives; the model
nests the rest inside it: the L1V's ``req_in``, on a miss the L1V's ``req_out`` to an L2
bank with that bank's ``req_in``, and on an L2 miss its ``req_out`` to a DRAM channel
with the channel's ``req_in``. For each finished R and each hop h it reached:

- **queue@h** = h's ``req_in`` start − the upstream ``req_out`` start (time in h's buffer,
  the ``buffer_ps`` of the metric pyramid);
- **service@h** = h's ``req_in`` duration − its own downstream ``req_out``'s duration
  (a downstream request that outlives the ``req_in``, a write the L2 answered before
  DRAM took it, is not part of R's latency: R stops at h);
- **return@h** = the upstream ``req_out`` end − h's ``req_in`` end (the answer's way back).

These telescope: Σ segments = R's duration for every request, exactly (test). Requests
are classed by the caches' tags: **L1 hit**, **L1 MSHR-hit** (waits for a miss in
flight), **L2 hit**, **L2 MSHR-hit**, **DRAM**, and **write** for stores. The hop with
the largest share of request time is flagged, "queue-dominated" when its queue time
exceeds its service time. Requests count in the window they start in.
"""
from __future__ import annotations

import numpy as np

from .scope import COLUMN, Scope, member

HOPS = ("L1V", "L2", "DRAM")
SEGMENTS = tuple(f"{part}@{hop}" for hop in HOPS for part in ("queue", "service", "return"))
OUTCOMES = ("L1 hit", "L1 MSHR-hit", "L2 hit", "L2 MSHR-hit", "DRAM", "write")


def request_segments(scope: Scope) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(request task ids, (n, len(SEGMENTS)) segment ps, outcome per request: its index
    in ``OUTCOMES``) for the CU requests that start in the window."""
    scope.require("mem")
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
    segments = np.zeros((len(requests), len(SEGMENTS)), dtype=np.int64)
    outer = requests
    for h in range(len(HOPS)):
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
    return ids[requests], segments, _outcomes(scope, requests, down, reads)


def _outcomes(scope: Scope, requests: np.ndarray, down: np.ndarray, reads: np.ndarray) -> np.ndarray:
    """Each request's class (its index in ``OUTCOMES``), from the tags of its L1V and
    L2 ``req_in``."""
    rows, names = scope.trace.tags(scope.kernel)
    tag = np.full(len(scope.tasks) + 1, -1, dtype=np.int64)  # the last entry: no task
    at = scope.positions(rows[:, 0])
    tag[at[at >= 0]] = rows[at >= 0, 1]  # a task's last step wins
    l1 = down[requests]
    l2 = np.where(l1 >= 0, down[np.maximum(l1, 0)], -1)
    l2 = np.where(l2 >= 0, down[np.maximum(l2, 0)], -1)
    l1_tag, l2_tag = tag[l1], tag[l2]  # -1 indexes the last entry

    def named(values: np.ndarray, name: str) -> np.ndarray:
        return values == names.get(name, -2)

    return np.select(
        [~reads[requests], named(l1_tag, "read-hit"), named(l1_tag, "read-mshr-hit"),
         named(l2_tag, "read-hit"), named(l2_tag, "read-mshr-hit")],
        [OUTCOMES.index(name) for name in ("write", "L1 hit", "L1 MSHR-hit", "L2 hit", "L2 MSHR-hit")],
        OUTCOMES.index("DRAM"))


def memory_latency(scope: Scope) -> dict:
    """Mean segments per outcome, total segment time, and the flagged hop."""
    _, segments, outcomes = request_segments(scope)
    by_outcome = {}
    for code, name in enumerate(OUTCOMES):
        mine = segments[outcomes == code]
        if len(mine):
            by_outcome[name] = {"requests": len(mine),
                                "mean_ps": round(float(mine.sum(axis=1).mean()), 1),
                                "segments_ps": {s: round(float(v), 1)
                                                for s, v in zip(SEGMENTS, mine.mean(axis=0))}}
    totals = {s: int(v) for s, v in zip(SEGMENTS, segments.sum(axis=0))}
    per_hop = {hop: sum(totals[f"{p}@{hop}"] for p in ("queue", "service", "return")) for hop in HOPS}
    top = max(HOPS, key=lambda hop: per_hop[hop]) if len(segments) else None
    return {"window_ps": [scope.lo, scope.hi], "requests": len(segments),
            "request_time_ps": int(segments.sum()), "segments_ps": totals,
            "by_outcome": by_outcome, "top_hop": top,
            "top_hop_share": round(per_hop[top] / segments.sum(), 3) if top and segments.sum() else None,
            "queue_dominated": bool(top and totals[f"queue@{top}"] > totals[f"service@{top}"])}
