# cython: language_level=3
"""Bulk rows in and out of SQLite through its C API (``bulk.py`` is the reference).

Python's ``executemany`` spends most of its time converting and binding Python
objects, about a microsecond per row, and a cursor as long again building a tuple per
row. Here int64 rows are bound straight from an array in a C loop, without the GIL,
``ROWS_PER_STATEMENT`` rows to one multi-row ``INSERT`` (stepping a statement has a
fixed cost that one row per step pays in full: it halves the time per row of a fully
traced run's batches), and a query's integer columns are read straight into an array.
Text columns travel as Python lists beside the array: bound from each string's UTF-8
buffer without a copy, and built once per value read.
"""
cimport cython
from cpython.list cimport PyList_GET_ITEM
from libc.stdint cimport int64_t

import numpy as np
import sqlite3 as pysqlite


cdef extern from "Python.h":
    const char *PyUnicode_AsUTF8AndSize(object text, Py_ssize_t *size) except NULL
    object PyUnicode_DecodeUTF8(const char *data, Py_ssize_t size, const char *errors)


cdef extern from "sqlite3.h" nogil:
    ctypedef struct sqlite3
    ctypedef struct sqlite3_stmt
    ctypedef void (*sqlite3_destructor_type)(void *)
    int SQLITE_OK
    int SQLITE_ROW
    int SQLITE_DONE
    int SQLITE_INTEGER
    int SQLITE_FLOAT
    int SQLITE_TEXT
    int SQLITE_NULL
    int SQLITE_OPEN_READWRITE
    int SQLITE_OPEN_READONLY
    int SQLITE_OPEN_NOMUTEX
    int sqlite3_open_v2(const char *filename, sqlite3 **db, int flags, const char *vfs)
    int sqlite3_close_v2(sqlite3 *db)
    int sqlite3_exec(sqlite3 *db, const char *sql, void *callback, void *arg, char **errmsg)
    int sqlite3_prepare_v2(sqlite3 *db, const char *sql, int nbytes, sqlite3_stmt **stmt,
                           const char **tail)
    int sqlite3_bind_int64(sqlite3_stmt *stmt, int index, long long value)
    int sqlite3_bind_double(sqlite3_stmt *stmt, int index, double value)
    int sqlite3_bind_text(sqlite3_stmt *stmt, int index, const char *text, int nbytes,
                          sqlite3_destructor_type destructor)
    int sqlite3_bind_null(sqlite3_stmt *stmt, int index)
    int sqlite3_step(sqlite3_stmt *stmt)
    int sqlite3_reset(sqlite3_stmt *stmt)
    int sqlite3_finalize(sqlite3_stmt *stmt)
    int sqlite3_busy_timeout(sqlite3 *db, int ms)
    int sqlite3_bind_parameter_count(sqlite3_stmt *stmt)
    int sqlite3_column_count(sqlite3_stmt *stmt)
    int sqlite3_column_type(sqlite3_stmt *stmt, int column)
    long long sqlite3_column_int64(sqlite3_stmt *stmt, int column)
    double sqlite3_column_double(sqlite3_stmt *stmt, int column)
    const unsigned char *sqlite3_column_text(sqlite3_stmt *stmt, int column)
    int sqlite3_column_bytes(sqlite3_stmt *stmt, int column)
    const char *sqlite3_column_name(sqlite3_stmt *stmt, int column)
    int sqlite3_get_autocommit(sqlite3 *db)
    const char *sqlite3_errmsg(sqlite3 *db)


class BulkError(pysqlite.DatabaseError):
    """SQLite refused a bulk insert or read (a ``DatabaseError``, as Python's driver raises)."""


# 64 rows of 7 columns stay below SQLite's bound-parameter limit (999 before 3.32); beyond
# about 32 rows the gain flattens out.
cdef enum:
    ROWS_PER_STATEMENT = 64
    MAX_PARAMETERS = 999

# An inserter appends (task rows, tags, staged rows) or extends each (location, level)
# edge of the metric pyramid, whose rows are few, so a small cache costs no measurable
# speed; a large one fills with pages written once, and a trace too short to fill it
# peaks lower than a long one (64 MiB per inserter made ``synth`` peak at 103 MiB at 1M
# tasks and 151 MiB at 100M). A reader's pages are read once: a scan would fill any cache.
INSERT_CACHE_KIB = 2048
READ_CACHE_KIB = 2048

# Text bound from a string's own buffer: SQLite reads it before the step returns.
cdef sqlite3_destructor_type SQLITE_STATIC = <sqlite3_destructor_type>0


cdef class Connection:
    """One SQLite connection of the C API, shared by the inserters and readers given it.

    Opened without SQLite's per-connection mutex (which every bind call would otherwise
    take and release, a fifth of the insert time): one thread at a time uses it. A reader
    and an inserter on one connection may interleave (a query still open while rows are
    inserted into another table), as on one Python connection.
    """

    cdef sqlite3 *db
    cdef readonly object path

    def __init__(self, path, readonly=False, cache_kib=INSERT_CACHE_KIB):
        self.path = path
        encoded = str(path).encode()
        cdef int flags = (SQLITE_OPEN_READONLY if readonly else SQLITE_OPEN_READWRITE) | SQLITE_OPEN_NOMUTEX
        if sqlite3_open_v2(encoded, &self.db, flags, NULL) != SQLITE_OK:
            message = self.error()
            self.close()
            raise BulkError(f"cannot open {path}: {message}")
        sqlite3_busy_timeout(self.db, 60_000)
        self.execute("PRAGMA synchronous=OFF")
        self.execute(f"PRAGMA cache_size=-{int(cache_kib)}")

    cdef str error(self):
        return sqlite3_errmsg(self.db).decode() if self.db != NULL else "out of memory"

    def execute(self, str sql):
        """Run ``sql`` (statements without results, such as PRAGMAs)."""
        if self.db == NULL:
            raise BulkError("the connection is closed")
        encoded = sql.encode()
        cdef const char *text = encoded
        cdef int rc
        with nogil:  # a COMMIT writes the batch out
            rc = sqlite3_exec(self.db, text, NULL, NULL, NULL)
        if rc != SQLITE_OK:
            raise BulkError(f"{sql}: {self.error()}")

    cdef sqlite3_stmt *prepare(self, str sql) except NULL:
        cdef sqlite3_stmt *stmt = NULL
        if self.db == NULL:
            raise BulkError("the connection is closed")
        encoded = sql.encode()
        if sqlite3_prepare_v2(self.db, encoded, -1, &stmt, NULL) != SQLITE_OK or stmt == NULL:
            raise BulkError(f"cannot prepare {sql[:200]!r}: {self.error()}")
        return stmt

    def close(self):
        if self.db != NULL:
            sqlite3_close_v2(self.db)  # statements still open keep it until they finalize
            self.db = NULL

    def __dealloc__(self):
        self.close()


cdef int _bind_value(sqlite3_stmt *stmt, int parameter, object value) except -1:
    """Bind None, str, int or float (anything else is refused)."""
    cdef Py_ssize_t size
    cdef const char *data
    if value is None:
        return sqlite3_bind_null(stmt, parameter)
    if type(value) is str:
        data = PyUnicode_AsUTF8AndSize(value, &size)
        return sqlite3_bind_text(stmt, parameter, data, <int>size, SQLITE_STATIC)
    if isinstance(value, int):
        return sqlite3_bind_int64(stmt, parameter, <long long>value)
    if type(value) is float:
        return sqlite3_bind_double(stmt, parameter, <double>value)
    raise TypeError(f"cannot store a {type(value).__name__} value in bulk: {value!r}")


cdef class BulkInserter:
    """Runs ``sql`` (an ``INSERT ... VALUES (?, ...)``) for every row of each batch
    given to ``insert``.

    ``target`` is the database's path (the inserter opens a connection of its own, with
    a page cache of ``cache_kib``) or a ``Connection``. ``null_if_negative`` is the
    column index whose negative values are stored as NULL, or -1 for none.
    """

    cdef Connection conn
    cdef bint owned  # opened here, so closed here
    cdef sqlite3_stmt *stmt  # one row
    cdef sqlite3_stmt *many  # rows_per_statement rows
    cdef int nullable, rows_per_statement

    def __init__(self, target, sql, null_if_negative=-1, cache_kib=INSERT_CACHE_KIB):
        self.nullable = null_if_negative
        self.owned = not isinstance(target, Connection)
        self.conn = Connection(target, cache_kib=cache_kib) if self.owned else target
        head, values, row = sql.partition(" VALUES ")
        if not values:
            raise ValueError(f"not an INSERT ... VALUES (...) statement: {sql!r}")
        self.stmt = self.conn.prepare(sql)
        width = max(1, sqlite3_bind_parameter_count(self.stmt))
        self.rows_per_statement = max(1, min(ROWS_PER_STATEMENT, MAX_PARAMETERS // width))
        self.many = self.conn.prepare(head + values + ", ".join([row] * self.rows_per_statement))

    def insert(self, const int64_t[:, ::1] rows not None, texts=None):
        """Insert every row of ``rows`` in one transaction.

        ``texts``: lists, one per parameter after the int64 columns, of the values of
        those parameters (None, str, int or float) in row order.
        """
        cdef Py_ssize_t i = 0, n = rows.shape[0], step = self.rows_per_statement
        cdef int rc = SQLITE_DONE
        cdef list columns = [] if texts is None else [c if type(c) is list else list(c) for c in texts]
        for column in columns:
            if len(column) != n:
                raise BulkError(f"a text column of {len(column)} values for {n} rows")
        if n and rows.shape[1] + len(columns) != sqlite3_bind_parameter_count(self.stmt):
            raise BulkError(f"rows of {rows.shape[1] + len(columns)} values for a statement of"
                            f" {sqlite3_bind_parameter_count(self.stmt)} parameters")
        self.conn.execute("BEGIN")
        try:
            if columns:
                while i < n and rc == SQLITE_DONE:
                    if n - i < self.rows_per_statement:
                        step = 1
                    rc = self._insert_objects(self.stmt if step == 1 else self.many, rows,
                                              columns, i, step)
                    if rc == SQLITE_DONE:
                        i += step
            else:
                with nogil:
                    while i < n and rc == SQLITE_DONE:
                        if n - i < self.rows_per_statement:
                            step = 1
                        rc = _insert_rows(self.stmt if step == 1 else self.many, rows, i, step,
                                          self.nullable)
                        if rc == SQLITE_DONE:
                            i += step
        except BaseException:
            self._rollback()
            raise
        if rc != SQLITE_DONE:
            message = self.conn.error()
            self._rollback()
            raise BulkError(f"inserting rows {i} to {i + step - 1} (first key {rows[i, 0]}):"
                            f" {message}")
        self.conn.execute("COMMIT")

    cdef _rollback(self):
        sqlite3_reset(self.stmt)
        sqlite3_reset(self.many)
        if not sqlite3_get_autocommit(self.conn.db):  # SQLite may have rolled back already
            self.conn.execute("ROLLBACK")

    cdef int _insert_objects(self, sqlite3_stmt *stmt, const int64_t[:, ::1] rows,
                             list columns, Py_ssize_t first, Py_ssize_t count) except? -1:
        """``_insert_rows`` with each row's values from ``columns`` after its integers."""
        cdef Py_ssize_t r, c, width = rows.shape[1], k = len(columns)
        cdef int parameter = 1, rc
        for r in range(first, first + count):
            for c in range(width):
                if c == self.nullable and rows[r, c] < 0:
                    sqlite3_bind_null(stmt, parameter)
                else:
                    sqlite3_bind_int64(stmt, parameter, rows[r, c])
                parameter += 1
            for c in range(k):
                _bind_value(stmt, parameter, <object>PyList_GET_ITEM(columns[c], r))
                parameter += 1
        # The texts bound stay alive in ``columns``; SQLite's work needs no GIL, so a
        # reader on another thread goes on meanwhile (the importers' writer thread).
        with nogil:
            rc = sqlite3_step(stmt)
            sqlite3_reset(stmt)
        return rc

    def close(self):
        sqlite3_finalize(self.stmt)  # a no-op on NULL
        sqlite3_finalize(self.many)
        self.stmt = self.many = NULL
        if self.conn is not None and self.owned:
            self.conn.close()
        self.conn = None

    def __dealloc__(self):
        sqlite3_finalize(self.stmt)
        sqlite3_finalize(self.many)


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


cdef class BulkReader:
    """The rows of one query, handed out in blocks by ``fetch``.

    ``target`` is a path (opened read-only) or a ``Connection``; ``params`` are bound to
    the query's ``?``. The first ``ints`` columns (all when None) are integers, which must
    not be NULL (``coalesce`` them); they come as an int64 matrix. The others come as
    lists of Python values (None, int, float or str).
    """

    cdef Connection conn
    cdef bint owned
    cdef sqlite3_stmt *stmt
    cdef int ncols, nints
    cdef bint done

    def __init__(self, target, str sql, params=(), ints=None):
        self.owned = not isinstance(target, Connection)
        self.conn = Connection(target, readonly=True, cache_kib=READ_CACHE_KIB) if self.owned else target
        self.stmt = self.conn.prepare(sql)
        self.ncols = sqlite3_column_count(self.stmt)
        self.nints = self.ncols if ints is None else ints
        if not 0 <= self.nints <= self.ncols:
            raise ValueError(f"{ints} integer columns of a query of {self.ncols}")
        if len(params) != sqlite3_bind_parameter_count(self.stmt):
            raise BulkError(f"{len(params)} values for a query of"
                            f" {sqlite3_bind_parameter_count(self.stmt)} parameters")
        for i, value in enumerate(params):
            _bind_value(self.stmt, i + 1, value)

    def fetch(self, Py_ssize_t n):
        """Up to ``n`` more rows: (int64 matrix, [list per other column]); none at the end."""
        values = np.empty((n if not self.done else 0, self.nints), dtype=np.int64)
        cdef int64_t[:, ::1] out = values
        cdef list others = [[] for _ in range(self.ncols - self.nints)]
        cdef Py_ssize_t m = 0
        cdef int rc = SQLITE_ROW, c, bad = -1
        while m < n and not self.done:
            if self.ncols == self.nints:
                with nogil:
                    while m < n:
                        rc = sqlite3_step(self.stmt)
                        if rc != SQLITE_ROW:
                            break
                        bad = _read_ints(self.stmt, out, m, self.nints)
                        if bad >= 0:
                            break
                        m += 1
            else:
                rc = sqlite3_step(self.stmt)
                if rc == SQLITE_ROW:
                    bad = _read_ints(self.stmt, out, m, self.nints)
                    if bad < 0:
                        for c in range(self.nints, self.ncols):
                            (<list>others[c - self.nints]).append(_column_value(self.stmt, c))
                        m += 1
            if bad >= 0:
                name = sqlite3_column_name(self.stmt, bad).decode()
                raise BulkError(f"column {name!r} is not an integer (NULL or text) in row {m}")
            if rc == SQLITE_DONE:
                self.done = True
            elif rc != SQLITE_ROW:
                self.done = True
                raise BulkError(f"reading rows: {self.conn.error()}")
        return values[:m], others

    def close(self):
        sqlite3_finalize(self.stmt)
        self.stmt = NULL
        if self.conn is not None and self.owned:
            self.conn.close()
        self.conn = None

    def __dealloc__(self):
        sqlite3_finalize(self.stmt)


@cython.boundscheck(False)
@cython.wraparound(False)
cdef int _read_ints(sqlite3_stmt *stmt, int64_t[:, ::1] out, Py_ssize_t row, int count) noexcept nogil:
    """Columns 0..count-1 of the current row into ``out[row]``; the first non-integer
    column's index, or -1."""
    cdef int c
    for c in range(count):
        if sqlite3_column_type(stmt, c) != SQLITE_INTEGER:
            return c
        out[row, c] = sqlite3_column_int64(stmt, c)
    return -1


cdef object _column_value(sqlite3_stmt *stmt, int c):
    cdef int kind = sqlite3_column_type(stmt, c)
    cdef const unsigned char *text
    if kind == SQLITE_NULL:
        return None
    if kind == SQLITE_INTEGER:
        return sqlite3_column_int64(stmt, c)
    if kind == SQLITE_FLOAT:
        return sqlite3_column_double(stmt, c)
    text = sqlite3_column_text(stmt, c)
    return PyUnicode_DecodeUTF8(<const char *>text, sqlite3_column_bytes(stmt, c), NULL)
