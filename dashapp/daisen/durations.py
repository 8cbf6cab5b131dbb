"""How long the tasks the Component view shows took: S11's histogram, percentiles and
outliers for one component's window (why-layer.md §9.1, S11).

Daisen shows a component's mean request latency; a mean hides the few slow tasks an
architect looks for. The distribution itself is the analysis room's
(``simulator.analysis.distribution``: log-spaced bins, exact nearest-rank percentiles,
outliers beyond Q3 + 3·IQR), computed here over every task of the location that
overlaps the window, or the first ``MAX_TASKS`` of a window that holds more (said so).
It is read only when asked for: a busy window holds a million tasks, and the view's
zoom must not wait for them.
"""
from dataclasses import dataclass

import numpy as np

from simulator.analysis.distribution import distribution

from .. import queries
from ..catalog import trace_meta
from . import windows
from .views import component_window

MAX_TASKS = 200_000
OUTLIERS = 20


@dataclass(frozen=True)
class Durations:
    """The distribution (``distribution``'s dict) of a component's tasks in a window."""
    location: str
    window: tuple
    found: dict
    truncated: bool


def durations(path, state) -> Durations:
    """The durations of the tasks at ``state.loc`` overlapping the Component view's
    window (``state`` an ``urls.ComponentState``). Raises ``LookupError`` for an unknown
    component."""
    meta = trace_meta(path)
    loc = meta.by_name.get(state.loc)
    if loc is None:
        raise LookupError(f"There is no component named {state.loc!r} in this trace.")
    if not loc.has_tasks:
        raise LookupError(f"Component {loc.name} has no tasks.")
    with queries.open_trace(path, meta.query_seconds) as db:
        current = queries.task(db, state.task) if state.task is not None else None
        t0, t1 = component_window(meta, loc, current, state)
        tasks = windows.tasks(db, meta, loc, t0, t1, MAX_TASKS + 1, ordered=False)
    truncated = len(tasks) > MAX_TASKS
    rows = np.array([(t.id, -1, t.kind, t.location, t.start_ps, t.end_ps)
                     for t in tasks[:MAX_TASKS]], dtype=np.int64).reshape(-1, 6)
    names = {x.id: x.name for x in meta.locations}
    return Durations(loc.name, (t0, t1), distribution(rows, names, OUTLIERS), truncated)


def figure(found: dict) -> dict:
    """The histogram as a step outline over the bins' edges (bins are log-spaced, and bars
    are not drawn to width on a log axis), with the median, p90 and p99 marked."""
    xs, ys = [], []
    for b in found["bins"]:
        if xs and xs[-1] != b["lo_ps"]:  # empty bins between: back to zero
            ys[-1] = 0
            xs.append(b["lo_ps"])
            ys.append(0)
        if xs and xs[-1] == b["lo_ps"]:
            ys[-1] = b["count"]
        else:
            xs.append(b["lo_ps"])
            ys.append(b["count"])
        xs.append(b["hi_ps"])
        ys.append(0)
    shapes, notes = [], []
    for key, name in (("p50_ps", "p50"), ("p90_ps", "p90"), ("p99_ps", "p99")):
        if key in found:
            x = found[key] * 1e-12
            shapes.append(dict(type="line", xref="x", yref="paper", x0=x, x1=x, y0=0, y1=1,
                               line=dict(color="#555", width=1, dash="dot")))
            notes.append(dict(x=x, y=1, xref="x", yref="paper", text=name, showarrow=False,
                              yanchor="bottom", font=dict(size=9, color="#555")))
    log = bool(xs) and xs[0] > 0 and xs[-1] >= 10 * xs[0]
    return dict(data=[dict(
        type="scatter", mode="lines", x=[x * 1e-12 for x in xs], y=ys, line_shape="hv",
        fill="tozeroy", line=dict(color="#4a7bb7", width=1), name="tasks",
        hovertemplate="from %{x:.4s}s: %{y} tasks per bin<extra></extra>")],
        layout=dict(height=220, margin=dict(l=56, r=10, t=22, b=40), plot_bgcolor="#fff",
                    shapes=shapes, annotations=notes, showlegend=False,
                    xaxis=dict(title=dict(text="task duration (s)", font=dict(size=11)),
                               type="log" if log else "linear", exponentformat="SI"),
                    yaxis=dict(title=dict(text="tasks per bin", font=dict(size=11)),
                               rangemode="tozero")))
