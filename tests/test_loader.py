"""The Loader API that every importer writes through: tasks, links, flow points,
instants, counters, the time origin and location order."""
import json
import sqlite3

import numpy as np
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
    assert db.execute("PRAGMA user_version").fetchone()[0] == 3
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


def _parents(path):
    """{task ID: parent's ID} and the keys, as stored."""
    db = sqlite3.connect(path)
    keys = [k for k, in db.execute("SELECT id FROM task ORDER BY id")]
    parents = dict(db.execute("SELECT coalesce(t.ext_id, t.id), coalesce(p.ext_id, p.id) FROM task t"
                              " LEFT JOIN task p ON p.id = t.parent"))
    return parents, keys


@pytest.fixture
def small_window(monkeypatch):
    """Blocks of 3 tasks: a window of 9, so 'far' is a few rows away."""
    from simulator.tracing.importers import loader
    monkeypatch.setattr(loader, "BATCH", 3)


@pytest.mark.parametrize("direct", [False, True])
@pytest.mark.parametrize("collide", [False, True])
def test_parents_found_near_and_far_before_and_after(tmp_path, small_window, monkeypatch, collide,
                                                     direct):
    """A parent named before or after its child, near it (the ID window) or far (the scratch
    database), or not at all (an orphan); with every hash colliding, the text decides. The
    same with the tasks staged or written straight out (times on a declared origin)."""
    if collide:
        from simulator.tracing.importers import ids
        monkeypatch.setattr(ids, "HASH", lambda text: len(text) % 2)
    order = ["k0", "near_after", "p1", "c_far_before", *[f"x{i}" for i in range(20)],
             "far_after", "orphaned", "c_near_before"]
    parent = {"k0": "p1", "near_after": "p1", "c_far_before": "far_after", "orphaned": "gone",
              "c_near_before": "x19", **{f"x{i}": "k0" for i in range(20)}}
    loader = Loader(tmp_path / "o.sqlite", source="test", command="t")
    if direct:
        loader.set_clock("simulation", origin_ps=0)
    for i, ext in enumerate(order):
        loader.add(_task(ext, i, 100, parent=parent.get(ext)))
    loader.add_link("x3", "far_after", "flow")
    loader.add_tag("x17", 50, "step")
    report = loader.finish(show_progress=False)
    assert loader.direct is (direct and not collide)  # colliding hashes look like repeats
    stored, keys = _parents(tmp_path / "o.sqlite")
    assert keys == list(range(len(order)))
    assert stored == {ext: (None if parent.get(ext) == "gone" else parent.get(ext)) for ext in order}
    assert (report.orphans, report.links, report.unresolved_links) == (1, 1, 0)
    db = sqlite3.connect(tmp_path / "o.sqlite")
    assert db.execute("SELECT t.ext_id FROM task_tag g JOIN task t ON t.id = g.task").fetchall() == [("x17",)]


@pytest.mark.parametrize("origin", [None, 0])
def test_repeats_near_and_far_are_dropped_and_keys_close_up(tmp_path, small_window, origin):
    """akita's CSV writer repeats rows: a repeat next to the first and one far from it are
    both dropped; a child named near the repeat gets the first row; keys stay dense (also
    when the tasks were on their way straight out: they are staged again)."""
    rows = [("a", None), ("b", "a"), ("b", "a"), *[(f"x{i}", "a") for i in range(12)],
            ("a", None), ("c", "a"), ("b", "a")]
    loader = Loader(tmp_path / "o.sqlite", source="test", command="t", drop_exact_duplicates=True)
    if origin is not None:
        loader.set_clock("simulation", origin_ps=origin)
    for ext, parent in rows:
        loader.add(_task(ext, 5, 9, parent=parent))
    loader.add_link("c", "b", "flow")
    report = loader.finish(show_progress=False)
    stored, keys = _parents(tmp_path / "o.sqlite")
    assert (report.tasks, report.duplicates, report.links) == (15, 3, 1)
    assert keys == list(range(15))
    assert stored == {"a": None, "b": "a", "c": "a", **{f"x{i}": "a" for i in range(12)}}
    db = sqlite3.connect(tmp_path / "o.sqlite")
    assert [e for e, in db.execute("SELECT ext_id FROM task ORDER BY id")] == \
        ["a", "b", *[f"x{i}" for i in range(12)], "c"]
    assert db.execute("SELECT s.ext_id, d.ext_id FROM task_link JOIN task s ON s.id = src"
                      " JOIN task d ON d.id = dst").fetchall() == [("c", "b")]


@pytest.mark.parametrize("dedupe,message", [
    (True, r"line {}: task ID 'a' again with different fields \(first at line 0\)"),
    (False, r"line {}: duplicate task ID 'a' \(first at line 0\)")])
@pytest.mark.parametrize("gap", [1, 20])
def test_a_repeated_id_near_or_far_names_both_positions(tmp_path, small_window, dedupe, message, gap):
    """Found in the ID window (at once) or in the scratch database (at the end): the same error."""
    loader = Loader(tmp_path / "o.sqlite", source="test", command="t", drop_exact_duplicates=dedupe)
    with pytest.raises(TraceFormatError, match=message.format(gap + 1)):
        for i, ext in enumerate(["a", *[f"x{i}" for i in range(gap)], "a"]):
            loader.add(ForeignTask(ext_id=ext, parent_ext=None, category="op", action="op",
                                   location="cpu", start_ps=0, end_ps=10 + (i > 0), where=f"line {i}"))
        loader.finish(show_progress=False)
    loader.abort()
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("late", ["track", "early time"])
def test_tasks_written_straight_out_are_staged_again_when_they_must_be(tmp_path, small_window, late):
    """On a declared origin tasks go straight into the output; a task nested by its track
    (needing every task first) or a time before the origin (moving every time) stages them
    again, and the trace is the one staged from the start."""
    results = []
    for origin in (None, 1_000):
        loader = Loader(tmp_path / f"{origin}.sqlite", source="test", command="t")
        if origin is not None:
            loader.set_clock("simulation", origin_ps=origin)
        for i in range(12):
            loader.add(_task(f"t{i}", 1_000 + 10 * i, 1_100 + 10 * i, parent="t11" if i < 11 else None))
        if late == "track":
            loader.add(_task("outer", 1_000, 9_000, location="gpu", track="7"))
            loader.add(_task("inner", 2_000, 3_000, location="gpu", track="7"))
        else:
            loader.add(_task("early", 500, 600))
        report = loader.finish(show_progress=False)
        assert loader.direct is False
        db = sqlite3.connect(tmp_path / f"{origin}.sqlite")
        results.append((vars(report), db.execute("SELECT * FROM task ORDER BY id").fetchall(),
                        db.execute("SELECT * FROM metric_bin ORDER BY 1, 2, 3").fetchall(),
                        db.execute("SELECT time_origin FROM run").fetchone()))
    assert results[0][:3] == results[1][:3]
    assert len(results[0][1]) == 14 if late == "track" else 13


def test_the_id_windows_reach_does_not_depend_on_how_a_reader_cuts_its_input():
    """A parent 20,000 rows back is found in the window whether the rows come in one
    block or in blocks of 1,000 (as a Chrome reader gives them, a megabyte of text each)."""
    from simulator.tracing.importers.ids import Block, IdWindow

    n, back = 60_000, 20_000
    ext = np.array([f"t{i}" for i in range(n)], dtype=object)
    parent = np.array([f"t{i - back}" if i >= back else None for i in range(n)], dtype=object)
    for size in (n, 1_000):
        left = []  # rows each block left to the scratch database

        def emit(block, wanted, left=left):
            left.append(len(wanted))

        window = IdWindow(emit, str)
        for a in range(0, n, size):
            part = slice(a, a + size)
            ints = np.arange(a, min(a + size, n), dtype=np.int64)
            window.add(Block(ext=ext[part], parent=parent[part], kind=ints * 0, location=ints * 0,
                             start=ints, end=ints + 1, flags=ints * 0, track=ints * 0 - 1,
                             details=np.full(len(ints), None, dtype=object),
                             src=ints.astype(object)))
        window.close()
        assert sum(left) == 0, size
