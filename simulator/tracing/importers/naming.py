"""Location names for profiles of real GPUs, shared by every importer of them.

A kernel or copy runs on a GPU stream, named ``GPU[0].stream[7]``; host work runs on a
CPU thread under its process, named ``python3.thread[19392]`` or ``saxpy.MPI Rank 0``.
Kineto (Chrome JSON) and Nsight Systems imports of the same program thus name the
same components alike, and the Overview sorts them naturally.
"""


def gpu(device: object) -> str:
    """A GPU by its device number: ``GPU[0]``."""
    return f"GPU[{device}]"


def stream(stream_id: object) -> str:
    """A stream's part of a location name: ``stream[7]``."""
    return f"stream[{stream_id}]"


def gpu_stream(device: object, stream_id: object) -> str:
    """The location of work on one stream of one GPU: ``GPU[0].stream[7]``."""
    return child(gpu(device), stream(stream_id))


def unnamed_thread(tid: object) -> str:
    """A thread without a name: ``thread[19392]``."""
    return f"thread[{tid}]"


def process(name: object, pid: object, shared: bool) -> str:
    """A process by its name, with ``[pid]`` when another process has the same name
    (MPI ranks); ``process[pid]`` when it has none."""
    if name is None:
        return f"process[{pid}]"
    return f"{name}[{pid}]" if shared else str(name)


def child(parent: str, part: str) -> str:
    """A component inside another: a thread in its process, a stream on its GPU."""
    return f"{parent}.{part}"
