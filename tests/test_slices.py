"""Plain Chrome slices read in blocks: the C reader reads what its reference reads, and
an import through either (or through neither) writes the same trace."""
import json
import sqlite3

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simulator import build
from simulator.tracing.exporters import export_trace
from simulator.tracing.importers import chrome, import_trace, slices
from simulator.tracing.synthetic import generate

IMPLEMENTATIONS = [build.module("simulator.tracing.importers._slices", name)
                   for name in build.available_builds()]

texts = st.text(alphabet=st.sampled_from(list('ab "\\/é\u20ac\t\x01\x7f:,{}[]')), max_size=6)
numbers = st.one_of(
    st.integers(-10 ** 20, 10 ** 20).map(str),
    st.decimals(allow_nan=False, allow_infinity=False, places=8, min_value=-10 ** 9,
                max_value=10 ** 9).map(lambda d: str(d) if "E" not in str(d) else "1.5"),
    st.sampled_from(["0", "-0", "-0.0", "0.000000", "0.0000001", "1e3", "2.5E-2", "00", "1.",
                     "1419247333417.54", "1751410836000000.123456", "1" * 40, "NaN"]))


def _json_text(value):
    return json.dumps(value, ensure_ascii=False)


def values(depth):
    base = st.one_of(numbers, texts.map(_json_text), st.sampled_from(["true", "false", "null"]))
    if depth == 0:
        return base
    inner = values(depth - 1)
    return st.one_of(base, st.lists(inner, max_size=3).map(lambda xs: "[" + ", ".join(xs) + "]"),
                     st.lists(st.tuples(st.sampled_from(["a", "b", "bind_id", "z"]), inner),
                              max_size=3).map(
                         lambda kv: "{" + ", ".join(f'"{k}": {v}' for k, v in kv) + "}"))


def mostly(usual, *other):
    return st.one_of(st.just(usual), st.just(usual), st.just(usual), *other)


fields = st.fixed_dictionaries({
    "ph": mostly('"X"', st.sampled_from(['"B"', '"i"', "1"])),
    "name": mostly('"aten::add"', texts.map(_json_text), st.sampled_from(["null", "3"])),
    "ts": st.one_of(numbers, st.just('"12"')),
    "dur": mostly("2.5", numbers, st.just("null")),
}, optional={
    "cat": st.one_of(texts.map(_json_text), st.sampled_from(["null", '"kernel"', "2"])),
    "pid": st.one_of(st.integers(-2 ** 64, 2 ** 64).map(str), texts.map(_json_text),
                     st.sampled_from(["true", "1.5"])),
    "tid": st.one_of(st.integers(0, 99).map(str), texts.map(_json_text)),
    "args": values(2),
    "s": texts.map(_json_text), "id": values(1), "bind_id": numbers, "flow_out": st.just("true")})


def _object(draw, fields):
    items = list(draw(fields).items())
    if draw(st.integers(0, 9)) == 0:
        items.append(items[draw(st.integers(0, len(items) - 1))])  # a repeated key
    if draw(st.integers(0, 9)) == 0:
        del items[draw(st.integers(0, len(items) - 1))]  # a field missing
    items = draw(st.permutations(items))
    space = draw(st.sampled_from(["", " ", "\n  "]))
    return "{" + f",{space}".join(f'"{k}":{space}{v}' for k, v in items) + "}"


@st.composite
def events(draw):
    return _object(draw, fields)


# The args of a slice of our own export: mostly its identity as the exporter writes it,
# sometimes of another shape (another key, a value of another type, escapes, non-ASCII).
identities = st.fixed_dictionaries({
    "id": mostly('"17"', texts.map(_json_text), st.sampled_from(["null", "3"])),
    "location": mostly('"GPU.CU[1]"', texts.map(_json_text), st.just("null")),
    "parent": mostly('"5"', st.sampled_from(["null", "5"]), texts.map(_json_text)),
    "category": mostly('"req_in"', texts.map(_json_text), st.just("null")),
    "details": mostly('{"addr": 4096}', values(2), st.just("null")),
    "pc": values(1)})


def exported():
    """A slice as our exporter writes it."""
    def event(name, ts, dur, args):
        return (f'{{"name": {_json_text(name)}, "cat": "c", "ph": "X", "ts": {ts}, "dur": {dur},'
                f' "pid": 1, "tid": 0, "args": {_json_text(args)}}}')

    def identity(key, parent, location, details):
        return {"id": key, "parent": parent, "category": "c", "location": location,
                **({} if details is None else {"details": details})}

    details = st.dictionaries(st.sampled_from(["addr", "pc"]), st.integers(0, 99) | st.text(max_size=3),
                              max_size=2)
    return st.builds(event, st.sampled_from(["ReadReq", "k\u00e9rnel", "a b"]),
                     st.sampled_from(["0.25", "17", "1.000001"]), st.sampled_from(["2.5", "0", "3.125"]),
                     st.builds(identity, st.integers(0, 10 ** 6).map(str),
                               st.one_of(st.none(), st.integers(0, 9).map(str)),
                               st.sampled_from(["GPU.CU[1]", "L2", "\u00e9"]), st.none() | details))


@st.composite
def own_events(draw):
    """An event of our own export: a slice as the exporter writes it, or with its identity
    of another shape."""
    if draw(st.booleans()):
        return draw(exported())
    args = draw(identities)
    for key in ("parent", "category", "details"):
        if draw(st.booleans()):
            del args[key]
    if draw(st.integers(0, 4)):
        del args["pc"]
    args = _object(draw, st.just(args))
    return _object(draw, st.fixed_dictionaries({
        "ph": mostly('"X"', st.just('"i"')), "name": mostly('"ReadReq"', texts.map(_json_text)),
        "ts": mostly("0.25", numbers), "dur": mostly("2.5", numbers), "args": st.just(args),
    }, optional={"cat": mostly('"req_in"', texts.map(_json_text), st.just("null")),
                 "pid": st.just("1"), "tid": st.sampled_from(["0", '"t"'])}))


def _scan_the_same(buf, base, own):
    results = [module.scan(buf, 0, base, 10, 1, 0, own) for module in IMPLEMENTATIONS]
    for *_, got_base, _line, _line_start, block in results[1:]:
        if block is None:
            continue
        want = results[0][6]
        assert want is not None and len(want) >= len(block), buf
        assert got_base == results[0][3]
        lists = ("threads", "kinds", "details") + (("ext_ids", "parents", "locations") if own else ())
        for name in lists:
            assert getattr(block, name) == getattr(want, name)[:len(getattr(block, name))], name
        arrays = ("thread", "kind", "starts", "ends", "lines", "columns") + (("location",) if own else ())
        for name in arrays:
            assert getattr(block, name).tolist() == getattr(want, name)[:len(block)].tolist(), name


@settings(max_examples=400, deadline=None)
@given(event=events(), base=st.sampled_from([None, 0, 10 ** 21, -5]))
def test_what_c_reads_its_reference_reads_the_same(event, base):
    _scan_the_same(event + ",\n" + event + "\n]", base, own=False)


@settings(max_examples=400, deadline=None)
@given(first=own_events(), second=own_events(), base=st.sampled_from([None, 0, -5]))
def test_what_c_reads_of_our_export_its_reference_reads_the_same(first, second, base):
    _scan_the_same(first + ",\n" + second + "\n]", base, own=True)


def test_our_exports_slices_are_read_in_c_with_their_identities():
    event = ('{"name": "ReadReq", "cat": "req_in", "ph": "X", "ts": 0.020000, "dur": 0.516000,'
             ' "pid": 1, "tid": 1, "args": {"id": "1171", "parent": "2", "category": "req_in",'
             ' "location": "GPU.L2[0]", "details": {"addr": 4096, "note": "x"}}}, '
             '{"name": "kernel", "ph": "X", "ts": 0, "dur": 1, "pid": 2, "tid": 0,'
             ' "args": {"id": "2", "parent": null, "location": "GPU"}}]')
    for module in IMPLEMENTATIONS:
        *_, block = module.scan(event, 0, 0, 10, 1, 0, True)
        assert block.ext_ids == ["1171", "2"] and block.parents == ["2", None]
        assert block.locations == ["GPU.L2[0]", "GPU"] and block.location.tolist() == [0, 1]
        assert block.kinds == [("req_in", "ReadReq"), ("", "kernel")]  # no category, no cat: ''
        assert block.details == ['{"addr": 4096, "note": "x"}', None]
        assert block.starts.tolist() == [20000, 0] and block.ends.tolist() == [536000, 1000000]


def test_a_typical_kineto_slice_is_read_in_c():
    event = ('{"ph": "X", "cat": "kernel", "name": "void at::vectorized<float>(int, float*)",'
             ' "pid": 0, "tid": 7, "ts": 1751410836000123.456, "dur": 3.136,'
             ' "args": {"External id": 3, "grid": [141, 1, 1], "est. achieved occupancy %": 7.25,'
             ' "stream": 7, "device": 0}}')
    for module in IMPLEMENTATIONS:
        pos, after_event, why, base, line, _, block = module.scan(event + "]", 0, None, 10, 1, 0)
        assert block is not None and (pos, after_event) == (len(event), True)
        assert base == 1751410836000123456000 and block.ends.tolist() == [3136000]
        assert block.details == ['{"External id": 3, "device": 0, "est. achieved occupancy %": "7.25",'
                                 ' "grid": [141, 1, 1], "stream": 7}']
        assert block.kinds == [("kernel", "void at::vectorized<float>(int, float*)")]
        assert block.threads == [(0, 7)]


def _kineto_trace(path):
    events = [{"name": "process_name", "ph": "M", "pid": 0, "args": {"name": "python3"}},
              {"name": "process_labels", "ph": "M", "pid": 0, "args": {"labels": "GPU 0"}},
              {"name": "thread_name", "ph": "M", "pid": 0, "tid": 7, "args": {"name": "stream 7 "}}]
    for k in range(300):
        ts = 1751410836000000 + 10 * k
        events += [
            {"ph": "X", "cat": "cpu_op", "name": f"aten::op{k % 7}", "pid": 19, "tid": 19, "ts": ts,
             "dur": 6.5, "args": {"External id": k}},
            {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 19, "tid": 19,
             "ts": ts + 1, "dur": 2, "args": {"correlation": k, "cbid": 211}},
            {"ph": "s", "id": k, "pid": 19, "tid": 19, "ts": ts + 1, "cat": "ac2g", "name": "ac2g"},
            {"ph": "X", "cat": "kernel", "name": "k\u00e9rnel" if k % 5 else "k\\\"q",
             "pid": 0, "tid": 7 if k % 3 else "stream 7", "ts": ts + 4.25, "dur": 1.0000001,
             "args": {"correlation": k, "grid": [k, 1, 1], "occupancy": 0.5}},
            {"ph": "f", "id": k, "pid": 0, "tid": 7, "ts": ts + 4.25, "cat": "ac2g", "bp": "e"},
            {"ph": "X", "cat": "cpu_op", "name": "flow", "pid": 19, "tid": 19, "ts": ts + 3,
             "dur": 0.5, "bind_id": k, "flow_out": True}]
    path.write_text(json.dumps({"traceEvents": events, "baseTimeNanoseconds": 0}, indent=1))


def _imported_both_ways(src, tmp_path, monkeypatch, tables):
    """(report, rows of each of ``tables``) of ``src`` imported with slices read in blocks,
    then one by one."""
    dumps = []
    for blocks in (True, False):
        if not blocks:
            monkeypatch.setattr(chrome._Reader, "_slices", lambda self: (None, False))
        out = tmp_path / f"{blocks}.sqlite"
        report = import_trace(src, out, show_progress=False)
        db = sqlite3.connect(out)
        dumps.append((vars(report), [db.execute(f"SELECT * FROM {t}").fetchall() for t in tables]))
    return dumps


def test_slices_read_in_blocks_or_one_by_one_import_the_same(tmp_path, monkeypatch):
    _kineto_trace(tmp_path / "k.json")
    dumps = _imported_both_ways(tmp_path / "k.json", tmp_path, monkeypatch, (
        "task ORDER BY id", "task_link ORDER BY 1, 2", "location", "kind",
        "metric_bin ORDER BY 1, 2, 3", "run"))
    assert dumps[0][0] == dumps[1][0] and dumps[0][1][:5] == dumps[1][1][:5]
    assert dumps[0][0]["links"] == 200  # a kernel on "stream 7" (a string tid) is on another track


def test_our_export_read_in_blocks_or_one_by_one_imports_the_same(tmp_path, monkeypatch):
    generate(tmp_path / "a.sqlite", tasks=20_000, seed=3)
    export_trace(tmp_path / "a.sqlite", tmp_path / "a.json", "chrome", show_progress=False)
    dumps = _imported_both_ways(tmp_path / "a.json", tmp_path, monkeypatch, (
        "task ORDER BY id", "location", "kind", "metric_bin ORDER BY 1, 2, 3"))
    tasks = sqlite3.connect(tmp_path / "a.sqlite").execute("SELECT count(*) FROM task").fetchone()[0]
    assert dumps[0] == dumps[1] and dumps[0][0]["tasks"] == tasks


@pytest.mark.parametrize("module", IMPLEMENTATIONS)
def test_reading_stops_at_other_events_and_resumes(module):
    plain = '{"ph": "X", "name": "a", "ts": 1, "dur": 2}'
    buf = f"{plain}, {plain},\n{{\"ph\": \"i\", \"ts\": 3}}, {plain}]"
    pos, after_event, why, base, line, line_start, block = module.scan(buf, 0, None, 10, 1, 0)
    assert len(block) == 2 and not after_event and why == slices.DECLINED
    assert buf[pos:].lstrip().startswith('{"ph": "i"')
    assert (line, line_start) == (1, 0) or buf[line_start - 1] == "\n"
