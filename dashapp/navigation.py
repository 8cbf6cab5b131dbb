"""The navbar: links that keep the trace being looked at, and a trace picker.

The trace of the current URL (``?trace=``) is remembered for the browser tab (a session
store), so the navbar's Overview and Kernel links lead back to it from any page,
including the Traces page, instead of to the first trace in name order. Picking another
trace keeps the kind of page (Overview or Kernel) and starts it fresh on that trace.
"""
import json
from urllib.parse import parse_qs

import dash_bootstrap_components as dbc
from dash import Input, Output, State, callback, clientside_callback, dcc, html

from . import urls, widgets
from .catalog import UnknownTrace
from .klein.views import trace_launches
from .queries import QueryTimeout, TraceError

LOC = widgets.LOCATION_ID
PAGES_WITH_TRACE = ("/overview", "/kernel")
"""Pages the picker keeps when another trace is picked (others lead to its Overview)."""


def navbar():
    """The app's navbar: Traces, Overview, Kernel and the trace picker."""
    return html.Div([
        dcc.Store(id="gs-current-trace", storage_type="session"),
        dcc.Store(id="gs-url-trace"),
        dbc.NavbarSimple(
            brand="GPUscope", brand_href="/", color="dark", dark=True, fluid=True,
            children=[
                dbc.NavItem(dbc.NavLink("Traces", href="/", id="gs-nav-traces")),
                dbc.NavItem(dbc.NavLink("Overview", href="/overview", id="gs-nav-overview")),
                dbc.NavItem(dbc.NavLink("Kernel", href="/kernel", id="gs-nav-kernel",
                                        style={"display": "none"})),
                dbc.NavItem(dcc.Dropdown(id="gs-trace-picker", clearable=False,
                                         placeholder="pick a trace", className="gs-picker"),
                            className="ms-2"),
            ]),
    ], className="mb-2")


def trace_in(search):
    """The ``trace`` parameter of a query string, or None."""
    return urls.first_value(parse_qs((search or "").lstrip("?")).get("trace"))


# In the browser: the URL's trace, set only when it changes, so that a zoom or a filter
# (the same trace) asks the server nothing for the navbar.
clientside_callback(
    """function (search, known) {
        var trace = new URLSearchParams(search || "").get("trace");
        return trace === known ? window.dash_clientside.no_update : trace;
    }""",
    Output("gs-url-trace", "data"), Input(LOC, "search"), State("gs-url-trace", "data"))


@callback(Output("gs-current-trace", "data"), Output("gs-nav-overview", "href"),
          Output("gs-nav-kernel", "href"), Output("gs-nav-kernel", "style"),
          Output("gs-trace-picker", "options"), Output("gs-trace-picker", "value"),
          Input("gs-url-trace", "data"), Input(LOC, "pathname"), State(LOC, "search"),
          State("gs-current-trace", "data"))
def follow_url(_url_trace, _pathname, search, remembered):
    """Remember the URL's trace and point the navbar at it."""
    cat = widgets.catalog()
    # Runs being written are listed by their file's name, after the finished traces.
    options = [{"label": n, "value": n} for n in cat.names()] + [
        {"label": f"{u.target} ({'running' if u.running else 'interrupted'})", "value": u.name}
        for u in cat.unfinished() if u.readable]
    names = [o["value"] for o in options]
    current = trace_in(search) or remembered
    if current not in names:
        current = cat.default()
    hidden = {"display": "none"}
    if current is None:
        return None, "/overview", "/kernel", hidden, [], None
    kernel = _with_launches(cat, [current, *cat.newest_first()])
    return (current, urls.href("/overview", urls.OverviewState(trace=current)),
            urls.href("/kernel", urls.KernelState(trace=kernel or current)),
            {} if kernel else hidden, options, current)


KERNEL_LOOKUPS = 32
"""Traces looked at for kernel launches when the current one has none."""


def _with_launches(cat, names):
    """The first of ``names`` with kernel launches (the Kernel link's trace: the current
    one, else the newest that has them), or None among the first ``KERNEL_LOOKUPS``."""
    for name in names[:KERNEL_LOOKUPS]:
        try:
            if trace_launches(cat.path(name)):
                return name
        except (UnknownTrace, TraceError, QueryTimeout, OSError):
            continue
    return None


# In the browser: ``follow_url`` sets the picker on every page change, and a round trip
# to the server to learn that this was not a pick kept each page "Updating" longer.
clientside_callback(
    """function (name, current, pathname) {
        var none = window.dash_clientside.no_update;
        if (!name || name === current) { return [none, none]; }  // not a pick
        var page = PAGES_WITH_TRACE.indexOf(pathname) >= 0 ? pathname : "/overview";
        return [page, "?" + new URLSearchParams({trace: name}).toString()];
    }""".replace("PAGES_WITH_TRACE", json.dumps(PAGES_WITH_TRACE)),
    Output(LOC, "pathname", allow_duplicate=True), Output(LOC, "search", allow_duplicate=True),
    Input("gs-trace-picker", "value"), State("gs-current-trace", "data"),
    State(LOC, "pathname"), prevent_initial_call=True)
