"""Pure Plotly figure builders for Klein's kernel views: arrays in, figure dicts out.

* memory view: work-items on x, logical time down the y axis (``analysis.logical_layout``);
  reads, writes and barriers in Klein's colours (light blue, dark blue, grey);
* bank panel: the 32 LDS banks under it, red where a bank serialised accesses;
* branching view: the histogram of branch patterns sorted by size, proxy warps as
  donuts, and the work-item grid of a 2-D launch as an image;
* debug view: @emit series drawn as Klein's @bind chart classes.

Large arrays go to the browser as Plotly typed-array specs (base64), not JSON lists:
a 25,600-work-item launch has ~10^5 accesses. The browser-side highlighting in
assets/kernel.js reads the same ``customdata`` columns documented here.
"""
import base64
import math

import numpy as np

from . import analysis

READ_COLOUR, WRITE_COLOUR, BARRIER_COLOUR = "#9ecae1", "#08519c", "#969696"
HIGHLIGHT = "#fd8d3c"
CLEAN_BANK, CONFLICT_BANK, IDLE_BANK = "#74c476", "#de2d26", "#e0e0e0"
PATTERN_COLOURS = ("#1b9e77", "#d95f02", "#7570b3", "#e7298a", "#66a61e", "#e6ab02",
                   "#a6761d", "#1f78b4", "#b15928", "#6a3d9a", "#33a02c", "#fb9a99")
MAX_DONUTS = 12
DONUTS_PER_ROW = 6
MEMORY_CUSTOM = ("bank", "address", "line", "element", "degree", "work_item")
"""Columns of a memory-view access point's customdata (kernel.js reads them by index)."""
CHART_CLASSES = ("lineChart", "scatterPlot", "multiBarChart", "stackedAreaChart")


def _narrowest(arr):
    """The smallest integer type holding every value of ``arr`` (halves what is sent)."""
    lo, hi = (int(arr.min()), int(arr.max())) if arr.size else (0, 0)
    for dtype in (np.int8, np.uint8, np.int16, np.uint16, np.int32):
        info = np.iinfo(dtype)
        if info.min <= lo and hi <= info.max:
            return dtype
    return np.float64  # Plotly has no 64-bit integer arrays; doubles are exact to 2**53


def typed(values, dtype=None):
    """A Plotly typed-array spec of ``values`` (1-D or 2-D); integers in the narrowest
    type that holds them unless ``dtype`` is given."""
    arr = np.asarray(values)
    if dtype is None:
        dtype = _narrowest(arr) if arr.dtype.kind in "iub" else np.float64
    arr = np.ascontiguousarray(arr, dtype=dtype)
    spec = {"dtype": arr.dtype.str.lstrip("<|="), "bdata": base64.b64encode(arr.tobytes())
            .decode("ascii")}
    if arr.ndim > 1:
        spec["shape"] = ", ".join(str(n) for n in arr.shape)
    return spec


RARE_PATTERN = "#bdbdbd"
"""Colour shared by the patterns past the palette (the smallest ones): a colour used
twice would say two patterns are one."""


def pattern_colour(rank):
    """Colour of the pattern at ``rank`` in size order (shared by histogram and donuts)."""
    return PATTERN_COLOURS[rank] if rank < len(PATTERN_COLOURS) else RARE_PATTERN


def _axis(text, **extra):
    """An axis named ``text`` (plotly.js 3 ignores a plain-string ``title``); its margin
    grows to fit the name and the tick labels."""
    return dict(title=dict(text=text, standoff=4), automargin=True, **extra)


def _base_layout(height, **extra):
    layout = dict(height=height, margin=dict(l=50, r=10, t=24, b=36), plot_bgcolor="#fff",
                  hovermode="closest", uirevision="kernel")
    layout.update(extra)
    return layout


def memory_figure(acc, lay, found, array, segments, work_items):
    """The memory view of one watched array.

    ``acc.work_item`` is each access's column (``analysis.tile_order``), ``work_items``
    its global work-item id (hover and highlighting use it). ``segments`` are
    ``analysis.barrier_segments`` rows (x0, x1, y, line): each barrier is drawn across the
    contiguous columns of the group that passed it. The view opens on every drawn
    work-group: the page already draws only as many as fit on screen.
    """
    events = acc.kind != analysis.BARRIER
    traces = []
    for kind, name, colour in ((analysis.READ, "read", READ_COLOUR),
                               (analysis.WRITE, "write", WRITE_COLOUR)):
        rows = np.flatnonzero(events & (acc.kind == kind))
        custom = np.stack([acc.bank[rows], acc.address[rows], acc.line[rows],
                           acc.element[rows], found.bank_degree[rows], work_items[rows]], axis=1)
        traces.append(dict(
            type="scattergl", mode="markers", name=name, x=typed(acc.work_item[rows]),
            y=typed(lay.y[rows]), customdata=typed(custom.reshape(-1, len(MEMORY_CUSTOM))),
            marker=dict(symbol="square", color=colour, size=6),
            selected=dict(marker=dict(color=HIGHLIGHT, opacity=1)),
            unselected=dict(marker=dict(opacity=0.25)),
            meta=["access", name],
            hovertemplate=f"work-item %{{customdata[5]}}<br>{name} {array}[%{{customdata[3]}}]"
                          "<br>address %{customdata[1]}, bank %{customdata[0]}"
                          "<br>bank conflict degree %{customdata[4]}"
                          "<br>line %{customdata[2]}<extra></extra>"))
    x, y, line = [], [], []
    for x0, x1, yy, ln in segments:
        x += [x0 - 0.4, x1 + 0.4, None]
        y += [yy, yy, None]
        line += [ln, ln, None]
    traces.append(dict(type="scatter", mode="lines", name="barrier", x=x, y=y,
                       customdata=line, line=dict(color=BARRIER_COLOUR, width=4),
                       meta=["barrier"],
                       hovertemplate="barrier, line %{customdata}<extra></extra>"))
    first = int(acc.work_item[events].min()) if events.any() else 0
    items = int(acc.work_item[events].max()) + 1 - first if events.any() else 1
    size = max(2, min(12, int(700 / max(items, 1)), int(480 / max(lay.rows, 1))))
    for trace in traces[:2]:
        trace["marker"]["size"] = size
    layout = _base_layout(
        max(240, min(640, 14 * lay.rows + 80)),
        xaxis=_axis("work-item (work-group by work-group)",
                    range=[first - 0.5, first + items - 0.5], zeroline=False),
        # Time runs down the view; the title is drawn turned a quarter anticlockwise, so
        # its first character, a left arrow, sits at the bottom and points down.
        yaxis=_axis("← logical time (barriers)", autorange="reversed", zeroline=False,
                    showticklabels=False),
        # Above the plot area, in a top margin of its own: not over the first row.
        legend=dict(orientation="h", y=1, yanchor="bottom", x=0), dragmode="pan")
    layout["margin"] = dict(layout["margin"], t=36)
    return dict(data=traces, layout=layout)


def bank_figure(table):
    """The 32-bank panel: 4-byte word accesses per bank (an element wider than a word
    counts once per bank it touches), coloured by its worst conflict degree."""
    colours = [IDLE_BANK if n == 0 else CONFLICT_BANK if d > 1 else CLEAN_BANK
               for n, d in zip(table.accesses, table.degree)]
    custom = np.stack([np.arange(analysis.BANKS), table.degree, table.conflicted], axis=1)
    return dict(data=[dict(
        type="bar", x=list(range(analysis.BANKS)), y=table.accesses.tolist(),
        customdata=custom.tolist(), marker=dict(color=colours, line=dict(color="#555", width=0.5)),
        selected=dict(marker=dict(opacity=1)), unselected=dict(marker=dict(opacity=0.3)),
        meta=["bank"],
        hovertemplate="bank %{x}: %{y} word accesses<br>conflict degree %{customdata[1]}"
                      "<br>%{customdata[2]} word accesses in a conflict<extra></extra>")],
        layout=_base_layout(170, bargap=0.08,
                            xaxis=_axis("LDS bank", dtick=1, tickfont=dict(size=9)),
                            yaxis=_axis("4-byte word accesses"), dragmode=False))


def histogram_figure(patterns):
    """Branch patterns (``analysis.patterns_by_size`` rows) as bins, largest first."""
    return dict(data=[dict(
        type="bar", x=[f"#{i + 1}" for i in range(len(patterns))],
        y=[p[3] for p in patterns], customdata=[[p[0], p[1]] for p in patterns],
        marker=dict(color=[pattern_colour(i) for i in range(len(patterns))]),
        meta=["pattern"],
        hovertemplate="pattern %{customdata[1]}<br>%{y} work-items<extra></extra>")],
        layout=_base_layout(220, bargap=0.1, xaxis=_axis("branch pattern, by size", type="category"),
                            yaxis=_axis("work-items"), dragmode=False))


def donut_figure(proxies, rank_of):
    """One donut per proxy warp (``analysis.Proxy``, most warps first), the number of warps it
    stands for in the middle; ``rank_of`` maps a pattern id to its histogram rank."""
    shown = proxies[:MAX_DONUTS]
    cols = max(1, min(DONUTS_PER_ROW, len(shown)))
    rows = max(1, math.ceil(len(shown) / cols))
    data, notes = [], []
    for i, proxy in enumerate(shown):
        r, c = divmod(i, cols)
        domain = dict(x=[c / cols + 0.01, (c + 1) / cols - 0.01],
                      y=[1 - (r + 1) / rows + 0.02, 1 - r / rows - 0.02])
        ids = [pid for pid, _ in proxy.regions]
        data.append(dict(
            type="pie", hole=0.55, sort=False, direction="clockwise", domain=domain,
            values=[n for _, n in proxy.regions],
            labels=[f"pattern #{rank_of[pid] + 1}" for pid in ids],
            customdata=[[pid, proxy.id] for pid in ids],
            marker=dict(colors=[pattern_colour(rank_of[pid]) for pid in ids],
                        line=dict(color="#fff", width=1)),
            textinfo="value", textposition="inside", meta=["proxy", proxy.id],
            showlegend=False,
            hovertemplate="%{label}: %{value} lanes<br>proxy warp of " + str(proxy.wavefronts)
                          + " warps<extra></extra>"))
        notes.append(dict(text=f"<b>{proxy.wavefronts}</b>", showarrow=False,
                          font=dict(size=16), x=sum(domain["x"]) / 2,
                          y=sum(domain["y"]) / 2, xref="paper", yref="paper"))
    return dict(data=data, layout=_base_layout(
        170 * rows + 20, annotations=notes, margin=dict(l=10, r=10, t=10, b=10)))


def image_figure(width, height, rank_grid, pixels=None, name=None):
    """The 2-D NDRange as an image, one pixel per work-item (Klein's sequential mapping),
    coloured by branch-pattern rank over the launch's input image (``pixels``, the buffer
    ``name``) when one was recorded; a top, empty layer is where hovering paints.

    Layers are found by ``meta`` (picture, image, paint), not by position.
    """
    grid = np.asarray(rank_grid).reshape(height, width)
    ranks = int(grid.max()) + 1 if grid.size else 1
    steps = [[i / max(ranks - 1, 1), pattern_colour(i)] for i in range(ranks)] if ranks > 1 \
        else [[0, pattern_colour(0)], [1, pattern_colour(0)]]
    layers = []
    if pixels is not None:
        layers.append(dict(
            type="heatmap", z=typed(np.asarray(pixels, dtype=np.float32)), colorscale="Greys",
            reversescale=True, showscale=False, meta=["picture"],
            hovertemplate=f"{name}[%{{y}}][%{{x}}] = %{{z:.3g}}<extra></extra>"))
    layers.append(dict(
        type="heatmap", z=typed(grid), colorscale=steps, showscale=False,
        zmin=0, zmax=max(ranks - 1, 1), opacity=0.3 if pixels is not None else 0.45,
        meta=["image"], hovertemplate="work-item (%{x}, %{y})<extra></extra>"))
    layers.append(dict(
        type="heatmap", z=typed(np.zeros((height, width)), np.float32),
        colorscale=[[0, "rgba(0,0,0,0)"], [1, "#d7191c"]], zmin=0, zmax=1,
        showscale=False, hoverinfo="skip", meta=["paint"]))
    # Fits a ~400 px column (the width follows the page); the y axis keeps pixels square.
    return dict(data=layers, layout=_base_layout(
        int(min(400, 400 * height / max(width, 1))) + 20,
        xaxis=dict(visible=False, constrain="domain"),
        yaxis=dict(visible=False, autorange="reversed", scaleanchor="x"),
        margin=dict(l=10, r=10, t=10, b=10), dragmode=False))


def debug_figure(bind, series):
    """One @bind chart: ``bind`` = {"class", "data": [names]}, ``series`` = {name: (idx,
    values)}. Klein's classes: lineChart, scatterPlot, multiBarChart, stackedAreaChart."""
    chart = bind.get("class")
    data = []
    for name in bind.get("data", []):
        idx, values = series.get(name, ([], []))
        trace = dict(x=list(idx), y=list(values), name=name)
        if chart == "multiBarChart":
            trace.update(type="bar")
        elif chart == "scatterPlot":
            trace.update(type="scatter", mode="markers")
        elif chart == "stackedAreaChart":
            trace.update(type="scatter", mode="lines", stackgroup="emit")
        else:
            trace.update(type="scatter", mode="lines")
        data.append(trace)
    return dict(data=data, layout=_base_layout(
        240, barmode="group", title=dict(text=f"{chart} (line {bind.get('line', '?')})",
                                         font=dict(size=12)),
        xaxis=_axis("index (emit slot)"), yaxis=_axis("emitted value"),
        legend=dict(orientation="h", y=-0.25)))
