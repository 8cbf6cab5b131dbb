"""The event engine, as a readable pure-Python reference.

Time is an integer number of cycles. Events are ordered by ``(time, priority,
sequence)``: ``priority`` lets work that must see everything else at the same time run
last (``SECONDARY``, akita's secondary events), and the sequence number (the order in
which events were scheduled) breaks every remaining tie, so a run is deterministic.

On top of the event heap sits akita's "smart ticking". A ``TickingComponent`` is written
like a cycle-stepped model (a ``tick`` per cycle), but it only ticks while it makes
progress: ``tick`` returns the next time it wants to run, or ``-1`` to sleep until
something wakes it: a message pushed into one of its ``Buffer``\\ s, a slot freed in a
full ``Buffer`` it feeds, or an explicit ``wake_at``. When every component sleeps the
clock jumps straight to the next scheduled event.

``Buffer`` is a bounded FIFO between two components. A full buffer refuses a push, and
the producer retries when the consumer frees a slot: that is back-pressure.

``_engine.pyx`` is the Cython build of this module, with the same API and behaviour.
"""
import heapq
from collections import deque
from typing import Any

PRIMARY = 0
"""Priority of ordinary events."""

SECONDARY = 1
"""Priority of events that run after every primary event at the same time."""

TICK = -1
"""Event kind reserved for a ``TickingComponent``'s tick."""


class Handler:
    """Anything an event can be delivered to."""

    def handle(self, kind: int, arg: Any) -> Any:
        """Run the event ``kind`` with its argument ``arg`` at ``engine.now``."""
        raise NotImplementedError


class Engine:
    """A serial discrete-event engine over integer time."""

    def __init__(self) -> None:
        self.now = 0
        self.events = 0
        self._queue = []
        self._seq = 0
        self._stopped = False

    def schedule(self, time: int, handler: Handler, kind: int = 0, arg: Any = None,
                 priority: int = PRIMARY) -> None:
        """Deliver ``handler.handle(kind, arg)`` at absolute time ``time``."""
        if time < self.now:
            raise ValueError(f"cannot schedule at {time}, before the current time {self.now}")
        if handler is None:  # as the Cython build's typed argument refuses it
            raise TypeError("an event needs a handler")
        # The unique sequence number means handlers are never compared.
        heapq.heappush(self._queue, (time, priority, self._seq, handler, kind, arg))
        self._seq += 1

    @property
    def pending(self) -> int:
        """Number of events scheduled and not yet run."""
        return len(self._queue)

    def peek_time(self) -> int:
        """Time of the next event, or -1 when none is scheduled."""
        return self._queue[0][0] if self._queue else -1

    def run(self, until: int = -1) -> int:
        """Run events in order until none is left, the next one is later than ``until``
        (when ``until >= 0``) or ``stop()`` was called. Returns the number of events run."""
        queue = self._queue
        self._stopped = False
        count = 0
        while queue and not self._stopped:
            if 0 <= until < queue[0][0]:
                break
            time, _, _, handler, kind, arg = heapq.heappop(queue)
            self.now = time
            count += 1
            handler.handle(kind, arg)
        self.events += count
        return count

    def stop(self) -> None:
        """Make ``run`` return after the event being handled."""
        self._stopped = True

    def clear(self) -> None:
        """Drop every pending event (a model abandoned mid-run is then freed)."""
        self._queue.clear()


class TickingComponent(Handler):
    """A component that ticks once per cycle while it makes progress (smart ticking)."""

    def __init__(self, engine: Engine, name: str) -> None:
        self.engine = engine
        self.name = name
        self.next_tick = -1
        self.ticks = 0

    def wake_at(self, time: int) -> None:
        """Make sure the component ticks at ``time`` or earlier."""
        if 0 <= self.next_tick <= time:
            return
        self.next_tick = time
        self.engine.schedule(time, self, TICK)

    def wake(self) -> None:
        """Tick in the next cycle (akita's ``TickLater``)."""
        self.wake_at(self.engine.now + 1)

    def handle(self, kind: int, arg: Any) -> None:
        if kind != TICK:
            self.receive(kind, arg)
            return
        self._tick_due(self.engine.now)

    def _tick_due(self, now: int) -> None:
        """Tick now, unless an earlier tick superseded the one due now."""
        if now != self.next_tick:
            return  # superseded by an earlier tick that already ran
        self.next_tick = -1
        self.ticks += 1
        following = self.tick(now)
        if following >= 0:
            self.wake_at(following)

    def tick(self, now: int) -> int:
        """One cycle of work; return the next time to tick (> now) or -1 to sleep."""
        return -1

    def receive(self, kind: int, arg: Any) -> Any:
        """A timed event other than a tick (for example a response arriving)."""
        raise NotImplementedError(f"{self.name} got an unexpected event of kind {kind}")


class Buffer:
    """A bounded FIFO from producers to one consumer, with back-pressure."""

    def __init__(self, capacity: int, name: str = "") -> None:
        if capacity < 1:
            raise ValueError(f"buffer {name!r} needs a capacity of at least 1, got {capacity}")
        self.capacity = capacity
        self.name = name
        self._items = deque()
        self.consumer = None
        self.producers = []
        self.pushed = 0
        self.refused = 0

    def __len__(self) -> int:
        return len(self._items)

    @property
    def size(self) -> int:
        """Items held: ``len(buffer)``, which the compiled build's components read as a C
        field."""
        return len(self._items)

    @property
    def items(self) -> list:
        """The items, oldest first (a copy)."""
        return list(self._items)

    def can_push(self) -> bool:
        """True when a push would be accepted."""
        return len(self._items) < self.capacity

    def push(self, item: Any) -> bool:
        """Append ``item`` and wake the consumer; False (and nothing done) when full."""
        if len(self._items) >= self.capacity:
            self.refused += 1
            return False
        self._items.append(item)
        self.pushed += 1
        if self.consumer is not None:
            self.consumer.wake()
        return True

    def peek(self) -> Any:
        """The oldest item, or None."""
        return self._items[0] if self._items else None

    def pop(self) -> Any:
        """Remove and return the oldest item; wake the producers if it was full."""
        if not self._items:
            raise IndexError("pop from an empty buffer")
        was_full = len(self._items) >= self.capacity
        item = self._items.popleft()
        if was_full:
            wake_together(self.producers)
        return item


class WakeGroup(Handler):
    """The ticks of several components, due in the same cycle, as one event.

    Waking components one by one schedules an event each, with consecutive sequence
    numbers: nothing is scheduled between them, so they run back to back, in that order.
    One event ticking them in that order is the same schedule at a fraction of the cost,
    which counts where a buffer shared by many producers (an L2 bank's, by every L1V)
    wakes them all each time it frees a slot, and most find nothing to do. A member
    woken earlier meanwhile (its tick here superseded) is skipped, as its own stale
    event would be.
    """

    def __init__(self, members: list) -> None:
        self.members = members

    def handle(self, kind: int, arg: Any) -> None:
        for member in self.members:
            member._tick_due(member.engine.now)


def wake_together(components: list) -> None:
    """``wake()`` each of ``components`` (on one engine) in turn, in one event.

    The ticks are due in the next cycle, in this order, exactly as separate wakes would
    run them (see ``WakeGroup``); a component already due by then is left alone.
    """
    due = []
    time = 0
    for component in components:
        time = component.engine.now + 1
        if 0 <= component.next_tick <= time:
            continue
        component.next_tick = time
        due.append(component)
    if len(due) > 1:
        due[0].engine.schedule(time, WakeGroup(due))
    elif due:
        due[0].engine.schedule(time, due[0], TICK)


class TimeoutProcess(Handler):
    """A process that waits ``count`` timeouts of ``delay`` cycles, one after another.

    The engine's equivalent of a SimPy process running
    ``for _ in range(count): yield env.timeout(delay)``; benchmarks and tests use it.
    """

    def __init__(self, engine: Engine, delay: int, count: int) -> None:
        self.engine = engine
        self.delay = delay
        self.count = count
        self.done = 0
        if count > 0:
            engine.schedule(engine.now + delay, self)

    def handle(self, kind: int, arg: Any) -> None:
        self.done += 1
        if self.done < self.count:
            self.engine.schedule(self.engine.now + self.delay, self)
