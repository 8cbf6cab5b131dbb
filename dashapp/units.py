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


def fmt_at(ps):
    """A point in time, exact to the nanosecond (to the picosecond when it has any):
    ``30165849000`` → ``'30.165849 ms'``, so a task's start and end never read alike."""
    if ps is None:
        return "–"
    value = int(ps)
    scale, unit = next((s, u) for s, u in _PREFIXES if abs(value) >= s or s == 1)
    if scale == 1:
        return f"{value} ps"
    resolution = 1 if value % 1000 else 1000  # ns, or ps when the time has sub-ns digits
    digits = len(str(scale // resolution)) - 1
    whole, frac = divmod(abs(value), scale)
    sign = "-" if value < 0 else ""
    return f"{sign}{whole}.{frac // resolution:0{digits}d} {unit}" if digits else f"{sign}{whole} {unit}"


def absolute_time(origin, clock, ps):
    """Relative time ``ps`` as an absolute time on the run's clock, or None without one.

    ``origin`` is ``run.time_origin`` (exact decimal seconds); on the Unix clock the
    result is a UTC date and time to the nanosecond (or finer, when the origin is).
    """
    if origin is None:
        return None
    from datetime import datetime, timezone
    from decimal import Decimal

    at = Decimal(origin) + Decimal(int(ps)) / 10 ** 12
    if clock != "unix":
        return f"{at.normalize():f} s on the {clock or 'source'} clock"
    seconds = int(at // 1)
    fraction = f"{at - seconds:f}"[2:].rstrip("0").ljust(9, "0")
    stamp = datetime.fromtimestamp(seconds, timezone.utc).strftime("%Y-%m-%d %H:%M:%S")
    return f"{stamp}.{fraction} UTC"
