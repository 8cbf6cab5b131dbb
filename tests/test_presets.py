"""GPU presets (issue #34, item 1): each a data sheet whose figures have public sources,
resolved into the timing model's configuration; ``--gpu`` on run, run-kernel and sweep
with ``--config``/``--set`` on top; the ``gpus`` command and docs/gpus.md."""
import json
import sqlite3
from pathlib import Path
from types import SimpleNamespace

import pytest

from simulator.__main__ import build_parser, main
from simulator.gpu import presets
from simulator.gpu.cli import markdown
from simulator.gpu.config import PRESET_KEY, R9_NANO, ConfigError, flat_config, validate
from simulator.gpu.datasheets import ASSUMED, DATASHEETS, DERIVED, FACTS, SOURCES
from simulator.runs.sweep_point import run_command
from simulator.runs.workload_cli import build_config

ROOT = Path(__file__).resolve().parents[1]
NAMES = list(presets.PRESETS)
SCALE = """kernel void scale(global const float *in, global float *out)
{
    int i = get_global_id(0);
    out[i] = in[i] * 2.0f;
}
"""


@pytest.mark.parametrize("name", NAMES)
def test_each_preset_resolves_to_the_models_parameters_and_validates(name):
    cfg = presets.configuration(name)
    assert cfg[PRESET_KEY] == name and validate(cfg) is cfg
    flat, r9nano = flat_config(cfg), flat_config(R9_NANO)
    assert list(flat) == list(r9nano)  # the same keys: no parameter the model would reject
    # the same types too: the compiled model takes integers where the R9 Nano has them
    assert {key: type(value) for key, value in flat.items()} == \
        {key: type(value) for key, value in r9nano.items()}


def test_the_default_preset_is_the_r9_nano_configuration():
    cfg = presets.configuration()
    assert cfg.pop(PRESET_KEY) == "r9nano" and cfg == R9_NANO


@pytest.mark.parametrize("sheet", DATASHEETS, ids=NAMES)
def test_every_figure_has_a_source_and_every_parameter_an_origin(sheet):
    assert list(sheet.facts) and set(sheet.facts) == set(FACTS)
    figures = [*sheet.facts.values(), *sheet.not_modelled.values(), sheet.vendor_fp32_tflops,
               sheet.packed_fp32]
    for fact in figures:
        assert fact.source in SOURCES or (fact.source in (ASSUMED, DERIVED) and fact.note)
    assert list(presets.provenance(sheet.name)) == list(flat_config(R9_NANO))
    # a parameter comes from the data sheet, or is one of the model's own it may leave
    assert set(presets.parameters(sheet)) | set(presets.MODEL_DEFAULTS) == set(flat_config(R9_NANO))
    assert all(source.url.startswith("https://") for source in SOURCES.values())


@pytest.mark.parametrize("sheet", DATASHEETS, ids=NAMES)
def test_peak_fp32_from_the_data_sheet_is_the_vendors_within_rounding(sheet):
    """CUs x 4 SIMDs x 16 lanes x 2 FLOPs x clock, counted as the vendor counts it (both
    GCDs of an MI250X, packed FP32 for MI300): equal to the published figure to its last
    digit. Memory bandwidth is the data sheet's to within the rounding of bytes per cycle."""
    vendor = sheet.vendor_fp32_tflops.value
    digits = len(repr(vendor).split(".")[1])
    assert abs(presets.vendor_equivalent_tflops(sheet.name) - vendor) <= 0.5 * 10 ** -digits
    cfg = presets.configuration(sheet.name)
    assert cfg["cu"]["simds"] == 4 and cfg["cu"]["lanes_per_simd"] == 16
    # bytes per cycle per channel to two decimals: within half a hundredth per channel
    rounding = sheet.facts["hbm_channels"].value * 0.005 * cfg["clock_mhz"] / 1000
    assert abs(presets.memory_bandwidth(cfg) - sheet.facts["hbm_gbs"].value) <= rounding


def _args(*argv):
    return build_parser().parse_args(["run-kernel", "k.cl", "--global", "64", "--local", "64",
                                      *argv])


def test_set_and_config_apply_on_top_of_the_preset(tmp_path):
    cfg = build_config(_args("--gpu", "mi300a", "--set", "cu.simds=2"))
    assert cfg[PRESET_KEY] == "mi300a" and cfg["cu"]["simds"] == 2
    assert cfg["clock_mhz"] == 2100 and cfg["l2"]["banks"] == 16 and cfg["gpu"]["xcds"] == 6
    # A trace's stored configuration is a preset's whole: it runs again as it was, but
    # not over another preset, whose name it would carry.
    stored = tmp_path / "stored.json"
    stored.write_text(json.dumps(presets.configuration("mi100")))
    assert build_config(_args("--gpu", "mi100", "--config", str(stored))) == \
        presets.configuration("mi100")
    with pytest.raises(ConfigError, match="made for preset 'mi100'.*--gpu mi100"):
        build_config(_args("--config", str(stored)))
    with pytest.raises(ConfigError, match="not a parameter: choose it with --gpu"):
        build_config(_args("--set", "preset=mi100"))


def test_a_bad_gpu_name_is_one_line_naming_the_presets(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["run-kernel", "k.cl", "--global", "64", "--local", "64", "--gpu", "mi999"])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "unknown GPU 'mi999'" in err
    assert all(name in err for name in NAMES)
    assert main(["gpus", "h100"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "mi300x" in err


def test_gpus_lists_the_presets_and_shows_a_data_sheet_with_sources(capsys):
    assert main(["gpus"]) == 0
    lines = capsys.readouterr().out.splitlines()
    for name, cus, clock in (("r9nano", "64", "1,000 MHz"), ("mi300x", "304", "2,100 MHz")):
        row = next(line for line in lines if line.startswith(name + " "))
        assert f" {cus} " in row and clock in row and "GB/s" in row and "TFLOPS" in row
    assert "81.7 (163.4) TFLOPS" in next(line for line in lines if line.startswith("mi300x"))
    assert main(["gpus", "mi300x"]) == 0
    text = capsys.readouterr().out
    for part in ("Data sheet", "Configuration (--gpu mi300x", "Not modelled yet",
                 "mall_bytes", "xcds", "l2_line_bytes", "Sources",
                 SOURCES["rocm-specs"].url, "dram.bytes_per_cycle", "kept: "):
        assert part in text, part


def test_docs_gpus_md_is_the_data_sheets_as_the_code_has_them():
    assert (ROOT / "docs" / "gpus.md").read_text() == markdown(), \
        "regenerate it: python -m simulator gpus --markdown > docs/gpus.md"


def test_a_sweeps_points_reproduce_on_their_preset():
    config = presets.configuration("mi300x")
    config["l2"]["banks"] = 64
    task = SimpleNamespace(trace_level="kernel", window=None, instrument=True)
    command = run_command("vectoradd", {"size": 256}, config, 0, task)
    assert "--gpu mi300x" in command and "--set=l2.banks=64" in command
    assert command.count("--set") == 1  # only what differs from the preset


def test_the_trace_of_a_run_stores_the_preset_and_its_configuration(tmp_path, capsys):
    source, trace = tmp_path / "scale.cl", tmp_path / "scale.sqlite"
    source.write_text(SCALE)
    assert main(["run-kernel", str(source), "--global", "128", "--local", "64",
                 "--arg", "in=range:128", "--arg", "out=zeros:128", "--gpu", "mi100",
                 "--trace-level", "kernel", "-o", str(trace), "--no-progress"]) == 0
    cycles = int(capsys.readouterr().out.split(" cycles)")[0].rsplit("(", 1)[1].replace(",", ""))
    db = sqlite3.connect(trace)
    config, end_ps = db.execute("SELECT config, virtual_end_ps FROM run").fetchone()
    assert json.loads(config) == presets.configuration("mi100")
    assert end_ps == cycles * 1_000_000 // 1502  # cycles of the 1502 MHz clock, in ps
