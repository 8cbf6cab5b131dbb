"""``python -m simulator analyze``: its JSON shape, its text, and one-line errors."""
import json

import pytest
from analysis_traces import write_trace

from simulator.__main__ import main

LAUNCH = {"start": 0, "end": 100, "groups": [
    {"cu": 0, "dispatch": 10, "start": 11, "end": 50, "wavefronts": [
        {"start": 11, "end": 50, "insts": [("VALU", 12, 16)], "requests": [(20, 30)]}]},
    {"cu": 1, "dispatch": 11, "start": 12, "end": 90}]}

KERNEL_KEYS = ["launch", "name", "time_ps", "budget", "cpi_stack", "stalls", "memory_latency",
               "blocking", "imbalance", "sol", "classification", "roofline", "critical_path",
               "cu_idle", "hints", "what_if"]
RULES = {"time-budget", "cpi-stack", "stalls", "memory-latency", "blocking", "imbalance",
         "speed-of-light", "roofline", "critical-path", "cu-idle", "latency-distribution",
         "kernel-hints", "what-if"}


@pytest.fixture(scope="module")
def trace(tmp_path_factory):
    return write_trace(tmp_path_factory.mktemp("cli") / "t.sqlite", [LAUNCH, {
        **LAUNCH, "start": 100, "end": 200,
        "groups": [{**g, "dispatch": g["dispatch"] + 100, "start": g["start"] + 100,
                    "end": g["end"] + 100} for g in LAUNCH["groups"][1:]]}])


def analyze(capsys, *argv):
    code = main(["analyze", *map(str, argv)])
    out, err = capsys.readouterr()
    return code, out, err


def test_json_has_the_documented_shape(trace, capsys):
    code, out, err = analyze(capsys, trace, "--json")
    assert code == 0 and not err
    report = json.loads(out)
    assert list(report) == ["kernels", "findings"]
    assert [list(k) for k in report["kernels"]] == [KERNEL_KEYS, KERNEL_KEYS]
    assert [k["launch"] for k in report["kernels"]] == [0, 1]
    for k in report["kernels"]:
        assert k["what_if"] is None
        # the fixture's launch records carry no VALU lane counts: zero work, no point
        assert k["roofline"]["work"] == 0
        # the fixture's requests are not nested as the model nests them: none reach a cache
        assert k["memory_latency"]["requests"] >= 0 and "ranking" in k["blocking"]
        assert set(k["imbalance"]) == {"CU", "L2", "DRAM"}
        assert list(k["critical_path"]) == ["total_ps", "by_class", "by_component", "steps", "chain",
                                            "critical_task"]
        assert sum(k["critical_path"]["by_class"].values()) == k["time_ps"]
    assert report["findings"]
    for f in report["findings"]:
        assert list(f) == ["rule", "kernel", "explains_ps", "message", "evidence"]
        assert f["rule"] in RULES and f["evidence"]
    explained = [f["explains_ps"] for f in report["findings"]]
    assert explained == sorted(explained, reverse=True)


def test_kernel_window_and_thresholds_choose_what_is_analyzed(trace, capsys):
    code, out, _ = analyze(capsys, trace, "--json", "--kernel", 1)
    assert [k["launch"] for k in json.loads(out)["kernels"]] == [1]
    code, out, _ = analyze(capsys, trace, "--json", "--window", "20000:60000")
    kernel, = json.loads(out)["kernels"]
    assert kernel["budget"]["window_ps"] == [20000, 60000]
    # launch overhead 10 of 100 cycles: reported at the default 10 %, not above 20 %
    launch = [f for f in json.loads(analyze(capsys, trace, "--json")[1])["findings"]
              if f["message"].startswith("launch overhead")]
    assert launch
    code, out, _ = analyze(capsys, trace, "--json", "--launch-share", "0.2")
    assert not [f for f in json.loads(out)["findings"] if f["message"].startswith("launch overhead")]


def test_text_lists_the_launches_and_the_ranked_findings(trace, capsys):
    code, out, _ = analyze(capsys, trace)
    assert code == 0
    assert out.startswith("launch 0 fixture: 0.100 µs; launch 0.010 µs")
    assert "findings, most launch time explained first:" in out and "see component" in out


def test_help_states_every_threshold_default(capsys):
    with pytest.raises(SystemExit):
        main(["analyze", "--help"])
    out = capsys.readouterr().out
    assert "--tail-frac" in out and "(default 0.5)" in out and "(default 2)" in out
    assert "--trace-level" in out


@pytest.mark.parametrize(("argv", "message"), [
    (["missing.sqlite"], "error: missing.sqlite: no such file"),
    (["{trace}", "--kernel", "5"], "error: --kernel 5: the trace holds launches 0 to 1"),
    (["{trace}", "--window", "300000:400000"], "error: --window 300000:400000: overlaps no launch"),
])
def test_errors_are_one_line(trace, capsys, argv, message):
    code, out, err = analyze(capsys, *(a.format(trace=trace) for a in argv))
    assert code == 2 and not out
    assert err.strip() == message


@pytest.mark.parametrize("window", ["9:3", "x", "1:"])
def test_a_bad_window_is_refused_by_the_parser(trace, capsys, window):
    with pytest.raises(SystemExit) as stop:
        main(["analyze", str(trace), "--window", window])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--window" in err and "Traceback" not in err


def test_other_files_are_named_for_what_they_are(tmp_path, capsys):
    text = tmp_path / "notes.sqlite"
    text.write_text("not a database\n" * 100)
    code, _, err = analyze(capsys, text)
    assert code == 2 and err.startswith(f"error: {text}: not a GPUscope trace")
    chrome = tmp_path / "k.json"
    chrome.write_text(json.dumps({"traceEvents": [
        {"name": "k", "ph": "X", "ts": 0, "dur": 5, "pid": 1, "tid": 1}]}))
    imported = tmp_path / "k.sqlite"
    assert main(["import", str(chrome), "-o", str(imported)]) == 0
    capsys.readouterr()
    code, _, err = analyze(capsys, imported)
    assert code == 2
    assert err.strip() == (f"error: {imported}: an imported trace (chrome) with no GPU operation"
                           " on a stream; the profile analyses explain kernels, copies and memsets")


def test_a_simulator_trace_of_another_model_is_named_for_what_it_lacks(tmp_path, capsys):
    from test_app_traces import write_synthetic_trace

    path = write_synthetic_trace(tmp_path / "syn.sqlite", tasks=500)
    assert main(["analyze", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "its configuration has no clock_mhz" in err
