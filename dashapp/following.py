"""What a view of a trace still being written adds: a banner saying so, with how far
the run has got; a timer that redraws the view with the run so far; and a switch that
keeps the window at the end of the run as it grows (``follow=1`` in the URL).

The pages' own callbacks redraw their views on each tick; here are the pieces and
their texts, built from a ``TraceMeta`` alone (no callbacks, no queries).
"""
from __future__ import annotations

import datetime as _dt
from typing import TYPE_CHECKING

import dash_bootstrap_components as dbc
from dash import dcc, html

from .units import fmt_ps

if TYPE_CHECKING:
    from .catalog import TraceMeta
    from .urls import ComponentState, OverviewState

REFRESH_MS = 2000
"""How often a view of a running trace is redrawn."""
MAX_ELAPSED_S = 30 * 86400
"""A run longer than this was not timed by the clock (a reproducible run's fixed start)."""


def elapsed_seconds(wall_start: str | None, now: _dt.datetime | None = None) -> float | None:
    """Seconds since the run's ISO 8601 start, or None when that is not a real start."""
    try:
        start = _dt.datetime.fromisoformat(wall_start)
    except (TypeError, ValueError):
        return None
    if start.tzinfo is None:
        start = start.replace(tzinfo=_dt.timezone.utc)
    now = now or _dt.datetime.now(_dt.timezone.utc)
    seconds = (now - start).total_seconds()
    return seconds if 0 <= seconds < MAX_ELAPSED_S else None


def progress_text(meta: TraceMeta) -> str:
    """How far the run has got: tasks, simulated time and wall time so far."""
    live = meta.live
    tasks = f"{live.tasks:,} tasks"
    if live.expected_tasks:
        tasks += f" of about {live.expected_tasks:,} ({min(1.0, live.tasks / live.expected_tasks):.0%})"
    text = f"{tasks} so far, {fmt_ps(live.reached_ps - meta.start_ps)} of simulated time"
    seconds = elapsed_seconds(meta.run.get("wall_start"))
    return text + (f", running for {seconds:,.0f} s" if seconds is not None
                   and live.running else "")


def status(meta: TraceMeta) -> tuple[str, str]:
    """(one-word state, sentence) of a trace that is not finalized."""
    writer = meta.live.writer
    target = writer.target or meta.path.name
    if writer.running:
        who = f" by process {writer.pid}" if writer.pid is not None else ""
        return "running", f"This run is still being written{who}."
    if writer.pid is not None:
        return "interrupted", (
            f"This run stopped before it finished (process {writer.pid} is gone). What it"
            f" wrote is shown; `python -m simulator finalize {target}` turns it into a trace"
            " marked incomplete.")
    return "not finalized", (
        "This trace is not finalized and has not changed for a minute; if its writer is"
        f" gone, `python -m simulator finalize {target}` finishes it.")


def banner_children(meta: TraceMeta, prefix: str) -> list:
    """The banner's text: state, progress (tasks in ``{prefix}-live-tasks``) and help."""
    state, sentence = status(meta)
    help_text = (" The view follows it: it is redrawn every"
                 f" {REFRESH_MS / 1000:g} s with the run so far. The last bins fill in as the"
                 " run moves on, and a task appears once it has ended."
                 if meta.live.running else "")
    return [html.Strong(f"{state.capitalize()}: ", id=f"{prefix}-live-state"), sentence, " ",
            html.Span(progress_text(meta), id=f"{prefix}-live-progress"),
            html.Span(str(meta.live.tasks), id=f"{prefix}-live-tasks", hidden=True),
            "." + help_text]


def banner_colour(meta: TraceMeta) -> str:
    return "info" if meta.live.running else "warning"


def controls(meta: TraceMeta, state: OverviewState | ComponentState, prefix: str) -> html.Div:
    """The banner, the redraw timer and the follow switch of a view of ``meta``; nothing
    for a finished trace."""
    if meta.live is None:
        return html.Div()
    return html.Div([
        dbc.Alert(banner_children(meta, prefix), id=f"{prefix}-live", color=banner_colour(meta),
                  className="py-1 mb-1 small"),
        dcc.Interval(id=f"{prefix}-live-tick", interval=REFRESH_MS,
                     disabled=not meta.live.running),
        html.Div(dbc.Checkbox(
            id=f"{prefix}-follow", value=bool(state.follow), disabled=state.t0 is None,
            label="Follow the end: keep this window's width at the end of the run"),
            className="small mb-1",
            title="Zoom in first: with no window the view shows the whole run so far, which"
                  " follows the run anyway."),
    ])
