"""Helpers of the fault tests: the command line in a child process, and checksums that
prove nothing was lost."""
import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def cli(*args, cwd=None, timeout=300, prefix=()):
    """``python -m simulator ARGS`` in a child process (``prefix``: setpriv and such)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT), PYTHONDONTWRITEBYTECODE="1")
    return subprocess.run([*prefix, sys.executable, "-m", "simulator", *map(str, args)],
                          capture_output=True, text=True, timeout=timeout, cwd=cwd, env=env)


def sums(directory):
    """{relative path: sha256} of every file under ``directory`` (hidden ones too)."""
    directory = Path(directory)
    return {str(p.relative_to(directory)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(directory.rglob("*")) if p.is_file()}


def assert_one_line_error(done, *expected):
    """A failed command that said what is wrong in one line, without a traceback."""
    assert done.returncode != 0, done.stdout
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert "Traceback" not in done.stderr
    for text in expected:
        assert text in lines[0], lines[0]
    return lines[0]


def unprivileged_prefix():
    """setpriv arguments running a command as ``nobody``, or None if that cannot be done.

    ``nobody`` keeps CAP_DAC_READ_SEARCH only, so that it can read this checkout and the
    Python installation (under /root here); it still may not write anything it does
    not own, which is what the tests are about.
    """
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        return None
    prefix = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups",
              "--inh-caps=+dac_read_search", "--ambient-caps=+dac_read_search"]
    probe = subprocess.run([*prefix, sys.executable, "-c", "import os; print(os.getuid())"],
                           capture_output=True, text=True)
    return prefix if probe.returncode == 0 and probe.stdout.strip() != "0" else None
