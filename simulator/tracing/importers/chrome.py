"""Reader for Chrome Trace Event JSON (what Perfetto opens and PyTorch's profiler writes).

Every event type that carries meaning is kept:

* ``X`` (with ``dur``) and ``B``/``E`` pairs become tasks; a task's parent is the
  innermost task enclosing it on its track (``pid``/``tid``);
* ``i``/``I``/``R`` become instants at their thread, process (``s: p``) or the whole
  trace (``s: g``); ``n`` (and legacy ``T``/``p``) at their async track;
* ``C`` becomes counter series at the process, one per argument key;
* ``b``/``e`` (and legacy ``S``/``F``) become tasks on the process's async track,
  nested by their ID;
* flows become task links: v1 ``s``/``t``/``f`` bound by time to the slice enclosing
  them (``f`` to the next slice unless ``bp: e``), v2 ``bind_id`` with ``flow_in`` /
  ``flow_out`` on the slice itself;
* ``M`` metadata names and orders components: ``process_name``, ``process_labels``,
  ``thread_name`` and the sort indexes. PyTorch/Kineto GPU streams become
  ``GPU[0].stream[7]``, CPU threads ``python3[19392].thread[19392]``.

``ts`` and ``dur`` are microseconds, parsed as exact decimals (a float cannot hold an
epoch-scale time to the nanosecond). What real tools write and Perfetto still shows is
read, not refused: a slice that ends before it begins (older Kineto versions wrote
negative durations; it clamps them since) is kept with no length and counted; a flow or
async event without an ID, and a flow's second start while it is open, are dropped and
counted; a ``pid``/``tid`` written as a whole float (``7.0``) or as a string of digits
(``"25738"``, as the 2021 Kineto format writes its threads in slices but not in flows)
is that integer, as in Chrome's and TensorBoard's viewers; a slice
without a name is "(no name)"; a counter value written as a numeric string is read.

Other top-level keys of the object form (``displayTimeUnit``, ``deviceProperties``,
``baseTimeNanoseconds``, ...) are kept as run metadata; ``baseTimeNanoseconds``
(Kineto) places the times on the Unix clock.

Files written by our exporter carry a ``gpuscope`` key and, on every event, the task's
identity (``args.id``, ``args.parent``, ``args.category``, ``args.location``), or the
task a flow point belongs to (``args.task``), so they import back exactly.

The file is read incrementally, so memory stays bounded: runs of plain complete slices
(and of our export's slices, with their identities) in blocks (``slices``), every other
event one at a time.
"""
import json
import math
import re
from decimal import Decimal

import numpy as np

from ... import build, user_input
from . import naming
from .loader import TraceFormatError, scaled_to_ps
from .slices import time_ps as _time
from .values import details_json as _dumps

_slices = build.module("simulator.tracing.importers._slices")  # or its reference

PS_PER_US = 10 ** 6
CHUNK = 1 << 20
SLICE_BLOCK = 16_384  # plain slices read at once
MAX_EVENT_BYTES = 16 << 20
UNIX_AFTER_PS = 10 ** 21  # a source time past 10**9 s (2001) is taken as Unix time
OWN_KEY = "gpuscope"
NO_NAME = "(no name)"
SEPARATOR = re.compile(r"[ \t\r\n]*,[ \t\r\n]*")
# C's spelling of a non-finite number where a JSON value stands (``inf``, ``-nan``...), and,
# to respell a stretch of text in one pass, a string (left as it is: JSON strings hold no
# raw newline, so a stretch that starts outside one and ends at a line's end cuts none).
BARE_NON_FINITE = re.compile(r"(-?)(inf|nan)(?![\w.])", re.I)
STRING_OR_NON_FINITE = re.compile(r'"(?:[^"\\\n]|\\.)*"|(?<![\w.])' + BARE_NON_FINITE.pattern, re.I)
RESPELL_SPAN = 1 << 20  # characters respelled at once, to the end of a line
INT64 = 1 << 63  # a counter value past it is stored as a float
GPU_LABEL = re.compile(r"^\s*GPU\s*(\d+)\s*$", re.I)
STREAM_NAME = re.compile(r"^\s*stream\s*(\d+)\b", re.I)
KINETO_THREAD = re.compile(r"^\s*thread\s+(\d+)\s*(\(.*\))?\s*$", re.I)
DEVICE_CATEGORIES = {"kernel", "gpu_memcpy", "gpu_memset", "memcpy", "memset"}
TASK_PHASES = {"X", "B", "E"}
INSTANT_PHASES = {"i", "I", "R"}
ASYNC_BEGIN, ASYNC_END, ASYNC_STEP = {"b", "S"}, {"e", "F"}, {"n", "T", "p"}
FLOW_PHASES = {"s", "t", "f"}


class _Reader:
    """Pulls one JSON value at a time out of a large document, tracking line:col."""

    def __init__(self, stream, path, progress=None):
        self.stream, self.path, self.progress = stream, path, progress
        # Where times count from, for plain slices read in blocks; None: read every event alone.
        self.slice_base = None
        self.own = False  # the slices are our export's, with their identities
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
            self.progress(len(chunk))
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
            while self.pos < len(self.buf) and self.buf[self.pos] in " \t\r\n\ufeff":
                self.pos += 1
            if self.pos < len(self.buf):
                return self.buf[self.pos]
            if not self._more():
                return ""

    def _value(self):
        """The next JSON value and its position."""
        self._peek()
        start = self.pos
        while True:
            try:
                value, end = self.decoder.raw_decode(self.buf, self.pos)
                break
            except json.JSONDecodeError as exc:
                if exc.msg.startswith("Expecting value") and self._respell(exc.pos):
                    continue
                if self.eof or len(self.buf) - start > MAX_EVENT_BYTES or not self._more():
                    raise TraceFormatError(f"{self.where(exc.pos)}: invalid JSON: {exc.msg}") from None
                start = self.pos
            except ValueError as exc:  # an integer of more digits than Python converts
                raise TraceFormatError(f"{self.where(self.pos)}: invalid JSON: {exc}") from None
            except RecursionError:
                # The event array (or the top-level object) is the first level.
                deep = user_input.nesting_offset(self.buf[start:], user_input.MAX_JSON_NESTING - 1)
                raise TraceFormatError(
                    f"{self.where(start + max(deep, 0))}: JSON nested more than"
                    f" {user_input.MAX_JSON_NESTING} levels deep") from None
        where = self.where(start)
        self.pos = end
        return value, where

    def _respell(self, offset):
        """Whether a bare ``inf``, ``-inf`` or ``nan`` (C's spelling, which libkineto wrote
        for a zero-length copy's bandwidth; not JSON) starts at ``offset``: then it, and
        any more up to a line's end within ``RESPELL_SPAN`` (a trace that has one has many),
        is respelled as Python's JSON reads it (``Infinity``, ``NaN``) in the buffer."""
        found = BARE_NON_FINITE.match(self.buf, offset)
        if found is None or _respelled(found) == found.group(0):
            return False  # a valid ``NaN`` that failed for another reason: no progress here
        end = self.buf.rfind("\n", offset, offset + RESPELL_SPAN) + 1 or found.end()
        self.buf = (self.buf[:offset] + STRING_OR_NON_FINITE.sub(_respelled, self.buf[offset:end])
                    + self.buf[end:])
        return True

    def _expect(self, chars, what):
        ch = self._peek()
        if ch == "":
            raise TraceFormatError(f"{self.where()}: unexpected end of file {what}")
        if ch not in chars:
            raise TraceFormatError(f"{self.where()}: expected {' or '.join(map(repr, chars))} {what}")
        self.pos += 1
        return ch

    def items(self):
        """Yield ("event", event, position) for each trace event and ("meta", key, value)
        for each other top-level key, in file order."""
        first = self._peek()
        if first == "[":  # the array form may lack its "]": a crashed writer's file
            self.pos += 1
            yield from self._events(closing_optional=True)
            return
        if first != "{":
            raise TraceFormatError(f"{self.where()}: expected a JSON array or object of trace events")
        self.pos += 1
        found = False
        if self._peek() == "}":
            raise TraceFormatError(f"{self.path}: no \"traceEvents\" array found")
        while True:
            key, where = self._value()
            if not isinstance(key, str):
                raise TraceFormatError(f"{where}: expected a key string")
            self._expect(":", "after a key")
            if key == "traceEvents":
                self._expect("[", "to open the traceEvents array")
                found = True
                yield from self._events()
            else:
                value, _ = self._value()
                yield "meta", key, value
            if self._expect(",}", "between top-level keys") == "}":
                break
        if not found:
            raise TraceFormatError(f"{self.path}: no \"traceEvents\" array found")

    def _events(self, closing_optional=False):
        """Yield ("event", value, position) for each element of the open array, or
        ("slices", Slices, None) for a run of plain slices read at once."""
        ch = self._peek()
        while True:
            if ch == "]":  # the end, also after a trailing comma, as some writers leave one
                self.pos += 1
                return
            if ch == "":
                if closing_optional:
                    return
                raise TraceFormatError(f"{self.where()}: unexpected end of file inside the event array")
            block, after_event = self._slices() if ch == "{" else (None, False)
            if block is not None:
                yield "slices", block, None
                if not after_event:
                    ch = self._peek()
                    continue
            else:
                value, where = self._value()
                yield "event", value, where
            ch = self._separator()

    def _separator(self):
        """After an event: past its ',' to the next event's first character, or at ']'."""
        separator = SEPARATOR.match(self.buf, self.pos)
        if separator and separator.end() < len(self.buf):  # the usual ",\n" between events
            self.pos = separator.end()
            return self.buf[self.pos]
        ch = self._peek()  # at the buffer's edge, or the array's end
        if ch in ("]", ""):
            return ch
        if ch != ",":
            raise TraceFormatError(f"{self.where()}: expected ',' or ']' between events")
        self.pos += 1
        return self._peek()

    def _slices(self):
        """(plain slices read from here, or None; whether reading stopped right after one)."""
        if self.slice_base is None:
            return None, False
        base = self.slice_base()
        while True:
            self._advance(self.pos)
            pos, after_event, why, base, line, line_start, block = _slices.scan(
                self.buf, self.pos, base, SLICE_BLOCK, self.line, self.line_start, self.own)
            self.pos = self.scan = pos
            self.line, self.line_start = line, line_start
            if block is not None:
                block.base = base
                return block, after_event
            if why != _slices.MORE or not self._more():  # the event-by-event reader takes it
                return None, False


def _plain(value):
    """Decimals back to JSON numbers (ints where exact), for metadata."""
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() and abs(value) < 2 ** 53 else float(value)
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _key(value):
    """Track key part: ints and other strings stay apart (7 is not "7.0" or "stream 7")."""
    return str(value) if isinstance(value, int) else json.dumps(value)


_DECIMAL = re.compile(r"-?(?:0|[1-9][0-9]*)\Z")


def _same_id(value):
    """A ``pid`` or ``tid`` as the Chrome and TensorBoard viewers key their tracks (the
    keys of a JavaScript object): a string that spells an integer is that integer. The
    2021 Kineto format writes a CPU thread as ``"25738"`` in its slices and as ``25738``
    in its flows; it is one thread."""
    if isinstance(value, str) and _DECIMAL.match(value):
        return int(value)
    return value


class _Tracks:
    """Names and orders the components from the ``M`` metadata, once all is read."""

    def __init__(self):
        self.process_names, self.process_labels, self.process_sort = {}, {}, {}
        self.thread_names, self.thread_sort = {}, {}
        self.used = {}  # location placeholder -> (kind, pid, tid)
        self.device_tracks = set()  # (pid, tid) that ran kernels or copies
        self.exact = False  # names as they are (a file of our own export)
        self.threads = {}

    def metadata(self, event, pid, tid):
        """Take a metadata (``M``) event of thread ``(pid, tid)``; False if it means nothing."""
        args = event.get("args") or {}
        name = event.get("name")
        if name == "process_name" and "name" in args:
            self.process_names[pid] = str(args["name"]).strip()
        elif name == "process_labels" and "labels" in args:
            self.process_labels[pid] = str(args["labels"])
        elif name == "process_sort_index" and "sort_index" in args:
            self.process_sort[pid] = args["sort_index"]
        elif name == "thread_name" and "name" in args:
            self.thread_names[(pid, tid)] = str(args["name"]).strip()
        elif name == "thread_sort_index" and "sort_index" in args:
            self.thread_sort[(pid, tid)] = args["sort_index"]
        else:
            return False
        return True

    def thread(self, pid, tid):
        """(placeholder location, track key) of a thread, cached: every slice asks."""
        pid, tid = _same_id(pid), _same_id(tid)
        found = self.threads.get((pid, tid))
        if found is None:
            found = self.threads[(pid, tid)] = (self.placeholder("thread", pid, tid),
                                                f"{_key(pid)}:{_key(tid)}")
        return found

    def placeholder(self, kind, pid, tid=None):
        """A temporary location name for a thread, process or async track."""
        name = f"\0{kind} {_key(pid)} {'' if tid is None else _key(tid)}"
        if name not in self.used:
            self.used[name] = (kind, pid, tid)
        return name

    def _device(self, pid):
        match = GPU_LABEL.match(self.process_labels.get(pid, "")) or \
            GPU_LABEL.match(self.process_names.get(pid, ""))
        return int(match.group(1)) if match else None

    def _process(self, pid, shared):
        if self.exact and pid in self.process_names:  # our export: the name is the location
            return self.process_names[pid]
        device = self._device(pid)
        if device is not None:
            return naming.gpu(device)
        name = self.process_names.get(pid)
        if name is None and isinstance(pid, int) and any(p == pid for p, _ in self.device_tracks):
            return naming.gpu(pid)  # an unnamed process running kernels: pid = device number
        return naming.process(name, pid, name in shared)

    def _thread(self, pid, tid, gpu):
        name = self.thread_names.get((pid, tid))
        if name is None and isinstance(tid, str) and not tid.strip().isdigit():
            name = tid  # a string tid names itself (older Kineto: "stream 7")
        stream = STREAM_NAME.match(name or "")
        if stream and (gpu or (pid, tid) in self.device_tracks):
            return naming.stream(stream.group(1))
        if name is None or KINETO_THREAD.match(name):
            if gpu and (pid, tid) in self.device_tracks:
                return naming.stream(tid)
            return naming.unnamed_thread(tid)
        return name

    def _sort_key(self, kind, pid, tid):
        """Sort index first (where given), then the ID; processes before their threads."""
        def rank(value, index):
            given = isinstance(index, (int, float, Decimal)) and not isinstance(index, bool)
            number = isinstance(value, int)
            return (not given, index if given else 0, not number, value if number else 0,
                    "" if number else str(value))
        return (rank(pid, self.process_sort.get(pid)), kind != "process",
                rank(tid, self.thread_sort.get((pid, tid))))

    def name_all(self, loader):
        """Rename every placeholder location; set their display order."""
        names = {}
        for pid, name in self.process_names.items():
            names.setdefault(name, set()).add(pid)
        shared = {name for name, pids in names.items() if len(pids) > 1}
        taken = {name for name in loader.locations if not name.startswith("\0")}
        for placeholder, (kind, pid, tid) in sorted(self.used.items(), key=lambda kv: kv[0]):
            if placeholder not in loader.locations:
                continue  # named by the events themselves (our export)
            process = self._process(pid, shared)
            if kind == "thread":
                name = naming.child(process, self._thread(pid, tid, process.startswith('GPU[')))
            elif kind == "async":
                name = f"{process}.async"
            else:
                name = process
            if name in taken:
                name = f"{name} (pid {pid}{'' if tid is None else f' tid {tid}'})"
            taken.add(name)
            loader.rename_location(placeholder, name)
            loader.set_location_order(name, self._sort_key(kind, pid, tid))


def read(stream, path, loader, progress=None):
    """Stream every event of a Chrome trace into ``loader``; returns how many events were
    skipped (they carry nothing a trace keeps) and how many slices that end before they
    begin were kept with no length."""
    reader = _Reader(stream, path, progress)
    tracks = _Tracks()
    open_b, open_async, metadata = {}, {}, {}
    state = {"skipped": 0, "clamped": 0, "serial": 0, "ours": False, "earliest": None,
             "latest": None, "open_links": {}, "thread_keys": {}}

    reader.slice_base = lambda: loader.time_base
    for item, first, second in reader.items():
        if item == "slices":
            _add_slices(loader, tracks, state, first, path)
            continue
        if item == "meta":
            if first == OWN_KEY and isinstance(second, dict):
                _declare_own_origin(loader, second, path)
                state["ours"] = tracks.exact = reader.own = True
            else:
                metadata[first] = _plain(second)
            continue
        event, where = first, second
        if not isinstance(event, dict):
            raise TraceFormatError(f"{where}: an event must be a JSON object")
        ph = event.get("ph")
        pid, tid = _ident(event, "pid", where), _ident(event, "tid", where)
        if ph == "M":
            if not tracks.metadata(event, pid, tid):
                state["skipped"] += 1
            continue
        if ph in TASK_PHASES:
            if ph == "B":
                # The recording lasted at least this long, even if nothing ever ends.
                _note_time(state, _time(event, "ts", where))
                open_b.setdefault((pid, tid), []).append((event, where))
                continue
            if ph == "E":
                stack = open_b.get((pid, tid))
                if not stack:  # its B fell before the recording began: nothing to place
                    state["skipped"] += 1
                    continue
                begin, begin_where = stack.pop()
                if event.get("args"):  # E's args add to B's
                    begin = dict(begin, args={**(begin.get("args") or {}), **event["args"]})
                start = _time(begin, "ts", begin_where)
                _add_task(loader, tracks, state, begin, begin_where, start,
                          _end(state, start, _time(event, "ts", where)), *tracks.thread(pid, tid))
                continue
            if "dur" not in event:
                state["skipped"] += 1  # Perfetto too ignores an X without a duration
                continue
            start = _time(event, "ts", where)
            _add_task(loader, tracks, state, event, where, start,
                      _end(state, start, start + _time(event, "dur", where)),
                      *tracks.thread(pid, tid))
        elif ph in INSTANT_PHASES:
            scope = event.get("s", "t")
            location = None if scope == "g" else tracks.placeholder(
                "process", pid) if scope == "p" else tracks.placeholder("thread", pid, tid)
            _add_instant(loader, state, event, where, location)
        elif ph == "C":
            _add_counters(loader, tracks, state, event, where)
        elif ph in FLOW_PHASES:
            _add_flow_point(loader, state, event, where, ph, pid, tid)
        elif ph in ASYNC_BEGIN or ph in ASYNC_END or ph in ASYNC_STEP:
            _async(loader, tracks, state, open_async, event, where, ph, pid)
        else:
            state["skipped"] += 1
    # Slices still open when the recording stopped last until its last event, flagged open.
    for (pid, tid), stack in open_b.items():
        for begin, where in stack:
            start = _time(begin, "ts", where)
            _add_task(loader, tracks, state, begin, where, start, max(start, state["latest"]),
                      *tracks.thread(pid, tid), flags=1)
    for key, stack in open_async.items():
        for begin, where in stack:
            start = _time(begin, "ts", where)
            _add_task(loader, tracks, state, begin, where, start, max(start, state["latest"]),
                      tracks.placeholder("async", _ident(begin, "pid", where)),
                      f"async {'|'.join(key)}", flags=1)
    tracks.name_all(loader)
    if not state["ours"]:
        loader.declare_unique_ids()  # every task is "chrome-N", numbered here
    _set_clock(loader, metadata, state)
    loader.set_metadata(metadata)
    return state["skipped"], state["clamped"]


def _respelled(match):
    """A ``STRING_OR_NON_FINITE`` match as Python's JSON reads it: a string unchanged."""
    sign, word = match.group(1), match.group(2)
    if word is None:
        return match.group(0)
    if word.lower() == "nan":
        return "NaN"
    return "-Infinity" if sign else "Infinity"


def _ident(event, field, where):
    """An event's ``pid`` or ``tid`` (0 if absent): an integer or a string, as written; a
    whole number written as a float (``7.0``, as converters of columns with gaps write
    it) or as a string (``"7"``, ``_same_id``) is that integer."""
    value = event.get(field, 0)
    if isinstance(value, (int, str)) and not isinstance(value, bool):
        return _same_id(value)
    if isinstance(value, (Decimal, float)) and math.isfinite(value) and value == int(value):
        return int(value)
    raise TraceFormatError(f"{where}: '{field}' must be an integer or a string, not"
                           f" {json.dumps(_plain(value))}")


def _end(state, start, end):
    """A slice's end; one before its start (older Kineto versions wrote negative
    durations) is its start, and counted."""
    if end >= start:
        return end
    state["clamped"] += 1
    return start


def _declare_own_origin(loader, own, path):
    """Our exporter says which file time is relative 0, and on what clock."""
    try:
        origin = scaled_to_ps(own["origin_ts"], PS_PER_US, path, "gpuscope.origin_ts")
    except KeyError:
        raise TraceFormatError(f"{path}: the gpuscope key lacks origin_ts") from None
    loader.set_clock(own.get("clock") or "source", origin_ps=origin)


def _set_clock(loader, metadata, state):
    """Kineto's ``baseTimeNanoseconds`` puts ``ts`` on the Unix clock; without it, a time
    past 2001 in Unix microseconds is taken as Unix time; else it is the source's clock."""
    base = metadata.get("baseTimeNanoseconds")
    if base is not None:
        epoch = scaled_to_ps(str(base), 1000, f"{loader.out_path}: baseTimeNanoseconds", "value")
        loader.set_clock("unix", epoch_ps=epoch)
    elif not state["ours"]:
        earliest = state["earliest"]
        loader.set_clock("unix" if earliest is not None and earliest >= UNIX_AFTER_PS else "source")


def _note_time(state, ps, end=None):
    if state["earliest"] is None or ps < state["earliest"]:
        state["earliest"] = ps
    end = ps if end is None else end
    if state["latest"] is None or end > state["latest"]:
        state["latest"] = end


def _add_task(loader, tracks, state, event, where, start, end, location, track, flags=0):
    args = event.get("args") or {}
    if type(args) is not dict:
        raise TraceFormatError(f"{where}: 'args' must be an object")
    name = event.get("name")
    if name is None:
        name = NO_NAME
    if state["earliest"] is None or start < state["earliest"]:
        state["earliest"] = start
    if state["latest"] is None or end > state["latest"]:
        state["latest"] = end
    category = event.get("cat")
    if state["ours"] and "id" in args and "location" in args:  # our export: keep identities
        details = args.get("details")
        loader.stage(str(args["id"]), None if args.get("parent") is None else str(args["parent"]),
                     str(args.get("category", category or "")), str(name), str(args["location"]),
                     start, end, where, None if details is None else _dumps(details))
        return
    state["serial"] += 1
    ext_id = f"chrome-{state['serial']}"
    category = "event" if category is None else str(category)
    if category.lower() in DEVICE_CATEGORIES:
        tracks.device_tracks.add((_ident(event, "pid", where), _ident(event, "tid", where)))
    loader.stage(ext_id, None, category, str(name), location, start, end, where,
                 _dumps(args) if args else None, track, flags)
    if "bind_id" in event or "bind_id" in args:  # flow v2: the flow binds to this slice
        bind = event.get("bind_id", args.get("bind_id"))
        kind = str(event.get("cat") or "flow")
        flow_in, flow_out = event.get("flow_in"), event.get("flow_out")
        phase = "t" if flow_in and flow_out else "f" if flow_in else "s" if flow_out else None
        if phase:
            loader.add_flow_point(f"v2\0{_key(bind)}", phase, kind, task_ext=ext_id, where=where)


def _add_slices(loader, tracks, state, block, path):
    """A run of plain slices, staged as ``_add_task`` stages each (``slices`` read them)."""
    n = len(block)
    base = block.base
    _note_time(state, base + int(block.starts.min()), base + int(block.ends.max()))
    kinds = np.array([loader.kind_id(category, name) for category, name in block.kinds], dtype=np.int64)
    if state["ours"]:  # our export: each slice names its task, parent and location
        locations = np.array([loader.location_id(name) for name in block.locations], dtype=np.int64)
        loader.add_relative(base, block.ext_ids, kinds[block.kind], locations[block.location],
                            block.starts, block.ends, np.full(n, -1, dtype=np.int64), block.details,
                            block.lines, f"{path}:", parents=block.parents)
        return
    serial = state["serial"]
    state["serial"] += n
    keys = state["thread_keys"]  # (pid, tid) -> (location key, track key)
    threads = np.empty((len(block.threads), 2), dtype=np.int64)
    for i, thread in enumerate(block.threads):
        found = keys.get(thread)
        if found is None:
            location, track = tracks.thread(*thread)
            found = keys[thread] = (loader.location_id(location), loader.track_id(track))
        threads[i] = found
    device = [i for i, (category, _) in enumerate(block.kinds) if category.lower() in DEVICE_CATEGORIES]
    if device:
        on_device = np.unique(block.thread[np.isin(block.kind, device)])
        tracks.device_tracks.update((_same_id(block.threads[i][0]), _same_id(block.threads[i][1]))
                                    for i in on_device.tolist())
    locations, track_keys = threads[block.thread].T
    loader.add_relative(base, list(map("chrome-{}".format, range(serial + 1, serial + n + 1))),
                        kinds[block.kind], locations, block.starts, block.ends, track_keys,
                        block.details, block.lines, f"{path}:")


def _add_instant(loader, state, event, where, location):
    ps = _time(event, "ts", where)
    _note_time(state, ps)
    args = event.get("args") or {}
    details = _dumps(args) if args else None
    if state["ours"] and isinstance(args, dict) and "location" in args:  # ours: kept exactly
        location = args["location"]
        details = None if args.get("details") is None else _dumps(args["details"])
    loader.add_instant(location, ps, str(event.get("name", "")), event.get("cat"), details,
                       where=where)


def _add_counters(loader, tracks, state, event, where):
    ps = _time(event, "ts", where)
    _note_time(state, ps)
    args = event.get("args") or {}
    if not isinstance(args, dict):
        raise TraceFormatError(f"{where}: a counter's 'args' must be an object")
    name = str(event.get("name", ""))
    if "id" in event:
        name = f"{name}[{event['id']}]"
    pid = event.get("pid", 0)
    location, values, unit = tracks.placeholder("process", pid), args, None
    if state["ours"] and pid in tracks.process_names:  # our export names the location first
        location, unit = tracks.process_names[pid], event.get("unit")
    numeric = {k: _number(v) for k, v in values.items()}
    numeric = {k: v for k, v in numeric.items() if v is not None}
    if not numeric:
        state["skipped"] += 1
        return
    for key, value in numeric.items():
        series = name if len(values) == 1 else f"{name}.{key}"
        loader.add_counter(location, series, ps, value, unit=unit, where=where)


def _number(value):
    """A counter's value as SQLite stores it: a JSON number, or a string that reads as one
    (as Perfetto reads it); an int where it is whole and fits 64 bits, else a float; None
    for anything else, or for what no float holds (NaN, the infinities, 1e400)."""
    if isinstance(value, str):
        try:
            value = Decimal(value.strip())
        except ArithmeticError:
            return None
    if isinstance(value, bool) or not isinstance(value, (int, float, Decimal)):
        return None
    if isinstance(value, Decimal) and not value.is_finite():
        return None
    # The range first: int() of a Decimal such as 1e999999999 would build a huge int.
    if not isinstance(value, float) and -INT64 <= value < INT64 and value == int(value):
        return int(value)
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) else None


def _flow_id(event):
    if "id" in event:
        return _key(event["id"])
    id2 = event.get("id2")
    if isinstance(id2, dict):
        return "id2:" + _key(id2.get("global", id2.get("local")))
    return None


def _add_flow_point(loader, state, event, where, ph, pid, tid):
    flow = _flow_id(event)
    if flow is None:  # Perfetto too drops it (and counts it)
        state["skipped"] += 1
        return
    kind = str(event.get("cat") or event.get("name") or "flow")
    key = f"v1\0{kind}\0{flow}"
    args = event.get("args") or {}
    if state["ours"] and isinstance(args, dict) and "task" in args:
        # Our export: each link is one s/f pair naming both tasks, in either time order.
        other = state["open_links"].pop(key, None)
        if other is None:
            state["open_links"][key] = (ph, str(args["task"]))
        else:
            src, dst = (other[1], str(args["task"])) if other[0] == "s" else (str(args["task"]), other[1])
            loader.add_link(src, dst, kind)
        return
    ps = _time(event, "ts", where)
    _note_time(state, ps)
    loader.add_flow_point(key, ph, kind, time_ps=ps, track=f"{_key(pid)}:{_key(tid)}",
                          bind_next=ph == "f" and event.get("bp") != "e", where=where)


def _async(loader, tracks, state, open_async, event, where, ph, pid):
    """Async slices: one track per process; nested b/e of one ID become parent/child."""
    flow = _flow_id(event)
    if flow is None:  # Perfetto too drops it (and counts it)
        state["skipped"] += 1
        return
    location = tracks.placeholder("async", pid)
    # An ID is the process's own unless it is given as id2.global.
    scope = "global" if isinstance(event.get("id2"), dict) and "global" in event["id2"] \
        else _key(pid)
    key = (scope, str(event.get("cat", "")), flow)
    if ph in ASYNC_STEP:
        args = dict(event.get("args") or {}, id=str(event.get("id", flow)))
        _add_instant(loader, state, dict(event, args=args), where, location)
        return
    if ph in ASYNC_BEGIN:
        _note_time(state, _time(event, "ts", where))  # the recording lasted this long
        open_async.setdefault(key, []).append((event, where))
        return
    stack = open_async.get(key)
    if not stack:  # its begin fell before the recording began
        state["skipped"] += 1
        return
    begin, begin_where = stack.pop()
    if event.get("args"):
        begin = dict(begin, args={**(begin.get("args") or {}), **event["args"]})
    start = _time(begin, "ts", begin_where)
    _add_task(loader, tracks, state, begin, begin_where, start,
              _end(state, start, _time(event, "ts", where)),
              tracks.placeholder("async", _ident(begin, "pid", begin_where)),
              f"async {'|'.join(key)}")
