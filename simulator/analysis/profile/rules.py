"""I6, the four CUDA anti-pattern rules of Nsight Systems' Expert System
(``nsys analyze``: ``cuda_memcpy_async``, ``cuda_memcpy_sync``, ``cuda_memset_sync``,
``cuda_api_sync``; why-layer.md §1), re-implemented from their documented definitions:

- pageable async copy: a copy from or to pageable memory (``src kind``/``dst kind``)
  whose call is ``cudaMemcpy*Async``;
- synchronous copy: a copy whose call is ``cudaMemcpy*`` without ``Async``, except copies
  within one device (DtoD) and host-to-device copies of at most 64 KB;
- synchronous memset: a memset on pinned or managed memory whose call is ``cudaMemset*``
  without ``async``;
- synchronization calls: ``cudaDeviceSynchronize*`` and ``cudaStreamSynchronize*``.

Each rule gives its rows (the operation or call, its duration and start), longest first,
the first ``rows`` of them, and the count and total of all.
"""
from __future__ import annotations

import re

import numpy as np

from .ops import COPY, MEMSET, Profile
from .trace import COLUMN

SYNC_COPY_EXEMPT_BYTES = 64 * 1024
ASYNC_COPY = re.compile(r"^cudaMemcpy.*Async", re.I)
SYNC_COPY = re.compile(r"^cudaMemcpy(?!.*Async)", re.I)
SYNC_MEMSET = re.compile(r"^cudaMemset(?!.*async)", re.I)
SYNC_API = re.compile(r"^cudaDeviceSynchronize|^cudaStreamSynchronize")
PINNED_OR_MANAGED = {"Pinned", "Managed"}


def _row(profile: Profile, task: int, loc: int, start: int, end: int, thread: int | None,
         **extra) -> dict:
    row = {"task": int(task), "loc": profile.location(loc), "start_ps": int(start),
           "duration_ps": int(end - start), **extra}
    if thread is not None:
        row["thread"] = profile.location(thread)
    return row


def _rule(name: str, rows: list[dict], limit: int) -> dict:
    rows.sort(key=lambda r: (-r["duration_ps"], r["start_ps"]))
    return {"rule": name, "count": len(rows), "total_ps": sum(r["duration_ps"] for r in rows),
            "rows": rows[:limit]}


def anti_patterns(profile: Profile, limit: int = 50) -> list[dict]:
    """The four rules, each {"rule", "count", "total_ps", "rows"}."""
    ops, tasks = profile.ops, profile.tasks
    memory = np.flatnonzero(np.isin(ops.category, [COPY, MEMSET]) & (ops.launch >= 0))
    details = profile.trace.details(ops.task[memory])
    pageable, sync_copy, sync_memset = [], [], []
    for i in memory.tolist():
        call = int(ops.launch[i])
        api = profile.name(tasks[call, COLUMN["kind"]])
        d = details.get(int(ops.task[i]), {})
        row = _row(profile, ops.task[i], ops.location[i], ops.start[i], ops.end[i],
                   tasks[call, COLUMN["location"]], api=api, call=int(tasks[call, COLUMN["id"]]),
                   bytes=d.get("bytes"))
        if ops.category[i] == COPY:
            kinds = (d.get("src kind"), d.get("dst kind"))
            if ASYNC_COPY.match(api) and "Pageable" in kinds:
                pageable.append({**row, "src_kind": kinds[0], "dst_kind": kinds[1]})
            elif SYNC_COPY.match(api) and not _exempt(d):
                sync_copy.append({**row, "src_kind": kinds[0], "dst_kind": kinds[1]})
        elif SYNC_MEMSET.match(api) and d.get("memory kind") in PINNED_OR_MANAGED:
            sync_memset.append({**row, "memory_kind": d.get("memory kind")})
    sync_kinds = [k for k, name in profile.names.items() if SYNC_API.match(name)]
    calls = profile.calls[np.isin(tasks[profile.calls, COLUMN["kind"]], sync_kinds)]
    sync_calls = [_row(profile, tasks[c, COLUMN["id"]], tasks[c, COLUMN["location"]],
                       tasks[c, COLUMN["start_ps"]], tasks[c, COLUMN["end_ps"]], None,
                       api=profile.name(tasks[c, COLUMN["kind"]])) for c in calls.tolist()]
    return [_rule("cuda_memcpy_async", pageable, limit), _rule("cuda_memcpy_sync", sync_copy, limit),
            _rule("cuda_memset_sync", sync_memset, limit), _rule("cuda_api_sync", sync_calls, limit)]


def _exempt(details: dict) -> bool:
    """A copy the synchronous-copy rule lets pass: within one device, or host to device
    of at most 64 KB."""
    kind = details.get("kind") or ""
    small = (details.get("bytes") or 0) <= SYNC_COPY_EXEMPT_BYTES
    return kind in ("DtoD", "PtoP") or (kind == "HtoD" and small)
