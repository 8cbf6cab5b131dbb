"""Command line: ``python -m simulator COMMAND --help``.

Each command lives beside the code it drives and registers itself here through a
``register(subparsers)`` function, so this file only assembles them. The one command
of its own, ``standby``, is a started process waiting for a command line: the app's
edit-and-run starts one ahead of time, so a run does not wait for Python to start and
import the simulator.
"""
import argparse
import difflib
import importlib
import json
import os
import select
import signal
import sqlite3
import sys
import threading

from . import __version__
from .tracing.outputs import disk_full
from .tracing.writer import TraceDamaged, TraceError, sqlite_problem
from .user_input import InputError

COMMAND_MODULES = {  # module: the commands its register(subparsers) adds
    "simulator.tracing.cli": ("import", "export", "info", "check", "synth", "finalize"),
    "simulator.runs.workload_cli": ("run",),
    "simulator.runs.kernel_cli": ("run-kernel",),
    "simulator.runs.sweep_cli": ("sweep",),
    "simulator.runs.validate_cli": ("validate",),
    "simulator.analysis.cli": ("analyze",),
    "simulator.gpu.cli": ("gpus",),
}


class CommandParser(argparse.ArgumentParser):
    """A parser whose innermost command reports the options it does not know.

    argparse hands a subcommand's unknown options up to the top-level parser, which then
    prints its own usage: `run transpose --sise 1024` would answer with the list of
    commands. Here the command that was given answers, naming itself and the option it
    most likely meant, in one line (its usage is one --help away). Subparsers inherit the
    class (add_subparsers' default).
    """

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")

    def parse_known_args(self, args=None, namespace=None):
        namespace, extras = super().parse_known_args(args, namespace)
        if extras and self._subparsers is None:
            self.error(_unknown_options_message(self, extras))
        return namespace, extras


def _unknown_options_message(parser, extras):
    message = f"unrecognized arguments: {' '.join(extras)}"
    known = [s for s in parser._option_string_actions if s.startswith("--")]
    for word in extras:
        if word.startswith("-"):
            close = difflib.get_close_matches(word.split("=", 1)[0], known, n=1)
            if close:
                return f"{message} (did you mean {close[0]}?)"
    return message


def build_parser(command: str | None = None) -> CommandParser:
    """The command line's parser. Given ``command`` (a command line's first word), only
    the module that registers that command is imported: the others' imports (the kernel
    compiler, the timing model) would cost a short command most of its time."""
    modules = [m for m, names in COMMAND_MODULES.items() if command in names] or COMMAND_MODULES
    parser = CommandParser(
        prog="python -m simulator",
        description="Simulate GPU kernels into SQLite task traces; import, export and inspect traces.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in modules:
        importlib.import_module(name).register(subparsers)
    standby = subparsers.add_parser(
        "standby", help="import everything, then run one command line read from stdin",
        description="Print 'ready' once every command is imported, then read one JSON line\n"
                    '{"argv": [COMMAND, ARG, ...], "cwd": DIR} from stdin, run that command\n'
                    "in DIR as `python -m simulator COMMAND ARG ...` would, and exit with its\n"
                    "status. End of input before a line exits at once with status 0.\n"
                    'With "tied": true in the line, end of input while the command runs\n'
                    "(the process that started it has died) kills it at once, with its\n"
                    "process group when it leads one.",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    standby.set_defaults(func=_standby)
    return parser


def _warm_up():
    # Commands import their heaviest modules only when they run (the timing model's
    # build, the metric pyramid, the progress bar, numpy's generators); importing them
    # while waiting takes ~70 ms off a kernel run.
    import numpy.random  # noqa: F401

    from .gpu import platform
    from .runs import records  # noqa: F401
    from .tracing import progress, pyramid  # noqa: F401

    platform.default_implementation()


def _standby(_args):
    _warm_up()
    print("ready", flush=True)
    line = sys.stdin.readline()
    if not line:
        return 0
    job = json.loads(line)
    if job.get("tied"):
        threading.Thread(target=_die_with_stdin, daemon=True).start()
    os.chdir(job["cwd"])
    # A trace records the command line that made it: the job's, not "standby".
    sys.argv = [sys.argv[0], *job["argv"]]
    return main(job["argv"])


def _die_with_stdin():
    # The starter keeps our stdin open for the whole run; its end means the starter is
    # gone (killed, even with SIGKILL, whose holder's pipes the kernel closes).
    # (The file descriptor, not sys.stdin: a daemon thread blocked inside a buffered
    # file's lock makes the interpreter abort at exit.)
    while os.read(sys.stdin.fileno(), 1 << 16):
        pass
    if os.getpgrp() == os.getpid():
        os.killpg(os.getpid(), signal.SIGKILL)  # whatever the command started, too
    os.kill(os.getpid(), signal.SIGKILL)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    parser = build_parser(argv[0] if argv else None)
    args = parser.parse_args(argv)
    try:
        code = args.func(args) or 0
        sys.stdout.flush()  # here, so a closed pipe is caught below and not at exit
        return code
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        if not _stdout_reader_gone():
            raise  # some other pipe broke: that is an error to report
        # The reader went away (`... | head`): stop quietly, as Unix tools do.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except Exception as exc:  # noqa: BLE001 - only the failures _failure knows are kept
        failure = _failure(args, exc)
        if failure is None:
            raise
        message, code = failure
        # One line, whatever a message quotes from the input (a field with a newline).
        print("error: " + message.replace("\r", "\\r").replace("\n", "\\n"), file=sys.stderr)
        return code


def _failure(args, exc):
    """(one line, exit status) for a failure the user can act on, or None for a bug.

    A full disk names the output; input errors carry their own ``FILE[:LINE:COL]``; any
    other error of the system or of SQLite is reported in its own words with its file.
    """
    output = getattr(args, "output", None) or getattr(args, "trace", None)
    if disk_full(exc):
        said = exc.strerror if isinstance(exc, OSError) else str(exc)
        return f"disk full writing {output or exc.filename}: {said}", 1
    if isinstance(exc, TraceDamaged):
        return str(exc), 1
    if isinstance(exc, (TraceError, InputError)):
        return str(exc), 2
    if isinstance(exc, OSError) and exc.filename is not None:
        return f"{exc.filename}: {exc.strerror}", 1
    if isinstance(exc, sqlite3.Error):
        return f"{output}: {sqlite_problem(exc)}", 1
    return None


def _stdout_reader_gone():
    """Whether stdout is a pipe whose reading end has been closed."""
    try:
        poller = select.poll()
        poller.register(sys.stdout.fileno(), select.POLLOUT)
        return any(events & select.POLLERR for _, events in poller.poll(0))
    except (OSError, ValueError, AttributeError):  # no poll on this platform, or no fd
        return False


if __name__ == "__main__":
    sys.exit(main())
