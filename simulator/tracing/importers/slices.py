"""Chrome slices read in blocks: the readable reference of ``_slices.pyx``.

Most of a profile is complete slices (``ph: X``) of one plain shape. ``scan`` reads as
many of them as it can from the text of the event array, from ``pos`` on, into columns
(``Slices``), and stops at the first event it leaves to the event-by-event reader in
``chrome.py``: any other phase, a slice with a flow (``bind_id``, ``flow_in``,
``flow_out``), an ``X`` without ``dur``, fields of unexpected types, times out of range,
text that is not JSON. The columns hold exactly what that reader would stage for the
same events: the same names, categories, times relative to the same base (exact
picoseconds; the first slice's start when no time is staged yet) and the same
``details`` text (``details_json``).

In a file of our own export (``own``), a slice's ``args`` carry the task's identity as
``chrome.py`` reads it there: ``id``, ``parent``, ``category`` and ``location`` (all
text; ``parent`` may be null) and perhaps ``details``, nothing else. Such slices are
read with their IDs, parents and locations (``Slices.ext_ids``, ``parents``,
``location`` into ``locations``), their kind's category taken from ``args.category``
(else ``cat``, else ''), and their details are ``args.details``.

Here each event is decoded with Python's JSON decoder and checked; the compiled version
reads the text itself and leaves more shapes to the event-by-event reader (escaped
strings, exponents, more than six decimals), which changes nothing but the speed.
"""
import json
import re
from dataclasses import dataclass, field
from decimal import Decimal

import numpy as np

from .values import TraceFormatError, details_json, scaled_to_ps

PS_PER_US = 10 ** 6
INT64_MAX = 2 ** 63 - 1
# Why ``scan`` stopped: at an event it leaves to the caller (or the array's end, or text
# it does not expect), at ``limit`` slices, or where the text ends inside an event.
DECLINED, FULL, MORE = 0, 1, 2
FLOW_KEYS = ("bind_id", "flow_in", "flow_out")
OWN_KEYS = {"id", "parent", "category", "location", "details"}
_SPACE = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder(parse_float=Decimal)


def time_ps(event, key, where, required=True):
    """Exact picoseconds of the µs value ``event[key]`` (0 if absent and not ``required``)."""
    value = event.get(key)
    if value is None:
        if required or key in event:
            raise TraceFormatError(f"{where}: event has no {key!r}" if key not in event
                                   else f"{where}: {key} is not a number: None")
        return 0
    if type(value) is Decimal:  # the usual case: exact when at most 6 decimals
        scaled = value.scaleb(6)
        if scaled == scaled.to_integral_value():
            return int(scaled)
    elif type(value) is int:
        return value * PS_PER_US
    return scaled_to_ps(value, PS_PER_US, where, key)


@dataclass
class Slices:
    """Columns of the slices read. Each slice's thread (``pid``, ``tid``: int or str) and
    kind (category, 'event' when it has none, and name) are given as an index into
    ``threads`` and ``kinds``, which list each pair once, in the order first read; then
    its start and end relative to ``base`` (int64 ps), ``details`` (JSON text or None)
    and position (line, column). Read with ``own``: each slice's task ID, its parent's
    (text or None) and its location, as an index into ``locations``."""

    threads: list = field(default_factory=list)
    kinds: list = field(default_factory=list)
    thread: object = None
    kind: object = None
    starts: object = None
    ends: object = None
    details: list = field(default_factory=list)
    lines: object = None
    columns: object = None
    base: object = None
    ext_ids: list = field(default_factory=list)
    parents: list = field(default_factory=list)
    locations: list = field(default_factory=list)
    location: object = None

    def __len__(self):
        return len(self.details)


def scan(buf, pos, base, limit, line, line_start, own=False):
    """Read plain slices from ``buf[pos:]``, where the text of a trace's event array
    expects an event.

    ``base``: the absolute time (ps) that times are relative to, or None to take the
    first slice's start. ``line`` is the line number at ``pos``, whose line starts at
    offset ``line_start`` (negative if before the buffer). Returns ``(pos, after_event,
    why, base, line, line_start, slices)``: where reading stopped, whether that is right
    after a slice (a ``,`` or the array's ``]`` is expected there) or where an event is
    expected, why it stopped (``DECLINED``, ``FULL`` or ``MORE``), the base, the line
    bookkeeping at ``pos``, and the slices read (None if none). ``own``: the slices of
    a file of our own export, with their identities.
    """
    out = Slices()
    thread, kind, starts, ends, lines, columns, location = [], [], [], [], [], [], []
    threads, kinds, locations = {}, {}, {}
    why, after_event, counted = FULL, False, pos
    while len(out) < limit:
        p = _SPACE.match(buf, pos).end()
        if p >= len(buf) or buf[p] != "{":
            why = MORE if p >= len(buf) else DECLINED
            break
        try:
            event, end = _DECODER.raw_decode(buf, p)
        except (ValueError, RecursionError):  # maybe cut by the buffer's end: the caller knows
            why = DECLINED
            break
        found = _plain_slice(event, base)
        identity = found and own and _identity(event.get("args"))
        if found is None or (own and identity is None):
            why = DECLINED
            break
        start, stop, name, category, pid, tid, details = found
        if own:
            ext_id, parent, where, category, details = identity
            category = (event.get("cat") or "") if category is None else category
            out.ext_ids.append(ext_id)
            out.parents.append(parent)
            location.append(locations.setdefault(where, len(locations)))
        if base is None:
            base, start, stop = start, 0, stop - start
        line, line_start, counted = _lines(buf, counted, p, line, line_start)
        thread.append(threads.setdefault((pid, tid), len(threads)))
        kind.append(kinds.setdefault((category, name), len(kinds)))
        out.details.append(details)
        starts.append(start)
        ends.append(stop)
        lines.append(line)
        columns.append(p - line_start + 1)
        pos = after = _SPACE.match(buf, end).end()
        if after < len(buf) and buf[after] == ",":
            pos = after + 1
        else:
            why, after_event = MORE if after >= len(buf) else DECLINED, True
            break
    line, line_start, _ = _lines(buf, counted, pos, line, line_start)
    if not len(out):
        return pos, after_event, why, base, line, line_start, None
    out.threads, out.kinds, out.locations = list(threads), list(kinds), list(locations)
    out.location = np.array(location, dtype=np.int64) if own else None
    out.thread, out.kind = np.array(thread, dtype=np.int64), np.array(kind, dtype=np.int64)
    out.starts, out.ends = np.array(starts, dtype=np.int64), np.array(ends, dtype=np.int64)
    out.lines, out.columns = np.array(lines, dtype=np.int64), np.array(columns, dtype=np.int64)
    return pos, after_event, why, base, line, line_start, out


def _lines(buf, counted, to, line, line_start):
    """The line bookkeeping moved from offset ``counted`` to ``to``."""
    newlines = buf.count("\n", counted, to)
    if newlines:
        line += newlines
        line_start = buf.rfind("\n", counted, to) + 1
    return line, line_start, to


def _identity(args):
    """(ID, parent, location, category or None, details text or None) of a slice of our
    own export, from its ``args``; None for args of another shape."""
    if type(args) is not dict or not args.keys() <= OWN_KEYS:
        return None
    ext_id, parent, where = args.get("id"), args.get("parent"), args.get("location")
    category, details = args.get("category"), args.get("details")
    if (type(ext_id) is not str or type(where) is not str or not (parent is None or type(parent) is str)
            or not ("category" not in args or type(category) is str)):
        return None
    return ext_id, parent, where, category, None if details is None else details_json(details)


def _plain_slice(event, base):
    """(start, end, name, category, pid, tid, details) of a plain slice, times relative to
    ``base`` (the start itself, absolute, when ``base`` is None); None for any other event."""
    if type(event) is not dict or event.get("ph") != "X" or "dur" not in event:
        return None
    if any(key in event for key in FLOW_KEYS):
        return None
    name, category = event.get("name"), event.get("cat")
    pid, tid = event.get("pid", 0), event.get("tid", 0)
    args = event.get("args")
    if (type(name) is not str or not (category is None or type(category) is str)
            or type(pid) not in (int, str) or type(tid) not in (int, str)
            or not (args is None or type(args) is dict) or (args and "bind_id" in args)):
        return None
    try:
        start, duration = time_ps(event, "ts", ""), time_ps(event, "dur", "")
    except TraceFormatError:
        return None
    if duration < 0:
        return None
    relative = start if base is None else start - base
    if base is not None and not -INT64_MAX <= relative <= INT64_MAX:
        return None
    if (0 if base is None else relative) + duration > INT64_MAX:
        return None
    return (relative, relative + duration, name, "event" if category is None else category,
            pid, tid, details_json(args) if args else None)
