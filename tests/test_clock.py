"""Any clock in MHz: the model counts cycles, the trace holds each cycle's start in ps
rounded down, exactly (a 2.1 GHz cycle is 476 4/21 ps)."""
import sqlite3
from fractions import Fraction

import pytest

from simulator.analysis.report import analyze
from simulator.gpu import apply_overrides, default_config
from simulator.gpu.config import ps_per_cycle
from simulator.gpu.run import simulate
from simulator.workloads import WORKLOADS


def test_a_cycle_is_an_exact_fraction_of_a_microsecond():
    assert ps_per_cycle(default_config()) == 1000
    assert ps_per_cycle(apply_overrides(default_config(), ["clock_mhz=2100"])) == Fraction(10000, 21)


def run(tmp_path, mhz):
    out = tmp_path / f"{mhz}.sqlite"
    config = apply_overrides(default_config(), [f"clock_mhz={mhz}", "gpu.shader_arrays=2"])
    result = simulate(WORKLOADS["reduction-v1"](seed=1, size=4096, local=64), config, out,
                      progress=False, writer_process=False)
    db = sqlite3.connect(out)
    rows = db.execute("SELECT id, start_ps, end_ps FROM task ORDER BY id").fetchall()
    end = db.execute("SELECT virtual_end_ps FROM run").fetchone()[0]
    db.close()
    return result, rows, end, out


@pytest.mark.parametrize("mhz", [2100, 1502, 1700])
def test_times_are_each_cycles_start_rounded_down(tmp_path, mhz):
    base, base_rows, _, _ = run(tmp_path, 1000)
    fast, rows, end, _ = run(tmp_path, mhz)
    assert fast.cycles == base.cycles       # the model counts cycles whatever the clock
    for (key, start, stop), (key_1ghz, start_1ghz, stop_1ghz) in zip(rows, base_rows):
        assert key == key_1ghz
        assert start == start_1ghz // 1000 * 1_000_000 // mhz
        assert stop == stop_1ghz // 1000 * 1_000_000 // mhz
    assert end == fast.simulated_ps == fast.cycles * 1_000_000 // mhz


def test_findings_of_a_2100_mhz_run_add_up_to_their_window(tmp_path):
    _, _, _, path = run(tmp_path, 2100)
    report = analyze(path)
    kernel = report["kernels"][0]
    budget, idle = kernel["budget"], kernel["cu_idle"]
    lo, hi = budget["window_ps"]
    assert hi - lo == kernel["time_ps"] > 0
    assert sum(budget[k] for k in ("launch_ps", "ramp_ps", "steady_ps", "tail_ps")) == hi - lo
    assert budget["launch_ps"] == 1600 * 1_000_000 // 2100   # the launch overhead's cycles
    assert sum(idle[k] for k in ("busy_ps", "pre_launch_ps", "dispatch_starved_ps", "tail_ps",
                                 "drain_ps")) == idle["cu_time_ps"] == 8 * (hi - lo)
