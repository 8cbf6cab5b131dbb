"""Edit-and-run on a spare simulator process: ``python -m simulator standby`` waits with
everything imported, serves one run and exits; the runner falls back to a fresh child
when the spare is dead or stale, and the run limits still bind a spare."""
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import pytest
from app_server import serve

from dashapp.klein import runner

ROOT = Path(__file__).resolve().parents[1]
V3 = (ROOT / "simulator" / "kernels" / "builtin" / "reduction_v3.cl").read_text()
ENDLESS = ("kernel void reduce(global float *g_idata, global float *g_odata, int n,"
           " local float *sdata)\n{\n    int k = 0;\n    while (k >= 0) { k = k + 1; }\n}\n")


def _spec(source, tag):
    # A tag per test keeps each run fresh: edited runs are cached by content.
    return runner.RunSpec(
        source=source + f"// {tag} {os.getpid()}\n", kernel="reduce", global_size=(256,),
        local_size=(128,), args=(("g_idata", "random:256"), ("g_odata", "random:2"),
                                 ("n", "256"), ("sdata", "local:128")))


@pytest.fixture
def pool(tmp_path):
    """A pool of our own over a scratch directory of its own, closed after the test."""
    made = runner.SimulatorPool(scratch=tmp_path / "runs")
    yield made
    made.close()


def _waiting(pool):
    pool.prepare()
    return pool.spare


def _pool_of(tmp_path, command):
    """A pool whose children run ``command`` instead of the standby simulator."""
    return runner.SimulatorPool(scratch=tmp_path / "runs", command=command)


def test_standby_runs_one_command_line_from_stdin(tmp_path):
    job = {"argv": ["synth", "-o", "t.sqlite", "--tasks", "50"], "cwd": str(tmp_path)}
    done = subprocess.run([sys.executable, "-m", "simulator", "standby"], cwd=ROOT,
                          input=json.dumps(job) + "\n", capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("ready\n") and (tmp_path / "t.sqlite").is_file()
    # The trace records the job's command line, not "standby".
    info = subprocess.run([sys.executable, "-m", "simulator", "info", "t.sqlite"],
                          cwd=tmp_path, capture_output=True, text=True, check=True).stdout
    command = next(line for line in info.splitlines() if line.startswith("command"))
    assert command.endswith(" synth -o t.sqlite --tasks 50") and "standby" not in command


def test_standby_exits_at_end_of_input():
    done = subprocess.run([sys.executable, "-m", "simulator", "standby"], cwd=ROOT,
                          stdin=subprocess.DEVNULL, capture_output=True, text=True)
    assert (done.returncode, done.stdout) == (0, "ready\n")


def test_the_waiting_spare_serves_one_run_and_a_new_one_waits(pool):
    spare = _waiting(pool)
    run_id, path, _seconds = pool.run(_spec(V3, "served"))
    assert pool.run_path(run_id) == path
    assert spare.proc.returncode == 0  # it ran the job, exited and was reaped
    following = pool.spare
    assert following is not spare and following.proc.poll() is None


def test_a_killed_spare_falls_back_to_a_fresh_child(pool):
    spare = _waiting(pool)
    os.killpg(spare.proc.pid, signal.SIGKILL)
    spare.proc.wait()
    assert pool.run(_spec(V3, "killed"))[2] > 0


def test_a_spare_that_dies_before_taking_the_job_falls_back(tmp_path):
    # The first child is alive when taken and gone before it says it is ready (it says
    # something else and exits); every later one is the real standby simulator.
    marker = tmp_path / "first-one-started"
    first_dies = (f"import os, sys\nif not os.path.exists({str(marker)!r}):\n"
                  f"    open({str(marker)!r}, 'w').close()\n    print('not ready', flush=True)\n"
                  "else:\n    os.execv(sys.executable, [sys.executable, '-m', 'simulator',"
                  " 'standby'])\n")
    pool = _pool_of(tmp_path, [sys.executable, "-c", first_dies])
    try:
        pool.prepare()
        dying = pool.spare
        assert pool.run(_spec(V3, "dying"))[2] > 0
        assert dying.proc.returncode == 0
    finally:
        pool.close()


def test_a_spare_that_never_takes_the_job_still_meets_the_deadline(tmp_path):
    pool = _pool_of(tmp_path, [sys.executable, "-c",
                               "import time; print('hello', flush=True); time.sleep(30)"])
    started = time.monotonic()
    try:
        with pytest.raises(runner.RunError, match="longer than 2 s"):
            pool.run(_spec(V3, "never takes"), timeout=2)
    finally:
        pool.close()
    assert time.monotonic() - started < 10


def test_a_simulator_that_cannot_start_is_reported(tmp_path):
    pool = _pool_of(tmp_path, [sys.executable, "-c", "raise ImportError('no simulator here')"])
    try:
        with pytest.raises(runner.RunError, match="ImportError: no simulator here"):
            pool.run(_spec(V3, "broken"))
    finally:
        pool.close()


def test_a_spare_that_writes_much_before_it_is_ready_does_not_stall(pool, monkeypatch):
    # Python's import trace is some 100 KB of stderr: more than a pipe holds.
    monkeypatch.setenv("PYTHONVERBOSE", "1")
    assert pool.run(_spec(V3, "verbose"), timeout=60)[2] > 0


def test_a_spare_started_from_older_simulator_files_is_not_used(pool):
    spare = _waiting(pool)
    spare.digest = "older"
    assert pool.run(_spec(V3, "stale"))[2] > 0
    assert spare.proc.returncode == -signal.SIGKILL  # discarded and reaped, never used


def test_a_runaway_kernel_is_stopped_by_the_cpu_limit(pool, monkeypatch):
    monkeypatch.setattr(runner, "CPU_SECONDS", 1)
    _waiting(pool)
    with pytest.raises(runner.RunError, match="SIGXCPU"):
        pool.run(_spec(ENDLESS, "cpu"), timeout=60)


def test_the_cpu_limit_counts_from_the_hand_over():
    import resource

    # A child that has already spent about a second of CPU, as a spare spends importing.
    child = subprocess.Popen(
        [sys.executable, "-c", "import sys, time\nend = time.process_time() + 1.2\n"
         "while time.process_time() < end: pass\nprint('spent', flush=True)\n"
         "sys.stdin.read()"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        assert child.stdout.readline() == b"spent\n"
        runner.bound(child.pid)
        soft, hard = resource.prlimit(child.pid, resource.RLIMIT_CPU)
        assert soft >= 1 + runner.CPU_SECONDS and hard == soft + 1
        assert resource.prlimit(child.pid, resource.RLIMIT_CORE) == (0, 0)
    finally:
        child.kill()
        child.communicate()


def test_a_runaway_kernel_on_a_spare_is_stopped_and_the_next_run_works(pool):
    _waiting(pool)
    with pytest.raises(runner.RunError, match="longer than 2 s"):
        pool.run(_spec(ENDLESS, "timeout"), timeout=2)
    assert pool.run(_spec(V3, "after timeout"))[2] > 0


def test_a_macro_bomb_is_stopped_at_the_time_limit_and_the_next_run_works(pool):
    """30 levels of macros each doubling the last expand to 2**30 tokens: the preprocessor
    runs until the wall-clock limit stops the run (shortened here), with a clear message."""
    bomb = "#define M0 x\n" + "".join(f"#define M{k} M{k - 1} M{k - 1}\n" for k in range(1, 31))
    _waiting(pool)
    with pytest.raises(runner.RunError, match="longer than 3 s and was stopped"):
        pool.run(_spec(bomb + "int y = M30;\n" + V3, "bomb"), timeout=3)
    assert pool.run(_spec(V3, "after bomb"))[2] > 0


def test_two_runs_at_once_both_finish(pool):
    _waiting(pool)
    results = {}

    def one(tag):
        results[tag] = pool.run(_spec(V3, tag))

    threads = [threading.Thread(target=one, args=(f"together {i}",)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert len({r[0] for r in results.values()}) == 2
    assert all(path.is_file() for _id, path, _s in results.values())


def test_stopping_at_exit_kills_and_reaps_the_spare(pool):
    spare = _waiting(pool)
    pool.close()
    assert spare.proc.returncode is not None and pool.spare is None and not pool.children


def test_stopping_at_exit_also_stops_a_run_in_progress(pool):
    _waiting(pool)
    failed = []

    def endless():
        try:
            pool.run(_spec(ENDLESS, "stopped at exit"), timeout=60)
        except runner.RunError as err:
            failed.append(str(err))

    thread = threading.Thread(target=endless)
    thread.start()
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not any(
            c.proc.poll() is None and c is not pool.spare for c in pool.children):
        time.sleep(0.05)
    running = [c for c in pool.children if c is not pool.spare]
    assert running
    pool.close()
    thread.join(timeout=30)
    assert all(c.proc.returncode is not None for c in running)
    assert failed == ["the server is shutting down"] and not pool.children
    with pytest.raises(runner.RunError, match="shutting down"):
        pool.run(_spec(V3, "after the exit"))


def _standby_children(pid):
    """Pids of the live ``simulator standby`` children of process ``pid``."""
    out = []
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            state, ppid = (entry / "stat").read_text().rpartition(")")[2].split()[:2]
            command = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if int(ppid) == pid and state != "Z" and b"standby" in command:
            out.append(int(entry.name))
    return out


def _open_kernel_page(url, trace):
    # What a browser asks for: the page router's callback, which builds the page layout.
    body = {"output": ".._pages_content.children..._pages_store.data..",
            "outputs": [{"id": "_pages_content", "property": "children"},
                        {"id": "_pages_store", "property": "data"}],
            "inputs": [{"id": "_pages_location", "property": "pathname", "value": "/kernel"},
                       {"id": "_pages_location", "property": "search",
                        "value": f"?trace={trace}"}],
            "changedPropIds": ["_pages_location.pathname"], "state": []}
    urllib.request.urlopen(urllib.request.Request(
        url + "/_dash-update-component", data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"}), timeout=60)


def test_a_terminated_server_stops_and_reaps_its_spare(tmp_path, pool):
    _id, path, _seconds = pool.run(_spec(V3, "served page"))
    shutil.copy(path, tmp_path / "v3.sqlite")
    with serve(tmp_path) as (url, server):
        _open_kernel_page(url, "v3.sqlite")
        spares = _standby_children(server.pid)
        assert len(spares) == 1  # the page started one
    # Stopped by SIGTERM, the server still stopped and reaped it: not even a zombie is left.
    assert not Path(f"/proc/{spares[0]}").exists()
