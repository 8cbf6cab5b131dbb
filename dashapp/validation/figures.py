"""The Validation page's figure, a pure function: report in, plain Plotly figure dict out.

Simulated against measured time on log axes: a point per row that has both, a line
per size family through its rows in order of measured time, and the line y = x on
which an exact simulator would put every point (dotted: a factor of 2 either way).
Both axes span the same range. A point above the line is simulated too slow, below it
too fast. Each point carries the name of its trace in the catalogue (``DIR/FILE``),
which a click opens.
"""
import math

from .. import colors
from .report import Report

PER_US = 1e-6  # axes in seconds, as every time axis of the app


def trace_member(report: Report, trace: str) -> str:
    """The catalogue's name of a row's trace (empty for an untraced row)."""
    return f"{report.name}/{trace}" if trace else ""


def sim_vs_measured(report: Report, height: int = 460) -> dict:
    """The figure of ``report``'s rows with both times."""
    rows = report.compared
    families = list(dict.fromkeys(r.family for r in rows))
    palette = colors.kind_colours(dict(enumerate(families)))
    data = []
    times = [t for r in rows for t in (r.measured_us, r.simulated_us)]
    # One range on both axes, so the line y = x is the diagonal and a factor off is the
    # same distance either way.
    lo, hi = (min(times) * PER_US / 1.5, max(times) * PER_US * 1.5) if times else (1e-6, 1)
    if times:
        for factor, name, dash in ((1, "y = x (exact)", "solid"),
                                   (2, "2× too slow", "dot"), (0.5, "2× too fast", "dot")):
            data.append(dict(type="scatter", mode="lines", x=[lo, hi],
                             y=[lo * factor, hi * factor], name=name, hoverinfo="skip",
                             line=dict(color="#888", width=1, dash=dash),
                             showlegend=factor == 1))
    for i, family in enumerate(families):
        members = sorted((r for r in rows if r.family == family), key=lambda r: r.measured_us)
        data.append(dict(
            type="scatter", mode="lines+markers" if len(members) > 1 else "markers",
            name=family, x=[r.measured_us * PER_US for r in members],
            y=[r.simulated_us * PER_US for r in members],
            marker=dict(size=9, color=palette[i]), line=dict(color=palette[i], width=1.5),
            customdata=[[trace_member(report, r.trace), r.line, r.ratio] for r in members],
            hovertemplate=("line %{customdata[1]}: measured %{x:.4s}s, simulated %{y:.4s}s"
                           " (×%{customdata[2]:.3f})<br>%{customdata[0]}<extra>"
                           + family + "</extra>")))
    axis = dict(type="log", exponentformat="SI", ticksuffix="s", showgrid=True,
                gridcolor="#eee", range=[math.log10(lo), math.log10(hi)])
    return dict(data=data, layout=dict(
        height=height, margin=dict(l=70, r=12, t=12, b=50), plot_bgcolor="white",
        hovermode="closest", legend=dict(orientation="h", y=-0.18),
        xaxis=dict(axis, title=dict(text="measured time")),
        yaxis=dict(axis, title=dict(text="simulated time"))))
