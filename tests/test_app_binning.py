"""The deep-zoom arithmetic against brute force: exact integer sums over half-open bins."""
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from dashapp.daisen import binning

tasks = st.lists(st.tuples(st.integers(0, 400), st.integers(0, 120)), max_size=40)


def _brute_integral(starts, ends, first, n, width):
    out = []
    for b in range(first, first + n):
        lo, hi = b * width, (b + 1) * width
        out.append(sum(max(0, min(e, hi) - max(s, lo)) for s, e in zip(starts, ends)))
    return out


@settings(max_examples=200, deadline=None)
@given(tasks, st.integers(0, 30), st.integers(1, 12), st.integers(1, 40))
def test_interval_integrals_match_brute_force(data, first, n, width):
    starts = [s for s, _ in data]
    ends = [s + d for s, d in data]
    got = binning.interval_integrals(np.array(starts, dtype=np.int64),
                                     np.array(ends, dtype=np.int64), first, n, width)
    assert got.tolist() == _brute_integral(starts, ends, first, n, width)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 500), max_size=40), st.integers(0, 30), st.integers(1, 12),
       st.integers(1, 40))
def test_event_counts_put_each_event_in_exactly_one_bin(times, first, n, width):
    weights = [t % 7 + 1 for t in times]
    got = binning.event_counts(np.array(times, dtype=np.int64), first, n, width,
                               weights=np.array(weights, dtype=np.int64))
    expected = [sum(w for t, w in zip(times, weights) if b * width <= t < (b + 1) * width)
                for b in range(first, first + n)]
    assert got.tolist() == expected


@settings(max_examples=200, deadline=None)
@given(tasks)
def test_union_covers_exactly_the_busy_time(data):
    starts = np.array([s for s, _ in data], dtype=np.int64)
    ends = np.array([s + d for s, d in data], dtype=np.int64)
    us, ue = binning.union(starts, ends)
    covered = {t for s, e in zip(starts.tolist(), ends.tolist()) for t in range(s, e)}
    assert sum((ue - us).tolist()) == len(covered)
    assert all(ue[i] < us[i + 1] for i in range(len(us) - 1))  # disjoint and sorted


def test_sums_stay_exact_beyond_float_precision():
    # 2**60 ps spans: float64 would round these; int64 arithmetic must not.
    big = 1 << 60
    got = binning.interval_integrals(np.array([big + 1]), np.array([big + 4]), big // 8, 1, 8)
    assert got.tolist() == [3]
    weights = binning.event_counts(np.array([5, 6]), 0, 1, 8,
                                   weights=np.array([(1 << 62) + 1, 1]))
    assert weights.tolist() == [(1 << 62) + 2]
