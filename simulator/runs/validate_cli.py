"""The ``validate`` command: simulated kernel times held against measured ones.

    python -m simulator validate benchmarks/validation/r9nano.csv -o traces/r9nano-val

Each row of the validation file (see ``validate_rows``) runs as ``run-kernel`` would
run it, side by side on a sweep's schedulers (``sweep_schedule.run_tasks``), each into
its own trace in DIR. The report (``validate_report``) compares each row's simulated
time with its measured one and gives the figures of ``validate_stats``.
"""
import argparse
import json
import re
import sys
import tempfile
from pathlib import Path

from ..gpu.config import ConfigError
from ..gpu.trace_vocabulary import TraceLevelError, parse_trace_level
from ..tracing.cli import command_line
from ..tracing.progress import progress_bar
from ..user_input import InputError, load_json
from .sweep import SweepError, trace_name, write_atomically
from .sweep_point import TracePlace
from .sweep_schedule import add_scheduler_arguments, check_scheduler, new_token, run_tasks
from .validate_point import LaunchTask, read_sources
from .validate_report import SUMMARY_FILE, document, row_document, table
from .validate_rows import COLUMNS, read_measurements
from .workload_cli import add_common_arguments, build_config

DESCRIPTION = f"""\
Simulate every launch of a validation file and compare its simulated time with the
time measured on a real GPU.

MEASURED.csv has a header row and one row per launch, with the columns
  {', '.join(COLUMNS[:6])}
  and optionally {', '.join(COLUMNS[6:])}:
kernel_file is relative to the CSV file's folder; global and local as run-kernel's
--global and --local; args the --arg values NAME=VALUE separated by spaces; measured_us
the measured time in microseconds; build_options clBuildProgram's options (-D N=64);
family the size family (default kernel_file:kernel); source where the time comes from.
See docs/validation.md.

Reported per row: simulated and measured time and their ratio; overall: WMAPE
(sum |sim - meas| / sum meas), the median |log2(sim / meas)|, Spearman's rho of sim
against meas, and per size family the slope of log sim against log meas (1: the
simulated time grows with the problem as the measured one does).

With -o DIR, each row's trace is written into DIR and the report into
DIR/{SUMMARY_FILE}, which the app's Validation page reads (/validation?run=DIR).
Rows run in parallel on the sweep's schedulers (--scheduler, see `sweep --help`), on
the --gpu preset (`python -m simulator gpus`), then --config and --set.
"""


def register(subparsers):
    p = subparsers.add_parser(
        "validate", help="simulate the launches of a file of measured kernel times and"
                         " compare", description=DESCRIPTION,
        epilog="example:\n" + __doc__.split("\n\n")[1],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("measurements", metavar="MEASURED.csv", help="the validation file")
    add_common_arguments(p, output={
        "metavar": "DIR", "help": "directory of the row's traces and the report,"
                                  f" {SUMMARY_FILE} (omit to run untraced)"})
    p.add_argument("--only", metavar="PATTERN", type=_pattern,
                   help="run only the rows whose family matches this regular expression")
    p.add_argument("--json", action="store_true",
                   help="print the report as JSON (the document of DIR/" + SUMMARY_FILE + ")")
    p.add_argument("--no-instrument", action="store_true",
                   help="record no Klein kernel records (watched accesses, branches, emits)")
    add_scheduler_arguments(p)
    p.set_defaults(func=_validate)


def _pattern(text):
    try:
        return re.compile(text)
    except re.error as exc:
        raise argparse.ArgumentTypeError(f"not a regular expression: {exc}") from None


def _validate(args):
    try:
        config = build_config(args)
        parse_trace_level(args.trace_level)
        scheduler = check_scheduler(args.scheduler)
        if args.workers and scheduler not in ("processes", "dask"):
            raise SweepError("--workers sizes a local pool; a Dask cluster has its own workers")
    except (ConfigError, TraceLevelError, SweepError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    launches = read_measurements(args.measurements)
    if args.only is not None:
        launches = [x for x in launches if args.only.search(x.family)]
        if not launches:
            raise InputError(f"--only {args.only.pattern!r}: no row's family matches")
    sources = read_sources(args.measurements, launches)
    if args.output is None:
        # Untraced: the rows' workers share a scratch directory that receives nothing.
        with tempfile.TemporaryDirectory(prefix="gpuscope-validate-") as scratch:
            return _run(args, launches, sources, config, scheduler, Path(scratch), None)
    output = _prepare(Path(args.output), args.force)
    return _run(args, launches, sources, config, scheduler, output, output)


def _run(args, launches, sources, config, scheduler, directory, output):
    """Run the rows with their traces in ``directory``, the report in ``output`` (None:
    untraced, no report file); the exit status."""
    token = new_token()
    rows = [row_document(i, launch, None) for i, launch in enumerate(launches, 1)]
    todo = [(i, LaunchTask(
        path=str(launch.kernel_file), source=sources[launch.kernel_file], kernel=launch.kernel,
        global_size=launch.global_size, local_size=launch.local_size, args=launch.args,
        build_options=launch.build_options, config=config, seed=args.seed,
        trace_level=args.trace_level if output is not None else "off", window=args.window,
        instrument=not args.no_instrument, note=args.note,
        place=TracePlace(str(directory), _trace_name(i, launch), token, args.results)))
        for i, launch in enumerate(launches)]
    facts = {"measurements": args.measurements, "gpu": args.gpu, "note": args.note,
             "command": command_line()}
    bar = progress_bar(not args.no_progress and not args.json, total=len(todo),
                       unit=" rows", desc="validate")

    def record(i, result):
        rows[i] = row_document(i + 1, launches[i], result)
        if output is not None:
            _write(output, document(rows, **facts))
        bar.update(1)

    try:
        if output is not None:
            _write(output, document(rows, **facts))
        run_tasks(todo, directory, token, scheduler, args.workers, record)
    finally:
        bar.close()
    doc = document(rows, **facts)
    print(json.dumps(doc, indent=2) if args.json else table(doc))
    failed = sum(r["status"] != "ok" for r in rows)
    if failed:
        print(f"{failed} of {len(rows)} rows failed: see their errors"
              + (f" in {output / SUMMARY_FILE}" if output is not None else " above"),
              file=sys.stderr)
        return 1
    if output is not None and not args.json:
        print(f"report {output / SUMMARY_FILE}")
    return 0


def _trace_name(index, launch):
    return trace_name({"row": f"{index + 1:03d}", "kernel": launch.kernel or
                       launch.kernel_file.stem, "global": "x".join(map(str, launch.global_size))})


def _prepare(directory, force):
    """Create DIR for a validation, or clear the previous validation from it (--force);
    InputError for a directory that holds something else."""
    summary = directory / SUMMARY_FILE
    if summary.is_file():
        if not force:
            raise InputError(f"{directory}: holds a validation already; pass --force to"
                             " replace it")
        previous = load_json(summary)
        for row in previous.get("rows", []) if isinstance(previous, dict) else []:
            name = row.get("trace") if isinstance(row, dict) else None
            if isinstance(name, str) and name.endswith(".sqlite") and Path(name).name == name:
                (directory / name).unlink(missing_ok=True)
    elif directory.is_dir() and any(directory.iterdir()):
        raise InputError(f"{directory}: exists and is not a validation directory; use"
                         " another -o DIR")
    elif directory.exists() and not directory.is_dir():
        raise InputError(f"{directory}: is a file; -o names the directory to write")
    directory.mkdir(parents=True, exist_ok=True)
    return directory.resolve()


def _write(directory, doc):
    write_atomically(directory / SUMMARY_FILE, json.dumps(doc, indent=2) + "\n")
