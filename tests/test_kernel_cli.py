"""``python -m simulator run-kernel``: user kernels from the command line."""
import sqlite3

import numpy as np
import pytest

from simulator.__main__ import main
from simulator.kernels import builtin_source

KERNEL = """kernel void scale(global const float *in, global float *out, float factor, int n)
{
    int i = get_global_id(0);
    if (i < n) {
        out[i] = in[i] * factor;
    }
}
"""


def test_run_kernel_writes_a_trace_with_kernel_records(tmp_path, capsys):
    source = tmp_path / "scale.cl"
    source.write_text(KERNEL)
    data = np.linspace(0, 1, 100, dtype=np.float32)
    np.save(tmp_path / "in.npy", data)
    trace = tmp_path / "scale.sqlite"
    rc = main(["run-kernel", str(source), "--global", "128", "--local", "64",
               "--arg", f"in={tmp_path / 'in.npy'}", "--arg", "out=zeros:128",
               "--arg", "factor=2.5", "--arg", "n=100", "-o", str(trace), "--no-progress",
               "--save", f"out={tmp_path / 'out.npy'}"])
    assert rc == 0, capsys.readouterr().err
    out = np.load(tmp_path / "out.npy")
    np.testing.assert_allclose(out[:100], data * np.float32(2.5))
    assert (out[100:] == 0).all()
    db = sqlite3.connect(trace)
    assert db.execute("SELECT kernel, work_groups FROM kernel_launch").fetchone() == ("scale", 2)
    assert db.execute("SELECT text FROM kernel_source").fetchone()[0] == KERNEL
    assert "SIMD efficiency" in capsys.readouterr().out


def test_run_kernel_with_local_memory_uninstrumented(tmp_path):
    source = tmp_path / "r.cl"
    source.write_text(builtin_source("reduction_v3"))
    rc = main(["run-kernel", str(source), "--global", "256", "--local", "64",
               "--arg", "g_idata=range:256", "--arg", "g_odata=zeros:4", "--arg", "n=256",
               "--arg", "sdata=local:64", "--save", f"g_odata={tmp_path / 'o.npy'}",
               "--no-instrument", "--no-progress"])
    assert rc == 0
    np.testing.assert_array_equal(np.load(tmp_path / "o.npy"), np.arange(256).reshape(4, 64).sum(1))


@pytest.mark.parametrize("argv,expected", [
    (["--global", "64", "--local", "64", "--arg", "in=zeros:64", "--arg", "out=zeros:64",
      "--arg", "factor=1"], "missing --arg for n"),
    (["--global", "64", "--local", "64", "--arg", "in=zeros:64", "--arg", "out=zeros:64",
      "--arg", "factor=1", "--arg", "n=64", "--arg", "bogus=1"], "no parameter named bogus"),
    (["--global", "64", "--local", "64", "--arg", "in=ones:64", "--arg", "out=zeros:64",
      "--arg", "factor=1", "--arg", "n=64"], "expected random:N, zeros:N, range:N or FILE.npy"),
    (["--global", "64", "--local", "64", "--arg", "in=zeros:64", "--arg", "out=zeros:64",
      "--arg", "factor=x", "--arg", "n=64"], "expected a float number"),
    (["--global", "96", "--local", "64", "--arg", "in=zeros:64", "--arg", "out=zeros:64",
      "--arg", "factor=1", "--arg", "n=64"], "multiple of the local size"),
    (["--global", "64", "--local", "64", "--arg", "in=zeros:8", "--arg", "out=zeros:64",
      "--arg", "factor=1", "--arg", "n=64"], "out-of-bounds read of in[8]"),
])
def test_run_kernel_reports_bad_input_without_a_traceback(tmp_path, capsys, argv, expected):
    source = tmp_path / "scale.cl"
    source.write_text(KERNEL)
    trace = tmp_path / "never.sqlite"
    rc = main(["run-kernel", str(source), *argv, "-o", str(trace), "--no-progress"])
    err = capsys.readouterr().err
    assert rc in (1, 2)
    assert expected in err and "Traceback" not in err
    assert not trace.exists()


def test_run_kernel_syntax_error_is_located(tmp_path, capsys):
    source = tmp_path / "bad.cl"
    source.write_text("kernel void k(global float *a)\n{\n    a[0] = 1.0f +;\n}\n")
    rc = main(["run-kernel", str(source), "--global", "64", "--local", "64", "--arg", "a=zeros:1"])
    assert rc == 1
    assert capsys.readouterr().err.strip().startswith(f"{source}:3:")


MULTI = """#include "params.h"
typedef struct { float2 v; int tag; } Item;
__kernel void fill(__global float *out, uint2 dims, Item it) {
    uint x = get_global_id(0), y = get_global_id(1);
    if (x < dims.x && y < dims.y)
        out[y * dims.x + x] = SCALE * (x + y) + it.v.y + it.tag;
}
__kernel void shift(__global Item *items, float by) {
    __global Item *p = items + get_global_id(0);
    p->v += by;
    p->tag = TAG;
}
__kernel void broken(__global float *out) { image3d_t unused; }
"""


def test_run_kernel_build_options_kernel_choice_vector_struct_and_struct_buffers(tmp_path, capsys):
    (tmp_path / "inc").mkdir()
    (tmp_path / "inc" / "params.h").write_text("#ifndef SCALE\n#define SCALE 1\n#endif\n")
    source = tmp_path / "multi.cl"
    source.write_text(MULTI)
    rc = main(["run-kernel", str(source), "--kernel", "fill", "--global", "32x16", "--local", "16x4",
               "-I", str(tmp_path / "inc"), "-D", "SCALE=3", "--arg", "out=zeros:512",
               "--arg", "dims=(uint2)(30,10)", "--arg", "it={1.5, 2.5, 7}", "--no-progress",
               "--no-instrument", "--save", f"out={tmp_path / 'out.npy'}"])
    assert rc == 0, capsys.readouterr().err
    out = np.load(tmp_path / "out.npy")
    y, x = np.mgrid[0:10, 0:30]
    expect = np.zeros(512, np.float32)
    expect[:300] = (3 * (x + y) + 2.5 + 7).reshape(-1)   # rows of dims.x = 30 elements
    np.testing.assert_allclose(out, expect)

    item = np.dtype({"names": ["v", "tag"], "formats": [(np.float32, (2,)), np.int32],
                     "offsets": [0, 8], "itemsize": 16})
    items = np.zeros(64, dtype=item)
    items["v"] = np.arange(128, dtype=np.float32).reshape(64, 2)
    np.save(tmp_path / "items.npy", items)
    rc = main(["run-kernel", str(source), "--kernel", "shift", "--global", "64", "--local", "64",
               f"--build-options=-I {tmp_path / 'inc'} -DTAG=9 -cl-fast-relaxed-math",
               "--arg", f"items={tmp_path / 'items.npy'}", "--arg", "by=0.5", "--no-progress",
               "--no-instrument", "--save", f"items={tmp_path / 'items_out.npy'}"])
    assert rc == 0, capsys.readouterr().err
    after = np.load(tmp_path / "items_out.npy")
    np.testing.assert_allclose(after["v"], items["v"] + 0.5)
    assert (after["tag"] == 9).all()
    # Without --kernel every kernel is compiled, and the broken one is named.
    rc = main(["run-kernel", str(source), "-I", str(tmp_path / "inc"), "-DTAG=1", "--global", "64", "--local",
               "64", "--arg", "out=zeros:64", "--no-progress"])
    err = capsys.readouterr().err
    assert rc == 1 and f"{source}:13:" in err and "unsupported: type image3d_t" in err


def test_run_kernel_image_and_sampler_arguments(tmp_path, capsys):
    source = tmp_path / "img.cl"
    source.write_text("""__kernel void flip(read_only image2d_t src, write_only image2d_t dst, sampler_t s) {
    int2 p = (int2)(get_global_id(0), get_global_id(1));
    int w = get_image_width(src);
    write_imagef(dst, p, read_imagef(src, s, (int2)(w - 1 - p.x, p.y)) * 2.0f);
}""")
    picture = np.random.default_rng(1).random((8, 16, 4), dtype=np.float32)
    np.save(tmp_path / "pic.npy", picture)
    rc = main(["run-kernel", str(source), "--global", "16x8", "--local", "16x4",
               "--arg", f"src={tmp_path / 'pic.npy'}", "--arg", "dst=zeros:16x8x4",
               "--arg", "s=CLK_NORMALIZED_COORDS_FALSE|CLK_ADDRESS_CLAMP_TO_EDGE|CLK_FILTER_NEAREST",
               "--save", f"dst={tmp_path / 'dst.npy'}", "--no-progress"])
    assert rc == 0, capsys.readouterr().err
    np.testing.assert_allclose(np.load(tmp_path / "dst.npy"), picture[:, ::-1] * 2)


@pytest.mark.parametrize("source_text,argv,expected", [
    (KERNEL, ["--arg", "in=zeros:64", "--arg", "out=zeros:64", "--arg", "factor=1", "--arg", "n=64",
              "--build-options=-O9 --bogus"], "build options: unknown option '--bogus'"),
    ("kernel void k(global float *a, uint2 d) { a[0] = d.x; }",
     ["--arg", "a=zeros:1", "--arg", "d=(uint2)(1,2,3)"], "a uint2 takes 2 numbers like (uint2)(1, 1)"),
    ("kernel void k(global float *a, sampler_t s) { a[0] = 1; }",
     ["--arg", "a=zeros:1", "--arg", "s=CLK_FAST"], "a sampler takes CLK_* flags"),
    ("kernel void k(global float *a, image2d_t im) { a[0] = 1; }",
     ["--arg", "a=zeros:1", "--arg", "im=zeros:4"],
     "an image takes FILE.npy, zeros:WxH[xC] or random:WxH[xC]"),
    ("kernel void k(global float *a, dims_t d) { a[0] = 1; }",
     ["--arg", "a=zeros:1"], ":1:32: unknown type name 'dims_t'"),
])
def test_run_kernel_reports_bad_new_arguments(tmp_path, capsys, source_text, argv, expected):
    source = tmp_path / "k.cl"
    source.write_text(source_text)
    rc = main(["run-kernel", str(source), "--global", "64", "--local", "64", *argv, "--no-progress"])
    err = capsys.readouterr().err
    assert rc in (1, 2) and expected in err and "Traceback" not in err, err


LOCAL4 = """kernel void k(global float4 *out, local float4 *tmp)
{
    int i = get_local_id(0);
    tmp[i] = (float4)(i);
    barrier(CLK_LOCAL_MEM_FENCE);
    out[get_global_id(0)] = tmp[63 - i];
}
"""


@pytest.mark.parametrize("size", ["local:64", "local:1KiB", "local:1024B"])
def test_a_local_size_is_elements_of_the_pointee_or_bytes(tmp_path, size):
    source = tmp_path / "k.cl"
    source.write_text(LOCAL4)
    trace = tmp_path / "k.sqlite"
    assert main(["run-kernel", str(source), "--global", "64", "--local", "64", "--arg",
                 "out=zeros:64", "--arg", f"tmp={size}", "--no-progress", "-o", str(trace)]) == 0
    db = sqlite3.connect(trace)
    assert db.execute("SELECT lds_bytes FROM kernel_launch").fetchone() == (1024,)  # 64 float4


@pytest.mark.parametrize("size,message", [
    ("local:1000B", "1000B is not a whole number of float4 elements (16 bytes each)"),
    ("local:x", "a local pointer takes local:N, N elements of its float4 (16 bytes each),"
                " or local:BYTES such as local:16KiB"),
])
def test_a_local_size_that_is_not_whole_elements_is_a_one_line_error(tmp_path, capsys, size, message):
    source = tmp_path / "k.cl"
    source.write_text(LOCAL4)
    assert main(["run-kernel", str(source), "--global", "64", "--local", "64", "--arg",
                 "out=zeros:64", "--arg", f"tmp={size}", "--no-progress"]) == 2
    assert capsys.readouterr().err == f"error: --arg tmp: {message}\n"
