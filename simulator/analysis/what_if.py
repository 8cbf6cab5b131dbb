"""S13, the measured what-if: re-simulate with the limiting parameter halved and doubled.

A finding that names a configuration key (the dispatch rate for dispatch-bound CUs, the
launch overhead, the bandwidth of the memory level a launch is bound by) is tested by
running the same workload again with that key × ½ and × 2 (why-layer.md §9.1, S13), and
speed-up = the launch's time in the analyzed trace ÷ its time in the new run. This is a
measured counterfactual, where rocprof-sys' causal profiling and HTA only estimate.

The runs go through the CLI's own sweep entry point, ``python -m simulator sweep``, in a
child process: the analysis room never imports what simulates. The sweep's directory
(by default ``TRACE.what-if`` beside the trace) keeps its points, so asking again reruns
nothing. A halved integer that is not whole (a rate of 1) is not tried, and said so.
"""
from __future__ import annotations

import csv
import shlex
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

from .scope import Unavailable
from .trace import Trace

FACTORS = (Fraction(1, 2), Fraction(2))
DROPPED = {"-o": 1, "--output": 1, "--force": 0, "--no-progress": 0, "--trace-level": 1,
           "--window": 1, "--no-instrument": 0}
"""Options of the analyzed run the what-if runs replace with their own (and how many
values each takes)."""


def sweep_command(command: str, key: str, values: list, directory: Path) -> list[str]:
    """The ``sweep`` command line that reruns the trace's ``run`` command with ``key``
    at each of ``values``, tracing only kernel launches."""
    argv = shlex.split(command)
    try:
        at = argv.index("run", argv.index("simulator"))
    except ValueError:
        raise Unavailable("needs a trace made by `python -m simulator run WORKLOAD`") from None
    options, rest = [], argv[at + 2:]
    while rest:
        word = rest.pop(0)
        name = word.split("=", 1)[0]
        if name in DROPPED:
            if "=" not in word:
                del rest[:DROPPED[name]]
            continue
        options.append(word)
    return [sys.executable, "-m", "simulator", "sweep", argv[at + 1], *options,
            "--vary", f"{key}={','.join(str(v) for v in values)}", "-o", str(directory),
            "--trace-level", "kernel", "--no-instrument", "--no-progress"]


def _values(current, factors=FACTORS) -> list[tuple[Fraction, int | float]]:
    out = []
    for factor in factors:
        value = current * factor
        if isinstance(current, int):
            if value.denominator != 1 or value < 1:
                continue
            value = int(value)
        else:
            value = float(value)
        out.append((factor, value))
    return out


def measure(trace: Trace, key: str, directory: Path) -> list[dict]:
    """Per factor tried: ``{"key", "factor", "value", "times_ps", "speedup", "trace"}``,
    with the launch times of the new run and their speed-ups, launch by launch."""
    section, _, name = key.rpartition(".")
    node = trace.config
    for part in section.split("."):
        node = node[part]
    tried = _values(node[name])
    if not tried:
        raise Unavailable(f"{key} = {node[name]}: neither half nor double is a valid value")
    base = [k.duration_ps for k in trace.kernels()]
    command = trace.db.execute("SELECT command FROM run").fetchone()[0]
    argv = sweep_command(command, key, [v for _, v in tried], directory)
    done = subprocess.run(argv, capture_output=True, text=True)
    if done.returncode != 0:
        raise Unavailable(f"the what-if runs failed: {done.stderr.strip().splitlines()[-1:]}")
    with open(directory / "summary.csv", newline="") as f:
        rows = {row[key]: row for row in csv.DictReader(f)}
    out = []
    for factor, value in tried:
        row = rows.get(str(value))
        if row is None or row["status"] != "ok":
            continue
        with Trace(directory / row["trace"]) as rerun:
            times = [k.duration_ps for k in rerun.kernels()]
        out.append({"key": key, "factor": float(factor), "value": value, "times_ps": times,
                    "speedup": [round(b / t, 4) for b, t in zip(base, times)],
                    "trace": str(directory / row["trace"])})
    return out
