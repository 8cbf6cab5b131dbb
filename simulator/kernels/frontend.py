"""Parse OpenCL C (with Klein's annotations) and lower it to the kernel IR.

``compile_source(path, text)`` returns an ``ir.Program``. The steps:

1. ``preprocess`` rewrites OpenCL spellings into C that pycparser accepts, keeping
   lines and columns;
2. pycparser builds a C AST; its errors are re-raised as ``file:line:col: reason``;
3. ``_Lowering`` walks each kernel function: it resolves names and scopes, types
   every expression with C's conversions (``expressions``), builds Klein's semantic model (one
   ``BranchNode`` per conditional and loop) and refuses constructs outside the
   subset by name (``switch``, ``goto``, pointer arithmetic, user function calls ...);
4. ``uniformity.analyze`` marks which values are launch- or wavefront-uniform.
"""
from pycparser import c_ast, c_parser

from ..user_input import nesting_offset, position
from . import ir
from . import types as T
from .diagnostics import KernelError, Unsupported, at
from .expressions import ARITH, ExpressionLowering, fold_constant, vector_width
from .preprocess import WATCH_CALL, preprocess
from .uniformity import analyze


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

    def _pop_scope(self):
        # pycparser asserts here when a '}' closes a scope that was never opened.
        if len(self._scope_stack) <= 1:
            mark = self._tokens.mark()
            token = self._tokens._buffer[mark - 1] if mark else None
            self._parse_error("'}' without a matching '{'",
                              self._coord(token.lineno, token.column) if token else None)
        super()._pop_scope()


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


MAX_NESTING = 100
"""Deepest nesting of parentheses, brackets and braces compiled (the parser and the
lowering recurse once or more per level, within Python's recursion limit)."""


def _check_nesting(path, pre):
    offset = nesting_offset(pre.body, MAX_NESTING, "([{", ")]}", "\"'")
    if offset >= 0:
        line, col = position(pre.body, offset)
        raise KernelError(path, line, col,
                          f"nested more than {MAX_NESTING} levels deep (parentheses,"
                          " brackets and braces together)")


def compile_source(path, source):
    """Parse and lower every kernel in ``source`` (named ``path`` in messages)."""
    pre = preprocess(path, source)
    _check_nesting(path, pre)
    parser, lowering = _Parser(), []
    try:
        return _compile(path, pre, source, parser, lowering)
    except RecursionError:
        # Deep in something other than brackets (a chain of 'if's, a very long
        # expression): say which statement was being lowered, or where the parser was.
        if lowering and lowering[0].at is not None:
            coord = lowering[0].at.coord
            line, col = (coord.line, coord.column) if coord is not None else (0, 0)
        else:
            token = parser._tokens.peek()
            line, col = (token.lineno, token.column) if token is not None else (0, 0)
        raise KernelError(path, line, col, "too deeply nested or too long to compile;"
                          " split it into simpler statements") from None


def _compile(path, pre, source, parser, lowering):
    """``compile_source`` after the checks; the ``_Lowering`` at work is kept in ``lowering``."""
    try:
        ast = parser.parse(pre.text, path)
    except c_parser.ParseError as exc:
        raise _parse_error(path, exc) from None
    kernels = {}
    for ext in ast.ext[len(T.TYPE_NAMES):]:  # the prelude declares the OpenCL type names
        if not isinstance(ext, c_ast.FuncDef):
            raise at(ext.coord, path, "only kernel functions are allowed at file scope"
                     " (global variables, structs and typedefs are not supported)", KernelError)
        if not _marks_before(pre, ext.decl.coord, ";}", [(off, True) for off in pre.kernel_offsets]):
            raise at(ext.decl.coord, path, "helper functions (calls to user functions)",
                     Unsupported)
        lowering[:] = [_Lowering(path, pre)]
        kernel = lowering[0].kernel(ext)
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


def _marks_before(pre, coord, stops, marks):
    """The (offset, value) ``marks`` between the declaration at ``coord`` and the stop before it.

    Qualifiers were blanked out by the preprocessor; a qualifier belongs to the
    declaration whose name follows it with none of the ``stops`` characters between.
    """
    if coord is None:
        return []
    end = pre.offset(coord.line, coord.column)
    start = end - 1
    while start >= 0 and pre.body[start] not in stops:
        start -= 1
    return [value for offset, value in marks if start < offset < end]


def _space_before(pre, coord, stops):
    """The address-space qualifier written before the declaration at ``coord`` (or None)."""
    found = _marks_before(pre, coord, stops, pre.qualifiers)
    return found[-1] if found else None


class _Lowering(ExpressionLowering):
    """Lowers one kernel function's statements; holds the semantic model under construction."""

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
        self.at = None            # the statement being lowered

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
        self.at = node  # where to point if lowering runs out of stack
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
            folded = fold_constant(value)
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
            flags = fold_constant(self.expr(args[0]))
            if flags is None:
                raise self.error(node, "barrier flags must be constant")
            return ir.Barrier(flags, **self.pos(node))
        if name in ("mem_fence", "read_mem_fence", "write_mem_fence"):
            return None  # ordering is already sequential in the functional model
        width = vector_width(name, "vstore")
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
def _last_line(node):
    """The largest source line inside a C AST node (the end of a statement's extent)."""
    last = node.coord.line if getattr(node, "coord", None) else 0
    for _, child in node.children():
        last = max(last, _last_line(child))
    return last
