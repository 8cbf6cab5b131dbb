"""The event engine: integer time, deterministic order, smart ticking, bounded buffers.

The Cython build (``_engine.pyx``, a C heap of events) and the readable reference
(``engine.py``) have the same API; ``simulator.build`` picks one (``module_for``).
"""
from types import ModuleType

from .. import build as _build


def module_for(build: str | None = None) -> ModuleType:
    """The engine module of ``build`` (``"python"`` or ``"cython"``; default: the build
    ``simulator.build`` chooses)."""
    return _build.module("simulator.engine._engine", build)


_impl = module_for()

Engine = _impl.Engine
Handler = _impl.Handler
TickingComponent = _impl.TickingComponent
Buffer = _impl.Buffer
TimeoutProcess = _impl.TimeoutProcess
PRIMARY = _impl.PRIMARY
SECONDARY = _impl.SECONDARY
TICK = _impl.TICK
IMPLEMENTATION = "cython" if _build.is_compiled(_impl) else "python"

__all__ = ["Engine", "Handler", "TickingComponent", "Buffer", "TimeoutProcess", "PRIMARY",
           "SECONDARY", "TICK", "IMPLEMENTATION", "module_for"]
