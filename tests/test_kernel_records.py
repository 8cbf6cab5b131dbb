"""Kernel records in the trace: Klein's memory, branching and debug data."""
import json
import sqlite3

import numpy as np
import pytest

from simulator.kernels import LocalMem, Memory, builtin_source, compile_source
from simulator.kernels.records import KernelRecorder, proxy_warps
from simulator.tracing.writer import TraceWriter
from simulator.workloads import WORKLOADS


def reduction_trace(tmp_path, groups=2, **recorder_options):
    program = compile_source("reduction_v1.cl", builtin_source("reduction_v1"))
    mem = Memory()
    n = 64 * groups
    data = mem.buffer("in", np.arange(n, dtype=np.float32))
    out = mem.buffer("out", np.zeros(groups, dtype=np.float32))
    writer = TraceWriter(tmp_path / "t.sqlite", command="test")
    recorder = KernelRecorder(writer, **recorder_options)
    recorder.launch(program, "reduce", (n,), (64,),
                    {"g_idata": data, "g_odata": out, "n": n, "sdata": LocalMem(64)})
    writer.finalize(completed=True)
    writer.close()
    np.testing.assert_allclose(out.array, np.arange(n).reshape(groups, 64).sum(1))
    return sqlite3.connect(tmp_path / "t.sqlite"), program


def test_source_launch_and_arrays_are_recorded(tmp_path):
    db, program = reduction_trace(tmp_path)
    path, text, emits, binds = db.execute("SELECT path, text, emits, binds FROM kernel_source").fetchone()
    assert path == "reduction_v1.cl" and text == program.source
    assert json.loads(emits) == [] and json.loads(binds) == []
    row = db.execute("SELECT kernel, global_size, local_size, work_groups, wavefronts, args,"
                     " lds_bytes, lds_max_degree FROM kernel_launch").fetchone()
    assert row[:5] == ("reduce", "[128]", "[64]", 2, 2)
    args = json.loads(row[5])
    assert args["n"] == 128 and args["sdata"] == {"local": 64} and args["g_idata"]["bytes"] == 512
    assert row[6] == 256 and row[7] == 1
    arrays = dict(db.execute("SELECT name, watched FROM kernel_array").fetchall())
    assert arrays == {"g_idata": 0, "g_odata": 0, "sdata": 1}


def test_watched_accesses_carry_logical_time_and_banks(tmp_path):
    db, _ = reduction_trace(tmp_path, groups=1)
    rows = db.execute("SELECT epoch, local_id, kind, line, element, address, bank FROM kernel_access"
                      " ORDER BY seq, local_id").fetchall()
    kinds = [r[2] for r in rows]
    # 64 initial writes, 63 active lanes x (2 reads + 1 write) over the six steps,
    # 7 barriers (one row each for the group), and work-item 0's final read.
    assert kinds.count(1) == 64 + 63 and kinds.count(0) == 2 * 63 + 1 and kinds.count(2) == 7
    for epoch, local_id, kind, line, element, address, bank in rows:
        if kind == 2:
            assert element == -1 and bank == -1
            continue
        assert address == element * 4 and bank == element % 32
        if line == 16:  # inside the loop: step k runs between barriers k and k+1
            s = 1 << (epoch - 1)
            assert local_id % (2 * s) == 0
    step_one = [r for r in rows if r[3] == 16 and r[0] == 1 and r[2] == 0]
    assert sorted({r[4] for r in step_one}) == list(range(64))


def decode(bits, nodes_by_id, children):
    """Klein's Algorithm 4.1: walk the semantic model, eating one bit per branch test."""
    out = []
    pos = [0]

    def eat(node):
        out.append(node)
        pos[0] += 1
        return bits[pos[0] - 1] == "1"

    def walk(siblings):
        for node in siblings:
            if nodes_by_id[node] == "if":
                branch = "then" if eat(node) else "else"
                walk(children.get((node, branch), []))
            else:
                while pos[0] < len(bits) and eat(node):
                    walk(children.get((node, "body"), []))

    walk(children.get((-1, ""), []))
    return out


def test_branch_patterns_decode_with_the_semantic_model(tmp_path):
    db, _ = reduction_trace(tmp_path)
    nodes = db.execute("SELECT id, parent, branch, type, line FROM kernel_branch_node ORDER BY id").fetchall()
    assert [(n[3], n[4]) for n in nodes] == [("if", 8), ("loop", 14), ("if", 15), ("if", 20)]
    kinds = {n[0]: n[3] for n in nodes}
    children = {}
    for node_id, parent, branch, _, _ in nodes:
        children.setdefault((parent, branch), []).append(node_id)
    patterns = db.execute("SELECT bits, nodes, work_items FROM kernel_branch_pattern").fetchall()
    assert sum(p[2] for p in patterns) == 128
    for bits, node_text, _ in patterns:
        assert decode(bits, kinds, children) == [int(x) for x in node_text.split(",")]
    # Work-item 0 takes every branch of the tree; the others drop out of the reduction.
    zero = db.execute("SELECT p.bits FROM kernel_branch b JOIN kernel_branch_pattern p"
                      " ON p.launch = b.launch AND p.id = b.pattern WHERE b.work_item = 0").fetchone()[0]
    assert zero == "1" + "11" * 6 + "0" + "1"


def test_proxy_warps_group_identical_wavefronts(tmp_path):
    db, _ = reduction_trace(tmp_path, groups=3)
    proxies = db.execute("SELECT wavefronts, representative, patterns, divergent"
                         " FROM kernel_proxy_warp").fetchall()
    assert len(proxies) == 1
    count, rep, regions, divergent = proxies[0]
    assert count == 3 and rep == 0 and divergent == 1
    assert sum(json.loads(regions).values()) == 64
    lanes = db.execute("SELECT count(*), count(DISTINCT wavefront) FROM kernel_branch"
                       " WHERE proxy = 0").fetchone()
    assert lanes == (192, 3)


def test_proxy_warps_order_largest_first():
    wavefront = np.repeat([0, 1, 2], 64)
    lane = np.tile(np.arange(64), 3)
    pattern = np.concatenate([np.zeros(64), np.ones(64), np.zeros(64)]).astype(int)
    rows, proxies = proxy_warps(wavefront, lane, pattern)
    assert proxies[0][:2] == (2, 0) and proxies[1][:2] == (1, 1)
    assert list(rows[::64]) == [0, 1, 0]


def test_limits_truncate_and_say_so(tmp_path):
    db, _ = reduction_trace(tmp_path, max_accesses=100, max_branch_bits=50)
    assert db.execute("SELECT watch_truncated, branch_truncated FROM kernel_launch").fetchone() == (1, 1)
    assert db.execute("SELECT count(*) FROM kernel_access").fetchone()[0] <= 100


def test_uninstrumented_runs_record_only_source_and_launch(tmp_path):
    db, _ = reduction_trace(tmp_path, instrument=False)
    assert db.execute("SELECT count(*) FROM kernel_launch").fetchone()[0] == 1
    for table in ("kernel_access", "kernel_branch", "kernel_branch_pattern", "kernel_emit"):
        assert db.execute(f"SELECT count(*) FROM {table}").fetchone()[0] == 0


def test_emitted_values_and_bind_specs(tmp_path):
    program = compile_source("emit.cl", """
kernel void k(global const float *in, global float *out)
{
    @emit float doubled[100];
    int i = get_global_id(0);
    doubled = in[i] * 2.0f;
    out[i] = in[i];
}
@bind ["class":"lineChart", "data":["doubled"]]
""")
    mem = Memory()
    data = mem.buffer("in", np.arange(128, dtype=np.float32))
    recorder = KernelRecorder()
    out = mem.buffer("out", np.zeros(128, np.float32))
    recorder.launch(program, None, (128,), (64,), {"in": data, "out": out})
    writer = TraceWriter(tmp_path / "e.sqlite", command="test")
    recorder.write_to(writer)
    writer.finalize(completed=True)
    writer.close()
    db = sqlite3.connect(tmp_path / "e.sqlite")
    values = db.execute("SELECT idx, value FROM kernel_emit WHERE name = 'doubled' ORDER BY idx").fetchall()
    assert values == [(i, 2.0 * i) for i in range(100)]
    emits, binds = db.execute("SELECT emits, binds FROM kernel_source").fetchone()
    assert json.loads(emits) == [{"name": "doubled", "type": "float", "length": 100, "line": 4}]
    assert json.loads(binds) == [{"class": "lineChart", "data": ["doubled"], "line": 9}]


def test_workload_records_through_simulate(tmp_path):
    pytest.importorskip("simulator.gpu.run")
    from simulator.gpu.config import default_config
    from simulator.runs.records import simulate_with_records

    workload = WORKLOADS["sobel"](seed=0, width=32, height=16, local_x=16, local_y=8)
    recorder = KernelRecorder()
    path = tmp_path / "sobel.sqlite"
    result = simulate_with_records(workload, default_config(), path, recorder, progress=False,
                                   trace_level="kernel")
    workload.check()
    assert result.cycles > 0
    db = sqlite3.connect(path)
    assert db.execute("SELECT count(*) FROM task").fetchone()[0] > 0
    assert db.execute("SELECT count(*) FROM kernel_access WHERE array = 'tile'").fetchone()[0] > 0
    proxies = db.execute("SELECT count(*), sum(divergent) FROM kernel_proxy_warp").fetchone()
    assert proxies[0] >= 2 and proxies[1] >= 1


def test_records_are_deterministic(tmp_path):
    def dump(sub):
        (tmp_path / sub).mkdir()
        db, _ = reduction_trace(tmp_path / sub, groups=3)
        return {table: db.execute(f"SELECT * FROM {table} ORDER BY 1, 2").fetchall()
                for table in ("kernel_launch", "kernel_access", "kernel_branch", "kernel_branch_pattern",
                              "kernel_proxy_warp", "kernel_array")}

    assert dump("a") == dump("b")


def test_record_only_writes_a_finished_trace_without_the_timing_model(tmp_path):
    from simulator.runs.records import record_only

    workload = WORKLOADS["reduction-v1"](seed=2, size=1000, local=64)
    path = tmp_path / "functional.sqlite"
    launches, _ = record_only(workload, path, KernelRecorder(), command="test")
    workload.check()
    db = sqlite3.connect(path)
    assert launches == 2
    assert db.execute("SELECT completed, finalized, workload FROM run").fetchone() == (1, 1, "reduction-v1")
    assert db.execute("SELECT count(*) FROM kernel_launch").fetchone()[0] == 2
    assert db.execute("SELECT count(*) FROM kernel_access").fetchone()[0] > 0
    assert not list(tmp_path.glob(".*partial*"))


def test_kernel_rows_go_in_in_the_order_of_their_indexes(tmp_path):
    """Each launch's access, branch and emit rows are written sorted by the key of their
    table's index, after every earlier launch's: the indexes, kept as rows go in, only
    ever grow at their end (built at finalize instead, the run waited for them)."""
    program = compile_source("both.cl", """
kernel void k(global const float *in, global float *out, local float *tile)
{
    @emit float seen[1024];
    int i = get_global_id(0);
    int l = get_local_id(0);
    @watch tile;
    tile[l] = in[i];
    barrier(CLK_LOCAL_MEM_FENCE);
    if ((i / 64) % 3 == 0 && l % 2 == 0)
        out[i] = tile[63 - l];
    else
        out[i] = tile[l];
    seen = in[i];
}
""")
    mem = Memory()
    writer = TraceWriter(tmp_path / "k.sqlite", command="test")
    recorder = KernelRecorder(writer)
    for n in (512, 256):
        data = mem.buffer(f"in{n}", np.arange(n, dtype=np.float32)[::-1].copy())
        out = mem.buffer(f"out{n}", np.zeros(n, np.float32))
        recorder.launch(program, None, (n,), (64,), {"in": data, "out": out, "tile": LocalMem(64)})
    writer.finalize(completed=True)
    writer.close()
    db = sqlite3.connect(tmp_path / "k.sqlite")
    for table, key in (("kernel_access", "launch, work_group, seq"),
                       ("kernel_branch", "launch, proxy, wavefront"),
                       ("kernel_emit", "launch, name, idx")):
        keys = db.execute(f"SELECT {key} FROM {table} ORDER BY rowid").fetchall()
        assert len({k[0] for k in keys}) == 2, table
        assert keys == sorted(keys), table
