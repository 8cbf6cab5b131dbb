"""Importers on small fixture files, including every bad-input case."""
import json
import os
import sqlite3
import subprocess
import sys

import pytest
from trace_compare import canonical_tasks

from simulator.tracing.importers import TraceFormatError, detect_format, import_trace

V3_ROWS = [  # task_id, parent_id, kind, what, location, start_time (s), end_time (s)
    ("sim", "", "Simulation", "Simulation", "Driver", 0.0, 2e-6),
    ("k1", "sim", "Driver Command", "*driver.LaunchKernelCommand", "Driver", 1e-9, 1.9e-6),
    ("m1_req_out", "k1", "req_out", "*mem.ReadReq", "GPU[1].SA[0].CU[3]", 1.5e-9, 9.25e-9),
    ("m1@GPU[1].L2[2]", "m1_req_out", "req_in", "*mem.ReadReq", "GPU[1].L2[2]", 2.001e-9, 8e-9),
]


def _akita_v3(path, rows=V3_ROWS):
    db = sqlite3.connect(path)
    db.execute("create table trace (task_id varchar(200) null unique, parent_id varchar(200) null,"
               " kind varchar(100) null, what varchar(100) null, location varchar(100) null,"
               " start_time float null, end_time float null)")
    db.executemany("insert into trace values (?,?,?,?,?,?,?)", rows)
    db.commit()
    db.close()


def _akita_v45(path, version):
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE trace (ID, ParentID, Kind, What, Location, StartTime, EndTime)")
    if version == 5:
        db.execute("CREATE TABLE location (ID, Locale)")
        db.executemany("INSERT INTO location VALUES (?, ?)", [(1, "GPU[1].CU[0]"), (2, "GPU[1].L2[0]")])
        rows = [(10, 0, "req_out", "ReadReq", 1, 1000.0, 9000.0),
                (11, 10, "req_in", "ReadReq", 2, 2500.0, 8000.0)]
    else:
        rows = [("a", "", "req_out", "*mem.ReadReq", "GPU[1].CU[0]", 1e-9, 9e-9),
                ("b", "a", "req_in", "*mem.ReadReq", "GPU[1].L2[0]", 2.5e-9, 8e-9)]
    db.executemany("INSERT INTO trace VALUES (?,?,?,?,?,?,?)", rows)
    db.commit()
    db.close()


def test_akita_v3_times_in_seconds_become_exact_picoseconds(tmp_path):
    _akita_v3(tmp_path / "a.sqlite3")
    assert detect_format(tmp_path / "a.sqlite3") == "akita-v3"
    report = import_trace(tmp_path / "a.sqlite3", tmp_path / "out.sqlite", show_progress=False)
    assert (report.format, report.tasks, report.orphans) == ("akita-v3", 4, 0)
    got = {t[0]: t for t in canonical_tasks(tmp_path / "out.sqlite")}
    assert got["m1@GPU[1].L2[2]"] == ("m1@GPU[1].L2[2]", "m1_req_out", "req_in", "*mem.ReadReq",
                                      "GPU[1].L2[2]", 2001, 8000, None)
    assert got["m1_req_out"][5:7] == (1500, 9250)
    assert got["sim"][1] is None


@pytest.mark.parametrize("version", [4, 5])
def test_akita_datarecorder_v4_seconds_and_v5_picoseconds(tmp_path, version):
    _akita_v45(tmp_path / "d.sqlite3", version)
    report = import_trace(tmp_path / "d.sqlite3", tmp_path / "o.sqlite", show_progress=False)
    assert (report.format, report.tasks, report.orphans) == (f"akita-v{version}", 2, 0)
    got = canonical_tasks(tmp_path / "o.sqlite")
    req_in = next(t for t in got if t[2] == "req_in")
    assert req_in[4] == "GPU[1].L2[0]"
    assert req_in[5:7] == (2500, 8000)
    db = sqlite3.connect(tmp_path / "o.sqlite")
    assert db.execute("SELECT source, completed, finalized FROM run").fetchone() == (report.format, 1, 1)
    assert db.execute("SELECT sum(buffer_ps) FROM metric_bin m JOIN location l ON l.id = m.location"
                      " WHERE l.name = 'GPU[1].L2[0]' AND m.level = l.pyramid_min_level"
                      ).fetchone() == (1500,)


def test_daisen_csv_with_akita_separators(tmp_path):
    src = tmp_path / "t.csv"
    src.write_text("ID, ParentID, Kind, What, Where, Start, End\n"
                   "sim, , Simulation, Simulation, Driver, 0.0000000000, 0.0000010000\n"
                   "w1, sim, wavefront, wavefront, GPU.CU[1], 0.0000000012, 0.0000000099\n")
    report = import_trace(src, tmp_path / "o.sqlite", show_progress=False)
    assert (report.format, report.tasks) == ("daisen-csv", 2)
    got = {t[0]: t for t in canonical_tasks(tmp_path / "o.sqlite")}
    assert got["w1"] == ("w1", "sim", "wavefront", "wavefront", "GPU.CU[1]", 1200, 9900, None)


def test_chrome_json_nesting_per_track_and_metadata_names(tmp_path):
    events = [
        {"name": "process_name", "ph": "M", "pid": 7, "args": {"name": "GPU"}},
        {"name": "outer", "cat": "kernel", "ph": "X", "ts": 1.5, "dur": 10, "pid": 7, "tid": 1},
        {"name": "inner", "cat": "inst", "ph": "B", "ts": 2, "pid": 7, "tid": 1, "args": {"pc": 4}},
        {"name": "inner", "ph": "E", "ts": 3.000001, "pid": 7, "tid": 1},
        {"name": "other", "cat": "inst", "ph": "X", "ts": 2, "dur": 1, "pid": 7, "tid": 2},
        {"name": "counter", "ph": "C", "ts": 2, "pid": 7, "args": {"v": 1}},
        {"name": "thread_name", "ph": "M", "pid": 7, "tid": 1, "args": {"name": "CU[0]"}},
    ]
    src = tmp_path / "t.json"
    src.write_text(json.dumps({"traceEvents": events, "displayTimeUnit": "ns"}, indent=1))
    report = import_trace(src, tmp_path / "o.sqlite", show_progress=False)
    assert (report.format, report.tasks, report.counters, report.skipped) == ("chrome", 3, 1, 0)
    got = {t[3]: t for t in canonical_tasks(tmp_path / "o.sqlite")}
    assert got["inner"][1] == got["outer"][0]
    assert got["inner"][4] == "GPU.CU[0]" and got["other"][4] == "GPU.thread[2]"
    # times relative to the first event (1.5 µs), which is the run's time origin
    assert got["inner"][5:7] == (500_000, 1_500_001)
    assert got["outer"][5:7] == (0, 10_000_000)
    assert sqlite3.connect(tmp_path / "o.sqlite").execute(
        "SELECT time_origin, clock FROM run").fetchone() == ("0.0000015", "source")
    assert json.loads(got["inner"][7]) == {"pc": 4}
    assert got["other"][1] is None


def _bad_akita_missing_column(p):
    db = sqlite3.connect(p)
    db.execute("create table trace (task_id, kind)")
    db.commit()


def _bad_akita_end_before_start(p):
    _akita_v3(p, V3_ROWS[:1] + [("x", "sim", "k", "w", "L", 5e-9, 1e-9)])


def _bad_akita_null_kind(p):
    _akita_v3(p, V3_ROWS[:1] + [("x", "sim", None, "w", "L", 1e-9, 2e-9)])


def _bad_akita_text_time(p):
    _akita_v3(p, V3_ROWS[:1] + [("x", "sim", "k", "w", "L", "soon", 2e-9)])


def _bad_akita_duplicate(p):
    db = sqlite3.connect(p)
    db.execute("CREATE TABLE trace (ID, ParentID, Kind, What, Location, StartTime, EndTime)")
    db.executemany("INSERT INTO trace VALUES (?,?,?,?,?,?,?)",
                   [("a", "", "k", "w", "L", 0, 1e-9), ("a", "", "k", "w", "L", 0, 1e-9)])
    db.commit()


BAD_INPUTS = [
    ("trace.sqlite3", _bad_akita_missing_column, r"lacks the akita columns"),
    ("trace.sqlite3", _bad_akita_end_before_start, r"trace row 2: task 'x' ends"),
    ("trace.sqlite3", _bad_akita_null_kind, r"trace row 2: .*must not be NULL"),
    ("trace.sqlite3", _bad_akita_text_time, r"trace row 2: start time is not a number: 'soon'"),
    ("trace.sqlite3", _bad_akita_duplicate, r"trace row 2: duplicate task ID 'a'"),
    ("t.csv", "ID, ParentID, Kind, What, Where, Start, End\na, , k, w, L, 0.1, 0.2, 9\n",
     r"t.csv:2: expected 7 fields, found 8"),
    ("t.csv", "ID, ParentID, Kind, What, Where, Start, End\na, , k, w, L, 0.1, 0.2\n"
              "b, a, k, w, L, zero, 0.3\n", r"t.csv:3: Start is not a number: 'zero'"),
    ("t.csv", "ID, ParentID, Kind, What, Where, Start\n", r"t.csv:1: header is .*; expected"),
    ("t.json", '[{"name": "a", "ph": "X", "ts": 1, "dur": 2},\n {"name": "b", "ph": "X", "ts": }]',
     r"t.json:2:\d+: invalid JSON"),
    ("t.json", '[{"name": "a", "ph": "X", "ts": 1, "dur": 1, "pid": [1]}]',
     r"t.json:1:2: 'pid' must be an integer or a string, not \[1\]"),
    ("t.json", '[{"name": "a", "ph": "X", "ts": 1, "dur": 1, "pid": NaN}]',
     r"t.json:1:2: 'pid' must be an integer or a string, not NaN"),
    ("t.json", '[{"name": "a", "ph": "X", "ts": 1, "dur": 1, "tid": 1.5}]',
     r"t.json:1:2: 'tid' must be an integer or a string, not 1.5"),
    ("t.json", '[{"name": "a", "ph": "X", "dur": 1}]', r"t.json:1:2: event has no 'ts'"),
    ("t.json", '{"meta": 1}', r"no \"traceEvents\" array"),
    ("t.json", '{"traceEvents": [{"name": "a", "ph": "X", "ts": 1, "dur": 1}', r"unexpected end of file"),
    ("t.json", '[{"name": "a", "ph": "X", "ts": 1, "dur": 1}, {"name": "b", "ph": "X",',
     r"t.json:1:\d+: invalid JSON"),
    ("t.bin", "\x00\x01garbage", r"unknown trace format"),
    ("run.nsys-rep", "\x00\x01report", r"run.nsys-rep: an Nsight Systems report is read once"
     r" exported to SQLite: nsys export --type sqlite .*run.nsys-rep$"),
]


@pytest.mark.parametrize("name,content,message", BAD_INPUTS)
def test_bad_input_gets_a_positioned_error_and_leaves_nothing(tmp_path, name, content, message):
    src = tmp_path / name
    if callable(content):
        content(src)
    else:
        src.write_text(content)
    out = tmp_path / "out" / "existing.sqlite"
    out.parent.mkdir()
    out.write_bytes(b"keep me")
    with pytest.raises(TraceFormatError, match=message):
        import_trace(src, out, show_progress=False)
    assert out.read_bytes() == b"keep me"
    assert sorted(p.name for p in out.parent.iterdir()) == ["existing.sqlite"]


def test_missing_parents_are_counted_not_defaulted(tmp_path):
    _akita_v3(tmp_path / "a.sqlite3", V3_ROWS + [("lost", "nowhere", "req_in", "w", "L", 1e-9, 2e-9)])
    report = import_trace(tmp_path / "a.sqlite3", tmp_path / "o.sqlite", show_progress=False)
    assert report.orphans == 1
    db = sqlite3.connect(tmp_path / "o.sqlite")
    assert db.execute("SELECT orphan_tasks FROM run").fetchone() == (1,)
    assert db.execute("SELECT parent FROM task WHERE ext_id = 'lost'").fetchone() == (None,)


BOTH_BUILDS = """
import sys
from simulator.tracing.importers import daisen_csv, import_trace, loader
loader.BATCH = daisen_csv.BLOCK = 5  # many blocks: parents near and far, repeats across them
import_trace(sys.argv[1], sys.argv[2], show_progress=False)
"""
# The pyramid compared by bin width: the Python build counts levels from a base width
# chosen from the trace's span, the compiled one from 1 ps (``pyramid_build.BASE_PS``).
TABLES = ("task ORDER BY id", "task_link ORDER BY src, dst, kind", "instant ORDER BY id",
          "counter ORDER BY series, time_ps", "long_task ORDER BY 1, 2, 3",
          "(SELECT id, name, task_count, busy_ps, max_duration_ps, short_duration_ps, first_start_ps,"
          " last_end_ps, sort_index, (SELECT pyramid_base_ps FROM run) << pyramid_min_level"
          " FROM location) ORDER BY 1",
          "(SELECT location, (SELECT pyramid_base_ps FROM run) << level AS width, bin, req_in_started,"
          " req_in_ended, req_in_latency_ps, task_ps, buffer_ps, req_out_ps, busy_ps FROM metric_bin)"
          " ORDER BY 1, 2, 3",
          "(SELECT location, (SELECT pyramid_base_ps FROM run) << level AS width, bin, kind,"
          " started, task_ps FROM metric_kind_bin) ORDER BY 1, 2, 3, 4")


def _both_builds_inputs(tmp_path):
    rows = ["ID, ParentID, Kind, What, Where, Start, End"]
    for k in range(60):  # children first, their parents after (akita writes tasks as they end)
        rows.append(f"in{k}, out{k}, req_in, ReadReq, GPU.L2[{k % 3}], {k + 2}e-9, {k + 5}e-9")
        rows.append(f"out{k}, {'kernel' if k % 7 else 'wf' + str(k // 7)}, req_out, ReadReq,"
                    f" GPU.CU[{k % 2}], {k}e-9, {k + 6}e-9")
        if k % 7 == 6:
            rows.append(f"wf{k // 7}, kernel, wavefront, wf, GPU.CU[0], 0, {k + 7}e-9")
    rows.append(rows[3])  # a repeat far from its first row
    rows.append("kernel, , kernel, k, GPU.CP, 0, 0.0000001")
    (tmp_path / "t.csv").write_text("\n".join(rows) + "\n")
    events = [{"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "GPU"}}]
    for k in range(40):
        events += [{"ph": "X", "name": f"k{k}", "cat": "kernel", "pid": 1, "tid": 7, "ts": 10 * k + 2,
                    "dur": 3.5, "args": {"k": k}},
                   {"ph": "X", "name": "launch", "cat": "cuda_runtime", "pid": 2, "tid": 2,
                    "ts": 10 * k, "dur": 1},
                   {"ph": "s", "id": k, "pid": 2, "tid": 2, "ts": 10 * k + 0.5, "cat": "ac2g"},
                   {"ph": "f", "id": k, "pid": 1, "tid": 7, "ts": 10 * k + 2, "cat": "ac2g", "bp": "e"},
                   {"ph": "i", "name": "mark", "pid": 2, "tid": 2, "ts": 10 * k + 0.25},
                   {"ph": "C", "name": "mem", "pid": 1, "ts": 10 * k, "args": {"used": k}}]
    events.append({"ph": "X", "name": "step", "cat": "cpu_op", "pid": 2, "tid": 2, "ts": 0, "dur": 500})
    (tmp_path / "t.json").write_text(json.dumps({"traceEvents": events}))


@pytest.mark.parametrize("name", ["t.csv", "t.json"])
def test_both_builds_import_identical_traces(tmp_path, name):
    """The compiled build (bulk I/O in C, the track sweep, the column loops, the pyramid
    built as tasks arrive) writes what plain Python writes, table for table."""
    from simulator import build
    if "cython" not in build.available_builds():
        pytest.skip("compiled build missing")
    _both_builds_inputs(tmp_path)
    dumps = []
    for pure in ("1", "0"):
        out = tmp_path / f"{pure}.sqlite"
        env = dict(os.environ, SIMULATOR_PUREPYTHON=pure, PYTHONPATH=os.pathsep.join(sys.path))
        subprocess.run([sys.executable, "-c", BOTH_BUILDS, tmp_path / name, out], env=env, check=True)
        db = sqlite3.connect(out)
        dumps.append({t: db.execute(f"SELECT * FROM {t}").fetchall() for t in TABLES})
    assert dumps[0] == dumps[1]
    assert len(dumps[0]["task ORDER BY id"]) > 60 and dumps[0][TABLES[6]]


def test_a_pyramid_fed_again_in_first_event_order_is_the_same(tmp_path, monkeypatch):
    """Tasks whose order holds too many in flight are fed to the pyramid again, sorted by
    their first events: the same pyramid as from one pass."""
    from simulator.tracing.importers import loader
    _both_builds_inputs(tmp_path)
    dumps = []
    for budget in (loader.PYRAMID_BUDGET, 0):
        monkeypatch.setattr(loader, "PYRAMID_BUDGET", budget)
        for name in ("t.csv", "t.json"):
            out = tmp_path / f"{name}-{budget}.sqlite"
            import_trace(tmp_path / name, out, show_progress=False)
            db = sqlite3.connect(out)
            dumps.append({t: db.execute(f"SELECT * FROM {t}").fetchall() for t in TABLES})
    assert dumps[:2] == dumps[2:]


def test_tasks_written_straight_out_or_staged_make_the_same_trace(tmp_path, monkeypatch):
    """A Daisen CSV (times on a declared origin) goes straight into the output, with far
    parents set at the end and the pyramid of their locations rebuilt; the trace is the
    one written from the scratch database."""
    from simulator.tracing.importers import daisen_csv, loader
    _both_builds_inputs(tmp_path)
    monkeypatch.setattr(daisen_csv, "CHUNK", 300)  # many blocks: parents far from children
    rows = (tmp_path / "t.csv").read_text().splitlines()
    waits = [f"w{k}, far_out, req_in, ReadReq, GPU.L2[9], {k + 3}e-9, {k + 4}e-9" for k in range(3)]
    rows = rows[:1] + waits + rows[1:-2] + ["far_out, kernel, req_out, ReadReq, GPU.CU[0], 0, 1e-8"]
    (tmp_path / "t.csv").write_text("\n".join(rows + ["kernel, , kernel, k, GPU.CP, 0, 0.0000001"]) + "\n")
    dumps = []
    for direct in (True, False):
        if not direct:
            monkeypatch.setattr(loader.Loader, "direct", False, raising=False)
            monkeypatch.setattr(loader.Loader, "_staged", _always_staged)
        out = tmp_path / f"{direct}.sqlite"
        import_trace(tmp_path / "t.csv", out, show_progress=False)
        db = sqlite3.connect(out)
        dumps.append({t: db.execute(f"SELECT * FROM {t}").fetchall() for t in TABLES})
    assert dumps[0] == dumps[1]
    waited = sqlite3.connect(tmp_path / "True.sqlite").execute(
        "SELECT sum(buffer_ps) FROM metric_bin m JOIN location l ON l.id = m.location"
        " WHERE l.name = 'GPU.L2[9]' AND m.level = l.pyramid_min_level").fetchone()[0]
    assert waited == sum(k + 3 for k in range(3)) * 1000  # each from the far request's start


def _always_staged(self, block, wanted):
    self.direct = False
    self.stage_db.add_block(block, wanted)


KILLED_WRITER = """
import sqlite3, sys, os, signal
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute("PRAGMA cache_size=10")  # the batch spills into the file before its commit
db.execute("BEGIN")
db.executemany("insert into trace values (?,?,?,?,?,?,?)",
               [(f"late{i}", "sim", "req_in", "*mem.ReadReq", "GPU[1].L2[0]", 1e-6, 1.5e-6)
                for i in range(20000)])
print("inside", flush=True)
os.kill(os.getpid(), signal.SIGKILL)  # killed inside its batch, as an MGPUSim run can be
"""


def test_a_trace_whose_writer_was_killed_inside_a_batch_imports_what_it_committed(tmp_path):
    """akita's SQLite writer inserts in transactions of 100,000 rows: a run killed inside
    one leaves its rollback journal beside the file. The input is copied with it and
    SQLite undoes the batch in the copy; the input and its journal are left as they were."""
    src = tmp_path / "killed.sqlite3"
    _akita_v3(src)
    done = subprocess.run([sys.executable, "-c", KILLED_WRITER, str(src)], capture_output=True,
                          text=True)
    assert done.stdout == "inside\n" and done.returncode == -9
    journal = tmp_path / "killed.sqlite3-journal"
    assert journal.stat().st_size > 0
    before = {p.name: p.read_bytes() for p in (src, journal)}
    out = tmp_path / "out" / "t.sqlite"
    out.parent.mkdir()
    assert detect_format(src, scratch=out) == "akita-v3"
    report = import_trace(src, out, show_progress=False)
    assert (report.tasks, report.rolled_back) == (len(V3_ROWS), True)
    assert {t[0] for t in canonical_tasks(out)} == {row[0] for row in V3_ROWS}
    assert {p.name: p.read_bytes() for p in (src, journal)} == before  # the input untouched
    assert sorted(p.name for p in out.parent.iterdir()) == ["t.sqlite"]  # no copies left
    cli = subprocess.run([sys.executable, "-m", "simulator", "import", str(src), "-o",
                          str(tmp_path / "cli.sqlite")], capture_output=True, text=True)
    assert cli.returncode == 0 and "left inside a transaction" in cli.stdout
