"""Everything the kernel page shows for one launch, read from a trace and computed.

``build(path, launch)`` is the whole path from a trace file to Klein's three views:
the kernel records are read (``queries``), logical time, bank conflicts and pattern
highlighting are computed (``analysis``), and the figures are built (``figures``).
The page renders the result; benchmarks/turnaround_views.py times it.
"""
import json
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .. import queries, urls
from ..catalog import trace_meta
from . import analysis, runner
from . import figures as kf

MAX_DRAWN_ACCESSES = 4_096
"""Accesses the memory view draws at once: whole work-groups, several times what its
opening range shows; the rest is a click away (drawing dominates the turnaround)."""
MAX_PATTERN_STATES = 400
"""Patterns whose source highlighting is sent to the browser (the largest first)."""


@dataclass(frozen=True)
class MemoryView:
    """One @watch array: its memory view, bank panel and conflict totals."""
    array: str
    space: str
    figure: dict
    banks: dict
    found: analysis.Conflicts
    table: analysis.BankTable
    accesses: int
    window: analysis.Window
    elem_type: str
    elem_bytes: int


ACCESS_KINDS = np.array(["read", "write", "barrier"])
"""Names of ``kernel_access.kind`` (``analysis.READ``, ``WRITE``, ``BARRIER``)."""


def accesses_csv(path, launch_id) -> str:
    """Every recorded access to the watched arrays of a launch, one row each, with its
    LDS bank and that bank's conflict degree in its lane group (the memory view's data,
    for a spreadsheet; barriers come once per array, as the view draws them)."""
    tables = []
    with queries.open_trace(path) as db:
        for name, space, _type, elem_bytes, _length, _base, watched in \
                queries.kernel_arrays(db, launch_id):
            if not watched:
                continue
            acc = analysis.accesses_from_rows(queries.kernel_accesses(db, launch_id, name))
            found = analysis.conflicts(acc, elem_bytes)
            table = pd.DataFrame({field: getattr(acc, field) for field in analysis.ACCESS_FIELDS})
            table["kind"] = ACCESS_KINDS[acc.kind]
            table["bank_degree"] = found.bank_degree
            table.insert(0, "space", space)
            table.insert(0, "array", name)
            tables.append(table)
    if not tables:
        raise LookupError("this launch has no @watch array: nothing to export")
    return pd.concat(tables, ignore_index=True).to_csv(index=False, lineterminator="\n")


@dataclass(frozen=True)
class KernelViews:
    launch: queries.KernelLaunch
    launches: list
    source: queries.KernelSource
    task: tuple
    memory: list
    patterns: list
    proxies: list
    histogram: dict
    donuts: dict
    image: dict
    pattern_states: dict
    work_items: dict
    debug: list


def _memory_views(db, launch, first_group, group_size):
    views = []
    for name, space, elem_type, elem_bytes, _length, _base, watched in queries.kernel_arrays(db, launch):
        if not watched:
            continue
        acc = analysis.accesses_from_rows(queries.kernel_accesses(db, launch, name))
        # Conflicts and the bank panel count every access; the memory view draws a window
        # of whole work-groups.
        found = analysis.conflicts(acc, elem_bytes)
        table = analysis.bank_table(found)
        window = analysis.group_window(acc, first_group, MAX_DRAWN_ACCESSES)
        rows = (acc.work_group >= window.first_group) & (acc.work_group <= window.last_group)
        ids = acc.work_item[rows]
        part = analysis.tile_order(analysis.select(acc, rows), group_size)
        lay = analysis.logical_layout(part)
        shown = found._replace(bank_degree=found.bank_degree[rows],
                               instruction_degree=found.instruction_degree[rows])
        views.append(MemoryView(
            array=name, space=space,
            figure=kf.memory_figure(part, lay, shown, name, analysis.barrier_segments(part, lay),
                                   ids),
            banks=kf.bank_figure(table), found=found, table=table,
            accesses=int((acc.kind != analysis.BARRIER).sum()), window=window,
            elem_type=elem_type, elem_bytes=int(elem_bytes)))
    return views


def _work_item_maps(rows, global_size):
    """Per global work-item id: its pattern's histogram rank and its proxy warp (-1: none)."""
    total = int(np.prod(global_size))
    pattern = np.full(total, -1, dtype=np.int64)
    proxy = np.full(total, -1, dtype=np.int64)
    if rows:
        table = np.asarray(rows, dtype=np.int64)
        keep = table[:, 0] < total
        pattern[table[keep, 0]] = table[keep, 1]
        proxy[table[keep, 0]] = table[keep, 2]
    return pattern, proxy


def edit_spec(path, launch_id, source, size, options="", include_dirs=(), gpu=""):
    """The ``RunSpec`` that re-runs launch ``launch_id`` of the trace at ``path`` with the
    edited ``source`` at ``size`` (text such as ``256x1``, one of the sizes the page
    offers), the build ``options`` (``-D N=64 -I dir``) and the server's ``include_dirs``,
    on GPU preset ``gpu`` (empty: the simulator's default); its arguments are scaled to
    the new size.

    Raises ``LookupError`` for a missing launch and ``ValueError`` for a size that is not
    offered, each with a message for the page.
    """
    with queries.open_trace(path) as db:
        launch = next((x for x in queries.kernel_launches(db) if x.id == launch_id), None)
        arrays = queries.kernel_arrays(db, launch_id)
    if launch is None:
        raise LookupError(f"No kernel launch {launch_id} here.")
    old_global = json.loads(launch.global_size)
    local = json.loads(launch.local_size)
    try:
        new_global = tuple(int(x) for x in str(size).split("x"))
    except ValueError:
        raise ValueError(f"Unknown size {size!r}.") from None
    if len(new_global) != len(old_global) or \
            new_global not in runner.size_options(old_global, local):
        raise ValueError(f"Size {size!r} is not offered for this launch.")
    return runner.RunSpec(
        source=source, kernel=launch.kernel, global_size=new_global, local_size=tuple(local),
        args=runner.scaled_args(launch.args, arrays, old_global, new_global),
        options=options or "", include_dirs=tuple(include_dirs), gpu=gpu or "")


def run_lengths(values):
    """``values`` as flat ``[value, count, value, count, ...]`` runs. The page carries the
    per-work-item maps this way: neighbouring work-items mostly share a pattern, and the
    64 of a wavefront always share a proxy, so a million work-items take kilobytes, not
    megabytes, of HTML (``assets/kernel.js`` expands them)."""
    values = np.asarray(values)
    if len(values) == 0:
        return []
    starts = np.flatnonzero(np.r_[True, values[1:] != values[:-1]])
    counts = np.diff(np.r_[starts, len(values)])
    return np.column_stack([values[starts], counts]).reshape(-1).tolist()


def build(path, launch_id, first_group=0):
    """``KernelViews`` of launch ``launch_id`` in the trace at ``path``; the memory view
    draws work-groups from the ``first_group``-th on.

    Raises ``LookupError`` when the trace has no such launch (or no kernel records).
    """
    with queries.open_trace(path) as db:
        launches = queries.kernel_launches(db)
        launch = next((x for x in launches if x.id == launch_id), None)
        if launch is None:
            raise LookupError(
                f"{path.name} has no kernel launch {launch_id}" if launches
                else f"{path.name} holds no kernel records (run a kernel workload with the"
                     " simulator to get them)")
        source = queries.kernel_source(db, launch.source)
        if source is None:  # only in a damaged or hand-made file
            raise LookupError(f"{path.name}: kernel launch {launch_id} names a source the"
                              " trace does not hold")
        task = queries.kernel_launch_task(db, launch.id)
        memory = _memory_views(db, launch.id, first_group,
                               int(np.prod(json.loads(launch.local_size))))
        patterns = analysis.patterns_by_size(queries.branch_patterns(db, launch.id))
        proxies = analysis.proxies_by_size(queries.proxy_warps(db, launch.id))
        nodes = queries.branch_nodes(db, launch.source, launch.kernel)
        picture = queries.kernel_image(db, launch.id)
        branch_rows = queries.work_item_branches(db, launch.id)
        binds = json.loads(source.binds or "[]")
        series = {}
        for bind in binds:
            for name in bind.get("data", []):
                rows = queries.emitted(db, launch.id, name)
                series[name] = ([r[0] for r in rows], [r[1] for r in rows])
    rank_of = {p[0]: i for i, p in enumerate(patterns)}
    global_size = json.loads(launch.global_size)
    pattern, proxy = _work_item_maps(branch_rows, global_size)
    ranks = np.full(max(rank_of, default=-1) + 2, -1, dtype=np.int64)
    for pid, rank in rank_of.items():
        ranks[pid] = rank
    pattern_rank = ranks[pattern]
    image = None
    if len(global_size) == 2 and branch_rows:
        width, height = global_size
        pixels = None
        if picture is not None and (picture[1], picture[2]) == (width, height):
            pixels = np.frombuffer(picture[3], dtype="<f4").reshape(height, width)
        image = kf.image_figure(width, height, np.maximum(pattern_rank, 0), pixels,
                                picture[0] if pixels is not None else None)
    states = {str(p[0]): analysis.source_states(source.text, nodes, p[1],
                                             [int(n) for n in p[2].split(",") if n])
              for p in patterns[:MAX_PATTERN_STATES]}
    return KernelViews(
        launch=launch, launches=launches, source=source, task=task, memory=memory,
        patterns=patterns, proxies=proxies, histogram=kf.histogram_figure(patterns),
        donuts=kf.donut_figure(proxies, rank_of), image=image, pattern_states=states,
        work_items={"pattern": run_lengths(pattern), "proxy": run_lengths(proxy)},
        debug=[(bind, kf.debug_figure(bind, series)) for bind in binds])


KERNEL_CATEGORIES = ("kernel", "work-group", "wavefront")
"""Task categories whose Component/Task view links to the kernel page."""


def task_launch(path, task_id, category):
    """The kernel launch a kernel, work-group or wavefront task belongs to, or None."""
    if category not in KERNEL_CATEGORIES:
        return None
    with queries.open_trace(path) as db:
        return queries.task_kernel_launch(db, task_id)


def kernel_href(trace, launch):
    """The kernel page of ``launch`` in ``trace``."""
    return urls.href("/kernel", urls.KernelState(trace=trace, launch=launch))


def trace_launches(path):
    """Every kernel launch of the trace at ``path`` (cached per file version): the Traces
    page lists them and the navbar shows its Kernel link only when there are some."""
    def make():
        with queries.open_trace(path) as db:
            return tuple(queries.kernel_launches(db))
    return trace_meta(path).memo("launches", make)
