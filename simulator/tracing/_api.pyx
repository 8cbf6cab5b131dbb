# cython: language_level=3
# cython: annotation_typing=False
"""Cython build of the data-collection API; ``api.py`` is its readable reference.

Same class, same methods, same rows in the same order. Finished rows go to
preallocated int64 buffers, so a task costs no Python objects unless it carries
details; the sink (the SQLite writer) is called once per batch.

Open tasks live in a ring indexed by key: keys are dense and handed out in order, and
most tasks end soon after they start, so opening and ending one is an array store
without allocation or hashing. The ring covers the keys from the oldest open task on;
it doubles when full, up to ``RING_MAX`` slots, and beyond that its oldest open task
(the simulation root, a kernel) moves to a hash map for the rest of its life.

The ``def`` methods carry ``api.Tracer``'s type hints as documentation only
(``annotation_typing=False``): Cython would otherwise act on them (``time: int`` converts
its argument, so ``close(2.5)`` would run as ``close(2)``), and this build must behave as
the reference does.
"""
cimport cython
from cython.operator cimport dereference as deref
from libc.stdint cimport int64_t
from libcpp.algorithm cimport sort as cpp_sort
from libcpp.unordered_map cimport unordered_map
from libcpp.vector cimport vector

import json
from collections.abc import Iterable
from fractions import Fraction

import numpy as np

from .api import OPEN_AT_STOP, OPEN_COLUMNS, TAG_COLUMNS, TASK_COLUMNS, TraceSink

cdef enum:
    RING_MIN = 1 << 12
    RING_MAX = 1 << 17  # 3 MB of slots; older open tasks (a kernel, the root) go to the map


@cython.final
@cython.boundscheck(False)  # row indices stay below batch_size: see _room
@cython.wraparound(False)
cdef class Tracer:
    """Collects tasks and hands them to ``sink`` in batches (see ``api.Tracer``)."""

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
        self._locations = {}
        self._kinds = {}
        self._tag_names = {}
        self._details = {}
        self._new_locations = []
        self._new_kinds = []
        self._new_tag_names = []
        self._row_details = []
        self._rows_arr = np.zeros((self.batch_size, TASK_COLUMNS), dtype=np.int64)
        self._tags_arr = np.zeros((self.batch_size, TAG_COLUMNS), dtype=np.int64)
        self._rows = self._rows_arr
        self._tags = self._tags_arr
        self._nrows = 0
        self._ntags = 0
        cdef OpenTask closed
        closed.kind = -1
        self._ring.assign(RING_MIN, closed)
        self._ring_base = 0
        self._open_count = 0
        self._write_open = getattr(sink, "write_open", None)
        self._announced = 0

    # -- interning -----------------------------------------------------------------
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
            enabled = self.categories is None or category in self.categories
            self._kind_enabled.push_back(1 if enabled else 0)
        return key

    def tag_name(self, name: str) -> int:
        """Key of a task step name such as ``read-hit``."""
        key = self._tag_names.get(name)
        if key is None:
            key = self._tag_names[name] = len(self._tag_names)
            self._new_tag_names.append((key, name))
        return key

    @cython.cdivision(True)  # times are never negative: C's division is the floor
    cpdef int64_t ps(self, int64_t time) noexcept:
        """Tick ``time`` in picoseconds, rounded down."""
        return time * self.ps_num // self.ps_den

    # -- tasks ---------------------------------------------------------------------
    cpdef int64_t start_task(self, int64_t parent, int kind, int location, int64_t time,
                             object details=None) except? -2:
        """Open a task at ``location`` at tick ``time``; returns its key or ``NO_TASK``."""
        cdef int64_t start = self.ps(time)
        cdef OpenTask task
        if kind < 0 or <size_t>kind >= self._kind_enabled.size():
            raise IndexError(f"kind {kind} was never interned")
        if not self._kind_enabled[kind] or (0 <= self.window_end_ps <= start):
            return NO_TASK
        cdef int64_t key = self.next_key
        if key - self._ring_base == <int64_t>self._ring.size():
            self._make_room()
        task.parent = parent
        task.kind = kind
        task.location = location
        task.start = start
        self._ring[key & (self._ring.size() - 1)] = task
        self.next_key = key + 1
        self._open_count += 1
        if details is not None:
            self._details[key] = (details if isinstance(details, str)
                                  else json.dumps(details, sort_keys=True))
        return key

    cpdef int end_task(self, int64_t key, int64_t time) except -1:
        """Close task ``key`` at tick ``time``."""
        if key < 0:
            return 0
        cdef OpenTask task
        cdef OpenTask *slot
        cdef unordered_map[int64_t, OpenTask].iterator it
        if self._ring_base <= key < self.next_key:
            slot = &self._ring[key & (self._ring.size() - 1)]
            if slot.kind < 0:
                raise KeyError(key)
            task = slot[0]
            slot.kind = -1
            if key == self._ring_base:
                self._advance()
        else:
            it = self._evicted.find(key)
            if it == self._evicted.end():
                raise KeyError(key)
            task = deref(it).second
            self._evicted.erase(it)
        self._open_count -= 1
        return self._finish(key, task, self.ps(time), 0)

    cdef void _advance(self) noexcept:
        """Move the ring's start past tasks that have ended."""
        cdef size_t mask = self._ring.size() - 1
        while self._ring_base < self.next_key and self._ring[self._ring_base & mask].kind < 0:
            self._ring_base += 1

    cdef void _make_room(self) noexcept:
        """The ring is full: double it, or past ``RING_MAX`` evict its oldest open task."""
        cdef size_t size = self._ring.size(), mask = size - 1
        cdef int64_t key
        cdef OpenTask closed
        cdef vector[OpenTask] bigger
        if size < RING_MAX:
            closed.kind = -1
            bigger.assign(2 * size, closed)
            for key in range(self._ring_base, self.next_key):
                bigger[key & (2 * size - 1)] = self._ring[key & mask]
            self._ring.swap(bigger)
            return
        self._evicted[self._ring_base] = self._ring[self._ring_base & mask]
        self._ring[self._ring_base & mask].kind = -1
        self._advance()

    cpdef int tag_task(self, int64_t key, int64_t time, int tag) except -1:
        """Record step ``tag`` (a ``tag_name`` key) of task ``key`` at tick ``time``."""
        if key < 0:
            return 0
        cdef int64_t n = self._room(self._ntags)
        self._tags[n, 0] = key
        self._tags[n, 1] = self.ps(time)
        self._tags[n, 2] = tag
        self._ntags = n + 1
        if self._ntags >= self.batch_size:
            self.flush()
        return 0

    # -- the request helpers --------------------------------------------------------
    cpdef int64_t trace_req_initiate(self, int64_t parent, int kind, int location,
                                     int64_t time) except? -2:
        """The sender issues a request: open its ``req_out`` task."""
        return self.start_task(parent, kind, location, time)

    cpdef int64_t trace_req_receive(self, int64_t req_out, int kind, int location,
                                    int64_t time) except? -2:
        """The receiver starts serving it: open the ``req_in`` child of ``req_out``."""
        return self.start_task(req_out, kind, location, time)

    cpdef int trace_req_complete(self, int64_t req_in, int64_t time) except -1:
        """The receiver sends the response: end the ``req_in`` task."""
        return self.end_task(req_in, time)

    cpdef int trace_req_finalize(self, int64_t req_out, int64_t time) except -1:
        """The response reaches the sender: end the ``req_out`` task."""
        return self.end_task(req_out, time)

    # -- batching ------------------------------------------------------------------
    cdef int _finish(self, int64_t key, OpenTask task, int64_t end, int64_t flags) except -1:
        if end < task.start:
            raise ValueError(f"task {key} ends at {end} ps, before its start at {task.start} ps")
        if 0 <= end < self.window_start_ps:
            if self._details:
                self._details.pop(key, None)
            self.dropped += 1
            return 0
        cdef int64_t n = self._room(self._nrows)
        self._rows[n, 0] = key
        self._rows[n, 1] = task.parent
        self._rows[n, 2] = task.kind
        self._rows[n, 3] = task.location
        self._rows[n, 4] = task.start
        self._rows[n, 5] = end
        self._rows[n, 6] = flags
        self._nrows = n + 1
        if self._details:
            text = self._details.pop(key, None)
            if text is not None:
                self._row_details.append((key, text))
        if self._nrows >= self.batch_size:
            self.flush()
        return 0

    cdef int64_t _room(self, int64_t used) except -1:
        """``used``, or 0 after a flush if that buffer is still full: a flush whose sink
        raised left it so, and the buffers cannot grow as the reference's lists do."""
        if used >= self.batch_size:
            self.flush()
            return 0
        return used

    @property
    def open_count(self) -> int:
        """Tasks started and not yet ended."""
        return self._open_count

    def flush(self) -> None:
        """Hand every buffered row and newly interned name to the sink."""
        if self._write_open is not None:
            self._write_open(self._opened_since())
        self.sink.write_batch(self._rows_arr[:self._nrows], self._row_details,
                              self._tags_arr[:self._ntags], self._new_locations,
                              self._new_kinds, self._new_tag_names)
        self._nrows = 0
        self._ntags = 0
        self._row_details = []
        self._new_locations = []
        self._new_kinds = []
        self._new_tag_names = []

    cdef object _opened_since(self):
        """Tasks started since the last flush and still open, as ``api.Tracer`` gives them."""
        cdef vector[int64_t] keys
        cdef vector[OpenTask] tasks
        cdef int64_t key
        cdef size_t i, mask = self._ring.size() - 1
        for item in self._evicted:  # evicted before a flush saw them
            if item.first >= self._announced:
                keys.push_back(item.first)
        cpp_sort(keys.begin(), keys.end())
        for i in range(keys.size()):
            tasks.push_back(self._evicted[keys[i]])
        for key in range(max(self._announced, self._ring_base), self.next_key):
            if self._ring[key & mask].kind >= 0:
                keys.push_back(key)
                tasks.push_back(self._ring[key & mask])
        self._announced = self.next_key
        out = np.empty((keys.size(), OPEN_COLUMNS), dtype=np.int64)
        cdef int64_t[:, ::1] rows = out
        for i in range(keys.size()):
            rows[i, 0] = keys[i]
            rows[i, 1] = tasks[i].parent
            rows[i, 2] = tasks[i].kind
            rows[i, 3] = tasks[i].location
            rows[i, 4] = tasks[i].start
        return out

    def close(self, time: int) -> int:
        """End every open task at tick ``time`` (flagged ``OPEN_AT_STOP``) and flush.

        Returns how many tasks were still open. Open tasks are written, never dropped.
        """
        cdef int64_t stop = self.ps(time)
        cdef vector[int64_t] keys
        cdef vector[OpenTask] tasks
        cdef int64_t key
        cdef size_t i, mask = self._ring.size() - 1
        for item in self._evicted:  # older than every key in the ring
            keys.push_back(item.first)
        cpp_sort(keys.begin(), keys.end())
        for i in range(keys.size()):
            tasks.push_back(self._evicted[keys[i]])
        for key in range(self._ring_base, self.next_key):
            if self._ring[key & mask].kind >= 0:
                keys.push_back(key)
                tasks.push_back(self._ring[key & mask])
                self._ring[key & mask].kind = -1
        self._evicted.clear()
        self._ring_base = self.next_key
        self._open_count = 0
        for i in range(keys.size()):
            self._finish(keys[i], tasks[i], max(stop, tasks[i].start), OPEN_AT_STOP)
        self.flush()
        self.closed = True
        return keys.size()
