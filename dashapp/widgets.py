"""Dash components shared by the pages: messages, trace resolution, a safety net."""
import functools
import logging
import re

import dash_bootstrap_components as dbc
import flask
from dash import html

from . import queries
from .catalog import UnknownTrace, trace_meta

def graph_config(filename):
    """dcc.Graph config: the modebar (shown on hover only, or a page of small multiples
    is a page of toolbars) and its camera exporting SVG named after the view."""
    return {
        "displaylogo": False,
        "displayModeBar": "hover",
        "toImageButtonOptions": {"format": "svg", "filename": safe_filename(filename)},
        "modeBarButtonsToRemove": ["lasso2d", "select2d"],
    }


def safe_filename(text):
    """A file name made of letters, digits, dots, dashes and underscores only."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_") or "gpuscope"


LOCATION_ID = "_pages_location"
"""The app's single dcc.Location (the one Dash pages puts in ``page_container``)."""


def catalog():
    """The catalogue of the app serving the current request."""
    return flask.current_app.config["GPUSCOPE_CATALOG"]


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
        return name, path, trace_meta(path), problems
    except UnknownTrace:
        problems.append(f"There is no trace named {name!r} here; pick one on the Traces page.")
    except (queries.TraceError, queries.QueryTimeout, OSError) as err:
        problems.append(str(err))
    return name, None, None, problems


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
