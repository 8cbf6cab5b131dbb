"""S11 in the Component view (issue 32): the durations of the tasks a component's window
shows, counted and ranked exactly as SQL over the same tasks says."""
import math
import sqlite3

import pytest
from test_app_traces import write_synthetic_trace

from dashapp import urls
from dashapp.daisen import durations


@pytest.fixture(scope="module")
def trace(tmp_path_factory):
    return write_synthetic_trace(tmp_path_factory.mktemp("durations") / "syn.sqlite", tasks=6000)


def _sql(path, loc, t0, t1):
    db = sqlite3.connect(path)
    rows = db.execute("SELECT t.id, t.end_ps - t.start_ps FROM task t JOIN location l"
                      " ON l.id = t.location WHERE l.name = ? AND t.start_ps < ? AND t.end_ps > ?",
                      (loc, t1, t0)).fetchall()
    db.close()
    return rows


def test_the_window_s_tasks_are_counted_and_ranked_as_sql_says(trace):
    state = urls.ComponentState(trace="syn.sqlite", loc="GPU.L2[0]", t0=0, t1=2_000_000)
    found = durations.durations(trace, state)
    rows = _sql(trace, "GPU.L2[0]", 0, 2_000_000)
    d = found.found
    assert d["count"] == len(rows) > 0 and not found.truncated
    ordered = sorted(ps for _, ps in rows)
    for key, q in (("p50_ps", 0.5), ("p90_ps", 0.9), ("p99_ps", 0.99)):
        assert d[key] == ordered[math.ceil(q * len(ordered)) - 1]  # nearest rank
    assert d["max_ps"] == ordered[-1]
    assert sum(b["count"] for b in d["bins"]) == len(rows)
    q1, q3 = ordered[math.ceil(0.25 * len(ordered)) - 1], ordered[math.ceil(0.75 * len(ordered)) - 1]
    beyond = {i for i, ps in rows if ps > q3 + 3 * (q3 - q1)}
    assert d["above_fence"] == len(beyond)
    assert {o["task"] for o in d["outliers"]} <= beyond
    assert [o["ps"] for o in d["outliers"]] == sorted((o["ps"] for o in d["outliers"]), reverse=True)


def test_the_histogram_outlines_every_bin(trace):
    found = durations.durations(trace, urls.ComponentState(trace="syn.sqlite", loc="GPU.L2[0]"))
    fig = durations.figure(found.found)
    line = fig["data"][0]
    assert line["line_shape"] == "hv" and line["y"][-1] == 0
    drawn = dict(zip(line["x"], line["y"]))
    assert all(drawn[b["lo_ps"] * 1e-12] == b["count"] for b in found.found["bins"])
    assert [a["text"] for a in fig["layout"]["annotations"]] == ["p50", "p90", "p99"]


def test_an_unknown_component_is_a_message(trace):
    with pytest.raises(LookupError, match="no component named 'GPU.nope'"):
        durations.durations(trace, urls.ComponentState(trace="syn.sqlite", loc="GPU.nope"))
