"""Parse OpenCL C (with Klein's annotations) and lower it to the kernel IR.

``compile_source(path, text)`` returns an ``ir.Program``. The steps:

1. ``preprocess`` rewrites OpenCL spellings into C that pycparser accepts, keeping
   lines and columns;
2. pycparser builds a C AST; its errors are re-raised as ``file:line:col: reason``;
3. ``_Lowering`` walks each kernel function: it resolves names and scopes, types
   every expression with C's conversions, builds Klein's semantic model (one
   ``BranchNode`` per conditional and loop) and refuses constructs outside the
   subset by name (``switch``, ``goto``, pointer arithmetic, user function calls ...);
4. ``uniformity.analyze`` marks which values are launch- or wavefront-uniform.
"""
from pycparser import c_ast, c_parser

from . import ir
from . import types as T
from .builtins import CONSTANTS, MATH, WORK_ITEM, math_result_type
from .diagnostics import KernelError, Unsupported, at
from .preprocess import WATCH_CALL, preprocess
from .uniformity import analyze

ARITH = {"+", "-", "*", "/", "%", "<<", ">>", "&", "|", "^"}
COMPARE = {"<", ">", "<=", ">=", "==", "!="}
SWIZZLE = {"x": 0, "y": 1, "z": 2, "w": 3}


class _Parser(c_parser.CParser):
    """pycparser with every error located: some of its messages carry only the file."""

    def _parse_error(self, msg, coord):
        if not getattr(coord, "line", None):
            token = None
            try:
                token = self._peek()
            except Exception:  # noqa: BLE001 - no token to point at; keep the plain message
                token = None
            if token is not None:
                coord = self._coord(token.lineno, token.column)
        raise c_parser.ParseError(f"{coord}: {msg}")


def _parse_error(path, exc):
    """Turn 'file:line:col: message' from pycparser into a KernelError."""
    text = str(exc)
    head, _, reason = text.partition(": ")
    parts = head.rsplit(":", 2)
    reason = reason or text
    if reason.startswith("before: "):
        reason = f"syntax error before '{reason[8:]}'"
    if len(parts) == 3 and parts[1].isdigit() and parts[2].isdigit():
        return KernelError(path, int(parts[1]), int(parts[2]), reason)
    if len(parts) >= 2 and parts[-1].isdigit():
        return KernelError(path, int(parts[-1]), 1, reason)
    return KernelError(path, 0, 0, reason)


def compile_source(path, source):
    """Parse and lower every kernel in ``source`` (named ``path`` in messages)."""
    pre = preprocess(path, source)
    try:
        ast = _Parser().parse(pre.text, path)
    except c_parser.ParseError as exc:
        raise _parse_error(path, exc) from None
    kernels = {}
    for ext in ast.ext[len(T.TYPE_NAMES):]:  # the prelude declares the OpenCL type names
        if not isinstance(ext, c_ast.FuncDef):
            raise at(ext.coord, path, "only kernel functions are allowed at file scope"
                     " (global variables, structs and typedefs are not supported)", KernelError)
        is_kernel = _qualifier_before(pre, ext.decl.coord, stops=";}", words=pre.kernel_offsets)
        if not is_kernel:
            raise at(ext.decl.coord, path, "helper functions (calls to user functions)",
                     Unsupported)
        kernel = _Lowering(path, pre).kernel(ext)
        if kernel.name in kernels:
            raise at(ext.decl.coord, path, f"kernel '{kernel.name}' is defined twice")
        kernels[kernel.name] = kernel
    if not kernels:
        raise KernelError(path, 1, 1, "no kernel function found")
    emits = {e.name: e for e in pre.emits}
    for kernel in kernels.values():
        kernel.emits = emits
        analyze(kernel)
    return ir.Program(path, source, kernels, binds=pre.binds, emits=pre.emits)


def _qualifier_before(pre, coord, stops, words):
    """True if one of ``words`` (offsets) lies between ``coord`` and the previous stop char."""
    if coord is None:
        return False
    end = pre.offset(coord.line, coord.column)
    body = pre.text.split("\n", 2)[2]
    start = end - 1
    while start >= 0 and body[start] not in stops:
        start -= 1
    return any(start < off < end for off in words)


def _space_before(pre, coord, stops):
    """The address-space qualifier written before the declaration at ``coord`` (or None)."""
    if coord is None:
        return None
    end = pre.offset(coord.line, coord.column)
    body = pre.text.split("\n", 2)[2]
    start = end - 1
    while start >= 0 and body[start] not in stops:
        start -= 1
    found = [space for off, space in pre.qualifiers if start < off < end]
    return found[-1] if found else None


class _Lowering:
    """Lowers one kernel function; holds its scopes and the semantic model under construction."""

    def __init__(self, path, pre):
        self.path = path
        self.pre = pre
        self.scopes = []
        self.variables = {}
        self.arrays = {}
        self.branch_nodes = []
        self.node_stack = []      # (node id, branch label) of the enclosing conditionals/loops
        self.loop_depth = 0
        self.names_used = {}

    # -- helpers -------------------------------------------------------------------
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

    # -- kernel --------------------------------------------------------------------
    def kernel(self, funcdef):
        decl = funcdef.decl
        functype = decl.type
        if self.type_of(decl, functype.type) is not T.VOID:
            raise self.error(decl, "a kernel must return void")
        self.scopes.append({})
        params = []
        for param in (functype.args.params if functype.args else []):
            if isinstance(param, c_ast.Typename):  # (void)
                continue
            params.append(self.param(param))
        body = self.block(funcdef.body, new_scope=False)
        self.scopes.pop()
        return ir.Kernel(decl.name, params, self.arrays, self.variables, body,
                         decl.coord.line if decl.coord else 0, self.branch_nodes)

    def param(self, param):
        space = _space_before(self.pre, param.coord, "(,")
        if isinstance(param.type, c_ast.PtrDecl):
            elem = self.type_of(param, param.type.type)
            space = space or "global"
            if space == "private":
                raise self.error(param, "kernel pointer arguments must be global, constant or local")
            info = ir.ArrayInfo(param.name, space, elem, is_param=True)
            self.arrays[param.name] = info
            self.declare(param, param.name, info)
            return param.name, T.Pointer(space, elem)
        if isinstance(param.type, c_ast.ArrayDecl):
            raise self.unsupported(param, "array parameters (use a pointer)")
        ty = self.type_of(param, param.type)
        if space in ("global", "local", "constant"):
            raise self.error(param, f"a {space} argument must be a pointer")
        name = self.unique(param.name)
        self.variables[name] = ty
        self.declare(param, param.name, ("var", name, ty))
        return name, ty

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
        method = getattr(self, "stmt_" + type(node).__name__, None)
        if method is None:
            names = {"Switch": "switch statements", "Goto": "goto", "Label": "labels",
                     "Case": "case labels", "Default": "default labels"}
            raise self.unsupported(node, names.get(type(node).__name__,
                                                   f"statement {type(node).__name__}"))
        return method(node)

    def stmt_Compound(self, node):
        return self.block(node)

    def stmt_EmptyStatement(self, node):
        return None

    def stmt_DeclList(self, node):
        return ir.Block([s for s in (self.stmt(d) for d in node.decls) if s is not None],
                        **self.pos(node))

    def stmt_Decl(self, node):
        space = _space_before(self.pre, node.coord, ";{}")
        if node.storage:
            raise self.unsupported(node, f"storage class '{' '.join(node.storage)}'")
        if isinstance(node.type, c_ast.ArrayDecl):
            return self.array_decl(node, space)
        if isinstance(node.type, c_ast.PtrDecl):
            raise self.unsupported(node, "pointer variables inside a kernel")
        if isinstance(node.type, c_ast.FuncDecl):
            raise self.unsupported(node, "function declarations inside a kernel")
        if space in ("local", "global", "constant"):
            raise self.unsupported(node, f"{space} scalar variables (declare a {space} array)")
        ty = self.type_of(node, node.type)
        if ty is T.VOID:
            raise self.error(node, "a variable cannot be void")
        name = self.unique(node.name)
        init = None
        if node.init is not None:
            if isinstance(node.init, c_ast.InitList):
                raise self.unsupported(node, "initializer lists")
            init = self.convert(self.expr(node.init), ty)
        self.declare(node, node.name, ("var", name, ty))
        self.variables[name] = ty
        if init is None:
            return None
        return ir.Assign(name, init, None, **self.pos(node))

    def array_decl(self, node, space):
        dims = []
        inner = node.type
        while isinstance(inner, c_ast.ArrayDecl):
            if inner.dim is None:
                raise self.error(node, f"array '{node.name}' needs a size")
            dims.append(self.const_int(inner.dim))
            inner = inner.type
        if node.init is not None:
            raise self.unsupported(node, "array initializers")
        elem = self.type_of(node, inner)
        space = space or "private"
        if space not in ("local", "private"):
            raise self.error(node, f"arrays declared in a kernel must be local or private, not {space}")
        length = 1
        for d in dims:
            if d <= 0:
                raise self.error(node, f"array '{node.name}' must have a positive size")
            length *= d
        name = self.unique(node.name)
        info = ir.ArrayInfo(name, space, elem, length=length, dims=tuple(dims))
        self.arrays[name] = info
        self.declare(node, node.name, info)
        return None

    def const_int(self, node):
        value = self.expr(node)
        if not isinstance(value, ir.Const) or value.type.is_float or value.type.width != 1:
            folded = _fold(value)
            if folded is None:
                raise self.error(node, "array size must be an integer constant")
            return folded
        return int(value.value)

    def stmt_Assignment(self, node):
        if node.op != "=" and node.op[:-1] not in ARITH:
            raise self.error(node, f"unknown assignment operator {node.op}")
        target = node.lvalue
        value = self.expr(node.rvalue)
        op = node.op[:-1] if node.op != "=" else None
        return self.assign(node, target, value, op)

    def assign(self, node, target, value, op):
        comps = None
        if isinstance(target, c_ast.StructRef):
            comps = self.swizzle_comps(target)
            base_type = self.expr(target.name).type
            if comps is not None and max(comps) >= base_type.width:
                raise self.error(target, f"component .{target.field.name} is out of range for {base_type}")
            target = target.name
        if isinstance(target, c_ast.ID):
            entry = self.resolve(target, target.name)
            emit = next((e for e in self.pre.emits if e.name == target.name), None)
            if entry is None and emit is not None:
                return ir.EmitStore(emit.name, None, self.emit_value(node, value), **self.pos(node))
            if entry is None:
                raise self.error(target, f"'{target.name}' is not declared")
            if not isinstance(entry, tuple):
                raise self.error(target, f"cannot assign to array '{target.name}'")
            _, name, ty = entry
            read = ir.Var(name, type=ty, **self.pos(target))
            return ir.Assign(name, self.combine(node, read, value, op, comps, ty), comps,
                             **self.pos(node))
        if isinstance(target, c_ast.ArrayRef):
            root = target
            while isinstance(root, c_ast.ArrayRef):
                root = root.name
            if isinstance(root, c_ast.ID) and self.resolve(root, root.name) is None:
                emit = next((e for e in self.pre.emits if e.name == root.name), None)
                if emit is not None:
                    index = self.convert(self.expr(target.subscript), T.INT)
                    return ir.EmitStore(emit.name, index, self.emit_value(node, value), **self.pos(node))
            info, index = self.element(target)
            read = ir.Load(info.name, index, type=info.elem, **self.pos(target))
            return ir.Store(info.name, index, self.combine(node, read, value, op, comps, info.elem),
                            comps, **self.pos(node))
        raise self.unsupported(target, "assignment to this kind of expression")

    def emit_value(self, node, value):
        if value.type.width != 1:
            raise self.error(node, "@emit values must be scalars")
        return value

    def combine(self, node, read, value, op, comps, ty):
        """The value to store: ``value`` itself, or ``read OP value`` for compound assignment."""
        if comps is not None:
            ty = ty.base if len(comps) == 1 else T.Vector(ty.base, len(comps))
            read = ir.Swizzle(read, comps, type=ty, line=read.line, col=read.col)
        if op is not None:
            value = self.binary(node, op, read, value)
        return self.convert(value, ty)

    def stmt_UnaryOp(self, node):
        if node.op in ("p++", "++", "p--", "--"):
            one = ir.Const(T.INT.dtype.type(1), type=T.INT, uniform=True, **self.pos(node))
            return self.assign(node, node.expr, one, "+" if "+" in node.op else "-")
        return ir.Eval(self.expr(node), **self.pos(node))

    def stmt_ExprList(self, node):
        return ir.Block([self.stmt(e) for e in node.exprs], **self.pos(node))

    def stmt_FuncCall(self, node):
        name = node.name.name if isinstance(node.name, c_ast.ID) else None
        args = node.args.exprs if node.args else []
        if name == WATCH_CALL:
            target = args[0].name
            info = self.resolve(node, target)
            if not isinstance(info, ir.ArrayInfo):
                raise self.error(node, f"@watch needs an array or pointer argument, '{target}' is not one")
            return ir.Watch(info.name, **self.pos(node))
        if name == "barrier":
            if len(args) != 1:
                raise self.error(node, "barrier takes one argument (CLK_LOCAL_MEM_FENCE ...)")
            flags = _fold(self.expr(args[0]))
            if flags is None:
                raise self.error(node, "barrier flags must be constant")
            return ir.Barrier(flags, **self.pos(node))
        if name in ("mem_fence", "read_mem_fence", "write_mem_fence"):
            return None  # ordering is already sequential in the functional model
        width = _vector_op(name, "vstore")
        if width:
            if len(args) != 3:
                raise self.error(node, f"{name} takes (data, offset, pointer)")
            info = self.vector_view(node, args[2], width, name)
            value = self.expr(args[0])
            if value.type.width != width:
                raise self.error(node, f"{name} stores a {width}-wide vector, not {value.type}")
            return ir.Store(info.name, self.offset(args[1]), self.convert(value, info.elem), None,
                            **self.pos(node))
        return ir.Eval(self.expr(node), **self.pos(node))

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

    def stmt_If(self, node):
        cond = self.condition(node.cond)
        branch = self.open_branch(node, "if")
        then = self.with_label(branch, "then", node.iftrue)
        orelse = self.with_label(branch, "else", node.iffalse) if node.iffalse is not None else None
        return ir.If(cond, then, orelse, branch.id, **self.pos(node))

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
        cond_expr = self.condition(cond) if cond is not None else ir.Const(
            T.INT.dtype.type(1), type=T.INT, uniform=True, **self.pos(node))
        branch = self.open_branch(node, "loop")
        self.loop_depth += 1
        lowered_body = self.with_label(branch, "body", body)
        self.loop_depth -= 1
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

    def stmt_Break(self, node):
        if not self.loop_depth:
            raise self.error(node, "break outside a loop")
        return ir.Break(**self.pos(node))

    def stmt_Continue(self, node):
        if not self.loop_depth:
            raise self.error(node, "continue outside a loop")
        return ir.Continue(**self.pos(node))

    def stmt_Return(self, node):
        if node.expr is not None:
            raise self.error(node, "a kernel returns void: 'return' takes no value")
        return ir.Return(**self.pos(node))

    # -- expressions ---------------------------------------------------------------
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
            dim = _fold(self.expr(args[0]))
            if dim not in (0, 1, 2):
                raise self.error(node, f"{name} needs a constant dimension 0, 1 or 2")
            return ir.WorkItem(name, dim, type=T.UINT, uniform=WORK_ITEM[name] == "uniform",
                               wave=WORK_ITEM[name] in ("uniform", "wave"), **pos)
        if name == "get_work_dim":
            raise self.unsupported(node, "get_work_dim")
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
            raise self.unsupported(node, f"atomic operations ({name})")
        width = _vector_op(name, "vload")
        if width:
            if len(args) != 2:
                raise self.error(node, f"{name} takes (offset, pointer)")
            info = self.vector_view(node, args[1], width, name)
            return ir.Load(info.name, self.offset(args[0]), type=info.elem, **pos)
        if name.startswith(("vload", "vstore", "read_image", "write_image", "async_work_group")):
            raise self.unsupported(node, f"built-in {name}")
        raise self.unsupported(node, f"call to '{name}' (user functions and unknown built-ins)")

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


def _vector_op(name, prefix):
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


def _fold(expr):
    """The integer value of a constant expression (sizes, dimensions, flags) or None."""
    if isinstance(expr, ir.Const) and not expr.type.is_float and expr.type.width == 1:
        return int(expr.value)
    if isinstance(expr, ir.Cast):
        return _fold(expr.a)
    if isinstance(expr, ir.Binary):
        a, b = _fold(expr.a), _fold(expr.b)
        if a is None or b is None:
            return None
        ops = {"+": lambda: a + b, "-": lambda: a - b, "*": lambda: a * b,
               "/": lambda: int(a / b) if b else None, "%": lambda: a % b if b else None,
               "<<": lambda: a << b, ">>": lambda: a >> b, "&": lambda: a & b,
               "|": lambda: a | b, "^": lambda: a ^ b}
        return ops[expr.op]() if expr.op in ops else None
    return None


def _last_line(node):
    """The largest source line inside a C AST node (the end of a statement's extent)."""
    last = node.coord.line if getattr(node, "coord", None) else 0
    for _, child in node.children():
        last = max(last, _last_line(child))
    return last
