"""GPU presets: the timing model's configuration of each data sheet in ``datasheets``.

``configuration("mi300x")`` is a run's base configuration (``--gpu mi300x``; ``--config``
and ``--set`` apply on top). It has the keys of ``config.R9_NANO``, the model's
parameters: each either follows from a figure of the data sheet (``parameters`` says
how, in the model's units: cycles of the preset's clock, bytes, counts) or is one of the
model's own queue and pipeline sizes that no public source gives for these parts
(``MODEL_DEFAULTS``), kept at MGPUSim's R9 Nano values. The preset's name is stored
beside them under ``config.PRESET_KEY``, so a trace says which GPU it simulated.

What the model cannot express is reported, not hidden: the data sheets list the parts
not modelled (128 B lines, the matrix cores, address translation).
"""
import copy

from .config import (
    LINE_BYTES,
    PRESET_KEY,
    R9_NANO,
    ConfigError,
    dram_channels,
    flat_config,
    line_transfer_cycles,
    validate,
)
from .datasheets import DATASHEETS, DataSheet, Fact

PRESETS: dict[str, DataSheet] = {sheet.name: sheet for sheet in DATASHEETS}
"""Every preset by name, the default first."""

DEFAULT = "r9nano"

_QUEUE = ("a queue or buffer size of the model (MGPUSim's R9 Nano value): no public source "
          "gives it for these parts")
_MSHRS = ("MGPUSim's R9 Nano value, which reaches its memory bandwidth; other presets size "
          "their MSHRs for theirs (Little's law)")
_PIPE = ("a pipeline latency or rate of MGPUSim's GCN compute unit, kept for every preset: "
         "no public source gives it for these parts")
_GRANULE = ("an allocation granule of MGPUSim's GCN resource model, kept for every preset: "
            "not checked against the CDNA parts")
_LINE = ("64 B: instruction streams are coalesced into 64 B lines (CDNA 2 and 3 have 128 B "
         "lines: listed as not modelled)")
MODEL_DEFAULTS: dict[str, str] = {
    "cp.wg_dispatch_per_cycle": "the dispatcher's rate (Daisen's case study knob): no public "
                                "figure for these parts",
    "cp.map_buffer": _QUEUE, "cu.vmem_queue": _QUEUE, "l1v.buffer": _QUEUE, "l2.buffer": _QUEUE,
    "l1v.mshrs": _MSHRS, "l2.mshrs": _MSHRS, "mall.mshrs": _MSHRS, "l2.write_buffer": _QUEUE,
    "dram.buffer": _QUEUE,
    "cu.salu_latency": _PIPE, "cu.branch_latency": _PIPE, "cu.vmem_issue_latency": _PIPE,
    "cu.vmem_lines_per_cycle": _PIPE, "l1v.requests_per_cycle": _PIPE,
    "l2.requests_per_cycle": _PIPE,
    "cu.sgpr_granularity": _GRANULE, "cu.lds_granularity": _GRANULE,
    "l1v.line_bytes": _LINE, "l2.line_bytes": _LINE,
    "mall.ways": "16 ways, as the L2's: the Infinity Cache's associativity is not in the "
                 "sources found",
    "mall.requests_per_cycle": "a 64 B line per slice per cycle: on MI300, 128 slices x "
                               "64 B x 2.1 GHz = 17.2 TB/s, Wahlgren et al.'s peak",
    "mall.buffer": _QUEUE, "mall.write_buffer": _QUEUE,
    "dram.interleave_bytes": "0: blocks of the L2's interleave go to consecutive memory "
                             "channels; the memory interleave is not in the sources found",
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
    l1, l2, mall, hbm = (cycles(sheet.facts[k], clock)
                         for k in ("latency_l1", "latency_l2", "latency_mall", "latency_hbm"))
    issue = R9_NANO["cu"]["vmem_issue_latency"]
    cus, arrays, xcds = int(f["compute_units"]), int(f["shader_arrays"]), int(f["xcds"])
    l2_channels, memory = int(f["l2_channels"]), int(f["hbm_channels"])
    if cus % arrays or cus % xcds or l2_channels % xcds or int(f["l2_bytes"]) % l2_channels \
            or int(f["mall_bytes"]) % memory:
        raise ValueError(f"{sheet.name}: CUs, L2 or memory-side cache do not divide evenly")
    per_channel = f["hbm_gbs"] * 1000 / memory / clock  # GB/s over MHz: bytes per cycle
    same = {"clock_mhz": "clock_mhz", "gpu.shader_arrays": "shader_arrays", "gpu.xcds": "xcds",
            "gpu.address_hash": "address_hash",
            "cu.simds": "simds_per_cu",
            "cu.lanes_per_simd": "lanes_per_simd", "cu.wf_slots_per_simd": "wave_slots_per_simd",
            "cu.vgprs_per_simd": "vgprs_per_lane", "cu.vgpr_granularity": "vgpr_granule",
            "cu.sgprs": "sgprs_per_cu", "cu.lds_bytes": "lds_bytes",
            "cu.lds_latency": "lds_latency", "l1v.size_bytes": "l1_bytes", "l1v.ways": "l1_ways",
            "l2.ways": "l2_ways", "l2.interleave_bytes": "l2_interleave_bytes"}
    out = {key: (int(f[name]), name) for key, name in same.items()}
    launch = cycles(sheet.facts["launch_overhead"], clock)
    out["cp.launch_overhead"] = (launch, f"launch_overhead ({launch} cycles)")
    out["dram.channels"] = ((0, f"0: one per L2 bank, as hbm_channels = {memory}")
                            if memory == l2_channels // xcds else (memory, "hbm_channels"))
    above = mall if f["mall_bytes"] else l2  # load-to-use latency of the level above memory
    out.update({
        "mall.slice_bytes": (int(f["mall_bytes"]) // memory, "mall_bytes / hbm_channels"),
        "mall.latency": ((mall - l2, f"latency_mall {mall} - latency_l2 {l2} (cycles)")
                         if f["mall_bytes"] else (0, "no memory-side cache")),
    })
    out.update({
        "gpu.cus_per_shader_array": (cus // arrays, f"compute_units / shader_arrays = "
                                                    f"{cus} / {arrays}"),
        "l1v.latency": (l1 - issue, f"latency_l1 {l1} - cu.vmem_issue_latency {issue}"),
        "l2.banks": (l2_channels // xcds, f"l2_channels / xcds = {l2_channels} / {xcds}"),
        "l2.bank_bytes": (int(f["l2_bytes"]) // l2_channels, "l2_bytes / l2_channels"),
        "l2.latency": (l2 - l1, f"latency_l2 {l2} - latency_l1 {l1} (cycles)"),
        "dram.latency": (hbm - above, f"latency_hbm {hbm} - latency_"
                                      f"{'mall' if f['mall_bytes'] else 'l2'} {above} (cycles)"),
        "dram.bytes_per_cycle": (round(per_channel, 2),
                                 f"hbm_gbs / hbm_channels / clock = {per_channel:.4f}, to "
                                 "two decimals"),
    })
    if sheet.queues_sourced:
        return out
    # Little's law: to keep memory busy, the lines in flight must cover its bandwidth
    # times the time each waits for it. Each level's misses hold an MSHR that long, so
    # each level gets registers for its share of that product, at twice the unloaded
    # wait: a memory kept busy queues requests about as long again.
    lines_per_cycle = memory * round(per_channel, 2) / LINE_BYTES
    holders = [("l1v", cus, "l1", l1), ("l2", l2_channels, "l2", l2)]
    if f["mall_bytes"]:
        holders.append(("mall", memory, "mall", mall))
    for section, units, level, held_from in holders:
        floor = R9_NANO[section]["mshrs"]
        wanted = 2 * lines_per_cycle * (hbm - held_from) / units
        out[f"{section}.mshrs"] = (
            max(floor, _power_of_two_above(wanted)),
            f"Little's law: {lines_per_cycle:.1f} lines per cycle x 2 x (latency_hbm - "
            f"latency_{level}) {hbm - held_from} cycles / {units} = {wanted:.0f}, the power "
            f"of two above, at least {floor} (MGPUSim)")
    return out


def _power_of_two_above(value: float) -> int:
    """The least power of two not below ``value``."""
    power = 1
    while power < value:
        power *= 2
    return power


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


def memory_bandwidth(cfg: dict) -> float:
    """Memory bandwidth in GB/s: channels x bytes per cycle x clock, which the model's
    memory channels reach exactly (``config.line_transfer_cycles``)."""
    line_cycles = line_transfer_cycles(cfg)
    return float(dram_channels(cfg) * LINE_BYTES / line_cycles * cfg["clock_mhz"] / 1000)


def provenance(name: str) -> dict[str, str]:
    """Every parameter of the preset -> where its value comes from, in words."""
    derived = parameters(datasheet(name))
    return {key: derived[key][1] if key in derived else "kept: " + MODEL_DEFAULTS[key]
            for key in flat_config(R9_NANO)}
