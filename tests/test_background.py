"""The writer process: batches cross through shared slots, in order, and errors come back."""
import glob
import sqlite3
import time

import numpy as np
import pytest

from simulator.tracing import background
from simulator.tracing.background import BackgroundWriter


def _batch(first, n, tags_per_task=1):
    tasks = np.zeros((n, 7), dtype=np.int64)
    tasks[:, 0] = np.arange(first, first + n)
    tasks[:, 1] = -1
    tasks[:, 4] = tasks[:, 0] * 10
    tasks[:, 5] = tasks[:, 4] + 5
    tags = np.repeat(tasks[:, [0, 4]], tags_per_task, axis=0)
    tags = np.column_stack([tags, np.zeros(len(tags), dtype=np.int64)])
    return tasks, tags


def _names(first_batch):
    if not first_batch:
        return [], [], []
    return [(0, "GPU.CU[0]")], [(0, "inst", "VALU")], [(0, "read-hit")]


def test_more_batches_than_slots_arrive_whole_and_in_order(tmp_path):
    path = tmp_path / "bg.sqlite"
    writer = BackgroundWriter(path, command="test")
    sent = []
    for k in range(3 * background.SLOTS):
        tasks, tags = _batch(1000 * k, 500 + k)
        details = [(1000 * k, f'{{"k": {k}}}')]
        writer.write_batch(tasks, details, tags, *_names(k == 0))
        tasks[:] = -7  # the caller may reuse its arrays at once: the batch was copied
        sent.append(_batch(1000 * k, 500 + k))
    writer.sync()
    writer.close()
    db = sqlite3.connect(path)
    expected = np.concatenate([t for t, _ in sent])
    stored = np.array(db.execute("SELECT id, coalesce(parent, -1), kind, location, start_ps,"
                                 " end_ps, flags FROM task ORDER BY id").fetchall())
    assert (stored == expected).all()
    assert db.execute("SELECT count(*) FROM task_tag").fetchone() == (len(expected),)
    assert db.execute("SELECT details FROM task WHERE id = 5000").fetchone() == ('{"k": 5}',)


def test_a_batch_larger_than_a_slot_goes_through_the_pipe(tmp_path, monkeypatch):
    monkeypatch.setattr(background, "SLOT_VALUES", 100)
    path = tmp_path / "bg.sqlite"
    writer = BackgroundWriter(path, command="test")
    small, big = _batch(0, 5), _batch(5, 50)
    writer.write_batch(small[0], [], small[1], *_names(True))
    writer.write_batch(big[0], [], big[1], *_names(False))
    writer.sync()
    writer.close()
    db = sqlite3.connect(path)
    assert db.execute("SELECT count(*), max(id) FROM task").fetchone() == (55, 54)
    assert db.execute("SELECT count(*) FROM task_tag").fetchone() == (55,)


def test_a_failed_slot_batch_is_reported_and_its_slot_reused(tmp_path):
    writer = BackgroundWriter(tmp_path / "bg.sqlite", command="test")
    tasks, tags = _batch(0, 10)
    writer.write_batch(tasks, [], tags, *_names(True))
    writer.write_batch(tasks, [], tags, [], [], [])  # the same keys again
    with pytest.raises(sqlite3.DatabaseError):
        writer.sync()
    for k in range(1, 2 * background.SLOTS + 1):  # every slot came back
        tasks, tags = _batch(100 * k, 10)
        writer.write_batch(tasks, [], tags, [], [], [])
    writer.sync()
    writer.close()
    count = sqlite3.connect(tmp_path / "bg.sqlite").execute("SELECT count(*) FROM task").fetchone()
    assert count == (10 * (2 * background.SLOTS + 1),)


def test_the_slot_file_is_gone_once_the_writer_runs(tmp_path):
    before = set(glob.glob("/dev/shm/gpuscope-batches-*"))
    writer = BackgroundWriter(tmp_path / "bg.sqlite", command="test")
    writer.sync()  # the first call waits for the writer's start
    assert set(glob.glob("/dev/shm/gpuscope-batches-*")) == before
    writer.close()


def test_a_writer_that_cannot_start_says_why_at_the_first_call_and_leaves_nothing(tmp_path):
    before = set(glob.glob("/dev/shm/gpuscope-batches-*"))
    (tmp_path / "taken").write_text("a file where the trace's directory should be")
    writer = BackgroundWriter(tmp_path / "taken" / "bg.sqlite", command="test")
    with pytest.raises(OSError):
        writer.sync()
    writer.close()
    assert set(glob.glob("/dev/shm/gpuscope-batches-*")) == before
    assert not writer._process.is_alive()


def test_errors_are_reported_in_order(tmp_path):
    writer = BackgroundWriter(tmp_path / "bg.sqlite", command="test")
    writer.execute("INSERT INTO no_such_table VALUES (1)")
    writer.execute("INSERT INTO also_missing VALUES (1)")  # drained, the first error wins
    with pytest.raises(sqlite3.OperationalError, match="no_such_table"):
        writer.sync()
    writer.execute("INSERT INTO tag_name (id, name) VALUES (?, ?)", (0, "read-hit"))
    writer.finalize(completed=True)
    writer.close()
    db = sqlite3.connect(tmp_path / "bg.sqlite")
    assert db.execute("SELECT name FROM tag_name").fetchall() == [("read-hit",)]
    assert db.execute("SELECT completed, finalized FROM run").fetchone() == (1, 1)


def test_a_dead_writer_is_reported_as_such(tmp_path):
    writer = BackgroundWriter(tmp_path / "bg.sqlite", command="test")
    writer._process.kill()
    writer._process.join()
    with pytest.raises(RuntimeError, match="writer process died"):
        for _ in range(3):  # the first send may still fit in the pipe
            writer.execute("INSERT INTO tag_name (id, name) VALUES (?, ?)", (0, "x"))
            writer.sync()


def test_a_reply_abandoned_by_an_interrupt_is_not_taken_for_the_next_one(tmp_path, monkeypatch):
    writer = BackgroundWriter(tmp_path / "bg.sqlite", command="test")
    real_receive = writer._receive

    def interrupted():
        raise KeyboardInterrupt  # a second Ctrl-C while sync waits for its reply

    monkeypatch.setattr(writer, "_receive", interrupted)
    with pytest.raises(KeyboardInterrupt):
        writer.sync()
    monkeypatch.setattr(writer, "_receive", real_receive)
    for k in range(2 * background.SLOTS):  # waiting for slots skips the stale reply too
        tasks, tags = _batch(100 * k, 10)
        writer.write_batch(tasks, [], tags, *_names(k == 0))
    writer.execute("INSERT INTO no_such_table VALUES (1)")
    with pytest.raises(sqlite3.OperationalError, match="no_such_table"):
        writer.sync()  # its own reply: the error, not the stale "ok"
    writer.close()


def test_held_pyramid_rows_reach_the_file_while_no_batch_comes(tmp_path):
    """A run that goes quiet (a kernel executed functionally between two batches) still
    shows a viewer what is final: the writer writes the pyramid rows it holds once their
    time is up, without waiting for the next batch (before: until the next batch)."""
    path = tmp_path / "bg.sqlite"
    writer = BackgroundWriter(path, command="test")
    for k in range(3):  # the third moves the frontier past the first two
        tasks, tags = _batch(1000 * k, 500)
        writer.write_batch(tasks, [], tags, *_names(k == 0))
    writer.sync()
    deadline = time.monotonic() + 30
    while True:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
            if db.execute("SELECT count(*) FROM metric_bin").fetchone()[0]:
                break
        assert time.monotonic() < deadline, "no pyramid row without another batch"
        time.sleep(0.1)
    writer.close()
