# cython: language_level=3
"""The event engine in Cython: the same API and behaviour as ``engine.py``.

Events are ordered by ``(time, priority, sequence)``; each holds owned references to its
handler and argument. Most are due within a few hundred cycles (a tick in the next one,
a response after a cache's or DRAM's latency), so they go into a *timing wheel*: one
bucket per cycle of the next ``WHEEL`` cycles, each kept in ``(priority, sequence)``
order (events arrive in sequence order, so that is an append but for a rare priority),
with a bitmap of the buckets in use. Scheduling and taking the next event then cost a
few instructions, where a binary heap of tens of thousands of events in flight cost a
dozen cache misses each. Events further ahead wait in a C array binary heap; the next
event is the earlier of the wheel's first and the heap's top.

Handlers are ``cdef class``\\ es, so delivering an event is a C call through the vtable,
and a Cython component's ``tick`` never re-enters the interpreter. See ``engine.py`` for
the model itself.
"""
from cpython.mem cimport PyMem_Free, PyMem_Realloc
from cpython.ref cimport Py_DECREF, Py_INCREF, PyObject
from libc.stdint cimport int64_t, uint64_t

PRIMARY = 0
SECONDARY = 1
TICK = -1

cdef enum:
    TICK_KIND = -1
    HEAP = -1  # the next event is the heap's top (_next's answer), not in a bucket
    NOTHING = -2  # no event is scheduled


cdef extern from *:
    int __builtin_ctzll(unsigned long long bits) nogil


cdef inline bint _before(Event* a, Event* b) noexcept nogil:
    if a.time != b.time:
        return a.time < b.time
    if a.priority != b.priority:
        return a.priority < b.priority
    return a.seq < b.seq


cdef inline int _grow(Event** events, Py_ssize_t* capacity) except -1:
    """Make room for one more event in the array ``events[0:capacity]``."""
    cdef Event* grown = <Event*>PyMem_Realloc(events[0], (capacity[0] * 2 + 16) * sizeof(Event))
    if grown == NULL:
        raise MemoryError()
    events[0] = grown
    capacity[0] = capacity[0] * 2 + 16
    return 0


cdef inline void _release(Event* ev) noexcept:
    Py_DECREF(<object>ev.handler)
    Py_DECREF(<object>ev.arg)


cdef class Handler:
    """Anything an event can be delivered to."""

    cpdef handle(self, int kind, object arg):
        raise NotImplementedError


cdef class Engine:
    """A serial discrete-event engine over integer time."""

    def __cinit__(self):
        self.now = 0
        self.events = 0
        self._size = 0
        self._capacity = 0
        self._heap = NULL
        self._seq = 0
        self._stopped = False
        self._in_wheel = 0
        cdef Py_ssize_t b
        for b in range(WHEEL):
            self._wheel[b].events = NULL
            self._wheel[b].head = self._wheel[b].size = self._wheel[b].capacity = 0
        for b in range(WHEEL_WORDS):
            self._used[b] = 0

    def __dealloc__(self):
        self._drop_all()
        cdef Py_ssize_t b
        for b in range(WHEEL):
            PyMem_Free(self._wheel[b].events)
        PyMem_Free(self._heap)

    cdef void _drop_all(self) noexcept:
        """Let go of every pending event."""
        cdef Py_ssize_t b, i
        cdef Bucket* bucket
        for b in range(WHEEL):
            bucket = &self._wheel[b]
            for i in range(bucket.head, bucket.size):
                _release(&bucket.events[i])
            bucket.head = bucket.size = 0
        for b in range(WHEEL_WORDS):
            self._used[b] = 0
        self._in_wheel = 0
        for i in range(self._size):
            _release(&self._heap[i])
        self._size = 0

    cpdef int schedule(self, int64_t time, Handler handler, int kind=0, object arg=None,
                       int priority=0) except -1:
        """Deliver ``handler.handle(kind, arg)`` at absolute time ``time``."""
        cdef Event ev
        if time < self.now:
            raise ValueError(f"cannot schedule at {time}, before the current time {self.now}")
        if handler is None:
            raise TypeError("an event needs a handler")
        ev.time = time
        ev.seq = self._seq
        ev.priority = priority
        ev.kind = kind
        ev.handler = <PyObject*>handler
        ev.arg = <PyObject*>arg
        if time - self.now < WHEEL:
            self._wheel_push(&ev)
        else:
            self._heap_push(&ev)
        Py_INCREF(handler)
        Py_INCREF(arg)
        self._seq += 1
        return 0

    cdef int _wheel_push(self, Event* ev) except -1:
        """Into the bucket of its cycle, after the events it does not precede."""
        cdef Py_ssize_t b = ev.time & (WHEEL - 1), i
        cdef Bucket* bucket = &self._wheel[b]
        if bucket.size == bucket.capacity:
            if bucket.head > 0:  # taken events leave room at the front: slide down
                for i in range(bucket.head, bucket.size):
                    bucket.events[i - bucket.head] = bucket.events[i]
                bucket.size -= bucket.head
                bucket.head = 0
            else:
                _grow(&bucket.events, &bucket.capacity)
        i = bucket.size
        while i > bucket.head and _before(ev, &bucket.events[i - 1]):  # a lower priority only
            bucket.events[i] = bucket.events[i - 1]
            i -= 1
        bucket.events[i] = ev[0]
        bucket.size += 1
        self._used[b >> 6] |= (<uint64_t>1) << (b & 63)
        self._in_wheel += 1
        return 0

    cdef int _heap_push(self, Event* ev) except -1:
        cdef Py_ssize_t i, parent
        if self._size == self._capacity:
            _grow(&self._heap, &self._capacity)
        i = self._size
        self._size += 1
        while i > 0:
            parent = (i - 1) >> 1
            if not _before(ev, &self._heap[parent]):
                break
            self._heap[i] = self._heap[parent]
            i = parent
        self._heap[i] = ev[0]
        return 0

    @property
    def pending(self):
        """Number of events scheduled and not yet run."""
        return self._size + self._in_wheel

    cdef Py_ssize_t _first_bucket(self) noexcept nogil:
        """The bucket of the earliest cycle in the wheel, or -1 when it is empty: the first
        in use from the current cycle's on, around the wheel."""
        cdef Py_ssize_t start = self.now & (WHEEL - 1)
        cdef Py_ssize_t word = start >> 6, k, w
        cdef uint64_t bits
        if self._in_wheel == 0:
            return -1
        bits = self._used[word] & (~(<uint64_t>0) << (start & 63))
        if bits:
            return (word << 6) | __builtin_ctzll(bits)
        for k in range(1, WHEEL_WORDS + 1):
            w = (word + k) & (WHEEL_WORDS - 1)
            bits = self._used[w]
            if bits:
                return (w << 6) | __builtin_ctzll(bits)
        return -1

    cdef Py_ssize_t _next(self) noexcept nogil:
        """Where the next event is: a bucket, ``HEAP`` or ``NOTHING``."""
        cdef Py_ssize_t b = self._first_bucket()
        if b < 0:
            return HEAP if self._size else NOTHING
        if self._size and _before(&self._heap[0], &self._wheel[b].events[self._wheel[b].head]):
            return HEAP
        return b

    cdef Event* _at(self, Py_ssize_t where) noexcept nogil:
        if where == HEAP:
            return &self._heap[0]
        return &self._wheel[where].events[self._wheel[where].head]

    cpdef int64_t peek_time(self):
        """Time of the next event, or -1 when none is scheduled."""
        cdef Py_ssize_t where = self._next()
        return -1 if where == NOTHING else self._at(where).time

    cdef Event _take(self, Py_ssize_t where) noexcept:
        """Remove and return the next event, found at ``where`` (``_next``)."""
        cdef Event ev
        cdef Bucket* bucket
        if where == HEAP:
            return self._heap_pop()
        bucket = &self._wheel[where]
        ev = bucket.events[bucket.head]
        bucket.head += 1
        if bucket.head == bucket.size:
            bucket.head = bucket.size = 0
            self._used[where >> 6] &= ~((<uint64_t>1) << (where & 63))
        self._in_wheel -= 1
        return ev

    cdef Event _heap_pop(self) noexcept:
        cdef Event top = self._heap[0]
        cdef Event last
        cdef Py_ssize_t i = 0, child, n
        self._size -= 1
        n = self._size
        if n > 0:
            last = self._heap[n]
            while True:
                child = 2 * i + 1
                if child >= n:
                    break
                if child + 1 < n and _before(&self._heap[child + 1], &self._heap[child]):
                    child += 1
                if not _before(&self._heap[child], &last):
                    break
                self._heap[i] = self._heap[child]
                i = child
            self._heap[i] = last
        return top

    cpdef int64_t run(self, int64_t until=-1) except -1:
        """Run events in order until none is left, the next one is later than ``until``
        (when ``until >= 0``) or ``stop()`` was called. Returns the number of events run."""
        cdef Event ev
        cdef Handler handler
        cdef object arg
        cdef int64_t count = 0
        cdef Py_ssize_t where
        self._stopped = False
        try:
            while not self._stopped:
                where = self._next()
                if where == NOTHING or (until >= 0 and self._at(where).time > until):
                    break
                ev = self._take(where)
                self.now = ev.time
                count += 1
                handler = <Handler>ev.handler
                arg = <object>ev.arg
                Py_DECREF(handler)     # the wheel's references now belong to the locals
                Py_DECREF(arg)
                handler.handle(ev.kind, arg)
        finally:
            self.events += count
        return count

    cpdef stop(self):
        """Make ``run`` return after the event being handled."""
        self._stopped = True

    def clear(self):
        """Drop every pending event. The wheel and the heap hold references the garbage
        collector cannot see, so a model abandoned mid-run (Ctrl-C, an error) is freed
        only once its engine is cleared."""
        self._drop_all()


cdef class TickingComponent(Handler):
    """A component that ticks once per cycle while it makes progress (smart ticking)."""

    def __init__(self, Engine engine, str name):
        self.engine = engine
        self.name = name
        self.next_tick = -1
        self.ticks = 0

    cpdef int wake_at(self, int64_t time) except -1:
        """Make sure the component ticks at ``time`` or earlier."""
        if 0 <= self.next_tick <= time:
            return 0
        self.next_tick = time
        self.engine.schedule(time, self, TICK_KIND)
        return 0

    cpdef int wake(self) except -1:
        """Tick in the next cycle (akita's ``TickLater``)."""
        return self.wake_at(self.engine.now + 1)

    cpdef handle(self, int kind, object arg):
        if kind != TICK_KIND:
            return self.receive(kind, arg)
        self._tick_due(self.engine.now)

    cdef int _tick_due(self, int64_t now) except -1:
        """Tick now, unless an earlier tick superseded the one due now."""
        cdef int64_t following
        if now != self.next_tick:
            return 0  # superseded by an earlier tick that already ran
        self.next_tick = -1
        self.ticks += 1
        following = self.tick(now)
        if following >= 0:
            self.wake_at(following)
        return 0

    cpdef int64_t tick(self, int64_t now) except? -2:
        """One cycle of work; return the next time to tick (> now) or -1 to sleep."""
        return -1

    cpdef receive(self, int kind, object arg):
        """A timed event other than a tick (for example a response arriving)."""
        raise NotImplementedError(f"{self.name} got an unexpected event of kind {kind}")


cdef class Buffer:
    """A bounded FIFO from producers to one consumer, with back-pressure.

    Its items sit in a ring of ``capacity`` slots (a list, so the garbage collector sees
    them), read and written by index: a deque's methods are Python calls, and every
    request crosses three buffers.
    """

    def __init__(self, Py_ssize_t capacity, str name=""):
        if capacity < 1:
            raise ValueError(f"buffer {name!r} needs a capacity of at least 1, got {capacity}")
        self.capacity = capacity
        self.name = name
        self._slots = [None] * capacity
        self._head = 0
        self.size = 0
        self.consumer = None
        self.producers = []
        self.pushed = 0
        self.refused = 0

    def __len__(self):
        return self.size

    @property
    def items(self):
        """The items, oldest first (a copy)."""
        return [self._slots[(self._head + i) % self.capacity] for i in range(self.size)]

    cpdef bint can_push(self):
        """True when a push would be accepted."""
        return self.size < self.capacity

    cpdef bint push(self, object item) except -1:
        """Append ``item`` and wake the consumer; False (and nothing done) when full."""
        cdef Py_ssize_t at
        if self.size >= self.capacity:
            self.refused += 1
            return False
        at = self._head + self.size
        if at >= self.capacity:
            at -= self.capacity
        self._slots[at] = item
        self.size += 1
        self.pushed += 1
        if self.consumer is not None:
            self.consumer.wake()
        return True

    cpdef object peek(self):
        """The oldest item, or None."""
        return self._slots[self._head] if self.size else None

    cpdef object pop(self):
        """Remove and return the oldest item; wake the producers if it was full."""
        if self.size == 0:
            raise IndexError("pop from an empty buffer")
        cdef bint was_full = self.size >= self.capacity
        item = self._slots[self._head]
        self._slots[self._head] = None
        self._head += 1
        if self._head == self.capacity:
            self._head = 0
        self.size -= 1
        if was_full:
            wake_together(self.producers)
        return item


cdef class WakeGroup(Handler):
    """The ticks of several components, due in the same cycle, as one event (see
    ``engine.WakeGroup``)."""

    def __init__(self, list members):
        self.members = members

    cpdef handle(self, int kind, object arg):
        cdef TickingComponent member
        for member in self.members:
            member._tick_due(member.engine.now)


cpdef int wake_together(list components) except -1:
    """``wake()`` each of ``components`` in turn, in one event (see ``engine.wake_together``)."""
    cdef TickingComponent component
    cdef TickingComponent first = None
    cdef list due = None
    cdef int64_t time = 0
    for component in components:
        time = component.engine.now + 1
        if 0 <= component.next_tick <= time:
            continue
        component.next_tick = time
        if first is None:
            first = component
        elif due is None:
            due = [first, component]
        else:
            due.append(component)
    if due is not None:
        first.engine.schedule(time, WakeGroup(due))
    elif first is not None:
        first.engine.schedule(time, first, TICK_KIND)
    return 0


cdef class TimeoutProcess(Handler):
    """A process that waits ``count`` timeouts of ``delay`` cycles, one after another.

    The engine's equivalent of a SimPy process running
    ``for _ in range(count): yield env.timeout(delay)``; benchmarks and tests use it.
    """

    def __init__(self, Engine engine, int64_t delay, int64_t count):
        self.engine = engine
        self.delay = delay
        self.count = count
        self.done = 0
        if count > 0:
            engine.schedule(engine.now + delay, self)

    cpdef handle(self, int kind, object arg):
        self.done += 1
        if self.done < self.count:
            self.engine.schedule(self.engine.now + self.delay, self)
