"""The Validation page: simulated kernel times held against measured ones
(``/validation?run=NAME``, NAME a directory written by ``python -m simulator validate
-o DIR`` inside the trace directory).

The figures of the whole file (WMAPE, median |log2 ratio|, Spearman's rho), simulated
against measured time on log axes with the line y = x and a line per size family, the
slope of each family, and the error table, row by row. A click on a point, or a row's
links, opens its simulated trace. Without ``run`` the page lists the validations found.
"""
import math
import re

import dash
import dash_bootstrap_components as dbc
from dash import Input, Output, callback, dcc, html, no_update

from .. import urls, widgets
from ..catalog import UnknownTrace
from ..klein.views import kernel_href
from ..validation.figures import sim_vs_measured, trace_member
from ..validation.report import ValidationReadError, read_report

LOC = widgets.LOCATION_ID
_URL = re.compile(r"^(https?://\S+?)(:?\s|$)")


def _list(cat):
    names = cat.validations()
    if not names:
        return widgets.messages(["No validation directories here: run `python -m simulator"
                                 " validate MEASURED.csv -o DIR` with DIR inside the trace"
                                 " directory."], "info")
    return html.Ul([html.Li(dcc.Link(n, href=urls.href(
        "/validation", urls.ValidationState(run=n)))) for n in names], id="val-list")


def _value(value, form, none="–"):
    return none if value is None else format(value, form)


def _figures(report):
    found = report.figures
    typical = found.get("median_abs_log2")
    return html.P([
        html.Span("WMAPE ", className="fw-bold"), _value(found.get("wmape"), ".1%"), " · ",
        html.Span("median |log2 simulated/measured| ", className="fw-bold"),
        _value(typical, ".2f"),
        f" (a factor {math.pow(2, typical):.2f})" if typical is not None else "", " · ",
        html.Span("Spearman's ρ ", className="fw-bold"), _value(found.get("spearman"), ".3f"),
        f" · over {found.get('rows') or 0} rows with both times"], id="val-figures")


SLOPE = ("of log simulated against log measured time over the family's rows: 1 when the"
         " simulated time grows with the problem as the measured one does")


def _families(report):
    rows = [html.Tr([html.Td(f.name), html.Td(f.rows), html.Td(_value(f.slope, ".3f"))])
            for f in report.families]
    head = html.Tr([html.Th("size family"), html.Th("rows"), html.Th("slope", title=SLOPE)])
    return dbc.Table([html.Thead(head), html.Tbody(rows)], id="val-families", size="sm",
                     className="gs-summary-table mb-2 w-auto", hover=True)


def _source(text):
    """A row's citation: its leading URL as a link, the rest as text."""
    found = _URL.match(text)
    if not found:
        return html.Span(text, className="small")
    rest = text[found.end(1):].lstrip(": ")
    return html.Span([html.A("source", href=found[1], target="_blank", rel="noopener"),
                      " " + rest if rest else ""], className="small", title=text)


def _links(report, row):
    if not row.trace:
        return row.error or "untraced"
    member = trace_member(report, row.trace)
    return html.Span([
        dcc.Link("overview", href=urls.href("/overview", urls.OverviewState(trace=member)),
                 className="gs-val-open", title=row.trace),
        " · ", dcc.Link("kernel", href=kernel_href(member, 0), className="gs-val-kernel")])


def _table(report):
    header = ("line", "family", "kernel", "global", "local", "measured", "simulated",
              "sim/meas", "|log2|", "status", "trace", "measurement")
    body = []
    for row in report.rows:
        ratio = row.ratio
        status = row.status if row.status != "failed" else f"failed: {row.error}"
        body.append(html.Tr([
            html.Td(row.line), html.Td(row.family), html.Td(row.kernel or row.kernel_file),
            html.Td(row.global_size), html.Td(row.local_size),
            html.Td(f"{row.measured_us:,.3f} µs"),
            html.Td(_value(row.simulated_us, ",.3f") + (" µs" if row.simulated_us else "")),
            html.Td(_value(ratio, ".3f")),
            html.Td(_value(abs(math.log2(ratio)) if ratio else None, ".2f")),
            html.Td(status), html.Td(_links(report, row)), html.Td(_source(row.source))],
            className="table-danger" if row.status == "failed" else None))
    return dbc.Table([html.Thead(html.Tr([html.Th(h) for h in header])), html.Tbody(body)],
                     id="val-table", size="sm", hover=True, className="gs-summary-table")


@widgets.friendly
def layout(**query):
    state, problems = urls.parse_validation(query)
    cat = widgets.catalog()
    if not state.run:
        return html.Div([html.H4("Validations"), widgets.messages(problems), _list(cat)])
    try:
        report = read_report(cat.validation_path(state.run))
    except UnknownTrace:
        return html.Div([html.H4("Validations"), widgets.messages(
            problems + [f"There is no validation named {state.run!r} here."]), _list(cat)])
    except ValidationReadError as err:
        return widgets.messages(problems + [str(err)])
    failed = sum(r.status == "failed" for r in report.rows)
    pending = sum(r.status == "pending" for r in report.rows)
    facts = " · ".join(filter(None, [
        f"measurements {report.measurements}" if report.measurements else "",
        f"GPU {report.gpu}" if report.gpu else "", f"{len(report.rows)} rows",
        f"{failed} failed" if failed else "",
        f"{pending} still running" if pending else "", report.note]))
    compared = report.compared
    return html.Div([
        html.H4(f"Validation {report.name}"),
        html.P(facts, className="small", id="val-facts"),
        widgets.messages(problems),
        _figures(report),
        widgets.graph("val-graph", sim_vs_measured(report), f"validation-{report.name}")
        if compared else widgets.messages(["No row has a simulated time yet."], "info"),
        html.P("Above the line: simulated too slow; below: too fast. Click a point to open"
               " its simulated trace.", className="small text-muted mb-1") if compared else "",
        _families(report) if report.families else "",
        _table(report),
    ])


# Registered after ``layout`` exists: this module is imported, not scanned by Dash.
dash.register_page(__name__, path="/validation", title="GPUscope validation",
                   name="Validation", layout=layout)


@callback(Output(LOC, "href", allow_duplicate=True), Input("val-graph", "clickData"),
          prevent_initial_call=True)
@widgets.guarded(no_update)
def open_clicked_row(click):
    """A click on a point opens its trace's Overview."""
    try:
        member = click["points"][0]["customdata"][0]
    except (TypeError, KeyError, IndexError):
        return no_update
    if not isinstance(member, str) or not member:
        return no_update
    return urls.href("/overview", urls.OverviewState(trace=member))
