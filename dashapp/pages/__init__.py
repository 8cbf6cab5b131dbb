"""The app's pages, one module each (importing one registers it), and the preamble every
page of a trace shares, written once here: parse the URL, find the trace in the
catalogue, check it for damage, then build the page, or say in one line what is wrong
(an unknown or unreadable trace, a damaged one, a query over its time limit)."""
import functools
from dataclasses import dataclass, replace
from urllib.parse import parse_qs

from .. import damage, widgets
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
