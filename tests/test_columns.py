"""Exact decimal text to picoseconds: the C loop, its Python reference and Decimal agree."""
import io
from decimal import Decimal

import numpy as np
import pandas as pd
from hypothesis import given
from hypothesis import strategies as st

from simulator import build
from simulator.tracing.importers import columns as decimals

# the reference and, where built, the C loops (hypothesis tests take no fixtures)
IMPLEMENTATIONS = [build.module("simulator.tracing.importers._columns", name)
                   for name in build.available_builds()]


def _exact(text, exponent):
    """The whole-number product, or None where the fast readers must decline."""
    try:
        value = Decimal(text.strip()) * (Decimal(10) ** exponent)
    except ArithmeticError:
        return None
    if value != value.to_integral_value() or abs(value) > 2 ** 63 - 1:
        return None
    return int(value)


numbers = st.one_of(
    st.decimals(allow_nan=False, allow_infinity=False, places=12, min_value=-10 ** 6, max_value=10 ** 6),
    st.decimals(allow_nan=False, allow_infinity=False, min_value=-10 ** 7, max_value=10 ** 7))
texts = st.one_of(
    numbers.map(str),
    numbers.map(lambda d: f"{d:e}"),
    st.sampled_from(["", ".", "-", "1e", "e5", "1..2", "abc", " 1.5 ", "+2.5E-3", "0.000006023000",
                     "1.0000000000000000000000001", "99999999999999999999", "1e400", "٣"]))


@given(values=st.lists(texts, max_size=20), exponent=st.sampled_from([0, 6, 12]))
def test_fast_readers_are_exact_agree_and_read_every_plain_time(values, exponent):
    results = [module.to_ps(values, exponent) for module in IMPLEMENTATIONS]
    for got, ok in results[1:]:  # the C loop does what its reference does
        assert ok.tolist() == results[0][1].tolist()
        assert got[ok].tolist() == results[0][0][ok].tolist()
    got, ok = results[0]
    for text, value, good in zip(values, got.tolist(), ok.tolist()):
        expected = _exact(text, exponent)
        if good:
            assert value == expected, text
        elif expected is not None and decimals.PLAIN.match(text) and "e" not in text.lower():
            assert len(text.strip(" -+").replace(".", "").lstrip("0")) > 19, text


def test_typical_times():
    for module in IMPLEMENTATIONS:
        values, ok = module.to_ps(["0.000006023000", "1e-9", "-2.5", "1419247333430.849"], 12)
        assert ok.tolist() == [True, True, True, False]  # the last overflows int64 ps
        assert values[:3].tolist() == [6_023_000, 1_000, -2_500_000_000_000]
        assert isinstance(ok, np.ndarray) and ok.dtype == bool


def _rows(module, text, line=2, final=True):
    consumed, line, rows, problem = module.read_rows(text, line, final)
    return consumed, line, {k: (v.tolist() if hasattr(v, "tolist") else v)
                            for k, v in vars(rows).items()}, problem


def test_padding_at_either_end_is_stripped():
    """A field that starts (inside quotes) or ends with a space is stripped; inner spaces
    and a field's other whitespace stay."""
    for module in IMPLEMENTATIONS:
        _, _, rows, problem = _rows(module, 'a b, x ,\tk," lead",L,1,2\ntrail ,,k,w,L,1,2\n')
        assert problem is None
        assert rows["ids"] == ["a b", "trail"] and rows["parents"] == ["x", None]
        assert rows["kinds"] == [("\tk", "lead"), ("k", "w")]


def test_rows_as_pandas_reads_them():
    """Quoted fields, doubled quotes, text after a closing quote, line breaks inside quotes,
    \r\n and \r row ends, spaces skipped at a field's start: as pandas reads the same text."""
    text = ('"a, b" , , "k""1", "w\nx",L,0.5,1\r\nq,"a, b",k, w ,"L[0]",1e-9, 2\rz"x,q,k,w,L,3,4\n')
    frame = pd.read_csv(io.StringIO(text), header=None, dtype=str, keep_default_na=False,
                        skipinitialspace=True, engine="c", quotechar='"', index_col=False)
    expected = [[f.strip() if f[:1] == " " or f[-1:] == " " else f for f in row[:5]]
                for row in frame.values.tolist()]
    for module in IMPLEMENTATIONS:
        _, _, rows, problem = _rows(module, text)
        assert problem is None
        got = [[i, p or "", *rows["kinds"][k], rows["wheres"][w]] for i, p, k, w
               in zip(rows["ids"], rows["parents"], rows["kind"], rows["where"])]
        assert got == expected
        assert rows["lines"] == [2, 4, 5]  # the second row starts after a line break in quotes


def test_damaged_rows_stop_reading_with_their_line():
    for module in IMPLEMENTATIONS:
        assert _rows(module, "a,,k,w,L,1,2\n\nb,,k,w,L,1,2,3\n")[3] == (4, "expected 7 fields, found 8")
        assert _rows(module, "a,,k,w,L,1\n")[3] == (2, "expected 7 fields, found 6")
        assert _rows(module, 'a,,k,w,L,1,2\nb,"\n\n')[3] == (3, "the file ends inside a quoted field")
        _, _, rows, problem = _rows(module, "\n ,,,,,,\n,x,,,,,\n  \r\n")  # blank rows
        assert problem is None and rows["ids"] == []


csv_text = st.lists(st.sampled_from(["a", "é", "1", ".", "5", "e-9", " ", "\t", ",", '"', '""',
                                     "\n", "\r", "\r\n", ",,,,,,"]), max_size=60).map("".join)


@given(text=csv_text, cuts=st.lists(st.integers(0, 80), max_size=4))
def test_the_builds_read_the_same_rows_in_any_blocks(text, cuts):
    """Whole, or in blocks cut anywhere (each read carries the unread rest on), the C loop
    reads what its reference reads."""
    whole = [_rows(module, text) for module in IMPLEMENTATIONS]
    assert all(w == whole[0] for w in whole)
    for module in IMPLEMENTATIONS:
        rest, line, ids, problem = "", 2, [], None
        bounds = sorted({0, *(c for c in cuts if c < len(text)), len(text)})
        pieces = [text[a:b] for a, b in zip(bounds, bounds[1:])] + [""]  # "" only at the end
        for piece in pieces:
            consumed, line, rows, problem = module.read_rows(rest + piece, line, not piece)
            ids += rows.ids
            if problem:
                break
            rest = (rest + piece)[consumed:]
        assert (ids, problem) == (whole[0][2]["ids"], whole[0][3])
