"""Nesting on tracks (Chrome slices): the C sweep does what its Python reference does,
block by block, on any tasks and flow points."""
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from simulator import build

IMPLEMENTATIONS = [build.module("simulator.tracing.importers._nesting", name).TrackSweep
                   for name in build.available_builds()]


def _sweep(sweep_class, tasks, enclosing, following, block):
    sweep = sweep_class(enclosing, following)
    nest, bound = [], []
    for i in range(0, len(tasks), block):
        n, b = sweep.feed(np.ascontiguousarray(tasks[i:i + block]))
        nest += n.tolist()
        bound += b.tolist()
    return nest, bound + sweep.finish().tolist()


def test_slices_nest_on_their_track_and_points_bind_to_slices():
    # track 0: a [0, 100) holds b [10, 50) holds c [20, 30); d [60, 70) in a; e [90, 120)
    # overlaps a's end, so it is no child; track 1: f names a parent of its own (not free).
    tasks = np.array([[1, 0, 0, 100, 1], [2, 0, 10, 50, 1], [3, 0, 20, 30, 1], [4, 0, 60, 70, 1],
                      [5, 0, 90, 120, 1], [6, 1, 0, 10, 1], [7, 1, 2, 5, 0]], dtype=np.int64)
    enclosing = np.array([[0, 25, 100], [0, 55, 101], [1, 50, 102], [2, 1, 103]], dtype=np.int64)
    following = np.array([[0, 55, 200], [1, 1, 201], [1, 99, 202]], dtype=np.int64)
    for sweep_class in IMPLEMENTATIONS:
        nest, bound = _sweep(sweep_class, tasks, enclosing, following, 3)
        assert nest == [[2, 1, 0], [3, 2, 10], [4, 1, 0]]
        # 25 is in c (innermost), 55 in a only; on track 1 at 50 nothing encloses; a point
        # on a track without slices binds to nothing. A finish binds to the next slice.
        assert sorted(bound) == [[100, 3], [101, 1], [200, 4], [201, 7]]


tracks = st.lists(st.tuples(st.integers(0, 3), st.integers(0, 50), st.integers(0, 30), st.booleans()),
                  max_size=60)
points = st.lists(st.tuples(st.integers(0, 4), st.integers(-5, 90)), max_size=20)


@settings(max_examples=200, deadline=None)
@given(tasks=tracks, enclosing=points, following=points, block=st.integers(1, 7))
def test_the_builds_agree_block_by_block(tasks, enclosing, following, block):
    rows = sorted(((track, start, -(start + length), seq, free)
                   for seq, (track, start, length, free) in enumerate(tasks, 1)))
    table = np.array([[seq, track, start, -neg_end, int(free)] for track, start, neg_end, seq, free
                      in rows], dtype=np.int64).reshape(-1, 5)
    enc = np.array(sorted((t, time, 1000 + i) for i, (t, time) in enumerate(enclosing)),
                   dtype=np.int64).reshape(-1, 3)
    fol = np.array(sorted((t, time, 2000 + i) for i, (t, time) in enumerate(following)),
                   dtype=np.int64).reshape(-1, 3)
    results = [_sweep(sweep_class, table, enc, fol, block) for sweep_class in IMPLEMENTATIONS]
    whole = _sweep(IMPLEMENTATIONS[0], table, enc, fol, max(1, len(table)))
    for result in results:
        assert result == whole
