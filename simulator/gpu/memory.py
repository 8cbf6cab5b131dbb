"""The memory hierarchy below the compute units.

* ``L1VCache``: one per CU. Set-associative with LRU, write-around (stores go to the L2
  and never allocate), and MSHRs that merge reads of a line already being fetched.
* ``L2Bank``: ``l2.banks`` of them, the address interleaved every ``interleave_bytes``.
  Write-back and write-allocate: a dirty victim goes to a write buffer of
  ``write_buffer`` lines that drains into DRAM. A store is taken to overwrite its whole
  64 B line, so a store miss allocates without fetching. A store waits while the write
  buffer is full, and so does a fetched line whose victim is dirty: it stays in its
  MSHR (and the fills behind it wait too, in arrival order) until a write-back leaves.
* ``DRAMChannel``: one per L2 bank. It starts one line transfer at a time, each
  occupying the channel for ``64 / bytes_per_cycle`` cycles (the bandwidth limit), and
  answers ``latency`` cycles after the transfer starts.

Requests flow down through bounded ``Buffer``\\ s: a full buffer refuses the push and
the sender stalls (head of line) until a slot frees, so queues, MSHR limits and
bank/channel conflicts all produce real contention. Responses travel back as timed
events (``RESPONSE``) and are always accepted: the requester reserved room for them.

Written once, in Cython's pure Python mode: ``memory.pxd`` gives the static types with
which ``setup.py`` compiles this file (tag arrays then read as C arrays, requests as C
structs, tracer calls as C calls); ``simulator.build`` decides whether the compiled
module or this source runs. Compiled, the components subclass the Cython engine's and
call the Cython tracer; run as Python, the reference engine and tracer.
"""
from array import array
from collections import deque

import cython

if not cython.compiled:
    from ..engine.engine import Buffer, TickingComponent
    from ..tracing.api import NO_TASK, Tracer

RESPONSE = 1
"""Event kind: a response to a ``MemRequest`` delivered to its requester."""


class MemRequest:
    """One 64 B line request (``ReadReq``/``WriteReq``) and where its response goes."""

    if not cython.compiled:
        __slots__ = ("addr", "write", "requester", "payload", "req_out", "req_in")

    def __init__(self, addr, write, requester, payload, req_out):
        _fill(self, addr, write, requester, payload, req_out)


def _fill(req, addr, write, requester, payload, req_out):
    req.addr = addr
    req.write = write
    req.requester = requester
    req.payload = payload
    req.req_out = req_out
    req.req_in = NO_TASK
    return req


def new_request(addr, write, requester, payload, req_out):
    """A ``MemRequest``, made (once compiled) without parsing arguments: one is made per
    line per level, and that adds up."""
    return _fill(MemRequest.__new__(MemRequest), addr, write, requester, payload, req_out)


class TagArray:
    """Tags of a set-associative cache: LRU replacement and dirty bits.

    ``index`` is the line number within this cache (a bank strips its interleave bits).
    """

    def __init__(self, size_bytes, ways, line_bytes):
        self.ways = ways
        self.sets = size_bytes // (ways * line_bytes)
        n = self.sets * ways
        self.tags = array("q", [-1]) * n
        self.dirty = array("b", [0]) * n
        self.last_use = array("q", [0]) * n
        self.clock = 0

    def _find(self, index):
        base: cython.longlong = (index % self.sets) * self.ways
        slot: cython.longlong
        for slot in range(base, base + self.ways):
            if self.tags[slot] == index:
                return slot
        return -1

    def _victim(self, index):
        """The slot line ``index`` would replace: an empty one, else the least recently used."""
        base: cython.longlong = (index % self.sets) * self.ways
        victim: cython.longlong = base
        slot: cython.longlong
        for slot in range(base, base + self.ways):
            if self.tags[slot] < 0:
                return slot
            if self.last_use[slot] < self.last_use[victim]:
                victim = slot
        return victim

    def lookup(self, index):
        """Slot holding line ``index`` (touching its LRU age), or -1."""
        slot: cython.longlong = self._find(index)
        if slot >= 0:
            self.clock += 1
            self.last_use[slot] = self.clock
        return slot

    def evicts_dirty(self, index):
        """Whether placing line ``index`` now would evict a dirty line (changes nothing)."""
        return self._find(index) < 0 and self.dirty[self._victim(index)] != 0

    def fill(self, index, dirty):
        """Place line ``index``; returns the evicted dirty line's index, or -1."""
        slot: cython.longlong = self.lookup(index)
        if slot >= 0:
            self.dirty[slot] = self.dirty[slot] or dirty
            return -1
        victim: cython.longlong = self._victim(index)
        evicted: cython.longlong = self.tags[victim] if self.dirty[victim] else -1
        self.clock += 1
        self.tags[victim] = index
        self.dirty[victim] = dirty
        self.last_use[victim] = self.clock
        return evicted


class MSHRs:
    """Miss status holding registers: the lines a cache is fetching, each with the read
    requests waiting for it in arrival order.

    A few dozen at most, so a line is found by scanning an array of them: a dict would box
    every line number into a Python int to look it up.
    """

    def __init__(self, count):
        self.count = count
        self.used = 0
        self.lines = array("q", [-1]) * count  # the line each register holds, -1 if free
        self.waiting = [[] for _ in range(count)]

    def __len__(self):
        return self.used

    def find(self, line):
        """The register fetching ``line``, or -1."""
        slot: cython.Py_ssize_t
        for slot in range(self.count):
            if self.lines[slot] == line:
                return slot
        return -1

    def open(self, line, req):
        """Take a free register (there must be one) to fetch ``line`` for ``req``."""
        slot: cython.Py_ssize_t = self.find(-1)
        self.lines[slot] = line
        waiting: list = self.waiting[slot]
        waiting.append(req)
        self.used += 1
        return slot

    def join(self, line, req):
        """If a register is fetching ``line``, ``req`` waits for it too (True)."""
        slot: cython.Py_ssize_t = self.find(line)
        waiting: list
        if slot < 0:
            return False
        waiting = self.waiting[slot]
        waiting.append(req)
        return True

    def close(self, slot):
        """Free register ``slot``; returns the requests that waited for its line."""
        waiting: list = self.waiting[slot]
        self.waiting[slot] = []
        self.lines[slot] = -1
        self.used -= 1
        return waiting


class DRAMChannel(TickingComponent):
    """One memory channel: a latency and a bandwidth limit, served in arrival order."""

    def __init__(self, engine, name, cfg, tracer, keys, index):
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

    def tick(self, now):
        req: MemRequest
        done: cython.longlong
        if self.inbox.size == 0:
            return -1
        if self.busy_until > now:
            return self.busy_until
        req = self.inbox.pop()
        self.busy_until = now + self.transfer
        done = now + self.latency
        self.served += 1
        if self.tracer is not None:
            req.req_in = self.tracer.trace_req_receive(
                req.req_out, self.kind_write_in if req.write else self.kind_read_in,
                self.loc, now)
            self.tracer.trace_req_complete(req.req_in, done)
        self.engine.schedule(done, req.requester, RESPONSE, req)
        return self.busy_until if self.inbox.size else -1


class Cache(TickingComponent):
    """What the L1V and an L2 bank share: an input buffer served ``requests_per_cycle``
    at a time, a tag array, MSHRs, hit and miss counts,
    and the trace keys of their requests and outcomes."""

    def __init__(self, engine, name, c, size_bytes, tracer, keys, loc):
        super().__init__(engine, name)
        self.latency = c["latency"]
        self.requests_per_cycle = c["requests_per_cycle"]
        self.mshrs = c["mshrs"]
        self.line_bytes = c["line_bytes"]
        self.tags = TagArray(size_bytes, c["ways"], c["line_bytes"])
        self.inbox = Buffer(c["buffer"], name + ".in")
        self.inbox.consumer = self
        self.mshr = MSHRs(c["mshrs"])
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

    def _respond(self, req, time):
        if self.tracer is not None:
            self.tracer.trace_req_complete(req.req_in, time)
        self.engine.schedule(time, req.requester, RESPONSE, req)
        return 0


class L2Bank(Cache):
    """One L2 bank: write-back, write-allocate, MSHRs, a write buffer to its channel."""

    def __init__(self, engine, name, cfg, tracer, keys, index, dram):
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
        self.fills = deque()  # fetched line indices not yet placed (their victim waits)

    def index_of(self, addr):
        """Line number within this bank: the address with the bank-select bits removed."""
        return (addr // self.stride) * self.lines_per_block + (addr % self.interleave) // self.line_bytes

    def address_of(self, index):
        """Inverse of ``index_of`` for this bank's lines (used for write-backs)."""
        return ((index // self.lines_per_block) * self.stride + self.bank_offset
                + (index % self.lines_per_block) * self.line_bytes)

    def _receive(self, req, kind, now):
        if self.tracer is not None:
            req.req_in = self.tracer.trace_req_receive(req.req_out, kind, self.loc, now)
        return 0

    def _evict(self, index, parent, now):
        req_out: cython.longlong = NO_TASK
        if self.tracer is not None:
            req_out = self.tracer.trace_req_initiate(parent, self.kind_write_out, self.loc, now)
        self.writebacks.append(new_request(self.address_of(index), True, self, None, req_out))
        return 0

    def tick(self, now):
        tracer: Tracer = self.tracer
        drain: Buffer = self.dram.inbox
        inbox: Buffer = self.inbox
        req: MemRequest
        index: cython.longlong
        evicted: cython.longlong
        req_out: cython.longlong
        served: cython.longlong = 0
        while self.writebacks and drain.can_push():
            drain.push(self.writebacks.popleft())
        self._place_fills(now)
        while served < self.requests_per_cycle and inbox.size:
            req = inbox.peek()
            index = self.index_of(req.addr)
            if not req.write:
                if self.tags.lookup(index) >= 0:
                    inbox.pop()
                    self.hits += 1
                    self._receive(req, self.kind_read_in, now)
                    if tracer is not None:
                        tracer.tag_task(req.req_in, now, self.tag_read_hit)
                    self._respond(req, now + self.latency)
                elif self.mshr.join(index, req):
                    inbox.pop()
                    self._receive(req, self.kind_read_in, now)
                    if tracer is not None:
                        tracer.tag_task(req.req_in, now, self.tag_read_mshr_hit)
                elif self.mshr.used < self.mshrs and drain.can_push():
                    inbox.pop()
                    self.misses += 1
                    self._receive(req, self.kind_read_in, now)
                    req_out = NO_TASK
                    if tracer is not None:
                        tracer.tag_task(req.req_in, now, self.tag_read_miss)
                        req_out = tracer.trace_req_initiate(req.req_in, self.kind_read_out,
                                                            self.loc, now)
                    self.mshr.open(index, req)
                    drain.push(new_request(req.addr, False, self, index, req_out))
                else:
                    break  # no MSHR or no room downstream: stall until a response or a slot
            else:
                if len(self.writebacks) >= self.write_buffer:
                    break  # a store may evict a dirty line: wait for the write buffer
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
        if self.writebacks and drain.can_push():
            return now + 1
        if served == self.requests_per_cycle and inbox.size:
            return now + 1
        return -1  # idle, or stalled until a response or a DRAM slot wakes us

    def receive(self, kind, arg):
        req: MemRequest = arg
        now: cython.longlong = self.engine.now
        if self.tracer is not None:
            self.tracer.trace_req_finalize(req.req_out, now)
        if req.write:
            return  # a write-back reached DRAM
        self.fills.append(req.payload)
        self._place_fills(now)
        self.wake()

    def _place_fills(self, now):
        """Place fetched lines in arrival order while their dirty victims have room."""
        original: MemRequest
        first: MemRequest
        index: cython.longlong
        evicted: cython.longlong
        waiting: list
        while self.fills:
            index = self.fills[0]
            if len(self.writebacks) >= self.write_buffer and self.tags.evicts_dirty(index):
                return 0  # a write-back leaving for DRAM wakes the bank
            self.fills.popleft()
            waiting = self.mshr.close(self.mshr.find(index))
            evicted = self.tags.fill(index, False)
            if evicted >= 0:
                first = waiting[0]
                self._evict(evicted, first.req_in, now)
            for original in waiting:
                # The filled line is read out through the data array, as a hit is.
                self._respond(original, now + self.latency)
        return 0


class L1VCache(Cache):
    """A CU's vector L1: write-around, LRU, MSHRs, in-order service of its input buffer."""

    def __init__(self, engine, name, cfg, tracer, keys, index, banks):
        c = cfg["l1v"]
        super().__init__(engine, name, c, c["size_bytes"], tracer, keys, keys.loc_l1v[index])
        self.banks = banks
        self.interleave = cfg["l2"]["interleave_bytes"]
        for bank in banks:
            bank.inbox.producers.append(self)
        # What the request at the head of the input buffer waits for, when it waits: room
        # in this bank's buffer and, for a read, a free MSHR. Nothing else changes it (a
        # read miss stays a miss: only lines in the MSHRs are filled), so a tick finds it
        # still stuck without looking at it again. Every slot a bank frees wakes all 64
        # L1Vs, most of them stuck or idle: those ticks were a memory-bound kernel's most.
        self.stuck_on = None
        self.stuck_read = False

    def bank_of(self, addr):
        """The L2 bank serving byte address ``addr``."""
        return self.banks[(addr // self.interleave) % len(self.banks)]

    def _receive(self, req, kind, tag, now):
        if self.tracer is not None:
            req.req_in = self.tracer.trace_req_receive(req.req_out, kind, self.loc, now)
            self.tracer.tag_task(req.req_in, now, tag)
        return 0

    def _forward(self, req, write, payload, bank, now):
        req_out: cython.longlong = NO_TASK
        if self.tracer is not None:
            req_out = self.tracer.trace_req_initiate(
                req.req_in, self.kind_write_out if write else self.kind_read_out, self.loc, now)
        bank.inbox.push(new_request(req.addr, write, self, payload, req_out))
        return 0

    def _still_stuck(self):
        """Whether the head request still waits for what stopped it (see ``stuck_on``)."""
        bank: L2Bank = self.stuck_on
        if bank is None:
            return False
        if not bank.inbox.can_push() or (self.stuck_read and self.mshr.used >= self.mshrs):
            return True
        self.stuck_on = None
        return False

    def tick(self, now):
        inbox: Buffer = self.inbox
        req: MemRequest
        bank: L2Bank
        index: cython.longlong
        served: cython.longlong = 0
        if self._still_stuck():
            return -1
        while served < self.requests_per_cycle and inbox.size:
            req = inbox.peek()
            index = req.addr // self.line_bytes
            bank = self.bank_of(req.addr)
            if not req.write:
                if self.tags.lookup(index) >= 0:
                    inbox.pop()
                    self.hits += 1
                    self._receive(req, self.kind_read_in, self.tag_read_hit, now)
                    self._respond(req, now + self.latency)
                elif self.mshr.join(index, req):
                    inbox.pop()
                    self._receive(req, self.kind_read_in, self.tag_read_mshr_hit, now)
                elif self.mshr.used < self.mshrs and bank.inbox.can_push():
                    inbox.pop()
                    self.misses += 1
                    self._receive(req, self.kind_read_in, self.tag_read_miss, now)
                    self.mshr.open(index, req)
                    self._forward(req, False, index, bank, now)
                else:
                    # no MSHR or the bank is full: stall until a response or a slot
                    self.stuck_on, self.stuck_read = bank, True
                    break
            else:
                if not bank.inbox.can_push():
                    self.stuck_on, self.stuck_read = bank, False
                    break
                inbox.pop()
                # write-around: a present line is updated in place, a missing one is not
                # allocated; either way the store continues to the L2
                if self.tags.lookup(index) >= 0:
                    self.hits += 1
                    self._receive(req, self.kind_write_in, self.tag_write_hit, now)
                else:
                    self.misses += 1
                    self._receive(req, self.kind_write_in, self.tag_write_miss, now)
                self._forward(req, True, req, bank, now)
            served += 1
        if served == self.requests_per_cycle and inbox.size:
            return now + 1
        return -1

    def receive(self, kind, arg):
        down: MemRequest = arg
        original: MemRequest
        now: cython.longlong = self.engine.now
        index: cython.longlong
        if self.tracer is not None:
            self.tracer.trace_req_finalize(down.req_out, now)
        if down.write:
            original = down.payload
            self._respond(original, now + 1)
        else:
            index = down.payload
            waiting = self.mshr.close(self.mshr.find(index))
            self.tags.fill(index, False)
            for original in waiting:
                # The filled line is read out through the data array, as a hit is.
                self._respond(original, now + self.latency)
        self.wake()
