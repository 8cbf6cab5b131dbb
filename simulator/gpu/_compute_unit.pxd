# cython: language_level=3
"""C-level interface of the Cython compute unit (see compute_unit.py for the model)."""
from libc.stdint cimport int64_t, int32_t, uint8_t, uint32_t

from simulator.engine._engine cimport Buffer, Engine, Handler, TickingComponent
from simulator.gpu._memory cimport L1VCache, MemRequest
from simulator.tracing._api cimport Tracer


cdef class MapWG:
    cdef public object stream
    cdef public list simds
    cdef public int64_t req_out
    cdef public int cu


cdef class WorkGroup:
    cdef public MapWG msg
    cdef public list wavefronts
    cdef public int live, at_barrier
    cdef public int64_t task


cdef class Wavefront:
    cdef public WorkGroup wg
    cdef public int simd
    cdef const uint8_t[:] units
    cdef const int64_t[:] lds_cycles
    cdef const uint8_t[:] writes
    cdef const int64_t[:] addr_off
    cdef const int32_t[:] addr_cnt
    cdef const int64_t[:] addresses
    cdef public int64_t pc, ready_at, loads, stores, task, barrier_task
    cdef public int state


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
    cdef int64_t simd_busy[16]
    cdef public int64_t salu_busy, branch_busy, lds_busy
    cdef public object vmem_queue
    cdef public int last_pool
    cdef public bint finished
    cdef public int64_t instructions
    cdef public Tracer tracer
    cdef bint trace_wg, trace_wf, trace_inst, trace_mem
    cdef int loc, loc_salu, loc_branch, loc_lds, loc_vmem, loc_pool
    cdef int loc_simd[16]
    cdef int kind_inst[8]
    cdef int kind_map_in, kind_wg, kind_wf, kind_read_out, kind_write_out

    cdef int _map(self, MapWG msg, int64_t now) except -1
    cdef int _finish(self, Wavefront wf, int64_t now) except -1
    cdef int _release(self, WorkGroup wg, int64_t now) except -1
    cdef bint _send_lines(self, int64_t now) except -1
    cdef int64_t _unit_free_at(self, int unit, int simd)
    cdef bint _issue_pool(self, int simd, int64_t now) except -1
    cdef int64_t _inst_task(self, Wavefront wf, int unit, int location, int64_t start,
                            int64_t end) except? -2
    cdef int _execute(self, Wavefront wf, int unit, int simd, int64_t now) except -1
    cdef int64_t _next_wake(self, int64_t now) except? -2
