"""The Sweep page: one sweep directory's results (``/sweep?dir=NAME``).

The summary table (sorted by any column, the sort in the URL) and a chart of a column
against a varied key: a line per combination of the other keys' values, or a heatmap
over two keys. A click on a point opens that run's Overview; picking two rows of the
table offers to compare them. Without ``dir`` the page lists the sweeps found.
"""
from dataclasses import replace

import dash
import dash_bootstrap_components as dbc
from dash import ALL, Input, Output, State, callback, dcc, html, no_update

from .. import urls, widgets
from ..catalog import UnknownTrace
from ..comparison import figures
from ..comparison.sweep import SweepReadError, read_sweep, sort_rows

LOC = widgets.LOCATION_ID


def _sweep_list(cat):
    names = cat.sweeps()
    if not names:
        return widgets.messages(["No sweep directories here: run `python -m simulator sweep"
                                 " ... -o DIR` with DIR inside the trace directory."], "info")
    return html.Ul([html.Li(dcc.Link(n, href=urls.href("/sweep", urls.SweepState(dir=n))))
                    for n in names], id="sw-list")


def _checked(state, table, problems):
    """The state with every column name checked against this sweep's summary."""
    keys, numeric = table.keys, table.metrics + ["wall_s"]
    x = state.x if state.x in keys else None
    if state.x is not None and x is None:
        problems.append(f"Ignored x={state.x!r}: not a varied key of this sweep.")
    x = x or (keys[0] if keys else None)
    y = state.y if state.y in numeric else "simulated_time_ps"
    if y != state.y:
        problems.append(f"Ignored y={state.y!r}: not a metric of this sweep.")
    others = [k for k in keys if k != x]
    by = state.by if state.by in others else (others[0] if others else None)
    chart = state.chart if by is not None else "lines"
    sort = state.sort
    if sort is not None and sort.lstrip("-") not in keys + table.metrics + ["status", "wall_s"]:
        problems.append(f"Ignored sort={sort!r}: not a column of this sweep.")
        sort = None
    return replace(state, x=x, y=y, by=by, chart=chart, sort=sort)


def _controls(state, table):
    keys = [{"label": k, "value": k} for k in table.keys]
    metrics = [{"label": m, "value": m} for m in table.metrics + ["wall_s"]]
    return dbc.Row([
        dbc.Col([html.Small("x axis"), dcc.Dropdown(id="sw-x", options=keys, value=state.x,
                                                     clearable=False)], md=3),
        dbc.Col([html.Small("value"), dcc.Dropdown(id="sw-y", options=metrics, value=state.y,
                                                    clearable=False)], md=3),
        dbc.Col(dbc.RadioItems(id="sw-chart", value=state.chart, inline=True, options=[
            {"label": "lines", "value": "lines"},
            {"label": "heatmap", "value": "heatmap", "disabled": len(table.keys) < 2}]), md=3),
        # Only the heatmap has rows to choose (lines go one per value of the other keys);
        # hidden, not removed, so its callback keeps its input.
        dbc.Col([html.Small("heatmap rows"),
                 dcc.Dropdown(id="sw-by", value=state.by, clearable=False,
                              options=[o for o in keys if o["value"] != state.x])], md=3,
                id="sw-by-col", style=None if state.chart == "heatmap" else {"display": "none"})
        if len(table.keys) > 1 else "",
    ], className="g-2 mb-2 align-items-end")


def _figure(state, table):
    rows = table.rows
    if state.x is None:
        return None
    if state.chart == "heatmap":
        return figures.sweep_heatmap(rows, state.x, state.by, state.y)
    return figures.sweep_lines(rows, state.x, state.y, [k for k in table.keys if k != state.x])


def _cell(value):
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.4g}"
    return f"{value:,}" if isinstance(value, int) else value


def _table(state, table):
    """The summary as a table; a header sorts by its column (again: the other way), a
    row's box picks it for comparison, its trace name opens its Overview."""
    column = state.sort.lstrip("-") if state.sort else None
    descending = bool(state.sort and state.sort.startswith("-"))
    rows = sort_rows(table.rows, column, descending) if column else table.rows
    columns = table.keys + table.metrics + ["status", "wall_s"]

    def header(c):
        again = column == c and not descending
        arrow = (" ▼" if descending else " ▲") if column == c else ""
        return html.Th(dcc.Link(c + arrow, className="gs-sw-sort", href=urls.href(
            "/sweep", replace(state, sort=("-" if again else "") + c))))

    body = []
    for row in rows:
        trace = row["trace"]
        pick = dcc.Checklist(id={"type": "sw-pick", "index": trace}, options=[
            {"label": "", "value": trace}], value=[], className="gs-sw-pick") if trace else ""
        run = (dcc.Link("open", title=trace, className="gs-sw-open",
                        href=urls.href("/overview", urls.OverviewState(
                            trace=_member(table, row)))) if trace else row["error"])
        body.append(html.Tr([html.Td(pick)] + [html.Td(_cell(row[c])) for c in columns] +
                            [html.Td(run)],
                            className="table-danger" if row["status"] != "ok" else None))
    return dbc.Table([html.Thead(html.Tr([html.Th("")] + [header(c) for c in columns] +
                                         [html.Th("run")])),
                      html.Tbody(body)], id="sw-table", size="sm", hover=True,
                     className="gs-summary-table")


def _member(table, row):
    return f"{table.name}/{row['trace']}"


@widgets.friendly
def layout(**query):
    state, problems = urls.parse_sweep(query)
    cat = widgets.catalog()
    if not state.dir:
        return html.Div([html.H4("Sweeps"), widgets.messages(problems), _sweep_list(cat)])
    try:
        table = read_sweep(cat.sweep_path(state.dir))
    except UnknownTrace:
        return html.Div([html.H4("Sweeps"), widgets.messages(
            problems + [f"There is no sweep named {state.dir!r} here."]), _sweep_list(cat)])
    except SweepReadError as err:
        return widgets.messages(problems + [str(err)])
    state = _checked(state, table, problems)
    definition = table.definition
    failed = len(table.rows) - len(table.ok)
    facts = " · ".join(filter(None, [
        f"workload {definition['workload']}" if definition.get("workload") else "",
        f"{len(table.rows)} points", f"{failed} failed" if failed else "",
        "varied: " + ", ".join(table.keys)]))
    figure = _figure(state, table)
    return html.Div([
        html.H4(f"Sweep {table.name}"),
        html.P(facts, className="small", id="sw-facts"),
        widgets.messages(problems),
        _controls(state, table),
        widgets.graph("sw-graph", figure, f"sweep-{table.name}-{state.y}") if figure else "",
        html.P("Click a point to open its run. Pick two rows to compare them.",
               className="small text-muted mb-1"),
        html.Div([dcc.Link("Compare the two picked runs", id="sw-compare", href="",
                           className="btn btn-sm btn-primary disabled me-2"),
                  html.Span("pick two rows", id="sw-picked", className="small")],
                 className="mb-1"),
        _table(state, table),
        html.Div(table.name, id="sw-dir", hidden=True),
    ])


# Registered after ``layout`` exists: this module is imported, not scanned by Dash.
dash.register_page(__name__, path="/sweep", title="GPUscope sweep", name="Sweep",
                   layout=layout)


@callback(Output(LOC, "search", allow_duplicate=True),
          Input("sw-x", "value"), Input("sw-y", "value"), Input("sw-chart", "value"),
          State(LOC, "search"), prevent_initial_call=True)
def chart_to_url(x, y, chart, search):
    state = widgets.state_of(search, urls.parse_sweep)
    return widgets.search_for(search, replace(state, x=x, y=y, chart=chart))


@callback(Output(LOC, "search", allow_duplicate=True),
          Input("sw-by", "value"), State(LOC, "search"), prevent_initial_call=True)
def rows_key_to_url(by, search):
    return widgets.search_for(search, replace(widgets.state_of(search, urls.parse_sweep), by=by))


@callback(Output(LOC, "href", allow_duplicate=True),
          Input("sw-graph", "clickData"), State("sw-dir", "children"), prevent_initial_call=True)
def open_clicked_run(click, sweep):
    try:
        trace = click["points"][0]["customdata"]
    except (TypeError, KeyError, IndexError):
        return no_update
    if not trace:
        return no_update
    return urls.href("/overview", urls.OverviewState(trace=f"{sweep}/{trace}"))


@callback(Output("sw-compare", "href"), Output("sw-compare", "className"),
          Output("sw-picked", "children"),
          Input({"type": "sw-pick", "index": ALL}, "value"), State("sw-dir", "children"),
          prevent_initial_call=True)
def picked_to_compare(values, sweep):
    picked = [trace for value in values for trace in value or []]
    base = "btn btn-sm btn-primary me-2"
    if len(picked) != 2:
        return "", base + " disabled", f"{len(picked)} picked: pick two runs"
    # In the table's order, which the sort in the URL sets.
    a, b = (f"{sweep}/{trace}" for trace in picked)
    return (urls.href("/compare", urls.CompareState(a=a, b=b)), base,
            f"A = {picked[0]}, B = {picked[1]}")
