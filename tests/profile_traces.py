"""Small hand-written Kineto traces for the profile analyses, with answers known by
construction: GPU operations on streams, each launched by a runtime call (correlation
ids and ac2g flows as PyTorch writes them), plus CPU ops on the launching thread."""
from __future__ import annotations

import json
from pathlib import Path

from simulator.tracing.importers import import_trace

PID, TID = 100, 100


def kineto(path: Path, ops: list[dict], cpu: list[dict] = (), extra: list[dict] = ()) -> Path:
    """Write and import a trace. ``ops``: {"name", "ts", "dur", "stream", "cat" (kernel),
    "launch": (ts, dur) of its call or None, "call" (cudaLaunchKernel), "tid" of the call
    (TID)}; ``cpu``: {"name", "ts", "dur", "cat" (cpu_op), "tid" (TID)}, CPU events, or
    GPU ones with a "stream"; ``extra``: events written as they are (counters). Times in
    µs (exact decimals)."""
    events = [{"ph": "M", "name": "process_name", "pid": 0, "args": {"name": "GPU 0"}}]
    for i, op in enumerate(ops, 1):
        args = {"device": 0, "stream": op["stream"], "correlation": i}
        events.append({"ph": "X", "cat": op.get("cat", "kernel"), "name": op["name"], "pid": 0,
                       "tid": op["stream"], "ts": op["ts"], "dur": op["dur"], "args": args})
        if op.get("launch"):
            ts, dur = op["launch"]
            events += [{"ph": "X", "cat": "cuda_runtime", "name": op.get("call", "cudaLaunchKernel"),
                        "pid": PID, "tid": op.get("tid", TID), "ts": ts, "dur": dur,
                        "args": {"correlation": i}},
                       {"ph": "s", "cat": "ac2g", "name": "ac2g", "id": i, "pid": PID,
                        "tid": op.get("tid", TID), "ts": ts},
                       {"ph": "f", "cat": "ac2g", "name": "ac2g", "id": i, "pid": 0,
                        "tid": op["stream"], "ts": op["ts"], "bp": "e"}]
    for c in cpu:
        where = {"pid": 0, "tid": c["stream"]} if "stream" in c else {"pid": PID,
                                                                     "tid": c.get("tid", TID)}
        events.append({"ph": "X", "cat": c.get("cat", "cpu_op"), "name": c["name"], **where,
                       "ts": c["ts"], "dur": c["dur"]})
    source = path.with_suffix(".json")
    source.write_text(json.dumps({"traceEvents": events + list(extra)}))
    out = path.with_suffix(".sqlite")
    import_trace(source, out, show_progress=False)
    return out
