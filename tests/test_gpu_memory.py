"""The memory hierarchy: hit/miss against a reference model, MSHRs, bandwidth, back-pressure."""
import random
from collections import OrderedDict, deque

from test_gpu_units import TINY, inst, launch, run, wavefront

from simulator.build import module
from simulator.gpu import default_config
from simulator.gpu.config import apply_overrides
from simulator.stream import Unit

SMALL_CACHES = ["l1v.size_bytes=512", "l1v.ways=4", "l2.bank_bytes=1024", "l2.ways=4"]


class ReferenceCache:
    """The textbook model: sets of LRU-ordered lines."""

    def __init__(self, sets, ways, allocate_on_write):
        self.sets = [OrderedDict() for _ in range(sets)]
        self.ways = ways
        self.allocate_on_write = allocate_on_write

    def access(self, index, write):
        lines = self.sets[index % len(self.sets)]
        kind = "write" if write else "read"
        if index in lines:
            lines.move_to_end(index)
            return f"{kind}-hit"
        if not write or self.allocate_on_write:
            if len(lines) == self.ways:
                lines.popitem(last=False)
            lines[index] = True
        return f"{kind}-miss"


def tag_sequence(trace, where):
    """Cache outcomes at locations containing ``where``, in the order they happened."""
    rows = [(time, task, trace.tag_names[tag]) for task, time, tag in trace.tags
            if where in trace.locations[trace.tasks[task][3]]]
    return [name for _, _, name in sorted(rows)]


def test_hit_and_miss_match_a_reference_model(build):
    rng = random.Random(3)
    accesses = [(rng.randrange(48) * 64, rng.random() < 0.3) for _ in range(300)]
    records = []
    for addr, write in accesses:
        records.append(inst(Unit.VMEM, lines=[addr], write=int(write)))
        records.append(inst(Unit.WAITCNT))  # serialise: each access sees the previous fill
    _, trace, _ = run([launch([[wavefront(*records)]])], SMALL_CACHES, implementation=build)

    l1 = ReferenceCache(sets=2, ways=4, allocate_on_write=False)
    banks = [ReferenceCache(sets=4, ways=4, allocate_on_write=True) for _ in range(2)]
    expect_l1, expect_l2 = [], [[], []]
    for addr, write in accesses:
        outcome = l1.access(addr // 64, write)
        expect_l1.append(outcome)
        if outcome != "read-hit":  # misses and every store reach the L2
            bank = (addr // 128) % 2
            index = (addr // 256) * 2 + (addr % 128) // 64
            expect_l2[bank].append(banks[bank].access(index, write))
    assert tag_sequence(trace, "L1V") == expect_l1
    for bank in (0, 1):
        assert tag_sequence(trace, f"L2[{bank}]") == expect_l2[bank]
    assert set(expect_l1) == {"read-hit", "read-miss", "write-hit", "write-miss"}
    assert {"read-hit", "read-miss", "write-hit"} <= set(expect_l2[0] + expect_l2[1])


def test_mshr_merges_reads_of_a_line_in_flight(build):
    same = [wavefront(inst(Unit.VMEM, lines=[4096]), inst(Unit.WAITCNT)) for _ in range(2)]
    gpu, trace, _ = run([launch([same])], implementation=build)
    assert sorted(tag_sequence(trace, "L1V")) == ["read-miss", "read-mshr-hit"]
    assert tag_sequence(trace, "L2") == ["read-miss"]
    assert len(trace.rows("req_in", "ReadReq", "DRAM")) == 1
    assert gpu.stats()["dram_requests"] == 1


def test_dram_channel_bandwidth_serialises_transfers(build):
    lines = [i * 256 for i in range(24)]  # 128 B interleave over 2 banks: all on bank 0
    stream = wavefront(inst(Unit.VMEM, lines=lines), inst(Unit.WAITCNT))
    _, trace, _ = run([launch([[stream]])], ["l1v.mshrs=64", "l1v.requests_per_cycle=8"],
                      implementation=build)
    dram = trace.rows("req_in", "ReadReq", "DRAM")
    assert {trace.locations[r[3]] for r in dram} == {"GPU.DRAM[0]"}
    starts = [r[4] for r in dram]
    assert len(starts) == 24
    transfer = 64 // 32
    assert all(b - a >= transfer for a, b in zip(starts, starts[1:]))
    assert {r[5] - r[4] for r in dram} == {100}


def test_full_buffers_and_mshrs_push_back_on_the_cu(build):
    lines = [i * 64 for i in range(16)]
    stream = wavefront(inst(Unit.VMEM, lines=lines), inst(Unit.WAITCNT))
    overrides = ["l1v.mshrs=1", "l1v.buffer=1"]
    _, trace, (cycles,) = run([launch([[stream]])], overrides, implementation=build)
    _, _, (free_cycles,) = run([launch([[stream]])], implementation=build)
    l1_in = trace.rows("req_in", "ReadReq", "L1V")
    assert len(l1_in) == 16
    # One MSHR: each miss is accepted only after the previous line came back, which is
    # ``latency`` cycles before that request completes (the fill is read out like a hit).
    latency = default_config()["l1v"]["latency"]
    for a, b in zip(l1_in, l1_in[1:]):
        assert b[4] >= a[5] - latency
    waits = [r[4] - trace.tasks[r[1]][4] for r in l1_in]  # buffer time: req_out to req_in
    assert max(waits) > 100
    assert cycles > 10 * free_cycles / 2


def test_l2_writes_back_dirty_victims(build):
    # five stores to one L2 set of a 4-way bank: the first line is evicted dirty
    lines = [i * 2048 for i in range(5)]  # bank 0, set 0 (4 sets x 2 lines per 128 B block)
    stream = wavefront(*[inst(Unit.VMEM, lines=[a], write=1) for a in lines])
    gpu, trace, _ = run([launch([[stream]])], SMALL_CACHES, implementation=build)
    writebacks = trace.rows("req_in", "WriteReq", "DRAM")
    assert len(writebacks) == 1
    l2_out = trace.tasks[writebacks[0][1]]
    assert trace.locations[l2_out[3]] == "GPU.L2[0]"
    assert tag_sequence(trace, "L2") == ["write-miss"] * 5
    assert gpu.stats()["l2_misses"] == 5


def test_an_l1_miss_that_hits_in_the_l2_is_slower_than_an_l1_hit(build):
    # Two work-groups on two CUs read the same line: the second, later, misses in its own
    # L1 and hits in the L2 the first one filled; the first reads the line again (L1 hit).
    line = [4096]
    delay = [inst(Unit.VALU)] * 100
    first = wavefront(inst(Unit.VMEM, lines=line), inst(Unit.WAITCNT), *delay,
                      inst(Unit.VMEM, lines=line), inst(Unit.WAITCNT))
    second = wavefront(*delay, inst(Unit.VMEM, lines=line), inst(Unit.WAITCNT))
    _, trace, _ = run([launch([[first], [second]])], implementation=build)
    l1_in = trace.rows("req_in", "ReadReq", "L1V")
    durations = sorted(r[5] - r[4] for r in l1_in)
    cfg = apply_overrides(default_config(), TINY)
    l1_hit, l2_hit, dram = durations
    assert l1_hit == cfg["l1v"]["latency"]
    assert l2_hit >= cfg["l1v"]["latency"] + cfg["l2"]["latency"]
    assert dram > l2_hit


def test_a_waitcnt_waits_for_an_atomic_but_not_for_a_store(build):
    # write=2: an atomic travels like a store but returns its old value, so s_waitcnt
    # blocks until the memory answers; after a plain store it does not.
    starts = {}
    for code in (1, 2):
        stream = wavefront(inst(Unit.VMEM, lines=[8192], write=code), inst(Unit.WAITCNT),
                           inst(Unit.VALU))
        _, trace, _ = run([launch([[stream]])], implementation=build)
        (valu,) = trace.rows("inst", "VALU")
        (vmem,) = trace.rows("inst", "VMEM")
        starts[code] = (valu[4], vmem[5])
    store_valu, _ = starts[1]
    atomic_valu, atomic_vmem_end = starts[2]
    assert atomic_valu >= atomic_vmem_end > store_valu


class _RecordingDeque(deque):
    """A deque that remembers the longest it has been."""

    def __init__(self, *args):
        super().__init__(*args)
        self.longest = len(self)

    def append(self, item):
        super().append(item)
        self.longest = max(self.longest, len(self))


def test_fills_wait_for_the_write_buffer_instead_of_overfilling_it(build, monkeypatch):
    # Bank 0 full of dirty lines; two loads enter a slow channel, then stores to new lines
    # evict dirty lines until the one-line write buffer is full and the channel's input
    # too. The loads' fills each evict a dirty line as well: they must wait for a slot
    # (before, the second write-back went over the bound).
    monkeypatch.setattr(module("simulator.gpu.memory", build), "deque", _RecordingDeque)
    dirty = [i * 256 for i in range(16)]  # bank 0: 128 B interleave over 2 banks
    loads = [4096, 4352]
    stores = [8192 + i * 256 for i in range(8)]
    stream = wavefront(*[inst(Unit.VMEM, lines=[a], write=1) for a in dirty],
                       inst(Unit.VMEM, lines=loads),
                       *[inst(Unit.VMEM, lines=[a], write=1) for a in stores],
                       inst(Unit.WAITCNT))
    overrides = SMALL_CACHES + ["l2.write_buffer=1", "dram.bytes_per_cycle=1",
                                "dram.buffer=4", "l1v.mshrs=64", "l1v.requests_per_cycle=8"]
    gpu, trace, _ = run([launch([[stream]])], overrides, implementation=build)
    bank = gpu.l2[0]
    assert bank.writebacks.longest == 1
    assert not bank.fills and not bank.mshr
    assert len(trace.rows("req_in", "ReadReq", "DRAM")) == 2
    assert len(trace.rows("req_in", "ReadReq", "L1V")) == 2
    evicted = len(trace.rows("req_out", "WriteReq", "L2[0]"))
    assert evicted == len(trace.rows("req_in", "WriteReq", "DRAM")) > 2
