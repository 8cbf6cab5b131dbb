"""The memory system of today's GPUs (issue #34, item 2): addresses hashed to banks,
channels and sets; an L2 per XCD with work-groups dealt to the XCDs in turn; a
memory-side cache slice in front of each memory channel; MSHRs found through a hash
table; memory channels that keep a fractional bandwidth exactly. Each on both builds."""
import random
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_gpu_units import inst, launch, run, wavefront

from dashapp import urls
from dashapp.daisen.views import overview
from simulator.__main__ import main
from simulator.build import module
from simulator.gpu.config import ConfigError, apply_overrides, default_config
from simulator.gpu.memory import AddressMap, TagArray, fold
from simulator.gpu.platform import dispatch_order
from simulator.stream import Unit

HASHED = ["gpu.address_hash=1"]


@settings(max_examples=200, deadline=None)
@given(addr=st.integers(0, 1 << 40), interleave=st.sampled_from([64, 128, 256, 4096]),
       count=st.sampled_from([1, 2, 16, 128]), hashed=st.booleans())
def test_an_address_map_gives_each_line_one_unit_and_index_and_back(addr, interleave, count,
                                                                     hashed):
    amap = AddressMap(interleave, count, hashed, 64)
    unit, index = amap.unit(addr), amap.index(addr)
    assert 0 <= unit < count
    assert amap.address(unit, index) == addr - addr % 64


def test_a_hash_spreads_a_matrix_column_that_interleaving_puts_in_one_channel():
    """A column of a 4096-wide float matrix: rows 16 KiB apart (bicg, atax). Interleaved
    in turn every row lands in one of 16 L2 channels and 16 of its 256 sets; hashed, the
    rows spread over every channel and most sets."""
    rows = [row * 16384 for row in range(4096)]
    linear, hashed = AddressMap(256, 16, False, 64), AddressMap(256, 16, True, 64)
    assert len({linear.unit(a) for a in rows}) == 1
    per_channel = Counter(hashed.unit(a) for a in rows)
    assert len(per_channel) == 16 and max(per_channel.values()) == 256
    tags = TagArray(256 * 16 * 64, 16, 64, hashed=True)
    sets = Counter(tags.set_of(hashed.index(a)) for a in rows if hashed.unit(a) == 0)
    assert len({linear.index(a) % 256 for a in rows}) == 16 and len(sets) >= 128
    assert max(sets.values()) <= 16  # all 256 fit in the bank's 16 ways
    # an aligned run of lines still uses every set once
    assert sorted(tags.set_of(index) for index in range(4096, 4096 + 256)) == list(range(256))
    assert fold(0b1011_0110, 4) == 0b1011 ^ 0b0110 and fold(12345, 0) == 0


def test_mshrs_find_what_is_open_through_any_sequence(build):
    """The MSHR table against a dict: random opens, joins and closes of lines that often
    collide in the table, on both builds."""
    mshrs_class = module("simulator.gpu.memory", build).MSHRs
    memory = module("simulator.gpu.memory", build)
    rng = random.Random(7)
    mshrs, expected = mshrs_class(48), {}
    for step in range(5000):
        line = rng.randrange(200) * 1024 + rng.randrange(3)  # many share a home place
        req = memory.MemRequest(line * 64, False, None, step, -1)
        slot = mshrs.find(line)
        assert (slot >= 0) == (line in expected)
        if slot >= 0 and rng.random() < 0.5:
            assert mshrs.join(line, req)
            expected[line].append(req)
        elif slot < 0 and len(expected) < 48 and rng.random() < 0.6:
            mshrs.open(line, req)
            expected[line] = [req]
        elif expected:
            gone = rng.choice(sorted(expected))
            assert mshrs.close(mshrs.find(gone)) == expected.pop(gone)
        assert len(mshrs) == len(expected)


def test_a_memory_channel_keeps_a_fractional_bandwidth(build):
    """19.72 B per cycle is a 64 B line every 3.245 cycles: 200 lines back to back take
    that long each, not the 4 whole cycles of a rounded transfer."""
    lines = [i * 256 for i in range(200)]  # 128 B interleave over 2 banks: all on bank 0
    stream = wavefront(inst(Unit.VMEM, lines=lines), inst(Unit.WAITCNT))
    _, trace, _ = run([launch([[stream]])], ["dram.bytes_per_cycle=19.72", "l1v.mshrs=256",
                                             "l2.mshrs=256", "dram.buffer=256"],
                      implementation=build)
    starts = [row[4] for row in trace.rows("req_in", "ReadReq", "DRAM")]
    assert len(starts) == 200
    span_cycles = starts[-1] - starts[0]  # the capture keeps cycles
    assert span_cycles == pytest.approx(199 * 64 / 19.72, abs=1)


def test_each_xcd_has_its_l2_and_work_groups_go_to_the_xcds_in_turn(build):
    groups = [[wavefront(inst(Unit.VMEM, lines=[g * 4096]), inst(Unit.WAITCNT))]
              for g in range(4)]
    overrides = ["gpu.shader_arrays=2", "gpu.cus_per_shader_array=2", "gpu.xcds=2"]
    gpu, trace, _ = run([launch(groups)], overrides, implementation=build)
    assert dispatch_order(4, 2) == [0, 2, 1, 3]
    assert [len(l1v.banks) for l1v in gpu.l1v] == [2, 2, 2, 2]
    assert gpu.l1v[0].banks == gpu.l2[:2] and gpu.l1v[3].banks == gpu.l2[2:]
    # work-group g on CU dispatch_order[g]; its load reaches its own XCD's L2
    l2_of_cu = {}
    for row in trace.rows("req_in", "ReadReq", "L2"):
        l1_out = trace.tasks[row[1]]
        l1_in = trace.tasks[l1_out[1]]
        cu_req = trace.tasks[l1_in[1]]
        cu = int(trace.locations[cu_req[3]].split("CU[")[1].rstrip("]"))
        l2_of_cu[cu] = trace.locations[row[3]]
    assert l2_of_cu == {0: "GPU.XCD[0].L2[0]", 2: "GPU.XCD[1].L2[2]",
                        1: "GPU.XCD[0].L2[0]", 3: "GPU.XCD[1].L2[2]"}
    with pytest.raises(ConfigError, match="must divide"):
        apply_overrides(default_config(), ["gpu.xcds=3"])


def test_a_line_the_l2_evicted_is_read_again_from_the_memory_side_cache(build):
    """Five lines in one set of a 4-way L2 bank: the fifth evicts the first, which the
    memory-side cache still holds, so reading it again is a hit there, not in DRAM."""
    lines = [i * 1024 for i in range(5)] + [0]  # bank 0, set 0 of 4 sets: 1 KiB apart
    stream = wavefront(*[rec for a in lines for rec in (inst(Unit.VMEM, lines=[a]),
                                                         inst(Unit.WAITCNT))])
    overrides = ["l1v.size_bytes=256", "l1v.ways=1", "l2.bank_bytes=1024", "l2.ways=4",
                 "mall.slice_bytes=65536", "mall.latency=30"]
    gpu, trace, _ = run([launch([[stream]])], overrides, implementation=build)
    mall = [trace.tag_names[tag] for _, _, tag in sorted(
        (time, task, tag) for task, time, tag in trace.tags
        if "MALL" in trace.locations[trace.tasks[task][3]])]
    assert mall == ["read-miss"] * 5 + ["read-hit"]
    assert gpu.stats()["mall_hits"] == 1 and len(trace.rows("req_in", "ReadReq", "DRAM")) == 5
    assert trace.locations[trace.rows("req_in", "ReadReq", "MALL")[0][3]] == "GPU.MALL[0]"


def test_hashing_needs_powers_of_two():
    with pytest.raises(ConfigError, match="powers of two"):
        apply_overrides(default_config(), HASHED + ["l2.banks=12"])
    with pytest.raises(ConfigError, match="power of two"):
        apply_overrides(default_config(), HASHED + ["l2.bank_bytes=98304"])
    assert apply_overrides(default_config(), HASHED)["gpu"]["address_hash"] == 1


def test_the_new_levels_are_traced_and_seen_in_the_overview(tmp_path, capsys):
    """A trace of the mi300a preset names its XCDs' L2 banks and Infinity Cache slices,
    and the Overview draws them like any other component."""
    source, trace = tmp_path / "scale.cl", tmp_path / "scale.sqlite"
    source.write_text("kernel void scale(global const float *a, global float *b)\n"
                      "{ int i = get_global_id(0); b[i] = 2.0f * a[i]; }\n")
    assert main(["run-kernel", str(source), "--global", "16384", "--local", "256",
                 "--arg", "a=range:16384", "--arg", "b=zeros:16384", "--gpu", "mi300a",
                 "--trace-level", "all", "--no-progress", "-o", str(trace)]) == 0
    capsys.readouterr()
    for pattern, first in (("MALL", "GPU.MALL["), (r"XCD\[5\]", "GPU.XCD[5].L2[")):
        page = overview(str(trace), urls.OverviewState(filter=pattern))
        assert not page.messages and page.charts
        assert all(chart.location.name.startswith(first) for chart in page.charts)
