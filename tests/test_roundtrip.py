"""API → file → export → import gives the same tasks (Chrome JSON and CSV)."""
import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from trace_compare import canonical_tasks

from simulator.tracing import PyTracer, TraceWriter
from simulator.tracing.exporters import export_trace
from simulator.tracing.importers import import_trace

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
