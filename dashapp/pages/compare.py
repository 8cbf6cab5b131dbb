"""The Compare page: two runs A and B side by side (``/compare?a=TRACE&b=TRACE``).

A header names both runs and the configuration keys in which they differ. Three views
(``view=``): the summary (kernel times with difference and speed-up, kernels matched
by name, headline statistics; for two imported profiles also their analyses side by
side and their operations by name in HTA TraceDiff's categories, each profile whole or
one of its profiler steps, ``step_a=``/``step_b=``, its first by default: seconds of
analysis, made in the background and drawn under a loading state), the Overview in
comparison mode (A and B on one time axis, absolute or from each run's first kernel,
or B − A; filter, paging and zoom as in the Overview) and the Component view of one
component, A above B. Every control writes the URL and nothing else; the page is
rebuilt from it.
"""
from dataclasses import replace

import dash
import dash_bootstrap_components as dbc
from dash import ALL, Input, Output, State, callback, ctx, dcc, html, no_update

from .. import urls, widgets
from ..catalog import trace_meta
from ..comparison import figures, measured, profiles, stats, views
from ..daisen.metrics import METRICS
from ..findings import reports
from ..queries import QueryTimeout, TraceError
from ..units import fmt_ps

LOC = widgets.LOCATION_ID
VIEW_TITLES = {"summary": "Summary", "overview": "Overview", "component": "Component"}
# Rows of a summary table: two runs of a training program launch tens of thousands of
# kernels, and a page of that many rows takes seconds to build and to draw.
MAX_TABLE_ROWS = 50


def trace_options(cat):
    """Every trace the app serves, members of sweeps and validations (``DIR/FILE``)
    included."""
    names = list(cat.names())
    for folder in cat.sweeps() + cat.validations():
        names += [f"{folder}/{name}" for name in cat.folder_traces(folder)]
    return [{"label": n, "value": n} for n in names]


def _pickers(state, options):
    return dbc.Row([
        dbc.Col([html.Span("A", className="gs-cmp-a me-1 fw-bold"),
                 dcc.Dropdown(id="cmp-a", options=options, value=state.a, clearable=False,
                              placeholder="run A", className="flex-grow-1")],
                md=5, className="d-flex align-items-center"),
        dbc.Col([html.Span("B", className="gs-cmp-b me-1 fw-bold"),
                 dcc.Dropdown(id="cmp-b", options=options, value=state.b, clearable=False,
                              placeholder="run B", className="flex-grow-1")],
                md=5, className="d-flex align-items-center"),
        dbc.Col(dcc.Link("swap A and B", id="cmp-swap", href=urls.href(
            "/compare", replace(state, a=state.b, b=state.a, step_a=state.step_b,
                                step_b=state.step_a, t0=None, t1=None))), md=2),
    ], className="g-2 mb-2 align-items-center")


def _value(value, unit):
    if value is None:
        return "–"
    if unit == "fraction":
        return f"{value:.1%}"
    if unit == "count":
        return f"{value:,}"
    if unit == "ps":
        return fmt_ps(value)
    return f"{value:.3g}"


def _difference(a, b, unit):
    if a is None or b is None:
        return "–"
    if unit == "fraction":
        return f"{(b - a) * 100:+.1f} pp"
    if unit == "count":
        return f"{b - a:+,}"
    if unit == "ps":
        return ("+" if b >= a else "−") + fmt_ps(abs(b - a))
    return f"{b - a:+.3g}"


def _times(factor):
    return "–" if factor is None else f"{factor:.2f}×"


def _table(header, rows, table_id, classes=None):
    body = [html.Tr([html.Td(c) for c in row], className=(classes or {}).get(i))
            for i, row in enumerate(rows)]
    return dbc.Table([html.Thead(html.Tr([html.Th(h) for h in header])), html.Tbody(body)],
                     id=table_id, size="sm", className="gs-summary-table mb-2", hover=True)


def _config(meta_a, meta_b):
    rows = stats.config_rows(meta_a.config, meta_b.config)
    differ = [(k, str(a), str(b)) for k, a, b, d in rows if d]
    same = [(k, str(a), str(b)) for k, a, b, d in rows if not d]
    return html.Div([
        html.H6(f"Configuration: {len(differ)} of {len(rows)} keys differ"),
        _table(("Key", "A", "B"), differ, "cmp-config-diff") if differ else
        html.P("The configurations are identical.", id="cmp-config-diff", className="small"),
        html.Details([html.Summary(f"the {len(same)} keys that agree", className="small"),
                      _table(("Key", "A", "B"), same, "cmp-config-same")]) if same else "",
    ], className="mb-2")


def _view_nav(state):
    return dbc.Nav([dbc.NavItem(dbc.NavLink(
        title, href=urls.href("/compare", replace(state, view=view, t0=None, t1=None,
                                                  page=1)),
        active=view == state.view, id=f"cmp-nav-{view}"))
        for view, title in VIEW_TITLES.items()], pills=True, className="mb-2")


def _of(shown, every, what):
    """A table's heading's note when it shows only the rows that changed most."""
    return "" if shown == every else f" (the {shown} of {every:,} {what} that changed most)"


def _name(text):
    """A kernel's name in a table cell: C++ template names run to hundreds of characters,
    so the cell shows its start and the whole name on hover."""
    return html.Span(text, title=text, className="gs-long-name")


def _step_pickers(found, chosen):
    """A dropdown per side of its profiler steps (and the whole profile), showing the
    step compared; disabled for a profile that records none."""
    def picker(side, steps, step):
        options = [{"label": "whole profile", "value": urls.WHOLE_PROFILE}] + [
            {"label": f"ProfilerStep#{n}", "value": n} for n in steps]
        return dbc.Col([html.Span(side, className=f"gs-cmp-{side.lower()} me-1 fw-bold"),
                        dcc.Dropdown(id=f"cmp-step-{side.lower()}", options=options,
                                     value=urls.WHOLE_PROFILE if step is None else step,
                                     clearable=False, disabled=not steps,
                                     className="flex-grow-1")],
                       md=5, className="d-flex align-items-center")
    return dbc.Row([picker("A", found[0], chosen[0]), picker("B", found[1], chosen[1])],
                   className="g-2 mb-2 align-items-center", id="cmp-steps")


def _steps_of(state, meta_a, meta_b):
    """(each side's recorded steps, the step each compares (None: whole), messages)."""
    found = profiles.steps(meta_a), profiles.steps(meta_b)
    (step_a, said_a), (step_b, said_b) = (
        profiles.chosen_step(asked, steps, side)
        for asked, steps, side in ((state.step_a, found[0], "A"), (state.step_b, found[1], "B")))
    return found, (step_a, step_b), said_a + said_b


def _profile_section(state, meta_a, meta_b):
    """(section, messages) for two profiles: the step of each to compare, and their diff
    (I13), begun in the background here and drawn by ``fill_why`` under a loading
    state."""
    found, chosen, said = _steps_of(state, meta_a, meta_b)
    profiles.start(meta_a, meta_b, *chosen)
    return html.Div([
        html.H6("Why, A and B: the profile analyses side by side (I13)"),
        _step_pickers(found, chosen),
        dcc.Store(id="cmp-why-search", data=urls.search(state)),
        dcc.Loading(html.Div(id="cmp-why-body", className="gs-loading"), type="circle",
                    delay_show=150),
    ]), said


def _profile_why(diff):
    """The diff of two profiles: their time budgets drawn, their analyses side by side
    and their operations by name."""
    rows, section = [], None
    for r in diff.rows:
        rows.append((r.analysis if r.analysis != section else "", r.label, _value(r.a, r.unit),
                     _value(r.b, r.unit), _difference(r.a, r.b, r.unit),
                     _times(stats.ratio(r.a, r.b))))
        section = r.analysis
    shown = diff.ops[:MAX_TABLE_ROWS]
    ops = [(_name(o["name"]), f"{o['count_a']:,}", f"{o['count_b']:,}", fmt_ps(o["total_a_ps"]),
            fmt_ps(o["total_b_ps"]), _difference(o["total_a_ps"], o["total_b_ps"], "ps"),
            o["category"]) for o in shown]
    return [widgets.graph("cmp-budget", figures.budget_comparison(*diff.devices),
                          "compare-budget"),
            _table(("", "", "A", "B", "B − A", "B/A"), rows, "cmp-why"),
            html.H6("Operations by name (HTA TraceDiff's categories): " + ", ".join(
                f"{n} {c}" for c, n in diff.categories.items() if n)
                + _of(len(shown), len(diff.ops), "names")),
            _table(("Name", "count A", "count B", "time A", "time B", "B − A", ""), ops,
                   "cmp-ops")]


def _summary(path_a, path_b):
    a, b = stats.run_stats(path_a), stats.run_stats(path_b)
    total = stats.speedup(a.simulated_ps, b.simulated_ps)
    faster = ("faster" if total and total >= 1 else "slower")
    factor = total if total and total >= 1 else (1 / total if total else None)
    parts = [html.P([html.Span(f"{stats.time_name(path_a, path_b).capitalize()}: ",
                               className="fw-bold"),
                     f"A {fmt_ps(a.simulated_ps)}, B {fmt_ps(b.simulated_ps)}: ",
                     html.Span(f"B is {_times(factor)} {faster} (speed-up A/B {_times(total)})",
                               id="cmp-speedup")])]
    if stats.same_program(a.kernels, b.kernels):
        shown = stats.changed_launches(a.kernels, b.kernels, MAX_TABLE_ROWS)
        rows = [(i, _name(ka.name), fmt_ps(ka.duration_ps), fmt_ps(kb.duration_ps),
                 _difference(ka.duration_ps, kb.duration_ps, "ps"),
                 _times(stats.speedup(ka.duration_ps, kb.duration_ps)))
                for i, ka, kb in shown]
        parts += [html.H6("Kernel launches" + _of(len(shown), len(a.kernels), "launches")),
                  _table(("#", "Kernel", "A", "B", "B − A", "speed-up A/B"), rows,
                         "cmp-launches")]
    matches = stats.match_kernels(a.kernels, b.kernels)
    if matches:
        counts = {s: sum(m.status == s for m in matches)
                  for s in ("added", "removed", "slower", "faster", "same")}
        every = len(matches)
        matches = matches[:MAX_TABLE_ROWS]
        rows = [(_name(m.name), m.count_a, m.count_b,
                 fmt_ps(m.time_a) if m.count_a else "–", fmt_ps(m.time_b) if m.count_b else "–",
                 _difference(m.time_a, m.time_b, "ps"),
                 _times(stats.speedup(m.time_a, m.time_b)) if m.count_a and m.count_b else "–",
                 m.status) for m in matches]
        parts += [html.H6("Kernels matched by name: " + ", ".join(
                      f"{n} {s}" for s, n in counts.items() if n)
                      + _of(len(matches), every, "kernels")),
                  _table(("Kernel", "launches A", "launches B", "time A", "time B", "B − A",
                          "speed-up A/B", ""), rows, "cmp-kernels",
                         {i: f"gs-cmp-{m.status}" for i, m in enumerate(matches)})]
    else:
        parts.append(html.P("Neither run recorded kernel tasks.", className="small"))
    metas = trace_meta(path_a), trace_meta(path_b)
    parts += _against_measured(metas, (a, b))
    table = stats.stat_rows(a, b)
    moved = stats.largest_changes(table)
    if moved:
        parts.append(html.P([html.Span("Largest changes: ", className="fw-bold"), "; ".join(
            f"{r.label if r.section == 'Occupancy' else f'{r.section.lower()} {r.label}'}"
            f" {_value(r.a, r.unit)} → {_value(r.b, r.unit)} ({_times(stats.ratio(r.a, r.b))})"
            for r in moved)], id="cmp-changes"))
    rows, section = [], None
    for r in table:
        rows.append((r.section if r.section != section else "", r.label, _value(r.a, r.unit),
                     _value(r.b, r.unit), _difference(r.a, r.b, r.unit),
                     _times(stats.ratio(r.a, r.b))))
        section = r.section
    parts += [html.H6("Statistics"),
              _table(("", "", "A", "B", "B − A", "B/A"), rows, "cmp-stats")]
    return html.Div(parts)


def _against_measured(metas, runs):
    """A simulator run and a measured profile: each simulated kernel beside the profile's
    kernels of the same name (``comparison.measured``); nothing for another pair."""
    simulated = [m.run.get("source") == "simulator" for m in metas]
    profiled = [not m.simulated for m in metas]
    if simulated == [True, False] and profiled[1]:
        sim, real, labels = runs[0], runs[1], ("A", "B")
    elif simulated == [False, True] and profiled[0]:
        sim, real, labels = runs[1], runs[0], ("B", "A")
    else:
        return []
    matches = measured.match_measured(sim.kernels, real.kernels)
    heading = (f"Simulated ({labels[0]}) against measured ({labels[1]}): kernels matched by"
               " name, per launch (the median of each side's launches)")
    if not matches:
        names = ", ".join(dict.fromkeys(k.name for k in sim.kernels)) or "none"
        return [html.H6(heading), html.P(
            f"No kernel of the simulation ({names}) has its name, or its function's name,"
            " in the profile.", id="cmp-measured", className="small")]
    rows = [(_name(m.name), _name(", ".join(m.real_names)), m.sim_launches, m.real_launches,
             fmt_ps(m.sim_ps), fmt_ps(m.real_ps), _times(m.ratio)) for m in matches]
    return [html.H6(heading), _table(
        ("Kernel", "in the profile", "launches sim", "launches real", "simulated",
         "measured", "sim/measured"), rows, "cmp-measured")]


def _time_bar(state, window, path_a, path_b):
    return html.Div([
        dbc.RadioItems(id="cmp-align", value=state.align, inline=True, className="me-3",
                       options=[{"label": stats.time_name(path_a, path_b), "value": "absolute"},
                                {"label": "from each run's first kernel", "value": "kernel"}]),
        html.Span(f"window {fmt_ps(window[0])} – {fmt_ps(window[1])}", id="cmp-window",
                  className="small me-3"),
        dbc.Button("Reset zoom", id="cmp-reset", size="sm", color="secondary"),
    ], className="d-flex align-items-center mb-1")


def _overview(path_a, path_b, state):
    page = views.overview(path_a, path_b, state)
    state = page.state
    controls = dbc.Row([
        dbc.Col(dbc.Input(id="cmp-filter", value=state.filter, debounce=True, type="text",
                          placeholder="filter: regular expression, e.g. (CU|L1|L2)"), md=3),
        dbc.Col(dcc.Dropdown(id="cmp-metric", value=state.metric, clearable=False,
                             options=[{"label": m.title, "value": k}
                                      for k, m in METRICS.items()]), md=3),
        dbc.Col(dbc.RadioItems(id="cmp-mode", value=state.mode, inline=True,
                               options=[{"label": "A and B", "value": "overlay"},
                                        {"label": "B − A", "value": "diff"}]), md=3),
        dbc.Col(dbc.RadioItems(id="cmp-sort", value=state.sort, inline=True,
                               options=[{"label": "by name", "value": "name"},
                                        {"label": "by load", "value": "load"}]), md=3),
    ], className="g-2 mb-1 align-items-center")

    def chart(i, c):
        link = urls.href("/compare", replace(state, view="component", loc=c.name, page=1,
                                             t0=page.window[0], t1=page.window[1]))
        only = "" if c.in_a and c.in_b else (" (A only)" if c.in_a else " (B only)")
        return dbc.Col(html.Div([
            dcc.Link((c.label or c.name) + only, href=link, className="gs-chart-title",
                     title="Compare this component's tasks, A above B"),
            widgets.graph({"type": "cmp-graph", "index": i}, c.figure, f"compare-{c.name}",
                          "gs-cmp-graph"),
        ], className="gs-chart-card"), xl=3, lg=4, md=6, className="mb-2")

    return html.Div([
        widgets.messages(page.messages), controls, _time_bar(state, page.window, path_a, path_b),
        html.Div([html.Span("A", className="gs-cmp-a fw-bold me-1"), "and ",
                  html.Span("B", className="gs-cmp-b fw-bold mx-1"),
                  f"· page {state.page} of {page.pages} · {page.matched} components"],
                 id="cmp-count", className="small mb-1"),
        dbc.Pagination(id="cmp-pages", max_value=page.pages, active_page=state.page,
                       first_last=True, previous_next=True, fully_expanded=False, size="sm",
                       className="mb-1"),
        dbc.Row([chart(i, c) for i, c in enumerate(page.charts)], className="g-2"),
    ])


def _component(path_a, path_b, names, state, meta_a, meta_b):
    try:
        page = views.component(path_a, path_b, names, state)
    except LookupError as err:
        return widgets.messages([str(err)])
    common = views.component_names(meta_a, meta_b, "name")
    opened = {"A": names[0], "B": names[1]}
    offsets = views.offsets(path_a, path_b, state.align)

    at = {"A": page.location, "B": page.partner or page.location}

    def panel(label, offset):
        view = urls.ComponentState(trace=opened[label], loc=at[label],
                                   t0=page.window[0] + offset, t1=page.window[1] + offset)
        link = dcc.Link(f"open in {opened[label]}", href=urls.href("/component", view),
                        className="small ms-2")
        head = html.Div([html.Span(label, className=f"gs-cmp-{label.lower()} fw-bold me-2"),
                         html.Span(opened[label], className="gs-loc-label"),
                         html.Span(f" · {at[label]}", className="small gs-cmp-at"),
                         html.Span(f" · {page.counts[label]:,} tasks", className="small"),
                         link])
        figure = page.figures[label]
        if figure is None:
            return html.Div([head, html.P(f"{label} has no tasks at {at[label]}.",
                                          className="small")])
        return html.Div([head, widgets.graph({"type": "cmp-graph", "index": label}, figure,
                                             f"compare-{label}-{at[label]}", "gs-linked")])

    return html.Div([
        widgets.messages(page.messages),
        dbc.Row([dbc.Col(dcc.Dropdown(id="cmp-loc", value=page.location, clearable=False,
                                      options=[{"label": n, "value": n} for n in common]),
                         md=4)], className="mb-1"),
        _time_bar(state, page.window, path_a, path_b),
        panel("A", offsets[0]), panel("B", offsets[1]),
    ])


@widgets.friendly
def layout(**query):
    state, problems = urls.parse_compare(query)
    options = trace_options(widgets.catalog())
    head = [html.H4("Compare runs"), _pickers(state, options)]
    if not state.a or not state.b:
        return html.Div(head + [widgets.messages(
            problems + ["Pick the two runs to compare: A (the baseline) and B."], colour="info")])
    resolved = [widgets.resolve_trace(name) for name in (state.a, state.b)]
    problems += [p for r in resolved for p in r[3]]
    if any(r[1] is None for r in resolved):
        return html.Div(head + [widgets.messages(problems)])
    (_, path_a, meta_a, _), (_, path_b, meta_b, _) = resolved
    running = [name for name, meta in ((state.a, meta_a), (state.b, meta_b))
               if meta.live is not None]
    if running:
        # Its statistics are those finalize writes: a run is compared once it is finished.
        return html.Div(head + [widgets.messages(problems + [
            f"{name} is not finished (still being written, or interrupted): compare it once"
            " it is finalized." for name in running])])
    try:
        if state.view == "overview":
            body = _overview(path_a, path_b, state)
        elif state.view == "component":
            body = _component(path_a, path_b, (state.a, state.b), state, meta_a, meta_b)
        elif all(reports.is_profile(m) for m in (meta_a, meta_b)):
            section, said = _profile_section(state, meta_a, meta_b)
            problems += said
            body = html.Div([_summary(path_a, path_b), section])
        else:
            body = _summary(path_a, path_b)
    except (TraceError, QueryTimeout) as err:
        return html.Div(head + [widgets.messages(problems + [str(err)])])
    return html.Div(head + [widgets.messages(problems), _config(meta_a, meta_b),
                            _view_nav(state), body])


# Registered after ``layout`` exists: this module is imported, not scanned by Dash.
dash.register_page(__name__, path="/compare", title="GPUscope compare", name="Compare",
                   layout=layout)


@callback(Output(LOC, "search", allow_duplicate=True),
          Input("cmp-a", "value"), Input("cmp-b", "value"), State(LOC, "search"),
          prevent_initial_call=True)
def pick_to_url(a, b, search):
    state = widgets.state_of(search, urls.parse_compare)
    if (a, b) == (state.a, state.b):
        return no_update
    # a step number belongs to its run: another run starts from its own first step
    return widgets.search_for(search, replace(
        state, a=a, b=b, t0=None, t1=None, step_a=state.step_a if a == state.a else None,
        step_b=state.step_b if b == state.b else None))


@callback(Output(LOC, "search", allow_duplicate=True),
          Input("cmp-align", "value"), Input("cmp-reset", "n_clicks"), State(LOC, "search"),
          prevent_initial_call=True)
def time_to_url(align, reset, search):
    # Either way the window goes: a window in one run's time means nothing in the other.
    # A page rebuilt from the URL may call this with nothing changed: then nothing moves.
    state = widgets.state_of(search, urls.parse_compare)
    if ctx.triggered_id == "cmp-align" and align != state.align:
        return widgets.search_for(search, replace(state, align=align, t0=None, t1=None))
    if ctx.triggered_id == "cmp-reset" and reset:
        return widgets.search_for(search, replace(state, t0=None, t1=None))
    return no_update


@callback(Output(LOC, "search", allow_duplicate=True),
          Input("cmp-filter", "value"), Input("cmp-metric", "value"), Input("cmp-mode", "value"),
          Input("cmp-sort", "value"), Input("cmp-pages", "active_page"), State(LOC, "search"),
          prevent_initial_call=True)
def overview_to_url(filter_text, metric, mode, sort, page, search):
    state = widgets.state_of(search, urls.parse_compare)
    trigger = ctx.triggered_id
    if trigger == "cmp-filter":
        state = replace(state, filter=filter_text or "", page=1)
    elif trigger == "cmp-metric":
        state = replace(state, metric=metric)
    elif trigger == "cmp-mode":
        state = replace(state, mode=mode)
    elif trigger == "cmp-sort":
        state = replace(state, sort=sort, page=1)
    elif trigger == "cmp-pages":
        state = replace(state, page=page or 1)
    return widgets.search_for(search, state)


@callback(Output(LOC, "search", allow_duplicate=True),
          Input("cmp-loc", "value"), State(LOC, "search"), prevent_initial_call=True)
def location_to_url(loc, search):
    state = widgets.state_of(search, urls.parse_compare)
    return no_update if loc == state.loc else widgets.search_for(search, replace(state, loc=loc))


@callback(Output(LOC, "search", allow_duplicate=True),
          Input({"type": "cmp-graph", "index": ALL}, "relayoutData"), State(LOC, "search"),
          prevent_initial_call=True)
def zoom_to_url(_relayouts, search):
    if not ctx.triggered or ctx.triggered_id is None:
        return no_update
    window = urls.window_from_relayout(ctx.triggered[0]["value"])
    if window is None:
        return no_update
    t0, t1 = window if window != "reset" else (None, None)
    state = widgets.state_of(search, urls.parse_compare)
    return widgets.search_for(search, replace(state, t0=t0, t1=t1))


@callback(Output("cmp-why-body", "children"), Input("cmp-why-search", "data"))
@widgets.guarded(widgets.messages(["The profiles could not be compared."], colour="danger"))
def fill_why(search):
    """The diff of the page's two profiles at their steps (begun by the layout; made
    once per pair of file versions and steps)."""
    state = widgets.state_of(search, urls.parse_compare)
    resolved = [widgets.resolve_trace(name) for name in (state.a, state.b)]
    if any(r[2] is None for r in resolved):
        return widgets.messages([p for r in resolved for p in r[3]])
    meta_a, meta_b = resolved[0][2], resolved[1][2]
    try:
        _, chosen, _ = _steps_of(state, meta_a, meta_b)
        return _profile_why(profiles.profile_diff(meta_a, meta_b, *chosen))
    except (reports.AnalysisError, TraceError, QueryTimeout) as err:
        return widgets.messages([str(err)])


@callback(Output(LOC, "search", allow_duplicate=True),
          Input("cmp-step-a", "value"), Input("cmp-step-b", "value"), State(LOC, "search"),
          prevent_initial_call=True)
@widgets.guarded(no_update)
def step_to_url(step_a, step_b, search):
    """The steps picked, into the URL (a run's first step is its default: left out)."""
    state = widgets.state_of(search, urls.parse_compare)
    resolved = [widgets.resolve_trace(name) for name in (state.a, state.b)]
    if any(r[2] is None for r in resolved):
        return no_update
    asked = [profiles.asked_step(value, profiles.steps(r[2]))
             for value, r in zip((step_a, step_b), resolved)]
    return widgets.search_for(search, replace(state, step_a=asked[0], step_b=asked[1]))
