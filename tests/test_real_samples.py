"""Real profiler traces (PyTorch/Kineto on an H100 and an MI300X, from TraceLens' test
data) import whole: every task start to the nanosecond, every flow, through export too.

The files are not in the repository; set GPUSCOPE_SAMPLES to their directory (the team's
copy is used by default). Without them these tests are skipped.
"""
import gzip
import json
import os
import sqlite3
from decimal import Decimal
from pathlib import Path

import pytest

from simulator.tracing.exporters import export_trace
from simulator.tracing.importers import import_trace

SAMPLES = Path(os.environ.get("GPUSCOPE_SAMPLES", "/work/shared/samples"))
NAMES = ["pytorch_bert_small_h100.json.gz", "pytorch_bert_small_mi300x.json.gz"]


def _absolute_starts(db):
    origin = Decimal(db.execute("SELECT time_origin FROM run").fetchone()[0])
    return sorted(origin + Decimal(s) / 10 ** 12 for s, in db.execute("SELECT start_ps FROM task"))


def _flow_pairs(events):
    """(start ts, finish ts) of every flow with both ends in the source."""
    ends = {}
    for e in events:
        if e.get("ph") in ("s", "f"):
            ends.setdefault((e.get("cat"), e["id"]), {})[e["ph"]] = e["ts"]
    return sorted((v["s"], v["f"]) for v in ends.values() if len(v) == 2)


@pytest.mark.parametrize("name", NAMES)
def test_real_kineto_trace_keeps_every_start_and_flow_through_export(tmp_path, name):
    src = SAMPLES / name
    if not src.is_file():
        pytest.skip(f"{src} is not here")
    data = json.loads(gzip.decompress(src.read_bytes()), parse_float=Decimal)
    base = Decimal(data["baseTimeNanoseconds"]) / 10 ** 9
    expected = sorted(base + Decimal(e["ts"]) / 10 ** 6 for e in data["traceEvents"]
                      if e.get("ph") == "X")
    report = import_trace(src, tmp_path / "a.sqlite", show_progress=False)
    a = sqlite3.connect(tmp_path / "a.sqlite")
    assert _absolute_starts(a) == expected  # every start, exactly (sub-ns digits included)
    assert report.links == len(_flow_pairs(data["traceEvents"])) > 0
    gpu = a.execute("SELECT DISTINCT l.name FROM task_link k JOIN task t ON t.id = k.dst"
                    " JOIN location l ON l.id = t.location").fetchall()
    assert all(n.startswith("GPU[") and ".stream[" in n for n, in gpu)

    export_trace(tmp_path / "a.sqlite", tmp_path / "a.json", "chrome", show_progress=False)
    import_trace(tmp_path / "a.json", tmp_path / "b.sqlite", show_progress=False)
    b = sqlite3.connect(tmp_path / "b.sqlite")
    assert _absolute_starts(b) == expected
    links = ("SELECT ta.start_ps, tb.start_ps, k.kind FROM task_link k JOIN task ta ON ta.id = k.src"
             " JOIN task tb ON tb.id = k.dst ORDER BY 1, 2")
    assert a.execute(links).fetchall() == b.execute(links).fetchall()
