"""``python -m simulator validate``: rows run as run-kernel runs them, on the sweep's
schedulers, compared with their measured times; bad rows refused by line and column."""
import json
import math
import re
import sqlite3
from pathlib import Path

import pytest

from simulator.__main__ import main
from simulator.runs.validate_point import read_sources
from simulator.runs.validate_rows import read_measurements

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = ROOT / "benchmarks" / "validation" / "r9nano.csv"

KERNEL = """\
kernel void scale(global const float *a, global float *b, float k)
{
    size_t i = get_global_id(0);
    b[i] = k * a[i];
}
"""
HEADER = "kernel_file,kernel,global,local,args,measured_us,family,source\n"


def rows(*sizes, measured=4.0):
    return "".join(f"k.cl,scale,{n},64,a=random:{n} b=zeros:{n} k=2,{measured * (i + 1)},,"
                   f"made up\n" for i, n in enumerate(sizes))


def measurements(tmp_path, text, kernel=KERNEL):
    (tmp_path / "k.cl").write_text(kernel)
    path = tmp_path / "m.csv"
    path.write_text(text)
    return path


def report(directory):
    return json.loads((directory / "validation.json").read_text())


def test_each_row_runs_into_its_trace_and_is_held_against_its_time(tmp_path, capsys):
    path = measurements(tmp_path, HEADER + rows(1024, 4096))
    out = tmp_path / "val"
    assert main(["validate", str(path), "-o", str(out), "--no-progress", "--workers", "2"]) == 0
    printed = capsys.readouterr().out
    doc = report(out)
    assert [r["status"] for r in doc["rows"]] == ["ok", "ok"]
    assert [r["line"] for r in doc["rows"]] == [2, 3]
    for row in doc["rows"]:
        # The row's time is its trace's, and its trace ran its launch.
        db = sqlite3.connect(f"file:{out / row['trace']}?mode=ro", uri=True)
        end, command = db.execute("SELECT virtual_end_ps, command FROM run").fetchone()
        db.close()
        assert row["simulated_us"] == pytest.approx(end / 1e6)
        assert row["ratio"] == pytest.approx(row["simulated_us"] / row["measured_us"])
        assert f"--global {row['global']}" in command and "run-kernel" in command
        assert row["family"] == "k.cl:scale"
        assert f"{row['simulated_us']:12.3f}".strip() in printed
    small, large = doc["rows"]
    assert large["simulated_us"] > small["simulated_us"]
    found = doc["agreement"]
    assert found["rows"] == 2 and found["spearman"] == pytest.approx(1.0)
    sims = [r["simulated_us"] for r in doc["rows"]]
    assert found["wmape"] == pytest.approx((abs(sims[0] - 4) + abs(sims[1] - 8)) / 12)
    assert found["families"] == [{"name": "k.cl:scale", "rows": 2, "slope": pytest.approx(
        math.log(sims[1] / sims[0]) / math.log(2))}]
    assert "WMAPE" in printed and "Spearman" in printed and "k.cl:scale" in printed
    assert not list(out.glob(".*")), "no token or partial file is left behind"


def test_json_prints_the_report_and_a_dask_cluster_gives_the_same_times(tmp_path, capsys):
    path = measurements(tmp_path, HEADER + rows(512, 2048))
    assert main(["validate", str(path), "-o", str(tmp_path / "pool"), "--json",
                 "--workers", "2"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed == report(tmp_path / "pool")
    assert main(["validate", str(path), "-o", str(tmp_path / "dask"), "--json", "--workers",
                 "2", "--scheduler", "dask", "--results", "send"]) == 0
    on_dask = json.loads(capsys.readouterr().out)
    assert [r["simulated_us"] for r in on_dask["rows"]] == \
        [r["simulated_us"] for r in printed["rows"]]
    for row in on_dask["rows"]:
        assert (tmp_path / "dask" / row["trace"]).is_file()  # sent back and written here


def test_without_output_rows_run_untraced_and_write_nothing(tmp_path, capsys):
    path = measurements(tmp_path, HEADER + rows(256))
    before = sorted(p.name for p in tmp_path.iterdir())
    assert main(["validate", str(path), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["rows"][0]["status"] == "ok" and doc["rows"][0]["trace"] == ""
    assert doc["rows"][0]["simulated_us"] > 0
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_a_row_that_fails_when_it_runs_is_reported_and_the_others_run(tmp_path, capsys):
    text = HEADER + rows(256) + "k.cl,scale,256,64,a=random:256 b=zeros:256 k=2,3,,\n" \
        .replace("b=zeros:256", "b=zeros:256.npy")
    (tmp_path / "zeros:256.npy").write_bytes(b"not numpy")
    path = measurements(tmp_path, text)
    out = tmp_path / "val"
    assert main(["validate", str(path), "-o", str(out), "--no-progress"]) == 1
    err = capsys.readouterr().err
    doc = report(out)
    assert [r["status"] for r in doc["rows"]] == ["ok", "failed"]
    assert "cannot read" in doc["rows"][1]["error"]
    assert doc["agreement"]["rows"] == 1
    assert "1 of 2 rows failed" in err


def test_only_runs_the_rows_of_matching_families(tmp_path, capsys):
    text = HEADER + rows(256).replace(",,made up", ",small,made up") + \
        rows(512).replace(",,made up", ",large,made up")
    path = measurements(tmp_path, text)
    assert main(["validate", str(path), "--json", "--only", "^lar"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [r["family"] for r in doc["rows"]] == ["large"]
    assert main(["validate", str(path), "--only", "nothing"]) == 2
    assert "no row's family matches" in capsys.readouterr().err


def test_an_existing_validation_is_replaced_only_with_force(tmp_path, capsys):
    path = measurements(tmp_path, HEADER + rows(256))
    out = tmp_path / "val"
    assert main(["validate", str(path), "-o", str(out), "--no-progress"]) == 0
    first = report(out)["rows"][0]["trace"]
    assert main(["validate", str(path), "-o", str(out), "--no-progress"]) == 2
    assert "--force" in capsys.readouterr().err
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "keep.txt").write_text("mine")
    assert main(["validate", str(path), "-o", str(tmp_path / "other")]) == 2
    assert "not a validation directory" in capsys.readouterr().err
    assert (tmp_path / "other" / "keep.txt").read_text() == "mine"
    path.write_text(HEADER + rows(128))
    assert main(["validate", str(path), "-o", str(out), "--no-progress", "--force"]) == 0
    assert not (out / first).exists(), "the replaced validation's traces go with it"
    assert [r["global"] for r in report(out)["rows"]] == ["128"]


BAD_ROWS = [
    ("kernel_file,kernel,global,local,args\n", r"m\.csv:1: missing column measured_us"),
    (HEADER.replace("source", "sauce"), r"m\.csv:1: unknown column sauce \(the columns are"),
    (HEADER + "k.cl,scale,abc,64,a=random:4 b=zeros:4 k=2,3,,\n",
     r"m\.csv:2: column global: expected sizes like 1024"),
    (HEADER + rows(64) + "k.cl,scale,64,64,a=random:4 b=zeros:4 k=2,fast,,\n",
     r"m\.csv:3: column measured_us: expected a time in microseconds, got 'fast'"),
    (HEADER + "k.cl,scale,64,64,a=random:4 b=zeros:4 k=2,0,,\n",
     r"m\.csv:2: column measured_us: must be more than 0"),
    (HEADER + "nope.cl,scale,64,64,a=random:4,3,,\n", r"m\.csv:2: column kernel_file: no file"),
    (HEADER + "k.cl,scale,64,64,a=random:4 a=zeros:4 k=1,3,,\n",
     r"m\.csv:2: column args: a given twice"),
    (HEADER + "k.cl,scale,64,64,a=random:4 k,3,,\n", r"m\.csv:2: column args: expected NAME=VALUE"),
    (HEADER + "k.cl,scale,64,64,a=random:4 k=2,3,,\n",
     r"m\.csv:2: column args: kernel 'scale' takes a, b, k; missing b"),
    (HEADER + "k.cl,shift,64,64,a=random:4,3,,\n", r"m\.csv:2: .*k\.cl.*no kernel named 'shift'"),
    (HEADER + "k.cl,scale,64,64,a=random:4,3\n", r"m\.csv:2: 6 cells, the header has 8"),
    (HEADER, r"m\.csv: no rows after the header"),
]


@pytest.mark.parametrize("text, message", BAD_ROWS)
def test_a_bad_row_is_a_one_line_error_naming_its_line_and_column(tmp_path, capsys, text,
                                                                   message):
    path = measurements(tmp_path, text)
    assert main(["validate", str(path), "-o", str(tmp_path / "val")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: "), err
    assert re.search(message, err), err
    assert not (tmp_path / "val").exists(), "nothing is written before every row is read"


def test_a_kernel_that_does_not_compile_names_its_source_and_the_row(tmp_path, capsys):
    path = measurements(tmp_path, HEADER + rows(64), kernel=KERNEL.replace("k * a[i]", "k *"))
    assert main(["validate", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and re.search(r"m\.csv:2: \S*k\.cl:\d+:\d+: ", err), err


def test_the_shipped_file_cites_a_source_for_every_row_and_compiles():
    launches = read_measurements(SHIPPED)
    assert len(launches) >= 15
    for launch in launches:
        assert re.match(r"https://github\.com/\S+: \w", launch.source), launch.line
    # Every row's kernel compiles and takes the row's arguments (the checks made before
    # any row runs), without running the large rows.
    sources = read_sources(SHIPPED, launches)
    assert sorted(p.name for p in sources) == ["chase.cl", "stream.cl"]


def test_the_shipped_latency_rows_run_through_validate(tmp_path, capsys):
    # The launch floor and the dependent-load chain of the R9 Nano file (its streaming
    # rows take minutes each: README's figures come from the whole file).
    out = tmp_path / "r9nano"
    assert main(["validate", str(SHIPPED), "--only", "^(launch|dram-chain)$", "-o", str(out),
                 "--no-progress", "--workers", "2"]) == 0
    doc = report(out)
    assert len(doc["rows"]) == 9 and all(r["status"] == "ok" for r in doc["rows"])
    chain = [r for r in doc["rows"] if r["family"] == "dram-chain"]
    # Each step waits for the last: the time grows with the steps in the simulator too.
    times = [r["simulated_us"] for r in chain]
    assert times == sorted(times) and times[-1] > 4 * times[0]
    slope = {f["name"]: f["slope"] for f in doc["agreement"]["families"]}
    assert slope["launch"] is None and slope["dram-chain"] == pytest.approx(1.0, abs=0.15)
    assert doc["agreement"]["rows"] == 9
