"""The up-floating row layout and nesting, checked against their definitions."""
from hypothesis import given, settings
from hypothesis import strategies as st

from dashapp.daisen.placement import BAND_FILL, nested_layout, up_float

# Positive durations: a zero-length task occupies an instant, which half-open overlap
# tests cannot see.
intervals = st.lists(st.tuples(st.integers(0, 200), st.integers(1, 50)), max_size=60).map(
    lambda xs: ([s for s, _ in xs], [s + d for s, d in xs]))


def test_daisen_example():
    # Placed in start order: [0,3)→0, [1,4)→1, [2,5)→2, then both tasks at 5 reuse rows.
    assert up_float([0, 1, 2, 5, 5], [3, 4, 5, 6, 9]) == [0, 1, 2, 1, 0]


def test_touching_tasks_share_a_row():
    assert up_float([0, 10, 20], [10, 20, 30]) == [0, 0, 0]


@settings(max_examples=200, deadline=None)
@given(intervals)
def test_rows_never_overlap_and_each_task_floats_up(data):
    starts, ends = data
    rows = up_float(starts, ends)
    order = sorted(range(len(starts)), key=lambda i: (starts[i], -ends[i], i))
    placed = []
    for i in order:
        # No earlier-placed task in the same row overlaps this one ...
        assert all(not (starts[j] < ends[i] and starts[i] < ends[j])
                   for j in placed if rows[j] == rows[i])
        # ... and every lower row is blocked by an overlapping earlier task (up-floating).
        for r in range(rows[i]):
            assert any(rows[j] == r and starts[j] < ends[i] and starts[i] < ends[j]
                       for j in placed)
        placed.append(i)


@settings(max_examples=100, deadline=None)
@given(intervals)
def test_row_count_is_the_peak_concurrency(data):
    starts, ends = data
    rows = up_float(starts, ends)
    peak = 0
    for t in set(starts):
        peak = max(peak, sum(1 for s, e in zip(starts, ends) if s <= t < e))
    assert (max(rows) + 1 if rows else 0) == peak


def test_children_nest_inside_their_parent_band():
    keys = [1, 2, 3, 4, 5]
    parents = [None, 1, 1, None, 99]  # 5's parent is elsewhere: it is a root here
    starts = [0, 1, 2, 0, 20]
    ends = [10, 3, 4, 30, 25]
    p = nested_layout(keys, parents, starts, ends)
    # Equal starts: the longer task goes first, so 4 takes row 0 and 1 takes row 1;
    # 5 floats up into row 1 once task 1 has ended.
    assert (p[4].y0, p[1].y0, p[1].y1, p[1].depth, p[5].y0) == (0.0, 1.0, 2.0, 0, 1.0)
    pad = (1 - BAND_FILL) / 2
    for child in (2, 3):
        assert p[child].depth == 1
        assert p[1].y0 + pad - 1e-9 <= p[child].y0 < p[child].y1 <= p[1].y1 - pad + 1e-9
    # Overlapping siblings get distinct rows of equal height inside the band.
    assert p[2].y1 <= p[3].y0 + 1e-9
    assert abs((p[2].y1 - p[2].y0) - (p[3].y1 - p[3].y0)) < 1e-9


def test_a_parent_cycle_does_not_lose_tasks():
    p = nested_layout([1, 2], [2, 1], [0, 0], [5, 5])
    assert set(p) == {1, 2}


def test_thin_bars_in_a_row_merge_and_nothing_is_dropped():
    from collections import namedtuple

    from dashapp.daisen.placement import merge_thin

    T = namedtuple("T", "id kind start_ps end_ps")
    # Row 0: four 1-ps tasks close together, then a wide one; another kind in between.
    tasks = [T(1, 0, 0, 1), T(2, 0, 2, 3), T(3, 0, 4, 5), T(4, 1, 6, 7), T(5, 0, 8, 9),
             T(6, 0, 10, 200), T(7, 0, 300, 301)]
    placements = nested_layout([t.id for t in tasks], [None] * 7, [t.start_ps for t in tasks],
                               [t.end_ps for t in tasks])
    singles, aggregates = merge_thin(tasks, placements, pixel_ps=4)
    assert sum(a.count for a in aggregates) + len(singles) == len(tasks)
    assert [(a.start_ps, a.end_ps, a.count, a.kind) for a in aggregates] == [(0, 9, 4, 0)]
    assert sorted(t.id for t in singles) == [4, 6, 7]  # other kind, wide, and far away
    assert merge_thin(tasks, placements, pixel_ps=1) == (sorted(
        tasks, key=lambda t: (placements[t.id].y0, t.kind, t.start_ps)), [])
