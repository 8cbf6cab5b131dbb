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
