"""The traces the app serves, and the per-trace facts every page needs.

A catalogue is either a directory of trace files or one file. Pages name a trace by
its file name only; ``path`` accepts nothing else, so a URL can never reach a file
outside the catalogue. A trace a command is still writing is served under the name of
its file, ``.NAME.partial-PID`` (``live``), as long as that file is there.

``TraceMeta`` (locations, kinds, colours, pyramid base) is read once per file version
and kept in an ``LRU`` keyed on the file's identity (device, inode, size, modification
time: a file replaced or rewritten is read again); each keeps the facts views derive
from it (a location's long tasks, filter results...) in an ``LRU`` of its own, which is
their only writer. A trace still being written grows in its WAL log, so its metadata
is kept apart, keyed on the identity of the file and of its log (``LIVE_METAS``): each
commit of the writer makes a new version, and the versions of a growing trace never
push finished traces out of the cache.
"""
import json
import os
import re
import threading
from collections import OrderedDict
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from . import colors, live, queries
from .units import absolute_time

TRACE_SUFFIXES = (".sqlite", ".sqlite3", ".db")
SWEEP_SUMMARY = "summary.csv"
SWEEP_DEFINITION = "sweep.json"
VALIDATION_REPORT = "validation.json"
"""The report of ``python -m simulator validate -o DIR`` in its directory."""
MAX_DEFINITION_BYTES = 1 << 20
"""A sweep.json larger than this is not read (a definition is a few hundred bytes)."""


class UnknownTrace(LookupError):
    """A trace name that is not in the catalogue."""


class NotReadableYet(UnknownTrace):
    """A trace being written with a rollback journal: it opens once it is finished."""


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

        A trace of a sweep or a validation is named ``FOLDER/FILE`` (see
        ``sweep_traces``); one being written, by its file's name (see ``unfinished``)."""
        if name in self.names():
            return self.directory / name
        folder, sep, file = name.partition("/")
        if sep and (folder in self.sweeps() or folder in self.validations()) \
                and file in self.folder_traces(folder):
            return self.directory / folder / file
        if live.partial_of(name):
            for entry in self.unfinished():
                if entry.name == name:
                    if not entry.readable:
                        raise NotReadableYet(
                            f"{entry.target} is being written (process {entry.pid}) with a"
                            " rollback journal, which a reader would hold back: it opens"
                            " once it is finished")
                    return self.directory / name
        raise UnknownTrace(name)

    def unfinished(self) -> list[live.Unfinished]:
        """The traces commands are writing, or were writing when they were killed
        (``live.Unfinished``: hidden ``.NAME.partial-PID`` files)."""
        only = self.single.name if self.single is not None else None
        return live.unfinished_in(self.directory, TRACE_SUFFIXES, only)

    def finished_as(self, name: str) -> str | None:
        """The trace that the unfinished file ``name`` became, once its writer renamed it
        into place: its target, if that is served and ``name`` is gone; else None."""
        found = live.partial_of(name)
        if found is None or (self.directory / name).exists():
            return None
        return found[0] if found[0] in self.names() else None

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
        return self.folder_traces(self.sweep_path(name).name)

    def validations(self):
        """Names of the validation directories (``python -m simulator validate -o DIR``)
        in the trace directory: the folders holding a ``validation.json``."""
        if self.single is not None or not self.directory.is_dir():
            return []
        return sorted(p.name for p in self.directory.iterdir()
                      if p.is_dir() and (p / VALIDATION_REPORT).is_file())

    def validation_path(self, name):
        """The folder of validation ``name``; raises ``UnknownTrace`` for anything
        unlisted."""
        if name not in self.validations():
            raise UnknownTrace(name)
        return self.directory / name

    def folder_traces(self, name):
        """File names of the traces in folder ``name`` of the trace directory, sorted."""
        return sorted(p.name for p in (self.directory / name).iterdir()
                      if p.is_file() and p.suffix in TRACE_SUFFIXES)

    def sweep_note(self, name):
        """What sweep ``name`` is for, as its ``--note`` said (kept in its sweep.json);
        None without one or when the file cannot be read."""
        path = self.sweep_path(name) / SWEEP_DEFINITION
        try:
            with open(path, "rb") as handle:
                definition = json.loads(handle.read(MAX_DEFINITION_BYTES))
        except (OSError, ValueError):
            return None
        note = definition.get("note") if isinstance(definition, dict) else None
        return note if isinstance(note, str) and note.strip() else None

    def default(self):
        """The trace written last (the run just made, typically), or None when there is
        none; by name among traces written at the same instant."""
        return next(iter(self.newest_first()), None)

    def newest_first(self):
        """The traces' names, the one written last first."""
        def written(name):
            try:
                return (self.directory / name).stat().st_mtime_ns
            except OSError:  # removed meanwhile
                return 0
        return sorted(self.names(), key=lambda name: (-written(name), name))


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
LIVE_METAS = 16
"""Versions of traces being written whose metadata is kept: the latest of each, and
the ones requests under way still use."""


@dataclass(frozen=True)
class Live:
    """What a trace still being written holds so far (``TraceMeta.live``)."""
    path: Path
    tasks: int  # the largest task key written + 1
    reached_ps: int  # the end of the bins the metric pyramid holds: the run so far
    expected_tasks: int = None  # tasks the run will write, when its configuration says

    @property
    def writer(self):
        """Who writes it, and whether they still run: asked each time (the file does
        not change when its writer is killed, so nothing cached may say)."""
        return live.writer_of(self.path)

    @property
    def running(self):
        return self.writer.running


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
    live: Live = None
    """For a trace not finalized yet (being written, or left by a killed run): what it
    holds so far; None for a finished trace."""
    version: tuple = ()
    """The identity of the file version read (and of its WAL log while it is written):
    what a cache of answers about this trace is keyed on, beside ``path``."""
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
        end = self.live.reached_ps if self.live is not None else self.run["virtual_end_ps"]
        return max(end or 0, self.start_ps + 1)

    @property
    def query_seconds(self):
        """The time limit of one query on this trace: shorter while it is written, since
        its task table has no index yet and the writer wants the machine."""
        return queries.QUERY_SECONDS if self.live is None else queries.LIVE_QUERY_SECONDS

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

    @property
    def simulated(self):
        """Whether the times are a simulator's (ours, or an imported akita/Daisen trace's)
        rather than a profiled run's."""
        return self.run.get("clock") in (None, "simulation")

    def absolute(self, ps):
        """Relative time ``ps`` on the run's own clock (a UTC time for a profile taken on
        the Unix clock), or None for a simulator trace."""
        return absolute_time(self.run.get("time_origin"), self.run.get("clock"), ps)

    def _metadata(self):
        """``run.metadata`` as a dict (empty when absent or not a JSON object)."""
        try:
            metadata = json.loads(self.run.get("metadata") or "{}")
        except json.JSONDecodeError:
            return {}
        return metadata if isinstance(metadata, dict) else {}

    def devices(self):
        """The GPUs the source describes (Nsight Systems ``gpus``, Kineto
        ``deviceProperties``), one line each: name, SMs, clock, memory."""
        metadata = self._metadata()
        found = metadata.get("gpus") or metadata.get("deviceProperties") or []
        return [_device_line(d) for d in found if isinstance(d, dict)] if isinstance(found, list) else []

    @property
    def simulated_gpu(self):
        """Which GPU a simulator run simulated, in one line (``mi300x preset: 304 CUs at
        2,100 MHz``): the preset its configuration names (``--gpu``; its ``--set``
        overrides are in the configuration itself); None for an imported trace."""
        if self.run.get("source") != "simulator":
            return None
        cfg = self.config if isinstance(self.config, dict) else {}
        preset = cfg.get("preset")
        name = f"{preset} preset" if isinstance(preset, str) else \
            "no preset recorded (a run from before presets)"
        try:
            cus = cfg["gpu"]["shader_arrays"] * cfg["gpu"]["cus_per_shader_array"]
            return f"{name}: {cus:,} CUs at {cfg['clock_mhz']:,} MHz"
        except (KeyError, TypeError):  # a configuration of another model
            return name

    @property
    def note(self):
        """What a simulator run is for, as its ``--note`` said; None without one."""
        note = self._metadata().get("note") if self.run.get("source") == "simulator" else None
        return note if isinstance(note, str) and note.strip() else None

    def order_key(self, loc):
        """Display order: the source's sort index (Chrome metadata) first, then natural."""
        return (loc.sort_index is None, loc.sort_index or 0, natural_key(loc.name))

    def kind_label(self, kind_id):
        """Daisen's legend key ``category-action`` of a kind; just the category when the
        action repeats it (``work-group``, not ``work-group-work-group``)."""
        k = self.kinds[kind_id]
        return k.category if k.action == k.category else f"{k.category}-{k.action}"


_METAS = LRU(METAS)
_LIVE_METAS = LRU(LIVE_METAS)


def trace_meta(path):
    """The cached ``TraceMeta`` of the current version of the file at ``path``."""
    path = Path(path).resolve()
    key = identity(path)
    found = _METAS.get(key)
    if found is not None:
        return found
    live_key = (key, _log_identity(path))
    found = _LIVE_METAS.get(live_key)
    if found is not None:
        return found
    meta = _read_meta(path)
    if meta.live is None:
        return _METAS.put(key, replace(meta, version=key))
    return _LIVE_METAS.put(live_key, replace(meta, version=live_key))


def _log_identity(path):
    """The identity of the WAL log beside ``path``, or None when there is none."""
    try:
        return identity(f"{path}-wal")
    except OSError:
        return None


def _read_meta(path):
    with queries.open_trace(path) as db, queries.snapshot(db):
        version = queries.trace_format(db)
        if version not in queries.READABLE_FORMATS:
            raise queries.TraceError(
                f"{Path(path).name} is in trace format {version}, and this app reads formats"
                f" {', '.join(map(str, queries.READABLE_FORMATS))}: simulate or import it again")
        run = dict(queries.run_info(db), format=version)
        kinds = {k.id: k for k in queries.kinds(db)}
        count = queries.task_count(db)
        counters = tuple(queries.counter_series(db)) if version >= 2 else ()
        if run["finalized"]:
            locs, now = tuple(queries.locations(db)), None
        else:
            locs = tuple(queries.live_locations(db, run["pyramid_base_ps"] or 1))
            now = Live(Path(path), count,
                       max((x.last_end_ps for x in locs if x.has_tasks), default=0))
    try:
        config = json.loads(run["config"] or "{}")
    except json.JSONDecodeError:
        config = {"unparsed": run["config"]}
    if now is not None and run["workload"] == "synthetic" and isinstance(config.get("tasks"), int):
        now = replace(now, expected_tasks=config["tasks"])  # synth says how many it writes
    labels = {k: f"{v.category}-{v.action}" for k, v in kinds.items()}
    return TraceMeta(
        path=Path(path), run=run, config=config, task_count=count, locations=locs,
        by_name={loc.name: loc for loc in locs}, kinds=kinds,
        colours=colors.kind_colours(labels), base_ps=run["pyramid_base_ps"] or 1,
        req_in_kinds=tuple(k for k, v in kinds.items() if v.category == "req_in"),
        req_out_kinds=tuple(k for k, v in kinds.items() if v.category == "req_out"),
        counters=counters, live=now)


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
