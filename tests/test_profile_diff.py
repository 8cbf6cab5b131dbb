"""I13, two profiles compared: operations by name in HTA TraceDiff's categories (against
HolisticTraceAnalysis itself on the shared A/B pair, and against SQL over the imported
traces), a profiler step's members by HTA's rule on a hand-made trace, and the analyses
side by side, as the Compare page shows them."""
import sqlite3
from collections import Counter

import pytest
from hta_reference import hta_analysis
from profile_traces import kineto

from dashapp.comparison.figures import budget_comparison
from simulator.analysis.profile.diff import CATEGORIES, analyses_diff, ops_diff, ops_summary
from simulator.analysis.profile.ops import load
from simulator.analysis.profile.report import analyze_profile
from simulator.analysis.profile.trace import ProfileTrace
from simulator.tracing.importers import import_trace
from simulator.tracing.writer import TraceError

US = 10 ** 6
PAIR = ("hta_diff_control_a100.json.gz", "hta_diff_test_v100.json.gz")


def _summary(path, step=None):
    with ProfileTrace(path) as trace:
        return ops_summary(load(trace), step)


def _steps(tmp_path, name, late_kernel):
    """Step 1 [0, 50) launches k1 (call at 5, runs [60, 70): after the step, still its)
    and a copy; step 2 [50, 100) launches k2 (call 55) and, in B, ``late_kernel``; an
    op launched at 120, after both steps, belongs to neither."""
    ops = [{"name": "k1", "ts": 60, "dur": 10, "stream": 7, "launch": (5, 2)},
           {"name": "Memcpy HtoD", "cat": "gpu_memcpy", "ts": 10, "dur": 4, "stream": 7,
            "launch": (8, 1), "call": "cudaMemcpyAsync"},
           {"name": "k2", "ts": 75, "dur": 10, "stream": 7, "launch": (55, 2)},
           {"name": "k3", "ts": 125, "dur": 5, "stream": 7, "launch": (120, 1)}]
    if late_kernel:
        ops.append({"name": late_kernel, "ts": 90, "dur": 5, "stream": 7, "launch": (60, 1)})
    return kineto(tmp_path / name, ops, [
        {"name": "ProfilerStep#1", "cat": "user_annotation", "ts": 0, "dur": 50},
        {"name": "ProfilerStep#2", "cat": "user_annotation", "ts": 50, "dur": 50},
        {"name": "aten::mm", "ts": 4, "dur": 4}])


def test_a_step_holds_its_cpu_tasks_and_what_they_launched(tmp_path):
    first = _summary(_steps(tmp_path, "a", None), step=1)
    assert first == {"ProfilerStep#1": (1, 50 * US), "aten::mm": (1, 4 * US),
                     "cudaLaunchKernel": (1, 2 * US), "cudaMemcpyAsync": (1, 1 * US),
                     "k1": (1, 10 * US), "Memcpy HtoD": (1, 4 * US)}
    with pytest.raises(TraceError, match="no ProfilerStep#3; the trace has steps 1 to 2"):
        _summary(_steps(tmp_path, "b", None), step=3)


def test_ops_diff_categories_follow_the_counts(tmp_path):
    a = _summary(_steps(tmp_path, "a", None), step=2)
    b = _summary(_steps(tmp_path, "b", "k9"), step=2)
    rows = {r["name"]: r for r in ops_diff(a, b)}
    assert rows["k9"]["category"] == "added" and rows["k9"]["diff_ps"] == 5 * US
    assert rows["cudaLaunchKernel"]["category"] == "increased"
    assert (rows["cudaLaunchKernel"]["count_a"], rows["cudaLaunchKernel"]["count_b"]) == (1, 2)
    assert rows["k2"]["category"] == "unchanged"
    assert ops_diff(b, a)[0]["category"] == "deleted"  # k9, the largest change, either way
    assert {r["category"] for r in ops_diff(b, a)} == {"deleted", "decreased", "unchanged"}


def test_the_analyses_side_by_side_pair_devices_in_order(tmp_path):
    a = analyze_profile(_steps(tmp_path, "a", None))
    b = analyze_profile(_steps(tmp_path, "b", "k9"))
    rows = {(r.analysis, r.label): r for r in analyses_diff(a, b)}
    span = rows[("I1 time budget", "GPU 0 span")]
    assert (span.a, span.b, span.unit) == (120 * US, 120 * US, "ps")
    # busy: the copy [10, 14), k1 [60, 70), k2 [75, 85), k3 [125, 130), and B's k9 [90, 95)
    idle = rows[("I1 time budget", "GPU 0 idle")]
    assert (idle.a, idle.b) == (91 * US, 86 * US)
    launches = rows[("I5 launch statistics", "GPU 0 launches")]
    assert (launches.a, launches.b, launches.unit) == (4, 5, "count")
    assert ("I12 pace", "iterations") not in rows  # two steps: no pace on either side
    fig = budget_comparison(a["devices"], b["devices"])
    stacked = [sum(trace["y"][i] for trace in fig["data"]) for i in range(2)]
    assert stacked == pytest.approx([0.12, 0.12])  # each bar sums to its span, in ms


@pytest.fixture(scope="module")
def pair(tmp_path_factory, shared_trace):
    directory = tmp_path_factory.mktemp("pair")
    out = []
    for name in PAIR:
        path = directory / name.replace(".json.gz", ".sqlite")
        import_trace(shared_trace(name), path, show_progress=False)
        out.append(path)
    return out


def test_the_whole_pair_counts_each_name_as_sql_does(pair):
    for path in pair:
        db = sqlite3.connect(path.resolve().as_uri() + "?mode=ro", uri=True)
        try:
            expected = {name: (n, total) for name, n, total in db.execute(
                "SELECT k.action, count(*), sum(t.end_ps - t.start_ps) FROM task t"
                " JOIN kind k ON k.id = t.kind GROUP BY k.action")}
        finally:
            db.close()
        assert _summary(path) == expected
    counts = Counter(r["category"] for r in ops_diff(*(_summary(p) for p in pair)))
    assert counts == {"deleted": 138, "unchanged": 131, "increased": 74, "decreased": 64,
                      "added": 32}


def test_the_pair_reads_a_jittery_v100_against_the_a100(pair):
    rows = {(r.analysis, r.label): r for r in analyses_diff(*(analyze_profile(p) for p in pair))}
    cv = rows[("I12 pace", "CV of the deltas")]
    assert cv.a < 0.1 < cv.b
    assert rows[("I1 time budget", "GPU 3 ↔ GPU 1 span")].b > rows[
        ("I1 time budget", "GPU 3 ↔ GPU 1 span")].a


@pytest.mark.slow
def test_the_first_step_diff_equals_htas_trace_diff(pair, shared_trace, tmp_path):
    """HTA compares the first profiler step of each trace by default (1009 in both)."""
    from hta.trace_diff import LabeledTrace, TraceDiff

    labeled = [LabeledTrace(label, t=hta_analysis(shared_trace(name), tmp_path / label).t)
               for label, name in zip("AB", PAIR)]
    hta = TraceDiff.compare_traces(*labeled)
    ours = ops_diff(*(_summary(p, step=1009) for p in pair))
    assert {r["name"]: (r["count_a"], r["count_b"], r["total_a_ps"], r["total_b_ps"])
            for r in ours} == {
        name: (int(r.A_counts), int(r.B_counts), int(r.A_total_duration) * US,
               int(r.B_total_duration) * US) for name, r in hta.iterrows()}
    categories = TraceDiff.ops_diff(*labeled)
    assert {c: sorted(r["name"] for r in ours if r["category"] == c) for c in CATEGORIES} == {
        c: sorted(categories[c]) for c in CATEGORIES}
    assert {c: len(v) for c, v in categories.items()} == {
        "added": 32, "deleted": 138, "increased": 35, "decreased": 65, "unchanged": 162}
