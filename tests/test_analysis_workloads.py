"""The analyses on the workloads' case studies: what a GPU architect should be told.

Each runs a workload through the CLI at the smallest size that still shows its effect
(PageRank's dispatch limit needs its default 2048 one-wavefront work-groups to outlast
the 1.6 µs launch overhead; the transpose's DRAM bound needs its 1024 x 1024 matrix).
"""
import subprocess
import sys

import pytest

from simulator.__main__ import main
from simulator.analysis.report import analyze
from simulator.analysis.what_if import sweep_command

pytest.importorskip("simulator.gpu.run")


def run(tmp_path, name, *options):
    path = tmp_path / f"{name}.sqlite"
    assert main(["run", name, "-o", str(path), "--no-progress", *options]) == 0
    return analyze(path)


def test_pagerank_is_first_explained_by_its_dispatch_rate(tmp_path):
    # As a user runs it: every trace level, so every analysis has its say.
    report = run(tmp_path, "pagerank", "--iterations", "2")
    first = report["findings"][0]
    assert first["rule"] == "cu-idle"
    assert first["message"].startswith("dispatch-bound") and "cp.wg_dispatch_per_cycle" in first["message"]
    assert first["explains_ps"] == 2048 * 1000  # 2048 work-groups at one per 1 ns cycle
    assert {e["view"] for e in first["evidence"]} == {"overview", "component"}
    assert report["kernels"][0]["roofline"]["roof_share"] is not None


def test_an_analysis_whose_tasks_were_not_recorded_says_what_it_needs(tmp_path):
    report = run(tmp_path, "pagerank", "--iterations", "1", "--nodes", "512", "--edges", "4096",
                 "--trace-level", "wf")
    assert report["kernels"][0]["cpi_stack"] == {
        "unavailable": "needs --trace-level inst (this trace has no inst tasks)"}


def test_transpose_is_memory_bound_on_dram(tmp_path):
    report = run(tmp_path, "transpose", "--size", "1024", "--no-instrument")
    sol = report["kernels"][0]["sol"]
    assert report["kernels"][0]["classification"]["kind"] == "memory-bound"
    assert report["kernels"][0]["classification"]["unit"] == "DRAM"
    assert sol["units"]["DRAM"]["sol"] >= 0.8 > sol["compute_sol"]
    assert report["findings"][0]["rule"] == "speed-of-light"
    assert "DRAM" in report["findings"][0]["message"]


@pytest.mark.parametrize(("version", "hints"), [
    (1, ["divergence"]), (2, ["bank-conflicts"]), (3, [])])
def test_reduction_hints(tmp_path, version, hints):
    report = run(tmp_path, f"reduction-v{version}", "--size", "16384", "--trace-level", "inst")
    for kernel in report["kernels"]:
        assert [h["hint"] for h in kernel["hints"]["hints"]] == hints
    found = [f for f in report["findings"] if f["rule"] == "kernel-hints"]
    assert len(found) == len(hints) * len(report["kernels"])
    assert all(e["view"] == "kernel" for f in found for e in f["evidence"])


def test_the_what_if_measures_pagerank_with_double_the_dispatch_rate(tmp_path):
    trace = tmp_path / "pagerank.sqlite"
    # a child process, so the trace records the `run` command line the what-if repeats
    subprocess.run([sys.executable, "-m", "simulator", "run", "pagerank", "--iterations", "1",
                    "--trace-level", "wf", "--no-progress", "-o", str(trace)],
                   check=True, capture_output=True)
    report = analyze(trace, what_if=tmp_path / "what-if")
    what_if, = report["kernels"][0]["what_if"]  # a rate of 1 cannot be halved
    assert (what_if["key"], what_if["factor"]) == ("cp.wg_dispatch_per_cycle", 2.0)
    assert 1.05 <= what_if["speedup"] <= 1.25
    found, = [f for f in report["findings"] if f["rule"] == "what-if"]
    assert found["evidence"][0]["view"] == "compare"


def test_the_what_if_repeats_the_run_command_with_its_own_options(tmp_path):
    argv = sweep_command("python -m simulator run pagerank --nodes 64 -o out.sqlite --force"
                         " --trace-level=all --set l2.banks=8", "cp.launch_overhead", [800, 3200],
                         tmp_path)
    assert argv[1:] == ["-m", "simulator", "sweep", "pagerank", "--nodes", "64", "--set",
                        "l2.banks=8", "--vary", "cp.launch_overhead=800,3200", "-o", str(tmp_path),
                        "--trace-level", "kernel", "--no-instrument", "--no-progress"]
