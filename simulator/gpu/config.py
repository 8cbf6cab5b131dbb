"""The simulated GPU's parameters: an AMD R9 Nano (GCN3, "Fiji") by default.

One nested dict, read top to bottom like a data sheet. Every leaf can be overridden
from the command line (``--set l2.banks=8``) or a JSON file (``--config FILE``), and the
full resolved configuration is stored in the trace's ``run.config``.

Values follow MGPUSim's R9 Nano platform (see reference/simulator.md, section 1.4);
times are in cycles of the 1 GHz GPU clock unless a key says otherwise. Other GPUs are
presets (``presets.configuration``): the same parameters, from a data sheet; a preset's
configuration also names it under ``PRESET_KEY``, which is a label, not a parameter.
"""
import copy
from fractions import Fraction

from ..user_input import InputError, integer, load_json, real

R9_NANO = {
    "clock_mhz": 1000,                  # GPU clock in MHz; cycle c starts at c x 1e6 / clock_mhz ps
    "gpu": {
        "shader_arrays": 16,            # shader arrays (SA)
        "cus_per_shader_array": 4,      # compute units per SA: 64 CUs in all
    },
    "cp": {
        # work-groups the dispatcher maps per cycle (the Daisen case study: 1 vs 2)
        "wg_dispatch_per_cycle": 1,
        "launch_overhead": 1600,        # cycles from a kernel launch to its first dispatch
        "map_buffer": 2,                # MapWGReq slots in each CU's input buffer
    },
    "cu": {
        "simds": 4,                     # SIMD units per CU
        "lanes_per_simd": 16,           # a 64-lane wavefront takes 64/16 = 4 cycles per VALU op
        "wf_slots_per_simd": 10,        # wavefront slots per SIMD (40 per CU)
        "vgprs_per_simd": 256,          # vector registers per lane per SIMD
        "vgpr_granularity": 4,          # a wavefront's VGPR count is rounded up to this
        "sgprs": 3200,                  # scalar registers per CU
        "sgpr_granularity": 16,         # a wavefront's SGPR count is rounded up to this
        "lds_bytes": 65536,             # local data share per CU
        "lds_granularity": 256,         # a work-group's LDS allocation is rounded up to this
        "salu_latency": 4,              # cycles until a wavefront can issue after a scalar op
        "branch_latency": 4,            # cycles until a wavefront can issue after a branch
        "lds_latency": 14,              # LDS pipeline latency, plus one cycle per bank pass
        "vmem_issue_latency": 6,        # vector-memory instruction pipeline before coalescing
        "vmem_lines_per_cycle": 1,      # coalesced 64 B transactions sent to the L1V per cycle
        "vmem_queue": 4,                # vector-memory instructions waiting for the coalescer
    },
    "l1v": {
        "size_bytes": 16384,            # per CU
        "ways": 4,
        "line_bytes": 64,
        "mshrs": 16,                    # outstanding line misses
        "latency": 20,                  # hit latency (tag + data), cycles
        "requests_per_cycle": 4,        # requests taken from the input buffer per cycle
        "buffer": 16,                   # input buffer slots (back-pressure on the CU)
    },
    "l2": {
        "banks": 16,                    # one bank per DRAM channel
        "bank_bytes": 131072,           # 128 KB per bank, 2 MB in all
        "ways": 16,
        "line_bytes": 64,
        "interleave_bytes": 128,        # consecutive 128 B blocks go to consecutive banks
        "mshrs": 64,                    # outstanding line fetches per bank
        "latency": 10,                  # bank access latency, cycles
        "requests_per_cycle": 1,        # requests a bank serves per cycle
        "buffer": 32,                   # input buffer slots (shared by all L1Vs)
        "write_buffer": 16,             # dirty evictions waiting for DRAM
    },
    "dram": {
        "latency": 100,                 # cycles from the start of service to the response
        "bytes_per_cycle": 32,          # per channel: 16 x 32 B/cycle at 1 GHz = 512 GB/s (HBM)
        "buffer": 32,                   # input buffer slots per channel
    },
}


PRESET_KEY = "preset"
"""Top-level key naming the preset a configuration was made from: not a parameter (never
flattened, set or validated as one), so a trace says which GPU it simulated."""

ZERO_ALLOWED = ("latency", "overhead")
"""Parameters (by key suffix) that may be 0: delays, as opposed to sizes and rates."""


class ConfigError(ValueError):
    """A configuration override or file is invalid; the message says which key and why."""


def default_config():
    """A fresh copy of the R9 Nano configuration."""
    return copy.deepcopy(R9_NANO)


def _parse_value(text, current, key):
    if isinstance(current, bool) or not isinstance(current, (int, float)):
        raise ConfigError(f"{key}: only numeric parameters can be set, this one is {current!r}")
    try:
        value = integer(text) if isinstance(current, int) else real(text)
    except InputError:
        raise ConfigError(f"{key}: expected {type(current).__name__}, got {text!r}") from None
    return value


def _set(cfg, key, value, origin):
    if key == PRESET_KEY:
        raise ConfigError(f"{origin}: the preset is not a parameter: choose it with --gpu NAME")
    parts = key.split(".")
    node = cfg
    for i, part in enumerate(parts[:-1]):
        if not isinstance(node.get(part), dict):
            raise ConfigError(f"{origin}: unknown section {'.'.join(parts[:i + 1])!r}")
        node = node[part]
    if parts[-1] not in node or isinstance(node[parts[-1]], dict):
        known = ", ".join(sorted(k for k, v in node.items() if not isinstance(v, dict)))
        raise ConfigError(f"{origin}: unknown parameter {key!r} (known here: {known})")
    node[parts[-1]] = _parse_value(value, node[parts[-1]], key) if isinstance(value, str) \
        else _check_type(value, node[parts[-1]], key, origin)


def _check_type(value, current, key, origin):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ConfigError(f"{origin}: {key} must be a number, got {value!r}")
    if isinstance(current, int) and value != int(value):
        raise ConfigError(f"{origin}: {key} must be an integer, got {value!r}")
    return type(current)(value)


def apply_overrides(cfg, overrides):
    """Apply ``["l2.banks=8", ...]`` to ``cfg`` in place and return it."""
    for item in overrides:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"--set {item!r}: expected KEY=VALUE, such as l2.banks=8")
        _set(cfg, key.strip(), value.strip(), f"--set {item}")
    validate(cfg)
    return cfg


def _flatten(tree, prefix=""):
    for key, value in tree.items():
        if not prefix and key == PRESET_KEY:
            continue  # the preset's name labels the values, it is not one of them
        if isinstance(value, dict):
            yield from _flatten(value, f"{prefix}{key}.")
        else:
            yield f"{prefix}{key}", value


def parameter_names(cfg=None):
    """Every settable key (``l2.banks``, ...) of ``cfg``, by default the R9 Nano's."""
    return list(flat_config(R9_NANO if cfg is None else cfg))


def flat_config(cfg):
    """``cfg`` as {dotted key: value}, such as {"l2.banks": 16, ...}."""
    return dict(_flatten(cfg))


def load_config_file(path, base=None):
    """The configuration in JSON file ``path`` (a partial nested dict) applied over ``base``."""
    cfg = default_config() if base is None else base
    try:
        data = load_json(path)
    except InputError as exc:
        raise ConfigError(str(exc)) from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a JSON object of configuration sections")
    named = data.get(PRESET_KEY, cfg.get(PRESET_KEY))
    if named != cfg.get(PRESET_KEY):
        # a trace's stored configuration is a whole preset's: applied over another, the
        # run would carry the wrong name
        raise ConfigError(f"{path} was made for preset {named!r}, not "
                          f"{cfg.get(PRESET_KEY) or 'r9nano'!r}: choose it with --gpu {named}")
    for key, value in _flatten(data):
        _set(cfg, key, value, str(path))
    validate(cfg)
    return cfg


def _power_of_two(value):
    return value > 0 and value & (value - 1) == 0


def validate(cfg):
    """Raise ``ConfigError`` if a parameter is out of range."""
    if not isinstance(cfg.get(PRESET_KEY, ""), str):
        raise ConfigError(f"{PRESET_KEY} must be a preset's name, got {cfg[PRESET_KEY]!r}")
    flat = dict(_flatten(cfg))
    negative = [key for key, value in flat.items() if value < 0]
    if negative:
        raise ConfigError(f"parameters must not be negative: {', '.join(negative)}")
    zero = [key for key, value in flat.items()
            if value == 0 and not key.endswith(ZERO_ALLOWED)]
    if zero:
        raise ConfigError(f"parameters must be positive: {', '.join(zero)}")
    for cache in ("l1v", "l2"):
        c = cfg[cache]
        size = c["size_bytes"] if cache == "l1v" else c["bank_bytes"]
        if not _power_of_two(c["line_bytes"]) or size % (c["line_bytes"] * c["ways"]):
            raise ConfigError(f"{cache}: the size must be a multiple of line_bytes x ways, "
                              f"and line_bytes a power of two")
    if cfg["l1v"]["line_bytes"] != 64 or cfg["l2"]["line_bytes"] != 64:
        raise ConfigError("line_bytes must be 64: instruction streams are coalesced into 64 B lines")
    if cfg["l2"]["interleave_bytes"] % cfg["l2"]["line_bytes"]:
        raise ConfigError("l2.interleave_bytes must be a multiple of l2.line_bytes")
    if cfg["cu"]["lanes_per_simd"] > 64 or 64 % cfg["cu"]["lanes_per_simd"]:
        raise ConfigError("cu.lanes_per_simd must divide the 64-lane wavefront")
    return cfg


def ps_per_cycle(cfg):
    """Picoseconds per simulated cycle, exactly: 1000 at 1 GHz, 1e6/2100 at 2.1 GHz.

    The model counts whole cycles; a time in the trace is cycle x this, rounded down to
    the picosecond (the tracer does it in integers), so no error accumulates and any
    clock in MHz is exact to within a picosecond.
    """
    return Fraction(1_000_000, cfg["clock_mhz"])
