"""Every benchmark runs and reports: at its smallest sizes, each must exit cleanly and
print a ratio against its baseline (``1.23x``, ``9.4×`` or a ``ratio`` column). Its
figures are not checked: these machines are too noisy for wall-clock assertions."""
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[1]
RATIO = re.compile(r"\d+(?:\.\d+)?\s?[x×](?![A-Za-z])|\bratio\b")

SMALL = {
    "analysis.py": ["--nodes", "128", "256", "--repeat", "1"],
    "app_queries.py": ["--tasks", "20000", "--repeat", "1", "--cache-dir", "{tmp}"],
    "case_study.py": ["--nodes", "256", "--edges", "1024", "--iterations", "1"],
    "case_study_sweep.py": ["--nodes", "256", "--edges", "1024", "--iterations", "1"],
    "engine.py": ["--processes", "50", "--timeouts", "50", "--repeat", "1"],
    "family_speed.py": ["--families", "spmv", "--repeat", "1"],
    "finalize.py": ["--tasks", "20000"],
    "import.py": ["--tasks", "20000"],
    "import_nsys.py": ["--launches", "2000"],
    "kernel_scale.py": ["--families", "relu", "transpose", "--scales", "1", "2"],
    "scale.py": ["--sizes", "20000", "40000", "--keep", "{tmp}"],
    "simulate.py": ["--workloads", "transpose", "--repeat", "1", "--end-to-end-only"],
    "sweep.py": ["--workers", "2", "--nodes", "256", "--edges", "1024", "--iterations", "1"],
    "trace_write.py": ["--tasks", "20000"],
    "turnaround.py": ["--repeat", "1"],
    "turnaround_views.py": ["--repeat", "1", "--sizes", "256", "--no-browser"],
    "ui_latency.py": ["--tasks", "20000", "--small", "5000", "--repeat", "1",
                      "--cache-dir", "{tmp}"],
    "watch.py": ["--rounds", "1", "--tasks", "20000", "--iterations", "1"],
}


def test_every_benchmark_is_listed():
    assert sorted(SMALL) == sorted(p.name for p in (ROOT / "benchmarks").glob("*.py"))


@pytest.mark.parametrize("name", sorted(SMALL))
def test_the_benchmark_runs_and_prints_a_ratio(name, tmp_path):
    args = [a.format(tmp=tmp_path) for a in SMALL[name]]
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / name), *args], cwd=tmp_path,
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    assert RATIO.search(done.stdout), done.stdout[-2000:]
