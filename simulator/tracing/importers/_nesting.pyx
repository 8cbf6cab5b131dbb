# cython: language_level=3
"""Nesting on tracks in C (``nesting.py`` is the reference, and says what it computes).

The sweep visits every task of a Chrome trace once; in Python that is a microsecond a
task, here a few nanoseconds.
"""
import numpy as np

cimport cython
from libc.stdint cimport int64_t
from libcpp.vector cimport vector


cdef struct Open:
    int64_t seq
    int64_t end
    int64_t start


@cython.final
cdef class TrackSweep:
    """The sweep's state between blocks: the current track, its open stack, the next points."""

    cdef int64_t[:, ::1] enclosing
    cdef int64_t[:, ::1] following
    cdef Py_ssize_t e, f
    cdef int64_t current
    cdef bint started  # a track is current
    cdef vector[Open] stack
    cdef vector[int64_t] nest, bound

    def __init__(self, enclosing, following):
        self.enclosing = np.ascontiguousarray(enclosing, dtype=np.int64).reshape(-1, 3)
        self.following = np.ascontiguousarray(following, dtype=np.int64).reshape(-1, 3)

    @cython.boundscheck(False)
    @cython.wraparound(False)
    def feed(self, const int64_t[:, ::1] rows not None):
        """Nest and bind a block of tasks; returns (nest, bound) int64 arrays."""
        cdef Py_ssize_t i, n = rows.shape[0]
        cdef int64_t seq, track, start, end
        cdef bint free
        cdef Open top
        cdef Py_ssize_t ne = self.enclosing.shape[0], nf = self.following.shape[0]
        self.nest.clear()
        self.bound.clear()
        for i in range(n):
            seq, track, start, end, free = rows[i, 0], rows[i, 1], rows[i, 2], rows[i, 3], rows[i, 4] != 0
            if not self.started or track != self.current:
                self._bind_enclosed(0, True)
                self.stack.clear()
                self.current, self.started = track, True
                while self.e < ne and self.enclosing[self.e, 0] < track:
                    self.e += 1  # on a track without tasks: bound to nothing
                while self.f < nf and self.following[self.f, 0] < track:
                    self.f += 1
            self._bind_enclosed(start, False)
            while self.f < nf and self.following[self.f, 0] == track and self.following[self.f, 1] <= start:
                self.bound.push_back(self.following[self.f, 2])
                self.bound.push_back(seq)
                self.f += 1
            while self.stack.size() and self.stack.back().end <= start:
                self.stack.pop_back()
            if free and self.stack.size() and end <= self.stack.back().end:
                top = self.stack.back()
                self.nest.push_back(seq)
                self.nest.push_back(top.seq)
                self.nest.push_back(top.start)
            top.seq, top.end, top.start = seq, end, start
            self.stack.push_back(top)
        return _rows(self.nest, 3), _rows(self.bound, 2)

    def finish(self):
        """Bind the points left after the last task; returns the ``bound`` rows."""
        self.bound.clear()
        if self.started:
            self._bind_enclosed(0, True)
        return _rows(self.bound, 2)

    @cython.boundscheck(False)
    @cython.wraparound(False)
    cdef void _bind_enclosed(self, int64_t before, bint everything):
        """Points of the current track before ``before`` (or all that are left): the
        innermost task around each."""
        cdef Py_ssize_t ne = self.enclosing.shape[0], k
        cdef int64_t time
        while (self.started and self.e < ne and self.enclosing[self.e, 0] == self.current
               and (everything or self.enclosing[self.e, 1] < before)):
            time = self.enclosing[self.e, 1]
            k = self.stack.size()
            while k > 0:
                k -= 1
                if self.stack[k].end >= time:
                    self.bound.push_back(self.enclosing[self.e, 2])
                    self.bound.push_back(self.stack[k].seq)
                    break
            self.e += 1


cdef object _rows(vector[int64_t] &values, int width):
    out = np.empty((values.size() // width, width), dtype=np.int64)
    cdef int64_t[:, ::1] view = out
    cdef Py_ssize_t i
    for i in range(<Py_ssize_t>values.size()):
        view[i // width, i % width] = values[i]
    return out
