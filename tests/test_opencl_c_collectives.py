"""Work-group functions (OpenCL C 2.0 6.13.15) and sub-group functions (cl_khr_subgroups,
a sub-group being a wavefront): real kernels, checked against numpy."""
import numpy as np
import pytest
from test_opencl_c import RNG, compile_error, run

from simulator.kernels import KernelError, Memory, compile_source, launch
from simulator.stream import Unit

OPS = ("reduce_add", "reduce_min", "reduce_max", "scan_inclusive_add", "scan_inclusive_min",
       "scan_inclusive_max", "scan_exclusive_add", "scan_exclusive_min", "scan_exclusive_max")


def _reference(values, dtype):
    """Each of OPS over each row of ``values`` (one row per work-group, in linear local id order)."""
    out = []
    for name in OPS:
        kind, op = name.rsplit("_", 1)
        ufunc = {"add": np.add, "min": np.minimum, "max": np.maximum}[op]
        if kind == "reduce":
            result = np.repeat(ufunc.reduce(values, axis=1, dtype=dtype)[:, None], values.shape[1], axis=1)
        else:
            result = ufunc.accumulate(values, axis=1, dtype=dtype)
            if kind == "scan_exclusive":
                if op == "add":
                    first = 0
                elif dtype.kind == "f":
                    first = np.inf if op == "min" else -np.inf
                else:
                    first = np.iinfo(dtype).max if op == "min" else np.iinfo(dtype).min
                result = np.concatenate([np.full((len(values), 1), first, dtype), result[:, :-1]], axis=1)
        out.append(result)
    return np.stack(out, axis=-1)


@pytest.mark.parametrize("type_name,dtype", [("int", np.int32), ("uint", np.uint32), ("long", np.int64),
                                             ("ulong", np.uint64), ("float", np.float32),
                                             ("double", np.float64)])
def test_work_group_reductions_and_scans_follow_the_linear_local_id(type_name, dtype):
    """Two 10x10 work-groups (100 work-items: a full and a part-empty wavefront each): the
    scans run in linear local id order, the exclusive scans start from the identity (0,
    the type's largest or smallest value, ±inf), integer sums wrap."""
    calls = "\n".join(f"    out[i * 9 + {k}] = work_group_{name}(v);" for k, name in enumerate(OPS))
    src = f"""
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
__kernel void k(__global const {type_name} *x, __global {type_name} *out) {{
    int g = get_group_id(1) * get_num_groups(0) + get_group_id(0);
    int l = get_local_id(1) * get_local_size(0) + get_local_id(0);
    int i = g * 100 + l;
    {type_name} v = x[i];
{calls}
}}"""
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        x = (RNG.standard_normal(200) * 100).astype(dtype)
    else:
        info = np.iinfo(dtype)
        x = RNG.integers(info.min, info.max, 200, dtype=dtype, endpoint=True)   # sums wrap
    out = np.zeros(200 * 9, dtype)
    run(src, (20, 10), (10, 10), {"x": x, "out": out})
    got = out.reshape(2, 100, 9)
    with np.errstate(over="ignore"):
        expect = _reference(x.reshape(2, 100), dtype)
    exact = [k for k, name in enumerate(OPS) if not name.endswith("add")]
    np.testing.assert_array_equal(got[..., exact], expect[..., exact])
    adds = [k for k, name in enumerate(OPS) if name.endswith("add")]
    if dtype.kind == "f":   # the order of a float sum is not specified
        np.testing.assert_allclose(got[..., adds], expect[..., adds], rtol=1e-4, atol=1e-3)
    else:
        np.testing.assert_array_equal(got[..., adds], expect[..., adds])
    first = got[:, 0, 6:]   # exclusive scans of the first work-item: the identities
    if dtype.kind == "f":
        np.testing.assert_array_equal(first, [[0, np.inf, -np.inf]] * 2)
    else:
        np.testing.assert_array_equal(first, [[0, np.iinfo(dtype).max, np.iinfo(dtype).min]] * 2)


def test_work_group_all_any_and_broadcast_in_one_two_and_three_dimensions():
    """broadcast(a, x), (a, x, y), (a, x, y, z) read the work-item at that local id (the
    one-dimensional form names x); all/any test a predicate over the whole work-group."""
    src = """
__kernel void k(__global const int *x, __global int *out, int cut) {
    int l = (get_local_id(2) * get_local_size(1) + get_local_id(1)) * get_local_size(0) + get_local_id(0);
    int i = get_group_id(0) * 24 + l;
    int v = x[i];
    out[i * 6 + 0] = work_group_broadcast(v, 1);
    out[i * 6 + 1] = work_group_broadcast(v, 2, 1);
    out[i * 6 + 2] = work_group_broadcast(v, (size_t)3, 2, get_local_size(2) - 1);
    out[i * 6 + 3] = work_group_all(v > cut);
    out[i * 6 + 4] = work_group_any(v == cut);
    out[i * 6 + 5] = (int)work_group_broadcast((double)v / 2, 0, 0, 0) * 2;
}"""
    x = RNG.integers(0, 1000, 48).astype(np.int32)
    x[24:] += 2000                     # the second group: every value above the cut
    x[30] = 1000                       # ... and one equal to it
    out = np.zeros(48 * 6, np.int32)
    run(src, (8, 3, 2), (4, 3, 2), {"x": x, "out": out, "cut": 1000})
    got = out.reshape(2, 24, 6)
    groups = x.reshape(2, 24)
    linear = [1, 2 + 1 * 4, 3 + 2 * 4 + 1 * 12]
    for k, at in enumerate(linear):
        np.testing.assert_array_equal(got[:, :, k], np.repeat(groups[:, at:at + 1], 24, axis=1))
    np.testing.assert_array_equal(got[:, :, 3], [[0] * 24, [0] * 24])   # group 2 holds 1000 itself
    np.testing.assert_array_equal(got[:, :, 4], [[0] * 24, [1] * 24])
    np.testing.assert_array_equal(got[:, :, 5], np.repeat(groups[:, :1] // 2 * 2, 24, axis=1))
    x[30] = 3000
    run(src, (8, 3, 2), (4, 3, 2), {"x": x, "out": out, "cut": 1000})
    np.testing.assert_array_equal(out.reshape(2, 24, 6)[:, :, 3], [[0] * 24, [1] * 24])


def test_sub_group_functions_work_on_each_wavefront():
    """A sub-group is a wavefront: a work-group of 100 has one of 64 work-items and one of
    36; the sub-group functions combine over each, in sub-group local id order."""
    src = """
#ifndef cl_khr_subgroups
#error no sub-groups
#endif
#pragma OPENCL EXTENSION cl_khr_subgroups : enable
__kernel void k(__global const int *x, __global int *ids, __global int *out, __global float *f) {
    int i = get_global_id(0);
    int v = x[i];
    ids[i * 6 + 0] = get_sub_group_id();
    ids[i * 6 + 1] = get_sub_group_local_id();
    ids[i * 6 + 2] = get_sub_group_size();
    ids[i * 6 + 3] = get_max_sub_group_size();
    ids[i * 6 + 4] = get_num_sub_groups();
    ids[i * 6 + 5] = get_enqueued_num_sub_groups();
    sub_group_barrier(CLK_LOCAL_MEM_FENCE);
    out[i * 6 + 0] = sub_group_reduce_add(v);
    out[i * 6 + 1] = sub_group_scan_inclusive_max(v);
    out[i * 6 + 2] = sub_group_scan_exclusive_add(v);
    out[i * 6 + 3] = sub_group_broadcast(v, 5);
    out[i * 6 + 4] = sub_group_all(v >= 0) + 2 * sub_group_any(v > 990);
    out[i * 6 + 5] = sub_group_scan_exclusive_min(v);
    f[i] = sub_group_reduce_min((float)v / 4.0f);
}"""
    x = RNG.integers(0, 1000, 200).astype(np.int32)
    x[150] = 995
    ids, out, f = np.zeros(200 * 6, np.int32), np.zeros(200 * 6, np.int32), np.zeros(200, np.float32)
    run(src, (200,), (100,), {"x": x, "ids": ids, "out": out, "f": f})
    ids, out = ids.reshape(200, 6), out.reshape(200, 6)
    local = np.tile(np.arange(100), 2)
    np.testing.assert_array_equal(ids[:, 0], local // 64)
    np.testing.assert_array_equal(ids[:, 1], local % 64)
    np.testing.assert_array_equal(ids[:, 2], np.where(local < 64, 64, 36))
    np.testing.assert_array_equal(ids[:, 3:], np.tile([64, 2, 2], (200, 1)))
    waves = np.split(x, [64, 100, 164])
    expect = []
    for w in waves:
        exclusive = np.r_[0, np.cumsum(w)[:-1]]
        expect.append(np.stack([np.full(len(w), w.sum()), np.maximum.accumulate(w), exclusive,
                                np.full(len(w), w[5]), np.full(len(w), 1 + 2 * (w > 990).any()),
                                np.r_[2**31 - 1, np.minimum.accumulate(w)[:-1]]], 1))
    np.testing.assert_array_equal(out, np.concatenate(expect))
    quarters = [np.full(len(w), w.min() / np.float32(4)) for w in waves]
    np.testing.assert_array_equal(f, np.concatenate(quarters))


def test_a_work_group_function_is_a_barrier_in_the_instruction_stream():
    """A work-group function waits like barrier (one BARRIER per wavefront); a sub-group
    one does not: a wavefront runs its work-items in lockstep."""
    def units(body):
        program = compile_source("t.cl", "__kernel void k(__global int *o) {\n  int i = get_global_id(0);\n"
                                 f"  o[i] = {body};\n}}")
        memory = Memory()
        result = launch(program, None, (256,), (128,), {"o": memory.buffer("o", np.zeros(256, np.int32))})
        return [[(int(u), int(line)) for u, line in zip(w.insts["unit"], w.insts["line"])]
                for g in result.work_groups for w in g.wavefronts]

    for stream in units("work_group_reduce_add(i)"):
        assert stream.count((Unit.BARRIER, 3)) == 1
    for stream in units("sub_group_reduce_add(i)"):
        assert all(unit != Unit.BARRIER for unit, _ in stream)


@pytest.mark.parametrize("body,message", [
    ("if (i < 40) o[i] = work_group_reduce_add(i);",
     "3:22: work_group_reduce_add is reached by 40 of the 100 work-items of work-group (0,): all of them"
     " must reach it"),
    ("if (i >= 140) return;\n  o[i] = work_group_scan_inclusive_min(i);",
     "4:10: work_group_scan_inclusive_min is reached by 40 of the 100 work-items of work-group (1,)"),
    ("if (get_local_id(0) < 99) o[i] = sub_group_any(i);",
     "3:36: sub_group_any is reached by 35 of the 36 work-items of sub-group 1 of work-group (0,)"),
    ("o[i] = work_group_broadcast(i, i % 2);",
     "3:10: work_group_broadcast: the local id must be the same for every work-item of the group"),
    ("o[i] = work_group_broadcast(i, 100);",
     "3:10: work_group_broadcast: local id (100,) is outside the work-group of size (100,)"),
    ("o[i] = work_group_broadcast(i, 0, 1);",
     "3:10: work_group_broadcast: local id (0, 1) is outside the work-group of size (100,)"),
    ("o[i] = sub_group_broadcast(i, 40);",
     "3:10: sub_group_broadcast: sub-group local id 40 is outside the sub-group of 36 work-items"),
])
def test_work_group_functions_that_not_every_work_item_reaches_are_located_errors(body, message):
    src = "__kernel void k(__global int *o) {\n  int i = get_global_id(0);\n  " + body + "\n}"
    with pytest.raises(KernelError) as info:
        run(src, (200,), (100,), {"o": np.zeros(200, np.int32)})
    assert str(info.value).startswith("t.cl:" + message), str(info.value)


@pytest.mark.parametrize("call,message", [
    ("work_group_reduce_add((float4)(1.0f))",
     "3:32: work_group_reduce_add takes a scalar int, uint, long, ulong, float or double, not float4"),
    ("work_group_any(o)", "3:25: work_group_any takes an int predicate, not global int*"),
    ("work_group_scan_exclusive_max(1, 2)", "3:10: work_group_scan_exclusive_max takes 1 argument"),
    ("work_group_broadcast(1)", "3:10: work_group_broadcast takes 2 to 4 arguments"),
    ("sub_group_broadcast(1, 0, 0)", "3:10: sub_group_broadcast takes 2 arguments"),
    ("work_group_broadcast(1, 0.5f)", "3:34: work_group_broadcast needs an integer local id, not float"),
])
def test_work_group_functions_refuse_arguments_they_do_not_take(call, message):
    src = "__kernel void k(__global int *o) {\n  int i = get_global_id(0);\n  o[i] = " + call + ";\n}"
    text = compile_error(src)
    assert text.startswith("t.cl:" + message), text


@pytest.mark.parametrize("line,message", [
    ("o[i] = sub_group_barrier(CLK_LOCAL_MEM_FENCE);", "3:10: sub_group_barrier is a statement, not a value"),
    ("sub_group_barrier(i);", "3:3: sub_group_barrier takes constant fence flags (and a memory scope)"),
])
def test_sub_group_barrier_is_a_statement_with_constant_flags(line, message):
    src = "__kernel void k(__global int *o) {\n  int i = get_global_id(0);\n  " + line + "\n}"
    text = compile_error(src)
    assert text.startswith("t.cl:" + message), text
