"""Klein's instrumentation: watched accesses, branch bit-streams and emitted values.

Klein instruments the kernel source so that every work-item appends records to
buffers; we observe the executor instead, which gives the same records without
changing the kernel. What is recorded is what was asked for, and bounded:

* ``@watch NAME``: every access to the array from the annotation on, per work-item:
  read/write, source line, address, LDS bank, and the logical time (the number of
  barriers its work-group has passed: accesses between two barriers are unordered).
  Barriers are recorded too, once per work-group (Klein draws them as rows). At
  most ``max_accesses``
  records (Klein allowed 500,000);
* branch streams, when ``branches`` is on: each evaluation of a conditional or loop
  condition appends one bit (taken or not) to the work-item's stream. Work-items
  with identical streams share a pattern, and wavefronts whose lanes have identical
  patterns form one *proxy warp*. At most ``max_branch_bits`` bits (Klein: 5,000,000);
* ``@emit`` values: one value per work-item index below the declared length.

Nothing is recorded when no ``Probes`` object is given: that is the uninstrumented run.
"""
import numpy as np

from ..stream import LDS_BANKS
from .wavefronts import sorted_unique

READ, WRITE, BARRIER = 0, 1, 2


class Probes:
    """Observers the executor calls; results are read back by ``records.KernelRecorder``."""

    def __init__(self, *, watch=True, branches=True, emit=True, max_accesses=500_000,
                 max_branch_bits=5_000_000):
        self.watch_enabled = watch
        self.branches_enabled = branches
        self.emit_enabled = emit
        self.max_accesses = max_accesses
        self.max_branch_bits = max_branch_bits
        self.reset(None)

    def reset(self, geometry):
        """Start recording one launch."""
        self.geometry = geometry
        self.access_chunks = []     # (seq, epoch, lanes idx, kind, line, array, element, address, bank)
        self.accesses = 0
        self.branch_chunks = []     # (node, lanes idx, bits)
        self.branch_bits = 0
        self.emits = []             # (name, index array, value array)
        self.truncated = {"accesses": False, "branches": False}
        self.seq = 0
        self.epoch = np.zeros(geometry.groups if geometry else 0, dtype=np.int64)

    # -- observations from the executor ------------------------------------------
    def access(self, kind, line, lanes, array, element, address, lds):
        if not lanes.n or not self._room(lanes.n):
            return
        idx = lanes.idx
        group = idx // self.geometry.slots_per_group
        element = np.broadcast_to(np.asarray(element, dtype=np.int64), (lanes.n,))
        address = np.broadcast_to(np.asarray(address, dtype=np.int64), (lanes.n,))
        bank = (address // 4) % LDS_BANKS if lds else np.full(lanes.n, -1, np.int64)
        self.access_chunks.append((self.seq, self.epoch[group], idx, kind, line, array,
                                   element, address, bank))
        self.seq += 1
        self.accesses += lanes.n

    def _room(self, n):
        """May ``n`` more watched-access rows be recorded? Past the limit, nothing more is,
        so what is kept is a prefix in time."""
        if not self.watch_enabled or self.truncated["accesses"]:
            return False
        if self.accesses + n > self.max_accesses:
            self.truncated["accesses"] = True
            return False
        return True

    def barrier(self, line, lanes, watching):
        """All lanes in ``lanes`` passed a barrier: their groups' logical time advances.

        While watching, one barrier row per work-group is recorded (work-item -1): a
        barrier separates logical times for the whole group.
        """
        if not lanes.n:
            return
        touched = sorted_unique(lanes.idx // self.geometry.slots_per_group)
        if watching and self._room(len(touched)):
            none = np.full(len(touched), -1, np.int64)
            self.access_chunks.append((self.seq, self.epoch[touched], touched * self.geometry.slots_per_group,
                                       BARRIER, line, "", none, none, none))
            self.seq += 1
            self.accesses += len(touched)
        self.epoch[touched] += 1

    def branch(self, node, lanes, bits):
        if not self.branches_enabled or not lanes.n or self.truncated["branches"]:
            return
        if self.branch_bits + lanes.n > self.max_branch_bits:
            self.truncated["branches"] = True   # streams stay prefixes of the real ones
            return
        bits = np.broadcast_to(np.asarray(bits) != 0, (lanes.n,))
        self.branch_chunks.append((node, lanes.idx, bits))
        self.branch_bits += lanes.n

    def emit(self, name, index, values):
        if self.emit_enabled:
            self.emits.append((name, np.asarray(index), np.asarray(values)))

    # -- results -------------------------------------------------------------------
    def access_rows(self):
        """Arrays for the watched-access table, in issue order (see records.py)."""
        if not self.access_chunks:
            return None
        geo = self.geometry
        seqs, epochs, lanes, kinds, lines, names, elements, addrs, banks = [], [], [], [], [], [], [], [], []
        for seq, epoch, idx, kind, line, array, element, address, bank in self.access_chunks:
            n = len(idx)
            seqs.append(np.full(n, seq))
            epochs.append(epoch)
            lanes.append(idx)
            kinds.append(np.full(n, kind))
            lines.append(np.full(n, line))
            names.append(np.full(n, array, dtype=object))
            elements.append(element)
            addrs.append(address)
            banks.append(bank)
        lane = np.concatenate(lanes)
        kind = np.concatenate(kinds)
        per_group = kind == BARRIER
        return {
            "seq": np.concatenate(seqs), "epoch": np.concatenate(epochs),
            "work_item": np.where(per_group, -1, geo.lane_array("global_linear", 0)[lane]),
            "group": geo.lane_array("group_index", 0)[lane],
            "local": np.where(per_group, -1, geo.lane_array("local_linear", 0)[lane]),
            "kind": kind, "line": np.concatenate(lines),
            "array": np.concatenate(names), "element": np.concatenate(elements),
            "address": np.concatenate(addrs), "bank": np.concatenate(banks),
        }

    def branch_patterns(self):
        """(patterns, per-work-item rows) from the recorded branch bits.

        ``patterns`` is a list of (bits text, node ids text); rows are
        (work_item, group, local, wavefront, pattern index) arrays.
        """
        if not self.branch_chunks:
            return [], None
        geo = self.geometry
        lane = np.concatenate([idx for _, idx, _ in self.branch_chunks])
        bits = np.concatenate([b for _, _, b in self.branch_chunks]).astype(np.uint8)
        nodes = np.concatenate([np.full(len(idx), node) for node, idx, _ in self.branch_chunks])
        order = np.argsort(lane, kind="stable")
        lane, bits, nodes = lane[order], bits[order], nodes[order]
        starts = np.flatnonzero(np.r_[True, lane[1:] != lane[:-1]])
        ends = np.r_[starts[1:], len(lane)]
        chars = (bits + ord("0")).tobytes()
        node_list = nodes.tolist()
        pattern_of = {}
        patterns = []
        assign = np.empty(len(starts), dtype=np.int64)
        for k, (s, e) in enumerate(zip(starts.tolist(), ends.tolist())):
            key = chars[s:e]
            pid = pattern_of.get(key)
            if pid is None:
                pid = pattern_of[key] = len(patterns)
                patterns.append((key.decode(), ",".join(map(str, node_list[s:e]))))
            assign[k] = pid
        owners = lane[starts]
        rows = {
            "work_item": geo.lane_array("global_linear", 0)[owners],
            "group": geo.lane_array("group_index", 0)[owners],
            "local": geo.lane_array("local_linear", 0)[owners],
            "wavefront": owners >> 6,
            "pattern": assign,
        }
        return patterns, rows
