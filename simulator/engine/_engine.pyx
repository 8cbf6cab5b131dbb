# cython: language_level=3
"""The event engine in Cython: the same API and behaviour as ``engine.py``.

Events live in a C array binary heap ordered by ``(time, priority, sequence)``; each
holds owned references to its handler and argument. Handlers are ``cdef class``\\ es,
so delivering an event is a C call through the vtable, and a Cython component's
``tick`` never re-enters the interpreter. See ``engine.py`` for the model itself.
"""
from cpython.mem cimport PyMem_Free, PyMem_Realloc
from cpython.ref cimport Py_DECREF, Py_INCREF, PyObject
from libc.stdint cimport int64_t

PRIMARY = 0
SECONDARY = 1
TICK = -1

cdef enum:
    TICK_KIND = -1


cdef inline bint _before(Event* a, Event* b) noexcept nogil:
    if a.time != b.time:
        return a.time < b.time
    if a.priority != b.priority:
        return a.priority < b.priority
    return a.seq < b.seq


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

    def __dealloc__(self):
        cdef Py_ssize_t i
        if self._heap != NULL:
            for i in range(self._size):
                Py_DECREF(<object>self._heap[i].handler)
                Py_DECREF(<object>self._heap[i].arg)
            PyMem_Free(self._heap)

    cpdef int schedule(self, int64_t time, Handler handler, int kind=0, object arg=None,
                       int priority=0) except -1:
        """Deliver ``handler.handle(kind, arg)`` at absolute time ``time``."""
        cdef Py_ssize_t i, parent
        cdef Event ev
        cdef Event* grown
        if time < self.now:
            raise ValueError(f"cannot schedule at {time}, before the current time {self.now}")
        if handler is None:
            raise TypeError("an event needs a handler")
        if self._size == self._capacity:
            grown = <Event*>PyMem_Realloc(self._heap, (self._capacity * 2 + 64) * sizeof(Event))
            if grown == NULL:
                raise MemoryError()
            self._heap = grown
            self._capacity = self._capacity * 2 + 64
        Py_INCREF(handler)
        Py_INCREF(arg)
        ev.time = time
        ev.seq = self._seq
        ev.priority = priority
        ev.kind = kind
        ev.handler = <PyObject*>handler
        ev.arg = <PyObject*>arg
        self._seq += 1
        # sift up
        i = self._size
        self._size += 1
        while i > 0:
            parent = (i - 1) >> 1
            if not _before(&ev, &self._heap[parent]):
                break
            self._heap[i] = self._heap[parent]
            i = parent
        self._heap[i] = ev
        return 0

    @property
    def pending(self):
        """Number of events scheduled and not yet run."""
        return self._size

    cpdef int64_t peek_time(self):
        """Time of the next event, or -1 when none is scheduled."""
        return self._heap[0].time if self._size else -1

    cdef Event _pop(self) noexcept:
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
        self._stopped = False
        try:
            while self._size > 0 and not self._stopped:
                if until >= 0 and self._heap[0].time > until:
                    break
                ev = self._pop()
                self.now = ev.time
                count += 1
                handler = <Handler>ev.handler
                arg = <object>ev.arg
                Py_DECREF(handler)     # the heap's references now belong to the locals
                Py_DECREF(arg)
                handler.handle(ev.kind, arg)
        finally:
            self.events += count
        return count

    cpdef stop(self):
        """Make ``run`` return after the event being handled."""
        self._stopped = True

    def clear(self):
        """Drop every pending event. The C heap holds references the garbage collector
        cannot see, so a model abandoned mid-run (Ctrl-C, an error) is freed only once
        its engine is cleared."""
        cdef Py_ssize_t i
        for i in range(self._size):
            Py_DECREF(<object>self._heap[i].handler)
            Py_DECREF(<object>self._heap[i].arg)
        self._size = 0


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
        self._count = 0
        self.consumer = None
        self.producers = []
        self.pushed = 0
        self.refused = 0

    def __len__(self):
        return self._count

    @property
    def items(self):
        """The items, oldest first (a copy)."""
        return [self._slots[(self._head + i) % self.capacity] for i in range(self._count)]

    cpdef bint can_push(self):
        """True when a push would be accepted."""
        return self._count < self.capacity

    cpdef bint push(self, object item) except -1:
        """Append ``item`` and wake the consumer; False (and nothing done) when full."""
        cdef Py_ssize_t at
        if self._count >= self.capacity:
            self.refused += 1
            return False
        at = self._head + self._count
        if at >= self.capacity:
            at -= self.capacity
        self._slots[at] = item
        self._count += 1
        self.pushed += 1
        if self.consumer is not None:
            self.consumer.wake()
        return True

    cpdef object peek(self):
        """The oldest item, or None."""
        return self._slots[self._head] if self._count else None

    cpdef object pop(self):
        """Remove and return the oldest item; wake the producers if it was full."""
        if self._count == 0:
            raise IndexError("pop from an empty buffer")
        cdef bint was_full = self._count >= self.capacity
        item = self._slots[self._head]
        self._slots[self._head] = None
        self._head += 1
        if self._head == self.capacity:
            self._head = 0
        self._count -= 1
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
