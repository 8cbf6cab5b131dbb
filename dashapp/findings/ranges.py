"""The ranges of a profile on the Findings page (I11): per range name, how much GPU work
its ranges launched, with links that cut the findings to one range or profiler step
(``range=NAME[#k]``, ``step=N`` in the URL) or measure the pace of the iterations its
instances delimit (``pace=NAME``, I12)."""
from __future__ import annotations

from dataclasses import replace

from dash import dcc, html

from simulator.analysis.profile.ranges import STEP

from .. import urls
from ..units import fmt_ps

SHOWN_NAMES = 10
"""Range names listed, the most projected GPU time first."""
SHOWN_INSTANCES = 8
"""Instances linked one by one per name; the rest are named by their count."""
PACED = 3
"""Instances a range needs for its pace (two deltas, I12)."""


def _links(state, name: str, instances: int) -> list:
    """Links to the findings of each range called ``name`` (a step by its number)."""
    def link(label, **scope):
        target = replace(state, **{"t0": None, "t1": None, "range": None, "step": None, **scope})
        return dcc.Link(label, href=urls.href("/findings", target), className="me-1 fd-range")
    step = STEP.match(name)
    if step:
        return [link(f"step {step[1]}", step=int(step[1]))]
    if instances == 1:
        return [link("its findings", range=name)]
    shown = [link(f"#{k}", range=f"{name}#{k}") for k in range(min(instances, SHOWN_INSTANCES))]
    more = instances - SHOWN_INSTANCES
    pace = replace(state, pace=name)
    return shown + ([html.Span(f"and {more} more", className="text-muted me-1")] if more > 0
                    else []) + ([dcc.Link("pace", href=urls.href("/findings", pace),
                                          className="fd-pace")] if instances >= PACED else [])


def ranges_section(state, projection: dict, scope: dict | None):
    """The ranges' table (or what the trace lacks for it), and the range the report is
    cut to, if any."""
    head = []
    if scope:
        head.append(html.P(
            f"Cut to {scope['range']} on {scope['thread']}: the GPU work it launched"
            f" ({scope['gpu_ops']:,} operations), {fmt_ps(scope['t1'] - scope['t0'])} from"
            " the first one's start to the last one's end.", className="small", id="fd-scope"))
    if "unavailable" in projection:
        return html.Div(head + [html.P(f"Ranges (I11): {projection['unavailable']}.",
                                       className="small text-muted", id="fd-ranges")])
    names = projection["names"]
    rows = [html.Tr([html.Td(html.Span(n["name"], title=n["name"], className="gs-long-name")),
                     html.Td(f"{n['instances']:,}"), html.Td(fmt_ps(n["proj_total_ps"])),
                     html.Td(fmt_ps(n["range_total_ps"])), html.Td(f"{n['gpu_ops']:,}"),
                     html.Td(_links(state, n["name"], n["instances"]))])
            for n in names[:SHOWN_NAMES]]
    header = html.Tr([html.Th(h) for h in ("Range", "instances", "GPU time (projected)",
                                           "CPU time", "GPU operations", "findings of")])
    return html.Div(head + [
        html.H6(f"Ranges projected onto the GPU (I11): {len(projection['ranges']):,} ranges of"
                f" {len(names):,} names" + (f", the {SHOWN_NAMES} with the most GPU time"
                                            if len(names) > SHOWN_NAMES else ""),
                className="mt-3"),
        html.Table([html.Thead(header), html.Tbody(rows)],
                   className="table table-sm small gs-summary-table", id="fd-ranges")])
