"""Reader for Chrome Trace Event JSON (what Perfetto and chrome://tracing open).

Complete events (``ph: "X"`` with ``dur``) and ``B``/``E`` pairs become tasks; ``ts``
and ``dur`` are microseconds, parsed as exact decimals. Each ``pid``/``tid`` is a
track; a task's parent is the innermost task enclosing it on its track, and its
location is named from the ``process_name``/``thread_name`` metadata events.

Traces written by our exporter carry ``args.id``, ``args.parent``, ``args.category``
and ``args.location``, which are used as they are, so tasks round-trip exactly.

The file is read incrementally, one event at a time (the top level may be a bare array
or an object with ``traceEvents``), so memory stays bounded on large traces.
"""
import json
import re
from decimal import Decimal

from ... import user_input
from .loader import ForeignTask, TraceFormatError, scaled_to_ps

PS_PER_US = 10 ** 6
CHUNK = 1 << 20
MAX_EVENT_BYTES = 16 << 20
EVENTS_KEY = re.compile(r'"traceEvents"\s*:\s*\[')


class _Reader:
    """Pulls one JSON value at a time out of a large array, tracking line:col."""

    def __init__(self, stream, path, progress=None):
        self.stream, self.path, self.progress = stream, path, progress
        self.buf, self.pos, self.eof = "", 0, False
        # Line bookkeeping, advanced incrementally so positions cost O(1) amortised:
        # ``line`` is the line number at buffer offset ``scan``, which starts at ``line_start``.
        self.scan, self.line, self.line_start = 0, 1, 0
        self.decoder = json.JSONDecoder(parse_float=Decimal)

    def _more(self):
        chunk = self.stream.read(CHUNK)
        if not chunk:
            self.eof = True
            return False
        if self.progress:
            self.progress(len(chunk.encode("utf-8", "ignore")))
        self._advance(self.pos)
        self.scan -= self.pos
        self.line_start -= self.pos
        self.buf, self.pos = self.buf[self.pos:] + chunk, 0
        return True

    def _advance(self, offset):
        if offset > self.scan:
            newlines = self.buf.count("\n", self.scan, offset)
            if newlines:
                self.line += newlines
                self.line_start = self.buf.rfind("\n", self.scan, offset) + 1
            self.scan = offset

    def where(self, offset=None):
        offset = self.pos if offset is None else offset
        if offset < self.scan:  # an error position behind the scan point: count back
            line = self.line - self.buf.count("\n", offset, self.scan)
            return f"{self.path}:{line}:{offset - self.buf.rfind(chr(10), 0, offset)}"
        self._advance(offset)
        return f"{self.path}:{self.line}:{offset - self.line_start + 1}"

    def _peek(self):
        while True:
            while self.pos < len(self.buf) and self.buf[self.pos] in " \t\r\n":
                self.pos += 1
            if self.pos < len(self.buf):
                return self.buf[self.pos]
            if not self._more():
                return ""

    def open_array(self):
        first = self._peek()
        if first == "[":
            self.pos += 1
            return
        if first != "{":
            raise TraceFormatError(f"{self.where()}: expected a JSON array or object of trace events")
        while True:
            match = EVENTS_KEY.search(self.buf, self.pos)
            if match:
                self.pos = match.end()
                return
            self.pos = max(self.pos, len(self.buf) - 64)  # keep a possibly split key
            if not self._more():
                raise TraceFormatError(f"{self.path}: no \"traceEvents\" array found")

    def events(self):
        """Yield (value, position) for each element of the array."""
        expect_value = True
        while True:
            ch = self._peek()
            if ch == "]":
                return
            if ch == "":
                raise TraceFormatError(f"{self.where()}: unexpected end of file inside the event array")
            if not expect_value:
                if ch != ",":
                    raise TraceFormatError(f"{self.where()}: expected ',' or ']' between events")
                self.pos += 1
                expect_value = True
                continue
            start = self.pos
            while True:
                try:
                    value, end = self.decoder.raw_decode(self.buf, self.pos)
                    break
                except json.JSONDecodeError as exc:
                    if self.eof or len(self.buf) - start > MAX_EVENT_BYTES or not self._more():
                        raise TraceFormatError(f"{self.where(exc.pos)}: invalid JSON: {exc.msg}") from None
                    start = self.pos
                except ValueError as exc:  # an integer of more digits than Python converts
                    raise TraceFormatError(f"{self.where(self.pos)}: invalid JSON: {exc}") from None
                except RecursionError:
                    # The event array itself is the first level.
                    deep = user_input.nesting_offset(self.buf[start:],
                                                     user_input.MAX_JSON_NESTING - 1)
                    raise TraceFormatError(
                        f"{self.where(start + max(deep, 0))}: JSON nested more than"
                        f" {user_input.MAX_JSON_NESTING} levels deep") from None
            where = self.where(start)
            self.pos = end
            expect_value = False
            yield value, where


def _number(event, key, where, required=True):
    if key not in event:
        if required:
            raise TraceFormatError(f"{where}: event has no {key!r}")
        return 0
    return scaled_to_ps(event[key], PS_PER_US, where, key)


def _json_default(value):
    return str(value) if isinstance(value, Decimal) else repr(value)


def read(stream, path, loader, progress=None):
    """Stream every task of a Chrome trace into ``loader``; returns skipped event count."""
    reader = _Reader(stream, path, progress)
    reader.open_array()
    open_b, process_names, thread_names = {}, {}, {}
    tracks, skipped, serial = set(), 0, 0
    for event, where in reader.events():
        if not isinstance(event, dict):
            raise TraceFormatError(f"{where}: an event must be a JSON object")
        ph = event.get("ph")
        pid, tid = event.get("pid", 0), event.get("tid", 0)
        if ph == "M":
            name = (event.get("args") or {}).get("name")
            if event.get("name") == "process_name" and name is not None:
                process_names[pid] = str(name)
            elif event.get("name") == "thread_name" and name is not None:
                thread_names[(pid, tid)] = str(name)
            continue
        if ph == "B":
            open_b.setdefault((pid, tid), []).append((event, where))
            continue
        if ph == "E":
            stack = open_b.get((pid, tid))
            if not stack:
                raise TraceFormatError(f"{where}: 'E' event without a matching 'B' on pid {pid} tid {tid}")
            begin, begin_where = stack.pop()
            start = _number(begin, "ts", begin_where)
            task_event, duration = begin, _number(event, "ts", where) - start
        elif ph == "X":
            task_event, begin_where = event, where
            start = _number(event, "ts", where)
            duration = _number(event, "dur", where, required=False)
        else:
            skipped += 1
            continue
        serial += 1
        loader.add(_task(task_event, begin_where, start, start + duration, pid, tid, serial, tracks))
    for stack in open_b.values():
        if stack:
            raise TraceFormatError(f"{stack[-1][1]}: 'B' event without a matching 'E'")
    _name_tracks(loader, tracks, process_names, thread_names)
    return skipped


def _task(event, where, start, end, pid, tid, serial, tracks):
    args = event.get("args") or {}
    if not isinstance(args, dict):
        raise TraceFormatError(f"{where}: 'args' must be an object")
    name = event.get("name")
    if name is None:
        raise TraceFormatError(f"{where}: event has no 'name'")
    if "id" in args and "location" in args:  # written by our exporter: keep identities
        details = args.get("details")
        return ForeignTask(
            ext_id=str(args["id"]), parent_ext=None if args.get("parent") is None else str(args["parent"]),
            category=str(args.get("category", event.get("cat", ""))), action=str(name),
            location=str(args["location"]), start_ps=start, end_ps=end, where=where,
            details=None if details is None else json.dumps(details, default=_json_default,
                                                            sort_keys=True))
    track = f"{pid}:{tid}"
    tracks.add((pid, tid))
    return ForeignTask(
        ext_id=f"chrome-{serial}", parent_ext=None, category=str(event.get("cat") or "event"),
        action=str(name), location=f"\0track {track}", start_ps=start, end_ps=end, where=where,
        details=json.dumps(args, default=_json_default, sort_keys=True) if args else None,
        track=track)


def _name_tracks(loader, tracks, process_names, thread_names):
    """Rename placeholder track locations after the metadata events have all been read."""
    used = set(name for name in loader.locations if not name.startswith("\0"))
    for pid, tid in sorted(tracks, key=str):
        process = process_names.get(pid, f"pid {pid}")
        thread = thread_names.get((pid, tid), f"tid {tid}")
        name = f"{process}.{thread}"
        if name in used:
            name = f"{name} (pid {pid} tid {tid})"
        used.add(name)
        loader.rename_location(f"\0track {pid}:{tid}", name)
