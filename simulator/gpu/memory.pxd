# cython: language_level=3
"""Static types of ``memory.py`` for its compiled build (Cython pure Python mode).

Tag arrays are flat int64 arrays read through typed memoryviews; requests are
extension types whose fields are read without the interpreter; tracer calls go
straight to the Cython ``Tracer``.
"""
cimport cython
from libc.stdint cimport int64_t

from simulator.engine._engine cimport Buffer, Engine, Handler, TickingComponent
from simulator.tracing._api cimport NO_TASK, Tracer

cdef int RESPONSE


# One is made per line per level: reused memory spares the allocator.
@cython.final
@cython.freelist(256)
cdef class MemRequest:
    cdef public int64_t addr
    cdef public bint write
    cdef public Handler requester
    cdef public object payload
    cdef public int64_t req_out
    cdef public int64_t req_in


cdef MemRequest _fill(MemRequest req, int64_t addr, bint write, Handler requester,
                      object payload, int64_t req_out)
cdef MemRequest new_request(int64_t addr, bint write, Handler requester, object payload,
                            int64_t req_out)


@cython.final
cdef class MSHRs:
    cdef readonly Py_ssize_t count, used
    cdef long long[::1] lines
    cdef list waiting
    cdef long long[::1] free
    cdef long long[::1] table
    cdef int64_t mask
    cdef int64_t _home(self, int64_t line)
    cdef int64_t _place_of(self, int64_t line)
    # cpdef: tests drive the compiled table too; calls from the caches stay C calls
    cpdef Py_ssize_t find(self, int64_t line)
    cpdef Py_ssize_t open(self, int64_t line, MemRequest req) except -1
    cpdef bint join(self, int64_t line, MemRequest req) except -1
    cpdef list close(self, Py_ssize_t slot)


cpdef int64_t fold(int64_t value, int bits)
cpdef int64_t mix(int64_t value, int bits)


@cython.final
cdef class AddressMap:
    cdef public int64_t interleave, count, bits, line_bytes, lines_per_block
    cdef public bint hashed
    cpdef int64_t unit(self, int64_t addr)
    cpdef int64_t index(self, int64_t addr)
    cpdef int64_t address(self, int64_t unit, int64_t index)


@cython.final
cdef class TagArray:
    cdef public int64_t ways, sets, set_bits, clock
    cdef long long[::1] tags
    cdef signed char[::1] dirty
    cdef long long[::1] last_use
    cpdef int64_t set_of(self, int64_t index)
    cdef int64_t _find(self, int64_t index)
    cdef int64_t _victim(self, int64_t index)
    cdef int64_t lookup(self, int64_t index)
    cpdef bint evicts_dirty(self, int64_t index)
    cdef int64_t fill(self, int64_t index, bint dirty)


cdef class DRAMChannel(TickingComponent):
    cdef public int64_t latency, transfer_num, transfer_den, busy, served
    cdef public Buffer inbox
    cdef public Tracer tracer
    cdef int loc, kind_read_in, kind_write_in
    cpdef int64_t tick(self, int64_t now) except? -2


cdef class Cache(TickingComponent):
    cdef public int64_t latency, requests_per_cycle, mshrs, line_bytes
    cdef public TagArray tags
    cdef public Buffer inbox
    cdef public MSHRs mshr
    cdef public int64_t hits, misses
    cdef public Tracer tracer
    cdef int loc, kind_read_in, kind_write_in, kind_read_out, kind_write_out
    cdef int tag_read_hit, tag_read_miss, tag_read_mshr_hit, tag_write_hit, tag_write_miss
    cdef int _respond(self, MemRequest req, int64_t time) except -1


cdef class CacheBank(Cache):
    cdef public int64_t write_buffer, unit
    cdef public AddressMap own, below
    cdef public list drains
    cdef public object writebacks, fills
    cdef Buffer drain_for(self, int64_t addr)
    cdef bint _write_back(self) except -1
    cdef int _receive(self, MemRequest req, int kind, int64_t now) except -1
    cdef int _evict(self, int64_t index, int64_t parent, int64_t now) except -1
    cpdef int64_t tick(self, int64_t now) except? -2
    cpdef receive(self, int kind, object arg)
    cdef int _place_fills(self, int64_t now) except -1


cdef class L1VCache(Cache):
    cdef public list banks
    cdef public AddressMap bank_map
    cdef CacheBank stuck_on
    cdef bint stuck_read
    cdef bint _still_stuck(self) except -1
    cdef CacheBank bank_of(self, int64_t addr)
    cdef int _receive(self, MemRequest req, int kind, int tag, int64_t now) except -1
    cdef int _forward(self, MemRequest req, bint write, object payload, CacheBank bank,
                      int64_t now) except -1
    cpdef int64_t tick(self, int64_t now) except? -2
    cpdef receive(self, int kind, object arg)
