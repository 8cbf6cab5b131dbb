"""The kernel IR: a small typed tree that the SIMT executor walks.

The frontend lowers pycparser's C AST into these nodes. Every node knows its source
line and column and its static type. Two flags drive execution and timing:

* ``uniform``: the value is the same for every work-item of the launch (kernel
  arguments, sizes, constants, loop counters built from them). Uniform values are
  kept as numpy scalars, so they cost nothing per lane;
* ``wave``: the value is the same for all lanes of a wavefront (uniform values plus
  the work-group id). Operations on such values issue to the scalar unit (SALU),
  the rest to the vector unit (VALU), as a GCN compiler would place them.

Variables have unique names (shadowing is resolved by the frontend), so the executor
can keep them in one flat dictionary.
"""
from dataclasses import dataclass, field


class Node:
    """Base of every IR node: carries ``line`` and ``col`` in the kernel source."""


class Expr(Node):
    """A typed value; see the module docstring for ``uniform`` and ``wave``."""


def _expr(cls):
    """Give an expression class an __init__ taking its fields, then position and type."""
    names = cls.fields

    def __init__(self, *values, line=0, col=0, type=None, uniform=False, wave=False):
        for name, value in zip(names, values):
            setattr(self, name, value)
        self.line, self.col, self.type = line, col, type
        self.uniform, self.wave = uniform, wave or uniform

    cls.__init__ = __init__
    cls.__repr__ = lambda self: f"{cls.__name__}({', '.join(repr(getattr(self, n)) for n in names)})"
    return cls


class Const(Expr):
    """A constant: a numpy scalar, vector or struct, or the text of a string literal (a
    printf argument for ``%s``)."""

    fields = ("value",)


class Var(Expr):
    fields = ("name",)


class WorkItem(Expr):
    """get_global_id(d) and friends; ``fn`` is the builtin's name, ``dim`` 0..2."""

    fields = ("fn", "dim")


class Binary(Expr):
    """Arithmetic, bitwise and comparison operators (operands already converted)."""

    fields = ("op", "a", "b")


class Logical(Expr):
    """``&&`` and ``||``: the right side runs only on the lanes that need it, unless
    ``speculate`` (see ``speculation``): then it runs on every lane and the two truth
    values are combined."""

    fields = ("op", "a", "b", "speculate")


class Unary(Expr):
    fields = ("op", "a")


class Cast(Expr):
    fields = ("a",)


class Select(Expr):
    """``c ? a : b``: with ``speculate`` (see ``speculation``) both sides run on every
    lane and a select picks each lane's value; otherwise it is a branch, whose sides
    each run only on their own lanes."""

    fields = ("cond", "a", "b", "speculate")


class Call(Expr):
    """A math built-in such as ``sqrt`` or ``min``; ``fn`` names it."""

    fields = ("fn", "args")


class Collective(Expr):
    """A work-group or sub-group function (``work_group_reduce_add``...; see
    ``collectives``): ``fn`` names it, ``args`` are its value and local ids."""

    fields = ("fn", "args")


class Load(Expr):
    """Read ``array[index]`` from a global/constant buffer, local or private array."""

    fields = ("array", "index")


class Swizzle(Expr):
    """Vector components: ``v.x``, ``v.xy``, ``v.s3``; ``comps`` are indices."""

    fields = ("a", "comps")


class VecLit(Expr):
    """``(float4)(a, b, c, d)``: parts are scalars or vectors filling the width."""

    fields = ("parts",)


class Atomic(Expr):
    """``atomic_add(p, value)`` and friends on the location at pointer handle ``ptr``;
    ``cmp`` is cmpxchg's expected value. The result is the old contents."""

    fields = ("op", "ptr", "value", "cmp")


class AddrOf(Expr):
    """The pointer handle of element 0 of a named memory object (``array`` decays)."""

    fields = ("array",)


class PtrLoad(Expr):
    """``*p``, ``p[i]``, ``p->x``: read a value of this node's type at pointer handle ``ptr``."""

    fields = ("ptr",)


class Member(Expr):
    """Field ``field`` of a struct value (a private variable or a function's result)."""

    fields = ("a", "field")


class StmtExpr(Expr):
    """Run ``body`` then yield ``result`` (None for void): an inlined function call
    (``frame``: its ``return``s end the call, not the kernel), ``x++`` inside an
    expression, an assignment used as a value, the comma operator."""

    fields = ("body", "result", "frame")


class ImageRead(Expr):
    """``read_image{f,i,ui}(image, sampler, coord)``; ``sampler`` is None without one."""

    fields = ("image", "sampler", "coord")


class Stmt(Node):
    """A statement; the executor runs it for a set of active lanes."""


def _stmt(cls):
    names = cls.fields

    def __init__(self, *values, line=0, col=0):
        for name in names:
            setattr(self, name, None)   # trailing fields are optional
        for name, value in zip(names, values):
            setattr(self, name, value)
        self.line, self.col = line, col

    cls.__init__ = __init__
    return cls


class Block(Stmt):
    fields = ("stmts",)


class Assign(Stmt):
    """``name = value``; with ``path`` a struct field ``name.f.g = value``; with
    ``comps``, vector components ``name.xy = value``."""

    fields = ("name", "value", "comps", "path")


class PtrStore(Stmt):
    """``*p = value``, ``p[i] = value``, ``p->x = value`` at pointer handle ``ptr``."""

    fields = ("ptr", "value", "comps")


class FuncReturn(Stmt):
    """``return value;`` in a helper function: ``name`` is the variable receiving the value."""

    fields = ("name", "value")


class Switch(Stmt):
    """``switch``: ``cases`` are (values, Block) in source order, values None for
    ``default``; lanes enter at their case and fall through until ``break``. ``nodes``
    are the branch nodes of the case labels."""

    fields = ("value", "cases", "nodes")


class Printf(Stmt):
    """``printf(format, args...)``: each active work-item prints, in work-item order."""

    fields = ("format", "args")


class ImageWrite(Stmt):
    """``write_image{f,i,ui}(image, coord, color)``."""

    fields = ("image", "coord", "value")


class Store(Stmt):
    """``array[index] = value`` (``comps`` for a component store ``a[i].x = v``)."""

    fields = ("array", "index", "value", "comps")


class EmitStore(Stmt):
    """Assignment to an ``@emit`` name: record a value per work-item."""

    fields = ("name", "index", "value")


class If(Stmt):
    """``if``/``else``: a branch (Klein's branch node ``node``), or, when ``merged`` names
    the variables its sides assign (see ``speculation``), if-converted: both sides'
    assignments run on every lane and each merged variable takes its side's value by a
    select; ``node`` is then None."""

    fields = ("cond", "then", "orelse", "node", "merged")


class Loop(Stmt):
    """``for``/``while``/``do``; the condition is checked before the body unless ``post``."""

    fields = ("cond", "body", "step", "node", "post")


class Break(Stmt):
    fields = ()


class Continue(Stmt):
    fields = ()


class Return(Stmt):
    fields = ()


class Barrier(Stmt):
    fields = ("flags",)


class Watch(Stmt):
    """``@watch NAME;``: record every access to the array from here on."""

    fields = ("array",)


class Eval(Stmt):
    """An expression evaluated for its effect (a call such as ``mem_fence``)."""

    fields = ("expr",)


def operands(e: Expr) -> tuple:
    """The operand expressions of an operator, cast, call of a math built-in, swizzle,
    member or vector literal (the other expressions each name their own)."""
    kind = type(e)
    if kind in (Binary, Logical):
        return (e.a, e.b)
    if kind in (Unary, Cast, Swizzle, Member):
        return (e.a,)
    if kind is Select:
        return (e.cond, e.a, e.b)
    if kind is Call:
        return tuple(e.args)
    if kind is VecLit:
        return tuple(e.parts)
    raise TypeError(f"no operands rule for {kind.__name__}")


for _cls in (Const, Var, WorkItem, Binary, Logical, Unary, Cast, Select, Call, Collective, Load,
             Swizzle, VecLit, Atomic, AddrOf, PtrLoad, Member, StmtExpr, ImageRead):
    _expr(_cls)
for _cls in (Block, Assign, Store, EmitStore, If, Loop, Break, Continue, Return, Barrier,
             Watch, Eval, PtrStore, FuncReturn, Switch, ImageWrite, Printf):
    _stmt(_cls)


@dataclass
class BranchNode:
    """One node of Klein's semantic model: a conditional or an iteration.

    Each evaluation of its condition appends one bit to a work-item's branch stream.
    """

    id: int
    parent: int          # enclosing branch node id, -1 at top level
    kind: str            # 'if' or 'loop'
    line: int
    col: int
    end_line: int        # last source line of the statement (its whole extent)
    branch: str = ""     # for nested nodes: 'then', 'else' or 'body' of the parent


@dataclass
class ArrayInfo:
    """A memory object a kernel can index: a pointer argument or a declared array."""

    name: str
    space: str           # global, constant, local, private
    elem: object         # Scalar or Vector
    length: int = 0      # elements, for declared arrays (0 for pointer arguments)
    is_param: bool = False
    dims: tuple = ()     # declared extents of a multi-dimensional array, outermost first
    view_of: str = ""    # for vloadN/vstoreN: the scalar array this vector view reads
    init: object = None  # initial contents (numpy array) of a program-scope __constant array


@dataclass
class Kernel:
    name: str
    params: list                         # (name, type) in order
    arrays: dict                         # name -> ArrayInfo (pointer params and declared arrays)
    variables: dict                      # unique name -> Scalar/Vector
    body: Block
    line: int
    branch_nodes: list = field(default_factory=list)
    emits: dict = field(default_factory=dict)    # name -> Emit annotation


@dataclass
class Program:
    path: str
    source: str
    kernels: dict                         # name -> Kernel, in source order
    binds: list = field(default_factory=list)    # (line, spec)
    emits: list = field(default_factory=list)
    options: str = ""                             # build options (clBuildProgram's string)

    def kernel(self, name=None):
        """The named kernel, or the only/first one when name is None."""
        if name is None:
            return next(iter(self.kernels.values()))

        if name not in self.kernels:
            raise KeyError(f"{self.path}: no kernel named {name!r} "
                           f"(has: {', '.join(self.kernels)})")
        return self.kernels[name]
