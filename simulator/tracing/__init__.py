"""The data-collection API and the trace file.

``Tracer`` is Daisen's tracing API (start/end/tag a task, the four request helpers)
writing into a ``TraceWriter``. The Cython build of ``Tracer`` is used when it is
compiled, so Cython components can call it without re-entering Python per task;
``SIMULATOR_PUREPYTHON=1`` forces the readable reference in ``api.py``.
"""
import os

from .api import NO_TASK, OPEN_AT_STOP
from .api import Tracer as PyTracer

if os.environ.get("SIMULATOR_PUREPYTHON") == "1":
    Tracer = PyTracer
else:
    try:
        from ._api import Tracer
    except ImportError:  # extension not built: the reference has the same API
        Tracer = PyTracer

from .writer import TraceWriter, TraceError

__all__ = ["Tracer", "PyTracer", "TraceWriter", "TraceError", "NO_TASK", "OPEN_AT_STOP"]
