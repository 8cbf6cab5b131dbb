# cython: language_level=3
"""The compute unit in Cython: the same API and behaviour as ``compute_unit.py``.

A wavefront's stream is read through typed memoryviews of its numpy columns, unit
busy times are C integers, and tracer calls go straight to the Cython ``Tracer``;
the issue loop therefore runs without the interpreter. The model is documented in
``compute_unit.py``.
"""
from collections import deque

from libc.stdint cimport int64_t

from simulator.engine._engine cimport Buffer, Engine, Handler, TickingComponent
from simulator.gpu._memory cimport L1VCache, MemRequest, new_request
from simulator.tracing._api cimport Tracer

from .compute_unit import lds_cycles

WG_DONE = 2

cdef enum:
    NO_TASK = -1
    KIND_WG_DONE = 2
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
    MAX_SIMDS = 16

UNIT_NAMES = {VALU: "VALU", SALU: "SALU", LDS: "LDS", VMEM: "VMEM", BRANCH: "Branch",
              BARRIER: "Barrier"}
# Cython cannot cimport a Python IntEnum, so the unit codes above repeat stream.Unit's;
# a test checks this copy against it.
UNIT_CODES = {"VALU": VALU, "SALU": SALU, "LDS": LDS, "VMEM": VMEM, "BRANCH": BRANCH,
              "BARRIER": BARRIER, "WAITCNT": WAITCNT, "END": END}


cdef class MapWG:
    """A work-group mapped by the Command Processor onto a CU (``MapWGReq``)."""

    def __init__(self, stream, list simds, int64_t req_out, int cu):
        self.stream = stream
        self.simds = simds
        self.req_out = req_out
        self.cu = cu


cdef class WorkGroup:
    """A resident work-group: its wavefronts and barrier state."""

    def __init__(self, MapWG msg, int64_t task):
        self.msg = msg
        self.wavefronts = []
        self.live = 0
        self.at_barrier = 0
        self.task = task


cdef class Wavefront:
    """A resident wavefront: its stream (as memoryviews) and where it is in it."""

    def __init__(self, WorkGroup wg, int simd, stream, int64_t task, int64_t ready_at):
        insts = stream.insts
        self.wg = wg
        self.simd = simd
        self.units = insts["unit"]
        self.lds_cycles = lds_cycles(insts)
        self.writes = insts["write"]
        self.addr_off = insts["addr_off"]
        self.addr_cnt = insts["addr_cnt"]
        self.addresses = stream.addresses
        self.pc = 0
        self.ready_at = ready_at
        self.state = READY
        self.loads = 0
        self.stores = 0
        self.task = task
        self.barrier_task = NO_TASK


cdef class VmemInst:
    """A vector-memory instruction: its lines, how many are sent and answered."""

    def __init__(self, Wavefront wf, int64_t first, int64_t count, bint write, bint returns,
                 int64_t start_at, int64_t task):
        self.wf = wf
        self.first = first
        self.count = count
        self.sent = 0
        self.pending = count
        self.write = write
        self.returns = returns
        self.start_at = start_at
        self.task = task


cdef class ComputeUnit(TickingComponent):
    """One CU: wavefront pools, issue arbitration and the execution units."""

    def __init__(self, Engine engine, str name, dict cfg, Tracer tracer, keys, int index,
                 L1VCache l1v):
        cdef int s
        super().__init__(engine, name)
        c = cfg["cu"]
        if c["simds"] > MAX_SIMDS:
            raise ValueError(f"cu.simds is at most {MAX_SIMDS} in the Cython build")
        self.simds = c["simds"]
        self.valu_cycles = 64 // c["lanes_per_simd"]
        self.salu_latency = c["salu_latency"]
        self.branch_latency = c["branch_latency"]
        self.lds_latency = c["lds_latency"]
        self.vmem_issue_latency = c["vmem_issue_latency"]
        self.vmem_lines_per_cycle = c["vmem_lines_per_cycle"]
        self.vmem_queue_size = c["vmem_queue"]
        self.inbox = Buffer(cfg["cp"]["map_buffer"], name + ".in")
        self.inbox.consumer = self
        self.l1v = l1v
        l1v.inbox.producers.append(self)
        self.cp = None
        self.pools = [[] for _ in range(self.simds)]
        for s in range(MAX_SIMDS):
            self.simd_busy[s] = 0
            self.loc_simd[s] = NO_TASK
        self.salu_busy = 0
        self.branch_busy = 0
        self.lds_busy = 0
        self.vmem_queue = deque()
        self.last_pool = self.simds - 1
        self.finished = False
        self.instructions = 0
        self.tracer = tracer
        self.trace_wg = keys.wg
        self.trace_wf = keys.wf
        self.trace_inst = keys.inst
        self.trace_mem = keys.mem
        self.loc = keys.loc_cu[index]
        for s in range(self.simds):
            self.loc_simd[s] = keys.loc_simd[index][s]
        self.loc_salu = keys.loc_unit["SALU"][index]
        self.loc_branch = keys.loc_unit["Branch"][index]
        self.loc_lds = keys.loc_unit["LDS"][index]
        self.loc_vmem = keys.loc_unit["VMEM"][index]
        self.loc_pool = keys.loc_unit["Barrier"][index]
        for s in range(8):
            self.kind_inst[s] = NO_TASK
        for unit, unit_name in UNIT_NAMES.items():
            self.kind_inst[unit] = keys.kind_inst[unit_name]
        self.kind_map_in = keys.kind_map_in
        self.kind_wg = keys.kind_wg
        self.kind_wf = keys.kind_wf
        self.kind_read_out = keys.kind_read_out
        self.kind_write_out = keys.kind_write_out

    # -- work-groups arrive and leave ------------------------------------------------
    cdef int _map(self, MapWG msg, int64_t now) except -1:
        cdef Tracer tracer = self.tracer
        cdef int64_t wg_task = NO_TASK
        cdef int64_t req_in, task
        cdef WorkGroup wg
        cdef Wavefront wf
        cdef int simd
        if self.trace_wg:
            req_in = tracer.trace_req_receive(msg.req_out, self.kind_map_in, self.loc, now)
            tracer.trace_req_complete(req_in, now + 1)
            wg_task = tracer.start_task(req_in, self.kind_wg, self.loc, now)
        wg = WorkGroup(msg, wg_task)
        for stream, simd in zip(msg.stream.wavefronts, msg.simds):
            task = NO_TASK
            if self.trace_wf:
                task = tracer.start_task(wg_task, self.kind_wf, self.loc_pool, now)
            wf = Wavefront(wg, simd, stream, task, now + 1)
            wg.wavefronts.append(wf)
            (<list>self.pools[simd]).append(wf)
        wg.live = len(wg.wavefronts)
        return 0

    cdef int _finish(self, Wavefront wf, int64_t now) except -1:
        cdef WorkGroup wg = wf.wg
        wf.state = DONE
        if self.trace_wf:
            self.tracer.end_task(wf.task, now)
        self.finished = True
        wg.live -= 1
        if wg.live == 0:
            if self.trace_wg:
                self.tracer.end_task(wg.task, now)
            self.engine.schedule(now, self.cp, KIND_WG_DONE, wg.msg)
        elif wg.at_barrier == wg.live:
            self._release(wg, now)
        return 0

    cdef int _release(self, WorkGroup wg, int64_t now) except -1:
        cdef Wavefront wf
        for wf in wg.wavefronts:
            if wf.state == AT_BARRIER:
                wf.state = READY
                wf.ready_at = now + 1
                if self.trace_inst:
                    self.tracer.end_task(wf.barrier_task, now + 1)
        wg.at_barrier = 0
        return 0

    # -- the cycle ------------------------------------------------------------------
    cpdef int64_t tick(self, int64_t now) except? -2:
        cdef bint progress = False
        cdef int k, pool
        cdef list kept
        cdef Wavefront wf
        while len(self.inbox.items):
            self._map(<MapWG>self.inbox.pop(), now)
            progress = True
        if self._send_lines(now):
            progress = True
        for k in range(1, self.simds + 1):
            pool = (self.last_pool + k) % self.simds
            if self._issue_pool(pool, now):
                self.last_pool = pool
                progress = True
                break
        if self.finished:
            for k in range(self.simds):
                kept = []
                for wf in self.pools[k]:
                    if wf.state != DONE:
                        kept.append(wf)
                self.pools[k] = kept
            self.finished = False
        if progress:
            return now + 1
        return self._next_wake(now)

    cdef bint _send_lines(self, int64_t now) except -1:
        cdef int64_t sent = 0
        cdef int64_t req_out
        cdef VmemInst inst
        cdef Wavefront wf
        cdef object queue = self.vmem_queue
        cdef Buffer inbox = self.l1v.inbox
        while len(queue) and sent < self.vmem_lines_per_cycle:
            inst = <VmemInst>queue[0]
            if inst.start_at > now or not inbox.can_push():
                break
            req_out = NO_TASK
            if self.trace_mem:
                req_out = self.tracer.trace_req_initiate(
                    inst.task, self.kind_write_out if inst.write else self.kind_read_out,
                    self.loc, now)
            inbox.push(new_request(inst.wf.addresses[inst.first + inst.sent], inst.write, self,
                                  inst, req_out))
            inst.sent += 1
            sent += 1
            if inst.sent == inst.count:
                queue.popleft()
                wf = inst.wf
                wf.state = READY
                wf.ready_at = now + 1
        return sent > 0

    cdef int64_t _unit_free_at(self, int unit, int simd):
        if unit == VALU:
            return self.simd_busy[simd]
        if unit == SALU:
            return self.salu_busy
        if unit == BRANCH:
            return self.branch_busy
        if unit == LDS:
            return self.lds_busy
        if unit == VMEM:
            return 0 if len(self.vmem_queue) < self.vmem_queue_size else -1
        return 0

    cdef bint _issue_pool(self, int simd, int64_t now) except -1:
        cdef int used = 0
        cdef int unit, slot
        cdef int64_t free_at
        cdef Wavefront wf
        for wf in self.pools[simd]:
            if wf.state != READY or wf.ready_at > now:
                continue
            unit = wf.units[wf.pc]
            slot = unit if unit < BARRIER else SPECIAL
            if used & (1 << slot):
                continue
            free_at = self._unit_free_at(unit, simd)
            if free_at < 0 or free_at > now:
                continue
            used |= 1 << slot
            self._execute(wf, unit, simd, now)
        return used != 0

    cdef int64_t _inst_task(self, Wavefront wf, int unit, int location, int64_t start,
                            int64_t end) except? -2:
        cdef int64_t task
        if self.trace_inst:
            task = self.tracer.start_task(wf.task, self.kind_inst[unit], location, start)
            if end >= 0:
                self.tracer.end_task(task, end)
            return task
        return NO_TASK

    cdef int _execute(self, Wavefront wf, int unit, int simd, int64_t now) except -1:
        cdef int64_t pc = wf.pc
        cdef int64_t done, occupancy, start, count, task
        cdef bint write
        cdef WorkGroup wg
        self.instructions += 1
        if unit == VALU:
            done = now + self.valu_cycles
            self.simd_busy[simd] = done
            wf.ready_at = done
            self._inst_task(wf, unit, self.loc_simd[simd], now, done)
        elif unit == SALU:
            self.salu_busy = now + 1
            wf.ready_at = now + self.salu_latency
            self._inst_task(wf, unit, self.loc_salu, now, wf.ready_at)
        elif unit == BRANCH:
            self.branch_busy = now + 1
            wf.ready_at = now + self.branch_latency
            self._inst_task(wf, unit, self.loc_branch, now, wf.ready_at)
        elif unit == LDS:
            occupancy = wf.lds_cycles[pc]
            self.lds_busy = now + occupancy
            wf.ready_at = now + self.lds_latency + occupancy
            self._inst_task(wf, unit, self.loc_lds, now, wf.ready_at)
        elif unit == VMEM:
            count = wf.addr_cnt[pc]
            start = now + self.vmem_issue_latency
            if count == 0:
                wf.ready_at = start
                self._inst_task(wf, unit, self.loc_vmem, now, start)
            else:
                code = wf.writes[pc]  # 0 load, 1 store, 2 atomic returning its old value
                task = self._inst_task(wf, unit, self.loc_vmem, now, -1)
                if code != 1:
                    wf.loads += 1
                else:
                    wf.stores += 1
                wf.state = SENDING
                self.vmem_queue.append(VmemInst(wf, wf.addr_off[pc], count, code != 0, code != 1,
                                                start, task))
        elif unit == WAITCNT:
            if wf.loads:
                wf.state = WAIT_LOADS
            else:
                wf.ready_at = now + 1
        elif unit == BARRIER:
            wf.state = AT_BARRIER
            wf.barrier_task = self._inst_task(wf, unit, self.loc_pool, now, -1)
            wg = wf.wg
            wg.at_barrier += 1
            if wg.at_barrier == wg.live:
                self._release(wg, now)
        else:
            wf.state = ENDING
            if wf.loads == 0 and wf.stores == 0:
                self._finish(wf, now)
            return 0
        wf.pc = pc + 1
        return 0

    cdef int64_t _next_wake(self, int64_t now) except? -2:
        cdef int64_t best = -1
        cdef int64_t free_at, at
        cdef int simd
        cdef Wavefront wf
        cdef VmemInst head
        if len(self.vmem_queue):
            head = <VmemInst>self.vmem_queue[0]
            if head.start_at > now:
                best = head.start_at
        for simd in range(self.simds):
            for wf in self.pools[simd]:
                if wf.state != READY:
                    continue
                free_at = self._unit_free_at(wf.units[wf.pc], simd)
                if free_at < 0:
                    continue
                at = max(wf.ready_at, free_at, now + 1)
                if best < 0 or at < best:
                    best = at
        return best

    # -- memory responses -------------------------------------------------------------
    cpdef receive(self, int kind, object arg):
        cdef MemRequest req = <MemRequest>arg
        cdef int64_t now = self.engine.now
        cdef VmemInst inst
        cdef Wavefront wf
        if self.trace_mem:
            self.tracer.trace_req_finalize(req.req_out, now)
        inst = <VmemInst>req.payload
        inst.pending -= 1
        if inst.pending:
            return
        if self.trace_inst:
            self.tracer.end_task(inst.task, now)
        wf = inst.wf
        if inst.returns:
            wf.loads -= 1
        else:
            wf.stores -= 1
        if wf.state == WAIT_LOADS and wf.loads == 0:
            wf.state = READY
            wf.ready_at = now + 1
            self.wake()
        elif wf.state == ENDING and wf.loads == 0 and wf.stores == 0:
            self._finish(wf, now)
            self.wake()
