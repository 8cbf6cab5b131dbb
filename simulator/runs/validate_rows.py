"""A validation file: kernel launches with the time a real GPU took for each.

``python -m simulator validate MEASURED.csv`` reads a CSV file with a header row; each
further row is one launch of a kernel file, written as ``run-kernel`` takes it, and the
time measured on hardware:

    kernel_file    the kernel source (.cl), relative to the CSV file's folder
    kernel         the kernel function (empty: the first in the file)
    global         global work size, ``N[xN[xN]]``
    local          work-group size, ``N[xN[xN]]``
    args           the ``--arg`` values, ``NAME=VALUE`` separated by spaces (quote one
                   holding a space, as a shell would); a ``.npy`` path is relative to the
                   CSV file's folder
    measured_us    the measured time of the launch, in microseconds (> 0)

and, optionally:

    build_options  clBuildProgram's options string (``-D N=64``)
    family         the size family the row belongs to (default: kernel_file:kernel, or
                   kernel_file alone when kernel is empty)
    source         where the measurement comes from (a citation); kept, never read

A row that cannot be read is an ``InputError`` naming the file, its line and the
column, before anything runs.
"""
import csv
import io
import shlex
from dataclasses import dataclass
from pathlib import Path

from ..user_input import InputError, decimal, read_text
from .kernel_cli import parse_arg, parse_size

REQUIRED = ("kernel_file", "kernel", "global", "local", "args", "measured_us")
OPTIONAL = ("build_options", "family", "source")
COLUMNS = REQUIRED + OPTIONAL


@dataclass(frozen=True)
class MeasuredLaunch:
    """One row of a validation file, checked and with its paths resolved."""
    line: int                 # the row's line in the CSV file (the header is line 1)
    kernel_file: Path         # resolved against the CSV file's folder
    kernel: str | None        # None: the first kernel of the file
    global_size: tuple
    local_size: tuple
    args: tuple               # ((name, value text), ...) as --arg takes them
    build_options: str
    measured_us: float
    family: str
    source: str
    written: dict             # the row's cells as written, for reports


def read_measurements(path) -> list[MeasuredLaunch]:
    """The launches of the validation file at ``path``; ``InputError`` for the first row
    (or header) that cannot be read."""
    path = Path(path)
    text = read_text(path, "validation file (.csv)")
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = [cell.strip() for cell in next(reader)]
    except StopIteration:
        raise InputError(f"{path}: empty; expected a header row naming the columns"
                         f" {', '.join(REQUIRED)}") from None
    except csv.Error as exc:
        raise InputError(f"{path}:1: {exc}") from None
    missing = [c for c in REQUIRED if c not in header]
    unknown = [c for c in header if c not in COLUMNS]
    if missing or unknown:
        raise InputError(f"{path}:1: " + "; ".join(filter(None, [
            f"missing column{'s' if len(missing) > 1 else ''} {', '.join(missing)}"
            if missing else "",
            f"unknown column{'s' if len(unknown) > 1 else ''} {', '.join(unknown)}"
            f" (the columns are {', '.join(COLUMNS)})" if unknown else ""])))
    launches = []
    try:
        for cells in reader:
            if not any(cell.strip() for cell in cells):
                continue  # a blank line
            line = reader.line_num
            if len(cells) != len(header):
                raise InputError(f"{path}:{line}: {len(cells)} cells, the header has"
                                 f" {len(header)}")
            launches.append(_launch(path, line, dict(zip(header, cells))))
    except csv.Error as exc:
        raise InputError(f"{path}:{reader.line_num}: {exc}") from None
    if not launches:
        raise InputError(f"{path}: no rows after the header")
    return launches


def _launch(path, line, row):
    def fail(column, message):
        raise InputError(f"{path}:{line}: column {column}: {message}")

    def size(column):
        try:
            return parse_size(row[column].strip())
        except Exception as exc:  # noqa: BLE001 - argparse's type error, in its words
            fail(column, str(exc))

    folder = path.parent
    written = {c: row.get(c, "").strip() for c in COLUMNS}
    if not written["kernel_file"]:
        fail("kernel_file", "empty; give the kernel source (.cl)")
    kernel_file = folder / written["kernel_file"]
    if not kernel_file.is_file():
        fail("kernel_file", f"no file {kernel_file}")
    kernel = written["kernel"] or None
    if kernel is not None and not kernel.isidentifier():
        fail("kernel", f"not a kernel name: {kernel!r}")
    try:
        words = shlex.split(written["args"])
    except ValueError as exc:
        fail("args", str(exc))
    args = []
    for word in words:
        try:
            name, value = parse_arg(word)
        except Exception as exc:  # noqa: BLE001 - argparse's type error, in its words
            fail("args", str(exc))
        if value.endswith(".npy"):
            value = str(folder / value)
        args.append((name, value))
    names = [name for name, _ in args]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        fail("args", f"{', '.join(twice)} given twice")
    try:
        measured = decimal(written["measured_us"], "measured_us")
    except InputError:
        fail("measured_us", f"expected a time in microseconds, got {written['measured_us']!r}")
    if not measured > 0:
        fail("measured_us", f"must be more than 0, got {written['measured_us']}")
    family = written["family"] or f"{written['kernel_file']}:{kernel or ''}".rstrip(":")
    return MeasuredLaunch(line=line, kernel_file=kernel_file, kernel=kernel,
                          global_size=size("global"), local_size=size("local"),
                          args=tuple(args), build_options=written["build_options"],
                          measured_us=float(measured), family=family,
                          source=written["source"], written=written)
