"""Lowering C expressions to typed IR: names, operators, conversions, built-ins.

``ExpressionLowering`` is the half of the frontend's lowering that handles
expressions; ``frontend._Lowering`` adds statements and scopes on top of it. Every
expression gets its static type here, with C's usual arithmetic conversions made
explicit as ``ir.Cast`` nodes, so the executor never has to guess a numpy dtype.
Constructs outside the subset are refused by name (pointer arithmetic, ``sizeof``,
the comma operator, ``++`` inside an expression, user functions).
"""
from pycparser import c_ast

from . import ir
from . import types as T
from .builtins import CONSTANTS, MATH, WORK_ITEM, math_result_type
from .diagnostics import KernelError, Unsupported, at
from .preprocess import WATCH_CALL

ARITH = {"+", "-", "*", "/", "%", "<<", ">>", "&", "|", "^"}
COMPARE = {"<", ">", "<=", ">=", "==", "!="}
SWIZZLE = {"x": 0, "y": 1, "z": 2, "w": 3}
ATOMIC_OPS = ("add", "sub", "inc", "dec", "xchg", "min", "max", "and", "or", "xor")


class ExpressionLowering:
    """Expression lowering; needs ``path``, ``pre`` (the preprocessed file), ``scopes`` and ``arrays``."""

    def error(self, node, reason):
        return at(getattr(node, "coord", None), self.path, reason)

    def unsupported(self, node, what):
        return at(getattr(node, "coord", None), self.path, what, Unsupported)

    def pos(self, node):
        coord = getattr(node, "coord", None)
        return {"line": coord.line if coord else 0, "col": (coord.column or 1) if coord else 0}

    def declare(self, node, name, entry):
        if name in self.scopes[-1]:
            raise self.error(node, f"'{name}' is already declared in this scope")
        self.scopes[-1][name] = entry

    def resolve(self, node, name):
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        return None

    def unique(self, name):
        count = self.names_used.get(name, 0)
        self.names_used[name] = count + 1
        return name if count == 0 else f"{name}#{count}"

    def type_of(self, node, type_node):
        """Scalar or Vector type named by a TypeDecl/Typename's IdentifierType."""
        inner = type_node.type if isinstance(type_node, (c_ast.TypeDecl, c_ast.Typename)) else type_node
        if isinstance(inner, c_ast.TypeDecl):
            inner = inner.type
        if isinstance(inner, (c_ast.Struct, c_ast.Union, c_ast.Enum)):
            raise self.unsupported(node, "struct, union and enum types")
        if not isinstance(inner, c_ast.IdentifierType):
            raise self.unsupported(node, "this kind of type")
        found = T.lookup(inner.names)
        if found is None:
            raise self.error(node, f"unknown or unsupported type '{' '.join(inner.names)}'"
                             " (supported: char..ulong, float and their vectors)")
        return found

    # -- memory views ----------------------------------------------------------------
    def vector_view(self, node, pointer, width, name):
        """The ``@width`` vector view of a scalar array, for vloadN/vstoreN."""
        target = self.resolve(pointer, pointer.name) if isinstance(pointer, c_ast.ID) else None
        if not isinstance(target, ir.ArrayInfo) or target.elem.width != 1:
            raise self.error(node, f"{name} needs a pointer to scalars as its last argument")
        view = f"{target.name}@{width}"
        if view not in self.arrays:
            self.arrays[view] = ir.ArrayInfo(view, target.space, T.Vector(target.elem, width),
                                             length=target.length // width, is_param=False,
                                             view_of=target.name)
        return self.arrays[view]

    def offset(self, node):
        value = self.expr(node)
        if value.type.is_float or value.type.width != 1:
            raise self.error(node, f"an offset must be an integer scalar, not {value.type}")
        return self.convert(value, T.INT if value.type.rank <= T.INT.rank else value.type)

    def condition(self, node):
        cond = self.expr(node)
        if cond.type.width != 1:
            raise self.error(node, f"a condition must be a scalar, not {cond.type}")
        return cond

    def convert(self, value, ty):
        if value.type == ty:
            return value
        if value.type.width != 1 and value.type.width != ty.width:
            raise KernelError(self.path, value.line, value.col, f"cannot convert {value.type} to {ty}")
        return ir.Cast(value, type=ty, line=value.line, col=value.col, uniform=value.uniform)

    def expr(self, node):
        method = getattr(self, "expr_" + type(node).__name__, None)
        if method is None:
            names = {"Assignment": "assignment inside an expression",
                     "CompoundLiteral": "compound literals", "InitList": "initializer lists"}
            raise self.unsupported(node, names.get(type(node).__name__,
                                                   f"expression {type(node).__name__}"))
        return method(node)

    def expr_Constant(self, node):
        return _constant(self, node)

    def expr_ID(self, node):
        entry = self.resolve(node, node.name)
        if entry is None:
            if node.name in CONSTANTS:
                ty, value = CONSTANTS[node.name]
                return ir.Const(ty.dtype.type(value), type=ty, uniform=True, **self.pos(node))
            if any(e.name == node.name for e in self.pre.emits):
                raise self.error(node, f"@emit value '{node.name}' can only be assigned")
            raise self.error(node, f"'{node.name}' is not declared")
        if isinstance(entry, ir.ArrayInfo):
            raise self.unsupported(node, f"using array or pointer '{node.name}' as a value"
                                   " (pointer arithmetic); index it instead")
        _, name, ty = entry
        return ir.Var(name, type=ty, **self.pos(node))

    def expr_BinaryOp(self, node):
        a = self.expr(node.left)
        b = self.expr(node.right)
        return self.binary(node, node.op, a, b)

    def binary(self, node, op, a, b):
        pos = self.pos(node)
        if op in ("&&", "||"):
            for side in (a, b):
                if side.type.width != 1:
                    raise self.error(node, f"'{op}' needs scalar operands")
            return ir.Logical(op, a, b, type=T.INT, **pos)
        if op not in ARITH and op not in COMPARE:
            raise self.unsupported(node, f"operator {op}")
        if a.type.width != 1 and b.type.width != 1 and a.type.width != b.type.width:
            raise self.error(node, f"operands of '{op}' have different widths ({a.type}, {b.type})")
        if op in ("%", "<<", ">>", "&", "|", "^") and (a.type.is_float or b.type.is_float):
            raise self.error(node, f"operator '{op}' needs integer operands, not {a.type} and {b.type}")
        if op in ("<<", ">>"):
            ty = T.promote(a.type, T.INT) if a.type.width == 1 else a.type
            a = self.convert(a, ty)
            b = self.convert(b, T.with_base(ty, ty.base) if b.type.width != 1 else T.promote(b.type, T.INT))
        else:
            ty = T.promote(a.type, b.type)
            a, b = self.convert(a, ty), self.convert(b, ty)
        result = ty
        if op in COMPARE:
            result = T.INT if ty.width == 1 else T.Vector(T.INT, ty.width)
        return ir.Binary(op, a, b, type=result, **pos)

    def expr_UnaryOp(self, node):
        if node.op in ("p++", "++", "p--", "--"):
            raise self.unsupported(node, f"'{node.op.strip('p')}' inside an expression"
                                   " (write it as its own statement)")
        if node.op == "sizeof":
            raise self.unsupported(node, "sizeof")
        if node.op in ("&", "*"):
            raise self.unsupported(node, f"pointer operator unary '{node.op}'")
        a = self.expr(node.expr)
        pos = self.pos(node)
        if node.op == "+":
            return a
        if node.op == "!":
            return ir.Unary("!", a, type=T.INT if a.type.width == 1 else T.Vector(T.INT, a.type.width), **pos)
        if node.op == "~" and a.type.is_float:
            raise self.error(node, "'~' needs an integer operand")
        ty = T.promote(a.type, T.INT) if a.type.width == 1 else a.type
        return ir.Unary(node.op, self.convert(a, ty), type=ty, **pos)

    def expr_TernaryOp(self, node):
        cond = self.condition(node.cond)
        a, b = self.expr(node.iftrue), self.expr(node.iffalse)
        ty = T.promote(a.type, b.type)
        return ir.Select(cond, self.convert(a, ty), self.convert(b, ty), type=ty, **self.pos(node))

    def expr_Cast(self, node):
        ty = self.type_of(node, node.to_type)
        pos = self.pos(node)
        if isinstance(node.expr, c_ast.ExprList) and ty.width > 1:
            parts = [self.expr(e) for e in node.expr.exprs]
            if sum(p.type.width for p in parts) != ty.width and not (len(parts) == 1):
                raise self.error(node, f"({ty}) literal needs {ty.width} components")
            if len(parts) == 1:
                return self.convert(self.convert(parts[0], ty.base), ty)
            parts = [self.convert(p, T.with_base(p.type, ty.base)) for p in parts]
            return ir.VecLit(parts, type=ty, **pos)
        value = self.expr(node.expr)
        if value.type.width != 1 and value.type.width != ty.width:
            raise self.error(node, f"cannot cast {value.type} to {ty}")
        return self.convert(value, ty)

    def expr_ExprList(self, node):
        raise self.unsupported(node, "the comma operator")

    def expr_StructRef(self, node):
        if node.type == "->":
            raise self.unsupported(node, "'->' (structs)")
        base = self.expr(node.name)
        comps = self.swizzle_comps(node)
        if comps is None or base.type.width == 1:
            raise self.error(node, f"'{node.field.name}' is not a component of {base.type}")
        if max(comps) >= base.type.width:
            raise self.error(node, f"component .{node.field.name} is out of range for {base.type}")
        ty = base.type.base if len(comps) == 1 else T.Vector(base.type.base, len(comps))
        return ir.Swizzle(base, comps, type=ty, **self.pos(node))

    def swizzle_comps(self, node):
        name = node.field.name
        if name in ("lo", "hi", "even", "odd"):
            raise self.unsupported(node, f"the .{name} vector selector")
        if name[0] in "sS" and len(name) > 1 and all(c in "0123456789abcdefABCDEF" for c in name[1:]):
            return [int(c, 16) for c in name[1:]]
        if all(c in SWIZZLE for c in name):
            return [SWIZZLE[c] for c in name]
        return None

    def element(self, node):
        """(ArrayInfo, flat int index) of ``a[i]`` or ``a[i][j]``."""
        subscripts = []
        root = node
        while isinstance(root, c_ast.ArrayRef):
            subscripts.append(root.subscript)
            root = root.name
        subscripts.reverse()
        if not isinstance(root, c_ast.ID):
            raise self.unsupported(node, "indexing this kind of expression")
        info = self.resolve(root, root.name)
        if not isinstance(info, ir.ArrayInfo):
            if info is None:
                raise self.error(root, f"'{root.name}' is not declared")
            raise self.error(root, f"'{root.name}' is not an array or pointer")
        dims = info.dims or (None,)
        if len(subscripts) != len(dims):
            raise self.error(node, f"'{root.name}' needs {len(dims)} subscript(s), got {len(subscripts)}")
        index = None
        for i, sub in enumerate(subscripts):
            value = self.expr(sub)
            if value.type.is_float or value.type.width != 1:
                raise self.error(sub, f"an index must be an integer scalar, not {value.type}")
            value = self.convert(value, T.INT if value.type.rank <= T.INT.rank else value.type)
            if index is None:
                index = value
            else:
                scale = ir.Const(T.INT.dtype.type(dims[i]), type=T.INT, uniform=True, **self.pos(sub))
                index = self.binary(sub, "+", self.binary(sub, "*", index, scale), value)
        return info, index

    def expr_ArrayRef(self, node):
        info, index = self.element(node)
        return ir.Load(info.name, index, type=info.elem, **self.pos(node))

    def expr_FuncCall(self, node):
        if not isinstance(node.name, c_ast.ID):
            raise self.unsupported(node, "calls through expressions")
        name = node.name.name
        args = node.args.exprs if node.args else []
        pos = self.pos(node)
        if name in WORK_ITEM:
            if len(args) != 1:
                raise self.error(node, f"{name} takes one argument (the dimension)")
            dim = fold_constant(self.expr(args[0]))
            if dim not in (0, 1, 2):
                raise self.error(node, f"{name} needs a constant dimension 0, 1 or 2")
            return ir.WorkItem(name, dim, type=T.UINT, uniform=WORK_ITEM[name] == "uniform",
                               wave=WORK_ITEM[name] in ("uniform", "wave"), **pos)
        if name == "get_work_dim":
            if args:
                raise self.error(node, "get_work_dim takes no argument")
            return ir.WorkItem(name, 0, type=T.UINT, uniform=True, **pos)
        if name.startswith(("convert_", "as_")):
            return self.conversion(node, name, args)
        if name in MATH:
            values = [self.expr(a) for a in args]
            result, arg_types = math_result_type(name, [v.type for v in values])
            if result is None:
                raise self.error(node, f"{name} does not accept ({', '.join(map(str, (v.type for v in values)))})")
            values = [self.convert(v, t) for v, t in zip(values, arg_types)]
            return ir.Call(name, values, type=result, **pos)
        if name in ("barrier", "mem_fence", WATCH_CALL):
            raise self.error(node, f"{name} is a statement, not a value")
        if name.startswith(("atomic_", "atom_")):
            return self.atomic(node, name, args)
        width = vector_width(name, "vload")
        if width:
            if len(args) != 2:
                raise self.error(node, f"{name} takes (offset, pointer)")
            info = self.vector_view(node, args[1], width, name)
            return ir.Load(info.name, self.offset(args[0]), type=info.elem, **pos)
        if name.startswith(("vload", "vstore", "read_image", "write_image", "async_work_group")):
            raise self.unsupported(node, f"built-in {name}")
        raise self.unsupported(node, f"call to '{name}' (user functions and unknown built-ins)")

    def atomic(self, node, name, args):
        """``atomic_OP(pointer, value)`` on an int/uint element of a global or local array."""
        op = name.split("_", 1)[1]
        if op not in ATOMIC_OPS:
            raise self.unsupported(node, f"atomic operation {name}")
        arity = 1 if op in ("inc", "dec") else 2
        if len(args) != arity:
            raise self.error(node, f"{name} takes {arity} argument{'s' if arity > 1 else ''}")
        info, index = self.atomic_target(node, args[0], name)
        value = self.convert(self.expr(args[1]), info.elem) if arity == 2 else None
        return ir.Atomic(op, info.name, index, value, type=info.elem, **self.pos(node))

    def atomic_target(self, node, pointer, name):
        """(ArrayInfo, index) of ``&a[i]``, ``a + i`` or ``a``."""
        if isinstance(pointer, c_ast.UnaryOp) and pointer.op == "&" and isinstance(pointer.expr, c_ast.ArrayRef):
            info, index = self.element(pointer.expr)
        elif isinstance(pointer, c_ast.BinaryOp) and pointer.op == "+":
            base, offset = pointer.left, pointer.right
            if not (isinstance(base, c_ast.ID) and isinstance(self.resolve(base, base.name), ir.ArrayInfo)):
                base, offset = offset, base
            if not isinstance(base, c_ast.ID) or not isinstance(self.resolve(base, base.name), ir.ArrayInfo):
                raise self.error(node, f"{name} needs &array[index], array + index or array")
            info, index = self.resolve(base, base.name), self.offset(offset)
        elif isinstance(pointer, c_ast.ID) and isinstance(self.resolve(pointer, pointer.name), ir.ArrayInfo):
            info = self.resolve(pointer, pointer.name)
            index = ir.Const(T.INT.dtype.type(0), type=T.INT, uniform=True, **self.pos(pointer))
        else:
            raise self.error(node, f"{name} needs &array[index], array + index or array")
        if info.elem not in (T.INT, T.UINT) or info.space not in ("global", "local"):
            raise self.error(node, f"{name} works on global or local int/uint, not {info.space} {info.elem}")
        return info, index

    def conversion(self, node, name, args):
        if len(args) != 1:
            raise self.error(node, f"{name} takes one argument")
        head = name.split("_")
        ty = T.lookup([head[1]]) if len(head) > 1 else None
        if ty is None or ty is T.VOID:
            raise self.error(node, f"unknown conversion {name}")
        value = self.expr(args[0])
        if value.type.width != ty.width:
            raise self.error(node, f"{name} needs a {ty.width}-wide argument, not {value.type}")
        if name.startswith("as_"):
            if value.type.size != ty.size:
                raise self.error(node, f"{name} needs an argument of the same size, not {value.type}")
            return ir.Call("as", [value], type=ty, **self.pos(node))
        if len(head) > 2:
            return ir.Call("convert_" + "_".join(head[2:]), [value], type=ty, **self.pos(node))
        return self.convert(value, ty)


def vector_width(name, prefix):
    """N for ``vloadN``/``vstoreN`` (N in 2, 3, 4, 8, 16), else 0."""
    if name.startswith(prefix) and name[len(prefix):] in ("2", "3", "4", "8", "16"):
        return int(name[len(prefix):])
    return 0


def _constant(lowering, node):
    text = node.value
    pos = lowering.pos(node)
    if node.type == "char":
        body = text[1:-1]
        value = ord(body.encode().decode("unicode_escape")) if body else 0
        return ir.Const(T.CHAR.dtype.type(value), type=T.CHAR, uniform=True, **pos)
    if node.type in ("string",):
        raise lowering.unsupported(node, "string literals")
    lower = text.lower()
    if node.type in ("float", "double", "long double") or (
            ("." in lower or "e" in lower) and not lower.startswith("0x")):
        value = float(lower.rstrip("fl") if not lower.startswith("0x") else float.fromhex(lower))
        return ir.Const(T.FLOAT.dtype.type(value), type=T.FLOAT, uniform=True, **pos)
    digits = lower.rstrip("ul")
    suffix = lower[len(digits):]
    if digits.startswith("0x"):
        value = int(digits, 16)
    elif digits.startswith("0b"):
        value = int(digits, 2)
    elif digits.startswith("0") and len(digits) > 1:
        value = int(digits, 8)
    else:
        value = int(digits)
    unsigned = "u" in suffix
    is_long = "l" in suffix
    if is_long or value > 0xFFFFFFFF:
        ty = T.ULONG if unsigned else T.LONG
    elif unsigned or value > 0x7FFFFFFF:
        ty = T.UINT
    else:
        ty = T.INT
    return ir.Const(ty.dtype.type(value), type=ty, uniform=True, **pos)


def fold_constant(expr):
    """The integer value of a constant expression (sizes, dimensions, flags) or None."""
    if isinstance(expr, ir.Const) and not expr.type.is_float and expr.type.width == 1:
        return int(expr.value)
    if isinstance(expr, ir.Cast):
        return fold_constant(expr.a)
    if isinstance(expr, ir.Binary):
        a, b = fold_constant(expr.a), fold_constant(expr.b)
        if a is None or b is None:
            return None
        ops = {"+": lambda: a + b, "-": lambda: a - b, "*": lambda: a * b,
               "/": lambda: int(a / b) if b else None, "%": lambda: a % b if b else None,
               "<<": lambda: a << b, ">>": lambda: a >> b, "&": lambda: a & b,
               "|": lambda: a | b, "^": lambda: a ^ b}
        return ops[expr.op]() if expr.op in ops else None
    return None
