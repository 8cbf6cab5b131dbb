"""Kernels from source: OpenCL C 1.2 with Klein's annotations, run SIMT on real data.

``frontend.compile_source`` preprocesses (with clBuildProgram's build options) and parses
a ``.cl`` file into the IR, ``batches.start_launch`` runs one launch on numpy buffers, a
batch of work-groups at a time as the timing model asks for their per-wavefront
instruction streams (``simulator/stream.py``), and ``batches.launch`` all at once;
``probes`` and ``records`` capture and store Klein's kernel-level records (watched
accesses, branch bit-streams, emitted values).
"""
from importlib import resources

from .batches import launch, start_launch
from .diagnostics import KernelError, Unsupported
from .frontend import compile_source
from .memory import Buffer, LocalMem, Memory
from .preprocess import BuildOptions, parse_build_options


def builtin_source(name):
    """Text of a kernel shipped in ``simulator/kernels/builtin`` (``name`` without .cl)."""
    return resources.files("simulator.kernels").joinpath("builtin", f"{name}.cl").read_text()


__all__ = ["Buffer", "BuildOptions", "KernelError", "LocalMem", "Memory", "Unsupported",
           "builtin_source", "compile_source", "launch", "parse_build_options",
           "start_launch"]
