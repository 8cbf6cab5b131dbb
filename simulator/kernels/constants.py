"""Constant expressions: the values C computes while a kernel compiles, and what it refuses.

Case labels, array sizes, enumerators, a designator's index, the initializers of
``__constant`` tables and scalars, an unsuffixed floating literal converted to its type,
barrier flags and the dimension of ``get_global_id`` need their value at compile time.
``evaluate`` computes it from the lowered IR with the executor's own operators
(``operators``): the lowering has made C's promotions and conversions explicit as casts,
and each operator computes in its type, so a constant has the value the same expression
has at run time.

A constant expression shall evaluate to a value its type can represent (C 6.6p4); what C
leaves undefined is reported there, at the operator, instead of wrapping silently:

* a signed ``+``, ``-``, ``*``, ``/``, ``%`` or negation whose result does not fit;
* integer division or remainder by zero;
* a shift count outside the left operand's bits (at run time OpenCL C 6.3.j uses the
  count's low bits; in a constant, where C says nothing, it is almost surely a slip);
* a floating value converted to an integer type that cannot hold its integral part.

Shifting a negative value left, or a one into the sign bit, is not reported: OpenCL C
defines a shift on the bits, and kernels write ``1 << 31`` and ``~0 << n`` for masks. An
operand C does not evaluate (the other side of ``&&``, ``||`` and ``?:``) must still be a
constant, but what it would compute is not checked.
"""
from collections.abc import Callable

import numpy as np

from . import ir, operators
from . import types as T

Report = Callable[[ir.Expr, str], Exception]
"""Builds the located error for a problem at an IR node (``KernelError`` in the lowering)."""

_EXACT = {"+": lambda x, y: x + y, "-": lambda x, y: x - y, "*": lambda x, y: x * y}


def evaluate(expr: ir.Expr, report: Report):
    """The value of ``expr`` (a numpy scalar, or an array of a vector's components), or
    None when it is not a constant expression; raises ``report``'s error for what C
    leaves undefined in a constant (see the module docstring)."""
    with np.errstate(all="ignore"):
        return _Evaluator(report).value(expr, True)


def is_integer(ty) -> bool:
    """Whether ``ty`` is a scalar integer type (what C's integer constants have)."""
    return isinstance(ty, T.Scalar) and not ty.is_float and ty is not T.VOID


def integer(expr: ir.Expr, report: Report) -> int | None:
    """The value of ``expr`` if it is an integer constant expression (a scalar of an
    integer type), else None."""
    if not is_integer(expr.type):
        return None
    value = evaluate(expr, report)
    return None if value is None else int(value)


def _numeric(ty):
    """Whether values of ``ty`` are numbers the operators compute on (a sampler is its flags)."""
    return (isinstance(ty, (T.Scalar, T.Vector)) and ty is not T.VOID) or ty is T.SAMPLER


def _components(value):
    """A scalar's or vector's components as Python numbers."""
    return np.atleast_1d(value).tolist()


def _pairs(a, b):
    """The components of ``a`` and ``b`` side by side, a scalar beside every one of a vector's."""
    xs, ys = _components(a), _components(b)
    if len(xs) == 1:
        xs = xs * len(ys)
    if len(ys) == 1:
        ys = ys * len(xs)
    return list(zip(xs, ys))


def _holds(ty, number):
    info = np.iinfo(ty.base.dtype)
    return info.min <= number <= info.max


class _Evaluator:
    def __init__(self, report):
        self.report = report
        self.rules = {ir.Const: self.const, ir.Cast: self.cast, ir.Unary: self.unary,
                      ir.Binary: self.binary, ir.Logical: self.logical, ir.Select: self.select,
                      ir.VecLit: self.veclit, ir.Swizzle: self.swizzle}

    def value(self, e, checked):
        """``e``'s value or None; ``checked``: C evaluates it, so undefined cases are errors."""
        rule = self.rules.get(type(e))
        return None if rule is None else rule(e, checked)

    def const(self, e, checked):
        return e.value

    def cast(self, e, checked):
        src, dst = e.a.type, e.type
        if not (_numeric(src) and _numeric(dst)):
            return None
        value = self.value(e.a, checked)
        if value is None:
            return None
        if checked and src.is_float and not dst.is_float:
            for x, whole in zip(_components(value), _components(np.trunc(value))):
                if whole != whole or not _holds(dst, whole):   # NaN, or too large a magnitude
                    raise self.report(e, f"{x!r} converted to {dst} does not fit in it"
                                         " (C leaves that undefined)")
        if dst.width > 1 and np.ndim(value) == 0:
            value = np.repeat(value, dst.width)
        return operators.convert(value, dst)

    def unary(self, e, checked):
        value = self.value(e.a, checked)
        if value is None or not _numeric(e.type):
            return None
        if checked and e.op == "-" and _signed_integer(e.type):
            if any(not _holds(e.type, -x) for x in _components(value)):
                raise self.report(e, f"overflow in a constant expression: -({_shown_value(value)})"
                                     f" does not fit in {e.type}")
        return operators.unary(e.op, value, e.type)

    def binary(self, e, checked):
        ty = e.a.type
        if not (_numeric(ty) and _numeric(e.b.type) and _numeric(e.type)):
            return None
        a, b = self.value(e.a, checked), self.value(e.b, checked)
        if a is None or b is None:
            return None
        if checked and not ty.is_float:
            self.check(e, a, b)
        return operators.binary(e.op, a, b, ty, e.type)

    def check(self, e, a, b):
        """Report what C leaves undefined in integer ``a op b`` (see the module docstring)."""
        op, ty = e.op, e.a.type
        pairs = _pairs(a, b)
        if op in ("<<", ">>"):
            bits = operators.shift_bits(ty)
            for _, count in pairs:
                if not 0 <= count < bits:
                    raise self.report(e, f"shift count {count} is outside the {bits} bits of {ty}"
                                         " (undefined in C; at run time OpenCL C would shift by"
                                         f" {count & (bits - 1)})")
            return
        if op in ("/", "%") and any(y == 0 for _, y in pairs):
            what = "division" if op == "/" else "remainder"
            raise self.report(e, f"{what} by zero in a constant expression")
        if not _signed_integer(ty):
            return
        for x, y in pairs:
            if op in _EXACT:
                exact = _EXACT[op](x, y)
            elif op in ("/", "%") and y == -1:
                exact = -x   # x / -1 overflows where -x does, and then x % -1 is undefined too
            else:
                continue
            if not _holds(ty, exact):
                raise self.report(e, f"overflow in a constant expression: {x} {op} {y}"
                                     f" does not fit in {ty}")

    def logical(self, e, checked):
        a = self.value(e.a, checked)
        if a is None:
            return None
        decided = bool(operators.truth(a)) == (e.op == "||")   # 1 || b, 0 && b
        b = self.value(e.b, checked and not decided)
        if b is None:
            return None
        return np.int32(operators.truth(a if decided else b))

    def select(self, e, checked):
        cond = self.value(e.cond, checked)
        if cond is None or np.ndim(cond):
            return None
        taken = bool(operators.truth(cond))
        a = self.value(e.a, checked and taken)
        b = self.value(e.b, checked and not taken)
        if a is None or b is None:
            return None
        return a if taken else b

    def veclit(self, e, checked):
        parts = [self.value(p, checked) for p in e.parts]
        if any(p is None for p in parts):
            return None
        return operators.as_type(np.concatenate([np.atleast_1d(p) for p in parts]), e.type)

    def swizzle(self, e, checked):
        value = self.value(e.a, checked)
        if value is None:
            return None
        return operators.as_type(np.asarray(value)[e.comps[0] if len(e.comps) == 1 else e.comps],
                                 e.type)


def _signed_integer(ty):
    return not ty.is_float and ty.base.is_signed


def _shown_value(value):
    parts = _components(value)
    return str(parts[0]) if len(parts) == 1 else f"({', '.join(map(str, parts))})"
