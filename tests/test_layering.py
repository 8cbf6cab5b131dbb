"""Data flows one way: between the simulator and the app, and between the simulator's floors."""
import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FORBIDDEN = {
    "simulator": ("dash", "dash_bootstrap_components", "plotly", "dashapp", "flask"),
    "dashapp": ("simulator",),
}
SHARED_ROOM = "simulator.analysis"
"""The one part of the simulator the app may import: the read-only analysis room."""

# The simulator's floors, lowest first. A module may import its own floor and those
# below it, never one above; ``kernels`` and ``gpu`` share a floor and must not import
# each other (the instruction-stream format below them is their only contract).
# ``analysis`` shares their floor too, so it imports neither, nor anything above.
SIMULATOR_FLOORS = [
    {"build", "interrupts", "user_input"},
    {"tracing", "engine", "stream"},
    {"kernels", "gpu", "analysis"},
    {"workloads"},
    {"runs"},
    {"__main__"},
]


def _imports(path, package_parts):
    """Absolute names of every module ``path`` imports, relative imports resolved."""
    tree = ast.parse(path.read_text(), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0:
                base = node.module or ""
            else:
                parent = package_parts[: len(package_parts) - node.level + 1]
                base = ".".join(parent + ([node.module] if node.module else []))
            if node.module:
                yield base
            else:
                yield from (f"{base}.{alias.name}" for alias in node.names)


def _modules(package):
    for path in sorted((ROOT / package).rglob("*.py")):
        # a module's package: its folder (for __init__.py, the package itself)
        yield path, list(path.relative_to(ROOT).parent.parts)


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_package_does_not_import_the_other_side(package):
    offenders = []
    for path, package_parts in _modules(package):
        for name in _imports(path, package_parts):
            if _forbidden(package, name):
                offenders.append(f"{path.relative_to(ROOT)} imports {name}")
    assert not offenders, "\n".join(offenders)


def _forbidden(package, name):
    """Whether ``package`` may not import module ``name``: the other side, except that the
    app may use the analysis room (which reads the trace contract alone, below)."""
    if package == "dashapp" and (name == SHARED_ROOM or name.startswith(SHARED_ROOM + ".")):
        return False
    return name.split(".")[0] in FORBIDDEN[package]


@pytest.mark.parametrize("name, forbidden", [
    ("simulator.analysis", False), ("simulator.analysis.report", False),
    ("simulator", True), ("simulator.gpu.config", True), ("simulator.tracing.writer", True),
    ("simulator.analysis_extra", True), ("simulator.runs", True)])
def test_the_app_may_import_the_analysis_room_and_nothing_else_of_the_simulator(name, forbidden):
    assert _forbidden("dashapp", name) is forbidden


def _floor(sub):
    for level, names in enumerate(SIMULATOR_FLOORS):
        if sub in names:
            return level
    raise AssertionError(f"simulator.{sub} is on no floor: add it to SIMULATOR_FLOORS")


def test_simulator_floors_import_only_downwards():
    offenders = []
    for path, package_parts in _modules("simulator"):
        rel = path.relative_to(ROOT / "simulator")
        if rel.parts == ("__init__.py",):
            continue
        own = rel.parts[0].removesuffix(".py")
        for name in _imports(path, package_parts):
            parts = name.split(".")
            if parts[0] != "simulator" or len(parts) < 2 or parts[1] == own:
                continue
            if not ((ROOT / "simulator" / parts[1]).is_dir()
                    or (ROOT / "simulator" / f"{parts[1]}.py").is_file()):
                continue  # a name from simulator/__init__.py, such as __version__
            if _floor(parts[1]) >= _floor(own):
                offenders.append(f"simulator/{rel} imports {name}")
    assert not offenders, "\n".join(offenders)


ANALYSIS_MAY_IMPORT = {"simulator.tracing.writer", "simulator.tracing.exporters",
                       "simulator.user_input"}
"""The analysis room reads the trace contract alone: of the simulator, only how to open a
trace read-only (and its errors), how user input is parsed, and how a trace's tasks are
written out as Chrome JSON (S9's critical-path overlay reuses that exporter)."""


def test_the_analysis_room_reads_the_trace_contract_alone():
    offenders = []
    for path, package_parts in _modules("simulator/analysis"):
        for name in _imports(path, package_parts):
            inside = name.startswith("simulator.") and not name.startswith("simulator.analysis")
            if inside and name not in ANALYSIS_MAY_IMPORT:
                offenders.append(f"{path.relative_to(ROOT)} imports {name}")
    assert not offenders, "\n".join(offenders)


def test_the_layering_check_sees_relative_imports(tmp_path):
    module = tmp_path / "m.py"
    module.write_text("from ..kernels.simt import launch\nfrom . import platform\n")
    names = set(_imports(module, ["simulator", "gpu"]))
    assert names == {"simulator.kernels.simt", "simulator.gpu.platform"}
