"""The C heap of a process that writes a trace: large blocks go back to the system when freed.

A writer allocates and frees blocks of a few MiB all run long: numpy batches of task
rows, SQLite's sorter buffers at finalize. glibc serves a block that large with its own
``mmap`` and unmaps it when freed, but after the first such free it raises that
threshold to the block's size (up to 32 MiB), so every later batch comes from the heap,
where freed space stays resident. The process's peak then kept rising with the trace
for no live data (measured with memray and the peak RSS: 2M tasks 10 MiB above the
same run with the threshold fixed). Fixing the threshold (``mallopt``) stops that
adjustment. Other C libraries have no ``mallopt``; their processes are left as they are.
"""
import ctypes
import ctypes.util
import functools

M_MMAP_THRESHOLD = -3  # glibc's <malloc.h>
MMAP_THRESHOLD_BYTES = 128 * 1024  # glibc's own starting value, kept for good


@functools.cache
def map_large_blocks() -> bool:
    """Serve every block of ``MMAP_THRESHOLD_BYTES`` or more with its own mapping, for
    the rest of the process (once per process; True where the C library allows it)."""
    name = ctypes.util.find_library("c")
    mallopt = getattr(ctypes.CDLL(name), "mallopt", None) if name else None
    return bool(mallopt and mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES) == 1)
