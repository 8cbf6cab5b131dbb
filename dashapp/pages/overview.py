"""The Overview page: paged small multiples of per-component metrics (Daisen §6.1).

Every control writes the URL and nothing else; the page is then rebuilt from the URL.
Zooming any chart sets the shared window (t0, t1) for all of them.
"""
import json
from dataclasses import replace
from urllib.parse import parse_qs

import dash
import dash_bootstrap_components as dbc
from dash import ALL, Input, Output, State, callback, ctx, dcc, html, no_update

from .. import urls, widgets
from ..daisen import exporting, views
from ..daisen.metrics import METRICS
from ..daisen.tree import component_tree, tree_data
from ..queries import QueryTimeout, TraceError
from ..units import fmt_ps


LOC = widgets.LOCATION_ID
METRIC_OPTIONS = [{"label": m.title, "value": k} for k, m in METRICS.items()]


def _controls(state):
    none = [{"label": "– (hide)", "value": urls.NO_METRIC}]
    return dbc.Row([
        dbc.Col(dbc.Input(id="ov-filter", value=state.filter, debounce=True, type="text",
                          placeholder="filter: regular expression, e.g. (CU|L1|L2)"), md=3),
        dbc.Col(dcc.Dropdown(id="ov-primary", options=METRIC_OPTIONS + none,
                             value=state.primary, clearable=False), md=2),
        dbc.Col(dcc.Dropdown(id="ov-secondary", options=METRIC_OPTIONS + none,
                             value=state.secondary, clearable=False), md=2),
        dbc.Col(dbc.RadioItems(id="ov-sort", value=state.sort, inline=True,
                               options=[{"label": "by name", "value": "name"},
                                        {"label": "by load", "value": "load"}]), md=2),
        dbc.Col([dbc.Button("Reset zoom", id="ov-reset", size="sm", color="secondary",
                            className="me-1"),
                 dbc.Button("CSV", id="ov-csv-button", size="sm", color="light"),
                 dcc.Download(id="ov-csv")], md=3),
    ], className="g-2 mb-2 align-items-center")


def _chart(page, i, chart):
    loc = chart.location
    link = urls.href("/component", urls.ComponentState(
        trace=page.state.trace, loc=loc.name, t0=page.window[0], t1=page.window[1]))
    name = f"{page.state.trace}-{loc.name}-{page.window[0]}-{page.window[1]}"
    return dbc.Col(html.Div([
        html.Div([
            dcc.Link(loc.name, href=link, className="gs-chart-title",
                     title="Open the Component view at this window"),
            html.Button("PNG", className="btn btn-link btn-sm p-0 gs-png",
                        **{"data-graph": f"ov-chart-{i}", "data-filename":
                           widgets.safe_filename(name), "data-title":
                           f"{page.state.trace} · {loc.name} · {fmt_ps(page.window[0])} – "
                           f"{fmt_ps(page.window[1])}"}),
        ], className="d-flex justify-content-between"),
        html.Div(dcc.Graph(id={"type": "ov-graph", "index": i}, figure=chart.figure,
                           config=widgets.graph_config(name), className="gs-ov-graph"),
                 id=f"ov-chart-{i}"),
    ], className="gs-chart-card"), xl=3, lg=4, md=6, className="mb-2")


def _finder(meta, state):
    """Search-as-you-type for a component, and the component tree to browse and filter."""
    names = [loc.name for loc in views.ordered_locations(meta, "name")]
    return dbc.Row([
        dbc.Col(dcc.Dropdown(id="ov-finder", options=names, value=None, searchable=True,
                             placeholder=f"find a component ({len(names)}): type part of"
                                         " its name", className="gs-finder"), md=4),
        # Hundreds of nodes as Dash components would take the renderer seconds on each
        # page change: the tree goes to the browser as data, drawn by assets/tree.js.
        dbc.Col(html.Details([html.Summary("Component tree", className="small"),
                              html.Div(id="ov-tree", className="gs-tree", **{
                                  "data-tree": json.dumps(tree_data(component_tree(names))),
                                  "data-trace": state.trace or "",
                                  "data-window": "" if state.t0 is None
                                  else f"{state.t0},{state.t1}"})]), md=8),
    ], className="g-2 mb-2")


@widgets.friendly
def layout(**query):
    state, problems = urls.parse_overview(query)
    name, path, meta, trouble = widgets.resolve_trace(state.trace)
    problems += trouble
    if path is None:
        return widgets.messages(problems)
    state = replace(state, trace=name)
    try:
        page = views.overview(path, state)
    except (TraceError, QueryTimeout) as err:
        return widgets.messages(problems + [str(err)])
    state = page.state
    t0, t1 = page.window
    header = html.Div([
        html.Span(f"{name}", className="gs-loc-label me-3"),
        html.Span(f"window {fmt_ps(t0)} – {fmt_ps(t1)} ({fmt_ps(t1 - t0)})", id="ov-window",
                  className="me-3"),
        html.Span(f"page {state.page} of {page.pages} · {page.matched} of "
                  f"{page.names_total} components", id="ov-count"),
    ], className="mb-1 small")
    return html.Div([
        widgets.messages(problems + page.messages),
        _finder(meta, state),
        _controls(state),
        header,
        dbc.Pagination(id="ov-pages", max_value=page.pages, active_page=state.page,
                       first_last=True, previous_next=True, fully_expanded=False,
                       size="sm", className="mb-1"),
        dbc.Row([_chart(page, i, c) for i, c in enumerate(page.charts)], className="g-2"),
        html.Div(str(len(page.charts)), id="ov-chart-count", hidden=True),
    ])


# Registered after ``layout`` exists: this module is imported, not scanned by Dash.
dash.register_page(__name__, path="/overview", title="GPUscope overview", name="Overview",
                   layout=layout)


def _state(search):
    return urls.parse_overview(parse_qs((search or "").lstrip("?"), keep_blank_values=True))[0]


def _go(search, state):
    new = urls.search(state)
    return no_update if new == (search or "") else new


@callback(Output(LOC, "search", allow_duplicate=True),
          Input("ov-filter", "value"), Input("ov-primary", "value"),
          Input("ov-secondary", "value"), Input("ov-sort", "value"),
          Input("ov-pages", "active_page"), Input("ov-reset", "n_clicks"),
          State(LOC, "search"), prevent_initial_call=True)
def controls_to_url(filter_text, primary, secondary, sort, page, _reset, search):
    state = _state(search)
    trigger = ctx.triggered_id
    if trigger == "ov-filter":
        state = replace(state, filter=filter_text or "", page=1)
    elif trigger == "ov-primary":
        state = replace(state, primary=primary)
    elif trigger == "ov-secondary":
        state = replace(state, secondary=secondary)
    elif trigger == "ov-sort":
        state = replace(state, sort=sort, page=1)
    elif trigger == "ov-pages":
        state = replace(state, page=page or 1)
    elif trigger == "ov-reset":
        state = replace(state, t0=None, t1=None)
    return _go(search, state)


@callback(Output(LOC, "search", allow_duplicate=True),
          Input({"type": "ov-graph", "index": ALL}, "relayoutData"),
          State(LOC, "search"), prevent_initial_call=True)
def zoom_to_url(_relayouts, search):
    if not ctx.triggered or ctx.triggered_id is None:
        return no_update
    window = urls.window_from_relayout(ctx.triggered[0]["value"])
    if window is None:
        return no_update
    state = _state(search)
    t0, t1 = window if window != "reset" else (None, None)
    return _go(search, replace(state, t0=t0, t1=t1))


@callback(Output(LOC, "pathname", allow_duplicate=True),
          Output(LOC, "search", allow_duplicate=True),
          Input("ov-finder", "value"), State(LOC, "search"), prevent_initial_call=True)
def open_found(loc, search):
    """Open the Component view of the component picked in the finder, at the window."""
    if not loc:
        return no_update, no_update
    state = _state(search)
    return "/component", urls.search(urls.ComponentState(trace=state.trace, loc=loc,
                                                         t0=state.t0, t1=state.t1))


@callback(Output("ov-csv", "data"), Input("ov-csv-button", "n_clicks"),
          State(LOC, "search"), prevent_initial_call=True)
def download_csv(_clicks, search):
    state = _state(search)
    name, path, _meta, _problems = widgets.resolve_trace(state.trace)
    if path is None:
        return no_update
    try:
        page = views.overview(path, replace(state, trace=name))
    except (TraceError, QueryTimeout):  # the page itself shows what went wrong
        return no_update
    # Filter and window in the name: two exports of different views never collide.
    t0, t1 = page.window
    filename = widgets.safe_filename(
        f"{name}-overview-{page.state.filter or 'all'}-{t0}-{t1}-page{page.state.page}") + ".csv"
    return dict(content=exporting.overview_csv(page), filename=filename)
