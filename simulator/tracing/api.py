"""The data-collection API, as a readable pure-Python reference.

It mirrors akita's tracing package (what Daisen reads):

* ``start_task`` / ``end_task`` / ``tag_task`` (Daisen's task *step*, akita v5's *tag*);
* the four request helpers: ``trace_req_initiate`` opens the ``req_out`` task at the
  sender, ``trace_req_receive`` opens its ``req_in`` child at the receiver,
  ``trace_req_complete`` ends the ``req_in`` and ``trace_req_finalize`` ends the
  ``req_out`` when the response is back.

Tasks are identified by dense integer keys handed out at start. Strings are interned
once, up front (``location``, ``kind``, ``tag_name``), so the hot path passes small
integers only. A task row is buffered when the task ends and handed to the sink in
large batches. Times are given in simulator ticks and stored as integer picoseconds,
never as floats: tick ``t`` is ``t x ps_per_tick`` ps, rounded down, where ``ps_per_tick``
may be a fraction (a 2.1 GHz clock's cycle is 1e6/2100 ps).

Recording can be restricted to a time window (akita's ``SetTimeRange``: tasks starting
at or after the window end, or ending before its start, are dropped) and to a set of
categories (``start_task`` then returns ``NO_TASK``, which every other call accepts
and ignores). When tracing is off the simulator holds no tracer at all, so the cost
is one ``is None`` test per would-be task.

A sink that has ``write_open(rows)`` is also told, at each flush and just before
``write_batch``, which tasks started since the last flush are still open, as
``(key, parent, kind, location, start_ps)`` rows: a writer that builds the metric
pyramid as the run goes then knows every task in flight, however long it lasts.

``_api.pyx`` is the Cython build of this same class and must behave identically.
"""
from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from fractions import Fraction
from typing import Any, Protocol

import numpy as np

NO_TASK = -1
"""Key returned for a task that is not recorded; safe to pass anywhere a key goes."""

OPEN_AT_STOP = 1
"""``task.flags`` bit: the task was still open when the run stopped."""

TASK_COLUMNS = 7  # id, parent, kind, location, start_ps, end_ps, flags
TAG_COLUMNS = 3  # task, time_ps, tag
OPEN_COLUMNS = 5  # id, parent, kind, location, start_ps


class TraceSink(Protocol):
    """Where a ``Tracer`` hands its batches: the trace writer, or any object with this
    method (a test's capture, a benchmark's sink that drops the rows)."""

    def write_batch(self, tasks: np.ndarray, details: list[tuple[int, str]], tags: np.ndarray,
                    locations: list[tuple[int, str]], kinds: list[tuple[int, str, str]],
                    tag_names: list[tuple[int, str]]) -> None:
        """Take ``tasks`` (an ``(n, 7)`` int64 array: id, parent, kind, location,
        start_ps, end_ps, flags), the ``(key, json)`` details of some of them, ``tags``
        (an ``(m, 3)`` int64 array: task, time_ps, tag) and the names interned since
        the previous batch."""


class Tracer:
    """Collects tasks and hands them to ``sink`` in batches.

    ``sink`` needs ``write_batch(tasks, details, tags, locations, kinds, tag_names)``:
    an ``(n, 7)`` int64 array of task rows, a list of ``(key, json_text)``, an
    ``(m, 3)`` int64 array of tag rows, and the names interned since the last batch.
    The arrays are only valid during the call (the Cython build reuses its buffers):
    a sink that keeps rows copies them.
    """

    def __init__(self, sink: TraceSink, *, ps_per_tick: int | Fraction = 1,
                 window: tuple[int | None, int | None] = (None, None),
                 categories: Iterable[str] | None = None, batch_size: int = 1 << 16) -> None:
        self.sink = sink
        ratio = Fraction(ps_per_tick)
        self.ps_num, self.ps_den = ratio.numerator, ratio.denominator
        start, end = window
        self.window_start_ps = -1 if start is None else self.ps(int(start))
        self.window_end_ps = -1 if end is None else self.ps(int(end))
        self.categories = None if categories is None else frozenset(categories)
        self.batch_size = int(batch_size)
        self.next_key = 0
        self.dropped = 0
        self.closed = False
        self._locations: dict[str, int] = {}
        self._kinds: dict[tuple[str, str], int] = {}
        self._kind_enabled: list[bool] = []
        self._tag_names: dict[str, int] = {}
        self._new_locations: list[tuple[int, str]] = []
        self._new_kinds: list[tuple[int, str, str]] = []
        self._new_tag_names: list[tuple[int, str]] = []
        self._open: dict[int, tuple[int, int, int, int]] = {}  # key -> parent, kind, location, start
        self._details: dict[int, str] = {}
        self._rows: list[tuple[int, int, int, int, int, int, int]] = []
        self._row_details: list[tuple[int, str]] = []
        self._tags: list[tuple[int, int, int]] = []
        self._write_open: Callable[[np.ndarray], object] | None = getattr(sink, "write_open", None)
        self._announced = 0  # keys below this were open at a flush or have ended

    # -- interning -----------------------------------------------------------------
    def ps(self, time: int) -> int:
        """Tick ``time`` in picoseconds, rounded down."""
        return time * self.ps_num // self.ps_den

    def location(self, name: str) -> int:
        """Key of a component name such as ``GPU.L2[5]``, interned on first use."""
        key = self._locations.get(name)
        if key is None:
            key = self._locations[name] = len(self._locations)
            self._new_locations.append((key, name))
        return key

    def kind(self, category: str, action: str) -> int:
        """Key of a (category, action) pair, Daisen's (kind, what)."""
        pair = (category, action)
        key = self._kinds.get(pair)
        if key is None:
            key = self._kinds[pair] = len(self._kinds)
            self._new_kinds.append((key, category, action))
            self._kind_enabled.append(self.categories is None or category in self.categories)
        return key

    def tag_name(self, name: str) -> int:
        """Key of a task step name such as ``read-hit``."""
        key = self._tag_names.get(name)
        if key is None:
            key = self._tag_names[name] = len(self._tag_names)
            self._new_tag_names.append((key, name))
        return key

    # -- tasks ---------------------------------------------------------------------
    def start_task(self, parent: int, kind: int, location: int, time: int,
                   details: str | dict[str, Any] | None = None) -> int:
        """Open a task at ``location`` at tick ``time``; returns its key or ``NO_TASK``."""
        start = self.ps(time)
        if not self._kind_enabled[kind] or (0 <= self.window_end_ps <= start):
            return NO_TASK
        key = self.next_key
        self.next_key = key + 1
        self._open[key] = (parent, kind, location, start)
        if details is not None:
            self._details[key] = (details if isinstance(details, str)
                                  else json.dumps(details, sort_keys=True))
        return key

    def end_task(self, key: int, time: int) -> None:
        """Close task ``key`` at tick ``time``."""
        if key < 0:
            return
        parent, kind, location, start = self._open.pop(key)
        self._finish(key, parent, kind, location, start, self.ps(time), 0)

    def tag_task(self, key: int, time: int, tag: int) -> None:
        """Record step ``tag`` (a ``tag_name`` key) of task ``key`` at tick ``time``."""
        if key < 0:
            return
        self._tags.append((key, self.ps(time), tag))
        if len(self._tags) >= self.batch_size:
            self.flush()

    # -- the request helpers --------------------------------------------------------
    def trace_req_initiate(self, parent: int, kind: int, location: int, time: int) -> int:
        """The sender issues a request: open its ``req_out`` task."""
        return self.start_task(parent, kind, location, time)

    def trace_req_receive(self, req_out: int, kind: int, location: int, time: int) -> int:
        """The receiver starts serving it: open the ``req_in`` child of ``req_out``."""
        return self.start_task(req_out, kind, location, time)

    def trace_req_complete(self, req_in: int, time: int) -> None:
        """The receiver sends the response: end the ``req_in`` task."""
        self.end_task(req_in, time)

    def trace_req_finalize(self, req_out: int, time: int) -> None:
        """The response reaches the sender: end the ``req_out`` task."""
        self.end_task(req_out, time)

    # -- batching ------------------------------------------------------------------
    def _finish(self, key: int, parent: int, kind: int, location: int, start: int, end: int,
                flags: int) -> None:
        if end < start:
            raise ValueError(f"task {key} ends at {end} ps, before its start at {start} ps")
        if 0 <= end < self.window_start_ps:
            self._details.pop(key, None)
            self.dropped += 1
            return
        self._rows.append((key, parent, kind, location, start, end, flags))
        if self._details:
            text = self._details.pop(key, None)
            if text is not None:
                self._row_details.append((key, text))
        if len(self._rows) >= self.batch_size:
            self.flush()

    @property
    def open_count(self) -> int:
        """Tasks started and not yet ended."""
        return len(self._open)

    def flush(self) -> None:
        """Hand every buffered row and newly interned name to the sink."""
        if self._write_open is not None:
            opened = [(key, *self._open[key]) for key in range(self._announced, self.next_key)
                      if key in self._open]
            self._announced = self.next_key
            self._write_open(np.array(opened, dtype=np.int64).reshape(-1, OPEN_COLUMNS))
        tasks = np.array(self._rows, dtype=np.int64).reshape(-1, TASK_COLUMNS)
        tags = np.array(self._tags, dtype=np.int64).reshape(-1, TAG_COLUMNS)
        self.sink.write_batch(tasks, self._row_details, tags, self._new_locations,
                              self._new_kinds, self._new_tag_names)
        self._rows = []
        self._row_details = []
        self._tags = []
        self._new_locations = []
        self._new_kinds = []
        self._new_tag_names = []

    def close(self, time: int) -> int:
        """End every open task at tick ``time`` (flagged ``OPEN_AT_STOP``) and flush.

        Returns how many tasks were still open. Open tasks are written, never dropped.
        """
        stop = self.ps(time)
        still_open = sorted(self._open.items())
        self._open = {}
        for key, (parent, kind, location, start) in still_open:
            self._finish(key, parent, kind, location, start, max(stop, start), OPEN_AT_STOP)
        self.flush()
        self.closed = True
        return len(still_open)
