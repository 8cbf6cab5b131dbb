"""Differential test: random integer expressions agree with C's int32 semantics.

Hypothesis builds expression trees over two int variables; each one runs as a kernel
over 64 lanes of random data and is compared with a Python evaluation that wraps to
32 bits, truncates division toward zero and masks shift counts as OpenCL does.
"""
import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from simulator.kernels import Memory, compile_source, launch


def wrap(x):
    return (x + 2**31) % 2**32 - 2**31


def c_div(a, b):
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def binary(op):
    def build(left, right):
        lt, lf = left
        rt, rf = right
        if op in ("/", "%"):
            # Keep divisors non-zero and avoid INT_MIN / -1, which C leaves undefined.
            rt = f"((({rt}) | 1) & 0xFFF)"

            def rf(a, b, f=right[1]):
                return (f(a, b) | 1) & 0xFFF
        text = f"({lt} {op} {rt})"
        fns = {
            "+": lambda x, y: wrap(x + y), "-": lambda x, y: wrap(x - y),
            "*": lambda x, y: wrap(x * y), "/": lambda x, y: wrap(c_div(x, y)),
            "%": lambda x, y: wrap(x - c_div(x, y) * y), "&": lambda x, y: x & y,
            "|": lambda x, y: x | y, "^": lambda x, y: x ^ y,
            "<<": lambda x, y: wrap(x << (y & 31)), ">>": lambda x, y: x >> (y & 31),
            "<": lambda x, y: int(x < y), "==": lambda x, y: int(x == y),
            ">=": lambda x, y: int(x >= y), "&&": lambda x, y: int(bool(x) and bool(y)),
            "||": lambda x, y: int(bool(x) or bool(y)),
        }
        return text, (lambda a, b, f=fns[op]: f(lf(a, b), rf(a, b)))
    return build


LEAVES = st.sampled_from([
    ("a", lambda a, b: a), ("b", lambda a, b: b), ("3", lambda a, b: 3),
    ("-7", lambda a, b: -7), ("100000", lambda a, b: 100000),
])
OPS = ["+", "-", "*", "/", "%", "&", "|", "^", "<<", ">>", "<", "==", ">=", "&&", "||"]


def extend(children):
    unary = children.map(lambda c: (f"(-({c[0]}))", lambda a, b, f=c[1]: wrap(-f(a, b))))
    ternary = st.tuples(children, children, children).map(
        lambda t: (f"(({t[0][0]}) ? {t[1][0]} : {t[2][0]})",
                   lambda a, b, t=t: t[1][1](a, b) if t[0][1](a, b) else t[2][1](a, b)))
    binaries = st.tuples(st.sampled_from(OPS), children, children).map(
        lambda t: binary(t[0])(t[1], t[2]))
    return st.one_of(binaries, unary, ternary)


EXPRESSIONS = st.recursive(LEAVES, extend, max_leaves=8)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(EXPRESSIONS, st.integers(0, 2**32 - 1))
def test_integer_expressions_match_c(expression, seed):
    text, reference = expression
    rng = np.random.default_rng(seed)
    a = rng.integers(-2**31, 2**31, size=64, dtype=np.int64).astype(np.int32)
    b = rng.integers(-50, 50, size=64).astype(np.int32)
    program = compile_source("expr.cl", f"""kernel void k(global const int *A, global const int *B, global int *out)
{{
    int i = get_global_id(0);
    int a = A[i];
    int b = B[i];
    out[i] = {text};
}}""")
    mem = Memory()
    out = mem.buffer("out", np.zeros(64, np.int32))
    launch(program, None, (64,), (64,), {"A": mem.buffer("A", a), "B": mem.buffer("B", b), "out": out})
    expected = [reference(int(x), int(y)) for x, y in zip(a, b)]
    np.testing.assert_array_equal(out.array, np.array(expected, dtype=np.int64).astype(np.int32),
                                  err_msg=text)


def _mixed_binary(op):
    """C's usual arithmetic conversions: int op float is computed in float."""
    def build(left, right):
        (lt, lty, lf), (rt, rty, rf) = left, right
        ty = "float" if "float" in (lty, rty) else "int"
        if op == "/" and ty == "int":
            rt = f"((({rt}) | 1) & 0xFF)"

            def rf(a, k, f=rf):
                return (f(a, k) | 1) & 0xFF

        def fn(a, k, lf=lf, rf=rf):
            x, y = lf(a, k), rf(a, k)
            if ty == "float":
                x, y = np.float32(x) if np.ndim(x) == 0 else x.astype(np.float32), \
                    np.float32(y) if np.ndim(y) == 0 else y.astype(np.float32)
                return {"+": x + y, "-": x - y, "*": x * y, "/": x / y}[op].astype(np.float32)
            x, y = np.asarray(x, dtype=np.int64), np.asarray(y, dtype=np.int64)
            result = {"+": x + y, "-": x - y, "*": x * y,
                      "/": np.sign(x) * np.sign(y) * (np.abs(x) // np.abs(y))}[op]
            return wrap(result).astype(np.int32)
        return f"({lt} {op} {rt})", ty, fn
    return build


MIXED_LEAVES = st.sampled_from([
    ("a", "float", lambda a, k: a), ("k", "int", lambda a, k: k),
    ("2", "int", lambda a, k: np.int32(2)), ("0.5f", "float", lambda a, k: np.float32(0.5)),
])


def _mixed_extend(children):
    binaries = st.tuples(st.sampled_from(["+", "-", "*", "/"]), children, children).map(
        lambda t: _mixed_binary(t[0])(t[1], t[2]))
    to_int = children.map(lambda c: (f"((int)({c[0]}))", "int",
                                     lambda a, k, f=c[2]: np.trunc(f(a, k)).astype(np.int32)
                                     if c[1] == "float" else f(a, k)))
    to_float = children.map(lambda c: (f"((float)({c[0]}))", "float",
                                       lambda a, k, f=c[2]: np.asarray(f(a, k)).astype(np.float32)))
    return st.one_of(binaries, to_int, to_float)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.recursive(MIXED_LEAVES, _mixed_extend, max_leaves=6), st.integers(0, 2**32 - 1))
def test_mixed_int_float_expressions_follow_the_usual_conversions(expression, seed):
    text, ty, reference = expression
    rng = np.random.default_rng(seed)
    a = rng.uniform(-100, 100, size=64).astype(np.float32)
    k = rng.integers(-1000, 1000, size=64).astype(np.int32)
    program = compile_source("mixed.cl", f"""kernel void m(global const float *A, global const int *K, global float *out)
{{
    int i = get_global_id(0);
    float a = A[i];
    int k = K[i];
    out[i] = (float)({text});
}}""")
    mem = Memory()
    out = mem.buffer("out", np.zeros(64, np.float32))
    launch(program, None, (64,), (64,), {"A": mem.buffer("A", a), "K": mem.buffer("K", k), "out": out})
    with np.errstate(all="ignore"):
        expected = np.broadcast_to(np.asarray(reference(a, k)), (64,)).astype(np.float32)
    np.testing.assert_array_equal(out.array, expected, err_msg=f"{text} ({ty})")
