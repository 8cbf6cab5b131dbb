"""The analysis report's charts: pure functions of report entries (``analyze``'s
``kernels``), Plotly figures out, no server or SQL.

Every attribution is drawn as a stacked bar per launch whose segments sum to what the
analysis sums them to, in µs of launch time, so bars of different analyses and
launches compare on one scale:

- S1 time budget: launch, ramp, steady and tail, summing to the launch;
- S2 CPI stack: cycles charged per class summed over the CUs, divided by the number of
  CUs (the axis says so), summing to the launch;
- S3 stall breakdown: wavefront time per class, scaled by |launch| ÷ Σ wavefront time
  (the share of wavefront time, in launch time), summing to the launch;
- S9 critical path: the path's time by class, summing to the launch.

S7 speed of light is a horizontal bar per unit, as a percentage of its peak, with the
latency (60 %) and bound (80 %) thresholds drawn; S8 is a log-log roofline, one point
per launch and each memory level's ceiling. A function returns None when no launch of
the report has what it draws (an analysis unavailable, or not built yet).

An imported profile's report has devices instead of launches:

- I1 time budget: per device, compute, the rest of non-compute, copy-only (the part of
  non-compute when only copies or memsets run) and idle, summing to the device's span;
- I10 critical path: the path's time by bound, summing to its length;
- I12 pace: each iteration's start-to-start delta, the median drawn, outliers marked.
"""
from __future__ import annotations

import plotly.graph_objects as go

from simulator.analysis.budget import PHASES
from simulator.analysis.cpi import CLASSES as CPI_CLASSES
from simulator.analysis.stalls import CLASSES as STALL_CLASSES

US = 1e6  # ps per µs
FONT = dict(family="system-ui, sans-serif", size=12)
BAR_HEIGHT = 300
PHASE_COLOURS = {"launch": "#bdbdbd", "ramp": "#9ecae1", "steady": "#3182bd", "tail": "#e6550d"}
# Work first (blues and greens), waiting after (oranges and reds), idle grey.
CPI_COLOURS = {"VALU": "#08519c", "SALU": "#3182bd", "Branch": "#6baed6", "LDS": "#31a354",
               "VMEM_transaction": "#fd8d3c", "VMEM": "#fdae6b", "Barrier": "#9e9ac8",
               "Stalled": "#de2d26", "Idle": "#d9d9d9"}
STALL_COLOURS = {"VALU": "#08519c", "SALU": "#3182bd", "Branch": "#6baed6", "LDS": "#31a354",
                 "memory_wait": "#fd8d3c", "barrier": "#9e9ac8", "not_issued": "#de2d26"}
SOL_UNITS = ("VALU", "SALU", "Branch", "LDS", "L1V", "L2", "MALL", "DRAM", "dispatch")
SOL_LAUNCHES = 6
"""Launches S7 draws at most (the longest): more bars per unit would not be read."""
DEVICE_COLOURS = {"compute": "#3182bd", "non-compute": "#9ecae1", "copy-only": "#fd8d3c",
                  "idle": "#d9d9d9"}
LAUNCH_COLOURS = ("#1b9e77", "#d95f02", "#7570b3", "#e7298a", "#66a61e", "#e6ab02")


def _available(kernels: list[dict], name: str) -> list[dict]:
    """The launches whose entry ``name`` holds a result (neither null nor unavailable)."""
    return [k for k in kernels if isinstance(k.get(name), dict) and "unavailable" not in k[name]]


def launch_label(entry: dict) -> str:
    """A launch as the bars name it: its index and kernel name."""
    return f"#{entry['launch']} {entry['name']}"


def _layout(fig: go.Figure, title: str, y_title: str, height: int = BAR_HEIGHT) -> go.Figure:
    fig.update_layout(
        title=dict(text=title, x=0, xanchor="left", font=dict(size=14)), barmode="stack",
        height=height, margin=dict(l=70, r=10, t=40, b=40), font=FONT,
        plot_bgcolor="white", legend=dict(traceorder="normal"),
        yaxis=dict(title=y_title, gridcolor="#eeeeee", zeroline=False))
    return fig


def _stacked(rows: list[tuple[str, list[float], list[str]]], labels: list[str],
             colours: dict[str, str], title: str, y_title: str) -> go.Figure:
    """A stacked bar per launch: ``rows`` is (class, µs per launch, hover text per launch)."""
    fig = go.Figure([go.Bar(name=name, x=labels, y=values, marker_color=colours[name],
                            hovertext=texts, hovertemplate="%{x}<br>" + name
                            + ": %{y:.3f} µs<br>%{hovertext}<extra></extra>")
                     for name, values, texts in rows])
    return _layout(fig, title, y_title)


def _share(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f} %" if whole else "–"


def budget_figure(kernels: list[dict]) -> go.Figure | None:
    """S1: each launch's phases, stacked to its time."""
    found = _available(kernels, "budget")
    if not found:
        return None
    rows = []
    for phase in PHASES:
        ps = [k["budget"][f"{phase}_ps"] for k in found]
        rows.append((phase, [p / US for p in ps],
                     [f"{_share(p, _width(k['budget']))} of the launch" for p, k in zip(ps, found)]))
    return _stacked(rows, [launch_label(k) for k in found], PHASE_COLOURS,
                    "S1 time budget: launch, ramp, steady, tail", "launch time (µs)")


def _width(part: dict) -> int:
    lo, hi = part["window_ps"]
    return hi - lo


def cpi_figure(kernels: list[dict]) -> go.Figure | None:
    """S2: the CPI stack summed over the CUs, divided by the number of CUs, so each bar
    is the launch's time (the average CU's)."""
    found = _available(kernels, "cpi_stack")
    if not found:
        return None
    cus = {k["cpi_stack"]["cu_time_ps"] // max(1, _width(k["cpi_stack"])) for k in found}
    per = f"{cus.pop()} CUs" if len(cus) == 1 else "the CUs"
    rows = []
    for name in CPI_CLASSES:
        values, texts = [], []
        for k in found:
            stack = k["cpi_stack"]
            n = max(1, stack["cu_time_ps"] // max(1, _width(stack)))
            ps = stack["charged_ps"][name]
            cpi = stack["cpi"][name]
            values.append(ps / n / US)
            texts.append(f"{_share(ps, stack['cu_time_ps'])} of CU-time"
                         + (f", CPI {cpi:g}" if cpi is not None else ""))
        rows.append((name, values, texts))
    return _stacked(rows, [launch_label(k) for k in found], CPI_COLOURS,
                    "S2 CPI stack: what each CU's cycles were charged to (by priority)",
                    f"CU time ÷ {per} (µs)")


def stall_figure(kernels: list[dict]) -> go.Figure | None:
    """S3: wavefront time per class, as its share of all wavefront time scaled to the
    launch's time."""
    found = _available(kernels, "stalls")
    if not found:
        return None
    rows = []
    for name in STALL_CLASSES:
        values, texts = [], []
        for k in found:
            stalls = k["stalls"]
            total = stalls["wavefront_time_ps"]
            ps = stalls["charged_ps"][name]
            values.append(ps * _width(stalls) / total / US if total else 0.0)
            texts.append(f"{_share(ps, total)} of the time of {stalls['wavefronts']:,} wavefronts")
        rows.append((name, values, texts))
    return _stacked(rows, [launch_label(k) for k in found], STALL_COLOURS,
                    "S3 stall breakdown: wavefront time by class, scaled to the launch",
                    "wavefront time, scaled (µs)")


def critical_path_figure(kernels: list[dict]) -> go.Figure | None:
    """S9: the critical path's time by class, stacked to the launch's time."""
    found = _available(kernels, "critical_path")
    if not found:
        return None
    classes = list(dict.fromkeys(c for k in found for c in k["critical_path"]["by_class"]))
    palette = (*LAUNCH_COLOURS, "#a6761d", "#666666")
    colours = {c: palette[i % len(palette)] for i, c in enumerate(classes)}
    rows = []
    for name in classes:
        ps = [k["critical_path"]["by_class"].get(name, 0) for k in found]
        rows.append((name, [p / US for p in ps],
                     [f"{_share(p, k['critical_path']['total_ps'])} of the path"
                      for p, k in zip(ps, found)]))
    return _stacked(rows, [launch_label(k) for k in found], colours,
                    "S9 critical path: what the longest chain of tasks waited on",
                    "launch time on the path (µs)")


def _verdict(sol: dict) -> str:
    c = sol["classification"]
    return c["kind"] + (f" ({c['unit']})" if c["unit"] else "")


def sol_figure(kernels: list[dict]) -> go.Figure | None:
    """S7: each unit's throughput as a percentage of its peak, a bar per launch (the
    ``SOL_LAUNCHES`` longest, in launch order), with the latency and bound thresholds as
    vertical lines."""
    found = _available(kernels, "sol")
    if not found:
        return None
    shown = sorted(sorted(found, key=lambda k: -k["time_ps"])[:SOL_LAUNCHES],
                   key=lambda k: k["launch"])
    units = [u for u in SOL_UNITS if any(u in k["sol"]["units"] for k in shown)]
    fig = go.Figure()
    # Plotly draws a group's first bar at the bottom: added last to first, the first
    # launch is at the top of each group (and the legend, reversed, lists it first)
    for i, k in reversed(list(enumerate(shown))):
        sol = k["sol"]["units"]
        here = [u for u in reversed(units) if u in sol]  # the first unit at the top
        fig.add_trace(go.Bar(
            orientation="h", y=here, x=[100 * sol[u]["sol"] for u in here],
            name=f"{launch_label(k)}: {_verdict(k['sol'])}",
            marker_color=LAUNCH_COLOURS[i % len(LAUNCH_COLOURS)],
            customdata=[[sol[u]["busiest"] or "–", 100 * sol[u]["busiest_sol"]] for u in here],
            hovertemplate=f"{launch_label(k)}<br>%{{y}}: %{{x:.1f}} % of peak<br>busiest"
                          " %{customdata[0]} at %{customdata[1]:.1f} %<extra></extra>"))
    top = max([100.0, *(100 * k["sol"]["units"][u]["sol"] for k in shown
                        for u in k["sol"]["units"])])
    thresholds = shown[0]["sol"]["thresholds"]
    for name, value in (("latency", thresholds["latency"]), ("bound", thresholds["bound"])):
        fig.add_vline(x=100 * value, line=dict(color="#444444", dash="dash", width=1),
                      annotation=dict(text=f"{name} {value:.0%}", font=dict(size=10)),
                      annotation_position="top")
    if len(shown) == 1:  # a lone bar series has no legend: its verdict goes in the title
        title = f"S7 speed of light of {fig.data[0].name}"
    else:
        more = f" (the {len(shown)} longest of {len(found)} launches)" if len(found) > len(shown) else ""
        title = f"S7 speed of light: each unit's throughput against its peak{more}"
    _layout(fig, title, None,
            height=130 + 12 * len(units) * (len(shown) + 1))
    fig.update_layout(barmode="group", margin=dict(l=70, r=10, t=50, b=40),
                      legend=dict(orientation="h", y=-0.12, yanchor="top", traceorder="reversed"),
                      xaxis=dict(title="throughput, % of the unit's peak", range=[0, top * 1.05],
                                 gridcolor="#eeeeee", ticksuffix=" %"))
    return fig


def roofline_figure(kernels: list[dict]) -> go.Figure | None:
    """S8, the hierarchical roofline on log-log axes: a point per launch (its performance
    at the arithmetic intensity of its limiting level), and per memory level its
    bandwidth ceiling up to the compute peak, drawn where the report's attainable
    performance fixes it (below the peak: bandwidth = attainable ÷ intensity)."""
    found = _available(kernels, "roofline")
    if not found:
        return None
    peak = max(k["roofline"]["peak_compute"] for k in found)
    xs = [p["ai"] for k in found for p in k["roofline"]["points"] if p["ai"] > 0]
    lo, hi = min(xs, default=0.01) / 10, max(xs, default=100) * 10
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=[lo, hi], y=[peak, peak], mode="lines", name="compute peak",
                             line=dict(color="#252525", width=2)))
    ceilings = {}
    for k in found:
        for p in k["roofline"]["points"]:
            if 0 < p["ai"] and p["attainable"] < k["roofline"]["peak_compute"]:
                ceilings.setdefault(p["level"], p["attainable"] / p["ai"])
    for i, (level, bandwidth) in enumerate(ceilings.items()):
        ridge = peak / bandwidth
        fig.add_trace(go.Scatter(x=[lo, ridge], y=[bandwidth * lo, peak], mode="lines",
                                 name=f"{level} bandwidth",
                                 line=dict(color=LAUNCH_COLOURS[i % len(LAUNCH_COLOURS)],
                                           dash="dot", width=1.5)))
    for k in found:
        r = k["roofline"]
        at = {p["level"]: p for p in r["points"]}
        point = at.get(r["limiter"]) or (r["points"][-1] if r["points"] else None)
        if point is None or point["ai"] <= 0:
            continue
        fig.add_trace(go.Scatter(
            x=[point["ai"]], y=[r["perf"]], mode="markers", name=launch_label(k),
            marker=dict(size=11, symbol="diamond", color="#de2d26",
                        line=dict(color="white", width=1)),
            hovertemplate=(f"{launch_label(k)}<br>AI at {point['level']}: %{{x:.3g}}"
                           f"<br>performance %{{y:.3g}}<br>{100 * r['roof_share']:.0f} % of"
                           f" its roof; limiter {r['limiter']}<extra></extra>")))
    _layout(fig, "S8 hierarchical roofline", "performance (lane-ops/s)", height=380)
    fig.update_layout(barmode=None, xaxis=dict(type="log", title="arithmetic intensity"
                                               " (lane-ops per byte)", gridcolor="#eeeeee"),
                      yaxis=dict(type="log", title="performance (lane-ops/s)",
                                 gridcolor="#eeeeee"))
    return fig


def device_budget_figure(devices: list[dict]) -> go.Figure | None:
    """I1: each device's span as compute, non-compute other than copy-only, copy-only
    and idle (copy-only is a part of HTA's non-compute, drawn apart)."""
    if not devices:
        return None
    parts = {"compute": [d["compute_ps"] for d in devices],
             "non-compute": [d["non_compute_ps"] - d["copy_only_ps"] for d in devices],
             "copy-only": [d["copy_only_ps"] for d in devices],
             "idle": [d["idle_ps"] for d in devices]}
    rows = [(name, [p / US for p in ps],
             [f"{_share(p, d['span_ps'])} of the span" for p, d in zip(ps, devices)])
            for name, ps in parts.items()]
    return _stacked(rows, [f"GPU {d['device']}" for d in devices], DEVICE_COLOURS,
                    "I1 time budget: compute, non-compute, copy-only, idle",
                    "time from the first operation to the last (µs)")


def profile_path_figure(path: dict | None) -> go.Figure | None:
    """I10: the critical path's time by bound, stacked to its length."""
    if not path or not path["length_ps"]:
        return None
    palette = (*LAUNCH_COLOURS, "#a6761d", "#666666")
    bounds = [b for b, v in path["bound_by"].items() if v["ps"]]
    colours = {b: palette[i % len(palette)] for i, b in enumerate(bounds)}
    rows = [(b, [path["bound_by"][b]["ps"] / US], [f"{path['bound_by'][b]['share']:.1%} of the path"])
            for b in bounds]
    return _stacked(rows, ["critical path"], colours,
                    "I10 critical path: what the longest chain through CPU and GPU is bound by",
                    "time on the path (µs)")


def pace_figure(pace: dict | None) -> go.Figure | None:
    """I12: a bar per iteration (from the second) with its delta from the one before, the
    median delta as a line, and the deltas above S11's fence in red."""
    if not pace or "unavailable" in pace:
        return None
    steps = pace["instances"][1:]
    above = {o["task"] for o in pace["delta_outliers"]["instances"]}
    fig = go.Figure(go.Bar(
        x=[f"{i}. {s['name'][:40]}" for i, s in enumerate(steps, 1)],
        y=[s["delta_ps"] / US for s in steps],
        marker_color=["#de2d26" if s["task"] in above else "#3182bd" for s in steps],
        hovertemplate="%{x}<br>%{y:.3f} µs after the one before<extra></extra>",
        showlegend=False))
    fig.add_hline(y=pace["median_delta_ps"] / US, line_dash="dash", line_color="#636363",
                  annotation_text="median", annotation_position="top left")
    verdict = "jitters" if pace["jitter"] else "steady"
    return _layout(fig, f"I12 pace of {pace['subject'][:60]}: CV {pace['cv']:.3f}, {verdict}",
                   "start − previous start (µs)")
