"""The traces the app serves, and the per-trace facts every page needs.

A catalogue is either a directory of trace files or one file. Pages name a trace by
its file name only; ``path`` accepts nothing else, so a URL can never reach a file
outside the catalogue. ``TraceMeta`` (locations, kinds, colours, pyramid base) is read
once per file version and cached, keyed by path, size and modification time.
"""
import functools
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from . import colors, queries

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
    cache: dict = field(default_factory=dict, compare=False, repr=False)
    """Derived facts computed on first use (such as a location's longest request wait)."""

    @property
    def start_ps(self):
        return self.run["virtual_start_ps"] or 0

    @property
    def end_ps(self):
        return max(self.run["virtual_end_ps"] or 0, self.start_ps + 1)

    def category_mask(self, category):
        """A boolean array indexed by kind id: True for kinds of ``category``."""
        key = ("category_mask", category)
        if key not in self.cache:
            mask = np.zeros(max(self.kinds, default=-1) + 1, dtype=bool)
            mask[[k for k, v in self.kinds.items() if v.category == category]] = True
            self.cache[key] = mask
        return self.cache[key]

    def kind_label(self, kind_id):
        """Daisen's legend key ``category-action`` of a kind."""
        k = self.kinds[kind_id]
        return f"{k.category}-{k.action}"


def trace_meta(path):
    """The cached ``TraceMeta`` of the current version of the file at ``path``."""
    path = Path(path)
    stat = path.stat()
    return _meta(str(path.resolve()), stat.st_mtime_ns, stat.st_size)


# A TraceMeta is tens of kilobytes (names, kinds, a summary), so a whole directory of
# traces fits: the Traces page lists every one on each visit.
@functools.lru_cache(maxsize=512)
def _meta(path, _mtime_ns, _size):
    with queries.open_trace(path) as db:
        version = queries.trace_format(db)
        if version != queries.TRACE_FORMAT:
            raise queries.TraceError(
                f"{Path(path).name} is in trace format {version}, and this app reads format"
                f" {queries.TRACE_FORMAT}: simulate or import it again")
        run = queries.run_info(db)
        if not run["finalized"]:
            raise queries.TraceError(
                f"{Path(path).name}: not finalized yet (the run may still be writing it)")
        kinds = {k.id: k for k in queries.kinds(db)}
        locs = tuple(queries.locations(db))
        count = queries.task_count(db)
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
        req_out_kinds=tuple(k for k, v in kinds.items() if v.category == "req_out"))


_DIGITS = re.compile(r"(\d+)")


def natural_key(name):
    """Sort key putting CU[2] before CU[10]."""
    return [(0, int(part), "") if part.isdigit() else (1, 0, part)
            for part in _DIGITS.split(name)]
