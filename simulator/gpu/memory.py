"""The memory hierarchy below the compute units.

* ``L1VCache``: one per CU. Set-associative with LRU, write-around (stores go to the L2
  and never allocate), and MSHRs that merge reads of a line already being fetched.
* ``CacheBank``: a write-back, write-allocate cache bank, used at two levels:
  * an L2 bank: ``l2.banks`` of them per XCD (``gpu.xcds``; a GPU before CDNA 3 is one),
    each XCD's CUs using only its own; the address picks the bank (``AddressMap``);
  * a slice of the memory-side cache (AMD's Infinity Cache, a MALL), when
    ``mall.slice_bytes`` is not 0: one in front of each memory channel, shared by
    every L2.
  A dirty victim goes to a write buffer of ``write_buffer`` lines that drains into the
  level below. A store is taken to overwrite its whole 64 B line, so a store miss
  allocates without fetching. A store waits while the write buffer is full, and so does
  a fetched line whose victim is dirty: it stays in its MSHR (and the fills behind it
  wait too, in arrival order) until a write-back leaves.
* ``DRAMChannel``: ``dram.channels`` of them (0: one per L2 bank), the address picking
  the channel. It starts one line transfer at a time, each occupying the channel for
  ``64 / bytes_per_cycle`` cycles, a fraction kept exactly (the bandwidth limit), and
  answers ``latency`` cycles after the transfer starts.

``AddressMap`` decides which bank, slice or channel serves an address: blocks of
``interleave_bytes`` in turn (MGPUSim's linear interleave), or hashed when
``gpu.address_hash`` is 1, as AMD describes its L2 channels ("a hashing mechanism that
attempts to evenly distribute requests", ROCm Compute Profiler); caches then hash their
set index too (``TagArray``). Interleaved in turn, rows of a matrix a power of two apart
fall in one channel and a few sets; hashed, they spread.

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
import math
from array import array
from collections import deque

import cython

from .config import LINE_BYTES, address_hash, line_transfer_cycles

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


def fold(value, bits):
    """The XOR of ``value``'s consecutive ``bits``-bit fields (0 when ``bits`` is 0)."""
    out: cython.longlong = 0
    mask: cython.longlong
    if bits == 0:
        return 0
    mask = (1 << bits) - 1
    while value:
        out ^= value & mask
        value >>= bits
    return out


def mix(value, bits):
    """Knuth's multiplicative hash of ``value`` to ``bits`` bits (at most 32)."""
    product: cython.ulonglong = value
    product = (product * 2654435761) & 0xFFFFFFFF
    return product >> (32 - bits)


class AddressMap:
    """Which of ``count`` units (banks, slices, channels) serves a byte address, and
    which of that unit's lines it is.

    Blocks of ``interleave`` bytes go to the units in turn, or, ``hashed`` (``count`` a
    power of two), to the unit the XOR-fold of the block number selects. Either way a
    block's upper bits and its unit determine it, so a unit's line ``index`` is the
    address without the unit-select bits, and ``address`` inverts it.
    """

    def __init__(self, interleave, count, hashed, line_bytes):
        self.interleave = interleave
        self.count = count
        self.hashed = hashed
        self.bits = count.bit_length() - 1
        self.line_bytes = line_bytes
        self.lines_per_block = interleave // line_bytes

    def unit(self, addr):
        """The unit serving byte address ``addr``."""
        block: cython.longlong = addr // self.interleave
        if self.hashed:
            return fold(block, self.bits)
        return block % self.count

    def index(self, addr):
        """The line number of ``addr`` within its unit."""
        return ((addr // self.interleave // self.count) * self.lines_per_block
                + (addr % self.interleave) // self.line_bytes)

    def address(self, unit, index):
        """The byte address of line ``index`` of ``unit`` (inverse of ``unit``/``index``)."""
        upper: cython.longlong = index // self.lines_per_block
        low: cython.longlong = unit
        if self.hashed:
            low = unit ^ fold(upper, self.bits)
        return ((upper * self.count + low) * self.interleave
                + (index % self.lines_per_block) * self.line_bytes)


def units_reached(own, unit, below):
    """The units of map ``below`` that addresses of ``own``'s unit ``unit`` go to: those a
    bank sends to, and so waits on. Hashed, any; interleaved in turn, the pattern repeats
    every both strides' least common multiple, which is enumerated."""
    if own.hashed or below.hashed:
        return range(below.count)
    period = math.lcm(own.interleave * own.count, below.interleave * below.count)
    return sorted({below.unit(addr) for addr in range(0, period, own.line_bytes)
                   if own.unit(addr) == unit})


class TagArray:
    """Tags of a set-associative cache: LRU replacement and dirty bits.

    ``index`` is the line number within this cache (a bank strips its unit-select bits);
    its set is ``index`` modulo the sets, or, ``hashed``, that XORed with a multiplicative
    hash of the bits above: each aligned run of lines still fills every set once, and
    runs a power of two apart no longer share sets. (An XOR-fold would: its bits are
    sums of the very bits the channel hash sums, so a bank's lines would use a
    sixteenth of its sets.)
    """

    def __init__(self, size_bytes, ways, line_bytes, hashed=False):
        self.ways = ways
        self.sets = size_bytes // (ways * line_bytes)
        self.set_bits = self.sets.bit_length() - 1 if hashed else 0
        n = self.sets * ways
        self.tags = array("q", [-1]) * n
        self.dirty = array("b", [0]) * n
        self.last_use = array("q", [0]) * n
        self.clock = 0

    def set_of(self, index):
        """The set line ``index`` belongs to."""
        if self.set_bits:
            return (index & (self.sets - 1)) ^ mix(index >> self.set_bits, self.set_bits)
        return index % self.sets

    def _find(self, index):
        base: cython.longlong = self.set_of(index) * self.ways
        slot: cython.longlong
        for slot in range(base, base + self.ways):
            if self.tags[slot] == index:
                return slot
        return -1

    def _victim(self, index):
        """The slot line ``index`` would replace: an empty one, else the least recently used."""
        base: cython.longlong = self.set_of(index) * self.ways
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

    A register is found by its line through an open-addressing table (linear probing,
    twice as many places as registers): a GPU sized for today's bandwidth holds hundreds
    per bank, too many to scan, and a dict would box every line number into a Python int.
    """

    def __init__(self, count):
        self.count = count
        self.used = 0
        self.lines = array("q", [-1]) * count  # the line each register holds, -1 if free
        self.waiting = [[] for _ in range(count)]
        self.free = array("q", range(count - 1, -1, -1))  # free registers, lowest on top
        places = 2
        while places < 2 * count:
            places *= 2
        self.mask = places - 1
        self.table = array("q", [-1]) * places  # register at each place, -1 if empty

    def __len__(self):
        return self.used

    def _home(self, line):
        """The place the search for ``line`` starts at."""
        return (line ^ (line >> 7) ^ (line >> 17)) & self.mask

    def _place_of(self, line):
        """The place holding ``line``'s register, or the empty place ending its search."""
        place: cython.longlong = self._home(line)
        slot: cython.longlong = self.table[place]
        while slot >= 0 and self.lines[slot] != line:
            place = (place + 1) & self.mask
            slot = self.table[place]
        return place

    def find(self, line):
        """The register fetching ``line``, or -1."""
        return self.table[self._place_of(line)]

    def open(self, line, req):
        """Take a free register (there must be one) to fetch ``line`` for ``req``."""
        slot: cython.Py_ssize_t = self.free[self.count - 1 - self.used]
        self.table[self._place_of(line)] = slot
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
        hole: cython.longlong = self._place_of(self.lines[slot])
        place: cython.longlong = hole
        home: cython.longlong
        moved: cython.longlong
        # Backward-shift deletion: a register further along the probe run moves into the
        # hole unless its search starts after the hole (cyclically), so no search is cut.
        while True:
            place = (place + 1) & self.mask
            moved = self.table[place]
            if moved < 0:
                break
            home = self._home(self.lines[moved])
            if (place - home) & self.mask >= (place - hole) & self.mask:
                self.table[hole] = moved
                hole = place
        self.table[hole] = -1
        self.waiting[slot] = []
        self.lines[slot] = -1
        self.used -= 1
        self.free[self.count - 1 - self.used] = slot
        return waiting


class DRAMChannel(TickingComponent):
    """One memory channel: a latency and a bandwidth limit, served in arrival order.

    A line occupies the channel ``transfer_num / transfer_den`` cycles: ``busy`` counts
    in 1/``transfer_den`` of a cycle, so a bandwidth that is no whole number of bytes
    per cycle is reached exactly. A transfer starts at a cycle boundary, unless the
    channel freed during the cycle before: then it starts where the previous one ended,
    as it would have with the request already waiting.
    """

    def __init__(self, engine, name, cfg, tracer, keys, index):
        super().__init__(engine, name)
        d = cfg["dram"]
        self.latency = d["latency"]
        transfer = line_transfer_cycles(cfg)
        self.transfer_num = transfer.numerator
        self.transfer_den = transfer.denominator
        self.inbox = Buffer(d["buffer"], name + ".in")
        self.inbox.consumer = self
        self.busy = 0
        self.served = 0
        self.tracer = tracer if keys.mem else None
        self.loc = keys.loc_dram[index]
        self.kind_read_in = keys.kind_read_in
        self.kind_write_in = keys.kind_write_in

    def _free_at(self):
        """The first cycle at which the channel is free."""
        return -(-self.busy // self.transfer_den)

    def tick(self, now):
        req: MemRequest
        done: cython.longlong
        free_at: cython.longlong = self._free_at()
        if self.inbox.size == 0:
            return -1
        if free_at > now:
            return free_at
        req = self.inbox.pop()
        if self.busy <= (now - 1) * self.transfer_den:
            self.busy = now * self.transfer_den  # idle for a whole cycle: start now
        self.busy += self.transfer_num
        done = now + self.latency
        self.served += 1
        if self.tracer is not None:
            req.req_in = self.tracer.trace_req_receive(
                req.req_out, self.kind_write_in if req.write else self.kind_read_in,
                self.loc, now)
            self.tracer.trace_req_complete(req.req_in, done)
        self.engine.schedule(done, req.requester, RESPONSE, req)
        return self._free_at() if self.inbox.size else -1


class Cache(TickingComponent):
    """What the L1V and an L2 bank share: an input buffer served ``requests_per_cycle``
    at a time, a tag array, MSHRs, hit and miss counts,
    and the trace keys of their requests and outcomes."""

    def __init__(self, engine, name, c, size_bytes, hashed, tracer, keys, loc):
        super().__init__(engine, name)
        self.latency = c["latency"]
        self.requests_per_cycle = c["requests_per_cycle"]
        self.mshrs = c["mshrs"]
        self.line_bytes = LINE_BYTES
        self.tags = TagArray(size_bytes, c["ways"], LINE_BYTES, hashed)
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


class CacheBank(Cache):
    """A write-back bank (an L2 bank or a memory-side cache slice): MSHRs, and a write
    buffer to the level below, whose unit for an address ``below`` picks.

    ``own`` maps addresses to this level's units, this bank being unit ``unit``: it
    gives the bank's line numbers, and back the address of a line it writes back.
    """

    def __init__(self, engine, name, c, size_bytes, hashed, tracer, keys, loc, own, unit,
                 below, lower):
        super().__init__(engine, name, c, size_bytes, hashed, tracer, keys, loc)
        self.write_buffer = c["write_buffer"]
        self.own = own
        self.unit = unit
        self.below = below
        self.drains = [component.inbox for component in lower]
        for reached in units_reached(own, unit, below):
            drain = self.drains[reached]
            drain.producers.append(self)
        self.writebacks = deque()
        self.fills = deque()  # fetched line indices not yet placed (their victim waits)

    def drain_for(self, addr):
        """The input buffer of the unit below that serves ``addr``."""
        return self.drains[self.below.unit(addr)]

    def _receive(self, req, kind, now):
        if self.tracer is not None:
            req.req_in = self.tracer.trace_req_receive(req.req_out, kind, self.loc, now)
        return 0

    def _evict(self, index, parent, now):
        req_out: cython.longlong = NO_TASK
        if self.tracer is not None:
            req_out = self.tracer.trace_req_initiate(parent, self.kind_write_out, self.loc, now)
        self.writebacks.append(new_request(self.own.address(self.unit, index), True, self,
                                           None, req_out))
        return 0

    def _write_back(self):
        """Send write-backs below while their units have room; whether one is left."""
        req: MemRequest
        drain: Buffer
        while self.writebacks:
            req = self.writebacks[0]
            drain = self.drain_for(req.addr)
            if not drain.can_push():
                return True
            drain.push(self.writebacks.popleft())
        return False

    def tick(self, now):
        tracer: Tracer = self.tracer
        drain: Buffer
        inbox: Buffer = self.inbox
        req: MemRequest
        index: cython.longlong
        evicted: cython.longlong
        req_out: cython.longlong
        served: cython.longlong = 0
        self._write_back()
        self._place_fills(now)
        while served < self.requests_per_cycle and inbox.size:
            req = inbox.peek()
            index = self.own.index(req.addr)
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
                elif self.mshr.used < self.mshrs and self.drain_for(req.addr).can_push():
                    inbox.pop()
                    self.misses += 1
                    self._receive(req, self.kind_read_in, now)
                    req_out = NO_TASK
                    if tracer is not None:
                        tracer.tag_task(req.req_in, now, self.tag_read_miss)
                        req_out = tracer.trace_req_initiate(req.req_in, self.kind_read_out,
                                                            self.loc, now)
                    self.mshr.open(index, req)
                    drain = self.drain_for(req.addr)
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
        if self.writebacks and self.drain_for(self.writebacks[0].addr).can_push():
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
            return  # a write-back reached the level below
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
                return 0  # a write-back leaving for the level below wakes the bank
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

    def __init__(self, engine, name, cfg, tracer, keys, index, banks, bank_map):
        c = cfg["l1v"]
        super().__init__(engine, name, c, c["size_bytes"], address_hash(cfg), tracer, keys,
                         keys.loc_l1v[index])
        self.banks = banks  # the L2 banks of this CU's XCD
        self.bank_map = bank_map
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
        return self.banks[self.bank_map.unit(addr)]

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
        bank: CacheBank = self.stuck_on
        if bank is None:
            return False
        if not bank.inbox.can_push() or (self.stuck_read and self.mshr.used >= self.mshrs):
            return True
        self.stuck_on = None
        return False

    def tick(self, now):
        inbox: Buffer = self.inbox
        req: MemRequest
        bank: CacheBank
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
