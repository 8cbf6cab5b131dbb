# cython: language_level=3
"""The memory hierarchy in Cython: the same API and behaviour as ``memory.py``.

Tag arrays are C arrays; requests are ``cdef class`` objects whose fields are read
without the interpreter; tracer calls go straight to the Cython ``Tracer``. The model
itself is documented in ``memory.py``.
"""
from collections import deque

from cpython.mem cimport PyMem_Free, PyMem_Malloc
from libc.stdint cimport int64_t

from simulator.engine._engine cimport Buffer, Engine, Handler, TickingComponent
from simulator.tracing._api cimport Tracer

RESPONSE = 1
cdef enum:
    KIND_RESPONSE = 1
    NO_TASK = -1


cdef class MemRequest:
    """One 64 B line request (``ReadReq``/``WriteReq``) and where its response goes."""

    def __init__(self, int64_t addr, bint write, Handler requester, object payload,
                 int64_t req_out):
        _fill(self, addr, write, requester, payload, req_out)


cdef inline MemRequest _fill(MemRequest req, int64_t addr, bint write, Handler requester,
                             object payload, int64_t req_out):
    req.addr = addr
    req.write = write
    req.requester = requester
    req.payload = payload
    req.req_out = req_out
    req.req_in = NO_TASK
    return req


cdef MemRequest new_request(int64_t addr, bint write, Handler requester, object payload,
                            int64_t req_out):
    """A ``MemRequest`` made without argument parsing (one per line per level: it adds up)."""
    return _fill(MemRequest.__new__(MemRequest), addr, write, requester, payload, req_out)


cdef class TagArray:
    """Tags of a set-associative cache: LRU replacement and dirty bits."""

    def __cinit__(self, int64_t size_bytes, int64_t ways, int64_t line_bytes):
        cdef int64_t i, n
        self.ways = ways
        self.sets = size_bytes // (ways * line_bytes)
        self.clock = 0
        n = self.sets * ways
        self.tags = <int64_t*>PyMem_Malloc(n * sizeof(int64_t))
        self.dirty = <char*>PyMem_Malloc(n * sizeof(char))
        self.last_use = <int64_t*>PyMem_Malloc(n * sizeof(int64_t))
        if self.tags == NULL or self.dirty == NULL or self.last_use == NULL:
            raise MemoryError()
        for i in range(n):
            self.tags[i] = -1
            self.dirty[i] = 0
            self.last_use[i] = 0

    def __dealloc__(self):
        PyMem_Free(self.tags)
        PyMem_Free(self.dirty)
        PyMem_Free(self.last_use)

    cdef int64_t _find(self, int64_t index):
        cdef int64_t base = (index % self.sets) * self.ways
        cdef int64_t slot
        for slot in range(base, base + self.ways):
            if self.tags[slot] == index:
                return slot
        return -1

    cdef int64_t _victim(self, int64_t index):
        cdef int64_t base = (index % self.sets) * self.ways
        cdef int64_t slot, victim = base
        for slot in range(base, base + self.ways):
            if self.tags[slot] < 0:
                return slot
            if self.last_use[slot] < self.last_use[victim]:
                victim = slot
        return victim

    cdef int64_t lookup(self, int64_t index):
        cdef int64_t slot = self._find(index)
        if slot >= 0:
            self.clock += 1
            self.last_use[slot] = self.clock
        return slot

    cpdef bint evicts_dirty(self, int64_t index):
        return self._find(index) < 0 and self.dirty[self._victim(index)]

    cdef int64_t fill(self, int64_t index, bint dirty):
        cdef int64_t slot = self.lookup(index)
        cdef int64_t victim, evicted
        if slot >= 0:
            self.dirty[slot] = self.dirty[slot] or dirty
            return -1
        victim = self._victim(index)
        evicted = self.tags[victim] if self.dirty[victim] else -1
        self.clock += 1
        self.tags[victim] = index
        self.dirty[victim] = dirty
        self.last_use[victim] = self.clock
        return evicted


cdef class DRAMChannel(TickingComponent):
    """One memory channel: a latency and a bandwidth limit, served in arrival order."""

    def __init__(self, Engine engine, str name, dict cfg, Tracer tracer, keys, int index):
        super().__init__(engine, name)
        d = cfg["dram"]
        self.latency = d["latency"]
        self.transfer = -(-cfg["l2"]["line_bytes"] // d["bytes_per_cycle"])
        self.inbox = Buffer(d["buffer"], name + ".in")
        self.inbox.consumer = self
        self.busy_until = 0
        self.served = 0
        self.tracer = tracer if keys.mem else None
        self.loc = keys.loc_dram[index]
        self.kind_read_in = keys.kind_read_in
        self.kind_write_in = keys.kind_write_in

    cpdef int64_t tick(self, int64_t now) except? -2:
        cdef MemRequest req
        cdef int64_t done
        if len(self.inbox.items) == 0:
            return -1
        if self.busy_until > now:
            return self.busy_until
        req = <MemRequest>self.inbox.pop()
        self.busy_until = now + self.transfer
        done = now + self.latency
        self.served += 1
        if self.tracer is not None:
            req.req_in = self.tracer.trace_req_receive(
                req.req_out, self.kind_write_in if req.write else self.kind_read_in,
                self.loc, now)
            self.tracer.trace_req_complete(req.req_in, done)
        self.engine.schedule(done, req.requester, KIND_RESPONSE, req)
        return self.busy_until if len(self.inbox.items) else -1


cdef class Cache(TickingComponent):
    """What the L1V and an L2 bank share (see ``memory.Cache``)."""

    def __init__(self, Engine engine, str name, dict c, int64_t size_bytes, Tracer tracer,
                 keys, int loc):
        super().__init__(engine, name)
        self.latency = c["latency"]
        self.requests_per_cycle = c["requests_per_cycle"]
        self.mshrs = c["mshrs"]
        self.line_bytes = c["line_bytes"]
        self.tags = TagArray(size_bytes, c["ways"], c["line_bytes"])
        self.inbox = Buffer(c["buffer"], name + ".in")
        self.inbox.consumer = self
        self.mshr = {}
        self.hits = 0
        self.misses = 0
        self.tracer = tracer if keys.mem else None
        self.loc = loc
        self.kind_read_in = keys.kind_read_in
        self.kind_write_in = keys.kind_write_in
        self.kind_read_out = keys.kind_read_out
        self.kind_write_out = keys.kind_write_out
        self.tag_read_hit = keys.tag_read_hit
        self.tag_read_miss = keys.tag_read_miss
        self.tag_read_mshr_hit = keys.tag_read_mshr_hit
        self.tag_write_hit = keys.tag_write_hit
        self.tag_write_miss = keys.tag_write_miss

    cdef int _respond(self, MemRequest req, int64_t time) except -1:
        if self.tracer is not None:
            self.tracer.trace_req_complete(req.req_in, time)
        self.engine.schedule(time, req.requester, KIND_RESPONSE, req)
        return 0


cdef class L2Bank(Cache):
    """One L2 bank: write-back, write-allocate, MSHRs, a write buffer to its channel."""

    def __init__(self, Engine engine, str name, dict cfg, Tracer tracer, keys, int index,
                 DRAMChannel dram):
        c = cfg["l2"]
        super().__init__(engine, name, c, c["bank_bytes"], tracer, keys, keys.loc_l2[index])
        self.write_buffer = c["write_buffer"]
        self.lines_per_block = c["interleave_bytes"] // c["line_bytes"]
        self.stride = c["interleave_bytes"] * c["banks"]
        self.interleave = c["interleave_bytes"]
        self.bank_offset = index * c["interleave_bytes"]
        self.dram = dram
        dram.inbox.producers.append(self)
        self.writebacks = deque()
        self.fills = deque()

    cdef int64_t index_of(self, int64_t addr):
        return (addr // self.stride) * self.lines_per_block + (addr % self.interleave) // self.line_bytes

    cdef int64_t address_of(self, int64_t index):
        return ((index // self.lines_per_block) * self.stride + self.bank_offset
                + (index % self.lines_per_block) * self.line_bytes)

    cdef int _receive(self, MemRequest req, int kind, int64_t now) except -1:
        if self.tracer is not None:
            req.req_in = self.tracer.trace_req_receive(req.req_out, kind, self.loc, now)
        return 0

    cdef int _evict(self, int64_t index, int64_t parent, int64_t now) except -1:
        cdef int64_t req_out = NO_TASK
        if self.tracer is not None:
            req_out = self.tracer.trace_req_initiate(parent, self.kind_write_out, self.loc, now)
        self.writebacks.append(new_request(self.address_of(index), True, self, None, req_out))
        return 0

    cpdef int64_t tick(self, int64_t now) except? -2:
        cdef Tracer tracer = self.tracer
        cdef Buffer drain = self.dram.inbox
        cdef Buffer inbox = self.inbox
        cdef MemRequest req
        cdef int64_t index, evicted, req_out
        cdef int64_t served = 0
        while len(self.writebacks) and drain.can_push():
            drain.push(self.writebacks.popleft())
        self._place_fills(now)
        while served < self.requests_per_cycle and len(inbox.items):
            req = <MemRequest>inbox.peek()
            index = self.index_of(req.addr)
            if not req.write:
                if self.tags.lookup(index) >= 0:
                    inbox.pop()
                    self.hits += 1
                    self._receive(req, self.kind_read_in, now)
                    if tracer is not None:
                        tracer.tag_task(req.req_in, now, self.tag_read_hit)
                    self._respond(req, now + self.latency)
                elif index in self.mshr:
                    inbox.pop()
                    self._receive(req, self.kind_read_in, now)
                    if tracer is not None:
                        tracer.tag_task(req.req_in, now, self.tag_read_mshr_hit)
                    (<list>self.mshr[index]).append(req)
                elif len(self.mshr) < self.mshrs and drain.can_push():
                    inbox.pop()
                    self.misses += 1
                    self._receive(req, self.kind_read_in, now)
                    req_out = NO_TASK
                    if tracer is not None:
                        tracer.tag_task(req.req_in, now, self.tag_read_miss)
                        req_out = tracer.trace_req_initiate(req.req_in, self.kind_read_out,
                                                            self.loc, now)
                    self.mshr[index] = [req]
                    drain.push(new_request(req.addr, False, self, index, req_out))
                else:
                    break
            else:
                if len(self.writebacks) >= self.write_buffer:
                    break
                inbox.pop()
                self._receive(req, self.kind_write_in, now)
                if self.tags.lookup(index) >= 0:
                    self.hits += 1
                    if tracer is not None:
                        tracer.tag_task(req.req_in, now, self.tag_write_hit)
                else:
                    self.misses += 1
                    if tracer is not None:
                        tracer.tag_task(req.req_in, now, self.tag_write_miss)
                evicted = self.tags.fill(index, True)
                if evicted >= 0:
                    self._evict(evicted, req.req_in, now)
                self._respond(req, now + self.latency)
            served += 1
        if len(self.writebacks) and drain.can_push():
            return now + 1
        if served == self.requests_per_cycle and len(inbox.items):
            return now + 1
        return -1

    cpdef receive(self, int kind, object arg):
        cdef MemRequest req = <MemRequest>arg
        cdef int64_t now = self.engine.now
        if self.tracer is not None:
            self.tracer.trace_req_finalize(req.req_out, now)
        if req.write:
            return
        self.fills.append(req.payload)
        self._place_fills(now)
        self.wake()

    cdef int _place_fills(self, int64_t now) except -1:
        cdef MemRequest original
        cdef int64_t index, evicted
        cdef list waiting
        while len(self.fills):
            index = self.fills[0]
            if len(self.writebacks) >= self.write_buffer and self.tags.evicts_dirty(index):
                return 0
            self.fills.popleft()
            waiting = self.mshr.pop(index)
            evicted = self.tags.fill(index, False)
            if evicted >= 0:
                self._evict(evicted, (<MemRequest>waiting[0]).req_in, now)
            for original in waiting:
                # The filled line is read out through the data array, as a hit is.
                self._respond(original, now + self.latency)
        return 0


cdef class L1VCache(Cache):
    """A CU's vector L1: write-around, LRU, MSHRs, in-order service of its input buffer."""

    def __init__(self, Engine engine, str name, dict cfg, Tracer tracer, keys, int index,
                 list banks):
        cdef L2Bank bank
        c = cfg["l1v"]
        super().__init__(engine, name, c, c["size_bytes"], tracer, keys, keys.loc_l1v[index])
        self.banks = banks
        self.interleave = cfg["l2"]["interleave_bytes"]
        for bank in banks:
            bank.inbox.producers.append(self)

    cdef L2Bank bank_of(self, int64_t addr):
        return <L2Bank>self.banks[(addr // self.interleave) % len(self.banks)]

    cdef int _receive(self, MemRequest req, int kind, int tag, int64_t now) except -1:
        if self.tracer is not None:
            req.req_in = self.tracer.trace_req_receive(req.req_out, kind, self.loc, now)
            self.tracer.tag_task(req.req_in, now, tag)
        return 0

    cdef int _forward(self, MemRequest req, bint write, object payload, L2Bank bank,
                      int64_t now) except -1:
        cdef int64_t req_out = NO_TASK
        if self.tracer is not None:
            req_out = self.tracer.trace_req_initiate(
                req.req_in, self.kind_write_out if write else self.kind_read_out, self.loc, now)
        bank.inbox.push(new_request(req.addr, write, self, payload, req_out))
        return 0

    cpdef int64_t tick(self, int64_t now) except? -2:
        cdef Buffer inbox = self.inbox
        cdef MemRequest req
        cdef L2Bank bank
        cdef int64_t index
        cdef int64_t served = 0
        while served < self.requests_per_cycle and len(inbox.items):
            req = <MemRequest>inbox.peek()
            index = req.addr // self.line_bytes
            bank = self.bank_of(req.addr)
            if not req.write:
                if self.tags.lookup(index) >= 0:
                    inbox.pop()
                    self.hits += 1
                    self._receive(req, self.kind_read_in, self.tag_read_hit, now)
                    self._respond(req, now + self.latency)
                elif index in self.mshr:
                    inbox.pop()
                    self._receive(req, self.kind_read_in, self.tag_read_mshr_hit, now)
                    (<list>self.mshr[index]).append(req)
                elif len(self.mshr) < self.mshrs and bank.inbox.can_push():
                    inbox.pop()
                    self.misses += 1
                    self._receive(req, self.kind_read_in, self.tag_read_miss, now)
                    self.mshr[index] = [req]
                    self._forward(req, False, index, bank, now)
                else:
                    break
            else:
                if not bank.inbox.can_push():
                    break
                inbox.pop()
                if self.tags.lookup(index) >= 0:
                    self.hits += 1
                    self._receive(req, self.kind_write_in, self.tag_write_hit, now)
                else:
                    self.misses += 1
                    self._receive(req, self.kind_write_in, self.tag_write_miss, now)
                self._forward(req, True, req, bank, now)
            served += 1
        if served == self.requests_per_cycle and len(inbox.items):
            return now + 1
        return -1

    cpdef receive(self, int kind, object arg):
        cdef MemRequest down = <MemRequest>arg
        cdef MemRequest original
        cdef int64_t now = self.engine.now
        cdef int64_t index
        if self.tracer is not None:
            self.tracer.trace_req_finalize(down.req_out, now)
        if down.write:
            self._respond(<MemRequest>down.payload, now + 1)
        else:
            index = down.payload
            waiting = self.mshr.pop(index)
            self.tags.fill(index, False)
            for original in waiting:
                # The filled line is read out through the data array, as a hit is.
                self._respond(original, now + self.latency)
        self.wake()
