"""Whole runs: the trace file, determinism, Ctrl-C, the tracing window, the CLI helpers."""
import argparse
import json
import re
import sqlite3

import pytest
from test_gpu_units import TINY, inst, launch, wavefront

from simulator.gpu import apply_overrides, default_config
from simulator.gpu.platform import cython_available
from simulator.gpu.run import SimulationInterrupted, simulate
from simulator.runs.workload_cli import build_config, parse_window
from simulator.stream import Unit


class HandMade:
    """A workload of hand-built launches (until the kernel engineer's exist)."""

    name = "handmade"

    def __init__(self, seed=0, kernels=2, interrupt_after=None):
        self.seed = seed
        self.kernels = kernels
        self.interrupt_after = interrupt_after

    def launches(self, recorder=None):
        for k in range(self.kernels):
            if k == self.interrupt_after:
                raise KeyboardInterrupt
            groups = []
            for g in range(6):
                base = (k * 97 + g * 13 + self.seed) * 64
                wf = wavefront(inst(Unit.VALU), inst(Unit.VMEM, lines=[base, base + 64]),
                               inst(Unit.WAITCNT), inst(Unit.LDS, passes=2), inst(Unit.BARRIER),
                               inst(Unit.VMEM, lines=[base + 4096], write=1), inst(Unit.SALU))
                groups.append([wf, wf])
            yield launch(groups, name=f"kernel{k}", launch_id=k)

    def check(self):
        pass


def tiny_config(*extra):
    return apply_overrides(default_config(), TINY + list(extra))


def dump(path):
    """Everything a run decided (not when or how fast it ran)."""
    db = sqlite3.connect(path)
    tables = {t: sorted(db.execute(f"SELECT * FROM {t}").fetchall())
              for t in ("task", "task_tag", "kind", "location", "tag_name", "metric_bin")}
    run = db.execute("SELECT config, completed, open_tasks, virtual_end_ps FROM run").fetchone()
    db.close()
    return tables, run


def test_simulate_writes_a_complete_trace(tmp_path, build):
    out = tmp_path / "t.sqlite"
    result = simulate(HandMade(), tiny_config(), out, progress=False, implementation=build)
    assert result.completed and result.cycles > 0 and result.events > 0
    assert [name for name, _ in result.kernels] == ["kernel0", "kernel1"]
    tables, (config, completed, open_tasks, end_ps) = dump(out)
    assert completed == 1 and open_tasks == 0
    assert json.loads(config) == tiny_config()
    assert end_ps == result.simulated_ps == result.cycles * 1000
    assert len(tables["task"]) == result.tasks
    assert max(row[5] for row in tables["task"]) <= end_ps
    names = {row[1] for row in tables["location"]}
    assert {"GPU", "GPU.CommandProcessor", "GPU.SA[0].CU[1]", "GPU.SA[0].CU[0].SIMD[1]",
            "GPU.SA[0].L1V[0]", "GPU.L2[1]", "GPU.DRAM[0]"} <= names
    assert not list(tmp_path.glob(".*partial*"))


def test_same_seed_same_trace_and_builds_agree(tmp_path):
    first, second = tmp_path / "a.sqlite", tmp_path / "b.sqlite"
    simulate(HandMade(seed=1), tiny_config(), first, progress=False, implementation="python")
    simulate(HandMade(seed=1), tiny_config(), second, progress=False, implementation="python")
    assert dump(first) == dump(second)
    other = tmp_path / "c.sqlite"
    simulate(HandMade(seed=2), tiny_config(), other, progress=False, implementation="python")
    assert dump(other)[0]["task"] != dump(first)[0]["task"]
    if not cython_available():
        pytest.skip("Cython GPU not built")
    cy = tmp_path / "cy.sqlite"
    simulate(HandMade(seed=1), tiny_config(), cy, progress=False, implementation="cython")
    assert dump(cy) == dump(first)


def test_ctrl_c_leaves_a_valid_trace_marked_incomplete(tmp_path, build):
    out = tmp_path / "stopped.sqlite"
    with pytest.raises(SimulationInterrupted) as stop:
        simulate(HandMade(interrupt_after=1), tiny_config(), out, progress=False,
                 implementation=build)
    assert not stop.value.result.completed
    tables, (_, completed, open_tasks, _) = dump(out)
    assert completed == 0
    assert open_tasks == 1  # the Simulation root
    flagged = [row for row in tables["task"] if row[6] & 1]
    assert len(flagged) == 1


def test_untraced_run_and_window(tmp_path, build):
    full = simulate(HandMade(), tiny_config(), None, progress=False, implementation=build)
    assert full.tasks == 0 and full.cycles > 0
    out = tmp_path / "w.sqlite"
    traced = simulate(HandMade(), tiny_config(), out, progress=False, implementation=build,
                      window=(0, 200))
    assert traced.cycles == full.cycles  # tracing never changes timing
    tasks = dump(out)[0]["task"]
    assert tasks and all(row[4] < 200_000 for row in tasks)
    assert traced.tasks == len(tasks)
    late = simulate(HandMade(), tiny_config(), tmp_path / "late.sqlite", progress=False,
                    implementation=build, window=(200, None))
    late_tasks = dump(tmp_path / "late.sqlite")[0]["task"]
    assert late.tasks == len(late_tasks) and all(row[5] >= 200_000 for row in late_tasks)


def test_stall_or_bad_input_leaves_no_file(tmp_path):
    class Broken(HandMade):
        def launches(self, recorder=None):
            yield launch([[wavefront(inst(Unit.VALU)) for _ in range(41)]])

    out = tmp_path / "never.sqlite"
    with pytest.raises(ValueError, match="cannot fit"):
        simulate(Broken(), tiny_config(), out, progress=False, implementation="python")
    assert list(tmp_path.iterdir()) == []


def test_cli_config_and_window_parsing(tmp_path):
    path = tmp_path / "cfg.json"
    path.write_text(json.dumps({"l2": {"banks": 8}, "dram": {"latency": 50}}))
    args = argparse.Namespace(config=str(path), overrides=["dram.latency=70"], dispatch_rate=2)
    cfg = build_config(args)
    assert (cfg["l2"]["banks"], cfg["dram"]["latency"], cfg["cp"]["wg_dispatch_per_cycle"]) == (8, 70, 2)
    assert parse_window("100:200") == (100, 200)
    assert parse_window(":200") == (None, 200)
    with pytest.raises(argparse.ArgumentTypeError):
        parse_window("200:100")
    path.write_text('{"l2": {"banks": }')
    with pytest.raises(Exception, match=r"cfg.json:1:\d+: invalid JSON"):
        build_config(argparse.Namespace(config=str(path), overrides=[], dispatch_rate=None))


def test_run_command_end_to_end(tmp_path, capsys):
    from simulator.__main__ import main

    out = tmp_path / "va.sqlite"
    code = main(["run", "vectoradd", "--size", "2048", "-o", str(out), "--no-progress",
                 "--set", "gpu.shader_arrays=2", "--trace-level", "wf"])
    printed = capsys.readouterr().out
    assert code == 0, printed
    assert "cycles" in printed and "events/s" in printed and "tasks/s" in printed
    assert "results match" in printed
    db = sqlite3.connect(out)
    assert db.execute("SELECT completed, workload FROM run").fetchone() == (1, "vectoradd")
    categories = {c for (c,) in db.execute("SELECT DISTINCT category FROM kind")}
    assert categories == {"Simulation", "kernel", "req_out", "req_in", "work-group", "wavefront"}
    assert json.loads(db.execute("SELECT config FROM run").fetchone()[0])["gpu"]["shader_arrays"] == 2


def test_run_command_rejects_bad_options(tmp_path, capsys):
    from simulator.__main__ import main

    assert main(["run", "vectoradd", "--set", "l2.bankz=4", "--no-progress"]) == 2
    assert "unknown parameter 'l2.bankz'" in capsys.readouterr().err
    assert main(["run", "vectoradd", "--trace-level", "instructions", "--no-progress"]) == 2
    assert "unknown trace level" in capsys.readouterr().err
    out = tmp_path / "never.sqlite"
    assert main(["run", "vectoradd", "--size", "1024", "--set", "cu.wf_slots_per_simd=1",
                 "--set", "cu.simds=1", "--local", "256", "--no-progress", "-o", str(out)]) == 2
    assert "cannot fit on an empty CU" in capsys.readouterr().err
    assert not out.exists()


def test_a_mistyped_option_is_answered_by_its_own_command(capsys):
    from simulator.__main__ import main

    with pytest.raises(SystemExit) as exit_:
        main(["run", "transpose", "--sise", "64"])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1  # one line, from the command given (not the list of commands)
    assert err.startswith("python -m simulator run transpose: error:")
    assert "unrecognized arguments: --sise 64 (did you mean --size?)" in err


def test_the_summary_headline_counts_finalize(tmp_path):
    import subprocess
    import sys

    out = tmp_path / "t.sqlite"
    proc = subprocess.run([sys.executable, "-m", "simulator", "run", "vectoradd", "--size", "256",
                           "-o", str(out)], capture_output=True, text=True, check=True)
    line = next(text for text in proc.stdout.splitlines() if text.startswith("wall time"))
    total, kernels, timing, finalize = (float(v) for v in
                                        re.findall(r"(\d+\.\d+) s", line))
    assert finalize > 0 and abs(total - (kernels + timing + finalize)) <= 0.015
    # stderr is a pipe here: no progress bar's carriage returns in it
    assert "\r" not in proc.stderr


def test_a_real_sigint_stops_between_events(tmp_path):
    import os
    import signal

    class SelfInterrupting(HandMade):
        def launches(self, recorder=None):
            for k, item in enumerate(super().launches(recorder)):
                if k == 1:
                    os.kill(os.getpid(), signal.SIGINT)  # handled: only a flag is set
                yield item

    # Compared with what was there before, not with Python's default: a test command started
    # in the background inherits SIGINT ignored, and the run must hand that back unchanged.
    before = signal.getsignal(signal.SIGINT)
    out = tmp_path / "sigint.sqlite"
    with pytest.raises(SimulationInterrupted) as stop:
        simulate(SelfInterrupting(kernels=3), tiny_config(), out, progress=False,
                 implementation="python")
    assert [name for name, _ in stop.value.result.kernels] == ["kernel0"]
    tables, (_, completed, open_tasks, _) = dump(out)
    assert completed == 0 and open_tasks == 1
    assert len(tables["task"]) == stop.value.result.tasks  # nothing lost mid-call
    assert signal.getsignal(signal.SIGINT) is before


def test_purepython_environment_selects_the_reference(monkeypatch):
    import importlib

    from simulator.gpu import platform

    monkeypatch.setenv("SIMULATOR_PUREPYTHON", "1")
    assert platform.default_implementation() == "python"
    gpu = platform.GPU(tiny_config())
    assert gpu.implementation == "python"
    assert type(gpu.engine).__module__ == "simulator.engine.engine"
    import simulator.engine as engine_package
    try:
        assert importlib.reload(engine_package).IMPLEMENTATION == "python"
    finally:
        monkeypatch.delenv("SIMULATOR_PUREPYTHON")
        importlib.reload(engine_package)
    if cython_available():
        assert platform.default_implementation() == "cython"
        assert type(platform.GPU(tiny_config()).engine).__module__ == "simulator.engine._engine"


@pytest.mark.parametrize("argv,message", [
    (["reduction-v1", "--local", "3"], "power-of-two work-group size"),
    (["vectoradd", "--local", "2048"], "vectoradd.cl:3:1: a work-group of 2048 work-items"),
])
def test_run_rejects_bad_sizes_with_one_line(tmp_path, capsys, argv, message):
    from simulator.__main__ import main

    out = tmp_path / "t.sqlite"
    assert main(["run", *argv, "-o", str(out), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and message in err and "Traceback" not in err
    assert list(tmp_path.iterdir()) == []
