"""The query time limit counts the query's own running time, not time spent waiting
for a lock, the GIL or other requests' threads (issue 17): a fast query is never
reported as over the limit, however busy the server, and a slow one still is."""
import threading
import time

import pytest
from test_app_traces import write_synthetic_trace

from dashapp import queries

HEAVY = "SELECT count(*) FROM task a, task b WHERE a.start_ps < b.end_ps"
"""A deliberately quadratic self-join: seconds of SQLite work."""


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory):
    return write_synthetic_trace(tmp_path_factory.mktemp("limit") / "syn.sqlite")


def test_time_waiting_for_a_lock_inside_a_query_is_not_charged(synthetic):
    # The statement calls back into Python (a user function) that must wait for a lock
    # another thread holds for 1 s: 1 s of wall-clock time, almost none of its own.
    held = threading.Lock()
    held.acquire()
    releaser = threading.Timer(1.0, held.release)
    with queries.open_trace(synthetic, seconds=0.2) as db:

        def wait_once(value):
            with held:
                return value

        db.db.create_function("wait_once", 1, wait_once)
        releaser.start()
        started = time.monotonic()
        rows = db.fetch("SELECT wait_once(count(*)) FROM task")
        waited = time.monotonic() - started
    assert rows[0][0] > 0 and waited >= 0.9  # it did wait, five times its limit


def _hog(stop):
    # Pure Python: holds the GIL for its whole switch interval, again and again.
    while not stop.is_set():
        sum(i * i for i in range(2000))


def test_fast_queries_are_never_over_the_limit_on_a_busy_server(synthetic):
    limit = 0.25
    stop = threading.Event()
    hogs = [threading.Thread(target=_hog, args=(stop,)) for _ in range(4)]
    failures, walls = [], []

    def reader():
        with queries.open_trace(synthetic, seconds=limit) as db:
            locs = [loc for loc in queries.locations(db) if loc.task_count][:24]
            for _ in range(2):
                for loc in locs:
                    started = time.monotonic()
                    try:
                        db.fetch("SELECT count(*), sum(end_ps - start_ps) FROM task"
                                 " WHERE location = ?", (loc.id,))
                        queries.metric_bins(db, loc.id, 0, 0, 1 << 40)
                    except queries.QueryTimeout as err:
                        failures.append(str(err))
                    walls.append(time.monotonic() - started)

    readers = [threading.Thread(target=reader) for _ in range(6)]
    for t in hogs + readers:
        t.start()
    for t in readers:
        t.join(timeout=600)
    # A slow query under the same load is still stopped.
    with pytest.raises(queries.QueryTimeout):
        with queries.open_trace(synthetic, seconds=limit) as db:
            db.fetch(HEAVY)
    stop.set()
    for t in hogs:
        t.join()
    print(f"\n{len(walls)} fast queries under load: slowest {max(walls):.3f} s of wall-clock"
          f" time (limit {limit} s of their own)")
    assert not failures, failures[:3]


def test_the_wall_clock_backstop_stops_a_query_that_only_waits(synthetic, monkeypatch):
    monkeypatch.setattr(queries, "WALL_FACTOR", 4)
    with queries.open_trace(synthetic, seconds=0.1) as db:
        # Every 1000th row waits 50 ms (for the disk, say): almost no CPU time.
        db.db.create_function("nap", 1, lambda v: (v % 1000 == 0 and time.sleep(0.05)) or v)
        started = time.monotonic()
        with pytest.raises(queries.QueryTimeout, match="0.4 s of waiting"):
            db.fetch("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c"
                     " LIMIT 400000) SELECT sum(nap(x)) FROM c")
    assert time.monotonic() - started < 15  # not the 20 s the whole statement would wait
