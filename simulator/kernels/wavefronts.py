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
        """(every record, one ``WavefrontStream`` per wavefront): the wavefronts' streams,
        each ending with END, are consecutive slices of the records."""
        nw = self.wavefronts
        cols = {k: [] for k in ("wf", "unit", "active", "passes", "lds_cycles", "write", "line",
                                "exec", "cnt")}
        line_chunks = []
        for (wf, active, masks), unit, line, write, count, degree, lines in self.chunks:
            if count > 1:
                wf, active, masks = (np.repeat(wf, count), np.repeat(active, count),
                                     np.repeat(masks, count))
            n = len(wf)
            cols["wf"].append(wf)
            cols["unit"].append(np.full(n, unit, np.uint8))
            cols["active"].append(active)
            if degree is None:
                cols["passes"].append(np.zeros(n, np.uint8))
                cols["lds_cycles"].append(np.zeros(n, np.uint16))
            else:
                cols["passes"].append(degree[0])
                cols["lds_cycles"].append(degree[1])
            cols["write"].append(np.full(n, write, np.uint8))
            cols["line"].append(np.full(n, line, np.uint32))
            cols["exec"].append(masks)
            if lines is not None:
                cols["cnt"].append(lines[0])
                line_chunks.append(lines[1])
            else:
                cols["cnt"].append(np.zeros(n, np.int64))
        merged = {k: np.concatenate(v) if v else np.empty(0, np.int64) for k, v in cols.items()}
        flat_lines = np.concatenate(line_chunks) if line_chunks else np.empty(0, np.int64)
        order = np.argsort(merged["wf"], kind="stable")
        wf_sorted = merged["wf"][order]
        n = len(order)
        # Each wavefront's records, then its END: the END of wavefront w sits after its
        # records, shifted by the w ENDs before it, and so is every record of w.
        ends = np.cumsum(np.bincount(wf_sorted, minlength=nw)) + np.arange(nw)
        pos = np.arange(n) + wf_sorted
        insts = np.zeros(n + nw, dtype=INST_DTYPE)
        insts["unit"][ends] = Unit.END
        for name in ("unit", "active", "passes", "lds_cycles", "write", "line"):
            insts[name][pos] = merged[name][order]
        masks = merged["exec"][order].astype(np.uint64)
        insts["exec_lo"][pos] = masks & np.uint64(0xFFFFFFFF)
        insts["exec_hi"][pos] = masks >> np.uint64(32)
        cnt = merged["cnt"][order].astype(np.int64)
        insts["addr_cnt"][pos] = cnt
        # Line addresses: reorder the chunks' line slices into wavefront order.
        src_off = np.cumsum(merged["cnt"]) - merged["cnt"]
        dst_off = np.cumsum(cnt) - cnt
        gather = np.repeat(src_off[order] - dst_off, cnt) + np.arange(int(cnt.sum()))
        addresses = flat_lines[gather] if len(gather) else np.empty(0, np.int64)
        lines_per_wave = np.bincount(wf_sorted, weights=cnt, minlength=nw).astype(np.int64)
        wave_line_start = np.r_[0, np.cumsum(lines_per_wave)]
        insts["addr_off"][pos] = dst_off - wave_line_start[wf_sorted]
        starts_inst = np.r_[0, ends[:-1] + 1]
        return insts, [WavefrontStream(insts[starts_inst[w]:ends[w] + 1],
                                       addresses[wave_line_start[w]:wave_line_start[w + 1]])
                       for w in range(nw)]
