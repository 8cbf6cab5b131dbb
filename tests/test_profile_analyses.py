"""The profile analyses (why-layer.md §9.2) on small hand-written Kineto traces whose
answers are known by construction, and their invariants (every breakdown sums to its
window exactly) under Hypothesis."""
import json
import subprocess
import sys

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from profile_traces import kineto

from simulator.analysis.report import analyze

US = 10 ** 6


def _ops(trace):
    report = analyze(trace)
    return report, {r["stream"]: r for r in report["analyses"]["idle-cause"]}


def test_budget_and_idle_classes(tmp_path):
    # stream 7: k1 [10, 20), a copy [20, 30) alone, k2 [50, 60) launched at 45 (after the
    # stream emptied at 30: host wait 20), k3 [65, 75) launched at 40 (kernel wait 5 µs)
    # stream 8: an nccl kernel [12, 40) under k1 for 8 µs; launched long before
    trace = kineto(tmp_path / "t", [
        {"name": "k1", "ts": 10, "dur": 10, "stream": 7, "launch": (5, 2)},
        {"name": "Memcpy HtoD (Pinned -> Device)", "cat": "gpu_memcpy", "ts": 20, "dur": 10,
         "stream": 7, "launch": (6, 2), "call": "cudaMemcpyAsync"},
        {"name": "k2", "ts": 50, "dur": 10, "stream": 7, "launch": (45, 2)},
        {"name": "k3", "ts": 65, "dur": 10, "stream": 7, "launch": (40, 2)},
        {"name": "ncclKernel_AllReduce", "ts": 12, "dur": 28, "stream": 8, "launch": (1, 2)},
    ])
    report, idle = _ops(trace)
    (device,) = report["devices"]
    # busy: [10, 40) ∪ [50, 60) ∪ [65, 75) = 50 of the span [10, 75) = 65
    assert device == {"device": 0, "span_ps": 65 * US, "compute_ps": 30 * US,
                      "non_compute_ps": 20 * US, "idle_ps": 15 * US, "copy_only_ps": 0}
    assert idle[7]["host_wait_ps"] == 20 * US and idle[7]["kernel_wait_ps"] == 5 * US
    assert idle[7]["other_ps"] == 0 and idle[7]["idle_ps"] == 25 * US
    (overlap,) = report["analyses"]["overlap"]
    assert (overlap["communication_ps"], overlap["comm_overlapped_ps"]) == (28 * US, 8 * US)
    assert (overlap["copy_ps"], overlap["copy_overlapped_ps"]) == (10 * US, 0)
    (launches,) = report["analyses"]["launch-stats"]
    # delays: 3, 12, 3, 23, 9 µs
    assert launches["launches"] == 5 and launches["launch_delay_ps"] == 50 * US


def test_copy_only_and_other_wait(tmp_path):
    # a copy alone [0, 4); a kernel [40, 41) launched at 2, while the stream still ran:
    # its 36 µs gap is "other" (not the host, and longer than 30 µs)
    trace = kineto(tmp_path / "t", [
        {"name": "Memcpy DtoH (Device -> Pageable)", "cat": "gpu_memcpy", "ts": 0, "dur": 4,
         "stream": 7, "launch": (0, 1), "call": "cudaMemcpyAsync"},
        {"name": "k", "ts": 40, "dur": 1, "stream": 7, "launch": (2, 1)},
    ])
    report, idle = _ops(trace)
    assert report["devices"][0]["copy_only_ps"] == 4 * US
    assert idle[7]["other_ps"] == 36 * US


def test_queue_length(tmp_path):
    # three launches at 0, 1, 2 before the first kernel starts at 10: the queue reaches 3
    trace = kineto(tmp_path / "t", [
        {"name": f"k{i}", "ts": 10 + 5 * i, "dur": 5, "stream": 7, "launch": (i, 1)}
        for i in range(3)])
    report, _ = _ops(trace)
    (queue,) = report["analyses"]["queue-length"]
    assert (queue["count"], queue["max"], queue["min"]) == (6, 3, 0)
    assert queue["peak_ps"] == 2 * US


OPS = st.lists(st.tuples(st.integers(0, 200), st.integers(0, 30), st.sampled_from([7, 8]),
                         st.sampled_from(["k", "ncclKernel", "Memcpy DtoD", "Memset"]),
                         st.integers(0, 50)), min_size=1, max_size=12)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(OPS, st.booleans())
def test_breakdowns_sum_to_their_windows(tmp_path, ops, like_hta):
    cats = {"k": "kernel", "ncclKernel": "kernel", "Memcpy DtoD": "gpu_memcpy",
            "Memset": "gpu_memset"}
    trace = kineto(tmp_path / "h", [
        {"name": name, "cat": cats[name], "ts": ts + 0.25, "dur": dur, "stream": stream,
         "launch": (max(0, ts - lead), 0.5)} for ts, dur, stream, name, lead in ops])
    report = analyze(trace, like_hta=like_hta)
    busy = set()
    for ts, dur, _, _, _ in ops:
        busy |= set(range(4 * ts + 1, 4 * (ts + dur) + 1))  # quarter µs steps
    for d in report["devices"]:
        assert d["compute_ps"] + d["non_compute_ps"] + d["idle_ps"] == d["span_ps"]
        assert d["copy_only_ps"] >= 0
        if not like_hta:
            # HTA rounds starts up and ends down to whole µs, so an event shorter than its
            # rounding ends before it starts there (HTA's own figures go negative too)
            assert d["copy_only_ps"] <= d["non_compute_ps"]
        if not like_hta and busy:
            assert d["span_ps"] - d["idle_ps"] == len(busy) * US // 4
    for r in report["analyses"]["idle-cause"]:
        assert r["host_wait_ps"] + r["kernel_wait_ps"] + r["other_ps"] == r["idle_ps"]


def test_cli_json_shape(tmp_path):
    trace = kineto(tmp_path / "t", [
        {"name": "k1", "ts": 0, "dur": 1, "stream": 7, "launch": (0, 0.5)},
        {"name": "k2", "ts": 500, "dur": 1, "stream": 7, "launch": (499, 0.5)}])
    out = subprocess.run([sys.executable, "-m", "simulator", "analyze", str(trace), "--json"],
                         check=True, capture_output=True, text=True).stdout
    report = json.loads(out)
    assert set(report) >= {"kernels", "devices", "analyses", "findings"}
    assert {f["rule"] for f in report["findings"]} >= {"time-budget", "idle-cause"}
    assert all(f["evidence"] for f in report["findings"])
