"""The thresholds of the findings, each a parameter with its stated default (rule R3).

Sources are in why-layer.md §9.1; "(proposed)" marks values no anchor sets, to be tuned.
The CLI offers each as ``--NAME`` (underscores as dashes) with this text as its help.
"""
from __future__ import annotations

from dataclasses import dataclass, fields

HELP = {
    "tail_frac": "S1: the tail starts when fewer than this share of the peak of busy CUs hold"
                 " work-groups",
    "launch_share": "S1: report the launch overhead above this share of the launch (proposed)",
    "tail_share": "S1: report the tail when the CU-time it idles exceeds this share of the"
                  " launch (proposed)",
    "idle_share": "S10: report an idle class above this share of CU-time (proposed)",
    "dispatch_share": "S10: report dispatch-bound time above this share of the launch (proposed)",
    "not_issued": "S3: issue-limited when wavefronts are ready but not issued for more than"
                  " this share of their time (proposed)",
    "sol_bound": "S7: a unit at or above this share of its peak bounds the launch (Nsight"
                 " Compute)",
    "sol_latency": "S7: latency-bound when compute and memory are both below this share"
                   " (Nsight Compute)",
    "sol_gap": "S7: compute- or memory-heavier when they differ by at least this (Nsight"
               " Compute)",
    "divergent_wavefronts": "S12: divergence hint when this share of wavefronts diverge"
                            " (proposed)",
    "lds_conflict_rate": "S12: bank-conflict hint above this share of conflicted LDS"
                         " instructions (proposed)",
    "lds_degree": "S12: bank-conflict hint at this worst conflict degree (proposed)",
    "what_if_change": "S13: report a what-if whose speed-up differs from 1 by at least this",
}


@dataclass(frozen=True)
class Thresholds:
    tail_frac: float = 0.5
    launch_share: float = 0.1
    tail_share: float = 0.1
    idle_share: float = 0.05
    dispatch_share: float = 0.05
    not_issued: float = 0.3
    sol_bound: float = 0.8
    sol_latency: float = 0.6
    sol_gap: float = 0.1
    divergent_wavefronts: float = 0.5
    lds_conflict_rate: float = 0.1
    lds_degree: int = 2
    what_if_change: float = 0.05


def threshold_names() -> list[str]:
    return [f.name for f in fields(Thresholds)]
