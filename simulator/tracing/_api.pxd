# cython: language_level=3
"""C-level interface of the Cython Tracer, for Cython components to cimport.

``from simulator.tracing._api cimport Tracer`` and call its cpdef methods on a typed
reference: the calls are plain C calls, with no Python objects on the hot path.
"""
from libc.stdint cimport int64_t
from libcpp.unordered_map cimport unordered_map
from libcpp.vector cimport vector

cdef enum:
    NO_TASK = -1  # the key of no task: ``api.NO_TASK``, as a C constant for cimporters


cdef struct OpenTask:
    int64_t parent
    int64_t start
    int kind      # -1: the ring slot holds no open task
    int location


cdef class Tracer:
    cdef public object sink
    cdef public int64_t ps_num, ps_den
    cdef public int64_t window_start_ps
    cdef public int64_t window_end_ps
    cdef public object categories
    cdef public int64_t batch_size
    cdef public int64_t next_key
    cdef public int64_t dropped
    cdef public bint closed
    cdef dict _locations, _kinds, _tag_names, _details
    cdef list _new_locations, _new_kinds, _new_tag_names, _row_details
    cdef vector[char] _kind_enabled
    cdef vector[OpenTask] _ring  # open tasks with keys from _ring_base on, at key & (size - 1)
    cdef int64_t _ring_base
    cdef unordered_map[int64_t, OpenTask] _evicted  # long-lived open tasks older than that
    cdef int64_t _open_count
    cdef object _rows_arr, _tags_arr
    cdef int64_t[:, ::1] _rows
    cdef int64_t[:, ::1] _tags
    cdef int64_t _nrows, _ntags
    cdef object _write_open  # the sink's write_open, or None
    cdef int64_t _announced  # keys below it were open at a flush or have ended

    cpdef int64_t ps(self, int64_t time) noexcept
    cpdef int64_t start_task(self, int64_t parent, int kind, int location, int64_t time,
                             object details=*) except? -2
    cpdef int end_task(self, int64_t key, int64_t time) except -1
    cpdef int tag_task(self, int64_t key, int64_t time, int tag) except -1
    cpdef int64_t trace_req_initiate(self, int64_t parent, int kind, int location,
                                     int64_t time) except? -2
    cpdef int64_t trace_req_receive(self, int64_t req_out, int kind, int location,
                                    int64_t time) except? -2
    cpdef int trace_req_complete(self, int64_t req_in, int64_t time) except -1
    cpdef int trace_req_finalize(self, int64_t req_out, int64_t time) except -1
    cdef int _finish(self, int64_t key, OpenTask task, int64_t end, int64_t flags) except -1
    cdef int64_t _room(self, int64_t used) except -1
    cdef void _make_room(self) noexcept
    cdef void _advance(self) noexcept
    cdef object _opened_since(self)
