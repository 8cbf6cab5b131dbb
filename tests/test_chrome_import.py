"""Chrome Trace Event and Kineto quirks, each on a fixture written here; Daisen CSV
duplicates, akita milestones and gzip for every format."""
import gzip
import json
import shutil
import sqlite3

import pytest

from simulator.tracing.exporters import export_trace
from simulator.tracing.importers import TraceFormatError, detect_format, import_trace

BASE_NS = 1_751_410_836_000_000_000


def kineto_events():
    """A PyTorch-profiler-shaped trace: CPU thread launching kernels on a GPU stream."""
    return [
        {"name": "process_name", "ph": "M", "pid": 19392, "tid": 0, "args": {"name": "python3"}},
        {"name": "process_labels", "ph": "M", "pid": 19392, "tid": 0, "args": {"labels": "CPU"}},
        {"name": "process_sort_index", "ph": "M", "pid": 19392, "tid": 0, "args": {"sort_index": 19392}},
        {"name": "process_name", "ph": "M", "pid": 0, "tid": 0, "args": {"name": "python3"}},
        {"name": "process_labels", "ph": "M", "pid": 0, "tid": 0, "args": {"labels": "GPU 0"}},
        {"name": "process_sort_index", "ph": "M", "pid": 0, "tid": 0, "args": {"sort_index": 5000000}},
        {"name": "thread_name", "ph": "M", "pid": 0, "tid": 7, "args": {"name": "stream 7 "}},
        {"name": "thread_name", "ph": "M", "pid": 19392, "tid": 19392,
         "args": {"name": "thread 19392 (python3)"}},
        {"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 19392, "tid": 19392,
         "ts": 1419247333417.2, "dur": 20.5, "args": {"External id": 3}},
        {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 19392, "tid": 19392,
         "ts": 1419247333417.54, "dur": 5.113, "args": {"correlation": 8218}},
        {"ph": "s", "id": 8218, "pid": 19392, "tid": 19392, "ts": 1419247333417.54, "cat": "ac2g",
         "name": "ac2g"},
        {"ph": "X", "cat": "kernel", "name": "vectorized_add", "pid": 0, "tid": 7,
         "ts": 1419247333430.849, "dur": 3.136,
         "args": {"correlation": 8218, "grid": [141, 1, 1], "block": [128, 1, 1],
                  "registers per thread": 32, "shared memory": 0, "est. achieved occupancy %": 7}},
        {"ph": "f", "id": 8218, "pid": 0, "tid": 7, "ts": 1419247333430.849, "cat": "ac2g",
         "name": "ac2g", "bp": "e"},
        {"ph": "f", "id": 9999, "pid": 0, "tid": 7, "ts": 1419247333431.0, "cat": "ac2g",
         "name": "ac2g", "bp": "e"},  # a finish whose start the profiler dropped
        {"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": 19392,
         "tid": 19392, "ts": 1419247333420.919, "args": {"Bytes": 144384}},
        {"name": "Iteration Start", "ph": "i", "s": "g", "pid": "Traces", "tid": "Trace",
         "ts": 1419247333400.684},
    ]


def _write(path, events, **top):
    data = json.dumps({**top, "traceEvents": events})
    if path.suffix == ".gz":
        path.write_bytes(gzip.compress(data.encode()))
    else:
        path.write_text(data)
    return path


def _db(path):
    return sqlite3.connect(f"file:{path}?mode=ro", uri=True)


def _links(db):
    return db.execute(
        "SELECT ka.action, la.name, kb.action, lb.name, l.kind FROM task_link l"
        " JOIN task a ON a.id = l.src JOIN task b ON b.id = l.dst JOIN kind ka ON ka.id = a.kind"
        " JOIN kind kb ON kb.id = b.kind JOIN location la ON la.id = a.location"
        " JOIN location lb ON lb.id = b.location ORDER BY 1, 3").fetchall()


def test_kineto_trace_gzipped_with_base_time(tmp_path):
    src = _write(tmp_path / "trace.bin.gz", kineto_events(), baseTimeNanoseconds=str(BASE_NS),
                 deviceProperties=[{"id": 0, "name": "NVIDIA H100"}], displayTimeUnit="ms")
    assert detect_format(src) == "chrome"
    report = import_trace(src, tmp_path / "o.sqlite", show_progress=False)
    assert (report.tasks, report.links, report.instants, report.unresolved_links) == (3, 1, 2, 1)
    db = _db(tmp_path / "o.sqlite")
    origin, clock, meta = db.execute("SELECT time_origin, clock, metadata FROM run").fetchone()
    assert clock == "unix" and origin == "1752830083.333400684"  # base + the first event
    assert json.loads(meta)["deviceProperties"][0]["name"] == "NVIDIA H100"
    names = [n for n, in db.execute("SELECT name FROM location ORDER BY sort_index")]
    assert names == ["python3[19392].thread[19392]", "GPU[0].stream[7]"]
    assert _links(db) == [("cudaLaunchKernel", "python3[19392].thread[19392]", "vectorized_add",
                           "GPU[0].stream[7]", "ac2g")]
    start, details = db.execute("SELECT t.start_ps, t.details FROM task t JOIN kind k ON k.id = t.kind"
                                " WHERE k.category = 'kernel'").fetchone()
    assert start == (1419247333430849 - 1419247333400684) * 1000  # exact ns, relative
    assert json.loads(details)["grid"] == [141, 1, 1]
    parent = db.execute("SELECT p.id FROM task t JOIN task p ON p.id = t.parent JOIN kind k"
                        " ON k.id = t.kind WHERE k.action = 'cudaLaunchKernel'").fetchone()
    assert parent is not None  # nested in aten::add on its thread


def test_epoch_scale_microseconds_stay_exact_to_the_picosecond(tmp_path):
    # 1.7e15 µs: a float's spacing there is 0.25 µs, and µs*1e6 overflows int64 ps
    src = tmp_path / "epoch.json"  # a bare array, as older tools write
    src.write_text('[{"name": "a", "ph": "X", "ts": 1700000000123456.789123, "dur": 0.001,'
                   ' "pid": 1, "tid": 1},\n {"name": "b", "ph": "X", "ts": 1700000000123457.001,'
                   ' "dur": 2, "pid": 1, "tid": 1}]')
    import_trace(src, tmp_path / "o.sqlite", show_progress=False)
    db = _db(tmp_path / "o.sqlite")
    assert db.execute("SELECT time_origin, clock FROM run").fetchone() == (
        "1700000000.123456789123", "unix")
    assert db.execute("SELECT start_ps, end_ps FROM task ORDER BY id").fetchall() == [
        (0, 1_000), (211_877, 2_211_877)]


def test_a_tid_spelled_as_a_string_of_digits_is_that_number(tmp_path):
    """As Chrome's and TensorBoard's viewers key threads (a JavaScript object's keys): "7"
    is 7, while "07" and "7.0" are strings of their own (issue 33)."""
    events = [{"name": "a", "ph": "X", "ts": 1, "dur": 1, "pid": 1, "tid": "7"},
              {"name": "b", "ph": "X", "ts": 1, "dur": 1, "pid": 1, "tid": 7},
              {"name": "d", "ph": "X", "ts": 1, "dur": 1, "pid": 1, "tid": "07"},
              {"name": "c", "ph": "X", "ts": 1, "dur": 1, "pid": "Spans", "tid": "PyTorch Profiler"}]
    import_trace(_write(tmp_path / "t.json", events), tmp_path / "o.sqlite", show_progress=False)
    names = {a: n for a, n in _db(tmp_path / "o.sqlite").execute(
        "SELECT k.action, l.name FROM task t JOIN kind k ON k.id = t.kind JOIN location l"
        " ON l.id = t.location")}
    assert names["a"] == names["b"] != names["d"]
    assert names["c"] == "process[Spans].PyTorch Profiler"  # a string tid names its thread


def test_flows_v1_steps_next_slice_binding_and_v2(tmp_path):
    events = [
        {"name": "A", "ph": "X", "ts": 0, "dur": 10, "pid": 1, "tid": 1},
        {"name": "B", "ph": "X", "ts": 20, "dur": 10, "pid": 1, "tid": 2},
        {"name": "C", "ph": "B", "ts": 40, "pid": 1, "tid": 3},
        {"name": "C", "ph": "E", "ts": 45, "pid": 1, "tid": 3},
        {"ph": "s", "id": "0x1", "cat": "fwdbwd", "name": "f", "ts": 5, "pid": 1, "tid": 1},
        {"ph": "t", "id": "0x1", "cat": "fwdbwd", "name": "f", "ts": 25, "pid": 1, "tid": 2},
        {"ph": "f", "id": "0x1", "cat": "fwdbwd", "name": "f", "ts": 35, "pid": 1, "tid": 3},  # next slice
        {"name": "P", "ph": "X", "ts": 50, "dur": 1, "pid": 2, "tid": 1, "bind_id": 5, "flow_out": True},
        {"name": "Q", "ph": "X", "ts": 60, "dur": 1, "pid": 2, "tid": 2, "bind_id": 5, "flow_in": True},
    ]
    report = import_trace(_write(tmp_path / "t.json", events), tmp_path / "o.sqlite", show_progress=False)
    assert report.unresolved_links == 0
    got = {(a, b, k) for a, _, b, _, k in _links(_db(tmp_path / "o.sqlite"))}
    assert got == {("A", "B", "fwdbwd"), ("B", "C", "fwdbwd"), ("P", "Q", "flow")}


def test_counters_instants_async_and_metadata_order(tmp_path):
    events = [
        {"name": "process_name", "ph": "M", "pid": 2, "args": {"name": "Renderer"}},
        {"name": "process_sort_index", "ph": "M", "pid": 2, "args": {"sort_index": -1}},
        {"name": "process_name", "ph": "M", "pid": 1, "args": {"name": "Browser"}},
        {"name": "t", "ph": "X", "ts": 0, "dur": 5, "pid": 1, "tid": 1},
        {"name": "r", "ph": "X", "ts": 0, "dur": 5, "pid": 2, "tid": 1},
        {"name": "mem", "ph": "C", "ts": 1, "pid": 1, "args": {"used": 10, "free": 90}},
        {"name": "mem", "ph": "C", "ts": 2, "pid": 1, "args": {"used": 12.5, "free": 87.5}},
        {"name": "ctr", "ph": "C", "ts": 2, "pid": 1, "id": 3, "args": {"value": 1}},
        {"name": "mark", "ph": "I", "ts": 3, "pid": 1, "tid": 1, "s": "p"},
        {"name": "req", "cat": "net", "ph": "b", "id": 4, "ts": 1, "pid": 1, "args": {"url": "x"}},
        {"name": "sub", "cat": "net", "ph": "b", "id": 4, "ts": 2, "pid": 1},
        {"name": "step", "cat": "net", "ph": "n", "id": 4, "ts": 2.5, "pid": 1},
        {"name": "sub", "cat": "net", "ph": "e", "id": 4, "ts": 3, "pid": 1},
        {"name": "req", "cat": "net", "ph": "e", "id": 4, "ts": 4, "pid": 1, "args": {"status": 200}},
    ]
    report = import_trace(_write(tmp_path / "t.json", events), tmp_path / "o.sqlite", show_progress=False)
    assert (report.tasks, report.counters, report.instants) == (4, 5, 2)
    db = _db(tmp_path / "o.sqlite")
    assert [n for n, in db.execute("SELECT name FROM location WHERE sort_index IS NOT NULL"
                                   " ORDER BY sort_index")] == [
        "Renderer.thread[1]", "Browser", "Browser.thread[1]", "Browser.async"]
    series = db.execute("SELECT s.name, l.name, c.time_ps, c.value FROM counter c JOIN counter_series s"
                        " ON s.id = c.series JOIN location l ON l.id = s.location"
                        " ORDER BY s.name, c.time_ps").fetchall()
    assert series == [("ctr[3]", "Browser", 2_000_000, 1), ("mem.free", "Browser", 1_000_000, 90),
                      ("mem.free", "Browser", 2_000_000, 87.5), ("mem.used", "Browser", 1_000_000, 10),
                      ("mem.used", "Browser", 2_000_000, 12.5)]
    req, sub = (db.execute("SELECT t.id, t.parent, t.details, l.name FROM task t JOIN kind k"
                           " ON k.id = t.kind JOIN location l ON l.id = t.location WHERE k.action = ?",
                           (name,)).fetchone() for name in ("req", "sub"))
    assert sub[1] == req[0] and req[3] == "Browser.async"
    assert json.loads(req[2]) == {"url": "x", "status": 200}
    assert db.execute("SELECT i.name, l.name FROM instant i JOIN location l ON l.id = i.location"
                      " ORDER BY i.time_ps").fetchall() == [("step", "Browser.async"), ("mark", "Browser")]


def test_export_keeps_links_instants_counters_and_source_times(tmp_path):
    src = _write(tmp_path / "k.json", kineto_events() + [
        {"name": "mem", "ph": "C", "ts": 1419247333420, "pid": 19392, "args": {"bytes": 5}}],
        baseTimeNanoseconds=str(BASE_NS))
    import_trace(src, tmp_path / "a.sqlite", show_progress=False)
    export_trace(tmp_path / "a.sqlite", tmp_path / "a.json", "chrome", show_progress=False)
    exported = json.loads((tmp_path / "a.json").read_text())
    kernel = next(e for e in exported["traceEvents"] if e["name"] == "vectorized_add")
    assert f"{kernel['ts']:.3f}" == "1419247333430.849"  # the source's own time again
    assert exported["baseTimeNanoseconds"] == str(BASE_NS)
    assert {e["ph"] for e in exported["traceEvents"]} >= {"X", "M", "s", "f", "i", "C"}
    import_trace(tmp_path / "a.json", tmp_path / "b.sqlite", show_progress=False)
    a, b = _db(tmp_path / "a.sqlite"), _db(tmp_path / "b.sqlite")
    assert _links(a) == _links(b)
    for sql in ("SELECT time_origin, clock FROM run",
                "SELECT time_ps, name, category, details FROM instant ORDER BY id",
                "SELECT s.name, time_ps, value FROM counter JOIN counter_series s ON s.id = series",
                "SELECT start_ps, end_ps, details FROM task ORDER BY start_ps, end_ps"):
        assert a.execute(sql).fetchall() == b.execute(sql).fetchall(), sql


CSV = ("ID, ParentID, Kind, What, Where, Start, End\n"
       "sim, , Simulation, Simulation, Driver, 0, 0.000002\n"
       "w1, sim, wavefront, wavefront, GPU.CU[1], 0.0000000012, 0.0000000099\n"
       "w1, sim, wavefront, wavefront, GPU.CU[1], 0.0000000012, 0.0000000099\n"
       "w2, sim, wavefront, wavefront, GPU.CU[1], 0.0000000013, 0.0000000099\n"
       "w1, sim, wavefront, wavefront, GPU.CU[1], 0.0000000012, 0.0000000099\n")


def test_daisen_csv_exact_duplicates_dropped_and_counted(tmp_path):
    src = tmp_path / "d.csv"
    src.write_text(CSV)
    report = import_trace(src, tmp_path / "o.sqlite", show_progress=False)
    assert (report.tasks, report.duplicates) == (3, 2)
    keys = _db(tmp_path / "o.sqlite").execute("SELECT id, ext_id FROM task ORDER BY id").fetchall()
    assert keys == [(0, "sim"), (1, "w1"), (2, "w2")]  # dense keys after the drop


def test_daisen_csv_differing_duplicate_names_both_rows(tmp_path):
    src = tmp_path / "d.csv"
    src.write_text(CSV + "w2, sim, wavefront, wavefront, GPU.CU[2], 0.0000000013, 0.0000000099\n")
    with pytest.raises(TraceFormatError, match=r"d.csv:7: task ID 'w2' again with different fields"
                                               r" \(first at .*d.csv:5\)"):
        import_trace(src, tmp_path / "o.sqlite", show_progress=False)
    assert not (tmp_path / "o.sqlite").exists()


@pytest.mark.parametrize("version,table", [(4, "milestone"), (4, "trace_milestones"), (5, "milestone")])
def test_akita_milestones_become_task_steps(tmp_path, version, table):
    db = sqlite3.connect(tmp_path / "a.sqlite3")
    db.execute("CREATE TABLE trace (ID, ParentID, Kind, What, Location, StartTime, EndTime)")
    if version == 5:
        db.execute("CREATE TABLE location (ID, Locale)")
        db.execute("INSERT INTO location VALUES (1, 'GPU[1].L2[0]')")
        db.execute("INSERT INTO trace VALUES ('r', 0, 'req_in', 'ReadReq', 1, 1000.0, 9000.0)")
        db.execute(f"CREATE TABLE {table} (ID, TaskID, Time, Kind, What)")
        db.execute(f"INSERT INTO {table} VALUES ('m1', 'r', 4000.0, 'hardware_resource', 'mshr')")
        db.execute("CREATE TABLE tag (ID, TaskID, Time, What)")
        db.execute("INSERT INTO tag VALUES ('g1', 'r', 5000.0, 'read-hit')")
    else:
        db.execute("INSERT INTO trace VALUES ('r', '', 'req_in', 'ReadReq', 'GPU[1].L2[0]', 1e-9, 9e-9)")
        db.execute(f"CREATE TABLE {table} (ID, TaskID, Time, Kind, What, Location)")
        db.execute(f"INSERT INTO {table} VALUES ('m1', 'r', 4e-9, 'hardware_resource', 'mshr', 'L2')")
    db.commit()
    db.close()
    import_trace(tmp_path / "a.sqlite3", tmp_path / "o.sqlite", show_progress=False)
    steps = _db(tmp_path / "o.sqlite").execute(
        "SELECT g.time_ps, n.name FROM task_tag g JOIN tag_name n ON n.id = g.tag ORDER BY 1").fetchall()
    expected = [(4000, "hardware_resource: mshr")] + ([(5000, "read-hit")] if version == 5 else [])
    assert steps == expected


def test_gzip_is_detected_by_content_for_every_format(tmp_path):
    (tmp_path / "d.csv").write_text(CSV)
    db = sqlite3.connect(tmp_path / "a.sqlite3")
    db.execute("create table trace (task_id, parent_id, kind, what, location, start_time, end_time)")
    db.execute("insert into trace values ('a', '', 'k', 'w', 'L', 0.0, 1e-9)")
    db.commit()
    db.close()
    _write(tmp_path / "c.json", kineto_events())
    for name, fmt in (("d.csv", "daisen-csv"), ("a.sqlite3", "akita-v3"), ("c.json", "chrome")):
        zipped = tmp_path / f"{name}.data"  # no telling suffix: the magic bytes decide
        with open(tmp_path / name, "rb") as f, gzip.open(zipped, "wb") as out:
            shutil.copyfileobj(f, out)
        assert detect_format(zipped) == fmt
        report = import_trace(zipped, tmp_path / f"{name}.sqlite", show_progress=False)
        plain = import_trace(tmp_path / name, tmp_path / f"{name}.plain.sqlite", show_progress=False)
        assert report.tasks == plain.tasks > 0
    assert sorted(p.name for p in tmp_path.iterdir() if "gunzip" in p.name or "partial" in p.name) == []


def test_damaged_gzip_and_bad_utf8_get_one_line_errors(tmp_path):
    whole = gzip.compress(json.dumps(kineto_events()).encode())
    (tmp_path / "cut.json.gz").write_bytes(whole[: len(whole) // 2])
    with pytest.raises(TraceFormatError, match="damaged gzip data"):
        import_trace(tmp_path / "cut.json.gz", tmp_path / "o.sqlite", show_progress=False)
    (tmp_path / "latin.json").write_bytes(b'[{"name": "caf\xe9", "ph": "X", "ts": 1, "dur": 1}]')
    with pytest.raises(TraceFormatError, match="not UTF-8 text"):
        import_trace(tmp_path / "latin.json", tmp_path / "o.sqlite", show_progress=False)
    assert not (tmp_path / "o.sqlite").exists()


def test_a_recording_cut_at_either_end_keeps_what_it_can(tmp_path):
    """Ring-buffer recordings lose the B of some slices and the E of others: an E without
    its B is skipped (counted), a B without its E lasts to the end, flagged still open."""
    events = [{"name": "lost", "ph": "E", "ts": 1, "pid": 1, "tid": 1},
              {"name": "whole", "ph": "X", "ts": 2, "dur": 3, "pid": 1, "tid": 1},
              {"name": "cut", "ph": "B", "ts": 4, "pid": 1, "tid": 2},
              {"name": "req", "cat": "net", "ph": "b", "id": 1, "ts": 3, "pid": 1},
              {"name": "last", "ph": "X", "ts": 9, "dur": 1, "pid": 1, "tid": 1}]
    report = import_trace(_write(tmp_path / "t.json", events), tmp_path / "o.sqlite", show_progress=False)
    assert (report.tasks, report.skipped) == (4, 1)
    db = _db(tmp_path / "o.sqlite")
    open_tasks = db.execute("SELECT k.action, t.start_ps, t.end_ps FROM task t JOIN kind k"
                            " ON k.id = t.kind WHERE t.flags & 1 ORDER BY 1").fetchall()
    assert open_tasks == [("cut", 2_000_000, 8_000_000), ("req", 1_000_000, 8_000_000)]
    assert db.execute("SELECT open_tasks FROM run").fetchone() == (2,)


def test_the_array_form_may_lack_its_closing_bracket(tmp_path):
    """The format allows it, so that a crashed process still leaves a readable trace."""
    src = tmp_path / "crashed.json"
    src.write_text('[{"name": "a", "ph": "X", "ts": 1, "dur": 2, "pid": 1, "tid": 1},\n'
                   ' {"name": "b", "ph": "X", "ts": 2, "dur": 1, "pid": 1, "tid": 1},\n')
    assert import_trace(src, tmp_path / "o.sqlite", show_progress=False).tasks == 2


def _tasks(db):
    return db.execute("SELECT k.action, l.name, t.start_ps, t.end_ps, t.flags & 1 FROM task t"
                      " JOIN kind k ON k.id = t.kind JOIN location l ON l.id = t.location"
                      " ORDER BY t.start_ps, k.action").fetchall()


def test_a_recording_of_begins_only_keeps_them_open_to_the_last_one(tmp_path):
    """A trace dumped during a hang: B events and nothing that ends."""
    events = [{"name": "outer", "ph": "B", "ts": 1, "pid": 1, "tid": 1},
              {"name": "inner", "ph": "B", "ts": 4, "pid": 1, "tid": 1},
              {"name": "req", "cat": "net", "ph": "b", "id": 1, "ts": 6, "pid": 1}]
    report = import_trace(_write(tmp_path / "t.json", events), tmp_path / "o.sqlite", show_progress=False)
    assert report.tasks == 3
    assert _tasks(_db(tmp_path / "o.sqlite")) == [
        ("outer", "process[1].thread[1]", 0, 5_000_000, 1),
        ("inner", "process[1].thread[1]", 3_000_000, 5_000_000, 1),
        ("req", "process[1].async", 5_000_000, 5_000_000, 1)]


def test_a_slice_that_ends_before_it_begins_is_kept_with_no_length_and_counted(tmp_path):
    """Older Kineto versions wrote negative durations (it clamps them since): the file
    is not refused, the task keeps its start."""
    events = [{"name": "ok", "ph": "X", "ts": 1, "dur": 10, "pid": 1, "tid": 1},
              {"name": "neg", "cat": "kernel", "ph": "X", "ts": 200, "dur": -3, "pid": 0, "tid": 7},
              {"name": "be", "ph": "B", "ts": 30, "pid": 1, "tid": 2},
              {"name": "be", "ph": "E", "ts": 29, "pid": 1, "tid": 2}]
    report = import_trace(_write(tmp_path / "t.json", events), tmp_path / "o.sqlite", show_progress=False)
    assert (report.tasks, report.clamped) == (3, 2)
    assert [(a, s, e) for a, _, s, e, _ in _tasks(_db(tmp_path / "o.sqlite"))] == [
        ("ok", 0, 10_000_000), ("be", 29_000_000, 29_000_000), ("neg", 199_000_000, 199_000_000)]


def test_a_flow_id_started_again_while_open_keeps_its_first_start(tmp_path):
    """Two ranks' traces merged into one: CUPTI's correlation IDs restart in each process,
    so both use ac2g ID 100 at once. As in Perfetto, a start while the flow is open is
    dropped, and so is the finish left without a start."""
    events = [{"name": "launch0", "ph": "X", "ts": 10, "dur": 2, "pid": 1, "tid": 1},
              {"name": "launch1", "ph": "X", "ts": 12, "dur": 2, "pid": 2, "tid": 1},
              {"name": "kernel0", "ph": "X", "ts": 20, "dur": 2, "pid": 0, "tid": 7},
              {"name": "kernel1", "ph": "X", "ts": 22, "dur": 2, "pid": 9, "tid": 7},
              {"ph": "s", "id": 100, "cat": "ac2g", "name": "ac2g", "ts": 10, "pid": 1, "tid": 1},
              {"ph": "s", "id": 100, "cat": "ac2g", "name": "ac2g", "ts": 12, "pid": 2, "tid": 1},
              {"ph": "f", "id": 100, "cat": "ac2g", "name": "ac2g", "ts": 20, "pid": 0, "tid": 7,
               "bp": "e"},
              {"ph": "f", "id": 100, "cat": "ac2g", "name": "ac2g", "ts": 22, "pid": 9, "tid": 7,
               "bp": "e"},
              {"ph": "t", "id": 5, "cat": "fwdbwd", "name": "f", "ts": 11, "pid": 1, "tid": 1}]
    report = import_trace(_write(tmp_path / "t.json", events), tmp_path / "o.sqlite", show_progress=False)
    got = [(a, b) for a, _, b, _, _ in _links(_db(tmp_path / "o.sqlite"))]
    assert got == [("launch0", "kernel0")]
    assert report.unresolved_links == 3  # the second start and finish, the lone step


def test_events_real_tools_write_that_perfetto_shows_are_kept(tmp_path):
    """A global async ID across processes, pid/tid written as whole floats, a slice
    without a name, a counter value as a numeric string; flow and async events without
    an ID are skipped and counted, not a refused file."""
    events = [{"name": "x", "ph": "X", "ts": 0, "dur": 1, "pid": 3, "tid": 7},
              {"name": "y", "ph": "X", "ts": 1, "dur": 1, "pid": 3.0, "tid": 7.0},
              {"ph": "X", "ts": 2, "dur": 1, "pid": 3, "tid": 7},
              {"name": "xproc", "cat": "ipc", "ph": "b", "id2": {"global": "0x9"}, "ts": 3, "pid": 1},
              {"name": "xproc", "cat": "ipc", "ph": "e", "id2": {"global": "0x9"}, "ts": 5, "pid": 2},
              {"name": "local", "cat": "ipc", "ph": "b", "id2": {"local": "0x9"}, "ts": 3, "pid": 1},
              {"name": "local", "cat": "ipc", "ph": "e", "id2": {"local": "0x9"}, "ts": 6, "pid": 1},
              {"name": "cpu", "ph": "C", "ts": 4, "pid": 3, "args": {"idle": "95.5", "state": "on"}},
              {"ph": "s", "cat": "ac2g", "name": "ac2g", "ts": 1, "pid": 3, "tid": 7},
              {"name": "noid", "cat": "ipc", "ph": "b", "ts": 3, "pid": 1},
              {"name": "last", "ph": "X", "ts": 12, "dur": 1, "pid": 3, "tid": 7}]
    report = import_trace(_write(tmp_path / "t.json", events), tmp_path / "o.sqlite", show_progress=False)
    assert (report.tasks, report.counters, report.skipped) == (6, 1, 2)
    db = _db(tmp_path / "o.sqlite")
    tasks = _tasks(db)
    assert tasks[:3] == [("x", "process[3].thread[7]", 0, 1_000_000, 0),
                         ("y", "process[3].thread[7]", 1_000_000, 2_000_000, 0),
                         ("(no name)", "process[3].thread[7]", 2_000_000, 3_000_000, 0)]
    # Ended in another process, at its own end (not left open to the end of the trace).
    assert ("xproc", "process[1].async", 3_000_000, 5_000_000, 0) in tasks
    assert ("local", "process[1].async", 3_000_000, 6_000_000, 0) in tasks
    assert db.execute("SELECT s.name, c.value FROM counter c JOIN counter_series s"
                      " ON s.id = c.series").fetchall() == [("cpu.idle", 95.5)]


def test_non_finite_numbers_as_old_kineto_and_python_write_them(tmp_path):
    """libkineto once wrote a zero-length copy's bandwidth as a bare ``inf`` (C's spelling,
    not JSON), and Python's json writes ``NaN``/``Infinity``: the file is read, the args
    keep them as text (SQLite's JSON functions read the details), and a counter sample
    that is not a finite number is skipped and counted."""
    text = ('{"traceEvents": ['
            '{"ph": "X", "cat": "Memcpy", "name": "Memcpy HtoD", "pid": 0, "tid": "stream 7",'
            ' "ts": 1614800519473270, "dur": 0, "args": {"bytes": 200,'
            ' "memory bandwidth (GB/s)": inf, "lo": -inf, "q": [nan, 1.5]}},\n'
            '{"ph": "X", "name": "k", "pid": 0, "tid": "stream 7", "ts": 1614800519473280,'
            ' "dur": 2, "args": {"ratio": NaN, "peak": Infinity, "inform": "inf"}},\n'
            '{"ph": "C", "name": "mem", "pid": 0, "ts": 1614800519473281, "args": {"v": NaN}},\n'
            '{"ph": "C", "name": "mem", "pid": 0, "ts": 1614800519473282, "args": {"v": inf}},\n'
            '{"ph": "C", "name": "mem", "pid": 0, "ts": 1614800519473283, "args": {"v": 3}}]}')
    source = tmp_path / "t.json"
    source.write_text(text)
    report = import_trace(source, tmp_path / "o.sqlite", show_progress=False)
    assert (report.tasks, report.counters, report.skipped) == (2, 1, 2)
    db = _db(tmp_path / "o.sqlite")
    details = [json.loads(d) for d, in db.execute("SELECT details FROM task ORDER BY start_ps")]
    assert details == [{"bytes": 200, "lo": "-inf", "memory bandwidth (GB/s)": "inf",
                        "q": ["nan", "1.5"]},
                       {"inform": "inf", "peak": "inf", "ratio": "nan"}]
    assert db.execute("SELECT json_extract(details, '$.peak') FROM task WHERE details"
                      " LIKE '%peak%'").fetchone() == ("inf",)
    assert db.execute("SELECT value FROM counter").fetchall() == [(3.0,)]
    # Where a number is needed, a non-finite one is still a clear error.
    bad = tmp_path / "bad.json"
    bad.write_text('{"traceEvents": [{"ph": "X", "name": "k", "pid": 0, "tid": 0, "ts": inf,'
                   ' "dur": 1}]}')
    with pytest.raises(TraceFormatError, match=r"bad.json:1:\d+: ts is not a number: inf"):
        import_trace(bad, tmp_path / "bad.sqlite", show_progress=False)


def test_many_bare_non_finite_values_strings_alike_and_broken_json_near_them(tmp_path):
    """Bare ``inf`` in every event (a training run's zero-length copies) is respelled a
    stretch at a time, never inside a string; metadata keeps valid JSON; a counter past
    64 bits is a float and one past a float is skipped; JSON broken next to a ``nan``
    is a located error, not a loop."""
    import signal

    lines = [f'{{"ph": "X", "cat": "Memcpy", "name": "copy: inf, nan", "pid": 0, "tid": 7,'
             f' "ts": {1000 + 10 * i}, "dur": 0, "args": {{"bw": inf, "note": "x: -inf,"}}}}'
             for i in range(3000)]
    lines += ['{"ph": "C", "name": "big", "pid": 0, "ts": 5, "args": {"v": 1e20}}',
              '{"ph": "C", "name": "huge", "pid": 0, "ts": 6, "args": {"v": 1e400}}',
              '{"ph": "C", "name": "vast", "pid": 0, "ts": 7, "args": {"v": 1e999999999}}']
    source = tmp_path / "t.json"
    source.write_text('{"deviceProperties": [{"bw": nan}], "traceEvents": [\n'
                      + ",\n".join(lines) + "\n]}")
    report = import_trace(source, tmp_path / "o.sqlite", show_progress=False)
    assert (report.tasks, report.counters, report.skipped) == (3000, 1, 2)
    db = _db(tmp_path / "o.sqlite")
    assert db.execute("SELECT count(*) FROM task t JOIN kind k ON k.id = t.kind WHERE"
                      " k.action = 'copy: inf, nan' AND json_extract(t.details, '$.bw') = 'inf'"
                      " AND json_extract(t.details, '$.note') = 'x: -inf,'").fetchone() == (3000,)
    assert db.execute("SELECT json_extract(metadata, '$.deviceProperties[0].bw') FROM run"
                      ).fetchone() == ("nan",)
    assert db.execute("SELECT value FROM counter").fetchall() == [(1e20,)]

    def stuck(*_):
        raise AssertionError("the reader loops on broken JSON next to a nan")

    previous = signal.signal(signal.SIGALRM, stuck)
    signal.alarm(30)
    try:
        for broken, message in (('"args": {"a": 1 nan}', "Expecting ',' delimiter"),
                                ('"args": {"a": 1, NaN}', "Expecting property name")):
            bad = tmp_path / "bad.json"
            bad.write_text('{"traceEvents": [\n{"ph": "X", "name": "k", "pid": 1, "tid": 1,'
                           f' "ts": 1, "dur": 2, {broken}}}]}}')
            with pytest.raises(TraceFormatError, match=rf"bad.json:2:\d+: invalid JSON: {message}"):
                import_trace(bad, tmp_path / "bad.sqlite", show_progress=False)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def test_a_thread_written_as_a_string_in_slices_and_a_number_in_flows_is_one(tmp_path):
    """The 2021 Kineto format: a launch on thread "25738", its flow's start on 25738."""
    events = [
        {"ph": "X", "name": "cudaLaunchKernel", "cat": "Runtime", "pid": 25738, "tid": "25738",
         "ts": 10, "dur": 5},
        {"ph": "s", "name": "launch", "cat": "async", "id": 1, "pid": 25738, "tid": 25738, "ts": 10},
        {"ph": "X", "name": "k", "cat": "Kernel", "pid": 0, "tid": "stream 7", "ts": 20, "dur": 3},
        {"ph": "f", "name": "launch", "cat": "async", "id": 1, "pid": 0, "tid": "stream 7", "ts": 20,
         "bp": "e"},
    ]
    src = tmp_path / "t.json"
    src.write_text(json.dumps({"traceEvents": events}))
    report = import_trace(src, tmp_path / "t.sqlite", show_progress=False)
    assert report.links == 1
    db = sqlite3.connect(tmp_path / "t.sqlite")
    assert db.execute("SELECT count(DISTINCT location) FROM task").fetchone() == (2,)


def test_the_2021_kineto_format_keeps_its_launch_flows(tmp_path, shared_trace):
    report = import_trace(shared_trace("kineto_resnet50_v100_2021.json.gz"), tmp_path / "k.sqlite",
                          show_progress=False)
    assert report.links == 9096
    db = sqlite3.connect(tmp_path / "k.sqlite")
    # Each leaves a runtime call on the CPU thread for the GPU op of the same correlation.
    rows = db.execute(
        "SELECT json_extract(a.details, '$.correlation') = json_extract(b.details, '$.correlation'),"
        " la.name, lb.name FROM task_link k JOIN task a ON a.id = k.src JOIN task b ON b.id = k.dst"
        " JOIN location la ON la.id = a.location JOIN location lb ON lb.id = b.location").fetchall()
    assert len(rows) == 9096 and all(same for same, _, _ in rows)
    assert all(a.startswith("python[25738].thread[") and ".stream[" in b for _, a, b in rows)
