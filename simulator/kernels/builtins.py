"""OpenCL built-ins of the subset: work-item functions, constants and math.

Each math built-in has a typing rule (used by the frontend), a numpy implementation
(used by the executor) and a cost in vector instructions (used for the instruction
streams: transcendentals and integer division expand to several GCN instructions).
"""
import numpy as np

from . import types as T

# How a work-item function's value varies: per lane, per wavefront (work-group), or never.
WORK_ITEM = {
    "get_global_id": "lane", "get_local_id": "lane", "get_group_id": "wave",
    "get_global_size": "uniform", "get_local_size": "uniform", "get_num_groups": "uniform",
    "get_global_offset": "uniform",
}

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
    return np.sum(a * b, axis=-1, dtype=np.float32)


def _length(a):
    return np.sqrt(_dot(a, a))


def _clamp(x, lo, hi):
    return np.minimum(np.maximum(x, lo), hi)


def _abs(x):
    return np.abs(x).astype(np.uint32 if x.dtype.kind == "i" else x.dtype)


def _mul24(a, b):
    return a * b


def _step(edge, x):
    return np.where(x < edge, 0.0, 1.0).astype(np.float32)


def _select(a, b, c):
    # OpenCL select(a, b, c): b where c is "true", else a. Scalars test c != 0,
    # vectors test the most significant bit of each component.
    test = c < 0 if np.ndim(a) > 1 or np.ndim(c) > 1 else c != 0
    return np.where(test, b, a)


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
}


def math_result_type(name, arg_types):
    """(result type, types to convert each argument to) or (None, None) if ill-typed."""
    rule = MATH[name][0]
    arity = {"float1": 1, "float2": 2, "float3": 3, "generic2": 2, "generic3": 3, "abs": 1,
             "int2": 2, "int3": 3, "geometric1": 1, "geometric2": 2, "select": 3}[rule]
    if len(arg_types) != arity:
        return None, None
    widths = {t.width for t in arg_types}
    width = max(widths)
    if len(widths - {1}) > 1:
        return None, None
    if rule.startswith("float"):
        ty = T.FLOAT if width == 1 else T.Vector(T.FLOAT, width)
        return ty, [ty] * arity
    if rule.startswith("generic"):
        base = arg_types[0].base
        for t in arg_types[1:]:
            base = T.promote(base, t.base)
        ty = T.with_base(arg_types[0], base) if arg_types[0].width == width else (
            base if width == 1 else T.Vector(base, width))
        return ty, [T.with_base(t, base) for t in arg_types]
    if rule == "abs":
        t = arg_types[0]
        if t.is_float:
            return t, [t]
        base = T.promote(t.base, T.INT)
        unsigned = {T.INT: T.UINT, T.LONG: T.ULONG}.get(base, base)
        return T.with_base(t, unsigned), [T.with_base(t, base)]
    if rule.startswith("int"):
        if any(t.is_float for t in arg_types):
            return None, None
        base = T.INT if all(t.base.is_signed for t in arg_types) else T.UINT
        ty = base if width == 1 else T.Vector(base, width)
        return ty, [ty] * arity
    if rule.startswith("geometric"):
        ty = T.FLOAT if width == 1 else T.Vector(T.FLOAT, width)
        return T.FLOAT, [ty] * arity
    # select(a, b, c): a and b share a type, c is an integer of the same width
    a, b, c = arg_types
    if c.is_float:
        return None, None
    ty = T.promote(a, b) if a.width == b.width else None
    if ty is None:
        return None, None
    return ty, [ty, ty, c]


def apply_math(name, values):
    """Run math built-in ``name`` on numpy values (arrays or scalars)."""
    return MATH[name][2](*values)


def math_cost(name):
    """Vector instructions one call issues."""
    return MATH[name][1] if name in MATH else 1
