"""Random bytes and random mutations of valid inputs, fed to every importer and to
``run-kernel`` through the command line: a one-line error or a valid trace, never a
traceback, never a changed input, never a stray file."""
import contextlib
import functools
import io
import json
import os
import sqlite3
import tempfile
from pathlib import Path

import pytest
from faults import sums
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_importers import V3_ROWS, _akita_v3, _akita_v45

from simulator.__main__ import main

FUZZ = settings(max_examples=int(os.environ.get("GPUSCOPE_FUZZ_EXAMPLES", "100")), deadline=None,
                derandomize=not os.environ.get("GPUSCOPE_FUZZ_EXAMPLES"),
                suppress_health_check=[HealthCheck.function_scoped_fixture,
                                       HealthCheck.too_slow, HealthCheck.data_too_large])

KERNEL = """// a kernel with a branch, a loop, local memory and a barrier
kernel void reduce(global const float* in, global float* out, local float* s, int n) {
    int i = get_global_id(0);
    int l = get_local_id(0);
    s[l] = i < n ? in[i] : 0.0f;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int step = get_local_size(0) / 2; step > 0; step >>= 1) {
        if (l < step) s[l] += s[l + step];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (l == 0) out[get_group_id(0)] = s[0];
}
"""
KERNEL_ARGS = ["--global", "128", "--local", "64", "--arg", "in=random:128", "--arg",
               "out=zeros:2", "--arg", "s=local:64", "--arg", "n=100", "--no-progress",
               "--trace-level", "kernel"]


@functools.cache
def _seeds():
    """A valid input of each format, as bytes."""
    with tempfile.TemporaryDirectory() as name:
        return _seed_files(Path(name))


def _seed_files(directory):
    _akita_v3(directory / "v3.sqlite3", V3_ROWS * 1 + [
        (f"t{k}", "sim", "req_in", "*mem.ReadReq", f"GPU[1].L2[{k % 4}]", k * 1e-9, k * 1e-9 + 5e-9)
        for k in range(200)])
    _akita_v45(directory / "v5.sqlite3", 5)
    csv = ["ID, ParentID, Kind, What, Where, Start, End"]
    csv += [f"t{k}, {'t0' if k else ''}, req_in, ReadReq, GPU.L2[{k % 3}], {k}e-9, {k + 3}e-9"
            for k in range(50)]
    events = [{"name": "process_name", "ph": "M", "pid": 1, "args": {"name": "GPU"}}]
    events += [{"name": f"k{k}", "cat": "kernel", "ph": "X", "ts": k * 1.5, "dur": 1.25,
                "pid": 1, "tid": k % 2, "args": {"grid": [k, 1, 1]}} for k in range(40)]
    events += [{"name": "b", "ph": "B", "ts": 100, "pid": 2, "tid": 1},
               {"name": "b", "ph": "E", "ts": 101.5, "pid": 2, "tid": 1}]
    return {
        "v3.sqlite3": (directory / "v3.sqlite3").read_bytes(),
        "v5.sqlite3": (directory / "v5.sqlite3").read_bytes(),
        "t.csv": "\n".join(csv).encode() + b"\n",
        "t.json": json.dumps({"traceEvents": events}).encode(),
        "k.cl": KERNEL.encode(),
    }


@st.composite
def mutated(draw, original):
    """``original`` with a few bytes flipped, overwritten, inserted, deleted or cut off;
    for a text format, sometimes a token swapped for another of the same file."""
    data = bytearray(original)
    for _ in range(draw(st.integers(1, 8))):
        action = draw(st.sampled_from(["flip", "set", "insert", "delete", "truncate", "splice"]))
        at = draw(st.integers(0, max(len(data) - 1, 0)))
        if action == "flip" and data:
            data[at] ^= 1 << draw(st.integers(0, 7))
        elif action == "set" and data:
            data[at] = draw(st.sampled_from(b"\x00\xff\x80\"{}[](),;:-.0123456789eE\n\\"))
        elif action == "insert":
            data[at:at] = draw(st.binary(min_size=1, max_size=16))
        elif action == "delete":
            del data[at:at + draw(st.integers(1, 16))]
        elif action == "truncate":
            del data[at:]
        elif action == "splice" and data:
            start = draw(st.integers(0, len(data) - 1))
            data[at:at] = data[start:start + draw(st.integers(1, 64))]
    return bytes(data)


def _run_cli(argv):
    """``main(argv)`` in this process: (exit status, stderr); a traceback fails the test."""
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            code = main([str(a) for a in argv])
        except SystemExit as stop:  # argparse: a usage error
            code = stop.code
    return code, err.getvalue()


def _check_outcome(directory, source, data, out, code, stderr):
    assert source.read_bytes() == data, "the input was changed"
    if code == 0:
        db = sqlite3.connect(f"file:{out}?mode=ro", uri=True)
        assert db.execute("PRAGMA quick_check").fetchone() == ("ok",)
        assert db.execute("SELECT finalized FROM run").fetchone() == (1,)
        db.close()
        left = {source.name, out.name}
    else:
        lines = [line for line in stderr.splitlines() if not line.startswith("note: ")]
        assert len(lines) == 1 and "Traceback" not in stderr, stderr
        left = {source.name}
    assert set(sums(directory)) == left, sorted(sums(directory))


def _import_case(tmp_path_factory, name, data):
    directory = tmp_path_factory.mktemp("fuzz")
    source = directory / name
    source.write_bytes(data)
    out = directory / "out.sqlite"
    code, stderr = _run_cli(["import", source, "-o", out])
    _check_outcome(directory, source, data, out, code, stderr)


@pytest.mark.parametrize("name", ["v3.sqlite3", "v5.sqlite3", "t.csv", "t.json"])
def test_the_seeds_import(tmp_path_factory, name):
    directory = tmp_path_factory.mktemp("seed")
    (directory / name).write_bytes(_seeds()[name])
    assert _run_cli(["import", directory / name, "-o", directory / "o.sqlite"])[0] == 0


@pytest.mark.parametrize("name", ["v3.sqlite3", "v5.sqlite3", "t.csv", "t.json"])
@FUZZ
@given(data=st.data())
def test_importers_on_mutated_input(tmp_path_factory, name, data):
    _import_case(tmp_path_factory, name, data.draw(mutated(_seeds()[name])))


@FUZZ
@given(name=st.sampled_from(["a.sqlite3", "a.csv", "a.json", "a.txt"]),
       data=st.one_of(st.binary(max_size=2048),
                      st.binary(max_size=512).map(lambda b: b"SQLite format 3\x00" + b),
                      st.binary(max_size=512).map(lambda b: b"ID, ParentID, Kind, What, Where,"
                                                  b" Start, End\n" + b),
                      st.binary(max_size=512).map(lambda b: b'{"traceEvents": [' + b)))
def test_importers_on_random_bytes(tmp_path_factory, name, data):
    _import_case(tmp_path_factory, name, data)


@FUZZ
@given(data=st.data())
def test_run_kernel_on_mutated_kernels(tmp_path_factory, data):
    source_bytes = data.draw(st.one_of(mutated(_seeds()["k.cl"]), st.binary(max_size=600)))
    directory = tmp_path_factory.mktemp("kernel")
    source = directory / "k.cl"
    source.write_bytes(source_bytes)
    out = directory / "k.sqlite"
    code, stderr = _run_cli(["run-kernel", source, *KERNEL_ARGS, "-o", out])
    _check_outcome(directory, source, source_bytes, out, code, stderr)
