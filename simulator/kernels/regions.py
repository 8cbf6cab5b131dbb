"""The memory objects of one launch: buffers, local and private arrays, their addresses.

``LaunchMemory`` binds a kernel's arguments (host ``Buffer``s, ``LocalMem`` sizes and
numbers) and allocates the arrays the kernel declares:

* global and constant buffers are the host's numpy arrays, flat, at their byte
  address, so kernels write results in place;
* local memory is one array per work-group, stacked: element ``i`` of group ``g`` is
  at ``g * length + i``; its addresses are offsets in the group's LDS allocation,
  laid out in declaration order with natural alignment (64 KB per group at most);
* private arrays are one row per lane slot;
* ``vloadN``/``vstoreN`` go through *views* that read a scalar array N at a time.

``locate`` turns the active lanes' indices into storage positions and byte
addresses, and reports an out-of-bounds access with the work-item that made it.
"""
import numpy as np

from . import types as T
from .diagnostics import KernelError
from .memory import Buffer, LocalMem

LDS_BYTES = 65536


class Region:
    """A memory object during a launch: its storage, element type and addresses."""

    __slots__ = ("name", "space", "elem", "data", "length", "base", "owner", "scale")

    def __init__(self, name, space, elem, data, length, base, owner=None, scale=1):
        self.name, self.space, self.elem, self.data = name, space, elem, data
        self.length, self.base = length, base
        # A vloadN/vstoreN view reads its owner's scalars N at a time.
        self.owner, self.scale = (owner or name).split("#")[0], scale


class LaunchMemory:
    """Arguments and arrays of one launch (see the module docstring)."""

    def __init__(self, path, kernel, geometry, args):
        self.path = path
        self.kernel = kernel
        self.geo = geometry
        self.regions = {}
        self.scalars = {}     # scalar argument values by (unique) parameter name
        self.lds_bytes = 0
        self._bind_args(args)
        self._bind_arrays()

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
            else:
                if isinstance(value, (Buffer, LocalMem, np.ndarray)):
                    raise KernelError(self.path, kernel.line, 1, f"argument '{plain}' is a {ty}, not a buffer")
                self.scalars[name] = np.asarray(value).astype(ty.dtype)[()] if ty.width == 1 else \
                    np.broadcast_to(np.asarray(value, dtype=ty.dtype), (ty.width,)).copy()

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

    def _local(self, name, elem, length):
        align = max(4, elem.size)
        self.lds_bytes = -(-self.lds_bytes // align) * align
        shape = (self.geo.groups * length,) + ((elem.width,) if elem.width > 1 else ())
        self.regions[name] = Region(name, "local", elem, np.zeros(shape, dtype=elem.dtype), length,
                                     self.lds_bytes)
        self.lds_bytes += length * elem.size

    def _bind_arrays(self):
        for name, info in self.kernel.arrays.items():
            if info.is_param or info.view_of:
                continue
            if info.space == "local":
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
            raise KernelError(self.path, node.line, node.col, f"out-of-bounds {verb} of {what} (length {region.length}) by work-item {item}")
        index = np.asarray(index, dtype=np.int64)
        addresses = region.base + index * region.elem.size
        if region.space in ("global", "constant"):
            return index, addresses
        if region.space == "local":
            group = lanes.idx // self.geo.slots_per_group
            return group * region.length + index, addresses
        return lanes.idx * region.length + index, addresses
