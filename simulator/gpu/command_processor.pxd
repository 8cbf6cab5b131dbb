# cython: language_level=3
"""Static types of ``command_processor.py`` for its compiled build (Cython pure Python mode).

The per-CU resource model is held in flat ``int64`` arrays, read through typed
memoryviews once compiled, so the search for a CU that fits the next work-group (a scan
of every CU when the GPU is full) costs no interpreter time.
"""
from libc.stdint cimport int64_t

from simulator.engine._engine cimport TickingComponent
from simulator.gpu.compute_unit cimport ComputeUnit, MapWG
from simulator.tracing._api cimport NO_TASK, Tracer


cdef int64_t round_up(int64_t value, int64_t granularity)


cdef class CommandProcessor(TickingComponent):
    cdef public int64_t rate, launch_overhead
    cdef public list cus
    cdef public int simds, n_cus
    cdef public int64_t vgpr_granularity, sgpr_granularity, lds_granularity
    cdef public int64_t wf_slots, vgprs_per_simd, sgprs, lds_bytes
    cdef long long[::1] free_slots, free_vgprs, free_sgprs, free_lds
    cdef long long[::1] try_slots, try_vgprs
    cdef public object source, head
    cdef public int next_cu
    cdef public int64_t dispatch_from, in_flight, dispatched, completed
    cdef public int64_t kernel_task, kernel_end
    cdef public bint kernel_done
    cdef public Tracer tracer
    cdef bint trace_kernel, trace_wg
    cdef int loc, kind_map_out

    cdef object _take(self)
    cdef list _place(self, int cu, object stream, bint check_only, bint empty=*)
    cdef int _release(self, int cu, object stream, list simds) except -1
    cpdef int64_t tick(self, int64_t now) except? -2
    cpdef receive(self, int kind, object arg)
    cdef int _end_kernel(self, int64_t now) except -1
