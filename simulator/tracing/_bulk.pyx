# cython: language_level=3
"""Bulk insertion of int64 rows through SQLite's C API (``bulk.py`` is the reference).

Python's ``executemany`` spends most of its time converting and binding Python
objects, about a microsecond per row. Here the int64 rows are bound straight from
the array in a C loop, without the GIL.
"""
from libc.stdint cimport int64_t

import sqlite3 as pysqlite


cdef extern from "sqlite3.h" nogil:
    ctypedef struct sqlite3
    ctypedef struct sqlite3_stmt
    int SQLITE_OK
    int SQLITE_DONE
    int SQLITE_OPEN_READWRITE
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
    const char *sqlite3_errmsg(sqlite3 *db)


class BulkError(pysqlite.DatabaseError):
    """SQLite refused a bulk insert (a ``DatabaseError``, as Python's driver raises)."""


cdef class BulkInserter:
    """Runs ``sql`` for every row of each batch given to ``insert``.

    ``null_if_negative`` is the column index whose negative values are stored as NULL,
    or -1 for none.
    """

    cdef sqlite3 *db
    cdef sqlite3_stmt *stmt
    cdef int nullable

    def __init__(self, path, sql, null_if_negative=-1):
        self.nullable = null_if_negative
        encoded = str(path).encode()
        if sqlite3_open_v2(encoded, &self.db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK:
            raise BulkError(f"cannot open {path}: {self._error()}")
        sqlite3_busy_timeout(self.db, 60_000)
        self._exec(b"PRAGMA synchronous=OFF")
        encoded_sql = sql.encode()
        if sqlite3_prepare_v2(self.db, encoded_sql, -1, &self.stmt, NULL) != SQLITE_OK:
            raise BulkError(f"cannot prepare {sql!r}: {self._error()}")

    cdef str _error(self):
        return sqlite3_errmsg(self.db).decode() if self.db != NULL else "out of memory"

    cdef _exec(self, bytes sql):
        if sqlite3_exec(self.db, sql, NULL, NULL, NULL) != SQLITE_OK:
            raise BulkError(f"{sql.decode()}: {self._error()}")

    def insert(self, const int64_t[:, ::1] rows not None):
        """Insert every row of ``rows`` in one transaction."""
        cdef Py_ssize_t i = 0, n = rows.shape[0], width = rows.shape[1]
        cdef int c, rc = SQLITE_DONE
        self._exec(b"BEGIN")
        with nogil:
            for i in range(n):
                for c in range(width):
                    if c == self.nullable and rows[i, c] < 0:
                        sqlite3_bind_null(self.stmt, c + 1)
                    else:
                        sqlite3_bind_int64(self.stmt, c + 1, rows[i, c])
                rc = sqlite3_step(self.stmt)
                sqlite3_reset(self.stmt)
                if rc != SQLITE_DONE:
                    break
        if rc != SQLITE_DONE:
            message = self._error()
            self._exec(b"ROLLBACK")
            raise BulkError(f"inserting row {i} (first value {rows[i, 0]}): {message}")
        self._exec(b"COMMIT")

    def close(self):
        if self.stmt != NULL:
            sqlite3_finalize(self.stmt)
            self.stmt = NULL
        if self.db != NULL:
            sqlite3_close(self.db)
            self.db = NULL

    def __dealloc__(self):
        self.close()
