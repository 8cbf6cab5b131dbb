"""One point of a sweep, run wherever a worker is: a pool process, or a Dask worker.

``run_point`` takes a ``PointTask`` (plain data, pickled to the worker), runs the
workload into a trace and returns the point's summary row. It never raises: a value
the model refuses, a kernel error or a wrong result becomes ``status = "failed"``
with the error's one-line text, so one bad point never stops the others.

Where the trace goes: the client leaves a token file in the sweep directory. A worker
that reads the same token there shares the client's file system (the same machine, or
NFS and the like) and writes the trace straight into the directory; any other worker
writes it to a temporary directory of its own and returns the finished file's bytes
in the row (``data``), for the client to write. ``results`` forces either way.
"""
import argparse
import os
import re
import shlex
import signal
import sqlite3
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from .. import __version__
from ..gpu.config import PRESET_KEY, apply_overrides, default_config, flat_config
from ..gpu.presets import configuration
from ..gpu.run import SimulationInterrupted
from ..gpu.trace_vocabulary import parse_trace_level
from ..kernels.records import KernelRecorder
from ..tracing.writer import remove_trace_files, temporary_path
from ..workloads import WORKLOADS
from .records import simulate_with_records

TOKEN_FILE = ".sweep-token"
RESULTS = ("auto", "shared", "send")

GROUP_COLUMNS = {"cu_busy": "CU", "simd_busy": "SIMD", "l1v_busy": "L1V", "l2_busy": "L2",
                 "dram_busy": "DRAM"}
"""Summary column -> component group: locations named ``...GROUP[i]``."""
_INDEXED = re.compile(r"^(?P<group>[^.\[\]]+)\[\d+\]$")


@dataclass(frozen=True)
class TracePlace:
    """Where a task's trace goes (see the module's docstring)."""
    directory: str         # the output directory as the client sees it (absolute)
    name: str              # trace file name in it
    token: str             # contents of DIR/.sweep-token written by this client
    results: str           # auto, shared or send


@dataclass(frozen=True)
class PointTask:
    workload: str
    options: dict          # fixed workload options, by dest
    point: dict            # this point's varied values as text: option dests, seed, config keys
    config: dict           # base configuration; the point's config keys are applied to it
    seed: int
    trace_level: str
    window: tuple
    instrument: bool
    place: TracePlace
    version: str = __version__

    def run(self):
        """The point's summary row (see ``run_point``)."""
        return _run(self)


def run_point(task, on_start=None):
    """Run one point (``task.run()``: a ``PointTask``, or any task with a ``place`` for
    its trace, such as a validation row's); its summary row as a dict (with ``data``:
    trace bytes or None).

    ``on_start`` runs first, as part of the point: a Ctrl-C it lets through interrupts
    the point like one that comes later.
    """
    start = time.perf_counter()
    row = {"trace": "", "status": "failed", "error": "", "data": None}
    try:
        if on_start is not None:
            on_start()
        row.update(task.run())
        row["status"] = "ok"
    except KeyboardInterrupt:
        row["error"] = "interrupted"
    except AssertionError as exc:
        row["error"] = f"the kernels computed a wrong result: {exc}"
    except Exception as exc:  # noqa: BLE001 - any failure is this point's result, not the sweep's
        row["error"] = _one_line(exc)
    row["wall_s"] = round(time.perf_counter() - start, 3)
    return row


CTRL_C = {signal.SIGINT}
_stopped = None  # a pool process's multiprocessing.Event: the sweep was stopped


def hold_ctrl_c(stopped):
    """A pool process's initializer. Ctrl-C reaches every process of the terminal's group,
    and one that is between points must not die of it (its pool would break, and the
    points still running be reported lost instead of interrupted). So Ctrl-C is blocked,
    kept pending, outside points; the sweep's client starts its pool with it blocked too,
    which covers a process that has not reached this yet. ``stopped`` is set by the client
    once the sweep is interrupted: a point queued before then does not start."""
    global _stopped
    _stopped = stopped
    signal.pthread_sigmask(signal.SIG_BLOCK, CTRL_C)


def run_point_in_pool(task):
    """``run_point`` in a pool process that holds Ctrl-C between points: during the point,
    Ctrl-C interrupts it (its row says so), and one pressed before it began interrupts it
    at once."""
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        return run_point(task, on_start=_begin_point)
    finally:
        signal.pthread_sigmask(signal.SIG_BLOCK, CTRL_C)


def _begin_point():
    signal.pthread_sigmask(signal.SIG_UNBLOCK, CTRL_C)  # a pending Ctrl-C is raised here
    if _stopped is not None and _stopped.is_set():
        raise KeyboardInterrupt


def _one_line(exc):
    text = str(exc.args[0]) if len(exc.args) == 1 else str(exc)
    text = " ".join(text.split()) or type(exc).__name__
    return text if isinstance(exc, ValueError) else f"{type(exc).__name__}: {text}"


def _run(task):
    check_version(task)
    cls = WORKLOADS[task.workload]
    options, overrides, seed = dict(task.options), [], task.seed
    for key, text in task.point.items():
        if key == "seed":
            seed = _integer("seed", text)
        elif key in task.options:
            options[key] = option_value(cls, key, text)
        else:
            overrides.append(f"{key}={text}")
    config = apply_overrides(_copy(task.config), overrides)
    workload = cls(seed=seed, **options)
    return run_traced(task, lambda path: simulate_with_records(
        workload, config, path, KernelRecorder(instrument=task.instrument),
        trace_level=task.trace_level, window=task.window, progress=False,
        command=run_command(task.workload, options, config, seed, task), seed=seed,
        writer_process=False,  # the sweep runs points side by side already
        # A point may write into a directory shared over the network, where WAL's
        # shared memory does not work; sweeps are watched through summary.csv.
        watchable=False), workload.check)


def check_version(task):
    """Refuse a task made by a client of another version (its fields may differ)."""
    if task.version != __version__:
        raise RuntimeError(f"this worker runs simulator {__version__}, the client {task.version}:"
                           " install the same version on every machine")


def run_traced(task, simulate, check):
    """The row of ``simulate(path)`` (a ``SimulationResult``) run with the task's trace at
    ``path``: in the task's directory when this worker shares it, else in a scratch
    directory, whose finished file goes back in the row's ``data``; ``path`` is None
    when the task records no trace. ``check()`` runs after the simulation (a wrong
    result fails the task)."""
    place = task.place
    traced = bool(parse_trace_level(task.trace_level))
    shared = traced and _shares_directory(place)
    with tempfile.TemporaryDirectory(prefix="gpuscope-point-") as scratch:
        path = Path(place.directory if shared else scratch) / place.name if traced else None
        try:
            result = simulate(path)
        except SimulationInterrupted:
            raise  # the trace so far is kept, valid and marked incomplete
        except KeyboardInterrupt:
            # Ctrl-C before the run could stop cleanly (while it opened its trace).
            if path is not None:
                remove_trace_files(temporary_path(path))
            raise
        check()
        row = headline(path, result)
        if traced and not shared:
            row["data"] = path.read_bytes()
    return row


def _copy(config):
    return {k: _copy(v) if isinstance(v, dict) else v for k, v in config.items()}


def _integer(name, text):
    try:
        return int(text)
    except ValueError:
        raise ValueError(f"{name}: expected an integer, got {text!r}") from None


def option_value(cls, dest, text):
    """The workload option ``dest`` parsed from ``text`` as its command-line flag would be."""
    probe = argparse.ArgumentParser(add_help=False)
    cls.add_arguments(probe)
    action = next(a for a in probe._actions if a.dest == dest)
    flag = action.option_strings[-1]
    try:
        value = action.type(text) if action.type else text
    except (ValueError, argparse.ArgumentTypeError) as exc:
        raise ValueError(f"{flag} {text}: {exc}") from None
    if action.choices is not None and value not in action.choices:
        raise ValueError(f"{flag} {text}: choose from {', '.join(map(str, action.choices))}")
    return value


def option_names(cls):
    """The dests of a workload's own options."""
    probe = argparse.ArgumentParser(add_help=False)
    cls.add_arguments(probe)
    return tuple(a.dest for a in probe._actions if a.dest != "help")


def _shares_directory(place):
    if place.results == "send":
        return False
    try:
        shared = (Path(place.directory) / TOKEN_FILE).read_text() == place.token
    except OSError:
        shared = False
    shared = shared and os.access(place.directory, os.W_OK)
    if place.results == "shared" and not shared:
        raise RuntimeError(f"--results shared, but this worker cannot write {place.directory}"
                           " of the client")
    return shared


def run_command(workload, options, config, seed, task):
    """The ``run`` command line that reproduces this point, recorded in its trace."""
    argv = ["python", "-m", "simulator", "run", workload]
    for dest, value in options.items():
        if value is not None:
            argv += [f"--{dest.replace('_', '-')}", str(value)]
    argv += config_arguments(config)
    argv += ["--seed", str(seed), "--trace-level", task.trace_level]
    if task.window:
        argv += ["--window", ":".join("" if v is None else str(v) for v in task.window)]
    if not task.instrument:
        argv.append("--no-instrument")
    return " ".join(shlex.quote(a) for a in argv)


def config_arguments(config):
    """The options that make ``config``: ``--gpu`` with its preset (when it names one),
    then ``--set=KEY=VALUE`` for each value that differs from the preset's."""
    preset = config.get(PRESET_KEY)
    base = flat_config(configuration(preset) if preset else default_config())
    return (["--gpu", preset] if preset else []) + [
        f"--set={key}={value}" for key, value in flat_config(config).items()
        if base.get(key) != value]


def headline(path, result):
    """The summary's metrics of a finished run: model counters, and per-group busy
    fractions read back from the trace (None for a group the trace did not record)."""
    stats = result.stats or {}

    def rate(hits, misses):
        total = stats.get(hits, 0) + stats.get(misses, 0)
        return stats[hits] / total if total else None

    row = {"trace": path.name if path is not None else "",
           "simulated_time_ps": result.simulated_ps, "kernels": len(result.kernels),
           "instructions": stats.get("instructions"),
           "l1v_hit_rate": rate("l1v_hits", "l1v_misses"),
           "l2_hit_rate": rate("l2_hits", "l2_misses")}
    row.update(group_busy(path) if path is not None else {})
    return row


def group_busy(path):
    """{summary column: mean busy fraction of the group's locations over the run}."""
    # The finished file changes no more: read it without locks, leaving no -wal or -shm.
    db = sqlite3.connect(Path(path).resolve().as_uri() + "?mode=ro&immutable=1", uri=True)
    try:
        start, end = db.execute("SELECT virtual_start_ps, virtual_end_ps FROM run").fetchone()
        busy = db.execute("SELECT name, coalesce(busy_ps, 0) FROM location").fetchall()
    finally:
        db.close()
    span = max(1, (end or 0) - (start or 0))
    groups = {}
    for name, busy_ps in busy:
        match = _INDEXED.match(name.rsplit(".", 1)[-1])
        if match:
            groups.setdefault(match["group"], []).append(busy_ps / span)
    return {column: (sum(groups[g]) / len(groups[g]) if g in groups else None)
            for column, g in GROUP_COLUMNS.items()}
