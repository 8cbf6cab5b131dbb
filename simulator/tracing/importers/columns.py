"""Loops over a block of text columns (a CSV's), the readable reference of ``_columns.pyx``:
exact decimal text to integer picoseconds, and whether any field is padded with spaces.

``to_ps(texts, exponent)`` multiplies each decimal text by ``10**exponent`` (12 for
seconds to ps, 6 for µs to ps) and returns (values, ok): int64 values, and a mask that
is False where the text is not a plain ASCII decimal (``[-+]digits[.digits][e[-+]digits]``
between spaces), has more than 19 significant digits, the product is not a whole
number, or it overflows int64. Callers read those few rows the
slow way (``Decimal``), which rounds or reports them.
"""
import re

import numpy as np

PLAIN = re.compile(r"^ *([-+]?)([0-9]*)(?:\.([0-9]*))?(?:[eE]([-+]?[0-9]+))? *$")
INT64_MAX = 2 ** 63 - 1


def to_ps(texts, exponent):
    """(int64 values, bool ok) for ``texts`` scaled by ``10**exponent``."""
    values = np.zeros(len(texts), dtype=np.int64)
    ok = np.zeros(len(texts), dtype=bool)
    for i, text in enumerate(texts):
        match = PLAIN.match(text)
        if not match or not (match.group(2) or match.group(3)):
            continue
        sign, whole, frac, exp = match.groups()
        frac = frac or ""
        if len(((whole or "") + frac).lstrip("0")) > 19 or abs(int(exp or 0)) > 400:
            continue
        shift = exponent + int(exp or 0) - len(frac)
        digits = int((whole or "0") + frac)
        if shift >= 0:
            value = digits * 10 ** shift
        else:
            value, rest = divmod(digits, 10 ** -shift)
            if rest:
                continue
        if value > INT64_MAX:
            continue
        values[i] = -value if sign == "-" else value
        ok[i] = True
    return values, ok


def padded(texts):
    """True if any text starts or ends with a space."""
    return any(t[:1] == " " or t[-1:] == " " for t in texts)
