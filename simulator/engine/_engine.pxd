# cython: language_level=3
"""C-level interface of the Cython event engine, for Cython components to cimport."""
cimport cython
from cpython.ref cimport PyObject
from libc.stdint cimport int64_t, uint64_t


cdef struct Event:
    int64_t time
    int64_t seq
    int priority
    int kind
    PyObject* handler          # owned reference
    PyObject* arg              # owned reference


cdef class Handler:
    cpdef handle(self, int kind, object arg)


cdef enum:
    WHEEL = 1024  # cycles ahead kept in the timing wheel (a power of two, 64 at least)
    WHEEL_WORDS = WHEEL / 64  # of its bitmap


cdef struct Bucket:
    Event* events    # the events of one cycle, from head to size, in (priority, seq) order
    Py_ssize_t head
    Py_ssize_t size
    Py_ssize_t capacity


@cython.final
cdef class Engine:
    cdef readonly int64_t now          # advanced by run only (the wheel is keyed on it)
    cdef public int64_t events
    cdef Event* _heap              # events WHEEL cycles ahead or more
    cdef Py_ssize_t _size
    cdef Py_ssize_t _capacity
    cdef Bucket _wheel[WHEEL]      # the others, by time modulo WHEEL
    cdef uint64_t _used[WHEEL_WORDS]  # bit b: bucket b holds events
    cdef Py_ssize_t _in_wheel
    cdef int64_t _seq
    cdef bint _stopped

    cpdef int schedule(self, int64_t time, Handler handler, int kind=*, object arg=*,
                       int priority=*) except -1
    cdef int _wheel_push(self, Event* ev) except -1
    cdef int _heap_push(self, Event* ev) except -1
    cdef void _drop_all(self) noexcept
    cdef Py_ssize_t _first_bucket(self) noexcept nogil
    cdef Py_ssize_t _next(self) noexcept nogil
    cdef Event* _at(self, Py_ssize_t where) noexcept nogil
    cpdef int64_t peek_time(self)
    cdef Event _take(self, Py_ssize_t where) noexcept
    cdef Event _heap_pop(self) noexcept
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

    @cython.final
    cdef int _tick_due(self, int64_t now) except -1


@cython.final
cdef class Buffer:
    cdef readonly Py_ssize_t capacity
    cdef public str name
    cdef list _slots
    cdef readonly Py_ssize_t size  # items held (len): read as a C field by components
    cdef Py_ssize_t _head
    cdef public TickingComponent consumer
    cdef public list producers
    cdef public int64_t pushed
    cdef public int64_t refused

    cpdef bint can_push(self)
    cpdef bint push(self, object item) except -1
    cpdef object peek(self)
    cpdef object pop(self)


@cython.final
cdef class WakeGroup(Handler):
    cdef list members


cpdef int wake_together(list components) except -1


cdef class TimeoutProcess(Handler):
    cdef public Engine engine
    cdef public int64_t delay
    cdef public int64_t count
    cdef public int64_t done
