"""Kernel-level records in the trace: the tables behind Klein's views.

A ``KernelRecorder`` runs launches for a host program (``start``; ``launch`` runs one
to the end) and, as each completes, stores what it did into the ``kernel_*`` tables of
``sqlite_schema.sql``: the program's source, annotations and semantic model once per
program; per launch its geometry, arguments,
memory objects and an execution summary; and, when instrumentation is on, the
``@watch`` accesses, branch patterns with proxy warps, and ``@emit`` values.

Rows go through a sink with ``execute``/``executemany`` (a ``TraceWriter`` or a
``BackgroundWriter``); the branch rows, all integers, go as an int64 matrix, which a
writer process receives without pickling a row at a time (the watched accesses name
their array, so they go as tuples). A recorder made without a sink buffers its rows
until ``write_to`` is given one.
"""
import json

import numpy as np

from .batches import finished, start_launch
from .memory import Buffer
from .probes import Probes

MAX_IMAGE_PIXELS = 1 << 20  # larger 2-D buffers are not copied into the trace


class KernelRecorder:
    """Runs and records kernel launches (see the module docstring).

    ``instrument`` False records only sources and launches, as Klein's runs without
    views; True adds watched accesses, branch streams and emitted values, bounded by
    ``max_accesses`` and ``max_branch_bits`` per launch.
    """

    def __init__(self, writer=None, *, instrument=True, watch=True, branches=True, emit=True,
                 max_accesses=500_000, max_branch_bits=5_000_000):
        self.writer = writer
        self.buffered = []
        self.instrument = instrument
        self.probe_options = dict(watch=watch, branches=branches, emit=emit,
                                  max_accesses=max_accesses, max_branch_bits=max_branch_bits)
        self.sources = {}
        self.launches = 0

    # -- sink ------------------------------------------------------------------------
    def _rows(self, sql, rows):
        """Insert ``rows`` (an iterable, consumed once) now or when a sink is attached."""
        if isinstance(rows, list) and not rows:
            return
        if self.writer is None:
            self.buffered.append((sql, rows))
        else:
            self.writer.executemany(sql, rows)

    def write_to(self, writer):
        """Write buffered rows through ``writer`` and keep writing there from now on."""
        self.writer = writer
        for sql, rows in self.buffered:
            writer.executemany(sql, rows)
        self.buffered = []

    # -- recording -------------------------------------------------------------------
    def source(self, program):
        """The kernel_source id of ``program``, recording it (and its semantic model) once."""
        key = id(program)
        if key in self.sources:
            return self.sources[key][0]
        source_id = len(self.sources)
        self.sources[key] = (source_id, program)  # keep the program alive so ids stay unique
        emits = [{"name": e.name, "type": e.type_name, "length": e.length, "line": e.line}
                 for e in program.emits]
        binds = [dict(spec, line=line) for line, spec in program.binds]
        self._rows("INSERT INTO kernel_source (id, path, text, emits, binds) VALUES (?, ?, ?, ?, ?)",
                   [(source_id, program.path, program.source, json.dumps(emits), json.dumps(binds))])
        self._rows("INSERT INTO kernel_branch_node (source, kernel, id, parent, branch, type, line,"
                   " col, end_line) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                   [(source_id, kernel.name, n.id, n.parent, n.branch, n.kind, n.line, n.col, n.end_line)
                    for kernel in program.kernels.values() for n in kernel.branch_nodes])
        return source_id

    def start(self, program, kernel_name, global_size, local_size, args, *, launch_id=None,
              name=None):
        """``batches.start_launch`` (same arguments), its records written when it completes."""
        launch_id = self.launches if launch_id is None else launch_id
        self.launches = launch_id + 1
        source_id = self.source(program)
        self._images(launch_id, global_size, args)  # before the run: the input as given
        probes = Probes(**self.probe_options) if self.instrument else None
        result = start_launch(program, kernel_name, global_size, local_size, args,
                              probes=probes, launch_id=launch_id, name=name)

        def record(batches):
            self._launch_row(launch_id, source_id, batches, result, args, probes)
            self._arrays(launch_id, batches)
            if probes is not None:
                self._accesses(launch_id, probes)
                self._branches(launch_id, probes)
                self._emits(launch_id, probes)

        result.work_groups.on_complete.append(record)
        return result

    def launch(self, program, kernel_name, global_size, local_size, args, *, launch_id=None,
               name=None):
        """``start``, run to the end (``batches.finished``)."""
        return finished(self.start(program, kernel_name, global_size, local_size, args,
                                   launch_id=launch_id, name=name))

    def _launch_row(self, launch_id, source_id, batches, result, args, probes):
        counts = batches.counts
        truncated = probes.truncated if probes is not None else {"accesses": False, "branches": False}
        self._rows(
            "INSERT INTO kernel_launch (id, source, kernel, global_size, local_size, work_groups,"
            " wavefronts, args, lds_bytes, instructions, vector_instructions, active_lanes,"
            " partial_instructions, lds_instructions, lds_conflicted, lds_max_degree,"
            " watch_truncated, branch_truncated, valu_active_lanes, lds_active_lanes) VALUES (?, ?,"
            " ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [(launch_id, source_id, batches.kernel.name, json.dumps(list(result.global_size)),
              json.dumps(list(result.local_size)), len(batches), counts.wavefronts,
              json.dumps(_describe_args(args)), batches.lds_bytes, counts.instructions,
              counts.vector, counts.vector_active_lanes, counts.partial, counts.lds,
              counts.lds_conflicted, counts.lds_max_degree, int(truncated["accesses"]),
              int(truncated["branches"]), counts.valu_active_lanes, counts.lds_active_lanes)])

    def _images(self, launch_id, global_size, args):
        if len(global_size) != 2 or global_size[0] * global_size[1] > MAX_IMAGE_PIXELS:
            return
        width, height = global_size
        self._rows(
            "INSERT INTO kernel_image (launch, name, width, height, pixels) VALUES (?, ?, ?, ?, ?)",
            [(launch_id, name, width, height, value.array.astype("<f4").tobytes())
             for name, value in args.items()
             if isinstance(value, Buffer) and value.array.size == width * height
             and value.array.dtype.names is None])

    def _arrays(self, launch_id, batches):
        rows = []
        for region in batches.regions.values():
            if region.scale > 1:
                continue  # a vloadN/vstoreN view of an array listed on its own
            rows.append((launch_id, region.owner, region.space, str(region.elem), region.elem.size,
                         region.length, region.base, int(region.owner in batches.watched)))
        self._rows("INSERT INTO kernel_array (launch, name, space, elem_type, elem_bytes, length,"
                   " base, watched) VALUES (?, ?, ?, ?, ?, ?, ?, ?)", rows)

    def _accesses(self, launch_id, probes):
        cols = probes.access_rows()
        if cols is None:
            return
        n = len(cols["seq"])
        order = _key_order(cols["group"], cols["seq"])
        self._rows(
            "INSERT INTO kernel_access (launch, seq, epoch, work_item, work_group, local_id, kind,"
            " line, array, element, address, bank) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            zip([launch_id] * n, *(np.asarray(cols[k])[order].tolist() for k in (
                "seq", "epoch", "work_item", "group", "local", "kind", "line", "array", "element",
                "address", "bank"))))

    def _branches(self, launch_id, probes):
        patterns, rows = probes.branch_patterns()
        if rows is None:
            return
        counts = np.bincount(rows["pattern"], minlength=len(patterns))
        self._rows("INSERT INTO kernel_branch_pattern (launch, id, bits, nodes, work_items)"
                   " VALUES (?, ?, ?, ?, ?)",
                   [(launch_id, i, bits, nodes, int(counts[i]))
                    for i, (bits, nodes) in enumerate(patterns)])
        lane = rows["local"] % 64
        proxy_of_row, proxies = proxy_warps(rows["wavefront"], lane, rows["pattern"])
        self._rows("INSERT INTO kernel_proxy_warp (launch, id, wavefronts, representative, patterns,"
                   " divergent) VALUES (?, ?, ?, ?, ?, ?)",
                   [(launch_id, i, count, rep, json.dumps(regions), int(len(regions) > 1))
                    for i, (count, rep, regions) in enumerate(proxies)])
        branches = _int_rows(launch_id, rows["work_item"], rows["group"], rows["wavefront"], lane,
                             rows["pattern"], proxy_of_row)
        self._rows("INSERT INTO kernel_branch (launch, work_item, work_group, wavefront, lane,"
                   " pattern, proxy) VALUES (?, ?, ?, ?, ?, ?, ?)",
                   branches[_key_order(branches[:, 6], branches[:, 3])])

    def _emits(self, launch_id, probes):
        for name, index, values in sorted(probes.emits, key=lambda emit: emit[0]):
            order = _key_order(index)
            self._rows("INSERT INTO kernel_emit (launch, name, idx, value) VALUES (?, ?, ?, ?)",
                       zip([launch_id] * len(index), [name] * len(index), index[order].tolist(),
                           values[order].astype(float).tolist()))


def _key_order(*keys):
    """The order of a launch's rows by its table's index key (``keys``, first one first,
    ties kept in place): every row then goes in at the index's end (``sqlite_schema.sql``)."""
    return np.lexsort(keys[::-1])


def _int_rows(launch_id, *columns):
    """One launch's rows as an int64 matrix: the launch, then ``columns``."""
    rows = np.empty((len(columns[0]), 1 + len(columns)), dtype=np.int64)
    rows[:, 0] = launch_id
    for i, column in enumerate(columns, 1):
        rows[:, i] = column
    return rows


def proxy_warps(wavefront, lane, pattern):
    """Group wavefronts whose lanes follow the same patterns, lane by lane (Klein's proxy warps).

    Returns (proxy id of each input row, proxies), proxies being (wavefront count,
    representative wavefront, {pattern: lanes}) ordered by count, largest first.
    """
    waves, wave_row = np.unique(wavefront, return_inverse=True)
    table = np.full((len(waves), 64), -1, dtype=np.int64)
    table[wave_row, lane] = pattern
    signatures, first, inverse, counts = np.unique(table, axis=0, return_index=True,
                                                   return_inverse=True, return_counts=True)
    inverse = inverse.reshape(-1)
    order = sorted(range(len(signatures)), key=lambda s: (-counts[s], first[s]))
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order))
    proxies = []
    for s in order:
        values, lanes = np.unique(signatures[s][signatures[s] >= 0], return_counts=True)
        proxies.append((int(counts[s]), int(waves[first[s]]),
                        {str(int(v)): int(c) for v, c in zip(values, lanes)}))
    return rank[inverse][wave_row], proxies


def _describe_args(args):
    out = {}
    for name, value in args.items():
        if hasattr(value, "array"):
            out[name] = {"buffer": value.name, "base": value.base, "bytes": value.nbytes,
                         "dtype": str(value.array.dtype)}
        elif hasattr(value, "elements"):
            out[name] = {"local": value.elements}
        else:
            # Numbers stay numbers; a vector or struct value becomes a (nested) list.
            out[name] = _plain(value)
    return out


def _plain(value):
    """A JSON-ready number or (nested) list for a scalar, vector or struct value."""
    if isinstance(value, np.ndarray) and value.dtype.names is not None:
        return [_plain(value[field]) for field in value.dtype.names]
    if isinstance(value, np.ndarray):
        return value.tolist()
    return value.item() if hasattr(value, "item") else value
