"""Kernel sources as they are: bytes that are not UTF-8 read as clang reads them.

In a comment, a skipped ``#if`` block or an unused macro such a byte is nothing; in a
narrow string or character literal it is that byte of the program; anywhere else it is
a one-line error at its file, line and column. A UTF-8 byte-order mark and CRLF line
ends keep working, with exact positions."""
import sqlite3
from pathlib import Path

import numpy as np
import pytest
from faults import assert_one_line_error, cli

from simulator.kernels import KernelError, Memory, compile_source, launch
from simulator.kernels.encoding import literal_bytes, shown, text_of
from simulator.kernels.includes import Confinement

SDK_STYLE = Path(__file__).parent / "data" / "latin1_licence.cl"
NOT_UTF8 = "not UTF-8 text (byte 0x{:02x}); a byte that is not UTF-8 may stand only in a comment"


def _compile(data: bytes, path="t.cl", **kwargs):
    return compile_source(path, text_of(data), **kwargs)


def _run(data: bytes, n=4):
    """Run kernel ``k(global int *o)`` of ``data`` on ``n`` work-items; ``o`` after it."""
    out = np.zeros(n, np.int32)
    memory = Memory()
    launch(_compile(data), None, (n,), (n,), {"o": memory.buffer("o", out)})
    return out


def _error(data: bytes, path="t.cl", **kwargs) -> str:
    with pytest.raises(KernelError) as info:
        _compile(data, path, **kwargs)
    return str(info.value)


def test_an_sdk_style_kernel_with_a_latin1_licence_runs_as_it_is(tmp_path):
    data = SDK_STYLE.read_bytes()
    assert b"Copyright \xa9 2015 Advanced Micro Devices" in data
    with pytest.raises(UnicodeDecodeError):
        data.decode("utf-8")
    done = cli("run-kernel", SDK_STYLE, "--global", "32x16", "--local", "8x8",
               "--arg", "output=zeros:512", "--arg", "input=range:512", "--arg", "block=local:64",
               "--arg", "width=32", "--arg", "height=16", "--save", "output=out.npy",
               "-o", "t.sqlite", "--no-progress", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    matrix = np.arange(512, dtype=np.float32).reshape(16, 32)
    assert (np.load(tmp_path / "out.npy").reshape(32, 16) == matrix.T).all()
    with sqlite3.connect(tmp_path / "t.sqlite") as db:
        (text,) = db.execute("SELECT text FROM kernel_source").fetchone()
    # Stored as shown: the © is one character where the file has one byte, so every
    # line and column of the trace is the file's.
    assert text == data.decode("latin-1")
    assert text.split("\n")[1] == "Copyright \u00a9 2015 Advanced Micro Devices, Inc. All rights reserved."


NOT_READ = {
    "comments": b"/* \xa9 2015 caf\xe9 \xff\xfe */\n"
                b"kernel void k(global int *o) {  // r\xe9sum\xe9\n"
                b"  o[get_global_id(0)] = 1;  /* \x81\x8d */ // \x93quoted\x94\n}\n",
    # C splices lines before it finds comments: a // comment ending in a backslash goes
    # on to the next line, code and all (and a splice may have spaces, as clang reads it).
    "a continued line comment": b"kernel void k(global int *o) {\n"
                                b"  o[get_global_id(0)] = 1;  // caf\xe9 \\\n"
                                b"  o[get_global_id(0)] = 2; \xe9\n"
                                b"  // a splice with spaces \\  \n"
                                b"  o[get_global_id(0)] = 3;\n}\n",
    "a skipped block and an unused macro": b"#if 0\n  int caf\xe9 = \xa9;\n#endif\n"
                                           b"#define UNUSED r\xe9sum\xe9\n"
                                           b"kernel void k(global int *o) { o[get_global_id(0)] = 1; }\n",
}


@pytest.mark.parametrize("source", NOT_READ.values(), ids=NOT_READ)
def test_bytes_where_clang_does_not_read_them_are_nothing(source):
    assert (_run(source) == 1).all()


def test_a_byte_in_a_printf_literal_prints_as_shown(capfd):
    source = (b"kernel void k(global int *o) {\n"
              b'  if (get_global_id(0) == 0) printf("\xa9 2015 %s \\x93%d\\x94\\n", "caf\xe9", 7);\n'
              b'  if (get_global_id(0) == 0) printf("\xc2\xa9 UTF-8 \\xc2\\xa9 \\101\\n");\n'
              b"}\n")
    _run(source)
    # Latin-1 bytes show as windows-1252 characters; UTF-8 bytes, spelled or escaped, as text.
    assert capfd.readouterr().out == "\u00a9 2015 caf\u00e9 \u201c7\u201d\n\u00a9 UTF-8 \u00a9 A\n"


def test_a_byte_in_a_character_literal_is_that_char():
    source = b"kernel void k(global int *o) { o[0] = '\xe9'; o[1] = '\\xe9'; o[2] = '\\''; }\n"
    assert list(_run(source, 4)[:3]) == [-23, -23, ord("'")]   # (signed) char 0xE9


def test_literal_bytes_are_clangs():
    assert literal_bytes('"a\\tb\\0\\x7f\\u00e9\\?\\q"') == b"a\tb\x00\x7f\xc3\xa9?q"
    assert literal_bytes('"\udca9"') == b"\xa9"
    for token, reason in (("L'\udce9'", "in a literal with the prefix L"),
                          ('"\\x100"', "escape sequence out of range"),
                          ('"\\U00110000"', "invalid universal character")):
        with pytest.raises(ValueError, match=reason):
            literal_bytes(token)


def test_shown_is_one_character_per_byte():
    data = bytes(range(0x80, 0x100))
    text = text_of(b"\xef\xbb\xbf" + data)
    assert len(text) == len(shown(text)) == 128
    assert shown(text)[:2] == "\u20ac\x81" and shown(text)[0x29] == "\u00a9"   # €, undefined, ©
    assert shown("caf\u00e9") == "caf\u00e9"   # text stays as it is


@pytest.mark.parametrize("source, where, byte", [
    (b"kernel void k(global int *o) {\n  int caf\xe9 = 1;\n}\n", "t.cl:2:10:", 0xE9),
    (b"kernel void k(global int *o) {\n  o[0] = 1 \xa9 2;\n}\n", "t.cl:2:12:", 0xA9),
    (b"/* \xa9 */ kernel void k(global int *o) { o[0] = 1; } \xff\n", "t.cl:1:52:", 0xFF),
    (b"#if 1\xe9\n#endif\nkernel void k(global int *o) { }\n", "t.cl:1:6:", 0xE9),
])
def test_a_byte_in_code_is_an_error_at_its_place(source, where, byte):
    assert _error(source).startswith(f"{where} {NOT_UTF8.format(byte)}")


def test_a_macro_that_brings_a_byte_into_code_is_named_at_its_use():
    source = b"#define ONE 1\xe9\nkernel void k(global int *o) {\n  o[0] = ONE;\n}\n"
    message = _error(source)
    assert message.startswith(f"t.cl:3:10: {NOT_UTF8.format(0xE9)}")
    assert message.endswith("(it is in the expansion of the macro used here)")


def test_a_prefixed_literal_must_be_utf8():
    source = b"kernel void k(global int *o) {\n  o[0] = L'\xe9';\n}\n"
    assert _error(source) == ("t.cl:2:10: not UTF-8 text (byte 0xe9) in a literal with the"
                              " prefix L, whose characters must be UTF-8")


def test_a_header_is_read_as_bytes_too(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("licence.h").write_bytes(b"\xef\xbb\xbf/* \xa9 2015 */\r\n#define VALUE 1 // caf\xe9\r\n")
    Path("bad.h").write_bytes(b"/* \xa9 */\nint r\xe9sum\xe9;\n")
    source = b'#include "licence.h"\nkernel void k(global int *o) { o[0] = VALUE; }\n'
    assert _compile(source, "k.cl").kernels["k"]
    bad = source.replace(b"licence.h", b"bad.h")
    assert _error(bad, "k.cl").startswith(f"bad.h:2:6: {NOT_UTF8.format(0xE9)}")
    # On a server the header's own text is not quoted, only where and what kind.
    confined = Confinement("k.cl")
    with pytest.raises(KernelError) as info:
        _compile(bad, "k.cl", confinement=confined)
    assert str(confined.redact(info.value)) == "bad.h:2:6: syntax error in an included file" \
                                              " (its text is not shown)"


def test_a_byte_order_mark_and_crlf_keep_positions_exact():
    source = (b"\xef\xbb\xbf/* \xa9 */\r\nkernel void k(global int *o) {\r\n"
              b"  o[get_global_id(0)] = 1; // \xe9 \\\r\n  o[0] = 2;\r\n}\r\n")
    assert (_run(source) == 1).all()
    # An error after a comment on a CRLF line is at its own column (it once fell back
    # to the start of the line), as on an LF line.
    for newline in (b"\r\n", b"\n", b"\r"):
        bad = (b"kernel void k(global int *o) {\n  /* \xa9 */ o[0] = 1 +;\n}\n").replace(b"\n", newline)
        assert _error(bad).startswith("t.cl:2:21: ")
        assert _error(bad.replace(b"+", b"\xe9")).startswith(f"t.cl:2:20: {NOT_UTF8.format(0xE9)}")


def test_the_command_line_gives_one_line_for_a_byte_in_code(tmp_path):
    (tmp_path / "k.cl").write_bytes(b"/* \xa9 */\nkernel void k(global int *o) {\n  o[0] = 1\xe9;\n}\n")
    done = cli("run-kernel", "k.cl", "--global", "64", "--local", "64", "--arg", "o=zeros:64",
               "-o", "k.sqlite", "--no-progress", cwd=tmp_path)
    assert_one_line_error(done, f"k.cl:3:11: {NOT_UTF8.format(0xE9)}")
    assert not (tmp_path / "k.sqlite").exists()


def test_a_message_quoting_a_byte_shows_it():
    assert _error(b"#error caf\xe9 \xa9\n") == "t.cl:1:1: #error caf\u00e9 \u00a9"
