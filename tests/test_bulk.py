"""Bulk row insertion: the C-API build and the Python reference write the same rows."""
import sqlite3

import numpy as np
import pytest

from simulator.build import compiled_file, module
from simulator.tracing import bulk
from simulator.tracing.writer import schema_parts


@pytest.fixture
def inserter_class(build):
    """The bulk inserter of each build: the Python reference, or the C-API extension."""
    if build == "cython" and not compiled_file("simulator.tracing._bulk"):
        pytest.skip("C bulk inserter not built (SQLite's header was missing)")
    return module("simulator.tracing._bulk", build).BulkInserter


def _empty_trace(path):
    db = sqlite3.connect(path)
    db.executescript(schema_parts()[0])
    db.close()


def test_rows_and_nulls_land_exactly(tmp_path, inserter_class):
    path = tmp_path / "t.sqlite"
    _empty_trace(path)
    rows = np.array([[0, -1, 3, 4, 10, 20, 0], [1, 0, 3, 5, 2 ** 40, 2 ** 41, 1]], dtype=np.int64)
    inserter = inserter_class(path, bulk.INSERT_TASKS, null_if_negative=1)
    inserter.insert(rows)
    tags = inserter_class(path, bulk.INSERT_TAGS)
    tags.insert(np.array([[1, 99, 2]], dtype=np.int64))
    inserter.close()
    tags.close()
    db = sqlite3.connect(path)
    assert db.execute("SELECT id, parent, kind, location, start_ps, end_ps, flags FROM task"
                      " ORDER BY id").fetchall() == [(0, None, 3, 4, 10, 20, 0),
                                                     (1, 0, 3, 5, 2 ** 40, 2 ** 41, 1)]
    assert db.execute("SELECT * FROM task_tag").fetchall() == [(1, 99, 2)]


def test_a_failing_batch_is_rolled_back_whole(tmp_path, inserter_class):
    path = tmp_path / "t.sqlite"
    _empty_trace(path)
    inserter = inserter_class(path, bulk.INSERT_TASKS, null_if_negative=1)
    inserter.insert(np.array([[5, -1, 0, 0, 0, 1, 0]], dtype=np.int64))
    with pytest.raises(sqlite3.DatabaseError):
        inserter.insert(np.array([[6, -1, 0, 0, 0, 1, 0], [5, -1, 0, 0, 0, 1, 0]], dtype=np.int64))
    inserter.close()
    assert sqlite3.connect(path).execute("SELECT id FROM task").fetchall() == [(5,)]


def test_long_batches_bind_every_row_in_order(tmp_path, inserter_class):
    """Enough rows for several multi-row statements and a remainder, NULLs anywhere."""
    path = tmp_path / "t.sqlite"
    _empty_trace(path)
    rng = np.random.default_rng(7)
    n = 64 * 5 + 13
    rows = rng.integers(0, 2 ** 50, size=(n, 7), dtype=np.int64)
    rows[:, 0] = np.arange(n)
    rows[rng.random(n) < 0.3, 1] = -1
    inserter = inserter_class(path, bulk.INSERT_TASKS, null_if_negative=1)
    inserter.insert(rows)
    inserter.close()
    stored = sqlite3.connect(path).execute(
        "SELECT id, coalesce(parent, -1), kind, location, start_ps, end_ps, flags FROM task"
        " ORDER BY id").fetchall()
    assert stored == [tuple(r) for r in rows.tolist()]


def test_a_failure_inside_a_multi_row_statement_rolls_back_the_batch(tmp_path, inserter_class):
    path = tmp_path / "t.sqlite"
    _empty_trace(path)
    rows = np.zeros((200, 7), dtype=np.int64)
    rows[:, 0] = np.arange(200)
    rows[:, 1] = -1
    rows[150, 0] = 3  # a duplicate key in the third group of 64
    inserter = inserter_class(path, bulk.INSERT_TASKS, null_if_negative=1)
    with pytest.raises(sqlite3.DatabaseError):
        inserter.insert(rows)
    inserter.close()
    assert sqlite3.connect(path).execute("SELECT count(*) FROM task").fetchone() == (0,)


def test_a_statement_without_values_is_refused(tmp_path, inserter_class):
    path = tmp_path / "t.sqlite"
    _empty_trace(path)
    with pytest.raises((ValueError, sqlite3.DatabaseError)):
        inserter_class(path, "INSERT INTO task_tag SELECT 1, 2, 3").insert(
            np.zeros((1, 3), dtype=np.int64))


def test_rows_of_the_wrong_width_are_refused(tmp_path, inserter_class):
    path = tmp_path / "t.sqlite"
    _empty_trace(path)
    inserter = inserter_class(path, bulk.INSERT_TAGS)
    with pytest.raises(sqlite3.DatabaseError):
        inserter.insert(np.zeros((130, 2), dtype=np.int64))
    inserter.close()
    assert sqlite3.connect(path).execute("SELECT count(*) FROM task_tag").fetchone() == (0,)


@pytest.fixture
def bulk_module(build):
    """The bulk module of each build (the C one skipped where SQLite's header was missing)."""
    if build == "cython" and not compiled_file("simulator.tracing._bulk"):
        pytest.skip("C bulk inserter not built (SQLite's header was missing)")
    return module("simulator.tracing._bulk", build)


def test_text_columns_follow_the_integers(tmp_path, bulk_module):
    """Values after the int64 columns: None, str (any script), int and float, row by row,
    through single-row and multi-row statements alike."""
    path = tmp_path / "t.sqlite"
    sqlite3.connect(path).execute("CREATE TABLE v (a INTEGER, b INTEGER, c, d)")
    n = 64 * 2 + 5
    rows = np.zeros((n, 2), dtype=np.int64)
    rows[:, 0] = np.arange(n)
    rows[::2, 1] = -1
    texts = [None if i % 3 == 0 else f"id-{i}-ü€𝄞" for i in range(n)]
    values = [[None, '{"a": 1}', 7, 2.5][i % 4] for i in range(n)]
    inserter = bulk_module.BulkInserter(path, "INSERT INTO v VALUES (?, ?, ?, ?)", null_if_negative=1)
    inserter.insert(rows, (texts, values))
    inserter.close()
    stored = sqlite3.connect(path).execute("SELECT * FROM v ORDER BY a").fetchall()
    assert stored == [(i, None if i % 2 == 0 else 0, t, v) for i, t, v in zip(range(n), texts, values)]


def test_text_columns_of_the_wrong_length_or_type_are_refused(tmp_path, bulk_module):
    path = tmp_path / "t.sqlite"
    _empty_trace(path)
    rows = np.zeros((2, 7), dtype=np.int64)
    rows[:, 0] = [0, 1]
    inserter = bulk_module.BulkInserter(path, bulk.INSERT_IMPORTED_TASKS, null_if_negative=1)
    with pytest.raises(sqlite3.DatabaseError):
        inserter.insert(rows, (["a"], ["b", "c"]))
    with pytest.raises((TypeError, sqlite3.Error)):
        inserter.insert(rows, (["a", object()], [None, None]))
    inserter.close()
    assert sqlite3.connect(path).execute("SELECT count(*) FROM task").fetchone() == (0,)


def test_a_reader_hands_out_every_row_in_blocks(tmp_path, bulk_module):
    path = tmp_path / "t.sqlite"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE t (a INTEGER, b INTEGER, c, d)")
    expected = [(i, -i * 2 ** 40, [None, f"t{i}", i * 1.5, i][i % 4], f"x{i}") for i in range(1000)]
    db.executemany("INSERT INTO t VALUES (?, ?, ?, ?)", expected)
    db.commit()
    reader = bulk_module.BulkReader(path, "SELECT a, b, c, d FROM t WHERE a >= ? ORDER BY a",
                                    (10,), ints=2)
    got = []
    while True:
        ints, (c, d) = reader.fetch(64)
        assert ints.dtype == np.int64 and ints.shape[1] == 2
        if not len(ints):
            break
        got += list(zip(*ints.T.tolist(), c, d))
    reader.close()
    assert got == expected[10:]


def test_a_reader_refuses_a_null_where_an_integer_belongs(tmp_path, bulk_module):
    path = tmp_path / "t.sqlite"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE t (a INTEGER)")
    db.executemany("INSERT INTO t VALUES (?)", [(1,), (None,)])
    db.commit()
    reader = bulk_module.BulkReader(path, "SELECT a FROM t ORDER BY rowid")
    with pytest.raises(sqlite3.DatabaseError, match="'a' is not an integer"):
        reader.fetch(10)
    reader.close()


def test_a_shared_connection_reads_one_table_while_filling_another(tmp_path, bulk_module):
    """As on one Python connection: an open query does not block inserts on its connection."""
    path = tmp_path / "t.sqlite"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE src (a INTEGER)")
    db.execute("CREATE TABLE dst (a INTEGER, b INTEGER)")
    db.executemany("INSERT INTO src VALUES (?)", [(i,) for i in range(500)])
    db.commit()
    db.close()
    conn = bulk_module.Connection(path)
    reader = bulk_module.BulkReader(conn, "SELECT a FROM src ORDER BY a")
    inserter = bulk_module.BulkInserter(conn, "INSERT INTO dst VALUES (?, ?)")
    while True:
        block, _ = reader.fetch(100)
        if not len(block):
            break
        inserter.insert(np.ascontiguousarray(np.column_stack([block[:, 0], block[:, 0] * 2])))
    reader.close()
    inserter.close()
    conn.close()
    assert sqlite3.connect(path).execute("SELECT count(*), sum(b) FROM dst").fetchone() == (500, 249500)
