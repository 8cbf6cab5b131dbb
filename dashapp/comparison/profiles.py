"""Two profiles compared on the Compare page (I13): their operations by name in HTA
TraceDiff's categories, and the figures of their analyses side by side (the time
budget, idle causes, launch statistics, critical-path shares, pace).

The computation is the analysis room's (``simulator.analysis.profile.diff``); the
reports come from the Findings page's cache (``findings.reports``: made once per file
version), each profile's operation summary is kept with its metadata.
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
from simulator.analysis.profile.trace import ProfileTrace
from simulator.analysis.thresholds import Thresholds

from ..catalog import TraceMeta
from ..findings import reports


@dataclass
class ProfileDiff:
    ops: list[dict]             # per name, the largest change of total time first
    categories: dict[str, int]  # names per ops_diff category, in CATEGORIES order
    rows: list[Row]             # the analyses' figures, A and B
    devices: tuple[list, list]  # the I1 rows of A and of B


def _ops(meta: TraceMeta) -> dict[str, tuple[int, int]]:
    def make():
        with ProfileTrace(meta.path) as trace:
            return ops_summary(load(trace))
    return meta.memo("profile_ops", make)


def profile_diff(meta_a: TraceMeta, meta_b: TraceMeta) -> ProfileDiff:
    """The diff of two whole profiles under the default thresholds."""
    query = reports.ProfileQuery()
    a, b = (reports.report(m, None, Thresholds(), None, query) for m in (meta_a, meta_b))
    ops = ops_diff(_ops(meta_a), _ops(meta_b))
    found = Counter(r["category"] for r in ops)
    return ProfileDiff(ops, {c: found[c] for c in CATEGORIES}, analyses_diff(a, b),
                       (a["devices"], b["devices"]))
