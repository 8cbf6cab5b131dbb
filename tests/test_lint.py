"""The linters are part of the test command: ruff on the Python sources (pure-mode
components included) and cython-lint on the hand-written Cython, both configured in
pyproject.toml. A finding fails the test with the linter's own ``FILE:LINE:COL`` lines."""
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _run(tool, *args):
    executable = shutil.which(tool)
    if executable is None:  # installed by the test extra: its absence is a broken setup
        pytest.fail(f"{tool} is not installed: pip install -e '.[test]'")
    return subprocess.run([executable, *args], cwd=ROOT, capture_output=True, text=True)


def test_ruff_is_clean():
    result = _run("ruff", "check", "--no-cache", "--output-format", "concise", ".")
    assert result.returncode == 0, result.stdout + result.stderr


def test_cython_lint_is_clean():
    sources = sorted(str(p.relative_to(ROOT)) for pattern in ("*.pyx", "*.pxd")
                     for p in (ROOT / "simulator").rglob(pattern))
    assert sources, "no Cython sources found"
    result = _run("cython-lint", *sources)
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_linters_report_what_they_find(tmp_path):
    """Guards the two tests above against a linter that passes everything."""
    bad = tmp_path / "bad.pyx"
    bad.write_text("import os\n\ncdef int f(int x):\n    return x\n")
    assert _run("cython-lint", str(bad)).returncode != 0
    (tmp_path / "bad.py").write_text("import os\n")
    assert _run("ruff", "check", "--no-cache", "--isolated", str(tmp_path / "bad.py")
                ).returncode != 0
