"""The data-collection API and the trace file.

``Tracer`` is Daisen's tracing API (start/end/tag a task, the four request helpers)
writing into a ``TraceWriter``. It is the class of the build ``simulator.build``
chooses: the Cython build (``_api.pyx``, which Cython components call without
re-entering Python per task) or the readable reference in ``api.py`` (``PyTracer``).
"""
from .. import build as _build
from .api import NO_TASK, OPEN_AT_STOP, TraceSink
from .api import Tracer as PyTracer
from .writer import TraceError, TraceWriter


def tracer_class(build: str | None = None) -> type[PyTracer]:
    """The ``Tracer`` class of ``build`` (``"python"`` or ``"cython"``; default: the
    build ``simulator.build`` chooses)."""
    return _build.module("simulator.tracing._api", build).Tracer


Tracer = tracer_class()

__all__ = ["Tracer", "PyTracer", "TraceSink", "TraceWriter", "TraceError", "NO_TASK",
           "OPEN_AT_STOP", "tracer_class"]
