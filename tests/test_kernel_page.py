"""The kernel page without a browser: its layout on real kernel traces, bad URLs, the link
from the Component view, and the bounded edit-and-run runner."""
import json
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from test_app import _render, _texts
from test_app_traces import write_synthetic_trace

from dashapp.klein import runner
from dashapp.klein import views as klein_views

ROOT = Path(__file__).resolve().parents[1]
BUILTIN = ROOT / "simulator" / "kernels" / "builtin"
LATIN1 = ROOT / "tests" / "data" / "latin1_licence.cl"   # a licence comment not in UTF-8
EMITTER = """kernel void twice(global const float *in, global float *out)
{
    @emit float doubled[64];
    @emit float kept[64];
    int i = get_global_id(0);
    doubled = in[i] * 2.0f;
    kept = in[i];
    out[i] = in[i];
}
@bind ["class":"stackedAreaChart", "data":["doubled", "kept"]]
@bind ["class":"multiBarChart", "data":["kept"]]
"""


def _simulate(*args):
    subprocess.run([sys.executable, "-m", "simulator", *args, "--trace-level", "kernel",
                    "--no-progress"], cwd=ROOT, check=True, capture_output=True)


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    from dashapp import app as app_module

    app = app_module._created[0] if app_module._created else \
        app_module.create_app(trace_dir=tmp_path_factory.mktemp("served"))
    directory = tmp_path_factory.mktemp("kernel-traces")
    _simulate("run", "reduction-v2", "--size", "512", "--local", "128",
              "-o", str(directory / "v2.sqlite"))
    _simulate("run", "sobel", "--width", "32", "--height", "16", "--local-x", "16",
              "--local-y", "8", "-o", str(directory / "sobel.sqlite"))
    (directory / "emit.cl").write_text(EMITTER)
    _simulate("run-kernel", str(directory / "emit.cl"), "--global", "64", "--local", "64",
              "--arg", "in=range:64", "--arg", "out=zeros:64", "-o", str(directory / "emit.sqlite"))
    (directory / "emit.cl").unlink()
    _simulate("run-kernel", str(LATIN1), "--global", "32x16", "--local", "8x8",
              "--arg", "output=zeros:512", "--arg", "input=range:512", "--arg", "block=local:64",
              "--arg", "width=32", "--arg", "height=16", "-o", str(directory / "latin1.sqlite"))
    write_synthetic_trace(directory / "synthetic.sqlite", tasks=500)
    catalog = app.server.config["GPUSCOPE_CATALOG"]
    saved = dict(catalog.__dict__)
    catalog.__init__(trace_dir=directory)
    yield app, directory
    catalog.__dict__.update(saved)
    shutil.rmtree(directory, ignore_errors=True)


def _graphs(component):
    found = {}

    def walk(node):
        if isinstance(node, (list, tuple)):
            for n in node:
                walk(n)
        elif node is not None and hasattr(node, "to_plotly_json"):
            if type(node).__name__ == "Graph":
                found[node.id] = node.figure
            walk(getattr(node, "children", None))
    walk(component)
    return found


def test_v2_page_shows_launch_facts_source_and_both_views(app):
    page = _render(app[0], "kernel", trace="v2.sqlite", launch="0")
    text = _texts(page)
    for fact in ("NDRange", "512", "Work-group size", "128", "Simulated time",
                 "Bank conflicts:", "Branching view", "Proxy warps"):
        assert fact in text, fact
    assert "for (int s = 1; s < get_local_size(0); s = s * 2) {" in text
    graphs = _graphs(page)
    assert {"kv-memory-0", "kv-banks-0", "kv-histogram", "kv-donuts"} <= set(graphs)
    assert "kv-image" not in graphs  # a 1-D launch has no image
    memory = graphs["kv-memory-0"]
    assert [t["name"] for t in memory["data"]] == ["read", "write", "barrier"]
    banks = graphs["kv-banks-0"]["data"][0]
    assert len(banks["x"]) == 32 and sum(banks["y"]) > 0
    # Donuts are sorted by the warps they stand for (4 groups of 2 wavefronts in all),
    # and each covers a whole wavefront.
    centres = [int(a["text"].strip("<b>/")) for a in graphs["kv-donuts"]["layout"]["annotations"]]
    assert centres == sorted(centres, reverse=True) and sum(centres) == 4 * 2
    assert all(sum(d["values"]) == 64 for d in graphs["kv-donuts"]["data"])


def test_second_launch_and_component_link(app):
    text = _texts(_render(app[0], "kernel", trace="v2.sqlite", launch="1"))
    assert "launch 1" in text and "launch 0" in text
    views = klein_views.build(app[1] / "v2.sqlite", 0)
    key, loc, _start, _end = views.task
    component = _texts(_render(app[0], "component", trace="v2.sqlite", loc=loc, task=str(key)))
    assert "kernel views of this launch" in component


def test_a_2d_launch_shows_its_work_items_as_an_image(app):
    graphs = _graphs(_render(app[0], "kernel", trace="sobel.sqlite"))
    image = graphs["kv-image"]
    layers = {t["meta"][0]: t for t in image["data"]}
    assert list(layers) == ["picture", "image", "paint"]  # the input image under the work-items
    assert layers["picture"]["z"]["shape"] == layers["image"]["z"]["shape"] == "16, 32"
    assert "in[%{y}][%{x}]" in layers["picture"]["hovertemplate"]


def test_emit_and_bind_give_one_debug_chart_per_bind(app):
    page = _render(app[0], "kernel", trace="emit.sqlite")
    graphs = _graphs(page)
    area, bars = graphs["kv-debug-0"], graphs["kv-debug-1"]
    assert [t["name"] for t in area["data"]] == ["doubled", "kept"]
    assert all(t.get("stackgroup") == "emit" for t in area["data"])
    assert area["data"][0]["y"] == [2.0 * i for i in range(64)]
    assert bars["data"][0]["type"] == "bar" and bars["data"][0]["y"] == list(map(float, range(64)))
    assert "No @watch array" in _texts(page)


def test_a_latin1_licence_is_shown_as_written_and_its_edit_runs(app):
    """The trace keeps a file's bytes that are not UTF-8 as the characters they are in
    Latin-1 (windows-1252), one per byte, so the page shows the notice with its lines in
    place; the page's text, edited and run, is UTF-8 and runs alike."""
    page = _render(app[0], "kernel", trace="latin1.sqlite")
    assert "Copyright \u00a9 2015 Advanced Micro Devices, Inc. All rights reserved." in _texts(page)
    text = klein_views.build(app[1] / "latin1.sqlite", 0).source.text
    assert text == LATIN1.read_bytes().decode("latin-1")
    spec = klein_views.edit_spec(app[1] / "latin1.sqlite", 0, text, "32x16")
    _run_id, path, _seconds = runner.default_pool().run(spec)
    assert klein_views.build(path, 0).source.text == text


@pytest.mark.parametrize("query, fragment", [
    (dict(trace="v2.sqlite", launch="x"), "launch='x'"),
    (dict(trace="v2.sqlite", launch="9"), "no kernel launch 9"),
    (dict(trace="synthetic.sqlite"), "holds no kernel records"),
    (dict(trace="v2.sqlite", run="../../etc"), "not an edited run"),
    (dict(trace="v2.sqlite", run="0123456789abcdef"), "edited run is gone"),
    (dict(trace="nope.sqlite"), "no trace named"),
    (dict(trace="v2.sqlite", group="\u00b2"), "group='\u00b2': not a whole number"),
    (dict(trace="v2.sqlite", launch=str(10 ** 20)), "too large"),
])
def test_bad_kernel_urls_give_messages(app, query, fragment):
    assert fragment in _texts(_render(app[0], "kernel", **query))


# -- edit and run ------------------------------------------------------------------------
ARRAYS = [("g_idata", "global", "float", 4, 512, 0, 0), ("g_odata", "global", "float", 4, 4,
                                                          4096, 0),
          ("sdata", "local", "float", 4, 128, 0, 1)]
ARGS = json.dumps({"g_idata": {"buffer": "input", "base": 0, "bytes": 2048, "dtype": "float32"},
                   "g_odata": {"buffer": "p", "base": 4096, "bytes": 16, "dtype": "float32"},
                   "n": 512, "sdata": {"local": 128}})


def test_scaled_args_follow_the_ndrange():
    assert runner.scaled_args(ARGS, ARRAYS, [512], (256,)) == (
        ("g_idata", "random:256"), ("g_odata", "random:2"), ("n", "256"), ("sdata", "local:128"))
    sobel = json.dumps({"in": {"buffer": "i"}, "width": 32, "height": 16, "tile": {"local": 180}})
    assert runner.scaled_args(sobel, [("in", "global", "float", 4, 512, 0, 0)],
                                     [32, 16], (64, 32)) == (
        ("in", "random:2048"), ("width", "64"), ("height", "32"), ("tile", "local:180"))


def test_size_options_are_whole_work_groups_and_small():
    options = runner.size_options([25600], [64])
    assert options[0] == (64,) and (25600,) in options
    assert all(d[0] % 64 == 0 and d[0] <= runner.MAX_WORK_ITEMS for d in options)
    assert (16, 8) in runner.size_options([32, 16], [16, 8])
    assert (10 ** 6,) not in runner.size_options([10 ** 6], [256])


def _spec(source, args=(("g_idata", "random:256"), ("g_odata", "random:2"), ("n", "256"),
                        ("sdata", "local:128"))):
    return runner.RunSpec(source=source, kernel="reduce", global_size=(256,),
                                 local_size=(128,), args=args)


def test_an_edited_v3_runs_into_a_trace_without_conflicts():
    run_id, path, _seconds = runner.default_pool().run(_spec((BUILTIN / "reduction_v3.cl").read_text()))
    assert runner.default_pool().run_path(run_id) == path
    views = klein_views.build(path, 0)
    assert views.memory[0].found.conflicted == 0 and views.memory[0].found.instructions > 0
    # The same run again is the same trace, not a second run.
    assert runner.default_pool().run(_spec((BUILTIN / "reduction_v3.cl").read_text()))[2] == 0.0


def test_an_edited_run_takes_build_options():
    """-D reaches the preprocessor of the run; an over-long options string is refused."""
    guard = "#ifndef BODY\n#error needs -D BODY\n#endif\nkernel void"
    source = (BUILTIN / "reduction_v3.cl").read_text().replace("kernel void", guard, 1)
    spec = replace(_spec(source), options="-D BODY=1 -cl-mad-enable")
    assert spec.run_id() != _spec(source).run_id()
    run_id, path, _seconds = runner.default_pool().run(spec)
    assert klein_views.build(path, 0).memory[0].found.instructions > 0
    with pytest.raises(runner.RunError, match="#error needs -D BODY"):
        runner.default_pool().run(_spec(source))
    with pytest.raises(runner.RunError, match="build options are longer than"):
        runner.default_pool().run(replace(_spec(source), options="-DX " * 2000))


def test_a_syntax_error_comes_back_with_line_and_column():
    source = (BUILTIN / "reduction_v3.cl").read_text().replace("int i = get_global_id(0);",
                                                                "int i = get_global_id(0)")
    with pytest.raises(runner.RunError) as err:
        runner.default_pool().run(_spec(source))
    line = source.split("\n").index("    int i = get_global_id(0)") + 1
    assert err.value.line in (line, line + 1) and err.value.col >= 1
    assert str(err.value).startswith(f"kernel.cl:{err.value.line}:")
    assert "Traceback" not in str(err.value)


def test_a_kernel_that_never_ends_is_stopped_by_the_timeout():
    endless = ("kernel void reduce(global float *g_idata, global float *g_odata, int n,"
               " local float *sdata)\n{\n    int k = 0;\n    while (k >= 0) { k = k + 1; }\n}\n")
    with pytest.raises(runner.RunError, match="longer than 3 s"):
        runner.default_pool().run(_spec(endless), timeout=3)
    # Nothing of the stopped run is left behind: no work directory, no partial trace.
    run_id = _spec(endless).run_id()
    assert not [p for p in runner.default_pool().scratch_dir().iterdir() if p.name.startswith(run_id)]


def test_the_child_limits_bound_memory():
    # As a spare is bounded: started unbounded, limited when the run is handed over.
    child = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.readline(); "
                              f"bytearray({runner.MEMORY_BYTES + (1 << 30)})"],
                             stdin=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    runner.bound(child.pid)
    _out, err = child.communicate("go\n")
    assert child.returncode != 0 and "MemoryError" in err


def test_the_memory_view_draws_a_window_of_work_groups(app, monkeypatch):
    monkeypatch.setattr(klein_views, "MAX_DRAWN_ACCESSES", 1000)
    page = _render(app[0], "kernel", trace="v2.sqlite", group="1")
    text = _texts(page)
    assert "Drawing work-groups 1–1 (1 of 4)" in text and "earlier" in text and "later" in text
    xs = _graphs(page)["kv-memory-0"]["layout"]["xaxis"]["range"]
    assert xs[0] == 128 - 0.5  # the window opens on its first work-item
    assert "group='x'" in _texts(_render(app[0], "kernel", trace="v2.sqlite", group="x"))


def test_an_error_is_shown_with_its_line_and_a_caret(app):
    from dashapp.pages import kernel as page

    shown = page._error_context("int a;\nint b = ;\n", runner.RunError("bad", 2, 9))
    assert shown.children == "   2 | int b = ;\n     |         ^"
    assert page._error_context("x", runner.RunError("no place")) == ""


def test_links_from_other_views_parse_back_to_the_launch():
    from urllib.parse import parse_qs, urlsplit

    from dashapp.klein.views import kernel_href
    from dashapp.pages.kernel import parse_kernel

    for launch in (0, 3):
        url = urlsplit(kernel_href("my trace.sqlite", launch))
        state, errors = parse_kernel(parse_qs(url.query))
        assert url.path == "/kernel" and not errors
        assert (state.trace, state.launch) == ("my trace.sqlite", launch)


def test_per_work_item_maps_travel_as_runs():
    from dashapp.klein.views import run_lengths

    values = [3, 3, 3, -1, -1, 7, 3]
    runs = run_lengths(values)
    assert runs == [3, 3, -1, 2, 7, 1, 3, 1]
    expanded = [v for value, count in zip(runs[::2], runs[1::2]) for v in [value] * count]
    assert expanded == values
    assert run_lengths([]) == []
    assert len(run_lengths(np.repeat(np.arange(1024), 64))) == 2048  # a proxy per wavefront


def test_an_edit_is_run_at_an_offered_size_with_arguments_scaled(app):
    _, directory = app
    trace = directory / "v2.sqlite"
    spec = klein_views.edit_spec(trace, 0, "kernel source", "256")
    assert (spec.source, spec.global_size, spec.local_size) == ("kernel source", (256,), (128,))
    assert spec.options == "" and klein_views.edit_spec(trace, 0, "", "256", "-DN=4").options == "-DN=4"
    assert spec.kernel.startswith("reduce")
    with pytest.raises(ValueError, match="not offered"):
        klein_views.edit_spec(trace, 0, "", "100")
    with pytest.raises(ValueError, match="Unknown size"):
        klein_views.edit_spec(trace, 0, "", "big")
    with pytest.raises(LookupError, match="No kernel launch 9"):
        klein_views.edit_spec(trace, 9, "", "256")


def test_no_two_branch_patterns_share_a_colour_and_the_rest_are_grey():
    from dashapp.klein import figures as klein_figures

    palette = [klein_figures.pattern_colour(rank) for rank in range(40)]
    named = palette[:len(klein_figures.PATTERN_COLOURS)]
    assert len(set(named)) == len(named) and klein_figures.RARE_PATTERN not in named
    assert set(palette[len(named):]) == {klein_figures.RARE_PATTERN}


def test_the_accesses_csv_holds_every_watched_access_with_its_bank_degree(app):
    import io

    import pandas as pd

    from dashapp import queries
    from dashapp.klein import analysis
    from dashapp.klein.views import accesses_csv

    path = app[1] / "v2.sqlite"
    table = pd.read_csv(io.StringIO(accesses_csv(path, 0)))
    with queries.open_trace(path) as db:
        watched = [a[0] for a in queries.kernel_arrays(db, 0) if a[6]]
        expected = {name: analysis.accesses_from_rows(queries.kernel_accesses(db, 0, name))
                    for name in watched}
    assert sorted(table["array"].unique()) == sorted(watched)
    for name, acc in expected.items():
        rows = table[table["array"] == name]
        assert len(rows) == len(acc.kind)
        assert list(rows["address"]) == acc.address.tolist()
        assert set(rows["kind"]) <= {"read", "write", "barrier"}
        assert (rows["kind"] == "barrier").sum() == int((acc.kind == analysis.BARRIER).sum())
    # reduction-v2 serialises its strided LDS reads: some access has a degree above 1
    assert table["bank_degree"].max() > 1
    with pytest.raises(LookupError, match="no @watch array"):
        accesses_csv(app[1] / "emit.sqlite", 0)
    import importlib

    page = importlib.import_module("dashapp.pages.kernel")
    with app[0].server.test_request_context("/"):
        data, message = page.download_csv(1, "?trace=v2.sqlite&launch=0")
        _none, refused = page.download_csv(1, "?trace=emit.sqlite")
    assert message == "" and data["filename"] == "v2.sqlite-launch0-accesses.csv"
    assert data["content"] == accesses_csv(path, 0)
    assert "no @watch array" in refused


def test_a_launch_whose_source_is_missing_is_a_message(app, tmp_path):
    broken = tmp_path / "nosource.sqlite"
    shutil.copy(app[1] / "v2.sqlite", broken)
    import sqlite3

    with sqlite3.connect(broken) as db:
        db.execute("DELETE FROM kernel_source")
    with pytest.raises(LookupError, match="names a source the trace does not hold"):
        klein_views.build(broken, 0)
