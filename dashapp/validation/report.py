"""A validation directory as the /validation page reads it: its ``validation.json``.

``python -m simulator validate -o DIR`` writes the report (format 1, described in
``simulator/runs/validate_report.py`` and docs/validation.md): the CSV's rows as
written, each with its measured and simulated times, status and trace file, and the
figures over them (WMAPE, median |log2 ratio|, Spearman's rho, slopes per family).
The app only reads the file, as untrusted input: a value of the wrong type is dropped
(a row without both times is drawn nowhere), never trusted, and a trace name is kept
only if it is a plain file name.
"""
import json
from dataclasses import dataclass, field
from pathlib import Path

from ..catalog import VALIDATION_REPORT

MAX_REPORT_BYTES = 64 << 20
"""A report larger than this is not read (one row is a few hundred bytes)."""
FORMATS = (1,)


class ValidationReadError(ValueError):
    """The report cannot be read as one (the message says which file and why)."""


@dataclass(frozen=True)
class Row:
    line: int
    family: str
    kernel_file: str
    kernel: str
    global_size: str
    local_size: str
    args: str
    source: str
    measured_us: float
    simulated_us: float | None   # None until it ran, or when it failed
    status: str                  # ok, failed or pending
    error: str
    trace: str                   # the file name in the directory ("" when untraced)

    @property
    def ratio(self):
        """Simulated / measured, None without a simulated time."""
        return self.simulated_us / self.measured_us if self.simulated_us else None


@dataclass(frozen=True)
class Family:
    name: str
    rows: int
    slope: float | None


@dataclass
class Report:
    name: str                    # the directory's name in the catalogue
    rows: list                   # Row, in the CSV's order
    measurements: str = ""
    gpu: str = ""
    note: str = ""
    command: str = ""
    figures: dict = field(default_factory=dict)  # wmape, median_abs_log2, spearman, rows
    families: list = field(default_factory=list)  # Family

    @property
    def compared(self):
        """The rows with both times."""
        return [r for r in self.rows if r.ratio is not None]


def read_report(folder) -> Report:
    """The ``Report`` of the validation directory ``folder``."""
    folder = Path(folder)
    path = folder / VALIDATION_REPORT
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_REPORT_BYTES + 1)
        if len(data) > MAX_REPORT_BYTES:
            raise ValidationReadError(f"{folder.name}/{VALIDATION_REPORT}: larger than"
                                      f" {MAX_REPORT_BYTES >> 20} MiB; not read")
        doc = json.loads(data)
    except (OSError, ValueError, RecursionError) as err:
        if isinstance(err, ValidationReadError):
            raise
        raise ValidationReadError(f"{folder.name}/{VALIDATION_REPORT}: cannot read ({err})") \
            from None
    if not isinstance(doc, dict) or doc.get("format") not in FORMATS \
            or not isinstance(doc.get("rows"), list):
        raise ValidationReadError(f"{folder.name}/{VALIDATION_REPORT}: not a validation report"
                                  f" of format {', '.join(map(str, FORMATS))}")
    found = doc.get("agreement") if isinstance(doc.get("agreement"), dict) else {}
    return Report(
        name=folder.name, rows=[row for item in doc["rows"] if (row := _row(item))],
        measurements=_text(doc.get("measurements")), gpu=_text(doc.get("gpu")),
        note=_text(doc.get("note")), command=_text(doc.get("command")),
        figures={k: _number(found.get(k)) for k in ("rows", "wmape", "median_abs_log2",
                                                     "spearman")},
        families=[Family(_text(f.get("name")), _number(f.get("rows")) or 0,
                         _number(f.get("slope")))
                  for f in found.get("families") or [] if isinstance(f, dict)])


def _text(value):
    return value if isinstance(value, str) else ""


def _number(value):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return value if value == value and abs(value) != float("inf") else None  # no NaN, inf


def _positive(value):
    number = _number(value)
    return number if number is not None and number > 0 else None


def _row(item):
    """A ``Row`` from one entry of the report, or None for one without a measured time."""
    if not isinstance(item, dict) or _positive(item.get("measured_us")) is None:
        return None
    trace = _text(item.get("trace"))
    line = _number(item.get("line"))
    return Row(line=int(line) if line is not None else 0, family=_text(item.get("family")),
               kernel_file=_text(item.get("kernel_file")), kernel=_text(item.get("kernel")),
               global_size=_text(item.get("global")), local_size=_text(item.get("local")),
               args=_text(item.get("args")), source=_text(item.get("source")),
               measured_us=float(item["measured_us"]),
               simulated_us=_positive(item.get("simulated_us")),
               status=_text(item.get("status")) or "pending", error=_text(item.get("error")),
               trace=trace if trace == Path(trace).name and trace not in (".", "..") else "")
