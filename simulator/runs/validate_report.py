"""What a validation reports: its summary document (``DIR/validation.json``, ``--json``)
and the table printed on the terminal.

The document, format 1::

    {"format": 1, "measurements": CSV path as given, "gpu": preset name,
     "note": TEXT or null, "command": the validate command line,
     "rows": [ROW, ...],            # in the CSV's order
     "agreement": {"rows": N, "wmape": FRACTION, "median_abs_log2": X,
                   "spearman": RHO, "families": [{"name", "rows", "slope"}, ...]}}

Each ROW holds the CSV's cells as written (``kernel_file``, ``kernel``, ``global``,
``local``, ``args``, ``build_options``, ``source``), its ``line`` and ``family``,
``measured_us``, and once it has run ``simulated_us`` (its simulated time: the launch
from the command processor receiving it to its last work-group's end), ``ratio``
(simulated / measured), ``status`` (ok, failed, or pending while the validation
runs), ``error``, ``trace`` (the file name in DIR, empty when untraced), ``wall_s`` and
the sweep summary's headline metrics (busy fractions, hit rates, instructions).
Figures without rows to compute them are null. The app reads this file; nothing in
it needs the simulator to be understood.
"""
import math

from .sweep import METRIC_COLUMNS
from .validate_rows import COLUMNS, MeasuredLaunch
from .validate_stats import Agreement, agreement

FORMAT = 1
SUMMARY_FILE = "validation.json"


def row_document(index: int, launch: MeasuredLaunch, result: dict | None) -> dict:
    """A row of the document: the launch as written, and its result (None: not run yet)."""
    row = {"row": index, "line": launch.line, "family": launch.family,
           **{c: launch.written[c] for c in COLUMNS if c not in ("family", "measured_us")},
           "measured_us": launch.measured_us, "simulated_us": None, "ratio": None,
           "status": "pending", "error": "", "trace": "", "wall_s": None}
    if result is None:
        return row
    row.update(status=result["status"], error=result.get("error") or "",
               trace=result.get("trace") or "", wall_s=result.get("wall_s"))
    ps = result.get("simulated_time_ps")
    if result["status"] == "ok" and ps:
        row["simulated_us"] = ps / 1e6
        row["ratio"] = row["simulated_us"] / launch.measured_us
    row.update({k: result.get(k) for k in METRIC_COLUMNS if k != "simulated_time_ps"})
    return row


def rows_agreement(rows: list[dict]) -> Agreement:
    """The figures of the rows that ran."""
    done = [r for r in rows if r["simulated_us"]]
    return agreement([r["measured_us"] for r in done], [r["simulated_us"] for r in done],
                     [r["family"] for r in done])


def document(rows: list[dict], *, measurements: str, gpu: str, note: str | None,
             command: str) -> dict:
    """The summary document of ``rows`` (see the module's docstring)."""
    found = rows_agreement(rows)
    return {"format": FORMAT, "measurements": measurements, "gpu": gpu, "note": note,
            "command": command, "rows": rows,
            "agreement": {"rows": found.rows, "wmape": found.wmape,
                          "median_abs_log2": found.median_abs_log2,
                          "spearman": found.spearman,
                          "families": [{"name": f.name, "rows": f.rows, "slope": f.slope}
                                       for f in found.families]}}


def _number(value, form):
    return "–" if value is None else format(value, form)


def table(doc: dict) -> str:
    """The document as text: a line per row, then the figures."""
    rows = doc["rows"]
    family = max([len("family"), *(len(r["family"]) for r in rows)])
    size = max([len("global"), *(len(r["global"]) for r in rows)])
    lines = [f"{'line':>4}  {'family':<{family}}  {'global':>{size}}  {'measured us':>12}"
             f"  {'simulated us':>12}  {'sim/meas':>8}  status"]
    for r in rows:
        status = r["status"] if r["status"] != "failed" else f"failed: {r['error']}"
        lines.append(f"{r['line']:>4}  {r['family']:<{family}}  {r['global']:>{size}}"
                     f"  {r['measured_us']:>12.3f}  {_number(r['simulated_us'], '12.3f'):>12}"
                     f"  {_number(r['ratio'], '8.3f'):>8}  {status}")
    found = doc["agreement"]
    typical = found["median_abs_log2"]
    lines.append(
        f"{found['rows']} of {len(rows)} rows: WMAPE {_number(found['wmape'], '.1%')},"
        f" median |log2 sim/meas| {_number(typical, '.2f')}"
        + (f" (a factor {math.pow(2, typical):.2f})" if typical is not None else "")
        + f", Spearman's rho {_number(found['spearman'], '.3f')}")
    sloped = [f for f in found["families"] if f["slope"] is not None]
    if sloped:
        width = max(len(f["name"]) for f in sloped)
        lines.append("slope of log simulated against log measured time, per size family"
                     " (1: grows as measured):")
        lines += [f"  {f['name']:<{width}}  {f['slope']:6.3f}  ({f['rows']} rows)"
                  for f in sloped]
    return "\n".join(lines)
