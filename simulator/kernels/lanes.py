"""The NDRange laid out as lanes, and sets of active lanes (the EXEC mask).

A batch of work-groups (``Geometry.batch``; the whole launch by default) runs every
work-item of every one of its groups at once. Lane slots are numbered group by group,
from the batch's first group; inside a group, work-items are numbered by their linear local id
(x fastest) and packed into wavefronts of 64. A group whose size is not a multiple
of 64 leaves its last wavefront partly empty: those padding slots never run. So
lane ``l`` belongs to wavefront ``l >> 6`` and sits in bit ``l & 63`` of its EXEC mask,
the same as on the hardware.

``Lanes`` is a sorted set of active lane slots. Statements run on the values of the
active lanes only, so a branch that few lanes take costs little. Per-wavefront
summaries (which wavefronts have active lanes, how many, and their EXEC masks) are
computed once per set and shared by all the instructions issued under it.
"""
import copy

import numpy as np

from ..stream import WAVEFRONT_SIZE


class Geometry:
    """Sizes of one launch (up to three dimensions) and per-lane ids of a batch of its groups.

    ``groups``, ``lanes`` and ``wavefronts`` count the batch's; ``launch_groups`` the
    launch's. Work-item functions give launch-wide ids: group ``g`` of the batch is
    group ``first_group + g`` of the launch.
    """

    def __init__(self, global_size, local_size):
        self.global_size = tuple(int(g) for g in global_size) + (1,) * (3 - len(global_size))
        self.local_size = tuple(int(x) for x in local_size) + (1,) * (3 - len(local_size))
        self.dims = len(global_size)
        for g, loc in zip(self.global_size, self.local_size):
            if loc <= 0 or g <= 0 or g % loc:
                raise ValueError(f"global size {self.global_size[:self.dims]} must be a positive"
                                 f" multiple of the local size {self.local_size[:self.dims]}")
        self.num_groups = tuple(g // loc for g, loc in zip(self.global_size, self.local_size))
        self.launch_groups = int(np.prod(self.num_groups))
        self.group_items = int(np.prod(self.local_size))
        if self.group_items > 1024:
            raise ValueError(f"a work-group of {self.group_items} work-items exceeds the limit of 1024")
        self.waves_per_group = -(-self.group_items // WAVEFRONT_SIZE)
        self.slots_per_group = self.waves_per_group * WAVEFRONT_SIZE
        self.padded = self.group_items != self.slots_per_group
        self._select(0, self.launch_groups)

    def _select(self, first, count):
        self.first_group = first
        self.groups = count
        self.lanes = count * self.slots_per_group
        self.wavefronts = count * self.waves_per_group
        self._ids = {}

    @property
    def valid(self):
        """Per lane slot: True for a work-item, False for padding (made when first asked:
        a launch's geometry need not hold an entry per work-item, a batch's does)."""
        if "valid" not in self._ids:
            slots = np.arange(self.slots_per_group) < self.group_items
            self._ids["valid"] = np.tile(slots, self.groups)
        return self._ids["valid"]

    def batch(self, first, count):
        """The geometry of groups ``first`` .. ``first + count - 1`` of this launch."""
        part = copy.copy(self)
        part._select(first, count)
        return part

    def group_ids(self, g):
        """(x, y, z) index of the batch's work-group ``g`` in the launch (x fastest)."""
        g += self.first_group
        nx, ny, _ = self.num_groups
        return (g % nx, (g // nx) % ny, g // (nx * ny))

    def lane_array(self, fn, dim):
        """Per-lane value of a work-item function (uint32, padding slots hold zeros)."""
        key = (fn, dim)
        if key not in self._ids:
            self._ids[key] = self._compute(fn, dim)
        return self._ids[key]

    def _coordinates(self):
        """(launch group, local, local xyz, group xyz) per lane slot, computed once per batch."""
        if "coords" not in self._ids:
            lane = np.arange(self.lanes, dtype=np.int64)
            group = lane // self.slots_per_group
            local = np.minimum(lane - group * self.slots_per_group, self.group_items - 1)
            group += self.first_group
            lx, ly, _ = self.local_size
            nx, ny, _ = self.num_groups
            local_xyz = (local % lx, (local // lx) % ly, local // (lx * ly))
            group_xyz = (group % nx, (group // nx) % ny, group // (nx * ny))
            self._ids["coords"] = (group, local, local_xyz, group_xyz)
        return self._ids["coords"]

    def _compute(self, fn, dim):
        group, local, local_xyz, group_xyz = self._coordinates()
        if fn == "get_local_id":
            out = local_xyz[dim]
        elif fn == "get_group_id":
            out = group_xyz[dim]
        elif fn == "get_global_id":
            out = group_xyz[dim] * self.local_size[dim] + local_xyz[dim]
        elif fn == "get_sub_group_id":
            out = local // WAVEFRONT_SIZE
        elif fn == "get_sub_group_local_id":
            out = local % WAVEFRONT_SIZE
        elif fn == "get_sub_group_size":   # the group's last wavefront may be partly empty
            out = np.minimum(WAVEFRONT_SIZE, self.group_items - local // WAVEFRONT_SIZE * WAVEFRONT_SIZE)
        elif fn == "group_index":
            out = group
        elif fn == "local_linear":
            out = local
        elif fn == "global_linear":
            gx, gy, gz = (group_xyz[d] * self.local_size[d] + local_xyz[d] for d in range(3))
            out = gx + self.global_size[0] * (gy + self.global_size[1] * gz)
        else:
            raise KeyError(fn)
        return out.astype(np.uint32 if fn.startswith("get_") else np.int64)

    def uniform_value(self, fn, dim):
        """A launch-wide work-item value: sizes, group counts, offsets, dimensions."""
        if fn == "get_work_dim":
            return np.uint32(self.dims)
        if fn == "get_max_sub_group_size":
            return np.uint32(min(WAVEFRONT_SIZE, self.group_items))
        if fn in ("get_num_sub_groups", "get_enqueued_num_sub_groups"):
            return np.uint32(self.waves_per_group)
        return np.uint32({"get_global_size": self.global_size, "get_local_size": self.local_size,
                          "get_num_groups": self.num_groups,
                          "get_global_offset": (0, 0, 0)}[fn][dim])


class Lanes:
    """A sorted set of active lane slots: the EXEC mask of a statement, grid-wide."""

    __slots__ = ("sel", "n", "total", "_idx", "_waves")

    def __init__(self, idx, total):
        self.total = total
        if idx is None:                      # every slot of the launch
            self.sel, self.n, self._idx = slice(None), total, None
        else:
            self.sel, self.n, self._idx = idx, len(idx), idx
        self._waves = None

    @property
    def idx(self):
        if self._idx is None:
            self._idx = np.arange(self.total, dtype=np.int64)
        return self._idx

    def subset(self, keep):
        """The lanes where boolean ``keep`` (one entry per lane of this set) is true."""
        count = int(np.count_nonzero(keep))
        if count == self.n:
            return self
        if count == 0:
            return Lanes(np.empty(0, dtype=np.int64), self.total)
        return Lanes(self.idx[keep], self.total)

    def waves(self):
        """(wavefront ids, active counts, EXEC masks as uint64) of the wavefronts with lanes here."""
        if self._waves is None:
            if self._idx is None:
                nw = self.total // WAVEFRONT_SIZE
                self._waves = (np.arange(nw, dtype=np.int64), np.full(nw, 64, dtype=np.int64),
                               np.full(nw, np.uint64(0xFFFFFFFFFFFFFFFF)))
            else:
                idx = self._idx
                wf = idx >> 6
                starts = np.flatnonzero(np.r_[True, wf[1:] != wf[:-1]]) if len(idx) else np.empty(0, np.int64)
                bits = np.left_shift(np.uint64(1), (idx & 63).astype(np.uint64))
                masks = np.add.reduceat(bits, starts) if len(idx) else np.empty(0, np.uint64)
                counts = np.diff(np.r_[starts, len(idx)])
                self._waves = (wf[starts], counts, masks)
        return self._waves


def all_lanes(geometry):
    """The lanes of every work-item of a launch (padding slots excluded)."""
    if geometry.padded:
        return Lanes(np.flatnonzero(geometry.valid), geometry.lanes)
    return Lanes(None, geometry.lanes)
