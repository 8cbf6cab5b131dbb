"""GPU presets in the app: the kernel page's picker runs an edited kernel on the chosen
preset (``run-kernel --gpu`` in the bounded runner), and the Traces page says which GPU a
run simulated."""
import json
import sqlite3
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest
from test_app import _render, _texts, serving

from dashapp.klein import jobs, runner
from dashapp.klein import views as klein_views
from simulator.gpu import presets

ROOT = Path(__file__).resolve().parents[1]
SCALE = """kernel void scale(global const float *in, global float *out)
{
    int i = get_global_id(0);
    out[i] = in[i] * 2.0f;
}
"""


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    directory = tmp_path_factory.mktemp("gpu-traces")
    source = directory / "scale.cl"
    source.write_text(SCALE)
    for gpu in ("mi300a", "r9nano"):
        subprocess.run([sys.executable, "-m", "simulator", "run-kernel", str(source),
                        "--global", "128", "--local", "64", "--arg", "in=range:128",
                        "--arg", "out=zeros:128", "--gpu", gpu, "--trace-level", "kernel",
                        "--no-progress", "-o", str(directory / f"{gpu}.sqlite")],
                       cwd=ROOT, check=True, capture_output=True)
    source.unlink()
    yield serving(tmp_path_factory, directory), directory


def _spec(gpu=""):
    return runner.RunSpec(source=SCALE, kernel="scale", global_size=(128,), local_size=(64,),
                          args=(("in", "range:128"), ("out", "zeros:128")), gpu=gpu)


def _component(node, wanted):
    if isinstance(node, (list, tuple)):
        return next((c for n in node if (c := _component(n, wanted)) is not None), None)
    if node is None or not hasattr(node, "to_plotly_json"):
        return None
    if getattr(node, "id", None) == wanted:
        return node
    return _component(getattr(node, "children", None), wanted)


def test_the_apps_gpu_names_are_the_simulators_presets():
    assert runner.GPUS == tuple(presets.PRESETS)


def test_the_run_command_line_names_the_picked_gpu():
    assert runner._command(_spec("mi300x"))[-2:] == ["--gpu", "mi300x"]
    assert "--gpu" not in runner._command(_spec())
    assert _spec("mi300x").run_id() != _spec().run_id() != _spec("mi100").run_id()


def test_an_unknown_gpu_is_refused_before_any_run():
    with pytest.raises(runner.RunError, match="unknown GPU 'h100': the presets are r9nano, "):
        runner.default_pool().run(_spec("h100"))


def test_the_picker_offers_the_presets_and_starts_at_the_recorded_runs(app):
    page = _render(app[0], "kernel", trace="mi300a.sqlite", launch="0")
    picker = _component(page, "kv-gpu")
    assert picker.options == list(runner.GPUS) and picker.value == "mi300a"
    assert _component(_render(app[0], "kernel", trace="r9nano.sqlite", launch="0"),
                      "kv-gpu").value == "r9nano"


def test_run_on_the_picked_gpu_writes_a_trace_of_that_preset(app):
    """The Run button's callback with the picker at mi100 (the recorded run was an
    MI300A's): the edited run's trace stores mi100 and its configuration."""
    from dashapp.pages import kernel as kernel_page  # registers the page: after the app

    with app[0].server.test_request_context("/"):
        *_, job, _polling, _disabled = kernel_page.start_run(
            1, SCALE, "128", "", "mi100", "?trace=mi300a.sqlite&launch=0")
    run_id = job["run"]
    deadline = time.monotonic() + runner.TIMEOUT_SECONDS
    while jobs.default_queue().status(run_id).state in jobs.ACTIVE:
        assert time.monotonic() < deadline
        time.sleep(0.1)
    assert jobs.default_queue().status(run_id).state == "done"
    config = sqlite3.connect(runner.default_pool().run_path(run_id)).execute(
        "SELECT config FROM run").fetchone()[0]
    assert json.loads(config) == presets.configuration("mi100")
    spec = klein_views.edit_spec(app[1] / "mi300a.sqlite", 0, SCALE, "128", gpu="mi100")
    assert spec.run_id() == run_id and replace(spec, gpu="").run_id() != run_id


def test_the_traces_page_says_which_gpu_a_run_simulated(app):
    text = _texts(_render(app[0], "home"))
    assert "Simulated GPU" in text
    assert "mi300a preset: 228 CUs at 2,100 MHz" in text
    assert "r9nano preset: 64 CUs at 1,000 MHz" in text
