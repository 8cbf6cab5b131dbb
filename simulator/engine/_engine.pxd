# cython: language_level=3
"""C-level interface of the Cython event engine, for Cython components to cimport."""
from cpython.ref cimport PyObject
from libc.stdint cimport int64_t


cdef struct Event:
    int64_t time
    int64_t seq
    int priority
    int kind
    PyObject* handler          # owned reference
    PyObject* arg              # owned reference


cdef class Handler:
    cpdef handle(self, int kind, object arg)


cdef class Engine:
    cdef public int64_t now
    cdef public int64_t events
    cdef Event* _heap
    cdef Py_ssize_t _size
    cdef Py_ssize_t _capacity
    cdef int64_t _seq
    cdef bint _stopped

    cpdef int schedule(self, int64_t time, Handler handler, int kind=*, object arg=*,
                       int priority=*) except -1
    cpdef int64_t peek_time(self)
    cdef Event _pop(self) noexcept
    cpdef int64_t run(self, int64_t until=*) except -1
    cpdef stop(self)


cdef class TickingComponent(Handler):
    cdef public Engine engine
    cdef public str name
    cdef public int64_t next_tick
    cdef public int64_t ticks

    cpdef int wake_at(self, int64_t time) except -1
    cpdef int wake(self) except -1
    cpdef int64_t tick(self, int64_t now) except? -2
    cpdef receive(self, int kind, object arg)
    cdef int _tick_due(self, int64_t now) except -1


cdef class Buffer:
    cdef readonly Py_ssize_t capacity
    cdef public str name
    cdef list _slots
    cdef Py_ssize_t _head, _count
    cdef public TickingComponent consumer
    cdef public list producers
    cdef public int64_t pushed
    cdef public int64_t refused

    cpdef bint can_push(self)
    cpdef bint push(self, object item) except -1
    cpdef object peek(self)
    cpdef object pop(self)


cdef class WakeGroup(Handler):
    cdef list members


cpdef int wake_together(list components) except -1


cdef class TimeoutProcess(Handler):
    cdef public Engine engine
    cdef public int64_t delay
    cdef public int64_t count
    cdef public int64_t done
