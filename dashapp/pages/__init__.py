"""The app's pages, one module each (importing one registers it), and the preamble every
page of a trace shares, written once here: parse the URL, find the trace in the
catalogue, check it for damage, then build the page, or say in one line what is wrong
(an unknown or unreadable trace, a damaged one, a query over its time limit)."""
import functools
from dataclasses import dataclass, replace
from urllib.parse import parse_qs

from dash import Input, Output, State, callback, html, no_update

from .. import damage, following, urls, widgets
from ..queries import QueryTimeout, TraceError


@dataclass(frozen=True)
class TraceRequest:
    """A page's request for a trace that exists and is not known to be damaged."""
    state: object  # the parsed URL state, its trace set to the resolved name
    name: str
    path: object
    meta: object
    problems: list  # messages about the URL and the file, shown above the page


def params_of(search):
    """The query parameters of a ``?a=b`` search string (anything else: none)."""
    if not isinstance(search, str):
        return {}
    return parse_qs(search.lstrip("?"), keep_blank_values=True)


def resolve(state, problems):
    """(TraceRequest, None) for the trace of a parsed URL state, or (None, messages)."""
    name, path, meta, trouble = widgets.resolve_trace(state.trace)
    problems = problems + trouble
    if path is None:
        return None, problems
    try:
        found = damage.verdict(path)
    except OSError as err:  # removed or replaced meanwhile
        return None, problems + [f"{name}: {err.strerror or err}"]
    if found.damaged:
        return None, problems + [found.message]
    if found.state == "checking":
        problems = problems + [f"{name} is still being checked for damage (a large file);"
                               " reload in a moment."]
    return TraceRequest(replace(state, trace=name), name, path, meta, problems), None


def from_search(parse, search):
    """``resolve`` for a callback, from the page's search string and its parser."""
    state, problems = parse(params_of(search))
    return resolve(state, problems)


def alert(problems):
    """The messages shown instead of a page: red when the file is damaged."""
    damaged = any("damaged:" in text for text in problems)
    return widgets.messages(problems, colour="danger" if damaged else "warning")


def trace_page(parse):
    """Make ``build(request) -> component`` the layout of a page of one trace, whose URL
    is parsed by ``parse(params) -> (state, messages)``."""
    def wrap(build):
        @widgets.friendly
        @functools.wraps(build)
        def layout(**query):
            request, problems = resolve(*parse(query))
            if request is None:
                return alert(problems)
            try:
                return build(request)
            except (TraceError, QueryTimeout) as err:
                return alert(request.problems + [str(err)])
        return layout
    return wrap


def with_follow(parse, search, follow):
    """The search string of a view whose "follow the end" switch was set to ``follow``
    (``no_update`` for a value the switch cannot send, or no change)."""
    if not isinstance(follow, bool):
        return no_update
    return widgets.search_for(search, replace(widgets.state_of(search, parse), follow=follow))


def follow_switch_callback(prefix, parse):
    """Register the callback that writes a view's "follow the end" switch
    (``{prefix}-follow``) into its URL (through ``widgets.url_store``), whose state ``parse``
    reads."""
    @callback(Output(f"{prefix}-url", "data", allow_duplicate=True),
              Input(f"{prefix}-follow", "value"), State(widgets.LOCATION_ID, "search"),
              prevent_initial_call=True)
    @widgets.guarded(no_update)
    def follow_to_url(follow, search):
        return widgets.to_url(with_follow(parse, search, follow))
    return follow_to_url


@dataclass(frozen=True)
class Tick:
    """What one tick of a view following a running trace does."""
    request: TraceRequest  # the trace to redraw, or None to leave the view as it is
    banner: tuple  # (children, colour) of the banner, and whether the timer stops
    search: object  # the URL's next search string (the finished trace), or no_update


def follow_tick(parse, search, prefix):
    """The ``Tick`` of a view (``prefix``: its ids) of the trace in ``search``: redraw
    while the run goes and once it stopped; while it writes its last tables (no longer
    in WAL mode, so not to be read), wait; once renamed into place, open the finished
    trace in the same view."""
    state, problems = parse(params_of(search))
    cat = widgets.catalog()
    finished = cat.finished_as(state.trace) if state.trace else None
    if finished is not None:
        return Tick(None, ([html.Strong("Finished: "), f"opening {finished}."], "success", True),
                    urls.search(replace(state, trace=finished)))
    entry = next((u for u in cat.unfinished() if u.name == state.trace), None)
    if entry is not None and not entry.readable:
        return Tick(None, ([html.Strong("Finishing: "), "the run is writing its last tables;"
                            " its trace opens in a moment."], "info", False), no_update)
    request, problems = resolve(state, problems)
    if request is None:
        return Tick(None, (" ".join(problems), "warning", True), no_update)
    meta = request.meta
    if meta.live is None:  # a trace written in place, finalized: drawn once more, as it is
        return Tick(request, ([html.Strong("Finished: "), "the trace is finalized."], "success",
                              True), no_update)
    return Tick(request, (following.banner_children(meta, prefix), following.banner_colour(meta),
                          not meta.live.running), no_update)
