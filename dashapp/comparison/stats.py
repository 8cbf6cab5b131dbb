"""Two runs side by side: what differs in their configuration, their kernels matched by
name, and their headline statistics with differences and ratios.

A run's statistics (``RunStats``) are read once per trace file version and cached with
its metadata. Component groups are the indexed families of the location names
(``GPU.SA[0].CU[3]`` is in group ``CU``), so the same code reads our traces and
imported ones; a group a trace lacks is simply absent.
"""
import math
import re
from dataclasses import dataclass

from .. import queries
from ..catalog import natural_key, trace_meta
from ..daisen import views

HEADLINE_GROUPS = ("CU", "SIMD", "L1V", "L2", "MALL", "DRAM")
"""Groups listed first, in this order (the GPU's path from compute to memory)."""
HIT_TAGS = ("read-hit", "write-hit")
MISS_TAGS = ("read-miss", "write-miss")
"""Cache steps counted as hits and misses (an MSHR hit is neither, as in the model)."""
SAME_WITHIN = 0.005
"""Kernels whose times differ by less than this fraction are "same", not slower/faster."""
_INDEXED = re.compile(r"^(?P<group>[^.\[\]]+)\[\d+\]$")


def group_of(name):
    """``GPU.SA[0].CU[3]`` → ``CU``; None for a location that is not one of a family."""
    match = _INDEXED.match(name.rsplit(".", 1)[-1])
    return match["group"] if match else None


@dataclass(frozen=True)
class Kernel:
    name: str
    start_ps: int
    end_ps: int

    @property
    def duration_ps(self):
        return self.end_ps - self.start_ps


@dataclass
class RunStats:
    simulated_ps: int
    kernels: list            # Kernel, in start order
    group_busy: dict         # group → mean busy fraction of its locations over the run
    hit_rates: dict          # group → hits / (hits + misses)
    instruction_mix: dict    # instruction action → count
    category_time: dict      # category → summed task time (ps)
    busiest: list            # names of the busiest locations, busiest first
    location_busy: dict      # location name → busy fraction over the run
    wavefronts_per_cu: float  # time-averaged resident wavefronts per CU while kernels run

    @property
    def kernel_start_ps(self):
        """Where the first kernel starts (the run's start without kernels)."""
        return self.kernels[0].start_ps if self.kernels else 0


def time_name(path_a, path_b):
    """What two runs' times are: "simulated time", or, if either was profiled, "run time"."""
    return "simulated time" if trace_meta(path_a).simulated and trace_meta(path_b).simulated \
        else "run time"


def run_stats(path, top=8):
    """The ``RunStats`` of the trace at ``path`` (cached with its metadata)."""
    return trace_meta(path).memo(("compare_stats", top), lambda: _run_stats(path, top))


def _run_stats(path, top):
    meta = trace_meta(path)
    span = max(1, meta.end_ps - meta.start_ps)
    kernel_kinds = [k for k, v in meta.kinds.items() if v.category == "kernel"]
    with queries.open_trace(path) as db:
        kernels = [Kernel(meta.kinds[kind].action, start, end)
                   for kind, start, end in queries.tasks_of_kinds(db, kernel_kinds)]
        tags = queries.tag_counts(db, HIT_TAGS + MISS_TAGS)
    members = {}
    for loc in meta.locations:
        group = group_of(loc.name)
        if group is not None:
            members.setdefault(group, []).append(loc)
    busy = {g: sum((x.busy_ps or 0) for x in locs) / span / len(locs)
            for g, locs in members.items()}
    names = {loc.id: loc.name for loc in meta.locations}
    hits, misses = {}, {}
    for location, tag, count in tags:
        group = group_of(names[location])
        target = hits if tag in HIT_TAGS else misses
        target[group] = target.get(group, 0) + count
    rates = {g: hits.get(g, 0) / (hits.get(g, 0) + misses.get(g, 0))
             for g in set(hits) | set(misses) if g is not None}
    summary = views.summary(path, top=top)
    category = {c: ps for c, ps, _ in summary.category_time}
    cus = len(members.get("CU", ()))
    kernel_ps = category.get("kernel", 0)
    per_cu = (category.get("wavefront", 0) / kernel_ps / cus) if cus and kernel_ps else None
    return RunStats(
        simulated_ps=meta.end_ps - meta.start_ps, kernels=kernels,
        group_busy=_ordered_groups(busy), hit_rates=_ordered_groups(rates),
        instruction_mix={a: n for a, n, _ in summary.instruction_mix},
        category_time=category,
        busiest=[n for n, _, _ in summary.busiest],
        location_busy={x.name: (x.busy_ps or 0) / span for x in meta.locations if x.task_count},
        wavefronts_per_cu=per_cu)


def _ordered_groups(values):
    order = [g for g in HEADLINE_GROUPS if g in values]
    order += sorted((g for g in values if g not in HEADLINE_GROUPS), key=natural_key)
    return {g: values[g] for g in order}


# -- configuration ---------------------------------------------------------------------------
def flatten(config, prefix=""):
    """A nested configuration as {dotted key: value}."""
    out = {}
    for key, value in (config or {}).items():
        if isinstance(value, dict):
            out.update(flatten(value, f"{prefix}{key}."))
        else:
            out[f"{prefix}{key}"] = value
    return out


def config_rows(a, b):
    """(key, A value, B value, differs) for every key of either configuration, the keys
    that differ first; a key one side lacks has None there."""
    fa, fb = flatten(a), flatten(b)
    keys = sorted(set(fa) | set(fb), key=natural_key)
    rows = [(k, fa.get(k), fb.get(k), fa.get(k) != fb.get(k)) for k in keys]
    return [r for r in rows if r[3]] + [r for r in rows if not r[3]]


# -- kernels -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class KernelMatch:
    name: str
    count_a: int
    count_b: int
    time_a: int      # summed duration over the launches, ps
    time_b: int
    status: str      # added, removed, slower, faster or same


def same_program(a, b):
    """Whether both runs launched the same kernels in the same order (launch-by-launch
    comparison makes sense)."""
    return bool(a) and [k.name for k in a] == [k.name for k in b]


def changed_launches(a, b, limit):
    """(launch index, kernel in A, kernel in B) of the ``limit`` launches whose time
    changed most (the same program's launches paired in order), largest change first;
    all of them, in launch order, if there are no more than ``limit``."""
    pairs = list(enumerate(zip(a, b)))
    if len(pairs) <= limit:
        return [(i, ka, kb) for i, (ka, kb) in pairs]
    pairs.sort(key=lambda p: -abs(p[1][1].duration_ps - p[1][0].duration_ps))
    return [(i, ka, kb) for i, (ka, kb) in pairs[:limit]]


def match_kernels(a, b):
    """Kernels matched by name (two runs of one program, such as two PyTorch runs):
    removed (only in A), added (only in B), slower, faster or the same; largest change
    first."""
    totals = {}
    for side, kernels in ((0, a), (1, b)):
        for k in kernels:
            entry = totals.setdefault(k.name, [0, 0, 0, 0])
            entry[side] += 1
            entry[2 + side] += k.duration_ps
    matches = []
    for name, (count_a, count_b, time_a, time_b) in totals.items():
        if not count_a:
            status = "added"
        elif not count_b:
            status = "removed"
        elif abs(time_b - time_a) <= SAME_WITHIN * max(time_a, 1):
            status = "same"
        else:
            status = "slower" if time_b > time_a else "faster"
        matches.append(KernelMatch(name, count_a, count_b, time_a, time_b, status))
    return sorted(matches, key=lambda m: (-abs(m.time_b - m.time_a), m.name))


def speedup(time_a, time_b):
    """How many times faster B is than A (A / B), None when B took no time."""
    return time_a / time_b if time_b else None


# -- statistics ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class StatRow:
    section: str
    label: str
    a: object        # None where a run lacks it
    b: object
    unit: str        # "fraction", "count" or "number"


TRACED_INSTRUCTIONS = ("Instruction tasks traced (a sweep's summary.csv counts every"
                       " instruction executed: s_waitcnt and wavefront ends too)")


def stat_rows(a, b):
    """The headline statistics of runs A and B, row by row."""
    rows = []

    def add(section, label, va, vb, unit):
        if va is not None or vb is not None:
            rows.append(StatRow(section, label, va, vb, unit))

    for group in _ordered_groups({g: 0 for g in {**a.group_busy, **b.group_busy}}):
        add("Busy fraction", group, a.group_busy.get(group), b.group_busy.get(group),
            "fraction")
    for group in _ordered_groups({g: 0 for g in {**a.hit_rates, **b.hit_rates}}):
        add("Hit rate", group, a.hit_rates.get(group), b.hit_rates.get(group), "fraction")
    add("Occupancy", "wavefronts per CU", a.wavefronts_per_cu, b.wavefronts_per_cu, "number")
    actions = sorted(set(a.instruction_mix) | set(b.instruction_mix),
                     key=lambda x: -(a.instruction_mix.get(x, 0) + b.instruction_mix.get(x, 0)))
    for action in actions:
        add(TRACED_INSTRUCTIONS, action, a.instruction_mix.get(action),
            b.instruction_mix.get(action), "count")
    if actions:
        add(TRACED_INSTRUCTIONS, "all traced", sum(a.instruction_mix.values()),
            sum(b.instruction_mix.values()), "count")
    busy_a, busy_b = a.location_busy, b.location_busy
    for name in sorted(set(a.busiest) | set(b.busiest),
                       key=lambda n: (-max(busy_a.get(n, 0), busy_b.get(n, 0)), natural_key(n))):
        add("Top components", name, busy_a.get(name), busy_b.get(name), "fraction")
    return rows


def largest_changes(rows, count=6):
    """The statistics that moved most between A and B (by the size of B/A, either way),
    leaving out single components: where a difference in time comes from."""
    def size(row):
        factor = ratio(row.a, row.b)
        return abs(math.log(factor)) if factor else 0.0
    moved = [r for r in rows if r.section != "Top components" and size(r) > 0.01]
    return sorted(moved, key=size, reverse=True)[:count]


def ratio(a, b):
    """B / A, None where it has no meaning."""
    if a is None or b is None or not a:
        return None
    return b / a
