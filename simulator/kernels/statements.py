"""Lowering a kernel's statements, declarations and calls to user functions.

``KernelLowering`` walks one kernel: it resolves names and scopes (each variable gets a
unique name), lowers declarations (private and ``__local`` variables and arrays, with
initializers: ``initializers`` says which subobject each initializer of a braced list
sets, designators included), assignments to every kind of lvalue, ``if``/loops/``switch``,
and builds Klein's semantic model: one ``BranchNode`` per conditional, loop and case label.

A call to one of the program's functions is *inlined*: its body is lowered again at
each call site, in a scope of its own, as an ``ir.StmtExpr`` frame whose ``return``s
end the call for the lanes that take them (so returns under divergence work). A
pointer argument that names an array the callee never reassigns is passed as that
array itself, so its accesses stay ``ir.Load``/``ir.Store`` of the array. A function
that is already being inlined is a recursive call: OpenCL C forbids recursion.

A private variable whose address is taken (``&x``), and a struct or union variable (or
by-value parameter) with an array member, lives in memory: it becomes a one-element
private array, so pointers to it, and subscripts of its array members, work like those
of any array.
"""
import math
from dataclasses import replace

import numpy as np
from pycparser import c_ast

from . import constants, ir, speculation
from . import types as T
from .calls import CallLowering
from .expressions import ARITH, ExpressionLowering, _space
from .initializers import Placement, place


class KernelLowering(CallLowering, ExpressionLowering):
    """Lowers one kernel (see the module docstring); holds the semantic model under construction."""

    def __init__(self, file):
        self.file = file
        self.pre = file.pre
        self.scopes = [{}]
        self.variables = {}
        self.arrays = {}
        self.branch_nodes = []
        self.node_stack = []      # (node id, branch label) of the enclosing conditionals/loops
        self.loop_depth = 0
        self.break_depth = 0      # loops and switches: where 'break' may appear
        self.names_used = {}
        self.addressed = set()    # names whose address the current function takes
        self.reassigned = set()   # names the kernel assigns to (pointer parameters it moves)
        self.call_stack = []      # functions being inlined, innermost last
        self.frame = None         # (result variable, return type) of the function being inlined

    # -- kernel --------------------------------------------------------------------
    def kernel(self, funcdef):
        decl = funcdef.decl
        functype = decl.type
        if self.type_of(decl, functype.type) is not T.VOID:
            raise self.error(decl, "a kernel must return void")
        self.call_stack.append(decl.name)
        self.addressed = _addressed(funcdef.body)
        self.reassigned = _assigned(funcdef.body)
        self.scopes.append({})
        params, moved = [], []
        for param in _params(functype):
            params.append(self.param(param, moved))
        body = self.block(funcdef.body, new_scope=False)
        body.stmts[:0] = moved
        self.scopes.pop()
        return ir.Kernel(decl.name, params, self.arrays, self.variables, body,
                         decl.coord.line if decl.coord else 0, self.branch_nodes)

    def param(self, param, moved):
        """One kernel parameter; a pointer the kernel moves (``p += n``) becomes a pointer
        variable starting at its buffer, and a by-value argument that lives in memory (its
        address is taken, or it is a struct with an array member) is copied there (these
        initialisations are appended to ``moved``)."""
        space = _space(param.type)
        if isinstance(param.type, c_ast.ArrayDecl):
            return self.array_param(param, moved)
        ty = self.type_of(param, param.type)
        if isinstance(ty, T.Pointer):
            if isinstance(param.type, c_ast.PtrDecl):
                space = _space(param.type.type) or "global"
            else:   # a typedef'd pointer type carries its own address space
                space = ty.space if ty.space != "private" else "global"
            if space == "private":
                raise self.error(param, "kernel pointer arguments must be global, constant or local")
            if ty.elem is T.VOID:
                raise self.unsupported(param, "void pointer kernel arguments")
            info = ir.ArrayInfo(param.name, space, ty.elem, is_param=True)
            self.arrays[param.name] = info
            pointer = T.Pointer(space, ty.elem)
            if param.name in self.reassigned:
                name = self.unique(param.name)
                self.variables[name] = pointer
                self.declare(param, param.name, ("var", name, pointer))
                moved.append(ir.Assign(name, ir.AddrOf(param.name, type=pointer, uniform=True,
                                                       **self.pos(param)), None, **self.pos(param)))
            else:
                self.declare(param, param.name, info)
            return param.name, pointer
        if T.is_image(ty):
            info = ir.ArrayInfo(param.name, "image", ty, is_param=True)
            self.arrays[param.name] = info
            self.declare(param, param.name, info)
            return param.name, ty
        if space in ("global", "local", "constant"):
            raise self.error(param, f"a {space} argument must be a pointer")
        name = self.unique(param.name)
        self.variables[name] = ty
        if param.name in self.addressed or _has_array_member(ty):
            # The kernel's copy of the argument lives in memory, as a helper's would.
            moved.append(self.memory_param(param, ty, ir.Var(name, type=ty, **self.pos(param))))
            return name, ty
        self.declare(param, param.name, ("var", name, ty))
        return name, ty

    def array_param(self, param, moved):
        """``__local float tile[16][17]`` as a parameter: a pointer to its rows (C adjusts
        array parameters to pointers), indexed with all its subscripts."""
        dims, inner = self.array_dims(param)
        space = _space(param.type) or "global"
        elem = self.type_of(param, inner)
        info = ir.ArrayInfo(param.name, space, elem, is_param=True, dims=(dims[0] or 0, *dims[1:]))
        self.arrays[param.name] = info
        self.declare(param, param.name, info)
        return param.name, T.Pointer(space, elem)

    # -- statements ----------------------------------------------------------------
    def block(self, compound, new_scope=True):
        if new_scope:
            self.scopes.append({})
        stmts = []
        for item in compound.block_items or []:
            lowered = self.stmt(item)
            if lowered is not None:
                stmts.append(lowered)
        if new_scope:
            self.scopes.pop()
        return ir.Block(stmts, **self.pos(compound))

    def body(self, node):
        """A statement used as a branch or loop body, always as a block with its own scope."""
        if isinstance(node, c_ast.Compound):
            return self.block(node)
        self.scopes.append({})
        stmt = self.stmt(node)
        self.scopes.pop()
        return ir.Block([stmt] if stmt is not None else [], **self.pos(node))

    def stmt(self, node):
        if getattr(node, "coord", None) is not None:
            self.file.last_coord = node.coord
        method = getattr(self, "stmt_" + type(node).__name__, None)
        if method is None:
            if isinstance(node, (c_ast.Case, c_ast.Default)):
                raise self.error(node, "case label outside a switch")
            names = {"Goto": "goto", "Label": "labels"}
            if type(node).__name__ in names:
                raise self.unsupported(node, names[type(node).__name__])
            return self.effect(node)
        return method(node)

    def effect(self, node):
        """An expression evaluated for its effect."""
        if isinstance(node, c_ast.Assignment):
            return self.stmt_Assignment(node)
        if isinstance(node, c_ast.UnaryOp) and node.op in ("p++", "++", "p--", "--"):
            return self.stmt_UnaryOp(node)
        return ir.Eval(self.expr(node), **self.pos(node))

    def stmt_Compound(self, node):
        return self.block(node)

    def stmt_EmptyStatement(self, node):
        return None

    def stmt_Pragma(self, node):
        return None

    def stmt_Typedef(self, node):
        self.file.typedefs[node.name] = self.declared_type(node, node.type)

    def stmt_DeclList(self, node):
        return ir.Block([s for s in (self.stmt(d) for d in node.decls) if s is not None],
                        **self.pos(node))

    def stmt_Decl(self, node):
        if node.name is None:   # a local struct/enum definition
            self.declared_type(node, node.type)
            return None
        if isinstance(node.type, c_ast.FuncDecl):
            return None         # a prototype
        storage = [s for s in node.storage or [] if s not in ("auto", "register")]
        if storage:
            raise self.unsupported(node, f"storage class '{' '.join(storage)}' inside a function")
        space = _space(node.type)
        if isinstance(node.type, c_ast.ArrayDecl):
            return self.array_decl(node, space)
        ty = self.type_of(node, node.type)
        if ty is T.VOID:
            raise self.error(node, "a variable cannot be void")
        if T.is_image(ty):
            # OpenCL C allows images only as function arguments.
            raise self.unsupported(node, f"type {ty} for a variable (images are only parameters)")
        if space in ("global", "constant") and not isinstance(ty, T.Pointer):
            raise self.error(node, f"a {space} variable cannot be declared inside a function")
        if space == "local" or node.name in self.addressed or _has_array_member(ty):
            # A struct with an array member lives in memory, as an array would: its
            # elements are reached by subscripting the member's address.
            return self.memory_variable(node, space or "private", ty)
        name = self.unique(node.name)
        init = self.initial_value(node, ty) if node.init is not None else None
        self.declare(node, node.name, ("var", name, ty))
        self.variables[name] = ty
        if init is None:
            return None
        if isinstance(init, list):
            return ir.Block([ir.Assign(name, value, None, path or None, **self.pos(node))
                             for path, value in init], **self.pos(node))
        return ir.Assign(name, init, None, **self.pos(node))

    def memory_variable(self, node, space, ty):
        """A ``__local`` scalar or a variable whose address is taken: a one-element array."""
        if space == "local" and node.init is not None:
            raise self.error(node, "a __local variable cannot be initialized")
        name = self.unique(node.name)
        info = ir.ArrayInfo(name, space, ty, length=1, dims=("scalar",))
        self.arrays[name] = info
        if isinstance(ty, T.Struct) and isinstance(node.init, c_ast.InitList):
            placements, _ = place(self, ty, node.init, node.name)
            self.declare(node, node.name, info)
            return self.element_stores(node, info, [(0, p) for p in placements])
        init = self.initial_value(node, ty) if node.init is not None else None
        self.declare(node, node.name, info)
        if init is None:
            return None
        return ir.Store(name, self.const(0, T.INT, node), init, None, **self.pos(node))

    def initial_value(self, node, ty):
        """The lowered initializer: a value, or (field path, value) pairs for a struct list
        (the first pair zeroes the struct: C zeroes the members the list leaves out)."""
        if isinstance(node.init, c_ast.InitList):
            if isinstance(ty, T.Struct):
                placements, _ = place(self, ty, node.init, node.name)
                pairs = [((), self.zero(node, ty))]
                for placement in placements:   # no array members: those structs live in memory
                    pairs.append((placement.path, self.placed_value(placement)))
                return pairs
            if ty.width > 1:
                return self.vector_literal(node.init, ty, [self.expr(e) for e in node.init.exprs])
            if len(node.init.exprs) == 1:
                return self.convert(self.expr(node.init.exprs[0]), ty)
            raise self.error(node, f"too many initializers for {ty}")
        return self.convert(self.expr(node.init), ty)

    def vector_literal(self, node, ty, parts):
        """``{x, y, ...}`` for vector type ``ty``: the parts fill its components in order,
        and components left out are zero."""
        parts = [self.convert(p, T.with_base(p.type, ty.base)) for p in parts]
        filled = sum(p.type.width for p in parts)
        if filled > ty.width:
            raise self.error(node, f"too many initializers for {ty} ({filled} components)")
        parts += [self.zero(node, ty.base)] * (ty.width - filled)
        return ir.VecLit(parts, type=ty, **self.pos(node))

    def placed_value(self, placement):
        """The value an initializer gives its subobject, converted to the subobject's type."""
        if isinstance(placement.value, list):
            return self.vector_literal(placement.node, placement.ty, placement.value)
        return self.convert(placement.value, placement.ty)

    def array_dims(self, node):
        dims = []
        inner = node.type
        while isinstance(inner, c_ast.ArrayDecl):
            dims.append(None if inner.dim is None else self.array_extent(inner.dim))
            inner = inner.type
        return dims, inner

    def array_placements(self, node, elem, dims):
        """The placements of an array's initializer, each with the flat index of the element
        it sets; an unknown first extent (``a[]``) becomes what the initializer reaches."""
        if not isinstance(node.init, c_ast.InitList):
            raise self.error(node, "an array needs a { ... } initializer")
        ty = elem
        for extent in reversed(dims):
            ty = T.ArrayType(ty, extent)
        placements, dims[0] = place(self, ty, node.init, node.name)
        flat = []
        for placement in placements:
            index = 0
            for extent, key in zip(dims, placement.path):
                index = index * extent + key
            flat.append((index, Placement(placement.path[len(dims):], placement.ty, placement.value,
                                          placement.node)))
        return flat

    def array_decl(self, node, space):
        dims, inner = self.array_dims(node)
        elem = self.type_of(node, inner)
        placed = self.array_placements(node, elem, dims) if node.init is not None else None
        if dims and dims[0] is None:
            raise self.error(node, f"array '{node.name}' needs a size")
        space = space or "private"
        if space not in ("local", "private"):
            raise self.error(node, f"arrays declared in a function must be local or private, not {space}")
        if space == "local" and placed is not None:
            raise self.error(node, "a __local array cannot be initialized")
        length = math.prod(dims)   # each extent written is positive (array_extent)
        if not length:   # 'a[] = {}'
            raise self.error(node, f"array '{node.name}' must have a positive size")
        name = self.unique(node.name)
        info = ir.ArrayInfo(name, space, elem, length=length, dims=tuple(dims))
        self.arrays[name] = info
        self.declare(node, node.name, info)
        if placed is None:
            return None
        return self.element_stores(node, info, placed)

    def element_stores(self, node, info, placed):
        """The stores that initialize private array ``info`` from (flat index, placement)
        pairs: each element is stored once, whole, in order (zero where the initializer
        leaves it out); a struct element is zeroed, then its placed members stored."""
        pos = self.pos(node)
        whole, members = {}, {}
        for index, placement in placed:
            if placement.path:
                members.setdefault(index, []).append(placement)
            else:
                whole[index] = self.placed_value(placement)   # the last one wins, as in C
                members.pop(index, None)
        stores = []
        for index in range(info.length):
            value = whole[index] if index in whole else self.zero(node, info.elem)
            stores.append(ir.Store(info.name, self.const(index, T.INT, node), value, None, **pos))
            for placement in members.get(index, ()):
                pointer = self.member_pointer(placement.node, info, index, placement.path)
                stores.append(ir.PtrStore(pointer, self.placed_value(placement), None, **pos))
        return ir.Block(stores, **pos)

    def member_pointer(self, node, info, index, path):
        """A pointer to subobject ``path`` (member names, array indexes) of element ``index``
        of array ``info``."""
        ty, offset = info.elem, index * T.storage_size(info.elem)
        for key in path:
            if isinstance(key, str):
                ty, member_offset = ty.field(key)
                offset += member_offset
            else:
                ty = ty.elem
                offset += key * T.storage_size(ty)
        base = ir.AddrOf(info.name, type=T.Pointer(info.space, info.elem), uniform=True, **self.pos(node))
        moved = self.advance(node, base, self.const(offset, T.LONG, node), scale=1)
        return ir.Cast(moved, type=T.Pointer(info.space, ty), uniform=True, **self.pos(node))

    def zero(self, node, ty):
        """The zero value of ``ty``: what C gives what an initializer leaves out."""
        if isinstance(ty, T.Struct):
            return ir.Const(np.zeros((), dtype=ty.dtype), type=ty, uniform=True, **self.pos(node))
        return self.convert(self.const(0, T.INT, node), ty)

    # -- file-scope constants ------------------------------------------------------------
    def constant_table(self, decl):
        """A program-scope ``__constant`` array with its contents."""
        dims, inner = self.array_dims(decl)
        elem = self.type_of(decl, inner)
        if decl.init is None:
            raise self.error(decl, f"__constant array '{decl.name}' needs an initializer")
        placed = self.array_placements(decl, elem, dims)
        length = int(np.prod(dims))
        data = np.zeros((length,) + ((elem.width,) if isinstance(elem, T.Vector) else ()), dtype=elem.dtype)
        for index, placement in placed:
            # Member names select fields of every row, indexes go after the row's.
            view, where = data, (index,)
            for key in placement.path:
                if isinstance(key, str):
                    view = view[key]
                else:
                    where += (key,)
            view[where] = self.fold_value(decl, self.placed_value(placement))
        return ir.ArrayInfo(decl.name, "constant", elem, length=length, dims=tuple(dims), init=data)

    def fold_value(self, decl, value):
        """A constant initializer's value (numbers, vectors, arithmetic on them)."""
        folded = self.fold(value)
        if folded is None:
            raise self.error(decl, "a __constant initializer must be a constant expression")
        return folded

    def constant_value(self, init, ty):
        """A program-scope constant scalar or vector: its initializer converted to ``ty``
        as an assignment converts (``uint X = -1`` is 4294967295), then folded."""
        if isinstance(init, c_ast.InitList) or isinstance(ty, (T.Struct, T.Pointer)):
            raise self.unsupported(init, f"program-scope constant of type {ty}")
        folded = self.fold(self.convert(self.expr(init), ty))
        if folded is None:
            raise self.error(init, "a program-scope constant must be a constant expression")
        return ir.Const(folded, type=ty, uniform=True, **self.pos(init))

    # -- assignment ------------------------------------------------------------------
    def stmt_Assignment(self, node):
        if node.op != "=" and node.op[:-1] not in ARITH:
            raise self.error(node, f"unknown assignment operator {node.op}")
        value = self.expr(node.rvalue)
        op = node.op[:-1] if node.op != "=" else None
        return self.assign(node, node.lvalue, value, op)

    def assign(self, node, target, value, op):
        pos = self.pos(node)
        comps, path = None, ()
        base = target
        # Peel swizzles and struct members off the target: they select part of a variable.
        while isinstance(base, c_ast.StructRef) and base.type == ".":
            base_type = self.lvalue_type(base.name)
            if isinstance(base_type, T.Struct):
                if self.address(base.name) is not None:
                    break
                path = (base.field.name,) + path
            else:
                if comps is not None or path:
                    raise self.unsupported(base, "assigning to a swizzle of a swizzle")
                comps = self.swizzle_comps(base, base_type)
                if comps is None or base_type.width == 1:
                    raise self.error(base, f"'{base.field.name}' is not a component of {base_type}")
                if max(comps) >= base_type.width:
                    raise self.error(base, f"component .{base.field.name} is out of range for {base_type}")
            base = base.name
        if isinstance(base, c_ast.ID):
            entry = self.resolve(base, base.name)
            emit = next((e for e in self.pre.emits if e.name == base.name), None)
            if entry is None and emit is not None:
                return ir.EmitStore(emit.name, None, self.emit_value(node, value), **pos)
            if entry is None:
                raise self.error(base, f"'{base.name}' is not declared")
            if isinstance(entry, tuple) and entry[0] == "var":
                _, name, ty = entry
                read = ir.Var(name, type=ty, **self.pos(base))
                for field_name in path:
                    field_ty = read.type.field(field_name)[0]
                    read = ir.Member(read, field_name, type=field_ty, **self.pos(base))
                return ir.Assign(name, self.combine(node, read, value, op, comps, read.type), comps,
                                 path or None, **pos)
            if isinstance(entry, tuple):
                raise self.error(base, f"cannot assign to constant '{base.name}'")
            if entry.dims != ("scalar",):
                raise self.error(base, f"cannot assign to array '{base.name}'")
        if isinstance(base, c_ast.ArrayRef):
            root = base
            while isinstance(root, c_ast.ArrayRef):
                root = root.name
            if isinstance(root, c_ast.ID) and self.resolve(root, root.name) is None:
                emit = next((e for e in self.pre.emits if e.name == root.name), None)
                if emit is not None:
                    index = self.convert(self.expr(base.subscript), T.INT)
                    return ir.EmitStore(emit.name, index, self.emit_value(node, value), **pos)
            named = self.element(base) if base is target or comps is not None else None
            if named is not None and not path:
                info, index = named
                read = ir.Load(info.name, index, type=info.elem, **self.pos(base))
                return ir.Store(info.name, index, self.combine(node, read, value, op, comps, info.elem),
                                comps, **pos)
        address = self.address(target if comps is None else base)
        if address is None:
            raise self.unsupported(target, "assignment to this kind of expression")
        pointer, ty = address
        if isinstance(ty, T.ArrayType):
            raise self.error(target, "cannot assign to an array")
        pointer = ir.Cast(pointer, type=T.Pointer(pointer.type.space, ty), **self.pos(target)) \
            if pointer.type.elem != ty else pointer
        if pointer.type.space == "constant":
            raise self.error(target, "cannot write to constant memory")
        read = ir.PtrLoad(pointer, type=ty, **self.pos(target))
        return ir.PtrStore(pointer, self.combine(node, read, value, op, comps, ty), comps, **pos)

    def emit_value(self, node, value):
        if value.type.width != 1 or isinstance(value.type, (T.Struct, T.Pointer)):
            raise self.error(node, "@emit values must be scalars")
        return value

    def combine(self, node, read, value, op, comps, ty):
        """The value to store: ``value`` itself, or ``read OP value`` for compound assignment."""
        if comps is not None:
            ty = ty.base if len(comps) == 1 else T.Vector(ty.base, len(comps))
            read = ir.Swizzle(read, comps, type=ty, line=read.line, col=read.col)
        if op is not None:
            value = self.binary(node, op, read, value)
        if isinstance(ty, T.Struct) and value.type != ty:
            raise self.error(node, f"cannot assign {value.type} to {ty}")
        return self.convert(value, ty)

    def stmt_UnaryOp(self, node):
        if node.op in ("p++", "++", "p--", "--"):
            # A vector steps by 1 of its component type: an int would outrank narrower
            # components (OpenCL C 6.2.6).
            target = self.lvalue_type(node.expr)
            one = self.const(1, target.base if target.width > 1 else T.INT, node)
            return self.assign(node, node.expr, one, "+" if "+" in node.op else "-")
        return ir.Eval(self.expr(node), **self.pos(node))

    def stmt_ExprList(self, node):
        return ir.Block([self.effect(e) for e in node.exprs], **self.pos(node))

    def stmt_FuncCall(self, node):
        name = node.name.name if isinstance(node.name, c_ast.ID) else None
        args = node.args.exprs if node.args else []
        if name is not None and name not in self.file.functions:
            lowered = self.builtin_statement(node, name, args)
            if lowered is not None:
                return lowered
        return ir.Eval(self.expr(node), **self.pos(node))

    # -- control flow ------------------------------------------------------------------
    def stmt_If(self, node):
        cond = self.condition(node.cond)
        declared = set(self.variables)
        branch = self.open_branch(node, "if")
        then = self.with_label(branch, "then", node.iftrue)
        orelse = self.with_label(branch, "else", node.iffalse) if node.iffalse is not None else None
        merged = speculation.merged_variables(then, orelse, self.variables.keys() - declared)
        if merged is None:
            return ir.If(cond, then, orelse, branch.id, None, **self.pos(node))
        # If-converted: no lane ever branches here, so Klein's branching view has no node
        # for it (its sides, only assignments, opened none of their own).
        assert self.branch_nodes[-1] is branch
        self.branch_nodes.pop()
        return ir.If(cond, then, orelse, None, merged, **self.pos(node))

    def with_label(self, branch, label, stmt):
        self.node_stack.append((branch.id, label))
        lowered = self.body(stmt)
        self.node_stack.pop()
        return lowered

    def open_branch(self, node, kind):
        parent, label = self.node_stack[-1] if self.node_stack else (-1, "")
        coord = node.coord
        branch = ir.BranchNode(len(self.branch_nodes), parent, kind, coord.line, coord.column or 1,
                               _last_line(node), label)
        self.branch_nodes.append(branch)
        return branch

    def loop(self, node, init, cond, step, body, post):
        self.scopes.append({})
        init_stmt = self.stmt(init) if init is not None else None
        cond_expr = self.condition(cond) if cond is not None else self.const(1, T.INT, node)
        branch = self.open_branch(node, "loop")
        self.loop_depth += 1
        self.break_depth += 1
        lowered_body = self.with_label(branch, "body", body)
        self.loop_depth -= 1
        self.break_depth -= 1
        step_stmt = self.stmt(step) if step is not None else None
        self.scopes.pop()
        loop = ir.Loop(cond_expr, lowered_body, step_stmt, branch.id, post, **self.pos(node))
        if init_stmt is None:
            return loop
        return ir.Block([init_stmt, loop], **self.pos(node))

    def stmt_For(self, node):
        return self.loop(node, node.init, node.cond, node.next, node.stmt, False)

    def stmt_While(self, node):
        return self.loop(node, None, node.cond, None, node.stmt, False)

    def stmt_DoWhile(self, node):
        return self.loop(node, None, node.cond, None, node.stmt, True)

    def stmt_Switch(self, node):
        value = self.expr(node.cond)
        if value.type.is_float or value.type.width != 1 or isinstance(value.type, (T.Pointer, T.Struct)):
            raise self.error(node, f"switch needs an integer value, not {value.type}")
        items = node.stmt.block_items if isinstance(node.stmt, c_ast.Compound) else [node.stmt]
        items = items or []
        cases, nodes = [], []
        self.scopes.append({})
        self.break_depth += 1
        seen = set()
        promoted = T.promote(value.type, T.INT)
        for item in items:
            while isinstance(item, (c_ast.Case, c_ast.Default)):
                label_value = None
                if isinstance(item, c_ast.Case):
                    label_value = self.case_label(item.expr, promoted)
                    if label_value in seen:
                        raise self.error(item, f"duplicate case value {label_value}")
                    seen.add(label_value)
                elif None in seen:
                    raise self.error(item, "more than one default label")
                else:
                    seen.add(None)
                branch = self.open_branch(item, "if")
                nodes.append(branch.id)
                cases.append([label_value, []])
                inner = item.stmts or []
                item = None
                for stmt in inner:
                    if isinstance(stmt, (c_ast.Case, c_ast.Default)):
                        item = stmt
                        break
                    self.node_stack.append((branch.id, "then"))
                    lowered = self.stmt(stmt)
                    self.node_stack.pop()
                    if lowered is not None:
                        cases[-1][1].append(lowered)
            if item is None:
                continue
            if not cases:
                raise self.unsupported(item, "statements before the first case label")
            self.node_stack.append((nodes[-1], "then"))
            lowered = self.stmt(item)
            self.node_stack.pop()
            if lowered is not None:
                cases[-1][1].append(lowered)
        self.break_depth -= 1
        self.scopes.pop()
        value = self.convert(value, promoted)
        return ir.Switch(value, [(v, ir.Block(s, **self.pos(node))) for v, s in cases], nodes,
                         **self.pos(node))

    def case_label(self, node, ty):
        """A case label's value: an integer constant converted to the promoted type ``ty`` of
        the switch's value (C 6.8.4.2), so ``case (uchar)256:`` is 0 and ``case -1:`` of a
        ``uint`` switch is 4294967295."""
        label = self.expr(node)
        value = None
        if constants.is_integer(label.type):
            value = constants.integer(self.convert(label, ty), self.located)
        if value is None:
            raise self.error(node, "an integer constant is needed here")
        return value

    def stmt_Break(self, node):
        if not self.break_depth:
            raise self.error(node, "break outside a loop or switch")
        return ir.Break(**self.pos(node))

    def stmt_Continue(self, node):
        if not self.loop_depth:
            raise self.error(node, "continue outside a loop")
        return ir.Continue(**self.pos(node))

    def stmt_Return(self, node):
        if self.frame is None:
            if node.expr is not None:
                raise self.error(node, "a kernel returns void: 'return' takes no value")
            return ir.Return(**self.pos(node))
        name, ty = self.frame
        if ty is T.VOID:
            if node.expr is not None:
                raise self.error(node, "a void function's 'return' takes no value")
            return ir.FuncReturn(None, None, **self.pos(node))
        if node.expr is None:
            raise self.error(node, f"this function must return a {ty}")
        value = self.expr(node.expr)
        if isinstance(ty, T.Struct) and value.type != ty:
            raise self.error(node, f"cannot return {value.type} from a function returning {ty}")
        return ir.FuncReturn(name, self.convert(value, ty), **self.pos(node))

    # -- user functions ----------------------------------------------------------------
    def call_user(self, node, name, args):
        """Inline a call to the program's function ``name`` (see the module docstring)."""
        funcdef = self.file.functions[name]
        if name in self.call_stack:
            chain = " -> ".join(self.call_stack[self.call_stack.index(name):] + [name])
            raise self.unsupported(node, f"recursion ({chain}): OpenCL C forbids recursive calls")
        params = list(_params(funcdef.decl.type))
        if len(args) != len(params):
            raise self.error(node, f"'{name}' takes {len(params)} argument(s), got {len(args)}")
        pos = self.pos(node)
        ret_type = self.type_of(funcdef.decl, funcdef.decl.type.type)
        values = [self.argument(a) for a in args]
        saved = (self.scopes, self.frame, self.addressed, self.loop_depth, self.break_depth)
        self.scopes = [{}]
        self.addressed = _addressed(funcdef.body)
        self.loop_depth = self.break_depth = 0
        self.call_stack.append(name)
        reassigned = _assigned(funcdef.body)
        stmts = []
        for param, value, arg in zip(params, values, args):
            ty = self.type_of(param, param.type)
            if isinstance(ty, T.ArrayType):   # 'float a[16]' as a parameter is a pointer
                ty = T.Pointer(_space(param.type) or "private", ty.elem)
            if isinstance(value, ir.ArrayInfo):
                image = value.space == "image"
                if image and ty != value.elem:
                    raise self.error(arg, f"argument '{param.name}' of '{name}' is declared {ty},"
                                          f" not {value.elem}")
                if param.name not in reassigned and param.name not in self.addressed and \
                        (isinstance(ty, T.Pointer) or image):
                    # The callee sees a parameter: a pointer to the array (sizeof says so).
                    self.declare(param, param.name, replace(value, is_param=True))
                    continue
                if image:
                    raise self.unsupported(arg, "reassigning an image parameter")
                value = ir.AddrOf(value.name, type=T.Pointer(value.space, value.elem), uniform=True,
                                  **self.pos(arg))
            if T.is_image(ty):
                raise self.error(arg, f"argument '{param.name}' of '{name}' must be an {ty}")
            if isinstance(ty, T.Struct) and value.type != ty:
                raise self.error(arg, f"argument '{param.name}' of '{name}' must be a {ty}, not {value.type}")
            converted = self.convert(value, ty)
            if param.name in self.addressed or _has_array_member(ty):
                stmts.append(self.memory_param(param, ty, converted))
                continue
            local = self.unique(param.name)
            self.variables[local] = ty
            self.declare(param, param.name, ("var", local, ty))
            stmts.append(ir.Assign(local, converted, None, **self.pos(arg)))
        result = None
        if ret_type is not T.VOID:
            result_name = self.unique(f"{name}()")
            self.variables[result_name] = ret_type
            result = ir.Var(result_name, type=ret_type, **pos)
        self.frame = (result.name if result is not None else None, ret_type)
        stmts.append(self.block(funcdef.body, new_scope=False))
        self.call_stack.pop()
        self.scopes, self.frame, self.addressed, self.loop_depth, self.break_depth = saved
        return ir.StmtExpr(ir.Block(stmts, **pos), result, True, type=ret_type, **pos)

    def argument(self, arg):
        """An argument's value; a named array or image is passed as itself (an ArrayInfo)."""
        if isinstance(arg, c_ast.ID):
            entry = self.resolve(arg, arg.name)
            if isinstance(entry, ir.ArrayInfo) and entry.dims != ("scalar",):
                return entry
        return self.expr(arg)

    def memory_param(self, param, ty, value):
        local = self.unique(param.name)
        info = ir.ArrayInfo(local, "private", ty, length=1, dims=("scalar",))
        self.arrays[local] = info
        self.declare(param, param.name, info)
        return ir.Store(local, self.const(0, T.INT, param), value, None, **self.pos(param))


def _params(functype):
    for param in (functype.args.params if functype.args else []):
        if isinstance(param, c_ast.Typename):   # (void)
            continue
        yield param


def _has_array_member(ty) -> bool:
    """Whether struct (or union) ``ty`` holds an array, directly or in a nested struct."""
    return isinstance(ty, T.Struct) and any(
        isinstance(f, T.ArrayType) or _has_array_member(f) for _, f, _ in ty.fields)


def _addressed(body):
    """Names whose address is taken with ``&`` in ``body``."""
    names = set()

    class Visitor(c_ast.NodeVisitor):
        def visit_UnaryOp(self, node):
            if node.op == "&" and isinstance(node.expr, c_ast.ID):
                names.add(node.expr.name)
            self.generic_visit(node)

    Visitor().visit(body)
    return names


def _assigned(body):
    """Names assigned (``=``, ``op=``, ``++``/``--``) anywhere in ``body``."""
    names = set()

    class Visitor(c_ast.NodeVisitor):
        def visit_Assignment(self, node):
            if isinstance(node.lvalue, c_ast.ID):
                names.add(node.lvalue.name)
            self.generic_visit(node)

        def visit_UnaryOp(self, node):
            if node.op in ("p++", "++", "p--", "--") and isinstance(node.expr, c_ast.ID):
                names.add(node.expr.name)
            self.generic_visit(node)

    Visitor().visit(body)
    return names


def _last_line(node):
    """The largest source line inside a C AST node (the end of a statement's extent)."""
    last = node.coord.line if getattr(node, "coord", None) else 0
    for _, child in node.children():
        last = max(last, _last_line(child))
    return last
