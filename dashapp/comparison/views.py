"""What the /compare page shows of two runs, assembled from queries, statistics and
figures; no Dash here (the page is a thin wrapper, and tests call these directly).

Times in a comparison are either both runs' simulated time (``align="absolute"``) or
each run's time since its first kernel started (``align="kernel"``: two runs whose
kernels start at different moments, such as two PyTorch runs, line up). The URL's
window is in that shared time, and each run is read at its own offset.
"""
import math
from dataclasses import dataclass, field, replace

from .. import queries
from ..catalog import natural_key, trace_meta
from ..daisen import metrics
from ..daisen import views as daisen_views
from ..daisen.namefilter import FilterError, filter_names
from ..urls import PAGE_SIZE, ComponentState
from . import figures, pairing, stats

POINTS = daisen_views.OVERVIEW_POINTS


def offsets(path_a, path_b, align):
    """Each run's time origin in the comparison: 0, or its first kernel's start."""
    if align != "kernel":
        return 0, 0
    return (stats.run_stats(path_a).kernel_start_ps, stats.run_stats(path_b).kernel_start_ps)


def default_window(spans, offs):
    """The window showing both runs whole: ``spans`` are (start, end) in each run's time."""
    lo = max(0, min(s - o for (s, _), o in zip(spans, offs)))
    hi = max(e - o for (_, e), o in zip(spans, offs))
    return lo, max(hi, lo + 1)


@dataclass
class CompareChart:
    name: str           # A's name for the component
    figure: dict
    in_a: bool
    in_b: bool
    label: str = None   # the name with its partner in B, where B names it otherwise


@dataclass
class CompareOverview:
    state: object
    window: tuple
    matched: int
    pages: int
    charts: list
    messages: list = field(default_factory=list)


def component_names(meta_a, meta_b, sort):
    """Components with tasks in either run (a GPU stream of B under the name of its
    partner in A, ``pairing``), by natural name or by the larger busy time."""
    in_a = {b: a for a, b in pairing.partners(meta_a, meta_b).items()}
    busy = {}
    for meta, names in ((meta_a, {}), (meta_b, in_a)):
        for loc in meta.locations:
            if loc.task_count:
                name = names.get(loc.name, loc.name)
                busy[name] = max(busy.get(name, 0), loc.busy_ps or 0)
    if sort == "load":
        return sorted(busy, key=lambda n: (-busy[n], natural_key(n)))
    return sorted(busy, key=natural_key)


def _series(db, meta, name, window, offset, metric, points):
    loc = meta.by_name.get(name)
    if loc is None or not loc.task_count:
        return None
    series = metrics.location_series(db, meta, loc, window[0] + offset, window[1] + offset,
                                     points)
    return series.centres_ps() - offset, series.values(metric)


def overview(path_a, path_b, state, points=POINTS):
    """The comparison charts of one Overview page (``urls.CompareState``)."""
    meta_a, meta_b = trace_meta(path_a), trace_meta(path_b)
    messages = []
    names = component_names(meta_a, meta_b, state.sort)
    try:
        names = filter_names(state.filter, names)
    except FilterError as err:
        messages.append(f"{err} Showing every component.")
    if not names:
        messages.append(f"No component matches the filter {state.filter!r}.")
    pages = max(1, math.ceil(len(names) / PAGE_SIZE))
    if state.page > pages:
        messages.append(f"There is no page {state.page}; showing page {pages} of {pages}.")
        state = replace(state, page=pages)
    offs = offsets(path_a, path_b, state.align)
    window = ((state.t0, state.t1) if state.t0 is not None else
              default_window([(m.start_ps, m.end_ps) for m in (meta_a, meta_b)], offs))
    charts = []
    pairs = pairing.partners(meta_a, meta_b)
    with queries.open_trace(path_a) as db_a, queries.open_trace(path_b) as db_b:
        for name in names[(state.page - 1) * PAGE_SIZE: state.page * PAGE_SIZE]:
            a = _series(db_a, meta_a, name, window, offs[0], state.metric, points)
            b = _series(db_b, meta_b, pairs.get(name, name), window, offs[1], state.metric,
                        points)
            if state.mode == "diff":
                fig = figures.difference_chart(*figures.difference(state.metric, a, b),
                                               state.metric, window)
            else:
                fig = figures.overlay_chart(a, b, state.metric, window)
            charts.append(CompareChart(name, fig, a is not None, b is not None,
                                       pairing.label(name, pairs)))
    return CompareOverview(state, window, len(names), pages, charts, messages)


@dataclass
class CompareComponent:
    location: str
    window: tuple
    figures: dict       # "A"/"B" → figure dict, or None where the run lacks the component
    counts: dict        # "A"/"B" → tasks in the window
    messages: list = field(default_factory=list)
    partner: str = None  # B's name for the component, where B names it otherwise


def component(path_a, path_b, names, state):
    """The Component view of one component in A above B, on one time axis; ``names`` are
    the two trace names (the Daisen view reads a trace by name and path)."""
    meta_a, meta_b = trace_meta(path_a), trace_meta(path_b)
    pairs = pairing.partners(meta_a, meta_b)
    loc = state.loc
    if loc is None:
        # The busiest component the runs share, passing over roots with one task; for two
        # profiles, the busiest GPU stream (not a Python thread).
        common = [n for n in component_names(meta_a, meta_b, "load")
                  if n in meta_a.by_name and pairs.get(n, n) in meta_b.by_name]
        if not common:
            raise LookupError("The two runs have no component in common.")
        streams = [n for n in common if pairing.GPU_STREAM.match(n)]
        loc = next((n for n in streams or common if meta_a.by_name[n].task_count > 1), common[0])
    sides = ((meta_a, loc), (meta_b, pairs.get(loc, loc)))
    spans = [(m.by_name[n].first_start_ps, m.by_name[n].last_end_ps)
             for m, n in sides if n in m.by_name and m.by_name[n].task_count]
    if not spans:
        raise LookupError(f"Neither run has a component named {loc!r} with tasks.")
    offs = offsets(path_a, path_b, state.align)
    side_offs = [o for (m, n), o in zip(sides, offs) if n in m.by_name and m.by_name[n].task_count]
    window = ((state.t0, state.t1) if state.t0 is not None
              else default_window(spans, side_offs))
    result = CompareComponent(loc, window, {}, {}, partner=pairs.get(loc))
    for label, path, name, offset, at in (("A", path_a, names[0], offs[0], loc),
                                          ("B", path_b, names[1], offs[1], pairs.get(loc, loc))):
        try:
            page = daisen_views.component(path, ComponentState(
                trace=name, loc=at, t0=window[0] + offset, t1=window[1] + offset))
        except LookupError as err:
            result.figures[label], result.counts[label] = None, 0
            result.messages.append(f"{label}: {err}")
            continue
        # No task is current here: the Component view alone, shorter.
        result.figures[label] = figures.without_task_view(figures.shift_figure(page.figure,
                                                                                offset))
        result.counts[label] = page.total_in_window
        result.messages += [f"{label}: {m}" for m in page.messages]
    return result
