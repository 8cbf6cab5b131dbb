"""``python -m dashapp --trace-dir DIR | --trace FILE [--host H] [--port P] [--no-edit]
[--kernel-include DIR]``."""
import argparse
import signal
import sys
from pathlib import Path


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python -m dashapp",
        description="Serve the GPUscope trace explorer (Overview, Component and Task views).")
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--trace-dir", type=Path, help="directory of trace files (*.sqlite)")
    source.add_argument("--trace", type=Path, help="a single trace file")
    parser.add_argument("--host", default="127.0.0.1", help="interface to listen on")
    parser.add_argument("--port", type=int, default=8050, help="TCP port (default 8050)")
    parser.add_argument("--debug", action="store_true", help="Dash debug mode (reloader off)")
    parser.add_argument("--no-edit", action="store_true",
                        help="serve the traces read-only: the kernel page has no editor and"
                        " runs no kernel (docs/security.md)")
    parser.add_argument("--kernel-include", action="append", default=[], metavar="DIR",
                        help="a folder whose headers an edited kernel may #include (repeatable);"
                        " without one it may include only files of its own run")
    args = parser.parse_args(argv)
    if args.trace_dir is not None and not args.trace_dir.is_dir():
        parser.error(f"--trace-dir {args.trace_dir}: not a directory")
    if args.trace is not None and not args.trace.is_file():
        parser.error(f"--trace {args.trace}: no such file")
    from .app import create_app
    from .klein.runner import Settings

    try:
        edit = Settings.create(edit=not args.no_edit, include_dirs=args.kernel_include)
    except ValueError as exc:
        parser.error(str(exc))
    app = create_app(trace_dir=args.trace_dir, trace=args.trace, edit=edit)
    # SIGTERM, the usual way to stop a server, would end Python without its exit
    # handlers; exiting normally lets the edit-and-run children be stopped and reaped.
    signal.signal(signal.SIGTERM, _exit_once)
    app.run(host=args.host, port=args.port, debug=args.debug, use_reloader=False)
    return 0


def _exit_once(*_):
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # a second one must not cut the cleanup short
    sys.exit(0)


if __name__ == "__main__":
    sys.exit(main())
