"""SIMT execution: real results, EXEC masks, divergence, memory records."""
import numpy as np
import pytest

from simulator.kernels import KernelError, LocalMem, Memory, compile_source, launch
from simulator.stream import Unit


def run(source, global_size, local_size, **args):
    """Compile ``src``, turn numpy arrays into buffers, launch; return (launch, arrays)."""
    prog = compile_source("t.cl", source)
    mem = Memory()
    bound = {k: mem.buffer(k, v) if isinstance(v, np.ndarray) else v for k, v in args.items()}
    result = launch(prog, None, global_size, local_size, bound)
    arrays = {k: b.array for k, b in bound.items() if hasattr(b, "array")}
    return result, arrays


def stream_of(result, wave=0, group=0):
    return result.work_groups[group].wavefronts[wave]


def exec_mask(rec):
    return int(rec["exec_lo"]) | (int(rec["exec_hi"]) << 32)


def test_integer_and_float_semantics_follow_c():
    a = np.array([7, -7, 7, -7, 1 << 30, -1], dtype=np.int32)
    b = np.array([2, 2, -2, -2, 4, 3], dtype=np.int32)
    out = np.zeros((6, 6), dtype=np.int32)
    _, r = run("""kernel void k(global int *a, global int *b, global int *out)
{
    int i = get_global_id(0);
    out[i * 6 + 0] = a[i] / b[i];
    out[i * 6 + 1] = a[i] % b[i];
    out[i * 6 + 2] = a[i] << 2;
    out[i * 6 + 3] = a[i] >> 1;
    out[i * 6 + 4] = (int)((uint)a[i] >> 28);
    out[i * 6 + 5] = (int)(-2.7f * (float)b[i]);
}""", (6,), (6,), a=a, b=b, out=out.reshape(-1))
    got = r["out"].reshape(6, 6)
    np.testing.assert_array_equal(got[:, 0], np.trunc(a / b).astype(np.int32))
    np.testing.assert_array_equal(got[:, 1], np.fmod(a, b))
    np.testing.assert_array_equal(got[:, 2], a << 2)
    np.testing.assert_array_equal(got[:, 3], a >> 1)
    np.testing.assert_array_equal(got[:, 4], (a.view(np.uint32) >> 28).astype(np.int32))
    np.testing.assert_array_equal(got[:, 5], np.trunc(np.float32(-2.7) * b.astype(np.float32)).astype(np.int32))


def test_divergent_if_else_runs_both_sides_under_complementary_masks():
    out = np.zeros(64, dtype=np.float32)
    res, r = run("""kernel void k(global float *out)
{
    int i = get_global_id(0);
    float v;
    if (i % 3 == 0) {
        v = 1.0f;
        out[i] = v;
    } else {
        v = 2.0f;
        out[i] = v;
    }
}""", (64,), (64,), out=out)
    expected = np.where(np.arange(64) % 3 == 0, 1.0, 2.0)
    np.testing.assert_array_equal(r["out"], expected)
    insts = stream_of(res).insts
    stores = insts[insts["unit"] == Unit.VMEM]
    then_mask, else_mask = exec_mask(stores[0]), exec_mask(stores[1])
    assert then_mask & else_mask == 0 and then_mask | else_mask == (1 << 64) - 1
    assert stores[0]["active"] == 22 and stores[1]["active"] == 42


def test_loops_run_until_no_lane_is_active_and_skip_empty_wavefronts():
    counts = np.zeros(128, dtype=np.int32)
    res, r = run("""kernel void k(global int *counts)
{
    int i = get_global_id(0);
    int n = 0;
    int limit = i < 64 ? i % 5 : 0;
    for (int j = 0; j < limit; j++) {
        n += 1;
    }
    counts[i] = n;
}""", (128,), (128,), counts=counts)
    np.testing.assert_array_equal(r["counts"], np.where(np.arange(128) < 64, np.arange(128) % 5, 0))
    first, second = (stream_of(res, w).insts for w in (0, 1))
    loop_line = 6
    # The first wavefront tests the condition 5 times (4 trips + exit); the second
    # tests it once and never runs the body.
    assert ((first["unit"] == Unit.BRANCH) & (first["line"] == loop_line)).sum() == 5
    assert ((second["unit"] == Unit.BRANCH) & (second["line"] == loop_line)).sum() == 1
    assert not (second["line"] == 7).any()
    assert (first["active"][first["line"] == 7] < 64).all()


def test_break_continue_and_return():
    out = np.full(64, -1, dtype=np.int32)
    _, r = run("""kernel void k(global int *out)
{
    int i = get_global_id(0);
    if (i == 63) return;
    int acc = 0;
    for (int j = 0; j < 10; j++) {
        if (j == i % 7) continue;
        if (j > i % 5 + 4) break;
        acc += j;
    }
    out[i] = acc;
}""", (64,), (64,), out=out)
    expected = []
    for i in range(64):
        acc = 0
        for j in range(10):
            if j == i % 7:
                continue
            if j > i % 5 + 4:
                break
            acc += j
        expected.append(acc)
    expected[63] = -1
    np.testing.assert_array_equal(r["out"], expected)


def test_local_memory_is_per_work_group_and_barriers_are_recorded():
    data = np.arange(256, dtype=np.float32)
    out = np.zeros(256, dtype=np.float32)
    res, r = run("""kernel void k(global const float *in, global float *out)
{
    local float tile[64];
    int l = get_local_id(0);
    tile[l] = in[get_global_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    out[get_global_id(0)] = tile[63 - l];
}""", (256,), (64,), **{"in": data, "out": out})
    np.testing.assert_array_equal(r["out"], data.reshape(4, 64)[:, ::-1].reshape(-1))
    assert all(group.lds_bytes == 256 for group in res.work_groups)
    insts = stream_of(res, group=3).insts
    units = list(insts["unit"])
    assert units.index(Unit.VMEM) < units.index(Unit.WAITCNT) < units.index(Unit.LDS)
    assert units.index(Unit.BARRIER) < len(units) - 1 and units[-1] == Unit.END


def test_vmem_coalesces_active_lanes_into_64_byte_lines():
    a = np.zeros(64 * 16, dtype=np.float32)
    res, _ = run("""kernel void k(global float *a)
{
    int i = get_global_id(0);
    a[i] = 1.0f;
    a[i * 16] = 2.0f;
    if (i < 8) a[i] = 3.0f;
}""", (64,), (64,), a=a)
    wave = stream_of(res)
    vmem = wave.insts[wave.insts["unit"] == Unit.VMEM]
    assert list(vmem["addr_cnt"]) == [4, 64, 1]
    assert all(vmem["write"] == 1)
    first = wave.addresses[vmem[0]["addr_off"]:vmem[0]["addr_off"] + 4]
    assert list(np.diff(first)) == [64, 64, 64] and first[0] % 64 == 0


def test_lds_conflict_degree_per_half_wavefront():
    res, _ = run("""kernel void k(global float *out)
{
    local float s[2048];
    int l = get_local_id(0);
    s[l] = 1.0f;
    s[l * 32] = 2.0f;
    s[l * 2] = 3.0f;
    out[l] = s[0];
}""", (64,), (64,), out=np.zeros(64, np.float32))
    lds = stream_of(res).insts
    lds = lds[lds["unit"] == Unit.LDS]
    assert list(lds["passes"]) == [1, 32, 2, 1]  # unit stride, stride 32, stride 2, broadcast


def test_lds_conflicts_of_three_dword_elements_group_ten_lanes_per_pass():
    # float3 moves 3 dwords per lane: ten lanes share a pass, seven groups per wavefront
    # (the last of four lanes). Unit stride is conflict free; stride 2 (6 dwords) puts
    # lane 6's first dword in lane 1's last bank: a 2-way conflict.
    res, arrays = run("""kernel void k(global float *out)
{
    local float3 s[256];
    int l = get_local_id(0);
    s[l] = (float3)(1.0f, 2.0f, 3.0f);
    s[l * 2] = (float3)(1.0f, 2.0f, 3.0f);
    out[l] = s[l].y;
}""", (128,), (128,), out=np.zeros(128, np.float32))
    for wave in (0, 1):
        insts = stream_of(res, wave=wave).insts
        lds = insts[insts["unit"] == Unit.LDS]
        assert list(lds["passes"]) == [1, 2, 1]
        assert list(lds["lds_cycles"]) == [7, 13, 7]
    assert (arrays["out"] == 2.0).all()


def test_float4_two_dimensional_ndrange():
    src = np.arange(8 * 4 * 4, dtype=np.float32)
    dst = np.zeros_like(src)
    _, r = run("""kernel void k(global const float4 *src, global float4 *dst, int width)
{
    int x = get_global_id(0);
    int y = get_global_id(1);
    float4 v = src[y * width + x];
    dst[y * width + x] = v.wzyx * 2.0f + (float4)(0.0f, 0.0f, 0.0f, 1.0f);
}""", (4, 8), (2, 4), src=src, dst=dst, width=4)
    expected = src.reshape(-1, 4)[:, ::-1] * 2 + np.array([0, 0, 0, 1], np.float32)
    np.testing.assert_array_equal(r["dst"].reshape(-1, 4), expected)


def test_short_circuit_protects_loads_and_bounds_are_checked():
    a = np.arange(10, dtype=np.int32)
    out = np.zeros(64, dtype=np.int32)
    _, r = run("""kernel void k(global int *a, global int *out, int n)
{
    int i = get_global_id(0);
    out[i] = (i < n && a[i] > 4) ? 1 : 0;
}""", (64,), (64,), a=a, out=out, n=10)
    np.testing.assert_array_equal(r["out"][:10], (a > 4).astype(np.int32))
    with pytest.raises(KernelError, match=r"t.cl:4:\d+: out-of-bounds read of a\[10\] \(length 10\) by work-item 10"):
        run("""kernel void k(global int *a, global int *out)
{
    int i = get_global_id(0);
    out[i] = a[i];
}""", (64,), (64,), a=a, out=out)


def test_partial_last_wavefront_and_argument_checks():
    out = np.zeros(96, dtype=np.int32)
    res, r = run("kernel void k(global int *out) { out[get_global_id(0)] = get_local_id(0); }",
                 (96,), (96,), out=out)
    np.testing.assert_array_equal(r["out"], np.arange(96))
    waves = res.work_groups[0].wavefronts
    assert len(waves) == 2
    assert waves[1].insts["active"][0] == 32
    with pytest.raises(KernelError, match="missing out"):
        run("kernel void k(global int *out) { out[0] = 1; }", (64,), (64,))
    with pytest.raises(KernelError, match="needs int32 data"):
        run("kernel void k(global int *out) { out[0] = 1; }", (64,), (64,),
            out=np.zeros(4, np.float32))
    with pytest.raises(KernelError, match="multiple of the local size"):
        run("kernel void k(global int *out) { out[0] = 1; }", (65,), (64,), out=out)


def test_scalar_unit_for_wave_uniform_work():
    res, _ = run("""kernel void k(global int *out, int n)
{
    int g = get_group_id(0) * n + 3;
    out[get_global_id(0)] = g + get_local_id(0);
}""", (128,), (64,), out=np.zeros(128, np.int32), n=2)
    insts = stream_of(res).insts
    assert (insts["unit"][insts["line"] == 3] == Unit.SALU).all()
    assert (insts["unit"] == Unit.VALU).any()


def test_wave_uniform_float_work_stays_on_the_vector_unit():
    # GCN's scalar ALU has no floating point: a uniform float product is a VALU instruction.
    res, _ = run("""kernel void k(global float *out, float scale)
{
    float f = scale * 0.5f;
    out[get_global_id(0)] = f;
}""", (64,), (64,), out=np.zeros(64, np.float32), scale=3.0)
    insts = stream_of(res).insts
    assert (insts["unit"][insts["line"] == 3] == Unit.VALU).all()


def test_local_pointer_arguments_are_sized_by_the_host():
    out = np.zeros(128, dtype=np.int32)
    _, r = run("""kernel void k(global int *out, local int *scratch)
{
    int l = get_local_id(0);
    scratch[l] = l * 2;
    barrier(CLK_LOCAL_MEM_FENCE);
    out[get_global_id(0)] = scratch[(l + 1) % 64];
}""", (128,), (64,), out=out, scratch=LocalMem(64))
    np.testing.assert_array_equal(r["out"], np.tile((np.arange(1, 65) % 64) * 2, 2))


def test_private_arrays_do_while_and_math_builtins():
    x = np.linspace(0.1, 4.0, 64, dtype=np.float32)
    out = np.zeros((64, 4), dtype=np.float32)
    _, r = run("""kernel void k(global const float *x, global float *out)
{
    int i = get_global_id(0);
    float p[3];
    int k = 0;
    do {
        p[k] = x[i] * (k + 1);
        k++;
    } while (k < 3);
    out[i * 4 + 0] = p[0] + p[1] + p[2];
    out[i * 4 + 1] = sqrt(x[i]) + exp(-x[i]) + pow(x[i], 2.0f);
    out[i * 4 + 2] = clamp(x[i], 1.0f, 2.0f) + fmax(x[i], 3.0f) + (float)abs(2 - i);
    out[i * 4 + 3] = mix(0.0f, 10.0f, 0.5f) + floor(x[i]) + min(i, 7);
}""", (64,), (64,), x=x, out=out.reshape(-1))
    got = r["out"].reshape(64, 4)
    i = np.arange(64)
    np.testing.assert_allclose(got[:, 0], x * 6, rtol=1e-6)
    np.testing.assert_allclose(got[:, 1], np.sqrt(x) + np.exp(-x) + x ** 2, rtol=1e-5)
    np.testing.assert_allclose(got[:, 2], np.clip(x, 1, 2) + np.fmax(x, 3) + np.abs(2 - i), rtol=1e-6)
    np.testing.assert_allclose(got[:, 3], 5 + np.floor(x) + np.minimum(i, 7), rtol=1e-6)


def test_three_dimensional_ids_and_sizes():
    out = np.zeros(4 * 2 * 3 * 6, dtype=np.int32)
    _, r = run("""kernel void k(global int *out)
{
    int x = get_global_id(0), y = get_global_id(1), z = get_global_id(2);
    int w = get_global_size(0), h = get_global_size(1);
    int base = ((z * h + y) * w + x) * 6;
    out[base + 0] = get_local_id(0) + 10 * get_local_id(1) + 100 * get_local_id(2);
    out[base + 1] = get_group_id(0) + 10 * get_group_id(1) + 100 * get_group_id(2);
    out[base + 2] = get_num_groups(0) + 10 * get_num_groups(1) + 100 * get_num_groups(2);
    out[base + 3] = get_local_size(0) * get_local_size(1) * get_local_size(2);
    out[base + 4] = x + y + z;
    out[base + 5] = get_global_size(2) * 10 + get_work_dim();
}""", (4, 2, 3), (2, 2, 1), out=out)
    got = r["out"].reshape(3, 2, 4, 6)
    z, y, x = np.meshgrid(np.arange(3), np.arange(2), np.arange(4), indexing="ij")
    np.testing.assert_array_equal(got[..., 0], x % 2 + 10 * (y % 2))
    np.testing.assert_array_equal(got[..., 1], x // 2 + 100 * z)
    assert (got[..., 2] == 2 + 10 + 300).all() and (got[..., 3] == 4).all()
    np.testing.assert_array_equal(got[..., 4], x + y + z)
    assert (got[..., 5] == 33).all()


def test_uniform_variables_stay_scalar_until_a_lane_dependent_write():
    out = np.zeros(128, dtype=np.int32)
    _, r = run("""kernel void k(global int *out, int n)
{
    int acc = n;
    int lane = get_local_id(0);
    for (int s = 1; s < 64; s *= 2) {
        acc += s;
    }
    if (lane < 10) {
        acc = lane;
    }
    out[get_global_id(0)] = acc;
}""", (128,), (64,), out=out, n=5)
    lane = np.arange(128) % 64
    np.testing.assert_array_equal(r["out"], np.where(lane < 10, lane, 5 + 63))


def test_a_barrier_in_divergent_control_flow_is_an_error():
    """A work-item may skip a barrier its group passes only to end the kernel (as on a
    GPU, where a barrier counts the wavefronts still running: Rodinia's streamcluster and
    SHOC's SpMV put their barriers under ``if (row < n)`` on a launch rounded up); one
    that skipped a barrier and reaches another would pair the two."""
    source = """kernel void k(global int *out, int n)
{
    local int s[64];
    int l = get_local_id(0);
    if (l < n) {
        s[l] = l;
        barrier(CLK_LOCAL_MEM_FENCE);
        out[l] = s[l ^ 1];
    }
    AFTER
}"""
    _, r = run(source.replace("AFTER", ""), (64,), (64,), out=np.zeros(64, np.int32), n=32)
    np.testing.assert_array_equal(r["out"], np.r_[np.arange(32) ^ 1, np.zeros(32)])
    with pytest.raises(KernelError, match=r"t.cl:10:\d+: work-items of work-group \(0,\) reach this"
                                          r" barrier after skipping the one at line 7"):
        run(source.replace("AFTER", "barrier(CLK_LOCAL_MEM_FENCE);"), (64,), (64,),
            out=np.zeros(64, np.int32), n=32)
    # A barrier in a loop that some work-items leave early, and one after the loop.
    with pytest.raises(KernelError, match=r"t.cl:7:\d+: .* reach this barrier after skipping"
                                          r" the one at line 5"):
        run("""kernel void k(global int *out)
{
    int l = get_local_id(0);
    for (int i = 0; i < 2 + (l < 8); i++) {
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    out[l] = l;
}""", (64,), (64,), out=np.zeros(64, np.int32))
    # Work-items that returned are not waited for (as on GCN, where a finished
    # wavefront leaves the barrier count).
    run("""kernel void k(global int *out, int n)
{
    int i = get_global_id(0);
    if (i >= n) return;
    barrier(CLK_LOCAL_MEM_FENCE);
    out[i] = i;
}""", (128,), (64,), out=np.zeros(128, np.int32), n=100)


def test_vload_and_vstore_move_vectors_through_scalar_pointers():
    data = np.arange(256, dtype=np.float32)
    out = np.zeros(256, dtype=np.float32)
    res, r = run("""kernel void k(global const float *in, global float *out)
{
    local float stage[256];
    int i = get_global_id(0);
    float4 v = vload4(i, in);
    vstore4(v.wzyx, i, stage);
    barrier(CLK_LOCAL_MEM_FENCE);
    vstore4(vload4(i, stage) * 2.0f, i, out);
}""", (64,), (64,), **{"in": data, "out": out})
    np.testing.assert_array_equal(r["out"], (data.reshape(-1, 4)[:, ::-1] * 2).reshape(-1))
    insts = stream_of(res).insts
    vmem = insts[insts["unit"] == Unit.VMEM]
    assert list(vmem["addr_cnt"]) == [16, 16]     # 64 lanes x 16 B = 1 KB = 16 lines each
    with pytest.raises(KernelError, match="out-of-bounds read of vload4/vstore4 offset 16 of in"):
        run("kernel void k(global const float *in, global float4 *out)"
            " { int i = get_global_id(0); out[i] = vload4(i, in); }",
            (64,), (64,), **{"in": np.zeros(64, np.float32), "out": np.zeros(256, np.float32)})


def test_atomics_update_in_lane_order_and_return_old_values():
    values = np.array([3, 1, 3, 0, 3, 2] * 16, dtype=np.int32)
    hist = np.zeros(4, dtype=np.int32)
    ticket = np.zeros(96, dtype=np.int32)
    extremes = np.array([100, -100], dtype=np.int32)
    _, r = run("""kernel void k(global const int *values, global int *hist, global int *ticket,
                  global int *extremes)
{
    local int counter[1];
    int i = get_global_id(0);
    int l = get_local_id(0);
    if (l == 0) counter[0] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    atomic_add(&hist[values[i]], 1);
    ticket[i] = atomic_inc(counter) * 1000 + atomic_sub(hist + 3, 0);
    atomic_min(&extremes[0], values[i] * 7 - i);
    atomic_max(extremes + 1, values[i] * 7 - i);
}""", (96,), (32,), values=values, hist=hist, ticket=ticket, extremes=extremes)
    np.testing.assert_array_equal(r["hist"], np.bincount(values, minlength=4))
    np.testing.assert_array_equal(r["ticket"] // 1000, np.tile(np.arange(32), 3))
    assert (r["ticket"] % 1000 == 48).all()   # all 48 threes were counted before
    key = values * 7 - np.arange(96)
    assert r["extremes"].tolist() == [min(100, key.min()), max(-100, key.max())]


def test_atomic_update_matches_a_sequential_loop():
    from simulator.kernels.atomics import atomic_update

    rng = np.random.default_rng(4)
    positions = rng.integers(0, 5, size=200)
    values = rng.integers(-50, 50, size=200).astype(np.int32)
    for op, fn in (("add", lambda a, b: a + b), ("sub", lambda a, b: a - b), ("xchg", lambda a, b: b),
                   ("min", min), ("max", max), ("xor", lambda a, b: a ^ b)):
        data = rng.integers(-9, 9, size=5).astype(np.int32)
        expected_data = data.copy()
        expected_old = []
        for p, v in zip(positions, values):
            expected_old.append(expected_data[p])
            expected_data[p] = fn(int(expected_data[p]), int(v))
        old = atomic_update(data, positions, values, op)
        np.testing.assert_array_equal(old, expected_old, err_msg=op)
        np.testing.assert_array_equal(data, expected_data, err_msg=op)


def test_component_writes_under_a_partial_mask():
    out = np.zeros(64 * 4, dtype=np.float32)
    _, r = run("""kernel void k(global float4 *out)
{
    int i = get_global_id(0);
    float4 v = (float4)(0.0f);
    if (i % 2 == 0) {
        v.xy = (float2)(1.0f, 2.0f);
        out[i].zw = (float2)(5.0f, 6.0f);
    }
    v.w += 3.0f;
    out[i].xy = v.xy;
    out[i].s2 += v.w;
}""", (64,), (64,), out=out)
    got = r["out"].reshape(64, 4)
    even = np.arange(64) % 2 == 0
    np.testing.assert_array_equal(got[even], np.tile([1, 2, 8, 6], (32, 1)))
    np.testing.assert_array_equal(got[~even], np.tile([0, 0, 3, 0], (32, 1)))


def test_vector_expressions_mix_uniform_and_per_lane_values():
    x = np.linspace(-2, 2, 64, dtype=np.float32)
    out = np.zeros(64 * 8, dtype=np.float32)
    _, r = run("""kernel void k(global const float *x, global float *out)
{
    int i = get_global_id(0);
    float s = x[i];
    float4 c = (float4)(1.0f, 2.0f, 3.0f, 4.0f);
    float4 v = c * s + 0.5f;
    float4 m = min(v, 1.0f);
    int4 lt = v < c;
    float4 pick = select(c, v, lt);
    float4 q = (s > 0.0f) ? v : c;
    int4 t = convert_int4(v * 2.0f);
    float base = dot(c, v) + length(c);
    out[i * 8 + 0] = base;
    out[i * 8 + 1] = m.x + m.w;
    out[i * 8 + 2] = (float)(lt.x + lt.y + lt.z + lt.w);
    out[i * 8 + 3] = pick.y;
    out[i * 8 + 4] = q.z;
    out[i * 8 + 5] = (float)(t.x * 1000 + t.w);
    out[i * 8 + 6] = ((float4)(v.xy, -s, s)).z;
    out[i * 8 + 7] = as_float(as_uint(s));
}""", (64,), (64,), x=x, out=out)
    got = r["out"].reshape(64, 8)
    c = np.array([1, 2, 3, 4], np.float32)
    v = c[None, :] * x[:, None] + np.float32(0.5)
    lt = v < c
    np.testing.assert_allclose(got[:, 0], (v * c).sum(1) + np.sqrt(np.float32(30)), rtol=1e-6)
    np.testing.assert_array_equal(got[:, 1], np.minimum(v, 1)[:, 0] + np.minimum(v, 1)[:, 3])
    np.testing.assert_array_equal(got[:, 2], -lt.sum(1))       # vector true is -1
    np.testing.assert_array_equal(got[:, 3], np.where(lt, v, c)[:, 1])
    np.testing.assert_array_equal(got[:, 4], np.where(x > 0, v[:, 2], 3))
    t = np.trunc(v * 2).astype(np.int32)
    np.testing.assert_array_equal(got[:, 5], t[:, 0] * 1000 + t[:, 3])
    np.testing.assert_array_equal(got[:, 6], -x)
    np.testing.assert_array_equal(got[:, 7], x)


def test_two_dimensional_local_tiles_and_private_vector_arrays():
    n = 32
    matrix = np.arange(n * n, dtype=np.float32)
    out = np.zeros_like(matrix)
    res, r = run("""#define TILE 16
kernel void k(global const float *in, global float *out, int n)
{
    local float tile[TILE][TILE + 1];
    float4 parts[2];
    int x = get_global_id(0), y = get_global_id(1);
    int lx = get_local_id(0), ly = get_local_id(1);
    tile[ly][lx] = in[y * n + x];
    barrier(CLK_LOCAL_MEM_FENCE);
    parts[0] = (float4)(tile[lx][ly]);
    parts[1] = parts[0] * 2.0f;
    int ox = get_group_id(1) * TILE + lx, oy = get_group_id(0) * TILE + ly;
    out[oy * n + ox] = parts[1].w - parts[0].x;
}""", (n, n), (16, 16), **{"in": matrix, "out": out, "n": n})
    np.testing.assert_array_equal(r["out"].reshape(n, n), matrix.reshape(n, n).T)
    lds = np.concatenate([w.insts for g in res.work_groups for w in g.wavefronts])
    lds = lds[lds["unit"] == Unit.LDS]
    # A half-wavefront covers two 16-wide rows; with the +1 padding, row 1 wraps onto
    # bank 0 once (2-way) for the writes and the transposed reads alike. Without the
    # padding the transposed read would put 16 lanes on 4 banks (8-way).
    assert lds["passes"].max() == 2


def test_lds_cycles_count_every_lane_group():
    res, _ = run("""kernel void k(global float *out)
{
    local float s[2048];
    local float4 v[512];
    int l = get_local_id(0);
    s[l] = 1.0f;
    s[l * 32] = 2.0f;
    v[l] = (float4)(0.0f);
    if (l < 8) v[l * 8] = (float4)(1.0f);
    out[l] = s[0];
}""", (64,), (64,), out=np.zeros(64, np.float32))
    lds = stream_of(res).insts
    lds = lds[lds["unit"] == Unit.LDS]
    assert list(zip(lds["passes"], lds["lds_cycles"])) == [(1, 2), (32, 64), (1, 8), (8, 8), (1, 2)]


def test_every_wavefront_waits_for_its_loads_before_using_them():
    # Wavefront 0 uses the loaded value in the then-branch, wavefront 1 in the else-branch:
    # each must wait for its own load, not rely on the other's s_waitcnt.
    src = """kernel void k(global float *a, global float *b) {
        int i = get_global_id(0);
        float v = a[i];
        if (i < 64) { b[i] = v + 1.0f; } else { b[i] = v * 2.0f; }
    }"""
    a = np.arange(128, dtype=np.float32)
    result, mem = run(src, (128,), (128,), a=a, b=np.zeros(128, dtype=np.float32))
    for wave in (0, 1):
        units = [int(u) for u in stream_of(result, wave=wave).insts["unit"]]
        load = units.index(Unit.VMEM)
        store = units.index(Unit.VMEM, load + 1)
        assert Unit.WAITCNT in units[load:store], f"wavefront {wave} never waits for its load"
    assert np.array_equal(mem["b"], np.where(np.arange(128) < 64, a + 1, a * 2))


def test_a_used_atomic_result_is_waited_for_like_a_load():
    src = """kernel void k(global int *counter, global int *out) {
        int i = get_global_id(0);
        int ticket = atomic_inc(counter);
        out[i] = ticket * 2;
    }"""
    result, mem = run(src, (64,), (64,), counter=np.zeros(1, np.int32), out=np.zeros(64, np.int32))
    insts = stream_of(result).insts
    units = [int(u) for u in insts["unit"]]
    atomic = units.index(Unit.VMEM)
    assert insts["write"][atomic] == 2  # travels as a write, returns its old value
    store = units.index(Unit.VMEM, atomic + 1)
    assert Unit.WAITCNT in units[atomic:store]
    assert sorted(mem["out"].tolist()) == [2 * t for t in range(64)]


def test_a_uniform_if_else_jumps_over_the_else_side_only_when_taken():
    src = """kernel void k(global int *out, int n)
{
    if (n > 0) { out[get_global_id(0)] = 1; } else { out[get_global_id(0)] = 2; }
}"""
    counts = {}
    for n in (1, -1):
        res, mem = run(src, (64,), (64,), out=np.zeros(64, np.int32), n=n)
        insts = stream_of(res).insts
        on_if = insts["unit"][insts["line"] == 3]
        counts[n] = (int((on_if == Unit.BRANCH).sum()), int((on_if == Unit.SALU).sum()))
        assert (mem["out"] == (1 if n > 0 else 2)).all()
    (taken_branches, taken_salu), (skipped_branches, skipped_salu) = counts[1], counts[-1]
    assert taken_branches == skipped_branches + 1  # s_branch over the else side
    assert taken_salu == skipped_salu  # no EXEC flip: the condition is uniform
