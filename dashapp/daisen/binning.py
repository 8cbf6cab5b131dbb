"""Exact per-bin sums computed from raw task intervals (the deep-zoom path).

The metric pyramid in the trace stops at a finest level per location. Windows narrower
than that hold few tasks, so the same sums are computed here from the tasks themselves,
with the pyramid's conventions: bins are ``[b * w, (b + 1) * w)`` (half-open, aligned to
t = 0), counts go to the bin holding the event time, and integrals are exact int64
task × ps. Nothing here touches SQL; inputs are numpy int64 arrays.
"""
import numpy as np


def bin_edges(first_bin, nbins, width):
    """The ``nbins + 1`` edges of consecutive bins starting at bin ``first_bin``."""
    return (first_bin + np.arange(nbins + 1, dtype=np.int64)) * width


def interval_integrals(starts, ends, first_bin, nbins, width):
    """∫ (number of intervals [s, e) covering t) dt over each bin, exact in int64.

    Intervals are clipped to the bins' span first, so every product stays within
    (number of intervals) × (span), far from int64 overflow.
    """
    edges = bin_edges(first_bin, nbins, width)
    lo, hi = edges[0], edges[-1]
    s = np.clip(np.asarray(starts, dtype=np.int64), lo, hi) - lo
    e = np.clip(np.asarray(ends, dtype=np.int64), lo, hi) - lo
    rel = edges - lo
    # F(t) = Σ_{s<t} (t - s) - Σ_{e<t} (t - e) is the integral from lo to t.
    return np.diff(_ramp(np.sort(s), rel) - _ramp(np.sort(e), rel))


def _ramp(sorted_times, at):
    prefix = np.concatenate(([0], np.cumsum(sorted_times)))
    k = np.searchsorted(sorted_times, at, side="left")
    return k * at - prefix[k]


def event_counts(times, first_bin, nbins, width, weights=None):
    """Per-bin sum of ``weights`` (default 1) of events at ``times``; others ignored."""
    b = np.asarray(times, dtype=np.int64) // width - first_bin
    keep = (b >= 0) & (b < nbins)
    if weights is None:
        return np.bincount(b[keep], minlength=nbins).astype(np.int64)
    # np.add.at keeps int64 sums exact (bincount would go through float64).
    out = np.zeros(nbins, dtype=np.int64)
    np.add.at(out, b[keep], np.asarray(weights, dtype=np.int64)[keep])
    return out


def union(starts, ends):
    """The union of intervals as disjoint sorted (starts, ends)."""
    starts = np.asarray(starts, dtype=np.int64)
    ends = np.asarray(ends, dtype=np.int64)
    if len(starts) == 0:
        return starts, ends
    order = np.argsort(starts, kind="stable")
    s, e = starts[order], ends[order]
    reach = np.maximum.accumulate(e)
    opens = np.ones(len(s), dtype=bool)
    opens[1:] = s[1:] > reach[:-1]
    first = np.flatnonzero(opens)
    last = np.append(first[1:] - 1, len(s) - 1)
    return s[first], reach[last]
