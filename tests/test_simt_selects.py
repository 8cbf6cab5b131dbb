"""Selects where a GCN compiler emits them: ``?:``, short ``if``s and ``&&``/``||``
whose sides may run on every lane issue ``v_cndmask`` and no branch (``speculation``)."""
import sqlite3

import numpy as np
import pytest

from simulator.kernels import Memory, compile_source, launch
from simulator.kernels.records import KernelRecorder
from simulator.kernels.speculation import MAX_MERGED, SPECULATION_BUDGET
from simulator.stream import WAVEFRONT_SIZE, Unit
from simulator.tracing.writer import TraceWriter

VECTOR = (Unit.VALU, Unit.LDS, Unit.VMEM)


def run(source, items=128, **arrays):
    """Launch ``source`` on ``items`` work-items (groups of 64); return (program, streams, arrays)."""
    program = compile_source("t.cl", source)
    mem = Memory()
    bound = {k: mem.buffer(k, v) if isinstance(v, np.ndarray) else v for k, v in arrays.items()}
    result = launch(program, None, (items,), (64,), bound)
    streams = [w.insts for g in result.work_groups for w in g.wavefronts]
    return program, streams, {k: b.array for k, b in bound.items() if hasattr(b, "array")}


def on_line(streams, line):
    """(unit, active lanes) of every instruction of source line ``line``, wavefront 0."""
    insts = streams[0]
    at = insts["line"] == line
    return list(zip(insts["unit"][at].tolist(), insts["active"][at].tolist()))


def simd_efficiency(streams):
    insts = np.concatenate(streams)
    vector = np.isin(insts["unit"], VECTOR)
    return insts["active"][vector].sum() / (vector.sum() * WAVEFRONT_SIZE)


def is_branch(units):
    return Unit.BRANCH in units or Unit.SALU in units


def test_a_conditional_expression_of_plain_values_is_one_select_on_every_lane():
    a = np.arange(128, dtype=np.int32)
    b = np.full(128, 50, dtype=np.int32)
    _, streams, r = run("""kernel void k(global const int *a, global const int *b, global int *out)
{
    int i = get_global_id(0);
    int x = a[i];
    int y = b[i];
    int c = x < y ? x + 1 : y;
    out[i] = c;
}""", a=a, b=b, out=np.zeros(128, np.int32))
    np.testing.assert_array_equal(r["out"], np.where(a < b, a + 1, b))
    # v_cmp, the add of the taken side on every lane, then v_cndmask: no EXEC-mask code.
    assert on_line(streams, 6) == [(Unit.VALU, 64)] * 3


def test_a_vector_select_takes_one_v_cndmask_per_component():
    _, streams, r = run("""kernel void k(global float4 *out)
{
    int i = get_global_id(0);
    float4 v = (float4)(i, 1.0f, 2.0f, 3.0f);
    out[i] = (i & 1) ? v : -v;
}""", items=64, out=np.zeros(256, np.float32))
    got = r["out"].reshape(64, 4)
    v = np.stack([np.arange(64), np.ones(64), np.full(64, 2), np.full(64, 3)], axis=1)
    np.testing.assert_array_equal(got, np.where((np.arange(64) & 1)[:, None] == 1, v, -v))
    units = [u for u, _ in on_line(streams, 5)]
    # (i & 1), the negation (4 components), 4 v_cndmask; the store.
    assert units.count(Unit.VALU) == 1 + 4 + 4 and not is_branch(units)


def test_a_short_if_else_assigning_scalars_is_if_converted():
    a = np.arange(128, dtype=np.float32) - 64
    program, streams, r = run("""kernel void k(global const float *a, global float *out)
{
    int i = get_global_id(0);
    float v = a[i];
    float s;
    int n = 0;
    if (v < 0.0f) {
        s = -v;
        n++;
    } else {
        s = v * 0.5f;
    }
    out[i] = s + n;
}""", a=a, out=np.zeros(128, np.float32))
    np.testing.assert_array_equal(r["out"], np.where(a < 0, -a + 1, a * 0.5))
    assert program.kernel().branch_nodes == []   # a select is no branch of Klein's model
    units = [u for u, _ in on_line(streams, 7)]
    assert not is_branch(units)
    # v_cmp, then one v_cndmask for each of the two variables the sides set.
    assert units == [Unit.VALU] * 3
    # The sides' own instructions run on every lane (negate, add, multiply).
    for line in (8, 9, 11):
        assert all(active == 64 for _, active in on_line(streams, line))
    assert simd_efficiency(streams) == 1.0


def test_an_if_without_else_that_only_updates_a_variable_is_a_select():
    a = np.arange(64, dtype=np.int32) % 7
    program, streams, r = run("""kernel void k(global const int *a, global int *out)
{
    int i = get_global_id(0);
    int best = 3;
    if (a[i] > best) best = a[i];
    out[i] = best;
}""", items=64, a=a, out=np.zeros(64, np.int32))
    # The side reads memory: LLVM does not load speculatively, so this stays a branch.
    np.testing.assert_array_equal(r["out"], np.maximum(a, 3))
    assert len(program.kernel().branch_nodes) == 1
    program, streams, r = run("""kernel void k(global const int *a, global int *out)
{
    int i = get_global_id(0);
    int best = 3;
    int x = a[i];
    if (x > best) best = x;
    out[i] = best;
}""", items=64, a=a, out=np.zeros(64, np.int32))
    np.testing.assert_array_equal(r["out"], np.maximum(a, 3))
    assert program.kernel().branch_nodes == []
    assert [u for u, _ in on_line(streams, 6)] == [Unit.VALU, Unit.VALU]   # v_cmp, v_cndmask


@pytest.mark.parametrize("expression, why", [
    ("c ? a[i] : 0", "a load may fault"),
    ("c ? atomic_inc(&a[0]) : 0", "an atomic has a side effect"),
    ("c ? i / n : 0", "an integer division by a variable may trap"),
    ("c ? (i ? 1 : a[i]) : 0", "a side holds a branch"),
    ("c ? i * i * i * i * i * i : 0", "five instructions are over the budget"),
])
def test_conditional_expressions_that_stay_branches(expression, why):
    _, streams, r = run(f"""kernel void k(global int *a, global int *out, int n)
{{
    int i = get_global_id(0);
    int c = i % 2;
    out[i] = {expression};
}}""", items=64, a=np.arange(64, dtype=np.int32), out=np.zeros(64, np.int32), n=3)
    units = [u for u, _ in on_line(streams, 5)]
    assert Unit.BRANCH in units and Unit.SALU in units, why
    assert any(active == 32 for _, active in on_line(streams, 5)), why


def test_one_expensive_instruction_alone_is_still_speculated():
    # -speculate-one-expensive-inst: a division by a constant (GCN's ~10-instruction
    # sequence) is the only instruction of the sides, so LLVM flattens it anyway.
    _, streams, r = run("""kernel void k(global int *out)
{
    int i = get_global_id(0);
    out[i] = (i & 1) ? i / 3 : i;
}""", items=64, out=np.zeros(64, np.int32))
    i = np.arange(64)
    np.testing.assert_array_equal(r["out"], np.where(i & 1, i // 3, i))
    units = [u for u, _ in on_line(streams, 4)]
    assert not is_branch(units) and all(active == 64 for _, active in on_line(streams, 4))


def test_if_conversion_limits_stay_branches():
    assignments = "\n".join(f"        v{k} = i + {k};" for k in range(MAX_MERGED + 1))
    declared = ", ".join(f"v{k} = 0" for k in range(MAX_MERGED + 1))
    total = " + ".join(f"v{k}" for k in range(MAX_MERGED + 1))
    program, _, r = run(f"""kernel void k(global int *out)
{{
    int i = get_global_id(0);
    int {declared};
    if (i & 1) {{
{assignments}
    }}
    out[i] = {total};
}}""", items=64, out=np.zeros(64, np.int32))
    assert len(program.kernel().branch_nodes) == 1, "more merged variables than LLVM folds"
    i = np.arange(64)
    np.testing.assert_array_equal(r["out"], np.where(i & 1, 4 * i + 6, 0))
    for adds, nodes in ((SPECULATION_BUDGET, 0), (SPECULATION_BUDGET + 1, 1)):
        terms = " + ".join(["i"] * (adds + 1))
        program, _, r = run(f"""kernel void k(global int *out)
{{
    int i = get_global_id(0);
    int v = 0;
    if (i & 1) v = {terms};
    out[i] = v;
}}""", items=64, out=np.zeros(64, np.int32))
        assert len(program.kernel().branch_nodes) == nodes, f"{adds} instructions"
        np.testing.assert_array_equal(r["out"], np.where(i & 1, (adds + 1) * i, 0))
    program, _, _ = run("""kernel void k(global int *out)
{
    int i = get_global_id(0);
    int v = 0;
    if (i & 1) { v = 1; out[i] = v; }
}""", items=64, out=np.zeros(64, np.int32))
    assert len(program.kernel().branch_nodes) == 1, "a store is not an assignment"


def test_the_right_side_of_a_cheap_or_runs_on_every_lane():
    _, streams, r = run("""kernel void k(global int *out, int w)
{
    int x = get_global_id(0);
    out[x] = x == 0 || x == w - 1;
}""", items=64, out=np.zeros(64, np.int32), w=64)
    np.testing.assert_array_equal(r["out"], (np.arange(64) == 0) | (np.arange(64) == 63))
    assert all(active == 64 for _, active in on_line(streams, 4))
    # A load on the right side stays guarded by the left (C's short circuit).
    _, streams, _ = run("""kernel void k(global const int *a, global int *out, int n)
{
    int i = get_global_id(0);
    out[i] = i < n && a[i] > 4;
}""", items=64, a=np.arange(10, dtype=np.int32), out=np.zeros(64, np.int32), n=10)
    assert (Unit.VMEM, 10) in on_line(streams, 4)


def test_a_kernel_of_selects_only_has_full_simd_efficiency():
    src = """kernel void k(global const float *a, global float *out)
{
    int i = get_global_id(0);
    float x = a[i];
    float y = x > 0.0f ? x : 0.0f;
    float z;
    if (i % 3 == 0) z = y * 2.0f; else z = y - 1.0f;
    out[i] = (i & 4) || x < 1.0f ? z : -z;
}"""
    a = np.linspace(-2, 2, 128, dtype=np.float32)
    _, streams, r = run(src, a=a, out=np.zeros(128, np.float32))
    i = np.arange(128)
    y = np.maximum(a, 0)
    z = np.where(i % 3 == 0, y * 2, y - 1)
    np.testing.assert_allclose(r["out"], np.where((i & 4 != 0) | (a < 1), z, -z))
    assert simd_efficiency(streams) == 1.0
    units = np.concatenate(streams)["unit"]
    assert not np.isin(units, (Unit.SALU, Unit.BRANCH)).any()


def test_klein_records_no_branch_bits_for_a_select(tmp_path):
    program = compile_source("t.cl", """kernel void k(global int *out)
{
    int i = get_global_id(0);
    int v;
    if (i & 1) v = 1; else v = 2;
    if (i & 2) {
        out[i] = v;
    }
}""")
    writer = TraceWriter(tmp_path / "t.sqlite", command="test")
    recorder = KernelRecorder(writer)
    recorder.launch(program, "k", (64,), (64,), {"out": Memory().buffer("out", np.zeros(64, np.int32))})
    writer.finalize(completed=True)
    writer.close()
    db = sqlite3.connect(tmp_path / "t.sqlite")
    assert db.execute("SELECT type, line FROM kernel_branch_node").fetchall() == [("if", 6)]
    bits = db.execute("SELECT bits FROM kernel_branch_pattern").fetchall()
    assert sorted(b for (b,) in bits) == ["0", "1"]   # one bit: the real branch's
