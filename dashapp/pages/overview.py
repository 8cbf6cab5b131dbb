"""The Overview page: paged small multiples of per-component metrics (Daisen §6.1).

Every control writes the URL and nothing else; the page is then rebuilt from the URL.
Zooming any chart sets the shared window (t0, t1) for all of them.
"""
import json
from dataclasses import replace

import dash
import dash_bootstrap_components as dbc
from dash import ALL, Input, Output, State, callback, ctx, dcc, html, no_update

from .. import following, urls, widgets
from ..daisen import exporting, figures, views
from ..daisen.metrics import COUNTER_PREFIX, METRICS
from ..daisen.tree import component_tree, tree_data
from ..queries import QueryTimeout, TraceError
from ..units import fmt_at, fmt_ps
from . import alert, follow_switch_callback, follow_tick, from_search, params_of, trace_page

LOC = widgets.LOCATION_ID
METRIC_OPTIONS = [{"label": m.title, "value": k} for k, m in METRICS.items()]
FINDER_OPTIONS = 50


def _controls(state, meta):
    none = [{"label": "– (hide)", "value": urls.NO_METRIC}]
    names = sorted({name for _, _, name, _ in meta.counters})
    counters = [{"label": f"counter: {name}", "value": COUNTER_PREFIX + name} for name in names]
    fitting = views.metric_keys(meta)
    metric_options = [o for o in METRIC_OPTIONS if o["value"] in fitting]
    return dbc.Row([
        dbc.Col(dbc.Input(id="ov-filter", value=state.filter, debounce=True, type="text",
                          placeholder="filter: regular expression, e.g. (CU|L1|L2)"), md=3),
        dbc.Col(dcc.Dropdown(id="ov-primary", options=metric_options + counters + none,
                             value=state.primary, clearable=False), md=2),
        dbc.Col(dcc.Dropdown(id="ov-secondary", options=metric_options + counters + none,
                             value=state.secondary, clearable=False), md=2),
        dbc.Col(dbc.RadioItems(id="ov-sort", value=state.sort, inline=True,
                               options=[{"label": "by name", "value": "name"},
                                        {"label": "by load", "value": "load"}]), md=2),
        dbc.Col([dbc.Button("Reset zoom", id="ov-reset", size="sm", color="secondary",
                            className="me-1"),
                 dbc.Button("CSV", id="ov-csv-button", size="sm", color="light"),
                 dcc.Download(id="ov-csv"), html.Div(id="ov-csv-message")], md=3),
    ], className="g-2 mb-2 align-items-center")


def _grid(page):
    """The page's charts as one figure (``figures.overview_grid``). Each chart's title,
    a link to its Component view at the window, its PNG button and its right axis's
    labels (``figures.right_ticks``) are drawn over the figure by assets/grid.js from
    ``data-charts``: as Dash components, 32 more of them would cost the renderer more
    than the figure itself."""
    state = page.state
    t0, t1 = page.window
    window = f"{fmt_ps(t0)} – {fmt_ps(t1)}"
    charts = [[c.location.name,
               urls.href("/component", urls.ComponentState(trace=state.trace, loc=c.location.name,
                                                           t0=t0, t1=t1)),
               f"{state.trace} · {c.location.name} · {window}",
               widgets.safe_filename(f"{state.trace}-{c.location.name}-{t0}-{t1}"),
               figures.right_ticks(c.figure)]
              for c in page.charts]
    name = f"{state.trace}-overview-{state.filter or 'all'}-{t0}-{t1}-page{state.page}"
    grid = figures.overview_grid([c.figure for c in page.charts])
    key = html.Div([html.Span([f"{side} axis: ", html.Span(text, style={"color": colour})],
                              className="me-3") for side, text, colour in figures.axis_key(grid)],
                   id="ov-key", className="small")
    return html.Div([key, widgets.graph({"type": "ov-graph", "index": 0}, grid, name, "gs-ov-graph")],
                    id="ov-grid", className="gs-grid", **{"data-charts": json.dumps(charts)})


def _finder(meta, state):
    """Search-as-you-type for a component, and the component tree to browse and filter.

    The finder's options come from the server as the user types (``finder_options``):
    given every name, the dropdown indexes hundreds of them on each page load, which
    cost a tenth of the page's drawing time.
    """
    names = [loc.name for loc in views.ordered_locations(meta, "name")]
    # Built once per trace version: a third of a page's server time at 10M tasks.
    tree = meta.memo(("component tree",), lambda: json.dumps(tree_data(component_tree(names))))
    return dbc.Row([
        dbc.Col(dcc.Dropdown(id="ov-finder", options=[], value=None, searchable=True,
                             placeholder=f"find a component ({len(names)}): type part of"
                                         " its name", className="gs-finder"), md=4),
        # Hundreds of nodes as Dash components would take the renderer seconds on each
        # page change: the tree goes to the browser as data, drawn by assets/tree.js.
        dbc.Col(html.Details([html.Summary("Component tree", className="small"),
                              html.Div(id="ov-tree", className="gs-tree", **{
                                  "data-tree": tree,
                                  "data-trace": state.trace or "",
                                  "data-window": "" if state.t0 is None
                                  else f"{state.t0},{state.t1}"})]), md=8),
    ], className="g-2 mb-2")


def _absolute_window(meta, t0, t1):
    """The window on the run's own clock (hover text), or None for a simulator trace."""
    start = meta.absolute(t0)
    return None if start is None else f"{start} – {meta.absolute(t1)}"


def _header(name, meta, page):
    """The line above the charts: trace, window, page and the compare link."""
    state = page.state
    t0, t1 = page.window
    return [
        html.Span(f"{name}", className="gs-loc-label me-3"),
        html.Span(f"window {fmt_at(t0)} – {fmt_at(t1)} ({fmt_ps(t1 - t0)})", id="ov-window",
                  className="me-3", title=_absolute_window(meta, t0, t1)),
        html.Span(f"page {state.page} of {page.pages} · {page.matched} of "
                  f"{page.names_total} components", id="ov-count", className="me-3"),
        dcc.Link("compare with…", id="ov-compare", href=urls.href("/compare", urls.CompareState(
            a=name, view="overview", filter=state.filter, sort=state.sort, t0=t0, t1=t1))),
        # The findings of the window shown, when zoomed in (of the whole run otherwise).
        dcc.Link("findings", id="ov-findings", className="ms-3",
                 href=urls.href("/findings", urls.FindingsState(
                     trace=name, **({} if state.t0 is None else {"t0": t0, "t1": t1})))),
    ]


def _charts(page):
    count = html.Div(str(len(page.charts)), id="ov-chart-count", hidden=True)
    return [_grid(page), count] if page.charts else [count]


@trace_page(urls.parse_overview)
def layout(request):
    name, problems, meta = request.name, request.problems, request.meta
    page = views.overview(request.path, request.state)
    state = page.state
    return html.Div([
        widgets.messages(problems + page.messages),
        following.controls(meta, state, "ov"),
        _finder(meta, state),
        _controls(state, meta),
        html.Div(_header(name, meta, page), id="ov-header", className="mb-1 small"),
        dbc.Pagination(id="ov-pages", max_value=page.pages, active_page=state.page,
                       first_last=True, previous_next=True, fully_expanded=False,
                       size="sm", className="mb-1"),
        html.Div(_charts(page), id="ov-charts"),
        widgets.url_store("ov"),
    ])


# Registered after ``layout`` exists: this module is imported, not scanned by Dash.
dash.register_page(__name__, path="/overview", title="GPUscope overview", name="Overview",
                   layout=layout)


def _state(search):
    return urls.parse_overview(params_of(search))[0]


def _go(search, state):
    """What ``widgets.url_store`` gets for the URL of ``state`` (no_update if it is the URL)."""
    new = urls.search(state)
    return no_update if new == (search or "") else widgets.to_url(new)


def _whole(value):
    """A page number from a control: a whole number of at least 1, else None."""
    return value if isinstance(value, int) and not isinstance(value, bool) and \
        1 <= value <= urls.MAX_INT else None


widgets.url_relay("ov")


@callback(Output("ov-url", "data", allow_duplicate=True),
          Input("ov-filter", "value"), Input("ov-primary", "value"),
          Input("ov-secondary", "value"), Input("ov-sort", "value"),
          Input("ov-pages", "active_page"), Input("ov-reset", "n_clicks"),
          State(LOC, "search"), prevent_initial_call=True)
@widgets.guarded(no_update)
def controls_to_url(filter_text, primary, secondary, sort, page, _reset, search):
    # Values the controls cannot produce (a crafted request) change nothing; the
    # metric and sort names are checked again when the URL is parsed.
    state = _state(search)
    trigger = ctx.triggered_id
    if trigger == "ov-filter" and isinstance(filter_text, (str, type(None))):
        state = replace(state, filter=(filter_text or "")[:urls.MAX_FILTER], page=1)
    elif trigger == "ov-primary" and isinstance(primary, str):
        state = replace(state, primary=primary)
    elif trigger == "ov-secondary" and isinstance(secondary, str):
        state = replace(state, secondary=secondary)
    elif trigger == "ov-sort" and sort in urls.SORTS:
        state = replace(state, sort=sort, page=1)
    elif trigger == "ov-pages" and _whole(page):
        state = replace(state, page=page)
    elif trigger == "ov-reset":
        state = replace(state, t0=None, t1=None)
    return _go(search, state)


follow_to_url = follow_switch_callback("ov", urls.parse_overview)


@callback(Output("ov-charts", "children"), Output("ov-header", "children"),
          Output("ov-pages", "max_value"), Output("ov-live", "children"),
          Output("ov-live", "color"), Output("ov-live-tick", "disabled"),
          Output(LOC, "search", allow_duplicate=True),
          Input("ov-live-tick", "n_intervals"), State(LOC, "search"), prevent_initial_call=True)
@widgets.guarded(*[no_update] * 7)
def follow_run(_tick, search):
    """Redraw the charts with the run so far; once the run is renamed into place, open
    its finished trace; once it stops, stop."""
    tick = follow_tick(urls.parse_overview, search, "ov")
    if tick.request is None:
        return (no_update, no_update, no_update, *tick.banner, tick.search)
    page = views.overview(tick.request.path, tick.request.state)
    return (_charts(page), _header(tick.request.name, tick.request.meta, page), page.pages,
            *tick.banner, no_update)


@callback(Output("ov-url", "data", allow_duplicate=True),
          Input({"type": "ov-graph", "index": ALL}, "relayoutData"),
          State(LOC, "search"), prevent_initial_call=True)
@widgets.guarded(no_update)
def zoom_to_url(_relayouts, search):
    if not ctx.triggered or ctx.triggered_id is None:
        return no_update
    window = urls.window_from_relayout(ctx.triggered[0].get("value"))
    if window is None:
        return no_update
    state = _state(search)
    t0, t1 = window if window != "reset" else (None, None)
    return _go(search, replace(state, t0=t0, t1=t1, follow=False))  # the window chosen stays


@callback(Output("ov-finder", "options"), Input("ov-finder", "search_value"),
          State(LOC, "search"), prevent_initial_call=True)
@widgets.guarded(no_update)
def finder_options(text, search):
    """The components whose names contain what was typed, in any case (the first
    ``FINDER_OPTIONS``)."""
    if not isinstance(text, str) or not text.strip():
        return no_update
    request, _ = from_search(urls.parse_overview, search)
    if request is None:
        return []
    return views.find_locations(request.meta, text[:urls.MAX_FILTER], FINDER_OPTIONS)


@callback(Output("ov-url", "data", allow_duplicate=True),
          Input("ov-finder", "value"), State(LOC, "search"), prevent_initial_call=True)
def open_found(loc, search):
    """Open the Component view of the component picked in the finder, at the window."""
    if not loc:
        return no_update
    state = _state(search)
    return {"pathname": "/component", "search": urls.search(urls.ComponentState(
        trace=state.trace, loc=loc, t0=state.t0, t1=state.t1))}


@callback(Output("ov-csv", "data"), Output("ov-csv-message", "children"),
          Input("ov-csv-button", "n_clicks"), State(LOC, "search"), prevent_initial_call=True)
@widgets.guarded(no_update, no_update)
def download_csv(_clicks, search):
    request, problems = from_search(urls.parse_overview, search)
    if request is None:
        return no_update, alert(problems)
    try:
        page = views.overview(request.path, request.state)
    except (TraceError, QueryTimeout) as err:
        return no_update, alert([str(err)])
    # Filter and window in the name: two exports of different views never collide.
    t0, t1 = page.window
    filename = widgets.safe_filename(
        f"{request.name}-overview-{page.state.filter or 'all'}-{t0}-{t1}-page{page.state.page}"
    ) + ".csv"
    return dict(content=exporting.overview_csv(page), filename=filename), ""
