"""Bulk rows in and out of SQLite: the readable reference of ``_bulk.pyx``.

Rows go in as an ``(n, k)`` int64 array for an ``INSERT`` with ``k`` parameters (in one
chosen column a negative value means NULL: a task without a parent), optionally
followed by text columns given as lists; they come out of a query as an int64 matrix of
its first columns and lists of the others. This version goes through Python's
``sqlite3``; the Cython build binds and reads with SQLite's C API in C loops, which is
what lets a fully traced run keep up with the simulator. Inserters and readers open
their own connection to the file, or share a ``Connection``, and insert one batch per
transaction.
"""
import sqlite3

import numpy as np

INSERT_TASKS = ("INSERT INTO task (id, parent, kind, location, start_ps, end_ps, flags)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)")
INSERT_TAGS = "INSERT INTO task_tag (task, time_ps, tag) VALUES (?, ?, ?)"
INSERT_IMPORTED_TASKS = ("INSERT INTO task (id, parent, kind, location, start_ps, end_ps, flags,"
                         " ext_id, details) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)")
# An inserter appends (task rows, tags, staged rows) or extends each (location, level)
# edge of the metric pyramid, whose rows are few, so a small cache costs no measurable
# speed; a large one fills with pages written once, and a trace too short to fill it
# peaks lower than a long one (64 MiB per inserter made ``synth`` peak at 103 MiB at 1M
# tasks and 151 MiB at 100M). A reader's pages are read once: a scan would fill any cache.
INSERT_CACHE_KIB = 2048
READ_CACHE_KIB = 2048


class BulkError(sqlite3.DatabaseError):
    """SQLite refused a bulk insert or read (a ``DatabaseError``, as Python's driver raises)."""


class Connection:
    """One SQLite connection, shared by the inserters and readers given it. It is used by
    one thread at a time, not always the one that opened it (an importer stores blocks
    on a writer thread of its own)."""

    def __init__(self, path, readonly=False, cache_kib=INSERT_CACHE_KIB):
        self.path = path
        if readonly:
            self.db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, isolation_level=None,
                                      check_same_thread=False)
        else:
            self.db = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False)
        self.db.execute("PRAGMA busy_timeout=60000")
        self.db.execute("PRAGMA synchronous=OFF")
        self.db.execute(f"PRAGMA cache_size=-{int(cache_kib)}")

    def execute(self, sql):
        """Run ``sql`` (statements without results, such as PRAGMAs)."""
        self.db.execute(sql)

    def close(self):
        self.db.close()


class BulkInserter:
    """Runs ``sql`` for every row of each batch given to ``insert``.

    ``target`` is the database's path (the inserter opens a connection of its own, with
    a page cache of ``cache_kib``) or a ``Connection``. ``null_if_negative`` is the
    column index whose negative values are stored as NULL, or -1 for none.
    """

    def __init__(self, target, sql, null_if_negative=-1, cache_kib=INSERT_CACHE_KIB):
        if " VALUES " not in sql:
            raise ValueError(f"not an INSERT ... VALUES (...) statement: {sql!r}")
        self.owned = not isinstance(target, Connection)
        self.conn = Connection(target, cache_kib=cache_kib) if self.owned else target
        self.sql = sql
        self.nullable = null_if_negative

    def insert(self, rows, texts=None):
        """Insert every row of ``rows`` in one transaction.

        ``texts``: lists, one per parameter after the int64 columns, of the values of
        those parameters (None, str, int or float) in row order.
        """
        cols = [rows[:, i].tolist() for i in range(rows.shape[1])]
        if self.nullable >= 0 and (rows[:, self.nullable] < 0).any():
            cols[self.nullable] = [v if v >= 0 else None for v in cols[self.nullable]]
        for column in texts or ():
            if len(column) != len(rows):
                raise BulkError(f"a text column of {len(column)} values for {len(rows)} rows")
            cols.append(list(column))
        db = self.conn.db
        db.execute("BEGIN")
        try:
            db.executemany(self.sql, zip(*cols))
        except BaseException:
            db.execute("ROLLBACK")  # the whole batch or nothing, as the C build
            raise
        db.execute("COMMIT")

    def close(self):
        if self.conn is not None and self.owned:
            self.conn.close()
        self.conn = None


class BulkReader:
    """The rows of one query, handed out in blocks by ``fetch``.

    ``target`` is a path (opened read-only) or a ``Connection``; ``params`` are bound to
    the query's ``?``. The first ``ints`` columns (all when None) are integers, which must
    not be NULL (``coalesce`` them); they come as an int64 matrix. The others come as
    lists of Python values (None, int, float or str).
    """

    def __init__(self, target, sql, params=(), ints=None):
        self.owned = not isinstance(target, Connection)
        self.conn = Connection(target, readonly=True, cache_kib=READ_CACHE_KIB) if self.owned else target
        self.cursor = self.conn.db.execute(sql, tuple(params))
        self.ncols = len(self.cursor.description)
        self.nints = self.ncols if ints is None else ints
        if not 0 <= self.nints <= self.ncols:
            raise ValueError(f"{ints} integer columns of a query of {self.ncols}")

    def fetch(self, n):
        """Up to ``n`` more rows: (int64 matrix, [list per other column]); none at the end."""
        rows = self.cursor.fetchmany(n) if self.cursor is not None else []
        k = self.nints
        for r, row in enumerate(rows):
            for c in range(k):
                if type(row[c]) is not int:
                    name = self.cursor.description[c][0]
                    raise BulkError(f"column {name!r} is not an integer (NULL or text) in row {r}")
        values = np.array([row[:k] for row in rows], dtype=np.int64).reshape(len(rows), k)
        others = [[row[c] for row in rows] for c in range(k, self.ncols)]
        return values, others

    def close(self):
        if self.cursor is not None:
            self.cursor.close()
            self.cursor = None
        if self.conn is not None and self.owned:
            self.conn.close()
        self.conn = None
