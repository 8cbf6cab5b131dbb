"""Read SQL and the exact metrics, with no server: hand-checked values on the exact
fixture, pyramid == raw-task sums on the synthetic one, read-only and time limits."""
import sqlite3

import numpy as np
import pytest
from test_app_traces import NS, write_exact_trace, write_synthetic_trace

from dashapp import queries
from dashapp.catalog import Catalog, UnknownTrace, natural_key, trace_meta
from dashapp.daisen import metrics


@pytest.fixture(scope="module")
def exact(tmp_path_factory):
    return write_exact_trace(tmp_path_factory.mktemp("exact") / "exact.sqlite")


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory):
    return write_synthetic_trace(tmp_path_factory.mktemp("syn") / "syn.sqlite")


def _one_bin(db, meta, loc, source):
    """The whole activity of ``loc`` in one bin, from the pyramid or from raw tasks."""
    level = metrics.top_level(loc, meta.base_ps)
    width = meta.base_ps << level
    t0 = (loc.first_start_ps // width) * width
    if source == "pyramid":
        return metrics.pyramid_series(db, loc, level, width, t0, t0 + width)
    return metrics.task_series(db, meta, loc, level, width, t0, t0 + width)


@pytest.mark.parametrize("source", ["pyramid", "tasks"])
def test_metrics_match_the_hand_computed_values(exact, source):
    meta = trace_meta(exact)
    l2, cu = meta.by_name["GPU.L2[0]"], meta.by_name["GPU.CU[0]"]
    with queries.open_trace(exact) as db:
        s = _one_bin(db, meta, l2, source)
        c = _one_bin(db, meta, cu, source)
    assert s.nbins == 1 and s.present[0]
    sums = {k: int(v[0]) for k, v in s.sums.items()}
    assert sums == {"req_in_started": 2, "req_in_ended": 2, "req_in_latency_ps": 45 * NS,
                    "task_ps": 61 * NS, "buffer_ps": 15 * NS, "req_out_ps": 0,
                    "busy_ps": 40 * NS}
    width_s = s.width_ps * 1e-12
    assert s.values("arrival")[0] == pytest.approx(2 / width_s)
    assert s.values("latency")[0] == pytest.approx(22.5e-9)
    assert s.values("busy")[0] == pytest.approx(40 * NS / s.width_ps)
    assert int(c.sums["req_out_ps"][0]) == 80 * NS


def test_deep_zoom_counts_requests_still_waiting_after_the_window(exact):
    # Window [12, 18) ns at GPU.L2[0]: nothing runs there, but request A (sent at 10,
    # served at 20) waits in the buffer for the whole window.
    meta = trace_meta(exact)
    l2 = meta.by_name["GPU.L2[0]"]
    with queries.open_trace(exact) as db:
        s = metrics.task_series(db, meta, l2, 0, 1000, 12 * NS, 18 * NS)
    assert s.sums["buffer_ps"].sum() == 6 * NS
    assert s.sums["task_ps"].sum() == 0
    assert np.all(s.values("buffer")[s.present] == 1.0)


def test_idle_bins_are_zero_and_only_a_latency_without_requests_is_a_gap(exact):
    meta = trace_meta(exact)
    l2 = meta.by_name["GPU.L2[0]"]
    with queries.open_trace(exact) as db:
        s = metrics.location_series(db, meta, l2, 0, 100 * NS, 50)
    values = s.values("concurrency")
    assert values[0] == 0 and not s.present[0]  # [0, 2 ns): before anything reaches the L2
    assert not np.isnan(values).any() and values.max() > 0
    for key in ("arrival", "completion", "buffer", "pending_out", "busy"):
        assert not np.isnan(s.values(key)).any(), key
    latency = s.values("latency")
    assert np.isnan(latency[s.sums["req_in_ended"] == 0]).all()
    assert not np.isnan(latency[s.sums["req_in_ended"] > 0]).any()


def test_raw_task_sums_equal_the_stored_pyramid(synthetic):
    """Both paths must agree bin for bin at every stored level tried."""
    meta = trace_meta(synthetic)
    names = ["GPU.L2[3]", "GPU.DRAM[3]", "GPU.SA[0].CU[0]", "GPU.CommandProcessor"]
    with queries.open_trace(synthetic) as db:
        for name in names:
            loc = meta.by_name[name]
            top = metrics.top_level(loc, meta.base_ps)
            for level in sorted({loc.min_level, (loc.min_level + top) // 2, top}):
                width = meta.base_ps << level
                t0 = loc.first_start_ps - 3 * width
                t1 = loc.last_end_ps + width
                a = metrics.pyramid_series(db, loc, level, width, t0, t1)
                b = metrics.task_series(db, meta, loc, level, width, t0, t1)
                for col in metrics.COLUMNS:
                    assert a.sums[col].tolist() == b.sums[col].tolist(), (name, level, col)
                assert a.present.tolist() == b.present.tolist()


def test_level_choice_reads_about_as_many_bins_as_points(synthetic):
    meta = trace_meta(synthetic)
    loc = meta.by_name["GPU.L2[0]"]
    with queries.open_trace(synthetic) as db:
        for span in (meta.end_ps, meta.end_ps // 1000):
            s = metrics.location_series(db, meta, loc, 0, span, 100)
            assert 50 <= s.nbins <= 201


def test_window_tasks_overlap_the_window_only(synthetic):
    meta = trace_meta(synthetic)
    loc = meta.by_name["GPU.L2[1]"]
    t0, t1 = loc.first_start_ps + 20_000, loc.first_start_ps + 80_000
    with queries.open_trace(synthetic) as db:
        got = queries.window_tasks(db, loc.id, loc.max_duration_ps, t0, t1, 10_000)
        count = queries.window_task_count(db, loc.id, loc.max_duration_ps, t0, t1, 10_000)
    raw = sqlite3.connect(synthetic).execute(
        "SELECT id FROM task WHERE location = ? AND start_ps < ? AND end_ps > ?"
        " ORDER BY start_ps, id", (loc.id, t1, t0)).fetchall()
    assert [t.id for t in got] == [r[0] for r in raw] and count == len(raw) > 0


def _long_and_short_trace(path):
    """One location with a task spanning the run and 600 short ones (the kernel case)."""
    from simulator.tracing.api import Tracer
    from simulator.tracing.writer import TraceWriter

    writer = TraceWriter(path, command="long and short")
    tr = Tracer(writer)
    cp, kind = tr.location("GPU.CP"), tr.kind("req_out", "MapWGReq")
    kernel = tr.start_task(-1, tr.kind("kernel", "kernel"), cp, 0)
    for i in range(600):
        tr.end_task(tr.start_task(kernel, kind, cp, 100 * i + i % 7), 100 * i + 30 + i % 90)
    tr.end_task(kernel, 60_100)
    tr.close(60_100)
    writer.finalize(completed=True)
    writer.close()
    return path


def test_window_finds_long_tasks_without_scanning_from_their_start(tmp_path):
    from dashapp.daisen import windows

    path = _long_and_short_trace(tmp_path / "long.sqlite")
    meta = trace_meta(path)
    loc = meta.by_name["GPU.CP"]
    db_raw = sqlite3.connect(path)
    with queries.open_trace(path) as db:
        r = windows.reach(db, meta, loc)
        assert [k for k, _, _ in r.long] == [0] and r.short_ps < 200  # the split happened
        for t0, t1 in ((0, 50), (1_000, 1_130), (30_017, 30_019), (59_990, 70_000), (200, 200 + 1)):
            expected = db_raw.execute(
                "SELECT id FROM task WHERE location = ? AND start_ps < ? AND end_ps > ?"
                " ORDER BY start_ps, id", (loc.id, t1, t0)).fetchall()
            got = windows.tasks(db, meta, loc, t0, t1, 100_000)
            assert [t.id for t in got] == [e[0] for e in expected]
            assert windows.count(db, meta, loc, t0, t1, 100_000) == len(expected)
            assert len(windows.intervals(db, meta, loc, t0, t1)) == len(expected)
            assert [t.id for t in windows.tasks(db, meta, loc, t0, t1, 2)] == [
                e[0] for e in expected][:2]


def test_connections_are_read_only(exact):
    with queries.open_trace(exact) as db:
        with pytest.raises(sqlite3.OperationalError):
            db.db.execute("DELETE FROM task")


def test_a_slow_query_is_interrupted(synthetic):
    with queries.open_trace(synthetic, seconds=0.05) as db:
        with pytest.raises(queries.QueryTimeout):
            # A deliberately quadratic self-join over every task.
            db.fetch("SELECT count(*) FROM task a, task b WHERE a.start_ps < b.end_ps")


def test_a_file_that_is_not_a_trace_gives_a_trace_error(tmp_path):
    bad = tmp_path / "bad.sqlite"
    bad.write_bytes(b"not sqlite at all" * 100)
    with pytest.raises(queries.TraceError):
        trace_meta(bad)


def test_catalog_lists_only_its_own_files(exact):
    cat = Catalog(trace_dir=exact.parent)
    assert cat.names() == ["exact.sqlite"]
    for name in ("../exact.sqlite", "/etc/passwd", "missing.sqlite"):
        with pytest.raises(UnknownTrace):
            cat.path(name)


def test_a_single_trace_catalog_serves_only_that_file(tmp_path):
    exact = write_exact_trace(tmp_path / "exact.sqlite")
    write_exact_trace(tmp_path / "other.sqlite")  # a sibling that must stay hidden
    assert Catalog(trace_dir=tmp_path).names() == ["exact.sqlite", "other.sqlite"]
    cat = Catalog(trace=exact)
    assert cat.names() == ["exact.sqlite"] and cat.default() == "exact.sqlite"
    with pytest.raises(UnknownTrace):
        cat.path("other.sqlite")


def test_natural_order():
    names = ["CU[10]", "CU[2]", "L2[1]", "CU[1]"]
    assert sorted(names, key=natural_key) == ["CU[1]", "CU[2]", "CU[10]", "L2[1]"]


def test_task_tree_queries(exact):
    with queries.open_trace(exact) as db:
        a_in = queries.task(db, 2)
        assert queries.task(db, a_in.parent).start_ps == 10 * NS
        assert [t.id for t in queries.subtasks(db, a_in.id, 10)] == [3]
        assert queries.task_tags(db, 3) == [(23 * NS, "read-hit")]
        assert queries.task(db, 999) is None


def test_a_window_far_beyond_the_run_costs_no_more_bins_than_the_run(exact):
    meta = trace_meta(exact)
    with queries.open_trace(exact) as db:
        for loc in meta.locations:
            series = metrics.location_series(db, meta, loc, 0, 10 ** 18, 200)
            assert len(series.present) <= 4 * 200
            density = metrics.kind_density(db, meta, loc, -10 ** 18, 10 ** 18, 200)
            assert all(len(v) <= 4 * 200 for v in density[2].values())


def test_a_trace_in_another_format_gets_a_message(tmp_path):
    path = write_exact_trace(tmp_path / "old.sqlite")
    db = sqlite3.connect(path)
    db.execute("PRAGMA user_version = 0")
    db.commit()
    db.close()
    with pytest.raises(queries.TraceError, match="trace format 0, and this app reads formats 1, 2"):
        trace_meta(path)


def test_a_version_1_trace_still_opens_without_links_markers_or_counters(tmp_path):
    from dashapp import urls
    from dashapp.daisen import views

    path = write_exact_trace(tmp_path / "v1.sqlite")
    db = sqlite3.connect(path)
    for table in ("task_link", "instant", "counter_series", "counter"):
        db.execute(f"DROP TABLE {table}")
    for table, gone in (("location", {"sort_index"}), ("run", {"time_origin", "clock", "metadata"})):
        keep = ", ".join(r[1] for r in db.execute(f"PRAGMA table_info({table})") if r[1] not in gone)
        db.execute(f"CREATE TABLE old AS SELECT {keep} FROM {table}")
        db.execute(f"DROP TABLE {table}")
        db.execute(f"ALTER TABLE old RENAME TO {table}")
    db.execute("PRAGMA user_version = 1")
    db.commit()
    db.close()
    meta = trace_meta(path)
    assert meta.format == 1 and meta.absolute(5) is None and meta.counters == ()
    page = views.overview(path, urls.OverviewState(trace=path.name))
    assert page.charts
    loc = next(x for x in meta.locations if x.task_count)
    comp = views.component(path, urls.ComponentState(trace=path.name, loc=loc.name, task=0))
    assert comp.current is not None and comp.links_out == comp.links_in == comp.instants == []


def test_errors_say_what_is_wrong_with_the_file(tmp_path):
    bad = tmp_path / "bad.sqlite"
    bad.write_bytes(b"not sqlite at all" * 100)
    with pytest.raises(queries.TraceError, match="bad.sqlite: not an SQLite file"):
        trace_meta(bad)
    other = tmp_path / "other.sqlite"
    sqlite3.connect(other).execute("CREATE TABLE t (x)")
    with pytest.raises(queries.TraceError, match="not a GPUscope trace, or one from another"):
        with queries.open_trace(other) as db:
            queries.run_info(db)


def test_a_trace_left_mid_batch_by_a_killed_writer_says_how_to_repair_it(tmp_path):
    import os
    import subprocess
    import sys

    path = tmp_path / "killed.sqlite"
    script = ("import os, sqlite3\n"
              f"db = sqlite3.connect({str(path)!r}, isolation_level=None)\n"
              "db.execute('CREATE TABLE run (x)')\n"
              "db.execute('INSERT INTO run VALUES (1)')\n"
              "db.execute('BEGIN')\n"
              "db.execute('PRAGMA cache_size=10')\n"
              "db.executemany('INSERT INTO run VALUES (?)', [(i,) for i in range(50000)])\n"
              "db.execute('UPDATE run SET x = 2 WHERE rowid = 1')\n"
              "os.kill(os.getpid(), 9)\n")
    subprocess.run([sys.executable, "-c", script], timeout=60)
    assert os.path.exists(str(path) + "-journal")
    with pytest.raises(queries.TraceError, match="simulator finalize FILE"):
        with queries.open_trace(path) as db:
            db.fetch("SELECT count(*) FROM run")


def test_a_window_from_raw_tasks_is_read_once_per_file_version(tmp_path, monkeypatch):
    path = write_synthetic_trace(tmp_path / "syn.sqlite", tasks=3000, seed=4)
    reads = []
    window_intervals = queries.window_intervals

    def counted(*args):
        reads.append(args[1:])
        return window_intervals(*args)

    monkeypatch.setattr(queries, "window_intervals", counted)

    def deep_zoom(name):
        meta = trace_meta(path)
        loc = meta.by_name[name]
        width = meta.base_ps << loc.min_level
        with queries.open_trace(path) as db:
            return metrics.location_series(db, meta, loc, loc.first_start_ps,
                                           loc.first_start_ps + 8 * width, 100)

    first = deep_zoom("GPU.L2[0]")
    assert first.source == "tasks" and len(reads) == 1
    first.counters["counter:x"] = np.zeros(first.nbins)  # a caller's own addition
    again = deep_zoom("GPU.L2[0]")
    assert len(reads) == 1 and again.counters == {}
    assert all(again.sums[c].tolist() == first.sums[c].tolist() for c in metrics.COLUMNS)
    # The file rewritten in place (another run under the same name): read again.
    write_synthetic_trace(tmp_path / "other.sqlite", tasks=3000, seed=5).replace(path)
    other = deep_zoom("GPU.L2[0]")
    assert len(reads) == 2
    assert any(other.sums[c].tolist() != first.sums[c].tolist() for c in metrics.COLUMNS)
