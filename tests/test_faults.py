"""Faults made real: a full disk (tmpfs), outputs that are inputs, existing outputs, a
run killed with SIGKILL, damaged files, and a reader who may not write.

Every test checks that nothing was lost: the checksums of the inputs and of every file
that was there before are the same after the fault.
"""
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from faults import assert_one_line_error, cli, sums, unprivileged_prefix

from simulator.tracing.synthetic import generate

KERNEL = """kernel void scale(global float* a, int n) {
    int i = get_global_id(0);
    if (i < n) a[i] = a[i] * 2.0f;
}
"""


@pytest.fixture(scope="module")
def trace(tmp_path_factory):
    path = tmp_path_factory.mktemp("faults") / "t.sqlite"
    generate(path, tasks=20_000, seed=3)
    return path


# -- a full disk ----------------------------------------------------------------------
@pytest.fixture
def small_disk(tmp_path):
    """A 3 MB tmpfs, holding one file of the user's already."""
    mount = tmp_path / "disk"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", str(mount)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    (mount / "notes.txt").write_text("the user's own file\n")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


@pytest.fixture(scope="module")
def big_trace(tmp_path_factory):
    """A trace too large for the small disk (about 9 MB), and its CSV export."""
    path = tmp_path_factory.mktemp("big") / "big.sqlite"
    generate(path, tasks=150_000, seed=4)
    return path


@pytest.fixture(scope="module")
def big_csv(big_trace):
    path = big_trace.with_suffix(".csv")
    assert cli("export", big_trace, "-o", path, "--format", "csv").returncode == 0
    return path


@pytest.fixture(scope="module")
def big_json(big_trace):
    path = big_trace.with_suffix(".json")
    assert cli("export", big_trace, "-o", path, "--format", "chrome").returncode == 0
    return path


@pytest.mark.parametrize("command", ["synth", "run", "run-kernel", "import", "import-chrome",
                                     "export"])
def test_a_full_disk_is_one_line_and_leaves_nothing_half_written(small_disk, tmp_path, big_trace,
                                                                 big_csv, big_json, command):
    kernel = tmp_path / "scale.cl"
    kernel.write_text(KERNEL)
    out = small_disk / "out"
    argv = {
        "synth": ["synth", "--tasks", "300000", "-o", out],
        "run": ["run", "transpose", "--size", "512", "--no-progress", "-o", out],
        "run-kernel": ["run-kernel", kernel, "--global", "65536", "--local", "64",
                       "--arg", "a=random:65536", "--arg", "n=65536", "--no-progress", "-o", out],
        "import": ["import", big_csv, "-o", out],
        "import-chrome": ["import", big_json, "-o", out],
        "export": ["export", big_trace, "-o", out],
    }[command]
    inputs = {p: sums(p.parent)[p.name] for p in (big_trace, big_csv, big_json, kernel)}
    before = sums(small_disk)
    done = cli(*argv)
    line = assert_one_line_error(done, f"disk full writing {out}: ")
    assert sums(small_disk) == before, line  # no output, no partial file, notes.txt intact
    assert {p: sums(p.parent)[p.name] for p in inputs} == inputs


def test_ctrl_c_during_an_import_keeps_the_old_output_and_leaves_nothing_else(tmp_path, trace,
                                                                          big_csv):
    """A real SIGINT while the reader and the importer's writer thread both work."""
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    out = out_dir / "t.sqlite"
    shutil.copy(trace, out)
    before = sums(out_dir)
    # Ctrl-C as a terminal delivers it, whatever the test runner inherited.
    proc = subprocess.Popen([sys.executable, "-m", "simulator", "import", str(big_csv), "-o",
                             str(out), "--force"], cwd=Path(__file__).resolve().parents[1],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 60
    while len(list(out_dir.iterdir())) < 2 and proc.poll() is None:  # its temporary output
        assert time.monotonic() < deadline
        time.sleep(0.005)
    time.sleep(0.1)  # into the reading, which takes about half a second here
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and err.strip() == "interrupted", (proc.returncode, err)
    assert sums(out_dir) == before


# -- outputs that are inputs, outputs that exist ---------------------------------------
def _links(directory, target):
    """``target`` and a hard link and a symlink to it, made in ``directory``."""
    directory.mkdir()
    hard = directory / "hard-link.out"
    os.link(target, hard)
    soft = directory / "sym-link.out"
    soft.symlink_to(target)
    return [target, hard, soft]


def test_an_output_that_is_an_input_is_refused_by_identity_not_name(tmp_path, trace):
    local = tmp_path / "t.sqlite"
    shutil.copy(trace, local)
    csv = tmp_path / "in.csv"
    assert cli("export", local, "-o", csv, "--format", "csv").returncode == 0
    kernel = tmp_path / "k.cl"
    kernel.write_text(KERNEL)
    config = tmp_path / "config.json"
    config.write_text('{"l2": {"banks": 8}}')
    cases = []
    for same in _links(tmp_path / "csv-links", csv):
        cases.append(["import", csv, "-o", same, "--force"])
    for same in _links(tmp_path / "trace-links", local):
        cases.append(["export", local, "-o", same, "--force"])
    cases.append(["run-kernel", kernel, "--global", "64", "--local", "64", "--arg", "a=zeros:64",
                  "--arg", "n=64", "--no-progress", "-o", kernel, "--force"])
    cases.append(["run", "vectoradd", "--size", "1024", "--config", config, "--no-progress",
                  "-o", config, "--force"])
    cases.append(["run-kernel", kernel, "--global", "64", "--local", "64", "--arg", "a=zeros:64",
                  "--arg", "n=64", "--no-progress", "--save", f"a={kernel}", "--force"])
    before = sums(tmp_path)
    for argv in cases:
        assert_one_line_error(cli(*argv), "is an input of this command")
        assert sums(tmp_path) == before, argv


def test_an_existing_output_is_replaced_only_with_force(tmp_path, trace):
    out = tmp_path / "keep.sqlite"
    shutil.copy(trace, out)
    kernel = tmp_path / "k.cl"
    kernel.write_text(KERNEL)
    other = tmp_path / "other.json"
    other.write_text("{}")
    cases = [["synth", "--tasks", "100", "-o", out],
             ["run", "vectoradd", "--size", "1024", "--no-progress", "-o", out],
             ["run-kernel", kernel, "--global", "64", "--local", "64", "--arg", "a=zeros:64",
              "--arg", "n=64", "--no-progress", "-o", out],
             ["import", other, "-o", out],
             ["export", trace, "-o", other]]
    before = sums(tmp_path)
    for argv in cases:
        assert_one_line_error(cli(*argv), "already exists; pass --force")
        assert sums(tmp_path) == before, argv
    done = cli("synth", "--tasks", "100", "-o", out, "--force")
    assert done.returncode == 0, done.stderr
    assert sums(tmp_path)["keep.sqlite"] != before["keep.sqlite"]
    assert sorted(sums(tmp_path)) == sorted(before)  # nothing left beside it


def test_an_output_naming_a_directory_is_one_line(tmp_path, trace):
    before = sums(tmp_path)
    for argv in (["synth", "--tasks", "100", "-o", tmp_path],
                 ["export", trace, "-o", tmp_path, "--force"],
                 ["import", trace, "-o", tmp_path, "--force"]):
        assert_one_line_error(cli(*argv), f"{tmp_path}: is a directory")
    assert sums(tmp_path) == before


# -- kill -9 -----------------------------------------------------------------------
def test_a_run_killed_outright_is_named_and_finalize_recovers_it(tmp_path):
    out = tmp_path / "pr.sqlite"
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1]))
    proc = subprocess.Popen([sys.executable, "-m", "simulator", "run", "pagerank", "--nodes",
                             "66000", "--edges", "420000", "--no-progress", "-o", str(out)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    partial = tmp_path / f".pr.sqlite.partial-{proc.pid}"
    deadline = time.monotonic() + 600  # a shared machine may be slow
    rows = 0
    while rows == 0:  # the first batch is in the file
        assert proc.poll() is None and time.monotonic() < deadline, "the run produced no rows"
        time.sleep(0.2)
        try:
            db = sqlite3.connect(f"file:{partial}?mode=ro", uri=True)
            rows = db.execute("SELECT count(*) FROM task").fetchone()[0]
            db.close()
        except sqlite3.Error:
            pass
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    # The writer process sees its pipe close and stops without a word (it shares stderr).
    assert "Traceback" not in proc.stderr.read().decode()
    assert not out.exists() and partial.exists()

    info = cli("info", out)
    assert_one_line_error(info, str(partial), "finalize")
    other = cli("run", "vectoradd", "--size", "1024", "--no-progress", "-o", tmp_path / "v.sqlite")
    assert other.returncode == 0 and str(partial) not in other.stderr  # another output: no note
    rerun = cli("run", "vectoradd", "--size", "1024", "--no-progress", "-o", out)
    assert rerun.returncode == 0 and str(partial) in rerun.stderr  # the same output: named

    kept = sums(tmp_path)
    assert_one_line_error(cli("finalize", out), "already exists", str(partial), "--force")
    assert sums(tmp_path) == kept
    done = cli("finalize", out, "--force")
    assert done.returncode == 0, done.stderr
    assert "marked incomplete" in done.stdout
    assert not partial.exists() and out.exists()
    db = sqlite3.connect(f"file:{out}?mode=ro", uri=True)
    assert db.execute("SELECT completed, finalized FROM run").fetchone() == (0, 1)
    assert db.execute("SELECT count(*) FROM task").fetchone()[0] >= rows
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
    db.close()
    assert "INCOMPLETE" in cli("info", out).stdout
    assert sums(tmp_path)["v.sqlite"] == kept["v.sqlite"]


def test_finalize_does_not_replace_an_existing_trace_without_force(tmp_path, trace):
    out = tmp_path / "t.sqlite"
    shutil.copy(trace, out)
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True).stdout.strip()
    partial = tmp_path / f".t.sqlite.partial-{dead}"
    generate(tmp_path / "other.sqlite", tasks=500, seed=9)
    os.replace(tmp_path / "other.sqlite", partial)
    before = sums(tmp_path)
    assert_one_line_error(cli("finalize", out), "already exists", str(partial), "--force")
    assert sums(tmp_path) == before
    note = cli("info", out)
    assert note.returncode == 0 and str(partial) in note.stderr
    assert cli("finalize", out, "--force").returncode == 0
    assert not partial.exists()
    db = sqlite3.connect(f"file:{out}?mode=ro", uri=True)
    assert db.execute("SELECT seed FROM run").fetchone() == (9,)  # the recovered run's
    db.close()


# -- damage --------------------------------------------------------------------------
def _damaged_copies(tmp_path, trace):
    page = tmp_path / "page.sqlite"
    shutil.copy(trace, page)
    size = page.stat().st_size
    with open(page, "r+b") as f:  # one 4 KiB page in the middle, overwritten
        f.seek((size // 2) // 4096 * 4096)
        f.write(random.Random(1).randbytes(4096))
    flips = tmp_path / "flips.sqlite"
    shutil.copy(trace, flips)
    data = bytearray(flips.read_bytes())
    rng = random.Random(2)
    for offset in rng.sample(range(100, len(data)), 100):  # past the 100-byte file header
        data[offset] ^= 0xFF
    flips.write_bytes(bytes(data))
    return page, flips


def test_damage_is_named_by_info_and_check(tmp_path, trace):
    for damaged in _damaged_copies(tmp_path, trace):
        before = sums(tmp_path)
        info = cli("info", damaged)
        line = assert_one_line_error(info, str(damaged), "damaged")
        assert info.returncode == 1 and info.stdout == "", line
        check = cli("check", damaged)
        assert_one_line_error(check, str(damaged), "damaged")
        assert check.returncode == 1
        assert sums(tmp_path) == before
    assert cli("check", trace).stdout.strip().endswith("ok (SQLite's integrity_check found no damage)")


def test_exporting_a_damaged_trace_is_one_line_and_writes_nothing(tmp_path, trace):
    page, _ = _damaged_copies(tmp_path, trace)
    before = sums(tmp_path)
    done = cli("export", page, "-o", tmp_path / "out.csv", "--format", "csv")
    if done.returncode == 0:  # the damage missed every page export reads
        pytest.skip("export read no damaged page")
    assert_one_line_error(done, str(page), "damaged")
    assert sums(tmp_path) == before


# -- a reader who may not write ------------------------------------------------------
@pytest.fixture
def nobody():
    prefix = unprivileged_prefix()
    if prefix is None:
        pytest.skip("cannot run a command as an unprivileged user here (needs root and setpriv)")
    return prefix


def test_a_finalized_trace_opens_for_a_user_who_may_not_write_its_directory(tmp_path, trace,
                                                                             nobody):
    shared = tmp_path / "shared"
    shared.mkdir()
    shutil.copy(trace, shared / "t.sqlite")
    os.chmod(shared, 0o755)  # root's: nobody may read, not write
    os.chmod(shared / "t.sqlite", 0o644)
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    os.chmod(scratch, 0o777)
    os.chmod(tmp_path, 0o755)
    before = sums(shared)

    info = cli("info", shared / "t.sqlite", prefix=nobody)
    assert info.returncode == 0, info.stderr
    assert "status       completed" in info.stdout
    export = cli("export", shared / "t.sqlite", "-o", scratch / "t.csv", "--format", "csv",
                 prefix=nobody)
    assert export.returncode == 0, export.stderr
    app = subprocess.run(
        [*nobody, sys.executable, "-c",
         "import sys; from dashapp import queries\n"
         "with queries.open_trace(sys.argv[1]) as db:\n"
         "    print(queries.task_count(db))", str(shared / "t.sqlite")],
        capture_output=True, text=True, env=dict(os.environ, PYTHONDONTWRITEBYTECODE="1"))
    assert app.returncode == 0, app.stderr
    assert int(app.stdout) > 0
    assert sums(shared) == before and sorted(os.listdir(shared)) == ["t.sqlite"]


def test_a_wal_file_in_a_read_only_directory_reports_what_sqlite_said(tmp_path, trace, nobody):
    shared = tmp_path / "shared"
    shared.mkdir()
    wal = shared / "wal.sqlite"
    shutil.copy(trace, wal)
    db = sqlite3.connect(wal)
    db.execute("PRAGMA journal_mode=WAL")  # as traces finalized before this change are
    db.close()
    os.chmod(shared, 0o755)
    os.chmod(tmp_path, 0o755)
    before = sums(shared)
    done = cli("info", wal, prefix=nobody)
    line = assert_one_line_error(done, str(wal), "SQLite: attempt to write a readonly database")
    assert "killed" not in line and "finalize" not in line
    assert sums(shared) == before
