"""Small arithmetic, pinned down: tests that fail when a rounding, a boundary or an
operator is wrong (written against the survivors of ``scripts/mutate.py``).

Each test names the slip it catches. Mutants left alive on purpose are equivalent
changes, explained in a comment at the line concerned.
"""
from decimal import Decimal

import pytest

from dashapp.daisen import metrics
from simulator.tracing.importers.loader import TraceFormatError, scaled_to_ps, seconds_to_ps


# -- imported times ----------------------------------------------------------------------
@pytest.mark.parametrize("value, ps", [
    ("0.0000000000016", 2), ("-0.0000000000016", -2),   # text: 1.6 ps rounds up, not down
    ("1.4e-12", 1), ("2.5e-12", 2), ("3.5e-12", 4),      # halves to even, as round() does
    (1.6e-12, 2), (-1.6e-12, -2), (2.001e-9, 2001),      # floats (akita's REAL columns)
    (Decimal("7.0000000000009"), 7_000_000_000_001),     # Chrome's exact decimals
    (3, 3_000_000_000_000), (10**6, 10**18),             # integers, past the float path
    # A day into a run: past 2**53 ps a float product is off by a few ps, so the
    # exact value of the double is scaled instead.
    (86400.23796462709, 86400237964627086),
])
def test_seconds_become_the_nearest_picosecond(value, ps):
    assert seconds_to_ps(value, "f:1", "Start") == ps


@pytest.mark.parametrize("value, unit, ps", [
    (Decimal("1.0000017"), 10**6, 1_000_002), ("0.0000004", 10**6, 0), ("0.0000005", 10**6, 0),
    ("0.0000015", 10**6, 2), (1000.7, 1, 1001), (-1000.7, 1, -1001), (2**60 + 0.0, 1, 2**60),
])
def test_scaled_times_become_the_nearest_picosecond(value, unit, ps):
    assert scaled_to_ps(value, unit, "f:1", "ts") == ps


@pytest.mark.parametrize("value", [True, False, None, "1\u0661", "nan", float("inf"), [1], b"1"])
def test_what_is_not_a_number_is_refused(value):
    with pytest.raises(TraceFormatError, match="f:1: ts is not a number"):
        scaled_to_ps(value, 10**6, "f:1", "ts")


@pytest.mark.parametrize("value", ["1e999999999", Decimal("-1e999999999"), 10**400, 1e300,
                                   "9223372036854.775808", "-9223372036854.775809",
                                   1.7e15])  # an epoch in microseconds: needs an origin
def test_times_past_64_bits_are_refused_at_once(value):
    with pytest.raises(TraceFormatError, match="f:1: ts is out of range"):
        scaled_to_ps(value, 10**6, "f:1", "ts")


def test_the_largest_times_are_kept():
    assert scaled_to_ps("9223372036854.775807", 10**6, "f:1", "ts") == 2**63 - 1
    assert scaled_to_ps("-9223372036854.775808", 10**6, "f:1", "ts") == -(2**63)
    assert scaled_to_ps(2**63 - 1, 1, "f:1", "ts") == 2**63 - 1


# -- the Overview's bins -----------------------------------------------------------------
@pytest.mark.parametrize("t0, t1, width, expected", [
    (0, 15, 10, (0, 2)),     # the last, partial bin is kept: the end rounds up
    (5, 25, 10, (0, 3)),
    (10, 20, 10, (1, 1)),    # an end on an edge adds no bin
    (0, 10, 10, (0, 1)),
    (3, 4, 10, (0, 1)),      # never fewer than one bin
    (20, 21, 10, (2, 1)),
])
def test_bin_range_covers_the_window_and_no_more(t0, t1, width, expected):
    assert metrics.bin_range(t0, t1, width) == expected


@pytest.mark.parametrize("base, t0, t1, points, level", [
    (1000, 0, 100_000, 100, 0),        # a point per base bin: level 0, not 1
    (1000, 0, 50_000, 100, 0),         # finer than the base: still level 0
    (1000, 0, 200_000, 100, 1),
    (1000, 0, 400_000, 100, 2),
    (1000, 0, 282_000, 100, 1),        # log2(2.82) = 1.496: the nearest level in log2
    (1000, 0, 283_000, 100, 2),        # log2(2.83) = 1.501
    (1000, 0, 283_000, 0, 8),          # no points asked for: one bin
    (1000, 10**6, 10**6 + 100_000, 100, 0),  # the window's length counts, not its end
])
def test_choose_level_is_nearest_in_log2(base, t0, t1, points, level):
    assert metrics.choose_level(base, t0, t1, points) == level
