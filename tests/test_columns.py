"""Exact decimal text to picoseconds: the C loop, its Python reference and Decimal agree."""
from decimal import Decimal

import numpy as np
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


def test_padding_is_found_at_either_end():
    for module in IMPLEMENTATIONS:
        assert not module.padded(["a b", "x", ""])
        assert module.padded(["ok", " lead"]) and module.padded(["trail ", "ok"])
