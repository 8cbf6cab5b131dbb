"""The Traces page: every trace of the catalogue with its run and a short summary, and
above them the runs still being written, with how far they have got (redrawn while
any of them runs), and the ones whose writer was killed."""
import json
import time

import dash
import dash_bootstrap_components as dbc
from dash import Input, Output, State, callback, dcc, html, no_update

from .. import damage, following, urls, widgets
from ..catalog import trace_meta
from ..daisen import views
from ..klein.views import kernel_href, trace_launches
from ..queries import QueryTimeout, TraceError
from ..units import fmt_ps


def _table(header, rows):
    return dbc.Table([html.Thead(html.Tr([html.Th(h) for h in header])),
                      html.Tbody([html.Tr([html.Td(c) for c in r]) for r in rows])],
                     size="sm", className="gs-summary-table mb-1", borderless=True)


def _live_card(name, meta):
    """A trace not finalized: its state, how far it has got, and a link to watch it."""
    state, sentence = following.status(meta)
    live = meta.live
    title = live.writer.target or name
    bar = (dbc.Progress(value=min(100, 100 * live.tasks / live.expected_tasks), className="mb-1",
                        style={"height": "6px"}) if live.expected_tasks and live.running else "")
    watch = ("Watch it: the Overview and Component views show the run so far and follow it"
             " as it grows." if live.running else "")
    return dbc.Card(dbc.CardBody([
        html.H5([dcc.Link(title, href=urls.href("/overview", urls.OverviewState(trace=name)),
                          className="gs-trace-link"),
                 dbc.Badge(state, color="info" if live.running else "warning",
                           className="ms-2 gs-live-state")]),
        bar,
        html.P([sentence, " ", html.Span(following.progress_text(meta) + ".",
                                         className="gs-live-progress"), " ", watch],
               className="small mb-1"),
        _table(("Run", ""), [("Workload", meta.run["workload"] or "–"),
                             ("Command", meta.run["command"]), ("File", name)]),
    ]), className="mb-2 gs-live-card")


def _components_text(meta):
    """How many components did any work, in plain words."""
    busy = sum(1 for x in meta.locations if x.task_count)
    idle = len(meta.locations) - busy
    if not idle:
        return f"all {busy:,} did work"
    return f"{busy:,} did work; {idle:,} more ran no task (idle, or only grouping others)"


def _trace_card(name, path):
    meta = trace_meta(path)
    if meta.live is not None:
        return _live_card(name, meta)
    run = meta.run
    summary = views.summary(path)
    overview = urls.href("/overview", urls.OverviewState(trace=name))
    config = json.dumps(meta.config, sort_keys=True)
    facts = [
        *((("About", meta.note),) if meta.note else ()),
        ("Workload", run["workload"] or "–"),
        *((("Simulated GPU", meta.simulated_gpu),) if meta.simulated_gpu else ()),
        ("Source", run["source"]),
        ("Simulated time" if meta.simulated else "Profiled time", fmt_ps(meta.end_ps - meta.start_ps)),
        ("Tasks", f"{meta.task_count:,}"),
        ("Components", _components_text(meta)),
        *((("Time 0", meta.absolute(0)),) if meta.absolute(0) else ()),
        *(("GPU", line) for line in meta.devices()),
        ("Completed", "yes" if run["completed"] else "no (interrupted or still running)"),
        ("Command", run["command"]),
        ("Configuration", html.Details([
            html.Summary(config if len(config) < 120 else config[:120] + "…"),
            html.Pre(json.dumps(meta.config, indent=2, sort_keys=True),
                     className="gs-details")], className="gs-config")),
    ]
    return dbc.Card(dbc.CardBody([
        html.H5([dcc.Link(name, href=overview, className="gs-trace-link"),
                 dcc.Link("compare with…", href=urls.href("/compare", urls.CompareState(a=name)),
                          className="gs-compare-link small ms-3"),
                 dcc.Link("findings", href=urls.href("/findings", urls.FindingsState(trace=name)),
                          className="gs-findings-link small ms-3")]),
        _launch_links(name, path),
        dbc.Row([
            dbc.Col(_table(("Run", ""), facts), md=5),
            dbc.Col([html.H6("Busiest components"),
                     _table(("Component", "Busy", "Tasks"),
                            [(dcc.Link(n, href=urls.href("/component", urls.ComponentState(
                                trace=name, loc=n))), f"{b:.1%}", f"{c:,}")
                             for n, b, c in summary.busiest])], md=3),
            dbc.Col([html.H6("Task time per category"),
                     html.P("Summed over the category's tasks: tasks that overlap add up, so"
                            " this can pass the run's time; divided by it, it is how many"
                            " were in flight on average.", className="small text-muted mb-1"),
                     _table(("Category", "Task time", "Mean in flight"),
                            [(c, fmt_ps(ps), f"{s:,.2f}") for c, ps, s in summary.category_time]),
                     html.H6("Instruction mix"),
                     _table(("Unit", "Count", "Share"),
                            [(a, f"{n:,}", f"{s:.1%}") for a, n, s in summary.instruction_mix])
                     if summary.instruction_mix else html.P("No instructions traced.")], md=4),
        ]),
    ]), className="mb-2")


def _launch_links(name, path):
    """Links to the kernel page (Klein's views) of each kernel launch of the trace."""
    launches = trace_launches(path)
    if not launches:
        return ""
    return html.Div(
        [html.Span("Kernel views: ", className="small fw-bold me-1")] +
        [dcc.Link(f"{x.kernel} #{x.id} ({' × '.join(map(str, json.loads(x.global_size)))})",
                  href=kernel_href(name, x.id), className="small me-3 gs-launch-link")
         for x in launches], className="mb-1 gs-launches")


def _unfinished_card(cat, entry):
    """The card of one run being written (or killed while it was)."""
    if not entry.readable:
        return dbc.Alert(
            f"{entry.target}: being written (process {entry.pid}) with a rollback journal"
            " (an import, or a run writing its last tables), which a reader would hold back:"
            " it opens once it is finished.", color="secondary", className="gs-live-card")
    try:
        return _live_card(entry.name, trace_meta(cat.path(entry.name)))
    except (TraceError, QueryTimeout, OSError, LookupError) as err:
        if entry.running:  # no run row yet, or renamed into place meanwhile
            return dbc.Alert(f"{entry.target}: starting (process {entry.pid}); it shows here"
                             " once it has written its first tasks.", color="secondary",
                             className="gs-live-card")
        return dbc.Alert(f"{entry.target}: {err}", color="warning", className="gs-live-card")


def _running_section(cat, finished=()):
    """The section of runs being written or killed, with a link to each trace in
    ``finished`` (runs that were listed and have been renamed into place since)."""
    cards = [dbc.Alert(["Finished: ", dcc.Link(name, href=urls.href(
        "/overview", urls.OverviewState(trace=name)), className="gs-trace-link")],
        color="success", className="py-1 mb-1 gs-finished-run") for name in finished]
    cards += [_unfinished_card(cat, entry) for entry in cat.unfinished()]
    return [html.H4("Running and interrupted runs"), *cards] if cards else []


@widgets.friendly
def layout(**_query):
    cat = widgets.catalog()
    names = cat.names()
    sweeps = _sweeps(cat) + _validations(cat)
    unfinished = _running_section(cat)
    # Redrawn every few seconds: the runs' progress, and runs started since.
    live = [html.Div(unfinished, id="home-running"),
            dcc.Store(id="home-seen", data=_seen(cat, [])),
            dcc.Interval(id="home-tick", interval=following.REFRESH_MS)]
    if not names and not sweeps and not unfinished:
        return html.Div([*live, widgets.messages([
            "No trace files found. Start the app with --trace-dir DIR or --trace FILE."])])
    cards = []
    # Every trace's damage check starts now; the page waits for them at most as long
    # as a page waits for one.
    deadline = time.monotonic() + damage.WAIT_SECONDS
    for name in names:
        try:
            found = damage.verdict(cat.path(name), max(0.0, deadline - time.monotonic()))
            cards.append(dbc.Alert(found.message, color="danger") if found.damaged
                         else _trace_card(name, cat.path(name)))
        except (TraceError, QueryTimeout, OSError) as err:
            cards.append(dbc.Alert(f"{name}: {err}", color="warning"))
    return html.Div([*live, *sweeps, html.H4("Traces"), *cards])


def _seen(cat, finished):
    """What the page has shown: the unfinished files listed, and the finished runs."""
    return {"listed": [u.name for u in cat.unfinished()], "finished": finished}


@callback(Output("home-running", "children"), Output("home-seen", "data"),
          Input("home-tick", "n_intervals"), State("home-seen", "data"),
          prevent_initial_call=True)
@widgets.guarded(no_update, no_update)
def follow_runs(_tick, seen):
    """Redraw the runs being written; a run that finished since the page was drawn gets
    a link to its trace (the list of traces below is drawn once)."""
    cat = widgets.catalog()
    seen = seen if isinstance(seen, dict) else {}
    finished = [n for n in seen.get("finished", []) if isinstance(n, str) and n in cat.names()]
    for name in seen.get("listed", []):
        done = cat.finished_as(name) if isinstance(name, str) else None
        if done is not None and done not in finished:
            finished.append(done)
    return _running_section(cat, finished), _seen(cat, finished)


def _folders(cat, title, names, href, note=lambda _name: None):
    """A section listing folders of the trace directory (sweeps, validations): each a
    link (``href(name)``), its number of traces and what it is for (``note(name)``)."""
    if not names:
        return []
    return [html.H4(title), html.Ul([
        html.Li([dcc.Link(n, href=href(n)),
                 html.Span(f" · {len(cat.folder_traces(n))} traces", className="small"),
                 *((html.Span(f" · {text}", className="small gs-note"),)
                   if (text := note(n)) else ())])
        for n in names], id=f"home-{title.lower()}")]


def _sweeps(cat):
    """The sweep directories (``simulator sweep -o DIR``) in the trace directory."""
    return _folders(cat, "Sweeps", cat.sweeps(),
                    lambda n: urls.href("/sweep", urls.SweepState(dir=n)), cat.sweep_note)


def _validations(cat):
    """The validation directories (``simulator validate -o DIR``) in the trace directory."""
    return _folders(cat, "Validations", cat.validations(),
                    lambda n: urls.href("/validation", urls.ValidationState(run=n)))


# Registered after ``layout`` exists: this module is imported, not scanned by Dash.
dash.register_page(__name__, path="/", title="GPUscope traces", name="Traces",
                   layout=layout)
