"""Parse OpenCL C (with Klein's annotations) and lower it to the kernel IR.

``compile_source(path, text, options, kernel=None)`` returns an ``ir.Program``. ``text``
is the file as ``encoding.text_of`` reads its bytes, as clang does (line ends made LF
here too, for a text given directly). The steps:

1. ``preprocess`` runs the C preprocessor (``-D``/``-U``/``-I``, OpenCL's predefined
   macros) after taking Klein's annotations out;
2. ``cparser`` builds a C AST with OpenCL's qualifiers in it; its errors become
   ``file:line:col: reason``;
3. ``FileScope`` reads the file-scope declarations: ``typedef``, ``struct``/``union``,
   ``enum``, ``__constant`` tables and scalars, and the functions;
4. ``statements.KernelLowering`` lowers each kernel (only ``kernel`` when given, so another
   kernel of the file may use something unsupported), inlining the helper functions
   it calls, and builds Klein's semantic model (one ``BranchNode`` per conditional and
   loop); constructs outside the subset are refused by name;
5. ``uniformity.analyze`` marks which values are launch- or wavefront-uniform.
"""
from pycparser import c_ast

from ..user_input import nesting_offset, position
from . import ir
from .cparser import parse
from .diagnostics import KernelError, Unsupported
from .encoding import shown, unix_newlines
from .includes import Confinement
from .preprocess import BuildOptions, parse_build_options, preprocess
from .statements import KernelLowering
from .uniformity import analyze


class FileScope:
    """The file-scope names of a program: types, constants, constant tables, functions."""

    def __init__(self, path, pre):
        self.path = path
        self.pre = pre
        self.typedefs = {}      # name -> type
        self.tags = {}          # 'struct S' / 'union U' / 'enum E' -> type
        self.constants = {}     # name -> ir.Const (enumerators, const scalars)
        self.tables = {}        # name -> ir.ArrayInfo of a __constant array
        self.functions = {}     # name -> c_ast.FuncDef
        self.kernel_names = []
        self.last_coord = None  # the last located node lowered (for unlocated ones)

    # -- locations ---------------------------------------------------------------------
    def error(self, node, reason, cls=KernelError):
        """A ``cls`` error at ``node``, its column mapped back through macro expansions."""
        coord = getattr(node, "coord", None) or self.last_coord
        if coord is None:
            return cls(self.path, 0, 0, reason)
        return self.error_at(coord.file, coord.line, coord.column, reason, cls)

    def error_at(self, file, line, col, reason, cls=KernelError):
        """A ``cls`` error at ``line``:``col`` of ``file`` (None: the kernel's own file),
        its column mapped back through macro expansions."""
        file = file or self.path
        col = col or 1
        expanded = self.pre.out_lines.get((file, line))
        if expanded is not None:
            col = self.pre.origin.column(file, line, expanded, col)
        return cls(file, line, col, reason)

    def unsupported(self, node, what):
        return self.error(node, what, Unsupported)

    # -- declarations ------------------------------------------------------------------
    def add(self, ext, lowering):
        decl = ext.decl if isinstance(ext, c_ast.FuncDef) else ext
        if isinstance(getattr(decl, "type", None), c_ast.FuncDecl) and decl.name != "printf":
            self.check_parameters(decl.type)
        if isinstance(ext, c_ast.FuncDef):
            name = ext.decl.name
            if name in self.functions:
                raise self.error(ext.decl, f"function '{name}' is defined twice")
            self.functions[name] = ext
            if "kernel" in (ext.decl.funcspec or []):
                self.kernel_names.append(name)
            return
        if isinstance(ext, c_ast.Typedef):
            self.typedefs[ext.name] = lowering.declared_type(ext, ext.type)
            return
        if isinstance(ext, (c_ast.Pragma, c_ast.StaticAssert)):
            return
        if not isinstance(ext, c_ast.Decl):
            raise self.unsupported(ext, f"file-scope {type(ext).__name__}")
        if isinstance(ext.type, c_ast.FuncDecl):
            return   # a prototype; the definition follows
        if ext.name is None:   # struct/union/enum definition alone
            lowering.declared_type(ext, ext.type)
            return
        if "extern" in (ext.storage or []):
            raise self.unsupported(ext, "extern variables")
        self.program_variable(ext, lowering)

    def check_parameters(self, functype):
        """OpenCL C (6.9.e) has no variadic functions of its own: only printf is one."""
        for param in functype.args.params if functype.args else ():
            if isinstance(param, c_ast.EllipsisParam):
                raise self.error(param, "a variadic function ('...'): OpenCL C does not allow"
                                        " one (only printf takes a variable number of arguments)")

    def program_variable(self, decl, lowering):
        """``__constant`` tables and constant scalars declared at file scope."""
        quals = _all_quals(decl)
        if "constant" not in quals and "const" not in quals:
            raise self.unsupported(decl, "program-scope variables other than __constant ones")
        if isinstance(decl.type, c_ast.ArrayDecl):
            info = lowering.constant_table(decl)
            self.tables[decl.name] = info
            return
        ty = lowering.declared_type(decl, decl.type)
        if decl.init is None:
            raise self.error(decl, f"constant '{decl.name}' needs an initializer")
        value = lowering.constant_value(decl.init, ty)
        self.constants[decl.name] = value


def _all_quals(decl):
    quals = set(decl.quals or [])
    node = decl.type
    while node is not None and hasattr(node, "type"):
        quals.update(getattr(node, "quals", None) or [])
        node = node.type
    return quals


def compile_source(path: str, source: str, options: BuildOptions | str | None = None,
                   kernel: str | None = None, confinement: Confinement | None = None) -> ir.Program:
    """Parse and lower the kernels in ``source`` (named ``path`` in messages).

    ``options`` are clBuildProgram's build options (a string or ``BuildOptions``);
    with ``kernel`` only that kernel is lowered; with ``confinement``, ``#include`` and
    ``-I`` stay inside its folders (``kernels.includes``).
    """
    option_text = options if isinstance(options, str) else options.text() if options else ""
    if isinstance(options, str):
        try:
            options = parse_build_options(options)
        except ValueError as exc:
            raise KernelError(path, 0, 0, str(exc)) from None
    source = unix_newlines(source)
    _check_nesting(path, source)
    try:
        return _compile(path, source, options, option_text, kernel, confinement)
    except RecursionError:
        # Deep in something other than brackets (a long chain of 'else if', a very long
        # expression): Python's recursion limit, not ours, ended the compile.
        raise KernelError(path, 0, 0, "too deeply nested or too long to compile;"
                          " split it into simpler statements") from None


MAX_NESTING = 100
"""Deepest nesting of parentheses, brackets and braces compiled (the preprocessor, the
parser and the lowering recurse once or more per level, within Python's recursion limit)."""


def _check_nesting(path, source):
    offset = nesting_offset(source, MAX_NESTING, "([{", ")]}", "\"'")
    if offset >= 0:
        line, col = position(source, offset)
        raise KernelError(path, line, col,
                          f"nested more than {MAX_NESTING} levels deep (parentheses,"
                          " brackets and braces together)")


def _compile(path, source, options, option_text, kernel, confinement):
    """``compile_source`` once the options are parsed and the nesting checked."""
    pre = preprocess(path, source, options, confinement)
    ast = parse(pre.text, path, pre.origin, pre.out_lines)
    scope = FileScope(path, pre)
    file_lowering = KernelLowering(scope)
    for ext in ast.ext:
        scope.add(ext, file_lowering)
    if not scope.kernel_names:
        raise KernelError(path, 1, 1, "no kernel function found")
    if kernel is not None and kernel not in scope.kernel_names:
        raise KernelError(path, 1, 1, f"no kernel named '{kernel}' (has: {', '.join(scope.kernel_names)})")
    kernels = {}
    for name in ([kernel] if kernel is not None else scope.kernel_names):
        lowered = KernelLowering(scope).kernel(scope.functions[name])
        lowered.emits = {e.name: e for e in pre.emits}
        analyze(lowered)
        kernels[name] = lowered
    # The program keeps its source as shown (stored as the trace's text), a byte that is
    # not UTF-8 as one character still, so lines and columns stay the file's.
    return ir.Program(path, shown(source), kernels, binds=pre.binds, emits=pre.emits,
                      options=option_text)

