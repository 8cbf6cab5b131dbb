"""The kernel language: what the frontend accepts, and how it reports what it refuses."""
import pytest

from simulator.kernels import KernelError, Unsupported, compile_source, ir
from simulator.kernels import types as T


def kernel_of(src, name=None):
    return compile_source("t.cl", src).kernel(name)


def test_qualifiers_attach_to_their_declarations():
    k = kernel_of("""
__kernel void k(__global const float *a, global float4 *b, __constant int *c,
                local float *scratch, int n, uint m)
{
    __local float tile[16][17];
    local int counts[8];
    float p[4];
}""")
    spaces = {name: info.space for name, info in k.arrays.items()}
    assert spaces == {"a": "global", "b": "global", "c": "constant", "scratch": "local",
                      "tile": "local", "counts": "local", "p": "private"}
    assert k.arrays["b"].elem == T.Vector(T.FLOAT, 4)
    assert k.arrays["tile"].dims == (16, 17) and k.arrays["tile"].length == 272
    assert dict(k.params)["n"] is T.INT and dict(k.params)["m"] is T.UINT


def test_language_coverage_compiles():
    k = kernel_of("""
#define BLOCK 16
kernel void k(global float *out, global const int *in, int n)
{
    int gid = get_global_id(0) + get_group_id(0) * 0 + get_local_id(0) * 0;
    uint sizes = get_global_size(0) + get_local_size(0) + get_num_groups(0);
    float4 v = (float4)(1.0f, 2.0f, 3.0f, 4.0f);
    float2 w = v.xy + v.s23;
    int acc = 0;
    for (int i = 0; i < n; i++) {
        if (i % 3 == 0 && in[i] > 0) continue;
        else if (i > 100 || !(i & 1)) break;
        acc += in[i] << 1;
    }
    while (acc > BLOCK) { acc -= 7; }
    do { acc++; } while (acc < 0);
    float f = sqrt(fabs((float)acc)) + min(1.0f, 2.0f) + mad(w.x, w.y, 1.0f) + dot(v, v);
    acc = (acc > 5) ? acc : -acc;
    acc ^= ~sizes;
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    if (gid < n) out[gid] = f + convert_float(acc) + v.w;
}""")
    kinds = [b.kind for b in k.branch_nodes]
    assert kinds.count("loop") == 3 and kinds.count("if") == 3
    assert "gid" in k.varying and "sizes" not in k.varying


def test_attributes_and_pragmas_are_ignored():
    k = kernel_of("""#pragma OPENCL EXTENSION cl_khr_byte_addressable_store : enable
__kernel __attribute__((reqd_work_group_size(64, 1, 1)))
void k(__global float *a)
{
    a[get_global_id(0)] = 1.0f;
}""")
    assert k.name == "k" and k.arrays["a"].space == "global"
    with pytest.raises(KernelError, match=r"t.cl:1:\d+: __attribute__ must be followed by"):
        kernel_of("__kernel __attribute__ void k(global float *a) { a[0] = 1.0f; }")


def test_annotations_are_recorded():
    prog = compile_source("t.cl", """
kernel void k(global float *in, global float *out)
{
    local float data[128];
    @watch data;
    @emit float emitted[128];
    int id = get_local_id(0);
    data[id] = in[id];
    emitted = data[id];
    out[id] = data[id];
}
@bind ["class":"stackedAreaChart", "data":["emitted"]]
""")
    k = prog.kernel()
    assert any(isinstance(s, ir.Watch) and s.array == "data" for s in k.body.stmts)
    assert any(isinstance(s, ir.EmitStore) for s in k.body.stmts)
    assert prog.emits[0].name == "emitted" and prog.emits[0].length == 128
    assert prog.binds == [(12, {"class": "stackedAreaChart", "data": ["emitted"]})]


def test_semantic_model_nests_branches():
    k = kernel_of("""kernel void k(global int *a)
{
    for (int s = 1; s < 64; s *= 2) {
        if (a[s] == 0) {
            a[s] = 1;
        } else {
            while (a[s] > 0) a[s] = a[s] - 1;
        }
    }
}""")
    loop, cond, inner = k.branch_nodes
    assert (loop.kind, loop.parent, loop.line) == ("loop", -1, 3)
    assert (cond.kind, cond.parent, cond.branch, cond.line) == ("if", loop.id, "body", 4)
    assert (inner.kind, inner.parent, inner.branch) == ("loop", cond.id, "else")
    assert loop.end_line >= 7


def test_uniformity_marks_scalar_and_wave_values():
    k = kernel_of("""kernel void k(global int *a, int n)
{
    int g = get_group_id(0);
    int t = get_local_id(0);
    int s = n * 2;
    if (t < 3) s = 1;
    a[t] = g + s;
}""")
    assert "g" not in k.wave_varying and "g" in k.varying
    assert "t" in k.wave_varying
    assert "s" in k.varying  # assigned under a per-lane condition


ERRORS = [
    ("kernel void k(global float *a) {\n  a[0] = ;\n}", 2, KernelError, "invalid expression"),
    ("kernel void k(global float *a) {\n  int x = 3\n  a[0] = x;\n}", 3, KernelError, "syntax error before 'a'"),
    ("kernel void k(global float *a) {\n  a[0] = y;\n}", 2, KernelError, "'y' is not declared"),
    ("kernel void k(global int *a) {\n  goto end;\n end: ;\n}", 2, Unsupported, "goto"),
    ("kernel void k(global int *a) {\n  a[0] = foo(1);\n}", 2, KernelError, "call to undeclared function 'foo'"),
    ("kernel void k(global int *a) {\n  @wach a;\n}", 2, KernelError, "unknown annotation '@wach'"),
    ("kernel void k(global int *a) {\n  @watch a\n}", 2, KernelError, "malformed @watch"),
    ('kernel void k(global int *a) { a[0]=1; }\n@bind ["class": "x"]', 2, KernelError, '"data"'),
    ("kernel void k(global float *a) {\n  atomic_add(a, 1);\n}", 2, KernelError, "works on int, uint"),
    ("kernel void k(global int *a) {\n  /* unterminated\n}", 2, KernelError, "unterminated"),
    ("kernel void k(global int *a, int f) {\n  barrier(f);\n}", 2, KernelError, "barrier flags must be constant"),
    ("kernel void k(global float *a) {\n  int x = a[0] % 2;\n}", 2, KernelError, "needs integer operands"),
    ("kernel void k(global float4 *a) {\n  float x = a[0].q;\n}", 2, KernelError, "not a component"),
    ("kernel void k(global int *a) {\n  break;\n}", 2, KernelError, "break outside a loop"),
    ("kernel void k(global int *a) {\n  return 1;\n}", 2, KernelError, "returns void"),
    ("kernel int k(global int *a) {\n  a[0] = 1;\n}", 1, KernelError, "must return void"),
    ("#include <x.h>\nkernel void k(global int *a) { a[0]=1; }", 1, KernelError, "#include file 'x.h' not found"),
    ("void nothing(void) {}", 1, KernelError, "no kernel function"),
    ("", 1, KernelError, "no kernel function"),
]


@pytest.mark.parametrize("src,line,cls,reason", ERRORS)
def test_errors_name_file_line_column_and_reason(src, line, cls, reason):
    with pytest.raises(cls) as info:
        compile_source("t.cl", src)
    message = str(info.value)
    assert message.startswith(f"t.cl:{line}:"), message
    assert info.value.col >= 1
    assert reason.lower() in message.lower(), message
    assert "\n" not in message
