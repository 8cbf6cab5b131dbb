"""I12, the pace of iterations and its jitter: hand-made traces whose deltas, CV and
outliers are known by construction, the threshold's edge, a named kernel or range as
the iterations, and the shared A/B pair (V100 jitters, A100 does not) against the
profiler steps' own timestamps read from the JSON."""
import gzip
import json
import subprocess
import sys
from decimal import Decimal

import numpy as np
import pytest
from profile_traces import kineto

from dashapp.findings.figures import pace_figure
from simulator.analysis.profile.report import analyze_profile
from simulator.analysis.thresholds import Thresholds
from simulator.tracing.importers import import_trace
from simulator.tracing.writer import TraceError

US = 10 ** 6


def _steps(tmp_path, starts, durations, extra=()):
    """Profiler steps #1... at ``starts`` (µs) lasting ``durations``, each launching one
    kernel "k" at its start; ``extra`` ops as ``kineto`` takes them."""
    ops = [{"name": "k", "ts": s + 1, "dur": 1, "stream": 7, "launch": (s, 0.5)} for s in starts]
    cpu = [{"name": f"ProfilerStep#{i}", "cat": "user_annotation", "ts": s, "dur": d}
           for i, (s, d) in enumerate(zip(starts, durations), 1)]
    return kineto(tmp_path / "t", ops + list(extra), cpu)


def _pace(report):
    return report["analyses"]["pace"], [f for f in report["findings"] if f["rule"] == "pace"]


def test_a_late_step_jitters_and_is_the_outlier(tmp_path):
    # deltas 10, 10, 10, 25: mean 13.75, sample std 7.5, CV 6/11; Q1 = Q3 = 10 (nearest
    # rank), so the fence is 10 and 25 lies above; durations 8 ×4 and 20 likewise
    trace = _steps(tmp_path, [0, 10, 20, 30, 55], [8, 8, 8, 8, 20])
    pace, (finding,) = _pace(analyze_profile(trace))
    assert (pace["subject"], pace["kind"], pace["count"]) == ("ProfilerStep#N", "step", 5)
    assert [i["delta_ps"] for i in pace["instances"]] == [None, 10 * US, 10 * US, 10 * US, 25 * US]
    assert pace["cv"] == pytest.approx(7.5 / 13.75) and pace["jitter"]
    assert pace["median_delta_ps"] == 10 * US and pace["beyond_median_ps"] == 15 * US
    last = pace["instances"][-1]["task"]
    assert [o["task"] for o in pace["duration_outliers"]["instances"]] == [last]
    assert [o["task"] for o in pace["delta_outliers"]["instances"]] == [last]
    assert finding["explains_ps"] == 15 * US
    assert finding["evidence"][0] == {"view": "task", "loc": pace["slowest"]["loc"],
                                      "task": last, "t0": 30 * US, "t1": 75 * US}


def test_the_cv_threshold_is_where_jitter_starts(tmp_path):
    # deltas 10, 10, 10, 12: mean 10.5, sample std 1, CV 0.0952...
    trace = _steps(tmp_path, [0, 10, 20, 30, 42], [5] * 5)
    pace, found = _pace(analyze_profile(trace))
    assert pace["cv"] == pytest.approx(1 / 10.5) and not pace["jitter"] and not found
    pace, found = _pace(analyze_profile(trace, thresholds=Thresholds(pace_cv=0.09)))
    assert pace["jitter"] and len(found) == 1


def test_a_named_kernel_or_range_delimits_the_iterations(tmp_path):
    trace = _steps(tmp_path, [0, 100], [90, 90], extra=[
        {"name": "iter", "ts": 10 + 50 * i, "dur": 2, "stream": 8, "launch": (5 + 50 * i, 1)}
        for i in range(4)])
    pace, _ = _pace(analyze_profile(trace, pace_of="iter"))
    assert (pace["kind"], pace["count"], pace["cv"]) == ("kernel", 4, 0.0)
    assert pace["instances"][1]["start_ps"] == 60 * US
    # only two steps: too few iterations to have a pace
    assert "needs iterations" in analyze_profile(trace)["analyses"]["pace"]["unavailable"]
    with pytest.raises(TraceError, match="no range or kernel is called 'itre'"):
        analyze_profile(trace, pace_of="itre")


def test_the_cli_takes_the_subject_by_name(tmp_path):
    trace = _steps(tmp_path, [0, 10, 20, 35], [5] * 4)
    out = subprocess.run([sys.executable, "-m", "simulator", "analyze", str(trace), "--pace",
                          "k", "--json"], check=True, capture_output=True, text=True).stdout
    pace = json.loads(out)["analyses"]["pace"]
    assert (pace["subject"], pace["kind"], pace["count"]) == ("k", "kernel", 4)


def test_the_pace_figure_marks_the_outlying_delta(tmp_path):
    trace = _steps(tmp_path, [0, 10, 20, 30, 55], [8, 8, 8, 8, 20])
    fig = pace_figure(analyze_profile(trace)["analyses"]["pace"])
    (bars,) = fig.data
    assert list(bars.y) == [10, 10, 10, 25]
    assert list(bars.marker.color) == ["#3182bd"] * 3 + ["#de2d26"]
    assert pace_figure({"unavailable": "needs iterations"}) is None


def _step_starts(path):
    """The profiler steps' starts in µs, as Decimals, from the JSON itself."""
    with gzip.open(path) as f:
        events = json.load(f, parse_float=Decimal)["traceEvents"]
    return sorted(Decimal(e["ts"]) for e in events
                  if e.get("ph") == "X" and str(e.get("name", "")).startswith("ProfilerStep#"))


@pytest.mark.parametrize("name, jitters", [("hta_diff_control_a100.json.gz", False),
                                           ("hta_diff_test_v100.json.gz", True)])
def test_the_shared_pair_paces_as_its_step_timestamps_say(tmp_path, shared_trace, name, jitters):
    source = shared_trace(name)
    out = tmp_path / "t.sqlite"
    import_trace(source, out, show_progress=False)
    deltas = np.diff(np.array([float(s) for s in _step_starts(source)]))
    pace, found = _pace(analyze_profile(out))
    assert [i["delta_ps"] for i in pace["instances"][1:]] == [round(d * US) for d in deltas]
    assert pace["cv"] == pytest.approx(deltas.std(ddof=1) / deltas.mean(), rel=1e-12)
    assert pace["jitter"] == jitters == bool(found)
