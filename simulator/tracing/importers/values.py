"""Values read out of foreign traces: exact times, JSON text that stays JSON, and the error
for input that breaks its format.

Every time an importer passes on is an exact integer number of picoseconds on the
source's clock, however large (epoch-scale profiles exceed 2**63 ps); these helpers
convert the source's decimal or binary numbers without rounding them.
"""
import json
import math
from decimal import ROUND_HALF_EVEN, Decimal, InvalidOperation

from ... import user_input
from ..writer import TraceError

PS_PER_SECOND = Decimal(10) ** 12


class TraceFormatError(TraceError):
    """Input that does not follow its format; the message gives the file position."""


def _json_default(value):
    return str(value) if isinstance(value, Decimal) else repr(value)


# One encoder for every task: ``json.dumps`` with options builds a new one per call.
_ENCODER = json.JSONEncoder(default=_json_default, sort_keys=True, allow_nan=False)


def details_json(value) -> str:
    """The JSON text an importer stores for a task's details or a run's metadata: keys
    sorted, decimals as strings, and so are NaN and the infinities (JSON has no spelling
    for them, and SQLite's JSON functions refuse Python's)."""
    try:
        return _ENCODER.encode(value)
    except ValueError:  # a NaN or an infinity somewhere in it
        return _ENCODER.encode(_finite(value))


def _finite(value):
    if isinstance(value, float) and not math.isfinite(value):
        return repr(value)
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def seconds_to_ps(value, where, column):
    """Exact picoseconds from a number of seconds (decimal text, or a float from SQLite)."""
    return _scaled(value, PS_PER_SECOND, where, column)


def scaled_to_ps(value, ps_per_unit, where, column):
    """Exact picoseconds from a number in some unit (µs in Chrome, ps in akita v5)."""
    return _scaled(value, Decimal(ps_per_unit), where, column)


MAX_TIME_DIGITS = 30
"""Times of more digits of picoseconds (past 10**30 ps, 3e10 years) are refused before
they are converted: no clock reads that far, and 1e999999999 must not become a
billion-digit integer. Smaller times of any size are kept exactly; the loader stores
them relative to the trace's origin, which must fit 64 bits."""


def _scaled(value, factor, where, column):
    number_type = isinstance(value, (int, float)) and not isinstance(value, bool)
    if isinstance(value, float) or (number_type and abs(value) < 2 ** 52):
        # A binary float holds the nearest double to a whole number of picoseconds; for
        # times under ~1000 s its error is far below half a picosecond, so rounding the
        # float product recovers that number exactly (and much faster than Decimal).
        # Past 2**53 a float product is off by more than a picosecond (an epoch-scale
        # time by thousands); below, either path gives the same integer, so the bound
        # sits a factor of two under the limit, and lowering it changes only the speed.
        scaled = value * float(factor)
        if abs(scaled) < 2 ** 52:
            return int(round(scaled))
    try:
        if isinstance(value, Decimal):
            number = value
        elif number_type:
            number = Decimal(value)
        else:
            # Text: ASCII digits only (Decimal would take any script's digits as well).
            number = user_input.decimal(value if isinstance(value, str) else repr(value))
        if not number.is_finite():
            raise InvalidOperation
    except (InvalidOperation, ValueError):
        raise TraceFormatError(f"{where}: {column} is not a number: {value!r}") from None
    if number and number.adjusted() + factor.adjusted() >= MAX_TIME_DIGITS:  # before converting
        raise TraceFormatError(f"{where}: {column} is out of range (past 10**{MAX_TIME_DIGITS}"
                               f" picoseconds): {str(value)[:40]!r}")
    # To the nearest picosecond, halves to even, as ``round`` does on the float path.
    return int((number * factor).to_integral_value(rounding=ROUND_HALF_EVEN))


def decimal_seconds(ps):
    """Exact decimal text of ``ps`` picoseconds in seconds, without trailing zeros."""
    sign = "-" if ps < 0 else ""
    whole, frac = divmod(abs(ps), 10 ** 12)
    return f"{sign}{whole}.{frac:012d}".rstrip("0").rstrip(".") or "0"


def parse_decimal_seconds(text):
    """Exact picoseconds from ``decimal_seconds`` text."""
    return int(Decimal(text) * PS_PER_SECOND)
