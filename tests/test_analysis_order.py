"""The analyses' fast orders and step functions give exactly what the plain numpy ones
give, on Hypothesis-made keys and intervals (narrow, wide, negative, tied)."""
import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from simulator.analysis.intervals import step_count
from simulator.analysis.order import grouped_order, stable_order

SPANS = st.sampled_from([3, 1 << 16, 1 << 20, 1 << 40])


@st.composite
def keys(draw, size=None):
    span = draw(SPANS)
    low = draw(st.integers(-5, 1 << 20))
    # a given size of 0 is a size too: both keys of a pair must be as long
    values = draw(st.lists(st.integers(0, span), min_size=size or 0,
                           max_size=60 if size is None else size))
    return np.array(values, dtype=np.int64) + low


@given(keys())
def test_stable_order_is_numpys_stable_argsort(values):
    assert np.array_equal(stable_order(values), np.argsort(values, kind="stable"))


@given(st.integers(0, 60).flatmap(lambda n: st.tuples(keys(n), keys(n))))
def test_grouped_order_is_a_lexsort(pair):
    groups, values = pair
    assert np.array_equal(grouped_order(groups, values), np.lexsort((values, groups)))
    # keys already ascending within groups take the short way, to the same order
    ascending = np.sort(values)
    assert np.array_equal(grouped_order(groups, ascending), np.lexsort((ascending, groups)))


@given(st.lists(st.tuples(st.integers(0, 30), st.integers(0, 30)), max_size=25))
def test_step_count_counts_what_is_in_flight(intervals):
    starts = np.array([a for a, _ in intervals], dtype=np.int64)
    ends = np.array([b for _, b in intervals], dtype=np.int64)
    times, counts = step_count(starts, ends)
    events = sorted({t for a, b in intervals if b > a for t in (a, b)})
    assert times.tolist() == events
    assert counts.tolist() == [sum(a <= t < b for a, b in intervals) for t in events]
