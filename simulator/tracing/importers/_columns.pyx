# cython: language_level=3
"""Loops over a block of text columns in C (``columns.py`` is the reference): exact
decimal text to integer picoseconds, and whether any field is padded with spaces.

Converting each time of a large CSV through ``Decimal`` costs about a microsecond; here
the digits are read straight from the string's buffer into an integer, so a million
times take milliseconds. Anything unusual is left to the caller (``ok`` False).
"""
import numpy as np

cimport cython
from libc.stdint cimport int64_t, uint64_t


cdef extern from "Python.h":
    Py_ssize_t PyUnicode_GET_LENGTH(object)
    int PyUnicode_KIND(object)
    void *PyUnicode_DATA(object)
    unsigned int PyUnicode_READ(int kind, void *data, Py_ssize_t index)


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
        _parse(text, exponent, &out[i], &good[i])
    return values, ok.view(bool)


cdef inline void _parse(str text, int exponent, int64_t *out, unsigned char *good):
    cdef Py_ssize_t length = PyUnicode_GET_LENGTH(text), p = 0
    cdef int kind = PyUnicode_KIND(text)
    cdef void *data = PyUnicode_DATA(text)
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


def padded(texts):
    """True if any text starts or ends with a space."""
    cdef Py_ssize_t length
    cdef int kind
    cdef void *data
    for text in texts:
        if type(text) is not str:
            continue
        length = PyUnicode_GET_LENGTH(text)
        if length:
            kind, data = PyUnicode_KIND(text), PyUnicode_DATA(text)
            if PyUnicode_READ(kind, data, 0) == 32 or PyUnicode_READ(kind, data, length - 1) == 32:
                return True
    return False
