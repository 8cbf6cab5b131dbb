"""Two profiles compared on the Compare page (I13): their operations by name in HTA
TraceDiff's categories, and the figures of their analyses side by side (the time
budget, idle causes, launch statistics, critical-path shares, pace), each side whole
or one of its profiler steps (by default its first, as HTA's ``compare_traces``).

The computation is the analysis room's (``simulator.analysis.profile.diff``). Seconds
of analysis on a training profile, so the page starts it in the background as its
layout is built (``start``) and its callback collects it under a loading state; a
comparison is kept per pair of file versions and steps, so a page seen again is drawn
at once. The reports behind it are the Findings page's (``findings.reports``: made once
per file version and step), each profile's operation summary is kept with its
metadata.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from simulator.analysis.profile.diff import (
    CATEGORIES,
    Row,
    analyses_diff,
    ops_diff,
    ops_summary,
)
from simulator.analysis.profile.ops import load
from simulator.analysis.profile.ranges import steps as recorded_steps
from simulator.analysis.profile.trace import ProfileTrace
from simulator.analysis.thresholds import Thresholds

from ..catalog import TraceMeta
from ..findings import reports
from ..urls import WHOLE_PROFILE

DIFFS = 16
"""Comparisons kept: a few hundred rows of figures and names each."""


@dataclass
class ProfileDiff:
    ops: list[dict]             # per name, the largest change of total time first
    categories: dict[str, int]  # names per ops_diff category, in CATEGORIES order
    rows: list[Row]             # the analyses' figures, A and B
    devices: tuple[list, list]  # the I1 rows of A and of B


def steps(meta: TraceMeta) -> list[int]:
    """The profiler steps the profile records (``ProfilerStep#N``), by number."""
    def make():
        with ProfileTrace(meta.path) as trace:
            return recorded_steps(trace)
    return meta.memo("profile_steps", make)


def chosen_step(asked: int | str | None, found: list[int], side: str
                ) -> tuple[int | None, list[str]]:
    """(the step to compare, None for the whole profile; messages) for the choice
    ``asked`` of a side whose profile records ``found``: None asks for the first step
    (the whole profile when it records none), ``WHOLE_PROFILE`` for the whole profile; a step it
    does not record falls back to the first, with a message."""
    if asked == WHOLE_PROFILE or not found:
        return None, []
    if asked is None or asked in found:
        return found[0] if asked is None else asked, []
    return found[0], [f"{side} has no ProfilerStep#{asked} (its steps are {found[0]} to"
                      f" {found[-1]}): showing ProfilerStep#{found[0]}."]


def asked_step(picked: int | str | None, found: list[int]) -> int | str | None:
    """A side's step choice for the URL from the step ``picked`` in its dropdown: None
    for its default (``chosen_step``), and for anything the profile does not offer."""
    default = found[0] if found else WHOLE_PROFILE
    if picked == default or (picked != WHOLE_PROFILE and picked not in found):
        return None
    return picked


def _ops(meta: TraceMeta, step: int | None) -> dict[str, tuple[int, int]]:
    def make():
        with ProfileTrace(meta.path) as trace:
            return ops_summary(load(trace), step)
    return meta.memo(("profile_ops", step), make)


def _diff(meta_a: TraceMeta, meta_b: TraceMeta, step_a: int | None,
          step_b: int | None) -> ProfileDiff:
    a, b = (reports.report(m, None, Thresholds(), None, reports.ProfileQuery(step=s))
            for m, s in ((meta_a, step_a), (meta_b, step_b)))
    ops = ops_diff(_ops(meta_a, step_a), _ops(meta_b, step_b))
    found = Counter(r["category"] for r in ops)
    return ProfileDiff(ops, {c: found[c] for c in CATEGORIES}, analyses_diff(a, b),
                       (a["devices"], b["devices"]))


_DIFFS = reports.Once(DIFFS)


def profile_diff(meta_a: TraceMeta, meta_b: TraceMeta, step_a: int | None = None,
                 step_b: int | None = None) -> ProfileDiff:
    """The diff of two profiles, each whole (None) or one profiler step, under the
    default thresholds; made once per pair of file versions and steps. A step the
    profile lacks raises ``reports.AnalysisError``."""
    key = (meta_a.version, meta_a.path, step_a, meta_b.version, meta_b.path, step_b)
    return _DIFFS.get(key, lambda: _diff(meta_a, meta_b, step_a, step_b))


def start(meta_a: TraceMeta, meta_b: TraceMeta, step_a: int | None,
          step_b: int | None) -> None:
    """Begin making ``profile_diff(meta_a, meta_b, step_a, step_b)`` in the background."""
    reports.in_background(profile_diff, meta_a, meta_b, step_a, step_b)
