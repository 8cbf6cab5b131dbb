# cython: language_level=3
"""The Command Processor in Cython: the same API and behaviour as ``command_processor.py``.

The per-CU resource model lives in C arrays, so the search for a CU that fits the next
work-group (a scan of every CU when the GPU is full) costs no interpreter time. The
model is documented in ``command_processor.py``.
"""
from collections import deque

from cpython.mem cimport PyMem_Free, PyMem_Malloc
from libc.stdint cimport int64_t

from simulator.engine._engine cimport Buffer, Engine, TickingComponent
from simulator.gpu._compute_unit cimport ComputeUnit, MapWG
from simulator.tracing._api cimport Tracer

cdef enum:
    NO_TASK = -1
    MAX_SIMDS = 16


cdef inline int64_t round_up(int64_t value, int64_t granularity):
    return -(-value // granularity) * granularity


cdef class CommandProcessor(TickingComponent):
    """Dispatches the work-groups of one kernel launch at a time."""

    cdef public int64_t rate, launch_overhead
    cdef public list cus
    cdef public int simds, n_cus
    cdef public int64_t vgpr_granularity, sgpr_granularity, lds_granularity
    cdef public int64_t wf_slots, vgprs_per_simd, sgprs, lds_bytes
    cdef int64_t* free_slots
    cdef int64_t* free_vgprs
    cdef int64_t* free_sgprs
    cdef int64_t* free_lds
    cdef public object queue
    cdef public int next_cu
    cdef public int64_t dispatch_from, in_flight, dispatched, completed
    cdef public int64_t kernel_task, kernel_end
    cdef public bint kernel_done
    cdef public Tracer tracer
    cdef bint trace_kernel, trace_wg
    cdef int loc, kind_map_out

    def __cinit__(self, *args, **kwargs):
        self.free_slots = NULL
        self.free_vgprs = NULL
        self.free_sgprs = NULL
        self.free_lds = NULL

    def __init__(self, Engine engine, str name, dict cfg, Tracer tracer, keys, list cus):
        cdef ComputeUnit cu
        cdef int i
        super().__init__(engine, name)
        c = cfg["cu"]
        self.rate = cfg["cp"]["wg_dispatch_per_cycle"]
        self.launch_overhead = cfg["cp"]["launch_overhead"]
        self.cus = cus
        self.n_cus = len(cus)
        self.simds = c["simds"]
        if self.simds > MAX_SIMDS:
            raise ValueError(f"cu.simds is at most {MAX_SIMDS} in the Cython build")
        self.vgpr_granularity = c["vgpr_granularity"]
        self.sgpr_granularity = c["sgpr_granularity"]
        self.lds_granularity = c["lds_granularity"]
        self.wf_slots = c["wf_slots_per_simd"]
        self.vgprs_per_simd = c["vgprs_per_simd"]
        self.sgprs = c["sgprs"]
        self.lds_bytes = c["lds_bytes"]
        self.free_slots = <int64_t*>PyMem_Malloc(self.n_cus * self.simds * sizeof(int64_t))
        self.free_vgprs = <int64_t*>PyMem_Malloc(self.n_cus * self.simds * sizeof(int64_t))
        self.free_sgprs = <int64_t*>PyMem_Malloc(self.n_cus * sizeof(int64_t))
        self.free_lds = <int64_t*>PyMem_Malloc(self.n_cus * sizeof(int64_t))
        if (self.free_slots == NULL or self.free_vgprs == NULL or self.free_sgprs == NULL
                or self.free_lds == NULL):
            raise MemoryError()
        for i in range(self.n_cus * self.simds):
            self.free_slots[i] = self.wf_slots
            self.free_vgprs[i] = self.vgprs_per_simd
        for i in range(self.n_cus):
            self.free_sgprs[i] = self.sgprs
            self.free_lds[i] = self.lds_bytes
        for cu in cus:
            cu.cp = self
            cu.inbox.producers.append(self)
        self.queue = deque()
        self.next_cu = 0
        self.dispatch_from = 0
        self.in_flight = 0
        self.dispatched = 0
        self.completed = 0
        self.kernel_task = NO_TASK
        self.kernel_done = True
        self.kernel_end = -1
        self.tracer = tracer
        self.trace_kernel = keys.kernel
        self.trace_wg = keys.wg
        self.loc = keys.loc_cp
        self.kind_map_out = keys.kind_map_out

    def __dealloc__(self):
        PyMem_Free(self.free_slots)
        PyMem_Free(self.free_vgprs)
        PyMem_Free(self.free_sgprs)
        PyMem_Free(self.free_lds)

    def launch(self, list work_groups, int64_t kernel_task):
        """Start dispatching ``work_groups`` (WorkGroupStream list) after the launch overhead."""
        if not self.kernel_done:
            raise RuntimeError("a kernel is still running on the Command Processor")
        cdef int64_t now = self.engine.now
        self.queue = deque(work_groups)
        self.kernel_task = kernel_task
        self.kernel_done = False
        self.kernel_end = -1
        self.dispatched = 0
        self.completed = 0
        self.dispatch_from = now + self.launch_overhead
        for stream in work_groups:
            if self._place(0, stream, True, True) is None:
                raise ValueError(
                    f"work-group {stream.group_id} cannot fit on an empty CU: "
                    f"{len(stream.wavefronts)} wavefronts, {stream.lds_bytes} B of LDS, "
                    f"{stream.vgprs_per_wavefront} VGPRs and {stream.sgprs_per_wavefront} "
                    "SGPRs per wavefront")
        if not work_groups:
            self._end_kernel(now)
        else:
            self.wake_at(self.dispatch_from)

    cdef object _place(self, int cu, stream, bint check_only, bint empty):
        cdef int64_t n = len(stream.wavefronts)
        cdef int64_t lds = round_up(stream.lds_bytes, self.lds_granularity)
        cdef int64_t sgprs = n * round_up(stream.sgprs_per_wavefront, self.sgpr_granularity)
        cdef int64_t vgprs = round_up(stream.vgprs_per_wavefront, self.vgpr_granularity)
        cdef int64_t slots[MAX_SIMDS]
        cdef int64_t free_vgprs[MAX_SIMDS]
        cdef int64_t free_lds, free_sgprs
        cdef int s, best, i
        cdef list simds
        for s in range(self.simds):
            if empty:
                slots[s] = self.wf_slots
                free_vgprs[s] = self.vgprs_per_simd
            else:
                slots[s] = self.free_slots[cu * self.simds + s]
                free_vgprs[s] = self.free_vgprs[cu * self.simds + s]
        if empty:
            free_lds, free_sgprs = self.lds_bytes, self.sgprs
        else:
            free_lds, free_sgprs = self.free_lds[cu], self.free_sgprs[cu]
        if lds > free_lds or sgprs > free_sgprs:
            return None
        simds = []
        for i in range(n):
            best = -1
            for s in range(self.simds):
                if slots[s] > 0 and free_vgprs[s] >= vgprs and (best < 0 or slots[s] > slots[best]):
                    best = s
            if best < 0:
                return None
            slots[best] -= 1
            free_vgprs[best] -= vgprs
            simds.append(best)
        if not check_only:
            for s in range(self.simds):
                self.free_slots[cu * self.simds + s] = slots[s]
                self.free_vgprs[cu * self.simds + s] = free_vgprs[s]
            self.free_lds[cu] -= lds
            self.free_sgprs[cu] -= sgprs
        return simds

    cdef int _release(self, int cu, stream, list simds) except -1:
        cdef int64_t vgprs = round_up(stream.vgprs_per_wavefront, self.vgpr_granularity)
        cdef int s
        for s in simds:
            self.free_slots[cu * self.simds + s] += 1
            self.free_vgprs[cu * self.simds + s] += vgprs
        self.free_lds[cu] += round_up(stream.lds_bytes, self.lds_granularity)
        self.free_sgprs[cu] += len(simds) * round_up(stream.sgprs_per_wavefront,
                                                     self.sgpr_granularity)
        return 0

    cpdef int64_t tick(self, int64_t now) except? -2:
        cdef int64_t sent = 0
        cdef int n = self.n_cus
        cdef int k, cu, target
        cdef int64_t req_out
        cdef object simds
        if now < self.dispatch_from:
            return self.dispatch_from
        while len(self.queue) and sent < self.rate:
            stream = self.queue[0]
            target = -1
            simds = None
            for k in range(n):
                cu = (self.next_cu + k) % n
                if (<ComputeUnit>self.cus[cu]).inbox.can_push():
                    simds = self._place(cu, stream, False, False)
                    if simds is not None:
                        target = cu
                        break
            if target < 0:
                break
            self.queue.popleft()
            req_out = NO_TASK
            if self.trace_wg:
                req_out = self.tracer.trace_req_initiate(self.kernel_task, self.kind_map_out,
                                                         self.loc, now)
            (<ComputeUnit>self.cus[target]).inbox.push(MapWG(stream, simds, req_out, target))
            self.next_cu = (target + 1) % n
            self.in_flight += 1
            self.dispatched += 1
            sent += 1
        if len(self.queue) and sent == self.rate:
            return now + 1
        return -1

    cpdef receive(self, int kind, object arg):
        cdef MapWG msg = <MapWG>arg
        cdef int64_t now = self.engine.now
        self._release(msg.cu, msg.stream, msg.simds)
        if self.trace_wg:
            self.tracer.trace_req_finalize(msg.req_out, now)
        self.in_flight -= 1
        self.completed += 1
        if len(self.queue):
            self.wake()
        elif self.in_flight == 0:
            self._end_kernel(now)

    cdef int _end_kernel(self, int64_t now) except -1:
        self.kernel_done = True
        self.kernel_end = now
        if self.trace_kernel:
            self.tracer.end_task(self.kernel_task, now)
        self.engine.stop()
        return 0
