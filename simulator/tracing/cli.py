"""Trace commands: import, export, info, check, synth and finalize.

Their failures are exceptions with one-line messages (``TraceError`` and its kinds, a
full disk), printed by ``simulator.__main__``; the commands print only what they did.
"""
import contextlib
import shlex
import sys
import time
from pathlib import Path

from ..user_input import count_argument, int_argument, positive_argument
from .outputs import (
    OutputError,
    announce_interrupted,
    interrupted,
    interrupted_note,
    prepare_output,
)
from .writer import TraceDamaged, TraceError

FORCE_HELP = "replace the output if it exists (it is never one of the inputs)"


def command_line():
    """The command as a user would type it again: ``python -m simulator ARGS`` (never
    the absolute path of ``__main__.py`` that ``sys.argv[0]`` holds)."""
    return "python -m simulator " + " ".join(shlex.quote(a) for a in sys.argv[1:])


def register(subparsers):
    p = subparsers.add_parser(
        "import", help="convert an akita or Nsight Systems SQLite, Daisen CSV or Chrome JSON"
                       " trace into ours",
        description="Convert another tool's trace into a GPUscope trace. The format is detected "
                    "from the content: akita v3 SQLite (times in s), akita v4/v5 DataRecorder "
                    "SQLite (v5: integer locations, times in ps), Nsight Systems SQLite exports "
                    "(nsys export --type sqlite), Daisen CSV, Chrome Trace JSON.")
    p.add_argument("file", help="the trace to import")
    p.add_argument("-o", "--output", required=True, help="the GPUscope trace to write (.sqlite)")
    p.add_argument("--format", choices=("akita-v3", "akita-v4", "akita-v5", "nsys", "daisen-csv",
                                        "chrome"),
                   help="skip detection and read this format")
    p.add_argument("--force", action="store_true", help=FORCE_HELP)
    p.set_defaults(func=_import)

    p = subparsers.add_parser(
        "export", help="write a trace as Chrome Trace JSON (Perfetto UI) or CSV",
        description="Export a GPUscope trace. chrome: Trace Event JSON that opens in Perfetto UI, "
                    "one track per location with overlapping tasks split into lanes. csv: "
                    "Daisen's columns ID, ParentID, Kind, What, Where, Start, End (seconds).")
    p.add_argument("trace", help="the GPUscope trace (.sqlite)")
    p.add_argument("-o", "--output", required=True, help="file to write")
    p.add_argument("--format", choices=("chrome", "csv"), default="chrome")
    p.add_argument("--force", action="store_true", help=FORCE_HELP)
    p.set_defaults(func=_export)

    p = subparsers.add_parser(
        "info", help="summarize a trace: counts, time range, busiest components, configuration",
        description="Check the file for damage (SQLite's quick_check: about 5 s per GB), then "
                    "print task and location counts, the simulated time range, the components "
                    "with the most busy time, and the run's configuration. A damaged file is "
                    "reported as such, with exit status 1.")
    p.add_argument("trace", help="the GPUscope trace (.sqlite)")
    p.add_argument("--top", type=count_argument, default=10,
                   help="how many components to list (default 10)")
    p.add_argument("--no-check", action="store_true", help="skip the damage check")
    p.set_defaults(func=_info)

    p = subparsers.add_parser(
        "check", help="check a trace file for damage, page by page and index by index",
        description="Run SQLite's full integrity_check on the file (every page, and every "
                    "index against its table; about 12 s per GB). Prints 'ok' or what is "
                    "damaged; exit status 1 when damaged.")
    p.add_argument("trace", help="the trace (.sqlite)")
    p.set_defaults(func=_check)

    p = subparsers.add_parser(
        "synth", help="write a synthetic GPU-shaped trace (for demos and benchmarks)",
        description="Generate a seeded synthetic trace with an R9-Nano-like component tree, "
                    "nested req_out/req_in chains and about 30 task kinds.")
    p.add_argument("-o", "--output", required=True, help="the trace to write (.sqlite)")
    p.add_argument("--tasks", type=positive_argument, default=100_000,
                   help="approximate task count (default 100000)")
    p.add_argument("--seed", type=int_argument, default=0, help="random seed (default 0)")
    p.add_argument("--force", action="store_true", help=FORCE_HELP)
    p.set_defaults(func=_synth)

    p = subparsers.add_parser(
        "finalize", help="build indexes and the metric pyramid of an unfinished trace",
        description="Repair a trace whose writer was killed before finalizing: build the indexes "
                    "and the metric pyramid. The run stays marked incomplete. A command killed "
                    "outright (kill -9) leaves its unfinished file hidden beside TRACE "
                    "(.TRACE.partial-PID); finalize TRACE finds the newest such file, finalizes "
                    "it and moves it to TRACE (with --force if TRACE exists).")
    p.add_argument("trace", help="the GPUscope trace (.sqlite)")
    p.add_argument("--force", action="store_true",
                   help="replace an existing TRACE with the interrupted run's file")
    p.set_defaults(func=_finalize)


def _import(args):
    from .importers import import_trace

    announce_interrupted(args.output)
    started = time.perf_counter()
    report = import_trace(args.file, args.output, fmt=args.format, command=command_line(),
                          force=args.force)
    print(f"imported {report.tasks:,} tasks ({report.format}) into {args.output} in "
          f"{time.perf_counter() - started:.1f} s")
    if report.rolled_back:
        print(f"  {args.file} was left inside a transaction (its writer killed, or still"
              " writing): read as its writer last committed it")
    for count, what in (
            (report.links, "links between tasks (flows)"),
            (report.instants, "instant markers"),
            (report.counters, "counter samples"),
            (report.duplicates, "exact duplicate rows dropped"),
            (report.orphans, "tasks named a parent that is not in the file (stored without parent)"),
            (report.unresolved_links, "flow ends or links without a task at the other end (dropped)"),
            (report.skipped, "events that carry no task, marker, counter or flow (skipped)"),
            (report.clamped, "slices that end before they begin (kept with no length)")):
        if count:
            print(f"  {count:,} {what}")
    return 0


def _export(args):
    from .exporters import export_trace

    count = export_trace(args.trace, args.output, args.format, force=args.force)
    print(f"exported {count:,} tasks to {args.output} ({args.format})")
    return 0


def _open_checked(path, check):
    """A read-only connection to the trace at ``path`` after SQLite's ``check``
    ("quick_check", "integrity_check" or None). A missing file names what an
    interrupted run left; a damaged one raises ``TraceDamaged``."""
    from .exporters import open_trace
    from .integrity import damage_report, problems

    note = interrupted_note(path)
    if note and not Path(path).exists():
        raise TraceError(f"{path}: no such file; {note.removeprefix('note: ')}")
    db = open_trace(path)
    found = problems(db, full=check == "integrity_check") if check else []
    if found:
        db.close()
        raise TraceDamaged(damage_report(path, found))
    if note:
        print(note, file=sys.stderr)
    return db


def _info(args):
    import sqlite3

    from .summary import summarize
    from .writer import sqlite_error

    with contextlib.closing(_open_checked(args.trace, None if args.no_check else "quick_check")) as db:
        try:
            text = summarize(db, top=args.top)
        except (sqlite3.DatabaseError, UnicodeDecodeError) as exc:
            raise sqlite_error(args.trace, exc) from None
    print(text)
    return 0


def _check(args):
    _open_checked(args.trace, "integrity_check").close()
    print(f"{args.trace}: ok (SQLite's integrity_check found no damage)")
    return 0


def _synth(args):
    from .synthetic import generate

    prepare_output(args.output, force=args.force)
    announce_interrupted(args.output)
    started = time.perf_counter()
    try:
        count = generate(args.output, tasks=args.tasks, seed=args.seed, command=command_line())
    except KeyboardInterrupt:
        print(f"interrupted: {args.output} holds the tasks traced so far, marked incomplete",
              file=sys.stderr)
        return 130
    print(f"wrote {count:,} tasks to {args.output} in {time.perf_counter() - started:.1f} s")
    return 0


def _finalize_file(path):
    """Finalize the trace at ``path`` in place; returns whether its run completed."""
    from .writer import TraceWriter

    writer = TraceWriter.reopen(path)
    try:
        completed = bool(writer.db.execute("SELECT completed FROM run").fetchone()[0])
        writer.finalize(completed=completed)
    finally:
        writer.close()
    return completed


def _finalize(args):
    from .writer import PendingOutput, remove_trace_files

    target = Path(args.trace)
    left = interrupted(target)
    if not left:
        completed = _finalize_file(target)
        print(f"finalized {target} (run {_status(completed)})")
        return 0
    newest = left[-1]
    if target.exists() and not args.force:
        raise OutputError(f"{target}: already exists, and an interrupted run left {newest}: pass"
                          f" --force to replace {target} with it (finalized, marked incomplete)")
    if target.is_dir():
        raise OutputError(f"{target}: is a directory")
    completed = _finalize_file(newest)
    remove_trace_files(Path(f"{newest}.stage"))  # an interrupted import's scratch rows
    PendingOutput(target, path=newest).publish()
    print(f"finalized {newest} into {target} (run {_status(completed)})")
    for other in left[:-1]:
        print(f"note: an older interrupted run left {other}; `python -m simulator finalize"
              f" {target} --force` recovers it in turn, or delete it", file=sys.stderr)
    return 0


def _status(completed):
    return "completed" if completed else "marked incomplete"
