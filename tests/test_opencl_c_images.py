"""OpenCL C images in 2-D and 3-D: sampling per the OpenCL 1.2 addressing and filtering rules,
queries, writes, the host's arrays and the addresses the timing model sees.

The references here sample one coordinate at a time with the specification's per-axis
formulas, in plain Python, independent of the vectorised executor.
"""
import math
from itertools import product

import numpy as np
import pytest

from simulator.__main__ import main
from simulator.kernels import KernelError, Memory, compile_source, launch
from simulator.kernels.images import (
    CLK_ADDRESS_CLAMP,
    CLK_ADDRESS_CLAMP_TO_EDGE,
    CLK_ADDRESS_MIRRORED_REPEAT,
    CLK_ADDRESS_NONE,
    CLK_ADDRESS_REPEAT,
    CLK_FILTER_LINEAR,
    CLK_FILTER_NEAREST,
    CLK_NORMALIZED_COORDS_TRUE,
)
from simulator.stream import Unit

RNG = np.random.default_rng(11)


def run(src, global_size, local_size, args):
    """Compile and launch; numpy arrays become buffers (images included), written in place."""
    program = compile_source("t.cl", src)
    memory = Memory()
    bound = {k: memory.buffer(k, v) if isinstance(v, np.ndarray) else v for k, v in args.items()}
    return launch(program, None, global_size, local_size, bound), bound


# -- a reference sampler, one coordinate at a time -------------------------------------------
def _axis(s, size, normalized, mode, linear):
    """[(texel index or None for the border, weight)] along one axis, per the specification."""
    if normalized and mode in (CLK_ADDRESS_REPEAT, CLK_ADDRESS_MIRRORED_REPEAT):
        if mode == CLK_ADDRESS_REPEAT:
            u = (s - math.floor(s)) * size
        else:
            u = abs(s - 2.0 * round(0.5 * s)) * size   # round() is rint: halves to even
        if not linear:
            i = math.floor(u)
            i = (i - size if i > size - 1 else i) if mode == CLK_ADDRESS_REPEAT else min(i, size - 1)
            return [(i, 1.0)]
        i0 = math.floor(u - 0.5)
        i1 = i0 + 1
        if mode == CLK_ADDRESS_REPEAT:
            i0 = size + i0 if i0 < 0 else i0
            i1 = i1 - size if i1 > size - 1 else i1
        else:
            i0, i1 = max(i0, 0), min(i1, size - 1)
        a = (u - 0.5) - math.floor(u - 0.5)
        return [(i0, 1 - a), (i1, a)]
    u = s * size if normalized else s

    def address(c):
        if mode == CLK_ADDRESS_CLAMP_TO_EDGE:
            return min(max(c, 0), size - 1)
        if mode == CLK_ADDRESS_CLAMP:
            return None if c < 0 or c > size - 1 else c
        assert 0 <= c < size, "the test keeps CLK_ADDRESS_NONE inside the image"
        return c

    if not linear:
        return [(address(math.floor(u)), 1.0)]
    i0 = math.floor(u - 0.5)
    a = (u - 0.5) - i0
    return [(address(i0), 1 - a), (address(i0 + 1), a)]


def _rgba(texel, channels):
    color = [0.0, 0.0, 0.0, 1.0]
    color[:channels] = texel
    return np.array(color)


def reference_sample(image, channels, coord, flags):
    """read_imagef(image, flags, coord) for one (x, y[, z]) coordinate; ``image`` is
    (depth,) height, width, channels."""
    dims = image.ndim - 1
    sizes = image.shape[:dims][::-1]   # width, height[, depth]
    normalized = bool(flags & CLK_NORMALIZED_COORDS_TRUE)
    mode = flags & 0xE
    linear = bool(flags & CLK_FILTER_LINEAR)
    axes = [_axis(float(coord[n]), sizes[n], normalized, mode, linear) for n in range(dims)]
    border = np.zeros(4) if channels == 4 else np.array([0.0, 0.0, 0.0, 1.0])
    total = np.zeros(4)
    for corner in product(*axes):
        weight = math.prod(w for _, w in corner)
        index = [i for i, _ in corner]
        color = border if None in index else _rgba(image[tuple(index[::-1])], channels)
        total += weight * color
    return total


SAMPLE = {
    2: """
__kernel void sample(__read_only image2d_t img, sampler_t s, __global const float4 *at,
                     __global float4 *out) {
    int i = get_global_id(0);
    out[i] = read_imagef(img, s, at[i].xy);
}""",
    3: """
float4 fetch(image3d_t volume, sampler_t s, float4 p) { return read_imagef(volume, s, p); }
__kernel void sample(__read_only image3d_t img, sampler_t s, __global const float4 *at,
                     __global float4 *out) {
    int i = get_global_id(0);
    out[i] = fetch(img, s, at[i]);
}""",
}
SHAPES = {2: (4, 5), 3: (3, 4, 5)}   # (depth,) height, width
MODES = [(mode, normalized) for mode in (CLK_ADDRESS_NONE, CLK_ADDRESS_CLAMP_TO_EDGE, CLK_ADDRESS_CLAMP)
         for normalized in (False, True)] + [(CLK_ADDRESS_REPEAT, True), (CLK_ADDRESS_MIRRORED_REPEAT, True)]


def _coordinates(dims, mode, normalized, n=128):
    sizes = np.array(SHAPES[dims][::-1], dtype=np.float64)
    if mode == CLK_ADDRESS_NONE:        # in range, whole 2x2(x2) squares inside the image
        low, high = np.full(dims, 1.0), sizes - 1
    else:                               # well outside the image on both sides
        low, high = -1.7 * sizes, 2.6 * sizes
    at = np.empty((n, 4), np.float32)
    at[:, :dims] = RNG.uniform(low, high, size=(n, dims)) / (sizes if normalized else 1)
    at[:, dims:] = 1e6   # z of a 2-D read and w of a 3-D read are ignored
    return at


@pytest.mark.parametrize("dims", [2, 3])
@pytest.mark.parametrize("mode,normalized", MODES)
@pytest.mark.parametrize("filtering", [CLK_FILTER_NEAREST, CLK_FILTER_LINEAR])
@pytest.mark.parametrize("channels", [1, 4])
def test_sampling_follows_each_address_mode_and_filter(dims, mode, normalized, filtering, channels):
    image = RNG.random(SHAPES[dims] + (channels,), dtype=np.float32)
    flags = mode | filtering | (CLK_NORMALIZED_COORDS_TRUE if normalized else 0)
    at = _coordinates(dims, mode, normalized)
    out = np.zeros((len(at), 4), np.float32)
    host = image if channels > 1 else image[..., 0]   # a CL_R image may drop its channel axis
    run(SAMPLE[dims], (len(at),), (64,), {"img": host, "s": flags, "at": at, "out": out})
    expect = np.array([reference_sample(image, channels, c, flags) for c in at])
    np.testing.assert_allclose(out, expect, atol=2e-6)


def test_trilinear_weights_are_the_eight_texels_products():
    """A hand-checked point: u - 0.5 = (1.25, 0.5, 0.75) mixes texels x 1..2, y 0..1, z 0..1."""
    volume = np.arange(2 * 2 * 3, dtype=np.float32).reshape(2, 2, 3)   # value = 6z + 3y + x
    out = np.zeros((1, 4), np.float32)
    at = np.array([[1.75, 1.0, 1.25, 0.0]], np.float32)
    run(SAMPLE[3], (1,), (1,), {"img": volume, "s": CLK_FILTER_LINEAR, "at": at, "out": out})
    # Linear in every axis, so trilinear filtering gives the value at the point itself.
    np.testing.assert_allclose(out[0], [6 * 0.75 + 3 * 0.5 + 1.25, 0, 0, 1], rtol=1e-6)


def test_integer_reads_stencil_and_samplerless_forms_in_3d():
    src = """
__constant sampler_t edge = CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_CLAMP_TO_EDGE | CLK_FILTER_NEAREST;
__constant sampler_t border = CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_CLAMP | CLK_FILTER_NEAREST;
__kernel void k(__read_only image3d_t f, __read_only image3d_t labels, __read_only image3d_t counts,
                __global float *lap, __global int4 *lab, __global uint4 *cnt) {
    int4 p = (int4)(get_global_id(0), get_global_id(1), get_global_id(2), 7);
    float sum = -6.0f * read_imagef(f, p).x;
    for (int d = 0; d < 3; d++) {
        int4 step = (int4)(d == 0, d == 1, d == 2, 0);
        sum += read_imagef(f, edge, p + step).x + read_imagef(f, edge, p - step).x;
    }
    int i = (p.z * get_image_height(f) + p.y) * get_image_width(f) + p.x;
    lap[i] = sum;
    lab[i] = read_imagei(labels, border, p + (int4)(1, 0, 0, 0)) + read_imagei(labels, p);
    cnt[i] = read_imageui(counts, border, p - (int4)(0, 0, 1, 0));
}"""
    d, h, w = 4, 6, 8
    f = RNG.random((d, h, w), dtype=np.float32)
    labels = RNG.integers(-1000, 1000, size=(d, h, w, 4)).astype(np.int32)
    counts = RNG.integers(0, 60000, size=(d, h, w, 2)).astype(np.uint16)
    lap = np.zeros(d * h * w, np.float32)
    lab = np.zeros((d * h * w, 4), np.int32)
    cnt = np.zeros((d * h * w, 4), np.uint32)
    run(src, (w, h, d), (8, 2, 2), {"f": f, "labels": labels, "counts": counts, "lap": lap,
                                     "lab": lab, "cnt": cnt})
    padded = np.pad(f, 1, mode="edge")
    expect = -6 * f + sum(np.roll(padded, shift, axis)[1:-1, 1:-1, 1:-1]
                          for axis in range(3) for shift in (1, -1))
    np.testing.assert_allclose(lap, expect.reshape(-1), rtol=1e-5, atol=1e-5)
    # CLAMP's border is (0, 0, 0, 0) for an RGBA image, (0, 0, 0, 1) for an RG one.
    right = np.concatenate([labels[:, :, 1:], np.zeros((d, h, 1, 4), np.int32)], axis=2)
    np.testing.assert_array_equal(lab, (right + labels).reshape(-1, 4))
    below = np.concatenate([np.zeros((1, h, w, 2), np.uint16), counts[:-1]], axis=0)
    expect_cnt = np.zeros((d, h, w, 4), np.uint32)
    expect_cnt[..., :2] = below
    expect_cnt[..., 3] = 1
    np.testing.assert_array_equal(cnt, expect_cnt.reshape(-1, 4))


def test_unorm_volume_reads_as_normalized_floats_with_trilinear_filtering():
    volume = RNG.integers(0, 256, size=(3, 4, 5, 4)).astype(np.uint8)
    at = _coordinates(3, CLK_ADDRESS_CLAMP_TO_EDGE, True)
    out = np.zeros((len(at), 4), np.float32)
    flags = CLK_NORMALIZED_COORDS_TRUE | CLK_ADDRESS_CLAMP_TO_EDGE | CLK_FILTER_LINEAR
    run(SAMPLE[3], (len(at),), (64,), {"img": volume, "s": flags, "at": at, "out": out})
    expect = np.array([reference_sample(volume / 255.0, 4, c, flags) for c in at])
    np.testing.assert_allclose(out, expect, atol=1e-6)


def test_image_queries():
    src = """
__kernel void k(__read_only image3d_t v, __read_only image2d_t p, __global int4 *out, __global int2 *dim2) {
    out[0] = get_image_dim(v);
    out[1] = (int4)(get_image_width(v), get_image_height(v), get_image_depth(v), 0);
    dim2[0] = get_image_dim(p);
}"""
    out = np.zeros((2, 4), np.int32)
    dim2 = np.zeros((1, 2), np.int32)
    run(src, (1,), (1,), {"v": np.zeros((3, 5, 7, 2), np.float32), "p": np.zeros((5, 9), np.float32),
                          "out": out, "dim2": dim2})
    np.testing.assert_array_equal(out, [[7, 5, 3, 0], [7, 5, 3, 0]])
    np.testing.assert_array_equal(dim2, [[9, 5]])


def test_3d_image_writes_with_the_extension():
    src = """
#ifdef cl_khr_3d_image_writes
#pragma OPENCL EXTENSION cl_khr_3d_image_writes : enable
__kernel void k(__read_only image3d_t src, __write_only image3d_t half_of, __write_only image3d_t ids) {
    int4 p = (int4)(get_global_id(0), get_global_id(1), get_global_id(2), 0);
    write_imagef(half_of, p, read_imagef(src, p) * 0.5f);
    write_imageui(ids, p, (uint4)(p.x + 10 * p.y + 100 * p.z, 0, 0, 0));
    write_imageui(ids, p + (int4)(0, 0, 99, 0), (uint4)(1));   // outside: not written
}
#endif"""
    d, h, w = 2, 4, 8
    src_data = RNG.random((d, h, w, 4), dtype=np.float32)
    half_of = np.zeros((d, h, w, 4), np.uint8)
    ids = np.zeros((d, h, w), np.uint16)
    run(src, (w, h, d), (8, 4, 1), {"src": src_data, "half_of": half_of, "ids": ids})
    np.testing.assert_array_equal(half_of, np.clip(np.rint(src_data * 0.5 * 255), 0, 255))
    z, y, x = np.mgrid[0:d, 0:h, 0:w]
    np.testing.assert_array_equal(ids, x + 10 * y + 100 * z)


def _image_read_lines(result):
    """The 64-byte lines of the first wavefront's second load (the first loads ``at``)."""
    wave = result.work_groups[0].wavefronts[0]
    read = wave.insts[(wave.insts["unit"] == Unit.VMEM) & (wave.insts["write"] == 0)][1]
    return list(wave.addresses[read["addr_off"]:read["addr_off"] + read["addr_cnt"]])


@pytest.mark.parametrize("dims", [2, 3])
def test_image_reads_go_to_the_timing_model_at_their_texel_addresses(dims):
    src = SAMPLE[dims]
    image = RNG.random(SHAPES[dims] + (4,), dtype=np.float32)
    at = np.zeros((64, 4), np.float32)
    texels = RNG.integers(0, SHAPES[dims][::-1], size=(64, dims))
    at[:, :dims] = texels + 0.5
    result, bound = run(src, (64,), (64,), {"img": image, "s": CLK_FILTER_NEAREST, "at": at,
                                            "out": np.zeros((64, 4), np.float32)})
    row_major = np.ravel_multi_index(tuple(texels[:, ::-1].T), SHAPES[dims])
    expect = np.unique((bound["img"].base + row_major * 16) // 64 * 64)
    assert sorted(_image_read_lines(result)) == list(expect)


# -- errors ---------------------------------------------------------------------------------
@pytest.mark.parametrize("body,message", [
    ("float4 c = read_imagef(v, s, (float2)(0.5f, 0.5f));",
     "read_imagef on an image3d_t needs int4 or float4 coordinates, not float2"),
    ("float4 c = read_imagef(v, (float4)(0.5f));", "read_imagef on an image3d_t needs int4 coordinates"),
    ("int4 c = read_imagei(p, s, (int4)(0));", "read_imagei on an image2d_t needs int2 or float2"),
    ("write_imagef(v, (float4)(0.0f), (float4)(1.0f));", "write_imagef on an image3d_t needs int4"),
    ("int d = get_image_depth(p);", "get_image_depth takes an image3d_t, not an image2d_t"),
    ("float4 c = flat(v, s);", "argument 'q' of 'flat' is declared image2d_t, not image3d_t"),
    ("image3d_t copy;", "unsupported: type image3d_t for a variable"),
])
def test_wrong_image_calls_are_compile_errors(body, message):
    src = ("float4 flat(image2d_t q, sampler_t s) { return read_imagef(q, s, (int2)(0)); }\n"
           "__kernel void k(__read_only image3d_t v, __read_only image2d_t p, sampler_t s) {\n"
           f"    {body}\n}}")
    with pytest.raises(KernelError, match=message) as info:
        compile_source("t.cl", src)
    assert str(info.value).startswith("t.cl:3:")


@pytest.mark.parametrize("kind,array,message", [
    ("image3d_t", np.zeros((4, 5), np.float32),
     r"argument 'img' \(image3d_t\): a 3-D image is a \(depth, height, width\) or"
     r" \(depth, height, width, 1\|2\|4\) array, not one of shape \(4, 5\)"),
    ("image3d_t", np.zeros((2, 4, 5, 3), np.float32), r"not one of shape \(2, 4, 5, 3\)"),
    ("image2d_t", np.zeros((2, 4, 5, 4), np.float32),
     r"argument 'img' \(image2d_t\): a 2-D image is a \(height, width\) or \(height, width, 1\|2\|4\)"),
])
def test_an_array_of_the_wrong_shape_for_an_image_is_refused(kind, array, message):
    src = f"__kernel void k(__read_only {kind} img, __global int *out) {{ out[0] = get_image_width(img); }}"
    with pytest.raises(KernelError, match=message):
        run(src, (1,), (1,), {"img": array, "out": np.zeros(1, np.int32)})


def test_run_kernel_takes_3d_images(tmp_path, capsys):
    source = tmp_path / "vol.cl"
    source.write_text("""__kernel void mirror(read_only image3d_t src, read_only image3d_t zero,
                     __global float4 *out, sampler_t s) {
    int4 p = (int4)(get_global_id(0), get_global_id(1), get_global_id(2), 0);
    int4 n = get_image_dim(src);
    int i = (p.z * n.y + p.y) * n.x + p.x;
    out[i] = read_imagef(src, s, (int4)(n.x - 1 - p.x, p.y, n.z - 1 - p.z, 0)) + read_imagef(zero, p);
}""")
    volume = RNG.random((2, 4, 8, 4), dtype=np.float32)
    np.save(tmp_path / "vol.npy", volume)
    common = ["run-kernel", str(source), "--global", "8x4x2", "--local", "8x4x1", "--no-progress",
              "--no-instrument", "--arg", "out=zeros:64", "--arg", "s=CLK_FILTER_NEAREST"]
    rc = main([*common, "--arg", f"src={tmp_path / 'vol.npy'}", "--arg", "zero=zeros:8x4x2x4",
               "--save", f"out={tmp_path / 'out.npy'}"])
    assert rc == 0, capsys.readouterr().err
    out = np.load(tmp_path / "out.npy").reshape(2, 4, 8, 4)
    np.testing.assert_allclose(out, volume[::-1, :, ::-1])
    np.save(tmp_path / "plane.npy", volume[0, :, :, 0])
    for spec, expected in [(f"{tmp_path / 'plane.npy'}", "a 3-D image is a (depth, height, width)"),
                           ("zeros:8x4", "an image takes FILE.npy, zeros:WxHxD[xC] or random:WxHxD[xC]")]:
        rc = main([*common, "--arg", f"src={spec}", "--arg", "zero=zeros:8x4x2"])
        err = capsys.readouterr().err
        assert rc in (1, 2) and expected in err and "Traceback" not in err, err
