"""``python -m simulator sweep``: the same points on every scheduler, failures, resume.

The schedulers are real: a forkserver process pool, a dask.distributed LocalCluster,
and a `dask scheduler` with a `dask worker` started as processes on localhost.
"""
import csv
import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from simulator.__main__ import main
from simulator.runs.sweep import METRIC_COLUMNS, Sweep, SweepError, parse_vary
from simulator.runs.sweep_point import option_names
from simulator.workloads import WORKLOADS

ROOT = Path(__file__).resolve().parents[1]
SMALL = ["vectoradd", "--size", "2048", "--local", "64", "--no-progress"]


def sweep(tmp, name, *extra):
    out = tmp / name
    code = main(["sweep", *SMALL, "-o", str(out), *extra])
    return code, out


def summary(directory):
    with open(directory / "summary.csv", newline="") as handle:
        return list(csv.DictReader(handle))


def results(directory, keys):
    """The rows without the columns that may differ between schedulers (wall time)."""
    return [{k: row[k] for k in (*keys, *METRIC_COLUMNS, "trace", "status", "error")}
            for row in summary(directory)]


GRID = ["--vary", "cp.wg_dispatch_per_cycle=1,2", "--vary", "local=64,128"]
KEYS = ("cp.wg_dispatch_per_cycle", "local")


def test_process_pool_and_local_cluster_give_identical_summaries(tmp_path, capsys):
    code, pool = sweep(tmp_path, "pool", *GRID, "--workers", "2")
    assert code == 0, capsys.readouterr().err
    code, cluster = sweep(tmp_path, "cluster", *GRID, "--workers", "2", "--scheduler", "dask",
                          "--results", "send")
    assert code == 0, capsys.readouterr().err
    rows = results(pool, KEYS)
    assert rows == results(cluster, KEYS)
    assert [(r["cp.wg_dispatch_per_cycle"], r["local"]) for r in rows] == [
        ("1", "64"), ("1", "128"), ("2", "64"), ("2", "128")]
    for row in rows:
        assert row["status"] == "ok" and row["error"] == ""
        assert int(row["kernels"]) == 1 and int(row["instructions"]) > 0
        assert 0 < float(row["cu_busy"]) <= 1 and 0 < float(row["l2_busy"]) <= 1
        assert 0 <= float(row["l1v_hit_rate"]) <= 1
        for directory in (pool, cluster):
            # The row's time is the trace's, and the trace runs the point's configuration.
            db = sqlite3.connect(f"file:{directory / row['trace']}?mode=ro", uri=True)
            end, config, command = db.execute(
                "SELECT virtual_end_ps, config, command FROM run").fetchone()
            db.close()
            assert end == int(row["simulated_time_ps"])
            assert f'"wg_dispatch_per_cycle": {row["cp.wg_dispatch_per_cycle"]}' in config
            assert f"--local {row['local']}" in command
    # A larger work-group halves the work-groups to dispatch: dispatch rate matters less.
    times = {(r["cp.wg_dispatch_per_cycle"], r["local"]): int(r["simulated_time_ps"])
             for r in rows}
    assert times[("2", "64")] < times[("1", "64")]
    assert not list(cluster.glob(".*")), "no token or partial file is left behind"


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.slow
def test_an_existing_dask_cluster_over_tcp_gives_the_same_summary(tmp_path, capsys):
    port = _free_port()
    address = f"tcp://127.0.0.1:{port}"
    log = open(tmp_path / "cluster.log", "w")
    procs = [subprocess.Popen(["dask", "scheduler", "--host", "127.0.0.1", "--port", str(port),
                               "--no-dashboard"], stdout=log, stderr=subprocess.STDOUT)]
    try:
        procs.append(subprocess.Popen(
            ["dask", "worker", address, "--nworkers", "2", "--nthreads", "1", "--no-dashboard",
             "--local-directory", str(tmp_path / "worker")], stdout=log, stderr=subprocess.STDOUT,
            cwd=ROOT))
        vary = ["--vary", "cp.wg_dispatch_per_cycle=1,2"]
        code, remote = sweep(tmp_path, "remote", *vary, "--scheduler", address)
        assert code == 0, capsys.readouterr().err + (tmp_path / "cluster.log").read_text()
        code, local = sweep(tmp_path, "local", *vary)
        assert code == 0
        keys = ("cp.wg_dispatch_per_cycle",)
        assert results(remote, keys) == results(local, keys)
    finally:
        for proc in reversed(procs):
            proc.terminate()
        for proc in procs:
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        log.close()


def test_a_bad_value_fails_its_point_and_the_others_run(tmp_path, capsys):
    code, out = sweep(tmp_path, "bad", "--vary", "l2.banks=8,0", "--vary", "local=64,100000000")
    err = capsys.readouterr().err
    assert code == 1 and "3 of 4 points failed" in err
    rows = {(r["l2.banks"], r["local"]): r for r in summary(out)}
    assert rows[("8", "64")]["status"] == "ok" and (out / rows[("8", "64")]["trace"]).is_file()
    assert rows[("0", "64")]["status"] == "failed"
    assert rows[("0", "64")]["error"] == "parameters must be positive: l2.banks"
    assert rows[("0", "64")]["trace"] == "" and rows[("0", "64")]["simulated_time_ps"] == ""
    assert rows[("8", "100000000")]["status"] == "failed" and rows[("8", "100000000")]["error"]
    assert sorted(p.name for p in out.glob("*.sqlite")) == [rows[("8", "64")]["trace"]]


def test_a_rerun_skips_done_points_and_runs_only_new_values(tmp_path, capsys):
    code, out = sweep(tmp_path, "resume", "--vary", "local=64,128")
    assert code == 0
    first = {r["local"]: r for r in summary(out)}
    stamps = {p.name: p.stat().st_mtime_ns for p in out.glob("*.sqlite")}
    capsys.readouterr()
    time.sleep(0.01)
    code, _ = sweep(tmp_path, "resume", "--vary", "local=64,128,256")
    assert code == 0
    assert "3 points (1 run now, 2 done before)" in capsys.readouterr().out
    after = {r["local"]: r for r in summary(out)}
    assert list(after) == ["64", "128", "256"] and after["256"]["status"] == "ok"
    assert {k: after[k] for k in first} == first
    assert {p.name: p.stat().st_mtime_ns for p in out.glob("*.sqlite")
            if p.name in stamps} == stamps
    # A lost trace is run again.
    (out / after["128"]["trace"]).unlink()
    code, _ = sweep(tmp_path, "resume", "--vary", "local=64,128,256")
    assert code == 0 and "(1 run now, 2 done before)" in capsys.readouterr().out
    assert (out / after["128"]["trace"]).is_file()


def test_a_different_sweep_in_the_same_directory_is_refused(tmp_path, capsys):
    code, out = sweep(tmp_path, "one", "--vary", "local=64")
    assert code == 0
    before = (out / "summary.csv").read_text()
    capsys.readouterr()
    code = main(["sweep", "vectoradd", "--size", "4096", "--no-progress", "-o", str(out),
                 "--vary", "local=64"])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("error: ") and "options" in err and len(err.splitlines()) == 1
    assert (out / "summary.csv").read_text() == before


@pytest.mark.parametrize("vary, message", [
    ("l2.bank=8,16", "'l2.bank' is neither a configuration key"),
    ("l2.banks", "expected KEY=V1,V2"),
    ("l2.banks=8,,16", "expected KEY=V1,V2"),
    ("l2.banks=8,8", "a value is listed twice"),
])
def test_a_bad_vary_is_a_one_line_error_and_writes_nothing(tmp_path, capsys, vary, message):
    code, out = sweep(tmp_path, "nothing", "--vary", vary)
    err = capsys.readouterr().err
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1
    assert not out.exists()


def test_points_are_the_cross_product_in_vary_order_times_the_seeds():
    names = option_names(WORKLOADS["pagerank"])
    vary = parse_vary(["cp.wg_dispatch_per_cycle=1,2", "--nodes=64,128"], names)
    assert vary == (("cp.wg_dispatch_per_cycle", ("1", "2")), ("nodes", ("64", "128")))
    s = Sweep("pagerank", {}, {}, vary, seed=5, seeds=2, option_names=names)
    assert s.keys == ("cp.wg_dispatch_per_cycle", "nodes", "seed")
    assert [tuple(p.values()) for p in s.points()] == [
        (a, n, seed) for a in ("1", "2") for n in ("64", "128") for seed in ("5", "6")]
    with pytest.raises(SweepError, match="given twice"):
        parse_vary(["nodes=1", "nodes=2"], names)


def test_help_says_how_traces_come_back_without_a_shared_file_system():
    out = subprocess.run([sys.executable, "-m", "simulator", "sweep", "pagerank", "--help"],
                         capture_output=True, text=True, cwd=ROOT, check=True).stdout
    assert "shares no file system" in out and "sends the finished" in out
    assert "tcp://HOST:PORT" in out and "--seeds" in out


@pytest.mark.slow
@pytest.mark.parametrize("scheduler", ["processes", "dask"])
def test_ctrl_c_keeps_finished_points_and_a_rerun_finishes_the_sweep(tmp_path, scheduler):
    """Ctrl-C reaches the pool's workers too, which stop their points cleanly (rows
    kept); a LocalCluster's workers are stopped with it (their points are cancelled)."""
    import os
    import signal

    out = tmp_path / "stopped"
    argv = [sys.executable, "-m", "simulator", "sweep", "pagerank", "--nodes", "1024",
            "--edges", "8192", "--iterations", "2", "--vary", "cp.wg_dispatch_per_cycle=1,2,3",
            "--workers", "2", "--no-progress", "--scheduler", scheduler, "-o", str(out)]
    proc = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, start_new_session=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 120
    # A point's trace is being written (not the token or summary.csv, which are written
    # beside their names too): Ctrl-C, as a terminal would.
    while not list(out.glob(".*.sqlite.partial-*")):
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()[0]
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGINT)
    output = proc.communicate(timeout=120)[0]
    assert proc.returncode == 130, output
    assert "interrupted" in output
    assert not list(out.glob(".*partial*")), "half-written files were left behind"
    rows = summary(out) if (out / "summary.csv").exists() else []
    if scheduler == "processes":
        assert rows and any(r["error"] == "interrupted" for r in rows), output
        # no point is lost with its worker, and none queued before Ctrl-C runs after it
        assert all(r["status"] == "ok" or r["error"] == "interrupted" for r in rows), rows
    done = sum(r["status"] == "ok" for r in rows)
    rerun = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert rerun.returncode == 0, rerun.stderr
    assert f"({3 - done} run now, {done} done before)" in rerun.stdout
    assert [r["status"] for r in summary(out)] == ["ok"] * 3


def test_a_note_says_what_a_sweep_is_for_and_a_rerun_may_reword_it(tmp_path, capsys):
    from dashapp.catalog import Catalog

    code, out = sweep(tmp_path, "noted", "--vary", "local=64", "--note", "first words")
    assert code == 0
    assert Catalog(trace_dir=tmp_path).sweep_note("noted") == "first words"
    code, _ = sweep(tmp_path, "noted", "--vary", "local=64", "--note", "better words")
    assert code == 0 and "(0 run now, 1 done before)" in capsys.readouterr().out
    assert Catalog(trace_dir=tmp_path).sweep_note("noted") == "better words"
    (out / "sweep.json").write_text("[1, 2")  # damaged: no note, no error
    assert Catalog(trace_dir=tmp_path).sweep_note("noted") is None
