"""The metric pyramid against brute-force definitions of DESIGN.md's metrics."""
import sqlite3

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from simulator.tracing import NO_TASK, PyTracer, TraceWriter, pyramid
from simulator.tracing.pyramid import interval_integral, merge_intervals


def _overlap(s, e, b0, b1):
    return max(0, min(e, b1) - max(s, b0))


def _brute_integral(intervals, width, lo, nbins):
    return [sum(_overlap(s, e, (lo + i) * width, (lo + i + 1) * width) for s, e in intervals)
            for i in range(nbins)]


intervals_strategy = st.lists(
    st.tuples(st.integers(0, 200), st.integers(0, 60)).map(lambda p: (p[0], p[0] + p[1])),
    min_size=0, max_size=40)


@settings(max_examples=200, deadline=None)
@given(intervals_strategy, st.sampled_from([1, 2, 3, 8, 16, 64]))
def test_interval_integral_is_exact(intervals, width):
    s = np.array([i[0] for i in intervals], dtype=np.int64)
    e = np.array([i[1] for i in intervals], dtype=np.int64)
    nbins = 300 // width + 2
    assert interval_integral(s, e, width, 0, nbins).tolist() == _brute_integral(intervals, width, 0, nbins)


@settings(max_examples=100, deadline=None)
@given(intervals_strategy)
def test_merged_intervals_cover_the_same_time_once(intervals):
    s = np.array([i[0] for i in intervals], dtype=np.int64)
    e = np.array([i[1] for i in intervals], dtype=np.int64)
    ms, me = merge_intervals(s, e)
    covered = {t for a, b in intervals for t in range(a, b)}
    assert sum((me - ms).tolist()) == len(covered)
    assert all(me[:-1] < ms[1:])


def _write(tmp_path, build):
    writer = TraceWriter(tmp_path / "p.sqlite", command="test")
    tracer = PyTracer(writer)
    build(tracer)
    tracer.close(10_000)
    writer.finalize(completed=True)
    db = sqlite3.connect(tmp_path / "p.sqlite")
    return db


def _bins(db, location, level):
    names = [r[1] for r in db.execute("PRAGMA table_info(metric_bin)")][3:]
    rows = db.execute("SELECT * FROM metric_bin WHERE location = ? AND level = ? ORDER BY bin",
                      (location, level)).fetchall()
    return {r[2]: dict(zip(names, r[3:])) for r in rows}


def test_six_metrics_on_a_hand_checked_trace(tmp_path, monkeypatch):
    monkeypatch.setattr(pyramid, "TARGET_TASKS_PER_BIN", 0.01)  # store every level down to 1 ps
    def build(tr):
        cu, l2 = tr.location("CU"), tr.location("L2")
        out_k, in_k = tr.kind("req_out", "ReadReq"), tr.kind("req_in", "ReadReq")
        # req_out at CU [0, 100); its req_in at L2 [30, 80): waited 30 ps in L2's buffer.
        out = tr.trace_req_initiate(NO_TASK, out_k, cu, 0)
        inn = tr.trace_req_receive(out, in_k, l2, 30)
        tr.trace_req_complete(inn, 80)
        tr.trace_req_finalize(out, 100)
        # A second request whose req_in ends exactly on a bin edge (t = 128).
        out2 = tr.trace_req_initiate(NO_TASK, out_k, cu, 64)
        inn2 = tr.trace_req_receive(out2, in_k, l2, 64)
        tr.trace_req_complete(inn2, 128)
        tr.trace_req_finalize(out2, 130)

    db = _write(tmp_path, build)
    base = db.execute("SELECT pyramid_base_ps FROM run").fetchone()[0]
    assert base == 1
    # Level 6: 64 ps bins. Bin 0 = [0, 64), bin 1 = [64, 128), bin 2 = [128, 192).
    l2 = _bins(db, 1, 6)
    assert l2[0]["req_in_started"] == 1 and l2[1]["req_in_started"] == 1
    assert l2[1]["req_in_ended"] == 1 and l2[2]["req_in_ended"] == 1  # 128 is in bin 2, once
    assert l2[1]["req_in_latency_ps"] == 50 and l2[2]["req_in_latency_ps"] == 64
    assert l2[0]["buffer_ps"] == 30 and l2[1]["buffer_ps"] == 0
    assert l2[0]["task_ps"] == 34 and l2[1]["task_ps"] == 16 + 64
    assert l2[1]["busy_ps"] == 64
    assert 2 not in l2 or l2[2]["task_ps"] == 0
    cu = _bins(db, 0, 6)
    assert cu[0]["req_out_ps"] == 64 and cu[1]["req_out_ps"] == 36 + 64
    assert cu[2]["req_out_ps"] == 2


def test_coarser_levels_are_exact_sums_and_cover_everything(tmp_path):
    from simulator.tracing.synthetic import generate

    generate(tmp_path / "s.sqlite", tasks=4000, seed=5)
    db = sqlite3.connect(tmp_path / "s.sqlite")
    bad = db.execute(
        "SELECT count(*) FROM metric_bin p JOIN (SELECT location, level + 1 AS level, bin / 2 AS bin,"
        " sum(task_ps) AS t, sum(req_in_started) AS s, sum(busy_ps) AS b FROM metric_bin"
        " GROUP BY location, level + 1, bin / 2) c USING (location, level, bin)"
        " WHERE p.task_ps != c.t OR p.req_in_started != c.s OR p.busy_ps != c.b").fetchone()[0]
    assert bad == 0
    totals = db.execute(
        "SELECT l.id, sum(t.end_ps - t.start_ps), l.pyramid_min_level FROM location l"
        " JOIN task t ON t.location = l.id GROUP BY l.id").fetchall()
    for loc, total, level in totals:
        got = db.execute("SELECT sum(task_ps) FROM metric_bin WHERE location = ? AND level = ?",
                         (loc, level)).fetchone()[0]
        assert got == total


def test_missing_parents_are_skipped_and_counted(tmp_path):
    def build(tr):
        l2 = tr.location("L2")
        in_k = tr.kind("req_in", "ReadReq")
        orphan = tr.start_task(12345, in_k, l2, 10)
        tr.end_task(orphan, 20)

    db = _write(tmp_path, build)
    assert db.execute("SELECT orphan_tasks FROM run").fetchone() == (1,)
    assert db.execute("SELECT parent FROM task").fetchone() == (None,)
    assert db.execute("SELECT sum(buffer_ps) FROM metric_bin").fetchone() == (0,)
