"""Klein's instrumentation: watched accesses, branch bit-streams and emitted values.

Klein instruments the kernel source so that every work-item appends records to
buffers; we observe the executor instead, which gives the same records without
changing the kernel. What is recorded is what was asked for, and bounded:

* ``@watch NAME``: every access to the array from the annotation on, per work-item:
  read/write, source line, address, LDS bank, and the logical time (the number of
  barriers its work-group has passed: accesses between two barriers are unordered),
  and the issue order of the instruction within its work-group. Barriers are recorded
  too, once per work-group (Klein draws them as rows). At most ``max_accesses``
  records (Klein allowed 500,000);
* branch streams, when ``branches`` is on: each evaluation of a conditional or loop
  condition appends one bit (taken or not) to the work-item's stream. Work-items
  with identical streams share a pattern, and wavefronts whose lanes have identical
  patterns form one *proxy warp*. At most ``max_branch_bits`` bits (Klein: 5,000,000);
* ``@emit`` values: one value per work-item index below the declared length.

A launch runs in batches of work-groups (``batches``): ``start_batch`` and
``end_batch`` bracket each, and each batch's observations are turned into launch-wide
ids when it ends. What is kept past a limit is the longest run of whole work-groups,
from the first, whose records fit: a work-group's records do not depend on which
others ran beside it, so the records are the same whatever the batch size.

Nothing is recorded when no ``Probes`` object is given: that is the uninstrumented run.
"""
import numpy as np

from ..stream import LDS_BANKS
from .wavefronts import sorted_unique

READ, WRITE, BARRIER = 0, 1, 2


class _GroupBudget:
    """Rows kept per work-group of the batch, and the first group whose rows are dropped.

    ``room`` rows at most, over whole groups taken in order: once the groups before
    ``stop`` and the rows seen so far of group ``stop`` exceed it, group ``stop`` and
    every later one are dropped (a group's count only grows, so ``stop`` only falls).
    """

    def __init__(self, groups, room, stopped):
        self.counts = np.zeros(groups, dtype=np.int64)
        self.room = room
        self.stop = 0 if stopped else groups
        self.total = 0

    def admit(self, group):
        """The rows of ``group`` (batch-local ids) that may be kept; counts them."""
        keep = group < self.stop
        if not keep.all():
            group = group[keep]
        if not len(group):
            return keep, False
        self.counts += np.bincount(group, minlength=len(self.counts))
        self.total += len(group)
        if self.total <= self.room:
            return keep, False
        over = int(np.argmax(np.cumsum(self.counts) > self.room))
        self.stop = over
        self.counts[over:] = 0
        self.total = int(self.counts.sum())
        return keep, True


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
        """Start recording one launch; ``start_batch`` then starts its first batch."""
        self.geometry = geometry
        self.access_parts = []      # per batch: launch-wide columns of the kept rows
        self.accesses = 0           # rows kept by the batches that ended
        self.branch_parts = []      # per batch: launch-wide per-work-item rows
        self.branch_bits = 0
        self.patterns = []          # (bits text, node ids text), in order of first work-item
        self.pattern_of = {}
        self.emits = []             # (name, index array, value array)
        self.truncated = {"accesses": False, "branches": False}

    def start_batch(self, geometry):
        """Record the work-groups of ``geometry`` (a batch of the launch) next."""
        self.geometry = geometry
        self.access_chunks = []     # (seq, epoch, lanes idx, kind, line, array, element, address, bank)
        self.branch_chunks = []     # (node, lanes idx, bits)
        self.seq = 0
        self.epoch = np.zeros(geometry.groups, dtype=np.int64)
        self.access_budget = _GroupBudget(geometry.groups, self.max_accesses - self.accesses,
                                          self.truncated["accesses"])
        self.branch_budget = _GroupBudget(geometry.groups, self.max_branch_bits - self.branch_bits,
                                          self.truncated["branches"])

    def end_batch(self):
        """Turn the batch's records into launch-wide rows, keeping its admitted groups."""
        rows = self._batch_access_rows()
        if rows is not None:
            self.access_parts.append(rows)
            self.accesses += len(rows["seq"])
        rows = self._batch_branch_rows()
        if rows is not None:
            self.branch_parts.append(rows)
        self.branch_bits += self.branch_budget.total
        self.access_chunks, self.branch_chunks = [], []

    # -- observations from the executor ------------------------------------------
    def access(self, kind, line, lanes, array, element, address, lds):
        if not lanes.n or not self.watch_enabled:
            return
        idx = lanes.idx
        element = np.broadcast_to(np.asarray(element, dtype=np.int64), (lanes.n,))
        address = np.broadcast_to(np.asarray(address, dtype=np.int64), (lanes.n,))
        keep = self._admit(self.access_budget, "accesses", idx // self.geometry.slots_per_group)
        if keep is not None:
            idx, element, address = idx[keep], element[keep], address[keep]
        if not len(idx):
            return
        group = idx // self.geometry.slots_per_group
        bank = (address // 4) % LDS_BANKS if lds else np.full(len(idx), -1, np.int64)
        self.access_chunks.append((self.seq, self.epoch[group], idx, kind, line, array,
                                   element, address, bank))
        self.seq += 1

    def _admit(self, budget, what, group):
        """None when every row of ``group`` may be kept, else the mask of those that may."""
        keep, cut = budget.admit(group)
        if cut or not keep.all():
            self.truncated[what] = True
            return keep
        return None

    def barrier(self, line, lanes, watching):
        """All lanes in ``lanes`` passed a barrier: their groups' logical time advances.

        While watching, one barrier row per work-group is recorded (work-item -1): a
        barrier separates logical times for the whole group.
        """
        if not lanes.n:
            return
        touched = sorted_unique(lanes.idx // self.geometry.slots_per_group)
        if watching and self.watch_enabled:
            keep = self._admit(self.access_budget, "accesses", touched)
            rows = touched if keep is None else touched[keep]
            if len(rows):
                none = np.full(len(rows), -1, np.int64)
                self.access_chunks.append((self.seq, self.epoch[rows],
                                           rows * self.geometry.slots_per_group,
                                           BARRIER, line, "", none, none, none))
                self.seq += 1
        self.epoch[touched] += 1

    def branch(self, node, lanes, bits):
        if not self.branches_enabled or not lanes.n:
            return
        idx = lanes.idx
        bits = np.broadcast_to(np.asarray(bits) != 0, (lanes.n,))
        keep = self._admit(self.branch_budget, "branches", idx // self.geometry.slots_per_group)
        if keep is not None:
            idx, bits = idx[keep], bits[keep]
        if len(idx):
            self.branch_chunks.append((node, idx, bits))

    def emit(self, name, index, values):
        if self.emit_enabled:
            self.emits.append((name, np.asarray(index), np.asarray(values)))

    # -- a batch's rows, launch-wide ------------------------------------------------
    def _batch_access_rows(self):
        stop = self.access_budget.stop
        chunks = [c for c in self.access_chunks if len(c[2])]
        if not chunks:
            return None
        geo = self.geometry
        n = [len(c[2]) for c in chunks]
        lane = np.concatenate([c[2] for c in chunks])
        kind = np.repeat([c[3] for c in chunks], n)
        seq = np.repeat([c[0] for c in chunks], n)
        group = lane // geo.slots_per_group
        kept = group < stop   # groups past a later cut drop their earlier rows too
        cols = {
            "seq": seq, "epoch": np.concatenate([c[1] for c in chunks]), "kind": kind,
            "line": np.repeat([c[4] for c in chunks], n),
            "array": np.repeat(np.array([c[5] for c in chunks], dtype=object), n),
            "element": np.concatenate([c[6] for c in chunks]),
            "address": np.concatenate([c[7] for c in chunks]),
            "bank": np.concatenate([c[8] for c in chunks]),
        }
        if not kept.all():
            lane, group = lane[kept], group[kept]
            cols = {k: v[kept] for k, v in cols.items()}
        if not len(lane):
            return None
        cols["seq"] = _rank_within(group, cols["seq"])
        per_group = cols["kind"] == BARRIER
        cols["work_item"] = np.where(per_group, -1, geo.lane_array("global_linear", 0)[lane])
        cols["group"] = geo.lane_array("group_index", 0)[lane]
        cols["local"] = np.where(per_group, -1, geo.lane_array("local_linear", 0)[lane])
        return cols

    def _batch_branch_rows(self):
        if not self.branch_chunks:
            return None
        geo = self.geometry
        lane = np.concatenate([idx for _, idx, _ in self.branch_chunks])
        bits = np.concatenate([b for _, _, b in self.branch_chunks]).astype(np.uint8)
        nodes = np.concatenate([np.full(len(idx), node) for node, idx, _ in self.branch_chunks])
        kept = lane // geo.slots_per_group < self.branch_budget.stop
        if not kept.all():
            lane, bits, nodes = lane[kept], bits[kept], nodes[kept]
        if not len(lane):
            return None
        order = np.argsort(lane, kind="stable")
        lane, bits, nodes = lane[order], bits[order], nodes[order]
        starts = np.flatnonzero(np.r_[True, lane[1:] != lane[:-1]])
        ends = np.r_[starts[1:], len(lane)]
        chars = (bits + ord("0")).tobytes()
        node_list = nodes.tolist()
        assign = np.empty(len(starts), dtype=np.int64)
        for k, (s, e) in enumerate(zip(starts.tolist(), ends.tolist())):
            key = chars[s:e]
            pid = self.pattern_of.get(key)
            if pid is None:
                pid = self.pattern_of[key] = len(self.patterns)
                self.patterns.append((key.decode(), ",".join(map(str, node_list[s:e]))))
            assign[k] = pid
        owners = lane[starts]
        return {
            "work_item": geo.lane_array("global_linear", 0)[owners],
            "group": geo.lane_array("group_index", 0)[owners],
            "local": geo.lane_array("local_linear", 0)[owners],
            "wavefront": geo.first_group * geo.waves_per_group + (owners >> 6),
            "pattern": assign,
        }

    # -- results -------------------------------------------------------------------
    def access_rows(self):
        """Columns of the watched-access table, batch after batch (see records.py)."""
        return _concatenate(self.access_parts)

    def branch_patterns(self):
        """(patterns, per-work-item rows) from the recorded branch bits.

        ``patterns`` is a list of (bits text, node ids text); rows are
        (work_item, group, local, wavefront, pattern index) arrays.
        """
        return self.patterns, _concatenate(self.branch_parts)


def _rank_within(group, seq):
    """Each row's issue order within its group: the rank of its ``seq`` among the group's."""
    order = np.lexsort((seq, group))
    g, s = group[order], seq[order]
    new_group = np.r_[True, g[1:] != g[:-1]]
    step = np.cumsum(new_group | np.r_[True, s[1:] != s[:-1]]) - 1
    first = np.maximum.accumulate(np.where(new_group, step, 0))
    rank = np.empty(len(seq), dtype=np.int64)
    rank[order] = step - first
    return rank


def _concatenate(parts):
    if not parts:
        return None
    return {key: np.concatenate([part[key] for part in parts]) for key in parts[0]}
