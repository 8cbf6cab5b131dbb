"""I4 in TraceLens' taxonomy (``profile.starvation``) on small hand-written Kineto traces
whose classes are known by construction (TraceLens' own synthetic cases, re-expressed):
each gap's drain type and CPU class, the noise floor, and the thresholds moved."""
from profile_traces import kineto

from simulator.analysis.profile.ops import load
from simulator.analysis.profile.starvation import starvation
from simulator.analysis.profile.trace import ProfileTrace

US = 10 ** 6
ORIGIN = {"name": "origin", "cat": "user_annotation", "ts": 0, "dur": 1}
"""A marker at 0 µs, so that the trace's times are the ones written here."""


def _gaps(trace, **thresholds):
    with ProfileTrace(trace) as t:
        (device,) = starvation(load(t), **thresholds)
    assert sum(c["ps"] for c in device["classes"].values()) == device["gap_ps"]
    return device, {(g["t0"] // US, g["t1"] // US): g for g in device["rows"]}


def test_an_untraced_gap_and_one_the_cpu_fills(tmp_path):
    # kernels at 100, 200 and 500 µs lasting 50, each launched 5 µs before (3 µs calls);
    # aten::mm runs on the launching thread over [260, 460)
    trace = kineto(tmp_path / "t", [
        {"name": f"k{i}", "ts": ts, "dur": 50, "stream": 7, "launch": (ts - 5, 3)}
        for i, ts in enumerate((100, 200, 500))], [ORIGIN, {"name": "aten::mm", "ts": 260, "dur": 200}])
    device, gaps = _gaps(trace)
    assert set(gaps) == {(150, 200), (250, 500)}
    # [150, 200): the launch came 45 µs into the gap, nothing else on the CPU is traced
    first = gaps[150, 200]
    assert (first["drain_type"], first["cpu_during_gap"]) == ("starved", "CPU_UNTRACED")
    assert first["launch_to_exec_ps"] == 2 * US and first["prequeued"] is False
    # [250, 500): aten::mm's 200 µs of self time cover 80 % of it
    second = gaps[250, 500]
    assert (second["drain_type"], second["cpu_during_gap"]) == ("starved", "CPU_DOMINATED")
    assert second["dominant_op"]["name"] == "aten::mm" and second["dominant_op"]["ps"] == 200 * US
    assert device["classes"]["starved/CPU_DOMINATED"]["ps"] == 250 * US


def _drained(tmp_path):
    # k1 [10, 20) waited for by cudaDeviceSynchronize [5, 21); cudaMalloc [22, 40); k2
    # [50, 60) launched at 45: the gap [20, 50) is a drain, 18 of its 30 µs in cudaMalloc
    return kineto(tmp_path / "t", [
        {"name": "k1", "ts": 10, "dur": 10, "stream": 7, "launch": (2, 2)},
        {"name": "k2", "ts": 50, "dur": 10, "stream": 7, "launch": (45, 2)}],
        [ORIGIN, {"name": "cudaDeviceSynchronize", "cat": "cuda_runtime", "ts": 5, "dur": 16},
         {"name": "cudaMalloc", "cat": "cuda_runtime", "ts": 22, "dur": 18}])


def test_a_drain_then_a_runtime_call(tmp_path):
    _, gaps = _gaps(_drained(tmp_path))
    gap = gaps[20, 50]
    assert (gap["drain_type"], gap["cpu_during_gap"]) == ("sync_drain", "RUNTIME_DOMINATED")
    assert gap["runtime"] == {"name": "cudaMalloc", "kind": "MEMORY_ALLOC", "ps": 18 * US}


def test_the_runtime_share_threshold(tmp_path):
    # 18 / 30 = 60 % of the gap: under a 70 % threshold the call no longer dominates
    _, gaps = _gaps(_drained(tmp_path), runtime_share=0.7)
    assert gaps[20, 50]["cpu_during_gap"] == "CPU_UNTRACED"


def test_launch_anomaly_overhead_and_noise(tmp_path):
    # k2 was launched at 3 (prequeued long before k1 ended at 20) yet starts at 40: an
    # anomaly; k3's 8 µs call starts 1 µs into the gap [50, 62): only the launch; the 3 µs
    # gap [70, 73) before k4 is noise
    trace = kineto(tmp_path / "t", [
        {"name": "k1", "ts": 10, "dur": 10, "stream": 7, "launch": (2, 1)},
        {"name": "k2", "ts": 40, "dur": 10, "stream": 7, "launch": (3, 2)},
        {"name": "k3", "ts": 62, "dur": 8, "stream": 7, "launch": (51, 8)},
        {"name": "k4", "ts": 73, "dur": 7, "stream": 7, "launch": (60, 1)}], [ORIGIN])
    device, gaps = _gaps(trace)
    assert set(gaps) == {(20, 40), (50, 62)}
    assert gaps[20, 40]["prequeued"] and gaps[20, 40]["cpu_during_gap"] == "LAUNCH_ANOMALY"
    assert gaps[50, 62]["cpu_during_gap"] == "LAUNCH_OVERHEAD_ONLY"
    assert device["noise_ps"] == 3 * US
    # a noise floor above 20 µs leaves nothing to classify
    assert _gaps(trace, noise_us=21)[0]["classes"] == {}
