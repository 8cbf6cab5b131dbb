"""Constant expressions as C computes them: one evaluator for case labels, array sizes,
``__constant`` initializers and enumerators, with the executor's own operators; and the
errors C's rules make of what it forbids or leaves undefined there, located in the source.

``test_constants_vs_gcc`` holds the same evaluator against a real C compiler.
"""
import numpy as np
import pytest
from test_opencl_c import compile_error, run

from simulator.kernels import compile_source, ir


def one_value(body, dtype=np.int64, prelude=""):
    """``out[0]`` after a one-work-item kernel whose body is ``body``."""
    out = np.zeros(1, dtype)
    ctype = {np.int64: "long", np.uint32: "uint", np.float32: "float", np.int32: "int"}[dtype]
    run(f"{prelude}\n__kernel void k(__global {ctype} *out) {{\n{body}\n}}", (1,), (1,), {"out": out})
    return out[0]


# -- the repros ----------------------------------------------------------------------
def test_a_case_label_is_converted_by_its_cast():
    """``(uchar)256`` is 0: the cast wraps, so the label matches ``i == 0``."""
    assert one_value("int i = get_global_id(0); long r = 7;\n"
                     "switch (i) { case (uchar)256: r = 1; break; default: r = 2; }\nout[0] = r;") == 1


def test_an_array_size_compares_unsigned_operands_as_unsigned():
    """``(uint)-1 > 0u`` is true: 4294967295 > 0, not -1 > 0."""
    assert one_value("int a[((uint)-1 > 0u) ? 4 : 1];\nout[0] = sizeof(a) / sizeof(a[0]);") == 4


@pytest.mark.parametrize("label, value", [
    # 9007199254740993 is 2**53 + 1: no double (which the old folder divided in) has that value.
    ("9007199254740993L / 1", 9007199254740993),
    ("0x7FFFFFFFFFFFFFFFL / 7", 1317624576693539401),
    ("0xFFFFFFFFFFFFFFFFUL / 3UL", 0x5555555555555555),
    ("-9223372036854775807L % 10", -7),
])
def test_64_bit_division_of_large_constants_folds_exactly(label, value):
    body = (f"long v = {value}L; long r = 0;\n"
            f"switch (v) {{ case {label}: r = 1; break; default: r = 2; }}\nout[0] = r;")
    if value > 2**63 - 1:
        body = body.replace("long v", "ulong v").replace(f"{value}L", f"{value}UL")
    assert one_value(body) == 1


def test_a_constant_initialized_with_minus_one_holds_the_unsigned_value():
    assert one_value("out[0] = X;", np.int64, "__constant uint X = -1;") == 4294967295


def test_a_variadic_helper_is_a_located_error():
    text = compile_error("int sum(int n, ...) { return n; }\n"
                         "__kernel void k(__global int *o) { o[0] = sum(1, 2); }")
    assert text.startswith("t.cl:1:16: a variadic function ('...')"), text


# -- conversions on initialization -------------------------------------------------------------
@pytest.mark.parametrize("decl, expected", [
    ("__constant uchar X = 300;", 44),
    ("__constant char X = 200;", -56),
    ("__constant int X = 4294967295u;", -1),
    ("__constant ulong X = -1;", -1),          # 2**64 - 1, read back as a long
    ("__constant long X = -2147483648;", -2147483648),   # 2147483648 is a long, then negated
    ("__constant int X = 2.9;", 2),
    ("__constant int X = -2.9f;", -2),
    ("__constant uint X = -0.5f;", 0),         # truncates to 0, which a uint holds
    ("const int X = 'A' + '\\xff';", 64),     # a character constant is an int: 65 + -1
])
def test_constants_convert_their_initializer_as_c_does(decl, expected):
    assert one_value("out[0] = X;", np.int64, decl) == expected


def test_constant_tables_and_vectors_fold_with_the_same_rules():
    src = """
__constant uint T[] = {-1, (uchar)511, 7 / -2, -7 % 3, 1u << 31, (0x7FFFFFFF + 1u) >> 31};
__constant int4 V = (int4)(1, 2, 3, 4) * 3 - (int4)(1);
__constant short W = ((short4)(7, -8, 9, 10)).y << 2;
__constant float F = (1 << 24) + 1;   /* rounds to even in float, as on the device */
__constant double D = 0.1;
__kernel void k(__global uint *t, __global int *v, __global float *f, __global double *d) {
    for (int i = 0; i < 6; i++) t[i] = T[i];
    v[0] = V.x; v[1] = V.y; v[2] = V.z; v[3] = V.w; v[4] = W;
    f[0] = F; d[0] = D;
}"""
    t, v = np.zeros(6, np.uint32), np.zeros(5, np.int32)
    f, d = np.zeros(1, np.float32), np.zeros(1, np.float64)
    run(src, (1,), (1,), {"t": t, "v": v, "f": f, "d": d})
    assert t.tolist() == [2**32 - 1, 255, 2**32 - 3, 2**32 - 1, 2**31, 1]
    assert v.tolist() == [2, 5, 8, 11, -32]
    assert f[0] == np.float32(16777216.0) and d[0] == 0.1


def test_a_declared_float_constant_is_a_float_beside_a_double():
    """``__constant float X = 0.1`` holds 0.1 rounded to float; a double computed from it
    starts from that float, not from the literal's exact double."""
    src = """
__constant float X = 0.1;
__kernel void k(__global double *d) { double one = 1.0; d[0] = X * one; }"""
    d = np.zeros(1, np.float64)
    run(src, (1,), (1,), {"d": d})
    assert d[0] == float(np.float32(0.1))


def test_a_cast_of_a_floating_literal_keeps_the_cast():
    """``(int)2.5`` is 2 even beside a float operand, and ``(float)0.1`` is a float even
    beside a double: a cast literal is a value of its type, no longer a floating literal."""
    assert one_value("out[0] = (int)2.5 * 1.5f * 10;", np.float32) == 30.0
    d = np.zeros(2, np.float64)
    run("__kernel void k(__global double *d) { double one = 1.0;\n"
        "  d[0] = (float)0.1 * one; d[1] = (1 ? (float)0.1 : one); }", (1,), (1,), {"d": d})
    assert d.tolist() == [float(np.float32(0.1))] * 2


@pytest.mark.parametrize("literal, kind", [
    ("2147483647", "int"), ("2147483648", "long"), ("0x80000000", "uint"), ("4294967295", "long"),
    ("0xFFFFFFFF", "uint"), ("037777777777", "uint"), ("4294967296", "long"), ("1u", "uint"),
    ("4294967296u", "ulong"), ("1l", "long"), ("0xFFFFFFFFFFFFFFFFl", "ulong"),
    ("9223372036854775808", "ulong"),   # as Clang reads it: "interpreting as unsigned"
    ("'a'", "int"),
])
def test_integer_literals_take_the_first_type_c_gives_them(literal, kind):
    src = f"__kernel void k(__global long *o) {{ o[0] = {literal}; }}"
    store = compile_source("t.cl", src).kernel("k").body.stmts[0]
    assert str(store.value.a.type if isinstance(store.value, ir.Cast) else store.value.type) == kind


def test_unary_plus_promotes_as_minus_does():
    assert one_value("uchar c = 200; out[0] = sizeof(+c) * 1000 + sizeof(-c) * 100 + (+c);") == 4600


def test_a_switch_on_a_narrow_value_converts_its_labels_to_the_promoted_type():
    """A ``uchar`` is promoted to ``int``: ``case 256`` is 256 (never matched), ``case
    (uchar)257`` is 1; on a ``uint`` switch ``case -1`` is 4294967295."""
    src = """
__kernel void k(__global const uchar *c, __global const uint *u, __global int *o) {
    int i = get_global_id(0);
    int r = 0;
    switch (c[i]) { case 256: r = 1; break; case (uchar)257: r = 2; break; default: r = 3; }
    switch (u[i]) { case -1: r += 10; break; default: r += 20; }
    o[i] = r;
}"""
    c = np.array([0, 1, 2], np.uint8)
    u = np.array([0xFFFFFFFF, 0, 0xFFFFFFFF], np.uint32)
    o = np.zeros(3, np.int32)
    run(src, (3,), (3,), {"c": c, "u": u, "o": o})
    assert o.tolist() == [13, 22, 13]


def test_labels_equal_after_their_conversion_are_duplicates():
    text = compile_error("__kernel void k(__global int *o) {\n  switch (o[0]) {\n"
                         "  case -1: break;\n  case 0xFFFFFFFF: break;\n  }\n}")
    assert text.startswith("t.cl:4:") and "duplicate case value -1" in text, text


# -- what C forbids or leaves undefined in a constant ------------------------------------------
@pytest.mark.parametrize("code, column, message", [
    ("int a[4 / (2 - 2)];", 9, "division by zero in a constant expression"),
    ("switch (o[0]) { case 5 % 0: break; }", 24, "remainder by zero in a constant expression"),
    # pycparser places a unary minus (and a cast) at its operand
    ("int a[-3];", 10, "the size of an array must be positive, not -3"),
    ("int a[2][1 - 1];", 12, "the size of an array must be positive, not 0"),
    ("o[0] = sizeof(char[-1]);", 23, "the size of an array must be positive, not -1"),
    ("int a[] = {};", 7, "array 'a' must have a positive size"),
    ("switch (o[0]) { case 2147483647 + 1: break; }", 24,
     "overflow in a constant expression: 2147483647 + 1 does not fit in int"),
    ("int a[(-2147483647 - 1) / -1];", 11,
     "overflow in a constant expression: -2147483648 / -1 does not fit in int"),
    ("int a[(long)3037000500 * 3037000500 > 0];", 9,
     "overflow in a constant expression: 3037000500 * 3037000500 does not fit in long"),
    ("switch (o[0]) { case -(-9223372036854775807L - 1): break; }", 27,
     "overflow in a constant expression: -(-9223372036854775808) does not fit in long"),
    ("switch (o[0]) { case 1 << 32: break; }", 24, "shift count 32 is outside the 32 bits of int"),
    ("switch (o[0]) { case 1L >> -1: break; }", 24, "shift count -1 is outside the 64 bits of long"),
    ("switch (o[0]) { case (uchar)1 << 8: break; }", 24, None),   # promoted to int: fine
    ("switch (o[0]) { case (int)3e9f: break; }", 29,
     "3000000000.0 converted to int does not fit in it"),
    ("switch (o[0]) { case (uint)-1.0: break; }", 31, "-1.0 converted to uint does not fit in it"),
    ("int x = 1e10;", 11, "10000000000.0 converted to int does not fit in it"),
    ("switch (o[0]) { case 1.5: break; }", 24, "an integer constant is needed here"),
    ("int a[o[0]];", 9, "an integer constant is needed here"),
])
def test_what_c_forbids_in_a_constant_is_a_located_error(code, column, message):
    src = f"__kernel void k(__global int *o) {{\n  {code}\n}}"
    if message is None:
        compile_source("t.cl", src)
        return
    text = compile_error(src)
    assert text.startswith(f"t.cl:2:{column}: {message}"), text


@pytest.mark.parametrize("code", [
    "int a[0 && 1 / 0 ? 2 : 1];",       # the division is never evaluated
    "int a[1 || (1 << 99) ? 1 : 2];",
    "int a[1 ? 1 : 2147483647 + 1];",
    "int a[(-1 << 3) + 9];",            # shifting the bits of a negative value: OpenCL's masks
    "int a[(1 << 31) < 0 ? 1 : 2];",
])
def test_what_c_does_not_evaluate_or_defines_on_bits_is_not_an_error(code):
    k = compile_source("t.cl", f"__kernel void k(__global int *o) {{\n  {code}\n}}").kernel("k")
    assert k.arrays["a"].length == 1


def test_the_error_points_at_the_macro_use_not_into_its_expansion():
    src = "#define BAD (1 / 0)\n__kernel void k(__global int *o) {\n  int pad; int a[BAD];\n}"
    text = compile_error(src)
    assert text.startswith("t.cl:3:18: division by zero in a constant expression"), text


def test_an_enumerator_is_a_checked_constant_too():
    text = compile_error("enum E { A = 7, B = A / (A - 7) };\n__kernel void k(__global int *o) { o[0] = B; }")
    assert text.startswith("t.cl:1:21: division by zero in a constant expression"), text


def test_a_variadic_prototype_is_refused_but_printf_may_be_declared():
    text = compile_error("void log_all(const char *f, ...);\n__kernel void k(__global int *o) { o[0] = 1; }")
    assert text.startswith("t.cl:1:29: a variadic function"), text
    compile_source("t.cl", "int printf(__constant char *restrict f, ...);\n"
                           "__kernel void k(__global int *o) { o[0] = 1; }")


def test_run_time_arithmetic_still_wraps_and_masks_shift_counts():
    """At run time OpenCL C defines a shift by the count's low bits, and the GPU wraps a
    signed overflow: nothing there is an error."""
    src = """
__kernel void k(__global const int *n, __global int *o) {
    int big = n[0];
    o[0] = big + 1; o[1] = 1 << (n[1] + 32); o[2] = -7 / 2; o[3] = -7 % 2;
}"""
    o = np.zeros(4, np.int32)
    run(src, (1,), (1,), {"n": np.array([2**31 - 1, 3], np.int32), "o": o})
    assert o.tolist() == [-2**31, 8, -3, -1]
