"""A kernel file's bytes, read as clang reads them.

clang takes a source file as UTF-8, but it looks at the bytes of a comment only to find
where the comment ends, and it copies the bytes of a narrow string or character literal
into the program as they are (with a warning, ``-Winvalid-source-encoding``: clang's
tests ``Lexer/string-literal-encoding.c`` and ``Lexer/char-literal-encoding-error.c``,
where a Latin-1 ``'é'`` is the char 0xE9). Invalid UTF-8 in a comment draws nothing
unless one asks for ``-Winvalid-utf8``, which is off by default (llvm D128059). Anywhere
else a byte that is not UTF-8 is the error "source file is not valid UTF-8", except in a
block an ``#if`` skips and in a directive's own text, which clang does not judge until
it is used (``Lexer/utf8-invalid.c``). So AMD's APP SDK kernels, whose licence comment
carries a Latin-1 ``©``, compile as they are.

A file is decoded as UTF-8 with each byte that is not UTF-8 kept as one *stand-in*
character, U+DC00 + the byte (Python's ``surrogateescape``). A byte
or a UTF-8 character is one character either way, so every line and column is the
file's; the comment remover and the preprocessor carry a stand-in like any other
character, and the parser refuses one outside a literal (``foreign_byte``) at its
line and column.

A stand-in is not text: SQLite's TEXT, JSON and a terminal refuse it. What is stored
and shown (the trace's ``kernel_source.text``, messages, ``printf``'s output) is
``shown(text)``, where each stand-in becomes the character its byte is in
windows-1252 (a byte windows-1252 leaves undefined, the Latin-1 control of that code):
what a browser makes of a page labelled ISO-8859-1, as the WHATWG Encoding Standard
maps that label. The SDK's ``©`` shows as ``©``, and it is still one character per
byte, so a line and column of the trace point where they do in the file. The mapping
is for display only: a ``©`` in the shown text was a UTF-8 ``©`` or the byte 0xA9 in
the file, which alone keeps the difference.
"""
import re

_BOM = "\ufeff"
_FIRST, _LAST = 0xDC80, 0xDCFF   # the stand-ins of bytes 0x80..0xFF


def _windows_1252(byte: int) -> str:
    try:
        return bytes([byte]).decode("cp1252")
    except UnicodeDecodeError:   # 0x81, 0x8D, 0x8F, 0x90, 0x9D
        return chr(byte)


_SHOWN = {stand_in: _windows_1252(stand_in - 0xDC00) for stand_in in range(_FIRST, _LAST + 1)}


def text_of(data: bytes) -> str:
    """The text of a kernel file's ``data``: UTF-8, a byte that is not UTF-8 kept as its
    stand-in, a leading byte-order mark dropped (clang skips one too), line ends as
    ``unix_newlines`` makes them."""
    return unix_newlines(data.decode("utf-8", "surrogateescape").removeprefix(_BOM))


def unix_newlines(text: str) -> str:
    """``text`` with each CRLF and each lone CR as LF. clang and the preprocessor (pcpp)
    end a line at any of the three; counting lines and columns by LF alone would put
    an error on a CRLF line past the end of its line, and one after a lone CR a line off."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def shown(text: str) -> str:
    """``text`` with each stand-in as its windows-1252 character (see the module
    docstring): the same length, so positions in it are positions in ``text``."""
    return text.translate(_SHOWN)


def foreign_byte(char: str) -> int | None:
    """The byte ``char`` stands in for, or None when it is a character of the text."""
    code = ord(char)
    return code - 0xDC00 if _FIRST <= code <= _LAST else None


def not_utf8(byte: int) -> str:
    """The reason given for byte ``byte`` where it changes the program."""
    return (f"not UTF-8 text (byte 0x{byte:02x}); a byte that is not UTF-8 may stand"
            " only in a comment or a string or character literal")


def foreign_column(line: str) -> int | None:
    """The 1-based column of the first stand-in of ``line`` outside a string or
    character literal (the preprocessor sees comments already blanked), or None."""
    quote = None
    i = 0
    while i < len(line):
        char = line[i]
        if quote is not None:
            if char == "\\":
                i += 1
            elif char == quote:
                quote = None
        elif char in "\"'":
            quote = char
        elif foreign_byte(char) is not None:
            return i + 1
        i += 1
    return None


_ESCAPE = re.compile(rb"\\(?:([0-7]{1,3})|x([0-9A-Fa-f]+)|u([0-9A-Fa-f]{4})|U([0-9A-Fa-f]{8})|(.))",
                     re.DOTALL)
_SIMPLE = {b"a": b"\a", b"b": b"\b", b"f": b"\f", b"n": b"\n", b"r": b"\r", b"t": b"\t",
           b"v": b"\v"}


def literal_bytes(token: str) -> bytes:
    """The bytes of a string or character literal ``token`` (``"..."``, ``L'x'``...), as
    clang puts them in the program: UTF-8 for the characters, each stand-in's own byte,
    escapes decoded (C 6.4.4.4; an unknown ``\\c`` is ``c``, as clang reads it with a
    warning). ``ValueError`` where clang refuses: an escape past a byte, an invalid
    universal character name, a byte that is not UTF-8 in a literal with a prefix (its
    characters must be decoded, and that byte is none)."""
    prefix, _, body = token.partition(token[-1])
    raw = body[:-1].encode("utf-8", "surrogateescape")
    foreign = [foreign_byte(c) for c in body if foreign_byte(c) is not None]
    if prefix and foreign:
        raise ValueError(f"not UTF-8 text (byte 0x{foreign[0]:02x}) in a literal with the"
                         f" prefix {prefix}, whose characters must be UTF-8")

    def one(match):
        octal, hexadecimal, short, long, other = match.groups()
        if octal or hexadecimal:
            value = int(octal, 8) if octal else int(hexadecimal, 16)
            if value > 0xFF:
                raise ValueError(f"escape sequence out of range in {shown(token)}")
            return bytes([value])
        if short or long:
            code = int((short or long).decode(), 16)
            if code > 0x10FFFF or 0xD800 <= code <= 0xDFFF:
                raise ValueError(f"invalid universal character in {shown(token)}")
            return chr(code).encode()
        return _SIMPLE.get(other, other)

    return _ESCAPE.sub(one, raw)


def literal_text(token: str) -> str:
    """The text of a string literal ``token`` as ``printf`` shows it: its bytes
    (``literal_bytes``) as UTF-8, a byte that is not UTF-8 as ``shown`` shows it: the
    literal ``"© 2015"`` of a Latin-1 file (the byte 0xA9) prints ``© 2015``, where a
    device would send the byte 0xA9 to a terminal, which shows ``�``. So a run edited in
    the app, whose text is UTF-8, prints what the file printed."""
    return shown(literal_bytes(token).decode("utf-8", "surrogateescape"))
