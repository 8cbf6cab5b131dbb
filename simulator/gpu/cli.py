"""The ``gpus`` command: the GPU presets and their data sheets, with sources.

    python -m simulator gpus              one line per preset
    python -m simulator gpus mi300x       the whole data sheet, the configuration it gives,
                                          what is not modelled yet, and the sources
    python -m simulator gpus --markdown   all of it as docs/gpus.md
"""
import sys

from .config import dram_channels, flat_config, line_transfer_cycles
from .datasheets import ASSUMED, DERIVED, FACTS, SOURCES, DataSheet, Fact
from .presets import (
    PRESETS,
    configuration,
    datasheet,
    memory_bandwidth,
    peak_fp32_tflops,
    provenance,
    unknown_preset,
    vendor_equivalent_tflops,
)

PEAK_RULE = ("peak FP32 = CUs x 4 SIMDs x 16 lanes x 2 (a fused multiply-add) x clock, without "
             "packed FP32, which the model does not issue; CDNA 2 and CDNA 3 reach twice that "
             "with packed FP32 (the figure in brackets)")


def register(subparsers):
    p = subparsers.add_parser(
        "gpus", help="list the GPU presets (--gpu NAME) or show one's data sheet",
        description="List the GPU presets that run, run-kernel and sweep take as --gpu NAME, "
                    "or show one preset's data sheet: every figure with its public source, the "
                    "configuration it gives the timing model, and what is not modelled yet.")
    p.add_argument("name", nargs="?", help="a preset to describe in full")
    p.add_argument("--markdown", action="store_true",
                   help="print every data sheet as Markdown (the text of docs/gpus.md)")
    p.set_defaults(func=_gpus)


def _gpus(args):
    if args.markdown:
        print(markdown(), end="")
    elif args.name is None:
        print(listing())
    elif args.name not in PRESETS:
        print(f"error: {unknown_preset(args.name)}", file=sys.stderr)
        return 2
    else:
        print(describe(args.name))
    return 0


def _bytes(value: float) -> str:
    for unit, size in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if value >= size and value % size == 0:
            return f"{value // size:,.0f} {unit}"
    return f"{value:,.0f} bytes"


def value_text(fact: Fact) -> str:
    """A figure with its unit: ``32 KiB``, ``2,100 MHz``, ``1,228.8 GB/s``."""
    if fact.unit == "bytes":
        return _bytes(fact.value)
    number = f"{fact.value:,.0f}" if fact.value == int(fact.value) else f"{fact.value:,}"
    return f"{number} {fact.unit}".rstrip()


def source_text(fact: Fact) -> str:
    """Where a figure is from, in one line: ``[key] note`` or ``assumed: why``."""
    if fact.source in (ASSUMED, DERIVED):
        return f"{fact.source}: {fact.note}"
    return f"[{fact.source}]" + (f" {fact.note}" if fact.note else "")


def _summary(name: str) -> tuple[str, ...]:
    sheet = datasheet(name)
    cfg = configuration(name)
    f = sheet.facts
    peak = peak_fp32_tflops(cfg)
    packed = f" ({2 * peak:.1f})" if sheet.packed_fp32.value else ""
    return (name, sheet.title, f"{f['compute_units'].value:,.0f}",
            f"{cfg['clock_mhz']:,} MHz",
            f"{_bytes(f['l2_bytes'].value)} in {f['l2_channels'].value:.0f} channels",
            f"{f['hbm_gbs'].value:,.0f} GB/s", f"{peak:.1f}{packed} TFLOPS")


HEADINGS = ("name", "GPU", "CUs", "clock", "L2", "memory", "peak FP32")


def listing() -> str:
    """One line per preset: CUs, clock, L2, memory bandwidth and peak FP32."""
    rows = [HEADINGS, *(_summary(name) for name in PRESETS)]
    width = [max(len(row[i]) for row in rows) for i in range(len(HEADINGS))]
    lines = ["  ".join(cell.rjust(w) if 2 <= i != 4 else cell.ljust(w)
                       for i, (cell, w) in enumerate(zip(row, width))).rstrip()
             for row in rows]
    return "\n".join([*lines, "", PEAK_RULE + ".",
                      "`gpus NAME` shows a preset's data sheet with its sources; --gpu NAME "
                      "simulates it (run, run-kernel, sweep)."])


def _cited(sheet: DataSheet) -> list[str]:
    facts = [*sheet.facts.values(), *sheet.not_modelled.values(), sheet.vendor_fp32_tflops,
             sheet.packed_fp32]
    return sorted({fact.source for fact in facts if fact.source in SOURCES}, key=list(SOURCES).index)


def _peak_lines(name: str) -> list[str]:
    sheet = datasheet(name)
    cfg = configuration(name)
    vendor = sheet.vendor_fp32_tflops
    counted = ("with packed FP32" if sheet.vendor_counts_packed else "without packed FP32") + \
        (f", {sheet.product_dies} dies" if sheet.product_dies > 1 else "")
    transfer = line_transfer_cycles(cfg)
    return [
        f"FP32: {peak_fp32_tflops(cfg):.1f} TFLOPS as modelled; counted as the vendor counts "
        f"it ({counted}) {vendor_equivalent_tflops(name):.1f}, against the vendor's "
        f"{value_text(vendor)} {source_text(vendor)}",
        f"memory: {memory_bandwidth(cfg):,.0f} GB/s as modelled "
        f"({value_text(sheet.facts['hbm_gbs'])} in the data sheet): {dram_channels(cfg)} "
        f"channels, each moving a 64 B line every {transfer} = {float(transfer):.3f} cycles",
    ]


def describe(name: str) -> str:
    """The whole data sheet of preset ``name`` as text."""
    sheet = datasheet(name)
    flat = flat_config(configuration(name))
    out = [f"{name}: {sheet.title}, {sheet.architecture}", "", "Data sheet"]
    out += [f"  {key:<22} {value_text(sheet.facts[key]):<15} {source_text(sheet.facts[key])}"
            for key in FACTS]
    out += ["", f"Configuration (--gpu {name}; --config and --set apply on top)"]
    out += [f"  {key:<26} {flat[key]:>8}  {how}" for key, how in provenance(name).items()]
    out += ["", "Peaks", *(f"  {line}" for line in _peak_lines(name))]
    out += ["", "Not modelled yet"]
    out += [f"  {key:<26} {value_text(fact):<14} {source_text(fact)}"
            for key, fact in sheet.not_modelled.items()]
    out += ["", "Sources"]
    out += [f"  [{key}] {SOURCES[key].title}\n      {SOURCES[key].url}" for key in _cited(sheet)]
    return "\n".join(out)


def _md_source(fact: Fact) -> str:
    if fact.source in (ASSUMED, DERIVED):
        return f"*{fact.source}*: {fact.note}"
    return f"[{fact.source}]" + (f": {fact.note}" if fact.note else "")


def _md_table(headings, rows) -> list[str]:
    cells = [[str(c).replace("|", "\\|") for c in row] for row in rows]
    return [f"| {' | '.join(headings)} |", f"|{'---|' * len(headings)}",
            *(f"| {' | '.join(row)} |" for row in cells), ""]


MARKDOWN_INTRO = """\
# GPU presets

`--gpu NAME` on `run`, `run-kernel` and `sweep` (and the GPU picker beside the kernel page's
Run button) makes a preset the base configuration of a run; `--config FILE` and `--set
KEY=VALUE` still apply on top. The trace stores the preset's name beside the full
configuration (`run.config`, key `preset`), and the Traces page shows which GPU a run
simulated. `python -m simulator gpus` lists the presets, `python -m simulator gpus NAME`
prints one data sheet; this page is `python -m simulator gpus --markdown`, and a test
keeps it equal to the code (`simulator/gpu/datasheets.py`, `simulator/gpu/presets.py`).

Every figure has its public source, or says *assumed* or *derived* and why. A preset is
never tuned to measured kernel times: it is checked against them.

## What is modelled

The model's parameters, from each data sheet: CUs (grouped into the arrays the trace
names them by), the clock (any whole MHz), SIMDs, lanes, wavefront slots, VGPRs and their
allocation granule, SGPRs, LDS and its latency, the vector L1 (size, ways, latency), the L2
(channels, size per channel, ways, interleave, latency), one L2 per XCD on MI300A/X (each
CU on its XCD's, work-groups dealt to the XCDs in turn), the Infinity Cache (a memory-side
cache slice in front of each memory channel, shared by every L2), address hashing across
channels and cache sets where AMD describes it, memory (channels, latency, bytes per cycle
per channel = bandwidth / channels / clock, a fraction the model keeps exactly) and the
launch overhead. Latencies in a data sheet are load-to-use times of a dependent load that
hits at that level (what a pointer chase measures); the model's per-level latencies are
their differences, less the compute unit's 6-cycle vector-memory pipeline at the L1. The
MSHRs of the CDNA presets cover their memory's bandwidth times its latency (Little's
law); the model's other queue sizes and pipeline rates, which no public source gives,
keep MGPUSim's R9 Nano values.

## What is not modelled yet

Each data sheet lists its parts the model lacks, as facts with sources. Across the CDNA
presets they are: 128 B cache lines (CDNA 2 and 3), packed FP32, the matrix cores,
address translation (TLBs), cross-XCD coherence costs and the scalar memory path.

"""


def markdown() -> str:
    """Every data sheet as Markdown: the text of docs/gpus.md."""
    out = [MARKDOWN_INTRO, "## The presets", ""]
    out += _md_table(HEADINGS, [_summary(name) for name in PRESETS])
    out += [PEAK_RULE + ".", ""]
    for name in PRESETS:
        sheet = datasheet(name)
        cfg = flat_config(configuration(name))
        out += [f"## {name}: {sheet.title}", "", f"{sheet.architecture}.", "", "### Data sheet",
                ""]
        out += _md_table(("figure", "value", "source"),
                         [(key, value_text(sheet.facts[key]), _md_source(sheet.facts[key]))
                          for key in FACTS])
        out += ["### Configuration", ""]
        out += _md_table(("parameter", "value", "from"),
                         [(key, cfg[key], how) for key, how in provenance(name).items()])
        out += ["### Peaks", "", *(f"- {line}" for line in _peak_lines(name)), ""]
        out += ["### Not modelled yet", ""]
        out += _md_table(("fact", "value", "source"),
                         [(key, value_text(fact), _md_source(fact))
                          for key, fact in sheet.not_modelled.items()])
        out += ["### Sources", ""]
        out += [f"- [{key}] {SOURCES[key].title}" for key in _cited(sheet)]
        out += [""]
    # every source's address once, as a Markdown link reference: the tables cite [key]
    out += [f"[{key}]: {source.url}" for key, source in SOURCES.items()]
    return "\n".join(out) + "\n"

