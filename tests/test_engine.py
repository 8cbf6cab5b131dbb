"""The event engine: ordering, determinism, smart ticking, back-pressure, both builds."""
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simulator.build import available_builds
from simulator.engine import module_for


@pytest.fixture
def eng(build):
    """The engine module of each build."""
    return module_for(build)


def recorder(mod, log):
    class Recorder(mod.Handler):
        def handle(self, kind, arg):
            log.append((self.engine.now, kind, arg))
            return 0
    return Recorder


def test_events_run_by_time_then_priority_then_sequence(eng):
    engine = eng.Engine()
    log = []
    rec = recorder(eng, log)()
    rec.engine = engine
    engine.schedule(5, rec, 1, "late")
    engine.schedule(2, rec, 1, "secondary", priority=eng.SECONDARY)
    engine.schedule(2, rec, 1, "first")
    engine.schedule(2, rec, 1, "second")
    engine.schedule(0, rec, 1, "zero")
    assert engine.run() == 5
    assert [a for _, _, a in log] == ["zero", "first", "second", "secondary", "late"]
    assert [t for t, _, _ in log] == [0, 2, 2, 2, 5]
    assert engine.now == 5 and engine.events == 5


def test_secondary_runs_after_primary_scheduled_later_at_same_time(eng):
    engine = eng.Engine()
    log = []

    class Chain(eng.Handler):
        def handle(self, kind, arg):  # returns None, as plain Python handlers do
            log.append(arg)
            if arg == "a":  # a primary event at the same time, scheduled after the secondary
                engine.schedule(engine.now, self, 0, "b")

    chain = Chain()
    engine.schedule(3, chain, 0, "end-of-cycle", priority=eng.SECONDARY)
    engine.schedule(3, chain, 0, "a")
    engine.run()
    assert log == ["a", "b", "end-of-cycle"]


def test_scheduling_into_the_past_is_an_error(eng):
    engine = eng.Engine()
    proc = eng.TimeoutProcess(engine, 4, 1)
    engine.run()
    with pytest.raises(ValueError, match="before the current time"):
        engine.schedule(1, proc)


def test_run_until_and_stop(eng):
    engine = eng.Engine()
    procs = [eng.TimeoutProcess(engine, d, 10) for d in (1, 2, 3)]
    engine.run(until=6)
    assert engine.now == 6
    assert [p.done for p in procs] == [6, 3, 2]
    assert engine.peek_time() == 7

    class Stopper(eng.Handler):
        def handle(self, kind, arg):
            engine.stop()
            return 0

    engine.schedule(8, Stopper())
    engine.run()
    assert engine.now == 8
    engine.run()
    assert [p.done for p in procs] == [10, 10, 10] and engine.now == 30


def random_log(mod, seed):
    """A seeded storm of events with many same-time ties; returns the handling order."""
    rng = random.Random(seed)
    engine = mod.Engine()
    log = []

    class Node(mod.Handler):
        def __init__(self, ident):
            self.ident = ident

        def handle(self, kind, arg):
            log.append((engine.now, self.ident, kind, arg))
            if arg < 40:
                target = nodes[rng.randrange(len(nodes))]
                engine.schedule(engine.now + rng.randrange(3), target, rng.randrange(2), arg + 1,
                                priority=rng.randrange(2))
            return 0

    nodes = [Node(i) for i in range(8)]
    for i in range(30):
        engine.schedule(rng.randrange(5), nodes[i % 8], 0, rng.randrange(10),
                        priority=rng.randrange(2))
    engine.run()
    return log


def test_deterministic_and_identical_across_builds():
    py_engine = module_for("python")
    first = random_log(py_engine, 7)
    assert first == random_log(py_engine, 7)
    assert len(first) > 100
    times = [(t, 0) for t, *_ in first]
    assert times == sorted(times)
    for build in available_builds():
        assert random_log(module_for(build), 7) == first
    assert random_log(py_engine, 8) != first


def test_timeout_processes_count_every_event(eng):
    engine = eng.Engine()
    procs = [eng.TimeoutProcess(engine, 1 + i % 7, 50) for i in range(20)]
    assert engine.run() == 20 * 50
    assert engine.now == 7 * 50
    assert all(p.done == 50 for p in procs)


def make_worker(mod):
    class Worker(mod.TickingComponent):
        """Consumes one item per cycle from its inbox; records when it ticked."""

        def __init__(self, engine, name, inbox):
            super().__init__(engine, name)
            self.inbox = inbox
            inbox.consumer = self
            self.seen = []
            self.tick_times = []

        def tick(self, now):
            self.tick_times.append(now)
            if len(self.inbox) == 0:
                return -1  # no progress: sleep until a push wakes us
            self.seen.append((now, self.inbox.pop()))
            return now + 1

    return Worker


def test_components_sleep_when_idle_and_wake_on_message(eng):
    engine = eng.Engine()
    inbox = eng.Buffer(8, "inbox")
    worker = make_worker(eng)(engine, "W", inbox)

    class Sender(eng.Handler):
        def handle(self, kind, arg):
            assert inbox.push(arg)
            return 0

    sender = Sender()
    for t, item in [(10, "a"), (10, "b"), (1000, "c")]:
        engine.schedule(t, sender, 0, item)
    events = engine.run()
    # woken at 11 by the pushes (one tick event despite two wake-ups), busy 2 cycles,
    # one idle tick to notice, then asleep until 1001: the clock jumps over the gap.
    assert worker.seen == [(11, "a"), (12, "b"), (1001, "c")]
    assert worker.tick_times == [11, 12, 13, 1001, 1002]
    assert events == 3 + 5
    assert engine.now == 1002


def test_wake_at_keeps_the_earliest_tick(eng):
    engine = eng.Engine()
    inbox = eng.Buffer(1)
    worker = make_worker(eng)(engine, "W", inbox)
    worker.wake_at(50)
    worker.wake_at(20)
    worker.wake_at(30)  # later than the pending tick at 20: ignored
    engine.run()
    assert worker.tick_times == [20]  # the superseded tick at 50 is skipped
    assert worker.ticks == 1


def test_back_pressure_blocks_the_producer_until_a_slot_frees(eng):
    engine = eng.Engine()
    link = eng.Buffer(2, "link")

    class Producer(eng.TickingComponent):
        def __init__(self, engine, n):
            super().__init__(engine, "P")
            self.todo = list(range(n))
            self.sent = []
            link.producers.append(self)

        def tick(self, now):
            if self.todo and link.push(self.todo[0]):
                self.sent.append((now, self.todo.pop(0)))
                return now + 1
            return -1  # full (or done): sleep until the consumer frees a slot

    class SlowConsumer(eng.TickingComponent):
        def __init__(self, engine):
            super().__init__(engine, "C")
            link.consumer = self
            self.got = []
            self.ready_at = 0

        def tick(self, now):
            if now < self.ready_at:
                return self.ready_at
            if len(link) == 0:
                return -1
            self.got.append((now, link.pop()))
            self.ready_at = now + 5  # serves one item every 5 cycles
            return self.ready_at

    producer = Producer(engine, 6)
    consumer = SlowConsumer(engine)
    producer.wake_at(0)
    engine.run()
    assert [v for _, v in consumer.got] == list(range(6))
    assert [t for t, _ in consumer.got] == [1, 6, 11, 16, 21, 26]
    # two pushes fill the buffer; each later push waits for a pop (woken the next cycle)
    assert [t for t, _ in producer.sent] == [0, 1, 2, 7, 12, 17]
    assert link.refused >= 3
    # the blocked producer slept instead of ticking every cycle
    assert producer.ticks <= 12


def _freed_slot_schedule(eng, together):
    """Who runs when after a full buffer with four producers frees a slot at cycle 10,
    its producers woken by the pop (``together``) or one by one, in order."""
    engine = eng.Engine()
    link = eng.Buffer(1, "link")
    log = []

    class Producer(eng.TickingComponent):
        def tick(self, now):
            log.append((now, self.name))
            return -1

    class Marker(eng.Handler):
        def handle(self, kind, arg):
            log.append((engine.now, arg))
            return 0

    producers = [Producer(engine, f"P{i}") for i in range(4)]
    link.producers.extend(producers)
    marker = Marker()
    link.push("full")
    producers[1].wake_at(11)  # due at 11 already: keeps its own, earlier event
    producers[3].wake_at(15)  # due later: the pop brings it forward to 11
    engine.schedule(11, marker, 0, "before")

    class Popper(eng.Handler):
        def handle(self, kind, arg):
            if together:
                link.pop()
            else:
                link.producers.clear()  # the pop wakes none of them: they wake in turn
                link.pop()
                link.producers.extend(producers)
                for producer in producers:
                    producer.wake()
            engine.schedule(11, marker, 0, "after")
            return 0

    engine.schedule(10, Popper())
    engine.run()
    return log, [p.ticks for p in producers]


def test_a_freed_slot_wakes_its_producers_as_one_by_one_wakes_would(eng):
    together = _freed_slot_schedule(eng, together=True)
    assert together == _freed_slot_schedule(eng, together=False)
    log, ticks = together
    # P1's own event came first; the others in producer order, before anything scheduled
    # after the pop; P3's tick at 15 was superseded
    assert log == [(11, "P1"), (11, "before"), (11, "P0"), (11, "P2"), (11, "P3"), (11, "after")]
    assert ticks == [1, 1, 1, 1]


def test_buffer_rejects_zero_capacity(eng):
    with pytest.raises(ValueError, match="capacity"):
        eng.Buffer(0, "bad")


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 20), st.integers(0, 2)), min_size=1, max_size=60))
def test_any_schedule_runs_in_time_priority_sequence_order(schedule):
    expected = sorted((t, p, seq) for seq, (t, p) in enumerate(schedule))
    for build in available_builds():
        mod = module_for(build)
        engine = mod.Engine()

        class Probe(mod.Handler):
            def __init__(self):
                self.log = []

            def handle(self, kind, arg):
                self.log.append(arg)
                return 0

        probe = Probe()
        for seq, (t, p) in enumerate(schedule):
            engine.schedule(t, probe, 0, (t, p, seq), priority=p)
        engine.run()
        assert probe.log == expected


def _spawned(mod, plan):
    """(what ran when, events left, next time) of a bounded tree of events, each
    scheduling others near and far ahead, in any priority, as ``plan`` says."""
    engine = mod.Engine()
    log = []

    class Spawner(mod.Handler):
        def handle(self, kind, arg):
            log.append((engine.now, arg))
            if len(log) < 300:
                for delay, priority, children in plan[arg:arg + kind]:
                    engine.schedule(engine.now + delay, self, children, len(log) % len(plan),
                                    priority=priority)
            return 0

    spawner = Spawner()
    for delay, priority, children in plan[:4]:
        engine.schedule(delay, spawner, children, 0, priority=priority)
    engine.run(until=20_000)  # some events may be left beyond it
    return log, engine.pending, engine.peek_time()


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3000), st.integers(0, 2), st.integers(0, 3)),
                min_size=1, max_size=80))
def test_events_scheduled_as_the_clock_runs_keep_their_order(plan):
    """Near (the Cython build's timing wheel) and far (its heap): the reference's order."""
    runs = [_spawned(module_for(build), plan) for build in available_builds()]
    assert all(run == runs[0] for run in runs)


def test_clear_drops_pending_events_and_frees_their_handlers(eng):
    import gc
    import weakref

    engine = eng.Engine()

    class Sink(eng.Handler):
        def handle(self, kind, arg):
            raise AssertionError("a cleared event was delivered")

    sink = Sink()
    engine.schedule(5, sink, 0, None)
    ref = weakref.ref(sink)
    del sink
    engine.clear()
    gc.collect()
    assert ref() is None
    assert engine.run() == 0  # nothing left to deliver
