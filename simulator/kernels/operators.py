"""C's operators on the kernel language's values: each one defined once, for run time and
compile time alike.

A value is a numpy scalar or array of its type's dtype (see ``types``): one per lane, one
for the whole launch, or one constant; a vector has a trailing axis of its width. The
lowering has already made C's conversions explicit (the integer promotions, the usual
arithmetic conversions, the conversion on assignment), so an operator sees operands of
one type and computes in that type, as the device does:

* integer arithmetic wraps in the type's width (the two's complement result of a signed
  overflow, which is C's undefined behaviour: ``constants`` reports it where C needs a
  constant), and division and remainder truncate toward zero (numpy's floor);
* a shift takes the left operand's type, and its count is the right operand's low
  log2(bits) bits (OpenCL C 6.3.j), so it never shifts by the width or more;
* a comparison gives an ``int`` 0 or 1, or per component of a vector -1 or 0 in the
  signed integer type of the component's size (OpenCL C 6.3.d);
* ``half``, ``float`` and ``double`` round each operation to their own precision (numpy
  computes ``half`` in ``float`` and rounds back, which is exact: float's 24 bits are
  more than twice half's 11);
* a conversion to an integer type wraps an integer (keeps its low bits) and truncates a
  floating value toward zero; ``convert_<type>_sat`` clamps, ``_rte``/``_rtp``/``_rtn``
  round first.

The executor calls these on whole lanes at once (``simt``), the constant evaluator on
constants (``constants``), so a constant expression has the value it has at run time.
Both run them under ``np.errstate(all="ignore")``: wrapping is the point, not a warning.
"""
import numpy as np

from . import types as T

COMPARISONS = {"<": np.less, ">": np.greater, "<=": np.less_equal, ">=": np.greater_equal,
               "==": np.equal, "!=": np.not_equal}
_BITWISE = {"&": np.bitwise_and, "|": np.bitwise_or, "^": np.bitwise_xor}
_ARITHMETIC = {"+": np.add, "-": np.subtract, "*": np.multiply}


def as_type(value, ty: T.Scalar | T.Vector):
    """``value`` as an array (or scalar) of ``ty``'s dtype, reinterpreting integers of one
    size as each other (wrapping, as a conversion between integer types does)."""
    value = np.asarray(value)
    if value.dtype != ty.dtype:
        value = value.astype(ty.dtype)
    return value[()] if value.ndim == 0 else value


def divide(a, b):
    """C integer division: the quotient truncates toward zero (numpy floors)."""
    q = np.floor_divide(a, b)
    r = a - q * b
    fix = (r != 0) & ((np.asarray(a) < 0) != (np.asarray(b) < 0))
    return q + fix.astype(q.dtype) if np.ndim(q) else q + int(fix)


def shift_bits(ty: T.Scalar | T.Vector) -> int:
    """The bits of ``ty``'s components: a shift count is taken modulo this."""
    return ty.base.size * 8


def binary(op: str, a, b, operand: T.Scalar | T.Vector, result: T.Scalar | T.Vector):
    """``a op b`` for arithmetic, bitwise and comparison operators; ``operand`` is the type
    both operands have (a shift's left operand's), ``result`` the expression's type."""
    if op in COMPARISONS:
        r = COMPARISONS[op](a, b)
        return as_type(r if result.width == 1 else np.where(r, -1, 0), result)
    if op in _ARITHMETIC:
        r = _ARITHMETIC[op](a, b)
    elif op == "/":
        r = np.divide(a, b) if operand.is_float else divide(a, b)
    elif op == "%":
        r = a - divide(a, b) * b
    elif op in ("<<", ">>"):
        # The count takes the operand's type: numpy refuses to shift a uint64 by a signed
        # count, and the result has the left operand's type whatever the count's.
        count = np.asarray(b & (shift_bits(operand) - 1)).astype(np.asarray(a).dtype)
        r = np.left_shift(a, count) if op == "<<" else np.right_shift(a, count)
    else:
        r = _BITWISE[op](a, b)
    return as_type(r, result)


def unary(op: str, a, result: T.Scalar | T.Vector):
    """``-a``, ``~a`` or ``!a`` (``!`` gives 1 for a scalar, -1 per vector component)."""
    if op == "-":
        return as_type(np.negative(a), result)
    if op == "~":
        return as_type(np.invert(a), result)
    zero = np.asarray(a) == 0
    return as_type(zero if result.width == 1 else np.where(zero, -1, 0), result)


def truth(value):
    """Whether a scalar (a condition, an operand of ``&&``/``||``) is not zero, per lane."""
    return np.asarray(value) != 0


def convert(value, ty: T.Scalar | T.Vector, saturate: bool = False, rounding: str = ""):
    """``value`` converted to ``ty`` as C converts it (see the module docstring);
    ``saturate`` and ``rounding`` are ``convert_<type>``'s ``_sat`` and ``_rt?`` modes."""
    value = np.asarray(value)
    if value.dtype.kind == "f" and ty.dtype.kind in "iu":
        value = round_to_integer(value, rounding)
        if saturate:
            info = np.iinfo(ty.dtype)
            value = np.clip(np.nan_to_num(value), info.min, info.max)
    elif saturate and ty.dtype.kind in "iu":
        info = np.iinfo(ty.dtype)
        value = np.clip(value, info.min, info.max)
    return as_type(value, ty)


def round_to_integer(value, rounding: str = ""):
    """A floating ``value`` rounded to an integral value as a conversion to an integer type
    rounds it: toward zero, or as ``convert_<type>_rte``/``_rtp``/``_rtn`` say."""
    if "rte" in rounding:
        return np.rint(value)
    if "rtp" in rounding:
        return np.ceil(value)
    if "rtn" in rounding:
        return np.floor(value)
    return np.trunc(value)


def reinterpret(value, src: T.Scalar | T.Vector, dst: T.Scalar | T.Vector):
    """``as_<type>``: the same bytes read as ``dst`` (per lane when ``value`` is)."""
    value = np.ascontiguousarray(value)
    lane_shape = value.shape[:-1] if src.width > 1 else value.shape
    out = value.view(dst.dtype).reshape(lane_shape + ((dst.width,) if dst.width > 1 else ()))
    return out[()] if out.ndim == 0 else out
