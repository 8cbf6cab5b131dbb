"""A finding's evidence as links into the app's views.

The analysis names each view that shows a finding as a dict of that page's query
parameters (``simulator/analysis/findings.py``); here each becomes a label and the
page's URL, built with the page's own state class (``urls``), so a link opens exactly
the view a user would reach by hand: the Overview filtered to the components on the
window, a component's tasks on the window, the Task view of one task (the Component
view with ``task=``), the kernel page at a source line, or two runs compared.
"""
from __future__ import annotations

from collections.abc import Callable

from .. import urls
from ..units import fmt_at

Link = tuple[str, str | None]
"""(label, href); href is None when the app cannot show that view (a run it does not serve)."""


def _window(item: dict) -> dict:
    """The window of an evidence item as state fields; none when it is empty or malformed."""
    t0, t1 = item.get("t0"), item.get("t1")
    if isinstance(t0, int) and isinstance(t1, int) and 0 <= t0 < t1 <= urls.MAX_INT:
        return {"t0": t0, "t1": t1}
    return {}


def _span(window: dict) -> str:
    return f" over {fmt_at(window['t0'])} – {fmt_at(window['t1'])}" if window else ""


def evidence_link(trace: str, item: dict, served: Callable[[str], str | None]) -> Link:
    """The label and href of one evidence item of a finding on ``trace`` (its catalogue
    name). ``served`` maps a trace file's path to its name in the app's catalogue, or
    None; a compare item names the two runs by path."""
    view = item.get("view")
    window = _window(item)
    if view == "overview":
        state = urls.OverviewState(trace=trace, filter=item["filter"][:urls.MAX_FILTER], **window)
        return (f"Overview of /{item['filter']}/{_span(window)}",
                urls.href("/overview", state))
    if view == "component":
        state = urls.ComponentState(trace=trace, loc=item["loc"], **window)
        return f"{item['loc']}'s tasks{_span(window)}", urls.href("/component", state)
    if view == "task":
        state = urls.ComponentState(trace=trace, loc=item["loc"], task=item["task"], **window)
        return (f"Task view of task {item['task']} at {item['loc']}",
                urls.href("/component", state))
    if view == "kernel":
        line = item.get("line")
        state = urls.KernelState(trace=trace, launch=item["launch"], line=line)
        return (f"kernel page of launch {item['launch']}" + (f", line {line}" if line else ""),
                urls.href("/kernel", state))
    if view == "compare":
        a, b = served(item["a"]), served(item["b"])
        label = f"compare {a or item['a']} with {b or item['b']}"
        return label, urls.href("/compare", urls.CompareState(a=a, b=b)) if a and b else None
    return f"the {view} view (this app has no page for it)", None
