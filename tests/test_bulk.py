"""Bulk row insertion: the C-API build and the Python reference write the same rows."""
import sqlite3

import numpy as np
import pytest

from simulator.tracing import bulk
from simulator.tracing.writer import schema_parts

try:
    from simulator.tracing import _bulk
except ImportError:
    _bulk = None


@pytest.fixture(params=["python", "c"])
def inserter_class(request):
    if request.param == "c":
        if _bulk is None:
            pytest.skip("C bulk inserter not built")
        return _bulk.BulkInserter
    return bulk.BulkInserter


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
