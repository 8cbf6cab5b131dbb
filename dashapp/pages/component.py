"""The Component page: the Task view stacked over the Component view (Daisen §6.2-6.3).

One figure holds both views and the concurrent-task line on a shared time axis, so a
zoom or drag in either moves both. Clicking a bar makes it the current task (its key is
the first custom-data field) and shows its component; window, component and task go to
the URL. A click on a merged run of sub-pixel bars zooms into it instead. Legend hover
and cross-view hover highlighting run in the browser (assets/gpuscope.js).
"""
from dataclasses import replace

import dash
import dash_bootstrap_components as dbc
from dash import Input, Output, State, callback, ctx, dcc, html, no_update

from .. import following, urls, widgets
from ..daisen import durations, exporting, figures, views
from ..klein.views import kernel_href, task_launch
from ..queries import QueryTimeout, TraceError
from ..units import fmt_at, fmt_ps
from . import alert, follow_switch_callback, follow_tick, from_search, params_of, trace_page

LOC = widgets.LOCATION_ID


def _legend(meta, page):
    """The legend's children: every kind drawn."""
    kinds = {t.kind for t in page.tasks}
    kinds |= {t.kind for t in (page.parent, page.current) if t is not None}
    kinds |= {t.kind for t in page.children}
    density = page.drawn[2] if page.mode == "density" else {}
    kinds |= set(density)
    items = [html.Div([html.Span(className="gs-swatch", style={"background": meta.colours[k]}),
                       meta.kind_label(k)],
                      className="gs-legend-item", **{"data-kind": meta.kind_label(k)})
             for k in sorted(kinds, key=meta.kind_label)]
    if density:
        # The density's scale, a row each: from white (none) to the kind's colour at the
        # row's own peak, so the scale has every row's colour.
        items += [html.H6("Density: tasks in flight", className="mt-2"), *(
            html.Div([html.Span(className="gs-ramp", style={
                "background": f"linear-gradient(to right, #fff, {meta.colours[k]})"}),
                f"0 to {figures.density_peak(density[k]):.3g}"],
                className="gs-density-scale small", **{"data-kind": meta.kind_label(k)})
            for k in sorted(density, key=meta.kind_label))]
    return [html.H6("Legend"), *items]


def _kernel_link(meta, state, task, kind):
    """A link to Klein's kernel views for a kernel, work-group or wavefront task."""
    launch = task_launch(meta.path, task.id, kind.category)
    if launch is None:
        return ""
    return html.Div(dcc.Link("kernel views of this launch", id="cv-kernel-link",
                             href=kernel_href(state.trace, launch)))


def _task_panel(page, meta, state):
    task = page.current
    if task is None:
        hint = "Click any bar to make it the current task." if page.mode == "bars" else \
            "Click the density to zoom in to bars, then click a bar to make it the current task."
        return html.Div([html.H6("Current task"), html.P(hint, className="small")])
    kind = meta.kinds[task.kind]
    loc_name = next((x.name for x in meta.locations if x.id == task.location), "?")
    up = None
    if page.parent is not None:
        parent_loc = next((x.name for x in meta.locations if x.id == page.parent.location), None)
        up = dcc.Link("↑ parent task, at its component", id="cv-parent-link",
                      href=urls.href("/component", replace(
                          state, task=page.parent.id, t0=None, t1=None, loc=parent_loc)))
    rows = [("ID", task.ext_id or str(task.id)), ("Category", kind.category),
            ("Action", kind.action), ("Location", loc_name),
            ("Start", _time_cell(meta, task.start_ps, "cv-start")),
            ("End", _time_cell(meta, task.end_ps, "cv-end")),
            ("Duration", fmt_ps(task.end_ps - task.start_ps)),
            ("Subtasks", f"{page.children_total:,}")]
    if task.flags & 1:
        rows.append(("Note", "still open when the run stopped"))
    return html.Div([
        html.H6("Current task"),
        html.Table([html.Tr([html.Th(k), html.Td(v)]) for k, v in rows],
                   className="gs-summary-table", id="cv-current"),
        up or "",
        _links(page, meta, state),
        _kernel_link(meta, state, task, kind),
        html.Div(figures.details_text(task), className="gs-details mt-1"),
        html.Div([html.Div(f"{fmt_at(t)}  {n}") for t, n in page.tags],
                 className="gs-details mt-1") if page.tags else "",
    ], className="mb-2")


def _time_cell(meta, ps, cell_id):
    """A relative time, exact to the ns, with the absolute time on hover (and in a
    hidden span for tests and copying) when the run has a clock."""
    absolute = meta.absolute(ps)
    return html.Span(fmt_at(ps), id=cell_id, title=absolute,
                     className="gs-abs-time" if absolute else None)


def _links(page, meta, state):
    """The current task's links (flows): a click follows one to the task at the other
    end, at its component (a CPU launch to its GPU kernel and back)."""
    if not page.links_out and not page.links_in:
        return ""
    names = {x.id: x.name for x in meta.locations}
    items = []
    for direction, arrow, links in (("out", "→", page.links_out), ("in", "←", page.links_in)):
        for i, link in enumerate(links):
            other = link.task
            label = (f"{arrow} {link.kind}: {meta.kinds[other.kind].action[:60]}"
                     f" @ {names.get(other.location, '?')}")
            items.append(html.Div(dcc.Link(label, id=f"cv-link-{direction}-{i}", href=urls.href(
                "/component", replace(state, task=other.id, t0=None, t1=None,
                                      loc=names.get(other.location))),
                title=f"{meta.kinds[other.kind].action} at {fmt_at(other.start_ps)}"),
                className="small gs-link-item"))
    return html.Div([html.Div("Linked tasks", className="small fw-bold mt-1"), *items],
                    id="cv-links")


@trace_page(urls.parse_component)
def layout(request):
    name, meta, problems, state = request.name, request.meta, request.problems, request.state
    try:
        page = views.component(request.path, state)
    except LookupError as err:
        return html.Div([widgets.messages(problems + [str(err)]),
                         dcc.Link("Back to the Overview", href=urls.href(
                             "/overview", urls.OverviewState(trace=name)))])
    t0, t1 = page.window
    filename = f"{name}-{page.location.name}-{t0}-{t1}"
    return html.Div([
        widgets.messages(problems + page.messages),
        following.controls(meta, state, "cv"),
        html.Div([
            html.Span(_header(name, meta, page), id="cv-header"),
            html.Button("PNG", className="btn btn-light btn-sm me-1 gs-png", id="cv-png",
                        **_png_data(name, page)),
            dbc.Button("CSV", id="cv-csv-button", size="sm", color="light"),
            dcc.Download(id="cv-csv"), html.Span(id="cv-csv-message"),
        ], className="mb-1"),
        dbc.Row([
            dbc.Col(widgets.graph("cv-graph", page.figure, filename, "gs-linked"), md=9),
            dbc.Col([_task_panel(page, meta, state), html.Div(_legend(meta, page), id="cv-legend")],
                    md=3, className="gs-sidebar"),
        ]),
        html.Div([dbc.Button("How long did these tasks take?", id="cv-durations-button",
                             size="sm", color="light",
                             title="The durations of the tasks in this window: histogram,"
                                   " percentiles and the outliers, each one click from its"
                                   " Task view"),
                  dcc.Loading(html.Div(id="cv-durations"), type="dot")], className="mt-1"),
        html.Div(page.mode, id="cv-mode", hidden=True),
        widgets.url_store("cv"),
        html.Div(f"{t0},{t1}", id="cv-window-ps", hidden=True),
        html.Div("" if page.current is None else str(page.current.id), id="cv-task",
                 hidden=True),
    ])


def _header(name, meta, page):
    """Component, window, task count and the links that depend on them."""
    t0, t1 = page.window
    overview = urls.href("/overview", urls.OverviewState(trace=name, t0=t0, t1=t1))
    return [
        html.Span(page.location.name, className="gs-loc-label me-3 fs-5", id="cv-location"),
        html.Span(f"window {fmt_at(t0)} – {fmt_at(t1)}", className="small me-3",
                  id="cv-window", title=(None if meta.absolute(t0) is None else
                                         f"{meta.absolute(t0)} – {meta.absolute(t1)}")),
        html.Span(f"{page.total_in_window:,}{'+' if page.mode == 'density' else ''} tasks",
                  className="small me-3", id="cv-count"),
        dcc.Link("Overview at this window", href=overview, className="small me-3"),
        dcc.Link("compare with…", id="cv-compare", className="small me-3",
                 href=urls.href("/compare", urls.CompareState(
                     a=name, view="component", loc=page.location.name, t0=t0, t1=t1))),
    ]


def _png_data(name, page):
    """The PNG button's file name and title, which name the window."""
    t0, t1 = page.window
    return {"data-graph": "cv-graph",
            "data-filename": widgets.safe_filename(f"{name}-{page.location.name}-{t0}-{t1}"),
            "data-title": f"{name} · {page.location.name} · {fmt_ps(t0)} – {fmt_ps(t1)}"}


# Registered after ``layout`` exists: this module is imported, not scanned by Dash.
dash.register_page(__name__, path="/component", title="GPUscope component", name="Component",
                   layout=layout)


def _state(search):
    return urls.parse_component(params_of(search))[0]


follow_to_url = follow_switch_callback("cv", urls.parse_component)


@callback(Output("cv-graph", "figure"), Output("cv-header", "children"),
          Output("cv-legend", "children"), Output("cv-window-ps", "children"),
          Output("cv-mode", "children"), Output("cv-live", "children"),
          Output("cv-live", "color"), Output("cv-live-tick", "disabled"),
          Output(LOC, "search", allow_duplicate=True),
          Input("cv-live-tick", "n_intervals"), State(LOC, "search"), prevent_initial_call=True)
@widgets.guarded(*[no_update] * 9)
def follow_run(_tick, search):
    """Redraw the view with the run so far (see ``pages.follow_tick``)."""
    tick = follow_tick(urls.parse_component, search, "cv")
    if tick.request is None:
        return (*[no_update] * 5, *tick.banner, tick.search)
    try:
        page = views.component(tick.request.path, tick.request.state)
    except LookupError as err:  # the component has no tasks so far
        return (*[no_update] * 5, str(err), "warning", tick.banner[2], no_update)
    t0, t1 = page.window
    return (page.figure, _header(tick.request.name, tick.request.meta, page),
            _legend(tick.request.meta, page), f"{t0},{t1}", page.mode, *tick.banner, no_update)


widgets.url_relay("cv")


@callback(Output("cv-durations", "children"), Input("cv-durations-button", "n_clicks"),
          State(LOC, "search"), prevent_initial_call=True)
@widgets.guarded(no_update)
def show_durations(clicks, search):
    """S11 for the tasks shown, read when asked for (a busy window holds many)."""
    if not clicks:
        return no_update
    request, problems = from_search(urls.parse_component, search)
    if request is None:
        return alert(problems)
    try:
        found = durations.durations(request.path, request.state)
    except (LookupError, TraceError, QueryTimeout) as err:
        return widgets.messages([str(err)])
    return _durations_section(request.name, found)


def _durations_section(name, found):
    d = found.found
    if not d["count"]:
        return html.P("No task in this window.", className="small")
    t0, t1 = found.window
    counted = (f"the first {d['count']:,} tasks found (the window holds more)" if found.truncated
               else f"all {d['count']:,} tasks")
    facts = (f"Over {counted} at {found.location} in {fmt_at(t0)} – {fmt_at(t1)}:"
             f" mean {fmt_ps(round(d['mean_ps']))}, median {fmt_ps(d['p50_ps'])},"
             f" p90 {fmt_ps(d['p90_ps'])}, p99 {fmt_ps(d['p99_ps'])}, max {fmt_ps(d['max_ps'])}."
             f" {d['above_fence']:,} beyond Q3 + 3 IQR ({fmt_ps(d['fence_ps'])}).")
    outliers = [html.Li(dcc.Link(f"task {o['task']}: {fmt_ps(o['ps'])}, from {fmt_at(o['start_ps'])}",
                                 href=urls.href("/component", urls.ComponentState(
                                     trace=name, loc=o["loc"], task=o["task"])),
                                 className="cv-outlier"))
                for o in d["outliers"]]
    return html.Div([
        html.P(facts, className="small mb-1", id="cv-durations-facts"),
        widgets.graph("cv-durations-graph", durations.figure(d),
                      widgets.safe_filename(f"{name}-{found.location}-{t0}-{t1}-durations")),
        html.Div([html.Span("Longest outliers (open in the Task view):", className="small"),
                  html.Ul(outliers, className="small mb-0")]) if outliers else
        html.P("No outlier beyond Q3 + 3 IQR.", className="small"),
    ])


@callback(Output("cv-url", "data", allow_duplicate=True),
          Input("cv-graph", "relayoutData"), Input("cv-graph", "clickData"),
          State(LOC, "search"), State("cv-window-ps", "children"), prevent_initial_call=True)
@widgets.guarded(no_update)
def graph_to_url(relayout, click, search, shown_window):
    state = _state(search)
    if ctx.triggered_id != "cv-graph":
        return no_update
    prop = ctx.triggered[0]["prop_id"].split(".")[-1]
    if prop == "clickData" and urls.density_click(click) is not None:
        new = _zoom_to_bars(state, urls.density_click(click), shown_window)
    else:
        new = (urls.component_after_click(state, click, shown_window) if prop == "clickData"
               else urls.component_after_zoom(state, relayout))
    if new is None:
        return no_update
    text = urls.search(new)
    return no_update if text == (search or "") else widgets.to_url(text)


def _zoom_to_bars(state, centre_ps, shown_window):
    """The state whose window around ``centre_ps`` is narrow enough to draw bars."""
    name, path, _meta, _problems = widgets.resolve_trace(state.trace)
    location = _location_shown(state, path)
    if path is None or location is None or not shown_window:
        return None
    window = tuple(int(v) for v in shown_window.split(","))
    t0, t1 = views.bars_window(path, location, centre_ps, window)
    return replace(state, trace=name, loc=location, t0=t0, t1=t1)


def _location_shown(state, path):
    """The component the page shows: the URL's, else the current task's."""
    if state.loc or path is None:
        return state.loc
    try:
        return views.component(path, state).location.name
    except LookupError:
        return None


@callback(Output("cv-csv", "data"), Output("cv-csv-message", "children"),
          Input("cv-csv-button", "n_clicks"), State(LOC, "search"), prevent_initial_call=True)
@widgets.guarded(no_update, no_update)
def download_csv(_clicks, search):
    request, problems = from_search(urls.parse_component, search)
    if request is None:
        return no_update, alert(problems)
    try:
        page = views.component(request.path, request.state)
    except (LookupError, TraceError, QueryTimeout) as err:
        return no_update, alert([str(err)])
    filename = widgets.safe_filename(f"{request.name}-{page.location.name}-{page.window[0]}-"
                                     f"{page.window[1]}") + ".csv"
    return dict(content=exporting.component_csv(page, request.meta), filename=filename), ""
