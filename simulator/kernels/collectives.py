"""Work-group and sub-group functions: one value combined over a group's work-items.

OpenCL C 2.0 (6.13.15) has ``work_group_all``/``any``/``broadcast``,
``work_group_reduce_<op>``, ``work_group_scan_inclusive_<op>`` and
``work_group_scan_exclusive_<op>`` (op: add, min, max); cl_khr_subgroups has the same
``sub_group_*`` functions over a sub-group. Here a sub-group is a wavefront, as on AMD's
GPUs: ``lanes`` packs the work-items of a group into wavefronts of 64 by linear local id,
which is what ``get_sub_group_id``/``get_sub_group_local_id`` report.

Every work-item of the group must reach the call (the executor checks it); ``combine``
then computes the results of all the groups at once, from a table with one row per group
and one column per lane slot of the group (its linear local id, or its sub-group local
id): the scans run in that order, as the specification asks, and slots without a
work-item (the padding of a group's last wavefront) hold the operation's identity.
"""
import numpy as np

from ..stream import WAVEFRONT_SIZE
from . import types as T

SCOPES = ("work_group", "sub_group")
OPS = ("add", "min", "max")
# Types the functions take (gentype); narrower integers are promoted to int, as C passes them.
GENTYPES = (T.INT, T.UINT, T.LONG, T.ULONG, T.FLOAT, T.DOUBLE)
# VALU instructions per wavefront: a reduce or scan over 64 lanes takes log2(64) = 6 DPP steps.
WAVE_STEPS = 6


def split(name: str) -> tuple | None:
    """(scope, kind, op) of a work-group or sub-group function's name, else None."""
    for scope in SCOPES:
        if not name.startswith(scope + "_"):
            continue
        rest = name[len(scope) + 1:]
        if rest in ("all", "any", "broadcast"):
            return scope, rest, None
        kind, _, op = rest.rpartition("_")
        if kind in ("reduce", "scan_inclusive", "scan_exclusive") and op in OPS:
            return scope, kind, op
    return None


def arity(scope: str, kind: str) -> tuple[int, int]:
    """(fewest, most) arguments: broadcast takes the value and a local id per dimension."""
    if kind == "broadcast":
        return (2, 4) if scope == "work_group" else (2, 2)
    return 1, 1


def value_type(kind: str, ty) -> T.Scalar | None:
    """The type a function's value argument is converted to (and, but for all/any, its
    result type), or None if it takes no such value."""
    if not isinstance(ty, T.Scalar) or ty is T.VOID:
        return None
    if kind in ("all", "any"):
        return T.INT
    if ty.is_float:
        return T.DOUBLE if ty is T.DOUBLE else T.FLOAT
    return ty if ty in GENTYPES else T.INT


def identity(op: str, dtype: np.dtype):
    """The identity of ``op`` in ``dtype`` (OpenCL: 0; INT_MAX... and +inf; INT_MIN... and -inf)."""
    if op == "add":
        return dtype.type(0)
    if dtype.kind == "f":
        return dtype.type(np.inf if op == "min" else -np.inf)
    info = np.iinfo(dtype)
    return dtype.type(info.max if op == "min" else info.min)


def combine(kind: str, op: str | None, value, slots: np.ndarray, size: int,
            targets: np.ndarray | None = None) -> np.ndarray:
    """The result of function ``kind``/``op`` for each lane slot in ``slots`` (sorted; each
    group of ``size`` slots that has one has all its work-items), from each lane's
    ``value``; ``targets`` are the broadcast's source columns."""
    value = np.broadcast_to(np.asarray(value), slots.shape)
    groups, row = np.unique(slots // size, return_inverse=True)
    column = slots % size
    if kind in ("all", "any"):
        table = np.full((len(groups), size), kind == "all")
        table[row, column] = value != 0
        hit = table.all(axis=1) if kind == "all" else table.any(axis=1)
        return hit[row].astype(np.int32)
    if kind == "broadcast":
        table = np.zeros((len(groups), size), value.dtype)
        table[row, column] = value
        return table[row, targets]
    ufunc = {"add": np.add, "min": np.minimum, "max": np.maximum}[op]
    table = np.full((len(groups), size), identity(op, value.dtype), value.dtype)
    table[row, column] = value
    if kind == "reduce":
        return ufunc.reduce(table, axis=1, dtype=value.dtype)[row]
    scan = ufunc.accumulate(table, axis=1, dtype=value.dtype)
    if kind == "scan_exclusive":
        first = np.full((len(groups), 1), identity(op, value.dtype), value.dtype)
        scan = np.concatenate([first, scan[:, :-1]], axis=1)
    return scan[row, column]


def group_size(scope: str, geometry) -> int:
    """Lane slots per work-group, or per sub-group (a wavefront)."""
    return geometry.slots_per_group if scope == "work_group" else WAVEFRONT_SIZE


def broadcast_columns(scope: str, ids: list, slots: np.ndarray, geometry) -> np.ndarray:
    """The column (slot in the group) each lane's broadcast reads, from the work-group local
    id (x[, y[, z]]) or the sub-group local id in ``ids``. Raises ValueError when an id is
    outside the group, or not the same for the whole group."""
    ids = [np.broadcast_to(np.asarray(i, dtype=np.int64), slots.shape) for i in ids]
    if scope == "sub_group":
        column = ids[0]
        sizes = geometry.lane_array("get_sub_group_size", 0)[slots]
        outside = column >= sizes
        if outside.any():
            k = int(np.flatnonzero(outside)[0])
            raise ValueError(f"sub-group local id {int(column[k])} is outside the sub-group of"
                             f" {int(sizes[k])} work-items")
    else:
        extent = geometry.local_size
        outside = np.zeros(slots.shape, bool)
        for dim, local in enumerate(ids):
            outside |= local >= extent[dim]
        if outside.any():
            k = int(np.flatnonzero(outside)[0])
            raise ValueError(f"local id {tuple(int(i[k]) for i in ids)} is outside the work-group"
                             f" of size {geometry.local_size[:geometry.dims]}")
        column = np.zeros(slots.shape, np.int64)   # the linear local id: x fastest
        for dim in reversed(range(len(ids))):
            column = column * extent[dim] + ids[dim]
    groups = slots // group_size(scope, geometry)
    first = np.flatnonzero(np.r_[True, groups[1:] != groups[:-1]])
    if (column != np.repeat(column[first], np.diff(np.r_[first, len(slots)]))).any():
        raise ValueError("the local id must be the same for every work-item of the group")
    return column
