# cython: language_level=3
"""Loops over a Daisen CSV's text in C (``columns.py`` is the reference and says what
they read): rows split into fields, and exact decimal text to integer picoseconds.

pandas' CSV reader makes a Python string of every field; here the text is read in
place, a Python string is made only for the IDs and for each Kind, What and Where the
first time it is met, and the times' digits are read straight into integers (through
``Decimal`` each would cost about a microsecond). Text of wider characters than one
byte (Latin-1) is left to the reference.
"""
import numpy as np

from . import columns as reference
from .columns import FIELDS, Rows

cimport cython
from libc.stdint cimport int64_t, uint8_t, uint64_t
from libcpp.string cimport string
from libcpp.unordered_map cimport unordered_map
from libcpp.vector cimport vector
from cython.operator cimport dereference as deref


cdef extern from "Python.h":
    Py_ssize_t PyUnicode_GET_LENGTH(object)
    int PyUnicode_KIND(object)
    void *PyUnicode_DATA(object)
    unsigned int PyUnicode_READ(int kind, const void *data, Py_ssize_t index)
    object PyUnicode_FromKindAndData(int kind, const void *buffer, Py_ssize_t size)
    int PyUnicode_1BYTE_KIND


cdef uint64_t LIMIT = 9223372036854775807ULL
# Code points read: ' ' 32, '+' 43, '-' 45, '.' 46, '0'..'9' 48..57, 'E' 69, 'e' 101.


@cython.boundscheck(False)
@cython.wraparound(False)
def to_ps(texts, int exponent):
    """(int64 values, bool ok) for ``texts`` (a sequence of str) scaled by ``10**exponent``."""
    cdef Py_ssize_t n = len(texts), i
    values = np.zeros(n, dtype=np.int64)
    ok = np.zeros(n, dtype=np.uint8)
    cdef int64_t[::1] out = values
    cdef unsigned char[::1] good = ok
    for i in range(n):
        text = texts[i]
        if type(text) is not str:
            continue
        _parse(PyUnicode_KIND(text), PyUnicode_DATA(text), 0, PyUnicode_GET_LENGTH(text), exponent,
               &out[i], &good[i])
    return values, ok.view(bool)


cdef inline void _parse(int kind, const void *data, Py_ssize_t p, Py_ssize_t length, int exponent,
                        int64_t *out, unsigned char *good) noexcept:
    """Characters p..length-1 of ``data`` (of PyUnicode kind ``kind``) as a decimal."""
    cdef unsigned int c  # a code point
    cdef bint negative = False, any_digit = False, exp_negative = False
    cdef uint64_t digits = 0
    cdef int frac_digits = 0, exp_value = 0, shift, _k
    while p < length and PyUnicode_READ(kind, data, p) == 32:
        p += 1
    if p < length:
        c = PyUnicode_READ(kind, data, p)
        if c == 45 or c == 43:
            negative = c == 45
            p += 1
    while p < length:
        c = PyUnicode_READ(kind, data, p)
        if c < 48 or c > 57:
            break
        if digits > 1844674407370955161ULL:
            return
        digits = digits * 10 + (c - 48)
        any_digit = True
        p += 1
    if p < length and PyUnicode_READ(kind, data, p) == 46:
        p += 1
        while p < length:
            c = PyUnicode_READ(kind, data, p)
            if c < 48 or c > 57:
                break
            if digits > 1844674407370955161ULL:
                return  # more than 19 significant digits: the caller's Decimal decides
            digits = digits * 10 + (c - 48)
            frac_digits += 1
            any_digit = True
            p += 1
    if not any_digit:
        return
    if p < length:
        c = PyUnicode_READ(kind, data, p)
        if c == 101 or c == 69:
            p += 1
            if p < length:
                c = PyUnicode_READ(kind, data, p)
                if c == 45 or c == 43:
                    exp_negative = c == 45
                    p += 1
            if p >= length:
                return
            while p < length:
                c = PyUnicode_READ(kind, data, p)
                if c < 48 or c > 57:
                    break
                exp_value = exp_value * 10 + (c - 48)
                if exp_value > 400:
                    return
                p += 1
    while p < length and PyUnicode_READ(kind, data, p) == 32:
        p += 1
    if p != length:
        return
    shift = exponent + (-exp_value if exp_negative else exp_value) - frac_digits
    if shift >= 0:
        for _k in range(shift):
            if digits == 0:
                break
            if digits > LIMIT // 10:
                return
            digits *= 10
    else:
        for _k in range(-shift):
            if digits % 10:
                return
            digits //= 10
    if digits > LIMIT:
        return
    out[0] = -<int64_t>digits if negative else <int64_t>digits
    good[0] = 1


# -- rows ----------------------------------------------------------------------------

cdef struct Span:
    const uint8_t *data  # the field's characters (in the text, or in a quoted field's copy)
    Py_ssize_t size


cdef bint _space(uint8_t c) noexcept:
    """``str.isspace`` for a Latin-1 character."""
    return c == 32 or 9 <= c <= 13 or 28 <= c <= 31 or c == 133 or c == 160


cdef object _text(Span f):
    """The field as ``columns._strip`` leaves it: stripped of whitespace if it starts or
    ends with a space."""
    cdef Py_ssize_t a = 0, b = f.size
    if b and (f.data[0] == 32 or f.data[b - 1] == 32):
        while a < b and _space(f.data[a]):
            a += 1
        while b > a and _space(f.data[b - 1]):
            b -= 1
    return PyUnicode_FromKindAndData(PyUnicode_1BYTE_KIND, f.data + a, b - a)


cdef void _key(string *key, Span f) noexcept:
    """Append a field to a lookup key, its length first (so fields never run together)."""
    key.append(<const char *>&f.size, sizeof(Py_ssize_t))
    key.append(<const char *>f.data, f.size)


cdef Py_ssize_t _row_end(const uint8_t *s, Py_ssize_t p, Py_ssize_t n, bint final) noexcept:
    """As ``columns._row_end``, with -1 for None."""
    if s[p] == 10:
        return 1
    if s[p] != 13:
        return 0
    if p + 1 < n:
        return 2 if s[p + 1] == 10 else 1
    return 1 if final else -1


@cython.boundscheck(False)
@cython.wraparound(False)
def read_rows(str text, Py_ssize_t line, bint final):
    """As ``columns.read_rows``."""
    if PyUnicode_KIND(text) != PyUnicode_1BYTE_KIND:
        return reference.read_rows(text, line, final)
    cdef const uint8_t *s = <const uint8_t *>PyUnicode_DATA(text)
    cdef Py_ssize_t n = PyUnicode_GET_LENGTH(text), pos = 0, p, size, consumed = 0, found
    cdef Py_ssize_t row_line, a, i, row, column, breaks
    cdef vector[Span] fields
    cdef vector[string] quoted  # the characters of this row's quoted fields
    cdef vector[Py_ssize_t] quoted_field  # which field each belongs to
    cdef Span f
    cdef int state  # 0 field start, 1 plain field, 2 in quotes, 3 quote in quotes
    cdef uint8_t c
    cdef unordered_map[string, int64_t] kinds, wheres
    cdef unordered_map[string, int64_t].iterator hit
    cdef string key
    cdef vector[int64_t] kind, where, starts, ends, lines
    cdef int64_t value
    cdef unsigned char good
    out = Rows()
    problem = None
    while pos < n:
        # One row: each field a span of the text, or of a copy for a quoted field.
        fields.clear()
        quoted.clear()
        quoted_field.clear()
        row_line, p, a, state, size, breaks = line, pos, pos, 0, 0, 0
        while True:
            if p >= n:
                if final and state == 2:
                    problem = (row_line, "the file ends inside a quoted field")
                size = 0 if final else -1
                break
            c = s[p]
            if state == 0:  # a field's start
                if c == 32:
                    p += 1
                    a = p
                    continue
                if c == 34:
                    quoted.push_back(string())
                    quoted_field.push_back(fields.size())
                    state, p = 2, p + 1
                    continue
                state = 1
            elif state == 2:  # inside quotes
                if c == 34:
                    state, p = 3, p + 1
                    continue
                size = _row_end(s, p, n, final)
                if size < 0:
                    break
                if size:  # a line break inside the quotes belongs to the field
                    quoted.back().append(<const char *>s + p, size)
                    breaks, p = breaks + 1, p + size
                else:
                    quoted.back().push_back(c)
                    p += 1
                continue
            elif state == 3:  # after a quote inside quotes
                if c == 34:  # a doubled quote
                    quoted.back().push_back(34)
                    state, p = 2, p + 1
                    continue
                state = 1
            # a plain character of a field, a separator or the row's end
            if c == 44:
                f.data, f.size = s + a, p - a
                fields.push_back(f)
                state, p, a = 0, p + 1, p + 1
                continue
            size = _row_end(s, p, n, final)
            if size:
                break
            if quoted.size() and quoted_field.back() == <Py_ssize_t>fields.size():
                quoted.back().push_back(c)  # text after a closing quote joins the field
            p += 1
        if problem is not None or size < 0:
            break  # a damaged row, or one that goes on past this text
        f.data, f.size = s + a, p - a
        fields.push_back(f)
        for i in range(<Py_ssize_t>quoted.size()):  # quoted fields: their own characters
            fields[quoted_field[i]].data = <const uint8_t *>quoted[i].data()
            fields[quoted_field[i]].size = quoted[i].size()
        pos = consumed = p + size
        line = row_line + breaks + (1 if size else 0)
        found = fields.size()
        if found > FIELDS:
            problem = (row_line, f"expected {FIELDS} fields, found {found}")
            break
        f.size = 0
        while <Py_ssize_t>fields.size() < FIELDS:
            fields.push_back(f)
        if not (fields[0].size or fields[2].size or fields[5].size):
            continue  # a blank row
        if found < FIELDS:
            problem = (row_line, f"expected {FIELDS} fields, found {found}")
            break
        row = len(out.ids)
        out.ids.append(_text(fields[0]))
        out.parents.append(_text(fields[1]) or None)
        key.clear()
        _key(&key, fields[2])
        _key(&key, fields[3])
        hit = kinds.find(key)
        if hit == kinds.end():
            kinds[key] = len(out.kinds)
            kind.push_back(len(out.kinds))
            out.kinds.append((_text(fields[2]), _text(fields[3])))
        else:
            kind.push_back(deref(hit).second)
        key.clear()
        _key(&key, fields[4])
        hit = wheres.find(key)
        if hit == wheres.end():
            wheres[key] = len(out.wheres)
            where.push_back(len(out.wheres))
            out.wheres.append(_text(fields[4]))
        else:
            where.push_back(deref(hit).second)
        for column in range(2):
            f = fields[5 + column]
            value, good = 0, 0
            _parse(PyUnicode_1BYTE_KIND, f.data, 0, f.size, 12, &value, &good)
            if not good:
                text = PyUnicode_FromKindAndData(PyUnicode_1BYTE_KIND, f.data, f.size)
                out.inexact.append((row, column, text))
            if column == 0:
                starts.push_back(value)
            else:
                ends.push_back(value)
        lines.push_back(row_line)
    out.kind, out.where = _array(kind), _array(where)
    out.starts, out.ends, out.lines = _array(starts), _array(ends), _array(lines)
    return consumed, line, out, problem


cdef object _array(vector[int64_t] &values):
    if not values.size():
        return np.empty(0, dtype=np.int64)
    return np.array(<int64_t[:values.size()]>values.data())
