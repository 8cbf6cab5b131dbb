"""The data-collection API, on both the Python reference and the Cython build."""
import sqlite3

import numpy as np
import pytest

from simulator import tracing
from simulator.build import compiled_available
from simulator.tracing import NO_TASK, OPEN_AT_STOP, PyTracer, Tracer, TraceWriter
from simulator.tracing.synthetic import generate

CyTracer = tracing.tracer_class("cython") if compiled_available() else None


def _setup(tracer):
    return (tracer.location("GPU.CU[0]"), tracer.location("GPU.L2[0]"),
            tracer.kind("req_out", "ReadReq"), tracer.kind("req_in", "ReadReq"),
            tracer.kind("inst", "VALU"))


def test_request_helpers_make_a_req_out_with_a_req_in_child(tracer_class, memory_sink):
    tr = tracer_class(memory_sink, ps_per_tick=1000)
    cu, l2, out_k, in_k, _ = _setup(tr)
    out = tr.trace_req_initiate(NO_TASK, out_k, cu, 10)
    inn = tr.trace_req_receive(out, in_k, l2, 12)
    tr.trace_req_complete(inn, 20)
    tr.trace_req_finalize(out, 23)
    tr.close(30)
    tasks = memory_sink.tasks
    assert tasks[out] == (out, -1, out_k, cu, 10_000, 23_000, 0)
    assert tasks[inn] == (inn, out, in_k, l2, 12_000, 20_000, 0)
    assert memory_sink.batches[0][3] == [(0, "GPU.CU[0]"), (1, "GPU.L2[0]")]


def test_open_tasks_are_written_flagged_at_close(tracer_class, memory_sink):
    tr = tracer_class(memory_sink)
    cu, _, _, _, valu = _setup(tr)
    done = tr.start_task(NO_TASK, valu, cu, 0)
    tr.end_task(done, 4)
    still = tr.start_task(NO_TASK, valu, cu, 5)
    assert tr.open_count == 1
    assert tr.close(9) == 1
    assert memory_sink.tasks[still] == (still, -1, valu, cu, 5, 9, OPEN_AT_STOP)
    assert memory_sink.tasks[done][6] == 0


def test_time_window_drops_tasks_outside_it(tracer_class, memory_sink):
    tr = tracer_class(memory_sink, window=(100, 200))
    cu, _, _, _, valu = _setup(tr)
    before = tr.start_task(NO_TASK, valu, cu, 10)
    tr.end_task(before, 50)
    across = tr.start_task(NO_TASK, valu, cu, 90)
    tr.end_task(across, 110)
    assert tr.start_task(NO_TASK, valu, cu, 200) == NO_TASK
    tr.close(300)
    assert set(memory_sink.tasks) == {across}
    assert tr.dropped == 1


def test_category_filter_returns_no_task_and_ignores_it(tracer_class, memory_sink):
    tr = tracer_class(memory_sink, categories={"req_out", "req_in"})
    cu, _, out_k, _, valu = _setup(tr)
    inst = tr.start_task(NO_TASK, valu, cu, 0)
    assert inst == NO_TASK
    tr.tag_task(inst, 1, tr.tag_name("x"))
    tr.end_task(inst, 4)
    out = tr.trace_req_initiate(inst, out_k, cu, 1)
    tr.trace_req_finalize(out, 3)
    tr.close(5)
    assert list(memory_sink.tasks.values()) == [(out, -1, out_k, cu, 1, 3, 0)]


def test_rows_flush_in_batches_of_the_configured_size(tracer_class, memory_sink):
    tr = tracer_class(memory_sink, batch_size=4)
    cu, _, _, _, valu = _setup(tr)
    for i in range(10):
        tr.end_task(tr.start_task(NO_TASK, valu, cu, i), i + 1)
    assert [len(b[0]) for b in memory_sink.batches] == [4, 4]
    tr.close(20)
    assert len(memory_sink.tasks) == 10


def test_ending_before_the_start_is_an_error(tracer_class, memory_sink):
    tr = tracer_class(memory_sink)
    cu, _, _, _, valu = _setup(tr)
    key = tr.start_task(NO_TASK, valu, cu, 10)
    with pytest.raises(ValueError, match="before its start"):
        tr.end_task(key, 5)


def test_unknown_task_and_kind_are_errors(tracer_class, memory_sink):
    tr = tracer_class(memory_sink)
    cu, _, _, _, _ = _setup(tr)
    with pytest.raises(KeyError):
        tr.end_task(42, 5)
    with pytest.raises(IndexError):
        tr.start_task(NO_TASK, 99, cu, 0)


def test_details_and_tags_reach_the_file(tracer_class, tmp_path):
    writer = TraceWriter(tmp_path / "t.sqlite", command="test")
    tr = tracer_class(writer)
    cu, _, _, _, valu = _setup(tr)
    key = tr.start_task(NO_TASK, valu, cu, 0, details={"pc": 12})
    tr.tag_task(key, 2, tr.tag_name("read-hit"))
    tr.end_task(key, 4)
    tr.close(4)
    writer.finalize(completed=True)
    db = sqlite3.connect(tmp_path / "t.sqlite")
    assert db.execute("SELECT details FROM task").fetchone() == ('{"pc": 12}',)
    assert db.execute("SELECT t.time_ps, n.name FROM task_tag t JOIN tag_name n ON n.id = t.tag"
                      ).fetchall() == [(2, "read-hit")]


needs_compiled = pytest.mark.skipif(not compiled_available(), reason="compiled build missing")


@needs_compiled
def test_cython_and_python_tracers_write_identical_traces(tmp_path):
    paths = []
    for cls in (PyTracer, CyTracer):
        path = tmp_path / f"{cls.__module__}.sqlite"
        generate(path, tasks=5000, seed=7, tracer_class=cls)
        paths.append(path)
    dumps = []
    for path in paths:
        db = sqlite3.connect(path)
        dumps.append([db.execute(f"SELECT * FROM {table} ORDER BY 1, 2, 3").fetchall()
                      for table in ("task", "task_tag", "location", "kind", "metric_bin",
                                    "metric_kind_bin")])
    assert dumps[0] == dumps[1]


def test_same_seed_gives_the_same_trace(tmp_path):
    rows = []
    for name in ("a", "b"):
        generate(tmp_path / f"{name}.sqlite", tasks=3000, seed=11)
        db = sqlite3.connect(tmp_path / f"{name}.sqlite")
        rows.append(np.array(db.execute("SELECT * FROM task ORDER BY id").fetchall(), dtype=object))
    assert (rows[0] == rows[1]).all()


@pytest.mark.parametrize("watchable, during_load", [(True, "wal"), (False, "delete")])
def test_a_watchable_file_loads_in_wal_and_every_trace_ends_out_of_wal(
        tmp_path, watchable, during_load):
    """WAL lets viewers read a file while it is written (what run and synth write); an
    import, which nobody watches, loads with a rollback journal; every finished trace
    leaves WAL, so a reader who may not write its directory can open it
    (docs/reliability.md)."""
    path = tmp_path / "t.sqlite"
    writer = TraceWriter(path, command="test", watchable=watchable)
    tr = Tracer(writer)
    cu, _, _, _, valu = _setup(tr)
    tr.end_task(tr.start_task(NO_TASK, valu, cu, 0), 4)
    tr.close(4)
    assert writer.db.execute("PRAGMA journal_mode").fetchone() == (during_load,)
    writer.finalize(completed=True)
    writer.close()
    assert sqlite3.connect(path).execute("PRAGMA journal_mode").fetchone() == ("delete",)
    assert sqlite3.connect(path).execute("SELECT count(*) FROM task").fetchone() == (1,)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.sqlite"]  # no -wal, no -shm


def _interleaved(tracer_class, seed, steps, max_open):
    """Open and end tasks in a random order with up to ``max_open`` in flight, then close;
    returns the task rows in the order the sink received them."""
    class Rows:
        def __init__(self):
            self.rows = []

        def write_batch(self, tasks, details, tags, locations, kinds, tag_names):
            self.rows += tasks.tolist()

    sink = Rows()
    tr = tracer_class(sink, batch_size=4096)
    cu, _, _, _, valu = _setup(tr)
    rng = np.random.default_rng(seed)
    root = tr.start_task(NO_TASK, valu, cu, 0)
    open_keys = []
    for t in range(1, steps):
        if open_keys and (len(open_keys) >= max_open or rng.random() < 0.5):
            key = open_keys.pop(int(rng.integers(len(open_keys))))
            tr.end_task(key, t)
        else:
            open_keys.append(tr.start_task(root, valu, cu, t))
    assert tr.open_count == len(open_keys) + 1
    assert tr.close(steps) == len(open_keys) + 1
    return sink.rows


@needs_compiled
@pytest.mark.parametrize("max_open", [3, 10_000])
def test_cython_open_task_ring_matches_the_reference_in_any_end_order(max_open):
    """Thousands in flight grow the ring past its first size; rows and order are unchanged."""
    rows = [_interleaved(cls, 5, 60_000, max_open) for cls in (PyTracer, CyTracer)]
    assert rows[0] == rows[1]
    assert sum(1 for r in rows[1] if r[6] == OPEN_AT_STOP) > 1


@needs_compiled
def test_a_task_open_for_millions_of_keys_is_kept_exactly(memory_sink):
    """Past the ring's largest size its oldest open task moves aside; it still ends right."""
    tr = CyTracer(memory_sink, batch_size=1 << 16)
    cu, _, _, _, valu = _setup(tr)
    root = tr.start_task(NO_TASK, valu, cu, 1)
    middle = None
    for t in range(1_200_000):
        key = tr.start_task(root, valu, cu, t + 2)
        if t == 100_000:
            middle = key  # evicted too when the ring runs out
            continue
        tr.end_task(key, t + 3)
    tr.end_task(middle, 5_000_000)
    with pytest.raises(KeyError):
        tr.end_task(middle, 5_000_001)
    tr.end_task(root, 6_000_000)
    assert tr.open_count == 0 and tr.close(6_000_000) == 0
    tasks = memory_sink.tasks
    assert len(tasks) == 1_200_001
    assert tasks[root] == (root, NO_TASK, valu, cu, 1, 6_000_000, 0)
    assert tasks[middle][4:6] == (100_002, 5_000_000)


def test_a_sink_that_fails_once_loses_no_row_and_the_tracer_goes_on(tracer_class):
    """A failed flush keeps its rows (the Cython buffers must not be written past)."""
    class FailsOnce:
        def __init__(self):
            self.failed = False
            self.rows = []

        def write_batch(self, tasks, details, tags, locations, kinds, tag_names):
            if not self.failed:
                self.failed = True
                raise OSError("disk full")
            self.rows += [tuple(r) for r in tasks.tolist()]

    sink = FailsOnce()
    tr = tracer_class(sink, batch_size=4)
    cu, _, _, _, valu = _setup(tr)
    with pytest.raises(OSError):
        for t in range(4):
            tr.end_task(tr.start_task(NO_TASK, valu, cu, t), t + 1)
    for t in range(4, 10):
        key = tr.start_task(NO_TASK, valu, cu, t)
        tr.tag_task(key, t, tr.tag_name("step"))
        tr.end_task(key, t + 1)
    tr.close(20)
    assert sorted(r[0] for r in sink.rows) == list(range(10))
