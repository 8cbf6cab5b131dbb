"""The pyramid built while a run is written equals the one built from scratch.

Runs are random task trees driven through the real tracers into a real writer, in
small batches (so tasks outlive many flushes and are reported open), and are cut off
at a random point like a run stopped by Ctrl-C. The file's pyramid is compared with
``pyramid.py``'s reference over the file's own tasks, at the levels the file chose.
"""
import contextlib
import functools
import sqlite3

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from simulator.tracing import PyTracer, Tracer, TraceWriter, pyramid, pyramid_build
from simulator.tracing.pyramid_build import IncrementalPyramid

pytestmark = pytest.mark.skipif(IncrementalPyramid is None, reason="needs the compiled builder")

CATEGORIES = ("req_out", "req_in", "inst", "wavefront")


def reference(db):
    """(metric_bin rows, metric_kind_bin rows) by the numpy reference, at the file's levels."""
    cols = pyramid.read_columns(db)
    ids, parents, kinds, locs, starts, ends = cols.T
    start_by_id = np.full(int(ids.max()) + 1, -1, dtype=np.int64)
    start_by_id[ids] = starts
    parent_starts = np.where(parents >= 0, start_by_id[np.maximum(parents, 0)], -1)
    categories = dict(db.execute("SELECT id, category FROM kind"))
    req_in = np.isin(kinds, [k for k, c in categories.items() if c == "req_in"])
    req_out = np.isin(kinds, [k for k, c in categories.items() if c == "req_out"])
    levels = dict(db.execute("SELECT id, pyramid_min_level FROM location"))
    metric, kind = [], []
    for loc in np.unique(locs).tolist():
        sel = locs == loc
        level0 = levels[loc]
        for level, lo, columns, k_started, k_ps in pyramid.location_levels(
                starts[sel], ends[sel], kinds[sel], parent_starts[sel], req_in[sel], req_out[sel],
                1, level0):
            metric.append(pyramid._rows(loc, level, lo, columns))
            if level >= level0 + pyramid.KIND_LEVEL_OFFSET:
                kind.extend(pyramid._kind_rows(loc, level, lo, k_started, k_ps))
    metric = np.concatenate(metric)
    kind = np.concatenate(kind) if kind else np.zeros((0, 6), dtype=np.int64)
    return (sorted(map(tuple, metric.tolist())), sorted(map(tuple, kind.tolist())))


def stored(db):
    return (sorted(db.execute("SELECT * FROM metric_bin").fetchall()),
            sorted(db.execute("SELECT * FROM metric_kind_bin").fetchall()))


def check_coarse_bins_are_sums(db):
    rows = db.execute("SELECT location, level, bin, req_in_started, req_in_ended,"
                      " req_in_latency_ps, task_ps, buffer_ps, req_out_ps, busy_ps"
                      " FROM metric_bin").fetchall()
    bins = {(r[0], r[1], r[2]): np.array(r[3:]) for r in rows}
    zero = np.zeros(7, dtype=np.int64)
    for (loc, level, b), values in bins.items():
        children = [(loc, level - 1, 2 * b), (loc, level - 1, 2 * b + 1)]
        if any(c in bins for c in children):
            assert (bins.get(children[0], zero) + bins.get(children[1], zero) == values).all()


def assert_exact(path):
    """The file's pyramid is the reference's, and each coarse bin the sum of its halves."""
    with sqlite3.connect(path) as db:
        if db.execute("SELECT count(*) FROM task").fetchone()[0] == 0:
            return
        assert stored(db) == reference(db)
        check_coarse_bins_are_sums(db)


def drive(tracer, steps, stop, now=0):
    """Play ``steps`` (random choices) on ``tracer`` in time order from ``now``; stop early
    at ``stop``."""
    kinds = {c: tracer.kind(c, c.upper()) for c in CATEGORIES}
    locations = [tracer.location(f"GPU.L{i}") for i in range(4)]
    open_tasks = []  # (key, category, start)
    for i, (advance, action, pick, loc) in enumerate(steps):
        if i == stop:
            break
        now += advance
        if action == "end" and open_tasks:
            key, category, start = open_tasks.pop(pick % len(open_tasks))
            tracer.end_task(key, max(now, start))
            continue
        parents = [t for t in open_tasks if t[1] == "req_out"]
        if action == "start_req_in" and parents:
            parent, category = parents[pick % len(parents)][0], "req_in"
        else:
            parent = open_tasks[pick % len(open_tasks)][0] if open_tasks and pick % 3 else -1
            category = CATEGORIES[pick % len(CATEGORIES)]
            if category == "req_in":
                category = "inst"
        start = now + (pick % 4 if category != "req_in" else 0)  # some start a little ahead
        key = tracer.start_task(parent, kinds[category], locations[loc], start)
        open_tasks.append((key, category, start))
    return now


steps_strategy = st.lists(
    st.tuples(st.integers(0, 40), st.sampled_from(["start", "start_req_in", "end", "end"]),
              st.integers(0, 1000), st.integers(0, 3)),
    min_size=1, max_size=300)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=steps_strategy, stop=st.integers(0, 300), batch=st.integers(1, 40),
       python=st.booleans(), hold_rows=st.sampled_from([0, 5, pyramid_build.HOLD_ROWS]))
def test_the_pyramid_written_as_the_run_goes_equals_the_one_from_scratch(
        tmp_path, monkeypatch, steps, stop, batch, python, hold_rows):
    path = tmp_path / "live.sqlite"
    with monkeypatch.context() as patch:  # rows written each batch, a few at a time, or at the end
        patch.setattr(pyramid_build.LivePyramid, "hold_rows", hold_rows)
        writer = TraceWriter(path, command="test")
        tracer = (PyTracer if python else Tracer)(writer, batch_size=batch)
        now = drive(tracer, steps, stop)
        tracer.close(now)  # a run stopped at `stop`: open tasks are flagged and written
        writer.finalize(completed=stop >= len(steps))
        writer.close()
    assert_exact(path)


def _bins_written(path):
    with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as db:
        return db.execute("SELECT count(*) FROM metric_bin").fetchone()[0]


def _serial_run(tracer, location, kind, tasks, start=0):
    """``tasks`` back-to-back tasks of 10 ticks at one location; returns the end."""
    for i in range(tasks):
        tracer.end_task(tracer.start_task(-1, kind, location, start + 10 * i), start + 10 * i + 10)
    return start + 10 * tasks


@pytest.mark.parametrize("hold_rows, hold_seconds, seen", [
    (1 << 30, 3600.0, False),  # held: nothing until finalize
    (1 << 30, 0.0, True),  # a running trace's viewer waits at most hold_seconds
    (1, 3600.0, True),  # enough rows held: written
])
def test_final_bins_reach_the_file_after_enough_rows_or_time(tmp_path, monkeypatch, hold_rows,
                                                             hold_seconds, seen):
    monkeypatch.setattr(pyramid_build.LivePyramid, "hold_rows", hold_rows)
    monkeypatch.setattr(pyramid_build.LivePyramid, "hold_seconds", hold_seconds)
    path = tmp_path / "live.sqlite"
    writer = TraceWriter(path, command="test")
    tracer = Tracer(writer, batch_size=64)
    location, kind = tracer.location("GPU.CU[0]"), tracer.kind("wavefront", "run")
    end = _serial_run(tracer, location, kind, 64 * 8)  # eight batches: the frontier moves
    tracer.flush()
    assert (_bins_written(path) > 0) == seen
    tracer.close(end)
    writer.finalize(completed=True)
    writer.close()
    assert _bins_written(path) > 0


@settings(max_examples=60, deadline=None)
@given(steps=steps_strategy, batch=st.integers(1, 30), seed=st.integers(0, 2**16))
def test_rows_in_any_order_give_the_same_pyramid_or_a_rebuild(tmp_path_factory, steps, batch, seed):
    """The same tasks delivered out of time order, with frontiers pushed too far: the
    locations hit behind their frontier are rebuilt from the file, and the result is
    still exact."""
    path = tmp_path_factory.mktemp("shuffled") / "t.sqlite"
    rows = []

    class Keep:
        def write_batch(self, tasks, details, tags, locations, kinds, tag_names):
            rows.append((tasks.copy(), list(locations), list(kinds)))

    tracer = PyTracer(Keep(), batch_size=1 << 30)
    now = drive(tracer, steps, len(steps))
    tracer.close(now)
    tasks, locations, kinds = rows[0]
    if not len(tasks):
        return
    rng = np.random.default_rng(seed)
    tasks = tasks[rng.permutation(len(tasks))]
    writer = TraceWriter(path, command="test")
    writer.write_batch(tasks[:0], [], np.empty((0, 3), dtype=np.int64), locations, kinds, [])
    for part in np.array_split(tasks, max(1, len(tasks) // batch)):
        writer.write_batch(part, [], np.empty((0, 3), dtype=np.int64), [], [], [])
    writer.finalize(completed=True)
    writer.close()
    with sqlite3.connect(path) as db:
        assert stored(db) == reference(db)


def test_a_reopened_trace_is_rebuilt_exactly(tmp_path):
    path = tmp_path / "r.sqlite"
    writer = TraceWriter(path, command="test")
    tracer = Tracer(writer, batch_size=7)
    rng = np.random.default_rng(3)
    steps = [(int(rng.integers(0, 30)), str(rng.choice(["start", "start_req_in", "end", "end"])),
              int(rng.integers(0, 1000)), int(rng.integers(0, 4))) for _ in range(2000)]
    tracer.close(drive(tracer, steps, len(steps)))
    writer.finalize(completed=True)
    writer.close()
    with sqlite3.connect(path) as db:
        live = stored(db)
    again = TraceWriter.reopen(path)
    again.finalize(completed=True)  # from the task table, levels by the final counts
    again.close()
    with sqlite3.connect(path) as db:
        assert stored(db) == reference(db)
        rebuilt = stored(db)
        check_coarse_bins_are_sums(db)
    # Both are exact: wherever they store the same bin, it holds the same sums.
    common = {r[:3]: r for r in live[0]}.keys() & {r[:3]: r for r in rebuilt[0]}.keys()
    assert common
    assert {r for r in live[0] if r[:3] in common} == {r for r in rebuilt[0] if r[:3] in common}


def test_a_location_whose_sample_came_early_is_coarsened_not_rebuilt(tmp_path, monkeypatch):
    """A command processor: hundreds of short requests at the start (the sample its finest
    level is chosen from), then only its kernel in flight while the rest of the GPU works
    for a long time. Its bins are coarsened as the run goes (before: marked dirty and
    rebuilt from the task table at finalize), and the pyramid is still exact."""
    def no_rebuild(*args, **kwargs):
        raise AssertionError("a location was rebuilt from the task table")

    monkeypatch.setattr(pyramid_build, "rebuild", no_rebuild)
    path = tmp_path / "cp.sqlite"
    writer = TraceWriter(path, command="test")
    tracer = Tracer(writer, batch_size=256)
    cp, cu = tracer.location("GPU.CommandProcessor"), tracer.location("GPU.CU[0]")
    kernel_kind, request = tracer.kind("kernel", "k"), tracer.kind("req_out", "MapWGReq")
    work = tracer.kind("wavefront", "run")
    kernel = tracer.start_task(-1, kernel_kind, cp, 0)
    for i in range(400):
        tracer.end_task(tracer.start_task(kernel, request, cp, 2 * i), 2 * i + 3)
    _serial_run(tracer, cu, work, 10_000, start=1000)
    end = _serial_run(tracer, cu, work, 10_000, start=10**7) + 7  # an idle stretch between
    tracer.end_task(kernel, end)
    tracer.close(end)
    sampled = pyramid.min_level(256, 0, 2 * 255 + 3, 1)
    writer.finalize(completed=True)
    writer.close()
    with sqlite3.connect(path) as db:
        assert stored(db) == reference(db)
        check_coarse_bins_are_sums(db)
        level, = db.execute("SELECT pyramid_min_level FROM location WHERE id = ?", (cp,)).fetchone()
        assert level > sampled
        # about as many finest bins as the limit allows, not one per sampled level-0 width
        finest = db.execute("SELECT count(*) FROM metric_bin WHERE location = ? AND level = ?",
                            (cp, level)).fetchone()[0]
        assert finest <= 2 * 401 + 4096


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=st.lists(st.tuples(st.sampled_from([0, 1, 7, 40, 3000, 600_000]),
                                st.sampled_from(["start", "start_req_in", "end"]),
                                st.integers(0, 1000), st.integers(0, 3)), min_size=1, max_size=200),
       batch=st.integers(1, 20))
def test_coarsened_locations_keep_the_pyramid_exact(tmp_path, monkeypatch, steps, batch):
    """Levels chosen from a first burst of short tasks (a sample of 4), then long
    stretches with tasks in flight: locations coarsen, some several times and with
    events in the bin they coarsen at, and the pyramid still equals the reference at the
    levels they end at."""
    monkeypatch.setattr(pyramid_build, "IncrementalPyramid",
                        functools.partial(IncrementalPyramid, sample=4))
    path = tmp_path / "coarse.sqlite"
    writer = TraceWriter(path, command="test")
    tracer = Tracer(writer, batch_size=batch)
    kind = tracer.kind("inst", "INST")
    for i in range(4):
        _serial_run(tracer, tracer.location(f"GPU.L{i}"), kind, 8)
    tracer.flush()  # the sample: each location's finest level is chosen from these
    tracer.close(drive(tracer, steps, len(steps), now=100))
    writer.finalize(completed=True)
    writer.close()
    assert_exact(path)


def _long_split(durations, batch=4096):
    """(short_duration_ps, listed durations, list bytes held) of one location's tasks,
    back to back, fed to the builder in batches."""
    builder = IncrementalPyramid(base=1)
    builder.set_kind(0, pyramid_build.OTHER)
    ends = np.cumsum(durations)
    starts = ends - durations
    held = 0
    for at in range(0, len(durations), batch):
        part = slice(at, at + batch)
        n = len(durations[part])
        rows = np.column_stack([np.arange(at, at + n), np.full(n, -1), np.zeros(n), np.zeros(n),
                                starts[part], ends[part]]).astype(np.int64)
        builder.add(np.ascontiguousarray(rows), np.full(n, -1, dtype=np.int64))
        builder.advance(int(ends[part][-1]))
        held = max(held, builder.held_bytes()["long"])
    short, long_rows = builder.finish()[0][3], builder.finish()[0][7]
    return short, sorted(end - start for _, start, end in long_rows), held


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_long_tasks_are_the_longest_and_bound_the_rest(seed):
    """Each task left out of the list lasts at most ``short``, each listed one longer;
    the few spanning the run are listed, and no more than ``pyramid.split_long`` lists
    (the builder sees the count grow, so its bound may sit above the reference's)."""
    rng = np.random.default_rng(seed)
    durations = rng.permutation(np.arange(1, 20_001, dtype=np.int64) * 3)
    spanning = rng.choice(len(durations), 5, replace=False)
    durations[spanning] += 10**9
    short, listed, _ = _long_split(durations)
    ends = np.cumsum(durations)
    want_short, want = pyramid.split_long(np.arange(len(durations)), ends - durations, ends)
    assert short >= want_short
    assert listed == sorted(durations[durations > short].tolist())
    assert set(durations[spanning].tolist()) <= set(listed)
    assert len(listed) <= len(want)


def test_tied_durations_keep_the_long_list_small():
    """200k tasks of one fixed latency and a few long ones: every task left out lasts at
    most ``short``, every one listed longer, and the list stays a small share."""
    rng = np.random.default_rng(0)
    durations = np.full(200_000, 40, dtype=np.int64)
    durations[rng.integers(0, len(durations), 30_000)] = 41  # ties at the cut too
    durations[rng.integers(0, len(durations), 20)] = 10**8
    short, listed, held = _long_split(durations)
    assert short == 41
    assert listed == [10**8] * len(listed) and 1 <= len(listed) <= 20
    assert held < 64 * 1024  # the tasks are 6.4 MB as 32-byte rows


def test_the_long_list_is_capped_so_a_location_holds_the_same_at_any_size():
    rng = np.random.default_rng(1)
    held = {}
    for n in (100_000, 400_000):
        durations = rng.permutation(np.arange(1, n + 1, dtype=np.int64))
        durations[rng.integers(0, n, 3)] = 10**12  # spanning the run
        short, listed, held[n] = _long_split(durations, batch=65_536)
        assert 3 <= len(listed) <= pyramid.LONG_MAX
        assert listed == sorted(durations[durations > short].tolist())
    # At most 2 (2 LONG_MAX + 2) + 64 candidates of 32 bytes, in vectors of at most
    # twice that capacity, at any count.
    bound = 32 * 2 * (2 * (2 * pyramid.LONG_MAX + 2) + 64)
    assert max(held.values()) <= bound
