# cython: language_level=3
"""Bulk insertion of int64 rows through SQLite's C API (``bulk.py`` is the reference).

Python's ``executemany`` spends most of its time converting and binding Python
objects, about a microsecond per row. Here the int64 rows are bound straight from
the array in a C loop, without the GIL, ``ROWS_PER_STATEMENT`` rows to one multi-row
``INSERT``: stepping a statement has a fixed cost that one row per step pays in full
(it halves the time per row of a fully traced run's batches).
"""
cimport cython
from libc.stdint cimport int64_t

import sqlite3 as pysqlite


cdef extern from "sqlite3.h" nogil:
    ctypedef struct sqlite3
    ctypedef struct sqlite3_stmt
    int SQLITE_OK
    int SQLITE_DONE
    int SQLITE_OPEN_READWRITE
    int SQLITE_OPEN_NOMUTEX
    int sqlite3_open_v2(const char *filename, sqlite3 **db, int flags, const char *vfs)
    int sqlite3_close(sqlite3 *db)
    int sqlite3_exec(sqlite3 *db, const char *sql, void *callback, void *arg, char **errmsg)
    int sqlite3_prepare_v2(sqlite3 *db, const char *sql, int nbytes, sqlite3_stmt **stmt,
                           const char **tail)
    int sqlite3_bind_int64(sqlite3_stmt *stmt, int index, long long value)
    int sqlite3_bind_null(sqlite3_stmt *stmt, int index)
    int sqlite3_step(sqlite3_stmt *stmt)
    int sqlite3_reset(sqlite3_stmt *stmt)
    int sqlite3_finalize(sqlite3_stmt *stmt)
    int sqlite3_busy_timeout(sqlite3 *db, int ms)
    int sqlite3_bind_parameter_count(sqlite3_stmt *stmt)
    int sqlite3_get_autocommit(sqlite3 *db)
    const char *sqlite3_errmsg(sqlite3 *db)


class BulkError(pysqlite.DatabaseError):
    """SQLite refused a bulk insert (a ``DatabaseError``, as Python's driver raises)."""


# 64 rows of 7 columns stay below SQLite's bound-parameter limit (999 before 3.32); beyond
# about 32 rows the gain flattens out.
cdef enum:
    ROWS_PER_STATEMENT = 64


cdef class BulkInserter:
    """Runs ``sql`` (an ``INSERT ... VALUES (?, ...)``) for every row of each batch
    given to ``insert``.

    ``null_if_negative`` is the column index whose negative values are stored as NULL,
    or -1 for none. One thread at a time uses an inserter: its connection is opened
    without SQLite's per-connection mutex, which every bind call would otherwise take
    and release (a fifth of the insert time).
    """

    cdef sqlite3 *db
    cdef sqlite3_stmt *stmt  # one row
    cdef sqlite3_stmt *many  # ROWS_PER_STATEMENT rows
    cdef int nullable

    def __init__(self, path, sql, null_if_negative=-1):
        self.nullable = null_if_negative
        encoded = str(path).encode()
        if sqlite3_open_v2(encoded, &self.db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX,
                           NULL) != SQLITE_OK:
            raise BulkError(f"cannot open {path}: {self._error()}")
        sqlite3_busy_timeout(self.db, 60_000)
        self._exec(b"PRAGMA synchronous=OFF")
        # Enough cache for the right-hand edges of the task indexes (one per location).
        self._exec(b"PRAGMA cache_size=-65536")
        head, values, row = sql.partition(" VALUES ")
        if not values:
            raise ValueError(f"not an INSERT ... VALUES (...) statement: {sql!r}")
        self._prepare(sql, &self.stmt)
        self._prepare(head + values + ", ".join([row] * ROWS_PER_STATEMENT), &self.many)

    cdef _prepare(self, str sql, sqlite3_stmt **stmt):
        encoded = sql.encode()
        if sqlite3_prepare_v2(self.db, encoded, -1, stmt, NULL) != SQLITE_OK:
            raise BulkError(f"cannot prepare {sql[:200]!r}: {self._error()}")

    cdef str _error(self):
        return sqlite3_errmsg(self.db).decode() if self.db != NULL else "out of memory"

    cdef _exec(self, bytes sql):
        if sqlite3_exec(self.db, sql, NULL, NULL, NULL) != SQLITE_OK:
            raise BulkError(f"{sql.decode()}: {self._error()}")

    def insert(self, const int64_t[:, ::1] rows not None):
        """Insert every row of ``rows`` in one transaction."""
        cdef Py_ssize_t i = 0, n = rows.shape[0], step = ROWS_PER_STATEMENT
        cdef int rc = SQLITE_DONE
        if n and rows.shape[1] != sqlite3_bind_parameter_count(self.stmt):
            raise BulkError(f"rows of {rows.shape[1]} values for a statement of"
                            f" {sqlite3_bind_parameter_count(self.stmt)} parameters")
        self._exec(b"BEGIN")
        with nogil:
            while i < n and rc == SQLITE_DONE:
                if n - i < ROWS_PER_STATEMENT:
                    step = 1
                rc = _insert_rows(self.stmt if step == 1 else self.many, rows, i, step,
                                  self.nullable)
                if rc == SQLITE_DONE:
                    i += step
        if rc != SQLITE_DONE:
            message = self._error()
            if not sqlite3_get_autocommit(self.db):  # SQLite may have rolled back already
                self._exec(b"ROLLBACK")
            raise BulkError(f"inserting rows {i} to {i + step - 1} (first key {rows[i, 0]}):"
                            f" {message}")
        self._exec(b"COMMIT")

    def close(self):
        sqlite3_finalize(self.stmt)  # a no-op on NULL
        sqlite3_finalize(self.many)
        self.stmt = self.many = NULL
        if self.db != NULL:
            sqlite3_close(self.db)
            self.db = NULL

    def __dealloc__(self):
        self.close()


@cython.boundscheck(False)  # callers pass rows first .. first + count - 1 of ``rows``
@cython.wraparound(False)
cdef int _insert_rows(sqlite3_stmt *stmt, const int64_t[:, ::1] rows, Py_ssize_t first,
                      Py_ssize_t count, int nullable) noexcept nogil:
    """Bind ``count`` rows from ``first`` to ``stmt``'s parameters in order and step it once."""
    cdef Py_ssize_t r, c, width = rows.shape[1]
    cdef int parameter = 1
    for r in range(first, first + count):
        for c in range(width):
            if c == nullable and rows[r, c] < 0:
                sqlite3_bind_null(stmt, parameter)
            else:
                sqlite3_bind_int64(stmt, parameter, rows[r, c])
            parameter += 1
    cdef int rc = sqlite3_step(stmt)
    sqlite3_reset(stmt)
    return rc
