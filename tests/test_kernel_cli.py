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
