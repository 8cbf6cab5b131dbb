"""Human-readable simulated times: integer picoseconds shown with SI prefixes."""

_PREFIXES = ((1_000_000_000_000, "s"), (1_000_000_000, "ms"), (1_000_000, "µs"),
             (1_000, "ns"), (1, "ps"))


def fmt_ps(ps, digits=4):
    """``1234567`` → ``'1.235 µs'``; exact below a nanosecond."""
    if ps is None:
        return "–"
    value = int(ps)
    for scale, unit in _PREFIXES:
        if abs(value) >= scale or scale == 1:
            if scale == 1:
                return f"{value} ps"
            return f"{value / scale:.{digits}g} {unit}"
    return f"{value} ps"
