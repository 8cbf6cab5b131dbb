"""Device memory as the host program sees it: buffers with addresses, local sizes.

A ``Buffer`` is a numpy array placed at a byte address in the GPU's global address
space by a ``Memory`` allocator. Kernels read and write the array in place, so the
host sees results directly. Addresses are what the timing model's caches see: a
buffer reused across launches (PageRank's ping-pong vectors) keeps its address, so
the second launch can hit in the caches the first one filled.

``LocalMem(n)`` is the host's way to size a ``local`` pointer argument (OpenCL's
``clSetKernelArg(k, i, bytes, NULL)``), counted in elements of the pointer type.
"""
from dataclasses import dataclass

import numpy as np

ALIGNMENT = 4096  # buffers start on a page, as OpenCL runtimes place them


@dataclass
class Buffer:
    """A global-memory array at byte address ``base``."""

    name: str
    array: np.ndarray
    base: int

    @property
    def nbytes(self):
        return self.array.nbytes


@dataclass(frozen=True)
class LocalMem:
    """A ``local`` pointer argument: ``elements`` of the pointer's element type per group."""

    elements: int


class Memory:
    """A bump allocator for the global address space of one simulated run."""

    def __init__(self, start=0x100000):
        self.next = start
        self.buffers = []

    def buffer(self, name, array):
        """Place ``array`` (kept, not copied) at the next aligned address."""
        array = np.ascontiguousarray(array)
        buf = Buffer(name, array, self.next)
        self.buffers.append(buf)
        self.next += -(-max(array.nbytes, 1) // ALIGNMENT) * ALIGNMENT
        return buf
