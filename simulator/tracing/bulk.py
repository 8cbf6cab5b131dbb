"""Bulk insertion of int64 rows: the readable reference of ``_bulk.pyx``.

Rows arrive as an ``(n, k)`` int64 array for an ``INSERT`` with ``k`` parameters; in
one chosen column a negative value means NULL (a task without a parent). This version
binds them through Python's ``sqlite3``; the Cython build binds them with SQLite's C
API in a C loop, which is what lets a fully traced run keep up with the simulator.
Both open their own connection to the trace and insert one batch per transaction.
"""
import sqlite3

INSERT_TASKS = ("INSERT INTO task (id, parent, kind, location, start_ps, end_ps, flags)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)")
INSERT_TAGS = "INSERT INTO task_tag (task, time_ps, tag) VALUES (?, ?, ?)"


class BulkInserter:
    """Runs ``sql`` for every row of each batch given to ``insert``.

    ``null_if_negative`` is the column index whose negative values are stored as NULL,
    or -1 for none.
    """

    def __init__(self, path, sql, null_if_negative=-1):
        self.db = sqlite3.connect(str(path), isolation_level=None)
        self.db.execute("PRAGMA synchronous=OFF")
        self.db.execute("PRAGMA cache_size=-65536")  # the task indexes' right-hand edges
        self.sql = sql
        self.nullable = null_if_negative

    def insert(self, rows):
        """Insert every row of ``rows`` in one transaction."""
        cols = [rows[:, i].tolist() for i in range(rows.shape[1])]
        if self.nullable >= 0 and (rows[:, self.nullable] < 0).any():
            cols[self.nullable] = [v if v >= 0 else None for v in cols[self.nullable]]
        self.db.execute("BEGIN")
        try:
            self.db.executemany(self.sql, zip(*cols))
        except BaseException:
            self.db.execute("ROLLBACK")  # the whole batch or nothing, as the C build
            raise
        self.db.execute("COMMIT")

    def close(self):
        self.db.close()
