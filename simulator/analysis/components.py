"""The simulated GPU's component names, as the trace contract spells them.

The timing model names its locations ``GPU.SA[s].CU[c]`` with units ``.SIMD[i]``,
``.Scalar``, ``.Branch``, ``.LDS``, ``.VMem`` and ``.WFPool``; caches ``GPU.SA[s].L1V[c]``
and ``GPU.L2[b]`` (``GPU.XCD[x].L2[b]`` on a GPU of several XCDs); memory-side cache
slices ``GPU.MALL[m]``; memory channels ``GPU.DRAM[m]`` (``simulator/gpu/trace_vocabulary.py``,
which the analysis room may not import: it reads the names from the file, and
tests/test_analysis.py checks the two agree). Counts of units come from the run's
configuration, not from the names found, because a unit that did nothing in a window
still counts towards its peak.
"""
from __future__ import annotations

import re
from collections.abc import Iterable

import numpy as np

CU_NAME = re.compile(r"GPU\.SA\[\d+\]\.CU\[(\d+)\](?:\.(SIMD|Scalar|Branch|LDS|VMem|WFPool)(?:\[\d+\])?)?")
MEMORY_NAME = re.compile(r"GPU\.(?:(?:SA|XCD)\[\d+\]\.)?(L1V|L2|MALL|DRAM)\[(\d+)\]")

UNIT_OF_INST = {"VALU": "SIMD", "SALU": "Scalar", "Branch": "Branch", "LDS": "LDS",
                "VMEM": "VMem", "Barrier": "WFPool"}
"""The unit location each instruction kind runs at."""

MEMORY_LEVELS = ("L1V", "L2", "MALL", "DRAM")


class Components:
    """Location ids of the trace grouped by what they are: CUs and their units, and
    the memory levels, each with its instance number."""

    def __init__(self, rows: Iterable[tuple[int, str]]) -> None:
        self.name: dict[int, str] = {}
        self.cu_of: dict[int, int] = {}          # CU location or unit -> CU number
        self.units: dict[str, list[int]] = {}    # '' (the CU itself), 'SIMD', ... -> ids
        self.memory: dict[str, dict[int, int]] = {level: {} for level in MEMORY_LEVELS}
        for key, name in rows:
            self.name[key] = name
            match = CU_NAME.fullmatch(name)
            if match:
                self.cu_of[key] = int(match[1])
                self.units.setdefault(match[2] or "", []).append(key)
                continue
            match = MEMORY_NAME.fullmatch(name)
            if match:
                self.memory[match[1]][key] = int(match[2])

    def unit(self, unit: str) -> list[int]:
        """Location ids of every CU's ``unit`` ('' for the CUs themselves)."""
        return sorted(self.units.get(unit, ()))

    def cu_index(self, locations: np.ndarray) -> np.ndarray:
        """The CU number of each location id (of a CU or one of its units)."""
        table = np.full(max(self.name, default=-1) + 1, -1, dtype=np.int64)
        for key, cu in self.cu_of.items():
            table[key] = cu
        return table[np.asarray(locations, dtype=np.int64)]

    def cu_name(self, cu: int) -> str:
        """The CU's own location name (``GPU.SA[s].CU[c]``)."""
        for key in self.units.get("", ()):
            if self.cu_of[key] == cu:
                return self.name[key]
        return f"CU[{cu}]"
