"""The ``run`` command: ``python -m simulator run WORKLOAD [options] -o TRACE.sqlite``."""
import argparse
import sys

from ..gpu.config import ConfigError, apply_overrides, load_config_file
from ..gpu.presets import DEFAULT, PRESETS, configuration, unknown_preset
from ..gpu.run import SimulationInterrupted
from ..gpu.trace_vocabulary import LEVELS, TraceLevelError, parse_trace_level
from ..kernels.diagnostics import KernelError
from ..kernels.records import KernelRecorder
from ..tracing.cli import command_line
from ..tracing.outputs import announce_interrupted, prepare_output
from ..user_input import InputError, int_argument, integer, positive_argument
from ..workloads import WORKLOADS
from .records import simulate_with_records


def parse_window(text):
    """``START:END`` in cycles, either side may be empty: ``1000:``, ``:5000``."""
    start, sep, end = text.partition(":")
    if not sep:
        raise argparse.ArgumentTypeError(f"expected START:END in cycles, got {text!r}")
    try:
        bounds = tuple(integer(v) if v.strip() else None for v in (start, end))
    except InputError:
        raise argparse.ArgumentTypeError(
            f"window bounds must be integers in ASCII digits (cycles): {text!r}") from None
    if None not in bounds and bounds[1] <= bounds[0]:
        raise argparse.ArgumentTypeError(f"the window ends before it starts: {text!r}")
    return bounds


def preset_name(text):
    """``--gpu``'s value: the name of a preset (``python -m simulator gpus``)."""
    if text not in PRESETS:
        raise argparse.ArgumentTypeError(unknown_preset(text))
    return text


def register(subparsers):
    p = subparsers.add_parser(
        "run", help="simulate a workload on the GPU model into a trace",
        description="Simulate a workload's kernels on the GPU timing model (an R9 Nano unless "
                    "--gpu names another preset) and write every task into an SQLite trace. Each "
                    "workload adds its own options; see `run WORKLOAD --help`.")
    sub = p.add_subparsers(dest="workload", metavar="WORKLOAD", required=True)
    for name, cls in WORKLOADS.items():
        w = sub.add_parser(name, help=(cls.__doc__ or name).strip().splitlines()[0])
        add_common_arguments(w)
        w.add_argument("--no-instrument", action="store_true",
                       help="record no Klein kernel records (watched accesses, branches, emits)")
        cls.add_arguments(w)
        w.set_defaults(func=_run, workload_class=cls)


def add_common_arguments(p, output=None, force=True):
    """The options every run shares; ``output`` replaces the keywords of ``-o``; ``force``
    adds ``--force`` (a sweep has none: it resumes in its own directory)."""
    p.add_argument("-o", "--output", **(output or {
        "help": "trace file to write (.sqlite); omit to run untraced"}))
    p.add_argument("--gpu", type=preset_name, default=DEFAULT, metavar="NAME",
                   help=f"the GPU to simulate: a preset, one of {', '.join(PRESETS)} (default "
                        f"{DEFAULT}; `python -m simulator gpus` describes them); --config and "
                        "--set apply on top")
    p.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                   help="override a configuration parameter, such as l2.banks=8 (repeatable)")
    p.add_argument("--config", help="JSON file of configuration overrides, applied over the "
                                    "preset and before --set")
    p.add_argument("--dispatch-rate", type=positive_argument, metavar="N",
                   help="work-groups dispatched per cycle (same as --set cp.wg_dispatch_per_cycle=N)")
    p.add_argument("--trace-level", default="all",
                   help=f"detail to record: one of {', '.join(LEVELS)} (cumulative), a "
                        "comma-separated set such as kernel,mem, all (default) or off")
    p.add_argument("--window", type=parse_window, metavar="START:END",
                   help="record only tasks overlapping this range of cycles")
    p.add_argument("--seed", type=int_argument, default=0,
                   help="random seed of the workload's data (default 0)")
    p.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    p.add_argument("--note", metavar="TEXT",
                   help="one line saying what the run is for, kept in the trace (a sweep's in"
                        " its sweep.json) and shown on the app's Traces page")
    if force:
        p.add_argument("--force", action="store_true",
                       help="replace the output if it exists (it is never one of the inputs)")


def prepare_trace_output(args, inputs=()):
    """Refuse an output the run must not write (see ``tracing.outputs``), and name what
    an interrupted run left there."""
    if args.output is None:
        return
    prepare_output(args.output, [args.config, *inputs], force=args.force)
    announce_interrupted(args.output)


def build_config(args):
    """The run's configuration: the ``--gpu`` preset, then ``--config``, then ``--set``
    (and ``--dispatch-rate``); the preset's name stays in it (``config.PRESET_KEY``).
    ``args`` made by hand may lack ``gpu``: the default preset."""
    cfg = configuration(getattr(args, "gpu", None) or DEFAULT)
    if args.config:
        cfg = load_config_file(args.config, cfg)
    overrides = list(args.overrides)
    if args.dispatch_rate is not None:
        overrides.append(f"cp.wg_dispatch_per_cycle={args.dispatch_rate}")
    return apply_overrides(cfg, overrides)


def _workload_options(args, cls):
    probe = argparse.ArgumentParser(add_help=False)
    cls.add_arguments(probe)
    return {a.dest: getattr(args, a.dest) for a in probe._actions if a.dest != "help"}


def _run(args):
    try:
        cfg = build_config(args)
        parse_trace_level(args.trace_level)
    except (ConfigError, TraceLevelError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    prepare_trace_output(args)
    command = command_line()
    try:
        workload = args.workload_class(seed=args.seed,
                                       **_workload_options(args, args.workload_class))
        # the kernel records (Klein's views) go into the same trace file
        recorder = KernelRecorder(instrument=not args.no_instrument)
        result = simulate_with_records(workload, cfg, args.output, recorder,
                                       trace_level=args.trace_level, window=args.window,
                                       progress=not args.no_progress, command=command,
                                       seed=args.seed, note=args.note)
    except (ValueError, KernelError) as exc:
        # sizes the workload refuses, a work-group the model cannot place, a kernel error
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except SimulationInterrupted as stop:
        _report(stop.result)
        if stop.result.trace_path:
            print(f"interrupted: {stop.result.trace_path} is a valid trace marked incomplete",
                  file=sys.stderr)
        return 130
    _report(result)
    try:
        workload.check()
    except AssertionError as exc:
        print(f"error: the kernels computed a wrong result: {exc}", file=sys.stderr)
        return 1
    print("results match the numpy reference")
    return 0


def _report(result):
    ns = result.simulated_ps / 1000
    print(f"simulated time  {ns / 1000:,.3f} us ({result.cycles:,} cycles)")
    for name, cycles in result.kernels:
        print(f"  kernel {name}: {cycles:,} cycles")
    stats = result.stats
    if stats:
        print(f"instructions    {stats['instructions']:,}   L1V hits/misses "
              f"{stats['l1v_hits']:,}/{stats['l1v_misses']:,}   L2 hits/misses "
              f"{stats['l2_hits']:,}/{stats['l2_misses']:,}   DRAM requests {stats['dram_requests']:,}")
        if stats["dram_requests"] != stats["l2_misses"]:
            print("                (DRAM requests are the L2's line fetches for its read misses plus\n"
                  "                its write-backs of evicted dirty lines: a store miss allocates its\n"
                  "                line in the L2 without a fetch, and lines still dirty at the end are\n"
                  "                not written back; the L1V never keeps a store, so every store misses)")
    # The headline is what the user waited for: until the trace opens, finalize included.
    print(f"wall time       {result.total_seconds:.2f} s "
          f"({result.functional_seconds:.2f} s executing kernels on real data, "
          f"{result.timing_seconds:.2f} s timing model and trace, "
          f"{result.finalize_seconds:.2f} s finalize)")
    print(f"timing model    {result.events_per_second:,.0f} events/s, {result.tasks_per_second:,.0f} "
          f"tasks/s ({result.events:,} events, {result.tasks:,} tasks)")
    if result.trace_path:
        print(f"trace           {result.trace_path}")
