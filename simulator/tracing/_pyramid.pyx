# cython: language_level=3
"""The metric pyramid built as tasks arrive, in memory bounded by the model.

``pyramid.py`` is the readable reference: it builds the same sums from every task at
once. Here each task becomes a few *events* (its start, its end, and for a ``req_in``
the start of its wait at its parent's start), kept per location until the
*frontier* passes them. Bins before the frontier are final: they are computed by one
sweep over their events in time order, written out, and summed pairwise into the
coarser levels, which keep one unfinished bin each. What is held is therefore the
events not yet behind the frontier plus a few bins per level: the model's tasks in
flight, never the trace.

An integral over a bin follows from the count of intervals active at its start
(carried from the bin before) plus, for each event inside it, the change times the
rest of the bin, so every sum stays exact in int64, as in the reference.

Where the frontier comes from is the caller's business (``advance``). An event that
arrives behind it (a simulator that went back in time) cannot be added to bins
already written; its location is then marked *dirty* and left to be rebuilt from the
task table at the end (``dirty``). The result is the same either way.

The work on tasks and bins runs without the GIL (the writer feeds the builder on a thread
of its own, beside its inserts and the Python around them), so a location's state is a
C struct, not a Python object.

A location's finest level is chosen from its first ``sample`` tasks (or at ``finish``
for a location that has fewer), by the reference's rule. Those tasks may all come early
(a command processor maps every work-group at the start, then holds one kernel task to
the end): a location whose finest bins grow far past its tasks is *coarsened*, its finest
level raised by one at an even bin, and its finer rows, which cover only the run's
start, are deleted at finalize (``coarsened``). Every bin written stays exact.
"""
cimport cython
from libc.stdint cimport int8_t, int32_t, int64_t
from libc.string cimport memcpy
from libc.math cimport ceil, log2
from libcpp.algorithm cimport nth_element
from libcpp.algorithm cimport sort as cpp_sort
from libcpp.deque cimport deque
from libcpp.unordered_map cimport unordered_map
from libcpp.vector cimport vector
from cython.operator cimport dereference as deref

import numpy as np

from . import pyramid as reference
from .pyramid import KIND_LEVEL_OFFSET, LONG_MAX, LONG_SHARE, LONG_SPLIT_FACTOR

DEF NCOL = 7  # metric_bin's value columns
DEF MAX_LEVELS = 64
DEF F_KIND_STARTED = 1
DEF F_IN_STARTED = 2
DEF F_IN_ENDED = 4
DEF NONE = 1 << 62
# Level-0 bins a location may have written, per task started and beyond a floor, before
# it is coarsened: the reference's level gives it about one per TARGET_TASKS_PER_BIN tasks.
DEF COARSEN_BINS_PER_TASK = 2
DEF COARSEN_MIN_BINS = 4096

# Task classes, from the category of their kind.
OTHER, REQ_IN, REQ_OUT = 0, 1, 2
# ``parent_starts``'s answer for a parent it does not hold (not -1: that means no parent).
DEF PARENT_NOT_HELD = -2
NOT_HELD = PARENT_NOT_HELD


cdef struct Event:
    int64_t time
    int64_t latency  # duration of a req_in, on its end event
    int32_t kind
    int8_t d_all     # change of tasks in flight
    int8_t d_out     # change of req_out tasks in flight
    int8_t d_buf     # change of req_in tasks waiting
    int8_t flags


cdef struct OpenInfo:
    int64_t start
    int32_t location
    int32_t kind
    bint served  # a req_out whose req_in has started


cdef object _array(vector[int64_t] &values):
    """A numpy copy of ``values``."""
    out = np.empty(values.size(), dtype=np.int64)
    cdef int64_t[::1] view = out
    if values.size():
        memcpy(&view[0], values.data(), values.size() * sizeof(int64_t))
    return out


cdef bint _earlier(const Event &a, const Event &b) noexcept nogil:
    return a.time < b.time


cdef Py_ssize_t _find(const int64_t[:, ::1] rows, int64_t key) noexcept nogil:
    """The index of the row whose first column is ``key`` in ``rows`` sorted by it, or -1."""
    cdef Py_ssize_t low = 0, high = rows.shape[0], middle
    while low < high:
        middle = (low + high) >> 1
        if rows[middle, 0] < key:
            low = middle + 1
        else:
            high = middle
    return low if low < rows.shape[0] and rows[low, 0] == key else -1


cdef struct Loc:
    # Everything kept for one location.
    vector[Event] pending
    int level0        # -1 until chosen
    int64_t width     # base << level0
    int64_t next_bin  # bins before it (level0) are written
    int64_t started, count, first_start, last_end, max_duration, busy
    int64_t first_event  # earliest event time (a wait may precede every start)
    int64_t a_all, a_out, a_buf
    vector[int64_t] a_kind
    bint carry_has[MAX_LEVELS]
    int64_t carry_bin[MAX_LEVELS]
    int64_t carry_val[MAX_LEVELS][NCOL]
    vector[vector[int64_t]] carry_kind  # per level, (started, task_ps) per kind
    vector[int64_t] long_dur, long_id, long_start, long_end
    int64_t long_floor  # every task left out of long_* lasts at most this long
    int64_t level0_bins
    Py_ssize_t index
    bint preset  # level0 given by a rebuild that knows the final counts
    bint dirty  # left to a rebuild from the task table
    bint coarsened  # its finest level was raised as it went


cdef void _init_loc(Loc *loc, Py_ssize_t index) noexcept nogil:
    cdef int r
    loc.index = index
    loc.level0 = -1
    loc.width = loc.next_bin = loc.started = loc.count = loc.max_duration = loc.busy = 0
    loc.first_start = loc.first_event = <int64_t>NONE
    loc.last_end = -1
    loc.a_all = loc.a_out = loc.a_buf = 0
    loc.long_floor = -1
    loc.level0_bins = 0
    loc.preset = loc.dirty = loc.coarsened = False
    for r in range(MAX_LEVELS):
        loc.carry_has[r] = False
        loc.carry_bin[r] = 0
    loc.carry_kind.resize(MAX_LEVELS)


# The reference's constants, for code that runs without the GIL.
cdef int64_t _LONG_MAX = LONG_MAX
cdef double _LONG_SHARE = LONG_SHARE
cdef int _KIND_OFFSET = KIND_LEVEL_OFFSET


cdef int _min_level(int64_t count, int64_t first_ps, int64_t last_ps, int64_t base,
                    double target) noexcept nogil:
    """``pyramid.min_level``'s rule for ``target`` tasks per bin (in doubles: past 2^53 ps
    a span rounds, which can only move a level chosen from a sample by one)."""
    cdef int64_t span = max(<int64_t>1, last_ps - first_ps)
    cdef double width = span * target / max(<int64_t>1, count)
    return max(0, <int>ceil(log2(max(1.0, width / base))))


@cython.final
cdef _check_rows(const int64_t[:, ::1] rows, const int64_t[::1] parent_starts, int columns):
    if rows.shape[0] and rows.shape[1] < columns or parent_starts.shape[0] != rows.shape[0]:
        raise ValueError(f"{rows.shape[0]} rows of {rows.shape[1]} columns (at least {columns})"
                         f" with {parent_starts.shape[0]} parent starts")


cdef class IncrementalPyramid:
    """Metric-pyramid sums of tasks given in any order, bins written as they become final.

    ``classes`` maps each kind key to OTHER, REQ_IN or REQ_OUT (``set_kind`` adds more).
    Rows come out of ``take_rows`` as int64 matrices for ``metric_bin`` and
    ``metric_kind_bin``.
    """
    cdef deque[Loc] _locs  # a deque: a location's address stays put as more are added
    cdef vector[int8_t] _class
    cdef int64_t base
    cdef int sample
    cdef double target  # tasks per finest bin: the reference's, as the builder is made
    cdef vector[int64_t] _rows, _kind_rows
    cdef unordered_map[int64_t, OpenInfo] _open
    cdef public int64_t pending_events
    cdef int64_t _earliest  # of the events added by the current call

    def __init__(self, base=1, sample=256):
        self.base = base
        self.sample = sample
        self.target = reference.TARGET_TASKS_PER_BIN
        self.pending_events = 0

    def set_kind(self, int kind, int klass):
        """Declare kind key ``kind`` as OTHER, REQ_IN or REQ_OUT."""
        if kind >= <int>self._class.size():
            self._class.resize(kind + 1, 0)
        self._class[kind] = klass

    cdef Loc *_loc(self, int64_t location) noexcept nogil:
        cdef Loc fresh
        while location >= <int64_t>self._locs.size():
            self._locs.push_back(fresh)
            _init_loc(&self._locs.back(), self._locs.size() - 1)
        return &self._locs[location]

    @property
    def dirty(self):
        """The locations left to a rebuild from the task table."""
        return {i for i in range(self._locs.size()) if self._locs[i].dirty}

    @property
    def coarsened(self):
        """The locations whose finest level was raised as they went."""
        return {i for i in range(self._locs.size()) if self._locs[i].coarsened}

    # -- input -----------------------------------------------------------------------
    def open(self, const int64_t[:, ::1] rows not None,
             const int64_t[::1] parent_starts not None):
        """Tasks still open: (id, parent, kind, location, start) rows (more columns are
        ignored), with the start of each one's parent (as ``add``'s).

        Their start side is added now; ``add`` adds the end side when the row arrives.
        Returns the earliest event time added, or None.
        """
        cdef Py_ssize_t i
        cdef OpenInfo info
        _check_rows(rows, parent_starts, 5)
        self._earliest = NONE
        with nogil:
            for i in range(rows.shape[0]):
                info.start = rows[i, 4]
                info.location = <int32_t>rows[i, 3]
                info.kind = <int32_t>rows[i, 2]
                info.served = False
                self._open[rows[i, 0]] = info
                self._serve(rows[i, 1], rows[i, 2])
                self._add_start(self._loc(rows[i, 3]), rows[i, 2], rows[i, 4],
                                parent_starts[i])
        return self._earliest if self._earliest != NONE else None

    def add(self, const int64_t[:, ::1] rows not None,
            const int64_t[::1] parent_starts not None):
        """Finished tasks: (id, parent, kind, location, start, end) rows (more columns are
        ignored), with the start of each one's parent.

        A parent's start is -1 if it is not known (only a ``req_in``'s is used: it waits
        from then until its own start). Returns the earliest event time added (a task
        given to ``open`` adds only its end), or None.
        """
        cdef Py_ssize_t i
        cdef Loc *loc
        cdef unordered_map[int64_t, OpenInfo].iterator it
        _check_rows(rows, parent_starts, 6)
        self._earliest = NONE
        with nogil:
            for i in range(rows.shape[0]):
                loc = self._loc(rows[i, 3])
                it = self._open.find(rows[i, 0])
                if it != self._open.end():
                    self._open.erase(it)  # its start side is in already
                else:
                    self._serve(rows[i, 1], rows[i, 2])
                    self._add_start(loc, rows[i, 2], rows[i, 4], parent_starts[i])
                self._add_end(loc, rows[i, 0], rows[i, 2], rows[i, 4], rows[i, 5])
        return self._earliest if self._earliest != NONE else None

    cdef void _serve(self, int64_t parent, int64_t kind) noexcept nogil:
        """A req_in has started: its parent no longer holds the frontier back."""
        cdef unordered_map[int64_t, OpenInfo].iterator it
        if parent < 0 or self._klass(kind) != 1:
            return
        it = self._open.find(parent)
        if it != self._open.end():
            deref(it).second.served = True

    def parent_starts(self, const int64_t[:, ::1] rows not None,
                      const int64_t[:, ::1] finished not None,
                      const int64_t[:, ::1] opened not None):
        """The start of the parent of each ``req_in`` among ``rows`` (task rows: id,
        parent, kind, ...), -1 for the other rows, ``NOT_HELD`` for a parent that is in
        none of ``finished`` and ``opened`` (task rows in key order: id first, start in
        the fifth column) and not open here either (it may be in the file)."""
        out = np.full(rows.shape[0], -1, dtype=np.int64)
        cdef int64_t[::1] starts = out
        cdef Py_ssize_t i, at
        cdef int64_t parent
        cdef unordered_map[int64_t, OpenInfo].iterator it
        if rows.shape[0] and rows.shape[1] < 3 or finished.shape[0] and finished.shape[1] < 5 \
                or opened.shape[0] and opened.shape[1] < 5:
            raise ValueError("task rows have at least an id, parent and kind; finished and"
                             " opened ones a location and start too")
        with nogil:
            for i in range(rows.shape[0]):
                parent = rows[i, 1]
                if parent < 0 or self._klass(rows[i, 2]) != 1:
                    continue
                at = _find(finished, parent)
                if at >= 0:
                    starts[i] = finished[at, 4]
                    continue
                at = _find(opened, parent)
                if at >= 0:
                    starts[i] = opened[at, 4]
                    continue
                it = self._open.find(parent)
                starts[i] = deref(it).second.start if it != self._open.end() else PARENT_NOT_HELD
        return out

    def mark_dirty(self, int64_t location):
        """Leave ``location`` to a rebuild from the task table."""
        self._loc(location).dirty = True

    def open_req_out_floor(self):
        """Earliest start of an open ``req_out`` whose ``req_in`` has not started, or None.

        That ``req_in`` will wait from the request's start on, at a location not known
        yet, so no location may be written past it."""
        cdef int64_t floor = 1 << 62
        cdef bint found = False
        for item in self._open:
            if not item.second.served and self._klass(item.second.kind) == 2:
                if item.second.start < floor:
                    floor = item.second.start
                found = True
        return floor if found else None

    def held_bytes(self):
        """{part: bytes} the builder holds (capacities), to check that it stays bounded."""
        cdef Loc *loc
        cdef size_t i
        out = {"pending": 0, "long": 0, "carries": 0, "open": self._open.bucket_count() * 8
               + self._open.size() * (sizeof(OpenInfo) + 24),
               "rows": (self._rows.capacity() + self._kind_rows.capacity()) * 8}
        for i in range(self._locs.size()):
            loc = &self._locs[i]
            out["pending"] += loc.pending.capacity() * sizeof(Event)
            out["long"] += loc.long_dur.capacity() * 32
            out["carries"] += sum(loc.carry_kind[r].capacity() * 8 for r in range(MAX_LEVELS))
        return out

    def pending_by_location(self):
        """{location: (events waiting for the frontier, finest level or -1)}."""
        return {i: (self._locs[i].pending.size(), self._locs[i].level0)
                for i in range(self._locs.size()) if self._locs[i].pending.size()}

    @property
    def open_count(self):
        return self._open.size()

    cdef inline int8_t _klass(self, int64_t kind) noexcept nogil:
        return self._class[kind] if kind < <int64_t>self._class.size() else 0

    cdef void _event(self, Loc *loc, int64_t time, int64_t kind, int8_t d_all,
                     int8_t d_out, int8_t d_buf, int8_t flags, int64_t latency) noexcept nogil:
        cdef Event e
        e.time = time
        e.kind = <int32_t>kind
        e.d_all = d_all
        e.d_out = d_out
        e.d_buf = d_buf
        e.flags = flags
        e.latency = latency
        if time < loc.first_event:
            loc.first_event = time
        if time < self._earliest:
            self._earliest = time
        if loc.level0 >= 0 and time < loc.next_bin * loc.width:
            loc.dirty = True  # behind the frontier: its bins are written
        loc.pending.push_back(e)
        self.pending_events += 1

    cdef void _add_start(self, Loc *loc, int64_t kind, int64_t start,
                         int64_t parent_start) noexcept nogil:
        cdef int8_t klass = self._klass(kind)
        cdef int8_t d_buf = 0
        if klass == 1 and 0 <= parent_start <= start:
            self._event(loc, parent_start, kind, 0, 0, 1, 0, 0)
            d_buf = -1
        self._event(loc, start, kind, 1, 1 if klass == 2 else 0, d_buf,
                    F_KIND_STARTED | (F_IN_STARTED if klass == 1 else 0), 0)
        loc.started += 1
        if start < loc.first_start:
            loc.first_start = start

    cdef void _add_end(self, Loc *loc, int64_t key, int64_t kind, int64_t start,
                       int64_t end) noexcept nogil:
        cdef int8_t klass = self._klass(kind)
        cdef int64_t duration = end - start
        self._event(loc, end, kind, -1, -1 if klass == 2 else 0, 0,
                    F_IN_ENDED if klass == 1 else 0, duration if klass == 1 else 0)
        loc.count += 1
        if end > loc.last_end:
            loc.last_end = end
        if duration > loc.max_duration:
            loc.max_duration = duration
        if duration > loc.long_floor:
            loc.long_dur.push_back(duration)
            loc.long_id.push_back(key)
            loc.long_start.push_back(start)
            loc.long_end.push_back(end)
            if <int64_t>loc.long_dur.size() > 2 * self._candidates(loc.count) + 64:
                self._prune_long(loc)

    cdef int64_t _keep(self, int64_t count) noexcept nogil:
        """``pyramid.long_keep``, without a Python call per task."""
        return min(_LONG_MAX, max(<int64_t>1, <int64_t>(count * _LONG_SHARE)))

    cdef int64_t _candidates(self, int64_t count) noexcept nogil:
        """Longest tasks a prune keeps: twice as many as will be listed."""
        return 2 * self._keep(count) + 2

    cdef void _prune_long(self, Loc *loc) noexcept nogil:
        """Keep the longest tasks, raising the floor. A prune leaves at most 1.5 times
        the candidates, so the next one is half the candidates of additions away: the
        cost per task stays constant, and the list stays within a few times
        ``pyramid.LONG_MAX`` at any task count."""
        cdef int64_t keep = self._candidates(loc.count)
        cdef vector[int64_t] d = loc.long_dur
        cdef Py_ssize_t n = d.size(), i, j = 0
        if n <= keep:
            return
        nth_element(d.begin(), d.begin() + (n - keep), d.end())
        cdef int64_t cut = d[n - keep]  # durations from it up are kept
        cdef Py_ssize_t ties = 0
        for i in range(n - keep):
            ties += d[i] == cut
        # Many tasks of one duration (a fixed latency) tie at the cut: keeping them all
        # would let the list grow with the trace, so then the cut's duration goes too.
        cdef int64_t floor = cut if 2 * ties > keep else cut - 1
        if floor > loc.long_floor:
            loc.long_floor = floor
        for i in range(n):
            if loc.long_dur[i] > loc.long_floor:
                loc.long_dur[j] = loc.long_dur[i]
                loc.long_id[j] = loc.long_id[i]
                loc.long_start[j] = loc.long_start[i]
                loc.long_end[j] = loc.long_end[i]
                j += 1
        loc.long_dur.resize(j)
        loc.long_id.resize(j)
        loc.long_start.resize(j)
        loc.long_end.resize(j)

    # -- output ----------------------------------------------------------------------
    def advance(self, int64_t frontier):
        """Write every bin that ends at or before ``frontier`` (ps): no event will come
        before it, except at locations that become dirty."""
        cdef size_t i
        cdef Loc *loc
        with nogil:
            for i in range(self._locs.size()):
                loc = &self._locs[i]
                if loc.dirty:
                    self._drop(loc)
                    continue
                if loc.level0 < 0:
                    if loc.started < self.sample:
                        continue
                    self._choose_level(loc)
                self._flush(i, loc, frontier // loc.width)

    def finish(self):
        """Write everything left; returns per-location statistics and long tasks.

        ``{location: (count, busy_ps, max_duration_ps, short_duration_ps, first_start_ps,
        last_end_ps, min_level, long_rows)}`` for every clean location with tasks. Tasks
        opened and never finished make their locations dirty.
        """
        cdef size_t i
        cdef Loc *loc
        cdef int top, r
        for item in self._open:
            self._loc(item.second.location).dirty = True
        self._open.clear()
        stats = {}
        for i in range(self._locs.size()):
            loc = &self._locs[i]
            if loc.dirty or loc.count == 0:
                self._drop(loc)
                continue
            if loc.level0 < 0:
                self._choose_level(loc)
            with nogil:
                while not loc.dirty and loc.next_bin <= loc.last_end // loc.width:
                    self._flush(i, loc, loc.last_end // loc.width + 1)  # again if it coarsened
            if loc.dirty:
                continue
            top = 0
            while (loc.first_event // loc.width) >> top != (loc.last_end // loc.width) >> top:
                top += 1
            for r in range(1, top + 1):
                if loc.carry_has[r]:
                    loc.carry_has[r] = False
                    self._push(i, loc, r, loc.carry_bin[r], loc.carry_val[r],
                               loc.carry_kind[r].data())
            short, long_rows = self._long(loc)
            stats[i] = (loc.count, loc.busy, loc.max_duration, short, loc.first_start,
                        loc.last_end, loc.level0, long_rows)
        return stats

    cdef tuple _long(self, Loc *loc):
        """(short_duration_ps, long rows) as ``pyramid.split_long`` decides them from the
        candidates kept (never below the longest task left out of them)."""
        cdef int64_t span = max(1, loc.last_end - loc.first_start)
        if loc.max_duration * loc.count <= LONG_SPLIT_FACTOR * span:
            return loc.max_duration, []
        cdef int64_t keep = self._keep(loc.count)
        d = _array(loc.long_dur)
        ordered = np.sort(d)
        if len(ordered) > keep or loc.long_floor < 0:  # else every candidate is listed
            short = int(ordered[max(0, len(ordered) - keep - 1)]) if len(ordered) else 0
        else:
            short = loc.long_floor
        short = max(short, loc.long_floor)
        if short >= loc.max_duration:
            return loc.max_duration, []
        sel = np.flatnonzero(d > short)
        return short, list(zip(_array(loc.long_id)[sel].tolist(),
                               _array(loc.long_start)[sel].tolist(),
                               _array(loc.long_end)[sel].tolist()))

    def take_rows(self):
        """(metric_bin rows, metric_kind_bin rows) written since the last call."""
        metric = _array(self._rows).reshape(-1, 3 + NCOL)
        kinds = _array(self._kind_rows).reshape(-1, 6)
        self._rows.clear()
        self._kind_rows.clear()
        return metric, kinds

    def level_of(self, int64_t location):
        """The finest level chosen for ``location``, or -1."""
        return self._locs[location].level0 if location < <int64_t>self._locs.size() else -1

    def set_level(self, int64_t location, int level0):
        """Fix ``location``'s finest level in advance (a rebuild knows the final counts)."""
        loc = self._loc(location)
        loc.preset = True
        loc.level0 = level0
        loc.width = self.base << level0
        loc.next_bin = -(<int64_t>NONE) // loc.width

    # -- internals -------------------------------------------------------------------
    cdef void _choose_level(self, Loc *loc) noexcept nogil:
        loc.level0 = _min_level(loc.started, loc.first_start, max(loc.last_end, loc.first_start),
                                self.base, self.target)
        loc.width = self.base << loc.level0
        loc.next_bin = -(<int64_t>NONE) // loc.width

    cdef void _drop(self, Loc *loc) noexcept nogil:
        self.pending_events -= loc.pending.size()
        loc.pending.clear()
        loc.pending.shrink_to_fit()

    cdef void _flush(self, Py_ssize_t index, Loc *loc, int64_t bound) noexcept nogil:
        """Write loc's level-0 bins before ``bound`` (and what they complete above)."""
        cdef vector[Event] ready
        cdef Py_ssize_t i, j = 0, k, n = loc.pending.size(), nk
        cdef int64_t limit = bound * loc.width, w = loc.width
        if bound <= loc.next_bin:
            return
        for i in range(n):
            if loc.pending[i].time < limit:
                ready.push_back(loc.pending[i])
            else:
                loc.pending[j] = loc.pending[i]
                j += 1
        loc.pending.resize(j)
        self.pending_events -= n - j
        cpp_sort(ready.begin(), ready.end(), _earlier)
        nk = self._class.size()
        if <Py_ssize_t>loc.a_kind.size() < nk:
            loc.a_kind.resize(nk, 0)
        if loc.pending.capacity() > 2 * loc.pending.size() + 4096:
            loc.pending.shrink_to_fit()  # a burst is over: give its room back
        cdef int64_t vals[NCOL]
        cdef vector[int64_t] kv
        kv.resize(2 * nk, 0)
        cdef int64_t b = loc.next_bin, eb, bin_end, rest
        cdef Event e
        cdef bint idle, before
        n = ready.size()
        i = 0
        while True:
            eb = ready[i].time // w if i < n else bound
            idle = loc.a_all == 0 and loc.a_out == 0 and loc.a_buf == 0
            while b < eb and not idle:  # bins without events, under tasks in flight
                if (not loc.preset and b % 2 == 0 and loc.level0_bins
                        > COARSEN_BINS_PER_TASK * loc.started + COARSEN_MIN_BINS):
                    if loc.level0 + 2 >= MAX_LEVELS:
                        loc.dirty = True  # cannot coarsen further: rebuilt at the end
                        self._drop(loc)
                        return
                    self._coarsen(index, loc)
                    w = loc.width
                    b //= 2
                    bound //= 2
                    # Events of the last bin at the new width, which the frontier may not
                    # have passed, wait for a later flush.
                    j = n
                    while j > i and ready[j - 1].time >= bound * w:
                        j -= 1
                    for k in range(j, n):
                        loc.pending.push_back(ready[k])
                    self.pending_events += n - j
                    n = j
                    eb = ready[i].time // w if i < n else bound
                    continue
                self._steady(loc, w, vals, kv, nk)
                self._level0(index, loc, b, vals, kv)
                b += 1
            b = eb
            if i >= n:
                break
            self._steady(loc, w, vals, kv, nk)
            bin_end = (eb + 1) * w
            while i < n and ready[i].time // w == eb:
                e = ready[i]
                rest = bin_end - e.time
                if e.d_all:
                    before = loc.a_all > 0
                    loc.a_all += e.d_all
                    vals[3] += e.d_all * rest
                    if before != (loc.a_all > 0):
                        vals[6] += rest if loc.a_all > 0 else -rest
                    kv[2 * e.kind + 1] += e.d_all * rest
                    loc.a_kind[e.kind] += e.d_all
                if e.d_out:
                    loc.a_out += e.d_out
                    vals[5] += e.d_out * rest
                if e.d_buf:
                    loc.a_buf += e.d_buf
                    vals[4] += e.d_buf * rest
                if e.flags & F_KIND_STARTED:
                    kv[2 * e.kind] += 1
                if e.flags & F_IN_STARTED:
                    vals[0] += 1
                if e.flags & F_IN_ENDED:
                    vals[1] += 1
                    vals[2] += e.latency
                i += 1
            self._level0(index, loc, eb, vals, kv)
            b = eb + 1
        loc.next_bin = bound

    cdef void _coarsen(self, Py_ssize_t index, Loc *loc) noexcept nogil:
        """Raise ``loc``'s finest level by one, at an even level-0 bin: every bin before it
        is written, so the carry one level up is complete and goes out now, and each
        coarser carry moves down one relative level."""
        cdef int r, c
        if loc.carry_has[1]:
            loc.carry_has[1] = False
            self._push(index, loc, 1, loc.carry_bin[1], loc.carry_val[1], loc.carry_kind[1].data())
        for r in range(1, MAX_LEVELS - 1):
            loc.carry_has[r] = loc.carry_has[r + 1]
            loc.carry_bin[r] = loc.carry_bin[r + 1]
            for c in range(NCOL):
                loc.carry_val[r][c] = loc.carry_val[r + 1][c]
            loc.carry_kind[r].swap(loc.carry_kind[r + 1])
        loc.carry_has[MAX_LEVELS - 1] = False
        loc.level0 += 1
        loc.width *= 2
        loc.level0_bins //= 2
        loc.coarsened = True

    cdef void _steady(self, Loc *loc, int64_t w, int64_t *vals, vector[int64_t] &kv,
                      Py_ssize_t nk) noexcept nogil:
        """A bin's sums from what is in flight at its start, before its own events."""
        cdef Py_ssize_t k
        vals[0] = vals[1] = vals[2] = 0
        vals[3] = loc.a_all * w
        vals[4] = loc.a_buf * w
        vals[5] = loc.a_out * w
        vals[6] = w if loc.a_all > 0 else 0
        for k in range(nk):
            kv[2 * k] = 0
            kv[2 * k + 1] = loc.a_kind[k] * w

    cdef void _level0(self, Py_ssize_t index, Loc *loc, int64_t b, int64_t *vals,
                      vector[int64_t] &kv) noexcept nogil:
        loc.busy += vals[6]
        loc.level0_bins += 1
        self._push(index, loc, 0, b, vals, kv.data())

    cdef void _push(self, Py_ssize_t index, Loc *loc, int r, int64_t b, int64_t *vals,
                    int64_t *kv) noexcept nogil:
        """Write bin ``b`` of relative level ``r`` and add it into its parent bin."""
        cdef Py_ssize_t c, k, nk = self._class.size()
        cdef bint nonzero = False
        cdef int up = r + 1
        for c in range(NCOL):
            if vals[c] != 0:
                nonzero = True
        if nonzero:
            self._rows.push_back(index)
            self._rows.push_back(loc.level0 + r)
            self._rows.push_back(b)
            for c in range(NCOL):
                self._rows.push_back(vals[c])
        if r >= _KIND_OFFSET:
            for k in range(nk):
                if kv[2 * k] != 0 or kv[2 * k + 1] != 0:
                    self._kind_rows.push_back(index)
                    self._kind_rows.push_back(loc.level0 + r)
                    self._kind_rows.push_back(b)
                    self._kind_rows.push_back(k)
                    self._kind_rows.push_back(kv[2 * k])
                    self._kind_rows.push_back(kv[2 * k + 1])
        if up >= MAX_LEVELS:
            return
        if <Py_ssize_t>loc.carry_kind[up].size() < 2 * nk:
            loc.carry_kind[up].resize(2 * nk, 0)
        if loc.carry_has[up] and loc.carry_bin[up] != b >> 1:
            loc.carry_has[up] = False  # complete: every child of it is written
            self._push(index, loc, up, loc.carry_bin[up], loc.carry_val[up],
                       loc.carry_kind[up].data())
        if not loc.carry_has[up]:
            loc.carry_has[up] = True
            loc.carry_bin[up] = b >> 1
            for c in range(NCOL):
                loc.carry_val[up][c] = 0
            for k in range(2 * nk):
                loc.carry_kind[up][k] = 0
        for c in range(NCOL):
            loc.carry_val[up][c] += vals[c]
        for k in range(2 * nk):
            loc.carry_kind[up][k] += kv[k]
