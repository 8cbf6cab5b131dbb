"""Edited runs off the request path, across processes: the server-wide run slots, the
background queue whose state any worker can read, and runs that die with the process
that started them (issue 17). Real processes, killed with SIGKILL."""
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from test_kernel_standby import ENDLESS, V3, _spec

from dashapp.klein import jobs, runner
from dashapp.klein.slots import Slots, SlotsBusy

ROOT = Path(__file__).resolve().parents[1]


def _until(predicate, seconds, what):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"not within {seconds} s: {what}")


def _alive(pid):
    try:
        return (Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
                not in ("Z", "X"))
    except OSError:
        return False


def _standby_children(pid):
    out = []
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            ppid = int((entry / "stat").read_text().rpartition(")")[2].split()[1])
            command = (entry / "cmdline").read_bytes()
        except (OSError, ValueError, IndexError):
            continue
        if ppid == pid and b"standby" in command and _alive(int(entry.name)):
            out.append(int(entry.name))
    return out


def _fixed(source, tag):
    """A run spec that is the same in every process (``_spec`` tags runs per process)."""
    return runner.RunSpec(source=source + f"// {tag}\n", kernel="reduce", global_size=(256,),
                          local_size=(128,), args=(("g_idata", "random:256"),
                                                   ("g_odata", "random:2"), ("n", "256"),
                                                   ("sdata", "local:128")))


def test_a_slot_held_by_another_process_is_freed_when_it_is_killed(tmp_path):
    holder = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(f"""
            import time
            from dashapp.klein.slots import Slots
            with Slots({str(tmp_path)!r}, 1).hold(5):
                print("held", flush=True)
                time.sleep(600)""")],
        cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline() == "held\n"
        slots = Slots(tmp_path, 1)
        assert slots.busy() == 1
        waited = []
        with pytest.raises(SlotsBusy, match="busy with 1 other runs"):
            with slots.hold(0.5, lambda: waited.append(True)):
                pass
        assert waited == [True]
    finally:
        holder.kill()
        holder.wait()
    with Slots(tmp_path, 1).hold(0):  # the kernel released the dead holder's lock
        assert Slots(tmp_path, 1).busy() == 1


HOLD_A_RUN = """
import sys, time
from dashapp.klein import jobs, runner
from test_kernel_standby import ENDLESS
from test_run_queue import _fixed
pool = runner.SimulatorPool(scratch=sys.argv[1], runs_at_once=1)
print(jobs.RunQueue(pool).submit(_fixed(ENDLESS, sys.argv[1])), flush=True)
time.sleep(600)
"""


def test_runs_across_processes_share_the_limit_and_die_with_their_process(tmp_path):
    scratch = tmp_path / "runs"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(ROOT), str(ROOT / "tests"), os.environ.get("PYTHONPATH", "")]))
    other = subprocess.Popen([sys.executable, "-c", HOLD_A_RUN, str(scratch)], cwd=ROOT,
                             env=env, stdout=subprocess.PIPE, text=True)
    pool = runner.SimulatorPool(scratch=scratch, runs_at_once=1)
    queue = jobs.RunQueue(pool)
    try:
        endless = other.stdout.readline().strip()
        assert runner.RUN_ID.match(endless)
        # Another process runs it: this one sees it running, and a second submission
        # joins that job instead of starting another run.
        _until(lambda: queue.status(endless).state == "running", 60, "the run started")
        assert queue.submit(_fixed(ENDLESS, str(scratch))) == endless
        assert not pool.children
        # The one slot is taken: a run submitted here waits for it.
        v3 = queue.submit(_spec(V3, "after the held run"))
        _until(lambda: queue.status(v3).state == "waiting", 30, "the second run waits")
        running = _standby_children(other.pid)
        assert running
        other.kill()  # SIGKILL: no exit handler runs
        other.wait()
        # Its kernel processes stop by themselves, its job reads as failed, and the
        # slot it held goes to the waiting run.
        _until(lambda: not any(_alive(pid) for pid in running), 10, "its children stopped")
        failed = _until(lambda: queue.status(endless).state == "failed"
                        and queue.status(endless), 10, "the dead job is failed")
        assert "stopped before it ended" in failed.message
        done = _until(lambda: queue.status(v3).state == "done" and queue.status(v3), 120,
                      "the waiting run ran")
        assert done.seconds > 0 and pool.run_path(v3) is not None
    finally:
        other.kill()
        other.wait()
        pool.close()


def test_a_failed_run_reports_its_line_and_column(tmp_path):
    pool = runner.SimulatorPool(scratch=tmp_path / "runs")
    queue = jobs.RunQueue(pool)
    broken = V3.replace("int i = get_global_id(0);", "int i = get_global_id(0)")
    try:
        run_id = queue.submit(_spec(broken, "syntax"))
        failed = _until(lambda: queue.status(run_id).state == "failed" and queue.status(run_id),
                        120, "the run failed")
        assert failed.line is not None and str(failed.error()).startswith(
            f"kernel.cl:{failed.line}:{failed.col}: ")
    finally:
        pool.close()


def test_a_source_over_the_size_limit_is_refused(tmp_path):
    pool = runner.SimulatorPool(scratch=tmp_path / "runs")
    with pytest.raises(runner.RunError, match="larger than 256 KB"):
        pool.run(_spec(V3 + "//" + "x" * runner.MAX_SOURCE_BYTES, "huge"))
    assert not pool.children


def test_unknown_runs_read_as_unknown(tmp_path):
    queue = jobs.RunQueue(runner.SimulatorPool(scratch=tmp_path / "runs"))
    assert queue.status("0123456789abcdef").state == "unknown"


def test_pruning_removes_only_what_runs_wrote(tmp_path):
    old = time.time() - 3600
    runs = [tmp_path / f"{i:016x}.sqlite" for i in range(runner.KEEP + 4)]
    for age, path in enumerate(runs):
        path.write_bytes(b"run")
        os.utime(path, (old + age, old + age))
    theirs = [tmp_path / "mine.sqlite", tmp_path / "results-2024.sqlite"]
    for path in theirs:
        path.write_bytes(b"someone else's")
        os.utime(path, (old - 10, old - 10))
    left_over = tmp_path / f"{'a' * 16}-x1y2"  # a work directory a killed server left
    other_dir = tmp_path / "my-notes"
    for directory in (left_over, other_dir):
        directory.mkdir()
        os.utime(directory, (old, old))
    runner._prune(tmp_path)
    assert [p.exists() for p in runs] == [False] * 4 + [True] * runner.KEEP
    assert all(p.exists() for p in theirs) and other_dir.exists()
    assert not left_over.exists()
