"""Atomic read-modify-write for many lanes at once, in lane order.

When several lanes update one location in the same instruction, the hardware
serialises them in some order; we use lane order (work-item order), so results are
deterministic. Each lane gets the value the location held just before its own
update, as OpenCL's ``atomic_*`` functions return.

Additions (``add``, ``sub``, ``inc``, ``dec``) and ``xchg`` are computed in closed form
with prefix sums over the lanes of each location. The other operations (``min``, ``max``,
the bitwise ones, ``cmpxchg``) run in rounds,
one lane per location per round, so their cost grows with the worst contention.
"""
import numpy as np

_ROUND_OPS = {"min": np.minimum, "max": np.maximum, "and": np.bitwise_and,
              "or": np.bitwise_or, "xor": np.bitwise_xor}


def atomic_update(data, positions, values, op, cmps=None):
    """Apply ``op`` at ``data[positions]`` with ``values``, lane by lane; return the old values.

    ``cmpxchg`` stores a lane's value only where the location holds its ``cmps`` entry."""
    n = len(positions)
    order = np.argsort(positions, kind="stable")
    pos = positions[order]
    val = values[order]
    first = np.r_[True, pos[1:] != pos[:-1]]
    seg = np.cumsum(first) - 1
    starts = np.flatnonzero(first)
    old = np.empty(n, dtype=data.dtype)
    if op in ("add", "sub", "inc", "dec"):
        delta = val.astype(np.int64) * (1 if op in ("add", "inc") else -1)
        before = np.cumsum(delta) - delta
        prior = before - before[starts][seg]            # sum of earlier lanes' deltas here
        initial = data[pos].astype(np.int64)
        old[:] = (initial + prior).astype(data.dtype)    # wraps like 32-bit hardware
        last = np.r_[starts[1:], n] - 1
        data[pos[starts]] = (initial[starts] + prior[last] + delta[last]).astype(data.dtype)
    elif op == "xchg":
        initial = data[pos]
        old[:] = np.where(first, initial, np.roll(val, 1))
        data[pos[np.r_[starts[1:], n] - 1]] = val[np.r_[starts[1:], n] - 1]
    else:
        rank = np.arange(n) - starts[seg]
        expected = cmps[order] if cmps is not None else None
        for r in range(int(rank.max(initial=-1)) + 1):
            take = rank == r                              # at most one lane per location
            p = pos[take]
            old[take] = data[p]
            if op == "cmpxchg":
                data[p] = np.where(data[p] == expected[take], val[take], data[p])
            else:
                data[p] = _ROUND_OPS[op](data[p], val[take])
    result = np.empty(n, dtype=data.dtype)
    result[order] = old
    return result
