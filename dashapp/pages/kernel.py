"""The kernel page: Klein's memory, branching and debug views of one kernel launch.

``/kernel?trace=NAME&launch=K`` shows launch K of a trace; ``&run=ID`` shows instead an
edited kernel re-run from this page (``dashapp.klein.runner``), so an edited run is a
URL too and Back returns to the original. The source, with line numbers, stays beside
the views: hovering an access, a bank, a pattern bin or a donut region highlights the
matching accesses, bank, source lines and pixels in the browser (assets/kernel.js),
without a server round trip. The page itself is built by ``klein.views.build``.
"""
import json
from dataclasses import replace
from urllib.parse import parse_qs

import dash
import dash_bootstrap_components as dbc
from dash import Input, Output, State, callback, dcc, html, no_update

from .. import urls, widgets
from ..klein import runner
from ..klein.views import build, edit_spec
from ..widgets import graph_config, safe_filename
from ..queries import QueryTimeout, TraceError
from ..units import fmt_ps
from ..urls import KernelState, first_value, int_param

LOC = widgets.LOCATION_ID


def parse_kernel(params):
    """(KernelState, messages) from the query parameters of /kernel (never raises)."""
    errors = []
    launch = int_param(params, "launch", errors, minimum=0)
    group = int_param(params, "group", errors, minimum=0)
    run = first_value(params.get("run")) or None
    if run is not None and not runner.RUN_ID.match(str(run)):
        errors.append(f"Ignored run={run!r}: not an edited run of this page.")
        run = None
    return KernelState(trace=first_value(params.get("trace")), launch=launch or 0, run=run,
                       group=group or 0), errors


def _state(search):
    return parse_kernel(parse_qs((search or "").lstrip("?"), keep_blank_values=True))[0]


def _source_view(text):
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return html.Pre([html.Div([html.Span(str(n), className="kv-ln"), line or " "],
                              className="kv-line", **{"data-line": str(n)})
                     for n, line in enumerate(lines, start=1)], id="kv-source",
                    className="kv-source")


def _facts(views, state, name):
    launch = views.launch
    simd = launch.active_lanes / 64 / launch.vector_instructions \
        if launch.vector_instructions else 0.0
    rows = [("Kernel", f"{launch.kernel} ({views.source.path})"),
            ("NDRange", " × ".join(map(str, json.loads(launch.global_size)))),
            ("Work-group size", " × ".join(map(str, json.loads(launch.local_size)))),
            ("Work-groups / wavefronts", f"{launch.work_groups:,} / {launch.wavefronts:,}"),
            ("SIMD efficiency", f"{simd:.1%} ({launch.partial_instructions:,} partial-mask"
                                f" vector instructions)"),
            ("LDS", f"{launch.lds_instructions:,} instructions, {launch.lds_conflicted:,} with"
                    f" bank conflicts, worst degree {launch.lds_max_degree}")]
    link = ""
    if views.task is not None:
        key, loc, start, end = views.task
        rows.insert(3, ("Simulated time", fmt_ps(end - start)))
        if state.run is None:
            link = dcc.Link("this launch in the Component and Task views", id="kv-task-link",
                            href=urls.href("/component", urls.ComponentState(
                                trace=name, loc=loc, task=key)), className="small")
    else:
        rows.insert(3, ("Simulated time", "not recorded in this trace"))
    table = html.Table([html.Tr([html.Th(k), html.Td(v)]) for k, v in rows],
                       className="gs-summary-table", id="kv-facts")
    others = [dcc.Link(f"launch {x.id}", className="me-2 small",
                       href=urls.href("/kernel", replace(state, launch=x.id, group=0)))
              for x in views.launches if x.id != launch.id]
    return html.Div([table, link, html.Div(others)])


def _window_links(mv, state):
    """Which work-groups the memory view draws, with links to the ones before and after."""
    w = mv.window
    if w.groups <= w.stop - w.start:
        return ""
    size = w.stop - w.start
    links = [f"Drawing work-groups {w.first_group}–{w.last_group} ({w.stop - w.start} of"
             f" {w.groups}); conflicts and banks count all. "]
    if w.start > 0:
        links.append(dcc.Link("◀ earlier", href=urls.href("/kernel", replace(
            state, group=max(0, w.start - size))), className="me-2 kv-earlier"))
    if w.stop < w.groups:
        links.append(dcc.Link("later ▶", href=urls.href("/kernel", replace(
            state, group=w.stop)), className="kv-later"))
    return html.Div(links, className="small kv-window")


def _memory_section(views, name, state):
    if not views.memory:
        return html.P("No @watch array in this kernel: add `@watch NAME;` after a local"
                      " array's declaration to see its memory view.", className="small")
    out = []
    truncated = " (truncated: the access limit was reached)" \
        if views.launch.watch_truncated else ""
    for i, mv in enumerate(views.memory):
        found = mv.found
        if mv.space != "local":
            report = f"{mv.array} is in {mv.space} memory: it has no LDS banks."
        elif found.conflicted:
            report = (f"Bank conflicts: {found.conflicted:,} of {found.instructions:,} "
                      f"{found.group_lanes}-lane accesses serialised, worst degree {found.worst}.")
        else:
            report = (f"No bank conflicts: all {found.instructions:,} {found.group_lanes}-lane"
                      " accesses are conflict free.")
        filename = safe_filename(f"{name}-{views.launch.kernel}-{mv.array}")
        out.append(html.Div([
            html.H6(f"Memory view: {mv.array} ({mv.accesses:,} accesses{truncated})"),
            _window_links(mv, state),
            dcc.Graph(figure=mv.figure, className="kv-memory", id=f"kv-memory-{i}",
                      config=graph_config(filename + "-memory")),
            html.Div(report, className="kv-bank-report small fw-bold",
                     id=f"kv-bank-report-{i}",
                     **{"data-conflicted": str(found.conflicted)}),
            dcc.Graph(figure=mv.banks, className="kv-banks", id=f"kv-banks-{i}",
                      config=graph_config(filename + "-banks")),
            html.Div("Hover over an access or a bank.", className="kv-hover-info small",
                     **{"data-highlighted": "0"}),
        ], className="kv-memview mb-3", **{"data-array": mv.array}))
    return html.Div(out)


def _branch_section(views, name):
    if not views.patterns:
        return html.P("No branch streams recorded for this launch.", className="small")
    divergent = sum(p.wavefronts for p in views.proxies if p.divergent)
    waves = sum(p.wavefronts for p in views.proxies)
    more = len(views.proxies) - len(views.donuts["data"])
    filename = safe_filename(f"{name}-{views.launch.kernel}")
    image = [] if views.image is None else [dbc.Col([
        html.Div("Work-items as pixels (x, y)", className="small"),
        dcc.Graph(figure=views.image, className="kv-image", id="kv-image",
                  config=graph_config(filename + "-image"))], md=5)]
    return html.Div([
        html.H6(f"Branching view: {len(views.patterns):,} patterns, {divergent:,} of "
                f"{waves:,} wavefronts divergent", id="kv-branch-title"),
        dbc.Row([dbc.Col(dcc.Graph(figure=views.histogram, className="kv-histogram",
                                   id="kv-histogram",
                                   config=graph_config(filename + "-patterns"))), *image]),
        html.Div(f"Proxy warps ({len(views.proxies):,}; the number in a donut is the warps"
                 " it stands for)" + (f", {more} smaller ones not drawn" if more > 0 else ""),
                 className="small"),
        dcc.Graph(figure=views.donuts, className="kv-donuts", id="kv-donuts",
                  config=graph_config(filename + "-proxy-warps")),
        html.Div(hidden=True, id="kv-branch-data",
                 **{"data-states": json.dumps(views.pattern_states),
                    "data-work-items": json.dumps(views.work_items),
                    "data-width": str(json.loads(views.launch.global_size)[0])}),
    ])


def _debug_section(views):
    if not views.debug:
        return html.P("No @bind chart: declare `@emit TYPE NAME[N];` in the kernel and"
                      ' `@bind ["class":"lineChart", "data":["NAME"]]` after it.',
                      className="small")
    return dbc.Row([dbc.Col(dcc.Graph(figure=fig, id=f"kv-debug-{i}", className="kv-debug",
                                      config=graph_config(f"debug-{i}")),
                            md=6) for i, (_bind, fig) in enumerate(views.debug)])


def _editor(views, state):
    launch = views.launch
    sizes = runner.size_options(json.loads(launch.global_size),
                                       json.loads(launch.local_size))
    current = runner.size_text(json.loads(launch.global_size))
    options = [{"label": f"{runner.size_text(d)} work-items", "value":
                runner.size_text(d)} for d in sizes]
    value = current if any(o["value"] == current for o in options) else \
        (options[0]["value"] if options else None)
    back = dcc.Link("back to the recorded launch", href=urls.href(
        "/kernel", replace(state, run=None, launch=0, group=0)), className="small ms-2") \
        if state.run else ""
    # The Run bar sticks to the bottom of the side column (kv-run-bar), so the button is
    # on screen whatever the column's scroll.
    return html.Div([
        html.H6("Edit and run"),
        dcc.Textarea(id="kv-editor", value=views.source.text, className="kv-editor",
                     spellCheck=False),
        html.Div([
            html.Div([
                dcc.Dropdown(id="kv-size", options=options, value=value, clearable=False,
                             className="kv-size"),
                html.Button("Run", id="kv-run", className="btn btn-primary btn-sm ms-2"),
                back,
            ], className="d-flex align-items-center"),
            dcc.Loading(html.Div(id="kv-run-status", className="small")),
        ], className="kv-run-bar py-1"),
    ], className="mt-2")


@widgets.friendly
def layout(**query):
    state, problems = parse_kernel(query)
    name, path, _meta, trouble = widgets.resolve_trace(state.trace)
    problems += trouble
    if path is None:
        return widgets.messages(problems)
    state = replace(state, trace=name)
    if state.run is not None:
        path = runner.run_path(state.run)
        if path is None:
            return html.Div([widgets.messages(problems + [
                "That edited run is gone: edited runs last only while this server runs."]),
                dcc.Link("Back to the recorded launch",
                         href=urls.href("/kernel", replace(state, run=None)))])
    try:
        views = build(path, state.launch, state.group)
    except LookupError as err:
        return widgets.messages(problems + [str(err)])
    except (TraceError, QueryTimeout) as err:
        return widgets.messages(problems + [str(err)])
    title = f"{views.launch.kernel}, launch {views.launch.id}" + \
        (" (edited run)" if state.run else "")
    # The page has a Run button: have a simulator process started before it is pressed.
    runner.prepare()
    return html.Div([
        widgets.messages(problems),
        html.H5(title, id="kv-title"),
        dbc.Row([
            dbc.Col([_facts(views, state, name), html.H6("Source", className="mt-2"),
                     _source_view(views.source.text), _editor(views, state)],
                    md=4, className="kv-side"),
            # Memory and branching views side by side, so hovering a donut visibly
            # highlights the accesses of its work-items.
            dbc.Col([dbc.Row([dbc.Col(_memory_section(views, name, state), xl=7),
                              dbc.Col(_branch_section(views, name), xl=5)]),
                     html.H6("Debug view", className="mt-3"), _debug_section(views)], md=8),
        ]),
    ])


dash.register_page(__name__, path="/kernel", title="GPUscope kernel", name="Kernel",
                   layout=layout)


def _error_context(source, err):
    """The offending line of the edited source with a caret under the column."""
    lines = source.split("\n")
    if err.line is None or not 1 <= err.line <= len(lines):
        return ""
    caret = " " * (max(err.col or 1, 1) - 1) + "^"
    return html.Pre(f"{err.line:>4} | {lines[err.line - 1]}\n     | {caret}",
                    className="kv-error-context mb-0 mt-1")


@callback(Output(LOC, "search", allow_duplicate=True), Output("kv-run-status", "children"),
          Input("kv-run", "n_clicks"), State("kv-editor", "value"), State("kv-size", "value"),
          State(LOC, "search"), prevent_initial_call=True,
          running=[(Output("kv-run", "disabled"), True, False)])
def run_edited(_clicks, source, size, search):
    """Re-run the edited kernel at the chosen size and show its views (a new URL)."""
    if not _clicks:
        # Dash fires this when the page (with the button) is inserted: not a click.
        return no_update, no_update
    state = _state(search)
    name, path, _meta, problems = widgets.resolve_trace(state.trace)
    if path is None:
        return no_update, widgets.messages(problems, colour="danger")
    recorded = runner.run_path(state.run) if state.run else path
    if recorded is None:
        return no_update, widgets.messages(["The edited run this page showed is gone."],
                                           colour="danger")
    try:
        spec = edit_spec(recorded, state.launch, source or "", size)
    except (LookupError, ValueError, TraceError, QueryTimeout) as err:
        return no_update, widgets.messages([str(err)], colour="danger")
    try:
        run_id, _path, seconds = runner.run(spec)
    except runner.RunError as err:
        return no_update, html.Div([str(err), _error_context(source or "", err)],
                                   className="alert alert-danger py-1 kv-run-error",
                                   id="kv-run-error")
    new = urls.search(replace(state, trace=name, run=run_id, launch=0, group=0))
    return new, html.Span(f"ran in {seconds:.2f} s" if seconds else "same run as before")
