"""Collects issued instructions grid-wide and cuts them into per-wavefront streams.

The executor runs a statement for all active lanes of the launch at once. Each
instruction it issues is logged once, as a *chunk*: the per-wavefront summary of the
active lanes (shared by every instruction issued under the same EXEC mask) plus,
for memory instructions, per-wavefront coalesced lines or LDS conflict degrees,
computed with vectorised numpy. ``streams()`` turns the chunks into one
``WavefrontStream`` per wavefront, in program order, ending with ``END``: a stable
sort by wavefront id keeps the issue order within each wavefront.

Memory rules (see ``simulator/stream.py`` and the R9 Nano notes):

* VMEM: the distinct 64 B lines touched by the active lanes, ascending;
* LDS: bank = dword address mod 32; lanes are served in groups of 32 dwords: a lane
  moving ``ceil(bytes / 4)`` dwords shares its pass with ``32 // that`` lanes (two
  half-wavefronts for 32-bit accesses, eight-lane groups for 128-bit ones, ten-lane
  groups for 96-bit ones, the last group of a wavefront shorter); every dword a lane's
  bytes overlap counts. Within a group, lanes on the same dword broadcast and distinct
  dwords in one bank take one pass each. The conflict degree is the worst group's
  count (1 = conflict free).
"""
from typing import NamedTuple

import numpy as np

from ..stream import INST_DTYPE, LDS_BANKS, LINE_BYTES, WAVEFRONT_SIZE, Unit, WavefrontStream


def sorted_unique(values, return_counts=False):
    """``np.unique`` by sorting: numpy 2's hash-based unique is several times slower here."""
    values = np.sort(values, kind="stable")
    if not len(values):
        return (values, np.empty(0, np.int64)) if return_counts else values
    first = np.flatnonzero(np.r_[True, values[1:] != values[:-1]])
    if return_counts:
        return values[first], np.diff(np.r_[first, len(values)])
    return values[first]


def lds_conflict_degree(wf, lane_slot, first_byte, nbytes):
    """Per-wavefront bank-conflict degree of one LDS access, vectorised.

    ``wf``/``lane_slot`` give each active lane's wavefront and lane number (0..63),
    ``first_byte`` its LDS byte address, ``nbytes`` the bytes each lane moves. Returns
    (wavefront ids, degree, cycles) for the wavefronts present, in ascending id order:
    the degree is the worst lane group's, the cycles the sum over the groups with active
    lanes (the passes the LDS makes for the whole instruction).
    """
    group_lanes = max(1, LDS_BANKS // -(-nbytes // 4))
    groups_per_wave = -(-WAVEFRONT_SIZE // group_lanes)
    group = (wf * groups_per_wave + lane_slot // group_lanes).astype(np.int64)
    # The dwords each lane's bytes overlap: ceil(nbytes / 4), one more when misaligned;
    # a lane's shorter span repeats its last dword, which the dedup below absorbs.
    first = np.asarray(first_byte, dtype=np.int64) // 4
    last = (np.asarray(first_byte, dtype=np.int64) + nbytes - 1) // 4
    span = int((last - first).max(initial=0)) + 1
    dword = np.minimum(first[:, None] + np.arange(span), last[:, None]).reshape(-1)
    group = np.repeat(group, span)
    distinct = sorted_unique(group * (1 << 32) + dword)
    g = distinct >> 32
    bank = (distinct & 0xFFFFFFFF) % LDS_BANKS
    keys, per_bank = sorted_unique(g * LDS_BANKS + bank, return_counts=True)
    g_of_key = keys // LDS_BANKS
    starts = np.flatnonzero(np.r_[True, g_of_key[1:] != g_of_key[:-1]])
    worst_per_group = np.maximum.reduceat(per_bank, starts)
    wave_of_group = g_of_key[starts] // groups_per_wave
    wstarts = np.flatnonzero(np.r_[True, wave_of_group[1:] != wave_of_group[:-1]])
    return (wave_of_group[wstarts], np.maximum.reduceat(worst_per_group, wstarts),
            np.add.reduceat(worst_per_group, wstarts))


def coalesce(wf, first_byte, last_byte):
    """(line counts per wavefront, flat line addresses) for lanes touching [first, last] bytes.

    Wavefronts come out in ascending id order, lines ascending within each.
    """
    first = first_byte // LINE_BYTES
    last = last_byte // LINE_BYTES
    spans = (last - first + 1).astype(np.int64)
    if spans.max(initial=1) > 1:
        lane_of = np.repeat(np.arange(len(first)), spans)
        offsets = np.arange(len(lane_of)) - np.repeat(np.cumsum(spans) - spans, spans)
        lines = first[lane_of] + offsets
        wf = wf[lane_of]
    else:
        lines = first
    keys = sorted_unique(wf.astype(np.int64) * (1 << 40) + lines.astype(np.int64))
    key_wf = keys >> 40
    _, counts = sorted_unique(key_wf, return_counts=True)
    return counts, (keys & ((1 << 40) - 1)) * LINE_BYTES


class Records(NamedTuple):
    """The streams of consecutive wavefronts, laid out one after the other: wavefront
    ``w``'s records are ``insts[first[w]:first[w + 1]]``, its line addresses
    ``addresses[first_line[w]:first_line[w + 1]]``."""

    insts: np.ndarray
    addresses: np.ndarray
    first: np.ndarray
    first_line: np.ndarray

    def copy_streams(self, waves: range) -> list:
        """The ``WavefrontStream`` of each of the consecutive ``waves``, in new arrays of
        their own (one for their records, one for their addresses)."""
        a, b = waves.start, waves.stop
        first, first_line = self.first - self.first[a], self.first_line - self.first_line[a]
        insts = self.insts[self.first[a]:self.first[b]].copy()
        addresses = self.addresses[self.first_line[a]:self.first_line[b]].copy()
        return [WavefrontStream(insts[first[w]:first[w + 1]],
                                addresses[first_line[w]:first_line[w + 1]]) for w in waves]


class InstructionLog:
    """Instructions issued by a launch, logged grid-wide (see the module docstring)."""

    def __init__(self, wavefronts):
        self.wavefronts = wavefronts
        self.chunks = []
        self.total = 0

    def alu(self, lanes, unit, line, count=1):
        """``count`` instructions of ``unit`` (VALU, SALU, BRANCH ...) by each wavefront in ``lanes``."""
        if lanes.n and count > 0:
            waves = lanes.waves()
            self.chunks.append((waves, unit, line, 0, count, None, None))
            self.total += len(waves[0]) * count

    def vmem(self, lanes, line, write, addresses, nbytes):
        """One global load/store; ``addresses`` are the active lanes' byte addresses."""
        if not lanes.n:
            return
        waves = lanes.waves()
        addresses = np.broadcast_to(np.asarray(addresses, dtype=np.int64), (lanes.n,))
        counts, lines = coalesce(lanes.idx >> 6, addresses, addresses + (nbytes - 1))
        self.chunks.append((waves, Unit.VMEM, line, write, 1, None, (counts, lines)))
        self.total += len(waves[0])

    def lds(self, lanes, line, write, addresses, nbytes):
        """One LDS access; ``addresses`` are the active lanes' LDS byte addresses."""
        if not lanes.n:
            return
        waves = lanes.waves()
        addresses = np.broadcast_to(np.asarray(addresses, dtype=np.int64), (lanes.n,))
        _, degree, cycles = lds_conflict_degree(lanes.idx >> 6, lanes.idx & 63, addresses, nbytes)
        self.chunks.append((waves, Unit.LDS, line, write, 1, (degree, cycles), None))
        self.total += len(waves[0])

    def streams(self):
        """The ``Records`` of every wavefront's stream (each ending with END), in order.

        Each chunk's records go straight to their place: a wavefront's records are in
        issue order, and a chunk names each of its wavefronts once, so its records land
        at each wavefront's next free slot. Nothing is sorted, and no column exists
        twice (the records take 30 bytes an instruction).
        """
        nw = self.wavefronts
        records = np.zeros(nw, np.int64)
        lines = np.zeros(nw, np.int64)
        for (wf, _, _), _, _, _, count, _, coalesced in self.chunks:
            records[wf] += count
            if coalesced is not None:
                lines[wf] += coalesced[0]
        first = np.r_[0, np.cumsum(records + 1)]           # + 1: each stream's END
        first_line = np.r_[0, np.cumsum(lines)]
        insts = np.zeros(int(first[-1]), dtype=INST_DTYPE)
        insts["unit"][first[1:] - 1] = Unit.END
        addresses = np.empty(int(first_line[-1]), dtype=np.int64)
        free = first[:-1].copy()
        free_line = first_line[:-1].copy()
        field = {name: insts[name] for name in INST_DTYPE.names}   # strided views
        for (wf, active, masks), unit, line, write, count, degree, coalesced in self.chunks:
            at = free[wf]
            # a record's lines start after its wavefront's earlier ones (any record: a
            # stream's offsets never fall back)
            line_at = free_line[wf] - first_line[wf]
            if count > 1:
                at = (at[:, None] + np.arange(count)).reshape(-1)
                active, masks = np.repeat(active, count), np.repeat(masks, count)
                line_at = np.repeat(line_at, count)
            free[wf] += count
            field["unit"][at] = unit
            field["active"][at] = active
            field["write"][at] = write
            field["line"][at] = line
            masks = masks.astype(np.uint64, copy=False)
            field["exec_lo"][at] = masks & np.uint64(0xFFFFFFFF)
            field["exec_hi"][at] = masks >> np.uint64(32)
            field["addr_off"][at] = line_at
            if degree is not None:
                field["passes"][at], field["lds_cycles"][at] = degree
            if coalesced is not None:
                counts, flat = coalesced
                field["addr_cnt"][at] = counts
                starts = np.cumsum(counts) - counts
                addresses[np.repeat(free_line[wf] - starts, counts) + np.arange(len(flat))] = flat
                free_line[wf] += counts
        return Records(insts, addresses, first, first_line)
