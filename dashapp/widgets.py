"""Dash components shared by the pages: messages, trace resolution, a safety net."""
import functools
import logging
import re
from urllib.parse import parse_qs

import dash_bootstrap_components as dbc
import flask
from dash import Input, Output, clientside_callback, dcc, html, no_update
from dash.exceptions import PreventUpdate

from . import damage, queries, urls
from .catalog import NotReadableYet, UnknownTrace, trace_meta


def graph_config(filename):
    """dcc.Graph config: the modebar (shown on hover only, or a page of small multiples
    is a page of toolbars) and its camera exporting SVG named after the view."""
    return {
        "displaylogo": False,
        "displayModeBar": "hover",
        "toImageButtonOptions": {"format": "svg", "filename": safe_filename(filename)},
        "modeBarButtonsToRemove": ["lasso2d", "select2d"],
    }


def graph(graph_id, figure, filename, class_name=None):
    """A dcc.Graph of ``figure`` with ``graph_config(filename)``. Its width follows its
    container; assets/gpuscope.js keeps Plotly from redrawing it when only Dash's
    rendering of it changed."""
    return dcc.Graph(id=graph_id, figure=figure, className=class_name,
                     config=graph_config(filename))


def png_button(graph_id, filename, title):
    """A "PNG" button that saves the graph ``graph_id`` with ``title`` and a legend drawn
    in (assets/gpuscope.js), so the image says what it shows away from the page."""
    return html.Button("PNG", className="btn btn-link btn-sm p-0 gs-png",
                       title="Save this chart as a PNG, titled and with its legend",
                       **{"data-graph": graph_id, "data-filename": safe_filename(filename),
                          "data-title": title})


def url_store(prefix):
    """The store in a page (``{prefix}-url``) through which its callbacks change the URL:
    each writes ``{"search": …}``, with ``"pathname"`` to open another page, and
    ``url_relay`` hands it to the URL in the browser.

    Written straight to the URL, which is outside the page, such a callback would run
    once more on the server each time the page is drawn, ``prevent_initial_call`` or
    not: Dash fires a callback whose inputs are inserted into the layout unless its
    outputs are inserted with them (three round trips after every Overview page, 40 ms
    of a zoom, measured in Chromium).
    """
    return dcc.Store(id=f"{prefix}-url")


def url_relay(prefix):
    """Register the browser-side callback that hands ``url_store(prefix)`` to the URL
    (it runs as the page is drawn too, with nothing to hand on)."""
    clientside_callback(
        """function (go) {
            var none = window.dash_clientside.no_update;
            if (!go) { return [none, none]; }
            return [go.pathname || none, go.search === undefined ? none : go.search];
        }""",
        Output(LOCATION_ID, "pathname", allow_duplicate=True),
        Output(LOCATION_ID, "search", allow_duplicate=True),
        Input(f"{prefix}-url", "data"), prevent_initial_call=True)


def to_url(search):
    """What a callback writes to ``url_store`` for the URL's new ``search`` (no_update
    stays no_update)."""
    return search if search is no_update else {"search": search}


def safe_filename(text):
    """A file name made of letters, digits, dots, dashes and underscores only."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_") or "gpuscope"


LOCATION_ID = "_pages_location"
"""The app's single dcc.Location (the one Dash pages puts in ``page_container``)."""


def catalog():
    """The catalogue of the app serving the current request."""
    return flask.current_app.config["GPUSCOPE_CATALOG"]


def edit_settings():
    """What the app serving the current request lets visitors run
    (``klein.runner.Settings``)."""
    return flask.current_app.config["GPUSCOPE_EDIT"]


def messages(texts, colour="warning"):
    """Friendly messages about the URL or the data, one alert each."""
    return html.Div([dbc.Alert(t, color=colour, className="py-1 mb-1 gs-message",
                               dismissable=True) for t in texts], id="gs-messages")


def resolve_trace(name):
    """(name, path, meta, problems) for the trace named in the URL.

    A missing name means the first trace; an unknown or unreadable one gives
    ``path = None`` and a message instead of an exception.
    """
    cat = catalog()
    problems = []
    if not name:
        name = cat.default()
        if name is None:
            return None, None, None, ["No trace files found. Start the app with "
                                      "--trace-dir DIR or --trace FILE."]
    try:
        path = cat.path(name)
    except NotReadableYet as err:
        return name, None, None, [str(err)]
    except UnknownTrace:
        finished = cat.finished_as(name)
        if finished is not None:
            return name, None, None, [f"The run that was writing {name} has finished: its"
                                      f" trace is {finished}."]
        return name, None, None, [f"There is no trace named {name!r} here; pick one on the "
                                  "Traces page."]
    except OSError as err:
        return name, None, None, [str(err)]
    try:
        return name, path, trace_meta(path), problems
    except (queries.TraceError, queries.QueryTimeout, OSError) as err:
        # Damage can make the metadata itself unreadable (a name that is no longer UTF-8):
        # then the file's damage is the message, not what broke on the way.
        found = damage.verdict(path)
        problems.append(found.message if found.damaged else str(err))
    return name, None, None, problems


def guarded(*fallback):
    """Wrap a callback so that an unexpected error (a bug: inputs are validated by the
    callbacks themselves) is logged for the operator and the page keeps what it shows
    (``fallback``, the callback's outputs), instead of an HTTP 500."""
    def wrap(callback):
        @functools.wraps(callback)
        def wrapper(*args, **kwargs):
            try:
                return callback(*args, **kwargs)
            except PreventUpdate:
                raise
            except Exception:  # noqa: BLE001 - the last line of defence of a callback
                logging.getLogger(__name__).exception("callback %s failed", callback.__name__)
                return fallback if len(fallback) != 1 else fallback[0]
        return wrapper
    return wrap


def friendly(layout):
    """Wrap a page layout so an unexpected error shows a message, not a traceback.

    Expected problems (bad parameters, unknown traces) are reported by the pages
    themselves; this catches the rest and logs it for the operator.
    """
    @functools.wraps(layout)
    def wrapper(**query):
        try:
            return layout(**query)
        except Exception as err:  # noqa: BLE001 - the last line of defence of a page
            logging.getLogger(__name__).exception("page failed for %r", query)
            return messages([f"This view could not be built ({type(err).__name__}: {err})."],
                            colour="danger")
    return wrapper


def state_of(search, parse):
    """The page state that ``parse`` (a ``urls.parse_*``) reads from a query string
    (anything else a crafted request sends in its place reads as no query)."""
    text = search if isinstance(search, str) else ""
    return parse(parse_qs(text.lstrip("?"), keep_blank_values=True))[0]


def search_for(search, state):
    """The query string of ``state`` for a callback to write, or ``no_update`` when the
    URL already holds it (so an unchanged state adds no history entry)."""
    new = urls.search(state)
    return no_update if new == (search or "") else new
