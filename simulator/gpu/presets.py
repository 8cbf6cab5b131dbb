"""GPU presets: the timing model's configuration of each data sheet in ``datasheets``.

``configuration("mi300x")`` is a run's base configuration (``--gpu mi300x``; ``--config``
and ``--set`` apply on top). It has the keys of ``config.R9_NANO``, the model's
parameters: each either follows from a figure of the data sheet (``parameters`` says
how, in the model's units: cycles of the preset's clock, bytes, counts) or is one of the
model's own queue and pipeline sizes that no public source gives for these parts
(``MODEL_DEFAULTS``), kept at MGPUSim's R9 Nano values. The preset's name is stored
beside them under ``config.PRESET_KEY``, so a trace says which GPU it simulated.

What the model cannot express yet is reported, not hidden: ``memory_bandwidth`` gives
the bandwidth the model reaches beside the configured one, and the data sheets list the
parts not modelled (a split L2, the Infinity Cache, address hashing).
"""
import copy
import math

from .config import PRESET_KEY, R9_NANO, ConfigError, flat_config, validate
from .datasheets import DATASHEETS, DataSheet, Fact

PRESETS: dict[str, DataSheet] = {sheet.name: sheet for sheet in DATASHEETS}
"""Every preset by name, the default first."""

DEFAULT = "r9nano"

_QUEUE = ("a queue or buffer size of the model (MGPUSim's R9 Nano value): no public source "
          "gives it for these parts")
_PIPE = ("a pipeline latency or rate of MGPUSim's GCN compute unit, kept for every preset: "
         "no public source gives it for these parts")
_GRANULE = ("an allocation granule of MGPUSim's GCN resource model, kept for every preset: "
            "not checked against the CDNA parts")
_LINE = ("64 B: instruction streams are coalesced into 64 B lines (CDNA 2 and 3 have 128 B "
         "lines: listed as not modelled)")
MODEL_DEFAULTS: dict[str, str] = {
    "cp.wg_dispatch_per_cycle": "the dispatcher's rate (Daisen's case study knob): no public "
                                "figure for these parts",
    "cp.map_buffer": _QUEUE, "cu.vmem_queue": _QUEUE, "l1v.mshrs": _QUEUE, "l1v.buffer": _QUEUE,
    "l2.mshrs": _QUEUE, "l2.buffer": _QUEUE, "l2.write_buffer": _QUEUE, "dram.buffer": _QUEUE,
    "cu.salu_latency": _PIPE, "cu.branch_latency": _PIPE, "cu.vmem_issue_latency": _PIPE,
    "cu.vmem_lines_per_cycle": _PIPE, "l1v.requests_per_cycle": _PIPE,
    "l2.requests_per_cycle": _PIPE,
    "cu.sgpr_granularity": _GRANULE, "cu.lds_granularity": _GRANULE,
    "l1v.line_bytes": _LINE, "l2.line_bytes": _LINE,
}
"""Parameters no data sheet sets, with why each keeps its R9 Nano value."""


def unknown_preset(name: str) -> str:
    """The one-line complaint about a GPU name that is no preset."""
    return (f"unknown GPU {name!r}: the presets are {', '.join(PRESETS)} "
            "(python -m simulator gpus describes them)")


def datasheet(name: str) -> DataSheet:
    """The data sheet of preset ``name``; ``ConfigError`` naming the presets otherwise."""
    try:
        return PRESETS[name]
    except KeyError:
        raise ConfigError(unknown_preset(name)) from None


def cycles(fact: Fact, clock_mhz: int) -> int:
    """A latency ``fact`` (in cycles or ns) in cycles of a ``clock_mhz`` clock."""
    if fact.unit == "cycles":
        return int(fact.value)
    if fact.unit == "ns":
        return round(fact.value * clock_mhz / 1000)
    raise ValueError(f"a latency is in cycles or ns, not {fact.unit!r}")


def parameters(sheet: DataSheet) -> dict[str, tuple[int, str]]:
    """Each parameter the data sheet sets: dotted key -> (value, how it follows).

    Latencies split the data sheet's load-to-use figures into the model's per-level
    ones, so that a dependent load that hits a level takes the data sheet's time: the
    CU's vector-memory pipeline, then the L1V, then each level below adds its own.
    """
    f = {key: fact.value for key, fact in sheet.facts.items()}
    clock = int(f["clock_mhz"])
    l1, l2, hbm = (cycles(sheet.facts[k], clock)
                   for k in ("latency_l1", "latency_l2", "latency_hbm"))
    issue = R9_NANO["cu"]["vmem_issue_latency"]
    cus, arrays, channels = int(f["compute_units"]), int(f["shader_arrays"]), int(f["l2_channels"])
    if cus % arrays or int(f["l2_bytes"]) % channels:
        raise ValueError(f"{sheet.name}: CUs or L2 bytes do not divide evenly")
    per_channel = f["hbm_gbs"] * 1000 / channels / clock  # GB/s over MHz: bytes per cycle
    same = {"clock_mhz": "clock_mhz", "gpu.shader_arrays": "shader_arrays",
            "cp.launch_overhead": "launch_overhead", "cu.simds": "simds_per_cu",
            "cu.lanes_per_simd": "lanes_per_simd", "cu.wf_slots_per_simd": "wave_slots_per_simd",
            "cu.vgprs_per_simd": "vgprs_per_lane", "cu.vgpr_granularity": "vgpr_granule",
            "cu.sgprs": "sgprs_per_cu", "cu.lds_bytes": "lds_bytes",
            "cu.lds_latency": "lds_latency", "l1v.size_bytes": "l1_bytes", "l1v.ways": "l1_ways",
            "l2.banks": "l2_channels", "l2.ways": "l2_ways",
            "l2.interleave_bytes": "l2_interleave_bytes"}
    out = {key: (int(f[name]), name) for key, name in same.items()}
    out.update({
        "gpu.cus_per_shader_array": (cus // arrays, f"compute_units / shader_arrays = "
                                                    f"{cus} / {arrays}"),
        "l1v.latency": (l1 - issue, f"latency_l1 {l1} - cu.vmem_issue_latency {issue}"),
        "l2.bank_bytes": (int(f["l2_bytes"]) // channels, "l2_bytes / l2_channels"),
        "l2.latency": (l2 - l1, f"latency_l2 {l2} - latency_l1 {l1} (cycles)"),
        "dram.latency": (hbm - l2, f"latency_hbm {hbm} - latency_l2 {l2} (cycles)"),
        "dram.bytes_per_cycle": (round(per_channel),
                                 f"hbm_gbs / l2_channels / clock = {per_channel:.2f}, "
                                 "rounded"),
    })
    return out


def configuration(name: str = DEFAULT) -> dict:
    """The configuration of preset ``name``, validated, with its name under PRESET_KEY."""
    cfg = copy.deepcopy(R9_NANO)
    for key, (value, _how) in parameters(datasheet(name)).items():
        section, _, leaf = key.rpartition(".")
        (cfg[section] if section else cfg)[leaf] = value
    cfg[PRESET_KEY] = name
    return validate(cfg)


def compute_units(cfg: dict) -> int:
    return cfg["gpu"]["shader_arrays"] * cfg["gpu"]["cus_per_shader_array"]


def peak_fp32_tflops(cfg: dict) -> float:
    """FP32 peak of ``cfg`` without packed FP32 (which the model does not issue): CUs x
    SIMDs x lanes x 2 (a fused multiply-add) x clock."""
    c = cfg["cu"]
    return compute_units(cfg) * c["simds"] * c["lanes_per_simd"] * 2 * cfg["clock_mhz"] / 1e6


def vendor_equivalent_tflops(name: str) -> float:
    """The model's FP32 peak counted as the vendor counts it for the whole product (both
    GCDs of an MI250X; packed FP32 where the vendor's figure includes it), to hold
    against ``vendor_fp32_tflops``."""
    sheet = datasheet(name)
    packed = 2 if sheet.vendor_counts_packed else 1
    return peak_fp32_tflops(configuration(name)) * sheet.product_dies * packed


def memory_bandwidth(cfg: dict) -> tuple[float, float]:
    """(configured, reached) memory bandwidth in GB/s: channels x bytes per cycle x clock,
    and what the model moves, a 64 B line per channel every ceil(64 / bytes_per_cycle)
    cycles (memory.py's DRAM channel), until the model takes fractional rates."""
    channels, per_cycle = cfg["l2"]["banks"], cfg["dram"]["bytes_per_cycle"]
    line = cfg["l2"]["line_bytes"]
    configured = channels * per_cycle * cfg["clock_mhz"] / 1000
    reached = channels * line / math.ceil(line / per_cycle) * cfg["clock_mhz"] / 1000
    return configured, reached


def provenance(name: str) -> dict[str, str]:
    """Every parameter of the preset -> where its value comes from, in words."""
    derived = parameters(datasheet(name))
    return {key: derived[key][1] if key in derived else "kept: " + MODEL_DEFAULTS[key]
            for key in flat_config(R9_NANO)}
