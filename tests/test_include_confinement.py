"""``run-kernel --confine-includes`` (what the app's edit-and-run uses, issue 37): an
``#include`` or ``-I`` that reaches out of the kernel's folder and the allowed ones is
refused in one line naming the rule, before the file is opened; an error inside an
allowed header is located without quoting it. Without the flag, the CLI includes
whatever its user can read, as before."""
import sqlite3
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from canary import HEADER, RULE, make_canary

from simulator.__main__ import main

ROOT = Path(__file__).resolve().parents[1]
LAUNCH = ["--kernel", "reduce", "--global", "256", "--local", "128", "--arg", "g_idata=range:256",
          "--arg", "g_odata=zeros:2", "--arg", "n=256", "--arg", "sdata=local:128", "--no-progress"]


@pytest.fixture
def canary(tmp_path):
    return make_canary(tmp_path)


def _run_kernel(folder, source, *args):
    """(exit status, stdout, stderr) of ``run-kernel kernel.cl`` run in ``folder``, as the
    app runs an edited kernel (a process of its own, in the run's folder)."""
    (folder / "kernel.cl").write_text(source)
    done = subprocess.run([sys.executable, "-m", "simulator", "run-kernel", "kernel.cl", *LAUNCH,
                           "-o", "trace.sqlite", "--force", *args], cwd=folder, capture_output=True,
                          text=True, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    return done.returncode, done.stdout, done.stderr


def test_every_hostile_include_is_refused_in_one_line(canary, tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    # A link in the kernel's own folder that points out is refused like the others.
    (run / "own-link.h").symlink_to(canary.secret)
    edits = canary.hostile_edits() + [
        ("own symlink", '#include "own-link.h"\nkernel void k(global float *a) { a[0] = 1; }\n', "")]
    for name, source, options in edits:
        args = ["--confine-includes", "--allow-include", str(canary.include_dir)]
        if options:
            args.append(f"--build-options={options}")
        status, out, err = _run_kernel(run, source, *args)
        assert status == 1, (name, err)
        lines = err.strip().splitlines()
        assert len(lines) == 1 and "refused" in lines[0] and RULE in lines[0], (name, err)
        assert lines[0].startswith("kernel.cl:"), (name, err)  # the visitor's own file
        assert canary.token not in out + err, name
        # It quotes what the visitor wrote, never a path it resolved to.
        assert str(canary.include_dir) not in err and str(run) not in err, (name, err)
        assert not (run / "trace.sqlite").exists(), name


def test_a_missing_file_outside_reads_the_same_as_an_existing_one(canary, tmp_path):
    """The refusal comes before any look at the file: it tells nothing of what exists."""
    run = tmp_path / "run"
    run.mkdir()
    messages = []
    for target in (canary.secret, canary.secret.with_name("no-such-file.h")):
        status, _out, err = _run_kernel(run, f'#include "{target}"\n', "--confine-includes")
        assert status == 1
        messages.append(err.replace(target.name, "NAME"))
    assert messages[0] == messages[1]


def test_headers_of_the_allowed_folders_and_the_run_folder_work(canary, tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    (run / "own.h").write_text("#define OWN 1\n")
    source = '#include "own.h"\n' + canary.allowed_edit()
    status, out, err = _run_kernel(run, source, "--allow-include", str(canary.include_dir),
                                   "--save", "g_odata=out.npy")
    assert status == 0, err
    expected = 3 * np.arange(256, dtype=np.float32).reshape(2, 128).sum(1)
    np.testing.assert_array_equal(np.load(run / "out.npy"), expected)
    # The trace names the kernel as the run's folder does, never by a server path.
    db = sqlite3.connect(run / "trace.sqlite")
    assert db.execute("SELECT path FROM kernel_source").fetchall() == [("kernel.cl",)]
    db.close()
    # -I inside an allowed folder is allowed too.
    sub = canary.include_dir / "sub"
    sub.mkdir()
    (sub / "deep.h").write_text("#define DEEP 2\n")
    status, _out, err = _run_kernel(run, '#include "deep.h"\n' + canary.allowed_edit(),
                                    "--allow-include", str(canary.include_dir), "-I", str(sub))
    assert status == 0, err


def test_an_error_in_an_allowed_header_is_located_but_not_quoted(canary, tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    for header, kind in (("int TOKEN_IN_HEADER = ;\n", "syntax error"),
                         ("#error TOKEN_IN_HEADER\n", "preprocessor error"),
                         ("\n#if TOKEN_IN_HEADER(\n#endif\n", "preprocessor error")):
        (canary.include_dir / "bad.h").write_text(header)
        status, _out, err = _run_kernel(run, '#include "bad.h"\n' + canary.allowed_edit(),
                                        "--allow-include", str(canary.include_dir))
        assert status == 1
        line = err.strip()
        assert line.startswith("bad.h:"), line  # relative to its allowed folder
        assert kind in line and "TOKEN_IN_HEADER" not in line and str(tmp_path) not in line, line
    # The visitor's own errors are quoted as ever.
    status, _out, err = _run_kernel(run, "int MY_OWN_TOKEN = ;\n", "--confine-includes")
    assert status == 1 and err.startswith("kernel.cl:1:") and "Invalid expression" in err, err


def test_the_command_line_keeps_its_freedom(canary, tmp_path, capsys):
    """Unconfined, ``#include`` reads the user's own files anywhere (absolute, -I)."""
    (canary.secret.parent / "mine.h").write_text(HEADER)
    source = tmp_path / "k.cl"
    source.write_text(f'#include "{canary.secret.parent / "mine.h"}"\n' + canary.allowed_edit()
                      .replace('#include "scale.h"\n', ""))
    assert main(["run-kernel", str(source), *LAUNCH, "-o", str(tmp_path / "t.sqlite")]) == 0
    source.write_text('#include "mine.h"\n' + canary.allowed_edit().replace('#include "scale.h"\n', ""))
    assert main(["run-kernel", str(source), *LAUNCH, "-I", str(canary.secret.parent),
                 "-o", str(tmp_path / "t2.sqlite")]) == 0, capsys.readouterr().err


def test_an_allowed_folder_must_exist(tmp_path):
    status, _out, err = _run_kernel(tmp_path, "kernel void k(global float *a) {}\n",
                                    "--allow-include", str(tmp_path / "missing"))
    assert status == 2 and err.strip() == f"error: --allow-include {tmp_path / 'missing'}: not a directory"
