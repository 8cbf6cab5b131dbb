"""Trace commands: import, export, info, synth and finalize."""
import shlex
import sys
import time

from .writer import TraceError


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
    p.set_defaults(func=_import)

    p = subparsers.add_parser(
        "export", help="write a trace as Chrome Trace JSON (Perfetto UI) or CSV",
        description="Export a GPUscope trace. chrome: Trace Event JSON that opens in Perfetto UI, "
                    "one track per location with overlapping tasks split into lanes. csv: "
                    "Daisen's columns ID, ParentID, Kind, What, Where, Start, End (seconds).")
    p.add_argument("trace", help="the GPUscope trace (.sqlite)")
    p.add_argument("-o", "--output", required=True, help="file to write")
    p.add_argument("--format", choices=("chrome", "csv"), default="chrome")
    p.set_defaults(func=_export)

    p = subparsers.add_parser(
        "info", help="summarize a trace: counts, time range, busiest components, configuration",
        description="Print task and location counts, the simulated time range, the components "
                    "with the most busy time, and the run's configuration.")
    p.add_argument("trace", help="the GPUscope trace (.sqlite)")
    p.add_argument("--top", type=int, default=10, help="how many components to list (default 10)")
    p.set_defaults(func=_info)

    p = subparsers.add_parser(
        "synth", help="write a synthetic GPU-shaped trace (for demos and benchmarks)",
        description="Generate a seeded synthetic trace with an R9-Nano-like component tree, "
                    "nested req_out/req_in chains and about 30 task kinds.")
    p.add_argument("-o", "--output", required=True, help="the trace to write (.sqlite)")
    p.add_argument("--tasks", type=int, default=100_000, help="approximate task count (default 100000)")
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    p.set_defaults(func=_synth)

    p = subparsers.add_parser(
        "finalize", help="build indexes and the metric pyramid of an unfinished trace",
        description="Repair a trace whose writer was killed before finalizing: build the indexes "
                    "and the metric pyramid. The run stays marked incomplete.")
    p.add_argument("trace", help="the GPUscope trace (.sqlite)")
    p.set_defaults(func=_finalize)


def _fail(message):
    print(f"error: {message}", file=sys.stderr)
    return 2


def _import(args):
    from .importers import import_trace

    started = time.perf_counter()
    try:
        report = import_trace(args.file, args.output, fmt=args.format, command=command_line())
    except TraceError as exc:
        return _fail(exc)
    print(f"imported {report.tasks:,} tasks ({report.format}) into {args.output} in "
          f"{time.perf_counter() - started:.1f} s")
    for count, what in (
            (report.links, "links between tasks (flows)"),
            (report.instants, "instant markers"),
            (report.counters, "counter samples"),
            (report.duplicates, "exact duplicate rows dropped"),
            (report.orphans, "tasks named a parent that is not in the file (stored without parent)"),
            (report.unresolved_links, "flow ends or links without a task at the other end (dropped)"),
            (report.skipped, "events that carry no task, marker, counter or flow (skipped)")):
        if count:
            print(f"  {count:,} {what}")
    return 0


def _export(args):
    from .exporters import export_trace

    try:
        count = export_trace(args.trace, args.output, args.format)
    except TraceError as exc:
        return _fail(exc)
    print(f"exported {count:,} tasks to {args.output} ({args.format})")
    return 0


def _info(args):
    from .exporters import open_trace
    from .summary import summarize

    try:
        db = open_trace(args.trace)
    except TraceError as exc:
        return _fail(exc)
    with db:
        print(summarize(db, top=args.top))
    return 0


def _synth(args):
    from .synthetic import generate

    started = time.perf_counter()
    try:
        count = generate(args.output, tasks=args.tasks, seed=args.seed, command=command_line())
    except KeyboardInterrupt:
        print(f"interrupted: {args.output} holds the tasks traced so far, marked incomplete",
              file=sys.stderr)
        return 130
    print(f"wrote {count:,} tasks to {args.output} in {time.perf_counter() - started:.1f} s")
    return 0


def _finalize(args):
    import sqlite3

    from .writer import TraceWriter

    try:
        writer = TraceWriter.reopen(args.trace)
    except (TraceError, sqlite3.DatabaseError) as exc:
        return _fail(exc)
    completed = writer.db.execute("SELECT completed FROM run").fetchone()[0]
    writer.finalize(completed=bool(completed))
    writer.close()
    print(f"finalized {args.trace} (run {'completed' if completed else 'marked incomplete'})")
    return 0
