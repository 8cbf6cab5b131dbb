"""HolisticTraceAnalysis, run on a shared trace as the reference our profile analyses
are held against (tests only: HTA is never part of GPUscope)."""
from __future__ import annotations

import logging
from pathlib import Path

import pytest


def hta_analysis(trace: Path, directory: Path):
    """HTA's ``TraceAnalysis`` of the one trace (a directory holding a link to it)."""
    pytest.importorskip("hta")
    from hta.trace_analysis import TraceAnalysis

    directory.mkdir(parents=True, exist_ok=True)
    link = directory / trace.name
    if not link.exists():
        link.symlink_to(trace)
    logging.disable(logging.WARNING)  # HTA logs every parse step
    try:
        return TraceAnalysis(trace_dir=str(directory))
    finally:
        logging.disable(logging.NOTSET)
