"""How far simulated times are from measured ones: the figures a validation reports.

For rows i with measured time m_i and simulated time s_i (both > 0), and r_i = s_i / m_i:

* WMAPE, the weighted mean absolute percentage error: sum |s_i - m_i| / sum m_i. Each
  row weighs as much as its measured time, so long kernels dominate (MGPUSim's figure).
* the median of |log2 r_i|: a typical row's factor off, whichever way (0.49 is a factor
  of 2^0.49 = 1.4; 0 is exact).
* Spearman's rho of s against m: whether the simulator orders the rows as the hardware
  does (1: the same order). Pearson's correlation of the ranks, tied values taking the
  mean of the ranks they span.
* the slope of each size family (rows of one kernel at several sizes): the
  least-squares slope of log s_i against log m_i over the family's rows. 1 means the
  simulated time grows with the problem as the measured one does; 0.5 that it grows
  half as fast (in log terms) -- a model that misses a cost that grows with size.
  A family with fewer than two distinct measured times has no slope.
"""
import math
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Family:
    name: str
    rows: int
    slope: float | None


@dataclass(frozen=True)
class Agreement:
    rows: int                       # rows with both times
    wmape: float | None             # a fraction (0.16 = 16 %)
    median_abs_log2: float | None
    spearman: float | None
    families: tuple                 # Family, in order of first appearance


def agreement(measured, simulated, families) -> Agreement:
    """The figures of rows with ``measured`` and ``simulated`` times (same unit, > 0)
    and their ``families`` (names), in row order."""
    m = np.asarray(measured, dtype=float)
    s = np.asarray(simulated, dtype=float)
    if m.shape != s.shape or len(families) != len(m):
        raise ValueError("measured, simulated and families must have one entry per row")
    if len(m) == 0:
        return Agreement(0, None, None, None, ())
    if (m <= 0).any() or (s <= 0).any():
        raise ValueError("times must be more than 0")
    grouped = {}
    for i, name in enumerate(families):
        grouped.setdefault(name, []).append(i)
    return Agreement(
        rows=len(m),
        wmape=float(np.abs(s - m).sum() / m.sum()),
        median_abs_log2=float(np.median(np.abs(np.log2(s / m)))),
        spearman=spearman(m, s),
        families=tuple(Family(name, len(rows), slope(m[rows], s[rows]))
                       for name, rows in grouped.items()))


def ranks(values) -> np.ndarray:
    """Ranks 1..n of ``values``; equal values share the mean of the ranks they span."""
    values = np.asarray(values, dtype=float)
    order = np.argsort(values, kind="stable")
    ranked = np.empty(len(values))
    ranked[order] = np.arange(1, len(values) + 1)
    _, group, counts = np.unique(values, return_inverse=True, return_counts=True)
    sums = np.bincount(group, weights=ranked)
    return sums[group] / counts[group]


def spearman(a, b) -> float | None:
    """Spearman's rank correlation of ``a`` and ``b``; None with fewer than two rows or
    when either side has a single value (no order to compare)."""
    if len(a) < 2:
        return None
    ra, rb = ranks(a), ranks(b)
    da, db = ra - ra.mean(), rb - rb.mean()
    scale = math.sqrt(float((da * da).sum() * (db * db).sum()))
    return float((da * db).sum() / scale) if scale else None


def slope(measured, simulated) -> float | None:
    """The least-squares slope of log(simulated) against log(measured); None with fewer
    than two distinct measured times."""
    x = np.log(np.asarray(measured, dtype=float))
    y = np.log(np.asarray(simulated, dtype=float))
    dx = x - x.mean()
    spread = float((dx * dx).sum())
    if len(x) < 2 or spread == 0:
        return None
    return float((dx * (y - y.mean())).sum() / spread)
