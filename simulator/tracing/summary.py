"""A plain-text summary of a trace, for ``python -m simulator info``."""
import datetime as _dt
import json
from decimal import Decimal


def _time(ps):
    for unit, scale in (("s", 10 ** 12), ("ms", 10 ** 9), ("us", 10 ** 6), ("ns", 10 ** 3)):
        if abs(ps) >= scale:
            return f"{ps / scale:.3f} {unit}"
    return f"{ps} ps"


def absolute(origin, clock, ps):
    """Relative time ``ps`` on the run's clock: a UTC time for the Unix clock."""
    at = Decimal(origin) + Decimal(ps) / 10 ** 12
    if clock != "unix":
        return f"{at.normalize():f} s ({clock} clock)"
    seconds = int(at // 1)
    stamp = _dt.datetime.fromtimestamp(seconds, _dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S")
    return f"{stamp}.{f'{at - seconds:f}'[2:].rstrip('0').ljust(9, '0')} UTC"


def _extras(db, origin_row, v_start, v_end):
    """Lines for what format 2 adds: the time origin, links, markers and counters.
    ``origin_row``: the run's (time_origin, clock, metadata), None for a version 1 file."""
    if origin_row is None:
        return []
    origin, clock, metadata = origin_row
    lines = []
    if origin is not None:
        lines.append(f"time origin  {absolute(origin, clock, 0)}; times are relative to it"
                     f" (absolute range {absolute(origin, clock, v_start or 0)} .."
                     f" {absolute(origin, clock, v_end or 0)})")
    counts = [db.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
              for table in ("task_link", "instant", "counter_series", "counter")]
    if any(counts):
        lines.append(f"beyond tasks {counts[0]:,} links (flows), {counts[1]:,} markers,"
                     f" {counts[2]:,} counter series with {counts[3]:,} samples")
    if metadata:
        metadata = json.loads(metadata)
        keys = sorted(metadata)
        lines.append(f"metadata     {', '.join(keys[:12])}{' ...' if len(keys) > 12 else ''}")
        devices = metadata.get("gpus") or metadata.get("deviceProperties") or []
        names = [str(d.get("name")) for d in devices if isinstance(d, dict) and d.get("name")]
        if names:
            lines.append(f"gpus         {'; '.join(names)}")
    return lines


def summarize(db, top=10):
    """Counts, time range, busiest components and configuration of the trace in ``db``."""
    run = db.execute(
        "SELECT source, workload, command, config, completed, finalized, open_tasks, orphan_tasks,"
        " virtual_start_ps, virtual_end_ps, wall_seconds, simulator_version FROM run").fetchone()
    (source, workload, command, config, completed, finalized, open_tasks, orphans, v_start,
     v_end, wall, version) = run
    tasks = db.execute("SELECT count(*) FROM task").fetchone()[0]
    locations = db.execute("SELECT count(*) FROM location").fetchone()[0]
    kinds = db.execute("SELECT count(*) FROM kind").fetchone()[0]
    if v_end is None:
        v_start, v_end = db.execute("SELECT min(start_ps), max(end_ps) FROM task").fetchone()
    origin_row = (db.execute("SELECT time_origin, clock, metadata FROM run").fetchone()
                  if db.execute("PRAGMA user_version").fetchone()[0] >= 2 else None)
    clock = origin_row[1] if origin_row else None
    # A profile's times are a real run's (on the Unix clock); a source's own clock may be
    # either. An import's wall time is the import's own.
    span = {None: "simulated", "simulation": "simulated", "unix": "profiled"}.get(clock, "long")
    wall_is = "s wall" if source == "simulator" else "s to import"
    lines = [
        f"source       {source} (writer {version})" + (f", workload {workload}" if workload else ""),
        f"command      {command}",
        f"status       {'completed' if completed else 'INCOMPLETE'}"
        f"{'' if finalized else ', not finalized (run: python -m simulator finalize FILE)'}",
        f"tasks        {tasks:,} in {kinds} kinds at {locations:,} locations"
        + (f"; {open_tasks:,} still open at the stop" if open_tasks else "")
        + (f"; {orphans:,} with a missing parent" if orphans else ""),
        f"time range   {_time(v_start or 0)} .. {_time(v_end or 0)}"
        f" ({_time((v_end or 0) - (v_start or 0))} {span})"
        + (f", {wall:.1f} {wall_is}" if wall else ""),
        *_extras(db, origin_row, v_start, v_end),
    ]
    if finalized:
        span = max(1, (v_end or 0) - (v_start or 0))
        lines.append(f"busiest {top} components (busy time, share of the run, tasks):")
        for name, busy, count in db.execute(
                "SELECT name, busy_ps, task_count FROM location WHERE busy_ps IS NOT NULL"
                " ORDER BY busy_ps DESC, name LIMIT ?", (top,)):
            lines.append(f"  {name:<40} {_time(busy):>12} {100 * busy / span:6.1f} %  {count:>10,}")
    lines.append("configuration:")
    lines.append(json.dumps(json.loads(config), indent=2, sort_keys=True))
    return "\n".join(lines)
