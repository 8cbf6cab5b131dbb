"""Instructions one IR operation issues, as a GCN compiler lays it out.

The executor issues these counts for each component of an operation's value (a
``float4`` add is four VALU instructions), and the if-conversion (``speculation``)
weighs a conditional's sides with the same counts, where LLVM weighs them with the
target's instruction costs. An operand's own instructions are not part of an
operation's count.
"""
from . import ir
from . import types as T
from .builtins import math_cost

INT_DIV_COST = 10   # GCN has no integer divide: a reciprocal-based sequence of ~10 VALU ops


def _const_node(node) -> ir.Const | None:
    """The constant ``node`` is, seen through casts; else None."""
    while type(node) is ir.Cast:
        node = node.a
    return node if type(node) is ir.Const else None


def _power_of_two(node) -> bool:
    """A constant divisor the compiler turns into a shift or mask (costs one instruction)."""
    const = _const_node(node)
    if const is None or const.type.is_float or const.type.width != 1:
        return False
    value = int(const.value)
    return value > 0 and value & (value - 1) == 0


def integer_division(e: ir.Binary) -> bool:
    """Whether ``e`` is an integer ``/`` or ``%`` that takes GCN's divide sequence."""
    return e.op in ("/", "%") and not e.a.type.is_float and not _power_of_two(e.b)


def converts(src, dst) -> bool:
    """Whether a cast from ``src`` to ``dst`` takes an instruction: a float conversion or
    a width change does (``v_cvt``, ``v_bfe``); a pointer, struct or same-size integer
    retyped does not."""
    if isinstance(dst, (T.Pointer, T.Struct, T.Opaque)):
        return False
    return src.is_float != dst.is_float or src.base.size != dst.base.size


def operation(e: ir.Expr) -> int:
    """Instructions per component that ``e`` itself issues (0 for a name, a constant, a
    swizzle or a pointer handle; a select or ``&&``/``||`` takes one)."""
    kind = type(e)
    if kind is ir.Binary:
        return INT_DIV_COST if integer_division(e) else 1
    if kind is ir.Cast:
        return int(converts(e.a.type, e.type))
    if kind is ir.Call:
        return 0 if e.fn.startswith("get_image") else math_cost(e.fn)
    if kind in (ir.Unary, ir.Select, ir.Logical):
        return 1
    if kind is ir.WorkItem:
        return int(e.fn == "get_global_id" and not e.uniform)   # group * size + local id
    return 0
