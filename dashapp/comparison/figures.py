"""Pure figure builders for comparing runs: data in, plain Plotly figure dicts out.

Time axes are in seconds, as in the Daisen views, so a zoom on a comparison chart
reads back as a window in picoseconds the same way (``urls.window_from_relayout``).
"""
import math

import numpy as np

from ..daisen.figures import _axis_title, _gaps, _time_axis
from ..daisen.metrics import PS

COLOUR_A = "#1b9e77"
COLOUR_B = "#d95f02"
COLOUR_DIFF = "#7570b3"
ADDITIVE = ("arrival", "completion", "concurrency", "buffer", "pending_out", "busy")
"""Metrics for which a bin without activity means zero (a latency has no value there)."""


def _line(x, y, name, colour, dash=None):
    return dict(type="scatter", x=list(x), y=_gaps(y), name=name, mode="lines",
                line=dict(color=colour, width=1.5, dash=dash), connectgaps=False,
                hovertemplate="%{x:.4s}s: %{y:.4s}<extra>" + name + "</extra>")


def _chart_layout(metric, window_ps, height, title=None):
    return dict(height=height, margin=dict(l=48, r=12, t=22, b=28), hovermode="x unified",
                dragmode="zoom", plot_bgcolor="white", xaxis=_time_axis(window_ps),
                showlegend=False,
                yaxis=dict(title=dict(text=title or _axis_title(metric), font=dict(size=9)),
                           fixedrange=True, exponentformat="SI", tickfont=dict(size=9),
                           zeroline=True, zerolinecolor="#bbb"))


def overlay_chart(a, b, metric, window_ps, height=190):
    """Runs A and B of one component on one time axis; ``a`` and ``b`` are (x in ps,
    values) or None for a run without this component."""
    data = [_line(np.asarray(side[0]) * PS, side[1], name, colour)
            for side, name, colour in ((a, "A", COLOUR_A), (b, "B", COLOUR_B))
            if side is not None]
    layout = _chart_layout(metric, window_ps, height)
    layout["yaxis"]["rangemode"] = "tozero"
    return dict(data=data, layout=layout)


def difference_chart(x_ps, diff, metric, window_ps, height=190):
    """B − A of one component's metric per bin."""
    data = [_line(np.asarray(x_ps) * PS, diff, "B − A", COLOUR_DIFF)]
    data[0].update(fill="tozeroy", fillcolor="rgba(117,112,179,0.2)")
    return dict(data=data, layout=_chart_layout(metric, window_ps, height,
                                                title="B − A: " + _axis_title(metric)))


def difference(metric, a, b):
    """(x, B − A) on A's bins (B resampled there when its bins differ); a run without
    the component counts as no activity. ``a`` and ``b`` are (x in ps, values) or None."""
    base = a if a is not None else b
    x = np.asarray(base[0], dtype=float)

    def on_x(side):
        if side is None:
            return np.zeros(len(x)) if metric in ADDITIVE else np.full(len(x), np.nan)
        xs, ys = np.asarray(side[0], dtype=float), np.asarray(side[1], dtype=float)
        outside = np.nan
        if metric in ADDITIVE:
            ys, outside = np.nan_to_num(ys, nan=0.0), 0.0  # beyond a run nothing happens
        if len(xs) == len(x) and np.array_equal(xs, x):
            return ys
        return np.interp(x, xs, ys, left=outside, right=outside) if len(xs) else \
            np.full(len(x), outside)

    return x, on_x(b) - on_x(a)


def shift_figure(figure, shift_ps):
    """A figure dict with its time axis moved by ``-shift_ps`` (each run drawn from its
    first kernel's start): bar starts (``base``) and x values of the time axis."""
    if not shift_ps:
        return figure
    shift = shift_ps * PS
    data = []
    for trace in figure["data"]:
        trace = dict(trace)
        if trace.get("xaxis", "x") == "x":
            key = "base" if trace.get("type") == "bar" and trace.get("orientation") == "h" \
                else "x"
            if trace.get(key) is not None:
                trace[key] = [v - shift for v in trace[key]]
        data.append(trace)
    layout = dict(figure["layout"])
    xaxis = dict(layout.get("xaxis", {}))
    if "range" in xaxis:
        xaxis["range"] = [v - shift for v in xaxis["range"]]
    layout["xaxis"] = xaxis
    return dict(data=data, layout=layout)


def without_task_view(figure, height=380):
    """The Component page figure without its (empty) Task view band, shorter, so that
    run A's and run B's fit one above the other."""
    layout = dict(figure["layout"], height=height, annotations=[])
    layout["yaxis"] = dict(layout.get("yaxis", {}), visible=False, domain=[0.99, 1.0])
    layout["yaxis2"] = dict(layout.get("yaxis2", {}), domain=[0.24, 0.97])
    layout["yaxis3"] = dict(layout.get("yaxis3", {}), domain=[0.0, 0.2])
    return dict(figure, layout=layout)


# -- a sweep's results --------------------------------------------------------------------------
def _label(column):
    # No unit in the title: the ticks carry theirs, with an SI prefix (10µs), as on
    # every other page.
    return {"simulated_time_ps": "simulated time"}.get(column, column)


def _number(value):
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def _scale(column):
    return PS if column == "simulated_time_ps" else 1.0


def sweep_lines(rows, x_key, y_column, other_keys):
    """``y_column`` against the varied key ``x_key``, one line per combination of the
    other varied keys' values; a failed point is a gap. ``rows`` are summary dicts in
    plan order; every point carries its trace name (custom data) for a click."""
    lines = {}
    for row in rows:
        label = ", ".join(f"{k}={row[k]}" for k in other_keys) or y_column
        lines.setdefault(label, []).append(row)
    numeric = all(_number(r[x_key]) is not None for r in rows)
    # Lines with the same points would hide each other: one line stands for them all,
    # and its name says so.
    same = {}
    for label, group in lines.items():
        if numeric:
            group = sorted(group, key=lambda r: float(r[x_key]))
        x = [float(r[x_key]) if numeric else r[x_key] for r in group]
        y = [_number(r[y_column]) for r in group]
        same.setdefault((tuple(x), tuple(y)), []).append((label, group))
    data = []
    for (x, y), members in same.items():
        label, group = members[0]
        if len(members) > 1:
            label = " = ".join(name for name, _ in members) + " (identical)"
        data.append(dict(
            type="scatter", mode="lines+markers", name=label, x=list(x),
            y=[None if v is None else v * _scale(y_column) for v in y],
            customdata=[r["trace"] for r in group],
            hovertemplate=f"{x_key}=%{{x}}<br>{_label(y_column)}: %{{y:.4s}}<br>%{{customdata}}"
                          f"<extra>{label}</extra>"))
    xaxis = dict(title=dict(text=x_key), type="linear" if numeric else "category",
                 showgrid=True)
    values = sorted({float(r[x_key]) for r in rows}) if numeric else []
    if 0 < len(values) <= 16:
        xaxis.update(tickmode="array", tickvals=values)  # the swept values, not 1.2, 1.4…
    return dict(data=data, layout=dict(
        height=320, margin=dict(l=60, r=12, t=12, b=40), plot_bgcolor="white", xaxis=xaxis,
        yaxis=dict(title=dict(text=_label(y_column)), exponentformat="SI", rangemode="tozero",
                   ticksuffix="s" if y_column == "simulated_time_ps" else ""),
        legend=dict(orientation="h", y=-0.25), hovermode="closest"))


def sweep_heatmap(rows, x_key, y_key, z_column):
    """``z_column`` over the grid of two varied keys (mean over repeated points, such as
    seeds); cells carry a trace name for a click."""
    xs = list(dict.fromkeys(r[x_key] for r in rows))
    ys = list(dict.fromkeys(r[y_key] for r in rows))
    for values in (xs, ys):
        if all(_number(v) is not None for v in values):
            values.sort(key=float)
    cells = {}
    for row in rows:
        cells.setdefault((row[x_key], row[y_key]), []).append(row)
    z, custom = [], []
    for y in ys:
        z_row, c_row = [], []
        for x in xs:
            found = [_number(r[z_column]) for r in cells.get((x, y), [])]
            found = [v for v in found if v is not None]
            z_row.append(sum(found) / len(found) * _scale(z_column) if found else None)
            c_row.append(cells[(x, y)][0]["trace"] if (x, y) in cells else "")
        z.append(z_row)
        custom.append(c_row)
    return dict(data=[dict(
        type="heatmap", x=[str(v) for v in xs], y=[str(v) for v in ys], z=z, customdata=custom,
        colorscale="Viridis", colorbar=dict(
            title=dict(text=_label(z_column)), exponentformat="SI",
            ticksuffix="s" if z_column == "simulated_time_ps" else ""),
        hovertemplate=f"{x_key}=%{{x}}<br>{y_key}=%{{y}}<br>{_label(z_column)}: %{{z:.4s}}"
                      "<extra></extra>")],
        layout=dict(height=320, margin=dict(l=60, r=12, t=12, b=40),
                    xaxis=dict(title=dict(text=x_key), type="category"),
                    yaxis=dict(title=dict(text=y_key), type="category")))



BUDGET_PARTS = (("compute", "#3182bd"), ("non-compute", "#9ecae1"), ("copy-only", "#fd8d3c"),
                ("idle", "#d9d9d9"))


def budget_comparison(devices_a, devices_b, height=260):
    """Two profiles' I1 time budgets, a stacked bar per device of A then of B: compute,
    non-compute other than copy-only, copy-only and idle, summing to the device's span
    (``devices`` as the profile report has them, in ps; drawn in ms)."""
    bars = [(f"{side} · GPU {d['device']}", d) for side, devices in (("A", devices_a),
                                                                     ("B", devices_b))
            for d in devices]
    parts = {"compute": lambda d: d["compute_ps"],
             "non-compute": lambda d: d["non_compute_ps"] - d["copy_only_ps"],
             "copy-only": lambda d: d["copy_only_ps"], "idle": lambda d: d["idle_ps"]}
    data = [dict(type="bar", name=name, x=[label for label, _ in bars],
                 y=[parts[name](d) / 1e9 for _, d in bars], marker=dict(color=colour),
                 hovertemplate="%{x}<br>" + name + ": %{y:.3f} ms<extra></extra>")
            for name, colour in BUDGET_PARTS]
    return dict(data=data, layout=dict(
        barmode="stack", height=height, margin=dict(l=56, r=12, t=30, b=40),
        plot_bgcolor="white", title=dict(text="I1 time budget, A and B", x=0, font=dict(size=13)),
        yaxis=dict(title=dict(text="from the first operation to the last (ms)",
                              font=dict(size=10)), gridcolor="#eeeeee")))
