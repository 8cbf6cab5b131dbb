"""The C that real OpenCL kernels use: each feature in a kernel written here, checked against numpy."""
import math

import numpy as np
import pytest

from simulator.kernels import (
    KernelError,
    LocalMem,
    Memory,
    Unsupported,
    compile_source,
    launch,
)
from simulator.kernels.images import (
    CLK_ADDRESS_CLAMP,
    CLK_ADDRESS_REPEAT,
    CLK_FILTER_LINEAR,
    CLK_FILTER_NEAREST,
    CLK_NORMALIZED_COORDS_TRUE,
)

RNG = np.random.default_rng(7)


def run(src, global_size, local_size, args, kernel=None, options=None, path="t.cl"):
    """Compile and launch; numpy arrays become buffers, written in place."""
    program = compile_source(path, src, options, kernel=kernel)
    memory = Memory()
    bound = {k: memory.buffer(k, v) if isinstance(v, np.ndarray) and v.ndim >= 1 else v
             for k, v in args.items()}
    launch(program, kernel, global_size, local_size, bound)
    return program


def compile_error(src):
    """The message of the ``KernelError`` that compiling ``src`` (as t.cl) raises."""
    with pytest.raises(KernelError) as info:
        compile_source("t.cl", src)
    return str(info.value)


# -- preprocessor ---------------------------------------------------------------------------
def test_conditionals_function_macros_and_build_options():
    src = """
#if defined(cl_khr_fp64)
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif
#ifndef SCALE
#define SCALE 2
#elif SCALE > 10
#error too big
#endif
#define MAD3(a, b, c) ((a) * (b) + (c))
#if __OPENCL_VERSION__ >= CL_VERSION_1_2 && defined(TWICE)
#define EXTRA 1.0f
#else
#define EXTRA 0.0f
#endif
__kernel void k(__global float *out, __global const float *in) {
    int i = get_global_id(0);
    out[i] = MAD3(in[i], SCALE, EXTRA) + M_PI_F * 0.0f + (FLT_MAX > 1.0f);
}"""
    data = RNG.random(64, dtype=np.float32)
    out = np.zeros(64, np.float32)
    run(src, (64,), (64,), {"out": out, "in": data}, options="-D SCALE=3 -DTWICE -cl-mad-enable")
    np.testing.assert_allclose(out, data * 3 + 1.0 + 1.0, rtol=1e-6)
    run(src, (64,), (64,), {"out": out, "in": data}, options="-D SCALE=3 -D TWICE -U TWICE")
    np.testing.assert_allclose(out, data * 3 + 0.0 + 1.0, rtol=1e-6)
    with pytest.raises(KernelError, match=r"t.cl:8:1: #error too big"):
        compile_source("t.cl", src, "-DSCALE=11")


def test_include_with_search_path_and_errors_in_the_header(tmp_path):
    (tmp_path / "inc").mkdir()
    (tmp_path / "inc" / "common.h").write_text(
        "#define WIDTH 4\ninline float twice(float x) { return 2.0f * x; }\n")
    src = '#include "common.h"\n__kernel void k(__global float *a) {\n  int i = get_global_id(0);\n' \
          '  a[i] = twice(a[i]) + WIDTH;\n}\n'
    path = str(tmp_path / "k.cl")
    data = np.arange(64, dtype=np.float32)
    run(src, (64,), (64,), {"a": data}, options=f"-I {tmp_path / 'inc'}", path=path)
    np.testing.assert_array_equal(data, np.arange(64) * 2 + 4)
    with pytest.raises(KernelError, match=r"#include file 'common.h' not found \(add its folder with -I DIR\)"):
        compile_source(path, src)
    (tmp_path / "inc" / "common.h").write_text("#define WIDTH 4\nfloat twice(float x) { return x +; }\n")
    with pytest.raises(KernelError) as info:
        compile_source(path, src, f"-I {tmp_path / 'inc'}")
    assert str(info.value).split(":")[0].endswith("common.h") and info.value.line == 2


def test_error_column_points_into_the_users_line_through_a_macro():
    src = "#define ADD(a, b) ((a) + (b))\n__kernel void k(__global float *a) {\n" \
          "  a[0] = ADD(1.0f, 2.0f) + undefined_name;\n}\n"
    with pytest.raises(KernelError) as info:
        compile_source("t.cl", src)
    assert (info.value.line, info.value.col) == (3, 28), str(info.value)
    assert "'undefined_name' is not declared" in str(info.value)


def test_annotations_still_work_after_the_preprocessor():
    src = """#define N 64
@emit float seen[N];
@bind ["class": "bar", "data": ["seen"]]
__kernel void k(__global float *a) {
    int i = get_global_id(0);
    @watch a;
    seen = a[i] * 2.0f;
}"""
    program = compile_source("t.cl", src)
    assert [e.name for e in program.emits] == ["seen"] and program.emits[0].length == 64
    assert program.binds[0][1]["class"] == "bar"


def test_line_markers_of_preprocessed_sources_are_accepted_and_positions_stay_in_the_file():
    # Suites ship preprocessed kernels with GNU line markers (`# 12 "kernel.cl" 2`).
    src = '# 1 "../src/kernel.cl"\n# 1 "<built-in>"\ntypedef enum {A = 0, B, C} E;\n' \
          '# 12 "../src/kernel.cl" 2\n__kernel void k(__global int *a) {\n#line 40 "other.cl"\n' \
          '  a[get_global_id(0)] = C * 10 + B;\n}\n'
    out = np.zeros(8, np.int32)
    run(src, (8,), (8,), {"a": out})
    np.testing.assert_array_equal(out, np.full(8, 21))
    with pytest.raises(KernelError) as info:
        compile_source("t.cl", src.replace("C * 10", "missing * 10"))
    assert (info.value.path, info.value.line) == ("t.cl", 7), str(info.value)


def test_bad_build_option_is_reported():
    with pytest.raises(KernelError, match="unknown option '--fast'"):
        compile_source("t.cl", "__kernel void k(__global int *a) { a[0] = 1; }", "--fast")


# -- file scope ------------------------------------------------------------------------------
def test_typedef_enum_and_constant_tables():
    src = """
typedef float real;
typedef struct { real w; int tap; } Tap;
enum Mode { PLAIN, SCALED = 4, NEXT };
__constant real coeffs[5] = {0.1f, 0.2f, 0.4f, 0.2f, 0.1f};
__constant int2 shifts[] = {(int2)(1, 2), (int2)(3, 4)};
__constant Tap taps[2] = {{0.5f, 1}, {0.25f, 2}};
__constant int scale = SCALED;
__kernel void blur(__global const real *in, __global real *out, int n) {
    int i = get_global_id(0);
    real acc = 0;
    for (int k = -2; k <= 2; k++) {
        int j = clamp(i + k, 0, n - 1);
        acc += coeffs[k + 2] * in[j];
    }
    out[i] = acc * scale + shifts[1].y + taps[1].w * taps[0].tap + NEXT;
}"""
    n = 128
    data = RNG.random(n, dtype=np.float32)
    out = np.zeros(n, np.float32)
    run(src, (n,), (64,), {"in": data, "out": out, "n": n})
    padded = np.pad(data, 2, mode="edge")
    ref = sum(np.float32(c) * padded[k:k + n] for k, c in enumerate([0.1, 0.2, 0.4, 0.2, 0.1]))
    np.testing.assert_allclose(out, ref * 4 + 4 + 0.25 + 5, rtol=1e-5)


# -- structs ---------------------------------------------------------------------------------
PARTICLE = np.dtype({"names": ["pos", "mass", "id"], "formats": [(np.float32, (4,)), np.float32, np.int32],
                     "offsets": [0, 16, 20], "itemsize": 32})


def test_structs_in_buffers_private_variables_and_through_pointers():
    src = """
typedef struct { float4 pos; float mass; int id; } Particle;
struct Pair { float a, b; };
float energy(const Particle *p) { return 0.5f * p->mass * dot(p->pos, p->pos); }
__kernel void step(__global Particle *ps, __global float *e, struct Pair k) {
    int i = get_global_id(0);
    Particle p = ps[i];
    p.pos.x += k.a;
    p.mass = p.mass * k.b;
    __global Particle *q = &ps[i];
    q->id = i * 3;
    ps[i].pos = p.pos;
    (*q).mass = p.mass;
    e[i] = energy(&p);
}"""
    n = 64
    ps = np.zeros(n, dtype=PARTICLE)
    ps["pos"] = RNG.random((n, 4), dtype=np.float32)
    ps["mass"] = RNG.random(n, dtype=np.float32)
    before = ps.copy()
    e = np.zeros(n, np.float32)
    pair = np.array((1.0, 2.0), dtype=[("a", np.float32), ("b", np.float32)])
    run(src, (n,), (64,), {"ps": ps, "e": e, "k": pair})
    pos = before["pos"].copy()
    pos[:, 0] += 1
    mass = before["mass"] * 2
    np.testing.assert_allclose(ps["pos"], pos)
    np.testing.assert_allclose(ps["mass"], mass)
    np.testing.assert_array_equal(ps["id"], np.arange(n) * 3)
    np.testing.assert_allclose(e, 0.5 * mass * (pos * pos).sum(1), rtol=1e-5)



def test_struct_and_union_variables_with_array_members():
    # Hash kernels view a word as bytes through a private union ({uint w; uchar b[4];}), and
    # small-matrix code passes structs holding arrays by value; both are private variables.
    src = """
typedef union { uint w; uchar b[4]; } Word;
typedef struct { float m[4]; int n; } Mat;
typedef struct { Mat a; uint tag[2]; } Outer;
float trace(Mat x) { return x.m[0] + x.m[3]; }
Mat scaled(Mat x, float s) { Mat r; for (int k = 0; k < 4; k++) r.m[k] = x.m[k] * s; r.n = x.n; return r; }
__kernel void k(__global const uint *in, __global uint *bytes, __global float *o) {
    int i = get_global_id(0);
    Word u; u.w = in[i];
    bytes[i] = u.b[i % 4];
    u.b[0] = 0xAB;
    bytes[8 + i] = u.w;
    Mat a = {{1.0f, 2.0f, 3.0f, 4.0f + i}, 7};
    Mat b = a;
    b.m[i % 4] = 30.0f;
    Mat c = scaled(b, 2.0f);
    Outer w; w.a = c; w.tag[1] = 5u;
    o[i * 4 + 0] = a.m[i % 4];
    o[i * 4 + 1] = trace(b);
    o[i * 4 + 2] = c.m[3] + c.n;
    o[i * 4 + 3] = w.a.m[1] + w.tag[1];
}"""
    n = 8
    words = RNG.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
    bytes_out = np.zeros(2 * n, np.uint32)
    o = np.zeros(4 * n, np.float32)
    run(src, (n,), (n,), {"in": words, "bytes": bytes_out, "o": o})
    lane = np.arange(n)
    np.testing.assert_array_equal(bytes_out[:n], (words >> (8 * (lane % 4))) & 0xFF)
    np.testing.assert_array_equal(bytes_out[n:], (words & 0xFFFFFF00) | 0xAB)
    a = np.tile([1.0, 2.0, 3.0, 4.0], (n, 1))
    a[:, 3] += lane
    b = a.copy()
    b[lane, lane % 4] = 30.0
    np.testing.assert_allclose(o[0::4], a[lane, lane % 4])
    np.testing.assert_allclose(o[1::4], b[:, 0] + b[:, 3])
    np.testing.assert_allclose(o[2::4], 2 * b[:, 3] + 7)
    np.testing.assert_allclose(o[3::4], 2 * b[:, 1] + 5)


def test_by_value_kernel_arguments_whose_address_is_taken_or_that_hold_arrays():
    # A random-number kernel advances its seed argument through a helper (`next(&seed)`);
    # a struct argument may carry a small array (a filter's taps).
    src = """
typedef struct { float taps[3]; int n; } Taps;
uint next(uint *s) { *s = *s * 1664525u + 1013904223u; return *s >> 8; }
__kernel void k(__global uint *r, __global float *f, uint seed, Taps t) {
    int i = get_global_id(0);
    seed += i;
    uint a = next(&seed);
    r[i] = a + next(&seed);
    f[i] = t.taps[i % 3] * t.n;
}"""
    n = 6
    r = np.zeros(n, np.uint32)
    f = np.zeros(n, np.float32)
    taps = np.array(([0.5, 1.5, 2.5], 4), dtype=[("taps", np.float32, (3,)), ("n", np.int32)])
    run(src, (n,), (n,), {"r": r, "f": f, "seed": 99, "t": taps})
    expect = []
    for lane in range(n):
        s = (99 + lane) * 1664525 + 1013904223 & 0xFFFFFFFF
        t = s * 1664525 + 1013904223 & 0xFFFFFFFF
        expect.append(((s >> 8) + (t >> 8)) & 0xFFFFFFFF)
    np.testing.assert_array_equal(r, expect)
    np.testing.assert_allclose(f, np.array([0.5, 1.5, 2.5])[np.arange(n) % 3] * 4)

# -- helper functions and pointers -------------------------------------------------------------
def test_helpers_with_pointer_params_and_returns_under_divergence():
    src = """
int classify(int v) {
    if (v < 10) return 0;
    if (v < 50) { return 1; }
    for (int k = 0; k < 3; k++) { if (v == 90 + k) return 7; }
    return 2;
}
void accumulate(__global int *hist, __local int *mine, int bin) {
    atomic_inc(&hist[bin]);
    atomic_add(mine + bin, 1);
}
float sum3(__global const float *p) { return p[0] + *(p + 1) + p[2]; }
__kernel void k(__global const int *v, __global int *hist, __global int *cls,
                __global const float *f, __global float *s) {
    __local int mine[8];
    int i = get_global_id(0);
    if (get_local_id(0) < 8) mine[get_local_id(0)] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    int c = classify(v[i]);
    cls[i] = c;
    accumulate(hist, mine, c);
    s[i] = (i % 3 == 0) ? sum3(f + i) : -sum3(&f[i]);
}"""
    n = 128
    v = RNG.integers(0, 100, n).astype(np.int32)
    v[:4] = [90, 91, 92, 93]
    hist = np.zeros(8, np.int32)
    cls = np.zeros(n, np.int32)
    f = RNG.random(n + 2, dtype=np.float32)
    s = np.zeros(n, np.float32)
    run(src, (n,), (64,), {"v": v, "hist": hist, "cls": cls, "f": f, "s": s})
    ref = np.where(v < 10, 0, np.where(v < 50, 1, np.where((v >= 90) & (v <= 92), 7, 2)))
    np.testing.assert_array_equal(cls, ref)
    np.testing.assert_array_equal(hist, np.bincount(ref, minlength=8))
    sums = f[:-2] + f[1:-1] + f[2:]
    np.testing.assert_allclose(s, np.where(np.arange(n) % 3 == 0, sums, -sums), rtol=1e-6)


def test_pointer_variables_arithmetic_casts_and_address_taken_locals():
    src = """
void swap(float *a, float *b) { float t = *a; *a = *b; *b = t; }
__kernel void k(__global float *data, __global float4 *out, int n) {
    int i = get_global_id(0);
    __global float *row = data + i * 4;
    __global float *end = row + 4;
    float total = 0.0f;
    for (__global float *p = row; p < end; p++) total += *p;
    float x = row[0], y = row[3];
    if (x > y) swap(&x, &y);
    __global float4 *as4 = (__global float4 *)data;
    float4 v = as4[i];
    out[i] = (float4)(total, x, y, v.w - v.x);
    long span = end - row;
    row[1] = (float)span;
}"""
    n = 64
    data = RNG.random(n * 4, dtype=np.float32)
    rows = data.reshape(n, 4).copy()
    out = np.zeros((n, 4), np.float32)
    run(src, (n,), (64,), {"data": data, "out": out, "n": n})
    expect = np.stack([rows.sum(1), np.minimum(rows[:, 0], rows[:, 3]), np.maximum(rows[:, 0], rows[:, 3]),
                       rows[:, 3] - rows[:, 0]], axis=1)
    np.testing.assert_allclose(out, expect, rtol=1e-5)
    assert (data.reshape(n, 4)[:, 1] == 4).all()


def test_local_scalars_qualifiers_attributes_and_increments_in_expressions():
    src = """
__kernel __attribute__((reqd_work_group_size(64, 1, 1)))
void k(__global const int * restrict in, __global volatile int *out, __const int bias) {
    __local int total;
    __local int buf[64];
    const int lid = get_local_id(0);
    if (lid == 0) total = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    atomic_add(&total, in[get_global_id(0)]);
    barrier(CLK_LOCAL_MEM_FENCE);
    int j = 0, t;
    buf[j++ + lid * 0] = 5;
    t = j++;
    out[get_global_id(0)] = total + bias + t + j + (lid == 0 ? buf[0] : 0);
}"""
    n = 128
    data = RNG.integers(0, 10, n).astype(np.int32)
    out = np.zeros(n, np.int32)
    run(src, (n,), (64,), {"in": data, "out": out, "bias": 100})
    sums = np.repeat(data.reshape(2, 64).sum(1), 64)
    np.testing.assert_array_equal(out, sums + 100 + 1 + 2 + np.tile(np.r_[5, np.zeros(63, int)], 2))


def test_switch_with_fallthrough_default_and_break_inside_a_loop():
    src = """
__kernel void k(__global const int *v, __global int *out) {
    int i = get_global_id(0);
    int r = 0;
    for (int rep = 0; rep < 2; rep++) {
        switch (v[i] % 5) {
            case 0: r += 1; break;
            case 1: r += 10;
            case 2: r += 100; break;
            default: r += 1000;
            case 4: if (i % 2) break; r += 5; continue;
        }
        r += 7;
    }
    out[i] = r;
}"""
    n = 128
    v = np.arange(n, dtype=np.int32)
    out = np.zeros(n, np.int32)
    run(src, (n,), (64,), {"v": v, "out": out})
    ref = []
    for i in range(n):
        r = 0
        for _ in range(2):
            m = i % 5
            if m == 0:
                r += 1
            elif m in (1, 2):
                r += (10 if m == 1 else 0) + 100
            else:
                r += 1000 if m == 3 else 0
                if not i % 2:
                    r += 5
                    continue
            r += 7
        ref.append(r)
    np.testing.assert_array_equal(out, ref)


def test_recursion_is_refused_by_name():
    src = "int f(int n) { return n <= 1 ? 1 : n * f(n - 1); }\n" \
          "__kernel void k(__global int *a) {\n  a[0] = f(4);\n}\n"
    with pytest.raises(Unsupported) as info:
        compile_source("t.cl", src)
    assert str(info.value).startswith("t.cl:1:")
    assert "recursion (f -> f): OpenCL C forbids recursive calls" in str(info.value)


# -- types and built-ins -----------------------------------------------------------------------
def test_double_long_ulong_and_vector_ternary():
    src = """
__kernel void k(__global const double *x, __global double *y, __global ulong *h,
                __global const float4 *a, __global float4 *b) {
    int i = get_global_id(0);
    double v = x[i];
    y[i] = sqrt(v) * 0.1 + (double)(long)i;
    ulong acc = 1469598103934665603UL;
    acc ^= (ulong)i;
    acc *= 1099511628211UL;
    h[i] = acc;
    float4 p = a[i];
    b[i] = p > 0.5f ? p : -p;
}"""
    n = 64
    x = RNG.random(n) * 100
    y = np.zeros(n)
    h = np.zeros(n, np.uint64)
    a = RNG.random((n, 4), dtype=np.float32)
    b = np.zeros((n, 4), np.float32)
    run(src, (n,), (64,), {"x": x, "y": y, "h": h, "a": a, "b": b})
    np.testing.assert_allclose(y, np.sqrt(x) * 0.1 + np.arange(n), rtol=1e-12)
    with np.errstate(over="ignore"):
        ref = (np.uint64(1469598103934665603) ^ np.arange(n, dtype=np.uint64)) * np.uint64(1099511628211)
    np.testing.assert_array_equal(h, ref)
    np.testing.assert_array_equal(b, np.where(a > 0.5, a, -a))


def test_ulong_shifts_and_enumerators_past_int_max_as_mwc64x_writes_them():
    """MWC64X (a random number generator many kernels include) shifts ulongs by int
    counts and names constants past INT_MAX in enums; Clang gives an enumerator the first
    of int, uint, long, ulong that holds it."""
    src = """
enum { MWC64X_A = 4294883355U, MWC_BASEID = 4077358422479273989UL, SMALL = 3, NEXT };
__kernel void k(__global ulong *h, __global const int *s, __global ulong *e) {
    int i = get_global_id(0);
    ulong x = 0x9E3779B97F4A7C15UL ^ (ulong)i;
    x ^= x << s[i];
    x ^= x >> 7;
    ulong2 v = (ulong2)(x, 1UL) << (ulong2)(3UL, 63UL);
    h[i] = x + v.x + v.y;
    if (i == 0) { e[0] = MWC64X_A; e[1] = MWC_BASEID; e[2] = NEXT; e[3] = MWC64X_A * 2UL; }
}"""
    n = 64
    s = RNG.integers(0, 64, n, dtype=np.int32)
    h = np.zeros(n, np.uint64)
    e = np.zeros(4, np.uint64)
    run(src, (n,), (64,), {"h": h, "s": s, "e": e})
    x = np.uint64(0x9E3779B97F4A7C15) ^ np.arange(n, dtype=np.uint64)
    x ^= x << s.astype(np.uint64)
    x ^= x >> np.uint64(7)
    with np.errstate(over="ignore"):
        ref = x + (x << np.uint64(3)) + (np.uint64(1) << np.uint64(63))
    np.testing.assert_array_equal(h, ref)
    np.testing.assert_array_equal(e, [4294883355, 4077358422479273989, 4, 2 * 4294883355])


def test_vectors_of_narrow_integers_compute_in_their_own_width():
    """OpenCL C 6.2.6: the integer promotions apply to scalars only; ``uchar4 + uchar4`` is a
    ``uchar4`` and wraps, so what is computed from it (a shift, a conversion, a comparison)
    sees the wrapped sum. A scalar beside a vector takes the vector's component type; two
    ``uchar`` scalars still add as ints. Shift counts use the component's low bits (6.3.j)."""
    src = """
__kernel void k(__global const uchar4 *a, __global const uchar4 *b, __global uchar4 *avg,
                __global float4 *sum, __global int4 *carry, __global uchar4 *ops,
                __global const short4 *s, __global short4 *halved, __global uint4 *u,
                __global float4 *f, __global int *scalar, __global uchar4 *mask) {
    int i = get_global_id(0), n = get_global_size(0);
    uchar4 x = a[i], y = b[i];
    avg[i] = (x + y) >> 1;
    sum[i] = convert_float4(x + y);
    carry[i] = convert_int4(x + y < x);
    ops[i * 4 + 0] = -x;
    ops[i * 4 + 1] = ~x ^ (uchar)0x0F;
    ops[i * 4 + 2] = x * (uchar)3 / (uchar)2;
    uchar4 c = x;
    c++;
    c += (uchar)1;
    ops[i * 4 + 3] = c << 9;
    avg[n + i] = (max(x, y) + min(x, y)) >> 1;
    avg[2 * n + i] = (abs(as_char4(x)) + y) >> 1;
    halved[i] = (s[i] + s[i]) / (short)2 + (char)1;
    u[i] = convert_uint4(x) + 1;
    f[i] = convert_float4(y) * 2;
    scalar[i] = (x.x + y.x) >> 1;
    mask[i] = as_uchar4(x > y);
}"""
    n = 64
    a = RNG.integers(0, 256, (n, 4), dtype=np.uint8)
    b = RNG.integers(0, 256, (n, 4), dtype=np.uint8)
    s = RNG.integers(-2**15, 2**15, (n, 4), dtype=np.int16)
    avg, ops = np.zeros((n * 3, 4), np.uint8), np.zeros((n * 4, 4), np.uint8)
    total, f = np.zeros((n, 4), np.float32), np.zeros((n, 4), np.float32)
    carry, u = np.zeros((n, 4), np.int32), np.zeros((n, 4), np.uint32)
    halved, scalar, mask = np.zeros((n, 4), np.int16), np.zeros(n, np.int32), np.zeros((n, 4), np.uint8)
    run(src, (n,), (64,), {"a": a, "b": b, "avg": avg, "sum": total, "carry": carry, "ops": ops,
                           "s": s, "halved": halved, "u": u, "f": f, "scalar": scalar, "mask": mask})
    x, y = a.astype(np.int64), b.astype(np.int64)
    wrapped = (x + y) % 256
    magnitude = np.abs(a.view(np.int8).astype(np.int64))
    np.testing.assert_array_equal(avg.reshape(3, n, 4), [wrapped >> 1, wrapped >> 1,
                                                         (magnitude + y) % 256 >> 1])
    np.testing.assert_array_equal(total, wrapped)
    np.testing.assert_array_equal(carry, np.where(wrapped < x, -1, 0))
    ops = ops.reshape(n, 4, 4)
    np.testing.assert_array_equal(ops[:, 0], -x % 256)
    np.testing.assert_array_equal(ops[:, 1], (~x ^ 0x0F) % 256)
    np.testing.assert_array_equal(ops[:, 2], x * 3 % 256 // 2)
    np.testing.assert_array_equal(ops[:, 3], (x + 2) % 256 * 2 % 256)
    doubled = (2 * s.astype(np.int64) + 2**15) % 2**16 - 2**15
    np.testing.assert_array_equal(halved, np.trunc(doubled / 2) + 1)
    np.testing.assert_array_equal(u, x + 1)
    np.testing.assert_array_equal(f, y * 2)
    np.testing.assert_array_equal(scalar, (x[:, 0] + y[:, 0]) >> 1)
    np.testing.assert_array_equal(mask, np.where(x > y, 255, 0))   # a char4 of -1 and 0


@pytest.mark.parametrize("stmt,message", [
    ("x = x + 1;", "operator '+': the scalar operand (int) has a greater rank than the vector's "
                   "components (uchar4); cast it to uchar"),
    ("x += 1;", "operator '+': the scalar operand (int)"),
    ("v = v + 1u;", "the scalar operand (uint) has a greater rank than the vector's components (int4)"),
    ("v = v * 2.0f;", "the scalar operand (float) has a greater rank than the vector's components (int4)"),
    ("v = v + g;", "operator '+': vectors of different types (int4, float4)"),
    ("x = v.x ? x : 1;", "operator '?:': the scalar operand (int)"),
])
def test_a_vector_refuses_a_scalar_of_greater_rank_and_other_vector_types(stmt, message):
    """OpenCL C 6.2.6: a scalar operand that outranks the vector's component type (an
    unsigned integer outranks the signed one of its size, a float every integer) is an
    error, literals included, and so are two vectors of different types."""
    src = ("__kernel void k(__global uchar4 *a, __global int4 *b, __global float4 *f) {\n"
           "  uchar4 x = a[0]; int4 v = b[0]; float4 g = f[0];\n"
           f"  {stmt}\n}}")
    text = compile_error(src)
    assert text.startswith("t.cl:3:") and message in text, text


def test_builtins_real_kernels_use():
    src = """
__kernel void k(__global const float4 *a, __global const float4 *b, __global float *f,
                __global int4 *iv, __global uint *u) {
    int i = get_global_id(0);
    float4 x = a[i], y = b[i];
    float3 c = cross(x.xyz, y.xyz);
    f[i * 8 + 0] = mad(x.x, y.x, 1.0f) + fma(x.y, y.y, 0.0f);
    f[i * 8 + 1] = mix(x.x, y.x, 0.25f) + clamp(x.y, 0.2f, 0.4f);
    f[i * 8 + 2] = dot(x, y) + length(x) + distance(x, y);
    f[i * 8 + 3] = normalize(x).z + c.x + native_sqrt(x.w) + half_exp(x.x);
    f[i * 8 + 4] = select(x.x, y.x, isgreater(x.x, y.x)) + (isnan(x.x / 0.0f) ? 1.0f : 0.0f);
    f[i * 8 + 5] = max(x, y).w + min(x, 0.5f).y + fabs(-x.z);
    f[i * 8 + 6] = convert_float(convert_int_sat_rte(x.x * 1000.0f)) + as_float(as_uint(y.y));
    f[i * 8 + 7] = smoothstep(0.0f, 1.0f, x.x) + sign(x.y - 0.5f);
    int4 m = convert_int4(x * 10.0f);
    iv[i] = select(m, (int4)(-1), x > y) + (int4)(any(x > 0.9f), all(x >= 0.0f), 0, 0);
    u[i] = popcount((uint)i) + clz((uint)i + 1u) + rotate((uint)i, 3u) + mul_hi((uint)i, 0x80000000u)
           + abs_diff(i, 40) + hadd((uint)i, 7u) + add_sat(2147483600, i);
}"""
    n = 64
    a = RNG.random((n, 4), dtype=np.float32)
    b = RNG.random((n, 4), dtype=np.float32)
    f = np.zeros(n * 8, np.float32)
    iv = np.zeros((n, 4), np.int32)
    u = np.zeros(n, np.uint32)
    run(src, (n,), (64,), {"a": a, "b": b, "f": f, "iv": iv, "u": u})
    f = f.reshape(n, 8)
    x, y = a.astype(np.float64), b.astype(np.float64)
    norm = np.linalg.norm(x, axis=1)
    c = np.cross(x[:, :3], y[:, :3])
    expect = np.stack([
        x[:, 0] * y[:, 0] + 1 + x[:, 1] * y[:, 1],
        x[:, 0] + (y[:, 0] - x[:, 0]) * 0.25 + np.clip(x[:, 1], 0.2, 0.4),
        (x * y).sum(1) + norm + np.linalg.norm(x - y, axis=1),
        x[:, 2] / norm + c[:, 0] + np.sqrt(x[:, 3]) + np.exp(x[:, 0]),
        np.where(x[:, 0] > y[:, 0], y[:, 0], x[:, 0]) + 0.0,
        np.maximum(x, y)[:, 3] + np.minimum(x, 0.5)[:, 1] + x[:, 2],
        np.rint(x[:, 0] * 1000) + y[:, 1],
        np.clip(x[:, 0], 0, 1) ** 2 * (3 - 2 * np.clip(x[:, 0], 0, 1)) + np.sign(x[:, 1] - 0.5),
    ], axis=1)
    np.testing.assert_allclose(f, expect, rtol=1e-4, atol=1e-5)
    m = np.trunc(a * 10).astype(np.int32)
    ref_iv = np.where(a > b, -1, m)
    ref_iv[:, 0] += (a > 0.9).any(1)
    ref_iv[:, 1] += (a >= 0).all(1)
    np.testing.assert_array_equal(iv, ref_iv)
    i = np.arange(n, dtype=np.uint64)
    pop = np.array([k.bit_count() for k in range(n)])
    clz = np.array([32 - (k + 1).bit_length() for k in range(n)])
    rot = (i << 3) & 0xFFFFFFFF
    ref_u = pop + clz + rot + (i * 0x80000000 >> 32) + np.abs(np.arange(n) - 40) + (i + 7) // 2 \
        + np.minimum(2147483600 + np.arange(n), 2**31 - 1)
    np.testing.assert_array_equal(u, (ref_u % 2**32).astype(np.uint32))


def test_a_row_of_a_multidimensional_array_is_a_pointer_to_its_first_element():
    """``__local float *row = tile[ty];``, as tiled kernels walk a row of their tile."""
    src = """
__kernel void k(__global const float *x, __global float *o) {
    __local float tile[4][17];
    __local float cube[2][3][5];
    int l = get_local_id(0);
    for (int j = 0; j < 17; j++) tile[l][j] = x[l * 17 + j];
    if (l < 2) for (int j = 0; j < 15; j++) cube[l][j / 5][j % 5] = j + 100 * l;
    barrier(CLK_LOCAL_MEM_FENCE);
    __local float *row = tile[(l + 1) % 4];
    float m[3][2] = {{1, 2}, {3, 4}, {5, 6}};
    float *r = m[2];
    __local float *plane = cube[1];
    __local float *line = cube[1][2];
    o[l] = row[16] + r[1] + plane[7] + line[4] + *(tile[l] + 3);
}"""
    x = np.arange(68, dtype=np.float32)
    o = np.zeros(4, np.float32)
    run(src, (4,), (4,), {"x": x, "o": o})
    tile = x.reshape(4, 17)
    cube = np.arange(15).reshape(3, 5) + 100
    expect = [tile[(k + 1) % 4, 16] + 6 + cube.flat[7] + cube[2, 4] + tile[k, 3] for k in range(4)]
    np.testing.assert_array_equal(o, expect)


def test_special_functions_of_finance_and_statistics_kernels():
    """erf and erfc (the normal distribution in option pricing), lgamma and tgamma, and
    nan(), per value in the argument's type, in float and double."""
    src = """
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
__kernel void k(__global const float *x, __global float *f, __global double *d) {
    int i = get_global_id(0);
    float v = x[i];
    f[i * 5 + 0] = erf(v);
    f[i * 5 + 1] = erfc(v);
    f[i * 5 + 2] = lgamma(fabs(v) + 0.5f);
    f[i * 5 + 3] = tgamma(fabs(v) + 0.5f);
    f[i * 5 + 4] = isnan(nan(7u)) ? 1.0f : 0.0f;
    d[i] = erf((double)v) - erfc((double)v);
}"""
    n = 64
    x = np.linspace(-3, 3, n).astype(np.float32)
    f = np.zeros(n * 5, np.float32)
    d = np.zeros(n)
    run(src, (n,), (32,), {"x": x, "f": f, "d": d})
    v = x.astype(np.float64)
    expect = np.array([[math.erf(t), math.erfc(t), math.lgamma(abs(t) + 0.5), math.gamma(abs(t) + 0.5),
                        1.0] for t in v])
    np.testing.assert_allclose(f.reshape(n, 5), expect, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(d, [math.erf(t) - math.erfc(t) for t in v], rtol=1e-12, atol=1e-15)
    # C's values at the poles and past the range: tgamma(±0) = ±inf, NaN at the negative
    # integers and -inf, +inf past its range; lgamma +inf at the poles and the infinities.
    edges = np.array([0.0, -0.0, -2.0, -np.inf, 200.0, np.inf], np.float32)
    out = np.zeros(12, np.float32)
    run("""__kernel void k(__global const float *x, __global float *o) {
    int i = get_global_id(0); o[i] = tgamma(x[i]); o[6 + i] = lgamma(x[i]); }""",
        (6,), (6,), {"x": edges, "o": out})
    np.testing.assert_array_equal(out[:6], [np.inf, -np.inf, np.nan, np.nan, np.inf, np.inf])
    np.testing.assert_allclose(out[6:], [np.inf] * 4 + [math.lgamma(200), np.inf], rtol=1e-6)


def test_ilogb_and_upsample():
    src = """
__kernel void k(__global const float *x, __global int *e, __global ulong *u, __global short4 *s) {
    int i = get_global_id(0);
    e[i] = ilogb(x[i]);
    u[i] = upsample((uint)i, 0xFFFFFFFFu - (uint)i);
    s[i] = upsample((char4)((char)i, (char)-i, 1, -1), (uchar4)(255, 0, (uchar)i, 7));
}"""
    x = np.array([0, 1, 2, 3.5, -8, 1e-3, np.inf, np.nan] * 2, dtype=np.float32)
    e = np.zeros(16, np.int32)
    u = np.zeros(16, np.uint64)
    s = np.zeros((16, 4), np.int16)
    run(src, (16,), (16,), {"x": x, "e": e, "u": u, "s": s})
    # Clang's OpenCL headers: FP_ILOGB0 is INT_MIN, FP_ILOGBNAN INT_MAX.
    np.testing.assert_array_equal(e[:8], [-2**31, 0, 1, 1, 3, -10, 2**31 - 1, 2**31 - 1])
    i = np.arange(16, dtype=np.uint64)
    np.testing.assert_array_equal(u, (i << np.uint64(32)) | (np.uint64(0xFFFFFFFF) - i))
    hi = np.stack([np.arange(16), -np.arange(16), np.ones(16), -np.ones(16)], 1).astype(np.int8)
    lo = np.stack([np.full(16, 255), np.zeros(16), np.arange(16), np.full(16, 7)], 1).astype(np.uint8)
    np.testing.assert_array_equal(s, (hi.astype(np.int16) << 8) | lo.astype(np.int16))


def test_atomics_including_cmpxchg_and_64_bit():
    src = """
__kernel void k(__global int *lock, __global int *c, __global long *big, __global int *m) {
    int i = get_global_id(0);
    int old = atomic_cmpxchg(&lock[0], 0, i + 1);
    if (old == 0) c[0] = i;
    atomic_max(&m[0], i * 3);
    atomic_min(&m[1], 1000 - i);
    atom_add(&big[0], (long)i << 32);
    atomic_xchg(&m[2], 42);
    atomic_or(&m[3], 1 << (i % 31));
    atomic_dec(&m[4]);
}"""
    n = 128
    lock = np.zeros(1, np.int32)
    c = np.full(1, -1, np.int32)
    big = np.zeros(1, np.int64)
    m = np.array([0, 10**6, 0, 0, 1000], np.int32)
    run(src, (n,), (64,), {"lock": lock, "c": c, "big": big, "m": m})
    assert lock[0] == 1 and c[0] == 0   # lane order: work-item 0 wins the exchange
    assert big[0] == sum(np.int64(i) << 32 for i in range(n))
    np.testing.assert_array_equal(m, [(n - 1) * 3, 1000 - (n - 1), 42, (1 << 31) - 1, 1000 - n])


# -- images ----------------------------------------------------------------------------------
def test_images_with_samplers():
    src = """
__constant sampler_t edge = CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_CLAMP_TO_EDGE | CLK_FILTER_NEAREST;
__kernel void sobel_like(__read_only image2d_t src, __write_only image2d_t dst, sampler_t s,
                         __global float *probe) {
    int2 p = (int2)(get_global_id(0), get_global_id(1));
    float4 left = read_imagef(src, edge, p + (int2)(-1, 0));
    float4 right = read_imagef(src, edge, p + (int2)(1, 0));
    write_imagef(dst, p, right - left);
    int w = get_image_width(src);
    float2 uv = ((float2)(p.x + 0.5f, p.y + 0.5f)) / (float2)(w, get_image_height(src));
    probe[p.y * w + p.x] = read_imagef(src, s, uv + (float2)(1.0f, 0.0f)).x;
}"""
    h, w = 16, 32
    img = RNG.random((h, w), dtype=np.float32)
    dst = np.zeros((h, w, 4), np.float32)
    probe = np.zeros(h * w, np.float32)
    flags = CLK_NORMALIZED_COORDS_TRUE | CLK_ADDRESS_REPEAT | CLK_FILTER_NEAREST
    run(src, (w, h), (16, 4), {"src": img, "dst": dst, "s": flags, "probe": probe})
    padded = np.pad(img, ((0, 0), (1, 1)), mode="edge")
    np.testing.assert_allclose(dst[:, :, 0], padded[:, 2:] - padded[:, :-2], rtol=1e-6)
    np.testing.assert_array_equal(dst[:, :, 3], 0)
    np.testing.assert_array_equal(probe, img.reshape(-1))


def test_image_uint8_normalized_linear_and_border():
    src = """
__kernel void k(image2d_t src, sampler_t s, __global float4 *out) {
    int x = get_global_id(0);
    out[x] = read_imagef(src, s, (float2)(x * 0.5f, 0.5f));
}"""
    img = np.array([[0, 255, 51, 102]], np.uint8)
    out = np.zeros((8, 4), np.float32)
    run(src, (8,), (8,), {"src": img, "s": CLK_ADDRESS_CLAMP | CLK_FILTER_LINEAR, "out": out})
    texels = np.r_[img[0] / 255.0, 0.0]    # past the right edge: the border (0) of CLAMP
    xs = np.arange(8) * 0.5 - 0.5
    i0 = np.floor(xs).astype(int)
    frac = xs - i0
    left = np.where(i0 < 0, 0.0, texels[np.clip(i0, 0, 4)])
    right = texels[np.clip(i0 + 1, 0, 4)]
    np.testing.assert_allclose(out[:, 0], (1 - frac) * left + frac * right, atol=1e-6)
    # CL_R: alpha is 1 inside and in the border color (0, 0, 0, 1) of an image without alpha.
    np.testing.assert_allclose(out[:, 3], 1.0)


def test_kernel_option_compiles_only_the_named_kernel():
    src = """
__kernel void good(__global int *a) { a[get_global_id(0)] = 3; }
__kernel void bad(__global int *a) { goto x; x: ; }
"""
    with pytest.raises(Unsupported, match="goto"):
        compile_source("t.cl", src)
    a = np.zeros(64, np.int32)
    program = run(src, (64,), (64,), {"a": a}, kernel="good")
    assert list(program.kernels) == ["good"] and (a == 3).all()


# -- errors ----------------------------------------------------------------------------------
UNSUPPORTED = [
    ("__kernel void k(__global int *a) {\n  a[0] = ((struct {int x;}){1}).x;\n}", 2, "unsupported: compound literals"),
    ("__kernel void k(__global int *a) {\n  a[0] = 'ab';\n}", 2, "unsupported: multi-character constant 'ab'"),
    ("__constant int t[2] = {1, 2, 3};\n__kernel void k(__global int *a) { a[0] = t[0]; }", 1,
     "too many initializers for 't' (3 for 2)"),
    ("__kernel void k(__global int *a) {\n  a[0] = a;\n}", 2, "cannot convert a pointer to int"),
    ("void f(int x) { }\n__kernel void k(__global int *a) {\n  a[0] = f(1);\n}", 3,
     "a void function's result used as a value"),
    ("#if\n__kernel void k(__global int *a) { }", 1, "malformed preprocessor directive"),
    ("__kernel void k(__global int *a) {\n  goto end;\n end: ;\n}", 2, "unsupported: goto"),
    ("__kernel void k(image2d_array_t img, __global int *a) {\n  a[0] = 1;\n}", 1,
     "unsupported: type image2d_array_t"),
    ("__kernel void k(__global int *a) {\n  int (*f)(int) = 0;\n}", 2, "unsupported: function pointers"),
    ("__kernel void k(__global int *a) {\n  a[0] = (int)a;\n}", 2, "unsupported: casting a pointer to an integer"),
    ("__kernel void k(__global int *a) {\n  struct { int b : 3; } s;\n}", 2, "unsupported: bit-fields"),
    ("int g = 3;\n__kernel void k(__global int *a) { a[0] = g; }", 1,
     "unsupported: program-scope variables other than __constant ones"),
    ("__kernel void k(__global int *a) {\n  static int s = 0;\n}", 2, "unsupported: storage class 'static'"),
    ("__kernel void k(__global int *a) {\n  a[0] = sizeof(\"abc\");\n}", 2, "unsupported: string literals"),
    ("__kernel void k(__global float *a) {\n  image1d_t e;\n}", 2, "unsupported: type image1d_t"),
    ("__kernel void k(__global int *a) {\n  a[0] = vload_half4(0, a).x;\n}", 2,
     "vload_half4 needs a pointer to half"),
    ("__kernel void k(__global int *a) {\n  a[0] = get_image_array_size(a);\n}", 2,
     "unsupported: built-in get_image_array_size"),
]


@pytest.mark.parametrize("src,line,message", UNSUPPORTED)
def test_each_remaining_unsupported_construct_is_named(src, line, message):
    with pytest.raises(KernelError) as info:
        compile_source("t.cl", src)
    text = str(info.value)
    assert text.startswith(f"t.cl:{line}:") and info.value.col >= 1, text
    assert message in text, text


@pytest.mark.parametrize("src,where", [
    ("__kernel void k(__global int *a, myint n) {\n  a[0] = n;\n}", "t.cl:1:34: unknown type name 'myint'"),
    ("__kernel void k(__global int *a) {\n  vec3 v;\n}", "t.cl:2:3: unknown type name 'vec3'"),
    ("__kernel void k(__global int *a) {\n  struct missing m;\n}", "t.cl:2:"),
])
def test_unknown_type_names_say_so(src, where):
    with pytest.raises(KernelError) as info:
        compile_source("t.cl", src)
    assert str(info.value).startswith(where), str(info.value)


def test_null_pointer_and_pointer_out_of_bounds_are_located():
    src = "__kernel void k(__global int *a) {\n  __global int *p = a + 8;\n  p[get_global_id(0)] = 1;\n}\n"
    a = np.zeros(16, np.int32)
    with pytest.raises(KernelError, match=r"t.cl:3:\d+: out-of-bounds write of a\[16\] through a pointer"):
        run(src, (64,), (64,), {"a": a})
    src = "__kernel void k(__global int *a) {\n  __global int *p = 0;\n  *p = 1;\n}\n"
    with pytest.raises(KernelError, match=r"t.cl:3:\d+: write through a null or invalid pointer"):
        run(src, (64,), (64,), {"a": a})


def test_a_kernel_may_move_its_pointer_arguments():
    src = """
__kernel void k(__global const int *src, __global int *dst, int per_group) {
    src += get_group_id(0) * per_group + get_local_id(0);
    dst += get_global_id(0);
    *dst = src[0] * 10 + 1;
}"""
    src_data = np.arange(256, dtype=np.int32)
    dst = np.zeros(128, np.int32)
    run(src, (128,), (64,), {"src": src_data, "dst": dst, "per_group": 100})
    i = np.arange(128)
    np.testing.assert_array_equal(dst, src_data[(i // 64) * 100 + i % 64] * 10 + 1)


def test_a_scalar_parameter_reassigned_per_lane_starts_as_the_argument_in_every_lane():
    # Parboil's BFS_in_GPU_kernel sets `no_of_nodes = *tot_sum;` (a __local value) inside its
    # level loop, so the parameter is per lane; each lane starts from the argument.
    src = """
__kernel void k(__global int *o, int n, float scale, __local int *t) {
    int l = get_local_id(0);
    if (l == 0) *t = 3;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (l % 2) scale = scale * l;
    while (1) {
        if (l < n) o[l] += 1;
        barrier(CLK_LOCAL_MEM_FENCE);
        if (*t == 0) break;
        n = *t;
        barrier(CLK_LOCAL_MEM_FENCE);
        if (l == 0) *t = *t - 1;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    o[8 + l] = (int)scale;
}"""
    out = np.zeros(16, np.int32)
    run(src, (8,), (8,), {"o": out, "n": 2, "scale": 5.0, "t": LocalMem(1)})
    np.testing.assert_array_equal(out[:8], [4, 3, 1, 0, 0, 0, 0, 0])
    np.testing.assert_array_equal(out[8:], [5 * (lane if lane % 2 else 1) for lane in range(8)])


def test_recording_a_2d_launch_with_a_struct_buffer():
    """The recorder keeps 2-D buffers as images; a buffer of structs is not a picture."""
    from simulator.kernels.records import KernelRecorder

    src = """typedef struct { int dx, dy; } Move;
__kernel void k(__global Move *m, __global float *img) {
    int i = get_global_id(1) * get_global_size(0) + get_global_id(0);
    m[i].dx = i; m[i].dy = -i; img[i] = i;
}"""
    program = compile_source("t.cl", src)
    moves = np.zeros(16, dtype=[("dx", np.int32), ("dy", np.int32)])
    memory = Memory()
    args = {"m": memory.buffer("m", moves), "img": memory.buffer("img", np.zeros(16, np.float32))}
    recorder = KernelRecorder()
    recorder.launch(program, "k", (4, 4), (4, 4), args)
    images = [sql for sql, _ in recorder.buffered if "kernel_image" in sql]
    rows = [list(r) for sql, r in recorder.buffered if "kernel_image" in sql]
    assert images and [r[1] for r in rows[0]] == ["img"]
    np.testing.assert_array_equal(moves["dx"], np.arange(16))


def test_array_parameters_are_pointers_indexed_with_their_extents():
    src = """
float total(const float v[4]) { return v[0] + v[1] + v[2] + v[3]; }
__kernel void k(__global const float *in, __global float *out, __local float rows[][8]) {
    int g = get_group_id(0), l = get_local_id(0);
    rows[l / 8][l % 8] = in[get_global_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    float mine[4] = {rows[l / 8][0], rows[l / 8][1], rows[l / 8][2], rows[l / 8][3]};
    out[get_global_id(0)] = total(mine) + rows[(l / 8 + 1) % 8][l % 8];
}"""
    data = RNG.random(128, dtype=np.float32)
    out = np.zeros(128, np.float32)
    run(src, (128,), (64,), {"in": data, "out": out, "rows": LocalMem(64)})
    tiles = data.reshape(2, 8, 8)
    expect = tiles[:, :, :4].sum(-1)[:, :, None] + np.roll(tiles, -1, axis=1)
    np.testing.assert_allclose(out.reshape(2, 8, 8), expect, rtol=1e-6)


def test_async_copies_half_storage_and_printf(capfd):
    src = r"""
__kernel void k(__global const float *src, __global float *dst, __global half *h, __global float *strided) {
    __local float tile[16];
    __local float every[4];
    event_t e = async_work_group_copy(tile, src + get_group_id(0) * 16, 16, 0);
    e = async_work_group_strided_copy(every, src + get_group_id(0) * 16, 4, 4, e);
    wait_group_events(1, &e);
    int l = get_local_id(0);
    dst[get_global_id(0)] = tile[15 - l] + vload_half(get_global_id(0), h);
    vstore_half(tile[l] * 2.0f, get_global_id(0), h);
    if (l < 4) strided[get_group_id(0) * 4 + l] = every[l];
    if (get_global_id(0) < 2) printf("item %d: %5.2f %v2d %x %%\n", (int)get_global_id(0), tile[l], (int2)(l, 7), 255);
}"""
    s = np.arange(64, dtype=np.float32)
    d = np.zeros(64, np.float32)
    h = np.arange(64).astype(np.float16)
    strided = np.zeros(16, np.float32)
    run(src, (64,), (16,), {"src": s, "dst": d, "h": h, "strided": strided})
    np.testing.assert_array_equal(d, s.reshape(4, 16)[:, ::-1].reshape(-1) + np.arange(64))
    np.testing.assert_array_equal(h, (s * 2).astype(np.float16))
    np.testing.assert_array_equal(strided, s.reshape(4, 4, 4)[:, :, 0].reshape(-1))
    assert capfd.readouterr().out == "item 0:  0.00 0,7 ff %\nitem 1:  1.00 1,7 ff %\n"



def test_vector_half_loads_step_by_n_and_the_aligned_three_by_four():
    """OpenCL C 6.15.7: vload_half3/vstore_half3 address p + offset * 3; the aligned
    vloada_half3/vstorea_half3 address p + offset * 4."""
    src = """
__kernel void k(__global half *h, __global float *plain, __global float *aligned, __global half *out) {
    int i = get_global_id(0);
    float3 p = vload_half3(i, h);
    float3 a = vloada_half3(i, h);
    plain[3 * i] = p.x; plain[3 * i + 1] = p.y; plain[3 * i + 2] = p.z;
    aligned[3 * i] = a.x; aligned[3 * i + 1] = a.y; aligned[3 * i + 2] = a.z;
    vstore_half3(p, i, out);
    vstorea_half3(a, i, out + 32);
}"""
    h = np.arange(64).astype(np.float16)
    plain, aligned = np.zeros(24, np.float32), np.zeros(24, np.float32)
    out = np.zeros(64, np.float16)
    run(src, (8,), (8,), {"h": h, "plain": plain, "aligned": aligned, "out": out})
    np.testing.assert_array_equal(plain, np.arange(24))
    np.testing.assert_array_equal(aligned, np.arange(32).reshape(8, 4)[:, :3].reshape(-1))
    np.testing.assert_array_equal(out[:24], np.arange(24))
    np.testing.assert_array_equal(out[32:].reshape(8, 4)[:, :3], np.arange(32).reshape(8, 4)[:, :3])


def test_build_options_round_trip_through_their_text():
    from simulator.kernels import parse_build_options

    options = parse_build_options("-D N=4 -DSCALE='2 * 3' -U N -I 'my dir' -cl-fast-relaxed-math")
    again = parse_build_options(options.text())
    assert again == options and again.include_dirs == ["my dir"]
    program = compile_source("t.cl", "__kernel void k(__global int *a) { a[0] = SCALE; }", options)
    assert parse_build_options(program.options) == options


# -- vector built-ins, pointer results, vec_step ------------------------------------------------
def test_shuffle_and_shuffle2_use_only_the_low_bits_of_each_mask_component():
    """OpenCL C 6.13.12: shuffle keeps log2(m) bits of each mask component (m the
    source's components), shuffle2 one more (its two sources count as 2m components)."""
    src = """
__kernel void k(__global const float4 *x, __global const uint8 *m, __global float8 *wide,
                __global float4 *same, __global int2 *narrow, __global ulong16 *two,
                __global uchar4 *bytes) {
    int i = get_global_id(0);
    uint8 mask = m[i];
    wide[i] = shuffle(x[i], mask);
    same[i] = shuffle(x[i], (uint4)(3, 2, 1, 0) + 0xFFF0u);
    narrow[i] = shuffle((int16)(100, 101, 102, 103, 104, 105, 106, 107, 108, 109, 110, 111, 112, 113,
                                114, 115), mask.s01 + 32u);
    ulong8 lo = (ulong8)(0, 1, 2, 3, 4, 5, 6, 7), hi = lo + 8ul;
    two[i] = shuffle2(lo + (ulong)i * 100ul, hi, (ulong16)(convert_ulong8(mask), convert_ulong8(mask) + 8ul));
    bytes[i] = shuffle2((uchar2)(1, 2), (uchar2)(3, 4), convert_uchar4(mask.lo + (uint4)(0, 4, 8, 252)));
}"""
    n = 64
    x = RNG.random((n, 4), dtype=np.float32)
    m = RNG.integers(0, 2**32, (n, 8), dtype=np.uint32)   # high bits set: they must not count
    wide, same = np.zeros((n, 8), np.float32), np.zeros((n, 4), np.float32)
    narrow, two = np.zeros((n, 2), np.int32), np.zeros((n, 16), np.uint64)
    bytes_ = np.zeros((n, 4), np.uint8)
    run(src, (n,), (64,), {"x": x, "m": m, "wide": wide, "same": same, "narrow": narrow, "two": two,
                           "bytes": bytes_})
    rows = np.arange(n)[:, None]
    np.testing.assert_array_equal(wide, x[rows, m & 3])
    np.testing.assert_array_equal(same, x[:, ::-1])
    np.testing.assert_array_equal(narrow, 100 + (m[:, :2] & 15))
    pool = np.concatenate([np.arange(8) + np.arange(n)[:, None] * 100, np.tile(np.arange(8, 16), (n, 1))], 1)
    mask16 = np.concatenate([m, m + 8], 1).astype(np.uint64)   # the ulong mask keeps 4 bits
    np.testing.assert_array_equal(two, pool[rows, mask16 & 15])
    picks = (m[:, :4] + np.array([0, 4, 8, 252], np.uint32)).astype(np.uint8) & 3
    np.testing.assert_array_equal(bytes_, np.array([1, 2, 3, 4])[picks])


@pytest.mark.parametrize("call,message", [
    ("shuffle(v, (int4)(0, 1, 2, 3))", "shuffle does not accept (float4, int4)"),
    ("shuffle(v, (ushort4)(0, 1, 2, 3))", "shuffle does not accept (float4, ushort4)"),
    ("shuffle(v.xyz, (uint4)(0))", "shuffle does not accept (float3, uint4)"),
    ("shuffle2(v, (int4)(1), (uint4)(0))", "shuffle2 does not accept (float4, int4, uint4)"),
    ("shuffle(1.0f, 0u)", "shuffle does not accept (float, uint)"),
])
def test_shuffle_refuses_masks_and_sources_the_specification_does_not_allow(call, message):
    src = f"__kernel void k(__global float4 *a) {{\n  float4 v = a[0];\n  a[1] = {call};\n}}"
    text = compile_error(src)
    assert text.startswith("t.cl:3:") and message in text, text


def test_frexp_splits_into_a_mantissa_and_an_exponent_with_the_specified_edge_values():
    """Mantissa in [1/2, 1) (or 0) times 2 to the exponent; OpenCL C 7.5.1: ±inf and NaN
    return themselves and store exponent 0; ±0 give ±0 and 0; denormals are exact."""
    src = """
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
__kernel void k(__global const float *x, __global float *m, __global int *e,
                __global float4 *m4, __global int4 *e4, __global double *md, __global int *ed, double s) {
    int i = get_global_id(0);
    m[i] = frexp(x[i], &e[i]);
    int4 exps;
    m4[i] = frexp((float4)(x[i], -x[i], x[i] * 4.0f, 0.5f), &exps);
    e4[i] = exps;
    __private int de;
    md[i] = frexp((double)x[i] * s, &de);
    ed[i] = de;
}"""
    x = np.array([0.0, -0.0, 1.0, -3.0, 0.1, 1e-40, -1.4e-45, np.finfo(np.float32).max,
                  np.inf, -np.inf, np.nan, 6.5e-39, 1e30, -7.0, 2.0**-126, 3.0], np.float32)
    n = len(x)
    m, e = np.zeros(n, np.float32), np.zeros(n, np.int32)
    m4, e4 = np.zeros((n, 4), np.float32), np.zeros((n, 4), np.int32)
    md, ed = np.zeros(n), np.zeros(n, np.int32)
    run(src, (n,), (n,), {"x": x, "m": m, "e": e, "m4": m4, "e4": e4, "md": md, "ed": ed, "s": 1e300})
    finite = np.isfinite(x)
    ref_m, ref_e = np.frexp(x)
    np.testing.assert_array_equal(m, ref_m)
    np.testing.assert_array_equal(e, np.where(finite, ref_e, 0))
    np.testing.assert_array_equal(np.signbit(m), np.signbit(x))
    assert (np.abs(m[finite & (x != 0)]) >= 0.5).all() and (np.abs(m[finite]) < 1).all()
    np.testing.assert_array_equal(np.ldexp(m[finite], e[finite]), x[finite])   # exact, denormals too
    assert np.isnan(m[10]) and list(m[8:10]) == [np.inf, -np.inf] and e[5] == -132 and e[6] == -148
    with np.errstate(over="ignore"):
        cols = np.stack([x, -x, x * np.float32(4), np.full(n, 0.5, np.float32)], 1)
        big = x.astype(np.float64) * 1e300
    ref4_m, ref4_e = np.frexp(cols)
    np.testing.assert_array_equal(m4, ref4_m)
    np.testing.assert_array_equal(e4, np.where(np.isfinite(cols), ref4_e, 0))
    np.testing.assert_array_equal(md, np.frexp(big)[0])
    np.testing.assert_array_equal(ed, np.where(np.isfinite(big), np.frexp(big)[1], 0))


def _remquo_reference(x, y):
    """(remainder, quotient bits) by the definition: n the integer nearest x / y (ties to
    even) in exact arithmetic, r = x - n * y, the quotient's 7 lowest bits signed as x / y."""
    from fractions import Fraction

    if math.isnan(x) or math.isnan(y) or math.isinf(x) or y == 0:
        return math.nan, 0
    if math.isinf(y):
        return x, 0
    n = round(Fraction(x) / Fraction(y))
    r = float(Fraction(x) - n * Fraction(y))
    bits = abs(n) % 128
    return math.copysign(r, x) if r == 0 else r, -bits if (x < 0) != (y < 0) else bits


def test_remquo_returns_the_remainder_and_stores_the_signed_low_quotient_bits():
    """OpenCL C: r = x - n*y, n nearest x/y (ties to even), r = 0 has x's sign; the lowest
    seven bits of n, signed as x/y, go through the pointer; NaN and 0 for an infinite x, a
    zero y or a NaN (7.5.1)."""
    src = """
__kernel void k(__global const float *x, __global const float *y, __global float *r, __global int *q,
                __global float2 *r2, __global int2 *q2, __global float *rem) {
    int i = get_global_id(0);
    r[i] = remquo(x[i], y[i], &q[i]);
    int2 quo;
    r2[i] = remquo((float2)(x[i], y[i]), (float2)(y[i], 3.0f), &quo);
    q2[i] = quo;
    rem[i] = remainder(x[i], y[i]);
}"""
    pairs = [(29, 3), (-29, 3), (29, -3), (-29, -3), (5, 2), (7, 2), (-5, 2), (6, 3), (-6, 3),
             (0.0, 1), (-0.0, 1), (1e30, 3), (-1e30, 7e-30), (3.4e38, 1e-38), (1, 0), (np.inf, 2),
             (np.nan, 2), (2, np.nan), (5, np.inf), (-0.7, 0.25), (1e-40, 3e-41), (255.5, 2)]
    x = np.array([p[0] for p in pairs], np.float32)
    y = np.array([p[1] for p in pairs], np.float32)
    n = len(pairs)
    r, q, rem = np.zeros(n, np.float32), np.zeros(n, np.int32), np.zeros(n, np.float32)
    r2, q2 = np.zeros((n, 2), np.float32), np.zeros((n, 2), np.int32)
    run(src, (n,), (n,), {"x": x, "y": y, "r": r, "q": q, "r2": r2, "q2": q2, "rem": rem})
    ref = [_remquo_reference(float(a), float(b)) for a, b in zip(x, y)]
    np.testing.assert_array_equal(r, np.array([v for v, _ in ref], np.float32))
    np.testing.assert_array_equal(q, [k for _, k in ref])
    np.testing.assert_array_equal(np.signbit(r[9:11]), [False, True])   # a zero r has x's sign
    assert list(q[:9]) == [10, -10, -10, 10, 2, 4, -2, 2, -2]        # ties go to the even quotient
    np.testing.assert_array_equal(rem, r)                             # the remainder() value
    ref2 = [_remquo_reference(float(a), float(b)) for a, b in zip(y, np.full(n, 3, np.float32))]
    np.testing.assert_array_equal(r2, np.stack([r, [v for v, _ in ref2]], 1).astype(np.float32))
    np.testing.assert_array_equal(q2, np.stack([q, [k for _, k in ref2]], 1))


def test_builtins_with_a_pointer_result_evaluate_each_argument_once():
    """``sincos``, ``fract``, ``modf``, ``frexp`` and ``remquo`` compute two results from
    their value arguments; an argument with an effect (``x[j++]``) still runs once."""
    src = """
__kernel void k(__global const float *x, __global float *r, __global int *e, __global int *steps) {
    int i = get_global_id(0);
    int j = i * 5;
    float c, whole, part;
    int exponent, quo;
    r[i * 8 + 0] = sincos(x[j++], &c);
    r[i * 8 + 1] = c;
    r[i * 8 + 2] = fract(x[j++], &whole);
    r[i * 8 + 3] = whole;
    r[i * 8 + 4] = modf(x[j++], &part);
    r[i * 8 + 5] = part;
    r[i * 8 + 6] = frexp(x[j++], &exponent);
    r[i * 8 + 7] = remquo(x[j++], 0.75f, &quo);
    e[i * 2] = exponent;
    e[i * 2 + 1] = quo;
    steps[i] = j - i * 5;
}"""
    n = 64
    x = (RNG.random(n * 10, dtype=np.float32) * 20 - 10).astype(np.float32)   # room to read twice
    r, e, steps = np.zeros(n * 8, np.float32), np.zeros(n * 2, np.int32), np.zeros(n, np.int32)
    run(src, (n,), (64,), {"x": x, "r": r, "e": e, "steps": steps})
    np.testing.assert_array_equal(steps, 5)
    v = x[:n * 5].reshape(n, 5)
    r, e = r.reshape(n, 8), e.reshape(n, 2)
    np.testing.assert_allclose(r[:, 0], np.sin(v[:, 0]), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(r[:, 1], np.cos(v[:, 0]), rtol=1e-5, atol=1e-6)
    below_one = np.nextafter(np.float32(1), np.float32(0))
    np.testing.assert_array_equal(r[:, 2], np.minimum(v[:, 1] - np.floor(v[:, 1]), below_one))
    np.testing.assert_array_equal(r[:, 3], np.floor(v[:, 1]))
    np.testing.assert_array_equal(r[:, 4:6], np.stack(np.modf(v[:, 2]), 1))
    np.testing.assert_array_equal(np.stack([r[:, 6], e[:, 0]], 1), np.stack(np.frexp(v[:, 3]), 1))
    ref = [_remquo_reference(float(a), 0.75) for a in v[:, 4]]
    np.testing.assert_array_equal(r[:, 7], np.array([value for value, _ in ref], np.float32))
    np.testing.assert_array_equal(e[:, 1], [bits for _, bits in ref])


@pytest.mark.parametrize("call,message", [
    ("frexp(v, &f)", "frexp needs a pointer to int as its last argument, not private float*"),
    ("frexp(v, n)", "frexp needs a pointer to int as its last argument, not int"),
    ("frexp((float2)(v), &n)", "frexp needs a pointer to int2 as its last argument, not private int*"),
    ("remquo(v, v, &f)", "remquo needs a pointer to int as its last argument, not private float*"),
    ("remquo(v, &n)", "remquo takes (x, y, quo)"),
])
def test_frexp_and_remquo_need_a_pointer_to_ints_of_the_values_width(call, message):
    src = ("__kernel void k(__global float *a) {\n  float v = a[0], f; int n;\n"
           f"  a[1] = {call};\n}}")
    text = compile_error(src)
    assert text.startswith("t.cl:3:") and message in text, text


def test_sizeof_an_array_is_the_whole_array_and_its_operand_is_not_evaluated():
    """OpenCL C 6.3.k: ``sizeof`` of an array is the bytes of the whole array (private,
    ``__local``, multi-dimensional, of structs, a ``__constant`` table, a struct's array
    member), so ``sizeof(a) / sizeof(a[0])`` counts its elements; an array passed to a
    pointer parameter and a kernel's pointer argument are pointers; the operand of sizeof
    is not evaluated."""
    src = """
typedef struct { float w[3]; int tap; } Tap;
__constant float coeffs[5] = {0.1f, 0.2f, 0.4f, 0.2f, 0.1f};
__constant Tap taps[2] = {{{1.0f, 2.0f, 3.0f}, 4}, {{5.0f, 6.0f, 7.0f}, 8}};
int pointer_size(int *row) { return sizeof(row) + 100 * (sizeof(row[0]) == 4); }
__kernel void k(__global int *o, __global const float *g) {
    int a[10];
    __local float tile[4][17];
    Tap arr[3];
    Tap t;
    float m[2][3];
    uchar bytes[7];
    int i = 0;
    o[0] = sizeof(a);
    o[1] = sizeof(a) / sizeof(a[0]);
    o[2] = sizeof(tile);
    o[3] = sizeof(tile[1]);
    o[4] = sizeof(tile) / sizeof(tile[0]);
    o[5] = sizeof(arr);
    o[6] = sizeof(arr[0].w) + 100 * sizeof(t.w);
    o[7] = sizeof(coeffs) / sizeof(coeffs[0]);
    o[8] = sizeof(taps);
    o[9] = sizeof(g);
    o[10] = sizeof(m) + 100 * sizeof(m[1]);
    o[11] = pointer_size(a);
    o[12] = sizeof(a + 1) + 100 * sizeof(&a[0]);
    o[13] = sizeof(bytes);
    o[14] = sizeof(a[i++]) + 100 * sizeof(g[i++]);
    o[15] = i;
}"""
    o = np.full(16, -1, np.int32)
    run(src, (1,), (1,), {"o": o, "g": np.zeros(4, np.float32)})
    np.testing.assert_array_equal(o, [40, 10, 4 * 17 * 4, 17 * 4, 4, 3 * 16, 12 + 1200, 5, 32, 8,
                                      24 + 1200, 108, 8 + 800, 7, 4 + 400, 0])


def test_vec_step_of_type_names_and_of_unevaluated_expressions():
    """OpenCL C 6.13.12: the components of a vector type (a 3-component one counts 4), 1
    for a scalar; the argument, a type name or an expression, is not evaluated."""
    src = """
typedef float4 vec;
__kernel void k(__global int *o, __global const float *a) {
    int i = 0;
    float3 p = (float3)(1.0f, 2.0f, 3.0f);
    o[0] = vec_step(float4); o[1] = vec_step(float3); o[2] = vec_step(int);
    o[3] = vec_step(double16); o[4] = vec_step(vec); o[5] = vec_step(p);
    o[6] = vec_step(a[i++]); o[7] = i; o[8] = sizeof(int[vec_step(uchar8)]) / sizeof(int);
    o[9] = vec_step(p.xy + 1.0f) + vec_step(char2) * 10 + vec_step(unsigned int) * 100;
}"""
    o = np.zeros(10, np.int32)
    run(src, (1,), (1,), {"o": o, "a": np.zeros(4, np.float32)})
    np.testing.assert_array_equal(o, [4, 4, 1, 16, 4, 4, 1, 0, 8, 2 + 20 + 100])


@pytest.mark.parametrize("arg,shown", [("struct S", "struct S"), ("float *", "private float*"),
                                       ("s", "struct S"), ("a", "global float*")])
def test_vec_step_refuses_what_is_not_a_scalar_or_vector(arg, shown):
    src = f"struct S {{ int x; }};\n__kernel void k(__global float *a) {{\n  struct S s;\n  a[0] = vec_step({arg});\n}}"
    with pytest.raises(KernelError) as info:
        compile_source("t.cl", src)
    assert str(info.value).startswith("t.cl:4:")
    assert f"vec_step takes a scalar or vector type, not {shown}" in str(info.value)


# -- designated initializers --------------------------------------------------------------------
def test_designated_initializers_for_structs_arrays_and_constant_tables():
    """C99 6.7.8: ``.member`` and ``[index]`` designators, chained; positional initializers
    go on after the designated subobject (into a nested struct or row without braces);
    what is left out is zero; an array of unknown size ends at its last initializer."""
    src = """
typedef struct { float w; int tap; float2 at; } Tap;
struct P { int x, y; struct { int a, b; } in; float4 v; };
enum Channel { RED, GREEN, BLUE };
__constant int table[] = {[4] = 9, 10, [1] = 3};
__constant Tap taps[3] = {[2] = {.tap = 7, .w = 0.5f}, [0].at = {1.0f, 2.0f}, [0].tap = 4};
__constant float2 points[2][2] = {[1][0] = (float2)(5.0f, 6.0f), [0] = {{1.0f, 2.0f}}};
void set_b(struct P *p) { p->in.b += 100; }
__kernel void k(__global int *o, __global float *f) {
    int i = get_global_id(0);
    struct P p = {.y = i, 30, 40, .v = {1.5f, 2.5f}, .x = -1};
    struct P q = {.in.b = 8, .v = {0.0f, 0.0f, 3.0f}};
    int a[6] = {[2] = 5, 6, [0] = i};
    int b[] = {[3] = 1, [GREEN] = 7};
    int m[2][3] = {[1][1] = 5, 6, [0] = {1, 2}};
    Tap t[2] = {[1].tap = 9, [0] = {.at = {0.25f}, .w = 0.75f}};
    struct P r = {.in = {.b = 2}};
    set_b(&r);
    int acc = 0;
    for (int k = 0; k < 3; k++) {
        struct P z = {.x = k};
        acc += z.y + z.in.a;   /* zero again on every trip */
        z.y = 50; z.in.a = 60;
        acc += z.x;
    }
    int *out = o + i * 32;
    out[0] = p.x; out[1] = p.y; out[2] = p.in.a; out[3] = p.in.b;
    out[4] = q.x; out[5] = q.in.a; out[6] = q.in.b;
    for (int k = 0; k < 6; k++) out[7 + k] = a[k];
    out[13] = b[GREEN]; out[14] = b[3]; out[15] = b[0];
    for (int k = 0; k < 6; k++) out[16 + k] = m[k / 3][k % 3];
    out[22] = t[1].tap; out[23] = t[0].tap; out[24] = r.in.b; out[25] = acc;
    for (int k = 0; k < 6; k++) out[26 + k] = table[k];
    float *g = f + i * 16;
    g[0] = p.v.x; g[1] = p.v.y; g[2] = p.v.w; g[3] = q.v.z; g[4] = t[0].w; g[5] = t[0].at.x;
    g[6] = t[0].at.y; g[7] = t[1].w; g[8] = taps[2].w; g[9] = taps[0].at.y;
    g[10] = taps[0].tap + taps[2].tap * 10 + taps[1].tap * 100;
    g[11] = points[0][0].y; g[12] = points[0][1].x; g[13] = points[1][0].y; g[14] = points[1][1].x;
}"""
    n = 4
    o, f = np.zeros(n * 32, np.int32), np.zeros(n * 16, np.float32)
    program = run(src, (n,), (n,), {"o": o, "f": f})
    assert program.kernel().arrays["b"].length == 4
    o, f = o.reshape(n, 32), f.reshape(n, 16)
    i = np.arange(n)
    np.testing.assert_array_equal(o[:, 0:4], np.stack([np.full(n, -1), i, np.full(n, 30), np.full(n, 40)], 1))
    np.testing.assert_array_equal(o[:, 4:7], np.tile([0, 0, 8], (n, 1)))
    np.testing.assert_array_equal(o[:, 7:13], np.stack([i] + [np.full(n, v) for v in (0, 5, 6, 0, 0)], 1))
    np.testing.assert_array_equal(o[:, 13:16], np.tile([7, 1, 0], (n, 1)))
    np.testing.assert_array_equal(o[:, 16:22], np.tile([1, 2, 0, 0, 5, 6], (n, 1)))
    np.testing.assert_array_equal(o[:, 22:26], np.tile([9, 0, 102, 0 + 1 + 2], (n, 1)))
    np.testing.assert_array_equal(o[:, 26:32], np.tile([0, 3, 0, 0, 9, 10], (n, 1)))
    np.testing.assert_array_equal(f[:, :15], np.tile([1.5, 2.5, 0, 3, 0.75, 0.25, 0, 0, 0.5, 2, 4 + 70,
                                                       2, 0, 6, 0], (n, 1)))


def test_a_union_initializer_sets_its_first_or_its_designated_member():
    """C99 6.7.8p17: a union takes one initializer; the one after it goes past the union."""
    src = """
union U { int i; float f; };
struct S { int a; union U u; int b; };
__constant struct S table[2] = {{1, {.f = 1.5f}, 2}, [1] = {.u.i = 7, 9}};
__kernel void k(__global int *o, __global float *f) {
    union U u = {.f = 2.5f}, v = {3};
    struct S s = {1, {4}, 5}, t = {.u = {.f = 0.5f}, 6};
    o[0] = v.i; o[1] = s.a; o[2] = s.u.i; o[3] = s.b; o[4] = t.a; o[5] = t.b;
    o[6] = table[0].b; o[7] = table[1].u.i; o[8] = table[1].b;
    f[0] = u.f; f[1] = t.u.f; f[2] = table[0].u.f;
}"""
    o, f = np.zeros(9, np.int32), np.zeros(3, np.float32)
    run(src, (1,), (1,), {"o": o, "f": f})
    np.testing.assert_array_equal(o, [3, 1, 4, 5, 0, 6, 2, 7, 9])
    np.testing.assert_array_equal(f, [2.5, 0.5, 1.5])


@pytest.mark.parametrize("decl,message", [
    ("struct P p = {.z = 1};", "struct P has no member 'z'"),
    ("int a[4] = {[4] = 1};", "array index 4 is outside int[4]"),
    ("int a[4] = {.x = 1};", "'.x' names a member, but int[4] is not a struct or union"),
    ("struct P p = {[0] = 1};", "'[...]' names an element, but struct P is not an array"),
    ("int a[2] = {[1] = 1, 2};", "too many initializers for 'a' (one goes past its 2 elements)"),
    ("struct P p = {1, 2, 3};", "too many initializers for struct P"),
    ("int a[4] = {[n] = 1};", "an integer constant is needed here"),
    ("struct P p = {.x.y = 1};", "'.y' names a member, but int is not a struct or union"),
    ("float4 v[1] = {[0].z = 1};", "'.z' names a member, but float4 is not a struct or union"),
])
def test_designators_that_name_nothing_are_located_errors(decl, message):
    src = f"struct P {{ int x, y; }};\n__kernel void k(__global int *o, int n) {{\n  {decl}\n}}"
    text = compile_error(src)
    assert text.startswith("t.cl:3:") and message in text, text


# -- printf with strings ---------------------------------------------------------------------------
def test_printf_prints_string_literals_with_percent_s(capfd):
    """OpenCL C 6.15.14: %s takes a literal string (its precision cuts it); arguments past
    the format are evaluated and ignored."""
    src = r"""
__kernel void k(__global int *a) {
    int i = get_global_id(0);
    printf("%s %d [%6s|%-4s|%.2s]\n", "tag", i, "ab", "c\td", "xyz", "ignored");
}"""
    run(src, (2,), (2,), {"a": np.zeros(2, np.int32)})
    assert capfd.readouterr().out == "tag 0 [    ab|c\td |xy]\ntag 1 [    ab|c\td |xy]\n"


@pytest.mark.parametrize("call,message", [
    (r'printf("%d\n", "x")', "a string literal can only be printed with %s, not %d"),
    (r'printf("%s\n", a[0])', "%s prints a string literal, not a value of type int"),
    (r'printf("%s\n", a)', "%s prints a string literal, not a value of type global int*"),
])
def test_printf_percent_s_takes_string_literals_only(call, message):
    src = "__kernel void k(__global int *a) {\n  " + call + ";\n}"
    text = compile_error(src)
    assert text.startswith("t.cl:2:") and message in text, text


def test_abs_of_every_integer_width_is_the_unsigned_type_of_that_width():
    """``abs`` of a long is a ulong (it was cut to 32 bits), of a char4 a uchar4, and the
    most negative value's magnitude is exact in the unsigned type."""
    src = """
__kernel void k(__global const long *l, __global ulong *lo, __global const char4 *c,
                __global uchar4 *co, __global const int *i, __global uint *io) {
    int g = get_global_id(0);
    lo[g] = abs(l[g]);
    co[g] = abs(c[g]);
    io[g] = abs(i[g]);
}
"""
    longs = np.array([-5_000_000_000, 7, -(2**63), 2**62], dtype=np.int64)
    chars = np.array([[-128, -1, 0, 127]] * 4, dtype=np.int8)
    ints = np.array([-(2**31), -3, 0, 2**31 - 1], dtype=np.int32)
    lo, co, io = np.zeros(4, np.uint64), np.zeros((4, 4), np.uint8), np.zeros(4, np.uint32)
    run(src, (4,), (4,), {"l": longs, "lo": lo, "c": chars, "co": co, "i": ints, "io": io})
    np.testing.assert_array_equal(lo, [5_000_000_000, 7, 2**63, 2**62])
    np.testing.assert_array_equal(co, [[128, 1, 0, 127]] * 4)
    np.testing.assert_array_equal(io, [2**31, 3, 0, 2**31 - 1])
