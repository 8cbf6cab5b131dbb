"""Bad input on the command line: one line (``FILE[:LINE:COL]: what is wrong``), a
non-zero exit, no traceback, nothing written and the inputs unchanged."""
import json

import pytest
from faults import assert_one_line_error, cli, sums

from simulator.tracing.synthetic import generate
from simulator.user_input import InputError, decimal, integer, nesting_offset, utf8_error_in

GOOD_KERNEL = "kernel void k(global int* a) {\n  a[get_global_id(0)] = 1;\n}\n"
RUN_KERNEL = ["--global", "64", "--local", "64", "--arg", "a=zeros:64", "--no-progress"]


def _files(tmp_path):
    # A byte that is not UTF-8 in a comment is read as clang reads it (test_source_encoding);
    # in code it is an error.
    (tmp_path / "latin1.cl").write_bytes(GOOD_KERNEL.replace("1;", "1\xe9; // caf\xe9").encode("latin-1"))
    (tmp_path / "good.cl").write_text(GOOD_KERNEL)
    (tmp_path / "binary.cl").write_bytes(bytes(range(256)) * 4)
    deep = "kernel void k(global int* a) {\n  a[0] = " + "(" * 130 + "1" + ")" * 130 + ";\n}\n"
    (tmp_path / "deep.cl").write_text(deep)
    (tmp_path / "latin1.json").write_bytes(
        '[{"name": "caf\xe9", "ph": "X", "ts": 1, "dur": 2}]'.encode("latin-1"))
    (tmp_path / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    (tmp_path / "config-latin1.json").write_bytes('{"l2": {"banks": 8}} // \xe9'.encode("latin-1"))
    (tmp_path / "config-deep.json").write_text('{"a": ' * 5000 + "1" + "}" * 5000)
    arabic = "\u0661\u0662"  # ١٢, digits Python's int() accepts
    (tmp_path / "arabic.csv").write_text(
        f"ID, ParentID, Kind, What, Where, Start, End\nx, , k, w, L, 0.{arabic}, 1\n")
    (tmp_path / "arabic.json").write_text(
        json.dumps([{"name": "n", "ph": "X", "ts": arabic, "dur": "1"}]))


CASES = [
    (["run-kernel", "latin1.cl", *RUN_KERNEL, "-o", "k.sqlite"],
     "latin1.cl:2:26: not UTF-8 text (byte 0xe9)"),
    (["run-kernel", "binary.cl", *RUN_KERNEL, "-o", "k.sqlite"], "binary.cl:3:"),  # \r ends line 2
    (["run-kernel", "deep.cl", *RUN_KERNEL, "-o", "k.sqlite"], "deep.cl:2:109: nested more than"),
    (["import", "latin1.json", "-o", "i.sqlite"], "latin1.json:1:15: not UTF-8 text (byte 0xe9)"),
    (["import", "deep.json", "-o", "i.sqlite"], "deep.json:1:201: JSON nested more than 200"),
    (["run", "vectoradd", "--config", "config-latin1.json", "--no-progress", "-o", "r.sqlite"],
     "config-latin1.json:1:25: not UTF-8 text"),
    (["run", "vectoradd", "--config", "config-deep.json", "--no-progress", "-o", "r.sqlite"],
     "config-deep.json:1:1201: JSON nested more than 200"),
    (["synth", "--tasks", "-5", "-o", "s.sqlite"], "--tasks: must be at least 1, got -5"),
    (["synth", "--tasks", "\u0661\u0660", "-o", "s.sqlite"], "--tasks: expected an integer in ASCII"),
    (["run", "vectoradd", "--window", "\u0661:\u0662\u0660", "-o", "r.sqlite"], "ASCII digits"),
    (["run", "vectoradd", "--set", "l2.banks=\uff18", "-o", "r.sqlite"], "l2.banks: expected int"),
    (["run-kernel", "good.cl", "--global", "\uff16\uff14", "--local", "64", "-o", "k.sqlite"],
     "--global: expected sizes"),
    (["run-kernel", "good.cl", "--global", "64", "--local", "64", "--arg", "a=zeros:\u0666\u0664",
      "-o", "k.sqlite"], "--arg a: expected random:N"),
    (["import", "arabic.csv", "-o", "i.sqlite"], "arabic.csv:2: Start is not a number"),
    (["import", "arabic.json", "-o", "i.sqlite"], "arabic.json:1:2: ts is not a number"),
    (["info", "--top", "-1", "t.sqlite"], "--top: must be at least 0"),
    (["synth", "--tasks", "10", "-o", "."], ".: is a directory"),
]


@pytest.mark.parametrize("argv, message", CASES, ids=[" ".join(a[:2]) + f" {i}"
                                                     for i, (a, _) in enumerate(CASES)])
def test_bad_input_is_one_line_and_changes_nothing(tmp_path, argv, message):
    _files(tmp_path)
    generate(tmp_path / "t.sqlite", tasks=200, seed=1)
    before = sums(tmp_path)
    done = cli(*argv, cwd=tmp_path)
    assert_one_line_error(done, message)
    assert sums(tmp_path) == before


def test_ascii_numbers_only():
    assert integer(" 42 ") == 42 and integer("-7") == -7 and integer("0x1F", allow_hex=True) == 31
    assert str(decimal("1.5e-9")) == "1.5E-9" and str(decimal(".5")) == "0.5"
    for text in ("\u0664\u0662", "4\u00b2", "1_000", "0x10", "", "1e5", "\uff14\uff12"):
        with pytest.raises(InputError):
            integer(text)
    for text in ("\u0661.5", "nan", "inf", "1.2.3", "1e", "--1", ""):
        with pytest.raises(InputError):
            decimal(text)


def test_nesting_is_counted_outside_strings():
    assert nesting_offset('["[[[[", [[1]]]', 2) == 10
    assert nesting_offset('["[[[[", [1]]', 2) == -1
    assert nesting_offset("'((((' (x)", 0, "(", ")", "'") == 7


def test_bad_utf8_is_located_across_read_chunks(tmp_path):
    path = tmp_path / "t.txt"
    path.write_bytes(b"ab\nc\xc3\xa9d\n\xc3\xa9\xc3\xa9x\xff")
    for chunk in (1, 2, 3, 1 << 20):
        assert str(utf8_error_in(path, chunk)).startswith(f"{path}:3:4: not UTF-8 text (byte 0xff)")
