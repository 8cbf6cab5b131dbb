"""What each page shows, assembled from queries, metrics and layout; no Dash here.

``overview`` and ``component`` take a trace path and a parsed URL state and return
plain data plus the figures and messages for the page, so a page's layout function is
a thin wrapper and the benchmark can time exactly the server-side work of one view.
"""
import itertools
import math
from dataclasses import dataclass, field, replace

import numpy as np

from .. import queries
from ..catalog import natural_key, trace_meta
from ..units import fmt_ps
from ..urls import NO_METRIC, PAGE_SIZE, follow_window
from . import figures, metrics, placement, windows
from .namefilter import FilterError, filter_names

OVERVIEW_POINTS = 100
CONCURRENCY_POINTS = 300
DENSITY_POINTS = 300
MAX_BARS = 2500
"""Above this many tasks in the window the Component view draws an exact density."""
MAX_SUBTASKS = 1000
MAX_LINKS = 50
"""Linked tasks listed each way in the Task view."""
MAX_INSTANTS = 2000
"""Markers drawn in one Component view window."""
PLOT_PIXELS = 1000
"""About the width of the Component view's plot area; sets what counts as sub-pixel."""


@dataclass
class Chart:
    location: object
    series: object
    figure: object


@dataclass
class OverviewPage:
    state: object
    window: tuple
    names_total: int  # components that have tasks, before the filter
    matched: int
    pages: int
    charts: list
    messages: list = field(default_factory=list)


def window_of(meta, t0, t1, follow=False):
    """The state's window (moved to the end of the run, if it ``follow``s it), or the
    whole run (so far) when none is set."""
    if t0 is None:
        return meta.start_ps, meta.end_ps
    return follow_window(t0, t1, meta.end_ps) if follow else (t0, t1)


def ordered_locations(meta, sort):
    """Locations with tasks or counters, in the source's order (natural name order where
    it gives none) or by busy time (descending); cached."""
    def make():
        counting = {series[1] for series in meta.counters}
        locs = [loc for loc in meta.locations if loc.has_tasks or loc.id in counting]
        if sort == "load":
            locs.sort(key=lambda loc: (-(loc.busy_ps or 0), natural_key(loc.name)))
        else:
            locs.sort(key=meta.order_key)
        return tuple(locs)
    return list(meta.memo(("order", sort), make))


def find_locations(meta, text, limit):
    """Names of the first ``limit`` locations (in name order) whose names contain
    ``text``, in any case."""
    needle = text.strip().casefold()
    found = (loc.name for loc in ordered_locations(meta, "name") if needle in loc.name.casefold())
    return list(itertools.islice(found, limit))


def filtered_locations(meta, sort, pattern):
    """``ordered_locations`` whose names match ``pattern``; kept with the trace's derived
    facts (least recently used first to go), since paging and zooming repeat a filter."""
    def make():
        locs = ordered_locations(meta, sort)
        keep = set(filter_names(pattern, [loc.name for loc in locs]))
        return tuple(loc for loc in locs if loc.name in keep)
    return list(meta.memo(("filtered", sort, pattern), make))


def _metric(key):
    return None if key == NO_METRIC else key


def metric_keys(meta):
    """The Overview metrics that apply to the trace (no request metrics for a profile)."""
    return metrics.applicable({k.category for k in meta.kinds.values()})


FITTING = {"primary": "concurrency", "secondary": "busy"}
"""What a metric that does not apply to the trace is replaced by."""


def fit_metrics(meta, state):
    """``state`` with a metric that does not apply to the trace replaced (a real GPU's
    profile shows kernels in flight and busy fraction, not request rates)."""
    keys = metric_keys(meta)
    return replace(state, **{name: fallback for name, fallback in FITTING.items()
                             if getattr(state, name) in metrics.METRICS
                             and getattr(state, name) not in keys})


def overview(path, state, points=OVERVIEW_POINTS):
    """The charts of one Overview page for ``state`` (an ``urls.OverviewState``)."""
    meta = trace_meta(path)
    state = fit_metrics(meta, state)
    messages = []
    try:
        locs = filtered_locations(meta, state.sort, state.filter)
    except FilterError as err:
        messages.append(f"{err} Showing every component.")
        locs = ordered_locations(meta, state.sort)
    if not locs and meta.live is not None and not ordered_locations(meta, state.sort):
        messages.append("Nothing to draw yet: no component has a finished time bin so far"
                        " (a component shows once it has run a few hundred tasks).")
    elif not locs:
        messages.append(f"No component matches the filter {state.filter!r}.")
    pages = max(1, math.ceil(len(locs) / PAGE_SIZE))
    page = state.page
    if page > pages:
        messages.append(f"There is no page {page}; showing page {pages} of {pages}.")
        page = pages
        state = replace(state, page=page)
    window = window_of(meta, state.t0, state.t1, state.follow)
    shown = locs[(page - 1) * PAGE_SIZE: page * PAGE_SIZE]
    charts = []
    counters = {key: {loc: sid for sid, loc, name, _ in meta.counters
                      if name == key[len(metrics.COUNTER_PREFIX):]}
                for key in (state.primary, state.secondary) if metrics.is_counter(key)}
    for key, where in counters.items():
        if not where:
            messages.append(f"This trace has no counter named {metrics.describe(key).title!r}.")
    with queries.open_trace(path, meta.query_seconds) as db:
        for loc in shown:
            series = metrics.location_series(db, meta, loc, *window, points)
            for key, where in counters.items():
                if loc.id in where:
                    series.counters[key] = metrics.counter_values(db, where[loc.id], series)
            fig = figures.overview_chart(series, _metric(state.primary), _metric(state.secondary),
                                         window)
            charts.append(Chart(loc, series, fig))
    with_tasks = len(ordered_locations(meta, state.sort))
    return OverviewPage(state, window, with_tasks, len(locs), pages, charts, messages)


@dataclass
class ComponentPage:
    state: object
    location: object
    window: tuple
    mode: str
    tasks: list
    total_in_window: int
    current: object
    parent: object
    children: list
    children_total: int
    tags: list
    drawn: tuple
    figure: object
    messages: list = field(default_factory=list)
    links_out: list = field(default_factory=list)  # queries.Link to the tasks this one flows to
    links_in: list = field(default_factory=list)  # queries.Link from the tasks flowing into it
    instants: list = field(default_factory=list)  # markers in the window here or trace-wide


def component_window(meta, loc, current, state):
    """The Component view's window: the state's, else one framing ``current`` or ``loc``."""
    if state.t0 is not None:
        return window_of(meta, state.t0, state.t1, state.follow)
    return default_window(meta, loc, current)


def default_window(meta, loc, current):
    """Frame the current task with 20 % margins, else the whole location with 2 %
    (a margin also keeps zero-length tasks at the very first instant in view)."""
    if current is not None:
        span = max(1, current.end_ps - current.start_ps)
        return max(0, current.start_ps - span // 5), current.end_ps + span // 5
    margin = max(1, (loc.last_end_ps - loc.first_start_ps) // 50)
    # The margin never runs past the end of the run (nothing is drawn there).
    end = max(loc.last_end_ps + 1, min(loc.last_end_ps + margin, meta.end_ps))
    return max(0, loc.first_start_ps - margin), end


def bars_window(path, loc_name, centre_ps, window):
    """The widest window around ``centre_ps`` (halving ``window``) in which the Component
    view of ``loc_name`` draws bars: where a click on the density leads."""
    meta = trace_meta(path)
    loc = meta.by_name[loc_name]
    half = max(1, (window[1] - window[0]) // 2)
    with queries.open_trace(path, meta.query_seconds) as db:
        while half > 1:
            half //= 2
            t0, t1 = max(0, centre_ps - half), centre_ps + half
            if windows.count(db, meta, loc, t0, t1, MAX_BARS + 1) <= MAX_BARS:
                return t0, t1
    return max(0, centre_ps - 1), centre_ps + 1


def component(path, state):
    """Everything the Component page draws for ``state`` (an ``urls.ComponentState``).

    Raises ``LookupError`` with a friendly message for an unknown location.
    """
    meta = trace_meta(path)
    messages = []
    with queries.open_trace(path, meta.query_seconds) as db:
        tree = _task_tree(db, state.task, messages)
        current = tree[1]
        loc = meta.by_name.get(state.loc)
        if loc is None and current is not None:
            loc = next(x for x in meta.locations if x.id == current.location)
        if loc is None:
            raise LookupError(f"There is no component named {state.loc!r} in this trace."
                              if state.loc else "No component chosen.")
        if not loc.has_tasks:
            raise LookupError(f"Component {loc.name} has no tasks"
                              + (" in the run so far." if meta.live else "."))
        t0, t1 = window = component_window(meta, loc, current, state)
        if t1 <= loc.first_start_ps or t0 >= loc.last_end_ps:
            messages.append(f"{loc.name} is idle in this window: its tasks run from "
                            f"{fmt_ps(loc.first_start_ps)} to {fmt_ps(loc.last_end_ps)}.")
        if meta.live is None:
            count = windows.count(db, meta, loc, t0, t1, MAX_BARS + 1)
            shown = windows.tasks(db, meta, loc, t0, t1, MAX_BARS) if count <= MAX_BARS else None
        else:
            # No index yet: one scan, stopped at the first MAX_BARS + 1 tasks it finds,
            # both counts them and fetches them (sorted here).
            shown = windows.tasks(db, meta, loc, t0, t1, MAX_BARS + 1, ordered=False)
            count = len(shown)
            shown = shown if count <= MAX_BARS else None
        drawn = _drawn(db, meta, loc, window, shown, messages)
        concurrency = metrics.location_series(db, meta, loc, t0, t1, CONCURRENCY_POINTS)
        links_out, links_in, marks = [], [], []
        if meta.format >= 2:
            if current is not None:
                links_out, links_in = queries.task_links(db, current.id, MAX_LINKS)
            marks = queries.instants(db, loc.id, t0, t1, MAX_INSTANTS + 1)
            if len(marks) > MAX_INSTANTS:
                messages.append(f"Showing the first {MAX_INSTANTS} markers in this window.")
                marks = marks[:MAX_INSTANTS]
    parent, current, children, children_total, tags = tree
    names = {x.id: x.name for x in meta.locations}
    task_view = (parent, current, children) if current is not None else None
    fig = figures.component_figure(meta, window, task_view, drawn, concurrency, names, marks)
    tasks = drawn[1] if drawn[0] == "bars" else []
    return ComponentPage(state, loc, window, drawn[0], tasks, count, current, parent, children,
                         children_total, tags, drawn, fig, messages, links_out, links_in, marks)


def _task_tree(db, key, messages):
    """(parent, current, children, number of children, tags) of task ``key`` (or Nones)."""
    if key is None:
        return None, None, [], 0, []
    current = queries.task(db, key)
    if current is None:
        messages.append(f"There is no task {key} in this trace.")
        return None, None, [], 0, []
    parent = queries.task(db, current.parent) if current.parent is not None else None
    children = queries.subtasks(db, current.id, MAX_SUBTASKS)
    total = (queries.subtask_count(db, current.id) if len(children) == MAX_SUBTASKS
             else len(children))
    if total > len(children):
        messages.append(f"The Task view shows the first {len(children)} of {total} subtasks.")
    return parent, current, children, total, queries.task_tags(db, current.id)


def _drawn(db, meta, loc, window, tasks, messages):
    """The Component view's content: ("bars", tasks, placements, rows, ps per pixel) for
    the ``tasks`` of the window (at most ``MAX_BARS``), else (None: more than that)
    ("density", bin centres, {kind: tasks in flight})."""
    t0, t1 = window
    if tasks is not None:
        placements = placement.nested_layout(
            [t.id for t in tasks], [t.parent for t in tasks],
            [t.start_ps for t in tasks], [t.end_ps for t in tasks])
        rows = math.ceil(max((p.y1 for p in placements.values()), default=1))
        return "bars", tasks, placements, rows, max(1, (t1 - t0) // PLOT_PIXELS)
    first, width, density = metrics.kind_density(db, meta, loc, t0, t1, DENSITY_POINTS)
    n = max((len(v) for v in density.values()), default=0)
    messages.append(
        f"More than {MAX_BARS} tasks overlap this window: showing the exact number of "
        "tasks in flight per kind instead of bars. Zoom in to see individual tasks.")
    return ("density", (first + np.arange(n) + 0.5) * width,
            {k: v / width for k, v in density.items()})


@dataclass
class Summary:
    busiest: list  # (location name, busy fraction of the run, task count)
    category_time: list  # (category, summed task time in ps, mean tasks in flight over the run)
    instruction_mix: list  # (action, count, share of instructions)


def summary(path, top=8):
    """The Traces page summary of one trace (cached with its metadata)."""
    meta = trace_meta(path)
    return meta.memo(("summary", top), lambda: _summary(path, meta, top))


def _summary(path, meta, top):
    span = max(1, meta.end_ps - meta.start_ps)
    busiest = [(loc.name, (loc.busy_ps or 0) / span, loc.task_count)
               for loc in sorted(meta.locations, key=lambda x: -(x.busy_ps or 0))[:top]
               if loc.task_count]
    started, time_ps = {}, {}
    with queries.open_trace(path, meta.query_seconds) as db:
        for loc in meta.locations:
            if not loc.task_count:
                continue
            _, coarsest = queries.kind_levels(db, loc.id)
            # The coarsest per-kind level sums the whole location; small locations that
            # have no per-kind rows are summed from their few raw tasks.
            rows = (queries.kind_totals(db, loc.id, coarsest) if coarsest is not None
                    else queries.location_kind_totals(db, loc.id))
            for kind, count, ps in rows:
                started[kind] = started.get(kind, 0) + count
                time_ps[kind] = time_ps.get(kind, 0) + ps
    by_category = {}
    for kind, ps in time_ps.items():
        category = meta.kinds[kind].category
        by_category[category] = by_category.get(category, 0) + ps
    # Tasks of one category overlap (thousands of requests in flight at once), so their
    # summed time can pass the run's: divided by the run's span it is how many were in
    # flight on average, which a share of the total would hide.
    category_time = sorted(((c, ps, ps / span) for c, ps in by_category.items()),
                           key=lambda r: -r[1])
    inst = {meta.kinds[k].action: n for k, n in started.items()
            if meta.kinds[k].category == "inst"}
    inst_total = sum(inst.values()) or 1
    mix = sorted(((a, n, n / inst_total) for a, n in inst.items()), key=lambda r: -r[1])
    return Summary(busiest, category_time, mix)
