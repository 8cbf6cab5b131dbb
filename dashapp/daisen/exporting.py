"""CSV of the data behind a chart (SVG and PNG come from Plotly in the browser)."""
import csv
import io

from .metrics import METRICS


def _csv(header, rows):
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return out.getvalue()


def _number(value):
    return "" if value != value else repr(float(value))  # NaN (a gap) → empty cell


def overview_csv(page):
    """One row per component and bin of an ``views.OverviewPage``: every metric, and the
    counters the page charts (``counter:NAME`` columns)."""
    keys = list(METRICS) + sorted({k for chart in page.charts for k in chart.series.counters})
    rows = []
    for chart in page.charts:
        s = chart.series
        values = {k: s.values(k) for k in keys}
        for i in range(s.nbins):
            start = (s.first_bin + i) * s.width_ps
            rows.append([chart.location.name, start, start + s.width_ps, s.source,
                         *(_number(values[k][i]) for k in keys)])
    header = ["component", "bin_start_ps", "bin_end_ps", "source"] + [
        f"{k} ({METRICS[k].unit})" if k in METRICS and METRICS[k].unit else k for k in keys]
    return _csv(header, rows)


def component_csv(page, meta):
    """The tasks drawn in a ``views.ComponentPage`` (or its density, when it shows one)."""
    names = {loc.id: loc.name for loc in meta.locations}
    if page.mode == "bars":
        rows = [[t.id, t.ext_id or t.id, "" if t.parent is None else t.parent,
                 meta.kinds[t.kind].category, meta.kinds[t.kind].action, names[t.location],
                 t.start_ps, t.end_ps, t.end_ps - t.start_ps, t.details or ""]
                for t in page.tasks]
        return _csv(["key", "id", "parent", "category", "action", "location", "start_ps",
                     "end_ps", "duration_ps", "details"], rows)
    _, centres, density = page.drawn
    rows = [[meta.kind_label(k), int(c), _number(v)]
            for k, values in density.items() for c, v in zip(centres, values)]
    return _csv(["kind", "bin_centre_ps", "tasks_in_flight"], rows)
