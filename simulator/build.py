"""Which build of the simulator runs: compiled by Cython, or plain Python.

This module is the one place that decides. Two builds exist of the modules on the hot
path, and both give identical traces:

* ``"cython"``: the extensions that ``setup.py build_ext`` compiles: the hand-written
  ``_*.pyx`` modules (engine heap, tracer ring buffer, bulk inserter and reader, the
  importers' column loops, Chrome slice reader and track nesting) and the timing
  components written once in Cython's pure Python mode (a ``.py`` with a ``.pxd``
  beside it), compiled from that same ``.py``;
* ``"python"``: the readable references of the ``.pyx`` modules, and the same
  pure-mode ``.py`` files run by the interpreter.

The compiled build is the default; ``SIMULATOR_PUREPYTHON=1``, or any missing compiled
module, selects plain Python. A caller may also ask for either build by name (the
tests run both in one process), so the plain-Python sources load even where compiled
copies of them sit beside them. Only the standard library is imported here: this is
the simulator's lowest floor, and ``setup.py`` reads it to find what to compile.
"""
import functools
import importlib
import importlib.machinery
import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType

BUILDS = ("python", "cython")
PURE_PYTHON_VARIABLE = "SIMULATOR_PUREPYTHON"
ROOT = Path(__file__).resolve().parent  # the ``simulator`` package

# The modules the compiled build consists of: each hand-written extension with the
# reference it replaces (``None`` where a pure-mode ``.py`` is its own reference).
# ``setup.py`` compiles exactly these.
EXTENSIONS = {
    "simulator.engine._engine": "simulator.engine.engine",
    "simulator.tracing._api": "simulator.tracing.api",
    "simulator.tracing._bulk": "simulator.tracing.bulk",
    "simulator.tracing.importers._columns": "simulator.tracing.importers.columns",
    "simulator.tracing.importers._nesting": "simulator.tracing.importers.nesting",
    "simulator.tracing.importers._slices": "simulator.tracing.importers.slices",
    "simulator.gpu.memory": None,
    "simulator.gpu.compute_unit": None,
    "simulator.gpu.command_processor": None,
}
# Extensions that need a C library header at build time; without it the build skips
# them and their reference runs in the compiled build too.
OPTIONAL = {"simulator.tracing._bulk"}
# Compiled modules with no plain-Python twin of the same API: their callers have
# another way to the same result and take it when ``accelerator`` answers None (the
# metric pyramid: built batch by batch when compiled, in one pass at finalize without).
ACCELERATORS = ("simulator.tracing._pyramid",)


class BuildError(ImportError):
    """A build was asked for by name but cannot be loaded."""


def pure_python_forced() -> bool:
    """True when ``SIMULATOR_PUREPYTHON=1`` asks for plain Python."""
    return os.environ.get(PURE_PYTHON_VARIABLE) == "1"


def is_compiled(module: ModuleType) -> bool:
    """True when ``module`` was loaded from an extension, not from Python source."""
    return not str(getattr(module, "__file__", "") or "").endswith(".py")


def compiled_file(name: str) -> Path | None:
    """The compiled extension file of module ``name``, if the build made one.

    Found by path, without importing: this module sits below the packages it names.
    """
    base = ROOT.joinpath(*name.split(".")[1:])
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        path = base.with_name(base.name + suffix)
        if path.is_file():
            return path
    return None


def compiled_available() -> bool:
    """True when every required extension of the compiled build was built."""
    return all(compiled_file(name) for name in EXTENSIONS if name not in OPTIONAL)


def available_builds() -> tuple[str, ...]:
    """The builds that can run here: plain Python always, the compiled one when built."""
    return BUILDS if compiled_available() else ("python",)


def default_build() -> str:
    """``"cython"`` when compiled and not disabled by ``SIMULATOR_PUREPYTHON=1``, else
    ``"python"``."""
    if pure_python_forced() or not compiled_available():
        return "python"
    return "cython"


def check_build(build: str | None) -> str:
    """``build``, or the default build for ``None``; a ``ValueError`` for an unknown name."""
    if build is None:
        return default_build()
    if build not in BUILDS:
        raise ValueError(f"unknown build {build!r}: choose one of {', '.join(BUILDS)}")
    return build


def module(name: str, build: str | None = None) -> ModuleType:
    """The module ``name`` (one of ``EXTENSIONS``) as ``build`` runs it.

    For ``"cython"``, the extension itself (an optional extension that was not built
    falls back to its reference); for ``"python"``, its reference or, for a pure-mode
    module, its ``.py`` source run by the interpreter.
    """
    build = check_build(build)
    reference = EXTENSIONS[name]
    if build == "cython":
        if compiled_file(name):
            return importlib.import_module(name)
        if name in OPTIONAL:
            return importlib.import_module(reference)
        raise BuildError(f"{name} is not compiled: run `python setup.py build_ext --inplace`")
    if reference is not None:
        return importlib.import_module(reference)
    return _uncompiled_group()[name]


def accelerator(name: str, build: str | None = None) -> ModuleType | None:
    """The compiled module ``name`` (one of ``ACCELERATORS``) when ``build`` is the
    compiled one and it was built; None otherwise."""
    if name not in ACCELERATORS:
        raise ValueError(f"{name} is not an accelerator")
    if check_build(build) == "cython" and compiled_file(name):
        return importlib.import_module(name)
    return None


@functools.cache
def _uncompiled_group() -> dict[str, ModuleType]:
    """The pure-mode modules run from source, importing each other's sources.

    A module with no compiled file is the ordinary module. A compiled one is executed
    afresh from its ``.py`` under its own name, in the order of ``EXTENSIONS`` (the order
    they import each other), while ``sys.modules`` briefly maps the group's names to
    these copies, so that a relative import inside the group finds the plain-Python copy
    and never the compiled one (which is not even loaded for this). ``sys.modules`` is
    restored afterwards.
    """
    names = [name for name, reference in EXTENSIONS.items() if reference is None]
    saved = {name: sys.modules.get(name) for name in names}
    loaded = {}
    try:
        for name in names:
            if compiled_file(name) is None:
                loaded[name] = importlib.import_module(name)
                continue
            source = ROOT.joinpath(*name.split(".")[1:]).with_suffix(".py")
            spec = importlib.util.spec_from_file_location(name, source)
            copy = importlib.util.module_from_spec(spec)
            loaded[name] = sys.modules[name] = copy
            spec.loader.exec_module(copy)
    finally:
        for name, original in saved.items():
            if original is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = original
    return loaded
