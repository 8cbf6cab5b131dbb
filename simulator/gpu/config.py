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
        # accelerator dies, each with its own L2 that only its CUs use (CDNA 3's XCDs);
        # work-groups go to them in turn
        "xcds": 1,
        # 0: addresses go to L2 banks and memory channels in turn, and caches index
        # sets by the low bits (MGPUSim); 1: both hashed (XOR-folded)
        "address_hash": 0,
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
        "banks": 16,                    # per XCD
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
    "mall": {
        # memory-side cache (Infinity Cache): one slice in front of each memory channel,
        # shared by every L2; 0 bytes: none
        "slice_bytes": 0,
        "ways": 16,
        "mshrs": 64,                    # outstanding line fetches per slice
        "latency": 0,                   # slice access latency, cycles
        "requests_per_cycle": 1,        # requests a slice serves per cycle
        "buffer": 32,                   # input buffer slots (shared by all L2 banks)
        "write_buffer": 16,             # dirty evictions waiting for DRAM
    },
    "dram": {
        "channels": 0,                  # memory channels; 0: one per L2 bank of an XCD
        "interleave_bytes": 0,          # consecutive blocks go to consecutive channels; 0: l2's
        "latency": 100,                 # cycles from the start of service to the response
        "bytes_per_cycle": 32.0,        # per channel: 16 x 32 B/cycle at 1 GHz = 512 GB/s (HBM)
        "buffer": 32,                   # input buffer slots per channel
    },
}

LINE_BYTES = 64
"""Every cache's line: the instruction streams are coalesced into 64 B lines."""


PRESET_KEY = "preset"
"""Top-level key naming the preset a configuration was made from: not a parameter (never
flattened, set or validated as one), so a trace says which GPU it simulated."""

ZERO_ALLOWED = ("latency", "overhead", "address_hash", "mall.slice_bytes", "dram.channels",
                "dram.interleave_bytes")
"""Parameters (by key suffix) that may be 0: delays, a switch, and sizes whose 0 means
none or the default the comment beside them gives."""


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
    if cfg["l1v"]["line_bytes"] != LINE_BYTES or cfg["l2"]["line_bytes"] != LINE_BYTES:
        raise ConfigError("line_bytes must be 64: instruction streams are coalesced into 64 B lines")
    hashed = address_hash(cfg)
    for key, size, ways in cache_shapes(cfg):
        sets, rest = divmod(size, LINE_BYTES * ways)
        if rest or not sets:
            raise ConfigError(f"{key}: the size must be a multiple of 64 B lines x ways")
        if hashed and not _power_of_two(sets):
            raise ConfigError(f"{key}: with gpu.address_hash the sets ({sets}) must be a "
                              "power of two")
    for key in ("l2.interleave_bytes", "dram.interleave_bytes"):
        section, _, leaf = key.partition(".")
        if cfg[section][leaf] % LINE_BYTES:
            raise ConfigError(f"{key} must be a multiple of 64 B lines")
    if hashed and not (_power_of_two(cfg["l2"]["banks"]) and _power_of_two(dram_channels(cfg))):
        raise ConfigError("with gpu.address_hash, l2.banks and dram.channels must be powers "
                          "of two")
    cus = cfg["gpu"]["shader_arrays"] * cfg["gpu"]["cus_per_shader_array"]
    if cus % cfg["gpu"]["xcds"]:
        raise ConfigError(f"gpu.xcds ({cfg['gpu']['xcds']}) must divide the {cus} CUs")
    if cfg["cu"]["lanes_per_simd"] > 64 or 64 % cfg["cu"]["lanes_per_simd"]:
        raise ConfigError("cu.lanes_per_simd must divide the 64-lane wavefront")
    if cfg["dram"]["bytes_per_cycle"] <= 0:
        raise ConfigError("dram.bytes_per_cycle must be positive")
    return cfg


def cache_shapes(cfg):
    """(key, bytes, ways) of each cache of one unit: L1V, L2 bank, MALL slice if any."""
    shapes = [("l1v", cfg["l1v"]["size_bytes"], cfg["l1v"]["ways"]),
              ("l2", cfg["l2"]["bank_bytes"], cfg["l2"]["ways"])]
    if cfg["mall"]["slice_bytes"]:
        shapes.append(("mall", cfg["mall"]["slice_bytes"], cfg["mall"]["ways"]))
    return shapes


def address_hash(cfg):
    """Whether addresses are hashed to banks, channels and sets (``gpu.address_hash``)."""
    return bool(cfg["gpu"]["address_hash"])


def dram_channels(cfg):
    """Memory channels: ``dram.channels``, or one per L2 bank of an XCD if that is 0."""
    return cfg["dram"]["channels"] or cfg["l2"]["banks"]


def dram_interleave(cfg):
    """Bytes of a block consecutive channels serve: ``dram.interleave_bytes``, or the L2's."""
    return cfg["dram"]["interleave_bytes"] or cfg["l2"]["interleave_bytes"]


def l2_banks(cfg):
    """L2 banks in all: ``l2.banks`` per XCD."""
    return cfg["l2"]["banks"] * cfg["gpu"]["xcds"]


def line_transfer_cycles(cfg):
    """Cycles a memory channel is busy per 64 B line, exactly: 64 / ``dram.bytes_per_cycle``
    (a bandwidth in bytes per cycle as written, 19.72 being 1972/100), within 1/4096 of
    a cycle, so that the model's cycle count stays a 64-bit integer."""
    per_cycle = Fraction(repr(float(cfg["dram"]["bytes_per_cycle"])))
    return (LINE_BYTES / per_cycle).limit_denominator(4096)


def ps_per_cycle(cfg):
    """Picoseconds per simulated cycle, exactly: 1000 at 1 GHz, 1e6/2100 at 2.1 GHz.

    The model counts whole cycles; a time in the trace is cycle x this, rounded down to
    the picosecond (the tracer does it in integers), so no error accumulates and any
    clock in MHz is exact to within a picosecond.
    """
    return Fraction(1_000_000, cfg["clock_mhz"])
