"""The event engine: integer time, deterministic order, smart ticking, bounded buffers.

The Cython build (``_engine.pyx``) is used when it is compiled; ``engine.py`` is the
readable reference with the same API, used when the extension is missing or when
``SIMULATOR_PUREPYTHON=1``.
"""
import os

if os.environ.get("SIMULATOR_PUREPYTHON") == "1":
    from . import engine as _impl
else:
    try:
        from . import _engine as _impl
    except ImportError:  # extension not built: the reference has the same API
        from . import engine as _impl

Engine = _impl.Engine
Handler = _impl.Handler
TickingComponent = _impl.TickingComponent
Buffer = _impl.Buffer
TimeoutProcess = _impl.TimeoutProcess
PRIMARY = _impl.PRIMARY
SECONDARY = _impl.SECONDARY
TICK = _impl.TICK
IMPLEMENTATION = "cython" if _impl.__name__.endswith("._engine") else "python"

__all__ = ["Engine", "Handler", "TickingComponent", "Buffer", "TimeoutProcess", "PRIMARY",
           "SECONDARY", "TICK", "IMPLEMENTATION"]
