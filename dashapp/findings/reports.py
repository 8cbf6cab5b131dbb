"""The analysis report of a trace (``simulator.analysis.report.analyze``), made once per
file version, launch and thresholds. A simulator trace is explained per kernel launch;
an imported profile (``run.source`` another tool) as a whole, or the GPU work of one of
its ranges or profiler steps (``ProfileQuery``), by the profile analyses
(``simulator.analysis.profile``: devices, findings, no launches).

An analysis reads every task of a launch and takes seconds on a large trace, so the page
starts it in the background as its layout is built (``start``) and its callback, sent
once the page is drawn, collects it (its loading state shows meanwhile; other pages are
served by other threads). Reports are kept in memory keyed on the file's identity
(``TraceMeta.version``: a rewritten file is analysed again). Two requests for the same
report while it is being made wait for the one analysis, not two.
"""
from __future__ import annotations

import threading
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import NamedTuple

from simulator.analysis.profile.report import analyze_profile
from simulator.analysis.report import analyze
from simulator.analysis.thresholds import Thresholds
from simulator.analysis.trace import Kernel, Trace, TraceError

from ..catalog import LRU, TraceMeta

REPORTS = 32
"""Reports kept: each is tens of kilobytes per launch (per-CU CPI stacks)."""

AnalysisError = TraceError
"""What the analysis raises for a trace it cannot read or explain (one line)."""


class ProfileQuery(NamedTuple):
    """What a profile's report is asked for beyond its window and thresholds: a range
    (``NAME`` or ``NAME#k``) or profiler step to cut it to, and the range or kernel
    whose instances delimit its iterations (None: the profiler steps)."""

    range: str | None = None
    step: int | None = None
    pace: str | None = None


class NotSimulated(Exception):
    """A trace the analysis cannot explain yet: a run still being written."""


class Once:
    """A thread-safe cache of values (reports, comparisons) that makes each at most once
    at a time: a second request for one under way waits for it."""

    def __init__(self, size: int) -> None:
        self._done = LRU(size)
        self._making: dict[tuple, Future] = {}
        self._lock = threading.Lock()

    def get(self, key: tuple, make) -> object:
        found = self._done.get(key)
        if found is not None:
            return found
        with self._lock:
            future = self._making.get(key)
            owner = future is None
            if owner:
                future = self._making[key] = Future()
        if not owner:
            return future.result()
        try:
            value = make()
        except BaseException as exc:
            future.set_exception(exc)
            raise
        else:
            future.set_result(self._done.put(key, value))
            return value
        finally:
            with self._lock:
                del self._making[key]


_REPORTS = Once(REPORTS)
_BACKGROUND = ThreadPoolExecutor(max_workers=1, thread_name_prefix="findings")
"""Analyses started ahead of their page's callback, one at a time: the machine's other
requests keep the rest of its cores."""


def is_profile(meta: TraceMeta) -> bool:
    """Whether the trace was imported from another tool's profile (no launches)."""
    return meta.run.get("source") != "simulator"


def _check(meta: TraceMeta) -> None:
    if meta.live is not None:
        raise NotSimulated("This run is still being written (or was interrupted): its"
                           " findings can be computed once its trace is finished.")


def launches(meta: TraceMeta) -> list[Kernel]:
    """The trace's kernel launches as the analysis numbers them (``kernel=`` is an index
    into this list); none for a profile, which is explained whole."""
    _check(meta)
    if is_profile(meta):
        return []

    def make():
        with Trace(meta.path) as trace:
            return trace.kernels()
    return _REPORTS.get((meta.version, meta.path, "launches"), make)


def report(meta: TraceMeta, kernel: int | None, thresholds: Thresholds,
           window: tuple[int, int] | None = None, query: ProfileQuery | None = None) -> dict:
    """The report of launch ``kernel`` (None: every launch) of the trace ``meta``
    describes, cut to ``window`` (ps; None: whole launches), under ``thresholds``; a
    profile's as ``query`` asks (the GPU work of a range or step; a pace's subject):
    ``{"kernels": [...], "findings": [...]}`` (a profile's also holds ``devices`` and
    ``analyses``; its ``kernel`` is None). A window that overlaps no launch raises
    ``ValueError`` with the analysis's one-line message, a range the profile lacks an
    ``AnalysisError``."""
    _check(meta)
    path: Path = meta.path
    if query is not None:
        return _REPORTS.get((meta.version, path, window, thresholds, query), lambda: analyze_profile(
            path, window, thresholds, range_name=query.range, step=query.step, pace_of=query.pace))
    return _REPORTS.get((meta.version, path, kernel, thresholds, window),
                        lambda: analyze(path, kernel=kernel, window=window, thresholds=thresholds))


def start(meta: TraceMeta, kernel: int | None, thresholds: Thresholds,
          window: tuple[int, int] | None = None, query: ProfileQuery | None = None) -> None:
    """Begin making ``report(meta, kernel, thresholds, window, query)`` in the
    background, so that the page's callback finds it made or under way (a failure is
    the callback's to report)."""
    in_background(report, meta, kernel, thresholds, window, query)


def in_background(make, *args) -> None:
    """Call ``make(*args)``, a cached maker such as ``report``, in the background, so
    that the page's callback finds its value made or under way (a failure is the
    callback's to report, when it makes the value again)."""
    _BACKGROUND.submit(_quietly, make, *args)


def _quietly(make, *args) -> None:
    try:
        make(*args)
    except Exception:  # noqa: BLE001 - made again, and reported, by the callback
        pass
