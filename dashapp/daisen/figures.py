"""Pure Plotly figure builders: data in, ``go.Figure`` out, no server or SQL.

The x axis of every time chart is simulated time in seconds (floats converted from the
integer picoseconds of the trace, SI-formatted by Plotly), so zooming one chart and
reading its range back gives the window in the same unit everywhere.
"""
import json
import math

import numpy as np

from ..colors import MUTED
from ..units import fmt_at, fmt_ps
from .metrics import PS, describe
from .placement import merge_thin, up_float

PRIMARY_COLOUR = "#d7191c"
SECONDARY_COLOUR = "#2c7bb6"
DETAIL_CHARS = 240
BAR_LINE = 0.5  # a hairline outline keeps sub-pixel bars visible rather than dropped
SEPARATOR = "rgba(255, 255, 255, 0.85)"
"""Outline of a bar at least a pixel wide: back-to-back tasks stay separate bars (runs
of sub-pixel bars are merged before drawing and keep their own colour's outline)."""
CURRENT_LINE = ("#000000", 2.5)
"""Outline marking the current task where the Component view draws it."""


def _axis_title(key):
    metric = describe(key)
    unit = metric.axis_unit or metric.unit
    return f"{metric.title} ({unit})" if unit else metric.title


# Plotly otherwise measures every tick label to hide those that would overflow the
# chart's div: a quarter of the time a page of small multiples takes to draw (measured
# in Chromium on the Overview's 16 charts). The margins leave the labels room.
TICK_LABELS = dict(ticklabeloverflow="allow")


def _time_axis(window_ps):
    t0, t1 = window_ps
    # hoverformat: a unified hover's header shows the time as the ticks do (500µs), not
    # as a bare number of seconds (0.0005s).
    return dict(range=[t0 * PS, t1 * PS], ticksuffix="s", exponentformat="SI",
                hoverformat=".4s", showgrid=True, zeroline=False, **TICK_LABELS)


def _gaps(values):
    """A list for JSON with NaN (a gap) as None, which Plotly draws as a break."""
    return [None if v != v else float(v) for v in values]


def _isolated(values):
    """Which values have no value beside them (NaN or the edge on both sides). Markers
    only there: a marker at every point costs the browser more than the rest of a page
    of small multiples."""
    known = ~np.isnan(values)
    before = np.concatenate([[False], known[:-1]])
    after = np.concatenate([known[1:], [False]])
    return known & ~before & ~after


HEADROOM = 1.05
"""An axis's top over its largest value: the room Plotly's own autorange leaves a line."""


def _value_axis(key, values, colour, **extra):
    """A y axis from zero for metric ``key`` drawn as ``values``, its range fixed (the
    grid draws the right axis's line against the left one, so both scales must be known).
    An all-zero (or empty) metric gets one honest 0 tick, not Plotly's 0 / 0.464 / 0.929;
    a hidden one (None) no axis at all."""
    if key is None:
        return dict(visible=False, title=None, range=[0, 1], fixedrange=True, **extra)
    peak = float(np.nanmax(values, initial=0))
    title = dict(text=_axis_title(key), font=dict(size=9, color=colour))
    axis = dict(title=title, range=[0, peak * HEADROOM if peak > 0 else 1], fixedrange=True,
                exponentformat="SI", tickfont=dict(size=9, color=colour), **TICK_LABELS,
                **extra)
    if not peak > 0:
        axis.update(tickvals=[0])
    return axis


def overview_chart(series, primary, secondary, window_ps, height=190):
    """One small multiple: ``primary`` on the left axis, ``secondary`` on the right.

    ``series`` is a ``metrics.Series``; either metric may be ``None`` (hidden). Returns a
    plain figure dict: Plotly's validating ``go.Figure`` costs more than the query.
    """
    # The bins are evenly spaced: their centres go as a first one and a step, not as a
    # list for each series (two fifths of an Overview page's JSON: 136 to 80 kB).
    x = dict(x0=(series.first_bin + 0.5) * series.width_ps * PS, dx=series.width_ps * PS)
    drawn = {key: series.values(key) * describe(key).axis_scale
             for key in (primary, secondary) if key is not None}
    data = []
    for key, axis, colour in ((primary, "y", PRIMARY_COLOUR), (secondary, "y2", SECONDARY_COLOUR)):
        if key is None:
            continue
        metric = describe(key)
        unit = metric.axis_unit or metric.unit
        values = drawn[key]
        # The right axis's line is dotted: where the two lines coincide (both drawn to
        # the chart's height) the red one still shows through the blue.
        trace = dict(
            type="scatter", **x, y=_gaps(values), yaxis=axis, name=metric.title, mode="lines",
            line=dict(color=colour, width=1.5, dash="solid" if axis == "y" else "dot"),
            connectgaps=False,
            hovertemplate="%{x:.4s}s: %{y:.4s} " + unit + "<extra>" + metric.title
                          + "</extra>")
        alone = _isolated(values)
        if alone.any():  # a value between two gaps draws no line: mark it
            trace.update(mode="lines+markers",
                         marker=dict(color=colour, size=np.where(alone, 4, 0).tolist()))
        data.append(trace)
    return dict(data=data, layout=dict(
        height=height, margin=dict(l=48, r=48, t=22, b=28), showlegend=False,
        xaxis=_time_axis(window_ps), hovermode="closest", dragmode="zoom",
        yaxis=_value_axis(primary, drawn.get(primary), PRIMARY_COLOUR),
        yaxis2=_value_axis(secondary, drawn.get(secondary), SECONDARY_COLOUR, overlaying="y",
                           side="right", showgrid=False),
        plot_bgcolor="white"))


GRID_COLUMNS = 4
CELL_PX = 212
"""Height of one small multiple in the grid: its title strip, plot and time axis."""
TITLE_PX = 24  # above each plot: the page draws the chart's title and PNG button there
AXIS_PX = 28  # below each plot: room for time tick labels (under each column's last chart)
SIDE = 0.125  # of a column's width, each side of a plot: the y axes' tick labels


def _ref(letter, n):
    """Plotly's name of axis ``n`` (from 1) as a trace refers to it: x, x2, x3…"""
    return letter if n == 1 else f"{letter}{n}"


def overview_grid(charts, columns=GRID_COLUMNS):
    """The small multiples (``overview_chart`` figures) as one figure of subplots: chart
    i in row i // ``columns``, column i % ``columns``; chart i's axes are x{i+1} and
    y{2i+1} (left), y{2i+2} (right).

    One figure draws in about half the time of as many (measured in Chromium: 67 against
    119 ms for a page of 16), and every x axis matches the first, so a zoom in one chart
    is a zoom in all of them. The charts share their axes' names (every chart shows the
    same two metrics): they are named once, by ``axis_key``, and kept in ``layout.meta``
    for a chart saved alone; time is labelled under the first row and under the last chart
    of each column. Drawn
    on each of 16 charts, those labels and names were a third of the figure's first
    draw in a fresh page (153 against 95 ms, measured in Chromium).

    A right axis's line is drawn against its chart's left axis (``_on_left``), and the
    page labels the right axis (``right_ticks``, drawn by assets/grid.js): a right axis
    with a line of its own is a second Plotly subplot, and 16 of those were a third of
    the figure's draw (Chromium: 180 against 127 ms).
    """
    rows = max(1, math.ceil(len(charts) / columns))
    height = rows * CELL_PX
    data = []
    titles = [charts[0]["layout"][k]["title"] for k in ("yaxis", "yaxis2")] if charts else []
    layout = dict(height=height, margin=dict(l=0, r=0, t=0, b=0), showlegend=False,
                  hovermode="closest", dragmode="zoom", plot_bgcolor="white",
                  meta=dict(axis_titles=titles))
    for i, chart in enumerate(charts):
        row, column = divmod(i, columns)
        n = i + 1
        x, y = _ref("x", n), _ref("y", 2 * n - 1)
        own = chart["layout"]
        scale = own["yaxis"]["range"][1] / own["yaxis2"]["range"][1]
        for trace in chart["data"]:
            if trace.get("yaxis") == "y2":
                trace = _on_left(trace, scale)
            data.append(dict(trace, xaxis=x, yaxis=y))
        top, bottom = row * CELL_PX + TITLE_PX, (row + 1) * CELL_PX - AXIS_PX
        layout[_ref("xaxis", n)] = dict(
            own["xaxis"], anchor=y, domain=[(column + SIDE) / columns, (column + 1 - SIDE) / columns],
            # Time is labelled under the first row (on screen when the page opens) and
            # under each column's last chart.
            showticklabels=row == 0 or i + columns >= len(charts),
            **({} if n == 1 else {"matches": "x"}))
        layout[_ref("yaxis", 2 * n - 1)] = dict(own["yaxis"], anchor=x, title=None,
                                               domain=[1 - bottom / height, 1 - top / height])
        layout[_ref("yaxis", 2 * n)] = dict(own["yaxis2"], anchor=x, overlaying=y, title=None)
    return dict(data=data, layout=layout)


ON_LEFT = "right axis"
"""``meta`` of a grid trace drawn against the left axis for the right one (``_on_left``):
assets/gpuscope.js puts it back on its own axis for a chart saved alone."""


def _on_left(trace, scale):
    """A right-axis line drawn against the left axis: its values times ``scale`` (the
    left axis's top over the right one's), its own values in ``customdata`` for the
    hover. Scaled values keep 7 significant digits: far more than a pixel, and 17 would
    double the line's JSON."""
    return dict(trace, y=[None if v is None else float(f"{v * scale:.7g}") for v in trace["y"]],
                customdata=trace["y"], meta=ON_LEFT,
                hovertemplate=trace["hovertemplate"].replace("%{y:", "%{customdata:"))


SI_PREFIXES = {-15: "f", -12: "p", -9: "n", -6: "µ", -3: "m", 0: "", 3: "k", 6: "M", 9: "G",
               12: "T", 15: "P"}


def right_ticks(chart):
    """The right axis of an ``overview_chart`` as the grid's page draws it: a list of
    (fraction of the axis's height, label), at Plotly's kind of steps (1, 2 or 5 times a
    power of ten, about 3.5 to the axis) and in its SI notation."""
    axis = chart["layout"]["yaxis2"]
    if not axis.get("visible", True):
        return []
    top = axis["range"][1]
    if axis.get("tickvals") == [0]:
        return [(0.0, "0")]
    raw = top / 3.5
    power = 10.0 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw * (1 - 1e-9))
    count = int(top / step * (1 + 1e-9))
    return [(k * step / top, _si(k * step, step)) for k in range(count + 1)]


def _si(value, step):
    """``value`` as Plotly's SI tick labels write it: plain between 0.001 and 1000, else
    with a prefix (k, M, m, µ…); as many digits as ``step`` needs, less trailing zeros."""
    if value == 0:
        return "0"
    exponent = math.floor(math.log10(abs(value)))
    prefix = 0 if -3 < exponent < 3 else max(-15, min(15, 3 * math.floor(exponent / 3)))
    digits = max(0, prefix - math.floor(math.log10(step) + 1e-9))
    text = f"{value / 10.0 ** prefix:.{digits}f}"
    return (text.rstrip("0").rstrip(".") if "." in text else text) + SI_PREFIXES[prefix]


def axis_key(grid):
    """The names of an ``overview_grid``'s axes, shared by all its charts: a list of
    (side, name, colour) for each axis that shows a metric."""
    return [(side, title["text"], title["font"]["color"])
            for side, title in zip(("left", "right"), grid["layout"]["meta"]["axis_titles"])
            if title]


def task_hover_fields(task, kinds, location_names, absolute=None):
    """The customdata of one bar: key first (clicks read it), then every field shown.
    ``absolute(ps)`` gives a time on the run's own clock, shown after the start."""
    k = kinds[task.kind]
    details = task.details or ""
    if len(details) > DETAIL_CHARS:
        details = details[:DETAIL_CHARS] + "…"
    return [task.id, task.ext_id or str(task.id), k.category, k.action,
            location_names.get(task.location, str(task.location)),
            _with_absolute(fmt_at(task.start_ps), absolute and absolute(task.start_ps)),
            fmt_at(task.end_ps), fmt_ps(task.end_ps - task.start_ps),
            "–" if task.parent is None else str(task.parent), details or "–"]


def _with_absolute(relative, absolute):
    return relative if absolute is None else f"{relative} ({absolute})"


HOVER = ("<b>%{customdata[2]}-%{customdata[3]}</b><br>ID: %{customdata[1]}"
         "<br>Location: %{customdata[4]}<br>Start: %{customdata[5]}<br>End: %{customdata[6]}"
         "<br>Duration: %{customdata[7]}<br>Parent: %{customdata[8]}"
         "<br>Details: %{customdata[9]}<extra></extra>")


def bar_traces(tasks, extents, meta, role, location_names, yaxis, current=None):
    """Horizontal bar traces on ``yaxis``; ``extents`` maps key → (y0, y1[, depth]).

    One trace per (depth, kind), shallow first: Plotly draws later traces on top, so a
    subtask nested in its parent's band is never hidden under the parent's bar.
    ``meta`` (a ``catalog.TraceMeta``) gives kinds and colours; ``role`` names the view
    so client-side highlighting can tell the Task view from the Component view. The bar
    of task ``current`` (a key) is outlined in black.
    """
    groups = {}
    for t in tasks:
        extent = extents[t.id]
        depth = extent[2] if len(extent) > 2 else 0
        groups.setdefault((depth, t.kind), []).append(t)
    traces = []
    for depth, kind in sorted(groups, key=lambda g: (g[0], meta.kind_label(g[1]))):
        group = groups[(depth, kind)]
        colour = meta.colours.get(kind, MUTED)
        traces.append(dict(
            type="bar", orientation="h", base=[t.start_ps * PS for t in group],
            x=[(t.end_ps - t.start_ps) * PS for t in group],
            y=[(extents[t.id][0] + extents[t.id][1]) / 2 for t in group],
            width=[extents[t.id][1] - extents[t.id][0] for t in group],
            customdata=[task_hover_fields(t, meta.kinds, location_names, meta.absolute)
                        for t in group],
            hovertemplate=HOVER, name=meta.kind_label(kind), meta=[meta.kind_label(kind), role],
            marker=dict(color=colour, line=dict(
                color=[CURRENT_LINE[0] if t.id == current else SEPARATOR for t in group],
                width=[CURRENT_LINE[1] if t.id == current else BAR_LINE for t in group])),
            showlegend=False, xaxis="x", yaxis=yaxis))
    return traces


def aggregate_traces(aggregates, meta, location_name):
    """One bar trace per (depth, kind) of merged sub-pixel bars (``layout.Aggregate``).

    Their key (custom data 0) is negative, so a click zooms into the run instead of
    selecting a task; custom data 10 and 11 hold the run's span in ps.
    """
    groups = {}
    for i, a in enumerate(aggregates):
        groups.setdefault((a.depth, a.kind), []).append((i, a))
    traces = []
    for depth, kind in sorted(groups, key=lambda g: (g[0], meta.kind_label(g[1]))):
        group = groups[(depth, kind)]
        k = meta.kinds[kind]
        colour = meta.colours.get(kind, MUTED)
        traces.append(dict(
            type="bar", orientation="h", base=[a.start_ps * PS for _, a in group],
            x=[(a.end_ps - a.start_ps) * PS for _, a in group],
            y=[(a.y0 + a.y1) / 2 for _, a in group], width=[a.y1 - a.y0 for _, a in group],
            customdata=[[-1 - i, f"{a.count} tasks, each narrower than a pixel", k.category,
                         k.action, location_name, fmt_ps(a.start_ps), fmt_ps(a.end_ps),
                         fmt_ps(a.end_ps - a.start_ps), "–", "click to zoom in", a.start_ps,
                         a.end_ps] for i, a in group],
            hovertemplate=HOVER, name=meta.kind_label(kind),
            meta=[meta.kind_label(kind), "component"],
            marker=dict(color=colour, line=dict(color=colour, width=BAR_LINE)),
            showlegend=False, xaxis="x", yaxis="y2"))
    return traces


def task_view_rows(parent, current, children):
    """{key: (y0, y1)} for the Task view: parent on row 0, current on row 1, then
    the subtasks up-floating from row 2 (the same layout as the Component view)."""
    extents = {}
    if parent is not None:
        extents[parent.id] = (0.1, 0.9)
    extents[current.id] = (1.1, 1.9)
    rows = up_float([c.start_ps for c in children], [c.end_ps for c in children])
    for child, row in zip(children, rows):
        extents[child.id] = (2.15 + row * 0.8, 2.85 + row * 0.8)
    return extents, 2 + (max(rows) + 1) * 0.8 if rows else 2


# Vertical bands of the Component page figure, bottom to top: one shared x axis.
CONCURRENCY_BAND = (0.0, 0.16)
COMPONENT_BAND = (0.19, 0.74)
TASK_BAND = (0.77, 1.0)


def instant_trace(instants, location_names, yaxis="y2"):
    """Markers (``queries.instants`` rows) along the top of the Component view: at the
    location in dark red, trace-wide ones in grey; hover shows name, time and details."""
    def text(name, category, details, location):
        where = "whole trace" if location is None else location_names.get(location, "")
        body = (details or "")[:DETAIL_CHARS]
        return f"<b>{name}</b> ({category or 'marker'}, {where})" + (f"<br>{body}" if body else "")
    return dict(
        type="scatter", mode="markers", xaxis="x", yaxis=yaxis, name="markers",
        x=[t * PS for t, *_ in instants], y=[0.15] * len(instants),
        marker=dict(symbol="triangle-down", size=9,
                    color=["#888" if loc is None else "#8b0000" for *_, loc in instants]),
        customdata=[[fmt_ps(t), text(n, c, d, loc)] for t, n, c, d, loc in instants],
        hovertemplate="%{customdata[1]}<br>at %{customdata[0]}<extra></extra>",
        meta=["instant", "component"])


def component_figure(meta, window_ps, task_view, component, concurrency, location_names,
                     instants=()):
    """The Task view (top), Component view (middle) and concurrent-task line (bottom)
    of one component, over one shared time axis (so a zoom in either moves both).

    ``task_view`` is None or (parent, current, children); ``component`` is either
    ("bars", tasks, placements, rows, pixel_ps) or ("density", centres_ps, {kind: values});
    runs of bars thinner than ``pixel_ps`` are drawn merged (``layout.merge_thin``);
    ``concurrency`` is a ``metrics.Series``; ``instants`` are markers drawn along the top
    of the Component view. Returns a plain figure dict.
    """
    data, annotations = [], []
    plain = dict(fixedrange=True, showgrid=False, zeroline=False)
    layout = dict(
        barmode="overlay", height=640, margin=dict(l=64, r=16, t=10, b=30),
        hovermode="closest", dragmode="zoom", plot_bgcolor="white", showlegend=False,
        hoverlabel=dict(align="left"), xaxis=dict(_time_axis(window_ps), anchor="y3"))
    if task_view is not None:
        parent, current, children = task_view
        extents, height = task_view_rows(parent, current, children)
        shown = ([parent] if parent is not None else []) + [current] + list(children)
        data += bar_traces(shown, extents, meta, "task", location_names, "y")
        layout["yaxis"] = dict(plain, domain=TASK_BAND, range=[max(height, 3), 0],
                               tickvals=[0.5, 1.5, 2.5], tickfont=dict(size=9),
                               ticktext=["parent", "current", "subtasks"], automargin=True)
    else:
        layout["yaxis"] = dict(plain, domain=TASK_BAND, visible=False, range=[1, 0])
        hint = "Click a bar to make it the current task" if component[0] == "bars" else \
            "Too many tasks for bars: click the density to zoom in to a window of bars"
        annotations.append(dict(text=hint,
                                showarrow=False, xref="paper", yref="paper", x=0.5,
                                y=sum(TASK_BAND) / 2, font=dict(color="#888")))
    if component[0] == "bars":
        _, tasks, placements, rows, pixel_ps = component
        singles, aggregates = merge_thin(tasks, placements, pixel_ps)
        extents = {k: (p.y0, p.y1, p.depth) for k, p in placements.items()}
        current = task_view[1].id if task_view is not None else None
        data += bar_traces(singles, extents, meta, "component", location_names, "y2", current)
        if aggregates:
            loc_name = location_names.get(tasks[0].location, "")
            data += aggregate_traces(aggregates, meta, loc_name)
        layout["yaxis2"] = dict(plain, domain=COMPONENT_BAND, range=[max(rows, 1), 0],
                                showticklabels=False)
    else:
        _, centres, density = component
        data += density_traces(meta, centres, density)
        kinds = sorted(density, key=meta.kind_label)
        labels = [f"{meta.kind_label(k)} (≤ {density_peak(density[k]):.3g})" for k in kinds]
        layout["yaxis2"] = dict(plain, domain=COMPONENT_BAND, range=[len(labels) - 0.5, -0.5],
                                tickvals=list(range(len(labels))), ticktext=labels,
                                tickfont=dict(size=9), automargin=True)
    if instants:
        data.append(instant_trace(instants, location_names))
    data.append(dict(
        type="scatter", x=(concurrency.centres_ps() * PS).tolist(),
        y=_gaps(concurrency.values("concurrency")), mode="lines", xaxis="x", yaxis="y3",
        line=dict(color="#444", width=1.2), connectgaps=False, name="Concurrent tasks",
        hovertemplate="%{x:.4s}s: %{y:.3g} tasks in flight<extra></extra>"))
    layout["yaxis3"] = dict(domain=CONCURRENCY_BAND, fixedrange=True, rangemode="tozero",
                            title=dict(text="in flight", font=dict(size=9)),
                            tickfont=dict(size=9))
    layout["annotations"] = annotations
    return dict(data=data, layout=layout)


def density_peak(values):
    """The most tasks of one kind in flight in any bin (1 for a row with none)."""
    return float(np.max(values)) if len(values) and np.max(values) > 0 else 1.0


def density_traces(meta, centres, density):
    """The exact density of a busy component: one row per kind, shaded from white (none
    in flight) to that kind's legend colour at the row's own peak (its label and the
    legend give it), so a kind with few tasks in flight is as visible as a busy one; the
    hover gives the count. A cell carries its bin centre in ps (custom data), so a click
    can zoom to a window where bars are drawn."""
    kinds = sorted(density, key=meta.kind_label)
    x = (np.asarray(centres) * PS).tolist()
    custom = [[int(c) for c in centres]]
    traces = []
    for i, kind in enumerate(kinds):
        label = meta.kind_label(kind)
        traces.append(dict(
            # One numeric row each (the axis names them): plotly.js cannot lay out
            # several one-row heatmaps on a shared category axis.
            type="heatmap", x=x, y=[i], z=[np.asarray(density[kind], dtype=float).tolist()],
            zmin=0, zmax=density_peak(density[kind]),
            colorscale=[[0, "#ffffff"], [1, meta.colours.get(kind, MUTED)]],
            showscale=False, customdata=custom, meta=[label, "density"],
            xaxis="x", yaxis="y2", xgap=0, ygap=1,
            hovertemplate=label + "<br>%{x:.4s}s: %{z:.3g} tasks in flight"
                          "<br>click to zoom in to the bars<extra></extra>"))
    return traces


def details_text(task):
    """A task's Details JSON, pretty-printed when it parses."""
    if not task.details:
        return ""
    try:
        return json.dumps(json.loads(task.details), indent=2, sort_keys=True)
    except json.JSONDecodeError:
        return task.details
