"""The ``sweep`` command: one workload over the cross product of varied parameters.

    python -m simulator sweep pagerank --nodes 1024 --vary cp.wg_dispatch_per_cycle=1,2 \\
        --vary l2.banks=8,16 --seeds 2 --scheduler processes --workers 2 -o traces/pr-sweep
"""
import argparse
import sys
from pathlib import Path

from ..gpu.config import ConfigError
from ..gpu.trace_vocabulary import TraceLevelError, parse_trace_level
from ..user_input import positive_argument
from ..workloads import WORKLOADS
from .sweep import SUMMARY, Sweep, SweepError, parse_vary, prepare
from .sweep_point import option_names
from .sweep_schedule import add_scheduler_arguments, check_scheduler, run_sweep
from .workload_cli import _workload_options, add_common_arguments, build_config

DESCRIPTION = """\
Run a workload once per point of the cross product of the --vary values, each
point into its own trace in DIR, and write DIR/summary.csv: one row per point with
its varied values, simulated_time_ps, kernel count, busy fractions of the CU, SIMD,
L1V, L2 and DRAM groups, L1V and L2 hit rates, instructions, the trace's file name,
status (ok or failed), error and wall_s. A point that fails (a value the model
refuses, a kernel error) is recorded with its error; the others go on. Running the
same command again skips the points already done, and adding values to a --vary
runs only the new points. Every point starts from the --gpu preset (default r9nano;
`python -m simulator gpus` lists them), then --config and --set, then its --vary values.

Schedulers (only the scheduler changes, never the results):
  processes        a pool of local worker processes (default; --workers N)
  dask             a dask.distributed LocalCluster started for the sweep (--workers N)
  tcp://HOST:PORT  an existing Dask cluster: `dask scheduler` on one machine and
                   `dask worker tcp://HOST:PORT` on each, with this package installed

How traces come back: the client leaves a token file in DIR. A worker that finds
it (the same machine, or DIR on a file system every machine mounts, such as NFS)
writes its trace straight into DIR. A worker that shares no file system with the
client writes the trace to a temporary directory of its own and sends the finished
file back with its result; the client writes it into DIR. --results shared or send
forces one way.
"""


def register(subparsers):
    p = subparsers.add_parser(
        "sweep", help="run a workload over a grid of parameters (local pool or Dask cluster)",
        description=DESCRIPTION, epilog="example:\n" + __doc__.split("\n\n")[1],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="workload", metavar="WORKLOAD", required=True)
    for name, cls in WORKLOADS.items():
        w = sub.add_parser(name, help=(cls.__doc__ or name).strip().splitlines()[0],
                           description=DESCRIPTION,
                           formatter_class=argparse.RawDescriptionHelpFormatter)
        add_common_arguments(w, output={
            "required": True, "metavar": "DIR",
            "help": "sweep directory: one trace per point, sweep.json and summary.csv"},
            force=False)
        w.add_argument("--no-instrument", action="store_true",
                       help="record no Klein kernel records (watched accesses, branches, emits)")
        w.add_argument("--vary", action="append", required=True, metavar="KEY=V1,V2[,...]",
                       help="a configuration key (l2.banks) or workload option (nodes, seed) and"
                            " its values; several --vary give the cross product")
        w.add_argument("--seeds", type=positive_argument, default=1, metavar="N",
                       help="run each point with N seeds, --seed .. --seed+N-1 (default 1)")
        add_scheduler_arguments(w)
        cls.add_arguments(w)
        w.set_defaults(func=_sweep, workload_class=cls)


def _sweep(args):
    cls = args.workload_class
    try:
        config = build_config(args)
        parse_trace_level(args.trace_level)
        names = option_names(cls)
        vary = parse_vary(args.vary, names)
        scheduler = check_scheduler(args.scheduler)
        if args.seeds > 1 and any(key == "seed" for key, _ in vary):
            raise SweepError("--seeds and --vary seed=... both set the seed; use one of them")
        if args.workers and scheduler not in ("processes", "dask"):
            raise SweepError("--workers sizes a local pool; a Dask cluster has its own workers")
        sweep = Sweep(workload=cls.name, options=_workload_options(args, cls), config=config,
                      vary=vary, seed=args.seed, seeds=args.seeds, trace_level=args.trace_level,
                      window=args.window, instrument=not args.no_instrument, option_names=names,
                      note=args.note)
        directory = Path(args.output)
        existing = prepare(directory, sweep)
        outcome = run_sweep(sweep, directory, existing, scheduler, args.workers, args.results,
                            progress=not args.no_progress)
    except (ConfigError, TraceLevelError, SweepError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"error: {args.output}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    _report(sweep.keys, outcome, directory)
    if outcome.failed:
        print(f"{outcome.failed} of {outcome.ran} points failed: see the status and error columns"
              f" of {directory / SUMMARY}", file=sys.stderr)
        return 1
    return 0


REPORT_ROWS = 40
"""Points listed after a sweep; summary.csv has them all."""


def _report(keys, outcome, directory):
    shown = outcome.rows[:REPORT_ROWS]
    width = [max(len(k), *(len(row[k]) for row in shown)) for k in keys]
    print("  ".join(k.rjust(w) for k, w in zip(keys, width)) + "   simulated us  status")
    for row in shown:
        time_ps = row.get("simulated_time_ps")
        shown = f"{int(time_ps) / 1e6:13.3f}" if time_ps not in (None, "") else f"{'–':>13}"
        status = row["status"] if row["status"] == "ok" else f"failed: {row['error']}"
        print("  ".join(row[k].rjust(w) for k, w in zip(keys, width)) + f"  {shown}  {status}")
    if len(outcome.rows) > len(shown):
        print(f"… and {len(outcome.rows) - len(shown)} more")
    print(f"{len(outcome.rows)} points ({outcome.ran} run now, {outcome.skipped} done before);"
          f" summary {directory / SUMMARY}")
