"""Kernels from source: OpenCL C 1.2 with Klein's annotations, run SIMT on real data.

``frontend.compile_source`` preprocesses (with clBuildProgram's build options) and parses
a ``.cl`` file into the IR, ``simt.launch`` runs one
launch on numpy buffers and returns the per-wavefront instruction streams of
``simulator/stream.py`` for the timing model; ``probes`` and ``records`` capture and store
Klein's kernel-level records (watched accesses, branch bit-streams, emitted values).
"""
from importlib import resources

from .diagnostics import KernelError, Unsupported
from .frontend import compile_source
from .memory import Buffer, LocalMem, Memory
from .preprocess import BuildOptions, parse_build_options
from .simt import launch


def builtin_source(name):
    """Text of a kernel shipped in ``simulator/kernels/builtin`` (``name`` without .cl)."""
    return resources.files("simulator.kernels").joinpath("builtin", f"{name}.cl").read_text()


__all__ = ["Buffer", "BuildOptions", "KernelError", "LocalMem", "Memory", "Unsupported",
           "builtin_source", "compile_source", "launch", "parse_build_options"]
