"""Each preset reaches its data sheet (issue #34): microbenchmark kernels as the public
measurements run them. A stream of loads reaches 90 % of the memory bandwidth, a chain
of fused multiply-adds 90 % of the FP32 peak, and pointer chases take each level's
load-to-use latency (L1, L2, the Infinity Cache where there is one, memory).

Each figure is the difference of two runs of different lengths, so launch, ramp-up and
drain cancel and the steady state remains, as the microbenchmarks do on real GPUs."""
import re

import numpy as np
import pytest
from test_gpu_units import inst, launch, wavefront

from simulator.__main__ import main
from simulator.gpu import GPU, presets
from simulator.gpu.config import LINE_BYTES, dram_channels
from simulator.stream import Unit

NAMES = list(presets.PRESETS)
READ = """kernel void read4(global const float4 *in, global float4 *out)
{
    int i = get_global_id(0);
    float4 v = in[i];
    if (v.x < 0.0f) {  /* never: the inputs count up from 0 */
        out[i] = v;
    }
}
"""
CHAINS = 16
DECLARE = "\n".join(f"    float x{k} = get_global_id(0) + {k}.0f;" for k in range(CHAINS))
STEP = "\n".join(f"        x{k} = mad(x{k}, 0.999f, 0.5f);" for k in range(CHAINS))
SUM = " + ".join(f"x{k}" for k in range(CHAINS))
FMA = f"""kernel void fma16(global float *out, int n)
{{
{DECLARE}
    for (int i = 0; i < n; i++) {{
{STEP}
    }}
    out[get_global_id(0)] = {SUM};
}}
"""
CHASE = """kernel void chase(global const int *next, global int *out, int steps)
{
    int i = 0;
    for (int s = 0; s < steps; s++) {
        i = next[i];
    }
    out[0] = i;
}
"""


def _cycles(tmp_path, capsys, source, gpu, global_size, args):
    (tmp_path / "k.cl").write_text(source)
    argv = ["run-kernel", str(tmp_path / "k.cl"), "--global", str(global_size), "--local",
            str(min(global_size, 256)), "--gpu", gpu, "--trace-level", "off", "--no-instrument",
            "--no-progress", "-o", str(tmp_path / "k.sqlite"), "--force"]
    for arg in args:
        argv += ["--arg", arg]
    assert main(argv) == 0
    return int(re.search(r"\(([\d,]+) cycles\)", capsys.readouterr().out)[1].replace(",", ""))


@pytest.mark.parametrize("gpu", NAMES)
def test_a_stream_of_loads_reaches_the_memory_bandwidth(tmp_path, capsys, gpu):
    """float4 loads of a cold buffer, each line read once: the extra lines of the longer
    run take their share of the configured bandwidth. The runs are ten times the lines
    memory must have in flight to stay busy (bandwidth x latency), and twice the
    wavefronts the GPU holds at once, so that they reach the steady state."""
    cfg = presets.configuration(gpu)
    lines_per_cycle = dram_channels(cfg) * cfg["dram"]["bytes_per_cycle"] / LINE_BYTES
    latency = presets.cycles(presets.datasheet(gpu).facts["latency_hbm"], cfg["clock_mhz"])
    resident = presets.compute_units(cfg) * cfg["cu"]["simds"] * cfg["cu"]["wf_slots_per_simd"]
    items = max(-(-int(10 * lines_per_cycle * latency * 4) // 256) * 256,  # 4 float4 a line
                2 * resident * 64)

    def run(n):
        return _cycles(tmp_path, capsys, READ, gpu, n,
                       [f"in=range:{4 * n}", f"out=zeros:{4 * n}"])

    extra_bytes = items * 16
    seconds = (run(2 * items) - run(items)) / (cfg["clock_mhz"] * 1e6)
    reached = extra_bytes / seconds / 1e9
    assert reached >= 0.9 * presets.memory_bandwidth(cfg), (reached, presets.memory_bandwidth(cfg))


@pytest.mark.parametrize("gpu", NAMES)
def test_chains_of_fused_multiply_adds_reach_the_fp32_peak(tmp_path, capsys, gpu):
    """Sixteen independent multiply-add chains per work-item, four wavefronts per SIMD:
    the extra iterations of the longer run go at the configured FP32 peak (CUs x SIMDs
    x lanes x 2 FLOPs per cycle, without packed FP32)."""
    cfg = presets.configuration(gpu)
    c = cfg["cu"]
    items = presets.compute_units(cfg) * c["simds"] * 4 * 64

    def run(n):
        return _cycles(tmp_path, capsys, FMA, gpu, items, [f"out=zeros:{items}", f"n={n}"])

    extra_flops = 8 * CHAINS * 2 * items
    seconds = (run(16) - run(8)) / (cfg["clock_mhz"] * 1e6)
    reached = extra_flops / seconds / 1e12
    assert reached >= 0.9 * presets.peak_fp32_tflops(cfg), (reached, presets.peak_fp32_tflops(cfg))


def _chase_cycles(tmp_path, capsys, gpu, lines, steps):
    ring = np.zeros(lines * 16, dtype=np.int32)  # one int per 64 B line, next line's index
    ring[::16] = (np.arange(1, lines + 1) % lines) * 16
    np.save(tmp_path / "ring.npy", ring)
    return _cycles(tmp_path, capsys, CHASE, gpu, 1,
                   [f"next={tmp_path / 'ring.npy'}", "out=zeros:1", f"steps={steps}"])


def _load_chain_cycles(gpu, lines, steps):
    """Cycles of one wavefront loading ``steps`` lines in turn from a ring of ``lines``
    consecutive ones, each load waiting for the one before: a pointer chase as the timing
    model sees it, without the functional execution of a long loop."""
    records = [record for step in range(steps)
               for record in (inst(Unit.VMEM, lines=[step % lines * LINE_BYTES]),
                              inst(Unit.WAITCNT))]
    return GPU(presets.configuration(gpu), None, "off").run_kernel(launch([[wavefront(*records)]]))


@pytest.mark.parametrize("gpu", NAMES)
def test_a_pointer_chase_takes_each_levels_data_sheet_latency(tmp_path, capsys, gpu):
    """A dependent load per step, timed over the difference of two chase lengths: an L1
    hit (8 lines), an L2 hit (the second lap of 1,024 lines, past the L1) and memory (the
    first lap, every line cold) take the data sheet's load-to-use latency, give or take
    the loop's own instructions and a cycle per level crossed. Where there is an Infinity
    Cache, a ring of 1.25 times an XCD's L2 misses every L2 set on its second lap (each
    holds 20 of its lines, in 16 ways) and hits the Infinity Cache."""
    sheet = presets.datasheet(gpu)
    cfg = presets.configuration(gpu)
    clock = int(sheet.facts["clock_mhz"].value)
    levels = ("l1", "l2", "mall", "hbm") if cfg["mall"]["slice_bytes"] else ("l1", "l2", "hbm")
    want = {level: presets.cycles(sheet.facts[f"latency_{level}"], clock) for level in levels}
    per_step = {
        "l1": (_chase_cycles(tmp_path, capsys, gpu, 8, 200)
               - _chase_cycles(tmp_path, capsys, gpu, 8, 100)) / 100,
        "l2": (_chase_cycles(tmp_path, capsys, gpu, 1024, 3072)
               - _chase_cycles(tmp_path, capsys, gpu, 1024, 1024)) / 2048,
        "hbm": (_chase_cycles(tmp_path, capsys, gpu, 4096, 400)
                - _chase_cycles(tmp_path, capsys, gpu, 4096, 200)) / 200,
    }
    if "mall" in levels:
        ring = cfg["l2"]["banks"] * cfg["l2"]["bank_bytes"] // LINE_BYTES * 5 // 4
        per_step["mall"] = (_load_chain_cycles(gpu, ring, ring + 3000)
                            - _load_chain_cycles(gpu, ring, ring + 1000)) / 2000
    for level, cycles in per_step.items():
        assert want[level] <= cycles <= want[level] + 8, (level, cycles, want[level])
