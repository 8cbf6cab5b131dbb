"""Event engine throughput: SimPy against our engine (Cython and pure Python).

The same workload runs in each: 1,000 processes, each waiting 1,000 timeouts with an
integer delay of 1 + (i mod 7) cycles, i.e. 1,000,000 events with many same-time ties.
Ours also runs with the processes written in Python on the Cython engine, to show what
the handlers cost. Prints events/s and the ratios to SimPy (goal: Cython >= 10x).

    python benchmarks/engine.py [--processes N] [--timeouts M] [--repeat R]
"""
import argparse
import time

import simpy

from simulator.build import compiled_available
from simulator.engine import module_for

py_engine = module_for("python")
cy_engine = module_for("cython") if compiled_available() else None


def run_simpy(processes, timeouts):
    env = simpy.Environment()

    def process(delay):
        for _ in range(timeouts):
            yield env.timeout(delay)

    for i in range(processes):
        env.process(process(1 + i % 7))
    start = time.perf_counter()
    env.run()
    return processes * timeouts, time.perf_counter() - start, env.now


def run_ours(module, processes, timeouts):
    engine = module.Engine()
    for i in range(processes):
        module.TimeoutProcess(engine, 1 + i % 7, timeouts)
    start = time.perf_counter()
    events = engine.run()
    return events, time.perf_counter() - start, engine.now


def python_process_class(module):
    """A process written in Python on ``module``'s engine (the mixed configuration)."""

    class PyProcess(module.Handler):
        def __init__(self, engine, delay, count):
            self.engine, self.delay, self.count, self.done = engine, delay, count, 0
            engine.schedule(engine.now + delay, self)

        def handle(self, kind, arg):
            self.done += 1
            if self.done < self.count:
                self.engine.schedule(self.engine.now + self.delay, self)
            return 0

    return PyProcess


def run_mixed(module, processes, timeouts):
    engine = module.Engine()
    cls = python_process_class(module)
    for i in range(processes):
        cls(engine, 1 + i % 7, timeouts)
    start = time.perf_counter()
    events = engine.run()
    return events, time.perf_counter() - start, engine.now


def best_rate(fn, repeat, *args):
    best = 0.0
    end = None
    for _ in range(repeat):
        events, seconds, end = fn(*args)
        best = max(best, events / seconds)
    return best, end


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--processes", type=int, default=1000)
    parser.add_argument("--timeouts", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3, help="runs per engine; best is kept")
    args = parser.parse_args()
    n, m = args.processes, args.timeouts
    rows = [("SimPy", run_simpy), ("ours, pure Python", lambda a, b: run_ours(py_engine, a, b))]
    if cy_engine is not None:
        rows.append(("ours, Cython engine + Python processes", lambda a, b: run_mixed(cy_engine, a, b)))
        rows.append(("ours, Cython", lambda a, b: run_ours(cy_engine, a, b)))
    else:
        print("Cython engine not built (python setup.py build_ext --inplace): skipping it")
    print(f"{n} processes x {m} timeouts, integer delays 1-7; best of {args.repeat}")
    simpy_rate = None
    ends = set()
    for name, fn in rows:
        rate, end = best_rate(fn, args.repeat, n, m)
        ends.add(end)
        simpy_rate = simpy_rate or rate
        print(f"{name:42s} {rate / 1e6:7.2f} M events/s   {rate / simpy_rate:6.2f}x SimPy")
    if len(ends) != 1:
        raise SystemExit(f"engines disagree on the final simulated time: {sorted(ends)}")
    print(f"all engines end at t = {ends.pop()}")


if __name__ == "__main__":
    main()
