"""The traces the app serves, and the per-trace facts every page needs.

A catalogue is either a directory of trace files or one file. Pages name a trace by
its file name only; ``path`` accepts nothing else, so a URL can never reach a file
outside the catalogue. ``TraceMeta`` (locations, kinds, colours, pyramid base) is read
once per file version and kept in an ``LRU`` keyed on the file's identity (device,
inode, size, modification time: a file replaced or rewritten is read again); each
keeps the facts views derive from it (a location's long tasks, filter results...) in
an ``LRU`` of its own, which is their only writer.
"""
import json
import os
import re
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from . import colors, queries
from .units import absolute_time

TRACE_SUFFIXES = (".sqlite", ".sqlite3", ".db")
SWEEP_SUMMARY = "summary.csv"


class UnknownTrace(LookupError):
    """A trace name that is not in the catalogue."""


class Catalog:
    """The trace files of a directory (``trace_dir``) or a single file (``trace``)."""

    def __init__(self, trace_dir=None, trace=None):
        if (trace_dir is None) == (trace is None):
            raise ValueError("give exactly one of trace_dir and trace")
        self.single = Path(trace) if trace is not None else None
        self.directory = Path(trace_dir) if trace_dir is not None else self.single.parent

    def names(self):
        """File names of the served traces, sorted."""
        if self.single is not None:
            return [self.single.name] if self.single.is_file() else []
        if not self.directory.is_dir():
            return []
        return sorted(p.name for p in self.directory.iterdir()
                      if p.is_file() and p.suffix in TRACE_SUFFIXES)

    def path(self, name):
        """The path of trace ``name``; raises ``UnknownTrace`` for anything unlisted.

        A trace of a sweep is named ``SWEEP/FILE`` (see ``sweep_traces``)."""
        if name in self.names():
            return self.directory / name
        folder, sep, file = name.partition("/")
        if sep and folder in self.sweeps() and file in self.sweep_traces(folder):
            return self.directory / folder / file
        raise UnknownTrace(name)

    def sweeps(self):
        """Names of the sweep directories (``python -m simulator sweep -o DIR``) in the
        trace directory: the folders holding a ``summary.csv``."""
        if self.single is not None or not self.directory.is_dir():
            return []
        return sorted(p.name for p in self.directory.iterdir()
                      if p.is_dir() and (p / SWEEP_SUMMARY).is_file())

    def sweep_path(self, name):
        """The folder of sweep ``name``; raises ``UnknownTrace`` for anything unlisted."""
        if name not in self.sweeps():
            raise UnknownTrace(name)
        return self.directory / name

    def sweep_traces(self, name):
        """File names of the traces in sweep ``name``, sorted."""
        folder = self.sweep_path(name)
        return sorted(p.name for p in folder.iterdir()
                      if p.is_file() and p.suffix in TRACE_SUFFIXES)

    def default(self):
        """The first trace, or None when there is none."""
        names = self.names()
        return names[0] if names else None


class LRU:
    """A thread-safe map that keeps its ``size`` most recently used entries."""

    def __init__(self, size):
        self.size = size
        self._items = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self):
        return len(self._items)

    def get(self, key, default=None):
        with self._lock:
            if key not in self._items:
                return default
            self._items.move_to_end(key)
            return self._items[key]

    def put(self, key, value):
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self.size:
                self._items.popitem(last=False)
        return value

    def get_or_make(self, key, make):
        """The entry of ``key``, made by ``make()`` if missing (outside the lock: two
        threads may both make it, and one result is kept; an exception keeps nothing)."""
        missing = object()
        found = self.get(key, missing)
        return self.put(key, make()) if found is missing else found


def identity(path):
    """What tells one version of a file from another: (device, inode, size, mtime in ns)."""
    stat = os.stat(path)
    return stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns


DERIVED_ENTRIES = 4096
"""Derived facts kept per trace: two per location plus the last filters and orders."""
METAS = 512
"""Traces whose metadata is kept: a TraceMeta is tens of kilobytes (names, kinds, a
summary), so a whole directory of traces fits; the Traces page lists every one."""


@dataclass(frozen=True)
class TraceMeta:
    """What every view of one trace needs, read once."""
    path: Path
    run: dict
    config: dict
    task_count: int
    locations: tuple
    by_name: dict
    kinds: dict
    colours: dict
    base_ps: int
    req_in_kinds: tuple
    req_out_kinds: tuple
    counters: tuple = ()
    """Counter series (id, location, name, unit) of the trace (format 2)."""
    derived: LRU = field(default_factory=lambda: LRU(DERIVED_ENTRIES), compare=False,
                         repr=False)
    """Facts derived on first use (a location's longest request wait, filter results)."""

    def memo(self, key, make):
        """The derived fact ``key`` of this trace version, made by ``make()`` once."""
        return self.derived.get_or_make(key, make)

    @property
    def start_ps(self):
        return self.run["virtual_start_ps"] or 0

    @property
    def end_ps(self):
        return max(self.run["virtual_end_ps"] or 0, self.start_ps + 1)

    def category_mask(self, category):
        """A boolean array indexed by kind id: True for kinds of ``category``."""
        def make():
            mask = np.zeros(max(self.kinds, default=-1) + 1, dtype=bool)
            mask[[k for k, v in self.kinds.items() if v.category == category]] = True
            return mask
        return self.memo(("category_mask", category), make)

    @property
    def format(self):
        return self.run.get("format", 1)

    def absolute(self, ps):
        """Relative time ``ps`` on the run's own clock (a UTC time for a profile taken on
        the Unix clock), or None for a simulator trace."""
        return absolute_time(self.run.get("time_origin"), self.run.get("clock"), ps)

    def devices(self):
        """The GPUs the source describes (Nsight Systems ``gpus``, Kineto
        ``deviceProperties``), one line each: name, SMs, clock, memory."""
        try:
            metadata = json.loads(self.run.get("metadata") or "{}")
        except json.JSONDecodeError:
            return []
        found = metadata.get("gpus") or metadata.get("deviceProperties") or []
        return [_device_line(d) for d in found if isinstance(d, dict)]

    def order_key(self, loc):
        """Display order: the source's sort index (Chrome metadata) first, then natural."""
        return (loc.sort_index is None, loc.sort_index or 0, natural_key(loc.name))

    def kind_label(self, kind_id):
        """Daisen's legend key ``category-action`` of a kind."""
        k = self.kinds[kind_id]
        return f"{k.category}-{k.action}"


_METAS = LRU(METAS)


def trace_meta(path):
    """The cached ``TraceMeta`` of the current version of the file at ``path``."""
    path = Path(path).resolve()
    return _METAS.get_or_make(identity(path), lambda: _read_meta(path))


def _read_meta(path):
    with queries.open_trace(path) as db:
        version = queries.trace_format(db)
        if version not in queries.READABLE_FORMATS:
            raise queries.TraceError(
                f"{Path(path).name} is in trace format {version}, and this app reads formats"
                f" {', '.join(map(str, queries.READABLE_FORMATS))}: simulate or import it again")
        run = dict(queries.run_info(db), format=version)
        if not run["finalized"]:
            raise queries.TraceError(
                f"{Path(path).name}: not finalized yet (the run may still be writing it)")
        kinds = {k.id: k for k in queries.kinds(db)}
        locs = tuple(queries.locations(db))
        count = queries.task_count(db)
        counters = tuple(queries.counter_series(db)) if version >= 2 else ()
    try:
        config = json.loads(run["config"] or "{}")
    except json.JSONDecodeError:
        config = {"unparsed": run["config"]}
    labels = {k: f"{v.category}-{v.action}" for k, v in kinds.items()}
    return TraceMeta(
        path=Path(path), run=run, config=config, task_count=count, locations=locs,
        by_name={loc.name: loc for loc in locs}, kinds=kinds,
        colours=colors.kind_colours(labels), base_ps=run["pyramid_base_ps"] or 1,
        req_in_kinds=tuple(k for k, v in kinds.items() if v.category == "req_in"),
        req_out_kinds=tuple(k for k, v in kinds.items() if v.category == "req_out"),
        counters=counters)


def _device_line(device):
    sms = device.get("smCount", device.get("numSms"))
    memory = device.get("totalMemory", device.get("totalGlobalMem"))
    clock = device.get("clockRate")  # nsys: Hz
    parts = [f"{sms} SMs" if sms else None,
             f"{clock / 1e9:.3g} GHz" if isinstance(clock, (int, float)) and clock > 1e6 else None,
             f"{memory / 2 ** 30:.1f} GiB" if isinstance(memory, (int, float)) else None]
    facts = ", ".join(p for p in parts if p)
    name = device.get("name") or f"GPU {device.get('id', '?')}"
    return f"{name} ({facts})" if facts else str(name)


_DIGITS = re.compile(r"(\d+)")


def natural_key(name):
    """Sort key putting CU[2] before CU[10]."""
    return [(0, int(part), "") if part.isdigit() else (1, 0, part)
            for part in _DIGITS.split(name)]
