"""The Loader API that every importer writes through: tasks, links, flow points,
instants, counters, the time origin and location order."""
import json
import sqlite3

import pytest

from simulator.tracing.importers.loader import ForeignTask, Loader, TraceFormatError

EPOCH_PS = 1_751_410_836_123_456_789_000  # an epoch-scale time: far beyond int64 ps


def _task(ext, start, end, location="cpu", parent=None, track=None, action=None):
    return ForeignTask(ext_id=ext, parent_ext=parent, category="op", action=action or ext,
                       location=location, start_ps=start, end_ps=end, where=f"row {ext}",
                       track=track)


def test_links_instants_counters_and_origin(tmp_path):
    loader = Loader(tmp_path / "o.sqlite", source="test", command="t")
    loader.set_clock("unix")
    loader.set_metadata({"device": "H100"})
    loader.add(_task("launch", EPOCH_PS + 5_000, EPOCH_PS + 9_000))
    loader.add(_task("kernel", EPOCH_PS + 20_000, EPOCH_PS + 90_000, location="gpu"))
    loader.add(_task("early", EPOCH_PS + 1_000, EPOCH_PS + 2_000))
    loader.add_link("launch", "kernel", "ac2g")
    loader.add_link("launch", "missing", "ac2g")
    loader.add_instant("cpu", EPOCH_PS + 3_000, "[memory]", "cpu_instant_event", '{"Bytes": 4}')
    loader.add_instant(None, EPOCH_PS + 4_000, "global")
    loader.add_counter("gpu", "mem.used", EPOCH_PS + 500, 7)
    loader.add_counter("gpu", "mem.used", EPOCH_PS + 600, 2.5)
    loader.set_location_order("gpu", (0,))
    loader.set_location_order("cpu", (1,))
    report = loader.finish(show_progress=False)
    assert (report.tasks, report.links, report.unresolved_links, report.instants,
            report.counters) == (3, 1, 1, 2, 2)
    db = sqlite3.connect(tmp_path / "o.sqlite")
    assert db.execute("PRAGMA user_version").fetchone()[0] == 2
    origin, clock, meta = db.execute("SELECT time_origin, clock, metadata FROM run").fetchone()
    assert (origin, clock) == ("1751410836.1234567895", "unix")  # earliest: the counter
    assert json.loads(meta) == {"device": "H100"}
    times = dict(db.execute("SELECT ext_id, start_ps FROM task"))
    assert times == {"launch": 4_500, "kernel": 19_500, "early": 500}
    assert db.execute("SELECT t1.ext_id, t2.ext_id, task_link.kind FROM task_link JOIN task t1 ON t1.id = src"
                      " JOIN task t2 ON t2.id = dst").fetchall() == [("launch", "kernel", "ac2g")]
    assert db.execute("SELECT l.name, time_ps, i.name FROM instant i LEFT JOIN location l"
                      " ON l.id = i.location ORDER BY i.id").fetchall() == [
        ("cpu", 2_500, "[memory]"), (None, 3_500, "global")]
    assert db.execute("SELECT s.name, time_ps, value FROM counter JOIN counter_series s"
                      " ON s.id = series ORDER BY time_ps").fetchall() == [
        ("mem.used", 0, 7), ("mem.used", 100, 2.5)]
    assert db.execute("SELECT name, sort_index FROM location ORDER BY sort_index").fetchall() == [
        ("gpu", 0), ("cpu", 1)]


def test_declared_origin_keeps_times_and_flow_points_bind_by_time(tmp_path):
    loader = Loader(tmp_path / "o.sqlite", source="test", command="t")
    loader.set_clock("simulation", origin_ps=0)
    loader.set_clock("unix", epoch_ps=10 ** 12)  # metadata read late: source 0 is 1 s on unix
    loader.add(_task("op", 100, 1_000, track="cpu"))
    loader.add(_task("launch", 200, 300, track="cpu"))
    loader.add(_task("k1", 400, 500, location="gpu", track="gpu"))
    loader.add(_task("k2", 600, 700, location="gpu", track="gpu"))
    # v1 flow: start inside "launch", finish bound to the next slice on the GPU track.
    loader.add_flow_point("ac2g:1", "s", "ac2g", time_ps=200, track="cpu")
    loader.add_flow_point("ac2g:1", "f", "ac2g", time_ps=550, track="gpu", bind_next=True)
    # the same ID reused after its finish starts a new flow; this one lacks a finish
    loader.add_flow_point("ac2g:1", "s", "ac2g", time_ps=900, track="cpu")
    # v2: by task ID
    loader.add_flow_point("b:7", "s", "fwd", task_ext="k1")
    loader.add_flow_point("b:7", "f", "fwd", task_ext="k2")
    report = loader.finish(show_progress=False)
    db = sqlite3.connect(tmp_path / "o.sqlite")
    links = db.execute("SELECT t1.ext_id, t2.ext_id, task_link.kind FROM task_link"
                       " JOIN task t1 ON t1.id = src JOIN task t2 ON t2.id = dst ORDER BY 1").fetchall()
    assert links == [("k1", "k2", "fwd"), ("launch", "k2", "ac2g")]
    assert report.unresolved_links == 1
    assert dict(db.execute("SELECT ext_id, start_ps FROM task"))["op"] == 100
    assert db.execute("SELECT time_origin, clock FROM run").fetchone() == ("1", "unix")
    assert db.execute("SELECT p.ext_id FROM task t JOIN task p ON p.id = t.parent"
                      " WHERE t.ext_id = 'launch'").fetchone() == ("op",)


def test_a_trace_longer_than_int64_picoseconds_is_refused_clearly(tmp_path):
    loader = Loader(tmp_path / "o.sqlite", source="test", command="t")
    loader.add(_task("a", 0, 1))
    with pytest.raises(TraceFormatError, match="row b: start is .* a trace may span at most 107 days"):
        loader.add(_task("b", 2 ** 64, 2 ** 64 + 1))
    loader.abort()
    assert list(tmp_path.iterdir()) == []
