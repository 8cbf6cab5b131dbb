"""The Dash application: ``create_app`` for ``python -m dashapp``, ``server`` for gunicorn.

``gunicorn 'dashapp.app:server'`` builds the app on first access to ``server`` from the
environment: ``GPUSCOPE_TRACE_DIR`` (a directory of traces, default ``traces``) or
``GPUSCOPE_TRACE`` (one file), with ``GPUSCOPE_NO_EDIT=1`` (no edited kernel runs) and
``GPUSCOPE_KERNEL_INCLUDE=DIR[:DIR...]`` (folders edited kernels may include from) as
``python -m dashapp --no-edit --kernel-include DIR`` takes them. Pages are registered by
importing every module of ``dashapp.pages`` after the app exists (Dash's own folder scan
is off, since it would import them under a second name), and the assets folder is given
explicitly so it is found from a checkout and from an installed package alike.

Dash keeps pages and ``dash.callback`` registrations in process-wide registries, so
one process serves one app: a second ``create_app`` call is refused.
"""
import importlib
import logging
import os
import pkgutil
import re
from pathlib import Path

import dash
import dash_bootstrap_components as dbc
import flask
from dash import dcc, html
from werkzeug.exceptions import HTTPException

from . import navigation, plotly_bundle
from .catalog import Catalog
from .klein.runner import Settings

ASSETS = Path(__file__).resolve().parent / "assets"
CATALOG_KEY = "GPUSCOPE_CATALOG"
EDIT_KEY = "GPUSCOPE_EDIT"
_created = []


MAX_REQUEST_BYTES = 4 << 20
ASSET_MAX_AGE = 365 * 24 * 3600  # seconds
_log = logging.getLogger(__name__)


def _bad_request(err):
    """What a request that failed outside every page and callback gets: a 400 and one
    log line. Pages and callbacks catch their own errors, so what comes here is a request
    the browser would not send (a callback that does not exist, a body that is not
    Dash's); HTTP errors (404, 413...) pass through unchanged."""
    if isinstance(err, HTTPException):
        return err
    _log.warning("bad request to %s: %s: %s", flask.request.path, type(err).__name__,
                 " ".join(str(err).split())[:200])  # one line, whatever it said
    return "bad request", 400


class _App(dash.Dash):
    """Dash, with the page's plotly.js chosen by ``plotly_bundle``."""

    def interpolate_index(self, **kwargs):
        # The last segment of the path: behind a proxy that strips Dash's requests prefix,
        # the path lacks it (``dash.strip_relative_path`` would refuse it).
        page = flask.request.path.rstrip("/").rpartition("/")[2] if flask.request else None
        kwargs["scripts"] = plotly_bundle.script_tag(
            ASSETS, self.get_asset_url(plotly_bundle.FILE), page) + kwargs["scripts"]
        return super().interpolate_index(**kwargs)


def page_modules():
    """Every module of ``dashapp.pages``: each registers its page when imported."""
    folder = Path(__file__).resolve().parent / "pages"
    return sorted(m.name for m in pkgutil.iter_modules([str(folder)]) if not m.ispkg)


def create_app(trace_dir=None, trace=None, edit=None):
    """The Dash app serving the traces of ``trace_dir`` (or the single file ``trace``);
    ``edit`` (``klein.runner.Settings``) says whether visitors may run edited kernels
    and what those may include (default: they may, including nothing but their own)."""
    if _created:
        raise RuntimeError("create_app() was already called in this process")
    catalog = Catalog(trace_dir=trace_dir, trace=trace)
    app = _App(
        __name__, use_pages=True, pages_folder="", assets_folder=str(ASSETS),
        # Served, but not put on every page: plotly_bundle chooses where it loads.
        assets_ignore=re.escape(plotly_bundle.FILE),
        suppress_callback_exceptions=True, title="GPUscope",
        # Bootstrap is vendored in assets/ (served offline), not taken from a CDN.
        external_stylesheets=[])
    app.server.config[CATALOG_KEY] = catalog
    app.server.config[EDIT_KEY] = edit if edit is not None else Settings()
    # A request body past this is refused with 413 before it is read (an edited kernel
    # is at most 256 KB; the largest state a page sends back is far smaller).
    app.server.config["MAX_CONTENT_LENGTH"] = MAX_REQUEST_BYTES
    # Every asset URL carries its file's mtime (``?m=``), so a browser may keep an asset
    # for good instead of asking again on every page load (a round trip per file, on
    # the critical path of each page: these are blocking scripts and stylesheets).
    app.server.config["SEND_FILE_MAX_AGE_DEFAULT"] = ASSET_MAX_AGE
    app.server.register_error_handler(Exception, _bad_request)
    for page in page_modules():
        importlib.import_module(f"{__package__}.pages.{page}")
    app.layout = dbc.Container([
        navigation.navbar(),
        # A page being rebuilt (navigation, zoom, filter) is dimmed under a spinner
        # instead of sitting unchanged or blank until it arrives; a view redrawn as the
        # run it shows grows (``following``) is not.
        html.Div(dcc.Loading(dash.page_container, delay_show=150, type="circle",
                             overlay_style={"visibility": "visible", "opacity": 0.5},
                             target_components={"_pages_content": "children"},
                             parent_className="gs-loading"), id="gs-page"),
    ], fluid=True)
    _created.append(app)
    return app


def __getattr__(name):
    # PEP 562: gunicorn's getattr(module, "server") builds the app on first use only,
    # so importing this module (for create_app) has no side effects.
    if name == "server":
        if not _created:
            edit = Settings.from_environment()
            if os.environ.get("GPUSCOPE_TRACE"):
                create_app(trace=os.environ["GPUSCOPE_TRACE"], edit=edit)
            else:
                create_app(trace_dir=os.environ.get("GPUSCOPE_TRACE_DIR", "traces"), edit=edit)
        return _created[0].server
    raise AttributeError(name)
