"""OpenCL built-ins of the subset: work-item functions, constants and math.

Each math built-in has a typing rule (used by the frontend), a numpy implementation
(used by the executor) and a cost in vector instructions (used for the instruction
streams: transcendentals and integer division expand to several GCN instructions).
"""
import math
from fractions import Fraction

import numpy as np

from . import types as T
from .images import SAMPLER_FLAGS

# How a work-item function's value varies: per lane, per wavefront (work-group), or never.
# A sub-group (cl_khr_subgroups) is a wavefront: see ``collectives``.
WORK_ITEM = {
    "get_global_id": "lane", "get_local_id": "lane", "get_group_id": "wave",
    "get_global_size": "uniform", "get_local_size": "uniform", "get_num_groups": "uniform",
    "get_global_offset": "uniform", "get_work_dim": "uniform",
    "get_sub_group_id": "wave", "get_sub_group_local_id": "lane", "get_sub_group_size": "wave",
    "get_max_sub_group_size": "uniform", "get_num_sub_groups": "uniform",
    "get_enqueued_num_sub_groups": "uniform",
}
# The work-item functions that take no dimension argument.
NO_DIMENSION = {"get_work_dim", "get_sub_group_id", "get_sub_group_local_id", "get_sub_group_size",
                "get_max_sub_group_size", "get_num_sub_groups", "get_enqueued_num_sub_groups"}

CONSTANTS = {
    "CLK_LOCAL_MEM_FENCE": (T.INT, 1),
    "CLK_GLOBAL_MEM_FENCE": (T.INT, 2),
    "INT_MAX": (T.INT, 2**31 - 1),
    "INT_MIN": (T.INT, -2**31),
    "UINT_MAX": (T.UINT, 2**32 - 1),
    "FLT_MAX": (T.FLOAT, float(np.finfo(np.float32).max)),
    "MAXFLOAT": (T.FLOAT, float(np.finfo(np.float32).max)),
    "FLT_MIN": (T.FLOAT, float(np.finfo(np.float32).tiny)),
    "FLT_EPSILON": (T.FLOAT, float(np.finfo(np.float32).eps)),
    "INFINITY": (T.FLOAT, float("inf")),
    "NAN": (T.FLOAT, float("nan")),
    "CLK_IMAGE_MEM_FENCE": (T.INT, 4),
    **{name: (T.UINT, value) for name, value in SAMPLER_FLAGS.items()},
    "M_PI_F": (T.FLOAT, float(np.pi)),
    "M_E_F": (T.FLOAT, float(np.e)),
    "true": (T.INT, 1),
    "false": (T.INT, 0),
}


def _rsqrt(x):
    return (1.0 / np.sqrt(x)).astype(x.dtype)


def _mix(x, y, a):
    return x + (y - x) * a


def _dot(a, b):
    return np.sum(a * b, axis=-1)


def _length(a):
    return np.sqrt(_dot(a, a))


def _clamp(x, lo, hi):
    return np.minimum(np.maximum(x, lo), hi)


def _abs(x):
    """|x|, an integer's in the unsigned type of its width (abs(INT_MIN) is 2**31: numpy's
    wrapped value read unsigned)."""
    x = np.asarray(x)
    return np.abs(x).astype(np.dtype(f"u{x.dtype.itemsize}") if x.dtype.kind == "i" else x.dtype)


def _mul24(a, b):
    return a * b


def _step(edge, x):
    return np.where(x < edge, 0.0, 1.0).astype(np.float32)


def _normalize(a):
    length = _length(a)
    return a / np.where(length == 0, 1, length)[..., None]


def _cross(a, b):
    out = np.zeros(np.broadcast_shapes(np.shape(a), np.shape(b)), dtype=np.result_type(a, b))
    out[..., :3] = np.cross(a[..., :3], b[..., :3])
    return out


def _smoothstep(e0, e1, x):
    t = np.clip((x - e0) / (e1 - e0), 0, 1)
    return t * t * (3 - 2 * t)


def _bits(x):
    return np.asarray(x).dtype.itemsize * 8


def _unsigned(x):
    x = np.asarray(x)
    return x.view(np.dtype(f"u{x.dtype.itemsize}")) if x.dtype.kind == "i" else x


def _clz(x):
    u = _unsigned(x).astype(np.float64)
    bits = _bits(x)
    leading = np.where(u == 0, bits, bits - 1 - np.floor(np.log2(np.where(u == 0, 1, u))))
    return leading.astype(np.asarray(x).dtype)


def _popcount(x):
    return np.bitwise_count(np.asarray(x)).astype(np.asarray(x).dtype)


def _rotate(a, n):
    a = np.asarray(a)
    bits = _bits(a)
    u = _unsigned(a)
    k = (np.asarray(n).astype(np.int64) % bits).astype(u.dtype)
    back = ((bits - k.astype(np.int64)) % bits).astype(u.dtype)
    return ((u << k) | np.where(k == 0, 0, u >> back).astype(u.dtype)).view(a.dtype)


def _mul_hi(a, b):
    a, b = np.asarray(a), np.asarray(b)
    bits = _bits(a)
    wide = np.int64 if a.dtype.kind == "i" else np.uint64
    return ((a.astype(wide) * b.astype(wide)) >> bits).astype(a.dtype)


def _saturate(fn):
    def apply(*args):
        dtype = np.result_type(*args)
        info = np.iinfo(dtype)
        wide = fn(*(np.asarray(a).astype(object if dtype.itemsize == 8 else np.int64) for a in args))
        return np.clip(wide, info.min, info.max).astype(dtype)
    return apply


def _abs_diff(a, b):
    a, b = np.asarray(a), np.asarray(b)
    diff = np.where(a > b, a.astype(np.int64) - b, b.astype(np.int64) - a)
    return diff.astype(np.dtype(f"u{a.dtype.itemsize}"))


def _relational(fn):
    return lambda *args: fn(*args)


def _bitselect(a, b, c):
    a, b, c = np.asarray(a), np.asarray(b), np.asarray(c)
    if a.dtype.kind == "f":
        ints = np.dtype(f"u{a.dtype.itemsize}")
        return ((a.view(ints) & ~c.view(ints)) | (b.view(ints) & c.view(ints))).view(a.dtype)
    return (a & ~c) | (b & c)


def _msb(x):
    x = np.asarray(x)
    return x < 0 if x.dtype.kind == "i" else (x >> (_bits(x) - 1)) != 0


def _ieee_remainder(x, y):
    """``x - n * y``, ``n`` the integer nearest ``x / y`` (ties to even), exact; NaN for an
    infinite ``x``, a zero ``y`` or a NaN (C99 F.9.7.2)."""
    if math.isinf(x) or y == 0 or math.isnan(x) or math.isnan(y):
        return math.nan
    return math.remainder(x, y)


def _remquo_quotient(x, y):
    """The quotient bits remquo stores: the lowest seven bits of the integer nearest
    ``x / y`` (computed exactly), signed as ``x / y``; 0 where remquo returns NaN
    (OpenCL C 7.5.1), and 0 for an infinite ``y`` (the quotient is 0)."""
    if math.isinf(x) or y == 0 or math.isnan(x) or math.isnan(y) or math.isinf(y):
        return 0
    bits = abs(round(Fraction(x) / Fraction(y))) & 0x7F   # round(): ties to even
    return -bits if math.copysign(1, x) != math.copysign(1, y) else bits


def _frexp(x):
    """(mantissa in [1/2, 1) or 0, exponent) of each value; ±inf and NaN return themselves
    with exponent 0 (OpenCL C 7.5.1)."""
    x = np.asarray(x)
    mantissa, exponent = np.frexp(x)
    return mantissa, np.where(np.isfinite(x), exponent, 0).astype(np.int32)


def _shuffle(*args):
    """shuffle(x, mask) and shuffle2(x, y, mask): component ``mask[i]`` of x (of x then y
    for shuffle2), where only the mask's low bits that can number a component count
    (OpenCL C 6.13.12: log2 of the components, one more bit for shuffle2)."""
    *sources, mask = (np.asarray(a) for a in args)
    pool = np.concatenate(np.broadcast_arrays(*sources), axis=-1)
    index = (mask & (pool.shape[-1] - 1)).astype(np.intp)
    lead = np.broadcast_shapes(pool.shape[:-1], index.shape[:-1])
    return np.take_along_axis(np.broadcast_to(pool, lead + pool.shape[-1:]),
                              np.broadcast_to(index, lead + index.shape[-1:]), axis=-1)


def _maxmag(x, y):
    return np.where(np.abs(x) > np.abs(y), x, np.where(np.abs(y) > np.abs(x), y, np.fmax(x, y)))


def _minmag(x, y):
    return np.where(np.abs(x) < np.abs(y), x, np.where(np.abs(y) < np.abs(x), y, np.fmin(x, y)))


def _select(a, b, c):
    # OpenCL select(a, b, c): b where c is "true", else a. Scalars test c != 0,
    # vectors test the most significant bit of each component.
    test = c < 0 if np.ndim(a) > 1 or np.ndim(c) > 1 else c != 0
    return np.where(test, b, a)


def _per_value(fn, otype=None):
    """A scalar function of the ``math`` module (``erf``, ``lgamma``...: numpy has no
    ufunc for them) applied to each value, in the arguments' type (or ``otype``)."""
    each = np.vectorize(fn, otypes=[np.float64 if otype is None else otype])

    def apply(*args):
        args = [np.asarray(a) for a in args]
        dtype = otype or np.result_type(*args)
        return each(*args).astype(dtype) if all(a.size for a in args) else np.zeros(
            np.broadcast_shapes(*(a.shape for a in args)), dtype)
    return apply


def _ilogb(x):
    """The exponent of ``x`` as an int; FP_ILOGB0 (INT_MIN) for 0, FP_ILOGBNAN (INT_MAX)
    for NaN and INT_MAX for ±inf, as Clang's OpenCL headers define them."""
    x = np.asarray(x)
    exponent = np.frexp(np.where(np.isfinite(x) & (x != 0), x, 1))[1] - 1
    special = np.where(x == 0, np.iinfo(np.int32).min, np.iinfo(np.int32).max)
    return np.where(np.isfinite(x) & (x != 0), exponent, special).astype(np.int32)


def _upsample(hi, lo):
    """``hi`` above ``lo`` in an integer twice as wide (signed as ``hi`` is)."""
    hi, lo = np.asarray(hi), np.asarray(lo)
    wide = np.dtype(f"{hi.dtype.kind}{2 * hi.dtype.itemsize}")
    return (hi.astype(wide) << (8 * lo.dtype.itemsize)) | lo.astype(wide)


def _tgamma(x):
    try:
        return math.gamma(x)
    except (ValueError, OverflowError):  # C: ±inf at ±0 and on overflow, NaN at -inf
        negative_whole = x == -math.inf or (x < 0 and math.isfinite(x) and x == math.floor(x))
        return math.nan if x != x or negative_whole else math.copysign(math.inf, x)


def _lgamma(x):
    try:
        return math.lgamma(x)
    except (ValueError, OverflowError):
        return math.inf


UNSIGNED = {T.CHAR: T.UCHAR, T.SHORT: T.USHORT, T.INT: T.UINT, T.LONG: T.ULONG}
UPSAMPLED = {T.CHAR: T.SHORT, T.UCHAR: T.USHORT, T.SHORT: T.INT, T.USHORT: T.UINT,
             T.INT: T.LONG, T.UINT: T.ULONG}

# name: (typing rule, vector instructions, numpy implementation)
MATH = {
    "sqrt": ("float1", 4, np.sqrt), "native_sqrt": ("float1", 1, np.sqrt),
    "rsqrt": ("float1", 4, _rsqrt), "native_rsqrt": ("float1", 1, _rsqrt),
    "exp": ("float1", 4, np.exp), "native_exp": ("float1", 1, np.exp),
    "exp2": ("float1", 4, np.exp2), "log": ("float1", 4, np.log),
    "native_log": ("float1", 1, np.log), "log2": ("float1", 4, np.log2),
    "sin": ("float1", 8, np.sin), "cos": ("float1", 8, np.cos), "tan": ("float1", 8, np.tan),
    "native_sin": ("float1", 1, np.sin), "native_cos": ("float1", 1, np.cos),
    "atan": ("float1", 8, np.arctan), "asin": ("float1", 8, np.arcsin),
    "acos": ("float1", 8, np.arccos), "tanh": ("float1", 8, np.tanh),
    "fabs": ("float1", 1, np.abs), "floor": ("float1", 1, np.floor),
    "ceil": ("float1", 1, np.ceil), "trunc": ("float1", 1, np.trunc),
    "round": ("float1", 2, lambda x: np.copysign(np.floor(np.abs(x) + 0.5), x)),
    "native_recip": ("float1", 1, lambda x: (1.0 / x).astype(x.dtype)),
    "pow": ("float2", 8, np.power), "powr": ("float2", 8, np.power),
    "native_powr": ("float2", 2, np.power), "fmin": ("float2", 1, np.fmin),
    "fmax": ("float2", 1, np.fmax), "atan2": ("float2", 8, np.arctan2),
    "hypot": ("float2", 4, np.hypot), "fmod": ("float2", 8, np.fmod),
    "native_divide": ("float2", 2, np.divide), "copysign": ("float2", 1, np.copysign),
    "step": ("float2", 1, _step),
    "mad": ("float3", 1, lambda a, b, c: a * b + c), "fma": ("float3", 1, lambda a, b, c: a * b + c),
    "mix": ("float3", 2, _mix),
    "min": ("generic2", 1, np.minimum), "max": ("generic2", 1, np.maximum),
    "clamp": ("generic3", 2, _clamp), "abs": ("abs", 1, _abs),
    "mul24": ("int2", 1, _mul24), "mad24": ("int3", 1, lambda a, b, c: a * b + c),
    "dot": ("geometric2", 4, _dot), "distance": ("geometric2", 6, lambda a, b: _length(a - b)),
    "length": ("geometric1", 5, _length),
    "select": ("select", 1, _select),
    "log10": ("float1", 4, np.log10), "exp10": ("float1", 4, lambda x: np.power(10, x)),
    "expm1": ("float1", 4, np.expm1), "log1p": ("float1", 4, np.log1p), "cbrt": ("float1", 8, np.cbrt),
    "erf": ("float1", 8, _per_value(math.erf)), "erfc": ("float1", 8, _per_value(math.erfc)),
    "lgamma": ("float1", 8, _per_value(_lgamma)), "tgamma": ("float1", 8, _per_value(_tgamma)),
    "nan": ("float1", 1, lambda x: np.full_like(x, np.nan)),
    "ilogb": ("int_of_real1", 2, _ilogb), "upsample": ("upsample2", 2, _upsample),
    "sinh": ("float1", 8, np.sinh), "cosh": ("float1", 8, np.cosh), "asinh": ("float1", 8, np.arcsinh),
    "acosh": ("float1", 8, np.arccosh), "atanh": ("float1", 8, np.arctanh),
    "sinpi": ("float1", 8, lambda x: np.sin(np.pi * x)), "cospi": ("float1", 8, lambda x: np.cos(np.pi * x)),
    "tanpi": ("float1", 8, lambda x: np.tan(np.pi * x)), "rint": ("float1", 1, np.rint),
    "logb": ("float1", 2, lambda x: np.floor(np.log2(np.abs(x)))),
    "degrees": ("float1", 1, np.degrees), "radians": ("float1", 1, np.radians),
    "sign": ("float1", 2, lambda x: np.where(np.isnan(x), 0, np.sign(x))),
    "recip": ("float1", 1, lambda x: 1 / x),
    "fract": ("float1", 2, lambda x: np.minimum(x - np.floor(x), np.nextafter(np.float32(1), np.float32(0)))),
    "modf_frac": ("float1", 1, lambda x: x - np.trunc(x)),
    "maxmag": ("float2", 1, _maxmag), "minmag": ("float2", 1, _minmag),
    "fdim": ("float2", 1, lambda x, y: np.where(x > y, x - y, 0)), "nextafter": ("float2", 1, np.nextafter),
    "remainder": ("float2", 8, _per_value(_ieee_remainder)), "pown": ("float2", 8, np.power),
    # frexp and remquo return one part and store the other (see calls._POINTER_RESULTS)
    "frexp_mantissa": ("float1", 2, lambda x: _frexp(x)[0]),
    "frexp_exponent": ("int_of_real1", 2, lambda x: _frexp(x)[1]),
    "remquo_quotient": ("int_of_real2", 8, _per_value(_remquo_quotient, np.int32)),
    "shuffle": ("shuffle2", 1, _shuffle), "shuffle2": ("shuffle3", 1, _shuffle),
    "rootn": ("float2", 8, lambda x, n: np.power(x, 1 / n)),
    "ldexp": ("float2", 2, lambda x, n: x * np.exp2(n)),
    "smoothstep": ("float3", 4, _smoothstep),
    "normalize": ("geometric_same1", 6, _normalize), "fast_normalize": ("geometric_same1", 3, _normalize),
    "cross": ("geometric_same2", 6, _cross), "fast_length": ("geometric1", 3, _length),
    "fast_distance": ("geometric2", 4, lambda a, b: _length(a - b)),
    "isnan": ("relational1", 1, np.isnan), "isinf": ("relational1", 1, np.isinf),
    "isfinite": ("relational1", 1, np.isfinite), "signbit": ("relational1", 1, np.signbit),
    "isnormal": ("relational1", 1, lambda x: np.isfinite(x) & (np.abs(x) >= np.finfo(x.dtype).tiny)),
    "isequal": ("relational2", 1, np.equal), "isnotequal": ("relational2", 1, np.not_equal),
    "isgreater": ("relational2", 1, np.greater), "isgreaterequal": ("relational2", 1, np.greater_equal),
    "isless": ("relational2", 1, np.less), "islessequal": ("relational2", 1, np.less_equal),
    "islessgreater": ("relational2", 1, lambda x, y: (x < y) | (x > y)),
    "isordered": ("relational2", 1, lambda x, y: ~(np.isnan(x) | np.isnan(y))),
    "isunordered": ("relational2", 1, lambda x, y: np.isnan(x) | np.isnan(y)),
    "any": ("anyall", 1, lambda x: np.any(_msb(x), axis=-1) if np.ndim(x) else _msb(x)),
    "all": ("anyall", 1, lambda x: np.all(_msb(x), axis=-1) if np.ndim(x) else _msb(x)),
    "bitselect": ("bitselect", 1, _bitselect),
    "clz": ("gentype1", 1, _clz), "popcount": ("gentype1", 1, _popcount),
    "hadd": ("gentype2", 2, lambda a, b: (a >> 1) + (b >> 1) + (a & b & 1)),
    "rhadd": ("gentype2", 2, lambda a, b: (a >> 1) + (b >> 1) + ((a | b) & 1)),
    "mul_hi": ("gentype2", 2, _mul_hi), "rotate": ("gentype2", 2, _rotate),
    "add_sat": ("gentype2", 2, _saturate(lambda a, b: a + b)),
    "sub_sat": ("gentype2", 2, _saturate(lambda a, b: a - b)),
    "mad_hi": ("gentype3", 2, lambda a, b, c: _mul_hi(a, b) + c),
    "mad_sat": ("gentype3", 2, _saturate(lambda a, b, c: a * b + c)),
    "abs_diff": ("absdiff", 2, _abs_diff),
}
for _name in ("sqrt", "rsqrt", "exp", "exp2", "exp10", "log", "log2", "log10", "sin", "cos", "tan",
              "recip"):
    MATH.setdefault("native_" + _name, ("float1", 1, MATH[_name][2] if _name in MATH else None))
    MATH["half_" + _name] = ("float1", 1, MATH.get(_name, MATH["native_" + _name])[2])
for _name in ("divide", "powr"):
    MATH["half_" + _name] = ("float2", 2, MATH["native_" + _name][2])
MATH.pop("recip")


def math_result_type(name, arg_types):
    """(result type, types to convert each argument to) or (None, None) if ill-typed."""
    rule = MATH[name][0]
    arity = int(rule[-1]) if rule[-1].isdigit() else {"abs": 1, "select": 3, "anyall": 1,
                                                       "bitselect": 3, "absdiff": 2}[rule]
    if len(arg_types) != arity:
        return None, None
    if any(isinstance(t, (T.Pointer, T.Struct, T.Opaque)) for t in arg_types):
        return None, None
    if rule.startswith("shuffle"):
        return _shuffle_type(arg_types)
    widths = {t.width for t in arg_types}
    width = max(widths)
    if len(widths - {1}) > 1:
        return None, None
    real = T.DOUBLE if any(t.base is T.DOUBLE for t in arg_types) else T.FLOAT
    if rule.startswith("int_of_real"):  # ilogb, frexp's exponent, remquo's quotient
        ty = real if width == 1 else T.Vector(real, width)
        return (T.INT if width == 1 else T.Vector(T.INT, width)), [ty] * arity
    if rule.startswith("upsample"):  # upsample(hi, lo): lo unsigned of hi's size
        hi, lo = arg_types
        wider = UPSAMPLED.get(hi.base)
        if wider is None or hi.is_float or lo.base is not UNSIGNED.get(hi.base, hi.base) or \
                hi.width != lo.width:
            return None, None
        return T.with_base(hi, wider), [hi, lo]
    if rule.startswith(("float", "relational")):
        ty = real if width == 1 else T.Vector(real, width)
        if rule.startswith("relational"):
            mask = T.LONG if real is T.DOUBLE else T.INT
            return (T.INT if width == 1 else T.Vector(mask, width)), [ty] * arity
        return ty, [ty] * arity
    if rule.startswith("geometric_same"):
        ty = real if width == 1 else T.Vector(real, width)
        if name == "cross" and width not in (3, 4):
            return None, None
        return ty, [ty] * arity
    if rule in ("anyall",):
        t = arg_types[0]
        return (T.INT, [t]) if not t.is_float else (None, None)
    if rule == "bitselect" or rule.startswith(("gentype", "absdiff")):
        if rule != "bitselect" and any(t.is_float for t in arg_types):
            return None, None
        base = max((t.base for t in arg_types), key=lambda b: b.rank)
        ty = base if width == 1 else T.Vector(base, width)
        if rule == "absdiff":
            return T.with_base(ty, UNSIGNED.get(base, base)), [ty] * arity
        return ty, [ty] * arity
    if rule.startswith("generic"):
        ty = arg_types[0]
        for t in arg_types[1:]:
            ty = T.promote(ty, t)   # max(uchar4, uchar4) is a uchar4: vectors are not promoted
        return ty, [T.with_base(t, ty.base) for t in arg_types]
    if rule == "abs":
        t = arg_types[0]
        if t.is_float:
            return t, [t]
        base = T.promote(t, T.INT).base   # abs(char4) is a uchar4: vectors are not promoted
        return T.with_base(t, UNSIGNED.get(base, base)), [T.with_base(t, base)]
    if rule.startswith("int"):
        if any(t.is_float for t in arg_types):
            return None, None
        base = T.INT if all(t.base.is_signed for t in arg_types) else T.UINT
        ty = base if width == 1 else T.Vector(base, width)
        return ty, [ty] * arity
    if rule.startswith("geometric"):
        ty = real if width == 1 else T.Vector(real, width)
        return real, [ty] * arity
    # select(a, b, c): a and b share a type, c is an integer of the same width
    a, b, c = arg_types
    if c.is_float:
        return None, None
    ty = T.promote(a, b) if a.width == b.width else None
    if ty is None:
        return None, None
    return ty, [ty, ty, c]


def _shuffle_type(arg_types):
    """shuffle(x, mask) / shuffle2(x, y, mask): x (and y, of x's type) a vector of 2, 4, 8
    or 16 components, mask an unsigned vector of 2, 4, 8 or 16 components of x's
    component size; the result has x's components, as many as the mask."""
    *sources, mask = arg_types
    x = sources[0]
    shapes = (2, 4, 8, 16)
    if any(not isinstance(t, T.Vector) for t in arg_types) or any(s != x for s in sources) or \
            x.width not in shapes or mask.width not in shapes or mask.is_float or \
            mask.base.is_signed or mask.base.size != x.base.size:
        return None, None
    return T.Vector(x.base, mask.width), list(arg_types)


def apply_math(name, values):
    """Run math built-in ``name`` on numpy values (arrays or scalars)."""
    return MATH[name][2](*values)


def math_cost(name):
    """Vector instructions one call issues."""
    return MATH[name][1] if name in MATH else 1
