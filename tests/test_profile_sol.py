"""I14, speed of light on real kernels: Nsight Compute's rule on GPU counters sampled
inside each kernel, checked on hand-made traces with Chrome counter events whose means
are known by construction; and an honest "needs counters" where a profile has none
(every shared trace) or only counters that are not throughput (nsys' SMs Active)."""
import subprocess
import sys

import pytest
from profile_traces import kineto
from test_nsys_import import build_export

from simulator.analysis.profile.report import analyze_profile
from simulator.tracing.importers import import_trace

US = 10 ** 6
SM = "sm__throughput.avg.pct_of_peak_sustained_elapsed"
MEM = "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed"


def _counter(name, ts, value):
    return {"ph": "C", "name": name, "pid": 0, "ts": ts, "args": {"value": value}}


def _sol(report):
    return report["analyses"]["speed-of-light"], [
        f for f in report["findings"] if f["rule"] == "speed-of-light"]


def test_the_counters_inside_each_kernel_classify_it(tmp_path):
    # "mem" [10, 20): memory at 100 % for its first half, 60 % after: mean 80 %, bound.
    # "slow" [30, 40): SM 30 %, memory 20 % (the samples at 25 hold into it): latency.
    # "nsys" [50, 60): nsys' series too, but Nsight Compute's, still 30 % and 20 %, win.
    trace = kineto(tmp_path / "t", [
        {"name": "mem", "ts": 10, "dur": 10, "stream": 7, "launch": (5, 1)},
        {"name": "slow", "ts": 30, "dur": 10, "stream": 7, "launch": (25, 1)},
        {"name": "nsys", "ts": 50, "dur": 10, "stream": 7, "launch": (45, 1)},
    ], extra=[
        _counter(SM, 10, 20), _counter(MEM, 10, 100), _counter(MEM, 15, 60),
        _counter(SM, 25, 30), _counter(MEM, 25, 20),
        {"ph": "C", "name": "GPU metrics", "pid": 0, "ts": 50, "args": {
            "SM Issue [Throughput %]": 50, "Tensor Active [Throughput %]": 70,
            "DRAM Read Bandwidth [Throughput %]": 40, "DRAM Write Bandwidth [Throughput %]": 25}},
    ])
    sol, found = _sol(analyze_profile(trace))
    rows = {k["name"]: k for k in sol["kernels"]}
    assert rows["mem"]["memory_sol"] == pytest.approx(0.8) and rows["mem"]["kind"] == "memory-bound"
    assert (rows["slow"]["compute_sol"], rows["slow"]["memory_sol"]) == pytest.approx((0.3, 0.2))
    assert rows["slow"]["kind"] == "latency-bound"
    assert (rows["nsys"]["compute_sol"], rows["nsys"]["memory_sol"]) == pytest.approx((0.3, 0.2))
    assert [f["message"].split(":")[0] for f in found] == ["mem is memory-bound"]
    assert found[0]["explains_ps"] == 8 * US


def test_nsys_names_alone_make_c_the_busier_sub_unit_and_m_both_directions(tmp_path):
    trace = kineto(tmp_path / "t", [
        {"name": "gemm", "ts": 50, "dur": 10, "stream": 7, "launch": (45, 1)}], extra=[
        {"ph": "C", "name": "GPU metrics", "pid": 0, "ts": 40, "args": {
            "SM Issue [Throughput %]": 50, "Tensor Active [Throughput %]": 70,
            "DRAM Read Bandwidth [Throughput %]": 40, "DRAM Write Bandwidth [Throughput %]": 25}}])
    (row,) = _sol(analyze_profile(trace))[0]["kernels"]
    assert (row["compute_sol"], row["memory_sol"]) == pytest.approx((0.7, 0.65))
    assert row["kind"] == "balanced"


def test_a_kernel_before_the_first_sample_has_no_speed_of_light(tmp_path):
    trace = kineto(tmp_path / "t", [
        {"name": "early", "ts": 0, "dur": 5, "stream": 7, "launch": None},
        {"name": "late", "ts": 20, "dur": 5, "stream": 7, "launch": None}],
        extra=[_counter(SM, 10, 90), _counter(MEM, 10, 10)])
    sol, found = _sol(analyze_profile(trace))
    assert [k["name"] for k in sol["kernels"]] == ["late"] and len(found) == 1


def test_counters_that_are_not_throughput_need_counters(tmp_path):
    """nsys' schema (tests/test_nsys_import.py) samples SMs Active and the clock: not
    what the rule reads."""
    out = tmp_path / "out.sqlite"
    import_trace(build_export(tmp_path / "built.sqlite"), out, show_progress=False)
    sol, found = _sol(analyze_profile(out))
    assert sol["unavailable"].startswith("needs counters") and not found


@pytest.mark.parametrize("name", ["nsys_cloverleaf_a100_perlmutter.sqlite",
                                  "hta_alexnet_a100.json.gz"])
def test_the_shared_profiles_have_no_counters_and_say_so(tmp_path, shared_trace, name):
    out = tmp_path / "t.sqlite"
    subprocess.run([sys.executable, "-m", "simulator", "import", str(shared_trace(name)),
                    "-o", str(out)], check=True, capture_output=True)
    text = subprocess.run([sys.executable, "-m", "simulator", "analyze", str(out)],
                          check=True, capture_output=True, text=True).stdout
    assert "speed of light (I14): needs counters" in text
    assert "[speed-of-light]" not in text
