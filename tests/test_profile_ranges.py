"""I11, ranges projected onto the GPU (Nsight Systems' ``nvtx_gpu_proj_trace``): on a
hand-made Kineto trace whose answer is known by construction, on an export built from
nsys' schema (a range ended on another thread), and on the real Nsight Systems export
in tests/data, against SQL written here over the export's own tables; and the analyses
cut to one range's or profiler step's GPU work (``--range``, ``--step``)."""
import json
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from profile_traces import kineto
from test_nsys_import import T, build_export

from simulator.analysis.profile.ops import load
from simulator.analysis.profile.ranges import nvtx_projection
from simulator.analysis.profile.report import analyze_profile
from simulator.analysis.profile.trace import ProfileTrace
from simulator.tracing.importers import import_trace
from simulator.tracing.writer import TraceError

US = 10 ** 6
SAXPY = Path(__file__).resolve().parent / "data" / "nsys_saxpy_mpi_a100.sqlite"


def _projection(trace):
    with ProfileTrace(trace) as t:
        return nvtx_projection(load(t))


def _by_name(report):
    return {r["name"]: r for r in report["ranges"]}


def test_a_range_holds_the_operations_its_thread_launched_inside_it(tmp_path):
    # thread 100: ProfilerStep#1 [0, 100) holds fwd [10, 40) and empty [50, 60).
    # k1, k2 are launched inside fwd; k3 later in the step; "straddle"'s call starts in
    # fwd and ends after it (the step's, not fwd's); "other" is launched in fwd's time
    # on thread 101 (no range's). The GPU annotation is Kineto's, not projected again.
    trace = kineto(tmp_path / "t", [
        {"name": "k1", "ts": 30, "dur": 10, "stream": 7, "launch": (12, 2)},
        {"name": "k2", "ts": 35, "dur": 10, "stream": 8, "launch": (20, 3)},
        {"name": "k3", "ts": 80, "dur": 15, "stream": 7, "launch": (70, 2)},
        {"name": "straddle", "ts": 60, "dur": 5, "stream": 7, "launch": (39, 3)},
        {"name": "other", "ts": 50, "dur": 2, "stream": 8, "launch": (15, 2), "tid": 101},
    ], cpu=[
        {"name": "ProfilerStep#1", "cat": "user_annotation", "ts": 0, "dur": 100},
        {"name": "fwd", "cat": "user_annotation", "ts": 10, "dur": 30},
        {"name": "empty", "cat": "user_annotation", "ts": 50, "dur": 10},
        {"name": "ProfilerStep#1", "cat": "gpu_user_annotation", "ts": 30, "dur": 65,
         "stream": 7},
    ])
    report = _projection(trace)
    got = {name: (r["proj_start_ps"], r["proj_end_ps"], r["gpu_ops"], r["level"], r["children"])
           for name, r in _by_name(report).items()}
    assert got == {"ProfilerStep#1": (30 * US, 95 * US, 4, 0, 2),
                   "fwd": (30 * US, 45 * US, 2, 1, 0),
                   "empty": (None, None, 0, 1, 0)}
    assert [n["name"] for n in report["names"]] == ["ProfilerStep#1", "fwd", "empty"]
    step = _by_name(report)["ProfilerStep#1"]
    assert _by_name(report)["fwd"]["parent"] == step["task"] and step["parent"] is None


def test_a_trace_without_ranges_says_what_it_needs(tmp_path):
    trace = kineto(tmp_path / "t", [{"name": "k", "ts": 1, "dur": 1, "stream": 7,
                                     "launch": (0, 0.5)}])
    assert "needs ranges" in _projection(trace)["unavailable"]


def test_a_range_ended_on_another_thread_is_left_out(tmp_path):
    """nsys' schema (tests/test_nsys_import.py): "load" starts on rank 0 and ends on a
    worker; "step" [T+90, T+450) launched a kernel (call at T+100, kernel [T+200, T+350)),
    a memset (T+120; [T+150, T+160)) and a kernel by the driver (T+410; [T+500, T+600));
    "forward" [T+95, T+128) the first two."""
    out = tmp_path / "out.sqlite"
    import_trace(build_export(tmp_path / "built.sqlite"), out, show_progress=False)
    ranges = _by_name(_projection(out))
    assert "load" not in ranges
    ns = 1000
    assert (ranges["step"]["proj_start_ps"], ranges["step"]["proj_end_ps"],
            ranges["step"]["gpu_ops"]) == ((T + 150) * ns, (T + 600) * ns, 3)
    assert (ranges["forward"]["proj_start_ps"], ranges["forward"]["proj_end_ps"],
            ranges["forward"]["gpu_ops"]) == ((T + 150) * ns, (T + 350) * ns, 2)


PROJECTION_SQL = """
SELECT coalesce(n.text, s.value), n.start, n.end, min(g.start), max(g.end), count(g.start)
FROM NVTX_EVENTS n LEFT JOIN StringIds s ON s.id = n.textId
LEFT JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON r.globalTid = n.globalTid AND r.eventClass != 67
     AND r.start >= n.start AND r.end <= n.end
LEFT JOIN (SELECT start, end, correlationId, globalPid FROM CUPTI_ACTIVITY_KIND_KERNEL
           UNION ALL SELECT start, end, correlationId, globalPid FROM CUPTI_ACTIVITY_KIND_MEMCPY
           UNION ALL SELECT start, end, correlationId, globalPid FROM CUPTI_ACTIVITY_KIND_MEMSET) g
     ON g.correlationId = r.correlationId AND g.globalPid = r.globalTid / 16777216 * 16777216
WHERE n.eventType IN (59, 60) AND (n.endGlobalTid IS NULL OR n.endGlobalTid = n.globalTid)
GROUP BY n.rowid
"""
"""nsys' definition over the export: an operation belongs to a range when its launching
call (same correlationId, same process; not a backtrace row, eventClass 67) lies inside
the range on its thread. The global process id is the thread id's upper bits."""


def test_the_real_nsys_export_projects_as_sql_over_its_own_tables(tmp_path):
    out = tmp_path / "saxpy.sqlite"
    import_trace(SAXPY, out, show_progress=False)
    db = sqlite3.connect(SAXPY.resolve().as_uri() + "?mode=ro", uri=True)
    try:
        expected = sorted((name, start * 1000, end * 1000,
                           None if lo is None else lo * 1000, None if hi is None else hi * 1000, n)
                          for name, start, end, lo, hi, n in db.execute(PROJECTION_SQL))
    finally:
        db.close()
    report = _projection(out)
    ours = sorted((r["name"], r["start_ps"], r["end_ps"], r["proj_start_ps"], r["proj_end_ps"],
                   r["gpu_ops"]) for r in report["ranges"])
    assert ours == expected
    # 22 ranges (MPI calls and 5 "saxpy"), each saxpy launching one operation
    assert len(ours) == 22 and sum(1 for r in ours if r[5]) == 5
    (saxpy,) = [n for n in report["names"] if n["name"] == "saxpy"]
    assert (saxpy["instances"], saxpy["gpu_ops"]) == (5, 5)


def test_cloverleaf_records_no_nvtx_and_the_report_says_so(tmp_path, shared_trace):
    source = shared_trace("nsys_cloverleaf_a100_perlmutter.sqlite")
    db = sqlite3.connect(source.resolve().as_uri() + "?mode=ro", uri=True)
    try:
        tables = {t for (t,) in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    finally:
        db.close()
    assert "NVTX_EVENTS" not in tables and "CUPTI_ACTIVITY_KIND_KERNEL" in tables
    out = tmp_path / "clover.sqlite"
    subprocess.run([sys.executable, "-m", "simulator", "import", str(source), "-o", str(out)],
                   check=True, capture_output=True)
    assert "unavailable" in _projection(out)


@pytest.mark.parametrize("name, steps, ops", [
    ("pytorch_resnet18_h100.json.gz", 5, 146),
    ("kineto_resnet50_v100_2021.json.gz", 6, 926)])
def test_each_profiler_step_of_a_real_kineto_trace_projects_its_launches(
        tmp_path, shared_trace, name, steps, ops):
    """Every step of these inference and training loops launches the same work from the
    main thread (the 2021 format names a step an Operator); each projection starts at
    or after its step does."""
    out = tmp_path / "t.sqlite"
    import_trace(shared_trace(name), out, show_progress=False)
    found = [r for r in _projection(out)["ranges"] if r["name"].startswith("ProfilerStep#")]
    assert len(found) == steps and {r["gpu_ops"] for r in found} == {ops}
    assert all(r["proj_start_ps"] >= r["start_ps"] for r in found)


def _two_steps(tmp_path):
    """Two profiler steps of one thread, each with a "fwd" annotation launching a kernel
    (step 1: k1 [10, 20); step 2: k2 [70, 90)), and a copy launched outside both."""
    return kineto(tmp_path / "t", [
        {"name": "k1", "ts": 10, "dur": 10, "stream": 7, "launch": (5, 2)},
        {"name": "k2", "ts": 70, "dur": 20, "stream": 7, "launch": (60, 2)},
        {"name": "Memcpy DtoH", "cat": "gpu_memcpy", "ts": 120, "dur": 5, "stream": 7,
         "launch": (110, 1), "call": "cudaMemcpyAsync"},
    ], cpu=[{"name": "ProfilerStep#1", "cat": "user_annotation", "ts": 0, "dur": 50},
            {"name": "fwd", "cat": "user_annotation", "ts": 1, "dur": 10},
            {"name": "ProfilerStep#2", "cat": "user_annotation", "ts": 50, "dur": 50},
            {"name": "fwd", "cat": "user_annotation", "ts": 55, "dur": 10}])


def test_a_step_or_range_cuts_the_analyses_to_its_gpu_work(tmp_path):
    trace = _two_steps(tmp_path)
    whole = analyze_profile(trace)
    assert whole["scope"] is None and whole["devices"][0]["span_ps"] == 115 * US
    step = analyze_profile(trace, step=2)
    assert {k: step["scope"][k] for k in ("range", "gpu_ops", "t0", "t1")} == {
        "range": "ProfilerStep#2", "gpu_ops": 1, "t0": 70 * US, "t1": 90 * US}
    assert step["devices"][0]["span_ps"] == 20 * US and step["devices"][0]["idle_ps"] == 0
    first = analyze_profile(trace, range_name="fwd#0")
    assert (first["scope"]["t0"], first["scope"]["t1"]) == (10 * US, 20 * US)
    assert [k["name"] for k in first["kernels"]] == ["k1"]


@pytest.mark.parametrize("scope, message", [
    ({"range_name": "fwd"}, "2 ranges are called 'fwd'; name one as fwd#0 to fwd#1"),
    ({"range_name": "fwd#2"}, "'fwd' has 2 instances, #0 to #1; there is no #2"),
    ({"range_name": "fdw"}, "no range is called 'fdw'; the trace has 3 range names, such as"
                            " 'fwd'"),
    ({"step": 3}, "there is no ProfilerStep#3; the trace has steps 1 to 2")])
def test_a_range_the_trace_lacks_is_a_one_line_error(tmp_path, scope, message):
    with pytest.raises(TraceError, match=re.escape(message)):
        analyze_profile(_two_steps(tmp_path), **scope)


def test_the_cli_scopes_to_a_step_and_refuses_what_cannot_be_scoped(tmp_path):
    trace = _two_steps(tmp_path)

    def run(*args):
        return subprocess.run([sys.executable, "-m", "simulator", "analyze", str(trace), *args],
                              capture_output=True, text=True)
    done = run("--step", "1", "--json")
    assert done.returncode == 0 and json.loads(done.stdout)["scope"]["range"] == "ProfilerStep#1"
    assert "ProfilerStep#1 on " in run("--step", "1").stdout
    for args, error in ((["--range", "nope"], "no range is called 'nope'"),
                        (["--step", "1", "--window", "0:10"], "leave out --kernel and --window"),
                        (["--step", "-1"], "expected a step number")):
        failed = run(*args)
        assert failed.returncode != 0 and error in failed.stderr
