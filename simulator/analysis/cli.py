"""The ``analyze`` command: ``python -m simulator analyze TRACE [--kernel N] [--window T0:T1]``.

Prints the findings of a simulator trace, most time explained first, each with its
numbers, definition, threshold and the views that show it; ``--json`` prints the whole
report (``report.analyze``). Failures are one-line ``TraceError``/``InputError``s,
printed by ```simulator.__main__``.
"""
from __future__ import annotations

import argparse
import json
from dataclasses import fields
from pathlib import Path

from ..user_input import InputError, integer, positive_argument
from .thresholds import Thresholds

DESCRIPTION = """\
Explain why the kernels of a simulator trace take the time they take. For each launch
(or the one --kernel names, cut to --window):
  S1  time budget: launch, ramp, steady, tail; waves per CU
  S2  CPI stack per CU (MGPUSim's priority rule; stalled apart from idle)
  S3  wavefront stall breakdown
  S4  memory latency by hop: queue and service at L1V, L2, DRAM, by cache outcome
  S5  buffers ranked by the time requests waited in them
  S6  imbalance across peers (CUs, L2 banks, DRAM channels), naming the hot one
  S7  speed of light per unit, classified by Nsight Compute's 80/60/10 % rule
  S8  hierarchical roofline (VALU work over L1V, L2, DRAM and LDS bytes)
  S9  critical path through the launch, by class and component
  S10 CU idle by cause, and the time the dispatcher set the pace
  S11 the distribution of memory latencies, with their outliers
  S12 kernel hints: divergence, LDS bank conflicts
  S13 with --what-if: the limiting parameter halved and doubled, re-simulated
Then the findings, ranked by the launch time they explain, each with its definition,
threshold and evidence (the app's views to open; the Findings page shows them).
Every attribution sums to its window to the picosecond.

What the analyses need from the trace (python -m simulator run --trace-level):
  S1, S10          wg    (MapWGReq and work-group tasks)
  S2, S3, S9       inst  (wavefront and instruction tasks; S2, S9 use mem when present)
  S4, S5, S6, S11  mem   (the requests at every level)
  S7               inst for the compute units, mem for L1V/L2/DRAM
  S8               mem, and a trace of format 3 (VALU lanes per launch)
  S12              the kernel records (not --no-instrument for divergence)
The default level, all, records everything. An analysis the trace cannot support says
what it needs and gives no finding.

An imported profile (PyTorch/Kineto, Nsight Systems) is explained per device by I1-I14
(why-layer.md 9.2: time budget, gaps, idle causes, launches, CUDA rules, kernels,
queues, overlap, critical path, ranges projected onto the GPU, the pace of its
iterations: profiler steps, or the range or kernel --pace names; speed of light where
GPU counters were recorded, "needs counters" otherwise), whole or cut to
--window, or to the GPU work of one NVTX range or annotation (--range) or profiler
step (--step).
"""


def parse_window(text: str) -> tuple[int, int]:
    """``T0:T1`` in integer ps, T0 < T1."""
    start, sep, end = text.partition(":")
    try:
        if not sep:
            raise InputError("expected T0:T1")
        bounds = integer(start), integer(end)
    except InputError:
        raise argparse.ArgumentTypeError(
            f"expected T0:T1 in integer picoseconds, such as 1600000:3648000, got {text!r}") from None
    if bounds[1] <= bounds[0]:
        raise argparse.ArgumentTypeError(f"the window ends before it starts: {text!r}")
    return bounds


def _share(text: str) -> float:
    """A threshold that is a share, in (0, 1]."""
    try:
        value = float(text)
    except ValueError:
        value = None
    if value is None or not 0 < value <= 1:
        raise argparse.ArgumentTypeError(f"expected a share in (0, 1], got {text!r}")
    return value


def _step(text: str) -> int:
    """A profiler step's number, 0 or more."""
    try:
        value = integer(text)
    except InputError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a step number (0 or more), got {text!r}")
    return value


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "analyze", help="explain why a simulated run is slow: findings with evidence",
        description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("trace", help="a simulator trace (.sqlite)")
    p.add_argument("--kernel", type=int, metavar="N", help="analyze launch N only (0 is the first)")
    p.add_argument("--window", type=parse_window, metavar="T0:T1",
                   help="analyze [T0, T1) only, in ps (the launches it overlaps, cut to it)")
    ranged = p.add_mutually_exclusive_group()
    ranged.add_argument("--range", metavar="NAME[#k]", dest="range_name",
                        help="an imported profile: analyze the GPU work of one NVTX range or"
                             " annotation (its projection onto the GPU); NAME#k is the k-th"
                             " of the ranges called NAME, 0 the first")
    ranged.add_argument("--step", type=_step, metavar="N",
                        help="an imported profile: analyze the GPU work of profiler step N"
                             " (ProfilerStep#N)")
    p.add_argument("--pace", metavar="NAME", dest="pace_of",
                   help="an imported profile: the pace of the iterations whose instances of"
                        " the range or kernel NAME delimit (default: the profiler steps)")
    p.add_argument("--json", action="store_true", help="print the whole report as JSON")
    p.add_argument("--what-if", action="store_true",
                   help="re-simulate each launch with its limiting parameter halved and doubled"
                        " (python -m simulator sweep, into --what-if-dir) and measure the speed-up")
    p.add_argument("--what-if-dir", metavar="DIR",
                   help="where the what-if runs go (default: TRACE.what-if beside the trace);"
                        " runs already there are reused")
    p.add_argument("--critical-path-out", metavar="FILE.json",
                   help="write the launches' tasks (an imported profile: all of it) as Chrome"
                        " JSON (Perfetto) with their critical paths overlaid as HTA does:"
                        " args.critical = 1 and critical_path flows")
    p.add_argument("--force", action="store_true", help="replace an existing --critical-path-out")
    p.add_argument("--like-hta", action="store_true",
                   help="an imported profile: read it as HolisticTraceAnalysis does (leave out"
                        " the last profiler step, round times inward to whole µs) so the"
                        " figures can be held against HTA's; the default is exact and whole")
    thresholds = p.add_argument_group("thresholds")
    for field in fields(Thresholds):
        thresholds.add_argument(f"--{field.name.replace('_', '-')}", dest=field.name,
                                type=positive_argument if field.type == "int" else _share,
                                default=field.default,
                                help=f"{field.metadata['help']} (default {field.default})")
    p.set_defaults(func=_analyze)


def _analyze(args) -> int:
    from .report import analyze

    thresholds = Thresholds(**{f.name: getattr(args, f.name) for f in fields(Thresholds)})
    directory = None
    if args.what_if:
        directory = Path(args.what_if_dir or f"{args.trace}.what-if")
    if args.range_name is not None or args.step is not None or args.pace_of is not None:
        report = _analyze_profile(args, thresholds)
    else:
        report = analyze(args.trace, kernel=args.kernel, window=args.window,
                         thresholds=thresholds, what_if=directory, like_hta=args.like_hta)
    if args.critical_path_out:
        _export_critical_path(args)
    if args.json:
        print(json.dumps(report, indent=1))
    else:
        print(render(report))
    return 0


def _analyze_profile(args, thresholds: Thresholds) -> dict:
    """The profile analyses cut to one range or profiler step, or with the pace of a
    named range or kernel (a simulator trace has neither)."""
    from .profile.report import analyze_profile
    from .profile.trace import trace_source

    flag = ("--range" if args.range_name is not None else "--step" if args.step is not None
            else "--pace")
    if flag != "--pace" and (args.kernel is not None or args.window is not None):
        raise InputError(f"{flag} names the window itself: leave out --kernel and --window")
    if trace_source(args.trace) == "simulator":
        raise InputError(f"{args.trace}: {flag} reads an imported profile's ranges; a"
                         " simulator trace has none (use --kernel or --window)")
    return analyze_profile(args.trace, window=args.window, thresholds=thresholds,
                           like_hta=args.like_hta, range_name=args.range_name, step=args.step,
                           pace_of=args.pace_of)


def _export_critical_path(args) -> None:
    from .critical_path import export_path
    from .profile import critical_path as profile_path
    from .profile.trace import trace_source
    from .report import select_kernels
    from .trace import Trace

    if trace_source(args.trace) != "simulator":
        profile_path.export_path(args.trace, Path(args.critical_path_out), args.like_hta,
                                 args.kernel_kernel_delay_us, args.force)
        return
    with Trace(args.trace) as trace:
        kernels = select_kernels(trace.kernels(), args.kernel, args.window, trace.path)
        export_path(trace, kernels, Path(args.critical_path_out), args.force)


def _us(ps: int) -> str:
    return f"{ps / 1e6:,.3f} µs"


def _evidence(item: dict) -> str:
    view = item["view"]
    if view == "compare":
        return f"compare {item['a']} with {item['b']}"
    if view == "kernel":
        return f"kernel page, launch {item['launch']}" + (f" line {item['line']}" if item["line"] else "")
    if view == "overview":
        where = f"filter {item['filter']!r}"
    elif view == "task":
        where = f"task {item['task']} at {item['loc']}"
    else:
        where = item["loc"]
    return f"{view} {where} [{item['t0']}, {item['t1']}) ps"


def _device_line(d: dict) -> str:
    """A device's time budget (I1)."""
    return (f"GPU {d['device']}: {_us(d['span_ps'])} from its first operation to its last;"
            f" compute {_us(d['compute_ps'])}, non-compute {_us(d['non_compute_ps'])}, idle"
            f" {_us(d['idle_ps'])}; copy-only {_us(d['copy_only_ps'])}")


def _ranges_lines(projection: dict) -> list[str]:
    """I11: the range names whose GPU work lasts longest, projected onto the GPU."""
    if "unavailable" in projection:
        return [f"ranges (I11): {projection['unavailable']}"]
    names = projection["names"]
    lines = [f"{len(projection['ranges'])} ranges of {len(names)} names, projected onto the"
             " GPU (I11); the most GPU time:"]
    for n in names[:5]:
        lines.append(f"  {n['name'][:80]}: {n['instances']} instances, {_us(n['proj_total_ps'])} on the"
                     f" GPU ({n['gpu_ops']} operations), {_us(n['range_total_ps'])} on the CPU")
    return lines


def _pace_line(p: dict) -> str:
    """I12: the iterations' pace and whether it jitters."""
    if "unavailable" in p:
        return f"pace (I12): {p['unavailable']}"
    return (f"pace (I12): {p['count']} iterations of {p['subject'][:80]}, one every"
            f" {_us(p['median_delta_ps'])} (median), CV {p['cv']:.3f}"
            + (" (jitter)" if p["jitter"] else ""))


def _sol_lines(sol: dict) -> list[str]:
    """I14: each kernel's verdict from its GPU counters, or what the profile lacks."""
    if "unavailable" in sol:
        return [f"speed of light (I14): {sol['unavailable']}"]
    return [f"speed of light (I14), {k['name'][:80]} on GPU {k['device']}: {k['kind']} (SM"
            f" {k['compute_sol']:.0%}, memory {k['memory_sol']:.0%} of peak)"
            for k in sol["kernels"][:5]]


def render(report: dict) -> str:
    """The report as text: one line per launch (per device for a profile), then the
    ranked findings."""
    lines = [_device_line(d) for d in report.get("devices", [])]
    if report.get("scope"):
        s = report["scope"]
        lines.insert(0, f"{s['range']} on {s['thread']}: its GPU work, [{s['t0']}, {s['t1']}) ps"
                        f" ({s['gpu_ops']} operations it launched), the window analyzed")
    if "devices" in report:
        lines += _ranges_lines(report["analyses"]["nvtx-projection"])
        lines.append(_pace_line(report["analyses"]["pace"]))
        lines += _sol_lines(report["analyses"]["speed-of-light"])
    for k in report["kernels"] if "devices" not in report else []:
        head = f"launch {k['launch']} {k['name']}: {_us(k['time_ps'])}"
        b = k["budget"]
        if "unavailable" not in b:
            head += (f"; launch {_us(b['launch_ps'])}, ramp {_us(b['ramp_ps'])}, steady"
                     f" {_us(b['steady_ps'])}, tail {_us(b['tail_ps'])}; {b['waves_per_cu']} waves/CU")
        c = k["classification"]
        if c:
            head += f"; {c['kind']}" + (f" ({c['unit']})" if c["unit"] else "")
        lines.append(head)
        for name in ("budget", "cpi_stack", "stalls", "sol", "critical_path", "cu_idle", "hints"):
            if isinstance(k[name], dict) and "unavailable" in k[name]:
                lines.append(f"  {name}: {k[name]['unavailable']}")
    findings = report["findings"]
    lines.append(f"\n{len(findings)} findings, most launch time explained first:" if findings
                 else "\nno findings above their thresholds")
    for i, f in enumerate(findings, 1):
        where = (f"launch {f['kernel']}" if f["kernel"] is not None
                 else f"GPU {f['device']}" if f["device"] is not None else "the profile")
        lines.append(f"{i:3}. [{f['rule']}] {where}, explains {_us(f['explains_ps'])}:"
                     f" {f['message']}")
        lines += [f"       see {_evidence(e)}" for e in f["evidence"]]
    return "\n".join(lines)
