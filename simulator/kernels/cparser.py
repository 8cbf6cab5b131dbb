"""OpenCL C's keywords on top of pycparser's C99 parser, with located errors.

pycparser parses preprocessed C99. OpenCL C adds qualifiers; instead of rewriting the
text, the lexer turns each one into a token pycparser already knows, so it lands in
the AST next to the declaration it qualifies:

* address spaces (``global``/``__global``, ``local``, ``constant``, ``private``) and
  image access qualifiers (``read_only``...) become type qualifiers, spelled without
  the underscores (``Decl.quals``/``TypeDecl.quals`` hold ``"global"``);
* ``kernel``/``__kernel`` becomes a function specifier (``Decl.funcspec``);
* ``__const``, ``__restrict``, ``__inline`` become their C99 keyword;
* ``vec_step`` is read as ``sizeof`` is, so it takes a type name too (``vec_step(float4)``):
  it becomes a ``UnaryOp`` whose operator is ``"vec_step"``;
* ``__attribute__((...))`` hints (``reqd_work_group_size``, ``aligned``...) are skipped.

pycparser gives a designator ``.name`` and ``[name]`` alike, as the ``ID``; here an
element designator ``[expr]`` is an ``ArrayRef`` without a name, so ``[RED] = 1`` (an
enumerator) stays an index.

OpenCL's type names (``uint``, ``float4``, ``image2d_t``...) are type names to the parser
from the start, as if declared by typedefs in an enclosing scope (a user's declaration
of the same name shadows them, as C's scoping says).
"""
from pycparser import c_ast, c_lexer, c_parser

from .diagnostics import KernelError
from .encoding import foreign_byte, not_utf8
from .types import TYPE_NAMES

SPACE_WORDS = {
    "global": "global", "__global": "global", "local": "local", "__local": "local",
    "constant": "constant", "__constant": "constant", "private": "private",
    "__private": "private",
}
ACCESS_WORDS = {"read_only", "__read_only", "write_only", "__write_only", "read_write",
                "__read_write"}
# word -> (pycparser token type, spelling kept in the AST)
_RENAMED = {word: ("VOLATILE", space) for word, space in SPACE_WORDS.items()}
_RENAMED.update({word: ("VOLATILE", word.strip("_")) for word in ACCESS_WORDS})
_RENAMED.update({
    "kernel": ("INLINE", "kernel"), "__kernel": ("INLINE", "kernel"),
    "__const": ("CONST", "const"), "__restrict": ("RESTRICT", "restrict"),
    "__restrict__": ("RESTRICT", "restrict"), "__inline": ("INLINE", "inline"),
    "__inline__": ("INLINE", "inline"), "__volatile__": ("VOLATILE", "volatile"),
    "vec_step": ("SIZEOF", "vec_step"),
})
_ATTRIBUTE = {"__attribute__", "__attribute"}
_BUILTIN_TYPES = frozenset(TYPE_NAMES)


class _OpenCLLexer(c_lexer.CLexer):
    """pycparser's lexer with OpenCL's keywords (see the module docstring)."""

    def token(self):
        tok = super().token()
        while tok is not None and tok.type == "ID" and tok.value in _ATTRIBUTE:
            tok = self._after_attribute(tok)
        if tok is not None and tok.type == "ID" and tok.value in _RENAMED:
            tok.type, tok.value = _RENAMED[tok.value]
        return tok

    def _match_token(self):
        # A byte that is not UTF-8 (its stand-in, ``encoding``) outside a literal is
        # clang's "source file is not valid UTF-8": named here by its byte, where
        # pycparser would quote an unprintable character.
        if foreign_byte(self._lexdata[self._pos]) is None:
            return super()._match_token()
        raise ForeignByte(self.filename, self._lineno, self._pos - self._line_start + 1,
                          self._lexdata[self._pos])

    def _after_attribute(self, start):
        depth = 0
        while True:
            tok = super().token()
            if tok is None:
                self.error_func("__attribute__ must be followed by ((...))", start.lineno,
                                start.column)
                return None
            if tok.type == "LPAREN":
                depth += 1
            elif tok.type == "RPAREN":
                depth -= 1
                if depth == 0:
                    return super().token()
            elif depth == 0:
                self.error_func("__attribute__ must be followed by ((...))", start.lineno,
                                start.column)


class ParseFailure(Exception):
    """A parse error at (file, line, column)."""

    def __init__(self, file, line, col, reason):
        super().__init__(reason)
        self.file, self.line, self.col, self.reason = file, line, col, reason


class ForeignByte(ParseFailure):
    """A byte that is not UTF-8 outside a literal, at (file, line, column): ``char`` is its
    stand-in (``encoding``)."""

    def __init__(self, file, line, col, char):
        super().__init__(file, line, col, not_utf8(foreign_byte(char)))


class _Parser(c_parser.CParser):
    """pycparser with the OpenCL lexer; every error located, unknown type names named."""

    def __init__(self):
        super().__init__(lexer=_OpenCLLexer)

    def _is_type_in_scope(self, name):
        for scope in reversed(self._scope_stack):
            in_scope = scope.get(name)
            if in_scope is not None:
                return in_scope
        return name in _BUILTIN_TYPES

    def _parse_designator(self):
        if self._peek_type() == "LBRACKET":
            coord = self._tok_coord(self._peek())
            return c_ast.ArrayRef(None, super()._parse_designator(), coord)
        return super()._parse_designator()

    def _lex_error_func(self, msg, line, column):
        raise ParseFailure(self.clex.filename, line, column, msg)

    def _parse_error(self, msg, coord):
        token = None
        try:
            token = self._peek()
        except ParseFailure:
            raise
        except Exception:  # noqa: BLE001 - no token to point at; keep the plain message
            token = None
        line = getattr(coord, "line", None)
        col = getattr(coord, "column", None)
        if not line and token is not None:
            line, col = token.lineno, token.column
        file = getattr(coord, "file", None) or self.clex.filename
        reason = f"syntax error before '{msg[8:]}'" if msg.startswith("before: ") else msg
        if msg.startswith("before: ") or msg == "Invalid declaration":
            unknown = self._unknown_type_before()
            if unknown is not None:
                line, col, reason = unknown.lineno, unknown.column, f"unknown type name '{unknown.value}'"
        raise ParseFailure(file, line or 0, col or 1, reason)

    def _pop_scope(self):
        # pycparser asserts here when a '}' closes a scope that was never opened.
        if len(self._scope_stack) <= 1:
            mark = self._tokens.mark()
            token = self._tokens._buffer[mark - 1] if mark else None
            raise ParseFailure(self.clex.filename, token.lineno if token else 0,
                               token.column if token else 1, "'}' without a matching '{'")
        super()._pop_scope()

    def _unknown_type_before(self):
        """The identifier near the failing token that can only have been meant as a
        type: ``NAME name`` or ``NAME *name`` where NAME is not a declared type."""
        stream = self._tokens
        try:
            stream.peek(2)
        except ParseFailure:
            pass
        buffer = stream._buffer
        end = min(len(buffer), stream._index + 2)
        for k in range(end - 1, max(0, end - 4), -1):
            prev, tok = buffer[k - 1], buffer[k]
            if prev is not None and tok is not None and prev.type == "ID" and tok.type in ("ID", "TIMES") \
                    and (k < 2 or buffer[k - 2] is None or buffer[k - 2].type in
                         ("LBRACE", "RBRACE", "SEMI", "COMMA", "LPAREN", "CONST", "VOLATILE", "RESTRICT")):
                return prev
        return None


SYNTAX = "syntax error"


def parse(text, path, origin=None, out_lines=None):
    """The pycparser AST of preprocessed ``text``. Errors are ``KernelError``s at the
    user's file, line and column."""
    try:
        return _Parser().parse(text, path)
    except ParseFailure as exc:
        col, reason = exc.col, exc.reason
        if origin is not None and out_lines is not None and (exc.file, exc.line) in out_lines:
            col = origin.column(exc.file, exc.line, out_lines[(exc.file, exc.line)], col)
            if isinstance(exc, ForeignByte) and not _written_at(origin, exc.file, exc.line, col):
                reason += " (it is in the expansion of the macro used here)"
        raise KernelError(exc.file, exc.line, col, reason, SYNTAX) from None
    except c_parser.ParseError as exc:   # pycparser's own errors carry "file:line:col: msg"
        head, _, reason = str(exc).partition(": ")
        parts = head.rsplit(":", 2)
        if len(parts) == 3 and parts[1].isdigit():
            raise KernelError(parts[0], int(parts[1]), int(parts[2] or 1) if parts[2].isdigit() else 1,
                              reason, SYNTAX) from None
        raise KernelError(path, 0, 0, str(exc), SYNTAX) from None


def _written_at(origin, file, line, col):
    """Whether the user's own text has a byte that is not UTF-8 at ``line``:``col`` of
    ``file`` (else a macro's expansion put it there)."""
    lines = origin.lines.get(file, ())
    text = lines[line - 1] if 1 <= line <= len(lines) else ""
    return col <= len(text) and foreign_byte(text[col - 1]) is not None
