"""One place chooses the build: ``simulator.build``, read by the engine, the tracer, the
writer and the GPU; ``setup.py`` compiles exactly the modules it lists."""
import ast
import importlib.util
import inspect
import json
import os
import runpy
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from simulator import build as simulator_build
from simulator.gpu import GPU, apply_overrides, default_config

ROOT = Path(__file__).resolve().parents[1]
TINY = ["gpu.shader_arrays=1", "gpu.cus_per_shader_array=1", "l2.banks=1"]


def _choices(environment):
    """What a fresh interpreter picks with ``environment`` added to its own."""
    code = ("import simulator.engine as e, simulator.tracing as t, simulator.tracing.writer as w;"
            "from simulator.gpu import GPU, default_config;"
            "import inspect;"
            "import sys;"
            "from simulator.build import is_compiled;"
            "g = GPU(default_config());"
            "loaded = any(is_compiled(m) for n, m in list(sys.modules.items())"
            " if n.startswith('simulator.') and getattr(m, '__file__', None));"
            "print(e.IMPLEMENTATION, t.Tracer.__module__, w.BulkInserter.__module__,"
            " g.implementation, not inspect.isfunction(type(g.cp).tick), loaded)")
    env = {k: v for k, v in os.environ.items() if k != "SIMULATOR_PUREPYTHON"}
    env.update(environment, PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True)
    return out.stdout.split()


def test_purepython_variable_makes_every_part_plain_python():
    engine, tracer, bulk, gpu, cp_compiled, loaded = _choices({"SIMULATOR_PUREPYTHON": "1"})
    assert (engine, tracer, bulk, gpu) == ("python", "simulator.tracing.api",
                                           "simulator.tracing.bulk", "python")
    # the GPU's components run from source even where compiled copies sit beside them,
    # and no extension of the simulator is so much as loaded
    assert cp_compiled == "False" and loaded == "False"


@pytest.mark.skipif(not simulator_build.compiled_available(), reason="compiled build missing")
def test_the_compiled_build_is_the_default_when_built():
    engine, tracer, _, gpu, cp_compiled, loaded = _choices({})
    assert (engine, tracer, gpu, cp_compiled, loaded) == ("cython", "simulator.tracing._api",
                                                          "cython", "True", "True")


def test_a_checkout_without_compiled_modules_runs_as_plain_python(tmp_path):
    """No ``build_ext`` (or a failed one): the same sources run, and trace, as Python."""
    shutil.copytree(ROOT / "simulator", tmp_path / "simulator",
                    ignore=shutil.ignore_patterns("*.so", "*.cpp", "__pycache__"))
    code = ("import json, sqlite3, inspect;"
            "from simulator import build;"
            "from simulator.gpu import GPU, default_config;"
            "from simulator.gpu.run import simulate;"
            "from simulator.workloads import WORKLOADS;"
            "r = simulate(WORKLOADS['vectoradd'](size=1024), default_config(), 't.sqlite',"
            " progress=False, writer_process=False);"
            "n = sqlite3.connect('t.sqlite').execute('SELECT count(*) FROM task').fetchone()[0];"
            "print(json.dumps([build.compiled_available(), build.default_build(), r.completed,"
            " n > 0, inspect.isfunction(type(GPU(default_config()).cp).tick)]))")
    env = {k: v for k, v in os.environ.items() if k != "SIMULATOR_PUREPYTHON"}
    env["PYTHONPATH"] = str(tmp_path)
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env,
                         capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == [False, "python", True, True, True]


def test_each_build_runs_its_own_engine_and_components(build):
    gpu = GPU(apply_overrides(default_config(), TINY), implementation=build)
    compiled = build == "cython"
    assert (type(gpu.engine).__module__ == "simulator.engine._engine") == compiled
    for part in (gpu.cp, gpu.cus[0], gpu.l1v[0], gpu.l2[0], gpu.dram[0]):
        # interpreted, a method is a plain Python function; compiled, it is not
        assert inspect.isfunction(type(part).tick) != compiled


def test_an_unknown_build_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown build 'fast'"):
        simulator_build.check_build("fast")


def test_setup_compiles_exactly_the_listed_modules():
    """Every hand-written ``.pyx`` and every pure-mode ``.py`` (one with a ``.pxd`` beside
    it) is an extension of the compiled build (or an accelerator, with no reference), and
    nothing else is."""
    found = set()
    for path in (ROOT / "simulator").rglob("*.pyx"):
        found.add(".".join(path.relative_to(ROOT).with_suffix("").parts))
    for pxd in (ROOT / "simulator").rglob("*.pxd"):
        if pxd.with_suffix(".py").is_file():
            found.add(".".join(pxd.relative_to(ROOT).with_suffix("").parts))
    names = runpy.run_path(str(ROOT / "simulator" / "build.py"))
    listed, accelerators = names["EXTENSIONS"], names["ACCELERATORS"]
    assert set(listed) | set(accelerators) == found
    assert not set(listed) & set(accelerators)
    for reference in listed.values():
        if reference is not None:  # a hand-written extension beside its reference
            assert importlib.util.find_spec(reference) is not None


def test_the_build_module_imports_only_the_standard_library():
    """``setup.py`` runs it before anything is installed."""
    tree = ast.parse((ROOT / "simulator" / "build.py").read_text())
    names = {alias.name.split(".")[0] for node in ast.walk(tree)
             if isinstance(node, ast.Import) for alias in node.names}
    names |= {node.module.split(".")[0] for node in ast.walk(tree)
              if isinstance(node, ast.ImportFrom) and node.module and node.level == 0}
    assert names <= set(sys.stdlib_module_names)
