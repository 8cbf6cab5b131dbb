"""What users type and hand us, read strictly: numbers, text files and JSON.

Python's own readers are generous where a simulator should not be: ``int`` and
``Decimal`` take any Unicode digits (``int("١٢")`` is 12, ``int("²")`` fails only
later), ``read_text`` fails with a ``UnicodeDecodeError`` that names a byte offset but
no file, and ``json`` gives up on deep nesting with a ``RecursionError``. The readers
here accept exactly ASCII numbers, and every failure is an ``InputError`` whose text is
one line, ``FILE[:LINE:COL]: what is wrong``, which the command line prints as it is.
"""
import argparse
import codecs
import json
import re
from decimal import Decimal, InvalidOperation

_INTEGER = re.compile(r"[+-]?[0-9]+")
_DECIMAL = re.compile(r"[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?")
_HEX = re.compile(r"[+-]?0[xX][0-9a-fA-F]+")

MAX_JSON_NESTING = 200
"""Deepest nesting of JSON arrays and objects read (akita's and Chrome's are under 10)."""


class InputError(ValueError):
    """Input that cannot be read as what it should be; the text says where and why."""


def integer(text: str, what: str = "value", *, allow_hex: bool = False) -> int:
    """An integer written in ASCII digits (``0x`` hexadecimal too if ``allow_hex``)."""
    stripped = text.strip()
    if _INTEGER.fullmatch(stripped):
        return int(stripped)
    if allow_hex and _HEX.fullmatch(stripped):
        return int(stripped, 16)
    raise InputError(f"{what}: expected an integer in ASCII digits, got {text!r}")


def decimal(text: str, what: str = "value") -> Decimal:
    """An exact decimal number written in ASCII (``1.5``, ``-2e-9``)."""
    stripped = text.strip()
    if not _DECIMAL.fullmatch(stripped):
        raise InputError(f"{what}: expected a number in ASCII digits, got {text!r}")
    try:
        return Decimal(stripped)
    except InvalidOperation:  # the pattern admits only what Decimal reads; kept for safety
        raise InputError(f"{what}: expected a number, got {text!r}") from None


def real(text: str, what: str = "value") -> float:
    """A floating-point number written in ASCII."""
    return float(decimal(text, what))


def _argument_type(name, convert):
    def parse(text):
        try:
            return convert(text)
        except InputError as exc:
            raise argparse.ArgumentTypeError(str(exc).partition(": ")[2]) from None
    parse.__name__ = name  # argparse names the type in its messages
    return parse


def _at_least(low):
    def convert(text):
        value = integer(text)
        if value < low:
            raise InputError(f"value: must be at least {low}, got {value}")
        return value
    return convert


int_argument = _argument_type("integer", integer)
"""argparse ``type=`` for any integer in ASCII digits."""
count_argument = _argument_type("count", _at_least(0))
"""argparse ``type=`` for a count: an ASCII integer, zero or more."""
positive_argument = _argument_type("positive integer", _at_least(1))
"""argparse ``type=`` for an ASCII integer, one or more."""


def position(text: str, offset: int) -> tuple:
    """1-based (line, column) of character ``offset`` in ``text``."""
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


def utf8_error_in(path, chunk_bytes: int = 1 << 20) -> InputError:
    """The ``InputError`` for the first byte of file ``path`` that is not UTF-8 (for a
    file read as streamed text that failed to decode: read it again, in bytes, to say where)."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    line, col = 1, 0  # col: characters since the last newline

    def advance(text):
        nonlocal line, col
        newlines = text.count("\n")
        line += newlines
        col = len(text) - text.rfind("\n") - 1 if newlines else col + len(text)

    with open(path, "rb") as handle:
        while True:
            chunk = handle.read(chunk_bytes)
            try:
                advance(decoder.decode(chunk, final=not chunk))
            except UnicodeDecodeError as exc:
                # exc.object is what the decoder held back plus this chunk; all of it
                # before the bad byte is valid text not counted yet.
                advance(exc.object[:exc.start].decode("utf-8"))
                return InputError(f"{path}:{line}:{col + 1}: not UTF-8 text"
                                  f" (byte 0x{exc.object[exc.start]:02x}); save the file as UTF-8")
            if not chunk:
                return InputError(f"{path}: not UTF-8 text")


def read_bytes(path, what: str = "file") -> bytes:
    """The bytes of file ``path``."""
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except IsADirectoryError:
        raise InputError(f"{path}: is a directory, expected a {what}") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc.strerror}") from None


def read_text(path, what: str = "file") -> str:
    """The UTF-8 text of ``path`` (a leading byte-order mark is dropped)."""
    data = read_bytes(path, what)
    try:
        return data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError:
        raise utf8_error_in(path) from None


def nesting_offset(text: str, limit: int, opening: str = "[{", closing: str = "]}",
                   quotes: str = '"') -> int:
    """Offset of the first bracket nested deeper than ``limit`` in ``text``, or -1.

    Brackets inside quoted strings (with backslash escapes) do not count.
    """
    depth, i, n = 0, 0, len(text)
    while i < n:
        c = text[i]
        if c in quotes:
            i += 1
            while i < n and text[i] != c:
                i += 2 if text[i] == "\\" else 1
        elif c in opening:
            depth += 1
            if depth > limit:
                return i
        elif c in closing:
            depth -= 1
        i += 1
    return -1


def load_json(path):
    """The JSON value in file ``path``, with every failure as a located ``InputError``."""
    text = read_text(path, "JSON file")
    offset = nesting_offset(text, MAX_JSON_NESTING)
    if offset >= 0:
        line, col = position(text, offset)
        raise InputError(f"{path}:{line}:{col}: JSON nested more than {MAX_JSON_NESTING}"
                         " levels deep")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}:{exc.lineno}:{exc.colno}: invalid JSON: {exc.msg}") from None
