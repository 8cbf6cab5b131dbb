"""I2 gap finder and I3 low-utilization windows, per device, as Nsight Systems' rules
``gpu_gaps`` and ``gpu_time_util`` define them (why-layer.md §1 (a), (b); §9.2 I2, I3).

Gaps: the gaps of the union of a device's operations, from its first start to its last
end (the time before the first and after the last is never a gap); a gap shorter than
the noise floor (TraceLens' 5 µs) is noise and not listed; those at least ``gap_us``
long are listed (nsys' own default is 500 ms; 1 ms marks a long gap in nsys-ai).

Low utilization: N equal chunks from the first start to the last end, chunk =
⌈range ÷ N⌉ ps (the last one shorter); in-use = Σ over operations of their overlap with
the chunk ÷ its length (time utilization: with concurrent streams it can pass 100 %);
chunks below the threshold, consecutive ones merged into one window whose in-use is
their length-weighted mean.
"""
from __future__ import annotations

import numpy as np

from ..intervals import complement
from .ops import Profile
from .trace import COLUMN

PS_PER_US = 10 ** 6


def gaps(profile: Profile, noise_us: int, gap_us: int, limit: int = 50) -> list[dict]:
    """Per device: the gaps above the noise floor (count, total), and those at least
    ``gap_us`` long, longest first, with the operations on either side."""
    ops = profile.ops
    out = []
    for device in np.unique(ops.device).tolist():
        on = ops.take(ops.device == device)
        lo, hi = int(on.start.min()), int(on.end.max())
        gs, ge = complement(on.start, on.end, lo, hi)
        length = ge - gs
        real = length >= noise_us * PS_PER_US
        long = np.flatnonzero(length >= gap_us * PS_PER_US)
        long = long[np.lexsort((gs[long], -length[long]))][:limit]
        # the operation that ends a gap's left side, and the one that starts after it
        ends_at = {int(e): i for i, e in sorted(enumerate(on.end.tolist()), key=lambda x: x[1])}
        starts_at = {}
        for i, s in enumerate(on.start.tolist()):
            starts_at.setdefault(int(s), i)
        rows = []
        for g in long.tolist():
            before, after = ends_at[int(gs[g])], starts_at[int(ge[g])]
            call = int(on.launch[after])
            rows.append({"start_ps": int(gs[g]), "duration_ps": int(length[g]),
                         "before": {"task": int(on.task[before]),
                                    "loc": profile.location(on.location[before])},
                         "after": {"task": int(on.task[after]),
                                   "loc": profile.location(on.location[after])},
                         # the CPU thread that launched what ended the gap
                         "thread": None if call < 0 else profile.location(
                             profile.tasks[call, COLUMN["location"]])})
        out.append({"device": device, "gaps": int(real.sum()), "gap_ps": int(length[real].sum()),
                    "noise_gaps": int((~real).sum()), "noise_ps": int(length[~real].sum()),
                    "long_gaps": int((length >= gap_us * PS_PER_US).sum()), "rows": rows})
    return out


def low_utilization(profile: Profile, chunks: int, threshold: float) -> list[dict]:
    """Per device: the windows whose time utilization is below ``threshold`` (a share)."""
    ops = profile.ops
    out = []
    for device in np.unique(ops.device).tolist():
        on = ops.take(ops.device == device)
        lo, hi = int(on.start.min()), int(on.end.max())
        size = -(-(hi - lo) // chunks)
        edges = np.minimum(lo + size * np.arange(chunks + 1, dtype=np.int64), hi)
        c_lo, c_hi = edges[:-1], edges[1:]
        keep = c_hi > c_lo
        c_lo, c_hi = c_lo[keep], c_hi[keep]
        # Σ over operations of the overlap with each chunk: a cumulative busy count
        in_use = _overlap_per_chunk(on.start, on.end, c_lo, c_hi)
        low = in_use < threshold * (c_hi - c_lo)
        windows = []
        for run in np.split(np.flatnonzero(low), np.flatnonzero(np.diff(np.flatnonzero(low)) > 1) + 1):
            if not len(run):
                continue
            t0, t1 = int(c_lo[run[0]]), int(c_hi[run[-1]])
            windows.append({"t0": t0, "t1": t1, "chunks": len(run),
                            "in_use": int(in_use[run].sum()) / (t1 - t0)})
        out.append({"device": device, "chunk_ps": size, "windows": windows})
    return out


def _overlap_per_chunk(starts: np.ndarray, ends: np.ndarray, c_lo: np.ndarray,
                       c_hi: np.ndarray) -> np.ndarray:
    """Σ over intervals of |interval ∩ chunk|, per chunk, exactly: the integral of the
    number of intervals in flight, read at the chunk edges."""
    times = np.r_[starts, ends]
    delta = np.r_[np.ones(len(starts), np.int64), -np.ones(len(ends), np.int64)]
    order = np.argsort(times, kind="stable")
    times, count = times[order], np.cumsum(delta[order])
    area = np.r_[0, np.cumsum(count[:-1] * np.diff(times))]  # integral up to times[i]

    def integral(t: np.ndarray) -> np.ndarray:
        i = np.searchsorted(times, t, side="right") - 1
        i = i.clip(min=0)
        return np.where(t >= times[0], area[i] + count[i] * (t - times[i]), 0)

    return integral(c_hi) - integral(c_lo)
