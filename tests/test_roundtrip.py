"""API → file → export → import gives the same tasks (Chrome JSON and CSV)."""
import json
import sqlite3
from contextlib import closing
from decimal import Decimal

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from trace_compare import canonical_tasks

from simulator.tracing import PyTracer, TraceWriter
from simulator.tracing.exporters import export_trace
from simulator.tracing.importers import import_trace
from simulator.tracing.synthetic import generate

LOCATIONS = ["GPU.CU[0]", "GPU.CU[10]", "GPU.L2[1]", "Driver, \"quoted\""]
KINDS = [("req_out", "ReadReq"), ("req_in", "ReadReq"), ("inst", "VALU"), ("wave,front", "wf")]


@st.composite
def task_trees(draw):
    n = draw(st.integers(1, 30))
    tasks = []
    for i in range(n):
        parent = draw(st.one_of(st.none(), st.integers(0, i - 1))) if i else None
        lo = tasks[parent][3] if parent is not None else 0
        start = lo + draw(st.integers(0, 10 ** 7))
        end = start + draw(st.integers(0, 10 ** 9))
        details = draw(st.one_of(st.none(), st.dictionaries(
            st.sampled_from(["pc", "addr", "note"]), st.integers(-5, 10 ** 12) | st.text(max_size=5),
            max_size=2)))
        tasks.append((parent, draw(st.integers(0, len(KINDS) - 1)),
                      draw(st.integers(0, len(LOCATIONS) - 1)), start, end, details))
    return tasks


def _write(path, tasks):
    writer = TraceWriter(path, command="roundtrip")
    tracer = PyTracer(writer, batch_size=7)
    locs = [tracer.location(name) for name in LOCATIONS]
    kinds = [tracer.kind(*pair) for pair in KINDS]
    keys = []
    for parent, kind, loc, start, _, details in tasks:
        keys.append(tracer.start_task(-1 if parent is None else keys[parent], kinds[kind], locs[loc],
                                      start, details=details))
    for key, (_, _, _, _, end, _) in reversed(list(zip(keys, tasks))):
        tracer.end_task(key, end)
    tracer.close(0)
    writer.finalize(completed=True)
    writer.close()


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(tasks=task_trees())
def test_chrome_and_csv_round_trips_keep_every_task(tmp_path_factory, tasks):
    tmp = tmp_path_factory.mktemp("rt")
    _write(tmp / "a.sqlite", tasks)
    original = canonical_tasks(tmp / "a.sqlite")
    assert len(original) == len(tasks)

    export_trace(tmp / "a.sqlite", tmp / "a.json", "chrome", show_progress=False)
    import_trace(tmp / "a.json", tmp / "b.sqlite", show_progress=False)
    assert canonical_tasks(tmp / "b.sqlite") == original
    # Simulated time stays simulated (the Compare page said "run time" of it).
    with closing(sqlite3.connect(tmp / "b.sqlite")) as db:
        assert db.execute("SELECT clock FROM run").fetchone() == ("simulation",)

    export_trace(tmp / "a.sqlite", tmp / "a.csv", "csv", show_progress=False)
    import_trace(tmp / "a.csv", tmp / "c.sqlite", show_progress=False)
    assert (canonical_tasks(tmp / "c.sqlite", details=False)
            == canonical_tasks(tmp / "a.sqlite", details=False))


def test_chrome_export_puts_overlapping_tasks_in_separate_lanes(tmp_path):
    tasks = [(None, 2, 0, 0, 100, None), (None, 2, 0, 50, 150, None), (None, 2, 0, 100, 120, None),
             (None, 2, 1, 0, 10, None)]
    _write(tmp_path / "a.sqlite", tasks)
    export_trace(tmp_path / "a.sqlite", tmp_path / "a.json", "chrome", show_progress=False)
    events = json.loads((tmp_path / "a.json").read_text())["traceEvents"]
    slices = [e for e in events if e["ph"] == "X"]
    lanes = {(e["pid"], e["ts"]): e["tid"] for e in slices}
    cu0 = [e for e in slices if e["args"]["location"] == "GPU.CU[0]"]
    assert sorted((e["ts"], e["tid"]) for e in cu0) == [(0.0, 0), (5e-05, 1), (0.0001, 0)]
    assert len(lanes) == 4
    names = {(e["pid"], e["name"]): e["args"]["name"] for e in events
             if e["ph"] == "M" and e["name"] == "process_name"}
    assert sorted(names.values()) == ["GPU.CU[0]", "GPU.CU[10]"]


LINK_KINDS = ["ac2g", "fwdbwd"]


@st.composite
def linked_traces(draw):
    """Tasks (as ``task_trees``), links between them, instants and counter samples, on a
    clock that may be epoch-scale."""
    tasks = draw(task_trees())
    n = len(tasks)
    links = draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1),
                                    st.sampled_from(LINK_KINDS)).filter(lambda link: link[0] != link[1]),
                          max_size=8, unique=True))
    times = st.integers(0, 2 * 10 ** 9)
    instants = draw(st.lists(st.tuples(
        st.one_of(st.none(), st.integers(0, len(LOCATIONS) - 1)), times,
        st.sampled_from(["mark", "[memory]"]),
        st.one_of(st.none(), st.dictionaries(st.sampled_from(["Bytes", "Addr"]),
                                             st.integers(0, 10 ** 12), max_size=2))), max_size=6))
    counters = draw(st.lists(st.tuples(
        st.integers(0, len(LOCATIONS) - 1), st.sampled_from(["mem", "power.watts"]), times,
        st.integers(-10 ** 15, 10 ** 15) | st.floats(-1e9, 1e9, allow_nan=False)), max_size=8,
        unique_by=lambda c: c[:3]))
    epoch = draw(st.sampled_from([0, 1_751_410_836_123_456_789_000]))
    return tasks, links, instants, counters, epoch


def _load(path, tasks, links, instants, counters, epoch):
    from simulator.tracing.importers.loader import ForeignTask, Loader

    loader = Loader(path, source="test", command="roundtrip")
    loader.set_clock("unix" if epoch else "simulation", origin_ps=epoch)
    for i, (parent, kind, loc, start, end, details) in enumerate(tasks):
        loader.add(ForeignTask(
            ext_id=f"t{i}", parent_ext=None if parent is None else f"t{parent}",
            category=KINDS[kind][0], action=KINDS[kind][1], location=LOCATIONS[loc],
            start_ps=epoch + start, end_ps=epoch + end, where=f"task {i}",
            details=None if details is None else json.dumps(details, sort_keys=True)))
    for src, dst, kind in links:
        loader.add_link(f"t{src}", f"t{dst}", kind)
    for loc, time_ps, name, details in instants:
        loader.add_instant(None if loc is None else LOCATIONS[loc], epoch + time_ps, name,
                           "cat", None if details is None else json.dumps(details, sort_keys=True))
    for loc, name, time_ps, value in counters:
        loader.add_counter(LOCATIONS[loc], name, epoch + time_ps, value)
    loader.finish(show_progress=False)


EXTRAS = (
    "SELECT time_origin, clock FROM run",
    "SELECT coalesce(a.ext_id, a.id), coalesce(b.ext_id, b.id), l.kind FROM task_link l"
    " JOIN task a ON a.id = l.src JOIN task b ON b.id = l.dst ORDER BY 1, 2, 3",
    "SELECT l.name, i.time_ps, i.name, i.category, i.details FROM instant i"
    " LEFT JOIN location l ON l.id = i.location ORDER BY 2, 3, 1, 5",
    "SELECT l.name, s.name, c.time_ps, c.value FROM counter c JOIN counter_series s"
    " ON s.id = c.series JOIN location l ON l.id = s.location ORDER BY 1, 2, 3",
)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(trace=linked_traces())
def test_chrome_round_trip_keeps_tasks_links_instants_and_counters(tmp_path_factory, trace):
    tmp = tmp_path_factory.mktemp("rt2")
    _load(tmp / "a.sqlite", *trace)
    export_trace(tmp / "a.sqlite", tmp / "a.json", "chrome", show_progress=False)
    import_trace(tmp / "a.json", tmp / "b.sqlite", show_progress=False)
    assert canonical_tasks(tmp / "b.sqlite") == canonical_tasks(tmp / "a.sqlite")
    a, b = (sqlite3.connect(tmp / name) for name in ("a.sqlite", "b.sqlite"))
    for sql in EXTRAS:
        assert a.execute(sql).fetchall() == b.execute(sql).fetchall(), sql
    assert len(a.execute(EXTRAS[1]).fetchall()) == len(trace[1])


def test_chrome_export_nests_strictly_per_thread_on_a_busy_trace(tmp_path):
    generate(tmp_path / "busy.sqlite", tasks=30_000, seed=5)
    export_trace(tmp_path / "busy.sqlite", tmp_path / "busy.json", "chrome", show_progress=False)
    events = json.loads((tmp_path / "busy.json").read_text(), parse_float=Decimal)["traceEvents"]
    threads = {}
    for e in events:
        if e["ph"] == "X":
            threads.setdefault((e["pid"], e["tid"]), []).append((e["ts"], e["ts"] + e["dur"]))
    assert sum(map(len, threads.values())) == 30_000 or sum(map(len, threads.values())) > 25_000
    overlapping_locations = 0
    for slices in threads.values():
        stack = []
        for start, end in sorted(slices, key=lambda s: (s[0], -s[1])):
            while stack and stack[-1] <= start:
                stack.pop()
            assert not stack or end <= stack[-1], "two slices of one thread overlap"
            stack.append(end)
    by_pid = {}
    for pid, tid in threads:
        by_pid.setdefault(pid, set()).add(tid)
    overlapping_locations = sum(len(tids) > 1 for tids in by_pid.values())
    assert overlapping_locations > 10  # the trace is busy: many locations needed lanes


def test_chrome_export_writes_slices_in_time_order_and_their_parents_near_them(tmp_path):
    """Across locations too: an import then finds each task's parent within its ID window
    and builds the metric pyramid as it reads (written location by location, the file
    put parents millions of events away at 100M tasks)."""
    generate(tmp_path / "t.sqlite", tasks=30_000, seed=5)
    export_trace(tmp_path / "t.sqlite", tmp_path / "t.json", "chrome", show_progress=False)
    events = json.loads((tmp_path / "t.json").read_text(), parse_float=Decimal)["traceEvents"]
    slices = [e for e in events if e["ph"] == "X"]
    starts = [e["ts"] for e in slices]
    assert starts == sorted(starts) and len({e["pid"] for e in slices}) > 10
    position = {e["args"]["id"]: i for i, e in enumerate(slices)}
    assert all(position[e["args"]["parent"]] < i for i, e in enumerate(slices) if e["args"]["parent"])
