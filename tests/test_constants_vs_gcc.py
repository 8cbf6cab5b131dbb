"""The kernel language's arithmetic held against a real C compiler: gcc.

Hypothesis writes typed expressions over all of OpenCL C's scalar types (``char`` to
``ulong``, ``half``, ``float``, ``double``): integer literals of every base and suffix at
the types' edges, floating ones, casts, every unary, binary and conditional operator,
mixed signedness. gcc evaluates a batch of them in one C program, each literal hidden
behind a volatile so that nothing is folded and UBSan watches every operation. Each
expression must then have gcc's value in the kernel language

* as a case label (a switch on gcc's value must take it) and in array sizes (one byte of
  the value per array), for an integer expression;
* as a ``__constant`` scalar's and a ``__constant`` table's initializer;
* at run time, once as written (launch-uniform values) and once with each literal plus a
  per-lane zero (values per lane): the executor's arithmetic is the same as the folder's.

What UBSan reports has no value in C. Where it is a signed overflow, a division by zero,
a shift count out of range or a floating value out of an integer type's range, the same
expression in a case label must be a located error. A left shift of a negative value or
into the sign bit (UBSan's "left shift of") is defined on the bits by OpenCL C and gcc
computes it so: such an expression is compared like the others.

Two differences from gcc are the kernel language's on purpose, so the generator does not
write them: a decimal literal past ``LONG_MAX`` without ``u`` (``__int128`` in gcc, a
``ulong`` in Clang, OpenCL's compiler), and an unsuffixed floating literal other than
right under a cast (it is a ``float`` beside a ``float``, as with
``-cl-single-precision-constant``). ``half`` operations are rounded one by one in the C
program (gcc computes ``_Float16`` in ``float`` otherwise), as an OpenCL device does.

A fixed sample runs by default; ``pytest -m exhaustive`` runs thousands.
"""
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from test_opencl_c import run

from simulator.kernels import KernelError, compile_source, ir

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None,
                                reason="needs gcc (scripts/install.sh --browser installs it)")

BATCH = 40   # expressions per C program and per kernel source

# OpenCL C name: (C name, bits, signed)
INTEGERS = {"char": ("signed char", 8, True), "uchar": ("unsigned char", 8, False),
            "short": ("short", 16, True), "ushort": ("unsigned short", 16, False),
            "int": ("int", 32, True), "uint": ("unsigned int", 32, False),
            "long": ("long", 64, True), "ulong": ("unsigned long", 64, False)}
FLOATS = {"half": ("_Float16", 16), "float": ("float", 32), "double": ("double", 64)}
TYPES = list(INTEGERS) + list(FLOATS)
DTYPES = {"char": np.int8, "uchar": np.uint8, "short": np.int16, "ushort": np.uint16,
          "int": np.int32, "uint": np.uint32, "long": np.int64, "ulong": np.uint64,
          "half": np.float16, "float": np.float32, "double": np.float64}
LANE_ZERO = {"int": "zi", "uint": "zu", "long": "zl", "ulong": "zul", "half": "zh", "float": "zf",
             "double": "zd"}
EDGES = [0, 1, 2, 3, 7, 8, 15, 31, 32, 63, 64, 100, 127, 128, 255, 256, 1000, 32767, 32768, 65535,
         65536, 2**31 - 1, 2**31, 2**32 - 1, 2**32, 2**53 + 1, 2**63 - 1, 2**63, 2**64 - 1]
FLOAT_TEXTS = ["0.0", "0.1", "0.5", "1.0", "1.5", "2.5", "3.0", "65504.0", "65520.0", "1e-5", "1e10",
               "3e38", "4e38", "1e300", "4294967295.5", "9.2233720368547758e18", "1.8446744073709552e19",
               "6e-8", "1e-45", "2147483648.0", "-0.75"]


@dataclass(frozen=True)
class Expr:
    """One expression written three ways, and its C type (an OpenCL C name)."""

    c: str         # for gcc: literals hidden behind volatiles (O), half results rounded
    const: str     # for the kernel language, as written
    lane: str      # for the kernel language, each literal plus a per-lane zero
    ty: str
    # ``c ? a : b`` of two chars (or shorts) is a char in the kernel language, an int in
    # C: the same value, another type (sizeof tells them apart). Not compared.
    conditional: bool = False


def promoted(ty):
    return "int" if ty in INTEGERS and INTEGERS[ty][1] < 32 else ty


def common(a, b):
    """C's usual arithmetic conversions (with _Float16 below float, above every integer)."""
    a, b = promoted(a), promoted(b)
    floats = [t for t in (a, b) if t in FLOATS]
    if floats:
        return max(floats, key=lambda t: FLOATS[t][1])
    if a == b:
        return a
    (_, bits_a, signed_a), (_, bits_b, signed_b) = INTEGERS[a], INTEGERS[b]
    if signed_a == signed_b:
        return a if bits_a > bits_b else b
    signed, unsigned = (a, b) if signed_a else (b, a)
    return signed if INTEGERS[signed][1] > INTEGERS[unsigned][1] else unsigned


def literal_type(value, decimal, suffix):
    if "u" in suffix:
        candidates = ["ulong"] if "l" in suffix else ["uint", "ulong"]
    elif decimal:
        candidates = ["long"] if "l" in suffix else ["int", "long"]
    else:
        candidates = ["long", "ulong"] if "l" in suffix else ["int", "uint", "long", "ulong"]
    for ty in candidates:
        info = np.iinfo(DTYPES[ty])
        if info.min <= value <= info.max:
            return ty
    return None


def rounded(text, ty):
    """``text`` rounded to _Float16 if ``ty`` is half: gcc computes a _Float16 operation in
    float, converting its operands there exactly; the device converts them to half first
    (87427u is an infinite half) and rounds each result."""
    return f"((_Float16)({text}))" if ty == "half" else text


def leaf(text, ty):
    """A literal: hidden from gcc's folding, and plus a zero per lane in the lane form."""
    return Expr(f"O({text})", f"({text})", f"({text} + {LANE_ZERO[ty]})", ty)


@st.composite
def integer_literals(draw):
    # Small values and plain (signed) literals are the most common, as in kernels.
    value = draw(st.sampled_from(EDGES) | st.integers(0, 300) | st.integers(0, 2**64 - 1))
    base = draw(st.sampled_from(["dec", "dec", "hex", "oct"]))
    suffix = draw(st.sampled_from(["", "", "", "u", "l", "ul", "UL", "U", "L"]))
    if base == "dec" and "u" not in suffix.lower() and value > 2**63 - 1:
        base = "hex"   # gcc gives such a decimal literal __int128 (see the module docstring)
    text = {"dec": str(value), "hex": hex(value), "oct": "0" + oct(value)[2:] if value else "0"}[base]
    literal = leaf(text + suffix, literal_type(value, base == "dec", suffix.lower()))
    if draw(st.integers(0, 3)) == 0:   # a negative operand, for division's and shifts' signs
        ty = promoted(literal.ty)
        return Expr(f"(-{literal.c})", f"(-{literal.const})", f"(-{literal.lane})", ty)
    return literal


@st.composite
def floating_literals(draw):
    number = draw(st.sampled_from(FLOAT_TEXTS)
                  | st.floats(allow_nan=False, allow_infinity=False).map(repr))
    if draw(st.booleans()) and abs(float(number)) < 3e38:
        single = repr(float(np.float32(float(number))))
        return leaf(single + "f", "float")
    ty = draw(st.sampled_from(list(FLOATS)))
    # An unsuffixed literal only right under a cast (see the module docstring).
    return Expr(f"(({FLOATS[ty][0]})O({number}))", f"(({ty}){number})",
                f"((({ty}){number}) + {LANE_ZERO[ty]})", ty)


def casts(inner):
    @st.composite
    def build(draw):
        e, ty = draw(inner), draw(st.sampled_from(TYPES))
        name = INTEGERS[ty][0] if ty in INTEGERS else FLOATS[ty][0]
        return Expr(f"(({name}){e.c})", f"(({ty}){e.const})", f"(({ty}){e.lane})", ty)
    return build()


def unaries(inner):
    @st.composite
    def build(draw):
        e = draw(inner)
        op = draw(st.sampled_from(["-", "+", "!"] + (["~"] if e.ty in INTEGERS else [])))
        ty = "int" if op == "!" else promoted(e.ty)
        return Expr(rounded(f"({op}{e.c})", ty), f"({op}{e.const})", f"({op}{e.lane})", ty)
    return build()


def binaries(inner):
    @st.composite
    def build(draw):
        a = draw(inner)
        op = draw(st.sampled_from(["+", "-", "*", "/", "%", "<<", ">>", "&", "|", "^", "<", ">",
                                   "<=", ">=", "==", "!=", "&&", "||"]))
        shift = op in ("<<", ">>")
        # A shift's count: mostly within the width, some past it.
        b = draw(st.integers(0, 70).map(lambda n: leaf(str(n), "int")) | inner if shift else inner)
        if op in ("%", "<<", ">>", "&", "|", "^") and (a.ty in FLOATS or b.ty in FLOATS):
            op = "*"
        if op in ("&&", "||"):
            ty = operand = "int"
        elif op in ("<<", ">>"):
            ty = operand = promoted(a.ty)
        else:
            operand = common(a.ty, b.ty)
            ty = "int" if op in ("<", ">", "<=", ">=", "==", "!=") else operand
        return Expr(rounded(f"({rounded(a.c, operand)} {op} {rounded(b.c, operand)})", ty),
                    f"({a.const} {op} {b.const})", f"({a.lane} {op} {b.lane})", ty)
    return build()


def conditionals(inner):
    @st.composite
    def build(draw):
        c, a, b = draw(inner), draw(inner), draw(inner)
        ty = common(a.ty, b.ty)
        return Expr(f"({c.c} ? {rounded(a.c, ty)} : {rounded(b.c, ty)})",
                    f"({c.const} ? {a.const} : {b.const})", f"({c.lane} ? {a.lane} : {b.lane})", ty,
                    conditional=True)
    return build()


# A character constant is an int, of its value as a (signed) char.
CHARACTERS = st.sampled_from(["'a'", "'\\0'", "'\\n'", "'\\x7f'", "'\\x80'", "'\\xff'"]).map(
    lambda text: leaf(text, "int"))


def expressions():
    # Integer leaves thrice as often as floating ones: C's integer rules are the many.
    integers = integer_literals()
    return st.recursive(st.one_of(integers, integers, integers, floating_literals(), CHARACTERS),
                        lambda inner: st.one_of(casts(inner), unaries(inner), binaries(inner),
                                                conditionals(inner)),
                        max_leaves=6)


# -- gcc ---------------------------------------------------------------------------------------
C_PRELUDE = r"""#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#define O(x) ({ __typeof__(x) volatile o_ = (x); o_; })
static sigjmp_buf trap;
static void on_fpe(int s) { (void)s; siglongjmp(trap, 1); }
static void put_s(int k, long long v) { printf("%d %lld\n", k, v); }
static void put_u(int k, unsigned long long v) { printf("%d %llu\n", k, v); }
static void put_half(int k, _Float16 v) { uint16_t b; memcpy(&b, &v, 2); printf("%d %u\n", k, b); }
static void put_float(int k, float v) { uint32_t b; memcpy(&b, &v, 4); printf("%d %u\n", k, b); }
static void put_double(int k, double v) {
    unsigned long long b; memcpy(&b, &v, 8); printf("%d %llu\n", k, b); }
int main(void) {
signal(SIGFPE, on_fpe);
"""
UB_KINDS = {  # UBSan's words -> the kernel language's error for the same thing in a constant
    "signed integer overflow": "overflow in a constant expression",
    "negation of": "overflow in a constant expression",
    "by -1 cannot be represented": "overflow in a constant expression",
    "division by zero": "by zero in a constant expression",
    "shift exponent": "shift count",
    "outside the range of representable values": "does not fit in it",
}


def gcc_values(exprs):
    """(values, kinds): gcc's value of each expression that has one (bit patterns for
    floating types), and the UBSan reports of each that does not, as error messages."""
    lines = [C_PRELUDE]
    first = C_PRELUDE.count("\n") + 1
    for k, e in enumerate(exprs):
        name = INTEGERS[e.ty][0] if e.ty in INTEGERS else FLOATS[e.ty][0]
        put = (f"put_{e.ty}" if e.ty in FLOATS else "put_s" if INTEGERS[e.ty][2] else "put_u")
        lines.append(f'_Static_assert(_Generic({e.c}, {name}: 1, default: 0), "type of {k}"); '
                     f"if (!sigsetjmp(trap, 1)) {{ {name} v = {e.c}; {put}({k}, v); }}\n")
    lines.append("return 0; }\n")
    with tempfile.TemporaryDirectory() as tmp:
        source, binary = os.path.join(tmp, "e.c"), os.path.join(tmp, "e")
        with open(source, "w") as f:
            f.write("".join(lines))
        built = subprocess.run(["gcc", "-std=gnu11", "-O0", "-w", "-fsanitize=undefined,float-cast-overflow",
                                source, "-o", binary], capture_output=True, text=True)
        assert built.returncode == 0, built.stderr
        done = subprocess.run([binary], capture_output=True, text=True, timeout=60,
                              env=dict(os.environ, UBSAN_OPTIONS="print_stacktrace=0"))
    values = {int(k): int(v) for k, v in (line.split() for line in done.stdout.splitlines())}
    kinds = {}
    for report in re.finditer(r"e\.c:(\d+):\d+: runtime error: (.*)", done.stderr):
        k = int(report.group(1)) - first
        ours = [mine for words, mine in UB_KINDS.items() if words in report.group(2)]
        if not report.group(2).startswith("left shift of"):
            assert ours, f"UBSan reports what the kernel language does not check: {report.group(0)}"
        kinds.setdefault(k, set()).update(ours)
    return values, {k: v for k, v in kinds.items() if v}


# -- the kernel language -----------------------------------------------------------------------
LANE_ZEROS = """
    int zi = (int)(get_global_id(0) * 0); uint zu = (uint)zi; long zl = zi; ulong zul = zu;
    float zf = -(float)zi; half zh = (half)zf; double zd = (double)zf;"""


def kernel_source(exprs):
    """A program with the expressions in every context (see the module docstring): one
    kernel, ``check``, has each expression as a statement of its own (its static type is
    the IR's), writes its values into ``r_T`` (run time), ``l_T``
    (per lane), ``c_T`` (__constant scalar) and ``t_T`` (__constant table) of its type,
    whether a switch on its gcc value ``x_T`` took it as a case label into ``h``, and the
    sizes of the arrays with one byte of it each into ``s``. Also returns the indexes of
    the expressions of each type."""
    by_type = {}
    for k, e in enumerate(exprs):
        by_type.setdefault(e.ty, []).append(k)
    parts = [f"__constant {e.ty} c{k} = {e.const};\n" for k, e in enumerate(exprs)]
    parts += [f"__constant {ty} tab_{ty}[] = {{{', '.join(exprs[k].const for k in ks)}}};\n"
              for ty, ks in by_type.items()]
    params = [f"__global {ty} *{kind}_{ty}" for ty in by_type for kind in "rlct"]
    params += [f"__global const {ty} *x_{ty}" for ty in by_type if ty in INTEGERS]
    body = [LANE_ZEROS]
    for ty, ks in by_type.items():
        for j, k in enumerate(ks):
            e = exprs[k]
            body.append(f"    {e.const}; r_{ty}[{j}] = {e.const}; l_{ty}[{j}] = {e.lane};"
                        f" c_{ty}[{j}] = c{k}; t_{ty}[{j}] = tab_{ty}[{j}];")
            if ty not in INTEGERS:
                continue
            body.append(f"    switch (x_{ty}[{j}]) {{ case {e.const}: h[{k}] = 1; break;"
                        f" default: h[{k}] = 2; }}")
            for b in range(INTEGERS[ty][1] // 8):
                body.append(f"    {{ char a[(((ulong)({e.const}) >> {8 * b}) & 255) + 1];"
                            f" s[{8 * k + b}] = sizeof(a); }}")
    params += ["__global int *h", "__global int *s"]
    parts.append(f"__kernel void check({', '.join(params)}) {{{chr(10).join(body)}\n}}\n")
    return "".join(parts), by_type


def same(ty, expected, got):
    """Whether ``got`` (a numpy value of ``ty``) is gcc's value (its bits, for a floating type)."""
    if ty in FLOATS:
        bits = np.array([expected], {16: np.uint16, 32: np.uint32, 64: np.uint64}[FLOATS[ty][1]])
        wanted = bits.view(DTYPES[ty])[0]
        return (np.isnan(wanted) and np.isnan(got)) or bits[0] == np.array([got]).view(bits.dtype)[0]
    return int(got) == expected


def check_against_gcc(exprs):
    values, undefined = gcc_values(exprs)
    defined = [e for k, e in enumerate(exprs) if k in values and k not in undefined]
    wanted = [values[k] for k, e in enumerate(exprs) if k in values and k not in undefined]
    source, by_type = kernel_source(defined)
    out = {f"{kind}_{ty}": np.zeros(len(ks), DTYPES[ty]) for ty, ks in by_type.items() for kind in "rlct"}
    x = {f"x_{ty}": np.array([wanted[k] for k in ks], DTYPES[ty])
         for ty, ks in by_type.items() if ty in INTEGERS}
    h, s = np.zeros(len(defined), np.int32), np.zeros(8 * len(defined), np.int32)
    program = run(source, (1,), (1,), {**out, **x, "h": h, "s": s})
    wrong = []
    statements = [s for s in program.kernel("check").body.stmts if isinstance(s, ir.Eval)]
    for k, statement in zip([k for ks in by_type.values() for k in ks], statements, strict=True):
        if str(statement.expr.type) != defined[k].ty and not defined[k].conditional:
            wrong.append(f"{defined[k].const}: a {statement.expr.type}, in C a {defined[k].ty}")
    contexts = {"r": "at run time", "l": "per lane at run time", "c": "as a __constant scalar",
                "t": "in a __constant table"}
    for ty, ks in by_type.items():
        for j, k in enumerate(ks):
            for kind, where in contexts.items():
                if not same(ty, wanted[k], out[f"{kind}_{ty}"][j]):
                    wrong.append(f"{defined[k].const} ({ty}) {where}: {out[f'{kind}_{ty}'][j]!r},"
                                 f" gcc {wanted[k]}")
            if ty in INTEGERS:
                if h[k] != 1:
                    wrong.append(f"{defined[k].const} ({ty}) as a case label: not taken by gcc's value")
                size_bytes = s[8 * k:8 * k + INTEGERS[ty][1] // 8] - 1
                low = sum(int(byte) << (8 * b) for b, byte in enumerate(size_bytes))
                if low != wanted[k] % 2 ** INTEGERS[ty][1]:
                    wrong.append(f"{defined[k].const} ({ty}) in array sizes: {low}, gcc {wanted[k]}")
    for k, kinds in undefined.items():
        e = exprs[k]
        programs = {"a __constant initializer": f"__kernel void k(__global int *o) {{ o[0] = 0; }}\n"
                                                f"__constant {e.ty} c = {e.const};\n"}
        if e.ty in INTEGERS:
            programs["a case label"] = (f"__kernel void k(__global int *o) {{\n"
                                        f"  switch (o[0]) {{ case {e.const}: break; }}\n}}\n")
        for where, src in programs.items():
            problem = _located_error(src, kinds)
            if problem:
                wrong.append(f"{e.const} ({e.ty}) in {where}: UBSan reports {kinds}; {problem}")
    assert not wrong, "\n".join(wrong)


def _located_error(src, kinds):
    """What is wrong with the error compiling ``src`` raises, given UBSan's ``kinds`` on
    its line 2 (None: it is one of them, located there)."""
    try:
        compile_source("t.cl", src)
    except KernelError as exc:
        if str(exc).startswith("t.cl:2:") and any(kind in exc.reason for kind in kinds):
            return None
        return f"the kernel language: {exc}"
    return "the kernel language compiles it"


# No shrinking: a failure lists each expression that differs, and shrinking a batch of
# forty, one compile per step, takes minutes.
SETTINGS = dict(derandomize=True, deadline=None, database=None,
                phases=[Phase.explicit, Phase.generate],
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@settings(max_examples=8, **SETTINGS)
@given(st.lists(expressions(), min_size=BATCH, max_size=BATCH))
def test_constant_arithmetic_agrees_with_gcc(exprs):
    check_against_gcc(exprs)


@pytest.mark.exhaustive
@settings(max_examples=100, **SETTINGS)
@given(st.lists(expressions(), min_size=BATCH, max_size=BATCH))
def test_constant_arithmetic_agrees_with_gcc_on_thousands(exprs):
    check_against_gcc(exprs)
