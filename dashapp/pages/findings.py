"""The Findings page: why the kernel launches of a simulator trace take the time they take,
or why an imported profile (Kineto, Nsight Systems) keeps its GPUs waiting.

``/findings?trace=NAME&kernel=N`` (``kernel`` optional: every launch) lists the findings
of the analysis room (``simulator.analysis``), ranked by the launch time they explain,
each with its message (numbers, definition, threshold) and its evidence as links into
the Overview, Component, Task, kernel and Compare pages; beside them, the report's
charts (``findings.figures``). Each threshold is a URL parameter with its default shown
in a small form. The page itself is drawn at once; the report, seconds of analysis on a
large trace, fills in from a callback under its own spinner (``findings.reports``
caches it per file version, launch and thresholds). A profile has no launches: its
report is per device (the I1 time budget), its critical path (I10), its findings,
whose evidence opens a stream or CPU thread in the Component view, or a task in the
Task view, and its ranges on the GPU (I11), each a link to the findings of its GPU work
alone (``range=NAME[#k]`` or ``step=N``).
"""
from dataclasses import replace
from pathlib import Path

import dash
import dash_bootstrap_components as dbc
from dash import ALL, Input, Output, State, callback, dcc, html, no_update

from .. import urls, widgets
from ..findings import figures, reports
from ..findings.evidence import evidence_link
from ..findings.ranges import ranges_section
from ..queries import QueryTimeout, TraceError
from ..units import fmt_at, fmt_ps
from . import alert, from_search, params_of, trace_page

LOC = widgets.LOCATION_ID
ANALYSES = {"budget": "S1 time budget", "cpi_stack": "S2 CPI stack", "stalls": "S3 stall breakdown",
            "memory_latency": "S4 memory latency", "blocking": "S5 blocking",
            "imbalance": "S6 imbalance", "sol": "S7 speed of light", "roofline": "S8 roofline",
            "critical_path": "S9 critical path", "cu_idle": "S10 CU idle",
            "hints": "S12 kernel hints", "what_if": "S13 what-if"}
"""The report's analyses by their names in why-layer.md §9.1."""
FORM_THRESHOLDS = [f for f in urls.THRESHOLDS if f.name != "what_if_change"]
"""The thresholds offered in the form: the page runs no what-if (S13 re-simulates), so
its threshold would change nothing here."""
CHARTS = (("fd-budget", figures.budget_figure), ("fd-cpi", figures.cpi_figure),
          ("fd-stalls", figures.stall_figure), ("fd-sol", figures.sol_figure),
          ("fd-critical", figures.critical_path_figure), ("fd-roofline", figures.roofline_figure))


def _scope(request):
    """(launches, kernel, profile query, messages): the trace's launches and the one the
    URL asks for, None for all (a launch it does not have is a message, and all are
    shown). A profile has none and is explained whole, or for one range or profiler
    step, with the pace of the iterations a range or kernel delimits
    (``reports.ProfileQuery``); a simulator trace has no ranges."""
    launches = reports.launches(request.meta)
    state = request.state
    kernel = state.kernel
    if reports.is_profile(request.meta):
        query = reports.ProfileQuery(state.range, state.step, state.pace)
        return [], None, query, [f"Ignored kernel={kernel}: an imported profile is explained"
                                 " whole, not per launch."] if kernel is not None else []
    asked = [f"{name}={value!r}" for name, value in (("range", state.range), ("step", state.step),
                                                      ("pace", state.pace)) if value is not None]
    problems = [f"Ignored {', '.join(asked)}: a simulator trace has no ranges or profiler"
                " steps."] if asked else []
    if not launches:
        raise reports.NotSimulated("This trace holds no kernel launch: there is nothing to explain.")
    if kernel is not None and kernel >= len(launches):
        return launches, None, None, problems + [
            f"Ignored kernel={kernel}: the trace has launches 0 to {len(launches) - 1};"
            " showing them all."]
    return launches, kernel, None, problems


def _launch_links(state, launches, kernel):
    """All launches, then each: the current one in bold."""
    def item(label, index):
        link = dcc.Link(label, href=urls.href("/findings", replace(state, kernel=index)),
                        className="me-3 fd-launch-link" + (" fw-bold" if index == kernel else ""))
        return link
    return html.Div([html.Span("Launches: ", className="fw-bold me-1"),
                     item("all", None),
                     *(item(f"#{k.index} {k.name} ({fmt_ps(k.duration_ps)})", k.index)
                       for k in launches)], className="small mb-1", id="fd-launches")


def _analysis_of(f):
    """The analysis a threshold belongs to ("S7 · "), from its help text ("S7: ...")."""
    name, sep, _ = f.metadata["help"].partition(":")
    return f"{name} · " if sep and len(name) <= 4 else ""


def _thresholds_form(state):
    """A field per threshold, its default and meaning on hover; Apply writes the URL."""
    changed = [f.name for f in FORM_THRESHOLDS if getattr(state, f.name) != f.default]
    fields = [dbc.Col(html.Div([
        html.Label(f.name, className="small mb-0 font-monospace"),
        dbc.Input(id={"type": "fd-threshold", "name": f.name}, type="number", size="sm",
                  value=getattr(state, f.name), placeholder=str(f.default),
                  step=1 if urls.whole_threshold(f) else 0.01, min=0),
        html.Div(f"{_analysis_of(f)}default {f.default}", className="small text-muted"),
    ], title=f"{f.metadata['help']} (default {f.default})"), xs=6, md=3, lg=2)
        for f in FORM_THRESHOLDS]
    reset = replace(state, **{f.name: f.default for f in urls.THRESHOLDS})
    return html.Details([
        html.Summary(f"Thresholds ({len(changed)} changed: {', '.join(changed)})" if changed
                     else "Thresholds (all at their defaults)", className="small"),
        dbc.Row(fields, className="g-2 mt-1"),
        html.Div([dbc.Button("Apply", id="fd-apply", size="sm", color="primary", className="me-2"),
                  dcc.Link("reset to the defaults", href=urls.href("/findings", reset),
                           className="small")], className="mt-1"),
    ], open=bool(changed), className="mb-2", id="fd-thresholds")


@trace_page(urls.parse_findings)
def layout(request):
    state, name = request.state, request.name
    try:
        launches, kernel, query, problems = _scope(request)
    except (reports.NotSimulated, reports.AnalysisError) as err:
        return alert(request.problems + [str(err)])
    state = replace(state, kernel=kernel)
    if query is None:
        state = replace(state, range=None, step=None, pace=None)
    # collected by fill_report
    reports.start(request.meta, kernel, urls.thresholds_of(state), urls.window_of(state), query)
    overview = urls.href("/overview", urls.OverviewState(trace=name, t0=state.t0, t1=state.t1))
    profile = reports.is_profile(request.meta)
    whole = dcc.Link("(whole launches)" if not profile else "(whole profile)", href=urls.href(
        "/findings", replace(state, trace=name, t0=None, t1=None, range=None, step=None)),
        className="small fw-normal")
    if state.range is not None or state.step is not None:
        window = html.Span([" in " + (f"ProfilerStep#{state.step}" if state.step is not None
                                      else state.range) + " ", whole],
                           id="fd-window", className="fs-6 fw-normal")
    elif state.t0 is not None:
        window = html.Span([f" in {fmt_at(state.t0)} – {fmt_at(state.t1)} ", whole],
                           id="fd-window", className="fs-6 fw-normal")
    else:
        window = ""
    return html.Div([
        widgets.messages(request.problems + problems),
        html.H5(["Findings: ", html.Span(name, className="font-monospace"), window,
                 dcc.Link("Overview", href=overview, className="small ms-3 fw-normal")],
                id="fd-title"),
        html.P(("Why the GPUs of this profile wait" if profile else
                "Why the launches take the time they take") + ": each finding states its"
               " numbers, its definition and threshold, and the time it explains; its evidence"
               " opens the views that show it.", className="small text-muted mb-1"),
        "" if profile else _launch_links(state, launches, kernel),
        _thresholds_form(state),
        dcc.Store(id="fd-search", data=urls.search(replace(state, trace=name))),
        dcc.Loading(html.Div(id="fd-report", className="gs-loading"), type="circle",
                    delay_show=150),
        widgets.url_store("fd"),
    ])


dash.register_page(__name__, path="/findings", title="GPUscope findings", name="Findings",
                   layout=layout)


def _served(path):
    """The catalogue name of the trace file at ``path`` (a compare evidence), or None."""
    cat = widgets.catalog()
    for name in cat.names():
        if cat.path(name).resolve() == Path(path).resolve():
            return name
    return None


def _finding(rank, finding, state, launch_ps):
    """One finding: its rank, rule, launch and time explained; its message (the definition
    and threshold in a lighter line) and its evidence links."""
    message = finding["message"]
    claim, sep, definition = message.partition(" Definition: ")
    links = []
    for item in finding["evidence"]:
        label, href = evidence_link(state.trace, item, _served)
        links.append(html.Li(dcc.Link(label, href=href, className="fd-evidence") if href
                             else label, **{"data-view": item["view"]}))
    whole = launch_ps.get(finding["kernel"])
    share = finding["explains_ps"] / whole if whole else None
    if finding["kernel"] is not None:
        where = dcc.Link(f"launch {finding['kernel']}", className="me-2",
                         href=urls.href("/findings", replace(state, kernel=finding["kernel"])))
    else:  # a profile's: a device, or the whole profile
        device = finding.get("device")
        where = html.Span("the profile" if device is None else f"GPU {device}", className="me-2")
    return html.Div([
        html.Div([html.Span(f"{rank}.", className="fw-bold me-2"),
                  dbc.Badge(finding["rule"], color="secondary", className="me-2"), where,
                  html.Span(f"explains {fmt_ps(finding['explains_ps'])}"
                            + (f" ({share:.0%} of the launch)" if share is not None else ""),
                            className="fw-bold fd-explains")]),
        html.Div(claim, className="fd-message"),
        html.Div("Definition: " + definition, className="small text-muted") if sep else "",
        html.Ul(links, className="small mb-0 fd-evidence-list"),
    ], className="fd-finding border-bottom py-2", **{"data-rule": finding["rule"]})


def _unavailable(kernels):
    """The analyses the trace cannot support and why, once per reason."""
    reasons = {}
    for k in kernels:
        for key, label in ANALYSES.items():
            entry = k.get(key)
            if isinstance(entry, dict) and "unavailable" in entry:
                reasons.setdefault((label, entry["unavailable"]), []).append(k["launch"])
    if not reasons:
        return ""
    return html.Div([html.H6("Not available for this trace", className="mt-3"),
                     html.Ul([html.Li(f"{label} (launch {', '.join(map(str, which))}): {why}")
                              for (label, why), which in reasons.items()],
                             className="small", id="fd-unavailable")])


def _launch_line(k):
    parts = [f"#{k['launch']} {k['name']}: {fmt_ps(k['time_ps'])}"]
    c = k.get("classification")
    if isinstance(c, dict):
        parts.append(c["kind"] + (f" ({c['unit']})" if c["unit"] else ""))
    budget = k.get("budget")
    if isinstance(budget, dict) and budget.get("waves_per_cu") is not None:
        parts.append(f"{budget['waves_per_cu']} waves per CU"
                     + (f" ({budget['flag']})" if budget["flag"] else ""))
    return html.Li(" · ".join(parts))


def _charts(name, charts):
    """Each chart that has something to draw: (id, figure function, its argument)."""
    out = []
    for chart_id, make, arg in charts:
        fig = make(arg)
        if fig is not None:
            out.append(html.Div([
                html.Div(widgets.png_button(chart_id, f"{name}-{chart_id}",
                                            f"{name}: {fig.layout.title.text}"),
                         className="text-end lh-1"),
                widgets.graph(chart_id, fig, f"{name}-{chart_id}", "fd-chart")], className="mb-2"))
    return out


def _report(state, report):
    kernels, found = report["kernels"], report["findings"]
    launch_ps = {k["launch"]: k["time_ps"] for k in kernels}
    listing = [_finding(i, f, state, launch_ps) for i, f in enumerate(found, 1)] or [
        html.P("No finding passes its threshold: lower a threshold above to see more.",
               className="small")]
    return dbc.Row([
        dbc.Col([html.Ul([_launch_line(k) for k in kernels], className="small mb-1",
                         id="fd-summary"),
                 html.H6(f"{len(found)} finding{'' if len(found) == 1 else 's'}, most launch time"
                         " explained first",
                         id="fd-count"),
                 html.Div(listing, id="fd-list"), _unavailable(kernels)], lg=6),
        dbc.Col(_charts(state.trace, [(i, make, kernels) for i, make in CHARTS]), lg=6,
                id="fd-charts"),
    ])


def _device_line(d):
    return html.Li(f"GPU {d['device']}: {fmt_ps(d['span_ps'])} from its first operation to its"
                   f" last; compute {fmt_ps(d['compute_ps'])}, non-compute"
                   f" {fmt_ps(d['non_compute_ps'])} (copy-only {fmt_ps(d['copy_only_ps'])}),"
                   f" idle {fmt_ps(d['idle_ps'])}")


def _path_line(path):
    bounds = ", ".join(f"{b.replace('_', ' ')} {v['share']:.1%}"
                       for b, v in path["bound_by"].items() if v["ps"])
    return html.Li(f"critical path (I10): {fmt_ps(path['length_ps'])} through"
                   f" {path['events']:,} events; {bounds}")


def _pace_line(pace):
    if "unavailable" in pace:
        return html.Li(f"pace (I12): {pace['unavailable']}.", className="text-muted")
    return html.Li(f"pace (I12): {pace['count']} iterations of {pace['subject'][:80]}, one every"
                   f" {fmt_ps(pace['median_delta_ps'])} (median), CV {pace['cv']:.3f}"
                   + (", jitter" if pace["jitter"] else ""))


def _sol_line(sol):
    if "unavailable" in sol:
        return html.Li(f"speed of light (I14): {sol['unavailable']}.", className="text-muted",
                       id="fd-sol-note")
    verdicts = "; ".join(f"{k['name'][:60]}: {k['kind']} (SM {k['compute_sol']:.0%}, memory"
                         f" {k['memory_sol']:.0%})" for k in sol["kernels"][:3])
    return html.Li(f"speed of light (I14), {len(sol['kernels'])} kernels with GPU counters:"
                   f" {verdicts}")


def _profile_report(state, report):
    """An imported profile's report: its devices, critical path, pace, speed of light
    (or what it needs), findings and ranges."""
    found, path = report["findings"], report["analyses"].get("critical-path")
    listing = [_finding(i, f, state, {}) for i, f in enumerate(found, 1)] or [
        html.P("No finding passes its threshold: lower a threshold above to see more.",
               className="small")]
    charts = [("fd-devices", figures.device_budget_figure, report["devices"]),
              ("fd-profile-path", figures.profile_path_figure, path),
              ("fd-pace", figures.pace_figure, report["analyses"]["pace"])]
    return dbc.Row([
        dbc.Col([html.Ul([_device_line(d) for d in report["devices"]]
                         + ([_path_line(path)] if path and path["length_ps"] else [])
                         + [_pace_line(report["analyses"]["pace"]),
                            _sol_line(report["analyses"]["speed-of-light"])],
                         className="small mb-1", id="fd-summary"),
                 html.H6(f"{len(found)} finding{'' if len(found) == 1 else 's'}, most GPU time"
                         " explained first", id="fd-count"),
                 html.Div(listing, id="fd-list"),
                 ranges_section(state, report["analyses"]["nvtx-projection"],
                                report.get("scope"))], lg=6),
        dbc.Col(_charts(state.trace, charts), lg=6, id="fd-charts"),
    ])


@callback(Output("fd-report", "children"), Input("fd-search", "data"))
@widgets.guarded(widgets.messages(["The findings could not be computed."], colour="danger"))
def fill_report(search):
    """The report of the page's trace, launch and thresholds (analysed on first use)."""
    request, problems = from_search(urls.parse_findings, search)
    if request is None:
        return alert(problems)
    try:
        _launches, kernel, query, _ = _scope(request)
        report = reports.report(request.meta, kernel, urls.thresholds_of(request.state),
                                urls.window_of(request.state), query)
    except (reports.NotSimulated, reports.AnalysisError, TraceError, QueryTimeout,
            ValueError) as err:  # ValueError: a window that overlaps no launch
        return alert([str(err)])
    state = replace(request.state, kernel=kernel)
    return _profile_report(state, report) if "devices" in report else _report(state, report)


widgets.url_relay("fd")


@callback(Output("fd-url", "data", allow_duplicate=True), Input("fd-apply", "n_clicks"),
          Input({"type": "fd-threshold", "name": ALL}, "n_submit"),
          State({"type": "fd-threshold", "name": ALL}, "value"),
          State({"type": "fd-threshold", "name": ALL}, "id"), State(LOC, "search"),
          prevent_initial_call=True)
@widgets.guarded(no_update)
def thresholds_to_url(clicks, submits, values, ids, search):
    """The thresholds typed into the form, into the URL, on Apply or Enter (parsed as the
    URL is: a value out of range keeps its default, with a message on the page)."""
    pressed = clicks or (isinstance(submits, list) and any(submits))  # Apply, or Enter in a field
    if not pressed or not isinstance(values, list) or not isinstance(ids, list):
        return no_update
    params = params_of(search)
    names = {f.name for f in FORM_THRESHOLDS}
    for ident, value in zip(ids, values):
        name = ident.get("name") if isinstance(ident, dict) else None
        if name not in names:
            continue
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            # a number field may send 2.0 for 2, which a whole threshold would refuse
            params[name] = [str(int(value)) if float(value).is_integer() else str(value)]
        else:
            params.pop(name, None)  # an emptied field: the default
    return widgets.to_url(widgets.search_for(search, urls.parse_findings(params)[0]))
