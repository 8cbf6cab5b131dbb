"""Reader for Daisen's CSV trace (akita v3 ``CSVTraceWriter``).

Header ``ID, ParentID, Kind, What, Where, Start, End``; times in seconds. akita writes
``", "`` separators without quoting, so spaces after commas are skipped; quoted fields
(as our exporter writes them) are accepted too. Times are parsed as exact decimals.
"""
import csv

from .loader import ForeignTask, TraceFormatError, seconds_to_ps

HEADER = ("ID", "ParentID", "Kind", "What", "Where", "Start", "End")


def read(stream, path, progress=None):
    """Yield ``ForeignTask`` for every data row; ``progress(n_bytes)`` is called per row."""
    reader = csv.reader(stream, skipinitialspace=True)
    try:
        header = next(reader)
    except StopIteration:
        raise TraceFormatError(f"{path}:1: empty file, expected the header {', '.join(HEADER)}") from None
    header = tuple(h.strip() for h in header)
    if header != HEADER:
        raise TraceFormatError(f"{path}:1: header is {', '.join(header)!r}; expected"
                               f" {', '.join(HEADER)}")
    for row in reader:
        line = reader.line_num
        if not row or (len(row) == 1 and not row[0].strip()):
            continue
        where = f"{path}:{line}"
        if len(row) != len(HEADER):
            raise TraceFormatError(f"{where}: expected {len(HEADER)} fields, found {len(row)}")
        tid, parent, kind, what, location, start, end = (f.strip() for f in row)
        if progress:
            progress(sum(len(f) + 2 for f in row))
        yield ForeignTask(ext_id=tid, parent_ext=parent or None, category=kind, action=what,
                          location=location, start_ps=seconds_to_ps(start, where, "Start"),
                          end_ps=seconds_to_ps(end, where, "End"), where=where)
