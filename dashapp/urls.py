"""The view state of every page as a query string, both ways.

The URL is the only state: a page is a pure function of its query string, so
bookmarks, shared links, back and forward all restore the exact view. ``parse_*``
never raises: a bad or stale parameter is dropped (its default is used) and reported in
a list of friendly messages for the page to show. ``*_search`` writes only parameters
that differ from their defaults, in a fixed order, so equal states give equal URLs.

Times are integer picoseconds (``t0``, ``t1``: the window [t0, t1)). ``follow=1`` keeps
the window's width but moves it to the end of the run: for a run still being written,
the view follows the run as it grows.
"""
import math
import re
from dataclasses import dataclass, fields, make_dataclass, replace
from urllib.parse import urlencode

from simulator.analysis.thresholds import Thresholds

from .daisen.metrics import METRICS, is_counter

PAGE_SIZE = 16
SORTS = ("name", "load")
NO_METRIC = "none"
MAX_FILTER = 200


@dataclass(frozen=True)
class OverviewState:
    trace: str = None
    page: int = 1
    filter: str = ""
    primary: str = "concurrency"
    secondary: str = "arrival"
    # By load: the first page shows the components that carry the run, not the first
    # names (GPU, CommandProcessor, DRAM[0..13]); sort=name gives the natural order.
    sort: str = "load"
    t0: int = None
    t1: int = None
    follow: bool = False


@dataclass(frozen=True)
class ComponentState:
    trace: str = None
    loc: str = None
    t0: int = None
    t1: int = None
    task: int = None
    follow: bool = False


@dataclass(frozen=True)
class KernelState:
    trace: str = None
    launch: int = 0
    run: str = None
    group: int = 0
    line: int = None  # a source line to point at (a finding's evidence)


THRESHOLDS = fields(Thresholds)
"""The findings' thresholds (``simulator.analysis.thresholds``): each a URL parameter of
the Findings page under its own name, left out of the URL at its default."""

FindingsState = make_dataclass(
    "FindingsState",
    [("trace", str, None), ("kernel", int, None),  # kernel: a launch's index, None for all
     ("t0", int, None), ("t1", int, None),  # a window of the launches, in ps (None: whole)
     ("range", str, None), ("step", int, None),  # a profile's range (NAME[#k]) or step N
     ("pace", str, None),  # the range or kernel whose instances are a profile's iterations
     *((f.name, f.type, f.default) for f in THRESHOLDS)],
    frozen=True)
FindingsState.__doc__ = ("The Findings page's state: trace, launch index (None: every launch),"
                         " a window [t0, t1) in ps (None: whole launches), or a profile's"
                         " range or profiler step whose GPU work is the window, the range or"
                         " kernel whose pace it measures, and one field per threshold, at its"
                         " default unless the URL says.")
MAX_RANGE_NAME = 4000
"""Longest range or kernel name a URL may give (C++ kernel names run to thousands of
characters; a longer text names nothing)."""


def first_value(value):
    """Dash passes a repeated parameter as a list; the first one wins."""
    if isinstance(value, (list, tuple)):
        return value[0] if value else None
    return value


MAX_INT = 1 << 62
"""Largest whole number a URL may carry (SQLite binds 64-bit integers; picosecond times
of any real run are far smaller)."""


def int_param(params, name, errors, minimum=None):
    """The whole-number parameter ``name``, or None with a message in ``errors``."""
    raw = first_value(params.get(name))
    if raw in (None, ""):
        return None
    try:
        value = int(str(raw).strip())
    except ValueError:
        errors.append(f"Ignored {name}={raw!r}: not a whole number.")
        return None
    if minimum is not None and value < minimum:
        errors.append(f"Ignored {name}={value}: must be at least {minimum}.")
        return None
    if abs(value) > MAX_INT:
        errors.append(f"Ignored {name}={value}: too large.")
        return None
    return value


def _window(params, errors):
    t0 = int_param(params, "t0", errors, minimum=0)
    t1 = int_param(params, "t1", errors, minimum=0)
    if (t0 is None) != (t1 is None):
        errors.append("Ignored the time window: it needs both t0 and t1.")
        return None, None
    if t0 is not None and t1 <= t0:
        errors.append(f"Ignored the time window: t1={t1} is not after t0={t0}.")
        return None, None
    return t0, t1


def _text(params, name):
    raw = first_value(params.get(name))
    return None if raw is None else str(raw)


def _flag(params, name, errors):
    """A yes/no parameter: ``1`` is yes; absent or ``0`` is no."""
    raw = _text(params, name)
    if raw in (None, "", "0"):
        return False
    if raw == "1":
        return True
    errors.append(f"Ignored {name}={raw!r}: give 1 or 0.")
    return False


def follow_window(t0: int, t1: int, end_ps: int) -> tuple[int, int]:
    """The window [t0, t1) moved to end at ``end_ps``, keeping its width (``follow``)."""
    start = max(0, end_ps - (t1 - t0))
    return start, start + (t1 - t0)


def parse_overview(params):
    """(OverviewState, messages) from the query parameters of /overview."""
    errors = []
    state = OverviewState()
    page = int_param(params, "page", errors, minimum=1)
    text = _text(params, "filter") or ""
    if len(text) > MAX_FILTER:
        errors.append(f"The filter was cut to its first {MAX_FILTER} characters.")
        text = text[:MAX_FILTER]
    metrics = {}
    for name, default in (("primary", state.primary), ("secondary", state.secondary)):
        value = _text(params, name)
        if value is not None and value not in METRICS and value != NO_METRIC and not (
                is_counter(value) and len(value) <= MAX_FILTER):
            errors.append(f"Unknown metric {name}={value!r}; showing {default}.")
            value = None
        metrics[name] = value or default
    sort = _text(params, "sort")
    if sort is not None and sort not in SORTS:
        errors.append(f"Unknown sort={sort!r}; sorting by load.")
        sort = None
    t0, t1 = _window(params, errors)
    state = replace(state, trace=_text(params, "trace"), page=page or 1, filter=text,
                    sort=sort or "load", t0=t0, t1=t1, follow=_flag(params, "follow", errors),
                    **metrics)
    return state, errors


def parse_component(params):
    """(ComponentState, messages) from the query parameters of /component."""
    errors = []
    t0, t1 = _window(params, errors)
    state = ComponentState(trace=_text(params, "trace"), loc=_text(params, "loc"),
                           t0=t0, t1=t1, task=int_param(params, "task", errors, minimum=0),
                           follow=_flag(params, "follow", errors))
    return state, errors


def whole_threshold(f) -> bool:
    """Whether threshold field ``f`` is a whole number (else a share in (0, 1])."""
    return f.type in (int, "int")  # postponed annotations: the type may be its name


def _share(params, name, errors):
    """A share in (0, 1] (a threshold), or None with a message in ``errors``."""
    raw = _text(params, name)
    if raw in (None, ""):
        return None
    try:
        value = float(raw.strip())
    except ValueError:
        value = None
    if value is None or not 0 < value <= 1:  # NaN fails this too
        errors.append(f"Ignored {name}={raw[:40]!r}: give a share between 0 and 1, such as 0.25.")
        return None
    return value


def parse_findings(params):
    """(FindingsState, messages) from the query parameters of /findings; a bad threshold
    keeps its default. Whether the launch exists is the page's to check."""
    errors = []
    values = {}
    for f in THRESHOLDS:
        if whole_threshold(f):
            value = int_param(params, f.name, errors, minimum=1)
        else:
            value = _share(params, f.name, errors)
        if value is not None:
            values[f.name] = value
    t0, t1 = _window(params, errors)
    name, step = _name(params, "range", errors), int_param(params, "step", errors, minimum=0)
    if name is not None and step is not None:
        errors.append(f"Ignored range={name[:40]!r}: step={step} names the window.")
        name = None
    if (name is not None or step is not None) and t0 is not None:
        errors.append("Ignored the time window: the " + ("range" if step is None else "step")
                      + " names it.")
        t0 = t1 = None
    return FindingsState(trace=_text(params, "trace"),
                         kernel=int_param(params, "kernel", errors, minimum=0), t0=t0, t1=t1,
                         range=name, step=step, pace=_name(params, "pace", errors),
                         **values), errors


def _name(params, key, errors):
    """A range's or kernel's name (None if blank, or too long to name one)."""
    name = _text(params, key) or None
    if name is not None and len(name) > MAX_RANGE_NAME:
        errors.append(f"Ignored {key}=: longer than {MAX_RANGE_NAME} characters, it names"
                      " no range or kernel.")
        return None
    return name


def window_of(state) -> tuple[int, int] | None:
    """The window a state with ``t0``/``t1`` asks for, or None for the whole."""
    return None if state.t0 is None else (state.t0, state.t1)


def thresholds_of(state) -> Thresholds:
    """The ``Thresholds`` a ``FindingsState`` asks for."""
    return Thresholds(**{f.name: getattr(state, f.name) for f in THRESHOLDS})


def search(state):
    """The query string (with ``?``, or empty) holding the non-default fields of ``state``."""
    default = type(state)()
    pairs = [(f.name, int(value) if isinstance(value, bool) else value)
             for f in fields(state)
             for value in (getattr(state, f.name),)
             if value != getattr(default, f.name) and value is not None]
    return "?" + urlencode(pairs) if pairs else ""


def href(path, state):
    """A link to ``path`` with ``state`` in its query string."""
    return path + search(state)


_RANGE = re.compile(r"^xaxis\d*\.range(\[(0|1)\])?$")
_AUTORANGE = re.compile(r"^xaxis\d*\.autorange$")


def window_from_relayout(relayout):
    """The window a Plotly zoom or drag asks for, as integer ps ``(t0, t1)``;
    ``"reset"`` for a double-click (autorange); None for anything else (autosize…).

    Chart x axes are in seconds, so the range is converted back to picoseconds.
    """
    if not isinstance(relayout, dict):
        return None
    lo = hi = None
    for key, value in relayout.items():
        match = _RANGE.match(key)
        if match is None:
            if _AUTORANGE.match(key) and value:
                return "reset"
            continue
        try:
            if match.group(2) is None:
                lo, hi = float(value[0]), float(value[1])
            elif match.group(2) == "0":
                lo = float(value)
            else:
                hi = float(value)
        except (TypeError, ValueError, IndexError):
            return None
        if lo is not None and hi is not None:
            break
    if lo is None or hi is None or not (math.isfinite(lo) and math.isfinite(hi)):
        return None
    # Clamped while still a float: 1e300 s is no time at all in picoseconds.
    t0, t1 = sorted(round(min(float(MAX_INT), max(0.0, v * 1e12))) for v in (lo, hi))
    return (t0, t1) if t1 > t0 else None


def component_after_click(state, click, shown_window=None):
    """The Component-view state a click on the chart (Plotly ``clickData``) leads to, or
    None when it was not on a task bar (the density map, the concurrency line).

    A bar opens its task in the Task view, and the view follows the task to its component
    (a subtask may run elsewhere: this is how one walks across components), keeping the
    window that was on screen (``shown_window``, "t0,t1" in ps). A merged run of
    sub-pixel bars (a negative key) zooms into its span with 10 % margins instead.
    Bars carry [key, ..., location name at 4, ..., span start at 10, span end at 11].
    """
    try:
        custom = click["points"][0]["customdata"]
        key, location = int(custom[0]), custom[4]
        if key < 0:
            start, end = int(custom[10]), int(custom[11])
            margin = max(1, (end - start) // 10)
            return _windowed(state, max(0, start - margin), end + margin)
    except (TypeError, KeyError, IndexError, ValueError, OverflowError):
        return None  # not a bar (or not a click Plotly would send)
    if not isinstance(location, str) or not 0 <= key <= MAX_INT:
        return None
    new = replace(state, task=key, loc=location)
    if state.t0 is None and isinstance(shown_window, str):
        try:
            t0, t1 = (int(v) for v in shown_window.split(","))
        except ValueError:
            return new
        return _windowed(new, t0, t1) or new
    return new


def density_click(click):
    """The bin centre (ps) of a click on the Component view's density cells, else None.

    Density cells are heatmap points: they carry ``z`` and their centre as custom data."""
    try:
        point = click["points"][0]
        if "z" not in point:
            return None
        return int(point["customdata"])
    except (TypeError, KeyError, IndexError, ValueError):
        return None


def _windowed(state, t0, t1):
    """``state`` with the window [t0, t1), or None when that is no window."""
    if not 0 <= t0 < t1 <= MAX_INT:
        return None
    return replace(state, t0=t0, t1=t1)


def component_after_zoom(state, relayout):
    """The Component-view state a zoom, drag or double-click (``relayoutData``) leads
    to, or None when the relayout was something else."""
    window = window_from_relayout(relayout)
    if window is None:
        return None
    t0, t1 = window if window != "reset" else (None, None)
    return replace(state, t0=t0, t1=t1, follow=False)  # the window the user chose stays


# -- comparing runs: /compare and /sweep ---------------------------------------------------------
COMPARE_VIEWS = ("summary", "overview", "component")
COMPARE_MODES = ("overlay", "diff")
"""A and B drawn together, or B − A."""
COMPARE_ALIGNS = ("absolute", "kernel")
"""Both on simulated time, or each run's time from its first kernel's start."""


@dataclass(frozen=True)
class CompareState:
    a: str = None
    b: str = None
    view: str = "summary"
    mode: str = "overlay"
    align: str = "absolute"
    metric: str = "busy"
    page: int = 1
    filter: str = ""
    sort: str = "name"
    loc: str = None
    t0: int = None
    t1: int = None
    # two profiles: the profiler step of each compared (I13), a ProfilerStep#N number or
    # WHOLE_PROFILE; None: its first step (its whole profile when it records none)
    step_a: int | str = None
    step_b: int | str = None


WHOLE_PROFILE = "all"


def _step_choice(params, name, errors):
    """A profile's step choice: a step number, ``WHOLE_PROFILE``, or None (the first)."""
    if _text(params, name) == WHOLE_PROFILE:
        return WHOLE_PROFILE
    return int_param(params, name, errors, minimum=0)


def _choice(params, name, choices, default, errors):
    value = _text(params, name)
    if value is not None and value not in choices:
        errors.append(f"Unknown {name}={value!r}; showing {default}.")
        return default
    return value or default


def parse_compare(params):
    """(CompareState, messages) from the query parameters of /compare."""
    errors = []
    default = CompareState()
    text = _text(params, "filter") or ""
    if len(text) > MAX_FILTER:
        errors.append(f"The filter was cut to its first {MAX_FILTER} characters.")
        text = text[:MAX_FILTER]
    t0, t1 = _window(params, errors)
    state = CompareState(
        a=_text(params, "a"), b=_text(params, "b"),
        view=_choice(params, "view", COMPARE_VIEWS, default.view, errors),
        mode=_choice(params, "mode", COMPARE_MODES, default.mode, errors),
        align=_choice(params, "align", COMPARE_ALIGNS, default.align, errors),
        metric=_choice(params, "metric", tuple(METRICS), default.metric, errors),
        page=int_param(params, "page", errors, minimum=1) or 1, filter=text,
        sort=_choice(params, "sort", SORTS, default.sort, errors), loc=_text(params, "loc"),
        t0=t0, t1=t1, step_a=_step_choice(params, "step_a", errors),
        step_b=_step_choice(params, "step_b", errors))
    return state, errors


SWEEP_CHARTS = ("lines", "heatmap")


@dataclass(frozen=True)
class SweepState:
    dir: str = None
    x: str = None          # the varied key on the chart's x axis (default: the first)
    y: str = "simulated_time_ps"   # the summary column drawn
    chart: str = "lines"   # a line per value of the other keys, or a heatmap over x and by
    by: str = None         # the heatmap's second key (default: the first other than x)
    sort: str = None       # the table's sort column; "-" in front sorts descending


def parse_sweep(params):
    """(SweepState, messages) from the query parameters of /sweep; column names are
    checked against the sweep's own summary by the page."""
    errors = []
    state = SweepState(dir=_text(params, "dir"), x=_text(params, "x"),
                       y=_text(params, "y") or SweepState.y,
                       chart=_choice(params, "chart", SWEEP_CHARTS, SweepState.chart, errors),
                       by=_text(params, "by"), sort=_text(params, "sort"))
    return state, errors


@dataclass(frozen=True)
class ValidationState:
    run: str = None        # the validation directory's name in the catalogue


def parse_validation(params):
    """(ValidationState, messages) from the query parameters of /validation; whether the
    validation exists is the page's to check."""
    return ValidationState(run=_text(params, "run") or None), []
