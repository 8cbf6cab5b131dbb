"""The memory objects of one launch: buffers, local and private arrays, their addresses.

``LaunchMemory`` binds a kernel's arguments (host ``Buffer``s, ``LocalMem`` sizes and
numbers) and allocates the arrays the kernel declares:

* global and constant buffers are the host's numpy arrays, flat, at their byte
  address, so kernels write results in place;
* local memory is one array per work-group, stacked: element ``i`` of group ``g`` is
  at ``g * length + i``; its addresses are offsets in the group's LDS allocation,
  laid out in declaration order with natural alignment (64 KB per group at most);
* private arrays are one row per lane slot;
* ``vloadN``/``vstoreN`` go through *views* that read a scalar array N at a time;
* program-scope ``__constant`` tables are filled from their initializers, placed after
  the host's buffers;
* an ``image2d_t`` argument is the host's (height, width[, channels]) array, an
  ``image3d_t`` one its (depth, height, width[, channels]) array (see ``images``).

``locate`` turns the active lanes' indices into storage positions and byte
addresses, and reports an out-of-bounds access with the work-item that made it.

Every object also has a number (``Region.id``, from 1; 0 is the null pointer): a
pointer handle is ``id << HANDLE_SHIFT | byte offset`` (see ``types``). ``resolve``
splits the handles of the active lanes by object, checks bounds, and returns byte
positions into the object's storage, which ``read``/``write`` use through a typed
view when aligned and byte by byte otherwise (a struct, a misaligned cast).
"""
import numpy as np

from . import types as T
from .diagnostics import KernelError
from .images import shape_error
from .memory import Buffer, LocalMem

LDS_BYTES = 65536
HANDLE_SHIFT = 40
OFFSET_MASK = (1 << HANDLE_SHIFT) - 1
CONSTANT_BASE = 0x40000000   # program-scope __constant tables live here in the address space


class Region:
    """A memory object during a launch: its storage, element type and addresses."""

    __slots__ = (
        "_views",
        "base",
        "bytes",
        "data",
        "elem",
        "id",
        "length",
        "name",
        "owner",
        "scale",
        "segment",
        "space",
    )

    def __init__(self, name, space, elem, data, length, base, owner=None, scale=1):
        self.name, self.space, self.elem, self.data = name, space, elem, data
        self.length, self.base = length, base
        # A vloadN/vstoreN view reads its owner's scalars N at a time.
        self.owner, self.scale = (owner or name).split("#")[0], scale
        self.id = 0
        self.bytes = data.reshape(-1).view(np.uint8) if data.size else np.zeros(0, np.uint8)
        # Bytes per work-group (local), per lane slot (private) or in all (global, constant).
        self.segment = length * T.storage_size(elem) if space in ("local", "private") else self.bytes.size
        self._views = {}

    def view(self, dtype):
        """The storage as a flat array of ``dtype`` (scalar dtypes only)."""
        view = self._views.get(dtype)
        if view is None:
            usable = self.bytes.size // dtype.itemsize * dtype.itemsize
            view = self._views[dtype] = self.bytes[:usable].view(dtype)
        return view


class LaunchMemory:
    """Arguments and arrays of one launch (see the module docstring)."""

    def __init__(self, path, kernel, geometry, args):
        self.path = path
        self.kernel = kernel
        self.geo = geometry
        self.regions = {}
        self.scalars = {}     # scalar argument values by (unique) parameter name
        self.lds_bytes = 0
        self.by_id = [None]
        self._bind_args(args)
        self._bind_arrays()
        for region in self.regions.values():
            if region.scale == 1:
                region.id = len(self.by_id)
                self.by_id.append(region)

    def _bind_args(self, args):
        kernel = self.kernel
        names = [name.split("#")[0] for name, _ in kernel.params]
        missing = [n for n in names if n not in args]
        extra = [n for n in args if n not in names]
        if missing or extra:
            raise KernelError(self.path, kernel.line, 1, f"kernel '{kernel.name}' arguments:"
                              + (f" missing {', '.join(missing)}" if missing else "")
                              + (f" unknown {', '.join(extra)}" if extra else ""))
        for (name, ty), plain in zip(kernel.params, names):
            value = args[plain]
            if isinstance(ty, T.Pointer):
                self._bind_pointer(plain, ty, value)
            elif T.is_image(ty):
                self._bind_image(plain, ty, value)
            else:
                if isinstance(value, (Buffer, LocalMem)):
                    raise KernelError(self.path, kernel.line, 1,
                                      f"argument '{plain}' is a {ty}, not a buffer")
                self.scalars[name] = _scalar_arg(self.path, kernel, plain, ty, value)

    def _bind_pointer(self, name, ty, value):
        elem = ty.elem
        where = f"argument '{name}' ({ty})"
        if ty.space == "local":
            if not isinstance(value, LocalMem):
                raise KernelError(self.path, self.kernel.line, 1, f"{where} needs LocalMem(elements)")
            self._local(name, elem, value.elements)
            return
        if not isinstance(value, Buffer):
            raise KernelError(self.path, self.kernel.line, 1, f"{where} needs a Buffer")
        array = value.array
        if isinstance(elem, T.Struct):
            if array.dtype.itemsize != elem.size or array.dtype.names is None:
                raise KernelError(self.path, self.kernel.line, 1,
                                  f"{where} needs structured data of {elem.size} bytes per element"
                                  f" (numpy dtype {elem.dtype.descr}), the buffer holds {array.dtype}")
            flat = array.reshape(-1).view(elem.dtype)
            self.regions[name] = Region(name, ty.space, elem, flat, len(flat), value.base)
            return
        if array.dtype != elem.dtype:
            raise KernelError(self.path, self.kernel.line, 1,
                              f"{where} needs {elem.dtype} data, the buffer holds {array.dtype}")
        flat = array.reshape(-1)
        if elem.width > 1:
            if flat.size % elem.width:
                raise KernelError(self.path, self.kernel.line, 1,
                                  f"{where}: {flat.size} elements are not a whole number of {elem}")
            flat = flat.reshape(-1, elem.width)
        self.regions[name] = Region(name, ty.space, elem, flat, len(flat), value.base)

    def _bind_image(self, name, ty, value):
        where = f"argument '{name}' ({ty})"
        problem = shape_error(value.array.shape, ty.dims) if isinstance(value, Buffer) else \
            f"a {ty.dims}-D image is a numpy array, not {type(value).__name__}"
        if problem:
            raise KernelError(self.path, self.kernel.line, 1, f"{where}: {problem}")
        if value.array.dtype.kind not in "fiu":
            raise KernelError(self.path, self.kernel.line, 1, f"{where}: pixels must be numbers")
        self.regions[name] = Region(name, "image", ty, value.array, value.array.size, value.base)

    def _local(self, name, elem, length):
        align = max(4, elem.size)
        self.lds_bytes = -(-self.lds_bytes // align) * align
        shape = (self.geo.groups * length,) + ((elem.width,) if elem.width > 1 else ())
        self.regions[name] = Region(name, "local", elem, np.zeros(shape, dtype=elem.dtype), length,
                                     self.lds_bytes)
        self.lds_bytes += length * T.storage_size(elem)

    def _bind_arrays(self):
        constant_base = CONSTANT_BASE
        for name, info in self.kernel.arrays.items():
            if info.is_param or info.view_of:
                continue
            if info.init is not None:
                data = info.init.copy()
                self.regions[name] = Region(name, "constant", info.elem, data, len(data), constant_base)
                constant_base += -(-max(data.nbytes, 1) // 256) * 256
            elif info.space == "local":
                self._local(name, info.elem, info.length)
            else:
                shape = (self.geo.lanes * info.length,) + ((info.elem.width,) if info.elem.width > 1 else ())
                self.regions[name] = Region(name, "private", info.elem,
                                             np.zeros(shape, dtype=info.elem.dtype), info.length, 0)
        for name, info in self.kernel.arrays.items():
            if info.view_of:
                self._view(name, info)
        if self.lds_bytes > LDS_BYTES:
            raise KernelError(self.path, self.kernel.line, 1, f"kernel needs {self.lds_bytes} bytes"
                              f" of local memory per group (limit {LDS_BYTES})")

    def _view(self, name, info):
        owner = self.regions[info.view_of]
        n = info.elem.width
        if owner.space != "global" and owner.space != "constant" and owner.length % n:
            raise KernelError(self.path, self.kernel.line, 1,
                              f"vload{n}/vstore{n} on {owner.space} array '{owner.owner}' needs a"
                              f" length that is a multiple of {n}, not {owner.length}")
        usable = owner.data[:owner.data.shape[0] // n * n]
        self.regions[name] = Region(name, owner.space, info.elem, usable.reshape(-1, n),
                                     owner.length // n, owner.base, owner.name, n)

    def locate(self, node, region, index, lanes, verb):
        """(storage positions, byte addresses) of ``region[index]`` for the active lanes."""
        bad = (index < 0) | (index >= region.length)
        if np.any(bad):
            where = np.flatnonzero(np.broadcast_to(bad, (lanes.n,)))[0]
            item = int(self.geo.lane_array("global_linear", 0)[lanes.idx[where]])
            value = int(np.broadcast_to(index, (lanes.n,))[where])
            what = f"vload{region.scale}/vstore{region.scale} offset {value} of {region.owner}" \
                if region.scale > 1 else f"{region.owner}[{value}]"
            raise KernelError(self.path, node.line, node.col, f"out-of-bounds {verb} of {what}"
                              f" (length {region.length}) by work-item {item}")
        index = np.asarray(index, dtype=np.int64)
        addresses = region.base + index * region.elem.size
        if region.space in ("global", "constant"):
            return index, addresses
        if region.space == "local":
            group = lanes.idx // self.geo.slots_per_group
            return group * region.length + index, addresses
        return lanes.idx * region.length + index, addresses

    # -- pointer handles ---------------------------------------------------------------
    def handle(self, name):
        """The pointer handle of element 0 of region ``name``."""
        return np.int64(self.regions[name].id << HANDLE_SHIFT)

    def resolve(self, node, handles, ty, lanes, verb):
        """[(lane mask or None, region, byte positions, byte offsets)] for the lanes' handles.

        ``mask`` selects the lanes of ``lanes`` that point into ``region`` (None: all of
        them). Positions index the region's storage (its group's or lane's part for
        local and private memory); offsets are relative to the object, for addresses.
        """
        handles = np.asarray(handles, dtype=np.int64)
        ids = handles >> HANDLE_SHIFT
        if ids.ndim == 0 or lanes.n == 0 or (ids == ids[0]).all():
            first = int(ids if ids.ndim == 0 else ids[0]) if lanes.n else 0
            return [self._part(node, first, handles & OFFSET_MASK, ty, lanes, None, verb)]
        parts = []
        for region_id in np.unique(ids):
            mask = ids == region_id
            parts.append(self._part(node, int(region_id), handles[mask] & OFFSET_MASK, ty,
                                    lanes.subset(mask), mask, verb))
        return parts

    def _part(self, node, region_id, offsets, ty, lanes, mask, verb):
        if region_id <= 0 or region_id >= len(self.by_id):
            raise KernelError(self.path, node.line, node.col, f"{verb} through a null or invalid pointer")
        region = self.by_id[region_id]
        size = T.storage_size(ty)
        bad = offsets + size > region.segment
        if np.any(bad):
            where = np.flatnonzero(np.broadcast_to(bad, (lanes.n,)))[0]
            item = int(self.geo.lane_array("global_linear", 0)[lanes.idx[where]])
            offset = int(np.broadcast_to(offsets, (lanes.n,))[where])
            element = offset // max(1, T.storage_size(region.elem))
            raise KernelError(self.path, node.line, node.col,
                              f"out-of-bounds {verb} of {region.owner}[{element}] through a pointer"
                              f" (length {region.length}) by work-item {item}")
        if region.space == "local":
            positions = lanes.idx // self.geo.slots_per_group * region.segment + offsets
        elif region.space == "private":
            positions = lanes.idx * region.segment + offsets
        else:
            positions = offsets
        return mask, region, positions, offsets


def _typed(region, positions, ty):
    """(typed view, element index) for ``ty`` at byte ``positions`` when every position is
    aligned to its scalar type (then numpy indexes the storage directly), else None."""
    if isinstance(ty, T.Struct):
        return None
    base = ty.base.dtype
    if np.any(positions % base.itemsize):
        return None
    index = positions // base.itemsize
    return region.view(base), (index if ty.width == 1 else index[..., None] + np.arange(ty.width))


def _dtype(ty):
    """numpy dtype of one ``ty`` value in memory (a struct, a vector as a subarray, a scalar)."""
    if isinstance(ty, T.Struct):
        return ty.dtype
    return np.dtype((ty.base.dtype, (ty.width,))) if ty.width > 1 else ty.base.dtype


def read_bytes(region, positions, ty):
    """Values of type ``ty`` at byte ``positions`` of ``region`` (one per position)."""
    positions = np.asarray(positions, dtype=np.int64)
    typed = _typed(region, positions, ty)
    if typed is not None:
        view, index = typed
        return view[index]
    dtype = _dtype(ty)
    raw = region.bytes[positions[..., None] + np.arange(dtype.itemsize)]
    return np.ascontiguousarray(raw).view(dtype).reshape(positions.shape + dtype.shape)


def write_bytes(region, positions, ty, value):
    """Store ``value`` (one per position, or one for all) as ``ty`` at byte ``positions``."""
    positions = np.asarray(positions, dtype=np.int64)
    typed = _typed(region, positions, ty)
    if typed is not None:
        view, index = typed
        view[index] = value
        return
    dtype = _dtype(ty)
    shape = positions.shape
    scalar = dtype.base if dtype.shape else dtype
    items = np.ascontiguousarray(np.broadcast_to(np.asarray(value, dtype=scalar), shape + dtype.shape))
    raw = items.view(np.uint8).reshape(shape + (dtype.itemsize,))
    region.bytes[positions[..., None] + np.arange(dtype.itemsize)] = raw


def _scalar_arg(path, kernel, name, ty, value):
    """A by-value kernel argument as the kernel's type: a number, a vector or a struct."""
    try:
        if isinstance(ty, T.Struct):
            if isinstance(value, np.ndarray) and value.dtype == ty.dtype:
                return value.reshape(())
            return np.array(tuple(value) if isinstance(value, (list, tuple)) else value, dtype=ty.dtype)
        if ty.width == 1:
            return np.asarray(value).astype(ty.dtype)[()]
        return np.broadcast_to(np.asarray(value, dtype=ty.dtype), (ty.width,)).copy()
    except (ValueError, TypeError) as exc:
        raise KernelError(path, kernel.line, 1, f"argument '{name}' is not a {ty}: {exc}") from None
