"""Command line: ``python -m simulator COMMAND --help``.

Each command lives beside the code it drives and registers itself here through a
``register(subparsers)`` function, so this file only assembles them.
"""
import argparse
import sys

from . import __version__

COMMAND_MODULES = [
    "simulator.tracing.cli",   # import, export, info, synth, finalize
    "simulator.gpu.cli",       # run WORKLOAD
    "simulator.kernels.cli",   # run-kernel FILE.cl
]


def build_parser():
    parser = argparse.ArgumentParser(
        prog="python -m simulator",
        description="Simulate GPU kernels into SQLite task traces; import, export and inspect traces.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    import importlib

    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name != name:  # a missing dependency, not a missing command module
                raise
            continue
        module.register(subparsers)
    return parser


def main(argv=None):
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args) or 0
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
