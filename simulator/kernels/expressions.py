"""Lowering C expressions to typed IR: names, types, operators, pointers, structs.

``ExpressionLowering`` is the half of the frontend's lowering that handles types and
expressions; ``statements.KernelLowering`` adds statements, scopes and calls on top of
it, ``calls.CallLowering`` the built-in functions. Every expression gets its static type
here, with C's usual arithmetic conversions made explicit as ``ir.Cast`` nodes, so the
executor never has to guess a numpy dtype.

Memory is reached two ways. ``a[i]`` on a named array (a kernel's pointer argument, a
declared array, a ``__constant`` table) with all its subscripts is an ``ir.Load`` of
the array: the common case, recorded under the array's name. Everything else that
denotes memory (``*p``, ``p[i]`` on a pointer variable, ``p->x``, ``buf[i].x``) is
lowered by ``address`` to a pointer *handle* expression (see ``types``) and read with
``ir.PtrLoad``; the executor finds the memory object from the handle, so the access is
recorded under that object's name too.
"""
import math

import numpy as np
from pycparser import c_ast

from . import constants, ir, speculation
from . import types as T
from .builtins import CONSTANTS, NO_DIMENSION, WORK_ITEM
from .diagnostics import KernelError
from .encoding import literal_bytes

ARITH = {"+", "-", "*", "/", "%", "<<", ">>", "&", "|", "^"}
COMPARE = {"<", ">", "<=", ">=", "==", "!="}
SWIZZLE = {"x": 0, "y": 1, "z": 2, "w": 3}
ENUM_TYPES = (T.INT, T.UINT, T.LONG, T.ULONG)


class ExpressionLowering:
    """Types and expressions; needs ``file`` (a ``FileScope``), ``scopes``, ``arrays``,
    ``variables`` and ``names_used`` (see ``statements.KernelLowering``)."""

    # -- locations and names -----------------------------------------------------------
    def error(self, node, reason):
        return self.file.error(node, reason)

    def unsupported(self, node, what):
        return self.file.unsupported(node, what)

    def located(self, expr, reason):
        """A ``KernelError`` at IR node ``expr``, in the file of the C node being lowered."""
        coord = self.file.last_coord
        if not expr.line:
            return self.file.error(None, reason)
        return self.file.error_at(coord.file if coord else None, expr.line, expr.col, reason)

    def pos(self, node):
        coord = getattr(node, "coord", None)
        return {"line": coord.line if coord else 0, "col": (coord.column or 1) if coord else 0}

    def const(self, value, ty, node):
        return ir.Const(ty.dtype.type(value), type=ty, uniform=True, **self.pos(node))

    def declare(self, node, name, entry):
        if name in self.scopes[-1]:
            raise self.error(node, f"'{name}' is already declared in this scope")
        self.scopes[-1][name] = entry

    def resolve(self, node, name):
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        if name in self.file.tables:
            info = self.file.tables[name]
            self.arrays.setdefault(info.name, info)
            return info
        if name in self.file.constants:
            return ("const", self.file.constants[name])
        return None

    def unique(self, name):
        count = self.names_used.get(name, 0)
        self.names_used[name] = count + 1
        return name if count == 0 else f"{name}#{count}"

    # -- types -------------------------------------------------------------------------
    def type_of(self, node, type_node):
        """The type of a declaration or type name without its declarator's arrays."""
        return self.declared_type(node, type_node)

    def declared_type(self, node, type_node):
        """Our type for a pycparser type tree (TypeDecl, PtrDecl, Typename, Struct...)."""
        if isinstance(type_node, (c_ast.Typename, c_ast.Decl, c_ast.Typedef)):
            return self.declared_type(node, type_node.type)
        if isinstance(type_node, c_ast.TypeDecl):
            return self.declared_type(node, type_node.type)
        if isinstance(type_node, c_ast.PtrDecl):
            inner = type_node.type
            if isinstance(inner, c_ast.FuncDecl):
                raise self.unsupported(node, "function pointers")
            elem = self.declared_type(node, inner)
            space = _space(inner) or "private"
            return T.Pointer(space, elem)
        if isinstance(type_node, c_ast.ArrayDecl):
            if type_node.dim is None:
                elem = self.declared_type(node, type_node.type)
                return T.Pointer(_space(type_node.type) or "private", elem)
            return T.ArrayType(self.declared_type(node, type_node.type), self.array_extent(type_node.dim))
        if isinstance(type_node, (c_ast.Struct, c_ast.Union)):
            return self.struct_type(node, type_node)
        if isinstance(type_node, c_ast.Enum):
            return self.enum_type(type_node)
        if isinstance(type_node, c_ast.IdentifierType):
            return self.named_type(node, type_node.names)
        if isinstance(type_node, c_ast.FuncDecl):
            raise self.unsupported(node, "function declarations here")
        raise self.unsupported(node, f"type {type(type_node).__name__}")

    def named_type(self, node, names):
        if len(names) == 1 and names[0] in self.file.typedefs:
            return self.file.typedefs[names[0]]
        found = T.lookup(names)
        if found is not None:
            return found
        text = " ".join(names)
        if text in T.UNSUPPORTED_TYPES or text in ("half",):
            raise self.unsupported(node, f"type {text}")
        raise self.error(node, f"unknown type name '{text}'")

    def struct_type(self, node, spec):
        kind = "union" if isinstance(spec, c_ast.Union) else "struct"
        key = f"{kind} {spec.name}" if spec.name else None
        if spec.decls is None:
            if key in self.file.tags:
                return self.file.tags[key]
            raise self.error(node, f"unknown type '{key}' (not defined before its use)")
        members = []
        for decl in spec.decls:
            if decl.bitsize is not None:
                raise self.unsupported(decl, "bit-fields")
            if decl.name is None:
                raise self.unsupported(decl, "anonymous struct members")
            members.append((decl.name, self.declared_type(decl, decl.type)))
        name = spec.name or f"<anonymous at line {spec.coord.line if spec.coord else 0}>"
        ty = T.union_layout(name, members) if kind == "union" else T.layout(name, members)
        if key is not None:
            self.file.tags[key] = ty
        return ty

    def enum_type(self, spec):
        """An enumeration's constants, each an ``int`` where it fits and else the first of
        ``uint``, ``long``, ``ulong`` that holds it (as Clang reads a value past INT_MAX,
        such as MWC64X's ``MWC64X_A = 4294883355U``); the type is ``int``."""
        if spec.values is not None:
            value = -1
            for enumerator in spec.values.enumerators:
                value = self.const_int(enumerator.value) if enumerator.value is not None else value + 1
                ty = next((t for t in ENUM_TYPES if _fits(value, t)), None)
                if ty is None:
                    raise self.error(enumerator, f"enumerator value {value} fits no integer type")
                self.file.constants[enumerator.name] = self.const(value, ty, enumerator)
        return T.INT

    # -- conversions -------------------------------------------------------------------
    def convert(self, value, ty):
        if type(value) is ir.Const and getattr(value, "exact", None) is not None and \
                isinstance(ty, (T.Scalar, T.Vector)) and ty is not T.VOID:
            return self.convert_literal(value, ty)
        if value.type == ty:
            return value
        if value.type is T.VOID:
            raise KernelError(self.file.path, value.line, value.col,
                              "a void function's result used as a value")
        if isinstance(ty, T.Pointer) or isinstance(value.type, T.Pointer):
            return self.pointer_convert(value, ty)
        if T.SAMPLER in (ty, value.type) and not (ty.is_float or value.type.is_float) and \
                ty.width == value.type.width == 1 and not isinstance(ty, T.Struct) and \
                not isinstance(value.type, T.Struct) and not T.is_image(ty) and not T.is_image(value.type):
            return ir.Cast(value, type=ty, line=value.line, col=value.col, uniform=value.uniform)
        if isinstance(ty, (T.Struct, T.Opaque)) or isinstance(value.type, (T.Struct, T.Opaque)):
            raise KernelError(self.file.path, value.line, value.col, f"cannot convert {value.type} to {ty}")
        if value.type.width != 1 and value.type.width != ty.width:
            raise KernelError(self.file.path, value.line, value.col, f"cannot convert {value.type} to {ty}")
        return ir.Cast(value, type=ty, line=value.line, col=value.col, uniform=value.uniform)

    def convert_literal(self, value, ty):
        """An unsuffixed floating literal converted to ``ty``: from its exact (double) value,
        once, when compiled; the result is a value of ``ty`` (``(float)0.1`` beside a double
        is the float nearest 0.1, as in C)."""
        double = ir.Const(np.float64(value.exact), type=T.DOUBLE, uniform=True, line=value.line,
                          col=value.col)
        if ty == T.DOUBLE:
            return double
        scalar = ir.Cast(double, type=ty.base, line=value.line, col=value.col, uniform=True)
        converted = ir.Const(self.fold(scalar), type=ty.base, uniform=True, line=value.line,
                             col=value.col)
        if ty.width > 1:
            return ir.Cast(converted, type=ty, line=value.line, col=value.col, uniform=True)
        return converted

    def pointer_convert(self, value, ty):
        where = (self.file.path, value.line, value.col)
        if isinstance(ty, T.Pointer) and isinstance(value.type, T.Pointer):
            return ir.Cast(value, type=ty, line=value.line, col=value.col, uniform=value.uniform)
        if isinstance(ty, T.Pointer) and type(value) is ir.Const and not value.type.is_float \
                and int(value.value) == 0:
            return ir.Const(T.HANDLE_DTYPE.type(0), type=ty, uniform=True, line=value.line, col=value.col)
        if isinstance(ty, T.Pointer):
            raise KernelError(*where, f"cannot convert {value.type} to a pointer")
        raise KernelError(*where, f"cannot convert a pointer to {ty} (cast it, or compare it with 0)")

    def truth(self, value):
        """A pointer as a truth value (``if (p)``, ``p && q``): whether it is not null."""
        if not isinstance(value.type, T.Pointer):
            return value
        return ir.Binary("!=", value, self.const(0, value.type, None), type=T.INT,
                         line=value.line, col=value.col)

    def condition(self, node):
        cond = self.expr(node)
        if isinstance(cond.type, T.Pointer):
            return self.truth(cond)
        if cond.type.width != 1 or isinstance(cond.type, (T.Struct, T.Opaque)):
            raise self.error(node, f"a condition must be a scalar, not {cond.type}")
        return cond

    def offset(self, node):
        value = self.expr(node)
        if value.type.is_float or value.type.width != 1 or isinstance(value.type, (T.Pointer, T.Struct)):
            raise self.error(node, f"an offset must be an integer scalar, not {value.type}")
        return self.convert(value, T.INT if value.type.rank <= T.INT.rank else value.type)

    def fold(self, value):
        """The value of lowered expression ``value`` if it is a constant expression (see
        ``constants``), else None."""
        return constants.evaluate(value, self.located)

    def integer_constant(self, node):
        """The value of ``node`` if it is an integer constant expression, else None."""
        return constants.integer(self.expr(node), self.located)

    def const_int(self, node):
        folded = self.integer_constant(node)
        if folded is None:
            raise self.error(node, "an integer constant is needed here")
        return folded

    def array_extent(self, node):
        """The number of elements an array declarator's size ``node`` gives: C needs a
        positive integer constant."""
        extent = self.const_int(node)
        if extent <= 0:
            raise self.error(node, f"the size of an array must be positive, not {extent}")
        return extent

    # -- expressions -------------------------------------------------------------------
    def expr(self, node):
        if getattr(node, "coord", None) is not None:
            self.file.last_coord = node.coord   # for the few nodes pycparser leaves unlocated
        method = getattr(self, "expr_" + type(node).__name__, None)
        if method is None:
            names = {"CompoundLiteral": "compound literals", "InitList": "initializer lists here"}
            raise self.unsupported(node, names.get(type(node).__name__,
                                                   f"expression {type(node).__name__}"))
        return method(node)

    def expr_Constant(self, node):
        return _constant(self, node)

    def expr_ID(self, node):
        entry = self.resolve(node, node.name)
        pos = self.pos(node)
        if entry is None:
            if node.name in CONSTANTS:
                ty, value = CONSTANTS[node.name]
                return ir.Const(ty.dtype.type(value), type=ty, uniform=True, **pos)
            if any(e.name == node.name for e in self.pre.emits):
                raise self.error(node, f"@emit value '{node.name}' can only be assigned")
            if node.name in self.file.functions:
                raise self.unsupported(node, f"function '{node.name}' used as a value (function pointers)")
            raise self.error(node, f"'{node.name}' is not declared")
        if isinstance(entry, ir.ArrayInfo):
            if entry.space == "image":
                raise self.error(node, f"image '{node.name}' can only be passed to image built-ins")
            if entry.length == 1 and entry.dims == ("scalar",):
                return ir.Load(entry.name, self.const(0, T.INT, node), type=entry.elem, **pos)
            return ir.AddrOf(entry.name, type=T.Pointer(entry.space, entry.elem), uniform=True, **pos)
        if entry[0] == "const":
            return entry[1]
        _, name, ty = entry
        return ir.Var(name, type=ty, **pos)

    def expr_BinaryOp(self, node):
        a = self.expr(node.left)
        b = self.expr(node.right)
        return self.binary(node, node.op, a, b)

    def binary(self, node, op, a, b):
        pos = self.pos(node)
        if isinstance(a.type, T.Pointer) or isinstance(b.type, T.Pointer):
            return self.pointer_binary(node, op, a, b)
        for side in (a, b):
            if isinstance(side.type, (T.Struct, T.Opaque)):
                raise self.error(node, f"operator '{op}' cannot take a {side.type}")
        if op in ("&&", "||"):
            for side in (a, b):
                if side.type.width != 1:
                    raise self.error(node, f"'{op}' needs scalar operands")
            return ir.Logical(op, a, b, speculation.logical(b), type=T.INT, **pos)
        if op not in ARITH and op not in COMPARE:
            raise self.unsupported(node, f"operator {op}")
        if a.type.width != 1 and b.type.width != 1 and a.type.width != b.type.width:
            raise self.error(node, f"operands of '{op}' have different widths ({a.type}, {b.type})")
        if op in ("%", "<<", ">>", "&", "|", "^") and (a.type.is_float or b.type.is_float):
            raise self.error(node, f"operator '{op}' needs integer operands, not {a.type} and {b.type}")
        if op in ("<<", ">>"):
            # Each operand is promoted on its own (a vector is not): the result has the
            # left operand's type, and a vector's count is masked to its component's bits.
            ty = T.promote(a.type, T.INT)
            a = self.convert(a, ty)
            b = self.convert(b, ty if b.type.width != 1 else T.promote(b.type, T.INT))
        else:
            ty = self.common_type(node, op, a, b)
            a, b = self.convert(a, ty), self.convert(b, ty)
        result = ty
        if op in COMPARE:
            result = T.INT if ty.width == 1 else T.Vector(_signed_of(ty.base), ty.width)
        return ir.Binary(op, a, b, type=result, **pos)

    def common_type(self, node, op, a, b):
        """The type operands ``a`` and ``b`` of ``op`` are converted to (OpenCL C 6.2.6); an
        error where a vector cannot combine with the other operand."""
        ty_a, ty_b = _operand_types(a, b)
        problem = T.vector_operand_error(ty_a, ty_b)
        if problem is not None:
            raise self.error(node, f"operator '{op}': {problem} (OpenCL C 6.2.6)")
        return T.promote(ty_a, ty_b)

    def pointer_binary(self, node, op, a, b):
        pos = self.pos(node)
        pa, pb = isinstance(a.type, T.Pointer), isinstance(b.type, T.Pointer)
        if op in COMPARE or op in ("&&", "||"):
            if op in ("&&", "||"):
                b = self.truth(b)
                return ir.Logical(op, self.truth(a), b, speculation.logical(b), type=T.INT, **pos)
            a = a if pa else self.convert(a, b.type)
            b = b if pb else self.convert(b, a.type)
            return ir.Binary(op, a, b, type=T.INT, **pos)
        if op == "-" and pa and pb:
            size = T.storage_size(a.type.elem)
            diff = ir.Binary("-", a, b, type=T.LONG, **pos)
            return ir.Binary("/", diff, self.const(size, T.LONG, node), type=T.LONG, **pos)
        if op == "+" and pb and not pa:
            a, b = b, a
        elif op not in ("+", "-") or pb:
            raise self.error(node, f"operator '{op}' cannot take a pointer here")
        return self.advance(node, a, b, -1 if op == "-" else 1)

    def advance(self, node, pointer, count, sign=1, scale=None):
        """``pointer + sign * count`` elements (bytes when ``scale`` is given)."""
        if count.type.is_float or count.type.width != 1 or isinstance(count.type, T.Pointer):
            raise self.error(node, f"a pointer offset must be an integer, not {count.type}")
        size = T.storage_size(pointer.type.elem) if scale is None else scale
        step = self.convert(count, T.LONG)
        if size != 1:
            step = ir.Binary("*", step, self.const(size, T.LONG, node), type=T.LONG, **self.pos(node))
        return ir.Binary("+" if sign > 0 else "-", pointer, step, type=pointer.type, **self.pos(node))

    def expr_UnaryOp(self, node):
        op = node.op
        if op in ("p++", "++", "p--", "--"):
            return self.increment_value(node)
        if op in ("sizeof", "vec_step"):
            target = node.expr
            typename = isinstance(target, c_ast.Typename)
            ty = self.type_of(node, target) if typename else self.lvalue_type(target)
            if op == "sizeof":
                return self.const(T.storage_size(ty), T.UINT, node)
            # OpenCL C 6.13.12: the components of a vector (a 3-component one counts as 4),
            # 1 for a scalar; the argument is not evaluated.
            if not isinstance(ty, (T.Scalar, T.Vector)) or ty is T.VOID:
                raise self.error(node, f"vec_step takes a scalar or vector type, not {ty}")
            return self.const(4 if ty.width == 3 else ty.width, T.INT, node)
        if op == "&":
            return self.address_of(node)
        if op == "*":
            pointer = self.expr(node.expr)
            if not isinstance(pointer.type, T.Pointer):
                raise self.error(node, f"'*' needs a pointer, not {pointer.type}")
            return self.load(node, pointer)
        a = self.expr(node.expr)
        pos = self.pos(node)
        if isinstance(a.type, T.Pointer) and op == "!":
            return ir.Binary("==", a, self.const(0, a.type, node), type=T.INT, **pos)
        if isinstance(a.type, (T.Struct, T.Opaque, T.Pointer)):
            raise self.error(node, f"unary '{op}' cannot take a {a.type}")
        if op == "+":   # the integer promotions, and nothing else
            ty = T.promote(a.type, T.INT)
            return a if a.type == ty else self.convert(a, ty)
        if op == "-" and type(a) is ir.Const and getattr(a, "exact", None) is not None:
            negated = ir.Const(-a.value, type=a.type, uniform=True, **pos)
            negated.exact = -a.exact   # -0.3 keeps its exact value, as 0.3 does
            return negated
        if op == "!":
            width = a.type.width
            ty = T.INT if width == 1 else T.Vector(_signed_of(a.type.base), width)
            return ir.Unary("!", a, type=ty, **pos)
        if op == "~" and a.type.is_float:
            raise self.error(node, "'~' needs an integer operand")
        ty = T.promote(a.type, T.INT)   # a scalar is promoted, a vector keeps its type
        return ir.Unary(op, self.convert(a, ty), type=ty, **pos)

    def expr_TernaryOp(self, node):
        cond = self.expr(node.cond)
        a, b = self.expr(node.iftrue), self.expr(node.iffalse)
        if cond.type.width > 1 and not isinstance(cond.type, (T.Pointer, T.Struct)):
            ty = self.common_type(node, "?:", a, b)
            if ty.width != cond.type.width:
                ty = T.Vector(ty.base, cond.type.width)
            return self.call_math(node, "select", [self.convert(b, ty), self.convert(a, ty), cond])
        cond = self.condition(node.cond)
        if a.type == b.type or isinstance(a.type, T.Pointer):
            ty = a.type
        elif isinstance(b.type, T.Pointer):
            ty = b.type
        else:
            ty = self.common_type(node, "?:", a, b)
        a, b = self.convert(a, ty), self.convert(b, ty)
        return ir.Select(cond, a, b, speculation.select(a, b), type=ty, **self.pos(node))

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
        if ty is T.VOID:
            return value
        if isinstance(ty, T.Pointer) and not isinstance(value.type, T.Pointer):
            if type(value) is ir.Const and int(value.value) == 0:
                return self.pointer_convert(value, ty)
            raise self.unsupported(node, "casting an integer to a pointer")
        if isinstance(value.type, T.Pointer) and not isinstance(ty, T.Pointer):
            raise self.unsupported(node, "casting a pointer to an integer")
        if value.type.width != 1 and value.type.width != ty.width:
            raise self.error(node, f"cannot cast {value.type} to {ty}")
        return self.convert(value, ty)

    def expr_ExprList(self, node):
        """The comma operator: every expression runs, the last one is the value."""
        *effects, last = node.exprs
        body = [self.effect(e) for e in effects]
        value = self.expr(last)
        return ir.StmtExpr(ir.Block(body, **self.pos(node)), value, False, type=value.type,
                           **self.pos(node))

    def expr_Assignment(self, node):
        """An assignment used as a value (``a = b = 0``, ``while ((x = f()) > 0)``)."""
        store = self.stmt_Assignment(node)
        value = self.expr(node.lvalue)
        return ir.StmtExpr(ir.Block([store], **self.pos(node)), value, False, type=value.type,
                           **self.pos(node))

    def saved(self, value, node):
        """(the statement that saves ``value`` in a new temporary, the temporary): for a value
        read after what would change it, or read twice but computed once."""
        temp = self.unique("tmp")
        self.variables[temp] = value.type
        return (ir.Assign(temp, value, None, **self.pos(node)),
                ir.Var(temp, type=value.type, **self.pos(node)))

    def increment_value(self, node):
        """``i++`` / ``++i`` inside an expression: the update runs, the old or new value is the result."""
        update = self.stmt_UnaryOp(node)
        if node.op.startswith("p"):
            save, old = self.saved(self.expr(node.expr), node)
            return ir.StmtExpr(ir.Block([save, update], **self.pos(node)), old, False,
                               type=old.type, **self.pos(node))
        value = self.expr(node.expr)
        return ir.StmtExpr(ir.Block([update], **self.pos(node)), value, False, type=value.type,
                           **self.pos(node))

    # -- vectors and structs -------------------------------------------------------------
    def expr_StructRef(self, node):
        if node.type == ".":
            base_type = self.lvalue_type(node.name)
            if not isinstance(base_type, T.Struct):
                base = self.expr(node.name)
                return self.swizzle(node, base)
        address = self.address(node)
        if address is not None:
            pointer, ty = address
            if isinstance(ty, T.ArrayType):
                return _retyped(pointer, T.Pointer(pointer.type.space, ty.elem))
            return self.load(node, pointer)
        base = self.expr(node.name)
        field = base.type.field(node.field.name)
        if field is None:
            raise self.error(node, f"{base.type} has no member '{node.field.name}'")
        if isinstance(field[0], T.ArrayType):
            raise self.unsupported(node, "array members of struct values in private variables")
        return ir.Member(base, node.field.name, type=field[0], **self.pos(node))

    def swizzle(self, node, base):
        comps = self.swizzle_comps(node, base.type)
        if comps is None or base.type.width == 1:
            raise self.error(node, f"'{node.field.name}' is not a component of {base.type}")
        if max(comps) >= base.type.width:
            raise self.error(node, f"component .{node.field.name} is out of range for {base.type}")
        ty = base.type.base if len(comps) == 1 else T.Vector(base.type.base, len(comps))
        return ir.Swizzle(base, comps, type=ty, **self.pos(node))

    def swizzle_comps(self, node, ty=None):
        name = node.field.name
        width = ty.width if ty is not None else 0
        if name in ("lo", "hi", "even", "odd"):
            if width < 2:
                return None
            half = (width + 1) // 2
            return {"lo": list(range(half)), "hi": list(range(half, width)) if width != 3 else [2, 3],
                    "even": list(range(0, width, 2)), "odd": list(range(1, width, 2))}[name]
        if name[0] in "sS" and len(name) > 1 and all(c in "0123456789abcdefABCDEF" for c in name[1:]):
            return [int(c, 16) for c in name[1:]]
        if all(c in SWIZZLE for c in name):
            return [SWIZZLE[c] for c in name]
        if all(c in "rgba" for c in name):
            return ["rgba".index(c) for c in name]
        return None

    def lvalue_type(self, node):
        """The static type of the object ``node`` designates, as ``sizeof`` sees it: an array
        keeps its array type (only its value decays to a pointer), a pointer parameter is a
        pointer. The IR lowered on the way is dropped: the operand is not evaluated."""
        if isinstance(node, c_ast.ID):
            entry = self.resolve(node, node.name)
            if isinstance(entry, tuple) and entry[0] == "var":
                return entry[2]
            if isinstance(entry, ir.ArrayInfo) and entry.dims == ("scalar",):
                return entry.elem
            if isinstance(entry, ir.ArrayInfo) and not entry.is_param and entry.space != "image":
                return T.ArrayType(entry.elem, entry.length)
        addressable = isinstance(node, (c_ast.ArrayRef, c_ast.StructRef, c_ast.UnaryOp))
        address = self.address(node) if addressable else None
        if address is not None:
            return address[1]
        if isinstance(node, c_ast.StructRef) and node.type == ".":
            struct = self.lvalue_type(node.name)   # a member of a private struct variable
            field = struct.field(node.field.name) if isinstance(struct, T.Struct) else None
            if field is not None:
                return field[0]
        return self.expr(node).type

    # -- memory ----------------------------------------------------------------------------
    def element(self, node):
        """(ArrayInfo, flat int index) of ``a[i]`` or ``a[i][j]`` on a named array, or None."""
        found = self._subscripted(node)
        if found is None:
            return None
        info, subscripts, dims = found
        if len(subscripts) < len(dims):
            return None   # a row of a multi-dimensional array: a pointer (``row``)
        return info, self._flat_index(subscripts, dims)

    def row(self, node):
        """(ArrayInfo, flat index of its first element, its length) of a row ``a[i]`` of a
        multi-dimensional named array (``a[i][j]`` of a three-dimensional one...), which
        decays to a pointer to that first element; else None."""
        found = self._subscripted(node)
        if found is None or len(found[1]) >= len(found[2]):
            return None
        info, subscripts, dims = found
        length = math.prod(dims[len(subscripts):])
        # a[i] of a[N][M] starts where a[i][0] does: index (i, 0...) in the full shape.
        zeros = [c_ast.Constant("int", "0", node.coord)] * (len(dims) - len(subscripts))
        return info, self._flat_index(subscripts + zeros, dims), length

    def _subscripted(self, node):
        """(ArrayInfo, subscript nodes outermost first, dims) of subscripts on a named
        array, or None for anything else."""
        subscripts = []
        root = node
        while isinstance(root, c_ast.ArrayRef):
            subscripts.append(root.subscript)
            root = root.name
        subscripts.reverse()
        if not isinstance(root, c_ast.ID):
            return None
        info = self.resolve(root, root.name)
        if not isinstance(info, ir.ArrayInfo) or info.dims == ("scalar",) or info.space == "image":
            if info is None and not any(e.name == root.name for e in self.pre.emits):
                raise self.error(root, f"'{root.name}' is not declared")
            return None
        dims = info.dims or (None,)
        if len(subscripts) > len(dims):
            raise self.error(node, f"'{root.name}' needs {len(dims)} subscript(s), got {len(subscripts)}")
        return info, subscripts, dims

    def _flat_index(self, subscripts, dims):
        """The flat int index of one subscript per dimension of ``dims``."""
        index = None
        for i, sub in enumerate(subscripts):
            value = self.expr(sub)
            if value.type.is_float or value.type.width != 1 or isinstance(value.type, (T.Pointer, T.Struct)):
                raise self.error(sub, f"an index must be an integer scalar, not {value.type}")
            value = self.convert(value, T.INT if value.type.rank <= T.INT.rank else value.type)
            if index is None:
                index = value
            else:
                scale = self.const(dims[i], T.INT, sub)
                index = self.binary(sub, "+", self.binary(sub, "*", index, scale), value)
        return index

    def address(self, node):
        """(pointer handle expression, type of the object) of a memory lvalue, else None."""
        if isinstance(node, c_ast.ID):
            entry = self.resolve(node, node.name)
            if isinstance(entry, ir.ArrayInfo) and entry.space != "image":
                pointer = ir.AddrOf(entry.name, type=T.Pointer(entry.space, entry.elem), uniform=True,
                                    **self.pos(node))
                if entry.dims == ("scalar",):
                    return pointer, entry.elem
                return pointer, T.ArrayType(entry.elem, entry.length)
            return None
        if isinstance(node, c_ast.ArrayRef):
            named = self.element(node) or self.row(node)
            if named is not None:
                info, index = named[:2]
                base = ir.AddrOf(info.name, type=T.Pointer(info.space, info.elem), uniform=True,
                                 **self.pos(node))
                ty = info.elem if len(named) == 2 else T.ArrayType(info.elem, named[2])
                return self.advance(node, base, index), ty
            nested = isinstance(node.name, (c_ast.StructRef, c_ast.ArrayRef))
            inner = self.address(node.name) if nested else None
            if inner is not None and isinstance(inner[1], T.ArrayType):
                pointer = _retyped(inner[0], T.Pointer(inner[0].type.space, inner[1].elem))
            else:
                pointer = self.expr(node.name)
            if not isinstance(pointer.type, T.Pointer):
                raise self.error(node, f"subscripted value is a {pointer.type}, not an array or pointer")
            return self.advance(node, pointer, self.expr(node.subscript)), pointer.type.elem
        if isinstance(node, c_ast.UnaryOp) and node.op == "*":
            pointer = self.expr(node.expr)
            if not isinstance(pointer.type, T.Pointer):
                raise self.error(node, f"'*' needs a pointer, not {pointer.type}")
            return pointer, pointer.type.elem
        if isinstance(node, c_ast.StructRef):
            if node.type == "->":
                pointer = self.expr(node.name)
                if not isinstance(pointer.type, T.Pointer) or not isinstance(pointer.type.elem, T.Struct):
                    raise self.error(node, f"'->' needs a pointer to a struct, not {pointer.type}")
                struct, space = pointer.type.elem, pointer.type.space
            else:
                inner = self.address(node.name)
                if inner is None or not isinstance(inner[1], T.Struct):
                    return None
                pointer, struct = inner
                space = pointer.type.space
            field = struct.field(node.field.name)
            if field is None:
                raise self.error(node, f"{struct} has no member '{node.field.name}'")
            ty, offset = field
            moved = (self.advance(node, pointer, self.const(offset, T.LONG, node), scale=1)
                     if offset else pointer)
            return _retyped(moved, T.Pointer(space, ty.elem if isinstance(ty, T.ArrayType) else ty)), ty
        if isinstance(node, c_ast.Cast):
            return None
        return None

    def address_of(self, node):
        target = node.expr
        found = self.address(target)
        if found is None:
            if isinstance(target, c_ast.ID):
                raise self.error(node, f"cannot take the address of '{target.name}' here")
            raise self.unsupported(node, "taking the address of this kind of expression")
        pointer, ty = found
        if isinstance(ty, T.ArrayType):
            return pointer
        return _retyped(pointer, T.Pointer(pointer.type.space, ty))

    def load(self, node, pointer):
        ty = pointer.type.elem
        if ty is T.VOID:
            raise self.error(node, "cannot read through a void pointer")
        if isinstance(ty, T.ArrayType):
            return _retyped(pointer, T.Pointer(pointer.type.space, ty.elem))
        return ir.PtrLoad(pointer, type=ty, **self.pos(node))

    def expr_ArrayRef(self, node):
        named = self.element(node)
        if named is not None:
            info, index = named
            return ir.Load(info.name, index, type=info.elem, **self.pos(node))
        pointer, ty = self.address(node)
        if isinstance(ty, T.ArrayType):
            return _retyped(pointer, T.Pointer(pointer.type.space, ty.elem))
        return self.load(node, _retyped(pointer, T.Pointer(pointer.type.space, ty)))

    def work_item(self, node, name, args):
        pos = self.pos(node)
        if name in NO_DIMENSION:
            if args:
                raise self.error(node, f"{name} takes no argument")
            return ir.WorkItem(name, 0, type=T.UINT, uniform=WORK_ITEM[name] == "uniform",
                               wave=WORK_ITEM[name] != "lane", **pos)
        if len(args) != 1:
            raise self.error(node, f"{name} takes one argument (the dimension)")
        dim = self.integer_constant(args[0])
        if dim is None:
            raise self.unsupported(node, f"{name} with a dimension that is not a constant")
        if dim not in (0, 1, 2):
            return self.const(1 if name in ("get_global_size", "get_local_size", "get_num_groups")
                              else 0, T.UINT, node)
        return ir.WorkItem(name, dim, type=T.UINT, uniform=WORK_ITEM[name] == "uniform",
                           wave=WORK_ITEM[name] in ("uniform", "wave"), **pos)


def _retyped(expr, ty):
    """``expr`` with static type ``ty`` (a pointer handle reinterpreted: no instruction)."""
    if expr.type == ty:
        return expr
    return ir.Cast(expr, type=ty, line=expr.line, col=expr.col, uniform=expr.uniform)


def _space(type_node):
    """The address space written in a declaration's qualifiers (None when absent)."""
    while type_node is not None:
        for qual in getattr(type_node, "quals", None) or []:
            if qual in ("global", "local", "constant", "private"):
                return qual
        if isinstance(type_node, (c_ast.PtrDecl, c_ast.FuncDecl)):
            return None
        type_node = getattr(type_node, "type", None)
        if not isinstance(type_node, (c_ast.TypeDecl, c_ast.ArrayDecl)):
            return None
    return None


def _signed_of(base):
    """The signed integer type of ``base``'s size (vector comparisons give -1/0 in it)."""
    return {1: T.CHAR, 2: T.SHORT, 4: T.INT, 8: T.LONG}.get(base.size, T.INT)


def _operand_types(a, b):
    """The types the usual arithmetic conversions see for operands ``a`` and ``b``: their
    own, except that an unsuffixed floating literal takes the type of a floating operand
    beside it (as compiled with -cl-single-precision-constant)."""
    if getattr(a, "exact", None) is not None and b.type.is_float:
        return T.with_base(a.type, b.type.base), b.type
    if getattr(b, "exact", None) is not None and a.type.is_float:
        return a.type, T.with_base(b.type, a.type.base)
    return a.type, b.type


def _constant(lowering, node):
    text = node.value
    pos = lowering.pos(node)
    if node.type == "char" or text.startswith(("'", "L'", "u'", "U'")):
        try:
            body = literal_bytes(text)   # a Latin-1 'é' is the char 0xE9, as clang reads it
        except ValueError as exc:
            raise lowering.error(node, str(exc)) from None
        if len(body) > 1:
            raise lowering.unsupported(node, f"multi-character constant {text}")
        # C 6.4.4.4: an int, of the value the character has as a (signed) char.
        value = np.uint8(body[0] if body else 0).view(np.int8)
        return ir.Const(np.int32(value), type=T.INT, uniform=True, **pos)
    if node.type in ("string",):
        raise lowering.unsupported(node, "string literals")
    lower = text.lower()
    is_hex = lower.startswith("0x")
    if node.type in ("float", "double", "long double") or (
            ("." in lower or "e" in lower or (is_hex and "p" in lower))
            and not (is_hex and "p" not in lower)):
        digits = lower.rstrip("flh") if not is_hex else lower.rstrip("fl")
        value = float.fromhex(digits) if is_hex else float(digits)
        suffixed = lower.endswith(("f", "h")) and not (is_hex and not lower.endswith("f"))
        with np.errstate(over="ignore"):   # 1e300 is an infinite float (and a finite double)
            const = ir.Const(T.FLOAT.dtype.type(value), type=T.FLOAT, uniform=True, **pos)
        # An unsuffixed literal is a double in C; it is typed float (see _operand_types)
        # but keeps its exact value for double arithmetic.
        const.exact = None if suffixed else value
        return const
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
    ty = next((t for t in _literal_types(digits, suffix) if _fits(value, t)), None)
    if ty is None:
        raise lowering.error(node, f"integer literal {text} is too large for any integer type")
    return ir.Const(ty.dtype.type(value), type=ty, uniform=True, **pos)


def _literal_types(digits, suffix):
    """The types an integer literal may have, the first that holds its value taken (C99
    6.4.4.1): a decimal one stays signed unless suffixed ``u``, a hexadecimal, octal or
    binary one may become unsigned. Past them all, ``ulong``: as GCC and Clang read
    ``18446744073709551615`` (``integer constant is so large that it is unsigned``)."""
    unsigned, long = "u" in suffix, "l" in suffix
    decimal = not (digits.startswith("0") and len(digits) > 1)
    if unsigned:
        return (T.ULONG,) if long else (T.UINT, T.ULONG)
    if decimal:
        return (T.LONG, T.ULONG) if long else (T.INT, T.LONG, T.ULONG)
    return (T.LONG, T.ULONG) if long else (T.INT, T.UINT, T.LONG, T.ULONG)


def _fits(value, ty):
    """Whether the integer ``value`` is a value of the integer type ``ty``."""
    info = np.iinfo(ty.dtype)
    return info.min <= value <= info.max
