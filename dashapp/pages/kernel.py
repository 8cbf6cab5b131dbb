"""The kernel page: Klein's memory, branching and debug views of one kernel launch.

``/kernel?trace=NAME&launch=K`` shows launch K of a trace; ``&run=ID`` shows instead an
edited kernel re-run from this page (``dashapp.klein.runner``), so an edited run is a
URL too and Back returns to the original. The source, with line numbers, stays beside
the views: hovering an access, a bank, a pattern bin or a donut region highlights the
matching accesses, bank, source lines and pixels in the browser (assets/kernel.js),
without a server round trip. The page itself is built by ``klein.views.build``.
"""
import json
import time
from dataclasses import replace

import dash
import dash_bootstrap_components as dbc
from dash import Input, Output, State, callback, dcc, html, no_update

from .. import urls, widgets
from ..catalog import trace_meta
from ..findings import reports
from ..klein import jobs, runner
from ..klein.views import accesses_csv, build, edit_spec
from ..queries import QueryTimeout, TraceError
from ..units import fmt_ps
from ..urls import KernelState, first_value, int_param
from ..widgets import safe_filename
from . import alert, from_search, params_of, trace_page

LOC = widgets.LOCATION_ID
NO_EDIT = "This server runs no kernels: it serves its traces read-only (--no-edit)."
POLL_MS = 400
"""How often the page asks how an edited run is doing."""


def parse_kernel(params):
    """(KernelState, messages) from the query parameters of /kernel (never raises)."""
    errors = []
    launch = int_param(params, "launch", errors, minimum=0)
    group = int_param(params, "group", errors, minimum=0)
    line = int_param(params, "line", errors, minimum=1)
    run = first_value(params.get("run")) or None
    if run is not None and not runner.RUN_ID.match(str(run)):
        errors.append(f"Ignored run={run!r}: not an edited run of this page.")
        run = None
    return KernelState(trace=first_value(params.get("trace")), launch=launch or 0, run=run,
                       group=group or 0, line=line), errors


def _state(search):
    return parse_kernel(params_of(search))[0]


def _source_view(text, target=None):
    """The source with line numbers; line ``target`` (a finding's evidence) is marked,
    and assets/kernel.js scrolls to it."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return html.Pre([html.Div([html.Span(str(n), className="kv-ln"), line or " "],
                              className="kv-line" + (" kv-target" if n == target else ""),
                              **{"data-line": str(n)})
                     for n, line in enumerate(lines, start=1)], id="kv-source",
                    className="kv-source")


def _findings_link(request, launch_id):
    """A link to the Findings page of this launch (the analysis numbers launches by their
    order; the kernel page by their records), or "" when the analysis cannot read it."""
    try:
        launches = reports.launches(request.meta)
    except (reports.NotSimulated, reports.AnalysisError):
        return ""
    index = next((k.index for k in launches if k.launch == launch_id), None)
    if index is None:
        return ""
    return dcc.Link("findings of this launch", id="kv-findings", className="small ms-2",
                    href=urls.href("/findings", urls.FindingsState(trace=request.name,
                                                                   kernel=index)))


def _facts(views, state, name, findings=""):
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
                       href=urls.href("/kernel", replace(state, launch=x.id, group=0, line=None)))
              for x in views.launches if x.id != launch.id]
    compare = "" if state.run is not None else dcc.Link(
        "compare with…", id="kv-compare", className="small ms-2",
        href=urls.href("/compare", urls.CompareState(a=name)))
    return html.Div([table, link, compare, findings, html.Div(others)])


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


def _chart(figure, graph_id, class_name, filename, title):
    """A kernel chart with its PNG button (the camera in its toolbar saves an SVG)."""
    return html.Div([
        html.Div(widgets.png_button(graph_id, filename, title), className="text-end lh-1"),
        widgets.graph(graph_id, figure, filename, class_name),
    ])


def _memory_section(views, name, state):
    if not views.memory:
        return html.P("No @watch array in this kernel: add `@watch NAME;` after a local"
                      " array's declaration to see its memory view.", className="small")
    out = [html.Div([
        dbc.Button("CSV of the accesses", id="kv-csv-button", size="sm", color="light",
                   title="Every watched access: work-item, logical time, address, bank and"
                         " its conflict degree"),
        dcc.Download(id="kv-csv"), html.Span(id="kv-csv-message", className="small ms-2"),
    ], className="mb-1")]
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
        title = f"{name} · {views.launch.kernel} · {mv.array}"
        out.append(html.Div([
            html.H6(f"Memory view: {mv.array} ({mv.accesses:,} accesses of {mv.elem_type}"
                    f" elements{truncated})", className="kv-memview-title"),
            _window_links(mv, state),
            _chart(mv.figure, f"kv-memory-{i}", "kv-memory", filename + "-memory",
                   f"{title}: accesses by work-item and logical time"),
            html.Div(report, className="kv-bank-report small fw-bold",
                     id=f"kv-bank-report-{i}",
                     **{"data-conflicted": str(found.conflicted)}),
            html.Div(_bank_unit(mv), className="kv-bank-unit small text-muted"),
            _chart(mv.banks, f"kv-banks-{i}", "kv-banks", filename + "-banks",
                   f"{title}: accesses per LDS bank"),
            html.Div("Hover over an access or a bank.", className="kv-hover-info small",
                     **{"data-highlighted": "0"}),
        ], className="kv-memview mb-3", **{"data-array": mv.array}))
    return html.Div(out)


def _bank_unit(mv):
    """What the bank panel counts, beside the memory view's element accesses."""
    words = int(mv.table.accesses.sum())
    if mv.elem_bytes <= 4:
        return f"Per bank: 4-byte word accesses ({words:,} in all, one per access)."
    return (f"Per bank: 4-byte word accesses ({words:,} in all): each {mv.elem_bytes}-byte"
            f" {mv.elem_type} access touches {-(-mv.elem_bytes // 4)} banks.")


def _branch_section(views, name):
    if not views.patterns:
        return html.P("No branch streams recorded for this launch.", className="small")
    divergent = sum(p.wavefronts for p in views.proxies if p.divergent)
    waves = sum(p.wavefronts for p in views.proxies)
    more = len(views.proxies) - len(views.donuts["data"])
    filename = safe_filename(f"{name}-{views.launch.kernel}")
    title = f"{name} · {views.launch.kernel}"
    image = [] if views.image is None else [dbc.Col([
        html.Div("Work-items as pixels (x, y)", className="small"),
        _chart(views.image, "kv-image", "kv-image", filename + "-image",
               f"{title}: work-items by branch pattern")], md=5)]
    return html.Div([
        html.H6(f"Branching view: {len(views.patterns):,} patterns, {divergent:,} of "
                f"{waves:,} wavefronts divergent", id="kv-branch-title"),
        dbc.Row([dbc.Col(_chart(views.histogram, "kv-histogram", "kv-histogram",
                                filename + "-patterns", f"{title}: branch patterns")), *image]),
        html.Div(f"Proxy warps ({len(views.proxies):,}; the number in a donut is the warps"
                 " it stands for)" + (f", {more} smaller ones not drawn" if more > 0 else ""),
                 className="small"),
        _chart(views.donuts, "kv-donuts", "kv-donuts", filename + "-proxy-warps",
               f"{title}: proxy warps"),
        html.Div(hidden=True, id="kv-branch-data",
                 **{"data-states": json.dumps(views.pattern_states),
                    "data-work-items": json.dumps(views.work_items),
                    "data-width": str(json.loads(views.launch.global_size)[0])}),
    ])


def _debug_section(views, name):
    if not views.debug:
        return html.P("No @bind chart: declare `@emit TYPE NAME[N];` in the kernel and"
                      ' `@bind ["class":"lineChart", "data":["NAME"]]` after it.',
                      className="small")
    kernel = views.launch.kernel
    return dbc.Row([dbc.Col(_chart(fig, f"kv-debug-{i}", "kv-debug",
                                   safe_filename(f"{name}-{kernel}-debug-{i}"),
                                   f"{name} · {kernel}: debug chart {i + 1}"),
                            md=6) for i, (_bind, fig) in enumerate(views.debug)])


def recorded_gpu(path):
    """The GPU preset the trace at ``path`` simulated, which an edit runs on unless another
    is picked: the name its configuration stores, or the default for a trace that names
    none (made before presets, with the R9 Nano's configuration unless set otherwise)."""
    preset = trace_meta(path).config.get("preset")
    return preset if preset in runner.GPUS else runner.GPUS[0]


def _editor(views, state, gpu):
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
    # The Run bar sits under the heading, above the editor: in the page's flow, it never
    # covers the editor (a bar stuck to the bottom of the screen did), and it is on
    # screen with the heading.
    return html.Div([
        html.H6("Edit and run", id="kv-edit-heading"),
        html.Div([
            html.Div([
                dcc.Dropdown(id="kv-size", options=options, value=value, clearable=False,
                             className="kv-size"),
                # the preset the edit runs on (--gpu): the recorded run's unless picked;
                # only the preset travels, not --set overrides the recorded run had
                html.Div(dcc.Dropdown(id="kv-gpu", options=list(runner.GPUS), value=gpu,
                                      clearable=False),
                         title="the GPU preset the edited kernel runs on",
                         className="kv-gpu ms-2"),
                html.Button("Run", id="kv-run", className="btn btn-primary btn-sm ms-2"),
                back,
            ], className="d-flex align-items-center"),
            html.Div(id="kv-run-status", className="small"),
        ], className="kv-run-bar py-1"),
        dcc.Input(id="kv-options", type="text", debounce=False, className="kv-options w-100",
                  placeholder="build options, as clBuildProgram takes them: -D N=64 -I dir",
                  value=""),
        dcc.Textarea(id="kv-editor", value=views.source.text, className="kv-editor",
                     spellCheck=False, maxLength=runner.MAX_SOURCE_BYTES),
        dcc.Store(id="kv-job"),
        dcc.Interval(id="kv-poll", interval=POLL_MS, disabled=True),
    ], className="mt-2")


def _edited_run(run_id):
    """The trace of an edited run, or None (always, on a server that runs none)."""
    return runner.default_pool().run_path(run_id) if widgets.edit_settings().edit else None


def _read_only_note():
    # The callbacks below are registered all the same (Dash registers them per app), so
    # a run request sent by hand is refused in start_run, not merely not offered.
    return html.P("This server shows kernels read-only: it runs no edited kernel.",
                  className="small text-muted mt-2", id="kv-read-only")


@trace_page(parse_kernel)
def layout(request):
    state, name, path, problems = request.state, request.name, request.path, request.problems
    editing = widgets.edit_settings().edit
    if state.run is not None:
        path = _edited_run(state.run)
        if path is None:
            return html.Div([widgets.messages(problems + [
                "That edited run is gone: edited runs last only while this server runs."]),
                dcc.Link("Back to the recorded launch",
                         href=urls.href("/kernel", replace(state, run=None)))])
    try:
        views = build(path, state.launch, state.group)
    except LookupError as err:
        return widgets.messages(problems + [str(err)])
    title = f"{views.launch.kernel}, launch {views.launch.id}" + \
        (" (edited run)" if state.run else "")
    if editing:
        # The page has a Run button: have a simulator process started before it is pressed.
        runner.default_pool().prepare()
    return html.Div([
        widgets.messages(problems),
        html.H5(title, id="kv-title"),
        dbc.Row([
            dbc.Col([_facts(views, state, name,
                            "" if state.run else _findings_link(request, views.launch.id)),
                     html.H6("Source", className="mt-2"),
                     _source_view(views.source.text, state.line),
                     _editor(views, state, recorded_gpu(path)) if editing
                     else _read_only_note()],
                    md=4, className="kv-side"),
            # Memory and branching views side by side, so hovering a donut visibly
            # highlights the accesses of its work-items.
            dbc.Col([dbc.Row([dbc.Col(_memory_section(views, name, state), xl=7),
                              dbc.Col(_branch_section(views, name), xl=5)]),
                     html.H6("Debug view", className="mt-3"), _debug_section(views, name)], md=8),
        ]),
    ])


dash.register_page(__name__, path="/kernel", title="GPUscope kernel", name="Kernel",
                   layout=layout)


def _error_context(source, err):
    """The offending line of the edited source with a caret under the column (none for
    an error in a header, whose text is not shown)."""
    lines = source.split("\n")
    if not err.in_kernel or not 1 <= err.line <= len(lines):
        return ""
    caret = " " * (max(err.col or 1, 1) - 1) + "^"
    return html.Pre(f"{err.line:>4} | {lines[err.line - 1]}\n     | {caret}",
                    className="kv-error-context mb-0 mt-1")


def _run_error(source, err):
    return html.Div([str(err), _error_context(source, err)],
                    className="alert alert-danger py-1 kv-run-error", id="kv-run-error")


def _in_flight(status):
    """The progress line of a run that is waiting or running."""
    elapsed = max(0.0, time.time() - status.since)
    if status.state == "starting":
        text = "starting the run…"
        value = 0
    elif status.state == "waiting":
        text = f"waiting for a free run slot ({runner.RUNS_AT_ONCE} runs at once) for" \
               f" {elapsed:.0f} s"
        value = 0
    else:
        text = f"running for {elapsed:.1f} s (stopped at {runner.TIMEOUT_SECONDS:g} s)"
        value = min(100, 100 * elapsed / runner.TIMEOUT_SECONDS)
    return html.Div([html.Span(text, id="kv-run-progress-text"),
                     dbc.Progress(value=value, striped=True, animated=True,
                                  className="kv-run-progress", style={"height": "4px"})],
                    id="kv-run-progress", **{"data-state": status.state})


@callback(Output(LOC, "search", allow_duplicate=True), Output("kv-run-status", "children"),
          Output("kv-job", "data"), Output("kv-poll", "disabled"),
          Output("kv-run", "disabled"),
          Input("kv-run", "n_clicks"), State("kv-editor", "value"), State("kv-size", "value"),
          State("kv-options", "value"), State("kv-gpu", "value"), State(LOC, "search"),
          prevent_initial_call=True)
@widgets.guarded(no_update, widgets.messages(["The run could not be started."],
                                             colour="danger"), no_update, no_update, no_update)
def start_run(clicks, source, size, options, gpu, search):
    """Hand the edited kernel at the chosen size, build options and GPU preset to a
    background run and start polling (or go straight to its views when the same run was
    made before)."""
    keep = (no_update,) * 3
    if not clicks:
        # Dash fires this when the page (with the button) is inserted: not a click.
        return no_update, no_update, *keep
    if not isinstance(source, str) or not isinstance(size, str):
        return no_update, widgets.messages(["Nothing to run."], colour="danger"), *keep
    settings = widgets.edit_settings()
    if not settings.edit:
        return no_update, widgets.messages([NO_EDIT], colour="danger"), *keep
    if len(source.encode(errors="replace")) > runner.MAX_SOURCE_BYTES:
        return no_update, widgets.messages([
            f"{runner.SOURCE_NAME}: the source is larger than {runner.MAX_SOURCE_BYTES >> 10}"
            " KB; edit-and-run is for kernels of a page or two."], colour="danger"), *keep
    request, problems = from_search(parse_kernel, search)
    if request is None:
        return no_update, alert(problems), *keep
    state, name, path = request.state, request.name, request.path
    recorded = _edited_run(state.run) if state.run else path
    if recorded is None:
        return no_update, widgets.messages(["The edited run this page showed is gone."],
                                           colour="danger"), *keep
    try:
        spec = edit_spec(recorded, state.launch, source, size,
                         options if isinstance(options, str) else "", settings.include_dirs,
                         gpu if isinstance(gpu, str) else "")
        run_id = jobs.default_queue().submit(spec)
    except (LookupError, ValueError, TraceError, QueryTimeout) as err:
        return no_update, widgets.messages([str(err)], colour="danger"), *keep
    except runner.RunError as err:
        return no_update, _run_error(source, err), *keep
    job = {"run": run_id, "trace": name}
    if runner.default_pool().run_path(run_id) is not None:
        return (_run_url(state, name, run_id), html.Span("same run as before"), job, True,
                False)
    status = jobs.default_queue().status(run_id)
    return no_update, _in_flight(status), job, False, True


@callback(Output("kv-csv", "data"), Output("kv-csv-message", "children"),
          Input("kv-csv-button", "n_clicks"), State(LOC, "search"), prevent_initial_call=True)
@widgets.guarded(no_update, no_update)
def download_csv(_clicks, search):
    request, problems = from_search(parse_kernel, search)
    if request is None:
        return no_update, alert(problems)
    state, path = request.state, request.path
    if state.run is not None:
        path = _edited_run(state.run)
        if path is None:
            return no_update, "That edited run is gone."
    try:
        content = accesses_csv(path, state.launch)
    except (LookupError, TraceError, QueryTimeout) as err:
        return no_update, str(err)
    name = f"{request.name}-launch{state.launch}" + (f"-run{state.run}" if state.run else "")
    return dict(content=content, filename=safe_filename(name + "-accesses") + ".csv"), ""


def _run_url(state, name, run_id):
    return urls.search(replace(state, trace=name, run=run_id, launch=0, group=0))


@callback(Output(LOC, "search", allow_duplicate=True), Output("kv-run-status", "children",
                                                              allow_duplicate=True),
          Output("kv-poll", "disabled", allow_duplicate=True),
          Output("kv-run", "disabled", allow_duplicate=True),
          Input("kv-poll", "n_intervals"), State("kv-job", "data"), State("kv-editor", "value"),
          State(LOC, "search"), prevent_initial_call=True)
@widgets.guarded(no_update, no_update, True, False)
def poll_run(_ticks, job, source, search):
    """Show how the submitted run is doing; open its views when it is done."""
    run_id = job.get("run") if isinstance(job, dict) else None
    if not isinstance(run_id, str) or not runner.RUN_ID.match(run_id):
        return no_update, no_update, True, False
    status = jobs.default_queue().status(run_id)
    if status.state in jobs.ACTIVE:
        return no_update, _in_flight(status), no_update, no_update
    if status.state == "done":
        name = job.get("trace") if isinstance(job.get("trace"), str) else None
        done = f"ran in {status.seconds:.2f} s" if status.seconds else "same run as before"
        return _run_url(_state(search), name, run_id), html.Span(done), True, False
    if status.state == "failed":
        return no_update, _run_error(source if isinstance(source, str) else "",
                                     status.error()), True, False
    return (no_update, widgets.messages(["This server knows nothing of that run."],
                                        colour="danger"), True, False)
