"""A sweep directory as the /sweep page reads it: ``summary.csv`` and ``sweep.json``.

``python -m simulator sweep -o DIR`` writes one summary row per point: the varied
keys first (every column before ``simulated_time_ps``), then the headline metrics,
then ``trace``, ``status``, ``error`` and ``wall_s``. The app only reads these files;
it never imports the simulator.
"""
import csv
import json
from dataclasses import dataclass, field
from pathlib import Path

from ..catalog import SWEEP_SUMMARY

FIRST_METRIC = "simulated_time_ps"
RESULT_COLUMNS = ("trace", "status", "error", "wall_s")
DEFINITION = "sweep.json"


class SweepReadError(ValueError):
    """The sweep's files cannot be read as a sweep (the message says which and why)."""


@dataclass
class SweepTable:
    name: str
    keys: list            # the varied keys, in --vary order
    metrics: list         # the metric columns
    rows: list            # one dict per point; numbers parsed, text kept for keys
    definition: dict = field(default_factory=dict)

    @property
    def ok(self):
        return [r for r in self.rows if r["status"] == "ok"]


def _number(text):
    if text in (None, ""):
        return None
    try:
        value = float(text)
    except ValueError:
        return text
    return int(value) if value.is_integer() and "." not in text and "e" not in text else value


def read_sweep(folder):
    """The ``SweepTable`` of the sweep directory ``folder``."""
    folder = Path(folder)
    path = folder / SWEEP_SUMMARY
    try:
        with path.open(newline="") as handle:
            reader = csv.DictReader(handle)
            header = list(reader.fieldnames or [])
            rows = list(reader)
    except (OSError, UnicodeDecodeError, csv.Error) as err:
        raise SweepReadError(f"{folder.name}/{SWEEP_SUMMARY}: cannot read ({err})") from None
    if FIRST_METRIC not in header or not set(RESULT_COLUMNS) <= set(header):
        raise SweepReadError(f"{folder.name}/{SWEEP_SUMMARY}: not a sweep summary (it needs"
                             f" {FIRST_METRIC}, {', '.join(RESULT_COLUMNS)})")
    keys = header[:header.index(FIRST_METRIC)]
    metrics = [c for c in header[header.index(FIRST_METRIC):] if c not in RESULT_COLUMNS]
    parsed = []
    for row in rows:
        out = {k: row.get(k) or "" for k in keys}
        out.update({m: _number(row.get(m)) for m in metrics})
        out.update(trace=row.get("trace") or "", status=row.get("status") or "",
                   error=row.get("error") or "", wall_s=_number(row.get("wall_s")))
        parsed.append(out)
    try:
        definition = json.loads((folder / DEFINITION).read_text())
    except (OSError, json.JSONDecodeError):
        definition = {}
    return SweepTable(folder.name, keys, metrics, parsed, definition)


def sort_rows(rows, column, descending=False):
    """Rows by ``column``: numbers by value, before text, and empty cells last."""
    def key(row):
        value = row.get(column)
        if value in (None, ""):
            return (2, 0, "")
        number = _number(value) if isinstance(value, str) else value
        if isinstance(number, (int, float)):
            return (0, -number if descending else number, "")
        return (1, 0, str(value))
    ordered = sorted(rows, key=key)
    if descending:
        # Text sorts descending too; empty cells stay last.
        filled = [r for r in ordered if key(r)[0] == 0]
        text = sorted((r for r in ordered if key(r)[0] == 1), key=lambda r: str(r.get(column)),
                      reverse=True)
        ordered = filled + text + [r for r in ordered if key(r)[0] == 2]
    return ordered
