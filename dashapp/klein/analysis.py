"""Klein's kernel views, computed from the kernel records of a trace (pure numpy, no I/O).

* **Logical time** (memory view): a work-item's watched accesses are ordered by the
  barriers its work-group had passed (``epoch``) and then by issue order. Events between
  two barriers happen "at the same time" (Klein §4.3), so each epoch becomes a band of
  rows as tall as the busiest work-item in it, and every barrier becomes one row across
  all work-items, so barriers line up in the picture.
* **Banks and conflicts**: GCN's LDS serves 32 dwords per pass, so a conflict is counted
  per lane group of one instruction: a lane moving ``ceil(bytes / 4)`` dwords shares a
  pass with ``32 // that`` lanes of its wavefront (the two half-wavefronts for 32-bit
  elements, 16 lanes for 64-bit, 8 for 128-bit), and every dword its bytes overlap
  counts. Lanes reading the same dword broadcast, distinct dwords in one bank
  serialise. The degree of a group is the largest number of distinct dwords in one
  bank (1 = conflict free), the same definition the simulator's timing model charges
  passes for (simulator/kernels/wavefronts.py; the app does not import it, so the
  rule is written twice and a test holds the two together).
* **Branch patterns**: bins sorted by size, proxy warps sorted by the warps they stand
  for, and the source highlighting of one pattern (conditions taken green, not taken
  red, code the pattern never ran faded), read from the semantic model.
"""
import json
from collections import namedtuple

import numpy as np

BANKS = 32
READ, WRITE, BARRIER = 0, 1, 2

ACCESS_FIELDS = ("seq", "epoch", "work_item", "work_group", "local_id", "kind", "line",
                 "element", "address", "bank")
Accesses = namedtuple("Accesses", ACCESS_FIELDS)
"""Columns of kernel_access rows as equal-length int64 arrays."""

Layout = namedtuple("Layout", "y barrier_y epoch_rows rows")
"""Memory-view rows: ``y`` per access row (-1 on barrier rows), ``barrier_y`` per epoch
(the row of the barrier that ends it), the rows of each epoch's band, total rows."""

Conflicts = namedtuple("Conflicts", "bank_degree instruction_degree instructions conflicted "
                                    "worst group_lanes dword_bank dword_degree")
"""Per access row: distinct dwords sharing its bank (the worst of its banks, for a wide
element) in its lane group (``bank_degree``), and the group's degree; totals over lane
groups of instructions (``instructions``), each ``group_lanes`` lanes wide; and per
dword a local access touches, its bank and that bank's degree in the group."""

BankTable = namedtuple("BankTable", "accesses degree conflicted")
"""Per bank (arrays of 32): accesses, worst conflict degree, accesses in a conflict."""

Window = namedtuple("Window", "start stop first_group last_group groups")
"""Work-groups drawn: positions [start, stop) among the ``groups`` with accesses, and the
ids of the first and last one drawn."""

Proxy = namedtuple("Proxy", "id wavefronts representative regions divergent")
"""A proxy warp; ``regions`` is a list of (pattern id, lanes), largest region first."""


def accesses_from_rows(rows):
    """``Accesses`` from rows whose columns are in ``ACCESS_FIELDS`` order."""
    table = np.asarray(rows, dtype=np.int64).reshape(-1, len(ACCESS_FIELDS))
    return Accesses(*(np.ascontiguousarray(table[:, i]) for i in range(len(ACCESS_FIELDS))))


# -- logical time ------------------------------------------------------------------------
def _runs(keys):
    """For rows sorted by ``keys`` (a tuple of arrays): the rank of each row in its run of
    equal keys."""
    n = len(keys[0])
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    new = np.zeros(n, dtype=bool)
    new[0] = True
    for key in keys:
        new[1:] |= key[1:] != key[:-1]
    starts = np.flatnonzero(new)
    run_start = starts[np.cumsum(new) - 1]
    return np.arange(n) - run_start


def logical_layout(acc):
    """Rows of the memory view (see ``Layout``); time runs down the rows.

    Epoch ``e`` occupies rows ``[offset[e], offset[e] + h[e])`` where ``h[e]`` is the most
    events any one work-item has in it, and the barrier ending epoch ``e`` (its rows carry
    ``epoch == e``) sits on the row right after.
    """
    events = acc.kind != BARRIER
    epochs = int(acc.epoch.max()) + 1 if len(acc.epoch) else 0
    order = np.lexsort((acc.seq[events], acc.epoch[events], acc.work_item[events]))
    idx = np.flatnonzero(events)[order]
    rank = _runs((acc.work_item[idx], acc.epoch[idx]))
    heights = np.zeros(epochs, dtype=np.int64)
    np.maximum.at(heights, acc.epoch[idx], rank + 1)
    offsets = np.concatenate([[0], np.cumsum(heights + 1)])
    y = np.full(len(acc.kind), -1, dtype=np.int64)
    y[idx] = offsets[acc.epoch[idx]] + rank
    return Layout(y=y, barrier_y=offsets[:-1] + heights, epoch_rows=heights,
                  rows=int(offsets[-1]) if epochs else 0)


def barrier_segments(acc, layout):
    """Rows (x0, x1, y, line): each barrier drawn across the runs of consecutive work-item
    ids of the work-group that passed it (one run per group in 1-D, one per row of a 2-D
    group), so a barrier covers exactly the work-items that reached it."""
    events = acc.kind != BARRIER
    items = int(acc.work_item[events].max()) + 1 if events.any() else 1
    keys = np.unique(acc.work_group[events] * items + acc.work_item[events])
    pairs = np.stack([keys // items, keys % items], axis=1)
    bars = np.flatnonzero(~events)
    if len(bars) == 0 or len(pairs) == 0:
        return np.zeros((0, 4), dtype=np.int64)
    # A run starts where the group changes or the work-item id jumps.
    starts = np.ones(len(pairs), dtype=bool)
    starts[1:] = (pairs[1:, 0] != pairs[:-1, 0]) | (pairs[1:, 1] != pairs[:-1, 1] + 1)
    first = np.flatnonzero(starts)
    last = np.append(first[1:], len(pairs)) - 1
    runs = np.stack([pairs[first, 0], pairs[first, 1], pairs[last, 1]], axis=1)
    # Runs are sorted by group: each barrier row takes the slice of its group's runs.
    lo = np.searchsorted(runs[:, 0], acc.work_group[bars], side="left")
    hi = np.searchsorted(runs[:, 0], acc.work_group[bars], side="right")
    take = np.concatenate([np.arange(a, b) for a, b in zip(lo, hi)])
    reps = hi - lo
    return np.stack([runs[take, 1], runs[take, 2],
                     np.repeat(layout.barrier_y[acc.epoch[bars]], reps),
                     np.repeat(acc.line[bars], reps)], axis=1).astype(np.int64).reshape(-1, 4)


def group_window(acc, first, budget):
    """``Window`` of the work-groups to draw: from the ``first``-th group (in dispatch
    order, counting groups with accesses) as many whole groups as fit ``budget`` accesses,
    at least one. Drawing is the slow part in a browser, not the computation."""
    events = acc.kind != BARRIER
    groups, counts = np.unique(acc.work_group[events], return_counts=True)
    if len(groups) == 0:
        return Window(0, 0, 0, -1, 0)
    start = min(max(first, 0), len(groups) - 1)
    fits = np.cumsum(counts[start:]) <= budget
    stop = start + max(1, int(fits.sum()))
    return Window(start, stop, int(groups[start]), int(groups[stop - 1]), len(groups))


def tile_order(acc, group_size):
    """``acc`` with each access's ``work_item`` replaced by its place in tile order:
    work-group after work-group, work-items in local-id order within each. For a 1-D
    launch this is the global id; a 2-D launch's tile (a work-group of rows of pixels)
    then draws as one contiguous block instead of strips a whole image row apart."""
    events = acc.kind != BARRIER
    place = acc.work_item.copy()
    place[events] = acc.work_group[events] * group_size + acc.local_id[events]
    return acc._replace(work_item=place)


def select(acc, rows):
    """The ``Accesses`` at ``rows`` (a boolean mask or indices)."""
    return Accesses(*(column[rows] for column in acc))


# -- banks and conflicts -----------------------------------------------------------------
def _combined(*columns):
    """One int64 key per row that orders and compares like the tuple of the (non-negative)
    ``columns``: a 1-D sort is several times faster than ``np.unique(axis=0)``."""
    key = np.zeros(len(columns[0]), dtype=np.int64)
    for col in columns:
        key = key * (int(col.max()) + 1 if len(col) else 1) + col
    return key


def _group_ids(*columns):
    """Dense ids of the distinct tuples of ``columns`` (row-aligned non-negative ints)."""
    if len(columns[0]) == 0:
        return np.zeros(0, dtype=np.int64)
    return np.unique(_combined(*columns), return_inverse=True)[1].reshape(-1)


WAVEFRONT = 64


def _lds_dwords(acc, elem_bytes):
    """(row, dword) of every dword the local-memory accesses' bytes overlap."""
    lds = np.flatnonzero((acc.kind != BARRIER) & (acc.bank >= 0))
    first = acc.address[lds] // 4
    span = (acc.address[lds] + int(elem_bytes) - 1) // 4 - first + 1
    rows = np.repeat(lds, span)
    offset = np.arange(len(rows)) - np.repeat(np.cumsum(span) - span, span)
    return rows, np.repeat(first, span) + offset


def conflicts(acc, elem_bytes=4):
    """``Conflicts`` of the local-memory accesses (rows with a bank; others get 0), for an
    array of ``elem_bytes`` elements."""
    n = len(acc.kind)
    group_lanes = max(1, BANKS // -(-int(elem_bytes) // 4))
    bank_degree = np.zeros(n, dtype=np.int64)
    inst_degree = np.zeros(n, dtype=np.int64)
    rows, dword = _lds_dwords(acc, elem_bytes)
    if len(rows) == 0:
        return Conflicts(bank_degree, inst_degree, 0, 0, 0, group_lanes, dword, dword)
    # One lane group of one instruction: same work-group, issue, wavefront and lanes.
    local = acc.local_id[rows]
    group = _group_ids(acc.work_group[rows], acc.seq[rows], local // WAVEFRONT,
                       local % WAVEFRONT // group_lanes)
    words = int(dword.max()) + 1  # a radix above every dword (a larger one: the same keys)
    distinct = np.unique(group * words + dword)
    pair = distinct // words * BANKS + distinct % words % BANKS
    pairs, per_pair = np.unique(pair, return_counts=True)
    degree = per_pair[np.searchsorted(pairs, group * BANKS + dword % BANKS)]
    np.maximum.at(bank_degree, rows, degree)
    worst_of_group = np.zeros(int(group.max()) + 1, dtype=np.int64)
    np.maximum.at(worst_of_group, pairs // BANKS, per_pair)
    inst_degree[rows] = worst_of_group[group]
    return Conflicts(bank_degree, inst_degree, len(worst_of_group),
                     int((worst_of_group > 1).sum()), int(worst_of_group.max()), group_lanes,
                     dword % BANKS, degree)


def bank_table(found):
    """``BankTable`` for the 32 banks, from ``conflicts(...)``: a wide element counts as
    an access to each bank it touches."""
    banks = found.dword_bank
    accesses = np.bincount(banks, minlength=BANKS)[:BANKS]
    degree = np.zeros(BANKS, dtype=np.int64)
    np.maximum.at(degree, banks, found.dword_degree)
    conflicted = np.bincount(banks, weights=found.dword_degree > 1,
                             minlength=BANKS)[:BANKS].astype(np.int64)
    return BankTable(accesses, degree, conflicted)


# -- branch patterns ---------------------------------------------------------------------
def patterns_by_size(patterns):
    """Pattern rows (id, bits, nodes, work_items) largest first, ties by id (Klein sorts
    the histogram's bins by size: its x-axis has no meaning of its own)."""
    return sorted(patterns, key=lambda p: (-p[3], p[0]))


def proxies_by_size(rows):
    """``Proxy`` list from kernel_proxy_warp rows (id, wavefronts, representative,
    patterns JSON, divergent), most warps first, each donut's regions largest first."""
    out = []
    for pid, waves, rep, regions, divergent in rows:
        parts = sorted(((int(k), int(v)) for k, v in json.loads(regions).items()),
                       key=lambda r: (-r[1], r[0]))
        out.append(Proxy(pid, waves, rep, parts, bool(divergent)))
    return sorted(out, key=lambda p: (-p.wavefronts, p.representative))


def _skip_space(text, pos):
    """Position of the next character that is not blank or inside a comment."""
    while pos < len(text):
        if text[pos].isspace():
            pos += 1
        elif text.startswith("//", pos):
            end = text.find("\n", pos)
            pos = len(text) if end < 0 else end
        elif text.startswith("/*", pos):
            end = text.find("*/", pos + 2)
            pos = len(text) if end < 0 else end + 2
        else:
            break
    return pos


def _match(text, pos, open_, close):
    """Position just after the bracket closing the one at ``pos`` (comments skipped)."""
    depth = 0
    while pos < len(text):
        pos = _skip_space(text, pos)
        if pos >= len(text):
            break
        ch = text[pos]
        depth += (ch == open_) - (ch == close)
        pos += 1
        if depth == 0:
            return pos
    return len(text)


def _statement_end(text, pos):
    """Position after the statement starting at ``pos``: a block, or up to its ``;``."""
    pos = _skip_space(text, pos)
    if text.startswith("{", pos):
        return _match(text, pos, "{", "}")
    if text.startswith("if", pos) or text.startswith("for", pos) or text.startswith("while", pos):
        paren = text.find("(", pos)
        after = _statement_end(text, _match(text, paren, "(", ")"))
        rest = _skip_space(text, after)
        if text.startswith("else", rest) and text.startswith("if", pos):
            return _statement_end(text, rest + 4)
        return after
    depth = 0
    while pos < len(text):
        ch = text[pos]
        depth += (ch == "(") - (ch == ")")
        pos += 1
        if ch == ";" and depth == 0:
            return pos
    return len(text)


def statement_parts(text, line, col):
    """Line spans ``(then, else)`` of the ``if`` (or ``(body, None)`` of the loop) whose
    keyword starts at 1-based ``line``/``col`` of ``text``; ``else`` is None if absent."""
    starts = np.cumsum([0] + [len(s) + 1 for s in text.split("\n")])
    pos = int(starts[line - 1]) + col - 1

    def line_of(offset):
        return int(np.searchsorted(starts, offset, side="right"))

    paren = text.find("(", pos)
    if paren < 0:
        return (line, line), None
    body = _skip_space(text, _match(text, paren, "(", ")"))
    body_end = _statement_end(text, body)
    first = (line_of(body), line_of(max(body_end - 1, body)))
    rest = _skip_space(text, body_end)
    if text.startswith("else", rest) and not text[rest + 4:rest + 5].isalnum():
        last = _statement_end(text, rest + 4)
        return first, (line_of(rest), line_of(max(last - 1, rest)))
    return first, None


def source_states(text, nodes, bits, node_ids):
    """{line: state} highlighting one branch pattern in the source (Klein, Fig. 7.4).

    ``nodes``: kernel_branch_node rows (id, parent, branch, type, line, col, end_line);
    ``bits``/``node_ids``: the pattern's bit-stream and the node of each bit. States:
    ``taken`` (the condition was true every time it was tested, or the loop ran),
    ``not-taken`` (never true), ``mixed`` (an ``if`` tested several times both ways),
    ``faded`` (code the pattern never executed). Lines not mentioned ran normally.
    """
    seen = {}
    for bit, node in zip(bits, node_ids):
        seen.setdefault(node, []).append(bit == "1")
    states = {}

    def fade(lo, hi):
        for ln in range(lo, hi + 1):
            states[ln] = "faded"

    for node_id, _parent, _branch, kind, line, col, end_line in nodes:
        tests = seen.get(node_id)
        if not tests:
            fade(line, end_line)
            continue
        first, second = statement_parts(text, line, col)
        # The condition's own line keeps its colour even when the body shares it.
        if not any(tests):
            fade(max(first[0], line + 1), first[1])
        if kind == "if" and all(tests) and second is not None:
            fade(max(second[0], line + 1), second[1])
    for node_id, _parent, _branch, kind, line, _col, _end in nodes:
        tests = seen.get(node_id)
        if not tests or states.get(line) == "faded":
            continue
        if kind == "loop":
            states[line] = "taken" if any(tests) else "not-taken"
        else:
            states[line] = "taken" if all(tests) else "not-taken" if not any(tests) else "mixed"
    return states
