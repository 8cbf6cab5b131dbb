"""A plain-text summary of a trace, for ``python -m simulator info``."""
import json
from datetime import datetime, timezone


def _time(ps):
    for unit, scale in (("s", 10 ** 12), ("ms", 10 ** 9), ("us", 10 ** 6), ("ns", 10 ** 3)):
        if abs(ps) >= scale:
            return f"{ps / scale:.3f} {unit}"
    return f"{ps} ps"


def origin_text(time_origin, clock):
    """Where relative time 0 lies: a UTC time, exact to the digit, on the Unix clock;
    else the decimal seconds on the named clock."""
    if clock == "unix":
        whole, _, fraction = time_origin.partition(".")
        stamp = datetime.fromtimestamp(int(whole), tz=timezone.utc)
        return f"{stamp:%Y-%m-%dT%H:%M:%S}{'.' + fraction if fraction else ''}Z (unix clock)"
    return f"{time_origin} s on the {clock} clock"


def _origin_lines(db):
    """The run's clock and the source's metadata (trace format 2), as summary lines."""
    columns = {r[1] for r in db.execute("PRAGMA table_info(run)")}
    if "time_origin" not in columns:
        return []
    origin, clock, metadata = db.execute("SELECT time_origin, clock, metadata FROM run").fetchone()
    lines = [] if origin is None else [f"time 0       {origin_text(origin, clock)}"]
    if metadata:
        lines += ["source metadata:", json.dumps(json.loads(metadata), indent=2, sort_keys=True)]
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
    lines = [
        f"source       {source} (writer {version})" + (f", workload {workload}" if workload else ""),
        f"command      {command}",
        f"status       {'completed' if completed else 'INCOMPLETE'}"
        f"{'' if finalized else ', not finalized (run: python -m simulator finalize FILE)'}",
        f"tasks        {tasks:,} in {kinds} kinds at {locations:,} locations"
        + (f"; {open_tasks:,} still open at the stop" if open_tasks else "")
        + (f"; {orphans:,} with a missing parent" if orphans else ""),
        f"time range   {_time(v_start or 0)} .. {_time(v_end or 0)}"
        f" ({_time((v_end or 0) - (v_start or 0))} simulated)"
        + (f", {wall:.1f} s wall" if wall else ""),
    ]
    if finalized:
        span = max(1, (v_end or 0) - (v_start or 0))
        lines.append(f"busiest {top} components (busy time, share of the run, tasks):")
        for name, busy, count in db.execute(
                "SELECT name, busy_ps, task_count FROM location WHERE busy_ps IS NOT NULL"
                " ORDER BY busy_ps DESC, name LIMIT ?", (top,)):
            lines.append(f"  {name:<40} {_time(busy):>12} {100 * busy / span:6.1f} %  {count:>10,}")
    lines += _origin_lines(db)
    lines.append("configuration:")
    lines.append(json.dumps(json.loads(config), indent=2, sort_keys=True))
    return "\n".join(lines)
