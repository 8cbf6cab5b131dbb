"""I9 overlap: how much of one class of GPU work runs under another, per device.

Communication/computation (``hta/analyzers/communication_analysis.py:get_comm_comp_overlap``):
|∪ computation ∩ ∪ communication| ÷ |∪ communication|. Copy/compute likewise: the share
of copy and memset time (∪ memory) under a computation kernel. Times are exact ps; a
share is None where its denominator is empty.
"""
from __future__ import annotations

import numpy as np

from ..intervals import covered, merge
from .ops import COMMUNICATION, COMPUTE, MEMORY, Profile


def _under(on, part: int, cover: int) -> tuple[int, int]:
    """(|∪ part ∩ ∪ cover|, |∪ part|) in ps."""
    ps, pe = merge(on.start[on.cls == part], on.end[on.cls == part])
    cs, ce = merge(on.start[on.cls == cover], on.end[on.cls == cover])
    return covered(cs, ce, ps, pe), int((pe - ps).sum())


def overlap(profile: Profile) -> list[dict]:
    """One row per device: the communication and copy time, and how much of each a
    computation kernel overlaps."""
    ops = profile.ops
    out = []
    for device in np.unique(ops.device).tolist():
        on = ops.take(ops.device == device)
        comm_under, comm = _under(on, COMMUNICATION, COMPUTE)
        copy_under, copy = _under(on, MEMORY, COMPUTE)
        out.append({"device": device, "communication_ps": comm, "comm_overlapped_ps": comm_under,
                    "comm_overlap": comm_under / comm if comm else None,
                    "copy_ps": copy, "copy_overlapped_ps": copy_under,
                    "copy_overlap": copy_under / copy if copy else None})
    return out
