"""A GCN compute unit.

It replays the instruction streams of the wavefronts mapped onto it:

* a wavefront pool per SIMD, oldest wavefront first;
* issue arbitration: each cycle one SIMD pool (round robin) may issue, at most one
  instruction per unit type (VALU, SALU, LDS, VMEM, branch, special), from different
  wavefronts; a wavefront has one instruction in flight;
* SIMD units take ``64 / lanes_per_simd`` (4) cycles per VALU instruction; the scalar and
  branch units are shared by the four SIMDs;
* the LDS unit is busy one cycle per bank-conflict pass of each lane group the LDS serves
  together (``lds_cycles``), and its latency grows by the same amount;
* the vector-memory unit sends the coalesced 64 B lines of each instruction to the L1V,
  ``vmem_lines_per_cycle`` at a time, stalling when the L1V input buffer is full; the
  wavefront may go on once its lines are sent and the instruction ends at the last response;
* ``WAITCNT`` blocks until the wavefront's loads are back, ``BARRIER`` until every live
  wavefront of the work-group arrived, and ``END`` until its stores and loads completed;
  the last wavefront of a work-group reports to the Command Processor.

Written once, in Cython's pure Python mode: ``compute_unit.pxd`` gives the static types
with which ``setup.py`` compiles this file (stream records then read in place as C
structs, unit busy times as C integers, tracer calls as C calls);
``simulator.build`` decides whether the compiled module or this source runs.
"""
from array import array
from collections import deque, namedtuple

import cython

from ..stream import INST_DTYPE, Unit

if not cython.compiled:
    from ..engine.engine import Buffer, TickingComponent
    from ..tracing.api import NO_TASK, Tracer
    from .memory import MemRequest, new_request

if not cython.compiled:  # compiled, these are C constants of compute_unit.pxd
    WG_DONE = 2
    """Event kind: a work-group finished, sent to the Command Processor."""

    READY, WAIT_LOADS, AT_BARRIER, SENDING, ENDING, DONE = range(6)
    SPECIAL = 6
    """Issue-slot index shared by WAITCNT, BARRIER and END."""

    VALU, SALU, LDS, VMEM, BRANCH, BARRIER, WAITCNT, END = (int(u) for u in Unit)

NEVER = 1 << 62
"""A pool's issue bound while none of its wavefronts is ready."""

UNIT_CODES = {"VALU": VALU, "SALU": SALU, "LDS": LDS, "VMEM": VMEM, "BRANCH": BRANCH,
              "BARRIER": BARRIER, "WAITCNT": WAITCNT, "END": END}
"""Each unit's code as this build sees it: ``stream.Unit``'s (a test checks both builds)."""
UNIT_NAMES = {VALU: "VALU", SALU: "SALU", LDS: "LDS", VMEM: "VMEM", BRANCH: "Branch",
              BARRIER: "Barrier"}


class MapWG:
    """A work-group mapped by the Command Processor onto a CU (``MapWGReq``)."""

    if not cython.compiled:
        __slots__ = ("stream", "simds", "req_out", "cu")

    def __init__(self, stream, simds, req_out, cu):
        self.stream = stream
        self.simds = simds
        self.req_out = req_out
        self.cu = cu


class WorkGroup:
    """A resident work-group: its wavefronts and barrier state."""

    if not cython.compiled:
        __slots__ = ("msg", "wavefronts", "live", "at_barrier", "task")

    def __init__(self, msg, task):
        self.msg = msg
        self.wavefronts = []
        self.live = 0
        self.at_barrier = 0
        self.task = task


InstRecord = namedtuple("InstRecord", INST_DTYPE.names)
"""One ``INST_DTYPE`` record as the interpreted build reads it (the compiled build reads
the stream's packed C structs in place)."""


def records(insts):
    """A stream's records as this build reads them fastest: the numpy array itself once
    compiled (a typed memoryview of packed structs: one view per wavefront, no column
    copied), named tuples when interpreted."""
    return insts if cython.compiled else [InstRecord._make(r) for r in insts.tolist()]


def addresses(values):
    """A stream's line addresses as this build reads them fastest: the array itself once
    compiled (a typed memoryview), a list of Python ints when interpreted."""
    return values if cython.compiled else values.tolist()


class Wavefront:
    """A resident wavefront: its stream's records and where it is in them."""

    if not cython.compiled:
        __slots__ = ("wg", "simd", "pos", "insts", "addresses", "pc", "unit", "ready_at",
                     "state", "loads", "stores", "task", "barrier_task")

    def __init__(self, wg, simd, stream, task, ready_at):
        self.wg = wg
        self.simd = simd
        self.pos = 0  # its place in its pool (its row of the CU's issue table)
        self.insts = records(stream.insts)
        self.addresses = addresses(stream.addresses)
        self.pc = 0
        self.unit = self.insts[0].unit  # the next instruction's, kept here for the issue scan
        self.ready_at = ready_at
        self.state = READY
        self.loads = 0
        self.stores = 0
        self.task = task
        self.barrier_task = NO_TASK


def lds_cycles(inst):
    """Cycles the LDS is busy for instruction ``inst``: the passes of all its lane groups.

    Streams give them as ``lds_cycles``; where that is 0 (hand-built streams) the
    worst-group ``passes`` counts once per active half-wavefront, the grouping of 32-bit
    accesses.
    """
    halves: cython.int
    if inst.lds_cycles > 0:
        return inst.lds_cycles
    halves = (inst.exec_lo != 0) + (inst.exec_hi != 0)
    return max(inst.passes, 1) * max(halves, 1)


class VmemInst:
    """A vector-memory instruction: its lines (``count`` addresses of its wavefront from
    ``first`` on), how many are sent and how many answered."""

    if not cython.compiled:
        __slots__ = ("wf", "first", "count", "sent", "pending", "write", "returns",
                     "start_at", "task")

    def __init__(self, wf, first, count, write, returns, start_at, task):
        self.wf = wf
        self.first = first
        self.count = count
        self.sent = 0
        self.pending = count
        self.write = write      # travels as a store (write-around at the L1)
        self.returns = returns  # its data comes back: s_waitcnt waits for it (loads, atomics)
        self.start_at = start_at
        self.task = task


class ComputeUnit(TickingComponent):
    """One CU: wavefront pools, issue arbitration and the execution units."""

    def __init__(self, engine, name, cfg, tracer, keys, index, l1v):
        super().__init__(engine, name)
        c = cfg["cu"]
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
        # The issue table: per pool, row i says when its i-th wavefront is ready (NEVER
        # unless READY) and the unit of its next instruction. The issue scan runs every
        # cycle the CU works and reads only these rows, in a few cache lines; a wavefront
        # object is touched when it issues (visiting each object missed the cache each
        # time: it was a third of a compute-bound kernel's time).
        self.pool_rows = c["wf_slots_per_simd"]
        self.issue_ready = array("q", [NEVER]) * (self.simds * self.pool_rows)
        self.issue_unit = array("i", [0]) * (self.simds * self.pool_rows)
        # Per pool, a time before which none of its READY wavefronts can issue (NEVER
        # without one): a pool whose bound is later than now cannot issue, and its scan is
        # skipped. A memory-bound kernel's CU ticks once per line it sends while its
        # wavefronts all wait, and a compute-bound one's while the SIMD is busy: scanning
        # every pool then was most of their cost.
        self.pool_ready = array("q", [NEVER]) * self.simds
        self.simd_busy = array("q", [0]) * self.simds
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
        self.loc_simd = array("i", keys.loc_simd[index])
        self.loc_salu = keys.loc_unit["SALU"][index]
        self.loc_branch = keys.loc_unit["Branch"][index]
        self.loc_lds = keys.loc_unit["LDS"][index]
        self.loc_vmem = keys.loc_unit["VMEM"][index]
        self.loc_pool = keys.loc_unit["Barrier"][index]
        # kind of each unit's instruction tasks, by unit code (WAITCNT and END make none)
        self.kind_inst = array("i", [NO_TASK]) * len(Unit)
        unit: cython.int
        for unit, unit_name in UNIT_NAMES.items():
            self.kind_inst[unit] = keys.kind_inst[unit_name]
        self.kind_map_in = keys.kind_map_in
        self.kind_wg = keys.kind_wg
        self.kind_wf = keys.kind_wf
        self.kind_read_out = keys.kind_read_out
        self.kind_write_out = keys.kind_write_out

    # -- work-groups arrive and leave ------------------------------------------------
    def _map(self, msg, now):
        tracer: Tracer = self.tracer
        wg_task: cython.longlong = NO_TASK
        req_in: cython.longlong
        task: cython.longlong
        wg: WorkGroup
        wf: Wavefront
        simd: cython.int
        pool: list
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
            pool = self.pools[simd]
            if len(pool) == self.pool_rows:
                raise RuntimeError(f"{self.name}: SIMD {simd} has no wavefront slot left")
            wf.pos = len(pool)
            pool.append(wf)
            self._ready(wf, now + 1)
        wg.live = len(wg.wavefronts)
        return 0

    def _finish(self, wf, now):
        wg: WorkGroup = wf.wg
        wf.state = DONE
        self._sync(wf)
        if self.trace_wf:
            self.tracer.end_task(wf.task, now)
        self.finished = True  # leaves its pool at the end of the cycle, not mid-iteration
        wg.live -= 1
        if wg.live == 0:
            if self.trace_wg:
                self.tracer.end_task(wg.task, now)
            self.engine.schedule(now, self.cp, WG_DONE, wg.msg)
            # Its wavefronts point back at it: without this cycle their streams go at once,
            # not when the cyclic GC next runs (memory stays bounded by the work-groups held).
            wg.wavefronts.clear()
        elif wg.at_barrier == wg.live:
            self._release(wg, now)
        return 0

    def _release(self, wg, now):
        wf: Wavefront
        for wf in wg.wavefronts:
            if wf.state == AT_BARRIER:
                self._ready(wf, now + 1)
                if self.trace_inst:
                    self.tracer.end_task(wf.barrier_task, now + 1)
        wg.at_barrier = 0
        return 0

    def _ready(self, wf, at):
        """Wavefront ``wf`` may issue again from cycle ``at`` on."""
        wf.state = READY
        wf.ready_at = at
        self._sync(wf)
        if at < self.pool_ready[wf.simd]:
            self.pool_ready[wf.simd] = at
        return 0

    def _sync(self, wf):
        """Copy ``wf``'s state into its row of the issue table."""
        row: cython.Py_ssize_t = wf.simd * self.pool_rows + wf.pos
        self.issue_ready[row] = wf.ready_at if wf.state == READY else NEVER
        self.issue_unit[row] = wf.unit
        return 0

    # -- the cycle ------------------------------------------------------------------
    def tick(self, now):
        progress: cython.bint = False
        k: cython.int
        pool: cython.int
        row: cython.Py_ssize_t
        kept: list
        wf: Wavefront
        while self.inbox.size:
            self._map(self.inbox.pop(), now)
            progress = True
        if self._send_lines(now):
            progress = True
        for k in range(1, self.simds + 1):
            pool = (self.last_pool + k) % self.simds
            if self.pool_ready[pool] <= now and self._issue_pool(pool, now):
                self.last_pool = pool
                progress = True
                break
        if self.finished:
            for k in range(self.simds):
                kept = []
                for wf in self.pools[k]:
                    if wf.state != DONE:
                        wf.pos = len(kept)
                        kept.append(wf)
                        self._sync(wf)
                for row in range(len(kept), len(self.pools[k])):
                    self.issue_ready[k * self.pool_rows + row] = NEVER
                self.pools[k] = kept
            self.finished = False
        if progress:
            return now + 1
        return self._next_wake(now)

    def _send_lines(self, now):
        """The coalescer: send up to ``vmem_lines_per_cycle`` lines of the oldest instruction."""
        sent: cython.longlong = 0
        req_out: cython.longlong
        inst: VmemInst
        wf: Wavefront
        inbox: Buffer
        queue = self.vmem_queue
        if not queue:
            return False  # most ticks of a compute-bound kernel: the L1V is not looked at
        inbox = self.l1v.inbox
        while queue and sent < self.vmem_lines_per_cycle:
            inst = queue[0]
            if inst.start_at > now or not inbox.can_push():
                break
            req_out = NO_TASK
            if self.trace_mem:
                req_out = self.tracer.trace_req_initiate(
                    inst.task, self.kind_write_out if inst.write else self.kind_read_out,
                    self.loc, now)
            wf = inst.wf
            inbox.push(new_request(wf.addresses[inst.first + inst.sent], inst.write, self, inst,
                                   req_out))
            inst.sent += 1
            sent += 1
            if inst.sent == inst.count:
                queue.popleft()
                self._ready(wf, now + 1)
        return sent > 0

    def _unit_free_at(self, unit, simd):
        """When the unit an instruction needs can take it (-1: waits for a wake-up)."""
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

    def _issue_pool(self, simd, now):
        """Issue from pool ``simd``, oldest first, at most one instruction per issue slot;
        True if any issued. Its issue bound is made tight again on the way."""
        used: cython.int = 0
        slot: cython.int
        unit: cython.int
        i: cython.Py_ssize_t
        row: cython.Py_ssize_t = simd * self.pool_rows
        ready_at: cython.longlong
        free_at: cython.longlong
        bound: cython.longlong = NEVER
        pool: list = self.pools[simd]
        self.pool_ready[simd] = NEVER  # lowered by wavefronts made ready while it issues
        for i in range(len(pool)):
            ready_at = self.issue_ready[row + i]
            if ready_at == NEVER:
                continue  # not READY
            unit = self.issue_unit[row + i]
            free_at = self._unit_free_at(unit, simd)
            if ready_at <= now:
                slot = unit if unit < BARRIER else SPECIAL
                if not used & (1 << slot) and 0 <= free_at <= now:
                    used |= 1 << slot
                    self._execute(pool[i], unit, simd, now)
                    self._sync(pool[i])
                    ready_at = self.issue_ready[row + i]
                    if ready_at == NEVER:
                        continue
                    free_at = self._unit_free_at(self.issue_unit[row + i], simd)
            # Not before its unit is free: a unit's busy time only moves later (a full
            # VMEM queue, -1 here, frees without notice: not counted).
            bound = min(bound, max(ready_at, free_at))
        self.pool_ready[simd] = min(self.pool_ready[simd], bound)
        return used != 0

    def _inst_task(self, wf, unit, location, start, end):
        task: cython.longlong
        if self.trace_inst:
            task = self.tracer.start_task(wf.task, self.kind_inst[unit], location, start)
            if end >= 0:
                self.tracer.end_task(task, end)
            return task
        return NO_TASK

    def _execute(self, wf, unit, simd, now):
        pc: cython.longlong = wf.pc
        done: cython.longlong
        occupancy: cython.longlong
        start: cython.longlong
        count: cython.longlong
        task: cython.longlong
        code: cython.int
        wg: WorkGroup
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
            occupancy = lds_cycles(wf.insts[pc])
            self.lds_busy = now + occupancy
            wf.ready_at = now + self.lds_latency + occupancy
            self._inst_task(wf, unit, self.loc_lds, now, wf.ready_at)
        elif unit == VMEM:
            count = wf.insts[pc].addr_cnt
            start = now + self.vmem_issue_latency
            if count == 0:  # no active lane: nothing leaves the CU
                wf.ready_at = start
                self._inst_task(wf, unit, self.loc_vmem, now, start)
            else:
                code = wf.insts[pc].write  # 0 load, 1 store, 2 atomic returning its old value
                task = self._inst_task(wf, unit, self.loc_vmem, now, -1)
                if code != 1:
                    wf.loads += 1
                else:
                    wf.stores += 1
                wf.state = SENDING
                self.vmem_queue.append(VmemInst(wf, wf.insts[pc].addr_off, count, code != 0, code != 1,
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
        else:  # END
            wf.state = ENDING
            if wf.loads == 0 and wf.stores == 0:
                self._finish(wf, now)
            return 0
        wf.pc = pc + 1
        wf.unit = wf.insts[pc + 1].unit
        return 0

    def _next_wake(self, now):
        """Earliest time an instruction could issue, or -1 to sleep until woken."""
        best: cython.longlong = -1
        free_at: cython.longlong
        at: cython.longlong
        simd: cython.int
        row: cython.Py_ssize_t
        head: VmemInst
        if self.vmem_queue:
            head = self.vmem_queue[0]
            if head.start_at > now:
                best = head.start_at
        for simd in range(self.simds):
            if self.pool_ready[simd] == NEVER:
                continue  # no wavefront ready
            for row in range(simd * self.pool_rows, simd * self.pool_rows + len(self.pools[simd])):
                if self.issue_ready[row] == NEVER:
                    continue  # not READY
                free_at = self._unit_free_at(self.issue_unit[row], simd)
                if free_at < 0:
                    continue
                at = max(self.issue_ready[row], free_at, now + 1)
                if best < 0 or at < best:
                    best = at
        return best

    # -- memory responses -------------------------------------------------------------
    def receive(self, kind, arg):
        req: MemRequest = arg
        now: cython.longlong = self.engine.now
        inst: VmemInst
        wf: Wavefront
        if self.trace_mem:
            self.tracer.trace_req_finalize(req.req_out, now)
        inst = req.payload
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
            self._ready(wf, now + 1)
            self.wake()
        elif wf.state == ENDING and wf.loads == 0 and wf.stores == 0:
            self._finish(wf, now)
            self.wake()
