"""Per-wavefront instruction streams: the hand-off from kernel execution to timing.

The SIMT executor (``simulator/kernels/simt.py``) runs a kernel on real data and records, for every
wavefront, the instructions it issued in program order. The timing model
(``simulator/gpu``) replays these streams against contended hardware. Nothing else
crosses this boundary, so streams can also be built by hand in tests.

A stream is a numpy structured array of ``INST_DTYPE`` records plus one flat int64
array of addresses that the memory records point into:

* ``unit``: one of the ``Unit`` codes;
* ``active``: number of active lanes in the EXEC mask (0..64);
* ``exec_lo``/``exec_hi``: the EXEC mask, lanes 0-31 and 32-63;
* ``passes``: LDS only, the bank-conflict degree: the largest number of distinct dword
  addresses that map to one of the 32 banks, maximised over the groups of lanes the
  LDS serves together (the two half-wavefronts for 32-bit accesses; 16-lane groups
  for 64-bit, 10-lane for 96-bit and 8-lane groups for 128-bit ones: 32 dwords per
  group, see ``kernels/wavefronts.py``); 1 means conflict free;
* ``lds_cycles``: LDS only, the passes the whole instruction takes: the sum of the
  conflict degrees of its lane groups (2 for a conflict-free 32-bit access by a full
  wavefront, 8 for a 128-bit one). Added after ``passes``; a timing model may use
  either;
* ``write``: 1 for a store (VMEM or LDS), 0 for a load; 2 for a global atomic, which
  travels as a store but returns the old value, so ``s_waitcnt`` waits for it as for a load;
* ``line``: source line of the statement that issued it (0 if none);
* ``addr_off``/``addr_cnt``: VMEM only, the slice of ``addresses`` holding the distinct
  64 B line addresses the active lanes touch (coalesced, in ascending order).

``WAITCNT`` makes the wavefront wait until all of its outstanding VMEM loads are back
(GCN ``s_waitcnt vmcnt(0)``), and the executor emits it before the first use of a load.
``END`` is the last record of every stream.

A launch's work-groups are a list (hand-built streams) or a ``WorkGroupSource``: the
kernel runs in batches of work-groups as the dispatcher asks for them, and a batch's
streams are dropped when its work-groups retire, so memory is bounded by the GPU, not
by the launch. ``StreamCounts`` sums the streams as they are made.
"""
from abc import ABC, abstractmethod
from collections.abc import Iterator
from dataclasses import dataclass, field
from enum import IntEnum

import numpy as np


class Unit(IntEnum):
    """The execution unit an instruction issues to."""

    VALU = 0
    SALU = 1
    LDS = 2
    VMEM = 3
    BRANCH = 4
    BARRIER = 5
    WAITCNT = 6
    END = 7


INST_DTYPE = np.dtype([
    ("unit", np.uint8),
    ("active", np.uint8),
    ("passes", np.uint8),
    ("write", np.uint8),
    ("line", np.uint32),
    ("exec_lo", np.uint32),
    ("exec_hi", np.uint32),
    ("addr_off", np.int64),
    ("addr_cnt", np.int32),
    ("lds_cycles", np.uint16),
])

LINE_BYTES = 64
LDS_BANKS = 32
WAVEFRONT_SIZE = 64


@dataclass
class WavefrontStream:
    """The instructions one wavefront issued, in order, ending with ``Unit.END``."""

    insts: np.ndarray                      # INST_DTYPE records
    addresses: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.int64))


@dataclass
class WorkGroupStream:
    """One work-group: its wavefronts and the resources it needs on a CU."""

    group_id: tuple                        # (x, y, z) work-group index
    wavefronts: list                       # WavefrontStream per wavefront
    lds_bytes: int = 0
    vgprs_per_wavefront: int = 32
    sgprs_per_wavefront: int = 16


@dataclass
class KernelLaunch:
    """One kernel launch as the Command Processor sees it."""

    name: str
    global_size: tuple
    local_size: tuple
    work_groups: "list | WorkGroupSource"  # WorkGroupStream, in dispatch order
    launch_id: int = 0


class WorkGroupSource(ABC):
    """A launch's work-groups, made on demand, in dispatch order, once.

    ``len`` is the launch's work-group count before any is made. The consumer calls
    ``plan(resident_wavefronts)`` first to say how many wavefronts it holds at once,
    which sizes the batches; ``seconds`` is the wall time spent making streams so far.
    """

    seconds: float = 0.0

    @abstractmethod
    def __len__(self) -> int: ...

    @abstractmethod
    def __iter__(self) -> Iterator[WorkGroupStream]: ...

    @abstractmethod
    def plan(self, resident_wavefronts: int) -> None: ...

    @abstractmethod
    def complete(self) -> None:
        """Make the work-groups not consumed yet, and drop their streams."""


def complete(launch: KernelLaunch) -> None:
    """Finish ``launch``: its work-groups all made (a list of streams has none left)."""
    if isinstance(launch.work_groups, WorkGroupSource):
        launch.work_groups.complete()


_VECTOR_UNITS = (Unit.VALU, Unit.LDS, Unit.VMEM)


@dataclass
class StreamCounts:
    """Totals over a launch's instructions (``END`` records left out), added batch by batch.

    Vector instructions are VALU, LDS and VMEM ones: those that run per lane, whose
    active lanes measure SIMD efficiency.
    """

    wavefronts: int = 0
    instructions: int = 0
    vector: int = 0
    vector_active_lanes: int = 0
    partial: int = 0                       # vector instructions with some lanes masked off
    lds: int = 0
    lds_conflicted: int = 0                # LDS instructions with a bank-conflict degree > 1
    lds_max_degree: int = 0
    valu_active_lanes: int = 0
    lds_active_lanes: int = 0

    def add(self, insts: np.ndarray) -> None:
        """Count ``insts``: the records of whole streams, each ending with its ``END``."""
        unit = insts["unit"]
        active = insts["active"]
        vector = np.isin(unit, _VECTOR_UNITS)
        lds = unit == Unit.LDS
        passes = insts["passes"][lds]
        ends = int(np.count_nonzero(unit == Unit.END))
        self.wavefronts += ends
        self.instructions += len(insts) - ends
        self.vector += int(np.count_nonzero(vector))
        self.vector_active_lanes += int(active[vector].sum())
        self.partial += int(np.count_nonzero(active[vector] < WAVEFRONT_SIZE))
        self.lds += int(np.count_nonzero(lds))
        self.lds_conflicted += int(np.count_nonzero(passes > 1))
        self.lds_max_degree = max(self.lds_max_degree, int(passes.max(initial=0)))
        self.valu_active_lanes += int(active[unit == Unit.VALU].sum())
        self.lds_active_lanes += int(active[lds].sum())


def make_stream(records, addresses=()):
    """Build a stream from dicts of fields (handy for hand-built tests)."""
    insts = np.zeros(len(records) + 1, dtype=INST_DTYPE)
    for i, rec in enumerate(records):
        for key, value in rec.items():
            insts[i][key] = value
    insts[-1]["unit"] = Unit.END
    return WavefrontStream(insts, np.asarray(addresses, dtype=np.int64))
