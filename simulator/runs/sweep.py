"""A parameter sweep: the cross product of varied values, one run and one trace per point.

A ``Sweep`` is everything that defines the runs: the workload and its fixed options,
the base configuration (``--config``, ``--set``), the trace level and window, and the
varied keys, each a configuration key (``l2.banks``) or a workload option (``nodes``,
``seed``) with its values. ``points`` lists the cross product in a fixed order (the
first ``--vary`` changes slowest), repeated ``seeds`` times with consecutive seeds.

The definition is kept in ``DIR/sweep.json`` and the results in ``DIR/summary.csv``,
one row per point, so a rerun with the same definition skips the points already done
(it may add values: only the new points run). Values stay text until a point runs:
a value the model refuses fails its own point, recorded with the error, and never the
sweep.
"""
import csv
import io
import itertools
import json
import os
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path

from ..gpu.config import parameter_names
from ..tracing.writer import temporary_path

SUMMARY = "summary.csv"
DEFINITION = "sweep.json"

METRIC_COLUMNS = ("simulated_time_ps", "kernels", "cu_busy", "simd_busy", "l1v_busy", "l2_busy",
                  "dram_busy", "l1v_hit_rate", "l2_hit_rate", "instructions")
"""Headline metrics of a point, after its varied keys (see ``sweep_point.headline``)."""
RESULT_COLUMNS = ("trace", "status", "error", "wall_s")
"""``trace`` is the file name in DIR; ``status`` ok or failed; ``wall_s`` the point's run."""


class SweepError(ValueError):
    """A sweep that cannot start: a bad --vary, or DIR holds a different sweep."""


@dataclass(frozen=True)
class Sweep:
    workload: str
    options: dict                  # fixed workload options, by argparse dest
    config: dict                   # the base configuration (--config and --set applied)
    vary: tuple                    # ((key, (value text, ...)), ...) in --vary order
    seed: int = 0
    seeds: int = 1                 # each point runs with seeds seed .. seed + seeds - 1
    trace_level: str = "all"
    window: tuple = None
    instrument: bool = True
    option_names: tuple = field(default=(), compare=False)  # the workload's option dests
    note: str = None               # what the sweep is for (--note); a rerun may change it

    @property
    def keys(self):
        """The summary's varied columns: the --vary keys, then ``seed`` when repeated."""
        keys = tuple(key for key, _ in self.vary)
        return keys + ("seed",) if self.seeds > 1 else keys

    def is_option(self, key):
        """Whether ``key`` is a workload option (or the seed) rather than a config key."""
        return key == "seed" or key in self.option_names

    def points(self):
        """Every point as a dict {key: value text}, in plan order."""
        values = [vals for _, vals in self.vary]
        seeds = [str(self.seed + i) for i in range(self.seeds)] if self.seeds > 1 else [None]
        out = []
        for combo in itertools.product(*values):
            for seed in seeds:
                point = dict(zip((k for k, _ in self.vary), combo))
                if seed is not None:
                    point["seed"] = seed
                out.append(point)
        return out

    def definition(self):
        """What must match for a rerun in the same DIR to resume (the values may grow)."""
        data = asdict(self)
        data.pop("option_names")
        data["vary"] = [key for key, _ in self.vary]
        data["window"] = list(self.window) if self.window else None
        return data


def parse_vary(items, option_names):
    """``["l2.banks=8,16", "nodes=1024"]`` as ((key, (values...)), ...).

    A workload option may be written as its flag (``--local-x``, ``local-x``) or its
    name (``local_x``). Unknown keys and repeated keys are refused here; values are
    checked when their point runs.
    """
    known = set(parameter_names())
    vary, seen = [], set()
    for item in items:
        key, sep, text = item.partition("=")
        key = key.strip()
        values = tuple(v.strip() for v in text.split(","))
        if not sep or not key or not all(values):
            raise SweepError(f"--vary {item!r}: expected KEY=V1,V2[,...], such as l2.banks=8,16")
        option = key.lstrip("-").replace("-", "_")
        if option == "seed" or option in option_names:
            key = option
        elif key not in known:
            raise SweepError(f"--vary {item!r}: {key!r} is neither a configuration key (such"
                             " as l2.banks) nor an option of the workload"
                             f" ({', '.join(option_names)})")
        if key in seen:
            raise SweepError(f"--vary {key} is given twice; list every value in one --vary")
        if len(set(values)) != len(values):
            raise SweepError(f"--vary {item!r}: a value is listed twice")
        seen.add(key)
        vary.append((key, values))
    return tuple(vary)


_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def trace_name(point):
    """The file name of a point's trace: ``key-value`` pairs joined by ``__``."""
    parts = [f"{key}-{_UNSAFE.sub('_', value)}" for key, value in point.items()]
    return ("__".join(parts) or "point") + ".sqlite"


def point_key(point, keys):
    """A point's identity in the summary: its values in the sweep's key order."""
    return tuple(point[k] for k in keys)


# -- DIR/sweep.json and DIR/summary.csv ----------------------------------------------------
def prepare(directory, sweep):
    """Create DIR (or check that it holds this same sweep) and record the definition.

    Returns the summary rows already there, by point key.
    """
    directory = Path(directory)
    definition = sweep.definition()
    stored_path = directory / DEFINITION
    if stored_path.exists():
        try:
            stored = json.loads(stored_path.read_text())
        except (OSError, json.JSONDecodeError) as exc:
            raise SweepError(f"{stored_path}: cannot read: {exc}") from None
        differ = sorted(k for k in set(stored) | set(definition)
                        if k not in ("values", "note") and stored.get(k) != definition.get(k))
        if differ:
            raise SweepError(f"{directory} holds another sweep (its {', '.join(differ)}"
                             f" differ{'s' if len(differ) == 1 else ''}); use another -o DIR")
    elif directory.exists() and any(directory.iterdir()):
        raise SweepError(f"{directory} exists and is not a sweep directory; use another -o DIR")
    directory.mkdir(parents=True, exist_ok=True)
    definition["values"] = _merged_values(stored.get("values", {}) if stored_path.exists()
                                          else {}, sweep)
    write_atomically(stored_path, json.dumps(definition, indent=2, sort_keys=True) + "\n")
    return read_summary(directory / SUMMARY, sweep.keys)


def _merged_values(old, sweep):
    """Every value swept in this DIR so far, per key (a resumed sweep may add values)."""
    merged = {k: list(v) for k, v in old.items()}
    for key, values in sweep.vary:
        merged.setdefault(key, [])
        merged[key] += [v for v in values if v not in merged[key]]
    return merged


def columns(keys):
    return [*keys, *METRIC_COLUMNS, *RESULT_COLUMNS]


def read_summary(path, keys):
    """Rows of an existing summary by point key (empty when there is none)."""
    path = Path(path)
    if not path.exists():
        return {}
    with path.open(newline="") as handle:
        reader = csv.DictReader(handle)
        if list(reader.fieldnames or []) != columns(keys):
            raise SweepError(f"{path}: its columns are not this sweep's; use another -o DIR")
        return {point_key(row, keys): row for row in reader}


def write_summary(path, keys, rows):
    """Write the summary rows (dicts) in one replace, so a reader never sees half a file."""
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=columns(keys), lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({c: _cell(row.get(c)) for c in columns(keys)})
    write_atomically(path, out.getvalue())


def _cell(value):
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.6g}"
    return value


def write_atomically(path, data):
    """Write ``data`` (text or bytes) beside ``path`` and rename it into place."""
    path = Path(path)
    tmp = temporary_path(path)
    mode = "wb" if isinstance(data, bytes) else "w"
    try:
        with open(tmp, mode) as handle:
            handle.write(data)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
