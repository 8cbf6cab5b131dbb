"""I10, the CPU–GPU critical path of a profile (HTA's lightweight algorithm): on HTA's
golden pair (its input trace and the overlaid trace HTA wrote from it, why-layer.md §8)
and on small hand-written traces whose path is known by construction."""
import gzip
import json
from collections import Counter
from decimal import Decimal

import pytest
from profile_traces import kineto

from simulator.__main__ import main
from simulator.analysis.profile import critical_path as cp
from simulator.analysis.profile.ops import load
from simulator.analysis.profile.trace import COLUMN, ProfileTrace
from simulator.analysis.report import analyze
from simulator.tracing.importers import import_trace

US = 10 ** 6


@pytest.fixture(scope="module")
def golden(tmp_path_factory, shared_trace):
    """(our trace of HTA's input, HTA's overlaid output as JSON)."""
    source = shared_trace("hta_critical_path_simple_add_input.json.gz")
    expected = shared_trace("hta_critical_path_simple_add_expected.json.gz")
    ours = tmp_path_factory.mktemp("golden") / "simple_add.sqlite"
    import_trace(source, ours, show_progress=False)
    with gzip.open(expected, "rt") as f:
        return ours, json.load(f)


def _key(event: dict) -> tuple:
    return event["cat"], event["name"], Decimal(str(event["ts"])), Decimal(str(event["dur"]))


def test_the_golden_pair_marks_the_events_hta_marks(golden, tmp_path):
    ours, hta = golden
    expected = Counter(_key(e) for e in hta["traceEvents"]
                       if e.get("ph") == "X" and e["args"].get("critical") == 1)
    assert sum(expected.values()) == 624
    out = tmp_path / "overlaid.json"
    assert main(["analyze", str(ours), "--critical-path-out", str(out)]) == 0
    events = json.loads(out.read_text())["traceEvents"]
    marked = Counter(_key(e) for e in events if e.get("ph") == "X" and e["args"].get("critical"))
    assert marked == expected
    flows = Counter(e["args"]["type"] for e in events
                    if e.get("cat") == "critical_path" and e["ph"] == "s")
    theirs = Counter(e["args"]["type"] for e in hta["traceEvents"]
                     if e.get("cat") == "critical_path" and e["ph"] == "s")
    assert flows == theirs == {cp.DEPENDENCY: 158, cp.SYNC: 17, cp.LAUNCH: 17}
    ids = Counter(e["id"] for e in events if e.get("ph") in ("s", "f"))
    assert set(ids.values()) == {2}  # the trace's own flows and the path's never share an id


def test_the_golden_pair_report(golden):
    ours, _ = golden
    report = analyze(ours)
    path = report["analyses"]["critical-path"]
    assert path["events"] == 624
    assert sum(e["ps"] for e in path["edges"].values()) == path["length_ps"]
    assert sum(b["ps"] for b in path["bound_by"].values()) == path["length_ps"]
    (finding,) = [f for f in report["findings"] if f["rule"] == "critical-path"]
    assert finding["evidence"][0] == {"view": "task", "loc": path["dominant"]["loc"],
                                      "task": path["dominant"]["task"],
                                      "t0": path["dominant"]["t0"], "t1": path["dominant"]["t1"]}


def _stream_sync(tmp_path, second: dict | None = None):
    """fwd [0, 70) launches k1 (call [2, 7), kernel [10, 60) on stream 7) and waits for
    it in cudaStreamSynchronize [20, 65) (its Stream Sync event ends at 65); opt [70, 80)
    follows. ``second``: one more kernel on the stream."""
    ops = [{"name": "k1", "ts": 10, "dur": 50, "stream": 7, "launch": (2, 5)},
           {"name": "Stream Sync", "cat": "cuda_sync", "ts": 60, "dur": 5, "stream": 7,
            "launch": (20, 45), "call": "cudaStreamSynchronize"}]
    return kineto(tmp_path / "t", ops + ([second] if second else []),
                  [{"name": "fwd", "ts": 0, "dur": 70}, {"name": "opt", "ts": 70, "dur": 10}])


def _path(trace, kernel_kernel_us: int = 1500):
    with ProfileTrace(trace) as t:
        profile = load(t)
        path = cp.critical_path(profile, kernel_kernel_us)
        names = [profile.name(profile.tasks[r, COLUMN["kind"]]) for r in sorted(path.tasks())]
        return path, sorted(names), cp.summary(profile, path)


def test_a_kernel_waited_for_carries_the_path(tmp_path):
    path, names, summary = _path(_stream_sync(tmp_path))
    # fwd start →2→ call start →8 (launch delay: the stream was empty)→ k1 →50→ k1 end
    # →0 (sync)→ the sync call's end →5→ fwd end →0 (dependency)→ opt →10→: 75 µs; the
    # call's own 45 µs weigh nothing (it blocks), the Stream Sync event has no node
    assert [(e.type, e.weight) for e in path.edges] == [
        (cp.OPERATOR, 2 * US), (cp.LAUNCH, 8 * US), (cp.OPERATOR, 50 * US), (cp.SYNC, 0),
        (cp.OPERATOR, 5 * US), (cp.DEPENDENCY, 0), (cp.OPERATOR, 10 * US)]
    assert names == sorted(["fwd", "cudaLaunchKernel", "k1", "cudaStreamSynchronize", "opt"])
    assert summary["length_ps"] == 75 * US
    assert {b: v["ps"] for b, v in summary["bound_by"].items()} == {
        "gpu_compute_bound": 50 * US, "cpu_bound": 17 * US, "gpu_kernel_launch_overhead": 8 * US,
        "dependency": 0}
    assert summary["dominant"]["name"] == "k1" and summary["dominant"]["ps"] == 50 * US


def test_a_queued_kernel_waits_for_the_one_before(tmp_path):
    # k2 [61, 70) is launched at 8 while k1 still runs: no launch delay, a kernel-kernel
    # edge of 1 µs from k1's end; a threshold of 1 µs leaves the edge out
    trace = _stream_sync(tmp_path, {"name": "k2", "ts": 61, "dur": 9, "stream": 7,
                                    "launch": (8, 1)})
    path, _, _ = _path(trace)
    assert (cp.KERNEL_KERNEL, 1 * US) in [(e.type, e.weight) for e in path.edges]
    graph = cp.build(load(ProfileTrace(trace)), kernel_kernel_delay_us=1)
    assert cp.KERNEL_KERNEL not in {e.type for e in graph.edges}


def test_event_syncs_join_the_recorded_kernel(shared_trace, tmp_path):
    # HTA's cuda_event_sync case: cudaEventSynchronize waits on the kernel launched before
    # cudaEventRecord (§8: its sync edges exist and weigh 0)
    trace = tmp_path / "sync.sqlite"
    import_trace(shared_trace("hta_event_sync.json.gz"), trace, show_progress=False)
    with ProfileTrace(trace) as t:
        profile = load(t)
        graph = cp.build(profile)
        waits = [e for e in graph.edges if e.type == cp.SYNC
                 and profile.name(profile.tasks[graph.row[e.dst], COLUMN["kind"]])
                 == "cudaEventSynchronize"]
    assert waits and all(e.weight == 0 for e in waits)
    assert all(graph.end[graph.row[e.src]] == e.src for e in waits)


def test_a_window_keeps_the_events_that_start_in_it(tmp_path):
    # HTA's region: [65, 90) µs holds only opt (fwd, the calls and k1 start before it)
    trace = _stream_sync(tmp_path)
    with ProfileTrace(trace) as t:
        profile = load(t, window=(65 * US, 90 * US))
        path = cp.critical_path(profile)
        names = {profile.name(profile.tasks[r, COLUMN["kind"]]) for r in path.tasks()}
    assert names == {"opt"} and [e.weight for e in path.edges] == [10 * US]
