# cython: language_level=3
"""Static types of ``compute_unit.py`` for its compiled build (Cython pure Python mode).

A wavefront's stream is read in place, as packed C structs through one typed
memoryview, unit busy times are C integers, and tracer calls go straight to the Cython ``Tracer``, so the
issue loop runs without the interpreter.
"""
cimport cython
from libc.stdint cimport int32_t, int64_t, uint8_t, uint16_t, uint32_t

from simulator.engine._engine cimport Buffer, Engine, Handler, TickingComponent
from simulator.gpu.memory cimport L1VCache, MemRequest, new_request
from simulator.tracing._api cimport NO_TASK, Tracer

# Compile-time constants, so that the C compiler folds the issue logic (a switch over
# the unit, shifts by a constant slot). The interpreted build takes the same names from
# compute_unit.py; the unit codes are stream.Unit's (UNIT_CODES: a test compares them).
cdef enum:
    WG_DONE = 2
    READY = 0
    WAIT_LOADS = 1
    AT_BARRIER = 2
    SENDING = 3
    ENDING = 4
    DONE = 5
    SPECIAL = 6
    VALU = 0
    SALU = 1
    LDS = 2
    VMEM = 3
    BRANCH = 4
    BARRIER = 5
    WAITCNT = 6
    END = 7

cdef int64_t NEVER

# One record of a stream (``stream.INST_DTYPE``, whose fields numpy packs without
# padding), read in place through a typed memoryview.
cdef packed struct Inst:
    uint8_t unit
    uint8_t active
    uint8_t passes
    uint8_t write
    uint32_t line
    uint32_t exec_lo
    uint32_t exec_hi
    int64_t addr_off
    int32_t addr_cnt
    uint16_t lds_cycles

cdef object records(object insts)
cdef object addresses(object values)
cdef int64_t lds_cycles(Inst inst)


@cython.final
cdef class MapWG:
    cdef public object stream
    cdef public list simds
    cdef public int64_t req_out
    cdef public int cu


@cython.final
cdef class WorkGroup:
    cdef public MapWG msg
    cdef public list wavefronts
    cdef public int live, at_barrier
    cdef public int64_t task


@cython.final
cdef class Wavefront:
    # What the issue scan reads first, in the object's first cache line with its
    # reference count: a CU scans its pools every cycle, and the wavefronts it visits
    # are rarely in the cache (a memoryview slice alone takes 200 bytes).
    cdef public int state, unit
    cdef public int64_t ready_at, pc, loads, stores, task, barrier_task
    cdef public int simd
    cdef public Py_ssize_t pos
    cdef public WorkGroup wg
    cdef const Inst[:] insts
    cdef const int64_t[:] addresses


@cython.final
cdef class VmemInst:
    cdef public Wavefront wf
    cdef public int64_t first, count, sent, pending, start_at, task
    cdef public bint write, returns


cdef class ComputeUnit(TickingComponent):
    cdef public int simds
    cdef public int64_t valu_cycles, salu_latency, branch_latency, lds_latency
    cdef public int64_t vmem_issue_latency, vmem_lines_per_cycle, vmem_queue_size
    cdef public Buffer inbox
    cdef public L1VCache l1v
    cdef public Handler cp
    cdef public list pools
    cdef Py_ssize_t pool_rows
    cdef long long[::1] issue_ready
    cdef int[::1] issue_unit
    cdef long long[::1] pool_ready
    cdef long long[::1] simd_busy
    cdef public int64_t salu_busy, branch_busy, lds_busy
    cdef public object vmem_queue
    cdef public int last_pool
    cdef public bint finished
    cdef public int64_t instructions
    cdef public Tracer tracer
    cdef bint trace_wg, trace_wf, trace_inst, trace_mem
    cdef int loc, loc_salu, loc_branch, loc_lds, loc_vmem, loc_pool
    cdef int[::1] loc_simd
    cdef int[::1] kind_inst
    cdef int kind_map_in, kind_wg, kind_wf, kind_read_out, kind_write_out

    @cython.final
    cdef int _map(self, MapWG msg, int64_t now) except -1

    @cython.final
    cdef int _finish(self, Wavefront wf, int64_t now) except -1

    @cython.final
    cdef int _release(self, WorkGroup wg, int64_t now) except -1

    @cython.final
    cdef int _ready(self, Wavefront wf, int64_t at) except -1

    @cython.final
    cdef int _sync(self, Wavefront wf) except -1
    cpdef int64_t tick(self, int64_t now) except? -2

    @cython.final
    cdef bint _send_lines(self, int64_t now) except -1

    @cython.final
    cdef int64_t _unit_free_at(self, int unit, int simd) noexcept

    @cython.final
    cdef bint _issue_pool(self, int simd, int64_t now) except -1

    @cython.final
    cdef int64_t _inst_task(self, Wavefront wf, int unit, int location, int64_t start,
                            int64_t end) except? -2

    @cython.final
    cdef int _execute(self, Wavefront wf, int unit, int simd, int64_t now) except -1

    @cython.final
    cdef int64_t _next_wake(self, int64_t now) except? -2
    cpdef receive(self, int kind, object arg)
