"""The GPU timing model: an AMD GCN GPU (R9 Nano by default) on the event engine.

``GPU(config, tracer=None, trace_level="inst")`` replays the per-wavefront instruction
streams of ``simulator.stream`` on a Command Processor, compute units, L1V
caches, L2 banks and DRAM channels with real contention; ``run.simulate`` runs a whole
workload into a trace file. Parameters live in ``config.py``.
"""
from .config import ConfigError, apply_overrides, default_config, load_config_file
from .platform import GPU, SimulationStalled, cython_available, default_implementation
from .trace_vocabulary import TraceLevelError, parse_trace_level

__all__ = ["GPU", "SimulationStalled", "ConfigError", "TraceLevelError", "apply_overrides",
           "default_config", "load_config_file", "parse_trace_level", "cython_available",
           "default_implementation"]
